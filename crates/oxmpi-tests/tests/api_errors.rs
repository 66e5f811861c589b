//! The `oxmpi` API's error policy: `try_*` error classes, fatal errors, drop bombs.
mod common;

#[test]
fn api_try_error_classes_on_2_3_4_ranks() {
    for n in [2, 3, 4] {
        let run = common::run(n, env!("CARGO_BIN_EXE_api_errors"), &[]);
        run.assert_ok();
        for r in 0..n {
            assert!(
                run.stdout()
                    .contains(&format!("api_errors: rank {r} of {n} ok")),
                "{}",
                run.stdout()
            );
        }
    }
}

#[test]
fn api_fatal_error_aborts_the_job_naming_rank_call_and_class() {
    let run = common::run(2, env!("CARGO_BIN_EXE_api_errors"), &["fatal-rank"]);
    assert!(
        !run.output.status.success(),
        "a fatal error must end the job"
    );
    let err = run.stderr();
    assert!(
        err.contains("MPI_ERR_RANK") && err.contains("MPI_Send") && err.contains("dest"),
        "{err}"
    );
    assert!(
        err.contains("oxmpi: rank 0: fatal MPI error")
            || err.contains("oxmpi: rank 1: fatal MPI error"),
        "{err}"
    );
    assert!(!err.contains("survived"), "{err}");
}

#[test]
fn api_dropping_an_uncompleted_request_panics_and_aborts() {
    let run = common::run_env(
        2,
        env!("CARGO_BIN_EXE_api_errors"),
        &["drop-request"],
        &[("RUST_BACKTRACE", "0")],
    );
    assert!(!run.output.status.success());
    let err = run.stderr();
    assert!(
        err.contains("request was dropped without being completed"),
        "{err}"
    );
    assert!(!err.contains("survived"), "{err}");
}

#[test]
fn api_dropping_a_matched_message_panics() {
    let run = common::run_env(
        1,
        env!("CARGO_BIN_EXE_api_errors"),
        &["drop-message"],
        &[("RUST_BACKTRACE", "0")],
    );
    assert!(!run.output.status.success());
    assert!(
        run.stderr()
            .contains("matched message dropped without receiving"),
        "{}",
        run.stderr()
    );
}
