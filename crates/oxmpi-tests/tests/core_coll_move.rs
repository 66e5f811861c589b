//! Engine-level data-movement collectives (see src/bin/core_coll_move.rs):
//! bcast, gather(v), scatter(v), allgather(v), alltoall(v/w) on 1, 2, 3, 4, 5, 7,
//! 8 and 9 ranks, every algorithm forced through `OXMPI_<OP>_ALGORITHM` and the
//! default selection. One launch per (ranks, algorithm); the rank program loops
//! over roots, counts, datatypes, MPI_IN_PLACE and blocking/non-blocking.
mod common;

const PROG: &str = env!("CARGO_BIN_EXE_core_coll_move");
const SIZES: &[usize] = &[1, 2, 3, 4, 5, 7, 8, 9];

fn group(name: &str, var: &str, algorithms: &[&str], extra: &[(&str, &str)]) {
    for &n in SIZES {
        for &a in algorithms {
            let mut env = vec![(var, a)];
            env.extend_from_slice(extra);
            let run = common::run_env(n, PROG, &[name], &env);
            assert!(
                run.code() == Some(0) && run.stdout().contains(&format!("{name}: ok")),
                "{name} with {var}={a} on {n} ranks failed:\nstdout:\n{}\nstderr:\n{}",
                run.stdout(),
                run.stderr()
            );
        }
    }
}

#[test]
fn bcast_every_algorithm() {
    group(
        "bcast",
        "OXMPI_BCAST_ALGORITHM",
        &["binomial", "scatter_ring", "chain", "shm", "auto"],
        &[],
    );
    // Large messages through the area rather than single copies between the
    // ranks' buffers (coll/shm/direct.rs, taken by default where it works).
    group("bcast", "OXMPI_BCAST_ALGORITHM", &["shm"], NO_DIRECT);
}

/// The shared-memory collectives without their single copies.
const NO_DIRECT: &[(&str, &str)] = &[("OXMPI_SHM_DIRECT", "0")];

#[test]
fn gather_and_gatherv_every_algorithm() {
    group(
        "gather",
        "OXMPI_GATHER_ALGORITHM",
        &["binomial", "linear", "shm", "auto"],
        &[],
    );
    group("gather", "OXMPI_GATHER_ALGORITHM", &["shm"], NO_DIRECT);
}

#[test]
fn scatter_and_scatterv_every_algorithm() {
    group(
        "scatter",
        "OXMPI_SCATTER_ALGORITHM",
        &["binomial", "linear", "shm", "auto"],
        &[],
    );
    group("scatter", "OXMPI_SCATTER_ALGORITHM", &["shm"], NO_DIRECT);
}

#[test]
fn allgather_and_allgatherv_every_algorithm() {
    group(
        "allgather",
        "OXMPI_ALLGATHER_ALGORITHM",
        &["ring", "recursive_doubling", "bruck", "shm", "auto"],
        &[],
    );
    // Allgatherv with an allgather's layout takes allgather's shared-memory path.
    group("allgather", "OXMPI_ALLGATHERV_ALGORITHM", &["shm"], &[]);
    // Allgatherv's recursive doubling (a message per block; the ring on sizes
    // that are not powers of two), the crowded host's choice from 8 ranks.
    group(
        "allgather",
        "OXMPI_ALLGATHERV_ALGORITHM",
        &["recursive_doubling"],
        &[],
    );
}

#[test]
fn alltoall_v_w_every_algorithm() {
    group(
        "alltoall",
        "OXMPI_ALLTOALL_ALGORITHM",
        &["bruck", "shm", "auto"],
        &[],
    );
    for a in ["pairwise", "linear"] {
        group(
            "alltoall",
            "OXMPI_ALLTOALL_ALGORITHM",
            &[a],
            &[
                ("OXMPI_ALLTOALLV_ALGORITHM", a),
                ("OXMPI_ALLTOALLW_ALGORITHM", a),
            ],
        );
    }
}

#[test]
fn blocks_outside_their_buffers_are_errors() {
    group("errors", "OXMPI_ALLGATHER_ALGORITHM", &["auto"], &[]);
}

#[test]
fn failed_or_freed_nonblocking_collective_leaves_nothing_in_flight() {
    let run = common::run(3, PROG, &["failed"]);
    assert!(
        run.code() == Some(0) && run.stdout().contains("failed: ok"),
        "stdout:\n{}\nstderr:\n{}",
        run.stdout(),
        run.stderr()
    );
}

#[test]
fn unknown_algorithm_name_is_an_error() {
    let run = common::run_env(2, PROG, &["bcast"], &[("OXMPI_BCAST_ALGORITHM", "nosuch")]);
    assert_ne!(
        run.code(),
        Some(0),
        "an unknown algorithm name must fail:\n{}",
        run.stdout()
    );
    assert!(run.stderr().contains("nosuch"), "{}", run.stderr());
}

/// A program that only broadcasts, started with `var=value`, which names no
/// algorithm of the collective: refused when the engine starts (before the
/// broadcast), with a message naming the variable, the value and the choices.
fn refused_at_start_up(var: &str, value: &str, message: &str) {
    let run = common::run_env(2, PROG, &["bcast"], &[(var, value)]);
    assert_ne!(
        run.code(),
        Some(0),
        "{var}={value} was accepted:\n{}",
        run.stdout()
    );
    assert!(
        !run.stdout().contains("bcast: ok"),
        "the program ran past MPI_Init:\n{}",
        run.stdout()
    );
    assert!(
        run.stderr().contains(message) && run.stderr().contains("choose one of linear"),
        "{}",
        run.stderr()
    );
}

#[test]
fn alltoallw_has_no_shm_algorithm_to_force() {
    // Alltoallw has no shared-memory path: forcing `shm` is refused when the
    // engine starts, like any name of no alltoallw algorithm, not run as the default.
    refused_at_start_up(
        "OXMPI_ALLTOALLW_ALGORITHM",
        "shm",
        "OXMPI_ALLTOALLW_ALGORITHM=\"shm\" names no alltoallw algorithm",
    );
}

#[test]
fn bad_algorithm_variables_fail_at_start_up() {
    // The program only broadcasts: gatherv never runs, yet the value is refused
    // when the engine starts, naming the variable, the value and the choices.
    refused_at_start_up(
        "OXMPI_GATHERV_ALGORITHM",
        "binomial",
        "OXMPI_GATHERV_ALGORITHM=\"binomial\" names no gatherv algorithm",
    );
    // A variable naming no collective (a typo) is refused too, not ignored.
    let run = common::run_env(2, PROG, &["bcast"], &[("OXMPI_BCST_ALGORITHM", "binomial")]);
    assert_ne!(
        run.code(),
        Some(0),
        "a misspelt variable was ignored:\n{}",
        run.stdout()
    );
    assert!(
        run.stderr()
            .contains("OXMPI_BCST_ALGORITHM names no collective"),
        "{}",
        run.stderr()
    );
}
