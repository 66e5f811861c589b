//! Fortran procedures taking Fortran callbacks: user reduction operations, error
//! handlers and generalized requests.

use super::*;

// ----- user reduction operations -----------------------------------------------------

/// A Fortran user function: `SUBROUTINE F(INVEC, INOUTVEC, LEN, DATATYPE)`.
pub use crate::op::FortranUserFn;

#[no_mangle]
pub unsafe extern "C" fn pmpi_op_create_(
    f: Option<FortranUserFn>,
    commute: *const c_int,
    op: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: the Fortran caller's arguments.
    unsafe {
        let mut h: MPI_Op = MPI_OP_NULL;
        let rc = crate::op::op_create_fortran(f, *commute, &mut h);
        if rc == MPI_SUCCESS {
            *op = crate::pmpi::PMPI_Op_c2f(h);
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_op_create_(
    f: Option<FortranUserFn>,
    commute: *const c_int,
    op: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: same contract.
    unsafe { pmpi_op_create_(f, commute, op, ierror) }
}

// ----- error handlers --------------------------------------------------------------------

/// A Fortran error handler: `SUBROUTINE H(COMM, ERROR_CODE)`.
type FortranErrhandler = unsafe extern "C" fn(*mut c_int, *mut c_int);

/// The Fortran function behind each error handler made from Fortran.
static FORTRAN_EH: Mutex<Option<HashMap<MPI_Errhandler, FortranErrhandler>>> = Mutex::new(None);

/// The C function registered for every Fortran error handler: finds the
/// handler attached to the communicator and calls its Fortran function with the
/// communicator's Fortran integer. (Defined without C's `...`, which it never
/// reads; called through the variadic type, see `create_errhandler`.)
unsafe extern "C" fn errhandler_trampoline(comm: *mut MPI_Comm, code: *mut c_int) {
    // SAFETY: the library calls error handlers with pointers to its own locals.
    let c = unsafe { *comm };
    let h = crate::conv::handles::state()
        .comm_errhandler
        .get(&c)
        .copied();
    let f = h.and_then(|h| {
        FORTRAN_EH
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(|m| m.get(&h).copied())
    });
    if let Some(f) = f {
        // SAFETY: c2f takes the handle table's lock, free here.
        let mut fc = unsafe { crate::pmpi::PMPI_Comm_c2f(c) };
        // SAFETY: the user's Fortran handler, with INTEGER arguments by reference.
        unsafe { f(&mut fc, code) };
    }
}

unsafe fn create_errhandler(
    mpi1: bool,
    f: Option<FortranErrhandler>,
    eh: *mut c_int,
    ierror: *mut c_int,
) {
    // A function defined without the trailing `...` is called through a variadic
    // pointer type: on the supported targets (x86-64 System V, AArch64 Linux) named
    // arguments travel the same way.
    // SAFETY: same argument passing as above, and the callee reads no other arguments.
    let tramp = unsafe {
        std::mem::transmute::<
            unsafe extern "C" fn(*mut MPI_Comm, *mut c_int),
            MPI_Comm_errhandler_function,
        >(errhandler_trampoline)
    };
    let mut h: MPI_Errhandler = MPI_ERRHANDLER_NULL;
    // SAFETY: the C calls with a valid function and a local out-argument.
    let rc = unsafe {
        match (f, mpi1) {
            (None, false) => crate::pmpi::PMPI_Comm_create_errhandler(None, &mut h),
            (None, true) => crate::pmpi::PMPI_Errhandler_create(None, &mut h),
            (Some(_), false) => crate::pmpi::PMPI_Comm_create_errhandler(Some(tramp), &mut h),
            (Some(_), true) => crate::pmpi::PMPI_Errhandler_create(Some(tramp), &mut h),
        }
    };
    if rc == MPI_SUCCESS {
        if let Some(f) = f {
            FORTRAN_EH
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert_with(HashMap::new)
                .insert(h, f);
        }
        // SAFETY: the Fortran caller's INTEGER.
        unsafe { *eh = crate::pmpi::PMPI_Errhandler_c2f(h) };
    }
    // SAFETY: the Fortran caller's INTEGER.
    unsafe { set_ierror(ierror, rc) };
}

#[no_mangle]
pub unsafe extern "C" fn pmpi_comm_create_errhandler_(
    f: Option<FortranErrhandler>,
    eh: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: the Fortran caller's arguments.
    unsafe { create_errhandler(false, f, eh, ierror) }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_comm_create_errhandler_(
    f: Option<FortranErrhandler>,
    eh: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: same contract.
    unsafe { create_errhandler(false, f, eh, ierror) }
}
#[no_mangle]
pub unsafe extern "C" fn pmpi_errhandler_create_(
    f: Option<FortranErrhandler>,
    eh: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: the Fortran caller's arguments.
    unsafe { create_errhandler(true, f, eh, ierror) }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_errhandler_create_(
    f: Option<FortranErrhandler>,
    eh: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: same contract.
    unsafe { create_errhandler(true, f, eh, ierror) }
}

// Window and file error handlers: the trampoline finds the handler through the
// standard MPI_Win_get_errhandler / MPI_File_get_errhandler, so it needs nothing
// of how those areas keep their handlers.

/// # Safety
/// The library calls error handlers with pointers to its own locals.
unsafe extern "C" fn win_errhandler_trampoline(win: *mut MPI_Win, code: *mut c_int) {
    // SAFETY: see above; the get/free pair leaves the handler's count as it was.
    unsafe {
        let mut h: MPI_Errhandler = MPI_ERRHANDLER_NULL;
        if crate::pmpi::PMPI_Win_get_errhandler(*win, &mut h) != MPI_SUCCESS {
            return;
        }
        let f = FORTRAN_EH
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(|m| m.get(&h).copied());
        crate::pmpi::PMPI_Errhandler_free(&mut h);
        if let Some(f) = f {
            let mut fw = crate::pmpi::PMPI_Win_c2f(*win);
            f(&mut fw, code);
        }
    }
}

/// # Safety
/// As `win_errhandler_trampoline`.
unsafe extern "C" fn file_errhandler_trampoline(file: *mut MPI_File, code: *mut c_int) {
    // SAFETY: as `win_errhandler_trampoline`.
    unsafe {
        let mut h: MPI_Errhandler = MPI_ERRHANDLER_NULL;
        if crate::pmpi::PMPI_File_get_errhandler(*file, &mut h) != MPI_SUCCESS {
            return;
        }
        let f = FORTRAN_EH
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(|m| m.get(&h).copied());
        crate::pmpi::PMPI_Errhandler_free(&mut h);
        if let Some(f) = f {
            let mut ff = crate::pmpi::PMPI_File_c2f(*file);
            f(&mut ff, code);
        }
    }
}

macro_rules! object_errhandler {
    ($p:ident, $m:ident, $create:ident, $tramp:ident, $ty:ty, $fnty:ty) => {
        #[no_mangle]
        pub unsafe extern "C" fn $p(f: Option<FortranErrhandler>, eh: *mut c_int, ierror: *mut c_int) {
            let _fortran = crate::conv::errors::FortranCall::enter();
            // SAFETY: a function defined without the trailing `...`, called through the variadic type (see `create_errhandler`); the Fortran caller's INTEGERs.
            unsafe {
                let tramp = std::mem::transmute::<unsafe extern "C" fn(*mut $ty, *mut c_int), $fnty>($tramp);
                let mut h: MPI_Errhandler = MPI_ERRHANDLER_NULL;
                let rc = crate::pmpi::$create(f.map(|_| tramp), &mut h);
                if rc == MPI_SUCCESS {
                    if let Some(f) = f {
                        FORTRAN_EH.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(HashMap::new).insert(h, f);
                    }
                    *eh = crate::pmpi::PMPI_Errhandler_c2f(h);
                }
                set_ierror(ierror, rc);
            }
        }
        #[no_mangle]
        pub unsafe extern "C" fn $m(f: Option<FortranErrhandler>, eh: *mut c_int, ierror: *mut c_int) {
            // SAFETY: same contract.
            unsafe { $p(f, eh, ierror) }
        }
    };
}
object_errhandler!(
    pmpi_win_create_errhandler_,
    mpi_win_create_errhandler_,
    PMPI_Win_create_errhandler,
    win_errhandler_trampoline,
    MPI_Win,
    MPI_Win_errhandler_function
);
object_errhandler!(
    pmpi_file_create_errhandler_,
    mpi_file_create_errhandler_,
    PMPI_File_create_errhandler,
    file_errhandler_trampoline,
    MPI_File,
    MPI_File_errhandler_function
);

// ----- generalized requests ---------------------------------------------------------------

/// Fortran query function: (EXTRA_STATE, STATUS, IERROR).
type FQuery = unsafe extern "C" fn(*mut isize, *mut c_int, *mut c_int);
/// Fortran free function: (EXTRA_STATE, IERROR).
type FFree = unsafe extern "C" fn(*mut isize, *mut c_int);
/// Fortran cancel function: (EXTRA_STATE, COMPLETE, IERROR).
type FCancel = unsafe extern "C" fn(*mut isize, *mut c_int, *mut c_int);

/// What a generalized request started from Fortran carries as C extra_state.
/// `extra` is the address of the caller's EXTRA_STATE variable, which the
/// callbacks receive by reference (as MPICH and Open MPI do): a free function
/// that updates its EXTRA_STATE updates the program's variable.
struct FGreq {
    query: Option<FQuery>,
    free: Option<FFree>,
    cancel: Option<FCancel>,
    extra: *mut isize,
}

unsafe extern "C" fn greq_query(extra: *mut c_void, status: *mut MPI_Status) -> c_int {
    // SAFETY: `extra` is the FGreq of this request; the status is the library's (the Fortran status has the C layout).
    unsafe {
        let g = &mut *(extra as *mut FGreq);
        let mut ierr = MPI_SUCCESS;
        if let Some(q) = g.query {
            q(g.extra, status as *mut c_int, &mut ierr);
        }
        ierr
    }
}

unsafe extern "C" fn greq_free(extra: *mut c_void) -> c_int {
    // SAFETY: `extra` is the FGreq of this request, freed here: MPI calls free_fn once.
    unsafe {
        let g = Box::from_raw(extra as *mut FGreq);
        let mut ierr = MPI_SUCCESS;
        if let Some(f) = g.free {
            f(g.extra, &mut ierr);
        }
        ierr
    }
}

unsafe extern "C" fn greq_cancel(extra: *mut c_void, complete: c_int) -> c_int {
    // SAFETY: `extra` is the FGreq of this request.
    unsafe {
        let g = &mut *(extra as *mut FGreq);
        let mut ierr = MPI_SUCCESS;
        let mut c = (complete != 0) as c_int;
        if let Some(f) = g.cancel {
            f(g.extra, &mut c, &mut ierr);
        }
        ierr
    }
}

#[no_mangle]
pub unsafe extern "C" fn pmpi_grequest_start_(
    query: Option<FQuery>,
    free: Option<FFree>,
    cancel: Option<FCancel>,
    extra: *const isize,
    request: *mut c_int,
    ierror: *mut c_int,
) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's arguments; the FGreq lives until greq_free.
    unsafe {
        let g = Box::into_raw(Box::new(FGreq {
            query,
            free,
            cancel,
            extra: extra as *mut isize,
        })) as *mut c_void;
        let mut h: MPI_Request = MPI_REQUEST_NULL;
        let rc = crate::pmpi::PMPI_Grequest_start(
            Some(greq_query),
            Some(greq_free),
            Some(greq_cancel),
            g,
            &mut h,
        );
        if rc == MPI_SUCCESS {
            *request = crate::pmpi::PMPI_Request_c2f(h);
        } else {
            drop(Box::from_raw(g as *mut FGreq));
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_grequest_start_(
    query: Option<FQuery>,
    free: Option<FFree>,
    cancel: Option<FCancel>,
    extra: *const isize,
    request: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: same contract.
    unsafe { pmpi_grequest_start_(query, free, cancel, extra, request, ierror) }
}
