//! `use mpi_f08`: choice buffers through the TS 29113 descriptor.

use super::*;

// ----- mpi_f08: choice buffers through the TS 29113 descriptor ----------------------------

/// `CFI_cdesc_t` of gfortran's ISO_Fortran_binding.h (header; `dim[rank]` follows).
#[repr(C)]
struct CfiDesc {
    base_addr: *mut c_void,
    elem_len: usize,
    version: c_int,
    rank: i8,
    attribute: i8,
    type_: i16,
}

/// One dimension: lower bound, extent, byte stride ("sm").
#[repr(C)]
#[derive(Clone, Copy)]
struct CfiDim {
    lower_bound: isize,
    extent: isize,
    sm: isize,
}

/// What an `mpi_f08` procedure passes to the C function for a choice buffer
/// given as `TYPE(*), DIMENSION(..)`: the address, and the count and datatype.
/// A contiguous buffer (or a scalar, or a sentinel) is passed as is. A
/// non-contiguous array section (`a(1:n:2)`) becomes a new datatype: the
/// displacements of its elements, each holding `elem_len / extent(datatype)`
/// elements of the datatype; the procedure frees it after the call
/// (`*freetype` = 1), which MPI allows while a non-blocking operation uses it.
/// `count < 0`: the procedure only needs the address (the buffer must then be
/// contiguous; v/w collectives, MPI_BUFFER_ATTACH, ...).
///
/// # Safety
/// `desc` is the descriptor gfortran passes for an assumed-rank dummy; the
/// other pointers are the Fortran caller's INTEGERs.
#[no_mangle]
pub unsafe extern "C" fn oxmpi_f08_buffer(
    desc: *const c_void,
    count: *const c_int,
    datatype: *const c_int,
    per_process: *const c_int,
    addr: *mut isize,
    newcount: *mut c_int,
    newtype: *mut c_int,
    freetype: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: see the function's contract; the descriptor's `rank` dims follow its header.
    unsafe {
        let d = &*(desc as *const CfiDesc);
        let dims = std::slice::from_raw_parts(
            (desc as *const u8).add(std::mem::size_of::<CfiDesc>()) as *const CfiDim,
            d.rank.max(0) as usize,
        );
        *freetype = 0;
        *newcount = *count;
        *newtype = *datatype;
        *ierror = MPI_SUCCESS;
        *addr = buf(d.base_addr) as isize;
        let mut want = d.elem_len as isize;
        let mut contiguous = true;
        for dim in dims {
            if dim.extent > 1 && dim.sm != want {
                contiguous = false;
            }
            want *= dim.extent.max(0);
        }
        if contiguous {
            return;
        }
        let fail = |ierror: *mut c_int, why: &str| {
            // What oxmpi cannot do yet is MPI_ERR_UNSUPPORTED_OPERATION; a wrong
            // argument is MPI_ERR_ARG.
            let class = if why.contains("not supported") {
                oxmpi_core::error::ErrorClass::UnsupportedOperation
            } else {
                oxmpi_core::error::ErrorClass::Arg
            };
            let rc = crate::conv::errors::ffi(
                "mpi_f08 choice buffer",
                crate::conv::errors::NO_COMM,
                || {
                    Err(crate::conv::errors::bad(
                        class,
                        "mpi_f08 choice buffer",
                        "buf",
                        why.to_string(),
                    ))
                },
            );
            *ierror = rc;
        };
        if *count < 0 {
            return fail(ierror, "a non-contiguous array section is not supported by this procedure (pass a contiguous buffer)");
        }
        let dt = crate::pmpi::PMPI_Type_f2c(*datatype);
        let (mut lb, mut ext): (MPI_Aint, MPI_Aint) = (0, 0);
        let rc = crate::pmpi::PMPI_Type_get_extent(dt, &mut lb, &mut ext);
        if rc != MPI_SUCCESS {
            *ierror = rc;
            return;
        }
        if ext <= 0 || d.elem_len as isize % ext != 0 {
            return fail(
                ierror,
                "the datatype's extent does not divide the array element's size",
            );
        }
        let per = (d.elem_len as isize / ext) as c_int;
        if *count % per != 0 {
            return fail(
                ierror,
                "the count is not a whole number of array elements of the section",
            );
        }
        // Equally spaced elements (a 1-D section, or dimensions that
        // collapse into one stride): the datatype resized to the stride
        // describes the element sequence exactly, whatever the count means.
        let stride = dims
            .iter()
            .find(|x| x.extent > 1)
            .map_or(d.elem_len as isize, |x| x.sm);
        let mut next = stride;
        let mut uniform = true;
        for x in dims.iter().filter(|x| x.extent > 1) {
            if x.sm != next && next != stride {
                uniform = false;
            }
            next = x.sm * x.extent;
        }
        if uniform && stride > 0 {
            let mut block: MPI_Datatype = dt;
            let mut rc = MPI_SUCCESS;
            if per > 1 {
                rc = crate::pmpi::PMPI_Type_contiguous(per, dt, &mut block);
            }
            let mut t: MPI_Datatype = MPI_DATATYPE_NULL;
            if rc == MPI_SUCCESS {
                rc = crate::pmpi::PMPI_Type_create_resized(block, 0, stride, &mut t);
            }
            if per > 1 {
                crate::pmpi::PMPI_Type_free(&mut block);
            }
            if rc == MPI_SUCCESS {
                rc = crate::pmpi::PMPI_Type_commit(&mut t);
            }
            if rc != MPI_SUCCESS {
                *ierror = rc;
                return;
            }
            *newtype = crate::pmpi::PMPI_Type_c2f(t);
            *newcount = *count / per;
            *freetype = 1;
            return;
        }
        if *per_process != 0 {
            return fail(ierror, "a section of unequally spaced elements is not supported as a per-process buffer of a non-blocking collective");
        }
        let k = (*count / per) as usize;
        // Element offsets in array element order (first index fastest).
        let total: usize = dims.iter().map(|x| x.extent.max(0) as usize).product();
        if k > total {
            return fail(ierror, "the count exceeds the array section");
        }
        let mut displs: Vec<MPI_Aint> = Vec::with_capacity(k);
        let mut idx = vec![0isize; dims.len()];
        for _ in 0..k {
            displs.push(idx.iter().zip(dims).map(|(i, x)| i * x.sm).sum());
            for (i, x) in idx.iter_mut().zip(dims) {
                *i += 1;
                if *i < x.extent {
                    break;
                }
                *i = 0;
            }
        }
        let mut t: MPI_Datatype = MPI_DATATYPE_NULL;
        let mut rc = crate::pmpi::PMPI_Type_create_hindexed_block(
            k as c_int,
            per,
            displs.as_ptr(),
            dt,
            &mut t,
        );
        if rc == MPI_SUCCESS {
            rc = crate::pmpi::PMPI_Type_commit(&mut t);
        }
        if rc != MPI_SUCCESS {
            *ierror = rc;
            return;
        }
        *newtype = crate::pmpi::PMPI_Type_c2f(t);
        *newcount = 1;
        *freetype = 1;
    }
}

/// The elements of a descriptor's array section in array element order (first
/// index fastest), as byte offsets from its base address.
///
/// # Safety
/// `desc` is a descriptor gfortran passed for an assumed-rank dummy.
unsafe fn section(desc: *const c_void) -> (*mut u8, usize, Vec<isize>, bool) {
    // SAFETY: the descriptor's header and its `rank` dims.
    unsafe {
        let d = &*(desc as *const CfiDesc);
        let dims = std::slice::from_raw_parts(
            (desc as *const u8).add(std::mem::size_of::<CfiDesc>()) as *const CfiDim,
            d.rank.max(0) as usize,
        );
        let mut want = d.elem_len as isize;
        let mut contiguous = true;
        for dim in dims {
            if dim.extent > 1 && dim.sm != want {
                contiguous = false;
            }
            want *= dim.extent.max(0);
        }
        if contiguous {
            return (d.base_addr as *mut u8, d.elem_len, vec![], true);
        }
        let total: usize = dims.iter().map(|x| x.extent.max(0) as usize).product();
        let mut offs = Vec::with_capacity(total);
        let mut idx = vec![0isize; dims.len()];
        for _ in 0..total {
            offs.push(idx.iter().zip(dims).map(|(i, x)| i * x.sm).sum());
            for (i, x) in idx.iter_mut().zip(dims) {
                *i += 1;
                if *i < x.extent {
                    break;
                }
                *i = 0;
            }
        }
        (d.base_addr as *mut u8, d.elem_len, offs, false)
    }
}

/// A blocking `mpi_f08` procedure's choice buffer that shares its count and
/// datatype with another buffer (reductions) or has count and displacement
/// arrays (v/w collectives): a non-contiguous section is copied into a
/// contiguous temporary (`*tmp` != 0) that `oxmpi_f08_copyout` copies back and
/// frees after the call, as a compiler's copy-in/copy-out would.
///
/// # Safety
/// `desc` is the descriptor gfortran passes for an assumed-rank dummy; `addr`
/// and `tmp` are the caller's variables.
#[no_mangle]
pub unsafe extern "C" fn oxmpi_f08_copyin(desc: *const c_void, addr: *mut isize, tmp: *mut isize) {
    // SAFETY: see the contract; the section's elements lie inside the array.
    unsafe {
        let (base, len, offs, contiguous) = section(desc);
        *tmp = 0;
        if contiguous {
            *addr = buf(base as *mut c_void) as isize;
            return;
        }
        let mut data = vec![0u8; offs.len() * len].into_boxed_slice();
        for (k, o) in offs.iter().enumerate() {
            std::ptr::copy_nonoverlapping(base.offset(*o), data.as_mut_ptr().add(k * len), len);
        }
        *addr = data.as_mut_ptr() as isize;
        *tmp = Box::into_raw(Box::new(data)) as isize;
    }
}

/// Copies a temporary of `oxmpi_f08_copyin` back into the section and frees it.
///
/// # Safety
/// As `oxmpi_f08_copyin`, with the `tmp` it returned for the same section.
#[no_mangle]
pub unsafe extern "C" fn oxmpi_f08_copyout(desc: *const c_void, tmp: *mut isize) {
    // SAFETY: `tmp` is the Box this file made for this section.
    unsafe {
        if *tmp == 0 {
            return;
        }
        let data = Box::from_raw(*tmp as *mut Box<[u8]>);
        *tmp = 0;
        let (base, len, offs, _) = section(desc);
        for (k, o) in offs.iter().enumerate() {
            std::ptr::copy_nonoverlapping(data.as_ptr().add(k * len), base.offset(*o), len);
        }
    }
}
