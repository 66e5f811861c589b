//! Session handles and which session each group and communicator belongs to
//! (the tables; the session functions are in `session.rs`).

use std::collections::HashMap;
use std::sync::atomic::AtomicU32;
use std::sync::{Mutex, MutexGuard};

use oxmpi_core::error::ErrorClass;
use oxmpi_core::runtime::ThreadLevel;
use oxmpi_core::{pt2pt, Comm};

use crate::abi::*;
use crate::conv::errors::{bad, Fail, R};
use crate::conv::handles::Table;
use crate::types::*;

/// Handle kind of sessions (distinct from the kinds in `handles`, files, windows).
pub(crate) const KIND_SESSION: u64 = 0x53;

pub(crate) struct SessionEntry {
    /// Never reused: names the session's buffer in the engine.
    pub id: u32,
    pub errh: MPI_Errhandler,
    pub thread_level: ThreadLevel,
}

pub(crate) static SESSIONS: Mutex<Table<SessionEntry>> = Mutex::new(Table::new(KIND_SESSION));
pub(crate) static NEXT_ID: AtomicU32 = AtomicU32::new(1);

/// Which session a group or communicator came from (absent: the World model).
#[derive(Default)]
pub(crate) struct Tags {
    pub groups: HashMap<MPI_Group, MPI_Session>,
    pub comms: HashMap<MPI_Comm, MPI_Session>,
}

pub(crate) static TAGS: Mutex<Option<Tags>> = Mutex::new(None);

pub(crate) fn sessions() -> MutexGuard<'static, Table<SessionEntry>> {
    SESSIONS.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn with_tags<T>(f: impl FnOnce(&mut Tags) -> T) -> T {
    let mut g = TAGS.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Tags::default))
}

pub(crate) fn session_error(call: &str, arg: &str, why: impl std::fmt::Display) -> Fail {
    bad(ErrorClass::Session, call, arg, why)
}

/// The session a handle names (its id), or an `MPI_ERR_SESSION` error.
pub(crate) fn session_id(call: &str, s: MPI_Session) -> R<u32> {
    if s == MPI_SESSION_NULL {
        return Err(session_error(call, "session", "MPI_SESSION_NULL"));
    }
    sessions().get(s).map(|e| e.id).ok_or_else(|| {
        session_error(
            call,
            "session",
            format!("{s:#x} is not a valid session (finalized, or never initialized)"),
        )
    })
}

/// The session a group was made from, if any.
pub fn group_session(g: MPI_Group) -> Option<MPI_Session> {
    with_tags(|t| t.groups.get(&g).copied())
}

/// The session a communicator was made from, if any.
pub fn comm_session(c: MPI_Comm) -> Option<MPI_Session> {
    with_tags(|t| t.comms.get(&c).copied())
}

/// Records that group `g` belongs to session `s` (nothing for the World model).
pub fn tag_group(g: MPI_Group, s: Option<MPI_Session>) {
    if let Some(s) = s {
        if g != MPI_GROUP_EMPTY && g != MPI_GROUP_NULL {
            with_tags(|t| t.groups.insert(g, s));
        }
    }
}

/// Group `g` was freed.
pub fn forget_group(g: MPI_Group) {
    with_tags(|t| t.groups.remove(&g));
}

/// Records that communicator `c` (engine communicator `cm`) belongs to session
/// `s`: its buffered sends may use the session's buffer.
pub fn tag_comm(c: MPI_Comm, cm: &Comm, s: Option<MPI_Session>) {
    let Some(s) = s else { return };
    with_tags(|t| t.comms.insert(c, s));
    if let Some(id) = sessions().get(s).map(|e| e.id) {
        let _ = pt2pt::session_comm(cm, Some(id));
    }
}

/// Communicator `c` (engine communicator `cm`) is being freed.
pub fn forget_comm(c: MPI_Comm, cm: &Comm) {
    if with_tags(|t| t.comms.remove(&c)).is_some() {
        let _ = pt2pt::session_comm(cm, None);
    }
}

/// The one session (or the World model, `None`) that all `groups` come from;
/// objects of different sessions are never combined (`MPI_ERR_SESSION`), nor
/// are those of a finalized session used.
pub fn common_session(call: &str, groups: &[(&str, MPI_Group)]) -> R<Option<MPI_Session>> {
    let mut first: Option<(&str, Option<MPI_Session>)> = None;
    for &(arg, g) in groups {
        if g == MPI_GROUP_EMPTY {
            continue;
        }
        let s = group_session(g);
        if let Some(s) = s {
            if sessions().get(s).is_none() {
                return Err(session_error(
                    call,
                    arg,
                    "the group's session was finalized",
                ));
            }
        }
        match first {
            None => first = Some((arg, s)),
            Some((a0, s0)) if s0 != s => {
                let name = |s: Option<MPI_Session>| match s {
                    Some(s) => format!("session {s:#x}"),
                    None => "the World model (MPI_Init)".to_string(),
                };
                return Err(session_error(
                    call,
                    arg,
                    format!("comes from {}, but `{a0}` from {}: objects of different sessions cannot be combined", name(s), name(s0)),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(first.and_then(|(_, s)| s))
}
