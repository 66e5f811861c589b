//! Vector, indexed and struct datatypes on both sides of every point-to-point and
//! collective call of the Rust API, and the seed's matrix-column gather/scatter, on 1-4
//! ranks.
mod common;

#[test]
fn noncontiguous_datatypes_everywhere_on_1_to_4_ranks() {
    for n in 1..=4 {
        let run = common::run(n, env!("CARGO_BIN_EXE_api_noncontig"), &[]);
        run.assert_ok();
        let out = run.stdout();
        for r in 0..n {
            assert!(
                out.contains(&format!("api_noncontig: rank {r} of {n} ok")),
                "rank {r}:\n{out}\n{}",
                run.stderr()
            );
        }
    }
}
