//! Reduce_scatter and reduce_scatter_block: a reduction whose result is
//! scattered in blocks.

use super::*;

/// The checks of a reduce-scatter: one datatype layout on both sides, the input
/// (`send`, or `recv` in place) `sum(counts)` elements, `recv` this rank's block.
pub(crate) fn reduce_scatter_check(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    recv: &RecvBuf<'_, '_>,
    counts: &[usize],
    comm: &Comm,
) -> Result<()> {
    let n = comm.size().max(0) as usize;
    if counts.len() < n {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            "recvcounts",
            format!("has {} entries for {n} ranks", counts.len()),
        ));
    }
    let total = counts[..n]
        .iter()
        .try_fold(0usize, |a, &c| a.checked_add(c))
        .ok_or_else(|| {
            MpiError::arg(ErrorClass::Count, call, "recvcounts", "the total overflows")
        })?;
    let mine = counts.get(comm.rank() as usize).copied().unwrap_or(0);
    let layout = |d: &Datatype| (d.size(), d.extent(), d.true_lb(), d.true_extent());
    match send {
        Some(s) => {
            if layout(dt(s.datatype())) != layout(dt(recv.datatype())) {
                return Err(MpiError::arg(
                    ErrorClass::Buffer,
                    call,
                    "recvbuf",
                    "the receive buffer's datatype does not have the send buffer's layout",
                ));
            }
            check_uniform(call, "sendbuf", s.count(), total, 1)?;
            check_uniform(call, "recvbuf", recv.count(), mine, 1)
        }
        None => check_uniform(call, "recvbuf", recv.count(), total, 1),
    }
}

/// MPI_Reduce_scatter: the input (`send`, or `recv` for `send: None`, MPI_IN_PLACE)
/// is `sum(recvcounts)` elements; this rank receives its block in `recv`.
pub fn reduce_scatter(
    send: Option<SendBuf<'_, '_>>,
    mut recv: RecvBuf<'_, '_>,
    recvcounts: &[usize],
    op: &Op,
    comm: &Comm,
) -> Result<()> {
    reduce_scatter::reduce_scatter(send.as_ref(), &mut recv, recvcounts, op, comm)
}

/// MPI_Ireduce_scatter: as [`reduce_scatter`], the buffers kept by `scope` until the request completes.
pub fn ireduce_scatter<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcounts: &[usize],
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    let (s, r) = (send.map(|s| s.lend(scope)), recv.lend(scope));
    let q = reduce_scatter::ireduce_scatter(s.as_ref(), &r, recvcounts, op, comm)?;
    scope.enter(q);
    Ok(q)
}

/// MPI_Reduce_scatter_block: [`reduce_scatter`] with `recvcount` for every rank.
pub fn reduce_scatter_block(
    send: Option<SendBuf<'_, '_>>,
    mut recv: RecvBuf<'_, '_>,
    recvcount: usize,
    op: &Op,
    comm: &Comm,
) -> Result<()> {
    reduce_scatter::reduce_scatter_block(send.as_ref(), &mut recv, recvcount, op, comm)
}

/// MPI_Ireduce_scatter_block: as [`reduce_scatter_block`], the buffers kept by `scope`
/// until the request completes.
pub fn ireduce_scatter_block<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    let (s, r) = (send.map(|s| s.lend(scope)), recv.lend(scope));
    let q = reduce_scatter::ireduce_scatter_block(s.as_ref(), &r, recvcount, op, comm)?;
    scope.enter(q);
    Ok(q)
}
