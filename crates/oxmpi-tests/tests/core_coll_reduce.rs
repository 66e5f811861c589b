//! Engine-level reduction collectives (see src/bin/core_coll_reduce.rs): reduce,
//! allreduce, reduce_scatter(_block), scan, exscan and reduce_local on 1-9 ranks,
//! with the automatic algorithm choice and with every algorithm forced through
//! OXMPI_<OP>_ALGORITHM. Each launch checks ~600 results (all types, ops, counts,
//! roots, in-place variants, a non-commutative user op, derived types) on every rank.
mod common;

const PROG: &str = env!("CARGO_BIN_EXE_core_coll_reduce");

fn launch(n: usize, mode: &str, env: &[(&str, &str)]) {
    let run = common::run_env(n, PROG, &[mode], env);
    run.assert_ok();
    assert!(
        run.stdout().contains("reductions: ok"),
        "{n} ranks {env:?} did not report ok:\n{}",
        run.stdout()
    );
    assert!(
        common::shm_leftovers_of(run.pid).is_empty(),
        "shared memory left behind"
    );
}

/// One choice per operation: (operation env name, algorithm).
const PROFILES: &[&[(&str, &str)]] = &[
    &[
        ("OXMPI_REDUCE_ALGORITHM", "binomial"),
        ("OXMPI_ALLREDUCE_ALGORITHM", "recursive_doubling"),
        ("OXMPI_REDUCE_SCATTER_ALGORITHM", "recursive_halving"),
        ("OXMPI_REDUCE_SCATTER_BLOCK_ALGORITHM", "recursive_halving"),
        ("OXMPI_SCAN_ALGORITHM", "recursive_doubling"),
        ("OXMPI_EXSCAN_ALGORITHM", "recursive_doubling"),
    ],
    &[
        ("OXMPI_REDUCE_ALGORITHM", "in_order"),
        ("OXMPI_ALLREDUCE_ALGORITHM", "ring"),
        ("OXMPI_REDUCE_SCATTER_ALGORITHM", "pairwise"),
        ("OXMPI_REDUCE_SCATTER_BLOCK_ALGORITHM", "pairwise"),
        ("OXMPI_SCAN_ALGORITHM", "linear"),
        ("OXMPI_EXSCAN_ALGORITHM", "linear"),
    ],
    &[
        ("OXMPI_REDUCE_ALGORITHM", "rabenseifner"),
        ("OXMPI_ALLREDUCE_ALGORITHM", "rabenseifner"),
        ("OXMPI_REDUCE_SCATTER_ALGORITHM", "reduce_scatterv"),
        ("OXMPI_REDUCE_SCATTER_BLOCK_ALGORITHM", "reduce_scatterv"),
    ],
    &[("OXMPI_ALLREDUCE_ALGORITHM", "reduce_bcast")],
    &[
        ("OXMPI_REDUCE_ALGORITHM", "shm"),
        ("OXMPI_ALLREDUCE_ALGORITHM", "shm"),
        ("OXMPI_REDUCE_SCATTER_ALGORITHM", "shm"),
        ("OXMPI_REDUCE_SCATTER_BLOCK_ALGORITHM", "shm"),
    ],
];

#[test]
fn automatic_selection_on_1_to_9_ranks() {
    for n in [1, 2, 3, 5, 7, 8, 9] {
        launch(n, "quick", &[]);
    }
    // With the 1 MiB counts (selection switches to Rabenseifner / ring / pairwise).
    launch(4, "all", &[]);
    // 2 ranks with the 40 KiB, 96 KiB and 1 MiB counts: reduce by single copies
    // from 32 KiB up to two chunks (binomial above); then without single copies,
    // through the area up to two chunks.
    launch(2, "all", &[]);
    launch(2, "all", &[("OXMPI_SHM_DIRECT", "0")]);
}

#[test]
fn every_algorithm_forced() {
    for profile in PROFILES {
        for n in [2, 3, 4, 5, 7, 8, 9] {
            launch(n, "quick", profile);
        }
    }
}

#[test]
fn every_algorithm_forced_with_large_counts() {
    launch(5, "all", PROFILES[1]);
    launch(3, "all", PROFILES[2]);
    // Powers of two, where the first round or step folds from the input into
    // the receive buffer (three operands) and later rounds receive into the
    // part of it the first gave away.
    launch(4, "all", PROFILES[2]);
    launch(2, "all", PROFILES[1]);
    launch(4, "all", PROFILES[4]);
}

#[test]
fn unknown_algorithm_name_is_an_error() {
    let run = common::run_env(
        2,
        PROG,
        &["quick"],
        &[("OXMPI_ALLREDUCE_ALGORITHM", "bogus")],
    );
    assert!(
        !run.output.status.success(),
        "a bogus algorithm name was accepted:\n{}",
        run.stdout()
    );
    assert!(
        run.stderr().contains("names no allreduce algorithm"),
        "{}",
        run.stderr()
    );
}

#[test]
fn two_level_allreduce_forced_on_one_host() {
    // On one host the two-level algorithm is a reduce to the host leader and a
    // broadcast; across hosts (tests/multihost.rs) it is chosen automatically.
    for n in [1, 3, 5, 8] {
        launch(n, "all", &[("OXMPI_ALLREDUCE_ALGORITHM", "hierarchical")]);
    }
}
