//! The data-movement collectives over typed buffer descriptors: gather, scatter,
//! allgather, alltoall (each with its v form), reduce_scatter(_block) and the
//! neighbourhood allgather(v)/alltoall, blocking and immediate; safe functions.
//!
//! A descriptor covers a whole buffer: its count is the buffer's capacity in
//! elements of its datatype. The per-rank blocks the call names (`n * count` for the
//! uniform forms; `counts[i]` elements from displacement `displs[i]` for the v forms,
//! in elements of the descriptor's datatype) are checked to lie inside it before the
//! kernel builds its schedule: a block reaching outside is MPI_ERR_BUFFER, a count or
//! displacement array shorter than the group MPI_ERR_ARG. A buffer significant only
//! at the root (`None` elsewhere) must be given where this rank is the root (the
//! rank `root` of an intracommunicator; MPI_ROOT on an intercommunicator).
//! `send: None` is MPI_IN_PLACE, read as the kernels read it. An immediate call
//! lends its descriptors for `'static` to the request it returns (`lend(scope)`:
//! the scope keeps `'a` alive until the request completes); the kernels take
//! them so, and none of this module's functions holds `unsafe`.

use super::inter::ROOT;
use super::{allgather, alltoall, gather, neighbor, reduce_scatter, scatter};
use crate::buf::{BufScope, RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::{Datatype, Primitive};
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::Op;
use crate::request::Request;

mod all_to_all;
mod neighborhood;
mod reduce_scatter_blocks;
mod rooted;
pub use all_to_all::*;
pub(crate) use all_to_all::{allgather_check, alltoall_check};
pub use neighborhood::*;
pub use reduce_scatter_blocks::*;
pub use rooted::*;

pub(crate) fn dt(d: Option<&Datatype>) -> &Datatype {
    d.unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte))
}

/// Where a descriptor that is not significant here is missing: an address the raw
/// kernels receive but, on this rank, never reach.
pub(crate) fn nowhere() -> *mut u8 {
    std::ptr::NonNull::<u8>::dangling().as_ptr()
}

/// This rank holds the root's buffer of a rooted collective.
pub(crate) fn at_root(comm: &Comm, root: i32) -> bool {
    if comm.is_inter() {
        root == ROOT
    } else {
        comm.rank() == root
    }
}

/// `n` consecutive blocks of `count` elements fit in a descriptor of `cap` elements.
#[inline]
pub(crate) fn check_uniform(
    call: &str,
    arg: &str,
    cap: usize,
    count: usize,
    n: usize,
) -> Result<()> {
    if count.checked_mul(n).is_none_or(|k| k > cap) {
        return Err(not_uniform(call, arg, cap, count, n));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn not_uniform(call: &str, arg: &str, cap: usize, count: usize, n: usize) -> MpiError {
    MpiError::arg(
        ErrorClass::Buffer,
        call,
        arg,
        format!("{n} blocks of {count} elements do not fit in its {cap} elements"),
    )
}

/// Block `i` (`counts[i]` elements from element `displs[i]`) lies inside a
/// descriptor of `cap` elements, for each of the `n` ranks (the rule of
/// [`VLayout::check`](crate::buf::elems::VLayout::check), the blocking v forms' check).
#[allow(clippy::too_many_arguments)]
fn check_blocks(
    call: &str,
    arg: &str,
    counts_arg: &str,
    displs_arg: &str,
    cap: usize,
    counts: &[usize],
    displs: &[isize],
    n: usize,
) -> Result<()> {
    crate::buf::elems::VLayout::check(call, arg, counts_arg, displs_arg, cap, counts, displs, n)
        .map(|_| ())
}

/// The blocks of `n` ranks lie inside a descriptor of `cap` elements: `n` blocks of
/// `count` (the uniform forms, `v: None`) or `counts[i]` at `displs[i]` (`v:
/// Some((counts, displs))`, the v forms, `counts_arg` naming the counts).
fn check_layout(
    call: &str,
    arg: &str,
    counts_arg: &str,
    cap: usize,
    v: Option<(&[usize], &[isize])>,
    count: usize,
    n: usize,
) -> Result<()> {
    match v {
        None => check_uniform(call, arg, cap, count, n),
        Some((counts, displs)) => {
            check_blocks(call, arg, counts_arg, "displs", cap, counts, displs, n)
        }
    }
}

/// A buffer the call needs on this rank.
pub(crate) fn needed(call: &str, arg: &str) -> MpiError {
    MpiError::arg(
        ErrorClass::Buffer,
        call,
        arg,
        "this rank needs the buffer (it is the root, or the call is not in place)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buf::check_w;

    #[test]
    fn uniform_blocks_must_fit() {
        assert!(check_uniform("c", "recvbuf", 12, 3, 4).is_ok());
        assert_eq!(
            check_uniform("c", "recvbuf", 11, 3, 4).unwrap_err().class,
            ErrorClass::Buffer
        );
        assert!(check_uniform("c", "recvbuf", 0, usize::MAX, 2).is_err());
    }

    #[test]
    fn v_blocks_stay_inside_the_descriptor() {
        let f = |cap, c: &[usize], d: &[isize], n| {
            check_blocks("c", "recvbuf", "recvcounts", "displs", cap, c, d, n)
        };
        assert!(f(10, &[2, 3], &[0, 7], 2).is_ok());
        assert_eq!(
            f(10, &[2, 3], &[0, 8], 2).unwrap_err().class,
            ErrorClass::Buffer
        );
        assert_eq!(
            f(10, &[2, 3], &[-1, 0], 2).unwrap_err().class,
            ErrorClass::Buffer
        );
        assert_eq!(
            f(10, &[1, isize::MAX as usize], &[0, isize::MAX], 2)
                .unwrap_err()
                .class,
            ErrorClass::Buffer
        );
        // Empty blocks reach nothing, wherever they point.
        assert!(f(0, &[0, 0], &[-5, 99], 2).is_ok());
        // Arrays shorter than the group: MPI_ERR_ARG, not an index panic.
        assert_eq!(f(10, &[1], &[0, 0], 2).unwrap_err().class, ErrorClass::Arg);
        assert_eq!(f(10, &[1, 1], &[0], 2).unwrap_err().class, ErrorClass::Arg);
    }

    #[test]
    fn w_blocks_are_checked_by_their_own_datatype() {
        let int = Datatype::predefined(Primitive::Int32);
        let vec = Datatype::vector(2, 1, 3, &int).unwrap(); // reaches 16 bytes
        let types = [int.clone(), vec.clone()];
        let f = |len, d: &[isize]| check_w("c", "recvbuf", len, &[2, 1], d, &types, 2);
        assert!(f(24, &[0, 8]).is_ok());
        assert_eq!(f(23, &[0, 8]).unwrap_err().class, ErrorClass::Buffer);
        assert_eq!(f(64, &[-4, 8]).unwrap_err().class, ErrorClass::Buffer);
        assert_eq!(f(64, &[0, 65]).unwrap_err().class, ErrorClass::Buffer);
        assert_eq!(
            check_w("c", "recvbuf", 64, &[1], &[0], &types, 2)
                .unwrap_err()
                .class,
            ErrorClass::Arg
        );
        // A descriptor with gaps has no byte span for the w forms.
        assert!(span("c", "recvbuf", 4, Some(&vec)).is_err());
        assert_eq!(span("c", "recvbuf", 4, Some(&int)).unwrap(), 16);
        assert_eq!(span("c", "recvbuf", 7, None).unwrap(), 7);
    }
}
