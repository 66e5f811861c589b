//! Reduce_scatter (and reduce_scatter_block): every rank copies a chunk of its
//! whole input (the span of up to `k` elements) into its slot and raises its
//! flag; once all flags are up, each rank folds, in rank order, the part of the
//! chunk that falls in its own block straight from the slots into its receive
//! buffer, and reports `done`. One synchronization per chunk, each element
//! computed once, all ranks reducing in parallel.
//!
//! MPI_IN_PLACE: the input is the receive buffer, and block elements land before
//! (or at) their input position; every input element up to the end of the
//! current chunk is already in our slot, so the folds never overwrite input that
//! is still to be copied.
use super::reduce::fold_into;
use super::{Counter, Session};
use crate::buf::{RecvBuf, SendBuf};
use crate::coll::util::span_len;
use crate::datatype::Datatype;
use crate::error::Result;
use crate::op::Op;
use crate::transport::shm::arena::Operand;

/// The input (`send`, or `recv` when it is `None`: MPI_IN_PLACE) holds
/// `sum(counts)` elements of `dt`'s layout and `recv` `counts[rank]`; `disp` is the prefix sum of `counts` (n + 1 entries, the same on every
/// rank); `k` is `chunk_elems(sum(counts), dt)`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_scatter(
    mut sess: Session<'_>,
    send: Option<&SendBuf<'_, '_>>,
    recv: &mut RecvBuf<'_, '_>,
    disp: &[usize],
    k: usize,
    dt: &Datatype,
    op: &Op,
) -> Result<()> {
    // The views made here, next to their uses (as bcast: cheaper than passed in).
    let send = send.map(|s| s.elems());
    let mut out = recv.elems_mut();
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    let total = disp[n];
    let (mine, mine_end) = (disp[me], disp[me + 1]);
    let ext = dt.extent().max(0) as usize;
    let mut temp = if dt.is_contiguous() {
        Vec::new()
    } else {
        vec![0u8; span_len(k.min(mine_end - mine), dt)]
    };
    let mut result = Ok(());
    let mut e0 = 0;
    while e0 < total {
        let c = k.min(total - e0);
        let s = cx.next();
        cx.wait_free(s);
        // Nobody reads our slot half before our flag.
        let input = match &send {
            Some(i) => i.span(e0, c),
            None => out.as_elems().span(e0, c),
        };
        cx.area().slot(me, s).copy_in(input);
        cx.set(Counter::Flag, s);
        cx.ring_when_complete(Counter::Flag, s, None);
        cx.wait_all(Counter::Flag, s);
        cx.learn(s - 1);
        // Our block's elements in this chunk.
        let (lo, hi) = (mine.max(e0), mine_end.min(e0 + c));
        if lo < hi {
            let area = cx.area();
            let at = (lo - e0) * ext;
            let bc = hi - lo;
            let len = span_len(bc, dt);
            // Slots hold published spans of `c` elements (Acquire in wait_all);
            // elements [lo, hi) start at `at` in each. In place, only input
            // already in our slot is where they land.
            let src = |j: usize| Operand::Stage(area.slot(j, s).sub(at, len));
            let t = if temp.is_empty() {
                &mut temp[..]
            } else {
                &mut temp[..len]
            };
            fold_into(n, src, &mut out, lo - mine, bc, t, dt, op, &mut result);
        }
        cx.set_done(s);
        e0 += c;
    }
    result
}
