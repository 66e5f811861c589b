//! Reduction operations: user-defined operations (C, large-count C and Fortran
//! user functions) and their queries. (The handle lookup is `conv::op`.)

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use oxmpi_core::error::ErrorClass;
use oxmpi_core::op::Op;

use crate::abi::*;
use crate::conv::errors::{bad, ffi, out, NO_COMM, R};
use crate::conv::handles::state;
use crate::conv::large::{entry, name, ptr::*, to_usize, Count};
use crate::conv::{committed, find_handle, op};
use crate::types::*;

/// A Fortran user function (`MPI_OP_CREATE` from `mpif.h`/`use mpi`): the datatype is a
/// Fortran INTEGER. (`fortran/` re-exports it.)
pub type FortranUserFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut c_int);

/// The C user function of MPI_Op_create (`int` length) or MPI_Op_create_c
/// (`MPI_Count` length).
#[derive(Clone, Copy)]
enum UserFn {
    Int(MPI_User_function),
    Large(MPI_User_function_c),
    /// A Fortran user function (`fortran/callbacks.rs`): the datatype is a Fortran INTEGER.
    Fortran(FortranUserFn),
}

unsafe fn op_create(
    call: &'static str,
    f: Option<UserFn>,
    commute: c_int,
    o: *mut MPI_Op,
) -> c_int {
    ffi(call, NO_COMM, || {
        let f = f.ok_or_else(|| bad(ErrorClass::Arg, call, "user_fn", "is NULL"))?;
        // SAFETY: `op` (`o`) is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "op", o)? };
        let func =
            move |inv: *const u8, inout: *mut u8, n: usize, dt: &oxmpi_core::datatype::Datatype| {
                let mut h = find_handle(dt);
                match f {
                    UserFn::Fortran(f) => {
                        // SAFETY: the conversion takes any handle value.
                        let mut fh = unsafe { crate::env::PMPI_Type_c2f(h) };
                        let ext = dt.extent().max(0) as usize;
                        let mut done = 0;
                        while done < n {
                            let k = (n - done).min(c_int::MAX as usize);
                            let mut len = k as c_int;
                            // SAFETY: the user's Fortran function (arguments by reference), called with the engine's buffers as for `Int`.
                            unsafe {
                                f(
                                    inv.add(done * ext) as *mut c_void,
                                    inout.add(done * ext) as *mut c_void,
                                    &mut len,
                                    &mut fh,
                                )
                            };
                            done += k;
                        }
                    }
                    UserFn::Large(f) => {
                        let mut len = n as MPI_Count;
                        // SAFETY: the user's function, called with buffers the engine provides.
                        unsafe { f(inv as *mut c_void, inout as *mut c_void, &mut len, &mut h) };
                    }
                    UserFn::Int(f) => {
                        // An `int` length: more than INT_MAX elements (a `_c`
                        // reduction) go in pieces of at most INT_MAX elements.
                        let ext = dt.extent().max(0) as usize;
                        let mut done = 0;
                        while done < n {
                            let k = (n - done).min(c_int::MAX as usize);
                            let mut len = k as c_int;
                            // SAFETY: the user's function, called with the engine's buffers of `n` elements advanced by `done` whole elements.
                            unsafe {
                                f(
                                    inv.add(done * ext) as *mut c_void,
                                    inout.add(done * ext) as *mut c_void,
                                    &mut len,
                                    &mut h,
                                )
                            };
                            done += k;
                        }
                    }
                }
            };
        *o = state().ops.insert(Op::user(Arc::new(func), commute != 0));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_create(
    user_fn: Option<MPI_User_function>,
    commute: c_int,
    o: *mut MPI_Op,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `op_create` needs what MPI_Op_create demands of them.
    unsafe { op_create("MPI_Op_create", user_fn.map(UserFn::Int), commute, o) }
}

/// MPI_OP_CREATE from Fortran (`fortran.rs`).
///
/// # Safety
/// `o` is NULL or valid to write one `MPI_Op`.
pub unsafe fn op_create_fortran(f: Option<FortranUserFn>, commute: c_int, o: *mut MPI_Op) -> c_int {
    // SAFETY: as for MPI_Op_create.
    unsafe { op_create("MPI_OP_CREATE", f.map(UserFn::Fortran), commute, o) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_create_c(
    user_fn: Option<MPI_User_function_c>,
    commute: c_int,
    o: *mut MPI_Op,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `op_create` needs what MPI_Op_create_c demands of them.
    unsafe { op_create("MPI_Op_create_c", user_fn.map(UserFn::Large), commute, o) }
}

/// MPI_Op_free (abi.txt `out(op)`: the generated `PMPI_x` checks `op` first).
pub fn op_free(call: &'static str, h: &mut MPI_Op) -> R<()> {
    if *h < 4096 {
        op(*h, call)?;
        return Err(bad(
            ErrorClass::Op,
            call,
            "op",
            "a predefined operation cannot be freed",
        ));
    }
    state().ops.remove(*h).ok_or_else(|| {
        bad(
            ErrorClass::Op,
            call,
            "op",
            format!("{:#x} is not a valid operation handle", *h),
        )
    })?;
    *h = MPI_OP_NULL;
    Ok(())
}

/// The answer of MPI_Op_commutative (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn op_commutative(call: &str, o: MPI_Op) -> R<c_int> {
    Ok(op(o, call)?.is_commutative() as c_int)
}

unsafe fn reduce_local<C: Count>(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: C,
    h: MPI_Datatype,
    o: MPI_Op,
) -> c_int {
    let call = name::<C>("MPI_Reduce_local");
    ffi(call, NO_COMM, || {
        let count = to_usize(call, "count", count)?;
        let dt = committed(h, call, "datatype")?;
        let x = op(o, call)?;
        crate::conv::check_buf(call, "inbuf", inbuf, count, &dt)?;
        crate::conv::check_buf(call, "inoutbuf", inoutbuf, count, &dt)?;
        // MPI forbids aliased buffer arguments; with the same address the reduction
        // would read what it just wrote.
        if count > 0 && dt.size() > 0 && inbuf as usize == inoutbuf as usize {
            return Err(bad(
                ErrorClass::Buffer,
                call,
                "inoutbuf",
                "is the same buffer as `inbuf` (MPI forbids aliased arguments)",
            ));
        }
        x.check(&dt, call)?;
        // SAFETY: both C buffers hold `count` elements of the datatype.
        unsafe { x.apply(inbuf as *const u8, inoutbuf as *mut u8, count, &dt)? };
        Ok(())
    })
}

entry!(PMPI_Reduce_local, PMPI_Reduce_local_c, (inbuf: CVoid, inoutbuf: MVoid, count: CNT, datatype: MPI_Datatype, op: MPI_Op) => reduce_local(inbuf, inoutbuf, count, datatype, op));
