//! MPI-4 persistent collectives (`MPI_<Op>_init`): an inactive persistent
//! request that each MPI_Start turns into the operation's non-blocking form, so
//! every start builds a fresh schedule with the communicator's next collective
//! tag (MPI requires all ranks to start them in the same order, as any
//! collective). The wait/test family completes a start and leaves the request
//! inactive; MPI_Request_free frees it.
//!
//! The arguments are kept as given: MPI asks the caller to keep the buffers and
//! the count, displacement and datatype arrays valid and unchanged until the
//! request is freed.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use oxmpi_core::Request;

use crate::abi::*;
use crate::env::comm;
use crate::errors::{bad_code, ffi, out};
use crate::handles::{state, PersistentOp};
use crate::pmpi::*;
use crate::types::*;

/// The C caller's arguments of an `_init` call, kept for its starts.
#[derive(Clone, Copy)]
struct Kept<T>(T);

// SAFETY: the kept values are handles (integers) and the caller's pointers,
// which this layer never dereferences itself: it hands them back to the
// non-blocking collective at MPI_Start, as the caller's own thread would, under
// MPI's rule that they stay valid until the request is freed.
unsafe impl<T> Send for Kept<T> {}
// SAFETY: as for `Send`: shared access only copies the values out.
unsafe impl<T> Sync for Kept<T> {}

impl<T: Copy> Kept<T> {
    fn get(&self) -> T {
        self.0
    }
}

/// Starts one persistent collective: the operation's `PMPI_I<op>` into a
/// request handle of its own, whose engine request is returned.
pub type Starter = Arc<dyn Fn(*mut MPI_Request) -> c_int + Send + Sync>;

/// Takes the engine request out of the handle a starter made.
pub fn engine_request_of(h: MPI_Request) -> Request {
    state().requests.remove(h).map_or(Request::NULL, |e| e.inner)
}

fn info_ok(call: &str, info: MPI_Info) -> crate::errors::R<()> {
    if info == MPI_INFO_NULL || info == MPI_INFO_ENV || state().infos.get(info).is_some() {
        Ok(())
    } else {
        Err(bad_code(MPI_ERR_INFO, call, "info", format!("{info:#x} is not a valid info object")))
    }
}

macro_rules! coll_init {
    ($init:ident, $call:literal, $icoll:ident, ($($p:ident: $t:ty),*)) => {
        #[no_mangle]
        pub unsafe extern "C" fn $init($($p: $t,)* comm_h: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
            ffi($call, comm_h, || {
                comm(comm_h, $call)?;
                info_ok($call, info)?;
                // SAFETY: `request` is the C caller's OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
                let o = unsafe { out($call, "request", request)? };
                let kept = Kept(($($p,)* comm_h));
                let start: Starter = Arc::new(move |r: *mut MPI_Request| {
                    #[allow(unused_parens, clippy::unused_unit)]
                    let ($($p,)* c) = kept.get();
                    // The arguments are those the caller gave the `_init` call; `r` is ours.
                    // SAFETY: MPI keeps them valid until the persistent request is freed.
                    unsafe { $icoll($($p,)* c, r) }
                });
                *o = crate::p2p::new_request(Request::NULL, comm_h, Some(PersistentOp::Coll(start)));
                Ok(())
            })
        }
    };
}

coll_init!(PMPI_Barrier_init, "MPI_Barrier_init", PMPI_Ibarrier, ());
coll_init!(PMPI_Bcast_init, "MPI_Bcast_init", PMPI_Ibcast, (buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Gather_init, "MPI_Gather_init", PMPI_Igather, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Gatherv_init, "MPI_Gatherv_init", PMPI_Igatherv, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Scatter_init, "MPI_Scatter_init", PMPI_Iscatter, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Scatterv_init, "MPI_Scatterv_init", PMPI_Iscatterv, (sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Allgather_init, "MPI_Allgather_init", PMPI_Iallgather, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype));
coll_init!(PMPI_Allgatherv_init, "MPI_Allgatherv_init", PMPI_Iallgatherv, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype));
coll_init!(PMPI_Alltoall_init, "MPI_Alltoall_init", PMPI_Ialltoall, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype));
coll_init!(PMPI_Alltoallv_init, "MPI_Alltoallv_init", PMPI_Ialltoallv, (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype));
coll_init!(PMPI_Alltoallw_init, "MPI_Alltoallw_init", PMPI_Ialltoallw, (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype));
coll_init!(PMPI_Reduce_init, "MPI_Reduce_init", PMPI_Ireduce, (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int));
coll_init!(PMPI_Allreduce_init, "MPI_Allreduce_init", PMPI_Iallreduce, (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Reduce_scatter_init, "MPI_Reduce_scatter_init", PMPI_Ireduce_scatter, (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Reduce_scatter_block_init, "MPI_Reduce_scatter_block_init", PMPI_Ireduce_scatter_block, (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Scan_init, "MPI_Scan_init", PMPI_Iscan, (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Exscan_init, "MPI_Exscan_init", PMPI_Iexscan, (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Neighbor_allgather_init, "MPI_Neighbor_allgather_init", PMPI_Ineighbor_allgather, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_allgatherv_init, "MPI_Neighbor_allgatherv_init", PMPI_Ineighbor_allgatherv, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_alltoall_init, "MPI_Neighbor_alltoall_init", PMPI_Ineighbor_alltoall, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_alltoallv_init, "MPI_Neighbor_alltoallv_init", PMPI_Ineighbor_alltoallv, (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_alltoallw_init, "MPI_Neighbor_alltoallw_init", PMPI_Ineighbor_alltoallw, (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype));

// The large-count forms: MPI_Count counts, MPI_Aint displacements.
coll_init!(PMPI_Bcast_init_c, "MPI_Bcast_init_c", PMPI_Ibcast_c, (buffer: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Gather_init_c, "MPI_Gather_init_c", PMPI_Igather_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Gatherv_init_c, "MPI_Gatherv_init_c", PMPI_Igatherv_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Scatter_init_c, "MPI_Scatter_init_c", PMPI_Iscatter_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Scatterv_init_c, "MPI_Scatterv_init_c", PMPI_Iscatterv_c, (sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Allgather_init_c, "MPI_Allgather_init_c", PMPI_Iallgather_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype));
coll_init!(PMPI_Allgatherv_init_c, "MPI_Allgatherv_init_c", PMPI_Iallgatherv_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype));
coll_init!(PMPI_Alltoall_init_c, "MPI_Alltoall_init_c", PMPI_Ialltoall_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype));
coll_init!(PMPI_Alltoallv_init_c, "MPI_Alltoallv_init_c", PMPI_Ialltoallv_c, (sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype));
coll_init!(PMPI_Alltoallw_init_c, "MPI_Alltoallw_init_c", PMPI_Ialltoallw_c, (sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype));
coll_init!(PMPI_Reduce_init_c, "MPI_Reduce_init_c", PMPI_Ireduce_c, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int));
coll_init!(PMPI_Allreduce_init_c, "MPI_Allreduce_init_c", PMPI_Iallreduce_c, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Reduce_scatter_init_c, "MPI_Reduce_scatter_init_c", PMPI_Ireduce_scatter_c, (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Reduce_scatter_block_init_c, "MPI_Reduce_scatter_block_init_c", PMPI_Ireduce_scatter_block_c, (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Scan_init_c, "MPI_Scan_init_c", PMPI_Iscan_c, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Exscan_init_c, "MPI_Exscan_init_c", PMPI_Iexscan_c, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Neighbor_allgather_init_c, "MPI_Neighbor_allgather_init_c", PMPI_Ineighbor_allgather_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_allgatherv_init_c, "MPI_Neighbor_allgatherv_init_c", PMPI_Ineighbor_allgatherv_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_alltoall_init_c, "MPI_Neighbor_alltoall_init_c", PMPI_Ineighbor_alltoall_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_alltoallv_init_c, "MPI_Neighbor_alltoallv_init_c", PMPI_Ineighbor_alltoallv_c, (sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_alltoallw_init_c, "MPI_Neighbor_alltoallw_init_c", PMPI_Ineighbor_alltoallw_c, (sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype));
