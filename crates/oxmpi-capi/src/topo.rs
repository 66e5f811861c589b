//! Process topologies (Cartesian, graph, distributed graph) and MPIX_Topo_cluster_info.
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement: buffers holding their counts of their datatypes
//! (for immediate forms, until the request completes), arrays of the length the
//! standard gives, OUT arguments writable and aliasing no other argument.

use std::ffi::{c_int, c_void};

use oxmpi_core::comm::topology;
use oxmpi_core::error::ErrorClass;
use oxmpi_core::runtime;
use oxmpi_core::topo::{self, Cart, DistGraphEdges, Graph, Topology};
use oxmpi_core::Comm;

use crate::abi::*;
use crate::conv::errors::{array as ints, array_mut as ints_mut, bad, ffi, out, NO_COMM, R};
use crate::conv::{comm, new_comm, new_comm_or_null};
use crate::conv::{info_arg, nonneg};
use crate::types::*;

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

/// MPI_Cart_create (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
///
/// # Safety
/// `dims` and `periods` are NULL or hold `ndims` ints each (MPI contract).
pub unsafe fn cart_create(
    call: &'static str,
    c: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    reorder: c_int,
) -> R<MPI_Comm> {
    let cm = comm(c, call)?;
    let n = nonneg(call, "ndims", ndims, ErrorClass::Dims)?;
    // SAFETY: MPI_Cart_create's `dims` holds `ndims` = `n` ints.
    let d = unsafe { ints(call, "dims", dims, n)? };
    // SAFETY: MPI_Cart_create's `periods` holds `ndims` = `n` ints.
    let p: Vec<bool> = unsafe { ints(call, "periods", periods, n)? }
        .iter()
        .map(|&x| x != 0)
        .collect();
    Ok(new_comm_or_null(
        topology::cart_create(&cm, d, &p, reorder != 0)?,
        c,
    ))
}

/// The answer of MPI_Cartdim_get (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn cartdim_get(call: &str, c: MPI_Comm) -> R<c_int> {
    let (_, cart) = cart_of(call, c)?;
    Ok(cart.ndims() as c_int)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_get(
    c: MPI_Comm,
    maxdims: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Cart_get";
    ffi(CALL, c, || {
        let (cm, cart) = cart_of(CALL, c)?;
        let n = cart.ndims();
        if (maxdims as i64) < n as i64 {
            return Err(bad(
                ErrorClass::Arg,
                CALL,
                "maxdims",
                format!("{maxdims} is less than the {n} dimensions of the grid"),
            ));
        }
        let xs = cart.coords(cm.rank())?;
        // SAFETY: MPI_Cart_get's OUT arrays hold `maxdims` >= `n` ints (checked above), unaliased.
        unsafe { ints_mut(CALL, "dims", dims, n)? }.copy_from_slice(&cart.dims);
        // SAFETY: as for `dims`.
        for (p, &b) in unsafe { ints_mut(CALL, "periods", periods, n)? }
            .iter_mut()
            .zip(&cart.periods)
        {
            *p = b as c_int;
        }
        // SAFETY: as for `dims`.
        unsafe { ints_mut(CALL, "coords", coords, n)? }.copy_from_slice(&xs);
        Ok(())
    })
}

/// MPI_Cart_rank (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
///
/// # Safety
/// `coords` is NULL or holds one int per dimension of the grid (MPI contract).
pub unsafe fn cart_rank(call: &'static str, c: MPI_Comm, coords: *const c_int) -> R<c_int> {
    let (_, cart) = cart_of(call, c)?;
    // SAFETY: MPI_Cart_rank's `coords` holds one int per dimension of the grid.
    let xs = unsafe { ints(call, "coords", coords, cart.ndims())? };
    Ok(cart.rank(xs)?)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_coords(
    c: MPI_Comm,
    rank: c_int,
    maxdims: c_int,
    coords: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Cart_coords";
    ffi(CALL, c, || {
        let (_, cart) = cart_of(CALL, c)?;
        let n = cart.ndims();
        if (maxdims as i64) < n as i64 {
            return Err(bad(
                ErrorClass::Arg,
                CALL,
                "maxdims",
                format!("{maxdims} is less than the {n} dimensions of the grid"),
            ));
        }
        let xs = cart.coords(rank)?;
        // SAFETY: MPI_Cart_coords's OUT `coords` holds `maxdims` >= `n` ints (checked above), unaliased.
        unsafe { ints_mut(CALL, "coords", coords, n)? }.copy_from_slice(&xs);
        Ok(())
    })
}

/// MPI_Cart_shift (abi.txt `query`: the generated `PMPI_x` checks and stores the OUTs).
pub fn cart_shift(
    call: &'static str,
    c: MPI_Comm,
    direction: c_int,
    disp: c_int,
) -> R<(c_int, c_int)> {
    let (cm, cart) = cart_of(call, c)?;
    Ok(cart.shift(cm.rank(), direction, disp)?)
}

/// MPI_Cart_sub (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new handle).
///
/// # Safety
/// `remain` is NULL or holds one int per dimension of the grid (MPI contract).
pub unsafe fn cart_sub(call: &'static str, c: MPI_Comm, remain: *const c_int) -> R<MPI_Comm> {
    let (cm, cart) = cart_of(call, c)?;
    // SAFETY: MPI_Cart_sub's `remain_dims` holds one int per dimension of the grid.
    let r: Vec<bool> = unsafe { ints(call, "remain_dims", remain, cart.ndims())? }
        .iter()
        .map(|&x| x != 0)
        .collect();
    Ok(new_comm(topology::cart_sub(&cm, &r)?, c))
}

/// MPI_Cart_map (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
///
/// # Safety
/// `dims` and `periods` are NULL or hold `ndims` ints each (MPI contract).
pub unsafe fn cart_map(
    call: &'static str,
    c: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
) -> R<c_int> {
    let cm = comm(c, call)?;
    let n = nonneg(call, "ndims", ndims, ErrorClass::Dims)?;
    // SAFETY: MPI_Cart_map's `dims` holds `ndims` = `n` ints.
    let d = unsafe { ints(call, "dims", dims, n)? };
    // SAFETY: MPI_Cart_map's `periods` holds `ndims` = `n` ints.
    let p: Vec<bool> = unsafe { ints(call, "periods", periods, n)? }
        .iter()
        .map(|&x| x != 0)
        .collect();
    Ok(Cart::map(d, &p, cm.rank(), cm.size())?.unwrap_or(MPI_UNDEFINED))
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
unsafe fn graph_arrays<'a>(
    call: &str,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
) -> R<(&'a [c_int], &'a [c_int])> {
    let n = nonneg(call, "nnodes", nnodes, ErrorClass::Arg)?;
    // SAFETY: `index` holds `nnodes` = `n` ints, by this function's contract.
    let idx = unsafe { ints(call, "index", index, n)? };
    let ne = Graph::edge_count(call, idx)?;
    // SAFETY: `edges` holds `index[nnodes - 1]` = `ne` ints, by this function's contract.
    let e = unsafe { ints(call, "edges", edges, ne)? };
    Ok((idx, e))
}

/// MPI_Graph_create (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
///
/// # Safety
/// `index` and `edges` are the C caller's graph description arrays, as
/// `graph_arrays` requires.
pub unsafe fn graph_create(
    call: &'static str,
    c: MPI_Comm,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    reorder: c_int,
) -> R<MPI_Comm> {
    let cm = comm(c, call)?;
    // SAFETY: MPI_Graph_create's `index` and `edges` are the C caller's graph description arrays, as `graph_arrays` requires.
    let (idx, e) = unsafe { graph_arrays(call, nnodes, index, edges)? };
    Ok(new_comm_or_null(
        topology::graph_create(&cm, nnodes, idx, e, reorder != 0)?,
        c,
    ))
}

/// MPI_Graphdims_get: (nnodes, nedges) (abi.txt `query`).
pub fn graphdims_get(call: &'static str, c: MPI_Comm) -> R<(c_int, c_int)> {
    let g = graph_of(call, c)?;
    Ok((g.nnodes(), g.nedges()))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graph_get(
    c: MPI_Comm,
    maxindex: c_int,
    maxedges: c_int,
    index: *mut c_int,
    edges: *mut c_int,
) -> c_int {
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

/// MPI_Graph_neighbors_count (abi.txt `query`).
pub fn graph_neighbors_count(call: &'static str, c: MPI_Comm, rank: c_int) -> R<c_int> {
    Ok(graph_of(call, c)?.neighbors_count(rank)?)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graph_neighbors(
    c: MPI_Comm,
    rank: c_int,
    maxneighbors: c_int,
    neighbors: *mut c_int,
) -> c_int {
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

/// MPI_Graph_map (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
///
/// # Safety
/// `index` and `edges` are the C caller's graph description arrays, as `graph_arrays`
/// requires.
pub unsafe fn graph_map(
    call: &'static str,
    c: MPI_Comm,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
) -> R<c_int> {
    let cm = comm(c, call)?;
    // SAFETY: MPI_Graph_map's `index` and `edges` are the C caller's graph description arrays, as `graph_arrays` requires.
    let (idx, e) = unsafe { graph_arrays(call, nnodes, index, edges)? };
    Ok(Graph::map(nnodes, idx, e, cm.rank(), cm.size())?.unwrap_or(MPI_UNDEFINED))
}

/// The answer of MPI_Topo_test (its `PMPI_` function, with the OUT argument's check, is
/// generated from abi.txt's `query` line).
pub fn topo_test(call: &str, c: MPI_Comm) -> R<c_int> {
    let cm = comm(c, call)?;
    Ok(Topology::topo_test(cm.topology()).map_or(MPI_UNDEFINED, crate::abi::topology_kind_value))
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
            return Err(bad(
                ErrorClass::Arg,
                call,
                arg,
                format!("MPI_WEIGHTS_EMPTY given for {n} edges"),
            ));
        }
        return Ok(Some(Vec::new()));
    }
    // SAFETY: not a special value, so `p` holds `n` weights by this function's contract.
    Ok(Some(unsafe { ints(call, arg, p, n)? }.to_vec()))
}

/// MPI_Dist_graph_create (abi.txt `out(comm_dist_graph)`: the generated `PMPI_x` checks `comm_dist_graph` first).
///
/// # Safety
/// The C caller's arguments of MPI_Dist_graph_create, as MPI defines them.
#[allow(clippy::too_many_arguments)] // the C call's parameters, and `call`
pub unsafe fn dist_graph_create(
    call: &'static str,
    c: MPI_Comm,
    n: c_int,
    sources: *const c_int,
    degrees: *const c_int,
    destinations: *const c_int,
    w: *const c_int,
    info: MPI_Info,
    reorder: c_int,
    o: &mut MPI_Comm,
) -> R<()> {
    *o = MPI_COMM_NULL;
    let cm = comm(c, call)?;
    info_arg(call, info)?;
    let n = nonneg(call, "n", n, ErrorClass::Arg)?;
    // SAFETY: MPI_Dist_graph_create's `sources` holds `n` ints.
    let sources = unsafe { ints(call, "sources", sources, n)? }.to_vec();
    // SAFETY: MPI_Dist_graph_create's `degrees` holds `n` ints.
    let degrees = unsafe { ints(call, "degrees", degrees, n)? }.to_vec();
    if let Some((i, &d)) = degrees.iter().enumerate().find(|(_, &d)| d < 0) {
        return Err(bad(
            ErrorClass::Arg,
            call,
            "degrees",
            format!("degrees[{i}] = {d} is negative"),
        ));
    }
    let total: usize = degrees.iter().map(|&d| d as usize).sum();
    // SAFETY: MPI_Dist_graph_create's `destinations` holds sum(`degrees`) = `total` ints.
    let destinations = unsafe { ints(call, "destinations", destinations, total)? }.to_vec();
    // SAFETY: MPI_Dist_graph_create's `weights` is a special value or holds `total` ints, as `weights` requires.
    let weights = unsafe { weights(call, "weights", w, total)? };
    let edges = DistGraphEdges {
        sources,
        degrees,
        destinations,
        weights,
    };
    *o = new_comm(topology::dist_graph_create(&cm, &edges, reorder != 0)?, c);
    Ok(())
}

/// MPI_Dist_graph_create_adjacent (abi.txt `out(comm_dist_graph)`: the generated `PMPI_x` checks `comm_dist_graph` first).
///
/// # Safety
/// The C caller's arguments of MPI_Dist_graph_create_adjacent, as MPI defines them.
#[allow(clippy::too_many_arguments)] // the C call's parameters, and `call`
pub unsafe fn dist_graph_create_adjacent(
    call: &'static str,
    c: MPI_Comm,
    indegree: c_int,
    sources: *const c_int,
    sourceweights: *const c_int,
    outdegree: c_int,
    destinations: *const c_int,
    destweights: *const c_int,
    info: MPI_Info,
    reorder: c_int,
    o: &mut MPI_Comm,
) -> R<()> {
    *o = MPI_COMM_NULL;
    let cm = comm(c, call)?;
    info_arg(call, info)?;
    let ni = nonneg(call, "indegree", indegree, ErrorClass::Arg)?;
    let no = nonneg(call, "outdegree", outdegree, ErrorClass::Arg)?;
    // SAFETY: MPI_Dist_graph_create_adjacent's `sources` holds `indegree` = `ni` ints.
    let s = unsafe { ints(call, "sources", sources, ni)? };
    // SAFETY: `sourceweights` is a special value or holds `indegree` = `ni` ints.
    let sw = unsafe { weights(call, "sourceweights", sourceweights, ni)? };
    // SAFETY: `destinations` holds `outdegree` = `no` ints.
    let d = unsafe { ints(call, "destinations", destinations, no)? };
    // SAFETY: `destweights` is a special value or holds `outdegree` = `no` ints.
    let dw = unsafe { weights(call, "destweights", destweights, no)? };
    *o = new_comm(
        topology::dist_graph_create_adjacent(
            &cm,
            s,
            sw.as_deref(),
            d,
            dw.as_deref(),
            reorder != 0,
        )?,
        c,
    );
    Ok(())
}

/// MPI_Dist_graph_neighbors_count: (indegree, outdegree, weighted) (abi.txt `query`).
pub fn dist_graph_neighbors_count(call: &'static str, c: MPI_Comm) -> R<(c_int, c_int, c_int)> {
    let cm = comm(c, call)?;
    let g = Topology::require_dist_graph(cm.topology(), call)?;
    Ok((g.indegree(), g.outdegree(), g.is_weighted() as c_int))
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
        unsafe { ints_mut(CALL, "destinations", destinations, no)? }
            .copy_from_slice(&g.destinations[..no]);
        let given = |p: *mut c_int| {
            !p.is_null() && p as usize != MPI_UNWEIGHTED && p as usize != MPI_WEIGHTS_EMPTY
        };
        if let Some(w) = &g.source_weights {
            if given(sourceweights) {
                // SAFETY: OUT `sourceweights` (not MPI_UNWEIGHTED here) holds `maxindegree` >= `ni` ints, unaliased.
                unsafe { ints_mut(CALL, "sourceweights", sourceweights, ni)? }
                    .copy_from_slice(&w[..ni]);
            }
        }
        if let Some(w) = &g.dest_weights {
            if given(destweights) {
                // SAFETY: OUT `destweights` (not MPI_UNWEIGHTED here) holds `maxoutdegree` >= `no` ints, unaliased.
                unsafe { ints_mut(CALL, "destweights", destweights, no)? }
                    .copy_from_slice(&w[..no]);
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
pub unsafe extern "C" fn PMPIX_Topo_cluster_info(
    c: MPI_Comm,
    levels: *mut c_int,
    my_cluster: *mut c_int,
    my_rank: *mut c_int,
) -> c_int {
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
