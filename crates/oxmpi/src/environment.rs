//! The MPI environment: start-up, shutdown, clocks and names.
//!
//! [`initialize`] starts MPI and returns the [`Universe`]; dropping the `Universe`
//! finalizes MPI.
//!
//! ```
//! let universe = oxmpi::initialize().unwrap();
//! let t0 = oxmpi::environment::time();
//! println!("{} on {}", oxmpi::environment::library_version().unwrap(),
//!          oxmpi::environment::processor_name().unwrap());
//! println!("took {} s", oxmpi::environment::time() - t0);
//! ```
#![deny(unsafe_code)]

use std::string::FromUtf8Error;

use oxmpi_core::runtime::{self, ThreadLevel};

use crate::error::{fatal, OrFatal, Result};
use crate::topology::{ClusterLevel, SimpleCommunicator};

/// A thread support level (`MPI_THREAD_*`), ordered from least to most:
/// `Threading::Single`, `Threading::Funneled`, `Threading::Serialized`,
/// `Threading::Multiple`.
///
/// The level is part of the types: each `Threading::X` is a value of its own marker type
/// ([`threading::Multiple`], ...), so that
/// [`initialize_with_threading`]`(Threading::Multiple)` returns a
/// [`Universe`]`<`[`Multithreaded`](threading::Multithreaded)`>` whose communicators are
/// `Send + Sync`, while at the lower levels they stay on the thread that made them. What
/// the library provided is a `Threading` value, comparable with the markers
/// (`provided == Threading::Multiple`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Threading(Level);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Level {
    Single,
    Funneled,
    Serialized,
    Multiple,
}

impl std::fmt::Debug for Threading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0, f)
    }
}

/// The thread levels as types, and the markers of what may cross threads.
pub mod threading {
    use std::marker::PhantomData;

    use super::{Level, Threading};

    macro_rules! levels {
        ($($(#[$doc:meta])* $name:ident => $safety:ident),*) => {
            $(
                $(#[$doc])*
                #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
                pub struct $name;

                impl From<$name> for Threading {
                    fn from(_: $name) -> Threading {
                        Threading(Level::$name)
                    }
                }
                impl PartialEq<$name> for Threading {
                    fn eq(&self, _: &$name) -> bool {
                        self.0 == Level::$name
                    }
                }
                impl PartialEq<Threading> for $name {
                    fn eq(&self, t: &Threading) -> bool {
                        t.0 == Level::$name
                    }
                }
                impl PartialOrd<$name> for Threading {
                    fn partial_cmp(&self, _: &$name) -> Option<std::cmp::Ordering> {
                        Some(self.0.cmp(&Level::$name))
                    }
                }
                impl RequestedThreading for $name {
                    type Safety = $safety;
                    fn level(&self) -> Threading {
                        Threading(Level::$name)
                    }
                }
            )*
        };
    }

    levels! {
        /// `MPI_THREAD_SINGLE`: only one thread runs.
        Single => Unthreaded,
        /// `MPI_THREAD_FUNNELED`: only the main thread makes MPI calls.
        Funneled => Unthreaded,
        /// `MPI_THREAD_SERIALIZED`: any thread makes MPI calls, one at a time.
        Serialized => Unthreaded,
        /// `MPI_THREAD_MULTIPLE`: any thread makes MPI calls at any time.
        Multiple => Multithreaded
    }

    /// The marker of objects made below `Threading::Multiple`: neither `Send` nor `Sync`,
    /// so a communicator stays on the thread that made it.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Unthreaded(PhantomData<*const ()>);

    /// The marker of objects made under `Threading::Multiple`: `Send + Sync`.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Multithreaded;

    /// [`Unthreaded`] or [`Multithreaded`].
    pub trait ThreadSafety: sealed::Sealed + Clone + Copy + Default + 'static {}
    impl ThreadSafety for Unthreaded {}
    impl ThreadSafety for Multithreaded {}

    mod sealed {
        pub trait Sealed {}
        impl Sealed for super::Unthreaded {}
        impl Sealed for super::Multithreaded {}
    }

    /// What [`initialize_with_threading`](super::initialize_with_threading) takes: a
    /// level marker (`Threading::Multiple`, ...), which fixes the thread safety of the
    /// universe's objects, or a `Threading` value known only at run time (then
    /// [`Unthreaded`], whatever is provided).
    pub trait RequestedThreading {
        /// The marker of the universe's objects.
        type Safety: ThreadSafety;
        /// The level requested.
        fn level(&self) -> Threading;
    }

    /// The thread safety of a communicator type, as seen by calls that work on any
    /// communicator (the immediate collectives): a communicator's own
    /// [`Communicator::Safety`](crate::topology::Communicator::Safety), and
    /// [`Unthreaded`] behind `dyn Communicator`, whose level the type does not say.
    ///
    /// ```
    /// use oxmpi::traits::*;
    /// let (universe, _) = oxmpi::initialize_with_threading(oxmpi::Threading::Multiple).unwrap();
    /// let world = universe.world();
    /// // The barrier's request is as thread-safe as the world: any thread may complete it.
    /// let req = world.immediate_barrier();
    /// std::thread::spawn(move || req.wait()).join().unwrap();
    /// ```
    pub trait CommunicatorSafety {
        /// [`Unthreaded`] or [`Multithreaded`].
        type Safety: ThreadSafety;
    }

    impl<C: crate::topology::Communicator> CommunicatorSafety for C {
        type Safety = <C as crate::topology::Communicator>::Safety;
    }

    impl CommunicatorSafety for dyn crate::topology::Communicator + '_ {
        type Safety = Unthreaded;
    }

    /// The thread safety of communicator type `C` (see [`CommunicatorSafety`]): the last
    /// parameter of the requests its immediate operations return.
    pub type SafetyOf<C> = <C as CommunicatorSafety>::Safety;

    impl RequestedThreading for Threading {
        type Safety = Unthreaded;
        fn level(&self) -> Threading {
            *self
        }
    }
}

use threading::{RequestedThreading, ThreadSafety, Unthreaded};

#[allow(non_upper_case_globals)]
impl Threading {
    /// `MPI_THREAD_SINGLE`.
    pub const Single: threading::Single = threading::Single;
    /// `MPI_THREAD_FUNNELED`.
    pub const Funneled: threading::Funneled = threading::Funneled;
    /// `MPI_THREAD_SERIALIZED`.
    pub const Serialized: threading::Serialized = threading::Serialized;
    /// `MPI_THREAD_MULTIPLE`.
    pub const Multiple: threading::Multiple = threading::Multiple;
}

impl From<ThreadLevel> for Threading {
    fn from(l: ThreadLevel) -> Threading {
        Threading(match l {
            ThreadLevel::Single => Level::Single,
            ThreadLevel::Funneled => Level::Funneled,
            ThreadLevel::Serialized => Level::Serialized,
            ThreadLevel::Multiple => Level::Multiple,
        })
    }
}

impl From<Threading> for ThreadLevel {
    fn from(t: Threading) -> ThreadLevel {
        match t.0 {
            Level::Single => ThreadLevel::Single,
            Level::Funneled => ThreadLevel::Funneled,
            Level::Serialized => ThreadLevel::Serialized,
            Level::Multiple => ThreadLevel::Multiple,
        }
    }
}

/// The MPI environment. There is at most one per process; dropping it finalizes MPI
/// (after detaching the buffered-send buffer, if any).
///
/// `S` says whether its communicators may cross threads: [`Unthreaded`] (the default,
/// below `Threading::Multiple`) or [`Multithreaded`](threading::Multithreaded).
///
/// If the thread is panicking when the `Universe` is dropped, the whole job is aborted
/// instead, so that the other ranks do not wait forever for this one.
pub struct Universe<S: ThreadSafety = Unthreaded> {
    buffer: Option<Vec<u8>>,
    _safety: S,
}

/// Starts MPI (`MPI_Init`). Returns `None` if MPI was already initialized.
///
/// An error during start-up (e.g. the process manager cannot be reached) is fatal.
///
/// ```
/// use oxmpi::traits::*;
/// let universe = oxmpi::initialize().unwrap();
/// println!("rank {} of {}", universe.world().rank(), universe.world().size());
/// ```
pub fn initialize() -> Option<Universe> {
    initialize_with_threading(Threading::Single).map(|(u, _)| u)
}

/// Starts MPI with a thread support level (`MPI_Init_thread`). Returns the `Universe`
/// and the level provided, or `None` if MPI was already initialized.
///
/// With `Threading::Multiple` the universe's communicators are `Send + Sync`:
///
/// ```
/// use oxmpi::traits::*;
/// use oxmpi::Threading;
/// let (universe, provided) = oxmpi::initialize_with_threading(Threading::Multiple).unwrap();
/// assert_eq!(provided, Threading::Multiple);
/// let world = universe.world();
/// let rank = std::thread::spawn(move || world.rank()).join().unwrap();
/// assert_eq!(rank, universe.world().rank());
/// ```
///
/// Below it they are neither (this does not compile):
///
/// ```compile_fail
/// use oxmpi::traits::*;
/// let (universe, _) = oxmpi::initialize_with_threading(oxmpi::Threading::Serialized).unwrap();
/// let world = universe.world();
/// std::thread::spawn(move || world.rank());
/// ```
pub fn initialize_with_threading<R: RequestedThreading>(
    threading: R,
) -> Option<(Universe<R::Safety>, Threading)> {
    if runtime::is_initialized() {
        return None;
    }
    match try_initialize_with_threading(threading) {
        Ok(x) => Some(x),
        Err(e) => fatal(e),
    }
}

/// [`initialize_with_threading`], reporting start-up errors (an error of class
/// `MPI_ERR_OTHER` also when MPI was already initialized).
///
/// A universe of [`Multithreaded`](threading::Multithreaded) objects needs
/// `MPI_THREAD_MULTIPLE` provided: anything less is an error of class `MPI_ERR_OTHER`
/// (and MPI is finalized again).
pub fn try_initialize_with_threading<R: RequestedThreading>(
    threading: R,
) -> Result<(Universe<R::Safety>, Threading)> {
    let provided: Threading = runtime::init(threading.level().into())?.into();
    let universe = Universe {
        buffer: None,
        _safety: R::Safety::default(),
    };
    if std::any::TypeId::of::<R::Safety>() == std::any::TypeId::of::<threading::Multithreaded>()
        && provided != Threading::Multiple
    {
        drop(universe);
        return Err(crate::Error::new(
            crate::ErrorClass::Other,
            format!("MPI_Init_thread: MPI_THREAD_MULTIPLE was requested, {provided:?} provided"),
        ));
    }
    Ok((universe, provided))
}

impl Universe<threading::Multithreaded> {
    /// Runs `f` with a scope whose requests may be completed on other threads
    /// ([`ThreadedScope`](crate::request::ThreadedScope)): this universe runs at
    /// `Threading::Multiple`, so a request may move to the thread that waits for it.
    ///
    /// ```
    /// use oxmpi::traits::*;
    /// let (universe, _) = oxmpi::initialize_with_threading(oxmpi::Threading::Multiple).unwrap();
    /// let world = universe.world();
    /// let (x, mut y) = (7i32, 0i32);
    /// universe.threaded_scope(|sc| {
    ///     let me = world.this_process();
    ///     let recv = me.immediate_receive_into(sc, &mut y);
    ///     let send = me.immediate_send(sc, &x);
    ///     std::thread::scope(|t| {
    ///         t.spawn(move || recv.wait());
    ///         t.spawn(move || send.wait());
    ///     });
    /// });
    /// assert_eq!(y, 7);
    /// ```
    pub fn threaded_scope<'a, F, R>(&self, f: F) -> R
    where
        F: FnOnce(&crate::request::ThreadedScope<'a>) -> R,
    {
        crate::request::threaded_scope(f)
    }
}

impl<S: ThreadSafety> Universe<S> {
    /// The world communicator (`MPI_COMM_WORLD`), with this universe's thread safety.
    pub fn world(&self) -> SimpleCommunicator<S> {
        SimpleCommunicator::world().with_safety()
    }

    /// The universe size (`MPI_UNIVERSE_SIZE`): how many processes the job may have
    /// in all, spawned ones included (`mpiexec -usize N`, else the host slots).
    pub fn size(&self) -> Option<usize> {
        runtime::engine().ok().map(|e| e.universe_size() as usize)
    }

    /// The number of the command of an MPMD launch this process runs (`MPI_APPNUM`):
    /// `Some(0)` under oxmpi's `mpiexec`.
    pub fn appnum(&self) -> Option<isize> {
        runtime::engine().ok().map(|e| e.appnum() as isize)
    }

    /// The machine hierarchy as seen from this process: see [`cluster_info`].
    pub fn cluster_info(&self) -> Vec<ClusterLevel> {
        cluster_info()
    }

    /// Does nothing: oxmpi does not spawn processes, so there is no parent to
    /// disconnect from (rsmpi compatibility).
    pub fn disconnect_parent(&mut self) {}

    /// The size of the buffer attached for buffered sends (0 when none).
    pub fn buffer_size(&self) -> usize {
        self.buffer.as_ref().map_or(0, |b| b.len())
    }

    /// Attaches a buffer of `size` bytes for buffered sends (`MPI_Buffer_attach`),
    /// detaching the previous one first. Each buffered message takes its length plus
    /// [`BSEND_OVERHEAD`] bytes of it until it has left. `0` detaches.
    pub fn set_buffer_size(&mut self, size: usize) {
        self.try_set_buffer_size(size).or_fatal()
    }

    /// [`set_buffer_size`](Self::set_buffer_size), reporting errors.
    pub fn try_set_buffer_size(&mut self, size: usize) -> Result<()> {
        self.try_detach_buffer()?;
        if size > 0 {
            let mut buf = vec![0u8; size];
            // Kept in `self.buffer` until `try_detach_buffer`, as MPI asks (oxmpi only
            // accounts it).
            oxmpi_core::pt2pt::buffer_attach_accounted(&mut buf)?;
            self.buffer = Some(buf);
        }
        Ok(())
    }

    /// Detaches the buffered-send buffer (`MPI_Buffer_detach`), waiting until the
    /// buffered messages have left.
    pub fn detach_buffer(&mut self) {
        self.try_detach_buffer().or_fatal()
    }

    /// [`detach_buffer`](Self::detach_buffer), reporting errors.
    pub fn try_detach_buffer(&mut self) -> Result<()> {
        if self.buffer.is_some() {
            oxmpi_core::pt2pt::buffer_detach()?;
            self.buffer = None;
        }
        Ok(())
    }
}

/// Bytes of overhead per buffered message (`MPI_BSEND_OVERHEAD`).
pub const BSEND_OVERHEAD: usize = oxmpi_core::pt2pt::BSEND_OVERHEAD;

impl<S: ThreadSafety> Drop for Universe<S> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            runtime::abort(1, "a rank panicked");
        }
        if let Err(e) = self.try_detach_buffer() {
            fatal(e);
        }
        if let Err(e) = runtime::finalize() {
            fatal(e);
        }
    }
}

/// The machine hierarchy as seen from this process (oxmpi extension, after MPICH's
/// `MPID_Topo_cluster_info`): one [`ClusterLevel`] per level, outermost first. Level 0
/// is the whole job (`cluster_id` 0, `rank` = world rank, `size` = world size); when
/// the job spans several hosts, level 1 is this process's host (`cluster_id` = host
/// index in order of first appearance, `rank` and `size` within the host). A job on one
/// shared-memory machine has one level.
///
/// ```
/// let universe = oxmpi::initialize().unwrap();
/// let levels = oxmpi::environment::cluster_info();
/// assert_eq!(levels[0].cluster_id, 0);
/// assert_eq!(levels[0].size, universe.size().unwrap() as i32);
/// ```
pub fn cluster_info() -> Vec<ClusterLevel> {
    match runtime::engine() {
        Ok(e) => e.cluster_info(),
        Err(e) => fatal(e),
    }
}

/// Seconds since an arbitrary point in the past (`MPI_Wtime`).
pub fn time() -> f64 {
    runtime::wtime()
}

/// The resolution of [`time`] in seconds (`MPI_Wtick`).
pub fn time_resolution() -> f64 {
    runtime::wtick()
}

/// Whether [`time`] is synchronized across ranks (`MPI_WTIME_IS_GLOBAL`): no.
pub fn is_timer_global() -> bool {
    false
}

/// The name of the host this rank runs on (`MPI_Get_processor_name`).
pub fn processor_name() -> std::result::Result<String, FromUtf8Error> {
    let name = match runtime::engine() {
        Ok(e) => e.processor_name().as_bytes().to_vec(),
        Err(e) => fatal(e),
    };
    String::from_utf8(name)
}

/// The library's version string (`MPI_Get_library_version`).
pub fn library_version() -> std::result::Result<String, FromUtf8Error> {
    String::from_utf8(runtime::library_version().into_bytes())
}

/// The MPI standard version implemented, `(major, minor)` (`MPI_Get_version`).
pub fn version() -> (i32, i32) {
    runtime::VERSION
}

/// The thread support level MPI was initialized with (`MPI_Query_thread`).
pub fn threading_support() -> Threading {
    match runtime::engine() {
        Ok(e) => e.thread_level().into(),
        Err(e) => fatal(e),
    }
}

/// Whether MPI has been initialized (stays true after finalize, as `MPI_Initialized`).
pub fn is_initialized() -> bool {
    runtime::is_initialized()
}

/// Whether MPI has been finalized (`MPI_Finalized`).
pub fn is_finalized() -> bool {
    runtime::is_finalized()
}

/// Whether the calling thread is the one that initialized MPI (`MPI_Is_thread_main`).
pub fn is_thread_main() -> bool {
    runtime::engine()
        .map(|e| e.is_main_thread())
        .unwrap_or(false)
}
