//! Opening, closing and deleting files; sizes, info, group, atomicity.

use super::*;

// ----- open, close, delete, sizes, info, group ------------------------------------------

/// MPI_File_open (abi.txt `out(fh) route(file)`: the generated `PMPI_x` checks `fh` first;
/// errors go to the null file's handler).
///
/// # Safety
/// `filename` is NULL or a NUL-terminated string (MPI contract).
pub unsafe fn file_open(
    call: &'static str,
    c: MPI_Comm,
    filename: *const c_char,
    amode: c_int,
    info: MPI_Info,
    o: &mut MPI_File,
) -> R<()> {
    {
        let cm = comm(c, call)?;
        // SAFETY: `filename` is MPI_File_open's NUL-terminated string (or NULL, rejected).
        let name = unsafe { get_str(call, "filename", filename)? };
        let kv = info_pairs(call, info)?;
        let f = io::File::open(call, &cm, Path::new(strip_prefix(name)), amode, &kv)?;
        let eh = *NULL_ERRH.lock().unwrap_or_else(|p| p.into_inner());
        *o = files().insert(FileEntry { file: f, errh: eh });
        Ok(())
    }
}

/// ROMIO accepts a file-system prefix (`ufs:`, `nfs:`, `lustre:`...) before the
/// path; other names with a colon are paths as given.
fn strip_prefix(name: &str) -> &str {
    const ROMIO_FS: &[&str] = &[
        "ufs", "nfs", "lustre", "gpfs", "pvfs2", "xfs", "panfs", "daos", "quobyte", "testfs",
    ];
    match name.split_once(':') {
        Some((fs, rest)) if ROMIO_FS.contains(&fs) => rest,
        _ => name,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_close(fh: *mut MPI_File) -> c_int {
    const CALL: &str = "MPI_File_close";
    if fh.is_null() {
        return ffi_file(CALL, MPI_FILE_NULL, || {
            Err(bad(ErrorClass::Arg, CALL, "fh", "is NULL"))
        });
    }
    // SAFETY: non-null INOUT handle of MPI_File_close (MPI contract: readable, writable, unaliased).
    let o = unsafe { &mut *fh };
    let h = *o;
    let f = match file(h, CALL) {
        Ok(f) => f,
        Err(e) => return raise(h, e.code, &e.message),
    };
    let r = catch_unwind(AssertUnwindSafe(|| f.close(CALL)))
        .unwrap_or_else(|_| Err(MpiError::intern(CALL, "panic")));
    // The error (if any) goes to the file's handler; the handle goes either way.
    let errh = errh_of(h);
    files().remove(h);
    *o = MPI_FILE_NULL;
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(e) => raise_with(
            errh,
            MPI_FILE_NULL,
            crate::abi::error_class_value(e.class),
            &e.message,
        ),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_delete(filename: *const c_char, info: MPI_Info) -> c_int {
    const CALL: &str = "MPI_File_delete";
    ffi_file(CALL, MPI_FILE_NULL, || {
        // SAFETY: `filename` is MPI_File_delete's NUL-terminated string (or NULL, rejected).
        let name = unsafe { get_str(CALL, "filename", filename)? };
        info_pairs(CALL, info)?;
        Ok(io::delete(CALL, Path::new(strip_prefix(name)))?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_size(fh: MPI_File, size: MPI_Offset) -> c_int {
    const CALL: &str = "MPI_File_set_size";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        let s = u64::try_from(size)
            .map_err(|_| bad(ErrorClass::Arg, CALL, "size", format!("{size} is negative")))?;
        Ok(f.set_size(CALL, s)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_preallocate(fh: MPI_File, size: MPI_Offset) -> c_int {
    const CALL: &str = "MPI_File_preallocate";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        let s = u64::try_from(size)
            .map_err(|_| bad(ErrorClass::Arg, CALL, "size", format!("{size} is negative")))?;
        Ok(f.preallocate(CALL, s)?)
    })
}

/// MPI_File_get_size (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
pub fn file_get_size(call: &'static str, fh: MPI_File) -> R<MPI_Offset> {
    Ok(file(fh, call)?.size(call)? as MPI_Offset)
}

/// MPI_File_get_group (abi.txt `out(group)`: the generated `PMPI_x` checks `group` first).
pub fn file_get_group(call: &'static str, fh: MPI_File, o: &mut MPI_Group) -> R<()> {
    let f = file(fh, call)?;
    *o = state()
        .groups
        .insert(Group::from_world_ranks(f.group().to_vec()));
    Ok(())
}

/// MPI_File_get_amode (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
pub fn file_get_amode(call: &'static str, fh: MPI_File) -> R<c_int> {
    Ok(file(fh, call)?.amode())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_info(fh: MPI_File, info: MPI_Info) -> c_int {
    const CALL: &str = "MPI_File_set_info";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        let kv = info_pairs(CALL, info)?;
        Ok(f.set_info(CALL, &kv)?)
    })
}

/// MPI_File_get_info (abi.txt `out(info_used)`: the generated `PMPI_x` checks `info_used` first).
pub fn file_get_info(call: &'static str, fh: MPI_File, o: &mut MPI_Info) -> R<()> {
    let f = file(fh, call)?;
    *o = state().infos.insert(f.info());
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_sync(fh: MPI_File) -> c_int {
    const CALL: &str = "MPI_File_sync";
    ffi_file(CALL, fh, || Ok(file(fh, CALL)?.sync(CALL)?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_atomicity(fh: MPI_File, flag: c_int) -> c_int {
    const CALL: &str = "MPI_File_set_atomicity";
    ffi_file(CALL, fh, || {
        Ok(file(fh, CALL)?.set_atomicity(CALL, flag != 0)?)
    })
}

/// MPI_File_get_atomicity (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
pub fn file_get_atomicity(call: &'static str, fh: MPI_File) -> R<c_int> {
    Ok(file(fh, call)?.atomicity() as c_int)
}
