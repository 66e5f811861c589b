//! MPI_Scatter / MPI_Iscatter and MPI_Scatterv / MPI_Iscatterv.
//!
//! Selection for scatter: binomial tree, except for blocks from 4 KiB on
//! small communicators (≤ 8 ranks), where the root's starting every send at once
//! (linear) avoids the tree's forwarding copies (4 ranks, 32 KiB: linear 6.5 us,
//! binomial 9.8; bench/PROFILE.md collA28). The shared area takes blocks up to
//! [`super::gather::rooted_shm_max`]. Scatterv is linear (non-roots
//! do not know the other ranks' counts, which a tree would need).
//!
//! MPI_IN_PLACE (`recvbuf == None`) is allowed only at the root: its block stays
//! in `sendbuf`; `recvcount`/`recvtype` are ignored there.
mod binomial;
mod linear;

use super::gather::{check_rooted, check_v, size_mismatch, Side};
use super::sched::Builder;
use super::util;
use crate::buf::elems::VLayout;
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
            applies: "blocking scatter within one host, blocks up to 4 KiB (64 KiB forced)",
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

pub const LINEAR_MIN_BLOCK: usize = 4 * 1024;
/// Blocks of at least this many bytes are copied once, straight from the root's
/// send buffer, by their receivers (`coll/shm/direct.rs`), where the members may
/// copy between each other's memory. Measured (bench/PROFILE.md collA29, us,
/// direct / area or linear / Open MPI): 2 ranks 8 KiB 1.05 / 1.41 / 1.24, 32 KiB
/// 1.89 / 3.09 / 2.73; 4 ranks 8 KiB 2.42 / 1.62 / 6.3, 32 KiB 3.77 / 3.99 / 3.92;
/// 8 ranks 8 KiB 4.52 / 2.85 / 25.6, 32 KiB 9.3 / 14.9 / 16.0. Those were on an
/// earlier VM; on this one a 2-rank block below 16 KiB is faster through the area
/// ([`super::gather::DIRECT_MIN_2`]).
pub const fn direct_min(n: i32) -> usize {
    match n {
        ..=2 => super::gather::DIRECT_MIN_2,
        _ => 32 * 1024,
    }
}
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

/// The schedule of a scatter over these addresses: it only records them (nothing
/// is read or written here); the caller keeps the buffers valid, holding the
/// blocks the arguments name, until it completes (a blocking entry point runs it
/// before returning, over its checked descriptors).
fn schedule(
    call: &str,
    a: &ScatterArgs<'_, '_>,
    sendcount: usize,
    root: i32,
    comm: &Comm,
) -> Result<Builder> {
    let (sendbuf, sendtype) = (a.send, a.sendtype);
    let (recvbuf, recvcount, recvtype) = (a.recv, a.recvcount, a.recvtype);
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
    let a = scatter_args(
        "MPI_Scatter",
        &send,
        None,
        &[],
        sendcount,
        &recv,
        root,
        comm,
    )?;
    let (recvcount, sendtype, recvtype) = (a.recvcount, a.sendtype, a.recvtype);
    let local = Side::recv(recv.is_some(), recvcount, recvtype);
    let at_root = Side::send(true, sendcount, sendtype);
    let blk = super::gather::rooted_blk("MPI_Scatter", comm, root, &local, &at_root, false);
    if super::gather::rooted_empty(blk) {
        return Ok(());
    }
    let _diag = crate::diag::coll(
        "MPI_Scatter",
        comm,
        Some(root),
        recvcount,
        Some(recvtype),
        None,
    )?;
    match super::gather::rooted_shortcut(super::select::Op::SCATTER, comm, blk, false)? {
        Some(super::gather::Rooted::Nothing) => return Ok(()),
        Some(super::gather::Rooted::Shm { sess, blk, direct }) => {
            let mut recv = recv;
            return super::shm::scatter(
                sess,
                direct,
                send.as_ref(),
                sendcount,
                sendtype,
                recv.as_mut(),
                root as usize,
                blk,
            );
        }
        None => {}
    }
    // The descriptors are valid for this blocking call and hold every block the schedule reaches (checked above).
    let b = schedule("MPI_Scatter", &a, sendcount, root, comm)?;
    super::run(b, "MPI_Scatter")
}

/// MPI_Iscatter, as [`scatter`] (the same layout check),
/// over descriptors lent for `'static` to the request it returns (by the
/// caller's `BufScope`, or made so by the C boundary, MPI's rule: valid until
/// the request completes), which is what keeps the addresses its schedule
/// records valid while it runs.
pub(crate) fn iscatter(
    send: Option<SendBuf<'static, '_>>,
    sendcount: usize,
    recv: Option<RecvBuf<'static, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    const CALL: &str = "MPI_Iscatter";
    let a = scatter_args(CALL, &send, None, &[], sendcount, &recv, root, comm)?;
    super::start(schedule(CALL, &a, sendcount, root, comm)?)
}

/// The schedule of a scatterv over these addresses (as [`schedule`]'s: recorded
/// only; the caller keeps the blocks valid until it completes).
fn schedule_v(
    call: &str,
    a: &ScatterArgs<'_, '_>,
    sendcounts: &[usize],
    displs: &[isize],
    root: i32,
    comm: &Comm,
) -> Result<Builder> {
    let (sendbuf, sendtype) = (a.send, a.sendtype);
    let (recvbuf, recvcount, recvtype) = (a.recv, a.recvcount, a.recvtype);
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

/// MPI_Scatterv. `recv == None` is MPI_IN_PLACE (root only). Block `j` of the
/// root's `send` is `sendcounts[j]` elements at element `displs[j]` (checked
/// here, once: [`scatter_args`]).
pub(crate) fn scatterv(
    send: Option<SendBuf<'_, '_>>,
    sendcounts: &[usize],
    displs: &[isize],
    recv: Option<RecvBuf<'_, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<()> {
    const CALL: &str = "MPI_Scatterv";
    let a = scatter_args(CALL, &send, Some(sendcounts), displs, 0, &recv, root, comm)?;
    let (recvcount, sendtype, recvtype) = (a.recvcount, a.sendtype, a.recvtype);
    let _diag = crate::diag::coll(CALL, comm, Some(root), recvcount, Some(recvtype), None)?;
    let local = Side::recv(recv.is_some(), recvcount, recvtype);
    let at_root = Side::send_v(sendcounts, displs, sendtype);
    let key = super::select::Op::SCATTERV;
    let blk = super::gather::rooted_blk(CALL, comm, root, &local, &at_root, false);
    if let Some(super::gather::Rooted::Shm { sess, .. }) =
        super::gather::rooted_shortcut(key, comm, blk, true)?
    {
        let mut recv = recv;
        let send = send.as_ref().zip(a.layout);
        return super::shm::scatterv(sess, comm, CALL, send, recv.as_mut(), root as usize);
    }
    // The descriptors are valid for this blocking call and hold every block the schedule reaches (checked above).
    let b = schedule_v(CALL, &a, sendcounts, displs, root, comm)?;
    super::run(b, CALL)
}

/// A rooted scatter's arguments after the layout check (as [`GatherArgs`](super::gather::GatherArgs),
/// for the send side); the receive address (`None`: MPI_IN_PLACE) and count, and the
/// datatypes (MPI_BYTE for a descriptor not given), as the schedule takes them.
pub(crate) struct ScatterArgs<'c, 'd> {
    pub(crate) send: *const u8,
    pub(crate) layout: Option<VLayout<'c>>,
    pub(crate) recv: Option<*mut u8>,
    pub(crate) recvcount: usize,
    pub(crate) sendtype: &'d Datatype,
    pub(crate) recvtype: &'d Datatype,
}

/// The layout check of a scatter (`sendcounts: None`: `n` blocks of `count`) or
/// scatterv on every communicator, blocking or not (as
/// [`gather_args`](super::gather::gather_args), for the root's send buffer).
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn scatter_args<'c, 'd>(
    call: &str,
    send: &Option<SendBuf<'_, 'd>>,
    sendcounts: Option<&'c [usize]>,
    displs: &'c [isize],
    count: usize,
    recv: &Option<RecvBuf<'_, 'd>>,
    root: i32,
    comm: &Comm,
) -> Result<ScatterArgs<'c, 'd>> {
    let sendtype = super::api::dt(send.as_ref().and_then(|s| s.datatype()));
    let side = send.as_ref().map(|s| (s.ptr().cast_mut(), s.count()));
    let (send, layout) = super::gather::root_side(
        call,
        ("sendbuf", "sendcounts"),
        side,
        sendcounts,
        displs,
        count,
        root,
        comm,
    )?;
    Ok(ScatterArgs {
        send,
        layout,
        recv: recv.as_ref().map(|r| r.ptr()),
        recvcount: recv.as_ref().map_or(0, |r| r.count()),
        sendtype,
        recvtype: super::api::dt(recv.as_ref().and_then(|r| r.datatype())),
    })
}

/// MPI_Iscatterv, as [`scatterv`] (the same checked layout),
/// over descriptors lent for `'static` to the request it returns (by the
/// caller's `BufScope`, or made so by the C boundary, MPI's rule: valid until
/// the request completes), which is what keeps the addresses its schedule
/// records valid while it runs.
pub(crate) fn iscatterv(
    send: Option<SendBuf<'static, '_>>,
    sendcounts: &[usize],
    displs: &[isize],
    recv: Option<RecvBuf<'static, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    const CALL: &str = "MPI_Iscatterv";
    let a = scatter_args(CALL, &send, Some(sendcounts), displs, 0, &recv, root, comm)?;
    super::start(schedule_v(CALL, &a, sendcounts, displs, root, comm)?)
}
