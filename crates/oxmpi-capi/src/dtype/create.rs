//! Constructors (with the MPI-1 names as extensions), dup, commit, free.

use super::*;

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
