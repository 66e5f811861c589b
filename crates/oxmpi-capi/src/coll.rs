//! Collectives: the engine's `coll::*` for intra- and intercommunicators
//! (the engine dispatches intercommunicators itself; `root` passes MPI_ROOT and
//! MPI_PROC_NULL through), blocking and immediate. (Neighbourhood
//! collectives: `neighbor.rs`.) MPI_IN_PLACE is the engine's `None` buffer.
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

use oxmpi_core::buf::Forever;
use oxmpi_core::coll;
use oxmpi_core::coll::api_move::Blocks;
use oxmpi_core::datatype::{Datatype, Primitive};
use oxmpi_core::error::{ErrorClass, Result as CoreResult};
use oxmpi_core::op::Op;
use oxmpi_core::{Comm, Request};

use crate::abi::*;
use crate::conv::bufs::{coll_recv, coll_recv_v, coll_send, coll_send_v};
use crate::conv::errors::{array, bad, ffi, out, R};
use crate::conv::large::{entry, name, ptr::*, to_usize, Count, Displ};
use crate::conv::{comm, committed, new_request, op};
use crate::types::*;

// ----- argument helpers ----------------------------------------------------------------

fn is_in_place(p: *const c_void) -> bool {
    p as usize == MPI_IN_PLACE
}

/// MPI forbids aliasing an IN buffer with an OUT buffer (MPI_IN_PLACE is the way
/// to reuse one): the same non-NULL address for both, with data to move, is
/// MPI_ERR_BUFFER, found before any communication starts (so a program may go on).
/// (NULL is MPI_BOTTOM, which absolute-address datatypes may share legitimately.)
fn no_alias(call: &str, sb: *const c_void, rb: *const c_void, moves_data: bool) -> R<()> {
    if moves_data && !sb.is_null() && !is_in_place(sb) && sb == rb {
        return Err(bad(
            ErrorClass::Buffer,
            call,
            "recvbuf",
            "is the same buffer as `sendbuf` (MPI forbids aliased arguments; use MPI_IN_PLACE)",
        ));
    }
    Ok(())
}

/// The bytes `count` elements of `dt` at `p` cover, when `dt` is contiguous
/// (its data fill its extent, so the range is exact); `None` when there is no data
/// or the type has holes (whose gaps another buffer may legitimately use).
fn dense_range(p: *const c_void, count: usize, dt: &Datatype) -> Option<(usize, usize)> {
    let size = dt.size() as isize;
    if count == 0
        || size == 0
        || p.is_null()
        || is_in_place(p)
        || dt.true_extent() != size
        || dt.extent() != size
    {
        return None;
    }
    let start = (p as isize).checked_add(dt.true_lb())? as usize;
    Some((start, start.checked_add(count.checked_mul(size as usize)?)?))
}

/// [`no_alias`] for a send buffer that overlaps (not only starts at) one of the
/// receive blocks: MPI_ERR_BUFFER. Only dense ranges are compared.
fn no_overlap(
    call: &str,
    send: Option<(usize, usize)>,
    recv_blocks: impl IntoIterator<Item = Option<(usize, usize)>>,
) -> R<()> {
    let Some((s0, s1)) = send else { return Ok(()) };
    if recv_blocks
        .into_iter()
        .flatten()
        .any(|(r0, r1)| s0 < r1 && r0 < s1)
    {
        return Err(bad(
            ErrorClass::Buffer,
            call,
            "sendbuf",
            "overlaps `recvbuf` (MPI forbids aliased arguments; use MPI_IN_PLACE)",
        ));
    }
    Ok(())
}

/// A send buffer: `None` for MPI_IN_PLACE.
fn sendbuf(p: *const c_void) -> Option<*const u8> {
    (!is_in_place(p)).then_some(p as *const u8)
}

pub(crate) fn count<C: Count>(call: &str, arg: &str, n: C) -> R<usize> {
    to_usize(call, arg, n)
}

/// A count that only matters where `significant`.
fn count_if<C: Count>(call: &str, arg: &str, n: C, significant: bool) -> R<usize> {
    if significant {
        count(call, arg, n)
    } else {
        Ok(usize::try_from(n.wide()).unwrap_or(0))
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
pub(crate) unsafe fn counts<C: Count>(
    call: &str,
    arg: &str,
    p: *const C,
    n: usize,
) -> R<Vec<usize>> {
    // SAFETY: this function's contract is `array`'s.
    let v = unsafe { array(call, arg, p, n)? };
    // The element's name is formatted only for an error message: a format! per
    // element was 70% of a 2-rank MPI_Alltoallv with zero counts (8,900
    // instructions a call; callgrind, bench/PROFILE.md).
    v.iter()
        .enumerate()
        .map(|(i, &c)| {
            let w = c.wide();
            match usize::try_from(w) {
                Ok(u) if u <= isize::MAX as usize => Ok(u),
                _ => to_usize(call, &format!("{arg}[{i}]"), c),
            }
        })
        .collect()
}

/// A displacements array of `n` ints or addresses.
///
/// # Safety
/// As [`array`].
pub(crate) unsafe fn displs<D: Displ>(
    call: &str,
    arg: &str,
    p: *const D,
    n: usize,
) -> R<Vec<isize>> {
    // SAFETY: this function's contract is `array`'s.
    Ok(unsafe { array(call, arg, p, n)? }
        .iter()
        .map(|&d| d.addr())
        .collect())
}

/// An array of `n` datatype handles, each committed.
///
/// # Safety
/// As [`array`].
pub(crate) unsafe fn dtypes(
    call: &str,
    arg: &str,
    p: *const MPI_Datatype,
    n: usize,
) -> R<Vec<Datatype>> {
    // SAFETY: this function's contract is `array`'s.
    let hs = unsafe { array(call, arg, p, n)? };
    hs.iter()
        .enumerate()
        .map(|(i, &h)| {
            committed(h, call, arg)
                .map_err(|_| ())
                .or_else(|_| committed(h, call, &format!("{arg}[{i}]")))
        })
        .collect()
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

/// Which form of a collective a C call is: blocking, immediate (its `request`
/// argument) or persistent (`MPI_<Op>_init`: its `info` and `request` arguments).
#[derive(Clone, Copy)]
pub(crate) enum Form {
    Blocking,
    Immediate(*mut MPI_Request),
    Persistent(MPI_Info, *mut MPI_Request),
}

impl Form {
    /// The `request` argument, if the form has one.
    pub(crate) fn request(self) -> Option<*mut MPI_Request> {
        match self {
            Form::Blocking => None,
            Form::Immediate(r) | Form::Persistent(_, r) => Some(r),
        }
    }
}

/// Runs the engine call of `form`: `blocking`, `immediate`, or, for the
/// persistent form, `immediate` once, now, to plan the schedule every
/// MPI_Start of the new persistent request runs again
/// (`coll::persistent::plan`). `request` is the immediate or persistent
/// form's `request` argument, already passed through [`out`]; its error, if
/// any, is reported here, after the other checks.
pub(crate) fn go(
    c: MPI_Comm,
    call: &'static str,
    form: Form,
    request: Option<R<&mut MPI_Request>>,
    blocking: impl FnOnce() -> CoreResult<()>,
    immediate: impl FnOnce() -> CoreResult<Request>,
) -> R<()> {
    match (form, request) {
        (Form::Blocking, _) | (_, None) => Ok(blocking()?),
        (Form::Immediate(_), Some(o)) => {
            let o = o?;
            let r = immediate()?;
            *o = new_request(r, c, None);
            Ok(())
        }
        (Form::Persistent(info, _), Some(o)) => {
            let o = o?;
            crate::conv::info_arg(call, info)?;
            let plan = coll::persistent::plan(call, immediate)?;
            *o = crate::conv::new_persistent_coll(plan, c);
            Ok(())
        }
    }
}

/// [`go`] for a call whose core entry points take its buffers' descriptors `bufs`
/// (made once, handed to whichever form runs).
pub(crate) fn go_with<B>(
    c: MPI_Comm,
    call: &'static str,
    form: Form,
    request: Option<R<&mut MPI_Request>>,
    bufs: B,
    blocking: impl FnOnce(B) -> CoreResult<()>,
    immediate: impl FnOnce(B) -> CoreResult<Request>,
) -> R<()> {
    match (form, request) {
        (Form::Blocking, _) | (_, None) => Ok(blocking(bufs)?),
        (Form::Immediate(_), Some(o)) => {
            let o = o?;
            let r = immediate(bufs)?;
            *o = new_request(r, c, None);
            Ok(())
        }
        (Form::Persistent(info, _), Some(o)) => {
            let o = o?;
            crate::conv::info_arg(call, info)?;
            let plan = coll::persistent::plan(call, || immediate(bufs))?;
            *o = crate::conv::new_persistent_coll(plan, c);
            Ok(())
        }
    }
}

/// The call's name in `form` (`MPI_X`, `MPI_IX`, `MPI_X_init`).
pub(crate) fn names(
    blocking: &'static str,
    immediate: &'static str,
    persistent: &'static str,
    form: Form,
) -> &'static str {
    match form {
        Form::Blocking => blocking,
        Form::Immediate(_) => immediate,
        Form::Persistent(..) => persistent,
    }
}

// ----- broadcast, gather, scatter ------------------------------------------------------

pub(crate) unsafe fn bcast<C: Count>(
    buf: *mut c_void,
    n: C,
    dt: MPI_Datatype,
    root: c_int,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names("MPI_Bcast", "MPI_Ibcast", "MPI_Bcast_init", form);
    let call = name::<C>(call);
    ffi(call, c, || {
        // SAFETY: `form`'s request: none (blocking) or the call's OUT argument, NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { form.request().map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let sig = !cm.is_inter() || root == MPI_ROOT || is_leaf(&cm, root);
        let n = count_if(call, "count", n, sig)?;
        let dt = dtype_if(dt, call, "datatype", sig)?;
        // SAFETY: `buf` holds `n` elements of `dt` (read at the root, written elsewhere), as MPI_Bcast requires of its C caller.
        let b = unsafe { coll_recv(buf, n, &dt) };
        go_with(
            c,
            call,
            form,
            req,
            b,
            |b| coll::bcast::bcast(b, root, &cm),
            |b| coll::bcast::ibcast(&Forever, b, root, &cm),
        )
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gather<C: Count>(
    sb: *const c_void,
    sc: C,
    st: MPI_Datatype,
    rb: *mut c_void,
    rc: C,
    rt: MPI_Datatype,
    root: c_int,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names("MPI_Gather", "MPI_Igather", "MPI_Gather_init", form);
    let call = name::<C>(call);
    ffi(call, c, || {
        // SAFETY: `form`'s request: none (blocking) or the call's OUT argument, NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { form.request().map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let (is_root, leaf) = (at_root(&cm, root), is_leaf(&cm, root));
        let send_sig = leaf && !(is_root && is_in_place(sb));
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let rc = count_if(call, "recvcount", rc, is_root)?;
        let rt = dtype_if(rt, call, "recvtype", is_root)?;
        no_alias(
            call,
            sb,
            rb,
            is_root && !cm.is_inter() && rc > 0 && rt.size() > 0,
        )?;
        let n = cm.peer_group_size().max(0) as usize;
        // SAFETY: `sb` (unless MPI_IN_PLACE) holds `sc` × `st`; `rb` holds `rc` × `rt` per rank, at the root only (described there only), as MPI_Gather requires of its C caller.
        let bufs = unsafe {
            (
                coll_send(sb, sc, &st),
                is_root.then(|| coll_recv(rb, rc.saturating_mul(n), &rt)),
            )
        };
        go_with(
            c,
            call,
            form,
            req,
            bufs,
            |(s, r)| coll::api_move::gather(s, r, rc, root, &cm),
            |(s, r)| coll::api_move::igather(&Forever, s, r, rc, root, &cm),
        )
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gatherv<C: Count, D: Displ>(
    sb: *const c_void,
    sc: C,
    st: MPI_Datatype,
    rb: *mut c_void,
    rcs: *const C,
    ds: *const D,
    rt: MPI_Datatype,
    root: c_int,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names("MPI_Gatherv", "MPI_Igatherv", "MPI_Gatherv_init", form);
    let call = name::<C>(call);
    ffi(call, c, || {
        // SAFETY: `form`'s request: none (blocking) or the call's OUT argument, NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { form.request().map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let (is_root, leaf) = (at_root(&cm, root), is_leaf(&cm, root));
        let send_sig = leaf && !(is_root && is_in_place(sb));
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let n = if is_root {
            cm.peer_group_size() as usize
        } else {
            0
        };
        // SAFETY: at the root, MPI_Gatherv's `recvcounts` and `displs` have one entry per process of the (remote) group, `n`; elsewhere `n` is 0 and they are not read.
        let (rcs, mut ds) = unsafe {
            (
                counts(call, "recvcounts", rcs, n)?,
                displs(call, "displs", ds, n)?,
            )
        };
        let rt = dtype_if(rt, call, "recvtype", is_root)?;
        no_alias(
            call,
            sb,
            rb,
            is_root && !cm.is_inter() && rt.size() > 0 && rcs.iter().any(|&k| k > 0),
        )?;
        // SAFETY: `sb` (unless MPI_IN_PLACE) holds `sc` × `st`; at the root (described there only) `rb` holds `rcs[i]` × `rt` at `ds[i]` per rank, as MPI_Gatherv requires of its C caller.
        let bufs = unsafe {
            (
                coll_send(sb, sc, &st),
                is_root.then(|| coll_recv_v(rb, &rcs, &mut ds, &rt)),
            )
        };
        go_with(
            c,
            call,
            form,
            req,
            bufs,
            |(s, r)| coll::api_move::gatherv(s, r, &rcs, &ds, root, &cm),
            |(s, r)| coll::api_move::igatherv(&Forever, s, r, &rcs, &ds, root, &cm),
        )
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatter<C: Count>(
    sb: *const c_void,
    sc: C,
    st: MPI_Datatype,
    rb: *mut c_void,
    rc: C,
    rt: MPI_Datatype,
    root: c_int,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names("MPI_Scatter", "MPI_Iscatter", "MPI_Scatter_init", form);
    let call = name::<C>(call);
    ffi(call, c, || {
        // SAFETY: `form`'s request: none (blocking) or the call's OUT argument, NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { form.request().map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let (is_root, leaf) = (at_root(&cm, root), is_leaf(&cm, root));
        let recv_sig = leaf && !(is_root && is_in_place(rb));
        let sc = count_if(call, "sendcount", sc, is_root)?;
        let st = dtype_if(st, call, "sendtype", is_root)?;
        let rc = count_if(call, "recvcount", rc, recv_sig)?;
        let rt = dtype_if(rt, call, "recvtype", recv_sig)?;
        no_alias(
            call,
            rb,
            sb,
            is_root && !cm.is_inter() && sc > 0 && st.size() > 0,
        )?;
        let n = cm.peer_group_size().max(0) as usize;
        // SAFETY: at the root (described there only) `sb` holds `sc` × `st` per rank; `rb` (unless MPI_IN_PLACE) holds `rc` × `rt`, as MPI_Scatter requires of its C caller.
        let bufs = unsafe {
            (
                is_root
                    .then(|| coll_send(sb, sc.saturating_mul(n), &st))
                    .flatten(),
                (!is_in_place(rb)).then(|| coll_recv(rb, rc, &rt)),
            )
        };
        go_with(
            c,
            call,
            form,
            req,
            bufs,
            |(s, r)| coll::api_move::scatter(s, sc, r, root, &cm),
            |(s, r)| coll::api_move::iscatter(&Forever, s, sc, r, root, &cm),
        )
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatterv<C: Count, D: Displ>(
    sb: *const c_void,
    scs: *const C,
    ds: *const D,
    st: MPI_Datatype,
    rb: *mut c_void,
    rc: C,
    rt: MPI_Datatype,
    root: c_int,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names("MPI_Scatterv", "MPI_Iscatterv", "MPI_Scatterv_init", form);
    let call = name::<C>(call);
    ffi(call, c, || {
        // SAFETY: `form`'s request: none (blocking) or the call's OUT argument, NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { form.request().map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let (is_root, leaf) = (at_root(&cm, root), is_leaf(&cm, root));
        let recv_sig = leaf && !(is_root && is_in_place(rb));
        let n = if is_root {
            cm.peer_group_size() as usize
        } else {
            0
        };
        // SAFETY: at the root, MPI_Scatterv's `sendcounts` and `displs` have one entry per process of the (remote) group, `n`; elsewhere `n` is 0 and they are not read.
        let (scs, mut ds) = unsafe {
            (
                counts(call, "sendcounts", scs, n)?,
                displs(call, "displs", ds, n)?,
            )
        };
        let st = dtype_if(st, call, "sendtype", is_root)?;
        let rc = count_if(call, "recvcount", rc, recv_sig)?;
        let rt = dtype_if(rt, call, "recvtype", recv_sig)?;
        no_alias(
            call,
            rb,
            sb,
            is_root && !cm.is_inter() && st.size() > 0 && scs.iter().any(|&k| k > 0),
        )?;
        // SAFETY: at the root (described there only) `sb` holds `scs[i]` × `st` at `ds[i]` per rank; `rb` (unless MPI_IN_PLACE) holds `rc` × `rt`, as MPI_Scatterv requires of its C caller.
        let bufs = unsafe {
            (
                is_root
                    .then(|| coll_send_v(sb, &scs, &mut ds, &st))
                    .flatten(),
                (!is_in_place(rb)).then(|| coll_recv(rb, rc, &rt)),
            )
        };
        go_with(
            c,
            call,
            form,
            req,
            bufs,
            |(s, r)| coll::api_move::scatterv(s, &scs, &ds, r, root, &cm),
            |(s, r)| coll::api_move::iscatterv(&Forever, s, &scs, &ds, r, root, &cm),
        )
    })
}

// ----- allgather, alltoall -------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allgather<C: Count>(
    sb: *const c_void,
    sc: C,
    st: MPI_Datatype,
    rb: *mut c_void,
    rc: C,
    rt: MPI_Datatype,
    c: MPI_Comm,
    form: Form,
    all_to_all: bool,
) -> c_int {
    let call = match all_to_all {
        false => names(
            "MPI_Allgather",
            "MPI_Iallgather",
            "MPI_Allgather_init",
            form,
        ),
        true => names("MPI_Alltoall", "MPI_Ialltoall", "MPI_Alltoall_init", form),
    };
    let call = name::<C>(call);
    ffi(call, c, || {
        // SAFETY: `form`'s request: none (blocking) or the call's OUT argument, NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { form.request().map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let send_sig = !is_in_place(sb);
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let rc = count(call, "recvcount", rc)?;
        let rt = committed(rt, call, "recvtype")?;
        no_alias(call, sb, rb, rc > 0 && rt.size() > 0)?;
        if send_sig {
            let groups = cm.peer_group_size() as usize;
            let sent = if all_to_all {
                sc.saturating_mul(groups)
            } else {
                sc
            };
            no_overlap(
                call,
                dense_range(sb, sent, &st),
                [dense_range(rb, rc.saturating_mul(groups), &rt)],
            )?;
        }
        let n = cm.peer_group_size().max(0) as usize;
        let sent = if all_to_all { sc.saturating_mul(n) } else { sc };
        // SAFETY: `sb` (unless MPI_IN_PLACE) holds `sc` × `st` (per rank for MPI_Alltoall); `rb` holds `rc` × `rt` per rank, as MPI_Allgather and MPI_Alltoall require of their C caller.
        let bufs = unsafe {
            (
                coll_send(sb, sent, &st),
                coll_recv(rb, rc.saturating_mul(n), &rt),
            )
        };
        if all_to_all {
            go_with(
                c,
                call,
                form,
                req,
                bufs,
                |(s, r)| coll::api_move::alltoall(s, sc, r, rc, &cm),
                |(s, r)| coll::api_move::ialltoall(&Forever, s, sc, r, rc, &cm),
            )
        } else {
            go_with(
                c,
                call,
                form,
                req,
                bufs,
                |(s, r)| coll::api_move::allgather(s, r, rc, &cm),
                |(s, r)| coll::api_move::iallgather(&Forever, s, r, rc, &cm),
            )
        }
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allgatherv<C: Count, D: Displ>(
    sb: *const c_void,
    sc: C,
    st: MPI_Datatype,
    rb: *mut c_void,
    rcs: *const C,
    ds: *const D,
    rt: MPI_Datatype,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names(
        "MPI_Allgatherv",
        "MPI_Iallgatherv",
        "MPI_Allgatherv_init",
        form,
    );
    let call = name::<C>(call);
    ffi(call, c, || {
        // SAFETY: `form`'s request: none (blocking) or the call's OUT argument, NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { form.request().map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let send_sig = !is_in_place(sb);
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let n = cm.peer_group_size() as usize;
        // SAFETY: MPI_Allgatherv's `recvcounts` and `displs` have one entry per process of the (remote) group, `n`.
        let (rcs, mut ds) = unsafe {
            (
                counts(call, "recvcounts", rcs, n)?,
                displs(call, "displs", ds, n)?,
            )
        };
        let rt = committed(rt, call, "recvtype")?;
        no_alias(call, sb, rb, rt.size() > 0 && rcs.iter().any(|&k| k > 0))?;
        if send_sig {
            let ext = rt.extent();
            let blocks = rcs.iter().zip(&ds).map(|(&k, &d)| {
                dense_range(
                    (rb as isize).wrapping_add(d.wrapping_mul(ext)) as *const c_void,
                    k,
                    &rt,
                )
            });
            no_overlap(call, dense_range(sb, sc, &st), blocks)?;
        }
        // SAFETY: `sb` (unless MPI_IN_PLACE) holds `sc` × `st`; `rb` holds `rcs[i]` × `rt` at `ds[i]` per rank, as MPI_Allgatherv requires of its C caller.
        let bufs = unsafe { (coll_send(sb, sc, &st), coll_recv_v(rb, &rcs, &mut ds, &rt)) };
        go_with(
            c,
            call,
            form,
            req,
            bufs,
            |(s, r)| coll::api_move::allgatherv(s, r, &rcs, &ds, &cm),
            |(s, r)| coll::api_move::iallgatherv(&Forever, s, r, &rcs, &ds, &cm),
        )
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoallv<C: Count, D: Displ>(
    sb: *const c_void,
    scs: *const C,
    sds: *const D,
    st: MPI_Datatype,
    rb: *mut c_void,
    rcs: *const C,
    rds: *const D,
    rt: MPI_Datatype,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names(
        "MPI_Alltoallv",
        "MPI_Ialltoallv",
        "MPI_Alltoallv_init",
        form,
    );
    let call = name::<C>(call);
    ffi(call, c, || {
        // SAFETY: `form`'s request: none (blocking) or the call's OUT argument, NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { form.request().map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let n = cm.peer_group_size() as usize;
        let send_sig = !is_in_place(sb);
        let ns = if send_sig { n } else { 0 };
        // SAFETY: MPI_Alltoallv's `sendcounts` and `sdispls` have one entry per process of the (remote) group; with MPI_IN_PLACE they are ignored and `ns` is 0.
        let (scs, mut sds) = unsafe {
            (
                counts(call, "sendcounts", scs, ns)?,
                displs(call, "sdispls", sds, ns)?,
            )
        };
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        // SAFETY: MPI_Alltoallv's `recvcounts` and `rdispls` have one entry per process of the (remote) group, `n`.
        let (rcs, mut rds) = unsafe {
            (
                counts(call, "recvcounts", rcs, n)?,
                displs(call, "rdispls", rds, n)?,
            )
        };
        let rt = committed(rt, call, "recvtype")?;
        no_alias(call, sb, rb, rt.size() > 0 && rcs.iter().any(|&k| k > 0))?;
        // SAFETY: `sb` (unless MPI_IN_PLACE) and `rb` hold the blocks `scs`/`sds` × `st` and `rcs`/`rds` × `rt` describe, as MPI_Alltoallv requires of its C caller.
        let bufs = unsafe {
            (
                coll_send_v(sb, &scs, &mut sds, &st),
                coll_recv_v(rb, &rcs, &mut rds, &rt),
            )
        };
        let sbl = || Blocks {
            counts: &scs,
            displs: &sds,
        };
        let rbl = || Blocks {
            counts: &rcs,
            displs: &rds,
        };
        go_with(
            c,
            call,
            form,
            req,
            bufs,
            |(s, r)| coll::api_move::alltoallv(s, sbl(), r, rbl(), &cm),
            |(s, r)| coll::api_move::ialltoallv(&Forever, s, sbl(), r, rbl(), &cm),
        )
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoallw<C: Count, D: Displ>(
    sb: *const c_void,
    scs: *const C,
    sds: *const D,
    sts: *const MPI_Datatype,
    rb: *mut c_void,
    rcs: *const C,
    rds: *const D,
    rts: *const MPI_Datatype,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names(
        "MPI_Alltoallw",
        "MPI_Ialltoallw",
        "MPI_Alltoallw_init",
        form,
    );
    let call = name::<C>(call);
    ffi(call, c, || {
        // SAFETY: `form`'s request: none (blocking) or the call's OUT argument, NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { form.request().map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let n = cm.peer_group_size() as usize;
        let ns = if is_in_place(sb) { 0 } else { n };
        // SAFETY: MPI_Alltoallw's send arrays have one entry per process of the (remote) group; with MPI_IN_PLACE they are ignored and `ns` is 0.
        let (scs, sds, sts) = unsafe {
            (
                counts(call, "sendcounts", scs, ns)?,
                displs(call, "sdispls", sds, ns)?,
                dtypes(call, "sendtypes", sts, ns)?,
            )
        };
        // SAFETY: MPI_Alltoallw's receive arrays have one entry per process of the (remote) group, `n`.
        let (rcs, rds, rts) = unsafe {
            (
                counts(call, "recvcounts", rcs, n)?,
                displs(call, "rdispls", rds, n)?,
                dtypes(call, "recvtypes", rts, n)?,
            )
        };
        no_alias(
            call,
            sb,
            rb,
            rcs.iter().zip(&rts).any(|(&k, t)| k > 0 && t.size() > 0),
        )?;
        let s = sendbuf(sb);
        let r = rb as *mut u8;
        go(
            c,
            call,
            form,
            req,
            // SAFETY: `s` (unless MPI_IN_PLACE) and `r` hold the blocks `scs`/`sds`/`sts` and `rcs`/`rds`/`rts` describe, as MPI_Alltoallw requires of its C caller, until this blocking call returns.
            || unsafe { coll::alltoall::alltoallw(s, &scs, &sds, &sts, r, &rcs, &rds, &rts, &cm) },
            // SAFETY: as above, and MPI_Ialltoallw's caller leaves the buffers alone until the request completes.
            || unsafe { coll::alltoall::ialltoallw(s, &scs, &sds, &sts, r, &rcs, &rds, &rts, &cm) },
        )
    })
}

// ----- reductions ----------------------------------------------------------------------

struct RedArgs {
    comm: Comm,
    n: usize,
    dt: Datatype,
    op: Op,
}

fn red_args<C: Count>(call: &str, c: MPI_Comm, n: C, dt: MPI_Datatype, o: MPI_Op) -> R<RedArgs> {
    let cm = comm(c, call)?;
    let n = count(call, "count", n)?;
    let dt = committed(dt, call, "datatype")?;
    let op = op(o, call)?;
    Ok(RedArgs {
        comm: cm,
        n,
        dt,
        op,
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce<C: Count>(
    sb: *const c_void,
    rb: *mut c_void,
    n: C,
    dt: MPI_Datatype,
    o: MPI_Op,
    root: c_int,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names("MPI_Reduce", "MPI_Ireduce", "MPI_Reduce_init", form);
    let call = name::<C>(call);
    ffi(call, c, || {
        // SAFETY: `form`'s request: none (blocking) or the call's OUT argument, NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { form.request().map(|p| out(call, "request", p)) };
        let a = red_args(call, c, n, dt, o)?;
        no_alias(
            call,
            sb,
            rb,
            at_root(&a.comm, root) && !a.comm.is_inter() && a.n > 0 && a.dt.size() > 0,
        )?;
        // SAFETY: `sb` (unless MPI_IN_PLACE) holds `a.n` × `a.dt`, and so does `rb` at the root (described there only), as MPI_Reduce requires of its C caller.
        let bufs = unsafe {
            (
                coll_send(sb, a.n, &a.dt),
                at_root(&a.comm, root).then(|| coll_recv(rb, a.n, &a.dt)),
            )
        };
        let (op, cm) = (&a.op, &a.comm);
        go_with(
            c,
            call,
            form,
            req,
            bufs,
            |(s, r)| coll::reduce::reduce(s, r, op, root, cm),
            |(s, r)| coll::reduce::ireduce(&Forever, s, r, op, root, cm),
        )
    })
}

#[derive(Clone, Copy)]
pub(crate) enum Whole {
    Allreduce,
    Scan,
    Exscan,
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn whole<C: Count>(
    kind: Whole,
    sb: *const c_void,
    rb: *mut c_void,
    n: C,
    dt: MPI_Datatype,
    o: MPI_Op,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = match kind {
        Whole::Allreduce => names(
            "MPI_Allreduce",
            "MPI_Iallreduce",
            "MPI_Allreduce_init",
            form,
        ),
        Whole::Scan => names("MPI_Scan", "MPI_Iscan", "MPI_Scan_init", form),
        Whole::Exscan => names("MPI_Exscan", "MPI_Iexscan", "MPI_Exscan_init", form),
    };
    let call = name::<C>(call);
    ffi(call, c, || {
        // SAFETY: `form`'s request: none (blocking) or the call's OUT argument, NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { form.request().map(|p| out(call, "request", p)) };
        let a = red_args(call, c, n, dt, o)?;
        no_alias(call, sb, rb, a.n > 0 && a.dt.size() > 0)?;
        let (cm, n, dt, op) = (&a.comm, a.n, &a.dt, &a.op);
        // SAFETY: `sb` (unless MPI_IN_PLACE) and `rb` hold `n` elements of `dt`, as MPI_Allreduce, MPI_Scan and MPI_Exscan require of their C caller.
        let bufs = unsafe { (coll_send(sb, n, dt), coll_recv(rb, n, dt)) };
        match kind {
            Whole::Allreduce => go_with(
                c,
                call,
                form,
                req,
                bufs,
                |(s, r)| coll::allreduce::allreduce(s, r, op, cm),
                |(s, r)| coll::allreduce::iallreduce(&Forever, s, r, op, cm),
            ),
            Whole::Scan => go_with(
                c,
                call,
                form,
                req,
                bufs,
                |(s, r)| coll::scan::scan(s, r, op, cm),
                |(s, r)| coll::scan::iscan(&Forever, s, r, op, cm),
            ),
            Whole::Exscan => go_with(
                c,
                call,
                form,
                req,
                bufs,
                |(s, r)| coll::scan::exscan(s, r, op, cm),
                |(s, r)| coll::scan::iexscan(&Forever, s, r, op, cm),
            ),
        }
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce_scatter<C: Count>(
    sb: *const c_void,
    rb: *mut c_void,
    rcs: *const C,
    dt: MPI_Datatype,
    o: MPI_Op,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names(
        "MPI_Reduce_scatter",
        "MPI_Ireduce_scatter",
        "MPI_Reduce_scatter_init",
        form,
    );
    let call = name::<C>(call);
    ffi(call, c, || {
        // SAFETY: `form`'s request: none (blocking) or the call's OUT argument, NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { form.request().map(|p| out(call, "request", p)) };
        let a = red_args(call, c, 0, dt, o)?;
        // SAFETY: MPI_Reduce_scatter's `recvcounts` has one entry per process of the group.
        let rcs = unsafe { counts(call, "recvcounts", rcs, a.comm.size() as usize)? };
        no_alias(call, sb, rb, a.dt.size() > 0 && rcs.iter().any(|&k| k > 0))?;
        let total = rcs.iter().fold(0usize, |t, &k| t.saturating_add(k));
        let mine = rcs.get(a.comm.rank() as usize).copied().unwrap_or(0);
        let held = if is_in_place(sb) { total } else { mine };
        // SAFETY: `sb` (unless MPI_IN_PLACE) holds sum(`rcs`) × `a.dt`; `rb` holds this rank's `rcs` entry × `a.dt` (in place: the whole input), as MPI_Reduce_scatter requires of its C caller.
        let bufs = unsafe { (coll_send(sb, total, &a.dt), coll_recv(rb, held, &a.dt)) };
        let (op, cm) = (&a.op, &a.comm);
        go_with(
            c,
            call,
            form,
            req,
            bufs,
            |(s, r)| coll::api_move::reduce_scatter(s, r, &rcs, op, cm),
            |(s, r)| coll::api_move::ireduce_scatter(&Forever, s, r, &rcs, op, cm),
        )
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce_scatter_block<C: Count>(
    sb: *const c_void,
    rb: *mut c_void,
    rc: C,
    dt: MPI_Datatype,
    o: MPI_Op,
    c: MPI_Comm,
    form: Form,
) -> c_int {
    let call = names(
        "MPI_Reduce_scatter_block",
        "MPI_Ireduce_scatter_block",
        "MPI_Reduce_scatter_block_init",
        form,
    );
    let call = name::<C>(call);
    ffi(call, c, || {
        // SAFETY: `form`'s request: none (blocking) or the call's OUT argument, NULL (rejected) or writable and unaliased (MPI contract).
        let req = unsafe { form.request().map(|p| out(call, "request", p)) };
        let cm = comm(c, call)?;
        let rc = count(call, "recvcount", rc)?;
        let dt = committed(dt, call, "datatype")?;
        let op = op(o, call)?;
        no_alias(call, sb, rb, rc > 0 && dt.size() > 0)?;
        let total = rc.saturating_mul(cm.size().max(0) as usize);
        let held = if is_in_place(sb) { total } else { rc };
        // SAFETY: `sb` (unless MPI_IN_PLACE) holds `rc` × `dt` per rank; `rb` holds `rc` × `dt` (in place: the whole input), as MPI_Reduce_scatter_block requires of its C caller.
        let bufs = unsafe { (coll_send(sb, total, &dt), coll_recv(rb, held, &dt)) };
        go_with(
            c,
            call,
            form,
            req,
            bufs,
            |(s, r)| coll::api_move::reduce_scatter_block(s, r, rc, &op, &cm),
            |(s, r)| coll::api_move::ireduce_scatter_block(&Forever, s, r, rc, &op, &cm),
        )
    })
}

// ----- entry points: the int forms and their large-count (`_c`) twins ---------------

entry!(PMPI_Bcast, PMPI_Bcast_c, (buf: MVoid, n: CNT, dt: MPI_Datatype, root: c_int, c: MPI_Comm) => bcast(buf, n, dt, root, c, Form::Blocking));
entry!(PMPI_Ibcast, PMPI_Ibcast_c, (buf: MVoid, n: CNT, dt: MPI_Datatype, root: c_int, c: MPI_Comm, r: PReq) => bcast(buf, n, dt, root, c, Form::Immediate(r)));
entry!(PMPI_Gather, PMPI_Gather_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, root: c_int, c: MPI_Comm) => gather(sb, sc, st, rb, rc, rt, root, c, Form::Blocking));
entry!(PMPI_Igather, PMPI_Igather_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, root: c_int, c: MPI_Comm, r: PReq) => gather(sb, sc, st, rb, rc, rt, root, c, Form::Immediate(r)));
entry!(PMPI_Gatherv, PMPI_Gatherv_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rcs: ACNT, ds: ADSP, rt: MPI_Datatype, root: c_int, c: MPI_Comm) => gatherv(sb, sc, st, rb, rcs, ds, rt, root, c, Form::Blocking));
entry!(PMPI_Igatherv, PMPI_Igatherv_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rcs: ACNT, ds: ADSP, rt: MPI_Datatype, root: c_int, c: MPI_Comm, r: PReq) => gatherv(sb, sc, st, rb, rcs, ds, rt, root, c, Form::Immediate(r)));
entry!(PMPI_Scatter, PMPI_Scatter_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, root: c_int, c: MPI_Comm) => scatter(sb, sc, st, rb, rc, rt, root, c, Form::Blocking));
entry!(PMPI_Iscatter, PMPI_Iscatter_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, root: c_int, c: MPI_Comm, r: PReq) => scatter(sb, sc, st, rb, rc, rt, root, c, Form::Immediate(r)));
entry!(PMPI_Scatterv, PMPI_Scatterv_c, (sb: CVoid, scs: ACNT, ds: ADSP, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, root: c_int, c: MPI_Comm) => scatterv(sb, scs, ds, st, rb, rc, rt, root, c, Form::Blocking));
entry!(PMPI_Iscatterv, PMPI_Iscatterv_c, (sb: CVoid, scs: ACNT, ds: ADSP, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, root: c_int, c: MPI_Comm, r: PReq) => scatterv(sb, scs, ds, st, rb, rc, rt, root, c, Form::Immediate(r)));
entry!(PMPI_Allgather, PMPI_Allgather_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, c: MPI_Comm) => allgather(sb, sc, st, rb, rc, rt, c, Form::Blocking, false));
entry!(PMPI_Iallgather, PMPI_Iallgather_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, c: MPI_Comm, r: PReq) => allgather(sb, sc, st, rb, rc, rt, c, Form::Immediate(r), false));
entry!(PMPI_Alltoall, PMPI_Alltoall_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, c: MPI_Comm) => allgather(sb, sc, st, rb, rc, rt, c, Form::Blocking, true));
entry!(PMPI_Ialltoall, PMPI_Ialltoall_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rc: CNT, rt: MPI_Datatype, c: MPI_Comm, r: PReq) => allgather(sb, sc, st, rb, rc, rt, c, Form::Immediate(r), true));
entry!(PMPI_Allgatherv, PMPI_Allgatherv_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rcs: ACNT, ds: ADSP, rt: MPI_Datatype, c: MPI_Comm) => allgatherv(sb, sc, st, rb, rcs, ds, rt, c, Form::Blocking));
entry!(PMPI_Iallgatherv, PMPI_Iallgatherv_c, (sb: CVoid, sc: CNT, st: MPI_Datatype, rb: MVoid, rcs: ACNT, ds: ADSP, rt: MPI_Datatype, c: MPI_Comm, r: PReq) => allgatherv(sb, sc, st, rb, rcs, ds, rt, c, Form::Immediate(r)));
entry!(PMPI_Alltoallv, PMPI_Alltoallv_c, (sb: CVoid, scs: ACNT, sds: ADSP, st: MPI_Datatype, rb: MVoid, rcs: ACNT, rds: ADSP, rt: MPI_Datatype, c: MPI_Comm) => alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, c, Form::Blocking));
entry!(PMPI_Ialltoallv, PMPI_Ialltoallv_c, (sb: CVoid, scs: ACNT, sds: ADSP, st: MPI_Datatype, rb: MVoid, rcs: ACNT, rds: ADSP, rt: MPI_Datatype, c: MPI_Comm, r: PReq) => alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, c, Form::Immediate(r)));
entry!(PMPI_Alltoallw, PMPI_Alltoallw_c, (sb: CVoid, scs: ACNT, sds: ADSP, sts: ATypes, rb: MVoid, rcs: ACNT, rds: ADSP, rts: ATypes, c: MPI_Comm) => alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, c, Form::Blocking));
entry!(PMPI_Ialltoallw, PMPI_Ialltoallw_c, (sb: CVoid, scs: ACNT, sds: ADSP, sts: ATypes, rb: MVoid, rcs: ACNT, rds: ADSP, rts: ATypes, c: MPI_Comm, r: PReq) => alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, c, Form::Immediate(r)));
entry!(PMPI_Reduce, PMPI_Reduce_c, (sb: CVoid, rb: MVoid, n: CNT, dt: MPI_Datatype, o: MPI_Op, root: c_int, c: MPI_Comm) => reduce(sb, rb, n, dt, o, root, c, Form::Blocking));
entry!(PMPI_Ireduce, PMPI_Ireduce_c, (sb: CVoid, rb: MVoid, n: CNT, dt: MPI_Datatype, o: MPI_Op, root: c_int, c: MPI_Comm, r: PReq) => reduce(sb, rb, n, dt, o, root, c, Form::Immediate(r)));
entry!(PMPI_Allreduce, PMPI_Allreduce_c, (sb: CVoid, rb: MVoid, n: CNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) => whole(Whole::Allreduce, sb, rb, n, dt, o, c, Form::Blocking));
entry!(PMPI_Iallreduce, PMPI_Iallreduce_c, (sb: CVoid, rb: MVoid, n: CNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: PReq) => whole(Whole::Allreduce, sb, rb, n, dt, o, c, Form::Immediate(r)));
entry!(PMPI_Scan, PMPI_Scan_c, (sb: CVoid, rb: MVoid, n: CNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) => whole(Whole::Scan, sb, rb, n, dt, o, c, Form::Blocking));
entry!(PMPI_Iscan, PMPI_Iscan_c, (sb: CVoid, rb: MVoid, n: CNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: PReq) => whole(Whole::Scan, sb, rb, n, dt, o, c, Form::Immediate(r)));
entry!(PMPI_Exscan, PMPI_Exscan_c, (sb: CVoid, rb: MVoid, n: CNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) => whole(Whole::Exscan, sb, rb, n, dt, o, c, Form::Blocking));
entry!(PMPI_Iexscan, PMPI_Iexscan_c, (sb: CVoid, rb: MVoid, n: CNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: PReq) => whole(Whole::Exscan, sb, rb, n, dt, o, c, Form::Immediate(r)));
entry!(PMPI_Reduce_scatter, PMPI_Reduce_scatter_c, (sb: CVoid, rb: MVoid, rcs: ACNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) => reduce_scatter(sb, rb, rcs, dt, o, c, Form::Blocking));
entry!(PMPI_Ireduce_scatter, PMPI_Ireduce_scatter_c, (sb: CVoid, rb: MVoid, rcs: ACNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: PReq) => reduce_scatter(sb, rb, rcs, dt, o, c, Form::Immediate(r)));
entry!(PMPI_Reduce_scatter_block, PMPI_Reduce_scatter_block_c, (sb: CVoid, rb: MVoid, rc: CNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) => reduce_scatter_block(sb, rb, rc, dt, o, c, Form::Blocking));
entry!(PMPI_Ireduce_scatter_block, PMPI_Ireduce_scatter_block_c, (sb: CVoid, rb: MVoid, rc: CNT, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm, r: PReq) => reduce_scatter_block(sb, rb, rc, dt, o, c, Form::Immediate(r)));
