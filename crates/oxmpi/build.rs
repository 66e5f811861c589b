//! The standard ABI's numbers the safe API hands out (the handles of predefined
//! datatypes in `ffi` types, rsmpi's raw constants such as `UNDEFINED`), generated from
//! `oxmpi-capi/abi.txt` by the C library's own generator: abi.txt stays the one place
//! they are written, and this crate still needs no C library.

#[allow(dead_code)]
#[path = "../oxmpi-capi/gen.rs"]
mod gen;

use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    let abi_txt = dir.join("../oxmpi-capi/abi.txt");
    println!("cargo:rerun-if-changed={}", abi_txt.display());
    println!("cargo:rerun-if-changed=../oxmpi-capi/gen.rs");
    let abi = gen::parse(&std::fs::read_to_string(&abi_txt).expect("reading oxmpi-capi/abi.txt"));
    std::fs::write(out.join("abi_consts.rs"), gen::rust_consts(&abi)).unwrap();
    std::fs::write(out.join("abi_map.rs"), gen::rust_abi_map(&abi)).unwrap();
}
