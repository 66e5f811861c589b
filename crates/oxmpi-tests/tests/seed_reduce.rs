//! Textbook reduction exercises (dot product, matrix-vector products, MAXLOC/MINLOC)
//! through the `oxmpi` API; the rank program checks every result against a serial one.
mod common;

#[test]
fn seed_reductions_on_1_3_4_ranks() {
    for n in [4, 3, 1] {
        let run = common::run(n, env!("CARGO_BIN_EXE_seed_reduce"), &[]);
        run.assert_ok();
        let out = run.stdout();
        for r in 0..n {
            assert!(
                out.contains(&format!("seed_reduce: rank {r} of {n} ok")),
                "rank {r}:\n{out}\n{}",
                run.stderr()
            );
        }
    }
}
