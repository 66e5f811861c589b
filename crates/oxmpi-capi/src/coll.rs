//! Collectives: the engine's `coll::*` for intra- and intercommunicators
//! (the engine dispatches intercommunicators itself; `root` passes MPI_ROOT and
//! MPI_PROC_NULL through), blocking and immediate, and the neighbourhood
//! collectives. MPI_IN_PLACE is the engine's `None` buffer.
//!
//! Arguments that MPI calls "significant only at root" (or not significant
//! with MPI_IN_PLACE) are not checked where they are not significant: programs
//! may pass anything there (often MPI_DATATYPE_NULL, NULL arrays).
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement: buffers holding their counts of their datatypes
//! (for immediate forms, until the request completes), arrays of the length the
//! standard gives, OUT arguments writable and aliasing no other argument.

use std::ffi::{c_int, c_void};

use oxmpi_core::coll;
use oxmpi_core::datatype::{Datatype, Primitive};
use oxmpi_core::error::{ErrorClass, Result as CoreResult};
use oxmpi_core::op::Op;
use oxmpi_core::{Comm, Request};

use crate::abi::*;
use crate::dtype::committed;
use crate::env::comm;
use crate::errors::{array, bad, ffi, out, R};
use crate::misc::op;
use crate::p2p::new_request;
use crate::types::*;

// ----- argument helpers ----------------------------------------------------------------

fn is_in_place(p: *const c_void) -> bool {
    p as usize == MPI_IN_PLACE
}

/// A send buffer: `None` for MPI_IN_PLACE.
fn sendbuf(p: *const c_void) -> Option<*const u8> {
    (!is_in_place(p)).then_some(p as *const u8)
}

fn count(call: &str, arg: &str, n: c_int) -> R<usize> {
    if n < 0 {
        return Err(bad(ErrorClass::Count, call, arg, format!("{n} is negative")));
    }
    Ok(n as usize)
}

/// A count that only matters where `significant`.
fn count_if(call: &str, arg: &str, n: c_int, significant: bool) -> R<usize> {
    if significant {
        count(call, arg, n)
    } else {
        Ok(n.max(0) as usize)
    }
}

fn byte() -> Datatype {
    Datatype::predefined(Primitive::Byte)
}

/// A datatype that only matters where `significant` (elsewhere any value goes).
fn dtype_if(h: MPI_Datatype, call: &str, arg: &str, significant: bool) -> R<Datatype> {
    if significant {
        committed(h, call, arg)
    } else {
        Ok(committed(h, call, arg).unwrap_or_else(|_| byte()))
    }
}

/// A counts array of `n` entries; a negative entry is MPI_ERR_COUNT naming it.
///
/// # Safety
/// As [`array`].
unsafe fn counts(call: &str, arg: &str, p: *const c_int, n: usize) -> R<Vec<usize>> {
    // SAFETY: this function's contract is `array`'s.
    let v = unsafe { array(call, arg, p, n)? };
    v.iter()
        .enumerate()
        .map(|(i, &c)| if c < 0 { Err(bad(ErrorClass::Count, call, arg, format!("{arg}[{i}] = {c} is negative"))) } else { Ok(c as usize) })
        .collect()
}

/// A displacements array of `n` ints.
///
/// # Safety
/// As [`array`].
unsafe fn displs(call: &str, arg: &str, p: *const c_int, n: usize) -> R<Vec<isize>> {
    // SAFETY: this function's contract is `array`'s.
    Ok(unsafe { array(call, arg, p, n)? }.iter().map(|&d| d as isize).collect())
}

/// A displacements array of `n` addresses.
///
/// # Safety
/// As [`array`].
unsafe fn aint_displs(call: &str, arg: &str, p: *const MPI_Aint, n: usize) -> R<Vec<isize>> {
    // SAFETY: this function's contract is `array`'s.
    Ok(unsafe { array(call, arg, p, n)? }.to_vec())
}

/// An array of `n` datatype handles, each committed.
///
/// # Safety
/// As [`array`].
unsafe fn dtypes(call: &str, arg: &str, p: *const MPI_Datatype, n: usize) -> R<Vec<Datatype>> {
    // SAFETY: this function's contract is `array`'s.
    let hs = unsafe { array(call, arg, p, n)? };
    hs.iter().enumerate().map(|(i, &h)| committed(h, call, &format!("{arg}[{i}]"))).collect()
}

/// Whether this rank is the root of a rooted collective (intra: `root ==
/// rank`; inter: `root == MPI_ROOT`), i.e. the root-only arguments matter.
fn at_root(cm: &Comm, root: c_int) -> bool {
    if cm.is_inter() {
        root == MPI_ROOT
    } else {
        root == cm.rank()
    }
}

/// Whether this rank contributes data to a rooted collective (everybody on an
/// intracommunicator; the non-root group on an intercommunicator).
fn is_leaf(cm: &Comm, root: c_int) -> bool {
    !cm.is_inter() || (root != MPI_ROOT && root != MPI_PROC_NULL)
}

/// Blocking (`request == None`) or immediate: runs the matching engine call.
/// `request` is the immediate form's `request` argument, already passed
/// through [`out`]; its error, if any, is reported here, after the other checks.
fn go(c: MPI_Comm, request: Option<R<&mut MPI_Request>>, blocking: impl FnOnce() -> CoreResult<()>, immediate: impl FnOnce() -> CoreResult<Request>) -> R<()> {
    match request {
        None => Ok(blocking()?),
        Some(o) => {
            let o = o?;
            let r = immediate()?;
            *o = new_request(r, c, None);
            Ok(())
        }
    }
}

fn names(blocking: &'static str, immediate: &'static str, request: Option<*mut MPI_Request>) -> &'static str {
    if request.is_some() {
        immediate
    } else {
        blocking
    }
}

// ----- broadcast, gather, scatter ------------------------------------------------------

unsafe fn bcast(buf: *mut c_void, n: c_int, dt: MPI_Datatype, root: c_int, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Bcast", "MPI_Ibcast", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let sig = !cm.is_inter() || root == MPI_ROOT || is_leaf(&cm, root);
        let n = count_if(call, "count", n, sig)?;
        let dt = dtype_if(dt, call, "datatype", sig)?;
        let b = buf as *mut u8;
        go(
            c,
            req,
            // SAFETY: `b` holds `n` elements of `dt` (read at the root, written elsewhere), as MPI_Bcast requires of its C caller, until this blocking call returns.
            || unsafe { coll::bcast::bcast(b, n, &dt, root, &cm) },
            // SAFETY: as above, and MPI_Ibcast's caller leaves the buffers alone until the request completes.
            || unsafe { coll::bcast::ibcast(b, n, &dt, root, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Bcast(buf: *mut c_void, n: c_int, dt: MPI_Datatype, root: c_int, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `bcast` needs what MPI_Bcast demands of them.
    unsafe { bcast(buf, n, dt, root, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ibcast(buf: *mut c_void, n: c_int, dt: MPI_Datatype, root: c_int, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `bcast` needs what MPI_Ibcast demands of them.
    unsafe { bcast(buf, n, dt, root, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn gather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Gather", "MPI_Igather", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let (is_root, leaf) = (at_root(&cm, root), is_leaf(&cm, root));
        let send_sig = leaf && !(is_root && is_in_place(sb));
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let rc = count_if(call, "recvcount", rc, is_root)?;
        let rt = dtype_if(rt, call, "recvtype", is_root)?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            c,
            req,
            // SAFETY: `s` (unless MPI_IN_PLACE) holds `sc` × `st`; `r` holds `rc` × `rt` per rank, at the root only, as MPI_Gather requires of its C caller, until this blocking call returns.
            || unsafe { coll::gather::gather(s, sc, &st, r, rc, &rt, root, &cm) },
            // SAFETY: as above, and MPI_Igather's caller leaves the buffers alone until the request completes.
            || unsafe { coll::gather::igather(s, sc, &st, r, rc, &rt, root, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Gather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `gather` needs what MPI_Gather demands of them.
    unsafe { gather(sb, sc, st, rb, rc, rt, root, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Igather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `gather` needs what MPI_Igather demands of them.
    unsafe { gather(sb, sc, st, rb, rc, rt, root, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn gatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Gatherv", "MPI_Igatherv", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let (is_root, leaf) = (at_root(&cm, root), is_leaf(&cm, root));
        let send_sig = leaf && !(is_root && is_in_place(sb));
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let n = if is_root { cm.peer_group_size() as usize } else { 0 };
        // SAFETY: at the root, MPI_Gatherv's `recvcounts` and `displs` have one entry per process of the (remote) group, `n`; elsewhere `n` is 0 and they are not read.
        let (rcs, ds) = unsafe { (counts(call, "recvcounts", rcs, n)?, displs(call, "displs", ds, n)?) };
        let rt = dtype_if(rt, call, "recvtype", is_root)?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            c,
            req,
            // SAFETY: `s` (unless MPI_IN_PLACE) holds `sc` × `st`; at the root `r` holds `rcs[i]` × `rt` at `ds[i]` per rank, as MPI_Gatherv requires of its C caller, until this blocking call returns.
            || unsafe { coll::gather::gatherv(s, sc, &st, r, &rcs, &ds, &rt, root, &cm) },
            // SAFETY: as above, and MPI_Igatherv's caller leaves the buffers alone until the request completes.
            || unsafe { coll::gather::igatherv(s, sc, &st, r, &rcs, &ds, &rt, root, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Gatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `gatherv` needs what MPI_Gatherv demands of them.
    unsafe { gatherv(sb, sc, st, rb, rcs, ds, rt, root, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Igatherv(
    sb: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    ds: *const c_int,
    rt: MPI_Datatype,
    root: c_int,
    c: MPI_Comm,
    r: *mut MPI_Request,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `gatherv` needs what MPI_Igatherv demands of them.
    unsafe { gatherv(sb, sc, st, rb, rcs, ds, rt, root, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn scatter(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Scatter", "MPI_Iscatter", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let (is_root, leaf) = (at_root(&cm, root), is_leaf(&cm, root));
        let recv_sig = leaf && !(is_root && is_in_place(rb));
        let sc = count_if(call, "sendcount", sc, is_root)?;
        let st = dtype_if(st, call, "sendtype", is_root)?;
        let rc = count_if(call, "recvcount", rc, recv_sig)?;
        let rt = dtype_if(rt, call, "recvtype", recv_sig)?;
        let s = sb as *const u8;
        let r = (!is_in_place(rb)).then_some(rb as *mut u8);
        go(
            c,
            req,
            // SAFETY: at the root `s` holds `sc` × `st` per rank; `r` (unless MPI_IN_PLACE) holds `rc` × `rt`, as MPI_Scatter requires of its C caller, until this blocking call returns.
            || unsafe { coll::scatter::scatter(s, sc, &st, r, rc, &rt, root, &cm) },
            // SAFETY: as above, and MPI_Iscatter's caller leaves the buffers alone until the request completes.
            || unsafe { coll::scatter::iscatter(s, sc, &st, r, rc, &rt, root, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scatter(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `scatter` needs what MPI_Scatter demands of them.
    unsafe { scatter(sb, sc, st, rb, rc, rt, root, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Iscatter(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `scatter` needs what MPI_Iscatter demands of them.
    unsafe { scatter(sb, sc, st, rb, rc, rt, root, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn scatterv(sb: *const c_void, scs: *const c_int, ds: *const c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Scatterv", "MPI_Iscatterv", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let (is_root, leaf) = (at_root(&cm, root), is_leaf(&cm, root));
        let recv_sig = leaf && !(is_root && is_in_place(rb));
        let n = if is_root { cm.peer_group_size() as usize } else { 0 };
        // SAFETY: at the root, MPI_Scatterv's `sendcounts` and `displs` have one entry per process of the (remote) group, `n`; elsewhere `n` is 0 and they are not read.
        let (scs, ds) = unsafe { (counts(call, "sendcounts", scs, n)?, displs(call, "displs", ds, n)?) };
        let st = dtype_if(st, call, "sendtype", is_root)?;
        let rc = count_if(call, "recvcount", rc, recv_sig)?;
        let rt = dtype_if(rt, call, "recvtype", recv_sig)?;
        let s = sb as *const u8;
        let r = (!is_in_place(rb)).then_some(rb as *mut u8);
        go(
            c,
            req,
            // SAFETY: at the root `s` holds `scs[i]` × `st` at `ds[i]` per rank; `r` (unless MPI_IN_PLACE) holds `rc` × `rt`, as MPI_Scatterv requires of its C caller, until this blocking call returns.
            || unsafe { coll::scatter::scatterv(s, &scs, &ds, &st, r, rc, &rt, root, &cm) },
            // SAFETY: as above, and MPI_Iscatterv's caller leaves the buffers alone until the request completes.
            || unsafe { coll::scatter::iscatterv(s, &scs, &ds, &st, r, rc, &rt, root, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scatterv(sb: *const c_void, scs: *const c_int, ds: *const c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `scatterv` needs what MPI_Scatterv demands of them.
    unsafe { scatterv(sb, scs, ds, st, rb, rc, rt, root, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Iscatterv(
    sb: *const c_void,
    scs: *const c_int,
    ds: *const c_int,
    st: MPI_Datatype,
    rb: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    root: c_int,
    c: MPI_Comm,
    r: *mut MPI_Request,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `scatterv` needs what MPI_Iscatterv demands of them.
    unsafe { scatterv(sb, scs, ds, st, rb, rc, rt, root, c, Some(r)) }
}

// ----- allgather, alltoall -------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
unsafe fn allgather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm, request: Option<*mut MPI_Request>, all_to_all: bool) -> c_int {
    let call = match (all_to_all, request.is_some()) {
        (false, false) => "MPI_Allgather",
        (false, true) => "MPI_Iallgather",
        (true, false) => "MPI_Alltoall",
        (true, true) => "MPI_Ialltoall",
    };
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let send_sig = !is_in_place(sb);
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let rc = count(call, "recvcount", rc)?;
        let rt = committed(rt, call, "recvtype")?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        if all_to_all {
            go(
                c,
                req,
                // SAFETY: `s` (unless MPI_IN_PLACE) holds `sc` × `st` per rank; `r` holds `rc` × `rt` per rank, as MPI_Alltoall requires of its C caller, until this blocking call returns.
                || unsafe { coll::alltoall::alltoall(s, sc, &st, r, rc, &rt, &cm) },
                // SAFETY: as above, and MPI_Ialltoall's caller leaves the buffers alone until the request completes.
                || unsafe { coll::alltoall::ialltoall(s, sc, &st, r, rc, &rt, &cm) },
            )
        } else {
            go(
                c,
                req,
                // SAFETY: `s` (unless MPI_IN_PLACE) holds `sc` × `st`; `r` holds `rc` × `rt` per rank, as MPI_Allgather requires of its C caller, until this blocking call returns.
                || unsafe { coll::allgather::allgather(s, sc, &st, r, rc, &rt, &cm) },
                // SAFETY: as above, and MPI_Iallgather's caller leaves the buffers alone until the request completes.
                || unsafe { coll::allgather::iallgather(s, sc, &st, r, rc, &rt, &cm) },
            )
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allgather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `allgather` needs what MPI_Allgather demands of them.
    unsafe { allgather(sb, sc, st, rb, rc, rt, c, None, false) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Iallgather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `allgather` needs what MPI_Iallgather demands of them.
    unsafe { allgather(sb, sc, st, rb, rc, rt, c, Some(r), false) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoall(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `allgather` needs what MPI_Alltoall demands of them.
    unsafe { allgather(sb, sc, st, rb, rc, rt, c, None, true) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ialltoall(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `allgather` needs what MPI_Ialltoall demands of them.
    unsafe { allgather(sb, sc, st, rb, rc, rt, c, Some(r), true) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn allgatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Allgatherv", "MPI_Iallgatherv", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let send_sig = !is_in_place(sb);
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let n = cm.peer_group_size() as usize;
        // SAFETY: MPI_Allgatherv's `recvcounts` and `displs` have one entry per process of the (remote) group, `n`.
        let (rcs, ds) = unsafe { (counts(call, "recvcounts", rcs, n)?, displs(call, "displs", ds, n)?) };
        let rt = committed(rt, call, "recvtype")?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            c,
            req,
            // SAFETY: `s` (unless MPI_IN_PLACE) holds `sc` × `st`; `r` holds `rcs[i]` × `rt` at `ds[i]` per rank, as MPI_Allgatherv requires of its C caller, until this blocking call returns.
            || unsafe { coll::allgather::allgatherv(s, sc, &st, r, &rcs, &ds, &rt, &cm) },
            // SAFETY: as above, and MPI_Iallgatherv's caller leaves the buffers alone until the request completes.
            || unsafe { coll::allgather::iallgatherv(s, sc, &st, r, &rcs, &ds, &rt, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allgatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `allgatherv` needs what MPI_Allgatherv demands of them.
    unsafe { allgatherv(sb, sc, st, rb, rcs, ds, rt, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Iallgatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `allgatherv` needs what MPI_Iallgatherv demands of them.
    unsafe { allgatherv(sb, sc, st, rb, rcs, ds, rt, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn alltoallv(
    sb: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    st: MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rt: MPI_Datatype,
    c: MPI_Comm,
    request: Option<*mut MPI_Request>,
) -> c_int {
    let call = names("MPI_Alltoallv", "MPI_Ialltoallv", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let n = cm.peer_group_size() as usize;
        let send_sig = !is_in_place(sb);
        let ns = if send_sig { n } else { 0 };
        // SAFETY: MPI_Alltoallv's `sendcounts` and `sdispls` have one entry per process of the (remote) group; with MPI_IN_PLACE they are ignored and `ns` is 0.
        let (scs, sds) = unsafe { (counts(call, "sendcounts", scs, ns)?, displs(call, "sdispls", sds, ns)?) };
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        // SAFETY: MPI_Alltoallv's `recvcounts` and `rdispls` have one entry per process of the (remote) group, `n`.
        let (rcs, rds) = unsafe { (counts(call, "recvcounts", rcs, n)?, displs(call, "rdispls", rds, n)?) };
        let rt = committed(rt, call, "recvtype")?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            c,
            req,
            // SAFETY: `s` (unless MPI_IN_PLACE) and `r` hold the blocks `scs`/`sds` × `st` and `rcs`/`rds` × `rt` describe, as MPI_Alltoallv requires of its C caller, until this blocking call returns.
            || unsafe { coll::alltoall::alltoallv(s, &scs, &sds, &st, r, &rcs, &rds, &rt, &cm) },
            // SAFETY: as above, and MPI_Ialltoallv's caller leaves the buffers alone until the request completes.
            || unsafe { coll::alltoall::ialltoallv(s, &scs, &sds, &st, r, &rcs, &rds, &rt, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoallv(
    sb: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    st: MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rt: MPI_Datatype,
    c: MPI_Comm,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `alltoallv` needs what MPI_Alltoallv demands of them.
    unsafe { alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ialltoallv(
    sb: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    st: MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rt: MPI_Datatype,
    c: MPI_Comm,
    r: *mut MPI_Request,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `alltoallv` needs what MPI_Ialltoallv demands of them.
    unsafe { alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn alltoallw(
    sb: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    sts: *const MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rts: *const MPI_Datatype,
    c: MPI_Comm,
    request: Option<*mut MPI_Request>,
) -> c_int {
    let call = names("MPI_Alltoallw", "MPI_Ialltoallw", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let n = cm.peer_group_size() as usize;
        let ns = if is_in_place(sb) { 0 } else { n };
        // SAFETY: MPI_Alltoallw's send arrays have one entry per process of the (remote) group; with MPI_IN_PLACE they are ignored and `ns` is 0.
        let (scs, sds, sts) = unsafe { (counts(call, "sendcounts", scs, ns)?, displs(call, "sdispls", sds, ns)?, dtypes(call, "sendtypes", sts, ns)?) };
        // SAFETY: MPI_Alltoallw's receive arrays have one entry per process of the (remote) group, `n`.
        let (rcs, rds, rts) = unsafe { (counts(call, "recvcounts", rcs, n)?, displs(call, "rdispls", rds, n)?, dtypes(call, "recvtypes", rts, n)?) };
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            c,
            req,
            // SAFETY: `s` (unless MPI_IN_PLACE) and `r` hold the blocks `scs`/`sds`/`sts` and `rcs`/`rds`/`rts` describe, as MPI_Alltoallw requires of its C caller, until this blocking call returns.
            || unsafe { coll::alltoall::alltoallw(s, &scs, &sds, &sts, r, &rcs, &rds, &rts, &cm) },
            // SAFETY: as above, and MPI_Ialltoallw's caller leaves the buffers alone until the request completes.
            || unsafe { coll::alltoall::ialltoallw(s, &scs, &sds, &sts, r, &rcs, &rds, &rts, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoallw(
    sb: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    sts: *const MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rts: *const MPI_Datatype,
    c: MPI_Comm,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `alltoallw` needs what MPI_Alltoallw demands of them.
    unsafe { alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ialltoallw(
    sb: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    sts: *const MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rts: *const MPI_Datatype,
    c: MPI_Comm,
    r: *mut MPI_Request,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `alltoallw` needs what MPI_Ialltoallw demands of them.
    unsafe { alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, c, Some(r)) }
}

// ----- reductions ----------------------------------------------------------------------

struct RedArgs {
    comm: Comm,
    n: usize,
    dt: Datatype,
    op: Op,
}

fn red_args(call: &str, c: MPI_Comm, n: c_int, dt: MPI_Datatype, o: MPI_Op) -> R<RedArgs> {
    let cm = comm(c, call)?;
    let n = count(call, "count", n)?;
    let dt = committed(dt, call, "datatype")?;
    let op = op(o, call)?;
    Ok(RedArgs { comm: cm, n, dt, op })
}

#[allow(clippy::too_many_arguments)]
unsafe fn reduce(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, root: c_int, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Reduce", "MPI_Ireduce", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let a = red_args(call, c, n, dt, o)?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            c,
            req,
            // SAFETY: `s` (unless MPI_IN_PLACE) holds `a.n` × `a.dt`, and so does `r` at the root, as MPI_Reduce requires of its C caller, until this blocking call returns.
            || unsafe { coll::reduce::reduce(s, r, a.n, &a.dt, &a.op, root, &a.comm) },
            // SAFETY: as above, and MPI_Ireduce's caller leaves the buffers alone until the request completes.
            || unsafe { coll::reduce::ireduce(s, r, a.n, &a.dt, &a.op, root, &a.comm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, root: c_int, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `reduce` needs what MPI_Reduce demands of them.
    unsafe { reduce(sb, rb, n, dt, o, root, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ireduce(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, root: c_int, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `reduce` needs what MPI_Ireduce demands of them.
    unsafe { reduce(sb, rb, n, dt, o, root, c, Some(r)) }
}

#[derive(Clone, Copy)]
enum Whole {
    Allreduce,
    Scan,
    Exscan,
}

#[allow(clippy::too_many_arguments)]
unsafe fn whole(kind: Whole, sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = match kind {
        Whole::Allreduce => names("MPI_Allreduce", "MPI_Iallreduce", request),
        Whole::Scan => names("MPI_Scan", "MPI_Iscan", request),
        Whole::Exscan => names("MPI_Exscan", "MPI_Iexscan", request),
    };
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let a = red_args(call, c, n, dt, o)?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        let (cm, n, dt, op) = (&a.comm, a.n, &a.dt, &a.op);
        match kind {
            Whole::Allreduce => go(
                c,
                req,
                // SAFETY: `s` (unless MPI_IN_PLACE) and `r` hold `n` elements of `dt`, as MPI_Allreduce requires of its C caller, until this blocking call returns.
                || unsafe { coll::allreduce::allreduce(s, r, n, dt, op, cm) },
                // SAFETY: as above, and MPI_Iallreduce's caller leaves the buffers alone until the request completes.
                || unsafe { coll::allreduce::iallreduce(s, r, n, dt, op, cm) },
            ),
            Whole::Scan => go(
                c,
                req,
                // SAFETY: `s` (unless MPI_IN_PLACE) and `r` hold `n` elements of `dt`, as MPI_Scan requires of its C caller, until this blocking call returns.
                || unsafe { coll::scan::scan(s, r, n, dt, op, cm) },
                // SAFETY: as above, and MPI_Iscan's caller leaves the buffers alone until the request completes.
                || unsafe { coll::scan::iscan(s, r, n, dt, op, cm) },
            ),
            Whole::Exscan => go(
                c,
                req,
                // SAFETY: `s` (unless MPI_IN_PLACE) and `r` hold `n` elements of `dt`, as MPI_Exscan requires of its C caller, until this blocking call returns.
                || unsafe { coll::scan::exscan(s, r, n, dt, op, cm) },
                // SAFETY: as above, and MPI_Iexscan's caller leaves the buffers alone until the request completes.
                || unsafe { coll::scan::iexscan(s, r, n, dt, op, cm) },
            ),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allreduce(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `whole` needs what MPI_Allreduce demands of them.
    unsafe { whole(Whole::Allreduce, sb, rb, n, dt, o, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Iallreduce(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `whole` needs what MPI_Iallreduce demands of them.
    unsafe { whole(Whole::Allreduce, sb, rb, n, dt, o, c, Some(r)) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Scan(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `whole` needs what MPI_Scan demands of them.
    unsafe { whole(Whole::Scan, sb, rb, n, dt, o, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Iscan(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `whole` needs what MPI_Iscan demands of them.
    unsafe { whole(Whole::Scan, sb, rb, n, dt, o, c, Some(r)) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Exscan(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `whole` needs what MPI_Exscan demands of them.
    unsafe { whole(Whole::Exscan, sb, rb, n, dt, o, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Iexscan(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `whole` needs what MPI_Iexscan demands of them.
    unsafe { whole(Whole::Exscan, sb, rb, n, dt, o, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn reduce_scatter(sb: *const c_void, rb: *mut c_void, rcs: *const c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Reduce_scatter", "MPI_Ireduce_scatter", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let a = red_args(call, c, 0, dt, o)?;
        // SAFETY: MPI_Reduce_scatter's `recvcounts` has one entry per process of the group.
        let rcs = unsafe { counts(call, "recvcounts", rcs, a.comm.size() as usize)? };
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            c,
            req,
            // SAFETY: `s` (unless MPI_IN_PLACE) holds sum(`rcs`) × `a.dt`; `r` holds this rank's `rcs` entry × `a.dt`, as MPI_Reduce_scatter requires of its C caller, until this blocking call returns.
            || unsafe { coll::reduce_scatter::reduce_scatter(s, r, &rcs, &a.dt, &a.op, &a.comm) },
            // SAFETY: as above, and MPI_Ireduce_scatter's caller leaves the buffers alone until the request completes.
            || unsafe { coll::reduce_scatter::ireduce_scatter(s, r, &rcs, &a.dt, &a.op, &a.comm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_scatter(sb: *const c_void, rb: *mut c_void, rcs: *const c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `reduce_scatter` needs what MPI_Reduce_scatter demands of them.
    unsafe { reduce_scatter(sb, rb, rcs, dt, o, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ireduce_scatter(sb: *const c_void, rb: *mut c_void, rcs: *const c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `reduce_scatter` needs what MPI_Ireduce_scatter demands of them.
    unsafe { reduce_scatter(sb, rb, rcs, dt, o, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn reduce_scatter_block(sb: *const c_void, rb: *mut c_void, rc: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let rc = count(call, "recvcount", rc)?;
        let dt = committed(dt, call, "datatype")?;
        let op = op(o, call)?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            c,
            req,
            // SAFETY: `s` (unless MPI_IN_PLACE) holds `rc` × `dt` per rank; `r` holds `rc` × `dt`, as MPI_Reduce_scatter_block requires of its C caller, until this blocking call returns.
            || unsafe { coll::reduce_scatter::reduce_scatter_block(s, r, rc, &dt, &op, &cm) },
            // SAFETY: as above, and MPI_Ireduce_scatter_block's caller leaves the buffers alone until the request completes.
            || unsafe { coll::reduce_scatter::ireduce_scatter_block(s, r, rc, &dt, &op, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_scatter_block(sb: *const c_void, rb: *mut c_void, rc: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `reduce_scatter_block` needs what MPI_Reduce_scatter_block demands of them.
    unsafe { reduce_scatter_block(sb, rb, rc, dt, o, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ireduce_scatter_block(sb: *const c_void, rb: *mut c_void, rc: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `reduce_scatter_block` needs what MPI_Ireduce_scatter_block demands of them.
    unsafe { reduce_scatter_block(sb, rb, rc, dt, o, c, Some(r)) }
}

// ----- neighbourhood collectives --------------------------------------------------------

/// (indegree, outdegree) of this rank, or MPI_ERR_TOPOLOGY.
fn degrees(call: &str, cm: &Comm) -> R<(usize, usize)> {
    let topo = cm.topology().ok_or_else(|| bad(ErrorClass::Topology, call, "comm", "the communicator has no topology"))?;
    let (s, d) = topo.neighborhood(cm.rank())?;
    Ok((s.len(), d.len()))
}

#[allow(clippy::too_many_arguments)]
unsafe fn neighbor_allgather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm, request: Option<*mut MPI_Request>, all_to_all: bool) -> c_int {
    let call = match (all_to_all, request.is_some()) {
        (false, false) => "MPI_Neighbor_allgather",
        (false, true) => "MPI_Ineighbor_allgather",
        (true, false) => "MPI_Neighbor_alltoall",
        (true, true) => "MPI_Ineighbor_alltoall",
    };
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        degrees(call, &cm)?;
        let sc = count(call, "sendcount", sc)?;
        let st = committed(st, call, "sendtype")?;
        let rc = count(call, "recvcount", rc)?;
        let rt = committed(rt, call, "recvtype")?;
        let s = sb as *const u8;
        let r = rb as *mut u8;
        use coll::neighbor as nb;
        if all_to_all {
            go(
                c,
                req,
                // SAFETY: `s` holds `sc` × `st` per destination, `r` `rc` × `rt` per source neighbour, as MPI_Neighbor_alltoall requires of its C caller, until this blocking call returns.
                || unsafe { nb::neighbor_alltoall(s, sc, &st, r, rc, &rt, &cm) },
                // SAFETY: as above, and MPI_Ineighbor_alltoall's caller leaves the buffers alone until the request completes.
                || unsafe { nb::ineighbor_alltoall(s, sc, &st, r, rc, &rt, &cm) },
            )
        } else {
            go(
                c,
                req,
                // SAFETY: `s` holds `sc` × `st`; `r` holds `rc` × `rt` per source neighbour, as MPI_Neighbor_allgather requires of its C caller, until this blocking call returns.
                || unsafe { nb::neighbor_allgather(s, sc, &st, r, rc, &rt, &cm) },
                // SAFETY: as above, and MPI_Ineighbor_allgather's caller leaves the buffers alone until the request completes.
                || unsafe { nb::ineighbor_allgather(s, sc, &st, r, rc, &rt, &cm) },
            )
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_allgather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `neighbor_allgather` needs what MPI_Neighbor_allgather demands of them.
    unsafe { neighbor_allgather(sb, sc, st, rb, rc, rt, c, None, false) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_allgather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `neighbor_allgather` needs what MPI_Ineighbor_allgather demands of them.
    unsafe { neighbor_allgather(sb, sc, st, rb, rc, rt, c, Some(r), false) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoall(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `neighbor_allgather` needs what MPI_Neighbor_alltoall demands of them.
    unsafe { neighbor_allgather(sb, sc, st, rb, rc, rt, c, None, true) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_alltoall(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `neighbor_allgather` needs what MPI_Ineighbor_alltoall demands of them.
    unsafe { neighbor_allgather(sb, sc, st, rb, rc, rt, c, Some(r), true) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn neighbor_allgatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Neighbor_allgatherv", "MPI_Ineighbor_allgatherv", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let (indeg, _) = degrees(call, &cm)?;
        let sc = count(call, "sendcount", sc)?;
        let st = committed(st, call, "sendtype")?;
        // SAFETY: MPI_Neighbor_allgatherv's `recvcounts` and `displs` have one entry per source neighbour, `indeg`.
        let (rcs, ds) = unsafe { (counts(call, "recvcounts", rcs, indeg)?, displs(call, "displs", ds, indeg)?) };
        let rt = committed(rt, call, "recvtype")?;
        let s = sb as *const u8;
        let r = rb as *mut u8;
        use coll::neighbor as nb;
        go(
            c,
            req,
            // SAFETY: `s` holds `sc` × `st`; `r` holds `rcs[i]` × `rt` at `ds[i]` per source neighbour, as MPI_Neighbor_allgatherv requires of its C caller, until this blocking call returns.
            || unsafe { nb::neighbor_allgatherv(s, sc, &st, r, &rcs, &ds, &rt, &cm) },
            // SAFETY: as above, and MPI_Ineighbor_allgatherv's caller leaves the buffers alone until the request completes.
            || unsafe { nb::ineighbor_allgatherv(s, sc, &st, r, &rcs, &ds, &rt, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_allgatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, c: MPI_Comm) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `neighbor_allgatherv` needs what MPI_Neighbor_allgatherv demands of them.
    unsafe { neighbor_allgatherv(sb, sc, st, rb, rcs, ds, rt, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_allgatherv(
    sb: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    ds: *const c_int,
    rt: MPI_Datatype,
    c: MPI_Comm,
    r: *mut MPI_Request,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `neighbor_allgatherv` needs what MPI_Ineighbor_allgatherv demands of them.
    unsafe { neighbor_allgatherv(sb, sc, st, rb, rcs, ds, rt, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn neighbor_alltoallv(
    sb: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    st: MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rt: MPI_Datatype,
    c: MPI_Comm,
    request: Option<*mut MPI_Request>,
) -> c_int {
    let call = names("MPI_Neighbor_alltoallv", "MPI_Ineighbor_alltoallv", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let (indeg, outdeg) = degrees(call, &cm)?;
        // SAFETY: MPI_Neighbor_alltoallv's `sendcounts` and `sdispls` have one entry per destination neighbour, `outdeg`.
        let (scs, sds) = unsafe { (counts(call, "sendcounts", scs, outdeg)?, displs(call, "sdispls", sds, outdeg)?) };
        let st = committed(st, call, "sendtype")?;
        // SAFETY: MPI_Neighbor_alltoallv's `recvcounts` and `rdispls` have one entry per source neighbour, `indeg`.
        let (rcs, rds) = unsafe { (counts(call, "recvcounts", rcs, indeg)?, displs(call, "rdispls", rds, indeg)?) };
        let rt = committed(rt, call, "recvtype")?;
        let s = sb as *const u8;
        let r = rb as *mut u8;
        use coll::neighbor as nb;
        go(
            c,
            req,
            // SAFETY: `s` and `r` hold the blocks `scs`/`sds` × `st` and `rcs`/`rds` × `rt` describe per neighbour, as MPI_Neighbor_alltoallv requires of its C caller, until this blocking call returns.
            || unsafe { nb::neighbor_alltoallv(s, &scs, &sds, &st, r, &rcs, &rds, &rt, &cm) },
            // SAFETY: as above, and MPI_Ineighbor_alltoallv's caller leaves the buffers alone until the request completes.
            || unsafe { nb::ineighbor_alltoallv(s, &scs, &sds, &st, r, &rcs, &rds, &rt, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoallv(
    sb: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    st: MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rt: MPI_Datatype,
    c: MPI_Comm,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `neighbor_alltoallv` needs what MPI_Neighbor_alltoallv demands of them.
    unsafe { neighbor_alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_alltoallv(
    sb: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    st: MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rt: MPI_Datatype,
    c: MPI_Comm,
    r: *mut MPI_Request,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `neighbor_alltoallv` needs what MPI_Ineighbor_alltoallv demands of them.
    unsafe { neighbor_alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn neighbor_alltoallw(
    sb: *const c_void,
    scs: *const c_int,
    sds: *const MPI_Aint,
    sts: *const MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    rds: *const MPI_Aint,
    rts: *const MPI_Datatype,
    c: MPI_Comm,
    request: Option<*mut MPI_Request>,
) -> c_int {
    let call = names("MPI_Neighbor_alltoallw", "MPI_Ineighbor_alltoallw", request);
    ffi(call, c, || {
        // SAFETY: `request` is `None` (blocking form) or the immediate form's
        // OUT argument: NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { request.map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let (indeg, outdeg) = degrees(call, &cm)?;
        // SAFETY: MPI_Neighbor_alltoallw's send arrays have one entry per destination neighbour, `outdeg`.
        let (scs, sds, sts) = unsafe { (counts(call, "sendcounts", scs, outdeg)?, aint_displs(call, "sdispls", sds, outdeg)?, dtypes(call, "sendtypes", sts, outdeg)?) };
        // SAFETY: MPI_Neighbor_alltoallw's receive arrays have one entry per source neighbour, `indeg`.
        let (rcs, rds, rts) = unsafe { (counts(call, "recvcounts", rcs, indeg)?, aint_displs(call, "rdispls", rds, indeg)?, dtypes(call, "recvtypes", rts, indeg)?) };
        let (sts, rts): (Vec<&Datatype>, Vec<&Datatype>) = (sts.iter().collect(), rts.iter().collect());
        let s = sb as *const u8;
        let r = rb as *mut u8;
        use coll::neighbor as nb;
        go(
            c,
            req,
            // SAFETY: `s` and `r` hold the blocks `scs`/`sds`/`sts` and `rcs`/`rds`/`rts` describe per neighbour, as MPI_Neighbor_alltoallw requires of its C caller, until this blocking call returns.
            || unsafe { nb::neighbor_alltoallw(s, &scs, &sds, &sts, r, &rcs, &rds, &rts, &cm) },
            // SAFETY: as above, and MPI_Ineighbor_alltoallw's caller leaves the buffers alone until the request completes.
            || unsafe { nb::ineighbor_alltoallw(s, &scs, &sds, &sts, r, &rcs, &rds, &rts, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoallw(
    sb: *const c_void,
    scs: *const c_int,
    sds: *const MPI_Aint,
    sts: *const MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    rds: *const MPI_Aint,
    rts: *const MPI_Datatype,
    c: MPI_Comm,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `neighbor_alltoallw` needs what MPI_Neighbor_alltoallw demands of them.
    unsafe { neighbor_alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_alltoallw(
    sb: *const c_void,
    scs: *const c_int,
    sds: *const MPI_Aint,
    sts: *const MPI_Datatype,
    rb: *mut c_void,
    rcs: *const c_int,
    rds: *const MPI_Aint,
    rts: *const MPI_Datatype,
    c: MPI_Comm,
    r: *mut MPI_Request,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `neighbor_alltoallw` needs what MPI_Ineighbor_alltoallw demands of them.
    unsafe { neighbor_alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, c, Some(r)) }
}
