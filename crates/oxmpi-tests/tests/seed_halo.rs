//! Textbook ghost-row exchange on a 12 x 12 grid: blocking (standard and synchronous
//! sends), immediate, two sendrecv variants and sendrecv-replace; the rank program checks
//! every point, ghost rows included.
mod common;

#[test]
fn seed_halo_exchange_on_4_and_3_ranks() {
    for n in [4, 3] {
        let run = common::run(n, env!("CARGO_BIN_EXE_seed_halo"), &[]);
        run.assert_ok();
        let out = run.stdout();
        for r in 0..n {
            assert!(
                out.contains(&format!("seed_halo: rank {r} of {n} ok")),
                "rank {r}:\n{out}\n{}",
                run.stderr()
            );
        }
    }
}
