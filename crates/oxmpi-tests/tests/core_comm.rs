//! Communicator constructors through our mpiexec.
mod common;

#[test]
fn dup_split_create_compare_and_context_reuse() {
    for n in [1, 2, 3, 4, 7] {
        let run = common::run(n, env!("CARGO_BIN_EXE_core_comm"), &[]);
        run.assert_ok();
        assert!(run.stdout().contains("comm: ok"), "{}", run.stdout());
    }
}
