//! Rooted collectives: broadcast, gather(v), scatter(v).

use super::*;

// ----- broadcast, gather, scatter ------------------------------------------------------

/// The general body of `coll(bcast)` past the generated 0-count exit (`coll::entry`),
/// out of line: the exit pays none of its frame.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
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
        let cm = comm_cow(c, call)?;
        let sig = !cm.is_inter() || root == MPI_ROOT || is_leaf(&cm, root);
        let n = count_if(call, "count", n, sig)?;
        let dt = dtype_if(dt, call, "datatype", sig)?;
        // SAFETY: `buf` holds `n` elements of `dt` (read at the root, written elsewhere), as MPI_Bcast requires of its C caller.
        let b = unsafe { coll_recv(buf, n, &dt) };
        go_with(
            c,
            call,
            form,
            b,
            |b| coll::bcast::bcast(b, root, &cm),
            |b| coll::bcast::ibcast(&Forever, b, root, &cm),
        )
    })
}

/// The general body of `coll(gather)` past the generated 0-count exit (`coll::entry`),
/// out of line: the exit pays none of its frame.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
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
        let cm = comm_cow(c, call)?;
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
        let cm = comm_cow(c, call)?;
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
            bufs,
            |(s, r)| coll::api_move::gatherv(s, r, &rcs, &ds, root, &cm),
            |(s, r)| coll::api_move::igatherv(&Forever, s, r, &rcs, &ds, root, &cm),
        )
    })
}

/// The general body of `coll(scatter)` past the generated 0-count exit (`coll::entry`),
/// out of line: the exit pays none of its frame.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
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
        let cm = comm_cow(c, call)?;
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
        let cm = comm_cow(c, call)?;
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
            bufs,
            |(s, r)| coll::api_move::scatterv(s, &scs, &ds, r, root, &cm),
            |(s, r)| coll::api_move::iscatterv(&Forever, s, &scs, &ds, r, root, &cm),
        )
    })
}
