//! User buffers: the typed descriptors the entry points take, and the raw form the
//! engine holds while an operation is in flight.
//!
//! [`SendBuf`] and [`RecvBuf`] are the one place where a buffer's validity is argued.
//! Their safe constructors take slices (of an [`Element`] type, or bytes with a
//! datatype whose reach is checked against the slice), so the point-to-point and
//! datatype entry points over them are safe functions; [`SendBuf::from_raw`] and
//! [`RecvBuf::from_raw`] are the one `unsafe` door, for the C boundary and for
//! callers whose own types carry the proof (the Rust API's `Equivalence`).
//!
//! A non-blocking entry point also takes a [`BufScope`]: the promise that the memory
//! borrowed for `'a` outlives the request (the Rust API's scopes abort the process
//! rather than let `'a` end with a request in flight). [`Forever`] is the scope of
//! `'static` buffers (leaked, static, or C memory handed over by `from_raw`).
//!
//! The engine stores a buffer as an address and a length (`RawBuf`), and turns it
//! back into a slice only while the operation it belongs to is active. Core code
//! holding only an address makes one through `RawBuf::from_ptr`, the in-flight
//! descriptor's one `unsafe` door; the descriptors above hand theirs out safely
//! (`lend` under a scope, `span`), so the point-to-point functions over it are
//! safe. That is sound because the descriptor's lifetime and the scope keep the
//! memory valid, and a receive buffer untouched, until the operation completes.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawBuf {
    addr: usize,
    len: usize,
}

impl RawBuf {
    /// The start address (for the wire: a rendezvous names the buffer by it).
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes the caller keeps valid until the operation that receives the descriptor
    /// completes (as [`from_mut_slice`](Self::from_mut_slice), for reading).
    pub fn from_slice(s: &[u8]) -> RawBuf {
        RawBuf {
            addr: s.as_ptr() as usize,
            len: s.len(),
        }
    }

    /// Bytes the caller keeps valid until the operation that receives the descriptor
    /// completes: a box moved into the request, or a borrow a blocking call outlives
    /// (it waits for its request before returning). Crate-internal for that reason.
    pub fn from_mut_slice(s: &mut [u8]) -> RawBuf {
        RawBuf {
            addr: s.as_mut_ptr() as usize,
            len: s.len(),
        }
    }

    /// Bytes borrowed for `'static` (C memory lent until its request completes).
    pub fn from_static_mut(s: &'static mut [u8]) -> RawBuf {
        RawBuf::from_mut_slice(s)
    }

    /// The one `unsafe` door for memory known only by address: every point-to-point
    /// function over a `RawBuf` is safe because this constructor carries the proof.
    ///
    /// # Safety
    /// `ptr..ptr+len` stays valid for reads until the request (a persistent one: until
    /// it is freed) that receives this descriptor completes; if that request is a
    /// receive, also valid for writes and accessed by nobody else meanwhile.
    pub unsafe fn from_ptr(ptr: *const u8, len: usize) -> RawBuf {
        RawBuf {
            addr: ptr as usize,
            len,
        }
    }

    /// # Safety
    /// The operation owning this buffer is active, so by the entry points' contract
    /// `addr..addr+len` is valid for reads for as long as the slice is used.
    pub unsafe fn as_slice<'a>(&self) -> &'a [u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: non-empty buffers are non-null and valid per this fn's contract.
        unsafe { std::slice::from_raw_parts(self.addr as *const u8, self.len) }
    }

    /// # Safety
    /// The receive owning this buffer is active, so by the entry points' contract
    /// `addr..addr+len` is valid for writes and nobody else accesses it meanwhile.
    pub unsafe fn as_mut_slice<'a>(&self) -> &'a mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: non-empty buffers are non-null, valid and unaliased per this fn's contract.
        unsafe { std::slice::from_raw_parts_mut(self.addr as *mut u8, self.len) }
    }
}

/// A zeroed vector of `n` 16-byte words, or `None` if the allocator refuses
/// (counts from a caller's garbage must give an MPI error, not abort the
/// process the way `vec![0; n]` does). Large requests get fresh zero pages
/// from the allocator (calloc), not a pass writing zeros.
pub(crate) fn try_zeroed_words(n: usize) -> Option<Vec<u128>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u128>(n).ok()?;
    // SAFETY: `layout` has a non-zero size (n > 0).
    let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut u128;
    if p.is_null() {
        return None;
    }
    // Zero bits are a valid u128, so all `n` are initialised.
    // SAFETY: `p` came from the global allocator with the layout of `n` u128s (capacity `n`).
    Some(unsafe { Vec::from_raw_parts(p, n, n) })
}

mod active;
mod blocks;
pub(crate) mod elems;
mod handle;
mod lend;
pub(crate) mod pack;
mod region;
mod runs;
pub(crate) mod schedmem;
#[cfg(test)]
mod tests;

pub use active::Landing;
pub(crate) use active::{ActiveBuf, UnpackDst};
pub(crate) use blocks::check_w;
pub use blocks::{BlockLists, RecvBlocks, SendBlocks};
pub use handle::*;
pub use lend::*;
pub use region::*;
pub(crate) use runs::{Rerun, RunMem, Runs, RunsMut};

use std::borrow::Borrow;
use std::marker::PhantomData;

use crate::request::Request;

use crate::datatype::{Datatype, Primitive};
use crate::error::{ErrorClass, MpiError, Result};

/// A plain element type with a predefined datatype, for which every bit pattern is
/// a valid value (so a receive may write any bytes into it).
///
/// # Safety
/// `Self` has the size of [`Element::PRIMITIVE`], no padding, no invalid bit
/// patterns, and no interior pointers or drop glue.
pub unsafe trait Element: Copy + Send + Sync + 'static {
    const PRIMITIVE: Primitive;
}

macro_rules! elements {
    ($($t:ty => $p:ident),* $(,)?) => {
        // SAFETY: fixed-size integers and floats: no padding, every bit pattern valid.
        $( unsafe impl Element for $t { const PRIMITIVE: Primitive = Primitive::$p; } )*
    };
}
elements!(i8 => Int8, u8 => Uint8, i16 => Int16, u16 => Uint16, i32 => Int32, u32 => Uint32,
    i64 => Int64, u64 => Uint64, f32 => Float, f64 => Double);

/// The bytes of a slice of elements.
pub fn as_bytes<T: Element>(s: &[T]) -> &[u8] {
    // SAFETY: `Element` types have no padding, so all `size_of_val(s)` bytes are initialised.
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s)) }
}

/// The bytes of a slice of elements, writable (every bit pattern is a valid `T`).
pub fn as_bytes_mut<T: Element>(s: &mut [T]) -> &mut [u8] {
    let n = std::mem::size_of_val(s);
    // SAFETY: as `as_bytes`, and any bytes written back form valid `T`s (`Element` contract).
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut u8, n) }
}

/// Checks that `count` elements of `dt` laid out from offset 0 reach only bytes
/// `0..len` (their true bounds, with a negative extent going down).
pub(crate) fn check_reach(
    call: &str,
    arg: &str,
    len: usize,
    count: usize,
    dt: &Datatype,
) -> Result<()> {
    if count == 0 || dt.size() == 0 {
        return Ok(());
    }
    let err = || {
        MpiError::arg(
            ErrorClass::Buffer,
            call,
            arg,
            format!("{count} elements of a datatype of true extent {} and extent {} do not fit in {len} bytes", dt.true_extent(), dt.extent()),
        )
    };
    let step = (count as i128 - 1) * dt.extent() as i128;
    let lo = dt.true_lb() as i128 + step.min(0);
    let hi = dt.true_lb() as i128 + dt.true_extent() as i128 + step.max(0);
    if lo < 0 || hi > len as i128 {
        return Err(err());
    }
    Ok(())
}

/// Checks that `count` elements of `dt` laid out from the start of a buffer of `len`
/// bytes reach only its bytes: MPI_ERR_BUFFER naming `call` and `arg` otherwise (what
/// [`SendBuf::typed`] checks, for views built elsewhere).
pub fn check_fits(call: &str, arg: &str, len: usize, count: usize, dt: &Datatype) -> Result<()> {
    check_reach(call, arg, len, count, dt)
}

/// A buffer to be read by an operation: `count` elements of `dt` at `ptr`; the memory
/// is valid for `'a`, the datatype borrowed for `'d` (the engine copies what it keeps
/// of a datatype, so `'d` need only last the call). Without a datatype, `count` raw
/// bytes (no type-signature check).
#[derive(Clone, Copy, Debug)]
pub struct SendBuf<'a, 'd> {
    ptr: *const u8,
    count: usize,
    dt: Option<&'d Datatype>,
    _life: PhantomData<&'a [u8]>,
}

// SAFETY: a `SendBuf` is a shared borrow of bytes and of a datatype, both `Send + Sync`.
unsafe impl Send for SendBuf<'_, '_> {}
// SAFETY: as above.
unsafe impl Sync for SendBuf<'_, '_> {}

impl<'a, 'd> SendBuf<'a, 'd> {
    /// Raw bytes, without a datatype (no type-signature check).
    pub fn bytes(s: &'a [u8]) -> SendBuf<'a, 'd> {
        SendBuf {
            ptr: s.as_ptr(),
            count: s.len(),
            dt: None,
            _life: PhantomData,
        }
    }

    /// The elements of a slice, as their predefined datatype.
    pub fn slice<T: Element>(s: &'a [T]) -> SendBuf<'a, 'd> {
        SendBuf {
            ptr: s.as_ptr() as *const u8,
            count: s.len(),
            dt: Some(Datatype::predefined_ref(T::PRIMITIVE)),
            _life: PhantomData,
        }
    }

    /// `count` elements of `dt` laid out from the start of `bytes`; an MPI_ERR_BUFFER
    /// error if they reach outside it.
    pub fn typed(bytes: &'a [u8], count: usize, dt: &'d Datatype) -> Result<SendBuf<'a, 'd>> {
        check_reach("SendBuf::typed", "buf", bytes.len(), count, dt)?;
        Ok(SendBuf {
            ptr: bytes.as_ptr(),
            count,
            dt: Some(dt),
            _life: PhantomData,
        })
    }

    /// A descriptor from a raw pointer (the C boundary).
    ///
    /// # Safety
    /// The memory that `count` elements of `dt` at `ptr` cover (`count` bytes when
    /// `dt` is `None`) stays valid for reads, and unmodified, for `'a`. The C boundary
    /// passes MPI's own rule on with `'a = 'static`: memory handed to a non-blocking
    /// call stays valid until the request completes (a persistent one: is freed).
    pub unsafe fn from_raw(
        ptr: *const u8,
        count: usize,
        dt: Option<&'d Datatype>,
    ) -> SendBuf<'a, 'd> {
        SendBuf {
            ptr,
            count,
            dt,
            _life: PhantomData,
        }
    }

    pub fn ptr(&self) -> *const u8 {
        self.ptr
    }
    pub fn count(&self) -> usize {
        self.count
    }
    pub fn datatype(&self) -> Option<&'d Datatype> {
        self.dt
    }

    /// The bytes of a descriptor without a datatype (raw bytes) for `'a`; `None`
    /// for elements of a datatype.
    pub fn raw_bytes(&self) -> Option<&'a [u8]> {
        if self.dt.is_some() {
            return None;
        }
        // SAFETY: the constructors' contract: `count` bytes at `ptr` stay readable, unmodified, for 'a.
        Some(unsafe { RawBuf::from_ptr(self.ptr, self.count).as_slice() })
    }

    /// The descriptor lent for `'static` to the one immediate operation that `_scope`
    /// starts (the scope keeps `'a` alive until that request completes).
    pub(crate) fn lend(self, _scope: &impl BufScope<'a>) -> SendBuf<'static, 'd> {
        SendBuf {
            ptr: self.ptr,
            count: self.count,
            dt: self.dt,
            _life: PhantomData,
        }
    }

    /// The bytes the descriptor covers, for the engine: raw bytes, or the span of a
    /// contiguous datatype's elements; `None` for a non-contiguous datatype with data.
    /// Valid as long as the descriptor (see [`RawBuf::from_slice`]).
    pub(crate) fn span(&self) -> Option<RawBuf> {
        covered_span(self.ptr, self.count, self.dt)
    }

    /// The descriptor's elements as a view (raw bytes: MPI_BYTE), for code that
    /// copies them chunk by chunk (`coll/shm`); reads the datatype's shape once.
    #[inline]
    pub(crate) fn elems(&self) -> elems::Elems<'_> {
        let dt = self
            .dt
            .unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte));
        // SAFETY: the constructors' contract: the memory `count` elements of `dt` at `ptr` cover stays readable, unmodified, for 'a, which outlives this borrow.
        unsafe { elems::Elems::from_raw(self.ptr, self.count, dt) }
    }

    /// [`span`](Self::span) as bytes borrowed for `'a`.
    pub(crate) fn span_bytes(&self) -> Option<&'a [u8]> {
        let span = self.span()?;
        // SAFETY: the constructors' contract: the covered bytes, this one span of them, stay readable, unmodified, for 'a.
        Some(unsafe { span.as_slice() })
    }
}

/// A buffer to be written by an operation: `count` elements of `dt` at `ptr`, exclusively
/// borrowed for `'a`, the datatype for `'d` (as in [`SendBuf`]). Without a datatype,
/// `count` raw bytes (no type-signature check).
#[derive(Debug)]
pub struct RecvBuf<'a, 'd> {
    ptr: *mut u8,
    count: usize,
    dt: Option<&'d Datatype>,
    _life: PhantomData<&'a mut [u8]>,
}

// SAFETY: a `RecvBuf` is an exclusive borrow of bytes and a shared one of a datatype.
unsafe impl Send for RecvBuf<'_, '_> {}
// SAFETY: as above.
unsafe impl Sync for RecvBuf<'_, '_> {}

impl<'a, 'd> RecvBuf<'a, 'd> {
    /// Raw bytes, without a datatype (no type-signature check).
    pub fn bytes(s: &'a mut [u8]) -> RecvBuf<'a, 'd> {
        RecvBuf {
            ptr: s.as_mut_ptr(),
            count: s.len(),
            dt: None,
            _life: PhantomData,
        }
    }

    /// The elements of a slice, as their predefined datatype.
    pub fn slice<T: Element>(s: &'a mut [T]) -> RecvBuf<'a, 'd> {
        RecvBuf {
            ptr: s.as_mut_ptr() as *mut u8,
            count: s.len(),
            dt: Some(Datatype::predefined_ref(T::PRIMITIVE)),
            _life: PhantomData,
        }
    }

    /// `count` elements of `dt` laid out from the start of `bytes`; an MPI_ERR_BUFFER
    /// error if they reach outside it.
    pub fn typed(bytes: &'a mut [u8], count: usize, dt: &'d Datatype) -> Result<RecvBuf<'a, 'd>> {
        check_reach("RecvBuf::typed", "buf", bytes.len(), count, dt)?;
        Ok(RecvBuf {
            ptr: bytes.as_mut_ptr(),
            count,
            dt: Some(dt),
            _life: PhantomData,
        })
    }

    /// A descriptor from a raw pointer (the C boundary).
    ///
    /// # Safety
    /// The memory that `count` elements of `dt` at `ptr` cover (`count` bytes when
    /// `dt` is `None`) stays valid for writes, and is not accessed otherwise, for `'a`
    /// (the C boundary: `'static`, read as in [`SendBuf::from_raw`]). Any bytes
    /// written there are valid for its owner.
    pub unsafe fn from_raw(
        ptr: *mut u8,
        count: usize,
        dt: Option<&'d Datatype>,
    ) -> RecvBuf<'a, 'd> {
        RecvBuf {
            ptr,
            count,
            dt,
            _life: PhantomData,
        }
    }

    /// The same buffer for reading (MPI_Sendrecv_replace sends from it first).
    pub fn as_send(&self) -> SendBuf<'_, 'd> {
        SendBuf {
            ptr: self.ptr,
            count: self.count,
            dt: self.dt,
            _life: PhantomData,
        }
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// As [`SendBuf::lend`], for writing.
    pub(crate) fn lend(self, _scope: &impl BufScope<'a>) -> RecvBuf<'static, 'd> {
        RecvBuf {
            ptr: self.ptr,
            count: self.count,
            dt: self.dt,
            _life: PhantomData,
        }
    }

    /// As [`SendBuf::span`], writable and ours alone as long as the descriptor.
    pub(crate) fn span(&self) -> Option<RawBuf> {
        covered_span(self.ptr, self.count, self.dt)
    }

    /// The descriptor's elements as a view (raw bytes: MPI_BYTE), writable and ours
    /// alone while it lives (it borrows the descriptor mutably).
    #[inline]
    pub(crate) fn elems_mut(&mut self) -> elems::ElemsMut<'_> {
        let dt = self
            .dt
            .unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte));
        // SAFETY: the constructors' contract: the covered memory is writable and ours alone for 'a; `&mut self` keeps every other use of the descriptor out while the view lives.
        unsafe { elems::ElemsMut::from_raw(self.ptr, self.count, dt) }
    }

    /// Where a receive through a temporary buffer unpacks into this descriptor's
    /// elements when it completes (the descriptor is used up). As with
    /// [`span`](Self::span), the caller keeps the memory for the receive: a `'static`
    /// descriptor, or a blocking call that waits for it.
    pub(crate) fn unpack_dst(self) -> UnpackDst {
        let dt = self
            .dt
            .unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte))
            .clone();
        // SAFETY: the constructors' contract: the memory `count` elements of `dt` cover is writable and ours alone for 'a, which the receive given this does not outlive (this fn's caller's duty, as for `span`).
        unsafe { UnpackDst::new(dt, self.ptr, self.count) }
    }

    /// [`span`](Self::span) as bytes exclusively borrowed for `'a` (the descriptor
    /// is used up: the borrow moves to the slice).
    pub(crate) fn into_span_bytes(self) -> Option<&'a mut [u8]> {
        let span = self.span()?;
        // SAFETY: the constructors' contract: the covered bytes, this one span of them, are writable and ours alone for 'a; `self` is consumed, so nothing else reaches them through it.
        Some(unsafe { span.as_mut_slice() })
    }
    pub fn count(&self) -> usize {
        self.count
    }
    pub fn datatype(&self) -> Option<&'d Datatype> {
        self.dt
    }
}

/// The bytes `count` elements of `dt` at `ptr` cover when they are one span (raw
/// bytes, a contiguous datatype, or no data at all).
fn covered_span(ptr: *const u8, count: usize, dt: Option<&Datatype>) -> Option<RawBuf> {
    match dt {
        None => Some(RawBuf {
            addr: ptr as usize,
            len: count,
        }),
        Some(dt) => {
            let len = count.checked_mul(dt.size())?;
            (dt.is_contiguous() || len == 0).then(|| RawBuf {
                addr: ptr.wrapping_offset(dt.true_lb()) as usize,
                len,
            })
        }
    }
}

/// MPI_Pack: the elements of `src` into `outbuf` from `*position`, which moves past them.
pub fn pack(src: SendBuf<'_, '_>, outbuf: &mut [u8], position: &mut usize) -> Result<()> {
    let dt = src
        .dt
        .unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte));
    // SAFETY: the descriptor's memory is readable for this call, and cannot overlap `outbuf`, which is exclusively borrowed.
    unsafe { pack::pack_into(dt, src.ptr, src.count, outbuf, position) }
}

/// MPI_Unpack: elements from `inbuf` at `*position` (which moves past them) into `dst`.
pub fn unpack(inbuf: &[u8], position: &mut usize, dst: RecvBuf<'_, '_>) -> Result<()> {
    let dt = dst
        .dt
        .unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte));
    // SAFETY: the descriptor's memory is writable and ours alone for this call.
    unsafe { pack::unpack_from(dt, inbuf, position, dst.ptr, dst.count) }
}
