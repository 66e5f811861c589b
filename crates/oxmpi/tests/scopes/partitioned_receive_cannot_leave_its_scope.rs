use oxmpi::partitioned::PartitionedReceive;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let mut data = vec![0u64; 8];
    let recv = oxmpi::request::scope(|sc| {
        let mut recv = PartitionedReceive::new(sc, &world, &mut data, 2, 0, 0).unwrap();
        recv.start().unwrap();
        // Out of the scope, its end could not wait for the transfer.
        recv
    });
    std::mem::forget(recv);
    data[0] = 1;
}
