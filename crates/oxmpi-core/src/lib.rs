//! oxmpi-core: the engine of oxmpi. MPI semantics (point-to-point, matching,
//! communicators, requests) above a device whose transport is chosen per peer
//! (self loopback, shared memory), and the start-up through PMI.
//!
//! Layering, as in MPICH: [`pt2pt`] and [`comm`] give MPI semantics; `engine`
//! is the device (protocol, request table, progress); [`transport`] moves
//! packets. [`runtime`] boots the engine and owns the blocking-wait loop.

pub mod attr;
pub mod buf;
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

/// `a == b` in a `const fn` (the C names of the engine's enums are looked up at compile
/// time, e.g. by the C library's generated map to the standard ABI's values).
pub const fn const_str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
