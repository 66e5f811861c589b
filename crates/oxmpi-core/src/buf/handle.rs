//! [`Handle`]: an engine request that uses memory borrowed for `'a`, owned (not
//! `Copy`), so the borrow checker keeps every completion of it inside `'a`.

use super::*;
use crate::pt2pt;
use crate::Status;

/// The one owner of an engine [`Request`] whose operation uses memory borrowed for
/// `'a` (what [`start_kept`] and [`lend`] hand back). Unlike [`Request`], it is neither
/// `Copy` nor `Clone` and carries `'a`: a completion (wait, test) needs `&mut` of it,
/// and no copy of it outlives the request value holding it or the memory it uses.
///
/// ```
/// use oxmpi_core::buf::Handle;
/// let mut h: Handle<'static> = Handle::null();
/// assert!(h.is_null());
/// // Completing a null handle is immediate, with the empty status.
/// assert_eq!(h.wait().unwrap(), oxmpi_core::Status::NULL);
/// ```
#[repr(transparent)]
#[derive(Debug, PartialEq, Eq)]
pub struct Handle<'a> {
    raw: Request,
    _life: PhantomData<&'a ()>,
}

impl<'a> Handle<'a> {
    /// The null handle (`MPI_REQUEST_NULL`).
    pub fn null() -> Handle<'a> {
        Handle::adopt(Request::NULL)
    }

    /// Takes `raw` as a handle for `'a`. Whoever made `raw` vouches that its buffers
    /// live for `'a` (a request of [`start_kept`]/[`lend`], or one whose keeper settles
    /// it before `'a` ends).
    pub fn adopt(raw: Request) -> Handle<'a> {
        Handle {
            raw,
            _life: PhantomData,
        }
    }

    /// The engine's request, for core's keepers (`Lent`, `Standing`) only.
    pub(super) fn raw(&self) -> Request {
        self.raw
    }

    /// The handle for a shorter `'b`, its request also held by `keeper` from now on (a
    /// request moved to a shorter scope).
    pub fn keep_in<'b, K: BufScope<'b> + ?Sized>(self, keeper: &K) -> Handle<'b>
    where
        'a: 'b,
    {
        keeper.enter(self.raw);
        self
    }

    /// Whether the request is complete and gone (`MPI_REQUEST_NULL`).
    pub fn is_null(&self) -> bool {
        self.raw.is_null()
    }

    /// The handle's value, for display and comparison only (it names no request
    /// once this one completes).
    pub fn id(&self) -> u64 {
        self.raw.to_raw()
    }

    /// Waits for the operation (`MPI_Wait`); the handle is null afterwards.
    pub fn wait(&mut self) -> Result<Status> {
        pt2pt::wait(&mut self.raw)
    }

    /// Tests the operation (`MPI_Test`): `Ok(None)` while it goes on.
    pub fn test(&mut self) -> Result<Option<Status>> {
        pt2pt::test(&mut self.raw)
    }

    /// Asks for the operation to be cancelled (`MPI_Cancel`); it must still be completed.
    pub fn cancel(&self) -> Result<()> {
        pt2pt::cancel(&self.raw)
    }

    /// The status if the operation is over, without completing the request
    /// (`MPI_Request_get_status`).
    pub fn get_status(&self) -> Result<Option<Status>> {
        pt2pt::request_get_status(self.raw)
    }

    /// The engine's requests of `hs`, for the completion calls over arrays.
    pub(super) fn raws<'h>(hs: &'h mut [Handle<'a>]) -> &'h mut [Request] {
        let (p, n) = (hs.as_mut_ptr() as *mut Request, hs.len());
        // SAFETY: `Handle` is `repr(transparent)` over `Request` (its other field is zero-sized), so the slices have one layout; the exclusive borrow passes on.
        unsafe { std::slice::from_raw_parts_mut(p, n) }
    }

    /// `MPI_Waitany` over `hs`: the index and status of the one completed (now null);
    /// `None` if all are null.
    pub fn wait_any(hs: &mut [Handle<'a>]) -> Result<Option<(usize, Status)>> {
        pt2pt::waitany(Self::raws(hs))
    }

    /// `MPI_Testany` over `hs`: `Ok(None)` while none has finished, `Ok(Some(None))`
    /// if all are null.
    pub fn test_any(hs: &mut [Handle<'a>]) -> Result<Option<Option<(usize, Status)>>> {
        pt2pt::testany(Self::raws(hs))
    }

    /// `MPI_Waitsome` over `hs`: the completed ones (now null) with their outcome;
    /// `None` if all are null.
    #[allow(clippy::type_complexity)]
    pub fn wait_some(hs: &mut [Handle<'a>]) -> Result<Option<Vec<(usize, Result<Status>)>>> {
        pt2pt::waitsome(Self::raws(hs))
    }

    /// `MPI_Testsome` over `hs`, as [`wait_some`](Self::wait_some) without waiting.
    #[allow(clippy::type_complexity)]
    pub fn test_some(hs: &mut [Handle<'a>]) -> Result<Option<Vec<(usize, Result<Status>)>>> {
        pt2pt::testsome(Self::raws(hs))
    }

    /// `MPI_Waitall` over `hs` (all null afterwards), each status handed to `put` with
    /// its index as its request completes, in index order, under the engine's lock (`put`
    /// must not call MPI); null handles get none. The C layer's `MPI_Waitall` entry.
    pub fn wait_all_each(hs: &mut [Handle<'a>], put: impl FnMut(usize, Status)) -> Result<()> {
        pt2pt::waitall_each(Self::raws(hs), put)
    }

    /// `MPI_Waitall` over `hs` (all null afterwards), statuses into `statuses`.
    pub fn wait_all(hs: &mut [Handle<'a>], statuses: &mut [Status]) -> Result<()> {
        pt2pt::waitall(Self::raws(hs), statuses)
    }
}
