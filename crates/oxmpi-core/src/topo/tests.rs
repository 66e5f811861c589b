//! Unit tests of the topology arithmetic (dims_create, Cartesian, graph and
//! distributed graph validation and queries), moved out of the former `topo.rs`.

use super::dims::balanced_factors;
use super::*;
use crate::request::PROC_NULL;

fn class<T: std::fmt::Debug>(r: Result<T>) -> ErrorClass {
    r.expect_err("expected an error").class
}

fn dc(nnodes: i32, dims: &[i32]) -> Result<Vec<i32>> {
    let mut d = dims.to_vec();
    dims_create(nnodes, &mut d).map(|_| d)
}

#[test]
fn dims_create_examples_from_the_standard() {
    assert_eq!(dc(6, &[0, 0]).unwrap(), vec![3, 2]);
    assert_eq!(dc(7, &[0, 0]).unwrap(), vec![7, 1]);
    assert_eq!(dc(6, &[0, 3, 0]).unwrap(), vec![2, 3, 1]);
    assert_eq!(class(dc(7, &[0, 3, 0])), ErrorClass::Dims);
}

#[test]
fn dims_create_balances() {
    assert_eq!(dc(12, &[0, 0]).unwrap(), vec![4, 3]);
    assert_eq!(dc(12, &[0, 0, 0]).unwrap(), vec![3, 2, 2]);
    assert_eq!(dc(16, &[0, 0]).unwrap(), vec![4, 4]);
    assert_eq!(dc(100, &[0, 0, 0]).unwrap(), vec![5, 5, 4]);
    assert_eq!(dc(1, &[0, 0, 0]).unwrap(), vec![1, 1, 1]);
    assert_eq!(dc(8, &[0; 5]).unwrap(), vec![2, 2, 2, 1, 1]);
    assert_eq!(dc(36, &[0, 0, 0]).unwrap(), vec![4, 3, 3]);
    assert_eq!(dc(90, &[0, 0]).unwrap(), vec![10, 9]);
    assert_eq!(dc(64, &[0, 0, 0]).unwrap(), vec![4, 4, 4]);
    assert_eq!(
        dc(1_000_000_000, &[0, 0, 0]).unwrap(),
        vec![1000, 1000, 1000]
    );
    assert_eq!(dc(2_147_483_647, &[0, 0]).unwrap(), vec![2_147_483_647, 1]); // prime
    assert_eq!(dc(24, &[0, 2, 0]).unwrap(), vec![4, 2, 3]);
    assert_eq!(dc(5, &[0]).unwrap(), vec![5]);
    assert_eq!(dc(6, &[2, 3]).unwrap(), vec![2, 3]);
    // Large highly composite numbers stay fast.
    let d = dc(735_134_400, &[0; 6]).unwrap();
    assert_eq!(d.iter().map(|&x| x as i64).product::<i64>(), 735_134_400);
    assert!(d.windows(2).all(|w| w[0] >= w[1]), "{d:?}");
}

#[test]
fn dims_create_breaks_ties_as_mpich() {
    // MPICH 4's answers where several grids are equally balanced.
    assert_eq!(dc(360, &[0, 0, 0]).unwrap(), vec![10, 6, 6]);
    assert_eq!(dc(3696, &[0, 0, 0]).unwrap(), vec![22, 14, 12]);
    assert_eq!(dc(2160, &[0; 4]).unwrap(), vec![10, 6, 6, 6]);
    assert_eq!(dc(2520, &[0; 4]).unwrap(), vec![10, 7, 6, 6]);
    assert_eq!(dc(2880, &[0; 4]).unwrap(), vec![10, 8, 6, 6]);
    assert_eq!(dc(168, &[0; 4]).unwrap(), vec![7, 4, 3, 2]);
    assert_eq!(dc(720, &[0, 2, 0, 0]).unwrap(), vec![10, 2, 6, 6]);
}

#[test]
fn dims_create_errors() {
    assert_eq!(class(dc(-1, &[0])), ErrorClass::Arg);
    assert_eq!(class(dc(6, &[-2, 0])), ErrorClass::Dims);
    assert_eq!(class(dc(6, &[4, 0])), ErrorClass::Dims);
    assert_eq!(class(dc(8, &[2, 2])), ErrorClass::Dims);
    assert_eq!(class(dc(0, &[0, 0])), ErrorClass::Dims);
    assert_eq!(class(dc(6, &[i32::MAX, i32::MAX, 0])), ErrorClass::Dims);
    assert!(dc(5, &[]).unwrap().is_empty());
    let e = dc(7, &[0, 3, 0]).unwrap_err();
    assert!(
        e.message.contains("MPI_Dims_create") && e.message.contains("dims"),
        "{e}"
    );
}

#[test]
fn balanced_factors_is_optimal_for_small_inputs() {
    // Against brute force over all non-increasing factorisations.
    fn all(n: u64, k: usize, max: u64, cur: &mut Vec<u64>, out: &mut Vec<Vec<u64>>) {
        if k == 0 {
            if n == 1 {
                out.push(cur.clone());
            }
            return;
        }
        for f in (1..=max.min(n)).rev() {
            if n % f == 0 {
                cur.push(f);
                all(n / f, k - 1, f, cur, out);
                cur.pop();
            }
        }
    }
    for n in 1..=400u64 {
        for k in 1..=5 {
            let mut v = Vec::new();
            all(n, k, n, &mut Vec::new(), &mut v);
            let best = v.iter().map(|f| f[0] - f[k - 1]).min().unwrap();
            let got = balanced_factors(n, k);
            assert_eq!(got.iter().product::<u64>(), n);
            assert!(got.windows(2).all(|w| w[0] >= w[1]), "{n} {k} {got:?}");
            assert_eq!(got[0] - got[k - 1], best, "n={n} k={k} got {got:?}");
        }
    }
}

#[test]
fn cart_create_checks() {
    let c = Cart::new(&[3, 4], &[false, true], 12).unwrap();
    assert_eq!(c.size(), 12);
    assert_eq!(c.ndims(), 2);
    assert_eq!(Cart::new(&[3, 4], &[false, true], 20).unwrap(), c);
    assert_eq!(
        class(Cart::new(&[3, 4], &[false, true], 11)),
        ErrorClass::Arg
    );
    assert_eq!(
        class(Cart::new(&[3, 0], &[false, true], 12)),
        ErrorClass::Dims
    );
    assert_eq!(
        class(Cart::new(&[3, -1], &[false, true], 12)),
        ErrorClass::Dims
    );
    assert_eq!(class(Cart::new(&[3, 4], &[false], 12)), ErrorClass::Arg);
    assert_eq!(
        class(Cart::new(&[65536, 65536], &[false, false], i32::MAX)),
        ErrorClass::Dims
    );
    let z = Cart::new(&[], &[], 4).unwrap();
    assert_eq!((z.size(), z.ndims()), (1, 0));
    assert_eq!(z.rank(&[]).unwrap(), 0);
    assert_eq!(z.coords(0).unwrap(), Vec::<i32>::new());
    assert_eq!(class(Cart::new(&[], &[], 0)), ErrorClass::Arg);
    let e = Cart::new(&[3, 4], &[false, true], 11).unwrap_err();
    assert!(e.message.contains("MPI_Cart_create"), "{e}");
}

#[test]
fn cart_rank_and_coords() {
    let c = Cart::new(&[2, 3, 4], &[false, true, false], 24).unwrap();
    assert_eq!(c.rank(&[0, 0, 0]).unwrap(), 0);
    assert_eq!(c.rank(&[0, 0, 1]).unwrap(), 1);
    assert_eq!(c.rank(&[0, 1, 0]).unwrap(), 4);
    assert_eq!(c.rank(&[1, 2, 3]).unwrap(), 23);
    assert_eq!(c.coords(23).unwrap(), vec![1, 2, 3]);
    assert_eq!(c.coords(13).unwrap(), vec![1, 0, 1]);
    // Periodic dimension 1 wraps both ways.
    assert_eq!(c.rank(&[1, 3, 3]).unwrap(), c.rank(&[1, 0, 3]).unwrap());
    assert_eq!(c.rank(&[1, -1, 3]).unwrap(), 23);
    assert_eq!(c.rank(&[0, -7, 0]).unwrap(), c.rank(&[0, 2, 0]).unwrap());
    assert_eq!(
        c.rank(&[0, i32::MIN, 0]).unwrap(),
        c.rank(&[0, i32::MIN.rem_euclid(3), 0]).unwrap()
    );
    // Non-periodic dimensions do not.
    assert_eq!(class(c.rank(&[2, 0, 0])), ErrorClass::Arg);
    assert_eq!(class(c.rank(&[-1, 0, 0])), ErrorClass::Arg);
    assert_eq!(class(c.rank(&[0, 0, 4])), ErrorClass::Arg);
    assert_eq!(class(c.rank(&[0, 0])), ErrorClass::Arg);
    assert_eq!(class(c.coords(24)), ErrorClass::Rank);
    assert_eq!(class(c.coords(-1)), ErrorClass::Rank);
    let e = c.rank(&[2, 0, 0]).unwrap_err();
    assert!(
        e.message.contains("MPI_Cart_rank") && e.message.contains("coords"),
        "{e}"
    );
    for r in 0..24 {
        assert_eq!(c.rank(&c.coords(r).unwrap()).unwrap(), r);
    }
}

#[test]
fn cart_shift_at_both_ends() {
    // A 1-D ring of 4 and a 1-D line of 4.
    let ring = Cart::new(&[4], &[true], 4).unwrap();
    let line = Cart::new(&[4], &[false], 4).unwrap();
    assert_eq!(ring.shift(0, 0, 1).unwrap(), (3, 1));
    assert_eq!(ring.shift(3, 0, 1).unwrap(), (2, 0));
    assert_eq!(ring.shift(0, 0, -1).unwrap(), (1, 3));
    assert_eq!(ring.shift(1, 0, 6).unwrap(), (3, 3));
    assert_eq!(ring.shift(2, 0, 0).unwrap(), (2, 2));
    assert_eq!(line.shift(0, 0, 1).unwrap(), (PROC_NULL, 1));
    assert_eq!(line.shift(3, 0, 1).unwrap(), (2, PROC_NULL));
    assert_eq!(line.shift(0, 0, -1).unwrap(), (1, PROC_NULL));
    assert_eq!(line.shift(3, 0, -1).unwrap(), (PROC_NULL, 2));
    assert_eq!(line.shift(1, 0, 5).unwrap(), (PROC_NULL, PROC_NULL));
    assert_eq!(line.shift(1, 0, i32::MIN).unwrap(), (PROC_NULL, PROC_NULL));
    assert_eq!(
        ring.shift(1, 0, i32::MAX).unwrap().1,
        ((1 + i32::MAX as i64) % 4) as i32
    );
    // 2-D: rows non-periodic, columns periodic.
    let g = Cart::new(&[3, 4], &[false, true], 12).unwrap();
    assert_eq!(g.shift(0, 0, 1).unwrap(), (PROC_NULL, 4));
    assert_eq!(g.shift(8, 0, 1).unwrap(), (4, PROC_NULL));
    assert_eq!(g.shift(4, 1, 1).unwrap(), (7, 5));
    assert_eq!(g.shift(7, 1, 1).unwrap(), (6, 4));
    assert_eq!(class(g.shift(0, 2, 1)), ErrorClass::Arg);
    assert_eq!(class(g.shift(0, -1, 1)), ErrorClass::Arg);
    assert_eq!(class(g.shift(12, 0, 1)), ErrorClass::Rank);
    let z = Cart::new(&[], &[], 1).unwrap();
    assert_eq!(class(z.shift(0, 0, 1)), ErrorClass::Topology);
    assert_eq!(g.neighbors(5).unwrap(), vec![1, 9, 4, 6]);
    assert_eq!(g.neighbors(0).unwrap(), vec![PROC_NULL, 4, 3, 1]);
}

#[test]
fn cart_sub_and_split_keys() {
    let c = Cart::new(&[2, 3, 4], &[true, false, true], 24).unwrap();
    assert_eq!(
        c.sub(&[true, false, true]).unwrap(),
        Cart {
            dims: vec![2, 4],
            periods: vec![true, true]
        }
    );
    assert_eq!(
        c.sub(&[false, false, false]).unwrap(),
        Cart {
            dims: vec![],
            periods: vec![]
        }
    );
    assert_eq!(class(c.sub(&[true])), ErrorClass::Arg);
    // Keeping dimension 1: colour = (c0, c2) numbered row-major, key = c1.
    let remain = [false, true, false];
    let sub = c.sub(&remain).unwrap();
    for r in 0..24 {
        let co = c.coords(r).unwrap();
        let (color, key) = c.sub_color_key(r, &remain);
        assert_eq!(color, Some(co[0] * 4 + co[2]));
        assert_eq!(key, co[1]);
        assert_eq!(sub.coords(key).unwrap(), vec![co[1]]);
    }
    // Keeping everything: one colour, key = rank. Keeping nothing: key 0.
    for r in 0..24 {
        assert_eq!(c.sub_color_key(r, &[true, true, true]), (Some(0), r));
        assert_eq!(c.sub_color_key(r, &[false, false, false]), (Some(r), 0));
    }
    assert_eq!(c.sub_color_key(24, &remain), (None, 0));
    assert_eq!(c.sub_color_key(0, &[true]), (None, 0));
}

#[test]
fn cart_map_is_the_identity() {
    assert_eq!(Cart::map(&[2, 3], &[false, false], 5, 8).unwrap(), Some(5));
    assert_eq!(Cart::map(&[2, 3], &[false, false], 6, 8).unwrap(), None);
    assert_eq!(Cart::map(&[], &[], 0, 3).unwrap(), Some(0));
    assert_eq!(Cart::map(&[], &[], 1, 3).unwrap(), None);
    assert_eq!(
        class(Cart::map(&[3, 3], &[false, false], 0, 8)),
        ErrorClass::Dims
    );
    assert_eq!(
        class(Cart::map(&[2, 0], &[false, false], 0, 8)),
        ErrorClass::Dims
    );
    assert_eq!(class(Cart::map(&[2, 3], &[false], 0, 8)), ErrorClass::Arg);
    assert_eq!(
        class(Cart::map(&[2, 3], &[false, false], 8, 8)),
        ErrorClass::Rank
    );
    assert_eq!(
        class(Cart::map(&[2, 3], &[false, false], -1, 8)),
        ErrorClass::Rank
    );
}

/// The seed's shuffle-exchange graph for n = 3 (SCOPE.md section 7).
#[test]
fn shuffle_exchange_table() {
    let table = [
        [1, 0, 0],
        [0, 2, 4],
        [3, 4, 1],
        [2, 6, 5],
        [5, 1, 2],
        [4, 3, 6],
        [7, 5, 3],
        [6, 7, 7],
    ];
    let index: Vec<i32> = (1..=8).map(|i| 3 * i).collect();
    let edges: Vec<i32> = table.iter().flatten().copied().collect();
    let g = Graph::new(8, &index, &edges, 8).unwrap();
    assert_eq!(g.nnodes(), 8);
    assert_eq!(g.nedges(), 24);
    for (node, row) in table.iter().enumerate() {
        assert_eq!(g.neighbors(node as i32).unwrap(), row);
        assert_eq!(g.neighbors_count(node as i32).unwrap(), 3);
    }
    let topo = Topology::Graph(g);
    assert_eq!(
        topo.neighborhood(3).unwrap(),
        (vec![2, 6, 5], vec![2, 6, 5])
    );
}

#[test]
fn graph_encoding_and_errors() {
    // The standard's 4-node example: 0-1, 0-3, 1-0, 2-3, 3-0, 3-2.
    let g = Graph::new(4, &[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], 4).unwrap();
    assert_eq!(g.neighbors(0).unwrap(), &[1, 3]);
    assert_eq!(g.neighbors(1).unwrap(), &[0]);
    assert_eq!(g.neighbors(2).unwrap(), &[3]);
    assert_eq!(g.neighbors(3).unwrap(), &[0, 2]);
    assert_eq!(class(g.neighbors(4)), ErrorClass::Rank);
    assert_eq!(class(g.neighbors_count(-1)), ErrorClass::Rank);
    // Nodes without neighbours, self loops, repeated edges.
    let h = Graph::new(3, &[0, 3, 3], &[1, 1, 2], 5).unwrap();
    assert_eq!(h.neighbors(0).unwrap(), &[] as &[i32]);
    assert_eq!(h.neighbors(1).unwrap(), &[1, 1, 2]);
    assert_eq!(h.neighbors_count(2).unwrap(), 0);
    let empty = Graph::new(0, &[], &[], 3).unwrap();
    assert_eq!((empty.nnodes(), empty.nedges()), (0, 0));

    assert_eq!(
        class(Graph::new(5, &[1, 2, 3, 4, 5], &[0, 0, 0, 0, 0], 4)),
        ErrorClass::Arg
    );
    assert_eq!(class(Graph::new(-1, &[], &[], 4)), ErrorClass::Arg);
    assert_eq!(class(Graph::new(2, &[1], &[0], 4)), ErrorClass::Arg);
    assert_eq!(class(Graph::new(2, &[2, 1], &[0, 1], 4)), ErrorClass::Arg);
    assert_eq!(class(Graph::new(2, &[-1, 1], &[0], 4)), ErrorClass::Arg);
    assert_eq!(class(Graph::new(2, &[1, 2], &[0], 4)), ErrorClass::Arg);
    assert_eq!(class(Graph::new(2, &[1, 2], &[0, 2], 4)), ErrorClass::Arg);
    assert_eq!(class(Graph::new(2, &[1, 2], &[0, -1], 4)), ErrorClass::Arg);
    assert_eq!(
        Graph::edge_count("MPI_Graph_create", &[2, 3, 4, 6]).unwrap(),
        6
    );
    assert_eq!(Graph::edge_count("MPI_Graph_create", &[]).unwrap(), 0);
    let e = Graph::new(2, &[1, 2], &[0, 2], 4).unwrap_err();
    assert!(
        e.message.contains("MPI_Graph_create") && e.message.contains("edges"),
        "{e}"
    );

    assert_eq!(
        Graph::map(4, &[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], 3, 6).unwrap(),
        Some(3)
    );
    assert_eq!(
        Graph::map(4, &[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], 4, 6).unwrap(),
        None
    );
    assert_eq!(
        class(Graph::map(4, &[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], 6, 6)),
        ErrorClass::Rank
    );
    assert_eq!(
        class(Graph::map(4, &[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], 0, 3)),
        ErrorClass::Arg
    );
}

#[test]
fn dist_graph_adjacent() {
    let d = DistGraph::adjacent(&[1, 2], Some(&[5, 6]), &[3], Some(&[7]), 4).unwrap();
    assert_eq!((d.indegree(), d.outdegree(), d.is_weighted()), (2, 1, true));
    let u = DistGraph::adjacent(&[], None, &[0, 0], None, 1).unwrap();
    assert_eq!(
        (u.indegree(), u.outdegree(), u.is_weighted()),
        (0, 2, false)
    );
    // MPI_WEIGHTS_EMPTY on an empty side of a weighted graph.
    assert!(DistGraph::adjacent(&[], Some(&[]), &[1], Some(&[2]), 2)
        .unwrap()
        .is_weighted());
    assert_eq!(
        class(DistGraph::adjacent(&[4], None, &[], None, 4)),
        ErrorClass::Rank
    );
    assert_eq!(
        class(DistGraph::adjacent(&[], None, &[-1], None, 4)),
        ErrorClass::Rank
    );
    assert_eq!(
        class(DistGraph::adjacent(&[1], Some(&[]), &[], Some(&[]), 4)),
        ErrorClass::Arg
    );
    assert_eq!(
        class(DistGraph::adjacent(&[1], Some(&[1]), &[2], None, 4)),
        ErrorClass::Arg
    );
    assert_eq!(
        class(DistGraph::adjacent(&[1], Some(&[-1]), &[], Some(&[]), 4)),
        ErrorClass::Arg
    );
    let t = Topology::DistGraph(d);
    assert_eq!(t.neighborhood(0).unwrap(), (vec![1, 2], vec![3]));
}

#[test]
fn dist_graph_from_edges() {
    // Rank 0 declares 0->1, 0->2 and 2->1; rank 1 declares 1->0; rank 2 nothing.
    let contrib = vec![
        DistGraphEdges {
            sources: vec![0, 2],
            degrees: vec![2, 1],
            destinations: vec![1, 2, 1],
            weights: None,
        },
        DistGraphEdges {
            sources: vec![1],
            degrees: vec![1],
            destinations: vec![0],
            weights: None,
        },
        DistGraphEdges::default(),
    ];
    let g = DistGraph::from_edges(3, &contrib).unwrap();
    assert_eq!(g[0].destinations, vec![1, 2]);
    assert_eq!(g[0].sources, vec![1]);
    assert_eq!(g[1].sources, vec![0, 2]);
    assert_eq!(g[1].destinations, vec![0]);
    assert_eq!(g[2].sources, vec![0]);
    assert_eq!(g[2].destinations, vec![1]);
    assert!(g.iter().all(|d| !d.is_weighted()));

    let w = vec![
        DistGraphEdges {
            sources: vec![1],
            degrees: vec![2],
            destinations: vec![0, 1],
            weights: Some(vec![10, 11]),
        },
        DistGraphEdges {
            sources: vec![],
            degrees: vec![],
            destinations: vec![],
            weights: None,
        },
    ];
    let g = DistGraph::from_edges(2, &w).unwrap();
    assert_eq!(g[1].destinations, vec![0, 1]);
    assert_eq!(g[1].dest_weights, Some(vec![10, 11]));
    assert_eq!(g[0].sources, vec![1]);
    assert_eq!(g[0].source_weights, Some(vec![10]));
    assert_eq!(g[1].source_weights, Some(vec![11]));
    assert_eq!(g[0].dest_weights, Some(vec![]));

    let mixed = vec![
        DistGraphEdges {
            sources: vec![0],
            degrees: vec![1],
            destinations: vec![1],
            weights: Some(vec![1]),
        },
        DistGraphEdges {
            sources: vec![1],
            degrees: vec![1],
            destinations: vec![0],
            weights: None,
        },
    ];
    assert_eq!(class(DistGraph::from_edges(2, &mixed)), ErrorClass::Arg);
    assert_eq!(class(DistGraph::from_edges(3, &mixed)), ErrorClass::Arg);
    let bad = |e: DistGraphEdges| DistGraph::from_edges(1, &[e]).map(|_| ());
    assert_eq!(
        class(bad(DistGraphEdges {
            sources: vec![0],
            degrees: vec![],
            destinations: vec![],
            weights: None
        })),
        ErrorClass::Arg
    );
    assert_eq!(
        class(bad(DistGraphEdges {
            sources: vec![0],
            degrees: vec![-1],
            destinations: vec![],
            weights: None
        })),
        ErrorClass::Arg
    );
    assert_eq!(
        class(bad(DistGraphEdges {
            sources: vec![0],
            degrees: vec![2],
            destinations: vec![0],
            weights: None
        })),
        ErrorClass::Arg
    );
    assert_eq!(
        class(bad(DistGraphEdges {
            sources: vec![1],
            degrees: vec![1],
            destinations: vec![0],
            weights: None
        })),
        ErrorClass::Rank
    );
    assert_eq!(
        class(bad(DistGraphEdges {
            sources: vec![0],
            degrees: vec![1],
            destinations: vec![3],
            weights: None
        })),
        ErrorClass::Rank
    );
    assert_eq!(
        class(bad(DistGraphEdges {
            sources: vec![0],
            degrees: vec![1],
            destinations: vec![0],
            weights: Some(vec![])
        })),
        ErrorClass::Arg
    );
}

#[test]
fn topology_codes_and_kind_checks() {
    let c = Topology::Cart(Cart::new(&[2], &[false], 2).unwrap());
    let g = Topology::Graph(Graph::new(1, &[0], &[], 1).unwrap());
    let d = Topology::DistGraph(DistGraph::adjacent(&[], None, &[], None, 1).unwrap());
    assert_eq!(Topology::topo_test(Some(&c)), Some(TopologyKind::Cart));
    assert_eq!(Topology::topo_test(Some(&g)), Some(TopologyKind::Graph));
    assert_eq!(Topology::topo_test(Some(&d)), Some(TopologyKind::DistGraph));
    assert_eq!(Topology::topo_test(None), None);
    assert!(Topology::require_cart(Some(&c), "MPI_Cart_get").is_ok());
    assert_eq!(
        class(Topology::require_cart(Some(&g), "MPI_Cart_get")),
        ErrorClass::Topology
    );
    assert_eq!(
        class(Topology::require_cart(None, "MPI_Cart_get")),
        ErrorClass::Topology
    );
    assert!(Topology::require_graph(Some(&g), "MPI_Graph_get").is_ok());
    assert_eq!(
        class(Topology::require_graph(Some(&d), "MPI_Graph_get")),
        ErrorClass::Topology
    );
    assert!(Topology::require_dist_graph(Some(&d), "MPI_Dist_graph_neighbors").is_ok());
    assert_eq!(
        class(Topology::require_dist_graph(
            Some(&c),
            "MPI_Dist_graph_neighbors"
        )),
        ErrorClass::Topology
    );
    let e = Topology::require_cart(None, "MPI_Cart_shift").unwrap_err();
    assert!(e.message.contains("MPI_Cart_shift"), "{e}");
    assert_eq!(
        c.neighborhood(0).unwrap(),
        (vec![PROC_NULL, 1], vec![PROC_NULL, 1])
    );
}
