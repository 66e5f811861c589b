//! File views and the queries over them (type extents, byte offsets).

use super::*;

// ----- views ---------------------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_view(
    fh: MPI_File,
    disp: MPI_Offset,
    etype: MPI_Datatype,
    filetype: MPI_Datatype,
    datarep: *const c_char,
    info: MPI_Info,
) -> c_int {
    const CALL: &str = "MPI_File_set_view";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        let d = match disp {
            MPI_DISPLACEMENT_CURRENT => None,
            d if d < 0 => {
                return Err(bad(
                    ErrorClass::Arg,
                    CALL,
                    "disp",
                    format!("{d} is negative"),
                ))
            }
            d => Some(d as u64),
        };
        let et = committed(etype, CALL, "etype")?;
        let ft = committed(filetype, CALL, "filetype")?;
        // SAFETY: `datarep` is a NUL-terminated string (or NULL, rejected).
        let rep = unsafe { get_str(CALL, "datarep", datarep)? };
        let rep = io::datarep(CALL, rep)?;
        let kv = info_pairs(CALL, info)?;
        Ok(f.set_view(CALL, d, &et, &ft, rep, &kv)?)
    })
}

/// MPI_File_get_view (abi.txt `out(disp, etype, filetype) nonnull(datarep)`: the generated `PMPI_x` checks them first).
///
/// # Safety
/// The C caller's arguments of MPI_File_get_view, as MPI defines them.
pub unsafe fn file_get_view(
    call: &'static str,
    fh: MPI_File,
    d: &mut MPI_Offset,
    e: &mut MPI_Datatype,
    t: &mut MPI_Datatype,
    datarep: *mut c_char,
) -> R<()> {
    let f = file(fh, call)?;
    let v = f.view();
    *d = v.disp as MPI_Offset;
    *e = new_handle(&v.etype);
    *t = new_handle(&v.filetype);
    // SAFETY: `datarep` holds MPI_MAX_DATAREP_STRING chars (MPI contract).
    unsafe { put_str(datarep, v.datarep.name(), MPI_MAX_DATAREP_STRING as usize) };
    Ok(())
}

/// MPI_File_get_type_extent(_c) (abi.txt `out(extent)`: the generated `PMPI_x` checks
/// `extent` first).
pub fn file_get_type_extent<A: Copy + TryFrom<u64>>(
    call: &'static str,
    fh: MPI_File,
    h: MPI_Datatype,
    o: &mut A,
) -> R<()> {
    let f = file(fh, call)?;
    let dt = datatype(h, call, "datatype")?;
    let x = io::type_extent(call, &dt, &f.view().datarep)?;
    *o = A::try_from(x).map_err(|_| {
        bad(
            ErrorClass::ValueTooLarge,
            call,
            "extent",
            format!("{x} does not fit"),
        )
    })?;
    Ok(())
}
pub use self::file_get_type_extent as file_get_type_extent_c;

/// MPI_File_get_byte_offset (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
pub fn file_get_byte_offset(call: &'static str, fh: MPI_File, offset: MPI_Offset) -> R<MPI_Offset> {
    let f = file(fh, call)?;
    let off = offset_arg(call, offset)?;
    Ok(f.byte_offset(call, off)? as MPI_Offset)
}
