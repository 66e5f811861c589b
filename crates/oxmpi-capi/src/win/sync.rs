//! Synchronization: fence, post/start/complete/wait, lock/unlock, lock_all,
//! flush and sync.

use super::*;

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_fence(assert: c_int, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_fence";
    wffi(CALL, w, || Ok(win(w, CALL)?.fence(assert)?))
}

/// `MPI_Win_post` (`post`) or `MPI_Win_start`: on the thread's cached window (no
/// table look-up, no `Arc` clone) when the group handle is valid, else through the
/// general path, which names the bad argument.
#[inline(always)]
fn pscw_open(call: &'static str, g: MPI_Group, assert: c_int, w: MPI_Win, post: bool) -> c_int {
    let open = |wn: &Window, grp: &Group| {
        if post {
            wn.post_group(grp, assert)
        } else {
            wn.start_group(grp, assert)
        }
    };
    if let Ok(grp) = crate::conv::group_cached(g, call, "group") {
        if let Some(res) = with_cached(w, |wn| open(wn, &grp)) {
            return cached_result(call, w, res);
        }
    }
    wffi(call, w, || {
        let wn = win(w, call)?;
        let grp = crate::conv::group(g, call, "group")?;
        Ok(open(&wn, &grp)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_post(g: MPI_Group, assert: c_int, w: MPI_Win) -> c_int {
    pscw_open("MPI_Win_post", g, assert, w, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_start(g: MPI_Group, assert: c_int, w: MPI_Win) -> c_int {
    pscw_open("MPI_Win_start", g, assert, w, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_complete(w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_complete";
    if let Some(res) = with_cached(w, |wn| wn.complete()) {
        return cached_result(CALL, w, res);
    }
    wffi(CALL, w, || Ok(win(w, CALL)?.complete()?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_wait(w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_wait";
    if let Some(res) = with_cached(w, |wn| wn.wait(true).map(drop)) {
        return cached_result(CALL, w, res);
    }
    wffi(CALL, w, || {
        win(w, CALL)?.wait(true)?;
        Ok(())
    })
}

/// MPI_Win_test (abi.txt `out(flag)`: the generated `PMPI_x` checks `flag` first).
pub fn win_test(call: &'static str, w: MPI_Win, f: &mut c_int) -> R<()> {
    *f = win(w, call)?.wait(false)? as c_int;
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_lock(
    lock_type: c_int,
    rank: c_int,
    assert: c_int,
    w: MPI_Win,
) -> c_int {
    const CALL: &str = "MPI_Win_lock";
    // The thread's cached window: no table look-up, no `Arc` clone.
    let kind = match lock_type {
        MPI_LOCK_SHARED => Some(LockKind::Shared),
        MPI_LOCK_EXCLUSIVE => Some(LockKind::Exclusive),
        _ => None,
    };
    if let Some(res) = kind.and_then(|k| with_cached(w, |wn| wn.lock(k, rank, assert))) {
        return cached_result(CALL, w, res);
    }
    wffi(CALL, w, || {
        let wn = win(w, CALL)?;
        let kind = match lock_type {
            MPI_LOCK_SHARED => LockKind::Shared,
            MPI_LOCK_EXCLUSIVE => LockKind::Exclusive,
            t => {
                return Err(bad(
                    ErrorClass::Locktype,
                    CALL,
                    "lock_type",
                    format!("{t} is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE"),
                ))
            }
        };
        Ok(wn.lock(kind, rank, assert)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_unlock(rank: c_int, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_unlock";
    if let Some(res) = with_cached(w, |wn| wn.unlock(rank)) {
        return cached_result(CALL, w, res);
    }
    wffi(CALL, w, || Ok(win(w, CALL)?.unlock(rank)?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_lock_all(assert: c_int, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_lock_all";
    if let Some(res) = with_cached(w, |wn| wn.lock_all(assert)) {
        return cached_result(CALL, w, res);
    }
    wffi(CALL, w, || Ok(win(w, CALL)?.lock_all(assert)?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_unlock_all(w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_unlock_all";
    if let Some(res) = with_cached(w, |wn| wn.unlock_all()) {
        return cached_result(CALL, w, res);
    }
    wffi(CALL, w, || Ok(win(w, CALL)?.unlock_all()?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_flush(rank: c_int, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_flush";
    if with_cached(w, |wn| wn.flush_direct(rank)) == Some(true) {
        return MPI_SUCCESS;
    }
    wffi(CALL, w, || Ok(win(w, CALL)?.flush(CALL, Some(rank))?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_flush_local(rank: c_int, w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_flush_local";
    if with_cached(w, |wn| wn.flush_direct(rank)) == Some(true) {
        return MPI_SUCCESS;
    }
    wffi(CALL, w, || Ok(win(w, CALL)?.flush(CALL, Some(rank))?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_flush_all(w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_flush_all";
    wffi(CALL, w, || Ok(win(w, CALL)?.flush(CALL, None)?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_flush_local_all(w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_flush_local_all";
    wffi(CALL, w, || Ok(win(w, CALL)?.flush(CALL, None)?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_sync(w: MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_sync";
    wffi(CALL, w, || {
        win(w, CALL)?.sync();
        Ok(())
    })
}
