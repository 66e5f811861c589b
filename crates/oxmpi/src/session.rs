//! MPI-4 sessions: a way into MPI without `MPI_Init`'s world, for libraries that
//! must not depend on whether (or when) the program initialized MPI.
//!
//! A [`Session`] offers process sets (`mpi://WORLD`, every process of the job;
//! `mpi://SELF`, this one); a [`SessionGroup`] of a process set makes a
//! communicator (`MPI_Comm_create_from_group`, collective over the group's
//! members, who name the same string tag). Sessions work before
//! [`initialize`](crate::initialize), beside a [`Universe`](crate::Universe) and
//! after it is dropped; several may be open at once. Groups of one session never
//! make communicators of another: that is an error of class
//! [`ErrorClass::Session`].
//!
//! ```
//! use oxmpi::traits::*;
//! use oxmpi::session::Session;
//!
//! let session = Session::init();
//! assert!(session.pset_names().contains(&"mpi://WORLD".to_string()));
//! let group = session.group_from_pset("mpi://WORLD").unwrap();
//! let comm = session.communicator_from_group(&group, "org.example.lib").unwrap();
//! assert_eq!(comm.size() as usize, session.pset_size("mpi://WORLD").unwrap());
//! let mut sum = 0;
//! comm.all_reduce_into(&1i32, &mut sum, oxmpi::collective::SystemOperation::sum());
//! assert_eq!(sum, comm.size());
//! drop(comm);
//! session.finalize().unwrap();
//! ```
#![deny(unsafe_code)]

use std::sync::atomic::{AtomicU32, Ordering};

use oxmpi_core::comm::create::create_group;
use oxmpi_core::error::{ErrorClass, MpiError};
use oxmpi_core::group::Group as CoreGroup;
use oxmpi_core::runtime;

use crate::environment::Threading;
use crate::error::{OrFatal, Result};
use crate::topology::{SimpleCommunicator, UserGroup};

static NEXT_ID: AtomicU32 = AtomicU32::new(1);

/// An MPI-4 session (`MPI_Session`). Dropping it finalizes it
/// (`MPI_Session_finalize`); [`finalize`](Session::finalize) reports errors.
#[derive(Debug)]
pub struct Session {
    id: u32,
    threading: Threading,
    open: bool,
}

/// A group made from one of a session's process sets
/// (`MPI_Group_from_session_pset`); it makes communicators with that session only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionGroup {
    session: u32,
    group: UserGroup,
}

impl SessionGroup {
    /// The group's members (a plain group: set operations, ranks, comparisons).
    pub fn group(&self) -> &UserGroup {
        &self.group
    }
}

impl Session {
    /// Starts a session with `Threading::Single` (`MPI_Session_init`); an error
    /// is fatal, as for the rsmpi-named methods ([`try_init`](Session::try_init)
    /// reports it).
    pub fn init() -> Session {
        Session::try_init(Threading::Single).or_fatal()
    }

    /// Starts a session asking for a thread support level (the `thread_level`
    /// info key); reports errors, e.g. when MPI already left the job in this
    /// process.
    pub fn try_init(threading: impl Into<Threading>) -> Result<Session> {
        let provided: Threading = runtime::session_init(threading.into().into())?.into();
        Ok(Session {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            threading: provided,
            open: true,
        })
    }

    /// The thread support level this session provides.
    pub fn threading(&self) -> Threading {
        self.threading
    }

    /// The names of the process sets (`MPI_Session_get_num_psets`,
    /// `MPI_Session_get_nth_pset`).
    /// The built-in ones come first; when the process manager cannot be
    /// asked for more, only they are listed.
    pub fn pset_names(&self) -> Vec<String> {
        runtime::pset_names("MPI_Session_get_nth_pset")
            .unwrap_or_else(|_| runtime::PSET_NAMES.iter().map(|s| s.to_string()).collect())
    }

    /// The number of processes in process set `name` (its `mpi_size`,
    /// `MPI_Session_get_pset_info`).
    pub fn pset_size(&self, name: &str) -> Result<usize> {
        Ok(members("MPI_Session_get_pset_info", name)?.len())
    }

    /// The group of process set `name` (`MPI_Group_from_session_pset`).
    pub fn group_from_pset(&self, name: &str) -> Result<SessionGroup> {
        let m = members("MPI_Group_from_session_pset", name)?;
        Ok(SessionGroup {
            session: self.id,
            group: UserGroup(CoreGroup::from_world_ranks(m)),
        })
    }

    /// A communicator of `group`'s members (`MPI_Comm_create_from_group`):
    /// collective over them, each naming the same `tag`. Errors: a group of another session ([`ErrorClass::Session`]), a process
    /// that is not a member ([`ErrorClass::Group`]).
    pub fn communicator_from_group(
        &self,
        group: &SessionGroup,
        tag: &str,
    ) -> Result<SimpleCommunicator> {
        const CALL: &str = "MPI_Comm_create_from_group";
        if group.session != self.id {
            return Err(MpiError::arg(
                ErrorClass::Session,
                CALL,
                "group",
                "comes from another session: objects of different sessions cannot be combined",
            )
            .into());
        }
        let e = runtime::engine()?;
        let w = e.world();
        let g = &group.group.0;
        if g.rank_of_world(e.rank()).is_none() {
            return Err(MpiError::arg(
                ErrorClass::Group,
                CALL,
                "group",
                "the calling process is not a member of the group",
            )
            .into());
        }
        let c = create_group(w, g.world_ranks(), tag_of(tag))?.ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Group,
                CALL,
                "group",
                "the calling process is not a member of the group",
            )
        })?;
        Ok(SimpleCommunicator::from_core(c))
    }

    /// Finalizes the session (`MPI_Session_finalize`), reporting errors. The
    /// communicators made from it must be dropped first. MPI leaves the job with
    /// the last of the sessions and the [`Universe`](crate::Universe).
    pub fn finalize(mut self) -> Result<()> {
        self.open = false;
        Ok(runtime::session_finalize()?)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.open {
            self.open = false;
            runtime::session_finalize().or_fatal();
        }
    }
}

fn members(call: &str, name: &str) -> Result<Vec<u32>> {
    match runtime::pset_members(name)? {
        Some(m) => Ok(m),
        None => Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            "pset_name",
            format!(
                "'{name}' is not a process set (there are {})",
                runtime::pset_names(call)?.join(", ")
            ),
        )
        .into()),
    }
}

/// A string tag as an MPI tag (the C library's hash: FNV-1a folded into
/// `0..=TAG_UB`), so Rust and C processes naming the same string agree.
fn tag_of(s: &str) -> i32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h % (oxmpi_core::TAG_UB as u64 + 1)) as i32
}
