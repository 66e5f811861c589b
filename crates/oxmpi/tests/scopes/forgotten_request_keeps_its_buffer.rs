use oxmpi::traits::*;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let mut x = 0i32;
    oxmpi::request::scope(|s| {
        let r = world.this_process().immediate_receive_into(s, &mut x);
        std::mem::forget(r);
        // The receive may still write `x`: it stays borrowed until the scope ends.
        x = 5;
    });
    assert_eq!(x, 5);
}
