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
//!
//! ## Files (by protocol phase; each opens with what it owns and its invariants)
//! * `mod.rs`: the types (peers, requests, unexpected messages) and [`State`].
//! * `requests.rs`: the request table, completion, release, detach.
//! * `send.rs`: eager/rendezvous choice, bsend, sends to self, per-peer outboxes.
//! * `recv.rs`: posting receives, unexpected messages, eager and streamed data.
//! * `rendezvous.rs`: the receiver's single copy (CMA, shared copy) or `Cts`.
//! * `credit.rs`: eager flow control.
//! * `cancel.rs`: MPI_Cancel of receives and sends.
//! * `progress.rs`: packet dispatch, control packets, the progress step, tasks.
//! * `net.rs`: links to rings and sockets, TCP peers of other jobs.
//! * `describe.rs`: diagnosis (pending requests, state dumps).

use std::collections::{HashMap, VecDeque};

use crate::buf::{ActiveBuf, RawBuf, UnpackDst};
use crate::error::{ErrorClass, MpiError, Result};
use crate::matching::{Envelope, Matcher, Pattern};
use crate::pt2pt::wire::{
    Header, Kind, CONT_HEADER_LEN, FLAG_CANCELLED, FLAG_PULL, FLAG_SYNC, HEADER_LEN,
};
use crate::request::{Request, Status, PROC_NULL};
use crate::transport::cma;
use crate::transport::shm::{
    copy_packet_bytes, RingReceiver, RingSender, ShmSegment, CELL_PAYLOAD, COPY_SLOTS,
};
use crate::transport::tcp::{self, TcpTransport};

mod cancel;
mod credit;
mod describe;
mod net;
mod progress;
mod pullcost;
mod recv;
mod rendezvous;
mod requests;
mod send;
#[cfg(test)]
mod sim;

use credit::{credit_cost, CREDIT_PER_PEER};
use net::Link;
use rendezvous::SharedCopy;
use requests::IdHash;
use requests::Slab;
use send::copy_message;

/// How a peer is reached; chosen once, at start-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    SelfLoop,
    Shm {
        local: usize,
    },
    /// On another host, through the TCP transport.
    Tcp,
    /// On another host, and no network transport is available for it.
    Unreachable,
    /// No I/O: packets for this peer wait in `State::queued` until the embedder
    /// takes them ([`State::take_packet`]) and hands them to the peer's
    /// `handle_packet`. The deterministic protocol tests (`engine/sim.rs`) run
    /// ranks as plain values in one process this way.
    #[cfg_attr(not(test), allow(dead_code))]
    Queue,
}

impl Path {
    /// How the MPI_T traffic counters file this peer's messages.
    #[inline]
    fn via(&self) -> Option<crate::tools::Via> {
        match self {
            Path::SelfLoop => Some(crate::tools::Via::SelfLoop),
            Path::Shm { .. } => Some(crate::tools::Via::Shm),
            Path::Tcp => Some(crate::tools::Via::Tcp),
            Path::Unreachable | Path::Queue => None,
        }
    }
}

/// Something waiting to be written into a peer's ring, in order.
#[derive(Debug)]
enum OutItem {
    Ctrl(Header),
    /// An eager message: header first, then continuation fragments. The data is
    /// send `req`'s buffer (its entry's [`ActiveBuf`]), `hdr.len` bytes.
    Eager {
        hdr: Header,
        sent: usize,
        started: bool,
        req: Request,
    },
    /// Rendezvous data streamed after a `Cts` (fallback when CMA is refused): send
    /// `req`'s buffer.
    Stream {
        rreq: u64,
        sent: usize,
        req: Request,
    },
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
    /// A message (`Eager` or `Rts`) came from this peer since our last send to
    /// it: the next send answers one (a ping-pong), so a medium one goes by
    /// single copy ([`State::pull_min`]).
    answered: bool,
    /// The size above which this peer, as our receiver, last said pulling wins
    /// (a `Fin`'s `len`, [`pullcost::PullCost::floor`]); 0: no figure yet.
    pull_floor: u64,
    /// Sends to this peer that could have been pulled, counted for the probes of
    /// the path the figure did not choose ([`pullcost::PROBE_BURST`]).
    pull_probes: u16,
    /// Id of the last shared copy of this peer's data into ours (ring `peer -> me`).
    copy_id: u32,
    /// Bit `i`: the ring's shared-copy slot `i` is in use.
    copy_busy: u8,
    /// Our last rendezvous send (`Rts`) to this peer. While it is in flight a
    /// large message from the peer is half of an exchange, and we copy it
    /// without asking the peer for help ([`State::start_shared_copy`]).
    last_rts: Request,
    /// Receives matched to eager messages from this peer (over TCP) at their header,
    /// whose packets the engine has not handled yet, oldest first (see
    /// `net::land_eager`).
    landed_eager: VecDeque<Request>,
    /// Packets pushed to this peer and taken from it, for the launcher's
    /// deadlock check ("no message in flight" is `sent == peer's recvd`).
    pub(crate) sent: u64,
    pub(crate) recvd: u64,
}

impl Peer {
    /// A peer nothing has been sent to or taken from yet, reached by `path`, with
    /// `credit` eager bytes to start with; `cma_ok`: whether its memory may be read.
    fn new(path: Path, pid: i32, credit: i64, cma_ok: bool) -> Self {
        Peer {
            path,
            pid,
            credit,
            credit_owed: 0,
            outbox: VecDeque::new(),
            rx: Rx::Idle,
            cma_ok,
            answered: false,
            pull_floor: 0,
            pull_probes: 0,
            copy_id: 0,
            copy_busy: 0,
            last_rts: Request(0),
            landed_eager: VecDeque::new(),
            sent: 0,
            recvd: 0,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Rx {
    Idle,
    /// Fragments go straight into a matched receive.
    Direct {
        req: Request,
        offset: usize,
        total: usize,
    },
    /// Fragments go into an unexpected message.
    Unexpected {
        msg: u64,
    },
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
    Eager {
        data: Vec<u8>,
        total: usize,
    },
    /// The data is in the sender's memory at `addr` (or, for a self message, ours).
    Rts {
        addr: u64,
        total: usize,
    },
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
    BufferedUser {
        inner: Request,
        peer: u32,
    },
    /// A persistent request: what to start, and the operation currently running.
    Persistent {
        spec: PersistentSpec,
        active: Option<Request>,
    },
    /// A generalized request (MPI_Grequest_start): completed by user code
    /// ([`State::complete_generalized`]), never by progress.
    Generalized,
    /// A multi-step operation advanced by progress: a collective schedule,
    /// communicator duplication's context agreement, ... (taken out while it
    /// is being advanced).
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
    /// What a rank blocked on this task waits for (hang reports); `None`
    /// leaves it out of them.
    fn pending(&self) -> Option<crate::diag::Pending> {
        None
    }
}

#[derive(Debug)]
pub(crate) struct SendReq {
    peer: u32,
    /// The communicator context it was sent on (for diagnosis).
    context: u32,
    /// The bytes being sent (the user's buffer, or `owned`), held until completion.
    data: ActiveBuf,
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
    /// Where the message goes (the user's buffer, or the temporary of `unpack`),
    /// held until completion.
    buf: ActiveBuf,
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

impl RecvReq {
    /// A receive into `buf` that nothing has arrived for yet: queued as posted
    /// (`posted`) or about to take an unexpected message, on context `context`.
    #[inline]
    fn new(
        buf: ActiveBuf,
        posted: bool,
        unpack: Option<Box<Unpack>>,
        sig: u64,
        context: u32,
    ) -> Self {
        RecvReq {
            buf,
            posted,
            total: 0,
            received: 0,
            env: None,
            unpack,
            sig,
            bad_sig: 0,
            context,
        }
    }
}

/// Where a receive through a temporary buffer finally goes.
pub(crate) struct Unpack {
    pub dst: UnpackDst,
    pub temp: Box<[u8]>,
}

impl std::fmt::Debug for Unpack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Unpack({} x {:?} into {:#x})",
            self.dst.count(),
            self.dst.datatype().name(),
            self.dst.addr()
        )
    }
}

#[derive(Debug, Clone)]
pub(crate) enum PersistentSpec {
    Send {
        comm: crate::comm::Comm,
        buf: RawBuf,
        dest: i32,
        tag: i32,
        mode: SendMode,
    },
    Recv {
        comm: crate::comm::Comm,
        buf: RawBuf,
        source: i32,
        tag: i32,
    },
    /// A persistent collective: each start runs its non-blocking form.
    Coll(crate::coll::persistent::Starter),
}

#[derive(Debug)]
pub(crate) struct ReqEntry {
    pub kind: ReqKind,
    pub done: bool,
    pub status: Status,
    /// Boxed: errors are rare, and every request entry is written and dropped
    /// per message (184 bytes with the error inline, bench/PROFILE.md).
    pub error: Option<Box<MpiError>>,
    /// Freed by the user (MPI_Request_free) or internal: drop on completion.
    pub detached: bool,
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

/// The one blocking receive (`MPI_Recv`) that waits without a request entry: posted
/// while no receive was queued, so it is older than every queued one and the
/// arrival sites look at it first (engine/recv.rs, [`State::recv_now_or_post`]).
pub(crate) struct BlockingSlot {
    pattern: Pattern,
    /// The receive's buffer, lent until `outcome` leaves `Waiting` (then empty).
    buf: ActiveBuf,
    sig: u64,
    outcome: SlotOutcome,
}

/// What became of the receive in [`BlockingSlot`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotOutcome {
    Waiting,
    /// A whole eager message that fit landed: its status.
    Done(Status),
    /// Anything else matched it (fragments, a rendezvous, truncation, a signature
    /// to check, our own send): it became this request, at the head of the posted
    /// queue, and its waiter waits on that.
    Promoted(Request),
}

/// Where a blocking receive's post left it, when its message was not already here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Posted {
    Request(Request),
    /// In [`State`]'s blocking slot: wait with [`State::slot_outcome`].
    Slot,
}

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
    /// This process's producer side of every ring of `shm` (pushes need it), and
    /// the consumer side (taken out of `State` while a progress step pops).
    tx: Option<RingSender<'static>>,
    rx: Option<RingReceiver<'static>>,
    /// Bumped on every completion, so waiters in other threads can be woken.
    pub completions: u64,
    /// Whether the packet being handled is a peer's second message or later since
    /// our last send to it (a window, as in `osu_bw`, rather than a ping-pong): its
    /// copy out of the ring then takes the transport's vector loop
    /// ([`copy_packet_bytes`]), which streams 2-16 KiB faster than `memcpy`'s
    /// `rep movsb` but answers a ping-pong later (bench/PROFILE.md mbw33).
    rx_in_window: bool,
    /// The blocking receive waiting without a request entry, if any.
    blocking_slot: Option<BlockingSlot>,
    /// Persistent requests freed while a run was going (`MPI_Request_free`), with
    /// that run's detached request: the run still uses the persistent request's
    /// buffers until it completes (then the pair leaves, in `complete`), which
    /// buffer scopes wait for (`pt2pt::settle`). Usually empty.
    pub(crate) freed_runs: Vec<(Request, Request)>,
    /// Peers with something in their outbox.
    pending_out: Vec<u32>,
    /// The list a progress step flushes (`pending_out` of the step before), kept
    /// between steps so that taking it allocates nothing: a fresh `Vec` per step
    /// was a `malloc` and a `free` per progress step of a sender whose ring was
    /// full (bench/PROFILE.md, rx18).
    flushing: Vec<u32>,
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
    /// works, and `OXMPI_SHARED_COPY` is `1`, or unset on a host whose ranks do not
    /// outnumber its cores); also whether we ask for help. MPI_T's
    /// `OXMPI_SHARED_COPY` reports it (the effective setting, not the variable).
    pub(crate) shared_copy: bool,
    /// Receives being copied together with their senders.
    shared_copies: Vec<SharedCopy>,
    /// Rendezvous messages from shared-memory peers up to this size are streamed
    /// through the ring (`Cts`, two copies pipelined over both cores) rather than
    /// copied once by `process_vm_readv` ([`EngineConfig::shm_stream_max`]).
    shm_stream_max: usize,
    /// Messages above this size (and within the eager limit) that answer a message
    /// from their peer go as an `Rts` with `FLAG_PULL`: read by the receiver with
    /// one cross-process copy as soon as it arrives, matched or not
    /// ([`EngineConfig::pull_min`]).
    pub(crate) pull_min: usize,
    /// This process's running estimate of a read's cost against a copy out of the
    /// ring, which its `Fin`s report to senders ([`EngineConfig::adaptive_pull`]).
    pull_cost: pullcost::PullCost,
    /// Index into `shm_peers` where the last progress call started polling.
    poll_start: usize,
    /// Buffers of delivered small unexpected messages, for the next ones
    /// (at most [`SPARE_EAGER_MAX`] of [`SPARE_EAGER_CAP`] bytes).
    spare_eager: Vec<Vec<u8>>,
    /// Traffic counters behind the MPI_T performance variables.
    pub(crate) stats: crate::tools::Stats,
    /// Eager bytes a sender may have outstanding here ([`EngineConfig::credit_per_peer`]),
    /// and the owed amount from which credit goes back (a quarter of it).
    credit_per_peer: i64,
    credit_batch: u64,
    /// Packets for [`Path::Queue`] peers, per peer, oldest first; at most
    /// `queue_cap` each, of at most `queue_packet` bytes.
    queued: Vec<VecDeque<Vec<u8>>>,
    queue_cap: usize,
    queue_packet: usize,
}

/// The engine's protocol parameters. [`State::new`] reads them from the
/// environment; the deterministic tests choose them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EngineConfig {
    pub eager_limit: usize,
    pub check_sigs: bool,
    /// Whether cross-memory reads may be tried (rendezvous by a single copy).
    pub cma_allowed: bool,
    /// Whether sender and receiver copy large local messages together.
    pub shared_copy: bool,
    /// Largest rendezvous message from a shared-memory peer that is streamed
    /// through the ring instead of copied once across processes (0: none).
    pub shm_stream_max: usize,
    /// Eager-sized messages above this size that answer their peer (a ping-pong)
    /// are pulled by the receiver with one cross-process copy instead of two copies
    /// through the ring (`usize::MAX`: never). See [`SHM_PULL_MIN`].
    pub pull_min: usize,
    /// Whether senders above `pull_min` also follow their receiver's measured
    /// costs (engine/pullcost.rs; `OXMPI_PULL_ADAPT=0` turns it off).
    pub adaptive_pull: bool,
    pub credit_per_peer: i64,
    /// Packets a [`Path::Queue`] peer's queue holds before pushes fail (as a
    /// full ring's do), and the largest packet.
    pub queue_cap: usize,
    pub queue_packet: usize,
}

/// `OXMPI_SHM_STREAM_MAX` (bytes): rendezvous messages from a local peer up to this
/// size are streamed through the ring (`Cts`) instead of copied once across processes;
/// 0 (the default) always copies once when CMA works.
///
/// Streaming pipelines two copies over both cores through the ring; the single copy
/// (`process_vm_readv`, shared with the sender from `SHARED_COPY_MIN`) needs only the
/// receiver on a CPU. An AMD EPYC host favoured streaming up to half a ring (medium20
/// in bench/PROFILE.md: 128 KiB windows 40 vs 22 GB/s); the current 2-core Xeon host
/// does not (bw18: `osu_bw` 128 KiB 12.4 vs 27.4 GB/s, 256 KiB 12.7 vs 31.3, 1 MiB 11.1
/// vs 30.2; `osu_latency` 128 KiB 10.9 vs 3.8 us), nor does a loaded host (medium20:
/// median windows 2-10x slower streamed), so streaming is opt-in.
fn shm_stream_max() -> usize {
    env_bytes("OXMPI_SHM_STREAM_MAX", 0, 0)
}

pub(super) use crate::transport::env_bytes;

/// Messages above this size, up to the eager limit, that answer a message from
/// their peer (the next send after one arrived: a ping-pong) are pulled by the
/// receiver with one `process_vm_readv` instead of going through the ring twice;
/// a send that follows another (a window) stays eager. bench/PROFILE.md med27.
/// `OXMPI_PULL_MIN` overrides it.
pub(crate) const SHM_PULL_MIN: usize = 4096;

/// Unexpected eager messages up to this size get a recycled buffer of exactly
/// this capacity.
const SPARE_EAGER_CAP: usize = 256;
/// Recycled buffers kept at most (16 KiB).
const SPARE_EAGER_MAX: usize = 64;

impl State {
    /// `oversubscribed`: this host's ranks outnumber the cores they may run on
    /// (the start-up's one reading of it, `Engine::oversubscribed`).
    pub(crate) fn new(
        me: u32,
        paths: Vec<(Path, i32)>,
        shm: Option<&'static ShmSegment>,
        tcp: Option<TcpTransport>,
        oversubscribed: bool,
    ) -> State {
        let cma_allowed = std::env::var("OXMPI_NO_CMA").is_err() && cma::probe_cma();
        // All ranks on this host and single copies possible: the shared-memory
        // crossover; else the network's.
        let all_local = paths
            .iter()
            .all(|(p, _)| matches!(p, Path::Shm { .. } | Path::SelfLoop))
            && cma_allowed;
        let config = EngineConfig {
            eager_limit: crate::tools::initial_eager_limit(if all_local {
                crate::tools::SHM_EAGER_LIMIT
            } else {
                crate::tools::DEFAULT_EAGER_LIMIT
            }),
            check_sigs: std::env::var("OXMPI_CHECK_SIGNATURES").is_ok_and(|v| v == "1"),
            cma_allowed,
            // Not where this host's ranks outnumber its cores (unless
            // `OXMPI_SHARED_COPY=1`): the two copiers then take turns on one
            // core instead of copying at once, and the receiver waits for a
            // sender that is off the core (collC28 in bench/PROFILE.md: 4
            // ranks on 2 cores, alltoallv 32 KiB 25.5 -> 20.7 us, alltoall
            // 128 KiB 75 -> 63).
            shared_copy: cma_allowed
                && std::env::var("OXMPI_SHARED_COPY").map_or(!oversubscribed, |v| v != "0"),
            shm_stream_max: shm_stream_max(),
            pull_min: if all_local {
                env_bytes("OXMPI_PULL_MIN", 0, SHM_PULL_MIN)
            } else {
                usize::MAX
            },
            // The estimate times with the x86 time-stamp counter; elsewhere the fixed
            // threshold decides.
            adaptive_pull: all_local
                && cfg!(target_arch = "x86_64")
                && std::env::var("OXMPI_PULL_ADAPT").map_or(true, |v| v != "0"),
            credit_per_peer: CREDIT_PER_PEER,
            queue_cap: 0,
            queue_packet: CELL_PAYLOAD,
        };
        State::with_config(me, paths, shm, tcp, config)
    }

    /// A rank's engine with the given parameters (no environment read).
    pub(crate) fn with_config(
        me: u32,
        paths: Vec<(Path, i32)>,
        shm: Option<&'static ShmSegment>,
        tcp: Option<TcpTransport>,
        config: EngineConfig,
    ) -> State {
        let EngineConfig {
            eager_limit,
            check_sigs,
            cma_allowed,
            ..
        } = config;
        let queued = if paths.iter().any(|(p, _)| *p == Path::Queue) {
            paths.iter().map(|_| VecDeque::new()).collect()
        } else {
            Vec::new()
        };
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
            .map(|(path, pid)| {
                // Another host's memory cannot be read: rendezvous data streams.
                let cma_ok = cma_allowed && path != Path::Tcp;
                Peer::new(path, pid, config.credit_per_peer, cma_ok)
            })
            .collect();
        // One engine per segment: the sides are ours for the engine's life.
        let tx = shm.map(|s| {
            s.sender()
                .expect("shm: another holder has the segment's rings")
        });
        let rx = shm.map(|s| {
            s.receiver()
                .expect("shm: another holder has the segment's rings")
        });
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
            tx,
            rx,
            completions: 0,
            rx_in_window: false,
            blocking_slot: None,
            freed_runs: Vec::new(),
            pending_out: Vec::new(),
            flushing: Vec::new(),
            shm_peers,
            active_colls: Vec::new(),
            tcp,
            check_sigs,
            shared_copy: config.shared_copy,
            shared_copies: Vec::new(),
            shm_stream_max: config.shm_stream_max,
            pull_min: config.pull_min,
            pull_cost: pullcost::PullCost::new(config.adaptive_pull),
            poll_start: 0,
            spare_eager: Vec::new(),
            stats: crate::tools::Stats::default(),
            credit_per_peer: config.credit_per_peer,
            credit_batch: (config.credit_per_peer / 4) as u64,
            queued,
            queue_cap: config.queue_cap,
            queue_packet: config.queue_packet,
        }
    }

    /// The pid of world rank `w` when it shares this host's segment and
    /// cross-memory reads and writes with it work (not refused so far): what the
    /// shared-memory collectives' single copies need (`coll/shm/direct.rs`).
    pub(crate) fn cma_pid(&self, w: u32) -> Option<i32> {
        let p = self.peers.get(w as usize)?;
        (p.cma_ok && matches!(p.path, Path::Shm { .. })).then_some(p.pid)
    }
}
