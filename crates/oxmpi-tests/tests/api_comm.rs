//! The `oxmpi` API's communicators, groups, names, attributes, intercommunicators and hierarchy query, through our
//! mpiexec on 2, 3 and 4 ranks.
mod common;

#[test]
fn api_comm_on_2_3_4_ranks() {
    for n in [2, 3, 4] {
        let run = common::run(n, env!("CARGO_BIN_EXE_api_comm"), &[]);
        run.assert_ok();
        let out = run.stdout();
        for r in 0..n {
            assert!(
                out.contains(&format!("api_comm: rank {r} of {n} ok")),
                "rank {r} did not finish:\n{out}\n{}",
                run.stderr()
            );
        }
    }
}

/// Fake hosts (rank r on host r % 2, through OXMPI_HOST_ID): the hierarchy query
/// reports a host level with the right cluster ids, ranks and sizes.
#[test]
fn api_comm_hierarchy_with_two_fake_hosts() {
    for n in [2, 3, 4] {
        let run = common::run_env(
            n,
            env!("CARGO_BIN_EXE_api_comm"),
            &[],
            &[("FAKE_HOSTS", "2")],
        );
        run.assert_ok();
        assert_eq!(
            run.stdout().matches("ok (fake hosts)").count(),
            n,
            "{}",
            run.stdout()
        );
    }
}
