//! The `oxmpi` API's blocking point-to-point, through our mpiexec on 2, 3 and 4 ranks,
//! and as a singleton.
mod common;

fn ok_on(n: usize, prog: &str, tag: &str) {
    let run = common::run(n, prog, &[]);
    run.assert_ok();
    let out = run.stdout();
    for r in 0..n {
        assert!(
            out.contains(&format!("{tag}: rank {r} of {n} ok")),
            "rank {r} did not finish:\n{out}\n{}",
            run.stderr()
        );
    }
}

#[test]
fn api_p2p_on_2_3_4_ranks() {
    for n in [2, 3, 4] {
        ok_on(n, env!("CARGO_BIN_EXE_api_p2p"), "api_p2p");
    }
}

#[test]
fn api_p2p_singleton_without_mpiexec() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_api_p2p"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("api_p2p: rank 0 of 1 ok"));
}
