//! Error handlers (communicators') and error classes, codes and strings.

use std::ffi::{c_char, c_int};
use std::sync::atomic::Ordering;

use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::conv::errors::{bad, class_of, ffi, raise, NO_COMM, R};
use crate::conv::handles::LASTUSEDCODE;
use crate::conv::handles::{state, ErrhandlerEntry};
use crate::conv::{comm, get_str, put_str};
use crate::types::*;

// ----- error handlers -----------------------------------------------------------------

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

fn create_errhandler(
    call: &'static str,
    f: Option<MPI_Comm_errhandler_function>,
    o: &mut MPI_Errhandler,
) -> R<()> {
    let f = f.ok_or_else(|| bad(ErrorClass::Arg, call, "function", "is NULL"))?;
    *o = state()
        .errhandlers
        .insert(ErrhandlerEntry { func: f, refs: 1 });
    Ok(())
}

/// MPI_Comm_create_errhandler (abi.txt `out(errhandler)`: the generated `PMPI_x` checks `errhandler` first).
pub fn comm_create_errhandler(
    call: &'static str,
    f: Option<MPI_Comm_errhandler_function>,
    o: &mut MPI_Errhandler,
) -> R<()> {
    create_errhandler(call, f, o)
}

/// MPI_Errhandler_create (abi.txt `out(errhandler)`: the generated `PMPI_x` checks `errhandler` first).
pub fn errhandler_create(
    call: &'static str,
    f: Option<MPI_Handler_function>,
    o: &mut MPI_Errhandler,
) -> R<()> {
    create_errhandler(call, f, o)
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

fn get_errhandler(call: &'static str, c: MPI_Comm, o: &mut MPI_Errhandler) -> R<()> {
    comm(c, call)?;
    let mut st = state();
    let h = st
        .comm_errhandler
        .get(&c)
        .copied()
        .unwrap_or(MPI_ERRORS_ARE_FATAL);
    // The program must free the handle it gets (MPI_Errhandler_free).
    if let Some(e) = st.errhandlers.get_mut(h) {
        e.refs += 1;
    }
    *o = h;
    Ok(())
}

/// MPI_Comm_get_errhandler (abi.txt `out(errhandler)`: the generated `PMPI_x` checks `errhandler` first).
pub fn comm_get_errhandler(call: &'static str, c: MPI_Comm, o: &mut MPI_Errhandler) -> R<()> {
    get_errhandler(call, c, o)
}

/// MPI_Errhandler_get (abi.txt `out(errhandler)`: the generated `PMPI_x` checks `errhandler` first).
pub fn errhandler_get(call: &'static str, c: MPI_Comm, o: &mut MPI_Errhandler) -> R<()> {
    get_errhandler(call, c, o)
}

/// MPI_Errhandler_free (abi.txt `out(errhandler)`: the generated `PMPI_x` checks `errhandler` first).
pub fn errhandler_free(call: &'static str, h: &mut MPI_Errhandler) -> R<()> {
    if !matches!(
        *h,
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN
    ) {
        errhandler_ok(*h, call)?;
        // Files and windows it is attached to keep it too (looked up before the
        // state lock: their tables are never locked while holding it).
        let on_file_or_win =
            crate::file::errhandler_attached(*h) || crate::win::errhandler_attached(*h);
        let mut st = state();
        let attached = on_file_or_win || st.comm_errhandler.values().any(|v| *v == *h);
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
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_call_errhandler(c: MPI_Comm, errorcode: c_int) -> c_int {
    const CALL: &str = "MPI_Comm_call_errhandler";
    let valid = ffi(CALL, c, || comm(c, CALL).map(|_| ()));
    if valid != MPI_SUCCESS {
        return valid;
    }
    raise(
        c,
        errorcode,
        &format!("{CALL}: error code {errorcode} raised by the program"),
    );
    MPI_SUCCESS
}

// ----- error classes, codes and strings --------------------------------------------------

/// MPI_Error_class (abi.txt `query`: the generated `PMPI_x` stores the answer).
pub fn error_class(call: &'static str, errorcode: c_int) -> R<c_int> {
    class_of(errorcode).ok_or_else(|| {
        bad(
            ErrorClass::Arg,
            call,
            "errorcode",
            format!("{errorcode} is not a valid error code"),
        )
    })
}

/// MPI_Error_string (abi.txt `out(resultlen) nonnull(string)`: the generated `PMPI_x` checks `string`, `resultlen` first).
///
/// # Safety
/// The C caller's arguments of MPI_Error_string, as MPI defines them.
pub unsafe fn error_string(
    call: &'static str,
    errorcode: c_int,
    string: *mut c_char,
    len: &mut c_int,
) -> R<()> {
    // A code that carries its message: the message and the class's name.
    let carried = crate::conv::errors::message_of(errorcode)
        .map(|m| format!("{m} ({})", crate::conv::errors::code_name(errorcode)));
    let user = state().error_strings.get(&errorcode).cloned().or(carried);
    let text = match user {
        Some(s) => s,
        None => {
            let class = class_of(errorcode).ok_or_else(|| {
                bad(
                    ErrorClass::Arg,
                    call,
                    "errorcode",
                    format!("{errorcode} is not a valid error code"),
                )
            })?;
            let name = crate::conv::errors::code_name(class);
            match crate::abi::error_class_from_value(class) {
                Some(c) => format!("{name}: {}", c.description()),
                None => name,
            }
        }
    };
    // SAFETY: MPI_MAX_ERROR_STRING bytes by the C contract.
    *len = unsafe { put_str(string, &text, MPI_MAX_ERROR_STRING as usize) };
    Ok(())
}

/// MPI_Add_error_class (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new class).
pub fn add_error_class(_call: &'static str) -> R<c_int> {
    let mut st = state();
    st.last_code += 1;
    let c = st.last_code;
    st.user_codes.insert(c, c);
    // A new class has the empty string until MPI_Add_error_string.
    st.error_strings.insert(c, String::new());
    LASTUSEDCODE.store(c, Ordering::Relaxed);
    Ok(c)
}

/// MPI_Add_error_code (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new code).
pub fn add_error_code(call: &'static str, errorclass: c_int) -> R<c_int> {
    if class_of(errorclass) != Some(errorclass) {
        return Err(bad(
            ErrorClass::Arg,
            call,
            "errorclass",
            format!("{errorclass} is not an error class"),
        ));
    }
    let mut st = state();
    st.last_code += 1;
    let c = st.last_code;
    st.user_codes.insert(c, errorclass);
    st.error_strings.insert(c, String::new());
    LASTUSEDCODE.store(c, Ordering::Relaxed);
    Ok(c)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Add_error_string(errorcode: c_int, string: *const c_char) -> c_int {
    const CALL: &str = "MPI_Add_error_string";
    ffi(CALL, NO_COMM, || {
        // SAFETY: MPI_Add_error_string's `string` is a NUL-terminated C string (or NULL, rejected).
        let s = unsafe { get_str(CALL, "string", string)? }.to_string();
        let mut st = state();
        if !st.user_codes.contains_key(&errorcode) {
            return Err(bad(
                ErrorClass::Arg,
                CALL,
                "errorcode",
                format!(
                    "{errorcode} is not a code added by MPI_Add_error_class/MPI_Add_error_code"
                ),
            ));
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
            _ => {
                return Err(bad(
                    ErrorClass::Arg,
                    call,
                    arg,
                    format!(
                    "{code} is not an error {what} added by MPI_Add_error_{what} (or was removed)"
                ),
                ))
            }
        }
        if class && st.user_codes.iter().any(|(&k, &c)| c == code && k != code) {
            return Err(bad(
                ErrorClass::Arg,
                call,
                arg,
                format!("error class {code} still has error codes (remove them first)"),
            ));
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
            return Err(bad(
                ErrorClass::Arg,
                CALL,
                "errorcode",
                format!(
                    "{errorcode} is not a code added by MPI_Add_error_class/MPI_Add_error_code"
                ),
            ));
        }
        // Back to the empty string a new class or code has (MPI_Error_string gives "").
        st.error_strings.insert(errorcode, String::new());
        Ok(())
    })
}
