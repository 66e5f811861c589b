//! Collectives: the engine's `coll::*` for intra- and intercommunicators
//! (the engine dispatches intercommunicators itself; `root` passes MPI_ROOT and
//! MPI_PROC_NULL through), blocking and immediate, and the neighbourhood
//! collectives. MPI_IN_PLACE is the engine's `None` buffer.
//!
//! Arguments that MPI calls "significant only at root" (or not significant
//! with MPI_IN_PLACE) are not checked where they are not significant: programs
//! may pass anything there (often MPI_DATATYPE_NULL, NULL arrays).

use std::ffi::{c_int, c_void};

use oxmpi_core::coll;
use oxmpi_core::datatype::{Datatype, Primitive};
use oxmpi_core::error::{ErrorClass, Result as CoreResult};
use oxmpi_core::op::Op;
use oxmpi_core::{Comm, Request};

use crate::abi::*;
use crate::dtype::committed;
use crate::env::comm;
use crate::errors::{bad, ffi, out, R};
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

unsafe fn ints<'a>(call: &str, arg: &str, p: *const c_int, n: usize) -> R<&'a [c_int]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(bad(ErrorClass::Arg, call, arg, "is NULL"));
    }
    // SAFETY: the C caller provides `n` ints.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// A counts array of `n` entries; a negative entry is MPI_ERR_COUNT naming it.
unsafe fn counts(call: &str, arg: &str, p: *const c_int, n: usize) -> R<Vec<usize>> {
    let v = unsafe { ints(call, arg, p, n)? };
    v.iter()
        .enumerate()
        .map(|(i, &c)| if c < 0 { Err(bad(ErrorClass::Count, call, arg, format!("{arg}[{i}] = {c} is negative"))) } else { Ok(c as usize) })
        .collect()
}

unsafe fn displs(call: &str, arg: &str, p: *const c_int, n: usize) -> R<Vec<isize>> {
    Ok(unsafe { ints(call, arg, p, n)? }.iter().map(|&d| d as isize).collect())
}

unsafe fn aint_displs(call: &str, arg: &str, p: *const MPI_Aint, n: usize) -> R<Vec<isize>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(bad(ErrorClass::Arg, call, arg, "is NULL"));
    }
    // SAFETY: the C caller provides `n` addresses.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.to_vec())
}

unsafe fn dtypes(call: &str, arg: &str, p: *const MPI_Datatype, n: usize) -> R<Vec<Datatype>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(bad(ErrorClass::Arg, call, arg, "is NULL"));
    }
    // SAFETY: the C caller provides `n` handles.
    let hs = unsafe { std::slice::from_raw_parts(p, n) };
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
fn go(call: &str, c: MPI_Comm, request: Option<*mut MPI_Request>, blocking: impl FnOnce() -> CoreResult<()>, immediate: impl FnOnce() -> CoreResult<Request>) -> R<()> {
    match request {
        None => Ok(blocking()?),
        Some(p) => {
            let o = out(call, "request", p)?;
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
        let cm = comm(c, call)?;
        let sig = !cm.is_inter() || root == MPI_ROOT || is_leaf(&cm, root);
        let n = count_if(call, "count", n, sig)?;
        let dt = dtype_if(dt, call, "datatype", sig)?;
        let b = buf as *mut u8;
        go(call, c, request, || unsafe { coll::bcast::bcast(b, n, &dt, root, &cm) }, || unsafe { coll::bcast::ibcast(b, n, &dt, root, &cm) })
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Bcast(buf: *mut c_void, n: c_int, dt: MPI_Datatype, root: c_int, c: MPI_Comm) -> c_int {
    unsafe { bcast(buf, n, dt, root, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ibcast(buf: *mut c_void, n: c_int, dt: MPI_Datatype, root: c_int, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    unsafe { bcast(buf, n, dt, root, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn gather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Gather", "MPI_Igather", request);
    ffi(call, c, || {
        let cm = comm(c, call)?;
        let (is_root, leaf) = (at_root(&cm, root), is_leaf(&cm, root));
        let send_sig = leaf && !(is_root && is_in_place(sb));
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let rc = count_if(call, "recvcount", rc, is_root)?;
        let rt = dtype_if(rt, call, "recvtype", is_root)?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(call, c, request, || unsafe { coll::gather::gather(s, sc, &st, r, rc, &rt, root, &cm) }, || unsafe { coll::gather::igather(s, sc, &st, r, rc, &rt, root, &cm) })
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Gather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm) -> c_int {
    unsafe { gather(sb, sc, st, rb, rc, rt, root, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Igather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    unsafe { gather(sb, sc, st, rb, rc, rt, root, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn gatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Gatherv", "MPI_Igatherv", request);
    ffi(call, c, || {
        let cm = comm(c, call)?;
        let (is_root, leaf) = (at_root(&cm, root), is_leaf(&cm, root));
        let send_sig = leaf && !(is_root && is_in_place(sb));
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let n = if is_root { cm.peer_group_size() as usize } else { 0 };
        let rcs = unsafe { counts(call, "recvcounts", rcs, n)? };
        let ds = unsafe { displs(call, "displs", ds, n)? };
        let rt = dtype_if(rt, call, "recvtype", is_root)?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            call,
            c,
            request,
            || unsafe { coll::gather::gatherv(s, sc, &st, r, &rcs, &ds, &rt, root, &cm) },
            || unsafe { coll::gather::igatherv(s, sc, &st, r, &rcs, &ds, &rt, root, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Gatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm) -> c_int {
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
    unsafe { gatherv(sb, sc, st, rb, rcs, ds, rt, root, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn scatter(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Scatter", "MPI_Iscatter", request);
    ffi(call, c, || {
        let cm = comm(c, call)?;
        let (is_root, leaf) = (at_root(&cm, root), is_leaf(&cm, root));
        let recv_sig = leaf && !(is_root && is_in_place(rb));
        let sc = count_if(call, "sendcount", sc, is_root)?;
        let st = dtype_if(st, call, "sendtype", is_root)?;
        let rc = count_if(call, "recvcount", rc, recv_sig)?;
        let rt = dtype_if(rt, call, "recvtype", recv_sig)?;
        let s = sb as *const u8;
        let r = (!is_in_place(rb)).then_some(rb as *mut u8);
        go(call, c, request, || unsafe { coll::scatter::scatter(s, sc, &st, r, rc, &rt, root, &cm) }, || unsafe { coll::scatter::iscatter(s, sc, &st, r, rc, &rt, root, &cm) })
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scatter(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm) -> c_int {
    unsafe { scatter(sb, sc, st, rb, rc, rt, root, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Iscatter(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    unsafe { scatter(sb, sc, st, rb, rc, rt, root, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn scatterv(sb: *const c_void, scs: *const c_int, ds: *const c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Scatterv", "MPI_Iscatterv", request);
    ffi(call, c, || {
        let cm = comm(c, call)?;
        let (is_root, leaf) = (at_root(&cm, root), is_leaf(&cm, root));
        let recv_sig = leaf && !(is_root && is_in_place(rb));
        let n = if is_root { cm.peer_group_size() as usize } else { 0 };
        let scs = unsafe { counts(call, "sendcounts", scs, n)? };
        let ds = unsafe { displs(call, "displs", ds, n)? };
        let st = dtype_if(st, call, "sendtype", is_root)?;
        let rc = count_if(call, "recvcount", rc, recv_sig)?;
        let rt = dtype_if(rt, call, "recvtype", recv_sig)?;
        let s = sb as *const u8;
        let r = (!is_in_place(rb)).then_some(rb as *mut u8);
        go(
            call,
            c,
            request,
            || unsafe { coll::scatter::scatterv(s, &scs, &ds, &st, r, rc, &rt, root, &cm) },
            || unsafe { coll::scatter::iscatterv(s, &scs, &ds, &st, r, rc, &rt, root, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scatterv(sb: *const c_void, scs: *const c_int, ds: *const c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm) -> c_int {
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
        let cm = comm(c, call)?;
        let send_sig = !is_in_place(sb);
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let rc = count(call, "recvcount", rc)?;
        let rt = committed(rt, call, "recvtype")?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        if all_to_all {
            go(call, c, request, || unsafe { coll::alltoall::alltoall(s, sc, &st, r, rc, &rt, &cm) }, || unsafe { coll::alltoall::ialltoall(s, sc, &st, r, rc, &rt, &cm) })
        } else {
            go(call, c, request, || unsafe { coll::allgather::allgather(s, sc, &st, r, rc, &rt, &cm) }, || unsafe { coll::allgather::iallgather(s, sc, &st, r, rc, &rt, &cm) })
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allgather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm) -> c_int {
    unsafe { allgather(sb, sc, st, rb, rc, rt, c, None, false) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Iallgather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    unsafe { allgather(sb, sc, st, rb, rc, rt, c, Some(r), false) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoall(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm) -> c_int {
    unsafe { allgather(sb, sc, st, rb, rc, rt, c, None, true) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ialltoall(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    unsafe { allgather(sb, sc, st, rb, rc, rt, c, Some(r), true) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn allgatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Allgatherv", "MPI_Iallgatherv", request);
    ffi(call, c, || {
        let cm = comm(c, call)?;
        let send_sig = !is_in_place(sb);
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let n = cm.peer_group_size() as usize;
        let rcs = unsafe { counts(call, "recvcounts", rcs, n)? };
        let ds = unsafe { displs(call, "displs", ds, n)? };
        let rt = committed(rt, call, "recvtype")?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            call,
            c,
            request,
            || unsafe { coll::allgather::allgatherv(s, sc, &st, r, &rcs, &ds, &rt, &cm) },
            || unsafe { coll::allgather::iallgatherv(s, sc, &st, r, &rcs, &ds, &rt, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allgatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, c: MPI_Comm) -> c_int {
    unsafe { allgatherv(sb, sc, st, rb, rcs, ds, rt, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Iallgatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
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
        let cm = comm(c, call)?;
        let n = cm.peer_group_size() as usize;
        let send_sig = !is_in_place(sb);
        let ns = if send_sig { n } else { 0 };
        let scs = unsafe { counts(call, "sendcounts", scs, ns)? };
        let sds = unsafe { displs(call, "sdispls", sds, ns)? };
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let rcs = unsafe { counts(call, "recvcounts", rcs, n)? };
        let rds = unsafe { displs(call, "rdispls", rds, n)? };
        let rt = committed(rt, call, "recvtype")?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            call,
            c,
            request,
            || unsafe { coll::alltoall::alltoallv(s, &scs, &sds, &st, r, &rcs, &rds, &rt, &cm) },
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
        let cm = comm(c, call)?;
        let n = cm.peer_group_size() as usize;
        let ns = if is_in_place(sb) { 0 } else { n };
        let scs = unsafe { counts(call, "sendcounts", scs, ns)? };
        let sds = unsafe { displs(call, "sdispls", sds, ns)? };
        let sts = unsafe { dtypes(call, "sendtypes", sts, ns)? };
        let rcs = unsafe { counts(call, "recvcounts", rcs, n)? };
        let rds = unsafe { displs(call, "rdispls", rds, n)? };
        let rts = unsafe { dtypes(call, "recvtypes", rts, n)? };
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            call,
            c,
            request,
            || unsafe { coll::alltoall::alltoallw(s, &scs, &sds, &sts, r, &rcs, &rds, &rts, &cm) },
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
        let a = red_args(call, c, n, dt, o)?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            call,
            c,
            request,
            || unsafe { coll::reduce::reduce(s, r, a.n, &a.dt, &a.op, root, &a.comm) },
            || unsafe { coll::reduce::ireduce(s, r, a.n, &a.dt, &a.op, root, &a.comm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, root: c_int, c: MPI_Comm) -> c_int {
    unsafe { reduce(sb, rb, n, dt, o, root, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ireduce(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, root: c_int, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
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
        let a = red_args(call, c, n, dt, o)?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        let (cm, n, dt, op) = (&a.comm, a.n, &a.dt, &a.op);
        match kind {
            Whole::Allreduce => go(call, c, request, || unsafe { coll::allreduce::allreduce(s, r, n, dt, op, cm) }, || unsafe { coll::allreduce::iallreduce(s, r, n, dt, op, cm) }),
            Whole::Scan => go(call, c, request, || unsafe { coll::scan::scan(s, r, n, dt, op, cm) }, || unsafe { coll::scan::iscan(s, r, n, dt, op, cm) }),
            Whole::Exscan => go(call, c, request, || unsafe { coll::scan::exscan(s, r, n, dt, op, cm) }, || unsafe { coll::scan::iexscan(s, r, n, dt, op, cm) }),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allreduce(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) -> c_int {
    unsafe { whole(Whole::Allreduce, sb, rb, n, dt, o, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Iallreduce(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    unsafe { whole(Whole::Allreduce, sb, rb, n, dt, o, c, Some(r)) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Scan(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) -> c_int {
    unsafe { whole(Whole::Scan, sb, rb, n, dt, o, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Iscan(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    unsafe { whole(Whole::Scan, sb, rb, n, dt, o, c, Some(r)) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Exscan(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) -> c_int {
    unsafe { whole(Whole::Exscan, sb, rb, n, dt, o, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Iexscan(sb: *const c_void, rb: *mut c_void, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    unsafe { whole(Whole::Exscan, sb, rb, n, dt, o, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn reduce_scatter(sb: *const c_void, rb: *mut c_void, rcs: *const c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Reduce_scatter", "MPI_Ireduce_scatter", request);
    ffi(call, c, || {
        let a = red_args(call, c, 0, dt, o)?;
        let rcs = unsafe { counts(call, "recvcounts", rcs, a.comm.size() as usize)? };
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            call,
            c,
            request,
            || unsafe { coll::reduce_scatter::reduce_scatter(s, r, &rcs, &a.dt, &a.op, &a.comm) },
            || unsafe { coll::reduce_scatter::ireduce_scatter(s, r, &rcs, &a.dt, &a.op, &a.comm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_scatter(sb: *const c_void, rb: *mut c_void, rcs: *const c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) -> c_int {
    unsafe { reduce_scatter(sb, rb, rcs, dt, o, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ireduce_scatter(sb: *const c_void, rb: *mut c_void, rcs: *const c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    unsafe { reduce_scatter(sb, rb, rcs, dt, o, c, Some(r)) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn reduce_scatter_block(sb: *const c_void, rb: *mut c_void, rc: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block", request);
    ffi(call, c, || {
        let cm = comm(c, call)?;
        let rc = count(call, "recvcount", rc)?;
        let dt = committed(dt, call, "datatype")?;
        let op = op(o, call)?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            call,
            c,
            request,
            || unsafe { coll::reduce_scatter::reduce_scatter_block(s, r, rc, &dt, &op, &cm) },
            || unsafe { coll::reduce_scatter::ireduce_scatter_block(s, r, rc, &dt, &op, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_scatter_block(sb: *const c_void, rb: *mut c_void, rc: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) -> c_int {
    unsafe { reduce_scatter_block(sb, rb, rc, dt, o, c, None) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ireduce_scatter_block(sb: *const c_void, rb: *mut c_void, rc: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
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
            go(call, c, request, || unsafe { nb::neighbor_alltoall(s, sc, &st, r, rc, &rt, &cm) }, || unsafe { nb::ineighbor_alltoall(s, sc, &st, r, rc, &rt, &cm) })
        } else {
            go(call, c, request, || unsafe { nb::neighbor_allgather(s, sc, &st, r, rc, &rt, &cm) }, || unsafe { nb::ineighbor_allgather(s, sc, &st, r, rc, &rt, &cm) })
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_allgather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm) -> c_int {
    unsafe { neighbor_allgather(sb, sc, st, rb, rc, rt, c, None, false) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_allgather(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    unsafe { neighbor_allgather(sb, sc, st, rb, rc, rt, c, Some(r), false) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoall(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm) -> c_int {
    unsafe { neighbor_allgather(sb, sc, st, rb, rc, rt, c, None, true) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_alltoall(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rc: c_int, rt: MPI_Datatype, c: MPI_Comm, r: *mut MPI_Request) -> c_int {
    unsafe { neighbor_allgather(sb, sc, st, rb, rc, rt, c, Some(r), true) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn neighbor_allgatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, c: MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let call = names("MPI_Neighbor_allgatherv", "MPI_Ineighbor_allgatherv", request);
    ffi(call, c, || {
        let cm = comm(c, call)?;
        let (indeg, _) = degrees(call, &cm)?;
        let sc = count(call, "sendcount", sc)?;
        let st = committed(st, call, "sendtype")?;
        let rcs = unsafe { counts(call, "recvcounts", rcs, indeg)? };
        let ds = unsafe { displs(call, "displs", ds, indeg)? };
        let rt = committed(rt, call, "recvtype")?;
        let s = sb as *const u8;
        let r = rb as *mut u8;
        use coll::neighbor as nb;
        go(
            call,
            c,
            request,
            || unsafe { nb::neighbor_allgatherv(s, sc, &st, r, &rcs, &ds, &rt, &cm) },
            || unsafe { nb::ineighbor_allgatherv(s, sc, &st, r, &rcs, &ds, &rt, &cm) },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_allgatherv(sb: *const c_void, sc: c_int, st: MPI_Datatype, rb: *mut c_void, rcs: *const c_int, ds: *const c_int, rt: MPI_Datatype, c: MPI_Comm) -> c_int {
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
        let cm = comm(c, call)?;
        let (indeg, outdeg) = degrees(call, &cm)?;
        let scs = unsafe { counts(call, "sendcounts", scs, outdeg)? };
        let sds = unsafe { displs(call, "sdispls", sds, outdeg)? };
        let st = committed(st, call, "sendtype")?;
        let rcs = unsafe { counts(call, "recvcounts", rcs, indeg)? };
        let rds = unsafe { displs(call, "rdispls", rds, indeg)? };
        let rt = committed(rt, call, "recvtype")?;
        let s = sb as *const u8;
        let r = rb as *mut u8;
        use coll::neighbor as nb;
        go(
            call,
            c,
            request,
            || unsafe { nb::neighbor_alltoallv(s, &scs, &sds, &st, r, &rcs, &rds, &rt, &cm) },
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
        let cm = comm(c, call)?;
        let (indeg, outdeg) = degrees(call, &cm)?;
        let scs = unsafe { counts(call, "sendcounts", scs, outdeg)? };
        let sds = unsafe { aint_displs(call, "sdispls", sds, outdeg)? };
        let sts = unsafe { dtypes(call, "sendtypes", sts, outdeg)? };
        let rcs = unsafe { counts(call, "recvcounts", rcs, indeg)? };
        let rds = unsafe { aint_displs(call, "rdispls", rds, indeg)? };
        let rts = unsafe { dtypes(call, "recvtypes", rts, indeg)? };
        let (sts, rts): (Vec<&Datatype>, Vec<&Datatype>) = (sts.iter().collect(), rts.iter().collect());
        let s = sb as *const u8;
        let r = rb as *mut u8;
        use coll::neighbor as nb;
        go(
            call,
            c,
            request,
            || unsafe { nb::neighbor_alltoallw(s, &scs, &sds, &sts, r, &rcs, &rds, &rts, &cm) },
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
    unsafe { neighbor_alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, c, Some(r)) }
}
