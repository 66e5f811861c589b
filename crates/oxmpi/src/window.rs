//! One-sided communication: [`Window`]s of typed memory that other processes read and
//! write with [`put`](Access::put), [`get`](Access::get),
//! [`accumulate`](Access::accumulate), [`fetch_and_op`](Access::fetch_and_op) and
//! [`compare_and_swap`](Access::compare_and_swap) inside scoped epochs.
//!
//! An epoch is a closure: [`Window::fence`] (active target, collective) and
//! [`Window::lock`] / [`Window::lock_all`] (passive target) open it, hand the closure an
//! [`Access`], and close it when the closure returns, so an operation can never be
//! issued outside an epoch. Both take the window by `&mut`, so the window's own memory
//! ([`Window::local`]) cannot be borrowed while an epoch is open: local loads and stores
//! and remote accesses never overlap, as MPI requires.
//!
//! Post/start/complete/wait take groups: [`Window::post`] exposes this process's
//! window to a group of origins until they all completed, and [`Window::start`] (or
//! [`Exposure::start`] inside a post) accesses a group of targets. A
//! [`DynamicWindow`] has no memory of its own: processes attach slices of theirs and
//! hand out their [`Address`]es.
//!
//! rsmpi has no one-sided API; the vocabulary here follows MPI's names.
//!
//! ```
//! use oxmpi::traits::*;
//! use oxmpi::window::Window;
//!
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! let (rank, size) = (world.rank(), world.size());
//! let (left, right) = ((rank + size - 1) % size, (rank + 1) % size);
//! let mut win = Window::<i32>::allocate(&world, 1);
//! let group = world.group();
//! // expose to the left neighbour while writing into the right one's window
//! win.post(&group.include(&[left]), |exposure| {
//!     exposure.start(&group.include(&[right]), |a| a.put(right, 0, &[rank]));
//! });
//! assert_eq!(win.local()[0], left);
//! ```
//!
//! ```
//! use oxmpi::traits::*;
//! use oxmpi::window::{LockType, Window};
//! use oxmpi::collective::SystemOperation;
//!
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! let (rank, size) = (world.rank(), world.size());
//! let mut win = Window::<i64>::allocate(&world, 4);
//! win.local().fill(0);
//! let right = (rank + 1) % size;
//! // active target: a fence epoch on every rank
//! win.fence(|a| a.put(right, 0, &[rank as i64, 7]));
//! assert_eq!(win.local()[..2], [((rank + size - 1) % size) as i64, 7]);
//! // passive target: an atomic add on rank 0, then a read
//! win.lock(0, LockType::Shared, |a| a.accumulate(0, 2, &[1], SystemOperation::sum()));
//! world.barrier();
//! let total = win.lock(0, LockType::Shared, |a| a.fetch_and_op(0, 2, 0, SystemOperation::sum()));
//! assert_eq!(total, size as i64);
//! ```

#![deny(unsafe_code)]

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Arc;

use oxmpi_core::buf::AnyBytes;
use oxmpi_core::datatype::Datatype as CoreDatatype;
use oxmpi_core::op::{Op as CoreOp, PredefinedOp};
use oxmpi_core::rma::{self, Flavor, LockKind, TypedWindow, Window as CoreWindow};
use oxmpi_core::transport::winmem::{CallerMem, LocalMem};

use crate::collective::Operation;
use crate::datatype::{typed_in, typed_out, Datatype, Equivalence};
use crate::error::{Error, ErrorClass, OrFatal, Result};
use crate::topology::{Communicator, Group, Rank};

/// The kind of a passive-target lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockType {
    /// `MPI_LOCK_SHARED`: other shared locks may be held at the same time.
    Shared,
    /// `MPI_LOCK_EXCLUSIVE`: no other lock on the target meanwhile.
    Exclusive,
}

/// A window of `T`s: this process's part of memory that the processes of a
/// communicator access one-sidedly. Freed (collectively) when dropped: every process
/// of the communicator must drop its window, in the same order as it made them.
pub struct Window<'a, T: Equivalence + Copy> {
    /// The engine's window over this process's `T`s (allocated, or borrowed from the
    /// program for 'a by [`Window::create`]).
    core: TypedWindow<'a, T>,
}

fn dt<T: Equivalence>() -> CoreDatatype {
    T::equivalent_datatype().as_datatype_ref().as_core().clone()
}

/// Checks that window memory of `T`s may take any bytes other processes write: the
/// proof core's typed windows take.
fn check_type<T: Equivalence + Copy>(call: &str) -> Result<AnyBytes<T>> {
    crate::datatype::any_bytes::<T>(call)
}

impl<T: Equivalence + Copy> Window<'static, T> {
    /// `MPI_Win_allocate`: `len` elements of window memory on this process (zeroed),
    /// collective over `comm`.
    #[track_caller]
    pub fn allocate<C: Communicator>(comm: &C, len: usize) -> Window<'static, T> {
        Self::try_allocate(comm, len).or_fatal()
    }

    /// [`allocate`](Self::allocate), returning errors.
    pub fn try_allocate<C: Communicator>(comm: &C, len: usize) -> Result<Window<'static, T>> {
        Self::alloc(comm, len, Flavor::Allocate, "MPI_Win_allocate")
    }

    /// `MPI_Win_allocate_shared`: as [`allocate`](Self::allocate), in memory every
    /// process of `comm` (all on one host) can also load and store directly
    /// ([`shared`](Window::shared)).
    #[track_caller]
    pub fn allocate_shared<C: Communicator>(comm: &C, len: usize) -> Window<'static, T> {
        Self::try_allocate_shared(comm, len).or_fatal()
    }

    /// [`allocate_shared`](Self::allocate_shared), returning errors.
    pub fn try_allocate_shared<C: Communicator>(
        comm: &C,
        len: usize,
    ) -> Result<Window<'static, T>> {
        Self::alloc(comm, len, Flavor::Shared, "MPI_Win_allocate_shared")
    }

    fn alloc<C: Communicator>(
        comm: &C,
        len: usize,
        flavor: Flavor,
        call: &str,
    ) -> Result<Window<'static, T>> {
        let any = check_type::<T>(call)?;
        let core = TypedWindow::allocate(comm.core_comm(), flavor, len, any, call)?;
        Ok(Window { core })
    }
}

impl<'a, T: Equivalence + Copy> Window<'a, T> {
    /// `MPI_Win_create`: a window over `mem`, which stays borrowed until the window is
    /// dropped. Collective over `comm`.
    ///
    /// The window cannot outlive the memory it exposes:
    ///
    /// ```compile_fail,E0597
    /// use oxmpi::window::Window;
    /// let universe = oxmpi::initialize().unwrap();
    /// let world = universe.world();
    /// let win = {
    ///     let mut mem = [0i32; 4];
    ///     Window::create(&world, &mut mem) // error: `mem` does not live long enough
    /// };
    /// drop(win);
    /// ```
    ///
    /// nor can the memory be used directly while the window has it (only through
    /// [`local`](Self::local)):
    ///
    /// ```compile_fail,E0506
    /// use oxmpi::window::Window;
    /// let universe = oxmpi::initialize().unwrap();
    /// let world = universe.world();
    /// let mut mem = [0i32; 4];
    /// let mut win = Window::create(&world, &mut mem);
    /// mem[0] = 1; // error: `mem` is borrowed by the window
    /// win.local()[0] = 2;
    /// ```
    #[track_caller]
    pub fn create<C: Communicator>(comm: &C, mem: &'a mut [T]) -> Window<'a, T> {
        Self::try_create(comm, mem).or_fatal()
    }

    /// [`create`](Self::create), returning errors.
    pub fn try_create<C: Communicator>(comm: &C, mem: &'a mut [T]) -> Result<Window<'a, T>> {
        const CALL: &str = "MPI_Win_create";
        let any = check_type::<T>(CALL)?;
        let core = TypedWindow::create(comm.core_comm(), mem, any, CALL)?;
        Ok(Window { core })
    }

    fn win(&self) -> &CoreWindow {
        self.core.window()
    }

    /// Elements of window memory on this process.
    pub fn len(&self) -> usize {
        self.core.len()
    }

    /// Whether this process's part of the window is empty.
    pub fn is_empty(&self) -> bool {
        self.core.is_empty()
    }

    /// This process's window memory, while this process has no epoch open (the `&mut`
    /// borrow keeps them out). As MPI requires, the program keeps other processes'
    /// accesses out too: look between fences, or after the others unlocked.
    ///
    /// Local access inside an epoch does not compile:
    ///
    /// ```compile_fail,E0499
    /// use oxmpi::window::Window;
    /// let universe = oxmpi::initialize().unwrap();
    /// let world = universe.world();
    /// let mut win = Window::<i32>::allocate(&world, 4);
    /// win.fence(|a| {
    ///     a.put(0, 0, &[1]);
    ///     win.local()[0] = 2; // error: `win` is borrowed by the epoch
    /// });
    /// ```
    pub fn local(&mut self) -> &mut [T] {
        self.core.local()
    }

    /// Copies of the window memory of every process of a shared window (or of a window
    /// made by [`allocate`](Window::allocate) whose processes share a host), read
    /// directly from shared memory: `shared(r)` is process `r`'s part.
    pub fn shared(&mut self, rank: Rank) -> Result<Vec<T>> {
        Ok(self.core.shared(rank)?)
    }
}

/// The synchronization calls both kinds of window share: each opens an epoch, hands
/// the closure what it may do in it, and closes the epoch when the closure returns.
macro_rules! epochs {
    ($doc_disp:literal) => {
        /// An active-target epoch: `MPI_Win_fence`, `f`, `MPI_Win_fence`. Collective over
        /// the window's processes; the operations `f` issues are complete everywhere when it
        /// returns.
        #[doc = $doc_disp]
        #[track_caller]
        pub fn fence<R>(&mut self, f: impl FnOnce(&Access<'_, T>) -> R) -> R {
            self.try_fence(|a| Ok(f(a))).or_fatal()
        }

        /// [`fence`](Self::fence), for closures returning `Result` (errors of the
        /// synchronization are returned too).
        pub fn try_fence<R>(&mut self, f: impl FnOnce(&Access<'_, T>) -> Result<R>) -> Result<R> {
            self.win().fence(0)?;
            let r = f(&Access {
                win: self.win(),
                _t: PhantomData,
            });
            self.win().fence(rma::epoch::MODE_NOSUCCEED)?;
            r
        }

        /// A passive-target epoch on `rank`: `MPI_Win_lock`, `f`, `MPI_Win_unlock`. Only
        /// this process takes part; the target need not call MPI meanwhile.
        #[track_caller]
        pub fn lock<R>(
            &mut self,
            rank: Rank,
            kind: LockType,
            f: impl FnOnce(&Access<'_, T>) -> R,
        ) -> R {
            self.try_lock(rank, kind, |a| Ok(f(a))).or_fatal()
        }

        /// [`lock`](Self::lock), returning errors.
        pub fn try_lock<R>(
            &mut self,
            rank: Rank,
            kind: LockType,
            f: impl FnOnce(&Access<'_, T>) -> Result<R>,
        ) -> Result<R> {
            let k = match kind {
                LockType::Shared => LockKind::Shared,
                LockType::Exclusive => LockKind::Exclusive,
            };
            self.win().lock(k, rank, 0)?;
            let r = f(&Access {
                win: self.win(),
                _t: PhantomData,
            });
            self.win().unlock(rank)?;
            r
        }

        /// A shared lock on every process: `MPI_Win_lock_all`, `f`, `MPI_Win_unlock_all`.
        #[track_caller]
        pub fn lock_all<R>(&mut self, f: impl FnOnce(&Access<'_, T>) -> R) -> R {
            self.try_lock_all(|a| Ok(f(a))).or_fatal()
        }

        /// [`lock_all`](Self::lock_all), returning errors.
        pub fn try_lock_all<R>(
            &mut self,
            f: impl FnOnce(&Access<'_, T>) -> Result<R>,
        ) -> Result<R> {
            self.win().lock_all(0)?;
            let r = f(&Access {
                win: self.win(),
                _t: PhantomData,
            });
            self.win().unlock_all()?;
            r
        }

        /// An access epoch to the processes of `targets` (a group of the window's
        /// processes): `MPI_Win_start`, `f`, `MPI_Win_complete`. Waits until each target
        /// exposed its window to this process ([`post`](Self::post)); `f` may access
        /// those targets only. Nested inside [`post`](Self::post), use
        /// [`Exposure::start`].
        #[track_caller]
        pub fn start<R>(&mut self, targets: &impl Group, f: impl FnOnce(&Access<'_, T>) -> R) -> R {
            self.try_start(targets, |a| Ok(f(a))).or_fatal()
        }

        /// [`start`](Self::start), returning errors.
        pub fn try_start<R>(
            &mut self,
            targets: &impl Group,
            f: impl FnOnce(&Access<'_, T>) -> Result<R>,
        ) -> Result<R> {
            start_epoch(self.win(), targets, f)
        }

        /// An exposure epoch to the processes of `origins`: `MPI_Win_post`, `f`,
        /// `MPI_Win_wait`. The origins access this window between their
        /// [`start`](Self::start) and its end; `f` runs meanwhile and may open an access
        /// epoch of its own ([`Exposure::start`]) or poll ([`Exposure::test`]). When
        /// `post` returns, every origin completed its accesses.
        #[track_caller]
        pub fn post<R>(
            &mut self,
            origins: &impl Group,
            f: impl FnOnce(&Exposure<'_, T>) -> R,
        ) -> R {
            self.try_post(origins, |e| Ok(f(e))).or_fatal()
        }

        /// [`post`](Self::post), returning errors.
        pub fn try_post<R>(
            &mut self,
            origins: &impl Group,
            f: impl FnOnce(&Exposure<'_, T>) -> Result<R>,
        ) -> Result<R> {
            let ranks = self
                .win()
                .ranks_of("MPI_Win_post", origins.core_group().world_ranks())?;
            self.win().post(ranks, 0)?;
            let e = Exposure {
                win: self.win(),
                done: Cell::new(false),
                _t: PhantomData,
            };
            let r = f(&e);
            if !e.done.get() {
                self.win().wait(true)?;
            }
            r
        }
    };
}

fn start_epoch<T: Equivalence + Copy, R>(
    core: &CoreWindow,
    targets: &impl Group,
    f: impl FnOnce(&Access<'_, T>) -> Result<R>,
) -> Result<R> {
    let ranks = core.ranks_of("MPI_Win_start", targets.core_group().world_ranks())?;
    core.start(ranks, 0)?;
    let r = f(&Access {
        win: core,
        _t: PhantomData,
    });
    core.complete()?;
    r
}

impl<T: Equivalence + Copy> Window<'_, T> {
    epochs!("Displacements count elements of `T` from the start of the target's window memory.");
}

/// An open exposure epoch ([`Window::post`]): this process's window is exposed to
/// the origins of the post until the epoch ends.
pub struct Exposure<'w, T> {
    win: &'w CoreWindow,
    done: Cell<bool>,
    _t: PhantomData<fn(T) -> T>,
}

impl<T: Equivalence + Copy> Exposure<'_, T> {
    /// An access epoch inside the exposure (`MPI_Win_start`, `f`, `MPI_Win_complete`),
    /// as [`Window::start`]: the usual pattern where processes expose their windows to
    /// each other and access each other's at once.
    #[track_caller]
    pub fn start<R>(&self, targets: &impl Group, f: impl FnOnce(&Access<'_, T>) -> R) -> R {
        self.try_start(targets, |a| Ok(f(a))).or_fatal()
    }

    /// [`start`](Self::start), returning errors.
    pub fn try_start<R>(
        &self,
        targets: &impl Group,
        f: impl FnOnce(&Access<'_, T>) -> Result<R>,
    ) -> Result<R> {
        start_epoch(self.win, targets, f)
    }

    /// `MPI_Win_test`: whether every origin completed its access epoch (then the
    /// exposure epoch is over, and later calls answer `true` too).
    pub fn test(&self) -> Result<bool> {
        if self.done.get() {
            return Ok(true);
        }
        let d = self.win.wait(false)?;
        self.done.set(d);
        Ok(d)
    }
}

/// An address in a [`DynamicWindow`]: where memory attached on some process starts, to
/// hand to the processes that access it (as a `u64` through any message). The
/// displacement of element `i` there is [`at(i)`](Address::at).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Address<T> {
    addr: u64,
    _t: PhantomData<fn(T) -> T>,
}

impl<T> Address<T> {
    /// The address as a number, to send to other processes.
    pub fn to_raw(self) -> u64 {
        self.addr
    }

    /// An address received from another process. A wrong one cannot do harm: the
    /// target checks every access against the memory it attached
    /// (`MPI_ERR_RMA_RANGE`).
    pub fn from_raw(addr: u64) -> Address<T> {
        Address {
            addr,
            _t: PhantomData,
        }
    }

    /// The displacement of element `i` from this address, for [`Access`] calls on a
    /// dynamic window.
    pub fn at(self, i: usize) -> usize {
        (self.addr as usize).wrapping_add(i.wrapping_mul(std::mem::size_of::<T>()))
    }
}

/// A window without memory of its own (`MPI_Win_create_dynamic`): each process
/// attaches slices of its memory ([`attach`](Self::attach)) and detaches them
/// ([`detach`](Self::detach)) whenever it likes; the others reach them by their
/// [`Address`]. An attached slice stays borrowed by the window until detached (then
/// it is handed back) or until the window is dropped.
///
/// ```
/// use oxmpi::traits::*;
/// use oxmpi::window::{Address, DynamicWindow, LockType};
///
/// let universe = oxmpi::initialize().unwrap();
/// let world = universe.world();
/// let (rank, size) = (world.rank(), world.size());
/// let mut mine = vec![0u32; 4];
/// let mut win = DynamicWindow::<u32>::create(&world);
/// let addr = win.attach(&mut mine);
/// // everyone learns where rank 0's memory is
/// let mut raw = addr.to_raw();
/// world.process_at_rank(0).broadcast_into(&mut raw);
/// let at0 = Address::<u32>::from_raw(raw);
/// win.lock(0, LockType::Shared, |a| a.accumulate(0, at0.at(1), &[rank as u32 + 1], oxmpi::collective::SystemOperation::sum()));
/// world.barrier();
/// if rank == 0 {
///     let total: u32 = (1..=size as u32).sum();
///     assert_eq!(win.local(addr).unwrap()[1], total);
/// }
/// world.barrier();
/// let back = win.detach(addr).unwrap();
/// assert_eq!(back.len(), 4);
/// ```
pub struct DynamicWindow<'a, T: Equivalence + Copy> {
    core: Arc<CoreWindow>,
    /// Each attached slice and the copy of it the window exposes meanwhile (written
    /// back when detached or when the window is dropped; `None` for an empty slice,
    /// which is not attached): a window forgotten keeps its copies alive, never the
    /// slices, whose borrows end.
    attached: Vec<(&'a mut [T], Option<LocalMem<T>>)>,
    any: AnyBytes<T>,
}

impl<'a, T: Equivalence + Copy> DynamicWindow<'a, T> {
    /// `MPI_Win_create_dynamic`, collective over `comm`.
    #[track_caller]
    pub fn create<C: Communicator>(comm: &C) -> DynamicWindow<'a, T> {
        Self::try_create(comm).or_fatal()
    }

    /// [`create`](Self::create), returning errors.
    pub fn try_create<C: Communicator>(comm: &C) -> Result<DynamicWindow<'a, T>> {
        const CALL: &str = "MPI_Win_create_dynamic";
        let any = check_type::<T>(CALL)?;
        let core = CoreWindow::allocate(comm.core_comm(), Flavor::Dynamic, 0, 1, false, CALL)?;
        Ok(DynamicWindow {
            core,
            attached: Vec::new(),
            any,
        })
    }

    /// `MPI_Win_attach`: makes `mem` reachable by the window's processes (local, not
    /// collective) until [`detach`](Self::detach); its address for them.
    #[track_caller]
    pub fn attach(&mut self, mem: &'a mut [T]) -> Address<T> {
        self.try_attach(mem).or_fatal()
    }

    /// [`attach`](Self::attach), returning errors (`MPI_ERR_RMA_ATTACH` when the
    /// window has as many regions attached as it can hold).
    pub fn try_attach(&mut self, mem: &'a mut [T]) -> Result<Address<T>> {
        if std::mem::size_of_val(mem) == 0 {
            let base = mem.as_mut_ptr() as usize;
            self.attached.push((mem, None));
            return Ok(Address::from_raw(base as u64));
        }
        let (caller, local) = CallerMem::copy_of(mem, self.any);
        self.core.attach(caller)?;
        let base = local.addr();
        self.attached.push((mem, Some(local)));
        Ok(Address::from_raw(base as u64))
    }

    /// `MPI_Win_detach`: the slice attached at `addr` is no longer reachable and is
    /// handed back; `MPI_ERR_RMA_ATTACH` when nothing of this process starts there.
    pub fn detach(&mut self, addr: Address<T>) -> Result<&'a mut [T]> {
        let i = self.position(addr).ok_or_else(|| {
            Error::new(
                ErrorClass::RmaAttach,
                format!(
                    "MPI_Win_detach: {:#x} is not the address of a slice this process attached",
                    addr.addr
                ),
            )
        })?;
        if self.attached[i].1.is_some() {
            self.core.detach(addr.addr as usize)?;
        }
        let (mem, local) = self.attached.swap_remove(i);
        if let Some(mut local) = local {
            local.copy_to(mem);
        }
        Ok(mem)
    }

    fn position(&self, addr: Address<T>) -> Option<usize> {
        self.attached.iter().position(|(m, l)| match l {
            Some(l) => l.addr() == addr.addr as usize,
            None => m.as_ptr() as usize == addr.addr as usize,
        })
    }

    /// The slice this process attached at `addr`, while this process has no epoch
    /// open (as [`Window::local`]).
    pub fn local(&mut self, addr: Address<T>) -> Option<&mut [T]> {
        let i = self.position(addr)?;
        Some(match &mut self.attached[i] {
            (_, Some(local)) => local.as_mut(),
            (mem, None) => &mut **mem,
        })
    }

    fn win(&self) -> &CoreWindow {
        &self.core
    }

    epochs!("Displacements are addresses: [`Address::at`] of memory attached on the target.");
}

impl<T: Equivalence + Copy> Drop for DynamicWindow<'_, T> {
    fn drop(&mut self) {
        if let Err(e) = self.core.free() {
            crate::error::fatal(e);
        }
        // The slices still attached get what the window's processes wrote.
        for (mem, local) in &mut self.attached {
            if let Some(local) = local {
                local.copy_to(mem);
            }
        }
    }
}

impl<T: Equivalence + Copy> Drop for Window<'_, T> {
    fn drop(&mut self) {
        // (Core's window would free itself on drop too, aborting on an error; this
        // reports the error the way the API's other fatal errors are.)
        if let Err(e) = self.core.free() {
            crate::error::fatal(e);
        }
    }
}

/// The operations of an open epoch. Displacements count elements of `T` from the
/// start of the target's window memory. Each operation is complete at the target when
/// it returns (oxmpi completes one-sided operations eagerly).
pub struct Access<'w, T> {
    win: &'w CoreWindow,
    _t: PhantomData<fn(T) -> T>,
}

fn sys_op(call: &str, op: &impl Operation) -> Result<CoreOp> {
    let o = op.as_core_op();
    if o.as_predefined().is_none() {
        return Err(Error::new(
            ErrorClass::Op,
            format!("{call}: one-sided accumulates take predefined operations only"),
        ));
    }
    Ok(o)
}

impl<T: Equivalence + Copy> Access<'_, T> {
    /// `MPI_Put`: writes `data` at element `disp` of `rank`'s window.
    #[track_caller]
    pub fn put(&self, rank: Rank, disp: usize, data: &[T]) {
        self.try_put(rank, disp, data).or_fatal()
    }

    /// [`put`](Self::put), returning errors.
    pub fn try_put(&self, rank: Rank, disp: usize, data: &[T]) -> Result<()> {
        let d = dt::<T>();
        let t = typed_in(data);
        self.win
            .put_from("MPI_Put", t.desc(), rank, disp as isize, data.len(), &d)
    }

    /// `MPI_Get`: reads `out.len()` elements from element `disp` of `rank`'s window.
    #[track_caller]
    pub fn get(&self, rank: Rank, disp: usize, out: &mut [T]) {
        self.try_get(rank, disp, out).or_fatal()
    }

    /// [`get`](Self::get), returning errors.
    pub fn try_get(&self, rank: Rank, disp: usize, out: &mut [T]) -> Result<()> {
        let d = dt::<T>();
        let n = out.len();
        // Every byte pattern of T's datatype is a T (types with checked values are
        // refused at creation), so the bytes read need no check.
        let mut t = typed_out(out);
        self.win
            .get_into("MPI_Get", t.desc_mut(), rank, disp as isize, n, &d)
    }

    /// `MPI_Accumulate`: `target[disp + i] = data[i] op target[disp + i]`, atomically per element.
    #[track_caller]
    pub fn accumulate(&self, rank: Rank, disp: usize, data: &[T], op: impl Operation) {
        self.try_accumulate(rank, disp, data, op).or_fatal()
    }

    /// [`accumulate`](Self::accumulate), returning errors.
    pub fn try_accumulate(
        &self,
        rank: Rank,
        disp: usize,
        data: &[T],
        op: impl Operation,
    ) -> Result<()> {
        const CALL: &str = "MPI_Accumulate";
        let d = dt::<T>();
        let o = sys_op(CALL, &op)?;
        let t = typed_in(data);
        self.win.accumulate_from(
            CALL,
            t.desc(),
            None,
            rank,
            disp as isize,
            data.len(),
            &d,
            &o,
        )
    }

    /// `MPI_Fetch_and_op`: applies `op` with `value` to one element and returns the
    /// element's previous value, atomically.
    #[track_caller]
    pub fn fetch_and_op(&self, rank: Rank, disp: usize, value: T, op: impl Operation) -> T {
        self.try_fetch_and_op(rank, disp, value, op).or_fatal()
    }

    /// [`fetch_and_op`](Self::fetch_and_op), returning errors.
    pub fn try_fetch_and_op(
        &self,
        rank: Rank,
        disp: usize,
        value: T,
        op: impl Operation,
    ) -> Result<T> {
        const CALL: &str = "MPI_Fetch_and_op";
        let d = dt::<T>();
        let o = sys_op(CALL, &op)?;
        let mut out = [value];
        let v = [value];
        let vt = typed_in(&v[..]);
        let mut ot = typed_out(&mut out[..]);
        self.win.accumulate_from(
            CALL,
            vt.desc(),
            Some(ot.desc_mut()),
            rank,
            disp as isize,
            1,
            &d,
            &o,
        )?;
        drop(ot);
        Ok(out[0])
    }

    /// `MPI_Get_accumulate` with `MPI_NO_OP`: an atomic read of one element.
    pub fn try_atomic_read(&self, rank: Rank, disp: usize) -> Result<T>
    where
        T: Default,
    {
        self.try_fetch_and_op(rank, disp, T::default(), NoOp)
    }

    /// `MPI_Compare_and_swap`: if the element equals `compare`, replaces it with
    /// `value`; returns its previous value, atomically.
    #[track_caller]
    pub fn compare_and_swap(&self, rank: Rank, disp: usize, value: T, compare: T) -> T {
        self.try_compare_and_swap(rank, disp, value, compare)
            .or_fatal()
    }

    /// [`compare_and_swap`](Self::compare_and_swap), returning errors.
    pub fn try_compare_and_swap(&self, rank: Rank, disp: usize, value: T, compare: T) -> Result<T> {
        let (v, c) = ([value], [compare]);
        let mut out = [value];
        let (vt, ct) = (typed_in(&v[..]), typed_in(&c[..]));
        let mut ot = typed_out(&mut out[..]);
        self.win.compare_and_swap_with(
            "MPI_Compare_and_swap",
            vt.desc(),
            ct.desc(),
            ot.desc_mut(),
            rank,
            disp as isize,
        )?;
        drop(ot);
        Ok(out[0])
    }

    /// `MPI_Win_flush`: operations to `rank` are complete at the target.
    pub fn flush(&self, rank: Rank) -> Result<()> {
        self.win.flush("MPI_Win_flush", Some(rank))
    }
}

/// `MPI_NO_OP`, for atomic reads.
struct NoOp;

impl Operation for NoOp {
    fn as_core_op(&self) -> CoreOp {
        CoreOp::predefined(PredefinedOp::NoOp)
    }
}

/// `MPI_REPLACE`: the operation of an atomic write with [`Access::accumulate`].
pub struct Replace;

impl Operation for Replace {
    fn as_core_op(&self) -> CoreOp {
        CoreOp::predefined(PredefinedOp::Replace)
    }
}
