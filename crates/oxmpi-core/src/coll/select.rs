//! Algorithm selection as data. Each collective lists its algorithms in one
//! [`Table`] (in `coll/<operation>/mod.rs`): every algorithm's name, the shapes
//! of call it can run (and what runs instead where it cannot), and the default
//! choice by message size, communicator size and commutativity. One function,
//! [`choose`], applies a table to a call; [`check_environment`] validates every
//! `OXMPI_<OP>_ALGORITHM` variable when the engine starts, so an unknown name, a
//! name of another collective's algorithm, or a variable naming no collective is
//! an error at MPI_Init (naming the variable, the value and the valid names)
//! rather than a silent fallback.
//!
//! `shm` entries are the shared-memory path of blocking calls on one host
//! (`coll/shm` decides it, before any schedule is built): in a schedule (every
//! non-blocking call, and blocking ones the path does not serve) they never run,
//! and the default choice is taken instead.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{ErrorClass, MpiError, Result};

/// What a schedule's choice of algorithm depends on. Which byte count `bytes`
/// is (the whole message, one block, the total over all ranks) is said by each
/// operation's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Ranks in the communicator.
    pub ranks: i32,
    /// The bytes the operation's rules are written on.
    pub bytes: usize,
    /// Elements (reductions: their power-of-two rules split elements).
    pub count: usize,
    /// Whether the reduction's op is commutative (true where no op is involved).
    pub commutative: bool,
    /// Hosts the communicator spans.
    pub hosts: usize,
}

impl Shape {
    /// A call on `ranks` ranks moving `bytes` (no op, one host).
    pub(crate) fn new(ranks: i32, bytes: usize) -> Shape {
        Shape {
            ranks,
            bytes,
            count: bytes,
            commutative: true,
            hosts: 1,
        }
    }
}

/// One algorithm of a collective.
pub(crate) struct Algorithm {
    /// The name `OXMPI_<OP>_ALGORITHM` gives it.
    pub name: &'static str,
    /// Where it applies, in words (for the reader and the docs).
    pub applies: &'static str,
    /// Whether a schedule can run it for this shape.
    pub runs: fn(&Shape) -> bool,
    /// What runs where `runs` says no: another algorithm of the table, or
    /// (`None`) the default choice.
    pub instead: Option<&'static str>,
}

/// The algorithms of one collective and its default choice.
pub(crate) struct Table {
    /// The operation (as in `OXMPI_<OP>_ALGORITHM`, lower case); read by
    /// [`Table::validate`]'s messages, so only in debug builds and tests.
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    pub op: &'static str,
    pub algorithms: &'static [Algorithm],
    /// The choice when none is forced.
    pub default: fn(&Shape) -> &'static str,
}

/// For [`Algorithm::runs`]: every shape.
pub(crate) fn always(_: &Shape) -> bool {
    true
}

/// For [`Algorithm::runs`] of `shm` entries: never in a schedule.
pub(crate) fn never(_: &Shape) -> bool {
    false
}

/// For [`Algorithm::runs`]: commutative ops only.
pub(crate) fn commutative(s: &Shape) -> bool {
    s.commutative
}

impl Table {
    pub(crate) fn get(&'static self, name: &str) -> Option<&'static Algorithm> {
        self.algorithms.iter().find(|a| a.name == name)
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.algorithms.iter().map(|a| a.name)
    }

    /// The algorithm that runs for `shape` when `forced` (a name of this table)
    /// is forced: itself where it can run, else its replacement.
    pub(crate) fn resolve(&'static self, forced: &str, shape: &Shape) -> &'static str {
        match self.get(forced) {
            Some(a) if (a.runs)(shape) => a.name,
            Some(Algorithm {
                instead: Some(other),
                ..
            }) => self.resolve(other, shape),
            _ => (self.default)(shape),
        }
    }

    /// Checks the table itself (run by the unit tests and, in debug builds, at
    /// start-up): names unique and non-empty, every replacement a name of the
    /// table that does not lead back to itself.
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    pub(crate) fn validate(&'static self) -> std::result::Result<(), String> {
        if self.algorithms.is_empty() {
            return Err(format!("{}: no algorithms", self.op));
        }
        for (i, a) in self.algorithms.iter().enumerate() {
            if a.name.is_empty()
                || a.name == "auto"
                || !a.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            {
                return Err(format!("{}: bad algorithm name {:?}", self.op, a.name));
            }
            if self.algorithms[..i].iter().any(|b| b.name == a.name) {
                return Err(format!("{}: {} listed twice", self.op, a.name));
            }
            let mut seen = vec![a.name];
            let mut at = a;
            while let Some(next) = at.instead {
                at = self.get(next).ok_or_else(|| {
                    format!(
                        "{}: {} falls back to {next}, not in the table",
                        self.op, a.name
                    )
                })?;
                if seen.contains(&at.name) {
                    return Err(format!(
                        "{}: the fallbacks of {} go round in a circle",
                        self.op, a.name
                    ));
                }
                seen.push(at.name);
            }
        }
        Ok(())
    }
}

/// Every collective with an `OXMPI_<OP>_ALGORITHM` variable, and its table
/// (reduce_scatter_block and exscan share their sibling's algorithms).
pub(crate) const FORCEABLE: &[&str] = &[
    "barrier",
    "bcast",
    "gather",
    "gatherv",
    "scatter",
    "scatterv",
    "allgather",
    "allgatherv",
    "alltoall",
    "alltoallv",
    "alltoallw",
    "reduce",
    "allreduce",
    "reduce_scatter",
    "reduce_scatter_block",
    "scan",
    "exscan",
];

/// A collective of [`FORCEABLE`] by position, for the per-call paths: its
/// forced algorithm ([`forced_op`]) and its calls per algorithm ([`ran_shm`])
/// are then indexed loads, where looking the name up cost ~150 instructions
/// per blocking call (string compares through [`FORCEABLE`], [`table`] and the
/// table's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Op(usize);

impl Op {
    pub(crate) const BARRIER: Op = Op(0);
    pub(crate) const BCAST: Op = Op(1);
    pub(crate) const GATHER: Op = Op(2);
    pub(crate) const GATHERV: Op = Op(3);
    pub(crate) const SCATTER: Op = Op(4);
    pub(crate) const SCATTERV: Op = Op(5);
    pub(crate) const ALLGATHER: Op = Op(6);
    pub(crate) const ALLGATHERV: Op = Op(7);
    pub(crate) const ALLTOALL: Op = Op(8);
    pub(crate) const ALLTOALLV: Op = Op(9);
    pub(crate) const REDUCE: Op = Op(11);
    pub(crate) const ALLREDUCE: Op = Op(12);
    pub(crate) const REDUCE_SCATTER: Op = Op(13);
    pub(crate) const REDUCE_SCATTER_BLOCK: Op = Op(14);

    /// The collective named `op` (a name of [`FORCEABLE`]).
    #[cfg(test)]
    pub(crate) fn of(op: &str) -> Option<Op> {
        op_index(op).map(Op)
    }

    /// Its name in [`FORCEABLE`].
    pub(crate) fn name(self) -> &'static str {
        FORCEABLE[self.0]
    }
}

/// The table of collective `op` of [`FORCEABLE`].
pub(crate) fn table(op: &str) -> Option<&'static Table> {
    use super::*;
    Some(match op {
        "barrier" => &barrier::TABLE,
        "bcast" => &bcast::TABLE,
        "gather" => &gather::TABLE,
        "gatherv" => &gather::V_TABLE,
        "scatter" => &scatter::TABLE,
        "scatterv" => &scatter::V_TABLE,
        "allgather" => &allgather::TABLE,
        "allgatherv" => &allgather::V_TABLE,
        "alltoall" => &alltoall::TABLE,
        "alltoallv" => &alltoall::V_TABLE,
        "alltoallw" => &alltoall::W_TABLE,
        "reduce" => &reduce::TABLE,
        "allreduce" => &allreduce::TABLE,
        "reduce_scatter" | "reduce_scatter_block" => &reduce_scatter::TABLE,
        "scan" | "exscan" => &scan::TABLE,
        _ => return None,
    })
}

fn var(op: &str) -> String {
    format!("OXMPI_{}_ALGORITHM", op.to_ascii_uppercase())
}

/// The position of `op` in [`FORCEABLE`].
pub(crate) fn op_index(op: &str) -> Option<usize> {
    FORCEABLE.iter().position(|&k| k == op)
}

/// `OXMPI_<OP>_ALGORITHM` as the environment sets it, read once per process
/// (collectives are called in loops; formatting the name and searching the
/// environment cost more than a small collective's schedule). `i`: `op`'s
/// [`op_index`].
fn env_value(op: &str, i: Option<usize>) -> Option<&'static str> {
    use std::sync::OnceLock;
    static CACHE: [OnceLock<Option<String>>; FORCEABLE.len()] =
        [const { OnceLock::new() }; FORCEABLE.len()];
    CACHE[i?]
        .get_or_init(|| std::env::var(var(op)).ok())
        .as_deref()
}

// ----- calls per algorithm (MPI_T's performance variables) -------------------------

/// Columns of [`CALLS`]: the most algorithms a table has (checked by a test).
pub(crate) const MAX_ALGORITHMS: usize = 8;

/// Calls that ran each algorithm, since the process started: row = the
/// collective's [`op_index`], column = the algorithm's position in its table.
/// Relaxed increments: one per collective call, read by MPI_T.
static CALLS: [[AtomicU64; MAX_ALGORITHMS]; FORCEABLE.len()] =
    [const { [const { AtomicU64::new(0) }; MAX_ALGORITHMS] }; FORCEABLE.len()];

thread_local! {
    /// While a persistent collective's `_init` plans its schedule: the counters
    /// its choices would add to, added to at each of its starts instead
    /// ([`deferring_counts`], [`count_again`]).
    static DEFERRED: std::cell::RefCell<Option<Vec<(usize, usize)>>> =
        const { std::cell::RefCell::new(None) };
}

/// Counts one call of the collective at `i` ([`op_index`]) that ran
/// `algorithm` of `table`.
#[inline]
fn count(i: Option<usize>, table: &Table, algorithm: &str) {
    // The names come from the table itself (or equal literals): pointers first.
    let same = |a: &Algorithm| std::ptr::eq(a.name, algorithm) || a.name == algorithm;
    if let (Some(i), Some(k)) = (i, table.algorithms.iter().position(same)) {
        if k < MAX_ALGORITHMS {
            count_at(i, k);
        }
    }
}

/// Counts one call of row `i`, column `k` of [`CALLS`] (or defers it).
#[inline]
fn count_at(i: usize, k: usize) {
    // No thread plans a persistent collective (nearly always): no thread-local
    // look-up (~50 instructions a call, bench/PROFILE.md collA32). A planning
    // thread raised the count before it set its own `DEFERRED`, so it sees it.
    let deferred = DEFERRING.load(Ordering::Relaxed) != 0
        && DEFERRED.with(|d| match d.borrow_mut().as_mut() {
            Some(v) => {
                v.push((i, k));
                true
            }
            None => false,
        });
    if !deferred {
        CALLS[i][k].fetch_add(1, Ordering::Relaxed);
    }
}

/// Threads inside [`deferring_counts`] now.
static DEFERRING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Runs `f` (a persistent collective's planning) with the counts of the
/// algorithms it chooses kept aside, not counted: a persistent collective
/// counts once per start, what each start runs, and not at its `_init`.
pub(crate) fn deferring_counts<R>(f: impl FnOnce() -> R) -> (R, Vec<(usize, usize)>) {
    /// Lowers [`DEFERRING`] again however `f` ends (a panic unwinds through it).
    struct Raised;
    impl Drop for Raised {
        fn drop(&mut self) {
            DEFERRING.fetch_sub(1, Ordering::Relaxed);
        }
    }
    DEFERRING.fetch_add(1, Ordering::Relaxed);
    let _raised = Raised;
    let outer = DEFERRED.with(|d| d.replace(Some(Vec::new())));
    let r = f();
    let kept = DEFERRED.with(|d| d.replace(outer)).unwrap_or_default();
    (r, kept)
}

/// Counts again the algorithms [`deferring_counts`] kept aside (one start).
pub(crate) fn count_again(kept: &[(usize, usize)]) {
    for &(i, k) in kept {
        if let Some(c) = CALLS.get(i).and_then(|row| row.get(k)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Counts one call of `op` (a name of [`FORCEABLE`]) that ran `algorithm` of
/// its table: for the paths that choose without [`choose`] (the shared-memory
/// collectives, single-algorithm collectives). The per-call paths use
/// [`ran_shm`]; the tests compare the two.
#[cfg(test)]
pub(crate) fn ran(op: &str, algorithm: &str) {
    if let Some(t) = table(op) {
        count(op_index(op), t, algorithm);
    }
}

/// Position of `shm` in each table of [`FORCEABLE`] (`u8::MAX`: none), found
/// once.
fn shm_column(op: Op) -> Option<usize> {
    use std::sync::OnceLock;
    static COLUMN: [OnceLock<u8>; FORCEABLE.len()] = [const { OnceLock::new() }; FORCEABLE.len()];
    let k = *COLUMN[op.0].get_or_init(|| {
        table(op.name())
            .and_then(|t| t.algorithms.iter().position(|a| a.name == "shm"))
            .filter(|&k| k < MAX_ALGORITHMS)
            .map_or(u8::MAX, |k| k as u8)
    });
    (k != u8::MAX).then_some(k as usize)
}

/// [`ran`]`(op, "shm")` for the shared-memory paths of blocking calls: an
/// indexed increment.
#[inline]
pub(crate) fn ran_shm(op: Op) {
    if let Some(k) = shm_column(op) {
        count_at(op.0, k);
    }
}

/// Calls of collective `op_index` that ran the `algorithm`-th algorithm of its
/// table (0 for indices out of range).
pub(crate) fn calls(op_index: usize, algorithm: usize) -> u64 {
    CALLS
        .get(op_index)
        .and_then(|row| row.get(algorithm))
        .map_or(0, |c| c.load(Ordering::Relaxed))
}

/// Checks `value` of `OXMPI_<OP>_ALGORITHM` against `op`'s table: `None` for
/// the automatic choice (unset, empty or `auto`), the algorithm's name, or an
/// error naming the variable, the value and the valid names.
pub(crate) fn check_value(op: &str, value: Option<&str>) -> Result<Option<&'static str>> {
    let Some(t) = table(op) else {
        return Err(MpiError::new(
            ErrorClass::Arg,
            format!(
                "{} names no collective with algorithms; those are {}",
                var(op),
                FORCEABLE.join(", ")
            ),
        ));
    };
    match value {
        None | Some("" | "auto") => Ok(None),
        Some(v) => match t.get(v) {
            Some(a) => Ok(Some(a.name)),
            None => {
                let names: Vec<String> = t
                    .algorithms
                    .iter()
                    .map(|a| format!("{} ({})", a.name, a.applies))
                    .collect();
                let elsewhere: Vec<&str> = FORCEABLE
                    .iter()
                    .copied()
                    .filter(|&o| table(o).is_some_and(|o| o.get(v).is_some()))
                    .collect();
                let note = match elsewhere.is_empty() {
                    false => format!(
                        " ({v} is an algorithm of {}, not applicable to {op})",
                        elsewhere.join(", ")
                    ),
                    true => String::new(),
                };
                Err(MpiError::new(
                    ErrorClass::Arg,
                    format!(
                        "{}={v:?} names no {op} algorithm{note}; choose one of {}, or auto",
                        var(op),
                        names.join(", ")
                    ),
                ))
            }
        },
    }
}

/// The algorithm forced for `op` (a name of [`FORCEABLE`]), if any: by MPI_T
/// (`OXMPI_<OP>_ALGORITHM` as a control variable), else by the environment.
/// The per-call paths use [`forced_op`]; the tests compare the two.
#[cfg(test)]
pub(crate) fn forced(op: &str) -> Result<Option<&'static str>> {
    forced_at(op, op_index(op))
}

/// [`forced`] for the per-call paths: without an MPI_T override (one relaxed
/// load), the environment's choice, checked once and kept (the environment
/// does not change after MPI_Init, which validated it).
#[inline]
pub(crate) fn forced_op(op: Op) -> Result<Option<&'static str>> {
    use std::sync::OnceLock;
    static CACHE: [OnceLock<Option<&'static str>>; FORCEABLE.len()] =
        [const { OnceLock::new() }; FORCEABLE.len()];
    if crate::tools::algorithm_override(op.name()).is_some() {
        return forced_at(op.name(), Some(op.0));
    }
    if let Some(&v) = CACHE[op.0].get() {
        return Ok(v);
    }
    // An invalid value is not kept: its error is made again on every call.
    let v = check_value(op.name(), env_value(op.name(), Some(op.0)))?;
    Ok(*CACHE[op.0].get_or_init(|| v))
}

/// [`forced`] for `op` at `i` ([`op_index`]).
fn forced_at(op: &str, i: Option<usize>) -> Result<Option<&'static str>> {
    if let Some(o) = crate::tools::algorithm_override(op) {
        return Ok(o.and_then(|v| table(op).and_then(|t| t.get(v)).map(|a| a.name)));
    }
    check_value(op, env_value(op, i))
}

/// The algorithm of one call of `op` with `table` for `shape`: the forced
/// one (or what replaces it where it cannot run), else the default choice.
/// Counted in the algorithm's calls (MPI_T).
pub(crate) fn choose(op: &str, table: &'static Table, shape: &Shape) -> Result<&'static str> {
    let i = op_index(op);
    let name = choose_at(op, i, table, shape)?;
    count(i, table, name);
    Ok(name)
}

/// [`choose`] for a schedule oxmpi runs for itself (the agreements of
/// communicator creation), not counted as the program's call.
pub(crate) fn choose_uncounted(
    op: &str,
    table: &'static Table,
    shape: &Shape,
) -> Result<&'static str> {
    choose_at(op, op_index(op), table, shape)
}

fn choose_at(
    op: &str,
    i: Option<usize>,
    table: &'static Table,
    shape: &Shape,
) -> Result<&'static str> {
    Ok(match forced_at(op, i)? {
        Some(name) => table.resolve(name, shape),
        None => (table.default)(shape),
    })
}

/// Validates every `OXMPI_*_ALGORITHM` variable of the environment, when the
/// engine starts: each must name a collective of [`FORCEABLE`] and one of its
/// algorithms (or `auto`).
pub(crate) fn check_environment() -> Result<()> {
    #[cfg(debug_assertions)]
    for op in FORCEABLE {
        if let Some(Err(e)) = table(op).map(Table::validate) {
            return Err(MpiError::new(
                ErrorClass::Intern,
                format!("collective algorithm table: {e}"),
            ));
        }
    }
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let Some(op) = key
            .strip_prefix("OXMPI_")
            .and_then(|k| k.strip_suffix("_ALGORITHM"))
        else {
            continue;
        };
        let op = op.to_ascii_lowercase();
        if !FORCEABLE.contains(&op.as_str()) {
            return Err(MpiError::new(
                ErrorClass::Arg,
                format!("{key} names no collective with algorithms; the variables are OXMPI_<OP>_ALGORITHM for OP one of {}", FORCEABLE.join(", ")),
            ));
        }
        check_value(&op, env_value(&op, op_index(&op)))?;
    }
    Ok(())
}

/// The algorithms `OXMPI_<OP>_ALGORITHM` may name (the MPI_T enumeration of
/// that control variable, in table order).
pub(crate) fn choices(op: &str) -> Vec<&'static str> {
    table(op).map(|t| t.names().collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shapes() -> Vec<Shape> {
        let mut v = Vec::new();
        for ranks in [1, 2, 3, 4, 5, 7, 8, 9, 16, 33, 64] {
            for bytes in [
                0,
                1,
                8,
                255,
                256,
                2048,
                2049,
                12 * 1024,
                32 * 1024,
                64 * 1024,
                80 * 1024,
                512 * 1024,
                1 << 20,
                16 << 20,
            ] {
                for commutative in [true, false] {
                    for hosts in [1, 2] {
                        for count in [1, bytes / 8, bytes] {
                            v.push(Shape {
                                ranks,
                                bytes,
                                count,
                                commutative,
                                hosts,
                            });
                        }
                    }
                }
            }
        }
        v
    }

    #[test]
    fn every_table_is_consistent() {
        for op in FORCEABLE {
            let t = table(op).unwrap_or_else(|| panic!("{op} has no table"));
            t.validate().unwrap();
        }
        assert!(table("neighbor_allgather").is_none());
    }

    #[test]
    fn defaults_and_forced_choices_name_algorithms_that_run() {
        for op in FORCEABLE {
            let t = table(op).unwrap();
            for s in shapes() {
                let d = (t.default)(&s);
                let a = t
                    .get(d)
                    .unwrap_or_else(|| panic!("{op}: default {d} is not in the table"));
                assert!((a.runs)(&s), "{op}: default {d} cannot run {s:?}");
                for forced in t.names() {
                    let r = t.resolve(forced, &s);
                    let a = t.get(r).unwrap_or_else(|| {
                        panic!("{op}: {forced} resolves to {r}, not in the table")
                    });
                    assert!(
                        (a.runs)(&s),
                        "{op}: {forced} forced resolves to {r}, which cannot run {s:?}"
                    );
                    if (t.get(forced).unwrap().runs)(&s) {
                        assert_eq!(r, forced, "{op}: {forced} can run {s:?} but was replaced");
                    }
                }
            }
        }
    }

    #[test]
    fn defaults_follow_the_documented_rules() {
        let b = &crate::coll::bcast::TABLE;
        assert_eq!((b.default)(&Shape::new(16, 1024)), "binomial");
        assert_eq!((b.default)(&Shape::new(4, 1 << 20)), "binomial");
        assert_eq!((b.default)(&Shape::new(16, 1 << 20)), "scatter_ring");
        let ag = &crate::coll::allgather::TABLE;
        assert_eq!((ag.default)(&Shape::new(8, 1024)), "recursive_doubling");
        assert_eq!((ag.default)(&Shape::new(7, 1024)), "bruck");
        assert_eq!((ag.default)(&Shape::new(7, 1 << 20)), "ring");
        assert_eq!(
            ag.resolve("recursive_doubling", &Shape::new(6, 1024)),
            "bruck"
        );
        let a2a = &crate::coll::alltoall::TABLE;
        assert_eq!((a2a.default)(&Shape::new(8, 100)), "bruck");
        assert_eq!((a2a.default)(&Shape::new(8, 1000)), "linear");
        assert_eq!((a2a.default)(&Shape::new(4, 100)), "pairwise");
        let noncomm = Shape {
            commutative: false,
            ..Shape::new(4, 1 << 20)
        };
        assert_eq!(
            crate::coll::reduce::TABLE.resolve("binomial", &noncomm),
            "in_order"
        );
        assert_eq!(
            crate::coll::allreduce::TABLE.resolve("ring", &noncomm),
            "recursive_doubling"
        );
        assert_eq!(
            crate::coll::reduce_scatter::TABLE.resolve("pairwise", &noncomm),
            "reduce_scatterv"
        );
        let two_hosts = Shape {
            hosts: 2,
            ..Shape::new(8, 4096)
        };
        assert_eq!(
            (crate::coll::allreduce::TABLE.default)(&two_hosts),
            "hierarchical"
        );
        assert_eq!(
            (crate::coll::scan::TABLE.default)(&Shape::new(2, 8)),
            "linear"
        );
        assert_eq!(
            (crate::coll::scan::TABLE.default)(&Shape::new(3, 8)),
            "recursive_doubling"
        );
        // shm never runs in a schedule: the default choice does.
        assert_eq!(b.resolve("shm", &Shape::new(16, 1 << 20)), "scatter_ring");
    }

    #[test]
    fn values_are_checked_with_messages_naming_the_choices() {
        assert_eq!(check_value("bcast", None).unwrap(), None);
        assert_eq!(check_value("bcast", Some("auto")).unwrap(), None);
        assert_eq!(check_value("bcast", Some("")).unwrap(), None);
        assert_eq!(check_value("bcast", Some("chain")).unwrap(), Some("chain"));
        let e = check_value("bcast", Some("nosuch")).unwrap_err();
        assert_eq!(e.class, ErrorClass::Arg);
        assert!(
            e.message
                .contains("OXMPI_BCAST_ALGORITHM=\"nosuch\" names no bcast algorithm"),
            "{}",
            e.message
        );
        assert!(
            e.message
                .contains("choose one of binomial (any size), scatter_ring ("),
            "{}",
            e.message
        );
        assert!(
            e.message
                .contains("shm (blocking bcast within one host), or auto"),
            "{}",
            e.message
        );
        let e = check_value("gatherv", Some("binomial")).unwrap_err();
        assert!(e.message.contains("binomial is an algorithm of bcast, gather, scatter, reduce, not applicable to gatherv"), "{}", e.message);
        assert!(
            e.message
                .contains("choose one of linear (any counts), shm (blocking gatherv within one host (blocks over 64 KiB point-to-point)), or auto"),
            "{}",
            e.message
        );
        let e = check_value("alltoallw", Some("shm")).unwrap_err();
        assert_eq!(e.class, ErrorClass::Arg);
        assert!(
            e.message.contains("OXMPI_ALLTOALLW_ALGORITHM=\"shm\" names no alltoallw algorithm (shm is an algorithm of"),
            "{}",
            e.message
        );
        assert!(
            e.message
                .contains("choose one of linear (any counts), pairwise (any counts), or auto"),
            "{}",
            e.message
        );
        let e = check_value("allreduc", Some("ring")).unwrap_err();
        assert!(
            e.message
                .contains("OXMPI_ALLREDUC_ALGORITHM names no collective"),
            "{}",
            e.message
        );
    }

    #[test]
    fn every_table_fits_the_call_counters() {
        for op in FORCEABLE {
            assert!(
                table(op).unwrap().algorithms.len() <= MAX_ALGORITHMS,
                "{op}: more algorithms than MAX_ALGORITHMS"
            );
        }
    }

    #[test]
    fn calls_are_counted_per_algorithm() {
        let i = op_index("reduce_scatter_block").unwrap();
        let t = table("reduce_scatter_block").unwrap();
        let k = t
            .algorithms
            .iter()
            .position(|a| a.name == "pairwise")
            .unwrap();
        let before: Vec<u64> = (0..t.algorithms.len()).map(|a| calls(i, a)).collect();
        ran("reduce_scatter_block", "pairwise");
        ran("reduce_scatter_block", "no_such_algorithm");
        ran("no_such_collective", "pairwise");
        let name = choose("reduce_scatter_block", t, &Shape::new(4, 1024)).unwrap();
        let chosen = t.algorithms.iter().position(|a| a.name == name).unwrap();
        choose_uncounted("reduce_scatter_block", t, &Shape::new(4, 1024)).unwrap();
        for (a, b) in before.iter().enumerate() {
            let grew = (a == k) as u64 + (a == chosen) as u64;
            assert_eq!(calls(i, a), b + grew, "{}", t.algorithms[a].name);
        }
        assert_eq!(calls(99, 0), 0);
        assert_eq!(calls(i, MAX_ALGORITHMS), 0);
    }

    #[test]
    fn op_constants_name_their_collectives() {
        for (op, name) in [
            (Op::BARRIER, "barrier"),
            (Op::BCAST, "bcast"),
            (Op::GATHER, "gather"),
            (Op::GATHERV, "gatherv"),
            (Op::SCATTER, "scatter"),
            (Op::SCATTERV, "scatterv"),
            (Op::ALLGATHER, "allgather"),
            (Op::ALLGATHERV, "allgatherv"),
            (Op::ALLTOALL, "alltoall"),
            (Op::ALLTOALLV, "alltoallv"),
            (Op::REDUCE, "reduce"),
            (Op::ALLREDUCE, "allreduce"),
        ] {
            assert_eq!(op.name(), name);
            assert_eq!(Op::of(name), Some(op));
        }
        // ran_shm counts what ran("bcast", "shm") counts.
        let i = op_index("bcast").unwrap();
        let k = shm_column(Op::BCAST).unwrap();
        assert_eq!(table("bcast").unwrap().algorithms[k].name, "shm");
        let before = calls(i, k);
        ran_shm(Op::BCAST);
        ran("bcast", "shm");
        assert_eq!(calls(i, k), before + 2);
        assert_eq!(forced_op(Op::BCAST).unwrap(), forced("bcast").unwrap());
    }

    #[test]
    fn choices_are_the_table_in_order() {
        assert_eq!(choices("alltoallv"), ["linear", "pairwise", "shm"]);
        // Alltoallw has no shared-memory path: `shm` is no choice of it.
        assert_eq!(choices("alltoallw"), ["linear", "pairwise"]);
        assert_eq!(choices("exscan"), ["recursive_doubling", "linear"]);
        assert!(choices("nosuch").is_empty());
    }
}
