//! File pointers and data access: the individual, shared, ordered and explicit-offset
//! reads and writes, blocking, non-blocking and split collective.

use super::*;
use crate::conv::region::{region_in, region_out};
use oxmpi_core::buf::Loan;

// ----- pointers ------------------------------------------------------------------------------

fn whence_arg(call: &str, w: c_int) -> R<Whence> {
    match w {
        MPI_SEEK_SET => Ok(Whence::Set),
        MPI_SEEK_CUR => Ok(Whence::Cur),
        MPI_SEEK_END => Ok(Whence::End),
        _ => Err(bad(
            ErrorClass::Arg,
            call,
            "whence",
            format!("{w} is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END"),
        )),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_seek(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> c_int {
    const CALL: &str = "MPI_File_seek";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        Ok(f.seek(CALL, offset, whence_arg(CALL, whence)?)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_seek_shared(
    fh: MPI_File,
    offset: MPI_Offset,
    whence: c_int,
) -> c_int {
    const CALL: &str = "MPI_File_seek_shared";
    ffi_file(CALL, fh, || {
        let f = file(fh, CALL)?;
        Ok(f.seek_shared(CALL, offset, whence_arg(CALL, whence)?)?)
    })
}

/// MPI_File_get_position (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
pub fn file_get_position(call: &'static str, fh: MPI_File) -> R<MPI_Offset> {
    Ok(file(fh, call)?.position(call)? as MPI_Offset)
}

/// MPI_File_get_position_shared (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
pub fn file_get_position_shared(call: &'static str, fh: MPI_File) -> R<MPI_Offset> {
    Ok(file(fh, call)?.position_shared(call)? as MPI_Offset)
}

// ----- data access ---------------------------------------------------------------------------

/// What the C call hands back.
#[derive(Clone, Copy)]
enum Out {
    Status(*mut MPI_Status),
    Request(*mut MPI_Request),
    Begin,
}

/// Every read/write call: `base` is the `int` form's name.
#[allow(clippy::too_many_arguments)]
unsafe fn access<C: Count>(
    base: &'static str,
    fh: MPI_File,
    offset: Option<MPI_Offset>,
    pos: Pos,
    coll: bool,
    dir: Dir,
    buf: *mut c_void,
    count: C,
    h: MPI_Datatype,
    o: Out,
) -> c_int {
    let call = name::<C>(base);
    ffi_file(call, fh, || {
        let f = file(fh, call)?;
        let n = to_usize(call, "count", count)?;
        let dt = committed(h, call, "datatype")?;
        crate::conv::check_buf(call, "buf", buf, n, &dt)?;
        let pos = match offset {
            Some(off) => Pos::At(offset_arg(call, off)?),
            None => pos,
        };
        if let Out::Request(r) = o {
            if r.is_null() {
                return Err(bad(ErrorClass::Arg, call, "request", "is NULL"));
            }
        }
        match o {
            Out::Status(s) => {
                let mut region = match dir {
                    // SAFETY: the C caller's buffer holds `n` elements of `dt`, read by a write (MPI contract).
                    Dir::Write => unsafe { region_in(buf, n, &dt) },
                    // SAFETY: the C caller's buffer is writable for `n` elements of `dt` by a read (MPI contract).
                    Dir::Read => unsafe { region_out(buf, n, &dt) },
                };
                let st = f.access(call, pos, coll, dir, &mut region)?;
                fill_status(s, &st);
            }
            Out::Request(r) => {
                // A collective access completes in the background, on the file's I/O worker.
                // SAFETY: as above; the buffer stays valid until the request completes (MPI contract).
                let req = f.iaccess(call, pos, coll, dir, unsafe { lent(buf, n, &dt, dir) })?;
                let h = crate::conv::new_request(req, crate::conv::errors::NO_COMM, None);
                // SAFETY: non-null (checked above), the OUT request (MPI contract).
                unsafe { *r = h };
            }
            Out::Begin => {
                // SAFETY: as above, until the matching `_end` returns.
                f.split_begin(call, pos, dir, unsafe { lent(buf, n, &dt, dir) })?;
            }
        }
        Ok(())
    })
}

/// The C caller's buffer of a non-blocking or split access, lent until the request
/// completes (for `_begin`: until `_end` returns).
///
/// # Safety
/// MPI's contract for such a buffer: `n` elements of `dt` at `buf`, readable and
/// unmodified (a write) or writable and otherwise untouched (a read), stay so until
/// the access completes, which a `'static` region states.
unsafe fn lent(buf: *mut c_void, n: usize, dt: &Datatype, dir: Dir) -> Loan {
    Loan::new(match dir {
        // SAFETY: this fn's contract.
        Dir::Write => unsafe { region_in(buf, n, dt) },
        // SAFETY: this fn's contract.
        Dir::Read => unsafe { region_out(buf, n, dt) },
    })
}

macro_rules! rw {
    ($int:ident, $wide:ident, $base:literal, $buf:ident, off, $pos:expr, $coll:expr, $dir:expr, $out:ident: $oty:ident => $o:expr) => {
        entry!($int, $wide, (fh: MPI_File, offset: MPI_Offset, buf: $buf, count: CNT, datatype: MPI_Datatype, $out: $oty) =>
            access($base, fh, Some(offset), $pos, $coll, $dir, buf as *mut c_void, count, datatype, $o));
    };
    ($int:ident, $wide:ident, $base:literal, $buf:ident, nooff, $pos:expr, $coll:expr, $dir:expr, $out:ident: $oty:ident => $o:expr) => {
        entry!($int, $wide, (fh: MPI_File, buf: $buf, count: CNT, datatype: MPI_Datatype, $out: $oty) =>
            access($base, fh, None, $pos, $coll, $dir, buf as *mut c_void, count, datatype, $o));
    };
}

use Dir::{Read as RD, Write as WR};
const IND: Pos = Pos::Individual;
const SHR: Pos = Pos::Shared;
const ORD: Pos = Pos::Ordered;
const AT: Pos = Pos::At(0);

rw!(PMPI_File_read_at, PMPI_File_read_at_c, "MPI_File_read_at", MVoid, off, AT, false, RD, status: PStatus => Out::Status(status));
rw!(PMPI_File_read_at_all, PMPI_File_read_at_all_c, "MPI_File_read_at_all", MVoid, off, AT, true, RD, status: PStatus => Out::Status(status));
rw!(PMPI_File_write_at, PMPI_File_write_at_c, "MPI_File_write_at", CVoid, off, AT, false, WR, status: PStatus => Out::Status(status));
rw!(PMPI_File_write_at_all, PMPI_File_write_at_all_c, "MPI_File_write_at_all", CVoid, off, AT, true, WR, status: PStatus => Out::Status(status));
rw!(PMPI_File_iread_at, PMPI_File_iread_at_c, "MPI_File_iread_at", MVoid, off, AT, false, RD, request: PReq => Out::Request(request));
rw!(PMPI_File_iwrite_at, PMPI_File_iwrite_at_c, "MPI_File_iwrite_at", CVoid, off, AT, false, WR, request: PReq => Out::Request(request));
rw!(PMPI_File_iread_at_all, PMPI_File_iread_at_all_c, "MPI_File_iread_at_all", MVoid, off, AT, true, RD, request: PReq => Out::Request(request));
rw!(PMPI_File_iwrite_at_all, PMPI_File_iwrite_at_all_c, "MPI_File_iwrite_at_all", CVoid, off, AT, true, WR, request: PReq => Out::Request(request));
rw!(PMPI_File_read, PMPI_File_read_c, "MPI_File_read", MVoid, nooff, IND, false, RD, status: PStatus => Out::Status(status));
rw!(PMPI_File_read_all, PMPI_File_read_all_c, "MPI_File_read_all", MVoid, nooff, IND, true, RD, status: PStatus => Out::Status(status));
rw!(PMPI_File_write, PMPI_File_write_c, "MPI_File_write", CVoid, nooff, IND, false, WR, status: PStatus => Out::Status(status));
rw!(PMPI_File_write_all, PMPI_File_write_all_c, "MPI_File_write_all", CVoid, nooff, IND, true, WR, status: PStatus => Out::Status(status));
rw!(PMPI_File_iread, PMPI_File_iread_c, "MPI_File_iread", MVoid, nooff, IND, false, RD, request: PReq => Out::Request(request));
rw!(PMPI_File_iwrite, PMPI_File_iwrite_c, "MPI_File_iwrite", CVoid, nooff, IND, false, WR, request: PReq => Out::Request(request));
rw!(PMPI_File_iread_all, PMPI_File_iread_all_c, "MPI_File_iread_all", MVoid, nooff, IND, true, RD, request: PReq => Out::Request(request));
rw!(PMPI_File_iwrite_all, PMPI_File_iwrite_all_c, "MPI_File_iwrite_all", CVoid, nooff, IND, true, WR, request: PReq => Out::Request(request));
rw!(PMPI_File_read_shared, PMPI_File_read_shared_c, "MPI_File_read_shared", MVoid, nooff, SHR, false, RD, status: PStatus => Out::Status(status));
rw!(PMPI_File_write_shared, PMPI_File_write_shared_c, "MPI_File_write_shared", CVoid, nooff, SHR, false, WR, status: PStatus => Out::Status(status));
rw!(PMPI_File_iread_shared, PMPI_File_iread_shared_c, "MPI_File_iread_shared", MVoid, nooff, SHR, false, RD, request: PReq => Out::Request(request));
rw!(PMPI_File_iwrite_shared, PMPI_File_iwrite_shared_c, "MPI_File_iwrite_shared", CVoid, nooff, SHR, false, WR, request: PReq => Out::Request(request));
rw!(PMPI_File_read_ordered, PMPI_File_read_ordered_c, "MPI_File_read_ordered", MVoid, nooff, ORD, true, RD, status: PStatus => Out::Status(status));
rw!(PMPI_File_write_ordered, PMPI_File_write_ordered_c, "MPI_File_write_ordered", CVoid, nooff, ORD, true, WR, status: PStatus => Out::Status(status));

// Split collectives: `_begin` starts the access in the background, `_end` waits for it.
macro_rules! begin {
    ($int:ident, $wide:ident, $base:literal, $buf:ident, off, $pos:expr, $dir:expr) => {
        entry!($int, $wide, (fh: MPI_File, offset: MPI_Offset, buf: $buf, count: CNT, datatype: MPI_Datatype) =>
            access($base, fh, Some(offset), $pos, true, $dir, buf as *mut c_void, count, datatype, Out::Begin));
    };
    ($int:ident, $wide:ident, $base:literal, $buf:ident, nooff, $pos:expr, $dir:expr) => {
        entry!($int, $wide, (fh: MPI_File, buf: $buf, count: CNT, datatype: MPI_Datatype) =>
            access($base, fh, None, $pos, true, $dir, buf as *mut c_void, count, datatype, Out::Begin));
    };
}

begin!(
    PMPI_File_read_at_all_begin,
    PMPI_File_read_at_all_begin_c,
    "MPI_File_read_at_all_begin",
    MVoid,
    off,
    AT,
    RD
);
begin!(
    PMPI_File_write_at_all_begin,
    PMPI_File_write_at_all_begin_c,
    "MPI_File_write_at_all_begin",
    CVoid,
    off,
    AT,
    WR
);
begin!(
    PMPI_File_read_all_begin,
    PMPI_File_read_all_begin_c,
    "MPI_File_read_all_begin",
    MVoid,
    nooff,
    IND,
    RD
);
begin!(
    PMPI_File_write_all_begin,
    PMPI_File_write_all_begin_c,
    "MPI_File_write_all_begin",
    CVoid,
    nooff,
    IND,
    WR
);
begin!(
    PMPI_File_read_ordered_begin,
    PMPI_File_read_ordered_begin_c,
    "MPI_File_read_ordered_begin",
    MVoid,
    nooff,
    ORD,
    RD
);
begin!(
    PMPI_File_write_ordered_begin,
    PMPI_File_write_ordered_begin_c,
    "MPI_File_write_ordered_begin",
    CVoid,
    nooff,
    ORD,
    WR
);

fn split_end(
    call: &'static str,
    fh: MPI_File,
    pos: Pos,
    dir: Dir,
    status: *mut MPI_Status,
) -> c_int {
    ffi_file(call, fh, || {
        let f = file(fh, call)?;
        let st = f.split_end(call, pos, dir)?;
        fill_status(status, &st);
        Ok(())
    })
}

macro_rules! end {
    ($f:ident, $base:literal, $buf:ident, $pos:expr, $dir:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $f(fh: MPI_File, _buf: $buf, status: *mut MPI_Status) -> c_int {
            split_end($base, fh, $pos, $dir, status)
        }
    };
}

end!(
    PMPI_File_read_at_all_end,
    "MPI_File_read_at_all_end",
    MVoid,
    AT,
    RD
);
end!(
    PMPI_File_write_at_all_end,
    "MPI_File_write_at_all_end",
    CVoid,
    AT,
    WR
);
end!(
    PMPI_File_read_all_end,
    "MPI_File_read_all_end",
    MVoid,
    IND,
    RD
);
end!(
    PMPI_File_write_all_end,
    "MPI_File_write_all_end",
    CVoid,
    IND,
    WR
);
end!(
    PMPI_File_read_ordered_end,
    "MPI_File_read_ordered_end",
    MVoid,
    ORD,
    RD
);
end!(
    PMPI_File_write_ordered_end,
    "MPI_File_write_ordered_end",
    CVoid,
    ORD,
    WR
);
