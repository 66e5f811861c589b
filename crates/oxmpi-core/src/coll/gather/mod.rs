//! MPI_Gather / MPI_Igather and MPI_Gatherv / MPI_Igatherv.
//!
//! Selection for gather: binomial tree (MPICH's default), except for large
//! blocks (≥ 64 KiB) on small communicators (≤ 8 ranks), where the root's posting
//! every receive at once (linear) avoids the tree's forwarding copies. Gatherv is linear (non-roots do not know the other
//! ranks' counts, which a tree would need).
//!
//! MPI_IN_PLACE (`sendbuf == None`) is allowed only at the root: its block is
//! already in `recvbuf` at its rank's position; `sendcount`/`sendtype` are ignored.
mod binomial;
mod linear;

use super::sched::{Builder, Slice};
use super::util;
use crate::buf::elems::VLayout;
use crate::buf::{RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};
use crate::request::Request;

use super::select::{always, never, Algorithm, Shape, Table};

/// Gather's algorithms (see [`super::select`]); `bytes`: one rank's block.
pub(crate) static TABLE: Table = Table {
    op: "gather",
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
            applies: "blocking gather within one host, blocks up to 64 KiB (4 KiB on 2 ranks)",
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

/// Gatherv's: only the root knows every count, so no tree.
pub(crate) static V_TABLE: Table = Table {
    op: "gatherv",
    algorithms: &[
        Algorithm {
            name: "linear",
            applies: "any counts",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "shm",
            applies: "blocking gatherv within one host (blocks over 64 KiB point-to-point)",
            runs: never,
            instead: None,
        },
    ],
    default: |_| "linear",
};

/// Largest block (bytes) a gather (`scatter` false) or scatter on `n` ranks sends
/// through the shared area by default (the area takes up to a slot half, 64 KiB,
/// when forced). The area costs two copies a block, the root's all in a row; a
/// message from 8 KiB on (eager up to 16 KiB, then copied once by the receiver)
/// costs one. Measured (bench/PROFILE.md collA28, us, area / linear): 2 ranks,
/// gather 8 KiB 1.49 / 1.32, 32 KiB 4.51 / 3.13, scatter 2 KiB 0.78 / 0.90, 8 KiB
/// 1.56 / 1.44, 32 KiB 4.43 / 2.81; scatter on 4 ranks 8 KiB 2.08 / 1.59, 32 KiB
/// 7.03 / 6.50, on 8 ranks 2 KiB 1.58 / 2.92, 32 KiB 15.3 / 9.2. A gather on more
/// than 2 ranks keeps the area to 64 KiB (4 ranks, 32 KiB: 5.42 against 8.52).
pub const fn rooted_shm_max(scatter: bool, n: i32) -> usize {
    if n <= 2 {
        DIRECT_MIN_2 - 1
    } else if scatter {
        ROOTED_SHM_SMALL
    } else {
        super::shm::CHUNK
    }
}

/// On 2 ranks, blocks from this size go by single copies (gather below 128 KiB,
/// scatter at every size) and smaller ones through the area. On this EPYC VM a
/// `process_vm_readv`/`writev` costs 1.3-1.9 us before it copies anything
/// (bench/PROFILE.md med27, collR34), which an 8 KiB block's two copies through
/// the area do not: RESULTS.md's quiet pass had 2-rank scatter and gather of
/// 8 KiB by single copies at 2.50 / 2.61 us against bcast's 0.79 through the
/// area (MPICH 1.30 / 1.17).
pub const DIRECT_MIN_2: usize = 16 * 1024;

/// Whether blocks of `blk` bytes on `n` ranks are gathered by single copies
/// (every other rank writes its block into the root's receive buffer,
/// `coll/shm/direct.rs`) where the members may copy between each other's memory:
/// from [`DIRECT_MIN_2`] below 128 KiB on 2 ranks (where the message's copy,
/// shared by sender and receiver, wins above), from 32 KiB on more. Measured
/// (bench/PROFILE.md collA29, on an earlier VM where a cross-memory read was cheaper, us, direct / area or linear / Open MPI): 2 ranks
/// 8 KiB 1.12 / 1.39 / 1.28, 32 KiB 2.47 / 3.18 / 3.00, 128 KiB 7.59 / 6.87 /
/// 7.06; 4 ranks 8 KiB 2.56 / 2.09 / 6.14, 32 KiB 5.33 / 5.66 / 6.26, 512 KiB
/// 58 / 186 / 143, 4 MiB 987 / 1,313 / 1,092; 8 ranks 128 KiB 19.4 / 34.6 / 116.
pub const fn direct(n: i32, blk: usize) -> bool {
    match n {
        ..=2 => blk >= DIRECT_MIN_2 && blk < 128 * 1024,
        _ => blk >= 32 * 1024,
    }
}

/// [`rooted_shm_max`] of scatters on more than 2 ranks.
pub const ROOTED_SHM_SMALL: usize = 4 * 1024;

/// Blocks of at least this many bytes on communicators of at most
/// [`LINEAR_MAX_PROCS`] ranks use the linear algorithm.
pub const LINEAR_MIN_BLOCK: usize = 64 * 1024;
pub const LINEAR_MAX_PROCS: i32 = 8;

fn select(n: i32, blk: usize) -> Result<&'static str> {
    super::select::choose("gather", &TABLE, &Shape::new(n, blk))
}

pub(crate) fn in_place_not_at_root(call: &str) -> MpiError {
    MpiError::arg(
        ErrorClass::Buffer,
        call,
        "sendbuf",
        "MPI_IN_PLACE is only valid at the root",
    )
}

pub(crate) fn size_mismatch(call: &str, what: &str, sent: usize, recvd: usize) -> MpiError {
    MpiError::new(
        ErrorClass::Truncate,
        format!(
            "{call}: {what}: {sent} bytes sent but {recvd} bytes expected (type signatures differ)"
        ),
    )
}

/// One side of a rooted collective's arguments: the buffer's presence (absent
/// is MPI_IN_PLACE), its count and datatype, and their argument names; for the
/// root's side of a v form, its per-rank counts and displacements instead of a count.
pub(crate) struct Side<'a> {
    pub present: bool,
    pub count: usize,
    pub dt: &'a Datatype,
    pub count_arg: &'static str,
    pub type_arg: &'static str,
    pub v: Option<(&'a [usize], &'a [isize])>,
}

impl<'a> Side<'a> {
    /// The send buffer's side (`sendcount`, `sendtype` in error messages).
    pub fn send(present: bool, count: usize, dt: &'a Datatype) -> Self {
        Side {
            present,
            count,
            dt,
            count_arg: "sendcount",
            type_arg: "sendtype",
            v: None,
        }
    }

    /// The root's send side of a v form (scatterv): `sendcounts`, `displs`.
    pub fn send_v(counts: &'a [usize], displs: &'a [isize], dt: &'a Datatype) -> Self {
        Side {
            present: true,
            count: 0,
            dt,
            count_arg: "sendcounts",
            type_arg: "sendtype",
            v: Some((counts, displs)),
        }
    }

    /// The receive buffer's side (`recvcount`, `recvtype` in error messages).
    pub fn recv(present: bool, count: usize, dt: &'a Datatype) -> Self {
        Side {
            present,
            count,
            dt,
            count_arg: "recvcount",
            type_arg: "recvtype",
            v: None,
        }
    }

    /// The root's receive side of a v form (gatherv): `recvcounts`, `displs`.
    pub fn recv_v(counts: &'a [usize], displs: &'a [isize], dt: &'a Datatype) -> Self {
        Side {
            present: true,
            count: 0,
            dt,
            count_arg: "recvcounts",
            type_arg: "recvtype",
            v: Some((counts, displs)),
        }
    }
}

/// What gather and scatter decide before any schedule, on an intracommunicator:
/// nothing to do (`Some(Rooted::Nothing)`: zero-byte blocks on every rank, whose
/// signatures match), or a shared-memory session for blocks of `blk` bytes
/// (`Some(Rooted::Shm)`), or `None`: build the schedule, which also reports any
/// argument error (this step never does, so the error comes from one place).
/// The v forms (`at_root.v`) only ever get a session (`blk`: the root's own
/// block): one rank's empty block says nothing of the others', so they use an
/// area made already unless shm is forced ([`super::shm::acquire_made`]).
/// `blk`: [`rooted_blk`]'s answer; `v`: a v form. Always inlined: out of
/// line, its answer (a session, by value) was copied out through
/// `Result<Option<_>>` and its own branches cost ~90 instructions a small
/// scatter or gather (bench/PROFILE.md collA33).
#[inline(always)]
pub(crate) fn rooted_shortcut(
    key: super::select::Op,
    comm: &Comm,
    blk: Option<usize>,
    v: bool,
) -> Result<Option<Rooted<'_>>> {
    let Some(blk) = blk else {
        return Ok(None);
    };
    if v {
        let want = super::shm::want(super::select::forced_op(key)?, true);
        return Ok(super::shm::acquire_made(comm, want)?.map(|sess| {
            super::select::ran_shm(key);
            Rooted::Shm {
                sess,
                blk,
                direct: false,
            }
        }));
    }
    if blk == 0 {
        return Ok(Some(Rooted::Nothing));
    }
    let scatter = key == super::select::Op::SCATTER;
    // A scatter's large blocks: single copies where the members may copy
    // between each other's memory (known once the area exists).
    let n = comm.size();
    let direct = match scatter {
        true => blk >= super::scatter::direct_min(n),
        false => direct(n, blk),
    };
    let auto = blk <= rooted_shm_max(scatter, n) || direct;
    let want = super::shm::want(super::select::forced_op(key)?, auto);
    let fits = super::shm::rooted_fits(blk);
    if !fits && want == super::shm::Want::No {
        return Ok(None);
    }
    let Some(sess) = super::shm::acquire(comm, want)? else {
        return Ok(None);
    };
    // The same answer on every rank: `direct()` was agreed at set-up.
    let direct = sess.direct() && (direct || !fits);
    if !direct && (!fits || (want == super::shm::Want::Auto && blk > rooted_shm_max(scatter, n))) {
        return Ok(None);
    }
    super::select::ran_shm(key);
    Ok(Some(Rooted::Shm { sess, blk, direct }))
}

/// The packed bytes of one block of a gather or scatter on an intracommunicator
/// whose arguments pass [`check_rooted`]; `None` otherwise (the schedule then
/// reports the error).
#[inline]
pub(crate) fn rooted_blk(
    call: &str,
    comm: &Comm,
    root: i32,
    local: &Side,
    at_root: &Side,
    local_sends: bool,
) -> Option<usize> {
    if comm.is_inter() {
        return None;
    }
    check_rooted(call, comm, root, local, at_root, local_sends).ok()
}

/// Whether a gather or scatter (not a v form) whose block is `blk` ([`rooted_blk`])
/// returns at once: zero-byte blocks on every rank (the type signatures match),
/// so no record, selection, session or tag on any rank; checked collectives
/// (`diag::coll_checked`) still meet first.
pub(crate) fn rooted_empty(blk: Option<usize>) -> bool {
    super::nothing_to_move(blk == Some(0))
}

/// See [`rooted_shortcut`].
pub(crate) enum Rooted<'c> {
    Nothing,
    /// The shared path for blocks of `blk` bytes: through the area, or with
    /// `direct` by single copies between the root's buffer and the others'
    /// (`coll/shm/direct.rs`; never for the v forms).
    Shm {
        sess: super::shm::Session<'c>,
        blk: usize,
        direct: bool,
    },
}

/// The checks gather and scatter share: `local` is every rank's own buffer
/// (gather's send side, scatter's receive side), `at_root` the root's buffer of
/// one block per rank. Returns the packed bytes of one block. `local_sends`
/// orients the size-mismatch message (sent, expected).
#[inline]
pub(crate) fn check_rooted(
    call: &str,
    comm: &Comm,
    root: i32,
    local: &Side<'_>,
    at_root: &Side<'_>,
    local_sends: bool,
) -> Result<usize> {
    super::check_root(call, comm, root)?;
    let is_root = comm.rank() == root;
    if local.present {
        util::check_type(call, local.type_arg, local.dt)?;
        util::check_count(call, local.count_arg, local.count, local.dt)?;
    } else if !is_root {
        return Err(in_place_not_at_root(call));
    }
    let n = comm.size();
    let mut root_count = at_root.count;
    if is_root {
        util::check_type(call, at_root.type_arg, at_root.dt)?;
        match at_root.v {
            None => util::check_count(
                call,
                at_root.count_arg,
                at_root.count * n as usize,
                at_root.dt,
            )?,
            Some((counts, displs)) => {
                check_v(
                    call,
                    at_root.count_arg,
                    counts,
                    "displs",
                    displs,
                    n,
                    at_root.dt,
                )?;
                root_count = counts[root as usize];
            }
        }
    }
    let own = util::packed_len(local.count, local.dt);
    let blk = if is_root {
        util::packed_len(root_count, at_root.dt)
    } else {
        own
    };
    if is_root && local.present && own != blk {
        let (sent, expected) = if local_sends { (own, blk) } else { (blk, own) };
        return Err(size_mismatch(call, "the root's own block", sent, expected));
    }
    Ok(blk)
}

/// A rooted gather's arguments after the layout check: the addresses its
/// schedule records (`send: None` is MPI_IN_PLACE; where the receive buffer is
/// not significant, an address never reached) and, at the root of a v form, its
/// blocks' layout, checked against the receive descriptor; the send count and the
/// datatypes (MPI_BYTE for a descriptor not given), as the schedule takes them.
pub(crate) struct GatherArgs<'c, 'd> {
    pub(crate) send: Option<*const u8>,
    pub(crate) recv: *mut u8,
    pub(crate) layout: Option<VLayout<'c>>,
    pub(crate) sendcount: usize,
    pub(crate) sendtype: &'d Datatype,
    pub(crate) recvtype: &'d Datatype,
}

/// The root's buffer of a rooted call, `buf` (its address and capacity in
/// elements; `args`: its name and its counts array's): at the root it is needed
/// (MPI_ERR_BUFFER) and must hold `n` blocks of `count` (`counts: None`) or the
/// v form's blocks, whose checked layout is returned; elsewhere it is not
/// significant: an address never reached.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn root_side<'c>(
    call: &str,
    args: (&str, &str),
    buf: Option<(*mut u8, usize)>,
    counts: Option<&'c [usize]>,
    displs: &'c [isize],
    count: usize,
    root: i32,
    comm: &Comm,
) -> Result<(*mut u8, Option<VLayout<'c>>)> {
    use super::api_move::{at_root, check_uniform, needed, nowhere};
    let (arg, counts_arg) = args;
    if !at_root(comm, root) {
        return Ok((nowhere(), None));
    }
    let Some((p, cap)) = buf else {
        return Err(needed(call, arg));
    };
    let n = comm.peer_group_size().max(0) as usize;
    let layout = match counts {
        None => {
            check_uniform(call, arg, cap, count, n)?;
            None
        }
        Some(c) => Some(VLayout::check(
            call, arg, counts_arg, "displs", cap, c, displs, n,
        )?),
    };
    Ok((p, layout))
}

/// The layout check of a gather (`recvcounts: None`: `n` blocks of `count`) or
/// gatherv (block `j`: `recvcounts[j]` elements at `displs[j]`) on every
/// communicator, blocking or not: at the root (`root`, or MPI_ROOT on an
/// intercommunicator) the receive buffer is needed and must hold every block
/// (MPI_ERR_BUFFER; count and displacement arrays shorter than the group:
/// MPI_ERR_ARG), naming `call` and the argument.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_args<'c, 'd>(
    call: &str,
    send: &Option<SendBuf<'_, 'd>>,
    recv: &Option<RecvBuf<'_, 'd>>,
    recvcounts: Option<&'c [usize]>,
    displs: &'c [isize],
    count: usize,
    root: i32,
    comm: &Comm,
) -> Result<GatherArgs<'c, 'd>> {
    let recv_side = recv.as_ref().map(|r| (r.ptr(), r.count()));
    let recvtype = super::api::dt(recv.as_ref().and_then(|r| r.datatype()));
    let (recv, layout) = root_side(
        call,
        ("recvbuf", "recvcounts"),
        recv_side,
        recvcounts,
        displs,
        count,
        root,
        comm,
    )?;
    // Without a send buffer the schedule either reads the root's block of the
    // receive buffer (in place, checked above) or refuses.
    Ok(GatherArgs {
        send: send.as_ref().map(|s| s.ptr()),
        recv,
        layout,
        sendcount: send.as_ref().map_or(0, |s| s.count()),
        sendtype: super::api::dt(send.as_ref().and_then(|s| s.datatype())),
        recvtype,
    })
}

/// The schedule of a gather over these addresses: it only records them (nothing
/// is read or written here); the caller keeps the buffers valid, holding the
/// blocks the arguments name, until it completes (a blocking entry point runs it
/// before returning, over its checked descriptors).
fn schedule(
    call: &str,
    a: &GatherArgs<'_, '_>,
    recvcount: usize,
    root: i32,
    comm: &Comm,
) -> Result<Builder> {
    let (sendbuf, sendcount, sendtype) = (a.send, a.sendcount, a.sendtype);
    let (recvbuf, recvtype) = (a.recv, a.recvtype);
    if comm.is_inter() {
        return super::inter::gather(
            call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
        );
    }
    let local = Side::send(sendbuf.is_some(), sendcount, sendtype);
    let at_root = Side::recv(true, recvcount, recvtype);
    let blk = check_rooted(call, comm, root, &local, &at_root, true)?;
    let (rank, n) = (comm.rank(), comm.size());
    let is_root = rank == root;
    let algo = select(n, blk)?;
    let mut b = Builder::new(comm);
    if blk == 0 {
        // Zero-byte blocks (on every rank: the signatures match): no communication.
        return Ok(b);
    }
    let total = recvcount * n as usize;
    let out = if is_root {
        Some(util::packed_output(&mut b, recvbuf, total, recvtype))
    } else {
        None
    };
    let inp = match sendbuf {
        Some(p) => util::packed_input(&mut b, p, sendcount, sendtype),
        None => {
            // In place at the root: its block is in recvbuf; for non-contiguous
            // types pack it into the packed output so the final unpack keeps it.
            let o = out.expect("root has an output");
            let own = o.sub(root as usize * blk, blk);
            if !recvtype.is_contiguous() {
                let at = util::elem_ptr(recvbuf, (root as usize * recvcount) as isize, recvtype);
                util::pack_into(&mut b, at, recvcount, recvtype, own);
            }
            own
        }
    };
    match algo {
        "linear" => {
            let blocks: Vec<Slice> = match out {
                Some(o) => (0..n as usize).map(|i| o.sub(i * blk, blk)).collect(),
                None => Vec::new(),
            };
            linear::build(&mut b, rank, n, root, Some(inp), &blocks);
        }
        _ => binomial::build(&mut b, rank, n, root, inp, out, blk),
    }
    if let Some(o) = out {
        util::finish_output(&mut b, o, recvbuf, total, recvtype);
    }
    Ok(b)
}

/// MPI_Gather. `send == None` is MPI_IN_PLACE (root only); the root's `recv`
/// holds `n * recvcount` elements (checked here: the one layout check).
pub(crate) fn gather(
    send: Option<SendBuf<'_, '_>>,
    recv: Option<RecvBuf<'_, '_>>,
    recvcount: usize,
    root: i32,
    comm: &Comm,
) -> Result<()> {
    let a = gather_args("MPI_Gather", &send, &recv, None, &[], recvcount, root, comm)?;
    let (sendcount, sendtype) = (a.sendcount, a.sendtype);
    let local = Side::send(send.is_some(), sendcount, sendtype);
    let at_root = Side::recv(true, recvcount, a.recvtype);
    let blk = rooted_blk("MPI_Gather", comm, root, &local, &at_root, true);
    if rooted_empty(blk) {
        return Ok(());
    }
    let _diag = crate::diag::coll(
        "MPI_Gather",
        comm,
        Some(root),
        sendcount,
        Some(sendtype),
        None,
    )?;
    match rooted_shortcut(super::select::Op::GATHER, comm, blk, false)? {
        Some(Rooted::Nothing) => return Ok(()),
        Some(Rooted::Shm { sess, blk, direct }) => {
            let mut recv = recv;
            return super::shm::gather(
                sess,
                direct,
                send.as_ref(),
                sendtype,
                recv.as_mut(),
                recvcount,
                root as usize,
                blk,
            );
        }
        None => {}
    }
    // The descriptors are valid for this blocking call and hold every block the schedule reaches (checked above).
    let b = schedule("MPI_Gather", &a, recvcount, root, comm)?;
    super::run(b, "MPI_Gather")
}

/// MPI_Igather, as [`gather`] (the same layout check),
/// over descriptors lent for `'static` to the request it returns (by the
/// caller's `BufScope`, or made so by the C boundary, MPI's rule: valid until
/// the request completes), which is what keeps the addresses its schedule
/// records valid while it runs.
pub(crate) fn igather(
    send: Option<SendBuf<'static, '_>>,
    recv: Option<RecvBuf<'static, '_>>,
    recvcount: usize,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    const CALL: &str = "MPI_Igather";
    let a = gather_args(CALL, &send, &recv, None, &[], recvcount, root, comm)?;
    super::start(schedule(CALL, &a, recvcount, root, comm)?)
}

/// Checks the per-rank count and displacement arrays of a v-collective.
pub(crate) fn check_v(
    call: &str,
    counts_arg: &str,
    counts: &[usize],
    displs_arg: &str,
    displs: &[isize],
    n: i32,
    dt: &Datatype,
) -> Result<()> {
    let n = n as usize;
    if counts.len() < n {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            counts_arg,
            format!("has {} entries for {n} ranks", counts.len()),
        ));
    }
    if displs.len() < n {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            displs_arg,
            format!("has {} entries for {n} ranks", displs.len()),
        ));
    }
    for &c in &counts[..n] {
        util::check_count(call, counts_arg, c, dt)?;
    }
    Ok(())
}

/// The schedule of a gatherv over these addresses (as [`schedule`]'s: recorded
/// only; the caller keeps the blocks valid until it completes).
fn schedule_v(
    call: &str,
    a: &GatherArgs<'_, '_>,
    recvcounts: &[usize],
    displs: &[isize],
    root: i32,
    comm: &Comm,
) -> Result<Builder> {
    let (sendbuf, sendcount, sendtype) = (a.send, a.sendcount, a.sendtype);
    let (recvbuf, recvtype) = (a.recv, a.recvtype);
    if comm.is_inter() {
        return super::inter::gatherv(
            call, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
        );
    }
    super::check_root(call, comm, root)?;
    super::select::choose("gatherv", &V_TABLE, &Shape::new(comm.size(), 0))?;
    let (rank, n) = (comm.rank(), comm.size());
    let is_root = rank == root;
    if sendbuf.is_some() {
        util::check_type(call, "sendtype", sendtype)?;
        util::check_count(call, "sendcount", sendcount, sendtype)?;
    } else if !is_root {
        return Err(in_place_not_at_root(call));
    }
    if is_root {
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
        if sendbuf.is_some() {
            let (s, r) = (
                util::packed_len(sendcount, sendtype),
                util::packed_len(recvcounts[root as usize], recvtype),
            );
            if s != r {
                return Err(size_mismatch(call, "the root's own block", s, r));
            }
        }
    }
    let mut b = Builder::new(comm);
    let mut outs = Vec::new();
    if is_root {
        for i in 0..n as usize {
            let at = util::elem_ptr_mut(recvbuf, displs[i], recvtype);
            // In place: the root's block stays untouched (no output slice that
            // a final unpack would write back).
            let o = if i == root as usize && sendbuf.is_none() {
                Slice::user_mut(at, 0)
            } else {
                util::packed_output(&mut b, at, recvcounts[i], recvtype)
            };
            outs.push(o);
        }
    }
    let inp = sendbuf.map(|p| util::packed_input(&mut b, p, sendcount, sendtype));
    linear::build(&mut b, rank, n, root, inp, &outs);
    if is_root {
        for (i, &o) in outs.iter().enumerate() {
            util::finish_output(
                &mut b,
                o,
                util::elem_ptr_mut(recvbuf, displs[i], recvtype),
                recvcounts[i],
                recvtype,
            );
        }
    }
    Ok(b)
}

/// MPI_Gatherv. `send == None` is MPI_IN_PLACE (root only). Block `j` of the
/// root's `recv` is `recvcounts[j]` elements at element `displs[j]` (checked
/// here, once: [`gather_args`]).
pub(crate) fn gatherv(
    send: Option<SendBuf<'_, '_>>,
    recv: Option<RecvBuf<'_, '_>>,
    recvcounts: &[usize],
    displs: &[isize],
    root: i32,
    comm: &Comm,
) -> Result<()> {
    const CALL: &str = "MPI_Gatherv";
    let a = gather_args(CALL, &send, &recv, Some(recvcounts), displs, 0, root, comm)?;
    let (sendcount, sendtype, recvtype) = (a.sendcount, a.sendtype, a.recvtype);
    let _diag = crate::diag::coll(CALL, comm, Some(root), sendcount, Some(sendtype), None)?;
    let local = Side::send(send.is_some(), sendcount, sendtype);
    let at_root = Side::recv_v(recvcounts, displs, recvtype);
    let key = super::select::Op::GATHERV;
    let blk = rooted_blk(CALL, comm, root, &local, &at_root, true);
    if let Some(Rooted::Shm { sess, .. }) = rooted_shortcut(key, comm, blk, true)? {
        let mut recv = recv;
        let recv = recv.as_mut().zip(a.layout);
        return super::shm::gatherv(sess, comm, CALL, send.as_ref(), recv, root as usize);
    }
    // The descriptors are valid for this blocking call and hold every block the schedule reaches (checked above).
    let b = schedule_v(CALL, &a, recvcounts, displs, root, comm)?;
    super::run(b, CALL)
}

/// MPI_Igatherv, as [`gatherv`] (the same checked layout),
/// over descriptors lent for `'static` to the request it returns (by the
/// caller's `BufScope`, or made so by the C boundary, MPI's rule: valid until
/// the request completes), which is what keeps the addresses its schedule
/// records valid while it runs.
pub(crate) fn igatherv(
    send: Option<SendBuf<'static, '_>>,
    recv: Option<RecvBuf<'static, '_>>,
    recvcounts: &[usize],
    displs: &[isize],
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    const CALL: &str = "MPI_Igatherv";
    let a = gather_args(CALL, &send, &recv, Some(recvcounts), displs, 0, root, comm)?;
    super::start(schedule_v(CALL, &a, recvcounts, displs, root, comm)?)
}
