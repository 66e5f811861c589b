//! Alltoallv: every rank's slot half is cut into n sub-slots of
//! [`sub_slot`]`(n)` bytes; a block from rank i to rank j of up to that size
//! (and [`slot_max`] where every rank has its core) goes
//! through sub-slot j of rank i's slot, a larger one point-to-point, in one
//! schedule every rank runs after the step (empty on most ranks, but run
//! everywhere so that the blocking collectives' tags stay in step). Both ends
//! know a block's size (its sender from `sendcounts`, its receiver from
//! `recvcounts`: the type signatures match), so they agree on its way without
//! exchanging anything, and nothing read from the area decides a length or an
//! offset. A rank waits only for the ranks whose blocks it reads from their
//! slots, and writes its slot only if it has a block for one: a zero-count
//! alltoallv takes the step without synchronizing. Not in place (the caller
//! declines MPI_IN_PLACE: a point-to-point block would be sent from and
//! received into the same bytes).
use super::rooted::{own_block, put, take};
use super::{Counter, Session, CHUNK};
use crate::buf::elems::{VBlocks, VBlocksMut, VLayout};
use crate::buf::{RecvBuf, SendBuf};
use crate::coll::api::dt;
use crate::coll::sched::Builder;
use crate::coll::util;
use crate::comm::Comm;
use crate::error::Result;
use std::sync::atomic::Ordering;

/// Bytes of one sub-slot on `n` ranks (a multiple of 64).
pub(crate) fn sub_slot(n: usize) -> usize {
    (CHUNK / n.max(1)) & !63
}

/// Largest block through the area where every rank has its core
/// (`OXMPI_ALLTOALLV_SHM_MAX`, bytes): 4 KiB, as alltoall's; beyond, one
/// single-copy message beats two copies through the area (collC28: 2 ranks,
/// 32 KiB 6.2 us through the area, 4.2 point-to-point). On a crowded host
/// every block that fits a sub-slot goes through the area.
fn slot_max() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        std::env::var("OXMPI_ALLTOALLV_SHM_MAX")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(4 * 1024)
    })
}

/// Nothing to send or receive here (decided from this rank's arguments alone):
/// the step as the full path takes it for such a rank (no slot written, nothing
/// waited for; its flag and done raised so that the others' later steps find it
/// in step), and the blocking tag its (empty) schedule would take.
pub(crate) fn alltoallv_nothing_here(mut sess: Session<'_>, comm: &Comm) {
    let mut cx = sess.ctx();
    let s = cx.next();
    cx.pass(s);
    drop(sess);
    comm.next_blocking_coll_tag();
}

/// As MPI_Alltoallv, arguments checked, not in place: `send` and `recv` are the
/// descriptors with their blocks' layouts (checked against them when made),
/// and this rank's block to itself has the same packed size on both sides.
pub(crate) fn alltoallv(
    mut sess: Session<'_>,
    comm: &Comm,
    call: &str,
    send: (&SendBuf<'_, '_>, VLayout<'_>),
    recv: (&mut RecvBuf<'_, '_>, VLayout<'_>),
) -> Result<()> {
    let (sendtype, recvtype) = (dt(send.0.datatype()), dt(recv.0.datatype()));
    let (ss, rs) = (sendtype.size(), recvtype.size());
    let (n, me) = (sess.n, sess.me);
    let sub = sub_slot(n);
    // Blocks through the area up to `lim` bytes (the same on every rank: the
    // area's view of crowding is rank 0's).
    let lim = if sess.oversubscribed() {
        sub
    } else {
        sub.min(slot_max())
    };
    let in_sub = |bytes: usize| bytes > 0 && bytes <= lim;
    let (sendcounts, recvcounts) = (send.1.counts(), recv.1.counts());
    // What this rank's blocks ask of the step, in one pass over the counts
    // (separate passes were a tenth of a 2-rank call's instructions, collS37).
    let (mut moves, mut slot_send, mut p2p_recv, mut all_slotted) = (false, false, false, true);
    for (j, (&sc, &rc)) in sendcounts.iter().zip(recvcounts).enumerate() {
        let (sb, rb) = (sc * ss, rc * rs);
        moves |= sb != 0 || rb != 0;
        if j != me {
            slot_send |= in_sub(sb);
            p2p_recv |= rb > lim;
            all_slotted &= in_sub(rb);
        }
    }
    if !moves {
        alltoallv_nothing_here(sess, comm);
        return Ok(());
    }
    // The schedule of the point-to-point blocks, made for the first one: most
    // small alltoallvs have none, and an empty schedule only takes the tag.
    let mut b: Option<Builder> = None;
    let mut cx = sess.ctx();
    let send = VBlocks::new(send.0.elems(), send.1);
    let mut recv = VBlocksMut::new(recv.0.elems_mut(), recv.1);
    let s = cx.next();
    if slot_send {
        cx.wait_free(s);
    }
    let slot = cx.area().slot(me, s);
    for j in (0..n).filter(|&j| j != me) {
        let (cnt, bytes) = (sendcounts[j], sendcounts[j] * ss);
        let from = send.get(j);
        if in_sub(bytes) {
            // Sub-slot j of our slot half (j * sub + sub <= CHUNK) is read by nobody before our flag.
            put(&from, slot.sub(j * sub, sub), bytes);
        } else if bytes > 0 {
            let b = b.get_or_insert_with(|| Builder::new(comm));
            let inp = util::packed_input(b, from.ptr(), cnt, sendtype);
            b.send(inp, j as i32);
        }
    }
    cx.set(Counter::Flag, s);
    cx.ring_when_complete(Counter::Flag, s, None);
    let own = recvcounts[me] * rs;
    if b.is_none() && !p2p_recv {
        // Our blocks to ourselves hold `own` packed bytes on both sides (checked by the caller).
        own_block(&send.get(me), sendtype, &mut recv.get_mut(me), own);
    }
    let mut outs = Vec::new();
    for j in (0..n).filter(|&j| j != me && recvcounts[j] * rs > lim) {
        let dst = recv.get_mut(j).ptr();
        let b = b.get_or_insert_with(|| Builder::new(comm));
        let o = util::packed_output(b, dst, recvcounts[j], recvtype);
        b.recv(o, j as i32);
        outs.push((o, j));
    }
    if let Some(b) = b.as_mut().filter(|_| own > 0) {
        // With point-to-point blocks our own block is copied after they are
        // posted, so that the peers start reading ours at once (collC29 in
        // bench/PROFILE.md: 2 ranks, 32 KiB; pairwise alltoall does the same).
        // `own` packed bytes on both sides (checked by the caller).
        let inp = util::packed_input(b, send.get(me).ptr(), sendcounts[me], sendtype);
        let dst = recv.get_mut(me).ptr();
        let o = util::packed_output(b, dst, recvcounts[me], recvtype);
        b.copy(inp, o);
        outs.push((o, me));
    }
    let slotted = |j: usize| j != me && in_sub(recvcounts[j] * rs);
    let mut j = 0;
    cx.wait(|| {
        while j < n {
            if slotted(j) && cx.counter(Counter::Flag, j).load(Ordering::Acquire) < s {
                return false;
            }
            j += 1;
        }
        true
    });
    if all_slotted {
        cx.learn(s - 1);
    }
    for j in (0..n).filter(|&j| slotted(j)) {
        let from = cx.area().slot(j, s).sub(me * sub, sub);
        // Rank j published its block for us (recvcounts[j] elements, at most sub bytes) in sub-slot `me` of its slot (Acquire in the wait).
        take(from, recvcounts[j] * rs, &mut recv.get_mut(j));
    }
    if let Some(b) = b.as_mut() {
        for (o, j) in outs {
            let dst = recv.get_mut(j).ptr();
            util::finish_output(b, o, dst, recvcounts[j], recvtype);
        }
    }
    cx.set_done(s);
    drop(sess);
    match b {
        Some(b) => crate::coll::run(b, call),
        None => {
            // No point-to-point block here: the tag the empty schedule's run takes.
            comm.next_blocking_coll_tag();
            Ok(())
        }
    }
}
