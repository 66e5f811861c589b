//! Environment: init/finalize, versions, clocks, the predefined communicators,
//! barrier, Fortran handle conversion.

use std::ffi::{c_char, c_int, c_void};

use oxmpi_core::error::{ErrorClass, MpiError};
use oxmpi_core::runtime::{self, ThreadLevel};

use crate::abi::*;
use crate::conv::errors::{bad, ffi, NO_COMM, R};
use crate::conv::handles::{c2f_predefined_or, f2c_predefined_or, state};
use crate::conv::{comm, get_str, put_str, with_info};
use crate::types::*;

fn init(call: &'static str, required: ThreadLevel) -> R<ThreadLevel> {
    let provided = runtime::init(required)
        .map_err(|e| MpiError::new(e.class, e.message.replace("MPI_Init:", &format!("{call}:"))))?;
    Ok(provided)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
    ffi("MPI_Init", MPI_COMM_WORLD, || {
        init("MPI_Init", ThreadLevel::Single).map(|_| ())
    })
}

/// MPI_Init_thread (abi.txt `out(provided) route(MPI_COMM_WORLD)`: the generated `PMPI_x`
/// checks `provided` first).
///
/// # Safety
/// None beyond the C caller's: `argc` and `argv` are not read.
pub unsafe fn init_thread(
    call: &'static str,
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    required: c_int,
    p: &mut c_int,
) -> R<()> {
    {
        let level = crate::abi::thread_level_from_value(required).ok_or_else(|| {
            bad(
                ErrorClass::Arg,
                call,
                "required",
                format!("{required} is not an MPI_THREAD_* level"),
            )
        })?;
        *p = crate::abi::thread_level_value(init(call, level)?);
        Ok(())
    }
}

/// The answer of MPI_Initialized (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn initialized(_call: &str) -> R<c_int> {
    Ok(runtime::is_initialized() as c_int)
}

/// The answer of MPI_Finalized (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn finalized(_call: &str) -> R<c_int> {
    Ok(runtime::is_finalized() as c_int)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Finalize() -> c_int {
    ffi("MPI_Finalize", MPI_COMM_WORLD, || {
        runtime::engine()?;
        // MPI_COMM_SELF's attributes are deleted first, as the standard asks.
        crate::attr::delete_all_attrs(MPI_COMM_SELF);
        crate::attr::delete_all_attrs(MPI_COMM_WORLD);
        if oxmpi_core::diag::checking() {
            report_leaks();
        }
        runtime::finalize()?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Abort(comm: MPI_Comm, errorcode: c_int) -> c_int {
    let _ = comm;
    runtime::abort(errorcode, "")
}

/// The answer of MPI_Query_thread (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn query_thread(_call: &str) -> R<c_int> {
    let e = runtime::engine()?;
    Ok(crate::abi::thread_level_value(e.thread_level()))
}

/// The answer of MPI_Is_thread_main (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn is_thread_main(_call: &str) -> R<c_int> {
    let e = runtime::engine()?;
    Ok(e.is_main_thread() as c_int)
}

/// MPI_Pcontrol(level, ...): oxmpi has no profiling levels of its own, so, as
/// in MPICH, the call does nothing and returns MPI_SUCCESS; a profiling tool
/// defines its own MPI_Pcontrol and reaches this one as PMPI_Pcontrol. C
/// declares it variadic; the variadic arguments are never read (abi.txt,
/// `varfn`).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Pcontrol(level: c_int) -> c_int {
    let _ = level;
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Wtime() -> f64 {
    runtime::wtime()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Wtick() -> f64 {
    runtime::wtick()
}

/// MPI_Get_processor_name (abi.txt `nonnull(name) out(resultlen)`: the generated `PMPI_x`
/// checks them first).
///
/// # Safety
/// `name` holds MPI_MAX_PROCESSOR_NAME bytes (MPI contract).
pub unsafe fn get_processor_name(_call: &'static str, name: *mut c_char, len: &mut c_int) -> R<()> {
    let e = runtime::engine()?;
    // SAFETY: MPI_MAX_PROCESSOR_NAME bytes by the C contract; non-NULL (checked by the generated `nonnull(name)`).
    *len = unsafe { put_str(name, e.processor_name(), MPI_MAX_PROCESSOR_NAME as usize) };
    Ok(())
}

/// MPI_Get_version (abi.txt `query`: the generated `PMPI_x` checks and stores the OUTs).
pub fn get_version(_call: &str) -> R<(c_int, c_int)> {
    Ok(runtime::VERSION)
}

/// MPI_Get_library_version (abi.txt `out(resultlen) nonnull(version)`: the generated `PMPI_x` checks `version`, `resultlen` first).
///
/// # Safety
/// The C caller's arguments of MPI_Get_library_version, as MPI defines them.
pub unsafe fn get_library_version(
    _call: &'static str,
    version: *mut c_char,
    len: &mut c_int,
) -> R<()> {
    let s = format!(
        "{} (C ABI: MPI-5.0 standard ABI {}.{})",
        runtime::library_version(),
        MPI_ABI_VERSION,
        MPI_ABI_SUBVERSION
    );
    // SAFETY: MPI_MAX_LIBRARY_VERSION_STRING bytes by the C contract.
    *len = unsafe { put_str(version, &s, MPI_MAX_LIBRARY_VERSION_STRING as usize) };
    Ok(())
}

/// MPI_Abi_get_version (abi.txt `query`: the generated `PMPI_x` checks and stores the OUTs).
pub fn abi_get_version(_call: &str) -> R<(c_int, c_int)> {
    Ok((MPI_ABI_VERSION, MPI_ABI_SUBVERSION))
}

/// MPI_Abi_get_info (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
pub fn abi_get_info(_call: &'static str) -> R<MPI_Info> {
    let keys = vec![
        (
            "mpi_aint_size".to_string(),
            std::mem::size_of::<MPI_Aint>().to_string(),
        ),
        ("mpi_count_size".to_string(), "8".to_string()),
        ("mpi_offset_size".to_string(), "8".to_string()),
    ];
    Ok(state().infos.insert(keys))
}

/// The answer of MPI_Comm_size (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn comm_size(call: &str, c: MPI_Comm) -> R<c_int> {
    Ok(comm(c, call)?.size())
}

/// The answer of MPI_Comm_rank (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn comm_rank(call: &str, c: MPI_Comm) -> R<c_int> {
    Ok(comm(c, call)?.rank())
}

/// MPI_Comm_compare (abi.txt `query`: the generated `PMPI_x` stores the answer).
pub fn comm_compare(call: &'static str, c1: MPI_Comm, c2: MPI_Comm) -> R<c_int> {
    let a = comm(c1, call).map_err(|_| {
        bad(
            ErrorClass::Comm,
            call,
            "comm1",
            format!("{c1:#x} is not a valid communicator"),
        )
    })?;
    let b = comm(c2, call).map_err(|_| {
        bad(
            ErrorClass::Comm,
            call,
            "comm2",
            format!("{c2:#x} is not a valid communicator"),
        )
    })?;
    Ok(crate::abi::comparison_value(
        oxmpi_core::comm::create::compare(&a, &b),
    ))
}

/// The answer of MPI_Comm_test_inter (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn comm_test_inter(call: &str, c: MPI_Comm) -> R<c_int> {
    Ok(comm(c, call)?.is_inter() as c_int)
}

/// MPI_Comm_get_name (abi.txt `out(resultlen) nonnull(comm_name)`: the generated `PMPI_x` checks `comm_name`, `resultlen` first).
///
/// # Safety
/// The C caller's arguments of MPI_Comm_get_name, as MPI defines them.
pub unsafe fn comm_get_name(
    call: &'static str,
    c: MPI_Comm,
    name: *mut c_char,
    len: &mut c_int,
) -> R<()> {
    if c == MPI_COMM_NULL {
        // MPI-4.1: the null handle has a name too.
        // SAFETY: MPI_MAX_OBJECT_NAME bytes by the C contract.
        *len = unsafe { put_str(name, "MPI_COMM_NULL", MPI_MAX_OBJECT_NAME as usize) };
        return Ok(());
    }
    let cm = comm(c, call)?;
    let mut n = cm.name();
    if n.is_empty() {
        n = match c {
            MPI_COMM_WORLD => "MPI_COMM_WORLD",
            MPI_COMM_SELF => "MPI_COMM_SELF",
            _ => "",
        }
        .to_string();
    }
    // SAFETY: MPI_MAX_OBJECT_NAME bytes by the C contract.
    *len = unsafe { put_str(name, &n, MPI_MAX_OBJECT_NAME as usize) };
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_set_name(c: MPI_Comm, name: *const c_char) -> c_int {
    const CALL: &str = "MPI_Comm_set_name";
    ffi(CALL, c, || {
        let cm = comm(c, CALL)?;
        // SAFETY: C string by contract.
        let s = unsafe { get_str(CALL, "comm_name", name)? };
        let s: String = s.chars().take(MPI_MAX_OBJECT_NAME as usize - 1).collect();
        cm.set_name(&s);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Barrier(c: MPI_Comm) -> c_int {
    // The lean entry (a success skips `ffi`'s frame and the error-routing
    // thread-local; an error or panic is routed to `c` as `ffi` routes it), and
    // MPI_COMM_WORLD borrowed, without its reference count taken and dropped:
    // where ranks outnumber cores every rank's entry runs one after another on
    // a core (bench/PROFILE.md over36).
    crate::conv::errors::hot_body("MPI_Barrier", c, || {
        let cm = crate::conv::comm_cow(c, "MPI_Barrier")?;
        oxmpi_core::coll::barrier::barrier(&cm)?;
        Ok(())
    })
}

/// MPI_Ibarrier (abi.txt `out(request)`: the generated `PMPI_x` checks `request` first).
pub fn ibarrier(_call: &'static str, c: MPI_Comm, o: &mut MPI_Request) -> R<()> {
    let cm = comm(c, "MPI_Ibarrier")?;
    let r = oxmpi_core::coll::barrier::ibarrier(&cm)?;
    *o = crate::conv::new_request(r, c, None);
    Ok(())
}

// ----- Fortran handles ------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_c2f(c: MPI_Comm) -> c_int {
    c2f_predefined_or(&state().comms, c)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_f2c(f: c_int) -> MPI_Comm {
    f2c_predefined_or(&state().comms, f)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_c2f(h: MPI_Datatype) -> c_int {
    c2f_predefined_or(&state().datatypes, h)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_f2c(f: c_int) -> MPI_Datatype {
    f2c_predefined_or(&state().datatypes, f)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_c2f(h: MPI_Request) -> c_int {
    if let Some(f) = crate::conv::handles::direct_c2f(h) {
        return f;
    }
    c2f_predefined_or(&state().requests, h)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_f2c(f: c_int) -> MPI_Request {
    if let Some(h) = crate::conv::handles::direct_f2c(f) {
        return h;
    }
    f2c_predefined_or(&state().requests, f)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_c2f(h: MPI_Op) -> c_int {
    c2f_predefined_or(&state().ops, h)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_f2c(f: c_int) -> MPI_Op {
    f2c_predefined_or(&state().ops, f)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Errhandler_c2f(h: MPI_Errhandler) -> c_int {
    c2f_predefined_or(&state().errhandlers, h)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Errhandler_f2c(f: c_int) -> MPI_Errhandler {
    f2c_predefined_or(&state().errhandlers, f)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_c2f(h: MPI_Info) -> c_int {
    c2f_predefined_or(&state().infos, h)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_f2c(f: c_int) -> MPI_Info {
    f2c_predefined_or(&state().infos, f)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Message_c2f(h: MPI_Message) -> c_int {
    c2f_predefined_or(&state().messages, h)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Message_f2c(f: c_int) -> MPI_Message {
    f2c_predefined_or(&state().messages, f)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_c2f(c: *const MPI_Status, f: *mut c_int) -> c_int {
    ffi("MPI_Status_c2f", NO_COMM, || {
        if c.is_null() || f.is_null() {
            return Err(bad(ErrorClass::Arg, "MPI_Status_c2f", "status", "is NULL"));
        }
        // SAFETY: MPI_Status is MPI_F_STATUS_SIZE ints in both forms.
        unsafe { std::ptr::copy_nonoverlapping(c as *const c_int, f, MPI_F_STATUS_SIZE as usize) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_f2c(f: *const c_int, c: *mut MPI_Status) -> c_int {
    ffi("MPI_Status_f2c", NO_COMM, || {
        if c.is_null() || f.is_null() {
            return Err(bad(ErrorClass::Arg, "MPI_Status_f2c", "status", "is NULL"));
        }
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(f, c as *mut c_int, MPI_F_STATUS_SIZE as usize) };
        Ok(())
    })
}

#[allow(dead_code)]
fn _unused(_: *mut c_void) {}

/// Checking mode, at MPI_Finalize: the objects the program made and never
/// freed (requests, communicators, datatypes, groups, operations, infos), one
/// line each with where it was made (`diag::handle_origin`).
fn report_leaks() {
    let rank = runtime::engine().map(|e| e.rank()).unwrap_or(0);
    let st = crate::conv::handles::state();
    // One line per object, each naming the rank (ranks' lines may interleave).
    let mut lines: Vec<String> = Vec::new();
    let mut counts: Vec<String> = Vec::new();
    let mut add = |what: &str, items: Vec<(usize, String)>| {
        if items.is_empty() {
            return;
        }
        counts.push(format!(
            "{} {what}{}",
            items.len(),
            if items.len() == 1 { "" } else { "s" }
        ));
        for (h, text) in items.iter().take(8) {
            let at = oxmpi_core::diag::handle_origin(*h)
                .map_or_else(String::new, |o| format!(", made by {o}"));
            lines.push(format!(
                "oxmpi: rank {rank}: never freed: {what} {text}{at}"
            ));
        }
        if items.len() > 8 {
            lines.push(format!(
                "oxmpi: rank {rank}: never freed: {} more {what}s",
                items.len() - 8
            ));
        }
    };
    add(
        "request",
        st.requests
            .iter()
            .map(|(h, _)| (h, format!("{h:#x}")))
            .collect(),
    );
    add(
        "communicator",
        st.comms
            .iter()
            .map(|(h, c)| {
                let name = c.name();
                (
                    h,
                    format!(
                        "{h:#x} (size {}{})",
                        c.size(),
                        if name.is_empty() {
                            String::new()
                        } else {
                            format!(", \"{name}\"")
                        }
                    ),
                )
            })
            .collect(),
    );
    add(
        "datatype",
        st.datatypes
            .iter()
            .map(|(h, d)| {
                let name = d.name();
                (
                    h,
                    format!(
                        "{h:#x} ({})",
                        if name.is_empty() {
                            d.combiner().name().to_string()
                        } else {
                            name
                        }
                    ),
                )
            })
            .collect(),
    );
    add(
        "group",
        st.groups
            .iter()
            .map(|(h, _)| (h, format!("{h:#x}")))
            .collect(),
    );
    add(
        "operation",
        st.ops.iter().map(|(h, _)| (h, format!("{h:#x}"))).collect(),
    );
    add(
        "info",
        st.infos
            .iter()
            .map(|(h, _)| (h, format!("{h:#x}")))
            .collect(),
    );
    drop(st);
    if !lines.is_empty() {
        let text = format!(
            "oxmpi: rank {rank}: MPI_Finalize (checking mode): objects never freed: {}\n{}\n",
            counts.join(", "),
            lines.join("\n")
        );
        use std::io::Write;
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
}

// ----- memory --------------------------------------------------------------------------------

/// MPI_Alloc_mem: memory from the C heap (any size, 16-byte aligned); the
/// info hints are not used.
/// MPI_Alloc_mem (abi.txt `outaddr(baseptr)`: the generated `PMPI_x` checks `baseptr` first).
pub fn alloc_mem(call: &'static str, size: MPI_Aint, info: MPI_Info, o: &mut *mut c_void) -> R<()> {
    {
        if size < 0 {
            return Err(bad(
                ErrorClass::Arg,
                call,
                "size",
                format!("{size} is negative"),
            ));
        }
        if info != MPI_INFO_NULL {
            with_info(call, info, |_| Ok(()))?;
        }
        // SAFETY: malloc with a positive size; NULL is checked below.
        let p = unsafe { libc::malloc((size as usize).max(1)) };
        if p.is_null() {
            return Err(crate::conv::errors::bad_code(
                MPI_ERR_NO_MEM,
                call,
                "size",
                format!("{size} bytes could not be allocated"),
            ));
        }
        *o = p;
        Ok(())
    }
}

/// MPI_Free_mem: gives back memory from MPI_Alloc_mem.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Free_mem(base: *mut c_void) -> c_int {
    ffi("MPI_Free_mem", NO_COMM, || {
        // SAFETY: `base` came from MPI_Alloc_mem (malloc) and is freed once (MPI contract); free(NULL) is a no-op.
        unsafe { libc::free(base) };
        Ok(())
    })
}
