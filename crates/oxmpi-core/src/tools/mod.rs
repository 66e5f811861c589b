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
//! short waits read no clock), per communicator, the collectives called on
//! it, and per collective the calls that ran each of its algorithms
//! (`oxmpi_coll_<op>_algorithm_<name>`, in category `oxmpi_coll_algorithms`:
//! one relaxed atomic increment per collective call, kept by `coll/select.rs`
//! where the algorithm is chosen). A [`PvarHandle`] turns a raw counter into
//! the MPI_T view: stopped handles do not count, `reset` zeroes the handle's
//! own view, never the counter other handles see.
//!
//! oxmpi defines no MPI_T events: `MPI_T_event_get_num` answers 0, which the
//! standard allows. One event source exists (the monotonic clock), as
//! `MPI_T_source_*` ask for.

//!
//! The module's files: `registry.rs` (the variables, categories and
//! enumerations, built once), `cvar.rs` (control variables' values and the
//! settings MPI_T may change), `pvar.rs` (performance variables' values and
//! handles), `counters.rs` (the engine's counters behind them).

use std::sync::Mutex;

mod counters;
mod cvar;
mod pvar;
mod registry;

pub(crate) use counters::{BlockedTimer, Stats, Via};
pub(crate) use cvar::{
    algorithm_override, initial_eager_limit, DEFAULT_EAGER_LIMIT, SHM_EAGER_LIMIT,
};
pub use cvar::{cvar_read, cvar_write, CvarValue};
pub use pvar::{PvarHandle, PvarValue};
pub use registry::{
    algorithm_pvar_name, collective_algorithms, collectives, registry, Bind, CategoryInfo,
    CvarInfo, EnumInfo, PvarClass, PvarInfo, Registry, Scope, VarType, Verbosity,
};

/// The engine, if this process has one running.
fn engine() -> Option<&'static crate::runtime::Engine> {
    crate::runtime::engine_any()
}

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
            ToolError::NotInitialized => write!(
                f,
                "the tool interface is not initialized (MPI_T_init_thread)"
            ),
            ToolError::InvalidIndex => write!(
                f,
                "no variable, category or enumeration item has this index"
            ),
            ToolError::InvalidName => write!(f, "no variable or category has this name"),
            ToolError::InvalidHandle => write!(f, "invalid handle"),
            ToolError::InvalidSession => write!(f, "invalid performance variable session"),
            ToolError::CvarSetNotNow(why) => {
                write!(f, "the control variable cannot be set now: {why}")
            }
            ToolError::CvarSetNever => write!(f, "the control variable is read-only"),
            ToolError::PvarNoWrite => {
                write!(f, "the performance variable cannot be written or reset")
            }
            ToolError::PvarNoStartstop => write!(
                f,
                "the performance variable is continuous: it cannot be started or stopped"
            ),
            ToolError::PvarNoAtomic => write!(
                f,
                "the performance variable cannot be read and reset atomically"
            ),
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
        self.cvars
            .iter()
            .position(|c| c.name == name)
            .ok_or(ToolError::InvalidName)
    }
    /// Pvar names are unique per class; oxmpi's are unique overall.
    pub fn pvar_index(&self, name: &str, class: PvarClass) -> ToolResult<usize> {
        self.pvars
            .iter()
            .position(|p| p.name == name && p.class == class)
            .ok_or(ToolError::InvalidName)
    }
    pub fn category_index(&self, name: &str) -> ToolResult<usize> {
        self.categories
            .iter()
            .position(|c| c.name == name)
            .ok_or(ToolError::InvalidName)
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
    fn init_is_counted() {
        init();
        init();
        assert!(finalize().is_ok());
        assert!(initialized());
        assert!(finalize().is_ok());
        assert!(!initialized());
        assert_eq!(finalize(), Err(ToolError::NotInitialized));
    }
}
