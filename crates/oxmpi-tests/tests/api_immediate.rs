//! The `oxmpi` API's non-blocking operations (scopes, guards, cancel, collections).
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
fn api_immediate_on_1_2_3_4_ranks() {
    for n in [1, 2, 3, 4] {
        ok_on(n, env!("CARGO_BIN_EXE_api_immediate"), "api_immediate");
    }
}

/// Under valgrind (memcheck): the buffers and user operations an immediate or persistent
/// operation uses stay alive until it completes (a use after free fails the job).
#[test]
fn api_immediate_under_valgrind_on_2_ranks() {
    let found = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "valgrind is missing (CI installs it)"
        );
        eprintln!("skipped: valgrind is not installed");
        return;
    }
    let prog = env!("CARGO_BIN_EXE_api_immediate");
    let run = common::run(2, "valgrind", &["-q", "--error-exitcode=9", prog]);
    run.assert_ok();
    assert!(!run.stderr().contains("Invalid read"), "{}", run.stderr());
    for r in 0..2 {
        assert!(
            run.stdout()
                .contains(&format!("api_immediate: rank {r} of 2 ok")),
            "{}",
            run.stdout()
        );
    }
}
