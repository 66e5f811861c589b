//! The thread level is in the types: under `Threading::Multiple` the world communicator,
//! everything made from it (duplicates, splits, Cartesian, graph and intercommunicators)
//! and the requests of its processes and collectives, in any scope, are `Send + Sync`, as
//! are all requests of `threaded_scope`. Below it, communicators and their requests stay
//! on their thread, as do the Unthreaded communicators of the free functions
//! (`SimpleCommunicator::self_comm`) until `into_multithreaded` converts them, and
//! processes at every level. These programs must compile (and run), or fail to compile
//! with the expected error (`tests/threading/*.stderr`).

#[test]
fn thread_level_in_the_types() {
    let t = trybuild::TestCases::new();
    t.pass("tests/threading/multiple_world_is_send_and_sync.rs");
    t.pass("tests/threading/multiple_derived_communicators_are_send_and_sync.rs");
    t.pass("tests/threading/multiple_scope_requests_are_send.rs");
    t.pass("tests/threading/threaded_scope_requests_are_send.rs");
    t.compile_fail("tests/threading/single_world_is_not_send.rs");
    t.compile_fail("tests/threading/serialized_world_is_not_sync.rs");
    t.compile_fail("tests/threading/single_duplicate_is_not_send.rs");
    t.compile_fail("tests/threading/single_split_is_not_send.rs");
    t.compile_fail("tests/threading/funneled_cartesian_is_not_send.rs");
    t.compile_fail("tests/threading/serialized_graph_is_not_sync.rs");
    t.compile_fail("tests/threading/serialized_distributed_graph_is_not_sync.rs");
    t.compile_fail("tests/threading/single_intercommunicator_is_not_send.rs");
    t.compile_fail("tests/threading/single_merged_intercommunicator_is_not_send.rs");
    t.compile_fail("tests/threading/self_comm_is_not_send_until_converted.rs");
    t.compile_fail("tests/threading/process_is_not_send.rs");
    t.compile_fail("tests/threading/request_is_not_send.rs");
    t.compile_fail("tests/threading/self_comm_request_is_not_send.rs");
    t.compile_fail("tests/threading/single_collective_request_is_not_send.rs");
}
