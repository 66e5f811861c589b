//! Joining two groups of processes that were not started together: ports
//! (MPI_Open_port / MPI_Close_port), MPI_Comm_accept / MPI_Comm_connect,
//! MPI_Comm_join, and MPI_Comm_disconnect.
//!
//! One mechanism serves all of them ([`connect_groups`]): the two groups'
//! roots swap one description of their group each over a *bootstrap channel*
//! (the port's authenticated TCP connection, or the user's socket for join);
//! every process then adds the other group's processes to its peer table as
//! TCP peers of another job (`TcpTransport::add_dynamic_peer`), and both groups
//! agree on a context id free in both, as MPI_Intercomm_create does. The result is an intercommunicator like any
//! other: point-to-point, collectives, merge, dup and split work on it.
//!
//! # Ports and their authentication
//!
//! A port name is `oxmpi-port://SECRET@ADDRESS`: 32 random bytes (hex) and the
//! `ip:port` of a listening socket the root of the accepting group opened. A
//! connecting root must prove it knows the secret (HMAC-SHA256 challenge on
//! fresh nonces from both sides) and the acceptor proves it back, so a forged
//! or guessed port name is refused: the acceptor logs the refusal and keeps
//! waiting, the connector's call fails with `MPI_ERR_PORT`. The key every
//! pair of processes then authenticates its own connection with is derived
//! from the secret and both nonces, so it differs for each connect.
//!
//! # The exchange between the roots
//!
//! Three swaps over the bootstrap channel, each told to the root's group:
//! 1. the groups: `n u32`, then per process `me u32 | len u8 | endpoint [len]`
//!    (its rank in its own transport, its listener);
//! 2. where each process put the other group in its peer table: every process
//!    adds the other group's processes in one step under the engine's lock
//!    (consecutive indices, whatever other joins of the process do at the same
//!    time), and process `i` of one group is then peer `base_j + i` at process
//!    `j` of the other; the connecting group's processes dial, the accepting
//!    group's wait, so no collision rule is needed;
//! 3. the rounds of a context-id agreement (`context::agree_with`: the masks
//!    ANDed over each group, then between the roots), so the id is held and
//!    confirmed like every other agreement's and cannot collide with one that
//!    another thread's join or communicator creation picks meanwhile.
//!
//! Nothing is locked across the call: threads of one process may spawn,
//! connect, accept and join at once on different communicators.
//!
//! # Disconnect
//!
//! MPI_Comm_disconnect waits until everything sent to the other group is on
//! the wire, runs a barrier on the intercommunicator (so the other group's
//! traffic to us arrived too), then says goodbye on each connection and closes
//! it once the peer's goodbye came, so neither side mistakes the close for a
//! death.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::{context, Comm};
use crate::datatype::{Datatype, Primitive};
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::{Op, PredefinedOp};

type HmacSha256 = Hmac<Sha256>;

/// One command of a spawn (program, arguments, process count, info pairs).
pub use oxmpi_pmi::SpawnCommand;

/// The prefix of every port name oxmpi makes.
pub const PORT_PREFIX: &str = "oxmpi-port://";
/// Longest port name (`MPI_MAX_PORT_NAME` is 1024).
pub const MAX_PORT_NAME: usize = 1023;
const MAGIC: &[u8; 8] = b"OXMPIPT1";
const NONCE: usize = 32;
/// How long the bootstrap exchange and the pairwise connections may take.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(60);
/// Bytes of one process's record in the gather inside a group.
const RECORD: usize = 64;

/// Whether this process ever joined another job's processes (the launcher's
/// deadlock check cannot see those; see `diag::Watch`).
static CONNECTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process has been connected to processes of another job.
pub fn connected_to_other_jobs() -> bool {
    CONNECTED.load(Ordering::Relaxed)
}

/// Whether this process is inside a connect/accept/join (peers of another
/// job may dial it before it added them).
pub(crate) fn joining() -> bool {
    JOINS.load(Ordering::SeqCst) > 0
}

/// Open ports of this process, by name.
static PORTS: Mutex<Option<HashMap<String, TcpListener>>> = Mutex::new(None);
/// Connects, accepts and joins in progress in this process.
static JOINS: AtomicUsize = AtomicUsize::new(0);

fn ports() -> std::sync::MutexGuard<'static, Option<HashMap<String, TcpListener>>> {
    PORTS.lock().unwrap_or_else(|p| p.into_inner())
}

fn mac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC accepts keys of any length");
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

fn nonce() -> Result<[u8; NONCE]> {
    let mut n = [0u8; NONCE];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut n))
        .map_err(|e| MpiError::new(ErrorClass::Other, format!("reading /dev/urandom: {e}")))?;
    Ok(n)
}

/// A parsed port name.
struct Port {
    secret: Vec<u8>,
    addr: SocketAddr,
}

fn parse_port(call: &str, name: &str) -> Result<Port> {
    let bad = |why: &str| {
        MpiError::arg(
            ErrorClass::Port,
            call,
            "port_name",
            format!("{name:?} {why}"),
        )
    };
    let rest = name.trim().strip_prefix(PORT_PREFIX).ok_or_else(|| {
        bad(&format!(
            "does not start with {PORT_PREFIX} (not a port MPI_Open_port made)"
        ))
    })?;
    let (secret, addr) = rest
        .split_once('@')
        .ok_or_else(|| bad("has no '@ADDRESS'"))?;
    if secret.len() < 32 || !secret.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad("carries no valid secret"));
    }
    let addr: SocketAddr = addr
        .parse()
        .map_err(|_| bad("has no valid ip:port address"))?;
    Ok(Port {
        secret: secret.as_bytes().to_vec(),
        addr,
    })
}

/// MPI_Open_port: a listening socket on this host's address; its name carries
/// the address and a fresh secret.
pub fn open_port() -> Result<String> {
    const CALL: &str = "MPI_Open_port";
    crate::runtime::engine()?;
    let ip = crate::runtime::tcp_bind_ip(false);
    let listener = TcpListener::bind(SocketAddr::new(ip, 0)).map_err(|e| {
        MpiError::new(
            ErrorClass::Other,
            format!("{CALL}: cannot listen on {ip}: {e}"),
        )
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| MpiError::new(ErrorClass::Other, format!("{CALL}: {e}")))?;
    let secret = crate::runtime::random_hex(32)?;
    let name = format!("{PORT_PREFIX}{secret}@{addr}");
    ports()
        .get_or_insert_with(HashMap::new)
        .insert(name.clone(), listener);
    Ok(name)
}

/// MPI_Close_port.
pub fn close_port(name: &str) -> Result<()> {
    const CALL: &str = "MPI_Close_port";
    match ports().as_mut().and_then(|m| m.remove(name.trim())) {
        Some(_) => Ok(()),
        None => Err(MpiError::arg(
            ErrorClass::Port,
            CALL,
            "port_name",
            format!("{name:?} is not a port this process opened (or it was closed)"),
        )),
    }
}

fn io(call: &str, what: &str, e: impl std::fmt::Display) -> MpiError {
    MpiError::new(ErrorClass::Port, format!("{call}: {what}: {e}"))
}

fn write_blob(s: &mut TcpStream, b: &[u8]) -> std::io::Result<()> {
    s.write_all(&(b.len() as u64).to_le_bytes())?;
    s.write_all(b)
}

fn read_blob(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 8];
    s.read_exact(&mut len)?;
    let len = u64::from_le_bytes(len);
    if len > 64 << 20 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "group description over 64 MiB",
        ));
    }
    let mut b = vec![0u8; len as usize];
    s.read_exact(&mut b)?;
    Ok(b)
}

/// The acceptor's half of the port handshake on a fresh connection: the key
/// of this connect, or why the client was refused.
fn port_server_handshake(s: &mut TcpStream, secret: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let ns = nonce().map_err(|e| e.message)?;
    let mut hello = MAGIC.to_vec();
    hello.extend_from_slice(&ns);
    s.write_all(&hello).map_err(|e| e.to_string())?;
    let mut msg = [0u8; 8 + NONCE + 32];
    s.read_exact(&mut msg)
        .map_err(|e| format!("reading its proof: {e}"))?;
    if &msg[..8] != MAGIC {
        return Err("bad protocol magic".into());
    }
    let nc = &msg[8..8 + NONCE];
    let want = mac(secret, &[b"oxmpi-port-client", &ns, nc]);
    // Constant-time comparison through the MAC type.
    let mut m = HmacSha256::new_from_slice(secret).expect("any key");
    m.update(b"oxmpi-port-client");
    m.update(&ns);
    m.update(nc);
    if m.verify_slice(&msg[8 + NONCE..]).is_err() {
        let _ = want;
        let _ = s.write_all(&[0u8; 33]);
        return Err("it does not know the port's secret (a forged or stale port name)".into());
    }
    let mut verdict = vec![1u8];
    verdict.extend_from_slice(&mac(secret, &[b"oxmpi-port-server", nc, &ns]));
    s.write_all(&verdict).map_err(|e| e.to_string())?;
    Ok(mac(secret, &[b"oxmpi-connection-key", &ns, nc]).to_vec())
}

/// The connector's half: the key of this connect.
fn port_client_handshake(call: &str, s: &mut TcpStream, secret: &[u8]) -> Result<Vec<u8>> {
    let mut hello = [0u8; 8 + NONCE];
    s.read_exact(&mut hello)
        .map_err(|e| io(call, "reading the port's greeting", e))?;
    if &hello[..8] != MAGIC {
        return Err(MpiError::new(
            ErrorClass::Port,
            format!("{call}: the port's address answers with another protocol"),
        ));
    }
    let ns = &hello[8..];
    let nc = nonce()?;
    let mut msg = MAGIC.to_vec();
    msg.extend_from_slice(&nc);
    msg.extend_from_slice(&mac(secret, &[b"oxmpi-port-client", ns, &nc]));
    s.write_all(&msg)
        .map_err(|e| io(call, "sending our proof", e))?;
    let mut verdict = [0u8; 33];
    s.read_exact(&mut verdict).map_err(|e| io(call, "the port closed the connection (it refused our proof of the secret: a forged or stale port name)", e))?;
    let mut m = HmacSha256::new_from_slice(secret).expect("any key");
    m.update(b"oxmpi-port-server");
    m.update(&nc);
    m.update(ns);
    if verdict[0] != 1 || m.verify_slice(&verdict[1..]).is_err() {
        return Err(MpiError::new(ErrorClass::Port, format!("{call}: the port refused the connection: the port name's secret is wrong (forged or stale port name)")));
    }
    Ok(mac(secret, &[b"oxmpi-connection-key", ns, &nc]).to_vec())
}

/// Which half of a join this group is: the connecting group's processes dial.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    Accept,
    Connect,
}

/// What the root of a group does with the other group's root.
pub enum Bootstrap<'a> {
    /// Accept one authenticated connection on this open port.
    Accept(&'a str),
    /// Connect to this port, giving up after the timeout.
    Connect(&'a str, Duration),
    /// Over this connected socket (MPI_Comm_join); the side is agreed on it.
    Socket(TcpStream, Side, Vec<u8>),
}

fn bcast_bytes(comm: &Comm, root: i32, data: &mut Vec<u8>) -> Result<()> {
    let u64t = Datatype::predefined(Primitive::Uint64);
    let byte = Datatype::predefined(Primitive::Byte);
    let mut len = [data.len() as u64];
    // SAFETY: buffers outlive the blocking calls and hold the counts given.
    unsafe { crate::coll::bcast::bcast(len.as_mut_ptr() as *mut u8, 1, &u64t, root, comm)? };
    data.resize(len[0] as usize, 0);
    // SAFETY: as above.
    unsafe { crate::coll::bcast::bcast(data.as_mut_ptr(), data.len(), &byte, root, comm) }
}

/// Waits for a connection on the port while keeping the engine going.
fn accept_on(call: &str, listener: &TcpListener, secret: &[u8]) -> Result<(TcpStream, Vec<u8>)> {
    let e = crate::runtime::engine()?;
    listener
        .set_nonblocking(true)
        .map_err(|x| io(call, "the port", x))?;
    let mut sleep = Duration::from_micros(100);
    loop {
        match listener.accept() {
            Ok((mut s, addr)) => {
                let _ = s.set_nonblocking(false);
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                let _ = s.set_write_timeout(Some(Duration::from_secs(10)));
                let _ = s.set_nodelay(true);
                match port_server_handshake(&mut s, secret) {
                    Ok(key) => {
                        let _ = s.set_read_timeout(Some(EXCHANGE_TIMEOUT));
                        let _ = s.set_write_timeout(Some(EXCHANGE_TIMEOUT));
                        return Ok((s, key));
                    }
                    Err(why) => {
                        eprintln!("oxmpi: {call}: refused a connection from {addr}: {why}");
                        continue;
                    }
                }
            }
            Err(x)
                if x.kind() == std::io::ErrorKind::WouldBlock
                    || x.kind() == std::io::ErrorKind::Interrupted => {}
            Err(x) => return Err(io(call, "waiting on the port", x)),
        }
        e.progress_once();
        crate::transport::tcp::wait_fds(&[listener.as_raw_fd()], sleep);
        sleep = (sleep * 2).min(Duration::from_millis(50));
    }
}

/// The root's part of the bootstrap: returns the channel, the key and our side.
fn open_channel(call: &str, how: Bootstrap<'_>) -> Result<(TcpStream, Vec<u8>, Side)> {
    match how {
        Bootstrap::Accept(name) => {
            let port = parse_port(call, name)?;
            let listener = {
                let g = ports();
                let l = g.as_ref().and_then(|m| m.get(name.trim())).ok_or_else(|| {
                    MpiError::arg(ErrorClass::Port, call, "port_name", format!("{name:?} is not a port this process opened (MPI_Open_port) or it was closed"))
                })?;
                l.try_clone().map_err(|e| io(call, "the port", e))?
            };
            let (s, key) = accept_on(call, &listener, &port.secret)?;
            Ok((s, key, Side::Accept))
        }
        Bootstrap::Connect(name, timeout) => {
            let port = parse_port(call, name)?;
            let deadline = Instant::now() + timeout;
            let mut s = loop {
                match TcpStream::connect_timeout(&port.addr, Duration::from_secs(5)) {
                    Ok(s) => break s,
                    Err(e) if Instant::now() >= deadline => {
                        return Err(io(
                            call,
                            &format!(
                            "nobody accepts on {} (port closed, or no process in MPI_Comm_accept)",
                            port.addr
                        ),
                            e,
                        ))
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(50)),
                }
            };
            let _ = s.set_read_timeout(Some(EXCHANGE_TIMEOUT.max(timeout)));
            let _ = s.set_write_timeout(Some(EXCHANGE_TIMEOUT));
            let _ = s.set_nodelay(true);
            let key = port_client_handshake(call, &mut s, &port.secret)?;
            Ok((s, key, Side::Connect))
        }
        Bootstrap::Socket(s, side, key) => Ok((s, key, side)),
    }
}

/// The other group's root, over the bootstrap channel (roots only).
struct Channel {
    s: TcpStream,
    side: Side,
}

impl Channel {
    /// Sends `mine` and returns the other root's bytes (the accepting side
    /// writes first).
    fn swap(&mut self, call: &str, mine: &[u8]) -> Result<Vec<u8>> {
        let s = &mut self.s;
        let theirs = if self.side == Side::Accept {
            write_blob(s, mine).and_then(|_| read_blob(s))
        } else {
            read_blob(s).and_then(|t| write_blob(s, mine).map(|_| t))
        };
        theirs.map_err(|x| io(call, "exchanging with the other group's root", x))
    }
}

/// The root's outcome, told to every process of `comm` (collective; the root
/// passes `Some`): its bytes, or its error on every process.
fn share(comm: &Comm, root: i32, outcome: Option<Result<Vec<u8>>>) -> Result<Vec<u8>> {
    let mut info: Vec<u8> = Vec::new();
    match outcome {
        Some(Ok(b)) => {
            info.push(0);
            info.extend_from_slice(&b);
        }
        Some(Err(err)) => {
            info.push(1);
            info.extend_from_slice(&(err.class as i32).to_le_bytes());
            info.extend_from_slice(err.message.as_bytes());
        }
        None => {}
    }
    bcast_bytes(comm, root, &mut info)?;
    if info.first() == Some(&0) {
        info.remove(0);
        return Ok(info);
    }
    let class = info
        .get(1..5)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .unwrap_or(ErrorClass::Other as i32);
    let class = ErrorClass::ALL
        .iter()
        .copied()
        .find(|c| *c as i32 == class)
        .unwrap_or(ErrorClass::Other);
    Err(MpiError::new(
        class,
        String::from_utf8_lossy(info.get(5..).unwrap_or_default()).into_owned(),
    ))
}

/// The bitwise AND of `words` over `comm`, in place (collective).
fn and_over(comm: &Comm, words: &mut [u64]) -> Result<()> {
    let u64t = Datatype::predefined(Primitive::Uint64);
    // SAFETY: `words` holds words.len() u64s and outlives the blocking call (in place).
    unsafe {
        crate::coll::allreduce::allreduce(
            None,
            words.as_mut_ptr() as *mut u8,
            words.len(),
            &u64t,
            &Op::predefined(PredefinedOp::Band),
            comm,
        )
    }
}

/// Marks in-progress joins (see [`joining`]).
struct JoinGuard;

impl JoinGuard {
    fn enter() -> JoinGuard {
        JOINS.fetch_add(1, Ordering::SeqCst);
        JoinGuard
    }
}

impl Drop for JoinGuard {
    fn drop(&mut self) {
        JOINS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// MPI_Comm_accept / MPI_Comm_connect / MPI_Comm_join: joins `local`'s group
/// with another group into an intercommunicator. Collective over `local`;
/// `how` matters at `root` only (others pass anything). Several joins may run
/// at once in one process (threads of MPI_THREAD_MULTIPLE, on different
/// communicators): nothing is locked across the call.
pub fn connect_groups(
    call: &'static str,
    local: &Comm,
    root: i32,
    how: Option<Bootstrap<'_>>,
) -> Result<Comm> {
    let e = crate::runtime::engine()?;
    if local.is_inter() {
        return Err(MpiError::arg(
            ErrorClass::Comm,
            call,
            "comm",
            "an intercommunicator; an intracommunicator is required",
        ));
    }
    crate::coll::check_root(call, local, root)?;
    let _join = JoinGuard::enter();
    // Our half of the intercommunicator; every internal collective below runs on it.
    let group = super::create::dup(local)?;
    let is_root = group.rank() == root;

    CONNECTED.store(true, Ordering::Relaxed);
    // Every process's record: its rank in its transport and its listener.
    e.ensure_tcp()?;
    let ep = e.with_state(|st| st.tcp_endpoint().unwrap_or_default());
    if ep.len() > RECORD - 5 {
        return Err(MpiError::new(
            ErrorClass::Intern,
            format!("{call}: listener address {ep:?} too long"),
        ));
    }
    let mut rec = [0u8; RECORD];
    rec[..4].copy_from_slice(&e.rank.to_le_bytes());
    rec[4] = ep.len() as u8;
    rec[5..5 + ep.len()].copy_from_slice(ep.as_bytes());
    let n = group.size() as usize;
    let mut all = vec![0u8; RECORD * n];
    let byte = Datatype::predefined(Primitive::Byte);
    // SAFETY: `rec` holds RECORD bytes and `all` RECORD per rank; both outlive the call.
    unsafe {
        crate::coll::allgather::allgather(
            Some(rec.as_ptr()),
            RECORD,
            &byte,
            all.as_mut_ptr(),
            RECORD,
            &byte,
            &group,
        )?
    };

    // 1. The roots swap descriptions; the result (or the failure) goes to every process.
    let mut chan: Option<Channel> = None;
    let outcome = if is_root {
        let how = how.ok_or_else(|| {
            MpiError::new(
                ErrorClass::Intern,
                format!("{call}: no bootstrap at the root"),
            )
        })?;
        let mut mine = Vec::new();
        mine.extend_from_slice(&(n as u32).to_le_bytes());
        for r in all.chunks_exact(RECORD) {
            mine.extend_from_slice(&r[..5 + r[4] as usize]);
        }
        Some(open_channel(call, how).and_then(|(s, key, side)| {
            let mut c = Channel { s, side };
            let theirs = c.swap(call, &mine)?;
            chan = Some(c);
            let mut out = vec![u8::from(side == Side::Connect)];
            out.extend_from_slice(&(key.len() as u32).to_le_bytes());
            out.extend_from_slice(&key);
            out.extend_from_slice(&theirs);
            Ok(out)
        }))
    } else {
        None
    };
    let info = share(&group, root, outcome)?;
    let malformed = || {
        MpiError::new(
            ErrorClass::Port,
            format!("{call}: malformed group description from the other root"),
        )
    };
    let dial = info.first() == Some(&1);
    let klen =
        u32::from_le_bytes(info.get(1..5).ok_or_else(malformed)?.try_into().unwrap()) as usize;
    let key = info.get(5..5 + klen).ok_or_else(malformed)?.to_vec();
    let theirs = &info[5 + klen..];
    let m = u32::from_le_bytes(theirs.get(..4).ok_or_else(malformed)?.try_into().unwrap()) as usize;
    let mut at = 4;
    let mut remote_procs = Vec::with_capacity(m.min(1 << 20));
    for _ in 0..m {
        let h = theirs.get(at..at + 5).ok_or_else(malformed)?;
        let me = u32::from_le_bytes(h[..4].try_into().unwrap());
        let len = h[4] as usize;
        let ep = std::str::from_utf8(theirs.get(at + 5..at + 5 + len).ok_or_else(malformed)?)
            .map_err(|_| malformed())?
            .to_string();
        ep.parse::<SocketAddr>().map_err(|_| malformed())?;
        at += 5 + len;
        remote_procs.push((me, ep));
    }
    if at != theirs.len() || m == 0 || key.is_empty() {
        return Err(malformed());
    }

    // 2. Each process adds the other group's processes in one step (so they
    // get consecutive indices, whatever other joins of this process do), then
    // the groups swap where their tables put the other group: process j of
    // theirs is `remote[j]` here, and we are `their_base[j] + (our rank)` there.
    let remote: Vec<u32> = e.with_state(|st| {
        remote_procs
            .iter()
            .map(|(me, ep)| st.add_dynamic_peer(ep, *me, u32::MAX, &key, false))
            .collect::<Result<Vec<u32>>>()
    })?;
    debug_assert!(remote.windows(2).all(|w| w[1] == w[0] + 1));
    let close_all =
        |remote: &[u32]| e.with_state(|st| remote.iter().for_each(|&r| st.close_peer(r)));
    let agreed = (|| {
        let mut bases = vec![0u8; 4 * n];
        let mine = remote[0].to_le_bytes();
        let u32t = Datatype::predefined(Primitive::Uint32);
        // SAFETY: `mine` holds one u32 and `bases` one per rank; both outlive the call.
        unsafe {
            crate::coll::allgather::allgather(
                Some(mine.as_ptr()),
                1,
                &u32t,
                bases.as_mut_ptr(),
                1,
                &u32t,
                &group,
            )?
        };
        let outcome = is_root.then(|| {
            chan.as_mut()
                .ok_or_else(|| MpiError::intern(call, "no bootstrap channel at the root"))
                .and_then(|c| c.swap(call, &bases))
        });
        let their_bases = share(&group, root, outcome)?;
        if their_bases.len() != 4 * m {
            return Err(malformed());
        }
        let i = group.rank() as u32;
        e.with_state(|st| {
            for (&r, b) in remote.iter().zip(their_bases.chunks_exact(4)) {
                st.set_dynamic_index(r, u32::from_le_bytes(b.try_into().unwrap()) + i, dial);
            }
        });
        // 3. A context id free in both groups, held and confirmed like every
        // other agreement's (another thread's join or communicator creation
        // may be picking one at the same time): each round's AND over our
        // group, swapped between the roots, and told to the group.
        let seed = key.iter().take(4).fold(0u32, |a, &b| a << 8 | b as u32);
        context::agree_with(call, true, (seed, 0), |words| {
            and_over(&group, words)?;
            let mine: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let outcome = is_root.then(|| {
                chan.as_mut()
                    .ok_or_else(|| MpiError::intern(call, "no bootstrap channel at the root"))
                    .and_then(|c| c.swap(call, &mine))
            });
            let theirs = share(&group, root, outcome)?;
            if theirs.len() != mine.len() {
                return Err(malformed());
            }
            for (w, t) in words.iter_mut().zip(theirs.chunks_exact(8)) {
                *w &= u64::from_le_bytes(t.try_into().unwrap());
            }
            Ok(())
        })
    })();
    drop(chan);
    let ctx = match agreed {
        Ok(ctx) => ctx,
        Err(err) => {
            close_all(&remote);
            return Err(err);
        }
    };

    // Every connection up before returning, so an unreachable process is this
    // call's error rather than a lost message later.
    let deadline = Instant::now() + EXCHANGE_TIMEOUT;
    let mut failure: Option<String> = None;
    e.wait_until(|st| {
        for &r in &remote {
            match st.peer_connected(r) {
                Ok(true) => {}
                Ok(false) if Instant::now() < deadline => return None,
                Ok(false) => {
                    failure = Some(format!("no connection with a process of the other group within {EXCHANGE_TIMEOUT:?}"));
                    return Some(());
                }
                Err(why) => {
                    failure = Some(why);
                    return Some(());
                }
            }
        }
        Some(())
    });
    if let Some(why) = failure {
        context::release(ctx);
        close_all(&remote);
        return Err(MpiError::new(ErrorClass::Other, format!("{call}: {why}")));
    }
    Ok(Comm::build_inter(
        ctx,
        local.rank(),
        local.0.group.clone(),
        Arc::from(remote),
        group,
    ))
}

/// MPI_Comm_accept.
pub fn accept(port_name: &str, root: i32, comm: &Comm) -> Result<Comm> {
    let how = (comm.rank() == root).then_some(Bootstrap::Accept(port_name));
    connect_groups("MPI_Comm_accept", comm, root, how)
}

/// MPI_Comm_connect; `timeout` bounds the wait for an acceptor.
pub fn connect(port_name: &str, root: i32, comm: &Comm, timeout: Duration) -> Result<Comm> {
    let how = (comm.rank() == root).then_some(Bootstrap::Connect(port_name, timeout));
    connect_groups("MPI_Comm_connect", comm, root, how)
}

/// MPI_Comm_join over a connected stream socket (a duplicate of the user's,
/// which stays open).
pub fn join(mut s: TcpStream) -> Result<Comm> {
    const CALL: &str = "MPI_Comm_join";
    let e = crate::runtime::engine()?;
    let _ = s.set_nonblocking(false);
    let _ = s.set_read_timeout(Some(EXCHANGE_TIMEOUT));
    let _ = s.set_write_timeout(Some(EXCHANGE_TIMEOUT));
    // Both sides draw a nonce: the higher one accepts; the key mixes both.
    let (side, key) = loop {
        let n = nonce()?;
        s.write_all(&n).map_err(|x| {
            MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "fd",
                format!("writing to the socket: {x}"),
            )
        })?;
        let mut t = [0u8; NONCE];
        s.read_exact(&mut t).map_err(|x| {
            MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "fd",
                format!("reading from the socket (is the other process in MPI_Comm_join?): {x}"),
            )
        })?;
        if n == t {
            continue;
        }
        let (hi, lo) = if n > t { (n, t) } else { (t, n) };
        let side = if n > t { Side::Accept } else { Side::Connect };
        break (side, mac(&hi, &[b"oxmpi-join", &lo]).to_vec());
    };
    connect_groups(
        CALL,
        e.self_comm(),
        0,
        Some(Bootstrap::Socket(s, side, key)),
    )
}

/// MPI_Comm_disconnect: waits until traffic with the other group is done,
/// then closes the connections to processes of other jobs this communicator
/// alone used. Collective over both groups of an intercommunicator.
pub fn disconnect(comm: &Comm) -> Result<()> {
    let e = crate::runtime::engine()?;
    let size = e.size;
    // Ours is on the wire, then theirs arrived (their barrier message follows it).
    e.wait_until(|st| {
        comm.peer_group()
            .iter()
            .chain(comm.group())
            .all(|&r| r >= st.peers.len() as u32 || st.peer_drained(r))
            .then_some(())
    });
    crate::coll::barrier::barrier(comm)?;
    let others: Vec<u32> = comm
        .peer_group()
        .iter()
        .chain(comm.group())
        .copied()
        .filter(|&r| r >= size)
        .collect();
    if others.is_empty() {
        return Ok(());
    }
    e.wait_until(|st| others.iter().all(|&r| st.peer_drained(r)).then_some(()));
    e.with_state(|st| others.iter().for_each(|&r| st.say_goodbye(r)));
    let deadline = Instant::now() + Duration::from_secs(10);
    e.wait_until(|st| {
        (others.iter().all(|&r| st.goodbye_done(r)) || Instant::now() >= deadline).then_some(())
    });
    e.with_state(|st| others.iter().for_each(|&r| st.close_peer(r)));
    Ok(())
}

/// The KVS key under which a spawned job finds its parents' port (MPICH's name,
/// so Hydra-started jobs agree).
pub const PARENT_PORT_KEY: &str = "PARENT_ROOT_PORT_NAME";

/// The intercommunicator to the parents of a spawned job (MPI_Comm_get_parent).
static PARENT: Mutex<Option<Comm>> = Mutex::new(None);

/// The parents' intercommunicator, if this job was spawned and it was not
/// disconnected.
pub fn parent() -> Option<Comm> {
    PARENT.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Forgets the parents' intercommunicator (it was disconnected or freed).
pub fn forget_parent() {
    *PARENT.lock().unwrap_or_else(|p| p.into_inner()) = None;
}

/// In MPI_Init of a spawned process (`PMI_SPAWNED=1`, set by our mpiexec and
/// Hydra): the job connects to the port its parents put into its KVS.
pub(crate) fn connect_to_parent() -> Result<()> {
    if std::env::var("PMI_SPAWNED").map_or(true, |v| v != "1") {
        return Ok(());
    }
    let e = crate::runtime::engine()?;
    let port = e.pmi_get(PARENT_PORT_KEY)?;
    let Some(port) = port else {
        return Ok(());
    };
    let world = e.world().clone();
    let how = (world.rank() == 0).then_some(Bootstrap::Connect(&port, Duration::from_secs(60)));
    let inter = connect_groups("MPI_Init", &world, 0, how)?;
    *PARENT.lock().unwrap_or_else(|p| p.into_inner()) = Some(inter);
    Ok(())
}

/// MPI_Comm_spawn / MPI_Comm_spawn_multiple: `commands` matter at `root`
/// only. The root opens a port, asks the process manager to start the
/// processes with the port in their KVS, and the group accepts their
/// connection. Returns the intercommunicator and one error code per process
/// asked for (0 = started). A bad command at the root (`Err`) fails the call
/// on every process.
pub fn spawn(
    call: &'static str,
    commands: Result<Vec<SpawnCommand>>,
    root: i32,
    comm: &Comm,
) -> Result<(Comm, Vec<i32>)> {
    let e = crate::runtime::engine()?;
    if comm.is_inter() {
        return Err(MpiError::arg(
            ErrorClass::Comm,
            call,
            "comm",
            "an intercommunicator; an intracommunicator is required",
        ));
    }
    crate::coll::check_root(call, comm, root)?;
    // The root's outcome (port or error, error codes) goes to every process.
    let mut info: Vec<u8> = Vec::new();
    let mut port = String::new();
    if comm.rank() == root {
        let started = commands
            .and_then(|commands| open_port().map(|p| (p, commands)))
            .and_then(|(p, commands)| {
                let preput = vec![(PARENT_PORT_KEY.to_string(), p.clone())];
                match e.pmi_spawn(call, &commands, &preput) {
                    // Hydra sends no per-process codes: success means all started.
                    Ok(codes) if codes.is_empty() => {
                        Ok((p, vec![0; commands.iter().map(|c| c.nprocs as usize).sum()]))
                    }
                    Ok(codes) => Ok((p, codes)),
                    Err(err) => {
                        let _ = close_port(&p);
                        Err(err)
                    }
                }
            });
        match started {
            Ok((p, codes)) => {
                info.push(0);
                for c in &codes {
                    info.extend_from_slice(&c.to_le_bytes());
                }
                port = p;
            }
            Err(err) => {
                info.push(1);
                info.extend_from_slice(&(err.class as i32).to_le_bytes());
                info.extend_from_slice(err.message.as_bytes());
            }
        }
    }
    bcast_bytes(comm, root, &mut info)?;
    if info.first() != Some(&0) {
        let class = info
            .get(1..5)
            .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
            .unwrap_or(ErrorClass::Other as i32);
        let class = ErrorClass::ALL
            .iter()
            .copied()
            .find(|c| *c as i32 == class)
            .unwrap_or(ErrorClass::Spawn);
        return Err(MpiError::new(
            class,
            String::from_utf8_lossy(info.get(5..).unwrap_or_default()).into_owned(),
        ));
    }
    let codes: Vec<i32> = info[1..]
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let how = (comm.rank() == root).then_some(Bootstrap::Accept(&port));
    let inter = connect_groups(call, comm, root, how);
    if comm.rank() == root {
        let _ = close_port(&port);
    }
    Ok((inter?, codes))
}

/// A name-service request (MPI_Publish_name, MPI_Unpublish_name, MPI_Lookup_name).
pub use oxmpi_pmi::NameOp;

/// MPI_Publish_name / MPI_Unpublish_name / MPI_Lookup_name through the process
/// manager's name service (our mpiexec's is shared by every job of the user on
/// the host; Hydra's needs its name server). A lookup returns the port.
pub fn name_service(call: &str, op: NameOp, service: &str, port: &str) -> Result<Option<String>> {
    let e = crate::runtime::engine()?;
    let bad = |arg: &str, why: &str| MpiError::arg(ErrorClass::Arg, call, arg, why);
    if service.is_empty() {
        return Err(bad("service_name", "is empty"));
    }
    if service.len() > 255
        || service
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '=' || c == ';')
    {
        return Err(MpiError::arg(ErrorClass::Service, call, "service_name", format!("{service:?}: a service name has at most 255 characters, none of them spaces, '=' or ';'")));
    }
    if op == NameOp::Publish
        && (port.is_empty()
            || port
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || c == ';'))
    {
        return Err(MpiError::arg(
            ErrorClass::Port,
            call,
            "port_name",
            format!("{port:?} is not a port name"),
        ));
    }
    let r = e.pmi_name(call, op, service, port)?;
    if op == NameOp::Lookup && r.as_deref().is_none_or(str::is_empty) {
        return Err(MpiError::new(
            ErrorClass::Name,
            format!("{call}: service {service:?} is not published"),
        ));
    }
    Ok(r)
}
