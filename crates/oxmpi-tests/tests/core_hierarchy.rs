//! The hierarchy query on one host and on faked hosts.
mod common;

#[test]
fn one_host_answers_one_level_and_fake_hosts_two() {
    let prog = env!("CARGO_BIN_EXE_core_hierarchy");
    common::run(3, prog, &[]).assert_ok();
    for (n, k) in [(4, "2"), (6, "3"), (5, "2")] {
        let run = common::run_env(n, prog, &[], &[("FAKE_HOSTS", k)]);
        run.assert_ok();
        assert_eq!(
            run.stdout()
                .lines()
                .filter(|l| l.starts_with("hierarchy:"))
                .count(),
            n
        );
    }
}
