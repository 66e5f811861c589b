//! Reduction operations, error handlers and codes, info objects, attributes.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use oxmpi_core::error::ErrorClass;
use oxmpi_core::op::Op;
use oxmpi_core::attr::{self, CopyFn, DeleteFn, ObjectKind};

use crate::abi::*;
use crate::dtype::{committed, datatype, find_handle};
use crate::env::{comm, get_str, put_str};
use crate::errors::{NO_COMM, bad, class_of, ffi, out, raise, R};
use crate::handles::{state, ErrhandlerEntry};
use crate::large::{entry, name, ptr::*, to_usize, Count};
use crate::types::*;

// ----- reduction operations ----------------------------------------------------------

pub fn op(h: MPI_Op, call: &str) -> R<Op> {
    if h == MPI_OP_NULL {
        return Err(bad(ErrorClass::Op, call, "op", "MPI_OP_NULL"));
    }
    if h < 4096 {
        return crate::abi::op_from_handle(h)
            .map(Op::predefined)
            .ok_or_else(|| bad(ErrorClass::Op, call, "op", format!("{h:#x} is not a predefined operation")));
    }
    state().ops.get(h).cloned().ok_or_else(|| bad(ErrorClass::Op, call, "op", format!("{h:#x} is not a valid operation handle (freed, or never created)")))
}

/// The C user function of MPI_Op_create (`int` length) or MPI_Op_create_c
/// (`MPI_Count` length).
#[derive(Clone, Copy)]
enum UserFn {
    Int(MPI_User_function),
    Large(MPI_User_function_c),
    /// A Fortran user function (`fortran.rs`): the datatype is a Fortran INTEGER.
    Fortran(crate::fortran::FortranUserFn),
}

unsafe fn op_create(call: &'static str, f: Option<UserFn>, commute: c_int, o: *mut MPI_Op) -> c_int {
    ffi(call, NO_COMM, || {
        let f = f.ok_or_else(|| bad(ErrorClass::Arg, call, "user_fn", "is NULL"))?;
        // SAFETY: `op` (`o`) is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "op", o)? };
        let func = move |inv: *const u8, inout: *mut u8, n: usize, dt: &oxmpi_core::datatype::Datatype| {
            let mut h = find_handle(dt);
            match f {
                UserFn::Fortran(f) => {
                    // SAFETY: the conversion takes any handle value.
                    let mut fh = unsafe { crate::env::PMPI_Type_c2f(h) };
                    let ext = dt.extent().max(0) as usize;
                    let mut done = 0;
                    while done < n {
                        let k = (n - done).min(c_int::MAX as usize);
                        let mut len = k as c_int;
                        // SAFETY: the user's Fortran function (arguments by reference), called with the engine's buffers as for `Int`.
                        unsafe { f(inv.add(done * ext) as *mut c_void, inout.add(done * ext) as *mut c_void, &mut len, &mut fh) };
                        done += k;
                    }
                }
                UserFn::Large(f) => {
                    let mut len = n as MPI_Count;
                    // SAFETY: the user's function, called with buffers the engine provides.
                    unsafe { f(inv as *mut c_void, inout as *mut c_void, &mut len, &mut h) };
                }
                UserFn::Int(f) => {
                    // An `int` length: more than INT_MAX elements (a `_c`
                    // reduction) go in pieces of at most INT_MAX elements.
                    let ext = dt.extent().max(0) as usize;
                    let mut done = 0;
                    while done < n {
                        let k = (n - done).min(c_int::MAX as usize);
                        let mut len = k as c_int;
                        // SAFETY: the user's function, called with the engine's buffers of `n` elements advanced by `done` whole elements.
                        unsafe { f(inv.add(done * ext) as *mut c_void, inout.add(done * ext) as *mut c_void, &mut len, &mut h) };
                        done += k;
                    }
                }
            }
        };
        *o = state().ops.insert(Op::user(Arc::new(func), commute != 0));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_create(user_fn: Option<MPI_User_function>, commute: c_int, o: *mut MPI_Op) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `op_create` needs what MPI_Op_create demands of them.
    unsafe { op_create("MPI_Op_create", user_fn.map(UserFn::Int), commute, o) }
}

/// MPI_OP_CREATE from Fortran (`fortran.rs`).
///
/// # Safety
/// `o` is NULL or valid to write one `MPI_Op`.
pub unsafe fn op_create_fortran(f: Option<crate::fortran::FortranUserFn>, commute: c_int, o: *mut MPI_Op) -> c_int {
    // SAFETY: as for MPI_Op_create.
    unsafe { op_create("MPI_OP_CREATE", f.map(UserFn::Fortran), commute, o) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_create_c(user_fn: Option<MPI_User_function_c>, commute: c_int, o: *mut MPI_Op) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `op_create` needs what MPI_Op_create_c demands of them.
    unsafe { op_create("MPI_Op_create_c", user_fn.map(UserFn::Large), commute, o) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_free(o: *mut MPI_Op) -> c_int {
    const CALL: &str = "MPI_Op_free";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `op` (`o`) is MPI_Op_free's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "op", o)? };
        if *h < 4096 {
            op(*h, CALL)?;
            return Err(bad(ErrorClass::Op, CALL, "op", "a predefined operation cannot be freed"));
        }
        state().ops.remove(*h).ok_or_else(|| bad(ErrorClass::Op, CALL, "op", format!("{:#x} is not a valid operation handle", *h)))?;
        *h = MPI_OP_NULL;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_commutative(o: MPI_Op, commute: *mut c_int) -> c_int {
    ffi("MPI_Op_commutative", NO_COMM, || {
        let x = op(o, "MPI_Op_commutative")?;
        // SAFETY: `commute` is MPI_Op_commutative's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out("MPI_Op_commutative", "commute", commute)? } = x.is_commutative() as c_int;
        Ok(())
    })
}

unsafe fn reduce_local<C: Count>(inbuf: *const c_void, inoutbuf: *mut c_void, count: C, h: MPI_Datatype, o: MPI_Op) -> c_int {
    let call = name::<C>("MPI_Reduce_local");
    ffi(call, NO_COMM, || {
        let count = to_usize(call, "count", count)?;
        let dt = committed(h, call, "datatype")?;
        let x = op(o, call)?;
        crate::p2p::check_buf(call, "inbuf", inbuf, count, &dt)?;
        crate::p2p::check_buf(call, "inoutbuf", inoutbuf, count, &dt)?;
        x.check(&dt, call)?;
        // SAFETY: both C buffers hold `count` elements of the datatype.
        unsafe { x.apply(inbuf as *const u8, inoutbuf as *mut u8, count, &dt)? };
        Ok(())
    })
}

entry!(PMPI_Reduce_local, PMPI_Reduce_local_c, (inbuf: CVoid, inoutbuf: MVoid, count: CNT, datatype: MPI_Datatype, op: MPI_Op) => reduce_local(inbuf, inoutbuf, count, datatype, op));

// ----- error handlers -----------------------------------------------------------------

fn errhandler_ok(h: MPI_Errhandler, call: &str) -> R<()> {
    match h {
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN => Ok(()),
        MPI_ERRHANDLER_NULL => Err(bad(ErrorClass::Arg, call, "errhandler", "MPI_ERRHANDLER_NULL")),
        _ => match state().errhandlers.get(h) {
            Some(e) if e.refs > 0 => Ok(()),
            _ => Err(bad(ErrorClass::Arg, call, "errhandler", format!("{h:#x} is not a valid error handler (freed, or never created)"))),
        },
    }
}

/// # Safety
/// `eh` is NULL or valid to write one `MPI_Errhandler`, unaliased (the C caller's argument).
unsafe fn create_errhandler(call: &'static str, f: Option<MPI_Comm_errhandler_function>, eh: *mut MPI_Errhandler) -> c_int {
    ffi(call, NO_COMM, || {
        let f = f.ok_or_else(|| bad(ErrorClass::Arg, call, "function", "is NULL"))?;
        // SAFETY: `errhandler` (`eh`) is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "errhandler", eh)? };
        *o = state().errhandlers.insert(ErrhandlerEntry { func: f, refs: 1 });
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_create_errhandler(f: Option<MPI_Comm_errhandler_function>, eh: *mut MPI_Errhandler) -> c_int {
    // SAFETY: `eh` is this C function's MPI_Comm_create_errhandler OUT argument, as `create_errhandler` requires.
    unsafe { create_errhandler("MPI_Comm_create_errhandler", f, eh) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Errhandler_create(f: Option<MPI_Handler_function>, eh: *mut MPI_Errhandler) -> c_int {
    // SAFETY: `eh` is this C function's MPI_Errhandler_create OUT argument, as `create_errhandler` requires.
    unsafe { create_errhandler("MPI_Errhandler_create", f, eh) }
}

fn set_errhandler(call: &'static str, c: MPI_Comm, eh: MPI_Errhandler) -> c_int {
    ffi(call, c, || {
        comm(c, call)?;
        errhandler_ok(eh, call)?;
        state().comm_errhandler.insert(c, eh);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_set_errhandler(c: MPI_Comm, eh: MPI_Errhandler) -> c_int {
    set_errhandler("MPI_Comm_set_errhandler", c, eh)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Errhandler_set(c: MPI_Comm, eh: MPI_Errhandler) -> c_int {
    set_errhandler("MPI_Errhandler_set", c, eh)
}

/// # Safety
/// `eh` is NULL or valid to write one `MPI_Errhandler`, unaliased (the C caller's argument).
unsafe fn get_errhandler(call: &'static str, c: MPI_Comm, eh: *mut MPI_Errhandler) -> c_int {
    ffi(call, c, || {
        comm(c, call)?;
        // SAFETY: `errhandler` (`eh`) is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "errhandler", eh)? };
        let mut st = state();
        let h = st.comm_errhandler.get(&c).copied().unwrap_or(MPI_ERRORS_ARE_FATAL);
        // The program must free the handle it gets (MPI_Errhandler_free).
        if let Some(e) = st.errhandlers.get_mut(h) {
            e.refs += 1;
        }
        *o = h;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_get_errhandler(c: MPI_Comm, eh: *mut MPI_Errhandler) -> c_int {
    // SAFETY: `eh` is this C function's MPI_Comm_get_errhandler OUT argument, as `get_errhandler` requires.
    unsafe { get_errhandler("MPI_Comm_get_errhandler", c, eh) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Errhandler_get(c: MPI_Comm, eh: *mut MPI_Errhandler) -> c_int {
    // SAFETY: `eh` is this C function's MPI_Errhandler_get OUT argument, as `get_errhandler` requires.
    unsafe { get_errhandler("MPI_Errhandler_get", c, eh) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Errhandler_free(eh: *mut MPI_Errhandler) -> c_int {
    const CALL: &str = "MPI_Errhandler_free";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `errhandler` (`eh`) is MPI_Errhandler_free's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "errhandler", eh)? };
        if !matches!(*h, MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN) {
            errhandler_ok(*h, CALL)?;
            // Windows' and files' tables first (their locks are never taken inside state()'s).
            let on_object = crate::win::errhandler_in_use(*h) || crate::file::errhandler_in_use(*h);
            let mut st = state();
            let attached = on_object || st.comm_errhandler.values().any(|v| *v == *h);
            let left = st.errhandlers.get_mut(*h).map(|e| {
                e.refs -= 1;
                e.refs
            });
            // Stays in force on the communicators it is attached to.
            if left == Some(0) && !attached {
                st.errhandlers.remove(*h);
            }
        }
        *h = MPI_ERRHANDLER_NULL;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_call_errhandler(c: MPI_Comm, errorcode: c_int) -> c_int {
    const CALL: &str = "MPI_Comm_call_errhandler";
    let valid = ffi(CALL, c, || comm(c, CALL).map(|_| ()));
    if valid != MPI_SUCCESS {
        return valid;
    }
    raise(c, errorcode, &format!("{CALL}: error code {errorcode} raised by the program"));
    MPI_SUCCESS
}

// ----- error classes, codes and strings --------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Error_class(errorcode: c_int, errorclass: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Error_class";
    ffi(CALL, NO_COMM, || {
        let c = class_of(errorcode).ok_or_else(|| bad(ErrorClass::Arg, CALL, "errorcode", format!("{errorcode} is not a valid error code")))?;
        // SAFETY: `errorclass` is MPI_Error_class's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "errorclass", errorclass)? } = c;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Error_string(errorcode: c_int, string: *mut c_char, resultlen: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Error_string";
    ffi(CALL, NO_COMM, || {
        if string.is_null() {
            return Err(bad(ErrorClass::Arg, CALL, "string", "is NULL"));
        }
        // SAFETY: `resultlen` is MPI_Error_string's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let len = unsafe { out(CALL, "resultlen", resultlen)? };
        // A code that carries its message: the message and the class's name.
        let carried = crate::errors::message_of(errorcode).map(|m| format!("{m} ({})", crate::errors::code_name(errorcode)));
        let user = state().error_strings.get(&errorcode).cloned().or(carried);
        let text = match user {
            Some(s) => s,
            None => {
                let class = class_of(errorcode).ok_or_else(|| bad(ErrorClass::Arg, CALL, "errorcode", format!("{errorcode} is not a valid error code")))?;
                let name = crate::errors::code_name(class);
                match crate::abi::error_class_from_value(class) {
                    Some(c) => format!("{name}: {}", c.description()),
                    None => name,
                }
            }
        };
        // SAFETY: MPI_MAX_ERROR_STRING bytes by the C contract.
        *len = unsafe { put_str(string, &text, MPI_MAX_ERROR_STRING as usize) };
        Ok(())
    })
}

/// The value of the MPI_LASTUSEDCODE attribute.
static LASTUSEDCODE: AtomicI32 = AtomicI32::new(MPI_ERR_LASTCODE);

#[no_mangle]
pub unsafe extern "C" fn PMPI_Add_error_class(errorclass: *mut c_int) -> c_int {
    ffi("MPI_Add_error_class", NO_COMM, || {
        // SAFETY: `errorclass` is MPI_Add_error_class's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out("MPI_Add_error_class", "errorclass", errorclass)? };
        let mut st = state();
        st.last_code += 1;
        let c = st.last_code;
        st.user_codes.insert(c, c);
        // A new class has the empty string until MPI_Add_error_string.
        st.error_strings.insert(c, String::new());
        LASTUSEDCODE.store(c, Ordering::Relaxed);
        *o = c;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Add_error_code(errorclass: c_int, errorcode: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Add_error_code";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `errorcode` is MPI_Add_error_code's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "errorcode", errorcode)? };
        if class_of(errorclass) != Some(errorclass) {
            return Err(bad(ErrorClass::Arg, CALL, "errorclass", format!("{errorclass} is not an error class")));
        }
        let mut st = state();
        st.last_code += 1;
        let c = st.last_code;
        st.user_codes.insert(c, errorclass);
        st.error_strings.insert(c, String::new());
        LASTUSEDCODE.store(c, Ordering::Relaxed);
        *o = c;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Add_error_string(errorcode: c_int, string: *const c_char) -> c_int {
    const CALL: &str = "MPI_Add_error_string";
    ffi(CALL, NO_COMM, || {
        // SAFETY: MPI_Add_error_string's `string` is a NUL-terminated C string (or NULL, rejected).
        let s = unsafe { get_str(CALL, "string", string)? }.to_string();
        let mut st = state();
        if !st.user_codes.contains_key(&errorcode) {
            return Err(bad(ErrorClass::Arg, CALL, "errorcode", format!("{errorcode} is not a code added by MPI_Add_error_class/MPI_Add_error_code")));
        }
        st.error_strings.insert(errorcode, s);
        Ok(())
    })
}

/// MPI_Remove_error_class/_code (MPI-4.1): `class` tells which kind `code` must be.
fn remove_error(call: &'static str, code: c_int, class: bool) -> c_int {
    ffi(call, NO_COMM, || {
        let mut st = state();
        let what = if class { "class" } else { "code" };
        let arg = if class { "errorclass" } else { "errorcode" };
        match st.user_codes.get(&code) {
            Some(&c) if (c == code) == class => {}
            _ => return Err(bad(ErrorClass::Arg, call, arg, format!("{code} is not an error {what} added by MPI_Add_error_{what} (or was removed)"))),
        }
        if class && st.user_codes.iter().any(|(&k, &c)| c == code && k != code) {
            return Err(bad(ErrorClass::Arg, call, arg, format!("error class {code} still has error codes (remove them first)")));
        }
        // MPI-4.1: a code whose string is still set is removed only after
        // MPI_Remove_error_string; MPICH asks the same of a class (mpi4py's suite
        // checks it), and a program written for either works with both rules.
        if st.error_strings.get(&code).is_some_and(|s| !s.is_empty()) {
            return Err(bad(ErrorClass::Arg, call, arg, format!("error {what} {code} still has an error string (call MPI_Remove_error_string first)")));
        }
        st.user_codes.remove(&code);
        st.error_strings.remove(&code);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Remove_error_class(errorclass: c_int) -> c_int {
    remove_error("MPI_Remove_error_class", errorclass, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Remove_error_code(errorcode: c_int) -> c_int {
    remove_error("MPI_Remove_error_code", errorcode, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Remove_error_string(errorcode: c_int) -> c_int {
    const CALL: &str = "MPI_Remove_error_string";
    ffi(CALL, NO_COMM, || {
        let mut st = state();
        if !st.user_codes.contains_key(&errorcode) {
            return Err(bad(ErrorClass::Arg, CALL, "errorcode", format!("{errorcode} is not a code added by MPI_Add_error_class/MPI_Add_error_code")));
        }
        // Back to the empty string a new class or code has (MPI_Error_string gives "").
        st.error_strings.insert(errorcode, String::new());
        Ok(())
    })
}

// ----- info objects -----------------------------------------------------------------------

/// The keys of MPI_INFO_ENV (the standard's reserved names this job can answer).
fn env_info() -> Vec<(String, String)> {
    let mut kv = vec![];
    if let Some(cmd) = std::env::args().next() {
        kv.push(("command".to_string(), cmd));
    }
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if !argv.is_empty() {
        kv.push(("argv".to_string(), argv.join(" ")));
    }
    // The same before MPI_Init and after MPI_Finalize as in between: the
    // launcher's PMI_SIZE when the engine is not running (1 for a singleton).
    let maxprocs = match oxmpi_core::runtime::engine() {
        Ok(e) => e.size().to_string(),
        Err(_) => std::env::var("PMI_SIZE").ok().filter(|s| s.parse::<u32>().is_ok()).unwrap_or_else(|| "1".into()),
    };
    kv.push(("maxprocs".to_string(), maxprocs));
    if let Ok(d) = std::env::current_dir() {
        kv.push(("wdir".to_string(), d.display().to_string()));
    }
    kv.push(("thread_level".to_string(), "MPI_THREAD_SINGLE".to_string()));
    kv
}

pub(crate) fn with_info<T>(call: &str, h: MPI_Info, f: impl FnOnce(&mut Vec<(String, String)>) -> R<T>) -> R<T> {
    if h == MPI_INFO_ENV {
        // Read-only: queries see the job's values; changes are not kept.
        return f(&mut env_info());
    }
    let mut st = state();
    let v = st
        .infos
        .get_mut(h)
        .ok_or_else(|| crate::errors::bad_code(MPI_ERR_INFO, call, "info", format!("{h:#x} is not a valid info object")))?;
    f(v)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_create(info: *mut MPI_Info) -> c_int {
    ffi("MPI_Info_create", NO_COMM, || {
        // SAFETY: `info` is MPI_Info_create's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out("MPI_Info_create", "info", info)? } = state().infos.insert(Vec::new());
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_set(info: MPI_Info, key: *const c_char, value: *const c_char) -> c_int {
    const CALL: &str = "MPI_Info_set";
    ffi(CALL, NO_COMM, || {
        // SAFETY: MPI_Info_set's `key` is a NUL-terminated C string (or NULL, rejected).
        let k = unsafe { get_str(CALL, "key", key)? }.to_string();
        // SAFETY: MPI_Info_set's `value` is a NUL-terminated C string (or NULL, rejected).
        let v = unsafe { get_str(CALL, "value", value)? }.to_string();
        if k.is_empty() || k.len() >= MPI_MAX_INFO_KEY as usize {
            return Err(crate::errors::bad_code(MPI_ERR_INFO_KEY, CALL, "key", "is empty or longer than MPI_MAX_INFO_KEY"));
        }
        with_info(CALL, info, |kv| {
            match kv.iter_mut().find(|(a, _)| *a == k) {
                Some(e) => e.1 = v,
                None => kv.push((k, v)),
            }
            Ok(())
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get_string(info: MPI_Info, key: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Info_get_string";
    ffi(CALL, NO_COMM, || {
        // SAFETY: MPI_Info_get_string's `key` is a NUL-terminated C string (or NULL, rejected).
        let k = unsafe { get_str(CALL, "key", key)? }.to_string();
        // SAFETY: `buflen` is MPI_Info_get_string's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let bl = unsafe { out(CALL, "buflen", buflen)? };
        // SAFETY: `flag` is MPI_Info_get_string's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let f = unsafe { out(CALL, "flag", flag)? };
        let found = with_info(CALL, info, |kv| Ok(kv.iter().find(|(a, _)| *a == k).map(|(_, v)| v.clone())))?;
        match found {
            None => *f = 0,
            Some(v) => {
                *f = 1;
                if *bl > 0 && !value.is_null() {
                    // SAFETY: `*bl` bytes by the C contract.
                    unsafe { put_str(value, &v, *bl as usize) };
                }
                *bl = v.len() as c_int + 1;
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get_nkeys(info: MPI_Info, nkeys: *mut c_int) -> c_int {
    ffi("MPI_Info_get_nkeys", NO_COMM, || {
        // SAFETY: `nkeys` is MPI_Info_get_nkeys's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out("MPI_Info_get_nkeys", "nkeys", nkeys)? };
        *o = with_info("MPI_Info_get_nkeys", info, |kv| Ok(kv.len() as c_int))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get_nthkey(info: MPI_Info, n: c_int, key: *mut c_char) -> c_int {
    const CALL: &str = "MPI_Info_get_nthkey";
    ffi(CALL, NO_COMM, || {
        if key.is_null() {
            return Err(bad(ErrorClass::Arg, CALL, "key", "is NULL"));
        }
        let k = with_info(CALL, info, |kv| {
            usize::try_from(n)
                .ok()
                .and_then(|i| kv.get(i))
                .map(|(k, _)| k.clone())
                .ok_or_else(|| bad(ErrorClass::Arg, CALL, "n", format!("{n} is not in 0..{}", kv.len())))
        })?;
        // SAFETY: MPI_MAX_INFO_KEY bytes by the C contract.
        unsafe { put_str(key, &k, MPI_MAX_INFO_KEY as usize) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_delete(info: MPI_Info, key: *const c_char) -> c_int {
    const CALL: &str = "MPI_Info_delete";
    ffi(CALL, NO_COMM, || {
        // SAFETY: MPI_Info_delete's `key` is a NUL-terminated C string (or NULL, rejected).
        let k = unsafe { get_str(CALL, "key", key)? }.to_string();
        with_info(CALL, info, |kv| {
            let before = kv.len();
            kv.retain(|(a, _)| *a != k);
            if kv.len() == before {
                return Err(crate::errors::bad_code(MPI_ERR_INFO_NOKEY, CALL, "key", format!("`{k}` is not in the info object")));
            }
            Ok(())
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_dup(info: MPI_Info, newinfo: *mut MPI_Info) -> c_int {
    ffi("MPI_Info_dup", NO_COMM, || {
        // SAFETY: `newinfo` is MPI_Info_dup's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out("MPI_Info_dup", "newinfo", newinfo)? };
        let kv = with_info("MPI_Info_dup", info, |kv| Ok(kv.clone()))?;
        *o = state().infos.insert(kv);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_free(info: *mut MPI_Info) -> c_int {
    const CALL: &str = "MPI_Info_free";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `info` is MPI_Info_free's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "info", info)? };
        state().infos.remove(*h).ok_or_else(|| crate::errors::bad_code(MPI_ERR_INFO, CALL, "info", format!("{:#x} is not a valid info object", *h)))?;
        *h = MPI_INFO_NULL;
        Ok(())
    })
}

fn info_key(call: &str, k: &str) -> R<String> {
    let k = k.to_string();
    if k.is_empty() || k.len() >= MPI_MAX_INFO_KEY as usize {
        return Err(crate::errors::bad_code(MPI_ERR_INFO_KEY, call, "key", "is empty or longer than MPI_MAX_INFO_KEY"));
    }
    Ok(k)
}

/// MPI_Info_get (deprecated in MPI-4.0, still everywhere): at most `valuelen`
/// characters of the value and a NUL (the buffer holds `valuelen + 1`).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get(info: MPI_Info, key: *const c_char, valuelen: c_int, value: *mut c_char, flag: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Info_get";
    ffi(CALL, NO_COMM, || {
        // SAFETY: MPI_Info_get's `key` is a NUL-terminated C string (or NULL, rejected).
        let k = info_key(CALL, unsafe { get_str(CALL, "key", key)? })?;
        if valuelen < 0 {
            return Err(crate::errors::bad_code(MPI_ERR_INFO_VALUE, CALL, "valuelen", format!("{valuelen} is negative")));
        }
        // SAFETY: `flag` is MPI_Info_get's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let f = unsafe { out(CALL, "flag", flag)? };
        let found = with_info(CALL, info, |kv| Ok(kv.iter().find(|(a, _)| *a == k).map(|(_, v)| v.clone())))?;
        *f = found.is_some() as c_int;
        if let Some(v) = found {
            if value.is_null() {
                return Err(bad(ErrorClass::Arg, CALL, "value", "is NULL"));
            }
            // SAFETY: the C caller provides `valuelen + 1` writable bytes.
            unsafe { put_str(value, &v, valuelen as usize + 1) };
        }
        Ok(())
    })
}

/// MPI_Info_get_valuelen: the value's length without the NUL.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get_valuelen(info: MPI_Info, key: *const c_char, valuelen: *mut c_int, flag: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Info_get_valuelen";
    ffi(CALL, NO_COMM, || {
        // SAFETY: MPI_Info_get_valuelen's `key` is a NUL-terminated C string (or NULL, rejected).
        let k = info_key(CALL, unsafe { get_str(CALL, "key", key)? })?;
        // SAFETY: `valuelen` is MPI_Info_get_valuelen's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let l = unsafe { out(CALL, "valuelen", valuelen)? };
        // SAFETY: `flag` is MPI_Info_get_valuelen's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let f = unsafe { out(CALL, "flag", flag)? };
        let found = with_info(CALL, info, |kv| Ok(kv.iter().find(|(a, _)| *a == k).map(|(_, v)| v.len())))?;
        *f = found.is_some() as c_int;
        if let Some(n) = found {
            *l = n as c_int;
        }
        Ok(())
    })
}

/// MPI_Info_create_env: a new info object with MPI_INFO_ENV's keys.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_create_env(_argc: c_int, _argv: *mut *mut c_char, info: *mut MPI_Info) -> c_int {
    const CALL: &str = "MPI_Info_create_env";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `info` is MPI_Info_create_env's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "info", info)? };
        *o = state().infos.insert(env_info());
        Ok(())
    })
}

// ----- memory --------------------------------------------------------------------------------

/// MPI_Alloc_mem: memory from the C heap (any size, 16-byte aligned); the
/// info hints are not used.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Alloc_mem(size: MPI_Aint, info: MPI_Info, baseptr: *mut c_void) -> c_int {
    const CALL: &str = "MPI_Alloc_mem";
    ffi(CALL, NO_COMM, || {
        if size < 0 {
            return Err(bad(ErrorClass::Arg, CALL, "size", format!("{size} is negative")));
        }
        if info != MPI_INFO_NULL {
            with_info(CALL, info, |_| Ok(()))?;
        }
        // SAFETY: `baseptr` is MPI_Alloc_mem's OUT argument: the address of a pointer (NULL rejected), writable and unaliased.
        let o = unsafe { out(CALL, "baseptr", baseptr as *mut *mut c_void)? };
        // SAFETY: malloc with a positive size; NULL is checked below.
        let p = unsafe { libc::malloc((size as usize).max(1)) };
        if p.is_null() {
            return Err(crate::errors::bad_code(MPI_ERR_NO_MEM, CALL, "size", format!("{size} bytes could not be allocated")));
        }
        *o = p;
        Ok(())
    })
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

// ----- attributes --------------------------------------------------------------------------
//
// Attributes live in the engine's table (`Comm::attrs()`, `Datatype::attrs()`),
// so the engine's dup runs the copy callbacks and MPI_Comm_free /
// MPI_Type_free / MPI_Finalize the delete callbacks. The engine's callbacks
// see (keyval, value); the C callbacks also want the communicator (datatype)
// handle, which the C layer puts in `CB_COMM` (`CB_TYPE`) around every engine
// call that may run callbacks.

thread_local! {
    /// The C handle of the communicator whose attributes callbacks run on.
    static CB_COMM: std::cell::Cell<MPI_Comm> = const { std::cell::Cell::new(MPI_COMM_NULL) };
    /// The C handle of the datatype whose attributes callbacks run on.
    static CB_TYPE: std::cell::Cell<MPI_Datatype> = const { std::cell::Cell::new(MPI_DATATYPE_NULL) };
}

/// Runs `f` (an engine call that may run attribute callbacks) with `c` as the
/// handle the C callbacks get.
pub fn with_cb_comm<T>(c: MPI_Comm, f: impl FnOnce() -> T) -> T {
    let prev = CB_COMM.with(|x| x.replace(c));
    let r = f();
    CB_COMM.with(|x| x.set(prev));
    r
}

/// Runs `f` (an engine call that may run datatype attribute callbacks) with
/// `t` as the handle the C callbacks get.
pub fn with_cb_type<T>(t: MPI_Datatype, f: impl FnOnce() -> T) -> T {
    let prev = CB_TYPE.with(|x| x.replace(t));
    let r = f();
    CB_TYPE.with(|x| x.set(prev));
    r
}

/// The handle a C callback of a `kind` keyval gets.
fn cb_handle(kind: ObjectKind) -> usize {
    match kind {
        ObjectKind::Comm => CB_COMM.with(|x| x.get()),
        ObjectKind::Datatype => CB_TYPE.with(|x| x.get()),
        ObjectKind::Win => crate::win::cb_handle(),
    }
}

/// A user callback's non-success return, as an engine error.
fn callback_error(what: &str, rc: c_int) -> oxmpi_core::MpiError {
    let class = class_of(rc).and_then(crate::abi::error_class_from_value).unwrap_or(ErrorClass::Other);
    oxmpi_core::MpiError::new(class, format!("the attribute's {what} function returned {rc}"))
}

/// Predefined attribute values, at stable addresses (C gets pointers to them).
static TAG_UB: AtomicI32 = AtomicI32::new(oxmpi_core::TAG_UB);
static HOST: AtomicI32 = AtomicI32::new(MPI_PROC_NULL);
static IO: AtomicI32 = AtomicI32::new(MPI_ANY_SOURCE);
static WTIME_IS_GLOBAL: AtomicI32 = AtomicI32::new(0);
static UNIVERSE_SIZE: AtomicI32 = AtomicI32::new(0);
static APPNUM: AtomicI32 = AtomicI32::new(0);

/// A keyval for `kind` objects. The C callbacks of both kinds have the same
/// signature as Rust sees it (handles are `usize`); they get the handle from
/// `CB_COMM` or `CB_TYPE`.
///
/// # Safety
/// `keyval` is NULL or valid to write one `int`, unaliased; `copy` is 0, 1 or the
/// address of an `MPI_Comm_copy_attr_function` / `MPI_Type_copy_attr_function`
/// (the C caller's arguments).
pub(crate) unsafe fn create_keyval(
    call: &'static str,
    kind: ObjectKind,
    copy: usize,
    delete: Option<MPI_Comm_delete_attr_function>,
    keyval: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    ffi(call, NO_COMM, || {
        // SAFETY: `keyval` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "keyval", keyval)? };
        let extra = extra as usize;
        // MPI_COMM_NULL_COPY_FN / MPI_TYPE_NULL_COPY_FN / MPI_NULL_COPY_FN are
        // 0 (never copied), MPI_COMM_DUP_FN / MPI_TYPE_DUP_FN / MPI_DUP_FN are
        // 1 (copied as is).
        let copy_fn: Option<CopyFn> = match copy {
            0 => None,
            1 => Some(Arc::new(|_k: i32, v: usize| Ok(Some(v)))),
            f => {
                // SAFETY: a C function pointer of this type, given by the user.
                let f: MPI_Comm_copy_attr_function = unsafe { std::mem::transmute::<usize, MPI_Comm_copy_attr_function>(f) };
                Some(Arc::new(move |k: i32, v: usize| {
                    let mut outv: *mut c_void = std::ptr::null_mut();
                    let mut flag: c_int = 0;
                    // SAFETY: the user's copy function with the arguments MPI defines.
                    let rc = unsafe { f(cb_handle(kind), k, extra as *mut c_void, v as *mut c_void, &mut outv as *mut *mut c_void as *mut c_void, &mut flag) };
                    if rc != MPI_SUCCESS {
                        return Err(callback_error("copy", rc));
                    }
                    Ok((flag != 0).then_some(outv as usize))
                }))
            }
        };
        let delete_fn: Option<DeleteFn> = delete.map(|d| {
            let d: DeleteFn = Arc::new(move |k: i32, v: usize| {
                // SAFETY: the user's delete function with the arguments MPI defines.
                let rc = unsafe { d(cb_handle(kind), k, v as *mut c_void, extra as *mut c_void) };
                if rc != MPI_SUCCESS {
                    return Err(callback_error("delete", rc));
                }
                Ok(())
            });
            d
        });
        *o = attr::create_keyval(kind, copy_fn, delete_fn);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_create_keyval(
    copy: Option<MPI_Comm_copy_attr_function>,
    delete: Option<MPI_Comm_delete_attr_function>,
    keyval: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    // SAFETY: `keyval` is the C caller's OUT argument and `copy` a function pointer of the copy type (or 0), as `create_keyval` requires.
    unsafe { create_keyval("MPI_Comm_create_keyval", ObjectKind::Comm, copy.map_or(0, |f| f as usize), delete, keyval, extra) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Keyval_create(copy: Option<MPI_Copy_function>, delete: Option<MPI_Delete_function>, keyval: *mut c_int, extra: *mut c_void) -> c_int {
    // SAFETY: `keyval` is the C caller's OUT argument and `copy` a function pointer of the copy type (or 0), as `create_keyval` requires.
    unsafe { create_keyval("MPI_Keyval_create", ObjectKind::Comm, copy.map_or(0, |f| f as usize), delete, keyval, extra) }
}

/// # Safety
/// `keyval` is NULL or valid to read and write one `int`, unaliased (the C caller's argument).
pub(crate) unsafe fn free_keyval(call: &'static str, kind: ObjectKind, keyval: *mut c_int) -> c_int {
    ffi(call, NO_COMM, || {
        // SAFETY: `keyval` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let k = unsafe { out(call, "keyval", keyval)? };
        attr::free_keyval(kind, *k, call)?;
        *k = MPI_KEYVAL_INVALID;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_free_keyval(keyval: *mut c_int) -> c_int {
    // SAFETY: `keyval` is the C caller's INOUT argument, as `free_keyval` requires.
    unsafe { free_keyval("MPI_Comm_free_keyval", ObjectKind::Comm, keyval) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Keyval_free(keyval: *mut c_int) -> c_int {
    // SAFETY: `keyval` is the C caller's INOUT argument, as `free_keyval` requires.
    unsafe { free_keyval("MPI_Keyval_free", ObjectKind::Comm, keyval) }
}

/// # Safety
/// `flag` is NULL or valid to write one `int`, `val` NULL or valid to write one
/// `void *`, not aliasing each other (the C caller's arguments).
unsafe fn get_attr(call: &'static str, c: MPI_Comm, keyval: c_int, val: *mut c_void, flag: *mut c_int) -> c_int {
    ffi(call, c, || {
        let cm = comm(c, call)?;
        // SAFETY: `flag` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let f = unsafe { out(call, "flag", flag)? };
        // SAFETY: `attribute_val` (`val`) is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let v = unsafe { out(call, "attribute_val", val as *mut *mut c_void)? };
        if attr::is_predefined(keyval) {
            let slot = match keyval {
                MPI_TAG_UB => &TAG_UB,
                MPI_HOST => &HOST,
                MPI_IO => &IO,
                MPI_WTIME_IS_GLOBAL => &WTIME_IS_GLOBAL,
                MPI_UNIVERSE_SIZE => &UNIVERSE_SIZE,
                MPI_APPNUM => &APPNUM,
                _ => &LASTUSEDCODE,
            };
            if keyval != MPI_LASTUSEDCODE {
                if let Some(x) = cm.predefined_attr(keyval) {
                    slot.store(x as i32, Ordering::Relaxed);
                }
            }
            *v = slot.as_ptr() as *mut c_void;
            *f = 1;
            return Ok(());
        }
        match cm.attrs().get(keyval, call)? {
            Some(x) => {
                *v = x as *mut c_void;
                *f = 1;
            }
            None => *f = 0,
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_get_attr(c: MPI_Comm, keyval: c_int, val: *mut c_void, flag: *mut c_int) -> c_int {
    // SAFETY: `val` and `flag` are the C caller's OUT arguments (MPI forbids aliasing them), as `get_attr` requires.
    unsafe { get_attr("MPI_Comm_get_attr", c, keyval, val, flag) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Attr_get(c: MPI_Comm, keyval: c_int, val: *mut c_void, flag: *mut c_int) -> c_int {
    // SAFETY: `val` and `flag` are the C caller's OUT arguments (MPI forbids aliasing them), as `get_attr` requires.
    unsafe { get_attr("MPI_Attr_get", c, keyval, val, flag) }
}

/// Deletes every attribute of a predefined communicator (at MPI_Finalize).
pub fn delete_all_attrs(c: MPI_Comm) {
    if let Ok(cm) = comm(c, "MPI_Finalize") {
        let _ = with_cb_comm(c, || oxmpi_core::comm::free_attributes(&cm));
    }
}

fn set_attr(call: &'static str, c: MPI_Comm, keyval: c_int, val: *mut c_void) -> c_int {
    ffi(call, c, || {
        let cm = comm(c, call)?;
        with_cb_comm(c, || cm.attrs().set(keyval, val as usize, call))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_set_attr(c: MPI_Comm, keyval: c_int, val: *mut c_void) -> c_int {
    set_attr("MPI_Comm_set_attr", c, keyval, val)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Attr_put(c: MPI_Comm, keyval: c_int, val: *mut c_void) -> c_int {
    set_attr("MPI_Attr_put", c, keyval, val)
}

fn delete_attr(call: &'static str, c: MPI_Comm, keyval: c_int) -> c_int {
    ffi(call, c, || {
        let cm = comm(c, call)?;
        with_cb_comm(c, || cm.attrs().delete(keyval, call))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_delete_attr(c: MPI_Comm, keyval: c_int) -> c_int {
    delete_attr("MPI_Comm_delete_attr", c, keyval)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Attr_delete(c: MPI_Comm, keyval: c_int) -> c_int {
    delete_attr("MPI_Attr_delete", c, keyval)
}

// ----- datatype attributes ------------------------------------------------------------------
//
// The same engine table as communicators (`Datatype::attrs()`); errors go to
// MPI_COMM_SELF's handler like every other datatype call. MPI_Type_dup and
// MPI_Type_free (dtype.rs) run the copy and delete callbacks.

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_keyval(
    copy: Option<MPI_Type_copy_attr_function>,
    delete: Option<MPI_Type_delete_attr_function>,
    keyval: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    // SAFETY: `keyval` is the C caller's OUT argument and `copy` a function pointer of the copy type (or 0 / 1), as `create_keyval` requires.
    unsafe { create_keyval("MPI_Type_create_keyval", ObjectKind::Datatype, copy.map_or(0, |f| f as usize), delete, keyval, extra) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_free_keyval(keyval: *mut c_int) -> c_int {
    // SAFETY: `keyval` is the C caller's INOUT argument, as `free_keyval` requires.
    unsafe { free_keyval("MPI_Type_free_keyval", ObjectKind::Datatype, keyval) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_set_attr(t: MPI_Datatype, keyval: c_int, val: *mut c_void) -> c_int {
    const CALL: &str = "MPI_Type_set_attr";
    ffi(CALL, NO_COMM, || {
        let dt = datatype(t, CALL, "datatype")?;
        with_cb_type(t, || dt.attrs().set(keyval, val as usize, CALL))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_attr(t: MPI_Datatype, keyval: c_int, val: *mut c_void, flag: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Type_get_attr";
    ffi(CALL, NO_COMM, || {
        let dt = datatype(t, CALL, "datatype")?;
        // SAFETY: `flag` is MPI_Type_get_attr's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let f = unsafe { out(CALL, "flag", flag)? };
        // SAFETY: `attribute_val` (`val`) is MPI_Type_get_attr's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let v = unsafe { out(CALL, "attribute_val", val as *mut *mut c_void)? };
        match dt.attrs().get(keyval, CALL)? {
            Some(x) => {
                *v = x as *mut c_void;
                *f = 1;
            }
            None => *f = 0,
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_delete_attr(t: MPI_Datatype, keyval: c_int) -> c_int {
    const CALL: &str = "MPI_Type_delete_attr";
    ffi(CALL, NO_COMM, || {
        let dt = datatype(t, CALL, "datatype")?;
        with_cb_type(t, || dt.attrs().delete(keyval, CALL))?;
        Ok(())
    })
}
