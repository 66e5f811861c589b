//! MPI_Allgather / MPI_Iallgather and MPI_Allgatherv / MPI_Iallgatherv.
//!
//! Selection for allgather (MPICH's defaults, on total bytes = n * block):
//! recursive doubling below 512 KiB on power-of-two sizes, Bruck below 80 KiB on
//! other sizes, ring otherwise. `recursive_doubling` forced on a non-power-of-two
//! size runs Bruck (it needs a power of two). Allgatherv uses the ring.
//! `shm` (blocking allgather on communicators within one host, through a shared
//! area, see `coll/shm`) is chosen up to [`SHM_MAX`] bytes per block.
//!
//! MPI_IN_PLACE (`sendbuf == None`): every rank's contribution is already in
//! `recvbuf` at its own block; `sendcount`/`sendtype` are ignored.
mod bruck;
mod recursive_doubling;
mod ring;

use super::gather::{check_v, size_mismatch};
use super::sched::{Builder, Slice};
use super::util;
use crate::buf::{RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::Result;
use crate::request::Request;

use super::select::{always, never, Algorithm, Shape, Table};

/// Allgather's algorithms (see [`super::select`]); `bytes`: the total over all ranks.
pub(crate) static TABLE: Table = Table {
    op: "allgather",
    algorithms: &[
        Algorithm {
            name: "ring",
            applies: "any size",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "recursive_doubling",
            applies: "power-of-two sizes",
            runs: |s| s.ranks & (s.ranks - 1) == 0,
            instead: Some("bruck"),
        },
        Algorithm {
            name: "bruck",
            applies: "any size",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "shm",
            applies: "blocking allgather within one host",
            runs: never,
            instead: None,
        },
    ],
    default: |s| {
        let pof2 = s.ranks & (s.ranks - 1) == 0;
        if s.bytes < LONG_MSG && pof2 {
            "recursive_doubling"
        } else if s.bytes < SHORT_MSG {
            "bruck"
        } else {
            "ring"
        }
    },
};

/// Blocking allgathers up to this many bytes per block take the shared-memory
/// path where it exists ([`SHM_MAX_2`] on 2 ranks); measured on 2, 4 and 8 ranks.
pub const SHM_MAX: usize = 64 * 1024;
pub const SHM_MAX_2: usize = 2 * 1024;
/// Allgatherv's algorithms.
pub(crate) static V_TABLE: Table = Table {
    op: "allgatherv",
    algorithms: &[
        Algorithm {
            name: "ring",
            applies: "any counts",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "shm",
            applies: "blocking calls within one host with an allgather's layout",
            runs: never,
            instead: None,
        },
    ],
    default: |_| "ring",
};

pub const LONG_MSG: usize = 512 * 1024;
pub const SHORT_MSG: usize = 80 * 1024;

fn select(n: i32, total: usize) -> Result<&'static str> {
    // `shm` serves blocking calls only; schedules then get the automatic choice.
    super::select::choose("allgather", &TABLE, &Shape::new(n, total))
}

/// The schedule of an allgather over these addresses: it only records them (nothing
/// is read or written here); the caller keeps the buffers valid, holding the
/// blocks the arguments name, until it completes (a blocking entry point runs it
/// before returning, over its checked descriptors).
#[allow(clippy::too_many_arguments)]
fn schedule(
    call: &str,
    sendbuf: Option<*const u8>,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: *mut u8,
    recvcount: usize,
    recvtype: &Datatype,
    comm: &Comm,
) -> Result<Builder> {
    if comm.is_inter() {
        return super::inter::allgather(
            call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
        );
    }
    let (rank, n) = (comm.rank(), comm.size());
    util::check_type(call, "recvtype", recvtype)?;
    util::check_count(call, "recvcount", recvcount * n as usize, recvtype)?;
    let blk = util::packed_len(recvcount, recvtype);
    if sendbuf.is_some() {
        util::check_type(call, "sendtype", sendtype)?;
        util::check_count(call, "sendcount", sendcount, sendtype)?;
        if util::packed_len(sendcount, sendtype) != blk {
            return Err(size_mismatch(
                call,
                "own block",
                util::packed_len(sendcount, sendtype),
                blk,
            ));
        }
    }
    let algo = select(n, blk * n as usize)?;
    let mut b = Builder::new(comm);
    if blk == 0 {
        // Zero-byte blocks (on every rank: the signatures match): no communication.
        return Ok(b);
    }
    let total = recvcount * n as usize;
    let out = util::packed_output(&mut b, recvbuf, total, recvtype);
    let own = out.sub(rank as usize * blk, blk);
    match sendbuf {
        Some(p) => util::pack_into(&mut b, p, sendcount, sendtype, own),
        None if !recvtype.is_contiguous() => {
            let at = util::elem_ptr(recvbuf, (rank as usize * recvcount) as isize, recvtype);
            util::pack_into(&mut b, at, recvcount, recvtype, own);
        }
        None => {}
    }
    if n > 1 {
        match algo {
            "ring" => {
                let blocks: Vec<Slice> = (0..n as usize).map(|i| out.sub(i * blk, blk)).collect();
                ring::build(&mut b, rank, n, &blocks);
            }
            "bruck" => bruck::build(&mut b, rank, n, out, blk),
            _ => recursive_doubling::build(&mut b, rank, n, out, blk),
        }
    }
    util::finish_output(&mut b, out, recvbuf, total, recvtype);
    Ok(b)
}

/// MPI_Allgather. `send == None` is MPI_IN_PLACE; `recv` holds `n * recvcount`
/// elements (checked here: the one layout check, for every caller).
pub(crate) fn allgather(
    send: Option<SendBuf<'_, '_>>,
    mut recv: RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    crate::coll::api_move::allgather_check("MPI_Allgather", &recv, None, &[], recvcount, comm)?;
    let sendcount = send.as_ref().map_or(0, |s| s.count());
    let sendtype = super::api::dt(send.as_ref().and_then(|s| s.datatype()));
    let recvtype = super::api::dt(recv.datatype());
    let sendbuf = send.as_ref().map(|s| s.ptr());
    let _diag = crate::diag::coll("MPI_Allgather", comm, None, sendcount, Some(sendtype), None)?;
    const CALL: &str = "MPI_Allgather";
    let n = comm.size() as usize;
    let checked = !comm.is_inter()
        && util::check_type(CALL, "recvtype", recvtype).is_ok()
        && util::check_count(CALL, "recvcount", recvcount * n, recvtype).is_ok()
        && (sendbuf.is_none()
            || (util::check_type(CALL, "sendtype", sendtype).is_ok()
                && util::check_count(CALL, "sendcount", sendcount, sendtype).is_ok()
                && util::packed_len(sendcount, sendtype) == util::packed_len(recvcount, recvtype)));
    let blk = if checked {
        util::packed_len(recvcount, recvtype)
    } else {
        0
    };
    if blk > 0 {
        let forced = super::select::forced_op(super::select::Op::ALLGATHER)?;
        if let Some(sess) = super::shm::acquire(
            comm,
            super::shm::want(forced, blk <= if n == 2 { SHM_MAX_2 } else { SHM_MAX }),
        )? {
            super::shm::allgather(sess, send.as_ref(), &mut recv, recvcount, blk);
            super::select::ran_shm(super::select::Op::ALLGATHER);
            return Ok(());
        }
    }
    // The descriptors are valid for this blocking call, and `recv` holds the `n * recvcount` elements the schedule reaches (checked above).
    let b = schedule(
        "MPI_Allgather",
        sendbuf,
        sendcount,
        sendtype,
        recv.ptr(),
        recvcount,
        recvtype,
        comm,
    )?;
    super::run(b, "MPI_Allgather")
}

/// MPI_Iallgather, as [`allgather`] (the same layout check),
/// over descriptors lent for `'static` to the request it returns (by the
/// caller's `BufScope`, or made so by the C boundary, MPI's rule: valid until
/// the request completes), which is what keeps the addresses its schedule
/// records valid while it runs.
pub(crate) fn iallgather(
    send: Option<SendBuf<'static, '_>>,
    recv: RecvBuf<'static, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    const CALL: &str = "MPI_Iallgather";
    crate::coll::api_move::allgather_check(CALL, &recv, None, &[], recvcount, comm)?;
    let sendcount = send.as_ref().map_or(0, |s| s.count());
    let sendtype = super::api::dt(send.as_ref().and_then(|s| s.datatype()));
    let recvtype = super::api::dt(recv.datatype());
    super::start(schedule(
        CALL,
        send.as_ref().map(|s| s.ptr()),
        sendcount,
        sendtype,
        recv.ptr(),
        recvcount,
        recvtype,
        comm,
    )?)
}

/// The schedule of an allgatherv over these addresses: it only records them (nothing
/// is read or written here); the caller keeps the buffers valid, holding the
/// blocks the arguments name, until it completes (a blocking entry point runs it
/// before returning, over its checked descriptors).
#[allow(clippy::too_many_arguments)]
fn schedule_v(
    call: &str,
    sendbuf: Option<*const u8>,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: *mut u8,
    recvcounts: &[usize],
    displs: &[isize],
    recvtype: &Datatype,
    comm: &Comm,
) -> Result<Builder> {
    if comm.is_inter() {
        return super::inter::allgatherv(
            call, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
        );
    }
    super::select::choose("allgatherv", &V_TABLE, &Shape::new(comm.size(), 0))?;
    let (rank, n) = (comm.rank(), comm.size());
    util::check_type(call, "recvtype", recvtype)?;
    check_v(
        call,
        "recvcounts",
        recvcounts,
        "displs",
        displs,
        n,
        recvtype,
    )?;
    let r = rank as usize;
    if sendbuf.is_some() {
        util::check_type(call, "sendtype", sendtype)?;
        util::check_count(call, "sendcount", sendcount, sendtype)?;
        let (s, rl) = (
            util::packed_len(sendcount, sendtype),
            util::packed_len(recvcounts[r], recvtype),
        );
        if s != rl {
            return Err(size_mismatch(call, "own block", s, rl));
        }
    }
    let mut b = Builder::new(comm);
    if (0..n as usize).all(|i| util::packed_len(recvcounts[i], recvtype) == 0) {
        // Every block empty: so on every rank (each rank's block is its send
        // signature, the same wherever it is received), nothing to exchange.
        return Ok(b);
    }
    let ptr = |i: usize| util::elem_ptr_mut(recvbuf, displs[i], recvtype);
    let mut blocks = Vec::with_capacity(n as usize);
    for i in 0..n as usize {
        if i == r && sendbuf.is_none() {
            // In place: the own block is read where it is.
            blocks.push(util::packed_input(&mut b, ptr(i), recvcounts[i], recvtype));
        } else {
            blocks.push(util::packed_output(&mut b, ptr(i), recvcounts[i], recvtype));
        }
    }
    if let Some(p) = sendbuf {
        util::pack_into(&mut b, p, sendcount, sendtype, blocks[r]);
    }
    if n > 1 {
        ring::build(&mut b, rank, n, &blocks);
    }
    for (i, &o) in blocks.iter().enumerate() {
        if i != r || sendbuf.is_some() {
            util::finish_output(&mut b, o, ptr(i), recvcounts[i], recvtype);
        }
    }
    Ok(b)
}

/// MPI_Allgatherv. `send == None` is MPI_IN_PLACE; block `i` of `recv` is
/// `recvcounts[i]` elements at `displs[i]` (in units of its datatype's extent;
/// checked here).
pub(crate) fn allgatherv(
    send: Option<SendBuf<'_, '_>>,
    mut recv: RecvBuf<'_, '_>,
    recvcounts: &[usize],
    displs: &[isize],
    comm: &Comm,
) -> Result<()> {
    crate::coll::api_move::allgather_check(
        "MPI_Allgatherv",
        &recv,
        Some(recvcounts),
        displs,
        0,
        comm,
    )?;
    let sendcount = send.as_ref().map_or(0, |s| s.count());
    let sendtype = super::api::dt(send.as_ref().and_then(|s| s.datatype()));
    let recvtype = super::api::dt(recv.datatype());
    let sendbuf = send.as_ref().map(|s| s.ptr());
    let _diag = crate::diag::coll(
        "MPI_Allgatherv",
        comm,
        None,
        sendcount,
        Some(sendtype),
        None,
    )?;
    // Equal counts at an allgather's displacements (what OSU's osu_allgatherv and
    // many programs pass; every rank sees the same arrays): allgather's shared-memory path.
    const CALL: &str = "MPI_Allgatherv";
    let n = comm.size() as usize;
    let c = recvcounts.first().copied().unwrap_or(0);
    let uniform = !comm.is_inter()
        && recvcounts.len() >= n
        && displs.len() >= n
        && (0..n)
            .all(|i| recvcounts[i] == c && c.checked_mul(i).map(|d| d as isize) == Some(displs[i]))
        && util::check_type(CALL, "recvtype", recvtype).is_ok()
        && n.checked_mul(c)
            .is_some_and(|t| util::check_count(CALL, "recvcounts", t, recvtype).is_ok())
        && (sendbuf.is_none()
            || (util::check_type(CALL, "sendtype", sendtype).is_ok()
                && util::check_count(CALL, "sendcount", sendcount, sendtype).is_ok()
                && util::packed_len(sendcount, sendtype) == util::packed_len(c, recvtype)));
    let blk = if uniform {
        util::packed_len(c, recvtype)
    } else {
        0
    };
    if uniform && blk == 0 {
        // Zero-byte blocks everywhere (every rank sees the same counts): nothing to move.
        return Ok(());
    }
    if blk > 0 {
        let forced = super::select::forced_op(super::select::Op::ALLGATHERV)?;
        if let Some(sess) = super::shm::acquire(
            comm,
            super::shm::want(forced, blk <= if n == 2 { SHM_MAX_2 } else { SHM_MAX }),
        )? {
            // Block i at i * c (checked above).
            super::shm::allgather(sess, send.as_ref(), &mut recv, c, blk);
            super::select::ran_shm(super::select::Op::ALLGATHERV);
            return Ok(());
        }
    }
    // The descriptors are valid for this blocking call, and `recv` holds every block the schedule reaches (checked above).
    let b = schedule_v(
        "MPI_Allgatherv",
        sendbuf,
        sendcount,
        sendtype,
        recv.ptr(),
        recvcounts,
        displs,
        recvtype,
        comm,
    )?;
    super::run(b, "MPI_Allgatherv")
}

/// MPI_Iallgatherv, as [`allgatherv`] (the same layout check),
/// over descriptors lent for `'static` to the request it returns (by the
/// caller's `BufScope`, or made so by the C boundary, MPI's rule: valid until
/// the request completes), which is what keeps the addresses its schedule
/// records valid while it runs.
pub(crate) fn iallgatherv(
    send: Option<SendBuf<'static, '_>>,
    recv: RecvBuf<'static, '_>,
    recvcounts: &[usize],
    displs: &[isize],
    comm: &Comm,
) -> Result<Request> {
    const CALL: &str = "MPI_Iallgatherv";
    crate::coll::api_move::allgather_check(CALL, &recv, Some(recvcounts), displs, 0, comm)?;
    let sendcount = send.as_ref().map_or(0, |s| s.count());
    let sendtype = super::api::dt(send.as_ref().and_then(|s| s.datatype()));
    let recvtype = super::api::dt(recv.datatype());
    super::start(schedule_v(
        CALL,
        send.as_ref().map(|s| s.ptr()),
        sendcount,
        sendtype,
        recv.ptr(),
        recvcounts,
        displs,
        recvtype,
        comm,
    )?)
}
