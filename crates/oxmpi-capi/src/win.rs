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
use oxmpi_core::rma::{Flavor, LockKind, Window};
use oxmpi_core::{pt2pt, runtime};

use crate::abi::*;
use crate::conv::{CB_WIN, check_buf, comm, committed, get_str, new_request, put_str};
use crate::conv::errors::{bad, code_name, ffi, out, raise, Fail, NO_COMM, R};
use crate::conv::handles::{c2f_predefined_or, f2c_predefined_or, state, ErrhandlerEntry, Table};
use crate::conv::large::{name, to_usize, Count};
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
        bad(ErrorClass::Win, call, "win", format!("{w:#x} is not a valid window (freed, or never created)"))
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
    let wn = wins().get(w).map(|e| e.win.clone()).ok_or_else(|| bad_win(call, w))?;
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
    // SAFETY: `p` comes from the Arc that OWNER holds for this thread until it sets
    // FAST to another window or to none (this thread only: no one else changes them).
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
                    // SAFETY: a C function the user registered with MPI_Win_create_errhandler
                    // (the same C shape as communicator handlers: pointers to handle and code).
                    unsafe { f(&mut w, &mut code) };
                    c
                }
                _ => {
                    let rank = runtime::engine().map(|e| e.rank()).unwrap_or(0);
                    eprintln!("oxmpi: rank {rank}: {message} ({})", code_name(code));
                    runtime::abort(if code == 0 { 1 } else { code }, "the window's error handler is MPI_ERRORS_ARE_FATAL")
                }
            }
        }
    }
}

/// Runs a body of a call on window `w`: catches panics, routes errors to the
/// window's error handler (as `errors::ffi` does for communicators).
/// Out of line: the fast paths in front of it stay small.
#[inline(never)]
fn wffi(call: &'static str, w: MPI_Win, body: impl FnOnce() -> R<()>) -> c_int {
    let res = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(p) => {
            let why = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_else(|| "panic".into());
            Err(MpiError::intern(call, why).into())
        }
    };
    match res {
        Ok(()) => MPI_SUCCESS,
        Err(f) => {
            let message = match call.strip_suffix("_c").and_then(|base| f.message.strip_prefix(base)).filter(|rest| rest.starts_with(':')) {
                Some(rest) => format!("{call}{rest}"),
                None => f.message,
            };
            let message = if message.starts_with(call) { message } else { format!("{call}: {message}") };
            raise_win(w, f.code, &message)
        }
    }
}

// ----- creation and destruction ----------------------------------------------------------

/// Info keys a window accepts, with the values reported when the program gave none.
const INFO_DEFAULTS: &[(&str, &str)] = &[
    ("no_locks", "false"),
    ("accumulate_ordering", "rar,raw,war,waw"),
    ("accumulate_ops", "same_op_no_op"),
    ("same_size", "false"),
    ("same_disp_unit", "false"),
];

fn info_pairs(call: &str, info: MPI_Info) -> R<Vec<(String, String)>> {
    if info == MPI_INFO_NULL {
        return Ok(vec![]);
    }
    crate::conv::with_info(call, info, |kv| Ok(kv.clone()))
}

fn flag_of(kv: &[(String, String)], key: &str) -> bool {
    kv.iter().any(|(k, v)| k == key && v.trim() == "true")
}

fn flavor_code(f: Flavor) -> c_int {
    match f {
        Flavor::Create => MPI_WIN_FLAVOR_CREATE,
        Flavor::Allocate => MPI_WIN_FLAVOR_ALLOCATE,
        Flavor::Dynamic => MPI_WIN_FLAVOR_DYNAMIC,
        Flavor::Shared => MPI_WIN_FLAVOR_SHARED,
    }
}

/// The common body of the window constructors; returns the window handle.
///
/// # Safety
/// For `Create`, `base .. base + size` is this process's memory, valid until MPI_Win_free.
unsafe fn make(call: &str, c: MPI_Comm, flavor: Flavor, base: usize, size: i64, disp_unit: i64, info: MPI_Info) -> R<MPI_Win> {
    let cm = comm(c, call)?;
    if size < 0 {
        return Err(bad(ErrorClass::Size, call, "size", format!("{size} is negative")));
    }
    if flavor != Flavor::Dynamic && disp_unit <= 0 {
        return Err(bad(ErrorClass::Disp, call, "disp_unit", format!("{disp_unit} is not positive")));
    }
    if flavor == Flavor::Create && base == 0 && size > 0 {
        return Err(bad(ErrorClass::Base, call, "base", format!("is NULL with size {size}")));
    }
    let mut kv = info_pairs(call, info)?;
    let noncontig = flag_of(&kv, "alloc_shared_noncontig");
    // SAFETY: forwarded contract (Create: the caller's memory stays valid).
    let w = unsafe { Window::new(&cm, flavor, base, size as usize, disp_unit.max(1) as usize, noncontig, call)? };
    for (k, v) in INFO_DEFAULTS {
        if !kv.iter().any(|(x, _)| x == k) {
            kv.push((k.to_string(), v.to_string()));
        }
    }
    if flavor == Flavor::Shared && !kv.iter().any(|(x, _)| x == "alloc_shared_noncontig") {
        kv.push(("alloc_shared_noncontig".into(), "false".into()));
    }
    let entry = WinEntry {
        size_attr: Box::new(w.size() as MPI_Aint),
        disp_attr: Box::new(w.disp_unit() as c_int),
        flavor_attr: Box::new(flavor_code(flavor)),
        model_attr: Box::new(MPI_WIN_UNIFIED),
        win: w,
        errh: MPI_ERRORS_ARE_FATAL,
        errh_fn: None,
        info: kv,
        name: String::new(),
        attrs: Arc::new(Attributes::new(ObjectKind::Win)),
    };
    Ok(wins().insert(entry))
}

trait Disp: Copy {
    fn get(self) -> i64;
}
impl Disp for c_int {
    fn get(self) -> i64 {
        self as i64
    }
}
impl Disp for MPI_Aint {
    fn get(self) -> i64 {
        self as i64
    }
}

unsafe fn win_create<D: Disp>(call: &'static str, base: *mut c_void, size: MPI_Aint, disp_unit: D, info: MPI_Info, c: MPI_Comm, w: *mut MPI_Win) -> c_int {
    ffi(call, c, || {
        // SAFETY: `win` is the C caller's OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(call, "win", w)? };
        // SAFETY: MPI_Win_create's contract: `base` holds `size` bytes until MPI_Win_free.
        *o = unsafe { make(call, c, Flavor::Create, base as usize, size as i64, disp_unit.get(), info)? };
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn win_allocate<D: Disp>(call: &'static str, flavor: Flavor, size: MPI_Aint, disp_unit: D, info: MPI_Info, c: MPI_Comm, baseptr: *mut c_void, w: *mut MPI_Win) -> c_int {
    ffi(call, c, || {
        // SAFETY: OUT arguments of the C caller: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(call, "win", w)? };
        // SAFETY: as above; `baseptr` points to a `void *` by the MPI contract.
        let b = unsafe { out(call, "baseptr", baseptr as *mut *mut c_void)? };
        // SAFETY: allocate flavors make their own memory; `base` is not used.
        let h = unsafe { make(call, c, flavor, 0, size as i64, disp_unit.get(), info)? };
        *b = wins().get(h).map_or(std::ptr::null_mut(), |e| e.win.base() as *mut c_void);
        *o = h;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_create(base: *mut c_void, size: MPI_Aint, disp_unit: c_int, info: MPI_Info, c: MPI_Comm, w: *mut MPI_Win) -> c_int {
    // SAFETY: the C caller's arguments, as `win_create` requires.
    unsafe { win_create("MPI_Win_create", base, size, disp_unit, info, c, w) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_create_c(base: *mut c_void, size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, c: MPI_Comm, w: *mut MPI_Win) -> c_int {
    // SAFETY: the C caller's arguments, as `win_create` requires.
    unsafe { win_create("MPI_Win_create_c", base, size, disp_unit, info, c, w) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_allocate(size: MPI_Aint, disp_unit: c_int, info: MPI_Info, c: MPI_Comm, baseptr: *mut c_void, w: *mut MPI_Win) -> c_int {
    // SAFETY: the C caller's arguments, as `win_allocate` requires.
    unsafe { win_allocate("MPI_Win_allocate", Flavor::Allocate, size, disp_unit, info, c, baseptr, w) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_allocate_c(size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, c: MPI_Comm, baseptr: *mut c_void, w: *mut MPI_Win) -> c_int {
    // SAFETY: the C caller's arguments, as `win_allocate` requires.
    unsafe { win_allocate("MPI_Win_allocate_c", Flavor::Allocate, size, disp_unit, info, c, baseptr, w) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_allocate_shared(size: MPI_Aint, disp_unit: c_int, info: MPI_Info, c: MPI_Comm, baseptr: *mut c_void, w: *mut MPI_Win) -> c_int {
    // SAFETY: the C caller's arguments, as `win_allocate` requires.
    unsafe { win_allocate("MPI_Win_allocate_shared", Flavor::Shared, size, disp_unit, info, c, baseptr, w) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_allocate_shared_c(size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, c: MPI_Comm, baseptr: *mut c_void, w: *mut MPI_Win) -> c_int {
    // SAFETY: the C caller's arguments, as `win_allocate` requires.
    unsafe { win_allocate("MPI_Win_allocate_shared_c", Flavor::Shared, size, disp_unit, info, c, baseptr, w) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_create_dynamic(info: MPI_Info, c: MPI_Comm, w: *mut MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_create_dynamic";
    ffi(CALL, c, || {
        // SAFETY: OUT argument of the C caller: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "win", w)? };
        // SAFETY: dynamic windows start with no memory.
        *o = unsafe { make(CALL, c, Flavor::Dynamic, 0, 0, 1, info)? };
        Ok(())
    })
}

unsafe fn shared_query<D: Copy + TryFrom<usize>>(call: &'static str, w: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut D, baseptr: *mut c_void) -> c_int {
    wffi(call, w, || {
        let wn = win(w, call)?;
        // SAFETY: OUT arguments of the C caller: NULL (rejected) or writable and unaliased.
        let (s, d, b) = unsafe { (out(call, "size", size)?, out(call, "disp_unit", disp_unit)?, out(call, "baseptr", baseptr as *mut *mut c_void)?) };
        let (sz, du, addr) = wn.shared_query(rank)?;
        *s = sz as MPI_Aint;
        *d = D::try_from(du).map_err(|_| bad(ErrorClass::Arg, call, "disp_unit", "does not fit"))?;
        *b = addr as *mut c_void;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_shared_query(w: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut c_int, baseptr: *mut c_void) -> c_int {
    // SAFETY: the C caller's OUT arguments.
    unsafe { shared_query("MPI_Win_shared_query", w, rank, size, disp_unit, baseptr) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_shared_query_c(w: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut MPI_Aint, baseptr: *mut c_void) -> c_int {
    // SAFETY: the C caller's OUT arguments.
    unsafe { shared_query("MPI_Win_shared_query_c", w, rank, size, disp_unit, baseptr) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_attach(w: MPI_Win, base: *mut c_void, size: MPI_Aint) -> c_int {
    const CALL: &str = "MPI_Win_attach";
    wffi(CALL, w, || {
        let wn = win(w, CALL)?;
        if size < 0 {
            return Err(bad(ErrorClass::Size, CALL, "size", format!("{size} is negative")));
        }
        if base.is_null() && size > 0 {
            return Err(bad(ErrorClass::Base, CALL, "base", "is NULL"));
        }
        wn.attach(base as usize, size as usize)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_detach(w: MPI_Win, base: *const c_void) -> c_int {
    const CALL: &str = "MPI_Win_detach";
    wffi(CALL, w, || {
        win(w, CALL)?.detach(base as usize)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_free(w: *mut MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_free";
    // SAFETY: `win` is the C caller's INOUT argument: NULL (reported) or valid.
    let h = if w.is_null() { MPI_WIN_NULL } else { unsafe { *w } };
    wffi(CALL, h, || {
        // SAFETY: as above.
        let o = unsafe { out(CALL, "win", w)? };
        let wn = win(h, CALL)?;
        wn.check_free()?;
        let attrs = wins().get(h).map(|e| e.attrs.clone()).expect("checked above");
        with_cb_win(h, || attrs.clear(CALL))?;
        wn.free()?;
        {
            let mut t = wins();
            t.remove(h);
            FREES.fetch_add(1, Ordering::Release);
        }
        remember(MPI_WIN_NULL, 0, None);
        *o = MPI_WIN_NULL;
        Ok(())
    })
}

// ----- group, info, name ---------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_get_group(w: MPI_Win, group: *mut MPI_Group) -> c_int {
    const CALL: &str = "MPI_Win_get_group";
    wffi(CALL, w, || {
        let wn = win(w, CALL)?;
        // SAFETY: OUT argument of the C caller: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "group", group)? };
        *o = crate::conv::new_group(Group::from_world_ranks(wn.comm().group().to_vec()));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_set_info(w: MPI_Win, info: MPI_Info) -> c_int {
    const CALL: &str = "MPI_Win_set_info";
    wffi(CALL, w, || {
        win(w, CALL)?;
        let kv = info_pairs(CALL, info)?;
        let mut t = wins();
        let e = t.get_mut(w).ok_or_else(|| bad_win(CALL, w))?;
        for (k, v) in kv {
            // Only the keys a window knows are kept (and reported by MPI_Win_get_info):
            // the defaults, and those it was made with (alloc_shared_noncontig).
            if INFO_DEFAULTS.iter().any(|(d, _)| *d == k) || e.info.iter().any(|(x, _)| *x == k) {
                match e.info.iter_mut().find(|(x, _)| *x == k) {
                    Some(slot) => slot.1 = v,
                    None => e.info.push((k, v)),
                }
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_get_info(w: MPI_Win, info_used: *mut MPI_Info) -> c_int {
    const CALL: &str = "MPI_Win_get_info";
    wffi(CALL, w, || {
        // SAFETY: OUT argument of the C caller: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "info_used", info_used)? };
        let kv = wins().get(w).map(|e| e.info.clone()).ok_or_else(|| bad_win(CALL, w))?;
        *o = state().infos.insert(kv);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_set_name(w: MPI_Win, win_name: *const c_char) -> c_int {
    const CALL: &str = "MPI_Win_set_name";
    wffi(CALL, w, || {
        // SAFETY: a C string by contract (NULL rejected).
        let s = unsafe { get_str(CALL, "win_name", win_name)? };
        let s: String = s.chars().take(MPI_MAX_OBJECT_NAME as usize - 1).collect();
        wins().get_mut(w).ok_or_else(|| bad_win(CALL, w))?.name = s;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_get_name(w: MPI_Win, win_name: *mut c_char, resultlen: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Win_get_name";
    wffi(CALL, w, || {
        // MPI-4.1: the null handle has its name too.
        let n = if w == MPI_WIN_NULL { "MPI_WIN_NULL".to_string() } else { wins().get(w).map(|e| e.name.clone()).ok_or_else(|| bad_win(CALL, w))? };
        if win_name.is_null() {
            return Err(bad(ErrorClass::Arg, CALL, "win_name", "is NULL"));
        }
        // SAFETY: OUT argument of the C caller: NULL (rejected) or writable and unaliased.
        let len = unsafe { out(CALL, "resultlen", resultlen)? };
        // SAFETY: MPI_MAX_OBJECT_NAME bytes by the C contract.
        *len = unsafe { put_str(win_name, &n, MPI_MAX_OBJECT_NAME as usize) };
        Ok(())
    })
}

// ----- attributes ------------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_create_keyval(copy: Option<MPI_Win_copy_attr_function>, delete: Option<MPI_Win_delete_attr_function>, keyval: *mut c_int, extra: *mut c_void) -> c_int {
    // SAFETY: `keyval` is the C caller's OUT argument; the callbacks have the C
    // shape of the communicator ones (handles are pointer-sized), windows are never copied.
    unsafe { crate::attr::create_keyval("MPI_Win_create_keyval", ObjectKind::Win, copy.map_or(0, |f| f as usize), delete, keyval, extra) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_free_keyval(keyval: *mut c_int) -> c_int {
    // SAFETY: the C caller's INOUT argument.
    unsafe { crate::attr::free_keyval("MPI_Win_free_keyval", ObjectKind::Win, keyval) }
}

fn attrs_of(w: MPI_Win, call: &str) -> R<Arc<Attributes>> {
    wins().get(w).map(|e| e.attrs.clone()).ok_or_else(|| bad_win(call, w))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_set_attr(w: MPI_Win, keyval: c_int, val: *mut c_void) -> c_int {
    const CALL: &str = "MPI_Win_set_attr";
    wffi(CALL, w, || {
        let a = attrs_of(w, CALL)?;
        if (MPI_WIN_BASE..=MPI_WIN_MODEL).contains(&keyval) {
            return Err(bad(ErrorClass::Keyval, CALL, "win_keyval", "predefined window attributes cannot be set"));
        }
        with_cb_win(w, || a.set(keyval, val as usize, CALL))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_get_attr(w: MPI_Win, keyval: c_int, val: *mut c_void, flag: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Win_get_attr";
    wffi(CALL, w, || {
        // SAFETY: OUT arguments of the C caller: NULL (rejected) or writable, not aliasing each other.
        let (f, v) = unsafe { (out(CALL, "flag", flag)?, out(CALL, "attribute_val", val as *mut *mut c_void)?) };
        let predefined = {
            let t = wins();
            let e = t.get(w).ok_or_else(|| bad_win(CALL, w))?;
            match keyval {
                MPI_WIN_BASE => Some(e.win.base() as *mut c_void),
                MPI_WIN_SIZE => Some(&*e.size_attr as *const MPI_Aint as *mut c_void),
                MPI_WIN_DISP_UNIT => Some(&*e.disp_attr as *const c_int as *mut c_void),
                MPI_WIN_CREATE_FLAVOR => Some(&*e.flavor_attr as *const c_int as *mut c_void),
                MPI_WIN_MODEL => Some(&*e.model_attr as *const c_int as *mut c_void),
                _ => None,
            }
        };
        if let Some(p) = predefined {
            *v = p;
            *f = 1;
            return Ok(());
        }
        match attrs_of(w, CALL)?.get(keyval, CALL)? {
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
pub unsafe extern "C" fn PMPI_Win_delete_attr(w: MPI_Win, keyval: c_int) -> c_int {
    const CALL: &str = "MPI_Win_delete_attr";
    wffi(CALL, w, || {
        let a = attrs_of(w, CALL)?;
        with_cb_win(w, || a.delete(keyval, CALL))?;
        Ok(())
    })
}

// ----- error handlers ---------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_create_errhandler(f: Option<MPI_Win_errhandler_function>, eh: *mut MPI_Errhandler) -> c_int {
    const CALL: &str = "MPI_Win_create_errhandler";
    ffi(CALL, NO_COMM, || {
        let f = f.ok_or_else(|| bad(ErrorClass::Arg, CALL, "win_errhandler_fn", "is NULL"))?;
        // SAFETY: OUT argument of the C caller: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "errhandler", eh)? };
        // Both C types are `void (*)(handle *, int *, ...)` with pointer-sized handles:
        // the table's communicator form is called with a window handle's address.
        *o = state().errhandlers.insert(ErrhandlerEntry { func: f, refs: 1 });
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_set_errhandler(w: MPI_Win, eh: MPI_Errhandler) -> c_int {
    const CALL: &str = "MPI_Win_set_errhandler";
    wffi(CALL, w, || {
        let func = match eh {
            MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN => None,
            _ => match state().errhandlers.get(eh) {
                Some(e) if e.refs > 0 => Some(e.func),
                _ => return Err(bad(ErrorClass::Arg, CALL, "errhandler", format!("{eh:#x} is not a valid error handler"))),
            },
        };
        let mut t = wins();
        let e = t.get_mut(w).ok_or_else(|| bad_win(CALL, w))?;
        e.errh = eh;
        e.errh_fn = func;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_get_errhandler(w: MPI_Win, eh: *mut MPI_Errhandler) -> c_int {
    const CALL: &str = "MPI_Win_get_errhandler";
    wffi(CALL, w, || {
        // SAFETY: OUT argument of the C caller: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "errhandler", eh)? };
        let h = wins().get(w).map(|e| e.errh).ok_or_else(|| bad_win(CALL, w))?;
        if let Some(e) = state().errhandlers.get_mut(h) {
            e.refs += 1;
        }
        *o = h;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_call_errhandler(w: MPI_Win, errorcode: c_int) -> c_int {
    const CALL: &str = "MPI_Win_call_errhandler";
    if wins().get(w).is_none() {
        return ffi(CALL, NO_COMM, || Err(bad_win(CALL, w)));
    }
    raise_win(w, errorcode, &format!("{CALL}: error code {errorcode}"));
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_c2f(w: MPI_Win) -> c_int {
    c2f_predefined_or(&wins(), w)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_f2c(f: c_int) -> MPI_Win {
    let h = f2c_predefined_or(&wins(), f);
    if h == 0 {
        MPI_WIN_NULL
    } else {
        h
    }
}

// ----- communication ---------------------------------------------------------------------

/// The fast path's datatype: a predefined type whose elements lie back to back
/// (size = extent), else `None`.
#[inline]
fn dense_prim(h: MPI_Datatype) -> Option<Primitive> {
    if h == MPI_DATATYPE_NULL || h >= 4096 || h == MPI_LB || h == MPI_UB {
        return None;
    }
    crate::abi::primitive_from_handle(h).filter(|p| p.size() == p.extent() && p.size() > 0)
}

/// The bytes of a put or get the fast path can take: the same dense predefined type
/// and count (> 0) on both sides and an origin buffer that is no null pointer.
#[inline]
fn fast_len<C: Count>(buf: *const c_void, ocount: C, odt: MPI_Datatype, tcount: C, tdt: MPI_Datatype) -> Option<usize> {
    let n = ocount.wide();
    if odt != tdt || n != tcount.wide() || n <= 0 || (buf as usize) < 4096 {
        return None;
    }
    usize::try_from(n).ok()?.checked_mul(dense_prim(odt)?.size())
}

struct Side {
    count: usize,
    /// Borrowed for predefined types (no reference count on the hot path).
    dt: std::borrow::Cow<'static, Datatype>,
}

fn side<C: Count>(call: &str, buf: *const c_void, count: C, h: MPI_Datatype, cname: &str, dname: &str, bname: &str) -> R<Side> {
    let count = to_usize(call, cname, count)?;
    let dt = crate::conv::committed_ref(h, call, dname)?;
    if !bname.is_empty() {
        check_buf(call, bname, buf, count, &dt)?;
    }
    Ok(Side { count, dt })
}

/// A target displacement (checked against the window by the engine).
fn disp_arg(_call: &str, d: MPI_Aint) -> R<isize> {
    Ok(d)
}

/// A request-based call's `request` argument, checked before the operation is made
/// (a null pointer must not leave an operation done behind an error).
fn check_request(call: &str, request: Option<*mut MPI_Request>) -> R<()> {
    if let Some(q) = request {
        // SAFETY: OUT argument of the C caller: only checked here, written by `done_request`.
        unsafe { out(call, "request", q)? };
    }
    Ok(())
}

/// The complete request of a request-based call whose operation the fast path did.
#[inline(never)]
fn fast_request<C: Count>(base: &'static str, w: MPI_Win, q: *mut MPI_Request) -> c_int {
    let call = name::<C>(base);
    wffi(call, w, || done_request(call, q))
}

/// Hands out an already complete request (the operation finished in the call).
fn done_request(call: &str, request: *mut MPI_Request) -> R<()> {
    // SAFETY: OUT argument of the C caller: NULL (rejected) or writable and unaliased.
    let o = unsafe { out(call, "request", request)? };
    let r = pt2pt::grequest_start()?;
    pt2pt::grequest_complete(r)?;
    *o = new_request(r, NO_COMM, None);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn put<C: Count>(base: &'static str, origin: *const c_void, ocount: C, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: C, tdt: MPI_Datatype, w: MPI_Win, request: Option<*mut MPI_Request>) -> c_int {
    // Request-based calls too: their operation completes in the call either way.
    if request.is_none_or(|q| !q.is_null()) {
        if let Some(len) = fast_len(origin, ocount, odt, tcount, tdt) {
            // SAFETY: MPI's contract: `origin` holds origin_count elements of origin_datatype (`len` bytes).
            if with_cached(w, |wn| unsafe { wn.put_direct(origin.cast(), len, rank, disp) }) == Some(true) {
                return match request {
                    Some(q) => fast_request::<C>(base, w, q),
                    None => MPI_SUCCESS,
                };
            }
        }
    }
    // SAFETY: forwarded contract.
    unsafe { put_slow::<C>(base, origin, ocount, odt, rank, disp, tcount, tdt, w, request) }
}

/// The general path of [`put`].
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn put_slow<C: Count>(base: &'static str, origin: *const c_void, ocount: C, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: C, tdt: MPI_Datatype, w: MPI_Win, request: Option<*mut MPI_Request>) -> c_int {
    let call = name::<C>(base);
    wffi(call, w, || {
        let wn = win(w, call)?;
        check_request(call, request)?;
        let o = side(call, origin, ocount, odt, "origin_count", "origin_datatype", "origin_addr")?;
        let t = side(call, std::ptr::null(), tcount, tdt, "target_count", "target_datatype", "")?;
        // SAFETY: MPI's contract: `origin` holds origin_count elements of origin_datatype.
        unsafe { wn.put(call, origin.cast(), o.count, &o.dt, rank, disp_arg(call, disp)?, t.count, &t.dt)? };
        if let Some(r) = request {
            done_request(call, r)?;
        }
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn get<C: Count>(base: &'static str, origin: *mut c_void, ocount: C, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: C, tdt: MPI_Datatype, w: MPI_Win, request: Option<*mut MPI_Request>) -> c_int {
    // Request-based calls too: their operation completes in the call either way.
    if request.is_none_or(|q| !q.is_null()) {
        if let Some(len) = fast_len(origin, ocount, odt, tcount, tdt) {
            // SAFETY: MPI's contract: `origin` is writable for origin_count elements of origin_datatype (`len` bytes).
            if with_cached(w, |wn| unsafe { wn.get_direct(origin.cast(), len, rank, disp) }) == Some(true) {
                return match request {
                    Some(q) => fast_request::<C>(base, w, q),
                    None => MPI_SUCCESS,
                };
            }
        }
    }
    // SAFETY: forwarded contract.
    unsafe { get_slow::<C>(base, origin, ocount, odt, rank, disp, tcount, tdt, w, request) }
}

/// The general path of [`get`].
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn get_slow<C: Count>(base: &'static str, origin: *mut c_void, ocount: C, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: C, tdt: MPI_Datatype, w: MPI_Win, request: Option<*mut MPI_Request>) -> c_int {
    let call = name::<C>(base);
    wffi(call, w, || {
        let wn = win(w, call)?;
        check_request(call, request)?;
        let o = side(call, origin, ocount, odt, "origin_count", "origin_datatype", "origin_addr")?;
        let t = side(call, std::ptr::null(), tcount, tdt, "target_count", "target_datatype", "")?;
        // SAFETY: MPI's contract: `origin` is writable for origin_count elements of origin_datatype.
        unsafe { wn.get(call, origin.cast(), o.count, &o.dt, rank, disp_arg(call, disp)?, t.count, &t.dt)? };
        if let Some(r) = request {
            done_request(call, r)?;
        }
        Ok(())
    })
}

fn acc_op(call: &str, h: MPI_Op) -> R<Op> {
    crate::conv::op(h, call)
}

/// The fast path's accumulate: the same dense predefined type and count (> 0) on
/// every side, a predefined op, buffers that are no null pointers (the origin is not
/// read for MPI_NO_OP); (type, op) and the element count.
#[inline]
fn fast_acc<C: Count>(origin: *const c_void, ocount: C, odt: MPI_Datatype, result: Option<(*mut c_void, C, MPI_Datatype)>, tcount: C, tdt: MPI_Datatype, op: MPI_Op) -> Option<((Primitive, PredefinedOp), usize)> {
    if op == MPI_OP_NULL || op >= 4096 {
        return None;
    }
    let p = crate::abi::op_from_handle(op)?;
    let n = tcount.wide();
    if let Some((rb, rc, rd)) = result {
        if rd != tdt || rc.wide() != n || (rb as usize) < 4096 {
            return None;
        }
    }
    if p != PredefinedOp::NoOp && (odt != tdt || ocount.wide() != n || (origin as usize) < 4096) {
        return None;
    }
    if n <= 0 {
        return None;
    }
    Some(((dense_prim(tdt)?, p), usize::try_from(n).ok()?))
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn accumulate<C: Count>(
    base: &'static str,
    origin: *const c_void,
    ocount: C,
    odt: MPI_Datatype,
    result: Option<(*mut c_void, C, MPI_Datatype)>,
    rank: c_int,
    disp: MPI_Aint,
    tcount: C,
    tdt: MPI_Datatype,
    op: MPI_Op,
    w: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> c_int {
    // Request-based calls too: their operation completes in the call either way.
    if request.is_none_or(|q| !q.is_null()) {
        if let Some((rc, n)) = fast_acc(origin, ocount, odt, result, tcount, tdt, op) {
            let r = result.map_or(std::ptr::null_mut(), |(rb, _, _)| rb.cast::<u8>());
            // SAFETY: MPI's contract: the origin buffer holds, and the result buffer is writable for, `n` elements of the type.
            if with_cached(w, |wn| unsafe { wn.acc_direct(rc.0, rc.1, origin.cast(), r, n, rank, disp) }) == Some(true) {
                return match request {
                    Some(q) => fast_request::<C>(base, w, q),
                    None => MPI_SUCCESS,
                };
            }
        }
    }
    // SAFETY: forwarded contract.
    unsafe { accumulate_slow::<C>(base, origin, ocount, odt, result, rank, disp, tcount, tdt, op, w, request) }
}

/// The general path of [`accumulate`].
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn accumulate_slow<C: Count>(
    base: &'static str,
    origin: *const c_void,
    ocount: C,
    odt: MPI_Datatype,
    result: Option<(*mut c_void, C, MPI_Datatype)>,
    rank: c_int,
    disp: MPI_Aint,
    tcount: C,
    tdt: MPI_Datatype,
    op: MPI_Op,
    w: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> c_int {
    let call = name::<C>(base);
    wffi(call, w, || {
        let wn = win(w, call)?;
        let op = acc_op(call, op)?;
        check_request(call, request)?;
        let noop = op.as_predefined() == Some(oxmpi_core::op::PredefinedOp::NoOp);
        // MPI_Get_accumulate with MPI_NO_OP ignores the origin arguments.
        let o = if noop && result.is_some() {
            Side { count: 0, dt: crate::conv::committed_ref(MPI_BYTE, call, "origin_datatype")? }
        } else {
            side(call, origin, ocount, odt, "origin_count", "origin_datatype", "origin_addr")?
        };
        let t = side(call, std::ptr::null(), tcount, tdt, "target_count", "target_datatype", "")?;
        let res = match result {
            Some((rb, rc, rd)) => {
                let s = side(call, rb, rc, rd, "result_count", "result_datatype", "result_addr")?;
                Some((rb.cast::<u8>(), s.count, s.dt))
            }
            None => None,
        };
        let res_ref = res.as_ref().map(|(p, n, d)| (*p, *n, &**d));
        // SAFETY: MPI's contract: the origin buffer holds, and the result buffer is writable for, their counts of their datatypes.
        unsafe { wn.accumulate(call, origin.cast(), o.count, &o.dt, res_ref, rank, disp_arg(call, disp)?, t.count, &t.dt, &op)? };
        if let Some(r) = request {
            done_request(call, r)?;
        }
        Ok(())
    })
}

macro_rules! rma_entry {
    ($int:ident, $wide:ident, $body:ident, ($($p:ident: $t:tt),*) => ($($arg:expr),*)) => {
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $int($($p: rma_entry!(@ty c_int, $t)),*) -> c_int {
            // SAFETY: the C caller's arguments, passed on as the body requires.
            unsafe { $body::<c_int>($($arg),*) }
        }
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $wide($($p: rma_entry!(@ty MPI_Count, $t)),*) -> c_int {
            // SAFETY: the C caller's arguments, passed on as the body requires.
            unsafe { $body::<MPI_Count>($($arg),*) }
        }
    };
    (@ty $cnt:ty, CNT) => { $cnt };
    (@ty $cnt:ty, $t:ty) => { $t };
}

type CVoid = *const c_void;
type MVoid = *mut c_void;
type PReq = *mut MPI_Request;

rma_entry!(PMPI_Put, PMPI_Put_c, put, (o: CVoid, oc: CNT, od: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, w: MPI_Win) => ("MPI_Put", o, oc, od, r, d, tc, td, w, None));
rma_entry!(PMPI_Rput, PMPI_Rput_c, put, (o: CVoid, oc: CNT, od: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, w: MPI_Win, q: PReq) => ("MPI_Rput", o, oc, od, r, d, tc, td, w, Some(q)));
rma_entry!(PMPI_Get, PMPI_Get_c, get, (o: MVoid, oc: CNT, od: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, w: MPI_Win) => ("MPI_Get", o, oc, od, r, d, tc, td, w, None));
rma_entry!(PMPI_Rget, PMPI_Rget_c, get, (o: MVoid, oc: CNT, od: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, w: MPI_Win, q: PReq) => ("MPI_Rget", o, oc, od, r, d, tc, td, w, Some(q)));
rma_entry!(PMPI_Accumulate, PMPI_Accumulate_c, accumulate, (o: CVoid, oc: CNT, od: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, op: MPI_Op, w: MPI_Win) => ("MPI_Accumulate", o, oc, od, None, r, d, tc, td, op, w, None));
rma_entry!(PMPI_Raccumulate, PMPI_Raccumulate_c, accumulate, (o: CVoid, oc: CNT, od: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, op: MPI_Op, w: MPI_Win, q: PReq) => ("MPI_Raccumulate", o, oc, od, None, r, d, tc, td, op, w, Some(q)));
rma_entry!(PMPI_Get_accumulate, PMPI_Get_accumulate_c, accumulate, (o: CVoid, oc: CNT, od: MPI_Datatype, rb: MVoid, rc: CNT, rd: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, op: MPI_Op, w: MPI_Win) => ("MPI_Get_accumulate", o, oc, od, Some((rb, rc, rd)), r, d, tc, td, op, w, None));
rma_entry!(PMPI_Rget_accumulate, PMPI_Rget_accumulate_c, accumulate, (o: CVoid, oc: CNT, od: MPI_Datatype, rb: MVoid, rc: CNT, rd: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, op: MPI_Op, w: MPI_Win, q: PReq) => ("MPI_Rget_accumulate", o, oc, od, Some((rb, rc, rd)), r, d, tc, td, op, w, Some(q)));

#[no_mangle]
pub unsafe extern "C" fn PMPI_Fetch_and_op(origin: *const c_void, result: *mut c_void, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint, op: MPI_Op, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Fetch_and_op";
    if let Some(((prim, p), _)) = fast_acc(origin, 1, dt, Some((result, 1, dt)), 1, dt, op) {
        // SAFETY: MPI's contract: one element of `datatype` at origin (unless MPI_NO_OP) and result.
        if with_cached(w, |wn| unsafe { wn.acc_direct(prim, p, origin.cast(), result.cast(), 1, rank, disp) }) == Some(true) {
            return MPI_SUCCESS;
        }
    }
    wffi(CALL, w, || {
        let wn = win(w, CALL)?;
        let d = committed(dt, CALL, "datatype")?;
        if d.as_primitive().is_none() {
            return Err(bad(ErrorClass::Type, CALL, "datatype", "must be a predefined datatype"));
        }
        let op = acc_op(CALL, op)?;
        let noop = op.as_predefined() == Some(oxmpi_core::op::PredefinedOp::NoOp);
        check_buf(CALL, "result_addr", result, 1, &d)?;
        if !noop {
            check_buf(CALL, "origin_addr", origin, 1, &d)?;
        }
        // SAFETY: MPI's contract: one element of `datatype` at origin (unless MPI_NO_OP) and result.
        unsafe { wn.accumulate(CALL, origin.cast(), if noop { 0 } else { 1 }, &d, Some((result.cast(), 1, &d)), rank, disp, 1, &d, &op)? };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Compare_and_swap(origin: *const c_void, compare: *const c_void, result: *mut c_void, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Compare_and_swap";
    if let Some(prim) = dense_prim(dt) {
        if [origin, compare, result.cast_const()].iter().all(|&b| b as usize >= 4096) {
            // SAFETY: MPI's contract: one element of `datatype` at each buffer.
            if with_cached(w, |wn| unsafe { wn.cas_direct(prim, origin.cast(), compare.cast(), result.cast(), rank, disp) }) == Some(true) {
                return MPI_SUCCESS;
            }
        }
    }
    wffi(CALL, w, || {
        let wn = win(w, CALL)?;
        let d = committed(dt, CALL, "datatype")?;
        check_buf(CALL, "origin_addr", origin, 1, &d)?;
        check_buf(CALL, "compare_addr", compare, 1, &d)?;
        check_buf(CALL, "result_addr", result, 1, &d)?;
        // SAFETY: MPI's contract: one element of `datatype` at each buffer.
        unsafe { wn.compare_and_swap(CALL, origin.cast(), compare.cast(), result.cast(), &d, rank, disp)? };
        Ok(())
    })
}

// ----- synchronization -------------------------------------------------------------------

fn group_ranks(call: &str, wn: &Window, g: MPI_Group) -> R<Vec<i32>> {
    let grp = crate::conv::group(g, call, "group")?;
    Ok(wn.ranks_of(call, grp.world_ranks())?)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_fence(assert: c_int, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_fence";
    wffi(CALL, w, || Ok(win(w, CALL)?.fence(assert)?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_post(g: MPI_Group, assert: c_int, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_post";
    wffi(CALL, w, || {
        let wn = win(w, CALL)?;
        let ranks = group_ranks(CALL, &wn, g)?;
        Ok(wn.post(ranks, assert)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_start(g: MPI_Group, assert: c_int, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_start";
    wffi(CALL, w, || {
        let wn = win(w, CALL)?;
        let ranks = group_ranks(CALL, &wn, g)?;
        Ok(wn.start(ranks, assert)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_complete(w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_complete";
    wffi(CALL, w, || Ok(win(w, CALL)?.complete()?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_wait(w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_wait";
    wffi(CALL, w, || {
        win(w, CALL)?.wait(true)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_test(w: MPI_Win, flag: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Win_test";
    wffi(CALL, w, || {
        // SAFETY: OUT argument of the C caller: NULL (rejected) or writable and unaliased.
        let f = unsafe { out(CALL, "flag", flag)? };
        *f = win(w, CALL)?.wait(false)? as c_int;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_lock(lock_type: c_int, rank: c_int, assert: c_int, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_lock";
    // The thread's cached window: no table look-up, no `Arc` clone.
    let kind = match lock_type {
        MPI_LOCK_SHARED => Some(LockKind::Shared),
        MPI_LOCK_EXCLUSIVE => Some(LockKind::Exclusive),
        _ => None,
    };
    if let Some(res) = kind.and_then(|k| with_cached(w, |wn| wn.lock(k, rank, assert))) {
        return cached_result(CALL, w, res);
    }
    wffi(CALL, w, || {
        let wn = win(w, CALL)?;
        let kind = match lock_type {
            MPI_LOCK_SHARED => LockKind::Shared,
            MPI_LOCK_EXCLUSIVE => LockKind::Exclusive,
            t => return Err(bad(ErrorClass::Locktype, CALL, "lock_type", format!("{t} is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE"))),
        };
        Ok(wn.lock(kind, rank, assert)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_unlock(rank: c_int, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_unlock";
    if let Some(res) = with_cached(w, |wn| wn.unlock(rank)) {
        return cached_result(CALL, w, res);
    }
    wffi(CALL, w, || Ok(win(w, CALL)?.unlock(rank)?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_lock_all(assert: c_int, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_lock_all";
    wffi(CALL, w, || Ok(win(w, CALL)?.lock_all(assert)?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_unlock_all(w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_unlock_all";
    wffi(CALL, w, || Ok(win(w, CALL)?.unlock_all()?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_flush(rank: c_int, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_flush";
    if with_cached(w, |wn| wn.flush_direct(rank)) == Some(true) {
        return MPI_SUCCESS;
    }
    wffi(CALL, w, || Ok(win(w, CALL)?.flush(CALL, Some(rank))?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_flush_local(rank: c_int, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_flush_local";
    if with_cached(w, |wn| wn.flush_direct(rank)) == Some(true) {
        return MPI_SUCCESS;
    }
    wffi(CALL, w, || Ok(win(w, CALL)?.flush(CALL, Some(rank))?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_flush_all(w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_flush_all";
    wffi(CALL, w, || Ok(win(w, CALL)?.flush(CALL, None)?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_flush_local_all(w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_flush_local_all";
    wffi(CALL, w, || Ok(win(w, CALL)?.flush(CALL, None)?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_sync(w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_sync";
    wffi(CALL, w, || {
        win(w, CALL)?.sync();
        Ok(())
    })
}

/// Windows still open at MPI_Finalize (the program did not free them): nothing to
/// do but forget them; their segments go with the process.
pub fn live_windows() -> usize {
    wins().iter().count()
}
