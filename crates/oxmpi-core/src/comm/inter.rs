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
use crate::buf::{BufScope, RawBuf, RecvBuf, SendBuf};
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::{Op, PredefinedOp};
use crate::pt2pt::{self, SendMode};

fn u64s_as_bytes(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn bytes_as_u64s(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Bcasts a byte vector from `root` of `comm` (length first, then the bytes).
fn bcast_bytes(comm: &Comm, root: i32, data: &mut Vec<u8>) -> Result<()> {
    let mut len = [data.len() as u64];
    crate::coll::bcast::bcast(RecvBuf::slice(&mut len), root, comm)?;
    data.resize(len[0] as usize, 0);
    crate::coll::bcast::bcast(RecvBuf::bytes(data), root, comm)
}

/// ANDs `words` in place over every rank of `comm` (blocking allreduce).
fn and_over(comm: &Comm, words: &mut [u64]) -> Result<()> {
    let band = Op::predefined(PredefinedOp::Band);
    crate::coll::allreduce::allreduce(None, RecvBuf::slice(words), &band, comm)
}

/// Leaders swap `mine` for the other side's bytes over `peer` (point-to-point).
fn leader_swap(peer: &Comm, remote_leader: i32, tag: i32, mine: &[u8]) -> Result<Vec<u8>> {
    let mut len = [0u8; 8];
    pt2pt::sendrecv(
        peer,
        &(mine.len() as u64).to_le_bytes(),
        remote_leader,
        tag,
        &mut len,
        remote_leader,
        tag,
    )?;
    let mut theirs = vec![0u8; u64::from_le_bytes(len) as usize];
    pt2pt::sendrecv(
        peer,
        mine,
        remote_leader,
        tag,
        &mut theirs,
        remote_leader,
        tag,
    )?;
    Ok(theirs)
}

/// MPI_Intercomm_create. Collective over `local`; the two leaders also talk
/// over `peer` (where `remote_leader` is the other leader's rank) with `tag`.
pub fn intercomm_create(
    local: &Comm,
    local_leader: i32,
    peer: Option<&Comm>,
    remote_leader: i32,
    tag: i32,
) -> Result<Comm> {
    let call = "MPI_Intercomm_create";
    if local.is_inter() {
        return Err(MpiError::arg(
            ErrorClass::Comm,
            call,
            "local_comm",
            "an intercommunicator; an intracommunicator is required",
        ));
    }
    crate::coll::check_root(call, local, local_leader)
        .map_err(|e| MpiError::arg(ErrorClass::Rank, call, "local_leader", e.message))?;
    // The local half: an intracommunicator of our own.
    let local_copy = super::create::dup(local)?;
    let peer = if local.rank() == local_leader {
        let peer = peer.ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Comm,
                call,
                "peer_comm",
                "MPI_COMM_NULL at the local leader",
            )
        })?;
        if remote_leader < 0 || remote_leader >= peer.size() {
            return Err(MpiError::arg(
                ErrorClass::Rank,
                call,
                "remote_leader",
                format!(
                    "{remote_leader} is not a rank of peer_comm (0..{})",
                    peer.size()
                ),
            ));
        }
        Some(peer)
    } else {
        None
    };
    // The leaders swap their groups (world ranks) and tell their groups.
    let mut info: Vec<u8> = Vec::new();
    if let Some(peer) = peer {
        let mine: Vec<u64> = local.group().iter().map(|w| *w as u64).collect();
        let remote = bytes_as_u64s(&leader_swap(
            peer,
            remote_leader,
            tag,
            &u64s_as_bytes(&mine),
        )?);
        if remote.is_empty() {
            return Err(MpiError::new(
                ErrorClass::Intern,
                format!("{call}: malformed reply from the remote leader"),
            ));
        }
        // Both leaders must decide alike: an overlap is an error on both sides.
        info = u64s_as_bytes(&remote);
    }
    bcast_bytes(&local_copy, local_leader, &mut info)?;
    let remote: Arc<[u32]> = bytes_as_u64s(&info).iter().map(|w| *w as u32).collect();
    if remote.iter().any(|w| local.group().contains(w)) {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            "remote_leader",
            "the two groups overlap; they must be disjoint",
        ));
    }
    // The context id, agreed by both groups: each round's AND over the local
    // group, swapped between the leaders, and told to the group.
    let ctx = context::agree_with(
        call,
        true,
        (local.group()[0].min(remote[0]), tag),
        |words| {
            and_over(&local_copy, words)?;
            let mut mine = u64s_as_bytes(words);
            if let Some(peer) = peer {
                let theirs = bytes_as_u64s(&leader_swap(peer, remote_leader, tag, &mine)?);
                if theirs.len() != words.len() {
                    return Err(MpiError::new(
                        ErrorClass::Intern,
                        format!("{call}: malformed reply from the remote leader"),
                    ));
                }
                for (m, t) in words.iter_mut().zip(&theirs) {
                    *m &= t;
                }
                mine = u64s_as_bytes(words);
            }
            bcast_bytes(&local_copy, local_leader, &mut mine)?;
            words.copy_from_slice(&bytes_as_u64s(&mine));
            Ok(())
        },
    )?;
    Ok(Comm::build_inter(
        ctx,
        local.rank(),
        local.0.group.clone(),
        remote,
        local_copy,
    ))
}

/// MPI_Intercomm_merge: one intracommunicator over both groups; the group that
/// passed `high = false` comes first (on a tie, the group whose first member has
/// the lower world rank).
pub fn intercomm_merge(inter: &Comm, high: bool) -> Result<Comm> {
    let call = "MPI_Intercomm_merge";
    let Some(local) = inter.0.local_comm.as_ref() else {
        return Err(MpiError::arg(
            ErrorClass::Comm,
            call,
            "intercomm",
            "not an intercommunicator",
        ));
    };
    // The leaders (rank 0 of each group) swap their high flags over the
    // intercommunicator's collective context; then both groups agree on an id.
    let mut flag = [high as u64];
    if local.rank() == 0 {
        let mine = flag;
        leaders_swap_words(inter, call, &mine, &mut flag)?;
    }
    let mut b = u64s_as_bytes(&flag);
    bcast_bytes(local, 0, &mut b)?;
    let remote_high = bytes_as_u64s(&b).first().copied().unwrap_or(0) != 0;
    let ctx = agree_inter(inter, local, call, true)?;
    let remote = inter.0.remote_group.clone().unwrap();
    let we_first = if high != remote_high {
        !high
    } else {
        inter.group()[0] < remote[0]
    };
    let group: Arc<[u32]> = if we_first {
        inter.group().iter().chain(remote.iter()).copied().collect()
    } else {
        remote.iter().chain(inter.group().iter()).copied().collect()
    };
    let me = inter.group()[inter.rank() as usize];
    let rank = group.iter().position(|&w| w == me).unwrap() as i32;
    Ok(Comm::build(ctx, true, rank, group, None, String::new()))
}

/// The leaders of an intercommunicator's two groups swap `mine` for the
/// other's words (the same length) over its collective context.
fn leaders_swap_words(
    inter: &Comm,
    call: &'static str,
    mine: &[u64],
    theirs: &mut [u64],
) -> Result<()> {
    let bytes = u64s_as_bytes(mine);
    let mut got = vec![0u8; bytes.len()];
    let ctx = inter.coll_context();
    // The buffers are borrowed for the scope, which completes both requests (also
    // one an error left in flight) before it ends.
    crate::buf::scope(|sc| -> Result<()> {
        let mut s = pt2pt::isend_on(
            inter,
            ctx,
            call,
            RawBuf::from_slice(&bytes),
            0,
            0x3fff_fff0,
            SendMode::Standard,
        )?;
        sc.enter(s);
        let mut r = pt2pt::irecv_on(
            inter,
            ctx,
            call,
            RawBuf::from_mut_slice(&mut got),
            0,
            0x3fff_fff0,
        )?;
        sc.enter(r);
        pt2pt::wait(&mut s)?;
        pt2pt::wait(&mut r)?;
        Ok(())
    })?;
    theirs.copy_from_slice(&bytes_as_u64s(&got));
    Ok(())
}

/// A context id free on every rank of both groups (collective over `inter`),
/// claimed by the members: each round's AND over the local group, then
/// through an intercommunicator allreduce the remote group's AND.
fn agree_inter(inter: &Comm, local: &Comm, call: &'static str, member: bool) -> Result<u32> {
    let seed = (
        inter.context(),
        inter.group()[0].min(inter.peer_group()[0]) as i32,
    );
    context::agree_with(call, member, seed, |words| {
        and_over(local, words)?;
        let mut remote = vec![0u64; words.len()];
        let band = Op::predefined(PredefinedOp::Band);
        let (send, recv) = (SendBuf::slice(words), RecvBuf::slice(&mut remote));
        crate::coll::allreduce::allreduce(Some(send), recv, &band, inter)?;
        for (m, r) in words.iter_mut().zip(&remote) {
            *m &= r;
        }
        Ok(())
    })
}

/// MPI_Comm_split on an intercommunicator: ranks of each group with the same
/// `color` form the local group of a new intercommunicator whose remote group
/// is the remote ranks with that colour (ordered by key, then by rank). A
/// colour with no remote member, and no colour (`MPI_UNDEFINED`), get `None`.
pub fn intercomm_split(
    inter: &Comm,
    color: Option<i32>,
    key: i32,
    call: &'static str,
) -> Result<Option<Comm>> {
    let Some(local) = inter.0.local_comm.as_ref() else {
        return Err(MpiError::arg(
            ErrorClass::Comm,
            call,
            "comm",
            "not an intercommunicator",
        ));
    };
    let mine = [color.unwrap_or(super::create::NO_COLOR), key];
    let rsize = inter.peer_group_size() as usize;
    let mut theirs = vec![0i32; 2 * rsize];
    crate::coll::api_move::allgather(
        Some(SendBuf::slice(&mine)),
        RecvBuf::slice(&mut theirs),
        2,
        inter,
    )?;
    let new_local = super::create::split(local, color, key)?;
    let mut members: Vec<(i32, usize)> = match color {
        Some(c) => (0..rsize)
            .filter(|&r| theirs[2 * r] == c)
            .map(|r| (theirs[2 * r + 1], r))
            .collect(),
        None => Vec::new(),
    };
    let member = new_local.is_some() && !members.is_empty();
    let ctx = agree_inter(inter, local, call, member)?;
    let Some(new_local) = new_local.filter(|_| member) else {
        return Ok(None);
    };
    members.sort();
    let remote: Arc<[u32]> = members
        .iter()
        .map(|&(_, r)| inter.peer_group()[r])
        .collect();
    Ok(Some(Comm::build_inter(
        ctx,
        new_local.rank(),
        new_local.0.group.clone(),
        remote,
        new_local,
    )))
}

/// MPI_Comm_idup on an intercommunicator, non-blocking: the ranks of both
/// groups agree on two ids (the new intercommunicator's and its local
/// intracommunicator's; the two local groups are disjoint, so they may share
/// one) with the progress engine's agreement task, run over a temporary
/// intracommunicator of the union of the groups (ordered by world rank) on
/// the intercommunicator's collective context, with tags of their own (bit 30,
/// the call's collective sequence). The duplicate lands in `slot` when the
/// request completes.
pub fn intercomm_idup(
    inter: &Comm,
    slot: Arc<std::sync::Mutex<Option<Comm>>>,
) -> Result<crate::request::Request> {
    let call = "MPI_Comm_idup";
    let attrs = inter.0.attrs.duplicate(call)?;
    let seq = inter.next_coll_tag();
    let mut union: Vec<u32> = inter
        .group()
        .iter()
        .chain(inter.peer_group())
        .copied()
        .collect();
    union.sort_unstable();
    let me = inter.group()[inter.rank() as usize];
    let urank = union.iter().position(|&w| w == me).unwrap_or(0) as i32;
    let mut temp = Comm::build(
        inter.context(),
        false,
        urank,
        union.into(),
        None,
        String::new(),
    );
    if let Some(inner) = Arc::get_mut(&mut temp.0) {
        inner.tag_base = 1 << 30;
    }
    let tag = (1 << 30) | seq;
    let (rank, group, remote) = (
        inter.rank(),
        inter.0.group.clone(),
        inter
            .0
            .remote_group
            .clone()
            .unwrap_or_else(|| Arc::from(Vec::new())),
    );
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
    let mut new = intercomm_split(inter, Some(0), inter.rank(), call)?.ok_or_else(|| {
        MpiError::new(
            ErrorClass::Intern,
            format!("{call}: the duplicate has an empty group"),
        )
    })?;
    if let Some(inner) = Arc::get_mut(&mut new.0) {
        inner.attrs = attrs;
    }
    Ok(new)
}
