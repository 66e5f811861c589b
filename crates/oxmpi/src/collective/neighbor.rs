//! Neighbourhood collectives (`MPI_Neighbor_allgather(v)`, `MPI_Neighbor_alltoall(v)`
//! and their immediate forms) on communicators with a process topology: Cartesian,
//! graph and distributed graph. Block `i` of the receive buffer comes from the `i`-th
//! source, block `j` of an all-to-all's send buffer goes to the `j`-th destination
//! (Cartesian: per dimension the -1 then the +1 neighbour, a missing neighbour of a
//! non-periodic grid moves nothing and leaves its block untouched).
//!
//! ```
//! use oxmpi::datatype::{Partition, PartitionMut};
//! use oxmpi::traits::*;
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! let (n, me) = (world.size(), world.rank());
//! // A periodic ring: the sources and destinations are [left, right].
//! let ring = world.create_cartesian_communicator(&[n], &[true], false).unwrap();
//! let (left, right) = ((me + n - 1) % n, (me + 1) % n);
//!
//! let mut got = [0i32; 2];
//! ring.neighbor_all_gather_into(&me, &mut got[..]);
//! assert_eq!(got, [left, right]);
//!
//! // Block 0 to the left, block 1 to the right.
//! ring.neighbor_all_to_all_into(&[10 * me, 10 * me + 1][..], &mut got[..]);
//! assert_eq!(got, [10 * left + 1, 10 * right]);
//!
//! // Varcount: the left neighbour's value at 2, the right one's at 0.
//! let mut three = [-1i32; 3];
//! let mut part = PartitionMut::new(&mut three[..], &[1, 1][..], &[2, 0][..]);
//! ring.neighbor_all_gather_varcount_into(&me, &mut part);
//! assert_eq!(three, [right, -1, left]);
//!
//! // One element to the left, two to the right; two from the left, one from the right.
//! let send = [me, 100 + me, 200 + me];
//! let sp = Partition::new(&send[..], &[1, 2][..], &[0, 1][..]);
//! let mut rp = PartitionMut::new(&mut three[..], &[2, 1][..], &[0, 2][..]);
//! ring.neighbor_all_to_all_varcount_into(&sp, &mut rp);
//! assert_eq!(three, [100 + left, 200 + left, right]);
//!
//! // Immediate: the buffers are borrowed by a scope until the request completes.
//! oxmpi::request::scope(|sc| {
//!     ring.immediate_neighbor_all_gather_into(sc, &me, &mut got[..]).wait();
//! });
//! assert_eq!(got, [left, right]);
//! ```
#![deny(unsafe_code)]

use oxmpi_core::coll::api_move as mv;
use oxmpi_core::Comm;

use super::{blocks, disjoint, parts, per_process, started, Mode, Parts};
use crate::datatype::{
    typed_in, typed_out, Buffer, BufferMut, PartitionedBuffer, PartitionedBufferMut, Typed,
    TypedMut,
};
use crate::environment::threading::ThreadSafety;
use crate::environment::threading::{CommunicatorSafety, SafetyOf};
use crate::error::{Error, ErrorClass, OrFatal, Result};
use crate::request::{immediate_mut, persistent_mut, PersistentRequest, Request, Scope};
use crate::topology::{
    CartesianCommunicator, Communicator, DistributedGraphCommunicator, GraphCommunicator,
};
use oxmpi_core::coll::persistent as cp;
use oxmpi_core::Request as RawRequest;

/// A communicator with a process topology, whose neighbours the neighbourhood
/// collectives address (sealed: Cartesian, graph and distributed-graph communicators).
pub trait TopologyCommunicator: Communicator + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

impl<S: ThreadSafety> sealed::Sealed for CartesianCommunicator<S> {}
impl<S: ThreadSafety> sealed::Sealed for GraphCommunicator<S> {}
impl<S: ThreadSafety> sealed::Sealed for DistributedGraphCommunicator<S> {}
impl<S: ThreadSafety> TopologyCommunicator for CartesianCommunicator<S> {}
impl<S: ThreadSafety> TopologyCommunicator for GraphCommunicator<S> {}
impl<S: ThreadSafety> TopologyCommunicator for DistributedGraphCommunicator<S> {}

/// This process's (in-degree, out-degree): the blocks a neighbourhood collective
/// receives and sends.
fn degrees(comm: &Comm, call: &str) -> Result<(usize, usize)> {
    let topo = comm.topology().ok_or_else(|| {
        Error::arg(
            ErrorClass::Topology,
            call,
            "comm",
            "the communicator has no topology",
        )
    })?;
    let (s, d) = topo.neighborhood(comm.rank())?;
    Ok((s.len(), d.len()))
}

/// The checked parts of a partitioned buffer, one per neighbour (`n` of them).
fn neighbor_parts<P: crate::datatype::Partitioned + crate::datatype::Collection + ?Sized>(
    p: &P,
    n: usize,
    call: &str,
    arg: &str,
) -> Result<Parts> {
    parts(p, n as crate::Rank, call, arg)
}

fn gather<'a>(
    comm: &Comm,
    s: &Typed<'a>,
    r: &mut TypedMut<'a>,
    mode: Mode<'_, 'a>,
    call: &str,
) -> Result<Option<RawRequest>> {
    let rc = per_process(r.count, degrees(comm, call)?.0 as crate::Rank);
    let sc = s.count;
    run!(
        mode,
        w,
        mv::neighbor_allgather(s.desc(), sc, r.desc_mut(), rc, comm),
        mv::ineighbor_allgather(w, s.lend(w), sc, r.lend_mut(w), rc, comm),
        cp::neighbor_allgather_init(w, s.lend(w), sc, r.lend_mut(w), rc, comm)
    )
}

fn gatherv<'a>(
    comm: &Comm,
    s: &Typed<'a>,
    r: &mut TypedMut<'a>,
    rp: &Parts,
    mode: Mode<'_, 'a>,
) -> Result<Option<RawRequest>> {
    let sc = s.count;
    run!(
        mode,
        w,
        mv::neighbor_allgatherv(s.desc(), sc, r.desc_mut(), blocks(rp), comm),
        mv::ineighbor_allgatherv(w, s.lend(w), sc, r.lend_mut(w), blocks(rp), comm),
        cp::neighbor_allgatherv_init(w, s.lend(w), sc, r.lend_mut(w), blocks(rp), comm)
    )
}

fn to_all<'a>(
    comm: &Comm,
    s: &Typed<'a>,
    r: &mut TypedMut<'a>,
    mode: Mode<'_, 'a>,
    call: &str,
) -> Result<Option<RawRequest>> {
    let (indeg, outdeg) = degrees(comm, call)?;
    let sc = per_process(s.count, outdeg as crate::Rank);
    let rc = per_process(r.count, indeg as crate::Rank);
    run!(
        mode,
        w,
        mv::neighbor_alltoall(s.desc(), sc, r.desc_mut(), rc, comm),
        mv::ineighbor_alltoall(w, s.lend(w), sc, r.lend_mut(w), rc, comm),
        cp::neighbor_alltoall_init(w, s.lend(w), sc, r.lend_mut(w), rc, comm)
    )
}

fn to_allv<'a>(
    comm: &Comm,
    s: &Typed<'a>,
    (sp, rp): &(Parts, Parts),
    r: &mut TypedMut<'a>,
    mode: Mode<'_, 'a>,
) -> Result<Option<RawRequest>> {
    run!(
        mode,
        w,
        mv::neighbor_alltoallv(s.desc(), blocks(sp), r.desc_mut(), blocks(rp), comm),
        mv::ineighbor_alltoallv(w, s.lend(w), blocks(sp), r.lend_mut(w), blocks(rp), comm),
        cp::neighbor_alltoallv_init(w, s.lend(w), blocks(sp), r.lend_mut(w), blocks(rp), comm)
    )
}

/// The neighbourhood collectives, in rsmpi's vocabulary, on communicators with a
/// process topology ([`TopologyCommunicator`]).
pub trait NeighborCollectives: TopologyCommunicator {
    collective_methods! {
        /// Sends `sendbuf` to every destination and gathers one block from every source
        /// into `recvbuf`, in source order (`MPI_Neighbor_allgather`); the block size is
        /// `recvbuf.count() / in-degree`.
        [neighbor_all_gather_into, try_neighbor_all_gather_into, "MPI_Neighbor_allgather"]
        [immediate_neighbor_all_gather_into, try_immediate_neighbor_all_gather_into, "MPI_Ineighbor_allgather"]
        [neighbor_all_gather_init, try_neighbor_all_gather_init, "MPI_Neighbor_allgather_init"]
        S: Buffer, R: BufferMut,
        prep |comm, sendbuf, recvbuf, call| Ok::<_, Error>(()),
        run |s, r, mode, ()| gather(comm, s, r, mode, call)
    }

    collective_methods! {
        /// Sends `sendbuf` to every destination and gathers the block of source `i` into
        /// part `i` of `recvbuf` (`MPI_Neighbor_allgatherv`).
        [neighbor_all_gather_varcount_into, try_neighbor_all_gather_varcount_into, "MPI_Neighbor_allgatherv"]
        [immediate_neighbor_all_gather_varcount_into, try_immediate_neighbor_all_gather_varcount_into, "MPI_Ineighbor_allgatherv"]
        [neighbor_all_gather_varcount_init, try_neighbor_all_gather_varcount_init, "MPI_Neighbor_allgatherv_init"]
        S: Buffer, R: PartitionedBufferMut,
        prep |comm, sendbuf, recvbuf, call| {
            degrees(comm, call).and_then(|(indeg, _)| {
                let rp = neighbor_parts(recvbuf, indeg, call, "recvbuf")?;
                disjoint(&rp.0, &rp.1, call, "recvbuf")?;
                Ok(rp)
            })
        },
        run |s, r, mode, rp| gatherv(comm, s, r, &rp, mode)
    }

    collective_methods! {
        /// Sends block `j` of `sendbuf` to destination `j` and receives block `i` of
        /// `recvbuf` from source `i`, blocks of `count() / out-degree` and
        /// `count() / in-degree` elements (`MPI_Neighbor_alltoall`).
        [neighbor_all_to_all_into, try_neighbor_all_to_all_into, "MPI_Neighbor_alltoall"]
        [immediate_neighbor_all_to_all_into, try_immediate_neighbor_all_to_all_into, "MPI_Ineighbor_alltoall"]
        [neighbor_all_to_all_init, try_neighbor_all_to_all_init, "MPI_Neighbor_alltoall_init"]
        S: Buffer, R: BufferMut,
        prep |comm, sendbuf, recvbuf, call| Ok::<_, Error>(()),
        run |s, r, mode, ()| to_all(comm, s, r, mode, call)
    }

    collective_methods! {
        /// All-to-all with a part of `sendbuf` per destination and a part of `recvbuf`
        /// per source (`MPI_Neighbor_alltoallv`).
        [neighbor_all_to_all_varcount_into, try_neighbor_all_to_all_varcount_into, "MPI_Neighbor_alltoallv"]
        [immediate_neighbor_all_to_all_varcount_into, try_immediate_neighbor_all_to_all_varcount_into, "MPI_Ineighbor_alltoallv"]
        [neighbor_all_to_all_varcount_init, try_neighbor_all_to_all_varcount_init, "MPI_Neighbor_alltoallv_init"]
        S: PartitionedBuffer, R: PartitionedBufferMut,
        prep |comm, sendbuf, recvbuf, call| {
            degrees(comm, call).and_then(|(indeg, outdeg)| {
                let sp = neighbor_parts(sendbuf, outdeg, call, "sendbuf")?;
                let rp = neighbor_parts(recvbuf, indeg, call, "recvbuf")?;
                disjoint(&rp.0, &rp.1, call, "recvbuf")?;
                Ok((sp, rp))
            })
        },
        run |s, r, mode, p| to_allv(comm, s, &p, r, mode)
    }
}

impl<C: TopologyCommunicator + ?Sized> NeighborCollectives for C {}
