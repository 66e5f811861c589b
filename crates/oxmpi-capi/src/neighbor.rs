//! Neighbourhood collectives (MPI_Neighbor_* and MPI_Ineighbor_*) over a
//! communicator's process topology.

//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement: buffers holding their counts of their datatypes
//! (for immediate forms, until the request completes), arrays of the length the
//! standard gives, OUT arguments writable and aliasing no other argument.

use std::ffi::{c_int, c_void};

use oxmpi_core::buf::Forever;
use oxmpi_core::coll;
use oxmpi_core::coll::api_move::Blocks;
use oxmpi_core::error::ErrorClass;
use oxmpi_core::Comm;

use crate::coll::{count, counts, displs, dtypes, go_with, names, Form};
use crate::conv::buffer::{
    coll_recv, coll_recv_v, coll_recv_w, coll_send, coll_send_v, coll_send_w,
};
use crate::conv::errors::{bad, ffi, R};
use crate::conv::large::{name, Count, Displ};
use crate::conv::{comm, committed};
use crate::types::*;

// ----- neighbourhood collectives --------------------------------------------------------

/// The send buffer of a neighbourhood collective, which has no in-place form.
fn not_in_place<T>(call: &str, s: Option<T>) -> R<T> {
    s.ok_or_else(|| {
        bad(
            ErrorClass::Buffer,
            call,
            "sendbuf",
            "is MPI_IN_PLACE, which neighbourhood collectives do not take",
        )
    })
}

/// (indegree, outdegree) of this rank, or MPI_ERR_TOPOLOGY.
fn degrees(call: &str, cm: &Comm) -> R<(usize, usize)> {
    let topo = cm.topology().ok_or_else(|| {
        bad(
            ErrorClass::Topology,
            call,
            "comm",
            "the communicator has no topology",
        )
    })?;
    let (s, d) = topo.neighborhood(cm.rank())?;
    Ok((s.len(), d.len()))
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn neighbor_allgather<C: Count>(
    sb: *const c_void,
    sc: C,
    st: MPI_Datatype,
    rb: *mut c_void,
    rc: C,
    rt: MPI_Datatype,
    c: MPI_Comm,
    form: Form,
    all_to_all: bool,
) -> c_int {
    let call = match all_to_all {
        false => names(
            "MPI_Neighbor_allgather",
            "MPI_Ineighbor_allgather",
            "MPI_Neighbor_allgather_init",
            form,
        ),
        true => names(
            "MPI_Neighbor_alltoall",
            "MPI_Ineighbor_alltoall",
            "MPI_Neighbor_alltoall_init",
            form,
        ),
    };
    let call = name::<C>(call);
    ffi(call, c, || {
        let cm = comm(c, call)?;
        let (indeg, outdeg) = degrees(call, &cm)?;
        let sc = count(call, "sendcount", sc)?;
        let st = committed(st, call, "sendtype")?;
        let rc = count(call, "recvcount", rc)?;
        let rt = committed(rt, call, "recvtype")?;
        let sent = if all_to_all {
            sc.saturating_mul(outdeg)
        } else {
            sc
        };
        // SAFETY: `sb` holds `sc` × `st` (per destination neighbour for the alltoall), `rb` `rc` × `rt` per source neighbour, as MPI_Neighbor_allgather and MPI_Neighbor_alltoall require of their C caller.
        let (s, r) = unsafe {
            (
                coll_send(sb, sent, &st),
                coll_recv(rb, rc.saturating_mul(indeg), &rt),
            )
        };
        let bufs = (not_in_place(call, s)?, r);
        use coll::api_move as mv;
        if all_to_all {
            go_with(
                c,
                call,
                form,
                bufs,
                |(s, r)| mv::neighbor_alltoall(s, sc, r, rc, &cm),
                |(s, r)| mv::ineighbor_alltoall(&Forever, s, sc, r, rc, &cm),
            )
        } else {
            go_with(
                c,
                call,
                form,
                bufs,
                |(s, r)| mv::neighbor_allgather(s, sc, r, rc, &cm),
                |(s, r)| mv::ineighbor_allgather(&Forever, s, sc, r, rc, &cm),
            )
        }
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn neighbor_allgatherv<C: Count, D: Displ>(
    sb: *const c_void,
    sc: C,
    st: MPI_Datatype,
    rb: *mut c_void,
    rcs: *const C,
    ds: *const D,
    rt: MPI_Datatype,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names(
        "MPI_Neighbor_allgatherv",
        "MPI_Ineighbor_allgatherv",
        "MPI_Neighbor_allgatherv_init",
        form,
    );
    let call = name::<C>(call);
    ffi(call, c, || {
        let cm = comm(c, call)?;
        let (indeg, _) = degrees(call, &cm)?;
        let sc = count(call, "sendcount", sc)?;
        let st = committed(st, call, "sendtype")?;
        // SAFETY: MPI_Neighbor_allgatherv's `recvcounts` and `displs` have one entry per source neighbour, `indeg`.
        let (rcs, mut ds) = unsafe {
            (
                counts(call, "recvcounts", rcs, indeg)?,
                displs(call, "displs", ds, indeg)?,
            )
        };
        let rt = committed(rt, call, "recvtype")?;
        // SAFETY: `sb` holds `sc` × `st`; `rb` holds `rcs[i]` × `rt` at `ds[i]` per source neighbour, as MPI_Neighbor_allgatherv requires of its C caller.
        let (s, r) = unsafe { (coll_send(sb, sc, &st), coll_recv_v(rb, &rcs, &mut ds, &rt)) };
        let bufs = (not_in_place(call, s)?, r);
        let rbl = || Blocks {
            counts: &rcs,
            displs: &ds,
        };
        use coll::api_move as mv;
        go_with(
            c,
            call,
            form,
            bufs,
            |(s, r)| mv::neighbor_allgatherv(s, sc, r, rbl(), &cm),
            |(s, r)| mv::ineighbor_allgatherv(&Forever, s, sc, r, rbl(), &cm),
        )
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn neighbor_alltoallv<C: Count, D: Displ>(
    sb: *const c_void,
    scs: *const C,
    sds: *const D,
    st: MPI_Datatype,
    rb: *mut c_void,
    rcs: *const C,
    rds: *const D,
    rt: MPI_Datatype,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names(
        "MPI_Neighbor_alltoallv",
        "MPI_Ineighbor_alltoallv",
        "MPI_Neighbor_alltoallv_init",
        form,
    );
    let call = name::<C>(call);
    ffi(call, c, || {
        let cm = comm(c, call)?;
        let (indeg, outdeg) = degrees(call, &cm)?;
        // SAFETY: MPI_Neighbor_alltoallv's `sendcounts` and `sdispls` have one entry per destination neighbour, `outdeg`.
        let (scs, mut sds) = unsafe {
            (
                counts(call, "sendcounts", scs, outdeg)?,
                displs(call, "sdispls", sds, outdeg)?,
            )
        };
        let st = committed(st, call, "sendtype")?;
        // SAFETY: MPI_Neighbor_alltoallv's `recvcounts` and `rdispls` have one entry per source neighbour, `indeg`.
        let (rcs, mut rds) = unsafe {
            (
                counts(call, "recvcounts", rcs, indeg)?,
                displs(call, "rdispls", rds, indeg)?,
            )
        };
        let rt = committed(rt, call, "recvtype")?;
        // SAFETY: `sb` and `rb` hold the blocks `scs`/`sds` × `st` and `rcs`/`rds` × `rt` describe per neighbour, as MPI_Neighbor_alltoallv requires of its C caller.
        let (s, r) = unsafe {
            (
                coll_send_v(sb, &scs, &mut sds, &st),
                coll_recv_v(rb, &rcs, &mut rds, &rt),
            )
        };
        let bufs = (not_in_place(call, s)?, r);
        let sbl = || Blocks {
            counts: &scs,
            displs: &sds,
        };
        let rbl = || Blocks {
            counts: &rcs,
            displs: &rds,
        };
        use coll::api_move as mv;
        go_with(
            c,
            call,
            form,
            bufs,
            |(s, r)| mv::neighbor_alltoallv(s, sbl(), r, rbl(), &cm),
            |(s, r)| mv::ineighbor_alltoallv(&Forever, s, sbl(), r, rbl(), &cm),
        )
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn neighbor_alltoallw<C: Count, D: Displ>(
    sb: *const c_void,
    scs: *const C,
    sds: *const D,
    sts: *const MPI_Datatype,
    rb: *mut c_void,
    rcs: *const C,
    rds: *const D,
    rts: *const MPI_Datatype,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names(
        "MPI_Neighbor_alltoallw",
        "MPI_Ineighbor_alltoallw",
        "MPI_Neighbor_alltoallw_init",
        form,
    );
    let call = name::<C>(call);
    ffi(call, c, || {
        let cm = comm(c, call)?;
        let (indeg, outdeg) = degrees(call, &cm)?;
        // SAFETY: MPI_Neighbor_alltoallw's send arrays have one entry per destination neighbour, `outdeg`.
        let (scs, sds, sts) = unsafe {
            (
                counts(call, "sendcounts", scs, outdeg)?,
                displs(call, "sdispls", sds, outdeg)?,
                dtypes(call, "sendtypes", sts, outdeg)?,
            )
        };
        // SAFETY: MPI_Neighbor_alltoallw's receive arrays have one entry per source neighbour, `indeg`.
        let (rcs, rds, rts) = unsafe {
            (
                counts(call, "recvcounts", rcs, indeg)?,
                displs(call, "rdispls", rds, indeg)?,
                dtypes(call, "recvtypes", rts, indeg)?,
            )
        };
        // SAFETY: `sb` holds the blocks `scs`/`sds`/`sts` describe per destination, and `rb` those of `rcs`/`rds`/`rts` per source, as MPI_Neighbor_alltoallw requires of its C caller, for as long as MPI lets the call use them.
        let (s, r) = unsafe {
            (
                coll_send_w(sb, &scs, &sds, &sts),
                coll_recv_w(rb, &rcs, &rds, &rts),
            )
        };
        let bufs = (not_in_place(call, s)?, r);
        use coll::api_move as mv;
        go_with(
            c,
            call,
            form,
            bufs,
            |(s, r)| mv::neighbor_alltoallw(s, r, &cm),
            |(s, r)| mv::ineighbor_alltoallw(&Forever, s, r, &cm),
        )
    })
}
