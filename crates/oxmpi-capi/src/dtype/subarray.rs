//! Subarray and darray constructors, size matching.

use super::*;

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

/// MPI_Type_create_subarray(_c) (abi.txt `made(newtype)`, `array(P, ndims)`: the
/// generated `PMPI_x` checks `newtype`, `ndims` and the arrays first).
#[allow(clippy::too_many_arguments)]
pub fn type_create_subarray<C: Count>(
    call: &'static str,
    _ndims: c_int,
    sz: &[C],
    sub: &[C],
    st: &[C],
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> R<()> {
    made(C::WIDE, newtype, || {
        let fortran = order_arg(call, order)?;
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::subarray(
            &ints(sz),
            &ints(sub),
            &ints(st),
            fortran,
            &old,
        )?)
    })
}
pub use self::type_create_subarray as type_create_subarray_c;

/// MPI_Type_create_darray(_c) (abi.txt `made(newtype)`, `array(P, ndims)`: the
/// generated `PMPI_x` checks `newtype`, `ndims` and the arrays first).
#[allow(clippy::too_many_arguments)]
pub fn type_create_darray<C: Count>(
    call: &'static str,
    size: c_int,
    rank: c_int,
    ndims: c_int,
    g: &[C],
    d: &[c_int],
    a: &[c_int],
    p: &[c_int],
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> R<()> {
    let n = ndims as usize;
    made(C::WIDE, newtype, || {
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
    })
}
pub use self::type_create_darray as type_create_darray_c;

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
