use oxmpi::topology::{InterCommunicator, MergeOrder};
use oxmpi::traits::*;

// What the merge of an intercommunicator made below Threading::Multiple makes stays on
// its thread too.
fn check(inter: &InterCommunicator) {
    let merged = inter.merge(MergeOrder::Low);
    std::thread::spawn(move || merged.size());
}

fn main() {
    let _universe = oxmpi::initialize().unwrap();
    let _ = check;
}
