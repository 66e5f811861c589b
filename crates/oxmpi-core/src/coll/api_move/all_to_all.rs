//! Allgather and alltoall with their v and w forms: every rank's blocks to
//! every rank.

use super::*;
use crate::buf::{check_w, RecvBlocks, SendBlocks};

/// The number of blocks an all-to-all buffer holds: one per rank of the peer group.
pub(super) fn peers(comm: &Comm) -> usize {
    comm.peer_group_size().max(0) as usize
}

/// The checks of the allgather family: `recv` holds `n * count` elements (the uniform
/// forms, `counts: None`), or block `i` is `counts[i]` elements at `displs[i]`.
pub(crate) fn allgather_check(
    call: &str,
    recv: &RecvBuf<'_, '_>,
    counts: Option<&[usize]>,
    displs: &[isize],
    count: usize,
    comm: &Comm,
) -> Result<()> {
    let v = counts.map(|c| (c, displs));
    check_layout(
        call,
        "recvbuf",
        "recvcounts",
        recv.count(),
        v,
        count,
        peers(comm),
    )
}

/// MPI_Allgather: `recv` holds `n * recvcount` elements; `send: None` is MPI_IN_PLACE.
pub fn allgather(
    send: Option<SendBuf<'_, '_>>,
    recv: RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    // The kernel runs the layout check (its other callers need it too).
    allgather::allgather(send, recv, recvcount, comm)
}

/// MPI_Iallgather: as [`allgather`], the buffers kept by `scope` until the request completes.
pub fn iallgather<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    // The kernel runs the layout check.
    let send = send.map(|s| s.lend(scope));
    let r = allgather::iallgather(send, recv.lend(scope), recvcount, comm)?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Allgatherv: block `i` of `recv` is `recvcounts[i]` elements at `displs[i]`.
pub fn allgatherv(
    send: Option<SendBuf<'_, '_>>,
    recv: RecvBuf<'_, '_>,
    recvcounts: &[usize],
    displs: &[isize],
    comm: &Comm,
) -> Result<()> {
    // The kernel runs the layout check.
    allgather::allgatherv(send, recv, recvcounts, displs, comm)
}

/// MPI_Iallgatherv: as [`allgatherv`], the buffers kept by `scope` until the request completes.
pub fn iallgatherv<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcounts: &[usize],
    displs: &[isize],
    comm: &Comm,
) -> Result<Request> {
    // The kernel runs the layout check.
    let send = send.map(|s| s.lend(scope));
    let r = allgather::iallgatherv(send, recv.lend(scope), recvcounts, displs, comm)?;
    scope.enter(r);
    Ok(r)
}

pub(crate) fn alltoall_check(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    sendcount: usize,
    recv: &RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    let n = peers(comm);
    if let Some(s) = send {
        check_uniform(call, "sendbuf", s.count(), sendcount, n)?;
    }
    check_uniform(call, "recvbuf", recv.count(), recvcount, n)
}

/// MPI_Alltoall: `send` holds `n * sendcount` elements, `recv` `n * recvcount`;
/// `send: None` is MPI_IN_PLACE (the blocks are read from `recv`).
pub fn alltoall(
    send: Option<SendBuf<'_, '_>>,
    sendcount: usize,
    recv: RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    // The kernel runs the layout check.
    alltoall::alltoall(send, sendcount, recv, recvcount, comm)
}

/// MPI_Ialltoall: as [`alltoall`], the buffers kept by `scope` until the request completes.
pub fn ialltoall<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sendcount: usize,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    // The kernel runs the layout check.
    let send = send.map(|s| s.lend(scope));
    let r = alltoall::ialltoall(send, sendcount, recv.lend(scope), recvcount, comm)?;
    scope.enter(r);
    Ok(r)
}

/// The send and receive blocks of an alltoallv (each side's counts and displacements).
pub struct Blocks<'c> {
    pub counts: &'c [usize],
    pub displs: &'c [isize],
}

pub(crate) fn alltoallv_check(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    sb: &Blocks<'_>,
    recv: &RecvBuf<'_, '_>,
    rb: &Blocks<'_>,
    comm: &Comm,
) -> Result<()> {
    let n = peers(comm);
    if let Some(s) = send {
        check_blocks(
            call,
            "sendbuf",
            "sendcounts",
            "sdispls",
            s.count(),
            sb.counts,
            sb.displs,
            n,
        )?;
    }
    check_blocks(
        call,
        "recvbuf",
        "recvcounts",
        "rdispls",
        recv.count(),
        rb.counts,
        rb.displs,
        n,
    )
}

/// MPI_Alltoallv: block `i` of each side is `counts[i]` elements at `displs[i]`;
/// `send: None` is MPI_IN_PLACE.
pub fn alltoallv(
    send: Option<SendBuf<'_, '_>>,
    sb: Blocks<'_>,
    recv: RecvBuf<'_, '_>,
    rb: Blocks<'_>,
    comm: &Comm,
) -> Result<()> {
    // The kernel runs the layout check.
    alltoall::alltoallv(send, sb.counts, sb.displs, recv, rb.counts, rb.displs, comm)
}

/// MPI_Ialltoallv: as [`alltoallv`], the buffers kept by `scope` until the request completes.
pub fn ialltoallv<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sb: Blocks<'_>,
    recv: RecvBuf<'a, '_>,
    rb: Blocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    // The kernel runs the layout check.
    let send = send.map(|s| s.lend(scope));
    let r = alltoall::ialltoallv(send, sb, recv.lend(scope), rb, comm)?;
    scope.enter(r);
    Ok(r)
}

/// The bytes a descriptor of the w forms covers: a byte descriptor's count, or a
/// contiguous one's `count * size` (the w forms place blocks at byte displacements).
pub(super) fn span(call: &str, arg: &str, count: usize, d: Option<&Datatype>) -> Result<usize> {
    let Some(d) = d else { return Ok(count) };
    if d.true_lb() != 0 || d.size() as isize != d.extent() || d.true_extent() != d.extent() {
        return Err(MpiError::arg(
            ErrorClass::Buffer,
            call,
            arg,
            "the w forms take a byte (or contiguous) buffer; its datatype has gaps",
        ));
    }
    count
        .checked_mul(d.size())
        .ok_or_else(|| MpiError::arg(ErrorClass::Buffer, call, arg, "its size overflows"))
}

/// One side of an alltoallw: per peer a count, a byte displacement and a datatype.
pub struct WBlocks<'c> {
    pub counts: &'c [usize],
    pub displs: &'c [isize],
    pub types: &'c [Datatype],
}

pub(super) fn alltoallw_check(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    sb: &WBlocks<'_>,
    recv: &RecvBuf<'_, '_>,
    rb: &WBlocks<'_>,
    comm: &Comm,
) -> Result<()> {
    let n = peers(comm);
    if let Some(s) = send {
        let len = span(call, "sendbuf", s.count(), s.datatype())?;
        check_w(call, "sendbuf", len, sb.counts, sb.displs, sb.types, n)?;
    }
    let len = span(call, "recvbuf", recv.count(), recv.datatype())?;
    check_w(call, "recvbuf", len, rb.counts, rb.displs, rb.types, n)
}

/// A byte (or contiguous) descriptor's bytes as per-peer block lists (the first
/// `n` of each array), after [`alltoallw_check`].
#[allow(clippy::type_complexity)]
fn w_lists<'a, 'c>(
    call: &str,
    send: Option<SendBuf<'a, '_>>,
    sb: &WBlocks<'c>,
    recv: RecvBuf<'a, '_>,
    rb: &WBlocks<'c>,
    n: usize,
) -> Result<(Option<SendBlocks<'a, 'c>>, RecvBlocks<'a, 'c>)> {
    let empty = |arg| MpiError::arg(ErrorClass::Buffer, call, arg, "has no byte span");
    let s = match send {
        Some(s) => {
            let bytes = s.span_bytes().ok_or_else(|| empty("sendbuf"))?;
            let (c, d, t) = (&sb.counts[..n], &sb.displs[..n], &sb.types[..n]);
            Some(SendBlocks::within(call, "sendbuf", bytes, c, d, t)?)
        }
        None => None,
    };
    let bytes = recv.into_span_bytes().ok_or_else(|| empty("recvbuf"))?;
    let (c, d, t) = (&rb.counts[..n], &rb.displs[..n], &rb.types[..n]);
    let r = RecvBlocks::within(call, "recvbuf", bytes, c, d, t)?;
    Ok((s, r))
}

/// MPI_Alltoallw: byte descriptors ([`SendBuf::bytes`]), each peer's block
/// `counts[i]` elements of `types[i]` from byte `displs[i]`; `send: None` is MPI_IN_PLACE.
pub fn alltoallw(
    send: Option<SendBuf<'_, '_>>,
    sb: WBlocks<'_>,
    recv: RecvBuf<'_, '_>,
    rb: WBlocks<'_>,
    comm: &Comm,
) -> Result<()> {
    const CALL: &str = "MPI_Alltoallw";
    alltoallw_check(CALL, &send, &sb, &recv, &rb, comm)?;
    let (s, r) = w_lists(CALL, send, &sb, recv, &rb, peers(comm))?;
    alltoall::alltoallw(s.as_ref(), &r, comm)
}

/// MPI_Ialltoallw: as [`alltoallw`], the buffers kept by `scope` until the request completes.
pub fn ialltoallw<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sb: WBlocks<'_>,
    recv: RecvBuf<'a, '_>,
    rb: WBlocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    const CALL: &str = "MPI_Ialltoallw";
    alltoallw_check(CALL, &send, &sb, &recv, &rb, comm)?;
    let (s, r) = w_lists(CALL, send, &sb, recv, &rb, peers(comm))?;
    ialltoallw_blocks(scope, s, r, comm)
}

/// MPI_Alltoallw over per-peer block lists (each peer's count, byte displacement
/// and datatype; their constructors vouch for every block); `send: None` is
/// MPI_IN_PLACE.
pub fn alltoallw_blocks(
    send: Option<SendBlocks<'_, '_>>,
    recv: RecvBlocks<'_, '_>,
    comm: &Comm,
) -> Result<()> {
    alltoall::alltoallw(send.as_ref(), &recv, comm)
}

/// MPI_Ialltoallw over block lists: as [`alltoallw_blocks`], the buffers kept by
/// `scope` until the request completes.
pub fn ialltoallw_blocks<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBlocks<'a, '_>>,
    recv: RecvBlocks<'a, '_>,
    comm: &Comm,
) -> Result<Request> {
    let s = send.map(|s| s.lend(scope));
    let r = alltoall::ialltoallw(s.as_ref(), &recv.lend(scope), comm)?;
    scope.enter(r);
    Ok(r)
}
