// Under Threading::Multiple, the requests of a Multithreaded communicator are Send + Sync
// in an ordinary scope too: point-to-point and collective, made from the world or from
// a communicator made from it.
use oxmpi::collective::SystemOperation;
use oxmpi::request::scope;
use oxmpi::traits::*;
use oxmpi::Threading;

fn main() {
    let (universe, _) = oxmpi::initialize_with_threading(Threading::Multiple).unwrap();
    let world = universe.world();
    let cart = world.create_cartesian_communicator(&[world.size()], &[false], false).unwrap();
    let x = [1i32, 2, 3];
    let mut y = [0i32; 3];
    let mut sum = 0i32;
    let mut b = 0u64;
    scope(|s| {
        let me = cart.this_process();
        let recv = me.immediate_receive_into(s, &mut y);
        let send = me.immediate_send(s, &x);
        let reduce = world.immediate_all_reduce_into(s, &x[0], &mut sum, SystemOperation::sum());
        if world.rank() == 0 {
            b = 9;
        }
        let bcast = world.process_at_rank(0).immediate_broadcast_into(s, &mut b);
        let barrier = cart.immediate_barrier();
        std::thread::scope(|t| {
            t.spawn(move || send.wait());
            t.spawn(move || recv.wait());
            t.spawn(move || reduce.wait());
            t.spawn(move || bcast.wait());
            t.spawn(move || barrier.wait());
        });
    });
    assert_eq!(x, y);
    assert_eq!(sum, world.size());
    assert_eq!(b, 9);
}
