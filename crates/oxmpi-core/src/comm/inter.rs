//! Intercommunicators: MPI_Intercomm_create, MPI_Intercomm_merge, and dup,
//! split and create on an intercommunicator.
//!
//! An intercommunicator joins two disjoint groups. Point-to-point on it names
//! the destination by its rank in the REMOTE group, and a receiver sees the
//! sender's rank in the sender's own (local) group; both directions use one
//! context id, agreed by the two groups through their leaders. Each side also
//! keeps an intracommunicator over its local group for the steps that stay
//! inside one group (agreement, merge, intercommunicator collectives).

use std::sync::Arc;

use super::{context, Comm};
use crate::datatype::{Datatype, Primitive};
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::{Op, PredefinedOp};
use crate::pt2pt::{self, SendMode};

fn u64s_as_bytes(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn bytes_as_u64s(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Bcasts a byte vector from `root` of `comm` (length first, then the bytes).
fn bcast_bytes(comm: &Comm, root: i32, data: &mut Vec<u8>) -> Result<()> {
    let u64t = Datatype::predefined(Primitive::Uint64);
    let byte = Datatype::predefined(Primitive::Byte);
    let mut len = [data.len() as u64];
    // SAFETY: buffers outlive the blocking calls and hold the counts given.
    unsafe { crate::coll::bcast::bcast(len.as_mut_ptr() as *mut u8, 1, &u64t, root, comm)? };
    data.resize(len[0] as usize, 0);
    // SAFETY: as above.
    unsafe { crate::coll::bcast::bcast(data.as_mut_ptr(), data.len(), &byte, root, comm) }
}

/// The AND of every local rank's free-context mask (collective over `comm`).
pub(crate) fn local_free_mask(comm: &Comm) -> Result<Vec<u64>> {
    let mine = context::free_words();
    let mut all = vec![0u64; mine.len()];
    let u64t = Datatype::predefined(Primitive::Uint64);
    // SAFETY: both buffers hold mine.len() u64s and outlive the blocking call.
    unsafe {
        crate::coll::allreduce::allreduce(
            Some(mine.as_ptr() as *const u8),
            all.as_mut_ptr() as *mut u8,
            mine.len(),
            &u64t,
            &Op::predefined(PredefinedOp::Band),
            comm,
        )?;
    }
    Ok(all)
}

/// Leaders swap `mine` for the other side's bytes over `peer` (point-to-point).
fn leader_swap(peer: &Comm, remote_leader: i32, tag: i32, mine: &[u8]) -> Result<Vec<u8>> {
    let mut len = [0u8; 8];
    pt2pt::sendrecv(peer, &(mine.len() as u64).to_le_bytes(), remote_leader, tag, &mut len, remote_leader, tag)?;
    let mut theirs = vec![0u8; u64::from_le_bytes(len) as usize];
    pt2pt::sendrecv(peer, mine, remote_leader, tag, &mut theirs, remote_leader, tag)?;
    Ok(theirs)
}

/// MPI_Intercomm_create. Collective over `local`; the two leaders also talk
/// over `peer` (where `remote_leader` is the other leader's rank) with `tag`.
pub fn intercomm_create(local: &Comm, local_leader: i32, peer: Option<&Comm>, remote_leader: i32, tag: i32) -> Result<Comm> {
    let call = "MPI_Intercomm_create";
    if local.is_inter() {
        return Err(MpiError::arg(ErrorClass::Comm, call, "local_comm", "an intercommunicator; an intracommunicator is required"));
    }
    crate::coll::check_root(call, local, local_leader).map_err(|e| MpiError::arg(ErrorClass::Rank, call, "local_leader", e.message))?;
    // The local half: an intracommunicator of our own, and the free ids we share.
    let local_copy = super::create::dup(local)?;
    let mut mask = local_free_mask(local)?;
    let mut info: Vec<u8> = Vec::new();
    if local.rank() == local_leader {
        let peer = peer.ok_or_else(|| MpiError::arg(ErrorClass::Comm, call, "peer_comm", "MPI_COMM_NULL at the local leader"))?;
        if remote_leader < 0 || remote_leader >= peer.size() {
            return Err(MpiError::arg(ErrorClass::Rank, call, "remote_leader", format!("{remote_leader} is not a rank of peer_comm (0..{})", peer.size())));
        }
        // Ours: group size, world ranks, free mask.
        let mut mine = Vec::new();
        mine.extend_from_slice(&(local.size() as u64).to_le_bytes());
        mine.extend(local.group().iter().flat_map(|w| (*w as u64).to_le_bytes()));
        mine.extend(u64s_as_bytes(&mask));
        let theirs = leader_swap(peer, remote_leader, tag, &mine)?;
        let words = bytes_as_u64s(&theirs);
        let n = words.first().copied().unwrap_or(0) as usize;
        if words.len() != 1 + n + mask.len() {
            return Err(MpiError::new(ErrorClass::Intern, format!("{call}: malformed reply from the remote leader")));
        }
        let remote: Vec<u64> = words[1..1 + n].to_vec();
        if remote.iter().any(|w| local.group().contains(&(*w as u32))) {
            return Err(MpiError::arg(ErrorClass::Arg, call, "remote_leader", "the two groups overlap; they must be disjoint"));
        }
        for (m, t) in mask.iter_mut().zip(&words[1 + n..]) {
            *m &= t;
        }
        info.extend(u64s_as_bytes(&[n as u64]));
        info.extend(u64s_as_bytes(&remote));
        info.extend(u64s_as_bytes(&mask));
    }
    bcast_bytes(local, local_leader, &mut info)?;
    let words = bytes_as_u64s(&info);
    let n = words[0] as usize;
    let remote: Arc<[u32]> = words[1..1 + n].iter().map(|w| *w as u32).collect();
    mask.copy_from_slice(&words[1 + n..]);
    let ctx = context::first_free_in(&mask).ok_or_else(|| {
        MpiError::new(ErrorClass::Other, format!("{call}: no communicator context id is free in both groups"))
    })?;
    context::claim(ctx);
    Ok(Comm::build_inter(ctx, local.rank(), local.0.group.clone(), remote, local_copy))
}

/// MPI_Intercomm_merge: one intracommunicator over both groups; the group that
/// passed `high = false` comes first (on a tie, the group whose first member has
/// the lower world rank).
pub fn intercomm_merge(inter: &Comm, high: bool) -> Result<Comm> {
    let call = "MPI_Intercomm_merge";
    let Some(local) = inter.0.local_comm.as_ref() else {
        return Err(MpiError::arg(ErrorClass::Comm, call, "intercomm", "not an intercommunicator"));
    };
    let mut mask = local_free_mask(local)?;
    let mut info: Vec<u8> = Vec::new();
    if local.rank() == 0 {
        // Leaders (rank 0 of each group) swap their high flag and free mask
        // over the intercommunicator's collective context.
        let mut mine = vec![high as u64];
        mine.extend(&mask);
        let bytes = u64s_as_bytes(&mine);
        let mut theirs = vec![0u8; bytes.len()];
        let ctx = inter.coll_context();
        // SAFETY: buffers outlive the waits below.
        let (mut s, mut r) = unsafe {
            (
                pt2pt::isend_on(inter, ctx, call, bytes.as_ptr(), bytes.len(), 0, 0x3fff_fff0, SendMode::Standard)?,
                pt2pt::irecv_on(inter, ctx, call, theirs.as_mut_ptr(), theirs.len(), 0, 0x3fff_fff0)?,
            )
        };
        pt2pt::wait(&mut s)?;
        pt2pt::wait(&mut r)?;
        let t = bytes_as_u64s(&theirs);
        for (m, x) in mask.iter_mut().zip(&t[1..]) {
            *m &= x;
        }
        info.extend(u64s_as_bytes(&[t[0]]));
        info.extend(u64s_as_bytes(&mask));
    }
    bcast_bytes(local, 0, &mut info)?;
    let words = bytes_as_u64s(&info);
    let remote_high = words[0] != 0;
    mask.copy_from_slice(&words[1..]);
    let ctx = context::first_free_in(&mask)
        .ok_or_else(|| MpiError::new(ErrorClass::Other, format!("{call}: no communicator context id is free in both groups")))?;
    let remote = inter.0.remote_group.clone().unwrap();
    let we_first = if high != remote_high { !high } else { inter.group()[0] < remote[0] };
    let group: Arc<[u32]> = if we_first {
        inter.group().iter().chain(remote.iter()).copied().collect()
    } else {
        remote.iter().chain(inter.group().iter()).copied().collect()
    };
    let me = inter.group()[inter.rank() as usize];
    let rank = group.iter().position(|&w| w == me).unwrap() as i32;
    context::claim(ctx);
    Ok(Comm::build(ctx, true, rank, group, None, String::new()))
}

/// A context id free on every rank of both groups (collective over `inter`):
/// the AND of the local group's masks and, through an intercommunicator
/// allreduce, of the remote group's.
fn agree_inter(inter: &Comm, local: &Comm, call: &str) -> Result<u32> {
    let mut mask = local_free_mask(local)?;
    let mine = context::free_words();
    let mut remote = vec![0u64; mine.len()];
    let u64t = Datatype::predefined(Primitive::Uint64);
    // SAFETY: both buffers hold mine.len() u64s and outlive the blocking call.
    unsafe {
        crate::coll::allreduce::allreduce(
            Some(mine.as_ptr() as *const u8),
            remote.as_mut_ptr() as *mut u8,
            mine.len(),
            &u64t,
            &Op::predefined(PredefinedOp::Band),
            inter,
        )?;
    }
    for (m, r) in mask.iter_mut().zip(&remote) {
        *m &= r;
    }
    context::first_free_in(&mask)
        .ok_or_else(|| MpiError::new(ErrorClass::Other, format!("{call}: no communicator context id is free in both groups")))
}

/// MPI_Comm_split on an intercommunicator: ranks of each group with the same
/// `color` form the local group of a new intercommunicator whose remote group
/// is the remote ranks with that colour (ordered by key, then by rank). A
/// colour with no remote member, and `UNDEFINED`, get `None`.
pub fn intercomm_split(inter: &Comm, color: i32, key: i32, call: &str) -> Result<Option<Comm>> {
    let Some(local) = inter.0.local_comm.as_ref() else {
        return Err(MpiError::arg(ErrorClass::Comm, call, "comm", "not an intercommunicator"));
    };
    let mine = [color, key];
    let rsize = inter.peer_group_size() as usize;
    let mut theirs = vec![0i32; 2 * rsize];
    let int = Datatype::predefined(Primitive::Int);
    // SAFETY: `mine` holds 2 ints, `theirs` 2 per remote rank; both outlive the blocking call.
    unsafe {
        crate::coll::allgather::allgather(Some(mine.as_ptr() as *const u8), 2, &int, theirs.as_mut_ptr() as *mut u8, 2, &int, inter)?;
    }
    let new_local = super::create::split(local, color, key)?;
    let ctx = agree_inter(inter, local, call)?;
    let Some(new_local) = new_local else {
        return Ok(None);
    };
    let mut members: Vec<(i32, usize)> = (0..rsize).filter(|&r| theirs[2 * r] == color).map(|r| (theirs[2 * r + 1], r)).collect();
    if members.is_empty() {
        return Ok(None);
    }
    members.sort();
    let remote: Arc<[u32]> = members.iter().map(|&(_, r)| inter.peer_group()[r]).collect();
    context::claim(ctx);
    Ok(Some(Comm::build_inter(ctx, new_local.rank(), new_local.0.group.clone(), remote, new_local)))
}

/// MPI_Comm_idup on an intercommunicator, non-blocking: the ranks of both
/// groups agree on two ids (the new intercommunicator's and its local
/// intracommunicator's; the two local groups are disjoint, so they may share
/// one) with the progress engine's agreement task, run over a temporary
/// intracommunicator of the union of the groups (ordered by world rank) on
/// the intercommunicator's collective context, with tags of their own (bit 30,
/// the call's collective sequence). The duplicate lands in `slot` when the
/// request completes.
pub fn intercomm_idup(inter: &Comm, slot: Arc<std::sync::Mutex<Option<Comm>>>) -> Result<crate::request::Request> {
    let call = "MPI_Comm_idup";
    let attrs = inter.0.attrs.duplicate(call)?;
    let seq = inter.next_coll_tag();
    let mut union: Vec<u32> = inter.group().iter().chain(inter.peer_group()).copied().collect();
    union.sort_unstable();
    let me = inter.group()[inter.rank() as usize];
    let urank = union.iter().position(|&w| w == me).unwrap_or(0) as i32;
    let mut temp = Comm::build(inter.context(), false, urank, union.into(), None, String::new());
    if let Some(inner) = Arc::get_mut(&mut temp.0) {
        inner.tag_base = 1 << 30;
    }
    let tag = (1 << 30) | seq;
    let (rank, group, remote) = (inter.rank(), inter.0.group.clone(), inter.0.remote_group.clone().unwrap_or_else(|| Arc::from(Vec::new())));
    context::start_agreement_pair(
        &temp,
        call,
        tag,
        Box::new(move |ictx, lctx| {
            let local = Comm::build(lctx, true, rank, group.clone(), None, String::new());
            let mut new = Comm::build_inter(ictx, rank, group, remote, local);
            if let Some(inner) = Arc::get_mut(&mut new.0) {
                inner.attrs = attrs;
            }
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(new);
        }),
    )
}

/// MPI_Comm_dup on an intercommunicator: same groups and ranks, new context,
/// attributes copied.
pub fn intercomm_dup(inter: &Comm) -> Result<Comm> {
    let call = "MPI_Comm_dup";
    let attrs = inter.0.attrs.duplicate(call)?;
    let mut new = intercomm_split(inter, 0, inter.rank(), call)?
        .ok_or_else(|| MpiError::new(ErrorClass::Intern, format!("{call}: the duplicate has an empty group")))?;
    if let Some(inner) = Arc::get_mut(&mut new.0) {
        inner.attrs = attrs;
    }
    Ok(new)
}
