//! Communicators and the processes in them.
//!
//! ```
//! use oxmpi::traits::*;
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! let next = world.process_at_rank((world.rank() + 1) % world.size());
//! assert_eq!(world.this_process().rank(), world.rank());
//! # let _ = next;
//! ```

use oxmpi_core::Comm;

use crate::error::fatal;

/// Identifies a process within a communicator.
pub type Rank = i32;

/// The topology traits, re-exported by [`crate::traits`].
pub mod traits {
    pub use super::{AsCommunicator, Communicator};
}

/// How two communicators relate (`MPI_Comm_compare`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommunicatorRelation {
    /// The same communicator.
    Identical,
    /// Same group, same ranks, different context.
    Congruent,
    /// Same processes, different ranks.
    Similar,
    /// Anything else.
    Unequal,
}

/// A communicator with no topology attached: `MPI_COMM_WORLD`, `MPI_COMM_SELF`, ...
#[derive(Clone)]
#[repr(transparent)]
pub struct SimpleCommunicator(Comm);

impl std::fmt::Debug for SimpleCommunicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimpleCommunicator")
            .field("context", &self.0.context())
            .field("rank", &self.0.rank())
            .field("size", &self.0.size())
            .finish()
    }
}

impl SimpleCommunicator {
    /// The world communicator (`MPI_COMM_WORLD`). MPI must be initialized.
    pub fn world() -> SimpleCommunicator {
        match oxmpi_core::runtime::engine() {
            Ok(e) => SimpleCommunicator(e.world().clone()),
            Err(e) => fatal(e),
        }
    }

    /// The communicator of this process alone (`MPI_COMM_SELF`). MPI must be initialized.
    pub fn self_comm() -> SimpleCommunicator {
        match oxmpi_core::runtime::engine() {
            Ok(e) => SimpleCommunicator(e.self_comm().clone()),
            Err(e) => fatal(e),
        }
    }

    fn from_core_ref(c: &Comm) -> &SimpleCommunicator {
        // SAFETY: SimpleCommunicator is #[repr(transparent)] over Comm, so the two
        // references have the same layout and validity.
        unsafe { &*(c as *const Comm as *const SimpleCommunicator) }
    }

    /// The engine's communicator.
    pub fn as_core(&self) -> &Comm {
        &self.0
    }
}

/// Something that has a communicator (processes have theirs).
pub trait AsCommunicator {
    /// The communicator's type.
    type Out: Communicator;
    /// The communicator.
    fn as_communicator(&self) -> &Self::Out;
}

/// What all communicators can do.
pub trait Communicator {
    /// The engine's communicator behind this one.
    #[doc(hidden)]
    fn core_comm(&self) -> &Comm;

    /// Number of processes in the communicator (`MPI_Comm_size`).
    fn size(&self) -> Rank {
        self.core_comm().size()
    }

    /// The rank of the calling process (`MPI_Comm_rank`).
    fn rank(&self) -> Rank {
        self.core_comm().rank()
    }

    /// The process of rank `r`. The rank is checked when the process is used: a rank
    /// outside `0..size()` makes operations fail with [`ErrorClass::Rank`](crate::ErrorClass::Rank).
    fn process_at_rank(&self, r: Rank) -> Process<'_> {
        Process {
            comm: self.core_comm(),
            rank: r,
        }
    }

    /// The `MPI_PROC_NULL` process: sends to it and receives from it do nothing.
    fn null_process(&self) -> Process<'_> {
        Process {
            comm: self.core_comm(),
            rank: oxmpi_core::PROC_NULL,
        }
    }

    /// Any process of the communicator, as the source of a receive (`MPI_ANY_SOURCE`).
    fn any_process(&self) -> AnyProcess<'_> {
        AnyProcess {
            comm: self.core_comm(),
        }
    }

    /// The calling process.
    fn this_process(&self) -> Process<'_> {
        self.process_at_rank(self.rank())
    }

    /// Compares two communicators (`MPI_Comm_compare`).
    fn compare(&self, other: &dyn Communicator) -> CommunicatorRelation {
        let (a, b) = (self.core_comm(), other.core_comm());
        if a.same(b) {
            CommunicatorRelation::Identical
        } else if a.group() == b.group() {
            CommunicatorRelation::Congruent
        } else {
            let (mut x, mut y) = (a.group().to_vec(), b.group().to_vec());
            x.sort_unstable();
            y.sort_unstable();
            if x == y {
                CommunicatorRelation::Similar
            } else {
                CommunicatorRelation::Unequal
            }
        }
    }

    /// Ends the whole job with `errorcode` (`MPI_Abort`).
    fn abort(&self, errorcode: i32) -> ! {
        oxmpi_core::runtime::abort(errorcode, "")
    }
}

impl Communicator for SimpleCommunicator {
    fn core_comm(&self) -> &Comm {
        &self.0
    }
}

impl AsCommunicator for SimpleCommunicator {
    type Out = SimpleCommunicator;
    fn as_communicator(&self) -> &SimpleCommunicator {
        self
    }
}

/// A process identified by its rank in a communicator: a [`Source`](crate::point_to_point::Source)
/// and a [`Destination`](crate::point_to_point::Destination).
#[derive(Clone, Copy)]
pub struct Process<'a> {
    pub(crate) comm: &'a Comm,
    pub(crate) rank: Rank,
}

impl<'a> Process<'a> {
    /// The process's rank in its communicator.
    pub fn rank(&self) -> Rank {
        self.rank
    }

    /// Whether this is the calling process.
    pub fn is_self(&self) -> bool {
        self.rank == self.comm.rank()
    }
}

impl std::fmt::Debug for Process<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Process").field("rank", &self.rank).finish()
    }
}

impl AsCommunicator for Process<'_> {
    type Out = SimpleCommunicator;
    fn as_communicator(&self) -> &SimpleCommunicator {
        SimpleCommunicator::from_core_ref(self.comm)
    }
}

/// Any process of a communicator, as the source of a receive (`MPI_ANY_SOURCE`).
#[derive(Clone, Copy)]
pub struct AnyProcess<'a> {
    pub(crate) comm: &'a Comm,
}

impl std::fmt::Debug for AnyProcess<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AnyProcess")
    }
}

impl AsCommunicator for AnyProcess<'_> {
    type Out = SimpleCommunicator;
    fn as_communicator(&self) -> &SimpleCommunicator {
        SimpleCommunicator::from_core_ref(self.comm)
    }
}
