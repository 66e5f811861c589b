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

/// Inputs of up to this many bytes walk the input in order (see `interleaved`).
const INTERLEAVE_MIN: usize = 4096;

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
    if let Some(send) = &send {
        // Pieces of at least one element per block and step: the interleaved
        // walk, for inputs above INTERLEAVE_MIN bytes (below, one step either
        // way, and the walk in order has less to work out).
        if k >= n && span_len(total, dt) > INTERLEAVE_MIN {
            return interleaved(cx, send, &mut out, disp, k / n, dt, op);
        }
    }
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
        // Our block's elements in this chunk.
        let (lo, hi) = (mine.max(e0), mine_end.min(e0 + c));
        if lo < hi {
            // Only a rank with elements to fold waits for the others (see `interleaved`).
            cx.wait_all(Counter::Flag, s);
            cx.learn(s - 1);
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

/// Not in place: step t moves elements `t*q .. (t+1)*q` of every block at once.
/// Each rank copies its input's pieces of the other ranks' blocks into its slot
/// (the piece of block j at `j * q` elements), raises its flag, and once all are
/// up folds its own block's piece, in rank order, from the others' slots and its
/// own input (never copied): every step has every rank copying (n-1)/n and
/// folding 1/n of a chunk in parallel, where a walk over the input in order has
/// one rank fold a chunk of its block while the others wait for it, and copies
/// each rank's own block for nothing. `q * n <= k` ([`chunk_elems`]), so a
/// step's pieces fit the slot half.
///
/// [`chunk_elems`]: super::chunk_elems
fn interleaved(
    mut cx: super::Ctx<'_>,
    send: &crate::buf::elems::Elems<'_>,
    out: &mut crate::buf::elems::ElemsMut<'_>,
    disp: &[usize],
    q: usize,
    dt: &Datatype,
    op: &Op,
) -> Result<()> {
    let (n, me) = (cx.n, cx.me);
    let ext = dt.extent().max(0) as usize;
    let longest = (0..n).map(|j| disp[j + 1] - disp[j]).max().unwrap_or(0);
    let mine = disp[me + 1] - disp[me];
    let mut temp = if dt.is_contiguous() {
        Vec::new()
    } else {
        vec![0u8; span_len(q.min(mine), dt)]
    };
    // Elements of block j's piece at step t: (first in the input, count).
    let piece = |j: usize, t0: usize| {
        let cnt = disp[j + 1] - disp[j];
        let lo = t0.min(cnt);
        (disp[j] + lo, (t0 + q).min(cnt) - lo)
    };
    let mut result = Ok(());
    let mut t0 = 0;
    while t0 < longest {
        let s = cx.next();
        cx.wait_free(s);
        for j in (0..n).filter(|&j| j != me) {
            let (p0, pc) = piece(j, t0);
            if pc > 0 {
                // Nobody reads our slot half before our flag; pieces lie q elements apart.
                cx.area()
                    .slot(me, s)
                    .sub(j * q * ext, span_len(pc, dt))
                    .copy_in(send.span(p0, pc));
            }
        }
        cx.set(Counter::Flag, s);
        cx.ring_when_complete(Counter::Flag, s, None);
        let (p0, pc) = piece(me, t0);
        if pc > 0 {
            // Only a rank with elements to fold waits for the others: one with
            // none (an empty block, or one shorter than the longest) reads
            // nothing, so it is done at once; its slot stays until every rank
            // is done with this step (`wait_free` two steps on). Small calls
            // whose blocks are empty on most ranks (8 B over 8 ranks) then
            // cost those ranks no wait and no wake-up.
            cx.wait_all(Counter::Flag, s);
            cx.learn(s - 1);
            let area = cx.area();
            let len = span_len(pc, dt);
            let own = send.span(p0, pc);
            // The others' slots hold our piece at `me * q` elements, published (Acquire in wait_all).
            let src = |j: usize| match j == me {
                true => Operand::Bytes(own),
                false => Operand::Stage(area.slot(j, s).sub(me * q * ext, len)),
            };
            let t = if temp.is_empty() {
                &mut temp[..]
            } else {
                &mut temp[..len]
            };
            fold_into(n, src, out, p0 - disp[me], pc, t, dt, op, &mut result);
        }
        cx.set_done(s);
        t0 += q;
    }
    result
}
