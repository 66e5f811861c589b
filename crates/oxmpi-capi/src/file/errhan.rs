//! File error handlers.

use super::*;

// ----- error handlers --------------------------------------------------------------------

fn errhandler_ok(h: MPI_Errhandler, call: &str) -> R<()> {
    match h {
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN => Ok(()),
        MPI_ERRHANDLER_NULL => Err(bad(
            ErrorClass::Arg,
            call,
            "errhandler",
            "MPI_ERRHANDLER_NULL",
        )),
        _ => match state().errhandlers.get(h) {
            Some(e) if e.refs > 0 => Ok(()),
            _ => Err(bad(
                ErrorClass::Arg,
                call,
                "errhandler",
                format!("{h:#x} is not a valid error handler (freed, or never created)"),
            )),
        },
    }
}

/// MPI_File_create_errhandler (abi.txt `out(errhandler) route(file)`).
pub fn file_create_errhandler(
    call: &'static str,
    f: Option<MPI_File_errhandler_function>,
    o: &mut MPI_Errhandler,
) -> R<()> {
    {
        let f = f.ok_or_else(|| bad(ErrorClass::Arg, call, "file_errhandler_fn", "is NULL"))?;
        *o = state()
            .errhandlers
            .insert(ErrhandlerEntry { func: f, refs: 1 });
        Ok(())
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_errhandler(fh: MPI_File, eh: MPI_Errhandler) -> c_int {
    const CALL: &str = "MPI_File_set_errhandler";
    ffi_file(CALL, fh, || {
        errhandler_ok(eh, CALL)?;
        if fh == MPI_FILE_NULL {
            *NULL_ERRH.lock().unwrap_or_else(|p| p.into_inner()) = eh;
            return Ok(());
        }
        let mut t = files();
        let e = t.get_mut(fh).ok_or_else(|| {
            bad(
                ErrorClass::File,
                CALL,
                "file",
                format!("{fh:#x} is not a valid file handle"),
            )
        })?;
        e.errh = eh;
        Ok(())
    })
}

/// MPI_File_get_errhandler (abi.txt `out(errhandler)`: the generated `PMPI_x` checks `errhandler` first).
pub fn file_get_errhandler(call: &'static str, fh: MPI_File, o: &mut MPI_Errhandler) -> R<()> {
    if fh != MPI_FILE_NULL {
        file(fh, call)?;
    }
    let h = errh_of(fh);
    if let Some(e) = state().errhandlers.get_mut(h) {
        e.refs += 1;
    }
    *o = h;
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_call_errhandler(fh: MPI_File, errorcode: c_int) -> c_int {
    const CALL: &str = "MPI_File_call_errhandler";
    if fh != MPI_FILE_NULL && files().get(fh).is_none() {
        return ffi_file(CALL, MPI_FILE_NULL, || {
            Err(bad(
                ErrorClass::File,
                CALL,
                "fh",
                format!("{fh:#x} is not a valid file handle"),
            ))
        });
    }
    raise(
        fh,
        errorcode,
        &format!("{CALL}: error code {errorcode} raised by the program"),
    );
    MPI_SUCCESS
}
