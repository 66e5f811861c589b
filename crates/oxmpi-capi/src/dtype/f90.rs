//! Fortran 90 parameterized types and value-index pair types.
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement (arrays of the length the standard gives, OUT
//! arguments writable and aliasing no other argument).

use std::ffi::c_int;

use oxmpi_core::datatype::{Combiner, Datatype, Primitive};
use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::conv::datatype;
use crate::conv::errors::{bad, R};
use crate::conv::handles::state;
use crate::types::*;

// ----- Fortran 90 parameterized types and value-index pairs ----------------------------------

/// A handle for an F90 type: a handle of its own (so its envelope reports the
/// F90 combiner), the same one for the same parameters while it lives.
fn f90_handle(dt: Datatype) -> MPI_Datatype {
    let found = state()
        .datatypes
        .iter()
        .find(|(_, d)| d.ptr_eq(&dt))
        .map(|(h, _)| h);
    found.unwrap_or_else(|| state().datatypes.insert(dt))
}

/// MPI_Type_create_f90_integer (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
pub fn type_create_f90_integer(call: &'static str, r: c_int) -> R<MPI_Datatype> {
    // SELECTED_INT_KIND(r): the smallest integer holding -10^r < n < 10^r.
    let p = match r {
        i32::MIN..=-1 => return Err(bad(ErrorClass::Arg, call, "r", format!("{r} is negative"))),
        0..=2 => Primitive::Integer1,
        3..=4 => Primitive::Integer2,
        5..=9 => Primitive::Integer4,
        10..=18 => Primitive::Integer8,
        _ => {
            return Err(bad(
                ErrorClass::Arg,
                call,
                "r",
                format!("no integer kind has a decimal range of {r} (at most 18)"),
            ))
        }
    };
    Ok(f90_handle(Datatype::f90(
        Combiner::F90Integer,
        p,
        &[r as i64],
    )))
}

/// SELECTED_REAL_KIND(p, r): 4-byte reals hold 6 digits and exponents to 37,
/// 8-byte ones 15 and 307. MPI_UNDEFINED leaves that parameter free.
fn real_kind(call: &str, p: c_int, r: c_int) -> R<bool> {
    let pp = if p == MPI_UNDEFINED { 0 } else { p };
    let rr = if r == MPI_UNDEFINED { 0 } else { r };
    if p == MPI_UNDEFINED && r == MPI_UNDEFINED {
        return Err(bad(
            ErrorClass::Arg,
            call,
            "p",
            "p and r are both MPI_UNDEFINED",
        ));
    }
    if pp < 0 || rr < 0 {
        return Err(bad(
            ErrorClass::Arg,
            call,
            if pp < 0 { "p" } else { "r" },
            "is negative",
        ));
    }
    if pp <= 6 && rr <= 37 {
        Ok(false)
    } else if pp <= 15 && rr <= 307 {
        Ok(true)
    } else {
        Err(bad(
            ErrorClass::Arg,
            call,
            "p",
            format!(
                "no real kind has precision {p} and range {r} (at most 15 digits, exponent 307)"
            ),
        ))
    }
}

/// MPI_Type_create_f90_real (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
pub fn type_create_f90_real(call: &'static str, p: c_int, r: c_int) -> R<MPI_Datatype> {
    let base = if real_kind(call, p, r)? {
        Primitive::Real8
    } else {
        Primitive::Real4
    };
    Ok(f90_handle(Datatype::f90(
        Combiner::F90Real,
        base,
        &[p as i64, r as i64],
    )))
}

/// MPI_Type_create_f90_complex (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
pub fn type_create_f90_complex(call: &'static str, p: c_int, r: c_int) -> R<MPI_Datatype> {
    let base = if real_kind(call, p, r)? {
        Primitive::Complex16
    } else {
        Primitive::Complex8
    };
    Ok(f90_handle(Datatype::f90(
        Combiner::F90Complex,
        base,
        &[p as i64, r as i64],
    )))
}

/// MPI_Type_get_value_index (abi.txt `out(pair_type)`: the generated `PMPI_x` checks `pair_type` first).
pub fn type_get_value_index(
    call: &'static str,
    value_type: MPI_Datatype,
    index_type: MPI_Datatype,
    o: &mut MPI_Datatype,
) -> R<()> {
    let v = datatype(value_type, call, "value_type")?;
    let i = datatype(index_type, call, "index_type")?;
    // The predefined pairs MPI_MINLOC/MPI_MAXLOC know.
    let pairs: &[(MPI_Datatype, MPI_Datatype, MPI_Datatype)] = &[
        (MPI_FLOAT, MPI_INT, MPI_FLOAT_INT),
        (MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT),
        (MPI_LONG, MPI_INT, MPI_LONG_INT),
        (MPI_INT, MPI_INT, MPI_2INT),
        (MPI_SHORT, MPI_INT, MPI_SHORT_INT),
        (MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT),
        (MPI_REAL, MPI_REAL, MPI_2REAL),
        (
            MPI_DOUBLE_PRECISION,
            MPI_DOUBLE_PRECISION,
            MPI_2DOUBLE_PRECISION,
        ),
        (MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER),
    ];
    if let Some(&(_, _, p)) = pairs
        .iter()
        .find(|&&(a, b, _)| a == value_type && b == index_type)
    {
        *o = p;
        return Ok(());
    }
    // No predefined pair: MPI_DATATYPE_NULL (as MPICH answers; the
    // reductions MPI_MINLOC/MPI_MAXLOC only know the predefined pairs).
    let _ = (v, i);
    *o = MPI_DATATYPE_NULL;
    Ok(())
}
