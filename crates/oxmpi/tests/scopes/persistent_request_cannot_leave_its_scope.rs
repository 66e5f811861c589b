use oxmpi::collective::SystemOperation;
use oxmpi::traits::*;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let x = [1i32];
    let mut sum = [0i32];
    let r = oxmpi::request::scope(|s| {
        let mut r = world.all_reduce_init(s, &x[..], &mut sum[..], SystemOperation::sum());
        r.start();
        // Out of the scope, its end could not wait for the run.
        r
    });
    std::mem::forget(r);
    sum[0] = 2;
}
