//! Element views of user memory for code that copies between user buffers and its own
//! staging memory chunk by chunk (the shared-memory collectives, `coll/shm/`).
//!
//! An [`Elems`] is `count` elements of a datatype at an address, readable for `'a`;
//! an [`ElemsMut`] the same, writable and ours alone for `'a`. Their `from_raw`
//! constructors are the one `unsafe` door, used by the descriptors
//! (`SendBuf::elems`/`RecvBuf::elems_mut`, under the descriptors' constructor
//! contract), so the collectives make their views safely from the `SendBuf`/`RecvBuf`
//! they are given; every method after it is safe, because each checks that what it
//! touches lies inside the elements (or, for the `span` methods, inside their memory
//! span) the constructor covers.
//!
//! A v-collective's blocks are a [`VLayout`] (per-rank counts and displacements,
//! checked once against the descriptor's count: MPI_ERR_ARG / MPI_ERR_BUFFER naming
//! the call and argument) over such a view: [`VBlocks`]/[`VBlocksMut`] cut block `j`
//! out with the bounds-checked `block`/`block_mut`, so they hold no `unsafe`.
//!
//! # Invariants
//! * `ptr` is element 0's address (its data starts at `ptr + dt.true_lb()`); the
//!   constructor's contract covers elements `0..count`, and every view derived from
//!   one (`block`, `block_mut`, `as_elems`) covers a subset of them.
//! * The *span* of elements `e0..e0 + c` is `[ptr + e0 * extent + true_lb, +
//!   span_len(c))`: the bytes from the first element's first datum to the last
//!   element's last (gaps between blocks included). The reductions stage whole
//!   spans (the op kernels work on the memory layout), so the constructors' contract
//!   covers the gaps too, as MPI's "the buffer holds `count` elements" does in
//!   practice; spans of more than one element need a positive extent (checked).
//! * An [`ElemsMut`] hands out at most one exclusive borrow at a time (`&mut self`),
//!   so in-place calls read their input through [`ElemsMut::as_elems`] between writes.

use std::marker::PhantomData;

use super::SendBuf;
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};

/// What the views need of a datatype, read once at construction (the per-chunk
/// calls then touch no datatype internals).
#[derive(Clone, Copy)]
struct Shape {
    ext: isize,
    lb: isize,
    true_ext: isize,
    size: usize,
    /// `dt.is_contiguous()`: the packed stream of `count` elements is their span.
    contig: bool,
}

impl Shape {
    #[inline]
    fn of(dt: &Datatype) -> Shape {
        Shape {
            ext: dt.extent(),
            lb: dt.true_lb(),
            true_ext: dt.true_extent(),
            size: dt.size(),
            contig: dt.is_contiguous(),
        }
    }

    /// Bytes from the first datum of element 0 to the last datum of element `c - 1`.
    #[inline]
    fn span_len(&self, c: usize) -> usize {
        if c == 0 {
            return 0;
        }
        ((c as isize - 1) * self.ext + self.true_ext).max(0) as usize
    }

    /// Offset from element 0's address and length of the span of elements
    /// `e0..e0 + c`, checked to lie within elements `0..count`.
    #[inline]
    fn span(&self, count: usize, e0: usize, c: usize) -> (isize, usize) {
        if e0 > count || c > count - e0 || (c > 1 && self.ext <= 0) {
            span_out_of_range(count, e0, c);
        }
        (e0 as isize * self.ext + self.lb, self.span_len(c))
    }
}

#[cold]
#[inline(never)]
fn span_out_of_range(count: usize, e0: usize, c: usize) -> ! {
    panic!(
        "elements {e0}..{} of {count} (a span of several elements needs a positive extent)",
        e0 + c
    )
}

/// `count` elements of a datatype in user memory, readable for `'a`.
#[derive(Clone, Copy)]
pub(crate) struct Elems<'a> {
    ptr: *const u8,
    count: usize,
    dt: &'a Datatype,
    shape: Shape,
    _mem: PhantomData<&'a [u8]>,
}

impl<'a> Elems<'a> {
    /// # Safety
    /// `count` elements of `dt` at `ptr`, and their whole memory span (see the module
    /// docs), are readable and not written by anyone for `'a`.
    #[inline]
    pub(crate) unsafe fn from_raw(ptr: *const u8, count: usize, dt: &'a Datatype) -> Elems<'a> {
        Elems {
            ptr,
            count,
            dt,
            shape: Shape::of(dt),
            _mem: PhantomData,
        }
    }

    /// Element 0's address (for code that hands the buffer on by address, under the
    /// same contract).
    pub(crate) fn ptr(&self) -> *const u8 {
        self.ptr
    }

    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Elements `first..first + count` of these.
    #[inline]
    pub(crate) fn block(&self, first: usize, count: usize) -> Elems<'a> {
        assert!(first <= self.count && count <= self.count - first);
        Elems {
            ptr: self.ptr.wrapping_offset(first as isize * self.shape.ext),
            count,
            dt: self.dt,
            shape: self.shape,
            _mem: PhantomData,
        }
    }

    /// The memory span of elements `e0..e0 + c`.
    #[inline]
    pub(crate) fn span(&self, e0: usize, c: usize) -> &'a [u8] {
        let (at, len) = self.shape.span(self.count, e0, c);
        if len == 0 {
            return &[];
        }
        // SAFETY: the span of elements e0..e0 + c of the `count` covered is readable and unwritten for 'a (constructor contract; `Shape::span` checked the range).
        unsafe { std::slice::from_raw_parts(self.ptr.wrapping_offset(at), len) }
    }

    /// Packs bytes `from..from + out.len()` of the elements' packed stream into `out`.
    #[inline]
    pub(crate) fn pack(&self, from: usize, out: &mut [u8]) {
        let total = self.count * self.shape.size;
        assert!(from <= total && out.len() <= total - from);
        if out.is_empty() {
            return;
        }
        if self.shape.contig {
            // A contiguous type's packed stream is its span: `total` bytes from the first datum.
            let src = self.ptr.wrapping_offset(self.shape.lb).wrapping_add(from);
            // SAFETY: bytes `from..from + out.len()` (checked within `total`) of the span of the `count` elements are readable and unwritten for 'a (constructor contract); `out` is a distinct exclusive slice.
            unsafe { std::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), out.len()) };
        } else {
            // SAFETY: the `count` elements at `ptr` are readable (constructor contract); `out` is a distinct exclusive slice (our memory is not written for 'a, so no `&mut` to it exists).
            unsafe { self.dt.pack_range(self.ptr, self.count, from, out) };
        }
    }
}

/// `count` elements of a datatype in user memory, writable and accessed by nobody
/// else for `'a`.
pub(crate) struct ElemsMut<'a> {
    ptr: *mut u8,
    count: usize,
    dt: &'a Datatype,
    shape: Shape,
    _mem: PhantomData<&'a mut [u8]>,
}

impl<'a> ElemsMut<'a> {
    /// # Safety
    /// `count` elements of `dt` at `ptr`, and their whole memory span (see the module
    /// docs), are readable, writable, and accessed by nobody else for `'a`.
    #[inline]
    pub(crate) unsafe fn from_raw(ptr: *mut u8, count: usize, dt: &'a Datatype) -> ElemsMut<'a> {
        ElemsMut {
            ptr,
            count,
            dt,
            shape: Shape::of(dt),
            _mem: PhantomData,
        }
    }

    /// Element 0's address (for code that hands the buffer on by address, under the
    /// same contract).
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Whether the datatype is contiguous (read once, at construction).
    #[inline]
    pub(crate) fn contiguous(&self) -> bool {
        self.shape.contig
    }

    /// The elements of `send` as this view reads them (a reduction's input
    /// beside its output; shares the datatype's shape this view read at
    /// construction). Panics unless `send` holds as many elements of a datatype
    /// of the same layout (size, extent, true bounds: the same memory span; the
    /// entry points check it first, `coll::api::same_layout`).
    #[inline]
    pub(crate) fn sibling<'s>(&self, send: &'s SendBuf<'_, '_>) -> Elems<'s>
    where
        'a: 's,
    {
        // What the views read of the input is the span of `count` elements (the
        // data blocks of the output's type lie inside it): the same count, extent
        // and true bounds give the input's own span, which its contract covers.
        let same = send.count() == self.count
            && match send.datatype() {
                Some(d) => {
                    std::ptr::eq(d, self.dt)
                        || (d.extent() == self.shape.ext
                            && d.true_lb() == self.shape.lb
                            && d.true_extent() == self.shape.true_ext)
                }
                None => self.shape.ext == 1 && self.shape.lb == 0 && self.shape.true_ext == 1,
            };
        assert!(
            same,
            "sibling: the input's layout differs from the output's"
        );
        Elems {
            ptr: send.ptr(),
            count: self.count,
            dt: self.dt,
            shape: self.shape,
            _mem: PhantomData,
        }
    }

    /// The same elements for reading, while no write is under way.
    #[inline]
    pub(crate) fn as_elems(&self) -> Elems<'_> {
        Elems {
            ptr: self.ptr,
            count: self.count,
            dt: self.dt,
            shape: self.shape,
            _mem: PhantomData,
        }
    }

    /// Elements `first..first + count` of these, for writing.
    #[inline]
    pub(crate) fn block_mut(&mut self, first: usize, count: usize) -> ElemsMut<'_> {
        assert!(first <= self.count && count <= self.count - first);
        ElemsMut {
            ptr: self.ptr.wrapping_offset(first as isize * self.shape.ext),
            count,
            dt: self.dt,
            shape: self.shape,
            _mem: PhantomData,
        }
    }

    /// Elements `e0..e0 + c` of a reduction's input, `send` (elements of the same
    /// datatype and count, e.g. a [`sibling`](Self::sibling)) or these elements
    /// themselves when `None` (in place), and of these elements as its output:
    /// one range check for both spans (what [`Elems::span`] and
    /// [`span_mut`](Self::span_mut) would each make). Panics if `send` is not of
    /// the same datatype and count.
    #[inline]
    pub(crate) fn chunk<'s>(
        &'s mut self,
        send: Option<&Elems<'s>>,
        e0: usize,
        c: usize,
    ) -> Chunk<'s> {
        let (at, len) = self.shape.span(self.count, e0, c);
        let inp = match send {
            Some(s) => {
                // Same datatype and count: the same shape (`Shape::of`), so the range checked holds for both.
                assert!(
                    s.count == self.count && std::ptr::eq(s.dt, self.dt),
                    "chunk: the input elements differ from the output's"
                );
                s.ptr
            }
            None => self.ptr.cast_const(),
        };
        Chunk {
            inp: inp.wrapping_offset(at),
            out: self.ptr.wrapping_offset(at),
            len,
            _mem: PhantomData,
        }
    }

    /// The memory span of elements `e0..e0 + c`: exactly their data bytes for a
    /// contiguous type; for another, the gaps between blocks too (which a write
    /// would overwrite: use [`deliver`](Self::deliver) to write elements only).
    #[inline]
    pub(crate) fn span_mut(&mut self, e0: usize, c: usize) -> &mut [u8] {
        let (at, len) = self.shape.span(self.count, e0, c);
        if len == 0 {
            return &mut [];
        }
        // SAFETY: the span of elements e0..e0 + c is writable and ours alone for 'a (constructor contract, range checked); `&mut self` makes this the only borrow.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.wrapping_offset(at), len) }
    }

    /// Unpacks `packed` as bytes `from..from + packed.len()` of the packed stream.
    #[inline]
    pub(crate) fn unpack(&mut self, from: usize, packed: &[u8]) {
        let total = self.count * self.shape.size;
        assert!(from <= total && packed.len() <= total - from);
        if packed.is_empty() {
            return;
        }
        if self.shape.contig {
            // A contiguous type's packed stream is its span: `total` bytes from the first datum.
            let dst = self.ptr.wrapping_offset(self.shape.lb).wrapping_add(from);
            // SAFETY: bytes `from..from + packed.len()` (checked within `total`) of the span of the `count` elements are writable and ours alone (constructor contract; `&mut self`), so `packed` cannot alias them.
            unsafe { std::ptr::copy_nonoverlapping(packed.as_ptr(), dst, packed.len()) };
        } else {
            // SAFETY: the `count` elements at `ptr` are writable and ours alone (constructor contract; `&mut self`), so `packed` cannot alias them.
            unsafe { self.dt.unpack_range(packed, self.ptr, self.count, from) };
        }
    }

    /// Copies elements `e0..e0 + c` from `span`, laid out as their memory span,
    /// writing only the elements' data bytes (not the gaps between blocks).
    #[inline]
    pub(crate) fn deliver(&mut self, e0: usize, c: usize, span: &[u8]) {
        let (at, len) = self.shape.span(self.count, e0, c);
        assert!(
            span.len() >= len,
            "deliver: a span of {} bytes, {len} needed",
            span.len()
        );
        let span = &span[..len];
        if self.shape.contig {
            self.span_mut(e0, c).copy_from_slice(span);
            return;
        }
        let (ext, lb) = (self.shape.ext, self.shape.lb);
        let dst = self.ptr.wrapping_offset(at);
        for i in 0..c as isize {
            self.dt.for_each_block(i * ext - lb, |off, n| {
                let src = &span[off as usize..off as usize + n];
                // SAFETY: `off..off + n` is one data block of element e0 + i relative to the span's start, inside the span (`src` is in bounds of `span`, which is as long), so writable and ours alone (constructor contract); `span` is a distinct borrow.
                unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.wrapping_offset(off), n) };
            });
        }
    }
}

/// The spans of one chunk of elements, input and output, checked once
/// ([`ElemsMut::chunk`]); the output borrowed exclusively for `'s`.
pub(crate) struct Chunk<'s> {
    inp: *const u8,
    out: *mut u8,
    len: usize,
    _mem: PhantomData<&'s mut [u8]>,
}

impl Chunk<'_> {
    /// The input span (the output's own bytes when in place).
    #[inline]
    pub(crate) fn input(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `len` bytes at `inp` are the checked span of the input's elements, readable for 's (its view's contract); when in place they are the output's, which `output` hands out only under `&mut self`, so no write borrow is live.
        unsafe { std::slice::from_raw_parts(self.inp, self.len) }
    }

    /// The output span (as [`ElemsMut::span_mut`]'s).
    #[inline]
    pub(crate) fn output(&mut self) -> &mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: `len` bytes at `out` are the checked span of the output's elements, writable and ours alone for 's (its view's contract and exclusive borrow); a distinct input is unwritten by contract, and `&mut self` excludes a live `input` borrow.
        unsafe { std::slice::from_raw_parts_mut(self.out, self.len) }
    }
}

/// The per-rank blocks of a v-collective inside one buffer of `cap` elements:
/// block `j` is `counts[j]` elements from element `displs[j]`, for the `n` ranks.
/// Checked once, when made ([`VLayout::check`]); the views over it
/// ([`VBlocks`], [`VBlocksMut`]) then cut their blocks from the descriptor's
/// elements with the bounds-checked [`Elems::block`]/[`ElemsMut::block_mut`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct VLayout<'c> {
    counts: &'c [usize],
    displs: &'c [isize],
    cap: usize,
}

impl<'c> VLayout<'c> {
    /// The first `n` blocks of `counts`/`displs` inside `cap` elements: arrays
    /// shorter than `n` are MPI_ERR_ARG (naming `counts_arg`/`displs_arg`), a
    /// non-empty block reaching outside MPI_ERR_BUFFER (naming `arg`), both with
    /// `call`. Empty blocks reach nothing, wherever they point.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn check(
        call: &str,
        arg: &str,
        counts_arg: &str,
        displs_arg: &str,
        cap: usize,
        counts: &'c [usize],
        displs: &'c [isize],
        n: usize,
    ) -> Result<VLayout<'c>> {
        // The common case in one branch-light pass; any failure is named by
        // `layout_error` (out of line), which walks the arrays again in the
        // order the errors are reported. The loop with its formatting in place
        // was ~90 instructions of a 2-rank MPI_Alltoallv per side (collS37).
        if counts.len() >= n && displs.len() >= n {
            let (counts, displs) = (&counts[..n], &displs[..n]);
            // A non-empty block is inside when 0 <= d and d + c <= cap; `d as
            // usize` of a negative d is above isize::MAX >= cap, so one compare
            // of the (wrapping) end against cap and one of d catch both.
            let outside = counts.iter().zip(displs).fold(false, |bad, (&c, &d)| {
                let end = (d as usize).wrapping_add(c);
                bad | (c != 0 && (d as usize > cap || end > cap || end < c))
            });
            if !outside {
                return Ok(VLayout {
                    counts,
                    displs,
                    cap,
                });
            }
        }
        Err(Self::layout_error(
            call, arg, counts_arg, displs_arg, cap, counts, displs, n,
        ))
    }

    /// The error [`VLayout::check`] reports for arrays it refused: a short array
    /// first (MPI_ERR_ARG), then the first block outside (MPI_ERR_BUFFER).
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn layout_error(
        call: &str,
        arg: &str,
        counts_arg: &str,
        displs_arg: &str,
        cap: usize,
        counts: &[usize],
        displs: &[isize],
        n: usize,
    ) -> MpiError {
        for (a, len) in [(counts_arg, counts.len()), (displs_arg, displs.len())] {
            if len < n {
                return MpiError::arg(
                    ErrorClass::Arg,
                    call,
                    a,
                    format!("has {len} entries for {n} ranks"),
                );
            }
        }
        for (i, (&c, &d)) in counts[..n].iter().zip(&displs[..n]).enumerate() {
            if c != 0 && (d < 0 || (d as usize).checked_add(c).is_none_or(|end| end > cap)) {
                return MpiError::arg(
                    ErrorClass::Buffer,
                    call,
                    arg,
                    format!("block {i} ({c} elements at displacement {d}) reaches outside its {cap} elements"),
                );
            }
        }
        // Not reached: the two tests refuse the same blocks.
        MpiError::arg(
            ErrorClass::Buffer,
            call,
            arg,
            format!("a block reaches outside its {cap} elements"),
        )
    }

    /// The per-rank counts (one per rank).
    pub(crate) fn counts(&self) -> &'c [usize] {
        self.counts
    }

    /// Block `j`'s first element and count (an empty block: none, at 0).
    #[inline]
    fn range(&self, j: usize) -> (usize, usize) {
        match self.counts[j] {
            0 => (0, 0),
            // Checked when made: 0 <= displs[j] and displs[j] + c <= cap.
            c => (self.displs[j] as usize, c),
        }
    }
}

/// Blocks of a v-collective: the [`VLayout`]'s blocks of a descriptor's
/// elements, readable for `'a`.
#[derive(Clone, Copy)]
pub(crate) struct VBlocks<'a> {
    elems: Elems<'a>,
    layout: VLayout<'a>,
}

impl<'a> VBlocks<'a> {
    /// Panics if the layout was checked against more elements than `elems` holds.
    pub(crate) fn new(elems: Elems<'a>, layout: VLayout<'a>) -> VBlocks<'a> {
        assert!(
            layout.cap <= elems.count,
            "v blocks checked against {} elements of {}",
            layout.cap,
            elems.count
        );
        VBlocks { elems, layout }
    }

    /// Block `j`.
    #[inline]
    pub(crate) fn get(&self, j: usize) -> Elems<'a> {
        let (first, c) = self.layout.range(j);
        self.elems.block(first, c)
    }

    pub(crate) fn counts(&self) -> &'a [usize] {
        self.layout.counts
    }
}

/// Blocks of a v-collective, as [`VBlocks`], writable and ours alone for `'a`.
pub(crate) struct VBlocksMut<'a> {
    elems: ElemsMut<'a>,
    layout: VLayout<'a>,
}

impl<'a> VBlocksMut<'a> {
    /// As [`VBlocks::new`].
    pub(crate) fn new(elems: ElemsMut<'a>, layout: VLayout<'a>) -> VBlocksMut<'a> {
        assert!(
            layout.cap <= elems.count,
            "v blocks checked against {} elements of {}",
            layout.cap,
            elems.count
        );
        VBlocksMut { elems, layout }
    }

    /// Block `j`, for writing (one block at a time: `&mut self`).
    #[inline]
    pub(crate) fn get_mut(&mut self, j: usize) -> ElemsMut<'_> {
        let (first, c) = self.layout.range(j);
        self.elems.block_mut(first, c)
    }

    pub(crate) fn counts(&self) -> &'a [usize] {
        self.layout.counts
    }
}
