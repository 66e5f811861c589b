//! MPI_Alltoall / MPI_Ialltoall, MPI_Alltoallv / MPI_Ialltoallv and
//! MPI_Alltoallw / MPI_Ialltoallw.
//!
//! Selection for alltoall (MPICH's defaults, on bytes per block): Bruck for
//! blocks ≤ 256 B on 8 or more ranks; linear (every send and receive started at
//! once) for blocks < 32 KiB on 8 or more ranks; pairwise exchange otherwise.
//! On a host with more ranks than cores ([`TABLE_CROWDED`]) linear instead of
//! pairwise. Alltoallv/w: linear by default, pairwise on request. `shm`
//! (blocking alltoall on communicators within one host, see `coll/shm`) is
//! chosen up to [`SHM_MAX`] bytes a block ([`SHM_MAX_CROWDED`] on a crowded
//! host), in pieces of a sub-slot where the n blocks do not fit a slot half:
//! one synchronization a step instead of a message per pair.
//!
//! MPI_IN_PLACE (`sendbuf == None`): `recvbuf` holds the data to send, described
//! by the receive arguments; it is first copied to a temporary.
mod bruck;
mod linear;
mod pairwise;

use super::allgather::Args;
use super::gather::{check_v, size_mismatch};
use super::sched::{Builder, Slice};
use super::util;
use crate::buf::elems::VLayout;
use crate::buf::{RecvBlocks, RecvBuf, SendBlocks, SendBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};
use crate::request::Request;

use super::select::{always, never, Algorithm, Shape, Table};

/// Alltoall's algorithms (see [`super::select`]); `bytes`: one block.
pub(crate) static TABLE: Table = Table {
    op: "alltoall",
    algorithms: &[
        Algorithm {
            name: "pairwise",
            applies: "any size",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "bruck",
            applies: "any size (small blocks on 8 or more ranks)",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "linear",
            applies: "any size (medium blocks on 8 or more ranks)",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "shm",
            applies:
                "blocking alltoall within one host (blocks beyond a slot half together in pieces)",
            runs: never,
            instead: None,
        },
    ],
    default: |s| {
        if s.bytes <= BRUCK_MAX_BLOCK && s.ranks >= MIN_PROCS {
            "bruck"
        } else if s.bytes < MEDIUM_MAX_BLOCK && s.ranks >= MIN_PROCS {
            "linear"
        } else {
            "pairwise"
        }
    },
};

/// [`TABLE`] on a host with more ranks than cores (the engine's view): linear
/// wherever the default is not Bruck (the same Bruck rule, so every rank runs
/// Bruck or none; linear and pairwise exchange the same messages and mix).
/// Pairwise's n - 1 exchanges each wait for both partners to hold a core at
/// once; linear posts everything, and each transfer runs when either side
/// does (collC28 in bench/PROFILE.md: 4 ranks on 2 cores, 128 KiB-4 MiB
/// 10-20 % faster, 8 ranks 20-25 %).
pub(crate) static TABLE_CROWDED: Table = Table {
    op: "alltoall",
    algorithms: TABLE.algorithms,
    default: |s| {
        if s.bytes <= BRUCK_MAX_BLOCK && s.ranks >= MIN_PROCS {
            "bruck"
        } else {
            "linear"
        }
    },
};

/// Alltoallv's and alltoallw's schedules.
const V_LINEAR: Algorithm = Algorithm {
    name: "linear",
    applies: "any counts",
    runs: always,
    instead: None,
};
const V_PAIRWISE: Algorithm = Algorithm {
    name: "pairwise",
    applies: "any counts",
    runs: always,
    instead: None,
};

/// Alltoallv's algorithms.
pub(crate) static V_TABLE: Table = Table {
    op: "alltoallv",
    algorithms: &[
        V_LINEAR,
        V_PAIRWISE,
        Algorithm {
            name: "shm",
            applies: "blocking alltoallv within one host, not in place (blocks over 64 KiB / n point-to-point)",
            runs: never,
            instead: None,
        },
    ],
    default: |_| "linear",
};

/// Alltoallw's algorithms: alltoallv's schedules (it has no shared-memory path,
/// so `OXMPI_ALLTOALLW_ALGORITHM=shm` is refused at start-up like any name of
/// no alltoallw algorithm).
pub(crate) static W_TABLE: Table = Table {
    op: "alltoallw",
    algorithms: &[V_LINEAR, V_PAIRWISE],
    default: |_| "linear",
};

/// Blocking alltoalls up to this many bytes per block take the shared-memory
/// path where it exists (`OXMPI_ALLTOALL_SHM_MAX` overrides it): at 2 ranks,
/// each on its core, pairwise's one exchange wins from 8 KiB (collC28).
pub const SHM_MAX: usize = 4 * 1024;
/// [`SHM_MAX`] where the area's ranks outnumber the host's cores
/// (`OXMPI_ALLTOALL_SHM_MAX_CROWDED`): one synchronization a step beats a
/// message per pair up to 16 KiB blocks on 4 and 8 ranks on 2 cores (collC28:
/// 8 KiB 20 -> 7.5 us at 4 ranks, 56 -> 19 at 8; 16 KiB 17 -> 12, 66 -> 45);
/// from 32 KiB linear's single copies win (4 ranks 24.5 against 20.5 us).
pub const SHM_MAX_CROWDED: usize = 16 * 1024;

/// The shared-memory path's largest block (bytes) on a crowded host or not.
fn shm_max(crowded: bool) -> usize {
    use std::sync::OnceLock;
    static MAX: [OnceLock<usize>; 2] = [OnceLock::new(), OnceLock::new()];
    let (var, default) = if crowded {
        ("OXMPI_ALLTOALL_SHM_MAX_CROWDED", SHM_MAX_CROWDED)
    } else {
        ("OXMPI_ALLTOALL_SHM_MAX", SHM_MAX)
    };
    *MAX[crowded as usize].get_or_init(|| {
        std::env::var(var)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    })
}
pub const BRUCK_MAX_BLOCK: usize = 256;
pub const MEDIUM_MAX_BLOCK: usize = 32 * 1024;
pub const MIN_PROCS: i32 = 8;

fn select(n: i32, blk: usize) -> Result<&'static str> {
    let table = if crate::runtime::engine()?.oversubscribed {
        &TABLE_CROWDED
    } else {
        &TABLE
    };
    super::select::choose("alltoall", table, &Shape::new(n, blk))
}

/// Copies this rank's block to itself, checking that the sizes agree.
fn self_copy(b: &mut Builder, rank: i32, send: &[Slice], recv: &[Slice]) -> Result<()> {
    let (s, r) = (send[rank as usize], recv[rank as usize]);
    if s.len != r.len {
        return Err(size_mismatch(
            "alltoall",
            "the block a rank sends itself",
            s.len,
            r.len,
        ));
    }
    if s.len > 0 {
        b.copy(s, r);
    }
    Ok(())
}

/// The schedule of an alltoall over these addresses: it only records them
/// (nothing is read or written here); the caller keeps the buffers valid, holding
/// the blocks the arguments name, until it completes (a blocking entry point runs
/// it before returning, over its checked descriptors).
fn schedule(call: &str, a: &Args<'_>, recvcount: usize, comm: &Comm) -> Result<Builder> {
    let (sendbuf, sendcount, sendtype) = (a.send, a.sendcount, a.sendtype);
    let (recvbuf, recvtype) = (a.recv, a.recvtype);
    if comm.is_inter() {
        return super::inter::alltoall(
            call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
        );
    }
    let (rank, n) = (comm.rank(), comm.size());
    let nu = n as usize;
    util::check_type(call, "recvtype", recvtype)?;
    util::check_count(call, "recvcount", recvcount * nu, recvtype)?;
    let blk = util::packed_len(recvcount, recvtype);
    if sendbuf.is_some() {
        util::check_type(call, "sendtype", sendtype)?;
        util::check_count(call, "sendcount", sendcount * nu, sendtype)?;
        if util::packed_len(sendcount, sendtype) != blk {
            return Err(size_mismatch(
                call,
                "blocks",
                util::packed_len(sendcount, sendtype),
                blk,
            ));
        }
    }
    let algo = select(n, blk)?;
    let mut b = Builder::new(comm);
    if blk == 0 {
        // Zero-byte blocks (the signatures match, so on every rank): nothing
        // to exchange, no communication.
        return Ok(b);
    }
    let total = recvcount * nu;
    let inp = match sendbuf {
        Some(p) => util::packed_input(&mut b, p, sendcount * nu, sendtype),
        None => {
            let t = b.temp(nu * blk);
            util::pack_into(&mut b, recvbuf, total, recvtype, t);
            t
        }
    };
    let out = util::packed_output(&mut b, recvbuf, total, recvtype);
    let blocks = |s: Slice| -> Vec<Slice> { (0..nu).map(|i| s.sub(i * blk, blk)).collect() };
    match algo {
        "bruck" => bruck::build(&mut b, rank, n, inp, out, blk),
        "linear" => linear::build(&mut b, rank, n, &blocks(inp), &blocks(out))?,
        _ => pairwise::build(&mut b, rank, n, &blocks(inp), &blocks(out))?,
    }
    util::finish_output(&mut b, out, recvbuf, total, recvtype);
    Ok(b)
}

/// MPI_Alltoall. `send == None` is MPI_IN_PLACE; `send` holds `n * sendcount`
/// elements, `recv` `n * recvcount` (checked here: the one layout check).
pub(crate) fn alltoall(
    send: Option<SendBuf<'_, '_>>,
    sendcount: usize,
    mut recv: RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    const CALL: &str = "MPI_Alltoall";
    let a = args(CALL, &send, sendcount, &recv, recvcount, comm)?;
    let (sendbuf, sendtype, recvtype) = (a.send, a.sendtype, a.recvtype);
    let n = comm.size() as usize;
    let checked = !comm.is_inter()
        && util::check_type(CALL, "recvtype", recvtype).is_ok()
        && util::check_count(CALL, "recvcount", recvcount * n, recvtype).is_ok()
        && (sendbuf.is_none()
            || (util::check_type(CALL, "sendtype", sendtype).is_ok()
                && util::check_count(CALL, "sendcount", sendcount * n, sendtype).is_ok()
                && util::packed_len(sendcount, sendtype) == util::packed_len(recvcount, recvtype)));
    let blk = if checked {
        util::packed_len(recvcount, recvtype)
    } else {
        0
    };
    // Zero-byte blocks, arguments checked (on every rank: the signatures match).
    if super::nothing_to_move(checked && blk == 0) {
        return Ok(());
    }
    let _diag = crate::diag::coll(CALL, comm, None, sendcount, Some(sendtype), None)?;
    if checked && blk == 0 {
        // Checked collectives: after the record, as every rank does.
        return Ok(());
    }
    if blk > 0 {
        let forced = super::select::forced_op(super::select::Op::ALLTOALL)?;
        let (lo, hi) = (shm_max(false), shm_max(true));
        let want = super::shm::want(forced, blk <= lo.max(hi));
        if let Some(sess) = super::shm::acquire(comm, want)? {
            // The area's view of crowding is rank 0's, the same on every rank.
            let max = if sess.oversubscribed() { hi } else { lo };
            if forced.is_some() || blk <= max {
                super::shm::alltoall(sess, send.as_ref(), sendcount, &mut recv, recvcount, blk);
                super::select::ran_shm(super::select::Op::ALLTOALL);
                return Ok(());
            }
        }
    }
    // The descriptors are valid for this blocking call and hold the `n` blocks the schedule reaches (checked above).
    super::run(schedule(CALL, &a, recvcount, comm)?, CALL)
}

/// An alltoall's arguments after its layout check (`send` holds `n * sendcount`
/// elements, `recv` `n * recvcount`), blocking or not.
fn args<'d>(
    call: &str,
    send: &Option<SendBuf<'_, 'd>>,
    sendcount: usize,
    recv: &RecvBuf<'_, 'd>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Args<'d>> {
    crate::coll::api_move::alltoall_check(call, send, sendcount, recv, recvcount, comm)?;
    Ok(Args::of(send.as_ref(), sendcount, recv))
}

/// MPI_Ialltoall, as [`alltoall`] (the same layout check),
/// over descriptors lent for `'static` to the request it returns (by the
/// caller's `BufScope`, or made so by the C boundary, MPI's rule: valid until
/// the request completes), which is what keeps the addresses its schedule
/// records valid while it runs.
pub(crate) fn ialltoall(
    send: Option<SendBuf<'static, '_>>,
    sendcount: usize,
    recv: RecvBuf<'static, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    const CALL: &str = "MPI_Ialltoall";
    let a = args(CALL, &send, sendcount, &recv, recvcount, comm)?;
    super::start(schedule(CALL, &a, recvcount, comm)?)
}

/// One side (send or receive) of an alltoallv/w: per-peer counts, byte offsets
/// and datatypes.
struct Side<'a> {
    counts: &'a [usize],
    /// Byte offset of each peer's block from the buffer.
    offsets: Vec<isize>,
    types: Vec<&'a Datatype>,
}

fn check_w(
    call: &str,
    side: &str,
    counts: &[usize],
    displs: &[isize],
    types: &[Datatype],
    n: usize,
) -> Result<()> {
    if types.len() < n {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            &format!("{side}types"),
            format!("has {} entries for {n} ranks", types.len()),
        ));
    }
    if counts.len() < n || displs.len() < n {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            &format!("{side}counts"),
            format!("{side}counts/{side}displs have fewer than {n} entries"),
        ));
    }
    for i in 0..n {
        util::check_type(call, &format!("{side}types"), &types[i])?;
        util::check_count(call, &format!("{side}counts"), counts[i], &types[i])?;
    }
    Ok(())
}

/// The schedule of an alltoallv/w. It only registers the blocks' addresses
/// (`buf + offset`, nothing is read here): the callers' descriptors (alltoallw's
/// block lists) or `unsafe` contract (alltoallv's) keep them valid until completion.
fn schedule_w(
    call: &str,
    sendbuf: Option<*const u8>,
    send: &Side<'_>,
    recvbuf: *mut u8,
    recv: &Side<'_>,
    comm: &Comm,
) -> Result<Builder> {
    let (op, table) = if call.ends_with('w') {
        ("alltoallw", &W_TABLE)
    } else {
        ("alltoallv", &V_TABLE)
    };
    let algo = super::select::choose(op, table, &super::select::Shape::new(comm.size(), 0))?;
    let (rank, n) = (comm.rank(), comm.size());
    let nu = n as usize;
    let mut b = Builder::new(comm);
    let rptr = |i: usize| recvbuf.wrapping_offset(recv.offsets[i]);
    let sends: Vec<Slice> = match sendbuf {
        Some(p) => (0..nu)
            .map(|i| {
                util::packed_input(
                    &mut b,
                    p.wrapping_offset(send.offsets[i]),
                    send.counts[i],
                    send.types[i],
                )
            })
            .collect(),
        None => (0..nu)
            .map(|i| {
                let t = b.temp(util::packed_len(recv.counts[i], recv.types[i]));
                util::pack_into(&mut b, rptr(i), recv.counts[i], recv.types[i], t);
                t
            })
            .collect(),
    };
    let recvs: Vec<Slice> = (0..nu)
        .map(|i| util::packed_output(&mut b, rptr(i), recv.counts[i], recv.types[i]))
        .collect();
    let built = match algo {
        "pairwise" => pairwise::build(&mut b, rank, n, &sends, &recvs),
        _ => linear::build(&mut b, rank, n, &sends, &recvs),
    };
    built.map_err(|mut e| {
        e.message = e.message.replacen("alltoall", call, 1);
        e
    })?;
    for (i, &o) in recvs.iter().enumerate() {
        util::finish_output(&mut b, o, rptr(i), recv.counts[i], recv.types[i]);
    }
    Ok(b)
}

/// The schedule of an alltoallv over these addresses (as [`schedule`]'s:
/// recorded only; the caller keeps the blocks valid until it completes).
#[allow(clippy::too_many_arguments)]
fn schedule_v(
    call: &str,
    send: Option<&SendBuf<'_, '_>>,
    sendcounts: &[usize],
    sdispls: &[isize],
    recv: &RecvBuf<'_, '_>,
    recvcounts: &[usize],
    rdispls: &[isize],
    comm: &Comm,
) -> Result<Builder> {
    let a = Args::of(send, 0, recv);
    let (sendbuf, sendtype, recvbuf, recvtype) = (a.send, a.sendtype, a.recv, a.recvtype);
    if comm.is_inter() {
        return super::inter::alltoallv(
            call, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
            comm,
        );
    }
    let n = comm.size();
    let nu = n as usize;
    util::check_type(call, "recvtype", recvtype)?;
    check_v(
        call,
        "recvcounts",
        recvcounts,
        "rdispls",
        rdispls,
        n,
        recvtype,
    )?;
    let recv = Side {
        counts: recvcounts,
        offsets: rdispls[..nu]
            .iter()
            .map(|&d| d * recvtype.extent())
            .collect(),
        types: vec![recvtype; nu],
    };
    let send = if sendbuf.is_some() {
        util::check_type(call, "sendtype", sendtype)?;
        check_v(
            call,
            "sendcounts",
            sendcounts,
            "sdispls",
            sdispls,
            n,
            sendtype,
        )?;
        Side {
            counts: sendcounts,
            offsets: sdispls[..nu]
                .iter()
                .map(|&d| d * sendtype.extent())
                .collect(),
            types: vec![sendtype; nu],
        }
    } else {
        Side {
            counts: recvcounts,
            offsets: Vec::new(),
            types: Vec::new(),
        }
    };
    schedule_w(call, sendbuf, &send, recvbuf, &recv, comm)
}

/// The shared-memory path of a blocking alltoallv, if it takes it (`None`: run
/// the schedule, which also reports any argument error). `layouts`: both sides'
/// blocks, checked against their descriptors.
fn alltoallv_shm(
    send: Option<&SendBuf<'_, '_>>,
    recv: &mut RecvBuf<'_, '_>,
    layouts: (VLayout<'_>, VLayout<'_>),
    comm: &Comm,
) -> Result<Option<()>> {
    const CALL: &str = "MPI_Alltoallv";
    let (n, me) = (comm.size(), comm.rank() as usize);
    // In place (every rank or none) keeps the schedule.
    let Some(send) = send.filter(|_| !comm.is_inter()) else {
        return Ok(None);
    };
    let (sendtype, recvtype) = (
        super::api::dt(send.datatype()),
        super::api::dt(recv.datatype()),
    );
    let (sl, rl) = layouts;
    let (sendcounts, recvcounts) = (sl.counts(), rl.counts());
    // The layouts hold `n` counts a side, and every non-empty block inside its
    // descriptor (`VLayout::check`): no count exceeds the descriptor's, so one
    // overflow check of the descriptor's count per side covers every block
    // (`check_v` checked each block's, ~220 instructions a 2-rank call; a
    // descriptor that fails it only declines the path: the schedule checks
    // every block and names the one at fault).
    let checked = util::check_type(CALL, "recvtype", recvtype).is_ok()
        && util::check_type(CALL, "sendtype", sendtype).is_ok()
        && util::check_count(CALL, "recvcounts", recv.count(), recvtype).is_ok()
        && util::check_count(CALL, "sendcounts", send.count(), sendtype).is_ok()
        && sendcounts.len() == n as usize
        && recvcounts.len() == n as usize
        && util::packed_len(sendcounts[me], sendtype) == util::packed_len(recvcounts[me], recvtype);
    if !checked {
        return Ok(None);
    }
    let want = super::shm::want(
        super::select::forced_op(super::select::Op::ALLTOALLV)?,
        true,
    );
    let Some(sess) = super::shm::acquire_made(comm, want)? else {
        return Ok(None);
    };
    super::select::ran_shm(super::select::Op::ALLTOALLV);
    super::shm::alltoallv(sess, comm, CALL, (send, sl), (recv, rl)).map(Some)
}

/// MPI_Alltoallv. `send == None` is MPI_IN_PLACE. Block `j` of each side is
/// `counts[j]` elements at element `displs[j]` of its descriptor (checked here,
/// once: [`VLayout::check`]).
pub(crate) fn alltoallv(
    send: Option<SendBuf<'_, '_>>,
    sendcounts: &[usize],
    sdispls: &[isize],
    mut recv: RecvBuf<'_, '_>,
    recvcounts: &[usize],
    rdispls: &[isize],
    comm: &Comm,
) -> Result<()> {
    const CALL: &str = "MPI_Alltoallv";
    let n = comm.peer_group_size().max(0) as usize;
    let sl = match &send {
        Some(s) => Some(VLayout::check(
            CALL,
            "sendbuf",
            "sendcounts",
            "sdispls",
            s.count(),
            sendcounts,
            sdispls,
            n,
        )?),
        None => None,
    };
    let rl = VLayout::check(
        CALL,
        "recvbuf",
        "recvcounts",
        "rdispls",
        recv.count(),
        recvcounts,
        rdispls,
        n,
    )?;
    // In place: the blocks are read from the receive buffer, as laid out there.
    let sl = sl.unwrap_or(rl);
    let _diag = crate::diag::coll(CALL, comm, None, 0, None, None)?;
    if let Some(()) = alltoallv_shm(send.as_ref(), &mut recv, (sl, rl), comm)? {
        return Ok(());
    }
    // The descriptors are valid for this blocking call and hold every block the schedule reaches (checked above).
    let b = schedule_v(
        CALL,
        send.as_ref(),
        sendcounts,
        sdispls,
        &recv,
        recvcounts,
        rdispls,
        comm,
    )?;
    super::run(b, CALL)
}

/// MPI_Alltoallv on an intracommunicator rank whose every count is 0 on both
/// sides, not in place (its own blocks: the other ranks may still move data
/// between them), both types checked by the caller except for their commit:
/// what [`alltoallv`] does for such a rank, without the layouts, the descriptors
/// and the C boundary's conversions of the four arrays (a 2-rank zero-count call
/// was ~2,200 instructions, two thirds of them there; bench/PROFILE.md collB33).
/// `Ok(false)`: nothing done, take the general path (a type not committed, whose
/// error the general path reports). Otherwise the hang report's record (every
/// rank keeps its sequence numbers in step), then the shared-memory path's step
/// where the general path takes it (nothing written, nobody waited for:
/// `shm::alltoallv`'s own zero-count case), else the blocking tag its empty
/// schedule takes.
pub fn alltoallv_nothing_here(
    comm: &Comm,
    sendtype: &Datatype,
    recvtype: &Datatype,
) -> Result<bool> {
    const CALL: &str = "MPI_Alltoallv";
    if comm.is_inter() || !sendtype.is_committed() || !recvtype.is_committed() {
        return Ok(false);
    }
    let _diag = crate::diag::coll(CALL, comm, None, 0, None, None)?;
    let want = super::shm::want(
        super::select::forced_op(super::select::Op::ALLTOALLV)?,
        true,
    );
    match super::shm::acquire_made(comm, want)? {
        Some(sess) => {
            super::select::ran_shm(super::select::Op::ALLTOALLV);
            super::shm::alltoallv_nothing_here(sess, comm);
        }
        None => {
            comm.next_blocking_coll_tag();
        }
    }
    Ok(true)
}

/// MPI_Ialltoallv: block `i` of each side is `counts[i]` elements at
/// `displs[i]` (every block checked against its descriptor first),
/// over descriptors lent for `'static` to the request it returns (by the
/// caller's `BufScope`, or made so by the C boundary, MPI's rule: valid until
/// the request completes), which is what keeps the addresses its schedule
/// records valid while it runs.
pub(crate) fn ialltoallv(
    send: Option<SendBuf<'static, '_>>,
    sb: crate::coll::api_move::Blocks<'_>,
    recv: RecvBuf<'static, '_>,
    rb: crate::coll::api_move::Blocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    const CALL: &str = "MPI_Ialltoallv";
    crate::coll::api_move::alltoallv_check(CALL, &send, &sb, &recv, &rb, comm)?;
    let (sc, sd, rc, rd) = (sb.counts, sb.displs, rb.counts, rb.displs);
    super::start(schedule_v(
        CALL,
        send.as_ref(),
        sc,
        sd,
        &recv,
        rc,
        rd,
        comm,
    )?)
}

/// Alltoallw's schedule over its per-peer block lists (`send: None` is MPI_IN_PLACE).
fn schedule_w_args(
    call: &str,
    send: Option<&SendBlocks<'_, '_>>,
    recv: &RecvBlocks<'_, '_>,
    comm: &Comm,
) -> Result<Builder> {
    let nu = comm.peer_group_size() as usize;
    let (recvcounts, rdispls, recvtypes) = (recv.counts(), recv.displs(), recv.types());
    check_w(call, "recv", recvcounts, rdispls, recvtypes, nu)?;
    if let Some(s) = send {
        check_w(call, "send", s.counts(), s.displs(), s.types(), nu)?;
    }
    if comm.is_inter() {
        let Some(send) = send else {
            return Err(super::inter::no_in_place(call, "sendbuf"));
        };
        return Ok(super::inter::alltoallw(send, recv, comm));
    }
    let recv_side = Side {
        counts: recvcounts,
        offsets: rdispls[..nu].to_vec(),
        types: recvtypes[..nu].iter().collect(),
    };
    let send_side = match send {
        Some(s) => Side {
            counts: s.counts(),
            offsets: s.displs()[..nu].to_vec(),
            types: s.types()[..nu].iter().collect(),
        },
        None => Side {
            counts: recvcounts,
            offsets: Vec::new(),
            types: Vec::new(),
        },
    };
    let (sendbuf, recvbuf) = (send.map(|s| s.base()), recv.base());
    schedule_w(call, sendbuf, &send_side, recvbuf, &recv_side, comm)
}

/// MPI_Alltoallw over per-peer block lists (each peer's count, byte displacement
/// and datatype, on each side); `send: None` is MPI_IN_PLACE.
pub(crate) fn alltoallw(
    send: Option<&SendBlocks<'_, '_>>,
    recv: &RecvBlocks<'_, '_>,
    comm: &Comm,
) -> Result<()> {
    let _diag = crate::diag::coll("MPI_Alltoallw", comm, None, 0, None, None)?;
    super::run(
        schedule_w_args("MPI_Alltoallw", send, recv, comm)?,
        "MPI_Alltoallw",
    )
}

/// MPI_Ialltoallw: as [`alltoallw`], the blocks lent for `'static` (kept valid by
/// the caller's scope until the request completes).
pub(crate) fn ialltoallw(
    send: Option<&SendBlocks<'static, '_>>,
    recv: &RecvBlocks<'static, '_>,
    comm: &Comm,
) -> Result<Request> {
    super::start(schedule_w_args("MPI_Ialltoallw", send, recv, comm)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crowded table names algorithms of the table that run, and picks Bruck
    /// exactly where the other does: ranks whose views of crowding differ must
    /// still run Bruck together or not at all (linear and pairwise mix).
    #[test]
    fn crowded_default_runs_and_agrees_on_bruck() {
        for ranks in 1..=17 {
            for bytes in [1, 8, 255, 256, 257, 4096, 32 * 1024 - 1, 32 * 1024, 1 << 22] {
                let s = Shape::new(ranks, bytes);
                let (plain, crowded) = ((TABLE.default)(&s), (TABLE_CROWDED.default)(&s));
                let a = TABLE_CROWDED
                    .get(crowded)
                    .unwrap_or_else(|| panic!("{crowded} is not an alltoall algorithm"));
                assert!((a.runs)(&s), "{crowded} does not run on {s:?}");
                assert_eq!(plain == "bruck", crowded == "bruck", "{s:?}");
            }
        }
        TABLE_CROWDED.validate().unwrap();
    }
}
