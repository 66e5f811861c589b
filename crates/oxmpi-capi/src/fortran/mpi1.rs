//! MPI-1 procedures with INTEGER addresses.

use super::*;

// ----- MPI-1 procedures with INTEGER addresses -------------------------------------------
//
// MPI-1's Fortran binding of MPI_TYPE_HVECTOR, MPI_TYPE_HINDEXED, MPI_TYPE_STRUCT,
// MPI_ADDRESS, MPI_TYPE_EXTENT, MPI_TYPE_LB and MPI_TYPE_UB takes and returns
// addresses as default INTEGERs (MPI-2 added the INTEGER(KIND=MPI_ADDRESS_KIND)
// successors MPI_TYPE_CREATE_HVECTOR & co.): they are widened on the way in, and
// a result that does not fit an INTEGER is an error naming the successor.

/// Widens `n` Fortran INTEGER displacements (none when `n` is negative or the
/// array is absent: the C call then reports the bad count).
///
/// # Safety
/// `p` is NULL or points to `n` INTEGERs.
unsafe fn widen(p: *const c_int, n: c_int) -> Vec<MPI_Aint> {
    if p.is_null() || n <= 0 {
        return vec![];
    }
    // SAFETY: the caller's array of `n` INTEGERs (see above).
    unsafe { std::slice::from_raw_parts(p, n as usize) }
        .iter()
        .map(|&d| d as MPI_Aint)
        .collect()
}

#[no_mangle]
pub unsafe extern "C" fn pmpi_type_hvector_(
    count: *const c_int,
    blocklength: *const c_int,
    stride: *const c_int,
    oldtype: *const c_int,
    newtype: *mut c_int,
    ierror: *mut c_int,
) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's INTEGERs.
    unsafe {
        let mut h: MPI_Datatype = MPI_DATATYPE_NULL;
        let rc = crate::pmpi::PMPI_Type_hvector(
            *count,
            *blocklength,
            *stride as MPI_Aint,
            crate::pmpi::PMPI_Type_f2c(*oldtype),
            &mut h,
        );
        if rc == MPI_SUCCESS {
            *newtype = crate::pmpi::PMPI_Type_c2f(h);
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_type_hvector_(
    count: *const c_int,
    blocklength: *const c_int,
    stride: *const c_int,
    oldtype: *const c_int,
    newtype: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: same contract.
    unsafe { pmpi_type_hvector_(count, blocklength, stride, oldtype, newtype, ierror) }
}

#[no_mangle]
pub unsafe extern "C" fn pmpi_type_hindexed_(
    count: *const c_int,
    blocklens: *mut c_int,
    displs: *const c_int,
    oldtype: *const c_int,
    newtype: *mut c_int,
    ierror: *mut c_int,
) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's INTEGERs and arrays of COUNT INTEGERs.
    unsafe {
        let mut d = widen(displs, *count);
        let dp = if displs.is_null() {
            std::ptr::null_mut()
        } else {
            d.as_mut_ptr()
        };
        let mut h: MPI_Datatype = MPI_DATATYPE_NULL;
        let rc = crate::pmpi::PMPI_Type_hindexed(
            *count,
            blocklens,
            dp,
            crate::pmpi::PMPI_Type_f2c(*oldtype),
            &mut h,
        );
        if rc == MPI_SUCCESS {
            *newtype = crate::pmpi::PMPI_Type_c2f(h);
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_type_hindexed_(
    count: *const c_int,
    blocklens: *mut c_int,
    displs: *const c_int,
    oldtype: *const c_int,
    newtype: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: same contract.
    unsafe { pmpi_type_hindexed_(count, blocklens, displs, oldtype, newtype, ierror) }
}

#[no_mangle]
pub unsafe extern "C" fn pmpi_type_struct_(
    count: *const c_int,
    blocklens: *mut c_int,
    displs: *const c_int,
    types: *const c_int,
    newtype: *mut c_int,
    ierror: *mut c_int,
) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's INTEGERs and arrays of COUNT INTEGERs.
    unsafe {
        let mut d = widen(displs, *count);
        let dp = if displs.is_null() {
            std::ptr::null_mut()
        } else {
            d.as_mut_ptr()
        };
        let mut t: Vec<MPI_Datatype> = if types.is_null() || *count <= 0 {
            vec![]
        } else {
            std::slice::from_raw_parts(types, *count as usize)
                .iter()
                .map(|&f| crate::pmpi::PMPI_Type_f2c(f))
                .collect()
        };
        let tp = if types.is_null() {
            std::ptr::null_mut()
        } else {
            t.as_mut_ptr()
        };
        let mut h: MPI_Datatype = MPI_DATATYPE_NULL;
        let rc = crate::pmpi::PMPI_Type_struct(*count, blocklens, dp, tp, &mut h);
        if rc == MPI_SUCCESS {
            *newtype = crate::pmpi::PMPI_Type_c2f(h);
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_type_struct_(
    count: *const c_int,
    blocklens: *mut c_int,
    displs: *const c_int,
    types: *const c_int,
    newtype: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: same contract.
    unsafe { pmpi_type_struct_(count, blocklens, displs, types, newtype, ierror) }
}

/// Narrows an address-sized result to the caller's INTEGER, or fails naming
/// `call`'s ADDRESS_KIND successor.
///
/// # Safety
/// `out` is NULL or the caller's INTEGER.
unsafe fn narrow(
    call: &'static str,
    arg: &'static str,
    successor: &str,
    v: MPI_Aint,
    out: *mut c_int,
) -> c_int {
    match c_int::try_from(v) {
        Ok(n) => {
            if !out.is_null() {
                // SAFETY: the caller's INTEGER (checked non-NULL).
                unsafe { *out = n };
            }
            MPI_SUCCESS
        }
        Err(_) => crate::conv::errors::ffi(call, crate::conv::errors::NO_COMM, || {
            Err(crate::conv::errors::bad(
                oxmpi_core::error::ErrorClass::Arg,
                call,
                arg,
                format!("the value {v} does not fit a default INTEGER: use {successor}, whose argument is INTEGER(KIND=MPI_ADDRESS_KIND)"),
            ))
        }),
    }
}

macro_rules! fortran_int_query {
    ($p:ident, $m:ident, $c:ident, $call:literal, $arg:literal, $succ:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $p(datatype: *const c_int, out: *mut c_int, ierror: *mut c_int) {
            let _fortran = crate::conv::errors::FortranCall::enter();
            // SAFETY: the Fortran caller's INTEGERs.
            unsafe {
                let mut v: MPI_Aint = 0;
                let mut rc = crate::pmpi::$c(crate::pmpi::PMPI_Type_f2c(*datatype), &mut v);
                if rc == MPI_SUCCESS {
                    rc = narrow($call, $arg, $succ, v, out);
                }
                set_ierror(ierror, rc);
            }
        }
        #[no_mangle]
        pub unsafe extern "C" fn $m(datatype: *const c_int, out: *mut c_int, ierror: *mut c_int) {
            // SAFETY: same contract.
            unsafe { $p(datatype, out, ierror) }
        }
    };
}
fortran_int_query!(
    pmpi_type_extent_,
    mpi_type_extent_,
    PMPI_Type_extent,
    "MPI_Type_extent",
    "extent",
    "MPI_TYPE_GET_EXTENT"
);
fortran_int_query!(
    pmpi_type_lb_,
    mpi_type_lb_,
    PMPI_Type_lb,
    "MPI_Type_lb",
    "displacement",
    "MPI_TYPE_GET_EXTENT"
);
fortran_int_query!(
    pmpi_type_ub_,
    mpi_type_ub_,
    PMPI_Type_ub,
    "MPI_Type_ub",
    "displacement",
    "MPI_TYPE_GET_EXTENT"
);

#[no_mangle]
pub unsafe extern "C" fn pmpi_address_(
    location: *mut c_void,
    address: *mut c_int,
    ierror: *mut c_int,
) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's arguments; only the location's address is used.
    unsafe {
        let mut v: MPI_Aint = 0;
        let mut rc = crate::pmpi::PMPI_Address(buf(location), &mut v);
        if rc == MPI_SUCCESS {
            rc = narrow("MPI_Address", "address", "MPI_GET_ADDRESS", v, address);
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_address_(
    location: *mut c_void,
    address: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: same contract.
    unsafe { pmpi_address_(location, address, ierror) }
}
