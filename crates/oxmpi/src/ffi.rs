//! The MPI C interface of the standard ABI, for code that drops to raw calls as rsmpi's
//! `mpi::ffi` allows.
//!
//! Always present: the C types (`MPI_Comm`, `MPI_Datatype`, `MPI_Status`,
//! `MPI_User_function`, ...) with the standard ABI's layout, so that code naming them
//! (for example an [`UnsafeUserOperation`](crate::collective::UnsafeUserOperation)'s
//! `extern "C"` function) builds with nothing but Rust.
//!
//! With the feature **`ffi`**, also the ABI's constants (`MPI_COMM_WORLD`,
//! `MPI_SUCCESS`, `MPI_INT`, ...) and every `MPI_*`/`PMPI_*` function. These are oxmpi's
//! own C interface (crate `oxmpi-capi`), written in Rust over the same engine as this
//! crate and linked into the program: no C compiler and no `libmpi.so` are needed, and
//! raw calls mix with the safe API (both see the same communicators and requests).
//!
//! ```
//! use oxmpi::ffi::{MPI_Datatype, MPI_Status};
//! assert_eq!(std::mem::size_of::<MPI_Datatype>(), std::mem::size_of::<*const u8>());
//! assert_eq!(std::mem::size_of::<MPI_Status>(), 32);
//! ```
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]

#[cfg(feature = "ffi")]
pub use capi::abi::*;
#[cfg(feature = "ffi")]
pub use capi::pmpi::*;
#[cfg(feature = "ffi")]
pub use capi::shims::*;
#[cfg(feature = "ffi")]
pub use capi::types::*;

#[cfg(not(feature = "ffi"))]
pub use self::types::*;

/// The C types (the same definitions as `oxmpi-capi`'s).
#[cfg(not(feature = "ffi"))]
mod types {
    use std::ffi::{c_int, c_void};
    /// A communicator handle (`struct MPI_ABI_Comm *`).
    pub type MPI_Comm = usize;
    /// A datatype handle (`struct MPI_ABI_Datatype *`).
    pub type MPI_Datatype = usize;
    /// An error handler handle.
    pub type MPI_Errhandler = usize;
    /// A group handle.
    pub type MPI_Group = usize;
    /// An info handle.
    pub type MPI_Info = usize;
    /// A matched-message handle.
    pub type MPI_Message = usize;
    /// A reduction operation handle.
    pub type MPI_Op = usize;
    /// A request handle.
    pub type MPI_Request = usize;
    /// A file handle.
    pub type MPI_File = usize;
    /// A window handle.
    pub type MPI_Win = usize;
    /// An address-sized integer.
    pub type MPI_Aint = isize;
    /// A large count.
    pub type MPI_Count = i64;

    /// `MPI_Status` of the standard ABI.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default)]
    pub struct MPI_Status {
        /// The source rank.
        pub MPI_SOURCE: c_int,
        /// The tag.
        pub MPI_TAG: c_int,
        /// The error code.
        pub MPI_ERROR: c_int,
        /// Implementation fields.
        pub MPI_internal: [c_int; 5],
    }

    /// A user reduction function (`MPI_Op_create`).
    pub type MPI_User_function =
        unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype);
    /// A user reduction function with large counts (`MPI_Op_create_c`).
    pub type MPI_User_function_c =
        unsafe extern "C" fn(*mut c_void, *mut c_void, *mut MPI_Count, *mut MPI_Datatype);
}

/// The ABI handle of an engine datatype, as a user function gets it: the predefined
/// type's constant for predefined types and their duplicates; for derived types, with
/// the feature `ffi`, a handle of the C interface (registered on first use), without it
/// `MPI_DATATYPE_NULL`, as there is no C interface to name them.
pub(crate) fn datatype_handle(dt: &oxmpi_core::datatype::Datatype) -> MPI_Datatype {
    if let Some(p) = dt.as_primitive().or_else(|| {
        dt.single_primitive()
            .filter(|p| p.size() == dt.size() && dt.extent() == dt.size() as isize)
    }) {
        return crate::abi::primitive_handle(p);
    }
    #[cfg(feature = "ffi")]
    return crate::raw::datatype_handle(dt);
    #[cfg(not(feature = "ffi"))]
    crate::abi::MPI_DATATYPE_NULL
}
