//! Point-to-point communication: send modes, receives, probes, the wait/test
//! families, cancel, persistent requests and the bsend buffer.
//!
//! The entry points (`api.rs`) are safe functions over the typed buffer
//! descriptors of [`crate::buf`]; a non-blocking one also takes the
//! [`BufScope`](crate::buf::BufScope) that keeps its buffer alive until the
//! request completes. Below them, the `*_raw` functions of the other files are
//! safe functions over the in-flight descriptors (`RawBuf`, whose one `unsafe`
//! constructor carries the proof, and `SendBuf`/`RecvBuf<'static>`), for the
//! engine's own callers.

mod api;
mod bsend;
mod complete;
mod fast;
pub mod partitioned;
mod persistent;
mod probe;
mod send;
mod sendrecv;
mod typed;
pub mod wire;

pub use api::*;
pub use bsend::*;
pub use complete::*;
pub use fast::*;
pub use persistent::*;
pub use probe::*;
pub use send::*;
pub(crate) use sendrecv::*;
pub use typed::*;

use crate::buf::RawBuf;
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::engine::{PersistentSpec, ReqKind};
pub use crate::engine::{SendMode, BSEND_OVERHEAD};
use crate::error::{ErrorClass, MpiError, Result};
use crate::matching::{Envelope, Pattern, ANY_SOURCE, ANY_TAG};
use crate::request::{Request, Status, PROC_NULL};
use crate::runtime::{engine, TAG_UB};

impl Request {
    /// `MPI_REQUEST_NULL`: never names a live request (generations start at 1).
    pub const NULL: Request = Request(0);
    /// A request that is complete already, with an empty status and nothing to
    /// free: one value for every such request, never in the request table (its
    /// slot is beyond any real one). One-sided request-based operations on this
    /// host complete in their calls and hand this out (no allocation, no lock).
    pub const DONE: Request = Request(u64::MAX);

    pub fn is_null(self) -> bool {
        self == Request::NULL
    }
}

/// The MPI call a send of `mode` is (`immediate`: its non-blocking form), for
/// error messages; the one table of these names (the C layer and the safe API use it).
pub fn send_call_name(mode: SendMode, immediate: bool) -> &'static str {
    match (mode, immediate) {
        (SendMode::Standard, false) => "MPI_Send",
        (SendMode::Synchronous, false) => "MPI_Ssend",
        (SendMode::Ready, false) => "MPI_Rsend",
        (SendMode::Buffered, false) => "MPI_Bsend",
        (SendMode::Standard, true) => "MPI_Isend",
        (SendMode::Synchronous, true) => "MPI_Issend",
        (SendMode::Ready, true) => "MPI_Irsend",
        (SendMode::Buffered, true) => "MPI_Ibsend",
    }
}

/// Checks a destination rank; `None` means MPI_PROC_NULL.
#[inline]
pub(super) fn check_dest(call: &str, comm: &Comm, dest: i32) -> Result<Option<u32>> {
    if dest == PROC_NULL {
        return Ok(None);
    }
    let n = comm.peer_group_size();
    if dest < 0 || dest >= n {
        return Err(MpiError::arg(
            ErrorClass::Rank,
            call,
            "dest",
            format!("{dest} is not a rank of this communicator (0..{n}) nor MPI_PROC_NULL"),
        ));
    }
    Ok(Some(comm.peer_group()[dest as usize]))
}

#[inline]
pub(super) fn check_send_tag(call: &str, tag: i32) -> Result<()> {
    if !(0..=TAG_UB).contains(&tag) {
        return Err(MpiError::arg(
            ErrorClass::Tag,
            call,
            "tag",
            format!("{tag} is outside 0..=MPI_TAG_UB ({TAG_UB})"),
        ));
    }
    Ok(())
}

#[inline]
pub(super) fn check_source(call: &str, comm: &Comm, source: i32) -> Result<()> {
    let n = comm.peer_group_size();
    if source == ANY_SOURCE || source == PROC_NULL || (0..n).contains(&source) {
        return Ok(());
    }
    Err(MpiError::arg(
        ErrorClass::Rank,
        call,
        "source",
        format!("{source} is not a rank of this communicator (0..{n}), MPI_ANY_SOURCE nor MPI_PROC_NULL"),
    ))
}

#[inline]
pub(super) fn check_recv_tag(call: &str, tag: i32) -> Result<()> {
    if tag == ANY_TAG || (0..=TAG_UB).contains(&tag) {
        return Ok(());
    }
    Err(MpiError::arg(
        ErrorClass::Tag,
        call,
        "tag",
        format!("{tag} is neither MPI_ANY_TAG nor in 0..=MPI_TAG_UB"),
    ))
}

pub(super) fn pattern(comm: &Comm, source: i32, tag: i32) -> Pattern {
    Pattern {
        context: comm.context(),
        source,
        tag,
    }
}
