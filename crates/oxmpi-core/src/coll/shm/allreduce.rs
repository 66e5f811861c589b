//! Allreduce: every rank copies its contribution into its slot and raises its
//! flag. Then, by variant (the same on every rank):
//! * `full` (small messages, a processor per rank): each rank folds all slots in
//!   rank order into its own receive buffer (one synchronization; the same
//!   operands in the same order everywhere, so identical bits);
//! * `gather` (up to [`GATHER_MAX`], oversubscribed host): the last rank to arrive
//!   folds into the broadcast buffer and releases everyone (each rank sleeps and
//!   wakes at most once, and one wake-up call reaches them all);
//! * `blocks` (larger messages): each rank folds one block of the elements into
//!   the broadcast buffer and raises `res`, then all copy the whole result out
//!   (two synchronizations, each element computed once).
use super::{Counter, Session};
use crate::buf::{RecvBuf, SendBuf};
use crate::coll::util::span_len;
use crate::error::Result;
use crate::op::Op;
use crate::transport::shm::arena::{fold_with, Acc, Operand};

/// Up to this many bytes (the message's span), every rank folds everything
/// (or, on an oversubscribed host, the last to arrive folds for everyone).
pub(crate) const FULL_MAX: usize = 4096;

/// On an oversubscribed host, up to this many bytes the last rank to arrive
/// folds for everyone (`OXMPI_ALLREDUCE_SHM_GATHER_MAX` overrides it, read
/// once): one wake-up per rank and call instead of the blocks variant's two
/// rounds of all-to-all waits. 8 ranks on 2 cores (load 20): 32 KiB 31-36 us
/// median against 47-218, 128 KiB 159-162 against 185-192; also ahead at 512
/// KiB-2 MiB there, but mixed at 4 ranks 512 KiB; bench/PROFILE.md, collB28.
pub(crate) const GATHER_MAX: usize = 128 * 1024;

/// MPI_Iallreduce's [`GATHER_MAX`], the blocking call's. Above it the
/// `blocks` variant: the gather's last arriver folds every 64 KiB chunk alone
/// while the other core idles, and from 512 KiB that serial fold costs more
/// than the blocks' second round of looks (4 ranks on 2 cores, medians of 5:
/// 512 KiB 271 -> 205 us, 2 MiB 1,498 -> 1,185; 8 ranks 512 KiB 408 -> 319;
/// bench/PROFILE.md, collX34). Up to 128 KiB the gather's one arrival and one
/// release per chunk still win at 8 ranks (collB29).
/// `OXMPI_IALLREDUCE_SHM_GATHER_MAX` overrides it.
pub(crate) const NB_GATHER_MAX: usize = GATHER_MAX;

fn env_limit(v: &'static std::sync::OnceLock<usize>, var: &str, default: usize) -> usize {
    *v.get_or_init(|| {
        std::env::var(var)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    })
}

fn gather_max() -> usize {
    static V: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    env_limit(&V, "OXMPI_ALLREDUCE_SHM_GATHER_MAX", GATHER_MAX)
}

/// [`NB_GATHER_MAX`], or its override.
pub(super) fn nb_gather_max() -> usize {
    static V: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    env_limit(&V, "OXMPI_IALLREDUCE_SHM_GATHER_MAX", NB_GATHER_MAX)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    Full,
    Gather,
    Blocks,
}

/// As MPI_Allreduce, arguments checked: `recv` holds the elements (and their
/// memory spans), `send` (`None`: MPI_IN_PLACE) as many of the same layout;
/// `k` is `chunk_elems` of them.
pub(crate) fn allreduce(
    mut sess: Session<'_>,
    send: Option<&SendBuf<'_, '_>>,
    recv: &mut RecvBuf<'_, '_>,
    k: usize,
    op: &Op,
) -> Result<()> {
    let (count, dt) = (recv.count(), crate::coll::api::dt(recv.datatype()));
    // The views made here, next to their uses; the input shares the output's shape.
    let mut out = recv.elems_mut();
    let send = send.map(|s| out.sibling(s));
    // The op is checked against the datatype once here (the caller checked it
    // already: this cannot fail), not on every chunk and operand.
    let red = op.reducer(dt, "MPI_Allreduce")?;
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    let ext = dt.extent().max(0) as usize;
    let len = span_len(count, dt);
    let variant = match cx.r.oversubscribed {
        false if len <= FULL_MAX => Variant::Full,
        true if len <= gather_max() => Variant::Gather,
        _ => Variant::Blocks,
    };
    let full = variant == Variant::Full;
    let mut temp = if out.contiguous() || !full {
        Vec::new()
    } else {
        vec![0u8; span_len(k, dt)]
    };
    let mut result = Ok(());
    let mut e0 = 0;
    while e0 < count {
        let c = k.min(count - e0);
        let s = cx.next();
        cx.wait_free(s);
        // Nobody reads our slot half before our flag.
        let mut chunk = out.chunk(send.as_ref(), e0, c);
        cx.area().slot(me, s).copy_in(chunk.input());
        cx.set(Counter::Flag, s);
        if variant == Variant::Gather {
            // The last rank to arrive folds for everyone (in rank order, so the
            // bits do not depend on who) and releases them with one wake-up. A
            // result of at most INLINE bytes (the same `len` on every rank) goes
            // in the release line, so it arrives with the release.
            let len = span_len(c, dt);
            if cx.arrive() {
                let area = cx.area();
                // Every slot holds its published span of `c` elements (Acquire in
                // arrive's addition); the broadcast half is free: all are done
                // with step s - 2 (and so is the inline half, INLINE >= len).
                let src = |j: usize| Operand::Stage(area.slot(j, s));
                let r = fold_with(n, src, Acc::Stage(area.bbuf_for(s, len)), c, &red);
                if r.is_err() && result.is_ok() {
                    result = r;
                }
                cx.publish_release(s);
            } else {
                cx.wait_release(s);
            }
            cx.learn(s - 1);
            // The last arriver published the result span (Acquire in wait_release, or our own writes).
            cx.area().bbuf_for(s, len).deliver(&mut out, e0, c);
            cx.set_done(s);
            e0 += c;
            continue;
        }
        cx.ring_others();
        cx.wait_all(Counter::Flag, s);
        cx.learn(s - 1);
        let area = cx.area();
        if full {
            // Slots hold published spans of `c` elements (Acquire in wait_all); our input is in our slot.
            let src = |j: usize| Operand::Stage(area.slot(j, s));
            // Empty `temp`: a contiguous type, whose span is exactly its elements.
            let r = if temp.is_empty() {
                fold_with(n, src, Acc::Bytes(chunk.output()), c, &red)
            } else {
                let r = fold_with(n, src, Acc::Bytes(&mut temp), c, &red);
                out.deliver(e0, c, &temp);
                r
            };
            if r.is_err() && result.is_ok() {
                result = r;
            }
        } else {
            // Our block of the chunk's elements.
            let (q, rem) = (c / n, c % n);
            let b0 = me * q + me.min(rem);
            let bc = q + usize::from(me < rem);
            if bc > 0 {
                let at = b0 * ext;
                let len = span_len(bc, dt);
                // Elements [b0, b0 + bc) of the published spans start at `at`;
                // ranks' blocks do not overlap, and the broadcast half (free after
                // step s - 2) takes them at the same offset.
                let src = |j: usize| Operand::Stage(area.slot(j, s).sub(at, len));
                let acc = Acc::Stage(area.bbuf(s).sub(at, len));
                let r = fold_with(n, src, acc, bc, &red);
                if r.is_err() && result.is_ok() {
                    result = r;
                }
            }
            cx.set(Counter::Res, s);
            cx.ring_others();
            cx.wait_all(Counter::Res, s);
            // Every block of the result is published (Acquire in wait_all).
            cx.area().bbuf(s).deliver(&mut out, e0, c);
        }
        cx.set_done(s);
        e0 += c;
    }
    result
}
