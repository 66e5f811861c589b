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

pub(super) const ALGORITHMS: &[&str] = &["dissemination", "shm"];

fn schedule(comm: &Comm) -> Result<Builder> {
    if comm.is_inter() {
        return super::inter::barrier(comm);
    }
    let _ = super::forced_algorithm("barrier", ALGORITHMS)?;
    let mut b = Builder::new(comm);
    dissemination::build(&mut b, comm.rank(), comm.size());
    Ok(b)
}

/// MPI_Barrier.
pub fn barrier(comm: &Comm) -> Result<()> {
    let _diag = crate::diag::coll("MPI_Barrier", comm, None, 0, None, None)?;
    if !comm.is_inter() {
        let forced = super::shm::forced("barrier", ALGORITHMS)?;
        if let Some(sess) = super::shm::acquire(comm, super::shm::want(forced, true))? {
            super::shm::barrier(sess);
            return Ok(());
        }
    }
    super::run(schedule(comm)?, "MPI_Barrier")
}

/// MPI_Ibarrier.
pub fn ibarrier(comm: &Comm) -> Result<Request> {
    super::start(schedule(comm)?)
}
