//! Reduce: every rank copies its contribution (the memory span of a chunk of
//! elements) into its slot and raises its flag; the root folds the slots in
//! rank order into its receive buffer. Also the chunking and folding shared with
//! allreduce.
use super::{copy, Counter, Session, CHUNK};
use crate::coll::util::span_len;
use crate::datatype::Datatype;
use crate::error::Result;
use crate::op::Op;

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

/// `acc = src(0) op (src(1) op (... op src(n-1)))` over `c` elements whose spans
/// start at the given addresses (`acc` is written whole: gaps too).
///
/// # Safety
/// Every `src(j)` is readable and `acc` writable for `span_len(c, dt)` bytes; `acc`
/// overlaps none of them.
pub(super) unsafe fn fold(
    n: usize,
    src: impl Fn(usize) -> *const u8,
    acc: *mut u8,
    c: usize,
    dt: &Datatype,
    op: &Op,
) -> Result<()> {
    let lb = dt.true_lb();
    // SAFETY: forwarded caller contract.
    unsafe { copy(src(n - 1), acc, span_len(c, dt)) };
    for j in (0..n - 1).rev() {
        // SAFETY: both spans cover `c` elements of `dt` once shifted back by `true_lb` (caller contract); `apply` touches only the elements' bytes.
        unsafe { op.apply(src(j).wrapping_offset(-lb), acc.wrapping_offset(-lb), c, dt)? };
    }
    Ok(())
}

/// [`fold`] into the receive span at `out`, straight there for a contiguous type
/// (`temp` empty) or through the span `temp` then [`deliver`]ed, so only element
/// bytes of `out` are written; a fold error is kept in `result` unless one is there.
///
/// # Safety
/// As [`fold`] for `src`; `out` is writable for the span of `c` elements and, when
/// `temp` is empty, may be the accumulator (no overlap with the spans it folds
/// other than its own input already copied to a slot); a non-empty `temp` holds a
/// span of `c` elements.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn fold_into(
    n: usize,
    src: impl Fn(usize) -> *const u8,
    out: *mut u8,
    temp: &mut [u8],
    c: usize,
    dt: &Datatype,
    op: &Op,
    result: &mut Result<()>,
) {
    let acc = if temp.is_empty() {
        out
    } else {
        temp.as_mut_ptr()
    };
    // SAFETY: forwarded caller contract (`acc` is `out` or the temporary span).
    let r = unsafe { fold(n, src, acc, c, dt, op) };
    if r.is_err() && result.is_ok() {
        *result = r;
    }
    if !temp.is_empty() {
        // SAFETY: `temp` holds the folded span of `c` elements and `out` is writable for that span (caller contract); they are distinct buffers.
        unsafe { deliver(temp.as_ptr(), out, c, dt) };
    }
}

/// Copies `c` elements from the span at `src` to the span at `dst`, writing
/// only the elements' bytes for non-contiguous types.
///
/// # Safety
/// `src` is readable and `dst` writable for the span of `c` elements; distinct.
pub(super) unsafe fn deliver(src: *const u8, dst: *mut u8, c: usize, dt: &Datatype) {
    if dt.is_contiguous() {
        // SAFETY: forwarded caller contract.
        unsafe { copy(src, dst, span_len(c, dt)) };
        return;
    }
    let (ext, lb) = (dt.extent(), dt.true_lb());
    for i in 0..c as isize {
        dt.for_each_block(i * ext - lb, |at, len| {
            // SAFETY: `at..at + len` is one block of element `i`, inside both spans.
            unsafe { copy(src.wrapping_offset(at), dst.wrapping_offset(at), len) };
        });
    }
}

/// # Safety
/// The buffers hold `count` elements of `dt` (recvbuf at the root); `k` is
/// [`chunk_elems`] of them. `sendbuf == None` (in place) only at the root.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce(
    mut sess: Session<'_>,
    sendbuf: Option<*const u8>,
    recvbuf: *mut u8,
    count: usize,
    k: usize,
    dt: &Datatype,
    op: &Op,
    root: usize,
) -> Result<()> {
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    let ext = dt.extent().max(0) as usize;
    let input = sendbuf
        .unwrap_or(recvbuf as *const u8)
        .wrapping_offset(dt.true_lb());
    let out = recvbuf.wrapping_offset(dt.true_lb());
    let in_place = sendbuf.is_none();
    let mut temp = if dt.is_contiguous() {
        Vec::new()
    } else {
        vec![0u8; span_len(k, dt)]
    };
    let mut result = Ok(());
    let mut e0 = 0;
    while e0 < count {
        let c = k.min(count - e0);
        let len = span_len(c, dt);
        let off = e0 * ext;
        let s = cx.next();
        if me != root || in_place {
            cx.wait_free(s);
            // SAFETY: the input span of elements [e0, e0 + c) is readable (the collective's contract); the slot half holds CHUNK >= len bytes.
            unsafe { copy(input.wrapping_add(off), cx.area().slot(me, s), len) };
        }
        if me != root {
            cx.set(Counter::Flag, s);
            cx.ring_when_complete(Counter::Flag, s, Some(root));
        } else {
            cx.wait_all(Counter::Flag, s);
            cx.learn(s - 1);
            let area = cx.area();
            let src = |j: usize| {
                if j == me && !in_place {
                    input.wrapping_add(off)
                } else {
                    area.slot(j, s) as *const u8
                }
            };
            // Slots hold published spans of `c` elements (Acquire in wait_all); in place, our input is in our slot.
            // SAFETY: so the spans are readable, `out + off` (elements [e0, e0 + c)) writable and apart; `temp` is empty or `len` bytes.
            unsafe {
                fold_into(
                    n,
                    src,
                    out.wrapping_add(off),
                    &mut temp,
                    c,
                    dt,
                    op,
                    &mut result,
                )
            };
        }
        cx.set_done(s);
        e0 += c;
    }
    result
}
