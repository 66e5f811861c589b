//! Status queries (MPI_Get_count, MPI_Get_elements) and setters (MPI_Status_set_*).

use super::*;

// ----- status queries ---------------------------------------------------------------

// The answers of abi.txt's status `query` lines: the generated `PMPI_x` checks the
// OUT pointer and stores them.

/// # Safety
/// `status` is NULL or points to a readable `MPI_Status` (the C caller's IN argument).
unsafe fn count_of<C: Count>(
    call: &'static str,
    status: *const MPI_Status,
    h: MPI_Datatype,
    elements: bool,
) -> R<C> {
    // SAFETY: `status` is the call's IN status: NULL (rejected) or readable.
    let s = unsafe { status_ref(call, status)? };
    let dt = datatype(h, call, "datatype")?;
    let b = status_bytes(s);
    Ok(undefined_or(if elements {
        dt.get_elements(b)
    } else {
        dt.get_count(b)
    }))
}

/// MPI_Get_count.
///
/// # Safety
/// As `count_of`.
pub unsafe fn get_count(
    call: &'static str,
    status: *const MPI_Status,
    h: MPI_Datatype,
) -> R<c_int> {
    // SAFETY: forwarded contract.
    unsafe { count_of(call, status, h, false) }
}
/// MPI_Get_count_c.
///
/// # Safety
/// As `count_of`.
pub unsafe fn get_count_c(
    call: &'static str,
    status: *const MPI_Status,
    h: MPI_Datatype,
) -> R<MPI_Count> {
    // SAFETY: forwarded contract.
    unsafe { count_of(call, status, h, false) }
}
/// MPI_Get_elements.
///
/// # Safety
/// As `count_of`.
pub unsafe fn get_elements(
    call: &'static str,
    status: *const MPI_Status,
    h: MPI_Datatype,
) -> R<c_int> {
    // SAFETY: forwarded contract.
    unsafe { count_of(call, status, h, true) }
}
/// MPI_Get_elements_c.
///
/// # Safety
/// As `count_of`.
pub unsafe fn get_elements_c(
    call: &'static str,
    status: *const MPI_Status,
    h: MPI_Datatype,
) -> R<MPI_Count> {
    // SAFETY: forwarded contract.
    unsafe { count_of(call, status, h, true) }
}
/// MPI_Get_elements_x.
///
/// # Safety
/// As `count_of`.
pub unsafe fn get_elements_x(
    call: &'static str,
    status: *const MPI_Status,
    h: MPI_Datatype,
) -> R<MPI_Count> {
    // SAFETY: forwarded contract.
    unsafe { count_of(call, status, h, true) }
}

/// # Safety
/// `status` is NULL or valid to read and write one `MPI_Status`, unaliased (the C caller's argument).
unsafe fn set_elements(call: &str, status: *mut MPI_Status, h: MPI_Datatype, count: i64) -> R<()> {
    // SAFETY: `status` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
    let s = unsafe { out(call, "status", status)? };
    let dt = datatype(h, call, "datatype")?;
    if count < 0 {
        return Err(bad(
            ErrorClass::Count,
            call,
            "count",
            format!("{count} is negative"),
        ));
    }
    // Bytes of `count` basic elements: whole elements of the type, then the
    // leading basic elements of one more.
    let basic_per = dt.get_elements(dt.size()).unwrap_or(1).max(1) as i64;
    let whole = count / basic_per;
    let mut rem = count % basic_per;
    let mut bytes = whole * dt.size() as i64;
    for (p, k) in dt.signature_runs(1) {
        if rem == 0 {
            break;
        }
        let per = if p.size() > 0 {
            dt.get_elements(p.size()).map(|_| 1).unwrap_or(1)
        } else {
            1
        };
        let take = (k as i64).min(rem / per.max(1));
        bytes += take * p.size() as i64;
        rem -= take;
    }
    let fake = Status {
        source: s.MPI_SOURCE,
        tag: s.MPI_TAG,
        error: s.MPI_ERROR,
        count_bytes: bytes as usize,
        cancelled: s.MPI_internal[2] != 0,
    };
    fill(s, &fake);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_elements(
    status: *mut MPI_Status,
    h: MPI_Datatype,
    count: c_int,
) -> c_int {
    // SAFETY: `status` is MPI_Status_set_elements's INOUT argument, as `set_elements` requires.
    ffi("MPI_Status_set_elements", NO_COMM, || unsafe {
        set_elements("MPI_Status_set_elements", status, h, count as i64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_elements_c(
    status: *mut MPI_Status,
    h: MPI_Datatype,
    count: MPI_Count,
) -> c_int {
    // SAFETY: `status` is MPI_Status_set_elements_c's INOUT argument, as `set_elements` requires.
    ffi("MPI_Status_set_elements_c", NO_COMM, || unsafe {
        set_elements("MPI_Status_set_elements_c", status, h, count)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_elements_x(
    status: *mut MPI_Status,
    h: MPI_Datatype,
    count: MPI_Count,
) -> c_int {
    // SAFETY: `status` is MPI_Status_set_elements_x's INOUT argument, as `set_elements` requires.
    ffi("MPI_Status_set_elements_x", NO_COMM, || unsafe {
        set_elements("MPI_Status_set_elements_x", status, h, count)
    })
}

/// MPI_Status_set_cancelled (abi.txt `out(status)`: the generated `PMPI_x` checks `status` first).
pub fn status_set_cancelled(_call: &'static str, s: &mut MPI_Status, flag: c_int) -> R<()> {
    s.MPI_internal[2] = (flag != 0) as c_int;
    Ok(())
}
