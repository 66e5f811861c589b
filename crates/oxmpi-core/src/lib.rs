//! oxmpi-core: the engine of oxmpi. MPI semantics (point-to-point, matching,
//! communicators, requests) above a device whose transports are chosen per peer.

pub mod error;
pub mod transport;

pub use error::{ErrorClass, MpiError, Result};
