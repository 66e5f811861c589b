//! Derived datatypes and `#[derive(Equivalence)]` through the `oxmpi` API, on 1-5 ranks.
mod common;

#[test]
fn api_datatype_on_1_to_5_ranks() {
    for n in 1..=5 {
        let run = common::run(n, env!("CARGO_BIN_EXE_api_datatype"), &[]);
        run.assert_ok();
        let out = run.stdout();
        for r in 0..n {
            assert!(
                out.contains(&format!("api_datatype: rank {r} of {n} ok")),
                "rank {r}:\n{out}\n{}",
                run.stderr()
            );
        }
    }
}

#[test]
fn derived_struct_signatures_are_checked_when_asked() {
    for n in [1, 2] {
        let run = common::run_env(
            n,
            env!("CARGO_BIN_EXE_api_datatype"),
            &[],
            &[("OXMPI_CHECK_SIGNATURES", "1")],
        );
        run.assert_ok();
        assert!(
            run.stdout()
                .contains(&format!("api_datatype: rank 0 of {n} ok")),
            "{}\n{}",
            run.stdout(),
            run.stderr()
        );
    }
}
