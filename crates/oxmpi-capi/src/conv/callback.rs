//! The C handle a user callback gets. The engine runs attribute callbacks with
//! (keyval, value); the C callbacks also want the object's handle, which the C
//! layer puts in a thread-local around every engine call that may run callbacks.

use std::cell::Cell;

use oxmpi_core::attr::ObjectKind;

use crate::abi::*;
use crate::types::*;

thread_local! {
    /// The C handle of the communicator whose attributes callbacks run on.
    static CB_COMM: std::cell::Cell<MPI_Comm> = const { std::cell::Cell::new(MPI_COMM_NULL) };
    /// The C handle of the datatype whose attributes callbacks run on.
    static CB_TYPE: std::cell::Cell<MPI_Datatype> = const { std::cell::Cell::new(MPI_DATATYPE_NULL) };
    /// The window whose attribute callbacks run (set by `win.rs`).
    pub static CB_WIN: Cell<MPI_Win> = const { Cell::new(MPI_WIN_NULL) };
}

/// Runs `f` (an engine call that may run attribute callbacks) with `c` as the
/// handle the C callbacks get.
pub fn with_cb_comm<T>(c: MPI_Comm, f: impl FnOnce() -> T) -> T {
    let prev = CB_COMM.with(|x| x.replace(c));
    let r = f();
    CB_COMM.with(|x| x.set(prev));
    r
}

/// Runs `f` (an engine call that may run datatype attribute callbacks) with
/// `t` as the handle the C callbacks get.
pub fn with_cb_type<T>(t: MPI_Datatype, f: impl FnOnce() -> T) -> T {
    let prev = CB_TYPE.with(|x| x.replace(t));
    let r = f();
    CB_TYPE.with(|x| x.set(prev));
    r
}

/// The handle a C callback of a `kind` keyval gets.
pub fn cb_handle(kind: ObjectKind) -> usize {
    match kind {
        ObjectKind::Comm => CB_COMM.with(|x| x.get()),
        ObjectKind::Datatype => CB_TYPE.with(|x| x.get()),
        ObjectKind::Win => CB_WIN.with(|x| x.get()),
    }
}
