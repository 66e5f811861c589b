//! Generates the library's constants and its `MPI_x` -> `PMPI_x` shims from
//! `abi.txt` (the same description `cargo xtask dist` turns into `mpi.h`), and
//! gives libmpi.so its SONAME.

#[path = "gen.rs"]
mod gen;

use std::path::PathBuf;

/// The SONAME of libmpi.so: the MPI-5.0 standard ABI's library name, so that programs
/// built against any standard-ABI MPI load ours. `cargo xtask dist` lays out the file
/// under this name, with `libmpi.so`, `libmpi_abi.so` and the former `libmpi.so.0` as
/// aliases.
const SONAME: &str = "libmpi_abi.so.1";

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed=abi.txt");
    println!("cargo:rerun-if-changed=gen.rs");
    let text = std::fs::read_to_string(dir.join("abi.txt")).expect("reading abi.txt");
    let abi = gen::parse(&text);
    std::fs::write(out.join("abi_consts.rs"), gen::rust_consts(&abi)).unwrap();
    std::fs::write(out.join("abi_map.rs"), gen::rust_abi_map(&abi)).unwrap();
    std::fs::write(out.join("mpi_shims.rs"), gen::rust_shims(&abi)).unwrap();
    std::fs::write(out.join("mpi_unsupported.rs"), gen::rust_unsupported(&abi)).unwrap();
    std::fs::write(out.join("mpi_queries.rs"), gen::rust_queries(&abi)).unwrap();
    std::fs::write(out.join("mpi_checked.rs"), gen::rust_checked(&abi)).unwrap();
    std::fs::write(out.join("mpi_hot.rs"), gen::rust_hot(&abi)).unwrap();
    std::fs::write(out.join("mpi_coll.rs"), gen::rust_coll(&abi)).unwrap();
    std::fs::write(out.join("mpi.h"), gen::header(&abi)).unwrap();
    std::fs::write(out.join("mpi_fortran.rs"), gen::rust_fortran(&abi)).unwrap();
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{SONAME}");
    }
}
