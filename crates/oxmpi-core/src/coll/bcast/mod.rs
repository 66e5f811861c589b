//! MPI_Bcast / MPI_Ibcast. Algorithms move the packed bytes of the message; the
//! root packs with its datatype and every other rank unpacks with its own.
//!
//! Selection (MPICH's defaults, but from 16 ranks): binomial tree below 12 KiB
//! or on fewer than [`MIN_PROCS`] ranks; scatter + ring allgather (van de Geijn)
//! above. `chain` (pipelined) is
//! available through `OXMPI_BCAST_ALGORITHM=chain`. `shm` (blocking bcast on
//! communicators within one host, through a shared area, see `coll/shm`) is
//! chosen up to [`shm_max`] bytes.
mod binomial;
mod chain;
mod scatter_ring;

use super::sched::Builder;
use super::util;
use crate::buf::{BufScope, RecvBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::Result;
use crate::request::Request;

use super::select::{always, never, Algorithm, Shape, Table};

/// Bcast's algorithms (see [`super::select`]); `bytes`: the packed message.
pub(crate) static TABLE: Table = Table {
    op: "bcast",
    algorithms: &[
        Algorithm {
            name: "binomial",
            applies: "any size",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "scatter_ring",
            applies: "any size (large messages on 16 or more ranks)",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "chain",
            applies: "any size (pipelined; forced only)",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "shm",
            applies: "blocking bcast within one host",
            runs: never,
            instead: None,
        },
    ],
    default: |s| {
        if s.bytes < SHORT_MSG || s.ranks < MIN_PROCS {
            "binomial"
        } else {
            "scatter_ring"
        }
    },
};

/// Blocking bcasts up to this many bytes take the shared-memory path where it
/// exists, from 5 ranks on ([`SHM_MAX_2`] on 2 ranks, [`SHM_MAX_4`] on 3-4, where
/// the binomial tree's single-copy messages beat the chunked copies in and out);
/// measured on 2, 4 and 8 ranks (bench/RESULTS.md, bench/PROFILE.md collA28).
pub const SHM_MAX: usize = 512 * 1024;
/// On 3-4 ranks: 4 ranks on 2 cores, area / binomial (us): 32 KiB 5.6 / 12.5,
/// 128 KiB 21.0 / 18.1, 512 KiB 89 / 45 (bench/PROFILE.md collA28).
pub const SHM_MAX_4: usize = 64 * 1024;

/// The largest blocking bcast (bytes) on `n` ranks that takes the shared area by default.
pub const fn shm_max(n: i32) -> usize {
    match n {
        ..=2 => SHM_MAX_2,
        3..=4 => SHM_MAX_4,
        _ => SHM_MAX,
    }
}
/// On 2 ranks: the shared-memory eager limit of point-to-point (`SHM_EAGER_LIMIT`,
/// 8 KiB), above which the binomial tree's one message is a single copy. At
/// 32 KiB the shared path's copy in, then copy out took 4.1-4.3 us against 2.3-2.5
/// for the message and 2.2-2.3 for MPICH (bench/PROFILE.md collA27).
pub const SHM_MAX_2: usize = 8 * 1024;

/// Whether a blocking bcast of `bytes` on `n` ranks is copied once by every
/// other rank straight from the root's buffer (`coll/shm/direct.rs`), where the
/// members may copy between each other's memory: above the area's range up to
/// 1 MiB on 3-4 ranks, from 128 KiB on more. Not on 2 ranks: the binomial
/// tree's one message is such a copy already, shared with the root. Measured
/// (bench/PROFILE.md collA29, us, direct / area or binomial / Open MPI): 4 ranks
/// 32 KiB 4.23-4.65 / 4.23-4.83 / 4.36-4.47, 128 KiB 13.2-13.6 / 21.6-26.4 /
/// 11.7-13.5, 4 MiB 838 / 764 / 815; 8 ranks 32 KiB 11.2 / 4.75 / 7.0, 128 KiB
/// 20.6 / 42.9 / 13.9, 4 MiB 740 / 1,213 / 802.
pub const fn direct(n: i32, bytes: usize) -> bool {
    match n {
        ..=2 => false,
        3..=4 => bytes > SHM_MAX_4 && bytes <= 1024 * 1024,
        _ => bytes >= 128 * 1024,
    }
}

/// Messages below this many bytes use the binomial tree.
pub const SHORT_MSG: usize = 12 * 1024;
/// Communicators smaller than this use the binomial tree at any size. MPICH's 8
/// measured 2x slower than the tree at 8 ranks on 2 cores (us, scatter_ring /
/// binomial: 2 MiB 1,104 / 526, 4 MiB 2,025 / 978; bench/PROFILE.md collA28):
/// its 2(n - 1) steps hand the core over each time.
pub const MIN_PROCS: i32 = 16;

fn select(n: i32, bytes: usize) -> Result<&'static str> {
    // `shm` serves blocking calls only; schedules then get the automatic choice.
    super::select::choose("bcast", &TABLE, &Shape::new(n, bytes))
}

/// The schedule of a bcast of `buf`, whose memory the caller (an entry point
/// below) keeps valid until the schedule completes.
fn schedule(call: &str, buf: &RecvBuf<'_, '_>, root: i32, comm: &Comm) -> Result<Builder> {
    let (buf, count, dt) = (buf.ptr(), buf.count(), super::api::dt(buf.datatype()));
    if comm.is_inter() {
        return super::inter::bcast(call, buf, count, dt, root, comm);
    }
    super::check_root(call, comm, root)?;
    util::check_type(call, "datatype", dt)?;
    util::check_count(call, "count", count, dt)?;
    build(buf, count, dt, root, comm)
}

/// [`schedule`] after its checks (intracommunicators): `root`, `dt` and `count`
/// passed them. Records the address only; the caller keeps the buffer valid
/// until the schedule completes.
fn build(buf: *mut u8, count: usize, dt: &Datatype, root: i32, comm: &Comm) -> Result<Builder> {
    let (rank, n) = (comm.rank(), comm.size());
    let algo = select(n, util::packed_len(count, dt))?;
    let mut b = Builder::new(comm);
    if n == 1 || util::packed_len(count, dt) == 0 {
        return Ok(b);
    }
    let data = if rank == root {
        util::packed_input(&mut b, buf, count, dt)
    } else {
        util::packed_output(&mut b, buf, count, dt)
    };
    match algo {
        "scatter_ring" => scatter_ring::build(&mut b, rank, n, root, data),
        "chain" => chain::build(&mut b, rank, n, root, data),
        _ => binomial::build(&mut b, rank, n, root, data),
    }
    if rank != root {
        util::finish_output(&mut b, data, buf, count, dt);
    }
    Ok(b)
}

/// MPI_Bcast: `buf` is read at the root, written elsewhere.
pub fn bcast(buf: RecvBuf<'_, '_>, root: i32, comm: &Comm) -> Result<()> {
    let (count, dt) = (buf.count(), super::api::dt(buf.datatype()));
    let checked = !comm.is_inter()
        && super::check_root("MPI_Bcast", comm, root).is_ok()
        && util::check_type("MPI_Bcast", "datatype", dt).is_ok()
        && util::check_count("MPI_Bcast", "count", count, dt).is_ok();
    let bytes = if checked {
        util::packed_len(count, dt)
    } else {
        0
    };
    // Nothing to move (on every rank: the type signatures match): no record, no
    // selection, no schedule, no tag (every rank skips the same calls). Checked
    // collectives still meet in `diag::coll` first.
    if super::nothing_to_move(checked && bytes == 0) {
        return Ok(());
    }
    let _diag = crate::diag::coll("MPI_Bcast", comm, Some(root), count, Some(dt), None)?;
    if bytes > 0 {
        let forced = super::select::forced_op(super::select::Op::BCAST)?;
        let n = comm.size();
        let (area, direct) = (bytes <= shm_max(n), direct(n, bytes));
        let want = super::shm::want(forced, area || direct);
        if let Some(sess) = super::shm::acquire(comm, want)? {
            // The same choice on every rank (`direct()` was agreed at set-up).
            let mut buf = buf;
            if direct && sess.direct() {
                super::select::ran_shm(super::select::Op::BCAST);
                return super::shm::bcast_direct(sess, &mut buf, bytes, root as usize);
            }
            if area || want == super::shm::Want::Forced {
                super::shm::bcast(sess, &mut buf, bytes, root as usize);
                super::select::ran_shm(super::select::Op::BCAST);
                return Ok(());
            }
            drop(sess);
            return run_schedule(buf, count, dt, root, comm, checked);
        }
    }
    run_schedule(buf, count, dt, root, comm, checked)
}

/// The blocking bcast's schedule (no shared-memory path).
fn run_schedule(
    buf: RecvBuf<'_, '_>,
    count: usize,
    dt: &Datatype,
    root: i32,
    comm: &Comm,
    checked: bool,
) -> Result<()> {
    let b = match checked {
        // The descriptor is readable and writable for this blocking call; its arguments passed the checks above (once is enough).
        true => build(buf.ptr(), count, dt, root, comm)?,
        false => schedule("MPI_Bcast", &buf, root, comm)?,
    };
    super::run(b, "MPI_Bcast")
}

/// MPI_Ibcast: as [`bcast`], the buffer kept by `scope` until the request completes.
pub fn ibcast<'a>(
    scope: &impl BufScope<'a>,
    buf: RecvBuf<'a, '_>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    let r = super::start(schedule("MPI_Ibcast", &buf, root, comm)?)?;
    scope.enter(r);
    Ok(r)
}
