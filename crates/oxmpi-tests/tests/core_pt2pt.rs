//! Engine-level point-to-point scenarios (see src/bin/core_pt2pt.rs), launched
//! through our mpiexec on 2, 3, 4 and 8 ranks, with the transport's protocol
//! paths forced through environment variables.
mod common;

const PROG: &str = env!("CARGO_BIN_EXE_core_pt2pt");

fn scenario(n: usize, name: &str, env: &[(&str, &str)]) -> common::Run {
    let run = common::run_env(n, PROG, &[name], env);
    run.assert_ok();
    assert!(
        run.stdout().contains(&format!("{name}: ok")),
        "{name} on {n} ranks did not report ok:\n{}",
        run.stdout()
    );
    assert!(
        common::shm_leftovers_of(run.pid).is_empty(),
        "shared memory left behind"
    );
    run
}

#[test]
fn randomized_traffic_arrives_once_intact_and_in_order() {
    for n in [2, 3, 4, 8] {
        scenario(n, "traffic", &[]);
    }
    // Every rendezvous by cross-process copy, and every one streamed.
    scenario(3, "traffic", &[("OXMPI_SHM_STREAM_MAX", "0")]);
    scenario(3, "traffic", &[("OXMPI_SHM_STREAM_MAX", "1000000000")]);
}

#[test]
fn windows_of_medium_messages_arrive_intact() {
    // Windows take the rings' vector copy, ping-pongs memcpy (bench/PROFILE.md mbw33);
    // without CMA the ping-pongs above 4 KiB are eager too.
    scenario(2, "windows", &[]);
    scenario(2, "windows", &[("OXMPI_NO_CMA", "1")]);
    // Every window copy by memcpy, every one by the loop (from 128 B); every packet's
    // lines prefetched as soon as its length is known, and only its first four.
    scenario(2, "windows", &[("OXMPI_SHM_VECTOR_COPY_MIN", "1000000")]);
    scenario(2, "windows", &[("OXMPI_SHM_VECTOR_COPY_MIN", "0")]);
    scenario(2, "windows", &[("OXMPI_SHM_PREFETCH_WHOLE", "1000000")]);
    scenario(2, "windows", &[("OXMPI_SHM_PREFETCH_WHOLE", "0")]);
}

#[test]
fn medium_ping_pongs_pulled_or_eager_arrive_intact() {
    // The choice from measured costs (engine/pullcost.rs), the fixed threshold
    // alone, everything above 0 B pulled, and no pulls at all.
    scenario(2, "pingpongs", &[]);
    scenario(2, "pingpongs", &[("OXMPI_PULL_ADAPT", "0")]);
    scenario(2, "pingpongs", &[("OXMPI_PULL_MIN", "0")]);
    scenario(2, "pingpongs", &[("OXMPI_NO_CMA", "1")]);
}

#[test]
fn randomized_traffic_without_cross_memory_attach() {
    // The pipelined two-copy rendezvous, as on kernels that refuse process_vm_readv.
    for n in [2, 5] {
        scenario(n, "traffic", &[("OXMPI_NO_CMA", "1")]);
    }
}

#[test]
fn randomized_traffic_all_rendezvous_and_all_eager() {
    scenario(3, "traffic", &[("OXMPI_EAGER_LIMIT", "0")]);
    scenario(
        3,
        "traffic",
        &[("OXMPI_EAGER_LIMIT", "1000000"), ("OXMPI_NO_CMA", "1")],
    );
}

#[test]
fn large_messages_copied_by_sender_and_receiver_together() {
    // Streaming through the ring is off here, whatever the machine's core count:
    // every rendezvous is a cross-process copy.
    let single = ("OXMPI_SHM_STREAM_MAX", "0");
    scenario(2, "shared_copy", &[single]);
    scenario(3, "shared_copy", &[("OXMPI_SHARED_COPY", "0"), single]);
    scenario(2, "shared_copy", &[("OXMPI_NO_CMA", "1")]);
    // Messages to 1 MiB streamed, larger ones copied across processes.
    scenario(2, "shared_copy", &[("OXMPI_SHM_STREAM_MAX", "1048576")]);
}

#[test]
fn truncation_is_an_error_and_writes_nothing_past_the_buffer() {
    scenario(2, "truncate", &[]);
    scenario(2, "truncate", &[("OXMPI_NO_CMA", "1")]);
}

#[test]
fn cancel_of_receives_and_unmatched_sends() {
    scenario(2, "cancel", &[]);
    scenario(3, "cancel", &[("OXMPI_NO_CMA", "1")]);
}

#[test]
fn flood_of_unexpected_messages_is_throttled() {
    let run = scenario(2, "flood", &[]);
    assert!(
        run.stdout().contains("peak unexpected eager bytes"),
        "{}",
        run.stdout()
    );
}

#[test]
fn probe_iprobe_mprobe_mrecv() {
    scenario(2, "probe", &[]);
    scenario(3, "probe", &[]);
}

#[test]
fn persistent_requests_in_a_ring() {
    for n in [2, 3, 4] {
        scenario(n, "persistent", &[]);
    }
}

#[test]
fn synchronous_buffered_and_ready_modes() {
    scenario(2, "modes", &[]);
}

#[test]
fn wait_and_test_families() {
    scenario(4, "waitfamily", &[]);
    scenario(8, "waitfamily", &[]);
}

#[test]
fn thread_multiple_concurrent_sendrecv() {
    scenario(2, "threads", &[]);
    scenario(3, "threads", &[]);
}

#[test]
fn bad_arguments_return_the_right_error_class() {
    scenario(2, "errors", &[]);
}

#[test]
fn sends_to_self() {
    scenario(1, "selfsend", &[]);
    scenario(2, "selfsend", &[]);
    // Singleton: no process manager at all.
    let out = std::process::Command::new(PROG)
        .arg("selfsend")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn abort_ends_the_job_with_its_code() {
    let run = common::run(3, PROG, &["abort"]);
    assert_eq!(run.code(), Some(7), "stderr: {}", run.stderr());
    assert!(run.stderr().contains("MPI_Abort"), "{}", run.stderr());
    assert!(run.elapsed.as_secs_f64() < 5.0, "took {:?}", run.elapsed);
    assert!(common::shm_leftovers_of(run.pid).is_empty());
}

#[test]
fn a_killed_rank_ends_the_job_promptly_without_survivors() {
    for n in [2, 4] {
        let token = common::unique_token("die");
        let run = common::run(n, PROG, &["die", &token]);
        assert_eq!(run.code(), Some(128 + 9), "stderr: {}", run.stderr());
        let err = run.stderr();
        assert!(
            err.contains(&format!("rank {}", n - 1)) && err.contains("signal 9"),
            "{err}"
        );
        // The rank dies 0.2 s after start; the job must be over within ~1 s of that.
        assert!(
            run.elapsed.as_secs_f64() < 2.5,
            "job took {:?}",
            run.elapsed
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(
            common::processes_with(&token).is_empty(),
            "survivors: {:?}",
            common::processes_with(&token)
        );
        assert!(common::shm_leftovers_of(run.pid).is_empty());
    }
}

#[test]
fn barrier_holds_everybody_until_all_entered() {
    for n in [1, 2, 3, 5, 8] {
        scenario(n, "barrier", &[]);
    }
}

#[test]
fn derived_datatypes_on_either_side() {
    scenario(2, "typed", &[]);
    scenario(3, "typed", &[("OXMPI_NO_CMA", "1")]);
}

#[test]
fn type_signature_mismatch_is_an_error_when_checking() {
    scenario(2, "signature", &[("OXMPI_CHECK_SIGNATURES", "1")]);
    scenario(
        2,
        "signature",
        &[("OXMPI_CHECK_SIGNATURES", "1"), ("OXMPI_NO_CMA", "1")],
    );
    scenario(1, "signature", &[("OXMPI_CHECK_SIGNATURES", "1")]);
    // Off (the default): the same program's mismatches go through as bytes.
    scenario(2, "signature", &[]);
    scenario(1, "signature", &[]);
}

#[test]
fn mixed_type_signatures_are_checked_as_prefixes() {
    scenario(2, "signature_mixed", &[("OXMPI_CHECK_SIGNATURES", "1")]);
    scenario(
        2,
        "signature_mixed",
        &[("OXMPI_CHECK_SIGNATURES", "1"), ("OXMPI_NO_CMA", "1")],
    );
    scenario(1, "signature_mixed", &[("OXMPI_CHECK_SIGNATURES", "1")]);
    scenario(2, "signature_mixed", &[]);
}

#[test]
fn over_tcp_large_messages_land_in_the_receive_buffer_intact() {
    // Every peer over TCP: rendezvous streams' packets are read from the socket
    // straight into the posted receive's buffer (engine/net.rs `land_data`), except a
    // packet reaching past a short buffer, which takes the clipping path: truncation
    // stays MPI_ERR_TRUNCATE with nothing written past the buffer; randomized traffic
    // (ANY_SOURCE included) arrives intact and in order; non-contiguous receives
    // land in their temporary buffer and unpack.
    let tcp = [("OXMPI_TRANSPORT", "tcp")];
    scenario(2, "truncate", &tcp);
    scenario(3, "traffic", &tcp);
    scenario(2, "typed", &tcp);
}
