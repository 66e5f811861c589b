//! MPI-4 persistent collectives (`MPI_<Op>_init`, intra- and intercommunicators,
//! neighbourhood ones on topologies, and their `_c` forms).
//!
//! An `_init` call is the immediate call's body (`coll/`, `neighbor.rs`) in
//! its persistent form: the same argument checks (named after the `_init`
//! call), the count, displacement and datatype arrays read, and the algorithm
//! chosen, all once, here; the schedule that the immediate call would have
//! started is kept instead (`oxmpi_core::coll::persistent::plan`), with the
//! communicator's next collective tag. Each MPI_Start (`p2p/persistent.rs`) runs that
//! schedule again; the wait/test family completes a start and leaves the
//! request inactive; MPI_Request_free frees it.
//!
//! So the caller may reuse its count and displacement arrays as soon as
//! `_init` returns, and persistent collectives match in the order they were
//! initialized (the same on every rank), so ranks may start them in
//! different orders. The buffers are used as given (MPI asks the caller to
//! keep them valid until the request is freed).

use std::ffi::c_int;

use crate::coll::{
    allgather, allgatherv, alltoallv, alltoallw, bcast, gather, gatherv, reduce, reduce_scatter,
    reduce_scatter_block, scatter, scatterv, whole, Form, Whole,
};
use crate::conv::comm;
use crate::conv::errors::R;
use crate::conv::large::{entry, ptr::*};
use crate::neighbor::{
    neighbor_allgather, neighbor_allgatherv, neighbor_alltoallv, neighbor_alltoallw,
};
use crate::types::*;

/// MPI_Barrier_init (abi.txt `out(request)`: the generated `PMPI_x` checks `request` first).
pub fn barrier_init(call: &'static str, c: MPI_Comm, info: MPI_Info, o: &mut MPI_Request) -> R<()> {
    let cm = comm(c, call)?;
    crate::conv::info_arg(call, info)?;
    let plan =
        oxmpi_core::coll::persistent::plan(call, || oxmpi_core::coll::barrier::ibarrier(&cm))?;
    *o = crate::conv::new_persistent_coll(plan, c);
    Ok(())
}

entry!(PMPI_Bcast_init, PMPI_Bcast_init_c, (buf: MVoid, n: CNT, dt: MPI_Datatype, root: c_int, c: MPI_Comm, info: MPI_Info, r: PReq) => bcast(buf, n, dt, root, c, Form::persistent(info, r)));
entry!(PMPI_Gather_init, PMPI_Gather_init_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, root: c_int, c: MPI_Comm, info: MPI_Info, r: PReq) => gather(sb, sc, st, rb, rc, rt, root, c, Form::persistent(info, r)));
entry!(PMPI_Gatherv_init, PMPI_Gatherv_init_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rcs: ACNT, ds: ADSP, rt: MPI_Datatype, root: c_int, c: MPI_Comm, info: MPI_Info, r: PReq) => gatherv(sb, sc, st, rb, rcs, ds, rt, root, c, Form::persistent(info, r)));
entry!(PMPI_Scatter_init, PMPI_Scatter_init_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, root: c_int, c: MPI_Comm, info: MPI_Info, r: PReq) => scatter(sb, sc, st, rb, rc, rt, root, c, Form::persistent(info, r)));
entry!(PMPI_Scatterv_init, PMPI_Scatterv_init_c, (sb: CVoid, scs: ACNT, ds: ADSP, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, root: c_int, c: MPI_Comm, info: MPI_Info, r: PReq) => scatterv(sb, scs, ds, st, rb, rc, rt, root, c, Form::persistent(info, r)));
entry!(PMPI_Allgather_init, PMPI_Allgather_init_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, c: MPI_Comm, info: MPI_Info, r: PReq) => allgather(sb, sc, st, rb, rc, rt, c, Form::persistent(info, r), false));
entry!(PMPI_Alltoall_init, PMPI_Alltoall_init_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, c: MPI_Comm, info: MPI_Info, r: PReq) => allgather(sb, sc, st, rb, rc, rt, c, Form::persistent(info, r), true));
entry!(PMPI_Allgatherv_init, PMPI_Allgatherv_init_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rcs: ACNT, ds: ADSP, rt: MPI_Datatype, c: MPI_Comm, info: MPI_Info, r: PReq) => allgatherv(sb, sc, st, rb, rcs, ds, rt, c, Form::persistent(info, r)));
entry!(PMPI_Alltoallv_init, PMPI_Alltoallv_init_c, (sb: CVoid, scs: ACNT, sds: ADSP, st: MPI_Datatype, rb: MVoid, rcs: ACNT, rds: ADSP, rt: MPI_Datatype, c: MPI_Comm, info: MPI_Info, r: PReq) => alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, c, Form::persistent(info, r)));
entry!(PMPI_Alltoallw_init, PMPI_Alltoallw_init_c, (sb: CVoid, scs: ACNT, sds: ADSP, sts: ATypes, rb: MVoid, rcs: ACNT, rds: ADSP, rts: ATypes, c: MPI_Comm, info: MPI_Info, r: PReq) => alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, c, Form::persistent(info, r)));
entry!(PMPI_Reduce_init, PMPI_Reduce_init_c, (sb: CVoid, rb: MVoid, n: CNT, dt: MPI_Datatype, o: MPI_Op, root: c_int, c: MPI_Comm, info: MPI_Info, r: PReq) => reduce(sb, rb, n, dt, o, root, c, Form::persistent(info, r)));
entry!(PMPI_Allreduce_init, PMPI_Allreduce_init_c, (sb: CVoid, rb: MVoid, n: CNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, info: MPI_Info, r: PReq) => whole(Whole::Allreduce, sb, rb, n, dt, o, c, Form::persistent(info, r)));
entry!(PMPI_Scan_init, PMPI_Scan_init_c, (sb: CVoid, rb: MVoid, n: CNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, info: MPI_Info, r: PReq) => whole(Whole::Scan, sb, rb, n, dt, o, c, Form::persistent(info, r)));
entry!(PMPI_Exscan_init, PMPI_Exscan_init_c, (sb: CVoid, rb: MVoid, n: CNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, info: MPI_Info, r: PReq) => whole(Whole::Exscan, sb, rb, n, dt, o, c, Form::persistent(info, r)));
entry!(PMPI_Reduce_scatter_init, PMPI_Reduce_scatter_init_c, (sb: CVoid, rb: MVoid, rcs: ACNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, info: MPI_Info, r: PReq) => reduce_scatter(sb, rb, rcs, dt, o, c, Form::persistent(info, r)));
entry!(PMPI_Reduce_scatter_block_init, PMPI_Reduce_scatter_block_init_c, (sb: CVoid, rb: MVoid, rc: CNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, info: MPI_Info, r: PReq) => reduce_scatter_block(sb, rb, rc, dt, o, c, Form::persistent(info, r)));
entry!(PMPI_Neighbor_allgather_init, PMPI_Neighbor_allgather_init_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, c: MPI_Comm, info: MPI_Info, r: PReq) => neighbor_allgather(sb, sc, st, rb, rc, rt, c, Form::persistent(info, r), false));
entry!(PMPI_Neighbor_alltoall_init, PMPI_Neighbor_alltoall_init_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, c: MPI_Comm, info: MPI_Info, r: PReq) => neighbor_allgather(sb, sc, st, rb, rc, rt, c, Form::persistent(info, r), true));
entry!(PMPI_Neighbor_allgatherv_init, PMPI_Neighbor_allgatherv_init_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rcs: ACNT, ds: ADSP, rt: MPI_Datatype, c: MPI_Comm, info: MPI_Info, r: PReq) => neighbor_allgatherv(sb, sc, st, rb, rcs, ds, rt, c, Form::persistent(info, r)));
entry!(PMPI_Neighbor_alltoallv_init, PMPI_Neighbor_alltoallv_init_c, (sb: CVoid, scs: ACNT, sds: ADSP, st: MPI_Datatype, rb: MVoid, rcs: ACNT, rds: ADSP, rt: MPI_Datatype, c: MPI_Comm, info: MPI_Info, r: PReq) => neighbor_alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, c, Form::persistent(info, r)));
entry!(PMPI_Neighbor_alltoallw_init, PMPI_Neighbor_alltoallw_init_c, (sb: CVoid, scs: ACNT, sds: AAint, sts: ATypes, rb: MVoid, rcs: ACNT, rds: AAint, rts: ATypes, c: MPI_Comm, info: MPI_Info, r: PReq) => neighbor_alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, c, Form::persistent(info, r)));
