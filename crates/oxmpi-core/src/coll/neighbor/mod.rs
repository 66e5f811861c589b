//! Neighbourhood collectives on communicators with a topology:
//! MPI_Neighbor_allgather(v) and MPI_Neighbor_alltoall(v,w), blocking and not.
//!
//! Every rank receives block i from `sources[i]` and sends block j to
//! `destinations[j]` (Cartesian: per dimension, the -1 then the +1 neighbour;
//! MPI_PROC_NULL neighbours move nothing and leave their block untouched).
//! When the same rank is a neighbour twice (a periodic dimension of size 1 or 2,
//! a repeated graph edge), messages must still pair correctly: on a Cartesian
//! grid a block sent toward -1 in dimension d arrives as the receiver's +1
//! source of d, so it travels on that slot's sub-tag; on graphs, repeated edges
//! pair in list order.

use super::api_move::{dt, neighbor_alltoallv_check, neighbor_check, Blocks as VBlocks};
use super::sched::{Builder, Slice};
use super::util;
use crate::buf::{RecvBlocks, RecvBuf, SendBlocks, SendBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};
use crate::request::{Request, PROC_NULL};
use crate::topo::Topology;

struct Neighborhood {
    sources: Vec<i32>,
    destinations: Vec<i32>,
    cart: bool,
}

/// The in- and out-degree of this rank in the communicator's topology (the number of
/// blocks a neighbourhood collective receives and sends).
pub(crate) fn degrees(call: &str, comm: &Comm) -> Result<(usize, usize)> {
    let nb = neighborhood(call, comm)?;
    Ok((nb.sources.len(), nb.destinations.len()))
}

fn neighborhood(call: &str, comm: &Comm) -> Result<Neighborhood> {
    let topo = comm.topology().ok_or_else(|| {
        MpiError::arg(
            ErrorClass::Topology,
            call,
            "comm",
            "the communicator has no topology",
        )
    })?;
    let (sources, destinations) = topo.neighborhood(comm.rank())?;
    Ok(Neighborhood {
        sources,
        destinations,
        cart: matches!(topo, Topology::Cart(_)),
    })
}

/// Sub-tags: the receive slot's index for Cartesian grids (a send toward slot j
/// is received in slot j ^ 1), 0 on graphs.
fn send_sub(nb: &Neighborhood, j: usize) -> u8 {
    if nb.cart {
        ((j ^ 1) % super::sched::MAX_SUBTAGS as usize) as u8
    } else {
        0
    }
}

fn recv_sub(nb: &Neighborhood, i: usize) -> u8 {
    if nb.cart {
        (i % super::sched::MAX_SUBTAGS as usize) as u8
    } else {
        0
    }
}

/// One block per neighbour on each side: (pointer, count, datatype) lists.
struct Blocks<'a> {
    send: Vec<(*const u8, usize, &'a Datatype)>,
    recv: Vec<(*mut u8, usize, &'a Datatype)>,
}

fn build(comm: &Comm, nb: &Neighborhood, blocks: Blocks<'_>) -> Builder {
    let mut b = Builder::new(comm);
    let mut outputs = Vec::new();
    for (i, &src) in nb.sources.iter().enumerate() {
        let (buf, count, dt) = blocks.recv[i];
        // Empty blocks are not exchanged: an edge's block is empty at both
        // ends or at neither (the signatures match), so a zero-count
        // neighbourhood collective does not communicate.
        if src == PROC_NULL || util::packed_len(count, dt) == 0 {
            continue;
        }
        let out = util::packed_output(&mut b, buf, count, dt);
        b.recv_tagged(out, src, recv_sub(nb, i));
        outputs.push((out, buf, count, dt.clone()));
    }
    for (j, &dst) in nb.destinations.iter().enumerate() {
        let (buf, count, dt) = blocks.send[j];
        if dst == PROC_NULL || util::packed_len(count, dt) == 0 {
            continue;
        }
        let input: Slice = util::packed_input(&mut b, buf, count, dt);
        b.send_tagged(input, dst, send_sub(nb, j));
    }
    b.fence();
    for (out, buf, count, dt) in outputs {
        util::finish_output(&mut b, out, buf, count, &dt);
    }
    b
}

fn check(
    call: &str,
    comm: &Comm,
    sendtype: &Datatype,
    recvtype: &Datatype,
) -> Result<Neighborhood> {
    util::check_type(call, "sendtype", sendtype)?;
    util::check_type(call, "recvtype", recvtype)?;
    neighborhood(call, comm)
}

fn allgather_schedule(
    call: &str,
    sendbuf: *const u8,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: *mut u8,
    recvcounts: &[usize],
    displs: &[isize],
    recvtype: &Datatype,
    comm: &Comm,
) -> Result<Builder> {
    let nb = check(call, comm, sendtype, recvtype)?;
    if recvcounts.len() < nb.sources.len() || displs.len() < nb.sources.len() {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            "recvcounts",
            format!(
                "{} entries for {} neighbours",
                recvcounts.len().min(displs.len()),
                nb.sources.len()
            ),
        ));
    }
    let blocks = Blocks {
        send: nb
            .destinations
            .iter()
            .map(|_| (sendbuf, sendcount, sendtype))
            .collect(),
        recv: (0..nb.sources.len())
            .map(|i| {
                (
                    util::elem_ptr_mut(recvbuf, displs[i], recvtype),
                    recvcounts[i],
                    recvtype,
                )
            })
            .collect(),
    };
    Ok(build(comm, &nb, blocks))
}

fn regular(n: usize, count: usize) -> (Vec<usize>, Vec<isize>) {
    (
        (0..n).map(|_| count).collect(),
        (0..n).map(|i| (i * count) as isize).collect(),
    )
}

/// MPI_Neighbor_allgather: `send` (`sendcount` elements) to every out-neighbour;
/// `recv` holds a block of `recvcount` elements per in-neighbour. Safe: the blocks
/// are checked to lie inside the descriptors before their addresses go to the
/// schedule, which completes before the call returns.
pub(crate) fn neighbor_allgather(
    send: &SendBuf<'_, '_>,
    sendcount: usize,
    recv: &RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    run_regular(
        "MPI_Neighbor_allgather",
        false,
        send,
        sendcount,
        recv,
        recvcount,
        comm,
    )
}

/// MPI_Ineighbor_allgather: as [`neighbor_allgather`], the descriptors lent for
/// `'static` (kept valid by the caller's scope until the request completes).
pub(crate) fn ineighbor_allgather(
    send: &SendBuf<'static, '_>,
    sendcount: usize,
    recv: &RecvBuf<'static, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    let call = "MPI_Ineighbor_allgather";
    neighbor_check(call, send, sendcount, false, recv, None, recvcount, comm)?;
    super::start(regular_schedule(
        call, false, send, sendcount, recv, recvcount, comm,
    )?)
}

/// A blocking neighbourhood allgather (`per_dest: false`) or alltoall (`true`):
/// checks, then runs [`regular_schedule`].
fn run_regular(
    call: &'static str,
    per_dest: bool,
    send: &SendBuf<'_, '_>,
    sendcount: usize,
    recv: &RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    neighbor_check(call, send, sendcount, per_dest, recv, None, recvcount, comm)?;
    let st = dt(send.datatype());
    let _diag = crate::diag::coll(call, comm, None, sendcount, Some(st), None)?;
    let b = regular_schedule(call, per_dest, send, sendcount, recv, recvcount, comm)?;
    super::run(b, call)
}

/// The schedule of a neighbourhood allgather (`per_dest: false`: the one send
/// block to every out-neighbour) or alltoall (a block per out-neighbour), with
/// `recvcount` elements per in-neighbour, after [`neighbor_check`].
fn regular_schedule(
    call: &str,
    per_dest: bool,
    send: &SendBuf<'_, '_>,
    sendcount: usize,
    recv: &RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Builder> {
    let nb = neighborhood(call, comm)?;
    let (rc, rd) = regular(nb.sources.len(), recvcount);
    let (st, rt) = (dt(send.datatype()), dt(recv.datatype()));
    if !per_dest {
        return allgather_schedule(
            call,
            send.ptr(),
            sendcount,
            st,
            recv.ptr(),
            &rc,
            &rd,
            rt,
            comm,
        );
    }
    let (sc, sd) = regular(nb.destinations.len(), sendcount);
    alltoallv_schedule(
        call,
        send.ptr(),
        &sc,
        &sd,
        st,
        recv.ptr(),
        &rc,
        &rd,
        rt,
        comm,
    )
}

/// MPI_Neighbor_allgatherv: block `i` of `recv` (from in-neighbour `i`) is
/// `rb.counts[i]` elements at `rb.displs[i]`; safe as [`neighbor_allgather`].
pub(crate) fn neighbor_allgatherv(
    send: &SendBuf<'_, '_>,
    sendcount: usize,
    recv: &RecvBuf<'_, '_>,
    rb: &VBlocks<'_>,
    comm: &Comm,
) -> Result<()> {
    let call = "MPI_Neighbor_allgatherv";
    neighbor_check(call, send, sendcount, false, recv, Some(rb), 0, comm)?;
    let st = dt(send.datatype());
    let _diag = crate::diag::coll(call, comm, None, sendcount, Some(st), None)?;
    let b = allgather_schedule(
        call,
        send.ptr(),
        sendcount,
        st,
        recv.ptr(),
        rb.counts,
        rb.displs,
        dt(recv.datatype()),
        comm,
    )?;
    super::run(b, call)
}

/// MPI_Ineighbor_allgatherv: as [`neighbor_allgatherv`], lent as in
/// [`ineighbor_allgather`].
pub(crate) fn ineighbor_allgatherv(
    send: &SendBuf<'static, '_>,
    sendcount: usize,
    recv: &RecvBuf<'static, '_>,
    rb: &VBlocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    let call = "MPI_Ineighbor_allgatherv";
    neighbor_check(call, send, sendcount, false, recv, Some(rb), 0, comm)?;
    super::start(allgather_schedule(
        call,
        send.ptr(),
        sendcount,
        dt(send.datatype()),
        recv.ptr(),
        rb.counts,
        rb.displs,
        dt(recv.datatype()),
        comm,
    )?)
}

/// Per-neighbour blocks with byte displacements and one datatype each (the
/// general form behind alltoall, alltoallv and alltoallw).
#[allow(clippy::too_many_arguments)]
fn alltoallw_schedule(
    call: &str,
    comm: &Comm,
    sendbuf: *const u8,
    sendcounts: &[usize],
    sdispls_bytes: &[isize],
    sendtypes: &[&Datatype],
    recvbuf: *mut u8,
    recvcounts: &[usize],
    rdispls_bytes: &[isize],
    recvtypes: &[&Datatype],
) -> Result<Builder> {
    let nb = neighborhood(call, comm)?;
    let (ns, nd) = (nb.sources.len(), nb.destinations.len());
    if sendcounts.len() < nd || sdispls_bytes.len() < nd || sendtypes.len() < nd {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            "sendcounts",
            format!("fewer entries than the {nd} destinations"),
        ));
    }
    if recvcounts.len() < ns || rdispls_bytes.len() < ns || recvtypes.len() < ns {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            "recvcounts",
            format!("fewer entries than the {ns} sources"),
        ));
    }
    for t in sendtypes.iter().take(nd) {
        util::check_type(call, "sendtype", t)?;
    }
    for t in recvtypes.iter().take(ns) {
        util::check_type(call, "recvtype", t)?;
    }
    let blocks = Blocks {
        send: (0..nd)
            .map(|j| {
                (
                    sendbuf.wrapping_offset(sdispls_bytes[j]),
                    sendcounts[j],
                    sendtypes[j],
                )
            })
            .collect(),
        recv: (0..ns)
            .map(|i| {
                (
                    recvbuf.wrapping_offset(rdispls_bytes[i]),
                    recvcounts[i],
                    recvtypes[i],
                )
            })
            .collect(),
    };
    Ok(build(comm, &nb, blocks))
}

fn byte_displs(displs: &[isize], dt: &Datatype) -> Vec<isize> {
    displs.iter().map(|d| d * dt.extent()).collect()
}

#[allow(clippy::too_many_arguments)]
fn alltoallv_schedule(
    call: &str,
    sendbuf: *const u8,
    sendcounts: &[usize],
    sdispls: &[isize],
    sendtype: &Datatype,
    recvbuf: *mut u8,
    recvcounts: &[usize],
    rdispls: &[isize],
    recvtype: &Datatype,
    comm: &Comm,
) -> Result<Builder> {
    let nb = neighborhood(call, comm)?;
    let st: Vec<&Datatype> = (0..nb.destinations.len()).map(|_| sendtype).collect();
    let rt: Vec<&Datatype> = (0..nb.sources.len()).map(|_| recvtype).collect();
    alltoallw_schedule(
        call,
        comm,
        sendbuf,
        sendcounts,
        &byte_displs(sdispls, sendtype),
        &st,
        recvbuf,
        recvcounts,
        &byte_displs(rdispls, recvtype),
        &rt,
    )
}

/// MPI_Neighbor_alltoall: `send` holds `sendcount` elements per out-neighbour,
/// `recv` `recvcount` per in-neighbour; safe as [`neighbor_allgather`].
pub(crate) fn neighbor_alltoall(
    send: &SendBuf<'_, '_>,
    sendcount: usize,
    recv: &RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    run_regular(
        "MPI_Neighbor_alltoall",
        true,
        send,
        sendcount,
        recv,
        recvcount,
        comm,
    )
}

/// MPI_Ineighbor_alltoall: as [`neighbor_alltoall`], lent as in
/// [`ineighbor_allgather`].
pub(crate) fn ineighbor_alltoall(
    send: &SendBuf<'static, '_>,
    sendcount: usize,
    recv: &RecvBuf<'static, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    let call = "MPI_Ineighbor_alltoall";
    neighbor_check(call, send, sendcount, true, recv, None, recvcount, comm)?;
    super::start(regular_schedule(
        call, true, send, sendcount, recv, recvcount, comm,
    )?)
}

/// MPI_Neighbor_alltoallv: block `j` of `send` (`sb.counts[j]` elements at
/// `sb.displs[j]`) to out-neighbour `j`, block `i` of `recv` from in-neighbour `i`;
/// safe as [`neighbor_allgather`].
pub(crate) fn neighbor_alltoallv(
    send: &SendBuf<'_, '_>,
    sb: &VBlocks<'_>,
    recv: &RecvBuf<'_, '_>,
    rb: &VBlocks<'_>,
    comm: &Comm,
) -> Result<()> {
    let call = "MPI_Neighbor_alltoallv";
    neighbor_alltoallv_check(call, send, sb, recv, rb, comm)?;
    let _diag = crate::diag::coll(call, comm, None, 0, None, None)?;
    super::run(alltoallv_blocks(call, send, sb, recv, rb, comm)?, call)
}

/// MPI_Ineighbor_alltoallv: as [`neighbor_alltoallv`], lent as in
/// [`ineighbor_allgather`].
pub(crate) fn ineighbor_alltoallv(
    send: &SendBuf<'static, '_>,
    sb: &VBlocks<'_>,
    recv: &RecvBuf<'static, '_>,
    rb: &VBlocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    let call = "MPI_Ineighbor_alltoallv";
    neighbor_alltoallv_check(call, send, sb, recv, rb, comm)?;
    super::start(alltoallv_blocks(call, send, sb, recv, rb, comm)?)
}

fn alltoallv_blocks(
    call: &str,
    send: &SendBuf<'_, '_>,
    sb: &VBlocks<'_>,
    recv: &RecvBuf<'_, '_>,
    rb: &VBlocks<'_>,
    comm: &Comm,
) -> Result<Builder> {
    alltoallv_schedule(
        call,
        send.ptr(),
        sb.counts,
        sb.displs,
        dt(send.datatype()),
        recv.ptr(),
        rb.counts,
        rb.displs,
        dt(recv.datatype()),
        comm,
    )
}

/// The schedule of a neighbourhood alltoallw over its block lists.
fn alltoallw_blocks(
    call: &str,
    send: &SendBlocks<'_, '_>,
    recv: &RecvBlocks<'_, '_>,
    comm: &Comm,
) -> Result<Builder> {
    let (st, rt): (Vec<&Datatype>, Vec<&Datatype>) =
        (send.types().iter().collect(), recv.types().iter().collect());
    alltoallw_schedule(
        call,
        comm,
        send.base(),
        send.counts(),
        send.displs(),
        &st,
        recv.base(),
        recv.counts(),
        recv.displs(),
        &rt,
    )
}

/// MPI_Neighbor_alltoallw (displacements in bytes, a datatype per neighbour):
/// per-neighbour block lists, whose constructors vouch for every block.
pub(crate) fn neighbor_alltoallw(
    send: &SendBlocks<'_, '_>,
    recv: &RecvBlocks<'_, '_>,
    comm: &Comm,
) -> Result<()> {
    let _diag = crate::diag::coll("MPI_Neighbor_alltoallw", comm, None, 0, None, None)?;
    let call = "MPI_Neighbor_alltoallw";
    super::run(alltoallw_blocks(call, send, recv, comm)?, call)
}

/// MPI_Ineighbor_alltoallw: as [`neighbor_alltoallw`], the blocks lent for
/// `'static` (kept valid by the caller's scope until the request completes).
pub(crate) fn ineighbor_alltoallw(
    send: &SendBlocks<'static, '_>,
    recv: &RecvBlocks<'static, '_>,
    comm: &Comm,
) -> Result<Request> {
    super::start(alltoallw_blocks(
        "MPI_Ineighbor_alltoallw",
        send,
        recv,
        comm,
    )?)
}
