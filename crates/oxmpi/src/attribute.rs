//! Attribute caching on communicators (`MPI_Comm_set_attr` & co.), as rsmpi 0.8's
//! `mpi::attribute`: any `'static + Clone` type that implements [`CommAttribute`] can be
//! attached to a communicator, one value per type, with
//! [`AnyCommunicator::set_attr`] and read back with [`AnyCommunicator::get_attr`].
//!
//! ```
//! use oxmpi::traits::*;
//!
//! #[derive(Clone, Debug, PartialEq)]
//! struct Tuning(u32);
//! impl CommAttribute for Tuning {
//!     const CLONE_ON_DUP: bool = true;
//! }
//!
//! let universe = oxmpi::initialize().unwrap();
//! let mut comm = universe.world().duplicate();
//! comm.set_attr(Tuning(8));
//! assert_eq!(comm.get_attr::<Tuning>(), Some(&Tuning(8)));
//! let copy = comm.duplicate();
//! assert_eq!(copy.get_attr::<Tuning>(), Some(&Tuning(8)));
//! ```
//!
//! A value is dropped when the last handle of its communicator goes, or when it is
//! replaced or deleted through the only handle of a communicator. A value replaced
//! while other handles exist (e.g. on the world communicator, of which every
//! [`Universe::world`](crate::Universe::world) call makes one) is leaked instead: a
//! reference that [`get_attr`](AnyCommunicator::get_attr) gave through another handle
//! may still point at it.

use std::any::TypeId;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use oxmpi_core::attr::{self, CopyFn, DeleteFn, ObjectKind};
use oxmpi_core::Comm;

use crate::error::{OrFatal, Result};
use crate::topology::Communicator;

/// The attribute traits, re-exported by [`crate::traits`].
pub mod traits {
    pub use super::{AnyCommunicator, CommAttribute};
}

thread_local! {
    /// Set while a delete callback may drop the value: the object is going away, or
    /// the only handle replaces it.
    static MAY_DROP: Cell<bool> = const { Cell::new(false) };
}

fn with_may_drop<T>(may: bool, f: impl FnOnce() -> T) -> T {
    let before = MAY_DROP.with(|m| m.replace(may));
    let out = f();
    MAY_DROP.with(|m| m.set(before));
    out
}

/// Whether `comm` is the only handle of a communicator created at run time.
fn only_handle(comm: &Comm) -> bool {
    Arc::strong_count(&comm.0) == 1 && comm.0.owns_context
}

/// Runs the attributes' delete callbacks when the last handle of `comm` goes.
pub(crate) fn free_if_last(comm: &Comm) {
    if only_handle(comm) {
        // Delete callbacks of Rust attributes cannot fail; a C one (through the C API)
        // can, but its communicator is not freed through here.
        let _ = with_may_drop(true, || oxmpi_core::comm::free_attributes(comm));
    }
}

/// A type that can be cached on communicators, one value per type and communicator.
///
/// `CLONE_ON_DUP` says whether [`duplicate`](Communicator::duplicate) clones the value
/// into the new communicator (default: no).
pub trait CommAttribute
where
    Self: 'static + Sized + Clone,
{
    /// Whether duplicating a communicator clones the attribute into the copy.
    const CLONE_ON_DUP: bool = false;

    /// The key of this attribute type (`MPI_Comm_create_keyval`, made on first use).
    fn get_key() -> AttributeKey {
        static KEYS: Mutex<Option<HashMap<TypeId, i32>>> = Mutex::new(None);
        let mut keys = KEYS.lock().unwrap_or_else(|p| p.into_inner());
        let k = *keys
            .get_or_insert_with(HashMap::new)
            .entry(TypeId::of::<Self>())
            .or_insert_with(|| {
                let copy: Option<CopyFn> = Self::CLONE_ON_DUP.then(|| {
                    Arc::new(|_key: i32, v: usize| {
                        // SAFETY: values of this keyval are always `Box<Self>` pointers made by `set_attr` or by this callback, alive while attached.
                        let value = unsafe { &*(v as *const Self) };
                        Ok(Some(Box::into_raw(Box::new(value.clone())) as usize))
                    }) as CopyFn
                });
                let delete: DeleteFn = Arc::new(|_key: i32, v: usize| {
                    if MAY_DROP.with(Cell::get) {
                        // SAFETY: as above; the engine forgets the value after this call.
                        drop(unsafe { Box::from_raw(v as *mut Self) });
                    }
                    Ok(())
                });
                attr::create_keyval(ObjectKind::Comm, copy, Some(delete))
            });
        AttributeKey(k)
    }
}

/// The keyval of an attribute type ([`CommAttribute::get_key`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeKey(i32);

impl AttributeKey {
    /// A key from a raw keyval (e.g. one made through the C API).
    ///
    /// # Safety
    /// The keyval's values must be pointers to `Box`ed values of the attribute type.
    pub unsafe fn new_unchecked(k: i32) -> Self {
        AttributeKey(k)
    }

    /// The raw keyval.
    pub fn as_raw(&self) -> i32 {
        self.0
    }
}

/// Attribute access on every communicator (also through `&dyn Communicator`).
pub trait AnyCommunicator: Communicator {
    /// The attribute of type `A`, if set (`MPI_Comm_get_attr`).
    fn get_attr<A: CommAttribute>(&self) -> Option<&A>;
    /// [`get_attr`](Self::get_attr), reporting errors.
    fn try_get_attr<A: CommAttribute>(&self) -> Result<Option<&A>>;
    /// Attaches `val`, replacing the attribute of the same type (`MPI_Comm_set_attr`).
    fn set_attr<A: CommAttribute>(&mut self, val: A);
    /// [`set_attr`](Self::set_attr), reporting errors.
    fn try_set_attr<A: CommAttribute>(&mut self, val: A) -> Result<()>;
    /// Removes the attribute of type `A`; whether there was one (`MPI_Comm_delete_attr`;
    /// oxmpi extension).
    fn delete_attr<A: CommAttribute>(&mut self) -> bool;
}

impl<C: ?Sized + Communicator> AnyCommunicator for C {
    fn get_attr<A: CommAttribute>(&self) -> Option<&A> {
        self.try_get_attr().or_fatal()
    }

    fn try_get_attr<A: CommAttribute>(&self) -> Result<Option<&A>> {
        let key = A::get_key().0;
        if attr::is_predefined(key) {
            return Ok(None);
        }
        let v = self.core_comm().attrs().get(key, "MPI_Comm_get_attr")?;
        // SAFETY: values of this keyval are `Box<A>` pointers (see `get_key`), alive while attached; one replaced through another handle is leaked, not freed.
        Ok(v.map(|v| unsafe { &*(v as *const A) }))
    }

    fn set_attr<A: CommAttribute>(&mut self, val: A) {
        self.try_set_attr(val).or_fatal()
    }

    fn try_set_attr<A: CommAttribute>(&mut self, val: A) -> Result<()> {
        let key = A::get_key().0;
        let comm = self.core_comm();
        let p = Box::into_raw(Box::new(val)) as usize;
        with_may_drop(only_handle(comm), || {
            comm.attrs().set(key, p, "MPI_Comm_set_attr")
        })
        .inspect_err(|_| {
            // SAFETY: not attached: still ours.
            drop(unsafe { Box::from_raw(p as *mut A) });
        })
    }

    fn delete_attr<A: CommAttribute>(&mut self) -> bool {
        let key = A::get_key().0;
        let comm = self.core_comm();
        if comm
            .attrs()
            .get(key, "MPI_Comm_delete_attr")
            .or_fatal()
            .is_none()
        {
            return false;
        }
        with_may_drop(only_handle(comm), || {
            comm.attrs().delete(key, "MPI_Comm_delete_attr")
        })
        .or_fatal();
        true
    }
}
