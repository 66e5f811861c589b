//! oxmpi-core: the engine of oxmpi. MPI semantics (point-to-point, matching,
//! communicators, requests) above a device whose transport is chosen per peer
//! (self loopback, shared memory), and the start-up through PMI.
//!
//! Layering, as in MPICH: [`pt2pt`] and [`comm`] give MPI semantics; `engine`
//! is the device (protocol, request table, progress); [`transport`] moves
//! packets. [`runtime`] boots the engine and owns the blocking-wait loop.

pub mod attr;
mod buf;
pub mod coll;
pub mod comm;
pub mod datatype;
pub mod diag;
mod engine;
pub mod error;
pub mod group;
mod hwtopo;
pub mod io;
pub mod matching;
pub mod op;
pub mod pt2pt;
pub mod request;
pub mod rma;
pub mod runtime;
pub mod tools;
pub mod topo;
pub mod transport;

pub use comm::Comm;
pub use error::{ErrorClass, MpiError, Result};
pub use matching::{ANY_SOURCE, ANY_TAG};
pub use pt2pt::{Message, SendMode};
pub use request::{Request, Status, PROC_NULL};
pub use runtime::{ThreadLevel, TAG_UB};
