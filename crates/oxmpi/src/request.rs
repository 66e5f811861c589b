//! Requests for non-blocking operations.
//!
//! An immediate operation (`immediate_send`, `immediate_receive_into`, ...) returns a
//! [`Request`] that borrows the operation's buffer. A request must be completed with
//! [`wait`](Request::wait) or [`test`](Request::test), or handed to a
//! [`WaitGuard`] (waits when dropped) or [`CancelGuard`] (cancels, then waits, when
//! dropped). **Dropping an uncompleted request panics.**
//!
//! Every request is registered with a [`Scope`]. Buffers that live on the stack are used
//! inside [`scope`]: the buffers are declared outside the closure, so they outlive every
//! request of the scope. The scope owns the completion of its requests: one still in
//! flight when the scope ends (forgotten with `std::mem::forget`, leaked) is waited for
//! then, and if the scope ends by a panic the process aborts rather than let the engine
//! write to freed memory. `'static` buffers may use [`StaticScope`].
//!
//! ```
//! use oxmpi::traits::*;
//! use oxmpi::request::{scope, WaitGuard};
//!
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! let peer = world.process_at_rank((world.rank() + 1) % world.size());
//! let from = world.process_at_rank((world.rank() + world.size() - 1) % world.size());
//! let out = [world.rank(); 4];
//! let mut inp = [0i32; 4];
//! scope(|s| {
//!     let _send = WaitGuard::from(peer.immediate_send(s, &out));
//!     let recv = from.immediate_receive_into(s, &mut inp);
//!     let status = recv.wait();
//!     assert_eq!(status.source_rank(), from.rank());
//! });
//! ```

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

use std::sync::Arc;

use oxmpi_core::buf::{Gone, Handle, InFlight, Lent, Standing};
use oxmpi_core::Request as Raw;

use crate::datatype::{received_bytes, AsDatatype, Collection, PointerMut, RecvTarget};
use crate::environment::threading::{Multithreaded, ThreadSafety, Unthreaded};
use crate::error::{Error, OrFatal, Result};
use crate::point_to_point::Status;

/// A request for a non-blocking operation, registered with a [`Scope`] of lifetime `'a`.
/// `D` is the type of the buffer it borrows; `T` the thread safety of the communicator
/// it came from ([`Unthreaded`] or [`Multithreaded`]).
///
/// A request is `Send + Sync` (for buffers that are `Send + Sync`) when MPI runs at
/// `Threading::Multiple` and its type says so: the request of a [`Multithreaded`]
/// communicator in any scope, or any request of a [`ThreadedScope`]. Otherwise it
/// stays on its thread.
///
/// ```
/// use oxmpi::traits::*;
/// use oxmpi::request::scope;
/// let (universe, _) = oxmpi::initialize_with_threading(oxmpi::Threading::Multiple).unwrap();
/// let world = universe.world();
/// let (x, mut y) = (3u8, 0u8);
/// scope(|s| {
///     let recv = world.this_process().immediate_receive_into(s, &mut y);
///     let send = world.this_process().immediate_send(s, &x);
///     std::thread::scope(|t| {
///         t.spawn(move || recv.wait());
///     });
///     send.wait();
/// });
/// assert_eq!(y, 3);
/// ```
///
/// # Panics
/// Dropping a request that was not completed (`wait`, `wait_without_status`, `test`)
/// panics; wrap it in a [`WaitGuard`] or [`CancelGuard`] to complete it on drop instead.
#[must_use = "a request must be completed (wait/test) or guarded; dropping it panics"]
pub struct Request<'a, D: ?Sized, S: Scope<'a> = StaticScope, T: ThreadSafety = Unthreaded> {
    /// The engine's request, owned (not `Copy`): only this value completes it.
    raw: Handle<'a>,
    /// The buffer, `None` once handed back (then the request is complete or taken
    /// apart, and dropping it does nothing).
    data: Option<Data<'a, D>>,
    recv: Option<Recv<D>>,
    call: &'static str,
    /// Always `Some` while `data` is.
    scope: Option<S>,
    /// What the operation uses besides its buffers (a user operation), kept until it
    /// completes.
    pub(crate) keep: Option<Box<dyn Keep + 'a>>,
    phantom: PhantomData<(Cell<&'a ()>, &'a D, T)>,
}

/// The buffer of a request: shared borrows are simply kept; an exclusively borrowed
/// (receive) buffer is lent to the operation and comes back once the engine is done
/// with it ([`Lent`]).
pub(crate) enum Data<'a, D: ?Sized> {
    Shared(&'a D),
    Lent(Lent<'a, D>),
    /// A lent buffer given back (a collection's wait took them back together), not
    /// checked yet.
    Back(&'a mut D),
}

impl<'a, D: ?Sized> Data<'a, D> {
    /// The buffer back (for a lent one: once the engine is done with it).
    fn reclaim(self) -> &'a D {
        match self {
            Data::Shared(d) => d,
            Data::Lent(l) => l.reclaim(),
            Data::Back(d) => d,
        }
    }

    /// [`reclaim`](Self::reclaim), then, if the operation succeeded, the check of the
    /// elements it received into its buffer (`recv`, if it has one).
    fn reclaim_checked(
        self,
        st: Result<oxmpi_core::Status>,
        recv: Option<Recv<D>>,
        call: &str,
    ) -> Result<(&'a D, oxmpi_core::Status)> {
        let data = match self {
            Data::Shared(d) => return Ok((d, st?)),
            Data::Lent(l) => l.reclaim(),
            Data::Back(d) => d,
        };
        let st = st?;
        if let Some(r) = recv {
            r.check(data, &st, call)?;
        }
        Ok((data, st))
    }
}

/// The element check of what a receive wrote into its buffer `D` ([`RecvTarget`]),
/// with how to find the bytes it wrote in `D` once the buffer is back.
pub(crate) struct Recv<D: ?Sized> {
    target: RecvTarget,
    bytes: fn(&mut D) -> Option<&mut [u8]>,
}

impl<D: ?Sized> Clone for Recv<D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<D: ?Sized> Copy for Recv<D> {}

impl<D: ?Sized + PointerMut + Collection + AsDatatype> Recv<D> {
    /// The check of `target`, if it has anything to check (`bool`/`char` elements):
    /// the completion of other receives then looks at nothing.
    fn of(target: Option<RecvTarget>) -> Option<Recv<D>> {
        target.filter(RecvTarget::checks_values).map(|target| Recv {
            target,
            bytes: received_bytes::<D>,
        })
    }
}

impl<D: ?Sized> Recv<D> {
    /// Checks the elements a completed operation (status `st`) received into `d`.
    fn check(&self, d: &mut D, st: &oxmpi_core::Status, call: &str) -> Result<()> {
        if st.cancelled {
            return Ok(());
        }
        match (self.bytes)(d) {
            Some(bytes) => self.target.after(bytes, st.count_bytes, call),
            None => Ok(()),
        }
    }
}

/// The engine's [`BufScope`](oxmpi_core::buf::BufScope) while one immediate or
/// persistent operation over buffers borrowed for `'a` starts (see [`immediate_ref`],
/// [`immediate_mut`], [`persistent_mut`]): core's [`Lending`](oxmpi_core::buf::Lending),
/// which hands the request it saw entered to the API's [`Scope<'a>`] (through [`Held`]).
pub(crate) type Start<'a> = oxmpi_core::buf::Lending<'a, 'a>;

/// A [`Scope<'a>`] as the keeper core's [`lend`](oxmpi_core::buf::lend) hands the request
/// to: the scope holds it (`in_flight`), or, for `'static` buffers, needs not.
pub(crate) struct Held<'s, S>(&'s S);

// SAFETY: `Scope<'a>`'s contract: no request registered with (held by) the scope outlives 'a.
unsafe impl<'a, S: Scope<'a>> oxmpi_core::buf::BufScope<'a> for Held<'_, S> {
    fn enter(&self, r: Raw) {
        self.0.register();
        if let Some(held) = self.0.in_flight() {
            held.enter(r);
        }
    }
}

/// A [`Scope<'a>`]'s keeping, for operations that start runs later than they are made
/// (partitioned transfers): each run's request joins the scope's requests, as
/// [`Held`] enters an immediate one.
#[derive(Debug)]
pub(crate) struct Kept<'a> {
    held: Option<Arc<InFlight>>,
    _life: PhantomData<fn(&'a ()) -> &'a ()>,
}

impl<'a> Kept<'a> {
    pub(crate) fn of<S: Scope<'a>>(scope: &S) -> Kept<'a> {
        Kept {
            held: scope.in_flight().cloned(),
            _life: PhantomData,
        }
    }
}

// SAFETY: made only from a `Scope<'a>` (`of`), whose contract is that no request it holds (its `in_flight`, settled at its end; none for the scope of 'static buffers) outlives 'a.
unsafe impl<'a> oxmpi_core::buf::BufScope<'a> for Kept<'a> {
    fn enter(&self, r: Raw) {
        if let Some(held) = &self.held {
            held.enter(r);
        }
    }
}

/// Starts one immediate operation whose buffers are shared borrows for `'a` (`buf`, and
/// any `'a` buffers `f` captures): `f` starts it with the engine scope it is given, and
/// its request is held by `scope`. The request hands `buf` back at completion.
pub(crate) fn immediate_ref<'a, D: ?Sized, Sc: Scope<'a>, T: ThreadSafety>(
    buf: &'a D,
    call: &'static str,
    scope: Sc,
    f: impl for<'x> FnOnce(&'x oxmpi_core::buf::Lending<'x, 'a>) -> Result<Raw>,
) -> Result<Request<'a, D, Sc, T>> {
    let (raw, ()) = oxmpi_core::buf::start_kept(&Held(&scope), call, |w| Ok((f(w)?, ())))?;
    Ok(Request::new(raw, Data::Shared(buf), None, call, scope))
}

/// As [`immediate_ref`] for a send of `bytes`, contiguous bytes of `buf` borrowed for
/// `'a`: `start` (core's [`isend_bytes`](oxmpi_core::pt2pt::isend_bytes)) hands its
/// request to the scope's keeper itself, with no start closure to check (PROFILE.md,
/// rrate28). The request hands `buf` back at completion.
#[inline(always)]
pub(crate) fn immediate_bytes<'a, D: ?Sized, Sc: Scope<'a>, T: ThreadSafety>(
    buf: &'a D,
    bytes: &'a [u8],
    call: &'static str,
    scope: Sc,
    start: impl FnOnce(&Held<'_, Sc>, &'a [u8]) -> Result<Handle<'a>>,
) -> Result<Request<'a, D, Sc, T>> {
    let raw = start(&Held(&scope), bytes)?;
    Ok(Request::new(raw, Data::Shared(buf), None, call, scope))
}

/// As [`immediate_ref`] for an exclusively borrowed buffer, which core lends to the
/// operation (`f` gets it back to start the operation over), with the target (from
/// that buffer) to check on completion.
#[inline(always)]
pub(crate) fn immediate_mut<
    'a,
    D: ?Sized + PointerMut + Collection + AsDatatype,
    Sc: Scope<'a>,
    T: ThreadSafety,
>(
    buf: &'a mut D,
    call: &'static str,
    scope: Sc,
    f: impl for<'x> FnOnce(
        &'x oxmpi_core::buf::Lending<'x, 'a>,
        &'x mut D,
    ) -> Result<(Raw, Option<RecvTarget>)>,
) -> Result<Request<'a, D, Sc, T>> {
    let (lent, raw, recv) = oxmpi_core::buf::lend(buf, &Held(&scope), call, f)?;
    Ok(Request::new(
        raw,
        Data::Lent(lent),
        Recv::of(recv),
        call,
        scope,
    ))
}

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> fmt::Debug for Request<'a, D, S, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("raw", &self.raw)
            .field("call", &self.call)
            .finish()
    }
}

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> Drop for Request<'a, D, S, T> {
    fn drop(&mut self) {
        if self.data.is_none() {
            // Completed, or taken apart.
            return;
        }
        if !std::thread::panicking() {
            panic!("request was dropped without being completed");
        }
        // While unwinding: the scope sees the request in flight and aborts; what the
        // operation uses is leaked, as other requests' guards may still progress it.
        std::mem::forget(self.keep.take());
    }
}

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> Request<'a, D, S, T> {
    /// Wraps an engine request over `data` that `scope` already holds (core's
    /// `start_kept`/`lend` handed it over): the scope settles it (waits for it) at its
    /// end if nobody completed it.
    #[inline(always)]
    fn new(
        raw: Handle<'a>,
        data: Data<'a, D>,
        recv: Option<Recv<D>>,
        call: &'static str,
        scope: S,
    ) -> Self {
        Request {
            raw,
            data: Some(data),
            recv,
            call,
            scope: Some(scope),
            keep: None,
            phantom: PhantomData,
        }
    }

    /// Wraps a request of the engine (`oxmpi_core::pt2pt::isend`, ...) that uses `data`.
    ///
    /// # Safety
    /// `request` must be an active, non-persistent engine request, not used elsewhere
    /// afterwards, whose buffers are `data` (or outlive `'a`).
    pub unsafe fn from_raw(request: Raw, data: &'a D, scope: S) -> Self {
        oxmpi_core::buf::BufScope::enter(&Held(&scope), request);
        Self::new(
            Handle::adopt(request),
            Data::Shared(data),
            None,
            "MPI_Wait",
            scope,
        )
    }

    /// Takes the request apart and returns its parts (the engine's request as its
    /// [`Handle`], which, carrying `'a`, cannot be completed after the buffer's borrow
    /// ends).
    ///
    /// # Safety
    /// The returned engine request must be completed within `'a`, before the data is
    /// used.
    pub unsafe fn into_raw(self) -> (Handle<'a>, &'a D, S) {
        let (raw, data, _, _, scope, keep) = self.into_parts();
        // What the operation uses (a user operation) must outlive it: it is leaked.
        std::mem::forget(keep);
        let data = match data {
            Data::Shared(d) => d,
            // SAFETY: the caller takes over the obligation to complete the request.
            Data::Lent(l) => unsafe { l.reclaim_unchecked() },
            Data::Back(d) => d,
        };
        (raw, data, scope)
    }

    #[allow(clippy::type_complexity)]
    #[inline(always)]
    fn into_parts(
        mut self,
    ) -> (
        Handle<'a>,
        Data<'a, D>,
        Option<Recv<D>>,
        &'static str,
        S,
        Option<Box<dyn Keep + 'a>>,
    ) {
        let data = self.data.take().expect("a request is taken apart once");
        let scope = self.scope.take().expect("a request is taken apart once");
        let parts = (
            std::mem::replace(&mut self.raw, Handle::null()),
            data,
            self.recv.take(),
            self.call,
            scope,
            self.keep.take(),
        );
        // Everything it owned is taken (a null handle, `None`s): nothing is left to
        // drop, and skipping its `Drop` saves ~13 Ir per request (PROFILE.md, rate18b).
        std::mem::forget(self);
        parts
    }

    /// The engine's request, borrowed (for diagnostics): the [`Handle`] is not `Copy`
    /// and completing it needs `&mut`, so only this request completes it, and no copy
    /// of it outlives the request or the buffer it borrows.
    ///
    /// ```compile_fail,E0505
    /// use oxmpi::traits::*;
    /// use oxmpi::request::scope;
    /// let universe = oxmpi::initialize().unwrap();
    /// let world = universe.world();
    /// let mut kept = None;
    /// let mut y = 0u8;
    /// scope(|s| {
    ///     let recv = world.this_process().immediate_receive_into(s, &mut y);
    ///     kept = Some(recv.as_raw()); // error: `recv` is borrowed, then moved by `wait`
    ///     world.this_process().send(&1u8);
    ///     recv.wait();
    /// });
    /// drop(kept);
    /// ```
    ///
    /// Nor can the handle taken apart by [`into_raw`](Self::into_raw) be completed
    /// once the buffer it writes is gone:
    ///
    /// ```compile_fail,E0597
    /// use oxmpi::traits::*;
    /// use oxmpi::request::scope;
    /// let universe = oxmpi::initialize().unwrap();
    /// let world = universe.world();
    /// let mut h = {
    ///     let mut y = 0u8; // error: `y` does not live long enough
    ///     scope(|s| {
    ///         let recv = world.this_process().immediate_receive_into(s, &mut y);
    ///         // SAFETY: (the misuse the handle's lifetime rejects)
    ///         unsafe { recv.into_raw() }.0
    ///     })
    /// };
    /// world.this_process().send(&1u8);
    /// h.wait().unwrap();
    /// ```
    pub fn as_raw(&self) -> &Handle<'a> {
        &self.raw
    }

    /// Waits for the operation to finish (`MPI_Wait`). Errors are fatal.
    pub fn wait(self) -> Status {
        self.try_wait().or_fatal()
    }

    /// [`wait`](Self::wait), reporting errors. The request is complete either way.
    pub fn try_wait(self) -> Result<Status> {
        self.try_wait_for_data().map(|(s, _)| s)
    }

    /// Waits, without the status.
    pub fn wait_without_status(self) {
        self.wait();
    }

    /// Waits, and returns the buffer the operation used.
    pub fn wait_for_data(self) -> &'a D {
        self.try_wait_for_data().or_fatal().1
    }

    fn try_wait_for_data(self) -> Result<(Status, &'a D)> {
        let (mut raw, data, recv, call, _, _keep) = self.into_parts();
        let st = raw.wait();
        let (data, st) = data.reclaim_checked(st, recv, call)?;
        Ok((Status::from_core(st), data))
    }

    /// Tests whether the operation has finished (`MPI_Test`): its status if so,
    /// otherwise the request back.
    pub fn test(self) -> std::result::Result<Status, Self> {
        match self.try_test() {
            Ok(r) => r,
            Err(e) => crate::error::fatal(e),
        }
    }

    /// [`test`](Self::test), reporting errors (the request is then complete).
    pub fn try_test(self) -> Result<std::result::Result<Status, Self>> {
        Ok(self.try_test_with_data()?.map(|(s, _)| s))
    }

    /// Like [`test`](Self::test), also returning the buffer once complete.
    pub fn test_with_data(self) -> std::result::Result<(Status, &'a D), Self> {
        match self.try_test_with_data() {
            Ok(r) => r,
            Err(e) => crate::error::fatal(e),
        }
    }

    fn try_test_with_data(mut self) -> Result<std::result::Result<(Status, &'a D), Self>> {
        match self.raw.test() {
            Ok(None) => Ok(Err(self)),
            Ok(Some(st)) => {
                let (_, data, recv, call, _, _) = self.into_parts();
                let (data, st) = data.reclaim_checked(Ok(st), recv, call)?;
                Ok(Ok((Status::from_core(st), data)))
            }
            Err(e) => {
                let _ = self.into_parts().1.reclaim();
                Err(e)
            }
        }
    }

    /// Asks for the operation to be cancelled (`MPI_Cancel`). It must still be completed;
    /// its status then says whether it was [cancelled](Status::is_cancelled).
    pub fn cancel(&self) {
        self.try_cancel().or_fatal()
    }

    /// [`cancel`](Self::cancel), reporting errors.
    pub fn try_cancel(&self) -> Result<()> {
        self.raw.cancel()
    }

    /// Whether the operation has finished, without completing the request
    /// (`MPI_Request_get_status`).
    pub fn get_status(&self) -> Option<Status> {
        self.raw.get_status().or_fatal().map(Status::from_core)
    }

    /// Moves the request to a shorter scope.
    pub fn shrink_scope_to<'b, S2>(self, scope: S2) -> Request<'b, D, S2, T>
    where
        'a: 'b,
        S2: Scope<'b>,
    {
        let (raw, data, recv, call, _, keep) = self.into_parts();
        let raw = raw.keep_in(&Held(&scope));
        let mut r = Request::new(raw, data, recv, call, scope);
        r.keep = keep;
        r
    }
}

/// Waits for one of `requests` to finish (`MPI_Waitany`), removes it from the vector and
/// returns its index (before removal) and status; `None` if the vector is empty.
pub fn wait_any<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety>(
    requests: &mut Vec<Request<'a, D, S, T>>,
) -> Option<(usize, Status)> {
    try_wait_any(requests).or_fatal()
}

/// [`wait_any`], reporting errors.
pub fn try_wait_any<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety>(
    requests: &mut Vec<Request<'a, D, S, T>>,
) -> Result<Option<(usize, Status)>> {
    // The handles lent to one call over all of them (nulls left in their place meanwhile).
    let mut raws: Vec<Handle<'a>> = requests
        .iter_mut()
        .map(|r| std::mem::replace(&mut r.raw, Handle::null()))
        .collect();
    let res = Handle::wait_any(&mut raws);
    let found = match &res {
        Ok(Some((i, _))) => Some(*i),
        Ok(None) => None,
        // Which one failed is unknown to us: find the request the engine consumed.
        Err(_) => raws.iter().position(|r| r.is_null()),
    };
    for (r, h) in requests.iter_mut().zip(raws) {
        r.raw = h;
    }
    let Some(i) = found else {
        return res.map(|_| None);
    };
    let (_, data, recv, call, _, _) = requests.remove(i).into_parts();
    let (_, st) = data.reclaim_checked(res.map(|x| x.expect("found").1), recv, call)?;
    Ok(Some((i, Status::from_core(st))))
}

/// Completes a request when dropped, by waiting for it. Convert with `From`/`Into`.
///
/// ```
/// use oxmpi::traits::*;
/// use oxmpi::request::{scope, WaitGuard};
/// let universe = oxmpi::initialize().unwrap();
/// let world = universe.world();
/// let x = 7u64;
/// scope(|s| {
///     let _g = WaitGuard::from(world.this_process().immediate_send(s, &x));
///     let (y, _) = world.this_process().receive::<u64>();
///     assert_eq!(y, 7);
/// }); // the send completes here, at the latest
/// ```
#[derive(Debug)]
pub struct WaitGuard<'a, D: ?Sized, S: Scope<'a> = StaticScope, T: ThreadSafety = Unthreaded>(
    Option<Request<'a, D, S, T>>,
);

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> Drop for WaitGuard<'a, D, S, T> {
    fn drop(&mut self) {
        if let Some(r) = self.0.take() {
            r.wait();
        }
    }
}

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> From<Request<'a, D, S, T>>
    for WaitGuard<'a, D, S, T>
{
    fn from(req: Request<'a, D, S, T>) -> Self {
        WaitGuard(Some(req))
    }
}

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> From<WaitGuard<'a, D, S, T>>
    for Request<'a, D, S, T>
{
    fn from(mut guard: WaitGuard<'a, D, S, T>) -> Self {
        guard.0.take().expect("invalid WaitGuard")
    }
}

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> WaitGuard<'a, D, S, T> {
    fn cancel(&self) {
        if let Some(r) = &self.0 {
            // A request that already finished cannot be cancelled; that is fine here.
            let _ = r.try_cancel();
        }
    }
}

/// Completes a request when dropped, by cancelling it and then waiting for it.
#[derive(Debug)]
pub struct CancelGuard<'a, D: ?Sized, S: Scope<'a> = StaticScope, T: ThreadSafety = Unthreaded>(
    WaitGuard<'a, D, S, T>,
);

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> Drop for CancelGuard<'a, D, S, T> {
    fn drop(&mut self) {
        self.0.cancel();
        // The inner WaitGuard then waits.
    }
}

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> From<Request<'a, D, S, T>>
    for CancelGuard<'a, D, S, T>
{
    fn from(req: Request<'a, D, S, T>) -> Self {
        CancelGuard(WaitGuard::from(req))
    }
}

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> From<WaitGuard<'a, D, S, T>>
    for CancelGuard<'a, D, S, T>
{
    fn from(g: WaitGuard<'a, D, S, T>) -> Self {
        CancelGuard(g)
    }
}

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> From<CancelGuard<'a, D, S, T>>
    for WaitGuard<'a, D, S, T>
{
    fn from(mut g: CancelGuard<'a, D, S, T>) -> Self {
        // Leave an empty WaitGuard behind so that dropping `g` does nothing.
        WaitGuard(g.0 .0.take())
    }
}

/// What a request is registered with; it bounds the lifetime `'a` of the buffers.
///
/// # Safety
/// Implementations must make sure no request registered with them outlives `'a`.
/// Only [`StaticScope`], `&LocalScope` and `&ThreadedScope` implement it.
pub unsafe trait Scope<'a> {
    /// Registers a request (rsmpi's vocabulary; the scopes here hold the requests
    /// themselves, see `in_flight`, and count nothing).
    fn register(&self);
    /// Unregisters a request.
    ///
    /// # Safety
    /// Only for a request that was registered and is now complete (or taken over).
    unsafe fn unregister(&self);
    /// The requests the scope completes at its end, whatever their owner did
    /// (`None`: the scope of `'static` buffers needs none).
    #[doc(hidden)]
    fn in_flight(&self) -> Option<&Arc<InFlight>> {
        None
    }
}

/// The scope of the whole program, for requests on `'static` buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StaticScope;

// SAFETY: 'static buffers outlive any request.
unsafe impl Scope<'static> for StaticScope {
    fn register(&self) {}
    unsafe fn unregister(&self) {}
}

/// A scope that lasts no longer than `'a`, created by [`scope`].
///
/// The scope owns the completion of its requests: when it ends, it waits for every
/// one still in flight, whatever became of its [`Request`] value (forgotten with
/// `std::mem::forget`, leaked, a [`PersistentRequest`] or partitioned transfer
/// forgotten while running), so the buffers, borrowed for as long as the scope
/// lasts, are never reused while the engine still uses them.
///
/// # Aborts
/// If the scope ends by a panic with requests in flight, the process aborts (waiting
/// could hang the unwinding; not waiting would free memory the engine still uses).
#[derive(Debug)]
pub struct LocalScope<'a> {
    /// Shared: the requests of a [`Multithreaded`] communicator may complete on other
    /// threads, and a partitioned operation adds the requests of its later starts.
    held: Arc<InFlight>,
    phantom: PhantomData<Cell<&'a ()>>,
}

impl Drop for LocalScope<'_> {
    fn drop(&mut self) {
        self.held.settle();
    }
}

impl LocalScope<'_> {
    fn new() -> Self {
        Self::with_capacity(0)
    }

    /// A scope with room for `n` requests before its list grows.
    fn with_capacity(n: usize) -> Self {
        LocalScope {
            held: Arc::new(InFlight::with_capacity(n)),
            phantom: PhantomData,
        }
    }
}

// SAFETY: a `&'b LocalScope<'a>` only exists inside `scope`, and the LocalScope waits for
// every request it holds when it ends (aborting when ended by a panic), so none outlives 'a.
unsafe impl<'a> Scope<'a> for &LocalScope<'a> {
    // The scope holds the requests themselves (`in_flight`): no count to keep.
    fn register(&self) {}
    unsafe fn unregister(&self) {}
    fn in_flight(&self) -> Option<&Arc<InFlight>> {
        Some(&self.held)
    }
}

/// A scope whose requests may move to and be completed on other threads (`Send + Sync`
/// for buffers that are `Sync`): made only by
/// [`Universe::threaded_scope`](crate::Universe::threaded_scope), for a universe at
/// `Threading::Multiple`. Requests of a [`LocalScope`] stay on their thread.
///
/// As a [`LocalScope`], it waits at its end for every request still in flight.
///
/// # Aborts
/// If the scope ends by a panic with requests in flight, the process aborts.
#[derive(Debug)]
pub struct ThreadedScope<'a> {
    held: Arc<InFlight>,
    /// Invariant in 'a, like LocalScope's, but Send + Sync.
    phantom: PhantomData<fn(&'a ()) -> &'a ()>,
}

impl Drop for ThreadedScope<'_> {
    fn drop(&mut self) {
        // As LocalScope: the buffers are about to be freed.
        self.held.settle();
    }
}

// SAFETY: as LocalScope: a `&ThreadedScope<'a>` only exists inside `threaded_scope`, which
// waits for the requests it holds when it ends; its list is shared, as requests may
// complete on other threads.
unsafe impl<'a> Scope<'a> for &ThreadedScope<'a> {
    // The scope holds the requests themselves (`in_flight`): no count to keep.
    fn register(&self) {}
    unsafe fn unregister(&self) {}
    fn in_flight(&self) -> Option<&Arc<InFlight>> {
        Some(&self.held)
    }
}

/// Runs `f` with a [`ThreadedScope`] (see [`Universe::threaded_scope`](crate::Universe::threaded_scope)).
pub(crate) fn threaded_scope<'a, F, R>(f: F) -> R
where
    F: FnOnce(&ThreadedScope<'a>) -> R,
{
    f(&ThreadedScope {
        held: Arc::new(InFlight::new()),
        phantom: PhantomData,
    })
}

mod sealed {
    /// The scopes whose requests of thread safety `T` may cross threads.
    pub trait CrossThreads<T> {}
}
use sealed::CrossThreads;

// A threaded scope exists only under a universe at MPI_THREAD_MULTIPLE: its requests
// cross threads whatever their communicator's type.
impl<T> CrossThreads<T> for &ThreadedScope<'_> {}
// The request of a Multithreaded communicator (which only a universe at
// MPI_THREAD_MULTIPLE makes): the scope's count is atomic.
impl CrossThreads<Multithreaded> for &LocalScope<'_> {}
impl CrossThreads<Multithreaded> for StaticScope {}

// SAFETY: `S: CrossThreads<T>` holds only when MPI runs at MPI_THREAD_MULTIPLE (a
// ThreadedScope, or a Multithreaded communicator, each made only by a universe that
// checked the level provided), so any thread may complete the request; the scopes'
// request counts are atomic (StaticScope has none). The request stands for the
// exclusive borrow of its buffer, which the completing thread uses (checks received
// bytes, then hands out `&'a D`): hence `D: Send + Sync`. The raw pointers in the
// request are that buffer's, valid for 'a wherever it is used.
unsafe impl<'a, D, S, T> Send for Request<'a, D, S, T>
where
    D: ?Sized + Send + Sync,
    S: Scope<'a> + CrossThreads<T>,
    T: ThreadSafety,
{
}
// SAFETY: as above; `&Request` only reads the engine handle and the call name (cancel,
// get_status), which the engine serialises.
unsafe impl<'a, D, S, T> Sync for Request<'a, D, S, T>
where
    D: ?Sized + Send + Sync,
    S: Scope<'a> + CrossThreads<T>,
    T: ThreadSafety,
{
}

/// Runs `f` with a [`LocalScope`] for requests on buffers declared outside the closure.
pub fn scope<'a, F, R>(f: F) -> R
where
    F: FnOnce(&LocalScope<'a>) -> R,
{
    f(&LocalScope::new())
}

/// Runs `f` with a scope and a [`RequestCollection`] with room for `reserve` requests.
///
/// ```
/// use oxmpi::traits::*;
/// use oxmpi::request::multiple_scope;
/// let universe = oxmpi::initialize().unwrap();
/// let world = universe.world();
/// let me = world.this_process();
/// let out = [1i32, 2, 3];
/// let mut inp = [0i32; 3];
/// multiple_scope(4, |s, coll| {
///     for (i, x) in inp.iter_mut().enumerate() {
///         coll.add(me.immediate_receive_into_with_tag(s, x, i as i32));
///     }
///     for (i, x) in out.iter().enumerate() {
///         me.send_with_tag(x, i as i32);
///     }
///     let mut result = Vec::new();
///     coll.wait_all(&mut result);
///     assert_eq!(result.len(), 3);
///     assert!(result.iter().all(|(i, st, x)| st.tag() == *i as i32 && **x == out[*i]));
/// });
/// assert_eq!(inp, out);
/// ```
pub fn multiple_scope<'a, F, R, D>(reserve: usize, f: F) -> R
where
    D: 'a + ?Sized,
    F: FnOnce(&LocalScope<'a>, &mut RequestCollection<'a, D>) -> R,
{
    let scope = LocalScope::with_capacity(reserve);
    let mut coll = RequestCollection::new(reserve);
    coll.held = Some(scope.held.clone());
    f(&scope, &mut coll)
}

/// The completion of a request of a [`RequestCollection`]: its index, status, buffer.
pub type Completion<'a, D> = (usize, Status, &'a D);

/// Several requests completed together (`MPI_Waitany`, `MPI_Waitall`, `MPI_Waitsome`,
/// `MPI_Test*`). Made by [`multiple_scope`].
///
/// Requests still incomplete when the collection is dropped are waited for then.
///
/// # Aborts
/// If the collection is dropped by a panic with requests incomplete, the process aborts.
pub struct RequestCollection<'a, D: ?Sized> {
    /// The engine's requests, one slice for the completion calls over arrays.
    raws: Vec<Handle<'a>>,
    /// The rest of each request, at the same index.
    slots: Vec<Slot<'a, D>>,
    /// The slots before this index are all complete (a `wait_all` took their buffers):
    /// the drop and `incomplete` look only at those after (PROFILE.md, rate18b).
    done: usize,
    /// The requests held by the collection's scope (`multiple_scope`'s; each request
    /// is held by its scope until settled): `wait_all` releases those it completed
    /// from it, so the scope's end does not look at them again (requests added from
    /// another scope stay held by theirs, and are settled as before).
    held: Option<Arc<InFlight>>,
    /// What the requests use besides their buffers, kept until the collection is dropped.
    keep: Vec<Box<dyn Keep + 'a>>,
    phantom: PhantomData<(Cell<&'a ()>, &'a D)>,
}

/// A request of a [`RequestCollection`] besides its engine handle.
struct Slot<'a, D: ?Sized> {
    /// The buffer, `None` once the request was completed.
    data: Option<Data<'a, D>>,
    recv: Option<Recv<D>>,
    call: &'static str,
}

impl<D: ?Sized> fmt::Debug for RequestCollection<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestCollection")
            .field("len", &self.raws.len())
            .field("incomplete", &self.incomplete())
            .finish()
    }
}

impl<D: ?Sized> Drop for RequestCollection<'_, D> {
    fn drop(&mut self) {
        if std::thread::panicking() && self.incomplete() != 0 {
            let n = self.incomplete();
            // Waiting could hang the unwinding, and what the requests use (`keep`)
            // is about to be freed.
            oxmpi_core::runtime::abort(
                1,
                &format!("RequestCollection dropped with {n} request(s) not completed"),
            );
        }
        // Complete what is left before what the requests use (`keep`) is freed; their
        // scope would wait for them too, but only after that.
        for slot in self.slots[self.done..].iter_mut() {
            if let Some(d) = slot.data.take() {
                d.reclaim();
            }
        }
    }
}

impl<'a, D: ?Sized> RequestCollection<'a, D> {
    fn new(reserve: usize) -> Self {
        RequestCollection {
            raws: Vec::with_capacity(reserve),
            slots: Vec::with_capacity(reserve),
            done: 0,
            held: None,
            keep: Vec::new(),
            phantom: PhantomData,
        }
    }

    /// Number of requests added (complete or not).
    pub fn len(&self) -> usize {
        self.raws.len()
    }

    /// Whether no request was added.
    pub fn is_empty(&self) -> bool {
        self.raws.is_empty()
    }

    /// Number of requests not completed yet.
    pub fn incomplete(&self) -> usize {
        self.slots[self.done..]
            .iter()
            .filter(|s| s.data.is_some())
            .count()
    }

    /// Adds a request (taking it out of its scope); returns its index.
    // Forced inline, as the immediate calls' layers (`immediate_bytes`, `immediate_mut`,
    // `Request::new`, `into_parts`, core's `lend`/`start_kept`): otherwise the 104-byte
    // request is built in one frame and copied out through each layer's `Result` and
    // into the collection's vectors (PROFILE.md, rrate30: -153 Ir per send, -130 per
    // receive, the receiver's posting 52-60 -> 42-44 ns per message).
    #[inline(always)]
    pub fn add<S: Scope<'a>, T: ThreadSafety>(&mut self, req: Request<'a, D, S, T>) -> usize {
        let (raw, data, recv, call, _, keep) = req.into_parts();
        if let Some(k) = keep {
            self.keep.push(k);
        }
        self.raws.push(raw);
        self.slots.push(Slot {
            data: Some(data),
            recv,
            call,
        });
        self.raws.len() - 1
    }

    /// Records the completion of request `i`.
    fn complete(
        &mut self,
        i: usize,
        st: Result<oxmpi_core::Status>,
    ) -> Result<Option<Completion<'a, D>>> {
        let slot = &mut self.slots[i];
        let Some(data) = slot.data.take() else {
            return Ok(None);
        };
        let (data, st) = data.reclaim_checked(st, slot.recv, slot.call)?;
        Ok(Some((i, Status::from_core(st), data)))
    }

    /// Waits for any request to finish (`MPI_Waitany`); `None` if all are complete.
    pub fn wait_any(&mut self) -> Option<Completion<'a, D>> {
        self.try_wait_any().or_fatal()
    }

    /// [`wait_any`](Self::wait_any), reporting errors.
    pub fn try_wait_any(&mut self) -> Result<Option<Completion<'a, D>>> {
        let before: Vec<bool> = self.raws.iter().map(|r| r.is_null()).collect();
        match Handle::wait_any(&mut self.raws) {
            Ok(None) => Ok(None),
            Ok(Some((i, st))) => self.complete(i, Ok(st)),
            Err(e) => {
                self.sweep(&before);
                Err(e)
            }
        }
    }

    /// Marks requests the engine consumed (now null) as complete, after an error.
    fn sweep(&mut self, before: &[bool]) {
        for ((raw, was_null), slot) in self.raws.iter().zip(before).zip(self.slots.iter_mut()) {
            if raw.is_null() && !was_null {
                if let Some(d) = slot.data.take() {
                    d.reclaim();
                }
            }
        }
    }

    /// Waits for at least one request to finish (`MPI_Waitsome`): `result` is cleared,
    /// then gets the completions (none if every request was already complete), as in
    /// rsmpi.
    pub fn wait_some(&mut self, result: &mut Vec<Completion<'a, D>>) {
        self.try_wait_some(result).or_fatal()
    }

    /// [`wait_some`](Self::wait_some), reporting errors.
    pub fn try_wait_some(&mut self, result: &mut Vec<Completion<'a, D>>) -> Result<()> {
        result.clear();
        let got = Handle::wait_some(&mut self.raws)?;
        self.fill(got.unwrap_or_default(), result)
    }

    fn fill(
        &mut self,
        got: Vec<(usize, Result<oxmpi_core::Status>)>,
        result: &mut Vec<Completion<'a, D>>,
    ) -> Result<()> {
        let mut first_err: Option<Error> = None;
        result.reserve(got.len());
        for (i, st) in got {
            match self.complete(i, st) {
                Ok(Some(c)) => result.push(c),
                Ok(None) => {}
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Waits for every request (`MPI_Waitall`): `result` is cleared, then gets the
    /// completion of every request not completed earlier, in index order.
    pub fn wait_all(&mut self, result: &mut Vec<Completion<'a, D>>) {
        self.try_wait_all(result).or_fatal()
    }

    /// [`wait_all`](Self::wait_all), reporting errors (every request is complete after it).
    pub fn try_wait_all(&mut self, result: &mut Vec<Completion<'a, D>>) -> Result<()> {
        result.clear();
        result.reserve(self.raws.len() - self.done);
        let (slots, n) = (&mut self.slots, self.raws.len());
        // The completions not handed out from the wait (their buffer lent, elements to
        // check, an error), in index order; all after the first of them wait here too,
        // so `result` stays in index order.
        let mut rest: Vec<(usize, oxmpi_core::Status)> = Vec::new();
        let (res, gone) = Gone::wait_all_each(&mut self.raws, |i, st, left| {
            let slot = &mut slots[i];
            if rest.is_empty() && st.error == 0 && slot.recv.is_none() {
                // The common case, a success with no elements to check: handed out as
                // each request completes, with no status array (PROFILE.md, rate27).
                match (slot.data.take(), left) {
                    // Not lent (a send): `reclaim` is a move, no look at the engine.
                    (Some(d @ (Data::Shared(_) | Data::Back(_))), _) => {
                        return result.push((i, Status::from_core(st), d.reclaim()));
                    }
                    // A receive's buffer, back as its request leaves the engine, with
                    // no second pass (PROFILE.md, rrate31).
                    (Some(Data::Lent(l)), Some(left)) => match l.reclaim_left(left) {
                        Ok(d) => return result.push((i, Status::from_core(st), d)),
                        Err(l) => slot.data = Some(Data::Lent(l)),
                    },
                    (d, _) => slot.data = d,
                }
            }
            if rest.capacity() == 0 {
                // Once, for all that follow (a window of receives: no regrowth).
                rest.reserve_exact(n - i);
            }
            rest.push((i, st));
        });
        let failed = res.is_err();
        let mut first_err = res.err();
        if let Some(held) = &self.held {
            held.release(&gone);
        }
        // Where the next lent buffer's request is looked for in `gone`.
        let mut at = 0;
        for (i, st) in rest {
            let slot = &mut self.slots[i];
            let data = match slot.data.take() {
                None => continue,
                // Completed by the wait (in `gone`): back without a look at the engine.
                Some(Data::Lent(l)) => Data::Back(l.reclaim_gone(&gone, &mut at)),
                Some(d) => d,
            };
            if st.error == 0 && slot.recv.is_none() {
                // A receive of a type with no invalid values (PROFILE.md, rate18).
                result.push((i, Status::from_core(st), data.reclaim()));
                continue;
            }
            slot.data = Some(data);
            let st = if st.error != 0 {
                let class =
                    crate::ErrorClass::from_code(st.error).unwrap_or(crate::ErrorClass::Other);
                Err(Error::new(
                    class,
                    format!("{}: request {i} failed", self.slots[i].call),
                ))
            } else {
                Ok(st)
            };
            match self.complete(i, st) {
                Ok(Some(c)) => result.push(c),
                Ok(None) => {}
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if failed {
            // Requests the wait handed no status (if it failed as a whole): their
            // buffers back once the engine is done with them.
            for slot in self.slots[self.done..].iter_mut() {
                if let Some(d) = slot.data.take() {
                    d.reclaim();
                }
            }
        }
        // Every slot's buffer was taken above (handed out, or dropped with its error).
        self.done = self.slots.len();
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Completes one finished request if there is one (`MPI_Testany`).
    pub fn test_any(&mut self) -> Option<Completion<'a, D>> {
        self.try_test_any().or_fatal()
    }

    /// [`test_any`](Self::test_any), reporting errors.
    pub fn try_test_any(&mut self) -> Result<Option<Completion<'a, D>>> {
        let before: Vec<bool> = self.raws.iter().map(|r| r.is_null()).collect();
        match Handle::test_any(&mut self.raws) {
            Ok(Some(Some((i, st)))) => self.complete(i, Ok(st)),
            Ok(_) => Ok(None),
            Err(e) => {
                self.sweep(&before);
                Err(e)
            }
        }
    }

    /// Completes every finished request (`MPI_Testsome`), as [`wait_some`](Self::wait_some)
    /// but without waiting: `result` is left empty when none has finished.
    pub fn test_some(&mut self, result: &mut Vec<Completion<'a, D>>) {
        self.try_test_some(result).or_fatal()
    }

    /// [`test_some`](Self::test_some), reporting errors.
    pub fn try_test_some(&mut self, result: &mut Vec<Completion<'a, D>>) -> Result<()> {
        result.clear();
        let got = Handle::test_some(&mut self.raws)?;
        self.fill(got.unwrap_or_default(), result)
    }

    /// If every request has finished, completes them as [`wait_all`](Self::wait_all)
    /// and returns `true` (`MPI_Testall`); otherwise clears `result` and returns `false`.
    pub fn test_all(&mut self, result: &mut Vec<Completion<'a, D>>) -> bool {
        self.try_test_all(result).or_fatal()
    }

    /// [`test_all`](Self::test_all), reporting errors.
    pub fn try_test_all(&mut self, result: &mut Vec<Completion<'a, D>>) -> Result<bool> {
        result.clear();
        for r in &self.raws {
            if !r.is_null() && r.get_status()?.is_none() {
                return Ok(false);
            }
        }
        self.try_wait_all(result)?;
        Ok(true)
    }
}

/// A persistent collective's request (`MPI_<Op>_init`), registered with a [`Scope`] of
/// lifetime `'a` and borrowing its buffers for `'a`: [`start`](Self::start) runs the
/// operation, [`wait`](Self::wait) or [`test`](Self::test) completes that run, as many
/// times as wanted. Between runs, [`data`](Self::data) and [`data_mut`](Self::data_mut)
/// reach the buffer the runs write.
/// Dropping the request waits for a run still going, then frees it (`MPI_Request_free`).
///
/// ```
/// use oxmpi::traits::*;
/// use oxmpi::collective::SystemOperation;
/// use oxmpi::request::scope;
/// let universe = oxmpi::initialize().unwrap();
/// let world = universe.world();
/// let x = [world.rank() + 1];
/// let mut sum = [0];
/// scope(|s| {
///     let mut r = world.all_reduce_init(s, &x, &mut sum, SystemOperation::sum());
///     for _ in 0..3 {
///         r.start();
///         r.wait();
///         let n = world.size();
///         assert_eq!(r.data().unwrap()[0], n * (n + 1) / 2);
///     }
/// });
/// ```
pub struct PersistentRequest<
    'a,
    D: ?Sized,
    S: Scope<'a> = StaticScope,
    T: ThreadSafety = Unthreaded,
> {
    /// The request and the buffer its runs use, lent to it (core's `Standing`).
    runs: Standing<'a, D>,
    recv: Option<Recv<D>>,
    call: &'static str,
    /// The scope holds the request (`persistent_mut`); kept so that the request cannot
    /// leave the scope's closure.
    _scope: S,
    /// What the runs use besides the buffers (a user operation), kept until the request
    /// is freed (fields drop after `Drop::drop`).
    pub(crate) keep: Option<Box<dyn Keep + 'a>>,
    phantom: PhantomData<(Cell<&'a ()>, &'a D, T)>,
}

/// Anything, kept alive by a [`Request`] or [`PersistentRequest`].
pub(crate) trait Keep {}
impl<K: ?Sized> Keep for K {}

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> fmt::Debug for PersistentRequest<'a, D, S, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PersistentRequest")
            .field("runs", &self.runs)
            .field("call", &self.call)
            .finish()
    }
}

/// Makes a persistent collective over `buf` (exclusively borrowed for 'a), as
/// [`immediate_mut`] makes an immediate one: `f` initializes it with the engine scope it
/// is given over buffers borrowed for 'a, and returns the target to check after a run.
pub(crate) fn persistent_mut<
    'a,
    D: ?Sized + PointerMut + Collection + AsDatatype,
    Sc: Scope<'a>,
    T: ThreadSafety,
>(
    buf: &'a mut D,
    call: &'static str,
    scope: Sc,
    f: impl for<'x> FnOnce(
        &'x oxmpi_core::buf::Lending<'x, 'a>,
        &'x mut D,
    ) -> Result<(Raw, Option<RecvTarget>)>,
) -> Result<PersistentRequest<'a, D, Sc, T>> {
    let (runs, recv) = oxmpi_core::buf::lend_persistent(buf, &Held(&scope), call, f)?;
    Ok(PersistentRequest {
        runs,
        recv: Recv::of(recv),
        call,
        _scope: scope,
        keep: None,
        phantom: PhantomData,
    })
}

/// As [`persistent_mut`], for an operation that receives nothing into `buf` (a
/// barrier's placeholder): no target to check.
pub(crate) fn persistent_unchecked<'a, D: ?Sized, Sc: Scope<'a>, T: ThreadSafety>(
    buf: &'a mut D,
    call: &'static str,
    scope: Sc,
    f: impl for<'x> FnOnce(&'x oxmpi_core::buf::Lending<'x, 'a>, &'x mut D) -> Result<Raw>,
) -> Result<PersistentRequest<'a, D, Sc, T>> {
    let (runs, ()) =
        oxmpi_core::buf::lend_persistent(buf, &Held(&scope), call, |w, d| Ok((f(w, d)?, ())))?;
    Ok(PersistentRequest {
        runs,
        recv: None,
        call,
        _scope: scope,
        keep: None,
        phantom: PhantomData,
    })
}

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> PersistentRequest<'a, D, S, T> {
    /// Starts a run (`MPI_Start`). Errors are fatal.
    pub fn start(&mut self) {
        self.try_start().or_fatal()
    }

    /// [`start`](Self::start), reporting errors (a run still going is an
    /// MPI_ERR_REQUEST error).
    pub fn try_start(&mut self) -> Result<()> {
        self.runs.start(self.call)
    }

    /// Whether a run is going (started, not yet completed).
    pub fn is_active(&self) -> bool {
        self.runs.is_active()
    }

    /// Waits for the run to finish (`MPI_Wait`); an empty status if none is going.
    /// Errors are fatal.
    pub fn wait(&mut self) -> Status {
        self.try_wait().or_fatal()
    }

    /// [`wait`](Self::wait), reporting errors. The run is complete either way.
    pub fn try_wait(&mut self) -> Result<Status> {
        let (was, st) = self.runs.wait();
        let st = st?;
        if was {
            self.check_run(&st)?;
        }
        Ok(Status::from_core(st))
    }

    /// Tests whether the run finished (`MPI_Test`): its status if so. Errors are fatal.
    pub fn test(&mut self) -> Option<Status> {
        self.try_test().or_fatal()
    }

    /// [`test`](Self::test), reporting errors.
    pub fn try_test(&mut self) -> Result<Option<Status>> {
        let was = self.runs.is_active();
        match self.runs.test()? {
            None => Ok(None),
            Some(st) => {
                if was {
                    self.check_run(&st)?;
                }
                Ok(Some(Status::from_core(st)))
            }
        }
    }

    /// The check of the elements a run received, once it is complete (the buffer is
    /// then back).
    fn check_run(&mut self, st: &oxmpi_core::Status) -> Result<()> {
        match (self.recv, self.runs.get_mut()) {
            (Some(r), Some(d)) => r.check(d, st, self.call),
            _ => Ok(()),
        }
    }

    /// The buffer the runs write, while no run is going.
    pub fn data(&self) -> Option<&D> {
        self.runs.get()
    }

    /// The buffer the runs write, writable while no run is going (e.g. the root of a
    /// persistent broadcast puts the next value there).
    pub fn data_mut(&mut self) -> Option<&mut D> {
        self.runs.get_mut()
    }
}

impl<'a, D: ?Sized, S: Scope<'a>, T: ThreadSafety> Drop for PersistentRequest<'a, D, S, T> {
    fn drop(&mut self) {
        if self.runs.is_active() {
            if std::thread::panicking() {
                // The scope sees the request still registered and aborts.
                return;
            }
            let _ = self.try_wait();
        }
        let _ = self.runs.free();
    }
}
