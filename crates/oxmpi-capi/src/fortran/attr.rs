//! Fortran attribute caching: keyvals with Fortran copy/delete callbacks, values as
//! address-sized integers, and the predefined `MPI_*_NULL_COPY_FN` & co.

use super::*;

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
    FBOXES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(Default::default)
        .insert(p as usize);
    p as *mut c_void
}

/// The value in `p` when it is a live box.
fn unbox(p: *mut c_void) -> Option<isize> {
    let live = FBOXES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .is_some_and(|s| s.contains(&(p as usize)));
    // SAFETY: a registered box is a live Box<isize> made by `box_value`.
    live.then(|| unsafe { *(p as *const isize) })
}

/// Frees `p` when it is a live box (an attribute being deleted).
fn free_box(p: *mut c_void) {
    let was = FBOXES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_mut()
        .is_some_and(|s| s.remove(&(p as usize)));
    if was {
        // SAFETY: registered by `box_value` and unregistered just now, so freed once.
        drop(unsafe { Box::from_raw(p as *mut isize) });
    }
}

/// Fortran copy function: (OLD, KEYVAL, EXTRA_STATE, VAL_IN, VAL_OUT, FLAG, IERROR).
type FCopy = unsafe extern "C" fn(
    *mut c_int,
    *mut c_int,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_int,
    *mut c_int,
);
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
    // SAFETY: `extra` is the FKeyval this file leaked for the keyval; the library passes its own locals for val_out and flag.
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
            f(
                &mut fo,
                &mut kv,
                &mut ex as *mut c_int as *mut c_void,
                &mut vin as *mut c_int as *mut c_void,
                &mut vout as *mut c_int as *mut c_void,
                &mut fl,
                &mut ierr,
            );
            vout as isize
        } else {
            let (mut ex, mut vin, mut vout) = (k.extra, v_in, 0isize);
            f(
                &mut fo,
                &mut kv,
                &mut ex as *mut isize as *mut c_void,
                &mut vin as *mut isize as *mut c_void,
                &mut vout as *mut isize as *mut c_void,
                &mut fl,
                &mut ierr,
            );
            vout
        };
        if fl != 0 && ierr == MPI_SUCCESS {
            *(val_out as *mut *mut c_void) = box_value(out);
        }
        *flag = (fl != 0) as c_int;
        ierr
    }
}

unsafe extern "C" fn delete_trampoline<const K: u8>(
    obj: usize,
    keyval: c_int,
    val: *mut c_void,
    extra: *mut c_void,
) -> c_int {
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
            f(
                &mut fo,
                &mut kv,
                &mut v as *mut c_int as *mut c_void,
                &mut ex as *mut c_int as *mut c_void,
                &mut ierr,
            );
        } else {
            let (mut v, mut ex) = (value, k.extra);
            f(
                &mut fo,
                &mut kv,
                &mut v as *mut isize as *mut c_void,
                &mut ex as *mut isize as *mut c_void,
                &mut ierr,
            );
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
    let st = Box::into_raw(Box::new(FKeyval {
        copy,
        delete,
        extra,
        mpi1,
    })) as *mut c_void;
    type CopyC = unsafe extern "C" fn(
        usize,
        c_int,
        *mut c_void,
        *mut c_void,
        *mut c_void,
        *mut c_int,
    ) -> c_int;
    type DelC = unsafe extern "C" fn(usize, c_int, *mut c_void, *mut c_void) -> c_int;
    let (c, d): (CopyC, DelC) = (copy_trampoline::<K>, delete_trampoline::<K>);
    // SAFETY: the C calls with the trampolines (same C signatures as the callback types, handles being usize) and the caller's INTEGER keyval.
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
        pub unsafe extern "C" fn $p(
            copy: Option<FCopy>,
            delete: Option<FDelete>,
            keyval: *mut c_int,
            extra: *const $ex,
            ierror: *mut c_int,
        ) {
            let _fortran = crate::conv::errors::FortranCall::enter();
            // SAFETY: the Fortran caller's arguments.
            unsafe {
                create_keyval::<{ $k }>(
                    $which,
                    copy,
                    delete,
                    keyval,
                    *extra as isize,
                    $mpi1,
                    ierror,
                )
            }
        }
        #[no_mangle]
        pub unsafe extern "C" fn $m(
            copy: Option<FCopy>,
            delete: Option<FDelete>,
            keyval: *mut c_int,
            extra: *const $ex,
            ierror: *mut c_int,
        ) {
            // SAFETY: same contract.
            unsafe { $p(copy, delete, keyval, extra, ierror) }
        }
    };
}
keyval_create!(
    pmpi_comm_create_keyval_,
    mpi_comm_create_keyval_,
    "comm",
    K_COMM,
    isize,
    false
);
keyval_create!(
    pmpi_type_create_keyval_,
    mpi_type_create_keyval_,
    "type",
    K_TYPE,
    isize,
    false
);
keyval_create!(
    pmpi_win_create_keyval_,
    mpi_win_create_keyval_,
    "win",
    K_WIN,
    isize,
    false
);
keyval_create!(
    pmpi_keyval_create_,
    mpi_keyval_create_,
    "mpi1",
    K_COMM,
    c_int,
    true
);

/// The Fortran value of an attribute C returned as `v` (flag set).
unsafe fn attr_value(kind: u8, keyval: c_int, v: *mut c_void) -> isize {
    // SAFETY: predefined attributes are C pointers to the library's values.
    unsafe {
        if kind == K_WIN {
            return match keyval {
                MPI_WIN_BASE => v as isize,
                MPI_WIN_SIZE => *(v as *const isize),
                MPI_WIN_DISP_UNIT | MPI_WIN_CREATE_FLAVOR | MPI_WIN_MODEL => {
                    *(v as *const c_int) as isize
                }
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
        pub unsafe extern "C" fn $pset(
            obj: *const c_int,
            keyval: *const c_int,
            val: *const $val,
            ierror: *mut c_int,
        ) {
            let _fortran = crate::conv::errors::FortranCall::enter();
            // SAFETY: the Fortran caller's arguments; the value is stored in a box whose address is the C attribute value.
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
        pub unsafe extern "C" fn $mset(
            obj: *const c_int,
            keyval: *const c_int,
            val: *const $val,
            ierror: *mut c_int,
        ) {
            // SAFETY: same contract.
            unsafe { $pset(obj, keyval, val, ierror) }
        }
        #[no_mangle]
        pub unsafe extern "C" fn $pget(
            obj: *const c_int,
            keyval: *const c_int,
            val: *mut $val,
            flag: *mut c_int,
            ierror: *mut c_int,
        ) {
            let _fortran = crate::conv::errors::FortranCall::enter();
            // SAFETY: the Fortran caller's arguments.
            unsafe {
                let h = crate::pmpi::$stem(*obj);
                let mut v: *mut c_void = std::ptr::null_mut();
                let mut fl: c_int = 0;
                let rc = crate::pmpi::$get(
                    h,
                    *keyval,
                    &mut v as *mut *mut c_void as *mut c_void,
                    &mut fl,
                );
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
        pub unsafe extern "C" fn $mget(
            obj: *const c_int,
            keyval: *const c_int,
            val: *mut $val,
            flag: *mut c_int,
            ierror: *mut c_int,
        ) {
            // SAFETY: same contract.
            unsafe { $pget(obj, keyval, val, flag, ierror) }
        }
    };
}
attr_fns!(
    K_COMM,
    PMPI_Comm_f2c,
    PMPI_Comm_set_attr,
    PMPI_Comm_get_attr,
    pmpi_comm_set_attr_,
    mpi_comm_set_attr_,
    pmpi_comm_get_attr_,
    mpi_comm_get_attr_,
    isize
);
attr_fns!(
    K_TYPE,
    PMPI_Type_f2c,
    PMPI_Type_set_attr,
    PMPI_Type_get_attr,
    pmpi_type_set_attr_,
    mpi_type_set_attr_,
    pmpi_type_get_attr_,
    mpi_type_get_attr_,
    isize
);
attr_fns!(
    K_WIN,
    PMPI_Win_f2c,
    PMPI_Win_set_attr,
    PMPI_Win_get_attr,
    pmpi_win_set_attr_,
    mpi_win_set_attr_,
    pmpi_win_get_attr_,
    mpi_win_get_attr_,
    isize
);
attr_fns!(
    K_COMM,
    PMPI_Comm_f2c,
    PMPI_Attr_put,
    PMPI_Attr_get,
    pmpi_attr_put_,
    mpi_attr_put_,
    pmpi_attr_get_,
    mpi_attr_get_,
    c_int
);

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
        pub unsafe extern "C" fn $name(
            _obj: *const c_int,
            _keyval: *const c_int,
            _val: *const $val,
            _extra: *const $val,
            ierror: *mut c_int,
        ) {
            // SAFETY: the Fortran caller's INTEGER ierror.
            unsafe { set_ierror(ierror, MPI_SUCCESS) }
        }
    };
}
predefined_delete!(mpi_comm_null_delete_fn_, isize);
predefined_delete!(mpi_type_null_delete_fn_, isize);
predefined_delete!(mpi_win_null_delete_fn_, isize);
predefined_delete!(mpi_null_delete_fn_, c_int);
