//! `MPI_T_cvar_*`: control variables, read and written through handles.

use super::*;

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_get_num(num_cvar: *mut c_int) -> c_int {
    // SAFETY: `num_cvar` is NULL (an error) or writable (MPI contract).
    tcall(|| unsafe { put_req(num_cvar, "num_cvar", tools::registry().cvars.len() as c_int) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_get_info(
    cvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity_out: *mut c_int,
    datatype: *mut MPI_Datatype,
    enumtype: *mut MPI_T_enum,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind_out: *mut c_int,
    scope_out: *mut c_int,
) -> c_int {
    tcall(|| {
        let c = tools::registry().cvar(index(cvar_index)?)?;
        // SAFETY: MPI_T output arguments: NULL or writable, strings of the given lengths (MPI contract).
        unsafe {
            put_str(&c.name, name, name_len);
            put(verbosity_out, verbosity(c.verbosity));
            put(datatype, dtype(c.datatype));
            put(enumtype, enum_handle(c.enumtype));
            put_str(&c.desc, desc, desc_len);
            put(bind_out, bind(c.bind));
            put(scope_out, scope(c.scope));
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_get_index(
    name: *const c_char,
    cvar_index: *mut c_int,
) -> c_int {
    tcall(|| {
        // SAFETY: `name` is a C string (MPI contract).
        let i = tools::registry().cvar_index(unsafe { name_arg(name)? })?;
        // SAFETY: `cvar_index` is NULL (an error) or writable.
        unsafe { put_req(cvar_index, "cvar_index", i as c_int) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_handle_alloc(
    cvar_index: c_int,
    _obj_handle: *mut c_void,
    handle: *mut MPI_T_cvar_handle,
    count: *mut c_int,
) -> c_int {
    tcall(|| {
        let i = index(cvar_index)?;
        let c = tools::registry().cvar(i)?;
        if handle.is_null() {
            return Err(null_arg("handle"));
        }
        // oxmpi's control variables are bound to no object: `obj_handle` is ignored, as the standard says.
        let h = with_handles(|t| {
            let h = t.fresh();
            t.cvars.insert(h, i);
            h
        });
        // SAFETY: MPI_T output arguments: `handle` checked non-null, `count` NULL or writable.
        unsafe {
            handle.write(h);
            put(count, c.count as c_int);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_handle_free(handle: *mut MPI_T_cvar_handle) -> c_int {
    tcall(|| {
        if handle.is_null() {
            return Err(null_arg("handle"));
        }
        // SAFETY: non-null, and a valid handle variable (MPI contract).
        let h = unsafe { *handle };
        with_handles(|t| t.cvars.remove(&h)).ok_or(ToolError::InvalidHandle)?;
        // SAFETY: as above.
        unsafe { handle.write(MPI_T_CVAR_HANDLE_NULL) };
        Ok(())
    })
}

fn cvar_of(h: MPI_T_cvar_handle) -> TR<usize> {
    with_handles(|t| t.cvars.get(&h).copied()).ok_or(ToolError::InvalidHandle)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_read(handle: MPI_T_cvar_handle, buf: *mut c_void) -> c_int {
    tcall(|| {
        let i = cvar_of(handle)?;
        if buf.is_null() {
            return Err(null_arg("buf"));
        }
        let count = tools::registry().cvars[i].count;
        // SAFETY: `buf` holds `count` elements of the variable's datatype (MPI contract).
        unsafe {
            match tools::cvar_read(i)? {
                CvarValue::Int(v) => (buf as *mut c_int).write_unaligned(v),
                CvarValue::Double(v) => (buf as *mut f64).write_unaligned(v),
                CvarValue::Str(s) => {
                    let n = s.len().min(count - 1);
                    std::ptr::copy_nonoverlapping(s.as_ptr(), buf as *mut u8, n);
                    *(buf as *mut u8).add(n) = 0;
                }
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_write(handle: MPI_T_cvar_handle, buf: *const c_void) -> c_int {
    tcall(|| {
        let i = cvar_of(handle)?;
        let c = &tools::registry().cvars[i];
        if matches!(c.scope, Scope::Constant | Scope::Readonly) {
            return Err(ToolError::CvarSetNever);
        }
        if buf.is_null() {
            return Err(null_arg("buf"));
        }
        // SAFETY: `buf` holds one element of the variable's datatype (MPI contract).
        let v = unsafe {
            match c.datatype {
                VarType::Int => CvarValue::Int((buf as *const c_int).read_unaligned()),
                VarType::Double => CvarValue::Double((buf as *const f64).read_unaligned()),
                VarType::UnsignedLongLong => {
                    CvarValue::Int((buf as *const u64).read_unaligned().min(i32::MAX as u64) as i32)
                }
                VarType::Char => return Err(ToolError::CvarSetNever),
            }
        };
        tools::cvar_write(i, v)
    })
}
