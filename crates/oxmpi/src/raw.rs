//! Raw handles (feature `ffi`): the standard ABI's `MPI_Comm` and `MPI_Datatype` of this
//! crate's objects, and back, as rsmpi's `mpi::raw` offers them, so that code can mix
//! the safe API with raw calls of [`crate::ffi`].
//!
//! A communicator or derived datatype made by the safe API gets a handle in the C
//! interface's tables the first time it is asked for one (the same handle afterwards);
//! that entry keeps the object alive until `MPI_Comm_free` / `MPI_Type_free` of the
//! handle. Predefined objects have the ABI's constants.
//!
//! ```
//! use oxmpi::ffi::{MPI_Comm_size, MPI_COMM_WORLD, MPI_INT32_T};
//! use oxmpi::raw::{AsRaw, FromRaw};
//! use oxmpi::topology::SimpleCommunicator;
//! use oxmpi::traits::*;
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! assert_eq!(world.as_raw(), MPI_COMM_WORLD);
//! assert_eq!(i32::equivalent_datatype().as_raw(), MPI_INT32_T);
//! let dup = world.duplicate();
//! let mut n = 0;
//! // SAFETY: a valid handle and out-pointer.
//! unsafe { MPI_Comm_size(dup.as_raw(), &mut n) };
//! assert_eq!(n, world.size());
//! // SAFETY: the handle names a live communicator.
//! let again = unsafe { SimpleCommunicator::from_raw(dup.as_raw()) };
//! assert_eq!(again.size(), n);
//! ```

use oxmpi_core::datatype::Datatype as CoreDatatype;
use oxmpi_core::Comm;

use crate::datatype::{DatatypeRef, UserDatatype};
use crate::ffi::{
    MPI_Comm, MPI_Datatype, MPI_COMM_NULL, MPI_COMM_SELF, MPI_COMM_WORLD, MPI_DATATYPE_NULL,
};
use crate::topology::SimpleCommunicator;

/// The raw traits, re-exported by [`crate::traits`] with the feature `ffi`.
pub mod traits {
    pub use super::{AsRaw, FromRaw};
}

/// Something with a raw handle of the C interface.
///
/// # Safety
/// The handle must name this object for as long as the object lives.
pub unsafe trait AsRaw {
    /// The handle type.
    type Raw;
    /// The handle.
    fn as_raw(&self) -> Self::Raw;
}

/// Something that can be made from a raw handle.
pub trait FromRaw: AsRaw {
    /// The object a handle names.
    ///
    /// # Safety
    /// `handle` names a live object of the C interface of the right kind (an invalid
    /// one panics with a message naming it).
    unsafe fn from_raw(handle: <Self as AsRaw>::Raw) -> Self;
}

/// The handle of an engine communicator (registered on first use).
pub(crate) fn comm_handle(c: &Comm) -> MPI_Comm {
    if let Ok(e) = oxmpi_core::runtime::engine() {
        if c.same(e.world()) {
            return MPI_COMM_WORLD;
        }
        if c.same(e.self_comm()) {
            return MPI_COMM_SELF;
        }
    }
    let mut st = capi::conv::handles::state();
    if let Some((h, _)) = st.comms.iter().find(|(_, x)| x.same(c)) {
        return h;
    }
    st.comms.insert(c.clone())
}

/// The handle of an engine datatype (registered on first use, unless predefined).
pub(crate) fn datatype_handle(dt: &CoreDatatype) -> MPI_Datatype {
    if let Some(p) = dt.as_primitive() {
        return crate::abi::primitive_handle(p);
    }
    let mut st = capi::conv::handles::state();
    if let Some((h, _)) = st.datatypes.iter().find(|(_, x)| x.ptr_eq(dt)) {
        return h;
    }
    st.datatypes.insert(dt.clone())
}

// SAFETY: the handle names this communicator (the table entry keeps it).
unsafe impl<S> AsRaw for SimpleCommunicator<S> {
    type Raw = MPI_Comm;
    fn as_raw(&self) -> MPI_Comm {
        comm_handle(&self.0)
    }
}

impl FromRaw for SimpleCommunicator {
    unsafe fn from_raw(handle: MPI_Comm) -> SimpleCommunicator {
        let e = match oxmpi_core::runtime::engine() {
            Ok(e) => e,
            Err(err) => crate::error::fatal(err),
        };
        let c = match handle {
            MPI_COMM_WORLD => e.world().clone(),
            MPI_COMM_SELF => e.self_comm().clone(),
            MPI_COMM_NULL => panic!("SimpleCommunicator::from_raw: MPI_COMM_NULL"),
            h => capi::conv::handles::state()
                .comms
                .get(h)
                .cloned()
                .unwrap_or_else(|| {
                    panic!("SimpleCommunicator::from_raw: {h:#x} is not a live communicator handle")
                }),
        };
        SimpleCommunicator::from_core(c)
    }
}

// SAFETY: the handle names this datatype (predefined, or kept by the table entry).
unsafe impl AsRaw for DatatypeRef<'_> {
    type Raw = MPI_Datatype;
    fn as_raw(&self) -> MPI_Datatype {
        datatype_handle(self.as_core())
    }
}

// SAFETY: as above.
unsafe impl AsRaw for UserDatatype {
    type Raw = MPI_Datatype;
    fn as_raw(&self) -> MPI_Datatype {
        datatype_handle(self.as_core())
    }
}

impl FromRaw for DatatypeRef<'static> {
    unsafe fn from_raw(handle: MPI_Datatype) -> DatatypeRef<'static> {
        if handle == MPI_DATATYPE_NULL {
            panic!("DatatypeRef::from_raw: MPI_DATATYPE_NULL");
        }
        let dt = match crate::abi::primitive_from_handle(handle) {
            Some(p) => CoreDatatype::predefined(p),
            None => capi::conv::handles::state()
                .datatypes
                .get(handle)
                .cloned()
                .unwrap_or_else(|| {
                    panic!("DatatypeRef::from_raw: {handle:#x} is not a live datatype handle")
                }),
        };
        DatatypeRef::from_core(crate::datatype::intern(&dt))
    }
}
