//! A scope owns the completion of what it started: the buffers of its requests,
//! persistent requests and partitioned transfers stay borrowed until the scope ends
//! (forgetting a request with `std::mem::forget` gives nothing back early), and none of
//! those can leave the scope's closure, so the scope's wait at its end covers them all.
//! These programs must fail to compile with the expected error (`tests/scopes/*.stderr`);
//! the run tests that the wait happens are in `oxmpi-tests` (`api_immediate`, `api_part`,
//! `core_pt2pt`'s persistent scenario).

#[test]
fn scopes_keep_buffers_until_they_end() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/scopes/forgotten_request_keeps_its_buffer.rs");
    t.compile_fail("tests/scopes/persistent_request_cannot_leave_its_scope.rs");
    t.compile_fail("tests/scopes/partitioned_receive_cannot_leave_its_scope.rs");
}
