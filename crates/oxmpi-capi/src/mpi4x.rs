//! The MPI-4.0/4.1/5.0 calls outside the big chapters: status accessors,
//! `MPI_Request_get_status_{any,all,some}`, buffered-mode buffers per
//! communicator and their flushes, communicators from groups with string tags
//! (`MPI_Comm_create_from_group`, `MPI_Intercomm_create_from_groups`, working
//! from World-model groups), Fortran 90 parameterized types, value-index pair
//! types, the hardware-resource and Fortran-ABI info queries, the Fortran 2008
//! status conversions, and the standard ABI's `MPI_<Handle>_toint/_fromint`.
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement (arrays of the length the standard gives, OUT
//! arguments writable and aliasing no other argument).

use std::ffi::{c_char, c_int, c_void};

use oxmpi_core::datatype::{Combiner, Datatype, Primitive};
use oxmpi_core::error::ErrorClass;
use oxmpi_core::group::Group;
use oxmpi_core::{pt2pt, Comm};

use crate::abi::*;
use crate::conv::errors::{bad, bad_code, ffi, out, Fail, NO_COMM, R};
use crate::conv::handles::state;
use crate::conv::{comm, datatype, get_str, group, new_comm};
use crate::types::*;

// ----- status accessors (MPI-5.0) ------------------------------------------------------

/// # Safety
/// `status` is NULL or a readable `MPI_Status`.
unsafe fn status_in<'a>(call: &str, status: *const MPI_Status) -> R<&'a MPI_Status> {
    if status.is_null() {
        return Err(bad(
            ErrorClass::Arg,
            call,
            "status",
            "is NULL (MPI_STATUS_IGNORE)",
        ));
    }
    // SAFETY: non-null (checked); readable by this function's contract.
    Ok(unsafe { &*status })
}

macro_rules! status_field {
    ($get:ident, $set:ident, $gname:literal, $sname:literal, $field:ident, $arg:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(status: *const MPI_Status, v: *mut c_int) -> c_int {
            ffi($gname, NO_COMM, || {
                // SAFETY: the C caller's IN status: NULL (rejected) or readable.
                let s = unsafe { status_in($gname, status)? };
                // SAFETY: the C caller's OUT argument: NULL (rejected) or writable and unaliased.
                *unsafe { out($gname, $arg, v)? } = s.$field;
                Ok(())
            })
        }
        #[no_mangle]
        pub unsafe extern "C" fn $set(status: *mut MPI_Status, v: c_int) -> c_int {
            ffi($sname, NO_COMM, || {
                // SAFETY: the C caller's INOUT status: NULL (rejected) or writable and unaliased.
                unsafe { out($sname, "status", status)? }.$field = v;
                Ok(())
            })
        }
    };
}

status_field!(
    PMPI_Status_get_source,
    PMPI_Status_set_source,
    "MPI_Status_get_source",
    "MPI_Status_set_source",
    MPI_SOURCE,
    "source"
);
status_field!(
    PMPI_Status_get_tag,
    PMPI_Status_set_tag,
    "MPI_Status_get_tag",
    "MPI_Status_set_tag",
    MPI_TAG,
    "tag"
);
status_field!(
    PMPI_Status_get_error,
    PMPI_Status_set_error,
    "MPI_Status_get_error",
    "MPI_Status_set_error",
    MPI_ERROR,
    "error"
);

// ----- MPI_Request_get_status_{any,all,some} (MPI-4.1) ------------------------------------

/// The status of an inactive or null request: source MPI_ANY_SOURCE, tag
/// MPI_ANY_TAG, error MPI_SUCCESS, count 0.
fn empty_status() -> MPI_Status {
    MPI_Status {
        MPI_SOURCE: MPI_ANY_SOURCE,
        MPI_TAG: MPI_ANY_TAG,
        MPI_ERROR: MPI_SUCCESS,
        MPI_internal: [0; 5],
    }
}

/// MPI_Request_get_status on one non-null request: whether it is complete,
/// and its status then (the request is neither freed nor deactivated).
fn peek(call: &str, h: MPI_Request) -> R<Option<MPI_Status>> {
    let mut flag: c_int = 0;
    let mut s = empty_status();
    // SAFETY: `flag` and `s` are this frame's locals, writable and unaliased.
    let code = unsafe { crate::request::PMPI_Request_get_status(h, &mut flag, &mut s) };
    if code != MPI_SUCCESS {
        return Err(Fail {
            code,
            message: format!(
                "{call}: MPI_Request_get_status failed on request {h:#x} (error code {code})"
            ),
        });
    }
    Ok((flag != 0).then_some(s))
}

/// # Safety
/// `requests` is NULL or holds `count` request handles.
unsafe fn request_array<'a>(
    call: &str,
    count: c_int,
    requests: *mut MPI_Request,
) -> R<&'a [MPI_Request]> {
    if count < 0 {
        return Err(bad(
            ErrorClass::Count,
            call,
            "count",
            format!("{count} is negative"),
        ));
    }
    // SAFETY: the C caller's array of `count` handles (NULL rejected when count > 0).
    unsafe {
        crate::conv::errors::array(
            call,
            "array_of_requests",
            requests as *const MPI_Request,
            count as usize,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_get_status_any(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    const CALL: &str = "MPI_Request_get_status_any";
    ffi(CALL, NO_COMM, || {
        // SAFETY: the C caller's arguments, as MPI_Request_get_status_any defines them.
        let reqs = unsafe { request_array(CALL, count, requests)? };
        // SAFETY: OUT arguments: NULL (rejected) or writable and unaliased.
        let i = unsafe { out(CALL, "index", index)? };
        // SAFETY: as above.
        let f = unsafe { out(CALL, "flag", flag)? };
        *i = MPI_UNDEFINED;
        *f = 0;
        let mut any_active = false;
        for (k, &h) in reqs.iter().enumerate() {
            if h == MPI_REQUEST_NULL {
                continue;
            }
            any_active = true;
            if let Some(s) = peek(CALL, h)? {
                *i = k as c_int;
                *f = 1;
                if !status.is_null() {
                    // SAFETY: non-null OUT status of the C caller.
                    unsafe { *status = s };
                }
                return Ok(());
            }
        }
        if !any_active {
            // No active request: flag true, index MPI_UNDEFINED, the empty status.
            *f = 1;
            if !status.is_null() {
                // SAFETY: non-null OUT status of the C caller.
                unsafe { *status = empty_status() };
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_get_status_all(
    count: c_int,
    requests: *mut MPI_Request,
    flag: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    const CALL: &str = "MPI_Request_get_status_all";
    ffi(CALL, NO_COMM, || {
        // SAFETY: the C caller's arguments, as MPI_Request_get_status_all defines them.
        let reqs = unsafe { request_array(CALL, count, requests)? };
        // SAFETY: OUT argument: NULL (rejected) or writable and unaliased.
        let f = unsafe { out(CALL, "flag", flag)? };
        let mut got = Vec::with_capacity(reqs.len());
        for &h in reqs {
            if h == MPI_REQUEST_NULL {
                got.push(empty_status());
                continue;
            }
            match peek(CALL, h)? {
                Some(s) => got.push(s),
                None => {
                    *f = 0;
                    return Ok(());
                }
            }
        }
        *f = 1;
        if !statuses.is_null() {
            // SAFETY: MPI_STATUSES_IGNORE is NULL; otherwise the C caller's array of `count` statuses.
            let out = unsafe { std::slice::from_raw_parts_mut(statuses, got.len()) };
            out.copy_from_slice(&got);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_get_status_some(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    const CALL: &str = "MPI_Request_get_status_some";
    ffi(CALL, NO_COMM, || {
        // SAFETY: the C caller's arguments, as MPI_Request_get_status_some defines them.
        let reqs = unsafe { request_array(CALL, incount, requests)? };
        // SAFETY: OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "outcount", outcount)? };
        let mut done = Vec::new();
        let mut any_active = false;
        for (k, &h) in reqs.iter().enumerate() {
            if h == MPI_REQUEST_NULL {
                continue;
            }
            any_active = true;
            if let Some(s) = peek(CALL, h)? {
                done.push((k as c_int, s));
            }
        }
        if !any_active {
            *o = MPI_UNDEFINED;
            return Ok(());
        }
        if !done.is_empty() {
            // SAFETY: the C caller's array of `incount` >= done.len() indices.
            let idx = unsafe {
                crate::conv::errors::array_mut(CALL, "array_of_indices", indices, done.len())?
            };
            for (slot, (k, _)) in idx.iter_mut().zip(&done) {
                *slot = *k;
            }
            if !statuses.is_null() {
                // SAFETY: MPI_STATUSES_IGNORE is NULL; otherwise an array of `incount` >= done.len() statuses.
                let st = unsafe { std::slice::from_raw_parts_mut(statuses, done.len()) };
                for (slot, (_, s)) in st.iter_mut().zip(&done) {
                    *slot = *s;
                }
            }
        }
        *o = done.len() as c_int;
        Ok(())
    })
}

// ----- buffered-send buffers: flushes and per-communicator buffers (MPI-4.1) ----------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_flush() -> c_int {
    ffi("MPI_Buffer_flush", NO_COMM, || {
        Ok(pt2pt::buffer_flush(None)?)
    })
}

/// MPI_Buffer_iflush (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new handle).
pub fn buffer_iflush(_call: &'static str) -> R<MPI_Request> {
    let r = pt2pt::buffer_iflush(None)?;
    Ok(crate::conv::new_request(r, NO_COMM, None))
}

fn comm_attach(call: &'static str, c: MPI_Comm, buffer: *mut c_void, size: i64) -> c_int {
    ffi(call, c, || {
        let cm = comm(c, call)?;
        let size = if buffer as usize == MPI_BUFFER_AUTOMATIC {
            isize::MAX as usize
        } else {
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
            size as usize
        };
        // The C caller hands over `size` bytes at `buffer` (or MPI_BUFFER_AUTOMATIC); oxmpi only accounts them.
        pt2pt::comm_buffer_attach(&cm, buffer as *mut u8, size)?;
        Ok(())
    })
}

/// # Safety
/// `buffer_addr` and `size` are NULL or writable and unaliased.
unsafe fn comm_detach(
    call: &'static str,
    c: MPI_Comm,
    buffer_addr: *mut c_void,
    size: &mut dyn FnMut(usize) -> R<()>,
) -> c_int {
    ffi(call, c, || {
        let cm = comm(c, call)?;
        // SAFETY: `buffer_addr` is the C caller's `void *` pointing at a `void *` to fill.
        let a = unsafe { out(call, "buffer_addr", buffer_addr as *mut *mut c_void)? };
        let (p, n) = pt2pt::comm_buffer_detach(&cm)?;
        *a = p as *mut c_void;
        size(n)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_attach_buffer(
    c: MPI_Comm,
    buffer: *mut c_void,
    size: c_int,
) -> c_int {
    comm_attach("MPI_Comm_attach_buffer", c, buffer, size as i64)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_attach_buffer_c(
    c: MPI_Comm,
    buffer: *mut c_void,
    size: MPI_Count,
) -> c_int {
    comm_attach("MPI_Comm_attach_buffer_c", c, buffer, size)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_detach_buffer(
    c: MPI_Comm,
    buffer_addr: *mut c_void,
    size: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Comm_detach_buffer";
    let mut put = |n: usize| {
        // SAFETY: the C caller's OUT argument: NULL (rejected) or writable and unaliased.
        *unsafe { out(CALL, "size", size)? } = n.min(c_int::MAX as usize) as c_int;
        Ok(())
    };
    // SAFETY: the C caller's arguments, as MPI_Comm_detach_buffer defines them.
    unsafe { comm_detach(CALL, c, buffer_addr, &mut put) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_detach_buffer_c(
    c: MPI_Comm,
    buffer_addr: *mut c_void,
    size: *mut MPI_Count,
) -> c_int {
    const CALL: &str = "MPI_Comm_detach_buffer_c";
    let mut put = |n: usize| {
        // SAFETY: the C caller's OUT argument: NULL (rejected) or writable and unaliased.
        *unsafe { out(CALL, "size", size)? } = n.min(i64::MAX as usize) as MPI_Count;
        Ok(())
    };
    // SAFETY: the C caller's arguments, as MPI_Comm_detach_buffer_c defines them.
    unsafe { comm_detach(CALL, c, buffer_addr, &mut put) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_flush_buffer(c: MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_flush_buffer";
    ffi(CALL, c, || {
        let cm = comm(c, CALL)?;
        Ok(pt2pt::buffer_flush(Some(&cm))?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_iflush_buffer(c: MPI_Comm, request: *mut MPI_Request) -> c_int {
    const CALL: &str = "MPI_Comm_iflush_buffer";
    ffi(CALL, c, || {
        let cm = comm(c, CALL)?;
        // SAFETY: OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "request", request)? };
        let r = pt2pt::buffer_iflush(Some(&cm))?;
        *o = crate::conv::new_request(r, c, None);
        Ok(())
    })
}

// ----- communicators from groups (MPI-4.0) --------------------------------------------------

/// A string tag as an MPI tag: FNV-1a over its bytes, folded into 0..=MPI_TAG_UB,
/// so every process naming the same string gets the same tag.
fn tag_of(s: &str) -> i32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h % (oxmpi_core::TAG_UB as u64 + 1)) as i32
}

/// # Safety
/// `p` is NULL or a NUL-terminated C string.
unsafe fn stringtag(call: &str, p: *const c_char) -> R<String> {
    // SAFETY: by this function's contract.
    let s = unsafe { get_str(call, "stringtag", p)? };
    if s.len() >= MPI_MAX_STRINGTAG_LEN as usize {
        return Err(bad(
            ErrorClass::Arg,
            call,
            "stringtag",
            format!(
                "{} bytes; at most MPI_MAX_STRINGTAG_LEN - 1 = {}",
                s.len(),
                MPI_MAX_STRINGTAG_LEN - 1
            ),
        ));
    }
    Ok(s.to_string())
}

/// Validates an errhandler argument (before anything is created).
fn errhandler_arg(call: &str, eh: MPI_Errhandler) -> R<()> {
    if eh == MPI_ERRORS_ARE_FATAL
        || eh == MPI_ERRORS_RETURN
        || eh == MPI_ERRORS_ABORT
        || state().errhandlers.get(eh).is_some()
    {
        Ok(())
    } else {
        Err(bad(
            ErrorClass::Arg,
            call,
            "errhandler",
            format!("{eh:#x} is not a valid error handler"),
        ))
    }
}

fn info_arg(call: &str, info: MPI_Info) -> R<()> {
    if info == MPI_INFO_NULL || info == MPI_INFO_ENV || state().infos.get(info).is_some() {
        Ok(())
    } else {
        Err(bad_code(
            MPI_ERR_INFO,
            call,
            "info",
            format!("{info:#x} is not a valid info object"),
        ))
    }
}

/// A handle for a communicator made from groups, with its error handler.
fn handle_with_errhandler(call: &str, cm: Comm, eh: MPI_Errhandler) -> R<MPI_Comm> {
    let h = new_comm(cm, MPI_COMM_WORLD);
    // SAFETY: `h` is the live communicator just made; `eh` was validated.
    let code = unsafe { crate::errhan::PMPI_Comm_set_errhandler(h, eh) };
    if code != MPI_SUCCESS {
        let mut h = h;
        // SAFETY: `h` is a local, writable handle of a communicator of ours.
        unsafe { crate::comm::PMPI_Comm_free(&mut h) };
        return Err(Fail {
            code,
            message: format!(
                "{call}: setting the new communicator's error handler failed (code {code})"
            ),
        });
    }
    Ok(h)
}

/// The base every group-made communicator comes from: every group names
/// world ranks, so the job's processes are the universe. It is the engine's
/// world communicator, whether or not the World model is active (groups of
/// sessions make communicators before MPI_Init and after MPI_Finalize).
fn world(_call: &str) -> R<Comm> {
    Ok(oxmpi_core::runtime::engine()?.world().clone())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_create_from_group(
    g: MPI_Group,
    tag: *const c_char,
    info: MPI_Info,
    eh: MPI_Errhandler,
    newcomm: *mut MPI_Comm,
) -> c_int {
    const CALL: &str = "MPI_Comm_create_from_group";
    ffi(CALL, NO_COMM, || {
        let grp = group(g, CALL, "group")?;
        let session = crate::conv::common_session(CALL, &[("group", g)])?;
        // SAFETY: the C caller's string tag: NUL-terminated, or NULL (rejected).
        let t = unsafe { stringtag(CALL, tag)? };
        info_arg(CALL, info)?;
        errhandler_arg(CALL, eh)?;
        // SAFETY: OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "newcomm", newcomm)? };
        *o = MPI_COMM_NULL;
        let w = world(CALL)?;
        let me = w.group()[w.rank() as usize];
        if grp.rank_of_world(me).is_none() {
            return Err(bad(
                ErrorClass::Group,
                CALL,
                "group",
                "the calling process is not a member of the group",
            ));
        }
        let cm = oxmpi_core::comm::create::create_group(&w, grp.world_ranks(), tag_of(&t))
            .map_err(|e| rename(e, CALL))?
            .ok_or_else(|| {
                bad(
                    ErrorClass::Group,
                    CALL,
                    "group",
                    "the calling process is not a member of the group",
                )
            })?;
        let h = handle_with_errhandler(CALL, cm.clone(), eh)?;
        crate::conv::tag_comm(h, &cm, session);
        *o = h;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Intercomm_create_from_groups(
    local_group: MPI_Group,
    local_leader: c_int,
    remote_group: MPI_Group,
    remote_leader: c_int,
    tag: *const c_char,
    info: MPI_Info,
    eh: MPI_Errhandler,
    newintercomm: *mut MPI_Comm,
) -> c_int {
    const CALL: &str = "MPI_Intercomm_create_from_groups";
    ffi(CALL, NO_COMM, || {
        let lg = group(local_group, CALL, "local_group")?;
        let rg = group(remote_group, CALL, "remote_group")?;
        let session = crate::conv::common_session(
            CALL,
            &[("local_group", local_group), ("remote_group", remote_group)],
        )?;
        // SAFETY: the C caller's string tag: NUL-terminated, or NULL (rejected).
        let t = unsafe { stringtag(CALL, tag)? };
        info_arg(CALL, info)?;
        errhandler_arg(CALL, eh)?;
        // SAFETY: OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "newintercomm", newintercomm)? };
        *o = MPI_COMM_NULL;
        if !(0..lg.size()).contains(&local_leader) {
            return Err(bad(
                ErrorClass::Rank,
                CALL,
                "local_leader",
                format!(
                    "{local_leader} is not a rank of local_group (size {})",
                    lg.size()
                ),
            ));
        }
        let remote_world = rg.world_rank_of(remote_leader).ok_or_else(|| {
            bad(
                ErrorClass::Rank,
                CALL,
                "remote_leader",
                format!(
                    "{remote_leader} is not a rank of remote_group (size {})",
                    rg.size()
                ),
            )
        })?;
        let w = world(CALL)?;
        let me = w.group()[w.rank() as usize];
        if lg.rank_of_world(me).is_none() {
            return Err(bad(
                ErrorClass::Group,
                CALL,
                "local_group",
                "the calling process is not a member of the local group",
            ));
        }
        if lg
            .world_ranks()
            .iter()
            .any(|r| rg.rank_of_world(*r).is_some())
        {
            return Err(bad(
                ErrorClass::Group,
                CALL,
                "remote_group",
                "overlaps the local group; the two groups must be disjoint",
            ));
        }
        let tg = tag_of(&t);
        let local = oxmpi_core::comm::create::create_group(&w, lg.world_ranks(), tg)
            .map_err(|e| rename(e, CALL))?
            .ok_or_else(|| {
                bad(
                    ErrorClass::Group,
                    CALL,
                    "local_group",
                    "the calling process is not a member of the local group",
                )
            })?;
        let ic = oxmpi_core::comm::inter::intercomm_create(
            &local,
            local_leader,
            Some(&w),
            remote_world as i32,
            tg,
        )
        .map_err(|e| rename(e, CALL))?;
        drop(local);
        let h = handle_with_errhandler(CALL, ic.clone(), eh)?;
        crate::conv::tag_comm(h, &ic, session);
        *o = h;
        Ok(())
    })
}

// ----- Fortran 90 parameterized types and value-index pairs ----------------------------------

/// A handle for an F90 type: a handle of its own (so its envelope reports the
/// F90 combiner), the same one for the same parameters while it lives.
fn f90_handle(dt: Datatype) -> MPI_Datatype {
    let found = state()
        .datatypes
        .iter()
        .find(|(_, d)| d.ptr_eq(&dt))
        .map(|(h, _)| h);
    found.unwrap_or_else(|| state().datatypes.insert(dt))
}

/// MPI_Type_create_f90_integer (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
pub fn type_create_f90_integer(call: &'static str, r: c_int) -> R<MPI_Datatype> {
    // SELECTED_INT_KIND(r): the smallest integer holding -10^r < n < 10^r.
    let p = match r {
        i32::MIN..=-1 => return Err(bad(ErrorClass::Arg, call, "r", format!("{r} is negative"))),
        0..=2 => Primitive::Integer1,
        3..=4 => Primitive::Integer2,
        5..=9 => Primitive::Integer4,
        10..=18 => Primitive::Integer8,
        _ => {
            return Err(bad(
                ErrorClass::Arg,
                call,
                "r",
                format!("no integer kind has a decimal range of {r} (at most 18)"),
            ))
        }
    };
    Ok(f90_handle(Datatype::f90(
        Combiner::F90Integer,
        p,
        &[r as i64],
    )))
}

/// SELECTED_REAL_KIND(p, r): 4-byte reals hold 6 digits and exponents to 37,
/// 8-byte ones 15 and 307. MPI_UNDEFINED leaves that parameter free.
fn real_kind(call: &str, p: c_int, r: c_int) -> R<bool> {
    let pp = if p == MPI_UNDEFINED { 0 } else { p };
    let rr = if r == MPI_UNDEFINED { 0 } else { r };
    if p == MPI_UNDEFINED && r == MPI_UNDEFINED {
        return Err(bad(
            ErrorClass::Arg,
            call,
            "p",
            "p and r are both MPI_UNDEFINED",
        ));
    }
    if pp < 0 || rr < 0 {
        return Err(bad(
            ErrorClass::Arg,
            call,
            if pp < 0 { "p" } else { "r" },
            "is negative",
        ));
    }
    if pp <= 6 && rr <= 37 {
        Ok(false)
    } else if pp <= 15 && rr <= 307 {
        Ok(true)
    } else {
        Err(bad(
            ErrorClass::Arg,
            call,
            "p",
            format!(
                "no real kind has precision {p} and range {r} (at most 15 digits, exponent 307)"
            ),
        ))
    }
}

/// MPI_Type_create_f90_real (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
pub fn type_create_f90_real(call: &'static str, p: c_int, r: c_int) -> R<MPI_Datatype> {
    let base = if real_kind(call, p, r)? {
        Primitive::Real8
    } else {
        Primitive::Real4
    };
    Ok(f90_handle(Datatype::f90(
        Combiner::F90Real,
        base,
        &[p as i64, r as i64],
    )))
}

/// MPI_Type_create_f90_complex (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
pub fn type_create_f90_complex(call: &'static str, p: c_int, r: c_int) -> R<MPI_Datatype> {
    let base = if real_kind(call, p, r)? {
        Primitive::Complex16
    } else {
        Primitive::Complex8
    };
    Ok(f90_handle(Datatype::f90(
        Combiner::F90Complex,
        base,
        &[p as i64, r as i64],
    )))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_value_index(
    value_type: MPI_Datatype,
    index_type: MPI_Datatype,
    pair_type: *mut MPI_Datatype,
) -> c_int {
    const CALL: &str = "MPI_Type_get_value_index";
    ffi(CALL, NO_COMM, || {
        let v = datatype(value_type, CALL, "value_type")?;
        let i = datatype(index_type, CALL, "index_type")?;
        // SAFETY: OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "pair_type", pair_type)? };
        // The predefined pairs MPI_MINLOC/MPI_MAXLOC know.
        let pairs: &[(MPI_Datatype, MPI_Datatype, MPI_Datatype)] = &[
            (MPI_FLOAT, MPI_INT, MPI_FLOAT_INT),
            (MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT),
            (MPI_LONG, MPI_INT, MPI_LONG_INT),
            (MPI_INT, MPI_INT, MPI_2INT),
            (MPI_SHORT, MPI_INT, MPI_SHORT_INT),
            (MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT),
            (MPI_REAL, MPI_REAL, MPI_2REAL),
            (
                MPI_DOUBLE_PRECISION,
                MPI_DOUBLE_PRECISION,
                MPI_2DOUBLE_PRECISION,
            ),
            (MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER),
        ];
        if let Some(&(_, _, p)) = pairs
            .iter()
            .find(|&&(a, b, _)| a == value_type && b == index_type)
        {
            *o = p;
            return Ok(());
        }
        // No predefined pair: MPI_DATATYPE_NULL (as MPICH answers; the
        // reductions MPI_MINLOC/MPI_MAXLOC only know the predefined pairs).
        let _ = (v, i);
        *o = MPI_DATATYPE_NULL;
        Ok(())
    })
}

// ----- info queries: hardware resources, the Fortran ABI --------------------------------------

/// MPI_Get_hw_resource_info (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new handle).
pub fn get_hw_resource_info(_call: &'static str) -> R<MPI_Info> {
    // Each resource type MPI_COMM_TYPE_HW_GUIDED accepts, with the index of
    // the one this process is restricted to (absent when not bound to one).
    let kv = oxmpi_core::runtime::engine()?.hw_resource_info();
    Ok(state().infos.insert(kv))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Abi_get_fortran_info(info: *mut MPI_Info) -> c_int {
    const CALL: &str = "MPI_Abi_get_fortran_info";
    ffi(CALL, NO_COMM, || {
        // SAFETY: OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "info", info)? };
        // oxmpi has no Fortran bindings; the C library's Fortran types describe
        // the default gfortran ABI (4-byte INTEGER, REAL and LOGICAL, 8-byte
        // DOUBLE PRECISION), and which optional kinds are supported.
        let yes_no = |h: MPI_Datatype| {
            if h == MPI_DATATYPE_NULL {
                "false"
            } else {
                "true"
            }
        };
        let kv = vec![
            ("mpi_logical_size", "4".to_string()),
            ("mpi_integer_size", "4".to_string()),
            ("mpi_real_size", "4".to_string()),
            ("mpi_double_precision_size", "8".to_string()),
            ("mpi_logical1_supported", yes_no(MPI_LOGICAL1).to_string()),
            ("mpi_logical2_supported", yes_no(MPI_LOGICAL2).to_string()),
            ("mpi_logical4_supported", yes_no(MPI_LOGICAL4).to_string()),
            ("mpi_logical8_supported", yes_no(MPI_LOGICAL8).to_string()),
            ("mpi_logical16_supported", yes_no(MPI_LOGICAL16).to_string()),
            ("mpi_integer1_supported", yes_no(MPI_INTEGER1).to_string()),
            ("mpi_integer2_supported", yes_no(MPI_INTEGER2).to_string()),
            ("mpi_integer4_supported", yes_no(MPI_INTEGER4).to_string()),
            ("mpi_integer8_supported", yes_no(MPI_INTEGER8).to_string()),
            ("mpi_integer16_supported", yes_no(MPI_INTEGER16).to_string()),
            ("mpi_real2_supported", yes_no(MPI_REAL2).to_string()),
            ("mpi_real4_supported", yes_no(MPI_REAL4).to_string()),
            ("mpi_real8_supported", yes_no(MPI_REAL8).to_string()),
            ("mpi_real16_supported", yes_no(MPI_REAL16).to_string()),
            ("mpi_complex4_supported", yes_no(MPI_COMPLEX4).to_string()),
            ("mpi_complex8_supported", yes_no(MPI_COMPLEX8).to_string()),
            ("mpi_complex16_supported", yes_no(MPI_COMPLEX16).to_string()),
            ("mpi_complex32_supported", yes_no(MPI_COMPLEX32).to_string()),
            (
                "mpi_double_complex_supported",
                yes_no(MPI_DOUBLE_COMPLEX).to_string(),
            ),
        ];
        *o = state()
            .infos
            .insert(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
        Ok(())
    })
}

// ----- Fortran 2008 status conversions ---------------------------------------------------------

/// # Safety
/// `src` is NULL or readable for 8 ints; `dst` NULL or writable for 8 ints, unaliased.
unsafe fn copy_status(call: &'static str, src: *const c_int, dst: *mut c_int) -> c_int {
    ffi(call, NO_COMM, || {
        if src.is_null() || dst.is_null() {
            return Err(bad(ErrorClass::Arg, call, "status", "is NULL"));
        }
        // SAFETY: the C status, the Fortran status and the Fortran 2008 status are all MPI_F_STATUS_SIZE ints in the same order (source, tag, error, internal).
        unsafe { std::ptr::copy_nonoverlapping(src, dst, MPI_F_STATUS_SIZE as usize) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_c2f08(c: *const MPI_Status, f: *mut MPI_F08_status) -> c_int {
    // SAFETY: the C caller's statuses, as MPI_Status_c2f08 defines them.
    unsafe { copy_status("MPI_Status_c2f08", c as *const c_int, f as *mut c_int) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_f082c(f: *const MPI_F08_status, c: *mut MPI_Status) -> c_int {
    // SAFETY: the C caller's statuses, as MPI_Status_f082c defines them.
    unsafe { copy_status("MPI_Status_f082c", f as *const c_int, c as *mut c_int) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_f2f08(f: *const c_int, f08: *mut MPI_F08_status) -> c_int {
    // SAFETY: the C caller's statuses, as MPI_Status_f2f08 defines them.
    unsafe { copy_status("MPI_Status_f2f08", f, f08 as *mut c_int) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_f082f(f08: *const MPI_F08_status, f: *mut c_int) -> c_int {
    // SAFETY: the C caller's statuses, as MPI_Status_f082f defines them.
    unsafe { copy_status("MPI_Status_f082f", f08 as *const c_int, f) }
}

// ----- handle <-> int conversions of the standard ABI ---------------------------------------------

macro_rules! toint {
    ($($to:ident, $from:ident, $c2f:path, $f2c:path, $ty:ty;)*) => {$(
        /// The standard ABI's integer for a handle: the same integer the Fortran conversion gives.
        #[no_mangle]
        pub unsafe extern "C" fn $to(h: $ty) -> c_int {
            // SAFETY: a pure handle-table lookup; no pointer is dereferenced.
            unsafe { $c2f(h) }
        }
        /// The handle of a standard ABI integer.
        #[no_mangle]
        pub unsafe extern "C" fn $from(i: c_int) -> $ty {
            // SAFETY: a pure handle-table lookup; no pointer is dereferenced.
            unsafe { $f2c(i) }
        }
    )*};
}

toint! {
    PMPI_Comm_toint, PMPI_Comm_fromint, crate::env::PMPI_Comm_c2f, crate::env::PMPI_Comm_f2c, MPI_Comm;
    PMPI_Errhandler_toint, PMPI_Errhandler_fromint, crate::env::PMPI_Errhandler_c2f, crate::env::PMPI_Errhandler_f2c, MPI_Errhandler;
    PMPI_File_toint, PMPI_File_fromint, crate::file::PMPI_File_c2f, crate::file::PMPI_File_f2c, MPI_File;
    PMPI_Group_toint, PMPI_Group_fromint, crate::group::PMPI_Group_c2f, crate::group::PMPI_Group_f2c, MPI_Group;
    PMPI_Info_toint, PMPI_Info_fromint, crate::env::PMPI_Info_c2f, crate::env::PMPI_Info_f2c, MPI_Info;
    PMPI_Message_toint, PMPI_Message_fromint, crate::env::PMPI_Message_c2f, crate::env::PMPI_Message_f2c, MPI_Message;
    PMPI_Op_toint, PMPI_Op_fromint, crate::env::PMPI_Op_c2f, crate::env::PMPI_Op_f2c, MPI_Op;
    PMPI_Request_toint, PMPI_Request_fromint, crate::env::PMPI_Request_c2f, crate::env::PMPI_Request_f2c, MPI_Request;
    PMPI_Session_toint, PMPI_Session_fromint, crate::session::PMPI_Session_c2f, crate::session::PMPI_Session_f2c, MPI_Session;
    PMPI_Type_toint, PMPI_Type_fromint, crate::env::PMPI_Type_c2f, crate::env::PMPI_Type_f2c, MPI_Datatype;
    PMPI_Win_toint, PMPI_Win_fromint, crate::win::PMPI_Win_c2f, crate::win::PMPI_Win_f2c, MPI_Win;
}

/// An error of the core call this one is built on, named after this call.
fn rename(e: oxmpi_core::MpiError, call: &str) -> Fail {
    let mut m = e.message.clone();
    for g in ["MPI_Comm_create_group:", "MPI_Intercomm_create:"] {
        if let Some(rest) = m.strip_prefix(g) {
            m = format!("{call}:{rest}");
            break;
        }
    }
    Fail::from(oxmpi_core::MpiError::new(e.class, m))
}

#[allow(dead_code)]
fn _unused(_: Group) {}
