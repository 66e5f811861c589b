//! The conversion layer: everything between a C argument and the engine's value.
//!
//! Below it: only `abi`/`types` (lib.rs) and `oxmpi-core`. Above it: the area
//! files (`p2p/`, `coll/`, `comm/`, ...), which import from here and never
//! the other way round. Inside, each file uses only the ones listed before it:
//! - [`handles`]: the handle tables and the C layer's state (`state()`);
//! - [`errors`]: the `ffi` wrapper every `PMPI_x` body runs in, error codes and
//!   their routing to error handlers, and OUT-pointer and array arguments;
//! - [`large`]: counts and displacements of either width (`int` / `MPI_Count`);
//! - [`session`]: the session table and which session owns a group or communicator;
//! - [`args`]: C strings in and out, request arrays, info arguments;
//! - [`buffer`]: every C buffer argument as one of core's descriptors (`Region`, bytes,
//!   a collective's `SendBuf`/`RecvBuf`), the one place that states the buffer contract;
//! - [`callback`]: the handle a user callback gets;
//! - [`status`]: `MPI_Status` to the engine's `Status` and back;
//! - [`lookup`]: handle -> engine object and engine object -> new handle.

pub mod args;
pub mod buffer;
pub mod callback;
pub mod errors;
pub mod handles;
pub mod large;
pub mod lookup;
pub mod session;
pub mod status;

pub use args::*;
pub use buffer::{c_bytes, c_bytes_mut, c_recv, c_send, check_buf};
pub use callback::*;
pub use lookup::*;
pub use session::{
    comm_session, common_session, forget_comm, forget_group, group_session, tag_comm, tag_group,
};
