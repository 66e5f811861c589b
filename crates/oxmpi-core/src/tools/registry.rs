//! The registry of MPI_T: every control and performance variable, category
//! and enumeration, built once (indices never change).

use std::sync::OnceLock;

use super::counters::Via;

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
    pub(super) setting: Setting,
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
    pub(super) source: Source,
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
pub(super) enum Setting {
    EagerLimit,
    /// Index into `coll::FORCEABLE`, enumeration index.
    Algorithm(usize),
    /// A 0/1 switch read from the environment (`true`: on unless unset, "" or "0").
    EnvFlag(&'static str, FlagRule),
    /// A number read from the environment at start-up (default if unset).
    EnvNumber(&'static str, f64),
    HangAfter,
    /// The engine's shared copy as it runs (off by default on a host whose ranks
    /// outnumber its cores, CMA missing or `OXMPI_NO_CMA`); before MPI_Init,
    /// `OXMPI_SHARED_COPY` (on unless "0").
    SharedCopy,
    Spin,
    Yields,
    Transport,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum FlagRule {
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
pub(super) enum Source {
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
    /// Calls of collective `.0` (index into `coll::FORCEABLE`) that ran the
    /// `.1`-th algorithm of its table.
    CollAlgorithm(usize, usize),
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
pub(super) fn algorithm_choices(op: &str) -> Vec<&'static str> {
    crate::coll::algorithm_choices(op)
}

fn build() -> Registry {
    use Scope::*;
    use Verbosity::*;
    let mut enums = vec![EnumInfo {
        name: "oxmpi_bool".into(),
        items: vec![(0, "off".into()), (1, "on".into())],
    }];
    let mut cvars = Vec::new();
    let mut cat_p2p = CategoryInfo {
        name: "oxmpi_p2p".into(),
        desc: "Point-to-point messages: protocol settings and traffic by transport (self, shared memory, TCP)".into(),
        ..Default::default()
    };
    let mut cat_coll = CategoryInfo {
        name: "oxmpi_coll".into(),
        desc:
            "Collective operations: algorithm selections and collectives started per communicator"
                .into(),
        ..Default::default()
    };
    let mut cat_diag = CategoryInfo {
        name: "oxmpi_diag".into(),
        desc: "Diagnosis: deadlock detection, checking mode, type signature checks".into(),
        ..Default::default()
    };
    let mut cat_progress = CategoryInfo {
        name: "oxmpi_progress".into(),
        desc: "Blocking waits: how they spin, yield and sleep, and the time they spend blocked"
            .into(),
        ..Default::default()
    };
    let mut cat_transport = CategoryInfo {
        name: "oxmpi_transport".into(),
        desc: "Transports: the choice between shared memory and TCP and the single-copy paths"
            .into(),
        ..Default::default()
    };
    let mut cvar = |cat: &mut CategoryInfo,
                    name: &str,
                    desc: &str,
                    verbosity,
                    datatype,
                    enumtype,
                    scope,
                    count,
                    setting| {
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
        items.extend(
            algorithm_choices(op)
                .iter()
                .enumerate()
                .map(|(k, a)| (k as i32 + 1, a.to_string())),
        );
        enums.push(EnumInfo {
            name: format!("oxmpi_{op}_algorithms"),
            items,
        });
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
        Setting::SharedCopy,
    );

    let mut pvars = Vec::new();
    let mut pvar = |cat: &mut CategoryInfo,
                    name: String,
                    desc: String,
                    class,
                    datatype,
                    bind,
                    readonly: bool,
                    continuous: bool,
                    source| {
        cat.pvars.push(pvars.len());
        pvars.push(PvarInfo {
            name,
            desc,
            verbosity: match source {
                Source::BlockedWaits | Source::PostedHwm => TunerDetail,
                Source::CollAlgorithm(..) => TunerBasic,
                _ => UserBasic,
            },
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
        (
            Via::Shm,
            "shm",
            "through shared memory (processes on this host)",
        ),
        (Via::Tcp, "tcp", "through TCP (processes on other hosts)"),
    ] {
        let counter = PvarClass::Counter;
        pvar(
            &mut cat_p2p,
            format!("oxmpi_msgs_sent_{name}"),
            format!("Messages sent {what}, including the messages of collectives"),
            counter,
            u64t,
            Bind::NoObject,
            false,
            false,
            Source::MsgsSent(via),
        );
        pvar(
            &mut cat_p2p,
            format!("oxmpi_bytes_sent_{name}"),
            format!("Bytes of message data sent {what}"),
            counter,
            u64t,
            Bind::NoObject,
            false,
            false,
            Source::BytesSent(via),
        );
        pvar(
            &mut cat_p2p,
            format!("oxmpi_msgs_received_{name}"),
            format!("Messages that arrived {what}"),
            counter,
            u64t,
            Bind::NoObject,
            false,
            false,
            Source::MsgsRecvd(via),
        );
        pvar(
            &mut cat_p2p,
            format!("oxmpi_bytes_received_{name}"),
            format!("Bytes of message data that arrived {what}"),
            counter,
            u64t,
            Bind::NoObject,
            false,
            false,
            Source::BytesRecvd(via),
        );
    }
    pvar(&mut cat_p2p, "oxmpi_rendezvous_sent".into(), "Messages sent with the rendezvous protocol (larger than the eager limit, synchronous, or out of credit)".into(), PvarClass::Counter, u64t, Bind::NoObject, false, false, Source::Rendezvous);
    pvar(
        &mut cat_p2p,
        "oxmpi_unexpected_msgs".into(),
        "Messages that arrived before a matching receive was posted".into(),
        PvarClass::Counter,
        u64t,
        Bind::NoObject,
        false,
        false,
        Source::Unexpected,
    );
    pvar(
        &mut cat_p2p,
        "oxmpi_unexpected_queue_length".into(),
        "Messages waiting in the unexpected queue now".into(),
        PvarClass::Level,
        u64t,
        Bind::NoObject,
        true,
        true,
        Source::UnexpectedLen,
    );
    pvar(
        &mut cat_p2p,
        "oxmpi_unexpected_queue_hwm".into(),
        "Longest the unexpected queue has been".into(),
        PvarClass::HighWatermark,
        u64t,
        Bind::NoObject,
        true,
        true,
        Source::UnexpectedHwm,
    );
    pvar(
        &mut cat_p2p,
        "oxmpi_posted_queue_length".into(),
        "Receives posted and not yet matched now".into(),
        PvarClass::Level,
        u64t,
        Bind::NoObject,
        true,
        true,
        Source::PostedLen,
    );
    pvar(
        &mut cat_p2p,
        "oxmpi_posted_queue_hwm".into(),
        "Longest the posted-receive queue has been".into(),
        PvarClass::HighWatermark,
        u64t,
        Bind::NoObject,
        true,
        true,
        Source::PostedHwm,
    );
    pvar(&mut cat_progress, "oxmpi_time_blocked".into(), "Seconds blocking calls spent waiting (waits that end within their first 64 polls, a few microseconds, are not timed)".into(), PvarClass::Timer, VarType::Double, Bind::NoObject, false, false, Source::BlockedTime);
    pvar(
        &mut cat_progress,
        "oxmpi_blocking_waits".into(),
        "Blocking waits that polled 64 times in vain (the waits oxmpi_time_blocked times)".into(),
        PvarClass::Counter,
        u64t,
        Bind::NoObject,
        false,
        false,
        Source::BlockedWaits,
    );
    pvar(
        &mut cat_coll,
        "oxmpi_coll_blocking".into(),
        "Blocking collective calls on the communicator".into(),
        PvarClass::Counter,
        u64t,
        Bind::Comm,
        false,
        false,
        Source::CollBlocking,
    );
    pvar(&mut cat_coll, "oxmpi_coll_nonblocking".into(), "Nonblocking collectives and persistent collective starts on the communicator, and the agreements communicator creation runs on it".into(), PvarClass::Counter, u64t, Bind::Comm, false, false, Source::CollNonblocking);

    let mut cat_algorithms = CategoryInfo {
        name: "oxmpi_coll_algorithms".into(),
        desc: "Collective calls per algorithm: for each collective with an OXMPI_<COLL>_ALGORITHM choice, one counter per algorithm of the choice".into(),
        ..Default::default()
    };
    for (i, op) in crate::coll::FORCEABLE.iter().enumerate() {
        let Some(table) = crate::coll::select::table(op) else {
            continue;
        };
        let call = format!("MPI_{}", coll_call_name(op));
        for (k, a) in table.algorithms.iter().enumerate() {
            let desc = match a.name {
                "shm" => format!("Blocking {call} calls that ran the shared-memory algorithm (shm: {})", a.applies),
                name => format!(
                    "{call} calls (blocking, nonblocking and persistent starts, on intracommunicators) that ran the {name} algorithm ({}), chosen or forced through OXMPI_{}_ALGORITHM",
                    a.applies,
                    op.to_ascii_uppercase()
                ),
            };
            pvar(
                &mut cat_algorithms,
                algorithm_pvar_name(op, a.name),
                desc,
                PvarClass::Counter,
                u64t,
                Bind::NoObject,
                false,
                false,
                Source::CollAlgorithm(i, k),
            );
        }
    }

    let mut root = CategoryInfo {
        name: "oxmpi".into(),
        desc: "All of oxmpi's variables".into(),
        ..Default::default()
    };
    let mut categories = vec![];
    for c in [cat_p2p, cat_coll, cat_diag, cat_progress, cat_transport] {
        root.categories.push(categories.len() + 1);
        categories.push(c);
    }
    categories.insert(0, root);
    // The per-algorithm counters: a subcategory of oxmpi_coll.
    let sub = categories.len();
    categories[2].categories.push(sub);
    categories.push(cat_algorithms);
    Registry {
        cvars,
        pvars,
        categories,
        enums,
    }
}

/// The performance variable counting the calls of collective `op` (a name of
/// `coll::FORCEABLE`) that ran `algorithm`:
/// `oxmpi_coll_allreduce_algorithm_ring`.
pub fn algorithm_pvar_name(op: &str, algorithm: &str) -> String {
    format!("oxmpi_coll_{op}_algorithm_{algorithm}")
}

/// The collectives whose calls MPI_T counts per algorithm (those with an
/// `OXMPI_<COLL>_ALGORITHM` choice), by the lower-case name of that variable.
pub fn collectives() -> &'static [&'static str] {
    crate::coll::FORCEABLE
}

/// The algorithms of collective `op` (a name of [`collectives`]), in table
/// order; `None` for another name.
pub fn collective_algorithms(op: &str) -> Option<Vec<&'static str>> {
    crate::coll::select::table(op).map(|t| t.names().collect())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolError;

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
        // One counter per algorithm of every collective, in oxmpi_coll_algorithms under oxmpi_coll.
        let coll = r.category_index("oxmpi_coll").unwrap();
        let algs = r.category_index("oxmpi_coll_algorithms").unwrap();
        assert_eq!(r.categories[coll].categories, [algs]);
        assert!(!r.categories[0].categories.contains(&algs));
        for op in crate::coll::FORCEABLE {
            for a in crate::coll::select::choices(op) {
                let i = r
                    .pvar_index(&algorithm_pvar_name(op, a), PvarClass::Counter)
                    .unwrap();
                assert!(r.categories[algs].pvars.contains(&i));
            }
        }
        assert!(r
            .pvar_index("oxmpi_coll_allreduce_algorithm_ring", PvarClass::Counter)
            .is_ok());
        assert!(r
            .pvar_index(
                "oxmpi_coll_alltoallw_algorithm_pairwise",
                PvarClass::Counter
            )
            .is_ok());
        assert!(r
            .pvar_index("oxmpi_coll_barrier_algorithm_shm", PvarClass::Counter)
            .is_ok());
    }
}
