//! Textbook gatherv/scatterv examples with derived datatypes (a column as a vector
//! type, one int stretched to a row, scatter into a column, 2-D block decomposition);
//! the rank program checks every element.
mod common;

#[test]
fn seed_gather_scatter_on_4_5_6_ranks() {
    // 4 is the textbook's count; 5 runs the column examples on an odd count (the 2-D
    // decomposition needs an even one); 6 runs the 2-D one as a 2 x 3 grid.
    for n in [4, 5, 6] {
        let run = common::run(n, env!("CARGO_BIN_EXE_seed_gather"), &[]);
        run.assert_ok();
        let out = run.stdout();
        for r in 0..n {
            assert!(
                out.contains(&format!("seed_gather: rank {r} of {n} ok")),
                "rank {r}:\n{out}\n{}",
                run.stderr()
            );
        }
    }
}
