//! Reductions: reduce, allreduce, scan, exscan, reduce_scatter(_block).

use std::borrow::Cow;

use super::*;

// ----- reductions ----------------------------------------------------------------------

/// A reduction's checked arguments; the predefined communicators, datatypes and
/// operations borrowed (no reference counts taken and dropped; bench/PROFILE.md capi30).
struct RedArgs {
    comm: Cow<'static, Comm>,
    n: usize,
    dt: Cow<'static, Datatype>,
    op: Cow<'static, Op>,
}

fn red_args<C: Count>(call: &str, c: MPI_Comm, n: C, dt: MPI_Datatype, o: MPI_Op) -> R<RedArgs> {
    let cm = comm_cow(c, call)?;
    let n = count(call, "count", n)?;
    let dt = committed_ref(dt, call, "datatype")?;
    let op = op_cow(o, call)?;
    Ok(RedArgs {
        comm: cm,
        n,
        dt,
        op,
    })
}

/// The general body of `coll(reduce)` past the generated 0-count exit (`coll::entry`),
/// out of line: the exit pays none of its frame.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
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

/// The general body of `coll(whole)` past the generated 0-count exit (`coll::entry`),
/// out of line: the exit pays none of its frame.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub(crate) unsafe fn whole<C: Count>(
    sb: *const c_void,
    rb: *mut c_void,
    n: C,
    dt: MPI_Datatype,
    o: MPI_Op,
    c: MPI_Comm,
    form: Form,
    kind: Whole,
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
    blocking_lean(call, c, form, || {
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
                bufs,
                |(s, r)| coll::allreduce::allreduce(s, r, op, cm),
                |(s, r)| coll::allreduce::iallreduce(&Forever, s, r, op, cm),
            ),
            Whole::Scan => go_with(
                c,
                call,
                form,
                bufs,
                |(s, r)| coll::scan::scan(s, r, op, cm),
                |(s, r)| coll::scan::iscan(&Forever, s, r, op, cm),
            ),
            Whole::Exscan => go_with(
                c,
                call,
                form,
                bufs,
                |(s, r)| coll::scan::exscan(s, r, op, cm),
                |(s, r)| coll::scan::iexscan(&Forever, s, r, op, cm),
            ),
        }
    })
}

/// The general body of `coll(reduce_scatter)` past the generated 0-count exit (`coll::entry`),
/// out of line: the exit pays none of its frame.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
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
            bufs,
            |(s, r)| coll::api_move::reduce_scatter(s, r, &rcs, op, cm),
            |(s, r)| coll::api_move::ireduce_scatter(&Forever, s, r, &rcs, op, cm),
        )
    })
}

/// The general body of `coll(reduce_scatter_block)` past the generated 0-count exit (`coll::entry`),
/// out of line: the exit pays none of its frame.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
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
        let cm = comm_cow(c, call)?;
        let rc = count(call, "recvcount", rc)?;
        let dt = committed_ref(dt, call, "datatype")?;
        let op = op_cow(o, call)?;
        no_alias(call, sb, rb, rc > 0 && dt.size() > 0)?;
        let total = rc.saturating_mul(cm.size().max(0) as usize);
        let held = if is_in_place(sb) { total } else { rc };
        // SAFETY: `sb` (unless MPI_IN_PLACE) holds `rc` × `dt` per rank; `rb` holds `rc` × `dt` (in place: the whole input), as MPI_Reduce_scatter_block requires of its C caller.
        let bufs = unsafe { (coll_send(sb, total, &dt), coll_recv(rb, held, &dt)) };
        go_with(
            c,
            call,
            form,
            bufs,
            |(s, r)| coll::api_move::reduce_scatter_block(s, r, rc, &op, &cm),
            |(s, r)| coll::api_move::ireduce_scatter_block(&Forever, s, r, rc, &op, &cm),
        )
    })
}
