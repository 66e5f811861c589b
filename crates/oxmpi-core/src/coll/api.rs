//! Collectives over typed buffer descriptors: safe functions (the blocking reductions
//! and bcast, and the immediate bcast and allreduce).
//!
//! As in [`crate::pt2pt`], a [`SendBuf`] or [`RecvBuf`] carries the proof that its
//! memory is valid; the raw forms in the per-collective modules stay for the engine's
//! own callers and the C layer's other calls. Where MPI takes one count and datatype
//! for two buffers, both descriptors must have the same count and layout (the
//! element size, extent and true bounds), so that the memory reached in either is
//! the memory its descriptor was checked for.

use super::{allreduce, bcast, reduce, scan};
use crate::buf::{BufScope, RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::{Datatype, Primitive};
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::Op;
use crate::request::Request;

fn dt(d: Option<&Datatype>) -> &Datatype {
    d.unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte))
}

/// Both descriptors cover the same count of elements of the same layout.
fn same_layout(call: &str, s: &SendBuf<'_, '_>, r: &RecvBuf<'_, '_>) -> Result<()> {
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

/// MPI_Bcast: `buf` is read at the root, written elsewhere.
pub fn bcast(buf: RecvBuf<'_, '_>, root: i32, comm: &Comm) -> Result<()> {
    // SAFETY: the descriptor is writable (and readable) and ours alone for this blocking call.
    unsafe { bcast::bcast(buf.ptr(), buf.count(), dt(buf.datatype()), root, comm) }
}

/// MPI_Allreduce; `send: None` is MPI_IN_PLACE (the input is `recv`).
pub fn allreduce(
    send: Option<SendBuf<'_, '_>>,
    recv: RecvBuf<'_, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<()> {
    if let Some(s) = &send {
        same_layout("MPI_Allreduce", s, &recv)?;
    }
    // SAFETY: both descriptors are valid for this blocking call, with the same layout.
    unsafe {
        allreduce::allreduce(
            send.map(|s| s.ptr()),
            recv.ptr(),
            recv.count(),
            dt(recv.datatype()),
            op,
            comm,
        )
    }
}

/// MPI_Reduce: `recv` is needed at the root only; `send: None` is MPI_IN_PLACE (at the root).
pub fn reduce(
    send: Option<SendBuf<'_, '_>>,
    recv: Option<RecvBuf<'_, '_>>,
    op: &Op,
    root: i32,
    comm: &Comm,
) -> Result<()> {
    let (count, d) = reduce_args("MPI_Reduce", &send, &recv, root, comm)?;
    let rp = recv
        .as_ref()
        .map_or(std::ptr::NonNull::<u8>::dangling().as_ptr(), |r| r.ptr());
    // SAFETY: both descriptors are valid for this blocking call, with the same layout; without a receive descriptor this rank is not the root, which alone writes it.
    unsafe { reduce::reduce(send.map(|s| s.ptr()), rp, count, d, op, root, comm) }
}

/// The count and datatype of a reduce, after checking its descriptors.
fn reduce_args<'d>(
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
                return Err(MpiError::arg(
                    ErrorClass::Buffer,
                    call,
                    "recvbuf",
                    "the root needs a receive buffer",
                ));
            }
            (s.count(), dt(s.datatype()))
        }
        (None, Some(r)) => (r.count(), dt(r.datatype())),
        (None, None) => {
            return Err(MpiError::arg(
                ErrorClass::Buffer,
                call,
                "sendbuf",
                "neither a send nor a receive buffer",
            ))
        }
    })
}

/// MPI_Scan; `send: None` is MPI_IN_PLACE.
pub fn scan(
    send: Option<SendBuf<'_, '_>>,
    recv: RecvBuf<'_, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<()> {
    if let Some(s) = &send {
        same_layout("MPI_Scan", s, &recv)?;
    }
    // SAFETY: as in `allreduce`.
    unsafe {
        scan::scan(
            send.map(|s| s.ptr()),
            recv.ptr(),
            recv.count(),
            dt(recv.datatype()),
            op,
            comm,
        )
    }
}

/// MPI_Exscan; `send: None` is MPI_IN_PLACE.
pub fn exscan(
    send: Option<SendBuf<'_, '_>>,
    recv: RecvBuf<'_, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<()> {
    if let Some(s) = &send {
        same_layout("MPI_Exscan", s, &recv)?;
    }
    // SAFETY: as in `allreduce`.
    unsafe {
        scan::exscan(
            send.map(|s| s.ptr()),
            recv.ptr(),
            recv.count(),
            dt(recv.datatype()),
            op,
            comm,
        )
    }
}

/// MPI_Reduce_local: `inout = input op inout`, element by element.
pub fn reduce_local(input: SendBuf<'_, '_>, inout: RecvBuf<'_, '_>, op: &Op) -> Result<()> {
    same_layout("MPI_Reduce_local", &input, &inout)?;
    // SAFETY: both descriptors are valid for this call, with the same layout, and cannot overlap (one is a shared borrow, the other an exclusive one).
    unsafe {
        reduce::reduce_local(
            input.ptr(),
            inout.ptr(),
            inout.count(),
            dt(inout.datatype()),
            op,
        )
    }
}

/// MPI_Ibcast: as [`bcast`], the buffer kept by `scope` until the request completes.
pub fn ibcast<'a>(
    scope: &impl BufScope<'a>,
    buf: RecvBuf<'a, '_>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    // SAFETY: the descriptor is valid for 'a, and `scope.enter` below keeps 'a from ending before the request completes.
    let r = unsafe { bcast::ibcast(buf.ptr(), buf.count(), dt(buf.datatype()), root, comm) }?;
    scope.enter(r);
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
        same_layout("MPI_Iallreduce", s, &recv)?;
    }
    // SAFETY: as in `ibcast`, for both descriptors (of the same layout).
    let r = unsafe {
        allreduce::iallreduce(
            send.map(|s| s.ptr()),
            recv.ptr(),
            recv.count(),
            dt(recv.datatype()),
            op,
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Ireduce: as [`reduce`], the buffers kept by `scope` until the request completes.
pub fn ireduce<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: Option<RecvBuf<'a, '_>>,
    op: &Op,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    let (count, d) = reduce_args("MPI_Ireduce", &send, &recv, root, comm)?;
    let rp = recv
        .as_ref()
        .map_or(std::ptr::NonNull::<u8>::dangling().as_ptr(), |r| r.ptr());
    // SAFETY: as in `reduce`, the descriptors valid for 'a, which `scope` keeps from ending before the request completes.
    let r = unsafe { reduce::ireduce(send.map(|s| s.ptr()), rp, count, d, op, root, comm) }?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Iscan: as [`scan`], the buffers kept by `scope` until the request completes.
pub fn iscan<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    if let Some(s) = &send {
        same_layout("MPI_Iscan", s, &recv)?;
    }
    // SAFETY: as in `iallreduce`.
    let r = unsafe {
        scan::iscan(
            send.map(|s| s.ptr()),
            recv.ptr(),
            recv.count(),
            dt(recv.datatype()),
            op,
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Iexscan: as [`exscan`], the buffers kept by `scope` until the request completes.
pub fn iexscan<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    if let Some(s) = &send {
        same_layout("MPI_Iexscan", s, &recv)?;
    }
    // SAFETY: as in `iallreduce`.
    let r = unsafe {
        scan::iexscan(
            send.map(|s| s.ptr()),
            recv.ptr(),
            recv.count(),
            dt(recv.datatype()),
            op,
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}
