//! Window attributes, error handlers and Fortran handles.

use super::*;

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_create_keyval(
    copy: Option<MPI_Win_copy_attr_function>,
    delete: Option<MPI_Win_delete_attr_function>,
    keyval: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    // SAFETY: `keyval` is the C caller's OUT argument; the callbacks have the C shape of the communicator ones (handles are pointer-sized), windows are never copied.
    unsafe {
        crate::attr::create_keyval(
            "MPI_Win_create_keyval",
            ObjectKind::Win,
            copy.map_or(0, |f| f as usize),
            delete,
            keyval,
            extra,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_free_keyval(keyval: *mut c_int) -> c_int {
    // SAFETY: the C caller's INOUT argument.
    unsafe { crate::attr::free_keyval("MPI_Win_free_keyval", ObjectKind::Win, keyval) }
}

fn attrs_of(w: MPI_Win, call: &str) -> R<Arc<Attributes>> {
    wins()
        .get(w)
        .map(|e| e.attrs.clone())
        .ok_or_else(|| bad_win(call, w))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_set_attr(w: MPI_Win, keyval: c_int, val: *mut c_void) -> c_int {
    const CALL: &str = "MPI_Win_set_attr";
    wffi(CALL, w, || {
        let a = attrs_of(w, CALL)?;
        if (MPI_WIN_BASE..=MPI_WIN_MODEL).contains(&keyval) {
            return Err(bad(
                ErrorClass::Keyval,
                CALL,
                "win_keyval",
                "predefined window attributes cannot be set",
            ));
        }
        with_cb_win(w, || a.set(keyval, val as usize, CALL))?;
        Ok(())
    })
}

/// MPI_Win_get_attr (abi.txt `outaddr(attribute_val) out(flag)`: the generated `PMPI_x`
/// checks them first).
pub fn win_get_attr(
    call: &'static str,
    w: MPI_Win,
    keyval: c_int,
    v: &mut *mut c_void,
    f: &mut c_int,
) -> R<()> {
    {
        let predefined = {
            let t = wins();
            let e = t.get(w).ok_or_else(|| bad_win(call, w))?;
            match keyval {
                MPI_WIN_BASE => Some(e.win.base() as *mut c_void),
                MPI_WIN_SIZE => Some(&*e.size_attr as *const MPI_Aint as *mut c_void),
                MPI_WIN_DISP_UNIT => Some(&*e.disp_attr as *const c_int as *mut c_void),
                MPI_WIN_CREATE_FLAVOR => Some(&*e.flavor_attr as *const c_int as *mut c_void),
                MPI_WIN_MODEL => Some(&*e.model_attr as *const c_int as *mut c_void),
                _ => None,
            }
        };
        if let Some(p) = predefined {
            *v = p;
            *f = 1;
            return Ok(());
        }
        match attrs_of(w, call)?.get(keyval, call)? {
            Some(x) => {
                *v = x as *mut c_void;
                *f = 1;
            }
            None => *f = 0,
        }
        Ok(())
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_delete_attr(w: MPI_Win, keyval: c_int) -> c_int {
    const CALL: &str = "MPI_Win_delete_attr";
    wffi(CALL, w, || {
        let a = attrs_of(w, CALL)?;
        with_cb_win(w, || a.delete(keyval, CALL))?;
        Ok(())
    })
}

// ----- error handlers ---------------------------------------------------------------------

/// MPI_Win_create_errhandler (abi.txt `out(errhandler)`: the generated `PMPI_x` checks `errhandler` first).
pub fn win_create_errhandler(
    call: &'static str,
    f: Option<MPI_Win_errhandler_function>,
    o: &mut MPI_Errhandler,
) -> R<()> {
    let f = f.ok_or_else(|| bad(ErrorClass::Arg, call, "win_errhandler_fn", "is NULL"))?;
    // Both C types are `void (*)(handle *, int *, ...)` with pointer-sized handles:
    // the table's communicator form is called with a window handle's address.
    *o = state()
        .errhandlers
        .insert(ErrhandlerEntry { func: f, refs: 1 });
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_set_errhandler(w: MPI_Win, eh: MPI_Errhandler) -> c_int {
    const CALL: &str = "MPI_Win_set_errhandler";
    wffi(CALL, w, || {
        let func = match eh {
            MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN => None,
            _ => match state().errhandlers.get(eh) {
                Some(e) if e.refs > 0 => Some(e.func),
                _ => {
                    return Err(bad(
                        ErrorClass::Arg,
                        CALL,
                        "errhandler",
                        format!("{eh:#x} is not a valid error handler"),
                    ))
                }
            },
        };
        let mut t = wins();
        let e = t.get_mut(w).ok_or_else(|| bad_win(CALL, w))?;
        e.errh = eh;
        e.errh_fn = func;
        Ok(())
    })
}

/// MPI_Win_get_errhandler (abi.txt `out(errhandler)`: the generated `PMPI_x` checks `errhandler` first).
pub fn win_get_errhandler(call: &'static str, w: MPI_Win, o: &mut MPI_Errhandler) -> R<()> {
    let h = wins()
        .get(w)
        .map(|e| e.errh)
        .ok_or_else(|| bad_win(call, w))?;
    if let Some(e) = state().errhandlers.get_mut(h) {
        e.refs += 1;
    }
    *o = h;
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_call_errhandler(w: MPI_Win, errorcode: c_int) -> c_int {
    const CALL: &str = "MPI_Win_call_errhandler";
    if wins().get(w).is_none() {
        return ffi(CALL, NO_COMM, || Err(bad_win(CALL, w)));
    }
    raise_win(w, errorcode, &format!("{CALL}: error code {errorcode}"));
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_c2f(w: MPI_Win) -> c_int {
    c2f_predefined_or(&wins(), w)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_f2c(f: c_int) -> MPI_Win {
    let h = f2c_predefined_or(&wins(), f);
    if h == 0 {
        MPI_WIN_NULL
    } else {
        h
    }
}
