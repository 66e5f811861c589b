//! The memory of a collective schedule (`coll::sched`): where the bytes its
//! steps send, receive, copy, pack and reduce live, and the one place they are
//! reached.
//!
//! A schedule's buffers are [`Slice`]s: byte ranges of its own arena of
//! temporaries ([`Base::Temp`], a `Vec` the schedule owns, reached as safe
//! slices) or of caller memory ([`Base::Addr`]), and [`Elems`], a caller's typed
//! elements that pack and unpack steps walk. Caller memory is the in-flight form
//! of the collective's descriptors, held to the rule of [`RawBuf`]'s safe
//! constructors: its constructors ([`Slice::user`], [`Slice::user_mut`],
//! [`Elems::user`]) are crate-private and take addresses only from an entry
//! point's checked descriptors (`SendBuf`/`RecvBuf`, the blocks of their v and w
//! forms), which keep the memory valid, and a receive buffer untouched by
//! others, until the collective completes: a blocking entry point runs its
//! schedule to completion before it returns; a non-blocking one's descriptors
//! are lent for `'static` to the request the schedule is (`lend(scope)`, or the
//! C boundary's, by MPI's rule). A schedule's run ends only once none of its
//! operations is in flight, a failed one too (`Schedule::advance`), so the
//! request completes with nothing left that reaches them.
//!
//! [`Memory`] is made by the schedule while one of its steps runs (the
//! collective active, its memory valid by the rule above), and its methods are
//! the steps' accesses: the in-flight `RawBuf` a send or receive takes, copies,
//! element copies, reductions, packing and unpacking. Every `unsafe` block of a
//! schedule's memory is here.

use super::RawBuf;
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::Op;

/// Where a slice's bytes live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    /// Caller memory (the user's buffers), valid until the collective completes.
    Addr(usize),
    /// A temporary buffer owned by the schedule: its byte offset in the
    /// schedule's arena of temporaries.
    Temp(usize),
}

/// A byte range of a buffer used by a schedule. Only this crate makes one of
/// caller memory (see the module's rule); its base and offset are private.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    base: Base,
    offset: usize,
    pub len: usize,
}

impl Slice {
    /// A sub-range: `len` bytes starting `at` bytes into this slice.
    pub fn sub(self, at: usize, len: usize) -> Slice {
        assert!(
            at + len <= self.len,
            "sub-slice {at}+{len} outside a slice of {}",
            self.len
        );
        Slice {
            base: self.base,
            offset: self.offset + at,
            len,
        }
    }

    /// `len` bytes at byte `at` of the schedule's arena of temporaries.
    pub(crate) fn temp(at: usize, len: usize) -> Slice {
        Slice {
            base: Base::Temp(at),
            offset: 0,
            len,
        }
    }

    /// A caller buffer (read-only use): an address from an entry point's
    /// descriptor (see the module's rule).
    pub(crate) fn user(ptr: *const u8, len: usize) -> Slice {
        Slice {
            base: Base::Addr(ptr as usize),
            offset: 0,
            len,
        }
    }

    /// A caller buffer written by the schedule (see [`user`](Self::user)).
    pub(crate) fn user_mut(ptr: *mut u8, len: usize) -> Slice {
        Slice {
            base: Base::Addr(ptr as usize),
            offset: 0,
            len,
        }
    }

    /// Where the slice's bytes live.
    pub fn base(&self) -> Base {
        self.base
    }
}

/// `count` elements of `dt` at a caller address (a non-contiguous layout a pack
/// or unpack step walks), valid until the collective completes by the module's
/// rule, as a [`Base::Addr`] slice is.
#[derive(Clone, Debug)]
pub struct Elems {
    addr: usize,
    count: usize,
    dt: Datatype,
}

impl Elems {
    /// The caller's elements at `ptr`, an address from an entry point's
    /// descriptor (only stored here; pack and unpack steps read or write them).
    pub(crate) fn user(ptr: *const u8, count: usize, dt: &Datatype) -> Elems {
        Elems {
            addr: ptr as usize,
            count,
            dt: dt.clone(),
        }
    }

    /// The packed bytes of the elements.
    pub fn packed_len(&self) -> usize {
        self.count * self.dt.size()
    }

    /// A layout whose data would start in the null page (NULL passed with a
    /// count; MPI_BOTTOM with absolute addresses is fine): MPI_ERR_BUFFER
    /// instead of a dereference.
    fn check(&self) -> Result<()> {
        if (self.addr as isize).wrapping_add(self.dt.true_lb()) < 4096 {
            return Err(MpiError::new(
                ErrorClass::Buffer,
                "collective: a buffer is NULL but data go through it".to_string(),
            ));
        }
        Ok(())
    }
}

/// A user buffer of `len > 0` bytes in the null page (a NULL buffer passed
/// with a count, perhaps plus an offset): MPI_ERR_BUFFER, never a dereference.
fn non_null(p: *const u8, len: usize) -> Result<()> {
    if len > 0 && (p as usize) < 4096 {
        return Err(MpiError::new(
            ErrorClass::Buffer,
            format!("collective: a buffer is NULL but {len} bytes go through it"),
        ));
    }
    Ok(())
}

/// A schedule's memory while one of its steps runs (see the module's rule).
pub struct Memory<'a> {
    arena: &'a mut [u128],
}

impl<'a> Memory<'a> {
    /// The memory of a schedule whose step runs now, over its arena of
    /// temporaries (made by `coll::sched` only, in `Schedule::advance`).
    pub(crate) fn new(arena: &'a mut [u128]) -> Memory<'a> {
        Memory { arena }
    }

    /// The address of a slice's first byte.
    fn addr(&mut self, s: Slice) -> *mut u8 {
        match s.base {
            Base::Addr(a) => (a + s.offset) as *mut u8,
            Base::Temp(at) => {
                let start = at + s.offset;
                assert!(
                    start + s.len <= self.arena.len() * 16,
                    "slice outside the temporary buffers"
                );
                // In bounds (checked above) of a live allocation.
                self.arena.as_mut_ptr().cast::<u8>().wrapping_add(start)
            }
        }
    }

    /// A slice as the in-flight descriptor a send or receive of the schedule
    /// takes (MPI_ERR_BUFFER for caller memory in the null page).
    pub(crate) fn raw(&mut self, s: Slice) -> Result<RawBuf> {
        let p = self.addr(s);
        non_null(p, s.len)?;
        // SAFETY: caller memory stays valid (and a receive's untouched) until the collective completes, by the module's rule; a temporary is in the schedule's arena (heap memory that stays put), which the schedule holds while its requests are in flight (its run ends only once none is).
        Ok(unsafe { RawBuf::from_ptr(p, s.len) })
    }

    /// Packs the caller's elements `src` into `dst` (their packed length).
    pub(crate) fn pack(&mut self, src: &Elems, dst: Slice) -> Result<()> {
        src.check()?;
        let out = self.raw(dst)?;
        // SAFETY: the caller's elements stay readable until the collective completes by the module's rule (as a `Base::Addr` slice does); `out` is a temporary of the schedule's arena or caller memory it writes, disjoint from the elements read (a schedule never packs a buffer into itself), and no operation of the schedule touches it while a step runs.
        let (src, out) = unsafe {
            (
                super::SendBuf::from_raw(src.addr as *const u8, src.count, Some(&src.dt)),
                out.as_mut_slice(),
            )
        };
        super::pack(src, out, &mut 0)
    }

    /// Unpacks `src` (the packed length of `dst`) into the caller's elements `dst`.
    pub(crate) fn unpack(&mut self, src: Slice, dst: &Elems) -> Result<()> {
        dst.check()?;
        let packed = self.raw(src)?;
        // SAFETY: the caller's elements stay writable and untouched by others until the collective completes by the module's rule (as a `Base::Addr` slice does); `packed` is the schedule's temporary or caller memory it reads, disjoint from the elements written, and no operation of the schedule writes it while a step runs.
        let (packed, dst) = unsafe {
            (
                packed.as_slice(),
                super::RecvBuf::from_raw(dst.addr as *mut u8, dst.count, Some(&dst.dt)),
            )
        };
        super::unpack(packed, &mut 0, dst)
    }

    /// `dst = src` (same length; they may overlap).
    pub(crate) fn copy(&mut self, src: Slice, dst: Slice) -> Result<()> {
        let (s, d) = (self.addr(src), self.addr(dst));
        non_null(s, src.len)?;
        non_null(d, dst.len)?;
        // SAFETY: both slices are valid for their length (caller memory by the module's rule, temporaries by the bounds check in `addr`); `copy` allows overlap.
        unsafe { std::ptr::copy(s, d, src.len) };
        Ok(())
    }

    /// The bytes of `count` elements of `dt` (only those, not the gaps between
    /// blocks) from the span `src` to the span `dst` (distinct buffers, both
    /// starting at the type's `true_lb`).
    pub(crate) fn copy_elems(
        &mut self,
        src: Slice,
        dst: Slice,
        count: usize,
        dt: &Datatype,
    ) -> Result<()> {
        non_null(self.addr(src), src.len.max(1))?;
        non_null(self.addr(dst), dst.len.max(1))?;
        let (s, d) = (self.raw(src)?, self.raw(dst)?);
        // SAFETY: both spans are valid for their length (caller memory by the module's rule, temporaries by the bounds check in `addr`) and distinct buffers (`Builder::copy_elems`'s contract); no operation of the schedule touches them while a step runs.
        let (s, d) = unsafe { (s.as_slice(), d.as_mut_slice()) };
        let (ext, lb) = (dt.extent(), dt.true_lb());
        for i in 0..count {
            dt.for_each_block(i as isize * ext - lb, |at, n| {
                let at = at as usize;
                d[at..at + n].copy_from_slice(&s[at..at + n]);
            });
        }
        Ok(())
    }

    /// `dst = src op dst` over `count` elements of `dt`, both spans starting at
    /// the type's `true_lb`.
    pub(crate) fn reduce(
        &mut self,
        src: Slice,
        dst: Slice,
        count: usize,
        dt: &Datatype,
        op: &Op,
    ) -> Result<()> {
        non_null(self.addr(src), src.len)?;
        non_null(self.addr(dst), dst.len)?;
        let lb = dt.true_lb();
        let s = self.addr(src).wrapping_offset(-lb) as *const u8;
        let d = self.addr(dst).wrapping_offset(-lb);
        // SAFETY: both spans cover `count` elements of `dt` shifted back by `true_lb` (caller memory by the module's rule, temporaries sized by `span_len`); `apply` touches only their bytes.
        unsafe { op.apply(s, d, count, dt) }
    }
}

/// Bytes of `dst` a three-operand fold ([`Memory::reduce_into`]) fills and
/// folds at a time: the copy's bytes are still in the first-level cache when
/// the fold reads them back, so the fold costs what `dst = lower op higher`
/// straight from both operands would (three streams, no second pass over `dst`).
const FOLD_CHUNK_BYTES: usize = 8 * 1024;

impl Memory<'_> {
    /// `dst = lower op higher` over `count` elements of `dt`, all three spans
    /// starting at the type's `true_lb`; `dst` is a buffer apart from `lower`
    /// (it may be `higher` itself). Contiguous types go chunk by chunk (copy
    /// `higher`'s chunk, fold `lower`'s into it), others copy the span whole first.
    pub(crate) fn reduce_into(
        &mut self,
        lower: Slice,
        higher: Slice,
        dst: Slice,
        count: usize,
        dt: &Datatype,
        op: &Op,
    ) -> Result<()> {
        if higher == dst {
            return self.reduce(lower, dst, count, dt, op);
        }
        if !dt.is_contiguous() || dt.extent() <= 0 {
            self.copy(higher, dst)?;
            return self.reduce(lower, dst, count, dt, op);
        }
        assert!(
            higher.len == dst.len && lower.len == dst.len,
            "three-operand fold over spans of different lengths"
        );
        let (l, h, d) = (self.addr(lower), self.addr(higher), self.addr(dst));
        non_null(l, lower.len)?;
        non_null(h, higher.len)?;
        non_null(d, dst.len)?;
        let reducer = op.reducer(dt, "MPI_Reduce_local")?;
        let (extent, lb) = (dt.extent() as usize, dt.true_lb());
        let per_chunk = (FOLD_CHUNK_BYTES / extent).max(1);
        let mut done = 0;
        while done < count {
            let n = per_chunk.min(count - done);
            let (at, bytes) = (done * extent, (n * extent).min(dst.len - done * extent));
            // SAFETY: `at + bytes` lies within each span (same lengths, checked above; caller memory by the module's rule, temporaries by `addr`'s bounds check); `higher` and `dst` are distinct buffers (equal ones returned above), `copy` allows overlap all the same.
            unsafe { std::ptr::copy(h.wrapping_add(at), d.wrapping_add(at), bytes) };
            let (src, out) = (
                l.wrapping_add(at).wrapping_offset(-lb),
                d.wrapping_add(at).wrapping_offset(-lb),
            );
            // SAFETY: both cover `n` contiguous elements of `dt` shifted back by `true_lb`, within their spans as above; `lower` and `dst` are apart (the caller's contract, `Builder::reduce_into`).
            unsafe { reducer.apply(src, out, n)? };
            done += n;
        }
        Ok(())
    }
}

/// The caller buffers of a reduction that a non-blocking shared-memory
/// collective (`coll/shm/nb.rs`) reads and writes while its request is pending:
/// an entry point's checked descriptors lent for `'static` to that request
/// (`lend(scope)`, or the C boundary's, by MPI's rule), of one layout (the
/// entry point checked `coll::api::same_layout`), so held to this module's
/// rule like a schedule's [`Base::Addr`] slices: valid, and the receive buffer
/// untouched by others, until the request completes. The collective reaches
/// them only through [`with`](Self::with) while it is pending (its operation
/// finishes before the request completes).
pub(crate) struct RedBufs {
    send: Option<usize>,
    recv: usize,
    count: usize,
    dt: Datatype,
}

impl std::fmt::Debug for RedBufs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RedBufs({} elements)", self.count)
    }
}

impl RedBufs {
    /// From descriptors lent for `'static` (see the type's rule); `send: None`
    /// is MPI_IN_PLACE. MPI_ERR_BUFFER for a buffer in the null page that
    /// data go through.
    pub(crate) fn lent(
        send: Option<&super::SendBuf<'static, '_>>,
        recv: &super::RecvBuf<'static, '_>,
    ) -> Result<RedBufs> {
        let dt = recv
            .datatype()
            .unwrap_or_else(|| Datatype::predefined_ref(crate::datatype::Primitive::Byte))
            .clone();
        let bufs = RedBufs {
            send: send.map(|s| s.ptr() as usize),
            recv: recv.ptr() as usize,
            count: recv.count(),
            dt,
        };
        if bufs.count > 0 {
            for addr in bufs.send.iter().chain([&bufs.recv]) {
                Elems {
                    addr: *addr,
                    count: bufs.count,
                    dt: bufs.dt.clone(),
                }
                .check()?;
            }
        }
        Ok(bufs)
    }

    pub(crate) fn count(&self) -> usize {
        self.count
    }

    pub(crate) fn datatype(&self) -> &Datatype {
        &self.dt
    }

    /// Runs `f` over the output elements and the input (`None`: in place, the
    /// output's own), both views of the one datatype.
    pub(crate) fn with<R>(
        &mut self,
        f: impl FnOnce(&mut super::elems::ElemsMut<'_>, Option<&super::elems::Elems<'_>>) -> R,
    ) -> R {
        // SAFETY: the type's rule: lent for 'static to the pending request, so the `count` elements (and their span) at `recv` are writable and ours alone, those at `send` readable and unwritten, until it completes, which is after the collective's last use here; `&mut self` makes this the only view of them.
        let mut out =
            unsafe { super::elems::ElemsMut::from_raw(self.recv as *mut u8, self.count, &self.dt) };
        let inp = self.send.map(|p| {
            // SAFETY: as above, for reading (the input shares the output's layout, checked by the entry point).
            unsafe { super::elems::Elems::from_raw(p as *const u8, self.count, &self.dt) }
        });
        f(&mut out, inp.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Primitive;

    fn words(arena: &[u128], s: Slice, n: usize) -> Vec<u64> {
        let Base::Temp(at) = s.base else {
            unreachable!("temporaries only")
        };
        let bytes: Vec<u8> = arena.iter().flat_map(|w| w.to_le_bytes()).collect();
        (0..n)
            .map(|i| {
                let o = at + s.offset + 8 * i;
                u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap())
            })
            .collect()
    }

    fn fill(arena: &mut [u128], s: Slice, vals: impl Fn(usize) -> u64, n: usize) {
        let Base::Temp(at) = s.base else {
            unreachable!("temporaries only")
        };
        let mut bytes: Vec<u8> = arena.iter().flat_map(|w| w.to_le_bytes()).collect();
        for i in 0..n {
            let o = at + s.offset + 8 * i;
            bytes[o..o + 8].copy_from_slice(&vals(i).to_le_bytes());
        }
        for (w, c) in arena.iter_mut().zip(bytes.chunks_exact(16)) {
            *w = u128::from_le_bytes(c.try_into().unwrap());
        }
    }

    /// A three-operand fold over several chunks (and a part of one) computes
    /// `lower op higher` in that order, for an op that does not commute, and
    /// leaves both operands as they were.
    #[test]
    fn three_operand_fold_keeps_the_operands_order_across_chunks() {
        // io = 3 * in + io: which operand is `in` shows in every element.
        let op = Op::user_packed(
            |inp, io, n, _| {
                for i in 0..n {
                    let a = u64::from_le_bytes(inp[8 * i..8 * i + 8].try_into().unwrap());
                    let b = u64::from_le_bytes(io[8 * i..8 * i + 8].try_into().unwrap());
                    io[8 * i..8 * i + 8].copy_from_slice(&(3 * a + b).to_le_bytes());
                }
            },
            false,
        );
        let dt = Datatype::predefined_ref(Primitive::Uint64);
        let n = 2 * FOLD_CHUNK_BYTES / 8 + 37;
        let len = 8 * n;
        let mut arena = vec![0u128; (3 * len).div_ceil(16)];
        let (lower, higher, dst) = (
            Slice::temp(0, len),
            Slice::temp(len, len),
            Slice::temp(2 * len, len),
        );
        fill(&mut arena, lower, |i| i as u64, n);
        fill(&mut arena, higher, |i| 1000 + i as u64, n);
        Memory::new(&mut arena)
            .reduce_into(lower, higher, dst, n, dt, &op)
            .unwrap();
        let want: Vec<u64> = (0..n).map(|i| 3 * i as u64 + 1000 + i as u64).collect();
        assert_eq!(words(&arena, dst, n), want);
        assert_eq!(words(&arena, lower, n), (0..n as u64).collect::<Vec<_>>());
        // Into `higher` itself: the plain fold.
        Memory::new(&mut arena)
            .reduce_into(lower, higher, higher, n, dt, &op)
            .unwrap();
        assert_eq!(words(&arena, higher, n), want);
    }
}
