//! The tool interface through `oxmpi::tools`: every variable listed and read,
//! counters that follow traffic between ranks 0 and 1, the blocking-collective
//! counter of a duplicated communicator, and the allreduce algorithm chosen at
//! run time on every rank (the sum stays right).

use oxmpi::tools::{Bind, CvarValue, PvarValue, Tools, ToolError};
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
        check!(me, tools.control_variable(c.name()).unwrap().index() == c.index(), "{}", c.name());
        if let CvarValue::Int(n) = v {
            let choices = c.choices();
            check!(me, choices.is_empty() || choices.iter().any(|(k, _)| *k == n), "{} = {n} not a choice", c.name());
        }
    }
    check!(me, matches!(tools.control_variable("nope"), Err(ToolError::InvalidName)), "unknown cvar");
    let transport = match tools.control_variable("OXMPI_TRANSPORT").unwrap().read() {
        CvarValue::Str(s) if s == "tcp" => "tcp",
        _ => "shm",
    };
    let session = tools.session();
    for p in tools.performance_variables() {
        let h = match p.bind() {
            Bind::Comm => session.handle_for(&p, &world),
            _ => session.handle(&p),
        };
        check!(me, h.is_ok(), "handle of {}", p.name());
    }
    let var = |n: &str| tools.performance_variable(n).unwrap();
    let mut sent = session.handle(&var(&format!("oxmpi_bytes_sent_{transport}"))).unwrap();
    let mut recvd = session.handle(&var(&format!("oxmpi_msgs_received_{transport}"))).unwrap();
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
        check!(me, sent.read().as_u64() - sent0 == 5000, "bytes sent: {}", sent.read().as_u64() - sent0);
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
    check!(me, sent.read_reset().unwrap() == frozen && sent.read() == PvarValue::U64(0), "read_reset");

    let dup = world.duplicate();
    let mut colls = session.handle_for(&var("oxmpi_coll_blocking"), &dup).unwrap();
    colls.start().unwrap();
    let alg = tools.control_variable("OXMPI_ALLREDUCE_ALGORITHM").unwrap();
    let ring = alg.choices().into_iter().find(|(_, n)| n == "ring").unwrap().0;
    alg.write(CvarValue::Int(ring)).unwrap();
    let x: Vec<i64> = (0..500).map(|i| i + me as i64).collect();
    let mut sum = vec![0i64; 500];
    dup.all_reduce_into(&x[..], &mut sum[..], oxmpi::collective::SystemOperation::sum());
    let s = size as i64;
    check!(me, sum.iter().enumerate().all(|(i, v)| *v == s * i as i64 + s * (s - 1) / 2), "ring allreduce sum");
    dup.barrier();
    check!(me, colls.read().as_u64() == 2, "collectives on dup: {:?}", colls.read());
    alg.write(CvarValue::Int(0)).unwrap();
    let q = var("oxmpi_unexpected_queue_length");
    check!(me, session.handle(&q).unwrap().start() == Err(ToolError::PvarNoStartstop), "continuous start");
    println!("api_tools: rank {me} of {size} ok ({transport})");
}
