//! Start-up, shutdown and the process-wide engine: MPI_Init / MPI_Finalize, the
//! predefined communicators, abort, clocks and the blocking-wait loop.
//!
//! Start-up follows DESIGN.md: every rank boots through PMI (our `mpiexec`,
//! MPICH's Hydra, ...) or, with no process manager around, as a singleton of
//! size 1. Ranks publish `host identity + pid` in the PMI key-value space; ranks
//! that share a host then share one memory segment, which the lowest rank of the
//! host creates (mode 0600) and unlinks as soon as every local rank has mapped
//! it, so no file outlives the job even when it ends badly.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use oxmpi_pmi::client::PmiClient;

use crate::comm::{Comm, SELF_CONTEXT, WORLD_CONTEXT};
use crate::engine::{Path, State};
use crate::error::{ErrorClass, MpiError, Result};
use crate::transport::cma;
use crate::transport::doorbell::Doorbell;
use crate::transport::shm::ShmSegment;

/// Thread support levels (`MPI_THREAD_*`), ordered from least to most (the C library
/// gives the standard ABI's values by [`name`](ThreadLevel::name), from abi.txt).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ThreadLevel {
    Single,
    Funneled,
    Serialized,
    Multiple,
}

impl ThreadLevel {
    /// Every level, from least to most.
    pub const ALL: &'static [ThreadLevel] = &[ThreadLevel::Single, ThreadLevel::Funneled, ThreadLevel::Serialized, ThreadLevel::Multiple];

    /// The C name, e.g. `MPI_THREAD_MULTIPLE`.
    pub const fn name(self) -> &'static str {
        match self {
            ThreadLevel::Single => "MPI_THREAD_SINGLE",
            ThreadLevel::Funneled => "MPI_THREAD_FUNNELED",
            ThreadLevel::Serialized => "MPI_THREAD_SERIALIZED",
            ThreadLevel::Multiple => "MPI_THREAD_MULTIPLE",
        }
    }
}

/// One level of [`Engine::cluster_info`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterLevel {
    /// Which cluster of this level the rank belongs to.
    pub cluster_id: i32,
    /// The rank's index inside that cluster.
    pub rank: i32,
    /// Ranks in that cluster.
    pub size: i32,
}

/// The deepest hierarchy [`Engine::cluster_info`] reports.
pub const MAX_CLUSTER_LEVELS: usize = 8;

/// The largest tag value (`MPI_TAG_UB`).
pub const TAG_UB: i32 = i32::MAX;

/// Spinning waits call sched_yield once per this many spin rounds (a round
/// of `wait_inner` is a poll and up to 15 looks at the rings, about 1-2 µs;
/// every 8 rounds cost 2-5x on 2-rank communicator creation under load).
const SPINS_PER_YIELD: u32 = 64;

/// The process-wide engine, created once by [`init`].
pub struct Engine {
    state: Mutex<State>,
    bell: &'static Doorbell,
    pub(crate) rank: u32,
    pub(crate) size: u32,
    world: Comm,
    self_comm: Comm,
    pmi: Mutex<Option<PmiClient>>,
    /// The highest thread level asked for so far (MPI_Init_thread and every
    /// MPI_Session_init share the engine), as its `MPI_THREAD_*` code.
    thread_level: std::sync::atomic::AtomicI32,
    main_thread: std::thread::ThreadId,
    /// Host index of every world rank (index of first appearance of its host).
    pub(crate) host_of: Vec<u32>,
    /// Package and NUMA node of every world rank on its host, where hwloc
    /// tells them ([`crate::hwtopo`]); `None` elsewhere.
    package_numa_of: Vec<(Option<u32>, Option<u32>)>,
    processor_name: String,
    appnum: i32,
    universe_size: i32,
    /// Threads asleep in `wait_until`, so completions by other threads wake them.
    waiters: AtomicUsize,
    pub(crate) spin: u32,
    pub(crate) yields: u32,
    /// `OXMPI_HANG_REPORT=SECONDS`: describe what a blocked call waits for.
    hang_report: Option<Duration>,
    /// Peers over TCP: a blocked rank also waits on sockets, not only its doorbell.
    has_tcp: AtomicBool,
    /// The host's shared-memory segment, for the doorbells of local ranks
    /// (shared-memory collectives wake peers through them).
    shm_seg: Option<&'static ShmSegment>,
    /// Local index in `shm_seg` of every world rank that shares it (this rank too).
    local_of: Vec<Option<u32>>,
    /// More ranks on this host than processors.
    pub(crate) oversubscribed: bool,
}

static ENGINE: OnceLock<Engine> = OnceLock::new();
/// The World model: 0 before MPI_Init, 1 between MPI_Init and MPI_Finalize, 2 after.
static WORLD: AtomicU8 = AtomicU8::new(WORLD_NONE);
const WORLD_NONE: u8 = 0;
const WORLD_ACTIVE: u8 = 1;
const WORLD_DONE: u8 = 2;
/// Sessions (MPI_Session_init) not yet finalized.
static SESSIONS: AtomicUsize = AtomicUsize::new(0);
/// The engine left the job (its last user, World model or session, is done).
static DOWN: AtomicBool = AtomicBool::new(false);
/// Serializes start-up and shutdown between the World model and sessions.
static LIFECYCLE: Mutex<()> = Mutex::new(());

fn lifecycle() -> MutexGuard<'static, ()> {
    LIFECYCLE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The engine, or the error a call made before init / after finalize deserves.
/// The engine serves the World model and every session: it is there from the
/// first MPI_Init or MPI_Session_init until the last of them is finalized.
pub fn engine() -> Result<&'static Engine> {
    if DOWN.load(Ordering::Acquire) {
        return Err(MpiError::new(ErrorClass::Other, "MPI call made after MPI_Finalize"));
    }
    ENGINE.get().ok_or_else(|| {
        MpiError::new(ErrorClass::Other, "MPI call made before MPI_Init (or MPI_Session_init)")
    })
}

/// The engine once `MPI_Init` made it, even after `MPI_Finalize` (the tool
/// interface reads its counters before and after the MPI calls may run).
pub(crate) fn engine_any() -> Option<&'static Engine> {
    ENGINE.get()
}

/// MPI_Initialized: MPI_Init has been called (sessions do not count).
pub fn is_initialized() -> bool {
    WORLD.load(Ordering::Acquire) != WORLD_NONE
}

/// MPI_Finalized: MPI_Finalize has been called.
pub fn is_finalized() -> bool {
    WORLD.load(Ordering::Acquire) == WORLD_DONE
}

/// Whether the World model is active (between MPI_Init and MPI_Finalize), so
/// that MPI_COMM_WORLD and MPI_COMM_SELF may be used.
pub fn world_active() -> bool {
    WORLD.load(Ordering::Acquire) == WORLD_ACTIVE
}

/// Starts the engine if neither MPI_Init nor a session has: the one boot of
/// this process through the process manager.
fn boot_once(call: &str, required: ThreadLevel) -> Result<&'static Engine> {
    if DOWN.load(Ordering::Acquire) {
        return Err(MpiError::new(
            ErrorClass::Other,
            format!(
                "{call}: MPI cannot start again in this process: MPI_Finalize or the \
                 last MPI_Session_finalize already ended its part in the job"
            ),
        ));
    }
    if let Some(e) = ENGINE.get() {
        e.thread_level.fetch_max(required as i32, Ordering::AcqRel);
        return Ok(e);
    }
    let mut pmi = PmiClient::from_env().map_err(|e| pmi_err("cannot reach the process manager", e))?;
    let (rank, size) = match &pmi {
        Some(p) => (p.rank(), p.size()),
        None => (0, 1),
    };
    match boot(&mut pmi, rank, size, required) {
        Ok(engine) => {
            let _ = ENGINE.set(engine);
            // A spawned job joins its parents before MPI_Init (or the first
            // MPI_Session_init) returns.
            crate::comm::dynamic::connect_to_parent()?;
            Ok(ENGINE.get().expect("just set"))
        }
        Err(e) => {
            if let Some(p) = pmi.as_mut() {
                // Peers are blocked in PMI barriers; the job cannot go on.
                let _ = p.abort(1, &e.message);
            }
            Err(MpiError::new(e.class, e.message.replace("MPI_Init:", &format!("{call}:"))))
        }
    }
}

/// MPI_Session_init's part in the engine: starts it if needed and counts
/// the session. Returns the thread level provided.
pub fn session_init(required: ThreadLevel) -> Result<ThreadLevel> {
    let _g = lifecycle();
    let e = boot_once("MPI_Session_init", required)?;
    SESSIONS.fetch_add(1, Ordering::AcqRel);
    // The process's level: at least `required`, more if MPI_Init_thread or
    // another session asked for more (it is one level per process).
    Ok(e.thread_level().max(required))
}

/// MPI_Session_finalize's part: the last user of the engine takes it out of
/// the job. When no MPI_Init came (yet), that happens when the process
/// exits, so that MPI_Init or another session may still follow.
pub fn session_finalize() -> Result<()> {
    let _g = lifecycle();
    let left = SESSIONS.fetch_sub(1, Ordering::AcqRel).saturating_sub(1);
    if left > 0 {
        return Ok(());
    }
    match WORLD.load(Ordering::Acquire) {
        WORLD_DONE => shutdown("MPI_Session_finalize"),
        WORLD_NONE => {
            static AT_EXIT: std::sync::Once = std::sync::Once::new();
            AT_EXIT.call_once(|| {
                // SAFETY: registers a plain `extern "C" fn()` with the C library.
                unsafe { libc::atexit(shutdown_at_exit) };
            });
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The process sets every session offers (MPI-4 `MPI_Session_get_nth_pset`).
pub const PSET_NAMES: [&str; 2] = ["mpi://WORLD", "mpi://SELF"];

/// The members of process set `name` (compared without regard to case), as
/// world ranks in rank order; `None` for a name that is not a process set.
pub fn pset_members(name: &str) -> Result<Option<Vec<u32>>> {
    let e = engine()?;
    Ok(if name.eq_ignore_ascii_case(PSET_NAMES[0]) {
        Some((0..e.size()).collect())
    } else if name.eq_ignore_ascii_case(PSET_NAMES[1]) {
        Some(vec![e.rank()])
    } else {
        None
    })
}

/// Leaves the job at exit when sessions alone used MPI and every one was
/// finalized (a process still in the World model, or with a session open,
/// exits as if it never finalized: the launcher says so).
extern "C" fn shutdown_at_exit() {
    let _g = lifecycle();
    if DOWN.load(Ordering::Acquire) || ENGINE.get().is_none() {
        return;
    }
    if WORLD.load(Ordering::Acquire) != WORLD_ACTIVE && SESSIONS.load(Ordering::Acquire) == 0 {
        if let Err(e) = shutdown("MPI_Session_finalize") {
            eprintln!("oxmpi: leaving the job at exit: {}", e.message);
        }
    }
}

fn pmi_err(what: &str, e: impl std::fmt::Display) -> MpiError {
    MpiError::new(ErrorClass::Other, format!("MPI_Init: {what}: {e}"))
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into the buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// What makes two ranks "on the same host": they can share memory. The hostname
/// alone is not enough (containers), so the kernel's boot id goes with it.
/// `OXMPI_HOST_ID` overrides it, for tests that fake several hosts.
fn host_identity() -> String {
    if let Ok(id) = std::env::var("OXMPI_HOST_ID") {
        return id;
    }
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    format!("{}/{}", hostname(), boot.trim())
}

/// MPI_Init / MPI_Init_thread. Returns the thread level provided.
pub fn init(required: ThreadLevel) -> Result<ThreadLevel> {
    let _g = lifecycle();
    match WORLD.load(Ordering::Acquire) {
        WORLD_NONE => {}
        w => {
            let what = if w == WORLD_DONE { "after MPI_Finalize" } else { "twice" };
            return Err(MpiError::new(ErrorClass::Other, format!("MPI_Init: MPI was initialized {what}")));
        }
    }
    boot_once("MPI_Init", required)?;
    WORLD.store(WORLD_ACTIVE, Ordering::Release);
    Ok(required)
}

/// The address this rank's TCP listener binds to and publishes: the one it
/// reaches the process manager from (remote ranks, PMI over TCP), else
/// `OXMPI_TCP_ADDR`, else this host's name, else loopback.
pub(crate) fn tcp_bind_ip(single_host: bool) -> std::net::IpAddr {
    use std::net::{IpAddr, Ipv4Addr, ToSocketAddrs, UdpSocket};
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    if let Some(ip) = std::env::var("OXMPI_TCP_ADDR").ok().and_then(|v| v.parse().ok()) {
        return ip;
    }
    if single_host {
        return loopback;
    }
    if let Ok(pmi) = std::env::var("PMI_PORT") {
        // Connecting a UDP socket sends nothing; it only asks the kernel which
        // local address routes toward the process manager.
        if let Some(addr) = pmi.to_socket_addrs().ok().and_then(|mut a| a.next()) {
            let any: std::net::SocketAddr = if addr.is_ipv4() { "0.0.0.0:0".parse().unwrap() } else { "[::]:0".parse().unwrap() };
            if let Ok(u) = UdpSocket::bind(any) {
                if u.connect(addr).is_ok() {
                    if let Ok(local) = u.local_addr() {
                        if !local.ip().is_unspecified() {
                            return local.ip();
                        }
                    }
                }
            }
        }
    }
    (hostname().as_str(), 0)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.find(|x| x.is_ipv4() && !x.ip().is_loopback()))
        .map(|a| a.ip())
        .unwrap_or(loopback)
}

pub(crate) fn random_hex(bytes: usize) -> Result<String> {
    use std::io::Read;
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| MpiError::new(ErrorClass::Other, format!("MPI_Init: reading /dev/urandom for the job secret: {e}")))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

fn boot(pmi: &mut Option<PmiClient>, rank: u32, size: u32, required: ThreadLevel) -> Result<Engine> {
    // Every OXMPI_<OP>_ALGORITHM names a collective and one of its algorithms.
    crate::coll::select::check_environment().map_err(|e| MpiError::new(e.class, format!("MPI_Init: {}", e.message)))?;
    cma::allow_peer_reads();
    // OXMPI_TRANSPORT=tcp: every peer over TCP, even on this host (tests).
    let force_tcp = std::env::var("OXMPI_TRANSPORT").is_ok_and(|v| v == "tcp");
    let mut my_host = host_identity();
    let pid = std::process::id() as i32;
    let mut pids: Vec<i32> = vec![pid; size as usize];
    // A lone rank has no hierarchy below the job: spare it hwloc's discovery.
    let my_place = if size > 1 { crate::hwtopo::my_package_numa() } else { (None, None) };
    let mut package_numa_of = vec![my_place; size as usize];
    let mut shm: Option<&'static ShmSegment> = None;
    let mut tcp: Option<crate::transport::tcp::TcpTransport> = None;

    if let Some(p) = pmi.as_mut() {
        // The process manager's node map tells hosts apart even where host name
        // and boot id agree (network namespaces, containers on one kernel).
        if let Some(node) = p
            .process_mapping()
            .ok()
            .flatten()
            .and_then(|m| oxmpi_pmi::parse_process_mapping(&m))
            // A mapping shorter than the job repeats (Hydra sends one block,
            // e.g. `(vector,(0,1,1))`, for any number of ranks on one node).
            .and_then(|nodes| (!nodes.is_empty()).then(|| nodes[rank as usize % nodes.len()]))
        {
            my_host = format!("node{node}/{my_host}");
        }
    }
    let mut hosts: Vec<String> = vec![my_host.clone(); size as usize];

    if let Some(p) = pmi.as_mut() {
        // The job secret that TCP connections must prove: the launcher's, or,
        // under a process manager that has none (Hydra), one rank 0 makes.
        let mut secret = p.job_secret().map_err(|e| pmi_err("reading the job secret", e))?;
        if secret.is_none() && rank == 0 {
            let s = random_hex(32)?;
            p.put("oxmpi-secret-r0", &s).map_err(|e| pmi_err("publishing the job secret", e))?;
            secret = Some(s);
        }
        // `HOSTHEX:PID[:PACKAGE:NUMA]`; a value without the place still parses.
        let place = crate::hwtopo::encode(my_place.0, my_place.1);
        p.put(&format!("oxmpi-ep-{rank}"), &format!("{}:{}{place}", hex(&my_host), pid))
            .map_err(|e| pmi_err("publishing this rank's address", e))?;
        p.barrier().map_err(|e| pmi_err("PMI barrier", e))?;
        for r in 0..size {
            if r == rank {
                continue;
            }
            let v = p
                .get_of(r, &format!("oxmpi-ep-{r}"))
                .map_err(|e| pmi_err("reading the address of a peer", e))?
                .ok_or_else(|| pmi_err("reading the address of a peer", format!("rank {r} published none")))?;
            let (h, pid) = v
                .split_once(':')
                .ok_or_else(|| pmi_err("reading the address of a peer", format!("malformed value {v:?}")))?;
            hosts[r as usize] = h
                .as_bytes()
                .chunks(2)
                .map(|c| u8::from_str_radix(std::str::from_utf8(c).unwrap_or("3f"), 16).unwrap_or(b'?') as char)
                .collect();
            let (pid, place) = pid.split_once(':').unwrap_or((pid, ""));
            pids[r as usize] = pid.parse().unwrap_or(0);
            package_numa_of[r as usize] = crate::hwtopo::decode(place);
        }
        let local: Vec<u32> = (0..size).filter(|&r| hosts[r as usize] == my_host).collect();
        let my_local = local.iter().position(|&r| r == rank).unwrap();
        let name = format!("{}{}", oxmpi_pmi::shm_segment_prefix(p.kvs_name()), local[0]);
        let use_shm = local.len() > 1 && !force_tcp;
        let single_host = local.len() == size as usize;
        if size > 1 && (force_tcp || !single_host) {
            if secret.is_none() {
                secret = p.get_of(0, "oxmpi-secret-r0").map_err(|e| pmi_err("reading the job secret", e))?;
            }
            let secret = secret.ok_or_else(|| pmi_err("setting up TCP", "no job secret was published"))?;
            let t = crate::transport::tcp::TcpTransport::new(rank, size, secret.as_bytes(), tcp_bind_ip(single_host))?;
            p.put(&format!("oxmpi-tcp-{rank}"), &t.endpoint()).map_err(|e| pmi_err("publishing the TCP endpoint", e))?;
            tcp = Some(t);
        }
        // Two barriers on every rank, whatever its host holds, so all agree.
        if use_shm && my_local == 0 {
            shm = Some(Box::leak(Box::new(ShmSegment::create(&name, local.len(), 0)?)));
        }
        p.barrier().map_err(|e| pmi_err("PMI barrier", e))?;
        if let Some(t) = tcp.as_mut() {
            for r in (0..size).filter(|&r| r != rank && (force_tcp || hosts[r as usize] != my_host)) {
                let ep = p
                    .get_of(r, &format!("oxmpi-tcp-{r}"))
                    .map_err(|e| pmi_err("reading a peer's TCP endpoint", e))?
                    .ok_or_else(|| pmi_err("reading a peer's TCP endpoint", format!("rank {r} published none")))?;
                t.set_endpoint(r, &ep)?;
            }
        }
        if use_shm && my_local != 0 {
            shm = Some(Box::leak(Box::new(ShmSegment::open(&name, local.len(), my_local)?)));
        }
        p.barrier().map_err(|e| pmi_err("PMI barrier", e))?;
        if use_shm && my_local == 0 {
            ShmSegment::unlink(&name);
        }
    }

    let local: Vec<u32> = (0..size).filter(|&r| hosts[r as usize] == my_host).collect();
    let paths: Vec<(Path, i32)> = (0..size)
        .map(|r| {
            let path = if r == rank {
                Path::SelfLoop
            } else if let (Some(_), Some(l)) = (shm, local.iter().position(|&x| x == r)) {
                Path::Shm { local: l }
            } else if tcp.is_some() {
                Path::Tcp
            } else {
                Path::Unreachable
            };
            (path, pids[r as usize])
        })
        .collect();
    let mut host_index: Vec<&String> = Vec::new();
    let host_of = hosts
        .iter()
        .map(|h| match host_index.iter().position(|x| *x == h) {
            Some(i) => i as u32,
            None => {
                host_index.push(h);
                host_index.len() as u32 - 1
            }
        })
        .collect();

    let bell: &'static Doorbell = match shm {
        Some(s) => s.doorbell(s.my_local()),
        None => Box::leak(Box::new(Doorbell::new())),
    };
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let oversubscribed = local.len() > cpus;
    let env_u32 = |k: &str| std::env::var(k).ok().and_then(|v| v.parse().ok());
    // Oversubscribed, a wait looks at its rings once and sleeps on its
    // doorbell: a rank that yields stays runnable and competes with the
    // ranks it waits for (50 yields a wait made Ialltoallv and Allreduce on
    // 5 ranks on 2 cores 2-7x slower than sleeping at once; the peer's ring
    // wakes the sleeper, no timer).
    let spin = env_u32("OXMPI_SPIN").unwrap_or(if oversubscribed { 4 } else { 20_000 });
    let yields = env_u32("OXMPI_YIELDS").unwrap_or(if oversubscribed { 0 } else { 10 });

    let world_group: Arc<[u32]> = (0..size).collect();
    let appnum = pmi.as_ref().map(|p| p.appnum()).unwrap_or(0);
    let universe_size = pmi.as_ref().map(|p| p.universe_size()).filter(|&u| u > 0).unwrap_or(size as i32);
    let local_of: Vec<Option<u32>> = paths
        .iter()
        .map(|(p, _)| match (p, shm) {
            (Path::Shm { local }, Some(_)) => Some(*local as u32),
            (Path::SelfLoop, Some(s)) => Some(s.my_local() as u32),
            _ => None,
        })
        .collect();
    crate::diag::init(rank, size, required == ThreadLevel::Multiple);
    crate::diag::init_trace(rank);
    Ok(Engine {
        shm_seg: shm,
        local_of,
        oversubscribed,
        has_tcp: AtomicBool::new(tcp.is_some()),
        state: Mutex::new(State::new(rank, paths, shm, tcp)),
        bell,
        rank,
        size,
        world: Comm::from_parts(WORLD_CONTEXT, rank as i32, world_group, None),
        self_comm: Comm::from_parts(SELF_CONTEXT, 0, Arc::from(vec![rank]), None),
        pmi: Mutex::new(pmi.take()),
        thread_level: std::sync::atomic::AtomicI32::new(required as i32),
        main_thread: std::thread::current().id(),
        host_of,
        package_numa_of,
        processor_name: hostname(),
        appnum,
        universe_size,
        waiters: AtomicUsize::new(0),
        spin,
        yields,
        hang_report: std::env::var("OXMPI_HANG_REPORT").ok().and_then(|v| v.parse().ok()).map(Duration::from_secs_f64),
    })
}

/// Waits until one of `fds` is readable (or writable, where asked) or `timeout` passes.
fn poll_readable(fds: &[(std::os::fd::RawFd, bool)], timeout: Duration) {
    let events = |write: bool| if write { libc::POLLIN | libc::POLLOUT } else { libc::POLLIN };
    let mut pfds: Vec<libc::pollfd> = fds.iter().map(|&(fd, write)| libc::pollfd { fd, events: events(write), revents: 0 }).collect();
    // SAFETY: `pfds` is a valid array of pollfd of the length passed.
    unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout.as_millis().max(1) as libc::c_int) };
}

/// Whether any of `fds` is readable (or writable, where asked) now, without waiting.
fn fds_ready(fds: &[(std::os::fd::RawFd, bool)]) -> bool {
    let events = |write: bool| if write { libc::POLLIN | libc::POLLOUT } else { libc::POLLIN };
    let mut pfds: Vec<libc::pollfd> = fds.iter().map(|&(fd, write)| libc::pollfd { fd, events: events(write), revents: 0 }).collect();
    // SAFETY: `pfds` is a valid array of pollfd of the length passed; timeout 0 returns at once.
    unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, 0) > 0 }
}

/// MPI_Finalize: ends the World model; the engine leaves the job now, or, while
/// sessions are open, when the last of them is finalized.
pub fn finalize() -> Result<()> {
    let _g = lifecycle();
    engine()?;
    if WORLD.load(Ordering::Acquire) != WORLD_ACTIVE {
        return Err(MpiError::new(ErrorClass::Other, "MPI_Finalize: MPI_Init was not called, or MPI_Finalize was called already"));
    }
    WORLD.store(WORLD_DONE, Ordering::Release);
    if SESSIONS.load(Ordering::Acquire) > 0 {
        return Ok(());
    }
    shutdown("MPI_Finalize")
}

/// Completes outgoing protocol traffic, then leaves the job (PMI barrier and
/// finalize). Called once, under the lifecycle lock.
fn shutdown(call: &str) -> Result<()> {
    let e = engine()?;
    // No one-sided serving from the progress thread once finalizing starts.
    crate::rma::stop_progress_thread();
    // Shared-memory collective areas of the predefined communicators.
    crate::coll::shm::release(&e.world);
    crate::coll::shm::release(&e.self_comm);
    // Everything we owe peers must be on its way before we stop making progress
    // in the process manager's barrier (a peer may wait on our handshake too).
    e.wait_until(|st| {
        st.drop_credit_packets();
        (!st.outbox_busy() && st.network_flushed()).then_some(())
    });
    crate::diag::finish_trace();
    crate::diag::finalizing(e);
    let mut pmi = e.pmi.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(mut p) = pmi.take() {
        p.barrier().map_err(|err| MpiError::new(ErrorClass::Other, format!("{call}: PMI barrier: {err}")))?;
        e.lock().shutdown_network();
        p.finalize().map_err(|err| MpiError::new(ErrorClass::Other, format!("{call}: {err}")))?;
    }
    DOWN.store(true, Ordering::Release);
    Ok(())
}

/// MPI_Abort: ends the whole job with `code`. Never returns.
pub fn abort(code: i32, why: &str) -> ! {
    let rank = ENGINE.get().map(|e| e.rank).unwrap_or(0);
    eprintln!("oxmpi: rank {rank} called MPI_Abort with error code {code}{}{why}", if why.is_empty() { "" } else { ": " });
    end_job(code, why)
}

/// Ends the whole job with `code` without printing anything (for layers that
/// already reported the error, such as MPI_ERRORS_ARE_FATAL). Never returns.
pub fn end_job(code: i32, why: &str) -> ! {
    if let Some(e) = ENGINE.get() {
        // try_lock: this may run from an error handler while another thread
        // holds the lock; the launcher also ends the job when we just exit.
        if let Ok(mut g) = e.pmi.try_lock() {
            if let Some(p) = g.as_mut() {
                let _ = p.abort(code, why);
            }
        }
    }
    std::process::exit(if code == 0 { 1 } else { code & 0xff })
}

/// MPI_Wtime: seconds on a monotonic clock.
pub fn wtime() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// MPI_Wtick: resolution of [`wtime`].
pub fn wtick() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_getres writes the timespec we own.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9).max(1e-9)
}

/// The MPI standard version implemented (`MPI_Get_version`).
pub const VERSION: (i32, i32) = (5, 0);

pub fn library_version() -> String {
    format!("oxmpi {} (MPI {}.{}, Rust runtime: shared-memory transport, PMI-1)", env!("CARGO_PKG_VERSION"), VERSION.0, VERSION.1)
}

impl Engine {
    pub fn world(&self) -> &Comm {
        &self.world
    }
    pub fn self_comm(&self) -> &Comm {
        &self.self_comm
    }
    pub fn rank(&self) -> u32 {
        self.rank
    }
    pub fn size(&self) -> u32 {
        self.size
    }
    pub fn thread_level(&self) -> ThreadLevel {
        ThreadLevel::ALL.get(self.thread_level.load(Ordering::Acquire) as usize).copied().unwrap_or(ThreadLevel::Single)
    }
    pub fn is_main_thread(&self) -> bool {
        std::thread::current().id() == self.main_thread
    }
    /// The machine's hierarchy as seen from this rank (after MPICH's
    /// `MPID_Topo_cluster_info`): one `(cluster id, rank in cluster)` per level.
    /// Level 0 is the whole job; then, when ranks span several hosts, the host
    /// (cluster id = host index in order of first appearance); then, where
    /// hwloc places every rank of this host, the package and the NUMA node,
    /// each only when it splits this host's ranks further than the level above
    /// (cluster ids unique in the job; see `hwtopo::build_levels`). A
    /// single shared-memory machine with unbound ranks answers one level.
    pub fn cluster_info(&self) -> Vec<ClusterLevel> {
        let places: Vec<crate::hwtopo::Place> = self
            .host_of
            .iter()
            .zip(&self.package_numa_of)
            .map(|(&host, &(package, numa))| crate::hwtopo::Place { host, package, numa })
            .collect();
        crate::hwtopo::build_levels(self.rank as usize, &places)
    }

    /// Where world rank `w` runs (host, and package and NUMA node when known).
    pub(crate) fn place_of(&self, w: usize) -> crate::hwtopo::Place {
        let (package, numa) = self.package_numa_of[w];
        crate::hwtopo::Place { host: self.host_of[w], package, numa }
    }

    /// MPI_Get_hw_resource_info: each hardware resource type
    /// `MPI_COMM_TYPE_HW_GUIDED` accepts, with this process's resource of that
    /// type (host, package or NUMA node index) when it is restricted to one.
    pub fn hw_resource_info(&self) -> Vec<(String, String)> {
        let place = self.place_of(self.rank as usize);
        let mut kv = vec![("mpi_shared_memory".to_string(), place.host.to_string())];
        kv.push(("hwloc://Machine".to_string(), place.host.to_string()));
        if let Some(p) = place.package {
            kv.push(("hwloc://Package".to_string(), p.to_string()));
        }
        if let Some(n) = place.numa {
            kv.push(("hwloc://NUMANode".to_string(), n.to_string()));
        }
        kv
    }

    /// MPI_APPNUM: which command of an MPMD launch this process runs (0 here).
    pub fn appnum(&self) -> i32 {
        self.appnum
    }
    /// MPI_UNIVERSE_SIZE.
    pub fn universe_size(&self) -> i32 {
        self.universe_size
    }
    pub fn processor_name(&self) -> &str {
        &self.processor_name
    }
    /// Host index of each world rank (0 = the host of rank 0).
    pub fn host_of(&self) -> &[u32] {
        &self.host_of
    }

    /// Sends a line the process manager does not answer (a status report of
    /// deadlock detection); `false` if the PMI connection is busy or absent.
    /// With `wait`, waits for a connection another thread uses.
    pub(crate) fn pmi_notify(&self, line: &str, wait: bool) -> bool {
        let g = if wait { Some(self.pmi.lock().unwrap_or_else(|p| p.into_inner())) } else { self.pmi.try_lock().ok() };
        g.is_some_and(|mut g| g.as_mut().is_some_and(|p| p.notify(line).is_ok()))
    }

    /// Host index of peer `w`: a world rank's host, or, for a process of another
    /// job (connect/accept), a host of its own (it shares no memory segment with us).
    pub fn host_index(&self, w: u32) -> u32 {
        self.host_of.get(w as usize).copied().unwrap_or_else(|| u32::MAX - w.saturating_sub(self.size))
    }

    /// Looks `key` up in this job's KVS (the process manager's).
    pub(crate) fn pmi_get(&self, key: &str) -> Result<Option<String>> {
        let mut pmi = self.pmi.lock().unwrap_or_else(|p| p.into_inner());
        match pmi.as_mut() {
            Some(p) => p.get(key).map_err(|e| MpiError::new(ErrorClass::Other, format!("PMI get of {key}: {e}"))),
            None => Ok(None),
        }
    }

    /// Asks the process manager to start `commands` with `preput` in their KVS;
    /// one error code per process asked for.
    pub(crate) fn pmi_spawn(&self, call: &str, commands: &[oxmpi_pmi::SpawnCommand], preput: &[(String, String)]) -> Result<Vec<i32>> {
        let mut pmi = self.pmi.lock().unwrap_or_else(|p| p.into_inner());
        let Some(p) = pmi.as_mut() else {
            return Err(MpiError::new(ErrorClass::UnsupportedOperation, format!("{call}: a process started without mpiexec (a singleton) cannot start processes; run it under mpiexec")));
        };
        match p.spawn(commands, preput) {
            Ok(codes) => Ok(codes),
            Err(oxmpi_pmi::PmiError::Server { msg, .. }) if p.protocol() != oxmpi_pmi::client::PmiProtocol::Pmi1 => {
                Err(MpiError::new(ErrorClass::UnsupportedOperation, format!("{call}: {}", msg.unwrap_or_default())))
            }
            Err(e) => Err(MpiError::new(ErrorClass::Spawn, format!("{call}: the process manager could not start the processes: {e}"))),
        }
    }

    /// The process manager's name service (MPI_Publish_name & co.).
    pub(crate) fn pmi_name(&self, call: &str, op: oxmpi_pmi::NameOp, service: &str, port: &str) -> Result<Option<String>> {
        let mut pmi = self.pmi.lock().unwrap_or_else(|p| p.into_inner());
        let Some(p) = pmi.as_mut() else {
            return Err(MpiError::new(ErrorClass::UnsupportedOperation, format!("{call}: a process started without mpiexec (a singleton) has no name service; run it under mpiexec")));
        };
        let pmi2 = p.protocol() != oxmpi_pmi::client::PmiProtocol::Pmi1;
        p.name_service(op, service, port).map_err(|e| match e {
            oxmpi_pmi::PmiError::Server { msg, .. } if pmi2 => MpiError::new(ErrorClass::UnsupportedOperation, format!("{call}: {}", msg.unwrap_or_default())),
            oxmpi_pmi::PmiError::Server { msg, .. } => {
                let class = if op == oxmpi_pmi::NameOp::Lookup { ErrorClass::Name } else { ErrorClass::Service };
                MpiError::new(class, format!("{call}: {}", msg.unwrap_or_else(|| "the process manager refused".into()).replace('_', " ")))
            }
            other => MpiError::new(ErrorClass::Other, format!("{call}: {other}")),
        })
    }

    /// Gives this process a TCP transport if it has none (a job on one host
    /// connecting to another job), so that processes of other jobs can be added.
    pub(crate) fn ensure_tcp(&self) -> Result<()> {
        let rank = self.rank;
        self.lock().ensure_tcp(|n| {
            let secret = random_hex(32)?;
            crate::transport::tcp::TcpTransport::new(rank, n, secret.as_bytes(), tcp_bind_ip(false))
        })?;
        self.has_tcp.store(true, Ordering::Relaxed);
        Ok(())
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` under the lock (no progress step: the hot path of immediate
    /// calls; progress happens in the wait/test that follows).
    pub(crate) fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut st = self.lock();
        let before = st.completions;
        let v = f(&mut st);
        let woke = st.completions != before;
        drop(st);
        if woke && self.waiters.load(Ordering::SeqCst) > 0 {
            self.bell.ring();
        }
        v
    }

    /// Runs `f` under the lock after one progress step.
    pub(crate) fn with_progress<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut st = self.lock();
        let before = st.completions;
        st.progress();
        let v = f(&mut st);
        let woke = st.completions != before;
        drop(st);
        if woke && self.waiters.load(Ordering::SeqCst) > 0 {
            self.bell.ring();
        }
        serve_one_sided();
        v
    }

    /// Makes progress until `f` returns `Some`: spins briefly, then yields, then
    /// sleeps on the rank's doorbell, so idle ranks leave the CPU to busy ones.
    pub(crate) fn wait_until<T>(&self, f: impl FnMut(&mut State) -> Option<T>) -> T {
        self.wait_until_described(&|| None, f)
    }

    /// [`Engine::wait_until`] for a call that can describe itself should it
    /// block for long (`desc` runs only then; see `crate::diag`).
    pub(crate) fn wait_until_described<T>(&self, desc: &dyn Fn() -> Option<crate::diag::Call>, f: impl FnMut(&mut State) -> Option<T>) -> T {
        self.wait_inner(false, desc, f)
    }

    /// [`Engine::wait_until`] for a wait on many requests already posted
    /// (MPI_Waitall): each progress step takes every packet that lands in a
    /// posted receive, instead of stopping at the first completion (see
    /// [`State::progress_draining`]); a window of 64 messages then costs one
    /// poll, not 64.
    pub(crate) fn wait_until_draining<T>(&self, f: impl FnMut(&mut State) -> Option<T>) -> T {
        self.wait_inner(true, &|| None, f)
    }

    fn wait_inner<T>(&self, drain: bool, desc: &dyn Fn() -> Option<crate::diag::Call>, mut f: impl FnMut(&mut State) -> Option<T>) -> T {
        let mut idle: u32 = 0;
        let mut reported = false;
        let mut sleeping_since: Option<std::time::Instant> = None;
        // Tells the launcher when this wait has been idle for long (slow path
        // only; on return it costs one branch).
        let mut watch = crate::diag::Watch::new();
        // The time-blocked pvar: started once the wait has polled in vain
        // `TIMED_AFTER` times, so waits that end within a few microseconds (the
        // latency-bound fast path) read no clock.
        const TIMED_AFTER: u32 = 64;
        let mut blocked: Option<crate::tools::BlockedTimer> = None;
        let mut spins: u32 = 0;
        // With sockets and shared memory, how long a sleep lasts before the
        // sockets are looked at again.
        const FIRST_TCP_SLICE: Duration = Duration::from_micros(50);
        let mut tcp_slice = FIRST_TCP_SLICE;
        loop {
            let (result, progressed) = self.poll_with(&mut f, drain);
            if let Some(v) = result {
                return v;
            }
            if progressed {
                watch.progressed();
                idle = 0;
                tcp_slice = FIRST_TCP_SLICE;
                continue;
            }
            idle = idle.saturating_add(1);
            // `>=`: the lock-free spin below advances `idle` by several at a time.
            if idle >= TIMED_AFTER && blocked.is_none() {
                blocked = Some(crate::tools::BlockedTimer::start());
            }
            if idle < self.spin {
                // Between full polls (the lock, a progress step, the caller's
                // check: ~300 instructions), look at the rings without the lock
                // and poll as soon as a packet is there: the poll loop's period is
                // what a message that lands mid-loop waits (the latency path).
                // Other work (outboxes, shared copies, schedules) is polled at
                // least every 16th spin.
                let mut k = 0;
                while k < 15 && !self.quick_incoming() {
                    std::hint::spin_loop();
                    k += 1;
                }
                idle = idle.saturating_add(k / 4);
                // Give the core away now and then (about every 100 µs of
                // spinning): when the peer waits for a CPU (this one, or both
                // taken by other programs), a spin that never yields burns
                // the whole time slice (milliseconds) before the peer runs.
                // On an idle core sched_yield returns at once.
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(SPINS_PER_YIELD) {
                    std::thread::yield_now();
                }
                continue;
            }
            if idle < self.spin + self.yields {
                std::thread::yield_now();
                continue;
            }
            // A wait that sleeps is blocked, however few polls it made first (an
            // oversubscribed rank sleeps after one look).
            if blocked.is_none() {
                blocked = Some(crate::tools::BlockedTimer::start());
            }
            // Announce the sleep, then look once more: a peer that publishes after
            // this look sees us in the doorbell's sleepers and wakes us.
            let ticket = self.bell.prepare_sleep();
            self.waiters.fetch_add(1, Ordering::SeqCst);
            self.lock().announce_blocked_pushes();
            let (result, progressed) = self.poll_with(&mut f, drain);
            if result.is_some() || progressed {
                self.waiters.fetch_sub(1, Ordering::SeqCst);
                self.bell.cancel_sleep();
                if let Some(v) = result {
                    return v;
                }
                watch.progressed();
                idle = 0;
                continue;
            }
            // A consumer freeing a cell of a full ring rings us (announced above), but
            // that hint can be missed in a narrow race: poll often while blocked.
            let busy = self.lock().outbox_busy();
            let timeout = if busy { Duration::from_micros(200) } else { Duration::from_millis(20) };
            if !busy {
                watch.idle(self, desc);
            }
            if !reported {
                if let Some(after) = self.hang_report {
                    let started = *sleeping_since.get_or_insert_with(std::time::Instant::now);
                    if started.elapsed() > after {
                        reported = true;
                        eprint!("oxmpi: blocked for {:?}; this rank waits on:\n{}", started.elapsed(), self.lock().describe());
                    }
                }
            }
            if self.has_tcp.load(Ordering::Relaxed) {
                let fds = self.lock().tcp_fds();
                if self.shm_seg.is_some() {
                    // Shared-memory peers ring the doorbell, sockets do not: look
                    // at the sockets without waiting, then sleep on the doorbell
                    // for a slice that grows while nothing comes (50 µs to 1 ms).
                    // Waiting in poll(2) instead kept every shared-memory hand-off
                    // waiting for the poll's timeout (1 ms) once a process had any
                    // socket (after MPI_Comm_connect/accept or spawn).
                    if fds_ready(&fds) {
                        self.bell.cancel_sleep();
                    } else {
                        self.bell.sleep(ticket, tcp_slice.min(timeout));
                        tcp_slice = (tcp_slice * 2).min(Duration::from_millis(1));
                    }
                } else {
                    // Sockets only: wait on them.
                    poll_readable(&fds, timeout.min(Duration::from_millis(1)));
                    self.bell.cancel_sleep();
                }
            } else {
                self.bell.sleep(ticket, timeout);
            }
            self.waiters.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Whether a look without the lock suggests polling now: a packet waits in a
    /// ring into this rank, or there are sockets (which only a poll reads).
    #[inline]
    fn quick_incoming(&self) -> bool {
        match self.shm_seg {
            Some(seg) if !self.has_tcp.load(Ordering::Relaxed) => seg.any_incoming(),
            _ => true,
        }
    }

    /// The doorbell of world rank `world` when it shares this rank's host
    /// segment (itself included); `None` otherwise.
    pub(crate) fn local_bell(&self, world: u32) -> Option<&'static Doorbell> {
        let seg = self.shm_seg?;
        let local = (*self.local_of.get(world as usize)?)?;
        Some(seg.doorbell(local as usize))
    }

    /// Waits until `ready()` (a look at shared memory, no lock) holds, driving
    /// the progress engine now and then: spins briefly (progress every 32 looks),
    /// then yields (progress each time), then sleeps on this rank's doorbell for
    /// at most `max_sleep` (peers ring it when they publish what `ready` looks
    /// for). On an oversubscribed host the spin is short: a collective hands over
    /// between ranks many times, and a spinning rank keeps the one it waits for
    /// off the CPU.
    pub(crate) fn wait_flag(&self, mut ready: impl FnMut() -> bool, max_sleep: Duration) {
        let mut idle: u32 = 0;
        let spin = if self.oversubscribed { self.spin.saturating_mul(8).min(256) } else { self.spin.saturating_mul(8) };
        let yields = self.yields;
        let mut watch = crate::diag::Watch::new();
        loop {
            if ready() {
                return;
            }
            idle = idle.saturating_add(1);
            if idle < spin {
                // As in `wait_inner`: let a peer waiting for this core run.
                if idle.is_multiple_of(32 * SPINS_PER_YIELD) {
                    std::thread::yield_now();
                }
                if idle.is_multiple_of(32) && self.poll(&mut |_| Some(())).1 {
                    idle = 0;
                }
                std::hint::spin_loop();
                continue;
            }
            if idle < spin + yields {
                if self.poll(&mut |_| Some(())).1 {
                    watch.progressed();
                    idle = 0;
                }
                std::thread::yield_now();
                continue;
            }
            let ticket = self.bell.prepare_sleep();
            self.waiters.fetch_add(1, Ordering::SeqCst);
            let progressed = self.poll(&mut |_| Some(())).1;
            if progressed || ready() {
                self.waiters.fetch_sub(1, Ordering::SeqCst);
                self.bell.cancel_sleep();
                watch.progressed();
                idle = 0;
                continue;
            }
            let outbox = self.lock().outbox_busy();
            let busy = outbox || self.has_tcp.load(Ordering::Relaxed);
            if !outbox {
                watch.idle(self, &|| None);
            }
            let timeout = if busy { max_sleep.min(Duration::from_micros(200)) } else { max_sleep };
            self.bell.sleep(ticket, timeout);
            self.waiters.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// One progress step (then one-sided serving): whether it moved anything. For
    /// the one-sided progress thread, when the program is not in MPI.
    pub(crate) fn progress_step(&self) -> bool {
        self.poll(&mut |_| Some(())).1
    }

    /// One progress step (a call that waits on something outside the engine,
    /// such as a port, keeps the engine going with it).
    pub(crate) fn progress_once(&self) {
        self.poll(&mut |_| Some(()));
    }

    /// One progress step and one look at the condition, under the lock.
    fn poll<T>(&self, f: &mut impl FnMut(&mut State) -> Option<T>) -> (Option<T>, bool) {
        self.poll_with(f, false)
    }

    fn poll_with<T>(&self, f: &mut impl FnMut(&mut State) -> Option<T>, drain: bool) -> (Option<T>, bool) {
        let mut st = self.lock();
        let before = st.completions;
        let progressed = if drain { st.progress_draining() } else { st.progress() };
        let r = f(&mut st);
        let woke = st.completions != before;
        drop(st);
        // Another thread of this rank may sleep on our doorbell for a request we
        // just completed (MPI_THREAD_MULTIPLE).
        if woke && self.waiters.load(Ordering::SeqCst) > 0 {
            self.bell.ring();
        }
        serve_one_sided();
        (r, progressed)
    }
}

/// One-sided requests from other hosts are applied by the target's progress:
/// after each progress step, outside the engine lock (see `rma::am`).
#[inline]
fn serve_one_sided() {
    if crate::rma::AM_ACTIVE.load(Ordering::Acquire) {
        crate::rma::serve_all();
    }
}
