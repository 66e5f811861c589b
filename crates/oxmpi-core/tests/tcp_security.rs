//! Hostile inputs against the TCP transport, on 127.0.0.1 only, while a legitimate
//! pair of transports keeps exchanging packets (checked for order and content).
//!
//! Rank 0 (the victim) and rank 1 run in a driver thread; the test thread attacks rank
//! 0's listening socket: clients without the secret, with a wrong secret, a replayed
//! handshake, and (after a valid handshake done by a helper that knows the secret, as
//! ranks 2..) malformed, oversized, truncated and random frames.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

use oxmpi_core::transport::tcp::{wire, TcpTransport, MAX_PACKET};

const SECRET: &[u8] = b"the job secret for tcp_security";
const NRANKS: u32 = 16;

fn lo() -> IpAddr {
    IpAddr::V4(Ipv4Addr::LOCALHOST)
}

/// Deterministic xorshift.
/// Legitimate packet `seq` from `from`: mixed sizes, content derived from both.
fn packet(from: u32, seq: u64) -> Vec<u8> {
    let mut rng = Rng::new(seq.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (from as u64 + 7));
    // Mostly small, sometimes large (cheap enough for a debug build on two cores, so
    // that the victim keeps polling promptly).
    let len = match rng.index(64) {
        0 => MAX_PACKET,
        1..=4 => rng.index(16 * 1024),
        _ => rng.index(100),
    };
    let mut v: Vec<u8> = (0..len)
        .map(|i| (i as u64 ^ seq ^ ((from as u64) << 4)) as u8)
        .collect();
    if len >= 8 {
        v[..8].copy_from_slice(&seq.to_le_bytes());
    }
    v
}

struct DriverResult {
    exchanged: [u64; 2],
    rejected: u64,
    failed: Vec<(u32, String)>,
    stray: u64,
}

/// Runs ranks 0 and 1 exchanging ordered packets until `stop`, then drains.
fn drive(mut t0: TcpTransport, mut t1: TcpTransport, stop: Arc<AtomicBool>) -> DriverResult {
    let mut sent = [0u64; 2];
    let mut recv = [0u64; 2];
    let mut stray = 0u64;
    let mut drain_deadline = None;
    loop {
        let stopping = stop.load(Ordering::Relaxed);
        for (me, t) in [(0u32, &mut t0), (1u32, &mut t1)] {
            let peer = 1 - me;
            // Keep a window of packets in flight.
            while !stopping && sent[me as usize] < recv[peer as usize] + 16 {
                let p = packet(me, sent[me as usize]);
                if !t.try_push(peer, |b| {
                    b[..p.len()].copy_from_slice(&p);
                    p.len()
                }) {
                    break;
                }
                sent[me as usize] += 1;
            }
            t.poll();
            let readable: Vec<u32> = t.readable_peers().collect();
            for from in readable {
                if from == peer {
                    let r = &mut recv[me as usize];
                    while t.try_pop(from, |p| {
                        assert!(
                            p == packet(from, *r),
                            "rank {me}: packet {} from {from} wrong or out of order",
                            *r
                        );
                    }) {
                        *r += 1;
                    }
                } else {
                    // Packets a hostile (but authenticated) test client got through.
                    while t.try_pop(from, |_| {}) {
                        stray += 1;
                    }
                }
            }
            for (r, why) in t.failed_peers() {
                assert!(*r >= 2, "rank {me}: the legitimate peer {r} failed: {why}");
            }
        }
        if stopping {
            let d = *drain_deadline.get_or_insert(Instant::now() + Duration::from_secs(30));
            if recv[0] == sent[1] && recv[1] == sent[0] {
                break;
            }
            assert!(
                Instant::now() < d,
                "legitimate packets lost: sent {sent:?}, received {recv:?}"
            );
        }
    }
    assert!(t1.failed_peers().is_empty());
    DriverResult {
        exchanged: recv,
        rejected: t0.rejected_connections(),
        failed: t0.failed_peers().to_vec(),
        stray,
    }
}

fn connect(ep: &str) -> TcpStream {
    let s = TcpStream::connect(ep).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// Asserts the server closes `s` (EOF or reset) within the read timeout, ignoring
/// whatever it still sends (a hello, say).
fn expect_closed(mut s: TcpStream, what: &str) {
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
                ) =>
            {
                return
            }
            Err(e) => panic!("{what}: connection not closed by the victim: {e}"),
        }
    }
}

fn read_hello(s: &mut TcpStream) -> wire::ServerHello {
    let mut b = [0u8; wire::SERVER_HELLO_LEN];
    s.read_exact(&mut b).unwrap();
    wire::parse_server_hello(&b).unwrap()
}

/// A full client handshake as `rank` with `secret`; returns the stream and the client
/// message sent, or `None` if the server did not accept (closed the connection).
fn handshake(
    ep: &str,
    rank: u32,
    secret: &[u8],
    cnonce: [u8; 32],
) -> (TcpStream, [u8; wire::CLIENT_MSG_LEN], Option<bool>) {
    let mut s = connect(ep);
    let hello = read_hello(&mut s);
    assert_eq!(hello.rank, 0);
    let msg = wire::encode_client_msg(secret, rank, 0, &hello.nonce, &cnonce);
    s.write_all(&msg).unwrap();
    let mut v = [0u8; wire::VERDICT_LEN];
    let verdict = match s.read_exact(&mut v) {
        Ok(()) => Some(
            wire::parse_verdict(SECRET, &v, rank, 0, &cnonce, &hello.nonce)
                .expect("the server proves the secret"),
        ),
        Err(_) => None,
    };
    (s, msg, verdict)
}

#[test]
fn hostile_clients_and_frames_leave_the_job_unharmed() {
    let t0 = TcpTransport::new(0, NRANKS, SECRET, lo()).unwrap();
    let mut t1 = TcpTransport::new(1, NRANKS, SECRET, lo()).unwrap();
    let ep = t0.endpoint();
    let mut t0 = t0;
    t0.set_endpoint(1, &t1.endpoint()).unwrap();
    t1.set_endpoint(0, &ep).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let driver = {
        let stop = stop.clone();
        thread::spawn(move || drive(t0, t1, stop))
    };
    let mut rng = Rng::new(0x5eed);
    let mut expected_rejections = 0u64;

    // 1. No secret: junk before the hello, junk instead of the client message, a
    //    correctly sized message of random bytes, an immediate close.
    let mut s = connect(&ep);
    s.write_all(&rng.bytes(500)).unwrap();
    expect_closed(s, "junk before hello");
    let mut s = connect(&ep);
    read_hello(&mut s);
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    s.write_all(&rng.bytes(100)).unwrap();
    expect_closed(s, "http junk");
    let mut s = connect(&ep);
    read_hello(&mut s);
    let mut m = rng.bytes(wire::CLIENT_MSG_LEN);
    m[..8].copy_from_slice(&wire::MAGIC);
    s.write_all(&m).unwrap();
    expect_closed(s, "random client message");
    let s = connect(&ep);
    drop(s);
    expected_rejections += 4;

    // 2. A wrong secret: the full protocol, but the MAC does not verify.
    let (s, _, verdict) = handshake(&ep, 2, b"not the job secret", [3; 32]);
    assert_eq!(verdict, None, "wrong secret accepted");
    expect_closed(s, "wrong secret");
    expected_rejections += 1;

    // 3. Replay: a valid client message captured from one connection (accepted as rank
    //    2), replayed verbatim on a new connection: the server's nonce differs, rejected.
    let (mut good, captured, verdict) = handshake(&ep, 2, SECRET, [4; 32]);
    assert_eq!(verdict, Some(true));
    let mut s = connect(&ep);
    read_hello(&mut s);
    s.write_all(&captured).unwrap();
    expect_closed(s, "replayed handshake");
    expected_rejections += 1;
    // The genuine connection is fine: a packet, then a clean goodbye (not a failure).
    good.write_all(&wire::encode_frame_header(wire::KIND_DATA, 5))
        .unwrap();
    good.write_all(b"hello").unwrap();
    good.write_all(&wire::encode_frame_header(wire::KIND_BYE, 0))
        .unwrap();
    drop(good);

    // 4. Hostile frames after a valid handshake (helper knows the secret), each as
    //    another rank: the connection is closed and the rank reported failed.
    let mut hostile: Vec<(u32, Vec<u8>, &str)> = Vec::new();
    let mut r = 3u32;
    let mut add = |bytes: Vec<u8>, what: &'static str| {
        hostile.push((r, bytes, what));
        r += 1;
    };
    add(
        wire::encode_frame_header(wire::KIND_DATA, MAX_PACKET as u32 + 1).to_vec(),
        "oversized length",
    );
    add(
        wire::encode_frame_header(wire::KIND_DATA, u32::MAX).to_vec(),
        "length u32::MAX",
    );
    add(
        wire::encode_frame_header(9, 4)
            .iter()
            .chain(b"abcd")
            .copied()
            .collect(),
        "unknown kind",
    );
    add(
        vec![1, 0, 7, 0, 4, 0, 0, 0, 1, 2, 3, 4],
        "reserved bytes set",
    );
    let mut trunc = wire::encode_frame_header(wire::KIND_DATA, 1000).to_vec();
    trunc.extend_from_slice(&[0xab; 10]);
    add(trunc, "truncated frame");
    add(
        wire::encode_frame_header(wire::KIND_DATA, 3).to_vec(),
        "truncated header+payload",
    );
    add(vec![1, 0, 0], "truncated header");
    let mut after_bye = wire::encode_frame_header(wire::KIND_DATA, 2).to_vec();
    after_bye.extend_from_slice(b"ok");
    after_bye.extend_from_slice(&wire::encode_frame_header(wire::KIND_BYE, 0));
    after_bye.extend_from_slice(&wire::encode_frame_header(wire::KIND_DATA, 0));
    add(after_bye, "frame after goodbye");
    add(rng.bytes(4096), "random bytes");
    add(Vec::new(), "closed without goodbye");
    let hostile_ranks: Vec<u32> = hostile.iter().map(|h| h.0).collect();
    assert!(*hostile_ranks.last().unwrap() < NRANKS);
    for (rank, bytes, what) in &hostile {
        let (mut s, _, verdict) = handshake(&ep, *rank, SECRET, [*rank as u8; 32]);
        assert_eq!(verdict, Some(true), "{what}");
        s.write_all(bytes).unwrap();
        if what.starts_with("truncated") || what.starts_with("closed") {
            s.shutdown(std::net::Shutdown::Write).unwrap();
        }
        expect_closed(s, what);
    }

    // 5. Too many unauthenticated connections at once: the excess is refused, memory
    //    stays bounded; all of them are closed by the test afterwards.
    let idle: Vec<TcpStream> = (0..80).map(|_| connect(&ep)).collect();
    let t = Instant::now();
    let mut refused = 0;
    // Kept open while reading, so none of them leaves the server's pending set early.
    for mut s in &idle {
        let mut b = [0u8; wire::SERVER_HELLO_LEN];
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        match s.read_exact(&mut b) {
            Ok(()) => {}
            Err(_) => refused += 1,
        }
    }
    assert!(
        refused >= 80 - oxmpi_core::transport::tcp::MAX_PENDING,
        "refused {refused}"
    );
    assert!(t.elapsed() < Duration::from_secs(30));
    drop(idle);
    expected_rejections += 80;
    // Wait until the server has noticed they are gone and takes new connections again.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(
            Instant::now() < deadline,
            "the server never recovered from the flood"
        );
        let mut s = connect(&ep);
        let mut b = [0u8; wire::SERVER_HELLO_LEN];
        let ok = s.read_exact(&mut b).is_ok();
        drop(s);
        expected_rejections += 1;
        if ok {
            break;
        }
        thread::sleep(Duration::from_millis(10));
    }

    // 6. Random network inputs: 200 connections sending random bytes (random sizes,
    //    sometimes after reading the hello, sometimes closing half-way).
    for i in 0..200 {
        let mut s = connect(&ep);
        if i % 2 == 0 {
            read_hello(&mut s);
        }
        let n = [1, 7, 43, 79, 80, 81, 200, 5000][rng.index(8)];
        let mut bytes = rng.bytes(n);
        if rng.index(4) == 0 && n >= 8 {
            bytes[..8].copy_from_slice(&wire::MAGIC);
        }
        let _ = s.write_all(&bytes);
        if n < wire::CLIENT_MSG_LEN {
            s.shutdown(std::net::Shutdown::Write).unwrap();
        }
        expect_closed(s, "random input");
        expected_rejections += 1;
    }

    stop.store(true, Ordering::Relaxed);
    let res = driver
        .join()
        .expect("the driver (legitimate pair) panicked");
    assert!(
        res.exchanged[0] > 100 && res.exchanged[1] > 100,
        "legitimate traffic: {:?}",
        res.exchanged
    );
    assert!(
        res.rejected >= expected_rejections,
        "rejected {} < {expected_rejections}",
        res.rejected
    );
    let mut failed: Vec<u32> = res.failed.iter().map(|f| f.0).collect();
    failed.sort();
    assert_eq!(failed, hostile_ranks, "failed peers: {:?}", res.failed);
    assert!(!failed.contains(&2), "a clean goodbye is not a failure");
    for (r, why) in &res.failed {
        let (_, _, what) = hostile.iter().find(|h| h.0 == *r).unwrap();
        eprintln!("rank {r} ({what}): {why}");
    }
    // "hello" from rank 2 and "ok" from the after-goodbye case got through.
    assert!(res.stray >= 2, "stray {}", res.stray);
}

/// 10k random inputs to the frame decoder and the handshake parsers: no panic, no
/// over-allocation, and nothing but genuine messages verify.
#[test]
fn bounded_random_inputs_to_decoder_and_parsers() {
    let mut rng = Rng::new(0xdecaf);
    let (sn, cn) = ([5u8; 32], [6u8; 32]);
    let valid_client = wire::encode_client_msg(SECRET, 2, 0, &sn, &cn);
    let valid_verdict = wire::encode_verdict(SECRET, true, 2, 0, &cn, &sn);
    let mut packets = 0usize;
    let mut errors = 0usize;
    for i in 0..10_000 {
        let n = match rng.index(4) {
            0 => rng.index(16),
            1 => rng.index(100),
            2 => rng.index(2000),
            _ => rng.index(20_000),
        };
        let mut input = rng.bytes(n);
        // Bias towards plausible headers so payload paths are exercised too.
        if i % 3 == 0 && n >= 8 {
            input[0] = 1 + (rng.index(2) as u8);
            input[1..4].fill(0);
            let len = rng.index(n.max(1) * 2) as u32;
            input[4..8].copy_from_slice(&len.to_le_bytes());
        }
        let mut dec = wire::FrameDecoder::new();
        let mut rest = &input[..];
        let mut result = Ok(());
        while !rest.is_empty() && result.is_ok() {
            let k = (rng.index(3000) + 1).min(rest.len());
            result = dec.feed(&rest[..k], |f| {
                if let wire::Frame::Packet(p) = f {
                    assert!(p.len() <= MAX_PACKET);
                    packets += 1;
                }
            });
            rest = &rest[k..];
        }
        errors += result.is_err() as usize;

        let _ = wire::parse_server_hello(&input[..n.min(wire::SERVER_HELLO_LEN + rng.index(2))]);
        if let Ok(m) = wire::parse_client_msg(&input[..n.min(wire::CLIENT_MSG_LEN)]) {
            assert!(!wire::verify_client_msg(SECRET, &m, &sn));
        }
        assert!(
            wire::parse_verdict(SECRET, &input[..n.min(wire::VERDICT_LEN)], 2, 0, &cn, &sn)
                .is_err()
        );

        // Mutations of genuine messages never verify.
        let mut c = valid_client;
        let at = rng.index(c.len());
        c[at] ^= 1 << rng.index(8);
        match wire::parse_client_msg(&c) {
            Ok(m) => assert!(
                !wire::verify_client_msg(SECRET, &m, &sn),
                "mutated byte {at} verified"
            ),
            Err(_) => assert!(at < 8),
        }
        let mut v = valid_verdict;
        let at = rng.index(v.len());
        v[at] ^= 1 << rng.index(8);
        assert!(
            wire::parse_verdict(SECRET, &v, 2, 0, &cn, &sn).is_err(),
            "mutated verdict byte {at} verified"
        );
    }
    assert!(
        packets > 0 && errors > 0,
        "packets {packets}, errors {errors}"
    );
}
