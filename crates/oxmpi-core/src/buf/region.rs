//! The Rust API's one descriptor of a user buffer ([`Region`]).

use super::*;

/// A typed buffer region borrowed for `'a`: `count` elements of a datatype at a base
/// address, taken from a shared borrow (readable, unchanged) or an exclusive one
/// (also writable, any bytes valid). It is the Rust API's one descriptor of a user
/// buffer: [`Region::shared`] and [`Region::exclusive`] are its only `unsafe` doors,
/// and every [`SendBuf`]/[`RecvBuf`] and byte slice it hands out afterwards is made
/// here, safely, under the rules its borrow of `'a` and its `lent` mark enforce.
///
/// The datatype is held as `D`: owned ([`Datatype`], the default), or borrowed for a
/// call that needs no copy of it (`&Datatype`; [`Region::into_owned`] clones it).
#[derive(Debug)]
pub struct Region<'a, D: Borrow<Datatype> = Datatype> {
    ptr: *mut u8,
    count: usize,
    dt: D,
    /// Taken from an exclusive borrow: may be written, never lent for reading.
    excl: bool,
    /// Lent to one immediate operation for `'a`: no other descriptor of it any more.
    lent: bool,
    _life: PhantomData<&'a mut [u8]>,
}

// SAFETY: a `Region` is a borrow of plain bytes (shared or exclusive), `Send + Sync`, and a datatype `D`.
unsafe impl<D: Borrow<Datatype> + Send> Send for Region<'_, D> {}
// SAFETY: as above; `&Region` hands out only shared descriptors.
unsafe impl<D: Borrow<Datatype> + Sync> Sync for Region<'_, D> {}

impl<'a, D: Borrow<Datatype>> Region<'a, D> {
    /// `count` elements of `dt` at `ptr`, borrowed shared for `'a`.
    ///
    /// # Safety
    /// The memory those elements cover stays valid for reads, and unmodified, for `'a`.
    pub unsafe fn shared(ptr: *const u8, count: usize, dt: D) -> Region<'a, D> {
        Region {
            ptr: ptr as *mut u8,
            count,
            dt,
            excl: false,
            lent: false,
            _life: PhantomData,
        }
    }

    /// `count` elements of `dt` at `ptr`, borrowed exclusively for `'a`.
    ///
    /// # Safety
    /// The memory those elements cover is initialized, stays valid for reads and writes,
    /// and is accessed only through this region, for `'a`; any bytes written there are
    /// valid for its owner.
    pub unsafe fn exclusive(ptr: *mut u8, count: usize, dt: D) -> Region<'a, D> {
        Region {
            ptr,
            count,
            dt,
            excl: true,
            lent: false,
            _life: PhantomData,
        }
    }

    /// `count` elements of `dt` laid out from the start of `bytes` (exclusive); an
    /// MPI_ERR_BUFFER error naming `call` if they reach outside it.
    pub fn of_bytes(call: &str, bytes: &'a mut [u8], count: usize, dt: D) -> Result<Region<'a, D>> {
        check_reach(call, "buf", bytes.len(), count, dt.borrow())?;
        Ok(Region {
            ptr: bytes.as_mut_ptr(),
            count,
            dt,
            excl: true,
            lent: false,
            _life: PhantomData,
        })
    }

    /// The base address (for identification and layout arithmetic; never dereferenced by callers).
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
    pub fn count(&self) -> usize {
        self.count
    }
    pub fn datatype(&self) -> &Datatype {
        self.dt.borrow()
    }
    pub fn is_exclusive(&self) -> bool {
        self.excl
    }

    /// The first `n` elements (at most `count`) as a send descriptor, for as long as
    /// `self` is borrowed.
    pub fn send(&self, n: usize) -> SendBuf<'_, '_> {
        assert!(
            !self.lent,
            "a buffer lent to an immediate operation was used again"
        );
        SendBuf {
            ptr: self.ptr,
            count: n.min(self.count),
            dt: Some(self.dt.borrow()),
            _life: PhantomData,
        }
    }

    /// The first `n` elements of a shared region as a send descriptor for `'a`, for the
    /// immediate operation that `_scope` starts (shared memory may have many readers).
    pub fn lend_send(&self, _scope: &impl BufScope<'a>, n: usize) -> SendBuf<'a, '_> {
        assert!(
            !self.excl,
            "an exclusively borrowed buffer was lent for reading"
        );
        SendBuf {
            ptr: self.ptr,
            count: n.min(self.count),
            dt: Some(self.dt.borrow()),
            _life: PhantomData,
        }
    }

    /// The first `n` elements of an exclusive region as a receive descriptor, for as
    /// long as `self` is borrowed exclusively.
    pub fn recv(&mut self, n: usize) -> RecvBuf<'_, '_> {
        assert!(self.excl, "a shared buffer was used for writing");
        assert!(
            !self.lent,
            "a buffer lent to an immediate operation was used again"
        );
        RecvBuf {
            ptr: self.ptr,
            count: n.min(self.count),
            dt: Some(self.dt.borrow()),
            _life: PhantomData,
        }
    }

    /// The first `n` elements of an exclusive region as a receive descriptor for `'a`,
    /// for the one immediate operation that `_scope` starts: afterwards the region
    /// hands out no other descriptor of the memory.
    pub fn lend_recv(&mut self, _scope: &impl BufScope<'a>, n: usize) -> RecvBuf<'a, '_> {
        assert!(self.excl, "a shared buffer was lent for writing");
        assert!(
            !self.lent,
            "a buffer lent to an immediate operation was lent again"
        );
        self.lent = true;
        RecvBuf {
            ptr: self.ptr,
            count: n.min(self.count),
            dt: Some(self.dt.borrow()),
            _life: PhantomData,
        }
    }

    /// The data bytes of a contiguous datatype's elements (`count * size` bytes from
    /// the true lower bound); `None` for a non-contiguous datatype.
    fn data_span(&self) -> Option<(*mut u8, usize)> {
        let dt = self.dt.borrow();
        if !dt.is_contiguous() {
            return None;
        }
        let len = self.count * dt.size();
        if len == 0 {
            return Some((std::ptr::NonNull::<u8>::dangling().as_ptr(), 0));
        }
        Some((self.ptr.wrapping_offset(dt.true_lb()), len))
    }

    /// The region's data bytes for `'a` (contiguous datatypes only), consuming it.
    pub fn into_bytes(self) -> Option<&'a [u8]> {
        assert!(
            !self.lent,
            "a buffer lent to an immediate operation was used again"
        );
        let (p, len) = self.data_span()?;
        // SAFETY: `shared`/`exclusive`'s contract: the elements' bytes, `len` of them from the true lower bound, are readable for 'a.
        Some(unsafe { std::slice::from_raw_parts(p, len) })
    }

    /// An exclusive region's data bytes for `'a` (contiguous datatypes only), consuming it.
    pub fn into_bytes_mut(mut self) -> Option<&'a mut [u8]> {
        let (p, len) = self.writable_span()?;
        // SAFETY: `exclusive`'s contract: these initialized bytes are ours alone, writable with any value, for 'a.
        Some(unsafe { std::slice::from_raw_parts_mut(p, len) })
    }

    /// An exclusive region's data bytes (contiguous datatypes only) while `self` is
    /// borrowed exclusively, e.g. to check the values a completed receive wrote.
    pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        let (p, len) = self.writable_span()?;
        // SAFETY: as `into_bytes_mut`, for the borrow of `self`.
        Some(unsafe { std::slice::from_raw_parts_mut(p, len) })
    }

    /// The region's data bytes (contiguous datatypes only) while `self` is borrowed.
    pub fn bytes(&self) -> Option<&[u8]> {
        assert!(
            !self.lent,
            "a buffer lent to an immediate operation was used again"
        );
        let (p, len) = self.data_span()?;
        // SAFETY: `shared`/`exclusive`'s contract: the elements' bytes are readable for 'a, which outlives this borrow of `self`.
        Some(unsafe { std::slice::from_raw_parts(p, len) })
    }

    /// The region's `count` elements packed (`count * size` bytes), any datatype.
    pub fn pack_vec(&self) -> Vec<u8> {
        assert!(
            !self.lent,
            "a buffer lent to an immediate operation was used again"
        );
        let dt = self.dt.borrow();
        let mut v = vec![0u8; dt.size() * self.count];
        // SAFETY: `shared`/`exclusive`'s contract: the bytes `count` elements of `dt` cover are readable; `v` is a distinct buffer.
        unsafe { dt.pack(self.ptr, self.count, &mut v) };
        v
    }

    /// Packs the region's `count` elements into the first `count * size` bytes of
    /// `out` (which must hold them).
    pub fn pack_to(&self, out: &mut [u8]) {
        assert!(
            !self.lent,
            "a buffer lent to an immediate operation was used again"
        );
        // SAFETY: `shared`/`exclusive`'s contract: the bytes `count` elements of the datatype cover are readable; `out` is a distinct buffer (`pack` checks its length).
        unsafe { self.dt.borrow().pack(self.ptr, self.count, out) };
    }

    /// Unpacks `packed` (the first `count * size` bytes of it at most) into an
    /// exclusive region's elements, from the first.
    pub fn unpack(&mut self, packed: &[u8]) {
        assert!(self.excl, "a shared buffer was used for writing");
        assert!(
            !self.lent,
            "a buffer lent to an immediate operation was used again"
        );
        // SAFETY: `exclusive`'s contract: the bytes `count` elements of the datatype cover are writable, any values, and ours alone while `self` is borrowed exclusively.
        unsafe { self.dt.borrow().unpack(packed, self.ptr, self.count) };
    }

    /// The base address of a region that holds elements `position..position + n`
    /// (`None` if it does not), for handing them to C code (a user's conversion
    /// function) that reads them while `self` is borrowed: the region's contract
    /// makes them readable then.
    pub fn elements_ptr(&self, position: usize, n: usize) -> Option<*const u8> {
        assert!(
            !self.lent,
            "a buffer lent to an immediate operation was used again"
        );
        (position.checked_add(n)? <= self.count).then_some(self.ptr as *const u8)
    }

    /// As [`elements_ptr`](Self::elements_ptr), for C code that writes the elements
    /// (any bytes) while `self` is borrowed exclusively: an exclusive region's contract
    /// makes them writable and ours alone then.
    pub fn elements_mut_ptr(&mut self, position: usize, n: usize) -> Option<*mut u8> {
        assert!(self.excl, "a shared buffer was used for writing");
        assert!(
            !self.lent,
            "a buffer lent to an immediate operation was used again"
        );
        (position.checked_add(n)? <= self.count).then_some(self.ptr)
    }

    /// The same region for as long as `self` is borrowed exclusively (nothing else
    /// reaches the memory through `self` meanwhile), its datatype borrowed.
    pub fn reborrow(&mut self) -> Region<'_, &Datatype> {
        Region {
            ptr: self.ptr,
            count: self.count,
            dt: self.dt.borrow(),
            excl: self.excl,
            lent: self.lent,
            _life: PhantomData,
        }
    }

    /// [`data_span`](Self::data_span) of an exclusive region not lent to an operation.
    fn writable_span(&mut self) -> Option<(*mut u8, usize)> {
        assert!(self.excl, "a shared buffer was used for writing");
        assert!(
            !self.lent,
            "a buffer lent to an immediate operation was used again"
        );
        self.data_span()
    }
}

impl<'a> Region<'a, &Datatype> {
    /// The same region holding its own copy of the datatype.
    pub fn into_owned(self) -> Region<'a> {
        Region {
            ptr: self.ptr,
            count: self.count,
            dt: self.dt.clone(),
            excl: self.excl,
            lent: self.lent,
            _life: PhantomData,
        }
    }
}

/// A buffer lent to an operation that runs on another thread (MPI-IO's
/// non-blocking and split collective accesses run on the file's I/O worker): the
/// region, its datatype owned, moved whole into the work item, so the thread that
/// started it holds no descriptor of the memory meanwhile.
///
/// Only `'static` descriptors make one, so the proof is the one their constructors
/// carry: C memory under MPI's rule ([`SendBuf::from_raw`], [`Region::shared`] with
/// `'a = 'static`: valid, and for a read untouched, until the request completes), or
/// a Rust borrow lent under a [`BufScope`] (`SendBuf::lend`), which completes the
/// request before `'a` ends. The request the loan goes with must therefore complete
/// only after the loan is dropped (the I/O worker drops it with the work item,
/// before it hands the outcome over).
#[derive(Debug)]
pub struct Loan {
    region: Region<'static>,
}

impl Loan {
    /// A `'static` region lent to one request (see the type's proof).
    pub fn new<D: Borrow<Datatype>>(r: Region<'static, D>) -> Loan {
        Loan {
            region: Region {
                ptr: r.ptr,
                count: r.count,
                dt: r.dt.borrow().clone(),
                excl: r.excl,
                lent: r.lent,
                _life: PhantomData,
            },
        }
    }

    /// A send descriptor lent for `'static` (read by the operation).
    pub fn of_send(b: SendBuf<'static, '_>) -> Loan {
        Loan::new(Region::from(b))
    }

    /// A receive descriptor lent for `'static` (written by the operation).
    pub fn of_recv(b: RecvBuf<'static, '_>) -> Loan {
        Loan::new(Region::from(b))
    }

    /// Whether the operation may write the memory (a receive descriptor's loan).
    pub fn is_exclusive(&self) -> bool {
        self.region.is_exclusive()
    }

    /// The lent region, for the operation that holds the loan.
    pub fn region(&mut self) -> Region<'_, &Datatype> {
        self.region.reborrow()
    }
}

impl<'a, 'd> From<SendBuf<'a, 'd>> for Region<'a, &'d Datatype> {
    /// A send descriptor as a shared region (bytes when it has no datatype): the
    /// descriptor's contract is [`Region::shared`]'s.
    fn from(b: SendBuf<'a, 'd>) -> Self {
        Region {
            ptr: b.ptr.cast_mut(),
            count: b.count,
            dt: b
                .dt
                .unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte)),
            excl: false,
            lent: false,
            _life: PhantomData,
        }
    }
}

impl<'a, 'd> From<RecvBuf<'a, 'd>> for Region<'a, &'d Datatype> {
    /// A receive descriptor as an exclusive region (bytes when it has no datatype):
    /// the descriptor's contract is [`Region::exclusive`]'s.
    fn from(b: RecvBuf<'a, 'd>) -> Self {
        Region {
            ptr: b.ptr,
            count: b.count,
            dt: b
                .dt
                .unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte)),
            excl: true,
            lent: false,
            _life: PhantomData,
        }
    }
}

/// Zeroes the memory of `v` and returns it as bytes: memory for values a receive will
/// write, initialized everywhere (also the padding a datatype skips).
pub fn zeroed_bytes<T>(v: &mut [std::mem::MaybeUninit<T>]) -> &mut [u8] {
    let n = std::mem::size_of_val(v);
    let p = v.as_mut_ptr() as *mut u8;
    // SAFETY: `v` is `n` writable bytes, exclusively borrowed, and `MaybeUninit<T>` takes any bytes; after the write they are initialized `u8`s.
    unsafe {
        std::ptr::write_bytes(p, 0, n);
        std::slice::from_raw_parts_mut(p, n)
    }
}

/// Memory for values of `T` that a receive writes as bytes: zeroed when made, so every
/// byte (the padding a datatype skips too) is initialized and may be seen as bytes
/// ([`bytes_mut`](Zeroed::bytes_mut)) until the owner, who knows which bytes make a
/// valid `T`, takes the values out ([`assume_init`](Zeroed::assume_init)).
///
/// ```
/// let mut z = oxmpi_core::buf::Zeroed::<u32>::new(2);
/// z.bytes_mut()[4..].copy_from_slice(&7u32.to_ne_bytes());
/// // SAFETY: any 8 bytes are two valid u32s.
/// assert_eq!(unsafe { z.assume_init() }, [0, 7]);
/// ```
pub struct Zeroed<T> {
    v: Vec<std::mem::MaybeUninit<T>>,
}

impl<T> std::fmt::Debug for Zeroed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Zeroed")
            .field("len", &self.v.len())
            .finish()
    }
}

impl<T> Zeroed<T> {
    /// Zeroed memory for `n` values.
    pub fn new(n: usize) -> Zeroed<T> {
        let mut v: Vec<std::mem::MaybeUninit<T>> =
            (0..n).map(|_| std::mem::MaybeUninit::uninit()).collect();
        zeroed_bytes(&mut v);
        Zeroed { v }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.v.len()
    }

    /// Whether there is room for no value.
    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    /// Keeps the first `n` values.
    pub fn truncate(&mut self, n: usize) {
        self.v.truncate(n);
    }

    /// The values' bytes.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let n = std::mem::size_of_val(&self.v[..]);
        let p = self.v.as_mut_ptr() as *mut u8;
        // SAFETY: `n` bytes of the vector, exclusively borrowed, initialized (zeroed in `new`, since written only as bytes).
        unsafe { std::slice::from_raw_parts_mut(p, n) }
    }

    /// The values.
    ///
    /// # Safety
    /// The bytes of each value are a valid `T` (zero bytes and whatever was written).
    pub unsafe fn assume_init(self) -> Vec<T> {
        self.v
            .into_iter()
            // SAFETY: the caller's contract.
            .map(|x| unsafe { x.assume_init() })
            .collect()
    }
}
