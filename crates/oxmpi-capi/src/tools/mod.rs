//! The MPI tool information interface (`MPI_T_*`) in C, over the registry of
//! `oxmpi_core::tools`.
//!
//! MPI_T calls return their error codes (the `MPI_T_ERR_*` classes) and never
//! call error handlers; they work before `MPI_Init` and after `MPI_Finalize`.
//! Every call but `MPI_T_init_thread` fails with `MPI_T_ERR_NOT_INITIALIZED`
//! outside an `MPI_T_init_thread`/`MPI_T_finalize` pair.
//!
//! Strings follow the standard's convention (and MPICH's behaviour): with a
//! NULL buffer or a length of 0 the length the string needs (including the
//! terminating null) is returned; otherwise the string is copied, truncated to
//! the given length minus one, null-terminated, and the length returned is
//! that of the copy including its null.
//!
//! Handles: enumerations are `ENUM_BASE + index`; control variable handles,
//! sessions and performance variable handles are numbers from one counter
//! (never reused, so a stale handle is detected), at or above `HANDLE_BASE`.
//!
//! Files: this one (handles, conversions, initialization, enumerations,
//! categories, the event source and events), `cvar.rs` (control variables),
//! `pvar.rs` (performance variables, sessions and their handles).

mod cvar;
mod pvar;

pub use cvar::*;
pub use pvar::*;

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use oxmpi_core::comm::Comm;
use oxmpi_core::tools::{
    self, Bind, CvarValue, PvarClass, PvarHandle, PvarValue, Scope, ToolError, VarType, Verbosity,
};

use crate::abi::*;
use crate::types::*;

const ENUM_BASE: usize = 0x7e00_0000_0000;
const HANDLE_BASE: usize = 0x7f00_0000_0000;

struct Session {
    handles: HashMap<usize, PvarHandle>,
}

#[derive(Default)]
struct Handles {
    next: usize,
    cvars: HashMap<usize, usize>,
    sessions: HashMap<usize, Session>,
}

impl Handles {
    fn fresh(&mut self) -> usize {
        self.next += 1;
        HANDLE_BASE + self.next
    }
}

static HANDLES: Mutex<Option<Handles>> = Mutex::new(None);

fn with_handles<T>(f: impl FnOnce(&mut Handles) -> T) -> T {
    let mut g = HANDLES.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Handles::default))
}

fn code(e: &ToolError) -> c_int {
    match e {
        ToolError::NotInitialized => MPI_T_ERR_NOT_INITIALIZED,
        ToolError::InvalidIndex => MPI_T_ERR_INVALID_INDEX,
        ToolError::InvalidName => MPI_T_ERR_INVALID_NAME,
        ToolError::InvalidHandle => MPI_T_ERR_INVALID_HANDLE,
        ToolError::InvalidSession => MPI_T_ERR_INVALID_SESSION,
        ToolError::CvarSetNotNow(_) => MPI_T_ERR_CVAR_SET_NOT_NOW,
        ToolError::CvarSetNever => MPI_T_ERR_CVAR_SET_NEVER,
        ToolError::PvarNoWrite => MPI_T_ERR_PVAR_NO_WRITE,
        ToolError::PvarNoStartstop => MPI_T_ERR_PVAR_NO_STARTSTOP,
        ToolError::PvarNoAtomic => MPI_T_ERR_PVAR_NO_ATOMIC,
        ToolError::Invalid(_) => MPI_T_ERR_INVALID,
    }
}

type TR<T> = Result<T, ToolError>;

/// Runs an MPI_T body: the interface must be initialized; errors become
/// their MPI_T class (no error handler runs), a panic `MPI_T_ERR_INVALID`.
fn tcall(body: impl FnOnce() -> TR<()>) -> c_int {
    match catch_unwind(AssertUnwindSafe(|| {
        tools::require_init()?;
        body()
    })) {
        Ok(Ok(())) => MPI_SUCCESS,
        Ok(Err(e)) => code(&e),
        Err(_) => MPI_T_ERR_INVALID,
    }
}

fn null_arg(arg: &str) -> ToolError {
    ToolError::Invalid(format!("{arg} is NULL"))
}

/// Writes `v` to `p` when `p` is not NULL (MPI_T's optional outputs).
///
/// # Safety
/// `p` is NULL or valid for a write of `T`.
unsafe fn put<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-null, and valid for a write of `T` by the caller's contract.
        unsafe { p.write(v) };
    }
}

/// Writes `v` to a required output `p`.
///
/// # Safety
/// `p` is NULL (an error) or valid for a write of `T`.
unsafe fn put_req<T>(p: *mut T, arg: &str, v: T) -> TR<()> {
    if p.is_null() {
        return Err(null_arg(arg));
    }
    // SAFETY: non-null, and valid for a write by the caller's contract.
    unsafe { p.write(v) };
    Ok(())
}

/// The standard's string convention (see the module docs).
///
/// # Safety
/// `len` is NULL or a valid `int`; `buf` is NULL or holds `*len` bytes.
unsafe fn put_str(s: &str, buf: *mut c_char, len: *mut c_int) {
    if len.is_null() {
        return;
    }
    // SAFETY: `len` is non-null and valid (caller's contract).
    let cap = unsafe { *len };
    if buf.is_null() || cap <= 0 {
        // SAFETY: as above.
        unsafe { *len = s.len() as c_int + 1 };
        return;
    }
    let n = s.len().min(cap as usize - 1);
    // SAFETY: `buf` holds `cap > n` bytes (caller's contract); source and destination are distinct (ours is a Rust string).
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), buf as *mut u8, n);
        *buf.add(n) = 0;
        *len = n as c_int + 1;
    }
}

/// A NUL-terminated name argument.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn name_arg<'a>(p: *const c_char) -> TR<&'a str> {
    if p.is_null() {
        return Err(null_arg("name"));
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| ToolError::InvalidName)
}

fn index(i: c_int) -> TR<usize> {
    usize::try_from(i).map_err(|_| ToolError::InvalidIndex)
}

fn dtype(t: VarType) -> MPI_Datatype {
    match t {
        VarType::Int => MPI_INT,
        VarType::UnsignedLongLong => MPI_UNSIGNED_LONG_LONG,
        VarType::Double => MPI_DOUBLE,
        VarType::Char => MPI_CHAR,
    }
}

fn verbosity(v: Verbosity) -> c_int {
    match v {
        Verbosity::UserBasic => MPI_T_VERBOSITY_USER_BASIC,
        Verbosity::UserDetail => MPI_T_VERBOSITY_USER_DETAIL,
        Verbosity::UserAll => MPI_T_VERBOSITY_USER_ALL,
        Verbosity::TunerBasic => MPI_T_VERBOSITY_TUNER_BASIC,
        Verbosity::TunerDetail => MPI_T_VERBOSITY_TUNER_DETAIL,
        Verbosity::TunerAll => MPI_T_VERBOSITY_TUNER_ALL,
        Verbosity::MpidevBasic => MPI_T_VERBOSITY_MPIDEV_BASIC,
        Verbosity::MpidevDetail => MPI_T_VERBOSITY_MPIDEV_DETAIL,
        Verbosity::MpidevAll => MPI_T_VERBOSITY_MPIDEV_ALL,
    }
}

fn bind(b: Bind) -> c_int {
    match b {
        Bind::NoObject => MPI_T_BIND_NO_OBJECT,
        Bind::Comm => MPI_T_BIND_MPI_COMM,
    }
}

fn scope(s: Scope) -> c_int {
    match s {
        Scope::Constant => MPI_T_SCOPE_CONSTANT,
        Scope::Readonly => MPI_T_SCOPE_READONLY,
        Scope::Local => MPI_T_SCOPE_LOCAL,
        Scope::Group => MPI_T_SCOPE_GROUP,
        Scope::GroupEq => MPI_T_SCOPE_GROUP_EQ,
        Scope::All => MPI_T_SCOPE_ALL,
        Scope::AllEq => MPI_T_SCOPE_ALL_EQ,
    }
}

const CLASSES: [(PvarClass, c_int); 10] = [
    (PvarClass::State, MPI_T_PVAR_CLASS_STATE),
    (PvarClass::Level, MPI_T_PVAR_CLASS_LEVEL),
    (PvarClass::Size, MPI_T_PVAR_CLASS_SIZE),
    (PvarClass::Percentage, MPI_T_PVAR_CLASS_PERCENTAGE),
    (PvarClass::HighWatermark, MPI_T_PVAR_CLASS_HIGHWATERMARK),
    (PvarClass::LowWatermark, MPI_T_PVAR_CLASS_LOWWATERMARK),
    (PvarClass::Counter, MPI_T_PVAR_CLASS_COUNTER),
    (PvarClass::Aggregate, MPI_T_PVAR_CLASS_AGGREGATE),
    (PvarClass::Timer, MPI_T_PVAR_CLASS_TIMER),
    (PvarClass::Generic, MPI_T_PVAR_CLASS_GENERIC),
];

fn class_code(c: PvarClass) -> c_int {
    CLASSES
        .iter()
        .find(|(k, _)| *k == c)
        .map_or(MPI_T_PVAR_CLASS_GENERIC, |(_, v)| *v)
}

fn enum_handle(e: Option<usize>) -> MPI_T_enum {
    e.map_or(MPI_T_ENUM_NULL, |i| ENUM_BASE + i)
}

// ----- initialization ---------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_init_thread(required: c_int, provided: *mut c_int) -> c_int {
    match catch_unwind(AssertUnwindSafe(|| {
        if ![
            MPI_THREAD_SINGLE,
            MPI_THREAD_FUNNELED,
            MPI_THREAD_SERIALIZED,
            MPI_THREAD_MULTIPLE,
        ]
        .contains(&required)
        {
            return Err(ToolError::Invalid(format!(
                "MPI_T_init_thread: required = {required} is no thread level"
            )));
        }
        // SAFETY: `provided` is NULL (an error) or a writable int (MPI contract).
        unsafe { put_req(provided, "provided", required)? };
        tools::init();
        Ok(())
    })) {
        Ok(Ok(())) => MPI_SUCCESS,
        Ok(Err(e)) => code(&e),
        Err(_) => MPI_T_ERR_CANNOT_INIT,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_finalize() -> c_int {
    match catch_unwind(tools::finalize) {
        Ok(Ok(())) => {
            if !tools::initialized() {
                // The last user is gone: its handles and sessions with it.
                *HANDLES.lock().unwrap_or_else(|p| p.into_inner()) = None;
            }
            MPI_SUCCESS
        }
        Ok(Err(e)) => code(&e),
        Err(_) => MPI_T_ERR_INVALID,
    }
}

// ----- enumerations -----------------------------------------------------------------

fn enum_of(h: MPI_T_enum) -> TR<&'static tools::EnumInfo> {
    let i = h.checked_sub(ENUM_BASE).ok_or(ToolError::InvalidHandle)?;
    tools::registry()
        .enumeration(i)
        .map_err(|_| ToolError::InvalidHandle)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_enum_get_info(
    enumtype: MPI_T_enum,
    num: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> c_int {
    tcall(|| {
        let e = enum_of(enumtype)?;
        // SAFETY: MPI_T output arguments: NULL or writable (MPI contract).
        unsafe {
            put_req(num, "num", e.items.len() as c_int)?;
            put_str(&e.name, name, name_len);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_enum_get_item(
    enumtype: MPI_T_enum,
    idx: c_int,
    value: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> c_int {
    tcall(|| {
        let e = enum_of(enumtype)?;
        let (v, n) = e.items.get(index(idx)?).ok_or(ToolError::InvalidIndex)?;
        // SAFETY: MPI_T output arguments: NULL or writable (MPI contract).
        unsafe {
            put_req(value, "value", *v)?;
            put_str(n, name, name_len);
        }
        Ok(())
    })
}

// ----- categories -------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_num(num_cat: *mut c_int) -> c_int {
    // SAFETY: `num_cat` is NULL (an error) or writable (MPI contract).
    tcall(|| unsafe {
        put_req(
            num_cat,
            "num_cat",
            tools::registry().categories.len() as c_int,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_info(
    cat_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    num_cvars: *mut c_int,
    num_pvars: *mut c_int,
    num_categories: *mut c_int,
) -> c_int {
    tcall(|| {
        let c = tools::registry().category(index(cat_index)?)?;
        // SAFETY: MPI_T output arguments: NULL or writable, strings of the given lengths (MPI contract).
        unsafe {
            put_str(&c.name, name, name_len);
            put_str(&c.desc, desc, desc_len);
            put(num_cvars, c.cvars.len() as c_int);
            put(num_pvars, c.pvars.len() as c_int);
            put(num_categories, c.categories.len() as c_int);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_index(
    name: *const c_char,
    cat_index: *mut c_int,
) -> c_int {
    tcall(|| {
        // SAFETY: `name` is a C string (MPI contract).
        let i = tools::registry().category_index(unsafe { name_arg(name)? })?;
        // SAFETY: `cat_index` is NULL (an error) or writable.
        unsafe { put_req(cat_index, "cat_index", i as c_int) }
    })
}

/// Writes the first `len` of `items` into `indices`.
///
/// # Safety
/// `indices` holds `len` ints (or is NULL with `len == 0`).
unsafe fn put_indices(items: &[usize], len: c_int, indices: *mut c_int) -> TR<()> {
    if len < 0 {
        return Err(ToolError::Invalid(format!("len = {len} is negative")));
    }
    let n = items.len().min(len as usize);
    if n > 0 && indices.is_null() {
        return Err(null_arg("indices"));
    }
    for (k, &v) in items[..n].iter().enumerate() {
        // SAFETY: `indices` holds `len >= n` ints (caller's contract).
        unsafe { indices.add(k).write(v as c_int) };
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_cvars(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    // SAFETY: `indices` holds `len` ints (MPI contract).
    tcall(|| unsafe {
        put_indices(
            &tools::registry().category(index(cat_index)?)?.cvars,
            len,
            indices,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_pvars(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    // SAFETY: `indices` holds `len` ints (MPI contract).
    tcall(|| unsafe {
        put_indices(
            &tools::registry().category(index(cat_index)?)?.pvars,
            len,
            indices,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_categories(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    // SAFETY: `indices` holds `len` ints (MPI contract).
    tcall(|| unsafe {
        put_indices(
            &tools::registry().category(index(cat_index)?)?.categories,
            len,
            indices,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_num_events(
    cat_index: c_int,
    num_events: *mut c_int,
) -> c_int {
    tcall(|| {
        tools::registry().category(index(cat_index)?)?;
        // SAFETY: `num_events` is NULL (an error) or writable (MPI contract).
        unsafe { put_req(num_events, "num_events", 0) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_events(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    // SAFETY: `indices` holds `len` ints (MPI contract); no events are written.
    tcall(|| unsafe {
        put_indices(&[], len.max(0), indices)
            .and(tools::registry().category(index(cat_index)?).map(drop))
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_changed(update_number: *mut c_int) -> c_int {
    // The registry never changes once built.
    // SAFETY: `update_number` is NULL (an error) or writable (MPI contract).
    tcall(|| unsafe { put_req(update_number, "update_number", 0) })
}

// ----- the event source -------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_source_get_num(num_sources: *mut c_int) -> c_int {
    // SAFETY: `num_sources` is NULL (an error) or writable (MPI contract).
    tcall(|| unsafe { put_req(num_sources, "num_sources", 1) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_source_get_info(
    source_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    ordering: *mut MPI_T_source_order,
    ticks_per_second: *mut MPI_Count,
    max_ticks: *mut MPI_Count,
    info: *mut MPI_Info,
) -> c_int {
    tcall(|| {
        if source_index != 0 {
            return Err(ToolError::InvalidIndex);
        }
        // SAFETY: MPI_T output arguments: NULL or writable, strings of the given lengths (MPI contract).
        unsafe {
            put_str(tools::SOURCE_NAME, name, name_len);
            put_str(tools::SOURCE_DESC, desc, desc_len);
            put(ordering, MPI_T_SOURCE_ORDERED);
            put(ticks_per_second, 1_000_000_000);
            put(max_ticks, i64::MAX);
            // The source has no hints to give.
            put(info, MPI_INFO_NULL);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_source_get_timestamp(
    source_index: c_int,
    timestamp: *mut MPI_Count,
) -> c_int {
    tcall(|| {
        if source_index != 0 {
            return Err(ToolError::InvalidIndex);
        }
        // SAFETY: `timestamp` is NULL (an error) or writable (MPI contract).
        unsafe { put_req(timestamp, "timestamp", tools::source_timestamp()) }
    })
}

// ----- events: oxmpi defines none ---------------------------------------------------
// With no event types, every index is invalid and no registration or instance
// handle can exist; the calls still check initialization and report the
// standard's error classes.

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_get_num(num_events: *mut c_int) -> c_int {
    // SAFETY: `num_events` is NULL (an error) or writable (MPI contract).
    tcall(|| unsafe { put_req(num_events, "num_events", 0) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_get_info(
    _event_index: c_int,
    _name: *mut c_char,
    _name_len: *mut c_int,
    _verbosity: *mut c_int,
    _array_of_datatypes: *mut MPI_Datatype,
    _array_of_displacements: *mut MPI_Aint,
    _num_elements: *mut c_int,
    _enumtype: *mut MPI_T_enum,
    _info: *mut MPI_Info,
    _desc: *mut c_char,
    _desc_len: *mut c_int,
    _bind: *mut c_int,
) -> c_int {
    tcall(|| Err(ToolError::InvalidIndex))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_get_index(
    name: *const c_char,
    _event_index: *mut c_int,
) -> c_int {
    tcall(|| {
        // SAFETY: `name` is a C string (MPI contract).
        unsafe { name_arg(name)? };
        Err(ToolError::InvalidName)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_handle_alloc(
    _event_index: c_int,
    _obj_handle: *mut c_void,
    _info: MPI_Info,
    _event_registration: *mut MPI_T_event_registration,
) -> c_int {
    tcall(|| Err(ToolError::InvalidIndex))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_handle_set_info(
    _event_registration: MPI_T_event_registration,
    _info: MPI_Info,
) -> c_int {
    tcall(|| Err(ToolError::InvalidHandle))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_handle_get_info(
    _event_registration: MPI_T_event_registration,
    _info_used: *mut MPI_Info,
) -> c_int {
    tcall(|| Err(ToolError::InvalidHandle))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_register_callback(
    _event_registration: MPI_T_event_registration,
    _cb_safety: MPI_T_cb_safety,
    _info: MPI_Info,
    _user_data: *mut c_void,
    _event_cb_function: Option<MPI_T_event_cb_function>,
) -> c_int {
    tcall(|| Err(ToolError::InvalidHandle))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_callback_set_info(
    _event_registration: MPI_T_event_registration,
    _cb_safety: MPI_T_cb_safety,
    _info: MPI_Info,
) -> c_int {
    tcall(|| Err(ToolError::InvalidHandle))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_callback_get_info(
    _event_registration: MPI_T_event_registration,
    _cb_safety: MPI_T_cb_safety,
    _info_used: *mut MPI_Info,
) -> c_int {
    tcall(|| Err(ToolError::InvalidHandle))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_handle_free(
    _event_registration: MPI_T_event_registration,
    _user_data: *mut c_void,
    _free_cb_function: Option<MPI_T_event_free_cb_function>,
) -> c_int {
    tcall(|| Err(ToolError::InvalidHandle))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_set_dropped_handler(
    _event_registration: MPI_T_event_registration,
    _dropped_cb_function: Option<MPI_T_event_dropped_cb_function>,
) -> c_int {
    tcall(|| Err(ToolError::InvalidHandle))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_read(
    _event_instance: MPI_T_event_instance,
    _element_index: c_int,
    _buffer: *mut c_void,
) -> c_int {
    tcall(|| Err(ToolError::InvalidHandle))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_copy(
    _event_instance: MPI_T_event_instance,
    _buffer: *mut c_void,
) -> c_int {
    tcall(|| Err(ToolError::InvalidHandle))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_get_timestamp(
    _event_instance: MPI_T_event_instance,
    _event_timestamp: *mut MPI_Count,
) -> c_int {
    tcall(|| Err(ToolError::InvalidHandle))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_get_source(
    _event_instance: MPI_T_event_instance,
    _source_index: *mut c_int,
) -> c_int {
    tcall(|| Err(ToolError::InvalidHandle))
}
