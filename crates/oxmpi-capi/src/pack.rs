//! Pack and unpack: MPI_Pack/Unpack/Pack_size and the external32
//! representation (MPI_Pack_external and friends).
//!
//! Safety: the `unsafe fn`s here (the bodies of the `PMPI_x` abi.txt generates from its
//! `out(position)`/`out(size)` annotations) take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement: buffers holding their counts of their datatypes
//! (for immediate forms, until the request completes), arrays of the length the
//! standard gives, OUT arguments writable and aliasing no other argument.

use std::ffi::{c_char, c_int, c_void};

use crate::conv::buffer::{region_in, region_out};
use oxmpi_core::buf;
use oxmpi_core::datatype::pack_size as core_pack_size;
use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::conv::errors::{bad, R};
use crate::conv::large::{fit, fit_addr};
use crate::conv::large::{Count, Displ};
use crate::conv::{committed, get_str};
use crate::dtype::count_arg;
use crate::types::*;

pub unsafe fn pack<C: Count>(
    call: &'static str,
    inbuf: *const c_void,
    incount: C,
    h: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: C,
    pos: &mut C,
    c: MPI_Comm,
) -> R<()> {
    {
        crate::conv::comm(c, call)?;
        let n = count_arg(call, "incount", incount)?;
        let dt = committed(h, call, "datatype")?;
        let size = count_arg(call, "outsize", outsize)?;
        if pos.wide() < 0 {
            return Err(bad(
                ErrorClass::Arg,
                call,
                "position",
                format!("{} is negative", *pos),
            ));
        }
        crate::conv::check_buf(call, "inbuf", inbuf, n, &dt)?;
        if outbuf.is_null() && size > 0 {
            return Err(bad(ErrorClass::Buffer, call, "outbuf", "is NULL"));
        }
        let outs: &mut [u8] = if size == 0 {
            &mut []
        } else {
            // SAFETY: non-null with `size` > 0 (checked above): MPI_Pack's `outbuf` holds `outsize` = `size` bytes, aliasing no other argument.
            unsafe { std::slice::from_raw_parts_mut(outbuf as *mut u8, size) }
        };
        let mut p = pos.wide() as usize;
        // SAFETY: the C caller's buffer holds `n` elements of `dt`.
        let src = unsafe { region_in(inbuf, n, &dt) };
        buf::pack(src.send(n), outs, &mut p)?;
        *pos = fit(call, "position", p as i64)?;
        Ok(())
    }
}
pub use self::pack as pack_c;

pub unsafe fn unpack<C: Count>(
    call: &'static str,
    inbuf: *const c_void,
    insize: C,
    pos: &mut C,
    outbuf: *mut c_void,
    outcount: C,
    h: MPI_Datatype,
    c: MPI_Comm,
) -> R<()> {
    {
        crate::conv::comm(c, call)?;
        let n = count_arg(call, "outcount", outcount)?;
        let dt = committed(h, call, "datatype")?;
        let size = count_arg(call, "insize", insize)?;
        if pos.wide() < 0 {
            return Err(bad(
                ErrorClass::Arg,
                call,
                "position",
                format!("{} is negative", *pos),
            ));
        }
        crate::conv::check_buf(call, "outbuf", outbuf, n, &dt)?;
        if inbuf.is_null() && size > 0 {
            return Err(bad(ErrorClass::Buffer, call, "inbuf", "is NULL"));
        }
        let ins: &[u8] = if size == 0 {
            &[]
        } else {
            // SAFETY: non-null with `size` > 0 (checked above): MPI_Unpack's `inbuf` holds `insize` = `size` bytes, not written during the call.
            unsafe { std::slice::from_raw_parts(inbuf as *const u8, size) }
        };
        let mut p = pos.wide() as usize;
        // SAFETY: the C caller's buffer is writable for `n` elements of `dt`.
        let mut dst = unsafe { region_out(outbuf, n, &dt) };
        buf::unpack(ins, &mut p, dst.recv(n))?;
        *pos = fit(call, "position", p as i64)?;
        Ok(())
    }
}
pub use self::unpack as unpack_c;

/// MPI_Pack_size(_c) (abi.txt `query` lines: the generated `PMPI_x` checks `incount`
/// and the OUT pointer, and stores the answer).
fn pack_size_of<C: Count>(
    call: &'static str,
    incount: usize,
    h: MPI_Datatype,
    c: MPI_Comm,
) -> R<C> {
    crate::conv::comm(c, call)?;
    let dt = committed(h, call, "datatype")?;
    fit(call, "size", core_pack_size(&dt, incount) as i64)
}
/// MPI_Pack_size.
pub fn pack_size(call: &'static str, incount: usize, h: MPI_Datatype, c: MPI_Comm) -> R<c_int> {
    pack_size_of(call, incount, h, c)
}
/// MPI_Pack_size_c.
pub fn pack_size_c(
    call: &'static str,
    incount: usize,
    h: MPI_Datatype,
    c: MPI_Comm,
) -> R<MPI_Count> {
    pack_size_of(call, incount, h, c)
}

// ----- external32 -------------------------------------------------------------------

fn external32(call: &str, datarep: *const c_char) -> R<()> {
    // SAFETY: `datarep` is a NUL-terminated C string (or NULL, rejected) by the MPI contract.
    let rep = unsafe { get_str(call, "datarep", datarep)? };
    if rep != "external32" {
        return Err(crate::conv::errors::bad_code(
            MPI_ERR_UNSUPPORTED_DATAREP,
            call,
            "datarep",
            format!("`{rep}` is not \"external32\""),
        ));
    }
    Ok(())
}

pub unsafe fn pack_external_size<C: Count, A: Displ>(
    call: &'static str,
    datarep: *const c_char,
    incount: C,
    h: MPI_Datatype,
    size: &mut A,
) -> R<()> {
    {
        external32(call, datarep)?;
        let n = count_arg(call, "incount", incount)?;
        let dt = committed(h, call, "datatype")?;
        let ext = oxmpi_core::datatype::external32::size(&dt)
            .checked_mul(n)
            .ok_or_else(|| {
                bad(
                    ErrorClass::Count,
                    call,
                    "incount",
                    format!("{n} elements overflow the address space"),
                )
            })?;
        *size = fit_addr(call, "size", ext)?;
        Ok(())
    }
}
pub use self::pack_external_size as pack_external_size_c;

pub unsafe fn pack_external<C: Count, A: Displ>(
    call: &'static str,
    datarep: *const c_char,
    inbuf: *const c_void,
    incount: C,
    h: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: A,
    pos: &mut A,
) -> R<()> {
    let outsize = outsize.addr();
    {
        external32(call, datarep)?;
        let n = count_arg(call, "incount", incount)?;
        let dt = committed(h, call, "datatype")?;
        if pos.addr() < 0 || outsize < 0 {
            return Err(bad(
                ErrorClass::Arg,
                call,
                "position",
                format!("position {} or outsize {outsize} is negative", pos.addr()),
            ));
        }
        crate::conv::check_buf(call, "inbuf", inbuf, n, &dt)?;
        let need = oxmpi_core::datatype::external32::size(&dt)
            .checked_mul(n)
            .ok_or_else(|| {
                bad(
                    ErrorClass::Count,
                    call,
                    "incount",
                    format!("{n} elements overflow the address space"),
                )
            })?;
        if (pos.addr() as usize)
            .checked_add(need)
            .is_none_or(|end| end > outsize as usize)
        {
            return Err(bad(
                ErrorClass::Truncate,
                call,
                "outsize",
                format!(
                    "{outsize} bytes cannot take {need} more bytes at position {}",
                    pos.addr()
                ),
            ));
        }
        if need == 0 {
            return Ok(());
        }
        let outs: &mut [u8] =
            // SAFETY: non-null (need > 0 fits in outsize, checked above): `outbuf` holds `outsize` bytes, aliasing no other argument.
            unsafe { std::slice::from_raw_parts_mut(outbuf as *mut u8, outsize as usize) };
        let start = pos.addr() as usize;
        let mut native = vec![0u8; dt.size() * n];
        let mut p = 0;
        // SAFETY: the C caller's buffer holds `n` elements of `dt`.
        let src = unsafe { region_in(inbuf, n, &dt) };
        buf::pack(src.send(n), &mut native, &mut p)?;
        oxmpi_core::datatype::external32::encode(
            call,
            &dt,
            n,
            &native,
            &mut outs[start..start + need],
        )?;
        *pos = fit_addr(call, "position", start + need)?;
        Ok(())
    }
}
pub use self::pack_external as pack_external_c;

pub unsafe fn unpack_external<C: Count, A: Displ>(
    call: &'static str,
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: A,
    pos: &mut A,
    outbuf: *mut c_void,
    outcount: C,
    h: MPI_Datatype,
) -> R<()> {
    let insize = insize.addr();
    {
        external32(call, datarep)?;
        let n = count_arg(call, "outcount", outcount)?;
        let dt = committed(h, call, "datatype")?;
        let need = oxmpi_core::datatype::external32::size(&dt)
            .checked_mul(n)
            .ok_or_else(|| {
                bad(
                    ErrorClass::Count,
                    call,
                    "outcount",
                    format!("{n} elements overflow the address space"),
                )
            })?;
        if pos.addr() < 0
            || insize < 0
            || (pos.addr() as usize)
                .checked_add(need)
                .is_none_or(|end| end > insize as usize)
        {
            return Err(bad(
                ErrorClass::Truncate,
                call,
                "insize",
                format!(
                    "{insize} bytes do not hold {need} bytes at position {}",
                    pos.addr()
                ),
            ));
        }
        crate::conv::check_buf(call, "outbuf", outbuf, n, &dt)?;
        if need == 0 {
            return Ok(());
        }
        let start = pos.addr() as usize;
        // SAFETY: non-null (need > 0 bytes lie inside insize, checked above): `inbuf` holds `insize` bytes, not written during the call.
        let ext = &unsafe { std::slice::from_raw_parts(inbuf as *const u8, insize as usize) }
            [start..start + need];
        let mut tmp = vec![0u8; dt.size() * n];
        oxmpi_core::datatype::external32::decode(call, &dt, n, ext, &mut tmp)?;
        let mut p = 0;
        // SAFETY: the C caller's buffer is writable for `n` elements of `dt`.
        let mut dst = unsafe { region_out(outbuf, n, &dt) };
        buf::unpack(&tmp, &mut p, dst.recv(n))?;
        *pos = fit_addr(call, "position", start + need)?;
        Ok(())
    }
}
pub use self::unpack_external as unpack_external_c;
