//! Process topologies (MPI-5.0 chapter "Process Topologies"): the pure,
//! communication-free part — Cartesian grids, general graphs and distributed graphs
//! as data, with the rank/coordinate arithmetic, validation and the default
//! (identity) mapping. Building the communicators (dup/split) is the caller's job:
//! this module computes what to pass to it ([`Cart::map`], [`Cart::sub_color_key`],
//! [`Graph::map`], [`DistGraph::from_edges`]).
//!
//! Error classes, chosen as MPICH does:
//! - grid/graph descriptions given to a constructor (`MPI_Cart_create`,
//!   `MPI_Graph_create`, `MPI_Dist_graph_create*`) that are malformed or larger than
//!   the communicator: `MPI_ERR_ARG` ("there is no topology yet"), except a dimension
//!   size that is not positive: `MPI_ERR_DIMS`;
//! - `MPI_Dims_create` that cannot be satisfied, negative `dims[i]`: `MPI_ERR_DIMS`;
//!   `MPI_Cart_map` on a grid larger than the communicator: `MPI_ERR_DIMS`;
//! - a process rank outside the communicator/topology (`MPI_Cart_coords`,
//!   `MPI_Graph_neighbors`, the ranks listed to `MPI_Dist_graph_create*`, ...):
//!   `MPI_ERR_RANK`;
//! - an out-of-range coordinate of a non-periodic dimension (`MPI_Cart_rank`), a
//!   `direction` that is not a dimension, array lengths that do not match `ndims`:
//!   `MPI_ERR_ARG`;
//! - a query on a communicator without the right kind of topology, `MPI_Cart_shift`
//!   on a zero-dimensional grid: `MPI_ERR_TOPOLOGY`.

// `is_multiple_of` is newer than the workspace's rust-version (1.80).
#![allow(clippy::manual_is_multiple_of)]

use crate::error::{ErrorClass, MpiError, Result};

/// The kind of a topology, as `MPI_Topo_test` reports it (the C library gives the
/// standard ABI's value by [`name`](TopologyKind::name), from abi.txt).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TopologyKind {
    /// `MPI_CART`.
    Cart,
    /// `MPI_GRAPH`.
    Graph,
    /// `MPI_DIST_GRAPH`.
    DistGraph,
}

impl TopologyKind {
    /// Every kind.
    pub const ALL: &'static [TopologyKind] = &[
        TopologyKind::Cart,
        TopologyKind::Graph,
        TopologyKind::DistGraph,
    ];

    /// The C name, e.g. `MPI_CART`.
    pub const fn name(self) -> &'static str {
        match self {
            TopologyKind::Cart => "MPI_CART",
            TopologyKind::Graph => "MPI_GRAPH",
            TopologyKind::DistGraph => "MPI_DIST_GRAPH",
        }
    }
}

mod cart;
mod dims;
mod distgraph;
mod graph;
#[cfg(test)]
mod tests;

pub use cart::Cart;
pub use dims::dims_create;
pub use distgraph::{DistGraph, DistGraphEdges};
pub use graph::Graph;

/// `MPI_ERR_RANK` naming `call` unless `rank` is a rank of a communicator of
/// `comm_size` processes (shared by the Cartesian and graph queries).
pub(super) fn check_comm_rank(call: &str, rank: i32, comm_size: i32) -> Result<()> {
    if (0..comm_size).contains(&rank) {
        Ok(())
    } else {
        Err(MpiError::arg(
            ErrorClass::Rank,
            call,
            "rank",
            format!("{rank} is not a rank of the communicator (0..{comm_size})"),
        ))
    }
}

// ---------------------------------------------------------------------------------
// The topology attached to a communicator
// ---------------------------------------------------------------------------------

/// The topology cached on a communicator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    Cart(Cart),
    Graph(Graph),
    DistGraph(DistGraph),
}

impl Topology {
    /// `MPI_CART`, `MPI_GRAPH` or `MPI_DIST_GRAPH`.
    pub fn kind(&self) -> TopologyKind {
        match self {
            Topology::Cart(_) => TopologyKind::Cart,
            Topology::Graph(_) => TopologyKind::Graph,
            Topology::DistGraph(_) => TopologyKind::DistGraph,
        }
    }

    /// `MPI_Topo_test`: the kind of the communicator's topology, `None` (C:
    /// `MPI_UNDEFINED`) if it has none.
    pub fn topo_test(topo: Option<&Topology>) -> Option<TopologyKind> {
        topo.map(Topology::kind)
    }

    /// The Cartesian topology, or `MPI_ERR_TOPOLOGY` naming `call`.
    pub fn require_cart<'a>(topo: Option<&'a Topology>, call: &str) -> Result<&'a Cart> {
        match topo {
            Some(Topology::Cart(c)) => Ok(c),
            _ => Err(MpiError::new(
                ErrorClass::Topology,
                format!("{call}: the communicator has no Cartesian topology"),
            )),
        }
    }

    /// The graph topology, or `MPI_ERR_TOPOLOGY` naming `call`.
    pub fn require_graph<'a>(topo: Option<&'a Topology>, call: &str) -> Result<&'a Graph> {
        match topo {
            Some(Topology::Graph(g)) => Ok(g),
            _ => Err(MpiError::new(
                ErrorClass::Topology,
                format!("{call}: the communicator has no graph topology"),
            )),
        }
    }

    /// The distributed graph topology, or `MPI_ERR_TOPOLOGY` naming `call`.
    pub fn require_dist_graph<'a>(topo: Option<&'a Topology>, call: &str) -> Result<&'a DistGraph> {
        match topo {
            Some(Topology::DistGraph(g)) => Ok(g),
            _ => Err(MpiError::new(
                ErrorClass::Topology,
                format!("{call}: the communicator has no distributed graph topology"),
            )),
        }
    }

    /// The (sources, destinations) of process `rank` for neighbourhood collectives.
    /// For a distributed graph the topology already is this process's view, and
    /// `rank` is not consulted.
    pub fn neighborhood(&self, rank: i32) -> Result<(Vec<i32>, Vec<i32>)> {
        match self {
            Topology::Cart(c) => {
                let v = c.neighbors(rank)?;
                Ok((v.clone(), v))
            }
            Topology::Graph(g) => {
                let v = g.neighbors(rank)?.to_vec();
                Ok((v.clone(), v))
            }
            Topology::DistGraph(d) => Ok((d.sources.clone(), d.destinations.clone())),
        }
    }
}
