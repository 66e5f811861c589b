//! Communicators from groups with string tags (MPI-4.0): `MPI_Comm_create_from_group`,
//! `MPI_Intercomm_create_from_groups`, working from World-model groups.
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement (arrays of the length the standard gives, OUT
//! arguments writable and aliasing no other argument).

use std::ffi::{c_char, c_int};

use oxmpi_core::error::ErrorClass;
use oxmpi_core::Comm;

use crate::abi::*;
use crate::conv::errors::{bad, bad_code, Fail, R};
use crate::conv::handles::state;
use crate::conv::{get_str, group, new_comm};
use crate::types::*;

// ----- communicators from groups (MPI-4.0) --------------------------------------------------

/// A string tag as an MPI tag: FNV-1a over its bytes, folded into 0..=MPI_TAG_UB,
/// so every process naming the same string gets the same tag.
fn tag_of(s: &str) -> i32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h % (oxmpi_core::TAG_UB as u64 + 1)) as i32
}

/// # Safety
/// `p` is NULL or a NUL-terminated C string.
unsafe fn stringtag(call: &str, p: *const c_char) -> R<String> {
    // SAFETY: by this function's contract.
    let s = unsafe { get_str(call, "stringtag", p)? };
    if s.len() >= MPI_MAX_STRINGTAG_LEN as usize {
        return Err(bad(
            ErrorClass::Arg,
            call,
            "stringtag",
            format!(
                "{} bytes; at most MPI_MAX_STRINGTAG_LEN - 1 = {}",
                s.len(),
                MPI_MAX_STRINGTAG_LEN - 1
            ),
        ));
    }
    Ok(s.to_string())
}

/// Validates an errhandler argument (before anything is created).
fn errhandler_arg(call: &str, eh: MPI_Errhandler) -> R<()> {
    if eh == MPI_ERRORS_ARE_FATAL
        || eh == MPI_ERRORS_RETURN
        || eh == MPI_ERRORS_ABORT
        || state().errhandlers.get(eh).is_some()
    {
        Ok(())
    } else {
        Err(bad(
            ErrorClass::Arg,
            call,
            "errhandler",
            format!("{eh:#x} is not a valid error handler"),
        ))
    }
}

fn info_arg(call: &str, info: MPI_Info) -> R<()> {
    if info == MPI_INFO_NULL || info == MPI_INFO_ENV || state().infos.get(info).is_some() {
        Ok(())
    } else {
        Err(bad_code(
            MPI_ERR_INFO,
            call,
            "info",
            format!("{info:#x} is not a valid info object"),
        ))
    }
}

/// A handle for a communicator made from groups, with its error handler.
fn handle_with_errhandler(call: &str, cm: Comm, eh: MPI_Errhandler) -> R<MPI_Comm> {
    let h = new_comm(cm, MPI_COMM_WORLD);
    // SAFETY: `h` is the live communicator just made; `eh` was validated.
    let code = unsafe { crate::errhan::PMPI_Comm_set_errhandler(h, eh) };
    if code != MPI_SUCCESS {
        let mut h = h;
        // SAFETY: `h` is a local, writable handle of a communicator of ours.
        unsafe { crate::comm::PMPI_Comm_free(&mut h) };
        return Err(Fail {
            code,
            message: format!(
                "{call}: setting the new communicator's error handler failed (code {code})"
            ),
        });
    }
    Ok(h)
}

/// The base every group-made communicator comes from: every group names
/// world ranks, so the job's processes are the universe. It is the engine's
/// world communicator, whether or not the World model is active (groups of
/// sessions make communicators before MPI_Init and after MPI_Finalize).
fn world(_call: &str) -> R<Comm> {
    Ok(oxmpi_core::runtime::engine()?.world().clone())
}

/// MPI_Comm_create_from_group (abi.txt `out(newcomm)`: the generated `PMPI_x` checks `newcomm` first).
///
/// # Safety
/// The C caller's arguments of MPI_Comm_create_from_group, as MPI defines them.
pub unsafe fn comm_create_from_group(
    call: &'static str,
    g: MPI_Group,
    tag: *const c_char,
    info: MPI_Info,
    eh: MPI_Errhandler,
    o: &mut MPI_Comm,
) -> R<()> {
    let grp = group(g, call, "group")?;
    let session = crate::conv::common_session(call, &[("group", g)])?;
    // SAFETY: the C caller's string tag: NUL-terminated, or NULL (rejected).
    let t = unsafe { stringtag(call, tag)? };
    info_arg(call, info)?;
    errhandler_arg(call, eh)?;
    *o = MPI_COMM_NULL;
    let w = world(call)?;
    let me = w.group()[w.rank() as usize];
    if grp.rank_of_world(me).is_none() {
        return Err(bad(
            ErrorClass::Group,
            call,
            "group",
            "the calling process is not a member of the group",
        ));
    }
    let cm = oxmpi_core::comm::create::create_group(&w, grp.world_ranks(), tag_of(&t))
        .map_err(|e| rename(e, call))?
        .ok_or_else(|| {
            bad(
                ErrorClass::Group,
                call,
                "group",
                "the calling process is not a member of the group",
            )
        })?;
    let h = handle_with_errhandler(call, cm.clone(), eh)?;
    crate::conv::tag_comm(h, &cm, session);
    *o = h;
    Ok(())
}

/// MPI_Intercomm_create_from_groups (abi.txt `out(newintercomm)`: the generated `PMPI_x` checks `newintercomm` first).
///
/// # Safety
/// The C caller's arguments of MPI_Intercomm_create_from_groups, as MPI defines them.
#[allow(clippy::too_many_arguments)] // the C call's parameters, and `call`
pub unsafe fn intercomm_create_from_groups(
    call: &'static str,
    local_group: MPI_Group,
    local_leader: c_int,
    remote_group: MPI_Group,
    remote_leader: c_int,
    tag: *const c_char,
    info: MPI_Info,
    eh: MPI_Errhandler,
    o: &mut MPI_Comm,
) -> R<()> {
    let lg = group(local_group, call, "local_group")?;
    let rg = group(remote_group, call, "remote_group")?;
    let session = crate::conv::common_session(
        call,
        &[("local_group", local_group), ("remote_group", remote_group)],
    )?;
    // SAFETY: the C caller's string tag: NUL-terminated, or NULL (rejected).
    let t = unsafe { stringtag(call, tag)? };
    info_arg(call, info)?;
    errhandler_arg(call, eh)?;
    *o = MPI_COMM_NULL;
    if !(0..lg.size()).contains(&local_leader) {
        return Err(bad(
            ErrorClass::Rank,
            call,
            "local_leader",
            format!(
                "{local_leader} is not a rank of local_group (size {})",
                lg.size()
            ),
        ));
    }
    let remote_world = rg.world_rank_of(remote_leader).ok_or_else(|| {
        bad(
            ErrorClass::Rank,
            call,
            "remote_leader",
            format!(
                "{remote_leader} is not a rank of remote_group (size {})",
                rg.size()
            ),
        )
    })?;
    let w = world(call)?;
    let me = w.group()[w.rank() as usize];
    if lg.rank_of_world(me).is_none() {
        return Err(bad(
            ErrorClass::Group,
            call,
            "local_group",
            "the calling process is not a member of the local group",
        ));
    }
    if lg
        .world_ranks()
        .iter()
        .any(|r| rg.rank_of_world(*r).is_some())
    {
        return Err(bad(
            ErrorClass::Group,
            call,
            "remote_group",
            "overlaps the local group; the two groups must be disjoint",
        ));
    }
    let tg = tag_of(&t);
    let local = oxmpi_core::comm::create::create_group(&w, lg.world_ranks(), tg)
        .map_err(|e| rename(e, call))?
        .ok_or_else(|| {
            bad(
                ErrorClass::Group,
                call,
                "local_group",
                "the calling process is not a member of the local group",
            )
        })?;
    let ic = oxmpi_core::comm::inter::intercomm_create(
        &local,
        local_leader,
        Some(&w),
        remote_world as i32,
        tg,
    )
    .map_err(|e| rename(e, call))?;
    drop(local);
    let h = handle_with_errhandler(call, ic.clone(), eh)?;
    crate::conv::tag_comm(h, &ic, session);
    *o = h;
    Ok(())
}

/// An error of the core call this one is built on, named after this call.
fn rename(e: oxmpi_core::MpiError, call: &str) -> Fail {
    let mut m = e.message.clone();
    for g in ["MPI_Comm_create_group:", "MPI_Intercomm_create:"] {
        if let Some(rest) = m.strip_prefix(g) {
            m = format!("{call}:{rest}");
            break;
        }
    }
    Fail::from(oxmpi_core::MpiError::new(e.class, m))
}
