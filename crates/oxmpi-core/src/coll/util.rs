//! Helpers shared by the collective algorithms: where the bytes of typed user
//! buffers are (packed input/output), memory spans for reductions, a reduction
//! step, and argument checks.
//!
//! Collectives move *packed* bytes: senders and receivers have matching type
//! signatures (possibly different type maps), so the packed streams are identical;
//! every rank packs with its own datatype before sending and unpacks with its own
//! datatype after receiving. For contiguous datatypes the "packed" bytes are the
//! user memory itself and no copy is made.

use super::sched::{Builder, Elems, Slice};
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::Op;

/// Bytes of `count` packed elements of `dt`.
pub fn packed_len(count: usize, dt: &Datatype) -> usize {
    count * dt.size()
}

/// The address of element `index` (in units of the type's extent) of a buffer,
/// as MPI displacements are counted. Pure address arithmetic; nothing is read.
pub fn elem_ptr(buf: *const u8, index: isize, dt: &Datatype) -> *const u8 {
    buf.wrapping_offset(index * dt.extent())
}

/// Mutable variant of [`elem_ptr`].
pub fn elem_ptr_mut(buf: *mut u8, index: isize, dt: &Datatype) -> *mut u8 {
    buf.wrapping_offset(index * dt.extent())
}

/// Where the bytes of `count` elements of `dt` at `buf` are for the algorithms:
/// the user memory itself for contiguous types (a slice from `buf + true_lb` of
/// `count * size` bytes), or a packed temporary filled by a local pack step added
/// to `b` now for non-contiguous types.
pub fn packed_input(b: &mut Builder, buf: *const u8, count: usize, dt: &Datatype) -> Slice {
    let len = packed_len(count, dt);
    if len == 0 {
        return Slice::user(buf, 0);
    }
    if dt.is_contiguous() {
        return Slice::user(buf.wrapping_offset(dt.true_lb()), len);
    }
    let tmp = b.temp(len);
    b.pack(Elems::user(buf, count, dt), tmp);
    tmp
}

/// A slice receiving `count` packed elements of `dt` destined for `buf`: the user
/// memory itself for contiguous types, otherwise a temporary; for non-contiguous
/// types call [`finish_output`] at the end of the schedule to add the unpack step.
pub fn packed_output(b: &mut Builder, buf: *mut u8, count: usize, dt: &Datatype) -> Slice {
    let len = packed_len(count, dt);
    if len == 0 {
        return Slice::user_mut(buf, 0);
    }
    if dt.is_contiguous() {
        return Slice::user_mut(buf.wrapping_offset(dt.true_lb()), len);
    }
    b.temp(len)
}

/// Adds the fence and the unpack step moving `out` (from [`packed_output`]) into
/// `buf`; nothing for contiguous types or empty buffers.
pub fn finish_output(b: &mut Builder, out: Slice, buf: *mut u8, count: usize, dt: &Datatype) {
    if out.len == 0 || dt.is_contiguous() {
        return;
    }
    b.fence();
    b.unpack(out, Elems::user(buf, count, dt));
}

/// Packs `count` elements of `dt` at `buf` into `dst` (a packed slice of
/// `count * size` bytes) with a local step added now, or a plain copy for
/// contiguous types. Used for in-place cases and local self-contributions.
pub fn pack_into(b: &mut Builder, buf: *const u8, count: usize, dt: &Datatype, dst: Slice) {
    let len = packed_len(count, dt);
    assert_eq!(len, dst.len, "pack_into: destination of the wrong length");
    if len == 0 {
        return;
    }
    if dt.is_contiguous() {
        b.copy(Slice::user(buf.wrapping_offset(dt.true_lb()), len), dst);
        return;
    }
    b.pack(Elems::user(buf, count, dt), dst);
}

/// Unpacks the packed slice `src` (`count * size` bytes) into `count` elements of
/// `dt` at `buf` with a local step added now (a copy for contiguous types). The
/// caller fences first if `src` was just received.
pub fn unpack_from(b: &mut Builder, src: Slice, buf: *mut u8, count: usize, dt: &Datatype) {
    let len = packed_len(count, dt);
    assert_eq!(len, src.len, "unpack_from: source of the wrong length");
    if len == 0 {
        return;
    }
    if dt.is_contiguous() {
        b.copy(src, Slice::user_mut(buf.wrapping_offset(dt.true_lb()), len));
        return;
    }
    b.unpack(src, Elems::user(buf, count, dt));
}

/// Memory span of `count` elements of `dt` (for reductions, which work on the
/// memory layout): `(count - 1) * extent + true_extent` bytes, 0 if `count == 0`.
pub fn span_len(count: usize, dt: &Datatype) -> usize {
    if count == 0 {
        return 0;
    }
    ((count as isize - 1) * dt.extent() + dt.true_extent()).max(0) as usize
}

/// The memory span of `count` elements of `dt` at `buf`: starts at `buf + true_lb`.
pub fn span(buf: *const u8, count: usize, dt: &Datatype) -> Slice {
    Slice::user(buf.wrapping_offset(dt.true_lb()), span_len(count, dt))
}

/// Writable variant of [`span`].
pub fn span_mut(buf: *mut u8, count: usize, dt: &Datatype) -> Slice {
    Slice::user_mut(buf.wrapping_offset(dt.true_lb()), span_len(count, dt))
}

/// A temporary holding the memory span of `count` elements of `dt` (its slice
/// starts where `true_lb` would be, as [`span`] does).
pub fn temp_span(b: &mut Builder, count: usize, dt: &Datatype) -> Slice {
    b.temp(span_len(count, dt))
}

/// A local step computing `dst = src op dst` over `count` elements whose spans
/// (as from [`span`] / [`temp_span`]) are given; shifts by `true_lb` for `op.apply`.
/// Put a fence before it if either operand was just received.
pub fn reduce_step(b: &mut Builder, src: Slice, dst: Slice, count: usize, dt: &Datatype, op: &Op) {
    b.reduce(src, dst, count, dt, op);
}

/// Rejects an uncommitted datatype, naming the call and argument. Inlined (every
/// collective checks its types on each call; the error is made out of line).
#[inline]
pub fn check_type(call: &str, arg: &str, dt: &Datatype) -> Result<()> {
    if !dt.is_committed() {
        return Err(uncommitted(call, arg));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn uncommitted(call: &str, arg: &str) -> MpiError {
    MpiError::arg(ErrorClass::Type, call, arg, "datatype is not committed")
}

/// Rejects a count that cannot be addressed (more packed bytes than `isize::MAX`).
/// Inlined as [`check_type`].
#[inline]
pub fn check_count(call: &str, arg: &str, count: usize, dt: &Datatype) -> Result<()> {
    match count.checked_mul(dt.size()) {
        Some(n) if n <= isize::MAX as usize => Ok(()),
        _ => Err(count_overflow(call, arg, count, dt)),
    }
}

#[cold]
#[inline(never)]
fn count_overflow(call: &str, arg: &str, count: usize, dt: &Datatype) -> MpiError {
    MpiError::arg(
        ErrorClass::Count,
        call,
        arg,
        format!(
            "{count} elements of {} bytes overflow the address space",
            dt.size()
        ),
    )
}
