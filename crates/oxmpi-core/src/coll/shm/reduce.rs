//! Reduce: every rank copies its contribution (the memory span of a chunk of
//! elements) into its slot and raises its flag; the root folds the slots in
//! rank order into its receive buffer. Also the chunking and folding shared with
//! allreduce.
use super::{Counter, Session, CHUNK};
use crate::buf::elems::ElemsMut;
use crate::buf::{RecvBuf, SendBuf};
use crate::coll::util::span_len;
use crate::datatype::Datatype;
use crate::error::Result;
use crate::op::Op;
use crate::transport::shm::arena::{fold, Acc, Operand};

/// Elements per chunk so that a chunk's span fits a slot half; `None` when one
/// element's span does not (then the schedules serve the call). Depends on the
/// datatype and count only, which all ranks of a reduction share.
pub(crate) fn chunk_elems(count: usize, dt: &Datatype) -> Option<usize> {
    let te = dt.true_extent().max(0) as usize;
    if count == 0 || dt.size() == 0 || te == 0 || te > CHUNK {
        return None;
    }
    if count == 1 {
        return Some(1);
    }
    let ext = dt.extent();
    if ext <= 0 {
        return None;
    }
    Some(((CHUNK - te) / ext as usize + 1).min(count))
}

/// [`fold`] of elements `e0..e0 + c` into `out`, straight into its span for a
/// contiguous type (`temp` empty) or through the span `temp` then delivered, so
/// only element bytes of `out` are written; a fold error is kept in `result`
/// unless one is there.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn fold_into<'s>(
    n: usize,
    src: impl Fn(usize) -> Operand<'s>,
    out: &mut ElemsMut<'_>,
    e0: usize,
    c: usize,
    temp: &mut [u8],
    dt: &Datatype,
    op: &Op,
    result: &mut Result<()>,
) {
    // Empty `temp`: a contiguous type, whose span is exactly its elements.
    let r = if temp.is_empty() {
        fold(n, src, Acc::Bytes(out.span_mut(e0, c)), c, dt, op)
    } else {
        fold(n, src, Acc::Bytes(&mut *temp), c, dt, op)
    };
    if r.is_err() && result.is_ok() {
        *result = r;
    }
    if !temp.is_empty() {
        out.deliver(e0, c, temp);
    }
}

/// `send` and `recv` (the root's; ignored elsewhere) are views of `count`
/// elements of `dt`'s layout; `k` is [`chunk_elems`] of them. `send == None` (in
/// place) only at the root.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce(
    mut sess: Session<'_>,
    send: Option<&SendBuf<'_, '_>>,
    recv: Option<&mut RecvBuf<'_, '_>>,
    count: usize,
    k: usize,
    dt: &Datatype,
    op: &Op,
    root: usize,
) -> Result<()> {
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    // The views made here, next to their uses (as bcast: cheaper than passed in).
    let send = send.map(|s| s.elems());
    let mut out = recv.filter(|_| me == root).map(|r| r.elems_mut());
    let in_place = send.is_none();
    let mut temp = if dt.is_contiguous() {
        Vec::new()
    } else {
        vec![0u8; span_len(k, dt)]
    };
    let mut result = Ok(());
    let mut e0 = 0;
    while e0 < count {
        let c = k.min(count - e0);
        let s = cx.next();
        if me != root || in_place {
            cx.wait_free(s);
            // Nobody reads our slot half before our flag (or, in place, our own fold).
            let input = match (&send, &out) {
                (Some(i), _) => i.span(e0, c),
                (None, Some(o)) => o.as_elems().span(e0, c),
                (None, None) => panic!("MPI_IN_PLACE is the root's only"),
            };
            cx.area().slot(me, s).copy_in(input);
        }
        if me != root {
            // Our flag and `done` at once: we read nothing of this step.
            cx.contribute(s, root);
        } else {
            cx.wait_all(Counter::Flag, s);
            cx.learn(s - 1);
            let area = cx.area();
            let mine = send.map(|i| i.span(e0, c));
            // Slots hold published spans of `c` elements (Acquire in wait_all); in place, our input is in our slot.
            let src = |j: usize| match mine {
                Some(b) if j == me => Operand::Bytes(b),
                _ => Operand::Stage(area.slot(j, s)),
            };
            let out = out.as_mut().expect("the root has a receive buffer");
            fold_into(n, src, out, e0, c, &mut temp, dt, op, &mut result);
            cx.set_done(s);
        }
        e0 += c;
    }
    result
}
