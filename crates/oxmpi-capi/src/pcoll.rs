//! MPI-4 persistent collectives (`MPI_<Op>_init`): an inactive persistent
//! request that each MPI_Start turns into the operation's non-blocking form, so
//! every start builds a fresh schedule with the communicator's next collective
//! tag (MPI requires all ranks to start them in the same order, as any
//! collective). The wait/test family completes a start and leaves the request
//! inactive; MPI_Request_free frees it.
//!
//! The buffers are kept as given (MPI asks the caller to keep them valid until
//! the request is freed); the count, displacement and datatype arrays are
//! copied at the `_init` call, as MPICH does, so a caller that reuses them
//! afterwards still gets what it asked for. The collective's tag is reserved
//! at the `_init` call too: persistent collectives match in the order they
//! were initialized (the same on every rank), so ranks may start them in
//! different orders.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use oxmpi_core::{Comm, Request};

use crate::abi::*;
use crate::coll::*;
use crate::conv::comm;
use crate::conv::errors::{bad_code, ffi, out};
use crate::conv::handles::Starter;
use crate::conv::handles::{state, PersistentOp};
use crate::env::PMPI_Ibarrier;
use crate::neighbor::*; // the PMPI_Ineighbor_* a persistent neighbourhood collective starts
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

fn info_ok(call: &str, info: MPI_Info) -> crate::conv::errors::R<()> {
    if info == MPI_INFO_NULL || info == MPI_INFO_ENV || state().infos.get(info).is_some() {
        Ok(())
    } else {
        Err(bad_code(
            MPI_ERR_INFO,
            call,
            "info",
            format!("{info:#x} is not a valid info object"),
        ))
    }
}

/// An array argument, copied at `_init` when it matters on this rank.
enum Arr<T> {
    /// Not read on this rank (or NULL): the caller's pointer, passed on.
    Raw(*const T),
    Owned(Box<[T]>),
}

impl<T> Arr<T> {
    fn ptr(&self) -> *const T {
        match self {
            Arr::Raw(p) => *p,
            Arr::Owned(b) => b.as_ptr(),
        }
    }
}

impl<T> Kept<Arr<T>> {
    fn arr_ptr(&self) -> *const T {
        self.0.ptr()
    }
}

/// Copies the `n` entries of an array argument (none if NULL or `n == 0`).
///
/// # Safety
/// `p` is NULL or points to `n` readable `T`s (the C caller's array).
unsafe fn copy_arr<T: Copy>(p: *const T, n: usize) -> Arr<T> {
    if p.is_null() || n == 0 {
        return Arr::Raw(p);
    }
    // SAFETY: non-null and `n` entries long by this function's contract.
    Arr::Owned(unsafe { std::slice::from_raw_parts(p, n) }.into())
}

/// The lengths of the array arguments of a persistent collective on this rank.
struct Lens {
    /// One entry per process the data goes to or comes from (the remote group
    /// of an intercommunicator).
    peers: usize,
    /// As `peers`, but only at the root of a rooted collective.
    rpeers: usize,
    /// One entry per process of the local group (MPI_Reduce_scatter).
    local: usize,
    /// In- and out-degree of the communicator's topology.
    indeg: usize,
    outdeg: usize,
}

fn lens(call: &str, cm: &Comm, root: Option<c_int>) -> crate::conv::errors::R<Lens> {
    let peers = cm.peer_group_size() as usize;
    let at_root = match root {
        Some(r) if cm.is_inter() => r == MPI_ROOT,
        Some(r) => r == cm.rank(),
        None => false,
    };
    let (indeg, outdeg) = match cm.topology() {
        Some(t) if call.contains("Neighbor") => {
            let (s, d) = t.neighborhood(cm.rank())?;
            (s.len(), d.len())
        }
        _ => (0, 0),
    };
    Ok(Lens {
        peers,
        rpeers: if at_root { peers } else { 0 },
        local: cm.size() as usize,
        indeg,
        outdeg,
    })
}

macro_rules! keep {
    ($lens:ident, $p:ident) => {
        Kept($p)
    };
    ($lens:ident, $p:ident, $len:ident) => {
        // SAFETY: an array argument of the `_init` call, with as many entries
        // on this rank as MPI defines for it (`Lens`).
        Kept(unsafe { copy_arr($p, $lens.$len) })
    };
}

macro_rules! unkeep {
    ($k:expr) => {
        $k.get()
    };
    ($k:expr, $len:ident) => {
        $k.arr_ptr()
    };
}

macro_rules! coll_init {
    ($init:ident, $call:literal, $icoll:ident, $(root $root:ident;)? ($($p:ident: $t:ty $([$len:ident])?),*)) => {
        #[no_mangle]
        pub unsafe extern "C" fn $init($($p: $t,)* comm_h: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
            ffi($call, comm_h, || {
                let cm = comm(comm_h, $call)?;
                info_ok($call, info)?;
                // SAFETY: `request` is the C caller's OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
                let o = unsafe { out($call, "request", request)? };
                #[allow(unused_variables)]
                let lens = lens($call, &cm, None $(.or(Some($root)))?)?;
                $( let $p = keep!(lens, $p $(, $len)?); )*
                let tag = oxmpi_core::coll::reserve_tag(&cm);
                let start: Starter = Arc::new(move |r: *mut MPI_Request| {
                    $( let $p = unkeep!($p $(, $len)?); )*
                    // The buffers are those the caller gave the `_init` call (MPI keeps
                    // them valid until the persistent request is freed), the arrays our
                    // copies; `r` is ours. The collective takes the tag reserved at init.
                    // SAFETY: as just said.
                    oxmpi_core::coll::with_reserved_tag(&cm, tag, || unsafe { $icoll($($p,)* comm_h, r) })
                });
                *o = crate::conv::new_request(Request::NULL, comm_h, Some(PersistentOp::Coll(start)));
                Ok(())
            })
        }
    };
}

coll_init!(PMPI_Barrier_init, "MPI_Barrier_init", PMPI_Ibarrier, ());
coll_init!(PMPI_Bcast_init, "MPI_Bcast_init", PMPI_Ibcast, root root; (buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Gather_init, "MPI_Gather_init", PMPI_Igather, root root; (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Gatherv_init, "MPI_Gatherv_init", PMPI_Igatherv, root root; (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int [rpeers], displs: *const c_int [rpeers], recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Scatter_init, "MPI_Scatter_init", PMPI_Iscatter, root root; (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Scatterv_init, "MPI_Scatterv_init", PMPI_Iscatterv, root root; (sendbuf: *const c_void, sendcounts: *const c_int [rpeers], displs: *const c_int [rpeers], sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Allgather_init, "MPI_Allgather_init", PMPI_Iallgather, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype));
coll_init!(PMPI_Allgatherv_init, "MPI_Allgatherv_init", PMPI_Iallgatherv, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int [peers], displs: *const c_int [peers], recvtype: MPI_Datatype));
coll_init!(PMPI_Alltoall_init, "MPI_Alltoall_init", PMPI_Ialltoall, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype));
coll_init!(PMPI_Alltoallv_init, "MPI_Alltoallv_init", PMPI_Ialltoallv, (sendbuf: *const c_void, sendcounts: *const c_int [peers], sdispls: *const c_int [peers], sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int [peers], rdispls: *const c_int [peers], recvtype: MPI_Datatype));
coll_init!(PMPI_Alltoallw_init, "MPI_Alltoallw_init", PMPI_Ialltoallw, (sendbuf: *const c_void, sendcounts: *const c_int [peers], sdispls: *const c_int [peers], sendtypes: *const MPI_Datatype [peers], recvbuf: *mut c_void, recvcounts: *const c_int [peers], rdispls: *const c_int [peers], recvtypes: *const MPI_Datatype [peers]));
coll_init!(PMPI_Reduce_init, "MPI_Reduce_init", PMPI_Ireduce, root root; (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int));
coll_init!(PMPI_Allreduce_init, "MPI_Allreduce_init", PMPI_Iallreduce, (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Reduce_scatter_init, "MPI_Reduce_scatter_init", PMPI_Ireduce_scatter, (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int [local], datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Reduce_scatter_block_init, "MPI_Reduce_scatter_block_init", PMPI_Ireduce_scatter_block, (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Scan_init, "MPI_Scan_init", PMPI_Iscan, (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Exscan_init, "MPI_Exscan_init", PMPI_Iexscan, (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Neighbor_allgather_init, "MPI_Neighbor_allgather_init", PMPI_Ineighbor_allgather, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_allgatherv_init, "MPI_Neighbor_allgatherv_init", PMPI_Ineighbor_allgatherv, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int [indeg], displs: *const c_int [indeg], recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_alltoall_init, "MPI_Neighbor_alltoall_init", PMPI_Ineighbor_alltoall, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_alltoallv_init, "MPI_Neighbor_alltoallv_init", PMPI_Ineighbor_alltoallv, (sendbuf: *const c_void, sendcounts: *const c_int [outdeg], sdispls: *const c_int [outdeg], sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int [indeg], rdispls: *const c_int [indeg], recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_alltoallw_init, "MPI_Neighbor_alltoallw_init", PMPI_Ineighbor_alltoallw, (sendbuf: *const c_void, sendcounts: *const c_int [outdeg], sdispls: *const MPI_Aint [outdeg], sendtypes: *const MPI_Datatype [outdeg], recvbuf: *mut c_void, recvcounts: *const c_int [indeg], rdispls: *const MPI_Aint [indeg], recvtypes: *const MPI_Datatype [indeg]));

// The large-count forms: MPI_Count counts, MPI_Aint displacements.
coll_init!(PMPI_Bcast_init_c, "MPI_Bcast_init_c", PMPI_Ibcast_c, root root; (buffer: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Gather_init_c, "MPI_Gather_init_c", PMPI_Igather_c, root root; (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Gatherv_init_c, "MPI_Gatherv_init_c", PMPI_Igatherv_c, root root; (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count [rpeers], displs: *const MPI_Aint [rpeers], recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Scatter_init_c, "MPI_Scatter_init_c", PMPI_Iscatter_c, root root; (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Scatterv_init_c, "MPI_Scatterv_init_c", PMPI_Iscatterv_c, root root; (sendbuf: *const c_void, sendcounts: *const MPI_Count [rpeers], displs: *const MPI_Aint [rpeers], sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int));
coll_init!(PMPI_Allgather_init_c, "MPI_Allgather_init_c", PMPI_Iallgather_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype));
coll_init!(PMPI_Allgatherv_init_c, "MPI_Allgatherv_init_c", PMPI_Iallgatherv_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count [peers], displs: *const MPI_Aint [peers], recvtype: MPI_Datatype));
coll_init!(PMPI_Alltoall_init_c, "MPI_Alltoall_init_c", PMPI_Ialltoall_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype));
coll_init!(PMPI_Alltoallv_init_c, "MPI_Alltoallv_init_c", PMPI_Ialltoallv_c, (sendbuf: *const c_void, sendcounts: *const MPI_Count [peers], sdispls: *const MPI_Aint [peers], sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count [peers], rdispls: *const MPI_Aint [peers], recvtype: MPI_Datatype));
coll_init!(PMPI_Alltoallw_init_c, "MPI_Alltoallw_init_c", PMPI_Ialltoallw_c, (sendbuf: *const c_void, sendcounts: *const MPI_Count [peers], sdispls: *const MPI_Aint [peers], sendtypes: *const MPI_Datatype [peers], recvbuf: *mut c_void, recvcounts: *const MPI_Count [peers], rdispls: *const MPI_Aint [peers], recvtypes: *const MPI_Datatype [peers]));
coll_init!(PMPI_Reduce_init_c, "MPI_Reduce_init_c", PMPI_Ireduce_c, root root; (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int));
coll_init!(PMPI_Allreduce_init_c, "MPI_Allreduce_init_c", PMPI_Iallreduce_c, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Reduce_scatter_init_c, "MPI_Reduce_scatter_init_c", PMPI_Ireduce_scatter_c, (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count [local], datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Reduce_scatter_block_init_c, "MPI_Reduce_scatter_block_init_c", PMPI_Ireduce_scatter_block_c, (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Scan_init_c, "MPI_Scan_init_c", PMPI_Iscan_c, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Exscan_init_c, "MPI_Exscan_init_c", PMPI_Iexscan_c, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op));
coll_init!(PMPI_Neighbor_allgather_init_c, "MPI_Neighbor_allgather_init_c", PMPI_Ineighbor_allgather_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_allgatherv_init_c, "MPI_Neighbor_allgatherv_init_c", PMPI_Ineighbor_allgatherv_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count [indeg], displs: *const MPI_Aint [indeg], recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_alltoall_init_c, "MPI_Neighbor_alltoall_init_c", PMPI_Ineighbor_alltoall_c, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_alltoallv_init_c, "MPI_Neighbor_alltoallv_init_c", PMPI_Ineighbor_alltoallv_c, (sendbuf: *const c_void, sendcounts: *const MPI_Count [outdeg], sdispls: *const MPI_Aint [outdeg], sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count [indeg], rdispls: *const MPI_Aint [indeg], recvtype: MPI_Datatype));
coll_init!(PMPI_Neighbor_alltoallw_init_c, "MPI_Neighbor_alltoallw_init_c", PMPI_Ineighbor_alltoallw_c, (sendbuf: *const c_void, sendcounts: *const MPI_Count [outdeg], sdispls: *const MPI_Aint [outdeg], sendtypes: *const MPI_Datatype [outdeg], recvbuf: *mut c_void, recvcounts: *const MPI_Count [indeg], rdispls: *const MPI_Aint [indeg], recvtypes: *const MPI_Datatype [indeg]));
