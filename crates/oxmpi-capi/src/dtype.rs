//! Datatypes: handles, constructors (with the MPI-1 names as extensions),
//! queries, subarray/darray, size matching. (Pack and unpack: `pack.rs`.)
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement: buffers holding their counts of their datatypes
//! (for immediate forms, until the request completes), arrays of the length the
//! standard gives, OUT arguments writable and aliasing no other argument.

use std::ffi::{c_char, c_int, c_void};

use oxmpi_core::datatype::{Combiner, Datatype};
use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::conv::errors::{array, bad, ffi, out, NO_COMM, R};
use crate::conv::handles::state;
use crate::conv::large::{entry, name, ptr::*, to_usize, Count, Displ};
use crate::conv::{datatype, get_str, new_handle, put_str, with_cb_type};
use crate::types::*;

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
unsafe fn make(
    call: &'static str,
    large: bool,
    newtype: *mut MPI_Datatype,
    f: impl FnOnce() -> R<Datatype>,
) -> c_int {
    ffi(call, NO_COMM, || {
        // SAFETY: `newtype` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "newtype", newtype)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_DATATYPE_NULL;
        let dt = f()?;
        if large {
            dt.mark_large_count();
        }
        *o = state().datatypes.insert(dt);
        Ok(())
    })
}

unsafe fn contiguous<C: Count>(
    count: C,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    let call = name::<C>("MPI_Type_contiguous");
    let f = || {
        count_arg(call, "count", count)?;
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::contiguous(count.wide(), &old)?)
    };
    // SAFETY: `newtype` is the C caller's OUT argument, as `make` requires.
    unsafe { make(call, C::WIDE, newtype, f) }
}

unsafe fn vector<C: Count>(
    count: C,
    blocklength: C,
    stride: C,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    let call = name::<C>("MPI_Type_vector");
    let f = || {
        count_arg(call, "count", count)?;
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::vector(
            count.wide(),
            blocklength.wide(),
            stride.wide(),
            &old,
        )?)
    };
    // SAFETY: `newtype` is the C caller's OUT argument, as `make` requires.
    unsafe { make(call, C::WIDE, newtype, f) }
}

unsafe fn hvector<C: Count, A: Displ>(
    call: &'static str,
    count: C,
    blocklength: C,
    stride: A,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    let call = name::<C>(call);
    let f = || {
        count_arg(call, "count", count)?;
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::hvector(
            count.wide(),
            blocklength.wide(),
            stride.addr(),
            &old,
        )?)
    };
    // SAFETY: `newtype` is the C caller's OUT argument, as `make` requires.
    unsafe { make(call, C::WIDE, newtype, f) }
}

unsafe fn indexed<C: Count>(
    count: C,
    blocklens: *const C,
    displs: *const C,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    let call = name::<C>("MPI_Type_indexed");
    let f = || {
        let n = count_arg(call, "count", count)?;
        // SAFETY: MPI_Type_indexed(_c)'s `array_of_blocklengths` holds `count` = `n` counts.
        let b = unsafe { array(call, "array_of_blocklengths", blocklens, n)? };
        // SAFETY: its `array_of_displacements` holds `count` = `n` counts.
        let d = unsafe { array(call, "array_of_displacements", displs, n)? };
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::indexed(&ints(b), &ints(d), &old)?)
    };
    // SAFETY: `newtype` is the C caller's OUT argument, as `make` requires.
    unsafe { make(call, C::WIDE, newtype, f) }
}

unsafe fn hindexed<C: Count, A: Displ>(
    call: &'static str,
    count: C,
    blocklens: *const C,
    displs: *const A,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    let call = name::<C>(call);
    let f = || {
        let n = count_arg(call, "count", count)?;
        // SAFETY: MPI_Type_(create_)hindexed(_c)'s `array_of_blocklengths` holds `count` = `n` counts.
        let b = unsafe { array(call, "array_of_blocklengths", blocklens, n)? };
        // SAFETY: its `array_of_displacements` holds `count` = `n` addresses.
        let d = unsafe { array(call, "array_of_displacements", displs, n)? };
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::hindexed(&ints(b), &addrs(d), &old)?)
    };
    // SAFETY: `newtype` is the C caller's OUT argument, as `make` requires.
    unsafe { make(call, C::WIDE, newtype, f) }
}

unsafe fn indexed_block<C: Count>(
    count: C,
    blocklength: C,
    displs: *const C,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    let call = name::<C>("MPI_Type_create_indexed_block");
    let f = || {
        let n = count_arg(call, "count", count)?;
        // SAFETY: MPI_Type_create_indexed_block(_c)'s `array_of_displacements` holds `count` = `n` counts.
        let d = unsafe { array(call, "array_of_displacements", displs, n)? };
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::indexed_block(blocklength.wide(), &ints(d), &old)?)
    };
    // SAFETY: `newtype` is the C caller's OUT argument, as `make` requires.
    unsafe { make(call, C::WIDE, newtype, f) }
}

unsafe fn hindexed_block<C: Count, A: Displ>(
    count: C,
    blocklength: C,
    displs: *const A,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    let call = name::<C>("MPI_Type_create_hindexed_block");
    let f = || {
        let n = count_arg(call, "count", count)?;
        // SAFETY: MPI_Type_create_hindexed_block(_c)'s `array_of_displacements` holds `count` = `n` addresses.
        let d = unsafe { array(call, "array_of_displacements", displs, n)? };
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::hindexed_block(
            blocklength.wide(),
            &addrs(d),
            &old,
        )?)
    };
    // SAFETY: `newtype` is the C caller's OUT argument, as `make` requires.
    unsafe { make(call, C::WIDE, newtype, f) }
}

unsafe fn structure<C: Count, A: Displ>(
    call: &'static str,
    count: C,
    blocklens: *const C,
    displs: *const A,
    types: *const MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    let call = name::<C>(call);
    let f = || {
        let n = count_arg(call, "count", count)?;
        // SAFETY: MPI_Type_(create_)struct(_c)'s `array_of_blocklengths` holds `count` = `n` counts.
        let b = unsafe { array(call, "array_of_blocklengths", blocklens, n)? };
        // SAFETY: its `array_of_displacements` holds `count` = `n` addresses.
        let d = unsafe { array(call, "array_of_displacements", displs, n)? };
        // SAFETY: its `array_of_types` holds `count` = `n` handles.
        let t = unsafe { array(call, "array_of_types", types, n)? };
        let tys = t
            .iter()
            .enumerate()
            .map(|(i, &h)| datatype(h, call, &format!("array_of_types[{i}]")))
            .collect::<R<Vec<_>>>()?;
        Ok(Datatype::structure(&ints(b), &addrs(d), &tys)?)
    };
    // SAFETY: `newtype` is the C caller's OUT argument, as `make` requires.
    unsafe { make(call, C::WIDE, newtype, f) }
}

unsafe fn resized<A: Displ>(
    oldtype: MPI_Datatype,
    lb: A,
    extent: A,
    newtype: *mut MPI_Datatype,
) -> c_int {
    let call = if A::WIDE {
        name::<MPI_Count>("MPI_Type_create_resized")
    } else {
        "MPI_Type_create_resized"
    };
    let f = || {
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::resized(&old, lb.addr(), extent.addr())?)
    };
    // SAFETY: `newtype` is the C caller's OUT argument, as `make` requires.
    unsafe { make(call, A::WIDE, newtype, f) }
}

entry!(PMPI_Type_contiguous, PMPI_Type_contiguous_c, (count: CNT, oldtype: MPI_Datatype, newtype: PType) => contiguous(count, oldtype, newtype));
entry!(PMPI_Type_vector, PMPI_Type_vector_c, (count: CNT, blocklength: CNT, stride: CNT, oldtype: MPI_Datatype, newtype: PType) => vector(count, blocklength, stride, oldtype, newtype));
entry!(PMPI_Type_create_hvector, PMPI_Type_create_hvector_c, (count: CNT, blocklength: CNT, stride: ADDR, oldtype: MPI_Datatype, newtype: PType) => hvector("MPI_Type_create_hvector", count, blocklength, stride, oldtype, newtype));
entry!(PMPI_Type_indexed, PMPI_Type_indexed_c, (count: CNT, blocklens: ACNT, displs: ACNT, oldtype: MPI_Datatype, newtype: PType) => indexed(count, blocklens, displs, oldtype, newtype));
entry!(PMPI_Type_create_hindexed, PMPI_Type_create_hindexed_c, (count: CNT, blocklens: ACNT, displs: AADDR, oldtype: MPI_Datatype, newtype: PType) => hindexed("MPI_Type_create_hindexed", count, blocklens, displs, oldtype, newtype));
entry!(PMPI_Type_create_indexed_block, PMPI_Type_create_indexed_block_c, (count: CNT, blocklength: CNT, displs: ACNT, oldtype: MPI_Datatype, newtype: PType) => indexed_block(count, blocklength, displs, oldtype, newtype));
entry!(PMPI_Type_create_hindexed_block, PMPI_Type_create_hindexed_block_c, (count: CNT, blocklength: CNT, displs: AADDR, oldtype: MPI_Datatype, newtype: PType) => hindexed_block(count, blocklength, displs, oldtype, newtype));
entry!(PMPI_Type_create_struct, PMPI_Type_create_struct_c, (count: CNT, blocklens: ACNT, displs: AADDR, types: ATypes, newtype: PType) => structure("MPI_Type_create_struct", count, blocklens, displs, types, newtype));
entry!(PMPI_Type_create_resized, PMPI_Type_create_resized_c, (oldtype: MPI_Datatype, lb: ADDR, extent: ADDR, newtype: PType) => resized(oldtype, lb, extent, newtype));

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_hvector(
    count: c_int,
    blocklength: c_int,
    stride: MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `hvector` needs what MPI_Type_hvector demands of them.
    unsafe {
        hvector(
            "MPI_Type_hvector",
            count,
            blocklength,
            stride,
            oldtype,
            newtype,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_hindexed(
    count: c_int,
    blocklens: *mut c_int,
    displs: *mut MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `hindexed` needs what MPI_Type_hindexed demands of them.
    unsafe {
        hindexed(
            "MPI_Type_hindexed",
            count,
            blocklens,
            displs,
            oldtype,
            newtype,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_struct(
    count: c_int,
    blocklens: *mut c_int,
    displs: *mut MPI_Aint,
    types: *mut MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `structure` needs what MPI_Type_struct demands of them.
    unsafe { structure("MPI_Type_struct", count, blocklens, displs, types, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_dup(oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const CALL: &str = "MPI_Type_dup";
    let f = || {
        let old = datatype(oldtype, CALL, "oldtype")?;
        // The attributes' copy callbacks get `oldtype`.
        Ok(with_cb_type(oldtype, || {
            Datatype::dup_with_attributes(&old)
        })?)
    };
    // SAFETY: `newtype` is MPI_Type_dup's OUT argument, as `make` requires.
    unsafe { make(CALL, false, newtype, f) }
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
            return Err(bad(
                ErrorClass::Type,
                CALL,
                "datatype",
                "a predefined datatype cannot be freed",
            ));
        }
        let dt = state().datatypes.get(*h).cloned().ok_or_else(|| {
            bad(
                ErrorClass::Type,
                CALL,
                "datatype",
                format!("{:#x} is not a valid datatype handle (freed twice?)", *h),
            )
        })?;
        if matches!(
            dt.combiner(),
            Combiner::F90Integer | Combiner::F90Real | Combiner::F90Complex
        ) {
            return Err(bad(
                ErrorClass::Type,
                CALL,
                "datatype",
                "a type of MPI_Type_create_f90_* is predefined and cannot be freed",
            ));
        }
        // The delete callbacks run when the last handle to the datatype goes
        // (MPI_Type_get_contents hands out more handles to the same type).
        // Like MPI_Comm_free, a failing callback leaves the handle valid.
        let last = state()
            .datatypes
            .iter()
            .filter(|(_, d)| d.ptr_eq(&dt))
            .count()
            == 1;
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
    c_int::try_from(v).map_err(|_| {
        bad(
            ErrorClass::ValueTooLarge,
            call,
            arg,
            format!("{v} does not fit in an int (use the _x / _c variant)"),
        )
    })
}

// The answers of abi.txt's datatype `query` lines: the generated `PMPI_x` checks the
// OUT pointers and stores these.

/// MPI_Type_size: MPI_UNDEFINED when the size does not fit in an int.
pub fn type_size(call: &'static str, h: MPI_Datatype) -> R<c_int> {
    let s = query(call, h, |d| Ok(d.size()))?;
    Ok(c_int::try_from(s).unwrap_or(MPI_UNDEFINED))
}

fn size_wide(call: &'static str, h: MPI_Datatype) -> R<MPI_Count> {
    query(call, h, |d| Ok(d.size() as i64))
}
/// MPI_Type_size_x.
pub fn type_size_x(call: &'static str, h: MPI_Datatype) -> R<MPI_Count> {
    size_wide(call, h)
}
/// MPI_Type_size_c.
pub fn type_size_c(call: &'static str, h: MPI_Datatype) -> R<MPI_Count> {
    size_wide(call, h)
}

/// MPI_Type_get_extent: (lb, extent).
pub fn type_get_extent(call: &'static str, h: MPI_Datatype) -> R<(MPI_Aint, MPI_Aint)> {
    query(call, h, |d| Ok((d.lb(), d.extent())))
}
/// MPI_Type_get_extent_x.
pub fn type_get_extent_x(call: &'static str, h: MPI_Datatype) -> R<(MPI_Count, MPI_Count)> {
    type_get_extent(call, h).map(|(l, e)| (l as i64, e as i64))
}
/// MPI_Type_get_extent_c.
pub fn type_get_extent_c(call: &'static str, h: MPI_Datatype) -> R<(MPI_Count, MPI_Count)> {
    type_get_extent_x(call, h)
}

/// MPI_Type_get_true_extent: (true_lb, true_extent).
pub fn type_get_true_extent(call: &'static str, h: MPI_Datatype) -> R<(MPI_Aint, MPI_Aint)> {
    query(call, h, |d| Ok((d.true_lb(), d.true_extent())))
}
/// MPI_Type_get_true_extent_x.
pub fn type_get_true_extent_x(call: &'static str, h: MPI_Datatype) -> R<(MPI_Count, MPI_Count)> {
    type_get_true_extent(call, h).map(|(l, e)| (l as i64, e as i64))
}
/// MPI_Type_get_true_extent_c.
pub fn type_get_true_extent_c(call: &'static str, h: MPI_Datatype) -> R<(MPI_Count, MPI_Count)> {
    type_get_true_extent_x(call, h)
}

/// MPI_Type_extent (MPI-1).
pub fn type_extent(call: &'static str, h: MPI_Datatype) -> R<MPI_Aint> {
    query(call, h, |d| Ok(d.extent()))
}
/// MPI_Type_lb (MPI-1).
pub fn type_lb(call: &'static str, h: MPI_Datatype) -> R<MPI_Aint> {
    query(call, h, |d| Ok(d.lb()))
}
/// MPI_Type_ub (MPI-1).
pub fn type_ub(call: &'static str, h: MPI_Datatype) -> R<MPI_Aint> {
    query(call, h, |d| Ok(d.ub()))
}

/// MPI_Type_get_envelope: (num_integers, num_addresses, num_datatypes, combiner).
pub fn type_get_envelope(call: &'static str, h: MPI_Datatype) -> R<(c_int, c_int, c_int, c_int)> {
    let (i, a, d, c) = query(call, h, |d| Ok(d.envelope()))?;
    Ok((
        i as c_int,
        a as c_int,
        d as c_int,
        crate::abi::combiner_value(c),
    ))
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
            return Err(bad(
                ErrorClass::Type,
                CALL,
                "datatype",
                "a predefined datatype has no contents",
            ));
        }
        let (is, as_, ts) = dt.contents();
        for (have, max, arg) in [
            (is.len(), max_integers, "max_integers"),
            (as_.len(), max_addresses, "max_addresses"),
            (ts.len(), max_datatypes, "max_datatypes"),
        ] {
            if (max as i64) < have as i64 {
                return Err(bad(
                    ErrorClass::Arg,
                    CALL,
                    arg,
                    format!("{max} is less than the {have} entries the datatype has"),
                ));
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
pub unsafe extern "C" fn PMPI_Type_get_name(
    h: MPI_Datatype,
    name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Type_get_name";
    ffi(CALL, NO_COMM, || {
        if name.is_null() {
            return Err(bad(ErrorClass::Arg, CALL, "type_name", "is NULL"));
        }
        // SAFETY: `resultlen` is MPI_Type_get_name's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let len = unsafe { out(CALL, "resultlen", resultlen)? };
        if h == MPI_DATATYPE_NULL {
            // MPI-4.1: the null handle has a name too.
            // SAFETY: MPI_MAX_OBJECT_NAME bytes by the C contract.
            *len = unsafe { put_str(name, "MPI_DATATYPE_NULL", MPI_MAX_OBJECT_NAME as usize) };
            return Ok(());
        }
        let dt = datatype(h, CALL, "datatype")?;
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
        dt.set_name(
            &s.chars()
                .take(MPI_MAX_OBJECT_NAME as usize - 1)
                .collect::<String>(),
        );
        Ok(())
    })
}

/// MPI_Get_address (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
///
/// # Safety
/// None beyond the call's: `location` is only converted to an address, never read.
pub unsafe fn get_address(_call: &str, location: *const c_void) -> R<MPI_Aint> {
    Ok(location as MPI_Aint)
}

/// MPI_Address, MPI-1's MPI_Get_address (abi.txt `extquery`).
///
/// # Safety
/// None beyond the call's: `location` is only converted to an address, never read.
pub unsafe fn address(_call: &str, location: *mut c_void) -> R<MPI_Aint> {
    Ok(location as MPI_Aint)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    base.wrapping_add(disp)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Aint_diff(a: MPI_Aint, b: MPI_Aint) -> MPI_Aint {
    a.wrapping_sub(b)
}

// ----- subarray, darray, size matching ----------------------------------------------

fn order_arg(call: &str, order: c_int) -> R<bool> {
    match order {
        MPI_ORDER_C => Ok(false),
        MPI_ORDER_FORTRAN => Ok(true),
        o => Err(bad(
            ErrorClass::Arg,
            call,
            "order",
            format!("{o} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN"),
        )),
    }
}

fn i64s(v: &[c_int]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

unsafe fn subarray<C: Count>(
    ndims: c_int,
    sizes: *const C,
    subsizes: *const C,
    starts: *const C,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    let call = name::<C>("MPI_Type_create_subarray");
    let f = || {
        let n = count_arg(call, "ndims", ndims)?;
        // SAFETY: the three arrays hold `ndims` ints (MPI contract).
        let (sz, sub, st) = unsafe {
            (
                array(call, "array_of_sizes", sizes, n)?,
                array(call, "array_of_subsizes", subsizes, n)?,
                array(call, "array_of_starts", starts, n)?,
            )
        };
        let fortran = order_arg(call, order)?;
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::subarray(
            &ints(sz),
            &ints(sub),
            &ints(st),
            fortran,
            &old,
        )?)
    };
    // SAFETY: `newtype` is MPI_Type_create_subarray(_c)'s OUT argument, as `make` requires.
    unsafe { make(call, C::WIDE, newtype, f) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn darray<C: Count>(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    gsizes: *const C,
    distribs: *const c_int,
    dargs: *const c_int,
    psizes: *const c_int,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    let call = name::<C>("MPI_Type_create_darray");
    let f = || {
        let n = count_arg(call, "ndims", ndims)?;
        // SAFETY: the four arrays hold `ndims` ints (MPI contract).
        let (g, d, a, p) = unsafe {
            (
                array(call, "array_of_gsizes", gsizes, n)?,
                array(call, "array_of_distribs", distribs, n)?,
                array(call, "array_of_dargs", dargs, n)?,
                array(call, "array_of_psizes", psizes, n)?,
            )
        };
        let fortran = order_arg(call, order)?;
        let old = datatype(oldtype, call, "oldtype")?;
        let kinds: Vec<i32> = d
            .iter()
            .enumerate()
            .map(|(i, &x)| match x {
                MPI_DISTRIBUTE_NONE => Ok(0),
                MPI_DISTRIBUTE_BLOCK => Ok(1),
                MPI_DISTRIBUTE_CYCLIC => Ok(2),
                o => Err(bad(
                    ErrorClass::Arg,
                    call,
                    &format!("array_of_distribs[{i}]"),
                    format!("{o} is not an MPI_DISTRIBUTE_* value"),
                )),
            })
            .collect::<R<_>>()?;
        let dargs: Vec<i64> = a
            .iter()
            .map(|&x| {
                if x == MPI_DISTRIBUTE_DFLT_DARG {
                    -1
                } else {
                    x as i64
                }
            })
            .collect();
        let mut ints = vec![size as i64, rank as i64, n as i64];
        ints.extend(crate::dtype::ints(g));
        for v in [d, a, p] {
            ints.extend(i64s(v));
        }
        ints.push(order as i64);
        Ok(Datatype::darray(
            size as i64,
            rank as i64,
            &crate::dtype::ints(g),
            &kinds,
            &dargs,
            &i64s(p),
            fortran,
            &old,
            ints,
        )?)
    };
    // SAFETY: `newtype` is MPI_Type_create_darray(_c)'s OUT argument, as `make` requires.
    unsafe { make(call, C::WIDE, newtype, f) }
}

entry!(PMPI_Type_create_subarray, PMPI_Type_create_subarray_c, (ndims: c_int, sizes: ACNT, subsizes: ACNT, starts: ACNT, order: c_int, oldtype: MPI_Datatype, newtype: PType) => subarray(ndims, sizes, subsizes, starts, order, oldtype, newtype));
entry!(PMPI_Type_create_darray, PMPI_Type_create_darray_c, (size: c_int, rank: c_int, ndims: c_int, gsizes: ACNT, distribs: AInt, dargs: AInt, psizes: AInt, order: c_int, oldtype: MPI_Datatype, newtype: PType) => darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, oldtype, newtype));

/// MPI_Type_match_size: the C type of the class with that size.
/// MPI_Type_match_size (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
pub fn type_match_size(call: &'static str, typeclass: c_int, size: c_int) -> R<MPI_Datatype> {
    let candidates: &[MPI_Datatype] = match typeclass {
        MPI_TYPECLASS_INTEGER => &[MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG_LONG],
        MPI_TYPECLASS_REAL => &[MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE],
        MPI_TYPECLASS_COMPLEX => &[
            MPI_C_FLOAT_COMPLEX,
            MPI_C_DOUBLE_COMPLEX,
            MPI_C_LONG_DOUBLE_COMPLEX,
        ],
        c => {
            return Err(bad(
                ErrorClass::Arg,
                call,
                "typeclass",
                format!("{c} is not an MPI_TYPECLASS_* value"),
            ))
        }
    };
    let found = candidates
        .iter()
        .copied()
        .find(|&h| crate::abi::primitive_from_handle(h).is_some_and(|p| p.size() as c_int == size));
    found.ok_or_else(|| {
        bad(
            ErrorClass::Arg,
            call,
            "size",
            format!("no type of this class has {size} bytes"),
        )
    })
}

/// The contents of a datatype as the large-count queries see them: (integers,
/// addresses, large counts, datatypes). A type made by a `_c` constructor
/// reports its counts and displacements as large counts, in the order the
/// standard gives for its combiner; others as MPI_Type_get_contents does.
fn contents_c(dt: &Datatype) -> (Vec<i64>, Vec<isize>, Vec<i64>, Vec<Datatype>) {
    let (is, as_, ts) = dt.contents();
    if !dt.is_large_count() {
        return (is, as_, vec![], ts);
    }
    match dt.combiner() {
        // integers: ndims, order; large counts: sizes, subsizes, starts.
        Combiner::Subarray if !is.is_empty() => (
            vec![is[0], is[is.len() - 1]],
            vec![],
            is[1..is.len() - 1].to_vec(),
            ts,
        ),
        // integers: size, rank, ndims, distribs, dargs, psizes, order; large counts: gsizes.
        Combiner::Darray if is.len() >= 4 => {
            let n = is[2].max(0) as usize;
            let mut ints = is[..3].to_vec();
            ints.extend_from_slice(&is[3 + n..]);
            (ints, vec![], is[3..3 + n].to_vec(), ts)
        }
        // Everything else: the counts, then the displacements, all as large counts.
        _ => {
            let mut large = is;
            large.extend(as_.iter().map(|&a| a as i64));
            (vec![], vec![], large, ts)
        }
    }
}

/// MPI_Type_get_envelope_c (abi.txt `query`: the generated `PMPI_x` checks and stores the
/// OUTs): the numbers of integers, addresses, large counts and datatypes, and the combiner.
pub fn type_get_envelope_c(
    call: &'static str,
    h: MPI_Datatype,
) -> R<(MPI_Count, MPI_Count, MPI_Count, MPI_Count, c_int)> {
    let dt = datatype(h, call, "datatype")?;
    let (is, as_, ls, ts) = contents_c(&dt);
    Ok((
        is.len() as MPI_Count,
        as_.len() as MPI_Count,
        ls.len() as MPI_Count,
        ts.len() as MPI_Count,
        crate::abi::combiner_value(dt.combiner()),
    ))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_contents_c(
    h: MPI_Datatype,
    max_integers: MPI_Count,
    max_addresses: MPI_Count,
    max_large_counts: MPI_Count,
    max_datatypes: MPI_Count,
    array_of_integers: *mut c_int,
    array_of_addresses: *mut MPI_Aint,
    array_of_large_counts: *mut MPI_Count,
    array_of_datatypes: *mut MPI_Datatype,
) -> c_int {
    const CALL: &str = "MPI_Type_get_contents_c";
    ffi(CALL, NO_COMM, || {
        let dt = datatype(h, CALL, "datatype")?;
        if dt.combiner() == Combiner::Named {
            return Err(bad(
                ErrorClass::Type,
                CALL,
                "datatype",
                "a predefined datatype has no contents",
            ));
        }
        let (is, as_, ls, ts) = contents_c(&dt);
        for (have, max, arg) in [
            (is.len(), max_integers, "max_integers"),
            (as_.len(), max_addresses, "max_addresses"),
            (ls.len(), max_large_counts, "max_large_counts"),
            (ts.len(), max_datatypes, "max_datatypes"),
        ] {
            if max < have as i64 {
                return Err(bad(
                    ErrorClass::Arg,
                    CALL,
                    arg,
                    format!("{max} is less than the {have} entries the datatype has"),
                ));
            }
        }
        let ints = is
            .iter()
            .map(|&v| to_int(CALL, "array_of_integers", v))
            .collect::<R<Vec<c_int>>>()?;
        // SAFETY: MPI_Type_get_contents_c's OUT arrays hold at least max_* >= the lengths written (checked above); NULL only where nothing is written.
        let (oi, oa, ol, od) = unsafe {
            (
                crate::conv::errors::array_mut(
                    CALL,
                    "array_of_integers",
                    array_of_integers,
                    ints.len(),
                )?,
                crate::conv::errors::array_mut(
                    CALL,
                    "array_of_addresses",
                    array_of_addresses,
                    as_.len(),
                )?,
                crate::conv::errors::array_mut(
                    CALL,
                    "array_of_large_counts",
                    array_of_large_counts,
                    ls.len(),
                )?,
                crate::conv::errors::array_mut(
                    CALL,
                    "array_of_datatypes",
                    array_of_datatypes,
                    ts.len(),
                )?,
            )
        };
        oi.copy_from_slice(&ints);
        oa.copy_from_slice(&as_);
        ol.copy_from_slice(&ls);
        for (o, t) in od.iter_mut().zip(&ts) {
            *o = new_handle(t);
        }
        Ok(())
    })
}
