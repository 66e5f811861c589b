//! Intercommunicators: two disjoint groups, point-to-point across.
#![deny(unsafe_code)]

use oxmpi_core::comm::inter as cinter;
use oxmpi_core::Comm;

use std::marker::PhantomData;

use super::{AsCommunicator, Communicator, Rank, SimpleCommunicator, UserGroup};
use crate::environment::threading::{ThreadSafety, Unthreaded};
use crate::error::{OrFatal, Result};

/// An intercommunicator: a local and a remote group. Point-to-point operations name
/// processes of the remote group ([`Communicator::process_at_rank`] takes a remote
/// rank, and a receive reports the sender's rank in the remote group); `size`, `rank`
/// and `group` describe the local group. Made by
/// [`Communicator::create_intercommunicator`]. `S` is its thread safety, as
/// [`SimpleCommunicator`]'s.
///
/// ```no_run
/// use oxmpi::traits::*;
/// use oxmpi::topology::{Color, MergeOrder};
/// let universe = oxmpi::initialize().unwrap();
/// let world = universe.world();
/// let half = (world.rank() % 2) as i32;
/// let local = world.split_by_color(Color::with_value(half)).unwrap();
/// // Leaders: rank 0 of each half, world ranks 0 and 1.
/// let inter = local.create_intercommunicator(0, &world, 1 - half, 7);
/// assert_eq!(inter.remote_size() + inter.size(), world.size());
/// let merged = inter.merge(if half == 0 { MergeOrder::Low } else { MergeOrder::High });
/// assert_eq!(merged.size(), world.size());
/// ```
#[derive(Clone)]
pub struct InterCommunicator<S: ThreadSafety = Unthreaded>(pub(crate) Comm, PhantomData<S>);

impl<S: ThreadSafety> std::fmt::Debug for InterCommunicator<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InterCommunicator")
            .field("context", &self.0.context())
            .field("rank", &self.0.rank())
            .field("size", &self.0.size())
            .field("remote_size", &self.0.peer_group_size())
            .finish()
    }
}

impl<S: ThreadSafety> Drop for InterCommunicator<S> {
    fn drop(&mut self) {
        crate::attribute::free_if_last(&self.0);
    }
}

/// Which group comes first in [`InterCommunicator::merge`]: the group whose processes
/// pass `Low` (on a tie, the group of the lower world rank).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MergeOrder {
    /// This group's processes come first.
    Low,
    /// This group's processes come last.
    High,
}

impl InterCommunicator {
    /// Wraps an engine intercommunicator.
    pub(crate) fn from_core(c: Comm) -> InterCommunicator {
        InterCommunicator(c, PhantomData)
    }
}

impl<S: ThreadSafety> InterCommunicator<S> {
    /// The same communicator with another thread-safety marker (the handle moves, as
    /// [`SimpleCommunicator`]'s).
    pub(crate) fn with_safety<S2: ThreadSafety>(self) -> InterCommunicator<S2> {
        let c = self.0.clone();
        drop(self);
        InterCommunicator(c, PhantomData)
    }

    /// The number of processes in the remote group (`MPI_Comm_remote_size`).
    pub fn remote_size(&self) -> Rank {
        self.0.peer_group_size()
    }

    /// The remote group (`MPI_Comm_remote_group`).
    pub fn remote_group(&self) -> UserGroup {
        UserGroup::from_world_ranks(self.0.peer_group().to_vec())
    }

    /// One intracommunicator over both groups (`MPI_Intercomm_merge`). Collective over
    /// both groups; all processes of one group pass the same order.
    pub fn merge(&self, merge_order: MergeOrder) -> SimpleCommunicator<S> {
        self.try_merge(merge_order).or_fatal()
    }

    /// [`merge`](Self::merge), reporting errors.
    pub fn try_merge(&self, merge_order: MergeOrder) -> Result<SimpleCommunicator<S>> {
        cinter::intercomm_merge(&self.0, merge_order == MergeOrder::High)
            .map(|c| SimpleCommunicator::from_core(c).with_safety())
    }
}

impl<S: ThreadSafety> Communicator for InterCommunicator<S> {
    type Safety = S;
    fn core_comm(&self) -> &Comm {
        &self.0
    }
    fn core_comm_mut(&mut self) -> Option<&mut Comm> {
        Some(&mut self.0)
    }
}

impl<S: ThreadSafety> AsCommunicator for InterCommunicator<S> {
    type Out = InterCommunicator<S>;
    fn as_communicator(&self) -> &InterCommunicator<S> {
        self
    }
}
