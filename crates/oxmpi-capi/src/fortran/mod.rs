//! The Fortran bindings' entry points in libmpi (`mpif.h` and `use mpi`; `use
//! mpi_f08` is Fortran code laid out by `cargo xtask dist` that calls these).
//!
//! gfortran's calling convention: the symbol of `MPI_SEND` is `mpi_send_`, every
//! argument comes by reference, a trailing `ierror` receives the code, and each
//! CHARACTER argument has a hidden length (`size_t`) after all the others.
//! Handles are Fortran INTEGERs (`MPI_x_c2f` / `MPI_x_f2c`), statuses are
//! `INTEGER(MPI_STATUS_SIZE)` arrays with the C `MPI_Status` layout (the
//! standard ABI makes them the same 8 ints).
//!
//! Most procedures are generated from `abi.txt` (gen.rs `rust_fortran`): a
//! function added there gets its Fortran binding without a line written here.
//! This file holds what is not mechanical: the sentinels (`MPI_BOTTOM`,
//! `MPI_IN_PLACE`, `MPI_STATUS_IGNORE`, ... are Fortran variables in common
//! blocks, recognized here by address), strings, MPI_INIT, and the procedures
//! that take Fortran callbacks (user operations, error handlers, attribute copy
//! and delete functions, with the predefined `MPI_COMM_DUP_FN` & co. callable
//! from Fortran) or attribute values (address-sized integers in Fortran).
//!
//! Split by area: [`env`], [`callbacks`], [`attr`], [`f08`], [`mpi1`]; this file
//! keeps the sentinels, strings and the helpers of the generated procedures.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Mutex, OnceLock};

use crate::abi::*;
use crate::types::*;

mod attr;
mod callbacks;
mod env;
mod f08;
mod mpi1;

pub use attr::*;
pub use callbacks::*;
pub use env::*;
pub use f08::*;
pub use mpi1::*;

// ----- sentinels ---------------------------------------------------------------------
//
// `mpif.h` and the modules declare each sentinel as the only variable of a
// common block (`COMMON /MPI_FORTRAN_BOTTOM/ MPI_BOTTOM`, symbol
// `mpi_fortran_bottom_`). libmpi defines the symbols with the sizes the
// Fortran declarations have, so the link resolves every program's common block
// to one object; whether the program's references end up at libmpi's copy or
// at a copy relocation in the executable, `dlsym(RTLD_DEFAULT)` finds the one
// the program uses, and both addresses are recognized.

#[no_mangle]
pub static mut mpi_fortran_bottom_: c_int = 0;
#[no_mangle]
pub static mut mpi_fortran_in_place_: c_int = 0;
#[no_mangle]
pub static mut mpi_fortran_buffer_automatic_: c_int = 0;
#[no_mangle]
pub static mut mpi_fortran_status_ignore_: [c_int; 8] = [0; 8];
#[no_mangle]
pub static mut mpi_fortran_statuses_ignore_: [c_int; 8] = [0; 8];
#[no_mangle]
pub static mut mpi_fortran_errcodes_ignore_: c_int = 0;
#[no_mangle]
pub static mut mpi_fortran_unweighted_: c_int = 0;
#[no_mangle]
pub static mut mpi_fortran_weights_empty_: c_int = 0;
#[no_mangle]
pub static mut mpi_fortran_argv_null_: c_char = 0;

const BOTTOM: usize = 0;
const IN_PLACE: usize = 1;
const BUFFER_AUTOMATIC: usize = 2;
const STATUS_IGNORE: usize = 3;
const STATUSES_IGNORE: usize = 4;
const ERRCODES_IGNORE: usize = 5;
const UNWEIGHTED: usize = 6;
const WEIGHTS_EMPTY: usize = 7;
const NSENT: usize = 8;

/// The addresses of each sentinel: libmpi's own and the one the program sees.
fn sentinels() -> &'static [[usize; 2]; NSENT] {
    static S: OnceLock<[[usize; 2]; NSENT]> = OnceLock::new();
    S.get_or_init(|| {
        let own: [(usize, &std::ffi::CStr); NSENT] = [
            (
                &raw const mpi_fortran_bottom_ as usize,
                c"mpi_fortran_bottom_",
            ),
            (
                &raw const mpi_fortran_in_place_ as usize,
                c"mpi_fortran_in_place_",
            ),
            (
                &raw const mpi_fortran_buffer_automatic_ as usize,
                c"mpi_fortran_buffer_automatic_",
            ),
            (
                &raw const mpi_fortran_status_ignore_ as usize,
                c"mpi_fortran_status_ignore_",
            ),
            (
                &raw const mpi_fortran_statuses_ignore_ as usize,
                c"mpi_fortran_statuses_ignore_",
            ),
            (
                &raw const mpi_fortran_errcodes_ignore_ as usize,
                c"mpi_fortran_errcodes_ignore_",
            ),
            (
                &raw const mpi_fortran_unweighted_ as usize,
                c"mpi_fortran_unweighted_",
            ),
            (
                &raw const mpi_fortran_weights_empty_ as usize,
                c"mpi_fortran_weights_empty_",
            ),
        ];
        own.map(|(a, name)| {
            // SAFETY: dlsym with a NUL-terminated name; it only looks the symbol up.
            let seen = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) } as usize;
            [a, if seen == 0 { a } else { seen }]
        })
    })
}

fn is(p: *const c_void, which: usize) -> bool {
    let a = p as usize;
    a != 0 && sentinels()[which].contains(&a)
}

/// A choice buffer: the Fortran sentinels become the C ones.
pub fn buf(p: *mut c_void) -> *mut c_void {
    if is(p, BOTTOM) {
        MPI_BOTTOM as *mut c_void
    } else if is(p, IN_PLACE) {
        MPI_IN_PLACE as *mut c_void
    } else if is(p, BUFFER_AUTOMATIC) {
        MPI_BUFFER_AUTOMATIC as *mut c_void
    } else {
        p
    }
}

/// A status or status array: MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE become NULL.
pub fn status(p: *mut c_void) -> *mut c_void {
    if is(p, STATUS_IGNORE) || is(p, STATUSES_IGNORE) {
        std::ptr::null_mut()
    } else {
        p
    }
}

pub fn weights(p: *mut c_void) -> *mut c_void {
    if is(p, UNWEIGHTED) {
        MPI_UNWEIGHTED as *mut c_void
    } else if is(p, WEIGHTS_EMPTY) {
        MPI_WEIGHTS_EMPTY as *mut c_void
    } else {
        p
    }
}

pub fn errcodes(p: *mut c_void) -> *mut c_void {
    if is(p, ERRCODES_IGNORE) {
        std::ptr::null_mut()
    } else {
        p
    }
}

/// # Safety
/// `ierror` is NULL or the Fortran caller's INTEGER.
pub unsafe fn set_ierror(ierror: *mut c_int, rc: c_int) {
    if !ierror.is_null() {
        // SAFETY: the caller's INTEGER ierror (checked non-NULL).
        unsafe { *ierror = rc };
    }
}

// ----- strings -----------------------------------------------------------------------

/// A Fortran CHARACTER argument as a C string: trailing blanks dropped (as the
/// standard says), cut at an embedded NUL.
///
/// # Safety
/// `p` points to `len` bytes (or is NULL).
pub unsafe fn str_in(p: *mut c_void, len: usize) -> Vec<c_char> {
    let bytes: &[u8] = if p.is_null() {
        &[]
    } else {
        // SAFETY: the Fortran string's `len` bytes.
        unsafe { std::slice::from_raw_parts(p as *const u8, len) }
    };
    let bytes = &bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())];
    let end = bytes.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    let start = bytes[..end].iter().position(|&b| b != b' ').unwrap_or(end);
    let mut v: Vec<c_char> = bytes[start..end].iter().map(|&b| b as c_char).collect();
    v.push(0);
    v
}

/// A C buffer for an output string of a Fortran CHARACTER of length `len`: room
/// for the longest string any MPI call writes (MPI_MAX_LIBRARY_VERSION_STRING).
pub fn str_buf(len: usize) -> Vec<c_char> {
    vec![0; len.max(MPI_MAX_LIBRARY_VERSION_STRING as usize) + 1]
}

/// Copies a C output string into a Fortran CHARACTER, blank-padded.
///
/// # Safety
/// `p` points to `len` writable bytes (or is NULL).
pub unsafe fn str_out(p: *mut c_void, len: usize, s: &[c_char]) {
    if p.is_null() {
        return;
    }
    let n = s.iter().position(|&c| c == 0).unwrap_or(s.len()).min(len);
    // SAFETY: the Fortran string's `len` writable bytes.
    let dst = unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) };
    for (i, d) in dst.iter_mut().enumerate() {
        *d = if i < n { s[i] as u8 } else { b' ' };
    }
}

// ----- helpers for generated procedures --------------------------------------------------

/// The length of `sendtypes` / `recvtypes` of an alltoallw-like call: the
/// neighbour counts for neighbourhood collectives, else the (remote) group size.
/// 0 when `comm` is not a valid communicator (the C call then reports it).
pub fn typevec_len(call: &str, comm: MPI_Comm, send: bool) -> c_int {
    if crate::conv::comm(comm, call).is_err() {
        return 0;
    }
    let mut n: c_int = 0;
    // SAFETY: C calls on a communicator just validated, with local out-arguments.
    unsafe {
        if call.contains("eighbor") {
            let mut kind = 0;
            crate::pmpi::PMPI_Topo_test(comm, &mut kind);
            match kind {
                MPI_DIST_GRAPH => {
                    let (mut i, mut o, mut w) = (0, 0, 0);
                    crate::pmpi::PMPI_Dist_graph_neighbors_count(comm, &mut i, &mut o, &mut w);
                    n = if send { o } else { i };
                }
                MPI_GRAPH => {
                    let mut r = 0;
                    crate::pmpi::PMPI_Comm_rank(comm, &mut r);
                    crate::pmpi::PMPI_Graph_neighbors_count(comm, r, &mut n);
                }
                MPI_CART => {
                    crate::pmpi::PMPI_Cartdim_get(comm, &mut n);
                    n *= 2;
                }
                _ => {}
            }
        } else {
            let mut inter = 0;
            crate::pmpi::PMPI_Comm_test_inter(comm, &mut inter);
            if inter != 0 {
                crate::pmpi::PMPI_Comm_remote_size(comm, &mut n);
            } else {
                crate::pmpi::PMPI_Comm_size(comm, &mut n);
            }
        }
    }
    n
}

/// The generated procedures (gen.rs `rust_fortran`).
pub mod generated {
    // Generated casts are written for every parameter alike; some are no-ops.
    #![allow(
        clippy::too_many_arguments,
        clippy::unnecessary_cast,
        unused_mut,
        unused_unsafe
    )]
    use crate::types::*;
    use std::ffi::{c_char, c_int, c_void};
    include!(concat!(env!("OUT_DIR"), "/mpi_fortran.rs"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_strings_trim_and_pad() {
        let mut f = *b"  a name   ";
        // SAFETY: a local buffer of the given length.
        let c = unsafe { str_in(f.as_mut_ptr() as *mut c_void, f.len()) };
        let s: Vec<u8> = c.iter().map(|&x| x as u8).collect();
        assert_eq!(s, b"a name\0");
        let out: Vec<c_char> = b"xyz\0junk".iter().map(|&b| b as c_char).collect();
        // SAFETY: as above.
        unsafe { str_out(f.as_mut_ptr() as *mut c_void, f.len(), &out) };
        assert_eq!(&f, b"xyz        ");
        // Longer than the Fortran variable: cut.
        let mut g = *b"ab";
        // SAFETY: as above.
        unsafe { str_out(g.as_mut_ptr() as *mut c_void, g.len(), &out) };
        assert_eq!(&g, b"xy");
    }

    #[test]
    fn sentinels_map_to_the_c_values_and_nothing_else() {
        let bottom = &raw mut mpi_fortran_bottom_ as *mut c_void;
        let in_place = &raw mut mpi_fortran_in_place_ as *mut c_void;
        let st = &raw mut mpi_fortran_status_ignore_ as *mut c_void;
        assert_eq!(buf(bottom) as usize, MPI_BOTTOM);
        assert_eq!(buf(in_place) as usize, MPI_IN_PLACE);
        assert!(status(st).is_null());
        let mut x = 0i32;
        let p = &mut x as *mut i32 as *mut c_void;
        assert_eq!(buf(p), p);
        assert_eq!(status(p), p);
        assert_eq!(weights(p), p);
    }
}
