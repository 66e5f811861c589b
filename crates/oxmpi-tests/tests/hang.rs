//! Deadlock detection for Rust programs (the `oxmpi` API): the engine records
//! what blocking calls wait for, mpiexec reports and ends the job (status 86).
mod common;

fn verdict(n: usize, mode: &str) -> String {
    let run = common::run(n, env!("CARGO_BIN_EXE_hang_rust"), &[mode]);
    let err = run.stderr();
    assert_eq!(
        run.code(),
        Some(86),
        "{mode} on {n}: expected the deadlock status\n{err}"
    );
    err
}

#[test]
fn rust_receive_cycle_names_the_calls_and_the_callers_line() {
    let err = verdict(3, "cycle");
    assert!(err.contains("verdict: wait-for cycle: rank 0 waits in MPI_Recv for rank 1, rank 1 waits in MPI_Recv for rank 2, rank 2 waits in MPI_Recv for rank 0"), "{err}");
    assert!(
        err.contains(
            "MPI_Recv(4 bytes, source=1 (world rank 1), tag=MPI_ANY_TAG, comm=MPI_COMM_WORLD)"
        ),
        "{err}"
    );
    assert!(
        err.contains("called from hang_rust::main at") && err.contains("hang_rust.rs:"),
        "{err}"
    );
}

#[test]
fn rust_broadcast_against_reduce_is_a_collective_mismatch() {
    let err = verdict(3, "collectives");
    assert!(
        err.contains(
            "verdict: collective mismatch on MPI_COMM_WORLD: rank 0 is in MPI_Bcast #1 (root 0)"
        ),
        "{err}"
    );
    assert!(err.contains("MPI_Reduce #1"), "{err}");
}
