//! MPI_Reduce_scatter / MPI_Ireduce_scatter and MPI_Reduce_scatter_block /
//! MPI_Ireduce_scatter_block (the same algorithms with equal counts).
//!
//! The input is `sum(recvcounts)` elements (in `sendbuf`, or in `recvbuf` for
//! MPI_IN_PLACE); rank i receives block i (`recvcounts[i]` elements) of the
//! reduction, at the start of `recvbuf`.
//!
//! Algorithms:
//! * `recursive_halving`: MPICH's recursive halving with the non-power-of-two
//!   pre/post step; log2 n rounds, ~m bytes per rank. Commutative ops only (the
//!   halving with shrinking distance combines non-adjacent rank groups); falls
//!   back to `reduce_scatterv` for non-commutative ops. Short and medium messages.
//! * `pairwise`: n-1 steps; in step i rank r sends block r+i to rank r+i and folds
//!   in its own block received from r-i. Commutative ops only (same fallback).
//!   Long messages.
//! * `reduce_scatterv`: in-order reduce of everything to rank 0, then rank 0
//!   sends each rank its block. Any op: the choice for non-commutative ops.
//! * `shm` (blocking calls on communicators within one host): every rank puts
//!   its input in a shared area and folds its own block from all of them, in
//!   rank order, in parallel with the others (see `coll/shm`); any op. Chosen at
//!   every size: on 2 ranks it beat recursive halving and pairwise from 8 B to
//!   1 MiB (128 KiB: 5.5 against 14-2000 us; 1 MiB: 53 against 390), and on 4
//!   ranks (2 cores) at every size (1 MiB: 259 against 471-623 us);
//!   bench/PROFILE.md, 2026-11-26.
mod pairwise;
mod recursive_halving;
mod reduce_scatterv;

use super::api_move::{dt, reduce_scatter_check};
use super::reduce::{check_args, Red};
use super::sched::{Builder, Slice};
use crate::buf::{RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::Op;
use crate::request::Request;

use super::select::{always, commutative, never, Algorithm, Shape, Table};

/// Reduce_scatter's and reduce_scatter_block's algorithms (see
/// [`super::select`]); `bytes`: the whole input (sum of counts x the datatype's size).
pub(crate) static TABLE: Table = Table {
    op: "reduce_scatter",
    algorithms: &[
        Algorithm {
            name: "recursive_halving",
            applies: "commutative ops",
            runs: commutative,
            instead: Some("reduce_scatterv"),
        },
        Algorithm {
            name: "pairwise",
            applies: "commutative ops",
            runs: commutative,
            instead: Some("reduce_scatterv"),
        },
        Algorithm {
            name: "reduce_scatterv",
            applies: "any op",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "shm",
            applies: "blocking calls within one host",
            runs: never,
            instead: None,
        },
    ],
    default: |s| {
        if !s.commutative {
            "reduce_scatterv"
        } else if s.bytes >= PAIRWISE_MIN_BYTES {
            "pairwise"
        } else {
            "recursive_halving"
        }
    },
};

/// The shared-memory path for one blocking call, if it takes it (`None`: run a
/// schedule, which also reports any argument error). The blocks were checked to
/// lie inside the descriptors.
#[allow(clippy::too_many_arguments)]
fn try_shm(
    call: &str,
    sop: super::select::Op,
    send: Option<&SendBuf<'_, '_>>,
    recv: &mut RecvBuf<'_, '_>,
    counts: &[usize],
    dt: &Datatype,
    op: &Op,
    comm: &Comm,
) -> Result<Option<Result<()>>> {
    let n = comm.size() as usize;
    if comm.is_inter() || counts.len() != n {
        return Ok(None);
    }
    let Some(total) = counts.iter().try_fold(0usize, |a, &c| a.checked_add(c)) else {
        return Ok(None);
    };
    if total == 0 || dt.size() == 0 {
        // recvcounts is the same on every rank, so is the empty signature: none
        // of them has anything to reduce, and all return here without a tag.
        return Ok(check_args(call, comm, total, dt, op).ok().map(Ok));
    }
    // The prefix sums (n + 1 entries) on the stack up to 16 ranks: a `Vec`'s
    // allocation and free were a tenth of a small call's instructions.
    let (mut small, mut large) = ([0usize; 17], Vec::new());
    let disp: &mut [usize] = if n < small.len() {
        &mut small[..=n]
    } else {
        large.resize(n + 1, 0);
        &mut large
    };
    // `total` did not overflow, so no prefix does.
    let mut at = 0usize;
    for (d, &c) in disp.iter_mut().zip(counts) {
        *d = at;
        at += c;
    }
    disp[n] = at;
    if check_args(call, comm, at, dt, op).is_err() {
        return Ok(None);
    }
    let Some(k) = super::shm::chunk_elems(at, dt) else {
        return Ok(None);
    };
    let forced = super::select::forced_op(sop)?;
    let want = super::shm::want(forced, true);
    let Some(sess) = super::shm::acquire(comm, want)? else {
        return Ok(None);
    };
    super::select::ran_shm(sop);
    Ok(Some(super::shm::reduce_scatter(
        sess, send, recv, disp, k, dt, op,
    )))
}

/// Below this many bytes in total, recursive halving; pairwise from there on.
const PAIRWISE_MIN_BYTES: usize = 512 * 1024;

fn select(env: &str, n: i32, total: usize, red: &Red) -> Result<&'static str> {
    let shape = Shape {
        ranks: n,
        bytes: total * red.dt.size(),
        count: total,
        commutative: red.op.is_commutative(),
        hosts: 1,
    };
    super::select::choose(env, &TABLE, &shape)
}

/// What the algorithms work on.
pub(crate) struct Args<'a> {
    /// The full input span (sum of counts elements).
    pub input: Slice,
    pub recvbuf: *mut u8,
    pub counts: &'a [usize],
    /// Element displacement of each block (n + 1 entries).
    pub disp: Vec<usize>,
}

#[allow(clippy::too_many_arguments)]
fn schedule(
    call: &str,
    env: &str,
    sendbuf: Option<*const u8>,
    recvbuf: *mut u8,
    counts: &[usize],
    dt: &Datatype,
    op: &Op,
    comm: &Comm,
) -> Result<Builder> {
    if comm.is_inter() {
        return super::inter::reduce_scatter(call, sendbuf, recvbuf, counts, dt, op, comm);
    }
    if counts.len() != comm.size() as usize {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            "recvcounts",
            format!("has {} entries for {} ranks", counts.len(), comm.size()),
        ));
    }
    let total = counts
        .iter()
        .try_fold(0usize, |a, &c| a.checked_add(c))
        .ok_or_else(|| {
            MpiError::arg(ErrorClass::Count, call, "recvcounts", "the total overflows")
        })?;
    check_args(call, comm, total, dt, op)?;
    let red = Red::new(dt, op);
    let zero;
    let counts = if dt.size() == 0 {
        zero = vec![0; counts.len()];
        &zero[..]
    } else {
        counts
    };
    let mut disp = Vec::with_capacity(counts.len() + 1);
    let mut at = 0;
    for &c in counts {
        disp.push(at);
        at += c;
    }
    disp.push(at);
    if at == 0 {
        // recvcounts is the same on every rank: all of them have nothing to
        // reduce, and return without communicating.
        return Ok(Builder::new(comm));
    }
    let src = sendbuf.unwrap_or(recvbuf as *const u8);
    let input = Slice::user(src.wrapping_offset(dt.true_lb()), red.len(at));
    let args = Args {
        input,
        recvbuf,
        counts,
        disp,
    };
    let mut b = Builder::new(comm);
    match select(env, comm.size(), at, &red)? {
        "pairwise" => pairwise::build(&mut b, &red, &args),
        "recursive_halving" => recursive_halving::build(&mut b, &red, &args),
        _ => reduce_scatterv::build(&mut b, &red, &args),
    }
    Ok(b)
}

/// MPI_Reduce_scatter: the input (`send`, or `recv` for `send: None`, MPI_IN_PLACE)
/// is `sum(recvcounts)` elements; this rank receives its block in `recv`. Safe: the
/// blocks are checked to lie inside the descriptors (`reduce_scatter_check`) before
/// their addresses go to the shared-memory path or the schedule, which complete
/// before the call returns.
pub(crate) fn reduce_scatter(
    send: Option<&SendBuf<'_, '_>>,
    recv: &mut RecvBuf<'_, '_>,
    recvcounts: &[usize],
    op: &Op,
    comm: &Comm,
) -> Result<()> {
    const CALL: &str = "MPI_Reduce_scatter";
    blocking(
        CALL,
        "reduce_scatter",
        send,
        recv,
        recvcounts,
        None,
        op,
        comm,
    )
}

/// MPI_Ireduce_scatter: as [`reduce_scatter`], the descriptors lent for `'static`
/// (kept valid by the caller's scope until the request completes).
pub(crate) fn ireduce_scatter(
    send: Option<&SendBuf<'static, '_>>,
    recv: &RecvBuf<'static, '_>,
    recvcounts: &[usize],
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    const CALL: &str = "MPI_Ireduce_scatter";
    reduce_scatter_check(CALL, &send.copied(), recv, recvcounts, comm)?;
    let (s, r, dt) = raw(send, recv);
    super::start(schedule(
        CALL,
        "reduce_scatter",
        s,
        r,
        recvcounts,
        dt,
        op,
        comm,
    )?)
}

/// MPI_Reduce_scatter_block: [`reduce_scatter`] with `recvcount` for every rank.
pub(crate) fn reduce_scatter_block(
    send: Option<&SendBuf<'_, '_>>,
    recv: &mut RecvBuf<'_, '_>,
    recvcount: usize,
    op: &Op,
    comm: &Comm,
) -> Result<()> {
    const CALL: &str = "MPI_Reduce_scatter_block";
    let counts = vec![recvcount; comm.size().max(0) as usize];
    let env = "reduce_scatter_block";
    blocking(CALL, env, send, recv, &counts, Some(recvcount), op, comm)
}

/// MPI_Ireduce_scatter_block: as [`reduce_scatter_block`], lent as in
/// [`ireduce_scatter`].
pub(crate) fn ireduce_scatter_block(
    send: Option<&SendBuf<'static, '_>>,
    recv: &RecvBuf<'static, '_>,
    recvcount: usize,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    const CALL: &str = "MPI_Ireduce_scatter_block";
    let counts = vec![recvcount; comm.size().max(0) as usize];
    reduce_scatter_check(CALL, &send.copied(), recv, &counts, comm)?;
    let (s, r, dt) = raw(send, recv);
    let env = "reduce_scatter_block";
    super::start(schedule(CALL, env, s, r, &counts, dt, op, comm)?)
}

/// The kernels' view of the descriptors: addresses and the (shared) datatype.
fn raw<'d>(
    send: Option<&SendBuf<'_, 'd>>,
    recv: &RecvBuf<'_, 'd>,
) -> (Option<*const u8>, *mut u8, &'d Datatype) {
    (send.map(|s| s.ptr()), recv.ptr(), dt(recv.datatype()))
}

/// A blocking reduce_scatter(_block) (`block`: its `recvcount`, for the record
/// checking mode keeps): checks, then the shared-memory path or a schedule.
#[allow(clippy::too_many_arguments)]
fn blocking(
    call: &'static str,
    env: &str,
    send: Option<&SendBuf<'_, '_>>,
    recv: &mut RecvBuf<'_, '_>,
    counts: &[usize],
    block: Option<usize>,
    op: &Op,
    comm: &Comm,
) -> Result<()> {
    reduce_scatter_check(call, &send.copied(), recv, counts, comm)?;
    let (s, r, dt) = raw(send, recv);
    // `recvcounts` is the same on every rank, so is an empty signature (as `try_shm`'s).
    let empty = !comm.is_inter()
        && counts.len() == comm.size() as usize
        && (dt.size() == 0 || counts.iter().all(|&c| c == 0))
        && check_args(call, comm, 0, dt, op).is_ok();
    if super::nothing_to_move(empty) {
        return Ok(());
    }
    let _diag = crate::diag::coll(call, comm, None, block.unwrap_or(0), Some(dt), Some(op))?;
    let sop = match block {
        None => super::select::Op::REDUCE_SCATTER,
        Some(_) => super::select::Op::REDUCE_SCATTER_BLOCK,
    };
    if let Some(res) = try_shm(call, sop, send, recv, counts, dt, op, comm)? {
        return res;
    }
    super::run(schedule(call, env, s, r, counts, dt, op, comm)?, call)
}
