//! Diagnosis: what a rank blocked inside MPI waits for, told to the launcher.
//!
//! Our `mpiexec` gives every local rank a slot of a shared status page
//! (`transport::status`). Nothing is written there while the program runs:
//! a blocking send, receive or probe hands its wait a closure that builds its
//! [`Call`] (run only if the wait turns idle: nothing is recorded on the fast
//! path); a blocking collective numbers itself on its communicator (one
//! relaxed atomic add) and keeps its [`Call`] in a thread-local; the C name
//! the program used is read from the stack at publication. The blocking-wait
//! loops carry a [`Watch`] on their stack whose fast path is one predictable
//! branch on return. Only
//! when a wait has been idle (asleep, no progress) for `OXMPI_HANG_AFTER`
//! seconds does the rank publish itself blocked: the call as the user made
//! it, the world ranks it waits for, the collective and its sequence number,
//! the caller's location (symbolized from a backtrace, file:line with debug
//! info), and its per-peer packet counters. Any progress marks it running
//! again. The launcher declares a deadlock only when every live rank is
//! published blocked, no slot changed between two looks, and every pair's
//! counters agree (nothing in flight, packets to finished ranks aside): a
//! fixed point no rank can leave.
//!
//! Text keys of a published slot (one `key=value` per line):
//! `call` (the MPI function), `args` (its arguments, readable), `waits`
//! (world ranks, comma separated, or `any`), `coll` (`CONTEXT SEQ NAME ROOT`,
//! root `-` when none), `comm` (communicator name), `members` (world ranks
//! of the collective's communicator), `req` (one pending request each),
//! `at` (the caller).
//!
//! The module's files: this one (the call records and communicators by
//! context id), `status.rs` (the status page and the blocking waits' watch),
//! `describe.rs` (the readable description and the caller's location, also
//! where objects were made), `origins.rs` (checking mode's record of where
//! each live C handle was made), `trace.rs` (the timeline of
//! `mpiexec --trace`).

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use oxmpi_pmi::status as layout;

use crate::comm::{Comm, CommInner, SELF_CONTEXT, WORLD_CONTEXT};
use crate::datatype::Datatype;
use crate::runtime::Engine;
use crate::transport::status::StatusPage;

mod describe;
mod origins;
mod status;
mod trace;

pub(crate) use describe::Pending;
pub use describe::{origin_here, Origin};
pub use origins::{handle_freed, handle_made, handle_origin};
pub use status::hang_after;
pub(crate) use status::{background_thread, finalizing, init, BackgroundJob, Watch};
pub(crate) use trace::{finish_trace, init_trace, trace_recv, trace_send, trace_send_at};
pub use trace::{trace_call, trace_now, trace_wants, tracing};

/// What kind of blocking call a [`Call`] records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A blocking send to one peer (`peer` in the communicator).
    Send,
    /// A blocking receive from one peer or any.
    Recv,
    /// A probe.
    Probe,
    /// A blocking collective.
    Coll,
}

/// The arguments of the blocking call in progress on this thread.
#[derive(Clone, Copy, Debug)]
pub struct Call {
    pub name: &'static str,
    pub kind: Kind,
    /// The communicator's point-to-point context id.
    pub ctx: u32,
    /// Peer or root, as a rank of the communicator (`ANY_SOURCE` = -1).
    pub peer: i32,
    /// The same peer as a world rank (-1 = any).
    pub peer_world: i32,
    pub tag: i32,
    pub count: usize,
    /// Bytes of the message (for derived datatypes, whose name is not kept).
    pub bytes: usize,
    pub dtype: Option<&'static str>,
    /// The collective's sequence number on the communicator (from 1).
    pub seq: u32,
    /// Whether `peer` is a root (collectives).
    pub has_root: bool,
}

thread_local! {
    static CALL: Cell<Option<Call>> = const { Cell::new(None) };
}

/// Clears the call record when the blocking call returns.
pub struct Scope {
    clear: bool,
}

impl Drop for Scope {
    #[inline]
    fn drop(&mut self) {
        if self.clear {
            CALL.with(|c| c.set(None));
        }
    }
}

fn enter(call: Call) -> Scope {
    CALL.with(|c| c.set(Some(call)));
    Scope { clear: true }
}

thread_local! {
    /// Inside checking mode's own exchange (not numbered, not checked).
    static IN_CHECK: Cell<bool> = const { Cell::new(false) };
}

/// `(check, sync)`: `OXMPI_CHECK=1`, `OXMPI_SYNC_COLLECTIVES=1`.
static MODE: OnceLock<(bool, bool)> = OnceLock::new();

/// Checking mode is on (`OXMPI_CHECK=1`, `mpiexec --check`). Inlined: the C
/// layer asks once per immediate send and receive (bench/PROFILE.md, rrate33).
#[inline]
pub fn checking() -> bool {
    mode().0
}

/// Whether collectives are checked or synchronized across ranks
/// (`OXMPI_CHECK`, `OXMPI_SYNC_COLLECTIVES`): then even a call with nothing to
/// move goes through [`coll`] (its empty-call exit comes after it).
#[inline]
pub fn coll_checked() -> bool {
    let (check, sync) = mode();
    check || sync
}

#[inline]
fn mode() -> (bool, bool) {
    *MODE.get_or_init(|| {
        let on = |k: &str| std::env::var(k).is_ok_and(|v| !v.is_empty() && v != "0");
        (on("OXMPI_CHECK"), on("OXMPI_SYNC_COLLECTIVES"))
    })
}

fn world_of(comm: &Comm, peer: i32) -> i32 {
    let group = comm.0.remote_group.as_deref().unwrap_or(&comm.0.group);
    usize::try_from(peer)
        .ok()
        .and_then(|p| group.get(p))
        .map_or(-1, |&w| w as i32)
}

/// A blocking point-to-point call (`peer` in `comm`, `bytes` packed bytes),
/// described when its wait has been idle for long (never on the fast path).
#[allow(clippy::too_many_arguments)]
pub fn p2p(
    name: &'static str,
    send: bool,
    comm: &Comm,
    peer: i32,
    tag: i32,
    count: usize,
    dt: Option<&Datatype>,
    bytes: usize,
) -> Option<Call> {
    Some(Call {
        name,
        kind: if send { Kind::Send } else { Kind::Recv },
        ctx: comm.0.context,
        peer,
        peer_world: world_of(comm, peer),
        tag,
        count,
        bytes,
        dtype: dt.and_then(|d| d.as_primitive()).map(|p| p.name()),
        seq: 0,
        has_root: false,
    })
}

/// A blocking probe (described as [`p2p`]).
pub fn probe(name: &'static str, comm: &Comm, peer: i32, tag: i32) -> Option<Call> {
    Some(Call {
        kind: Kind::Probe,
        ..p2p_call(name, comm, peer, tag)
    })
}

fn p2p_call(name: &'static str, comm: &Comm, peer: i32, tag: i32) -> Call {
    Call {
        name,
        kind: Kind::Recv,
        ctx: comm.0.context,
        peer,
        peer_world: world_of(comm, peer),
        tag,
        count: 0,
        bytes: 0,
        dtype: None,
        seq: 0,
        has_root: false,
    }
}

/// A blocking collective: counts it on `comm` (its sequence number there)
/// and, in checking mode, compares the call across ranks first.
#[inline]
pub fn coll(
    name: &'static str,
    comm: &Comm,
    root: Option<i32>,
    count: usize,
    dt: Option<&Datatype>,
    op: Option<&crate::op::Op>,
) -> crate::error::Result<Scope> {
    if IN_CHECK.with(|c| c.get()) {
        return Ok(Scope { clear: false });
    }
    let seq = comm
        .0
        .diag_seq
        .fetch_add(1, Ordering::Relaxed)
        .wrapping_add(1);
    let (check, sync) = mode();
    let scope = record_coll(name, comm, root, count, dt, seq);
    if (check || sync) && !comm.is_inter() && comm.size() > 1 {
        IN_CHECK.with(|c| c.set(true));
        let cname = comm_name(comm.0.context, Some(comm));
        let r = crate::coll::check::verify(name, comm, &cname, seq, root, count, dt, op, check);
        IN_CHECK.with(|c| c.set(false));
        r?;
    }
    Ok(scope)
}

fn record_coll(
    name: &'static str,
    comm: &Comm,
    root: Option<i32>,
    count: usize,
    dt: Option<&Datatype>,
    seq: u32,
) -> Scope {
    enter(Call {
        name,
        kind: Kind::Coll,
        ctx: comm.0.context,
        peer: root.unwrap_or(-1),
        peer_world: root.map_or(-1, |r| world_of(comm, r)),
        tag: 0,
        count,
        bytes: 0,
        dtype: dt.and_then(|d| d.as_primitive()).map(|p| p.name()),
        seq,
        has_root: root.is_some(),
    })
}

// ----- communicators by context id ------------------------------------------------

/// What a blocked rank needs to know of a communicator: no reference to the
/// communicator itself (that would change its reference counts).
struct Known {
    ctx: u32,
    name: String,
    members: Vec<u32>,
}

static COMMS: Mutex<Vec<Known>> = Mutex::new(Vec::new());

fn known() -> std::sync::MutexGuard<'static, Vec<Known>> {
    COMMS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Remembers a communicator so a blocked rank can name it and its members.
pub(crate) fn register(comm: &CommInner) {
    let mut members: Vec<u32> = comm.group.to_vec();
    if let Some(r) = &comm.remote_group {
        members.extend_from_slice(r);
    }
    let name = comm.name.lock().map(|n| n.clone()).unwrap_or_default();
    let mut v = known();
    // A communicator borrowing another's context (MPI_Comm_create_group's
    // temporaries) does not replace it.
    if !comm.owns_context && v.iter().any(|k| k.ctx == comm.context) {
        return;
    }
    v.retain(|k| k.ctx != comm.context);
    v.push(Known {
        ctx: comm.context,
        name,
        members,
    });
}

/// The communicator with context `ctx` is gone.
pub(crate) fn unregister(ctx: u32) {
    known().retain(|k| k.ctx != ctx);
}

/// MPI_Comm_set_name.
pub(crate) fn rename(ctx: u32, name: &str) {
    if let Some(k) = known().iter_mut().find(|k| k.ctx == ctx) {
        k.name = name.to_string();
    }
}

/// Name and members of the communicator owning context `ctx` (its
/// point-to-point context, or `ctx - 1` for its collective traffic).
fn comm_info(ctx: u32) -> (String, Option<Vec<u32>>) {
    let v = known();
    let found = |c: u32| v.iter().find(|k| k.ctx == c);
    let named = |k: &Known, c: u32| -> String {
        if !k.name.is_empty() {
            k.name.clone()
        } else {
            match c {
                WORLD_CONTEXT => "MPI_COMM_WORLD".into(),
                SELF_CONTEXT => "MPI_COMM_SELF".into(),
                c => format!("communicator #{c}"),
            }
        }
    };
    if let Some(k) = found(ctx) {
        return (named(k, ctx), Some(k.members.clone()));
    }
    if let Some(k) = ctx.checked_sub(1).and_then(found) {
        return (
            format!("{} (collective traffic)", named(k, ctx - 1)),
            Some(k.members.clone()),
        );
    }
    (format!("communicator #{ctx}"), None)
}

fn comm_name(ctx: u32, _comm: Option<&Comm>) -> String {
    comm_info(ctx).0
}
