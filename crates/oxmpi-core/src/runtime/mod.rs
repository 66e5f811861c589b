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
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use oxmpi_pmi::client::PmiClient;

use crate::comm::Comm;
use crate::engine::State;
use crate::error::{ErrorClass, MpiError, Result};
use crate::transport::doorbell::Doorbell;
use crate::transport::shm::ShmSegment;

mod boot;
mod wait;

use boot::boot;
pub(crate) use boot::{random_hex, tcp_bind_ip};

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
    pub const ALL: &'static [ThreadLevel] = &[
        ThreadLevel::Single,
        ThreadLevel::Funneled,
        ThreadLevel::Serialized,
        ThreadLevel::Multiple,
    ];

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

/// On an oversubscribed host, a test-like call gives its core away once per
/// this many consecutive calls that found nothing (see
/// [`Engine::with_progress_test`]).
const IDLE_TESTS_PER_YIELD: u32 = 8;

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
    /// Consecutive test-like calls (MPI_Test, MPI_Iprobe, MPI_Parrived...)
    /// that found nothing, for [`Engine::with_progress_test`].
    idle_tests: std::sync::atomic::AtomicU32,
    /// Whether blocking waits yield before they sleep (closed a while after a
    /// yield that gave the core to another program).
    yield_gate: wait::YieldGate,
    /// What the last [`Engine::peer_shares_cpu`] found: a rank of ours on this
    /// processor. Then the next waits look for it at their first miss.
    shares_cpu: std::sync::atomic::AtomicBool,
}

static ENGINE: OnceLock<Engine> = OnceLock::new();

/// The TCP flusher's hook: writes packets held back for coalescing when the program
/// made no MPI call for a while (see [`crate::transport::tcp::flush`]). Only tries the
/// engine's lock (false: busy, the flusher tries again later), so a fork waiting for
/// this hook to return cannot wait for a lock the forking thread holds.
fn flush_held_tcp() -> bool {
    let Some(e) = ENGINE.get() else {
        return true;
    };
    let mut st = match e.state.try_lock() {
        Ok(st) => st,
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return false,
    };
    st.flush_held_tcp();
    true
}
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
///
/// Inlined: every call of the safe Rust API asks it once, from the `oxmpi`
/// crate, where a plain function of this crate stays a call; the errors are
/// built out of line.
#[inline]
pub fn engine() -> Result<&'static Engine> {
    match ENGINE.get() {
        Some(e) if !DOWN.load(Ordering::Acquire) => Ok(e),
        _ => Err(engine_missing()),
    }
}

/// The error of [`engine`] when there is no engine to use.
#[cold]
#[inline(never)]
fn engine_missing() -> MpiError {
    if DOWN.load(Ordering::Acquire) {
        MpiError::new(ErrorClass::Other, "MPI call made after MPI_Finalize")
    } else {
        MpiError::new(
            ErrorClass::Other,
            "MPI call made before MPI_Init (or MPI_Session_init)",
        )
    }
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

/// The engine while the World model is active (between MPI_Init and
/// MPI_Finalize), `None` otherwise: [`engine`] and [`world_active`] in a few
/// inlined loads, for the C layer's early exits, which leave every error to
/// the general path.
#[inline]
pub fn world_engine() -> Option<&'static Engine> {
    if DOWN.load(Ordering::Acquire) || !world_active() {
        return None;
    }
    ENGINE.get()
}

/// Whether the World model is active (between MPI_Init and MPI_Finalize), so
/// that MPI_COMM_WORLD and MPI_COMM_SELF may be used.
#[inline]
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
    let mut pmi =
        PmiClient::from_env().map_err(|e| pmi_err("cannot reach the process manager", e))?;
    let (rank, size) = match &pmi {
        Some(p) => (p.rank(), p.size()),
        None => (0, 1),
    };
    match boot(&mut pmi, rank, size, required) {
        Ok(engine) => {
            let _ = ENGINE.set(engine);
            crate::transport::tcp::flush::set_hook(flush_held_tcp);
            // A spawned job joins its parents before MPI_Init (or the first
            // MPI_Session_init) returns.
            crate::comm::dynamic::connect_to_parent()?;
            let e = ENGINE.get().expect("just set");
            // Slow yields while the job started were our own ranks starting.
            e.reopen_yield_gate();
            Ok(e)
        }
        Err(e) => {
            if let Some(p) = pmi.as_mut() {
                // Peers are blocked in PMI barriers; the job cannot go on.
                let _ = p.abort(1, &e.message);
            }
            Err(MpiError::new(
                e.class,
                e.message.replace("MPI_Init:", &format!("{call}:")),
            ))
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
                crate::transport::os::at_exit(shutdown_at_exit);
            });
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The process sets every session offers first (MPI-4 `MPI_Session_get_nth_pset`).
pub const PSET_NAMES: [&str; 2] = ["mpi://WORLD", "mpi://SELF"];

/// The prefix of the process set of each application context of an MPMD
/// launch (`mpix://APP/0`, `mpix://APP/1`, ...: the ranks whose `MPI_APPNUM`
/// is the number, in rank order).
pub const APP_PSET_PREFIX: &str = "mpix://APP/";

/// The process sets after the built-in ones, asked of the process manager
/// once: one per application context when it says which rank runs which
/// (our `mpiexec`, a PMIx server), then the PMIx server's own (PRRTE's
/// `--pset`) with members in this job.
static MORE_PSETS: OnceLock<Vec<(String, Vec<u32>)>> = OnceLock::new();

fn more_psets(call: &str) -> Result<&'static [(String, Vec<u32>)]> {
    if let Some(v) = MORE_PSETS.get() {
        return Ok(v);
    }
    let e = engine()?;
    let mut found = Vec::new();
    {
        let mut pmi = e.pmi.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = pmi.as_mut() {
            let failed = |e: oxmpi_pmi::PmiError| {
                MpiError::new(
                    ErrorClass::Other,
                    format!("{call}: asking the process manager for process sets: {e}"),
                )
            };
            if let Some(appnums) = p.rank_appnums().map_err(failed)? {
                if appnums.len() == e.size() as usize {
                    let mut apps: Vec<u32> = appnums.clone();
                    apps.sort_unstable();
                    apps.dedup();
                    for a in apps {
                        let members = (0..e.size())
                            .filter(|&r| appnums[r as usize] == a)
                            .collect();
                        found.push((format!("{APP_PSET_PREFIX}{a}"), members));
                    }
                }
            }
            for (name, members) in p.server_psets().map_err(failed)? {
                // A name of ours (or the standard's) keeps its meaning.
                let reserved = name.to_ascii_lowercase().starts_with("mpi://")
                    || found.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name));
                if !reserved && members.iter().all(|&r| r < e.size()) {
                    found.push((name, members));
                }
            }
        }
    }
    Ok(MORE_PSETS.get_or_init(|| found))
}

/// The names of the process sets, built-in ones first.
pub fn pset_names(call: &str) -> Result<Vec<String>> {
    let mut names: Vec<String> = PSET_NAMES.iter().map(|s| s.to_string()).collect();
    names.extend(more_psets(call)?.iter().map(|(n, _)| n.clone()));
    Ok(names)
}

/// The members of process set `name` (compared without regard to case), as
/// world ranks in rank order; `None` for a name that is not a process set.
pub fn pset_members(name: &str) -> Result<Option<Vec<u32>>> {
    let e = engine()?;
    Ok(if name.eq_ignore_ascii_case(PSET_NAMES[0]) {
        Some((0..e.size()).collect())
    } else if name.eq_ignore_ascii_case(PSET_NAMES[1]) {
        Some(vec![e.rank()])
    } else {
        more_psets("MPI_Group_from_session_pset")?
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, m)| m.clone())
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

/// MPI_Init / MPI_Init_thread. Returns the thread level provided.
pub fn init(required: ThreadLevel) -> Result<ThreadLevel> {
    let _g = lifecycle();
    match WORLD.load(Ordering::Acquire) {
        WORLD_NONE => {}
        w => {
            let what = if w == WORLD_DONE {
                "after MPI_Finalize"
            } else {
                "twice"
            };
            return Err(MpiError::new(
                ErrorClass::Other,
                format!("MPI_Init: MPI was initialized {what}"),
            ));
        }
    }
    boot_once("MPI_Init", required)?;
    WORLD.store(WORLD_ACTIVE, Ordering::Release);
    Ok(required)
}

/// MPI_Finalize: ends the World model; the engine leaves the job now, or, while
/// sessions are open, when the last of them is finalized.
pub fn finalize() -> Result<()> {
    let _g = lifecycle();
    engine()?;
    if WORLD.load(Ordering::Acquire) != WORLD_ACTIVE {
        return Err(MpiError::new(
            ErrorClass::Other,
            "MPI_Finalize: MPI_Init was not called, or MPI_Finalize was called already",
        ));
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
        p.barrier().map_err(|err| {
            MpiError::new(ErrorClass::Other, format!("{call}: PMI barrier: {err}"))
        })?;
        e.lock().shutdown_network();
        p.finalize()
            .map_err(|err| MpiError::new(ErrorClass::Other, format!("{call}: {err}")))?;
    }
    DOWN.store(true, Ordering::Release);
    Ok(())
}

/// MPI_Abort: ends the whole job with `code`. Never returns.
pub fn abort(code: i32, why: &str) -> ! {
    let rank = ENGINE.get().map(|e| e.rank).unwrap_or(0);
    eprintln!(
        "oxmpi: rank {rank} called MPI_Abort with error code {code}{}{why}",
        if why.is_empty() { "" } else { ": " }
    );
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
    crate::transport::os::monotonic_seconds()
}

/// MPI_Wtick: resolution of [`wtime`].
pub fn wtick() -> f64 {
    crate::transport::os::monotonic_resolution()
}

/// The MPI standard version implemented (`MPI_Get_version`).
pub const VERSION: (i32, i32) = (5, 0);

pub fn library_version() -> String {
    format!(
        "oxmpi {} (MPI {}.{}, Rust runtime: shared-memory transport, PMI-1)",
        env!("CARGO_PKG_VERSION"),
        VERSION.0,
        VERSION.1
    )
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
        ThreadLevel::ALL
            .get(self.thread_level.load(Ordering::Acquire) as usize)
            .copied()
            .unwrap_or(ThreadLevel::Single)
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
            .map(|(&host, &(package, numa))| crate::hwtopo::Place {
                host,
                package,
                numa,
            })
            .collect();
        crate::hwtopo::build_levels(self.rank as usize, &places)
    }

    /// Where world rank `w` runs (host, and package and NUMA node when known).
    pub(crate) fn place_of(&self, w: usize) -> crate::hwtopo::Place {
        let (package, numa) = self.package_numa_of[w];
        crate::hwtopo::Place {
            host: self.host_of[w],
            package,
            numa,
        }
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
        let g = if wait {
            Some(self.pmi.lock().unwrap_or_else(|p| p.into_inner()))
        } else {
            self.pmi.try_lock().ok()
        };
        g.is_some_and(|mut g| g.as_mut().is_some_and(|p| p.notify(line).is_ok()))
    }

    /// Host index of peer `w`: a world rank's host, or, for a process of another
    /// job (connect/accept), a host of its own (it shares no memory segment with us).
    pub fn host_index(&self, w: u32) -> u32 {
        self.host_of
            .get(w as usize)
            .copied()
            .unwrap_or_else(|| u32::MAX - w.saturating_sub(self.size))
    }

    /// Looks `key` up in this job's KVS (the process manager's).
    pub(crate) fn pmi_get(&self, key: &str) -> Result<Option<String>> {
        let mut pmi = self.pmi.lock().unwrap_or_else(|p| p.into_inner());
        match pmi.as_mut() {
            Some(p) => p
                .get(key)
                .map_err(|e| MpiError::new(ErrorClass::Other, format!("PMI get of {key}: {e}"))),
            None => Ok(None),
        }
    }

    /// Asks the process manager to start `commands` with `preput` in their KVS;
    /// one error code per process asked for.
    pub(crate) fn pmi_spawn(
        &self,
        call: &str,
        commands: &[oxmpi_pmi::SpawnCommand],
        preput: &[(String, String)],
    ) -> Result<Vec<i32>> {
        let mut pmi = self.pmi.lock().unwrap_or_else(|p| p.into_inner());
        let Some(p) = pmi.as_mut() else {
            return Err(MpiError::new(ErrorClass::UnsupportedOperation, format!("{call}: a process started without mpiexec (a singleton) cannot start processes; run it under mpiexec")));
        };
        match p.spawn(commands, preput) {
            Ok(codes) => Ok(codes),
            // The PMIx server does not offer spawn (PMIX_ERR_NOT_SUPPORTED).
            Err(oxmpi_pmi::PmiError::Server { rc: -47, msg, cmd })
                if p.protocol() == oxmpi_pmi::client::PmiProtocol::Pmix =>
            {
                Err(MpiError::new(
                    ErrorClass::UnsupportedOperation,
                    format!(
                        "{call}: the PMIx server does not start processes ({cmd}: {})",
                        msg.unwrap_or_default()
                    ),
                ))
            }
            Err(oxmpi_pmi::PmiError::Server { msg, .. })
                if p.protocol() == oxmpi_pmi::client::PmiProtocol::Pmi2 =>
            {
                Err(MpiError::new(
                    ErrorClass::UnsupportedOperation,
                    format!("{call}: {}", msg.unwrap_or_default()),
                ))
            }
            Err(e) => Err(MpiError::new(
                ErrorClass::Spawn,
                format!("{call}: the process manager could not start the processes: {e}"),
            )),
        }
    }

    /// The process manager's name service (MPI_Publish_name & co.).
    pub(crate) fn pmi_name(
        &self,
        call: &str,
        op: oxmpi_pmi::NameOp,
        service: &str,
        port: &str,
    ) -> Result<Option<String>> {
        let mut pmi = self.pmi.lock().unwrap_or_else(|p| p.into_inner());
        let Some(p) = pmi.as_mut() else {
            return Err(MpiError::new(ErrorClass::UnsupportedOperation, format!("{call}: a process started without mpiexec (a singleton) has no name service; run it under mpiexec")));
        };
        let protocol = p.protocol();
        p.name_service(op, service, port).map_err(|e| match e {
            // PMI-2 has none; a PMIx server may not offer one (PMIX_ERR_NOT_SUPPORTED).
            oxmpi_pmi::PmiError::Server { msg, rc, .. }
                if protocol == oxmpi_pmi::client::PmiProtocol::Pmi2
                    || (protocol == oxmpi_pmi::client::PmiProtocol::Pmix && rc == -47) =>
            {
                MpiError::new(
                    ErrorClass::UnsupportedOperation,
                    format!("{call}: {}", msg.unwrap_or_default()),
                )
            }
            oxmpi_pmi::PmiError::Server { msg, .. } => {
                let class = if op == oxmpi_pmi::NameOp::Lookup {
                    ErrorClass::Name
                } else {
                    ErrorClass::Service
                };
                let msg = msg.unwrap_or_else(|| "the process manager refused".into());
                // PMI-1 servers answer with words_like_these; PMIx messages name PMIx_ calls.
                let msg = if protocol == oxmpi_pmi::client::PmiProtocol::Pmix {
                    msg
                } else {
                    msg.replace('_', " ")
                };
                MpiError::new(class, format!("{call}: {msg}"))
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
}
