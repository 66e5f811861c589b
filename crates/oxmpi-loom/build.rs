// Compiles this crate (only this one: RUSTFLAGS would reach every crate of the
// build) with `cfg(loom)`, under which oxmpi-core's doorbell source, included
// by path, uses loom's atomics, fence and a modelled futex.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(loom)");
    println!("cargo::rustc-cfg=loom");
}
