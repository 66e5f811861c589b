//! Rank program for the engine-level point-to-point tests. The first argument
//! names the scenario; each scenario checks its own results and exits non-zero
//! (naming the rank and the failed check) when something is wrong.

use oxmpi_core::buf::{self, as_bytes, as_bytes_mut, Forever, RecvBuf, SendBuf};
use oxmpi_core::pt2pt::{self, SendMode};
use oxmpi_core::runtime::{self, ThreadLevel};
use oxmpi_core::{Comm, ErrorClass, Request, Status, ANY_SOURCE, ANY_TAG, PROC_NULL};
use oxmpi_tests::{check, Rng};

fn main() {
    let scenario = std::env::args().nth(1).unwrap_or_default();
    let level = if scenario == "threads" {
        ThreadLevel::Multiple
    } else {
        ThreadLevel::Single
    };
    let provided = runtime::init(level).expect("MPI_Init");
    assert_eq!(provided, level);
    let e = runtime::engine().unwrap();
    let world = e.world().clone();
    let rank = world.rank();
    match scenario.as_str() {
        "traffic" => traffic(&world),
        "truncate" => truncate(&world),
        "cancel" => cancel(&world),
        "flood" => flood(&world),
        "probe" => probe(&world),
        "persistent" => persistent(&world),
        "modes" => modes(&world),
        "waitfamily" => waitfamily(&world),
        "threads" => threads(&world),
        "errors" => errors(&world),
        "selfsend" => selfsend(&world),
        "barrier" => barrier_order(&world),
        "typed" => typed(&world),
        "signature" => signature(&world),
        "signature_mixed" => signature_mixed(&world),
        "shared_copy" => shared_copy(&world),
        "windows" => windows(&world),
        "pingpongs" => pingpongs(&world),
        "abort" => {
            if rank == 1 {
                std::thread::sleep(std::time::Duration::from_millis(100));
                runtime::abort(7, "test abort");
            }
            let mut b = [0u8; 4];
            let _ = pt2pt::recv(&world, &mut b, ANY_SOURCE, ANY_TAG);
        }
        "die" => {
            // The last rank kills itself hard while the others wait for it forever.
            if rank == world.size() - 1 {
                std::thread::sleep(std::time::Duration::from_millis(200));
                // When it died, for tests that time the job's end from the death
                // rather than from the launch (start-up across hosts varies).
                let ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis());
                eprintln!("die: the victim kills itself at {ms} ms");
                oxmpi_tests::signal(std::process::id(), "KILL");
            }
            let mut b = [0u8; 4];
            let _ = pt2pt::recv(&world, &mut b, world.size() - 1, 0);
        }
        other => {
            eprintln!("unknown scenario {other:?}");
            std::process::exit(2);
        }
    }
    runtime::finalize().expect("MPI_Finalize");
    if rank == 0 {
        println!("{scenario}: ok");
    }
}

/// Size, tag and payload seed of message `seq` from `src` to `dst`.
fn plan(src: i32, dst: i32, seq: u64, max: usize) -> (usize, i32, u64) {
    let round = (seq / 1000) as i32;
    let seed = ((src as u64) << 40) ^ ((dst as u64) << 20) ^ seq;
    let mut r = Rng::new(seed);
    let class = r.below(100);
    let len = match class {
        0..=9 => 0,
        10..=69 => r.below(1024) as usize,
        70..=89 => r.below(96 * 1024) as usize,
        90..=97 => r.below(1 << 20) as usize,
        _ => r.below(max as u64 + 1) as usize,
    };
    // Each round has its own tags, so a stray-message check can tell rounds apart.
    (len.min(max), r.below(4) as i32 + 10 * round, seed)
}

fn expect_payload(rank: i32, buf: &[u8], seed: u64, what: &str) {
    let mut want = vec![0u8; buf.len()];
    Rng::fill(seed, &mut want);
    if buf != want.as_slice() {
        let at = buf.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
        check!(
            rank,
            false,
            "{what}: payload differs at byte {at} of {}",
            buf.len()
        );
    }
}

/// Every rank sends a random mix of messages to every rank (itself included),
/// with immediate, synchronous and standard modes; receivers take them first
/// with wildcards, then by (source, tag), and check each arrives exactly once,
/// intact and in per-sender order.
fn traffic(world: &Comm) {
    let rank = world.rank();
    let n = world.size();
    let per_peer: u64 = std::env::var("TRAFFIC_MSGS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let max: usize = 8 << 20;
    for round in 0..2u64 {
        // Build and start all sends.
        let mut bufs: Vec<Vec<u8>> = Vec::new();
        let mut specs = Vec::new();
        for dst in 0..n {
            for seq in 0..per_peer {
                let (len, tag, seed) = plan(rank, dst, seq + round * 1000, max);
                let mut b = vec![0u8; len];
                Rng::fill(seed, &mut b);
                bufs.push(b);
                specs.push((dst, tag, seed));
            }
        }
        buf::scope(|sc| {
            let mut reqs = Vec::new();
            for (i, (dst, tag, seed)) in specs.iter().enumerate() {
                let mode = if seed % 7 == 0 {
                    SendMode::Synchronous
                } else {
                    SendMode::Standard
                };
                let r =
                    pt2pt::isend(sc, world, SendBuf::bytes(&bufs[i]), *dst, *tag, mode).unwrap();
                reqs.push(r);
            }
            let mut rbuf = vec![0u8; max];
            if round == 0 {
                // Wildcards: per source, messages must come in send order.
                let mut next = vec![0u64; n as usize];
                for _ in 0..(per_peer * n as u64) {
                    let st = pt2pt::recv(world, &mut rbuf, ANY_SOURCE, ANY_TAG).unwrap();
                    let src = st.source;
                    check!(rank, (0..n).contains(&src), "source {src}");
                    let seq = next[src as usize];
                    check!(rank, seq < per_peer, "too many messages from {src}");
                    next[src as usize] += 1;
                    let (len, tag, seed) = plan(src, rank, seq + round * 1000, max);
                    check!(
                        rank,
                        st.count_bytes == len && st.tag == tag,
                        "from {src} seq {seq}: got {} bytes tag {}, want {len} tag {tag}",
                        st.count_bytes,
                        st.tag
                    );
                    expect_payload(rank, &rbuf[..len], seed, "wildcard receive");
                }
            } else {
                // Specific (source, tag): messages of one tag from one source in order,
                // pulled out from between messages of other tags.
                for src in (0..n).rev() {
                    for tag in (10 * round as i32..10 * round as i32 + 4).rev() {
                        for seq in 0..per_peer {
                            let (len, t, seed) = plan(src, rank, seq + round * 1000, max);
                            if t != tag {
                                continue;
                            }
                            let st = pt2pt::recv(world, &mut rbuf, src, tag).unwrap();
                            check!(rank, st.source == src && st.tag == tag && st.count_bytes == len, "specific from {src} tag {tag} seq {seq}: got {st:?}, want {len} bytes");
                            expect_payload(rank, &rbuf[..len], seed, "specific receive");
                        }
                    }
                }
            }
            let mut sts = vec![Status::EMPTY; reqs.len()];
            pt2pt::waitall(&mut reqs, &mut sts).unwrap();
            check!(
                rank,
                reqs.iter().all(|r| r.is_null()),
                "requests not nulled"
            );
            // Nothing may be left over.
            for tag in 10 * round as i32..10 * round as i32 + 4 {
                check!(
                    rank,
                    pt2pt::iprobe(world, ANY_SOURCE, tag).unwrap().is_none(),
                    "stray message after round {round}"
                );
            }
            barrier(world);
        });
    }
    check!(
        rank,
        pt2pt::live_requests().unwrap() == 0,
        "leaked requests: {}",
        pt2pt::live_requests().unwrap()
    );
}

/// Windows of medium messages one way (copied through the rings by the transport's
/// vector loop, bench/PROFILE.md mbw33), each followed by a ping-pong of the same size
/// (copied by `memcpy`), both ways: every byte arrives, in order, and nothing is written
/// past a message in its receive buffer. Two ranks.
/// Long runs of medium ping-pongs, each answer with new bytes, every other round
/// head to head (both ranks send first, so an answer may arrive before its
/// receive is posted): enough rounds that the sender's choice between pulling
/// and eager (engine/pullcost.rs: a figure from the receiver, probes of the other
/// path) changes within a run.
fn pingpongs(world: &Comm) {
    let rank = world.rank();
    let peer = 1 - rank;
    let guard = 64;
    for (i, &len) in [4097usize, 8192, 12345, 16384].iter().enumerate() {
        for round in 0..600u64 {
            let seed = |from: i32| ((i as u64) << 40) ^ (round << 8) ^ from as u64;
            let mut out = vec![0u8; len];
            Rng::fill(seed(rank), &mut out);
            let mut got = vec![0x5Au8; len + guard];
            let head_to_head = round % 2 == 1;
            if head_to_head || rank == 0 {
                pt2pt::send(world, &out, peer, 8, SendMode::Standard).unwrap();
                pt2pt::recv(world, &mut got, peer, 8).unwrap();
            } else {
                pt2pt::recv(world, &mut got, peer, 8).unwrap();
                pt2pt::send(world, &out, peer, 8, SendMode::Standard).unwrap();
            }
            expect_payload(rank, &got[..len], seed(peer), "ping-pong message");
            check!(
                rank,
                got[len..].iter().all(|&x| x == 0x5A),
                "ping-pong of {len} B, round {round}: bytes written past the message"
            );
        }
    }
}

fn windows(world: &Comm) {
    let rank = world.rank();
    let sizes = [
        65usize, 2047, 2048, 2049, 3000, 4096, 4100, 8191, 8192, 12345, 16384, 16385,
    ];
    let guard = 64;
    for (i, &len) in sizes.iter().enumerate() {
        for dir in 0..2u64 {
            let (src, dst) = if dir == 0 { (0, 1) } else { (1, 0) };
            let seed = |k: u64| ((i as u64) << 32) ^ (dir << 16) ^ k;
            if rank == src {
                let bufs: Vec<Vec<u8>> = (0..16)
                    .map(|k| {
                        let mut b = vec![0u8; len];
                        Rng::fill(seed(k), &mut b);
                        b
                    })
                    .collect();
                buf::scope(|sc| {
                    let mut reqs: Vec<_> = bufs
                        .iter()
                        .map(|b| {
                            pt2pt::isend(sc, world, SendBuf::bytes(b), dst, 5, SendMode::Standard)
                                .unwrap()
                        })
                        .collect();
                    let mut sts = vec![Status::EMPTY; reqs.len()];
                    pt2pt::waitall(&mut reqs, &mut sts).unwrap();
                });
            } else if rank == dst {
                for k in 0..16 {
                    let mut b = vec![0x5Au8; len + guard];
                    let st = pt2pt::recv(world, &mut b, src, 5).unwrap();
                    check!(
                        rank,
                        st.count_bytes == len,
                        "window of {len} B: got {} bytes",
                        st.count_bytes
                    );
                    expect_payload(rank, &b[..len], seed(k), "window message");
                    check!(
                        rank,
                        b[len..].iter().all(|&x| x == 0x5A),
                        "window of {len} B: bytes written past the message"
                    );
                }
            }
            // A ping-pong of the same size: the answer goes by the other copy.
            let mut b = vec![0u8; len];
            if rank == src {
                Rng::fill(seed(99), &mut b);
                pt2pt::send(world, &b, dst, 6, SendMode::Standard).unwrap();
                let mut back = vec![0x5Au8; len + guard];
                let st = pt2pt::recv(world, &mut back, dst, 7).unwrap();
                check!(rank, st.count_bytes == len, "pong of {len} B: {st:?}");
                expect_payload(rank, &back[..len], seed(100), "pong");
                check!(
                    rank,
                    back[len..].iter().all(|&x| x == 0x5A),
                    "pong of {len} B: bytes written past the message"
                );
            } else if rank == dst {
                let mut ping = vec![0x5Au8; len + guard];
                let st = pt2pt::recv(world, &mut ping, src, 6).unwrap();
                check!(rank, st.count_bytes == len, "ping of {len} B: {st:?}");
                expect_payload(rank, &ping[..len], seed(99), "ping");
                Rng::fill(seed(100), &mut b);
                pt2pt::send(world, &b, src, 7, SendMode::Standard).unwrap();
            }
        }
    }
}

fn barrier(world: &Comm) {
    oxmpi_core::coll::barrier::barrier(world).unwrap();
}

/// A message longer than the receive buffer: MPI_ERR_TRUNCATE, and not one byte
/// written past the buffer (guard bytes stay intact).
fn truncate(world: &Comm) {
    let rank = world.rank();
    for (i, &(sent, cap)) in [
        (100usize, 10usize),
        (300_000, 100_000),
        (4 << 20, (1 << 20) + 3),
    ]
    .iter()
    .enumerate()
    {
        let tag = i as i32;
        if rank == 0 {
            let mut b = vec![0u8; sent];
            Rng::fill(i as u64, &mut b);
            pt2pt::send(world, &b, 1, tag, SendMode::Standard).unwrap();
            // The sender's side still completes normally; then one more good message.
            pt2pt::send(world, &b[..cap], 1, tag, SendMode::Standard).unwrap();
        } else if rank == 1 {
            let guard = 4096;
            let mut b = vec![0xA5u8; cap + guard];
            let err = pt2pt::recv(world, &mut b[..cap], 0, tag).unwrap_err();
            check!(
                rank,
                err.class == ErrorClass::Truncate,
                "wanted MPI_ERR_TRUNCATE, got {err}"
            );
            check!(
                rank,
                err.message.contains("truncated"),
                "message: {}",
                err.message
            );
            check!(
                rank,
                b[cap..].iter().all(|&x| x == 0xA5),
                "bytes written past the receive buffer ({sent} into {cap})"
            );
            let mut want = vec![0u8; sent];
            Rng::fill(i as u64, &mut want);
            check!(rank, b[..cap] == want[..cap], "truncated prefix wrong");
            let st = pt2pt::recv(world, &mut b[..cap], 0, tag).unwrap();
            check!(
                rank,
                st.count_bytes == cap,
                "follow-up message size {}",
                st.count_bytes
            );
        }
    }
}

/// Cancel a posted receive, and a send the receiver has not matched.
fn cancel(world: &Comm) {
    let rank = world.rank();
    if rank == 0 {
        // A receive nobody will satisfy.
        let mut b = [0u8; 8];
        // Sends to rank 1, which is not receiving tag 5 yet: small (eager) and large.
        let lens = [16usize, 2 << 20];
        let firsts: Vec<Vec<u8>> = lens.iter().map(|&l| vec![1u8; l]).collect();
        let seconds: Vec<Vec<u8>> = lens.iter().map(|&l| vec![2u8; l]).collect();
        buf::scope(|sc| {
            let mut r = pt2pt::irecv(sc, world, RecvBuf::bytes(&mut b), 1, 42).unwrap();
            pt2pt::cancel(&r).unwrap();
            let st = pt2pt::wait(&mut r).unwrap();
            check!(rank, st.cancelled, "receive not cancelled");
            let mut pending = Vec::new();
            for i in 0..lens.len() {
                let mut r1 = pt2pt::isend(
                    sc,
                    world,
                    SendBuf::bytes(&firsts[i]),
                    1,
                    5,
                    SendMode::Standard,
                )
                .unwrap();
                pt2pt::cancel(&r1).unwrap();
                let st = pt2pt::wait(&mut r1).unwrap();
                check!(
                    rank,
                    st.cancelled,
                    "send of {} bytes not cancelled",
                    lens[i]
                );
                pending.push(
                    pt2pt::isend(
                        sc,
                        world,
                        SendBuf::bytes(&seconds[i]),
                        1,
                        5,
                        SendMode::Standard,
                    )
                    .unwrap(),
                );
            }
            barrier(world);
            let mut sts = vec![Status::EMPTY; pending.len()];
            pt2pt::waitall(&mut pending, &mut sts).unwrap();
            check!(
                rank,
                sts.iter().all(|s| !s.cancelled),
                "uncancelled sends report cancelled"
            );
        });
    } else if rank == 1 {
        barrier(world);
        for len in [16usize, 2 << 20] {
            let mut b = vec![0u8; len];
            let st = pt2pt::recv(world, &mut b, 0, 5).unwrap();
            check!(
                rank,
                st.count_bytes == len && b.iter().all(|&x| x == 2),
                "received the cancelled message ({len} bytes)"
            );
        }
        check!(
            rank,
            pt2pt::iprobe(world, 0, 5).unwrap().is_none(),
            "cancelled message still queued"
        );
    } else {
        barrier(world);
    }
}

/// Resident memory of this process in KiB (VmRSS).
fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Rank 0 floods rank 1 with 100 MB of small messages while rank 1 is not
/// receiving; rank 1's unexpected eager bytes, and its resident memory, must
/// stay bounded by flow control (the sender waits instead).
fn flood(world: &Comm) {
    let rank = world.rank();
    let count = 100_000;
    let len = 1024;
    if rank == 0 {
        let b = vec![7u8; len];
        for i in 0..count {
            pt2pt::send(world, &b, 1, i % 3, SendMode::Standard).unwrap();
        }
    } else if rank == 1 {
        let rss_before = rss_kib();
        std::thread::sleep(std::time::Duration::from_millis(500));
        // Let everything that can arrive arrive.
        let mut peak = 0;
        for _ in 0..2000 {
            let _ = pt2pt::iprobe(world, 0, 12345).unwrap();
            peak = peak.max(pt2pt::unexpected_footprint().unwrap().1);
        }
        let rss_flooded = rss_kib();
        let mut b = vec![0u8; len];
        for i in 0..count {
            let st = pt2pt::recv(world, &mut b, 0, ANY_TAG).unwrap();
            check!(
                rank,
                st.tag == i % 3 && b.iter().all(|&x| x == 7),
                "message {i} wrong"
            );
            if i % 1000 == 0 {
                peak = peak.max(pt2pt::unexpected_footprint().unwrap().1);
            }
        }
        let grew = rss_flooded.saturating_sub(rss_before);
        println!("flood: {} bytes sent; peak unexpected eager bytes {peak}; resident memory grew {grew} KiB while flooded", count as usize * len);
        check!(
            rank,
            peak <= 5 << 20,
            "unexpected queue grew to {peak} bytes"
        );
        check!(
            rank,
            grew < 32 * 1024,
            "resident memory grew by {grew} KiB under the flood"
        );
    }
}

fn probe(world: &Comm) {
    let rank = world.rank();
    if rank == 0 {
        for (tag, len) in [(1, 10usize), (2, 200_000), (3, 0)] {
            let b = vec![tag as u8; len];
            pt2pt::send(world, &b, 1, tag, SendMode::Standard).unwrap();
        }
    } else if rank == 1 {
        // Probe reports the size before receiving.
        let st = pt2pt::probe(world, 0, 2).unwrap();
        check!(
            rank,
            st.count_bytes == 200_000 && st.tag == 2 && st.source == 0,
            "probe {st:?}"
        );
        let mut b = vec![0u8; st.count_bytes];
        pt2pt::recv(world, &mut b, 0, 2).unwrap();
        check!(rank, b.iter().all(|&x| x == 2), "payload");
        // Matched probe: the message is ours even with a wildcard receive racing.
        let (mut msg, st) = pt2pt::mprobe(world, ANY_SOURCE, 1).unwrap();
        check!(rank, st.count_bytes == 10, "mprobe size {}", st.count_bytes);
        let mut b = vec![0u8; 10];
        let st2 = pt2pt::mrecv(&mut b, &mut msg).unwrap();
        check!(
            rank,
            st2.tag == 1 && b == vec![1u8; 10] && msg == oxmpi_core::Message::NULL,
            "mrecv"
        );
        let st = loop {
            if let Some(s) = pt2pt::iprobe(world, ANY_SOURCE, ANY_TAG).unwrap() {
                break s;
            }
        };
        check!(rank, st.tag == 3 && st.count_bytes == 0, "iprobe {st:?}");
        let (mut m, _) = pt2pt::improbe(world, 0, 3).unwrap().unwrap();
        pt2pt::mrecv(&mut [], &mut m).unwrap();
        // PROC_NULL probes.
        let st = pt2pt::probe(world, PROC_NULL, ANY_TAG).unwrap();
        check!(
            rank,
            st.source == PROC_NULL && st.tag == ANY_TAG && st.count_bytes == 0,
            "PROC_NULL probe {st:?}"
        );
    }
}

fn persistent(world: &Comm) {
    let rank = world.rank();
    let n = world.size();
    let right = (rank + 1) % n;
    let left = (rank + n - 1) % n;
    let mut out = vec![0u64; 1000];
    let mut inb = vec![0u64; 1000];
    // SAFETY: `out` and `inb` outlive the requests, which are freed below.
    let mut reqs = unsafe {
        [
            pt2pt::recv_init(
                &Forever,
                world,
                RecvBuf::from_raw(inb.as_mut_ptr() as *mut u8, 8000, None),
                left,
                9,
            )
            .unwrap(),
            pt2pt::send_init(
                &Forever,
                world,
                SendBuf::from_raw(out.as_ptr() as *const u8, 8000, None),
                right,
                9,
                SendMode::Standard,
            )
            .unwrap(),
        ]
    };
    for iter in 0..50u64 {
        for (i, v) in out.iter_mut().enumerate() {
            *v = iter * 1_000_000 + rank as u64 * 10_000 + i as u64;
        }
        pt2pt::startall(&mut reqs).unwrap();
        let mut sts = [Status::EMPTY; 2];
        pt2pt::waitall(&mut reqs, &mut sts).unwrap();
        check!(
            rank,
            !reqs[0].is_null() && !reqs[1].is_null(),
            "persistent handles were freed"
        );
        check!(
            rank,
            sts[0].source == left && sts[0].count_bytes == 8000,
            "status {:?}",
            sts[0]
        );
        for (i, v) in inb.iter().enumerate() {
            check!(
                rank,
                *v == iter * 1_000_000 + left as u64 * 10_000 + i as u64,
                "iteration {iter} element {i}"
            );
        }
    }
    // An inactive persistent request completes at once with an empty status.
    let st = pt2pt::wait(&mut reqs[0]).unwrap();
    check!(rank, st == Status::NULL, "inactive wait {st:?}");
    for r in &mut reqs {
        pt2pt::request_free(r).unwrap();
    }
    check!(
        rank,
        pt2pt::live_requests().unwrap() == 0,
        "leaked requests"
    );
    // A persistent receive freed (MPI_Request_free) while its run is going, inside
    // a buffer scope: the run still writes the buffer, so the scope must wait for it
    // (the left neighbour sends late, after a go message sent once it is freed).
    let mut late = [0u64; 4];
    buf::scope(|sc| {
        let mut r = pt2pt::recv_init(sc, world, RecvBuf::slice(&mut late), left, 10).unwrap();
        pt2pt::start(&mut r).unwrap();
        pt2pt::request_free(&mut r).unwrap();
        pt2pt::send(world, &[1u8], left, 11, SendMode::Standard).unwrap();
        let mut go = [0u8];
        pt2pt::recv(world, &mut go, right, 11).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let v = [rank as u64, 5, 6, 7];
        pt2pt::send(world, as_bytes(&v), right, 10, SendMode::Standard).unwrap();
    });
    check!(
        rank,
        late == [left as u64, 5, 6, 7],
        "the scope waited for a freed persistent run: {late:?}"
    );
    check!(
        rank,
        pt2pt::live_requests().unwrap() == 0,
        "leaked requests after the freed run"
    );
}

fn modes(world: &Comm) {
    let rank = world.rank();
    if rank == 0 {
        // A synchronous send must not complete before the receive is posted.
        let b = [1u8; 8];
        buf::scope(|sc| {
            let mut r =
                pt2pt::isend(sc, world, SendBuf::bytes(&b), 1, 1, SendMode::Synchronous).unwrap();
            let t = runtime::wtime();
            while runtime::wtime() - t < 0.3 {
                check!(
                    rank,
                    pt2pt::test(&mut r).unwrap().is_none(),
                    "ssend completed before the receive was posted"
                );
            }
            pt2pt::send(world, &[0u8], 1, 2, SendMode::Standard).unwrap(); // "go ahead"
            pt2pt::wait(&mut r).unwrap();
        });
        // Buffered sends: no buffer -> MPI_ERR_BUFFER; with one, they complete at once.
        let err = pt2pt::send(world, &b, 1, 3, SendMode::Buffered).unwrap_err();
        check!(
            rank,
            err.class == ErrorClass::Buffer,
            "bsend without buffer: {err}"
        );
        let mut space = vec![0u8; 10 * (1000 + pt2pt::BSEND_OVERHEAD)];
        pt2pt::buffer_attach_accounted(&mut space).unwrap();
        let big = vec![3u8; 1000];
        for _ in 0..10 {
            pt2pt::send(world, &big, 1, 3, SendMode::Buffered).unwrap();
        }
        // One message larger than the whole attached space cannot be buffered.
        let too_big = vec![3u8; space.len()];
        let err = pt2pt::send(world, &too_big, 1, 3, SendMode::Buffered).unwrap_err();
        check!(
            rank,
            err.class == ErrorClass::Buffer && err.message.contains("MPI_Bsend"),
            "bsend past the buffer: {err}"
        );
        pt2pt::send(world, &[0u8], 1, 2, SendMode::Standard).unwrap(); // receive them now
        let (_, size) = pt2pt::buffer_detach().unwrap();
        check!(rank, size == space.len(), "detach size");
        pt2pt::send(world, &b, 1, 4, SendMode::Ready).unwrap();
    } else if rank == 1 {
        let mut go = [0u8];
        pt2pt::recv(world, &mut go, 0, 2).unwrap();
        let mut b = [0u8; 8];
        pt2pt::recv(world, &mut b, 0, 1).unwrap();
        pt2pt::recv(world, &mut go, 0, 2).unwrap();
        let mut big = vec![0u8; 1000];
        for _ in 0..10 {
            pt2pt::recv(world, &mut big, 0, 3).unwrap();
            check!(rank, big.iter().all(|&x| x == 3), "bsend payload");
        }
        pt2pt::recv(world, &mut b, 0, 4).unwrap();
    }
}

fn waitfamily(world: &Comm) {
    let rank = world.rank();
    let n = world.size();
    if rank == 0 {
        let mut bufs = vec![[0u32; 4]; (n - 1) as usize];
        let mut reqs: Vec<Request> = Vec::new();
        buf::scope(|sc| {
            reqs = bufs
                .iter_mut()
                .enumerate()
                .map(|(i, b)| {
                    pt2pt::irecv(sc, world, RecvBuf::bytes(as_bytes_mut(b)), i as i32 + 1, 0)
                        .unwrap()
                })
                .collect();
            let mut seen = vec![false; reqs.len()];
            let mut got = 0;
            while got < reqs.len() {
                if got % 2 == 0 {
                    let (i, st) = pt2pt::waitany(&mut reqs).unwrap().unwrap();
                    check!(
                        rank,
                        st.source == i as i32 + 1 && !seen[i],
                        "waitany index {i} source {}",
                        st.source
                    );
                    seen[i] = true;
                    got += 1;
                } else {
                    let done = pt2pt::waitsome(&mut reqs).unwrap().unwrap();
                    for (i, st) in done {
                        check!(
                            rank,
                            st.unwrap().source == i as i32 + 1 && !seen[i],
                            "waitsome index {i}"
                        );
                        seen[i] = true;
                        got += 1;
                    }
                }
            }
        });
        for (i, b) in bufs.iter().enumerate() {
            check!(rank, *b == [i as u32 + 1; 4], "payload from {}", i + 1);
        }
        check!(
            rank,
            pt2pt::waitany(&mut reqs).unwrap().is_none(),
            "waitany on all-null must be undefined"
        );
        check!(
            rank,
            pt2pt::testany(&mut reqs).unwrap() == Some(None),
            "testany on all-null"
        );
        let mut empty: [Request; 0] = [];
        check!(
            rank,
            pt2pt::testall(&mut empty, &mut []).unwrap(),
            "testall on none"
        );
    } else {
        std::thread::sleep(std::time::Duration::from_millis(20 * rank as u64));
        pt2pt::send(world, bytes(&[rank as u32; 4]), 0, 0, SendMode::Standard).unwrap();
    }
}

fn bytes(v: &[u32]) -> &[u8] {
    oxmpi_core::buf::as_bytes(v)
}

/// MPI_THREAD_MULTIPLE: four threads per rank exchange with the neighbours
/// concurrently, each on its own tag.
fn threads(world: &Comm) {
    let rank = world.rank();
    let n = world.size();
    std::thread::scope(|s| {
        for t in 0..4i32 {
            let world = world.clone();
            s.spawn(move || {
                let right = (rank + 1) % n;
                let left = (rank + n - 1) % n;
                for i in 0..300usize {
                    let len = if i % 50 == 0 { 300_000 } else { 64 };
                    let mut out = vec![0u8; len];
                    Rng::fill((rank * 1000 + t) as u64 + i as u64 * 7, &mut out);
                    let mut inb = vec![0u8; len];
                    let st = pt2pt::sendrecv(&world, &out, right, t, &mut inb, left, t).unwrap();
                    check!(
                        rank,
                        st.count_bytes == len && st.tag == t,
                        "thread {t} iteration {i}"
                    );
                    let mut want = vec![0u8; len];
                    Rng::fill((left * 1000 + t) as u64 + i as u64 * 7, &mut want);
                    check!(rank, inb == want, "thread {t} iteration {i} payload");
                }
            });
        }
    });
}

/// Bad arguments come back as errors of the right class, naming call and argument.
fn errors(world: &Comm) {
    let rank = world.rank();
    let n = world.size();
    let b = [0u8; 4];
    let e = pt2pt::send(world, &b, n, 0, SendMode::Standard).unwrap_err();
    check!(
        rank,
        e.class == ErrorClass::Rank && e.message.contains("MPI_Send") && e.message.contains("dest"),
        "{e}"
    );
    let e = pt2pt::send(world, &b, 0, -5, SendMode::Standard).unwrap_err();
    check!(
        rank,
        e.class == ErrorClass::Tag && e.message.contains("tag"),
        "{e}"
    );
    let mut rb = [0u8; 4];
    let e = pt2pt::recv(world, &mut rb, -7, 0).unwrap_err();
    check!(
        rank,
        e.class == ErrorClass::Rank && e.message.contains("source"),
        "{e}"
    );
    let e = pt2pt::recv(world, &mut rb, 0, -9).unwrap_err();
    check!(rank, e.class == ErrorClass::Tag, "{e}");
    // SAFETY: a made-up value naming no live request (generation 0xdead was never reached here).
    let mut stale = unsafe { Request::from_raw(0xdead_0000_0001) };
    let e = pt2pt::wait(&mut stale).unwrap_err();
    check!(rank, e.class == ErrorClass::Request, "{e}");
    let e = runtime::init(ThreadLevel::Single).unwrap_err();
    check!(
        rank,
        e.class == ErrorClass::Other && e.message.contains("MPI_Init"),
        "{e}"
    );
    // PROC_NULL sends and receives complete at once.
    pt2pt::send(world, &b, PROC_NULL, 0, SendMode::Standard).unwrap();
    let st = pt2pt::recv(world, &mut rb, PROC_NULL, 3).unwrap();
    check!(
        rank,
        st.source == PROC_NULL && st.tag == ANY_TAG && st.count_bytes == 0,
        "{st:?}"
    );
}

/// Large messages between ranks 0 and 1, which the two copy together when the
/// sender is waiting in MPI too: contents intact at every size (chunk-aligned or
/// not), more messages in flight than a ring has shared-copy slots, and a sender
/// that is busy outside MPI does not hold the receiver up.
fn shared_copy(world: &Comm) {
    let rank = world.rank();
    let sizes = [256 << 10, (1 << 20) + 7, (5 << 20) + 3, 300_001];
    // Blocking pairs: the sender waits in MPI, so it helps.
    for (i, &n) in sizes.iter().enumerate() {
        let tag = i as i32;
        if rank == 0 {
            let mut b = vec![0u8; n];
            Rng::fill(100 + i as u64, &mut b);
            pt2pt::send(world, &b, 1, tag, SendMode::Standard).unwrap();
        } else if rank == 1 {
            let mut b = vec![0u8; n + 64];
            let st = pt2pt::recv(world, &mut b, 0, tag).unwrap();
            check!(
                rank,
                st.count_bytes == n,
                "size {n}: count {}",
                st.count_bytes
            );
            let mut want = vec![0u8; n];
            Rng::fill(100 + i as u64, &mut want);
            check!(rank, b[..n] == want[..], "size {n}: contents differ");
            check!(
                rank,
                b[n..].iter().all(|&x| x == 0),
                "size {n}: bytes written past the message"
            );
        }
    }
    // Eight at once, received in reverse order.
    const K: usize = 8;
    let n = 512 << 10;
    if rank == 0 {
        let bufs: Vec<Vec<u8>> = (0..K)
            .map(|k| {
                let mut b = vec![0u8; n];
                Rng::fill(200 + k as u64, &mut b);
                b
            })
            .collect();
        buf::scope(|sc| {
            let mut reqs: Vec<Request> = (0..K)
                .map(|k| {
                    pt2pt::isend(
                        sc,
                        world,
                        SendBuf::bytes(&bufs[k][..n]),
                        1,
                        50 + k as i32,
                        SendMode::Standard,
                    )
                    .unwrap()
                })
                .collect();
            let mut sts = vec![Status::EMPTY; K];
            pt2pt::waitall(&mut reqs, &mut sts).unwrap();
        });
    } else if rank == 1 {
        let mut bufs = vec![vec![0u8; n]; K];
        buf::scope(|sc| {
            let mut reqs: Vec<Request> = bufs
                .iter_mut()
                .enumerate()
                .rev()
                .map(|(k, b)| {
                    pt2pt::irecv(sc, world, RecvBuf::bytes(&mut b[..n]), 0, 50 + k as i32).unwrap()
                })
                .collect();
            let mut sts = vec![Status::EMPTY; K];
            pt2pt::waitall(&mut reqs, &mut sts).unwrap();
        });
        for (k, b) in bufs.iter().enumerate() {
            let mut want = vec![0u8; n];
            Rng::fill(200 + k as u64, &mut want);
            check!(rank, *b == want, "message {k} of the window differs");
        }
    }
    // A sender busy outside MPI for 2 s: the receiver copies everything itself
    // (without cross-memory reads only the sender can move the data: skip).
    if std::env::var_os("OXMPI_NO_CMA").is_some() {
        return;
    }
    let n = 4 << 20;
    if rank == 0 {
        let mut b = vec![0u8; n];
        Rng::fill(300, &mut b);
        buf::scope(|sc| {
            let mut r = pt2pt::isend(
                sc,
                world,
                SendBuf::bytes(&b[..n]),
                1,
                99,
                SendMode::Standard,
            )
            .unwrap();
            std::thread::sleep(std::time::Duration::from_secs(2));
            pt2pt::wait(&mut r).unwrap();
        });
    } else if rank == 1 {
        let mut b = vec![0u8; n];
        let t = std::time::Instant::now();
        pt2pt::recv(world, &mut b, 0, 99).unwrap();
        let took = t.elapsed();
        check!(
            rank,
            took < std::time::Duration::from_millis(1500),
            "receive waited {took:?} for a sender busy outside MPI"
        );
        let mut want = vec![0u8; n];
        Rng::fill(300, &mut want);
        check!(rank, b == want, "contents differ");
    }
}

/// Sends to oneself: small ones buffer, large ones wait for the receive.
fn selfsend(world: &Comm) {
    let rank = world.rank();
    let small = [9u8; 100];
    pt2pt::send(world, &small, rank, 1, SendMode::Standard).unwrap();
    let mut b = [0u8; 100];
    pt2pt::recv(world, &mut b, rank, 1).unwrap();
    check!(rank, b == small, "small self message");
    let big = vec![5u8; 3 << 20];
    let mut bb = vec![0u8; 3 << 20];
    let st = buf::scope(|sc| {
        let mut s =
            pt2pt::isend(sc, world, SendBuf::bytes(&big), rank, 2, SendMode::Standard).unwrap();
        check!(
            rank,
            pt2pt::test(&mut s).unwrap().is_none(),
            "large self send completed unmatched"
        );
        let st = pt2pt::recv(world, &mut bb, rank, 2).unwrap();
        pt2pt::wait(&mut s).unwrap();
        st
    });
    check!(
        rank,
        st.count_bytes == big.len() && bb == big,
        "large self message"
    );
    let st = pt2pt::sendrecv(world, &small, rank, 3, &mut b, rank, 3).unwrap();
    check!(rank, st.source == rank && b == small, "self sendrecv");
}

/// Nobody leaves a barrier before everybody entered it: rank r enters after
/// r*40 ms and records the time; after the barrier every rank's clock must be
/// past the last entry. Also checks ibarrier completes via test.
fn barrier_order(world: &Comm) {
    let rank = world.rank();
    let n = world.size();
    for round in 0..3 {
        std::thread::sleep(std::time::Duration::from_millis(40 * rank as u64));
        let entered = runtime::wtime();
        barrier(world);
        let left = runtime::wtime();
        // Everybody sends its entry time to rank 0 which checks it left after all entered.
        let bytes = entered.to_le_bytes();
        if rank == 0 {
            for r in 1..n {
                let mut b = [0u8; 8];
                pt2pt::recv(world, &mut b, r, round).unwrap();
                let t = f64::from_le_bytes(b);
                check!(
                    rank,
                    t <= left,
                    "rank {r} entered the barrier at {t}, after rank 0 left at {left}"
                );
            }
        } else {
            pt2pt::send(world, &bytes, 0, round, SendMode::Standard).unwrap();
        }
    }
    let mut r = oxmpi_core::coll::barrier::ibarrier(world).unwrap();
    while pt2pt::test(&mut r).unwrap().is_none() {}
    check!(rank, r.is_null(), "ibarrier request not consumed");
}

/// Derived datatypes on either side: a column of a 100x150 int matrix (vector)
/// against a contiguous array, the MPI_UB struct that stretches one int to a
/// row, and a large strided message (rendezvous path) - type maps differ,
/// signatures match.
fn typed(world: &Comm) {
    use oxmpi_core::datatype::{Datatype, Primitive};
    let rank = world.rank();
    let int = Datatype::predefined(Primitive::Int);
    let (rows, cols) = (100usize, 150usize);
    let column = Datatype::vector(rows as i64, 1, cols as i64, &int).unwrap();
    column.commit();
    let matrix: Vec<i32> = (0..(rows * cols) as i32).collect();
    if rank == 0 {
        // Column 7 as one vector element, to a contiguous receive.
        pt2pt::send_typed(
            world,
            SendBuf::typed(buf::as_bytes(&matrix[7..][..]), 1, &column).unwrap(),
            1,
            1,
            SendMode::Standard,
        )
        .unwrap();
        // 100 ints contiguous, to a column receive on the other side.
        let v: Vec<i32> = (0..rows as i32).map(|i| -i).collect();
        pt2pt::send_typed(
            world,
            SendBuf::typed(buf::as_bytes(&v[..]), rows, &int).unwrap(),
            1,
            2,
            SendMode::Standard,
        )
        .unwrap();
        // A big strided message: every other double of 1M (rendezvous path).
        let dbl = Datatype::predefined(Primitive::Double);
        let strided = Datatype::vector(1 << 19, 1, 2, &dbl).unwrap();
        strided.commit();
        let big: Vec<f64> = (0..1 << 20).map(|i| i as f64).collect();
        pt2pt::send_typed(
            world,
            SendBuf::typed(buf::as_bytes(&big[..]), 1, &strided).unwrap(),
            1,
            3,
            SendMode::Standard,
        )
        .unwrap();
        // Uncommitted datatype: MPI_ERR_TYPE naming the call.
        let raw = Datatype::contiguous(2, &int).unwrap();
        let err = pt2pt::send_typed(
            world,
            SendBuf::typed(buf::as_bytes(&v[..]), 1, &raw).unwrap(),
            1,
            4,
            SendMode::Standard,
        )
        .unwrap_err();
        check!(
            rank,
            err.class == ErrorClass::Type && err.message.contains("commit"),
            "{err}"
        );
    } else if rank == 1 {
        let mut col = vec![0i32; rows];
        let st = pt2pt::recv_typed(
            world,
            RecvBuf::typed(as_bytes_mut(&mut col[..]), rows, &int).unwrap(),
            0,
            1,
        )
        .unwrap();
        check!(
            rank,
            st.count_bytes == rows * 4 && int.get_count(st.count_bytes) == Some(rows),
            "count {st:?}"
        );
        for (i, v) in col.iter().enumerate() {
            check!(
                rank,
                *v == (i * cols + 7) as i32,
                "column element {i} = {v}"
            );
        }
        let mut m = vec![0i32; rows * cols];
        let st = pt2pt::recv_typed(
            world,
            RecvBuf::typed(as_bytes_mut(&mut m[3..][..]), 1, &column).unwrap(),
            0,
            2,
        )
        .unwrap();
        check!(
            rank,
            column.get_count(st.count_bytes) == Some(1),
            "column count"
        );
        for r in 0..rows {
            for c in 0..cols {
                let want = if c == 3 { -(r as i32) } else { 0 };
                check!(
                    rank,
                    m[r * cols + c] == want,
                    "matrix[{r}][{c}] = {}",
                    m[r * cols + c]
                );
            }
        }
        let dbl = Datatype::predefined(Primitive::Double);
        let mut half = vec![0f64; 1 << 19];
        pt2pt::recv_typed(
            world,
            RecvBuf::typed(as_bytes_mut(&mut half[..]), 1 << 19, &dbl).unwrap(),
            0,
            3,
        )
        .unwrap();
        check!(
            rank,
            half.iter().enumerate().all(|(i, v)| *v == (2 * i) as f64),
            "strided doubles"
        );
    }
    // The seed's MPI_UB trick: one int stretched to a whole row, so consecutive
    // elements step a row at a time: count=rows of them is a column.
    let ub = Datatype::structure(
        &[1, 1],
        &[0, (cols * 4) as isize],
        &[int.clone(), Datatype::ub_marker()],
    )
    .unwrap();
    ub.commit();
    check!(
        rank,
        ub.extent() == (cols * 4) as isize && ub.size() == 4,
        "MPI_UB struct extent {}",
        ub.extent()
    );
    if rank == 0 {
        pt2pt::send_typed(
            world,
            SendBuf::typed(buf::as_bytes(&matrix[5..][..]), rows, &ub).unwrap(),
            1,
            5,
            SendMode::Standard,
        )
        .unwrap();
    } else if rank == 1 {
        let mut col = vec![0i32; rows];
        pt2pt::recv_typed(
            world,
            RecvBuf::typed(as_bytes_mut(&mut col[..]), rows, &int).unwrap(),
            0,
            5,
        )
        .unwrap();
        for (i, v) in col.iter().enumerate() {
            check!(
                rank,
                *v == (i * cols + 5) as i32,
                "MPI_UB column element {i} = {v}"
            );
        }
    }
}

/// Type-signature checking (`OXMPI_CHECK_SIGNATURES=1`): doubles received as
/// ints fail with MPI_ERR_TYPE and deliver nothing; without checking they
/// arrive as bytes. MPI_BYTE receives and matching types always work. Eager
/// (one packet and fragmented) and rendezvous sizes; receives posted before
/// the message and after it (unexpected); synchronous mode; sends to self.
fn signature(world: &Comm) {
    use oxmpi_core::datatype::{Datatype, Primitive};
    let rank = world.rank();
    let checking = std::env::var("OXMPI_CHECK_SIGNATURES").is_ok_and(|v| v == "1");
    let int = Datatype::predefined(Primitive::Int);
    let dbl = Datatype::predefined(Primitive::Double);
    let byte = Datatype::predefined(Primitive::Byte);
    const SENTINEL: i32 = 0x5A5A_5A5A;
    let doubles = |n: usize, salt: usize| -> Vec<f64> {
        (0..n).map(|i| (i * 7 + salt) as f64 + 0.25).collect()
    };
    let as_bytes = |v: &[f64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let ints_bytes = |v: &[i32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    // Checks a receive of doubles into ints: the error with checking, the bytes without.
    let expect_mismatch = |res: oxmpi_core::Result<Status>,
                           got: &[i32],
                           sent: &[f64],
                           src: i32,
                           tag: i32,
                           what: &str| {
        if checking {
            let err = match res {
                Err(e) => e,
                Ok(st) => {
                    check!(
                        rank,
                        false,
                        "{what}: mismatched receive succeeded with checking on: {st:?}"
                    );
                    unreachable!()
                }
            };
            check!(
                rank,
                err.class == ErrorClass::Type,
                "{what}: wanted MPI_ERR_TYPE, got {err}"
            );
            let want = format!(
                "type signature mismatch: the message from rank {src} (tag {tag}) holds {} x MPI_DOUBLE but the receive expects {} x MPI_INT",
                sent.len(),
                got.len()
            );
            check!(
                rank,
                err.message.contains(&want),
                "{what}: message: {}",
                err.message
            );
            check!(
                rank,
                got.iter().all(|&x| x == SENTINEL),
                "{what}: data delivered despite the mismatch"
            );
        } else {
            let st = match res {
                Ok(st) => st,
                Err(e) => {
                    check!(rank, false, "{what}: receive failed with checking off: {e}");
                    unreachable!()
                }
            };
            check!(
                rank,
                st.count_bytes == sent.len() * 8,
                "{what}: count {}",
                st.count_bytes
            );
            check!(
                rank,
                ints_bytes(got) == as_bytes(sent),
                "{what}: bytes differ"
            );
        }
    };
    // 16 doubles: one packet; 4096: fragmented eager; 2^17: rendezvous.
    for (k, &n) in [16usize, 4096, 1 << 17].iter().enumerate() {
        let base = 10 * k as i32;
        // Sends to self, both orders of send and receive.
        {
            let sent = doubles(n, k);
            let mut got = vec![SENTINEL; 2 * n];
            let res = buf::scope(|sc| {
                let mut s = pt2pt::isend(
                    sc,
                    world,
                    SendBuf::typed(buf::as_bytes(&sent[..]), n, &dbl).unwrap(),
                    rank,
                    base + 9,
                    SendMode::Standard,
                )
                .unwrap();
                let res = pt2pt::recv_typed(
                    world,
                    RecvBuf::typed(as_bytes_mut(&mut got[..]), 2 * n, &int).unwrap(),
                    rank,
                    base + 9,
                );
                pt2pt::wait(&mut s).unwrap();
                res
            });
            expect_mismatch(
                res,
                &got,
                &sent,
                rank,
                base + 9,
                &format!("self, {n} doubles"),
            );
            let mut got = vec![SENTINEL; 2 * n];
            let res = buf::scope(|sc| {
                let mut r = pt2pt::irecv(
                    sc,
                    world,
                    RecvBuf::typed(as_bytes_mut(&mut got[..]), 2 * n, &int).unwrap(),
                    rank,
                    base + 8,
                )
                .unwrap();
                pt2pt::send_typed(
                    world,
                    SendBuf::typed(buf::as_bytes(&sent[..]), n, &dbl).unwrap(),
                    rank,
                    base + 8,
                    SendMode::Standard,
                )
                .unwrap();
                pt2pt::wait(&mut r)
            });
            expect_mismatch(
                res,
                &got,
                &sent,
                rank,
                base + 8,
                &format!("self posted, {n} doubles"),
            );
        }
        if world.size() < 2 || rank > 1 {
            barrier(world);
            barrier(world);
            continue;
        }
        if rank == 1 {
            // Posted before the message arrives.
            let mut got = vec![SENTINEL; 2 * n];
            let res = buf::scope(|sc| {
                let mut r = pt2pt::irecv(
                    sc,
                    world,
                    RecvBuf::typed(as_bytes_mut(&mut got[..]), 2 * n, &int).unwrap(),
                    0,
                    base + 1,
                )
                .unwrap();
                barrier(world);
                pt2pt::wait(&mut r)
            });
            let sent = doubles(n, 1);
            expect_mismatch(
                res,
                &got,
                &sent,
                0,
                base + 1,
                &format!("posted, {n} doubles"),
            );
            // Unexpected: the messages are all there before the receives.
            barrier(world);
            let mut got = vec![SENTINEL; 2 * n];
            let res = pt2pt::recv_typed(
                world,
                RecvBuf::typed(as_bytes_mut(&mut got[..]), 2 * n, &int).unwrap(),
                0,
                base + 2,
            );
            expect_mismatch(
                res,
                &got,
                &doubles(n, 2),
                0,
                base + 2,
                &format!("unexpected synchronous, {n} doubles"),
            );
            let mut got = vec![0u8; 8 * n];
            let st = pt2pt::recv_typed(
                world,
                RecvBuf::typed(as_bytes_mut(&mut got[..]), 8 * n, &byte).unwrap(),
                0,
                base + 3,
            )
            .unwrap();
            check!(
                rank,
                st.count_bytes == 8 * n && got == as_bytes(&doubles(n, 3)),
                "MPI_BYTE receive of {n} doubles"
            );
            let mut got = vec![0f64; n];
            pt2pt::recv_typed(
                world,
                RecvBuf::typed(as_bytes_mut(&mut got[..]), n, &dbl).unwrap(),
                0,
                base + 4,
            )
            .unwrap();
            check!(
                rank,
                got == doubles(n, 4),
                "MPI_DOUBLE receive of {n} doubles"
            );
            // Plain byte receive of a typed message: never checked.
            let mut got = vec![0u8; 8 * n];
            pt2pt::recv(world, &mut got, 0, base + 5).unwrap();
            check!(
                rank,
                got == as_bytes(&doubles(n, 5)),
                "byte receive of {n} doubles"
            );
        } else {
            barrier(world);
            let sent = doubles(n, 1);
            pt2pt::send_typed(
                world,
                SendBuf::typed(buf::as_bytes(&sent[..]), n, &dbl).unwrap(),
                1,
                base + 1,
                SendMode::Standard,
            )
            .unwrap();
            let bufs: Vec<Vec<f64>> = (2..=5).map(|i| doubles(n, i)).collect();
            buf::scope(|sc| {
                let mut reqs = Vec::new();
                for (i, b) in bufs.iter().enumerate() {
                    let tag = base + 2 + i as i32;
                    let mode = if i == 0 {
                        SendMode::Synchronous
                    } else {
                        SendMode::Standard
                    };
                    reqs.push(
                        pt2pt::isend(
                            sc,
                            world,
                            SendBuf::typed(buf::as_bytes(&b[..]), n, &dbl).unwrap(),
                            1,
                            tag,
                            mode,
                        )
                        .unwrap(),
                    );
                }
                // Let the eager ones land in the unexpected queue first.
                std::thread::sleep(std::time::Duration::from_millis(20));
                barrier(world);
                let mut statuses = vec![Status::EMPTY; reqs.len()];
                pt2pt::waitall(&mut reqs, &mut statuses).unwrap();
            });
        }
    }
}

/// Type-signature checking of mixed types (`OXMPI_CHECK_SIGNATURES=1`): structs
/// against structs, a message shorter than the receive (a prefix), the same
/// primitive stream grouped into different elements, and real mismatches
/// (MPI_ERR_TYPE, nothing delivered, the sender completes), eager and
/// rendezvous; a message longer than the receive stays a truncation. Rank 0
/// sends to rank 1, or to itself on one rank. Without checking, every case
/// that is not a truncation delivers the bytes.
fn signature_mixed(world: &Comm) {
    use oxmpi_core::datatype::{Datatype, Primitive};
    let rank = world.rank();
    let checking = std::env::var("OXMPI_CHECK_SIGNATURES").is_ok_and(|v| v == "1");
    let (src, dst) = (0, if world.size() > 1 { 1 } else { 0 });
    let int = Datatype::predefined(Primitive::Int);
    let dbl = Datatype::predefined(Primitive::Double);
    let commit = |d: Datatype| {
        d.commit();
        d
    };
    // {int, double} and {double, int}: 12 bytes of data, extent 16.
    let id = commit(Datatype::structure(&[1, 1], &[0, 8], &[int.clone(), dbl.clone()]).unwrap());
    let di = commit(Datatype::structure(&[1, 1], &[0, 8], &[dbl.clone(), int.clone()]).unwrap());
    // Two {int, double} per element, laid out differently.
    let id2 = commit(
        Datatype::structure(
            &[1, 1, 1, 1],
            &[0, 8, 16, 24],
            &[int.clone(), dbl.clone(), int.clone(), dbl.clone()],
        )
        .unwrap(),
    );
    let id_vec3 = commit(Datatype::vector(3, 1, 2, &id).unwrap());
    let c4 = commit(Datatype::contiguous(4, &int).unwrap());
    let byte = Datatype::predefined(Primitive::Byte);
    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Want {
        Fine,
        Type,
        Truncate,
    }
    use Want::*;
    let big = 20_000; // 240 KB of {int, double}: rendezvous
    #[rustfmt::skip]
    let cases: Vec<(&Datatype, usize, &Datatype, usize, Want, &str)> = vec![
        (&id, 2, &id, 2, Fine, ""),
        (&id, 2, &id, 4, Fine, ""),                 // prefix: fewer elements than the buffer
        (&c4, 1, &int, 4, Fine, ""),                // same stream, other grouping
        (&int, 8, &c4, 3, Fine, ""),
        (&id, 3, &id_vec3, 1, Fine, ""),
        (&id_vec3, 1, &id, 3, Fine, ""),
        (&id, 2, &id2, 1, Fine, ""),
        (&id, 3, &id2, 2, Fine, ""),                // ends in the middle of a receive element
        (&id2, 1, &id, 2, Fine, ""),
        (&id, big, &id, big, Fine, ""),
        (&id, big, &id2, big / 2 + 1, Fine, ""),
        (&id, 1, &byte, 12, Fine, ""),              // MPI_BYTE matches anything
        (&id, 1, &di, 1, Type, "holds 1 x {MPI_INT, MPI_DOUBLE} but the receive expects 1 x {MPI_DOUBLE, MPI_INT}"),
        (&di, 2, &id, 4, Type, "holds 2 x {MPI_DOUBLE, MPI_INT} but the receive expects 4 x {MPI_INT, MPI_DOUBLE}"),
        (&int, 3, &id, 2, Type, "holds 3 x MPI_INT but the receive expects 2 x {MPI_INT, MPI_DOUBLE}"),
        (&dbl, 2, &c4, 1, Type, "holds 2 x MPI_DOUBLE but the receive expects 4 x MPI_INT"),
        (&id, 2, &dbl, 3, Type, "holds 2 x {MPI_INT, MPI_DOUBLE} but the receive expects 3 x MPI_DOUBLE"),
        (&id, big, &di, big, Type, "but the receive expects 20000 x {MPI_DOUBLE, MPI_INT}"),
        (&int, 3, &int, 2, Truncate, ""),         // too long: truncation, not a type error
        (&id, 3, &di, 2, Truncate, ""),
    ];
    const SENTINEL: u8 = 0x5A;
    // Deterministic send buffer of a case: every byte of the type's span.
    let send_buf = |dt: &Datatype, count: usize, case: usize| -> Vec<u8> {
        let span = (count as isize - 1).max(0) * dt.extent() + dt.true_extent() + dt.true_lb();
        (0..span.max(0) as usize)
            .map(|i| (i * 7 + case * 31 + 1) as u8)
            .collect()
    };
    let packed = |dt: &Datatype, count: usize, buf: &[u8]| -> Vec<u8> {
        let mut out = vec![0u8; dt.size() * count];
        buf::pack(SendBuf::typed(buf, count, dt).unwrap(), &mut out, &mut 0).unwrap();
        out
    };
    let bufs: Vec<Vec<u8>> = cases
        .iter()
        .enumerate()
        .map(|(i, &(s, c, ..))| send_buf(s, c, i))
        .collect();
    buf::scope(|sc| {
        let mut sends = Vec::new();
        for (i, &(sdt, scount, rdt, rcount, want, text)) in cases.iter().enumerate() {
            let tag = 100 + i as i32;
            let what = format!(
                "case {i}: {scount} x {:?} into {rcount} x {:?}",
                sdt.signature(),
                rdt.signature()
            );
            if rank == src {
                sends.push(
                    pt2pt::isend(
                        sc,
                        world,
                        SendBuf::typed(&bufs[i], scount, sdt).unwrap(),
                        dst,
                        tag,
                        SendMode::Standard,
                    )
                    .unwrap(),
                );
            }
            if rank != dst {
                continue;
            }
            let mut got = vec![SENTINEL; send_buf(rdt, rcount, 0).len()];
            let res = pt2pt::recv_typed(
                world,
                RecvBuf::typed(as_bytes_mut(&mut got[..]), rcount, rdt).unwrap(),
                src,
                tag,
            );
            let sent = packed(sdt, scount, &bufs[i]);
            let want = if want == Type && !checking {
                Fine
            } else {
                want
            };
            match (want, res) {
                (Fine, Ok(st)) => {
                    check!(
                        rank,
                        st.count_bytes == sent.len(),
                        "{what}: count {} of {}",
                        st.count_bytes,
                        sent.len()
                    );
                    check!(
                        rank,
                        packed(rdt, rcount, &got)[..sent.len()] == sent[..],
                        "{what}: data differs"
                    );
                }
                (Type, Err(e)) => {
                    check!(
                        rank,
                        e.class == ErrorClass::Type,
                        "{what}: wanted MPI_ERR_TYPE, got {e}"
                    );
                    let head = format!("MPI_Recv: type signature mismatch: the message from rank {src} (tag {tag}) ");
                    check!(
                        rank,
                        e.message.starts_with(&head) && e.message.contains(text),
                        "{what}: message: {}",
                        e.message
                    );
                    check!(
                        rank,
                        got.iter().all(|&b| b == SENTINEL),
                        "{what}: data delivered despite the mismatch"
                    );
                }
                (Truncate, Err(e)) => check!(
                    rank,
                    e.class == ErrorClass::Truncate,
                    "{what}: wanted MPI_ERR_TRUNCATE, got {e}"
                ),
                (want, res) => check!(rank, false, "{what}: wanted {want:?}, got {res:?}"),
            }
        }
        let mut statuses = vec![Status::EMPTY; sends.len()];
        pt2pt::waitall(&mut sends, &mut statuses).unwrap();
    });
    barrier(world);
}
