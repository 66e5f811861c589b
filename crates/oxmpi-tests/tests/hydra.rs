//! oxmpi programs start under MPICH's Hydra (`mpiexec.mpich`), through the
//! PMI-1 wire protocol, as one job. Skipped with a notice where MPICH is not
//! installed (CI installs it).
mod common;

use std::process::Command;

fn hydra() -> Option<&'static str> {
    ["mpiexec.mpich", "mpiexec.hydra"].into_iter().find(|c| {
        Command::new("which")
            .arg(c)
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn traffic_under_hydra() {
    let Some(h) = hydra() else {
        eprintln!("SKIP: MPICH's mpiexec is not installed");
        assert!(
            std::env::var("CI").is_err(),
            "CI must install mpich for this test"
        );
        return;
    };
    let before = common::shm_leftovers();
    let out = Command::new(h)
        .args(["-n", "3", env!("CARGO_BIN_EXE_core_pt2pt"), "traffic"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("traffic: ok"));
    // Hydra cleans nothing of ours: the engine itself must leave no segment.
    let after: Vec<_> = common::shm_leftovers()
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    assert!(after.is_empty(), "left in /dev/shm: {after:?}");
}

#[test]
fn hello_sizes_under_hydra() {
    let Some(h) = hydra() else { return };
    let out = Command::new(h)
        .args(["-n", "4", env!("CARGO_BIN_EXE_api_p2p")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8_lossy(&out.stdout);
    for r in 0..4 {
        assert!(s.contains(&format!("rank {r} of 4 ok")), "{s}");
    }
}

#[test]
fn hydra_ranks_on_one_node_share_memory() {
    let Some(h) = hydra() else { return };
    // One host: the hierarchy query must answer one level (the rank program
    // checks it), i.e. Hydra's process mapping put every rank on node 0.
    let out = Command::new(h)
        .args(["-n", "3", env!("CARGO_BIN_EXE_core_hierarchy")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .matches("hierarchy: rank")
            .count(),
        3
    );
}
