//! Groups: constructors, set operations, rank translation, comparison.
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement: buffers holding their counts of their datatypes
//! (for immediate forms, until the request completes), arrays of the length the
//! standard gives, OUT arguments writable and aliasing no other argument.

use std::ffi::c_int;

use oxmpi_core::error::ErrorClass;
use oxmpi_core::group::Group;
use oxmpi_core::runtime;

use crate::abi::*;
use crate::conv::errors::{array as ints, array_mut as ints_mut, ffi, NO_COMM, R};
use crate::conv::handles::state;
use crate::conv::nonneg;
use crate::conv::{group, new_group};
use crate::types::*;

// ----- groups --------------------------------------------------------------------------------

/// The answer of MPI_Group_size (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn group_size(call: &str, g: MPI_Group) -> R<c_int> {
    Ok(group(g, call, "group")?.size())
}

/// The answer of MPI_Group_rank (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn group_rank(call: &str, g: MPI_Group) -> R<c_int> {
    let g = group(g, call, "group")?;
    let me = runtime::engine()?.rank();
    Ok(g.rank_of_world(me).unwrap_or(MPI_UNDEFINED))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_translate_ranks(
    g1: MPI_Group,
    n: c_int,
    ranks1: *const c_int,
    g2: MPI_Group,
    ranks2: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Group_translate_ranks";
    ffi(CALL, NO_COMM, || {
        let a = group(g1, CALL, "group1")?;
        let b = group(g2, CALL, "group2")?;
        let n = nonneg(CALL, "n", n, ErrorClass::Arg)?;
        // SAFETY: MPI_Group_translate_ranks's `ranks1` holds `n` ranks.
        let r1 = unsafe { ints(CALL, "ranks1", ranks1, n)? };
        // SAFETY: MPI_Group_translate_ranks's `ranks2` is an OUT array of `n` ints, unaliased.
        let r2 = unsafe { ints_mut(CALL, "ranks2", ranks2, n)? };
        for (o, r) in r2.iter_mut().zip(a.translate_ranks(r1, &b)?) {
            *o = r.unwrap_or(MPI_UNDEFINED);
        }
        Ok(())
    })
}

/// MPI_Group_compare (abi.txt `query`: the generated `PMPI_x` stores the answer).
pub fn group_compare(call: &'static str, g1: MPI_Group, g2: MPI_Group) -> R<c_int> {
    let a = group(g1, call, "group1")?;
    let b = group(g2, call, "group2")?;
    Ok(crate::abi::comparison_value(a.compare(&b)))
}

// The group constructors' `PMPI_x` are generated from abi.txt's `made(newgroup)`: it
// checks `newgroup` first and sets it to MPI_GROUP_NULL (a failing constructor leaves
// the null handle, MPI-4.1), then calls these bodies.

fn group_op(
    call: &'static str,
    g1: MPI_Group,
    g2: MPI_Group,
    o: &mut MPI_Group,
    f: fn(&Group, &Group) -> Group,
) -> R<()> {
    let a = group(g1, call, "group1")?;
    let b = group(g2, call, "group2")?;
    let session = crate::conv::common_session(call, &[("group1", g1), ("group2", g2)])?;
    *o = new_group(f(&a, &b));
    crate::conv::tag_group(*o, session);
    Ok(())
}

/// MPI_Group_union (abi.txt `made(newgroup)`).
pub fn group_union(call: &'static str, g1: MPI_Group, g2: MPI_Group, o: &mut MPI_Group) -> R<()> {
    group_op(call, g1, g2, o, Group::union)
}

/// MPI_Group_intersection (abi.txt `made(newgroup)`).
pub fn group_intersection(
    call: &'static str,
    g1: MPI_Group,
    g2: MPI_Group,
    o: &mut MPI_Group,
) -> R<()> {
    group_op(call, g1, g2, o, Group::intersection)
}

/// MPI_Group_difference (abi.txt `made(newgroup)`).
pub fn group_difference(
    call: &'static str,
    g1: MPI_Group,
    g2: MPI_Group,
    o: &mut MPI_Group,
) -> R<()> {
    group_op(call, g1, g2, o, Group::difference)
}

/// # Safety
/// `ranks` is NULL or holds `n` ints (MPI_Group_incl/excl's C contract).
unsafe fn group_sel(
    call: &'static str,
    g: MPI_Group,
    n: c_int,
    ranks: *const c_int,
    o: &mut MPI_Group,
    excl: bool,
) -> R<()> {
    let h = g;
    {
        let g = group(g, call, "group")?;
        let n = nonneg(call, "n", n, ErrorClass::Arg)?;
        // SAFETY: MPI_Group_incl/excl's `ranks` holds `n` ranks.
        let r = unsafe { ints(call, "ranks", ranks, n)? };
        *o = new_group(if excl { g.excl(r)? } else { g.incl(r)? });
        crate::conv::tag_group(*o, crate::conv::group_session(h));
        Ok(())
    }
}

/// MPI_Group_incl (abi.txt `made(newgroup)`).
///
/// # Safety
/// `ranks` is the C caller's argument: NULL or `n` ints.
pub unsafe fn group_incl(
    call: &'static str,
    g: MPI_Group,
    n: c_int,
    ranks: *const c_int,
    o: &mut MPI_Group,
) -> R<()> {
    // SAFETY: this function's contract.
    unsafe { group_sel(call, g, n, ranks, o, false) }
}

/// MPI_Group_excl (abi.txt `made(newgroup)`).
///
/// # Safety
/// As [`group_incl`].
pub unsafe fn group_excl(
    call: &'static str,
    g: MPI_Group,
    n: c_int,
    ranks: *const c_int,
    o: &mut MPI_Group,
) -> R<()> {
    // SAFETY: this function's contract.
    unsafe { group_sel(call, g, n, ranks, o, true) }
}

/// # Safety
/// `ranges` is NULL or holds `n` triplets (MPI_Group_range_incl/excl's C contract).
unsafe fn group_range(
    call: &'static str,
    g: MPI_Group,
    n: c_int,
    ranges: *mut c_int,
    o: &mut MPI_Group,
    excl: bool,
) -> R<()> {
    let h = g;
    {
        let g = group(g, call, "group")?;
        let n = nonneg(call, "n", n, ErrorClass::Arg)?;
        // SAFETY: MPI_Group_range_incl/excl's `ranges` holds `n` triplets, `3 * n` ints.
        let flat = unsafe { ints(call, "ranges", ranges, 3 * n)? };
        let triplets: Vec<[i32; 3]> = flat.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
        *o = new_group(if excl {
            g.range_excl(&triplets)?
        } else {
            g.range_incl(&triplets)?
        });
        crate::conv::tag_group(*o, crate::conv::group_session(h));
        Ok(())
    }
}

/// MPI_Group_range_incl (abi.txt `made(newgroup)`).
///
/// # Safety
/// `ranges` is the C caller's argument: NULL or `n` triplets.
pub unsafe fn group_range_incl(
    call: &'static str,
    g: MPI_Group,
    n: c_int,
    ranges: *mut c_int,
    o: &mut MPI_Group,
) -> R<()> {
    // SAFETY: this function's contract.
    unsafe { group_range(call, g, n, ranges, o, false) }
}

/// MPI_Group_range_excl (abi.txt `made(newgroup)`).
///
/// # Safety
/// As [`group_range_incl`].
pub unsafe fn group_range_excl(
    call: &'static str,
    g: MPI_Group,
    n: c_int,
    ranges: *mut c_int,
    o: &mut MPI_Group,
) -> R<()> {
    // SAFETY: this function's contract.
    unsafe { group_range(call, g, n, ranges, o, true) }
}

/// MPI_Group_free (abi.txt `out(group)`: the generated `PMPI_x` checks `group` first).
pub fn group_free(call: &'static str, h: &mut MPI_Group) -> R<()> {
    if *h != MPI_GROUP_EMPTY {
        group(*h, call, "group")?;
        state().groups.remove(*h);
        crate::conv::group_freed();
        crate::conv::forget_group(*h);
    }
    *h = MPI_GROUP_NULL;
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_c2f(g: MPI_Group) -> c_int {
    crate::conv::handles::c2f_predefined_or(&state().groups, g)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_f2c(f: c_int) -> MPI_Group {
    crate::conv::handles::f2c_predefined_or(&state().groups, f)
}
