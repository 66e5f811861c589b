//! Intercommunicators through our mpiexec.
mod common;

#[test]
fn intercomm_create_p2p_and_merge() {
    for n in [2, 3, 4, 5, 8] {
        let run = common::run(n, env!("CARGO_BIN_EXE_core_inter"), &[]);
        run.assert_ok();
        assert!(run.stdout().contains("inter: ok"), "{}", run.stdout());
    }
}
