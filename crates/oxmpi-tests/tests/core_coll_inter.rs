//! Collectives on intercommunicators (see src/bin/core_coll_inter.rs): every
//! operation, blocking and non-blocking, roots in both groups, counts 0 and > 0,
//! a non-commutative user op, on 2-8 ranks split into uneven groups.
mod common;

const PROG: &str = env!("CARGO_BIN_EXE_core_coll_inter");

fn launch(n: usize, split: &str) {
    let run = common::run(n, PROG, &[split]);
    run.assert_ok();
    assert!(
        run.stdout().contains("coll inter ("),
        "{n} ranks, split {split}: no ok line:\n{}",
        run.stdout()
    );
}

#[test]
fn evens_and_odds() {
    for n in [2, 3, 4, 5, 8] {
        launch(n, "mod2");
    }
}

#[test]
fn one_and_the_rest() {
    for n in [2, 3, 6, 7] {
        launch(n, "first");
    }
}

#[test]
fn last_two_and_the_rest() {
    for n in [3, 5, 8] {
        launch(n, "last2");
    }
}
