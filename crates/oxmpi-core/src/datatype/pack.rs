//! Packing and unpacking: moving the data of `count` elements between their
//! memory layout and the packed stream (element after element, each
//! element's blocks in type-map order).
//!
//! Offsets are computed by the safe walker [`Datatype::walk`]; the raw copies
//! live in two small unsafe helpers.

use super::Datatype;
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
    /// Bytes in the packed stream of `count` elements (panics on overflow,
    /// which no buffer could hold anyway).
    fn stream_len(&self, count: usize) -> usize {
        self.size()
            .checked_mul(count)
            .expect("count * size of the datatype overflows usize")
    }

    /// Calls `f(memory offset, stream offset, len)` for the pieces of the
    /// packed stream bytes `[from, from + n)` of `count` elements, in order.
    /// The caller guarantees `from + n <= count * size`.
    fn walk(&self, from: usize, n: usize, mut f: impl FnMut(isize, usize, usize)) {
        let l = self.layout();
        if n == 0 {
            return;
        }
        if self.is_contiguous() {
            f(l.true_lb.wrapping_add(from as isize), 0, n);
            return;
        }
        let ext = l.ub.wrapping_sub(l.lb);
        let mut elem = from / l.size;
        let r = from % l.size;
        let super::Blocks::Flat { list, prefix } = &*l.blocks else {
            // A tree: element by element.
            let (mut within, mut done) = (r, 0);
            while done < n {
                let take = (l.size - within).min(n - done);
                let base = (elem as isize).wrapping_mul(ext);
                let mut at = done;
                l.blocks.walk(base, within, take, &mut at, &mut f);
                done += take;
                within = 0;
                elem += 1;
            }
            return;
        };
        // The block containing stream offset r of an element.
        let mut bi = prefix.partition_point(|&p| p <= r) - 1;
        let mut within = r - prefix[bi];
        let mut done = 0;
        while done < n {
            let (off, len) = list[bi];
            let take = (len - within).min(n - done);
            let base = (elem as isize).wrapping_mul(ext);
            f(
                base.wrapping_add(off).wrapping_add(within as isize),
                done,
                take,
            );
            done += take;
            within += take;
            if within == len {
                within = 0;
                bi += 1;
                if bi == list.len() {
                    bi = 0;
                    elem += 1;
                }
            }
        }
    }

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
pub unsafe fn pack_into(
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
pub unsafe fn unpack_from(
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

/// `MPI_Pack_size`: an upper bound (here exact) on the bytes `MPI_Pack` needs
/// (saturating at `usize::MAX`).
pub fn pack_size(dt: &Datatype, count: usize) -> usize {
    dt.size().saturating_mul(count)
}
