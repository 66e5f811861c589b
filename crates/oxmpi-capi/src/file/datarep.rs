//! User data representations (`MPI_Register_datarep`): the C conversion callbacks
//! behind core's `UserDatarep`.

use super::*;
use oxmpi_core::buf::Region;

// ----- user data representations ---------------------------------------------------------

/// `MPI_Register_datarep`'s callbacks, as the engine calls them.
struct CDatarep {
    read: Option<usize>,
    write: Option<usize>,
    extent: MPI_Datarep_extent_function,
    extra: usize,
    /// The `_c` registration (conversion functions take `MPI_Count`).
    wide: bool,
}

impl CDatarep {
    #[allow(clippy::too_many_arguments)]
    fn convert(
        &self,
        f: usize,
        user: *mut u8,
        dt: &Datatype,
        count: usize,
        position: usize,
        file: *mut u8,
        what: &str,
    ) -> oxmpi_core::Result<()> {
        let h = find_handle(dt);
        let rc = if self.wide {
            let g: MPI_Datarep_conversion_function_c =
                // SAFETY: `f` was registered as an MPI_Datarep_conversion_function_c pointer.
                unsafe { std::mem::transmute::<usize, MPI_Datarep_conversion_function_c>(f) };
            // SAFETY: a C function of the user's with this signature; buffers sized by the engine.
            unsafe {
                g(
                    user.cast(),
                    h,
                    count as MPI_Count,
                    file.cast(),
                    position as MPI_Offset,
                    self.extra as *mut c_void,
                )
            }
        } else {
            let n = c_int::try_from(count).map_err(|_| MpiError::new(ErrorClass::Count, format!("{count} elements are too many for an int conversion function (register with MPI_Register_datarep_c)")))?;
            let g: MPI_Datarep_conversion_function =
                // SAFETY: `f` was registered as an MPI_Datarep_conversion_function pointer.
                unsafe { std::mem::transmute::<usize, MPI_Datarep_conversion_function>(f) };
            // SAFETY: a C function of the user's with this signature; buffers sized by the engine.
            unsafe {
                g(
                    user.cast(),
                    h,
                    n,
                    file.cast(),
                    position as MPI_Offset,
                    self.extra as *mut c_void,
                )
            }
        };
        if rc != MPI_SUCCESS {
            return Err(MpiError::new(
                ErrorClass::Conversion,
                format!("the {what} conversion function returned error code {rc}"),
            ));
        }
        Ok(())
    }
}

impl UserDatarep for CDatarep {
    fn file_extent(&self, dt: &Datatype) -> oxmpi_core::Result<usize> {
        let h = find_handle(dt);
        let mut x: MPI_Aint = 0;
        // SAFETY: the user's MPI_Datarep_extent_function, given a live handle and an out pointer.
        let rc = unsafe { (self.extent)(h, &mut x, self.extra as *mut c_void) };
        if rc != MPI_SUCCESS || x < 0 {
            return Err(MpiError::new(ErrorClass::Conversion, format!("the data representation's extent function returned error code {rc} (extent {x})")));
        }
        Ok(x as usize)
    }
    fn converts_reads(&self) -> bool {
        self.read.is_some()
    }
    fn converts_writes(&self) -> bool {
        self.write.is_some()
    }
    fn read(
        &self,
        user: &mut Region<'_, &Datatype>,
        count: usize,
        position: usize,
        file: &[u8],
    ) -> oxmpi_core::Result<()> {
        let p = user
            .elements_mut_ptr(position, count)
            .ok_or_else(|| MpiError::intern("MPI_File_read", "conversion outside the buffer"))?;
        self.convert(
            self.read.expect("converts_reads"),
            p,
            user.datatype(),
            count,
            position,
            file.as_ptr() as *mut u8,
            "read",
        )
    }
    fn write(
        &self,
        user: &Region<'_, &Datatype>,
        count: usize,
        position: usize,
        file: &mut [u8],
    ) -> oxmpi_core::Result<()> {
        let p = user
            .elements_ptr(position, count)
            .ok_or_else(|| MpiError::intern("MPI_File_write", "conversion outside the buffer"))?;
        self.convert(
            self.write.expect("converts_writes"),
            p as *mut u8,
            user.datatype(),
            count,
            position,
            file.as_mut_ptr(),
            "write",
        )
    }
}

unsafe fn register(
    call: &'static str,
    datarep: *const c_char,
    read: Option<usize>,
    write: Option<usize>,
    extent: Option<MPI_Datarep_extent_function>,
    extra: *mut c_void,
    wide: bool,
) -> c_int {
    ffi_file(call, MPI_FILE_NULL, || {
        // SAFETY: `datarep` is a NUL-terminated string (or NULL, rejected).
        let name = unsafe { get_str(call, "datarep", datarep)? };
        let extent =
            extent.ok_or_else(|| bad(ErrorClass::Arg, call, "dtype_file_extent_fn", "is NULL"))?;
        let conv = CDatarep {
            read,
            write,
            extent,
            extra: extra as usize,
            wide,
        };
        Ok(io::register_datarep(call, name, Arc::new(conv))?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Register_datarep(
    datarep: *const c_char,
    read_conversion_fn: Option<MPI_Datarep_conversion_function>,
    write_conversion_fn: Option<MPI_Datarep_conversion_function>,
    dtype_file_extent_fn: Option<MPI_Datarep_extent_function>,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on.
    unsafe {
        register(
            "MPI_Register_datarep",
            datarep,
            read_conversion_fn.map(|f| f as usize),
            write_conversion_fn.map(|f| f as usize),
            dtype_file_extent_fn,
            extra_state,
            false,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Register_datarep_c(
    datarep: *const c_char,
    read_conversion_fn: Option<MPI_Datarep_conversion_function_c>,
    write_conversion_fn: Option<MPI_Datarep_conversion_function_c>,
    dtype_file_extent_fn: Option<MPI_Datarep_extent_function>,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on.
    unsafe {
        register(
            "MPI_Register_datarep_c",
            datarep,
            read_conversion_fn.map(|f| f as usize),
            write_conversion_fn.map(|f| f as usize),
            dtype_file_extent_fn,
            extra_state,
            true,
        )
    }
}
