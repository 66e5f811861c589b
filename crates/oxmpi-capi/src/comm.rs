//! Communicators made at run time (dup, split, create, intercommunicators,
//! free), groups, process topologies, and MPIX_Topo_cluster_info.
//!
//! Communicator handles made here live in `State::comms`; the engine's
//! `Comm` carries the attributes (so the engine's dup runs copy callbacks), the
//! name and the topology. A new communicator starts with its parent's error
//! handler.
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement: buffers holding their counts of their datatypes
//! (for immediate forms, until the request completes), arrays of the length the
//! standard gives, OUT arguments writable and aliasing no other argument.

use std::ffi::{c_int, c_void};

use oxmpi_core::comm::{create, inter, topology};
use oxmpi_core::error::ErrorClass;
use oxmpi_core::group::Group;
use oxmpi_core::runtime;
use oxmpi_core::topo::{self, Cart, DistGraphEdges, Graph, Topology};
use oxmpi_core::Comm;

use crate::abi::*;
use crate::conv::{comm, group, new_comm, new_comm_or_null, new_group, with_cb_comm};
use crate::conv::errors::{NO_COMM, array as ints, array_mut as ints_mut, bad, bad_code, ffi, out, route_to, R};
use crate::conv::handles::state;
use crate::types::*;

// ----- helpers -------------------------------------------------------------------------

fn nonneg(call: &str, arg: &str, n: c_int, class: ErrorClass) -> R<usize> {
    if n < 0 {
        return Err(bad(class, call, arg, format!("{n} is negative")));
    }
    Ok(n as usize)
}

/// An info argument: MPI_INFO_NULL or a live info object (its hints are ignored).
fn info_arg(call: &str, info: MPI_Info) -> R<()> {
    if info == MPI_INFO_NULL || info == MPI_INFO_ENV || state().infos.get(info).is_some() {
        Ok(())
    } else {
        Err(bad_code(MPI_ERR_INFO, call, "info", format!("{info:#x} is not a valid info object")))
    }
}

// ----- communicator constructors and destructor -----------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_dup(c: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_dup";
    ffi(CALL, c, || {
        // SAFETY: `newcomm` is MPI_Comm_dup's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "newcomm", newcomm)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_COMM_NULL;
        let cm = comm(c, CALL)?;
        let d = with_cb_comm(c, || create::dup(&cm))?;
        *o = new_comm(d, c);
        let hints = state().comm_info.get(&c).cloned();
        if let Some(kv) = hints {
            state().comm_info.insert(*o, kv);
        }
        Ok(())
    })
}

/// The key/value pairs of an info argument (none for MPI_INFO_NULL).
fn info_pairs(call: &str, info: MPI_Info) -> R<Vec<(String, String)>> {
    if info == MPI_INFO_NULL {
        return Ok(vec![]);
    }
    crate::conv::with_info(call, info, |kv| Ok(kv.clone()))
}

/// MPI_Comm_set_info: the hints are kept and handed back by MPI_Comm_get_info
/// (oxmpi acts on none of them).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_set_info(c: MPI_Comm, info: MPI_Info) -> c_int {
    const CALL: &str = "MPI_Comm_set_info";
    ffi(CALL, c, || {
        comm(c, CALL)?;
        let kv = info_pairs(CALL, info)?;
        let mut st = state();
        let cur = st.comm_info.entry(c).or_default();
        for (k, v) in kv {
            match cur.iter_mut().find(|(a, _)| *a == k) {
                Some(e) => e.1 = v,
                None => cur.push((k, v)),
            }
        }
        Ok(())
    })
}

/// MPI_Comm_get_info: a new info object with the communicator's hints.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_get_info(c: MPI_Comm, info_used: *mut MPI_Info) -> c_int {
    const CALL: &str = "MPI_Comm_get_info";
    ffi(CALL, c, || {
        comm(c, CALL)?;
        // SAFETY: `info_used` is MPI_Comm_get_info's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "info_used", info_used)? };
        let mut st = state();
        let kv = st.comm_info.get(&c).cloned().unwrap_or_default();
        *o = st.infos.insert(kv);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_dup_with_info(c: MPI_Comm, info: MPI_Info, newcomm: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_dup_with_info";
    ffi(CALL, c, || {
        // SAFETY: `newcomm` is MPI_Comm_dup_with_info's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "newcomm", newcomm)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_COMM_NULL;
        let cm = comm(c, CALL)?;
        info_arg(CALL, info)?;
        let kv = info_pairs(CALL, info)?;
        let d = with_cb_comm(c, || create::dup(&cm)).map_err(|e| oxmpi_core::MpiError::new(e.class, e.message.replacen("MPI_Comm_dup", CALL, 1)))?;
        *o = new_comm(d, c);
        state().comm_info.insert(*o, kv);
        Ok(())
    })
}

/// MPI_Comm_idup: returns at once; the ranks agree on the new context while
/// the progress engine runs (see oxmpi_core::comm::context), and `*newcomm`
/// is written when the request completes (wait, test, their any/all/some
/// forms, or MPI_Request_get_status), as MPI makes it valid only then.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_idup(c: MPI_Comm, newcomm: *mut MPI_Comm, request: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's OUT arguments, passed on as given.
    unsafe { idup("MPI_Comm_idup", c, None, newcomm, request) }
}

/// MPI_Comm_idup_with_info: as MPI_Comm_idup, with `info`'s hints on the new communicator.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_idup_with_info(c: MPI_Comm, info: MPI_Info, newcomm: *mut MPI_Comm, request: *mut MPI_Request) -> c_int {
    // SAFETY: the C caller's OUT arguments, passed on as given.
    unsafe { idup("MPI_Comm_idup_with_info", c, Some(info), newcomm, request) }
}


/// # Safety
/// `newcomm` and `request` are NULL or writable and unaliased (the C caller's
/// OUT arguments); `newcomm` stays valid until the request completes.
unsafe fn idup(call: &'static str, c: MPI_Comm, info: Option<MPI_Info>, newcomm: *mut MPI_Comm, request: *mut MPI_Request) -> c_int {
    ffi(call, c, || {
        let hints = match info {
            Some(i) => {
                info_arg(call, i)?;
                Some(info_pairs(call, i)?)
            }
            None => state().comm_info.get(&c).cloned(),
        };
        let cm = comm(c, call)?;
        if newcomm.is_null() {
            return Err(bad(ErrorClass::Arg, call, "newcomm", "is NULL"));
        }
        // SAFETY: `request` is MPI_Comm_idup's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let ro = unsafe { out(call, "request", request)? };
        let (r, pending) = with_cb_comm(c, || create::idup(&cm)).map_err(|e| oxmpi_core::MpiError::new(e.class, e.message.replacen("MPI_Comm_idup", call, 1)))?;
        let hook = crate::conv::handles::Hook::Idup(crate::conv::handles::PendingIdup { pending, parent: c, hints, newcomm: newcomm as usize });
        *ro = crate::conv::new_hooked_request(r, c, hook);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_split(c: MPI_Comm, color: c_int, key: c_int, newcomm: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_split";
    ffi(CALL, c, || {
        // SAFETY: `newcomm` is MPI_Comm_split's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "newcomm", newcomm)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_COMM_NULL;
        let cm = comm(c, CALL)?;
        *o = new_comm_or_null(create::split(&cm, (color != MPI_UNDEFINED).then_some(color), key)?, c);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_split_type(c: MPI_Comm, split_type: c_int, key: c_int, info: MPI_Info, newcomm: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_split_type";
    ffi(CALL, c, || {
        // SAFETY: `newcomm` is MPI_Comm_split_type's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "newcomm", newcomm)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_COMM_NULL;
        let cm = comm(c, CALL)?;
        let split_type = match split_type {
            MPI_UNDEFINED => None,
            t => Some(crate::abi::split_type_from_value(t).ok_or_else(|| bad(ErrorClass::Arg, CALL, "split_type", format!("{t} is not an MPI_COMM_TYPE_* value nor MPI_UNDEFINED")))?),
        };
        info_arg(CALL, info)?;
        // The guided splits name their resource in the info (MPI-4.0 `mpi_hw_resource_type`).
        let resource = if info == MPI_INFO_NULL {
            None
        } else {
            crate::conv::with_info(CALL, info, |kv| Ok(kv.iter().find(|(k, _)| k == "mpi_hw_resource_type").map(|(_, v)| v.clone())))?
        };
        let (new, chosen) = create::split_type_hw(&cm, split_type, key, resource.as_deref())?;
        *o = new_comm_or_null(new, c);
        if let Some(name) = chosen.filter(|_| *o != MPI_COMM_NULL) {
            // The unguided split tells which resource type it split by.
            state().comm_info.insert(*o, vec![("mpi_hw_resource_type".to_string(), name.to_string())]);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_create(c: MPI_Comm, g: MPI_Group, newcomm: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_create";
    ffi(CALL, c, || {
        // SAFETY: `newcomm` is MPI_Comm_create's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "newcomm", newcomm)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_COMM_NULL;
        let cm = comm(c, CALL)?;
        let g = group(g, CALL, "group")?;
        *o = new_comm_or_null(create::create(&cm, g.world_ranks())?, c);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_create_group(c: MPI_Comm, g: MPI_Group, tag: c_int, newcomm: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_create_group";
    ffi(CALL, c, || {
        // SAFETY: `newcomm` is MPI_Comm_create_group's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "newcomm", newcomm)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_COMM_NULL;
        let cm = comm(c, CALL)?;
        let g = group(g, CALL, "group")?;
        if !(0..=oxmpi_core::TAG_UB).contains(&tag) {
            return Err(bad(ErrorClass::Tag, CALL, "tag", format!("{tag} is not in 0..=MPI_TAG_UB")));
        }
        // Collective over the group's members only; the others get MPI_COMM_NULL.
        *o = new_comm_or_null(create::create_group(&cm, g.world_ranks(), tag)?, c);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_free(c: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_free";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `comm` (`c`) is MPI_Comm_free's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "comm", c)? };
        route_to(*h);
        if *h == MPI_COMM_WORLD || *h == MPI_COMM_SELF {
            return Err(bad(ErrorClass::Comm, CALL, "comm", "a predefined communicator cannot be freed"));
        }
        let cm = comm(*h, CALL)?;
        with_cb_comm(*h, || oxmpi_core::comm::free_attributes(&cm))?;
        // A buffer attached to the communicator (MPI_Comm_attach_buffer) is
        // detached first: its buffered messages leave, and a later communicator
        // reusing the context id does not inherit it.
        if oxmpi_core::pt2pt::comm_buffer_attached(&cm)? {
            oxmpi_core::pt2pt::comm_buffer_detach(&cm)?;
        }
        {
            let mut st = state();
            st.comms.remove(*h);
            st.comm_errhandler.remove(h);
            st.comm_info.remove(h);
        }
        crate::conv::forget_comm(*h, &cm);
        // The engine gives the context id back when the last clone goes.
        drop(cm);
        route_to(NO_COMM);
        *h = MPI_COMM_NULL;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_remote_size(c: MPI_Comm, size: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Comm_remote_size";
    ffi(CALL, c, || {
        let cm = require_inter(CALL, c)?;
        // SAFETY: `size` is MPI_Comm_remote_size's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "size", size)? } = cm.peer_group_size();
        Ok(())
    })
}

fn require_inter(call: &str, c: MPI_Comm) -> R<Comm> {
    let cm = comm(c, call)?;
    if !cm.is_inter() {
        return Err(bad(ErrorClass::Comm, call, "comm", "not an intercommunicator"));
    }
    Ok(cm)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_group(c: MPI_Comm, g: *mut MPI_Group) -> c_int {
    const CALL: &str = "MPI_Comm_group";
    ffi(CALL, c, || {
        let cm = comm(c, CALL)?;
        // SAFETY: `group` (`g`) is MPI_Comm_group's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "group", g)? };
        *o = new_group(Group::from_world_ranks(cm.group().to_vec()));
        crate::conv::tag_group(*o, crate::conv::comm_session(c));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_remote_group(c: MPI_Comm, g: *mut MPI_Group) -> c_int {
    const CALL: &str = "MPI_Comm_remote_group";
    ffi(CALL, c, || {
        let cm = require_inter(CALL, c)?;
        // SAFETY: `group` (`g`) is MPI_Comm_remote_group's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "group", g)? };
        *o = new_group(Group::from_world_ranks(cm.peer_group().to_vec()));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Intercomm_create(local: MPI_Comm, local_leader: c_int, peer: MPI_Comm, remote_leader: c_int, tag: c_int, newintercomm: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Intercomm_create";
    ffi(CALL, local, || {
        // SAFETY: `newintercomm` is MPI_Intercomm_create's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "newintercomm", newintercomm)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_COMM_NULL;
        let lc = comm(local, CALL)?;
        // peer_comm is significant at the local leader only.
        let pc = if lc.rank() == local_leader {
            Some(comm(peer, CALL).map_err(|_| bad(ErrorClass::Comm, CALL, "peer_comm", format!("{peer:#x} is not a valid communicator at the local leader")))?)
        } else {
            comm(peer, CALL).ok()
        };
        let ic = inter::intercomm_create(&lc, local_leader, pc.as_ref(), remote_leader, tag)?;
        *o = new_comm(ic, local);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Intercomm_merge(c: MPI_Comm, high: c_int, newintracomm: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Intercomm_merge";
    ffi(CALL, c, || {
        // SAFETY: `newintracomm` is MPI_Intercomm_merge's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "newintracomm", newintracomm)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_COMM_NULL;
        let cm = require_inter(CALL, c)?;
        *o = new_comm(inter::intercomm_merge(&cm, high != 0)?, c);
        Ok(())
    })
}

// ----- groups --------------------------------------------------------------------------------


#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_size(g: MPI_Group, size: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Group_size";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `size` is MPI_Group_size's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "size", size)? } = group(g, CALL, "group")?.size();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_rank(g: MPI_Group, rank: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Group_rank";
    ffi(CALL, NO_COMM, || {
        let g = group(g, CALL, "group")?;
        let me = runtime::engine()?.rank();
        // SAFETY: `rank` is MPI_Group_rank's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "rank", rank)? } = g.rank_of_world(me).unwrap_or(MPI_UNDEFINED);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_translate_ranks(g1: MPI_Group, n: c_int, ranks1: *const c_int, g2: MPI_Group, ranks2: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Group_translate_ranks";
    ffi(CALL, NO_COMM, || {
        let a = group(g1, CALL, "group1")?;
        let b = group(g2, CALL, "group2")?;
        let n = nonneg(CALL, "n", n, ErrorClass::Arg)?;
        // SAFETY: MPI_Group_translate_ranks's `ranks1` holds `n` ranks.
        let r1 = unsafe { ints(CALL, "ranks1", ranks1, n)? };
        // SAFETY: MPI_Group_translate_ranks's `ranks2` is an OUT array of `n` ints, unaliased.
        let r2 = unsafe { ints_mut(CALL, "ranks2", ranks2, n)? };
        for (o, r) in r2.iter_mut().zip(a.translate_ranks(r1, &b)?) {
            *o = r.unwrap_or(MPI_UNDEFINED);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_compare(g1: MPI_Group, g2: MPI_Group, result: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Group_compare";
    ffi(CALL, NO_COMM, || {
        let a = group(g1, CALL, "group1")?;
        let b = group(g2, CALL, "group2")?;
        // SAFETY: `result` is MPI_Group_compare's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "result", result)? } = crate::abi::comparison_value(a.compare(&b));
        Ok(())
    })
}

/// # Safety
/// `newgroup` is NULL or valid to write one `MPI_Group`, unaliased (the C caller's argument).
unsafe fn group_op(call: &'static str, g1: MPI_Group, g2: MPI_Group, newgroup: *mut MPI_Group, f: fn(&Group, &Group) -> Group) -> c_int {
    ffi(call, NO_COMM, || {
        // SAFETY: `newgroup` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "newgroup", newgroup)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_GROUP_NULL;
        let a = group(g1, call, "group1")?;
        let b = group(g2, call, "group2")?;
        let session = crate::conv::common_session(call, &[("group1", g1), ("group2", g2)])?;
        *o = new_group(f(&a, &b));
        crate::conv::tag_group(*o, session);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_union(g1: MPI_Group, g2: MPI_Group, newgroup: *mut MPI_Group) -> c_int {
    // SAFETY: `newgroup` is MPI_Group_union's OUT argument, as `group_op` requires.
    unsafe { group_op("MPI_Group_union", g1, g2, newgroup, Group::union) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_intersection(g1: MPI_Group, g2: MPI_Group, newgroup: *mut MPI_Group) -> c_int {
    // SAFETY: `newgroup` is MPI_Group_intersection's OUT argument, as `group_op` requires.
    unsafe { group_op("MPI_Group_intersection", g1, g2, newgroup, Group::intersection) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_difference(g1: MPI_Group, g2: MPI_Group, newgroup: *mut MPI_Group) -> c_int {
    // SAFETY: `newgroup` is MPI_Group_difference's OUT argument, as `group_op` requires.
    unsafe { group_op("MPI_Group_difference", g1, g2, newgroup, Group::difference) }
}

unsafe fn group_sel(call: &'static str, g: MPI_Group, n: c_int, ranks: *const c_int, newgroup: *mut MPI_Group, excl: bool) -> c_int {
    let h = g;
    ffi(call, NO_COMM, || {
        // SAFETY: `newgroup` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "newgroup", newgroup)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_GROUP_NULL;
        let g = group(g, call, "group")?;
        let n = nonneg(call, "n", n, ErrorClass::Arg)?;
        // SAFETY: MPI_Group_incl/excl's `ranks` holds `n` ranks.
        let r = unsafe { ints(call, "ranks", ranks, n)? };
        *o = new_group(if excl { g.excl(r)? } else { g.incl(r)? });
        crate::conv::tag_group(*o, crate::conv::group_session(h));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_incl(g: MPI_Group, n: c_int, ranks: *const c_int, newgroup: *mut MPI_Group) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `group_sel` needs what MPI_Group_incl demands of them.
    unsafe { group_sel("MPI_Group_incl", g, n, ranks, newgroup, false) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_excl(g: MPI_Group, n: c_int, ranks: *const c_int, newgroup: *mut MPI_Group) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `group_sel` needs what MPI_Group_excl demands of them.
    unsafe { group_sel("MPI_Group_excl", g, n, ranks, newgroup, true) }
}

unsafe fn group_range(call: &'static str, g: MPI_Group, n: c_int, ranges: *mut c_int, newgroup: *mut MPI_Group, excl: bool) -> c_int {
    let h = g;
    ffi(call, NO_COMM, || {
        // SAFETY: `newgroup` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "newgroup", newgroup)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_GROUP_NULL;
        let g = group(g, call, "group")?;
        let n = nonneg(call, "n", n, ErrorClass::Arg)?;
        // SAFETY: MPI_Group_range_incl/excl's `ranges` holds `n` triplets, `3 * n` ints.
        let flat = unsafe { ints(call, "ranges", ranges, 3 * n)? };
        let triplets: Vec<[i32; 3]> = flat.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
        *o = new_group(if excl { g.range_excl(&triplets)? } else { g.range_incl(&triplets)? });
        crate::conv::tag_group(*o, crate::conv::group_session(h));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_range_incl(g: MPI_Group, n: c_int, ranges: *mut c_int, newgroup: *mut MPI_Group) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `group_range` needs what MPI_Group_range_incl demands of them.
    unsafe { group_range("MPI_Group_range_incl", g, n, ranges, newgroup, false) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_range_excl(g: MPI_Group, n: c_int, ranges: *mut c_int, newgroup: *mut MPI_Group) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `group_range` needs what MPI_Group_range_excl demands of them.
    unsafe { group_range("MPI_Group_range_excl", g, n, ranges, newgroup, true) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_free(g: *mut MPI_Group) -> c_int {
    const CALL: &str = "MPI_Group_free";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `group` (`g`) is MPI_Group_free's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "group", g)? };
        // Group operations hand out MPI_GROUP_EMPTY for empty results, so
        // freeing it is allowed (and does nothing).
        if *h != MPI_GROUP_EMPTY {
            group(*h, CALL, "group")?;
            state().groups.remove(*h);
            crate::conv::forget_group(*h);
        }
        *h = MPI_GROUP_NULL;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_c2f(g: MPI_Group) -> c_int {
    crate::conv::handles::c2f_predefined_or(&state().groups, g)
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_f2c(f: c_int) -> MPI_Group {
    crate::conv::handles::f2c_predefined_or(&state().groups, f)
}

// ----- Cartesian topologies --------------------------------------------------------------------

fn cart_of(call: &str, c: MPI_Comm) -> R<(Comm, Cart)> {
    let cm = comm(c, call)?;
    let cart = Topology::require_cart(cm.topology(), call)?.clone();
    Ok((cm, cart))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Dims_create";
    ffi(CALL, NO_COMM, || {
        let n = nonneg(CALL, "ndims", ndims, ErrorClass::Dims)?;
        // SAFETY: MPI_Dims_create's `dims` is an INOUT array of `ndims` = `n` ints.
        let d = unsafe { ints_mut(CALL, "dims", dims, n)? };
        topo::dims_create(nnodes, d)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_create(c: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, reorder: c_int, comm_cart: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Cart_create";
    ffi(CALL, c, || {
        // SAFETY: `comm_cart` is MPI_Cart_create's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "comm_cart", comm_cart)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_COMM_NULL;
        let cm = comm(c, CALL)?;
        let n = nonneg(CALL, "ndims", ndims, ErrorClass::Dims)?;
        // SAFETY: MPI_Cart_create's `dims` holds `ndims` = `n` ints.
        let d = unsafe { ints(CALL, "dims", dims, n)? };
        // SAFETY: MPI_Cart_create's `periods` holds `ndims` = `n` ints.
        let p: Vec<bool> = unsafe { ints(CALL, "periods", periods, n)? }.iter().map(|&x| x != 0).collect();
        *o = new_comm_or_null(topology::cart_create(&cm, d, &p, reorder != 0)?, c);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cartdim_get(c: MPI_Comm, ndims: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Cartdim_get";
    ffi(CALL, c, || {
        let (_, cart) = cart_of(CALL, c)?;
        // SAFETY: `ndims` is MPI_Cartdim_get's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "ndims", ndims)? } = cart.ndims() as c_int;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_get(c: MPI_Comm, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Cart_get";
    ffi(CALL, c, || {
        let (cm, cart) = cart_of(CALL, c)?;
        let n = cart.ndims();
        if (maxdims as i64) < n as i64 {
            return Err(bad(ErrorClass::Arg, CALL, "maxdims", format!("{maxdims} is less than the {n} dimensions of the grid")));
        }
        let xs = cart.coords(cm.rank())?;
        // SAFETY: MPI_Cart_get's OUT arrays hold `maxdims` >= `n` ints (checked above), unaliased.
        unsafe { ints_mut(CALL, "dims", dims, n)? }.copy_from_slice(&cart.dims);
        // SAFETY: as for `dims`.
        for (p, &b) in unsafe { ints_mut(CALL, "periods", periods, n)? }.iter_mut().zip(&cart.periods) {
            *p = b as c_int;
        }
        // SAFETY: as for `dims`.
        unsafe { ints_mut(CALL, "coords", coords, n)? }.copy_from_slice(&xs);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_rank(c: MPI_Comm, coords: *const c_int, rank: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Cart_rank";
    ffi(CALL, c, || {
        let (_, cart) = cart_of(CALL, c)?;
        // SAFETY: MPI_Cart_rank's `coords` holds one int per dimension of the grid.
        let xs = unsafe { ints(CALL, "coords", coords, cart.ndims())? };
        // SAFETY: `rank` is MPI_Cart_rank's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "rank", rank)? } = cart.rank(xs)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_coords(c: MPI_Comm, rank: c_int, maxdims: c_int, coords: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Cart_coords";
    ffi(CALL, c, || {
        let (_, cart) = cart_of(CALL, c)?;
        let n = cart.ndims();
        if (maxdims as i64) < n as i64 {
            return Err(bad(ErrorClass::Arg, CALL, "maxdims", format!("{maxdims} is less than the {n} dimensions of the grid")));
        }
        let xs = cart.coords(rank)?;
        // SAFETY: MPI_Cart_coords's OUT `coords` holds `maxdims` >= `n` ints (checked above), unaliased.
        unsafe { ints_mut(CALL, "coords", coords, n)? }.copy_from_slice(&xs);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_shift(c: MPI_Comm, direction: c_int, disp: c_int, source: *mut c_int, dest: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Cart_shift";
    ffi(CALL, c, || {
        let (cm, cart) = cart_of(CALL, c)?;
        // SAFETY: `rank_source` (`source`) is MPI_Cart_shift's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let s = unsafe { out(CALL, "rank_source", source)? };
        // SAFETY: `rank_dest` (`dest`) is MPI_Cart_shift's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let d = unsafe { out(CALL, "rank_dest", dest)? };
        (*s, *d) = cart.shift(cm.rank(), direction, disp)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_sub(c: MPI_Comm, remain: *const c_int, newcomm: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Cart_sub";
    ffi(CALL, c, || {
        // SAFETY: `newcomm` is MPI_Cart_sub's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "newcomm", newcomm)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_COMM_NULL;
        let (cm, cart) = cart_of(CALL, c)?;
        // SAFETY: MPI_Cart_sub's `remain_dims` holds one int per dimension of the grid.
        let r: Vec<bool> = unsafe { ints(CALL, "remain_dims", remain, cart.ndims())? }.iter().map(|&x| x != 0).collect();
        *o = new_comm(topology::cart_sub(&cm, &r)?, c);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_map(c: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, newrank: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Cart_map";
    ffi(CALL, c, || {
        let cm = comm(c, CALL)?;
        let n = nonneg(CALL, "ndims", ndims, ErrorClass::Dims)?;
        // SAFETY: MPI_Cart_map's `dims` holds `ndims` = `n` ints.
        let d = unsafe { ints(CALL, "dims", dims, n)? };
        // SAFETY: MPI_Cart_map's `periods` holds `ndims` = `n` ints.
        let p: Vec<bool> = unsafe { ints(CALL, "periods", periods, n)? }.iter().map(|&x| x != 0).collect();
        // SAFETY: `newrank` is MPI_Cart_map's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "newrank", newrank)? } = Cart::map(d, &p, cm.rank(), cm.size())?.unwrap_or(MPI_UNDEFINED);
        Ok(())
    })
}

// ----- graph topologies ----------------------------------------------------------------------------

fn graph_of(call: &str, c: MPI_Comm) -> R<Graph> {
    let cm = comm(c, call)?;
    let g = Topology::require_graph(cm.topology(), call)?.clone();
    Ok(g)
}

/// The `index` and `edges` arrays of a graph description.
///
/// # Safety
/// `index` holds `nnodes` ints and `edges` `index[nnodes - 1]` ints (MPI's graph
/// description), both valid and unwritten for `'a`; see [`ints`].
unsafe fn graph_arrays<'a>(call: &str, nnodes: c_int, index: *const c_int, edges: *const c_int) -> R<(&'a [c_int], &'a [c_int])> {
    let n = nonneg(call, "nnodes", nnodes, ErrorClass::Arg)?;
    // SAFETY: `index` holds `nnodes` = `n` ints, by this function's contract.
    let idx = unsafe { ints(call, "index", index, n)? };
    let ne = Graph::edge_count(call, idx)?;
    // SAFETY: `edges` holds `index[nnodes - 1]` = `ne` ints, by this function's contract.
    let e = unsafe { ints(call, "edges", edges, ne)? };
    Ok((idx, e))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graph_create(c: MPI_Comm, nnodes: c_int, index: *const c_int, edges: *const c_int, reorder: c_int, comm_graph: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Graph_create";
    ffi(CALL, c, || {
        // SAFETY: `comm_graph` is MPI_Graph_create's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "comm_graph", comm_graph)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_COMM_NULL;
        let cm = comm(c, CALL)?;
        // SAFETY: MPI_Graph_create's `index` and `edges` are the C caller's graph description arrays, as `graph_arrays` requires.
        let (idx, e) = unsafe { graph_arrays(CALL, nnodes, index, edges)? };
        *o = new_comm_or_null(topology::graph_create(&cm, nnodes, idx, e, reorder != 0)?, c);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graphdims_get(c: MPI_Comm, nnodes: *mut c_int, nedges: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Graphdims_get";
    ffi(CALL, c, || {
        let g = graph_of(CALL, c)?;
        // SAFETY: `nnodes` is MPI_Graphdims_get's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "nnodes", nnodes)? } = g.nnodes();
        // SAFETY: `nedges` is MPI_Graphdims_get's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "nedges", nedges)? } = g.nedges();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graph_get(c: MPI_Comm, maxindex: c_int, maxedges: c_int, index: *mut c_int, edges: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Graph_get";
    ffi(CALL, c, || {
        let g = graph_of(CALL, c)?;
        let ni = g.index.len().min(maxindex.max(0) as usize);
        let ne = g.edges.len().min(maxedges.max(0) as usize);
        // SAFETY: MPI_Graph_get's OUT `index` holds `maxindex` >= `ni` ints, unaliased.
        unsafe { ints_mut(CALL, "index", index, ni)? }.copy_from_slice(&g.index[..ni]);
        // SAFETY: MPI_Graph_get's OUT `edges` holds `maxedges` >= `ne` ints, unaliased.
        unsafe { ints_mut(CALL, "edges", edges, ne)? }.copy_from_slice(&g.edges[..ne]);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graph_neighbors_count(c: MPI_Comm, rank: c_int, nneighbors: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Graph_neighbors_count";
    ffi(CALL, c, || {
        let g = graph_of(CALL, c)?;
        // SAFETY: `nneighbors` is MPI_Graph_neighbors_count's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "nneighbors", nneighbors)? } = g.neighbors_count(rank)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graph_neighbors(c: MPI_Comm, rank: c_int, maxneighbors: c_int, neighbors: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Graph_neighbors";
    ffi(CALL, c, || {
        let g = graph_of(CALL, c)?;
        let nb = g.neighbors(rank)?;
        let n = nb.len().min(maxneighbors.max(0) as usize);
        // SAFETY: MPI_Graph_neighbors's OUT `neighbors` holds `maxneighbors` >= `n` ints, unaliased.
        unsafe { ints_mut(CALL, "neighbors", neighbors, n)? }.copy_from_slice(&nb[..n]);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graph_map(c: MPI_Comm, nnodes: c_int, index: *const c_int, edges: *const c_int, newrank: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Graph_map";
    ffi(CALL, c, || {
        let cm = comm(c, CALL)?;
        // SAFETY: MPI_Graph_map's `index` and `edges` are the C caller's graph description arrays, as `graph_arrays` requires.
        let (idx, e) = unsafe { graph_arrays(CALL, nnodes, index, edges)? };
        // SAFETY: `newrank` is MPI_Graph_map's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "newrank", newrank)? } = Graph::map(nnodes, idx, e, cm.rank(), cm.size())?.unwrap_or(MPI_UNDEFINED);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Topo_test(c: MPI_Comm, status: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Topo_test";
    ffi(CALL, c, || {
        let cm = comm(c, CALL)?;
        // SAFETY: `status` is MPI_Topo_test's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "status", status)? } = Topology::topo_test(cm.topology()).map_or(MPI_UNDEFINED, crate::abi::topology_kind_value);
        Ok(())
    })
}

// ----- distributed graph topologies ----------------------------------------------------------------

/// A weights argument for `n` edges: MPI_UNWEIGHTED is `None`, MPI_WEIGHTS_EMPTY
/// an empty list.
///
/// # Safety
/// Unless `p` is one of those two special values, as [`ints`] with `n` entries.
unsafe fn weights(call: &str, arg: &str, p: *const c_int, n: usize) -> R<Option<Vec<i32>>> {
    if p as usize == MPI_UNWEIGHTED {
        return Ok(None);
    }
    if p as usize == MPI_WEIGHTS_EMPTY {
        if n > 0 {
            return Err(bad(ErrorClass::Arg, call, arg, format!("MPI_WEIGHTS_EMPTY given for {n} edges")));
        }
        return Ok(Some(Vec::new()));
    }
    // SAFETY: not a special value, so `p` holds `n` weights by this function's contract.
    Ok(Some(unsafe { ints(call, arg, p, n)? }.to_vec()))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Dist_graph_create(
    c: MPI_Comm,
    n: c_int,
    sources: *const c_int,
    degrees: *const c_int,
    destinations: *const c_int,
    w: *const c_int,
    info: MPI_Info,
    reorder: c_int,
    comm_dist_graph: *mut MPI_Comm,
) -> c_int {
    const CALL: &str = "MPI_Dist_graph_create";
    ffi(CALL, c, || {
        // SAFETY: `comm_dist_graph` is MPI_Dist_graph_create's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "comm_dist_graph", comm_dist_graph)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_COMM_NULL;
        let cm = comm(c, CALL)?;
        info_arg(CALL, info)?;
        let n = nonneg(CALL, "n", n, ErrorClass::Arg)?;
        // SAFETY: MPI_Dist_graph_create's `sources` holds `n` ints.
        let sources = unsafe { ints(CALL, "sources", sources, n)? }.to_vec();
        // SAFETY: MPI_Dist_graph_create's `degrees` holds `n` ints.
        let degrees = unsafe { ints(CALL, "degrees", degrees, n)? }.to_vec();
        if let Some((i, &d)) = degrees.iter().enumerate().find(|(_, &d)| d < 0) {
            return Err(bad(ErrorClass::Arg, CALL, "degrees", format!("degrees[{i}] = {d} is negative")));
        }
        let total: usize = degrees.iter().map(|&d| d as usize).sum();
        // SAFETY: MPI_Dist_graph_create's `destinations` holds sum(`degrees`) = `total` ints.
        let destinations = unsafe { ints(CALL, "destinations", destinations, total)? }.to_vec();
        // SAFETY: MPI_Dist_graph_create's `weights` is a special value or holds `total` ints, as `weights` requires.
        let weights = unsafe { weights(CALL, "weights", w, total)? };
        let edges = DistGraphEdges { sources, degrees, destinations, weights };
        *o = new_comm(topology::dist_graph_create(&cm, &edges, reorder != 0)?, c);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Dist_graph_create_adjacent(
    c: MPI_Comm,
    indegree: c_int,
    sources: *const c_int,
    sourceweights: *const c_int,
    outdegree: c_int,
    destinations: *const c_int,
    destweights: *const c_int,
    info: MPI_Info,
    reorder: c_int,
    comm_dist_graph: *mut MPI_Comm,
) -> c_int {
    const CALL: &str = "MPI_Dist_graph_create_adjacent";
    ffi(CALL, c, || {
        // SAFETY: `comm_dist_graph` is MPI_Dist_graph_create_adjacent's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "comm_dist_graph", comm_dist_graph)? };
        // A failing constructor leaves the null handle (MPI-4.1).
        *o = MPI_COMM_NULL;
        let cm = comm(c, CALL)?;
        info_arg(CALL, info)?;
        let ni = nonneg(CALL, "indegree", indegree, ErrorClass::Arg)?;
        let no = nonneg(CALL, "outdegree", outdegree, ErrorClass::Arg)?;
        // SAFETY: MPI_Dist_graph_create_adjacent's `sources` holds `indegree` = `ni` ints.
        let s = unsafe { ints(CALL, "sources", sources, ni)? };
        // SAFETY: `sourceweights` is a special value or holds `indegree` = `ni` ints.
        let sw = unsafe { weights(CALL, "sourceweights", sourceweights, ni)? };
        // SAFETY: `destinations` holds `outdegree` = `no` ints.
        let d = unsafe { ints(CALL, "destinations", destinations, no)? };
        // SAFETY: `destweights` is a special value or holds `outdegree` = `no` ints.
        let dw = unsafe { weights(CALL, "destweights", destweights, no)? };
        *o = new_comm(topology::dist_graph_create_adjacent(&cm, s, sw.as_deref(), d, dw.as_deref(), reorder != 0)?, c);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Dist_graph_neighbors_count(c: MPI_Comm, indegree: *mut c_int, outdegree: *mut c_int, weighted: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Dist_graph_neighbors_count";
    ffi(CALL, c, || {
        let cm = comm(c, CALL)?;
        let g = Topology::require_dist_graph(cm.topology(), CALL)?;
        // SAFETY: `indegree` is MPI_Dist_graph_neighbors_count's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "indegree", indegree)? } = g.indegree();
        // SAFETY: `outdegree` is MPI_Dist_graph_neighbors_count's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "outdegree", outdegree)? } = g.outdegree();
        // SAFETY: `weighted` is MPI_Dist_graph_neighbors_count's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "weighted", weighted)? } = g.is_weighted() as c_int;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Dist_graph_neighbors(
    c: MPI_Comm,
    maxindegree: c_int,
    sources: *mut c_int,
    sourceweights: *mut c_int,
    maxoutdegree: c_int,
    destinations: *mut c_int,
    destweights: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Dist_graph_neighbors";
    ffi(CALL, c, || {
        let cm = comm(c, CALL)?;
        let g = Topology::require_dist_graph(cm.topology(), CALL)?.clone();
        let ni = g.sources.len().min(maxindegree.max(0) as usize);
        let no = g.destinations.len().min(maxoutdegree.max(0) as usize);
        // SAFETY: MPI_Dist_graph_neighbors's OUT `sources` holds `maxindegree` >= `ni` ints, unaliased.
        unsafe { ints_mut(CALL, "sources", sources, ni)? }.copy_from_slice(&g.sources[..ni]);
        // SAFETY: MPI_Dist_graph_neighbors's OUT `destinations` holds `maxoutdegree` >= `no` ints, unaliased.
        unsafe { ints_mut(CALL, "destinations", destinations, no)? }.copy_from_slice(&g.destinations[..no]);
        let given = |p: *mut c_int| !p.is_null() && p as usize != MPI_UNWEIGHTED && p as usize != MPI_WEIGHTS_EMPTY;
        if let Some(w) = &g.source_weights {
            if given(sourceweights) {
                // SAFETY: OUT `sourceweights` (not MPI_UNWEIGHTED here) holds `maxindegree` >= `ni` ints, unaliased.
                unsafe { ints_mut(CALL, "sourceweights", sourceweights, ni)? }.copy_from_slice(&w[..ni]);
            }
        }
        if let Some(w) = &g.dest_weights {
            if given(destweights) {
                // SAFETY: OUT `destweights` (not MPI_UNWEIGHTED here) holds `maxoutdegree` >= `no` ints, unaliased.
                unsafe { ints_mut(CALL, "destweights", destweights, no)? }.copy_from_slice(&w[..no]);
            }
        }
        Ok(())
    })
}

// ----- MPIX_Topo_cluster_info -------------------------------------------------------------------------

/// MPIX_Topo_cluster_info: the hierarchy levels this rank sits in (level 0:
/// the whole job; level 1 when the job spans hosts: the host), with the
/// cluster id and the rank inside the cluster per level. The arrays hold
/// MPIX_TOPO_CLUSTER_MAX_LEVELS entries.
#[no_mangle]
pub unsafe extern "C" fn PMPIX_Topo_cluster_info(c: MPI_Comm, levels: *mut c_int, my_cluster: *mut c_int, my_rank: *mut c_int) -> c_int {
    const CALL: &str = "MPIX_Topo_cluster_info";
    ffi(CALL, c, || {
        comm(c, CALL)?;
        let info = runtime::engine()?.cluster_info();
        let n = info.len().min(MPIX_TOPO_CLUSTER_MAX_LEVELS as usize);
        // SAFETY: `levels` is MPIX_Topo_cluster_info's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let l = unsafe { out(CALL, "levels", levels)? };
        // SAFETY: MPIX_Topo_cluster_info's OUT arrays hold MPIX_TOPO_CLUSTER_MAX_LEVELS >= `n` ints, unaliased.
        let ids = unsafe { ints_mut(CALL, "my_cluster", my_cluster, n)? };
        // SAFETY: as for `my_cluster`.
        let ranks = unsafe { ints_mut(CALL, "my_rank", my_rank, n)? };
        for (i, lv) in info.iter().take(n).enumerate() {
            ids[i] = lv.cluster_id;
            ranks[i] = lv.rank;
        }
        *l = n as c_int;
        Ok(())
    })
}

#[allow(dead_code)]
fn _unused(_: *mut c_void) {}
