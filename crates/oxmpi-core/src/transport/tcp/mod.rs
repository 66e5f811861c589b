//! The TCP transport, for ranks on different hosts: the same packet interface as the
//! shared-memory transport (`try_push(to, fill)`, `try_pop(from, f)`), over one TCP
//! connection per pair of ranks.
//!
//! Everything is non-blocking and single-threaded: no thread per peer. The engine calls
//! [`TcpTransport::poll`] from its progress loop; `poll` accepts connections, advances
//! handshakes, writes queued bytes and reads available bytes into per-peer packet
//! queues. For a blocking wait, [`TcpTransport::fds`] lists the descriptors to give to
//! poll(2)/epoll.
//!
//! # Wire protocol (version 1)
//!
//! All integers are little endian. `S` is the job secret, `HMAC` is HMAC-SHA256.
//! The connecting side is the *client*, the accepting side the *server*.
//!
//! 1. server → client, [`wire::SERVER_HELLO_LEN`] (44) bytes:
//!    `"OXMPITC1" | server_rank u32 | server_nonce [32]`.
//! 2. client → server, [`wire::CLIENT_MSG_LEN`] (80) bytes:
//!    `"OXMPITC1" | client_rank u32 | server_rank u32 | client_nonce [32] | mac [32]`,
//!    `mac = HMAC(S, "oxmpi-client" | server_nonce | client_nonce | client_rank | server_rank)`.
//! 3. server → client, [`wire::VERDICT_LEN`] (33) bytes: `verdict u8 | mac [32]`,
//!    verdict 1 = accepted, 0 = rejected (connection collision, see below),
//!    `mac = HMAC(S, "oxmpi-server" | client_nonce | server_nonce | client_rank | server_rank | verdict)`.
//!
//! Both sides check the other's MAC (mutual authentication), and every nonce is 32
//! fresh bytes from the kernel's CSPRNG, so a recorded client message is worthless on
//! another connection (its MAC covers the old server nonce), and likewise a recorded
//! verdict. Each handshake message has a fixed size and is read exactly (no byte past
//! it is consumed before the connection is accepted), the handshake must finish within
//! [`HANDSHAKE_TIMEOUT`], and at most [`MAX_PENDING`] unauthenticated connections are
//! kept at a time. A connection that fails any check is closed and one line is logged:
//! `oxmpi: rank R: rejected a TCP connection from ADDR: REASON`; the job carries on.
//!
//! After an accepting verdict, both directions carry frames:
//! `kind u8 | 0u8 × 3 | len u32 | payload [len]`, kind 1 = a packet
//! (`len <= MAX_PACKET`), kind 2 = goodbye (`len == 0`, the peer is shutting down and
//! sends nothing more). A frame with another kind, non-zero reserved bytes, a length
//! over [`MAX_PACKET`], anything after a goodbye, an end of stream inside a frame, or
//! an end of stream without a goodbye, makes the peer *failed* ([`TcpTransport::failed_peer`]):
//! a dead or misbehaving rank, so the job must end. The decoder allocates a payload
//! buffer only after checking its length against [`MAX_PACKET`].
//!
//! # One connection per pair, and why packets are never reordered
//!
//! Connections are opened lazily, by the first `try_push` to a peer. Rule, for ranks
//! `L < H`:
//!
//! * `L` accepts a connection from `H` only if `L` has neither a connection attempt of
//!   its own to `H` in progress nor an established connection with `H`; otherwise it
//!   rejects it (verdict 0).
//! * `H` accepts every connection from `L` (unless it already has an established one
//!   with `L`, which the rule makes impossible for well-behaved peers).
//! * An `H` whose attempt is rejected does not connect again: it waits for `L`'s
//!   connection. `L` rejected only because it had an attempt of its own in progress
//!   (or an established connection), and `H` accepts that one.
//!
//! Claim: at most one connection is ever established between `L` and `H`, and both
//! agree on which. The server decides (in one step of its single-threaded `poll`) and
//! the client considers the connection established only on reading an accepting
//! verdict, so both sides agree on each connection. A connection `H → L` is accepted
//! only when `L` has no attempt and no connection; from then on `L` has an established
//! connection and never starts an attempt, so no `L → H` connection follows. A
//! connection `L → H` exists only if `L` started an attempt, and while it is in progress
//! `L` rejects every `H → L` connection; once it is established `L` rejects them too.
//! So the two kinds of established connections exclude each other, and each side starts
//! at most one attempt at a time. (A violation by a peer - a second accepting verdict,
//! a duplicate connection - is detected and fails the peer rather than being used.)
//!
//! Packets to a peer go into one per-peer FIFO send buffer, which is written only to
//! the single established connection, only after its handshake, in order; the receiver
//! appends the frames of that connection, in order, to one per-peer FIFO. TCP delivers
//! the bytes of one connection in order. Hence packets between a pair arrive in the
//! order they were pushed. If the connection dies, the peer is failed (never
//! reconnected), so no second connection can carry later packets.
//!
//! # Flow control
//!
//! `try_push` returns false while more than [`SEND_BOUND`] bytes are queued for the peer
//! (back-pressure: the engine retries later). Reading from a connection pauses while
//! more than [`RECV_BOUND`] bytes of its packets wait to be popped, so a slow receiver
//! pushes back on the sender through TCP's own flow control instead of growing memory.
//!
//! # Large packets without copies
//!
//! [`TcpTransport::try_push_gather`] writes packets with one gathered `sendmsg` from the
//! caller's memory when nothing is queued before them (only what the socket does not
//! take is copied into the queue), and [`TcpTransport::poll_landing`] lets the engine
//! name, once a large packet's first bytes are in, the memory its payload is read into
//! (the posted receive's buffer): such a packet pops as landed, holding only its head.
//!
//! # Shutdown
//!
//! [`TcpTransport::shutdown`] flushes the queued packets, sends a goodbye to every
//! connected peer and waits (bounded) for theirs, so that a peer seeing the end of the
//! stream can tell a clean exit from a crash. The engine calls it in `MPI_Finalize`.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use crate::error::{ErrorClass, MpiError, Result};

mod connect;
pub mod flush;
mod progress;
mod socket;
#[cfg(test)]
mod tests;
pub mod wire;

pub use progress::wait_fds;
use socket::{
    connect_done, connect_nonblocking, random_nonce, read_exact_nb, read_two, send_gather,
    write_some,
};

/// Largest packet [`TcpTransport::try_push`] accepts; the engine fragments to this.
/// 256 KiB of payload plus room for an engine header: a stream of a power-of-two
/// message splits into whole 256 KiB packets. (At exactly 256 KiB, every 256 KiB or
/// larger power-of-two message ended with a runt packet of a few bytes of payload,
/// costing the receiver one more read and packet each.)
pub const MAX_PACKET: usize = 256 * 1024 + 64;
/// Bytes queued (unsent) for one peer beyond which `try_push` reports back-pressure.
pub const SEND_BOUND: usize = 4 << 20;
/// Bytes of received packets waiting to be popped beyond which a connection is not read.
pub const RECV_BOUND: usize = 4 << 20;
/// Time an incoming connection has to complete its handshake, and an outgoing attempt
/// to get an answer.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Most incoming connections kept in handshake at once (more are refused).
pub const MAX_PENDING: usize = 64;
/// How long failed connection attempts to a peer are retried before it is declared dead.
pub const CONNECT_DEADLINE: Duration = Duration::from_secs(30);

/// Eager payloads from this size on may go out gathered from the user's buffer
/// ([`TcpTransport::copies_eager`]); below it, a copy into the send queue costs less
/// than setting up a `sendmsg`.
pub const GATHER_MIN: usize = 4096;
/// Eager payloads up to this size may be copied into the send queue when another packet
/// went to the socket just before (a window), to be written together: see
/// [`Peer::direct_at`]. On by default at 16 KiB (measured best, net29);
/// `OXMPI_TCP_COALESCE_MAX` (in bytes, 0 turns it off) sets it. A held-back packet is
/// written by the sender's next poll, or by the flusher thread ([`flush`]) about 50 us
/// later if the program makes no MPI call meanwhile.
const COALESCE_MAX: usize = 16 * 1024;
/// How long after a direct write eager packets are still copied (see [`Peer::direct_at`]).
const COALESCE_FOR: Duration = Duration::from_micros(50);
/// Most bytes queued by copying before a packet goes gathered again (with the queue
/// ahead of it, in one call).
const COALESCE_QUEUE: usize = 256 * 1024;

/// Bytes read from a socket per `read` call into the scratch buffer.
const SCRATCH: usize = 64 * 1024;
/// Remaining payload size from which the decoder's buffer is read into directly.
const DIRECT_MIN: usize = 16 * 1024;
/// Payload bytes after the head from which a packet is offered to the engine's lander
/// ([`TcpTransport::poll_landing`]): an eager message from 1 KiB on whose receive is
/// posted is read straight into that receive's buffer (one copy, or none for a payload
/// read directly, instead of two and a zeroed allocation). From 4 KiB, not 1 KiB: net33's
/// interleaved runs (bench/PROFILE.md) read 1-2 KiB bandwidth lower with landing although
/// the receiver's instruction counts fell, and those sizes were already ahead of MPICH, so
/// they keep the staging path until a quiet run settles it.
const LAND_MIN: usize = 4096;
/// Most reads from one connection in one `poll` (fairness between peers).
const READS_PER_POLL: usize = 32;
/// Most connections accepted in one `poll`.
const ACCEPTS_PER_POLL: usize = 64;
/// How often an idle `poll` looks for new incoming connections. An `accept` that
/// finds nothing is a system call on every progress step, which a rank waiting for
/// a message over an established connection makes millions of times; connections
/// are made once per peer, so a short delay in noticing one costs little.
const ACCEPT_INTERVAL: Duration = Duration::from_micros(100);
/// How often `poll` looks for new incoming connections once every peer that could
/// connect to us is connected (only strays, to be refused, can come then): one
/// failed `accept` per 10 ms instead of one per 100 us of a busy rank's progress.
const ACCEPT_INTERVAL_IDLE: Duration = Duration::from_millis(10);

use wire::{Frame, FrameDecoder, Nonce};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Client: TCP connect in progress.
    Connecting,
    /// Client: waiting for the server hello.
    WaitHello,
    /// Client: sent its message, waiting for the verdict.
    WaitVerdict,
    /// Server: sent its hello, waiting for the client message.
    WaitClient,
    /// Authenticated and accepted: carries frames.
    Established,
}

/// One TCP connection and its handshake state.
struct Conn {
    stream: TcpStream,
    addr: SocketAddr,
    state: State,
    deadline: Instant,
    /// Handshake bytes received so far.
    inbuf: Vec<u8>,
    /// Handshake bytes to send (written before any frame), and how many went.
    out: Vec<u8>,
    out_sent: usize,
    my_nonce: Nonce,
    their_nonce: Nonce,
    /// Client: the rank connected to; server: the client's rank once verified.
    rank: u32,
    dec: FrameDecoder,
    /// The peer ended its stream (after a goodbye).
    eof: bool,
}

impl Conn {
    fn new(stream: TcpStream, addr: SocketAddr, state: State, rank: u32) -> Conn {
        Conn {
            stream,
            addr,
            state,
            deadline: Instant::now() + HANDSHAKE_TIMEOUT,
            inbuf: Vec::new(),
            out: Vec::new(),
            out_sent: 0,
            my_nonce: [0; wire::NONCE_LEN],
            their_nonce: [0; wire::NONCE_LEN],
            rank,
            dec: FrameDecoder::new(),
            eof: false,
        }
    }

    fn flush_handshake(&mut self, did: &mut bool) -> io::Result<bool> {
        let done = write_some(&self.stream, &self.out, &mut self.out_sent, did)?;
        if done {
            self.out.clear();
            self.out_sent = 0;
        }
        Ok(done)
    }
}

/// Per-peer state.
#[derive(Default)]
struct Peer {
    endpoint: Option<SocketAddr>,
    /// Our outgoing connection attempt, while in handshake.
    attempt: Option<Conn>,
    /// The established connection (ours or theirs).
    conn: Option<Conn>,
    /// Our attempt was rejected (we are the higher rank of a collision): wait for theirs.
    await_incoming: bool,
    /// Connection retries after failed attempts.
    first_try: Option<Instant>,
    next_try: Option<Instant>,
    backoff: Duration,
    /// Framed bytes queued for the peer: `sendbuf[sent..end]` (`sent` of the first `end`
    /// bytes are written). The vector keeps its length past `end` (its high-water mark),
    /// so that a packet is built in place (`try_push_max` hands the space after `end` to
    /// the engine's fill: one user-level copy of the payload, not two) without zeroing
    /// the space again for every packet.
    sendbuf: Vec<u8>,
    sent: usize,
    end: usize,
    /// We queued our goodbye: no more packets.
    bye_queued: bool,
    /// The last [`TcpTransport::try_push_gather`] left packets with the caller (the
    /// socket was full): a sleeper waits for room to write too ([`TcpTransport::poll_set`]).
    gather_blocked: bool,
    /// A write to the connection found the socket full (EAGAIN) since the last
    /// [`TcpTransport::poll`]: that poll does not try again (it clears the flag), so a
    /// rank spinning on a full socket makes one failed write per progress step, not two
    /// (the engine's gathered write of its outbox, then the poll's of the queue).
    wfull: bool,
    /// When a gathered write ([`TcpTransport::try_push_gather`]) or the send's write of
    /// the queue ([`TcpTransport::write_out`]) last went to this peer's socket, if no
    /// poll has written since: for [`COALESCE_FOR`] after it the next eager
    /// packets are copied into the queue instead ([`TcpTransport::copies_eager`]), and the
    /// next poll writes them all in one call. Over a veth pair each `sendmsg` runs the
    /// receiver's TCP input too (several us), so osu_bw's windows of 64 x 4 KiB, one
    /// `sendmsg` per message, got 838 MB/s where 2 KiB, copied and written together,
    /// got 2,055. The time limit (and [`COALESCE_QUEUE`]) bound how long a copied
    /// packet can wait for a poll: a blocking `MPI_Send` complete once queued returns
    /// without one, so a loop of sends with work between them writes each at once;
    /// the flusher ([`flush`]) writes the last ones if no poll comes.
    direct_at: Option<Instant>,
    /// Received packets; `Some(len)` for a [`wire::Frame::Landed`] one of `len` bytes,
    /// of which the buffer holds only the head (its payload is in the engine's memory).
    recvq: VecDeque<(Vec<u8>, Option<usize>)>,
    recv_bytes: usize,
    /// How many packets in `recvq` did not land (`None`).
    unlanded: usize,
    failed: bool,
    active: bool,
    /// A process outside this job, added at run time ([`TcpTransport::add_dynamic_peer`]).
    dynamic: Option<DynPeer>,
    /// Said goodbye and closed by [`TcpTransport::close_peer`] (MPI_Comm_disconnect).
    closed: bool,
}

/// How a process of another job is reached and proves itself.
struct DynPeer {
    /// Its own rank number (what its server hello carries).
    remote_me: u32,
    /// The index it gave us in its table (what we claim as our rank when we dial).
    my_index_there: u32,
    /// The secret both sides agreed for this connection (not the job secret).
    secret: Vec<u8>,
    /// Whether we open the connection (exactly one side does, so no collision).
    dial: bool,
}

impl Peer {
    fn queued(&self) -> usize {
        self.end - self.sent
    }

    /// Appends `bytes` to the queue, first moving the unsent rest to the front when the
    /// written part is the larger.
    fn append(&mut self, bytes: &[u8]) {
        if self.sent > 0 && self.sent >= self.end / 2 {
            self.sendbuf.copy_within(self.sent..self.end, 0);
            self.end -= self.sent;
            self.sent = 0;
        }
        self.queue_frame_bytes(bytes);
    }

    /// Appends a whole frame of `bytes` (the goodbye) to the queue.
    fn queue_frame_bytes(&mut self, bytes: &[u8]) {
        let end = self.end + bytes.len();
        if self.sendbuf.len() < end {
            self.sendbuf.resize(end, 0);
        }
        self.sendbuf[self.end..end].copy_from_slice(bytes);
        self.end = end;
    }
}

/// The TCP transport of one rank. See the [module documentation](self).
pub struct TcpTransport {
    me: u32,
    nranks: u32,
    secret: Vec<u8>,
    listener: TcpListener,
    endpoint: String,
    peers: Vec<Peer>,
    /// Peers that ever had traffic or a connection (the ones `poll` looks at).
    active: Vec<u32>,
    /// Incoming connections in handshake.
    pending: Vec<Conn>,
    failed: Vec<(u32, String)>,
    scratch: Box<[u8]>,
    rejected: u64,
    /// When `poll` next calls `accept` (see [`ACCEPT_INTERVAL`]).
    next_accept: Instant,
    /// `OXMPI_TCP_COALESCE_MAX`, or 0: coalescing off (see `COALESCE_MAX`).
    coalesce_max: usize,
    /// [`COALESCE_FOR`] (the unit tests lengthen it).
    coalesce_for: Duration,
}

impl std::fmt::Debug for TcpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpTransport")
            .field("rank", &self.me)
            .field("endpoint", &self.endpoint)
            .finish()
    }
}

fn io_err(call: &str, what: impl std::fmt::Display) -> MpiError {
    MpiError::new(ErrorClass::Other, format!("{call}: {what}"))
}

impl TcpTransport {
    /// Binds a listening socket on `bind_ip` (port 0 = ephemeral), NOT on every interface.
    pub fn new(my_rank: u32, nranks: u32, secret: &[u8], bind_ip: IpAddr) -> Result<TcpTransport> {
        const CALL: &str = "TcpTransport::new";
        if my_rank >= nranks {
            return Err(MpiError::arg(
                ErrorClass::Rank,
                CALL,
                "my_rank",
                format!("{my_rank} is not in 0..{nranks}"),
            ));
        }
        if secret.is_empty() {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "secret",
                "the job secret is empty",
            ));
        }
        if bind_ip.is_unspecified() {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "bind_ip",
                format!("{bind_ip} would listen on every interface"),
            ));
        }
        // std creates the socket with SOCK_CLOEXEC on Linux.
        let listener = TcpListener::bind(SocketAddr::new(bind_ip, 0))
            .map_err(|e| io_err(CALL, format!("cannot listen on {bind_ip}: {e}")))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| io_err(CALL, e))?;
        let endpoint = listener
            .local_addr()
            .map_err(|e| io_err(CALL, e))?
            .to_string();
        Ok(TcpTransport {
            me: my_rank,
            nranks,
            secret: secret.to_vec(),
            listener,
            endpoint,
            peers: (0..nranks).map(|_| Peer::default()).collect(),
            active: Vec::new(),
            pending: Vec::new(),
            failed: Vec::new(),
            scratch: vec![0u8; SCRATCH].into_boxed_slice(),
            rejected: 0,
            next_accept: Instant::now(),
            coalesce_max: std::env::var("OXMPI_TCP_COALESCE_MAX")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(COALESCE_MAX),
            coalesce_for: COALESCE_FOR,
        })
    }

    /// "ip:port" to publish through PMI.
    pub fn endpoint(&self) -> String {
        self.endpoint.clone()
    }

    /// Peers in the table: the job's ranks, then the processes added at run time.
    pub fn peer_count(&self) -> u32 {
        self.peers.len() as u32
    }

    /// Adds a process of another job (spawned, connected or joined) as peer
    /// `peer_count()`, returned. `remote_me` is its rank number in its own transport,
    /// `my_index_there` the peer index it gave us, `secret` the key both sides
    /// authenticate this connection with. Exactly one side dials (`dial`); the other
    /// waits for the connection, so the collision rule of the job's ranks is not
    /// needed. A dialing side starts connecting at once.
    pub fn add_dynamic_peer(
        &mut self,
        endpoint: &str,
        remote_me: u32,
        my_index_there: u32,
        secret: &[u8],
        dial: bool,
    ) -> Result<u32> {
        const CALL: &str = "TcpTransport::add_dynamic_peer";
        let addr: SocketAddr = endpoint.parse().map_err(|e| {
            MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "endpoint",
                format!("{endpoint:?}: {e}"),
            )
        })?;
        if secret.is_empty() {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "secret",
                "the connection secret is empty",
            ));
        }
        let r = self.peers.len() as u32;
        let mut p = Peer {
            endpoint: Some(addr),
            dynamic: Some(DynPeer {
                remote_me,
                my_index_there,
                secret: secret.to_vec(),
                dial,
            }),
            await_incoming: !dial,
            ..Peer::default()
        };
        p.active = true;
        self.peers.push(p);
        self.active.push(r);
        self.next_accept = Instant::now();
        if dial {
            self.start_attempt(r, Instant::now());
        }
        Ok(r)
    }

    /// Completes a process of another job added before its table gave us an
    /// index (several joins of one process at once reserve their indices in
    /// turn): the index it gave us, and whether we dial (then at once).
    pub fn set_dynamic_index(&mut self, r: u32, my_index_there: u32, dial: bool) {
        let Some(p) = self.peers.get_mut(r as usize) else {
            return;
        };
        let Some(d) = p.dynamic.as_mut() else { return };
        d.my_index_there = my_index_there;
        d.dial = dial;
        p.await_incoming = !dial;
        if dial {
            self.start_attempt(r, Instant::now());
        }
    }

    /// Whether a peer may still connect to us: one that has a published endpoint (a
    /// rank on another host) or is a process of another job, and no connection yet.
    fn expects_connections(&self) -> bool {
        self.peers.iter().enumerate().any(|(r, p)| {
            r as u32 != self.me
                && !p.failed
                && !p.closed
                && p.conn.is_none()
                && (p.endpoint.is_some() || p.dynamic.is_some())
        })
    }

    /// Whether `r` has an established connection.
    pub fn is_connected(&self, r: u32) -> bool {
        self.peers.get(r as usize).is_some_and(|p| {
            p.conn
                .as_ref()
                .is_some_and(|c| matches!(c.state, State::Established))
        })
    }

    /// Whether `r` failed (with the reason, if so).
    pub fn peer_failed(&self, r: u32) -> Option<String> {
        let p = self.peers.get(r as usize)?;
        if !p.failed {
            return None;
        }
        Some(
            self.failed
                .iter()
                .find(|(x, _)| *x == r)
                .map(|(_, w)| w.clone())
                .unwrap_or_default(),
        )
    }

    /// Queues a goodbye to `r` (nothing may be sent to it afterwards).
    pub fn say_goodbye(&mut self, r: u32) {
        let p = &mut self.peers[r as usize];
        if p.conn.is_some() && !p.bye_queued {
            p.bye_queued = true;
            p.queue_frame_bytes(&wire::encode_frame_header(wire::KIND_BYE, 0));
        }
        p.bye_queued = true;
    }

    /// Whether our goodbye to `r` is written and theirs arrived (or there is no
    /// connection to wait for).
    pub fn goodbye_done(&self, r: u32) -> bool {
        let p = &self.peers[r as usize];
        match &p.conn {
            None => true,
            Some(c) => p.queued() == 0 && (c.dec.saw_bye() || c.eof),
        }
    }

    /// Closes the connection to `r` after the goodbyes (MPI_Comm_disconnect): the
    /// peer is no longer polled, and its end of stream is not a failure.
    pub fn close_peer(&mut self, r: u32) {
        let p = &mut self.peers[r as usize];
        p.conn = None;
        p.attempt = None;
        p.bye_queued = true;
        p.closed = true;
        p.recvq.clear();
        p.recv_bytes = 0;
        p.unlanded = 0;
        self.active.retain(|&x| x != r);
        let p = &mut self.peers[r as usize];
        p.active = false;
    }

    /// Whether any peer is a process of another job (so blocked waits watch sockets).
    pub fn has_dynamic_peers(&self) -> bool {
        self.peers.iter().any(|p| p.dynamic.is_some() && !p.closed)
    }

    /// The secret, our rank as the peer knows it, and the peer's own rank, for the
    /// handshake with `r`.
    fn ids(&self, r: u32) -> (&[u8], u32, u32) {
        match &self.peers[r as usize].dynamic {
            Some(d) => (&d.secret, d.my_index_there, d.remote_me),
            None => (&self.secret, self.me, r),
        }
    }

    /// Records a peer's published endpoint (only off-host peers get one).
    pub fn set_endpoint(&mut self, rank: u32, endpoint: &str) -> Result<()> {
        const CALL: &str = "TcpTransport::set_endpoint";
        if rank >= self.nranks || rank == self.me {
            return Err(MpiError::arg(
                ErrorClass::Rank,
                CALL,
                "rank",
                format!("{rank} is not a peer of rank {}", self.me),
            ));
        }
        let addr: SocketAddr = endpoint.parse().map_err(|e| {
            MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "endpoint",
                format!("{endpoint:?}: {e}"),
            )
        })?;
        self.peers[rank as usize].endpoint = Some(addr);
        Ok(())
    }

    fn check_peer(&self, r: u32) {
        assert!(
            (r as usize) < self.peers.len() && r != self.me,
            "tcp: rank {r} is not a peer of rank {}",
            self.me
        );
    }

    fn activate(&mut self, r: u32) {
        let p = &mut self.peers[r as usize];
        if !p.active {
            p.active = true;
            self.active.push(r);
        }
    }

    /// A peer whose connection died after being established (or that could not be
    /// reached, or misbehaved): the job must end. The first such peer, with the reason.
    pub fn failed_peer(&self) -> Option<(u32, String)> {
        self.failed.first().cloned()
    }

    /// Every failed peer so far, in the order they failed.
    pub fn failed_peers(&self) -> &[(u32, String)] {
        &self.failed
    }

    /// Number of incoming connections rejected for failing the handshake (diagnostics).
    pub fn rejected_connections(&self) -> u64 {
        self.rejected
    }

    /// Whether packets queued for `to` are all written to the socket.
    pub fn is_flushed(&self, to: u32) -> bool {
        self.peers[to as usize].queued() == 0
    }
}
