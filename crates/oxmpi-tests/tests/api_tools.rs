//! `oxmpi::tools` (MPI_T in Rust) on 2 and 3 ranks, through shared memory and TCP.
mod common;

#[test]
fn api_tools_counts_traffic_and_sets_algorithms() {
    for n in [2, 3] {
        let run = common::run(n, env!("CARGO_BIN_EXE_api_tools"), &[]);
        run.assert_ok();
        for r in 0..n {
            assert!(
                run.stdout()
                    .contains(&format!("api_tools: rank {r} of {n} ok (shm)")),
                "rank {r}:\n{}\n{}",
                run.stdout(),
                run.stderr()
            );
        }
    }
}

#[test]
fn api_tools_over_tcp() {
    let run = common::run_env(
        2,
        env!("CARGO_BIN_EXE_api_tools"),
        &[],
        &[("OXMPI_TRANSPORT", "tcp")],
    );
    run.assert_ok();
    assert!(
        run.stdout().contains("api_tools: rank 1 of 2 ok (tcp)"),
        "{}\n{}",
        run.stdout(),
        run.stderr()
    );
}

/// Collective calls per algorithm with the broadcast algorithm forced in the
/// environment: only the forced algorithm's counter grows.
#[test]
fn api_tools_counts_the_forced_bcast_algorithm() {
    for (n, forced) in [(3, "chain"), (2, "shm")] {
        let run = common::run_env(
            n,
            env!("CARGO_BIN_EXE_api_tools"),
            &[],
            &[("OXMPI_BCAST_ALGORITHM", forced)],
        );
        run.assert_ok();
        for r in 0..n {
            assert!(
                run.stdout()
                    .contains(&format!("api_tools: rank {r}: bcast {forced} counted")),
                "{}\n{}",
                run.stdout(),
                run.stderr()
            );
        }
    }
}
