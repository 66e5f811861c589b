//! MPI-4 persistent collectives (`MPI_<Op>_init`, intra- and intercommunicators,
//! neighbourhood ones on topologies, and their `_c` forms).
//!
//! An `_init` call is the immediate call's body (`coll/`, `neighbor.rs`) in
//! its persistent form (abi.txt's `coll(BODY, ...)` lines: gen.rs writes the
//! three forms' entries over the one body; MPI_Barrier_init is here): the same argument checks (named after the `_init`
//! call), the count, displacement and datatype arrays read, and the algorithm
//! chosen, all once, here; the schedule that the immediate call would have
//! started is kept instead (`oxmpi_core::coll::persistent::plan`), with the
//! communicator's next collective tag. Each MPI_Start (`p2p/persistent.rs`) runs that
//! schedule again; the wait/test family completes a start and leaves the
//! request inactive; MPI_Request_free frees it.
//!
//! So the caller may reuse its count and displacement arrays as soon as
//! `_init` returns, and persistent collectives match in the order they were
//! initialized (the same on every rank), so ranks may start them in
//! different orders. The buffers are used as given (MPI asks the caller to
//! keep them valid until the request is freed).

use crate::conv::comm;
use crate::conv::errors::R;
use crate::types::*;

/// MPI_Barrier_init (abi.txt `out(request)`: the generated `PMPI_x` checks `request` first).
pub fn barrier_init(call: &'static str, c: MPI_Comm, info: MPI_Info, o: &mut MPI_Request) -> R<()> {
    let cm = comm(c, call)?;
    crate::conv::info_arg(call, info)?;
    let plan =
        oxmpi_core::coll::persistent::plan(call, || oxmpi_core::coll::barrier::ibarrier(&cm))?;
    *o = crate::conv::new_persistent_coll(plan, c);
    Ok(())
}
