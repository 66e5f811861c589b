//! Communicators, groups, names, attributes, intercommunicators and the machine
//! hierarchy through the `oxmpi` API (rsmpi 0.8 names). Runs on any size >= 2.

use oxmpi::topology::{
    Color, CommunicatorRelation, GroupRelation, MergeOrder, Rank, SimpleCommunicator, SystemGroup,
    Topology,
};
use oxmpi::traits::*;
use oxmpi_tests::check;

#[derive(Clone, Debug, PartialEq)]
struct Cloned(i32);
impl CommAttribute for Cloned {
    const CLONE_ON_DUP: bool = true;
}

#[derive(Clone, Debug, PartialEq)]
struct NotCloned(String);
impl CommAttribute for NotCloned {}

static DROPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
#[derive(Clone, Debug)]
struct CountsDrops;
impl Drop for CountsDrops {
    fn drop(&mut self) {
        DROPS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}
impl CommAttribute for CountsDrops {}

fn world_ranks(c: &dyn Communicator) -> Vec<Rank> {
    c.group().world_ranks()
}

/// With `FAKE_HOSTS=k`, rank r pretends to live on host r % k: only the hierarchy query
/// runs (ranks on different fake hosts cannot talk without a network transport).
fn fake_hosts() -> Option<i32> {
    let k: i32 = std::env::var("FAKE_HOSTS").ok()?.parse().ok()?;
    let r: i32 = std::env::var("PMI_RANK").ok()?.parse().ok()?;
    // Single-threaded at this point: nothing else reads the environment.
    std::env::set_var("OXMPI_HOST_ID", format!("fake-host-{}", r % k));
    Some(k)
}

fn main() {
    let fake = fake_hosts();
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    if let Some(k) = fake {
        let levels = universe.cluster_info();
        check!(me, levels.len() == 2, "levels {levels:?}");
        let host = levels[1];
        let on_my_host: Vec<Rank> = (0..size).filter(|r| r % k == me % k).collect();
        check!(me, host.cluster_id == me % k, "host id {host:?}");
        check!(
            me,
            host.size == on_my_host.len() as i32,
            "host size {host:?}"
        );
        check!(
            me,
            host.rank == on_my_host.iter().position(|&r| r == me).unwrap() as i32,
            "host rank {host:?}"
        );
        println!("api_comm: rank {me} of {size} ok (fake hosts)");
        return;
    }
    check!(me, size >= 2, "needs at least 2 ranks");

    // 1. split_by_color / split_by_color_with_key: colour = parity, key reverses.
    let parity = world.split_by_color(Color::with_value(me % 2)).unwrap();
    let want: Vec<Rank> = (0..size).filter(|r| r % 2 == me % 2).collect();
    check!(
        me,
        world_ranks(&parity) == want,
        "parity members {:?}",
        world_ranks(&parity)
    );
    check!(me, parity.rank() == me / 2, "parity rank {}", parity.rank());
    let rev = world
        .split_by_color_with_key(Color::with_value(0), size - me)
        .unwrap();
    check!(
        me,
        rev.rank() == size - 1 - me,
        "reversed rank {}",
        rev.rank()
    );
    let rev_members: Vec<Rank> = (0..size).rev().collect();
    check!(
        me,
        world_ranks(&rev) == rev_members,
        "reversed {:?}",
        world_ranks(&rev)
    );
    // Undefined colour: no communicator.
    let only0 = world.split_by_color(if me == 0 {
        Color::with_value(3)
    } else {
        Color::undefined()
    });
    check!(me, only0.is_some() == (me == 0), "undefined colour");
    if let Some(c) = &only0 {
        check!(me, c.size() == 1, "only0 size");
    }
    // The split communicators carry traffic of their own.
    let sum = {
        let mut s = 0;
        parity.all_reduce_into(&me, &mut s, oxmpi::collective::SystemOperation::sum());
        s
    };
    check!(me, sum == want.iter().sum::<Rank>(), "parity sum {sum}");

    // 2. duplicate and compare.
    let dup = world.duplicate();
    check!(
        me,
        world.compare(&dup) == CommunicatorRelation::Congruent,
        "dup congruent"
    );
    check!(
        me,
        world.compare(&world) == CommunicatorRelation::Identical,
        "identical"
    );
    check!(
        me,
        world.compare(&rev) == CommunicatorRelation::Similar,
        "reversed similar"
    );
    check!(
        me,
        world.compare(&parity) == CommunicatorRelation::Unequal,
        "parity unequal"
    );
    check!(me, dup.size() == size && dup.rank() == me, "dup shape");
    check!(me, !dup.test_inter(), "dup is intra");
    // Messages on the duplicate do not match receives on the world.
    let peer = (me + 1) % size;
    let from = (me + size - 1) % size;
    world.process_at_rank(peer).send_with_tag(&1i32, 5);
    dup.process_at_rank(peer).send_with_tag(&2i32, 5);
    let (a, _) = dup.process_at_rank(from).receive_with_tag::<i32>(5);
    let (b, _) = world.process_at_rank(from).receive_with_tag::<i32>(5);
    check!(
        me,
        (a, b) == (2, 1),
        "contexts mixed: dup got {a}, world got {b}"
    );

    // 3. split_shared: every rank runs on this host.
    let shared = world.split_shared(me);
    check!(
        me,
        shared.size() == size && shared.rank() == me,
        "shared {} {}",
        shared.size(),
        shared.rank()
    );

    // 4. Groups.
    let g = world.group();
    check!(me, g.size() == size && g.rank() == Some(me), "world group");
    check!(
        me,
        g.compare(&dup.group()) == GroupRelation::Identical,
        "group ident"
    );
    check!(
        me,
        g.compare(&rev.group()) == GroupRelation::Similar,
        "group similar"
    );
    let evens = g.include(&(0..size).filter(|r| r % 2 == 0).collect::<Vec<_>>());
    let high = g.include(&(1..size).rev().collect::<Vec<_>>()); // size-1, ..., 1
    check!(
        me,
        high.world_ranks() == (1..size).rev().collect::<Vec<_>>(),
        "include order"
    );
    let u = evens.union(&high);
    let mut want_u: Vec<Rank> = (0..size).filter(|r| r % 2 == 0).collect();
    want_u.extend((1..size).rev().filter(|r| r % 2 == 1));
    check!(
        me,
        u.world_ranks() == want_u,
        "union order {:?}",
        u.world_ranks()
    );
    let i = high.intersection(&evens);
    let want_i: Vec<Rank> = (1..size).rev().filter(|r| r % 2 == 0).collect();
    check!(
        me,
        i.world_ranks() == want_i,
        "intersection order {:?}",
        i.world_ranks()
    );
    let d = high.difference(&evens);
    let want_d: Vec<Rank> = (1..size).rev().filter(|r| r % 2 == 1).collect();
    check!(
        me,
        d.world_ranks() == want_d,
        "difference order {:?}",
        d.world_ranks()
    );
    let ex = g.exclude(&[0]);
    check!(
        me,
        ex.world_ranks() == (1..size).collect::<Vec<_>>(),
        "exclude"
    );
    check!(
        me,
        ex.rank() == if me == 0 { None } else { Some(me - 1) },
        "exclude rank"
    );
    check!(
        me,
        g.difference(&g).compare(&SystemGroup::empty()) == GroupRelation::Identical,
        "empty"
    );
    let ranks: Vec<Rank> = (0..size).collect();
    let t = g.translate_ranks(&ranks, &high);
    let want_t: Vec<Option<Rank>> = (0..size)
        .map(|r| if r == 0 { None } else { Some(size - 1 - r) })
        .collect();
    check!(me, t == want_t, "translate_ranks {t:?}");
    check!(
        me,
        high.translate_rank(0, &g) == Some(size - 1),
        "translate_rank"
    );
    check!(
        me,
        g.try_include(&[size]).unwrap_err().class == oxmpi::ErrorClass::Rank,
        "bad include"
    );
    check!(
        me,
        g.try_translate_ranks(&[-5], &high).is_err(),
        "bad translate"
    );

    // 5. split_by_subgroup_collective (MPI_Comm_create) and split_by_subgroup
    //    (MPI_Comm_create_group): the communicator follows the group's order.
    let c = world.split_by_subgroup_collective(&high);
    check!(me, c.is_some() == (me != 0), "create membership");
    if let Some(c) = &c {
        check!(
            me,
            c.group().compare(&high) == GroupRelation::Identical,
            "create order"
        );
        check!(me, c.rank() == size - 1 - me, "create rank {}", c.rank());
        c.barrier();
    }
    let mine = if me % 2 == 0 { &evens } else { &d };
    let cg = world.split_by_subgroup_with_tag(mine, 11);
    if me % 2 == 0 || d.rank().is_some() {
        let cg = cg.unwrap();
        check!(
            me,
            cg.group().compare(mine) == GroupRelation::Identical,
            "create_group order"
        );
        let mut total = 0;
        cg.all_reduce_into(&1, &mut total, oxmpi::collective::SystemOperation::sum());
        check!(me, total == mine.size(), "create_group size {total}");
    }
    // Not a member: None at once, no communication.
    check!(
        me,
        world.split_by_subgroup(&SystemGroup::empty()).is_none(),
        "empty create_group"
    );

    // 6. Names.
    check!(
        me,
        world.get_name() == "MPI_COMM_WORLD",
        "world name {}",
        world.get_name()
    );
    check!(
        me,
        SimpleCommunicator::self_comm().get_name() == "MPI_COMM_SELF",
        "self name"
    );
    check!(me, dup.get_name().is_empty(), "dup has no name");
    dup.set_name("dup of world");
    check!(me, dup.get_name() == "dup of world", "set name");
    check!(me, world.get_name() == "MPI_COMM_WORLD", "world name kept");

    // 7. Attributes: cloned or not on duplicate, dropped with the communicator.
    let mut a = world.duplicate();
    check!(me, a.get_attr::<Cloned>().is_none(), "no attr yet");
    a.set_attr(Cloned(10));
    a.set_attr(NotCloned("x".into()));
    check!(me, a.get_attr::<Cloned>() == Some(&Cloned(10)), "attr get");
    a.set_attr(Cloned(11));
    check!(
        me,
        a.get_attr::<Cloned>() == Some(&Cloned(11)),
        "attr replaced"
    );
    let b = a.duplicate();
    check!(
        me,
        b.get_attr::<Cloned>() == Some(&Cloned(11)),
        "cloned on dup"
    );
    check!(me, b.get_attr::<NotCloned>().is_none(), "not cloned on dup");
    check!(
        me,
        a.get_attr::<NotCloned>() == Some(&NotCloned("x".into())),
        "kept"
    );
    check!(
        me,
        a.delete_attr::<NotCloned>() && !a.delete_attr::<NotCloned>(),
        "delete_attr"
    );
    {
        let mut c = world.duplicate();
        c.set_attr(CountsDrops);
        let dyn_c: &mut dyn Communicator = &mut c;
        check!(
            me,
            dyn_c.get_attr::<CountsDrops>().is_some(),
            "attr through dyn"
        );
        check!(
            me,
            DROPS.load(std::sync::atomic::Ordering::SeqCst) == 0,
            "dropped early"
        );
    }
    check!(
        me,
        DROPS.load(std::sync::atomic::Ordering::SeqCst) == 1,
        "attr not dropped with its communicator"
    );

    // 8. Intercommunicator between the parities (needs both non-empty: size >= 2).
    //    Leaders: rank 0 of each parity communicator = world ranks 0 and 1.
    let half = me % 2;
    let inter = parity.create_intercommunicator(0, &world, 1 - half, 99);
    check!(me, inter.test_inter(), "test_inter");
    let other = (0..size).filter(|r| r % 2 != half).count() as Rank;
    check!(
        me,
        inter.remote_size() == other && inter.size() == parity.size(),
        "inter sizes"
    );
    check!(me, inter.rank() == parity.rank(), "inter rank");
    let remote: Vec<Rank> = (0..size).filter(|r| r % 2 != half).collect();
    check!(
        me,
        inter.remote_group().world_ranks() == remote,
        "remote group"
    );
    // Send to the same local rank on the other side, when it exists.
    let r = inter.rank();
    if r < other {
        inter.process_at_rank(r).send_with_tag(&(me * 100), 3);
    }
    let mine_count = parity.size();
    if r < other.min(mine_count) {
        let (v, st) = inter.process_at_rank(r).receive_with_tag::<Rank>(3);
        check!(me, v == remote[r as usize] * 100, "inter payload {v}");
        check!(
            me,
            st.source_rank() == r,
            "inter source {}",
            st.source_rank()
        );
    }
    let merged = inter.merge(if half == 0 {
        MergeOrder::Low
    } else {
        MergeOrder::High
    });
    let want_m: Vec<Rank> = (0..size)
        .filter(|r| r % 2 == 0)
        .chain((0..size).filter(|r| r % 2 == 1))
        .collect();
    check!(
        me,
        world_ranks(&merged) == want_m,
        "merged order {:?}",
        world_ranks(&merged)
    );
    check!(
        me,
        !merged.test_inter() && merged.size() == size,
        "merged shape"
    );
    merged.barrier();
    check!(
        me,
        world.topology() == Topology::Undefined,
        "world has no topology"
    );

    // 9. The machine hierarchy.
    let levels = oxmpi::environment::cluster_info();
    check!(me, !levels.is_empty(), "no levels");
    check!(
        me,
        levels[0].cluster_id == 0 && levels[0].rank == me && levels[0].size == size,
        "level 0 {:?}",
        levels[0]
    );
    check!(
        me,
        universe.cluster_info() == levels,
        "universe.cluster_info"
    );
    for l in &levels[1..] {
        check!(
            me,
            l.rank >= 0 && l.rank < l.size && l.size <= size,
            "level {l:?}"
        );
    }
    // Host levels agree with split_shared: same host size.
    if let Some(host) = levels.get(1) {
        check!(
            me,
            host.size == shared.size(),
            "host level size {} vs shared {}",
            host.size,
            shared.size()
        );
    }
    check!(me, universe.appnum() == Some(0), "appnum");

    world.barrier();
    println!(
        "api_comm: rank {me} of {size} ok ({} hierarchy levels)",
        levels.len()
    );
}
