//! Topologies and neighbourhood collectives through our mpiexec (8 ranks run
//! the seed's shuffle-exchange example).
mod common;

#[test]
fn cartesian_graph_and_distributed_graph_topologies() {
    for n in [1, 2, 3, 4, 6, 8] {
        let run = common::run(n, env!("CARGO_BIN_EXE_core_topo"), &[]);
        run.assert_ok();
        assert!(run.stdout().contains("topo: ok"), "{}", run.stdout());
    }
}
