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
//! # Shutdown
//!
//! [`TcpTransport::shutdown`] flushes the queued packets, sends a goodbye to every
//! connected peer and waits (bounded) for theirs, so that a peer seeing the end of the
//! stream can tell a clean exit from a crash. The engine calls it in `MPI_Finalize`.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use crate::error::{ErrorClass, MpiError, Result};

/// Largest packet [`TcpTransport::try_push`] accepts; the engine fragments to this.
pub const MAX_PACKET: usize = 256 * 1024;
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

/// Bytes read from a socket per `read` call into the scratch buffer.
const SCRATCH: usize = 64 * 1024;
/// Remaining payload size from which the decoder's buffer is read into directly.
const DIRECT_MIN: usize = 16 * 1024;
/// Most reads from one connection in one `poll` (fairness between peers).
const READS_PER_POLL: usize = 32;
/// Most connections accepted in one `poll`.
const ACCEPTS_PER_POLL: usize = 64;
/// How often an idle `poll` looks for new incoming connections. An `accept` that
/// finds nothing is a system call on every progress step, which a rank waiting for
/// a message over an established connection makes millions of times; connections
/// are made once per peer, so a short delay in noticing one costs little.
const ACCEPT_INTERVAL: Duration = Duration::from_micros(100);

/// The wire format: handshake messages and frames. Public for the tests and the fuzz
/// target; the engine only uses [`TcpTransport`].
pub mod wire {
    use hmac::{Hmac, Mac};
    use sha2::Sha256;

    use super::MAX_PACKET;

    type HmacSha256 = Hmac<Sha256>;

    /// Protocol magic, with the version in its last byte.
    pub const MAGIC: [u8; 8] = *b"OXMPITC1";
    pub const NONCE_LEN: usize = 32;
    pub const MAC_LEN: usize = 32;
    pub const SERVER_HELLO_LEN: usize = 8 + 4 + NONCE_LEN;
    pub const CLIENT_MSG_LEN: usize = 8 + 4 + 4 + NONCE_LEN + MAC_LEN;
    pub const VERDICT_LEN: usize = 1 + MAC_LEN;
    pub const FRAME_HEADER_LEN: usize = 8;
    pub const KIND_DATA: u8 = 1;
    pub const KIND_BYE: u8 = 2;

    pub type Nonce = [u8; NONCE_LEN];

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    fn mac(secret: &[u8], parts: &[&[u8]]) -> HmacSha256 {
        let mut m = HmacSha256::new_from_slice(secret).expect("HMAC accepts keys of any length");
        for p in parts {
            m.update(p);
        }
        m
    }

    /// The server's first message.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct ServerHello {
        pub rank: u32,
        pub nonce: Nonce,
    }

    pub fn encode_server_hello(rank: u32, nonce: &Nonce) -> [u8; SERVER_HELLO_LEN] {
        let mut b = [0u8; SERVER_HELLO_LEN];
        b[..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&rank.to_le_bytes());
        b[12..].copy_from_slice(nonce);
        b
    }

    pub fn parse_server_hello(b: &[u8]) -> Result<ServerHello, &'static str> {
        if b.len() != SERVER_HELLO_LEN {
            return Err("server hello has the wrong size");
        }
        if b[..8] != MAGIC {
            return Err("bad protocol magic in server hello");
        }
        let mut nonce = [0u8; NONCE_LEN];
        nonce.copy_from_slice(&b[12..]);
        Ok(ServerHello {
            rank: u32_at(b, 8),
            nonce,
        })
    }

    /// The client's authenticated message.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct ClientMsg {
        pub rank: u32,
        pub server_rank: u32,
        pub nonce: Nonce,
        pub mac: [u8; MAC_LEN],
    }

    fn client_mac(
        secret: &[u8],
        rank: u32,
        server_rank: u32,
        server_nonce: &Nonce,
        client_nonce: &Nonce,
    ) -> HmacSha256 {
        mac(
            secret,
            &[
                b"oxmpi-client",
                server_nonce,
                client_nonce,
                &rank.to_le_bytes(),
                &server_rank.to_le_bytes(),
            ],
        )
    }

    pub fn encode_client_msg(
        secret: &[u8],
        rank: u32,
        server_rank: u32,
        server_nonce: &Nonce,
        client_nonce: &Nonce,
    ) -> [u8; CLIENT_MSG_LEN] {
        let tag = client_mac(secret, rank, server_rank, server_nonce, client_nonce)
            .finalize()
            .into_bytes();
        let mut b = [0u8; CLIENT_MSG_LEN];
        b[..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&rank.to_le_bytes());
        b[12..16].copy_from_slice(&server_rank.to_le_bytes());
        b[16..48].copy_from_slice(client_nonce);
        b[48..].copy_from_slice(&tag);
        b
    }

    /// Parses the client message's layout (not its MAC: see [`verify_client_msg`]).
    pub fn parse_client_msg(b: &[u8]) -> Result<ClientMsg, &'static str> {
        if b.len() != CLIENT_MSG_LEN {
            return Err("client message has the wrong size");
        }
        if b[..8] != MAGIC {
            return Err("bad protocol magic in client message");
        }
        let mut nonce = [0u8; NONCE_LEN];
        nonce.copy_from_slice(&b[16..48]);
        let mut tag = [0u8; MAC_LEN];
        tag.copy_from_slice(&b[48..]);
        Ok(ClientMsg {
            rank: u32_at(b, 8),
            server_rank: u32_at(b, 12),
            nonce,
            mac: tag,
        })
    }

    /// Whether the client's MAC proves knowledge of `secret` for this server nonce
    /// (constant-time comparison).
    pub fn verify_client_msg(secret: &[u8], msg: &ClientMsg, server_nonce: &Nonce) -> bool {
        client_mac(secret, msg.rank, msg.server_rank, server_nonce, &msg.nonce)
            .verify_slice(&msg.mac)
            .is_ok()
    }

    fn server_mac(
        secret: &[u8],
        accepted: bool,
        client_rank: u32,
        server_rank: u32,
        client_nonce: &Nonce,
        server_nonce: &Nonce,
    ) -> HmacSha256 {
        mac(
            secret,
            &[
                b"oxmpi-server",
                client_nonce,
                server_nonce,
                &client_rank.to_le_bytes(),
                &server_rank.to_le_bytes(),
                &[accepted as u8],
            ],
        )
    }

    pub fn encode_verdict(
        secret: &[u8],
        accepted: bool,
        client_rank: u32,
        server_rank: u32,
        client_nonce: &Nonce,
        server_nonce: &Nonce,
    ) -> [u8; VERDICT_LEN] {
        let tag = server_mac(
            secret,
            accepted,
            client_rank,
            server_rank,
            client_nonce,
            server_nonce,
        )
        .finalize()
        .into_bytes();
        let mut b = [0u8; VERDICT_LEN];
        b[0] = accepted as u8;
        b[1..].copy_from_slice(&tag);
        b
    }

    /// Checks the server's verdict and its MAC; `Ok(accepted)`.
    pub fn parse_verdict(
        secret: &[u8],
        b: &[u8],
        client_rank: u32,
        server_rank: u32,
        client_nonce: &Nonce,
        server_nonce: &Nonce,
    ) -> Result<bool, &'static str> {
        if b.len() != VERDICT_LEN {
            return Err("verdict has the wrong size");
        }
        let accepted = match b[0] {
            0 => false,
            1 => true,
            _ => return Err("malformed verdict"),
        };
        server_mac(
            secret,
            accepted,
            client_rank,
            server_rank,
            client_nonce,
            server_nonce,
        )
        .verify_slice(&b[1..])
        .map_err(|_| "the server failed to prove knowledge of the job secret")?;
        Ok(accepted)
    }

    pub fn encode_frame_header(kind: u8, len: u32) -> [u8; FRAME_HEADER_LEN] {
        let mut h = [0u8; FRAME_HEADER_LEN];
        h[0] = kind;
        h[4..].copy_from_slice(&len.to_le_bytes());
        h
    }

    /// A decoded frame.
    #[derive(Debug, PartialEq, Eq)]
    pub enum Frame {
        Packet(Vec<u8>),
        Bye,
    }

    /// Incremental, bounds-checked frame decoder: bytes in any chunking, frames out.
    #[derive(Debug, Default)]
    pub struct FrameDecoder {
        hdr: [u8; FRAME_HEADER_LEN],
        hdr_got: usize,
        /// The payload being received (allocated with its checked length), if any.
        payload: Option<Vec<u8>>,
        got: usize,
        bye: bool,
    }

    impl FrameDecoder {
        pub fn new() -> FrameDecoder {
            FrameDecoder::default()
        }

        /// Whether the decoder is between frames (an end of stream here is not a
        /// truncation).
        pub fn at_boundary(&self) -> bool {
            self.hdr_got == 0 && self.payload.is_none()
        }

        /// Whether a goodbye frame was decoded.
        pub fn saw_bye(&self) -> bool {
            self.bye
        }

        fn header_done(&mut self, out: &mut impl FnMut(Frame)) -> Result<(), String> {
            self.hdr_got = 0;
            let kind = self.hdr[0];
            let len =
                u32::from_le_bytes([self.hdr[4], self.hdr[5], self.hdr[6], self.hdr[7]]) as usize;
            if self.bye {
                return Err("frame after goodbye".into());
            }
            if self.hdr[1..4] != [0, 0, 0] {
                return Err(format!("malformed frame header {:02x?}", self.hdr));
            }
            match kind {
                KIND_DATA => {
                    if len > MAX_PACKET {
                        return Err(format!(
                            "frame length {len} exceeds the maximum {MAX_PACKET}"
                        ));
                    }
                    if len == 0 {
                        out(Frame::Packet(Vec::new()));
                    } else {
                        self.payload = Some(vec![0u8; len]);
                        self.got = 0;
                    }
                    Ok(())
                }
                KIND_BYE => {
                    if len != 0 {
                        return Err(format!("goodbye frame with length {len}"));
                    }
                    self.bye = true;
                    out(Frame::Bye);
                    Ok(())
                }
                k => Err(format!("unknown frame kind {k}")),
            }
        }

        /// Feeds bytes; complete frames go to `out`. An error means the stream is
        /// malformed and must be closed (the decoder is then unusable).
        pub fn feed(&mut self, mut data: &[u8], mut out: impl FnMut(Frame)) -> Result<(), String> {
            while !data.is_empty() {
                if let Some(p) = &mut self.payload {
                    let n = (p.len() - self.got).min(data.len());
                    p[self.got..self.got + n].copy_from_slice(&data[..n]);
                    self.got += n;
                    data = &data[n..];
                    if self.got == p.len() {
                        out(Frame::Packet(self.payload.take().unwrap()));
                    }
                } else {
                    let n = (FRAME_HEADER_LEN - self.hdr_got).min(data.len());
                    self.hdr[self.hdr_got..self.hdr_got + n].copy_from_slice(&data[..n]);
                    self.hdr_got += n;
                    data = &data[n..];
                    if self.hdr_got == FRAME_HEADER_LEN {
                        self.header_done(&mut out)?;
                    }
                }
            }
            Ok(())
        }

        /// The rest of the current payload, if at least `min` bytes remain, to read into
        /// directly (then call [`FrameDecoder::advance_direct`]).
        pub fn direct_buf(&mut self, min: usize) -> Option<&mut [u8]> {
            let got = self.got;
            match &mut self.payload {
                Some(p) if p.len() - got >= min => Some(&mut p[got..]),
                _ => None,
            }
        }

        /// Records `n` bytes written into [`FrameDecoder::direct_buf`]'s slice.
        pub fn advance_direct(&mut self, n: usize, mut out: impl FnMut(Frame)) {
            let Some(p) = &self.payload else { return };
            self.got = (self.got + n).min(p.len());
            if self.got == p.len() {
                out(Frame::Packet(self.payload.take().unwrap()));
            }
        }
    }
}

use wire::{Frame, FrameDecoder, Nonce};

/// Fills a nonce from the kernel's CSPRNG.
fn random_nonce() -> io::Result<Nonce> {
    let mut n = [0u8; wire::NONCE_LEN];
    let mut filled = 0;
    while filled < n.len() {
        // SAFETY: writes at most `n.len() - filled` bytes into `n[filled..]`.
        let r = unsafe { libc::getrandom(n[filled..].as_mut_ptr().cast(), n.len() - filled, 0) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            // Old kernels without getrandom(2).
            let mut f = std::fs::File::open("/dev/urandom")?;
            f.read_exact(&mut n)?;
            return Ok(n);
        }
        filled += r as usize;
    }
    Ok(n)
}

/// Starts a non-blocking, close-on-exec, TCP_NODELAY connection to `addr`.
fn connect_nonblocking(addr: &SocketAddr) -> io::Result<TcpStream> {
    // SAFETY: plain socket(2); the fd is owned right away.
    let fd = unsafe {
        libc::socket(
            if addr.is_ipv4() {
                libc::AF_INET
            } else {
                libc::AF_INET6
            },
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    let stream = TcpStream::from(unsafe { OwnedFd::from_raw_fd(fd) });
    stream.set_nodelay(true)?;
    let r = match addr {
        SocketAddr::V4(a) => {
            // SAFETY: all-zero is a valid sockaddr_in.
            let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            sa.sin_family = libc::AF_INET as libc::sa_family_t;
            sa.sin_port = a.port().to_be();
            sa.sin_addr = libc::in_addr {
                s_addr: u32::from_ne_bytes(a.ip().octets()),
            };
            // SAFETY: `sa` is a valid sockaddr_in of the given size.
            unsafe {
                libc::connect(
                    fd,
                    (&sa as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                )
            }
        }
        SocketAddr::V6(a) => {
            // SAFETY: all-zero is a valid sockaddr_in6.
            let mut sa: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
            sa.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sa.sin6_port = a.port().to_be();
            sa.sin6_addr = libc::in6_addr {
                s6_addr: a.ip().octets(),
            };
            sa.sin6_flowinfo = a.flowinfo();
            sa.sin6_scope_id = a.scope_id();
            // SAFETY: `sa` is a valid sockaddr_in6 of the given size.
            unsafe {
                libc::connect(
                    fd,
                    (&sa as *const libc::sockaddr_in6).cast(),
                    std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
                )
            }
        }
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) && e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(stream)
}

/// Whether a non-blocking connect finished: `Ok(true)` connected, `Ok(false)` not yet.
fn connect_done(stream: &TcpStream) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd: stream.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd, zero timeout.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    if r == 0 || p.revents == 0 {
        return Ok(false);
    }
    if let Some(e) = stream.take_error()? {
        return Err(e);
    }
    if p.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
        return Err(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            "connection failed",
        ));
    }
    Ok(true)
}

/// send(2) with MSG_NOSIGNAL: a peer that vanished gives EPIPE, not a SIGPIPE that
/// would kill a C program that has not ignored it.
fn send_nosig(stream: &TcpStream, buf: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: reads `buf.len()` bytes from `buf`.
        let r = unsafe {
            libc::send(
                stream.as_raw_fd(),
                buf.as_ptr().cast(),
                buf.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Writes as much of `buf[*off..]` as the socket takes; `Ok(true)` if all of it went.
fn write_some(stream: &TcpStream, buf: &[u8], off: &mut usize, did: &mut bool) -> io::Result<bool> {
    while *off < buf.len() {
        match send_nosig(stream, &buf[*off..]) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "send wrote nothing",
                ))
            }
            Ok(n) => {
                *off += n;
                *did = true;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Reads handshake bytes into `inbuf` until it holds `want` bytes (never more, so
/// later bytes stay in the socket). `Ok(true)` when complete.
fn read_exact_nb(
    stream: &mut TcpStream,
    inbuf: &mut Vec<u8>,
    want: usize,
    did: &mut bool,
) -> io::Result<bool> {
    let mut tmp = [0u8; wire::CLIENT_MSG_LEN];
    while inbuf.len() < want {
        let need = (want - inbuf.len()).min(tmp.len());
        match stream.read(&mut tmp[..need]) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed during the handshake",
                ))
            }
            Ok(n) => {
                inbuf.extend_from_slice(&tmp[..n]);
                *did = true;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

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
    /// Framed bytes queued for the peer; `sent` of them are written.
    sendbuf: Vec<u8>,
    sent: usize,
    /// We queued our goodbye: no more packets.
    bye_queued: bool,
    recvq: VecDeque<Vec<u8>>,
    recv_bytes: usize,
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
        self.sendbuf.len() - self.sent
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
    /// The buffer `fill` writes a packet into.
    packet: Box<[u8]>,
    scratch: Box<[u8]>,
    rejected: u64,
    /// When `poll` next calls `accept` (see [`ACCEPT_INTERVAL`]).
    next_accept: Instant,
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
            packet: vec![0u8; MAX_PACKET].into_boxed_slice(),
            scratch: vec![0u8; SCRATCH].into_boxed_slice(),
            rejected: 0,
            next_accept: Instant::now(),
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
    pub fn add_dynamic_peer(&mut self, endpoint: &str, remote_me: u32, my_index_there: u32, secret: &[u8], dial: bool) -> Result<u32> {
        const CALL: &str = "TcpTransport::add_dynamic_peer";
        let addr: SocketAddr = endpoint
            .parse()
            .map_err(|e| MpiError::arg(ErrorClass::Arg, CALL, "endpoint", format!("{endpoint:?}: {e}")))?;
        if secret.is_empty() {
            return Err(MpiError::arg(ErrorClass::Arg, CALL, "secret", "the connection secret is empty"));
        }
        let r = self.peers.len() as u32;
        let mut p = Peer {
            endpoint: Some(addr),
            dynamic: Some(DynPeer { remote_me, my_index_there, secret: secret.to_vec(), dial }),
            await_incoming: !dial,
            ..Peer::default()
        };
        p.active = true;
        self.peers.push(p);
        self.active.push(r);
        if dial {
            self.start_attempt(r, Instant::now());
        }
        Ok(r)
    }

    /// Completes a process of another job added before its table gave us an
    /// index (several joins of one process at once reserve their indices in
    /// turn): the index it gave us, and whether we dial (then at once).
    pub fn set_dynamic_index(&mut self, r: u32, my_index_there: u32, dial: bool) {
        let Some(p) = self.peers.get_mut(r as usize) else { return };
        let Some(d) = p.dynamic.as_mut() else { return };
        d.my_index_there = my_index_there;
        d.dial = dial;
        p.await_incoming = !dial;
        if dial {
            self.start_attempt(r, Instant::now());
        }
    }

    /// Whether `r` has an established connection.
    pub fn is_connected(&self, r: u32) -> bool {
        self.peers.get(r as usize).is_some_and(|p| p.conn.as_ref().is_some_and(|c| matches!(c.state, State::Established)))
    }

    /// Whether `r` failed (with the reason, if so).
    pub fn peer_failed(&self, r: u32) -> Option<String> {
        let p = self.peers.get(r as usize)?;
        if !p.failed {
            return None;
        }
        Some(self.failed.iter().find(|(x, _)| *x == r).map(|(_, w)| w.clone()).unwrap_or_default())
    }

    /// Queues a goodbye to `r` (nothing may be sent to it afterwards).
    pub fn say_goodbye(&mut self, r: u32) {
        let p = &mut self.peers[r as usize];
        if p.conn.is_some() && !p.bye_queued {
            p.bye_queued = true;
            p.sendbuf.extend_from_slice(&wire::encode_frame_header(wire::KIND_BYE, 0));
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

    /// Queues one packet for `to` (copying `fill`'s output into the send buffer); false
    /// if the per-peer send queue is over its bound (back-pressure), or the peer failed
    /// or said goodbye (see [`TcpTransport::failed_peer`]). Starts connecting if not
    /// connected. Bytes are written by [`TcpTransport::poll`].
    ///
    /// Panics if `fill` returns more than [`MAX_PACKET`].
    pub fn try_push(&mut self, to: u32, fill: impl FnOnce(&mut [u8]) -> usize) -> bool {
        self.check_peer(to);
        let p = &mut self.peers[to as usize];
        if p.failed || p.bye_queued || p.queued() >= SEND_BOUND {
            return false;
        }
        let len = fill(&mut self.packet);
        assert!(
            len <= MAX_PACKET,
            "tcp: packet of {len} bytes exceeds MAX_PACKET ({MAX_PACKET})"
        );
        if p.sent > 0 && p.sent >= p.sendbuf.len() / 2 {
            p.sendbuf.drain(..p.sent);
            p.sent = 0;
        }
        p.sendbuf
            .extend_from_slice(&wire::encode_frame_header(wire::KIND_DATA, len as u32));
        p.sendbuf.extend_from_slice(&self.packet[..len]);
        self.activate(to);
        if self.peers[to as usize].conn.is_none() {
            self.maybe_connect(to, Instant::now());
        }
        true
    }

    /// Hands the next complete packet received from `from` to `f`; false if none.
    /// Takes the next packet from `from`, if any, as an owned buffer (no copy; the
    /// engine handles it while it holds `&mut` to everything else).
    pub fn pop_packet(&mut self, from: u32) -> Option<Vec<u8>> {
        self.check_peer(from);
        let p = &mut self.peers[from as usize];
        let pkt = p.recvq.pop_front()?;
        p.recv_bytes -= pkt.len();
        Some(pkt)
    }

    pub fn try_pop(&mut self, from: u32, f: impl FnOnce(&[u8])) -> bool {
        self.check_peer(from);
        let p = &mut self.peers[from as usize];
        let Some(pkt) = p.recvq.pop_front() else {
            return false;
        };
        p.recv_bytes -= pkt.len();
        f(&pkt);
        true
    }

    /// Ranks with received packets waiting (so the engine pops only those).
    pub fn readable_peers(&self) -> impl Iterator<Item = u32> + '_ {
        self.active
            .iter()
            .copied()
            .filter(|&r| !self.peers[r as usize].recvq.is_empty())
    }

    /// Raw fds to wait on (for a blocking wait with poll(2)/epoll): listener + connections.
    /// The descriptors to wait on, each with whether we wait for room to write too
    /// (a connection with bytes queued: a full socket buffer drains without telling
    /// a sleeper that only waits for input).
    pub fn poll_set(&self) -> Vec<(RawFd, bool)> {
        let mut v = vec![(self.listener.as_raw_fd(), false)];
        v.extend(self.pending.iter().map(|c| (c.stream.as_raw_fd(), c.out_sent < c.out.len())));
        for &r in &self.active {
            let p = &self.peers[r as usize];
            v.extend(p.attempt.iter().map(|c| (c.stream.as_raw_fd(), true)));
            v.extend(p.conn.iter().map(|c| (c.stream.as_raw_fd(), p.queued() > 0 || c.out_sent < c.out.len())));
        }
        v
    }

    pub fn fds(&self) -> Vec<RawFd> {
        let mut v = vec![self.listener.as_raw_fd()];
        v.extend(self.pending.iter().map(|c| c.stream.as_raw_fd()));
        for &r in &self.active {
            let p = &self.peers[r as usize];
            v.extend(
                p.attempt
                    .iter()
                    .chain(p.conn.iter())
                    .map(|c| c.stream.as_raw_fd()),
            );
        }
        v
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

    fn reject(&mut self, addr: &SocketAddr, reason: impl std::fmt::Display) {
        self.rejected += 1;
        eprintln!(
            "oxmpi: rank {}: rejected a TCP connection from {addr}: {reason}",
            self.me
        );
    }

    fn fail_peer(&mut self, r: u32, reason: String) {
        let p = &mut self.peers[r as usize];
        if p.failed {
            return;
        }
        p.failed = true;
        p.conn = None;
        p.attempt = None;
        self.failed.push((r, reason));
    }

    /// Starts an attempt to `r` if it has queued data, no connection and none in
    /// progress, and the rules allow.
    fn maybe_connect(&mut self, r: u32, now: Instant) {
        let p = &mut self.peers[r as usize];
        let dial_now = p.dynamic.as_ref().is_some_and(|d| d.dial);
        if p.failed
            || p.closed
            || p.conn.is_some()
            || p.attempt.is_some()
            || p.await_incoming
            || (p.queued() == 0 && !dial_now)
        {
            return;
        }
        self.start_attempt(r, now);
    }

    fn start_attempt(&mut self, r: u32, now: Instant) {
        let p = &mut self.peers[r as usize];
        if p.failed || p.closed || p.conn.is_some() || p.attempt.is_some() {
            return;
        }
        let Some(addr) = p.endpoint else { return };
        if p.next_try.is_some_and(|t| now < t) {
            return;
        }
        p.first_try.get_or_insert(now);
        match connect_nonblocking(&addr) {
            Ok(s) => p.attempt = Some(Conn::new(s, addr, State::Connecting, r)),
            Err(e) => self.attempt_failed(r, now, e.to_string()),
        }
    }

    /// Our attempt to `r` failed before being established: retry with backoff until
    /// [`CONNECT_DEADLINE`], then declare the peer dead.
    fn attempt_failed(&mut self, r: u32, now: Instant, reason: String) {
        let p = &mut self.peers[r as usize];
        p.attempt = None;
        let first = *p.first_try.get_or_insert(now);
        if now.duration_since(first) >= CONNECT_DEADLINE {
            let ep = p.endpoint.map(|a| a.to_string()).unwrap_or_default();
            self.fail_peer(r, format!("cannot connect to rank {r} at {ep}: {reason}"));
            return;
        }
        p.backoff = (p.backoff * 2).clamp(Duration::from_millis(10), Duration::from_secs(1));
        p.next_try = Some(now + p.backoff);
    }

    /// Non-blocking I/O step: accept, advance handshakes, write queued bytes, read
    /// available bytes into per-peer packet queues. Returns whether anything happened.
    /// Never blocks.
    pub fn poll(&mut self) -> bool {
        let now = Instant::now();
        let mut did = false;
        // Pending connections first (those that closed leave room), then new ones,
        // whose hello goes out at once.
        self.advance_pending(now, &mut did);
        if now >= self.next_accept {
            let mut accepted = false;
            self.accept_new(&mut accepted);
            // More may be queued behind a burst: look again at once.
            self.next_accept = if accepted { now } else { now + ACCEPT_INTERVAL };
            did |= accepted;
        }
        self.advance_pending(now, &mut did);
        let mut i = 0;
        while i < self.active.len() {
            let r = self.active[i];
            self.advance_attempt(r, now, &mut did);
            self.service_conn(r, &mut did);
            self.maybe_connect(r, now);
            i += 1;
        }
        did
    }

    fn accept_new(&mut self, did: &mut bool) {
        for _ in 0..ACCEPTS_PER_POLL {
            let (stream, addr) = match self.listener.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // ECONNABORTED, EMFILE...: nothing to do for this one.
                Err(_) => return,
            };
            *did = true;
            if self.pending.len() >= MAX_PENDING {
                self.reject(&addr, "too many connections in handshake");
                continue;
            }
            // std's accept uses accept4(SOCK_CLOEXEC).
            if let Err(e) = stream
                .set_nonblocking(true)
                .and_then(|_| stream.set_nodelay(true))
            {
                self.reject(&addr, e);
                continue;
            }
            let nonce = match random_nonce() {
                Ok(n) => n,
                Err(e) => {
                    self.reject(&addr, format!("no random nonce: {e}"));
                    continue;
                }
            };
            let mut c = Conn::new(stream, addr, State::WaitClient, u32::MAX);
            c.my_nonce = nonce;
            c.out
                .extend_from_slice(&wire::encode_server_hello(self.me, &nonce));
            self.pending.push(c);
        }
    }

    fn advance_pending(&mut self, now: Instant, did: &mut bool) {
        let mut i = 0;
        while i < self.pending.len() {
            match self.step_server(i, did) {
                Ok(None) if now < self.pending[i].deadline => i += 1,
                Ok(None) => {
                    let c = self.pending.swap_remove(i);
                    self.reject(&c.addr, "handshake timed out");
                }
                Ok(Some(accept)) => {
                    let mut c = self.pending.swap_remove(i);
                    let r = c.rank;
                    let secret: &[u8] = match &self.peers[r as usize].dynamic {
                        Some(d) => &d.secret,
                        None => &self.secret,
                    };
                    let v = wire::encode_verdict(
                        secret,
                        accept,
                        r,
                        self.me,
                        &c.their_nonce,
                        &c.my_nonce,
                    );
                    c.out.extend_from_slice(&v);
                    if accept {
                        c.state = State::Established;
                        let p = &mut self.peers[r as usize];
                        p.conn = Some(c);
                        p.await_incoming = false;
                        p.next_try = None;
                        self.activate(r);
                    } else {
                        // One try to deliver the rejection (33 bytes into a fresh socket's
                        // buffer), then close.
                        let mut d = false;
                        let _ = c.flush_handshake(&mut d);
                    }
                }
                Err(reason) => {
                    let c = self.pending.swap_remove(i);
                    self.reject(&c.addr, reason);
                }
            }
        }
    }

    /// Advances the server side of pending connection `i`: `Ok(Some(accept))` once the
    /// client is verified, `Ok(None)` if more bytes are needed, `Err(reason)` to reject.
    fn step_server(
        &mut self,
        i: usize,
        did: &mut bool,
    ) -> std::result::Result<Option<bool>, String> {
        let c = &mut self.pending[i];
        c.flush_handshake(did).map_err(|e| e.to_string())?;
        if !read_exact_nb(&mut c.stream, &mut c.inbuf, wire::CLIENT_MSG_LEN, did)
            .map_err(|e| e.to_string())?
        {
            return Ok(None);
        }
        let msg = wire::parse_client_msg(&c.inbuf)?;
        // A process of another job may dial before we added it (its group learnt
        // of us first): such a claim waits, until the handshake's deadline, for
        // the index to exist.
        if msg.rank as usize >= self.peers.len() && crate::comm::dynamic::joining() {
            return Ok(None);
        }
        // A process of another job claims the index we gave it, and proves the
        // secret of that connection, not the job's.
        let dynamic = self.peers.get(msg.rank as usize).and_then(|p| p.dynamic.as_ref());
        let secret: &[u8] = dynamic.map_or(&self.secret, |d| &d.secret);
        if !wire::verify_client_msg(secret, &msg, &c.my_nonce) {
            return Err("the client failed to prove knowledge of the job secret".into());
        }
        if let Some(d) = dynamic {
            if d.dial || msg.server_rank != self.me {
                return Err(format!("the process of another job claiming index {} may not connect", msg.rank));
            }
        }
        if msg.server_rank != self.me {
            return Err(format!(
                "the client meant to reach rank {}",
                msg.server_rank
            ));
        }
        if msg.rank as usize >= self.peers.len() || msg.rank == self.me {
            return Err(format!(
                "the client claims to be rank {}, not a peer",
                msg.rank
            ));
        }
        c.rank = msg.rank;
        c.their_nonce = msg.nonce;
        let p = &self.peers[msg.rank as usize];
        if p.failed || p.closed {
            return Err(format!("rank {} has already failed or disconnected", msg.rank));
        }
        if p.conn.is_some() {
            return Err(format!("rank {} is already connected", msg.rank));
        }
        // The collision rule: the lower rank's own attempt wins.
        if p.dynamic.is_some() {
            return Ok(Some(true));
        }
        Ok(Some(!(self.me < msg.rank && p.attempt.is_some())))
    }

    fn advance_attempt(&mut self, r: u32, now: Instant, did: &mut bool) {
        let Some(mut c) = self.peers[r as usize].attempt.take() else {
            return;
        };
        match self.step_client(&mut c, did) {
            Ok(None) if now < c.deadline => self.peers[r as usize].attempt = Some(c),
            Ok(None) => self.attempt_failed(r, now, "the handshake timed out".into()),
            Ok(Some(true)) => {
                if self.peers[r as usize].conn.is_some() {
                    self.fail_peer(
                        r,
                        format!("rank {r} accepted a second connection (protocol violation)"),
                    );
                    return;
                }
                *did = true;
                c.state = State::Established;
                let p = &mut self.peers[r as usize];
                p.conn = Some(c);
                p.next_try = None;
            }
            Ok(Some(false)) => {
                *did = true;
                if self.me < r || self.peers[r as usize].dynamic.is_some() {
                    self.fail_peer(
                        r,
                        format!("rank {r} rejected our connection (protocol violation)"),
                    );
                } else {
                    self.peers[r as usize].await_incoming = true;
                }
            }
            Err((fatal, reason)) => {
                if fatal {
                    eprintln!(
                        "oxmpi: rank {}: connection to rank {r} at {}: {reason}",
                        self.me, c.addr
                    );
                    self.fail_peer(r, format!("connection to rank {r} at {}: {reason}", c.addr));
                } else {
                    self.attempt_failed(r, now, reason);
                }
            }
        }
    }

    /// Advances our attempt: `Ok(Some(accepted))` on the verdict, `Ok(None)` if more
    /// is needed, `Err((fatal, reason))`: fatal if the peer is not who it should be,
    /// else retryable (network error).
    fn step_client(
        &self,
        c: &mut Conn,
        did: &mut bool,
    ) -> std::result::Result<Option<bool>, (bool, String)> {
        let net = |e: io::Error| (false, e.to_string());
        loop {
            match c.state {
                State::Connecting => {
                    if !connect_done(&c.stream).map_err(net)? {
                        return Ok(None);
                    }
                    *did = true;
                    c.state = State::WaitHello;
                }
                State::WaitHello => {
                    if !read_exact_nb(&mut c.stream, &mut c.inbuf, wire::SERVER_HELLO_LEN, did)
                        .map_err(net)?
                    {
                        return Ok(None);
                    }
                    let hello =
                        wire::parse_server_hello(&c.inbuf).map_err(|e| (true, e.to_string()))?;
                    let (secret, me, them) = self.ids(c.rank);
                    if hello.rank != them {
                        return Err((
                            true,
                            format!("the server is rank {}, not rank {}", hello.rank, them),
                        ));
                    }
                    c.their_nonce = hello.nonce;
                    c.my_nonce = random_nonce().map_err(net)?;
                    c.inbuf.clear();
                    let msg = wire::encode_client_msg(
                        secret,
                        me,
                        them,
                        &c.their_nonce,
                        &c.my_nonce,
                    );
                    c.out.extend_from_slice(&msg);
                    c.state = State::WaitVerdict;
                }
                State::WaitVerdict => {
                    c.flush_handshake(did).map_err(net)?;
                    if !read_exact_nb(&mut c.stream, &mut c.inbuf, wire::VERDICT_LEN, did)
                        .map_err(net)?
                    {
                        return Ok(None);
                    }
                    let (secret, me, them) = self.ids(c.rank);
                    let v = wire::parse_verdict(
                        secret,
                        &c.inbuf,
                        me,
                        them,
                        &c.my_nonce,
                        &c.their_nonce,
                    )
                    .map_err(|e| (true, e.to_string()))?;
                    c.inbuf = Vec::new();
                    return Ok(Some(v));
                }
                State::WaitClient | State::Established => {
                    unreachable!("not a client handshake state")
                }
            }
        }
    }

    /// Writes queued bytes to and reads frames from `r`'s established connection.
    fn service_conn(&mut self, r: u32, did: &mut bool) {
        let Some(res) = self.service_conn_inner(r, did) else {
            return;
        };
        if let Err(reason) = res {
            self.fail_peer(r, format!("connection to rank {r}: {reason}"));
        }
    }

    fn service_conn_inner(
        &mut self,
        r: u32,
        did: &mut bool,
    ) -> Option<std::result::Result<(), String>> {
        let p = &mut self.peers[r as usize];
        let c = p.conn.as_mut()?;
        let scratch = &mut self.scratch;
        Some((|| {
            // Write: handshake leftovers (the server's verdict) first, then frames.
            if c.flush_handshake(did).map_err(|e| e.to_string())? && p.sent < p.sendbuf.len() {
                write_some(&c.stream, &p.sendbuf, &mut p.sent, did).map_err(|e| e.to_string())?;
                if p.sent == p.sendbuf.len() {
                    p.sendbuf.clear();
                    p.sent = 0;
                }
            }
            // Read, unless the packets already received are over the bound.
            let mut reads = 0;
            while !c.eof && p.recv_bytes < RECV_BOUND && reads < READS_PER_POLL {
                reads += 1;
                let (recvq, recv_bytes) = (&mut p.recvq, &mut p.recv_bytes);
                let mut push = |f: Frame| {
                    if let Frame::Packet(v) = f {
                        *recv_bytes += v.len();
                        recvq.push_back(v);
                    }
                };
                let direct = c.dec.direct_buf(DIRECT_MIN).is_some();
                let res = if direct {
                    let buf = c.dec.direct_buf(DIRECT_MIN).unwrap();
                    (&c.stream).read(buf)
                } else {
                    (&c.stream).read(scratch)
                };
                match res {
                    Ok(0) => {
                        if !c.dec.at_boundary() {
                            return Err(
                                "connection closed in the middle of a frame (truncated frame)"
                                    .into(),
                            );
                        }
                        if !c.dec.saw_bye() {
                            return Err("connection closed by the peer".into());
                        }
                        c.eof = true;
                    }
                    Ok(n) => {
                        *did = true;
                        if direct {
                            c.dec.advance_direct(n, &mut push);
                        } else {
                            c.dec.feed(&scratch[..n], &mut push)?;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e.to_string()),
                }
            }
            Ok(())
        })())
    }

    /// Ends the transport cleanly: flushes queued packets, sends a goodbye to every
    /// connected peer and waits for theirs (or `timeout`), then closes. Afterwards
    /// `try_push` returns false. Returns whether every connection closed cleanly.
    pub fn shutdown(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        for &r in &self.active {
            let p = &mut self.peers[r as usize];
            if p.conn.is_some() && !p.bye_queued {
                p.bye_queued = true;
                p.sendbuf
                    .extend_from_slice(&wire::encode_frame_header(wire::KIND_BYE, 0));
            }
        }
        loop {
            self.poll();
            let done = self.active.iter().all(|&r| {
                let p = &self.peers[r as usize];
                match &p.conn {
                    None => true,
                    Some(c) => c.dec.saw_bye() && p.queued() == 0,
                }
            });
            if done {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            wait_fds(&self.fds(), (deadline - now).min(Duration::from_millis(10)));
        }
        let clean = self.active.iter().all(|&r| {
            let p = &self.peers[r as usize];
            p.conn
                .as_ref()
                .map_or(!p.failed, |c| c.dec.saw_bye() && p.queued() == 0)
        });
        for &r in &self.active {
            let p = &mut self.peers[r as usize];
            p.conn = None;
            p.attempt = None;
            p.bye_queued = true;
        }
        self.pending.clear();
        clean
    }
}

/// Blocks until one of `fds` is readable (or errors) or `timeout` passes.
pub fn wait_fds(fds: &[RawFd], timeout: Duration) {
    let mut v: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `v` is a valid array of pollfd of the given length.
    unsafe {
        libc::poll(
            v.as_mut_ptr(),
            v.len() as libc::nfds_t,
            timeout.as_millis().min(i32::MAX as u128) as i32,
        )
    };
}

#[cfg(test)]
mod tests;
