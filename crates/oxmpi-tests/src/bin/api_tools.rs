//! The tool interface through `oxmpi::tools`: every variable listed and read,
//! counters that follow traffic between ranks 0 and 1, the blocking-collective
//! counter of a duplicated communicator, and the allreduce algorithm chosen at
//! run time on every rank (the sum stays right, and only that algorithm's
//! call counter grows), and with `OXMPI_BCAST_ALGORITHM` set, only the forced
//! broadcast algorithm's counter.

use oxmpi::tools::{Bind, CvarValue, PvarValue, ToolError, Tools};
use oxmpi::traits::*;
use oxmpi_tests::check;

fn main() {
    let tools = Tools::init();
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    let cvars: Vec<_> = tools.control_variables().collect();
    check!(me, cvars.len() >= 20, "{} cvars", cvars.len());
    for c in &cvars {
        let v = c.read();
        check!(
            me,
            tools.control_variable(c.name()).unwrap().index() == c.index(),
            "{}",
            c.name()
        );
        if let CvarValue::Int(n) = v {
            let choices = c.choices();
            check!(
                me,
                choices.is_empty() || choices.iter().any(|(k, _)| *k == n),
                "{} = {n} not a choice",
                c.name()
            );
        }
    }
    check!(
        me,
        matches!(tools.control_variable("nope"), Err(ToolError::InvalidName)),
        "unknown cvar"
    );
    let transport = match tools.control_variable("OXMPI_TRANSPORT").unwrap().read() {
        CvarValue::Str(s) if s == "tcp" => "tcp",
        _ => "shm",
    };
    // The shared copy's setting as the engine runs it: off where this host's ranks
    // outnumber its cores unless OXMPI_SHARED_COPY=1 (every rank here is on one host),
    // and off with OXMPI_SHARED_COPY=0.
    let shared_copy = tools.control_variable("OXMPI_SHARED_COPY").unwrap().read();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let env = std::env::var("OXMPI_SHARED_COPY").ok();
    if env.as_deref() == Some("0") || (env.is_none() && size as usize > cpus) {
        check!(
            me,
            matches!(shared_copy, CvarValue::Int(0)),
            "OXMPI_SHARED_COPY reads {shared_copy:?} with {size} ranks on {cpus} cores (env {env:?})"
        );
    }
    let session = tools.session();
    for p in tools.performance_variables() {
        let h = match p.bind() {
            Bind::Comm => session.handle_for(&p, &world),
            _ => session.handle(&p),
        };
        check!(me, h.is_ok(), "handle of {}", p.name());
    }
    let var = |n: &str| tools.performance_variable(n).unwrap();
    let mut sent = session
        .handle(&var(&format!("oxmpi_bytes_sent_{transport}")))
        .unwrap();
    let mut recvd = session
        .handle(&var(&format!("oxmpi_msgs_received_{transport}")))
        .unwrap();
    sent.start().unwrap();
    recvd.start().unwrap();
    let data = vec![1u8; 1000];
    let before = recvd.read().as_u64();
    world.barrier();
    let sent0 = sent.read().as_u64();
    if me == 0 {
        for _ in 0..5 {
            world.process_at_rank(1).send(&data[..]);
        }
        check!(
            me,
            sent.read().as_u64() - sent0 == 5000,
            "bytes sent: {}",
            sent.read().as_u64() - sent0
        );
    } else if me == 1 {
        for _ in 0..5 {
            let (v, _) = world.process_at_rank(0).receive_vec::<u8>();
            check!(me, v.len() == 1000, "received {}", v.len());
        }
        check!(me, recvd.read().as_u64() - before >= 5, "messages received");
    }
    sent.stop().unwrap();
    let frozen = sent.read();
    world.barrier();
    check!(me, sent.read() == frozen, "a stopped handle counted");
    check!(
        me,
        sent.read_reset().unwrap() == frozen && sent.read() == PvarValue::U64(0),
        "read_reset"
    );

    let dup = world.duplicate();
    let mut colls = session
        .handle_for(&var("oxmpi_coll_blocking"), &dup)
        .unwrap();
    colls.start().unwrap();
    let alg = tools.control_variable("OXMPI_ALLREDUCE_ALGORITHM").unwrap();
    let ring = alg
        .choices()
        .into_iter()
        .find(|(_, n)| n == "ring")
        .unwrap()
        .0;
    alg.write(CvarValue::Int(ring)).unwrap();
    // The allreduce's calls per algorithm: only the ring's counter grows.
    let mut per_algorithm: Vec<_> = tools
        .algorithm_counters("allreduce")
        .unwrap()
        .into_iter()
        .map(|(a, v)| (a, session.handle(&v).unwrap()))
        .collect();
    check!(
        me,
        per_algorithm.iter().map(|(a, _)| *a).eq(alg
            .choices()
            .iter()
            .skip(1)
            .map(|(_, n)| n.as_str())),
        "allreduce's counters follow its choices"
    );
    per_algorithm
        .iter_mut()
        .for_each(|(_, h)| h.start().unwrap());
    let x: Vec<i64> = (0..500).map(|i| i + me as i64).collect();
    let mut sum = vec![0i64; 500];
    dup.all_reduce_into(
        &x[..],
        &mut sum[..],
        oxmpi::collective::SystemOperation::sum(),
    );
    let s = size as i64;
    check!(
        me,
        sum.iter()
            .enumerate()
            .all(|(i, v)| *v == s * i as i64 + s * (s - 1) / 2),
        "ring allreduce sum"
    );
    for (a, h) in &per_algorithm {
        check!(
            me,
            h.read().as_u64() == (*a == "ring") as u64,
            "allreduce calls that ran {a}: {:?}",
            h.read()
        );
    }
    check!(
        me,
        matches!(
            tools.algorithm_counters("allreduc"),
            Err(ToolError::InvalidName)
        ),
        "unknown collective"
    );
    check!(
        me,
        tools
            .collectives()
            .iter()
            .all(|c| tools.algorithm_counters(c).is_ok_and(|v| !v.is_empty())),
        "every collective has counters"
    );
    dup.barrier();
    check!(
        me,
        colls.read().as_u64() == 2,
        "collectives on dup: {:?}",
        colls.read()
    );
    alg.write(CvarValue::Int(0)).unwrap();
    let q = var("oxmpi_unexpected_queue_length");
    check!(
        me,
        session.handle(&q).unwrap().start() == Err(ToolError::PvarNoStartstop),
        "continuous start"
    );
    // OXMPI_BCAST_ALGORITHM forced in the environment: exactly that
    // algorithm's counter grows, by the broadcasts made (10 blocking; the
    // nonblocking ones run it too unless it is shm, the blocking calls' path).
    if let Ok(forced) = std::env::var("OXMPI_BCAST_ALGORITHM") {
        let mut bcasts: Vec<_> = tools
            .algorithm_counters("bcast")
            .unwrap()
            .into_iter()
            .map(|(a, v)| (a, session.handle(&v).unwrap()))
            .collect();
        check!(
            me,
            bcasts.iter().any(|(a, _)| *a == forced),
            "{forced} is no bcast algorithm"
        );
        bcasts.iter_mut().for_each(|(_, h)| h.start().unwrap());
        let root = world.process_at_rank(0);
        let mut v = vec![me as u32; 300];
        for _ in 0..10 {
            root.broadcast_into(&mut v[..]);
        }
        for _ in 0..3 {
            oxmpi::request::scope(|sc| root.immediate_broadcast_into(sc, &mut v[..]).wait());
        }
        check!(me, v.iter().all(|&x| x == 0), "broadcast data");
        let count = |name: &str| {
            bcasts
                .iter()
                .find(|(a, _)| *a == name)
                .map_or(0, |(_, h)| h.read().as_u64())
        };
        if forced == "shm" {
            // shm serves blocking calls; the nonblocking ones run the automatic choice.
            check!(
                me,
                count("shm") == 10,
                "bcast calls that ran shm: {}",
                count("shm")
            );
        } else {
            for (a, h) in &bcasts {
                check!(
                    me,
                    h.read().as_u64() == if *a == forced { 13 } else { 0 },
                    "bcast calls that ran {a} with {forced} forced: {:?}",
                    h.read()
                );
            }
        }
        check!(
            me,
            bcasts.iter().map(|(_, h)| h.read().as_u64()).sum::<u64>() == 13,
            "bcast calls in all"
        );
        println!("api_tools: rank {me}: bcast {forced} counted");
    }
    println!("api_tools: rank {me} of {size} ok ({transport})");
}
