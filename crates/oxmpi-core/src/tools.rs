//! The MPI tool information interface (MPI_T) of oxmpi: the registry of
//! control variables (cvars), performance variables (pvars), categories and
//! enumerations, and the engine's counters behind the pvars.
//!
//! The registry is fixed when first used (a `OnceLock`), usable before
//! `MPI_Init` and after `MPI_Finalize`; indices never change, so
//! `MPI_T_category_changed` always reports the same number.
//!
//! Control variables are oxmpi's real settings, named after the environment
//! variables that set them at start-up (`OXMPI_EAGER_LIMIT`,
//! `OXMPI_<COLL>_ALGORITHM`, ...). Those that can change while the job runs
//! are writable: the eager limit (scope LOCAL: only the sender decides the
//! protocol) and the collective algorithm selections (scope ALL_EQ: every rank
//! must choose the same algorithm, as with the environment variables). The
//! others are read once at `MPI_Init` and are read-only.
//!
//! Performance variables read counters the engine keeps under its own lock
//! ([`Stats`], plain integers: counting costs an add on paths that already
//! hold the engine), queue lengths of the matching engine, the time blocking
//! waits spend blocked (timed only once a wait has polled in vain 64 times, so
//! short waits read no clock), and,
//! per communicator, the collectives called on it. A [`PvarHandle`] turns a
//! raw counter into the MPI_T view: stopped handles do not count, `reset`
//! zeroes the handle's own view, never the counter other handles see.
//!
//! oxmpi defines no MPI_T events: `MPI_T_event_get_num` answers 0, which the
//! standard allows. One event source exists (the monotonic clock), as
//! `MPI_T_source_*` ask for.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use crate::comm::Comm;

// ----- the engine's counters --------------------------------------------------------

/// Where a message went or came from, as the pvars split traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Via {
    SelfLoop = 0,
    Shm = 1,
    Tcp = 2,
}

/// Counters kept by the engine's `State` (under the engine lock: plain adds).
#[derive(Debug, Default, Clone)]
pub(crate) struct Stats {
    pub msgs_sent: [u64; 3],
    pub bytes_sent: [u64; 3],
    pub msgs_recvd: [u64; 3],
    pub bytes_recvd: [u64; 3],
    pub rendezvous: u64,
    pub unexpected: u64,
    pub unexpected_hwm: u64,
    pub posted_hwm: u64,
}

impl Stats {
    #[inline]
    pub(crate) fn sent(&mut self, via: Via, bytes: usize) {
        self.msgs_sent[via as usize] += 1;
        self.bytes_sent[via as usize] += bytes as u64;
    }

    #[inline]
    pub(crate) fn received(&mut self, via: Via, bytes: usize) {
        self.msgs_recvd[via as usize] += 1;
        self.bytes_recvd[via as usize] += bytes as u64;
    }

    #[inline]
    pub(crate) fn unexpected_queued(&mut self, len: usize) {
        self.unexpected += 1;
        self.unexpected_hwm = self.unexpected_hwm.max(len as u64);
    }

    #[inline]
    pub(crate) fn posted_queued(&mut self, len: usize) {
        self.posted_hwm = self.posted_hwm.max(len as u64);
    }
}

/// Nanoseconds blocking waits spent blocked, and how many waits blocked.
static BLOCKED_NS: AtomicU64 = AtomicU64::new(0);
static BLOCKED_WAITS: AtomicU64 = AtomicU64::new(0);

/// Lives on a blocking wait's stack once it has polled in vain for a while:
/// adds the time until the wait returns to the time-blocked pvar.
pub(crate) struct BlockedTimer(Instant);

impl BlockedTimer {
    #[cold]
    pub(crate) fn start() -> BlockedTimer {
        BlockedTimer(Instant::now())
    }
}

impl Drop for BlockedTimer {
    fn drop(&mut self) {
        BLOCKED_NS.fetch_add(self.0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        BLOCKED_WAITS.fetch_add(1, Ordering::Relaxed);
    }
}

// ----- settings that MPI_T may change -----------------------------------------------

/// The eager limit set through MPI_T before `MPI_Init` (-1: none).
static EAGER_OVERRIDE: AtomicI64 = AtomicI64::new(-1);

const DEFAULT_EAGER_LIMIT: usize = 64 * 1024;

/// The eager limit the engine starts with: MPI_T's, else `OXMPI_EAGER_LIMIT`, else 64 KiB.
pub(crate) fn initial_eager_limit() -> usize {
    let o = EAGER_OVERRIDE.load(Ordering::Relaxed);
    if o >= 0 {
        return o as usize;
    }
    std::env::var("OXMPI_EAGER_LIMIT").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_EAGER_LIMIT)
}

/// Whether any collective algorithm was chosen through MPI_T (checked with one
/// relaxed load per collective before looking at [`ALGORITHM_OVERRIDES`]).
pub(crate) static ANY_ALGORITHM_OVERRIDE: AtomicBool = AtomicBool::new(false);
/// Per operation of [`crate::coll::FORCEABLE`]: `Some(None)` = "auto" chosen
/// through MPI_T, `Some(Some(name))` = an algorithm chosen through MPI_T.
pub(crate) static ALGORITHM_OVERRIDES: Mutex<Vec<Option<Option<&'static str>>>> = Mutex::new(Vec::new());

/// The algorithm MPI_T chose for collective `op`, if it chose one:
/// `Some(None)` means "auto".
pub(crate) fn algorithm_override(op: &str) -> Option<Option<&'static str>> {
    if !ANY_ALGORITHM_OVERRIDE.load(Ordering::Relaxed) {
        return None;
    }
    let i = crate::coll::FORCEABLE.iter().position(|&k| k == op)?;
    ALGORITHM_OVERRIDES.lock().unwrap_or_else(|p| p.into_inner()).get(i).copied().flatten()
}

// ----- the registry -----------------------------------------------------------------

/// The C datatype of a variable's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarType {
    /// `MPI_INT` (also the values of enumerations).
    Int,
    /// `MPI_UNSIGNED_LONG_LONG`.
    UnsignedLongLong,
    /// `MPI_DOUBLE`.
    Double,
    /// `MPI_CHAR`: a null-terminated string of up to `count` bytes.
    Char,
}

/// The MPI_T verbosity levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verbosity {
    UserBasic,
    UserDetail,
    UserAll,
    TunerBasic,
    TunerDetail,
    TunerAll,
    MpidevBasic,
    MpidevDetail,
    MpidevAll,
}

/// What a variable is bound to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bind {
    NoObject,
    Comm,
}

/// The scope of a control variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Constant,
    Readonly,
    Local,
    Group,
    GroupEq,
    All,
    AllEq,
}

/// The class of a performance variable (the ones oxmpi uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PvarClass {
    State,
    Level,
    Size,
    Percentage,
    HighWatermark,
    LowWatermark,
    Counter,
    Aggregate,
    Timer,
    Generic,
}

/// An enumeration: its name and its items' values and names.
#[derive(Clone, Debug)]
pub struct EnumInfo {
    pub name: String,
    pub items: Vec<(i32, String)>,
}

/// A control variable's description.
#[derive(Clone, Debug)]
pub struct CvarInfo {
    pub name: String,
    pub desc: String,
    pub verbosity: Verbosity,
    pub datatype: VarType,
    /// Index into [`enums`] when the value is one of an enumeration's.
    pub enumtype: Option<usize>,
    pub bind: Bind,
    pub scope: Scope,
    /// Elements of `datatype` a value has (bytes of the buffer for strings).
    pub count: usize,
    setting: Setting,
}

/// A performance variable's description.
#[derive(Clone, Debug)]
pub struct PvarInfo {
    pub name: String,
    pub desc: String,
    pub verbosity: Verbosity,
    pub class: PvarClass,
    pub datatype: VarType,
    pub enumtype: Option<usize>,
    pub bind: Bind,
    pub readonly: bool,
    pub continuous: bool,
    pub atomic: bool,
    source: Source,
}

/// A category: the variables and subcategories it holds (indices).
#[derive(Clone, Debug, Default)]
pub struct CategoryInfo {
    pub name: String,
    pub desc: String,
    pub cvars: Vec<usize>,
    pub pvars: Vec<usize>,
    pub categories: Vec<usize>,
}

/// Where a control variable's value lives.
#[derive(Clone, Copy, Debug)]
enum Setting {
    EagerLimit,
    /// Index into `coll::FORCEABLE`, enumeration index.
    Algorithm(usize),
    /// A 0/1 switch read from the environment (`true`: on unless unset, "" or "0").
    EnvFlag(&'static str, FlagRule),
    /// A number read from the environment at start-up (default if unset).
    EnvNumber(&'static str, f64),
    HangAfter,
    Spin,
    Yields,
    Transport,
}

#[derive(Clone, Copy, Debug)]
enum FlagRule {
    /// On when set to anything but "" and "0".
    SetNonZero,
    /// On only when set to exactly "1".
    One,
    /// On when unset; off when set to "0".
    OnUnlessZero,
    /// On when set at all.
    Set,
}

/// Where a performance variable's value comes from.
#[derive(Clone, Copy, Debug)]
enum Source {
    MsgsSent(Via),
    BytesSent(Via),
    MsgsRecvd(Via),
    BytesRecvd(Via),
    Rendezvous,
    Unexpected,
    UnexpectedLen,
    UnexpectedHwm,
    PostedLen,
    PostedHwm,
    BlockedTime,
    BlockedWaits,
    CollBlocking,
    CollNonblocking,
}

/// The whole registry.
pub struct Registry {
    pub cvars: Vec<CvarInfo>,
    pub pvars: Vec<PvarInfo>,
    pub categories: Vec<CategoryInfo>,
    pub enums: Vec<EnumInfo>,
}

static REGISTRY: OnceLock<Registry> = OnceLock::new();

/// The registry (built on first use).
pub fn registry() -> &'static Registry {
    REGISTRY.get_or_init(build)
}

/// The algorithms each collective of `coll::FORCEABLE` can be forced to.
fn algorithm_choices(op: &str) -> Vec<&'static str> {
    crate::coll::algorithm_choices(op)
}

fn build() -> Registry {
    use Scope::*;
    use Verbosity::*;
    let mut enums = vec![EnumInfo { name: "oxmpi_bool".into(), items: vec![(0, "off".into()), (1, "on".into())] }];
    let mut cvars = Vec::new();
    let mut cat_p2p = CategoryInfo {
        name: "oxmpi_p2p".into(),
        desc: "Point-to-point messages: protocol settings and traffic by transport (self, shared memory, TCP)".into(),
        ..Default::default()
    };
    let mut cat_coll = CategoryInfo {
        name: "oxmpi_coll".into(),
        desc: "Collective operations: algorithm selections and collectives started per communicator".into(),
        ..Default::default()
    };
    let mut cat_diag = CategoryInfo {
        name: "oxmpi_diag".into(),
        desc: "Diagnosis: deadlock detection, checking mode, type signature checks".into(),
        ..Default::default()
    };
    let mut cat_progress = CategoryInfo {
        name: "oxmpi_progress".into(),
        desc: "Blocking waits: how they spin, yield and sleep, and the time they spend blocked".into(),
        ..Default::default()
    };
    let mut cat_transport = CategoryInfo {
        name: "oxmpi_transport".into(),
        desc: "Transports: the choice between shared memory and TCP and the single-copy paths".into(),
        ..Default::default()
    };
    let mut cvar = |cat: &mut CategoryInfo, name: &str, desc: &str, verbosity, datatype, enumtype, scope, count, setting| {
        cat.cvars.push(cvars.len());
        cvars.push(CvarInfo {
            name: name.into(),
            desc: desc.into(),
            verbosity,
            datatype,
            enumtype,
            bind: Bind::NoObject,
            scope,
            count,
            setting,
        });
    };
    cvar(
        &mut cat_p2p,
        "OXMPI_EAGER_LIMIT",
        "Largest message (bytes) sent eagerly, data with the header; larger ones use rendezvous. Writable at run time (this process's sends)",
        TunerBasic,
        VarType::Int,
        None,
        Local,
        1,
        Setting::EagerLimit,
    );
    for (i, op) in crate::coll::FORCEABLE.iter().enumerate() {
        let e = enums.len();
        let mut items = vec![(0, "auto".to_string())];
        items.extend(algorithm_choices(op).iter().enumerate().map(|(k, a)| (k as i32 + 1, a.to_string())));
        enums.push(EnumInfo { name: format!("oxmpi_{op}_algorithms"), items });
        cvar(
            &mut cat_coll,
            &format!("OXMPI_{}_ALGORITHM", op.to_ascii_uppercase()),
            &format!("Algorithm of MPI_{} and its nonblocking and persistent forms (0 = auto: chosen by message size and communicator). Writable at run time; every process must choose the same", coll_call_name(op)),
            TunerDetail,
            VarType::Int,
            Some(e),
            AllEq,
            1,
            Setting::Algorithm(i),
        );
    }
    cvar(
        &mut cat_diag,
        "OXMPI_HANG_AFTER",
        "Seconds a blocking wait stays idle before this rank tells mpiexec's deadlock detection what it waits for (set by mpiexec --hang-after)",
        UserDetail,
        VarType::Double,
        None,
        Readonly,
        1,
        Setting::HangAfter,
    );
    cvar(
        &mut cat_diag,
        "OXMPI_HANG_REPORT",
        "Seconds after which a blocked call prints what it waits for itself (0: never)",
        UserDetail,
        VarType::Double,
        None,
        Readonly,
        1,
        Setting::EnvNumber("OXMPI_HANG_REPORT", 0.0),
    );
    cvar(
        &mut cat_diag,
        "OXMPI_CHECK",
        "Checking mode (mpiexec --check): collectives compare their arguments across processes",
        UserBasic,
        VarType::Int,
        Some(0),
        Readonly,
        1,
        Setting::EnvFlag("OXMPI_CHECK", FlagRule::SetNonZero),
    );
    cvar(
        &mut cat_diag,
        "OXMPI_SYNC_COLLECTIVES",
        "Every collective synchronizes (exposes deadlocks that depend on buffering)",
        UserDetail,
        VarType::Int,
        Some(0),
        Readonly,
        1,
        Setting::EnvFlag("OXMPI_SYNC_COLLECTIVES", FlagRule::SetNonZero),
    );
    cvar(
        &mut cat_diag,
        "OXMPI_CHECK_SIGNATURES",
        "Typed messages carry their primitive type; a receive expecting another fails with MPI_ERR_TYPE",
        UserDetail,
        VarType::Int,
        Some(0),
        Readonly,
        1,
        Setting::EnvFlag("OXMPI_CHECK_SIGNATURES", FlagRule::One),
    );
    cvar(
        &mut cat_progress,
        "OXMPI_SPIN",
        "Polls a blocking wait spins through before it yields the processor",
        TunerDetail,
        VarType::Int,
        None,
        Readonly,
        1,
        Setting::Spin,
    );
    cvar(
        &mut cat_progress,
        "OXMPI_YIELDS",
        "Yields a blocking wait makes before it sleeps",
        TunerDetail,
        VarType::Int,
        None,
        Readonly,
        1,
        Setting::Yields,
    );
    cvar(
        &mut cat_transport,
        "OXMPI_TRANSPORT",
        "Transport between processes: \"auto\" (shared memory on a host, TCP between hosts) or \"tcp\" (TCP everywhere)",
        TunerBasic,
        VarType::Char,
        None,
        Readonly,
        TRANSPORT_LEN,
        Setting::Transport,
    );
    cvar(
        &mut cat_transport,
        "OXMPI_NO_CMA",
        "Cross-memory attach (process_vm_readv) is off: rendezvous data streams through the rings",
        TunerDetail,
        VarType::Int,
        Some(0),
        Readonly,
        1,
        Setting::EnvFlag("OXMPI_NO_CMA", FlagRule::Set),
    );
    cvar(
        &mut cat_transport,
        "OXMPI_SHARED_COPY",
        "Sender and receiver copy large messages on one host together",
        TunerDetail,
        VarType::Int,
        Some(0),
        Readonly,
        1,
        Setting::EnvFlag("OXMPI_SHARED_COPY", FlagRule::OnUnlessZero),
    );

    let mut pvars = Vec::new();
    let mut pvar = |cat: &mut CategoryInfo, name: String, desc: String, class, datatype, bind, readonly: bool, continuous: bool, source| {
        cat.pvars.push(pvars.len());
        pvars.push(PvarInfo {
            name,
            desc,
            verbosity: if matches!(source, Source::BlockedWaits | Source::PostedHwm) { TunerDetail } else { UserBasic },
            class,
            datatype,
            enumtype: None,
            bind,
            readonly,
            continuous,
            atomic: !readonly,
            source,
        });
    };
    let u64t = VarType::UnsignedLongLong;
    for (via, name, what) in [
        (Via::SelfLoop, "self", "to or from this process itself"),
        (Via::Shm, "shm", "through shared memory (processes on this host)"),
        (Via::Tcp, "tcp", "through TCP (processes on other hosts)"),
    ] {
        let counter = PvarClass::Counter;
        pvar(&mut cat_p2p, format!("oxmpi_msgs_sent_{name}"), format!("Messages sent {what}, including the messages of collectives"), counter, u64t, Bind::NoObject, false, false, Source::MsgsSent(via));
        pvar(&mut cat_p2p, format!("oxmpi_bytes_sent_{name}"), format!("Bytes of message data sent {what}"), counter, u64t, Bind::NoObject, false, false, Source::BytesSent(via));
        pvar(&mut cat_p2p, format!("oxmpi_msgs_received_{name}"), format!("Messages that arrived {what}"), counter, u64t, Bind::NoObject, false, false, Source::MsgsRecvd(via));
        pvar(&mut cat_p2p, format!("oxmpi_bytes_received_{name}"), format!("Bytes of message data that arrived {what}"), counter, u64t, Bind::NoObject, false, false, Source::BytesRecvd(via));
    }
    pvar(&mut cat_p2p, "oxmpi_rendezvous_sent".into(), "Messages sent with the rendezvous protocol (larger than the eager limit, synchronous, or out of credit)".into(), PvarClass::Counter, u64t, Bind::NoObject, false, false, Source::Rendezvous);
    pvar(&mut cat_p2p, "oxmpi_unexpected_msgs".into(), "Messages that arrived before a matching receive was posted".into(), PvarClass::Counter, u64t, Bind::NoObject, false, false, Source::Unexpected);
    pvar(&mut cat_p2p, "oxmpi_unexpected_queue_length".into(), "Messages waiting in the unexpected queue now".into(), PvarClass::Level, u64t, Bind::NoObject, true, true, Source::UnexpectedLen);
    pvar(&mut cat_p2p, "oxmpi_unexpected_queue_hwm".into(), "Longest the unexpected queue has been".into(), PvarClass::HighWatermark, u64t, Bind::NoObject, true, true, Source::UnexpectedHwm);
    pvar(&mut cat_p2p, "oxmpi_posted_queue_length".into(), "Receives posted and not yet matched now".into(), PvarClass::Level, u64t, Bind::NoObject, true, true, Source::PostedLen);
    pvar(&mut cat_p2p, "oxmpi_posted_queue_hwm".into(), "Longest the posted-receive queue has been".into(), PvarClass::HighWatermark, u64t, Bind::NoObject, true, true, Source::PostedHwm);
    pvar(&mut cat_progress, "oxmpi_time_blocked".into(), "Seconds blocking calls spent waiting (waits that end within their first 64 polls, a few microseconds, are not timed)".into(), PvarClass::Timer, VarType::Double, Bind::NoObject, false, false, Source::BlockedTime);
    pvar(&mut cat_progress, "oxmpi_blocking_waits".into(), "Blocking waits that polled 64 times in vain (the waits oxmpi_time_blocked times)".into(), PvarClass::Counter, u64t, Bind::NoObject, false, false, Source::BlockedWaits);
    pvar(&mut cat_coll, "oxmpi_coll_blocking".into(), "Blocking collective calls on the communicator".into(), PvarClass::Counter, u64t, Bind::Comm, false, false, Source::CollBlocking);
    pvar(&mut cat_coll, "oxmpi_coll_nonblocking".into(), "Nonblocking collectives and persistent collective starts on the communicator, and the agreements communicator creation runs on it".into(), PvarClass::Counter, u64t, Bind::Comm, false, false, Source::CollNonblocking);

    let mut root = CategoryInfo { name: "oxmpi".into(), desc: "All of oxmpi's variables".into(), ..Default::default() };
    let mut categories = vec![];
    for c in [cat_p2p, cat_coll, cat_diag, cat_progress, cat_transport] {
        root.categories.push(categories.len() + 1);
        categories.push(c);
    }
    categories.insert(0, root);
    Registry { cvars, pvars, categories, enums }
}

/// `MPI_Allreduce` for `allreduce`, `MPI_Reduce_scatter_block` for `reduce_scatter_block`.
fn coll_call_name(op: &str) -> String {
    let mut s = op.to_string();
    if let Some(f) = s.get_mut(0..1) {
        f.make_ascii_uppercase();
    }
    s
}

/// The bytes `OXMPI_TRANSPORT`'s value needs ("auto" or "tcp", null-terminated).
const TRANSPORT_LEN: usize = 8;

// ----- errors -----------------------------------------------------------------------

/// The MPI_T error classes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolError {
    NotInitialized,
    InvalidIndex,
    InvalidName,
    InvalidHandle,
    InvalidSession,
    CvarSetNotNow(String),
    CvarSetNever,
    PvarNoWrite,
    PvarNoStartstop,
    PvarNoAtomic,
    /// A bad argument value (MPI_T_ERR_INVALID), with why.
    Invalid(String),
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolError::NotInitialized => write!(f, "the tool interface is not initialized (MPI_T_init_thread)"),
            ToolError::InvalidIndex => write!(f, "no variable, category or enumeration item has this index"),
            ToolError::InvalidName => write!(f, "no variable or category has this name"),
            ToolError::InvalidHandle => write!(f, "invalid handle"),
            ToolError::InvalidSession => write!(f, "invalid performance variable session"),
            ToolError::CvarSetNotNow(why) => write!(f, "the control variable cannot be set now: {why}"),
            ToolError::CvarSetNever => write!(f, "the control variable is read-only"),
            ToolError::PvarNoWrite => write!(f, "the performance variable cannot be written or reset"),
            ToolError::PvarNoStartstop => write!(f, "the performance variable is continuous: it cannot be started or stopped"),
            ToolError::PvarNoAtomic => write!(f, "the performance variable cannot be read and reset atomically"),
            ToolError::Invalid(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for ToolError {}

pub type ToolResult<T> = std::result::Result<T, ToolError>;

// ----- initialization (reference counted) -------------------------------------------

static INIT_COUNT: Mutex<u32> = Mutex::new(0);

/// `MPI_T_init_thread`: may be called any number of times, before `MPI_Init`
/// and after `MPI_Finalize`; each call needs its own [`finalize`].
pub fn init() {
    registry();
    *INIT_COUNT.lock().unwrap_or_else(|p| p.into_inner()) += 1;
}

/// `MPI_T_finalize`: undoes one [`init`].
pub fn finalize() -> ToolResult<()> {
    let mut n = INIT_COUNT.lock().unwrap_or_else(|p| p.into_inner());
    if *n == 0 {
        return Err(ToolError::NotInitialized);
    }
    *n -= 1;
    Ok(())
}

/// Whether the interface is initialized (an [`init`] not yet finalized).
pub fn initialized() -> bool {
    *INIT_COUNT.lock().unwrap_or_else(|p| p.into_inner()) > 0
}

/// Fails with [`ToolError::NotInitialized`] unless [`initialized`].
pub fn require_init() -> ToolResult<&'static Registry> {
    if initialized() {
        Ok(registry())
    } else {
        Err(ToolError::NotInitialized)
    }
}

// ----- lookups ----------------------------------------------------------------------

impl Registry {
    pub fn cvar(&self, i: usize) -> ToolResult<&CvarInfo> {
        self.cvars.get(i).ok_or(ToolError::InvalidIndex)
    }
    pub fn pvar(&self, i: usize) -> ToolResult<&PvarInfo> {
        self.pvars.get(i).ok_or(ToolError::InvalidIndex)
    }
    pub fn category(&self, i: usize) -> ToolResult<&CategoryInfo> {
        self.categories.get(i).ok_or(ToolError::InvalidIndex)
    }
    pub fn enumeration(&self, i: usize) -> ToolResult<&EnumInfo> {
        self.enums.get(i).ok_or(ToolError::InvalidIndex)
    }
    pub fn cvar_index(&self, name: &str) -> ToolResult<usize> {
        self.cvars.iter().position(|c| c.name == name).ok_or(ToolError::InvalidName)
    }
    /// Pvar names are unique per class; oxmpi's are unique overall.
    pub fn pvar_index(&self, name: &str, class: PvarClass) -> ToolResult<usize> {
        self.pvars.iter().position(|p| p.name == name && p.class == class).ok_or(ToolError::InvalidName)
    }
    pub fn category_index(&self, name: &str) -> ToolResult<usize> {
        self.categories.iter().position(|c| c.name == name).ok_or(ToolError::InvalidName)
    }
}

// ----- control variable values ------------------------------------------------------

/// A control variable's value.
#[derive(Clone, Debug, PartialEq)]
pub enum CvarValue {
    Int(i32),
    Double(f64),
    Str(String),
}

fn engine() -> Option<&'static crate::runtime::Engine> {
    crate::runtime::engine_any()
}

fn env_flag(var: &str, rule: FlagRule) -> bool {
    let v = std::env::var(var);
    match rule {
        FlagRule::SetNonZero => v.is_ok_and(|v| !v.is_empty() && v != "0"),
        FlagRule::One => v.is_ok_and(|v| v == "1"),
        FlagRule::OnUnlessZero => v.map_or(true, |v| v != "0"),
        FlagRule::Set => v.is_ok(),
    }
}

/// Reads control variable `i`.
pub fn cvar_read(i: usize) -> ToolResult<CvarValue> {
    let c = registry().cvar(i)?;
    Ok(match c.setting {
        Setting::EagerLimit => {
            let v = match engine() {
                Some(e) => e.with_state(|st| st.eager_limit),
                None => initial_eager_limit(),
            };
            CvarValue::Int(v.min(i32::MAX as usize) as i32)
        }
        Setting::Algorithm(k) => {
            let op = crate::coll::FORCEABLE[k];
            let chosen: Option<String> = match algorithm_override(op) {
                Some(o) => o.map(str::to_string),
                None => crate::coll::env_algorithm(op),
            };
            let choices = algorithm_choices(op);
            let v = chosen.and_then(|a| choices.iter().position(|&c| c == a)).map_or(0, |p| p as i32 + 1);
            CvarValue::Int(v)
        }
        Setting::EnvFlag(var, rule) => CvarValue::Int(env_flag(var, rule) as i32),
        Setting::EnvNumber(var, default) => {
            CvarValue::Double(std::env::var(var).ok().and_then(|v| v.parse().ok()).unwrap_or(default))
        }
        Setting::HangAfter => CvarValue::Double(crate::diag::hang_after().as_secs_f64()),
        Setting::Spin => CvarValue::Int(engine().map_or_else(|| env_u32("OXMPI_SPIN", 20_000), |e| e.spin) as i32),
        Setting::Yields => CvarValue::Int(engine().map_or_else(|| env_u32("OXMPI_YIELDS", 10), |e| e.yields) as i32),
        Setting::Transport => {
            CvarValue::Str(if std::env::var("OXMPI_TRANSPORT").is_ok_and(|v| v == "tcp") { "tcp" } else { "auto" }.into())
        }
    })
}

fn env_u32(var: &str, default: u32) -> u32 {
    std::env::var(var).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Writes control variable `i`.
pub fn cvar_write(i: usize, v: CvarValue) -> ToolResult<()> {
    let c = registry().cvar(i)?;
    match (c.setting, v) {
        (Setting::EagerLimit, CvarValue::Int(n)) => {
            if n < 0 {
                return Err(ToolError::Invalid(format!("OXMPI_EAGER_LIMIT: {n} is negative")));
            }
            match engine() {
                Some(e) => e.with_state(|st| st.eager_limit = n as usize),
                None => EAGER_OVERRIDE.store(n as i64, Ordering::Relaxed),
            }
            Ok(())
        }
        (Setting::Algorithm(k), CvarValue::Int(n)) => {
            let op = crate::coll::FORCEABLE[k];
            let choices = algorithm_choices(op);
            let chosen = match n {
                0 => None,
                n if n >= 1 && (n as usize) <= choices.len() => Some(choices[n as usize - 1]),
                _ => {
                    return Err(ToolError::Invalid(format!(
                        "{}: {n} is not a value of enumeration oxmpi_{op}_algorithms (0..={})",
                        c.name,
                        choices.len()
                    )))
                }
            };
            let mut o = ALGORITHM_OVERRIDES.lock().unwrap_or_else(|p| p.into_inner());
            if o.len() < crate::coll::FORCEABLE.len() {
                o.resize(crate::coll::FORCEABLE.len(), None);
            }
            o[k] = Some(chosen);
            ANY_ALGORITHM_OVERRIDE.store(true, Ordering::Relaxed);
            Ok(())
        }
        (Setting::EagerLimit | Setting::Algorithm(_), _) => Err(ToolError::Invalid(format!("{}: the value must be an int", c.name))),
        _ => Err(ToolError::CvarSetNever),
    }
}

// ----- performance variable values --------------------------------------------------

/// The current raw value of pvar `info` (bound to `comm` where its bind says so).
fn raw(info: &PvarInfo, comm: Option<&Comm>) -> u64 {
    let stats = |f: &dyn Fn(&Stats) -> u64| engine().map_or(0, |e| e.with_state(|st| f(&st.stats)));
    match info.source {
        Source::MsgsSent(v) => stats(&|s| s.msgs_sent[v as usize]),
        Source::BytesSent(v) => stats(&|s| s.bytes_sent[v as usize]),
        Source::MsgsRecvd(v) => stats(&|s| s.msgs_recvd[v as usize]),
        Source::BytesRecvd(v) => stats(&|s| s.bytes_recvd[v as usize]),
        Source::Rendezvous => stats(&|s| s.rendezvous),
        Source::Unexpected => stats(&|s| s.unexpected),
        Source::UnexpectedHwm => stats(&|s| s.unexpected_hwm),
        Source::PostedHwm => stats(&|s| s.posted_hwm),
        Source::UnexpectedLen => engine().map_or(0, |e| e.with_state(|st| st.matcher.unexpected_len() as u64)),
        Source::PostedLen => engine().map_or(0, |e| e.with_state(|st| st.matcher.posted_len() as u64)),
        Source::BlockedTime => BLOCKED_NS.load(Ordering::Relaxed),
        Source::BlockedWaits => BLOCKED_WAITS.load(Ordering::Relaxed),
        Source::CollBlocking => comm.map_or(0, |c| c.0.diag_seq.load(Ordering::Relaxed) as u64),
        Source::CollNonblocking => comm.map_or(0, |c| c.0.coll_seq.load(Ordering::Relaxed) as u64),
    }
}

/// A performance variable's value as MPI_T returns it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PvarValue {
    U64(u64),
    /// Timers: seconds.
    Double(f64),
}

impl PvarValue {
    /// The value as an integer (timers: whole nanoseconds).
    pub fn as_u64(self) -> u64 {
        match self {
            PvarValue::U64(n) => n,
            PvarValue::Double(s) => (s * 1e9) as u64,
        }
    }
    /// The value as a float (timers: seconds).
    pub fn as_f64(self) -> f64 {
        match self {
            PvarValue::U64(n) => n as f64,
            PvarValue::Double(s) => s,
        }
    }
}

/// One handle of a performance variable (one per session and bound object).
#[derive(Debug)]
pub struct PvarHandle {
    index: usize,
    comm: Option<Comm>,
    running: bool,
    /// What the handle counted while it was started before.
    acc: u64,
    /// The raw value when the handle last started (or was reset while started).
    base: u64,
}

impl PvarHandle {
    /// A handle of pvar `index`; `comm` is required for (and only for) pvars
    /// bound to communicators. Continuous pvars start at once.
    pub fn new(index: usize, comm: Option<Comm>) -> ToolResult<PvarHandle> {
        let info = registry().pvar(index)?;
        match (info.bind, &comm) {
            (Bind::Comm, None) => return Err(ToolError::Invalid(format!("{} is bound to a communicator: give one", info.name))),
            (Bind::NoObject, Some(_)) => return Err(ToolError::Invalid(format!("{} is bound to no object", info.name))),
            _ => {}
        }
        let mut h = PvarHandle { index, comm, running: false, acc: 0, base: 0 };
        if info.continuous {
            h.running = true;
            h.base = raw(info, h.comm.as_ref());
        }
        Ok(h)
    }

    pub fn index(&self) -> usize {
        self.index
    }

    pub fn info(&self) -> &'static PvarInfo {
        &registry().pvars[self.index]
    }

    /// Elements of the value (always 1 for oxmpi's pvars).
    pub fn count(&self) -> usize {
        1
    }

    pub fn is_started(&self) -> bool {
        self.running
    }

    pub fn start(&mut self) -> ToolResult<()> {
        let info = self.info();
        if info.continuous {
            return Err(ToolError::PvarNoStartstop);
        }
        if !self.running {
            self.base = raw(info, self.comm.as_ref());
            self.running = true;
        }
        Ok(())
    }

    pub fn stop(&mut self) -> ToolResult<()> {
        let info = self.info();
        if info.continuous {
            return Err(ToolError::PvarNoStartstop);
        }
        if self.running {
            self.acc = self.acc.wrapping_add(raw(info, self.comm.as_ref()).wrapping_sub(self.base));
            self.running = false;
        }
        Ok(())
    }

    fn current(&self, now: u64) -> u64 {
        match self.info().class {
            // Levels and watermarks are the state of the library, not a count.
            PvarClass::Level | PvarClass::HighWatermark | PvarClass::LowWatermark | PvarClass::State | PvarClass::Size => now,
            _ if self.running => self.acc.wrapping_add(now.wrapping_sub(self.base)),
            _ => self.acc,
        }
    }

    fn typed(&self, v: u64) -> PvarValue {
        match self.info().datatype {
            VarType::Double => PvarValue::Double(v as f64 / 1e9),
            _ => PvarValue::U64(v),
        }
    }

    pub fn read(&self) -> PvarValue {
        let now = raw(self.info(), self.comm.as_ref());
        self.typed(self.current(now))
    }

    /// Sets the handle's value (counters and timers; timers in seconds).
    pub fn write(&mut self, v: PvarValue) -> ToolResult<()> {
        let info = self.info();
        if info.readonly {
            return Err(ToolError::PvarNoWrite);
        }
        let v = match v {
            PvarValue::U64(n) => n,
            PvarValue::Double(s) if s.is_finite() && s >= 0.0 => (s * 1e9) as u64,
            PvarValue::Double(s) => return Err(ToolError::Invalid(format!("{}: {s} is not a time in seconds", info.name))),
        };
        self.acc = v;
        self.base = raw(info, self.comm.as_ref());
        Ok(())
    }

    pub fn reset(&mut self) -> ToolResult<()> {
        self.write(PvarValue::U64(0))
    }

    /// Reads, then resets, from one look at the counter.
    pub fn read_reset(&mut self) -> ToolResult<PvarValue> {
        let info = self.info();
        if info.readonly {
            return Err(ToolError::PvarNoWrite);
        }
        if !info.atomic {
            return Err(ToolError::PvarNoAtomic);
        }
        let now = raw(info, self.comm.as_ref());
        let v = self.typed(self.current(now));
        self.acc = 0;
        self.base = now;
        Ok(v)
    }
}

// ----- the event source -------------------------------------------------------------

/// The one timestamp source MPI_T offers: the monotonic clock, in nanoseconds.
pub const SOURCE_NAME: &str = "oxmpi_clock";
pub const SOURCE_DESC: &str = "The process's monotonic clock (CLOCK_MONOTONIC), in nanoseconds; MPI_Wtime reads the same clock";

/// The source's timestamp now.
pub fn source_timestamp() -> i64 {
    (crate::runtime::wtime() * 1e9) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_consistent() {
        let r = registry();
        // Names are unique and every variable is in exactly one leaf category.
        let mut names: Vec<&str> = r.cvars.iter().map(|c| c.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), r.cvars.len());
        let mut seen = vec![0; r.cvars.len()];
        let mut pseen = vec![0; r.pvars.len()];
        for c in &r.categories {
            c.cvars.iter().for_each(|&i| seen[i] += 1);
            c.pvars.iter().for_each(|&i| pseen[i] += 1);
            assert!(c.categories.iter().all(|&k| k < r.categories.len()));
        }
        assert!(seen.iter().all(|&n| n == 1) && pseen.iter().all(|&n| n == 1));
        for c in &r.cvars {
            if let Some(e) = c.enumtype {
                assert!(e < r.enums.len());
            }
        }
        assert!(r.cvar_index("OXMPI_ALLREDUCE_ALGORITHM").is_ok());
        assert_eq!(r.cvar_index("nope"), Err(ToolError::InvalidName));
    }

    #[test]
    fn init_is_counted() {
        init();
        init();
        assert!(finalize().is_ok());
        assert!(initialized());
        assert!(finalize().is_ok());
        assert!(!initialized());
        assert_eq!(finalize(), Err(ToolError::NotInitialized));
    }

    #[test]
    fn algorithm_cvar_round_trips() {
        let r = registry();
        let i = r.cvar_index("OXMPI_SCAN_ALGORITHM").unwrap();
        cvar_write(i, CvarValue::Int(2)).unwrap();
        assert_eq!(cvar_read(i).unwrap(), CvarValue::Int(2));
        assert_eq!(algorithm_override("scan"), Some(Some("linear")));
        assert!(matches!(cvar_write(i, CvarValue::Int(99)), Err(ToolError::Invalid(_))));
        cvar_write(i, CvarValue::Int(0)).unwrap();
        assert_eq!(algorithm_override("scan"), Some(None));
        let ro = r.cvar_index("OXMPI_CHECK").unwrap();
        assert_eq!(cvar_write(ro, CvarValue::Int(1)), Err(ToolError::CvarSetNever));
    }

    #[test]
    fn stopped_handles_do_not_count() {
        let i = registry().pvars.iter().position(|p| p.name == "oxmpi_time_blocked").unwrap();
        let mut h = PvarHandle::new(i, None).unwrap();
        assert_eq!(h.read(), PvarValue::Double(0.0));
        BLOCKED_NS.fetch_add(5_000_000_000, Ordering::Relaxed);
        assert_eq!(h.read(), PvarValue::Double(0.0));
        h.start().unwrap();
        BLOCKED_NS.fetch_add(2_000_000_000, Ordering::Relaxed);
        assert_eq!(h.read(), PvarValue::Double(2.0));
        h.stop().unwrap();
        BLOCKED_NS.fetch_add(1_000_000_000, Ordering::Relaxed);
        assert_eq!(h.read_reset().unwrap(), PvarValue::Double(2.0));
        assert_eq!(h.read(), PvarValue::Double(0.0));
        let q = registry().pvars.iter().position(|p| p.name == "oxmpi_unexpected_queue_length").unwrap();
        let mut qh = PvarHandle::new(q, None).unwrap();
        assert_eq!(qh.start(), Err(ToolError::PvarNoStartstop));
        assert_eq!(qh.reset(), Err(ToolError::PvarNoWrite));
    }
}
