//! MPI_Allgather / MPI_Iallgather and MPI_Allgatherv / MPI_Iallgatherv.
//!
//! Selection for allgather (MPICH's defaults, on total bytes = n * block):
//! recursive doubling below 512 KiB on power-of-two sizes, Bruck below 80 KiB on
//! other sizes, ring otherwise. `recursive_doubling` forced on a non-power-of-two
//! size runs Bruck (it needs a power of two). Allgatherv uses the ring
//! ([`V_TABLE_CROWDED`]: recursive doubling, a message per block, on a crowded
//! host from 8 ranks).
//! `shm` (blocking allgather on communicators within one host, through a shared
//! area, see `coll/shm`) is chosen up to [`SHM_MAX`] bytes per block
//! ([`SHM_MAX_CROWDED`] where the host has more ranks than cores).
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
/// On 2 ranks the alternative is one exchange of point-to-point messages, which
/// from 8 KiB are pulled by `process_vm_readv` (1.3-1.9 us a read on this VM
/// before it copies anything; RESULTS.md's quiet pass: 8 KiB 3.56 us against
/// 0.58 for 2 KiB through the area, MPICH 2.50), so blocks up to 8 KiB take the
/// area (bench/PROFILE.md collR34).
pub const SHM_MAX_2: usize = 8 * 1024;
/// [`SHM_MAX`] where the area's ranks outnumber the host's cores (rank 0's
/// view, the same on every rank; `OXMPI_ALLGATHER_SHM_MAX_CROWDED` overrides
/// it): the area's one synchronization a step beats recursive doubling's
/// point-to-point rounds up to 128 KiB blocks there (4 and 8 ranks on 2
/// cores, interleaved, unprivileged: 8 ranks 429-963 us against 935-1,273,
/// 4 ranks 100-124 against 262-996; at 512 KiB neither wins every round;
/// bench/PROFILE.md, collL37).
pub const SHM_MAX_CROWDED: usize = 128 * 1024;

/// [`SHM_MAX_CROWDED`], or its override (read once).
fn shm_max_crowded() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        std::env::var("OXMPI_ALLGATHER_SHM_MAX_CROWDED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(SHM_MAX_CROWDED)
    })
}
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
        Algorithm {
            name: "recursive_doubling",
            applies: "power-of-two sizes (one message per block)",
            runs: |s| s.ranks & (s.ranks - 1) == 0,
            instead: Some("ring"),
        },
    ],
    default: |_| "ring",
};

/// [`V_TABLE`] where the communicator's shared area says its host has more
/// ranks than cores: allgather's crowded rule ([`TABLE_CROWDED`]), recursive
/// doubling on powers of two from 8 ranks, for blocks beyond the shared-memory
/// path. The choice reads only the size and the area (rank 0's view), the same
/// on every rank; the displacements, which may differ between ranks, only place
/// the blocks.
pub(crate) static V_TABLE_CROWDED: Table = Table {
    op: "allgatherv",
    algorithms: V_TABLE.algorithms,
    default: |s| {
        if crowded_doubles(s) {
            "recursive_doubling"
        } else {
            "ring"
        }
    },
};

/// The crowded-host rule both tables share: recursive doubling on a power of
/// two from 8 ranks.
fn crowded_doubles(s: &Shape) -> bool {
    s.ranks >= 8 && s.ranks & (s.ranks - 1) == 0
}

pub const LONG_MSG: usize = 512 * 1024;
pub const SHORT_MSG: usize = 80 * 1024;

/// [`TABLE`] where the communicator's shared area says its host has more ranks
/// than cores ([`super::shm::crowded`], rank 0's view, so every rank agrees:
/// ring and recursive doubling do not mix): recursive doubling at every size
/// on a power of two from 8 ranks. Each of the ring's n - 1 steps waits for
/// both neighbours to hold a core; recursive doubling has log2 n steps
/// (collC29 in bench/PROFILE.md: 8 ranks on 2 cores, 512 KiB blocks 1.7-1.9
/// against 2.1-2.4 ms, 2 MiB 11.5-13.7 against 15.0-19.0; at 4 ranks neither
/// wins at every size, so the default stays).
pub(crate) static TABLE_CROWDED: Table = Table {
    op: "allgather",
    algorithms: TABLE.algorithms,
    default: |s| {
        if crowded_doubles(s) {
            "recursive_doubling"
        } else {
            (TABLE.default)(s)
        }
    },
};

fn select(n: i32, total: usize, crowded: bool) -> Result<&'static str> {
    // `shm` serves blocking calls only; schedules then get the automatic choice.
    let table = if crowded { &TABLE_CROWDED } else { &TABLE };
    super::select::choose("allgather", table, &Shape::new(n, total))
}

/// An all-to-all collective's descriptors as its schedule records them: the send
/// address (`None`: MPI_IN_PLACE), elements per send block (0 for the v forms, which
/// have counts per block) and datatype, the receive
/// address and datatype (MPI_BYTE for a descriptor not given).
pub(super) struct Args<'d> {
    pub(super) send: Option<*const u8>,
    pub(super) sendcount: usize,
    pub(super) sendtype: &'d Datatype,
    pub(super) recv: *mut u8,
    pub(super) recvtype: &'d Datatype,
}

impl<'d> Args<'d> {
    /// `send`'s and `recv`'s parts, `sendcount` elements per send block.
    pub(super) fn of(
        send: Option<&SendBuf<'_, 'd>>,
        sendcount: usize,
        recv: &RecvBuf<'_, 'd>,
    ) -> Args<'d> {
        Args {
            send: send.map(|s| s.ptr()),
            sendcount,
            sendtype: super::api::dt(send.and_then(|s| s.datatype())),
            recv: recv.ptr(),
            recvtype: super::api::dt(recv.datatype()),
        }
    }
}

/// An allgather(v)'s arguments after its layout check (`recvcounts: None`: `n`
/// blocks of `recvcount`), blocking or not; the send block is all of `send`.
fn args<'d>(
    call: &str,
    send: &Option<SendBuf<'_, 'd>>,
    recv: &RecvBuf<'_, 'd>,
    recvcounts: Option<&[usize]>,
    displs: &[isize],
    recvcount: usize,
    comm: &Comm,
) -> Result<Args<'d>> {
    crate::coll::api_move::allgather_check(call, recv, recvcounts, displs, recvcount, comm)?;
    let sendcount = send.as_ref().map_or(0, |s| s.count());
    Ok(Args::of(send.as_ref(), sendcount, recv))
}

/// The schedule of an allgather over these addresses: it only records them (nothing
/// is read or written here); the caller keeps the buffers valid, holding the
/// blocks the arguments name, until it completes (a blocking entry point runs it
/// before returning, over its checked descriptors).
fn schedule(call: &str, a: &Args<'_>, recvcount: usize, comm: &Comm) -> Result<Builder> {
    let (sendbuf, sendcount, sendtype) = (a.send, a.sendcount, a.sendtype);
    let (recvbuf, recvtype) = (a.recv, a.recvtype);
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
    let algo = select(n, blk * n as usize, super::shm::crowded(comm))?;
    let mut b = Builder::new(comm);
    if blk == 0 {
        // Zero-byte blocks (on every rank: the signatures match): no communication.
        return Ok(b);
    }
    let total = recvcount * n as usize;
    let out = util::packed_output(&mut b, recvbuf, total, recvtype);
    let own = out.sub(rank as usize * blk, blk);
    // A contiguous send block is sent from where it is, and the algorithm
    // copies it to its place in `out` after starting its first exchange (off
    // the critical path: on 2 ranks the whole allgather is that exchange).
    let src = match sendbuf {
        Some(p) if n > 1 && sendtype.is_contiguous() => {
            Some(util::packed_input(&mut b, p, sendcount, sendtype))
        }
        Some(p) => {
            util::pack_into(&mut b, p, sendcount, sendtype, own);
            None
        }
        None if !recvtype.is_contiguous() => {
            let at = util::elem_ptr(recvbuf, (rank as usize * recvcount) as isize, recvtype);
            util::pack_into(&mut b, at, recvcount, recvtype, own);
            None
        }
        None => None,
    };
    if n > 1 {
        match algo {
            "ring" => {
                let blocks: Vec<Slice> = (0..n as usize).map(|i| out.sub(i * blk, blk)).collect();
                ring::build(&mut b, rank, n, &blocks, src);
            }
            "bruck" => bruck::build(&mut b, rank, n, out, blk, src),
            _ => recursive_doubling::build(&mut b, rank, n, out, blk, src),
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
    const CALL: &str = "MPI_Allgather";
    let a = args(CALL, &send, &recv, None, &[], recvcount, comm)?;
    let (sendbuf, sendcount, sendtype, recvtype) = (a.send, a.sendcount, a.sendtype, a.recvtype);
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
        let forced = super::select::forced_op(super::select::Op::ALLGATHER)?;
        let (lo, hi) = match n {
            2 => (SHM_MAX_2, SHM_MAX_2),
            _ => (SHM_MAX, shm_max_crowded().max(SHM_MAX)),
        };
        if let Some(sess) = super::shm::acquire(comm, super::shm::want(forced, blk <= hi))? {
            // The area's view of crowding is rank 0's, the same on every rank.
            let max = if sess.oversubscribed() { hi } else { lo };
            if forced.is_some() || blk <= max {
                super::shm::allgather(sess, send.as_ref(), &mut recv, recvcount, None, blk);
                super::select::ran_shm(super::select::Op::ALLGATHER);
                return Ok(());
            }
        }
    }
    // The descriptors are valid for this blocking call, and `recv` holds the `n * recvcount` elements the schedule reaches (checked above).
    super::run(schedule(CALL, &a, recvcount, comm)?, CALL)
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
    let a = args(CALL, &send, &recv, None, &[], recvcount, comm)?;
    super::start(schedule(CALL, &a, recvcount, comm)?)
}

/// The schedule of an allgatherv over these addresses: it only records them (nothing
/// is read or written here); the caller keeps the buffers valid, holding the
/// blocks the arguments name, until it completes (a blocking entry point runs it
/// before returning, over its checked descriptors).
fn schedule_v(
    call: &str,
    a: &Args<'_>,
    recvcounts: &[usize],
    displs: &[isize],
    comm: &Comm,
) -> Result<Builder> {
    let (sendbuf, sendcount, sendtype) = (a.send, a.sendcount, a.sendtype);
    let (recvbuf, recvtype) = (a.recv, a.recvtype);
    if comm.is_inter() {
        return super::inter::allgatherv(
            call, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
        );
    }
    let table = if super::shm::crowded(comm) {
        &V_TABLE_CROWDED
    } else {
        &V_TABLE
    };
    let algo = super::select::choose("allgatherv", table, &Shape::new(comm.size(), 0))?;
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
    // As allgather's: a contiguous send block is sent from where it is and
    // copied to its place after the first exchange starts.
    let src = match sendbuf {
        Some(p) if n > 1 && sendtype.is_contiguous() => {
            Some(util::packed_input(&mut b, p, sendcount, sendtype))
        }
        Some(p) => {
            util::pack_into(&mut b, p, sendcount, sendtype, blocks[r]);
            None
        }
        None => None,
    };
    if n > 1 {
        match algo {
            "recursive_doubling" => recursive_doubling::build_blocks(&mut b, rank, n, &blocks, src),
            _ => ring::build(&mut b, rank, n, &blocks, src),
        }
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
    const CALL: &str = "MPI_Allgatherv";
    let a = args(CALL, &send, &recv, Some(recvcounts), displs, 0, comm)?;
    let (sendbuf, sendcount, sendtype, recvtype) = (a.send, a.sendcount, a.sendtype, a.recvtype);
    let n = comm.size() as usize;
    // Zero-byte blocks everywhere (every rank has the same `recvcounts`; the
    // displacements, which may differ, do not matter): nothing to move, and no
    // rank takes a tag (none runs a schedule for these counts).
    let empty = !comm.is_inter()
        && recvcounts.len() >= n
        && util::check_type(CALL, "recvtype", recvtype).is_ok()
        && recvcounts[..n]
            .iter()
            .all(|&c| c.checked_mul(recvtype.size()) == Some(0))
        && (sendbuf.is_none()
            || (util::check_type(CALL, "sendtype", sendtype).is_ok()
                && util::check_count(CALL, "sendcount", sendcount, sendtype).is_ok()
                && util::packed_len(sendcount, sendtype) == 0));
    if super::nothing_to_move(empty) {
        return Ok(());
    }
    let _diag = crate::diag::coll(CALL, comm, None, sendcount, Some(sendtype), None)?;
    if empty {
        return Ok(());
    }
    // Equal counts (what OSU's osu_allgatherv and many programs pass):
    // allgather's shared-memory path, each block placed at its displacement. The
    // choice reads only what every rank shares (the counts, the block's size);
    // the displacements are rank-local, so a choice that looked at them could
    // send ranks down different paths and hang them.
    let c = recvcounts.first().copied().unwrap_or(0);
    let uniform = !comm.is_inter()
        && recvcounts.len() >= n
        && displs.len() >= n
        && recvcounts[..n].iter().all(|&r| r == c)
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
    if blk > 0 {
        let forced = super::select::forced_op(super::select::Op::ALLGATHERV)?;
        if let Some(sess) = super::shm::acquire(
            comm,
            super::shm::want(forced, blk <= if n == 2 { SHM_MAX_2 } else { SHM_MAX }),
        )? {
            // Block i at displs[i] (inside `recv`: `args` checked the layout).
            super::shm::allgather(sess, send.as_ref(), &mut recv, c, Some(displs), blk);
            super::select::ran_shm(super::select::Op::ALLGATHERV);
            return Ok(());
        }
    }
    // The descriptors are valid for this blocking call, and `recv` holds every block the schedule reaches (checked above).
    super::run(schedule_v(CALL, &a, recvcounts, displs, comm)?, CALL)
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
    let a = args(CALL, &send, &recv, Some(recvcounts), displs, 0, comm)?;
    super::start(schedule_v(CALL, &a, recvcounts, displs, comm)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crowded table names allgather algorithms that run where it picks
    /// them, and differs from the default only on powers of two from 8 ranks.
    #[test]
    fn crowded_default_runs_where_it_picks() {
        for ranks in 1..=33 {
            for bytes in [1, 8, 4096, SHORT_MSG - 1, SHORT_MSG, LONG_MSG, 1 << 24] {
                let s = Shape::new(ranks, bytes);
                let (plain, crowded) = ((TABLE.default)(&s), (TABLE_CROWDED.default)(&s));
                let a = TABLE_CROWDED
                    .get(crowded)
                    .unwrap_or_else(|| panic!("{crowded} is not an allgather algorithm"));
                assert!((a.runs)(&s), "{crowded} does not run on {s:?}");
                if ranks < 8 || ranks & (ranks - 1) != 0 {
                    assert_eq!(plain, crowded, "{s:?}");
                } else {
                    assert_eq!(crowded, "recursive_doubling", "{s:?}");
                }
            }
        }
        TABLE_CROWDED.validate().unwrap();
    }

    /// Allgatherv's crowded table: recursive doubling (which runs there) on
    /// powers of two from 8 ranks, the ring elsewhere; a forced
    /// `recursive_doubling` on other sizes runs the ring.
    #[test]
    fn v_crowded_default_runs_where_it_picks() {
        for ranks in 1..=33 {
            let s = Shape::new(ranks, 0);
            let crowded = (V_TABLE_CROWDED.default)(&s);
            let a = V_TABLE_CROWDED.get(crowded).unwrap();
            assert!((a.runs)(&s), "{crowded} does not run on {s:?}");
            assert_eq!((V_TABLE.default)(&s), "ring");
            let pof2_from_8 = ranks >= 8 && ranks & (ranks - 1) == 0;
            assert_eq!(crowded == "recursive_doubling", pof2_from_8, "{s:?}");
            let forced = V_TABLE.resolve("recursive_doubling", &s);
            let pof2 = ranks & (ranks - 1) == 0;
            assert_eq!(forced, if pof2 { "recursive_doubling" } else { "ring" });
        }
        V_TABLE.validate().unwrap();
        V_TABLE_CROWDED.validate().unwrap();
    }
}
