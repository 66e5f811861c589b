//! Lending a `'a` buffer to a request in flight: the scope a non-blocking entry
//! point promises ([`BufScope`]), the lent and standing (persistent) buffers, and
//! the keepers that settle them.

use super::*;

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
/// `call`: a request over `'a` memory that no keeper holds may not run on. The request
/// comes back as the [`Handle`] for `'a` (not `Copy`): its owner completes it.
#[inline(always)]
pub fn start_kept<'a, K: BufScope<'a> + ?Sized, X>(
    keeper: &K,
    call: &str,
    start: impl for<'x> FnOnce(&'x Lending<'x, 'a>) -> Result<(Request, X)>,
) -> Result<(Handle<'a>, X)> {
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
    let (r, x) = r?;
    keeper.enter(r);
    Ok((Handle::adopt(r), x))
}

/// As [`start_kept`], lending `buf` (exclusively borrowed for `'a`) to the operation:
/// `start` gets it back, for its own `'x`, to start the operation over, and the
/// returned [`Lent`] gives it back once the engine is done with it (the request's
/// [`Handle`] comes with it, for its owner to complete). This is the one
/// place where an exclusive borrow is handed to an in-flight operation: the keeper holds
/// the request until it is settled, before `'a` can end.
#[inline(always)]
pub fn lend<'a, D: ?Sized, K: BufScope<'a> + ?Sized, X>(
    buf: &'a mut D,
    keeper: &K,
    call: &str,
    start: impl for<'x> FnOnce(&'x Lending<'x, 'a>, &'x mut D) -> Result<(Request, X)>,
) -> Result<(Lent<'a, D>, Handle<'a>, X)> {
    let ptr: *mut D = buf;
    let (h, x) = start_kept(keeper, call, |w| {
        // SAFETY: `ptr` is `buf`, reborrowed for the call of `start` only (its 'x cannot be kept); afterwards only the operation, held by `keeper`, and the `Lent` reach it.
        start(w, unsafe { &mut *ptr })
    })?;
    Ok((
        Lent {
            raw: h.raw(),
            ptr,
            _borrow: PhantomData,
        },
        h,
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
    // The runs are started and completed through the `Standing` only (the handle is its).
    let (lent, _, x) = lend(buf, keeper, call, start)?;
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

    /// As [`new`](InFlight::new), with room for `n` requests before the list grows
    /// (a scope that knows how many it will hold: the Rust API's `multiple_scope`).
    pub fn with_capacity(n: usize) -> InFlight {
        InFlight {
            reqs: std::sync::Mutex::new((Vec::with_capacity(n), 0)),
        }
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

/// The requests one [`wait_all_each`](Gone::wait_all_each) completed successfully: each was
/// taken out of the engine (its handle is null now) and, request handles being
/// generational, never names a request in flight again. Made only by `wait_all_each`, so
/// the keepers may trust it: [`InFlight::release`] stops holding them and
/// [`Lent::reclaim_gone`] hands their buffers back without looking at the engine
/// again (the Rust API's collection, PROFILE.md rate18b: those were two more passes
/// over the same window under the engine's lock).
#[derive(Debug, Default)]
pub struct Gone(Vec<Request>);

impl Gone {
    /// [`Handle::wait_all_each`] over `hs`, with what it completed: each status handed to
    /// `put` with its index as its request completes (in index order, under the engine's
    /// lock: `put` must not call MPI; the Rust API's collection hands out its completions
    /// from there, PROFILE.md rate27).
    ///
    /// A request that succeeded and left the engine comes to `put` with its [`Left`],
    /// with which [`Lent::reclaim_left`] hands its buffer back there and then, with no
    /// second pass over the window (PROFILE.md, rrate31).
    pub fn wait_all_each(
        hs: &mut [Handle<'_>],
        mut put: impl FnMut(usize, crate::Status, Option<Left>),
    ) -> (Result<()>, Gone) {
        let mut gone: Vec<Request> = hs.iter().map(Handle::raw).collect();
        // The indices whose status has an error (none in the common case).
        let mut failed: Vec<usize> = Vec::new();
        let res = crate::pt2pt::waitall_each_left(Handle::raws(hs), |i, s, left| {
            if s.error != 0 {
                failed.push(i);
                return put(i, s, None);
            }
            // `gone[i]` is the request `hs[i]` named before the wait (`DONE` names
            // no request of its own: left out, as below).
            let r = gone[i];
            put(i, s, (left && r != Request::DONE).then_some(Left(r)))
        });
        if res.is_ok() && failed.is_empty() && hs.iter().all(Handle::is_null) {
            // The common case: every request succeeded and is gone (those null or
            // `DONE` before name no request in flight either), with no pass to sort
            // them (it cost ~21 Ir per request).
            return (res, Gone(gone));
        }
        let mut i = 0;
        gone.retain(|r| {
            let done =
                !r.is_null() && *r != Request::DONE && hs[i].is_null() && !failed.contains(&i);
            i += 1;
            done
        });
        (res, Gone(gone))
    }

    /// Whether `r` is among the requests, looking on from `*at` (moved past it when
    /// found). Callers ask in the order the requests were waited for; one asked out of
    /// that order is simply not found, and its keeper looks at the engine as before.
    fn holds(&self, at: &mut usize, r: Request) -> bool {
        let mut i = *at;
        while let Some(&g) = self.0.get(i) {
            i += 1;
            if g == r {
                *at = i;
                return true;
            }
        }
        false
    }
}

impl InFlight {
    /// Stops holding the requests of `gone` (they are complete and out of the engine),
    /// so that [`settle`](InFlight::settle) does not look at them again. Those held in
    /// another order than they were waited for stay held (settled as before).
    pub fn release(&self, gone: &Gone) {
        if gone.0.is_empty() {
            return;
        }
        let mut g = self.reqs.lock().unwrap_or_else(|p| p.into_inner());
        if g.0 == gone.0 {
            // The common case: a scope holding exactly one collection's window.
            g.0.clear();
            return;
        }
        let mut at = 0;
        g.0.retain(|&r| !gone.holds(&mut at, r));
    }
}

/// A request that [`Gone::wait_all_each`] has just completed without error and taken
/// out of the engine (its handle nulled; handles are generational, so it never names a
/// request in flight again): made only there, handed to its `put`.
#[derive(Debug)]
pub struct Left(Request);

impl<'a, D: ?Sized> Lent<'a, D> {
    /// The buffer back at once if `left` is this buffer's request (then its operation,
    /// the only user of the buffer, is over); otherwise `self`, untouched.
    #[inline]
    pub fn reclaim_left(self, left: Left) -> std::result::Result<&'a mut D, Self> {
        if left.0 != self.raw {
            return Err(self);
        }
        // SAFETY: `left` is this buffer's request, completed and out of the engine (`Left` is made only by `Gone::wait_all_each` for a request its wait took out of the engine), so its operation, the only user of the buffer (`new`'s contract), is over and the exclusive borrow for 'a is ours again.
        Ok(unsafe { &mut *self.ptr })
    }

    /// As [`reclaim`](Lent::reclaim), for a buffer lent to a request that a
    /// [`Gone::wait_all_each`] may have completed: if `gone` holds it (looking on from
    /// `*at`, callers asking in the order the requests were waited for), it comes back
    /// without a look at the engine; otherwise as `reclaim`.
    pub fn reclaim_gone(self, gone: &Gone, at: &mut usize) -> &'a mut D {
        if !gone.holds(at, self.raw) {
            return self.reclaim();
        }
        // SAFETY: the request is in `gone` (completed and out of the engine: `Gone` is made only by `wait_all_each` from the handles it consumed), so its operation, the only user of the buffer (`new`'s contract), is over and the exclusive borrow for 'a is ours again.
        unsafe { &mut *self.ptr }
    }
}
