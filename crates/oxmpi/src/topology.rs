//! Communicators, groups, process topologies and the processes in them.
//!
//! As in rsmpi 0.8: [`SimpleCommunicator`] (world, self, and what `duplicate`,
//! `split_by_color`, `split_shared`, `split_by_subgroup*` make), the [`Communicator`]
//! trait, [`Group`]s ([`UserGroup`], [`SystemGroup`]), [`InterCommunicator`] and
//! [`CartesianCommunicator`]. oxmpi adds intercommunicator creation
//! ([`Communicator::create_intercommunicator`]), graph and distributed-graph topologies
//! ([`GraphCommunicator`], [`DistributedGraphCommunicator`]) and `try_` twins.
//!
//! ```
//! use oxmpi::traits::*;
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! let next = world.process_at_rank((world.rank() + 1) % world.size());
//! assert_eq!(world.this_process().rank(), world.rank());
//! # let _ = next;
//! ```

use std::marker::PhantomData;

use crate::environment::threading::{Multithreaded, ThreadSafety, Unthreaded};
use crate::environment::Universe;
use oxmpi_core::comm::{create as ccreate, inter as cinter, topology as ctopo};
use oxmpi_core::topo::Topology as CoreTopology;
use oxmpi_core::Comm;

use crate::error::{fatal, OrFatal, Result};
use crate::{Count, Tag};

/// The inherent constructors of a communicator type `$T<S>` that keep its thread safety
/// `S` (they shadow the [`Communicator`] methods of the same names for callers that know
/// the type; through a generic `C: Communicator` or a `dyn Communicator` the trait's
/// give [`Unthreaded`] results, which is always sound).
macro_rules! thread_level_constructors {
    ($(#[$doc:meta])* $T:ident) => {
        $(#[$doc])*
        impl<S: ThreadSafety> $T<S> {
            /// This communicator, `Send + Sync`, given the proof that MPI runs at
            /// `Threading::Multiple`: a universe of [`Multithreaded`] objects.
            pub fn into_multithreaded(self, _universe: &Universe<Multithreaded>) -> $T<Multithreaded> {
                self.with_safety()
            }

            /// [`Communicator::process_at_rank`], of this communicator's thread safety.
            pub fn process_at_rank(&self, r: Rank) -> Process<'_, S> {
                Process { comm: self.core_comm(), rank: r, _local: PhantomData }
            }
            /// [`Communicator::null_process`], of this communicator's thread safety.
            pub fn null_process(&self) -> Process<'_, S> {
                self.process_at_rank(oxmpi_core::PROC_NULL)
            }
            /// [`Communicator::any_process`], of this communicator's thread safety.
            pub fn any_process(&self) -> AnyProcess<'_, S> {
                AnyProcess { comm: self.core_comm(), _local: PhantomData }
            }
            /// [`Communicator::this_process`], of this communicator's thread safety.
            pub fn this_process(&self) -> Process<'_, S> {
                self.process_at_rank(Communicator::rank(self))
            }

            /// [`Communicator::duplicate`], of this communicator's thread safety.
            pub fn duplicate(&self) -> SimpleCommunicator<S> {
                Communicator::duplicate(self).with_safety()
            }
            /// [`Communicator::try_duplicate`], of this communicator's thread safety.
            pub fn try_duplicate(&self) -> Result<SimpleCommunicator<S>> {
                Communicator::try_duplicate(self).map(SimpleCommunicator::with_safety)
            }
            /// [`Communicator::split_by_color`], of this communicator's thread safety.
            pub fn split_by_color(&self, color: Color) -> Option<SimpleCommunicator<S>> {
                Communicator::split_by_color(self, color).map(SimpleCommunicator::with_safety)
            }
            /// [`Communicator::try_split_by_color`], of this communicator's thread safety.
            pub fn try_split_by_color(&self, color: Color) -> Result<Option<SimpleCommunicator<S>>> {
                Communicator::try_split_by_color(self, color).map(|c| c.map(SimpleCommunicator::with_safety))
            }
            /// [`Communicator::split_by_color_with_key`], of this communicator's thread safety.
            pub fn split_by_color_with_key(&self, color: Color, key: Key) -> Option<SimpleCommunicator<S>> {
                Communicator::split_by_color_with_key(self, color, key).map(SimpleCommunicator::with_safety)
            }
            /// [`Communicator::try_split_by_color_with_key`], of this communicator's thread safety.
            pub fn try_split_by_color_with_key(&self, color: Color, key: Key) -> Result<Option<SimpleCommunicator<S>>> {
                Communicator::try_split_by_color_with_key(self, color, key).map(|c| c.map(SimpleCommunicator::with_safety))
            }
            /// [`Communicator::split_shared`], of this communicator's thread safety.
            pub fn split_shared(&self, key: Key) -> SimpleCommunicator<S> {
                Communicator::split_shared(self, key).with_safety()
            }
            /// [`Communicator::try_split_shared`], of this communicator's thread safety.
            pub fn try_split_shared(&self, key: Key) -> Result<SimpleCommunicator<S>> {
                Communicator::try_split_shared(self, key).map(SimpleCommunicator::with_safety)
            }
            /// [`Communicator::split_by_type_with_key`], of this communicator's thread safety.
            pub fn split_by_type_with_key(&self, split_type: i32, key: Key) -> Option<SimpleCommunicator<S>> {
                Communicator::split_by_type_with_key(self, split_type, key).map(SimpleCommunicator::with_safety)
            }
            /// [`Communicator::try_split_by_type_with_key`], of this communicator's thread safety.
            pub fn try_split_by_type_with_key(&self, split_type: i32, key: Key) -> Result<Option<SimpleCommunicator<S>>> {
                Communicator::try_split_by_type_with_key(self, split_type, key).map(|c| c.map(SimpleCommunicator::with_safety))
            }
            /// [`Communicator::split_by_subgroup_collective`], of this communicator's thread safety.
            pub fn split_by_subgroup_collective(&self, group: &dyn Group) -> Option<SimpleCommunicator<S>> {
                Communicator::split_by_subgroup_collective(self, group).map(SimpleCommunicator::with_safety)
            }
            /// [`Communicator::try_split_by_subgroup_collective`], of this communicator's thread safety.
            pub fn try_split_by_subgroup_collective(&self, group: &dyn Group) -> Result<Option<SimpleCommunicator<S>>> {
                Communicator::try_split_by_subgroup_collective(self, group).map(|c| c.map(SimpleCommunicator::with_safety))
            }
            /// [`Communicator::split_by_subgroup`], of this communicator's thread safety.
            pub fn split_by_subgroup(&self, group: &dyn Group) -> Option<SimpleCommunicator<S>> {
                Communicator::split_by_subgroup(self, group).map(SimpleCommunicator::with_safety)
            }
            /// [`Communicator::try_split_by_subgroup`], of this communicator's thread safety.
            pub fn try_split_by_subgroup(&self, group: &dyn Group) -> Result<Option<SimpleCommunicator<S>>> {
                Communicator::try_split_by_subgroup(self, group).map(|c| c.map(SimpleCommunicator::with_safety))
            }
            /// [`Communicator::split_by_subgroup_with_tag`], of this communicator's thread safety.
            pub fn split_by_subgroup_with_tag(&self, group: &dyn Group, tag: Tag) -> Option<SimpleCommunicator<S>> {
                Communicator::split_by_subgroup_with_tag(self, group, tag).map(SimpleCommunicator::with_safety)
            }
            /// [`Communicator::try_split_by_subgroup_with_tag`], of this communicator's thread safety.
            pub fn try_split_by_subgroup_with_tag(&self, group: &dyn Group, tag: Tag) -> Result<Option<SimpleCommunicator<S>>> {
                Communicator::try_split_by_subgroup_with_tag(self, group, tag).map(|c| c.map(SimpleCommunicator::with_safety))
            }
            /// [`Communicator::create_cartesian_communicator`], of this communicator's thread safety.
            pub fn create_cartesian_communicator(&self, dims: &[Count], periods: &[bool], reorder: bool) -> Option<CartesianCommunicator<S>> {
                Communicator::create_cartesian_communicator(self, dims, periods, reorder).map(CartesianCommunicator::with_safety)
            }
            /// [`Communicator::try_create_cartesian_communicator`], of this communicator's thread safety.
            pub fn try_create_cartesian_communicator(&self, dims: &[Count], periods: &[bool], reorder: bool) -> Result<Option<CartesianCommunicator<S>>> {
                Communicator::try_create_cartesian_communicator(self, dims, periods, reorder).map(|c| c.map(CartesianCommunicator::with_safety))
            }
            /// [`Communicator::create_graph_communicator`], of this communicator's thread safety.
            pub fn create_graph_communicator(&self, index: &[Count], edges: &[Rank], reorder: bool) -> Option<GraphCommunicator<S>> {
                Communicator::create_graph_communicator(self, index, edges, reorder).map(GraphCommunicator::with_safety)
            }
            /// [`Communicator::try_create_graph_communicator`], of this communicator's thread safety.
            pub fn try_create_graph_communicator(&self, index: &[Count], edges: &[Rank], reorder: bool) -> Result<Option<GraphCommunicator<S>>> {
                Communicator::try_create_graph_communicator(self, index, edges, reorder).map(|c| c.map(GraphCommunicator::with_safety))
            }
            /// [`Communicator::create_distributed_graph_communicator_adjacent`], of this
            /// communicator's thread safety.
            pub fn create_distributed_graph_communicator_adjacent(
                &self,
                sources: &[Rank],
                source_weights: Option<&[i32]>,
                destinations: &[Rank],
                destination_weights: Option<&[i32]>,
                reorder: bool,
            ) -> DistributedGraphCommunicator<S> {
                Communicator::create_distributed_graph_communicator_adjacent(self, sources, source_weights, destinations, destination_weights, reorder).with_safety()
            }
            /// [`Communicator::try_create_distributed_graph_communicator_adjacent`], of this
            /// communicator's thread safety.
            pub fn try_create_distributed_graph_communicator_adjacent(
                &self,
                sources: &[Rank],
                source_weights: Option<&[i32]>,
                destinations: &[Rank],
                destination_weights: Option<&[i32]>,
                reorder: bool,
            ) -> Result<DistributedGraphCommunicator<S>> {
                Communicator::try_create_distributed_graph_communicator_adjacent(self, sources, source_weights, destinations, destination_weights, reorder)
                    .map(DistributedGraphCommunicator::with_safety)
            }
            /// [`Communicator::create_intercommunicator`], of this communicator's thread safety.
            pub fn create_intercommunicator(&self, local_leader: Rank, peer: &dyn Communicator, remote_leader: Rank, tag: Tag) -> InterCommunicator<S> {
                Communicator::create_intercommunicator(self, local_leader, peer, remote_leader, tag).with_safety()
            }
            /// [`Communicator::try_create_intercommunicator`], of this communicator's thread safety.
            pub fn try_create_intercommunicator(&self, local_leader: Rank, peer: &dyn Communicator, remote_leader: Rank, tag: Tag) -> Result<InterCommunicator<S>> {
                Communicator::try_create_intercommunicator(self, local_leader, peer, remote_leader, tag).map(InterCommunicator::with_safety)
            }
        }
    };
}

mod cartesian;
mod graph;
mod group;
mod inter;

pub use self::cartesian::{CartesianCommunicator, CartesianLayout};
pub use self::graph::{DistributedGraphCommunicator, GraphCommunicator};
pub use self::group::{Group, GroupRelation, SystemGroup, UserGroup};
pub use self::inter::{InterCommunicator, MergeOrder};

/// `MPI_COMM_TYPE_SHARED`, for [`Communicator::split_by_type_with_key`].
pub const COMM_TYPE_SHARED: i32 = crate::abi::MPI_COMM_TYPE_SHARED;

/// Identifies a process within a communicator.
pub type Rank = i32;

/// The topology traits, re-exported by [`crate::traits`].
pub mod traits {
    pub use super::{AsCommunicator, Communicator, Group};
    pub use crate::attribute::AnyCommunicator;
}

/// The colour of a split ([`Communicator::split_by_color`]): processes of the same
/// colour end up in one communicator; [`Color::undefined`] gets none.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Color(i32);

impl Color {
    /// `MPI_UNDEFINED`: this process wants no communicator from the split.
    pub fn undefined() -> Color {
        Color(crate::abi::MPI_UNDEFINED)
    }

    /// A colour. Panics if `value` is negative (as rsmpi).
    pub fn with_value(value: i32) -> Color {
        if value < 0 {
            panic!("Value of color must be non-negative.")
        }
        Color(value)
    }

    /// The raw value (`MPI_UNDEFINED` for [`Color::undefined`]).
    pub fn value(self) -> i32 {
        self.0
    }
}

/// Orders the processes of one colour in a split (ties go by the old rank).
pub type Key = i32;

/// The kind of topology attached to a communicator (`MPI_Topo_test`).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Topology {
    /// `MPI_GRAPH`.
    Graph,
    /// `MPI_CART`.
    Cartesian,
    /// `MPI_DIST_GRAPH`.
    DistributedGraph,
    /// No topology.
    Undefined,
}

/// A communicator converted to the type of its topology ([`SimpleCommunicator::into_topology`]).
#[derive(Debug)]
pub enum IntoTopology<S: ThreadSafety = Unthreaded> {
    /// A graph communicator.
    Graph(GraphCommunicator<S>),
    /// A Cartesian communicator.
    Cartesian(CartesianCommunicator<S>),
    /// A distributed graph communicator.
    DistributedGraph(DistributedGraphCommunicator<S>),
    /// No topology.
    Undefined(SimpleCommunicator<S>),
}

/// One level of the machine hierarchy ([`crate::environment::cluster_info`]): which
/// cluster of the level this process is in (`cluster_id`), its rank inside the cluster
/// (`rank`) and the cluster's size (`size`). Level 0 is the whole job; the next level,
/// when the job spans several hosts, is the host.
pub use oxmpi_core::runtime::ClusterLevel;

/// How two communicators relate (`MPI_Comm_compare`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommunicatorRelation {
    /// The same communicator.
    Identical,
    /// Same group, same ranks, different context.
    Congruent,
    /// Same processes, different ranks.
    Similar,
    /// Anything else.
    Unequal,
}

/// An intracommunicator: `MPI_COMM_WORLD`, `MPI_COMM_SELF`, and what `duplicate`,
/// `split_*` make. (A topology the communicator carries shows in
/// [`topology`](Self::topology); [`into_topology`](Self::into_topology) gives the typed
/// communicator.)
///
/// Handles are cheap to clone; the communicator is freed when the last handle goes
/// (running the delete callbacks of its attributes).
///
/// `S` is the thread safety: [`Unthreaded`] (the default) is neither `Send` nor `Sync`;
/// the world of a universe initialized with `Threading::Multiple` is
/// `SimpleCommunicator<Multithreaded>`, `Send + Sync` (see
/// [`initialize_with_threading`](crate::initialize_with_threading)). What is made from
/// a communicator (`duplicate`, `split_*`, the Cartesian, graph and intercommunicators,
/// the processes and through them the requests) has its thread safety;
/// [`into_multithreaded`](Self::into_multithreaded) converts the others (e.g.
/// [`SimpleCommunicator::self_comm`]) given the proof that MPI runs at
/// `Threading::Multiple`. Called through a generic `C: Communicator` or a `dyn
/// Communicator`, the constructors give [`Unthreaded`] communicators.
#[derive(Clone)]
#[repr(transparent)]
pub struct SimpleCommunicator<S = Unthreaded>(pub(crate) Comm, PhantomData<S>);

impl<S> Drop for SimpleCommunicator<S> {
    fn drop(&mut self) {
        crate::attribute::free_if_last(&self.0);
    }
}

impl<S> std::fmt::Debug for SimpleCommunicator<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimpleCommunicator")
            .field("context", &self.0.context())
            .field("rank", &self.0.rank())
            .field("size", &self.0.size())
            .finish()
    }
}

impl SimpleCommunicator {
    /// The world communicator (`MPI_COMM_WORLD`). MPI must be initialized.
    pub fn world() -> SimpleCommunicator {
        match oxmpi_core::runtime::engine() {
            Ok(e) => SimpleCommunicator::from_core(e.world().clone()),
            Err(e) => fatal(e),
        }
    }

    /// The communicator of this process alone (`MPI_COMM_SELF`). MPI must be initialized.
    pub fn self_comm() -> SimpleCommunicator {
        match oxmpi_core::runtime::engine() {
            Ok(e) => SimpleCommunicator::from_core(e.self_comm().clone()),
            Err(e) => fatal(e),
        }
    }

    /// Wraps an engine communicator (an intracommunicator).
    pub fn from_core(c: Comm) -> SimpleCommunicator {
        SimpleCommunicator(c, PhantomData)
    }
}

impl<S: ThreadSafety> SimpleCommunicator<S> {
    /// The same communicator with another marker (for the universe's own, whose level
    /// its type proves, and for what is made from a communicator, which has its level).
    pub(crate) fn with_safety<S2>(self) -> SimpleCommunicator<S2> {
        let c = self.0.clone();
        // The handle moves: the clone above keeps the engine communicator, and the
        // original's Drop (the attributes' "last handle" check) sees two handles.
        drop(self);
        SimpleCommunicator(c, PhantomData)
    }

    /// The kind of topology attached (`MPI_Topo_test`).
    pub fn topology(&self) -> Topology {
        topology_of(&self.0)
    }

    /// This communicator as the type of its topology (of the same thread safety).
    pub fn into_topology(self) -> IntoTopology<S> {
        match self.topology() {
            Topology::Cartesian => IntoTopology::Cartesian(CartesianCommunicator(self)),
            Topology::Graph => IntoTopology::Graph(GraphCommunicator(self)),
            Topology::DistributedGraph => {
                IntoTopology::DistributedGraph(DistributedGraphCommunicator(self))
            }
            Topology::Undefined => IntoTopology::Undefined(self),
        }
    }

    pub(crate) fn from_core_ref(c: &Comm) -> &SimpleCommunicator<S> {
        // SimpleCommunicator's other field is a zero-sized PhantomData.
        // SAFETY: #[repr(transparent)] over Comm: same layout and validity.
        unsafe { &*(c as *const Comm as *const SimpleCommunicator<S>) }
    }

    /// The engine's communicator.
    pub fn as_core(&self) -> &Comm {
        &self.0
    }
}

thread_level_constructors! {
    /// What makes communicators and processes, keeping this communicator's thread
    /// safety `S` (these shadow the [`Communicator`] methods of the same names, which
    /// give [`Unthreaded`] results when called through a generic `C: Communicator` or a
    /// `dyn Communicator`).
    ///
    /// ```
    /// use oxmpi::traits::*;
    /// use oxmpi::topology::Color;
    /// let (universe, _) = oxmpi::initialize_with_threading(oxmpi::Threading::Multiple).unwrap();
    /// let world = universe.world();
    /// let dup = world.duplicate();
    /// let half = world.split_by_color(Color::with_value(world.rank() % 2)).unwrap();
    /// let cart = world.create_cartesian_communicator(&[world.size()], &[true], false).unwrap();
    /// // All of them are `Send + Sync`, as the world is.
    /// std::thread::spawn(move || {
    ///     assert!(half.size() <= dup.size());
    ///     assert_eq!(cart.rank(), dup.rank());
    /// }).join().unwrap();
    /// ```
    SimpleCommunicator
}

thread_level_constructors! {
    /// What makes communicators and processes, keeping this communicator's thread
    /// safety `S` (see [`SimpleCommunicator`]'s).
    ///
    /// ```
    /// use oxmpi::traits::*;
    /// let (universe, _) = oxmpi::initialize_with_threading(oxmpi::Threading::Multiple).unwrap();
    /// let world = universe.world();
    /// let ring = world.create_cartesian_communicator(&[world.size()], &[true], false).unwrap();
    /// let sub = ring.subgroup(&[true]);
    /// let dup = ring.duplicate();
    /// std::thread::spawn(move || assert_eq!(sub.size(), dup.size())).join().unwrap();
    /// ```
    CartesianCommunicator
}

thread_level_constructors! {
    /// What makes communicators and processes, keeping this communicator's thread
    /// safety `S` (see [`SimpleCommunicator`]'s).
    ///
    /// ```
    /// use oxmpi::traits::*;
    /// let (universe, _) = oxmpi::initialize_with_threading(oxmpi::Threading::Multiple).unwrap();
    /// let world = universe.world();
    /// let n = world.size();
    /// // A ring: node i is joined to i-1 and i+1.
    /// let index: Vec<i32> = (1..=n).map(|i| 2 * i).collect();
    /// let edges: Vec<i32> = (0..n).flat_map(|i| [(i + n - 1) % n, (i + 1) % n]).collect();
    /// let graph = world.create_graph_communicator(&index, &edges, false).unwrap();
    /// std::thread::spawn(move || assert_eq!(graph.neighbors_count(0), 2)).join().unwrap();
    /// ```
    GraphCommunicator
}

thread_level_constructors! {
    /// What makes communicators and processes, keeping this communicator's thread
    /// safety `S` (see [`SimpleCommunicator`]'s).
    ///
    /// ```
    /// use oxmpi::traits::*;
    /// let (universe, _) = oxmpi::initialize_with_threading(oxmpi::Threading::Multiple).unwrap();
    /// let world = universe.world();
    /// let (n, r) = (world.size(), world.rank());
    /// let ring = world.create_distributed_graph_communicator_adjacent(
    ///     &[(r + n - 1) % n], None, &[(r + 1) % n], None, false);
    /// std::thread::spawn(move || assert_eq!(ring.sources().len(), 1)).join().unwrap();
    /// ```
    DistributedGraphCommunicator
}

thread_level_constructors! {
    /// What makes communicators and processes, keeping this communicator's thread
    /// safety `S` (see [`SimpleCommunicator`]'s).
    ///
    /// ```no_run
    /// use oxmpi::traits::*;
    /// use oxmpi::topology::{Color, MergeOrder};
    /// let (universe, _) = oxmpi::initialize_with_threading(oxmpi::Threading::Multiple).unwrap();
    /// let world = universe.world();
    /// let half = world.rank() % 2;
    /// let local = world.split_by_color(Color::with_value(half)).unwrap();
    /// let inter = local.create_intercommunicator(0, &world, 1 - half, 7);
    /// // The intercommunicator and its merge are `Send + Sync`, as the world is.
    /// let merged = std::thread::spawn(move || inter.merge(MergeOrder::Low)).join().unwrap();
    /// assert_eq!(merged.size(), world.size());
    /// ```
    InterCommunicator
}

/// Something that has a communicator (processes have theirs).
pub trait AsCommunicator {
    /// The communicator's type.
    type Out: Communicator;
    /// The communicator.
    fn as_communicator(&self) -> &Self::Out;
}

/// What all communicators can do.
pub trait Communicator {
    /// The engine's communicator behind this one.
    #[doc(hidden)]
    fn core_comm(&self) -> &Comm;

    /// The engine's communicator, exclusively (`None`: the handle lends none).
    #[doc(hidden)]
    fn core_comm_mut(&mut self) -> Option<&mut Comm> {
        None
    }

    /// Number of processes in the communicator (`MPI_Comm_size`).
    fn size(&self) -> Rank {
        self.core_comm().size()
    }

    /// The rank of the calling process (`MPI_Comm_rank`).
    fn rank(&self) -> Rank {
        self.core_comm().rank()
    }

    /// The process of rank `r`. The rank is checked when the process is used: a rank
    /// outside `0..size()` makes operations fail with [`ErrorClass::Rank`](crate::ErrorClass::Rank).
    fn process_at_rank(&self, r: Rank) -> Process<'_> {
        Process {
            comm: self.core_comm(),
            rank: r,
            _local: PhantomData,
        }
    }

    /// The `MPI_PROC_NULL` process: sends to it and receives from it do nothing.
    fn null_process(&self) -> Process<'_> {
        Process {
            comm: self.core_comm(),
            rank: oxmpi_core::PROC_NULL,
            _local: PhantomData,
        }
    }

    /// Any process of the communicator, as the source of a receive (`MPI_ANY_SOURCE`).
    fn any_process(&self) -> AnyProcess<'_> {
        AnyProcess {
            comm: self.core_comm(),
            _local: PhantomData,
        }
    }

    /// The calling process.
    fn this_process(&self) -> Process<'_> {
        self.process_at_rank(self.rank())
    }

    /// The size of the group that point-to-point ranks name: [`size`](Self::size) for an
    /// intracommunicator, the remote group's size for an intercommunicator.
    fn target_size(&self) -> Rank {
        self.core_comm().peer_group_size()
    }

    /// The thread safety of this communicator and of what is made from it:
    /// [`Unthreaded`] or [`Multithreaded`] (see [`SimpleCommunicator`]).
    type Safety: ThreadSafety
    where
        Self: Sized;

    /// Compares two communicators (`MPI_Comm_compare`).
    fn compare(&self, other: &dyn Communicator) -> CommunicatorRelation {
        match ccreate::compare(self.core_comm(), other.core_comm()) {
            ccreate::Comparison::Ident => CommunicatorRelation::Identical,
            ccreate::Comparison::Congruent => CommunicatorRelation::Congruent,
            ccreate::Comparison::Similar => CommunicatorRelation::Similar,
            ccreate::Comparison::Unequal => CommunicatorRelation::Unequal,
        }
    }

    /// A new communicator with the same group and a new context (`MPI_Comm_dup`).
    /// Attributes are copied as their types say ([`CommAttribute::CLONE_ON_DUP`](crate::attribute::CommAttribute::CLONE_ON_DUP)),
    /// and the topology is kept (see [`SimpleCommunicator::into_topology`]).
    /// Collective.
    fn duplicate(&self) -> SimpleCommunicator {
        self.try_duplicate().or_fatal()
    }
    /// [`duplicate`](Self::duplicate), reporting errors.
    fn try_duplicate(&self) -> Result<SimpleCommunicator> {
        ccreate::dup(self.core_comm()).map(SimpleCommunicator::from_core)
    }

    /// Bytes that packing `incount` elements of `datatype` takes (`MPI_Pack_size`).
    fn pack_size<Dt>(&self, incount: Count, datatype: &Dt) -> Count
    where
        Dt: crate::datatype::Datatype,
        Self: Sized,
    {
        let dt = datatype.as_datatype_ref();
        let n = oxmpi_core::datatype::pack_size(dt.as_core(), incount.max(0) as usize);
        Count::try_from(n).unwrap_or(Count::MAX)
    }

    /// Packs `inbuf` into a new byte vector (`MPI_Pack`).
    fn pack<Buf>(&self, inbuf: &Buf) -> Vec<u8>
    where
        Buf: ?Sized + crate::datatype::Buffer,
        Self: Sized,
    {
        self.try_pack(inbuf).or_fatal()
    }

    /// [`pack`](Self::pack), reporting errors.
    fn try_pack<Buf>(&self, inbuf: &Buf) -> Result<Vec<u8>>
    where
        Buf: ?Sized + crate::datatype::Buffer,
        Self: Sized,
    {
        let dt = inbuf.as_datatype();
        let mut out = vec![0u8; self.pack_size(inbuf.count(), &dt) as usize];
        let end = self.try_pack_into(inbuf, &mut out, 0)?;
        out.truncate(end as usize);
        Ok(out)
    }

    /// Packs `inbuf` into `outbuf` at byte `position`; returns the position after
    /// it (`MPI_Pack`).
    fn pack_into<Buf>(&self, inbuf: &Buf, outbuf: &mut [u8], position: Count) -> Count
    where
        Buf: ?Sized + crate::datatype::Buffer,
        Self: Sized,
    {
        self.try_pack_into(inbuf, outbuf, position).or_fatal()
    }

    /// [`pack_into`](Self::pack_into), reporting errors (a buffer too small is
    /// `ErrorClass::Arg`, nothing written).
    fn try_pack_into<Buf>(&self, inbuf: &Buf, outbuf: &mut [u8], position: Count) -> Result<Count>
    where
        Buf: ?Sized + crate::datatype::Buffer,
        Self: Sized,
    {
        let mut pos = position.max(0) as usize;
        oxmpi_core::buf::pack(crate::datatype::typed_in(inbuf).desc(), outbuf, &mut pos)?;
        Ok(pos as Count)
    }

    /// Unpacks from `inbuf` at byte `position` into `outbuf`; returns the position
    /// after what was read (`MPI_Unpack`).
    ///
    /// # Safety
    /// The bytes read must be a packed image of `outbuf`'s element type (as
    /// produced by [`pack`](Self::pack) of the same type), or `outbuf` may end
    /// up holding invalid values of its Rust type.
    unsafe fn unpack_into<Buf>(&self, inbuf: &[u8], outbuf: &mut Buf, position: Count) -> Count
    where
        Buf: ?Sized + crate::datatype::BufferMut,
        Self: Sized,
    {
        unpack_checked(inbuf, outbuf, position).or_fatal()
    }

    /// [`unpack_into`](Self::unpack_into), reporting errors (too few bytes is
    /// `ErrorClass::Arg`, as for packing).
    ///
    /// # Safety
    /// As [`unpack_into`](Self::unpack_into).
    unsafe fn try_unpack_into<Buf>(
        &self,
        inbuf: &[u8],
        outbuf: &mut Buf,
        position: Count,
    ) -> Result<Count>
    where
        Buf: ?Sized + crate::datatype::BufferMut,
        Self: Sized,
    {
        unpack_checked(inbuf, outbuf, position)
    }

    /// Splits the communicator by colour (`MPI_Comm_split` with key 0): processes that
    /// pass the same colour form a communicator, in their old rank order;
    /// [`Color::undefined`] gets `None`. Collective.
    fn split_by_color(&self, color: Color) -> Option<SimpleCommunicator> {
        self.split_by_color_with_key(color, Key::default())
    }
    /// [`split_by_color`](Self::split_by_color), reporting errors.
    fn try_split_by_color(&self, color: Color) -> Result<Option<SimpleCommunicator>> {
        self.try_split_by_color_with_key(color, Key::default())
    }

    /// Splits the communicator by colour, ordering each new communicator by `key`
    /// (ties by the old rank) (`MPI_Comm_split`). Collective.
    fn split_by_color_with_key(&self, color: Color, key: Key) -> Option<SimpleCommunicator> {
        self.try_split_by_color_with_key(color, key).or_fatal()
    }
    /// [`split_by_color_with_key`](Self::split_by_color_with_key), reporting errors.
    fn try_split_by_color_with_key(
        &self,
        color: Color,
        key: Key,
    ) -> Result<Option<SimpleCommunicator>> {
        ccreate::split(
            self.core_comm(),
            (color.0 != crate::abi::MPI_UNDEFINED).then_some(color.0),
            key,
        )
        .map(simple)
    }

    /// The processes that share memory with this one (one host), ordered by `key` then
    /// by old rank (`MPI_Comm_split_type` with `MPI_COMM_TYPE_SHARED`). Collective.
    fn split_shared(&self, key: Key) -> SimpleCommunicator {
        self.try_split_shared(key).or_fatal()
    }
    /// [`split_shared`](Self::split_shared), reporting errors.
    fn try_split_shared(&self, key: Key) -> Result<SimpleCommunicator> {
        ccreate::split_type(self.core_comm(), Some(ccreate::SplitType::Shared), key)?
            .map(SimpleCommunicator::from_core)
            .ok_or_else(|| {
                crate::Error::new(
                    crate::ErrorClass::Intern,
                    "MPI_Comm_split_type: no communicator for MPI_COMM_TYPE_SHARED",
                )
            })
    }

    /// `MPI_Comm_split_type` with a raw split type (`MPI_COMM_TYPE_SHARED` is
    /// [`COMM_TYPE_SHARED`], `MPI_UNDEFINED` gets `None`). Collective.
    fn split_by_type_with_key(&self, split_type: i32, key: Key) -> Option<SimpleCommunicator> {
        self.try_split_by_type_with_key(split_type, key).or_fatal()
    }
    /// [`split_by_type_with_key`](Self::split_by_type_with_key), reporting errors.
    fn try_split_by_type_with_key(
        &self,
        split_type: i32,
        key: Key,
    ) -> Result<Option<SimpleCommunicator>> {
        let split_type = match split_type {
            crate::abi::MPI_UNDEFINED => None,
            t => Some(crate::abi::split_type_from_value(t).ok_or_else(|| {
                crate::Error::arg(
                    crate::ErrorClass::Arg,
                    "MPI_Comm_split_type",
                    "split_type",
                    format!("{t} is not MPI_COMM_TYPE_SHARED nor MPI_UNDEFINED"),
                )
            })?),
        };
        ccreate::split_type(self.core_comm(), split_type, key).map(simple)
    }

    /// The communicator of `group`, a subgroup of this communicator's group, in the
    /// group's order (`MPI_Comm_create`). Collective over the whole communicator (every
    /// process passes the same group, or — as MPI allows — the members a group with
    /// themselves and the others a disjoint one); processes not in `group` get `None`.
    fn split_by_subgroup_collective(&self, group: &dyn Group) -> Option<SimpleCommunicator> {
        self.try_split_by_subgroup_collective(group).or_fatal()
    }
    /// [`split_by_subgroup_collective`](Self::split_by_subgroup_collective), reporting errors.
    fn try_split_by_subgroup_collective(
        &self,
        group: &dyn Group,
    ) -> Result<Option<SimpleCommunicator>> {
        ccreate::create(self.core_comm(), group.core_group().world_ranks()).map(simple)
    }

    /// The communicator of `group`, a subgroup of this communicator's group
    /// (`MPI_Comm_create_group` with tag 0). Collective over `group` only; a process not
    /// in `group` gets `None` at once.
    fn split_by_subgroup(&self, group: &dyn Group) -> Option<SimpleCommunicator> {
        self.split_by_subgroup_with_tag(group, Tag::default())
    }
    /// [`split_by_subgroup`](Self::split_by_subgroup), reporting errors.
    fn try_split_by_subgroup(&self, group: &dyn Group) -> Result<Option<SimpleCommunicator>> {
        self.try_split_by_subgroup_with_tag(group, Tag::default())
    }

    /// [`split_by_subgroup`](Self::split_by_subgroup) with a tag that keeps concurrent
    /// calls on the same communicator apart (`MPI_Comm_create_group`).
    fn split_by_subgroup_with_tag(
        &self,
        group: &dyn Group,
        tag: Tag,
    ) -> Option<SimpleCommunicator> {
        self.try_split_by_subgroup_with_tag(group, tag).or_fatal()
    }
    /// [`split_by_subgroup_with_tag`](Self::split_by_subgroup_with_tag), reporting errors.
    fn try_split_by_subgroup_with_tag(
        &self,
        group: &dyn Group,
        tag: Tag,
    ) -> Result<Option<SimpleCommunicator>> {
        group::create_group(self.core_comm(), group.core_group().world_ranks(), tag).map(simple)
    }

    /// The group of the communicator (`MPI_Comm_group`; the local group of an
    /// intercommunicator).
    fn group(&self) -> UserGroup {
        UserGroup::from_world_ranks(self.core_comm().group().to_vec())
    }

    /// Whether this is an intercommunicator (`MPI_Comm_test_inter`).
    fn test_inter(&self) -> bool {
        self.core_comm().is_inter()
    }

    /// Names the communicator (`MPI_Comm_set_name`); a local operation.
    fn set_name(&self, name: &str) {
        self.core_comm().set_name(name)
    }

    /// The communicator's name (`MPI_Comm_get_name`): `MPI_COMM_WORLD` and
    /// `MPI_COMM_SELF` for the predefined ones until renamed, otherwise what
    /// [`set_name`](Self::set_name) set, or the empty string.
    fn get_name(&self) -> String {
        let c = self.core_comm();
        let name = c.name();
        if name.is_empty() && !c.0.owns_context {
            match c.context() {
                oxmpi_core::comm::WORLD_CONTEXT => return "MPI_COMM_WORLD".into(),
                oxmpi_core::comm::SELF_CONTEXT => return "MPI_COMM_SELF".into(),
                _ => {}
            }
        }
        name
    }

    /// A communicator with a Cartesian grid of `dims` (periodic where `periods` says)
    /// over the first `dims.iter().product()` processes (`MPI_Cart_create`); the
    /// processes beyond the grid get `None`. `reorder` is accepted; ranks keep their
    /// order. Collective.
    fn create_cartesian_communicator(
        &self,
        dims: &[Count],
        periods: &[bool],
        reorder: bool,
    ) -> Option<CartesianCommunicator> {
        self.try_create_cartesian_communicator(dims, periods, reorder)
            .or_fatal()
    }
    /// [`create_cartesian_communicator`](Self::create_cartesian_communicator), reporting errors.
    fn try_create_cartesian_communicator(
        &self,
        dims: &[Count],
        periods: &[bool],
        reorder: bool,
    ) -> Result<Option<CartesianCommunicator>> {
        Ok(
            ctopo::cart_create(self.core_comm(), dims, periods, reorder)?
                .map(|c| CartesianCommunicator(SimpleCommunicator::from_core(c))),
        )
    }

    /// The rank this process would get in a Cartesian grid of `dims`, `None` if it would
    /// not be in it (`MPI_Cart_map`; oxmpi maps ranks to themselves). Local. As with
    /// MPICH, a grid with a dimension of size 0 holds no process (`None` everywhere).
    fn cartesian_map(&self, dims: &[Count], periods: &[bool]) -> Option<Rank> {
        self.try_cartesian_map(dims, periods).or_fatal()
    }
    /// [`cartesian_map`](Self::cartesian_map), reporting errors.
    fn try_cartesian_map(&self, dims: &[Count], periods: &[bool]) -> Result<Option<Rank>> {
        let c = self.core_comm();
        // A grid with a dimension of size 0 has no process: every rank is outside it
        // (what MPICH answers; the C binding reports MPI_ERR_DIMS).
        if dims.contains(&0) && dims.iter().all(|&d| d >= 0) && periods.len() == dims.len() {
            return Ok(None);
        }
        oxmpi_core::topo::Cart::map(dims, periods, c.rank(), c.size())
    }

    /// A communicator with a graph topology in `MPI_Graph_create`'s encoding
    /// (`index[i]` = number of neighbours of nodes `0..=i`, `edges` = the neighbours of
    /// node 0, then of node 1, ...) over the first `index.len()` processes; the others
    /// get `None`. Collective. (oxmpi extension: rsmpi 0.8 has no graph constructor.)
    fn create_graph_communicator(
        &self,
        index: &[Count],
        edges: &[Rank],
        reorder: bool,
    ) -> Option<GraphCommunicator> {
        self.try_create_graph_communicator(index, edges, reorder)
            .or_fatal()
    }
    /// [`create_graph_communicator`](Self::create_graph_communicator), reporting errors.
    fn try_create_graph_communicator(
        &self,
        index: &[Count],
        edges: &[Rank],
        reorder: bool,
    ) -> Result<Option<GraphCommunicator>> {
        Ok(
            ctopo::graph_create(self.core_comm(), index.len() as i32, index, edges, reorder)?
                .map(|c| GraphCommunicator(SimpleCommunicator::from_core(c))),
        )
    }

    /// A communicator with a distributed graph topology where each process names its
    /// own neighbours: it receives from `sources` and sends to `destinations`, with
    /// weights for both or for neither (`MPI_Dist_graph_create_adjacent`). Collective.
    /// (oxmpi extension.)
    fn create_distributed_graph_communicator_adjacent(
        &self,
        sources: &[Rank],
        source_weights: Option<&[i32]>,
        destinations: &[Rank],
        destination_weights: Option<&[i32]>,
        reorder: bool,
    ) -> DistributedGraphCommunicator {
        self.try_create_distributed_graph_communicator_adjacent(
            sources,
            source_weights,
            destinations,
            destination_weights,
            reorder,
        )
        .or_fatal()
    }
    /// [`create_distributed_graph_communicator_adjacent`](Self::create_distributed_graph_communicator_adjacent),
    /// reporting errors.
    fn try_create_distributed_graph_communicator_adjacent(
        &self,
        sources: &[Rank],
        source_weights: Option<&[i32]>,
        destinations: &[Rank],
        destination_weights: Option<&[i32]>,
        reorder: bool,
    ) -> Result<DistributedGraphCommunicator> {
        ctopo::dist_graph_create_adjacent(
            self.core_comm(),
            sources,
            source_weights,
            destinations,
            destination_weights,
            reorder,
        )
        .map(|c| DistributedGraphCommunicator(SimpleCommunicator::from_core(c)))
    }

    /// An intercommunicator between this communicator's group and another, disjoint
    /// one (`MPI_Intercomm_create`). Collective over this communicator;
    /// `local_leader` is the rank here that talks to the other group's leader, which
    /// has rank `remote_leader` in `peer` (only the local leader uses `peer`, e.g. the
    /// world). Both leaders must pass the same `tag`. (oxmpi extension: rsmpi 0.8 makes
    /// intercommunicators only by spawning.)
    fn create_intercommunicator(
        &self,
        local_leader: Rank,
        peer: &dyn Communicator,
        remote_leader: Rank,
        tag: Tag,
    ) -> InterCommunicator {
        self.try_create_intercommunicator(local_leader, peer, remote_leader, tag)
            .or_fatal()
    }
    /// [`create_intercommunicator`](Self::create_intercommunicator), reporting errors.
    fn try_create_intercommunicator(
        &self,
        local_leader: Rank,
        peer: &dyn Communicator,
        remote_leader: Rank,
        tag: Tag,
    ) -> Result<InterCommunicator> {
        cinter::intercomm_create(
            self.core_comm(),
            local_leader,
            Some(peer.core_comm()),
            remote_leader,
            tag,
        )
        .map(InterCommunicator::from_core)
    }

    /// The intercommunicator to the parent job (`MPI_Comm_get_parent`): `Some` in a
    /// process started by [`Root::spawn`](crate::traits::Root::spawn) (or any
    /// MPI's spawn), until it is disconnected.
    fn parent(&self) -> Option<InterCommunicator> {
        crate::dynamic::parent()
    }

    /// Ends the whole job with `errorcode` (`MPI_Abort`).
    fn abort(&self, errorcode: i32) -> ! {
        oxmpi_core::runtime::abort(errorcode, "")
    }
}

impl<S: ThreadSafety> Communicator for SimpleCommunicator<S> {
    type Safety = S;
    fn core_comm(&self) -> &Comm {
        &self.0
    }
    fn core_comm_mut(&mut self) -> Option<&mut Comm> {
        Some(&mut self.0)
    }
}

/// `MPI_Unpack` into `outbuf`, then the check of the elements it wrote (values of
/// `bool`/`char` the bytes do not make valid become the zero value, and an error
/// says so), so that no invalid value is left behind whatever the bytes were.
fn unpack_checked<Buf>(inbuf: &[u8], outbuf: &mut Buf, position: Count) -> Result<Count>
where
    Buf: ?Sized + crate::datatype::BufferMut,
{
    let mut pos = position.max(0) as usize;
    let mut t = crate::datatype::typed_out(outbuf);
    oxmpi_core::buf::unpack(inbuf, &mut pos, t.desc_mut())?;
    t.check_out("MPI_Unpack")?;
    Ok(pos as Count)
}

pub(crate) fn topology_of(c: &Comm) -> Topology {
    match c.topology() {
        None => Topology::Undefined,
        Some(CoreTopology::Cart(_)) => Topology::Cartesian,
        Some(CoreTopology::Graph(_)) => Topology::Graph,
        Some(CoreTopology::DistGraph(_)) => Topology::DistributedGraph,
    }
}

fn simple(c: Option<Comm>) -> Option<SimpleCommunicator> {
    c.map(SimpleCommunicator::from_core)
}

impl<S: ThreadSafety> AsCommunicator for SimpleCommunicator<S> {
    type Out = SimpleCommunicator<S>;
    fn as_communicator(&self) -> &SimpleCommunicator<S> {
        self
    }
}

/// A process identified by its rank in a communicator: a [`Source`](crate::point_to_point::Source)
/// and a [`Destination`](crate::point_to_point::Destination).
///
/// `S` is the thread safety of its communicator, which the requests of its immediate
/// operations carry.
pub struct Process<'a, S = Unthreaded> {
    pub(crate) comm: &'a Comm,
    pub(crate) rank: Rank,
    /// Neither `Send` nor `Sync`: a process handle is used on the thread that made it
    /// (a `Multithreaded` communicator moves; its processes are made where it is).
    pub(crate) _local: PhantomData<(*const (), S)>,
}

impl<S> Clone for Process<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for Process<'_, S> {}

impl<'a, S> Process<'a, S> {
    /// The process's rank in its communicator.
    pub fn rank(&self) -> Rank {
        self.rank
    }

    /// Whether this is the calling process.
    pub fn is_self(&self) -> bool {
        self.rank == self.comm.rank()
    }
}

impl<S> std::fmt::Debug for Process<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Process").field("rank", &self.rank).finish()
    }
}

impl<S: ThreadSafety> AsCommunicator for Process<'_, S> {
    type Out = SimpleCommunicator<S>;
    fn as_communicator(&self) -> &SimpleCommunicator<S> {
        SimpleCommunicator::from_core_ref(self.comm)
    }
}

/// Any process of a communicator, as the source of a receive (`MPI_ANY_SOURCE`); `S` as
/// [`Process`]'s.
pub struct AnyProcess<'a, S = Unthreaded> {
    pub(crate) comm: &'a Comm,
    /// As [`Process`]'s.
    pub(crate) _local: PhantomData<(*const (), S)>,
}

impl<S> Clone for AnyProcess<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for AnyProcess<'_, S> {}

impl<S> std::fmt::Debug for AnyProcess<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AnyProcess")
    }
}

impl<S: ThreadSafety> AsCommunicator for AnyProcess<'_, S> {
    type Out = SimpleCommunicator<S>;
    fn as_communicator(&self) -> &SimpleCommunicator<S> {
        SimpleCommunicator::from_core_ref(self.comm)
    }
}
