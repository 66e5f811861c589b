//! Deterministic tests of the point-to-point protocol, with no I/O: every rank
//! is a plain [`State`] value in this one process, its peers reached through
//! [`Path::Queue`]. The test carries packets between ranks (per ordered pair, in
//! order, as rings and sockets do) and chooses which rank moves next, so each
//! run is one exact interleaving, repeatable.
//!
//! Small scenarios are explored exhaustively: every interleaving of the ranks'
//! calls and packet deliveries is run, except that steps touching disjoint ranks
//! are not tried in both orders (sleep sets: they commute). Every step checks
//! credit conservation; every finished run checks what a user would: each
//! message received once, whole, with the right status, never overtaking an
//! earlier one from the same sender that the same receive could have matched,
//! every send complete, cancelled messages never received. Tests then assert
//! which outcomes occurred (e.g. that a cancel both wins and loses its race).

use std::collections::BTreeSet;

use super::*;
use crate::matching::{ANY_SOURCE, ANY_TAG};

#[derive(Clone, Copy, Debug)]
struct Params {
    eager_limit: usize,
    credit: i64,
    /// Packets a queue holds before pushes fail (a full ring).
    cap: usize,
    /// Largest packet (small ones make eager messages and streams fragment).
    packet: usize,
    /// Rendezvous by a cross-memory read of our own process (else `Cts` + `Data`).
    cma: bool,
    /// Sends above this size that answer their peer are pulled (`FLAG_PULL`).
    pull_min: usize,
}

const P: Params = Params {
    eager_limit: 64,
    credit: 4 << 20,
    cap: 64,
    packet: 80,
    cma: false,
    pull_min: usize::MAX,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Send {
        to: u32,
        tag: i32,
        len: usize,
        mode: SendMode,
    },
    Recv {
        from: i32,
        tag: i32,
        cap: usize,
    },
    /// Cancels the operation this rank started with its `k`-th op.
    Cancel(usize),
    /// Waits until this rank's `k`-th op is complete.
    Wait(usize),
}

fn send(to: u32, tag: i32, len: usize) -> Op {
    Op::Send {
        to,
        tag,
        len,
        mode: SendMode::Standard,
    }
}
fn ssend(to: u32, tag: i32, len: usize) -> Op {
    Op::Send {
        to,
        tag,
        len,
        mode: SendMode::Synchronous,
    }
}
fn recv(from: i32, tag: i32) -> Op {
    Op::Recv {
        from,
        tag,
        cap: 4096,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// Rank `r` makes its next call.
    Op(u32),
    /// The oldest packet from `s` to `t` reaches `t`.
    Deliver(u32, u32),
    /// Rank `r` runs a progress step (writes out what its outbox holds).
    Progress(u32),
}

impl Action {
    fn touches(&self) -> (u32, u32) {
        match *self {
            Action::Op(r) | Action::Progress(r) => (r, r),
            Action::Deliver(s, t) => (s, t),
        }
    }
}

/// Steps that touch disjoint ranks commute (a delivery touches both ends: it
/// frees room in the sender's queue).
fn independent(a: Action, b: Action) -> bool {
    let (a1, a2) = a.touches();
    let (b1, b2) = b.touches();
    a1 != b1 && a1 != b2 && a2 != b1 && a2 != b2
}

/// The bytes of rank `from`'s `k`-th op's message: its identity, then a pattern.
fn payload(from: u32, k: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| match i {
            0 => from as u8,
            1 => k as u8,
            _ => (from as usize * 31 + k * 7 + i) as u8,
        })
        .collect()
}

struct Sim {
    ranks: Vec<State>,
    p: Params,
    scripts: Vec<Vec<Op>>,
    pc: Vec<usize>,
    /// Per rank, per op: the request it started.
    reqs: Vec<Vec<Option<Request>>>,
    /// Per rank, per op: the buffer it uses (kept alive while the engine points at it).
    bufs: Vec<Vec<Option<Box<[u8]>>>>,
}

impl Sim {
    fn new(p: Params, scripts: &[Vec<Op>]) -> Sim {
        let n = scripts.len();
        let pid = std::process::id() as i32;
        let ranks = (0..n as u32)
            .map(|me| {
                let paths = (0..n as u32)
                    .map(|r| (if r == me { Path::SelfLoop } else { Path::Queue }, pid))
                    .collect();
                let config = EngineConfig {
                    eager_limit: p.eager_limit,
                    check_sigs: false,
                    cma_allowed: p.cma,
                    shared_copy: false,
                    shm_stream_max: 0,
                    pull_min: p.pull_min,
                    adaptive_pull: false,
                    credit_per_peer: p.credit,
                    queue_cap: p.cap,
                    queue_packet: p.packet,
                };
                State::with_config(me, paths, None, None, config)
            })
            .collect();
        Sim {
            ranks,
            p,
            scripts: scripts.to_vec(),
            pc: vec![0; n],
            reqs: scripts.iter().map(|s| vec![None; s.len()]).collect(),
            bufs: scripts
                .iter()
                .map(|s| s.iter().map(|_| None).collect())
                .collect(),
        }
    }

    fn n(&self) -> u32 {
        self.ranks.len() as u32
    }

    fn done(&self, r: u32, k: usize) -> bool {
        self.reqs[r as usize][k]
            .is_some_and(|q| self.ranks[r as usize].req(q).is_some_and(|e| e.done))
    }

    fn enabled(&self) -> Vec<Action> {
        let mut out = Vec::new();
        for r in 0..self.n() {
            if let Some(op) = self.scripts[r as usize].get(self.pc[r as usize]) {
                if !matches!(*op, Op::Wait(k) if !self.done(r, k)) {
                    out.push(Action::Op(r));
                }
            }
            let st = &self.ranks[r as usize];
            if st
                .pending_out
                .iter()
                .any(|&t| st.queued[t as usize].len() < self.p.cap)
            {
                out.push(Action::Progress(r));
            }
            for t in 0..self.n() {
                if t != r && !st.queued[t as usize].is_empty() {
                    out.push(Action::Deliver(r, t));
                }
            }
        }
        out
    }

    fn apply(&mut self, a: Action) {
        match a {
            Action::Op(r) => {
                let ri = r as usize;
                let k = self.pc[ri];
                self.pc[ri] += 1;
                match self.scripts[ri][k] {
                    Op::Send { to, tag, len, mode } => {
                        let data: Box<[u8]> = payload(r, k, len).into();
                        let env = Envelope {
                            context: 0,
                            source: r as i32,
                            tag,
                        };
                        let q = self.ranks[ri]
                            .start_send(to, env, RawBuf::from_slice(&data), mode)
                            .expect("start_send");
                        self.bufs[ri][k] = Some(data);
                        self.reqs[ri][k] = Some(q);
                    }
                    Op::Recv { from, tag, cap } => {
                        let mut b: Box<[u8]> = vec![0xee; cap].into();
                        let raw = RawBuf::from_mut_slice(&mut b);
                        let q = self.ranks[ri].post_recv(
                            raw,
                            Pattern {
                                context: 0,
                                source: from,
                                tag,
                            },
                        );
                        self.bufs[ri][k] = Some(b);
                        self.reqs[ri][k] = Some(q);
                    }
                    Op::Cancel(j) => {
                        let q = self.reqs[ri][j].expect("cancel of an op not started");
                        self.ranks[ri].cancel(q).expect("cancel");
                    }
                    Op::Wait(_) => {}
                }
            }
            Action::Deliver(s, t) => {
                let pkt = self.ranks[s as usize]
                    .take_packet(t)
                    .expect("a packet to deliver");
                self.ranks[t as usize].handle_packet(s, &pkt);
            }
            Action::Progress(r) => {
                self.ranks[r as usize].progress();
            }
        }
    }

    /// Credit conservation for every ordered pair: what the sender lacks is
    /// exactly the cost of its eager messages not yet delivered, plus what the
    /// receiver owes it, plus credit on its way back.
    fn check_credit(&self) {
        for s in 0..self.n() {
            for t in 0..self.n() {
                if s == t {
                    continue;
                }
                let (ss, ts) = (&self.ranks[s as usize], &self.ranks[t as usize]);
                let outstanding = self.p.credit - ss.peers[t as usize].credit;
                let mut held: i64 = ts.peers[s as usize].credit_owed as i64;
                for item in &ss.peers[t as usize].outbox {
                    if let OutItem::Eager {
                        hdr,
                        started: false,
                        ..
                    } = item
                    {
                        held += credit_cost(hdr.len as usize) as i64;
                    }
                    // A pulled `Rts` paid eager credit too.
                    if let OutItem::Ctrl(h) = item {
                        if h.kind == Kind::Rts && h.flags & FLAG_PULL != 0 {
                            held += credit_cost(h.len as usize) as i64;
                        }
                    }
                }
                for pkt in &ss.queued[t as usize] {
                    let (h, _) = Header::decode(pkt).expect("well-formed packet");
                    let pulled = h.kind == Kind::Rts && h.flags & FLAG_PULL != 0;
                    if h.kind == Kind::Eager || pulled {
                        held += credit_cost(h.len as usize) as i64;
                    }
                }
                for m in ts.unexp.values() {
                    if let (true, Body::Eager { total, .. }) = (m.from == s, &m.body) {
                        held += credit_cost(*total) as i64;
                    }
                }
                if let Rx::Direct { total, .. } = ts.peers[s as usize].rx {
                    held += credit_cost(total) as i64;
                }
                for item in &ts.peers[s as usize].outbox {
                    if let OutItem::Ctrl(h) = item {
                        if h.kind == Kind::Credit {
                            held += h.len as i64;
                        }
                    }
                }
                for pkt in &ts.queued[s as usize] {
                    let (h, _) = Header::decode(pkt).expect("well-formed packet");
                    if h.kind == Kind::Credit {
                        held += h.len as i64;
                    }
                }
                assert!(
                    outstanding >= 0 && outstanding <= self.p.credit,
                    "credit {s}->{t} out of range: {outstanding}"
                );
                assert_eq!(outstanding, held, "credit {s}->{t} not conserved");
            }
        }
    }

    /// After the last step: cancels receives nothing matched, checks the run and
    /// describes its outcome.
    fn finish(mut self) -> Vec<String> {
        let n = self.n() as usize;
        let mut out = Vec::new();
        // Receives left pending: nothing can match them any more, so cancel wins.
        for r in 0..n {
            for k in 0..self.scripts[r].len() {
                if let (Op::Recv { .. }, false) = (self.scripts[r][k], self.done(r as u32, k)) {
                    let q = self.reqs[r][k].unwrap();
                    self.ranks[r].cancel(q).unwrap();
                    let e = self.ranks[r].req(q).unwrap();
                    assert!(
                        e.done && e.status.cancelled,
                        "rank {r} op {k}: a pending receive must cancel"
                    );
                    out.push(format!("r{r}.{k} left"));
                }
            }
        }
        // Who got what.
        let mut got: Vec<Option<(u32, usize)>> = Vec::new(); // by (rank, op) flattened below
        let mut received = std::collections::HashMap::new(); // (from, k) -> (rank, op)
        for r in 0..n {
            for k in 0..self.scripts[r].len() {
                got.push(None);
                let Op::Recv { from, tag, .. } = self.scripts[r][k] else {
                    continue;
                };
                let e = self.ranks[r].req(self.reqs[r][k].unwrap()).unwrap();
                assert!(e.done, "rank {r} op {k}: receive not complete");
                if e.status.cancelled {
                    if !out.contains(&format!("r{r}.{k} left")) {
                        out.push(format!("r{r}.{k} cancelled"));
                    }
                    continue;
                }
                let st = e.status;
                assert_eq!(st.error, 0, "rank {r} op {k}: {:?}", e.error);
                let b = self.bufs[r][k].as_ref().unwrap();
                let (s, j) = (b[0] as u32, b[1] as usize);
                let Some(Op::Send {
                    to, tag: stag, len, ..
                }) = self
                    .scripts
                    .get(s as usize)
                    .and_then(|sc| sc.get(j))
                    .copied()
                else {
                    panic!("rank {r} op {k}: received bytes name no send ({s}, {j})");
                };
                assert_eq!(
                    to as usize, r,
                    "rank {r} op {k}: got a message sent to {to}"
                );
                assert!(
                    from == ANY_SOURCE || from == s as i32,
                    "rank {r} op {k}: source {s} does not match {from}"
                );
                assert!(
                    tag == ANY_TAG || tag == stag,
                    "rank {r} op {k}: tag {stag} does not match {tag}"
                );
                assert_eq!(
                    (st.source, st.tag, st.count_bytes),
                    (s as i32, stag, len),
                    "rank {r} op {k}: status"
                );
                assert_eq!(&b[..len], &payload(s, j, len)[..], "rank {r} op {k}: data");
                assert!(
                    received.insert((s, j), (r, k)).is_none(),
                    "message ({s}, {j}) received twice"
                );
                out.push(format!("r{r}.{k}<-r{s}.{j}"));
            }
        }
        // Sends: complete; cancelled ones never received, the others received or
        // still unexpected at their destination.
        for s in 0..n {
            for j in 0..self.scripts[s].len() {
                let Op::Send { to, .. } = self.scripts[s][j] else {
                    continue;
                };
                let e = self.ranks[s].req(self.reqs[s][j].unwrap()).unwrap();
                assert!(
                    e.done,
                    "rank {s} op {j}: send not complete: {}",
                    self.ranks[s].describe()
                );
                if e.status.cancelled {
                    assert!(
                        !received.contains_key(&(s as u32, j)),
                        "rank {s} op {j}: cancelled but received"
                    );
                    out.push(format!("r{s}.{j} cancelled"));
                } else if !received.contains_key(&(s as u32, j)) {
                    let dst = &self.ranks[to as usize];
                    let sreq = self.reqs[s][j].unwrap().0;
                    let waiting = dst
                        .unexp
                        .values()
                        .any(|m| m.from == s as u32 && m.sreq == sreq);
                    assert!(
                        waiting,
                        "rank {s} op {j}: neither cancelled, received nor unexpected"
                    );
                    out.push(format!("r{s}.{j} unexpected"));
                }
            }
        }
        // Non-overtaking: if m1 was sent before m2 (same sender, receiver, tag),
        // the receive that got m2 must not be an earlier one that m1 matched too.
        for (&(s, j2), &(r, k2)) in &received {
            for (&(s1, j1), &(r1, k1)) in &received {
                if s1 != s || r1 != r || j1 >= j2 || k2 >= k1 {
                    continue;
                }
                let (Op::Send { tag: t1, .. }, Op::Recv { from, tag, .. }) =
                    (self.scripts[s as usize][j1], self.scripts[r][k2])
                else {
                    continue;
                };
                let matches =
                    (from == ANY_SOURCE || from == s as i32) && (tag == ANY_TAG || tag == t1);
                assert!(!matches, "rank {s}'s op {j2} overtook its op {j1}: receive {k2} took it before receive {k1}");
            }
        }
        for s in 0..n {
            assert!(
                self.ranks[s].pending_out.is_empty()
                    && self.ranks[s].peers.iter().all(|p| p.outbox.is_empty()),
                "rank {s}: outbox not empty"
            );
        }
        out.sort();
        out
    }
}

/// Runs every interleaving of `scripts` (up to commuting steps); returns the
/// distinct outcomes and the number of runs.
fn explore(p: Params, scripts: &[Vec<Op>]) -> (BTreeSet<Vec<String>>, usize) {
    let mut outcomes = BTreeSet::new();
    let mut runs = 0;
    dfs(
        p,
        scripts,
        &mut Vec::new(),
        Vec::new(),
        &mut outcomes,
        &mut runs,
    );
    (outcomes, runs)
}

fn dfs(
    p: Params,
    scripts: &[Vec<Op>],
    prefix: &mut Vec<Action>,
    mut sleep: Vec<Action>,
    outcomes: &mut BTreeSet<Vec<String>>,
    runs: &mut usize,
) {
    let mut sim = Sim::new(p, scripts);
    for &a in prefix.iter() {
        sim.apply(a);
    }
    sim.check_credit();
    let enabled = sim.enabled();
    if enabled.is_empty() {
        *runs += 1;
        assert!(*runs < 2_000_000, "scenario too large to explore");
        outcomes.insert(sim.finish());
        return;
    }
    drop(sim);
    for a in enabled {
        if sleep.contains(&a) {
            continue;
        }
        let child = sleep
            .iter()
            .copied()
            .filter(|&b| independent(a, b))
            .collect();
        prefix.push(a);
        dfs(p, scripts, prefix, child, outcomes, runs);
        prefix.pop();
        sleep.push(a);
    }
}

fn outcome(items: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = items.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[test]
fn eager_messages_do_not_overtake_within_a_tag() {
    // Rank 1's receives ask for the tags in another order than rank 0 sent them.
    let scripts = vec![
        vec![send(1, 0, 8), send(1, 1, 8), send(1, 0, 8)],
        vec![recv(0, 0), recv(0, 1), recv(0, 0)],
    ];
    let (outs, runs) = explore(P, &scripts);
    assert_eq!(outs.len(), 1, "{outs:?}");
    assert!(outs.contains(&outcome(&["r1.0<-r0.0", "r1.1<-r0.1", "r1.2<-r0.2"])));
    assert!(runs > 10, "{runs}");
}

#[test]
fn any_source_keeps_each_senders_order() {
    // Ranks 0 and 1 each send two messages to rank 2, which also sends itself
    // one; rank 2 takes all five with ANY_SOURCE/ANY_TAG receives.
    let scripts = vec![
        vec![send(2, 5, 8), send(2, 6, 8)],
        vec![send(2, 7, 8), send(2, 5, 8)],
        vec![
            recv(ANY_SOURCE, ANY_TAG),
            send(2, 9, 8),
            recv(ANY_SOURCE, ANY_TAG),
            recv(ANY_SOURCE, ANY_TAG),
            recv(ANY_SOURCE, ANY_TAG),
            recv(ANY_SOURCE, ANY_TAG),
        ],
    ];
    let (outs, runs) = explore(P, &scripts);
    // Every arrival order that keeps each sender's order is possible, and no
    // other: 5! / (2! 2! 1!) = 30 assignments to the five receives (the self
    // message, sent after the first receive is posted, may even take that one).
    assert_eq!(
        outs.len(),
        30,
        "{} outcomes in {runs} runs: {outs:?}",
        outs.len()
    );
}

#[test]
fn eager_fragmented_and_rendezvous_keep_order() {
    // 8 bytes (one packet), 60 (eager in fragments of a 80-byte packet), 300
    // (rendezvous), from one sender to a receiver that matches any tag.
    let scripts = vec![
        vec![send(1, 1, 300), send(1, 2, 60), send(1, 3, 8)],
        vec![recv(0, ANY_TAG), recv(0, ANY_TAG), recv(0, ANY_TAG)],
    ];
    for cma in [false, true] {
        let p = Params {
            cma: cma && cma::probe_cma(),
            ..P
        };
        let (outs, _) = explore(p, &scripts);
        assert_eq!(outs.len(), 1, "{outs:?}");
        assert!(outs.contains(&outcome(&["r1.0<-r0.0", "r1.1<-r0.1", "r1.2<-r0.2"])));
    }
}

#[test]
fn pulled_answers_never_wait_for_their_receive() {
    // After one exchange each rank's next send answers the other, so it is pulled
    // (an `Rts` with FLAG_PULL); both then wait for those sends before posting
    // their receives (head to head, as with eager messages): the receiver must
    // read a pulled message at arrival, unmatched, or neither send completes.
    if !cma::probe_cma() {
        return;
    }
    let p = Params {
        cma: true,
        pull_min: 16,
        ..P
    };
    let script = |to: u32| {
        vec![
            send(to, 0, 8),
            recv(to as i32, 0),
            Op::Wait(0),
            Op::Wait(1),
            send(to, 1, 40),
            Op::Wait(4),
            recv(to as i32, 1),
            Op::Wait(6),
        ]
    };
    let scripts = vec![script(1), script(0)];
    let (outs, runs) = explore(p, &scripts);
    assert_eq!(outs.len(), 1, "{outs:?} in {runs} runs");
    assert!(outs.contains(&outcome(&[
        "r0.1<-r1.0",
        "r0.6<-r1.4",
        "r1.1<-r0.0",
        "r1.6<-r0.4"
    ])));
    // In the schedule that runs rank 0 first, rank 1's first message reaches rank 0
    // after rank 0's own, so rank 0's second send answers it and is pulled; rank 1
    // got rank 0's first message before sending its own, so its second send is eager.
    let mut sim = Sim::new(p, &scripts);
    while let Some(a) = sim.enabled().first().copied() {
        sim.apply(a);
    }
    assert_eq!(sim.ranks[0].stats.rendezvous, 1);
    assert_eq!(sim.ranks[1].stats.rendezvous, 0);
}

#[test]
fn cancelling_a_pulled_send_races_its_receive() {
    // Rank 0's second message answers rank 1's, so it is pulled; its cancel may
    // take it out of the outbox (a queue of one packet, still holding rank 0's
    // first message: the refund of its credit is checked), find it unexpected
    // (pulled already) or lose.
    if !cma::probe_cma() {
        return;
    }
    let p = Params {
        cma: true,
        pull_min: 16,
        cap: 1,
        ..P
    };
    let scripts = vec![
        vec![
            send(1, 2, 8),
            recv(1, 0),
            Op::Wait(1),
            send(1, 1, 40),
            Op::Cancel(3),
        ],
        vec![send(0, 0, 8), recv(0, 1), recv(0, 2)],
    ];
    let (outs, runs) = explore(p, &scripts);
    let want = BTreeSet::from([
        outcome(&["r0.1<-r1.0", "r0.3 cancelled", "r1.1 left", "r1.2<-r0.0"]),
        outcome(&["r0.1<-r1.0", "r1.1<-r0.3", "r1.2<-r0.0"]),
    ]);
    assert_eq!(outs, want, "{runs} runs");
}

#[test]
fn a_full_queue_backs_up_into_the_outbox_in_order() {
    // Room for one packet at a time: fragments and later messages wait in the
    // outbox and leave by progress steps, still in order.
    let p = Params { cap: 1, ..P };
    let scripts = vec![
        vec![send(1, 0, 60), send(1, 0, 8), send(1, 0, 200)],
        vec![recv(0, 0), recv(0, 0), recv(0, 0)],
    ];
    let (outs, runs) = explore(p, &scripts);
    assert_eq!(outs.len(), 1, "{outs:?}");
    assert!(runs > 10, "{runs}");
}

#[test]
fn synchronous_sends_complete_only_once_matched() {
    // Rank 0 waits for its synchronous send before it sends again; rank 1 posts
    // its receive only after a message it waits for: so the ssend cannot
    // complete before rank 1's second receive is posted, and the order holds.
    for len in [8, 300] {
        let scripts = vec![
            vec![ssend(1, 0, len), Op::Wait(0), send(1, 1, 8)],
            vec![recv(0, 0), Op::Wait(0), recv(0, 1)],
        ];
        let (outs, _) = explore(P, &scripts);
        assert_eq!(outs.len(), 1, "{outs:?}");
    }
    // With no receive at all, the synchronous send never completes.
    let mut sim = Sim::new(P, &[vec![ssend(1, 0, 8)], vec![]]);
    sim.apply(Action::Op(0));
    while let Some(a) = sim.enabled().first().copied() {
        sim.apply(a);
    }
    assert!(!sim.done(0, 0));
}

#[test]
fn cancelling_a_send_races_its_receive() {
    // The cancel may win (message dropped) or lose (message received), for an
    // eager and for a rendezvous message; never both, never neither.
    for len in [8, 300] {
        let scripts = vec![vec![send(1, 0, len), Op::Cancel(0)], vec![recv(0, 0)]];
        let (outs, runs) = explore(P, &scripts);
        let want = BTreeSet::from([
            outcome(&["r0.0 cancelled", "r1.0 left"]),
            outcome(&["r1.0<-r0.0"]),
        ]);
        assert_eq!(outs, want, "len {len}, {runs} runs");
    }
}

#[test]
fn cancelling_a_receive_races_the_arrival() {
    // Rank 1 cancels its first receive and posts a second: either the first got
    // the message (the second is left), or it was cancelled and the second gets it.
    let scripts = vec![
        vec![send(1, 0, 8)],
        vec![recv(0, 0), Op::Cancel(0), recv(0, 0)],
    ];
    let (outs, _) = explore(P, &scripts);
    let want = BTreeSet::from([
        outcome(&["r1.0<-r0.0", "r1.2 left"]),
        outcome(&["r1.0 cancelled", "r1.2<-r0.0"]),
    ]);
    assert_eq!(outs, want);
}

#[test]
fn credit_is_conserved_through_exhaustion() {
    // Credit for two minimal eager messages (a quarter of it, one message's
    // worth, goes back at a time): the third goes by rendezvous unless credit
    // came back. Every interleaving conserves credit (checked at every step)
    // and delivers all three in order.
    let p = Params { credit: 128, ..P };
    let scripts = vec![
        vec![send(1, 0, 8), send(1, 0, 8), send(1, 0, 8)],
        vec![recv(0, 0), Op::Wait(0), recv(0, 0), recv(0, 0)],
    ];
    let (outs, runs) = explore(p, &scripts);
    assert_eq!(outs.len(), 1, "{outs:?}");
    assert!(runs > 10, "{runs}");
}

#[test]
fn a_flooding_sender_is_bounded_by_its_credit() {
    // No receive posted: the receiver holds at most `credit` bytes of eager
    // data; the sends beyond it go by rendezvous and stay incomplete.
    let p = Params { credit: 1024, ..P };
    let script: Vec<Op> = (0..40).map(|_| send(1, 0, 48)).collect();
    let mut sim = Sim::new(p, &[script, vec![]]);
    while let Some(a) = sim.enabled().first().copied() {
        sim.apply(a);
        sim.check_credit();
    }
    let eager: usize = sim.ranks[1]
        .unexp
        .values()
        .filter_map(|m| match &m.body {
            Body::Eager { total, .. } => Some(credit_cost(*total)),
            Body::Rts { .. } => None,
        })
        .sum();
    assert!(eager <= 1024, "{eager} eager bytes held");
    assert_eq!(sim.ranks[1].unexp.len(), 40);
    let complete = (0..40).filter(|&k| sim.done(0, k)).count();
    assert_eq!(complete, 1024 / 64, "sends complete with credit only");
    // Receiving them all returns the credit; every send completes, in order.
    let mut scripts = sim.scripts.clone();
    scripts[1] = (0..40).map(|_| recv(0, 0)).collect();
    let mut sim2 = Sim::new(p, &scripts);
    for _ in 0..40 {
        sim2.apply(Action::Op(0));
    }
    while let Some(a) = sim2.enabled().first().copied() {
        sim2.apply(a);
        sim2.check_credit();
    }
    let out = sim2.finish();
    assert_eq!(out.len(), 40);
    for o in &out {
        assert!(o.starts_with("r1.") && o.contains("<-r0."), "{o}");
    }
}

#[test]
fn any_source_across_protocols_keeps_each_senders_order() {
    // Rank 0 sends a rendezvous message, rank 1 a whole and a fragmented eager
    // one; rank 2's three ANY_SOURCE receives may take them in any order that
    // keeps rank 1's: 3 outcomes, and no other.
    let scripts = vec![
        vec![send(2, 0, 300)],
        vec![send(2, 0, 8), send(2, 0, 60)],
        vec![
            recv(ANY_SOURCE, 0),
            recv(ANY_SOURCE, 0),
            recv(ANY_SOURCE, 0),
        ],
    ];
    let (outs, runs) = explore(P, &scripts);
    assert_eq!(outs.len(), 3, "{runs} runs: {outs:?}");
}

#[test]
fn cancelling_a_send_still_in_the_outbox_refunds_its_credit() {
    // Room for one packet: the second message waits in the outbox behind the
    // first one's fragments. Cancelling it there takes it out and gives its
    // credit back (conservation is checked at every step); later it is a
    // `CancelReq` race. Either way exactly one of "cancelled" and "received".
    let p = Params { cap: 1, ..P };
    let scripts = vec![
        vec![send(1, 0, 60), send(1, 0, 8), Op::Cancel(1)],
        vec![recv(0, 0), recv(0, 0)],
    ];
    let (outs, runs) = explore(p, &scripts);
    let want = BTreeSet::from([
        outcome(&["r1.0<-r0.0", "r1.1<-r0.1"]),
        outcome(&["r0.1 cancelled", "r1.0<-r0.0", "r1.1 left"]),
    ]);
    assert_eq!(outs, want, "{runs} runs");
}
