//! MPI-IO: `MPI_File_*` and `MPI_Register_datarep` over oxmpi-core's `io`.
//!
//! File handles live in their own table (kind `KIND_FILE`). Errors of file
//! calls go to the file's error handler — `MPI_ERRORS_RETURN` by default, as
//! the standard says — and errors of calls with no valid file (open, delete,
//! a bad handle) to `MPI_FILE_NULL`'s, which the program may set.
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as
//! given and require of them what the MPI standard requires of the function
//! they implement: buffers holding their counts of their datatypes (for the
//! non-blocking forms, until the request completes), strings NUL-terminated,
//! OUT arguments writable and aliasing no other argument.
//!
//! Files: `open` (open, close, delete, sizes, info, group, atomicity), `view`, `access`
//! (pointers and data access), `errhan` (file error handlers), `datarep` (user data
//! representations); this module holds the handle table, the error routing and what
//! they share.

use std::ffi::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use oxmpi_core::datatype::Datatype;
use oxmpi_core::error::{ErrorClass, MpiError};
use oxmpi_core::group::Group;
use oxmpi_core::io::{self, Dir, Pos, UserDatarep, Whence};
use oxmpi_core::runtime;

use crate::abi::*;
use crate::conv::errors::{bad, code_name, run_named, R};
use crate::conv::handles::{c2f_predefined_or, f2c_predefined_or, state, ErrhandlerEntry, Table};
use crate::conv::large::{entry, name, ptr::*, to_usize, Count};
use crate::conv::{comm, committed, datatype, find_handle, get_str, new_handle, put_str};
use crate::types::*;

mod access;
mod datarep;
mod errhan;
mod open;
mod view;

pub use access::*;
pub use datarep::*;
pub use errhan::*;
pub use open::*;
pub use view::*;

/// `MPI_Offset`.
type MPI_Offset = i64;

/// Handle kind of files (distinct from the kinds in `handles`).
const KIND_FILE: u64 = 0x46;

struct FileEntry {
    file: io::File,
    errh: MPI_Errhandler,
}

static FILES: Mutex<Table<FileEntry>> = Mutex::new(Table::new(KIND_FILE));
/// `MPI_FILE_NULL`'s error handler.
static NULL_ERRH: Mutex<MPI_Errhandler> = Mutex::new(MPI_ERRORS_RETURN);

fn files() -> MutexGuard<'static, Table<FileEntry>> {
    FILES.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether user error handler `h` is attached to an open file or to MPI_FILE_NULL
/// (MPI_Errhandler_free then keeps it in force there).
pub(crate) fn errhandler_attached(h: MPI_Errhandler) -> bool {
    *NULL_ERRH.lock().unwrap_or_else(|p| p.into_inner()) == h
        || files().iter().any(|(_, e)| e.errh == h)
}

fn errh_of(fh: MPI_File) -> MPI_Errhandler {
    let h = files().get(fh).map(|e| e.errh);
    h.unwrap_or_else(|| *NULL_ERRH.lock().unwrap_or_else(|p| p.into_inner()))
}

/// Calls the error handler of `fh` (of `MPI_FILE_NULL` when `fh` is not a
/// live file) with `code`; returns the code for the caller.
fn raise(fh: MPI_File, code: c_int, message: &str) -> c_int {
    let live = files().get(fh).is_some();
    raise_with(
        errh_of(fh),
        if live { fh } else { MPI_FILE_NULL },
        code,
        message,
    )
}

/// Calls error handler `errh` for file handle `fh` with `code`.
fn raise_with(errh: MPI_Errhandler, fh: MPI_File, code: c_int, message: &str) -> c_int {
    match errh {
        MPI_ERRORS_RETURN => code,
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT => fatal(code, message),
        h => {
            let func = state().errhandlers.get(h).map(|e| e.func);
            match func {
                Some(f) => {
                    let (mut x, mut c) = (fh, code);
                    // SAFETY: a C function the user registered with MPI_File_create_errhandler.
                    unsafe { f(&mut x, &mut c) };
                    // The handler gets the code by reference: what it leaves there is what
                    // the call returns (MPI_SUCCESS if it dealt with the error).
                    c
                }
                None => fatal(code, message),
            }
        }
    }
}

fn fatal(code: c_int, message: &str) -> ! {
    let rank = runtime::engine().map(|e| e.rank()).unwrap_or(0);
    eprintln!("oxmpi: rank {rank}: {message} ({})", code_name(code));
    runtime::abort(
        if code == 0 { 1 } else { code },
        "the file's error handler is MPI_ERRORS_ARE_FATAL",
    )
}

/// Runs a file call's body: catches panics, routes errors to the file's handler.
pub(crate) fn ffi_file(call: &'static str, fh: MPI_File, body: impl FnOnce() -> R<()>) -> c_int {
    match run_named(call, body) {
        Ok(()) => MPI_SUCCESS,
        Err((code, message)) => raise(fh, code, &message),
    }
}

fn file(fh: MPI_File, call: &str) -> R<io::File> {
    if fh == MPI_FILE_NULL {
        return Err(bad(ErrorClass::File, call, "fh", "MPI_FILE_NULL"));
    }
    files().get(fh).map(|e| e.file.clone()).ok_or_else(|| {
        bad(
            ErrorClass::File,
            call,
            "fh",
            format!("{fh:#x} is not a valid file handle (closed, or never opened)"),
        )
    })
}

fn info_pairs(call: &str, info: MPI_Info) -> R<Vec<(String, String)>> {
    if info == MPI_INFO_NULL {
        return Ok(Vec::new());
    }
    crate::conv::with_info(call, info, |v| Ok(v.clone()))
}

fn fill_status(p: *mut MPI_Status, s: &oxmpi_core::Status) {
    if p.is_null() {
        return;
    }
    // SAFETY: non-null; the C caller's OUT status (MPI contract: writable, unaliased).
    let c = unsafe { &mut *p };
    c.MPI_SOURCE = MPI_PROC_NULL;
    c.MPI_TAG = MPI_ANY_TAG;
    let b = s.count_bytes as u64;
    c.MPI_internal[0] = b as u32 as c_int;
    c.MPI_internal[1] = (b >> 32) as u32 as c_int;
    c.MPI_internal[2] = 0;
}

fn offset_arg(call: &str, off: i64) -> R<u64> {
    u64::try_from(off).map_err(|_| {
        bad(
            ErrorClass::Arg,
            call,
            "offset",
            format!("{off} is negative"),
        )
    })
}

// ----- Fortran handles ---------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_c2f(fh: MPI_File) -> c_int {
    c2f_predefined_or(&files(), fh)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_f2c(f: c_int) -> MPI_File {
    f2c_predefined_or(&files(), f)
}
