//! Info objects (MPI_INFO_ENV's contents: `conv::env_info`).

use std::ffi::{c_char, c_int};

use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::conv::errors::{bad, ffi, NO_COMM, R};
use crate::conv::handles::state;
use crate::conv::{env_info, get_str, put_str, with_info};
use crate::types::*;

// ----- info objects -----------------------------------------------------------------------

/// MPI_Info_create (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
pub fn info_create(_call: &'static str) -> R<MPI_Info> {
    Ok(state().infos.insert(Vec::new()))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_set(
    info: MPI_Info,
    key: *const c_char,
    value: *const c_char,
) -> c_int {
    const CALL: &str = "MPI_Info_set";
    ffi(CALL, NO_COMM, || {
        // SAFETY: MPI_Info_set's `key` is a NUL-terminated C string (or NULL, rejected).
        let k = unsafe { get_str(CALL, "key", key)? }.to_string();
        // SAFETY: MPI_Info_set's `value` is a NUL-terminated C string (or NULL, rejected).
        let v = unsafe { get_str(CALL, "value", value)? }.to_string();
        if k.is_empty() || k.len() >= MPI_MAX_INFO_KEY as usize {
            return Err(crate::conv::errors::bad_code(
                MPI_ERR_INFO_KEY,
                CALL,
                "key",
                "is empty or longer than MPI_MAX_INFO_KEY",
            ));
        }
        with_info(CALL, info, |kv| {
            match kv.iter_mut().find(|(a, _)| *a == k) {
                Some(e) => e.1 = v,
                None => kv.push((k, v)),
            }
            Ok(())
        })
    })
}

/// MPI_Info_get_string (abi.txt `out(buflen, flag)`: the generated `PMPI_x` checks `buflen`, `flag` first).
///
/// # Safety
/// The C caller's arguments of MPI_Info_get_string, as MPI defines them.
pub unsafe fn info_get_string(
    call: &'static str,
    info: MPI_Info,
    key: *const c_char,
    bl: &mut c_int,
    value: *mut c_char,
    f: &mut c_int,
) -> R<()> {
    // SAFETY: MPI_Info_get_string's `key` is a NUL-terminated C string (or NULL, rejected).
    let k = unsafe { get_str(call, "key", key)? }.to_string();
    let found = with_info(call, info, |kv| {
        Ok(kv.iter().find(|(a, _)| *a == k).map(|(_, v)| v.clone()))
    })?;
    match found {
        None => *f = 0,
        Some(v) => {
            *f = 1;
            if *bl > 0 && !value.is_null() {
                // SAFETY: `*bl` bytes by the C contract.
                unsafe { put_str(value, &v, *bl as usize) };
            }
            *bl = v.len() as c_int + 1;
        }
    }
    Ok(())
}

/// The answer of MPI_Info_get_nkeys (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn info_get_nkeys(call: &str, info: MPI_Info) -> R<c_int> {
    with_info(call, info, |kv| Ok(kv.len() as c_int))
}

/// MPI_Info_get_nthkey (abi.txt `nonnull(key)`: the generated `PMPI_x` checks `key` first).
///
/// # Safety
/// The C caller's arguments of MPI_Info_get_nthkey, as MPI defines them.
pub unsafe fn info_get_nthkey(
    call: &'static str,
    info: MPI_Info,
    n: c_int,
    key: *mut c_char,
) -> R<()> {
    let k = with_info(call, info, |kv| {
        usize::try_from(n)
            .ok()
            .and_then(|i| kv.get(i))
            .map(|(k, _)| k.clone())
            .ok_or_else(|| {
                bad(
                    ErrorClass::Arg,
                    call,
                    "n",
                    format!("{n} is not in 0..{}", kv.len()),
                )
            })
    })?;
    // SAFETY: MPI_MAX_INFO_KEY bytes by the C contract.
    unsafe { put_str(key, &k, MPI_MAX_INFO_KEY as usize) };
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_delete(info: MPI_Info, key: *const c_char) -> c_int {
    const CALL: &str = "MPI_Info_delete";
    ffi(CALL, NO_COMM, || {
        // SAFETY: MPI_Info_delete's `key` is a NUL-terminated C string (or NULL, rejected).
        let k = unsafe { get_str(CALL, "key", key)? }.to_string();
        with_info(CALL, info, |kv| {
            let before = kv.len();
            kv.retain(|(a, _)| *a != k);
            if kv.len() == before {
                return Err(crate::conv::errors::bad_code(
                    MPI_ERR_INFO_NOKEY,
                    CALL,
                    "key",
                    format!("`{k}` is not in the info object"),
                ));
            }
            Ok(())
        })
    })
}

/// MPI_Info_dup (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
pub fn info_dup(call: &'static str, info: MPI_Info) -> R<MPI_Info> {
    let kv = with_info(call, info, |kv| Ok(kv.clone()))?;
    Ok(state().infos.insert(kv))
}

/// MPI_Info_free (abi.txt `out(info)`: the generated `PMPI_x` checks `info` first).
pub fn info_free(call: &'static str, h: &mut MPI_Info) -> R<()> {
    state().infos.remove(*h).ok_or_else(|| {
        crate::conv::errors::bad_code(
            MPI_ERR_INFO,
            call,
            "info",
            format!("{:#x} is not a valid info object", *h),
        )
    })?;
    *h = MPI_INFO_NULL;
    Ok(())
}

fn info_key(call: &str, k: &str) -> R<String> {
    let k = k.to_string();
    if k.is_empty() || k.len() >= MPI_MAX_INFO_KEY as usize {
        return Err(crate::conv::errors::bad_code(
            MPI_ERR_INFO_KEY,
            call,
            "key",
            "is empty or longer than MPI_MAX_INFO_KEY",
        ));
    }
    Ok(k)
}

/// MPI_Info_get (deprecated in MPI-4.0, still everywhere): at most `valuelen`
/// characters of the value and a NUL (the buffer holds `valuelen + 1`).
/// MPI_Info_get (abi.txt `out(flag)`: the generated `PMPI_x` checks `flag` first).
///
/// # Safety
/// The C caller's arguments of MPI_Info_get, as MPI defines them.
pub unsafe fn info_get(
    call: &'static str,
    info: MPI_Info,
    key: *const c_char,
    valuelen: c_int,
    value: *mut c_char,
    f: &mut c_int,
) -> R<()> {
    // SAFETY: MPI_Info_get's `key` is a NUL-terminated C string (or NULL, rejected).
    let k = info_key(call, unsafe { get_str(call, "key", key)? })?;
    if valuelen < 0 {
        return Err(crate::conv::errors::bad_code(
            MPI_ERR_INFO_VALUE,
            call,
            "valuelen",
            format!("{valuelen} is negative"),
        ));
    }
    let found = with_info(call, info, |kv| {
        Ok(kv.iter().find(|(a, _)| *a == k).map(|(_, v)| v.clone()))
    })?;
    *f = found.is_some() as c_int;
    if let Some(v) = found {
        if value.is_null() {
            return Err(bad(ErrorClass::Arg, call, "value", "is NULL"));
        }
        // SAFETY: the C caller provides `valuelen + 1` writable bytes.
        unsafe { put_str(value, &v, valuelen as usize + 1) };
    }
    Ok(())
}

/// MPI_Info_get_valuelen: the value's length without the NUL.
/// MPI_Info_get_valuelen (abi.txt `out(valuelen, flag)`: the generated `PMPI_x` checks `valuelen`, `flag` first).
///
/// # Safety
/// The C caller's arguments of MPI_Info_get_valuelen, as MPI defines them.
pub unsafe fn info_get_valuelen(
    call: &'static str,
    info: MPI_Info,
    key: *const c_char,
    l: &mut c_int,
    f: &mut c_int,
) -> R<()> {
    // SAFETY: MPI_Info_get_valuelen's `key` is a NUL-terminated C string (or NULL, rejected).
    let k = info_key(call, unsafe { get_str(call, "key", key)? })?;
    let found = with_info(call, info, |kv| {
        Ok(kv.iter().find(|(a, _)| *a == k).map(|(_, v)| v.len()))
    })?;
    *f = found.is_some() as c_int;
    if let Some(n) = found {
        *l = n as c_int;
    }
    Ok(())
}

/// MPI_Info_create_env: a new info object with MPI_INFO_ENV's keys.
/// MPI_Info_create_env (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new handle).
///
/// # Safety
/// None: `argc` and `argv` are not read (the environment is the launcher's).
pub unsafe fn info_create_env(
    _call: &'static str,
    _argc: c_int,
    _argv: *mut *mut c_char,
) -> R<MPI_Info> {
    Ok(state().infos.insert(env_info()))
}

// ----- info queries: hardware resources, the Fortran ABI --------------------------------------

/// MPI_Get_hw_resource_info (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new handle).
pub fn get_hw_resource_info(_call: &'static str) -> R<MPI_Info> {
    // Each resource type MPI_COMM_TYPE_HW_GUIDED accepts, with the index of
    // the one this process is restricted to (absent when not bound to one).
    let kv = oxmpi_core::runtime::engine()?.hw_resource_info();
    Ok(state().infos.insert(kv))
}

/// MPI_Abi_get_fortran_info (abi.txt `out(info)`: the generated `PMPI_x` checks `info` first).
pub fn abi_get_fortran_info(_call: &'static str, o: &mut MPI_Info) -> R<()> {
    let yes_no = |h: MPI_Datatype| {
        if h == MPI_DATATYPE_NULL {
            "false"
        } else {
            "true"
        }
    };
    let kv = vec![
        ("mpi_logical_size", "4".to_string()),
        ("mpi_integer_size", "4".to_string()),
        ("mpi_real_size", "4".to_string()),
        ("mpi_double_precision_size", "8".to_string()),
        ("mpi_logical1_supported", yes_no(MPI_LOGICAL1).to_string()),
        ("mpi_logical2_supported", yes_no(MPI_LOGICAL2).to_string()),
        ("mpi_logical4_supported", yes_no(MPI_LOGICAL4).to_string()),
        ("mpi_logical8_supported", yes_no(MPI_LOGICAL8).to_string()),
        ("mpi_logical16_supported", yes_no(MPI_LOGICAL16).to_string()),
        ("mpi_integer1_supported", yes_no(MPI_INTEGER1).to_string()),
        ("mpi_integer2_supported", yes_no(MPI_INTEGER2).to_string()),
        ("mpi_integer4_supported", yes_no(MPI_INTEGER4).to_string()),
        ("mpi_integer8_supported", yes_no(MPI_INTEGER8).to_string()),
        ("mpi_integer16_supported", yes_no(MPI_INTEGER16).to_string()),
        ("mpi_real2_supported", yes_no(MPI_REAL2).to_string()),
        ("mpi_real4_supported", yes_no(MPI_REAL4).to_string()),
        ("mpi_real8_supported", yes_no(MPI_REAL8).to_string()),
        ("mpi_real16_supported", yes_no(MPI_REAL16).to_string()),
        ("mpi_complex4_supported", yes_no(MPI_COMPLEX4).to_string()),
        ("mpi_complex8_supported", yes_no(MPI_COMPLEX8).to_string()),
        ("mpi_complex16_supported", yes_no(MPI_COMPLEX16).to_string()),
        ("mpi_complex32_supported", yes_no(MPI_COMPLEX32).to_string()),
        (
            "mpi_double_complex_supported",
            yes_no(MPI_DOUBLE_COMPLEX).to_string(),
        ),
    ];
    *o = state()
        .infos
        .insert(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
    Ok(())
}
