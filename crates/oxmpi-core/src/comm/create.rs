//! Making communicators: MPI_Comm_dup, MPI_Comm_split, MPI_Comm_split_type,
//! MPI_Comm_create, and comparing them (MPI_Comm_compare).
//!
//! Every constructor is collective over the parent: the ranks first agree on a
//! context id (see [`super::context`]), then each builds its own handle. All
//! constructors work on intracommunicators; intercommunicators come with their
//! own constructors.

use std::sync::Arc;

use super::{context, Comm};
use crate::buf::{RecvBuf, SendBuf};
use crate::error::{ErrorClass, MpiError, Result};
use crate::request::Request;

/// The colour the ranks of a split exchange for "no communicator" (the C
/// library's `MPI_UNDEFINED`, which the engine takes as `None`): never a colour,
/// colours are non-negative. The engine's own value, not the ABI's.
pub(crate) const NO_COLOR: i32 = -1;

/// Result of [`compare`] (`MPI_Comm_compare`): the groups' comparison, with
/// `Congruent` for the same group in another context.
pub use crate::group::Comparison;

fn require_intra(call: &str, comm: &Comm) -> Result<()> {
    if comm.is_inter() {
        return Err(MpiError::unsupported(
            call,
            "this constructor on an intercommunicator",
        ));
    }
    Ok(())
}

/// MPI_Comm_dup: same group, new context. (Attributes are copied by the layer
/// that keeps them.)
pub fn dup(comm: &Comm) -> Result<Comm> {
    if comm.is_inter() {
        return super::inter::intercomm_dup(comm);
    }
    let attrs = comm.0.attrs.duplicate("MPI_Comm_dup")?;
    let ctx = context::agree_for(comm, "MPI_Comm_dup", true)?;
    let mut new = Comm::build(
        ctx,
        true,
        comm.rank(),
        comm.0.group.clone(),
        None,
        String::new(),
    );
    if let Some(inner) = Arc::get_mut(&mut new.0) {
        inner.attrs = attrs;
        inner.topo = comm.0.topo.clone();
    }
    Ok(new)
}

/// The communicator of an [`idup`], there once its request has completed.
#[derive(Clone, Debug, Default)]
pub struct PendingComm(Arc<std::sync::Mutex<Option<Comm>>>);

impl PendingComm {
    /// The new communicator, once (`None` before the request completed, and
    /// after it was taken).
    pub fn take(&self) -> Option<Comm> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// MPI_Comm_idup: starts duplicating `comm` and returns at once. The context
/// id is agreed by a state machine the progress engine advances (see
/// [`context`]), so ranks may communicate on `comm` and elsewhere before they
/// wait; the duplicate is in the [`PendingComm`] when the request completes.
/// Attributes are copied (copy callbacks run) at the call. On an
/// intercommunicator the ids are agreed over both groups the same way (see
/// [`super::inter::intercomm_idup`]).
pub fn idup(comm: &Comm) -> Result<(Request, PendingComm)> {
    let pending = PendingComm::default();
    if comm.is_inter() {
        let r = super::inter::intercomm_idup(comm, pending.0.clone())?;
        return Ok((r, pending));
    }
    let attrs = comm.0.attrs.duplicate("MPI_Comm_idup")?;
    let (rank, group, topo) = (comm.rank(), comm.0.group.clone(), comm.0.topo.clone());
    let slot = pending.clone();
    let r = context::start_agreement(
        comm,
        "MPI_Comm_idup",
        true,
        Box::new(move |ctx| {
            let mut new = Comm::build(ctx, true, rank, group, None, String::new());
            if let Some(inner) = Arc::get_mut(&mut new.0) {
                inner.attrs = attrs;
                inner.topo = topo;
            }
            *slot.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(new);
        }),
    )?;
    Ok((r, pending))
}

/// MPI_Comm_split: ranks with the same `color` form a communicator, ordered by
/// `key` then by their rank in `comm`; no colour (`MPI_UNDEFINED`) gets `None`.
pub fn split(comm: &Comm, color: Option<i32>, key: i32) -> Result<Option<Comm>> {
    split_named(comm, color, key, "MPI_Comm_split")
}

fn split_named(
    comm: &Comm,
    color: Option<i32>,
    key: i32,
    call: &'static str,
) -> Result<Option<Comm>> {
    if let Some(c) = color.filter(|&c| c < 0) {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            "color",
            format!("{c} is negative and not MPI_UNDEFINED"),
        ));
    }
    if comm.is_inter() {
        return super::inter::intercomm_split(comm, color, key, call);
    }
    let n = comm.size() as usize;
    if n <= COMBINED_SPLIT_MAX {
        return split_combined(comm, color, key, call);
    }
    let mine = [color.unwrap_or(NO_COLOR), key];
    let mut all = vec![0i32; 2 * n];
    crate::coll::api_move::allgather(
        Some(SendBuf::slice(&mine)),
        RecvBuf::slice(&mut all),
        2,
        comm,
    )?;
    let ctx = context::agree_for(comm, call, color.is_some())?;
    let Some(color) = color else {
        return Ok(None);
    };
    let mut members: Vec<(i32, usize)> = (0..n)
        .filter(|&r| all[2 * r] == color)
        .map(|r| (all[2 * r + 1], r))
        .collect();
    members.sort();
    let group: Arc<[u32]> = members.iter().map(|&(_, r)| comm.0.group[r]).collect();
    let rank = members
        .iter()
        .position(|&(_, r)| r == comm.rank() as usize)
        .unwrap() as i32;
    Ok(Some(Comm::build(
        ctx,
        true,
        rank,
        group,
        None,
        String::new(),
    )))
}

/// Up to this many ranks, a split exchanges the colours and keys in the
/// first round of its context agreement (one allgather of ~270 bytes per
/// rank) instead of an allgather followed by the agreement's allreduce.
const COMBINED_SPLIT_MAX: usize = 64;

/// [`split_named`] on a small intracommunicator: the first round of the
/// context agreement is an allgather of each rank's colour and key with its
/// round words, ANDed here; a program creating communicators one at a time
/// (the common case) agrees in that one round (see [`context`]), so a split
/// costs one collective instead of two.
fn split_combined(
    comm: &Comm,
    color: Option<i32>,
    key: i32,
    call: &'static str,
) -> Result<Option<Comm>> {
    const W: usize = context::ROUND_WORDS;
    let n = comm.size() as usize;
    let mut all = vec![0u64; (1 + W) * n];
    let mut first = true;
    let seed = (
        comm.context(),
        comm.0
            .blocking_seq
            .load(std::sync::atomic::Ordering::Relaxed) as i32,
    );
    let ctx = context::agree_with(call, color.is_some(), seed, |buf| {
        if !first {
            let band = crate::op::Op::predefined(crate::op::PredefinedOp::Band);
            let buf = crate::buf::RecvBuf::slice(&mut buf[..W]);
            return crate::coll::allreduce::allreduce(None, buf, &band, comm);
        }
        first = false;
        let mut mine = [0u64; 1 + W];
        mine[0] = ((color.unwrap_or(NO_COLOR) as u32 as u64) << 32) | key as u32 as u64;
        mine[1..].copy_from_slice(buf);
        crate::coll::api_move::allgather(
            Some(SendBuf::slice(&mine)),
            RecvBuf::slice(&mut all),
            1 + W,
            comm,
        )?;
        for (w, b) in buf.iter_mut().enumerate() {
            *b = (0..n).fold(!0u64, |a, r| a & all[r * (1 + W) + 1 + w]);
        }
        Ok(())
    })?;
    let Some(color) = color else {
        return Ok(None);
    };
    let colour_of = |r: usize| (all[r * (1 + W)] >> 32) as u32 as i32;
    let key_of = |r: usize| all[r * (1 + W)] as u32 as i32;
    let mut members: Vec<(i32, usize)> = (0..n)
        .filter(|&r| colour_of(r) == color)
        .map(|r| (key_of(r), r))
        .collect();
    members.sort();
    let group: Arc<[u32]> = members.iter().map(|&(_, r)| comm.0.group[r]).collect();
    let rank = members
        .iter()
        .position(|&(_, r)| r == comm.rank() as usize)
        .unwrap() as i32;
    Ok(Some(Comm::build(
        ctx,
        true,
        rank,
        group,
        None,
        String::new(),
    )))
}

/// The split types of `MPI_Comm_split_type` (the C library gives the standard ABI's
/// values by [`name`](SplitType::name), from abi.txt; `MPI_UNDEFINED` is `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SplitType {
    /// `MPI_COMM_TYPE_SHARED`: the ranks that share memory (one host).
    Shared,
    /// `MPI_COMM_TYPE_HW_UNGUIDED`.
    HwUnguided,
    /// `MPI_COMM_TYPE_HW_GUIDED`.
    HwGuided,
    /// `MPI_COMM_TYPE_RESOURCE_GUIDED`.
    ResourceGuided,
}

impl SplitType {
    /// Every split type.
    pub const ALL: &'static [SplitType] = &[
        SplitType::Shared,
        SplitType::HwUnguided,
        SplitType::HwGuided,
        SplitType::ResourceGuided,
    ];

    /// The C name, e.g. `MPI_COMM_TYPE_SHARED`.
    pub const fn name(self) -> &'static str {
        match self {
            SplitType::Shared => "MPI_COMM_TYPE_SHARED",
            SplitType::HwUnguided => "MPI_COMM_TYPE_HW_UNGUIDED",
            SplitType::HwGuided => "MPI_COMM_TYPE_HW_GUIDED",
            SplitType::ResourceGuided => "MPI_COMM_TYPE_RESOURCE_GUIDED",
        }
    }
}

/// MPI_Comm_split_type: [`SplitType::Shared`] groups the ranks that share memory
/// (one host); `None` (`MPI_UNDEFINED`) gets `None`.
pub fn split_type(comm: &Comm, split_type: Option<SplitType>, key: i32) -> Result<Option<Comm>> {
    let call = "MPI_Comm_split_type";
    let color = match split_type {
        None => None,
        Some(SplitType::Shared) => {
            let e = crate::runtime::engine()?;
            Some(e.host_of()[comm.0.group[comm.rank() as usize] as usize] as i32)
        }
        Some(other) => {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "split_type",
                format!(
                    "{} is not MPI_COMM_TYPE_SHARED nor MPI_UNDEFINED",
                    other.name()
                ),
            ));
        }
    };
    split_named(comm, color, key, call)
}

/// MPI_Comm_split_type with every split type: `COMM_TYPE_SHARED`; the guided
/// ones, by the hardware resource named in `resource` (the info value of
/// `mpi_hw_resource_type`; ranks outside any resource of that type, or naming
/// none or an unknown one, get `None`); `COMM_TYPE_HW_UNGUIDED`, by the first
/// hardware level (host, package, NUMA node) that splits `comm` into strict
/// subsets. Ranks may pass `None` (`MPI_UNDEFINED`). Returns the new communicator
/// and, for the unguided split, the resource type chosen (for its info).
pub fn split_type_hw(
    comm: &Comm,
    split_type: Option<SplitType>,
    key: i32,
    resource: Option<&str>,
) -> Result<(Option<Comm>, Option<&'static str>)> {
    use crate::hwtopo::{unguided_level, Resource};
    let call = "MPI_Comm_split_type";
    // On an intercommunicator each side splits its local group (as MPI_Comm_split).
    let e = crate::runtime::engine()?;
    let me = comm.0.group[comm.rank() as usize] as usize;
    let (color, chosen) = match split_type {
        None => (None, None),
        Some(SplitType::Shared) => (Some(e.host_of()[me] as i32), None),
        Some(SplitType::HwGuided | SplitType::ResourceGuided) => {
            let color = resource
                .and_then(Resource::parse)
                .and_then(|r| r.color(&e.place_of(me)));
            (color, None)
        }
        Some(SplitType::HwUnguided) => {
            let places: Vec<_> = (0..e.host_of().len()).map(|w| e.place_of(w)).collect();
            match unguided_level(&comm.0.group, &places) {
                Some(r) => (r.color(&places[me]), Some(r.name())),
                None => (None, None),
            }
        }
    };
    let new = split_named(comm, color, key, call)?;
    Ok((new.clone(), if new.is_some() { chosen } else { None }))
}

/// MPI_Comm_create: the ranks of `group` (world ranks, in the new rank order)
/// get a communicator, the others `None`. Collective over all of `comm`.
pub fn create(comm: &Comm, group: &[u32]) -> Result<Option<Comm>> {
    let call = "MPI_Comm_create";
    for (i, w) in group.iter().enumerate() {
        if !comm.0.group.contains(w) {
            return Err(MpiError::arg(
                ErrorClass::Group,
                call,
                "group",
                format!("member {i} (world rank {w}) is not in the communicator"),
            ));
        }
        if group[..i].contains(w) {
            return Err(MpiError::arg(
                ErrorClass::Group,
                call,
                "group",
                format!("world rank {w} appears twice"),
            ));
        }
    }
    let me = comm.0.group[comm.rank() as usize];
    let pos = group.iter().position(|&w| w == me);
    if comm.is_inter() {
        // Each side names a subgroup of its own local group; the result joins
        // the two subgroups (a split with one colour, keyed by group order).
        let (color, key) = match pos {
            Some(i) => (Some(0), i as i32),
            None => (None, 0),
        };
        return super::inter::intercomm_split(comm, color, key, call);
    }
    let ctx = context::agree_for(comm, call, pos.is_some())?;
    let Some(rank) = pos else {
        return Ok(None);
    };
    Ok(Some(Comm::build(
        ctx,
        true,
        rank as i32,
        group.into(),
        None,
        String::new(),
    )))
}

/// MPI_Comm_create_group: like [`create`], but collective only over the
/// members of `group` (world ranks, in the new rank order). Non-members get
/// `None` without communicating.
pub fn create_group(comm: &Comm, group: &[u32], tag: i32) -> Result<Option<Comm>> {
    let call = "MPI_Comm_create_group";
    require_intra(call, comm)?;
    for (i, w) in group.iter().enumerate() {
        if !comm.0.group.contains(w) {
            return Err(MpiError::arg(
                ErrorClass::Group,
                call,
                "group",
                format!("member {i} (world rank {w}) is not in the communicator"),
            ));
        }
        if group[..i].contains(w) {
            return Err(MpiError::arg(
                ErrorClass::Group,
                call,
                "group",
                format!("world rank {w} appears twice"),
            ));
        }
    }
    let me = comm.0.group[comm.rank() as usize];
    let Some(rank) = group.iter().position(|&w| w == me) else {
        return Ok(None);
    };
    // The members agree on a context id among themselves, over the parent's
    // collective context with tags no parent collective uses (bit 30); the
    // caller's tag (modulo the 64 sub-tag values) keeps overlapping groups that
    // create at the same time apart, as MPI asks of it. The agreement's
    // allreduce uses no sub-tags of its own.
    let mut temp = Comm::build(
        comm.context(),
        false,
        rank as i32,
        group.into(),
        None,
        String::new(),
    );
    if let Some(inner) = Arc::get_mut(&mut temp.0) {
        inner.tag_base = (1 << 30)
            | ((tag.rem_euclid(crate::coll::sched::MAX_SUBTAGS as i32))
                << crate::coll::sched::SEQ_BITS);
        // Members are told apart by their parent ranks on the wire: two
        // overlapping groups number their members differently, and a message
        // of one must never match a receive of the other.
        let parent_rank = |w: &u32| {
            comm.0
                .group
                .iter()
                .position(|x| x == w)
                .map_or(-1, |p| p as i32)
        };
        inner.wire_ranks = Some(group.iter().map(parent_rank).collect());
    }
    let ctx = context::agree_by_task(&temp, call, true)?;
    Ok(Some(Comm::build(
        ctx,
        true,
        rank as i32,
        group.into(),
        None,
        String::new(),
    )))
}

/// MPI_Comm_compare.
pub fn compare(a: &Comm, b: &Comm) -> Comparison {
    if a.same(b) {
        return Comparison::Ident;
    }
    if a.is_inter() != b.is_inter() {
        return Comparison::Unequal;
    }
    let same_remote = match (&a.0.remote_group, &b.0.remote_group) {
        (Some(x), Some(y)) => Some(x[..] == y[..]),
        _ => None,
    };
    if a.0.group[..] == b.0.group[..] && same_remote.unwrap_or(true) {
        return Comparison::Congruent;
    }
    let mut x = a.0.group.to_vec();
    let mut y = b.0.group.to_vec();
    x.sort_unstable();
    y.sort_unstable();
    let remote_similar = match (&a.0.remote_group, &b.0.remote_group) {
        (Some(p), Some(q)) => {
            let (mut p, mut q) = (p.to_vec(), q.to_vec());
            p.sort_unstable();
            q.sort_unstable();
            p == q
        }
        _ => true,
    };
    if x == y && remote_similar {
        Comparison::Similar
    } else {
        Comparison::Unequal
    }
}
