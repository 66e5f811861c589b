//! The safe MPI-IO API (`oxmpi::io::File`) on 1, 2, 4 and 7 ranks.
mod common;

#[test]
fn files_views_shared_pointer_and_errors() {
    for n in [1, 2, 4, 7] {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("oxmpi-api-io-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let run = common::run(n, env!("CARGO_BIN_EXE_api_io"), &[dir.to_str().unwrap()]);
        run.assert_ok();
        assert_eq!(
            run.stdout().matches("api_io: rank").count(),
            n,
            "{}",
            run.stdout()
        );
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "files left behind: {left:?}");
        std::fs::remove_dir(&dir).unwrap();
    }
}
