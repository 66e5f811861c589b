//! Attribute caching on communicators (`MPI_Comm_set_attr` & co.), as rsmpi 0.8's
//! `mpi::attribute`: any `'static + Clone + Send + Sync` type that implements [`CommAttribute`] can be
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

#![deny(unsafe_code)]

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use oxmpi_core::attr::{self, ObjectKind};
use oxmpi_core::Comm;

use crate::error::{OrFatal, Result};
use crate::topology::Communicator;

/// The attribute traits, re-exported by [`crate::traits`].
pub mod traits {
    pub use super::{AnyCommunicator, CommAttribute};
}

/// Whether `comm` is the only handle of a communicator created at run time.
fn only_handle(comm: &Comm) -> bool {
    Arc::strong_count(&comm.0) == 1 && comm.0.owns_context
}

/// Runs the attributes' delete callbacks when the last handle of `comm` goes (the
/// values of Rust attributes are freed with the communicator, by core).
pub(crate) fn free_if_last(comm: &Comm) {
    if only_handle(comm) {
        // Rust attributes have no delete callback (core keeps their values); a C one
        // (through the C API) can fail, but its communicator is not freed through here.
        let _ = oxmpi_core::comm::free_attributes(comm);
    }
}

/// Frees the values replaced or deleted through `comm` if it is the only handle of
/// its communicator (the exclusive borrow then proves no reference to them is left).
fn purge_if_only(comm: &mut Comm) {
    if let Some(inner) = Arc::get_mut(&mut comm.0) {
        inner.attrs.purge();
    }
}

/// A type that can be cached on communicators, one value per type and communicator.
///
/// `CLONE_ON_DUP` says whether [`duplicate`](Communicator::duplicate) clones the value
/// into the new communicator (default: no).
///
/// Values are `Send + Sync`: a communicator's attributes are reached from every thread
/// that uses it (`MPI_THREAD_MULTIPLE`). A type that is not, such as `Rc`, is refused:
///
/// ```compile_fail,E0277
/// use oxmpi::traits::*;
/// #[derive(Clone)]
/// struct Local(std::rc::Rc<u32>);
/// impl CommAttribute for Local {} // error: `Rc<u32>` cannot be sent between threads
/// ```
pub trait CommAttribute
where
    Self: 'static + Sized + Clone + Send + Sync,
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
                attr::create_typed_keyval::<Self>(ObjectKind::Comm, Self::CLONE_ON_DUP)
            });
        AttributeKey(k)
    }
}

/// The keyval of an attribute type ([`CommAttribute::get_key`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeKey(i32);

impl AttributeKey {
    /// A key from a raw keyval. Its values are read and written only if the keyval was
    /// made for the attribute type (by [`CommAttribute::get_key`]): any other is an
    /// `MPI_ERR_KEYVAL` error. (`unsafe` as rsmpi's; core checks the type, so nothing
    /// is left to prove.)
    ///
    /// # Safety
    /// None beyond the above.
    #[allow(unsafe_code)]
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
        Ok(self
            .core_comm()
            .attrs()
            .get_typed::<A>(key, "MPI_Comm_get_attr")?)
    }

    fn set_attr<A: CommAttribute>(&mut self, val: A) {
        self.try_set_attr(val).or_fatal()
    }

    fn try_set_attr<A: CommAttribute>(&mut self, val: A) -> Result<()> {
        let key = A::get_key().0;
        self.core_comm()
            .attrs()
            .set_typed(key, val, "MPI_Comm_set_attr")?;
        if let Some(comm) = self.core_comm_mut() {
            purge_if_only(comm);
        }
        Ok(())
    }

    fn delete_attr<A: CommAttribute>(&mut self) -> bool {
        let key = A::get_key().0;
        let comm = self.core_comm();
        if comm
            .attrs()
            .get_typed::<A>(key, "MPI_Comm_delete_attr")
            .or_fatal()
            .is_none()
        {
            return false;
        }
        comm.attrs().delete(key, "MPI_Comm_delete_attr").or_fatal();
        if let Some(comm) = self.core_comm_mut() {
            purge_if_only(comm);
        }
        true
    }
}
