//! User buffers as the engine holds them while an operation is in flight.
//!
//! The engine stores a buffer as an address and a length, and turns it back into a
//! slice only while the operation it belongs to is active. That is sound because
//! of the contract of the engine's `unsafe fn` entry points (`isend`, `irecv`, ...):
//! the caller keeps the memory valid, and does not touch a receive buffer, until
//! the operation completes. The safe Rust API upholds that contract with lifetimes
//! and scopes; the C layer passes the contract on to C programs, as MPI does.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawBuf {
    pub addr: usize,
    pub len: usize,
}

impl RawBuf {
    pub fn from_slice(s: &[u8]) -> RawBuf {
        RawBuf { addr: s.as_ptr() as usize, len: s.len() }
    }

    pub fn from_ptr(ptr: *const u8, len: usize) -> RawBuf {
        RawBuf { addr: ptr as usize, len }
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
