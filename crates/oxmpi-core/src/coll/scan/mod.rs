//! MPI_Scan / MPI_Iscan and MPI_Exscan / MPI_Iexscan.
//!
//! Rank r receives a0 op ... op ar (scan) or a0 op ... op a(r-1) (exscan; rank
//! 0's receive buffer is left untouched, its value is undefined by MPI). Partials
//! from lower ranks are always the `in` operand, so non-commutative ops work.
//!
//! Algorithms (both rank-ordered, any op):
//! * `recursive_doubling`: log2 n rounds of exchanges with rank ^ 2^k (MPICH).
//! * `linear`: a chain 0 -> 1 -> ... -> n-1 (n-1 latencies; for n <= 2 the same
//!   messages as recursive doubling, with less bookkeeping).
mod linear;
mod recursive_doubling;

use super::api;
use super::reduce::{check_args, Io, Red};
use super::sched::Builder;
use crate::buf::{BufScope, RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::Result;
use crate::op::Op;
use crate::request::Request;

use super::select::{always, Algorithm, Shape, Table};

/// Scan's and exscan's algorithms (see [`super::select`]).
pub(crate) static TABLE: Table = Table {
    op: "scan",
    algorithms: &[
        Algorithm {
            name: "recursive_doubling",
            applies: "any op",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "linear",
            applies: "any op (2 ranks or fewer)",
            runs: always,
            instead: None,
        },
    ],
    default: |s| {
        if s.ranks <= 2 {
            "linear"
        } else {
            "recursive_doubling"
        }
    },
};

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Inclusive,
    Exclusive,
}

fn select(env: &str, n: i32) -> Result<&'static str> {
    super::select::choose(env, &TABLE, &Shape::new(n, 0))
}

#[allow(clippy::too_many_arguments)]
fn schedule(
    call: &str,
    kind: Kind,
    sendbuf: Option<*const u8>,
    recvbuf: *mut u8,
    count: usize,
    dt: &Datatype,
    op: &Op,
    comm: &Comm,
) -> Result<Builder> {
    check_args(call, comm, count, dt, op)?;
    let red = Red::new(dt, op);
    let count = if dt.size() == 0 { 0 } else { count };
    if count == 0 {
        // Nothing to combine: no communication (see allreduce).
        return Ok(Builder::new(comm));
    }
    let io = Io::new(&red, sendbuf, recvbuf, count, true);
    let env = if kind == Kind::Inclusive {
        "scan"
    } else {
        "exscan"
    };
    let mut b = Builder::new(comm);
    match select(env, comm.size())? {
        "linear" => linear::build(&mut b, &red, &io, kind),
        _ => recursive_doubling::build(&mut b, &red, &io, kind),
    }
    Ok(b)
}

/// MPI_Scan; `send: None` is MPI_IN_PLACE (the input is `recv`).
pub fn scan(
    send: Option<SendBuf<'_, '_>>,
    recv: RecvBuf<'_, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<()> {
    if let Some(s) = &send {
        api::same_layout("MPI_Scan", s, &recv)?;
    }
    let (count, dt) = (recv.count(), api::dt(recv.datatype()));
    // An empty type signature, the same on every rank.
    let empty =
        (count == 0 || dt.size() == 0) && check_args("MPI_Scan", comm, count, dt, op).is_ok();
    if super::nothing_to_move(empty) {
        return Ok(());
    }
    let _diag = crate::diag::coll("MPI_Scan", comm, None, count, Some(dt), Some(op))?;
    let (sendbuf, recvbuf) = (send.map(|s| s.ptr()), recv.ptr());
    super::run(
        schedule(
            "MPI_Scan",
            Kind::Inclusive,
            sendbuf,
            recvbuf,
            count,
            dt,
            op,
            comm,
        )?,
        "MPI_Scan",
    )
}

/// MPI_Iscan: as [`scan`], the buffers kept by `scope` until the request completes.
pub fn iscan<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    if let Some(s) = &send {
        api::same_layout("MPI_Iscan", s, &recv)?;
    }
    let (count, dt) = (recv.count(), api::dt(recv.datatype()));
    let (sendbuf, recvbuf) = (send.map(|s| s.ptr()), recv.ptr());
    let r = super::start(schedule(
        "MPI_Iscan",
        Kind::Inclusive,
        sendbuf,
        recvbuf,
        count,
        dt,
        op,
        comm,
    )?)?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Exscan; `send: None` is MPI_IN_PLACE (the input is `recv`).
pub fn exscan(
    send: Option<SendBuf<'_, '_>>,
    recv: RecvBuf<'_, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<()> {
    if let Some(s) = &send {
        api::same_layout("MPI_Exscan", s, &recv)?;
    }
    let (count, dt) = (recv.count(), api::dt(recv.datatype()));
    // An empty type signature, the same on every rank.
    let empty =
        (count == 0 || dt.size() == 0) && check_args("MPI_Exscan", comm, count, dt, op).is_ok();
    if super::nothing_to_move(empty) {
        return Ok(());
    }
    let _diag = crate::diag::coll("MPI_Exscan", comm, None, count, Some(dt), Some(op))?;
    let (sendbuf, recvbuf) = (send.map(|s| s.ptr()), recv.ptr());
    super::run(
        schedule(
            "MPI_Exscan",
            Kind::Exclusive,
            sendbuf,
            recvbuf,
            count,
            dt,
            op,
            comm,
        )?,
        "MPI_Exscan",
    )
}

/// MPI_Iexscan: as [`exscan`], the buffers kept by `scope` until the request completes.
pub fn iexscan<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    if let Some(s) = &send {
        api::same_layout("MPI_Iexscan", s, &recv)?;
    }
    let (count, dt) = (recv.count(), api::dt(recv.datatype()));
    let (sendbuf, recvbuf) = (send.map(|s| s.ptr()), recv.ptr());
    let r = super::start(schedule(
        "MPI_Iexscan",
        Kind::Exclusive,
        sendbuf,
        recvbuf,
        count,
        dt,
        op,
        comm,
    )?)?;
    scope.enter(r);
    Ok(r)
}
