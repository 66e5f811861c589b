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
