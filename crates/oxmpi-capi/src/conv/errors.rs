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
use crate::conv::handles::state;
use crate::types::*;

/// An error on its way to the error handler: an MPI error code and a message.
#[derive(Debug)]
pub struct Fail {
    pub code: c_int,
    pub message: String,
}

impl From<MpiError> for Fail {
    fn from(e: MpiError) -> Fail {
        let code = match e.code {
            Some(c) => c,
            None => message_code(crate::abi::error_class_value(e.class), &e.message),
        };
        Fail {
            code,
            message: e.message,
        }
    }
}

/// Error codes that carry their message, as MPICH's do: an error the library
/// detects is returned as a code of its own, `MESSAGE_BIT | serial << 7 |
/// class`, so MPI_Error_class maps it back to its class (even once its text is
/// forgotten) and MPI_Error_string gives the full message ("MPI_Recv: message
/// truncated: ..."). The last `KEPT_MESSAGES` texts are kept. MPI_SUCCESS,
/// MPI_ERR_IN_STATUS and MPI_ERR_PENDING stay themselves (programs compare
/// with them), as do the codes a program passes in (error handlers called by
/// MPI_Comm_call_errhandler, generalized requests' callbacks).
const MESSAGE_BIT: c_int = 0x4000_0000;
const KEPT_MESSAGES: usize = 4096;

struct Messages {
    serial: u32,
    order: std::collections::VecDeque<c_int>,
    text: std::collections::HashMap<c_int, String>,
}

static MESSAGES: std::sync::Mutex<Option<Messages>> = std::sync::Mutex::new(None);

fn message_code(class: c_int, message: &str) -> c_int {
    if !(1..128).contains(&class) || class == MPI_ERR_IN_STATUS || class == MPI_ERR_PENDING {
        return class;
    }
    let mut g = MESSAGES.lock().unwrap_or_else(|p| p.into_inner());
    let m = g.get_or_insert_with(|| Messages {
        serial: 0,
        order: Default::default(),
        text: Default::default(),
    });
    m.serial = (m.serial + 1) % (1 << 23);
    let code = MESSAGE_BIT | ((m.serial as c_int) << 7) | class;
    if m.order.len() == KEPT_MESSAGES {
        if let Some(old) = m.order.pop_front() {
            m.text.remove(&old);
        }
    }
    m.order.push_back(code);
    m.text.insert(code, message.to_string());
    code
}

/// Replaces the text of a message code (the final wording of the call's message).
fn set_message(code: c_int, message: &str) {
    if code & MESSAGE_BIT != 0 {
        if let Some(m) = MESSAGES.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            if let Some(t) = m.text.get_mut(&code) {
                *t = message.to_string();
            }
        }
    }
}

/// The message a code carries, if it is a message code still remembered.
pub fn message_of(code: c_int) -> Option<String> {
    if code & MESSAGE_BIT == 0 {
        return None;
    }
    MESSAGES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .and_then(|m| m.text.get(&code).cloned())
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

thread_local! {
    /// Set while a Fortran binding's procedure runs (`FortranCall`).
    static FORTRAN_CALL: Cell<bool> = const { Cell::new(false) };
}

/// While alive, errors name the call in its Fortran form (`MPI_SEND`).
pub struct FortranCall(bool);

impl FortranCall {
    pub fn enter() -> FortranCall {
        FortranCall(FORTRAN_CALL.with(|f| f.replace(true)))
    }
}

impl Drop for FortranCall {
    fn drop(&mut self) {
        let was = self.0;
        FORTRAN_CALL.with(|f| f.set(was));
    }
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

/// The C entry of the hottest calls (abi.txt's `hot` lines: MPI_Isend, MPI_Irecv,
/// MPI_Send, MPI_Recv; bench/PROFILE.md, rate18), generated by gen.rs: `fast` runs
/// with its panics caught, and when it succeeds the call returns MPI_SUCCESS without
/// touching the error-routing thread-local (`route_to`, a `__tls_get_addr` call in a
/// shared library) or `ffi`'s frame. Its error, or panic, is handed to `ffi` as the
/// body's outcome, so it is routed to the communicator's handler and reported exactly
/// as the general entry reports it. `fast` giving `None` (not the hot case, nothing
/// done) and a traced run (`mpiexec --trace` times every call in `ffi`) take `ffi`
/// with `slow`, the call's whole body.
#[inline(always)]
pub fn hot(
    call: &'static str,
    c: MPI_Comm,
    fast: impl FnOnce() -> Option<R<()>>,
    slow: impl FnOnce() -> R<()>,
) -> c_int {
    if !oxmpi_core::diag::tracing() {
        match catch_unwind(AssertUnwindSafe(fast)) {
            Ok(Some(Ok(()))) => return MPI_SUCCESS,
            Ok(Some(Err(e))) => return ffi(call, c, || Err(e)),
            Ok(None) => {}
            Err(p) => return ffi(call, c, || std::panic::resume_unwind(p)),
        }
    }
    ffi(call, c, slow)
}

/// [`hot`] for a call whose whole body is its fast path (MPI_Wait of a direct
/// handle): `body` runs with its panics caught and, when it succeeds, the call
/// returns MPI_SUCCESS without `ffi`'s frame or the error-routing thread-local;
/// its error, or panic, goes through `ffi` routed to `c`, as the general entry
/// reports it. A traced run takes `ffi` with `body`.
#[inline(always)]
pub fn hot_body(call: &'static str, c: MPI_Comm, body: impl FnOnce() -> R<()>) -> c_int {
    if oxmpi_core::diag::tracing() {
        return ffi(call, c, body);
    }
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => MPI_SUCCESS,
        Ok(Err(e)) => ffi(call, c, || Err(e)),
        Err(p) => ffi(call, c, || std::panic::resume_unwind(p)),
    }
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
    match run_named(call, body) {
        Ok(()) => MPI_SUCCESS,
        Err((code, message)) => {
            // A call from Fortran is named as the Fortran program wrote it.
            let message = match FORTRAN_CALL.with(|f| f.get()) {
                true => format!("{}{}", call.to_ascii_uppercase(), &message[call.len()..]),
                false => message,
            };
            set_message(code, &message);
            raise(ERR_COMM.with(|c| c.get()), code, &message)
        }
    }
}

/// Runs a C call's body (a panic becomes MPI_ERR_INTERN naming the call); on
/// failure, the error code and the message as the program should read it:
/// starting with the call's name, that of the `_c` form when the program
/// called it (a `_c` form shares its body, and the engine's messages, with
/// the `int` form). The one place the C layer's entry wrappers (this file's
/// `ffi`, files', sessions') turn a body's result into a code and a message.
pub(crate) fn run_named(
    call: &'static str,
    body: impl FnOnce() -> R<()>,
) -> Result<(), (c_int, String)> {
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
    res.map_err(|f| {
        let message = match call
            .strip_suffix("_c")
            .and_then(|base| f.message.strip_prefix(base))
            .filter(|rest| rest.starts_with(':'))
        {
            Some(rest) => format!("{call}{rest}"),
            None => f.message,
        };
        let message = if message.starts_with(call) {
            message
        } else {
            format!("{call}: {message}")
        };
        (f.code, message)
    })
}

/// The name of an error code's class, e.g. `MPI_ERR_RANK`.
pub fn code_name(code: c_int) -> String {
    let class = class_of(code).unwrap_or(MPI_ERR_UNKNOWN);
    let name = ERROR_CLASS_NAMES
        .iter()
        .find(|(c, _)| *c == class)
        .map(|(_, n)| n.to_string());
    match (name, class == code || code & MESSAGE_BIT != 0) {
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
    if code > 0 && code & MESSAGE_BIT != 0 {
        let class = code & 0x7f;
        return ERROR_CLASS_NAMES
            .iter()
            .any(|(c, _)| *c == class)
            .then_some(class);
    }
    state().user_codes.get(&code).copied()
}

fn fatal(code: c_int, message: &str) -> ! {
    let rank = runtime::engine().map(|e| e.rank()).unwrap_or(0);
    eprintln!("oxmpi: rank {rank}: {message} ({})", code_name(code));
    runtime::abort(
        if code == 0 { 1 } else { code },
        "the error handler is MPI_ERRORS_ARE_FATAL",
    )
}

/// Calls `comm`'s error handler with `code`; returns the code to give the caller.
pub fn raise(mut comm: MPI_Comm, code: c_int, message: &str) -> c_int {
    let errh = {
        let st = state();
        let live = comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF || st.comms.get(comm).is_some();
        if !live {
            let self_set = st
                .comm_errhandler
                .get(&MPI_COMM_SELF)
                .is_some_and(|h| *h != MPI_ERRORS_ARE_FATAL);
            comm = if self_set {
                MPI_COMM_SELF
            } else {
                MPI_COMM_WORLD
            };
        }
        st.comm_errhandler
            .get(&comm)
            .copied()
            .unwrap_or(MPI_ERRORS_ARE_FATAL)
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
    // SAFETY: `p` is non-null (checked above), and by this function's contract aligned, valid for reads and writes, and unaliased for `'a`.
    Ok(unsafe { &mut *p })
}

/// A raw pointer argument (`*const T` or `*mut T`), for [`nonnull`].
pub trait RawPtr: Copy {
    fn null(self) -> bool;
}
impl<T: ?Sized> RawPtr for *const T {
    fn null(self) -> bool {
        self.is_null()
    }
}
impl<T: ?Sized> RawPtr for *mut T {
    fn null(self) -> bool {
        self.is_null()
    }
}

/// A pointer argument the call requires (abi.txt `nonnull(...)`): `MPI_ERR_ARG` naming
/// `arg` when NULL, else the pointer unchanged.
pub fn nonnull<P: RawPtr>(call: &str, arg: &str, p: P) -> R<P> {
    if p.null() {
        return Err(bad(ErrorClass::Arg, call, arg, "is NULL"));
    }
    Ok(p)
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
    // SAFETY: `p` is non-null and `n > 0` (checked above); by this function's contract it points to `n` valid `T`s, unwritten for `'a`.
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
    // SAFETY: `p` is non-null and `n > 0` (checked above); by this function's contract it points to `n` `T`s we may read and write, unaliased for `'a`.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// An error with a class the engine's `ErrorClass` does not list (info, ...).
pub fn bad_code(code: c_int, call: &str, arg: &str, why: impl std::fmt::Display) -> Fail {
    Fail {
        code,
        message: format!("{call}: invalid argument `{arg}`: {why}"),
    }
}

/// The body of a function of an area oxmpi does not implement: raises
/// MPI_ERR_UNSUPPORTED_OPERATION naming the call through `comm`'s error handler.
pub fn unsupported(call: &'static str, comm: MPI_Comm, area: &str) -> c_int {
    ffi(call, comm, || Err(MpiError::unsupported(call, area).into()))
}

/// An engine error raised under a generic call name (`MPI_Wait:`, `MPI_Recv:`, ...),
/// renamed to the call the program made.
pub fn rename_call(e: MpiError, call: &str) -> Fail {
    let generic = [
        "MPI_Wait:",
        "MPI_Test:",
        "MPI_Waitall:",
        "MPI_Testall:",
        "MPI_Waitany:",
        "MPI_Testany:",
        "MPI_Waitsome:",
        "MPI_Testsome:",
        "MPI_Recv:",
        "MPI_Mrecv:",
    ];
    let mut m = e.message.clone();
    for g in generic {
        if let Some(rest) = m.strip_prefix(g) {
            m = format!("{call}:{rest}");
            break;
        }
    }
    if !m.starts_with(call) {
        m = format!("{call}: {m}");
    }
    Fail {
        code: crate::abi::error_class_value(e.class),
        message: m,
    }
}
