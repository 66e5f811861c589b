//! Distributed graph topologies (`MPI_Dist_graph_*`): one process's view
//! ([`DistGraph`]), the per-process edge lists of `MPI_Dist_graph_create`
//! ([`DistGraphEdges`]) and their validation; the exchange that turns edge lists
//! into views lives with the communicator code, this is only data and checks.

use crate::error::{ErrorClass, MpiError, Result};

/// One process's view of a distributed graph: the processes it receives from
/// (`sources`) and sends to (`destinations`), with weights unless the graph is
/// unweighted (`None` = `MPI_UNWEIGHTED`). Repeated edges and self-loops are allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistGraph {
    pub sources: Vec<i32>,
    pub source_weights: Option<Vec<i32>>,
    pub destinations: Vec<i32>,
    pub dest_weights: Option<Vec<i32>>,
}

fn check_ranks(call: &str, what: &str, ranks: &[i32], comm_size: i32) -> Result<()> {
    match ranks
        .iter()
        .enumerate()
        .find(|(_, &r)| !(0..comm_size).contains(&r))
    {
        Some((i, &r)) => Err(MpiError::arg(
            ErrorClass::Rank,
            call,
            what,
            format!("{what}[{i}] = {r} is not a rank of the communicator (0..{comm_size})"),
        )),
        None => Ok(()),
    }
}

fn check_weights(call: &str, what: &str, weights: Option<&[i32]>, n: usize) -> Result<()> {
    if let Some(w) = weights {
        if w.len() != n {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                what,
                format!("{} weights given for {n} edges", w.len()),
            ));
        }
        if let Some((i, &x)) = w.iter().enumerate().find(|(_, &x)| x < 0) {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                what,
                format!("{what}[{i}] = {x} is negative"),
            ));
        }
    }
    Ok(())
}

impl DistGraph {
    /// `MPI_Dist_graph_create_adjacent`'s checks: every listed process a rank of the
    /// communicator (`MPI_ERR_RANK`), weights (non-negative) for every edge or for
    /// none — `MPI_UNWEIGHTED` on both sides or on neither (`MPI_ERR_ARG`).
    /// `MPI_WEIGHTS_EMPTY` for a side with no edges is `Some(&[])`.
    pub fn adjacent(
        sources: &[i32],
        source_weights: Option<&[i32]>,
        destinations: &[i32],
        dest_weights: Option<&[i32]>,
        comm_size: i32,
    ) -> Result<DistGraph> {
        const CALL: &str = "MPI_Dist_graph_create_adjacent";
        check_ranks(CALL, "sources", sources, comm_size)?;
        check_ranks(CALL, "destinations", destinations, comm_size)?;
        check_weights(CALL, "sourceweights", source_weights, sources.len())?;
        check_weights(CALL, "destweights", dest_weights, destinations.len())?;
        if source_weights.is_some() != dest_weights.is_some() {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                if source_weights.is_none() { "sourceweights" } else { "destweights" },
                "MPI_UNWEIGHTED must be given for both sourceweights and destweights or for neither",
            ));
        }
        Ok(DistGraph {
            sources: sources.to_vec(),
            source_weights: source_weights.map(<[i32]>::to_vec),
            destinations: destinations.to_vec(),
            dest_weights: dest_weights.map(<[i32]>::to_vec),
        })
    }

    /// `MPI_Dist_graph_neighbors_count`'s `indegree`.
    pub fn indegree(&self) -> i32 {
        self.sources.len() as i32
    }

    /// `MPI_Dist_graph_neighbors_count`'s `outdegree`.
    pub fn outdegree(&self) -> i32 {
        self.destinations.len() as i32
    }

    /// `MPI_Dist_graph_neighbors_count`'s `weighted`.
    pub fn is_weighted(&self) -> bool {
        self.source_weights.is_some()
    }

    /// `MPI_Dist_graph_create`'s redistribution, given every process's arguments
    /// (`contributions[r]` from rank `r`, one per process of the communicator): each
    /// process's in- and out-lists. An edge appears in its source's `destinations`
    /// and its destination's `sources`; both lists are ordered by contributing rank,
    /// then by position in that rank's arguments. The graph is weighted if the
    /// contributions that carry edges give weights; mixing weighted and unweighted
    /// contributions is `MPI_ERR_ARG`.
    pub fn from_edges(comm_size: i32, contributions: &[DistGraphEdges]) -> Result<Vec<DistGraph>> {
        const CALL: &str = "MPI_Dist_graph_create";
        if comm_size < 0 || contributions.len() != comm_size as usize {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "comm_old",
                format!(
                    "{} contributions for {comm_size} processes",
                    contributions.len()
                ),
            ));
        }
        let mut weighted: Option<bool> = None;
        for (r, c) in contributions.iter().enumerate() {
            c.validate(comm_size)?;
            if !c.destinations.is_empty() {
                let w = c.weights.is_some();
                if *weighted.get_or_insert(w) != w {
                    return Err(MpiError::arg(
                        ErrorClass::Arg,
                        CALL,
                        "weights",
                        format!(
                            "rank {r} gives {} but an earlier rank did not",
                            if w { "weights" } else { "MPI_UNWEIGHTED" }
                        ),
                    ));
                }
            }
        }
        let weighted =
            weighted.unwrap_or_else(|| contributions.iter().any(|c| c.weights.is_some()));
        let n = comm_size as usize;
        let mut out: Vec<DistGraph> = (0..n)
            .map(|_| DistGraph {
                sources: Vec::new(),
                source_weights: weighted.then(Vec::new),
                destinations: Vec::new(),
                dest_weights: weighted.then(Vec::new),
            })
            .collect();
        for c in contributions {
            for (s, d, w) in c.edges() {
                let (s, d) = (s as usize, d as usize);
                out[s].destinations.push(d as i32);
                out[d].sources.push(s as i32);
                if weighted {
                    let w = w.unwrap_or(1);
                    out[s].dest_weights.as_mut().unwrap().push(w);
                    out[d].source_weights.as_mut().unwrap().push(w);
                }
            }
        }
        Ok(out)
    }
}

/// One process's arguments to `MPI_Dist_graph_create`: for each `sources[i]`,
/// `degrees[i]` edges from it to the next `degrees[i]` entries of `destinations`,
/// with `weights` (`None` = `MPI_UNWEIGHTED`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DistGraphEdges {
    pub sources: Vec<i32>,
    pub degrees: Vec<i32>,
    pub destinations: Vec<i32>,
    pub weights: Option<Vec<i32>>,
}

impl DistGraphEdges {
    /// Checks one process's arguments: one degree per source, non-negative
    /// (`MPI_ERR_ARG`), as many destinations as the degrees add up to (`MPI_ERR_ARG`),
    /// all processes ranks of the communicator (`MPI_ERR_RANK`), a weight per edge.
    pub fn validate(&self, comm_size: i32) -> Result<()> {
        const CALL: &str = "MPI_Dist_graph_create";
        if self.degrees.len() != self.sources.len() {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "degrees",
                format!(
                    "{} degrees given for {} sources",
                    self.degrees.len(),
                    self.sources.len()
                ),
            ));
        }
        let mut total: usize = 0;
        for (i, &d) in self.degrees.iter().enumerate() {
            if d < 0 {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    CALL,
                    "degrees",
                    format!("degrees[{i}] = {d} is negative"),
                ));
            }
            total += d as usize;
        }
        if self.destinations.len() != total {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "destinations",
                format!(
                    "{} destinations given, the degrees add up to {total}",
                    self.destinations.len()
                ),
            ));
        }
        check_ranks(CALL, "sources", &self.sources, comm_size)?;
        check_ranks(CALL, "destinations", &self.destinations, comm_size)?;
        check_weights(CALL, "weights", self.weights.as_deref(), total)
    }

    /// The edges `(source, destination, weight)` in argument order (assumes
    /// [`DistGraphEdges::validate`] passed).
    pub fn edges(&self) -> impl Iterator<Item = (i32, i32, Option<i32>)> + '_ {
        let mut starts = Vec::with_capacity(self.sources.len());
        let mut at = 0usize;
        for &d in &self.degrees {
            starts.push(at);
            at += d.max(0) as usize;
        }
        self.sources
            .iter()
            .zip(&self.degrees)
            .zip(starts)
            .flat_map(move |((&s, &deg), start)| {
                (start..start + deg.max(0) as usize)
                    .map(move |j| (s, self.destinations[j], self.weights.as_ref().map(|w| w[j])))
            })
    }
}
