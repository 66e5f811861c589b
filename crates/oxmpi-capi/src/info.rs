//! Info objects (MPI_INFO_ENV's contents: `conv::env_info`).

use std::ffi::{c_char, c_int};

use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::conv::errors::{bad, ffi, out, NO_COMM, R};
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

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get_string(
    info: MPI_Info,
    key: *const c_char,
    buflen: *mut c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Info_get_string";
    ffi(CALL, NO_COMM, || {
        // SAFETY: MPI_Info_get_string's `key` is a NUL-terminated C string (or NULL, rejected).
        let k = unsafe { get_str(CALL, "key", key)? }.to_string();
        // SAFETY: `buflen` is MPI_Info_get_string's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let bl = unsafe { out(CALL, "buflen", buflen)? };
        // SAFETY: `flag` is MPI_Info_get_string's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let f = unsafe { out(CALL, "flag", flag)? };
        let found = with_info(CALL, info, |kv| {
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
    })
}

/// The answer of MPI_Info_get_nkeys (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn info_get_nkeys(call: &str, info: MPI_Info) -> R<c_int> {
    with_info(call, info, |kv| Ok(kv.len() as c_int))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get_nthkey(info: MPI_Info, n: c_int, key: *mut c_char) -> c_int {
    const CALL: &str = "MPI_Info_get_nthkey";
    ffi(CALL, NO_COMM, || {
        if key.is_null() {
            return Err(bad(ErrorClass::Arg, CALL, "key", "is NULL"));
        }
        let k = with_info(CALL, info, |kv| {
            usize::try_from(n)
                .ok()
                .and_then(|i| kv.get(i))
                .map(|(k, _)| k.clone())
                .ok_or_else(|| {
                    bad(
                        ErrorClass::Arg,
                        CALL,
                        "n",
                        format!("{n} is not in 0..{}", kv.len()),
                    )
                })
        })?;
        // SAFETY: MPI_MAX_INFO_KEY bytes by the C contract.
        unsafe { put_str(key, &k, MPI_MAX_INFO_KEY as usize) };
        Ok(())
    })
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

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_free(info: *mut MPI_Info) -> c_int {
    const CALL: &str = "MPI_Info_free";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `info` is MPI_Info_free's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "info", info)? };
        state().infos.remove(*h).ok_or_else(|| {
            crate::conv::errors::bad_code(
                MPI_ERR_INFO,
                CALL,
                "info",
                format!("{:#x} is not a valid info object", *h),
            )
        })?;
        *h = MPI_INFO_NULL;
        Ok(())
    })
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
#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get(
    info: MPI_Info,
    key: *const c_char,
    valuelen: c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Info_get";
    ffi(CALL, NO_COMM, || {
        // SAFETY: MPI_Info_get's `key` is a NUL-terminated C string (or NULL, rejected).
        let k = info_key(CALL, unsafe { get_str(CALL, "key", key)? })?;
        if valuelen < 0 {
            return Err(crate::conv::errors::bad_code(
                MPI_ERR_INFO_VALUE,
                CALL,
                "valuelen",
                format!("{valuelen} is negative"),
            ));
        }
        // SAFETY: `flag` is MPI_Info_get's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let f = unsafe { out(CALL, "flag", flag)? };
        let found = with_info(CALL, info, |kv| {
            Ok(kv.iter().find(|(a, _)| *a == k).map(|(_, v)| v.clone()))
        })?;
        *f = found.is_some() as c_int;
        if let Some(v) = found {
            if value.is_null() {
                return Err(bad(ErrorClass::Arg, CALL, "value", "is NULL"));
            }
            // SAFETY: the C caller provides `valuelen + 1` writable bytes.
            unsafe { put_str(value, &v, valuelen as usize + 1) };
        }
        Ok(())
    })
}

/// MPI_Info_get_valuelen: the value's length without the NUL.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get_valuelen(
    info: MPI_Info,
    key: *const c_char,
    valuelen: *mut c_int,
    flag: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Info_get_valuelen";
    ffi(CALL, NO_COMM, || {
        // SAFETY: MPI_Info_get_valuelen's `key` is a NUL-terminated C string (or NULL, rejected).
        let k = info_key(CALL, unsafe { get_str(CALL, "key", key)? })?;
        // SAFETY: `valuelen` is MPI_Info_get_valuelen's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let l = unsafe { out(CALL, "valuelen", valuelen)? };
        // SAFETY: `flag` is MPI_Info_get_valuelen's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let f = unsafe { out(CALL, "flag", flag)? };
        let found = with_info(CALL, info, |kv| {
            Ok(kv.iter().find(|(a, _)| *a == k).map(|(_, v)| v.len()))
        })?;
        *f = found.is_some() as c_int;
        if let Some(n) = found {
            *l = n as c_int;
        }
        Ok(())
    })
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

#[no_mangle]
pub unsafe extern "C" fn PMPI_Abi_get_fortran_info(info: *mut MPI_Info) -> c_int {
    const CALL: &str = "MPI_Abi_get_fortran_info";
    ffi(CALL, NO_COMM, || {
        // SAFETY: OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "info", info)? };
        // oxmpi has no Fortran bindings; the C library's Fortran types describe
        // the default gfortran ABI (4-byte INTEGER, REAL and LOGICAL, 8-byte
        // DOUBLE PRECISION), and which optional kinds are supported.
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
    })
}
