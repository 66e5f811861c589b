//! Allreduce: every rank copies its contribution into its slot and raises its
//! flag. Then, by variant (the same on every rank):
//! * `full` (small messages, a processor per rank): each rank folds all slots in
//!   rank order into its own receive buffer (one synchronization; the same
//!   operands in the same order everywhere, so identical bits);
//! * `gather` (small messages, oversubscribed host): the last rank to arrive
//!   folds into the broadcast buffer and releases everyone (each rank sleeps and
//!   wakes at most once, and one wake-up call reaches them all);
//! * `blocks` (larger messages): each rank folds one block of the elements into
//!   the broadcast buffer and raises `res`, then all copy the whole result out
//!   (two synchronizations, each element computed once).
use super::reduce::{deliver, fold, fold_into};
use super::{copy, Counter, Session, INLINE};
use crate::coll::util::span_len;
use crate::datatype::Datatype;
use crate::error::Result;
use crate::op::Op;

/// Up to this many bytes (the message's span), every rank folds everything
/// (or, on an oversubscribed host, the last to arrive folds for everyone).
pub(crate) const FULL_MAX: usize = 4096;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    Full,
    Gather,
    Blocks,
}

/// # Safety
/// The buffers hold `count` elements of `dt`; `k` is `chunk_elems` of them;
/// `sendbuf == None` is MPI_IN_PLACE.
pub(crate) unsafe fn allreduce(
    mut sess: Session<'_>,
    sendbuf: Option<*const u8>,
    recvbuf: *mut u8,
    count: usize,
    k: usize,
    dt: &Datatype,
    op: &Op,
) -> Result<()> {
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    let ext = dt.extent().max(0) as usize;
    let input = sendbuf
        .unwrap_or(recvbuf as *const u8)
        .wrapping_offset(dt.true_lb());
    let out = recvbuf.wrapping_offset(dt.true_lb());
    let variant = match (span_len(count, dt) <= FULL_MAX, cx.r.oversubscribed) {
        (true, false) => Variant::Full,
        (true, true) => Variant::Gather,
        (false, _) => Variant::Blocks,
    };
    let full = variant == Variant::Full;
    let mut temp = if dt.is_contiguous() || !full {
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
        cx.wait_free(s);
        // SAFETY: our input span of elements [e0, e0 + c) is readable; the slot half holds CHUNK >= len bytes and nobody reads it before our flag.
        unsafe { copy(input.wrapping_add(off), cx.area().slot(me, s), len) };
        cx.set(Counter::Flag, s);
        if variant == Variant::Gather {
            // The last rank to arrive folds for everyone (in rank order, so the
            // bits do not depend on who) and releases them with one wake-up. A
            // result of at most INLINE bytes (the same `len` on every rank) goes
            // in the release line, so it arrives with the release.
            let res = |a: &super::Area| {
                if len <= INLINE {
                    a.inline_bbuf(s)
                } else {
                    a.bbuf(s)
                }
            };
            if cx.arrive() {
                let area = cx.area();
                let src = |j: usize| area.slot(j, s) as *const u8;
                // Every slot holds its published span of `c` elements (Acquire in arrive's addition).
                // SAFETY: so they are readable; the broadcast half (CHUNK >= len, or the inline half, INLINE >= len) is free: all are done with step s - 2.
                let r = unsafe { fold(n, src, res(area), c, dt, op) };
                if r.is_err() && result.is_ok() {
                    result = r;
                }
                cx.publish_release(s);
            } else {
                cx.wait_release(s);
            }
            cx.learn(s - 1);
            // SAFETY: the last arriver published the result span (Acquire in wait_release, or our own writes); the receive buffer holds elements [e0, e0 + c).
            unsafe { deliver(res(cx.area()), out.wrapping_add(off), c, dt) };
            cx.set_done(s);
            e0 += c;
            continue;
        }
        cx.ring_others();
        cx.wait_all(Counter::Flag, s);
        cx.learn(s - 1);
        let area = cx.area();
        if full {
            let src = |j: usize| area.slot(j, s) as *const u8;
            // Slots hold published spans of `c` elements (Acquire in wait_all); our input is in our slot.
            // SAFETY: so `out + off` (elements [e0, e0 + c)) is only written; `temp` is empty or `c` elements.
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
        } else {
            // Our block of the chunk's elements.
            let (q, rem) = (c / n, c % n);
            let b0 = me * q + me.min(rem);
            let bc = q + usize::from(me < rem);
            if bc > 0 {
                let at = b0 * ext;
                let src = |j: usize| area.slot(j, s).wrapping_add(at) as *const u8;
                // Elements [b0, b0 + bc) of the published spans start at `at`; ranks' blocks do not overlap.
                // SAFETY: the broadcast half (CHUNK bytes, free after step s - 2) takes them at the same offset.
                let r = unsafe { fold(n, src, area.bbuf(s).wrapping_add(at), bc, dt, op) };
                if r.is_err() && result.is_ok() {
                    result = r;
                }
            }
            cx.set(Counter::Res, s);
            cx.ring_others();
            cx.wait_all(Counter::Res, s);
            // SAFETY: every block of the result is published (Acquire in wait_all); the receive buffer holds elements [e0, e0 + c) at `out + off`.
            unsafe { deliver(cx.area().bbuf(s), out.wrapping_add(off), c, dt) };
        }
        cx.set_done(s);
        e0 += c;
    }
    result
}
