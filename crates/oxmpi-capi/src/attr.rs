//! Attribute caching: keyvals and attributes of communicators and datatypes
//! (windows': `win.rs`, through `create_keyval`/`free_keyval` here).

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use oxmpi_core::attr::{self, CopyFn, DeleteFn, ObjectKind};
use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::conv::errors::{class_of, ffi, out, NO_COMM, R};
use crate::conv::handles::LASTUSEDCODE;
use crate::conv::{cb_handle, comm, datatype, with_cb_comm, with_cb_type};
use crate::types::*;

// ----- attributes --------------------------------------------------------------------------
//
// Attributes live in the engine's table (`Comm::attrs()`, `Datatype::attrs()`),
// so the engine's dup runs the copy callbacks and MPI_Comm_free /
// MPI_Type_free / MPI_Finalize the delete callbacks. The engine's callbacks
// see (keyval, value); the C callbacks also want the communicator (datatype)
// handle, which the C layer puts in `CB_COMM` (`CB_TYPE`) around every engine
// call that may run callbacks.

/// A user callback's non-success return, as an engine error.
fn callback_error(what: &str, rc: c_int) -> oxmpi_core::MpiError {
    let known = class_of(rc);
    let class = known
        .and_then(crate::abi::error_class_from_value)
        .unwrap_or(ErrorClass::Other);
    let mut e = oxmpi_core::MpiError::new(
        class,
        format!("the attribute's {what} function returned {rc}"),
    );
    // A valid code (predefined or from MPI_Add_error_code/class) goes back to the
    // caller unchanged, so the program sees the class and code its callback chose.
    if known.is_some() {
        e.code = Some(rc);
    }
    e
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
                let f: MPI_Comm_copy_attr_function =
                    // SAFETY: a C function pointer of this type, given by the user.
                    unsafe { std::mem::transmute::<usize, MPI_Comm_copy_attr_function>(f) };
                Some(Arc::new(move |k: i32, v: usize| {
                    let mut outv: *mut c_void = std::ptr::null_mut();
                    let mut flag: c_int = 0;
                    // SAFETY: the user's copy function with the arguments MPI defines.
                    let rc = unsafe {
                        f(
                            cb_handle(kind),
                            k,
                            extra as *mut c_void,
                            v as *mut c_void,
                            &mut outv as *mut *mut c_void as *mut c_void,
                            &mut flag,
                        )
                    };
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
    unsafe {
        create_keyval(
            "MPI_Comm_create_keyval",
            ObjectKind::Comm,
            copy.map_or(0, |f| f as usize),
            delete,
            keyval,
            extra,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Keyval_create(
    copy: Option<MPI_Copy_function>,
    delete: Option<MPI_Delete_function>,
    keyval: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    // SAFETY: `keyval` is the C caller's OUT argument and `copy` a function pointer of the copy type (or 0), as `create_keyval` requires.
    unsafe {
        create_keyval(
            "MPI_Keyval_create",
            ObjectKind::Comm,
            copy.map_or(0, |f| f as usize),
            delete,
            keyval,
            extra,
        )
    }
}

/// # Safety
/// `keyval` is NULL or valid to read and write one `int`, unaliased (the C caller's argument).
pub(crate) unsafe fn free_keyval(
    call: &'static str,
    kind: ObjectKind,
    keyval: *mut c_int,
) -> c_int {
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

fn get_attr(
    call: &'static str,
    c: MPI_Comm,
    keyval: c_int,
    v: &mut *mut c_void,
    f: &mut c_int,
) -> R<()> {
    {
        let cm = comm(c, call)?;
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
    }
}

/// MPI_Comm_get_attr (abi.txt `outaddr(attribute_val) out(flag)`: the generated `PMPI_x`
/// checks them first).
pub fn comm_get_attr(
    call: &'static str,
    c: MPI_Comm,
    keyval: c_int,
    v: &mut *mut c_void,
    f: &mut c_int,
) -> R<()> {
    get_attr(call, c, keyval, v, f)
}

/// MPI_Attr_get (as MPI_Comm_get_attr).
pub fn attr_get(
    call: &'static str,
    c: MPI_Comm,
    keyval: c_int,
    v: &mut *mut c_void,
    f: &mut c_int,
) -> R<()> {
    get_attr(call, c, keyval, v, f)
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
// MPI_Type_free (dtype/create.rs) run the copy and delete callbacks.

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_keyval(
    copy: Option<MPI_Type_copy_attr_function>,
    delete: Option<MPI_Type_delete_attr_function>,
    keyval: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    // SAFETY: `keyval` is the C caller's OUT argument and `copy` a function pointer of the copy type (or 0 / 1), as `create_keyval` requires.
    unsafe {
        create_keyval(
            "MPI_Type_create_keyval",
            ObjectKind::Datatype,
            copy.map_or(0, |f| f as usize),
            delete,
            keyval,
            extra,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_free_keyval(keyval: *mut c_int) -> c_int {
    // SAFETY: `keyval` is the C caller's INOUT argument, as `free_keyval` requires.
    unsafe { free_keyval("MPI_Type_free_keyval", ObjectKind::Datatype, keyval) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_set_attr(
    t: MPI_Datatype,
    keyval: c_int,
    val: *mut c_void,
) -> c_int {
    const CALL: &str = "MPI_Type_set_attr";
    ffi(CALL, NO_COMM, || {
        let dt = datatype(t, CALL, "datatype")?;
        with_cb_type(t, || dt.attrs().set(keyval, val as usize, CALL))?;
        Ok(())
    })
}

/// MPI_Type_get_attr (abi.txt `outaddr(attribute_val) out(flag)`: the generated `PMPI_x`
/// checks them first).
pub fn type_get_attr(
    call: &'static str,
    t: MPI_Datatype,
    keyval: c_int,
    v: &mut *mut c_void,
    f: &mut c_int,
) -> R<()> {
    let dt = datatype(t, call, "datatype")?;
    match dt.attrs().get(keyval, call)? {
        Some(x) => {
            *v = x as *mut c_void;
            *f = 1;
        }
        None => *f = 0,
    }
    Ok(())
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
