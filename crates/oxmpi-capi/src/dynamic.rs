//! Dynamic process management and the handle kinds oxmpi has no objects of.
//!
//! oxmpi starts no processes at run time: `MPI_Comm_spawn` and
//! `MPI_Comm_spawn_multiple` raise `MPI_ERR_UNSUPPORTED_OPERATION` naming the
//! call (through the communicator's error handler), and no process has a
//! parent (`MPI_Comm_get_parent` gives `MPI_COMM_NULL`, as the standard says
//! for a process not started by spawn). `MPI_Comm_disconnect` frees the
//! communicator. (Files and windows convert in `file.rs` and `win.rs`.)

use std::ffi::{c_char, c_int};

use oxmpi_core::error::MpiError;

use crate::abi::*;
use crate::errors::{NO_COMM, ffi, out};
use crate::types::*;

/// Fills the error-code array (unless `MPI_ERRCODES_IGNORE`) and clears the intercommunicator.
unsafe fn spawn_failed(n: c_int, intercomm: *mut MPI_Comm, errcodes: *mut c_int) {
    if !intercomm.is_null() {
        // SAFETY: the caller passes a writable MPI_Comm.
        unsafe { *intercomm = MPI_COMM_NULL };
    }
    if !errcodes.is_null() {
        for i in 0..n.max(0) as usize {
            // SAFETY: the standard sizes errcodes to the total maxprocs.
            unsafe { *errcodes.add(i) = MPI_ERR_UNSUPPORTED_OPERATION };
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_spawn(
    _command: *const c_char,
    _argv: *mut *mut c_char,
    maxprocs: c_int,
    _info: MPI_Info,
    _root: c_int,
    comm: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Comm_spawn";
    ffi(CALL, comm, || {
        // SAFETY: pointers as the C caller passed them.
        unsafe { spawn_failed(maxprocs, intercomm, array_of_errcodes) };
        Err(MpiError::unsupported(CALL, "starting processes at run time").into())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_spawn_multiple(
    count: c_int,
    _array_of_commands: *mut *mut c_char,
    _array_of_argv: *mut *mut *mut c_char,
    array_of_maxprocs: *const c_int,
    _array_of_info: *const MPI_Info,
    _root: c_int,
    comm: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Comm_spawn_multiple";
    ffi(CALL, comm, || {
        let mut total = 0;
        if !array_of_maxprocs.is_null() {
            for i in 0..count.max(0) as usize {
                // SAFETY: `count` entries, as the standard requires.
                total += unsafe { *array_of_maxprocs.add(i) }.max(0);
            }
        }
        // SAFETY: pointers as the C caller passed them.
        unsafe { spawn_failed(total, intercomm, array_of_errcodes) };
        Err(MpiError::unsupported(CALL, "starting processes at run time").into())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_get_parent(parent: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_get_parent";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `parent` is MPI_Comm_get_parent's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "parent", parent)? } = MPI_COMM_NULL;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_disconnect(comm: *mut MPI_Comm) -> c_int {
    // SAFETY: same contract as MPI_Comm_free (no process is connected otherwise);
    // errors go to the communicator's handler there.
    unsafe { crate::comm::PMPI_Comm_free(comm) }
}
