//! Communicators with a process topology: MPI_Cart_create, MPI_Cart_sub,
//! MPI_Graph_create, MPI_Dist_graph_create(_adjacent). The topology
//! computations live in [`crate::topo`]; this module builds the communicators
//! (through split, so they get an agreed context) and attaches the topology.
//! `reorder` is accepted and ignored: ranks keep their order (always allowed).

use std::sync::Arc;

use super::create;
use super::Comm;
use crate::buf::{RecvBuf, SendBuf};
use crate::error::{ErrorClass, MpiError, Result};
use crate::topo::{Cart, DistGraph, DistGraphEdges, Graph, Topology};

fn attach(comm: Option<Comm>, topo: Topology) -> Option<Comm> {
    comm.map(|mut c| {
        if let Some(inner) = Arc::get_mut(&mut c.0) {
            inner.topo = Some(Arc::new(topo));
        }
        c
    })
}

fn require_intra(call: &str, comm: &Comm) -> Result<()> {
    if comm.is_inter() {
        return Err(MpiError::arg(
            ErrorClass::Comm,
            call,
            "comm",
            "an intercommunicator; topologies need an intracommunicator",
        ));
    }
    Ok(())
}

/// MPI_Cart_create: ranks beyond the grid's size get `None` (MPI_COMM_NULL).
pub fn cart_create(
    comm: &Comm,
    dims: &[i32],
    periods: &[bool],
    _reorder: bool,
) -> Result<Option<Comm>> {
    let call = "MPI_Cart_create";
    require_intra(call, comm)?;
    let cart = Cart::new(dims, periods, comm.size())?;
    let member = comm.rank() < cart.size();
    let c = create::split(comm, member.then_some(0), comm.rank())?;
    Ok(attach(c, Topology::Cart(cart)))
}

/// MPI_Cart_sub: the sub-grids keeping the dimensions where `remain` is true.
pub fn cart_sub(comm: &Comm, remain: &[bool]) -> Result<Comm> {
    let call = "MPI_Cart_sub";
    let cart = Topology::require_cart(comm.topology(), call)?.clone();
    if remain.len() != cart.ndims() {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            "remain_dims",
            format!("{} entries for {} dimensions", remain.len(), cart.ndims()),
        ));
    }
    let sub = cart.sub(remain)?;
    let (color, key) = cart.sub_color_key(comm.rank(), remain);
    let c = create::split(comm, color, key)?;
    attach(c, Topology::Cart(sub))
        .ok_or_else(|| MpiError::intern(call, "this rank got no sub-grid"))
}

/// MPI_Graph_create: ranks beyond `nnodes` get `None`.
pub fn graph_create(
    comm: &Comm,
    nnodes: i32,
    index: &[i32],
    edges: &[i32],
    _reorder: bool,
) -> Result<Option<Comm>> {
    let call = "MPI_Graph_create";
    require_intra(call, comm)?;
    let graph = Graph::new(nnodes, index, edges, comm.size())?;
    let member = comm.rank() < nnodes;
    let c = create::split(comm, member.then_some(0), comm.rank())?;
    Ok(attach(c, Topology::Graph(graph)))
}

/// MPI_Dist_graph_create_adjacent: each rank names its own neighbours.
pub fn dist_graph_create_adjacent(
    comm: &Comm,
    sources: &[i32],
    source_weights: Option<&[i32]>,
    destinations: &[i32],
    dest_weights: Option<&[i32]>,
    _reorder: bool,
) -> Result<Comm> {
    let call = "MPI_Dist_graph_create_adjacent";
    require_intra(call, comm)?;
    let g = DistGraph::adjacent(
        sources,
        source_weights,
        destinations,
        dest_weights,
        comm.size(),
    )?;
    let c = create::split(comm, Some(0), comm.rank())?;
    attach(c, Topology::DistGraph(g))
        .ok_or_else(|| MpiError::intern(call, "split returned no communicator"))
}

/// MPI_Dist_graph_create: each rank contributes any edges; every rank learns
/// its own in- and out-neighbours.
pub fn dist_graph_create(comm: &Comm, edges: &DistGraphEdges, _reorder: bool) -> Result<Comm> {
    let call = "MPI_Dist_graph_create";
    require_intra(call, comm)?;
    edges.validate(comm.size())?;
    // Everybody's contribution, flattened to ints: [nsrc, sources, degrees,
    // ndest, destinations, weighted, weights].
    let mut mine: Vec<i32> = Vec::new();
    mine.push(edges.sources.len() as i32);
    mine.extend(&edges.sources);
    mine.extend(&edges.degrees);
    mine.push(edges.destinations.len() as i32);
    mine.extend(&edges.destinations);
    mine.push(edges.weights.is_some() as i32);
    mine.extend(edges.weights.iter().flatten());
    let n = comm.size() as usize;
    let mut counts = vec![0i32; n];
    let len = [mine.len() as i32];
    crate::coll::api_move::allgather(
        Some(SendBuf::slice(&len)),
        RecvBuf::slice(&mut counts),
        1,
        comm,
    )?;
    let ucounts: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
    let displs: Vec<isize> = ucounts
        .iter()
        .scan(0isize, |at, &c| {
            let d = *at;
            *at += c as isize;
            Some(d)
        })
        .collect();
    let total: usize = ucounts.iter().sum();
    let mut all = vec![0i32; total];
    crate::coll::api_move::allgatherv(
        Some(SendBuf::slice(&mine)),
        RecvBuf::slice(&mut all),
        &ucounts,
        &displs,
        comm,
    )?;
    let mut contributions = Vec::with_capacity(n);
    for r in 0..n {
        let v = &all[displs[r] as usize..displs[r] as usize + ucounts[r]];
        let ns = v[0] as usize;
        let sources = v[1..1 + ns].to_vec();
        let degrees = v[1 + ns..1 + 2 * ns].to_vec();
        let nd = v[1 + 2 * ns] as usize;
        let destinations = v[2 + 2 * ns..2 + 2 * ns + nd].to_vec();
        let weighted = v[2 + 2 * ns + nd] != 0;
        let weights = weighted.then(|| v[3 + 2 * ns + nd..].to_vec());
        contributions.push(DistGraphEdges {
            sources,
            degrees,
            destinations,
            weights,
        });
    }
    let mut views = DistGraph::from_edges(comm.size(), &contributions)?;
    let mine = views.swap_remove(comm.rank() as usize);
    let c = create::split(comm, Some(0), comm.rank())?;
    attach(c, Topology::DistGraph(mine))
        .ok_or_else(|| MpiError::intern(call, "split returned no communicator"))
}
