//! Collectives through the `oxmpi` API, on 1-5 ranks.
mod common;

#[test]
fn api_coll_on_1_to_5_ranks() {
    for n in 1..=5 {
        let run = common::run(n, env!("CARGO_BIN_EXE_api_coll"), &[]);
        run.assert_ok();
        let out = run.stdout();
        for r in 0..n {
            assert!(
                out.contains(&format!("api_coll: rank {r} of {n} ok")),
                "rank {r}:\n{out}\n{}",
                run.stderr()
            );
        }
    }
}
