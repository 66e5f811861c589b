//! One-sided communication (`MPI_Win_*`, `MPI_Put`, `MPI_Get`, accumulates): the C
//! face of `oxmpi_core::rma`.
//!
//! Windows live in this module's own handle table (kind 9). Errors of a call on a
//! valid window go to the window's error handler (`MPI_ERRORS_ARE_FATAL` unless the
//! program set another), errors of window creation to the communicator's, and an
//! invalid window handle to the handler of calls tied to no communicator.
//! Window attributes `MPI_WIN_BASE`, `_SIZE`, `_DISP_UNIT`, `_CREATE_FLAVOR` and
//! `_MODEL` (always `MPI_WIN_UNIFIED`: one copy of window memory) are answered here;
//! user keyvals use the engine's attribute tables.
//!
//! Safety: the private `unsafe fn`s take the C caller's arguments as given and
//! require of them what the MPI standard requires of the function they implement:
//! origin/result buffers holding their counts of their datatypes, OUT arguments
//! writable and aliasing no other argument, window memory valid until MPI_Win_free.

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use oxmpi_core::attr::{Attributes, ObjectKind};
use oxmpi_core::datatype::{Datatype, Primitive};
use oxmpi_core::error::{ErrorClass, MpiError};
use oxmpi_core::group::Group;
use oxmpi_core::op::{Op, PredefinedOp};
use oxmpi_core::rma::{Flavor, Hints, LockKind, Window};
use oxmpi_core::runtime;

use crate::abi::*;
use crate::conv::errors::{bad, code_name, ffi, out, raise, Fail, NO_COMM, R};
use crate::conv::handles::{c2f_predefined_or, f2c_predefined_or, state, ErrhandlerEntry, Table};
use crate::conv::large::{name, to_usize, Count};
use crate::conv::{check_buf, comm, committed, get_str, new_request, put_str, CB_WIN};
use crate::types::*;

const KIND_WIN: u64 = 9;

struct WinEntry {
    win: Arc<Window>,
    errh: MPI_Errhandler,
    /// The user function of `errh` (kept here: the program may free the handle
    /// while the window still uses it).
    errh_fn: Option<MPI_Comm_errhandler_function>,
    info: Vec<(String, String)>,
    name: String,
    attrs: Arc<Attributes>,
    // Stable storage for the predefined attributes (C gets pointers to them).
    size_attr: Box<MPI_Aint>,
    disp_attr: Box<c_int>,
    flavor_attr: Box<c_int>,
    model_attr: Box<c_int>,
}

static WINS: Mutex<Table<WinEntry>> = Mutex::new(Table::new(KIND_WIN));

fn wins() -> MutexGuard<'static, Table<WinEntry>> {
    WINS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether user error handler `h` is attached to a window (MPI_Errhandler_free
/// then keeps it valid for MPI_Win_get_errhandler).
pub(crate) fn errhandler_attached(h: MPI_Errhandler) -> bool {
    wins().iter().any(|(_, e)| e.errh == h)
}

fn with_cb_win<T>(w: MPI_Win, f: impl FnOnce() -> T) -> T {
    let prev = CB_WIN.with(|x| x.replace(w));
    let r = f();
    CB_WIN.with(|x| x.set(prev));
    r
}

fn bad_win(call: &str, w: MPI_Win) -> Fail {
    if w == MPI_WIN_NULL {
        bad(ErrorClass::Win, call, "win", "MPI_WIN_NULL")
    } else {
        bad(
            ErrorClass::Win,
            call,
            "win",
            format!("{w:#x} is not a valid window (freed, or never created)"),
        )
    }
}

fn win(w: MPI_Win, call: &str) -> R<Arc<Window>> {
    // The window this thread used last: no table lock.
    if with_cached(w, |_| ()).is_some() {
        if let Ok(Some(wn)) = OWNER.try_with(|o| o.borrow().0.clone()) {
            return Ok(wn);
        }
    }
    let frees = FREES.load(Ordering::Acquire);
    let wn = wins()
        .get(w)
        .map(|e| e.win.clone())
        .ok_or_else(|| bad_win(call, w))?;
    remember(w, frees, Some(wn.clone()));
    Ok(wn)
}

/// Windows freed so far: a window cached by [`FAST`] before the latest free may be
/// gone, so the cache is trusted only while this count is unchanged.
static FREES: AtomicU64 = AtomicU64::new(0);

/// The window this thread looked up last, for the fast path: (handle, [`FREES`] at
/// the time, the window). Plain data with no destructor, so reading it is a load
/// (no lazy registration, no borrow flag); the pointer is kept valid by [`OWNER`].
#[derive(Clone, Copy)]
struct Cached(MPI_Win, u64, *const Window);

/// The reference that keeps [`FAST`]'s window alive; dropped with the thread, and
/// then it empties `FAST` first.
struct Owner(Option<Arc<Window>>);

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = FAST.try_with(|c| c.set(Cached(MPI_WIN_NULL, 0, std::ptr::null())));
    }
}

thread_local! {
    static FAST: Cell<Cached> = const { Cell::new(Cached(MPI_WIN_NULL, 0, std::ptr::null())) };
    static OWNER: RefCell<Owner> = const { RefCell::new(Owner(None)) };
}

/// Remembers `wn` (handle `w`, looked up when [`FREES`] was `frees`) for this
/// thread's fast path; `None` forgets.
fn remember(w: MPI_Win, frees: u64, wn: Option<Arc<Window>>) {
    let _ = OWNER.try_with(|o| {
        let mut o = o.borrow_mut();
        FAST.set(match &wn {
            Some(x) => Cached(w, frees, Arc::as_ptr(x)),
            None => Cached(MPI_WIN_NULL, 0, std::ptr::null()),
        });
        // The old window (if any) goes only after FAST no longer points at it.
        o.0 = wn;
    });
}

/// Runs `f` on window `w` if this thread looked it up last and no window was freed
/// since; `None` otherwise (the caller then takes the general path, whose lookup
/// fills the cache).
#[inline(always)]
fn with_cached<T>(w: MPI_Win, f: impl FnOnce(&Window) -> T) -> Option<T> {
    let Cached(h, frees, p) = FAST.get();
    if h != w || p.is_null() || frees != FREES.load(Ordering::Acquire) {
        return None;
    }
    // SAFETY: `p` comes from the Arc that OWNER holds for this thread until it sets FAST to another window or to none (this thread only: no one else changes them).
    Some(f(unsafe { &*p }))
}

/// The return code of a call made on the cached window ([`with_cached`]): an error
/// goes through [`wffi`] (message, the window's error handler) like the general path's.
#[inline]
fn cached_result(call: &'static str, w: MPI_Win, res: Result<(), MpiError>) -> c_int {
    match res {
        Ok(()) => MPI_SUCCESS,
        Err(e) => wffi(call, w, || Err(e.into())),
    }
}

/// Calls the window's error handler with `code`; returns the code to give the caller.
fn raise_win(mut w: MPI_Win, mut code: c_int, message: &str) -> c_int {
    let errh = wins().get(w).map(|e| (e.errh, e.errh_fn));
    match errh {
        None => raise(NO_COMM, code, message),
        Some((MPI_ERRORS_RETURN, _)) => code,
        Some((_, func)) => {
            match func {
                Some(f) => {
                    let c = code;
                    // SAFETY: a C function the user registered with MPI_Win_create_errhandler (the same C shape as communicator handlers: pointers to handle and code).
                    unsafe { f(&mut w, &mut code) };
                    c
                }
                _ => {
                    let rank = runtime::engine().map(|e| e.rank()).unwrap_or(0);
                    eprintln!("oxmpi: rank {rank}: {message} ({})", code_name(code));
                    runtime::abort(
                        if code == 0 { 1 } else { code },
                        "the window's error handler is MPI_ERRORS_ARE_FATAL",
                    )
                }
            }
        }
    }
}

/// Runs a body of a call on window `w`: catches panics, routes errors to the
/// window's error handler (as `errors::ffi` does for communicators).
/// Out of line: the fast paths in front of it stay small.
#[inline(never)]
pub(crate) fn wffi(call: &'static str, w: MPI_Win, body: impl FnOnce() -> R<()>) -> c_int {
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
            raise_win(w, f.code, &message)
        }
    }
}

mod attr;
mod create;
mod ops;
mod sync;

pub use attr::*;
pub use create::*;
pub use ops::*;
pub use sync::*;

/// Windows still open at MPI_Finalize (the program did not free them): nothing to
/// do but forget them; their segments go with the process.
pub fn live_windows() -> usize {
    wins().iter().count()
}
