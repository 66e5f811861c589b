//! All-to-all data movement: allgather(v), alltoall(v, w).

use super::*;

// ----- allgather, alltoall -------------------------------------------------------------

/// The general body of `coll(allgather)` past the generated 0-count exit (`coll::entry`),
/// out of line: the exit pays none of its frame.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
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
        let cm = comm_cow(c, call)?;
        let send_sig = !is_in_place(sb);
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let rc = count(call, "recvcount", rc)?;
        let rt = committed_ref(rt, call, "recvtype")?;
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
                bufs,
                |(s, r)| coll::api_move::alltoall(s, sc, r, rc, &cm),
                |(s, r)| coll::api_move::ialltoall(&Forever, s, sc, r, rc, &cm),
            )
        } else {
            go_with(
                c,
                call,
                form,
                bufs,
                |(s, r)| coll::api_move::allgather(s, r, rc, &cm),
                |(s, r)| coll::api_move::iallgather(&Forever, s, r, rc, &cm),
            )
        }
    })
}

/// The general body of `coll(allgatherv)` past the generated 0-count exit (`coll::entry`),
/// out of line: the exit pays none of its frame.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
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
        let cm = comm_cow(c, call)?;
        let send_sig = !is_in_place(sb);
        let sc = count_if(call, "sendcount", sc, send_sig)?;
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        let n = cm.peer_group_size() as usize;
        // SAFETY: MPI_Allgatherv's `recvcounts` and `displs` have one entry per process of the (remote) group, `n`.
        let recv_side = unsafe { v_side(call, "recvcounts", "displs", rcs, ds, n)? };
        let (rcs, ds) = (&recv_side.counts, &recv_side.displs);
        let rt = committed_ref(rt, call, "recvtype")?;
        no_alias(call, sb, rb, rt.size() > 0 && rcs.iter().any(|&k| k > 0))?;
        if send_sig {
            let ext = rt.extent();
            // The displacements are rebased at `lo` already: the blocks' addresses from the rebased base.
            let base = (rb as isize).wrapping_add(recv_side.lo.wrapping_mul(ext));
            let blocks = rcs.iter().zip(ds.iter()).map(|(&k, &d)| {
                dense_range(
                    base.wrapping_add(d.wrapping_mul(ext)) as *const c_void,
                    k,
                    &rt,
                )
            });
            no_overlap(call, dense_range(sb, sc, &st), blocks)?;
        }
        // SAFETY: `sb` (unless MPI_IN_PLACE) holds `sc` × `st`; `rb` holds `rcs[i]` × `rt` at `ds[i]` per rank (rebased by `v_side`), as MPI_Allgatherv requires of its C caller.
        let bufs = unsafe {
            (
                coll_send(sb, sc, &st),
                coll_recv_rebased(rb, recv_side.lo, recv_side.cap, &rt),
            )
        };
        go_with(
            c,
            call,
            form,
            bufs,
            |(s, r)| coll::api_move::allgatherv(s, r, rcs, ds, &cm),
            |(s, r)| coll::api_move::iallgatherv(&Forever, s, r, rcs, ds, &cm),
        )
    })
}

/// Whether this rank's MPI_Alltoallv moves nothing: no array NULL (the general
/// path reports those) and every count 0 on both sides, read where they lie,
/// without the general path's conversions of the four arrays.
///
/// # Safety
/// Each non-NULL array has `n` initialized entries (MPI_Alltoallv's contract).
unsafe fn all_counts_zero<C: Count, D: Displ>(
    scs: *const C,
    sds: *const D,
    rcs: *const C,
    rds: *const D,
    n: usize,
) -> bool {
    if n == 0 || scs.is_null() || sds.is_null() || rcs.is_null() || rds.is_null() {
        return false;
    }
    // SAFETY: both count arrays are non-NULL (checked) with `n` entries (the caller's contract).
    let (sc, rc) = unsafe {
        (
            std::slice::from_raw_parts(scs, n),
            std::slice::from_raw_parts(rcs, n),
        )
    };
    sc.iter().chain(rc).all(|c| c.wide() == 0)
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
        let cm = comm_cow(c, call)?;
        let n = cm.peer_group_size() as usize;
        let send_sig = !is_in_place(sb);
        let ns = if send_sig { n } else { 0 };
        if matches!(form, Form::Blocking) && send_sig && !cm.is_inter() {
            // SAFETY: MPI_Alltoallv's four arrays have one entry per process of the group, `n` (an intracommunicator, not in place).
            if unsafe { all_counts_zero(scs, sds, rcs, rds, n) } {
                // The general path's checks that remain for zero counts, in its order.
                let st = dtype_if(st, call, "sendtype", true)?;
                let rt = committed_ref(rt, call, "recvtype")?;
                if coll::alltoall::alltoallv_nothing_here(&cm, &st, &rt)? {
                    return Ok(());
                }
            }
        }
        // SAFETY: MPI_Alltoallv's `sendcounts` and `sdispls` have one entry per process of the (remote) group; with MPI_IN_PLACE they are ignored and `ns` is 0.
        let send_side = unsafe { v_side(call, "sendcounts", "sdispls", scs, sds, ns)? };
        let st = dtype_if(st, call, "sendtype", send_sig)?;
        // SAFETY: MPI_Alltoallv's `recvcounts` and `rdispls` have one entry per process of the (remote) group, `n`.
        let recv_side = unsafe { v_side(call, "recvcounts", "rdispls", rcs, rds, n)? };
        let rt = committed_ref(rt, call, "recvtype")?;
        let moves_data = rt.size() > 0 && recv_side.counts.iter().any(|&k| k > 0);
        no_alias(call, sb, rb, moves_data)?;
        // SAFETY: `sb` (unless MPI_IN_PLACE) and `rb` hold the blocks each side's counts and displacements × `st`/`rt` describe (rebased by `v_side`), as MPI_Alltoallv requires of its C caller.
        let bufs = unsafe {
            (
                coll_send_rebased(sb, send_side.lo, send_side.cap, &st),
                coll_recv_rebased(rb, recv_side.lo, recv_side.cap, &rt),
            )
        };
        let sbl = || Blocks {
            counts: &send_side.counts,
            displs: &send_side.displs,
        };
        let rbl = || Blocks {
            counts: &recv_side.counts,
            displs: &recv_side.displs,
        };
        go_with(
            c,
            call,
            form,
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
        let cm = comm_cow(c, call)?;
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
        // SAFETY: unless MPI_IN_PLACE, `sb` holds the blocks `scs`/`sds`/`sts` describe, and `rb` those of `rcs`/`rds`/`rts`, as MPI_Alltoallw requires of its C caller, for as long as MPI lets the call use them.
        let bufs = unsafe {
            (
                coll_send_w(sb, &scs, &sds, &sts),
                coll_recv_w(rb, &rcs, &rds, &rts),
            )
        };
        use coll::api_move as mv;
        go_with(
            c,
            call,
            form,
            bufs,
            |(s, r)| mv::alltoallw_blocks(s, r, &cm),
            |(s, r)| mv::ialltoallw_blocks(&Forever, s, r, &cm),
        )
    })
}
