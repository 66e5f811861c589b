//! Queries: sizes, extents, envelope and contents (int and large-count), names,
//! addresses.

use super::*;

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

/// MPI_Type_get_name (abi.txt `out(resultlen) nonnull(type_name)`: the generated `PMPI_x` checks `type_name`, `resultlen` first).
///
/// # Safety
/// The C caller's arguments of MPI_Type_get_name, as MPI defines them.
pub unsafe fn type_get_name(
    call: &'static str,
    h: MPI_Datatype,
    name: *mut c_char,
    len: &mut c_int,
) -> R<()> {
    if h == MPI_DATATYPE_NULL {
        // MPI-4.1: the null handle has a name too.
        // SAFETY: MPI_MAX_OBJECT_NAME bytes by the C contract.
        *len = unsafe { put_str(name, "MPI_DATATYPE_NULL", MPI_MAX_OBJECT_NAME as usize) };
        return Ok(());
    }
    let dt = datatype(h, call, "datatype")?;
    // SAFETY: MPI_MAX_OBJECT_NAME bytes by the C contract.
    *len = unsafe { put_str(name, &dt.name(), MPI_MAX_OBJECT_NAME as usize) };
    Ok(())
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
