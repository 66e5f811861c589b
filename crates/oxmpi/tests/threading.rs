//! The thread level is in the types: under `Threading::Multiple` the world communicator
//! (and what `into_multithreaded` converts) is `Send + Sync`; below it, communicators,
//! and everywhere processes and requests, stay on their thread. These programs must
//! compile, or fail to compile with the expected error (`tests/threading/*.stderr`).

#[test]
fn thread_level_in_the_types() {
    let t = trybuild::TestCases::new();
    t.pass("tests/threading/multiple_world_is_send_and_sync.rs");
    t.compile_fail("tests/threading/single_world_is_not_send.rs");
    t.compile_fail("tests/threading/serialized_world_is_not_sync.rs");
    t.compile_fail("tests/threading/duplicate_is_not_send_until_converted.rs");
    t.compile_fail("tests/threading/process_is_not_send.rs");
    t.compile_fail("tests/threading/request_is_not_send.rs");
}
