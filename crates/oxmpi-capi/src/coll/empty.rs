//! The 0-count collectives, answered before the general entry.
//!
//! A blocking collective whose type signature is empty on every rank returns
//! right after its argument checks without a record, a selection or a tag
//! (`oxmpi_core::coll::nothing_to_move`); its immediate form takes its tag and
//! gives the engine's complete request (`oxmpi_core::coll::started_empty`, what
//! the general path's empty schedule comes to). Here that call is recognized from its C
//! arguments alone, for the common case (MPI_COMM_WORLD or MPI_COMM_SELF,
//! predefined datatypes whose elements lie back to back, predefined operations
//! defined for them, a valid root, counts 0), without the general entry's
//! error frame (`ffi`: the error-routing thread-local, the look-ups that clone
//! the communicator and datatypes, the descriptors, the core entry): ~60-200
//! instructions instead of 550-1,900 (bench/PROFILE.md zero28). Each function
//! here says `true` only where every check the general path makes passes and
//! the general path would itself return at once with nothing done, so which
//! ranks take this door changes nothing any other rank sees; anything else
//! (an error to report, another communicator, a derived datatype, MPI_IN_PLACE
//! where it is not allowed, checked collectives, `--trace`) says `false` and
//! goes the general way, which reports every error as before.
//!
//! Each check says whether the call is such a call; it is named in
//! abi.txt's `empty(CHECK, ARG...)` annotation, which gives it its arguments; the
//! generated `PMPI_x` asks it through [`super::entry`].
//!
//! The v forms whose emptiness no rank can see alone are not here: a gatherv or
//! scatterv rank away from the root knows only its own block, and an alltoallv or
//! alltoallw rank only the blocks it exchanges; their shared-memory paths meet
//! every rank of the communicator (`shm::acquire_made`), so a rank with nothing of
//! its own to move still takes part. allgatherv and reduce_scatter see every
//! rank's count in `recvcounts`, the same everywhere, and are.

use super::*;
use crate::conv::lookup::fast_datatype;
use oxmpi_core::runtime;

/// The communicator of a blocking call that may take the empty exit: MPI_COMM_WORLD
/// or MPI_COMM_SELF (intracommunicators), borrowed; `None` for other handles,
/// before MPI_Init, after MPI_Finalize, under `--trace` (every call is timed in
/// `ffi`) and for checked or synchronized collectives (they meet in `diag::coll`).
#[inline]
pub(super) fn intra(c: MPI_Comm) -> Option<&'static Comm> {
    if c != MPI_COMM_WORLD && c != MPI_COMM_SELF {
        return None;
    }
    if oxmpi_core::diag::tracing() || !coll::nothing_to_move(true) {
        return None;
    }
    let e = runtime::world_engine()?;
    Some(if c == MPI_COMM_WORLD {
        e.world()
    } else {
        e.self_comm()
    })
}

/// A count of 0 of a valid predefined datatype (committed by definition).
#[inline]
fn none_of<C: Count>(n: C, h: MPI_Datatype) -> bool {
    n.wide() == 0 && fast_datatype(h).is_some()
}

/// A root the general path accepts on an intracommunicator.
#[inline]
fn root_ok(cm: &Comm, root: c_int) -> bool {
    root >= 0 && root < cm.size()
}

/// Operation handles [`op_ok`]'s table covers, from MPI_OP_NULL on (every
/// predefined operation of the ABI).
const OPS: usize = 32;
/// Datatype handles it covers (every one [`fast_datatype`] knows is below).
const TYPES: usize = 0x300;

/// A predefined operation (not MPI_OP_NULL) defined for the predefined datatype
/// `h`, as `Op::check` decides it on its common path (`PredefinedOp::allows` of
/// the type's class): one bit of a table made once, instead of the handles'
/// matches and the class tests (~45 instructions a call).
#[inline]
fn op_ok(o: MPI_Op, h: MPI_Datatype) -> bool {
    static TABLE: std::sync::OnceLock<Box<[[u64; TYPES / 64]]>> = std::sync::OnceLock::new();
    let (i, h) = (o.wrapping_sub(MPI_OP_NULL), h);
    if i >= OPS || h >= TYPES {
        return false;
    }
    let table = TABLE.get_or_init(|| {
        (0..OPS)
            .map(|i| {
                let mut bits = [0u64; TYPES / 64];
                let p = match MPI_OP_NULL + i {
                    MPI_OP_NULL => None,
                    o => crate::abi::op_from_handle(o),
                };
                for (t, word) in (0..TYPES).zip((0..TYPES).map(|t| t / 64)) {
                    let prim = fast_datatype(t).and_then(|d| d.as_primitive());
                    if let (Some(p), Some(prim)) = (p, prim) {
                        if p.allows(prim.class()) {
                            bits[word] |= 1 << (t % 64);
                        }
                    }
                }
                bits
            })
            .collect()
    });
    table[i][h / 64] >> (h % 64) & 1 != 0
}

/// `n` counts at `p`, every one 0 (`p` not NULL: the general path's `array`
/// reports a NULL array of `n > 0` entries).
///
/// # Safety
/// `p` is NULL or holds `n` counts (the standard's length for the argument).
#[inline]
unsafe fn all_zero<C: Count>(p: *const C, n: usize) -> bool {
    if p.is_null() {
        return false;
    }
    // SAFETY: `p` is not NULL and holds `n` counts by this function's contract.
    let v = unsafe { std::slice::from_raw_parts(p, n) };
    v.iter().all(|&k| k.wide() == 0)
}

pub(crate) fn bcast<C: Count>(n: C, dt: MPI_Datatype, root: c_int, c: MPI_Comm) -> bool {
    intra(c).is_some_and(|cm| none_of(n, dt) && root_ok(cm, root))
}

/// MPI_Gather and MPI_Scatter: `local` is every rank's own buffer, count and
/// datatype (gather's send side, scatter's receive side; MPI_IN_PLACE only at the
/// root), `(count, datatype)` the root's side, which matters there only.
fn rooted<C: Count>(
    local: (*const c_void, C, MPI_Datatype),
    at_root: (C, MPI_Datatype),
    root: c_int,
    c: MPI_Comm,
) -> bool {
    let Some(cm) = intra(c) else { return false };
    if !root_ok(cm, root) {
        return false;
    }
    let (buf, n, dt) = local;
    if cm.rank() == root {
        (is_in_place(buf) || none_of(n, dt)) && none_of(at_root.0, at_root.1)
    } else {
        !is_in_place(buf) && none_of(n, dt)
    }
}

/// MPI_Gather: the send side everywhere, the receive side at the root.
pub(crate) fn gather<C: Count>(
    sb: *const c_void,
    sc: C,
    st: MPI_Datatype,
    rc: C,
    rt: MPI_Datatype,
    root: c_int,
    c: MPI_Comm,
) -> bool {
    rooted((sb, sc, st), (rc, rt), root, c)
}

/// MPI_Scatter: the receive side everywhere, the send side at the root.
pub(crate) fn scatter<C: Count>(
    sc: C,
    st: MPI_Datatype,
    rb: *const c_void,
    rc: C,
    rt: MPI_Datatype,
    root: c_int,
    c: MPI_Comm,
) -> bool {
    rooted((rb, rc, rt), (sc, st), root, c)
}

/// MPI_Allgather and MPI_Alltoall.
pub(crate) fn allgather<C: Count>(
    sb: *const c_void,
    sc: C,
    st: MPI_Datatype,
    rc: C,
    rt: MPI_Datatype,
    c: MPI_Comm,
) -> bool {
    intra(c).is_some() && (is_in_place(sb) || none_of(sc, st)) && none_of(rc, rt)
}

/// MPI_Allgatherv: every `recvcounts` entry 0 (the same array on every rank).
///
/// # Safety
/// `rcs` and `ds` are NULL or hold one entry per rank (MPI_Allgatherv's contract).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allgatherv<C: Count, D: Displ>(
    sb: *const c_void,
    sc: C,
    st: MPI_Datatype,
    rcs: *const C,
    ds: *const D,
    rt: MPI_Datatype,
    c: MPI_Comm,
) -> bool {
    let Some(cm) = intra(c) else { return false };
    if !((is_in_place(sb) || none_of(sc, st)) && fast_datatype(rt).is_some() && !ds.is_null()) {
        return false;
    }
    // SAFETY: `rcs` holds one count per rank by this function's contract.
    unsafe { all_zero(rcs, cm.size() as usize) }
}

/// MPI_Reduce (`sb` MPI_IN_PLACE only at the root).
pub(crate) fn reduce<C: Count>(
    sb: *const c_void,
    n: C,
    dt: MPI_Datatype,
    o: MPI_Op,
    root: c_int,
    c: MPI_Comm,
) -> bool {
    intra(c).is_some_and(|cm| {
        root_ok(cm, root)
            && (!is_in_place(sb) || cm.rank() == root)
            && none_of(n, dt)
            && op_ok(o, dt)
    })
}

/// MPI_Allreduce, MPI_Scan, MPI_Exscan, MPI_Reduce_scatter_block.
pub(crate) fn whole<C: Count>(n: C, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) -> bool {
    intra(c).is_some() && none_of(n, dt) && op_ok(o, dt)
}

/// MPI_Reduce_scatter: every `recvcounts` entry 0 (the same array on every rank).
///
/// # Safety
/// `rcs` is NULL or holds one count per rank (MPI_Reduce_scatter's contract).
pub(crate) unsafe fn reduce_scatter<C: Count>(
    rcs: *const C,
    dt: MPI_Datatype,
    o: MPI_Op,
    c: MPI_Comm,
) -> bool {
    let Some(cm) = intra(c) else { return false };
    if !(fast_datatype(dt).is_some() && op_ok(o, dt)) {
        return false;
    }
    // SAFETY: `rcs` holds one count per rank by this function's contract.
    unsafe { all_zero(rcs, cm.size() as usize) }
}
