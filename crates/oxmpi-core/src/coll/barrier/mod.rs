//! MPI_Barrier / MPI_Ibarrier.
//!
//! Algorithms: `dissemination` (point-to-point), `shm` (blocking barrier on
//! communicators within one host: flags in a shared area, see `coll/shm`; chosen
//! there by default, the non-blocking barrier always disseminates).
mod dissemination;

use super::sched::Builder;
use crate::comm::Comm;
use crate::error::Result;
use crate::request::Request;

use super::select::{always, never, Algorithm, Table};

/// Barrier's algorithms (see [`super::select`]).
pub(crate) static TABLE: Table = Table {
    op: "barrier",
    algorithms: &[
        Algorithm {
            name: "dissemination",
            applies: "any communicator",
            runs: always,
            instead: None,
        },
        Algorithm {
            name: "shm",
            applies: "blocking barrier within one host",
            runs: never,
            instead: None,
        },
    ],
    default: |_| "dissemination",
};

fn schedule(comm: &Comm) -> Result<Builder> {
    if comm.is_inter() {
        return super::inter::barrier(comm);
    }
    super::select::choose(
        "barrier",
        &TABLE,
        &super::select::Shape::new(comm.size(), 0),
    )?;
    let mut b = Builder::new(comm);
    dissemination::build(&mut b, comm.rank(), comm.size());
    Ok(b)
}

/// MPI_Barrier.
pub fn barrier(comm: &Comm) -> Result<()> {
    let _diag = crate::diag::coll("MPI_Barrier", comm, None, 0, None, None)?;
    if !comm.is_inter() {
        let forced = super::select::forced_op(super::select::Op::BARRIER)?;
        if let Some(sess) = super::shm::acquire(comm, super::shm::want(forced, true))? {
            super::shm::barrier(sess);
            super::select::ran_shm(super::select::Op::BARRIER);
            return Ok(());
        }
    }
    super::run(schedule(comm)?, "MPI_Barrier")
}

/// MPI_Ibarrier.
pub fn ibarrier(comm: &Comm) -> Result<Request> {
    if !comm.is_inter() {
        // On the shared area where it exists already (`coll/shm/nb.rs`).
        let forced = super::select::forced_op(super::select::Op::BARRIER)?;
        if let Some(r) = super::shm::nb::ibarrier(comm, super::shm::want(forced, true))? {
            super::select::ran_shm(super::select::Op::BARRIER);
            return Ok(r);
        }
    }
    super::start(schedule(comm)?)
}
