//! General graph topologies (`MPI_Graph_*`): the index/edges encoding of
//! `MPI_Graph_create`, its validation, neighbour queries and the default mapping.

use super::check_comm_rank;
use crate::error::{ErrorClass, MpiError, Result};

/// A general graph in `MPI_Graph_create`'s encoding: `index[i]` is the total number
/// of neighbours of nodes `0..=i`, `edges` lists the neighbours of node 0, then of
/// node 1, and so on. Self-loops and repeated edges are allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    pub index: Vec<i32>,
    pub edges: Vec<i32>,
}

impl Graph {
    /// Checks an `index` array (non-negative, non-decreasing) and returns the number
    /// of edges it describes — how long `edges` must be. For C bindings, which must
    /// know that before they can look at `edges`.
    pub fn edge_count(call: &str, index: &[i32]) -> Result<usize> {
        let mut prev = 0;
        for (i, &x) in index.iter().enumerate() {
            if x < 0 {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    call,
                    "index",
                    format!("index[{i}] = {x} is negative"),
                ));
            }
            if x < prev {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    call,
                    "index",
                    format!("index[{i}] = {x} is smaller than index[{}] = {prev}", i - 1),
                ));
            }
            prev = x;
        }
        Ok(prev as usize)
    }

    fn validate(
        call: &str,
        nnodes: i32,
        index: &[i32],
        edges: &[i32],
        comm_size: i32,
    ) -> Result<()> {
        if nnodes < 0 {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "nnodes",
                format!("{nnodes} is negative"),
            ));
        }
        if nnodes > comm_size {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "nnodes",
                format!("{nnodes} nodes, but the communicator has only {comm_size} processes"),
            ));
        }
        if index.len() != nnodes as usize {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "index",
                format!("{} entries given for {nnodes} nodes", index.len()),
            ));
        }
        let nedges = Graph::edge_count(call, index)?;
        if edges.len() != nedges {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "edges",
                format!("{} edges given, index describes {nedges}", edges.len()),
            ));
        }
        if let Some((i, &e)) = edges
            .iter()
            .enumerate()
            .find(|(_, &e)| !(0..nnodes).contains(&e))
        {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "edges",
                format!("edges[{i}] = {e} is not a node of the graph (0..{nnodes})"),
            ));
        }
        Ok(())
    }

    /// `MPI_Graph_create`'s checks (all `MPI_ERR_ARG`): `0 <= nnodes <= comm_size`,
    /// `index` of length `nnodes`, non-negative and non-decreasing, `edges` of length
    /// `index[nnodes-1]` naming nodes `0..nnodes`.
    pub fn new(nnodes: i32, index: &[i32], edges: &[i32], comm_size: i32) -> Result<Graph> {
        Graph::validate("MPI_Graph_create", nnodes, index, edges, comm_size)?;
        Ok(Graph {
            index: index.to_vec(),
            edges: edges.to_vec(),
        })
    }

    /// `MPI_Graphdims_get`'s `nnodes`.
    pub fn nnodes(&self) -> i32 {
        self.index.len() as i32
    }

    /// `MPI_Graphdims_get`'s `nedges`.
    pub fn nedges(&self) -> i32 {
        self.edges.len() as i32
    }

    fn range_of(&self, call: &str, rank: i32) -> Result<std::ops::Range<usize>> {
        let r = usize::try_from(rank)
            .ok()
            .filter(|&r| r < self.index.len())
            .ok_or_else(|| {
                MpiError::arg(
                    ErrorClass::Rank,
                    call,
                    "rank",
                    format!("{rank} is not a node of the graph (0..{})", self.nnodes()),
                )
            })?;
        let start = if r == 0 {
            0
        } else {
            self.index[r - 1] as usize
        };
        Ok(start..self.index[r] as usize)
    }

    /// `MPI_Graph_neighbors`: the neighbours of node `rank`, in `edges` order.
    pub fn neighbors(&self, rank: i32) -> Result<&[i32]> {
        let r = self.range_of("MPI_Graph_neighbors", rank)?;
        Ok(&self.edges[r])
    }

    /// `MPI_Graph_neighbors_count`.
    pub fn neighbors_count(&self, rank: i32) -> Result<i32> {
        Ok(self.range_of("MPI_Graph_neighbors_count", rank)?.len() as i32)
    }

    /// `MPI_Graph_map` with the identity mapping: `rank` if it is a node of the
    /// graph, `MPI_UNDEFINED` otherwise; the graph is checked as by `MPI_Graph_create`.
    pub fn map(
        nnodes: i32,
        index: &[i32],
        edges: &[i32],
        rank: i32,
        comm_size: i32,
    ) -> Result<Option<i32>> {
        const CALL: &str = "MPI_Graph_map";
        Graph::validate(CALL, nnodes, index, edges, comm_size)?;
        check_comm_rank(CALL, rank, comm_size)?;
        Ok((rank < nnodes).then_some(rank))
    }
}
