//! Gather and scatter (with their v forms): the collectives with a root, whose
//! buffers are significant only there.

use super::*;

/// The raw arguments of a rooted gather after the checks.
pub(crate) struct Rooted {
    pub(crate) send: Option<*const u8>,
    pub(crate) recv: *mut u8,
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_args(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    recv: &Option<RecvBuf<'_, '_>>,
    recvcount: Option<&[usize]>,
    displs: &[isize],
    count: usize,
    root: i32,
    comm: &Comm,
) -> Result<Rooted> {
    let recv_p = match recv {
        Some(r) if at_root(comm, root) => {
            let n = comm.peer_group_size().max(0) as usize;
            let v = recvcount.map(|c| (c, displs));
            check_layout(call, "recvbuf", "recvcounts", r.count(), v, count, n)?;
            r.ptr()
        }
        Some(_) => nowhere(),
        None if at_root(comm, root) => return Err(needed(call, "recvbuf")),
        None => nowhere(),
    };
    // Without a send buffer the raw kernel either reads the root's block of the
    // receive buffer (in place, checked above) or refuses.
    Ok(Rooted {
        send: send.as_ref().map(|s| s.ptr()),
        recv: recv_p,
    })
}

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
    let a = gather_args(
        "MPI_Igather",
        &send,
        &recv,
        None,
        &[],
        recvcount,
        root,
        comm,
    )?;
    let sc = send.as_ref().map_or(0, |s| s.count());
    // SAFETY: as in `gather`, the descriptors valid for 'a, which `scope` keeps from ending before the request completes.
    let r = unsafe {
        gather::igather(
            a.send,
            sc,
            sdt(&send),
            a.recv,
            recvcount,
            rdt(&recv),
            root,
            comm,
        )
    }?;
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
    let a = gather_args(
        "MPI_Igatherv",
        &send,
        &recv,
        Some(recvcounts),
        displs,
        0,
        root,
        comm,
    )?;
    let sc = send.as_ref().map_or(0, |s| s.count());
    // SAFETY: as in `igather`.
    let r = unsafe {
        gather::igatherv(
            a.send,
            sc,
            sdt(&send),
            a.recv,
            recvcounts,
            displs,
            rdt(&recv),
            root,
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

pub(crate) fn scatter_args(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    counts: Option<&[usize]>,
    displs: &[isize],
    count: usize,
    root: i32,
    comm: &Comm,
) -> Result<*const u8> {
    Ok(match send {
        Some(s) if at_root(comm, root) => {
            let n = comm.peer_group_size().max(0) as usize;
            let v = counts.map(|c| (c, displs));
            check_layout(call, "sendbuf", "sendcounts", s.count(), v, count, n)?;
            s.ptr()
        }
        Some(_) => nowhere(),
        None if at_root(comm, root) => return Err(needed(call, "sendbuf")),
        None => nowhere(),
    })
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
    let sp = scatter_args("MPI_Iscatter", &send, None, &[], sendcount, root, comm)?;
    let rc = recv.as_ref().map_or(0, |r| r.count());
    // SAFETY: as in `igather`.
    let r = unsafe {
        scatter::iscatter(
            sp,
            sendcount,
            sdt(&send),
            recv.as_ref().map(|r| r.ptr()),
            rc,
            rdt(&recv),
            root,
            comm,
        )
    }?;
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
    let sp = scatter_args(
        "MPI_Iscatterv",
        &send,
        Some(sendcounts),
        displs,
        0,
        root,
        comm,
    )?;
    let rc = recv.as_ref().map_or(0, |r| r.count());
    // SAFETY: as in `igather`.
    let r = unsafe {
        scatter::iscatterv(
            sp,
            sendcounts,
            displs,
            sdt(&send),
            recv.as_ref().map(|r| r.ptr()),
            rc,
            rdt(&recv),
            root,
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}
