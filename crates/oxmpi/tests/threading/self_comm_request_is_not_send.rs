// Even under Threading::Multiple, the requests of an Unthreaded communicator (here
// MPI_COMM_SELF from the free function, not converted) stay on their thread in an
// ordinary scope.
use oxmpi::topology::SimpleCommunicator;
use oxmpi::traits::*;
use oxmpi::Threading;

fn main() {
    let (_universe, _) = oxmpi::initialize_with_threading(Threading::Multiple).unwrap();
    let me = SimpleCommunicator::self_comm();
    let x = 1i32;
    oxmpi::request::scope(|sc| {
        let r = me.this_process().immediate_send(sc, &x);
        std::thread::scope(|s| {
            s.spawn(move || r.wait());
        });
    });
}
