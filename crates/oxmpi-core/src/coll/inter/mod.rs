//! Collectives on intercommunicators (MPI-2 semantics).
//!
//! Every operation here is ONE schedule on the intercommunicator itself: its
//! sends name ranks of the remote group, its receives name the sender's rank in
//! the sender's (= the remote) group, and all of it travels on the
//! intercommunicator's collective context with its collective tag. Both groups
//! call the collective, so both take the same next tag. The same schedule serves
//! the blocking call and the non-blocking one (`MPI_I...`), as for
//! intracommunicators.
//!
//! A schedule on an intercommunicator cannot talk to its own group, so the steps
//! that MPICH runs as intra-group collectives go through the other group's
//! leader (local rank 0) instead ("relay"): e.g. for allreduce every rank sends
//! its input to the remote leader, each leader reduces the other group's inputs
//! in rank order, the leaders swap results, and each leader sends the result it
//! received to every rank of the other group. Rooted operations are linear at
//! the root. This keeps every operation schedulable; the leaders and roots do
//! O(group size) work, which is the right trade for the group sizes
//! intercommunicators are used with so far.
//!
//! Roots: in the root's group the root passes [`ROOT`] (MPI_ROOT) and the other
//! ranks [`PROC_NULL`]; the other group passes the root's rank in the remote
//! group. MPI_IN_PLACE is not defined for intercommunicator collectives and is
//! rejected where a buffer is significant.
//!
//! Results: allgather(v) and allreduce deliver to each group the data
//! (reduction) of the OTHER group; alltoall(v): rank i of one group sends its
//! block j to rank j of the other group; reduce_scatter(_block): the reduction
//! of one group's inputs (`sum(recvcounts)` elements, equal in both groups) is
//! scattered over the other group by that group's recvcounts.
mod all;
mod reduce;
mod rooted;

pub(crate) use all::{allgather, allgatherv, alltoall, alltoallv, alltoallw, barrier};
pub(crate) use reduce::{allreduce, reduce, reduce_scatter};
pub(crate) use rooted::{bcast, gather, gatherv, scatter, scatterv};

use crate::comm::Comm;
use crate::error::{ErrorClass, MpiError, Result};
pub use crate::request::PROC_NULL;

/// MPI_ROOT (the ABI value): the root's own `root` argument on an intercommunicator.
pub const ROOT: i32 = -4;

/// What a rank does in a rooted intercommunicator collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// The root (passed MPI_ROOT).
    Root,
    /// Another rank of the root's group (passed MPI_PROC_NULL): does nothing.
    Idle,
    /// A rank of the other group; the root is this rank of the remote group.
    Leaf(i32),
}

/// Interprets the `root` argument of a rooted intercommunicator collective.
pub(crate) fn role(call: &str, comm: &Comm, root: i32) -> Result<Role> {
    match root {
        ROOT => Ok(Role::Root),
        PROC_NULL => Ok(Role::Idle),
        r if r >= 0 && r < comm.peer_group_size() => Ok(Role::Leaf(r)),
        r => Err(MpiError::arg(
            ErrorClass::Root,
            call,
            "root",
            format!(
                "{r} is neither MPI_ROOT, MPI_PROC_NULL nor a rank of the remote group (0..{}) of this intercommunicator",
                comm.peer_group_size()
            ),
        )),
    }
}

/// MPI_IN_PLACE where a buffer is significant on an intercommunicator.
pub(crate) fn no_in_place(call: &str, arg: &str) -> MpiError {
    MpiError::arg(
        ErrorClass::Buffer,
        call,
        arg,
        "MPI_IN_PLACE is not allowed on an intercommunicator",
    )
}
