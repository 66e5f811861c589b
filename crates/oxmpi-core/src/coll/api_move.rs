//! The data-movement collectives over typed buffer descriptors: gather, scatter,
//! allgather, alltoall (each with its v form), reduce_scatter(_block) and the
//! neighbourhood allgather(v)/alltoall, blocking and immediate; safe functions.
//!
//! A descriptor covers a whole buffer: its count is the buffer's capacity in
//! elements of its datatype. The per-rank blocks the call names (`n * count` for the
//! uniform forms; `counts[i]` elements from displacement `displs[i]` for the v forms,
//! in elements of the descriptor's datatype) are checked to lie inside it before the
//! raw kernel runs: a block reaching outside is MPI_ERR_BUFFER, a count or
//! displacement array shorter than the group MPI_ERR_ARG. A buffer significant only
//! at the root (`None` elsewhere) must be given where this rank is the root (the
//! rank `root` of an intracommunicator; MPI_ROOT on an intercommunicator).
//! `send: None` is MPI_IN_PLACE, read as the raw kernels read it.

use super::inter::ROOT;
use super::{allgather, alltoall, gather, neighbor, reduce_scatter, scatter};
use crate::buf::{BufScope, RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::{Datatype, Primitive};
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::Op;
use crate::request::Request;

fn dt(d: Option<&Datatype>) -> &Datatype {
    d.unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte))
}

fn sdt<'d>(s: &Option<SendBuf<'_, 'd>>) -> &'d Datatype {
    dt(s.as_ref().and_then(|s| s.datatype()))
}

fn rdt<'d>(r: &Option<RecvBuf<'_, 'd>>) -> &'d Datatype {
    dt(r.as_ref().and_then(|r| r.datatype()))
}

/// Where a descriptor that is not significant here is missing: an address the raw
/// kernels receive but, on this rank, never reach.
fn nowhere() -> *mut u8 {
    std::ptr::NonNull::<u8>::dangling().as_ptr()
}

/// This rank holds the root's buffer of a rooted collective.
fn at_root(comm: &Comm, root: i32) -> bool {
    if comm.is_inter() {
        root == ROOT
    } else {
        comm.rank() == root
    }
}

/// `n` consecutive blocks of `count` elements fit in a descriptor of `cap` elements.
fn check_uniform(call: &str, arg: &str, cap: usize, count: usize, n: usize) -> Result<()> {
    if count.checked_mul(n).is_none_or(|k| k > cap) {
        return Err(MpiError::arg(
            ErrorClass::Buffer,
            call,
            arg,
            format!("{n} blocks of {count} elements do not fit in its {cap} elements"),
        ));
    }
    Ok(())
}

/// Block `i` (`counts[i]` elements from element `displs[i]`) lies inside a
/// descriptor of `cap` elements, for each of the `n` ranks.
#[allow(clippy::too_many_arguments)]
fn check_blocks(
    call: &str,
    arg: &str,
    counts_arg: &str,
    displs_arg: &str,
    cap: usize,
    counts: &[usize],
    displs: &[isize],
    n: usize,
) -> Result<()> {
    if counts.len() < n {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            counts_arg,
            format!("has {} entries for {n} ranks", counts.len()),
        ));
    }
    if displs.len() < n {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            displs_arg,
            format!("has {} entries for {n} ranks", displs.len()),
        ));
    }
    for (i, (&c, &d)) in counts[..n].iter().zip(&displs[..n]).enumerate() {
        if c == 0 {
            continue;
        }
        if d < 0 || (d as usize).checked_add(c).is_none_or(|end| end > cap) {
            return Err(MpiError::arg(
                ErrorClass::Buffer,
                call,
                arg,
                format!("block {i} ({c} elements at displacement {d}) reaches outside its {cap} elements"),
            ));
        }
    }
    Ok(())
}

/// A buffer the call needs on this rank.
fn needed(call: &str, arg: &str) -> MpiError {
    MpiError::arg(
        ErrorClass::Buffer,
        call,
        arg,
        "this rank needs the buffer (it is the root, or the call is not in place)",
    )
}

/// The raw arguments of a rooted gather after the checks.
struct Rooted {
    send: Option<*const u8>,
    recv: *mut u8,
}

#[allow(clippy::too_many_arguments)]
fn gather_args(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    recv: &Option<RecvBuf<'_, '_>>,
    recvcount: Option<&[usize]>,
    displs: &[isize],
    count: usize,
    root: i32,
    comm: &Comm,
) -> Result<Rooted> {
    let recv_p = match recv {
        Some(r) if at_root(comm, root) => {
            let n = comm.peer_group_size().max(0) as usize;
            match recvcount {
                None => check_uniform(call, "recvbuf", r.count(), count, n)?,
                Some(counts) => check_blocks(
                    call,
                    "recvbuf",
                    "recvcounts",
                    "displs",
                    r.count(),
                    counts,
                    displs,
                    n,
                )?,
            }
            r.ptr()
        }
        Some(_) => nowhere(),
        None if at_root(comm, root) => return Err(needed(call, "recvbuf")),
        None => nowhere(),
    };
    // Without a send buffer the raw kernel either reads the root's block of the
    // receive buffer (in place, checked above) or refuses.
    Ok(Rooted {
        send: send.as_ref().map(|s| s.ptr()),
        recv: recv_p,
    })
}

/// MPI_Gather: `recv` (the root's) holds `n * recvcount` elements; `send: None` is
/// MPI_IN_PLACE at the root.
pub fn gather(
    send: Option<SendBuf<'_, '_>>,
    recv: Option<RecvBuf<'_, '_>>,
    recvcount: usize,
    root: i32,
    comm: &Comm,
) -> Result<()> {
    let a = gather_args("MPI_Gather", &send, &recv, None, &[], recvcount, root, comm)?;
    let sc = send.as_ref().map_or(0, |s| s.count());
    // SAFETY: every block the kernel reaches was checked to lie inside a descriptor
    // valid for this blocking call.
    unsafe {
        gather::gather(
            a.send,
            sc,
            sdt(&send),
            a.recv,
            recvcount,
            rdt(&recv),
            root,
            comm,
        )
    }
}

/// MPI_Igather: as [`gather`], the buffers kept by `scope` until the request completes.
pub fn igather<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: Option<RecvBuf<'a, '_>>,
    recvcount: usize,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    let a = gather_args(
        "MPI_Igather",
        &send,
        &recv,
        None,
        &[],
        recvcount,
        root,
        comm,
    )?;
    let sc = send.as_ref().map_or(0, |s| s.count());
    // SAFETY: as in `gather`, the descriptors valid for 'a, which `scope` keeps from
    // ending before the request completes.
    let r = unsafe {
        gather::igather(
            a.send,
            sc,
            sdt(&send),
            a.recv,
            recvcount,
            rdt(&recv),
            root,
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Gatherv: block `i` of the root's `recv` is `recvcounts[i]` elements at `displs[i]`.
pub fn gatherv(
    send: Option<SendBuf<'_, '_>>,
    recv: Option<RecvBuf<'_, '_>>,
    recvcounts: &[usize],
    displs: &[isize],
    root: i32,
    comm: &Comm,
) -> Result<()> {
    let a = gather_args(
        "MPI_Gatherv",
        &send,
        &recv,
        Some(recvcounts),
        displs,
        0,
        root,
        comm,
    )?;
    let sc = send.as_ref().map_or(0, |s| s.count());
    // SAFETY: as in `gather`.
    unsafe {
        gather::gatherv(
            a.send,
            sc,
            sdt(&send),
            a.recv,
            recvcounts,
            displs,
            rdt(&recv),
            root,
            comm,
        )
    }
}

/// MPI_Igatherv: as [`gatherv`], the buffers kept by `scope` until the request completes.
pub fn igatherv<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: Option<RecvBuf<'a, '_>>,
    recvcounts: &[usize],
    displs: &[isize],
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    let a = gather_args(
        "MPI_Igatherv",
        &send,
        &recv,
        Some(recvcounts),
        displs,
        0,
        root,
        comm,
    )?;
    let sc = send.as_ref().map_or(0, |s| s.count());
    // SAFETY: as in `igather`.
    let r = unsafe {
        gather::igatherv(
            a.send,
            sc,
            sdt(&send),
            a.recv,
            recvcounts,
            displs,
            rdt(&recv),
            root,
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

fn scatter_args(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    counts: Option<&[usize]>,
    displs: &[isize],
    count: usize,
    root: i32,
    comm: &Comm,
) -> Result<*const u8> {
    Ok(match send {
        Some(s) if at_root(comm, root) => {
            let n = comm.peer_group_size().max(0) as usize;
            match counts {
                None => check_uniform(call, "sendbuf", s.count(), count, n)?,
                Some(c) => check_blocks(
                    call,
                    "sendbuf",
                    "sendcounts",
                    "displs",
                    s.count(),
                    c,
                    displs,
                    n,
                )?,
            }
            s.ptr()
        }
        Some(_) => nowhere(),
        None if at_root(comm, root) => return Err(needed(call, "sendbuf")),
        None => nowhere(),
    })
}

/// MPI_Scatter: the root's `send` holds `n * sendcount` elements; `recv: None` is
/// MPI_IN_PLACE at the root.
pub fn scatter(
    send: Option<SendBuf<'_, '_>>,
    sendcount: usize,
    recv: Option<RecvBuf<'_, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<()> {
    let sp = scatter_args("MPI_Scatter", &send, None, &[], sendcount, root, comm)?;
    let rc = recv.as_ref().map_or(0, |r| r.count());
    // SAFETY: as in `gather`.
    unsafe {
        scatter::scatter(
            sp,
            sendcount,
            sdt(&send),
            recv.as_ref().map(|r| r.ptr()),
            rc,
            rdt(&recv),
            root,
            comm,
        )
    }
}

/// MPI_Iscatter: as [`scatter`], the buffers kept by `scope` until the request completes.
pub fn iscatter<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sendcount: usize,
    recv: Option<RecvBuf<'a, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    let sp = scatter_args("MPI_Iscatter", &send, None, &[], sendcount, root, comm)?;
    let rc = recv.as_ref().map_or(0, |r| r.count());
    // SAFETY: as in `igather`.
    let r = unsafe {
        scatter::iscatter(
            sp,
            sendcount,
            sdt(&send),
            recv.as_ref().map(|r| r.ptr()),
            rc,
            rdt(&recv),
            root,
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Scatterv: block `i` of the root's `send` is `sendcounts[i]` elements at `displs[i]`.
pub fn scatterv(
    send: Option<SendBuf<'_, '_>>,
    sendcounts: &[usize],
    displs: &[isize],
    recv: Option<RecvBuf<'_, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<()> {
    let sp = scatter_args(
        "MPI_Scatterv",
        &send,
        Some(sendcounts),
        displs,
        0,
        root,
        comm,
    )?;
    let rc = recv.as_ref().map_or(0, |r| r.count());
    // SAFETY: as in `gather`.
    unsafe {
        scatter::scatterv(
            sp,
            sendcounts,
            displs,
            sdt(&send),
            recv.as_ref().map(|r| r.ptr()),
            rc,
            rdt(&recv),
            root,
            comm,
        )
    }
}

/// MPI_Iscatterv: as [`scatterv`], the buffers kept by `scope` until the request completes.
pub fn iscatterv<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sendcounts: &[usize],
    displs: &[isize],
    recv: Option<RecvBuf<'a, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    let sp = scatter_args(
        "MPI_Iscatterv",
        &send,
        Some(sendcounts),
        displs,
        0,
        root,
        comm,
    )?;
    let rc = recv.as_ref().map_or(0, |r| r.count());
    // SAFETY: as in `igather`.
    let r = unsafe {
        scatter::iscatterv(
            sp,
            sendcounts,
            displs,
            sdt(&send),
            recv.as_ref().map(|r| r.ptr()),
            rc,
            rdt(&recv),
            root,
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

/// The number of blocks an all-to-all buffer holds: one per rank of the peer group.
fn peers(comm: &Comm) -> usize {
    comm.peer_group_size().max(0) as usize
}

/// MPI_Allgather: `recv` holds `n * recvcount` elements; `send: None` is MPI_IN_PLACE.
pub fn allgather(
    send: Option<SendBuf<'_, '_>>,
    recv: RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    check_uniform(
        "MPI_Allgather",
        "recvbuf",
        recv.count(),
        recvcount,
        peers(comm),
    )?;
    let sc = send.as_ref().map_or(0, |s| s.count());
    // SAFETY: as in `gather`.
    unsafe {
        allgather::allgather(
            send.as_ref().map(|s| s.ptr()),
            sc,
            sdt(&send),
            recv.ptr(),
            recvcount,
            dt(recv.datatype()),
            comm,
        )
    }
}

/// MPI_Iallgather: as [`allgather`], the buffers kept by `scope` until the request completes.
pub fn iallgather<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    check_uniform(
        "MPI_Iallgather",
        "recvbuf",
        recv.count(),
        recvcount,
        peers(comm),
    )?;
    let sc = send.as_ref().map_or(0, |s| s.count());
    // SAFETY: as in `igather`.
    let r = unsafe {
        allgather::iallgather(
            send.as_ref().map(|s| s.ptr()),
            sc,
            sdt(&send),
            recv.ptr(),
            recvcount,
            dt(recv.datatype()),
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Allgatherv: block `i` of `recv` is `recvcounts[i]` elements at `displs[i]`.
pub fn allgatherv(
    send: Option<SendBuf<'_, '_>>,
    recv: RecvBuf<'_, '_>,
    recvcounts: &[usize],
    displs: &[isize],
    comm: &Comm,
) -> Result<()> {
    check_blocks(
        "MPI_Allgatherv",
        "recvbuf",
        "recvcounts",
        "displs",
        recv.count(),
        recvcounts,
        displs,
        peers(comm),
    )?;
    let sc = send.as_ref().map_or(0, |s| s.count());
    // SAFETY: as in `gather`.
    unsafe {
        allgather::allgatherv(
            send.as_ref().map(|s| s.ptr()),
            sc,
            sdt(&send),
            recv.ptr(),
            recvcounts,
            displs,
            dt(recv.datatype()),
            comm,
        )
    }
}

/// MPI_Iallgatherv: as [`allgatherv`], the buffers kept by `scope` until the request completes.
pub fn iallgatherv<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcounts: &[usize],
    displs: &[isize],
    comm: &Comm,
) -> Result<Request> {
    check_blocks(
        "MPI_Iallgatherv",
        "recvbuf",
        "recvcounts",
        "displs",
        recv.count(),
        recvcounts,
        displs,
        peers(comm),
    )?;
    let sc = send.as_ref().map_or(0, |s| s.count());
    // SAFETY: as in `igather`.
    let r = unsafe {
        allgather::iallgatherv(
            send.as_ref().map(|s| s.ptr()),
            sc,
            sdt(&send),
            recv.ptr(),
            recvcounts,
            displs,
            dt(recv.datatype()),
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

fn alltoall_check(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    sendcount: usize,
    recv: &RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    let n = peers(comm);
    if let Some(s) = send {
        check_uniform(call, "sendbuf", s.count(), sendcount, n)?;
    }
    check_uniform(call, "recvbuf", recv.count(), recvcount, n)
}

/// MPI_Alltoall: `send` holds `n * sendcount` elements, `recv` `n * recvcount`;
/// `send: None` is MPI_IN_PLACE (the blocks are read from `recv`).
pub fn alltoall(
    send: Option<SendBuf<'_, '_>>,
    sendcount: usize,
    recv: RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    alltoall_check("MPI_Alltoall", &send, sendcount, &recv, recvcount, comm)?;
    // SAFETY: as in `gather`.
    unsafe {
        alltoall::alltoall(
            send.as_ref().map(|s| s.ptr()),
            sendcount,
            sdt(&send),
            recv.ptr(),
            recvcount,
            dt(recv.datatype()),
            comm,
        )
    }
}

/// MPI_Ialltoall: as [`alltoall`], the buffers kept by `scope` until the request completes.
pub fn ialltoall<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sendcount: usize,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    alltoall_check("MPI_Ialltoall", &send, sendcount, &recv, recvcount, comm)?;
    // SAFETY: as in `igather`.
    let r = unsafe {
        alltoall::ialltoall(
            send.as_ref().map(|s| s.ptr()),
            sendcount,
            sdt(&send),
            recv.ptr(),
            recvcount,
            dt(recv.datatype()),
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

/// The send and receive blocks of an alltoallv (each side's counts and displacements).
pub struct Blocks<'c> {
    pub counts: &'c [usize],
    pub displs: &'c [isize],
}

fn alltoallv_check(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    sb: &Blocks<'_>,
    recv: &RecvBuf<'_, '_>,
    rb: &Blocks<'_>,
    comm: &Comm,
) -> Result<()> {
    let n = peers(comm);
    if let Some(s) = send {
        check_blocks(
            call,
            "sendbuf",
            "sendcounts",
            "sdispls",
            s.count(),
            sb.counts,
            sb.displs,
            n,
        )?;
    }
    check_blocks(
        call,
        "recvbuf",
        "recvcounts",
        "rdispls",
        recv.count(),
        rb.counts,
        rb.displs,
        n,
    )
}

/// MPI_Alltoallv: block `i` of each side is `counts[i]` elements at `displs[i]`;
/// `send: None` is MPI_IN_PLACE.
pub fn alltoallv(
    send: Option<SendBuf<'_, '_>>,
    sb: Blocks<'_>,
    recv: RecvBuf<'_, '_>,
    rb: Blocks<'_>,
    comm: &Comm,
) -> Result<()> {
    alltoallv_check("MPI_Alltoallv", &send, &sb, &recv, &rb, comm)?;
    // SAFETY: as in `gather`.
    unsafe {
        alltoall::alltoallv(
            send.as_ref().map(|s| s.ptr()),
            sb.counts,
            sb.displs,
            sdt(&send),
            recv.ptr(),
            rb.counts,
            rb.displs,
            dt(recv.datatype()),
            comm,
        )
    }
}

/// MPI_Ialltoallv: as [`alltoallv`], the buffers kept by `scope` until the request completes.
pub fn ialltoallv<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sb: Blocks<'_>,
    recv: RecvBuf<'a, '_>,
    rb: Blocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    alltoallv_check("MPI_Ialltoallv", &send, &sb, &recv, &rb, comm)?;
    // SAFETY: as in `igather`.
    let r = unsafe {
        alltoall::ialltoallv(
            send.as_ref().map(|s| s.ptr()),
            sb.counts,
            sb.displs,
            sdt(&send),
            recv.ptr(),
            rb.counts,
            rb.displs,
            dt(recv.datatype()),
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

/// The bytes a descriptor of the w forms covers: a byte descriptor's count, or a
/// contiguous one's `count * size` (the w forms place blocks at byte displacements).
fn span(call: &str, arg: &str, count: usize, d: Option<&Datatype>) -> Result<usize> {
    let Some(d) = d else { return Ok(count) };
    if d.true_lb() != 0 || d.size() as isize != d.extent() || d.true_extent() != d.extent() {
        return Err(MpiError::arg(
            ErrorClass::Buffer,
            call,
            arg,
            "the w forms take a byte (or contiguous) buffer; its datatype has gaps",
        ));
    }
    count
        .checked_mul(d.size())
        .ok_or_else(|| MpiError::arg(ErrorClass::Buffer, call, arg, "its size overflows"))
}

/// Each of the `n` blocks (`counts[i]` elements of `types[i]` from byte `displs[i]`)
/// lies inside `len` bytes.
#[allow(clippy::too_many_arguments)]
fn check_w(
    call: &str,
    arg: &str,
    len: usize,
    counts: &[usize],
    displs: &[isize],
    types: &[Datatype],
    n: usize,
) -> Result<()> {
    if counts.len() < n || displs.len() < n || types.len() < n {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            arg,
            format!(
                "counts, displacements and datatypes ({}, {}, {}) for {n} ranks",
                counts.len(),
                displs.len(),
                types.len()
            ),
        ));
    }
    for i in 0..n {
        if counts[i] == 0 || types[i].size() == 0 {
            continue;
        }
        let d = displs[i];
        if d < 0 || d as usize > len {
            return Err(MpiError::arg(
                ErrorClass::Buffer,
                call,
                arg,
                format!("block {i} starts at byte {d}, outside its {len} bytes"),
            ));
        }
        crate::buf::check_reach(call, arg, len - d as usize, counts[i], &types[i])?;
    }
    Ok(())
}

/// One side of an alltoallw: per peer a count, a byte displacement and a datatype.
pub struct WBlocks<'c> {
    pub counts: &'c [usize],
    pub displs: &'c [isize],
    pub types: &'c [Datatype],
}

fn alltoallw_check(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    sb: &WBlocks<'_>,
    recv: &RecvBuf<'_, '_>,
    rb: &WBlocks<'_>,
    comm: &Comm,
) -> Result<()> {
    let n = peers(comm);
    if let Some(s) = send {
        let len = span(call, "sendbuf", s.count(), s.datatype())?;
        check_w(call, "sendbuf", len, sb.counts, sb.displs, sb.types, n)?;
    }
    let len = span(call, "recvbuf", recv.count(), recv.datatype())?;
    check_w(call, "recvbuf", len, rb.counts, rb.displs, rb.types, n)
}

/// MPI_Alltoallw: byte descriptors ([`SendBuf::bytes`]), each peer's block
/// `counts[i]` elements of `types[i]` from byte `displs[i]`; `send: None` is MPI_IN_PLACE.
pub fn alltoallw(
    send: Option<SendBuf<'_, '_>>,
    sb: WBlocks<'_>,
    recv: RecvBuf<'_, '_>,
    rb: WBlocks<'_>,
    comm: &Comm,
) -> Result<()> {
    alltoallw_check("MPI_Alltoallw", &send, &sb, &recv, &rb, comm)?;
    // SAFETY: as in `gather`: each block's reach was checked against its descriptor's bytes.
    unsafe {
        alltoall::alltoallw(
            send.as_ref().map(|s| s.ptr()),
            sb.counts,
            sb.displs,
            sb.types,
            recv.ptr(),
            rb.counts,
            rb.displs,
            rb.types,
            comm,
        )
    }
}

/// MPI_Ialltoallw: as [`alltoallw`], the buffers kept by `scope` until the request completes.
pub fn ialltoallw<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sb: WBlocks<'_>,
    recv: RecvBuf<'a, '_>,
    rb: WBlocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    alltoallw_check("MPI_Ialltoallw", &send, &sb, &recv, &rb, comm)?;
    // SAFETY: as in `igather`.
    let r = unsafe {
        alltoall::ialltoallw(
            send.as_ref().map(|s| s.ptr()),
            sb.counts,
            sb.displs,
            sb.types,
            recv.ptr(),
            rb.counts,
            rb.displs,
            rb.types,
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

/// The checks of a reduce-scatter: one datatype layout on both sides, the input
/// (`send`, or `recv` in place) `sum(counts)` elements, `recv` this rank's block.
fn reduce_scatter_check(
    call: &str,
    send: &Option<SendBuf<'_, '_>>,
    recv: &RecvBuf<'_, '_>,
    counts: &[usize],
    comm: &Comm,
) -> Result<()> {
    let n = comm.size().max(0) as usize;
    if counts.len() < n {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            "recvcounts",
            format!("has {} entries for {n} ranks", counts.len()),
        ));
    }
    let total = counts[..n]
        .iter()
        .try_fold(0usize, |a, &c| a.checked_add(c))
        .ok_or_else(|| {
            MpiError::arg(ErrorClass::Count, call, "recvcounts", "the total overflows")
        })?;
    let mine = counts.get(comm.rank() as usize).copied().unwrap_or(0);
    let layout = |d: &Datatype| (d.size(), d.extent(), d.true_lb(), d.true_extent());
    match send {
        Some(s) => {
            if layout(dt(s.datatype())) != layout(dt(recv.datatype())) {
                return Err(MpiError::arg(
                    ErrorClass::Buffer,
                    call,
                    "recvbuf",
                    "the receive buffer's datatype does not have the send buffer's layout",
                ));
            }
            check_uniform(call, "sendbuf", s.count(), total, 1)?;
            check_uniform(call, "recvbuf", recv.count(), mine, 1)
        }
        None => check_uniform(call, "recvbuf", recv.count(), total, 1),
    }
}

/// MPI_Reduce_scatter: the input (`send`, or `recv` for `send: None`, MPI_IN_PLACE)
/// is `sum(recvcounts)` elements; this rank receives its block in `recv`.
pub fn reduce_scatter(
    send: Option<SendBuf<'_, '_>>,
    recv: RecvBuf<'_, '_>,
    recvcounts: &[usize],
    op: &Op,
    comm: &Comm,
) -> Result<()> {
    reduce_scatter_check("MPI_Reduce_scatter", &send, &recv, recvcounts, comm)?;
    // SAFETY: as in `gather`.
    unsafe {
        reduce_scatter::reduce_scatter(
            send.as_ref().map(|s| s.ptr()),
            recv.ptr(),
            recvcounts,
            dt(recv.datatype()),
            op,
            comm,
        )
    }
}

/// MPI_Ireduce_scatter: as [`reduce_scatter`], the buffers kept by `scope` until the request completes.
pub fn ireduce_scatter<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcounts: &[usize],
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    reduce_scatter_check("MPI_Ireduce_scatter", &send, &recv, recvcounts, comm)?;
    // SAFETY: as in `igather`.
    let r = unsafe {
        reduce_scatter::ireduce_scatter(
            send.as_ref().map(|s| s.ptr()),
            recv.ptr(),
            recvcounts,
            dt(recv.datatype()),
            op,
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Reduce_scatter_block: [`reduce_scatter`] with `recvcount` for every rank.
pub fn reduce_scatter_block(
    send: Option<SendBuf<'_, '_>>,
    recv: RecvBuf<'_, '_>,
    recvcount: usize,
    op: &Op,
    comm: &Comm,
) -> Result<()> {
    let counts = vec![recvcount; comm.size().max(0) as usize];
    reduce_scatter_check("MPI_Reduce_scatter_block", &send, &recv, &counts, comm)?;
    // SAFETY: as in `gather`.
    unsafe {
        reduce_scatter::reduce_scatter_block(
            send.as_ref().map(|s| s.ptr()),
            recv.ptr(),
            recvcount,
            dt(recv.datatype()),
            op,
            comm,
        )
    }
}

/// MPI_Ireduce_scatter_block: as [`reduce_scatter_block`], the buffers kept by `scope`
/// until the request completes.
pub fn ireduce_scatter_block<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    let counts = vec![recvcount; comm.size().max(0) as usize];
    reduce_scatter_check("MPI_Ireduce_scatter_block", &send, &recv, &counts, comm)?;
    // SAFETY: as in `igather`.
    let r = unsafe {
        reduce_scatter::ireduce_scatter_block(
            send.as_ref().map(|s| s.ptr()),
            recv.ptr(),
            recvcount,
            dt(recv.datatype()),
            op,
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

/// The neighbourhood collectives' checks: the receive descriptor holds the in-degree's
/// blocks, the send descriptor the out-degree's (alltoall) or one block (allgather).
#[allow(clippy::too_many_arguments)]
fn neighbor_check(
    call: &str,
    send: &SendBuf<'_, '_>,
    sendcount: usize,
    per_dest: bool,
    recv: &RecvBuf<'_, '_>,
    rb: Option<&Blocks<'_>>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    let (indeg, outdeg) = neighbor::degrees(call, comm)?;
    check_uniform(
        call,
        "sendbuf",
        send.count(),
        sendcount,
        if per_dest { outdeg } else { 1 },
    )?;
    match rb {
        None => check_uniform(call, "recvbuf", recv.count(), recvcount, indeg),
        Some(b) => check_blocks(
            call,
            "recvbuf",
            "recvcounts",
            "displs",
            recv.count(),
            b.counts,
            b.displs,
            indeg,
        ),
    }
}

/// MPI_Neighbor_allgather: `send` (`sendcount` elements) to every out-neighbour;
/// `recv` holds a block of `recvcount` elements per in-neighbour.
pub fn neighbor_allgather(
    send: SendBuf<'_, '_>,
    sendcount: usize,
    recv: RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    neighbor_check(
        "MPI_Neighbor_allgather",
        &send,
        sendcount,
        false,
        &recv,
        None,
        recvcount,
        comm,
    )?;
    // SAFETY: as in `gather`.
    unsafe {
        neighbor::neighbor_allgather(
            send.ptr(),
            sendcount,
            dt(send.datatype()),
            recv.ptr(),
            recvcount,
            dt(recv.datatype()),
            comm,
        )
    }
}

/// MPI_Ineighbor_allgather: as [`neighbor_allgather`], the buffers kept by `scope`
/// until the request completes.
pub fn ineighbor_allgather<'a>(
    scope: &impl BufScope<'a>,
    send: SendBuf<'a, '_>,
    sendcount: usize,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    neighbor_check(
        "MPI_Ineighbor_allgather",
        &send,
        sendcount,
        false,
        &recv,
        None,
        recvcount,
        comm,
    )?;
    // SAFETY: as in `igather`.
    let r = unsafe {
        neighbor::ineighbor_allgather(
            send.ptr(),
            sendcount,
            dt(send.datatype()),
            recv.ptr(),
            recvcount,
            dt(recv.datatype()),
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Neighbor_allgatherv: block `i` of `recv` (from in-neighbour `i`) is
/// `counts[i]` elements at `displs[i]`.
pub fn neighbor_allgatherv(
    send: SendBuf<'_, '_>,
    sendcount: usize,
    recv: RecvBuf<'_, '_>,
    rb: Blocks<'_>,
    comm: &Comm,
) -> Result<()> {
    neighbor_check(
        "MPI_Neighbor_allgatherv",
        &send,
        sendcount,
        false,
        &recv,
        Some(&rb),
        0,
        comm,
    )?;
    // SAFETY: as in `gather`.
    unsafe {
        neighbor::neighbor_allgatherv(
            send.ptr(),
            sendcount,
            dt(send.datatype()),
            recv.ptr(),
            rb.counts,
            rb.displs,
            dt(recv.datatype()),
            comm,
        )
    }
}

/// MPI_Neighbor_alltoall: block `j` of `send` (`sendcount` elements) to out-neighbour
/// `j`, block `i` of `recv` (`recvcount`) from in-neighbour `i`.
pub fn neighbor_alltoall(
    send: SendBuf<'_, '_>,
    sendcount: usize,
    recv: RecvBuf<'_, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<()> {
    neighbor_check(
        "MPI_Neighbor_alltoall",
        &send,
        sendcount,
        true,
        &recv,
        None,
        recvcount,
        comm,
    )?;
    // SAFETY: as in `gather`.
    unsafe {
        neighbor::neighbor_alltoall(
            send.ptr(),
            sendcount,
            dt(send.datatype()),
            recv.ptr(),
            recvcount,
            dt(recv.datatype()),
            comm,
        )
    }
}

/// MPI_Ineighbor_alltoall: as [`neighbor_alltoall`], the buffers kept by `scope`
/// until the request completes.
pub fn ineighbor_alltoall<'a>(
    scope: &impl BufScope<'a>,
    send: SendBuf<'a, '_>,
    sendcount: usize,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    neighbor_check(
        "MPI_Ineighbor_alltoall",
        &send,
        sendcount,
        true,
        &recv,
        None,
        recvcount,
        comm,
    )?;
    // SAFETY: as in `igather`.
    let r = unsafe {
        neighbor::ineighbor_alltoall(
            send.ptr(),
            sendcount,
            dt(send.datatype()),
            recv.ptr(),
            recvcount,
            dt(recv.datatype()),
            comm,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_blocks_must_fit() {
        assert!(check_uniform("c", "recvbuf", 12, 3, 4).is_ok());
        assert_eq!(
            check_uniform("c", "recvbuf", 11, 3, 4).unwrap_err().class,
            ErrorClass::Buffer
        );
        assert!(check_uniform("c", "recvbuf", 0, usize::MAX, 2).is_err());
    }

    #[test]
    fn v_blocks_stay_inside_the_descriptor() {
        let f = |cap, c: &[usize], d: &[isize], n| {
            check_blocks("c", "recvbuf", "recvcounts", "displs", cap, c, d, n)
        };
        assert!(f(10, &[2, 3], &[0, 7], 2).is_ok());
        assert_eq!(
            f(10, &[2, 3], &[0, 8], 2).unwrap_err().class,
            ErrorClass::Buffer
        );
        assert_eq!(
            f(10, &[2, 3], &[-1, 0], 2).unwrap_err().class,
            ErrorClass::Buffer
        );
        assert_eq!(
            f(10, &[1, isize::MAX as usize], &[0, isize::MAX], 2)
                .unwrap_err()
                .class,
            ErrorClass::Buffer
        );
        // Empty blocks reach nothing, wherever they point.
        assert!(f(0, &[0, 0], &[-5, 99], 2).is_ok());
        // Arrays shorter than the group: MPI_ERR_ARG, not an index panic.
        assert_eq!(f(10, &[1], &[0, 0], 2).unwrap_err().class, ErrorClass::Arg);
        assert_eq!(f(10, &[1, 1], &[0], 2).unwrap_err().class, ErrorClass::Arg);
    }

    #[test]
    fn w_blocks_are_checked_by_their_own_datatype() {
        let int = Datatype::predefined(Primitive::Int32);
        let vec = Datatype::vector(2, 1, 3, &int).unwrap(); // reaches 16 bytes
        let types = [int.clone(), vec.clone()];
        let f = |len, d: &[isize]| check_w("c", "recvbuf", len, &[2, 1], d, &types, 2);
        assert!(f(24, &[0, 8]).is_ok());
        assert_eq!(f(23, &[0, 8]).unwrap_err().class, ErrorClass::Buffer);
        assert_eq!(f(64, &[-4, 8]).unwrap_err().class, ErrorClass::Buffer);
        assert_eq!(f(64, &[0, 65]).unwrap_err().class, ErrorClass::Buffer);
        assert_eq!(
            check_w("c", "recvbuf", 64, &[1], &[0], &types, 2)
                .unwrap_err()
                .class,
            ErrorClass::Arg
        );
        // A descriptor with gaps has no byte span for the w forms.
        assert!(span("c", "recvbuf", 4, Some(&vec)).is_err());
        assert_eq!(span("c", "recvbuf", 4, Some(&int)).unwrap(), 16);
        assert_eq!(span("c", "recvbuf", 7, None).unwrap(), 7);
    }
}
