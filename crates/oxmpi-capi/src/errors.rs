//! The one wrapper every `PMPI_x` body runs in, and error handlers.
//!
//! [`ffi`] catches panics, turns the body's error into an MPI error code and
//! hands it to the error handler of the communicator the error belongs to: the
//! call's communicator, the request's communicator for completion calls. Calls
//! tied to no communicator (and calls given an invalid one) route to [`NO_COMM`]:
//! MPI-4.0 raises those on `MPI_COMM_SELF`, MPI-1..3 (and MPICH) on
//! `MPI_COMM_WORLD`; oxmpi uses `MPI_COMM_SELF`'s handler when the program set
//! it to something other than `MPI_ERRORS_ARE_FATAL`, else `MPI_COMM_WORLD`'s,
//! so programs written to either rule work. `MPI_ERRORS_ARE_FATAL` (the default) and
//! `MPI_ERRORS_ABORT` print `oxmpi: rank R: <message> (MPI_ERR_X)` and end the
//! job; `MPI_ERRORS_RETURN` returns the code; user handlers are called.

use std::cell::Cell;
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use oxmpi_core::error::{ErrorClass, MpiError};
use oxmpi_core::runtime;

use crate::abi::*;
use crate::handles::state;
use crate::types::*;

/// An error on its way to the error handler: an MPI error code and a message.
#[derive(Debug)]
pub struct Fail {
    pub code: c_int,
    pub message: String,
}

impl From<MpiError> for Fail {
    fn from(e: MpiError) -> Fail {
        Fail { code: e.class.code(), message: e.message }
    }
}

pub type R<T> = Result<T, Fail>;

/// An error about argument `arg` of `call`.
pub fn bad(class: ErrorClass, call: &str, arg: &str, why: impl std::fmt::Display) -> Fail {
    MpiError::arg(class, call, arg, why).into()
}

/// The routing target of calls tied to no communicator (see the module docs).
pub const NO_COMM: MPI_Comm = MPI_COMM_NULL;

thread_local! {
    /// The communicator whose error handler hears about the current call's error.
    static ERR_COMM: Cell<MPI_Comm> = const { Cell::new(NO_COMM) };
}

/// Routes the current call's errors to `comm`'s error handler.
pub fn route_to(comm: MPI_Comm) {
    ERR_COMM.with(|c| c.set(comm));
}

/// Runs a function body: catches panics, routes errors. `comm` is the
/// communicator the call is about ([`NO_COMM`] when none).
pub fn ffi(call: &'static str, comm: MPI_Comm, body: impl FnOnce() -> R<()>) -> c_int {
    if oxmpi_core::diag::tracing() {
        return traced(call, comm, body);
    }
    ffi_untraced(call, comm, body)
}

/// `mpiexec --trace`: the call as one event of the timeline.
#[cold]
fn traced(call: &'static str, comm: MPI_Comm, body: impl FnOnce() -> R<()>) -> c_int {
    if !oxmpi_core::diag::trace_wants(call) {
        return ffi_untraced(call, comm, body);
    }
    let t0 = oxmpi_core::diag::trace_now();
    let rc = ffi_untraced(call, comm, body);
    oxmpi_core::diag::trace_call(call, t0, oxmpi_core::diag::trace_now());
    rc
}

fn ffi_untraced(call: &'static str, comm: MPI_Comm, body: impl FnOnce() -> R<()>) -> c_int {
    route_to(comm);
    let res = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(p) => {
            let why = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            Err(MpiError::intern(call, why).into())
        }
    };
    match res {
        Ok(()) => MPI_SUCCESS,
        Err(f) => {
            // A `_c` form shares its body (and the engine's messages) with
            // the `int` form: name the call the program made.
            let message = match call.strip_suffix("_c").and_then(|base| f.message.strip_prefix(base)).filter(|rest| rest.starts_with(':')) {
                Some(rest) => format!("{call}{rest}"),
                None => f.message,
            };
            let message = if message.starts_with(call) { message } else { format!("{call}: {message}") };
            raise(ERR_COMM.with(|c| c.get()), f.code, &message)
        }
    }
}

/// The name of an error code's class, e.g. `MPI_ERR_RANK`.
pub fn code_name(code: c_int) -> String {
    let class = class_of(code).unwrap_or(MPI_ERR_UNKNOWN);
    let name = ERROR_CLASS_NAMES.iter().find(|(c, _)| *c == class).map(|(_, n)| n.to_string());
    match (name, class == code) {
        (Some(n), true) => n,
        (Some(n), false) => format!("error code {code} of class {n}"),
        (None, _) => format!("user error class {class}"),
    }
}

/// The class of an error code, if it is a valid code.
pub fn class_of(code: c_int) -> Option<c_int> {
    if ERROR_CLASS_NAMES.iter().any(|(c, _)| *c == code) {
        return Some(code);
    }
    state().user_codes.get(&code).copied()
}

fn fatal(code: c_int, message: &str) -> ! {
    let rank = runtime::engine().map(|e| e.rank()).unwrap_or(0);
    eprintln!("oxmpi: rank {rank}: {message} ({})", code_name(code));
    runtime::abort(if code == 0 { 1 } else { code }, "the error handler is MPI_ERRORS_ARE_FATAL")
}

/// Calls `comm`'s error handler with `code`; returns the code to give the caller.
pub fn raise(mut comm: MPI_Comm, code: c_int, message: &str) -> c_int {
    let errh = {
        let st = state();
        let live = comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF || st.comms.get(comm).is_some();
        if !live {
            let self_set = st.comm_errhandler.get(&MPI_COMM_SELF).is_some_and(|h| *h != MPI_ERRORS_ARE_FATAL);
            comm = if self_set { MPI_COMM_SELF } else { MPI_COMM_WORLD };
        }
        st.comm_errhandler.get(&comm).copied().unwrap_or(MPI_ERRORS_ARE_FATAL)
    };
    match errh {
        MPI_ERRORS_RETURN => code,
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT => fatal(code, message),
        h => {
            let func = state().errhandlers.get(h).map(|e| e.func);
            match func {
                Some(f) => {
                    let (mut c, mut e) = (comm, code);
                    // SAFETY: a C function the user registered with this signature.
                    unsafe { f(&mut c, &mut e) };
                    code
                }
                None => fatal(code, message),
            }
        }
    }
}

/// A required output (or input-output) pointer argument: `MPI_ERR_ARG` naming
/// `arg` when NULL, else a reference to the pointee.
///
/// # Safety
/// `p` is NULL or points to an aligned `T`, valid for reads and writes and
/// accessed through nothing else for `'a`. For the C caller's pointer
/// arguments the MPI contract gives this: an OUT/INOUT argument points to
/// storage of its type, and must not alias any other argument of the call.
pub unsafe fn out<'a, T>(call: &str, arg: &str, p: *mut T) -> R<&'a mut T> {
    if p.is_null() {
        return Err(bad(ErrorClass::Arg, call, arg, "is NULL"));
    }
    // SAFETY: `p` is non-null (checked above), and by this function's contract
    // aligned, valid for reads and writes, and unaliased for `'a`.
    Ok(unsafe { &mut *p })
}

/// An array argument of `n` elements: `MPI_ERR_ARG` naming `arg` when `p` is
/// NULL and `n > 0`; empty when `n == 0` (then `p` is not looked at).
///
/// # Safety
/// If `n > 0`, `p` is NULL or points to `n` initialized, aligned `T`s that stay
/// valid and unwritten for `'a` (for the C caller's IN arrays MPI gives this
/// with `n` the length the standard defines for the argument).
pub unsafe fn array<'a, T>(call: &str, arg: &str, p: *const T, n: usize) -> R<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(bad(ErrorClass::Arg, call, arg, "is NULL"));
    }
    // SAFETY: `p` is non-null and `n > 0` (checked above); by this function's
    // contract it points to `n` valid `T`s, unwritten for `'a`.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// An output array argument of `n` elements; as [`array`].
///
/// # Safety
/// If `n > 0`, `p` is NULL or points to `n` initialized, aligned `T`s, valid
/// for reads and writes and accessed through nothing else for `'a` (MPI forbids
/// aliasing an OUT argument with any other argument).
pub unsafe fn array_mut<'a, T>(call: &str, arg: &str, p: *mut T, n: usize) -> R<&'a mut [T]> {
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(bad(ErrorClass::Arg, call, arg, "is NULL"));
    }
    // SAFETY: `p` is non-null and `n > 0` (checked above); by this function's
    // contract it points to `n` `T`s we may read and write, unaliased for `'a`.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// An error with a class the engine's `ErrorClass` does not list (info, ...).
pub fn bad_code(code: c_int, call: &str, arg: &str, why: impl std::fmt::Display) -> Fail {
    Fail { code, message: format!("{call}: invalid argument `{arg}`: {why}") }
}

/// The body of a function of an area oxmpi does not implement: raises
/// MPI_ERR_UNSUPPORTED_OPERATION naming the call through `comm`'s error handler.
pub fn unsupported(call: &'static str, comm: MPI_Comm, area: &str) -> c_int {
    ffi(call, comm, || Err(MpiError::unsupported(call, area).into()))
}
