//! Ports: their names, the listening sockets behind them, and the
//! authenticated bootstrap channel between two groups' roots (the HMAC
//! handshake described in the parent module).

use super::*;

/// The prefix of every port name oxmpi makes.
pub const PORT_PREFIX: &str = "oxmpi-port://";
/// Longest port name (`MPI_MAX_PORT_NAME` is 1024).
pub const MAX_PORT_NAME: usize = 1023;
pub(super) const MAGIC: &[u8; 8] = b"OXMPIPT1";
pub(super) const NONCE: usize = 32;
/// How long the bootstrap exchange and the pairwise connections may take.
pub(super) const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(60);
/// Bytes of one process's record in the gather inside a group.
pub(super) const RECORD: usize = 64;

/// Whether this process ever joined another job's processes (the launcher's
/// deadlock check cannot see those; see `diag::Watch`).
pub(super) static CONNECTED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

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
pub(super) static PORTS: Mutex<Option<HashMap<String, TcpListener>>> = Mutex::new(None);
/// Connects, accepts and joins in progress in this process.
pub(super) static JOINS: AtomicUsize = AtomicUsize::new(0);

pub(super) fn ports() -> std::sync::MutexGuard<'static, Option<HashMap<String, TcpListener>>> {
    PORTS.lock().unwrap_or_else(|p| p.into_inner())
}

pub(super) fn mac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC accepts keys of any length");
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

pub(super) fn nonce() -> Result<[u8; NONCE]> {
    let mut n = [0u8; NONCE];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut n))
        .map_err(|e| MpiError::new(ErrorClass::Other, format!("reading /dev/urandom: {e}")))?;
    Ok(n)
}

/// A parsed port name.
pub(super) struct Port {
    secret: Vec<u8>,
    addr: SocketAddr,
}

pub(super) fn parse_port(call: &str, name: &str) -> Result<Port> {
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

pub(super) fn io(call: &str, what: &str, e: impl std::fmt::Display) -> MpiError {
    MpiError::new(ErrorClass::Port, format!("{call}: {what}: {e}"))
}

pub(super) fn write_blob(s: &mut TcpStream, b: &[u8]) -> std::io::Result<()> {
    s.write_all(&(b.len() as u64).to_le_bytes())?;
    s.write_all(b)
}

pub(super) fn read_blob(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
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
pub(super) fn port_server_handshake(
    s: &mut TcpStream,
    secret: &[u8],
) -> std::result::Result<Vec<u8>, String> {
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
pub(super) fn port_client_handshake(
    call: &str,
    s: &mut TcpStream,
    secret: &[u8],
) -> Result<Vec<u8>> {
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

pub(super) fn bcast_bytes(comm: &Comm, root: i32, data: &mut Vec<u8>) -> Result<()> {
    let mut len = [data.len() as u64];
    crate::coll::bcast::bcast(RecvBuf::slice(&mut len), root, comm)?;
    data.resize(len[0] as usize, 0);
    crate::coll::bcast::bcast(RecvBuf::bytes(data), root, comm)
}

/// Waits for a connection on the port while keeping the engine going.
pub(super) fn accept_on(
    call: &str,
    listener: &TcpListener,
    secret: &[u8],
) -> Result<(TcpStream, Vec<u8>)> {
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
pub(super) fn open_channel(call: &str, how: Bootstrap<'_>) -> Result<(TcpStream, Vec<u8>, Side)> {
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
pub(super) struct Channel {
    pub(super) s: TcpStream,
    pub(super) side: Side,
}

impl Channel {
    /// Sends `mine` and returns the other root's bytes (the accepting side
    /// writes first).
    pub(super) fn swap(&mut self, call: &str, mine: &[u8]) -> Result<Vec<u8>> {
        let s = &mut self.s;
        let theirs = if self.side == Side::Accept {
            write_blob(s, mine).and_then(|_| read_blob(s))
        } else {
            read_blob(s).and_then(|t| write_blob(s, mine).map(|_| t))
        };
        theirs.map_err(|x| io(call, "exchanging with the other group's root", x))
    }
}
