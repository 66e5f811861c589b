//! MPI_Reduce / MPI_Ireduce, MPI_Reduce_local, and the bookkeeping every
//! reduction collective (reduce, allreduce, reduce_scatter, scan) shares.
//!
//! Reductions work on the *memory layout* of the datatype (the span of `count`
//! elements from `buf + true_lb`, see [`util::span`]), because `Op::apply` does:
//! partial results travel as spans and temporaries are spans. Results reach a
//! non-contiguous receive buffer through a typed copy that writes only the
//! elements' bytes, never the gaps.
//!
//! Operand order: `reduce_step(src, dst)` computes `dst = src op dst`, so every
//! algorithm passes the partial result of the *lower* ranks as `src`. Algorithms
//! that combine in rank order therefore work for non-commutative operations, and
//! two ranks combining the same two partials get the same bits.
//!
//! Algorithms:
//! * `binomial`: binomial tree rooted at `root` (relative ranks). Needs a
//!   commutative op (subtrees wrap around rank n-1 -> 0); for a non-commutative op
//!   it falls back to `in_order`.
//! * `in_order`: binomial tree over absolute ranks rooted at 0, where every
//!   subtree is a contiguous rank range, so the result is exactly
//!   a0 op a1 op ... op a(n-1); rank 0 then sends it to `root`. Any op.
//! * `rabenseifner`: reduce-scatter by recursive halving, then a binomial gather
//!   of the blocks to the root (large messages). Combines in rank order, so it is
//!   correct for non-commutative ops too (it is only *selected* for commutative ones).
//! * `shm` (blocking reduce on communicators within one host): contributions in
//!   a shared area, folded in rank order by the root (see `coll/shm`); any op.
//!   Chosen at every size from 3 ranks on, up to [`SHM_MAX_2`] bytes (two
//!   chunks) on 2.
pub(crate) mod binomial;
pub(crate) mod in_order;
pub(crate) mod rabenseifner;

use super::api;
use super::sched::{Builder, Slice};
use super::util;
use crate::buf::{BufScope, RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::Op;
use crate::request::Request;

use super::select::{always, commutative, never, Algorithm, Shape, Table};

/// Reduce's algorithms (see [`super::select`]); `bytes`: the message (count x
/// the datatype's size).
pub(crate) static TABLE: Table = Table {
    op: "reduce",
    algorithms: &[
        Algorithm {
            name: "binomial",
            applies: "commutative ops",
            runs: commutative,
            instead: Some("in_order"),
        },
        Algorithm {
            name: "in_order",
            applies: "any op",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "rabenseifner",
            applies: "any op (large messages, commutative ops)",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "shm",
            applies: "blocking reduce within one host",
            runs: never,
            instead: None,
        },
    ],
    default: |s| {
        if !s.commutative {
            "in_order"
        } else if s.hosts > 1
            && s.bytes >= RABENSEIFNER_MIN_BYTES
            && s.count >= pof2(s.ranks) as usize
        {
            // Not measured across hosts; within one host (the only shape the
            // selection sees today) binomial beat it at every size.
            "rabenseifner"
        } else {
            // One host: binomial beat rabenseifner from 32 KiB to 4 MiB on 2, 4
            // and 8 ranks (2 ranks, 2 MiB: 102-182 against 899-944 us; 4 ranks:
            // 961 against 2341); bench/PROFILE.md, collB27.
            "binomial"
        }
    },
};

/// Blocking reduces up to this many bytes (the message's span) take the
/// shared-memory path where it exists ([`SHM_MAX_2`] on 2 ranks): every size on
/// 3 or more ranks (4 ranks, 2 MiB: 398 us against binomial's 961 and
/// rabenseifner's 2341; 8 ranks, 4 MiB: 1785 against 4259 and 7334), up to
/// two chunks on 2 ranks: there the sender copies the second chunk while the
/// root folds the first, and neither waits for the other within the call
/// (64 KiB: min 2.6 us against binomial's 5.6 and Open MPI's 4.3; 128 KiB: 4.8
/// against 10-14 and 7.7). From three chunks the sender waits for the root's
/// fold of the chunk two back, a hand-off per chunk that loses to binomial's one
/// message (256 KiB: min 29-76 against 16); bench/PROFILE.md, collB27 and collB30.
/// From 32 KiB, a contiguous type on 2 ranks that may copy between each other's
/// memory goes by single copies instead (`shm::reduce`'s `reduce_direct`; OSU
/// average, 2 ranks: 32 KiB 5.7 -> 2.8 us, 64 KiB 9.9-11.0 -> 5.5, 128 KiB
/// 17.1-18.0 -> 12.3; bench/PROFILE.md, collB31).
pub const SHM_MAX: usize = usize::MAX;
pub const SHM_MAX_2: usize = 2 * super::shm::CHUNK;

/// Messages of at least this many bytes use Rabenseifner's algorithm.
const RABENSEIFNER_MIN_BYTES: usize = 64 * 1024;

/// The algorithm for one call: forced by `OXMPI_REDUCE_ALGORITHM`, or chosen from
/// the message size and the op's commutativity.
fn select(n: i32, count: usize, red: &Red) -> Result<&'static str> {
    let shape = Shape {
        ranks: n,
        bytes: count * red.dt.size(),
        count,
        commutative: red.op.is_commutative(),
        hosts: 1,
    };
    super::select::choose("reduce", &TABLE, &shape)
}

/// Validates the arguments shared by the reduction collectives.
pub(crate) fn check_args(
    call: &str,
    comm: &Comm,
    count: usize,
    dt: &Datatype,
    op: &Op,
) -> Result<()> {
    super::require_intra(call, comm)?;
    util::check_type(call, "datatype", dt)?;
    util::check_count(call, "count", count, dt)?;
    op.check(dt, call)?;
    check_layout(call, count, dt)
}

/// The algorithms address element `i` at `i * extent` inside a span; elements
/// that overlap or run backwards (extent <= 0, or extent < true extent) are not
/// supported for more than one element.
pub(crate) fn check_layout(call: &str, count: usize, dt: &Datatype) -> Result<()> {
    if count > 1 && dt.size() > 0 && (dt.extent() <= 0 || dt.extent() < dt.true_extent()) {
        return Err(MpiError::unsupported(
            call,
            format!("a reduction over {} whose elements overlap or have a non-positive extent (extent {}, true extent {})", dt.name(), dt.extent(), dt.true_extent()),
        ));
    }
    Ok(())
}

/// Largest power of two <= n (n >= 1).
pub(crate) fn pof2(n: i32) -> i32 {
    let mut p = 1;
    while p * 2 <= n {
        p *= 2;
    }
    p
}

/// Datatype and op of one reduction, with the span arithmetic on them.
#[derive(Clone)]
pub(crate) struct Red {
    pub dt: Datatype,
    pub op: Op,
}

impl Red {
    pub fn new(dt: &Datatype, op: &Op) -> Red {
        Red {
            dt: dt.clone(),
            op: op.clone(),
        }
    }

    /// Span bytes of `count` elements.
    pub fn len(&self, count: usize) -> usize {
        if self.dt.size() == 0 {
            return 0;
        }
        util::span_len(count, &self.dt)
    }

    /// The sub-span of elements `[disp, disp + cnt)` of the span `s`.
    pub fn block(&self, s: Slice, disp: usize, cnt: usize) -> Slice {
        let len = self.len(cnt);
        if len == 0 {
            return s.sub(0, 0);
        }
        s.sub(disp * self.dt.extent() as usize, len)
    }

    /// `dst = src op dst` over `count` elements (spans); `src` holds lower ranks.
    pub fn reduce(&self, b: &mut Builder, src: Slice, dst: Slice, count: usize) {
        if self.len(count) > 0 {
            util::reduce_step(b, src, dst, count, &self.dt, &self.op);
        }
    }

    /// Combines into `acc` the partial `tmp` (same elements) received from a peer:
    /// `acc = tmp op acc` if `tmp` holds lower ranks, else `acc = acc op tmp`. For
    /// commutative ops the operands are not reordered for the second case (it
    /// saves a copy); only use this where no other rank computes the same value.
    pub fn combine_into(
        &self,
        b: &mut Builder,
        acc: Slice,
        tmp: Slice,
        count: usize,
        tmp_is_lower: bool,
    ) {
        if tmp_is_lower || self.op.is_commutative() {
            self.reduce(b, tmp, acc, count);
        } else {
            self.reduce(b, acc, tmp, count);
            b.copy(tmp, acc);
        }
    }

    /// `dst = lower op higher` over `count` elements (spans; `dst` apart from
    /// `lower`), for a first fold whose result goes where neither operand is:
    /// no copy of an operand into `dst` beforehand.
    pub fn reduce_into(
        &self,
        b: &mut Builder,
        lower: Slice,
        higher: Slice,
        dst: Slice,
        count: usize,
    ) {
        if self.len(count) > 0 {
            b.reduce_into(lower, higher, dst, count, &self.dt, &self.op);
        }
    }

    /// Copies `count` elements from the span `src` into the user buffer `buf`,
    /// writing only the elements' bytes (a plain copy for contiguous types).
    pub fn deliver(&self, b: &mut Builder, src: Slice, buf: *mut u8, count: usize) {
        let len = self.len(count);
        if len == 0 {
            return;
        }
        b.fence();
        let dst = util::span_mut(buf, count, &self.dt);
        if self.dt.is_contiguous() {
            b.copy(src, dst);
            return;
        }
        if src == dst {
            return;
        }
        b.copy_elems(src, dst, count, &self.dt);
    }
}

/// One rank's buffers in a reduction: its contribution (a span of user memory:
/// the send buffer, or the receive buffer for MPI_IN_PLACE) and where its result
/// goes (the receive buffer, if it gets one).
#[derive(Clone, Copy)]
pub(crate) struct Io {
    pub input: Slice,
    pub in_place: bool,
    /// The receive buffer's address, at ranks that receive a result.
    pub out: Option<usize>,
    pub count: usize,
}

impl Io {
    pub fn new(
        red: &Red,
        sendbuf: Option<*const u8>,
        recvbuf: *mut u8,
        count: usize,
        has_out: bool,
    ) -> Io {
        let src = sendbuf.unwrap_or(recvbuf as *const u8);
        let input = Slice::user(src.wrapping_offset(red.dt.true_lb()), red.len(count));
        Io {
            input,
            in_place: sendbuf.is_none(),
            out: has_out.then_some(recvbuf as usize),
            count,
        }
    }

    fn contiguous(red: &Red) -> bool {
        red.dt.is_contiguous()
    }

    /// The receive buffer's span, when raw bytes may be written to it.
    pub fn raw_out(&self, red: &Red) -> Option<Slice> {
        match self.out {
            Some(p) if Self::contiguous(red) => {
                Some(util::span_mut(p as *mut u8, self.count, &red.dt))
            }
            _ => None,
        }
    }

    /// A running partial result starting as the input. With `out_scratch` the
    /// receive buffer (contiguous types, not in place) may hold intermediate data.
    pub fn partial(&self, red: &Red, out_scratch: bool) -> Partial {
        let writable = self.in_place && Self::contiguous(red) && self.out.is_some();
        let mut p = Partial {
            cur: self.input,
            writable,
            spare: Vec::new(),
            len: red.len(self.count),
            count: self.count,
        };
        if out_scratch && !self.in_place {
            if let Some(o) = self.raw_out(red) {
                p.spare.push(o);
            }
        }
        p
    }

    /// A writable full span holding a copy of the input: the receive buffer
    /// (contiguous types) or a temporary.
    pub fn acc(&self, b: &mut Builder, red: &Red) -> Slice {
        let s = self.slot(b, red);
        b.copy(self.input, s);
        s
    }

    /// As [`acc`](Self::acc), but without the copy where the input is a buffer
    /// of its own (not MPI_IN_PLACE): the input then comes back beside the
    /// span, for an algorithm whose first step reads it where it is (sends
    /// from it, folds from it into the span), so no full copy of it is made.
    pub fn acc_deferred(&self, b: &mut Builder, red: &Red) -> (Slice, Option<Slice>) {
        let s = self.slot(b, red);
        // The same buffer passed twice (not MPI_IN_PLACE) is treated as in place:
        // a fold from the input into the span needs the two apart.
        if self.in_place || red.len(self.count) == 0 || s == self.input {
            b.copy(self.input, s);
            (s, None)
        } else {
            (s, Some(self.input))
        }
    }

    /// A writable span of `count` elements for a result: the receive buffer
    /// (contiguous types) or a temporary.
    pub fn slot(&self, b: &mut Builder, red: &Red) -> Slice {
        self.raw_out(red)
            .unwrap_or_else(|| b.temp(red.len(self.count)))
    }

    /// Copies the result in `s` to the receive buffer (nothing if it is there).
    pub fn deliver(&self, b: &mut Builder, red: &Red, s: Slice) {
        if let Some(p) = self.out {
            red.deliver(b, s, p as *mut u8, self.count);
        }
    }
}

/// Build-time bookkeeping of where a rank's running partial result lives, so
/// that combining never copies: the result of `lower op higher` lands in the
/// higher operand's buffer, which becomes the current one.
pub(crate) struct Partial {
    /// The buffer holding the current partial.
    pub cur: Slice,
    writable: bool,
    /// Writable buffers holding nothing live.
    spare: Vec<Slice>,
    len: usize,
    count: usize,
}

impl Partial {
    /// A partial over `count` elements starting in the writable buffer `s`.
    pub fn in_buffer(s: Slice, count: usize) -> Partial {
        Partial {
            cur: s,
            writable: true,
            spare: Vec::new(),
            len: s.len,
            count,
        }
    }

    /// A free writable buffer (the caller fences before reusing a sent one).
    pub fn scratch(&mut self, b: &mut Builder) -> Slice {
        self.spare.pop().unwrap_or_else(|| b.temp(self.len))
    }

    /// Gives back a buffer that holds nothing live anymore.
    pub fn release(&mut self, s: Slice) {
        if s != self.cur && !self.spare.contains(&s) && s.len == self.len && self.len > 0 {
            self.spare.push(s);
        }
    }

    /// `cur = t op cur`; `t` (a scratch buffer, received and fenced) holds lower ranks.
    pub fn lower(&mut self, b: &mut Builder, red: &Red, t: Slice) {
        if !self.writable {
            let s = self.scratch(b);
            b.copy(self.cur, s);
            self.cur = s;
            self.writable = true;
        }
        red.reduce(b, t, self.cur, self.count);
        self.release(t);
    }

    /// `cur = cur op t`; `t` (a scratch buffer, received and fenced) holds higher ranks.
    pub fn higher(&mut self, b: &mut Builder, red: &Red, t: Slice) {
        red.reduce(b, self.cur, t, self.count);
        let old = std::mem::replace(&mut self.cur, t);
        if self.writable {
            self.release(old);
        }
        self.writable = true;
    }
}

/// The schedule of a reduce over the descriptors' addresses, kept valid by the caller
/// until it completes (without `recv` this rank is not the root: nothing writes it).
#[allow(clippy::too_many_arguments)]
fn schedule(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    recv: &Option<RecvBuf<'_, '_>>,
    count: usize,
    dt: &Datatype,
    op: &Op,
    root: i32,
    comm: &Comm,
) -> Result<Builder> {
    let sendbuf = send.as_ref().map(|s| s.ptr());
    let recvbuf = recv
        .as_ref()
        .map_or(std::ptr::NonNull::<u8>::dangling().as_ptr(), |r| r.ptr());
    if comm.is_inter() {
        return super::inter::reduce(call, sendbuf, recvbuf, count, dt, op, root, comm);
    }
    check_args(call, comm, count, dt, op)?;
    super::check_root(call, comm, root)?;
    let is_root = comm.rank() == root;
    if sendbuf.is_none() && !is_root {
        return Err(MpiError::arg(
            ErrorClass::Buffer,
            call,
            "sendbuf",
            "MPI_IN_PLACE is only valid at the root",
        ));
    }
    let red = Red::new(dt, op);
    let count = if dt.size() == 0 { 0 } else { count };
    if count == 0 {
        // Nothing to reduce: no communication (see allreduce).
        return Ok(Builder::new(comm));
    }
    let io = Io::new(&red, sendbuf, recvbuf, count, is_root);
    let mut b = Builder::new(comm);
    let n = comm.size();
    let result = match select(n, count, &red)? {
        "binomial" => binomial::build(&mut b, &red, &io, root),
        "rabenseifner" => rabenseifner::reduce(&mut b, &red, &io, root),
        _ => in_order::build(&mut b, &red, io.partial(&red, true), root),
    };
    if let Some(s) = result {
        io.deliver(&mut b, &red, s);
    }
    Ok(b)
}

/// MPI_Reduce: `recv` is needed at the root only; `send: None` is MPI_IN_PLACE (at the root).
pub fn reduce(
    send: Option<SendBuf<'_, '_>>,
    recv: Option<RecvBuf<'_, '_>>,
    op: &Op,
    root: i32,
    comm: &Comm,
) -> Result<()> {
    const CALL: &str = "MPI_Reduce";
    let (count, dt) = api::reduce_args(CALL, &send, &recv, root, comm)?;
    let checked = !comm.is_inter()
        && check_args(CALL, comm, count, dt, op).is_ok()
        && super::check_root(CALL, comm, root).is_ok()
        && (send.is_some() || comm.rank() == root);
    // An empty type signature, the same on every rank: all return here without
    // communicating (and without a tag, on every rank alike).
    let empty = checked && (count == 0 || dt.size() == 0);
    if super::nothing_to_move(empty) {
        return Ok(());
    }
    let _diag = crate::diag::coll(CALL, comm, Some(root), count, Some(dt), Some(op))?;
    if checked {
        if empty {
            return Ok(());
        }
        if let Some(k) = super::shm::chunk_elems(count, dt) {
            let forced = super::select::forced_op(super::select::Op::REDUCE)?;
            if let Some(sess) = super::shm::acquire(
                comm,
                super::shm::want(
                    forced,
                    util::span_len(count, dt) <= if comm.size() == 2 { SHM_MAX_2 } else { SHM_MAX },
                ),
            )? {
                super::select::ran_shm(super::select::Op::REDUCE);
                // The descriptors are of one layout (checked above).
                let mut recv = recv;
                return super::shm::reduce(
                    sess,
                    send.as_ref(),
                    recv.as_mut(),
                    count,
                    k,
                    dt,
                    op,
                    root as usize,
                );
            }
        }
    }
    super::run(
        schedule(CALL, &send, &recv, count, dt, op, root, comm)?,
        CALL,
    )
}

/// MPI_Ireduce: as [`reduce`], the buffers kept by `scope` until the request completes.
pub fn ireduce<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: Option<RecvBuf<'a, '_>>,
    op: &Op,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    const CALL: &str = "MPI_Ireduce";
    let (count, dt) = api::reduce_args(CALL, &send, &recv, root, comm)?;
    let r = super::start(schedule(CALL, &send, &recv, count, dt, op, root, comm)?)?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Reduce_local: `inout = input op inout`, element by element.
pub fn reduce_local(input: SendBuf<'_, '_>, inout: RecvBuf<'_, '_>, op: &Op) -> Result<()> {
    const CALL: &str = "MPI_Reduce_local";
    api::same_layout(CALL, &input, &inout)?;
    let (count, dt) = (inout.count(), api::dt(inout.datatype()));
    util::check_type(CALL, "datatype", dt)?;
    util::check_count(CALL, "count", count, dt)?;
    op.check(dt, CALL)?;
    if count == 0 || dt.size() == 0 {
        return Ok(());
    }
    let mut inout = inout;
    op.apply_bufs(CALL, &input, &mut inout)
}
