//! The thread level is in the types: under `Threading::Multiple` the world communicator
//! (and what `into_multithreaded` converts) and the requests of `threaded_scope` are
//! `Send + Sync`; below it communicators stay on their thread, as do processes and the
//! requests of ordinary scopes at every level. These programs must
//! compile, or fail to compile with the expected error (`tests/threading/*.stderr`).

#[test]
fn thread_level_in_the_types() {
    let t = trybuild::TestCases::new();
    t.pass("tests/threading/multiple_world_is_send_and_sync.rs");
    t.pass("tests/threading/threaded_scope_requests_are_send.rs");
    t.compile_fail("tests/threading/single_world_is_not_send.rs");
    t.compile_fail("tests/threading/serialized_world_is_not_sync.rs");
    t.compile_fail("tests/threading/duplicate_is_not_send_until_converted.rs");
    t.compile_fail("tests/threading/process_is_not_send.rs");
    t.compile_fail("tests/threading/request_is_not_send.rs");
}
