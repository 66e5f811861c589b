//! Reduce: every rank copies its contribution (the memory span of a chunk of
//! elements) into its slot and raises its flag; the root folds the slots in
//! rank order into its receive buffer. Also the chunking and folding shared with
//! allreduce.
use super::{Counter, Ctx, Session, CHUNK};
use crate::buf::elems::Elems;
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
    // Decided from what every rank shares: set-up's answer, the datatype, the count.
    let direct = sess.direct()
        && dt.is_contiguous()
        && (DIRECT_MIN..=DIRECT_MAX).contains(&span_len(count, dt));
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    // The views made here, next to their uses (as bcast: cheaper than passed in).
    let send = send.map(|s| s.elems());
    let mut out = recv.filter(|_| me == root).map(|r| r.elems_mut());
    if direct && n == 2 {
        return reduce_direct(&mut cx, send.as_ref(), out.as_mut(), count, dt, op, root);
    }
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
        // A span of at most INLINE_SLOT bytes (the same on every rank: count and
        // datatype match) goes in the rank's inline slot, beside its flag: the
        // root gets it with the line it waits on (as allgather's small blocks).
        let bytes = span_len(c, dt);
        if me != root || in_place {
            cx.wait_free(s);
            // Nobody reads our slot half before our flag (or, in place, our own fold).
            let input = match (&send, &out) {
                (Some(i), _) => i.span(e0, c),
                (None, Some(o)) => o.as_elems().span(e0, c),
                (None, None) => panic!("MPI_IN_PLACE is the root's only"),
            };
            cx.area().slot_for(me, s, bytes).copy_in(input);
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
                _ => Operand::Stage(area.slot_for(j, s, bytes)),
            };
            let out = out.as_mut().expect("the root has a receive buffer");
            fold_into(n, src, out, e0, c, &mut temp, dt, op, &mut result);
            cx.set_done(s);
        }
        e0 += c;
    }
    result
}

/// A 2-rank reduce of a contiguous type from this many bytes up to [`DIRECT_MAX`]
/// goes by single copies ([`reduce_direct`]) where the pair may copy between each
/// other's memory. Through the area the sender writes every line of its slot (taking
/// it from the root's cache) and the root reads them back (taking them again): two
/// transfers between the cores per line and call. The root's read of the sender's
/// buffer moves each line once, and not at all when the buffer is unchanged since
/// the last call (its lines stay valid in the root's cache).
const DIRECT_MIN: usize = 32 * 1024;
/// See [`DIRECT_MIN`]: above it the reduce of 2 ranks goes by binomial's message
/// (`reduce::SHM_MAX_2`).
const DIRECT_MAX: usize = 2 * CHUNK;
/// The root reads the other rank's input in pieces of this many bytes: all of it
/// at once. A `process_vm_readv` costs ~1.7 us before it copies a byte on this
/// VM, more than folding a piece from the cache saves (2 ranks, 128 KiB, OSU
/// average under load: 16 KiB pieces 27-29 us, 32 KiB 20-23, 64 KiB 16-17, one
/// read 14-15 against Open MPI's 13-17; bench/PROFILE.md, collB33).
const DIRECT_PIECE: usize = DIRECT_MAX;

thread_local! {
    /// The root's pieces of the other rank's input (and, in place, of its own).
    static PIECES: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// MPI_Reduce on 2 ranks by single copies (`Session::direct` holds, `dt` is
/// contiguous): the other rank exposes its input and waits until the root has read
/// it; the root reads it piece by piece (`process_vm_readv`) and folds each piece
/// with its own input, in rank order, into its receive buffer. It releases the other
/// rank after its last read, before its last fold. A refused copy is the root's
/// error (MPI_ERR_OTHER); the other rank is still released.
#[allow(clippy::too_many_arguments)]
fn reduce_direct(
    cx: &mut Ctx<'_>,
    send: Option<&Elems<'_>>,
    out: Option<&mut ElemsMut<'_>>,
    count: usize,
    dt: &Datatype,
    op: &Op,
    root: usize,
) -> Result<()> {
    let s = cx.next();
    let me = cx.me;
    if me != root {
        let input = send
            .expect("MPI_IN_PLACE is the root's only")
            .span(0, count);
        cx.expose(s, input.as_ptr() as usize);
        cx.unexpose(s);
        return Ok(());
    }
    let addr = cx.exposed(s);
    let out = out.expect("the root has a receive buffer");
    let ext = dt.extent().max(1) as usize;
    let per = (DIRECT_PIECE / ext).max(1);
    if let (0, Some(mine), 0) = (root, send, dt.true_lb()) {
        return reduce_direct_into(cx, s, mine, out, addr, count, per, dt, op);
    }
    let piece = span_len(per.min(count), dt);
    PIECES.with(|p| {
        let mut p = p.borrow_mut();
        let want = if send.is_some() { piece } else { 2 * piece };
        if p.len() < want {
            p.resize(want, 0);
        }
        let (theirs, own) = p.split_at_mut(piece);
        let mut result = Ok(());
        let mut e0 = 0;
        while e0 < count {
            let c = per.min(count - e0);
            let len = span_len(c, dt);
            let read = cx.read_from("MPI_Reduce", 1 - root, addr + e0 * ext, &mut theirs[..len]);
            if e0 + c == count || read.is_err() {
                // Nothing more of the other rank's memory is read.
                cx.set_done(s);
            }
            read?;
            let mine: &[u8] = match send {
                Some(i) => i.span(e0, c),
                None => {
                    own[..len].copy_from_slice(out.as_elems().span(e0, c));
                    &own[..len]
                }
            };
            let theirs = &theirs[..len];
            let src = |j: usize| Operand::Bytes(if j == root { mine } else { theirs });
            fold_into(2, src, out, e0, c, &mut [], dt, op, &mut result);
            e0 += c;
        }
        result
    })
}

/// [`reduce_direct`]'s root when it is rank 0 and not in place, for a type whose
/// data starts at its elements' addresses (`true_lb` 0): each piece of rank 1's
/// input is read straight into the receive buffer, then `out = mine op out`
/// (the kernels' `inout = in op inout`, so the operands stay in rank order). No
/// temporary: the piece is not copied again from one into the receive buffer,
/// which the fold through a temporary did first.
#[allow(clippy::too_many_arguments)]
fn reduce_direct_into(
    cx: &mut Ctx<'_>,
    s: u64,
    mine: &Elems<'_>,
    out: &mut ElemsMut<'_>,
    addr: usize,
    count: usize,
    per: usize,
    dt: &Datatype,
    op: &Op,
) -> Result<()> {
    let ext = dt.extent().max(1) as usize;
    let mut result = Ok(());
    let mut e0 = 0;
    while e0 < count {
        let c = per.min(count - e0);
        let read = cx.read_from("MPI_Reduce", 1, addr + e0 * ext, out.span_mut(e0, c));
        if e0 + c == count || read.is_err() {
            // Nothing more of the other rank's memory is read.
            cx.set_done(s);
        }
        read?;
        // Rank 1 is released only after the last read: a fold's error is kept, not returned early.
        let folded = op.apply_slices("MPI_Reduce", mine.span(e0, c), out.span_mut(e0, c), c, dt);
        if folded.is_err() && result.is_ok() {
            result = folded;
        }
        e0 += c;
    }
    result
}
