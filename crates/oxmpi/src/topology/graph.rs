//! Graph and distributed-graph process topologies (oxmpi extension: rsmpi 0.8 names
//! the types but has no constructors).
#![deny(unsafe_code)]

use oxmpi_core::topo::Topology as CoreTopology;
use oxmpi_core::Comm;

use super::{AsCommunicator, Communicator, Rank, SimpleCommunicator};
use crate::environment::threading::{ThreadSafety, Unthreaded};
use crate::error::{OrFatal, Result};

/// A communicator with a general graph topology (`MPI_Graph_create`), made by
/// [`Communicator::create_graph_communicator`].
///
/// `S` is its thread safety, as [`SimpleCommunicator`]'s.
#[derive(Clone, Debug)]
pub struct GraphCommunicator<S: ThreadSafety = Unthreaded>(pub(crate) SimpleCommunicator<S>);

impl<S: ThreadSafety> GraphCommunicator<S> {
    /// The same communicator with another thread-safety marker.
    pub(crate) fn with_safety<S2: ThreadSafety>(self) -> GraphCommunicator<S2> {
        GraphCommunicator(self.0.with_safety())
    }

    fn graph(&self) -> &oxmpi_core::topo::Graph {
        match self.0 .0.topology() {
            Some(CoreTopology::Graph(g)) => g,
            _ => unreachable!("a GraphCommunicator always has a graph topology"),
        }
    }

    /// `(index, edges)` as given to the constructor (`MPI_Graph_get`).
    pub fn layout(&self) -> (Vec<i32>, Vec<Rank>) {
        let g = self.graph();
        (g.index.clone(), g.edges.clone())
    }

    /// The neighbours of `rank`, in edge order (`MPI_Graph_neighbors`).
    pub fn neighbors(&self, rank: Rank) -> Vec<Rank> {
        self.try_neighbors(rank).or_fatal()
    }
    /// [`neighbors`](Self::neighbors), reporting errors.
    pub fn try_neighbors(&self, rank: Rank) -> Result<Vec<Rank>> {
        self.graph().neighbors(rank).map(<[Rank]>::to_vec)
    }

    /// The number of neighbours of `rank` (`MPI_Graph_neighbors_count`).
    pub fn neighbors_count(&self, rank: Rank) -> Rank {
        self.try_neighbors_count(rank).or_fatal()
    }
    /// [`neighbors_count`](Self::neighbors_count), reporting errors.
    pub fn try_neighbors_count(&self, rank: Rank) -> Result<Rank> {
        self.graph().neighbors_count(rank)
    }

    /// The communicator as a [`SimpleCommunicator`] (which still carries the topology).
    pub fn into_simple(self) -> SimpleCommunicator<S> {
        self.0
    }
}

impl<S: ThreadSafety> Communicator for GraphCommunicator<S> {
    type Safety = S;
    fn core_comm(&self) -> &Comm {
        &self.0 .0
    }
    fn core_comm_mut(&mut self) -> Option<&mut Comm> {
        Some(&mut self.0 .0)
    }
}

impl<S: ThreadSafety> AsCommunicator for GraphCommunicator<S> {
    type Out = GraphCommunicator<S>;
    fn as_communicator(&self) -> &GraphCommunicator<S> {
        self
    }
}

/// A communicator with a distributed graph topology, made by
/// [`Communicator::create_distributed_graph_communicator_adjacent`].
///
/// `S` is its thread safety, as [`SimpleCommunicator`]'s.
#[derive(Clone, Debug)]
pub struct DistributedGraphCommunicator<S: ThreadSafety = Unthreaded>(
    pub(crate) SimpleCommunicator<S>,
);

impl<S: ThreadSafety> DistributedGraphCommunicator<S> {
    /// The same communicator with another thread-safety marker.
    pub(crate) fn with_safety<S2: ThreadSafety>(self) -> DistributedGraphCommunicator<S2> {
        DistributedGraphCommunicator(self.0.with_safety())
    }

    fn dist(&self) -> &oxmpi_core::topo::DistGraph {
        match self.0 .0.topology() {
            Some(CoreTopology::DistGraph(g)) => g,
            _ => unreachable!(
                "a DistributedGraphCommunicator always has a distributed graph topology"
            ),
        }
    }

    /// The processes this one receives from (`MPI_Dist_graph_neighbors`' sources).
    pub fn sources(&self) -> Vec<Rank> {
        self.dist().sources.clone()
    }

    /// The processes this one sends to (`MPI_Dist_graph_neighbors`' destinations).
    pub fn destinations(&self) -> Vec<Rank> {
        self.dist().destinations.clone()
    }

    /// The weights of the incoming and outgoing edges, `None` if unweighted.
    pub fn weights(&self) -> Option<(Vec<i32>, Vec<i32>)> {
        let d = self.dist();
        Some((d.source_weights.clone()?, d.dest_weights.clone()?))
    }

    /// The communicator as a [`SimpleCommunicator`] (which still carries the topology).
    pub fn into_simple(self) -> SimpleCommunicator<S> {
        self.0
    }
}

impl<S: ThreadSafety> Communicator for DistributedGraphCommunicator<S> {
    type Safety = S;
    fn core_comm(&self) -> &Comm {
        &self.0 .0
    }
    fn core_comm_mut(&mut self) -> Option<&mut Comm> {
        Some(&mut self.0 .0)
    }
}

impl<S: ThreadSafety> AsCommunicator for DistributedGraphCommunicator<S> {
    type Out = DistributedGraphCommunicator<S>;
    fn as_communicator(&self) -> &DistributedGraphCommunicator<S> {
        self
    }
}
