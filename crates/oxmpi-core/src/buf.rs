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
//! back into a slice only while the operation it belongs to is active.
//!
//! The engine stores a buffer as an address and a length, and turns it back into a
//! slice only while the operation it belongs to is active. That is sound because
//! the descriptor's lifetime and the scope keep the memory valid, and a receive
//! buffer untouched, until the operation completes.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawBuf {
    pub addr: usize,
    pub len: usize,
}

impl RawBuf {
    pub fn from_slice(s: &[u8]) -> RawBuf {
        RawBuf {
            addr: s.as_ptr() as usize,
            len: s.len(),
        }
    }

    pub fn from_ptr(ptr: *const u8, len: usize) -> RawBuf {
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
    pub fn count(&self) -> usize {
        self.count
    }
    pub fn datatype(&self) -> Option<&'d Datatype> {
        self.dt
    }
}

/// What a non-blocking entry point needs to keep a `'a` buffer past its return.
///
/// # Safety
/// Once [`enter`](BufScope::enter) has been called for a request, the memory borrowed
/// for `'a` is neither freed nor (for a receive) accessed until that request has
/// completed (a persistent one: been freed): the implementor makes sure of it, if need
/// be by aborting the process before `'a` ends.
pub unsafe trait BufScope<'a> {
    /// Called once for each request an entry point returns, before it returns it.
    fn enter(&self, r: Request);
}

/// The scope of `'static` buffers: nothing to keep.
#[derive(Clone, Copy, Debug, Default)]
pub struct Forever;

// SAFETY: `'static` memory is never freed while the process runs.
unsafe impl BufScope<'static> for Forever {
    fn enter(&self, _: Request) {}
}

/// A scope for buffers that live on the stack (as `std::thread::scope` for threads):
/// the buffers are declared outside the closure, and every request started with the
/// scope is completed (waited for; a persistent one freed) before [`scope`] returns.
/// If the closure panics with a request still in flight, the process aborts rather
/// than let the engine use memory that unwinding frees.
pub struct Scope<'env> {
    reqs: InFlight,
    _env: PhantomData<&'env mut &'env ()>,
}

// SAFETY: `scope` completes every request entered here before 'env can end.
unsafe impl<'env> BufScope<'env> for Scope<'env> {
    fn enter(&self, r: Request) {
        self.reqs.enter(r);
    }
}

struct ScopeEnd<'s, 'env>(&'s Scope<'env>);

impl Drop for ScopeEnd<'_, '_> {
    fn drop(&mut self) {
        self.0.reqs.settle();
    }
}

/// Runs `f` with a [`Scope`] for `'env` buffers, then completes what it left in flight.
pub fn scope<'env, T>(f: impl FnOnce(&Scope<'env>) -> T) -> T {
    let s = Scope {
        reqs: InFlight::new(),
        _env: PhantomData,
    };
    let end = ScopeEnd(&s);
    let out = f(end.0);
    drop(end);
    out
}

/// A buffer exclusively borrowed for `'a` and lent to the operation of one request:
/// the borrow comes back ([`reclaim`](Lent::reclaim)) only once the engine no longer
/// uses the memory, waiting for that if need be ([`crate::pt2pt::settle`]: whoever
/// completed, freed or forgot the request meanwhile). The Rust API's requests hold
/// their receive buffers this way.
pub struct Lent<'a, D: ?Sized> {
    raw: Request,
    ptr: *mut D,
    _borrow: PhantomData<&'a mut D>,
}

// SAFETY: a `Lent` stands for the `&'a mut D` it was made from, which moves between
// threads with it (and is reached only after the operation, see `reclaim`); `D: Sync`
// as well, since `&self` gives nothing but the request handle yet the buffer comes back
// as a shared borrow wherever the owner wants.
unsafe impl<D: ?Sized + Send + Sync> Send for Lent<'_, D> {}
// SAFETY: `&Lent` reaches only the request handle, never the buffer.
unsafe impl<D: ?Sized + Send + Sync> Sync for Lent<'_, D> {}

impl<D: ?Sized> std::fmt::Debug for Lent<'_, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lent").field("raw", &self.raw).finish()
    }
}

impl<'a, D: ?Sized> Lent<'a, D> {
    /// Lends the buffer at `ptr` to the operation of request `raw`.
    ///
    /// # Safety
    /// `ptr` comes from a `&'a mut D` (or memory valid and unaliased for `'a`) that no
    /// one else reaches from now on, the only operation that uses it is `raw`'s, and
    /// `raw` is held by a scope that settles it before `'a` ends.
    pub unsafe fn new(raw: Request, ptr: *mut D) -> Lent<'a, D> {
        Lent {
            raw,
            ptr,
            _borrow: PhantomData,
        }
    }

    /// The request the buffer is lent to.
    pub fn raw(&self) -> Request {
        self.raw
    }

    /// The buffer back, once the engine is done with it: at once if the request was
    /// completed, otherwise after waiting for its operation (see
    /// [`crate::pt2pt::settle`]).
    pub fn reclaim(self) -> &'a mut D {
        crate::pt2pt::settle(self.raw);
        // SAFETY: the operation of `raw`, the only user of the buffer (`new`'s contract), is over, so the exclusive borrow for 'a is ours again.
        unsafe { &mut *self.ptr }
    }

    /// The buffers of `lents` back, in order, as [`reclaim`](Self::reclaim) of each, with
    /// one look at the engine for all of them when none is in flight any more (those a
    /// `wait_all` just completed): a window of receives costs one lock, not one each.
    pub fn reclaim_all(lents: Vec<Lent<'a, D>>) -> impl Iterator<Item = &'a mut D> {
        crate::pt2pt::settle_all(lents.iter().map(|l| l.raw).collect());
        lents.into_iter().map(|l| {
            // SAFETY: `settle_all` returned once no request of `lents` is in flight, so each operation, the only user of its buffer (`new`'s contract), is over, and the exclusive borrow for 'a is ours again.
            unsafe { &mut *l.ptr }
        })
    }

    /// The buffer back without waiting.
    ///
    /// # Safety
    /// The caller completes the request before using the buffer, within `'a`.
    pub unsafe fn reclaim_unchecked(self) -> &'a mut D {
        // SAFETY: forwarded contract.
        unsafe { &mut *self.ptr }
    }
}

/// The engine's [`BufScope`] while one operation over buffers borrowed for `'a` starts
/// (made only by [`start_kept`] and [`lend`], for the one call of a closure generic over
/// `'x`, with `'a: 'x`): it records the request entered, which the caller checks is the
/// one the closure returned before handing it to the keeper of `'a`.
pub struct Lending<'x, 'a: 'x> {
    entered: std::cell::Cell<Option<Request>>,
    extra: std::cell::Cell<bool>,
    /// Invariant in 'x (the closure cannot pick a shorter one to lend its locals for);
    /// 'a is there for the bound `'a: 'x` the closure may rely on.
    _life: PhantomData<(std::cell::Cell<&'x ()>, &'a ())>,
}

// SAFETY: a `Lending` exists only during the call of a closure generic over 'x (`start_kept`), so the memory borrowed for 'x is the lent buffer or borrowed for 'a, and the one request entered is handed to a `BufScope<'a>` keeper (anything else aborts).
unsafe impl<'x, 'a: 'x> BufScope<'x> for Lending<'x, 'a> {
    fn enter(&self, r: Request) {
        if self.entered.get().is_some() {
            self.extra.set(true);
        } else {
            self.entered.set(Some(r));
        }
    }
}

/// Starts one operation over buffers borrowed for `'a` (shared ones, which `start`
/// captures) and hands its request to `keeper` before returning it with what `start`
/// returned. `start` gets the engine scope to start it with, for a lifetime `'x` of its
/// own (`'a: 'x`), so it keeps nothing borrowed for it. If `start` entered a request
/// other than the one it returned (or more than one), the process aborts, naming
/// `call`: a request over `'a` memory that no keeper holds may not run on.
pub fn start_kept<'a, K: BufScope<'a> + ?Sized, X>(
    keeper: &K,
    call: &str,
    start: impl for<'x> FnOnce(&'x Lending<'x, 'a>) -> Result<(Request, X)>,
) -> Result<(Request, X)> {
    let w = Lending {
        entered: std::cell::Cell::new(None),
        extra: std::cell::Cell::new(false),
        _life: PhantomData,
    };
    let r = start(&w);
    let raw = r.as_ref().ok().map(|x| x.0);
    let ok = !w.extra.get()
        && match (w.entered.get(), raw) {
            (None, _) => true,
            (Some(e), Some(r)) => e == r,
            (Some(_), None) => false,
        };
    if !ok {
        eprintln!(
            "oxmpi: internal error: {call} started a request its scope does not hold; aborting"
        );
        std::process::abort();
    }
    let r = r?;
    keeper.enter(r.0);
    Ok(r)
}

/// As [`start_kept`], lending `buf` (exclusively borrowed for `'a`) to the operation:
/// `start` gets it back, for its own `'x`, to start the operation over, and the
/// returned [`Lent`] gives it back once the engine is done with it. This is the one
/// place where an exclusive borrow is handed to an in-flight operation: the keeper holds
/// the request until it is settled, before `'a` can end.
pub fn lend<'a, D: ?Sized, K: BufScope<'a> + ?Sized, X>(
    buf: &'a mut D,
    keeper: &K,
    call: &str,
    start: impl for<'x> FnOnce(&'x Lending<'x, 'a>, &'x mut D) -> Result<(Request, X)>,
) -> Result<(Lent<'a, D>, X)> {
    let ptr: *mut D = buf;
    let (raw, x) = start_kept(keeper, call, |w| {
        // SAFETY: `ptr` is `buf`, reborrowed for the call of `start` only (its 'x cannot be kept); afterwards only the operation, held by `keeper`, and the `Lent` reach it.
        start(w, unsafe { &mut *ptr })
    })?;
    Ok((
        Lent {
            raw,
            ptr,
            _borrow: PhantomData,
        },
        x,
    ))
}

/// A buffer exclusively borrowed for `'a` and lent to a persistent request, whose runs
/// use it: made by [`lend_persistent`]. It starts runs ([`start`](Standing::start)) and
/// completes them ([`wait`](Standing::wait), [`test`](Standing::test)), so it knows when
/// none is going, and only then hands out the buffer ([`get`](Standing::get),
/// [`get_mut`](Standing::get_mut)). The request stays the engine's until its owner
/// frees it; the keeper it was handed to settles it before `'a` ends.
pub struct Standing<'a, D: ?Sized> {
    raw: Request,
    ptr: *mut D,
    active: bool,
    _borrow: PhantomData<&'a mut D>,
}

// SAFETY: as `Lent`: a `Standing` stands for the `&'a mut D` it was made from.
unsafe impl<D: ?Sized + Send + Sync> Send for Standing<'_, D> {}
// SAFETY: `&Standing` reaches the buffer only as `&D` while no run is going (`get`).
unsafe impl<D: ?Sized + Send + Sync> Sync for Standing<'_, D> {}

impl<D: ?Sized> std::fmt::Debug for Standing<'_, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Standing")
            .field("raw", &self.raw)
            .field("active", &self.active)
            .finish()
    }
}

/// As [`lend`], for a persistent request that `start` initializes over `buf`: the
/// returned [`Standing`] runs it and lends the buffer back between runs.
pub fn lend_persistent<'a, D: ?Sized, K: BufScope<'a> + ?Sized, X>(
    buf: &'a mut D,
    keeper: &K,
    call: &str,
    start: impl for<'x> FnOnce(&'x Lending<'x, 'a>, &'x mut D) -> Result<(Request, X)>,
) -> Result<(Standing<'a, D>, X)> {
    let (lent, x) = lend(buf, keeper, call, start)?;
    Ok((
        Standing {
            raw: lent.raw,
            ptr: lent.ptr,
            active: false,
            _borrow: PhantomData,
        },
        x,
    ))
}

impl<D: ?Sized> Standing<'_, D> {
    /// Frees the request (`MPI_Request_free`); a run still going goes on (and the
    /// buffer stays the engine's: the keeper settles it).
    pub fn free(&mut self) -> Result<()> {
        crate::pt2pt::request_free(&mut self.raw)
    }

    /// Whether a run is going (started, not completed).
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Starts a run (`MPI_Start`); an MPI_ERR_REQUEST error naming `call` if one is going.
    pub fn start(&mut self, call: &str) -> Result<()> {
        if self.active {
            return Err(MpiError::arg(
                ErrorClass::Request,
                "MPI_Start",
                "request",
                format!("the {call} request is already active"),
            ));
        }
        crate::pt2pt::start(&mut self.raw)?;
        self.active = true;
        Ok(())
    }

    /// Waits for the run (`MPI_Wait`; an empty status if none is going). The run is
    /// over either way; returns whether one was going, with the status.
    pub fn wait(&mut self) -> (bool, Result<crate::Status>) {
        let st = crate::pt2pt::wait(&mut self.raw);
        (std::mem::replace(&mut self.active, false), st)
    }

    /// Tests the run (`MPI_Test`): `Ok(None)` while it goes on (an empty status if
    /// none is going); the run is over after `Ok(Some)` or an error.
    pub fn test(&mut self) -> Result<Option<crate::Status>> {
        if !self.active {
            return Ok(Some(crate::Status::EMPTY));
        }
        let r = crate::pt2pt::test(&mut self.raw);
        if !matches!(r, Ok(None)) {
            self.active = false;
        }
        r
    }

    /// The buffer, while no run is going (the shared borrow keeps one from starting).
    pub fn get(&self) -> Option<&D> {
        // SAFETY: no run is going, so the engine does not use the buffer, borrowed exclusively for 'a (`lend`).
        (!self.active).then(|| unsafe { &*self.ptr })
    }

    /// The buffer, writable, while no run is going (the exclusive borrow keeps one from
    /// starting).
    pub fn get_mut(&mut self) -> Option<&mut D> {
        // SAFETY: as `get`, for the exclusive borrow of `self`.
        (!self.active).then(|| unsafe { &mut *self.ptr })
    }
}

/// The scope of the operations [`LentBox::lend`]'s closure starts: it records the
/// requests entered, which the [`LentBox`] settles before the memory it lends is freed.
pub struct Capture<'x> {
    reqs: std::cell::RefCell<Vec<Request>>,
    _life: PhantomData<&'x mut &'x ()>,
}

// SAFETY: only `LentBox::lend` makes a `Capture`, lent for the one call of a closure
// generic over 'x (so neither it nor any 'x borrow outlives that call, and the only
// memory the closure can lend for 'x is the box's, or 'static memory); the `LentBox`
// settles every request entered here before it frees (or gives back) the box.
unsafe impl<'x> BufScope<'x> for Capture<'x> {
    fn enter(&self, r: Request) {
        self.reqs.borrow_mut().push(r);
    }
}

/// Heap memory that operations write into while the owner waits for them (a receive
/// into a value the library allocates): [`lend`](LentBox::lend) lends the box to what
/// its closure starts, [`reclaim`](LentBox::reclaim) gives it back once the engine is
/// done with it (waiting if need be). Dropped with an operation still going, it waits
/// for it before freeing the memory; forgotten, the memory is never freed (so never
/// reused under the engine).
pub struct LentBox<D: ?Sized> {
    ptr: *mut D,
    held: Vec<Request>,
}

// SAFETY: a `LentBox` owns its memory as a `Box<D>` does (the engine's use of it ends
// before the owner gets it back, see `reclaim`).
unsafe impl<D: ?Sized + Send> Send for LentBox<D> {}
// SAFETY: `&LentBox` reaches nothing of the memory.
unsafe impl<D: ?Sized> Sync for LentBox<D> {}

impl<D: ?Sized> std::fmt::Debug for LentBox<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LentBox").field("held", &self.held).finish()
    }
}

impl<D: ?Sized> LentBox<D> {
    /// Lends `b` to the operations `start` starts with the [`Capture`] it gets (for a
    /// lifetime `'x` of its own, so it keeps nothing of either); returns what `start`
    /// returned.
    pub fn lend<T>(
        b: Box<D>,
        start: impl for<'x> FnOnce(&Capture<'x>, &'x mut D) -> T,
    ) -> (LentBox<D>, T) {
        let ptr = Box::into_raw(b);
        let cap = Capture {
            reqs: std::cell::RefCell::new(Vec::new()),
            _life: PhantomData,
        };
        // SAFETY: `ptr` is the box's, reached from now on only through this borrow (which `start` cannot keep) and by the operations it starts, which `reclaim`/drop settle before the box is used or freed.
        let out = start(&cap, unsafe { &mut *ptr });
        let held = cap.reqs.into_inner();
        (LentBox { ptr, held }, out)
    }

    /// The box back, once the engine is done with it: at once if its operations were
    /// completed, otherwise after waiting for them ([`crate::pt2pt::settle`]).
    pub fn reclaim(mut self) -> Box<D> {
        for r in std::mem::take(&mut self.held) {
            crate::pt2pt::settle(r);
        }
        let ptr = self.ptr;
        std::mem::forget(self);
        // SAFETY: `ptr` came from `Box::into_raw` in `lend`, and the operations that used it are over.
        unsafe { Box::from_raw(ptr) }
    }
}

impl<D: ?Sized> Drop for LentBox<D> {
    fn drop(&mut self) {
        let going = self.held.iter().any(|&r| crate::pt2pt::in_flight(r));
        if going && std::thread::panicking() {
            // Waiting could hang the unwinding: leak the memory rather than free it
            // under the engine.
            return;
        }
        for r in std::mem::take(&mut self.held) {
            crate::pt2pt::settle(r);
        }
        // SAFETY: `ptr` came from `Box::into_raw` in `lend`, and the operations that used it are over.
        drop(unsafe { Box::from_raw(self.ptr) });
    }
}

/// The requests a scope of the Rust API holds (pushed as they start): at the scope's
/// end, [`settle`](InFlight::settle) completes every one its owner left in flight
/// (forgotten, leaked, or freed with its operation still going), so the scope's
/// buffers outlive every use the engine makes of them. Shared (`Sync`) so that
/// requests started or completed on other threads, and operations started later
/// (partitioned transfers), can join it.
#[derive(Debug, Default)]
pub struct InFlight {
    /// The requests, and the length at which the next push first drops those the
    /// engine no longer holds (so a long loop of completed requests stays small).
    reqs: std::sync::Mutex<(Vec<Request>, usize)>,
}

impl InFlight {
    pub fn new() -> InFlight {
        InFlight::default()
    }

    /// Holds `r` until [`settle`](InFlight::settle).
    pub fn enter(&self, r: Request) {
        let mut g = self.reqs.lock().unwrap_or_else(|p| p.into_inner());
        if g.0.len() >= g.1 {
            crate::pt2pt::retain_in_flight(&mut g.0);
            // At least 256: a scope per window of 64 requests (osu_bw) never pays a
            // pass over requests all still in flight.
            g.1 = (2 * g.0.len()).max(256);
        }
        g.0.push(r);
    }

    /// Completes what is still in flight (see [`crate::pt2pt::settle`]); while
    /// unwinding from a panic with a request in flight, aborts the process instead
    /// (waiting could hang, and returning would let the engine use freed memory).
    pub fn settle(&self) {
        let mut reqs = std::mem::take(&mut self.reqs.lock().unwrap_or_else(|p| p.into_inner()).0);
        // Requests completed are gone from the engine (handles are generational, so a
        // stale one never names a newer request); one freed (MPI_Request_free) while its
        // operation, or a persistent request's run, was going is in flight until that
        // is over. All looked at under one lock (the common case: none is left).
        crate::pt2pt::retain_in_flight(&mut reqs);
        for r in reqs {
            if std::thread::panicking() {
                eprintln!(
                    "oxmpi: a scope ended by a panic with a request in flight (request was not completed); aborting"
                );
                std::process::abort();
            }
            crate::pt2pt::settle(r);
        }
    }
}

/// MPI_Pack: the elements of `src` into `outbuf` from `*position`, which moves past them.
pub fn pack(src: SendBuf<'_, '_>, outbuf: &mut [u8], position: &mut usize) -> Result<()> {
    let dt = src
        .dt
        .unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte));
    // SAFETY: the descriptor's memory is readable for this call, and cannot overlap `outbuf`, which is exclusively borrowed.
    unsafe { crate::datatype::pack::pack_into(dt, src.ptr, src.count, outbuf, position) }
}

/// MPI_Unpack: elements from `inbuf` at `*position` (which moves past them) into `dst`.
pub fn unpack(inbuf: &[u8], position: &mut usize, dst: RecvBuf<'_, '_>) -> Result<()> {
    let dt = dst
        .dt
        .unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte));
    // SAFETY: the descriptor's memory is writable and ours alone for this call.
    unsafe { crate::datatype::pack::unpack_from(dt, inbuf, position, dst.ptr, dst.count) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Datatype;

    #[test]
    fn slices_get_their_predefined_datatype_and_length() {
        let v = [1i32, 2, 3];
        let s = SendBuf::slice(&v);
        assert_eq!((s.count(), s.datatype().unwrap().size()), (3, 4));
        let mut w = [0f64; 5];
        let r = RecvBuf::slice(&mut w);
        assert_eq!((r.count(), r.datatype().unwrap().size()), (5, 8));
        assert!(SendBuf::bytes(&[1, 2]).datatype().is_none());
        assert_eq!(as_bytes(&v).len(), 12);
    }

    #[test]
    fn typed_descriptors_must_fit_their_bytes() {
        let int = Datatype::predefined(Primitive::Int32);
        let bytes = [0u8; 16];
        assert!(SendBuf::typed(&bytes, 4, &int).is_ok());
        assert_eq!(
            SendBuf::typed(&bytes, 5, &int).unwrap_err().class,
            ErrorClass::Buffer
        );
        assert!(SendBuf::typed(&bytes, 0, &int).is_ok());
        // A strided vector: 3 blocks of 1 int, stride 2 ints, reaches 5 ints (20 bytes).
        let vec = Datatype::vector(3, 1, 2, &int).unwrap();
        assert!(SendBuf::typed(&[0u8; 20], 1, &vec).is_ok());
        assert!(SendBuf::typed(&[0u8; 19], 1, &vec).is_err());
        let mut out = [0u8; 19];
        assert!(RecvBuf::typed(&mut out, 1, &vec).is_err());
        // A negative lower bound reaches before the start of the slice.
        let moved = Datatype::hindexed(&[1], &[-4], &int).unwrap();
        assert!(SendBuf::typed(&[0u8; 64], 1, &moved).is_err());
        // A negative extent: later elements go down from the first.
        let down = Datatype::resized(&int, 0, -4).unwrap();
        assert!(SendBuf::typed(&[0u8; 64], 2, &down).is_err());
        assert!(SendBuf::typed(&[0u8; 64], 1, &down).is_ok());
    }

    #[test]
    fn pack_and_unpack_round_trip_a_strided_vector() {
        let int = Datatype::predefined(Primitive::Int32);
        let vec = Datatype::vector(3, 1, 2, &int).unwrap();
        vec.commit();
        let src: Vec<i32> = (0..5).collect();
        let mut packed = [0u8; 12];
        let mut pos = 0;
        pack(
            SendBuf::typed(as_bytes(&src), 1, &vec).unwrap(),
            &mut packed,
            &mut pos,
        )
        .unwrap();
        assert_eq!(pos, 12);
        let mut back = [-1i32; 5];
        let mut pos = 0;
        unpack(
            &packed,
            &mut pos,
            RecvBuf::typed(as_bytes_mut(&mut back), 1, &vec).unwrap(),
        )
        .unwrap();
        assert_eq!(back, [0, -1, 2, -1, 4]);
        let mut small = [0u8; 8];
        assert!(pack(
            SendBuf::typed(as_bytes(&src), 1, &vec).unwrap(),
            &mut small,
            &mut 0
        )
        .is_err());
    }

    #[test]
    fn a_region_hands_out_its_elements_and_its_contiguous_bytes() {
        let dt = Datatype::predefined(Primitive::Int32);
        let mut v = [1i32, 2, 3];
        let bytes = as_bytes_mut(&mut v);
        let mut r = Region::of_bytes("t", bytes, 3, &dt).unwrap();
        assert!(r.is_exclusive());
        assert_eq!(r.send(2).count(), 2);
        assert_eq!(r.recv(9).count(), 3, "at most the region's count");
        let b = r.bytes_mut().unwrap();
        b[..4].copy_from_slice(&7i32.to_ne_bytes());
        assert_eq!(r.into_owned().into_bytes_mut().unwrap().len(), 12);
        assert_eq!(v[0], 7);
    }

    #[test]
    fn a_region_refuses_elements_outside_its_bytes() {
        let dt = Datatype::predefined(Primitive::Int32);
        let mut b = [0u8; 7];
        assert!(Region::of_bytes("t", &mut b[..], 2, &dt).is_err());
    }

    #[test]
    fn a_strided_region_has_no_byte_view() {
        let dt = Datatype::vector(2, 1, 2, Datatype::predefined_ref(Primitive::Int32)).unwrap();
        let mut b = [0u8; 12];
        let r = Region::of_bytes("t", &mut b[..], 1, dt).unwrap();
        assert!(r.into_bytes().is_none());
    }

    #[test]
    #[should_panic(expected = "lent again")]
    fn a_region_lends_its_memory_once() {
        let dt = Datatype::predefined(Primitive::Int32);
        let mut b = [0u8; 8];
        scope(|sc| {
            let mut r = Region::of_bytes("t", &mut b[..], 2, &dt).unwrap();
            assert_eq!(r.lend_recv(sc, 2).count(), 2);
            let _ = r.lend_recv(sc, 2);
        });
    }

    #[test]
    fn zeroed_bytes_cover_the_values() {
        let mut v = [std::mem::MaybeUninit::<(u8, u32)>::uninit(); 3];
        let b = zeroed_bytes(&mut v);
        assert_eq!(b.len(), 24);
        assert!(b.iter().all(|&x| x == 0));
    }
}

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
