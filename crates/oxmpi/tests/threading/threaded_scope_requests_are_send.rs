use oxmpi::traits::*;
use oxmpi::Threading;

fn main() {
    let (universe, _) = oxmpi::initialize_with_threading(Threading::Multiple).unwrap();
    let world = universe.world();
    let x = [1i32, 2, 3];
    let mut y = [0i32; 3];
    universe.threaded_scope(|sc| {
        let me = world.this_process();
        let recv = me.immediate_receive_into(sc, &mut y);
        let send = me.immediate_send(sc, &x);
        // Requests of a threaded scope are Send + Sync: waited for on other threads.
        std::thread::scope(|t| {
            t.spawn(move || send.wait());
            let st = t.spawn(move || recv.wait()).join().unwrap();
            assert_eq!(st.count(i32::equivalent_datatype()), 3);
        });
    });
    assert_eq!(x, y);
}
