//! Gather and scatter (with their v forms): the collectives with a root, whose
//! buffers are significant only there.

use super::*;

/// MPI_Gather: `recv` (the root's) holds `n * recvcount` elements; `send: None` is
/// MPI_IN_PLACE at the root.
pub fn gather(
    send: Option<SendBuf<'_, '_>>,
    recv: Option<RecvBuf<'_, '_>>,
    recvcount: usize,
    root: i32,
    comm: &Comm,
) -> Result<()> {
    // The kernel runs the layout check.
    gather::gather(send, recv, recvcount, root, comm)
}

/// MPI_Igather: as [`gather`], the buffers kept by `scope` until the request completes.
pub fn igather<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: Option<RecvBuf<'a, '_>>,
    recvcount: usize,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    // The kernel runs the layout check.
    let send = send.map(|s| s.lend(scope));
    let r = gather::igather(send, recv.map(|r| r.lend(scope)), recvcount, root, comm)?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Gatherv: block `i` of the root's `recv` is `recvcounts[i]` elements at `displs[i]`.
pub fn gatherv(
    send: Option<SendBuf<'_, '_>>,
    recv: Option<RecvBuf<'_, '_>>,
    recvcounts: &[usize],
    displs: &[isize],
    root: i32,
    comm: &Comm,
) -> Result<()> {
    // The kernel runs the layout check.
    gather::gatherv(send, recv, recvcounts, displs, root, comm)
}

/// MPI_Igatherv: as [`gatherv`], the buffers kept by `scope` until the request completes.
pub fn igatherv<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: Option<RecvBuf<'a, '_>>,
    recvcounts: &[usize],
    displs: &[isize],
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    // The kernel runs the layout check.
    let (send, recv) = (send.map(|s| s.lend(scope)), recv.map(|r| r.lend(scope)));
    let r = gather::igatherv(send, recv, recvcounts, displs, root, comm)?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Scatter: the root's `send` holds `n * sendcount` elements; `recv: None` is
/// MPI_IN_PLACE at the root.
pub fn scatter(
    send: Option<SendBuf<'_, '_>>,
    sendcount: usize,
    recv: Option<RecvBuf<'_, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<()> {
    // The kernel runs the layout check.
    scatter::scatter(send, sendcount, recv, root, comm)
}

/// MPI_Iscatter: as [`scatter`], the buffers kept by `scope` until the request completes.
pub fn iscatter<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sendcount: usize,
    recv: Option<RecvBuf<'a, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    // The kernel runs the layout check.
    let send = send.map(|s| s.lend(scope));
    let r = scatter::iscatter(send, sendcount, recv.map(|r| r.lend(scope)), root, comm)?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Scatterv: block `i` of the root's `send` is `sendcounts[i]` elements at `displs[i]`.
pub fn scatterv(
    send: Option<SendBuf<'_, '_>>,
    sendcounts: &[usize],
    displs: &[isize],
    recv: Option<RecvBuf<'_, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<()> {
    // The kernel runs the layout check.
    scatter::scatterv(send, sendcounts, displs, recv, root, comm)
}

/// MPI_Iscatterv: as [`scatterv`], the buffers kept by `scope` until the request completes.
pub fn iscatterv<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sendcounts: &[usize],
    displs: &[isize],
    recv: Option<RecvBuf<'a, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    // The kernel runs the layout check.
    let (send, recv) = (send.map(|s| s.lend(scope)), recv.map(|r| r.lend(scope)));
    let r = scatter::iscatterv(send, sendcounts, displs, recv, root, comm)?;
    scope.enter(r);
    Ok(r)
}
