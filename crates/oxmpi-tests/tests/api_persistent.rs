//! The `oxmpi` API's persistent collectives: every `*_init` method, runs with data
//! changed between them, requests started in different orders on different ranks.
mod common;

#[test]
fn api_persistent_on_1_2_3_4_ranks() {
    for n in [1, 2, 3, 4] {
        let run = common::run(n, env!("CARGO_BIN_EXE_api_persistent"), &[]);
        run.assert_ok();
        let out = run.stdout();
        for r in 0..n {
            assert!(
                out.contains(&format!("api_persistent: rank {r} of {n} ok")),
                "rank {r} did not finish:\n{out}\n{}",
                run.stderr()
            );
        }
    }
}
