//! Collectives over typed buffer descriptors: the reductions and bcast, blocking and
//! immediate, are safe functions (defined in their operation's module, gathered here),
//! and the checks their descriptors share.
//!
//! As in [`crate::pt2pt`], a [`SendBuf`] or [`RecvBuf`] carries the proof that its
//! memory is valid (the C boundary makes them with `from_raw`, the Rust API from its
//! `Region`s); `send: None` is MPI_IN_PLACE. Where MPI takes one count and datatype
//! for two buffers, both descriptors must have the same count and layout (the
//! element size, extent and true bounds), so that the memory reached in either is
//! the memory its descriptor was checked for.

pub use super::allreduce::{allreduce, iallreduce};
pub use super::bcast::{bcast, ibcast};
pub use super::reduce::{ireduce, reduce, reduce_local};
pub use super::scan::{exscan, iexscan, iscan, scan};
use crate::buf::{RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::{Datatype, Primitive};
use crate::error::{ErrorClass, MpiError, Result};

/// A descriptor's datatype (raw bytes without one).
#[inline]
pub(crate) fn dt(d: Option<&Datatype>) -> &Datatype {
    d.unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte))
}

/// Both descriptors cover the same count of elements of the same layout (at once
/// when they share their datatype, as the C layer's always do).
#[inline(always)]
pub(crate) fn same_layout(call: &str, s: &SendBuf<'_, '_>, r: &RecvBuf<'_, '_>) -> Result<()> {
    let same_dt = match (s.datatype(), r.datatype()) {
        (Some(a), Some(b)) => std::ptr::eq(a, b),
        (None, None) => true,
        _ => false,
    };
    if s.count() == r.count() && same_dt {
        return Ok(());
    }
    layouts_differ(call, s, r)
}

#[cold]
#[inline(never)]
fn layouts_differ(call: &str, s: &SendBuf<'_, '_>, r: &RecvBuf<'_, '_>) -> Result<()> {
    let (a, b) = (dt(s.datatype()), dt(r.datatype()));
    let layout = |d: &Datatype| (d.size(), d.extent(), d.true_lb(), d.true_extent());
    if s.count() != r.count() || layout(a) != layout(b) {
        return Err(MpiError::arg(
            ErrorClass::Buffer,
            call,
            "recvbuf",
            format!("the receive buffer ({} elements) does not have the send buffer's layout ({} elements)", r.count(), s.count()),
        ));
    }
    Ok(())
}

/// The count and datatype of a reduce, after checking its descriptors.
#[inline(always)]
pub(crate) fn reduce_args<'d>(
    call: &str,
    send: &Option<SendBuf<'_, 'd>>,
    recv: &Option<RecvBuf<'_, 'd>>,
    root: i32,
    comm: &Comm,
) -> Result<(usize, &'d Datatype)> {
    Ok(match (send, recv) {
        (Some(s), Some(r)) => {
            same_layout(call, s, r)?;
            (s.count(), dt(s.datatype()))
        }
        (Some(s), None) => {
            let root_here = if comm.is_inter() {
                root == super::inter::ROOT
            } else {
                comm.rank() == root
            };
            if root_here {
                return Err(missing(call, "recvbuf", "the root needs a receive buffer"));
            }
            (s.count(), dt(s.datatype()))
        }
        (None, Some(r)) => (r.count(), dt(r.datatype())),
        (None, None) => {
            return Err(missing(
                call,
                "sendbuf",
                "MPI_IN_PLACE is only valid at the root (neither a send nor a receive buffer)",
            ))
        }
    })
}

#[cold]
#[inline(never)]
fn missing(call: &str, arg: &str, what: &str) -> MpiError {
    MpiError::arg(ErrorClass::Buffer, call, arg, what)
}
