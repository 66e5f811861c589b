//! Handle lookups: a C handle to the engine's object (communicators, datatypes,
//! groups, operations, info objects), and an engine object to a new C handle.
//! Every lookup validates the handle against its table and names the call and
//! the argument when it is not valid.

use oxmpi_core::datatype::Datatype;
use oxmpi_core::error::ErrorClass;
use oxmpi_core::group::Group;
use oxmpi_core::op::Op;
use oxmpi_core::runtime;
use oxmpi_core::{Comm, Request};

use crate::abi::*;
use crate::conv::errors::{bad, R};
use crate::conv::handles::{state, Hook, PendingIdup, PersistentOp, RequestEntry};
use crate::conv::session::{comm_session, tag_comm};
use crate::types::*;

// ----- communicators ------------------------------------------------------------------

/// The engine communicator of a handle.
/// [`comm`] without a reference count taken for the predefined communicators
/// (the hot path of point-to-point calls).
/// Outside the World model (before MPI_Init, after MPI_Finalize with a session
/// still open) the two are refused as [`comm`] refuses them (capi31: they were
/// borrowed here without that check).
pub fn comm_ref(h: MPI_Comm, call: &str) -> R<std::borrow::Cow<'static, Comm>> {
    comm_cow(h, call)
}

/// The hot case of the point-to-point calls (bench/PROFILE.md, p2p18):
/// MPI_COMM_WORLD or MPI_COMM_SELF, a predefined datatype whose elements lie
/// back to back, a count >= 0 and a buffer the general path accepts. Gives
/// the engine's objects borrowed (no table, no reference count) and the byte
/// length; `None` sends the call to [`fast_p2p_user`], then down the general
/// path, which also reports every error there is.
#[inline]
pub fn fast_p2p(
    c: MPI_Comm,
    h: MPI_Datatype,
    buf: *const std::ffi::c_void,
    count: i64,
) -> Option<(&'static Comm, &'static Datatype, usize)> {
    fast_p2p_with_engine(c, h, buf, count).map(|(_, cm, dt, len)| (cm, dt, len))
}

/// [`fast_p2p`], also giving the engine it found running, for a call that
/// hands it on instead of looking it up again (MPI_Isend: bench/PROFILE.md, rrate37).
#[inline(always)]
pub fn fast_p2p_with_engine(
    c: MPI_Comm,
    h: MPI_Datatype,
    buf: *const std::ffi::c_void,
    count: i64,
) -> Option<(
    &'static runtime::Engine,
    &'static Comm,
    &'static Datatype,
    usize,
)> {
    // The World model active (inlined loads, no `Result` made): outside it, or after
    // MPI_Finalize with a session still open, the general path reports MPI_ERR_COMM.
    let e = runtime::world_engine()?;
    let cm = match c {
        MPI_COMM_WORLD => e.world(),
        MPI_COMM_SELF => e.self_comm(),
        _ => return None,
    };
    let (dt, len) = fast_data(h, buf, count)?;
    Some((e, cm, dt, len))
}

/// [`fast_p2p`] for the user communicator this thread looked up last
/// ([`cached_comm`], capi31); `None` for every other handle.
#[inline]
pub fn fast_p2p_user(
    c: MPI_Comm,
    h: MPI_Datatype,
    buf: *const std::ffi::c_void,
    count: i64,
) -> Option<(Comm, &'static Datatype, usize)> {
    if c < 4096 {
        return None;
    }
    runtime::world_engine()?;
    let (dt, len) = fast_data(h, buf, count)?;
    Some((cached_comm(c)?, dt, len))
}

/// The datatype and byte length of the fast point-to-point paths.
#[inline(always)]
fn fast_data(
    h: MPI_Datatype,
    buf: *const std::ffi::c_void,
    count: i64,
) -> Option<(&'static Datatype, usize)> {
    if count < 0 {
        return None;
    }
    // One indexed load (rate21): the handle's datatype and element size, or
    // `None` for every handle that is not a predefined contiguous type.
    let &(dt, size) = fast_datatypes().get(h)?.as_ref()?;
    let len = (count as usize)
        .checked_mul(size)
        .filter(|&n| n <= isize::MAX as usize)?;
    // `check_buf`'s refusal (NULL, or the null page, holding data) is the general path's to report.
    if len > 0 && (buf as usize) < 4096 {
        return None;
    }
    Some((dt, len))
}

/// Handles below this are looked at by [`fast_datatypes`]: every predefined
/// datatype handle of the ABI but MPI_LB/MPI_UB (markers, never contiguous).
const FAST_DATATYPE_HANDLES: usize = 0x300;

/// Per datatype handle below [`FAST_DATATYPE_HANDLES`]: the predefined
/// datatype and its size in bytes when its elements lie back to back (the
/// types [`fast_p2p`] takes), `None` for every other handle (MPI_DATATYPE_NULL,
/// pair types with a gap, numbers that name no type). Made once; the hot path
/// then finds a type with one indexed load instead of the handle's primitive,
/// the predefined table and the layout's contiguity test (~45 instructions per
/// call, bench/PROFILE.md rate21).
type FastDatatype = Option<(&'static Datatype, usize)>;

fn fast_datatypes() -> &'static [FastDatatype] {
    static TABLE: std::sync::OnceLock<Box<[FastDatatype]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0..FAST_DATATYPE_HANDLES)
            .map(|h| {
                if h == MPI_DATATYPE_NULL || h == MPI_LB || h == MPI_UB {
                    return None;
                }
                let dt = Datatype::predefined_ref(crate::abi::primitive_from_handle(h)?);
                dt.is_contiguous().then(|| (dt, dt.size()))
            })
            .collect()
    })
}

/// The predefined datatype of handle `h` when its elements lie back to back
/// (every predefined datatype but MPI_LB/MPI_UB and the pair types with a gap):
/// [`fast_datatypes`]' one indexed load, `None` for every other handle, which
/// the general look-up ([`committed`]) then answers or reports.
#[inline]
pub fn fast_datatype(h: MPI_Datatype) -> Option<&'static Datatype> {
    fast_datatypes().get(h)?.as_ref().map(|&(dt, _)| dt)
}

/// [`comm`] borrowed, without the reference count taken and dropped, for
/// MPI_COMM_WORLD and MPI_COMM_SELF while the World model is active (the
/// collectives' common case); every other handle, and those two outside
/// MPI_Init..MPI_Finalize, through [`comm`] and its checks and errors.
#[inline]
pub fn comm_cow(h: MPI_Comm, call: &str) -> R<std::borrow::Cow<'static, Comm>> {
    if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
        if let Some(e) = runtime::world_engine() {
            return Ok(std::borrow::Cow::Borrowed(if h == MPI_COMM_WORLD {
                e.world()
            } else {
                e.self_comm()
            }));
        }
    }
    comm(h, call).map(std::borrow::Cow::Owned)
}

pub fn comm(h: MPI_Comm, call: &str) -> R<Comm> {
    let e = runtime::engine()?;
    match h {
        MPI_COMM_WORLD | MPI_COMM_SELF if !runtime::world_active() => Err(bad(
            ErrorClass::Comm,
            call,
            "comm",
            format!(
                "{} exists only between MPI_Init and MPI_Finalize; with sessions, make communicators \
                 with MPI_Group_from_session_pset and MPI_Comm_create_from_group",
                if h == MPI_COMM_WORLD { "MPI_COMM_WORLD" } else { "MPI_COMM_SELF" }
            ),
        )),
        MPI_COMM_WORLD => Ok(e.world().clone()),
        MPI_COMM_SELF => Ok(e.self_comm().clone()),
        MPI_COMM_NULL => Err(bad(ErrorClass::Comm, call, "comm", "MPI_COMM_NULL")),
        _ => user_comm(h, call),
    }
}

/// Communicator handles freed so far (`MPI_Comm_free`, and so `MPI_Comm_disconnect`):
/// the entry [`user_comm`] keeps per thread is trusted only while this count is
/// unchanged, so a freed handle fails its next look-up even while something else
/// (a persistent request, a pending operation) keeps the communicator alive.
static COMM_FREES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Removes a communicator handle from the table (MPI_Comm_free's one removal) and
/// records the free for [`user_comm`]'s per-thread entries.
pub fn remove_comm(st: &mut crate::conv::handles::State, h: MPI_Comm) -> Option<Comm> {
    let c = st.comms.remove(h);
    COMM_FREES.fetch_add(1, std::sync::atomic::Ordering::Release);
    c
}

thread_local! {
    /// The user communicator this thread looked up last: (handle, [`COMM_FREES`]
    /// before the look-up, the communicator held weakly, so a cached entry never
    /// keeps a freed communicator's context id and shared area alive).
    static LAST_COMM: std::cell::RefCell<Option<(MPI_Comm, u64, std::sync::Weak<oxmpi_core::comm::CommInner>)>> =
        const { std::cell::RefCell::new(None) };
}

/// A communicator made at run time: the thread's last look-up when it was of the
/// same handle and no communicator was freed since, with no lock of the handle
/// tables (the point-to-point calls and collectives on a user communicator;
/// bench/PROFILE.md, capi31); else the table, under its lock.
fn user_comm(h: MPI_Comm, call: &str) -> R<Comm> {
    // Counted before the look-up: a free racing with it invalidates the entry.
    let frees = COMM_FREES.load(std::sync::atomic::Ordering::Acquire);
    if let Some(c) = cached_at(h, frees) {
        return Ok(c);
    }
    let c = state().comms.get(h).cloned().ok_or_else(|| {
        bad(
            ErrorClass::Comm,
            call,
            "comm",
            format!("{h:#x} is not a valid communicator handle (freed, or never created)"),
        )
    })?;
    let w = std::sync::Arc::downgrade(&c.0);
    let _ = LAST_COMM.try_with(|e| *e.borrow_mut() = Some((h, frees, w)));
    Ok(c)
}

/// The user communicator `h` when it is this thread's last look-up and no
/// communicator was freed since; `None` otherwise (the table's look-up decides).
#[inline]
pub fn cached_comm(h: MPI_Comm) -> Option<Comm> {
    cached_at(h, COMM_FREES.load(std::sync::atomic::Ordering::Acquire))
}

/// [`cached_comm`] with the count of frees already read.
#[inline]
fn cached_at(h: MPI_Comm, frees: u64) -> Option<Comm> {
    LAST_COMM
        .try_with(|c| match &*c.borrow() {
            Some((x, f, w)) if *x == h && *f == frees => w.upgrade().map(Comm),
            _ => None,
        })
        .ok()
        .flatten()
}

/// A handle for a communicator made at run time; it starts with its parent's
/// error handler (MPI: "the new communicator inherits the error handler").
/// A communicator derived from one of a session's belongs to that session.
pub fn new_comm(c: Comm, parent: MPI_Comm) -> MPI_Comm {
    let h = {
        let mut st = state();
        let h = st.comms.insert(c.clone());
        if let Some(eh) = st.comm_errhandler.get(&parent).copied() {
            st.comm_errhandler.insert(h, eh);
        }
        h
    };
    tag_comm(h, &c, comm_session(parent));
    h
}

/// `new_comm` for constructors that give some ranks no communicator.
pub fn new_comm_or_null(c: Option<Comm>, parent: MPI_Comm) -> MPI_Comm {
    c.map_or(MPI_COMM_NULL, |c| new_comm(c, parent))
}

/// At an idup's completion: the new communicator gets its handle (with the
/// parent's error handler and the hints) and the caller's `newcomm` gets it.
pub fn finish_idup(call: &str, p: PendingIdup) -> R<()> {
    let d = p.pending.take().ok_or_else(|| {
        oxmpi_core::MpiError::intern(call, "MPI_Comm_idup completed without a communicator")
    })?;
    let h = new_comm(d, p.parent);
    if let Some(kv) = p.hints {
        state().comm_info.insert(h, kv);
    }
    // `newcomm` was MPI_Comm_idup's OUT argument, checked non-NULL there.
    // SAFETY: MPI keeps it valid and untouched by the caller until the request completes (now).
    unsafe { *(p.newcomm as *mut MPI_Comm) = h };
    Ok(())
}

// ----- datatypes ----------------------------------------------------------------------

/// The engine datatype of a handle (committed or not).
pub fn datatype(h: MPI_Datatype, call: &str, arg: &str) -> R<Datatype> {
    if h == MPI_DATATYPE_NULL {
        return Err(bad(ErrorClass::Type, call, arg, "MPI_DATATYPE_NULL"));
    }
    if h < 4096 {
        if h == MPI_LB {
            return Ok(Datatype::lb_marker());
        }
        if h == MPI_UB {
            return Ok(Datatype::ub_marker());
        }
        return crate::abi::primitive_from_handle(h)
            .map(Datatype::predefined)
            .ok_or_else(|| {
                bad(
                    ErrorClass::Type,
                    call,
                    arg,
                    format!("{h:#x} is not a predefined datatype oxmpi supports"),
                )
            });
    }
    state().datatypes.get(h).cloned().ok_or_else(|| {
        bad(
            ErrorClass::Type,
            call,
            arg,
            format!("{h:#x} is not a valid datatype handle (freed, or never created)"),
        )
    })
}

/// [`committed`] without a reference count taken for predefined datatypes
/// (the hot path of point-to-point calls).
pub fn committed_ref(
    h: MPI_Datatype,
    call: &str,
    arg: &str,
) -> R<std::borrow::Cow<'static, Datatype>> {
    // The contiguous predefined types: one indexed load (`fast_datatypes`).
    if let Some(dt) = fast_datatype(h) {
        return Ok(std::borrow::Cow::Borrowed(dt));
    }
    if h != MPI_DATATYPE_NULL && h < 4096 && h != MPI_LB && h != MPI_UB {
        if let Some(p) = crate::abi::primitive_from_handle(h as usize) {
            return Ok(std::borrow::Cow::Borrowed(Datatype::predefined_ref(p)));
        }
    }
    committed(h, call, arg).map(std::borrow::Cow::Owned)
}

/// A committed datatype for communication, pack and reductions.
pub fn committed(h: MPI_Datatype, call: &str, arg: &str) -> R<Datatype> {
    let dt = datatype(h, call, arg)?;
    if !dt.is_committed() {
        return Err(bad(
            ErrorClass::Type,
            call,
            arg,
            "the datatype is not committed (call MPI_Type_commit)",
        ));
    }
    Ok(dt)
}

/// A handle for an engine datatype handed back to C: the predefined value, or
/// a new handle (the standard makes the caller free derived ones).
pub fn new_handle(dt: &Datatype) -> MPI_Datatype {
    if let Some(p) = dt.as_primitive() {
        return crate::abi::primitive_handle(p);
    }
    if dt.ptr_eq(&Datatype::lb_marker()) {
        return MPI_LB;
    }
    if dt.ptr_eq(&Datatype::ub_marker()) {
        return MPI_UB;
    }
    state().datatypes.insert(dt.clone())
}

/// A handle for an engine datatype, reusing a live one if there is (for user
/// reduction functions, which must not leak handles).
pub fn find_handle(dt: &Datatype) -> MPI_Datatype {
    if let Some(p) = dt.as_primitive() {
        return crate::abi::primitive_handle(p);
    }
    let found = state()
        .datatypes
        .iter()
        .find(|(_, d)| d.ptr_eq(dt))
        .map(|(h, _)| h);
    found.unwrap_or_else(|| new_handle(dt))
}

// ----- groups -------------------------------------------------------------------------

/// The engine group of a handle.
pub fn group(h: MPI_Group, call: &str, arg: &str) -> R<Group> {
    match h {
        MPI_GROUP_EMPTY => Ok(Group::empty()),
        MPI_GROUP_NULL => Err(bad(ErrorClass::Group, call, arg, "MPI_GROUP_NULL")),
        _ => state().groups.get(h).cloned().ok_or_else(|| {
            bad(
                ErrorClass::Group,
                call,
                arg,
                format!("{h:#x} is not a valid group handle (freed, or never created)"),
            )
        }),
    }
}

/// Groups freed so far (`MPI_Group_free`): the entry [`group_cached`] keeps per
/// thread is trusted only while this count is unchanged (a freed handle must
/// fail its next lookup).
static GROUP_FREES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Records that a group handle was freed (after its removal from the table).
pub fn group_freed() {
    GROUP_FREES.fetch_add(1, std::sync::atomic::Ordering::Release);
}

thread_local! {
    /// The group this thread looked up last through [`group_cached`]: (handle,
    /// [`GROUP_FREES`] before the look-up, the group).
    static LAST_GROUP: std::cell::RefCell<Option<(MPI_Group, u64, Group)>> =
        const { std::cell::RefCell::new(None) };
}

/// [`group`] through the thread's last look-up when it was of the same handle
/// and no group was freed since (no lock of the handle tables): for calls that
/// name one group again and again (MPI_Win_post and MPI_Win_start in a loop).
pub fn group_cached(h: MPI_Group, call: &str, arg: &str) -> R<Group> {
    // Counted before the look-up: a free racing with it invalidates the entry.
    let frees = GROUP_FREES.load(std::sync::atomic::Ordering::Acquire);
    let hit = LAST_GROUP
        .try_with(|c| match &*c.borrow() {
            Some((x, f, g)) if *x == h && *f == frees => Some(g.clone()),
            _ => None,
        })
        .ok()
        .flatten();
    if let Some(g) = hit {
        return Ok(g);
    }
    let g = group(h, call, arg)?;
    let _ = LAST_GROUP.try_with(|c| *c.borrow_mut() = Some((h, frees, g.clone())));
    Ok(g)
}

/// A handle for a group: MPI_GROUP_EMPTY when it has no members.
pub fn new_group(g: Group) -> MPI_Group {
    if g.is_empty() {
        MPI_GROUP_EMPTY
    } else {
        state().groups.insert(g)
    }
}

// ----- reduction operations -----------------------------------------------------------

/// The engine operation of a handle.
pub fn op(h: MPI_Op, call: &str) -> R<Op> {
    if h == MPI_OP_NULL {
        return Err(bad(ErrorClass::Op, call, "op", "MPI_OP_NULL"));
    }
    if h < 4096 {
        return crate::abi::op_from_handle(h)
            .map(Op::predefined)
            .ok_or_else(|| {
                bad(
                    ErrorClass::Op,
                    call,
                    "op",
                    format!("{h:#x} is not a predefined operation"),
                )
            });
    }
    state().ops.get(h).cloned().ok_or_else(|| {
        bad(
            ErrorClass::Op,
            call,
            "op",
            format!("{h:#x} is not a valid operation handle (freed, or never created)"),
        )
    })
}

/// Operation handles [`predefined_ops`] covers, from MPI_OP_NULL on (every
/// predefined operation of the ABI; `coll::empty`'s table covers the same).
const OP_HANDLES: usize = 32;

/// Per operation handle from MPI_OP_NULL: the engine's shared instance of the
/// predefined operation, `None` for MPI_OP_NULL and numbers that name none. Made
/// once; [`op_cow`] then borrows it with one indexed load.
fn predefined_ops() -> &'static [Option<Op>] {
    static TABLE: std::sync::OnceLock<Box<[Option<Op>]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0..OP_HANDLES)
            .map(|i| match MPI_OP_NULL + i {
                MPI_OP_NULL => None,
                h => crate::abi::op_from_handle(h).map(Op::predefined),
            })
            .collect()
    })
}

/// [`op`] borrowed for the predefined operations (no reference count taken and
/// dropped, no handle match); MPI_OP_NULL, user operations and invalid handles
/// through [`op`], its checks and errors.
#[inline]
pub fn op_cow(h: MPI_Op, call: &str) -> R<std::borrow::Cow<'static, Op>> {
    if let Some(Some(o)) = predefined_ops().get(h.wrapping_sub(MPI_OP_NULL)) {
        return Ok(std::borrow::Cow::Borrowed(o));
    }
    op(h, call).map(std::borrow::Cow::Owned)
}

// ----- info objects -------------------------------------------------------------------

/// The keys of MPI_INFO_ENV (the standard's reserved names this job can answer).
pub fn env_info() -> Vec<(String, String)> {
    let mut kv = vec![];
    if let Some(cmd) = std::env::args().next() {
        kv.push(("command".to_string(), cmd));
    }
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if !argv.is_empty() {
        kv.push(("argv".to_string(), argv.join(" ")));
    }
    // The same answer before MPI_Init, while MPI runs and after MPI_Finalize: the
    // launcher's job size (PMI_SIZE), the running world's size, or 1 for a singleton.
    let maxprocs = match oxmpi_core::runtime::engine() {
        Ok(e) => e.size().to_string(),
        Err(_) => std::env::var("PMI_SIZE")
            .ok()
            .filter(|s| s.parse::<u32>().is_ok())
            .unwrap_or_else(|| "1".to_string()),
    };
    kv.push(("maxprocs".to_string(), maxprocs));
    if let Ok(d) = std::env::current_dir() {
        kv.push(("wdir".to_string(), d.display().to_string()));
    }
    kv.push(("thread_level".to_string(), "MPI_THREAD_SINGLE".to_string()));
    kv
}

pub fn with_info<T>(
    call: &str,
    h: MPI_Info,
    f: impl FnOnce(&mut Vec<(String, String)>) -> R<T>,
) -> R<T> {
    if h == MPI_INFO_ENV {
        // Read-only: queries see the job's values; changes are not kept.
        return f(&mut env_info());
    }
    let mut st = state();
    let v = st.infos.get_mut(h).ok_or_else(|| {
        crate::conv::errors::bad_code(
            MPI_ERR_INFO,
            call,
            "info",
            format!("{h:#x} is not a valid info object"),
        )
    })?;
    f(v)
}

// ----- requests -----------------------------------------------------------------------

pub fn new_request(r: Request, c: MPI_Comm, persistent: Option<PersistentOp>) -> MPI_Request {
    state().requests.insert(RequestEntry {
        inner: r,
        comm: c,
        persistent,
        hook: Hook::None,
    })
}

/// The handle of a new, inactive persistent collective whose starts run `plan`.
pub fn new_persistent_coll(plan: oxmpi_core::coll::persistent::Plan, c: MPI_Comm) -> MPI_Request {
    new_request(
        Request::NULL,
        c,
        Some(PersistentOp::Plan(std::sync::Arc::new(plan))),
    )
}

/// A handle for a plain point-to-point request (MPI_Isend, MPI_Irecv): the
/// engine's request itself on a predefined communicator (`handles::direct_request`),
/// else a table entry.
#[inline]
pub fn new_p2p_request(r: Request, c: MPI_Comm) -> MPI_Request {
    match crate::conv::handles::direct_request(r, c) {
        Some(h) => h,
        None => new_request(r, c, None),
    }
}

/// The communicator a request handle's errors go to, if the handle is live in this layer.
pub fn request_comm(h: MPI_Request) -> Option<MPI_Comm> {
    match crate::conv::handles::direct_of(h) {
        Some((_, c)) => Some(c),
        None => state().requests.get(h).map(|e| e.comm),
    }
}

/// A request handle with work for this layer at completion.
pub fn new_hooked_request(r: Request, c: MPI_Comm, hook: Hook) -> MPI_Request {
    state().requests.insert(RequestEntry {
        inner: r,
        comm: c,
        persistent: None,
        hook,
    })
}

/// Takes the engine request out of the handle a starter made.
pub fn engine_request_of(h: MPI_Request) -> Request {
    if let Some((r, _)) = crate::conv::handles::direct_of(h) {
        return r;
    }
    state()
        .requests
        .remove(h)
        .map_or(Request::NULL, |e| e.inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table answers as the look-ups it replaced: every handle the ABI's
    /// predefined range can hold, contiguous types with their sizes, the rest none.
    #[test]
    fn fast_datatype_table_agrees_with_the_lookups_it_replaces() {
        let mut found = 0;
        for h in 0..4096usize {
            let expect = if h == MPI_DATATYPE_NULL || h == MPI_LB || h == MPI_UB {
                None
            } else {
                crate::abi::primitive_from_handle(h)
                    .map(Datatype::predefined_ref)
                    .filter(|d| d.is_contiguous())
                    .map(|d| (d.as_primitive(), d.size()))
            };
            let got = fast_datatypes()
                .get(h)
                .and_then(|x| x.as_ref())
                .map(|(d, n)| (d.as_primitive(), *n));
            assert_eq!(got, expect, "datatype handle {h:#x}");
            found += got.is_some() as usize;
        }
        // MPI_CHAR, MPI_INT, MPI_DOUBLE, ... (the C, Fortran and fixed-size types).
        assert!(found > 40, "only {found} fast datatypes");
        assert!(fast_datatypes()[MPI_INT].is_some() && fast_datatypes()[MPI_DOUBLE_INT].is_none());
    }
}
