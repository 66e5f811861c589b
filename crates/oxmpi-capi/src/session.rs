//! MPI-4 sessions: `MPI_Session_init`/`_finalize`, process sets, groups from
//! process sets, session error handlers and session buffers.
//!
//! A session is a second way into the one engine of the process
//! (`oxmpi_core::runtime::session_init`): the engine starts with the first of
//! MPI_Init and MPI_Session_init and leaves the job when the last of them is
//! finalized, so sessions work before MPI_Init, beside it and after
//! MPI_Finalize, several at once.
//!
//! Process sets: `mpi://WORLD` (every process of the job) and `mpi://SELF`.
//! A group made from a session's process set is tagged with that session;
//! groups made from it (union, incl, ...) and communicators made from them
//! (`MPI_Comm_create_from_group`, and every communicator derived from those)
//! carry the tag, and objects of different sessions (or of a session and the
//! World model) are never combined: that is an `MPI_ERR_SESSION` error.
//!
//! Session handles live in their own table (kind `KIND_SESSION`); error
//! handlers are the shared ones of `handles::State::errhandlers`.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::Ordering;

use oxmpi_core::error::{ErrorClass, MpiError};
use oxmpi_core::group::Group;
use oxmpi_core::pt2pt;
use oxmpi_core::runtime::{self, ThreadLevel};

use crate::abi::*;
use crate::conv::errors::{bad, bad_code, code_name, out, raise, run_named, Fail, NO_COMM, R};
use crate::conv::handles::{c2f_predefined_or, f2c_predefined_or, state, ErrhandlerEntry};
use crate::conv::session::{session_error, session_id, sessions, with_tags, SessionEntry, NEXT_ID};
use crate::conv::{get_str, put_str, tag_group};
use crate::types::*;

// ----- error routing ---------------------------------------------------------------------

/// Calls error handler `errh` for session `s` with `code`; returns the code.
fn raise_with(errh: MPI_Errhandler, s: MPI_Session, code: c_int, message: &str) -> c_int {
    match errh {
        MPI_ERRORS_RETURN => code,
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT => fatal(code, message),
        h => {
            let func = state().errhandlers.get(h).map(|e| e.func);
            match func {
                Some(f) => {
                    let (mut x, mut c) = (s, code);
                    // SAFETY: a C function the user registered with MPI_Session_create_errhandler.
                    unsafe { f(&mut x, &mut c) };
                    code
                }
                None => fatal(code, message),
            }
        }
    }
}

fn fatal(code: c_int, message: &str) -> ! {
    let rank = runtime::engine().map(|e| e.rank()).unwrap_or(0);
    eprintln!("oxmpi: rank {rank}: {message} ({})", code_name(code));
    runtime::abort(
        if code == 0 { 1 } else { code },
        "the session's error handler is MPI_ERRORS_ARE_FATAL",
    )
}

/// Runs a session call's body: catches panics and routes errors to the
/// session's error handler (to the process's, `NO_COMM`, when `s` is not a
/// live session), or to `errh` when given (MPI_Session_init).
pub(crate) fn ffi_session(
    call: &'static str,
    s: MPI_Session,
    errh: Option<MPI_Errhandler>,
    body: impl FnOnce() -> R<()>,
) -> c_int {
    match run_named(call, body) {
        Ok(()) => MPI_SUCCESS,
        Err((code, message)) => {
            if let Some(errh) = errh {
                return raise_with(errh, MPI_SESSION_NULL, code, &message);
            }
            let errh = sessions().get(s).map(|e| e.errh);
            match errh {
                Some(errh) => raise_with(errh, s, code, &message),
                None => raise(NO_COMM, code, &message),
            }
        }
    }
}

fn errhandler_ok(call: &str, h: MPI_Errhandler) -> R<()> {
    match h {
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN => Ok(()),
        MPI_ERRHANDLER_NULL => Err(bad(
            ErrorClass::Arg,
            call,
            "errhandler",
            "MPI_ERRHANDLER_NULL",
        )),
        _ => match state().errhandlers.get(h) {
            Some(e) if e.refs > 0 => Ok(()),
            _ => Err(bad(
                ErrorClass::Arg,
                call,
                "errhandler",
                format!("{h:#x} is not a valid error handler (freed, or never created)"),
            )),
        },
    }
}

fn info_pairs(call: &str, info: MPI_Info) -> R<Vec<(String, String)>> {
    if info == MPI_INFO_NULL {
        return Ok(Vec::new());
    }
    crate::conv::with_info(call, info, |v| Ok(v.clone()))
}

fn level_name(l: ThreadLevel) -> &'static str {
    match l {
        ThreadLevel::Single => "MPI_THREAD_SINGLE",
        ThreadLevel::Funneled => "MPI_THREAD_FUNNELED",
        ThreadLevel::Serialized => "MPI_THREAD_SERIALIZED",
        ThreadLevel::Multiple => "MPI_THREAD_MULTIPLE",
    }
}

/// The `thread_level` info value (`MPI_THREAD_MULTIPLE`, ...), as MPI-4 names it.
fn parse_level(call: &str, v: &str) -> R<ThreadLevel> {
    let v = v.trim();
    let name = v.to_ascii_uppercase();
    let name = name.strip_prefix("MPI_THREAD_").unwrap_or(&name);
    Ok(match name {
        "SINGLE" => ThreadLevel::Single,
        "FUNNELED" => ThreadLevel::Funneled,
        "SERIALIZED" => ThreadLevel::Serialized,
        "MULTIPLE" => ThreadLevel::Multiple,
        _ => match v.parse::<i32>().ok().and_then(crate::abi::thread_level_from_value) {
            Some(l) => l,
            None => {
                return Err(bad_code(
                    MPI_ERR_INFO_VALUE,
                    call,
                    "info",
                    format!("thread_level '{v}' is not one of MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED, _MULTIPLE"),
                ))
            }
        },
    })
}

/// The process set `name` names: the world ranks of its members.
fn pset(call: &str, name: &str) -> R<Vec<u32>> {
    match runtime::pset_members(name)? {
        Some(m) => Ok(m),
        None => Err(bad(
            ErrorClass::Arg,
            call,
            "pset_name",
            format!(
                "'{name}' is not a process set of this session (there are {})",
                runtime::pset_names(call)?.join(", ")
            ),
        )),
    }
}

// ----- init, finalize, info, process sets --------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_init(
    info: MPI_Info,
    errhandler: MPI_Errhandler,
    session: *mut MPI_Session,
) -> c_int {
    const CALL: &str = "MPI_Session_init";
    // Errors of this call go to the handler it is given (MPI_ERRHANDLER_NULL: the default, fatal).
    let eh = if errhandler == MPI_ERRHANDLER_NULL {
        MPI_ERRORS_ARE_FATAL
    } else {
        errhandler
    };
    let eh_valid = errhandler_ok(CALL, eh).is_ok();
    ffi_session(
        CALL,
        MPI_SESSION_NULL,
        Some(if eh_valid { eh } else { MPI_ERRORS_ARE_FATAL }),
        || {
            errhandler_ok(CALL, eh)?;
            // SAFETY: `session` is the OUT argument: NULL (rejected) or writable and unaliased.
            let o = unsafe { out(CALL, "session", session)? };
            *o = MPI_SESSION_NULL;
            if info != MPI_INFO_NULL && info != MPI_INFO_ENV && state().infos.get(info).is_none() {
                return Err(bad_code(
                    MPI_ERR_INFO,
                    CALL,
                    "info",
                    format!("{info:#x} is not a valid info object"),
                ));
            }
            let kv = if info == MPI_INFO_ENV {
                Vec::new()
            } else {
                info_pairs(CALL, info)?
            };
            let level = match kv
                .iter()
                .rev()
                .find(|(k, _)| k == "thread_level" || k == "mpi_thread_support_level")
            {
                Some((_, v)) => parse_level(CALL, v)?,
                // No level asked: MPI_THREAD_MULTIPLE, as MPICH gives (MPI-4.1 §11.3.1 advises
                // implementors against MPI_THREAD_SINGLE as the sessions' default).
                None => ThreadLevel::Multiple,
            };
            let provided = runtime::session_init(level).map_err(Fail::from)?;
            if let Some(e) = state().errhandlers.get_mut(eh) {
                e.refs += 1;
            }
            let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
            *o = sessions().insert(SessionEntry {
                id,
                errh: eh,
                thread_level: provided,
            });
            Ok(())
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_finalize(session: *mut MPI_Session) -> c_int {
    const CALL: &str = "MPI_Session_finalize";
    let s = if session.is_null() {
        MPI_SESSION_NULL
    } else {
        // SAFETY: non-null INOUT handle (MPI contract: readable).
        unsafe { *session }
    };
    ffi_session(CALL, s, None, || {
        // SAFETY: `session` is the INOUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "session", session)? };
        let id = session_id(CALL, s)?;
        let live: Vec<MPI_Comm> = with_tags(|t| {
            t.comms
                .iter()
                .filter(|(_, &x)| x == s)
                .map(|(&c, _)| c)
                .collect()
        });
        if !live.is_empty() {
            return Err(session_error(
                CALL,
                "session",
                format!("{} communicator(s) made from this session are not freed yet (free or disconnect them first)", live.len()),
            ));
        }
        // The session's buffer: its messages leave first, as MPI_Comm_free does for a communicator's.
        if pt2pt::session_buffer_attached(id)? {
            pt2pt::session_buffer_detach(id)?;
        }
        let entry = sessions().remove(s);
        if let Some(e) = entry {
            if let Some(h) = state().errhandlers.get_mut(e.errh) {
                h.refs = h.refs.saturating_sub(1);
            }
        }
        with_tags(|t| t.groups.retain(|_, x| *x != s));
        *o = MPI_SESSION_NULL;
        runtime::session_finalize()?;
        Ok(())
    })
}

/// MPI_Session_get_num_psets (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
pub fn session_get_num_psets(call: &'static str, session: MPI_Session, info: MPI_Info) -> R<c_int> {
    session_id(call, session)?;
    info_pairs(call, info)?;
    Ok(runtime::pset_names(call)?.len() as c_int)
}

/// MPI_Session_get_nth_pset (abi.txt `out(pset_len) lenquery(pset_name, pset_len)`: the
/// generated `PMPI_x` checks `pset_len` first, then `pset_name` unless `*pset_len` asks
/// for the length).
///
/// # Safety
/// The C caller's arguments of MPI_Session_get_nth_pset, as MPI defines them.
pub unsafe fn session_get_nth_pset(
    call: &'static str,
    session: MPI_Session,
    info: MPI_Info,
    n: c_int,
    len: &mut c_int,
    pset_name: *mut c_char,
) -> R<()> {
    session_id(call, session)?;
    info_pairs(call, info)?;
    let names = runtime::pset_names(call)?;
    let name = usize::try_from(n)
        .ok()
        .and_then(|i| names.get(i))
        .ok_or_else(|| {
            bad(
                ErrorClass::Arg,
                call,
                "n",
                format!(
                    "{n} is not in 0..{} (MPI_Session_get_num_psets)",
                    names.len()
                ),
            )
        })?;
    // A length of 0 asks for the length needed, NUL included.
    if *len <= 0 {
        *len = name.len() as c_int + 1;
        return Ok(());
    }
    // SAFETY: the caller provides `*len` writable bytes at `pset_name` (non-NULL: the
    // generated `lenquery` check rejects NULL with `*len > 0`).
    unsafe { put_str(pset_name, name, *len as usize) };
    *len = name.len() as c_int + 1;
    Ok(())
}

/// MPI_Session_get_pset_info (abi.txt `out(info)`: the generated `PMPI_x` checks `info` first).
///
/// # Safety
/// The C caller's arguments of MPI_Session_get_pset_info, as MPI defines them.
pub unsafe fn session_get_pset_info(
    call: &'static str,
    session: MPI_Session,
    pset_name: *const c_char,
    o: &mut MPI_Info,
) -> R<()> {
    session_id(call, session)?;
    // SAFETY: the C caller's NUL-terminated string (or NULL, rejected).
    let name = unsafe { get_str(call, "pset_name", pset_name)? };
    let members = pset(call, name)?;
    *o = state()
        .infos
        .insert(vec![("mpi_size".to_string(), members.len().to_string())]);
    Ok(())
}

/// MPI_Session_get_info (abi.txt `out(info_used)`: the generated `PMPI_x` checks `info_used` first).
pub fn session_get_info(call: &'static str, session: MPI_Session, o: &mut MPI_Info) -> R<()> {
    session_id(call, session)?;
    let level = sessions()
        .get(session)
        .map(|e| e.thread_level)
        .unwrap_or(ThreadLevel::Single);
    *o = state().infos.insert(vec![(
        "thread_level".to_string(),
        level_name(level).to_string(),
    )]);
    Ok(())
}

/// MPI_Group_from_session_pset (abi.txt `out(newgroup)`: the generated `PMPI_x` checks `newgroup` first).
///
/// # Safety
/// The C caller's arguments of MPI_Group_from_session_pset, as MPI defines them.
pub unsafe fn group_from_session_pset(
    call: &'static str,
    session: MPI_Session,
    pset_name: *const c_char,
    o: &mut MPI_Group,
) -> R<()> {
    *o = MPI_GROUP_NULL;
    session_id(call, session)?;
    // SAFETY: the C caller's NUL-terminated string (or NULL, rejected).
    let name = unsafe { get_str(call, "pset_name", pset_name)? };
    let members = pset(call, name)?;
    let g = crate::conv::new_group(Group::from_world_ranks(members));
    tag_group(g, Some(session));
    *o = g;
    Ok(())
}

// ----- error handlers --------------------------------------------------------------------

/// MPI_Session_create_errhandler (abi.txt `out(errhandler) route(session)`).
pub fn session_create_errhandler(
    call: &'static str,
    f: Option<MPI_Session_errhandler_function>,
    o: &mut MPI_Errhandler,
) -> R<()> {
    {
        let f = f.ok_or_else(|| bad(ErrorClass::Arg, call, "session_errhandler_fn", "is NULL"))?;
        *o = state()
            .errhandlers
            .insert(ErrhandlerEntry { func: f, refs: 1 });
        Ok(())
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_set_errhandler(
    session: MPI_Session,
    eh: MPI_Errhandler,
) -> c_int {
    const CALL: &str = "MPI_Session_set_errhandler";
    ffi_session(CALL, session, None, || {
        session_id(CALL, session)?;
        errhandler_ok(CALL, eh)?;
        let old = {
            let mut t = sessions();
            let e = t
                .get_mut(session)
                .ok_or_else(|| session_error(CALL, "session", "not a valid session"))?;
            std::mem::replace(&mut e.errh, eh)
        };
        let mut st = state();
        if let Some(h) = st.errhandlers.get_mut(eh) {
            h.refs += 1;
        }
        if let Some(h) = st.errhandlers.get_mut(old) {
            h.refs = h.refs.saturating_sub(1);
        }
        Ok(())
    })
}

/// MPI_Session_get_errhandler (abi.txt `out(errhandler)`: the generated `PMPI_x` checks `errhandler` first).
pub fn session_get_errhandler(
    call: &'static str,
    session: MPI_Session,
    o: &mut MPI_Errhandler,
) -> R<()> {
    session_id(call, session)?;
    let h = sessions()
        .get(session)
        .map(|e| e.errh)
        .unwrap_or(MPI_ERRORS_ARE_FATAL);
    if let Some(e) = state().errhandlers.get_mut(h) {
        e.refs += 1;
    }
    *o = h;
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_call_errhandler(
    session: MPI_Session,
    errorcode: c_int,
) -> c_int {
    const CALL: &str = "MPI_Session_call_errhandler";
    let errh = sessions().get(session).map(|e| e.errh);
    match errh {
        None => ffi_session(CALL, MPI_SESSION_NULL, None, || {
            Err(session_error(
                CALL,
                "session",
                format!("{session:#x} is not a valid session"),
            ))
        }),
        Some(errh) => {
            raise_with(
                errh,
                session,
                errorcode,
                &format!("{CALL}: error code {errorcode} raised by the program"),
            );
            MPI_SUCCESS
        }
    }
}

// ----- buffered-send buffers (MPI-4.1) ---------------------------------------------------

fn attach(call: &'static str, session: MPI_Session, buffer: *mut c_void, size: i64) -> c_int {
    ffi_session(call, session, None, || {
        let id = session_id(call, session)?;
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
        pt2pt::session_buffer_attach(id, buffer as *mut u8, size)?;
        Ok(())
    })
}

fn detach(call: &'static str, session: MPI_Session, a: &mut *mut c_void) -> R<usize> {
    let id = session_id(call, session)?;
    let (p, n) = pt2pt::session_buffer_detach(id).map_err(|e| {
        MpiError::new(
            e.class,
            e.message.replace("MPI_Session_detach_buffer", call),
        )
    })?;
    *a = p as *mut c_void;
    Ok(n)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_attach_buffer(
    session: MPI_Session,
    buffer: *mut c_void,
    size: c_int,
) -> c_int {
    attach("MPI_Session_attach_buffer", session, buffer, size as i64)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_attach_buffer_c(
    session: MPI_Session,
    buffer: *mut c_void,
    size: MPI_Count,
) -> c_int {
    attach("MPI_Session_attach_buffer_c", session, buffer, size)
}

/// MPI_Session_detach_buffer (abi.txt `outaddr(buffer_addr) out(size)`: the generated
/// `PMPI_x` checks them first, so a NULL one detaches nothing).
pub fn session_detach_buffer(
    call: &'static str,
    session: MPI_Session,
    a: &mut *mut c_void,
    size: &mut c_int,
) -> R<()> {
    *size = detach(call, session, a)?.min(c_int::MAX as usize) as c_int;
    Ok(())
}

/// MPI_Session_detach_buffer_c (as MPI_Session_detach_buffer).
pub fn session_detach_buffer_c(
    call: &'static str,
    session: MPI_Session,
    a: &mut *mut c_void,
    size: &mut MPI_Count,
) -> R<()> {
    *size = detach(call, session, a)?.min(i64::MAX as usize) as MPI_Count;
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_flush_buffer(session: MPI_Session) -> c_int {
    const CALL: &str = "MPI_Session_flush_buffer";
    ffi_session(CALL, session, None, || {
        let id = session_id(CALL, session)?;
        Ok(pt2pt::session_buffer_flush(id)?)
    })
}

/// MPI_Session_iflush_buffer (abi.txt `out(request)`: the generated `PMPI_x` checks `request` first).
pub fn session_iflush_buffer(
    call: &'static str,
    session: MPI_Session,
    o: &mut MPI_Request,
) -> R<()> {
    let id = session_id(call, session)?;
    let r = pt2pt::session_buffer_iflush(id)?;
    *o = crate::conv::new_request(r, NO_COMM, None);
    Ok(())
}

// ----- Fortran and standard-ABI integers ---------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_c2f(session: MPI_Session) -> c_int {
    c2f_predefined_or(&sessions(), session)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_f2c(session: c_int) -> MPI_Session {
    f2c_predefined_or(&sessions(), session)
}
