//! Communicators as the engine sees them: a context id, the caller's rank and the
//! map from communicator rank to world rank; their construction (dup, split,
//! create, split_type) in [`create`], context-id agreement in [`context`].

pub mod context;
pub mod create;
pub mod dynamic;
pub mod inter;
pub mod topology;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// Context ids of the predefined communicators. Every communicator owns two
/// consecutive ids: `ctx` for point-to-point and `ctx + 1` for collectives, so a
/// collective's internal messages can never match a user's receive.
pub const WORLD_CONTEXT: u32 = 0;
pub const SELF_CONTEXT: u32 = 2;
/// The first context id free for communicators created at run time.
pub const FIRST_DYNAMIC_CONTEXT: u32 = 4;

#[derive(Debug)]
pub struct CommInner {
    /// Context id for point-to-point traffic; `context + 1` carries collectives.
    pub context: u32,
    /// The caller's rank in the (local) group.
    pub rank: i32,
    /// World rank of each member of the local group, by communicator rank.
    pub group: Arc<[u32]>,
    /// For an intercommunicator: world rank of each member of the remote group.
    /// Point-to-point destinations index this group.
    pub remote_group: Option<Arc<[u32]>>,
    /// For an intercommunicator: an intracommunicator over the local group, for
    /// the collective steps inside one group.
    pub local_comm: Option<Comm>,
    /// Collectives started on this communicator so far. Every rank starts
    /// collectives in the same order (MPI requires it), so the count is the same
    /// everywhere and serves as the tag that keeps concurrent ones apart.
    pub coll_seq: AtomicU32,
    /// Blocking collectives called on this communicator (diagnosis numbers them).
    pub diag_seq: AtomicU32,
    /// The sequence of blocking collectives, counted apart from `coll_seq`
    /// (see [`Comm::next_blocking_coll_tag`]).
    pub blocking_seq: AtomicU32,
    /// Bits OR'ed into every collective tag: 0, except for the temporary
    /// communicators of MPI_Comm_create_group, which borrow their parent's
    /// collective context and keep apart from its collectives by bit 30.
    pub tag_base: i32,
    /// For the temporary communicators of MPI_Comm_create_group: the rank
    /// each member has in the parent, used as the source of its collective
    /// messages on the parent's context, so messages of two overlapping
    /// groups (whose own rank numbers clash) never match each other.
    pub wire_ranks: Option<Arc<[i32]>>,
    /// Whether this communicator allocated `context` (and gives it back when
    /// the last handle goes). The predefined ones did not.
    pub owns_context: bool,
    /// MPI_Comm_set_name.
    pub name: Mutex<String>,
    /// Cached attributes (MPI_Comm_set_attr).
    pub attrs: crate::attr::Attributes,
    /// The process topology attached by MPI_Cart_create & co.
    pub topo: Option<Arc<crate::topo::Topology>>,
    /// The shared-memory area of blocking collectives (made on first use,
    /// unmapped when the communicator goes).
    pub coll_shm: crate::coll::shm::CommShm,
}

/// MPI_Comm_free's attribute part: runs the delete callbacks. The context id is
/// given back when the last handle is dropped.
pub fn free_attributes(comm: &Comm) -> crate::error::Result<()> {
    comm.0.attrs.clear("MPI_Comm_free")
}

impl Drop for CommInner {
    fn drop(&mut self) {
        if self.owns_context {
            crate::diag::unregister(self.context);
        }
        if self.owns_context {
            context::release(self.context);
        }
    }
}

/// A communicator handle of the engine; cheap to clone.
#[derive(Clone, Debug)]
pub struct Comm(pub Arc<CommInner>);

impl Comm {
    /// Builds a communicator handle (used by the runtime for the predefined
    /// communicators and by communicator constructors once ids are agreed).
    pub fn from_parts(
        context: u32,
        rank: i32,
        group: Arc<[u32]>,
        remote_group: Option<Arc<[u32]>>,
    ) -> Comm {
        Comm::build(context, false, rank, group, remote_group, String::new())
    }

    pub(crate) fn build_inter(
        context: u32,
        rank: i32,
        group: Arc<[u32]>,
        remote: Arc<[u32]>,
        local_comm: Comm,
    ) -> Comm {
        let c = Comm(Arc::new(CommInner {
            context,
            rank,
            group,
            remote_group: Some(remote),
            local_comm: Some(local_comm),
            coll_seq: AtomicU32::new(0),
            diag_seq: AtomicU32::new(0),
            blocking_seq: AtomicU32::new(0),
            tag_base: 0,
            wire_ranks: None,
            owns_context: true,
            name: Mutex::new(String::new()),
            attrs: crate::attr::Attributes::new(crate::attr::ObjectKind::Comm),
            topo: None,
            coll_shm: Default::default(),
        }));
        crate::diag::register(&c.0);
        c
    }

    pub(crate) fn build(
        context: u32,
        owns_context: bool,
        rank: i32,
        group: Arc<[u32]>,
        remote_group: Option<Arc<[u32]>>,
        name: String,
    ) -> Comm {
        let c = Comm(Arc::new(CommInner {
            context,
            rank,
            group,
            remote_group,
            local_comm: None,
            coll_seq: AtomicU32::new(0),
            diag_seq: AtomicU32::new(0),
            blocking_seq: AtomicU32::new(0),
            tag_base: 0,
            wire_ranks: None,
            owns_context,
            name: Mutex::new(name),
            attrs: crate::attr::Attributes::new(crate::attr::ObjectKind::Comm),
            topo: None,
            coll_shm: Default::default(),
        }));
        crate::diag::register(&c.0);
        c
    }

    /// The attached topology, if any (MPI_Topo_test).
    pub fn topology(&self) -> Option<&crate::topo::Topology> {
        self.0.topo.as_deref()
    }

    pub fn attrs(&self) -> &crate::attr::Attributes {
        &self.0.attrs
    }

    /// The value of a predefined attribute (MPI_TAG_UB, ...) as an integer; the
    /// C layer hands out pointers to stable copies. `None` for user keyvals.
    pub fn predefined_attr(&self, keyval: i32) -> Option<i64> {
        use crate::attr;
        let e = crate::runtime::engine().ok()?;
        Some(match keyval {
            attr::TAG_UB => crate::runtime::TAG_UB as i64,
            // No rank is the "host" (MPI_PROC_NULL); every rank can do I/O.
            attr::HOST => crate::request::PROC_NULL as i64,
            attr::IO => crate::matching::ANY_SOURCE as i64,
            // Clocks are per host (CLOCK_MONOTONIC): global only on one host.
            attr::WTIME_IS_GLOBAL => e.host_of().iter().all(|&h| h == 0) as i64,
            attr::APPNUM => e.appnum() as i64,
            attr::UNIVERSE_SIZE => e.universe_size() as i64,
            _ => return None,
        })
    }

    /// MPI_Comm_get_name.
    pub fn name(&self) -> String {
        self.0
            .name
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// MPI_Comm_set_name.
    pub fn set_name(&self, name: &str) {
        *self.0.name.lock().unwrap_or_else(|p| p.into_inner()) = name.to_string();
        crate::diag::rename(self.0.context, name);
    }

    pub fn rank(&self) -> i32 {
        self.0.rank
    }

    /// Size of the local group.
    pub fn size(&self) -> i32 {
        self.0.group.len() as i32
    }

    pub fn is_inter(&self) -> bool {
        self.0.remote_group.is_some()
    }

    /// Size of the group that point-to-point ranks name (the remote group for an
    /// intercommunicator).
    pub fn peer_group_size(&self) -> i32 {
        self.peer_group().len() as i32
    }

    pub fn peer_group(&self) -> &[u32] {
        self.0.remote_group.as_deref().unwrap_or(&self.0.group)
    }

    pub fn group(&self) -> &[u32] {
        &self.0.group
    }

    pub fn context(&self) -> u32 {
        self.0.context
    }

    pub fn coll_context(&self) -> u32 {
        self.0.context + 1
    }

    /// The source rank a collective message from member `rank` carries (its
    /// rank, or its parent's rank for create_group's temporary communicators).
    pub fn wire_rank(&self, rank: i32) -> i32 {
        match &self.0.wire_ranks {
            Some(w) if rank >= 0 => w.get(rank as usize).copied().unwrap_or(rank),
            _ => rank,
        }
    }

    /// The tag of the next non-blocking (or persistent) collective on this
    /// communicator, or of a context agreement.
    pub fn next_coll_tag(&self) -> i32 {
        const HALF: u32 = 1 << (crate::coll::sched::SEQ_BITS - 1);
        self.0.tag_base | (self.0.coll_seq.fetch_add(1, Ordering::Relaxed) & (HALF - 1)) as i32
    }

    /// The tag of the next blocking collective. Blocking and non-blocking
    /// collectives are counted apart (the sequence's top bit tells them apart),
    /// so a rank that enters a blocking collective while its non-blocking one is
    /// pending meets the other ranks' blocking call even when they start that
    /// non-blocking collective only afterwards (MPICH and Open MPI keep them
    /// apart too, and programs rely on it: mpi4py's `Iagree` test does).
    pub fn next_blocking_coll_tag(&self) -> i32 {
        const HALF: u32 = 1 << (crate::coll::sched::SEQ_BITS - 1);
        self.0.tag_base
            | (HALF | (self.0.blocking_seq.fetch_add(1, Ordering::Relaxed) & (HALF - 1))) as i32
    }

    /// Whether two handles name the same communicator object.
    pub fn same(&self, other: &Comm) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
