//! MPI_Allreduce / MPI_Iallreduce.
//!
//! Every rank gets a BIT-IDENTICAL result whatever the algorithm: either both
//! partners of an exchange compute `lower op higher` with the same operands in
//! the same roles (recursive doubling), or each result block is computed by one
//! rank and copied to the others (ring, Rabenseifner, reduce + bcast).
//!
//! Algorithms:
//! * `recursive_doubling`: log2 rounds of full exchanges, with MPICH's
//!   non-power-of-two pre/post step. Rank-ordered, any op. Small messages.
//! * `ring`: ring reduce-scatter + ring allgather (2(n-1) steps, ~2m bytes per
//!   rank). Needs a commutative op (block sums accumulate around the ring); for a
//!   non-commutative op it falls back to `recursive_doubling`. Large messages.
//! * `rabenseifner`: recursive halving reduce-scatter + recursive doubling
//!   allgather. Rank-ordered (see reduce/rabenseifner.rs), any op. Medium and large.
//! * `hierarchical`: reduce inside each host, combine among host leaders,
//!   broadcast inside each host (commutative ops; chosen when the communicator
//!   spans several hosts and the message is below the ring's range).
//! * `reduce_bcast`: in-order binomial reduce to rank 0, then a binomial bcast.
//!   Any op; chosen for non-commutative ops whose elements are too few to split
//!   into blocks (count < pof2).
//! * `shm` (blocking allreduce on communicators within one host): contributions
//!   in a shared area, folded in rank order (see `coll/shm`); any op. Chosen at
//!   every size from 3 ranks on, up to [`SHM_MAX_2`] bytes on 2.
mod hierarchical;
mod rabenseifner;
mod recursive_doubling;
mod reduce_bcast;
mod ring;

use super::api;
use super::reduce::{check_args, pof2, Io, Red};
use super::sched::{Builder, Schedule};
use crate::buf::{BufScope, RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::Result;
use crate::op::Op;
use crate::request::Request;

use super::select::{always, commutative, never, Algorithm, Shape, Table};

/// Allreduce's algorithms (see [`super::select`]); `bytes`: the message (count
/// x the datatype's size).
pub(crate) static TABLE: Table = Table {
    op: "allreduce",
    algorithms: &[
        Algorithm {
            name: "recursive_doubling",
            applies: "any op",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "ring",
            applies: "commutative ops",
            runs: commutative,
            instead: Some("recursive_doubling"),
        },
        Algorithm {
            name: "rabenseifner",
            applies: "any op",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "reduce_bcast",
            applies: "any op",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "hierarchical",
            applies: "commutative ops (communicators over several hosts)",
            runs: commutative,
            instead: Some("recursive_doubling"),
        },
        Algorithm {
            name: "shm",
            applies: "blocking allreduce within one host",
            runs: never,
            instead: None,
        },
    ],
    default: |s| {
        if s.commutative && s.hosts > 1 && s.bytes < RING_MIN_BYTES {
            "hierarchical"
        } else if s.ranks == 1 || s.bytes <= SHORT_BYTES {
            "recursive_doubling"
        } else if s.count < pof2(s.ranks) as usize {
            if s.commutative {
                "recursive_doubling"
            } else {
                "reduce_bcast"
            }
        } else if s.commutative && s.bytes >= RING_MIN_BYTES && s.count >= s.ranks as usize {
            "ring"
        } else {
            "rabenseifner"
        }
    },
};

/// Blocking allreduces up to this many bytes (the message's span) take the
/// shared-memory path where it exists ([`SHM_MAX_2`] on 2 ranks); measured on
/// 2, 4 and 8 ranks (bench/RESULTS.md). From 3 ranks on every size: its
/// blocks variant has all ranks fold in parallel, and above 512 KiB it beat the
/// schedules (ring, rabenseifner) 2.3-7x (4 ranks, 2 MiB: 687-696 us against
/// 1650-2015; 8 ranks, 4 MiB: 2845-4298 against 9687-10212); bench/PROFILE.md, collB27.
pub const SHM_MAX: usize = usize::MAX;
pub const SHM_MAX_2: usize = 32 * 1024;

/// Up to this many bytes, recursive doubling (latency-bound).
const SHORT_BYTES: usize = 2048;
/// From this many bytes on (commutative ops), the ring.
const RING_MIN_BYTES: usize = 1 << 20;

/// `counted`: a call of the program's (MPI_T counts it), not one oxmpi runs for itself.
fn select(n: i32, count: usize, red: &Red, hosts: usize, counted: bool) -> Result<&'static str> {
    let shape = Shape {
        ranks: n,
        bytes: count * red.dt.size(),
        count,
        commutative: red.op.is_commutative(),
        hosts,
    };
    match counted {
        true => super::select::choose("allreduce", &TABLE, &shape),
        false => super::select::choose_uncounted("allreduce", &TABLE, &shape),
    }
}

#[allow(clippy::too_many_arguments)]
fn schedule(
    call: &str,
    counted: bool,
    sendbuf: Option<*const u8>,
    recvbuf: *mut u8,
    count: usize,
    dt: &Datatype,
    op: &Op,
    comm: &Comm,
) -> Result<Builder> {
    if comm.is_inter() {
        return super::inter::allreduce(call, sendbuf, recvbuf, count, dt, op, comm);
    }
    check_args(call, comm, count, dt, op)?;
    let red = Red::new(dt, op);
    let count = if dt.size() == 0 { 0 } else { count };
    if count == 0 {
        // Nothing to reduce: collectives other than barrier need not
        // synchronize, so every rank returns without communicating.
        return Ok(Builder::new(comm));
    }
    let io = Io::new(&red, sendbuf, recvbuf, count, true);
    let mut b = Builder::new(comm);
    // The host of each rank, for the two-level algorithm.
    // Processes of two jobs (connect/accept) do not know each other's hosts
    // alike, and every member must choose the same algorithm: such a
    // communicator is treated as one host.
    // The common case, every member on one host, allocates nothing (two
    // vectors a call were a tenth of a small MPI_Iallreduce's post, nbc27).
    let (host_of, hosts): (Vec<u32>, usize) = match crate::runtime::engine() {
        Ok(e) if comm.group().iter().all(|&w| w < e.size()) => {
            let first = comm.group().first().map(|&w| e.host_index(w));
            if comm.group().iter().all(|&w| Some(e.host_index(w)) == first) {
                (Vec::new(), 1)
            } else {
                let host_of: Vec<u32> = comm.group().iter().map(|&w| e.host_index(w)).collect();
                let mut h = host_of.clone();
                h.sort_unstable();
                h.dedup();
                let hosts = h.len();
                (host_of, hosts)
            }
        }
        _ => (Vec::new(), 1),
    };
    let result = match select(comm.size(), count, &red, hosts, counted)? {
        "hierarchical" if host_of.is_empty() => {
            // Forced on one host: one host of every member.
            hierarchical::build(&mut b, &red, &io, &vec![0; comm.size() as usize])
        }
        "hierarchical" => hierarchical::build(&mut b, &red, &io, &host_of),
        "ring" => ring::build(&mut b, &red, &io),
        "rabenseifner" => rabenseifner::build(&mut b, &red, &io),
        "reduce_bcast" => reduce_bcast::build(&mut b, &red, &io),
        _ => recursive_doubling::build(&mut b, &red, &io),
    };
    io.deliver(&mut b, &red, result);
    Ok(b)
}

/// The point-to-point schedule of an in-place allreduce of `words` (elements of
/// MPI_UINT64_T) that the schedule owns, for operations built on one
/// (context-id agreement): the caller sets its tag, runs it, and takes the
/// result back with [`Schedule::into_owned`].
pub(crate) fn owned_schedule(
    call: &str,
    mut words: Vec<u64>,
    op: &Op,
    comm: &Comm,
) -> Result<Schedule> {
    let dt = Datatype::predefined_ref(crate::datatype::Primitive::Uint64);
    // The steps point into the heap allocation of `words`, which moves into the
    // schedule below and stays put there until it is handed back (completed) or
    // dropped with the schedule.
    let b = schedule(
        call,
        false,
        None,
        words.as_mut_ptr().cast::<u8>(),
        words.len(),
        dt,
        op,
        comm,
    )?;
    let mut s = b.build()?;
    s.own(words);
    Ok(s)
}

/// MPI_Allreduce; `send: None` is MPI_IN_PLACE (the input is `recv`).
pub fn allreduce(
    send: Option<SendBuf<'_, '_>>,
    mut recv: RecvBuf<'_, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<()> {
    let (count, dt) = (recv.count(), api::dt(recv.datatype()));
    if let Some(s) = &send {
        api::same_layout("MPI_Allreduce", s, &recv)?;
    }
    let checked = !comm.is_inter() && check_args("MPI_Allreduce", comm, count, dt, op).is_ok();
    // An empty type signature, the same on every rank: all return here without
    // communicating (and without a tag, on every rank alike).
    let empty = checked && (count == 0 || dt.size() == 0);
    if super::nothing_to_move(empty) {
        return Ok(());
    }
    let _diag = crate::diag::coll("MPI_Allreduce", comm, None, count, Some(dt), Some(op))?;
    if checked {
        if empty {
            return Ok(());
        }
        if let Some(k) = super::shm::chunk_elems(count, dt) {
            let forced = super::select::forced_op(super::select::Op::ALLREDUCE)?;
            if let Some(sess) = super::shm::acquire(
                comm,
                super::shm::want(
                    forced,
                    super::util::span_len(count, dt)
                        <= if comm.size() == 2 { SHM_MAX_2 } else { SHM_MAX },
                ),
            )? {
                super::select::ran_shm(super::select::Op::ALLREDUCE);
                return super::shm::allreduce(sess, send.as_ref(), &mut recv, k, op);
            }
        }
    }
    super::run(
        schedule_of("MPI_Allreduce", &send, &recv, op, comm)?,
        "MPI_Allreduce",
    )
}

/// The schedule of an allreduce over the descriptors' addresses (`send: None`:
/// MPI_IN_PLACE), kept valid by the caller until it completes.
fn schedule_of(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    recv: &RecvBuf<'_, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<Builder> {
    let (sendbuf, dt) = (send.as_ref().map(|s| s.ptr()), api::dt(recv.datatype()));
    schedule(call, true, sendbuf, recv.ptr(), recv.count(), dt, op, comm)
}

/// MPI_Iallreduce on the shared-memory area where the blocking allreduce would
/// take it and the area exists already (`coll/shm/nb.rs`); `None`: the schedule.
fn ishm(
    send: &Option<SendBuf<'static, '_>>,
    recv: &RecvBuf<'static, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<Option<Request>> {
    let (count, dt) = (recv.count(), api::dt(recv.datatype()));
    if comm.is_inter()
        || count == 0
        || dt.size() == 0
        || check_args("MPI_Iallreduce", comm, count, dt, op).is_err()
    {
        return Ok(None);
    }
    let Some(k) = super::shm::chunk_elems(count, dt) else {
        return Ok(None);
    };
    let forced = super::select::forced_op(super::select::Op::ALLREDUCE)?;
    let want = super::shm::want(
        forced,
        super::util::span_len(count, dt) <= if comm.size() == 2 { SHM_MAX_2 } else { SHM_MAX },
    );
    let r = super::shm::nb::iallreduce(
        comm,
        want,
        || crate::buf::schedmem::RedBufs::lent(send.as_ref(), recv),
        k,
        op,
    )?;
    if r.is_some() {
        super::select::ran_shm(super::select::Op::ALLREDUCE);
    }
    Ok(r)
}

/// MPI_Iallreduce: as [`allreduce`], the buffers kept by `scope` until the request completes.
pub fn iallreduce<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    if let Some(s) = &send {
        api::same_layout("MPI_Iallreduce", s, &recv)?;
    }
    // An empty type signature, the same on every rank (matched signatures):
    // every rank returns the engine's complete request at once, with no
    // schedule, as the blocking form's `nothing_to_move`; not while a persistent
    // collective's `_init` plans (it needs its schedule, even an empty one). The
    // non-blocking tag is taken all the same (`started_empty`), as the C layer's
    // 0-count exit and the general path's empty schedule take it: ranks may go
    // either way (one passes MPI_INT, another a contiguous type of ints), and
    // later collectives line up only if all of them took it.
    let (count, dt) = (recv.count(), api::dt(recv.datatype()));
    if (count == 0 || dt.size() == 0)
        && !super::planning()
        && !comm.is_inter()
        && super::nothing_to_move(check_args("MPI_Iallreduce", comm, count, dt, op).is_ok())
    {
        return Ok(super::started_empty(comm));
    }
    let (send, recv) = (send.map(|s| s.lend(scope)), recv.lend(scope));
    if let Some(r) = ishm(&send, &recv, op, comm)? {
        scope.enter(r);
        return Ok(r);
    }
    let r = super::start(schedule_of("MPI_Iallreduce", &send, &recv, op, comm)?)?;
    scope.enter(r);
    Ok(r)
}
