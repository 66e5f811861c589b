//! MPI_Barrier / MPI_Ibarrier.
mod dissemination;

use super::sched::Builder;
use crate::comm::Comm;
use crate::error::Result;
use crate::request::Request;

const ALGORITHMS: &[&str] = &["dissemination"];

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
    super::run(schedule(comm)?, "MPI_Barrier")
}

/// MPI_Ibarrier.
pub fn ibarrier(comm: &Comm) -> Result<Request> {
    super::start(schedule(comm)?)
}
