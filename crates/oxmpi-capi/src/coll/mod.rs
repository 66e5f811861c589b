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
//!
//! Files: `rooted` (bcast, gather(v), scatter(v)), `alltoall` (allgather(v),
//! alltoall(v, w)), `reduce` (the reductions, scans and reduce_scatter); this module
//! holds the argument helpers and `Form`, which `pcoll.rs` uses too.

use std::ffi::{c_int, c_void};

use oxmpi_core::buf::Forever;
use oxmpi_core::coll;
use oxmpi_core::coll::api_move::Blocks;
use oxmpi_core::datatype::{Datatype, Primitive};
use oxmpi_core::error::{ErrorClass, Result as CoreResult};
use oxmpi_core::op::Op;
use oxmpi_core::{Comm, Request};

use crate::abi::*;
use crate::conv::buffer::{
    coll_recv, coll_recv_rebased, coll_recv_v, coll_recv_w, coll_send, coll_send_rebased,
    coll_send_v, coll_send_w, v_block_end, v_rebase,
};
use crate::conv::errors::{array, bad, ffi, out, R};
use crate::conv::large::{name, to_usize, Count, Displ};
use crate::conv::{comm, comm_cow, committed, committed_ref, op_cow};
use crate::types::*;

mod alltoall;
pub(crate) mod empty;
mod reduce;
mod rooted;

pub(crate) use alltoall::*;
pub(crate) use reduce::*;
pub(crate) use rooted::*;

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

/// A count argument: a valid one inline (a compare), any other through
/// `to_usize`'s checks and errors (an out-of-line call, ~25 instructions a
/// count, bench/PROFILE.md collA33).
#[inline]
pub(crate) fn count<C: Count>(call: &str, arg: &str, n: C) -> R<usize> {
    match usize::try_from(n.wide()) {
        Ok(u) if u <= isize::MAX as usize => Ok(u),
        _ => to_usize(call, arg, n),
    }
}

/// A count that only matters where `significant`.
fn count_if<C: Count>(call: &str, arg: &str, n: C, significant: bool) -> R<usize> {
    if significant {
        count(call, arg, n)
    } else {
        Ok(usize::try_from(n.wide()).unwrap_or(0))
    }
}

/// A datatype that only matters where `significant` (elsewhere any value goes);
/// predefined ones borrowed, without a reference count taken and dropped (~150
/// instructions a call of a rooted collective, bench/PROFILE.md collA27). The
/// contiguous predefined types (the common case) are answered here, inline, by
/// one indexed load: through `committed_ref`'s frame and its large result each
/// datatype argument cost ~85 instructions (bench/PROFILE.md collA33).
#[inline]
fn dtype_if(
    h: MPI_Datatype,
    call: &str,
    arg: &str,
    significant: bool,
) -> R<std::borrow::Cow<'static, Datatype>> {
    if let Some(dt) = crate::conv::lookup::fast_datatype(h) {
        return Ok(std::borrow::Cow::Borrowed(dt));
    }
    if significant {
        crate::conv::lookup::committed_ref(h, call, arg)
    } else {
        Ok(
            crate::conv::lookup::committed_ref(h, call, arg).unwrap_or_else(|_| {
                std::borrow::Cow::Borrowed(Datatype::predefined_ref(Primitive::Byte))
            }),
        )
    }
}

/// How many entries of a v form's counts or displacements [`Small`] keeps on the
/// stack.
const SMALL: usize = 16;

/// A v form's counts or displacements converted for the engine (`usize`,
/// `isize`): on the stack up to [`SMALL`] entries, so a call on up to 16 ranks
/// allocates none of its arrays (an MPI_Alltoallv made four `Vec`s a call, ~1,100
/// instructions with their frees; bench/PROFILE.md zero28), on the heap beyond.
pub(crate) enum Small<T> {
    Stack(usize, [T; SMALL]),
    Heap(Vec<T>),
}

impl<T: Copy + Default> Small<T> {
    /// `f(0), ..., f(n - 1)`, or the first error.
    fn collect<E>(n: usize, mut f: impl FnMut(usize) -> Result<T, E>) -> Result<Self, E> {
        if n == 0 {
            // Not significant here (a rooted v form away from its root): nothing
            // to fill, and an empty `Vec` allocates nothing.
            Ok(Small::Heap(Vec::new()))
        } else if n <= SMALL {
            let mut a = [T::default(); SMALL];
            for (i, slot) in a[..n].iter_mut().enumerate() {
                *slot = f(i)?;
            }
            Ok(Small::Stack(n, a))
        } else {
            (0..n)
                .map(f)
                .collect::<Result<Vec<T>, E>>()
                .map(Small::Heap)
        }
    }
}

impl<T> std::ops::Deref for Small<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Small::Stack(n, a) => &a[..*n],
            Small::Heap(v) => v,
        }
    }
}

impl<T> std::ops::DerefMut for Small<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Small::Stack(n, a) => &mut a[..*n],
            Small::Heap(v) => v,
        }
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
) -> R<Small<usize>> {
    // SAFETY: this function's contract is `array`'s.
    let v = unsafe { array(call, arg, p, n)? };
    // The element's name is formatted only for an error message: a format! per
    // element was 70% of a 2-rank MPI_Alltoallv with zero counts (8,900
    // instructions a call; callgrind, bench/PROFILE.md).
    Small::collect(v.len(), |i| match valid_count(v[i]) {
        Some(u) => Ok(u),
        None => to_usize(call, &format!("{arg}[{i}]"), v[i]),
    })
}

/// A count array's entry as the engine takes it, or `None` when it is negative
/// or above `isize::MAX` (the caller then builds the error that names it). The
/// one test [`counts`] and [`v_side`]'s single pass share.
#[inline(always)]
fn valid_count<C: Count>(c: C) -> Option<usize> {
    usize::try_from(c.wide())
        .ok()
        .filter(|&u| u <= isize::MAX as usize)
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
) -> R<Small<isize>> {
    // SAFETY: this function's contract is `array`'s.
    let v = unsafe { array(call, arg, p, n)? };
    Small::collect(v.len(), |i| Ok(v[i].addr()))
}

/// One side of a v form: its counts and displacements converted for the engine
/// (as [`counts`] and [`displs`] convert them), the displacements rebased as
/// [`v_rebase`] rebases them, and its result: the base's element offset `lo` and
/// the elements `cap` the descriptor covers (for [`coll_send_rebased`] and
/// [`coll_recv_rebased`]).
pub(crate) struct VSide {
    pub(crate) counts: Small<usize>,
    pub(crate) displs: Small<isize>,
    pub(crate) lo: isize,
    pub(crate) cap: usize,
}

/// [`counts`], [`displs`] and [`v_rebase`] of one side of a v form, in one pass
/// over the two arrays when they are non-NULL, every count is valid and they fit
/// [`Small`]'s stack: three passes (and two conversions' frames) were ~500
/// instructions of a 2-rank MPI_Alltoallv's ~3,100 outside its waits (callgrind,
/// bench/PROFILE.md coll35). Anything else takes the separate conversions,
/// which report the same errors in the same order.
///
/// # Safety
/// As [`array`], for both arrays.
#[inline(always)]
pub(crate) unsafe fn v_side<C: Count, D: Displ>(
    call: &str,
    counts_arg: &str,
    displs_arg: &str,
    pc: *const C,
    pd: *const D,
    n: usize,
) -> R<VSide> {
    if (1..=SMALL).contains(&n) && !pc.is_null() && !pd.is_null() {
        // SAFETY: both arrays are non-NULL (checked) with `n` entries (this function's contract).
        let (cv, dv) = unsafe {
            (
                array(call, counts_arg, pc, n)?,
                array(call, displs_arg, pd, n)?,
            )
        };
        // `None` at the first invalid count: the separate conversions below
        // then name it (and any earlier error) exactly as they always do.
        let one_pass = || {
            let (mut cs, mut ds) = ([0usize; SMALL], [0isize; SMALL]);
            let (mut lo, mut cap) = (0isize, 0usize);
            for (i, (&c, d)) in cv.iter().zip(dv).enumerate() {
                let (c, d) = (valid_count(c)?, d.addr());
                cs[i] = c;
                ds[i] = d;
                if c > 0 {
                    lo = lo.min(d);
                    cap = cap.max(v_block_end(c, d));
                }
            }
            if lo < 0 {
                (lo, cap) = v_rebase(&cs[..n], &mut ds[..n]);
            }
            Some(VSide {
                counts: Small::Stack(n, cs),
                displs: Small::Stack(n, ds),
                lo,
                cap,
            })
        };
        if let Some(side) = one_pass() {
            return Ok(side);
        }
    }
    // SAFETY: this function's contract.
    let (counts, mut displs) = unsafe {
        (
            counts(call, counts_arg, pc, n)?,
            displs(call, displs_arg, pd, n)?,
        )
    };
    let (lo, cap) = v_rebase(&counts, &mut displs);
    Ok(VSide {
        counts,
        displs,
        lo,
        cap,
    })
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
/// The immediate and persistent forms are made by [`Form::immediate`] and
/// [`Form::persistent`] only, whose contract is the `request` argument's.
#[derive(Clone, Copy)]
pub(crate) enum Form {
    Blocking,
    Immediate(ReqOut),
    Persistent(MPI_Info, ReqOut),
}

/// The C caller's `request` OUT argument of an immediate or persistent collective
/// (private field: made by `Form`'s unsafe constructors only).
#[derive(Clone, Copy)]
pub(crate) struct ReqOut(*mut MPI_Request);

impl Form {
    /// The immediate form (`MPI_I<op>`).
    ///
    /// # Safety
    /// `request` is the C caller's `request` argument: NULL or writable and accessed
    /// through nothing else while the call runs (MPI contract for an OUT argument).
    pub(crate) unsafe fn immediate(request: *mut MPI_Request) -> Form {
        Form::Immediate(ReqOut(request))
    }

    /// The persistent form (`MPI_<Op>_init`).
    ///
    /// # Safety
    /// As [`Form::immediate`].
    pub(crate) unsafe fn persistent(info: MPI_Info, request: *mut MPI_Request) -> Form {
        Form::Persistent(info, ReqOut(request))
    }

    /// The `request` argument, if the form has one, through [`out`] (NULL:
    /// MPI_ERR_ARG naming `call` and `request`): the one place the collectives' OUT
    /// request is checked. Called by [`go`] and [`go_with`] only, once each, after the
    /// call's other checks; the reference lives until they return.
    fn request<'a>(self, call: &str) -> Option<R<&'a mut MPI_Request>> {
        match self {
            Form::Blocking => None,
            Form::Immediate(r) | Form::Persistent(_, r) => {
                // SAFETY: a `ReqOut` is made only by `Form::immediate`/`Form::persistent`, whose contract is that the pointer is the C caller's OUT argument: NULL (rejected by `out`) or writable and unaliased while the call runs; `go`/`go_with` use the reference only within the call.
                let checked = unsafe { out(call, "request", r.0) };
                Some(checked)
            }
        }
    }
}

/// A collective's C entry with the 0-count exit (the `PMPI_x` of abi.txt's lines
/// annotated `coll(BODY) empty(CHECK, ARG...)`): `empty` is the exit's check
/// (`empty::CHECK`: whether the call moves nothing on any rank), `general` the
/// area's body. The blocking form that moves nothing returns at once;
/// the immediate form, with a request to store, gets a complete one: the
/// non-blocking tag taken as the general path's empty schedule takes it, so ranks
/// that went either way stay in step (`coll::started_empty`). The persistent form
/// goes the general way (its plan is made once). `form` is a constant at every
/// call, so each entry keeps only its form's arm.
#[inline(always)]
pub(crate) fn entry(
    form: Form,
    c: MPI_Comm,
    empty: impl FnOnce() -> bool,
    general: impl FnOnce(Form) -> c_int,
) -> c_int {
    match form {
        Form::Blocking => {
            if empty() {
                return MPI_SUCCESS;
            }
        }
        Form::Immediate(r) if !r.0.is_null() => {
            // The check answers a bool (the blocking exit's cost); the communicator,
            // MPI_COMM_WORLD or MPI_COMM_SELF there, is looked up again here.
            if let Some(cm) = empty().then(|| empty::intra(c)).flatten() {
                let h = crate::conv::new_p2p_request(coll::started_empty(cm), c);
                // SAFETY: a `ReqOut` is made only by `Form::immediate`, whose contract is that the pointer is the C caller's OUT argument: writable (not NULL, checked above) and unaliased while the call runs.
                unsafe { *r.0 = h };
                return MPI_SUCCESS;
            }
        }
        Form::Immediate(_) | Form::Persistent(..) => {}
    }
    general(form)
}

/// The C entry of a collective's body: for the blocking form the lean one
/// ([`hot_body`](crate::conv::errors::hot_body): a success skips `ffi`'s frame
/// and its error-routing thread-local, a `__tls_get_addr` call in the shared
/// library; an error or panic is routed to `c` and reported as `ffi` reports
/// it). Where ranks outnumber cores, every rank's entry runs one after another
/// on a core each call (bench/PROFILE.md over36). The other forms through `ffi`.
/// For bodies that do not route errors elsewhere themselves (no `route_to`).
pub(crate) fn blocking_lean(
    call: &'static str,
    c: MPI_Comm,
    form: Form,
    body: impl FnOnce() -> R<()>,
) -> c_int {
    match form {
        Form::Blocking => crate::conv::errors::hot_body(call, c, body),
        Form::Immediate(_) | Form::Persistent(..) => ffi(call, c, body),
    }
}

/// Runs the engine call of `form` over the call's buffers' descriptors `bufs` (made
/// once, handed to whichever form runs): `blocking`, `immediate`, or, for the
/// persistent form, `immediate` once, now, to plan the schedule every MPI_Start of
/// the new persistent request runs again (`coll::persistent::plan`). The immediate
/// or persistent form's `request` argument is checked here ([`Form::request`]),
/// after the call's other checks; before it, the descriptors' addresses
/// ([`CollBufs`](crate::conv::buffer::CollBufs): NULL or the null page holding data
/// is MPI_ERR_BUFFER naming the argument, on intracommunicators).
pub(crate) fn go_with<B: crate::conv::buffer::CollBufs>(
    c: MPI_Comm,
    call: &'static str,
    form: Form,
    bufs: B,
    blocking: impl FnOnce(B) -> CoreResult<()>,
    immediate: impl FnOnce(B) -> CoreResult<Request>,
) -> R<()> {
    if let Err(e) = bufs.check(call) {
        // On an intercommunicator a buffer is described where it may not be
        // significant (the root group's MPI_PROC_NULL ranks): not checked there.
        if !comm(c, call)?.is_inter() {
            return Err(e);
        }
    }
    match (form, form.request(call)) {
        (Form::Blocking, _) | (_, None) => Ok(blocking(bufs)?),
        (Form::Immediate(_), Some(o)) => {
            let o = o?;
            let r = immediate(bufs)?;
            // Nothing is owed at completion (no hook): on MPI_COMM_WORLD and
            // MPI_COMM_SELF the engine's request itself, a direct handle whose
            // MPI_Wait skips this layer's table and arrays (~850 Ir a small
            // MPI_Ibcast + MPI_Wait, bench/PROFILE.md nbc27), else a table entry.
            *o = crate::conv::new_p2p_request(r, c);
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
