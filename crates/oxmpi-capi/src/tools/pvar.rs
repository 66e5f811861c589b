//! `MPI_T_pvar_*`: performance variables, sessions and their handles.

use super::*;

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_get_num(num_pvar: *mut c_int) -> c_int {
    // SAFETY: `num_pvar` is NULL (an error) or writable (MPI contract).
    tcall(|| unsafe { put_req(num_pvar, "num_pvar", tools::registry().pvars.len() as c_int) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_get_info(
    pvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity_out: *mut c_int,
    var_class: *mut c_int,
    datatype: *mut MPI_Datatype,
    enumtype: *mut MPI_T_enum,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind_out: *mut c_int,
    readonly: *mut c_int,
    continuous: *mut c_int,
    atomic: *mut c_int,
) -> c_int {
    tcall(|| {
        let p = tools::registry().pvar(index(pvar_index)?)?;
        // SAFETY: MPI_T output arguments: NULL or writable, strings of the given lengths (MPI contract).
        unsafe {
            put_str(&p.name, name, name_len);
            put(verbosity_out, verbosity(p.verbosity));
            put(var_class, class_code(p.class));
            put(datatype, dtype(p.datatype));
            put(enumtype, enum_handle(p.enumtype));
            put_str(&p.desc, desc, desc_len);
            put(bind_out, bind(p.bind));
            put(readonly, p.readonly as c_int);
            put(continuous, p.continuous as c_int);
            put(atomic, p.atomic as c_int);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_get_index(
    name: *const c_char,
    var_class: c_int,
    pvar_index: *mut c_int,
) -> c_int {
    tcall(|| {
        let class = CLASSES
            .iter()
            .find(|(_, v)| *v == var_class)
            .map(|(k, _)| *k)
            .ok_or(ToolError::InvalidName)?;
        // SAFETY: `name` is a C string (MPI contract).
        let i = tools::registry().pvar_index(unsafe { name_arg(name)? }, class)?;
        // SAFETY: `pvar_index` is NULL (an error) or writable.
        unsafe { put_req(pvar_index, "pvar_index", i as c_int) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_session_create(session: *mut MPI_T_pvar_session) -> c_int {
    tcall(|| {
        if session.is_null() {
            return Err(null_arg("session"));
        }
        let s = with_handles(|t| {
            let s = t.fresh();
            t.sessions.insert(
                s,
                Session {
                    handles: HashMap::new(),
                },
            );
            s
        });
        // SAFETY: non-null and writable (MPI contract).
        unsafe { session.write(s) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_session_free(session: *mut MPI_T_pvar_session) -> c_int {
    tcall(|| {
        if session.is_null() {
            return Err(null_arg("session"));
        }
        // SAFETY: non-null and a valid session variable (MPI contract).
        let s = unsafe { *session };
        with_handles(|t| t.sessions.remove(&s)).ok_or(ToolError::InvalidSession)?;
        // SAFETY: as above.
        unsafe { session.write(MPI_T_PVAR_SESSION_NULL) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_handle_alloc(
    session: MPI_T_pvar_session,
    pvar_index: c_int,
    obj_handle: *mut c_void,
    handle: *mut MPI_T_pvar_handle,
    count: *mut c_int,
) -> c_int {
    tcall(|| {
        let i = index(pvar_index)?;
        let p = tools::registry().pvar(i)?;
        if handle.is_null() {
            return Err(null_arg("handle"));
        }
        if !with_handles(|t| t.sessions.contains_key(&session)) {
            return Err(ToolError::InvalidSession);
        }
        let comm: Option<Comm> = match p.bind {
            Bind::NoObject => None,
            Bind::Comm => {
                if obj_handle.is_null() {
                    return Err(ToolError::Invalid(format!(
                        "{} is bound to a communicator: obj_handle must point to one",
                        p.name
                    )));
                }
                // SAFETY: for a variable bound to MPI_COMM, `obj_handle` points to an MPI_Comm (MPI contract).
                let h = unsafe { (obj_handle as *const MPI_Comm).read_unaligned() };
                Some(
                    crate::conv::comm(h, "MPI_T_pvar_handle_alloc")
                        .map_err(|f| ToolError::Invalid(f.message))?,
                )
            }
        };
        let ph = PvarHandle::new(i, comm)?;
        let n = ph.count();
        let h = with_handles(|t| {
            let h = t.fresh();
            t.sessions
                .get_mut(&session)
                .map(|s| s.handles.insert(h, ph));
            h
        });
        // SAFETY: `handle` checked non-null; `count` NULL or writable (MPI contract).
        unsafe {
            handle.write(h);
            put(count, n as c_int);
        }
        Ok(())
    })
}

/// Runs `f` on the handles `handle` names in `session` (all of them for
/// `MPI_T_PVAR_ALL_HANDLES` where `all` allows it).
fn on_handles<T>(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    all: bool,
    mut f: impl FnMut(&mut PvarHandle) -> TR<T>,
) -> TR<Option<T>> {
    with_handles(|t| {
        let s = t
            .sessions
            .get_mut(&session)
            .ok_or(ToolError::InvalidSession)?;
        if handle == MPI_T_PVAR_ALL_HANDLES && all {
            for h in s.handles.values_mut() {
                // Continuous and read-only variables are left alone by the all-handles forms.
                let info = h.info();
                if !info.continuous && !info.readonly {
                    f(h)?;
                }
            }
            return Ok(None);
        }
        let h = s.handles.get_mut(&handle).ok_or(ToolError::InvalidHandle)?;
        f(h).map(Some)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_handle_free(
    session: MPI_T_pvar_session,
    handle: *mut MPI_T_pvar_handle,
) -> c_int {
    tcall(|| {
        if handle.is_null() {
            return Err(null_arg("handle"));
        }
        // SAFETY: non-null and a valid handle variable (MPI contract).
        let h = unsafe { *handle };
        with_handles(|t| {
            let s = t
                .sessions
                .get_mut(&session)
                .ok_or(ToolError::InvalidSession)?;
            s.handles.remove(&h).ok_or(ToolError::InvalidHandle)
        })?;
        // SAFETY: as above.
        unsafe { handle.write(MPI_T_PVAR_HANDLE_NULL) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_start(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
) -> c_int {
    tcall(|| on_handles(session, handle, true, |h| h.start()).map(drop))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_stop(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
) -> c_int {
    tcall(|| on_handles(session, handle, true, |h| h.stop()).map(drop))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_reset(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
) -> c_int {
    tcall(|| on_handles(session, handle, true, |h| h.reset()).map(drop))
}

/// Writes a pvar value into the user's buffer.
///
/// # Safety
/// `buf` is NULL (an error) or holds one element of the variable's datatype.
unsafe fn put_value(buf: *mut c_void, v: PvarValue) -> TR<()> {
    if buf.is_null() {
        return Err(null_arg("buf"));
    }
    // SAFETY: non-null and large enough for the variable's datatype (caller's contract).
    unsafe {
        match v {
            PvarValue::U64(n) => (buf as *mut u64).write_unaligned(n),
            PvarValue::Double(x) => (buf as *mut f64).write_unaligned(x),
        }
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_read(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *mut c_void,
) -> c_int {
    tcall(|| {
        let v = on_handles(session, handle, false, |h| Ok(h.read()))?
            .ok_or(ToolError::InvalidHandle)?;
        // SAFETY: `buf` holds one element of the variable's datatype (MPI contract).
        unsafe { put_value(buf, v) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_readreset(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *mut c_void,
) -> c_int {
    tcall(|| {
        if buf.is_null() {
            return Err(null_arg("buf"));
        }
        let v = on_handles(session, handle, false, |h| h.read_reset())?
            .ok_or(ToolError::InvalidHandle)?;
        // SAFETY: `buf` holds one element of the variable's datatype (MPI contract).
        unsafe { put_value(buf, v) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_write(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *const c_void,
) -> c_int {
    tcall(|| {
        if buf.is_null() {
            return Err(null_arg("buf"));
        }
        on_handles(session, handle, false, |h| {
            // SAFETY: `buf` holds one element of the variable's datatype (MPI contract).
            let v = unsafe {
                match h.info().datatype {
                    VarType::Double => PvarValue::Double((buf as *const f64).read_unaligned()),
                    _ => PvarValue::U64((buf as *const u64).read_unaligned()),
                }
            };
            h.write(v)
        })?
        .ok_or(ToolError::InvalidHandle)
    })
}
