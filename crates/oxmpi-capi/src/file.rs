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
use crate::conv::errors::{bad, code_name, out, run_named, R};
use crate::conv::handles::{c2f_predefined_or, f2c_predefined_or, state, ErrhandlerEntry, Table};
use crate::conv::large::{entry, name, ptr::*, to_usize, Count};
use crate::conv::region::{region_in, region_out};
use crate::conv::{comm, committed, datatype, find_handle, get_str, new_handle, put_str};
use crate::types::*;

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

// ----- open, close, delete, sizes, info, group ------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_open(
    c: MPI_Comm,
    filename: *const c_char,
    amode: c_int,
    info: MPI_Info,
    fh: *mut MPI_File,
) -> c_int {
    const CALL: &str = "MPI_File_open";
    ffi_file(CALL, MPI_FILE_NULL, || {
        let cm = comm(c, CALL)?;
        // SAFETY: `filename` is MPI_File_open's NUL-terminated string (or NULL, rejected).
        let name = unsafe { get_str(CALL, "filename", filename)? };
        // SAFETY: `fh` is MPI_File_open's OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "fh", fh)? };
        let kv = info_pairs(CALL, info)?;
        let f = io::File::open(CALL, &cm, Path::new(strip_prefix(name)), amode, &kv)?;
        let eh = *NULL_ERRH.lock().unwrap_or_else(|p| p.into_inner());
        *o = files().insert(FileEntry { file: f, errh: eh });
        Ok(())
    })
}

/// ROMIO accepts a file-system prefix (`ufs:`, `nfs:`, `lustre:`...) before the
/// path; other names with a colon are paths as given.
fn strip_prefix(name: &str) -> &str {
    const ROMIO_FS: &[&str] = &[
        "ufs", "nfs", "lustre", "gpfs", "pvfs2", "xfs", "panfs", "daos", "quobyte", "testfs",
    ];
    match name.split_once(':') {
        Some((fs, rest)) if ROMIO_FS.contains(&fs) => rest,
        _ => name,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_close(fh: *mut MPI_File) -> c_int {
    const CALL: &str = "MPI_File_close";
    if fh.is_null() {
        return ffi_file(CALL, MPI_FILE_NULL, || {
            Err(bad(ErrorClass::Arg, CALL, "fh", "is NULL"))
        });
    }
    // SAFETY: non-null INOUT handle of MPI_File_close (MPI contract: readable, writable, unaliased).
    let o = unsafe { &mut *fh };
    let h = *o;
    let f = match file(h, CALL) {
        Ok(f) => f,
        Err(e) => return raise(h, e.code, &e.message),
    };
    let r = catch_unwind(AssertUnwindSafe(|| f.close(CALL)))
        .unwrap_or_else(|_| Err(MpiError::intern(CALL, "panic")));
    // The error (if any) goes to the file's handler; the handle goes either way.
    let errh = errh_of(h);
    files().remove(h);
    *o = MPI_FILE_NULL;
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(e) => raise_with(
            errh,
            MPI_FILE_NULL,
            crate::abi::error_class_value(e.class),
            &e.message,
        ),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_delete(filename: *const c_char, info: MPI_Info) -> c_int {
    const CALL: &str = "MPI_File_delete";
    ffi_file(CALL, MPI_FILE_NULL, || {
        // SAFETY: `filename` is MPI_File_delete's NUL-terminated string (or NULL, rejected).
        let name = unsafe { get_str(CALL, "filename", filename)? };
        info_pairs(CALL, info)?;
        Ok(io::delete(CALL, Path::new(strip_prefix(name)))?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_size(fh: MPI_File, size: MPI_Offset) -> c_int {
    const CALL: &str = "MPI_File_set_size";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        let s = u64::try_from(size)
            .map_err(|_| bad(ErrorClass::Arg, CALL, "size", format!("{size} is negative")))?;
        Ok(f.set_size(CALL, s)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_preallocate(fh: MPI_File, size: MPI_Offset) -> c_int {
    const CALL: &str = "MPI_File_preallocate";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        let s = u64::try_from(size)
            .map_err(|_| bad(ErrorClass::Arg, CALL, "size", format!("{size} is negative")))?;
        Ok(f.preallocate(CALL, s)?)
    })
}

/// MPI_File_get_size (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
pub fn file_get_size(call: &'static str, fh: MPI_File) -> R<MPI_Offset> {
    Ok(file(fh, call)?.size(call)? as MPI_Offset)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_group(fh: MPI_File, group: *mut MPI_Group) -> c_int {
    const CALL: &str = "MPI_File_get_group";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        // SAFETY: `group` is the OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "group", group)? };
        *o = state()
            .groups
            .insert(Group::from_world_ranks(f.group().to_vec()));
        Ok(())
    })
}

/// MPI_File_get_amode (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
pub fn file_get_amode(call: &'static str, fh: MPI_File) -> R<c_int> {
    Ok(file(fh, call)?.amode())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_info(fh: MPI_File, info: MPI_Info) -> c_int {
    const CALL: &str = "MPI_File_set_info";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        let kv = info_pairs(CALL, info)?;
        Ok(f.set_info(CALL, &kv)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_info(fh: MPI_File, info_used: *mut MPI_Info) -> c_int {
    const CALL: &str = "MPI_File_get_info";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        // SAFETY: `info_used` is the OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "info_used", info_used)? };
        *o = state().infos.insert(f.info());
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_sync(fh: MPI_File) -> c_int {
    const CALL: &str = "MPI_File_sync";
    ffi_file(CALL, fh, || Ok(file(fh, CALL)?.sync(CALL)?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_atomicity(fh: MPI_File, flag: c_int) -> c_int {
    const CALL: &str = "MPI_File_set_atomicity";
    ffi_file(CALL, fh, || {
        Ok(file(fh, CALL)?.set_atomicity(CALL, flag != 0)?)
    })
}

/// MPI_File_get_atomicity (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
pub fn file_get_atomicity(call: &'static str, fh: MPI_File) -> R<c_int> {
    Ok(file(fh, call)?.atomicity() as c_int)
}

// ----- views ---------------------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_view(
    fh: MPI_File,
    disp: MPI_Offset,
    etype: MPI_Datatype,
    filetype: MPI_Datatype,
    datarep: *const c_char,
    info: MPI_Info,
) -> c_int {
    const CALL: &str = "MPI_File_set_view";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        let d = match disp {
            MPI_DISPLACEMENT_CURRENT => None,
            d if d < 0 => {
                return Err(bad(
                    ErrorClass::Arg,
                    CALL,
                    "disp",
                    format!("{d} is negative"),
                ))
            }
            d => Some(d as u64),
        };
        let et = committed(etype, CALL, "etype")?;
        let ft = committed(filetype, CALL, "filetype")?;
        // SAFETY: `datarep` is a NUL-terminated string (or NULL, rejected).
        let rep = unsafe { get_str(CALL, "datarep", datarep)? };
        let rep = io::datarep(CALL, rep)?;
        let kv = info_pairs(CALL, info)?;
        Ok(f.set_view(CALL, d, &et, &ft, rep, &kv)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_view(
    fh: MPI_File,
    disp: *mut MPI_Offset,
    etype: *mut MPI_Datatype,
    filetype: *mut MPI_Datatype,
    datarep: *mut c_char,
) -> c_int {
    const CALL: &str = "MPI_File_get_view";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        let v = f.view();
        // SAFETY: the OUT arguments of MPI_File_get_view: NULL (rejected) or writable and unaliased.
        let (d, e, t) = unsafe {
            (
                out(CALL, "disp", disp)?,
                out(CALL, "etype", etype)?,
                out(CALL, "filetype", filetype)?,
            )
        };
        if datarep.is_null() {
            return Err(bad(ErrorClass::Arg, CALL, "datarep", "is NULL"));
        }
        *d = v.disp as MPI_Offset;
        *e = new_handle(&v.etype);
        *t = new_handle(&v.filetype);
        // SAFETY: `datarep` holds MPI_MAX_DATAREP_STRING chars (MPI contract).
        unsafe { put_str(datarep, v.datarep.name(), MPI_MAX_DATAREP_STRING as usize) };
        Ok(())
    })
}

unsafe fn type_extent<A: Copy + TryFrom<u64>>(
    call: &'static str,
    fh: MPI_File,
    h: MPI_Datatype,
    extent: *mut A,
) -> c_int {
    ffi_file(call, fh, || {
        let f = file(fh, call)?;
        let dt = datatype(h, call, "datatype")?;
        // SAFETY: `extent` is the OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(call, "extent", extent)? };
        let x = io::type_extent(call, &dt, &f.view().datarep)?;
        *o = A::try_from(x).map_err(|_| {
            bad(
                ErrorClass::ValueTooLarge,
                call,
                "extent",
                format!("{x} does not fit"),
            )
        })?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_type_extent(
    fh: MPI_File,
    h: MPI_Datatype,
    extent: *mut MPI_Aint,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on.
    unsafe { type_extent("MPI_File_get_type_extent", fh, h, extent) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_type_extent_c(
    fh: MPI_File,
    h: MPI_Datatype,
    extent: *mut MPI_Count,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on.
    unsafe { type_extent("MPI_File_get_type_extent_c", fh, h, extent) }
}

/// MPI_File_get_byte_offset (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
pub fn file_get_byte_offset(call: &'static str, fh: MPI_File, offset: MPI_Offset) -> R<MPI_Offset> {
    let f = file(fh, call)?;
    let off = offset_arg(call, offset)?;
    Ok(f.byte_offset(call, off)? as MPI_Offset)
}

// ----- pointers ------------------------------------------------------------------------------

fn whence_arg(call: &str, w: c_int) -> R<Whence> {
    match w {
        MPI_SEEK_SET => Ok(Whence::Set),
        MPI_SEEK_CUR => Ok(Whence::Cur),
        MPI_SEEK_END => Ok(Whence::End),
        _ => Err(bad(
            ErrorClass::Arg,
            call,
            "whence",
            format!("{w} is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END"),
        )),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_seek(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> c_int {
    const CALL: &str = "MPI_File_seek";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        Ok(f.seek(CALL, offset, whence_arg(CALL, whence)?)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_seek_shared(
    fh: MPI_File,
    offset: MPI_Offset,
    whence: c_int,
) -> c_int {
    const CALL: &str = "MPI_File_seek_shared";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        Ok(f.seek_shared(CALL, offset, whence_arg(CALL, whence)?)?)
    })
}

/// MPI_File_get_position (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
pub fn file_get_position(call: &'static str, fh: MPI_File) -> R<MPI_Offset> {
    Ok(file(fh, call)?.position(call)? as MPI_Offset)
}

/// MPI_File_get_position_shared (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
pub fn file_get_position_shared(call: &'static str, fh: MPI_File) -> R<MPI_Offset> {
    Ok(file(fh, call)?.position_shared(call)? as MPI_Offset)
}

// ----- data access ---------------------------------------------------------------------------

/// What the C call hands back.
#[derive(Clone, Copy)]
enum Out {
    Status(*mut MPI_Status),
    Request(*mut MPI_Request),
    Begin,
}

/// Every read/write call: `base` is the `int` form's name.
#[allow(clippy::too_many_arguments)]
unsafe fn access<C: Count>(
    base: &'static str,
    fh: MPI_File,
    offset: Option<MPI_Offset>,
    pos: Pos,
    coll: bool,
    dir: Dir,
    buf: *mut c_void,
    count: C,
    h: MPI_Datatype,
    o: Out,
) -> c_int {
    let call = name::<C>(base);
    ffi_file(call, fh, || {
        let f = file(fh, call)?;
        let n = to_usize(call, "count", count)?;
        let dt = committed(h, call, "datatype")?;
        crate::conv::check_buf(call, "buf", buf, n, &dt)?;
        let pos = match offset {
            Some(off) => Pos::At(offset_arg(call, off)?),
            None => pos,
        };
        if let Out::Request(r) = o {
            if r.is_null() {
                return Err(bad(ErrorClass::Arg, call, "request", "is NULL"));
            }
        }
        match o {
            Out::Status(s) => {
                let mut region = match dir {
                    // SAFETY: the C caller's buffer holds `n` elements of `dt`, read by a write (MPI contract).
                    Dir::Write => unsafe { region_in(buf, n, &dt) },
                    // SAFETY: the C caller's buffer is writable for `n` elements of `dt` by a read (MPI contract).
                    Dir::Read => unsafe { region_out(buf, n, &dt) },
                };
                let st = f.access(call, pos, coll, dir, &mut region)?;
                fill_status(s, &st);
            }
            Out::Request(r) => {
                // A collective access completes in the background, on the file's I/O worker.
                // SAFETY: as above; the buffer stays valid until the request completes (MPI contract).
                let req = unsafe { f.iaccess(call, pos, coll, dir, buf as *mut u8, n, &dt)? };
                let h = crate::conv::new_request(req, crate::conv::errors::NO_COMM, None);
                // SAFETY: non-null (checked above), the OUT request (MPI contract).
                unsafe { *r = h };
            }
            Out::Begin => {
                // SAFETY: as above.
                unsafe { f.split_begin(call, pos, dir, buf as *mut u8, n, &dt)? };
            }
        }
        Ok(())
    })
}

macro_rules! rw {
    ($int:ident, $wide:ident, $base:literal, $buf:ident, off, $pos:expr, $coll:expr, $dir:expr, $out:ident: $oty:ident => $o:expr) => {
        entry!($int, $wide, (fh: MPI_File, offset: MPI_Offset, buf: $buf, count: CNT, datatype: MPI_Datatype, $out: $oty) =>
            access($base, fh, Some(offset), $pos, $coll, $dir, buf as *mut c_void, count, datatype, $o));
    };
    ($int:ident, $wide:ident, $base:literal, $buf:ident, nooff, $pos:expr, $coll:expr, $dir:expr, $out:ident: $oty:ident => $o:expr) => {
        entry!($int, $wide, (fh: MPI_File, buf: $buf, count: CNT, datatype: MPI_Datatype, $out: $oty) =>
            access($base, fh, None, $pos, $coll, $dir, buf as *mut c_void, count, datatype, $o));
    };
}

use Dir::{Read as RD, Write as WR};
const IND: Pos = Pos::Individual;
const SHR: Pos = Pos::Shared;
const ORD: Pos = Pos::Ordered;
const AT: Pos = Pos::At(0);

rw!(PMPI_File_read_at, PMPI_File_read_at_c, "MPI_File_read_at", MVoid, off, AT, false, RD, status: PStatus => Out::Status(status));
rw!(PMPI_File_read_at_all, PMPI_File_read_at_all_c, "MPI_File_read_at_all", MVoid, off, AT, true, RD, status: PStatus => Out::Status(status));
rw!(PMPI_File_write_at, PMPI_File_write_at_c, "MPI_File_write_at", CVoid, off, AT, false, WR, status: PStatus => Out::Status(status));
rw!(PMPI_File_write_at_all, PMPI_File_write_at_all_c, "MPI_File_write_at_all", CVoid, off, AT, true, WR, status: PStatus => Out::Status(status));
rw!(PMPI_File_iread_at, PMPI_File_iread_at_c, "MPI_File_iread_at", MVoid, off, AT, false, RD, request: PReq => Out::Request(request));
rw!(PMPI_File_iwrite_at, PMPI_File_iwrite_at_c, "MPI_File_iwrite_at", CVoid, off, AT, false, WR, request: PReq => Out::Request(request));
rw!(PMPI_File_iread_at_all, PMPI_File_iread_at_all_c, "MPI_File_iread_at_all", MVoid, off, AT, true, RD, request: PReq => Out::Request(request));
rw!(PMPI_File_iwrite_at_all, PMPI_File_iwrite_at_all_c, "MPI_File_iwrite_at_all", CVoid, off, AT, true, WR, request: PReq => Out::Request(request));
rw!(PMPI_File_read, PMPI_File_read_c, "MPI_File_read", MVoid, nooff, IND, false, RD, status: PStatus => Out::Status(status));
rw!(PMPI_File_read_all, PMPI_File_read_all_c, "MPI_File_read_all", MVoid, nooff, IND, true, RD, status: PStatus => Out::Status(status));
rw!(PMPI_File_write, PMPI_File_write_c, "MPI_File_write", CVoid, nooff, IND, false, WR, status: PStatus => Out::Status(status));
rw!(PMPI_File_write_all, PMPI_File_write_all_c, "MPI_File_write_all", CVoid, nooff, IND, true, WR, status: PStatus => Out::Status(status));
rw!(PMPI_File_iread, PMPI_File_iread_c, "MPI_File_iread", MVoid, nooff, IND, false, RD, request: PReq => Out::Request(request));
rw!(PMPI_File_iwrite, PMPI_File_iwrite_c, "MPI_File_iwrite", CVoid, nooff, IND, false, WR, request: PReq => Out::Request(request));
rw!(PMPI_File_iread_all, PMPI_File_iread_all_c, "MPI_File_iread_all", MVoid, nooff, IND, true, RD, request: PReq => Out::Request(request));
rw!(PMPI_File_iwrite_all, PMPI_File_iwrite_all_c, "MPI_File_iwrite_all", CVoid, nooff, IND, true, WR, request: PReq => Out::Request(request));
rw!(PMPI_File_read_shared, PMPI_File_read_shared_c, "MPI_File_read_shared", MVoid, nooff, SHR, false, RD, status: PStatus => Out::Status(status));
rw!(PMPI_File_write_shared, PMPI_File_write_shared_c, "MPI_File_write_shared", CVoid, nooff, SHR, false, WR, status: PStatus => Out::Status(status));
rw!(PMPI_File_iread_shared, PMPI_File_iread_shared_c, "MPI_File_iread_shared", MVoid, nooff, SHR, false, RD, request: PReq => Out::Request(request));
rw!(PMPI_File_iwrite_shared, PMPI_File_iwrite_shared_c, "MPI_File_iwrite_shared", CVoid, nooff, SHR, false, WR, request: PReq => Out::Request(request));
rw!(PMPI_File_read_ordered, PMPI_File_read_ordered_c, "MPI_File_read_ordered", MVoid, nooff, ORD, true, RD, status: PStatus => Out::Status(status));
rw!(PMPI_File_write_ordered, PMPI_File_write_ordered_c, "MPI_File_write_ordered", CVoid, nooff, ORD, true, WR, status: PStatus => Out::Status(status));

// Split collectives: `_begin` starts the access in the background, `_end` waits for it.
macro_rules! begin {
    ($int:ident, $wide:ident, $base:literal, $buf:ident, off, $pos:expr, $dir:expr) => {
        entry!($int, $wide, (fh: MPI_File, offset: MPI_Offset, buf: $buf, count: CNT, datatype: MPI_Datatype) =>
            access($base, fh, Some(offset), $pos, true, $dir, buf as *mut c_void, count, datatype, Out::Begin));
    };
    ($int:ident, $wide:ident, $base:literal, $buf:ident, nooff, $pos:expr, $dir:expr) => {
        entry!($int, $wide, (fh: MPI_File, buf: $buf, count: CNT, datatype: MPI_Datatype) =>
            access($base, fh, None, $pos, true, $dir, buf as *mut c_void, count, datatype, Out::Begin));
    };
}

begin!(
    PMPI_File_read_at_all_begin,
    PMPI_File_read_at_all_begin_c,
    "MPI_File_read_at_all_begin",
    MVoid,
    off,
    AT,
    RD
);
begin!(
    PMPI_File_write_at_all_begin,
    PMPI_File_write_at_all_begin_c,
    "MPI_File_write_at_all_begin",
    CVoid,
    off,
    AT,
    WR
);
begin!(
    PMPI_File_read_all_begin,
    PMPI_File_read_all_begin_c,
    "MPI_File_read_all_begin",
    MVoid,
    nooff,
    IND,
    RD
);
begin!(
    PMPI_File_write_all_begin,
    PMPI_File_write_all_begin_c,
    "MPI_File_write_all_begin",
    CVoid,
    nooff,
    IND,
    WR
);
begin!(
    PMPI_File_read_ordered_begin,
    PMPI_File_read_ordered_begin_c,
    "MPI_File_read_ordered_begin",
    MVoid,
    nooff,
    ORD,
    RD
);
begin!(
    PMPI_File_write_ordered_begin,
    PMPI_File_write_ordered_begin_c,
    "MPI_File_write_ordered_begin",
    CVoid,
    nooff,
    ORD,
    WR
);

fn split_end(
    call: &'static str,
    fh: MPI_File,
    pos: Pos,
    dir: Dir,
    status: *mut MPI_Status,
) -> c_int {
    ffi_file(call, fh, || {
        let f = file(fh, call)?;
        let st = f.split_end(call, pos, dir)?;
        fill_status(status, &st);
        Ok(())
    })
}

macro_rules! end {
    ($f:ident, $base:literal, $buf:ident, $pos:expr, $dir:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $f(fh: MPI_File, _buf: $buf, status: *mut MPI_Status) -> c_int {
            split_end($base, fh, $pos, $dir, status)
        }
    };
}

end!(
    PMPI_File_read_at_all_end,
    "MPI_File_read_at_all_end",
    MVoid,
    AT,
    RD
);
end!(
    PMPI_File_write_at_all_end,
    "MPI_File_write_at_all_end",
    CVoid,
    AT,
    WR
);
end!(
    PMPI_File_read_all_end,
    "MPI_File_read_all_end",
    MVoid,
    IND,
    RD
);
end!(
    PMPI_File_write_all_end,
    "MPI_File_write_all_end",
    CVoid,
    IND,
    WR
);
end!(
    PMPI_File_read_ordered_end,
    "MPI_File_read_ordered_end",
    MVoid,
    ORD,
    RD
);
end!(
    PMPI_File_write_ordered_end,
    "MPI_File_write_ordered_end",
    CVoid,
    ORD,
    WR
);

// ----- error handlers --------------------------------------------------------------------

fn errhandler_ok(h: MPI_Errhandler, call: &str) -> R<()> {
    match h {
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN => Ok(()),
        MPI_ERRHANDLER_NULL => Err(bad(
            ErrorClass::Arg,
            call,
            "errhandler",
            "MPI_ERRHANDLER_NULL",
        )),
        _ => match state().errhandlers.get(h) {
            Some(e) if e.refs > 0 => Ok(()),
            _ => Err(bad(
                ErrorClass::Arg,
                call,
                "errhandler",
                format!("{h:#x} is not a valid error handler (freed, or never created)"),
            )),
        },
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_create_errhandler(
    f: Option<MPI_File_errhandler_function>,
    eh: *mut MPI_Errhandler,
) -> c_int {
    const CALL: &str = "MPI_File_create_errhandler";
    ffi_file(CALL, MPI_FILE_NULL, || {
        let f = f.ok_or_else(|| bad(ErrorClass::Arg, CALL, "file_errhandler_fn", "is NULL"))?;
        // SAFETY: `errhandler` is the OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "errhandler", eh)? };
        *o = state()
            .errhandlers
            .insert(ErrhandlerEntry { func: f, refs: 1 });
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_errhandler(fh: MPI_File, eh: MPI_Errhandler) -> c_int {
    const CALL: &str = "MPI_File_set_errhandler";
    ffi_file(CALL, fh, || {
        errhandler_ok(eh, CALL)?;
        if fh == MPI_FILE_NULL {
            *NULL_ERRH.lock().unwrap_or_else(|p| p.into_inner()) = eh;
            return Ok(());
        }
        let mut t = files();
        let e = t.get_mut(fh).ok_or_else(|| {
            bad(
                ErrorClass::File,
                CALL,
                "file",
                format!("{fh:#x} is not a valid file handle"),
            )
        })?;
        e.errh = eh;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_errhandler(fh: MPI_File, eh: *mut MPI_Errhandler) -> c_int {
    const CALL: &str = "MPI_File_get_errhandler";
    ffi_file(CALL, fh, || {
        if fh != MPI_FILE_NULL {
            file(fh, CALL)?;
        }
        // SAFETY: `errhandler` is the OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "errhandler", eh)? };
        let h = errh_of(fh);
        if let Some(e) = state().errhandlers.get_mut(h) {
            e.refs += 1;
        }
        *o = h;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_call_errhandler(fh: MPI_File, errorcode: c_int) -> c_int {
    const CALL: &str = "MPI_File_call_errhandler";
    if fh != MPI_FILE_NULL && files().get(fh).is_none() {
        return ffi_file(CALL, MPI_FILE_NULL, || {
            Err(bad(
                ErrorClass::File,
                CALL,
                "fh",
                format!("{fh:#x} is not a valid file handle"),
            ))
        });
    }
    raise(
        fh,
        errorcode,
        &format!("{CALL}: error code {errorcode} raised by the program"),
    );
    MPI_SUCCESS
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

// ----- user data representations ---------------------------------------------------------

/// `MPI_Register_datarep`'s callbacks, as the engine calls them.
struct CDatarep {
    read: Option<usize>,
    write: Option<usize>,
    extent: MPI_Datarep_extent_function,
    extra: usize,
    /// The `_c` registration (conversion functions take `MPI_Count`).
    wide: bool,
}

impl CDatarep {
    #[allow(clippy::too_many_arguments)]
    fn convert(
        &self,
        f: usize,
        user: *mut u8,
        dt: &Datatype,
        count: usize,
        position: usize,
        file: *mut u8,
        what: &str,
    ) -> oxmpi_core::Result<()> {
        let h = find_handle(dt);
        let rc = if self.wide {
            let g: MPI_Datarep_conversion_function_c =
                // SAFETY: `f` was registered as an MPI_Datarep_conversion_function_c pointer.
                unsafe { std::mem::transmute::<usize, MPI_Datarep_conversion_function_c>(f) };
            // SAFETY: a C function of the user's with this signature; buffers sized by the engine.
            unsafe {
                g(
                    user.cast(),
                    h,
                    count as MPI_Count,
                    file.cast(),
                    position as MPI_Offset,
                    self.extra as *mut c_void,
                )
            }
        } else {
            let n = c_int::try_from(count).map_err(|_| MpiError::new(ErrorClass::Count, format!("{count} elements are too many for an int conversion function (register with MPI_Register_datarep_c)")))?;
            let g: MPI_Datarep_conversion_function =
                // SAFETY: `f` was registered as an MPI_Datarep_conversion_function pointer.
                unsafe { std::mem::transmute::<usize, MPI_Datarep_conversion_function>(f) };
            // SAFETY: a C function of the user's with this signature; buffers sized by the engine.
            unsafe {
                g(
                    user.cast(),
                    h,
                    n,
                    file.cast(),
                    position as MPI_Offset,
                    self.extra as *mut c_void,
                )
            }
        };
        if rc != MPI_SUCCESS {
            return Err(MpiError::new(
                ErrorClass::Conversion,
                format!("the {what} conversion function returned error code {rc}"),
            ));
        }
        Ok(())
    }
}

impl UserDatarep for CDatarep {
    fn file_extent(&self, dt: &Datatype) -> oxmpi_core::Result<usize> {
        let h = find_handle(dt);
        let mut x: MPI_Aint = 0;
        // SAFETY: the user's MPI_Datarep_extent_function, given a live handle and an out pointer.
        let rc = unsafe { (self.extent)(h, &mut x, self.extra as *mut c_void) };
        if rc != MPI_SUCCESS || x < 0 {
            return Err(MpiError::new(ErrorClass::Conversion, format!("the data representation's extent function returned error code {rc} (extent {x})")));
        }
        Ok(x as usize)
    }
    fn converts_reads(&self) -> bool {
        self.read.is_some()
    }
    fn converts_writes(&self) -> bool {
        self.write.is_some()
    }
    unsafe fn read(
        &self,
        user: *mut u8,
        dt: &Datatype,
        count: usize,
        position: usize,
        file: &[u8],
    ) -> oxmpi_core::Result<()> {
        self.convert(
            self.read.expect("converts_reads"),
            user,
            dt,
            count,
            position,
            file.as_ptr() as *mut u8,
            "read",
        )
    }
    unsafe fn write(
        &self,
        user: *const u8,
        dt: &Datatype,
        count: usize,
        position: usize,
        file: &mut [u8],
    ) -> oxmpi_core::Result<()> {
        self.convert(
            self.write.expect("converts_writes"),
            user as *mut u8,
            dt,
            count,
            position,
            file.as_mut_ptr(),
            "write",
        )
    }
}

unsafe fn register(
    call: &'static str,
    datarep: *const c_char,
    read: Option<usize>,
    write: Option<usize>,
    extent: Option<MPI_Datarep_extent_function>,
    extra: *mut c_void,
    wide: bool,
) -> c_int {
    ffi_file(call, MPI_FILE_NULL, || {
        // SAFETY: `datarep` is a NUL-terminated string (or NULL, rejected).
        let name = unsafe { get_str(call, "datarep", datarep)? };
        let extent =
            extent.ok_or_else(|| bad(ErrorClass::Arg, call, "dtype_file_extent_fn", "is NULL"))?;
        let conv = CDatarep {
            read,
            write,
            extent,
            extra: extra as usize,
            wide,
        };
        Ok(io::register_datarep(call, name, Arc::new(conv))?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Register_datarep(
    datarep: *const c_char,
    read_conversion_fn: Option<MPI_Datarep_conversion_function>,
    write_conversion_fn: Option<MPI_Datarep_conversion_function>,
    dtype_file_extent_fn: Option<MPI_Datarep_extent_function>,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on.
    unsafe {
        register(
            "MPI_Register_datarep",
            datarep,
            read_conversion_fn.map(|f| f as usize),
            write_conversion_fn.map(|f| f as usize),
            dtype_file_extent_fn,
            extra_state,
            false,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Register_datarep_c(
    datarep: *const c_char,
    read_conversion_fn: Option<MPI_Datarep_conversion_function_c>,
    write_conversion_fn: Option<MPI_Datarep_conversion_function_c>,
    dtype_file_extent_fn: Option<MPI_Datarep_extent_function>,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on.
    unsafe {
        register(
            "MPI_Register_datarep_c",
            datarep,
            read_conversion_fn.map(|f| f as usize),
            write_conversion_fn.map(|f| f as usize),
            dtype_file_extent_fn,
            extra_state,
            true,
        )
    }
}
