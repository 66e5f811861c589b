//! The `oxmpi` API's neighbourhood collectives (ring, line, star graph, distributed
//! graph; blocking and immediate), through our mpiexec on 2, 3 and 4 ranks.
mod common;

#[test]
fn api_neighbor_on_2_3_4_ranks() {
    for n in [2, 3, 4] {
        let run = common::run(n, env!("CARGO_BIN_EXE_api_neighbor"), &[]);
        run.assert_ok();
        let out = run.stdout();
        for r in 0..n {
            assert!(
                out.contains(&format!("api_neighbor: rank {r} of {n} ok")),
                "rank {r} did not finish:\n{out}\n{}",
                run.stderr()
            );
        }
    }
}
