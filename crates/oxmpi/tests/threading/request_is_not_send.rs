use oxmpi::traits::*;
use oxmpi::Threading;

fn main() {
    let (universe, _) = oxmpi::initialize_with_threading(Threading::Serialized).unwrap();
    let world = universe.world();
    let x = 1i32;
    oxmpi::request::scope(|sc| {
        let r = world.this_process().immediate_send(sc, &x);
        std::thread::scope(|s| {
            s.spawn(move || r.wait());
        });
    });
}
