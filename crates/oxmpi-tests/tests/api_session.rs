//! MPI-4 sessions through the `oxmpi` API, on 1 and 3 ranks.
mod common;

#[test]
fn api_sessions_on_1_and_3_ranks() {
    for n in [1, 3] {
        let run = common::run(n, env!("CARGO_BIN_EXE_api_session"), &[]);
        run.assert_ok();
        let out = run.stdout();
        for r in 0..n {
            assert!(
                out.contains(&format!("api_session: rank {r} of {n} ok")),
                "rank {r}:\n{out}\n{}",
                run.stderr()
            );
        }
    }
}
