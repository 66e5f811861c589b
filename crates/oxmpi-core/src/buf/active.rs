//! The buffer a request-table entry holds while its operation is in flight.
//!
//! [`RawBuf`] is the promise an entry point hands the engine ("valid until the request
//! that receives it completes"); it is `Copy`, so turning it back into a slice needs
//! the caller to say which request is still active. [`ActiveBuf`] is that request's
//! own, non-`Copy` form: made once, when the request entry is made, kept in the entry,
//! and emptied when the request completes ([`ActiveBuf::retire`]). While it holds
//! memory the promise holds, so reading it (`&self`) and writing it (`&mut self`) are
//! safe, and the borrow checker keeps the two apart. Pieces that two parties use at
//! once get their own borrows: [`ActiveBuf::chunk_mut`] (one chunk of a receive that
//! another process fills elsewhere), [`Landing`] (the rest of a packet the TCP
//! transport reads from the socket into a receive, lent until the engine takes it
//! back with [`ActiveBuf::landed`]).

use super::RawBuf;

/// The memory of one in-flight operation, held by its request entry.
///
/// Invariant: while it holds `len > 0` bytes, `addr..addr + len` is valid for reads
/// (a send) or for reads and writes by this value alone (a receive). That is the
/// promise of the [`RawBuf`] it is made from (valid until the request receiving it
/// completes): the engine makes one per request, when the request's entry is made
/// ([`ActiveBuf::take`]), and retires it when the request completes, before the
/// caller can learn that it did. Not `Copy` or `Clone`, so the entry is its only
/// holder; [`Landing`]s lent from it are counted, and retiring it with one out
/// aborts the process (the transport could still write memory the caller got back).
/// Retired, it holds 0 bytes, and no accessor reaches the memory.
#[derive(Debug)]
pub(crate) struct ActiveBuf {
    addr: usize,
    /// The length (low [`LEN_BITS`] bits) and the landings lent out and not yet given
    /// back ([`ActiveBuf::landing`], the bits above): one word, so a request entry,
    /// written and dropped per message, does not grow.
    len: usize,
}

/// Bits of [`ActiveBuf::len`] that hold the length (256 TiB: more than any address
/// space a buffer can be in).
const LEN_BITS: u32 = 48;
const LEN_MASK: usize = (1 << LEN_BITS) - 1;
const ONE_LENT: usize = 1 << LEN_BITS;

impl ActiveBuf {
    /// Holds nothing (a request that completed, or one made complete).
    pub const EMPTY: ActiveBuf = ActiveBuf { addr: 0, len: 0 };

    /// The request entry being made for `raw`'s operation takes its memory: `raw`'s
    /// constructors promised it valid until that request completes, and the entry
    /// retires this value then. Called once per request, by the engine, with the
    /// `RawBuf` the request was started with.
    ///
    /// The length fits [`LEN_BITS`] without a check on this path (made per message):
    /// a `RawBuf`'s bytes are memory its maker vouched for, and no machine this runs on
    /// maps 256 TiB; a longer one (a broken promise) would read as a lent landing, and
    /// completing its request aborts the process rather than go on.
    #[inline(always)]
    pub fn take(raw: RawBuf) -> ActiveBuf {
        debug_assert!(raw.len() <= LEN_MASK, "a buffer of {} bytes", raw.len());
        ActiveBuf {
            addr: raw.addr(),
            len: raw.len(),
        }
    }

    /// Bytes owned by the request itself (a box it keeps alongside, e.g. a bsend
    /// copy): valid as long as the box, which the entry drops only with this value.
    pub fn of_box(b: &[u8]) -> ActiveBuf {
        ActiveBuf::take(RawBuf::from_slice(b))
    }

    /// The request completed: from now on the memory is the caller's again.
    #[inline(always)]
    pub fn retire(&mut self) {
        if self.len > LEN_MASK {
            // The transport may still write into the caller's memory: nothing safe
            // can be done but stop.
            eprintln!(
                "oxmpi: internal error: a receive completed while its buffer was lent to the network"
            );
            std::process::abort();
        }
        self.len = 0;
    }

    /// The start address (for the wire: a rendezvous names the buffer by it, and a
    /// peer process copies to or from it with cross-memory attach).
    #[inline(always)]
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// The length in bytes (0 once retired).
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len & LEN_MASK
    }

    /// The bytes, for reading.
    #[inline(always)]
    pub fn bytes(&self) -> &[u8] {
        let len = self.len();
        if len == 0 {
            return &[];
        }
        // SAFETY: the type's invariant: `len > 0` bytes at `addr` are valid for reads while this value holds them; the borrow of `self` ends before `retire` can run.
        unsafe { std::slice::from_raw_parts(self.addr as *const u8, len) }
    }

    /// The bytes, for writing (a receive's buffer).
    #[inline(always)]
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len();
        if len == 0 {
            return &mut [];
        }
        // SAFETY: the type's invariant: a receive's `len > 0` bytes at `addr` are writable and reached only through this value, borrowed exclusively here.
        unsafe { std::slice::from_raw_parts_mut(self.addr as *mut u8, len) }
    }

    /// Bytes `off..off + len` alone, for writing, while other chunks of the buffer are
    /// written by another process (a shared rendezvous copy: the sender claims its own
    /// chunks and writes them through the kernel). `None` if they reach past the end.
    pub fn chunk_mut(&mut self, off: usize, len: usize) -> Option<&mut [u8]> {
        if off.checked_add(len)? > self.len() {
            return None;
        }
        if len == 0 {
            return Some(&mut []);
        }
        // SAFETY: `off..off + len` lies inside the held bytes (checked), which are writable and reached from this process only through this value, borrowed exclusively here.
        Some(unsafe { std::slice::from_raw_parts_mut((self.addr + off) as *mut u8, len) })
    }

    /// Lends bytes `off..off + len` to the network transport, which reads the rest of a
    /// packet from the socket straight into them; the engine gives the landing back with
    /// [`ActiveBuf::landed`] when that packet is handled. `None` if they reach past the
    /// end, `len` is 0, or too many are out.
    pub fn landing(&mut self, off: usize, len: usize) -> Option<Landing> {
        if len == 0 || off.checked_add(len)? > self.len() || self.len >= !LEN_MASK {
            return None;
        }
        self.len += ONE_LENT;
        Some(Landing {
            addr: self.addr + off,
            len,
        })
    }

    /// A landing of this buffer's was written and its packet handled.
    pub fn landed(&mut self) {
        if self.len > LEN_MASK {
            self.len -= ONE_LENT;
        }
    }
}

/// Bytes of an active receive lent to the network transport ([`ActiveBuf::landing`]):
/// the transport writes them (at most `len`, through [`Landing::rest`]) until the packet
/// they belong to pops, and the receive cannot complete while it is lent (its
/// `ActiveBuf` counts it). Not `Copy` or `Clone`: one writer.
#[derive(Debug)]
pub struct Landing {
    addr: usize,
    len: usize,
}

impl Landing {
    /// The lent bytes' length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no bytes are lent (never: `landing` refuses empty ones).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The lent bytes from `from` on, for writing (empty past the end).
    pub fn rest(&mut self, from: usize) -> &mut [u8] {
        if from >= self.len {
            return &mut [];
        }
        // SAFETY: `from < len` bytes at `addr` are part of an active receive's buffer, lent to this value alone (`ActiveBuf::landing`) and kept valid until it is given back; the borrow of `self` bounds the slice.
        unsafe { std::slice::from_raw_parts_mut((self.addr + from) as *mut u8, self.len - from) }
    }
}

/// Where a receive through a temporary buffer is unpacked when it completes: `count`
/// elements of `dt` laid out at an address, the promise of which the descriptor it is
/// made from carries ([`super::RecvBuf::unpack_dst`]).
pub(crate) struct UnpackDst {
    dt: crate::datatype::Datatype,
    addr: usize,
    count: usize,
}

impl UnpackDst {
    /// `count` elements of `dt` at `addr`.
    ///
    /// # Safety
    /// Every byte the type map of `count` elements of `dt` touches from `addr` stays
    /// writable, and untouched by anyone else, until the receive this is given to
    /// completes.
    pub unsafe fn new(dt: crate::datatype::Datatype, addr: *mut u8, count: usize) -> UnpackDst {
        UnpackDst {
            dt,
            addr: addr as usize,
            count,
        }
    }

    /// Unpacks the prefix `packed` (at most `count` elements' worth) of the message
    /// into the destination; consumes it, so it is written once.
    pub fn unpack(self, packed: &[u8]) {
        // SAFETY: `new`'s contract: the elements' bytes are writable and ours until the receive completes, which is when this runs; `packed` is the receive's own temporary, a distinct buffer.
        unsafe { self.dt.unpack(packed, self.addr as *mut u8, self.count) };
    }

    /// The element count.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The datatype.
    pub fn datatype(&self) -> &crate::datatype::Datatype {
        &self.dt
    }

    /// The address (diagnosis).
    pub fn addr(&self) -> usize {
        self.addr
    }
}
