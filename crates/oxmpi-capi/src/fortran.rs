//! The Fortran bindings' entry points in libmpi (`mpif.h` and `use mpi`; `use
//! mpi_f08` is Fortran code laid out by `cargo xtask dist` that calls these).
//!
//! gfortran's calling convention: the symbol of `MPI_SEND` is `mpi_send_`, every
//! argument comes by reference, a trailing `ierror` receives the code, and each
//! CHARACTER argument has a hidden length (`size_t`) after all the others.
//! Handles are Fortran INTEGERs (`MPI_x_c2f` / `MPI_x_f2c`), statuses are
//! `INTEGER(MPI_STATUS_SIZE)` arrays with the C `MPI_Status` layout (the
//! standard ABI makes them the same 8 ints).
//!
//! Most procedures are generated from `abi.txt` (gen.rs `rust_fortran`): a
//! function added there gets its Fortran binding without a line written here.
//! This file holds what is not mechanical: the sentinels (`MPI_BOTTOM`,
//! `MPI_IN_PLACE`, `MPI_STATUS_IGNORE`, ... are Fortran variables in common
//! blocks, recognized here by address), strings, MPI_INIT, and the procedures
//! that take Fortran callbacks (user operations, error handlers, attribute copy
//! and delete functions, with the predefined `MPI_COMM_DUP_FN` & co. callable
//! from Fortran) or attribute values (address-sized integers in Fortran).

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Mutex, OnceLock};

use crate::abi::*;
use crate::types::*;

// ----- sentinels ---------------------------------------------------------------------
//
// `mpif.h` and the modules declare each sentinel as the only variable of a
// common block (`COMMON /MPI_FORTRAN_BOTTOM/ MPI_BOTTOM`, symbol
// `mpi_fortran_bottom_`). libmpi defines the symbols with the sizes the
// Fortran declarations have, so the link resolves every program's common block
// to one object; whether the program's references end up at libmpi's copy or
// at a copy relocation in the executable, `dlsym(RTLD_DEFAULT)` finds the one
// the program uses, and both addresses are recognized.

#[no_mangle]
pub static mut mpi_fortran_bottom_: c_int = 0;
#[no_mangle]
pub static mut mpi_fortran_in_place_: c_int = 0;
#[no_mangle]
pub static mut mpi_fortran_buffer_automatic_: c_int = 0;
#[no_mangle]
pub static mut mpi_fortran_status_ignore_: [c_int; 8] = [0; 8];
#[no_mangle]
pub static mut mpi_fortran_statuses_ignore_: [c_int; 8] = [0; 8];
#[no_mangle]
pub static mut mpi_fortran_errcodes_ignore_: c_int = 0;
#[no_mangle]
pub static mut mpi_fortran_unweighted_: c_int = 0;
#[no_mangle]
pub static mut mpi_fortran_weights_empty_: c_int = 0;
#[no_mangle]
pub static mut mpi_fortran_argv_null_: c_char = 0;

const BOTTOM: usize = 0;
const IN_PLACE: usize = 1;
const BUFFER_AUTOMATIC: usize = 2;
const STATUS_IGNORE: usize = 3;
const STATUSES_IGNORE: usize = 4;
const ERRCODES_IGNORE: usize = 5;
const UNWEIGHTED: usize = 6;
const WEIGHTS_EMPTY: usize = 7;
const NSENT: usize = 8;

/// The addresses of each sentinel: libmpi's own and the one the program sees.
fn sentinels() -> &'static [[usize; 2]; NSENT] {
    static S: OnceLock<[[usize; 2]; NSENT]> = OnceLock::new();
    S.get_or_init(|| {
        let own: [(usize, &std::ffi::CStr); NSENT] = [
            (&raw const mpi_fortran_bottom_ as usize, c"mpi_fortran_bottom_"),
            (&raw const mpi_fortran_in_place_ as usize, c"mpi_fortran_in_place_"),
            (&raw const mpi_fortran_buffer_automatic_ as usize, c"mpi_fortran_buffer_automatic_"),
            (&raw const mpi_fortran_status_ignore_ as usize, c"mpi_fortran_status_ignore_"),
            (&raw const mpi_fortran_statuses_ignore_ as usize, c"mpi_fortran_statuses_ignore_"),
            (&raw const mpi_fortran_errcodes_ignore_ as usize, c"mpi_fortran_errcodes_ignore_"),
            (&raw const mpi_fortran_unweighted_ as usize, c"mpi_fortran_unweighted_"),
            (&raw const mpi_fortran_weights_empty_ as usize, c"mpi_fortran_weights_empty_"),
        ];
        own.map(|(a, name)| {
            // SAFETY: dlsym with a NUL-terminated name; it only looks the symbol up.
            let seen = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) } as usize;
            [a, if seen == 0 { a } else { seen }]
        })
    })
}

fn is(p: *const c_void, which: usize) -> bool {
    let a = p as usize;
    a != 0 && sentinels()[which].contains(&a)
}

/// A choice buffer: the Fortran sentinels become the C ones.
pub fn buf(p: *mut c_void) -> *mut c_void {
    if is(p, BOTTOM) {
        MPI_BOTTOM as *mut c_void
    } else if is(p, IN_PLACE) {
        MPI_IN_PLACE as *mut c_void
    } else if is(p, BUFFER_AUTOMATIC) {
        MPI_BUFFER_AUTOMATIC as *mut c_void
    } else {
        p
    }
}

/// A status or status array: MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE become NULL.
pub fn status(p: *mut c_void) -> *mut c_void {
    if is(p, STATUS_IGNORE) || is(p, STATUSES_IGNORE) {
        std::ptr::null_mut()
    } else {
        p
    }
}

pub fn weights(p: *mut c_void) -> *mut c_void {
    if is(p, UNWEIGHTED) {
        MPI_UNWEIGHTED as *mut c_void
    } else if is(p, WEIGHTS_EMPTY) {
        MPI_WEIGHTS_EMPTY as *mut c_void
    } else {
        p
    }
}

pub fn errcodes(p: *mut c_void) -> *mut c_void {
    if is(p, ERRCODES_IGNORE) {
        std::ptr::null_mut()
    } else {
        p
    }
}

/// # Safety
/// `ierror` is NULL or the Fortran caller's INTEGER.
pub unsafe fn set_ierror(ierror: *mut c_int, rc: c_int) {
    if !ierror.is_null() {
        // SAFETY: the caller's INTEGER ierror (checked non-NULL).
        unsafe { *ierror = rc };
    }
}

// ----- strings -----------------------------------------------------------------------

/// A Fortran CHARACTER argument as a C string: trailing blanks dropped (as the
/// standard says), cut at an embedded NUL.
///
/// # Safety
/// `p` points to `len` bytes (or is NULL).
pub unsafe fn str_in(p: *mut c_void, len: usize) -> Vec<c_char> {
    let bytes: &[u8] = if p.is_null() {
        &[]
    } else {
        // SAFETY: the Fortran string's `len` bytes.
        unsafe { std::slice::from_raw_parts(p as *const u8, len) }
    };
    let bytes = &bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())];
    let end = bytes.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    let start = bytes[..end].iter().position(|&b| b != b' ').unwrap_or(end);
    let mut v: Vec<c_char> = bytes[start..end].iter().map(|&b| b as c_char).collect();
    v.push(0);
    v
}

/// A C buffer for an output string of a Fortran CHARACTER of length `len`: room
/// for the longest string any MPI call writes (MPI_MAX_LIBRARY_VERSION_STRING).
pub fn str_buf(len: usize) -> Vec<c_char> {
    vec![0; len.max(MPI_MAX_LIBRARY_VERSION_STRING as usize) + 1]
}

/// Copies a C output string into a Fortran CHARACTER, blank-padded.
///
/// # Safety
/// `p` points to `len` writable bytes (or is NULL).
pub unsafe fn str_out(p: *mut c_void, len: usize, s: &[c_char]) {
    if p.is_null() {
        return;
    }
    let n = s.iter().position(|&c| c == 0).unwrap_or(s.len()).min(len);
    // SAFETY: the Fortran string's `len` writable bytes.
    let dst = unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) };
    for (i, d) in dst.iter_mut().enumerate() {
        *d = if i < n { s[i] as u8 } else { b' ' };
    }
}

// ----- helpers for generated procedures --------------------------------------------------

/// The length of `sendtypes` / `recvtypes` of an alltoallw-like call: the
/// neighbour counts for neighbourhood collectives, else the (remote) group size.
/// 0 when `comm` is not a valid communicator (the C call then reports it).
pub fn typevec_len(call: &str, comm: MPI_Comm, send: bool) -> c_int {
    if crate::conv::comm(comm, call).is_err() {
        return 0;
    }
    let mut n: c_int = 0;
    // SAFETY: C calls on a communicator just validated, with local out-arguments.
    unsafe {
        if call.contains("eighbor") {
            let mut kind = 0;
            crate::pmpi::PMPI_Topo_test(comm, &mut kind);
            match kind {
                MPI_DIST_GRAPH => {
                    let (mut i, mut o, mut w) = (0, 0, 0);
                    crate::pmpi::PMPI_Dist_graph_neighbors_count(comm, &mut i, &mut o, &mut w);
                    n = if send { o } else { i };
                }
                MPI_GRAPH => {
                    let mut r = 0;
                    crate::pmpi::PMPI_Comm_rank(comm, &mut r);
                    crate::pmpi::PMPI_Graph_neighbors_count(comm, r, &mut n);
                }
                MPI_CART => {
                    crate::pmpi::PMPI_Cartdim_get(comm, &mut n);
                    n *= 2;
                }
                _ => {}
            }
        } else {
            let mut inter = 0;
            crate::pmpi::PMPI_Comm_test_inter(comm, &mut inter);
            if inter != 0 {
                crate::pmpi::PMPI_Comm_remote_size(comm, &mut n);
            } else {
                crate::pmpi::PMPI_Comm_size(comm, &mut n);
            }
        }
    }
    n
}

// ----- environment -------------------------------------------------------------------

/// # Safety
/// Fortran caller: `ierror` its INTEGER.
#[no_mangle]
pub unsafe extern "C" fn pmpi_init_(ierror: *mut c_int) {
    sentinels();
    // SAFETY: MPI_Init accepts NULL argc/argv.
    unsafe { set_ierror(ierror, crate::pmpi::PMPI_Init(std::ptr::null_mut(), std::ptr::null_mut())) }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_init_(ierror: *mut c_int) {
    // SAFETY: same contract.
    unsafe { pmpi_init_(ierror) }
}

#[no_mangle]
pub unsafe extern "C" fn pmpi_init_thread_(required: *const c_int, provided: *mut c_int, ierror: *mut c_int) {
    sentinels();
    // SAFETY: the Fortran caller's INTEGERs; MPI_Init_thread accepts NULL argc/argv.
    unsafe { set_ierror(ierror, crate::pmpi::PMPI_Init_thread(std::ptr::null_mut(), std::ptr::null_mut(), *required, provided)) }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_init_thread_(required: *const c_int, provided: *mut c_int, ierror: *mut c_int) {
    // SAFETY: same contract.
    unsafe { pmpi_init_thread_(required, provided, ierror) }
}

/// MPI_INFO_GET_STRING(INFO, KEY, BUFLEN, VALUE, FLAG, IERROR): BUFLEN is the
/// length of VALUE in, the length of the value (without C's NUL) out.
#[no_mangle]
pub unsafe extern "C" fn pmpi_info_get_string_(
    info: *const c_int,
    key: *mut c_void,
    buflen: *mut c_int,
    value: *mut c_void,
    flag: *mut c_int,
    ierror: *mut c_int,
    key_len: usize,
    value_len: usize,
) {
    // SAFETY: the Fortran caller's arguments (strings with their hidden lengths).
    unsafe {
        let k = str_in(key, key_len);
        let cap = (*buflen).clamp(0, value_len.min(1 << 30) as c_int);
        let mut v = vec![0 as c_char; cap as usize + 1];
        let mut n = cap + 1;
        let rc = crate::pmpi::PMPI_Info_get_string(crate::pmpi::PMPI_Info_f2c(*info), k.as_ptr(), &mut n, v.as_mut_ptr(), flag);
        if rc == MPI_SUCCESS && *flag != 0 {
            // BUFLEN = 0 asks only for the length: VALUE is left as it was.
            if cap > 0 {
                str_out(value, value_len, &v);
            }
            *buflen = (n - 1).max(0);
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_info_get_string_(
    info: *const c_int,
    key: *mut c_void,
    buflen: *mut c_int,
    value: *mut c_void,
    flag: *mut c_int,
    ierror: *mut c_int,
    key_len: usize,
    value_len: usize,
) {
    // SAFETY: same contract.
    unsafe { pmpi_info_get_string_(info, key, buflen, value, flag, ierror, key_len, value_len) }
}

// ----- user reduction operations -----------------------------------------------------

/// A Fortran user function: `SUBROUTINE F(INVEC, INOUTVEC, LEN, DATATYPE)`.
pub use crate::op::FortranUserFn;

#[no_mangle]
pub unsafe extern "C" fn pmpi_op_create_(f: Option<FortranUserFn>, commute: *const c_int, op: *mut c_int, ierror: *mut c_int) {
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
pub unsafe extern "C" fn mpi_op_create_(f: Option<FortranUserFn>, commute: *const c_int, op: *mut c_int, ierror: *mut c_int) {
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
    let h = crate::conv::handles::state().comm_errhandler.get(&c).copied();
    let f = h.and_then(|h| FORTRAN_EH.lock().unwrap_or_else(|p| p.into_inner()).as_ref().and_then(|m| m.get(&h).copied()));
    if let Some(f) = f {
        // SAFETY: c2f takes the handle table's lock, free here.
        let mut fc = unsafe { crate::pmpi::PMPI_Comm_c2f(c) };
        // SAFETY: the user's Fortran handler, with INTEGER arguments by reference.
        unsafe { f(&mut fc, code) };
    }
}

unsafe fn create_errhandler(mpi1: bool, f: Option<FortranErrhandler>, eh: *mut c_int, ierror: *mut c_int) {
    // A function defined without the trailing `...` is called through a variadic
    // pointer type: on the supported targets (x86-64 System V, AArch64 Linux) named
    // arguments travel the same way.
    // SAFETY: same argument passing as above, and the callee reads no other arguments.
    let tramp = unsafe {
        std::mem::transmute::<unsafe extern "C" fn(*mut MPI_Comm, *mut c_int), MPI_Comm_errhandler_function>(errhandler_trampoline)
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
            FORTRAN_EH.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(HashMap::new).insert(h, f);
        }
        // SAFETY: the Fortran caller's INTEGER.
        unsafe { *eh = crate::pmpi::PMPI_Errhandler_c2f(h) };
    }
    // SAFETY: the Fortran caller's INTEGER.
    unsafe { set_ierror(ierror, rc) };
}

#[no_mangle]
pub unsafe extern "C" fn pmpi_comm_create_errhandler_(f: Option<FortranErrhandler>, eh: *mut c_int, ierror: *mut c_int) {
    // SAFETY: the Fortran caller's arguments.
    unsafe { create_errhandler(false, f, eh, ierror) }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_comm_create_errhandler_(f: Option<FortranErrhandler>, eh: *mut c_int, ierror: *mut c_int) {
    // SAFETY: same contract.
    unsafe { create_errhandler(false, f, eh, ierror) }
}
#[no_mangle]
pub unsafe extern "C" fn pmpi_errhandler_create_(f: Option<FortranErrhandler>, eh: *mut c_int, ierror: *mut c_int) {
    // SAFETY: the Fortran caller's arguments.
    unsafe { create_errhandler(true, f, eh, ierror) }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_errhandler_create_(f: Option<FortranErrhandler>, eh: *mut c_int, ierror: *mut c_int) {
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
        let f = FORTRAN_EH.lock().unwrap_or_else(|p| p.into_inner()).as_ref().and_then(|m| m.get(&h).copied());
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
        let f = FORTRAN_EH.lock().unwrap_or_else(|p| p.into_inner()).as_ref().and_then(|m| m.get(&h).copied());
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
            // SAFETY: a function defined without the trailing `...`, called through
            // the variadic type (see `create_errhandler`); the Fortran caller's INTEGERs.
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
object_errhandler!(pmpi_win_create_errhandler_, mpi_win_create_errhandler_, PMPI_Win_create_errhandler, win_errhandler_trampoline, MPI_Win, MPI_Win_errhandler_function);
object_errhandler!(pmpi_file_create_errhandler_, mpi_file_create_errhandler_, PMPI_File_create_errhandler, file_errhandler_trampoline, MPI_File, MPI_File_errhandler_function);

// ----- attributes ----------------------------------------------------------------------------
//
// As the standard's interlanguage rules have it (MPI-4.1 19.3.7, the example
// of attributes set in Fortran and read in C): an attribute Fortran sets is
// stored as a pointer to a library-owned copy of its INTEGER(KIND=
// MPI_ADDRESS_KIND) value (MPI-1's MPI_ATTR_PUT: a default INTEGER, sign-
// extended, so its low word comes first), which C's get returns; Fortran's get
// of such an attribute returns the value, and of an attribute C set, the
// pointer's address. The copies ("boxes") are registered, so a get can tell
// them from C's pointers; the delete trampoline of a Fortran keyval frees them.
// Predefined attributes reach Fortran as their values, not as C's pointers to them.

/// The addresses of the live boxes.
static FBOXES: Mutex<Option<std::collections::HashSet<usize>>> = Mutex::new(None);

/// A new box holding `v`: the C attribute value of a Fortran-set attribute.
fn box_value(v: isize) -> *mut c_void {
    let p = Box::into_raw(Box::new(v));
    FBOXES.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(Default::default).insert(p as usize);
    p as *mut c_void
}

/// The value in `p` when it is a live box.
fn unbox(p: *mut c_void) -> Option<isize> {
    let live = FBOXES.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|s| s.contains(&(p as usize)));
    // SAFETY: a registered box is a live Box<isize> made by `box_value`.
    live.then(|| unsafe { *(p as *const isize) })
}

/// Frees `p` when it is a live box (an attribute being deleted).
fn free_box(p: *mut c_void) {
    let was = FBOXES.lock().unwrap_or_else(|p| p.into_inner()).as_mut().is_some_and(|s| s.remove(&(p as usize)));
    if was {
        // SAFETY: registered by `box_value` and unregistered just now, so freed once.
        drop(unsafe { Box::from_raw(p as *mut isize) });
    }
}

/// Fortran copy function: (OLD, KEYVAL, EXTRA_STATE, VAL_IN, VAL_OUT, FLAG, IERROR).
type FCopy = unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int, *mut c_int);
/// Fortran delete function: (OBJ, KEYVAL, VAL, EXTRA_STATE, IERROR).
type FDelete = unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_void, *mut c_void, *mut c_int);

/// What a keyval made from Fortran carries as its C extra_state.
struct FKeyval {
    copy: Option<FCopy>,
    delete: Option<FDelete>,
    extra: isize,
    /// MPI-1 MPI_KEYVAL_CREATE: extra state and values are default INTEGERs.
    mpi1: bool,
}

const K_COMM: u8 = 0;
const K_TYPE: u8 = 1;
const K_WIN: u8 = 2;

unsafe fn handle_c2f(kind: u8, h: usize) -> c_int {
    // SAFETY: the C conversions take any value.
    unsafe {
        match kind {
            K_COMM => crate::pmpi::PMPI_Comm_c2f(h),
            K_TYPE => crate::pmpi::PMPI_Type_c2f(h),
            _ => crate::pmpi::PMPI_Win_c2f(h),
        }
    }
}

unsafe extern "C" fn copy_trampoline<const K: u8>(
    old: usize,
    keyval: c_int,
    extra: *mut c_void,
    val_in: *mut c_void,
    val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: `extra` is the FKeyval this file leaked for the keyval; the
    // library passes its own locals for val_out and flag.
    unsafe {
        let k = &*(extra as *const FKeyval);
        let Some(f) = k.copy else {
            *flag = 0;
            return MPI_SUCCESS;
        };
        let mut fo = handle_c2f(K, old);
        let mut kv = keyval;
        let mut ierr: c_int = MPI_SUCCESS;
        let mut fl: c_int = 0;
        // The Fortran function sees the value (a C-set attribute: its address).
        let v_in = unbox(val_in).unwrap_or(val_in as isize);
        let out = if k.mpi1 {
            let (mut ex, mut vin, mut vout) = (k.extra as c_int, v_in as c_int, 0 as c_int);
            f(&mut fo, &mut kv, &mut ex as *mut c_int as *mut c_void, &mut vin as *mut c_int as *mut c_void, &mut vout as *mut c_int as *mut c_void, &mut fl, &mut ierr);
            vout as isize
        } else {
            let (mut ex, mut vin, mut vout) = (k.extra, v_in, 0isize);
            f(&mut fo, &mut kv, &mut ex as *mut isize as *mut c_void, &mut vin as *mut isize as *mut c_void, &mut vout as *mut isize as *mut c_void, &mut fl, &mut ierr);
            vout
        };
        if fl != 0 && ierr == MPI_SUCCESS {
            *(val_out as *mut *mut c_void) = box_value(out);
        }
        *flag = (fl != 0) as c_int;
        ierr
    }
}

unsafe extern "C" fn delete_trampoline<const K: u8>(obj: usize, keyval: c_int, val: *mut c_void, extra: *mut c_void) -> c_int {
    // SAFETY: `extra` is the FKeyval this file leaked for the keyval.
    unsafe {
        let k = &*(extra as *const FKeyval);
        let Some(f) = k.delete else {
            free_box(val);
            return MPI_SUCCESS;
        };
        let mut fo = handle_c2f(K, obj);
        let mut kv = keyval;
        let mut ierr: c_int = MPI_SUCCESS;
        let value = unbox(val).unwrap_or(val as isize);
        if k.mpi1 {
            let (mut v, mut ex) = (value as c_int, k.extra as c_int);
            f(&mut fo, &mut kv, &mut v as *mut c_int as *mut c_void, &mut ex as *mut c_int as *mut c_void, &mut ierr);
        } else {
            let (mut v, mut ex) = (value, k.extra);
            f(&mut fo, &mut kv, &mut v as *mut isize as *mut c_void, &mut ex as *mut isize as *mut c_void, &mut ierr);
        }
        // A failing delete function leaves the attribute in place (MPI_ERR from the call).
        if ierr == MPI_SUCCESS {
            free_box(val);
        }
        ierr
    }
}

unsafe fn create_keyval<const K: u8>(
    which: &str,
    copy: Option<FCopy>,
    delete: Option<FDelete>,
    keyval: *mut c_int,
    extra: isize,
    mpi1: bool,
    ierror: *mut c_int,
) {
    // Leaked on purpose: attributes may outlive the keyval's MPI_*_FREE_KEYVAL.
    let st = Box::into_raw(Box::new(FKeyval { copy, delete, extra, mpi1 })) as *mut c_void;
    type CopyC = unsafe extern "C" fn(usize, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
    type DelC = unsafe extern "C" fn(usize, c_int, *mut c_void, *mut c_void) -> c_int;
    let (c, d): (CopyC, DelC) = (copy_trampoline::<K>, delete_trampoline::<K>);
    // SAFETY: the C calls with the trampolines (same C signatures as the
    // callback types, handles being usize) and the caller's INTEGER keyval.
    let rc = unsafe {
        match which {
            "comm" => crate::pmpi::PMPI_Comm_create_keyval(Some(c), Some(d), keyval, st),
            "mpi1" => crate::pmpi::PMPI_Keyval_create(Some(c), Some(d), keyval, st),
            "type" => crate::pmpi::PMPI_Type_create_keyval(Some(c), Some(d), keyval, st),
            _ => crate::pmpi::PMPI_Win_create_keyval(Some(c), Some(d), keyval, st),
        }
    };
    // SAFETY: the Fortran caller's INTEGER.
    unsafe { set_ierror(ierror, rc) };
}

macro_rules! keyval_create {
    ($p:ident, $m:ident, $which:literal, $k:expr, $ex:ty, $mpi1:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $p(copy: Option<FCopy>, delete: Option<FDelete>, keyval: *mut c_int, extra: *const $ex, ierror: *mut c_int) {
            let _fortran = crate::conv::errors::FortranCall::enter();
            // SAFETY: the Fortran caller's arguments.
            unsafe { create_keyval::<{ $k }>($which, copy, delete, keyval, *extra as isize, $mpi1, ierror) }
        }
        #[no_mangle]
        pub unsafe extern "C" fn $m(copy: Option<FCopy>, delete: Option<FDelete>, keyval: *mut c_int, extra: *const $ex, ierror: *mut c_int) {
            // SAFETY: same contract.
            unsafe { $p(copy, delete, keyval, extra, ierror) }
        }
    };
}
keyval_create!(pmpi_comm_create_keyval_, mpi_comm_create_keyval_, "comm", K_COMM, isize, false);
keyval_create!(pmpi_type_create_keyval_, mpi_type_create_keyval_, "type", K_TYPE, isize, false);
keyval_create!(pmpi_win_create_keyval_, mpi_win_create_keyval_, "win", K_WIN, isize, false);
keyval_create!(pmpi_keyval_create_, mpi_keyval_create_, "mpi1", K_COMM, c_int, true);

/// The Fortran value of an attribute C returned as `v` (flag set).
unsafe fn attr_value(kind: u8, keyval: c_int, v: *mut c_void) -> isize {
    // SAFETY: predefined attributes are C pointers to the library's values.
    unsafe {
        if kind == K_WIN {
            return match keyval {
                MPI_WIN_BASE => v as isize,
                MPI_WIN_SIZE => *(v as *const isize),
                MPI_WIN_DISP_UNIT | MPI_WIN_CREATE_FLAVOR | MPI_WIN_MODEL => *(v as *const c_int) as isize,
                _ => unbox(v).unwrap_or(v as isize),
            };
        }
        if kind == K_COMM && oxmpi_core::attr::is_predefined(keyval) {
            return *(v as *const c_int) as isize;
        }
        unbox(v).unwrap_or(v as isize)
    }
}

macro_rules! attr_fns {
    ($kind:expr, $stem:ident, $set:ident, $get:ident, $pset:ident, $mset:ident, $pget:ident, $mget:ident, $val:ty) => {
        #[no_mangle]
        pub unsafe extern "C" fn $pset(obj: *const c_int, keyval: *const c_int, val: *const $val, ierror: *mut c_int) {
            let _fortran = crate::conv::errors::FortranCall::enter();
            // SAFETY: the Fortran caller's arguments; the value is stored in a box
            // whose address is the C attribute value.
            unsafe {
                let h = crate::pmpi::$stem(*obj);
                let b = box_value(*val as isize);
                let rc = crate::pmpi::$set(h, *keyval, b);
                if rc != MPI_SUCCESS {
                    free_box(b);
                }
                set_ierror(ierror, rc);
            }
        }
        #[no_mangle]
        pub unsafe extern "C" fn $mset(obj: *const c_int, keyval: *const c_int, val: *const $val, ierror: *mut c_int) {
            // SAFETY: same contract.
            unsafe { $pset(obj, keyval, val, ierror) }
        }
        #[no_mangle]
        pub unsafe extern "C" fn $pget(obj: *const c_int, keyval: *const c_int, val: *mut $val, flag: *mut c_int, ierror: *mut c_int) {
            let _fortran = crate::conv::errors::FortranCall::enter();
            // SAFETY: the Fortran caller's arguments.
            unsafe {
                let h = crate::pmpi::$stem(*obj);
                let mut v: *mut c_void = std::ptr::null_mut();
                let mut fl: c_int = 0;
                let rc = crate::pmpi::$get(h, *keyval, &mut v as *mut *mut c_void as *mut c_void, &mut fl);
                if rc == MPI_SUCCESS {
                    *flag = (fl != 0) as c_int;
                    if fl != 0 {
                        *val = attr_value($kind, *keyval, v) as $val;
                    }
                }
                set_ierror(ierror, rc);
            }
        }
        #[no_mangle]
        pub unsafe extern "C" fn $mget(obj: *const c_int, keyval: *const c_int, val: *mut $val, flag: *mut c_int, ierror: *mut c_int) {
            // SAFETY: same contract.
            unsafe { $pget(obj, keyval, val, flag, ierror) }
        }
    };
}
attr_fns!(K_COMM, PMPI_Comm_f2c, PMPI_Comm_set_attr, PMPI_Comm_get_attr, pmpi_comm_set_attr_, mpi_comm_set_attr_, pmpi_comm_get_attr_, mpi_comm_get_attr_, isize);
attr_fns!(K_TYPE, PMPI_Type_f2c, PMPI_Type_set_attr, PMPI_Type_get_attr, pmpi_type_set_attr_, mpi_type_set_attr_, pmpi_type_get_attr_, mpi_type_get_attr_, isize);
attr_fns!(K_WIN, PMPI_Win_f2c, PMPI_Win_set_attr, PMPI_Win_get_attr, pmpi_win_set_attr_, mpi_win_set_attr_, pmpi_win_get_attr_, mpi_win_get_attr_, isize);
attr_fns!(K_COMM, PMPI_Comm_f2c, PMPI_Attr_put, PMPI_Attr_get, pmpi_attr_put_, mpi_attr_put_, pmpi_attr_get_, mpi_attr_get_, c_int);

// The predefined copy and delete functions, callable from Fortran (and passed
// as procedures to the keyval constructors, which call them like any other).
macro_rules! predefined_copy {
    ($name:ident, $val:ty, $dup:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            _old: *const c_int,
            _keyval: *const c_int,
            _extra: *const $val,
            val_in: *const $val,
            val_out: *mut $val,
            flag: *mut c_int,
            ierror: *mut c_int,
        ) {
            // SAFETY: the Fortran caller's arguments, by reference.
            unsafe {
                if $dup {
                    *val_out = *val_in;
                }
                *flag = $dup as c_int;
                set_ierror(ierror, MPI_SUCCESS);
            }
        }
    };
}
predefined_copy!(mpi_comm_null_copy_fn_, isize, false);
predefined_copy!(mpi_comm_dup_fn_, isize, true);
predefined_copy!(mpi_type_null_copy_fn_, isize, false);
predefined_copy!(mpi_type_dup_fn_, isize, true);
predefined_copy!(mpi_win_null_copy_fn_, isize, false);
predefined_copy!(mpi_win_dup_fn_, isize, true);
predefined_copy!(mpi_null_copy_fn_, c_int, false);
predefined_copy!(mpi_dup_fn_, c_int, true);

macro_rules! predefined_delete {
    ($name:ident, $val:ty) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(_obj: *const c_int, _keyval: *const c_int, _val: *const $val, _extra: *const $val, ierror: *mut c_int) {
            // SAFETY: the Fortran caller's INTEGER ierror.
            unsafe { set_ierror(ierror, MPI_SUCCESS) }
        }
    };
}
predefined_delete!(mpi_comm_null_delete_fn_, isize);
predefined_delete!(mpi_type_null_delete_fn_, isize);
predefined_delete!(mpi_win_null_delete_fn_, isize);
predefined_delete!(mpi_null_delete_fn_, c_int);

/// The generated procedures (gen.rs `rust_fortran`).
pub mod generated {
    // Generated casts are written for every parameter alike; some are no-ops.
    #![allow(clippy::too_many_arguments, clippy::unnecessary_cast, unused_mut, unused_unsafe)]
    use crate::types::*;
    use std::ffi::{c_char, c_int, c_void};
    include!(concat!(env!("OUT_DIR"), "/mpi_fortran.rs"));
}

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
        let dims = std::slice::from_raw_parts((desc as *const u8).add(std::mem::size_of::<CfiDesc>()) as *const CfiDim, d.rank.max(0) as usize);
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
            let rc = crate::conv::errors::ffi("mpi_f08 choice buffer", crate::conv::errors::NO_COMM, || {
                Err(crate::conv::errors::bad(class, "mpi_f08 choice buffer", "buf", why.to_string()))
            });
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
            return fail(ierror, "the datatype's extent does not divide the array element's size");
        }
        let per = (d.elem_len as isize / ext) as c_int;
        if *count % per != 0 {
            return fail(ierror, "the count is not a whole number of array elements of the section");
        }
        // Equally spaced elements (a 1-D section, or dimensions that
        // collapse into one stride): the datatype resized to the stride
        // describes the element sequence exactly, whatever the count means.
        let stride = dims.iter().find(|x| x.extent > 1).map_or(d.elem_len as isize, |x| x.sm);
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
        let mut rc = crate::pmpi::PMPI_Type_create_hindexed_block(k as c_int, per, displs.as_ptr(), dt, &mut t);
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
        let dims = std::slice::from_raw_parts((desc as *const u8).add(std::mem::size_of::<CfiDesc>()) as *const CfiDim, d.rank.max(0) as usize);
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
    // SAFETY: `extra` is the FGreq of this request; the status is the library's
    // (the Fortran status has the C layout).
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
        let g = Box::into_raw(Box::new(FGreq { query, free, cancel, extra: extra as *mut isize })) as *mut c_void;
        let mut h: MPI_Request = MPI_REQUEST_NULL;
        let rc = crate::pmpi::PMPI_Grequest_start(Some(greq_query), Some(greq_free), Some(greq_cancel), g, &mut h);
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

// ----- MPI_INFO_CREATE_ENV, MPI_COMM_SPAWN ---------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn pmpi_info_create_env_(info: *mut c_int, ierror: *mut c_int) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's INTEGERs; a Fortran program has no argv to pass.
    unsafe {
        let mut h: MPI_Info = MPI_INFO_NULL;
        let rc = crate::pmpi::PMPI_Info_create_env(0, std::ptr::null_mut(), &mut h);
        if rc == MPI_SUCCESS {
            *info = crate::pmpi::PMPI_Info_c2f(h);
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_info_create_env_(info: *mut c_int, ierror: *mut c_int) {
    // SAFETY: same contract.
    unsafe { pmpi_info_create_env_(info, ierror) }
}

/// MPI_COMM_SPAWN(COMMAND, ARGV, MAXPROCS, INFO, ROOT, COMM, INTERCOMM,
/// ARRAY_OF_ERRCODES, IERROR): ARGV is a CHARACTER array ended by a blank
/// element (or MPI_ARGV_NULL).
#[no_mangle]
pub unsafe extern "C" fn pmpi_comm_spawn_(
    command: *mut c_void,
    argv: *mut c_void,
    maxprocs: *const c_int,
    info: *const c_int,
    root: *const c_int,
    comm: *const c_int,
    intercomm: *mut c_int,
    errcodes_f: *mut c_void,
    ierror: *mut c_int,
    command_len: usize,
    argv_len: usize,
) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's arguments, strings with their hidden lengths.
    unsafe {
        let cmd = str_in(command, command_len);
        let a = argv as usize;
        let argv_null = a == 0
            || a == &raw const mpi_fortran_argv_null_ as usize
            || a == libc::dlsym(libc::RTLD_DEFAULT, c"mpi_fortran_argv_null_".as_ptr()) as usize;
        let mut args: Vec<Vec<c_char>> = vec![];
        if !argv_null && argv_len > 0 {
            loop {
                let a = str_in((argv as *mut u8).add(args.len() * argv_len) as *mut c_void, argv_len);
                if a.len() <= 1 || args.len() > 4096 {
                    break;
                }
                args.push(a);
            }
        }
        let mut ptrs: Vec<*mut c_char> = args.iter_mut().map(|a| a.as_mut_ptr()).collect();
        ptrs.push(std::ptr::null_mut());
        let c_argv = if argv_null { std::ptr::null_mut() } else { ptrs.as_mut_ptr() };
        let mut h: MPI_Comm = MPI_COMM_NULL;
        let rc = crate::pmpi::PMPI_Comm_spawn(
            cmd.as_ptr(),
            c_argv,
            *maxprocs,
            crate::pmpi::PMPI_Info_f2c(*info),
            *root,
            crate::pmpi::PMPI_Comm_f2c(*comm),
            &mut h,
            errcodes(errcodes_f) as *mut c_int,
        );
        *intercomm = crate::pmpi::PMPI_Comm_c2f(h);
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_comm_spawn_(
    command: *mut c_void,
    argv: *mut c_void,
    maxprocs: *const c_int,
    info: *const c_int,
    root: *const c_int,
    comm: *const c_int,
    intercomm: *mut c_int,
    errcodes_f: *mut c_void,
    ierror: *mut c_int,
    command_len: usize,
    argv_len: usize,
) {
    // SAFETY: same contract.
    unsafe { pmpi_comm_spawn_(command, argv, maxprocs, info, root, comm, intercomm, errcodes_f, ierror, command_len, argv_len) }
}

/// The opaque call behind MPI_F_SYNC_REG: the compiler must assume it reads
/// and writes the buffer, so it keeps the buffer in memory around it.
#[no_mangle]
pub extern "C" fn oxmpi_f_sync_reg_(_buf: *mut c_void) {
    std::hint::black_box(_buf);
}

/// MPI_F_SYNC_REG of `mpif.h` (the modules' procedures call `oxmpi_f_sync_reg_`).
#[no_mangle]
pub extern "C" fn pmpi_f_sync_reg_(buf: *mut c_void) {
    std::hint::black_box(buf);
}

#[no_mangle]
pub extern "C" fn mpi_f_sync_reg_(buf: *mut c_void) {
    pmpi_f_sync_reg_(buf)
}

#[no_mangle]
pub static mut mpi_fortran_argvs_null_: c_char = 0;

/// MPI_COMM_SPAWN_MULTIPLE(COUNT, ARRAY_OF_COMMANDS, ARRAY_OF_ARGV,
/// ARRAY_OF_MAXPROCS, ARRAY_OF_INFO, ROOT, COMM, INTERCOMM, ARRAY_OF_ERRCODES,
/// IERROR): ARRAY_OF_ARGV is CHARACTER(COUNT, *), command i's arguments
/// along row i (element (i, j) at column-major offset (j-1)*COUNT + i-1),
/// each row ended by a blank element; or MPI_ARGVS_NULL.
#[no_mangle]
pub unsafe extern "C" fn pmpi_comm_spawn_multiple_(
    count: *const c_int,
    commands: *mut c_void,
    argvs: *mut c_void,
    maxprocs: *const c_int,
    infos: *const c_int,
    root: *const c_int,
    comm: *const c_int,
    intercomm: *mut c_int,
    errcodes_f: *mut c_void,
    ierror: *mut c_int,
    commands_len: usize,
    argvs_len: usize,
) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's arguments: COUNT commands, maxprocs and
    // infos, an argument table of COUNT rows, strings with their hidden lengths.
    unsafe {
        let n = (*count).clamp(0, 4096) as usize;
        let a = argvs as usize;
        let argvs_null = a == 0
            || a == &raw const mpi_fortran_argvs_null_ as usize
            || a == libc::dlsym(libc::RTLD_DEFAULT, c"mpi_fortran_argvs_null_".as_ptr()) as usize;
        let mut cmds: Vec<Vec<c_char>> =
            (0..n).map(|i| str_in((commands as *mut u8).add(i * commands_len) as *mut c_void, commands_len)).collect();
        let mut args: Vec<Vec<Vec<c_char>>> = vec![vec![]; n];
        if !argvs_null && argvs_len > 0 {
            for (i, row) in args.iter_mut().enumerate() {
                loop {
                    let at = (row.len() * n + i) * argvs_len;
                    let s = str_in((argvs as *mut u8).add(at) as *mut c_void, argvs_len);
                    if s.len() <= 1 || row.len() > 4096 {
                        break;
                    }
                    row.push(s);
                }
            }
        }
        let mut cmd_ptrs: Vec<*mut c_char> = cmds.iter_mut().map(|c| c.as_mut_ptr()).collect();
        let mut arg_ptrs: Vec<Vec<*mut c_char>> = args
            .iter_mut()
            .map(|row| {
                let mut p: Vec<*mut c_char> = row.iter_mut().map(|s| s.as_mut_ptr()).collect();
                p.push(std::ptr::null_mut());
                p
            })
            .collect();
        let mut argv_tab: Vec<*mut *mut c_char> = arg_ptrs.iter_mut().map(|p| p.as_mut_ptr()).collect();
        let c_infos: Vec<MPI_Info> =
            if infos.is_null() { vec![] } else { (0..n).map(|i| crate::pmpi::PMPI_Info_f2c(*infos.add(i))).collect() };
        let mut h: MPI_Comm = MPI_COMM_NULL;
        let rc = crate::pmpi::PMPI_Comm_spawn_multiple(
            *count,
            if commands.is_null() { std::ptr::null_mut() } else { cmd_ptrs.as_mut_ptr() },
            if argvs_null { std::ptr::null_mut() } else { argv_tab.as_mut_ptr() },
            maxprocs,
            if infos.is_null() { std::ptr::null() } else { c_infos.as_ptr() },
            *root,
            crate::pmpi::PMPI_Comm_f2c(*comm),
            &mut h,
            errcodes(errcodes_f) as *mut c_int,
        );
        *intercomm = crate::pmpi::PMPI_Comm_c2f(h);
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_comm_spawn_multiple_(
    count: *const c_int,
    commands: *mut c_void,
    argvs: *mut c_void,
    maxprocs: *const c_int,
    infos: *const c_int,
    root: *const c_int,
    comm: *const c_int,
    intercomm: *mut c_int,
    errcodes_f: *mut c_void,
    ierror: *mut c_int,
    commands_len: usize,
    argvs_len: usize,
) {
    // SAFETY: same contract.
    unsafe {
        pmpi_comm_spawn_multiple_(count, commands, argvs, maxprocs, infos, root, comm, intercomm, errcodes_f, ierror, commands_len, argvs_len)
    }
}

// ----- MPI-1 procedures with INTEGER addresses -------------------------------------------
//
// MPI-1's Fortran binding of MPI_TYPE_HVECTOR, MPI_TYPE_HINDEXED, MPI_TYPE_STRUCT,
// MPI_ADDRESS, MPI_TYPE_EXTENT, MPI_TYPE_LB and MPI_TYPE_UB takes and returns
// addresses as default INTEGERs (MPI-2 added the INTEGER(KIND=MPI_ADDRESS_KIND)
// successors MPI_TYPE_CREATE_HVECTOR & co.): they are widened on the way in, and
// a result that does not fit an INTEGER is an error naming the successor.

/// Widens `n` Fortran INTEGER displacements (none when `n` is negative or the
/// array is absent: the C call then reports the bad count).
///
/// # Safety
/// `p` is NULL or points to `n` INTEGERs.
unsafe fn widen(p: *const c_int, n: c_int) -> Vec<MPI_Aint> {
    if p.is_null() || n <= 0 {
        return vec![];
    }
    // SAFETY: the caller's array of `n` INTEGERs (see above).
    unsafe { std::slice::from_raw_parts(p, n as usize) }.iter().map(|&d| d as MPI_Aint).collect()
}

#[no_mangle]
pub unsafe extern "C" fn pmpi_type_hvector_(
    count: *const c_int,
    blocklength: *const c_int,
    stride: *const c_int,
    oldtype: *const c_int,
    newtype: *mut c_int,
    ierror: *mut c_int,
) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's INTEGERs.
    unsafe {
        let mut h: MPI_Datatype = MPI_DATATYPE_NULL;
        let rc = crate::pmpi::PMPI_Type_hvector(*count, *blocklength, *stride as MPI_Aint, crate::pmpi::PMPI_Type_f2c(*oldtype), &mut h);
        if rc == MPI_SUCCESS {
            *newtype = crate::pmpi::PMPI_Type_c2f(h);
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_type_hvector_(
    count: *const c_int,
    blocklength: *const c_int,
    stride: *const c_int,
    oldtype: *const c_int,
    newtype: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: same contract.
    unsafe { pmpi_type_hvector_(count, blocklength, stride, oldtype, newtype, ierror) }
}

#[no_mangle]
pub unsafe extern "C" fn pmpi_type_hindexed_(
    count: *const c_int,
    blocklens: *mut c_int,
    displs: *const c_int,
    oldtype: *const c_int,
    newtype: *mut c_int,
    ierror: *mut c_int,
) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's INTEGERs and arrays of COUNT INTEGERs.
    unsafe {
        let mut d = widen(displs, *count);
        let dp = if displs.is_null() { std::ptr::null_mut() } else { d.as_mut_ptr() };
        let mut h: MPI_Datatype = MPI_DATATYPE_NULL;
        let rc = crate::pmpi::PMPI_Type_hindexed(*count, blocklens, dp, crate::pmpi::PMPI_Type_f2c(*oldtype), &mut h);
        if rc == MPI_SUCCESS {
            *newtype = crate::pmpi::PMPI_Type_c2f(h);
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_type_hindexed_(
    count: *const c_int,
    blocklens: *mut c_int,
    displs: *const c_int,
    oldtype: *const c_int,
    newtype: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: same contract.
    unsafe { pmpi_type_hindexed_(count, blocklens, displs, oldtype, newtype, ierror) }
}

#[no_mangle]
pub unsafe extern "C" fn pmpi_type_struct_(
    count: *const c_int,
    blocklens: *mut c_int,
    displs: *const c_int,
    types: *const c_int,
    newtype: *mut c_int,
    ierror: *mut c_int,
) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's INTEGERs and arrays of COUNT INTEGERs.
    unsafe {
        let mut d = widen(displs, *count);
        let dp = if displs.is_null() { std::ptr::null_mut() } else { d.as_mut_ptr() };
        let mut t: Vec<MPI_Datatype> = if types.is_null() || *count <= 0 {
            vec![]
        } else {
            std::slice::from_raw_parts(types, *count as usize).iter().map(|&f| crate::pmpi::PMPI_Type_f2c(f)).collect()
        };
        let tp = if types.is_null() { std::ptr::null_mut() } else { t.as_mut_ptr() };
        let mut h: MPI_Datatype = MPI_DATATYPE_NULL;
        let rc = crate::pmpi::PMPI_Type_struct(*count, blocklens, dp, tp, &mut h);
        if rc == MPI_SUCCESS {
            *newtype = crate::pmpi::PMPI_Type_c2f(h);
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_type_struct_(
    count: *const c_int,
    blocklens: *mut c_int,
    displs: *const c_int,
    types: *const c_int,
    newtype: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: same contract.
    unsafe { pmpi_type_struct_(count, blocklens, displs, types, newtype, ierror) }
}

/// Narrows an address-sized result to the caller's INTEGER, or fails naming
/// `call`'s ADDRESS_KIND successor.
///
/// # Safety
/// `out` is NULL or the caller's INTEGER.
unsafe fn narrow(call: &'static str, arg: &'static str, successor: &str, v: MPI_Aint, out: *mut c_int) -> c_int {
    match c_int::try_from(v) {
        Ok(n) => {
            if !out.is_null() {
                // SAFETY: the caller's INTEGER (checked non-NULL).
                unsafe { *out = n };
            }
            MPI_SUCCESS
        }
        Err(_) => crate::conv::errors::ffi(call, crate::conv::errors::NO_COMM, || {
            Err(crate::conv::errors::bad(
                oxmpi_core::error::ErrorClass::Arg,
                call,
                arg,
                format!("the value {v} does not fit a default INTEGER: use {successor}, whose argument is INTEGER(KIND=MPI_ADDRESS_KIND)"),
            ))
        }),
    }
}

macro_rules! fortran_int_query {
    ($p:ident, $m:ident, $c:ident, $call:literal, $arg:literal, $succ:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $p(datatype: *const c_int, out: *mut c_int, ierror: *mut c_int) {
            let _fortran = crate::conv::errors::FortranCall::enter();
            // SAFETY: the Fortran caller's INTEGERs.
            unsafe {
                let mut v: MPI_Aint = 0;
                let mut rc = crate::pmpi::$c(crate::pmpi::PMPI_Type_f2c(*datatype), &mut v);
                if rc == MPI_SUCCESS {
                    rc = narrow($call, $arg, $succ, v, out);
                }
                set_ierror(ierror, rc);
            }
        }
        #[no_mangle]
        pub unsafe extern "C" fn $m(datatype: *const c_int, out: *mut c_int, ierror: *mut c_int) {
            // SAFETY: same contract.
            unsafe { $p(datatype, out, ierror) }
        }
    };
}
fortran_int_query!(pmpi_type_extent_, mpi_type_extent_, PMPI_Type_extent, "MPI_Type_extent", "extent", "MPI_TYPE_GET_EXTENT");
fortran_int_query!(pmpi_type_lb_, mpi_type_lb_, PMPI_Type_lb, "MPI_Type_lb", "displacement", "MPI_TYPE_GET_EXTENT");
fortran_int_query!(pmpi_type_ub_, mpi_type_ub_, PMPI_Type_ub, "MPI_Type_ub", "displacement", "MPI_TYPE_GET_EXTENT");

#[no_mangle]
pub unsafe extern "C" fn pmpi_address_(location: *mut c_void, address: *mut c_int, ierror: *mut c_int) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's arguments; only the location's address is used.
    unsafe {
        let mut v: MPI_Aint = 0;
        let mut rc = crate::pmpi::PMPI_Address(buf(location), &mut v);
        if rc == MPI_SUCCESS {
            rc = narrow("MPI_Address", "address", "MPI_GET_ADDRESS", v, address);
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_address_(location: *mut c_void, address: *mut c_int, ierror: *mut c_int) {
    // SAFETY: same contract.
    unsafe { pmpi_address_(location, address, ierror) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_strings_trim_and_pad() {
        let mut f = *b"  a name   ";
        // SAFETY: a local buffer of the given length.
        let c = unsafe { str_in(f.as_mut_ptr() as *mut c_void, f.len()) };
        let s: Vec<u8> = c.iter().map(|&x| x as u8).collect();
        assert_eq!(s, b"a name\0");
        let out: Vec<c_char> = b"xyz\0junk".iter().map(|&b| b as c_char).collect();
        // SAFETY: as above.
        unsafe { str_out(f.as_mut_ptr() as *mut c_void, f.len(), &out) };
        assert_eq!(&f, b"xyz        ");
        // Longer than the Fortran variable: cut.
        let mut g = *b"ab";
        // SAFETY: as above.
        unsafe { str_out(g.as_mut_ptr() as *mut c_void, g.len(), &out) };
        assert_eq!(&g, b"xy");
    }

    #[test]
    fn sentinels_map_to_the_c_values_and_nothing_else() {
        let bottom = &raw mut mpi_fortran_bottom_ as *mut c_void;
        let in_place = &raw mut mpi_fortran_in_place_ as *mut c_void;
        let st = &raw mut mpi_fortran_status_ignore_ as *mut c_void;
        assert_eq!(buf(bottom) as usize, MPI_BOTTOM);
        assert_eq!(buf(in_place) as usize, MPI_IN_PLACE);
        assert!(status(st).is_null());
        let mut x = 0i32;
        let p = &mut x as *mut i32 as *mut c_void;
        assert_eq!(buf(p), p);
        assert_eq!(status(p), p);
        assert_eq!(weights(p), p);
    }
}
