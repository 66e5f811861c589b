//! Communication: put, get, the accumulates, fetch_and_op, compare_and_swap and
//! their request-based forms; each with a fast path in front of the general one.

use super::*;
use crate::conv::buffer::{bytes_in, bytes_out, region_in, region_out};
use oxmpi_core::Request;
use std::slice;

/// The fast path's datatype: a predefined type whose elements lie back to back
/// (size = extent), else `None`.
#[inline]
fn dense_prim(h: MPI_Datatype) -> Option<Primitive> {
    if h == MPI_DATATYPE_NULL || h >= 4096 || h == MPI_LB || h == MPI_UB {
        return None;
    }
    crate::abi::primitive_from_handle(h).filter(|p| p.size() == p.extent() && p.size() > 0)
}

/// The bytes of a put or get the fast path can take: the same dense predefined type
/// and count (> 0) on both sides and an origin buffer that is no null pointer.
#[inline]
fn fast_len<C: Count>(
    buf: *const c_void,
    ocount: C,
    odt: MPI_Datatype,
    tcount: C,
    tdt: MPI_Datatype,
) -> Option<usize> {
    let n = ocount.wide();
    if odt != tdt || n != tcount.wide() || n <= 0 || (buf as usize) < 4096 {
        return None;
    }
    usize::try_from(n)
        .ok()?
        .checked_mul(dense_prim(odt)?.size())
}

struct Side {
    count: usize,
    /// Borrowed for predefined types (no reference count on the hot path).
    dt: std::borrow::Cow<'static, Datatype>,
}

fn side<C: Count>(
    call: &str,
    buf: *const c_void,
    count: C,
    h: MPI_Datatype,
    cname: &str,
    dname: &str,
    bname: &str,
) -> R<Side> {
    let count = to_usize(call, cname, count)?;
    let dt = crate::conv::committed_ref(h, call, dname)?;
    if !bname.is_empty() {
        check_buf(call, bname, buf, count, &dt)?;
    }
    Ok(Side { count, dt })
}

/// A target displacement (checked against the window by the engine).
fn disp_arg(_call: &str, d: MPI_Aint) -> R<isize> {
    Ok(d)
}

/// A request-based call's `request` argument, checked before the operation is made
/// (a null pointer must not leave an operation done behind an error).
fn check_request(call: &str, request: Option<*mut MPI_Request>) -> R<()> {
    if let Some(q) = request {
        // SAFETY: OUT argument of the C caller: only checked here, written by `done_request`.
        unsafe { out(call, "request", q)? };
    }
    Ok(())
}

/// The complete request of a request-based call whose operation the fast path did
/// (`q` is not null).
#[inline(never)]
fn fast_request(q: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's OUT argument, not null (checked by the caller): writable and unaliased by the MPI contract.
    unsafe { *q = new_request(Request::DONE, NO_COMM, None) };
    MPI_SUCCESS
}

/// Hands out an already complete request (the operation finished in the call): the
/// engine's one complete request, [`Request::DONE`] (no engine entry, no lock of
/// the engine), in a slot of the handle table (slots are reused: nothing is
/// allocated per call once the table has room).
fn done_request(call: &str, request: *mut MPI_Request) -> R<()> {
    // SAFETY: OUT argument of the C caller: NULL (rejected) or writable and unaliased.
    let o = unsafe { out(call, "request", request)? };
    *o = new_request(Request::DONE, NO_COMM, None);
    Ok(())
}

/// Which way a put or get moves data (the calls differ in nothing else).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    /// `MPI_Put`/`MPI_Rput`: the origin buffer is read.
    Put,
    /// `MPI_Get`/`MPI_Rget`: the origin buffer is written.
    Get,
}

/// `MPI_Put`, `MPI_Get` and their request-based forms. `origin` is only read for
/// [`Dir::Put`] (the entry points of put take a const pointer).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn transfer<C: Count>(
    dir: Dir,
    base: &'static str,
    origin: *mut c_void,
    ocount: C,
    odt: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    tcount: C,
    tdt: MPI_Datatype,
    w: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> c_int {
    // Request-based calls too: their operation completes in the call either way.
    if request.is_none_or(|q| !q.is_null()) {
        if let Some(len) = fast_len(origin, ocount, odt, tcount, tdt) {
            let done = with_cached(w, |wn| match dir {
                Dir::Put => {
                    // SAFETY: MPI's contract: `origin` (not NULL: `fast_len`) holds origin_count elements of origin_datatype (`len` bytes).
                    let o = unsafe { slice::from_raw_parts(origin.cast(), len) };
                    wn.put_direct(o, rank, disp)
                }
                Dir::Get => {
                    // SAFETY: MPI's contract: `origin` (not NULL: `fast_len`) is writable for origin_count elements of origin_datatype (`len` bytes).
                    let o = unsafe { slice::from_raw_parts_mut(origin.cast(), len) };
                    wn.get_direct(o, rank, disp)
                }
            });
            if done == Some(true) {
                return match request {
                    Some(q) => fast_request(q),
                    None => MPI_SUCCESS,
                };
            }
        }
    }
    // SAFETY: forwarded contract.
    unsafe {
        transfer_slow::<C>(
            dir, base, origin, ocount, odt, rank, disp, tcount, tdt, w, request,
        )
    }
}

/// The general path of [`transfer`].
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn transfer_slow<C: Count>(
    dir: Dir,
    base: &'static str,
    origin: *mut c_void,
    ocount: C,
    odt: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    tcount: C,
    tdt: MPI_Datatype,
    w: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> c_int {
    let call = name::<C>(base);
    wffi(call, w, || {
        let wn = win(w, call)?;
        check_request(call, request)?;
        let o = side(
            call,
            origin,
            ocount,
            odt,
            "origin_count",
            "origin_datatype",
            "origin_addr",
        )?;
        let t = side(
            call,
            std::ptr::null(),
            tcount,
            tdt,
            "target_count",
            "target_datatype",
            "",
        )?;
        let disp = disp_arg(call, disp)?;
        match dir {
            Dir::Put => {
                // SAFETY: MPI's contract: `origin` holds origin_count elements of origin_datatype.
                let origin = unsafe { region_in(origin, o.count, &o.dt) };
                wn.put(call, &origin, rank, disp, t.count, &t.dt)?
            }
            Dir::Get => {
                // SAFETY: MPI's contract: `origin` is writable for origin_count elements of origin_datatype.
                let mut origin = unsafe { region_out(origin, o.count, &o.dt) };
                wn.get(call, &mut origin, rank, disp, t.count, &t.dt)?
            }
        }
        if let Some(r) = request {
            done_request(call, r)?;
        }
        Ok(())
    })
}

fn acc_op(call: &str, h: MPI_Op) -> R<Op> {
    crate::conv::op(h, call)
}

/// The fast path's accumulate: the same dense predefined type and count (> 0) on
/// every side, a predefined op, buffers that are no null pointers (the origin is not
/// read for MPI_NO_OP); (type, op) and the element count.
#[inline]
fn fast_acc<C: Count>(
    origin: *const c_void,
    ocount: C,
    odt: MPI_Datatype,
    result: Option<(*mut c_void, C, MPI_Datatype)>,
    tcount: C,
    tdt: MPI_Datatype,
    op: MPI_Op,
) -> Option<((Primitive, PredefinedOp), usize)> {
    if op == MPI_OP_NULL || op >= 4096 {
        return None;
    }
    let p = crate::abi::op_from_handle(op)?;
    let n = tcount.wide();
    if let Some((rb, rc, rd)) = result {
        if rd != tdt || rc.wide() != n || (rb as usize) < 4096 {
            return None;
        }
    }
    if p != PredefinedOp::NoOp && (odt != tdt || ocount.wide() != n || (origin as usize) < 4096) {
        return None;
    }
    if n <= 0 {
        return None;
    }
    Some(((dense_prim(tdt)?, p), usize::try_from(n).ok()?))
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn accumulate<C: Count>(
    base: &'static str,
    origin: *const c_void,
    ocount: C,
    odt: MPI_Datatype,
    result: Option<(*mut c_void, C, MPI_Datatype)>,
    rank: c_int,
    disp: MPI_Aint,
    tcount: C,
    tdt: MPI_Datatype,
    op: MPI_Op,
    w: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> c_int {
    // Request-based calls too: their operation completes in the call either way.
    if request.is_none_or(|q| !q.is_null()) {
        if let Some((rc, n)) = fast_acc(origin, ocount, odt, result, tcount, tdt, op) {
            let len = n * rc.0.size();
            let o: &[u8] = match rc.1 {
                PredefinedOp::NoOp => &[],
                // SAFETY: MPI's contract: the origin buffer (not NULL: `fast_acc`) holds `len` bytes of elements of the type.
                _ => unsafe { slice::from_raw_parts(origin.cast(), len) },
            };
            // SAFETY: MPI's contract: the result buffer (not NULL: `fast_acc`) is writable for `len` bytes of elements of the type.
            let r = result.map(|(rb, _, _)| unsafe { slice::from_raw_parts_mut(rb.cast(), len) });
            if with_cached(w, |wn| wn.acc_direct(rc.0, rc.1, o, r, n, rank, disp)) == Some(true) {
                return match request {
                    Some(q) => fast_request(q),
                    None => MPI_SUCCESS,
                };
            }
        }
    }
    // SAFETY: forwarded contract.
    unsafe {
        accumulate_slow::<C>(
            base, origin, ocount, odt, result, rank, disp, tcount, tdt, op, w, request,
        )
    }
}

/// The general path of [`accumulate`].
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn accumulate_slow<C: Count>(
    base: &'static str,
    origin: *const c_void,
    ocount: C,
    odt: MPI_Datatype,
    result: Option<(*mut c_void, C, MPI_Datatype)>,
    rank: c_int,
    disp: MPI_Aint,
    tcount: C,
    tdt: MPI_Datatype,
    op: MPI_Op,
    w: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> c_int {
    let call = name::<C>(base);
    wffi(call, w, || {
        let wn = win(w, call)?;
        let op = acc_op(call, op)?;
        check_request(call, request)?;
        let noop = op.as_predefined() == Some(oxmpi_core::op::PredefinedOp::NoOp);
        // MPI_Get_accumulate with MPI_NO_OP ignores the origin arguments.
        let o = if noop && result.is_some() {
            Side {
                count: 0,
                dt: crate::conv::committed_ref(MPI_BYTE, call, "origin_datatype")?,
            }
        } else {
            side(
                call,
                origin,
                ocount,
                odt,
                "origin_count",
                "origin_datatype",
                "origin_addr",
            )?
        };
        let t = side(
            call,
            std::ptr::null(),
            tcount,
            tdt,
            "target_count",
            "target_datatype",
            "",
        )?;
        let res = match result {
            Some((rb, rc, rd)) => {
                let s = side(
                    call,
                    rb,
                    rc,
                    rd,
                    "result_count",
                    "result_datatype",
                    "result_addr",
                )?;
                Some((rb, s))
            }
            None => None,
        };
        let mut res = res.as_ref().map(|(rb, s)| {
            // SAFETY: MPI's contract: the result buffer is writable for result_count elements of result_datatype.
            unsafe { region_out(*rb, s.count, &s.dt) }
        });
        // SAFETY: MPI's contract: the origin buffer holds origin_count elements of origin_datatype.
        let origin = unsafe { region_in(origin, o.count, &o.dt) };
        wn.accumulate(
            call,
            &origin,
            res.as_mut(),
            rank,
            disp_arg(call, disp)?,
            t.count,
            &t.dt,
            &op,
        )?;
        if let Some(r) = request {
            done_request(call, r)?;
        }
        Ok(())
    })
}

macro_rules! rma_entry {
    ($int:ident, $wide:ident, $body:ident, ($($p:ident: $t:tt),*) => ($($arg:expr),*)) => {
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $int($($p: rma_entry!(@ty c_int, $t)),*) -> c_int {
            // SAFETY: the C caller's arguments, passed on as the body requires.
            unsafe { $body::<c_int>($($arg),*) }
        }
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $wide($($p: rma_entry!(@ty MPI_Count, $t)),*) -> c_int {
            // SAFETY: the C caller's arguments, passed on as the body requires.
            unsafe { $body::<MPI_Count>($($arg),*) }
        }
    };
    (@ty $cnt:ty, CNT) => { $cnt };
    (@ty $cnt:ty, $t:ty) => { $t };
}

type CVoid = *const c_void;
type MVoid = *mut c_void;
type PReq = *mut MPI_Request;

rma_entry!(PMPI_Put, PMPI_Put_c, transfer, (o: CVoid, oc: CNT, od: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, w: MPI_Win) => (Dir::Put, "MPI_Put", o.cast_mut(), oc, od, r, d, tc, td, w, None));
rma_entry!(PMPI_Rput, PMPI_Rput_c, transfer, (o: CVoid, oc: CNT, od: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, w: MPI_Win, q: PReq) => (Dir::Put, "MPI_Rput", o.cast_mut(), oc, od, r, d, tc, td, w, Some(q)));
rma_entry!(PMPI_Get, PMPI_Get_c, transfer, (o: MVoid, oc: CNT, od: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, w: MPI_Win) => (Dir::Get, "MPI_Get", o, oc, od, r, d, tc, td, w, None));
rma_entry!(PMPI_Rget, PMPI_Rget_c, transfer, (o: MVoid, oc: CNT, od: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, w: MPI_Win, q: PReq) => (Dir::Get, "MPI_Rget", o, oc, od, r, d, tc, td, w, Some(q)));
rma_entry!(PMPI_Accumulate, PMPI_Accumulate_c, accumulate, (o: CVoid, oc: CNT, od: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, op: MPI_Op, w: MPI_Win) => ("MPI_Accumulate", o, oc, od, None, r, d, tc, td, op, w, None));
rma_entry!(PMPI_Raccumulate, PMPI_Raccumulate_c, accumulate, (o: CVoid, oc: CNT, od: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, op: MPI_Op, w: MPI_Win, q: PReq) => ("MPI_Raccumulate", o, oc, od, None, r, d, tc, td, op, w, Some(q)));
rma_entry!(PMPI_Get_accumulate, PMPI_Get_accumulate_c, accumulate, (o: CVoid, oc: CNT, od: MPI_Datatype, rb: MVoid, rc: CNT, rd: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, op: MPI_Op, w: MPI_Win) => ("MPI_Get_accumulate", o, oc, od, Some((rb, rc, rd)), r, d, tc, td, op, w, None));
rma_entry!(PMPI_Rget_accumulate, PMPI_Rget_accumulate_c, accumulate, (o: CVoid, oc: CNT, od: MPI_Datatype, rb: MVoid, rc: CNT, rd: MPI_Datatype, r: c_int, d: MPI_Aint, tc: CNT, td: MPI_Datatype, op: MPI_Op, w: MPI_Win, q: PReq) => ("MPI_Rget_accumulate", o, oc, od, Some((rb, rc, rd)), r, d, tc, td, op, w, Some(q)));

#[no_mangle]
pub unsafe extern "C" fn PMPI_Fetch_and_op(
    origin: *const c_void,
    result: *mut c_void,
    dt: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    op: MPI_Op,
    w: MPI_Win,
) -> c_int {
    const CALL: &str = "MPI_Fetch_and_op";
    if let Some(((prim, p), _)) = fast_acc(origin, 1, dt, Some((result, 1, dt)), 1, dt, op) {
        let olen = if p == PredefinedOp::NoOp {
            0
        } else {
            prim.size()
        };
        // SAFETY: MPI's contract: one element of `datatype` at origin (read unless MPI_NO_OP).
        let o = unsafe { bytes_in(origin, olen) };
        // SAFETY: MPI's contract: one element of `datatype` writable at result.
        let r = unsafe { bytes_out(result, prim.size()) };
        if with_cached(w, |wn| wn.acc_direct(prim, p, o, Some(r), 1, rank, disp)) == Some(true) {
            return MPI_SUCCESS;
        }
    }
    wffi(CALL, w, || {
        let wn = win(w, CALL)?;
        let d = committed(dt, CALL, "datatype")?;
        if d.as_primitive().is_none() {
            return Err(bad(
                ErrorClass::Type,
                CALL,
                "datatype",
                "must be a predefined datatype",
            ));
        }
        let op = acc_op(CALL, op)?;
        let noop = op.as_predefined() == Some(oxmpi_core::op::PredefinedOp::NoOp);
        check_buf(CALL, "result_addr", result, 1, &d)?;
        if !noop {
            check_buf(CALL, "origin_addr", origin, 1, &d)?;
        }
        // SAFETY: MPI's contract: one element of `datatype` at origin (read unless MPI_NO_OP).
        let o = unsafe { region_in(origin, if noop { 0 } else { 1 }, &d) };
        // SAFETY: MPI's contract: one element of `datatype` writable at result.
        let mut r = unsafe { region_out(result, 1, &d) };
        wn.accumulate(CALL, &o, Some(&mut r), rank, disp, 1, &d, &op)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Compare_and_swap(
    origin: *const c_void,
    compare: *const c_void,
    result: *mut c_void,
    dt: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    w: MPI_Win,
) -> c_int {
    const CALL: &str = "MPI_Compare_and_swap";
    if let Some(prim) = dense_prim(dt) {
        if [origin, compare, result.cast_const()]
            .iter()
            .all(|&b| b as usize >= 4096)
        {
            let n = prim.size();
            // SAFETY: MPI's contract: one element of `datatype` at each buffer (result: writable).
            let (o, c, r) = unsafe {
                (
                    bytes_in(origin, n),
                    bytes_in(compare, n),
                    bytes_out(result, n),
                )
            };
            if with_cached(w, |wn| wn.cas_direct(prim, o, c, r, rank, disp)) == Some(true) {
                return MPI_SUCCESS;
            }
        }
    }
    wffi(CALL, w, || {
        let wn = win(w, CALL)?;
        let d = committed(dt, CALL, "datatype")?;
        check_buf(CALL, "origin_addr", origin, 1, &d)?;
        check_buf(CALL, "compare_addr", compare, 1, &d)?;
        check_buf(CALL, "result_addr", result, 1, &d)?;
        // Only a predefined datatype's element is a run of bytes (others are refused).
        let n = if d.as_primitive().is_some() {
            d.size()
        } else {
            0
        };
        // SAFETY: MPI's contract: one element of `datatype` at each buffer (result: writable); non-null (checked).
        let (o, c, r) = unsafe {
            (
                bytes_in(origin, n),
                bytes_in(compare, n),
                bytes_out(result, n),
            )
        };
        wn.compare_and_swap(CALL, o, c, r, &d, rank, disp)?;
        Ok(())
    })
}
