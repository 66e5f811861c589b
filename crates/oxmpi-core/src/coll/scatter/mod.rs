//! MPI_Scatter / MPI_Iscatter and MPI_Scatterv / MPI_Iscatterv.
//!
//! Selection for scatter: binomial tree, except for large blocks (≥ 64 KiB) on
//! small communicators (≤ 8 ranks), where the root's starting every send at once
//! (linear) avoids the tree's forwarding copies. Scatterv is linear (non-roots
//! do not know the other ranks' counts, which a tree would need).
//!
//! MPI_IN_PLACE (`recvbuf == None`) is allowed only at the root: its block stays
//! in `sendbuf`; `recvcount`/`recvtype` are ignored there.
mod binomial;
mod linear;

use super::gather::{check_rooted, check_v, size_mismatch, Side};
use super::sched::Builder;
use super::util;
use crate::buf::{RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};
use crate::request::Request;

use super::select::{always, never, Algorithm, Shape, Table};

/// Scatter's algorithms (see [`super::select`]); `bytes`: one rank's block.
pub(crate) static TABLE: Table = Table {
    op: "scatter",
    algorithms: &[
        Algorithm {
            name: "binomial",
            applies: "any size",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "linear",
            applies: "any size (large blocks on small communicators)",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "shm",
            applies: "blocking scatter within one host, blocks up to 64 KiB",
            runs: never,
            instead: None,
        },
    ],
    default: |s| {
        if s.bytes >= LINEAR_MIN_BLOCK && s.ranks <= LINEAR_MAX_PROCS {
            "linear"
        } else {
            "binomial"
        }
    },
};

/// Scatterv's: only the root knows every count, so no tree.
pub(crate) static V_TABLE: Table = Table {
    op: "scatterv",
    algorithms: &[
        Algorithm {
            name: "linear",
            applies: "any counts",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "shm",
            applies: "blocking scatterv within one host (blocks over 64 KiB point-to-point)",
            runs: never,
            instead: None,
        },
    ],
    default: |_| "linear",
};

pub const LINEAR_MIN_BLOCK: usize = 64 * 1024;
pub const LINEAR_MAX_PROCS: i32 = 8;

fn select(n: i32, blk: usize) -> Result<&'static str> {
    super::select::choose("scatter", &TABLE, &Shape::new(n, blk))
}

fn in_place_not_at_root(call: &str) -> MpiError {
    MpiError::arg(
        ErrorClass::Buffer,
        call,
        "recvbuf",
        "MPI_IN_PLACE is only valid at the root",
    )
}

/// # Safety
/// As [`scatter`].
#[allow(clippy::too_many_arguments)]
unsafe fn schedule(
    call: &str,
    sendbuf: *const u8,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: Option<*mut u8>,
    recvcount: usize,
    recvtype: &Datatype,
    root: i32,
    comm: &Comm,
) -> Result<Builder> {
    if comm.is_inter() {
        return super::inter::scatter(
            call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
        );
    }
    let local = Side::recv(recvbuf.is_some(), recvcount, recvtype);
    let at_root = Side::send(true, sendcount, sendtype);
    let blk = check_rooted(call, comm, root, &local, &at_root, false)?;
    let (rank, n) = (comm.rank(), comm.size());
    let is_root = rank == root;
    let algo = select(n, blk)?;
    let mut b = Builder::new(comm);
    if blk == 0 {
        // Zero-byte blocks (on every rank: the signatures match): no communication.
        return Ok(b);
    }
    let total = sendcount * n as usize;
    let inp = if is_root {
        Some(util::packed_input(&mut b, sendbuf, total, sendtype))
    } else {
        None
    };
    let out = recvbuf.map(|p| util::packed_output(&mut b, p, recvcount, recvtype));
    match algo {
        "linear" => {
            let blocks: Vec<_> = match inp {
                Some(i) => (0..n as usize).map(|k| i.sub(k * blk, blk)).collect(),
                None => Vec::new(),
            };
            linear::build(&mut b, rank, n, root, &blocks, out);
        }
        _ => binomial::build(&mut b, rank, n, root, inp, out, blk),
    }
    if let (Some(o), Some(p)) = (out, recvbuf) {
        util::finish_output(&mut b, o, p, recvcount, recvtype);
    }
    Ok(b)
}

/// MPI_Scatter. `recv == None` is MPI_IN_PLACE (root only); the root's `send`
/// holds `n * sendcount` elements (checked here: the one layout check).
pub(crate) fn scatter(
    send: Option<SendBuf<'_, '_>>,
    sendcount: usize,
    recv: Option<RecvBuf<'_, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<()> {
    let sendbuf = crate::coll::api_move::scatter_args(
        "MPI_Scatter",
        &send,
        None,
        &[],
        sendcount,
        root,
        comm,
    )?;
    let recvbuf = recv.as_ref().map(|r| r.ptr());
    let recvcount = recv.as_ref().map_or(0, |r| r.count());
    let sendtype = super::api::dt(send.as_ref().and_then(|s| s.datatype()));
    let recvtype = super::api::dt(recv.as_ref().and_then(|r| r.datatype()));
    let _diag = crate::diag::coll(
        "MPI_Scatter",
        comm,
        Some(root),
        recvcount,
        Some(recvtype),
        None,
    )?;
    let local = Side::recv(recvbuf.is_some(), recvcount, recvtype);
    let at_root = Side::send(true, sendcount, sendtype);
    match super::gather::rooted_shortcut(
        "MPI_Scatter",
        super::select::Op::SCATTER,
        comm,
        root,
        &local,
        &at_root,
        false,
    )? {
        Some(super::gather::Rooted::Nothing) => return Ok(()),
        Some(super::gather::Rooted::Shm(sess, blk)) => {
            let mut recv = recv;
            super::shm::scatter(
                sess,
                send.as_ref(),
                sendcount,
                sendtype,
                recv.as_mut(),
                root as usize,
                blk,
            );
            return Ok(());
        }
        None => {}
    }
    // SAFETY: the descriptors are valid for this blocking call and hold every block the schedule reaches (checked above).
    let b = unsafe {
        schedule(
            "MPI_Scatter",
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
            root,
            comm,
        )
    }?;
    super::run(b, "MPI_Scatter")
}

/// MPI_Iscatter.
///
/// # Safety
/// As [`scatter`], with the buffers valid until the request completes.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn iscatter(
    sendbuf: *const u8,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: Option<*mut u8>,
    recvcount: usize,
    recvtype: &Datatype,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    super::start(schedule(
        "MPI_Iscatter",
        sendbuf,
        sendcount,
        sendtype,
        recvbuf,
        recvcount,
        recvtype,
        root,
        comm,
    )?)
}

/// The shared-memory path of a blocking scatterv, if it takes it (`None`: run
/// the schedule, which also reports any argument error).
///
/// # Safety
/// As [`scatterv`].
#[allow(clippy::too_many_arguments)]
unsafe fn scatterv_shm(
    sendbuf: *const u8,
    sendcounts: &[usize],
    displs: &[isize],
    sendtype: &Datatype,
    recvbuf: Option<*mut u8>,
    recvcount: usize,
    recvtype: &Datatype,
    root: i32,
    comm: &Comm,
) -> Result<Option<()>> {
    let call = "MPI_Scatterv";
    let local = Side::recv(recvbuf.is_some(), recvcount, recvtype);
    let at_root = Side::send_v(sendcounts, displs, sendtype);
    let key = super::select::Op::SCATTERV;
    let Some(super::gather::Rooted::Shm(sess, _)) =
        super::gather::rooted_shortcut(call, key, comm, root, &local, &at_root, false)?
    else {
        return Ok(None);
    };

    // SAFETY: forwarded caller contract; the arguments were checked above.
    unsafe {
        super::shm::scatterv(
            sess,
            comm,
            call,
            sendbuf,
            sendcounts,
            displs,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
            root as usize,
        )
    }
    .map(Some)
}

/// # Safety
/// As [`scatterv`].
#[allow(clippy::too_many_arguments)]
unsafe fn schedule_v(
    call: &str,
    sendbuf: *const u8,
    sendcounts: &[usize],
    displs: &[isize],
    sendtype: &Datatype,
    recvbuf: Option<*mut u8>,
    recvcount: usize,
    recvtype: &Datatype,
    root: i32,
    comm: &Comm,
) -> Result<Builder> {
    if comm.is_inter() {
        return super::inter::scatterv(
            call, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
        );
    }
    super::check_root(call, comm, root)?;
    super::select::choose("scatterv", &V_TABLE, &Shape::new(comm.size(), 0))?;
    let (rank, n) = (comm.rank(), comm.size());
    let is_root = rank == root;
    if recvbuf.is_some() {
        util::check_type(call, "recvtype", recvtype)?;
        util::check_count(call, "recvcount", recvcount, recvtype)?;
    } else if !is_root {
        return Err(in_place_not_at_root(call));
    }
    if is_root {
        util::check_type(call, "sendtype", sendtype)?;
        check_v(
            call,
            "sendcounts",
            sendcounts,
            "displs",
            displs,
            n,
            sendtype,
        )?;
        if recvbuf.is_some() {
            let (s, r) = (
                util::packed_len(sendcounts[root as usize], sendtype),
                util::packed_len(recvcount, recvtype),
            );
            if s != r {
                return Err(size_mismatch(call, "the root's own block", s, r));
            }
        }
    }
    let mut b = Builder::new(comm);
    let mut inps = Vec::new();
    if is_root {
        for i in 0..n as usize {
            let at = util::elem_ptr(sendbuf, displs[i], sendtype);
            // In place, the root's own block is never read.
            let cnt = if i == root as usize && recvbuf.is_none() {
                0
            } else {
                sendcounts[i]
            };
            inps.push(util::packed_input(&mut b, at, cnt, sendtype));
        }
    }
    let out = recvbuf.map(|p| util::packed_output(&mut b, p, recvcount, recvtype));
    linear::build(&mut b, rank, n, root, &inps, out);
    if let (Some(o), Some(p)) = (out, recvbuf) {
        util::finish_output(&mut b, o, p, recvcount, recvtype);
    }
    Ok(b)
}

/// MPI_Scatterv. `recvbuf == None` is MPI_IN_PLACE (root only). `displs` count
/// elements of `sendtype`'s extent.
///
/// # Safety
/// The buffers hold the given counts of their datatypes at the given
/// displacements (at the root for `sendbuf`) and are valid for the call.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatterv(
    sendbuf: *const u8,
    sendcounts: &[usize],
    displs: &[isize],
    sendtype: &Datatype,
    recvbuf: Option<*mut u8>,
    recvcount: usize,
    recvtype: &Datatype,
    root: i32,
    comm: &Comm,
) -> Result<()> {
    let _diag = crate::diag::coll(
        "MPI_Scatterv",
        comm,
        Some(root),
        recvcount,
        Some(recvtype),
        None,
    )?;
    // SAFETY: forwarded caller contract.
    if let Some(()) = unsafe {
        scatterv_shm(
            sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
        )?
    } {
        return Ok(());
    }
    super::run(
        schedule_v(
            "MPI_Scatterv",
            sendbuf,
            sendcounts,
            displs,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
            root,
            comm,
        )?,
        "MPI_Scatterv",
    )
}

/// MPI_Iscatterv.
///
/// # Safety
/// As [`scatterv`], with the buffers valid until the request completes.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn iscatterv(
    sendbuf: *const u8,
    sendcounts: &[usize],
    displs: &[isize],
    sendtype: &Datatype,
    recvbuf: Option<*mut u8>,
    recvcount: usize,
    recvtype: &Datatype,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    super::start(schedule_v(
        "MPI_Iscatterv",
        sendbuf,
        sendcounts,
        displs,
        sendtype,
        recvbuf,
        recvcount,
        recvtype,
        root,
        comm,
    )?)
}
