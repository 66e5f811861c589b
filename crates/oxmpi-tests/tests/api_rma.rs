mod common;

#[test]
fn api_windows_fence_lock_atomics_and_errors_on_1_2_3_4_ranks() {
    for n in [1, 2, 3, 4] {
        let run = common::run(n, env!("CARGO_BIN_EXE_api_rma"), &[]);
        run.assert_ok();
        for r in 0..n {
            assert!(
                run.stdout()
                    .contains(&format!("api_rma: rank {r} of {n} ok")),
                "{}",
                run.stdout()
            );
        }
    }
}
