//! Memory lent to an operation that runs again and again over it (partitioned
//! communication: `MPI_Psend_init`/`MPI_Precv_init`, then rounds of `MPI_Start` ...
//! `MPI_Wait`): [`RunMem`], what the operation holds of the memory, and [`Runs`] /
//! [`RunsMut`], the owners of such an operation over a borrow of `'a` (the Rust API's).
//!
//! The proof a `RunMem` carries: it is made only from a `'static` descriptor (C memory
//! under MPI's rule: valid while the request exists, [`RunMem::of_send`],
//! [`RunMem::of_recv`]) or by a `Runs`/`RunsMut` from a borrow of `'a`, whose runs start
//! only under a keeper of `'a` (a [`BufScope`], which settles a run before `'a` ends even
//! if the owner is forgotten), whose drop waits for a run still going, and which hands
//! the buffer back ([`RunsMut::get`]) only while no run goes. So the memory is valid,
//! and for a receive ours alone, whenever a run goes; the operation reaches it only from
//! a run (the run's task: [`RunMem::span`] for the run's request, [`RunMem::packed`]
//! for a non-contiguous send, [`RunMem::unpack_dst`] for a non-contiguous receive).

use super::*;

use crate::request::Status;
use std::sync::Arc;

/// The memory of an operation that runs repeatedly over it: `count` elements of a
/// datatype (bytes for a descriptor without one) at an address, valid whenever a run
/// of the operation goes (see the module's proof).
#[derive(Debug)]
pub(crate) struct RunMem {
    addr: usize,
    count: usize,
    dt: Datatype,
    /// Made from an exclusive borrow: runs may write it.
    excl: bool,
}

impl RunMem {
    fn new(ptr: *const u8, count: usize, dt: Option<&Datatype>, excl: bool) -> RunMem {
        RunMem {
            addr: ptr as usize,
            count,
            dt: dt
                .unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte))
                .clone(),
            excl,
        }
    }

    /// Memory valid for reads for the whole process (the C boundary: MPI's rule that
    /// the buffer stays valid while the request exists, stated by `SendBuf::from_raw`).
    pub fn of_send(b: SendBuf<'static, '_>) -> RunMem {
        RunMem::new(b.ptr, b.count, b.dt, false)
    }

    /// Memory valid for writes, and ours, for the whole process (as [`of_send`](Self::of_send)).
    pub fn of_recv(b: RecvBuf<'static, '_>) -> RunMem {
        RunMem::new(b.ptr, b.count, b.dt, true)
    }

    /// Elements of the memory.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The elements' datatype (`MPI_BYTE` for raw bytes).
    pub fn datatype(&self) -> &Datatype {
        &self.dt
    }

    /// The bytes the first `n` elements cover, as the in-flight form a run's request
    /// takes (valid while the run goes), when the datatype is contiguous or they are no
    /// bytes; `None` otherwise or if `n` is more than the memory holds.
    pub(crate) fn span(&self, n: usize) -> Option<RawBuf> {
        if n > self.count {
            return None;
        }
        covered_span(self.addr as *const u8, n, Some(&self.dt))
    }

    /// As [`span`](Self::span), for a run that writes it: `None` for memory made from a
    /// shared borrow.
    pub(crate) fn span_mut(&self, n: usize) -> Option<RawBuf> {
        self.excl.then(|| self.span(n)).flatten()
    }

    /// The first `n` elements packed (a run's send of a non-contiguous datatype);
    /// `None` if `n` is more than the memory holds.
    pub(crate) fn packed(&self, n: usize) -> Option<Box<[u8]>> {
        if n > self.count {
            return None;
        }
        let mut out = vec![0u8; n.checked_mul(self.dt.size())?].into_boxed_slice();
        // SAFETY: the type's proof: the memory the `count` elements (`n` of them here) cover is readable whenever a run goes, and only a run's task packs it.
        unsafe { self.dt.pack(self.addr as *const u8, n, &mut out) };
        Some(out)
    }

    /// Where a run's receive unpacks `n` elements (the engine's `Unpack`, applied while
    /// the run goes); `None` for memory made from a shared borrow or if `n` is more than
    /// the memory holds.
    pub(crate) fn unpack_dst(&self, n: usize) -> Option<UnpackDst> {
        if !self.excl || n > self.count {
            return None;
        }
        // SAFETY: the type's proof: memory made from an exclusive borrow is writable, and only the run's receive writes it, whenever a run goes; the engine unpacks before that run's request completes.
        Some(unsafe { UnpackDst::new(self.dt.clone(), self.addr as *mut u8, n) })
    }
}

/// An operation a [`Runs`] starts runs of.
pub(crate) trait Rerun {
    /// Starts a run (`MPI_Start`): its request.
    fn run(self: &Arc<Self>) -> Result<Request>;
}

/// An operation over memory borrowed (shared) for `'a` whose runs start only under a
/// keeper of `'a` ([`start`](Runs::start)); dropping it waits for the run going.
#[derive(Debug)]
pub(crate) struct Runs<'a, P> {
    op: Arc<P>,
    active: Request,
    _buf: PhantomData<&'a [u8]>,
}

impl<'a, P: Rerun> Runs<'a, P> {
    /// The operation `init` makes over `buf`'s memory.
    pub fn new(
        buf: SendBuf<'a, '_>,
        init: impl FnOnce(RunMem) -> Result<Arc<P>>,
    ) -> Result<Runs<'a, P>> {
        let op = init(RunMem::new(buf.ptr, buf.count, buf.dt, false))?;
        Ok(Runs::over(op))
    }

    fn over(op: Arc<P>) -> Runs<'a, P> {
        Runs {
            op,
            active: Request::NULL,
            _buf: PhantomData,
        }
    }

    /// `MPI_Start`: a new run, held by `keeper`; MPI_ERR_REQUEST naming the
    /// partitioned `what` if one is going.
    pub fn start(&mut self, keeper: &impl BufScope<'a>, what: &str) -> Result<()> {
        if !self.active.is_null() {
            return Err(MpiError::arg(
                ErrorClass::Request,
                "MPI_Start",
                "request",
                format!("the partitioned {what} is already active"),
            ));
        }
        let r = self.op.run()?;
        keeper.enter(r);
        self.active = r;
        Ok(())
    }
}

impl<P> Runs<'_, P> {
    /// `MPI_Wait` for the run (an empty status if none is going).
    pub fn wait(&mut self) -> Result<Status> {
        if self.active.is_null() {
            return Ok(Status::NULL);
        }
        let r = crate::pt2pt::wait(&mut self.active);
        self.active = Request::NULL;
        r
    }

    /// The run's request (`Request::NULL` when none is going).
    pub fn active(&self) -> Request {
        self.active
    }

    /// Whether a run is going.
    pub fn is_active(&self) -> bool {
        !self.active.is_null()
    }

    /// The operation.
    pub fn op(&self) -> &P {
        &self.op
    }
}

impl<P> Drop for Runs<'_, P> {
    fn drop(&mut self) {
        if !self.active.is_null() {
            let _ = crate::pt2pt::wait(&mut self.active);
        }
    }
}

/// An operation over a buffer `D` borrowed exclusively for `'a`, whose runs start as
/// [`Runs`]' do; the buffer comes back ([`get`](Self::get), [`get_mut`](Self::get_mut))
/// while no run is going.
pub(crate) struct RunsMut<'a, P, D: ?Sized> {
    runs: Runs<'a, P>,
    ptr: *mut D,
    _buf: PhantomData<&'a mut D>,
}

// SAFETY: a `RunsMut` stands for the `&'a mut D` it was made from (as `Standing`), and an operation `P` it shares.
unsafe impl<P: Send + Sync, D: ?Sized + Send + Sync> Send for RunsMut<'_, P, D> {}
// SAFETY: `&RunsMut` reaches the buffer only as `&D` while no run is going (`get`).
unsafe impl<P: Send + Sync, D: ?Sized + Send + Sync> Sync for RunsMut<'_, P, D> {}

impl<P: std::fmt::Debug, D: ?Sized> std::fmt::Debug for RunsMut<'_, P, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunsMut").field("runs", &self.runs).finish()
    }
}

impl<'a, P: Rerun, D: ?Sized> RunsMut<'a, P, D> {
    /// The operation `init` makes over `buf`: `desc` describes `buf` (as an exclusive
    /// [`Region`] of the elements the operation writes, for a lifetime of its own, so
    /// the region is `buf`'s, and a count `init` gets with the memory); an error naming
    /// `call` if it describes none or a shared one.
    #[allow(clippy::type_complexity)]
    pub fn new(
        call: &str,
        buf: &'a mut D,
        desc: impl for<'x> FnOnce(
            &'x mut D,
            &mut dyn FnMut(Region<'x>, usize) -> Result<()>,
        ) -> Result<()>,
        init: impl FnOnce(RunMem, usize) -> Result<Arc<P>>,
    ) -> Result<RunsMut<'a, P, D>> {
        let ptr: *mut D = buf;
        let mut init = Some(init);
        let mut op = None;
        // SAFETY: `ptr` is `buf`, reborrowed for the call of `desc` only; afterwards only this value reaches it.
        desc(unsafe { &mut *ptr }, &mut |r: Region<'_>, count: usize| {
            if !r.is_exclusive() {
                return Err(MpiError::intern(call, "the buffer was described as shared"));
            }
            let init = init
                .take()
                .ok_or_else(|| MpiError::intern(call, "the buffer was described twice"))?;
            let mem = RunMem::new(r.ptr(), r.count(), Some(r.datatype()), true);
            op = Some(init(mem, count)?);
            Ok(())
        })?;
        let op = op.ok_or_else(|| MpiError::intern(call, "the buffer was not described"))?;
        Ok(RunsMut {
            runs: Runs::over(op),
            ptr,
            _buf: PhantomData,
        })
    }

    /// `MPI_Start`, as [`Runs::start`].
    pub fn start(&mut self, keeper: &impl BufScope<'a>, what: &str) -> Result<()> {
        self.runs.start(keeper, what)
    }
}

impl<P, D: ?Sized> RunsMut<'_, P, D> {
    /// `MPI_Wait` for the run (an empty status if none is going).
    pub fn wait(&mut self) -> Result<Status> {
        self.runs.wait()
    }

    /// The runs (their request, whether one goes, the operation).
    pub fn runs(&self) -> &Runs<'_, P> {
        &self.runs
    }

    /// The buffer, while no run is going.
    pub fn get(&self) -> Option<&D> {
        // SAFETY: no run is going, so the engine does not use the buffer, borrowed exclusively for 'a and reached only through this value.
        (!self.runs.is_active()).then(|| unsafe { &*self.ptr })
    }

    /// The buffer, writable, while no run is going.
    pub fn get_mut(&mut self) -> Option<&mut D> {
        // SAFETY: as `get`, for the exclusive borrow of `self`.
        (!self.runs.is_active()).then(|| unsafe { &mut *self.ptr })
    }
}
