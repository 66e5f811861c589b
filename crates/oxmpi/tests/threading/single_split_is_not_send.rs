use oxmpi::topology::Color;
use oxmpi::traits::*;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let split = world.split_by_color(Color::with_value(0)).unwrap();
    std::thread::spawn(move || split.rank());
}
