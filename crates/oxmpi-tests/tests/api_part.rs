//! Partitioned communication through the `oxmpi` API, on 2-4 ranks.
mod common;

#[test]
fn api_partitioned_on_2_3_4_ranks() {
    for n in 2..=4 {
        let run = common::run(n, env!("CARGO_BIN_EXE_api_part"), &[]);
        run.assert_ok();
        let out = run.stdout();
        for r in 0..n {
            assert!(
                out.contains(&format!("api_part: rank {r} of {n} ok")),
                "rank {r}:\n{out}\n{}",
                run.stderr()
            );
        }
    }
}
