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

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use oxmpi_pmi::status as layout;

use crate::comm::{Comm, CommInner, SELF_CONTEXT, WORLD_CONTEXT};
use crate::datatype::Datatype;
use crate::runtime::Engine;
use crate::transport::status::StatusPage;

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

/// Checking mode is on (`OXMPI_CHECK=1`, `mpiexec --check`).
pub fn checking() -> bool {
    mode().0
}

fn mode() -> (bool, bool) {
    *MODE.get_or_init(|| {
        let on = |k: &str| std::env::var(k).is_ok_and(|v| !v.is_empty() && v != "0");
        (on("OXMPI_CHECK"), on("OXMPI_SYNC_COLLECTIVES"))
    })
}

fn world_of(comm: &Comm, peer: i32) -> i32 {
    let group = comm.0.remote_group.as_deref().unwrap_or(&comm.0.group);
    usize::try_from(peer).ok().and_then(|p| group.get(p)).map_or(-1, |&w| w as i32)
}

/// A blocking point-to-point call (`peer` in `comm`, `bytes` packed bytes),
/// described when its wait has been idle for long (never on the fast path).
#[allow(clippy::too_many_arguments)]
pub fn p2p(name: &'static str, send: bool, comm: &Comm, peer: i32, tag: i32, count: usize, dt: Option<&Datatype>, bytes: usize) -> Option<Call> {
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
    Some(Call { kind: Kind::Probe, ..p2p_call(name, comm, peer, tag) })
}

fn p2p_call(name: &'static str, comm: &Comm, peer: i32, tag: i32) -> Call {
    Call { name, kind: Kind::Recv, ctx: comm.0.context, peer, peer_world: world_of(comm, peer), tag, count: 0, bytes: 0, dtype: None, seq: 0, has_root: false }
}

/// A blocking collective: counts it on `comm` (its sequence number there)
/// and, in checking mode, compares the call across ranks first.
#[inline]
pub fn coll(name: &'static str, comm: &Comm, root: Option<i32>, count: usize, dt: Option<&Datatype>, op: Option<&crate::op::Op>) -> crate::error::Result<Scope> {
    if IN_CHECK.with(|c| c.get()) {
        return Ok(Scope { clear: false });
    }
    let seq = comm.0.diag_seq.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
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

fn record_coll(name: &'static str, comm: &Comm, root: Option<i32>, count: usize, dt: Option<&Datatype>, seq: u32) -> Scope {
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
    v.push(Known { ctx: comm.context, name, members });
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
        return (format!("{} (collective traffic)", named(k, ctx - 1)), Some(k.members.clone()));
    }
    (format!("communicator #{ctx}"), None)
}

fn comm_name(ctx: u32, _comm: Option<&Comm>) -> String {
    comm_info(ctx).0
}

// ----- the status page ------------------------------------------------------------

struct Page {
    page: Sink,
    after: Duration,
    multi: bool,
}

/// Where this rank's slot is written: the launcher's page mapped here (a rank
/// on the launcher's host), or reports over the PMI connection (a rank on
/// another host; see `oxmpi_pmi::status::STATUS_PMI_ENV`).
enum Sink {
    Page(StatusPage),
    Pmi,
}

impl Page {
    /// Publishes a state; `false` if it could not be sent now (try again later).
    fn publish(&self, state: u64, idle: Duration, sent: &[u64], recvd: &[u64], text: &str) -> bool {
        match &self.page {
            Sink::Page(page) => {
                page.publish(state, monotonic_ms().saturating_sub(idle.as_millis() as u64), sent, recvd, text);
                true
            }
            Sink::Pmi => {
                let report = layout::Report { state, idle_ms: idle.as_millis() as u64, sent: sent.to_vec(), recvd: recvd.to_vec(), text: text.to_string() };
                // A rank going back to running must be heard (a stale "blocked" could
                // count as evidence): it waits for the connection; blocked reports do not.
                crate::runtime::engine_any().is_some_and(|e| e.pmi_notify(&layout::encode_report(&report), state == layout::STATE_RUNNING))
            }
        }
    }

    fn set_running(&self) {
        match &self.page {
            Sink::Page(page) => page.set_running(),
            Sink::Pmi => {
                let _ = self.publish(layout::STATE_RUNNING, Duration::ZERO, &[], &[], "");
            }
        }
    }
}

static PAGE: OnceLock<Page> = OnceLock::new();

/// At start-up: maps this rank's status slot if the launcher made one.
pub(crate) fn init(rank: u32, size: u32, multi: bool) {
    let page = match StatusPage::from_env(rank, size) {
        Some(p) => Sink::Page(p),
        None if std::env::var_os(layout::STATUS_PMI_ENV).is_some() => Sink::Pmi,
        None => return,
    };
    let after = std::env::var(layout::HANG_AFTER_ENV)
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(Duration::from_secs(1), Duration::from_secs_f64);
    let _ = PAGE.set(Page { page, after, multi });
}

/// How long a wait stays idle before it publishes itself to the launcher
/// (`OXMPI_HANG_AFTER`; 1 s when mpiexec does not set it).
pub fn hang_after() -> Duration {
    match PAGE.get() {
        Some(p) => p.after,
        None => std::env::var(layout::HANG_AFTER_ENV)
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map_or(Duration::from_secs(1), Duration::from_secs_f64),
    }
}

fn monotonic_ms() -> u64 {
    (crate::runtime::wtime() * 1000.0) as u64
}

/// MPI_Finalize, past its last packet: this rank will send nothing more.
pub(crate) fn finalizing(e: &Engine) {
    let Some(p) = PAGE.get() else { return };
    let (sent, recvd) = e.lock().pair_counters();
    // No `at=` (the caller's location): the launcher reports a finalizing rank
    // as "is in MPI_Finalize" without reading its text, and symbolizing a
    // backtrace costs every rank 0.2-1 s of CPU at exit (it decompresses the
    // library's debug info; bench/PROFILE.md).
    p.publish(layout::STATE_FINALIZING, Duration::ZERO, &sent, &recvd, "call=MPI_Finalize\nargs=\nwaits=\n");
}

thread_local! {
    /// Set on oxmpi's own background threads (the MPI-IO worker).
    static BACKGROUND: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as one of oxmpi's own background threads (the
/// MPI-IO worker): its waits are never published as the rank's, since the
/// program's threads may still be computing or about to call MPI; a rank is
/// blocked when a thread of the program is (waiting on the background
/// operation's request, for instance).
pub(crate) fn background_thread() {
    BACKGROUND.with(|b| b.set(true));
}

/// Background jobs (MPI-IO accesses) running now, and background threads idle in
/// an MPI wait now. While a job runs outside MPI waits (writing to the file,
/// packing), a program thread waiting for its request is not blocked: the job
/// is working for it, so the rank is not published blocked.
static BG_RUNNING: AtomicUsize = AtomicUsize::new(0);
static BG_WAITING: AtomicUsize = AtomicUsize::new(0);

/// Brackets one background job (the MPI-IO worker's access).
pub(crate) struct BackgroundJob(());

impl BackgroundJob {
    pub(crate) fn start() -> BackgroundJob {
        BG_RUNNING.fetch_add(1, Ordering::AcqRel);
        BackgroundJob(())
    }
}

impl Drop for BackgroundJob {
    fn drop(&mut self) {
        BG_RUNNING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Whether a background job is working outside an MPI wait.
fn background_working() -> bool {
    BG_RUNNING.load(Ordering::Acquire) > BG_WAITING.load(Ordering::Acquire)
}

/// Lives on a blocking wait's stack: publishes the rank blocked once the wait
/// has been idle long enough, and running again when it moves or returns.
pub(crate) struct Watch {
    idle_since: Option<Instant>,
    published: bool,
    text: Option<String>,
    /// A background thread's wait counted in `BG_WAITING`.
    bg_waiting: bool,
}

impl Watch {
    #[inline]
    pub(crate) fn new() -> Watch {
        Watch { idle_since: None, published: false, text: None, bg_waiting: false }
    }

    /// The wait is about to sleep with nothing done (slow path).
    pub(crate) fn idle(&mut self, e: &Engine, desc: &dyn Fn() -> Option<Call>) {
        let Some(p) = PAGE.get() else { return };
        if BACKGROUND.with(|b| b.get()) {
            if !self.bg_waiting {
                self.bg_waiting = true;
                BG_WAITING.fetch_add(1, Ordering::AcqRel);
            }
            return;
        }
        if self.published {
            return;
        }
        let since = *self.idle_since.get_or_insert_with(Instant::now);
        if since.elapsed() < p.after {
            return;
        }
        // A background job working for this rank (file I/O) is not a wait.
        if background_working() {
            return;
        }
        // A process connected to another job (MPI_Comm_connect/accept/join) may
        // wait for that job's processes, which this launcher does not watch: it
        // cannot prove a deadlock, so it is not told of one.
        if crate::comm::dynamic::connected_to_other_jobs() {
            return;
        }
        // Counters first, under the lock, then the (slow) text: the counters
        // are what the launcher compares; they stay valid while we stay idle.
        let (sent, recvd) = e.lock().pair_counters();
        let text = self.text.get_or_insert_with(|| describe(e, desc()));
        let state = if p.multi { layout::STATE_BLOCKED_MT } else { layout::STATE_BLOCKED };
        // (Over PMI, a busy connection means: try again at the next idle look.)
        self.published = p.publish(state, since.elapsed(), &sent, &recvd, text);
    }

    /// The wait made progress: it is not blocked (yet again).
    #[inline]
    pub(crate) fn progressed(&mut self) {
        self.idle_since = None;
        if self.published {
            self.unpublish();
        }
        if self.bg_waiting {
            self.bg_done();
        }
    }

    #[cold]
    fn bg_done(&mut self) {
        self.bg_waiting = false;
        BG_WAITING.fetch_sub(1, Ordering::AcqRel);
    }

    #[cold]
    fn unpublish(&mut self) {
        self.published = false;
        if let Some(p) = PAGE.get() {
            p.set_running();
        }
    }
}

impl Drop for Watch {
    #[inline]
    fn drop(&mut self) {
        if self.published {
            self.unpublish();
        }
        if self.bg_waiting {
            self.bg_done();
        }
    }
}

// ----- the description -------------------------------------------------------------

fn rank_text(peer: i32, world: i32, what: &str) -> String {
    match peer {
        -1 => format!("{what}=MPI_ANY_SOURCE"),
        -3 => format!("{what}=MPI_PROC_NULL"),
        p => format!("{what}={p} (world rank {world})"),
    }
}

fn tag_text(tag: i32) -> String {
    if tag == crate::matching::ANY_TAG {
        "MPI_ANY_TAG".into()
    } else {
        tag.to_string()
    }
}

fn count_text(c: &Call) -> String {
    match c.dtype {
        Some(t) => format!("count={} {t}", c.count),
        None if c.count == c.bytes => format!("{} bytes", c.bytes),
        None if c.bytes > 0 => format!("count={} (derived datatype, {} bytes)", c.count, c.bytes),
        None => format!("count={}", c.count),
    }
}

/// What this rank is blocked on, as the status page's text.
fn describe(e: &Engine, call: Option<Call>) -> String {
    use std::fmt::Write;
    let call = call.or_else(|| CALL.with(|c| c.get()));
    // The C function the program called, from the stack (`MPI_Recv_c`,
    // `PMPI_Send`, ...); empty for Rust programs.
    let (api, at) = stack();
    let api = api.as_str();
    let me = e.rank();
    let mut out = String::new();
    let mut waits: Vec<String> = Vec::new();
    let pending = e.lock().pending_requests();
    match call {
        Some(c) => {
            let name = if api.is_empty() { c.name } else { api };
            let (cname, comm) = comm_info(c.ctx);
            let _ = writeln!(out, "call={name}");
            match c.kind {
                Kind::Send | Kind::Recv | Kind::Probe => {
                    let who = if c.kind == Kind::Send { "dest" } else { "source" };
                    let mut args = vec![rank_text(c.peer, c.peer_world, who), format!("tag={}", tag_text(c.tag))];
                    if c.kind != Kind::Probe {
                        args.insert(0, count_text(&c));
                    }
                    args.push(format!("comm={cname}"));
                    let _ = writeln!(out, "args={}", args.join(", "));
                    let _ = writeln!(out, "comm={cname}");
                    if c.peer_world >= 0 {
                        waits.push(c.peer_world.to_string());
                    } else if c.peer == -1 {
                        match &comm {
                            Some(m) => waits.extend(m.iter().filter(|&&w| w != me).map(|w| w.to_string())),
                            None => waits.push("any".into()),
                        }
                    }
                }
                Kind::Coll => {
                    let mut args = Vec::new();
                    if c.count > 0 || c.dtype.is_some() {
                        args.push(count_text(&c));
                    }
                    if c.has_root {
                        args.push(rank_text(c.peer, c.peer_world, "root"));
                    }
                    args.push(format!("comm={cname}"));
                    let _ = writeln!(out, "args={}", args.join(", "));
                    let _ = writeln!(out, "comm={cname}");
                    let root = if c.has_root { c.peer.to_string() } else { "-".into() };
                    let _ = writeln!(out, "coll={} {} {} {}", c.ctx, c.seq, name, root);
                    if let Some(m) = comm {
                        let _ = writeln!(out, "members={}", m.iter().map(|w| w.to_string()).collect::<Vec<_>>().join(","));
                        waits.extend(m.into_iter().filter(|&w| w != me).map(|w| w.to_string()));
                    }
                }
            }
        }
        None => {
            // MPI_Wait & co.: what the pending requests wait for.
            let name = if api.is_empty() { "MPI_Wait" } else { api };
            let _ = writeln!(out, "call={name}");
            let _ = writeln!(out, "args={} pending request(s)", pending.len());
            for p in &pending {
                match p.peer_world {
                    Some(w) => waits.push(w.to_string()),
                    None => match p.ctx.and_then(|c| comm_info(c).1) {
                        Some(m) => waits.extend(m.into_iter().filter(|&w| w != me).map(|w| w.to_string())),
                        None => waits.push("any".into()),
                    },
                }
            }
        }
    }
    for p in pending.iter().take(16) {
        let cname = p.ctx.map(|c| comm_info(c).0).unwrap_or_default();
        let _ = writeln!(out, "req={}{}{}", p.what, if cname.is_empty() { "" } else { " on " }, cname);
    }
    if pending.len() > 16 {
        let _ = writeln!(out, "req=... and {} more", pending.len() - 16);
    }
    waits.sort();
    waits.dedup();
    let _ = writeln!(out, "waits={}", waits.join(","));
    if let Some(at) = at {
        let _ = writeln!(out, "at={at}");
    }
    out
}

/// One pending request of a blocked rank (from the engine's request table).
pub(crate) struct Pending {
    pub what: String,
    /// The world rank it needs, if one.
    pub peer_world: Option<u32>,
    pub ctx: Option<u32>,
}

/// The MPI function the program called (the C entry point nearest to the
/// program's frame, empty if none) and where it called it from: the first
/// frame past the MPI library's own.
fn stack() -> (String, Option<String>) {
    let bt = std::backtrace::Backtrace::force_capture().to_string();
    let frames = parse_backtrace(&bt);
    if !frames.iter().any(lib_frame) {
        return (String::new(), None);
    }
    let user = user_frame(&frames);
    let upto = user.unwrap_or(frames.len());
    let api = frames[..upto]
        .iter()
        .rev()
        .map(|(n, _)| strip_hash(n))
        .find(|n| (n.starts_with("MPI_") || n.starts_with("PMPI_") || n.starts_with("MPIX_")) && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .unwrap_or_default();
    // `MPI_x` usually tail-calls `PMPI_x`, leaving only the latter on the stack.
    let api = api.strip_prefix('P').filter(|a| a.starts_with("MPI_")).unwrap_or(api).to_string();
    (api, user.and_then(|u| caller_of(&frames[u])))
}

/// The program's frame: past the library's frames (and the standard
/// library's, which the library calls through), the first one. A C entry
/// point (`MPI_x`, `PMPI_x`, Fortran's `mpi_x_`) bounds the library: the
/// program's frame lies past the outermost one, whatever the frames in between
/// are named (with line tables only, inlined functions lose their paths).
fn user_frame(frames: &[(String, Option<String>)]) -> Option<usize> {
    let first_lib = frames.iter().position(lib_frame)?;
    let start = frames.iter().rposition(|(n, _)| is_c_entry(strip_hash(n))).map_or(first_lib, |i| i.max(first_lib));
    frames[start..].iter().position(|f| !lib_frame(f) && !std_frame(f)).map(|i| i + start)
}

fn is_c_entry(name: &str) -> bool {
    ["MPI_", "PMPI_", "MPIX_", "mpi_"].iter().any(|p| name.starts_with(p)) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn caller_of((name, at): &(String, Option<String>)) -> Option<String> {
    let name = strip_hash(name);
    Some(match at {
        Some(at) => format!("{name} at {at}"),
        None => name.to_string(),
    })
}

fn strip_hash(name: &str) -> &str {
    match name.rfind("::h") {
        Some(i) if name.len() - i == 19 => &name[..i],
        _ => name,
    }
}

/// A frame of oxmpi's own code. With line tables only (the dev profile), a
/// function inlined into another is named without its module path
/// (`describe`): its file tells then.
fn lib_frame(f: &(String, Option<String>)) -> bool {
    is_library_frame(&f.0)
        || f.1.as_deref().is_some_and(|at| ["oxmpi-core", "oxmpi-capi", "/oxmpi/src/", "crates/oxmpi/src/", "/oxmpi-0."].iter().any(|p| at.contains(p)))
}

/// A frame of the standard library (by name, or by its file when inlined).
fn std_frame(f: &(String, Option<String>)) -> bool {
    is_std_frame(&f.0) || f.1.as_deref().is_some_and(|at| at.contains("/rustc/") || at.starts_with("library/"))
}

fn is_std_frame(name: &str) -> bool {
    ["std::", "core::", "alloc::", "<std::", "<core::", "<alloc::", "__rust"].iter().any(|p| name.starts_with(p))
}

fn is_library_frame(name: &str) -> bool {
    name.starts_with("MPI_")
        || name.starts_with("PMPI_")
        || name.starts_with("MPIX_")
        || name.starts_with("mpi_")
        || name.starts_with("oxmpi_core::")
        || name.starts_with("oxmpi_capi::")
        || name.starts_with("mpi::")
        || name.starts_with("<mpi::")
        || name.starts_with("<oxmpi_core::")
        || name.starts_with("oxmpi::")
        || name.starts_with("<oxmpi::")
        || name.starts_with("std::backtrace")
        || name.starts_with("std::thread::local")
        || name.starts_with("core::ops::function")
        || name.starts_with("std::panicking")
        || name.starts_with("std::panic::")
        || name.starts_with("__rust")
}

/// `(symbol, Some("file:line"))` per frame of std's backtrace text.
fn parse_backtrace(bt: &str) -> Vec<(String, Option<String>)> {
    let mut frames: Vec<(String, Option<String>)> = Vec::new();
    for line in bt.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("at ") {
            if let Some(f) = frames.last_mut() {
                if f.1.is_none() {
                    // `file:line:col` -> `file:line`
                    let rest = rest.trim();
                    let cut = match rest.rsplit_once(':') {
                        Some((a, b)) if b.chars().all(|c| c.is_ascii_digit()) && a.rsplit_once(':').is_some_and(|(_, l)| l.chars().all(|c| c.is_ascii_digit())) => a,
                        _ => rest,
                    };
                    f.1 = Some(cut.to_string());
                }
            }
        } else if let Some((num, name)) = t.split_once(": ") {
            if num.chars().all(|c| c.is_ascii_digit()) {
                frames.push((name.trim().to_string(), None));
            }
        }
    }
    frames
}

// ----- the timeline (mpiexec --trace) -----------------------------------------------
//
// With `OXMPI_TRACE_DIR` set (by `mpiexec --trace FILE`), every C call is a
// complete event (`ph: X`, enter and duration) and every message a flow from
// the send (`ph: s`) to the completion of the receive that matched it
// (`ph: f`), in the Chrome trace event format; each rank writes its events to
// `DIR/rank-R.json` at MPI_Finalize and mpiexec merges them. A flow's id is
// (sender, receiver, context, tag, k) for the k-th such message: messages
// between two ranks with one context and tag are not overtaking, so the k-th
// send is the k-th receive. Off, it costs one predictable branch per call.

use std::sync::atomic::AtomicBool;

static TRACING: AtomicBool = AtomicBool::new(false);

struct Trace {
    dir: std::path::PathBuf,
    filter: Option<String>,
    rank: u32,
    events: Vec<String>,
    sends: std::collections::HashMap<(u32, u32, u32, i32), u64>,
    recvs: std::collections::HashMap<(u32, u32, u32, i32), u64>,
}

static TRACE: Mutex<Option<Trace>> = Mutex::new(None);

/// Whether calls and messages are being traced (one relaxed load).
#[inline]
pub fn tracing() -> bool {
    TRACING.load(Ordering::Relaxed)
}

pub(crate) fn init_trace(rank: u32) {
    let Some(dir) = std::env::var_os("OXMPI_TRACE_DIR") else { return };
    let filter = std::env::var("OXMPI_TRACE_FILTER").ok().filter(|f| !f.is_empty());
    *TRACE.lock().unwrap_or_else(|p| p.into_inner()) =
        Some(Trace { dir: dir.into(), filter, rank, events: Vec::new(), sends: Default::default(), recvs: Default::default() });
    TRACING.store(true, Ordering::Relaxed);
}

/// Microseconds on the monotonic clock every local rank shares.
pub fn trace_now() -> f64 {
    crate::runtime::wtime() * 1e6
}

fn with_trace(f: impl FnOnce(&mut Trace)) {
    if let Some(t) = TRACE.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        f(t);
    }
}

/// Whether `call` passes `--trace-filter` (a substring of the call name).
pub fn trace_wants(call: &str) -> bool {
    let mut yes = true;
    with_trace(|t| yes = t.filter.as_deref().is_none_or(|f| call.contains(f)));
    yes
}

/// One call, from `t0` to `t1` (µs).
pub fn trace_call(name: &str, t0: f64, t1: f64) {
    with_trace(|t| {
        let ev = format!(r#"{{"name":"{name}","cat":"mpi","ph":"X","ts":{t0:.3},"dur":{:.3},"pid":{},"tid":0}}"#, (t1 - t0).max(0.0), t.rank);
        t.events.push(ev);
    });
}

fn flow_id(from: u32, to: u32, ctx: u32, tag: i32, k: u64) -> String {
    format!("{from}-{to}-{ctx}-{tag}-{k}")
}

pub(crate) fn trace_send(me: u32, to: u32, ctx: u32, tag: i32) {
    trace_send_at(trace_now(), me, to, ctx, tag);
}

/// A message's start stamped at `ts` (µs), taken before the message became
/// visible to the receiver.
pub(crate) fn trace_send_at(ts: f64, me: u32, to: u32, ctx: u32, tag: i32) {
    with_trace(|t| {
        let k = t.sends.entry((me, to, ctx, tag)).or_insert(0);
        *k += 1;
        let id = flow_id(me, to, ctx, tag, *k);
        t.events.push(format!(r#"{{"name":"message","cat":"msg","ph":"s","id":"{id}","ts":{ts:.3},"pid":{me},"tid":0,"args":{{"to":{to},"tag":{tag}}}}}"#));
    });
}

pub(crate) fn trace_recv(me: u32, ctx: u32, source: i32, tag: i32) {
    let ts = trace_now();
    let Some(from) = comm_info(ctx).1.and_then(|m| usize::try_from(source).ok().and_then(|s| m.get(s).copied())) else { return };
    if from == me {
        return;
    }
    with_trace(|t| {
        let k = t.recvs.entry((from, me, ctx, tag)).or_insert(0);
        *k += 1;
        let id = flow_id(from, me, ctx, tag, *k);
        t.events.push(format!(r#"{{"name":"message","cat":"msg","ph":"f","bp":"e","id":"{id}","ts":{ts:.3},"pid":{me},"tid":0}}"#));
    });
}

/// MPI_Finalize: writes this rank's events for mpiexec to merge.
pub(crate) fn finish_trace() {
    if !tracing() {
        return;
    }
    with_trace(|t| {
        let mut out = format!(r#"{{"name":"process_name","ph":"M","pid":{},"args":{{"name":"rank {}"}}}}"#, t.rank, t.rank);
        for e in &t.events {
            out.push_str(",\n");
            out.push_str(e);
        }
        let path = t.dir.join(format!("rank-{}.json", t.rank));
        if let Err(e) = std::fs::write(&path, out) {
            eprintln!("oxmpi: rank {}: cannot write the trace to {}: {e}", t.rank, path.display());
        }
        t.events.clear();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_callers_frame() {
        let bt = "   0: std::backtrace::Backtrace::force_capture\n\
                  \x20            at /rustc/x/library/std/src/backtrace.rs:312:9\n\
                  \x20  1: oxmpi_core::diag::caller\n\
                  \x20  2: PMPI_Recv\n\
                  \x20            at crates/oxmpi-capi/src/p2p.rs:1302:1\n\
                  \x20  3: main\n\
                  \x20            at /tmp/cycle.c:12:5\n\
                  \x20  4: __libc_start_call_main\n";
        let f = parse_backtrace(bt);
        assert_eq!(f.len(), 5);
        let first = f.iter().position(|(n, _)| is_library_frame(n)).unwrap();
        let user = f[first..].iter().find(|(n, _)| !is_library_frame(n) && !is_std_frame(n)).unwrap();
        assert_eq!(*user, ("main".to_string(), Some("/tmp/cycle.c:12".to_string())));
        assert_eq!(strip_hash("cycle::main::h0123456789abcdef"), "cycle::main");
    }
}
