//! The neighbourhood allgather(v) and alltoall over a topology's neighbours.

use super::*;
use crate::buf::{RecvBlocks, SendBlocks};

/// The neighbourhood collectives' checks: the receive descriptor holds the in-degree's
/// blocks, the send descriptor the out-degree's (alltoall) or one block (allgather).
#[allow(clippy::too_many_arguments)]
pub(crate) fn neighbor_check(
    call: &str,
    send: &SendBuf<'_, '_>,
    sendcount: usize,
    per_dest: bool,
    recv: &RecvBuf<'_, '_>,
    rb: Option<&Blocks<'_>>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    let (indeg, outdeg) = neighbor::degrees(call, comm)?;
    check_uniform(
        call,
        "sendbuf",
        send.count(),
        sendcount,
        if per_dest { outdeg } else { 1 },
    )?;
    let v = rb.map(|b| (b.counts, b.displs));
    check_layout(
        call,
        "recvbuf",
        "recvcounts",
        recv.count(),
        v,
        recvcount,
        indeg,
    )
}

/// MPI_Neighbor_allgather: `send` (`sendcount` elements) to every out-neighbour;
/// `recv` holds a block of `recvcount` elements per in-neighbour.
pub fn neighbor_allgather(
    send: SendBuf<'_, '_>,
    sendcount: usize,
    recv: RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    neighbor::neighbor_allgather(&send, sendcount, &recv, recvcount, comm)
}

/// MPI_Ineighbor_allgather: as [`neighbor_allgather`], the buffers kept by `scope`
/// until the request completes.
pub fn ineighbor_allgather<'a>(
    scope: &impl BufScope<'a>,
    send: SendBuf<'a, '_>,
    sendcount: usize,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    let (s, r) = (send.lend(scope), recv.lend(scope));
    let q = neighbor::ineighbor_allgather(&s, sendcount, &r, recvcount, comm)?;
    scope.enter(q);
    Ok(q)
}

/// MPI_Neighbor_allgatherv: block `i` of `recv` (from in-neighbour `i`) is
/// `counts[i]` elements at `displs[i]`.
pub fn neighbor_allgatherv(
    send: SendBuf<'_, '_>,
    sendcount: usize,
    recv: RecvBuf<'_, '_>,
    rb: Blocks<'_>,
    comm: &Comm,
) -> Result<()> {
    neighbor::neighbor_allgatherv(&send, sendcount, &recv, &rb, comm)
}

/// MPI_Neighbor_alltoall: block `j` of `send` (`sendcount` elements) to out-neighbour
/// `j`, block `i` of `recv` (`recvcount`) from in-neighbour `i`.
pub fn neighbor_alltoall(
    send: SendBuf<'_, '_>,
    sendcount: usize,
    recv: RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    neighbor::neighbor_alltoall(&send, sendcount, &recv, recvcount, comm)
}

/// MPI_Ineighbor_alltoall: as [`neighbor_alltoall`], the buffers kept by `scope`
/// until the request completes.
pub fn ineighbor_alltoall<'a>(
    scope: &impl BufScope<'a>,
    send: SendBuf<'a, '_>,
    sendcount: usize,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    let (s, r) = (send.lend(scope), recv.lend(scope));
    let q = neighbor::ineighbor_alltoall(&s, sendcount, &r, recvcount, comm)?;
    scope.enter(q);
    Ok(q)
}

/// MPI_Ineighbor_allgatherv: as [`neighbor_allgatherv`], the buffers kept by `scope`
/// until the request completes.
pub fn ineighbor_allgatherv<'a>(
    scope: &impl BufScope<'a>,
    send: SendBuf<'a, '_>,
    sendcount: usize,
    recv: RecvBuf<'a, '_>,
    rb: Blocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    let (s, r) = (send.lend(scope), recv.lend(scope));
    let q = neighbor::ineighbor_allgatherv(&s, sendcount, &r, &rb, comm)?;
    scope.enter(q);
    Ok(q)
}

/// The neighbourhood alltoallv's checks: block `j` of `send` per out-neighbour,
/// block `i` of `recv` per in-neighbour, each inside its buffer.
pub(crate) fn neighbor_alltoallv_check(
    call: &str,
    send: &SendBuf<'_, '_>,
    sb: &Blocks<'_>,
    recv: &RecvBuf<'_, '_>,
    rb: &Blocks<'_>,
    comm: &Comm,
) -> Result<()> {
    let (indeg, outdeg) = neighbor::degrees(call, comm)?;
    check_blocks(
        call,
        "sendbuf",
        "sendcounts",
        "sdispls",
        send.count(),
        sb.counts,
        sb.displs,
        outdeg,
    )?;
    check_blocks(
        call,
        "recvbuf",
        "recvcounts",
        "rdispls",
        recv.count(),
        rb.counts,
        rb.displs,
        indeg,
    )
}

/// MPI_Neighbor_alltoallv: block `j` of `send` (`sb.counts[j]` elements at
/// `sb.displs[j]`) to out-neighbour `j`, block `i` of `recv` from in-neighbour `i`.
pub fn neighbor_alltoallv(
    send: SendBuf<'_, '_>,
    sb: Blocks<'_>,
    recv: RecvBuf<'_, '_>,
    rb: Blocks<'_>,
    comm: &Comm,
) -> Result<()> {
    neighbor::neighbor_alltoallv(&send, &sb, &recv, &rb, comm)
}

/// MPI_Ineighbor_alltoallv: as [`neighbor_alltoallv`], the buffers kept by `scope`
/// until the request completes.
pub fn ineighbor_alltoallv<'a>(
    scope: &impl BufScope<'a>,
    send: SendBuf<'a, '_>,
    sb: Blocks<'_>,
    recv: RecvBuf<'a, '_>,
    rb: Blocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    let (s, r) = (send.lend(scope), recv.lend(scope));
    let q = neighbor::ineighbor_alltoallv(&s, &sb, &r, &rb, comm)?;
    scope.enter(q);
    Ok(q)
}

/// MPI_Neighbor_alltoallw over per-neighbour block lists (each block's count, byte
/// displacement and datatype; their constructors vouch for every block): `send`
/// one block per destination, `recv` one per source.
pub fn neighbor_alltoallw(
    send: SendBlocks<'_, '_>,
    recv: RecvBlocks<'_, '_>,
    comm: &Comm,
) -> Result<()> {
    neighbor::neighbor_alltoallw(&send, &recv, comm)
}

/// MPI_Ineighbor_alltoallw: as [`neighbor_alltoallw`], the buffers kept by `scope`
/// until the request completes.
pub fn ineighbor_alltoallw<'a>(
    scope: &impl BufScope<'a>,
    send: SendBlocks<'a, '_>,
    recv: RecvBlocks<'a, '_>,
    comm: &Comm,
) -> Result<Request> {
    let r = neighbor::ineighbor_alltoallw(&send.lend(scope), &recv.lend(scope), comm)?;
    scope.enter(r);
    Ok(r)
}
