//! The device: per-peer paths, the request table, the point-to-point protocol
//! (eager, rendezvous, synchronous acks, credits, cancel) and the progress engine.
//!
//! All state lives in [`State`] behind one mutex (see [`crate::runtime`]); every
//! MPI call that communicates takes the lock, makes progress, and releases it, so
//! MPI_THREAD_MULTIPLE is safe. Blocking calls release the lock between polls and
//! sleep on the rank's doorbell when nothing happens.
//!
//! ## Protocol, per message
//! * `len <= eager_limit` and the receiver has granted enough credit: the data is
//!   copied into the peer's ring (`Eager`, then `EagerCont` fragments). The send
//!   completes once the last fragment is in the ring (synchronous mode: when the
//!   receiver's `SyncAck` arrives).
//! * otherwise, rendezvous: an `Rts` carries the sender's buffer address. When the
//!   receive matches, the receiver copies the data once, straight from the sender's
//!   memory (`process_vm_readv`), and answers `Fin`. Where the kernel refuses
//!   cross-memory reads, the receiver answers `Cts` and the sender streams the data
//!   through the ring (`Data` packets).
//!
//! ## Flow control
//! Each sender holds `credit` eager bytes per receiver. Eager data that sits in the
//! receiver's unexpected queue is paid for by that credit; the receiver returns it
//! (`Credit`) once the data is delivered. A sender without credit falls back to
//! rendezvous, whose unexpected footprint is a header, and whose send completes
//! only when matched: a flooding sender ends up waiting instead of the receiver's
//! memory growing without bound.

use std::collections::{HashMap, VecDeque};

use crate::buf::RawBuf;
use crate::error::{ErrorClass, MpiError, Result};
use crate::matching::{Envelope, Matcher, Pattern};
use crate::pt2pt::wire::{Header, Kind, CONT_HEADER_LEN, FLAG_CANCELLED, FLAG_SYNC, HEADER_LEN};
use crate::request::{Request, Status, PROC_NULL};
use crate::transport::cma;
use crate::transport::shm::{ShmSegment, CELL_PAYLOAD, COPY_SLOTS};
use crate::transport::tcp::{self, TcpTransport};

/// Where one peer's packets go: a ring of the shared segment or a TCP connection.
enum Link<'a> {
    Shm(&'static ShmSegment, usize),
    Tcp(&'a mut TcpTransport, u32),
}

impl Link<'_> {
    fn max_packet(&self) -> usize {
        match self {
            Link::Shm(..) => CELL_PAYLOAD,
            Link::Tcp(..) => tcp::MAX_PACKET,
        }
    }

    /// Pushes a packet of at most `max_len` bytes (at most [`Link::max_packet`]).
    fn push(&mut self, max_len: usize, fill: impl FnOnce(&mut [u8]) -> usize) -> bool {
        match self {
            // SAFETY: links exist only inside `State` methods, and the engine reaches
            // `State` only through its mutex: one thread at a time touches our rings.
            Link::Shm(s, local) => unsafe { s.try_push_exclusive(*local, max_len, fill) },
            Link::Tcp(t, peer) => t.try_push(*peer, fill),
        }
    }
}

/// How a peer is reached; chosen once, at start-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    SelfLoop,
    Shm { local: usize },
    /// On another host, through the TCP transport.
    Tcp,
    /// On another host, and no network transport is available for it.
    Unreachable,
}

impl Path {
    /// How the MPI_T traffic counters file this peer's messages.
    #[inline]
    fn via(&self) -> Option<crate::tools::Via> {
        match self {
            Path::SelfLoop => Some(crate::tools::Via::SelfLoop),
            Path::Shm { .. } => Some(crate::tools::Via::Shm),
            Path::Tcp => Some(crate::tools::Via::Tcp),
            Path::Unreachable => None,
        }
    }
}

/// Something waiting to be written into a peer's ring, in order.
#[derive(Debug)]
enum OutItem {
    Ctrl(Header),
    /// An eager message: header first, then continuation fragments.
    Eager { hdr: Header, data: RawBuf, sent: usize, started: bool, req: Request },
    /// Rendezvous data streamed after a `Cts` (fallback when CMA is refused).
    Stream { rreq: u64, data: RawBuf, sent: usize, req: Request },
}

#[derive(Debug)]
pub(crate) struct Peer {
    pub path: Path,
    pub pid: i32,
    /// Eager bytes we may still send to this peer without it having matched them.
    credit: i64,
    /// Eager bytes of this peer's we delivered and have not yet told it about.
    credit_owed: u64,
    outbox: VecDeque<OutItem>,
    /// An eager message from this peer whose continuation fragments are due.
    rx: Rx,
    /// Whether cross-memory reads from this peer work (cleared on first refusal).
    cma_ok: bool,
    /// Id of the last shared copy of this peer's data into ours (ring `peer -> me`).
    copy_id: u32,
    /// Bit `i`: the ring's shared-copy slot `i` is in use.
    copy_busy: u8,
    /// Packets pushed to this peer and taken from it, for the launcher's
    /// deadlock check ("no message in flight" is `sent == peer's recvd`).
    pub(crate) sent: u64,
    pub(crate) recvd: u64,
}

/// A rendezvous receive whose data the sender and we copy together; it completes
/// when every chunk is in (see [`ShmSegment::copy_begin`]).
#[derive(Debug, Clone, Copy)]
struct SharedCopy {
    req: Request,
    from: u32,
    local: usize,
    slot: usize,
    sreq: u64,
    env: Envelope,
    total: usize,
    chunks: u32,
}

/// Messages at least this large are copied by both sides at once (two cores, two
/// copies in flight) when sender and receiver share a host.
const SHARED_COPY_MIN: usize = 96 << 10;
/// Bytes per chunk of a shared copy: half the message (so both copiers
/// get work even when the message is just above the threshold), within bounds
/// that keep the per-chunk system call cheap relative to its copy.
fn shared_copy_chunk(n: usize) -> usize {
    (n / 2).clamp(32 << 10, 128 << 10) & !4095
}

#[derive(Debug, Clone, Copy)]
enum Rx {
    Idle,
    /// Fragments go straight into a matched receive.
    Direct { req: Request, offset: usize, total: usize },
    /// Fragments go into an unexpected message.
    Unexpected { msg: u64 },
}

/// A message that arrived before its receive was posted.
#[derive(Debug)]
pub(crate) struct UnexpMsg {
    pub env: Envelope,
    pub from: u32,
    pub sreq: u64,
    pub sync: bool,
    /// The sender's type-signature fingerprint (`datatype::sigcheck`; 0 = unchecked).
    pub sig: u64,
    pub body: Body,
    /// A receive that took this message while eager fragments were still arriving.
    pub claimed_by: Option<Request>,
}

#[derive(Debug)]
pub(crate) enum Body {
    Eager { data: Vec<u8>, total: usize },
    /// The data is in the sender's memory at `addr` (or, for a self message, ours).
    Rts { addr: u64, total: usize },
}

impl Body {
    pub fn total(&self) -> usize {
        match self {
            Body::Eager { total, .. } | Body::Rts { total, .. } => *total,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    Standard,
    Synchronous,
    Ready,
    Buffered,
}

#[derive(Debug)]
pub(crate) enum ReqKind {
    Send(SendReq),
    Recv(RecvReq),
    /// Already complete when created (PROC_NULL, ...).
    Done,
    /// The user's half of a buffered send: complete when created, while the
    /// transfer goes on in the detached send `inner` (sent to world rank `peer`),
    /// which MPI_Cancel can still withdraw.
    BufferedUser { inner: Request, peer: u32 },
    /// A persistent request: what to start, and the operation currently running.
    Persistent { spec: PersistentSpec, active: Option<Request> },
    /// A collective in progress (taken out while it is being advanced).
    Coll(Option<Box<crate::coll::sched::Schedule>>),
    /// A generalized request (MPI_Grequest_start): completed by user code
    /// ([`State::complete_generalized`]), never by progress.
    Generalized,
    /// A multi-step operation (communicator duplication's context agreement)
    /// advanced by progress, like a collective (taken out while advanced).
    Task(Option<Box<dyn Task>>),
}

/// An operation the progress engine advances step by step until it reports
/// completion (`Ok(true)`) or fails.
pub(crate) trait Task: Send + std::fmt::Debug {
    fn advance(&mut self, st: &mut State) -> Result<bool>;
    /// The status the request reports once `advance` returned `Ok(true)`.
    fn status(&self) -> Status {
        Status::EMPTY
    }
}

#[derive(Debug)]
pub(crate) struct SendReq {
    peer: u32,
    /// The communicator context it was sent on (for diagnosis).
    context: u32,
    /// The bytes being sent (the user's buffer, or `owned`).
    data: RawBuf,
    /// Data we own (bsend copies) must outlive the transfer; keep it here.
    _owned: Option<Box<[u8]>>,
    /// Bytes charged to the attached bsend buffer, released on completion.
    bsend_charge: usize,
    /// Which buffer was charged: a communicator's (its context id, MPI-4.1
    /// `MPI_Comm_attach_buffer`) or the process's (`None`).
    bsend_pool: Option<u32>,
    /// The data has left (eager: all in the ring; rendezvous: FIN seen).
    local_done: bool,
    /// Waiting for a SyncAck.
    await_ack: bool,
    cancel_pending: bool,
    /// For a buffered send, the request the user holds ([`ReqKind::BufferedUser`]),
    /// which learns the outcome of a cancel when this transfer completes.
    user_half: Option<Request>,
    /// Whether the message is still in our outbox or our own unexpected queue.
    state: SendState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SendState {
    Queued,
    InFlight,
}

#[derive(Debug)]
pub(crate) struct RecvReq {
    buf: RawBuf,
    posted: bool,
    /// Streamed rendezvous: bytes expected and received so far.
    total: usize,
    received: usize,
    env: Option<Envelope>,
    /// For a non-contiguous datatype: the bytes land in a temporary buffer and
    /// are unpacked into the user's layout when the receive completes.
    unpack: Option<Box<Unpack>>,
    /// The signature fingerprint of this receive's datatype (`datatype::sigcheck`; 0 = not checked).
    sig: u64,
    /// Set on a signature mismatch: the sender's fingerprint. No data is delivered.
    bad_sig: u64,
    /// The communicator context it receives on (timeline flows; 0 for mrecv).
    context: u32,
}

/// Where a receive through a temporary buffer finally goes.
pub(crate) struct Unpack {
    pub dt: crate::datatype::Datatype,
    pub dst: usize,
    pub count: usize,
    pub temp: Box<[u8]>,
}

impl std::fmt::Debug for Unpack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Unpack({} x {:?} into {:#x})", self.count, self.dt.name(), self.dst)
    }
}

#[derive(Debug, Clone)]
pub(crate) enum PersistentSpec {
    Send { comm: crate::comm::Comm, buf: RawBuf, dest: i32, tag: i32, mode: SendMode },
    Recv { comm: crate::comm::Comm, buf: RawBuf, source: i32, tag: i32 },
}

#[derive(Debug)]
pub(crate) struct ReqEntry {
    pub kind: ReqKind,
    pub done: bool,
    pub status: Status,
    pub error: Option<MpiError>,
    /// Freed by the user (MPI_Request_free) or internal: drop on completion.
    pub detached: bool,
}

#[derive(Default, Debug)]
struct Slab {
    slots: Vec<(u32, Option<ReqEntry>)>,
    free: Vec<u32>,
}

impl Slab {
    fn insert(&mut self, e: ReqEntry) -> Request {
        if let Some(i) = self.free.pop() {
            let slot = &mut self.slots[i as usize];
            slot.0 = slot.0.wrapping_add(1);
            slot.1 = Some(e);
            Request::new(i, slot.0)
        } else {
            self.slots.push((1, Some(e)));
            Request::new(self.slots.len() as u32 - 1, 1)
        }
    }
    /// The handle the next [`Slab::insert`] will return.
    fn peek_next(&self) -> Request {
        match self.free.last() {
            Some(&i) => Request::new(i, self.slots[i as usize].0.wrapping_add(1)),
            None => Request::new(self.slots.len() as u32, 1),
        }
    }
    fn get(&self, r: Request) -> Option<&ReqEntry> {
        match self.slots.get(r.slot() as usize) {
            Some((g, Some(e))) if *g == r.generation() => Some(e),
            _ => None,
        }
    }
    fn get_mut(&mut self, r: Request) -> Option<&mut ReqEntry> {
        match self.slots.get_mut(r.slot() as usize) {
            Some((g, Some(e))) if *g == r.generation() => Some(e),
            _ => None,
        }
    }
    fn remove(&mut self, r: Request) -> Option<ReqEntry> {
        match self.slots.get_mut(r.slot() as usize) {
            Some((g, e @ Some(_))) if *g == r.generation() => {
                self.free.push(r.slot());
                e.take()
            }
            _ => None,
        }
    }
    fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// Hashing for maps keyed by ids this process hands out itself (unexpected
/// message numbers): a multiply, not SipHash. The keys are not chosen by
/// anyone else, so there is no flooding to defend against, and SipHash's
/// ~100 instructions per look-up were a visible part of every unexpected
/// message (bench/PROFILE.md).
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct IdHash;

impl std::hash::BuildHasher for IdHash {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        // Fibonacci hashing: spreads consecutive ids over the high bits the
        // table uses.
        self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8)) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

/// Eager bytes a sender may have outstanding at one receiver.
const CREDIT_PER_PEER: i64 = 4 << 20;
/// Every eager message costs at least this much credit, so floods of empty
/// messages are bounded too.
const MIN_CREDIT_COST: usize = 64;

fn credit_cost(len: usize) -> usize {
    len.max(MIN_CREDIT_COST)
}

/// The attached MPI_Buffer_attach space, tracked by bytes in use.
#[derive(Debug, Default)]
pub(crate) struct BsendPool {
    pub attached: Option<(usize, usize)>,
    pub used: usize,
}

/// Bytes of bookkeeping each buffered send charges on top of its data
/// (`MPI_BSEND_OVERHEAD`).
pub const BSEND_OVERHEAD: usize = 96;

pub(crate) struct State {
    pub me: u32,
    pub peers: Vec<Peer>,
    reqs: Slab,
    pub(crate) matcher: Matcher<Request, u64>,
    pub(crate) unexp: HashMap<u64, UnexpMsg, IdHash>,
    next_msg: u64,
    pub eager_limit: usize,
    pub bsend: BsendPool,
    /// Buffers attached to communicators (`MPI_Comm_attach_buffer`), by the
    /// point-to-point context id; a communicator's buffer serves its buffered
    /// sends before the process's.
    pub comm_bsend: HashMap<u32, BsendPool>,
    /// Communicators made from a session's groups, by context id, to the key
    /// of their session's buffer in `comm_bsend` (`MPI_Session_attach_buffer`):
    /// used when the communicator has no buffer of its own.
    pub bsend_alias: HashMap<u32, u32>,
    shm: Option<&'static ShmSegment>,
    /// Bumped on every completion, so waiters in other threads can be woken.
    pub completions: u64,
    /// Peers with something in their outbox.
    pending_out: Vec<u32>,
    /// Shared-memory peers (world ranks), polled by progress.
    shm_peers: Vec<(u32, usize)>,
    /// Collectives in progress, advanced by every progress call.
    active_colls: Vec<Request>,
    /// Connections to ranks on other hosts.
    tcp: Option<TcpTransport>,
    /// `OXMPI_CHECK_SIGNATURES=1`: typed messages carry their primitive and a
    /// receive expecting another one fails with MPI_ERR_TYPE.
    pub(crate) check_sigs: bool,
    /// Whether we may write into local peers' memory to help them receive (CMA
    /// works and `OXMPI_SHARED_COPY` is not `0`); also whether we ask for help.
    shared_copy: bool,
    /// Receives being copied together with their senders.
    shared_copies: Vec<SharedCopy>,
    /// Index into `shm_peers` where the last progress call started polling.
    poll_start: usize,
    /// Buffers of delivered small unexpected messages, for the next ones
    /// (at most [`SPARE_EAGER_MAX`] of [`SPARE_EAGER_CAP`] bytes).
    spare_eager: Vec<Vec<u8>>,
    /// Traffic counters behind the MPI_T performance variables.
    pub(crate) stats: crate::tools::Stats,
}

/// Unexpected eager messages up to this size get a recycled buffer of exactly
/// this capacity.
const SPARE_EAGER_CAP: usize = 256;
/// Recycled buffers kept at most (16 KiB).
const SPARE_EAGER_MAX: usize = 64;

impl State {
    pub(crate) fn new(me: u32, paths: Vec<(Path, i32)>, shm: Option<&'static ShmSegment>, tcp: Option<TcpTransport>) -> State {
        let eager_limit = crate::tools::initial_eager_limit();
        let check_sigs = std::env::var("OXMPI_CHECK_SIGNATURES").is_ok_and(|v| v == "1");
        let cma_allowed = std::env::var("OXMPI_NO_CMA").is_err() && cma::probe_cma();
        let shm_peers = paths
            .iter()
            .enumerate()
            .filter_map(|(r, (p, _))| match p {
                Path::Shm { local } => Some((r as u32, *local)),
                _ => None,
            })
            .collect();
        let peers = paths
            .into_iter()
            .map(|(path, pid)| Peer {
                path,
                pid,
                credit: CREDIT_PER_PEER,
                credit_owed: 0,
                outbox: VecDeque::new(),
                rx: Rx::Idle,
                // Another host's memory cannot be read: rendezvous data streams.
                cma_ok: cma_allowed && path != Path::Tcp,
                copy_id: 0,
                copy_busy: 0,
                sent: 0,
                recvd: 0,
            })
            .collect();
        State {
            me,
            peers,
            reqs: Slab::default(),
            matcher: Matcher::new(),
            unexp: HashMap::default(),
            next_msg: 1,
            eager_limit,
            bsend: BsendPool::default(),
            comm_bsend: HashMap::new(),
            bsend_alias: HashMap::new(),
            shm,
            completions: 0,
            pending_out: Vec::new(),
            shm_peers,
            active_colls: Vec::new(),
            tcp,
            check_sigs,
            shared_copy: cma_allowed && std::env::var("OXMPI_SHARED_COPY").map_or(true, |v| v != "0"),
            shared_copies: Vec::new(),
            poll_start: 0,
            spare_eager: Vec::new(),
            stats: crate::tools::Stats::default(),
        }
    }

    // ----- processes of other jobs (connect/accept, join) -----------------------

    /// Makes sure a TCP transport exists (a job on one host has none until it
    /// connects to another job); `make` builds one for `peers.len()` peers.
    pub(crate) fn ensure_tcp(&mut self, make: impl FnOnce(u32) -> crate::error::Result<TcpTransport>) -> crate::error::Result<()> {
        if self.tcp.is_none() {
            self.tcp = Some(make(self.peers.len() as u32)?);
        }
        Ok(())
    }

    /// "ip:port" of this process's TCP listener, once [`State::ensure_tcp`] ran.
    pub(crate) fn tcp_endpoint(&self) -> Option<String> {
        self.tcp.as_ref().map(|t| t.endpoint())
    }

    /// The index the next added peer gets (the engine's and the transport's
    /// tables grow together).
    pub(crate) fn next_peer_index(&self) -> u32 {
        self.peers.len() as u32
    }

    /// Adds a process of another job, reached over TCP (see
    /// [`TcpTransport::add_dynamic_peer`]); returns its peer index.
    pub(crate) fn add_dynamic_peer(&mut self, endpoint: &str, remote_me: u32, my_index_there: u32, secret: &[u8], dial: bool) -> crate::error::Result<u32> {
        let t = self.tcp.as_mut().ok_or_else(|| crate::error::MpiError::new(crate::error::ErrorClass::Intern, "add_dynamic_peer: no TCP transport"))?;
        debug_assert_eq!(t.peer_count() as usize, self.peers.len());
        let r = t.add_dynamic_peer(endpoint, remote_me, my_index_there, secret, dial)?;
        self.peers.push(Peer {
            path: Path::Tcp,
            pid: 0,
            credit: CREDIT_PER_PEER,
            credit_owed: 0,
            outbox: VecDeque::new(),
            rx: Rx::Idle,
            cma_ok: false,
            copy_id: 0,
            copy_busy: 0,
            sent: 0,
            recvd: 0,
        });
        Ok(r)
    }

    /// Whether the connection to `peer` is established; an error if it failed.
    pub(crate) fn peer_connected(&self, peer: u32) -> std::result::Result<bool, String> {
        let Some(t) = self.tcp.as_ref() else { return Ok(false) };
        if let Some(why) = t.peer_failed(peer) {
            return Err(why);
        }
        Ok(t.is_connected(peer))
    }

    /// Whether nothing waits to go to `peer`: no queued item in its outbox and
    /// every byte written to its socket.
    pub(crate) fn peer_drained(&self, peer: u32) -> bool {
        let p = &self.peers[peer as usize];
        p.outbox.is_empty() && self.tcp.as_ref().is_none_or(|t| t.is_flushed(peer))
    }

    /// Starts the goodbye with `peer` (MPI_Comm_disconnect).
    pub(crate) fn say_goodbye(&mut self, peer: u32) {
        if let Some(t) = self.tcp.as_mut() {
            t.say_goodbye(peer);
        }
    }

    /// Whether both goodbyes with `peer` happened.
    pub(crate) fn goodbye_done(&self, peer: u32) -> bool {
        self.tcp.as_ref().is_none_or(|t| t.goodbye_done(peer))
    }

    /// Closes the connection to `peer`; it is unreachable from now on.
    pub(crate) fn close_peer(&mut self, peer: u32) {
        if let Some(t) = self.tcp.as_mut() {
            t.close_peer(peer);
        }
        self.peers[peer as usize].path = Path::Unreachable;
    }

    // ----- requests -------------------------------------------------------------

    pub(crate) fn new_request(&mut self, kind: ReqKind) -> Request {
        self.reqs.insert(ReqEntry { kind, done: false, status: Status::EMPTY, error: None, detached: false })
    }

    pub(crate) fn done_request(&mut self, status: Status) -> Request {
        let r = self.new_request(ReqKind::Done);
        let e = self.reqs.get_mut(r).unwrap();
        e.done = true;
        e.status = status;
        r
    }

    pub(crate) fn req(&self, r: Request) -> Option<&ReqEntry> {
        self.reqs.get(r)
    }

    pub(crate) fn req_mut(&mut self, r: Request) -> Option<&mut ReqEntry> {
        self.reqs.get_mut(r)
    }

    pub(crate) fn remove_request(&mut self, r: Request) -> Option<ReqEntry> {
        let e = self.reqs.remove(r);
        if crate::diag::tracing() {
            if let Some(ReqEntry { kind: ReqKind::Recv(rr), status, .. }) = &e {
                let context = rr.env.map_or(rr.context, |env| env.context);
                if !status.cancelled && status.source >= 0 {
                    crate::diag::trace_recv(self.me, context, status.source, status.tag);
                }
            }
        }
        e
    }

    pub(crate) fn live_requests(&self) -> usize {
        self.reqs.live()
    }

    fn complete(&mut self, r: Request, status: Status, error: Option<MpiError>) {
        self.completions += 1;
        let Some(e) = self.reqs.get_mut(r) else { return };
        e.done = true;
        e.status = status;
        if let Some(err) = error {
            e.status.error = err.class.code();
            e.error = Some(err);
        }
        let user_half = match &e.kind {
            ReqKind::Send(s) => s.user_half,
            _ => None,
        };
        let cancelled = e.status.cancelled;
        if e.detached {
            self.release_request(r);
        }
        if let Some(u) = user_half {
            self.finish_buffered_cancel(u, cancelled);
        }
    }

    /// A cancel of buffered send `user` (its [`ReqKind::BufferedUser`] half) has
    /// an outcome: that request completes again, saying whether it was cancelled.
    fn finish_buffered_cancel(&mut self, user: Request, cancelled: bool) {
        let Some(e) = self.reqs.get(user) else { return };
        if e.done || !matches!(e.kind, ReqKind::BufferedUser { .. }) {
            return;
        }
        let mut status = e.status;
        status.cancelled = cancelled;
        self.complete(user, status, None);
    }

    /// The bsend buffer a key names: a communicator's (by context id) or the
    /// process's. A communicator's pool outlives its detach while messages it
    /// carried are in flight (detach waits for them), so the key always exists.
    pub(crate) fn bsend_pool_mut(&mut self, key: Option<u32>) -> &mut BsendPool {
        match key {
            Some(ctx) => self.comm_bsend.entry(ctx).or_default(),
            None => &mut self.bsend,
        }
    }

    /// Drops a finished request and whatever it held (bsend space).
    fn release_request(&mut self, r: Request) {
        if let Some(ReqEntry { kind: ReqKind::Send(s), .. }) = self.reqs.remove(r) {
            let pool = self.bsend_pool_mut(s.bsend_pool);
            pool.used = pool.used.saturating_sub(s.bsend_charge);
        }
    }

    /// MPI_Grequest_complete: a generalized request is done (dropped at once if
    /// already freed).
    pub(crate) fn complete_generalized(&mut self, r: Request) -> Result<()> {
        match self.reqs.get(r) {
            Some(e) if matches!(e.kind, ReqKind::Generalized) && !e.done => {
                self.complete(r, Status::EMPTY, None);
                Ok(())
            }
            Some(e) if matches!(e.kind, ReqKind::Generalized) => {
                Err(MpiError::arg(ErrorClass::Request, "MPI_Grequest_complete", "request", "the generalized request is complete already"))
            }
            _ => Err(MpiError::arg(ErrorClass::Request, "MPI_Grequest_complete", "request", "not a generalized request")),
        }
    }

    /// Marks a detached request (MPI_Request_free): it is dropped when it completes.
    pub(crate) fn detach(&mut self, r: Request) {
        let done = match self.reqs.get_mut(r) {
            Some(e) => {
                e.detached = true;
                e.done
            }
            None => return,
        };
        if done {
            self.release_request(r);
        }
    }

    fn send_progressed(&mut self, r: Request) {
        let Some(e) = self.reqs.get_mut(r) else { return };
        let ReqKind::Send(s) = &e.kind else { return };
        if s.local_done && !s.await_ack && !s.cancel_pending && !e.done {
            let status = e.status;
            self.complete(r, status, None);
        }
    }

    // ----- sending --------------------------------------------------------------

    /// Starts a send of `data` (which must stay valid until the request completes).
    pub(crate) fn start_send(
        &mut self,
        peer: u32,
        env: Envelope,
        data: RawBuf,
        mode: SendMode,
    ) -> Result<Request> {
        self.start_send_owning(peer, env, data, None, mode, 0)
    }

    /// [`State::start_send`] of a typed message; `sig` is from [`State::sig_of`].
    pub(crate) fn start_send_sig(&mut self, peer: u32, env: Envelope, data: RawBuf, mode: SendMode, sig: u64) -> Result<Request> {
        self.start_send_owning(peer, env, data, None, mode, sig)
    }

    /// [`State::start_send`] of bytes the request owns (packed non-contiguous data).
    pub(crate) fn start_send_packed(&mut self, peer: u32, env: Envelope, packed: Box<[u8]>, mode: SendMode, sig: u64) -> Result<Request> {
        let raw = RawBuf::from_slice(&packed);
        self.start_send_owning(peer, env, raw, Some(packed), mode, sig)
    }

    /// The type signature a message or receive of `dt` carries: its
    /// fingerprint (`datatype::sigcheck`, cached in the datatype) when checking
    /// is on, else 0. Types holding MPI_BYTE or MPI_PACKED match anything: 0 too.
    pub(crate) fn sig_of(&self, dt: &crate::datatype::Datatype) -> u64 {
        if !self.check_sigs {
            return 0;
        }
        dt.sig_fingerprint()
    }

    /// Checks that a matched message of `len` bytes with signature `sent` may be
    /// received by `req` (its signature is a prefix of the receive's); on a
    /// mismatch the receive is marked to fail without taking the data. A message
    /// longer than the receive is left to the truncation error.
    fn check_sig(&mut self, req: Request, sent: u64, len: usize) {
        if sent == 0 {
            return;
        }
        if let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
            if r.sig != 0 && r.sig != sent && len <= r.buf.len && !crate::datatype::sigcheck::check(r.sig, len, sent) {
                r.bad_sig = sent;
            }
        }
    }

    /// A blocking standard-mode send that fits one shared-memory cell, written
    /// straight into the ring when nothing is queued before it: no request, no
    /// outbox item. Returns `false` (having done nothing) when it cannot be done
    /// that way; the caller then takes the general path.
    ///
    /// The header's `sreq` is 0: only a send request's owner can cancel it or wait
    /// for a synchronous ack, and this send is complete when we return.
    pub(crate) fn try_send_now(&mut self, peer: u32, env: Envelope, data: &[u8], sig: u64) -> bool {
        let cost = credit_cost(data.len()) as i64;
        if data.len() > self.eager_limit || self.peers[peer as usize].credit < cost {
            return false;
        }
        // sreq 0: only a send request's owner can cancel it or wait for a sync ack,
        // and this send is complete when we return.
        let hdr = Header::eager(&env, data.len(), 0, sig, 0);
        let pushed = self.push_whole_now(peer, &hdr, data);
        if pushed && crate::diag::tracing() {
            crate::diag::trace_send(self.me, peer, env.context, env.tag);
        }
        if pushed {
            self.peers[peer as usize].credit -= cost;
            self.stats.sent(crate::tools::Via::Shm, data.len());
        }
        pushed
    }

    /// Writes a whole eager message (header and data in one cell) into a shared-
    /// memory peer's ring, if nothing is queued before it and it fits; `false` if not.
    fn push_whole_now(&mut self, peer: u32, hdr: &Header, data: &[u8]) -> bool {
        let Some(shm) = self.shm else { return false };
        let p = &self.peers[peer as usize];
        let Path::Shm { local } = p.path else { return false };
        if !p.outbox.is_empty() || data.len() > CELL_PAYLOAD - HEADER_LEN {
            return false;
        }
        // SAFETY: `State` is only reached through the engine's mutex, so no other
        // thread of this process pushes to any ring while we do.
        let pushed = unsafe {
            shm.try_push_exclusive(local, HEADER_LEN + data.len(), |cell| {
                let hl = hdr.encode(cell);
                cell[hl..hl + data.len()].copy_from_slice(data);
                hl + data.len()
            })
        };
        self.peers[peer as usize].sent += pushed as u64;
        pushed
    }

    fn start_send_owning(
        &mut self,
        peer: u32,
        env: Envelope,
        data: RawBuf,
        already_owned: Option<Box<[u8]>>,
        mode: SendMode,
        sig: u64,
    ) -> Result<Request> {
        let pool_key = if mode != SendMode::Buffered {
            None
        } else if self.comm_bsend.contains_key(&env.context) {
            Some(env.context)
        } else {
            self.bsend_alias.get(&env.context).copied().filter(|k| self.comm_bsend.contains_key(k))
        };
        if crate::diag::tracing() && peer != self.me {
            crate::diag::trace_send(self.me, peer, env.context, env.tag);
        }
        let (data, owned, charge) = if mode == SendMode::Buffered {
            let charge = data.len + BSEND_OVERHEAD;
            let whose = match pool_key {
                Some(k) if k == env.context => "the communicator's attached buffer",
                Some(_) => "the session's attached buffer",
                None => "the attached buffer",
            };
            let pool = self.bsend_pool_mut(pool_key);
            let Some((_, size)) = pool.attached else {
                return Err(MpiError::new(
                    ErrorClass::Buffer,
                    "MPI_Bsend: no buffer is attached (call MPI_Buffer_attach or MPI_Comm_attach_buffer first)",
                ));
            };
            if pool.used + charge > size {
                return Err(MpiError::new(
                    ErrorClass::Buffer,
                    format!(
                        "MPI_Bsend: {whose} is too small: {} of {} bytes in use, this message needs {}",
                        pool.used, size, charge
                    ),
                ));
            }
            pool.used += charge;
            let copy: Box<[u8]> = match already_owned {
                Some(b) => b,
                // SAFETY: the caller's buffer is valid for this call (entry-point contract).
                None => unsafe { data.as_slice() }.into(),
            };
            let raw = RawBuf::from_slice(&copy);
            (raw, Some(copy), charge)
        } else {
            (data, already_owned, 0)
        };
        let sync = mode == SendMode::Synchronous;
        if let Some(via) = self.peers[peer as usize].path.via() {
            self.stats.sent(via, data.len);
        }
        let cost = credit_cost(data.len) as i64;
        if !sync
            && mode != SendMode::Buffered
            && data.len <= self.eager_limit
            && matches!(self.peers[peer as usize].path, Path::Shm { .. })
            && self.peers[peer as usize].credit >= cost
        {
            // A whole small message into an idle ring: the send is complete as soon as
            // it is written, so its request is made complete in one piece afterwards
            // (filling it in field by field and reading it back stalled on the store
            // buffer, which still holds the ring writes).
            let req = self.reqs.peek_next();
            let hdr = Header::eager(&env, data.len, req.0, sig, 0);
            // SAFETY: the send is active, so its buffer is readable.
            if self.push_whole_now(peer, &hdr, unsafe { data.as_slice() }) {
                self.peers[peer as usize].credit -= cost;
                let entry = ReqEntry {
                    kind: ReqKind::Send(SendReq {
                        peer,
                        context: env.context,
                        data,
                        _owned: owned,
                        bsend_charge: 0,
                        bsend_pool: None,
                        local_done: true,
                        await_ack: false,
                        cancel_pending: false,
                        user_half: None,
                        state: SendState::InFlight,
                    }),
                    done: true,
                    status: Status::ok(PROC_NULL, env.tag, data.len),
                    error: None,
                    detached: false,
                };
                let got = self.reqs.insert(entry);
                debug_assert_eq!(got, req, "Slab::peek_next disagrees with insert");
                self.completions += 1;
                return Ok(got);
            }
        }
        let req = self.new_request(ReqKind::Send(SendReq {
            peer,
            context: env.context,
            data,
            _owned: owned,
            bsend_charge: charge,
            bsend_pool: pool_key,
            local_done: false,
            await_ack: sync,
            cancel_pending: false,
            user_half: None,
            state: SendState::Queued,
        }));
        {
            let e = self.reqs.get_mut(req).unwrap();
            e.status = Status::ok(PROC_NULL, env.tag, data.len);
            if mode == SendMode::Buffered {
                e.detached = true;
            }
        }
        let hdr_base = Header::eager(&env, data.len, req.0, sig, if sync { FLAG_SYNC } else { 0 });
        match self.peers[peer as usize].path {
            Path::SelfLoop => self.send_to_self(req, env, data, sync, sig),
            Path::Shm { .. } | Path::Tcp => {
                let p = &mut self.peers[peer as usize];
                if data.len <= self.eager_limit && p.credit >= cost {
                    p.credit -= cost;
                    // SAFETY: the send is active, so its buffer is readable.
                    if self.push_whole_now(peer, &hdr_base, unsafe { data.as_slice() }) {
                        self.mark_sent(req, false);
                    } else {
                        self.enqueue(peer, OutItem::Eager { hdr: hdr_base, data, sent: 0, started: false, req });
                    }
                } else {
                    let hdr = Header { kind: Kind::Rts, rreq: data.addr as u64, ..hdr_base };
                    self.stats.rendezvous += 1;
                    if let Some(ReqKind::Send(s)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
                        s.state = SendState::InFlight;
                    }
                    self.enqueue(peer, OutItem::Ctrl(hdr));
                }
            }
            Path::Unreachable => {
                self.reqs.remove(req);
                self.bsend_pool_mut(pool_key).used -= charge;
                return Err(MpiError::unsupported(
                    "MPI_Send",
                    format!("reaching world rank {peer} on another host (the TCP transport)"),
                ));
            }
        }
        if mode == SendMode::Buffered {
            // The user's half of a buffered send is complete at once.
            let user = self.new_request(ReqKind::BufferedUser { inner: req, peer });
            let e = self.reqs.get_mut(user).unwrap();
            e.done = true;
            e.status = Status::ok(PROC_NULL, env.tag, data.len);
            if let Some(ReqKind::Send(s)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
                s.user_half = Some(user);
            }
            return Ok(user);
        }
        Ok(req)
    }

    fn send_to_self(&mut self, req: Request, env: Envelope, data: RawBuf, sync: bool, sig: u64) {
        self.stats.received(crate::tools::Via::SelfLoop, data.len);
        if let Some(rreq) = self.matcher.match_arrival(&env) {
            self.check_sig(rreq, sig, data.len);
            // SAFETY: both operations are active: source readable, target writable.
            let src = unsafe { data.as_slice() };
            self.deliver_whole(rreq, env, src);
            self.mark_sent(req, true);
            return;
        }
        let small = data.len <= self.eager_limit && !sync;
        let body = if small {
            // SAFETY: the send is active, so its buffer is readable.
            Body::Eager { data: unsafe { data.as_slice() }.to_vec(), total: data.len }
        } else {
            Body::Rts { addr: data.addr as u64, total: data.len }
        };
        let id = self.add_unexpected(UnexpMsg { env, from: self.me, sreq: req.0, sync, sig, body, claimed_by: None });
        let _ = id;
        if small {
            self.mark_sent(req, false);
        } else if let Some(ReqKind::Send(s)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
            s.state = SendState::InFlight;
        }
    }

    /// The data of send `req` has left; `acked` also clears a pending sync ack.
    fn mark_sent(&mut self, req: Request, acked: bool) {
        if let Some(ReqKind::Send(s)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
            s.local_done = true;
            s.state = SendState::InFlight;
            if acked {
                s.await_ack = false;
            }
        }
        self.send_progressed(req);
    }

    fn add_unexpected(&mut self, msg: UnexpMsg) -> u64 {
        let id = self.next_msg;
        self.next_msg += 1;
        let env = msg.env;
        self.unexp.insert(id, msg);
        self.matcher.push_unexpected(env, id);
        self.stats.unexpected_queued(self.matcher.unexpected_len());
        id
    }

    fn enqueue(&mut self, peer: u32, item: OutItem) {
        let p = &mut self.peers[peer as usize];
        let was_empty = p.outbox.is_empty();
        p.outbox.push_back(item);
        if was_empty {
            self.flush_peer(peer);
            if !self.peers[peer as usize].outbox.is_empty() {
                self.pending_out.push(peer);
            }
        }
    }

    /// A control packet to `peer`.
    fn ctrl(&mut self, peer: u32, hdr: Header) {
        if self.peers[peer as usize].path == Path::SelfLoop {
            self.handle_control(peer, &hdr);
        } else {
            self.enqueue(peer, OutItem::Ctrl(hdr));
        }
    }

    /// Writes as much of `peer`'s outbox into its ring as fits.
    fn flush_peer(&mut self, peer: u32) {
        loop {
            let shm = self.shm;
            let p = &mut self.peers[peer as usize];
            let mut link = match p.path {
                Path::Shm { local } => match shm {
                    Some(s) => Link::Shm(s, local),
                    None => return,
                },
                Path::Tcp => match self.tcp.as_mut() {
                    Some(t) => Link::Tcp(t, peer),
                    None => return,
                },
                _ => return,
            };
            let cap = link.max_packet();
            let Some(item) = p.outbox.front_mut() else { return };
            let finished: Option<Request>;
            match item {
                OutItem::Ctrl(h) => {
                    let h = *h;
                    if !link.push(HEADER_LEN, |cell| h.encode(cell)) {
                        return;
                    }
                    p.sent += 1;
                    p.outbox.pop_front();
                    continue;
                }
                OutItem::Eager { hdr, data, sent, started, req } => {
                    // SAFETY: the send request owning `data` is active until this item is done.
                    let src = unsafe { data.as_slice() };
                    while !*started || *sent < src.len() {
                        let (hl, h) = if *started {
                            (CONT_HEADER_LEN, Header { kind: Kind::EagerCont, ..*hdr })
                        } else {
                            (HEADER_LEN, *hdr)
                        };
                        let n = (src.len() - *sent).min(cap - hl);
                        let pushed = link.push(hl + n, |cell| {
                            h.encode(cell);
                            cell[hl..hl + n].copy_from_slice(&src[*sent..*sent + n]);
                            *sent += n;
                            hl + n
                        });
                        if !pushed {
                            return;
                        }
                        p.sent += 1;
                        *started = true;
                    }
                    finished = Some(*req);
                }
                OutItem::Stream { rreq, data, sent, req } => {
                    // SAFETY: as above, the send owning `data` waits for this stream.
                    let src = unsafe { data.as_slice() };
                    while *sent < src.len() {
                        let h = Header { kind: Kind::Data, flags: 0, context: 0, source: 0, tag: 0, len: 0, sreq: 0, rreq: *rreq, sig: 0 };
                        let n = (src.len() - *sent).min(cap - CONT_HEADER_LEN);
                        let pushed = link.push(CONT_HEADER_LEN + n, |cell| {
                            let hl = h.encode(cell);
                            cell[hl..hl + n].copy_from_slice(&src[*sent..*sent + n]);
                            *sent += n;
                            hl + n
                        });
                        if !pushed {
                            return;
                        }
                        p.sent += 1;
                    }
                    finished = Some(*req);
                }
            }
            let was_stream = matches!(p.outbox.pop_front(), Some(OutItem::Stream { .. }));
            if let Some(r) = finished {
                // A stream follows a CTS, so the receive has matched: that is
                // also the acknowledgement a synchronous send waits for.
                self.mark_sent(r, was_stream);
            }
        }
    }

    // ----- receiving ------------------------------------------------------------

    /// Posts a receive into `buf` (valid until completion) for `pattern`.
    pub(crate) fn post_recv(&mut self, buf: RawBuf, pattern: Pattern) -> Request {
        self.post_recv_unpacking(buf, pattern, None, 0)
    }

    /// [`State::post_recv`] into a temporary buffer that is unpacked on completion.
    /// `sig` is the expected type signature ([`State::sig_of`]; 0 = unchecked).
    pub(crate) fn post_recv_unpacking(&mut self, buf: RawBuf, pattern: Pattern, unpack: Option<Box<Unpack>>, sig: u64) -> Request {
        let req = self.new_request(ReqKind::Recv(RecvReq {
            buf,
            posted: false,
            total: 0,
            received: 0,
            env: None,
            unpack,
            sig,
            bad_sig: 0,
            context: pattern.context,
        }));
        if let Some((_, id)) = self.matcher.match_posted(&pattern) {
            self.take_unexpected(req, id);
        } else {
            if let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
                r.posted = true;
            }
            self.matcher.push_posted(pattern, req);
            self.stats.posted_queued(self.matcher.posted_len());
        }
        req
    }

    /// Receives message `id`, already removed from the matching queue (mprobe),
    /// into `buf` or, with `unpack`, a temporary buffer unpacked on completion;
    /// `sig` as for [`State::post_recv_unpacking`].
    pub(crate) fn recv_message_unpacking(&mut self, buf: RawBuf, id: u64, unpack: Option<Box<Unpack>>, sig: u64) -> Request {
        let req = self.new_request(ReqKind::Recv(RecvReq { buf, posted: false, total: 0, received: 0, env: None, unpack, sig, bad_sig: 0, context: 0 }));
        self.take_unexpected(req, id);
        req
    }

    /// Hands unexpected message `id` (removed from the matcher) to receive `req`.
    fn take_unexpected(&mut self, req: Request, id: u64) {
        let Some((sent, len)) = self.unexp.get(&id).map(|m| (m.sig, m.body.total())) else { return };
        self.check_sig(req, sent, len);
        let Some(msg) = self.unexp.get_mut(&id) else { return };
        match &msg.body {
            Body::Eager { data, total } if data.len() < *total => {
                // Fragments still arriving: finish when the last one comes in.
                msg.claimed_by = Some(req);
            }
            Body::Eager { .. } => {
                let msg = self.unexp.remove(&id).unwrap();
                let Body::Eager { data, .. } = &msg.body else { unreachable!() };
                self.deliver_whole(req, msg.env, data);
                self.after_eager_delivered(&msg);
                self.recycle_eager(msg.body);
            }
            Body::Rts { addr, total } => {
                let (addr, total) = (*addr, *total);
                let msg = self.unexp.remove(&id).unwrap();
                self.start_rendezvous(req, msg.env, msg.from, msg.sreq, addr, total);
            }
        }
    }

    /// Keeps the buffer of a delivered small unexpected message for the next one.
    fn recycle_eager(&mut self, body: Body) {
        if let Body::Eager { mut data, .. } = body {
            if data.capacity() == SPARE_EAGER_CAP && self.spare_eager.len() < SPARE_EAGER_MAX {
                data.clear();
                self.spare_eager.push(data);
            }
        }
    }

    /// Sync ack and credit return once an eager message reached its receive.
    fn after_eager_delivered(&mut self, msg: &UnexpMsg) {
        if msg.from == self.me {
            // Our own message: the sender half is local.
            let sreq = Request(msg.sreq);
            if msg.sync {
                self.mark_sent(sreq, true);
            }
            return;
        }
        if msg.sync {
            self.ctrl(msg.from, Header::control(Kind::SyncAck, msg.sreq));
        }
        self.return_credit(msg.from, credit_cost(msg.body.total()));
    }

    fn return_credit(&mut self, peer: u32, bytes: usize) {
        let p = &mut self.peers[peer as usize];
        p.credit_owed += bytes as u64;
        if p.credit_owed as i64 >= CREDIT_PER_PEER / 4 {
            let h = Header { len: p.credit_owed, ..Header::control(Kind::Credit, 0) };
            p.credit_owed = 0;
            self.ctrl(peer, h);
        }
    }

    /// Copies a whole message into receive `req` and completes it.
    fn deliver_whole(&mut self, req: Request, env: Envelope, src: &[u8]) {
        let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) else { return };
        let buf = r.buf;
        let n = if r.bad_sig != 0 { 0 } else { src.len().min(buf.len) };
        // SAFETY: receive `req` is active, so its buffer is writable and unaliased.
        let dst = unsafe { buf.as_mut_slice() };
        dst[..n].copy_from_slice(&src[..n]);
        self.finish_recv(req, env, src.len());
    }

    fn finish_recv(&mut self, req: Request, env: Envelope, total: usize) {
        let cap = match self.reqs.get_mut(req).map(|e| &mut e.kind) {
            Some(ReqKind::Recv(r)) if r.bad_sig != 0 => {
                let (sent, want, cap) = (r.bad_sig, r.sig, r.buf.len);
                r.unpack = None;
                use crate::datatype::sigcheck::{describe_message, describe_receive};
                let err = MpiError::new(
                    ErrorClass::Type,
                    format!(
                        "MPI_Recv: type signature mismatch: the message from rank {} (tag {}) holds {} but the receive expects {}",
                        env.source,
                        env.tag,
                        describe_message(sent, total),
                        describe_receive(want, cap)
                    ),
                );
                self.complete(req, Status::ok(env.source, env.tag, 0), Some(err));
                return;
            }
            Some(ReqKind::Recv(r)) => {
                if let Some(u) = r.unpack.take() {
                    let got = total.min(u.temp.len());
                    // SAFETY: the receive's creator promised `dst` holds `count` elements of `dt` (entry-point contract);
                    // `got` bytes of the temporary are the message, at most `count` elements' worth.
                    unsafe { u.dt.unpack(&u.temp[..got], u.dst as *mut u8, u.count) };
                }
                r.buf.len
            }
            _ => return,
        };
        let status = Status::ok(env.source, env.tag, total.min(cap));
        let err = (total > cap).then(|| {
            MpiError::new(
                ErrorClass::Truncate,
                format!(
                    "MPI_Recv: message truncated: {total} bytes arrived from rank {} with tag {} but the receive buffer holds {cap}",
                    env.source, env.tag
                ),
            )
        });
        self.complete(req, status, err);
    }

    fn start_rendezvous(&mut self, req: Request, env: Envelope, from: u32, sreq: u64, addr: u64, total: usize) {
        let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) else { return };
        let buf = r.buf;
        let n = total.min(buf.len);
        if r.bad_sig != 0 {
            // Mismatched signature: take nothing, but let the sender finish.
            self.finish_recv(req, env, total);
            if from == self.me {
                self.mark_sent(Request(sreq), true);
            } else {
                self.ctrl(from, Header::control(Kind::Fin, sreq));
            }
            return;
        }
        if from == self.me {
            // SAFETY: the self send at `addr` is active (it waits for this match);
            // the receive buffer is active; they may not overlap by MPI's rules.
            let src = unsafe { RawBuf { addr: addr as usize, len: n }.as_slice() };
            // SAFETY: receive `req` is active, so its buffer is writable and unaliased.
            let dst = unsafe { buf.as_mut_slice() };
            dst[..n].copy_from_slice(src);
            self.finish_recv(req, env, total);
            self.mark_sent(Request(sreq), true);
            return;
        }
        if self.start_shared_copy(req, env, from, sreq, addr, total, n) {
            return;
        }
        let peer = &mut self.peers[from as usize];
        if peer.cma_ok || total == 0 {
            // SAFETY: receive `req` is active, so its buffer is writable.
            let dst = unsafe { buf.as_mut_slice() };
            match cma::read_remote(peer.pid, addr as usize, &mut dst[..n]) {
                Ok(()) => {
                    self.ctrl(from, Header::control(Kind::Fin, sreq));
                    self.finish_recv(req, env, total);
                    return;
                }
                Err(_) => peer.cma_ok = false,
            }
        }
        // Two-copy fallback: ask the sender to stream the data.
        if let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
            r.total = total;
            r.received = 0;
            r.env = Some(env);
        }
        let h = Header { rreq: req.0, ..Header::control(Kind::Cts, sreq) };
        self.ctrl(from, h);
    }

    /// Receives a large message from a local peer by copying it together with the
    /// sender: we ask it for help, then both of us claim chunks from the ring's copy
    /// line until none are left, so two cores copy at once. If the sender is busy
    /// elsewhere we simply copy every chunk ourselves. Returns `false` (nothing done)
    /// when this message does not qualify.
    #[allow(clippy::too_many_arguments)]
    fn start_shared_copy(&mut self, req: Request, env: Envelope, from: u32, sreq: u64, addr: u64, total: usize, n: usize) -> bool {
        let Some(shm) = self.shm else { return false };
        let peer = &mut self.peers[from as usize];
        let Path::Shm { local } = peer.path else { return false };
        let slot = peer.copy_busy.trailing_ones() as usize;
        if !self.shared_copy || !peer.cma_ok || slot >= COPY_SLOTS || n < SHARED_COPY_MIN {
            return false;
        }
        let Some(ReqKind::Recv(r)) = self.reqs.get(req).map(|e| &e.kind) else { return false };
        let buf = r.buf;
        let chunk = shared_copy_chunk(n);
        let chunks = n.div_ceil(chunk) as u32;
        peer.copy_id = peer.copy_id.wrapping_add(1).max(1);
        peer.copy_busy |= 1 << slot;
        let (id, pid) = (peer.copy_id, peer.pid);
        shm.copy_begin(local, slot, id);
        let help = Header {
            kind: Kind::Help,
            flags: 0,
            context: chunks,
            source: slot as i32,
            tag: id as i32,
            len: n as u64,
            sreq,
            rreq: buf.addr as u64,
            sig: chunk as u64,
        };
        self.ctrl(from, help);
        let me = shm.my_local();
        while let Some(c) = shm.copy_claim(local, me, slot, id, chunks) {
            let off = c as usize * chunk;
            let len = chunk.min(n - off);
            // The sender writes only the chunks it claimed, never this one.
            // SAFETY: receive `req` is active: its `n`+ bytes are ours; we borrow just this chunk.
            let dst = unsafe { RawBuf { addr: buf.addr + off, len }.as_mut_slice() };
            let ok = cma::read_remote(pid, addr as usize + off, dst).is_ok();
            shm.copy_done(local, me, slot, ok);
        }
        self.shared_copies.push(SharedCopy { req, from, local, slot, sreq, env, total, chunks });
        self.finish_shared_copies();
        true
    }

    /// Completes shared copies whose every chunk is in; returns whether any did.
    fn finish_shared_copies(&mut self) -> bool {
        let Some(shm) = self.shm else { return false };
        let mut any = false;
        let mut i = 0;
        while i < self.shared_copies.len() {
            let c = self.shared_copies[i];
            let (done, failed) = shm.copy_progress(c.local, c.slot);
            if done < c.chunks {
                i += 1;
                continue;
            }
            self.shared_copies.swap_remove(i);
            any = true;
            let peer = &mut self.peers[c.from as usize];
            peer.copy_busy &= !(1 << c.slot);
            if failed {
                // A chunk could not be copied: have the sender stream the message.
                peer.cma_ok = false;
                if let Some(ReqKind::Recv(r)) = self.reqs.get_mut(c.req).map(|e| &mut e.kind) {
                    r.total = c.total;
                    r.received = 0;
                    r.env = Some(c.env);
                }
                let h = Header { rreq: c.req.0, ..Header::control(Kind::Cts, c.sreq) };
                self.ctrl(c.from, h);
            } else {
                self.ctrl(c.from, Header::control(Kind::Fin, c.sreq));
                self.finish_recv(c.req, c.env, c.total);
            }
        }
        any
    }

    /// Sender side of a shared copy: writes the chunks we can claim of our send
    /// `h.sreq` into the receiver's buffer.
    fn help_copy(&mut self, from: u32, h: &Header) {
        let Some(shm) = self.shm.filter(|_| self.shared_copy) else { return };
        let Path::Shm { local } = self.peers[from as usize].path else { return };
        // Only data of a send to this very peer may go into its memory.
        let data = match self.reqs.get(Request(h.sreq)).map(|e| &e.kind) {
            Some(ReqKind::Send(s)) if s.peer == from => s.data,
            _ => return,
        };
        let (slot, id, chunks, chunk) = (h.source as usize, h.tag as u32, h.context, h.sig as usize);
        let n = (h.len as usize).min(data.len);
        let pid = self.peers[from as usize].pid;
        let me = shm.my_local();
        // SAFETY: send `h.sreq` is active (it completes on the receiver's Fin, which
        // comes only after every chunk is done), so its buffer is readable.
        let src = unsafe { data.as_slice() };
        while let Some(c) = shm.copy_claim(me, local, slot, id, chunks) {
            let off = (c as usize).saturating_mul(chunk);
            let copied = off >= n || cma::write_remote(pid, h.rreq as usize + off, &src[off..off + chunk.min(n - off)]).is_ok();
            shm.copy_done(me, local, slot, copied);
        }
    }

    // ----- incoming packets -----------------------------------------------------

    fn handle_packet(&mut self, from: u32, pkt: &[u8]) {
        self.peers[from as usize].recvd += 1;
        let Some((h, payload)) = Header::decode(pkt) else {
            eprintln!("oxmpi: rank {}: dropped a malformed packet from rank {from}", self.me);
            return;
        };
        if matches!(h.kind, Kind::Eager | Kind::Rts) {
            if let Some(via) = self.peers[from as usize].path.via() {
                self.stats.received(via, h.len as usize);
            }
        }
        match h.kind {
            Kind::Eager => self.on_eager(from, &h, payload),
            Kind::EagerCont => self.on_eager_cont(from, payload),
            Kind::Rts => {
                let env = Envelope { context: h.context, source: h.source, tag: h.tag };
                if let Some(req) = self.matcher.match_arrival(&env) {
                    self.check_sig(req, h.sig, h.len as usize);
                    self.start_rendezvous(req, env, from, h.sreq, h.rreq, h.len as usize);
                } else {
                    let body = Body::Rts { addr: h.rreq, total: h.len as usize };
                    self.add_unexpected(UnexpMsg { env, from, sreq: h.sreq, sync: false, sig: h.sig, body, claimed_by: None });
                }
            }
            Kind::Data => self.on_data(&h, payload),
            _ => self.handle_control(from, &h),
        }
    }

    fn on_eager(&mut self, from: u32, h: &Header, payload: &[u8]) {
        let env = Envelope { context: h.context, source: h.source, tag: h.tag };
        let total = h.len as usize;
        let sync = h.flags & FLAG_SYNC != 0;
        let first = &payload[..payload.len().min(total)];
        if let Some(req) = self.matcher.match_arrival(&env) {
            self.check_sig(req, h.sig, total);
            if first.len() == total {
                self.deliver_whole(req, env, first);
                if sync {
                    self.ctrl(from, Header::control(Kind::SyncAck, h.sreq));
                }
                self.return_credit(from, credit_cost(total));
            } else {
                self.write_recv_at(req, 0, first);
                if let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
                    r.env = Some(env);
                    r.total = total;
                    r.received = 0;
                }
                // Remember the sender for the ack when the last fragment lands.
                self.peers[from as usize].rx = Rx::Direct { req, offset: first.len(), total };
                if sync {
                    self.ctrl(from, Header::control(Kind::SyncAck, h.sreq));
                }
            }
        } else {
            // Small messages reuse the buffers of delivered ones: no allocation
            // (and no free at delivery) per unexpected message.
            let mut data = if total <= SPARE_EAGER_CAP {
                self.spare_eager.pop().unwrap_or_else(|| Vec::with_capacity(SPARE_EAGER_CAP))
            } else {
                Vec::with_capacity(total)
            };
            data.extend_from_slice(first);
            let complete = data.len() == total;
            let id = self.add_unexpected(UnexpMsg {
                env,
                from,
                sreq: h.sreq,
                sync,
                sig: h.sig,
                body: Body::Eager { data, total },
                claimed_by: None,
            });
            self.peers[from as usize].rx = if complete { Rx::Idle } else { Rx::Unexpected { msg: id } };
        }
    }

    fn write_recv_at(&mut self, req: Request, offset: usize, src: &[u8]) {
        let Some(ReqKind::Recv(r)) = self.reqs.get(req).map(|e| &e.kind) else { return };
        let buf = r.buf;
        if offset >= buf.len || r.bad_sig != 0 {
            return;
        }
        let n = src.len().min(buf.len - offset);
        // SAFETY: receive `req` is active, so its buffer is writable and unaliased.
        let dst = unsafe { buf.as_mut_slice() };
        dst[offset..offset + n].copy_from_slice(&src[..n]);
    }

    fn on_eager_cont(&mut self, from: u32, payload: &[u8]) {
        match self.peers[from as usize].rx {
            Rx::Idle => {
                eprintln!("oxmpi: rank {}: stray continuation fragment from rank {from} dropped", self.me);
            }
            Rx::Direct { req, offset, total } => {
                let n = payload.len().min(total - offset);
                self.write_recv_at(req, offset, &payload[..n]);
                let offset = offset + n;
                if offset >= total {
                    self.peers[from as usize].rx = Rx::Idle;
                    let env = match self.reqs.get(req).map(|e| &e.kind) {
                        Some(ReqKind::Recv(r)) => r.env,
                        _ => None,
                    };
                    if let Some(env) = env {
                        self.finish_recv(req, env, total);
                    }
                    self.return_credit(from, credit_cost(total));
                } else {
                    self.peers[from as usize].rx = Rx::Direct { req, offset, total };
                }
            }
            Rx::Unexpected { msg: id } => {
                let Some(msg) = self.unexp.get_mut(&id) else { return };
                let Body::Eager { data, total } = &mut msg.body else { return };
                let n = payload.len().min(*total - data.len());
                data.extend_from_slice(&payload[..n]);
                if data.len() < *total {
                    return;
                }
                self.peers[from as usize].rx = Rx::Idle;
                if let Some(req) = msg.claimed_by {
                    let msg = self.unexp.remove(&id).unwrap();
                    let Body::Eager { data, .. } = &msg.body else { unreachable!() };
                    self.deliver_whole(req, msg.env, data);
                    self.after_eager_delivered(&msg);
                    self.recycle_eager(msg.body);
                }
            }
        }
    }

    fn on_data(&mut self, h: &Header, payload: &[u8]) {
        let req = Request(h.rreq);
        let (offset, total, env) = match self.reqs.get(req).map(|e| &e.kind) {
            Some(ReqKind::Recv(r)) => (r.received, r.total, r.env),
            _ => return,
        };
        self.write_recv_at(req, offset, payload);
        let received = offset + payload.len();
        if let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
            r.received = received;
        }
        if received >= total {
            if let Some(env) = env {
                self.finish_recv(req, env, total);
            }
        }
    }

    fn handle_control(&mut self, from: u32, h: &Header) {
        match h.kind {
            Kind::Fin => self.mark_sent(Request(h.sreq), true),
            Kind::SyncAck => {
                let r = Request(h.sreq);
                if let Some(ReqKind::Send(s)) = self.reqs.get_mut(r).map(|e| &mut e.kind) {
                    s.await_ack = false;
                }
                self.send_progressed(r);
            }
            Kind::Credit => self.peers[from as usize].credit += h.len as i64,
            Kind::Cts => {
                let r = Request(h.sreq);
                let data = match self.reqs.get(r).map(|e| &e.kind) {
                    Some(ReqKind::Send(s)) => s.data,
                    _ => return,
                };
                self.enqueue(from, OutItem::Stream { rreq: h.rreq, data, sent: 0, req: r });
            }
            Kind::CancelReq => {
                let sreq = h.sreq;
                let found = self
                    .matcher
                    .remove_unexpected(|id| {
                        self.unexp.get(id).is_some_and(|m| m.from == from && m.sreq == sreq && m.claimed_by.is_none())
                    })
                    .map(|(_, id)| id);
                let mut flags = 0;
                if let Some(id) = found {
                    if let Some(msg) = self.unexp.remove(&id) {
                        if let Body::Eager { .. } = msg.body {
                            if from != self.me {
                                self.return_credit(from, credit_cost(msg.body.total()));
                            }
                        }
                    }
                    flags = FLAG_CANCELLED;
                }
                // `rreq` names the sender's buffered-send request when the transfer
                // itself is finished on its side (echoed back for the answer).
                let ack = Header { flags, rreq: h.rreq, ..Header::control(Kind::CancelAck, sreq) };
                self.ctrl(from, ack);
            }
            Kind::Help => self.help_copy(from, h),
            Kind::CancelAck => {
                let cancelled = h.flags & FLAG_CANCELLED != 0;
                if h.rreq != 0 {
                    self.finish_buffered_cancel(Request(h.rreq), cancelled);
                    return;
                }
                let r = Request(h.sreq);
                if let Some(e) = self.reqs.get_mut(r) {
                    if let ReqKind::Send(s) = &mut e.kind {
                        s.cancel_pending = false;
                        if cancelled {
                            s.local_done = true;
                            s.await_ack = false;
                            e.status.cancelled = true;
                        }
                    }
                }
                self.send_progressed(r);
            }
            _ => {}
        }
    }

    // ----- progress ---------------------------------------------------------------

    /// Moves packets in and out; returns whether anything happened.
    pub(crate) fn progress(&mut self) -> bool {
        self.progress_inner(false)
    }

    /// [`State::progress`] for a caller that waits on receives it has all
    /// posted already (MPI_Waitall): packets keep being taken after one
    /// completed a request, as long as each lands in a posted receive; the
    /// first that would go to the unexpected queue ends the step.
    pub(crate) fn progress_draining(&mut self) -> bool {
        self.progress_inner(true)
    }

    fn progress_inner(&mut self, drain: bool) -> bool {
        // The common empty step (a spinning wait, an MPI_Irecv's look) in a few
        // loads: nothing queued out, no sockets, copies or schedules, and no ring
        // into this rank holding a packet.
        if self.pending_out.is_empty() && self.tcp.is_none() && self.shared_copies.is_empty() && self.active_colls.is_empty() {
            match self.shm {
                Some(shm) if shm.any_incoming() => {}
                _ => return false,
            }
        }
        let mut did = false;
        if !self.pending_out.is_empty() {
            let pending = std::mem::take(&mut self.pending_out);
            for peer in pending {
                self.flush_peer(peer);
                did = true;
                if !self.peers[peer as usize].outbox.is_empty() && !self.pending_out.contains(&peer) {
                    self.pending_out.push(peer);
                }
            }
        }
        if let Some(shm) = self.shm {
            // Stop taking packets once one completed something: the caller may be
            // about to post the receive for the next packet, which then lands in
            // its buffer directly instead of taking the unexpected-queue detour.
            // Start at a different peer each time, so a peer whose packets keep
            // completing requests cannot starve the others.
            let before = self.completions;
            let unexpected_before = self.next_msg;
            let stop = |st: &State| if drain { st.next_msg != unexpected_before } else { st.completions != before };
            let n = self.shm_peers.len();
            self.poll_start = if self.poll_start + 1 >= n { 0 } else { self.poll_start + 1 };
            for k in 0..n {
                if stop(self) {
                    break;
                }
                let i = if self.poll_start + k >= n { self.poll_start + k - n } else { self.poll_start + k };
                let (peer, local) = self.shm_peers[i];
                let mut budget = 64;
                // SAFETY: `State` is only reached through the engine's mutex, so no
                // other thread of this process pops from any ring while we do.
                while budget > 0 && !stop(self) && unsafe { shm.try_pop_exclusive(local, |pkt| self.handle_packet(peer, pkt)) } {
                    budget -= 1;
                    did = true;
                }
            }
        }
        if self.tcp.is_some() && self.progress_tcp() {
            did = true;
        }
        if !self.shared_copies.is_empty() && self.finish_shared_copies() {
            did = true;
        }
        // After the packets, so data that just arrived moves schedules on at once.
        if !self.active_colls.is_empty() && self.advance_colls() {
            did = true;
        }
        did
    }

    /// Registers a collective schedule as a request and runs it as far as it goes.
    pub(crate) fn start_schedule(&mut self, sched: crate::coll::sched::Schedule) -> Request {
        let r = self.new_request(ReqKind::Coll(Some(Box::new(sched))));
        self.active_colls.push(r);
        self.advance_colls();
        r
    }

    /// Registers a task as a request and runs it as far as it goes.
    pub(crate) fn start_task(&mut self, task: Box<dyn Task>) -> Request {
        let r = self.new_request(ReqKind::Task(Some(task)));
        self.active_colls.push(r);
        self.advance_colls();
        r
    }

    /// Advances every collective in progress; returns whether any finished.
    fn advance_colls(&mut self) -> bool {
        let mut finished = false;
        let mut i = 0;
        while i < self.active_colls.len() {
            let r = self.active_colls[i];
            let outcome = match self.reqs.get_mut(r).map(|e| &mut e.kind) {
                Some(ReqKind::Coll(s)) => match s.take() {
                    Some(mut sched) => {
                        let outcome = sched.advance(self).map(|done| done.then_some(Status::EMPTY));
                        if let Some(ReqKind::Coll(slot)) = self.reqs.get_mut(r).map(|e| &mut e.kind) {
                            *slot = Some(sched);
                        }
                        Some(outcome)
                    }
                    None => None,
                },
                Some(ReqKind::Task(t)) => match t.take() {
                    Some(mut task) => {
                        let outcome = task.advance(self).map(|done| done.then(|| task.status()));
                        if let Some(ReqKind::Task(slot)) = self.reqs.get_mut(r).map(|e| &mut e.kind) {
                            *slot = Some(task);
                        }
                        Some(outcome)
                    }
                    None => None,
                },
                _ => None,
            };
            let Some(outcome) = outcome else {
                self.active_colls.swap_remove(i);
                continue;
            };
            match outcome {
                Ok(None) => i += 1,
                Ok(Some(status)) => {
                    self.active_colls.swap_remove(i);
                    self.complete(r, status, None);
                    finished = true;
                }
                Err(err) => {
                    self.active_colls.swap_remove(i);
                    self.complete(r, Status::EMPTY, Some(err));
                    finished = true;
                }
            }
        }
        finished
    }

    /// Network I/O, then the packets that arrived over it.
    fn progress_tcp(&mut self) -> bool {
        let Some(t) = self.tcp.as_mut() else { return false };
        let mut did = t.poll();
        if let Some((peer, why)) = t.failed_peer() {
            eprintln!("oxmpi: rank {}: lost the connection to rank {peer}: {why}; ending the job", self.me);
            crate::runtime::end_job(1, "lost a TCP connection");
        }
        let readable: Vec<u32> = t.readable_peers().collect();
        for peer in readable {
            for _ in 0..64 {
                let Some(pkt) = self.tcp.as_mut().and_then(|t| t.pop_packet(peer)) else { break };
                self.handle_packet(peer, &pkt);
                did = true;
            }
        }
        did
    }

    /// Whether every byte queued for other hosts has been written.
    pub(crate) fn network_flushed(&self) -> bool {
        match &self.tcp {
            None => true,
            Some(t) => self.peers.iter().enumerate().all(|(r, p)| p.path != Path::Tcp || t.is_flushed(r as u32)),
        }
    }

    /// Says goodbye on every connection (MPI_Finalize, after the job's last
    /// barrier) so no peer mistakes our exit for a death.
    pub(crate) fn shutdown_network(&mut self) {
        if let Some(t) = self.tcp.as_mut() {
            t.shutdown(std::time::Duration::from_secs(10));
        }
    }

    /// File descriptors a blocked rank waits on besides its doorbell.
    /// Socket descriptors to wait on, and whether to wait for room to write too.
    pub(crate) fn tcp_fds(&self) -> Vec<(std::os::fd::RawFd, bool)> {
        self.tcp.as_ref().map(|t| t.poll_set()).unwrap_or_default()
    }

    /// Whether anything waits to be written out (for finalize).
    pub(crate) fn outbox_busy(&self) -> bool {
        !self.pending_out.is_empty()
    }

    /// Before sleeping: asks every local peer whose ring we could not write into
    /// to ring our doorbell when it frees a cell.
    pub(crate) fn announce_blocked_pushes(&self) {
        let Some(shm) = self.shm else { return };
        for &peer in &self.pending_out {
            if let Path::Shm { local } = self.peers[peer as usize].path {
                shm.announce_blocked(local);
            }
        }
    }

    /// Forgets credits still owed at finalize (nobody will use them).
    pub(crate) fn drop_credit_packets(&mut self) {
        for p in &mut self.peers {
            p.outbox.retain(|i| !matches!(i, OutItem::Ctrl(h) if h.kind == Kind::Credit));
        }
    }

    /// A human-readable account of what this rank waits for (hang reports).
    /// Packets pushed to and taken from every world rank (diagnosis).
    pub(crate) fn pair_counters(&self) -> (Vec<u64>, Vec<u64>) {
        (self.peers.iter().map(|p| p.sent).collect(), self.peers.iter().map(|p| p.recvd).collect())
    }

    /// The requests not complete yet, described for a user (diagnosis).
    pub(crate) fn pending_requests(&self) -> Vec<crate::diag::Pending> {
        let mut posted: std::collections::HashMap<Request, Pattern> = std::collections::HashMap::new();
        for (pat, r) in self.matcher.posted_iter() {
            posted.insert(*r, *pat);
        }
        let mut out = Vec::new();
        for (i, (g, e)) in self.reqs.slots.iter().enumerate() {
            let Some(e) = e else { continue };
            if e.done || e.detached {
                continue;
            }
            let r = Request::new(i as u32, *g);
            let p = match &e.kind {
                ReqKind::Send(s) => crate::diag::Pending {
                    what: format!("send to world rank {} (tag {}, {} bytes)", s.peer, e.status.tag, s.data.len),
                    peer_world: Some(s.peer),
                    ctx: Some(s.context),
                },
                ReqKind::Recv(_) => match posted.get(&r) {
                    Some(pat) => crate::diag::Pending {
                        what: format!(
                            "receive from {} (tag {})",
                            if pat.source == crate::matching::ANY_SOURCE { "MPI_ANY_SOURCE".to_string() } else { format!("rank {}", pat.source) },
                            if pat.tag == crate::matching::ANY_TAG { "MPI_ANY_TAG".to_string() } else { pat.tag.to_string() }
                        ),
                        peer_world: None,
                        ctx: Some(pat.context),
                    },
                    None => crate::diag::Pending { what: "receive (matched, data arriving)".into(), peer_world: None, ctx: None },
                },
                ReqKind::Coll(Some(s)) => crate::diag::Pending {
                    what: format!("collective schedule (tag {})", s.seq()),
                    peer_world: None,
                    ctx: Some(s.comm().context()),
                },
                ReqKind::Generalized => crate::diag::Pending { what: "generalized request".into(), peer_world: None, ctx: None },
                _ => continue,
            };
            out.push(p);
        }
        out
    }

    pub(crate) fn describe(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(out, "rank {}: {} live requests, {} posted receives, {} unexpected messages", self.me, self.reqs.live(), self.matcher.posted_len(), self.unexp.len());
        for (i, (g, e)) in self.reqs.slots.iter().enumerate() {
            if let Some(e) = e {
                if !e.done {
                    let _ = writeln!(out, "  request {:#x}: {:?}", Request::new(i as u32, *g).0, e.kind);
                }
            }
        }
        for (env, id) in self.matcher.unexpected_iter() {
            if let Some(m) = self.unexp.get(id) {
                let _ = writeln!(out, "  unexpected from world rank {} {:?}: {} bytes", m.from, env, m.body.total());
            }
        }
        for (r, p) in self.peers.iter().enumerate() {
            if !p.outbox.is_empty() || !matches!(p.rx, Rx::Idle) {
                let _ = writeln!(out, "  peer {r}: credit {} outbox {:?} rx {:?}", p.credit, p.outbox, p.rx);
            }
        }
        out
    }

    // ----- cancel -----------------------------------------------------------------

    /// MPI_Cancel.
    pub(crate) fn cancel(&mut self, r: Request) -> Result<()> {
        let Some(e) = self.reqs.get(r) else {
            return Err(MpiError::arg(ErrorClass::Request, "MPI_Cancel", "request", "not an active request"));
        };
        if e.done {
            // Sends complete locally before they are matched (eager); a cancel
            // must still reach the receiver then, so only receives stop here.
            if !matches!(e.kind, ReqKind::Send(_) | ReqKind::BufferedUser { .. }) {
                return Ok(());
            }
        }
        match &e.kind {
            &ReqKind::BufferedUser { inner, peer } => {
                // Done and not cancelled: no cancel asked yet (a pending one left it not done).
                if !e.done || e.status.cancelled {
                    return Ok(());
                }
                self.reqs.get_mut(r).unwrap().done = false;
                if self.reqs.get(inner).is_some() {
                    // The transfer is still going on: withdraw it; its completion
                    // completes this request (`SendReq::user_half`).
                    self.cancel(inner)
                } else {
                    // The data has left: ask the receiver to drop it unless matched.
                    self.ctrl(peer, Header { rreq: r.0, ..Header::control(Kind::CancelReq, inner.0) });
                    Ok(())
                }
            }
            ReqKind::Recv(rr) => {
                if rr.posted && self.matcher.remove_posted(|p| *p == r).is_some() {
                    let e = self.reqs.get_mut(r).unwrap();
                    let mut st = Status::EMPTY;
                    st.cancelled = true;
                    e.status = st;
                    self.complete(r, st, None);
                }
                Ok(())
            }
            ReqKind::Send(s) => {
                let peer = s.peer;
                if s.cancel_pending || e.status.cancelled {
                    return Ok(());
                }
                // Still in our outbox and not started: just take it out.
                let pos = self.peers[peer as usize].outbox.iter().position(|i| match i {
                    OutItem::Eager { req, started, .. } => *req == r && !*started,
                    OutItem::Ctrl(h) => h.kind == Kind::Rts && h.sreq == r.0,
                    _ => false,
                });
                if let Some(pos) = pos {
                    let item = self.peers[peer as usize].outbox.remove(pos).unwrap();
                    if let OutItem::Eager { data, .. } = item {
                        self.peers[peer as usize].credit += credit_cost(data.len) as i64;
                    }
                    if let Some(e) = self.reqs.get_mut(r) {
                        e.status.cancelled = true;
                        if let ReqKind::Send(s) = &mut e.kind {
                            s.local_done = true;
                            s.await_ack = false;
                        }
                    }
                    self.send_progressed(r);
                    return Ok(());
                }
                if let Some(e) = self.reqs.get_mut(r) {
                    e.done = false;
                    if let ReqKind::Send(s) = &mut e.kind {
                        s.cancel_pending = true;
                    }
                }
                self.ctrl(peer, Header::control(Kind::CancelReq, r.0));
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
