//! The raw copies of packing and unpacking: the bytes of `count` elements of a
//! datatype between the caller's memory layout and the packed stream, in the
//! pieces [`Datatype::walk`] (datatype/pack.rs) computes. The methods stay on
//! [`Datatype`] (`pack`, `unpack`, `pack_range`, `unpack_range`); what reaches the
//! engine's users safely is [`super::pack`]/[`super::unpack`] and [`super::Region`]'s
//! methods over descriptors.

use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};

/// Copies `out.len()` bytes from `src + off` (wrapping pointer arithmetic, so
/// absolute addressing from a null base as with `MPI_BOTTOM` works).
///
/// # Safety
/// `src + off .. + out.len()` must be readable and not overlap `out`.
unsafe fn read_at(src: *const u8, off: isize, out: &mut [u8]) {
    let p = src.wrapping_offset(off);
    // SAFETY: the caller guarantees the source range is readable and does not alias `out`, which is a valid exclusive slice.
    unsafe { std::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), out.len()) }
}

/// Copies `data` to `dst + off`.
///
/// # Safety
/// `dst + off .. + data.len()` must be writable and not overlap `data`.
unsafe fn write_at(dst: *mut u8, off: isize, data: &[u8]) {
    let p = dst.wrapping_offset(off);
    // SAFETY: the caller guarantees the destination range is writable and does not alias `data`.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) }
}

impl Datatype {
    /// Packs `count` elements laid out at `src` into `out[..count*size]`.
    /// Panics if `out` is shorter than that.
    ///
    /// # Safety
    /// Every byte the type map of `count` elements touches relative to `src`
    /// is readable (and does not overlap `out`).
    pub unsafe fn pack(&self, src: *const u8, count: usize, out: &mut [u8]) {
        let total = self.stream_len(count);
        assert!(
            out.len() >= total,
            "pack: output of {} bytes, {} needed",
            out.len(),
            total
        );
        // SAFETY: forwarded caller contract.
        unsafe { self.pack_range(src, count, 0, &mut out[..total]) };
    }

    /// Unpacks the prefix `packed[..min(len, count*size)]` of the packed
    /// stream of `count` elements into the memory layout at `dst`.
    ///
    /// # Safety
    /// Every byte the type map of `count` elements touches relative to `dst`
    /// is writable and not aliased (by `packed` either).
    pub unsafe fn unpack(&self, packed: &[u8], dst: *mut u8, count: usize) {
        // SAFETY: forwarded caller contract.
        unsafe { self.unpack_range(packed, dst, count, 0) }
    }

    /// Packs bytes `[from, from + out.len())` of the packed stream of `count`
    /// elements at `src`; returns the bytes written (short at the end of the stream).
    ///
    /// # Safety
    /// As [`pack`](Datatype::pack).
    pub unsafe fn pack_range(
        &self,
        src: *const u8,
        count: usize,
        from: usize,
        out: &mut [u8],
    ) -> usize {
        let total = self.stream_len(count);
        let n = out.len().min(total.saturating_sub(from));
        self.walk(from, n, |mem, at, len| {
            // SAFETY: `mem` is inside the type map of one of the `count` elements, which the caller guarantees readable.
            unsafe { read_at(src, mem, &mut out[at..at + len]) }
        });
        n
    }

    /// Unpacks `packed` as the bytes `[from, from + packed.len())` of the
    /// packed stream of `count` elements (clipped at the end of the stream).
    ///
    /// # Safety
    /// As [`unpack`](Datatype::unpack).
    pub unsafe fn unpack_range(&self, packed: &[u8], dst: *mut u8, count: usize, from: usize) {
        let total = self.stream_len(count);
        let n = packed.len().min(total.saturating_sub(from));
        self.walk(from, n, |mem, at, len| {
            // SAFETY: `mem` is inside the type map of one of the `count` elements, which the caller guarantees writable and unaliased.
            unsafe { write_at(dst, mem, &packed[at..at + len]) }
        });
    }
}

/// `MPI_Pack`: packs `count` elements at `src` into `outbuf[*position..]` and
/// advances `position`. When they don't fit, nothing is written and the
/// error is `MPI_ERR_ARG` (as MPICH reports it).
///
/// # Safety
/// As [`Datatype::pack`].
pub(crate) unsafe fn pack_into(
    dt: &Datatype,
    src: *const u8,
    count: usize,
    outbuf: &mut [u8],
    position: &mut usize,
) -> Result<()> {
    let need = dt.size().checked_mul(count);
    let pos = *position;
    let room = outbuf.len().checked_sub(pos);
    match (need, room) {
        (Some(need), Some(room)) if need <= room => {
            // SAFETY: forwarded caller contract; the output slice holds `need` bytes.
            unsafe { dt.pack(src, count, &mut outbuf[pos..pos + need]) };
            *position = pos + need;
            Ok(())
        }
        _ => Err(MpiError::arg(
            ErrorClass::Arg,
            "MPI_Pack",
            "outsize",
            format!(
                "{count} elements of {} bytes do not fit in {} bytes at position {pos}",
                dt.size(),
                outbuf.len()
            ),
        )),
    }
}

/// `MPI_Unpack`: unpacks `count` elements from `inbuf[*position..]` to `dst`
/// and advances `position`. When `inbuf` holds fewer bytes, nothing is written
/// and the error is `MPI_ERR_ARG`.
///
/// # Safety
/// As [`Datatype::unpack`].
pub(crate) unsafe fn unpack_from(
    dt: &Datatype,
    inbuf: &[u8],
    position: &mut usize,
    dst: *mut u8,
    count: usize,
) -> Result<()> {
    let need = dt.size().checked_mul(count);
    let pos = *position;
    let avail = inbuf.len().checked_sub(pos);
    match (need, avail) {
        (Some(need), Some(avail)) if need <= avail => {
            // SAFETY: forwarded caller contract.
            unsafe { dt.unpack(&inbuf[pos..pos + need], dst, count) };
            *position = pos + need;
            Ok(())
        }
        _ => Err(MpiError::arg(
            ErrorClass::Arg,
            "MPI_Unpack",
            "insize",
            format!(
                "{count} elements of {} bytes are not available in {} bytes at position {pos}",
                dt.size(),
                inbuf.len()
            ),
        )),
    }
}
