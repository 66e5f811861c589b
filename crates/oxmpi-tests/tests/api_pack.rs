//! `Communicator::pack` / `pack_into` / `unpack_into` (rsmpi names) on 1-3 ranks.
mod common;

#[test]
fn pack_broadcast_unpack() {
    for n in 1..=3 {
        let run = common::run(n, env!("CARGO_BIN_EXE_api_pack"), &[]);
        run.assert_ok();
        assert_eq!(
            run.stdout().matches("api_pack: rank").count(),
            n,
            "{}",
            run.stdout()
        );
    }
}
