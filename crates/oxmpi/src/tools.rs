//! The MPI tool information interface (MPI_T), typed: oxmpi's control variables
//! (its settings) and performance variables (its counters), the same registry the
//! C functions `MPI_T_*` show.
//!
//! [`Tools::init`] opens the interface (it works before [`initialize`](crate::initialize)
//! and after the universe is dropped) and closes it when dropped. Control variables
//! are read and, where they can change while the job runs, written:
//!
//! ```
//! use oxmpi::tools::{CvarValue, Tools};
//!
//! let tools = Tools::init();
//! let eager = tools.control_variable("OXMPI_EAGER_LIMIT").unwrap();
//! let CvarValue::Int(limit) = eager.read() else { unreachable!() };
//! assert!(limit > 0);
//! eager.write(CvarValue::Int(4096)).unwrap();
//! assert_eq!(eager.read(), CvarValue::Int(4096));
//! // Settings read once at start-up are read-only.
//! assert!(tools.control_variable("OXMPI_CHECK").unwrap().write(CvarValue::Int(1)).is_err());
//! // Algorithm selections are enumerations: the choices have names.
//! let allreduce = tools.control_variable("OXMPI_ALLREDUCE_ALGORITHM").unwrap();
//! assert!(allreduce.choices().iter().any(|(_, name)| name == "ring"));
//! ```
//!
//! Performance variables are read through handles of a [`Session`]; a handle counts
//! only while it is started (continuous variables, such as queue lengths, always are):
//!
//! ```
//! use oxmpi::traits::*;
//! use oxmpi::tools::Tools;
//!
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! let tools = Tools::init();
//! let session = tools.session();
//! let mut sent = session.handle(&tools.performance_variable("oxmpi_msgs_sent_self").unwrap()).unwrap();
//! sent.start().unwrap();
//! let me = world.process_at_rank(world.rank());
//! let (x, _): (i32, _) = oxmpi::point_to_point::send_receive(&7i32, &me, &me);
//! assert_eq!(x, 7);
//! assert_eq!(sent.read().as_u64(), 1);
//! sent.reset().unwrap();
//! assert_eq!(sent.read().as_u64(), 0);
//! ```
#![deny(unsafe_code)]

use oxmpi_core::tools as core;

pub use core::{
    Bind, CategoryInfo, CvarValue, PvarClass, PvarValue, Scope, ToolError, VarType, Verbosity,
};

use crate::topology::Communicator;

/// `Result` of the tool interface: errors are the MPI_T error classes.
pub type Result<T> = std::result::Result<T, ToolError>;

/// An open tool interface (`MPI_T_init_thread`); dropping it is `MPI_T_finalize`.
/// Several may be open at once (the interface counts them).
#[derive(Debug)]
pub struct Tools {
    _open: (),
}

impl Tools {
    /// Opens the interface.
    pub fn init() -> Tools {
        core::init();
        Tools { _open: () }
    }

    /// Every control variable, in index order.
    pub fn control_variables(&self) -> impl Iterator<Item = ControlVariable<'_>> + '_ {
        (0..core::registry().cvars.len()).map(move |index| ControlVariable {
            index,
            _tools: self,
        })
    }

    /// The control variable named `name` (`MPI_T_ERR_INVALID_NAME` if none).
    pub fn control_variable(&self, name: &str) -> Result<ControlVariable<'_>> {
        core::registry()
            .cvar_index(name)
            .map(|index| ControlVariable {
                index,
                _tools: self,
            })
    }

    /// Every performance variable, in index order.
    pub fn performance_variables(&self) -> impl Iterator<Item = PerformanceVariable<'_>> + '_ {
        (0..core::registry().pvars.len()).map(move |index| PerformanceVariable {
            index,
            _tools: self,
        })
    }

    /// The performance variable named `name` (oxmpi's names are unique across classes).
    pub fn performance_variable(&self, name: &str) -> Result<PerformanceVariable<'_>> {
        let index = core::registry()
            .pvars
            .iter()
            .position(|p| p.name == name)
            .ok_or(ToolError::InvalidName)?;
        Ok(PerformanceVariable {
            index,
            _tools: self,
        })
    }

    /// The categories: the first is `oxmpi`, whose subcategories hold every variable
    /// (indices into [`Tools::control_variables`] and [`Tools::performance_variables`]).
    pub fn categories(&self) -> &'static [CategoryInfo] {
        &core::registry().categories
    }

    /// The collectives whose calls are counted per algorithm (`"allreduce"`,
    /// `"bcast"`, ...: those with an `OXMPI_<COLL>_ALGORITHM` choice).
    pub fn collectives(&self) -> &'static [&'static str] {
        core::collectives()
    }

    /// For collective `collective` (one of [`Tools::collectives`]), each of its
    /// algorithms with the counter of the calls that ran it (the performance
    /// variable `oxmpi_coll_<collective>_algorithm_<name>`); `InvalidName` for
    /// another collective.
    ///
    /// ```
    /// use oxmpi::traits::*;
    /// use oxmpi::tools::Tools;
    ///
    /// let universe = oxmpi::initialize().unwrap();
    /// let world = universe.world();
    /// let tools = Tools::init();
    /// let session = tools.session();
    /// let mut handles: Vec<_> = tools
    ///     .algorithm_counters("barrier")
    ///     .unwrap()
    ///     .into_iter()
    ///     .map(|(name, var)| (name, session.handle(&var).unwrap()))
    ///     .collect();
    /// handles.iter_mut().for_each(|(_, h)| h.start().unwrap());
    /// world.barrier();
    /// let calls: u64 = handles.iter().map(|(_, h)| h.read().as_u64()).sum();
    /// assert_eq!(calls, 1);
    /// ```
    pub fn algorithm_counters(
        &self,
        collective: &str,
    ) -> Result<Vec<(&'static str, PerformanceVariable<'_>)>> {
        let algorithms = core::collective_algorithms(collective).ok_or(ToolError::InvalidName)?;
        algorithms
            .into_iter()
            .map(|a| {
                Ok((
                    a,
                    self.performance_variable(&core::algorithm_pvar_name(collective, a))?,
                ))
            })
            .collect()
    }

    /// A new performance variable session.
    pub fn session(&self) -> Session<'_> {
        Session { _tools: self }
    }
}

impl Drop for Tools {
    fn drop(&mut self) {
        let _ = core::finalize();
    }
}

/// A control variable: one of oxmpi's settings.
#[derive(Clone, Copy, Debug)]
pub struct ControlVariable<'t> {
    index: usize,
    _tools: &'t Tools,
}

impl ControlVariable<'_> {
    fn info(&self) -> &'static core::CvarInfo {
        &core::registry().cvars[self.index]
    }
    /// Its index (as `MPI_T_cvar_get_index` returns it).
    pub fn index(&self) -> usize {
        self.index
    }
    /// Its name: the environment variable that sets it at start-up.
    pub fn name(&self) -> &'static str {
        &self.info().name
    }
    /// What it does.
    pub fn description(&self) -> &'static str {
        &self.info().desc
    }
    /// Who it is meant for.
    pub fn verbosity(&self) -> Verbosity {
        self.info().verbosity
    }
    /// The type of its value.
    pub fn datatype(&self) -> VarType {
        self.info().datatype
    }
    /// Where it may be changed: `Readonly` ones never, `Local` ones per process,
    /// `AllEq` ones to the same value on every process.
    pub fn scope(&self) -> Scope {
        self.info().scope
    }
    /// For enumerated values, the values and their names (empty otherwise).
    pub fn choices(&self) -> Vec<(i32, String)> {
        self.info()
            .enumtype
            .map_or_else(Vec::new, |e| core::registry().enums[e].items.clone())
    }
    /// The current value.
    pub fn read(&self) -> CvarValue {
        core::cvar_read(self.index).expect("the index comes from the registry")
    }
    /// Sets the value (`CvarSetNever` for read-only variables, `Invalid` for a value
    /// out of range).
    pub fn write(&self, v: CvarValue) -> Result<()> {
        if matches!(self.scope(), Scope::Constant | Scope::Readonly) {
            return Err(ToolError::CvarSetNever);
        }
        core::cvar_write(self.index, v)
    }
}

/// A performance variable: one of oxmpi's counters or levels.
#[derive(Clone, Copy, Debug)]
pub struct PerformanceVariable<'t> {
    index: usize,
    _tools: &'t Tools,
}

impl PerformanceVariable<'_> {
    fn info(&self) -> &'static core::PvarInfo {
        &core::registry().pvars[self.index]
    }
    /// Its index (as `MPI_T_pvar_get_index` returns it).
    pub fn index(&self) -> usize {
        self.index
    }
    /// Its name.
    pub fn name(&self) -> &'static str {
        &self.info().name
    }
    /// What it measures.
    pub fn description(&self) -> &'static str {
        &self.info().desc
    }
    /// Its class (counter, level, high-water mark, timer, ...).
    pub fn class(&self) -> PvarClass {
        self.info().class
    }
    /// What a handle binds it to ([`Bind::Comm`]: a communicator, see [`Session::handle_for`]).
    pub fn bind(&self) -> Bind {
        self.info().bind
    }
    /// Whether handles can be written and reset.
    pub fn is_readonly(&self) -> bool {
        self.info().readonly
    }
    /// Whether it is always active (cannot be started or stopped).
    pub fn is_continuous(&self) -> bool {
        self.info().continuous
    }
}

/// A performance variable session: handles of one session count independently of
/// other sessions' handles.
#[derive(Debug)]
pub struct Session<'t> {
    _tools: &'t Tools,
}

impl Session<'_> {
    /// A handle of `var`, a variable bound to no object.
    pub fn handle(&self, var: &PerformanceVariable<'_>) -> Result<Handle<'_>> {
        Ok(Handle {
            inner: core::PvarHandle::new(var.index, None)?,
            _session: std::marker::PhantomData,
        })
    }

    /// A handle of `var`, a variable bound to communicators, for `comm`.
    pub fn handle_for<C: Communicator>(
        &self,
        var: &PerformanceVariable<'_>,
        comm: &C,
    ) -> Result<Handle<'_>> {
        Ok(Handle {
            inner: core::PvarHandle::new(var.index, Some(comm.core_comm().clone()))?,
            _session: std::marker::PhantomData,
        })
    }
}

/// A handle of a performance variable in a [`Session`].
#[derive(Debug)]
pub struct Handle<'s> {
    inner: core::PvarHandle,
    _session: std::marker::PhantomData<&'s ()>,
}

impl Handle<'_> {
    /// Starts counting (`PvarNoStartstop` for continuous variables).
    pub fn start(&mut self) -> Result<()> {
        self.inner.start()
    }
    /// Stops counting; the value stays readable.
    pub fn stop(&mut self) -> Result<()> {
        self.inner.stop()
    }
    /// The value (seconds for timers).
    pub fn read(&self) -> PvarValue {
        self.inner.read()
    }
    /// Sets the handle's value (`PvarNoWrite` for read-only variables).
    pub fn write(&mut self, v: PvarValue) -> Result<()> {
        self.inner.write(v)
    }
    /// Back to zero.
    pub fn reset(&mut self) -> Result<()> {
        self.inner.reset()
    }
    /// The value, and back to zero, in one step.
    pub fn read_reset(&mut self) -> Result<PvarValue> {
        self.inner.read_reset()
    }
}
