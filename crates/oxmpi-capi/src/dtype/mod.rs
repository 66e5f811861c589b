//! Datatypes: handles, constructors (with the MPI-1 names as extensions),
//! queries, subarray/darray, size matching. (Pack and unpack: `pack.rs`.)
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement: buffers holding their counts of their datatypes
//! (for immediate forms, until the request completes), arrays of the length the
//! standard gives, OUT arguments writable and aliasing no other argument.
//!
//! Files: `create` (constructors, dup, commit, free), `query`, `subarray` (subarray,
//! darray, match_size), `f90` (Fortran 90 and value-index types); this module holds
//! the helpers they share.

use std::ffi::{c_char, c_int, c_void};

use oxmpi_core::datatype::{Combiner, Datatype};
use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::conv::errors::{bad, ffi, NO_COMM, R};
use crate::conv::handles::state;
use crate::conv::large::{to_usize, Count, Displ};
use crate::conv::{datatype, get_str, new_handle, put_str, with_cb_type};
use crate::types::*;

mod create;
mod f90;
mod query;
mod subarray;

pub use create::*;
pub use f90::*;
pub use query::*;
pub use subarray::*;

pub(crate) fn count_arg<C: Count>(call: &str, arg: &str, n: C) -> R<usize> {
    to_usize(call, arg, n)
}

fn ints<C: Count>(v: &[C]) -> Vec<i64> {
    v.iter().map(|x| x.wide()).collect()
}

fn addrs<A: Displ>(v: &[A]) -> Vec<isize> {
    v.iter().map(|x| x.addr()).collect()
}

/// # Safety
/// `newtype` is NULL or valid to write one `MPI_Datatype`, unaliased (the C caller's argument).
/// `large`: made by a large-count (`_c`) constructor, whose contents
/// MPI_Type_get_contents_c reports as large counts.
fn made(large: bool, o: &mut MPI_Datatype, f: impl FnOnce() -> R<Datatype>) -> R<()> {
    // A failing constructor leaves the null handle (MPI-4.1; the generated `made(newtype)`
    // check has set it already).
    *o = MPI_DATATYPE_NULL;
    let dt = f()?;
    if large {
        dt.mark_large_count();
    }
    *o = state().datatypes.insert(dt);
    Ok(())
}
