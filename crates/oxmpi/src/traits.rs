//! Every trait of the crate, for `use oxmpi::traits::*;`.
//!
//! ```
//! use oxmpi::traits::*;
//! let dt = i64::equivalent_datatype();
//! assert_eq!(dt.size(), 8);
//! ```
#![deny(unsafe_code)]

pub use crate::attribute::traits::*;
pub use crate::collective::traits::*;
pub use crate::datatype::traits::*;
pub use crate::point_to_point::traits::*;
#[cfg(feature = "ffi")]
pub use crate::raw::traits::*;
pub use crate::request::Scope;
pub use crate::topology::traits::*;

/// `#[derive(Equivalence)]`, next to the trait of the same name.
#[cfg(feature = "derive")]
pub use oxmpi_derive::Equivalence;
