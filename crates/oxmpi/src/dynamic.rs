//! Processes at run time: rsmpi's spawn vocabulary ([`Root::spawn`](crate::traits::Root::spawn),
//! [`Root::spawn_multiple`](crate::traits::Root::spawn_multiple), `parent()` on a
//! communicator, [`MpiError`]) and client/server connections ([`Port`], [`connect`],
//! [`InterCommunicator::disconnect`]).
//!
//! ```no_run
//! use oxmpi::traits::*;
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! // Server side: open a port, tell the client its name, accept.
//! let port = oxmpi::dynamic::Port::open();
//! println!("{}", port.name());
//! let client = port.accept(&world, 0);
//! client.disconnect();
//! ```
#![deny(unsafe_code)]

use std::process::Command;

use oxmpi_core::comm::dynamic as core;

use crate::error::{OrFatal, Result};
use crate::topology::{Communicator, InterCommunicator, Rank};

/// The error of rsmpi's spawn calls (rsmpi's `mpi::MpiError`, so its examples'
/// `fn main() -> Result<(), mpi::MpiError>` build unchanged). Other MPI errors are
/// fatal, as everywhere in the rsmpi-named API.
#[derive(Debug)]
pub enum MpiError {
    /// Fewer processes were started than asked for: (failed, asked).
    Spawn(Rank, Rank),
    /// A program name or argument held an interior NUL byte.
    StringNul(std::ffi::NulError),
}

impl std::fmt::Display for MpiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MpiError::Spawn(failed, asked) => {
                write!(f, "Failed to spawn {failed} of {asked} processes")
            }
            MpiError::StringNul(_) => write!(f, "An interior 0 byte was found in string"),
        }
    }
}

impl std::error::Error for MpiError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MpiError::StringNul(e) => Some(e),
            MpiError::Spawn(..) => None,
        }
    }
}

impl From<std::ffi::NulError> for MpiError {
    fn from(e: std::ffi::NulError) -> MpiError {
        MpiError::StringNul(e)
    }
}

/// A spawn command from a `std::process::Command`: program, arguments, and the
/// working directory as the `wdir` info key. Environment variables cannot travel
/// (MPI has no way to pass them): a command with any is refused.
fn command_of(c: &Command, maxprocs: Rank) -> std::result::Result<core::SpawnCommand, MpiError> {
    let text = |s: &std::ffi::OsStr| -> std::result::Result<String, MpiError> {
        let s = s.to_string_lossy().into_owned();
        std::ffi::CString::new(s.as_bytes())?;
        Ok(s)
    };
    assert_eq!(
        c.get_envs().len(),
        0,
        "spawn: environment variables cannot be passed to spawned processes"
    );
    assert!(
        maxprocs > 0,
        "spawn: maxprocs must be positive, not {maxprocs}"
    );
    let mut info = Vec::new();
    if let Some(d) = c.get_current_dir() {
        info.push(("wdir".to_string(), text(d.as_os_str())?));
    }
    Ok(core::SpawnCommand {
        execname: text(c.get_program())?,
        args: c
            .get_args()
            .map(text)
            .collect::<std::result::Result<_, _>>()?,
        nprocs: maxprocs as u32,
        info,
    })
}

/// Spawns `commands` from `comm`'s process `root` (collective over `comm`).
pub(crate) fn spawn<C: Communicator + ?Sized>(
    comm: &C,
    root: Rank,
    commands: &[(&Command, Rank)],
) -> std::result::Result<InterCommunicator, MpiError> {
    let is_root = comm.core_comm().rank() == root;
    let mut asked = 0;
    let mut cmds = Vec::new();
    if is_root {
        for &(c, n) in commands {
            cmds.push(command_of(c, n)?);
            asked += n;
        }
    }
    let call = if commands.len() == 1 {
        "MPI_Comm_spawn"
    } else {
        "MPI_Comm_spawn_multiple"
    };
    let (inter, codes) = core::spawn(call, Ok(cmds), root, comm.core_comm()).or_fatal();
    let failed = codes.iter().filter(|&&c| c != 0).count() as Rank;
    if failed > 0 {
        return Err(MpiError::Spawn(
            failed,
            if is_root { asked } else { codes.len() as Rank },
        ));
    }
    Ok(InterCommunicator::from_core(inter))
}

/// The intercommunicator to this job's parents, if it was spawned.
pub(crate) fn parent() -> Option<InterCommunicator> {
    core::parent().map(InterCommunicator::from_core)
}

/// An open port (`MPI_Open_port`): its [`name`](Port::name) lets another job
/// [`connect`] to this one's [`accept`](Port::accept). Closed when dropped.
#[derive(Debug)]
pub struct Port {
    name: String,
}

impl Port {
    /// Opens a port (`MPI_Open_port`).
    pub fn open() -> Port {
        Port::try_open().or_fatal()
    }

    /// [`open`](Port::open), reporting errors.
    pub fn try_open() -> Result<Port> {
        core::open_port().map(|name| Port { name })
    }

    /// The port name to give to the connecting side (it carries the secret that
    /// side must prove; treat it as a credential).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Accepts one connecting group (`MPI_Comm_accept`); collective over `comm`,
    /// whose process `root` owns this port.
    pub fn accept<C: Communicator + ?Sized>(&self, comm: &C, root: Rank) -> InterCommunicator {
        self.try_accept(comm, root).or_fatal()
    }

    /// [`accept`](Port::accept), reporting errors.
    pub fn try_accept<C: Communicator + ?Sized>(
        &self,
        comm: &C,
        root: Rank,
    ) -> Result<InterCommunicator> {
        core::accept(&self.name, root, comm.core_comm()).map(InterCommunicator::from_core)
    }
}

impl Drop for Port {
    fn drop(&mut self) {
        let _ = core::close_port(&self.name);
    }
}

/// Connects `comm`'s group to the group accepting on `port_name`
/// (`MPI_Comm_connect`; the name matters at `root` only). Waits up to 60 seconds
/// for an acceptor. A wrong or forged port name is an error of class
/// `ErrorClass::Port`.
pub fn connect<C: Communicator + ?Sized>(
    port_name: &str,
    comm: &C,
    root: Rank,
) -> Result<InterCommunicator> {
    core::connect(
        port_name,
        root,
        comm.core_comm(),
        std::time::Duration::from_secs(60),
    )
    .map(InterCommunicator::from_core)
}

impl<S: crate::environment::threading::ThreadSafety> InterCommunicator<S> {
    /// Waits for the traffic with the other group to complete and closes the
    /// connections to its processes (`MPI_Comm_disconnect`). Collective over both
    /// groups.
    pub fn disconnect(self) {
        self.try_disconnect().or_fatal()
    }

    /// [`disconnect`](InterCommunicator::disconnect), reporting errors.
    pub fn try_disconnect(self) -> Result<()> {
        core::disconnect(&self.0)?;
        if core::parent().is_some_and(|p| p.same(&self.0)) {
            core::forget_parent();
        }
        Ok(())
    }
}
