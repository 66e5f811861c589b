//! Point-to-point: sends, receives, probes, requests and their completion,
//! persistent requests (kept in this layer, started as typed immediate
//! operations, so every datatype works), statuses.
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement: buffers holding their counts of their datatypes
//! (for immediate forms, until the request completes), arrays of the length the
//! standard gives, OUT arguments writable and aliasing no other argument.
//!
//! Files: `send_recv` (sends, receives, sendrecv), `probe` (probes, matched receives),
//! `persistent` (persistent requests, MPI_Start), `bsend` (attach/detach), `bsend_comm`
//! (per-communicator buffers and flushes, MPI-4.1); this module holds the argument
//! checks they share. (Request completion: `request/`.)

use std::ffi::{c_int, c_void};

use oxmpi_core::buf::{Forever, SendBuf};
use oxmpi_core::datatype::Datatype;
use oxmpi_core::error::{ErrorClass, MpiError};
use oxmpi_core::pt2pt::{self, Message};
use oxmpi_core::{Request, SendMode};

use crate::abi::*;
use crate::conv::args::req_slice;
use crate::conv::errors::rename_call;
use crate::conv::errors::{bad, ffi, out, route_to, Fail, NO_COMM, R};
use crate::conv::handles::{state, MessageEntry, PersistentOp};
use crate::conv::large::{entry, ptr::*};
use crate::conv::large::{name, to_usize, Count};
use crate::conv::status::*;
use crate::conv::{
    c_bytes, c_bytes_mut, c_recv, c_send, check_buf, comm, comm_ref, committed, committed_ref,
    fast_p2p, fast_p2p_user, fast_p2p_with_engine, new_p2p_request, new_request,
};
use crate::types::*;

mod bsend;
mod bsend_comm;
mod persistent;
mod probe;
mod send_recv;

pub use bsend::*;
pub use bsend_comm::*;
pub use persistent::*;
pub use probe::*;
pub use send_recv::*;

// ----- argument checks ----------------------------------------------------------------

fn count_arg<C: Count>(call: &str, n: C) -> R<usize> {
    to_usize(call, "count", n)
}

/// A call's communicator and datatype, borrowed when predefined (no
/// reference counts taken on the hot path).
struct Args {
    comm: std::borrow::Cow<'static, oxmpi_core::Comm>,
    dt: std::borrow::Cow<'static, Datatype>,
    count: usize,
}

fn args<C: Count>(
    call: &str,
    c: MPI_Comm,
    buf: *const c_void,
    count: C,
    h: MPI_Datatype,
) -> R<Args> {
    let cm = comm_ref(c, call)?;
    let n = count_arg(call, count)?;
    // An empty message ignores its datatype: MPI_DATATYPE_NULL with count 0 is
    // accepted (as MPICH does; programs send zero-byte notices so).
    if n == 0 && h == MPI_DATATYPE_NULL {
        return Ok(Args {
            comm: cm,
            dt: std::borrow::Cow::Borrowed(Datatype::predefined_ref(
                oxmpi_core::datatype::Primitive::Byte,
            )),
            count: 0,
        });
    }
    let dt = committed_ref(h, call, "datatype")?;
    check_buf(call, "buf", buf, n, &dt)?;
    Ok(Args {
        comm: cm,
        dt,
        count: n,
    })
}
