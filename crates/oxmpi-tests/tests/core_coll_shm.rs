//! Shared-memory collectives (crates/oxmpi-core/src/coll/shm), forced with
//! `OXMPI_<OP>_ALGORITHM=shm`, on 1, 2, 3, 4, 5, 7, 8 and 9 ranks (see
//! src/bin/core_coll_shm.rs for what each mode checks). The existing collective
//! programs also run with `shm` forced (core_coll_move.rs, core_coll_reduce.rs).
mod common;

const PROG: &str = env!("CARGO_BIN_EXE_core_coll_shm");
const SIZES: &[usize] = &[1, 2, 3, 4, 5, 7, 8, 9];
const FORCED: &[(&str, &str)] = &[
    ("OXMPI_BARRIER_ALGORITHM", "shm"),
    ("OXMPI_BCAST_ALGORITHM", "shm"),
    ("OXMPI_REDUCE_ALGORITHM", "shm"),
    ("OXMPI_ALLREDUCE_ALGORITHM", "shm"),
    ("OXMPI_ALLGATHER_ALGORITHM", "shm"),
];

fn mode(name: &str, env: &[(&str, &str)], sizes: &[usize]) {
    for &n in sizes {
        let run = common::run_env(n, PROG, &[name], env);
        run.assert_ok();
        let oks = run.stdout().matches(&format!("{name}: ok")).count();
        assert_eq!(
            oks,
            n,
            "{name} on {n} ranks ({env:?}): {oks} ranks reported ok:\n{}",
            run.stdout()
        );
        assert!(
            common::shm_leftovers_of(run.pid).is_empty(),
            "shared memory left behind"
        );
    }
}

#[test]
fn allreduce_results_are_bit_identical() {
    mode("bitident", FORCED, SIZES);
    // And with the automatic selection.
    mode("bitident", &[], &[3, 8]);
}

#[test]
fn non_commutative_user_op_combines_in_rank_order() {
    mode("noncomm", FORCED, SIZES);
    // The blocks variant where the gather one would serve a crowded host
    // (each rank folding a block of a few elements).
    let blocks: Vec<_> = FORCED
        .iter()
        .copied()
        .chain([("OXMPI_ALLREDUCE_SHM_GATHER_MAX", "0")])
        .collect();
    mode("noncomm", &blocks, &[3, 5]);
}

#[test]
fn barrier_waits_for_the_last_rank() {
    mode("barrier", FORCED, SIZES);
}

#[test]
fn many_communicators_leak_nothing() {
    mode("comms", FORCED, &[1, 2, 3, 4, 9]);
    mode("comms", &[], &[4]);
}

#[test]
fn non_blocking_and_blocking_collectives_mix() {
    mode("mixed", FORCED, SIZES);
    mode("mixed", &[], &[4]);
}

#[test]
fn the_path_is_taken_by_default_and_can_be_disabled() {
    let areas = |env: &[(&str, &str)]| {
        let run = common::run_env(4, PROG, &["uses_shm"], env);
        run.assert_ok();
        run.stdout()
            .lines()
            .filter(|l| l.starts_with("areas: "))
            .map(|l| l[7..].trim().parse::<usize>().unwrap())
            .collect::<Vec<_>>()
    };
    // Two areas: the blocking collectives' and the non-blocking ones' (coll/shm/nb.rs).
    assert_eq!(
        areas(&[]),
        vec![2; 4],
        "the automatic selection did not make the areas"
    );
    assert_eq!(
        areas(&[("OXMPI_BARRIER_ALGORITHM", "dissemination")]),
        vec![0; 4],
        "another algorithm forced, yet an area"
    );
    // Ranks that do not all share memory (every peer over TCP) use schedules.
    assert_eq!(
        areas(&[
            ("OXMPI_BARRIER_ALGORITHM", "shm"),
            ("OXMPI_TRANSPORT", "tcp")
        ]),
        vec![0; 4]
    );
}

#[test]
fn api_collectives_with_shm_forced() {
    for n in 1..=5 {
        let run = common::run_env(n, env!("CARGO_BIN_EXE_api_coll"), &[], FORCED);
        run.assert_ok();
        for r in 0..n {
            assert!(
                run.stdout()
                    .contains(&format!("api_coll: rank {r} of {n} ok")),
                "rank {r}:\n{}\n{}",
                run.stdout(),
                run.stderr()
            );
        }
    }
}

#[test]
fn a_killed_rank_ends_the_job_promptly() {
    for n in [2, 4] {
        let run = common::run_env(n, PROG, &["die"], FORCED);
        assert_eq!(run.code(), Some(128 + 9), "stderr: {}", run.stderr());
        // The rank dies ~0.2 s after start; the job must be over within ~1 s of that.
        assert!(
            run.elapsed.as_secs_f64() < 2.5,
            "job took {:?}",
            run.elapsed
        );
        assert!(common::shm_leftovers_of(run.pid).is_empty());
    }
}

#[test]
fn ranks_moved_onto_one_processor_keep_their_results() {
    // The waits' early yield where a rank of ours reported this processor
    // (runtime/wait.rs, `peer_shares_cpu`; bench/PROFILE.md coll36).
    mode("colocated", &[], &[2]);
    mode("colocated", FORCED, &[2, 3]);
}
