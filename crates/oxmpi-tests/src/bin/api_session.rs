//! MPI-4 sessions through the `oxmpi` API: a session before `initialize`, two
//! sessions beside the `Universe`, a session after the universe is dropped;
//! communicators from process-set groups; a group of one session refused by
//! another.

use oxmpi::collective::SystemOperation;
use oxmpi::session::Session;
use oxmpi::traits::*;
use oxmpi::ErrorClass;
use oxmpi_tests::check;

/// Sums 1 over a communicator of every process made from `s`: returns its size.
fn world_of(s: &Session, tag: &str) -> i32 {
    let g = s.group_from_pset("mpi://WORLD").unwrap();
    let c = s.communicator_from_group(&g, tag).unwrap();
    let mut sum = 0;
    c.all_reduce_into(&1i32, &mut sum, SystemOperation::sum());
    assert_eq!(sum, c.size());
    sum
}

fn main() {
    let early = Session::init();
    let n = early.pset_size("mpi://WORLD").unwrap();
    let me_alone = early.group_from_pset("mpi://SELF").unwrap();
    assert_eq!(me_alone.group().size(), 1);
    assert_eq!(world_of(&early, "before") as usize, n);
    assert!(!oxmpi::is_initialized());
    let err = early.group_from_pset("mpi://MOON").unwrap_err();
    assert_eq!(err.class, ErrorClass::Arg);

    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let me = world.rank();
    check!(me, world.size() as usize == n, "world size");
    let other = Session::try_init(oxmpi::Threading::Multiple).unwrap();
    check!(me, world_of(&other, "beside") as usize == n, "beside");
    let g = early.group_from_pset("mpi://WORLD").unwrap();
    let e = other.communicator_from_group(&g, "mixed").unwrap_err();
    check!(me, e.class == ErrorClass::Session, "mixing sessions: {e}");
    other.finalize().unwrap();
    drop(world);
    drop(universe);
    check!(me, oxmpi::is_finalized(), "finalized");

    check!(me, world_of(&early, "after") as usize == n, "after");
    drop(early);
    println!("api_session: rank {me} of {n} ok");
}
