//! Buffered-send space.

use super::*;

// ----- buffered-send space ---------------------------------------------------------

unsafe fn buffer_attach<C: Count>(buffer: *mut c_void, size: C) -> c_int {
    let call = name::<C>("MPI_Buffer_attach");
    let size = size.wide();
    ffi(call, NO_COMM, || {
        if buffer as usize == MPI_BUFFER_AUTOMATIC {
            // MPI_BUFFER_AUTOMATIC is no memory: oxmpi only accounts attached space (see `buffer_attach`).
            pt2pt::buffer_attach(buffer as *mut u8, isize::MAX as usize)?;
            return Ok(());
        }
        if size < 0 {
            return Err(bad(
                ErrorClass::Arg,
                call,
                "size",
                format!("{size} is negative"),
            ));
        }
        if buffer.is_null() && size > 0 {
            return Err(bad(ErrorClass::Buffer, call, "buffer", "is NULL"));
        }
        // The C caller hands over `size` bytes at `buffer` as MPI_Buffer_attach defines; oxmpi only accounts them.
        pt2pt::buffer_attach(buffer as *mut u8, size as usize)?;
        Ok(())
    })
}

unsafe fn buffer_detach<C: Count>(buffer_addr: *mut c_void, size: *mut C) -> c_int {
    let call = name::<C>("MPI_Buffer_detach");
    ffi(call, NO_COMM, || {
        if buffer_addr.is_null() {
            return Err(bad(ErrorClass::Arg, call, "buffer_addr", "is NULL"));
        }
        // SAFETY: `size` is MPI_Buffer_detach's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let s = unsafe { out(call, "size", size)? };
        let (p, n) = pt2pt::buffer_detach()?;
        // `buffer_addr` is a `void *` in C, so programs pass the address of whatever
        // variable they keep the buffer in, not always an aligned `void *` (MPICH's
        // own pt2pt tests pass an `int`'s): write the pointer unaligned.
        // SAFETY: non-null (checked above) and, by the MPI contract, the address of pointer-sized writable storage that nothing else of this call touches.
        unsafe { (buffer_addr as *mut *mut c_void).write_unaligned(p as *mut c_void) };
        *s = C::saturating(n.min(i64::MAX as usize) as i64);
        Ok(())
    })
}

entry!(PMPI_Buffer_attach, PMPI_Buffer_attach_c, (buffer: MVoid, size: CNT) => buffer_attach(buffer, size));
entry!(PMPI_Buffer_detach, PMPI_Buffer_detach_c, (buffer_addr: MVoid, size: PCNT) => buffer_detach(buffer_addr, size));
