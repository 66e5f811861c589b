//! Datatypes: handles, constructors (with the MPI-1 names as extensions),
//! queries, pack/unpack.
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement: buffers holding their counts of their datatypes
//! (for immediate forms, until the request completes), arrays of the length the
//! standard gives, OUT arguments writable and aliasing no other argument.

use std::ffi::{c_char, c_int, c_void};

use oxmpi_core::datatype::{pack_into, pack_size, unpack_from, Combiner, Datatype, Primitive, Repr};
use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::env::{get_str, put_str};
use crate::errors::{NO_COMM, array, bad, ffi, out, R};
use crate::handles::state;
use crate::misc::with_cb_type;
use crate::types::*;

/// The engine datatype of a handle (committed or not).
pub fn datatype(h: MPI_Datatype, call: &str, arg: &str) -> R<Datatype> {
    if h == MPI_DATATYPE_NULL {
        return Err(bad(ErrorClass::Type, call, arg, "MPI_DATATYPE_NULL"));
    }
    if h < 4096 {
        if h == MPI_LB {
            return Ok(Datatype::lb_marker());
        }
        if h == MPI_UB {
            return Ok(Datatype::ub_marker());
        }
        return Primitive::from_abi_handle(h)
            .map(Datatype::predefined)
            .ok_or_else(|| bad(ErrorClass::Type, call, arg, format!("{h:#x} is not a predefined datatype oxmpi supports")));
    }
    state()
        .datatypes
        .get(h)
        .cloned()
        .ok_or_else(|| bad(ErrorClass::Type, call, arg, format!("{h:#x} is not a valid datatype handle (freed, or never created)")))
}

/// A committed datatype for communication, pack and reductions.
pub fn committed(h: MPI_Datatype, call: &str, arg: &str) -> R<Datatype> {
    let dt = datatype(h, call, arg)?;
    if !dt.is_committed() {
        return Err(bad(ErrorClass::Type, call, arg, "the datatype is not committed (call MPI_Type_commit)"));
    }
    Ok(dt)
}

/// A handle for an engine datatype handed back to C: the predefined value, or
/// a new handle (the standard makes the caller free derived ones).
pub fn new_handle(dt: &Datatype) -> MPI_Datatype {
    if let Some(p) = dt.as_primitive() {
        return p.abi_handle();
    }
    if dt.ptr_eq(&Datatype::lb_marker()) {
        return MPI_LB;
    }
    if dt.ptr_eq(&Datatype::ub_marker()) {
        return MPI_UB;
    }
    state().datatypes.insert(dt.clone())
}

/// A handle for an engine datatype, reusing a live one if there is (for user
/// reduction functions, which must not leak handles).
pub fn find_handle(dt: &Datatype) -> MPI_Datatype {
    if let Some(p) = dt.as_primitive() {
        return p.abi_handle();
    }
    let found = state().datatypes.iter().find(|(_, d)| d.ptr_eq(dt)).map(|(h, _)| h);
    found.unwrap_or_else(|| new_handle(dt))
}

fn count_arg(call: &str, arg: &str, n: c_int) -> R<usize> {
    if n < 0 {
        return Err(bad(ErrorClass::Count, call, arg, format!("{n} is negative")));
    }
    Ok(n as usize)
}

fn ints(v: &[c_int]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

/// # Safety
/// `newtype` is NULL or valid to write one `MPI_Datatype`, unaliased (the C caller's argument).
unsafe fn make(call: &'static str, newtype: *mut MPI_Datatype, f: impl FnOnce() -> R<Datatype>) -> c_int {
    ffi(call, NO_COMM, || {
        // SAFETY: `newtype` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "newtype", newtype)? };
        let dt = f()?;
        *o = state().datatypes.insert(dt);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_contiguous(count: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const CALL: &str = "MPI_Type_contiguous";
    let f = || {
        count_arg(CALL, "count", count)?;
        let old = datatype(oldtype, CALL, "oldtype")?;
        Ok(Datatype::contiguous(count as i64, &old)?)
    };
    // SAFETY: `newtype` is MPI_Type_contiguous's OUT argument, as `make` requires.
    unsafe { make(CALL, newtype, f) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_vector(count: c_int, blocklength: c_int, stride: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const CALL: &str = "MPI_Type_vector";
    let f = || {
        count_arg(CALL, "count", count)?;
        let old = datatype(oldtype, CALL, "oldtype")?;
        Ok(Datatype::vector(count as i64, blocklength as i64, stride as i64, &old)?)
    };
    // SAFETY: `newtype` is MPI_Type_vector's OUT argument, as `make` requires.
    unsafe { make(CALL, newtype, f) }
}

unsafe fn hvector(call: &'static str, count: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    let f = || {
        count_arg(call, "count", count)?;
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::hvector(count as i64, blocklength as i64, stride, &old)?)
    };
    // SAFETY: `newtype` is the C caller's OUT argument, as `make` requires.
    unsafe { make(call, newtype, f) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_hvector(count: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `hvector` needs what MPI_Type_create_hvector demands of them.
    unsafe { hvector("MPI_Type_create_hvector", count, blocklength, stride, oldtype, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_hvector(count: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `hvector` needs what MPI_Type_hvector demands of them.
    unsafe { hvector("MPI_Type_hvector", count, blocklength, stride, oldtype, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_indexed(count: c_int, blocklens: *const c_int, displs: *const c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const CALL: &str = "MPI_Type_indexed";
    let f = || {
        let n = count_arg(CALL, "count", count)?;
        // SAFETY: MPI_Type_indexed's `array_of_blocklengths` holds `count` = `n` ints.
        let b = unsafe { array(CALL, "array_of_blocklengths", blocklens, n)? };
        // SAFETY: MPI_Type_indexed's `array_of_displacements` holds `count` = `n` ints.
        let d = unsafe { array(CALL, "array_of_displacements", displs, n)? };
        let old = datatype(oldtype, CALL, "oldtype")?;
        Ok(Datatype::indexed(&ints(b), &ints(d), &old)?)
    };
    // SAFETY: `newtype` is MPI_Type_indexed's OUT argument, as `make` requires.
    unsafe { make(CALL, newtype, f) }
}

unsafe fn hindexed(call: &'static str, count: c_int, blocklens: *const c_int, displs: *const MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    let f = || {
        let n = count_arg(call, "count", count)?;
        // SAFETY: MPI_Type_(create_)hindexed's `array_of_blocklengths` holds `count` = `n` ints.
        let b = unsafe { array(call, "array_of_blocklengths", blocklens, n)? };
        // SAFETY: its `array_of_displacements` holds `count` = `n` MPI_Aints.
        let d = unsafe { array(call, "array_of_displacements", displs, n)? };
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::hindexed(&ints(b), d, &old)?)
    };
    // SAFETY: `newtype` is the C caller's OUT argument, as `make` requires.
    unsafe { make(call, newtype, f) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_hindexed(count: c_int, blocklens: *const c_int, displs: *const MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `hindexed` needs what MPI_Type_create_hindexed demands of them.
    unsafe { hindexed("MPI_Type_create_hindexed", count, blocklens, displs, oldtype, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_hindexed(count: c_int, blocklens: *mut c_int, displs: *mut MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `hindexed` needs what MPI_Type_hindexed demands of them.
    unsafe { hindexed("MPI_Type_hindexed", count, blocklens, displs, oldtype, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_indexed_block(count: c_int, blocklength: c_int, displs: *const c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const CALL: &str = "MPI_Type_create_indexed_block";
    let f = || {
        let n = count_arg(CALL, "count", count)?;
        // SAFETY: MPI_Type_create_indexed_block's `array_of_displacements` holds `count` = `n` ints.
        let d = unsafe { array(CALL, "array_of_displacements", displs, n)? };
        let old = datatype(oldtype, CALL, "oldtype")?;
        Ok(Datatype::indexed_block(blocklength as i64, &ints(d), &old)?)
    };
    // SAFETY: `newtype` is MPI_Type_create_indexed_block's OUT argument, as `make` requires.
    unsafe { make(CALL, newtype, f) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_hindexed_block(count: c_int, blocklength: c_int, displs: *const MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const CALL: &str = "MPI_Type_create_hindexed_block";
    let f = || {
        let n = count_arg(CALL, "count", count)?;
        // SAFETY: MPI_Type_create_hindexed_block's `array_of_displacements` holds `count` = `n` MPI_Aints.
        let d = unsafe { array(CALL, "array_of_displacements", displs, n)? };
        let old = datatype(oldtype, CALL, "oldtype")?;
        Ok(Datatype::hindexed_block(blocklength as i64, d, &old)?)
    };
    // SAFETY: `newtype` is MPI_Type_create_hindexed_block's OUT argument, as `make` requires.
    unsafe { make(CALL, newtype, f) }
}

unsafe fn structure(call: &'static str, count: c_int, blocklens: *const c_int, displs: *const MPI_Aint, types: *const MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    let f = || {
        let n = count_arg(call, "count", count)?;
        // SAFETY: MPI_Type_(create_)struct's `array_of_blocklengths` holds `count` = `n` ints.
        let b = unsafe { array(call, "array_of_blocklengths", blocklens, n)? };
        // SAFETY: its `array_of_displacements` holds `count` = `n` MPI_Aints.
        let d = unsafe { array(call, "array_of_displacements", displs, n)? };
        // SAFETY: its `array_of_types` holds `count` = `n` handles.
        let t = unsafe { array(call, "array_of_types", types, n)? };
        let tys = t
            .iter()
            .enumerate()
            .map(|(i, &h)| datatype(h, call, &format!("array_of_types[{i}]")))
            .collect::<R<Vec<_>>>()?;
        Ok(Datatype::structure(&ints(b), d, &tys)?)
    };
    // SAFETY: `newtype` is the C caller's OUT argument, as `make` requires.
    unsafe { make(call, newtype, f) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_struct(count: c_int, blocklens: *const c_int, displs: *const MPI_Aint, types: *const MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `structure` needs what MPI_Type_create_struct demands of them.
    unsafe { structure("MPI_Type_create_struct", count, blocklens, displs, types, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_struct(count: c_int, blocklens: *mut c_int, displs: *mut MPI_Aint, types: *mut MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `structure` needs what MPI_Type_struct demands of them.
    unsafe { structure("MPI_Type_struct", count, blocklens, displs, types, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_resized(oldtype: MPI_Datatype, lb: MPI_Aint, extent: MPI_Aint, newtype: *mut MPI_Datatype) -> c_int {
    const CALL: &str = "MPI_Type_create_resized";
    let f = || {
        let old = datatype(oldtype, CALL, "oldtype")?;
        Ok(Datatype::resized(&old, lb, extent)?)
    };
    // SAFETY: `newtype` is MPI_Type_create_resized's OUT argument, as `make` requires.
    unsafe { make(CALL, newtype, f) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_dup(oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const CALL: &str = "MPI_Type_dup";
    let f = || {
        let old = datatype(oldtype, CALL, "oldtype")?;
        // The attributes' copy callbacks get `oldtype`.
        Ok(with_cb_type(oldtype, || Datatype::dup_with_attributes(&old))?)
    };
    // SAFETY: `newtype` is MPI_Type_dup's OUT argument, as `make` requires.
    unsafe { make(CALL, newtype, f) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_commit(dt: *mut MPI_Datatype) -> c_int {
    const CALL: &str = "MPI_Type_commit";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `datatype` (`dt`) is MPI_Type_commit's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "datatype", dt)? };
        datatype(*h, CALL, "datatype")?.commit();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_free(dt: *mut MPI_Datatype) -> c_int {
    const CALL: &str = "MPI_Type_free";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `datatype` (`dt`) is MPI_Type_free's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "datatype", dt)? };
        if *h < 4096 {
            datatype(*h, CALL, "datatype")?;
            return Err(bad(ErrorClass::Type, CALL, "datatype", "a predefined datatype cannot be freed"));
        }
        let dt = state()
            .datatypes
            .get(*h)
            .cloned()
            .ok_or_else(|| bad(ErrorClass::Type, CALL, "datatype", format!("{:#x} is not a valid datatype handle (freed twice?)", *h)))?;
        // The delete callbacks run when the last handle to the datatype goes
        // (MPI_Type_get_contents hands out more handles to the same type).
        // Like MPI_Comm_free, a failing callback leaves the handle valid.
        let last = state().datatypes.iter().filter(|(_, d)| d.ptr_eq(&dt)).count() == 1;
        if last {
            with_cb_type(*h, || dt.attrs().clear(CALL))?;
        }
        state().datatypes.remove(*h);
        *h = MPI_DATATYPE_NULL;
        Ok(())
    })
}

fn query<T>(call: &'static str, h: MPI_Datatype, f: impl FnOnce(&Datatype) -> R<T>) -> R<T> {
    let dt = datatype(h, call, "datatype")?;
    f(&dt)
}

fn to_int(call: &str, arg: &str, v: i64) -> R<c_int> {
    c_int::try_from(v).map_err(|_| bad(ErrorClass::ValueTooLarge, call, arg, format!("{v} does not fit in an int (use the _x / _c variant)")))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_size(h: MPI_Datatype, size: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Type_size";
    ffi(CALL, NO_COMM, || {
        let s = query(CALL, h, |d| Ok(d.size()))?;
        // SAFETY: `size` is MPI_Type_size's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "size", size)? } = match c_int::try_from(s) {
            Ok(v) => v,
            Err(_) => MPI_UNDEFINED,
        };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_size_x(h: MPI_Datatype, size: *mut MPI_Count) -> c_int {
    const CALL: &str = "MPI_Type_size_x";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `size` is MPI_Type_size_x's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "size", size)? } = query(CALL, h, |d| Ok(d.size() as i64))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_extent(h: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint) -> c_int {
    const CALL: &str = "MPI_Type_get_extent";
    ffi(CALL, NO_COMM, || {
        let (l, e) = query(CALL, h, |d| Ok((d.lb(), d.extent())))?;
        // SAFETY: `lb` is MPI_Type_get_extent's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "lb", lb)? } = l;
        // SAFETY: `extent` is MPI_Type_get_extent's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "extent", extent)? } = e;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_extent_x(h: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count) -> c_int {
    const CALL: &str = "MPI_Type_get_extent_x";
    ffi(CALL, NO_COMM, || {
        let (l, e) = query(CALL, h, |d| Ok((d.lb(), d.extent())))?;
        // SAFETY: `lb` is MPI_Type_get_extent_x's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "lb", lb)? } = l as i64;
        // SAFETY: `extent` is MPI_Type_get_extent_x's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "extent", extent)? } = e as i64;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_true_extent(h: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint) -> c_int {
    const CALL: &str = "MPI_Type_get_true_extent";
    ffi(CALL, NO_COMM, || {
        let (l, e) = query(CALL, h, |d| Ok((d.true_lb(), d.true_extent())))?;
        // SAFETY: `true_lb` (`lb`) is MPI_Type_get_true_extent's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "true_lb", lb)? } = l;
        // SAFETY: `true_extent` (`extent`) is MPI_Type_get_true_extent's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "true_extent", extent)? } = e;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_true_extent_x(h: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count) -> c_int {
    const CALL: &str = "MPI_Type_get_true_extent_x";
    ffi(CALL, NO_COMM, || {
        let (l, e) = query(CALL, h, |d| Ok((d.true_lb(), d.true_extent())))?;
        // SAFETY: `true_lb` (`lb`) is MPI_Type_get_true_extent_x's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "true_lb", lb)? } = l as i64;
        // SAFETY: `true_extent` (`extent`) is MPI_Type_get_true_extent_x's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "true_extent", extent)? } = e as i64;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_extent(h: MPI_Datatype, extent: *mut MPI_Aint) -> c_int {
    const CALL: &str = "MPI_Type_extent";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `extent` is MPI_Type_extent's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "extent", extent)? } = query(CALL, h, |d| Ok(d.extent()))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_lb(h: MPI_Datatype, displacement: *mut MPI_Aint) -> c_int {
    const CALL: &str = "MPI_Type_lb";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `displacement` is MPI_Type_lb's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "displacement", displacement)? } = query(CALL, h, |d| Ok(d.lb()))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_ub(h: MPI_Datatype, displacement: *mut MPI_Aint) -> c_int {
    const CALL: &str = "MPI_Type_ub";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `displacement` is MPI_Type_ub's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "displacement", displacement)? } = query(CALL, h, |d| Ok(d.ub()))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_envelope(h: MPI_Datatype, ni: *mut c_int, na: *mut c_int, nd: *mut c_int, combiner: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Type_get_envelope";
    ffi(CALL, NO_COMM, || {
        let (i, a, d, c) = query(CALL, h, |d| Ok(d.envelope()))?;
        // SAFETY: `num_integers` (`ni`) is MPI_Type_get_envelope's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "num_integers", ni)? } = i as c_int;
        // SAFETY: `num_addresses` (`na`) is MPI_Type_get_envelope's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "num_addresses", na)? } = a as c_int;
        // SAFETY: `num_datatypes` (`nd`) is MPI_Type_get_envelope's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "num_datatypes", nd)? } = d as c_int;
        // SAFETY: `combiner` is MPI_Type_get_envelope's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "combiner", combiner)? } = c.code();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_contents(
    h: MPI_Datatype,
    max_integers: c_int,
    max_addresses: c_int,
    max_datatypes: c_int,
    array_of_integers: *mut c_int,
    array_of_addresses: *mut MPI_Aint,
    array_of_datatypes: *mut MPI_Datatype,
) -> c_int {
    const CALL: &str = "MPI_Type_get_contents";
    ffi(CALL, NO_COMM, || {
        let dt = datatype(h, CALL, "datatype")?;
        if dt.combiner() == Combiner::Named {
            return Err(bad(ErrorClass::Type, CALL, "datatype", "a predefined datatype has no contents"));
        }
        let (is, as_, ts) = dt.contents();
        for (have, max, arg) in [(is.len(), max_integers, "max_integers"), (as_.len(), max_addresses, "max_addresses"), (ts.len(), max_datatypes, "max_datatypes")] {
            if (max as i64) < have as i64 {
                return Err(bad(ErrorClass::Arg, CALL, arg, format!("{max} is less than the {have} entries the datatype has")));
            }
        }
        for (k, v) in is.iter().enumerate() {
            // SAFETY: max_integers >= is.len() entries by the C contract.
            unsafe { *array_of_integers.add(k) = to_int(CALL, "array_of_integers", *v)? };
        }
        for (k, v) in as_.iter().enumerate() {
            // SAFETY: as above.
            unsafe { *array_of_addresses.add(k) = *v };
        }
        for (k, t) in ts.iter().enumerate() {
            // SAFETY: as above.
            unsafe { *array_of_datatypes.add(k) = new_handle(t) };
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_name(h: MPI_Datatype, name: *mut c_char, resultlen: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Type_get_name";
    ffi(CALL, NO_COMM, || {
        let dt = datatype(h, CALL, "datatype")?;
        if name.is_null() {
            return Err(bad(ErrorClass::Arg, CALL, "type_name", "is NULL"));
        }
        // SAFETY: `resultlen` is MPI_Type_get_name's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let len = unsafe { out(CALL, "resultlen", resultlen)? };
        // SAFETY: MPI_MAX_OBJECT_NAME bytes by the C contract.
        *len = unsafe { put_str(name, &dt.name(), MPI_MAX_OBJECT_NAME as usize) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_set_name(h: MPI_Datatype, name: *const c_char) -> c_int {
    const CALL: &str = "MPI_Type_set_name";
    ffi(CALL, NO_COMM, || {
        let dt = datatype(h, CALL, "datatype")?;
        // SAFETY: C string by contract.
        let s = unsafe { get_str(CALL, "type_name", name)? };
        dt.set_name(&s.chars().take(MPI_MAX_OBJECT_NAME as usize - 1).collect::<String>());
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_address(location: *const c_void, address: *mut MPI_Aint) -> c_int {
    ffi("MPI_Get_address", NO_COMM, || {
        // SAFETY: `address` is MPI_Get_address's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out("MPI_Get_address", "address", address)? } = location as MPI_Aint;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Address(location: *mut c_void, address: *mut MPI_Aint) -> c_int {
    ffi("MPI_Address", NO_COMM, || {
        // SAFETY: `address` is MPI_Address's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out("MPI_Address", "address", address)? } = location as MPI_Aint;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    base.wrapping_add(disp)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Aint_diff(a: MPI_Aint, b: MPI_Aint) -> MPI_Aint {
    a.wrapping_sub(b)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack(
    inbuf: *const c_void,
    incount: c_int,
    h: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: c_int,
    position: *mut c_int,
    c: MPI_Comm,
) -> c_int {
    const CALL: &str = "MPI_Pack";
    ffi(CALL, c, || {
        crate::env::comm(c, CALL)?;
        let n = count_arg(CALL, "incount", incount)?;
        let dt = committed(h, CALL, "datatype")?;
        let size = count_arg(CALL, "outsize", outsize)?;
        // SAFETY: `position` is MPI_Pack's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let pos = unsafe { out(CALL, "position", position)? };
        if *pos < 0 {
            return Err(bad(ErrorClass::Arg, CALL, "position", format!("{} is negative", *pos)));
        }
        crate::p2p::check_buf(CALL, "inbuf", inbuf, n, &dt)?;
        if outbuf.is_null() && size > 0 {
            return Err(bad(ErrorClass::Buffer, CALL, "outbuf", "is NULL"));
        }
        // SAFETY: non-null with `size` > 0 (checked above): MPI_Pack's `outbuf` holds `outsize` = `size` bytes, aliasing no other argument.
        let outs: &mut [u8] = if size == 0 { &mut [] } else { unsafe { std::slice::from_raw_parts_mut(outbuf as *mut u8, size) } };
        let mut p = *pos as usize;
        // SAFETY: the C caller's buffer holds `n` elements of `dt`.
        unsafe { pack_into(&dt, inbuf as *const u8, n, outs, &mut p)? };
        *pos = p as c_int;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Unpack(
    inbuf: *const c_void,
    insize: c_int,
    position: *mut c_int,
    outbuf: *mut c_void,
    outcount: c_int,
    h: MPI_Datatype,
    c: MPI_Comm,
) -> c_int {
    const CALL: &str = "MPI_Unpack";
    ffi(CALL, c, || {
        crate::env::comm(c, CALL)?;
        let n = count_arg(CALL, "outcount", outcount)?;
        let dt = committed(h, CALL, "datatype")?;
        let size = count_arg(CALL, "insize", insize)?;
        // SAFETY: `position` is MPI_Unpack's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let pos = unsafe { out(CALL, "position", position)? };
        if *pos < 0 {
            return Err(bad(ErrorClass::Arg, CALL, "position", format!("{} is negative", *pos)));
        }
        crate::p2p::check_buf(CALL, "outbuf", outbuf, n, &dt)?;
        if inbuf.is_null() && size > 0 {
            return Err(bad(ErrorClass::Buffer, CALL, "inbuf", "is NULL"));
        }
        // SAFETY: non-null with `size` > 0 (checked above): MPI_Unpack's `inbuf` holds `insize` = `size` bytes, not written during the call.
        let ins: &[u8] = if size == 0 { &[] } else { unsafe { std::slice::from_raw_parts(inbuf as *const u8, size) } };
        let mut p = *pos as usize;
        // SAFETY: the C caller's buffer holds `n` elements of `dt`.
        unsafe { unpack_from(&dt, ins, &mut p, outbuf as *mut u8, n)? };
        *pos = p as c_int;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack_size(incount: c_int, h: MPI_Datatype, c: MPI_Comm, size: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Pack_size";
    ffi(CALL, c, || {
        crate::env::comm(c, CALL)?;
        let n = count_arg(CALL, "incount", incount)?;
        let dt = committed(h, CALL, "datatype")?;
        // SAFETY: `size` is MPI_Pack_size's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "size", size)? } = to_int(CALL, "size", pack_size(&dt, n) as i64)?;
        Ok(())
    })
}

// ----- subarray, darray, size matching ----------------------------------------------

fn order_arg(call: &str, order: c_int) -> R<bool> {
    match order {
        MPI_ORDER_C => Ok(false),
        MPI_ORDER_FORTRAN => Ok(true),
        o => Err(bad(ErrorClass::Arg, call, "order", format!("{o} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN"))),
    }
}

fn i64s(v: &[c_int]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_subarray(
    ndims: c_int,
    sizes: *const c_int,
    subsizes: *const c_int,
    starts: *const c_int,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    const CALL: &str = "MPI_Type_create_subarray";
    let f = || {
        let n = count_arg(CALL, "ndims", ndims)?;
        // SAFETY: the three arrays hold `ndims` ints (MPI contract).
        let (sz, sub, st) = unsafe { (array(CALL, "array_of_sizes", sizes, n)?, array(CALL, "array_of_subsizes", subsizes, n)?, array(CALL, "array_of_starts", starts, n)?) };
        let fortran = order_arg(CALL, order)?;
        let old = datatype(oldtype, CALL, "oldtype")?;
        Ok(Datatype::subarray(&i64s(sz), &i64s(sub), &i64s(st), fortran, &old)?)
    };
    // SAFETY: `newtype` is MPI_Type_create_subarray's OUT argument, as `make` requires.
    unsafe { make(CALL, newtype, f) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_darray(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    gsizes: *const c_int,
    distribs: *const c_int,
    dargs: *const c_int,
    psizes: *const c_int,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    const CALL: &str = "MPI_Type_create_darray";
    let f = || {
        let n = count_arg(CALL, "ndims", ndims)?;
        // SAFETY: the four arrays hold `ndims` ints (MPI contract).
        let (g, d, a, p) = unsafe {
            (
                array(CALL, "array_of_gsizes", gsizes, n)?,
                array(CALL, "array_of_distribs", distribs, n)?,
                array(CALL, "array_of_dargs", dargs, n)?,
                array(CALL, "array_of_psizes", psizes, n)?,
            )
        };
        let fortran = order_arg(CALL, order)?;
        let old = datatype(oldtype, CALL, "oldtype")?;
        let kinds: Vec<i32> = d
            .iter()
            .enumerate()
            .map(|(i, &x)| match x {
                MPI_DISTRIBUTE_NONE => Ok(0),
                MPI_DISTRIBUTE_BLOCK => Ok(1),
                MPI_DISTRIBUTE_CYCLIC => Ok(2),
                o => Err(bad(ErrorClass::Arg, CALL, &format!("array_of_distribs[{i}]"), format!("{o} is not an MPI_DISTRIBUTE_* value"))),
            })
            .collect::<R<_>>()?;
        let dargs: Vec<i64> = a.iter().map(|&x| if x == MPI_DISTRIBUTE_DFLT_DARG { -1 } else { x as i64 }).collect();
        let mut ints = vec![size as i64, rank as i64, n as i64];
        for v in [g, d, a, p] {
            ints.extend(i64s(v));
        }
        ints.push(order as i64);
        Ok(Datatype::darray(size as i64, rank as i64, &i64s(g), &kinds, &dargs, &i64s(p), fortran, &old, ints)?)
    };
    // SAFETY: `newtype` is MPI_Type_create_darray's OUT argument, as `make` requires.
    unsafe { make(CALL, newtype, f) }
}

/// MPI_Type_match_size: the C type of the class with that size.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_match_size(typeclass: c_int, size: c_int, dt: *mut MPI_Datatype) -> c_int {
    const CALL: &str = "MPI_Type_match_size";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `datatype` (`dt`) is MPI_Type_match_size's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "datatype", dt)? };
        let candidates: &[MPI_Datatype] = match typeclass {
            MPI_TYPECLASS_INTEGER => &[MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG_LONG],
            MPI_TYPECLASS_REAL => &[MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE],
            MPI_TYPECLASS_COMPLEX => &[MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX],
            c => return Err(bad(ErrorClass::Arg, CALL, "typeclass", format!("{c} is not an MPI_TYPECLASS_* value"))),
        };
        let found = candidates.iter().copied().find(|&h| Primitive::from_abi_handle(h).is_some_and(|p| p.size() as c_int == size));
        *o = found.ok_or_else(|| bad(ErrorClass::Arg, CALL, "size", format!("no type of this class has {size} bytes")))?;
        Ok(())
    })
}

// ----- external32 -------------------------------------------------------------------

fn external32(call: &str, datarep: *const c_char) -> R<()> {
    // SAFETY: `datarep` is a NUL-terminated C string (or NULL, rejected) by the MPI contract.
    let rep = unsafe { get_str(call, "datarep", datarep)? };
    if rep != "external32" {
        return Err(crate::errors::bad_code(MPI_ERR_UNSUPPORTED_DATAREP, call, "datarep", format!("`{rep}` is not \"external32\"")));
    }
    Ok(())
}

/// Converts packed data of `count` elements of `dt` between native (little
/// endian) and big-endian order, in place: each basic value is reversed
/// (complex numbers part by part, pairs value and index apart). external32
/// here keeps the native sizes of the basic types.
fn swap_packed(buf: &mut [u8], dt: &Datatype, count: usize) {
    if cfg!(target_endian = "big") {
        return;
    }
    let mut at = 0;
    for _ in 0..count {
        for &(p, k) in dt.signature() {
            let size = p.size();
            let parts: [usize; 2] = match p.repr() {
                Repr::Complex32 | Repr::Complex64 | Repr::Complex80 => [size / 2, size / 2],
                Repr::Pair { .. } => [size - 4, 4],
                _ => [size, 0],
            };
            for _ in 0..k {
                let mut o = at;
                for part in parts.into_iter().filter(|&n| n > 1) {
                    buf[o..o + part].reverse();
                    o += part;
                }
                at += size;
            }
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack_external_size(datarep: *const c_char, incount: c_int, h: MPI_Datatype, size: *mut MPI_Aint) -> c_int {
    const CALL: &str = "MPI_Pack_external_size";
    ffi(CALL, NO_COMM, || {
        external32(CALL, datarep)?;
        let n = count_arg(CALL, "incount", incount)?;
        let dt = committed(h, CALL, "datatype")?;
        // SAFETY: `size` is MPI_Pack_external_size's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "size", size)? } = (dt.size() * n) as MPI_Aint;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    incount: c_int,
    h: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: MPI_Aint,
    position: *mut MPI_Aint,
) -> c_int {
    const CALL: &str = "MPI_Pack_external";
    ffi(CALL, NO_COMM, || {
        external32(CALL, datarep)?;
        let n = count_arg(CALL, "incount", incount)?;
        let dt = committed(h, CALL, "datatype")?;
        // SAFETY: `position` is MPI_Pack_external's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let pos = unsafe { out(CALL, "position", position)? };
        if *pos < 0 || outsize < 0 {
            return Err(bad(ErrorClass::Arg, CALL, "position", format!("position {} or outsize {outsize} is negative", *pos)));
        }
        crate::p2p::check_buf(CALL, "inbuf", inbuf, n, &dt)?;
        let need = dt.size() * n;
        if (*pos as usize).checked_add(need).is_none_or(|end| end > outsize as usize) {
            return Err(bad(ErrorClass::Truncate, CALL, "outsize", format!("{outsize} bytes cannot take {need} more bytes at position {}", *pos)));
        }
        if need == 0 {
            return Ok(());
        }
        // SAFETY: non-null (need > 0 fits in outsize, checked above): `outbuf` holds `outsize` bytes, aliasing no other argument.
        let outs: &mut [u8] = unsafe { std::slice::from_raw_parts_mut(outbuf as *mut u8, outsize as usize) };
        let start = *pos as usize;
        let mut p = start;
        // SAFETY: the C caller's buffer holds `n` elements of `dt`.
        unsafe { pack_into(&dt, inbuf as *const u8, n, outs, &mut p)? };
        swap_packed(&mut outs[start..p], &dt, n);
        *pos = p as MPI_Aint;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Unpack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: MPI_Aint,
    position: *mut MPI_Aint,
    outbuf: *mut c_void,
    outcount: c_int,
    h: MPI_Datatype,
) -> c_int {
    const CALL: &str = "MPI_Unpack_external";
    ffi(CALL, NO_COMM, || {
        external32(CALL, datarep)?;
        let n = count_arg(CALL, "outcount", outcount)?;
        let dt = committed(h, CALL, "datatype")?;
        // SAFETY: `position` is MPI_Unpack_external's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let pos = unsafe { out(CALL, "position", position)? };
        let need = dt.size() * n;
        if *pos < 0 || insize < 0 || (*pos as usize).checked_add(need).is_none_or(|end| end > insize as usize) {
            return Err(bad(ErrorClass::Truncate, CALL, "insize", format!("{insize} bytes do not hold {need} bytes at position {}", *pos)));
        }
        crate::p2p::check_buf(CALL, "outbuf", outbuf, n, &dt)?;
        if need == 0 {
            return Ok(());
        }
        let start = *pos as usize;
        // SAFETY: non-null (need > 0 bytes lie inside insize, checked above): `inbuf` holds `insize` bytes, not written during the call.
        let mut tmp = unsafe { std::slice::from_raw_parts(inbuf as *const u8, insize as usize) }[start..start + need].to_vec();
        swap_packed(&mut tmp, &dt, n);
        let mut p = 0;
        // SAFETY: the C caller's buffer holds `n` elements of `dt`.
        unsafe { unpack_from(&dt, &tmp, &mut p, outbuf as *mut u8, n)? };
        *pos = (start + p) as MPI_Aint;
        Ok(())
    })
}
