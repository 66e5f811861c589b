//! Communicators made at run time (dup, split, create, intercommunicators,
//! free), communicator info hints. (Groups: `group.rs`; topologies: `topo.rs`.)
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
//!
//! Files: `from_group` (communicators from groups, MPI-4.0).

use std::ffi::{c_int, c_void};

use oxmpi_core::comm::{create, inter};
use oxmpi_core::error::ErrorClass;
use oxmpi_core::group::Group;
use oxmpi_core::Comm;

use crate::abi::*;
use crate::conv::errors::{bad, ffi, out, route_to, NO_COMM, R};
use crate::conv::handles::state;
use crate::conv::info_arg;
use crate::conv::{comm, group, new_comm, new_comm_or_null, new_group, with_cb_comm};
use crate::types::*;

mod from_group;

pub use from_group::*;

// ----- communicator constructors and destructor -----------------------------------------

/// MPI_Comm_dup (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new handle).
pub fn comm_dup(call: &'static str, c: MPI_Comm) -> R<MPI_Comm> {
    let cm = comm(c, call)?;
    let d = with_cb_comm(c, || create::dup(&cm))?;
    let h = new_comm(d, c);
    let hints = state().comm_info.get(&c).cloned();
    if let Some(kv) = hints {
        state().comm_info.insert(h, kv);
    }
    Ok(h)
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
/// MPI_Comm_get_info (abi.txt `out(info_used)`: the generated `PMPI_x` checks `info_used` first).
pub fn comm_get_info(call: &'static str, c: MPI_Comm, o: &mut MPI_Info) -> R<()> {
    comm(c, call)?;
    let mut st = state();
    let kv = st.comm_info.get(&c).cloned().unwrap_or_default();
    *o = st.infos.insert(kv);
    Ok(())
}

/// MPI_Comm_dup_with_info (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new handle).
pub fn comm_dup_with_info(call: &'static str, c: MPI_Comm, info: MPI_Info) -> R<MPI_Comm> {
    let cm = comm(c, call)?;
    info_arg(call, info)?;
    let kv = info_pairs(call, info)?;
    let d = with_cb_comm(c, || create::dup(&cm)).map_err(|e| {
        oxmpi_core::MpiError::new(e.class, e.message.replacen("MPI_Comm_dup", call, 1))
    })?;
    let h = new_comm(d, c);
    state().comm_info.insert(h, kv);
    Ok(h)
}

/// MPI_Comm_idup: returns at once; the ranks agree on the new context while
/// the progress engine runs (see oxmpi_core::comm::context), and `*newcomm`
/// is written when the request completes (wait, test, their any/all/some
/// forms, or MPI_Request_get_status), as MPI makes it valid only then.
/// (abi.txt `nonnull(newcomm) out(request)`: the generated `PMPI_x` checks them first.)
///
/// # Safety
/// `newcomm` is writable and unaliased until the request completes (the C caller's OUT
/// argument; MPI keeps it valid that long).
pub unsafe fn comm_idup(
    call: &'static str,
    c: MPI_Comm,
    newcomm: *mut MPI_Comm,
    request: &mut MPI_Request,
) -> R<()> {
    idup(call, c, None, newcomm, request)
}

/// MPI_Comm_idup_with_info: as MPI_Comm_idup, with `info`'s hints on the new communicator.
///
/// # Safety
/// As [`comm_idup`].
pub unsafe fn comm_idup_with_info(
    call: &'static str,
    c: MPI_Comm,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
    request: &mut MPI_Request,
) -> R<()> {
    idup(call, c, Some(info), newcomm, request)
}

/// `newcomm` (non-NULL) is written when the request completes, by its hook.
fn idup(
    call: &'static str,
    c: MPI_Comm,
    info: Option<MPI_Info>,
    newcomm: *mut MPI_Comm,
    ro: &mut MPI_Request,
) -> R<()> {
    let hints = match info {
        Some(i) => {
            info_arg(call, i)?;
            Some(info_pairs(call, i)?)
        }
        None => state().comm_info.get(&c).cloned(),
    };
    let cm = comm(c, call)?;
    let (r, pending) = with_cb_comm(c, || create::idup(&cm)).map_err(|e| {
        oxmpi_core::MpiError::new(e.class, e.message.replacen("MPI_Comm_idup", call, 1))
    })?;
    let hook = crate::conv::handles::Hook::Idup(crate::conv::handles::PendingIdup {
        pending,
        parent: c,
        hints,
        newcomm: newcomm as usize,
    });
    *ro = crate::conv::new_hooked_request(r, c, hook);
    Ok(())
}

/// MPI_Comm_split (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new handle).
pub fn comm_split(call: &'static str, c: MPI_Comm, color: c_int, key: c_int) -> R<MPI_Comm> {
    let cm = comm(c, call)?;
    Ok(new_comm_or_null(
        create::split(&cm, (color != MPI_UNDEFINED).then_some(color), key)?,
        c,
    ))
}

/// MPI_Comm_split_type (abi.txt `out(newcomm)`: the generated `PMPI_x` checks `newcomm` first).
pub fn comm_split_type(
    call: &'static str,
    c: MPI_Comm,
    split_type: c_int,
    key: c_int,
    info: MPI_Info,
    o: &mut MPI_Comm,
) -> R<()> {
    *o = MPI_COMM_NULL;
    let cm = comm(c, call)?;
    let split_type = match split_type {
        MPI_UNDEFINED => None,
        t => Some(crate::abi::split_type_from_value(t).ok_or_else(|| {
            bad(
                ErrorClass::Arg,
                call,
                "split_type",
                format!("{t} is not an MPI_COMM_TYPE_* value nor MPI_UNDEFINED"),
            )
        })?),
    };
    info_arg(call, info)?;
    // The guided splits name their resource in the info (MPI-4.0 `mpi_hw_resource_type`).
    let resource = if info == MPI_INFO_NULL {
        None
    } else {
        crate::conv::with_info(call, info, |kv| {
            Ok(kv
                .iter()
                .find(|(k, _)| k == "mpi_hw_resource_type")
                .map(|(_, v)| v.clone()))
        })?
    };
    let (new, chosen) = create::split_type_hw(&cm, split_type, key, resource.as_deref())?;
    *o = new_comm_or_null(new, c);
    if let Some(name) = chosen.filter(|_| *o != MPI_COMM_NULL) {
        // The unguided split tells which resource type it split by.
        state().comm_info.insert(
            *o,
            vec![("mpi_hw_resource_type".to_string(), name.to_string())],
        );
    }
    Ok(())
}

/// MPI_Comm_create (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new handle).
pub fn comm_create(call: &'static str, c: MPI_Comm, g: MPI_Group) -> R<MPI_Comm> {
    let cm = comm(c, call)?;
    let g = group(g, call, "group")?;
    Ok(new_comm_or_null(create::create(&cm, g.world_ranks())?, c))
}

/// MPI_Comm_create_group (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
pub fn comm_create_group(call: &'static str, c: MPI_Comm, g: MPI_Group, tag: c_int) -> R<MPI_Comm> {
    let cm = comm(c, call)?;
    let g = group(g, call, "group")?;
    if !(0..=oxmpi_core::TAG_UB).contains(&tag) {
        return Err(bad(
            ErrorClass::Tag,
            call,
            "tag",
            format!("{tag} is not in 0..=MPI_TAG_UB"),
        ));
    }
    // Collective over the group's members only; the others get MPI_COMM_NULL.
    Ok(new_comm_or_null(
        create::create_group(&cm, g.world_ranks(), tag)?,
        c,
    ))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_free(c: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_free";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `comm` (`c`) is MPI_Comm_free's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "comm", c)? };
        route_to(*h);
        if *h == MPI_COMM_WORLD || *h == MPI_COMM_SELF {
            return Err(bad(
                ErrorClass::Comm,
                CALL,
                "comm",
                "a predefined communicator cannot be freed",
            ));
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
            crate::conv::remove_comm(&mut st, *h);
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

/// The answer of MPI_Comm_remote_size (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn comm_remote_size(call: &str, c: MPI_Comm) -> R<c_int> {
    Ok(require_inter(call, c)?.peer_group_size())
}

fn require_inter(call: &str, c: MPI_Comm) -> R<Comm> {
    let cm = comm(c, call)?;
    if !cm.is_inter() {
        return Err(bad(
            ErrorClass::Comm,
            call,
            "comm",
            "not an intercommunicator",
        ));
    }
    Ok(cm)
}

/// MPI_Comm_group (abi.txt `out(group)`: the generated `PMPI_x` checks `group` first).
pub fn comm_group(call: &'static str, c: MPI_Comm, o: &mut MPI_Group) -> R<()> {
    let cm = comm(c, call)?;
    *o = new_group(Group::from_world_ranks(cm.group().to_vec()));
    crate::conv::tag_group(*o, crate::conv::comm_session(c));
    Ok(())
}

/// MPI_Comm_remote_group (abi.txt `out(group)`: the generated `PMPI_x` checks `group` first).
pub fn comm_remote_group(call: &'static str, c: MPI_Comm, o: &mut MPI_Group) -> R<()> {
    let cm = require_inter(call, c)?;
    *o = new_group(Group::from_world_ranks(cm.peer_group().to_vec()));
    Ok(())
}

/// MPI_Intercomm_create (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the
/// OUT first and stores the new handle).
pub fn intercomm_create(
    call: &'static str,
    local: MPI_Comm,
    local_leader: c_int,
    peer: MPI_Comm,
    remote_leader: c_int,
    tag: c_int,
) -> R<MPI_Comm> {
    let lc = comm(local, call)?;
    // peer_comm is significant at the local leader only.
    let pc = if lc.rank() == local_leader {
        Some(comm(peer, call).map_err(|_| {
            bad(
                ErrorClass::Comm,
                call,
                "peer_comm",
                format!("{peer:#x} is not a valid communicator at the local leader"),
            )
        })?)
    } else {
        comm(peer, call).ok()
    };
    let ic = inter::intercomm_create(&lc, local_leader, pc.as_ref(), remote_leader, tag)?;
    Ok(new_comm(ic, local))
}

/// MPI_Intercomm_merge (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new handle).
pub fn intercomm_merge(call: &'static str, c: MPI_Comm, high: c_int) -> R<MPI_Comm> {
    let cm = require_inter(call, c)?;
    Ok(new_comm(inter::intercomm_merge(&cm, high != 0)?, c))
}

#[allow(dead_code)]
fn _unused(_: *mut c_void) {}
