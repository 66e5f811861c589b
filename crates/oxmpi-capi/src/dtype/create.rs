//! Constructors (with the MPI-1 names as extensions), dup, commit, free.

use super::*;

// The constructors' `PMPI_x` (`int` and `_c` forms, and the MPI-1 names) are generated
// from abi.txt's `made(newtype)` and `array(P, count)` annotations: `newtype` is checked
// first and holds MPI_DATATYPE_NULL until the constructor succeeds, then `count` and each
// array; the bodies below get the arrays as slices, generic in the count and
// displacement widths (an `_c` name is the same function).

/// MPI_Type_contiguous(_c).
pub fn type_contiguous<C: Count>(
    call: &'static str,
    count: C,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> R<()> {
    made(C::WIDE, newtype, || {
        count_arg(call, "count", count)?;
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::contiguous(count.wide(), &old)?)
    })
}
pub use self::type_contiguous as type_contiguous_c;

/// MPI_Type_vector(_c).
pub fn type_vector<C: Count>(
    call: &'static str,
    count: C,
    blocklength: C,
    stride: C,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> R<()> {
    made(C::WIDE, newtype, || {
        count_arg(call, "count", count)?;
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::vector(
            count.wide(),
            blocklength.wide(),
            stride.wide(),
            &old,
        )?)
    })
}
pub use self::type_vector as type_vector_c;

/// MPI_Type_create_hvector(_c), MPI_Type_hvector.
pub fn type_create_hvector<C: Count, A: Displ>(
    call: &'static str,
    count: C,
    blocklength: C,
    stride: A,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> R<()> {
    made(C::WIDE, newtype, || {
        count_arg(call, "count", count)?;
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::hvector(
            count.wide(),
            blocklength.wide(),
            stride.addr(),
            &old,
        )?)
    })
}
pub use self::type_create_hvector as type_create_hvector_c;
pub use self::type_create_hvector as type_hvector;

/// MPI_Type_indexed(_c).
pub fn type_indexed<C: Count>(
    call: &'static str,
    _count: C,
    blocklens: &[C],
    displs: &[C],
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> R<()> {
    made(C::WIDE, newtype, || {
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::indexed(&ints(blocklens), &ints(displs), &old)?)
    })
}
pub use self::type_indexed as type_indexed_c;

/// MPI_Type_create_hindexed(_c), MPI_Type_hindexed.
pub fn type_create_hindexed<C: Count, A: Displ>(
    call: &'static str,
    _count: C,
    blocklens: &[C],
    displs: &[A],
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> R<()> {
    made(C::WIDE, newtype, || {
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::hindexed(&ints(blocklens), &addrs(displs), &old)?)
    })
}
pub use self::type_create_hindexed as type_create_hindexed_c;
pub use self::type_create_hindexed as type_hindexed;

/// MPI_Type_create_indexed_block(_c).
pub fn type_create_indexed_block<C: Count>(
    call: &'static str,
    _count: C,
    blocklength: C,
    displs: &[C],
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> R<()> {
    made(C::WIDE, newtype, || {
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::indexed_block(
            blocklength.wide(),
            &ints(displs),
            &old,
        )?)
    })
}
pub use self::type_create_indexed_block as type_create_indexed_block_c;

/// MPI_Type_create_hindexed_block(_c).
pub fn type_create_hindexed_block<C: Count, A: Displ>(
    call: &'static str,
    _count: C,
    blocklength: C,
    displs: &[A],
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> R<()> {
    made(C::WIDE, newtype, || {
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::hindexed_block(
            blocklength.wide(),
            &addrs(displs),
            &old,
        )?)
    })
}
pub use self::type_create_hindexed_block as type_create_hindexed_block_c;

/// MPI_Type_create_struct(_c), MPI_Type_struct.
pub fn type_create_struct<C: Count, A: Displ>(
    call: &'static str,
    _count: C,
    blocklens: &[C],
    displs: &[A],
    types: &[MPI_Datatype],
    newtype: &mut MPI_Datatype,
) -> R<()> {
    made(C::WIDE, newtype, || {
        let tys = types
            .iter()
            .enumerate()
            .map(|(i, &h)| datatype(h, call, &format!("array_of_types[{i}]")))
            .collect::<R<Vec<_>>>()?;
        Ok(Datatype::structure(&ints(blocklens), &addrs(displs), &tys)?)
    })
}
pub use self::type_create_struct as type_create_struct_c;
pub use self::type_create_struct as type_struct;

/// MPI_Type_create_resized(_c).
pub fn type_create_resized<A: Displ>(
    call: &'static str,
    oldtype: MPI_Datatype,
    lb: A,
    extent: A,
    newtype: &mut MPI_Datatype,
) -> R<()> {
    made(A::WIDE, newtype, || {
        let old = datatype(oldtype, call, "oldtype")?;
        Ok(Datatype::resized(&old, lb.addr(), extent.addr())?)
    })
}
pub use self::type_create_resized as type_create_resized_c;

/// MPI_Type_dup.
pub fn type_dup(call: &'static str, oldtype: MPI_Datatype, newtype: &mut MPI_Datatype) -> R<()> {
    made(false, newtype, || {
        let old = datatype(oldtype, call, "oldtype")?;
        // The attributes' copy callbacks get `oldtype`.
        Ok(with_cb_type(oldtype, || {
            Datatype::dup_with_attributes(&old)
        })?)
    })
}

/// MPI_Type_commit (abi.txt `out(datatype)`: the generated `PMPI_x` checks `datatype` first).
pub fn type_commit(call: &'static str, h: &mut MPI_Datatype) -> R<()> {
    datatype(*h, call, "datatype")?.commit();
    Ok(())
}

/// MPI_Type_free (abi.txt `out(datatype)`: the generated `PMPI_x` checks `datatype` first).
pub fn type_free(call: &'static str, h: &mut MPI_Datatype) -> R<()> {
    if *h < 4096 {
        datatype(*h, call, "datatype")?;
        return Err(bad(
            ErrorClass::Type,
            call,
            "datatype",
            "a predefined datatype cannot be freed",
        ));
    }
    let dt = state().datatypes.get(*h).cloned().ok_or_else(|| {
        bad(
            ErrorClass::Type,
            call,
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
            call,
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
        with_cb_type(*h, || dt.attrs().clear(call))?;
    }
    state().datatypes.remove(*h);
    *h = MPI_DATATYPE_NULL;
    Ok(())
}
