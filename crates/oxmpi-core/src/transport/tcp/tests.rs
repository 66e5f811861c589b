//! Unit tests of the TCP transport: transports in one process, on 127.0.0.1.

use super::*;
use crate::buf::{ActiveBuf, Landing, RawBuf};
use std::net::Ipv4Addr;

#[path = "../../../tests/common/rng.rs"]
mod rng;
use rng::Rng;

const SECRET: &[u8] = b"unit-test job secret";

fn lo() -> IpAddr {
    IpAddr::V4(Ipv4Addr::LOCALHOST)
}

/// `n` transports of one job, every endpoint known to every other.
fn job(n: u32) -> Vec<TcpTransport> {
    let mut ts: Vec<TcpTransport> = (0..n)
        .map(|r| TcpTransport::new(r, n, SECRET, lo()).unwrap())
        .collect();
    let eps: Vec<String> = ts.iter().map(|t| t.endpoint()).collect();
    for t in &mut ts {
        for (r, ep) in eps.iter().enumerate() {
            if r as u32 != t.me {
                t.set_endpoint(r as u32, ep).unwrap();
            }
        }
    }
    ts
}

/// Polls every transport until `done` holds (panics after 30 s).
fn pump(ts: &mut [TcpTransport], mut done: impl FnMut(&mut [TcpTransport]) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done(ts) {
        assert!(Instant::now() < deadline, "timed out");
        for t in ts.iter_mut() {
            t.poll();
            assert_eq!(t.failed_peer(), None);
        }
    }
}

fn push_bytes(t: &mut TcpTransport, to: u32, data: &[u8]) -> bool {
    t.try_push(to, |buf| {
        buf[..data.len()].copy_from_slice(data);
        data.len()
    })
}

fn pop_vec(t: &mut TcpTransport, from: u32) -> Option<Vec<u8>> {
    let mut out = None;
    t.try_pop(from, |p| out = Some(p.to_vec()));
    out
}

/// Deterministic xorshift.
/// Packet `seq` from `from`: a size drawn from `seq`, bytes derived from both.
fn packet(from: u32, seq: u64) -> Vec<u8> {
    let mut rng = Rng::new(seq.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (from as u64 + 1));
    let len = match rng.next_u64() % 8 {
        0 => MAX_PACKET,
        1 | 2 => (rng.next_u64() as usize) % (MAX_PACKET + 1),
        3 => 0,
        _ => (rng.next_u64() as usize) % 200,
    };
    let mut v = vec![0u8; len];
    for (i, b) in v.iter_mut().enumerate() {
        *b = (i as u64 ^ seq ^ (from as u64) << 5) as u8;
    }
    if len >= 12 {
        v[..8].copy_from_slice(&seq.to_le_bytes());
        v[8..12].copy_from_slice(&from.to_le_bytes());
    }
    v
}

fn established(t: &TcpTransport) -> usize {
    t.peers.iter().filter(|p| p.conn.is_some()).count()
}

#[test]
fn transport_is_send() {
    fn is_send<T: Send>() {}
    is_send::<TcpTransport>();
}

#[test]
fn new_validates_arguments() {
    assert!(TcpTransport::new(2, 2, SECRET, lo()).is_err());
    assert!(TcpTransport::new(0, 2, b"", lo()).is_err());
    assert!(TcpTransport::new(0, 2, SECRET, IpAddr::V4(Ipv4Addr::UNSPECIFIED)).is_err());
    let mut t = TcpTransport::new(0, 2, SECRET, lo()).unwrap();
    assert!(t.endpoint().starts_with("127.0.0.1:"));
    assert!(t.set_endpoint(0, "127.0.0.1:1").is_err());
    assert!(t.set_endpoint(5, "127.0.0.1:1").is_err());
    assert!(t.set_endpoint(1, "not an address").is_err());
    assert!(t.set_endpoint(1, "127.0.0.1:1").is_ok());
}

#[test]
fn two_ranks_exchange_both_ways() {
    let mut ts = job(2);
    // Only the higher rank sends first: it connects, the lower accepts.
    assert!(push_bytes(&mut ts[1], 0, b"hello from 1"));
    pump(&mut ts, |ts| ts[0].readable_peers().count() == 1);
    assert_eq!(ts[0].readable_peers().collect::<Vec<_>>(), vec![1]);
    assert_eq!(pop_vec(&mut ts[0], 1).unwrap(), b"hello from 1");
    assert!(pop_vec(&mut ts[0], 1).is_none());
    assert!(push_bytes(&mut ts[0], 1, b"reply from 0"));
    pump(&mut ts, |ts| ts[1].readable_peers().count() == 1);
    assert_eq!(pop_vec(&mut ts[1], 0).unwrap(), b"reply from 0");
    assert_eq!((established(&ts[0]), established(&ts[1])), (1, 1));
    assert!(
        ts[0].peers[1].attempt.is_none(),
        "the lower rank never connected"
    );
    assert!(ts[0].fds().len() >= 2);
}

#[test]
fn simultaneous_connect_keeps_one_connection_and_order() {
    for round in 0..5 {
        let mut ts = job(2);
        // Both sides push before anyone polls: both start connecting.
        for seq in 0..50u64 {
            assert!(push_bytes(&mut ts[0], 1, &packet(0, seq)));
            assert!(push_bytes(&mut ts[1], 0, &packet(1, seq)));
        }
        assert!(ts[0].peers[1].attempt.is_some() && ts[1].peers[0].attempt.is_some());
        let mut got = [0u64; 2];
        pump(&mut ts, |ts| {
            for me in 0..2u32 {
                let from = 1 - me;
                while let Some(p) = pop_vec(&mut ts[me as usize], from) {
                    assert_eq!(
                        p,
                        packet(from, got[me as usize]),
                        "round {round}: rank {me} packet {}",
                        got[me as usize]
                    );
                    got[me as usize] += 1;
                }
            }
            got == [50, 50]
        });
        pump(&mut ts, |ts| ts[1].peers[0].attempt.is_none());
        assert_eq!((established(&ts[0]), established(&ts[1])), (1, 1));
        // The higher rank's attempt lost the collision.
        assert!(ts[1].peers[0].await_incoming, "round {round}");
        // Its connection is the lower rank's: same socket pair seen from both sides.
        let a = ts[0].peers[1].conn.as_ref().unwrap();
        let b = ts[1].peers[0].conn.as_ref().unwrap();
        assert_eq!(
            a.stream.local_addr().unwrap(),
            b.stream.peer_addr().unwrap()
        );
        assert_eq!(a.stream.peer_addr().unwrap().to_string(), ts[1].endpoint());
        assert_eq!(
            ts[0].rejected_connections(),
            0,
            "a collision is not a logged rejection"
        );
    }
}

#[test]
#[allow(clippy::needless_range_loop)]
fn three_ranks_all_to_all_in_order_with_back_pressure() {
    let mut ts = job(3);
    const N: u64 = 300;
    let mut next_send = [[0u64; 3]; 3];
    let mut next_recv = [[0u64; 3]; 3];
    let mut refused = 0u64;
    pump(&mut ts, |ts| {
        for me in 0..3usize {
            for to in 0..3usize {
                if to == me {
                    continue;
                }
                while next_send[me][to] < N {
                    if !push_bytes(
                        &mut ts[me],
                        to as u32,
                        &packet(me as u32, next_send[me][to]),
                    ) {
                        refused += 1;
                        break;
                    }
                    next_send[me][to] += 1;
                }
            }
            let readable: Vec<u32> = ts[me].readable_peers().collect();
            for from in readable {
                while let Some(p) = pop_vec(&mut ts[me], from) {
                    let seq = next_recv[me][from as usize];
                    assert_eq!(
                        p.len(),
                        packet(from, seq).len(),
                        "rank {me} from {from} seq {seq}"
                    );
                    assert!(
                        p == packet(from, seq),
                        "rank {me} from {from} seq {seq}: wrong bytes"
                    );
                    next_recv[me][from as usize] += 1;
                }
            }
        }
        (0..3).all(|me| (0..3).all(|f| f == me || next_recv[me][f] == N))
    });
    // ~75 MB went each way: the per-peer bound must have pushed back.
    assert!(refused > 0, "no back-pressure seen");
    for t in &ts {
        assert_eq!(established(t), 2);
    }
}

#[test]
fn back_pressure_then_drain() {
    let mut ts = job(2);
    assert!(push_bytes(&mut ts[0], 1, b"x"));
    pump(&mut ts, |ts| pop_vec(&mut ts[1], 0).is_some());
    // Rank 1 stops polling: rank 0 fills the socket buffers, then its queue.
    let big = vec![7u8; MAX_PACKET];
    let mut pushed = 0u64;
    loop {
        ts[0].poll();
        if !push_bytes(&mut ts[0], 1, &big) {
            break;
        }
        pushed += 1;
        assert!(pushed < 2000, "never pushed back");
    }
    assert!(pushed as usize * MAX_PACKET >= SEND_BOUND);
    assert!(ts[0].peers[1].queued() >= SEND_BOUND);
    assert!(!push_bytes(&mut ts[0], 1, b"y"), "still full");
    // Drain: everything arrives, then the queue accepts again.
    let mut got = 0u64;
    pump(&mut ts, |ts| {
        while let Some(p) = pop_vec(&mut ts[1], 0) {
            assert_eq!(p.len(), MAX_PACKET);
            got += 1;
        }
        got == pushed
    });
    assert!(push_bytes(&mut ts[0], 1, b"again"));
    pump(&mut ts, |ts| {
        pop_vec(&mut ts[1], 0).is_some_and(|p| p == b"again")
    });
}

#[test]
fn receiver_bound_pauses_reading() {
    let mut ts = job(2);
    let big = vec![1u8; MAX_PACKET];
    let mut pushed = 0u64;
    // Keep pushing and polling both without popping: rank 1 must stop reading at the bound.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut idle = 0;
    while Instant::now() < deadline && idle < 500 {
        let mut did = push_bytes(&mut ts[0], 1, &big);
        pushed += did as u64;
        did |= ts[0].poll();
        did |= ts[1].poll();
        idle = if did { 0 } else { idle + 1 };
    }
    assert!(idle >= 500, "the sender never stalled");
    assert!(pushed as usize * MAX_PACKET > RECV_BOUND + SEND_BOUND);
    assert!(ts[1].peers[0].recv_bytes <= RECV_BOUND + MAX_PACKET + SCRATCH);
    let mut got = 0u64;
    pump(&mut ts, |ts| {
        while pop_vec(&mut ts[1], 0).is_some() {
            got += 1;
        }
        got == pushed
    });
}

#[test]
fn dead_peer_is_reported_and_clean_shutdown_is_not() {
    // A peer that vanishes without a goodbye is a failed peer.
    let mut ts = job(2);
    assert!(push_bytes(&mut ts[0], 1, b"ping"));
    pump(&mut ts, |ts| pop_vec(&mut ts[1], 0).is_some());
    let t1 = ts.pop().unwrap();
    drop(t1);
    let deadline = Instant::now() + Duration::from_secs(10);
    while ts[0].failed_peer().is_none() {
        assert!(Instant::now() < deadline);
        ts[0].poll();
    }
    let (r, why) = ts[0].failed_peer().unwrap();
    assert_eq!(r, 1);
    assert!(why.contains("closed"), "{why}");
    assert!(!push_bytes(&mut ts[0], 1, b"to the dead"));

    // Both sides shutting down: goodbyes, no failure, data queued before is delivered.
    let mut ts = job(2);
    assert!(push_bytes(&mut ts[0], 1, b"ping"));
    pump(&mut ts, |ts| pop_vec(&mut ts[1], 0).is_some());
    assert!(push_bytes(&mut ts[1], 0, b"last words"));
    let mut t1 = ts.pop().unwrap();
    let mut t0 = ts.pop().unwrap();
    let h = std::thread::spawn(move || {
        let clean = t1.shutdown(Duration::from_secs(10));
        (clean, t1.failed_peer())
    });
    let clean0 = t0.shutdown(Duration::from_secs(10));
    let (clean1, failed1) = h.join().unwrap();
    assert!(clean0 && clean1);
    assert_eq!((t0.failed_peer(), failed1), (None, None));
    assert_eq!(pop_vec(&mut t0, 1).unwrap(), b"last words");
    assert!(!push_bytes(&mut t0, 1, b"after shutdown"));
}

#[test]
fn unreachable_peer_fails_after_the_deadline_only() {
    // A port nobody listens on: attempts are retried (no failure yet right away).
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ep = l.local_addr().unwrap().to_string();
    drop(l);
    let mut t = TcpTransport::new(0, 2, SECRET, lo()).unwrap();
    t.set_endpoint(1, &ep).unwrap();
    assert!(push_bytes(&mut t, 1, b"x"));
    for _ in 0..100 {
        t.poll();
    }
    assert_eq!(t.failed_peer(), None);
    // Pretend the deadline passed.
    t.peers[1].first_try = Some(Instant::now() - CONNECT_DEADLINE);
    t.peers[1].next_try = None;
    let deadline = Instant::now() + Duration::from_secs(10);
    while t.failed_peer().is_none() {
        assert!(Instant::now() < deadline);
        t.poll();
    }
    assert!(t.failed_peer().unwrap().1.contains("cannot connect"));
}

#[test]
fn frame_decoder_handles_any_chunking() {
    let mut stream = Vec::new();
    let pkts: Vec<Vec<u8>> = (0..40).map(|s| packet(3, s)).collect();
    for p in &pkts {
        stream.extend_from_slice(&wire::encode_frame_header(wire::KIND_DATA, p.len() as u32));
        stream.extend_from_slice(p);
    }
    stream.extend_from_slice(&wire::encode_frame_header(wire::KIND_BYE, 0));
    let mut rng = Rng::new(42);
    for _ in 0..20 {
        let mut d = wire::FrameDecoder::new();
        let mut out = Vec::new();
        let mut rest = &stream[..];
        while !rest.is_empty() {
            let n = ((rng.next_u64() % 70_000) as usize + 1).min(rest.len());
            // Sometimes go through the direct path.
            if let Some(buf) = d.direct_buf(1) {
                let k = buf.len().min(n);
                buf[..k].copy_from_slice(&rest[..k]);
                d.advance_direct(k, |f| out.push(f));
                rest = &rest[k..];
                continue;
            }
            d.feed(&rest[..n], |f| out.push(f)).unwrap();
            rest = &rest[n..];
        }
        assert!(d.at_boundary() && d.saw_bye());
        assert_eq!(out.len(), pkts.len() + 1);
        for (f, p) in out.iter().zip(&pkts) {
            assert_eq!(f, &wire::Frame::Packet(p.clone()));
        }
        assert_eq!(out.last(), Some(&wire::Frame::Bye));
    }
}

#[test]
fn frame_decoder_rejects_bad_headers() {
    let bad: Vec<[u8; 8]> = vec![
        wire::encode_frame_header(wire::KIND_DATA, MAX_PACKET as u32 + 1),
        wire::encode_frame_header(wire::KIND_DATA, u32::MAX),
        wire::encode_frame_header(0, 4),
        wire::encode_frame_header(3, 4),
        wire::encode_frame_header(wire::KIND_BYE, 1),
        [1, 1, 0, 0, 4, 0, 0, 0],
    ];
    for h in bad {
        let mut d = wire::FrameDecoder::new();
        assert!(
            d.feed(&h, |_| panic!("no frame expected")).is_err(),
            "{h:?}"
        );
    }
    let mut d = wire::FrameDecoder::new();
    d.feed(&wire::encode_frame_header(wire::KIND_BYE, 0), |_| {})
        .unwrap();
    assert!(
        d.feed(&wire::encode_frame_header(wire::KIND_DATA, 0), |_| {})
            .is_err(),
        "data after goodbye"
    );
    let mut d = wire::FrameDecoder::new();
    d.feed(
        &wire::encode_frame_header(wire::KIND_DATA, MAX_PACKET as u32),
        |_| {},
    )
    .unwrap();
    assert!(!d.at_boundary(), "a truncated frame is not at a boundary");
}

#[test]
fn recycled_payload_buffers_carry_only_the_new_frame() {
    // A large frame, its buffer handed back, then frames of other sizes (smaller, then
    // larger than the recycled buffer, then small): each comes out with exactly its own
    // bytes, nothing left over from the buffer's previous use.
    let mut d = wire::FrameDecoder::new();
    let frame = |len: usize, fill: u8| {
        let mut f = wire::encode_frame_header(wire::KIND_DATA, len as u32).to_vec();
        f.extend((0..len).map(|i| fill ^ (i % 251) as u8));
        f
    };
    let mut prev: Option<(usize, usize)> = None; // (address, length) of the recycled buffer
    for (len, fill) in [
        (100_000, 1u8),
        (20_000, 2),
        (150_000, 3),
        (40, 4),
        (MAX_PACKET, 5),
    ] {
        let mut got = Vec::new();
        d.feed(&frame(len, fill), |f| got.push(f)).unwrap();
        assert_eq!(got.len(), 1, "one frame of {len} bytes");
        let wire::Frame::Packet(p) = got.pop().unwrap() else {
            panic!("not a packet")
        };
        assert_eq!(p.len(), len);
        assert!(
            p.iter()
                .enumerate()
                .all(|(i, &b)| b == fill ^ (i % 251) as u8),
            "frame of {len} bytes corrupted"
        );
        if let Some((addr, plen)) = prev {
            if len >= wire::RECYCLE_MIN && len <= plen {
                assert_eq!(
                    p.as_ptr() as usize,
                    addr,
                    "a large frame reuses the recycled buffer"
                );
            }
        }
        prev = (p.len() >= wire::RECYCLE_MIN)
            .then(|| (p.as_ptr() as usize, p.len()))
            .or(prev);
        d.recycle(p);
    }
}

#[test]
fn handshake_messages_round_trip_and_bind_their_inputs() {
    let (sn, cn) = ([1u8; 32], [2u8; 32]);
    let hello = wire::encode_server_hello(7, &sn);
    assert_eq!(
        wire::parse_server_hello(&hello).unwrap(),
        wire::ServerHello { rank: 7, nonce: sn }
    );
    let m = wire::encode_client_msg(SECRET, 3, 7, &sn, &cn);
    let msg = wire::parse_client_msg(&m).unwrap();
    assert_eq!((msg.rank, msg.server_rank, msg.nonce), (3, 7, cn));
    assert!(wire::verify_client_msg(SECRET, &msg, &sn));
    assert!(!wire::verify_client_msg(b"other secret", &msg, &sn));
    assert!(
        !wire::verify_client_msg(SECRET, &msg, &[9u8; 32]),
        "another server nonce (replay)"
    );
    let mut forged = msg;
    forged.rank = 4;
    assert!(
        !wire::verify_client_msg(SECRET, &forged, &sn),
        "the rank is authenticated"
    );
    for accept in [false, true] {
        let v = wire::encode_verdict(SECRET, accept, 3, 7, &cn, &sn);
        assert_eq!(wire::parse_verdict(SECRET, &v, 3, 7, &cn, &sn), Ok(accept));
        assert!(wire::parse_verdict(SECRET, &v, 3, 7, &[0u8; 32], &sn).is_err());
        assert!(wire::parse_verdict(b"x", &v, 3, 7, &cn, &sn).is_err());
        let mut flipped = v;
        flipped[0] ^= 1;
        assert!(
            wire::parse_verdict(SECRET, &flipped, 3, 7, &cn, &sn).is_err(),
            "the verdict is authenticated"
        );
    }
}

#[test]
fn landed_payloads_go_straight_to_the_sink_in_any_chunking() {
    // Frames of every kind of size, fed in random chunks: the lander is asked once per
    // payload of at least HEAD + min bytes, with exactly the first bytes in so far; it
    // takes every other one (by the first byte), copying what it got and naming where
    // the rest goes. Taken payloads come out as Landed with only their head in the
    // buffer and every byte in the sink; the others as ordinary packets; nothing is
    // written past a sink.
    const HEAD: usize = 16;
    const MIN: usize = 1000;
    let mut rng = Rng::new(7);
    for round in 0..40u64 {
        let lens = [
            5usize,
            HEAD,
            HEAD + MIN,
            70_000,
            3,
            MAX_PACKET,
            2_000,
            40_000,
        ];
        let mut stream = Vec::new();
        let mut want = Vec::new();
        for (k, &len) in lens.iter().enumerate() {
            let p: Vec<u8> = (0..len)
                .map(|i| (i as u64 * 31 + k as u64 + round) as u8)
                .collect();
            let mut p = p;
            if let Some(b) = p.first_mut() {
                *b = (k % 2) as u8; // 1: the lander takes it
            }
            stream.extend_from_slice(&wire::encode_frame_header(wire::KIND_DATA, len as u32));
            stream.extend_from_slice(&p);
            want.push(p);
        }
        // One sink per frame, with guard bytes after it.
        let mut sinks: Vec<Vec<u8>> = lens.iter().map(|&l| vec![0xee; l + 64]).collect();
        // Each sink lent as a receive's buffer is (alive for the test).
        let mut actives: Vec<ActiveBuf> = sinks
            .iter_mut()
            .map(|s| ActiveBuf::take(RawBuf::from_mut_slice(s)))
            .collect();
        let mut asked = Vec::new();
        let mut frame_no = 0usize;
        let mut d = wire::FrameDecoder::new();
        let mut out = Vec::new();
        let mut land = |got: &[u8], rest: usize| -> Option<Landing> {
            asked.push((got.len(), rest));
            assert!(got.len() >= HEAD && rest >= MIN);
            // Which frame: the one whose first bytes these are (matched by content).
            let k = want
                .iter()
                .position(|w| w.len() == got.len() + rest && w[..got.len()] == *got)?;
            if got[0] != 1 {
                return None;
            }
            actives[k].bytes_mut()[..got.len()].copy_from_slice(got);
            actives[k].landing(got.len(), rest)
        };
        let mut at = 0;
        while at < stream.len() {
            let n = ((rng.next_u64() % 90_000) as usize + 1).min(stream.len() - at);
            // Half the time read "from the socket" into the direct buffer, like poll.
            if rng.next_u64() % 2 == 0 {
                if let Some(buf) = d.direct_buf_head(MIN, HEAD) {
                    let m = n.min(buf.len());
                    buf[..m].copy_from_slice(&stream[at..at + m]);
                    d.advance_direct(m, |f| out.push(f));
                    at += m;
                    continue;
                }
            }
            d.feed_landing(&stream[at..at + n], HEAD, MIN, &mut land, |f| out.push(f))
                .unwrap();
            at += n;
        }
        assert!(d.at_boundary());
        assert_eq!(out.len(), lens.len());
        for (k, f) in out.into_iter().enumerate() {
            frame_no += 1;
            let w = &want[k];
            match f {
                wire::Frame::Landed { buf, len } => {
                    assert_eq!(w[0], 1, "frame {k} landed but was refused");
                    assert_eq!(len, w.len());
                    assert!(
                        buf.len() >= HEAD && buf.len() < len,
                        "frame {k} keeps only its head"
                    );
                    assert_eq!(&buf[..], &w[..buf.len()]);
                    assert_eq!(&sinks[k][..w.len()], &w[..], "frame {k}'s sink");
                    assert!(
                        sinks[k][w.len()..].iter().all(|&b| b == 0xee),
                        "past sink {k}"
                    );
                }
                wire::Frame::Packet(p) => {
                    assert!(w.len() < HEAD + MIN || w[0] != 1, "frame {k} should land");
                    assert_eq!(&p, w, "frame {k}");
                }
                wire::Frame::Bye => panic!("no goodbye was sent"),
            }
        }
        assert_eq!(frame_no, lens.len());
        // Asked once per large payload (70_000, MAX_PACKET, 2_000, 40_000, HEAD + MIN).
        assert_eq!(asked.len(), 5, "asked {asked:?}");
    }
}

#[test]
fn after_a_landed_medium_message_the_next_read_takes_what_the_socket_holds() {
    // A landed frame under RECYCLE_MIN leaves the next read asking for a whole staging
    // buffer (a ping-pong's next message comes in one read), as an ordinary packet of
    // that size does; a landed large one still has the next read ask for a header alone
    // (so its payload can land too).
    const HEAD: usize = 48;
    const MAX: usize = 64 * 1024;
    for (len, want) in [
        (4096 + HEAD, MAX),
        (8192 + HEAD, MAX),
        (64 * 1024 + HEAD, wire::FRAME_HEADER_LEN + HEAD),
    ] {
        let payload: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
        let mut stream = wire::encode_frame_header(wire::KIND_DATA, len as u32).to_vec();
        stream.extend_from_slice(&payload);
        let mut sink = vec![0u8; len];
        let mut active = ActiveBuf::take(RawBuf::from_mut_slice(&mut sink));
        let mut d = wire::FrameDecoder::new();
        let mut out = Vec::new();
        let mut land = |got: &[u8], rest: usize| -> Option<Landing> {
            active.bytes_mut()[..got.len()].copy_from_slice(got);
            active.landing(got.len(), rest)
        };
        d.feed_landing(&stream, HEAD, 1024, &mut land, |f| out.push(f))
            .unwrap();
        assert!(
            matches!(out.as_slice(), [wire::Frame::Landed { len: l, .. }] if *l == len),
            "the {len}-byte frame lands"
        );
        drop(out);
        active.landed();
        assert_eq!(sink, payload, "the {len}-byte frame's bytes");
        assert_eq!(
            d.read_hint(HEAD, MAX, true),
            want,
            "after {len} bytes, first read"
        );
    }
}

#[test]
fn poll_landing_reads_large_packets_into_the_landers_memory() {
    // Over a real connection: large packets whose first byte says "land" are read into
    // one destination buffer at the offset their second byte names; the rest pop as
    // ordinary packets, in order with the landed ones.
    let mut ts = job(2);
    let big = |k: u8| -> Vec<u8> {
        let mut v: Vec<u8> = (0..MAX_PACKET).map(|i| (i % 253) as u8 ^ k).collect();
        v[0] = k % 2;
        v[1] = k;
        v
    };
    let sent: Vec<Vec<u8>> = (0..6u8).flat_map(|k| [big(k), vec![k; 10]]).collect();
    let mut dest = vec![0u8; 6 * MAX_PACKET];
    // Lent as a receive's buffer is (alive for the test).
    let mut active = ActiveBuf::take(RawBuf::from_mut_slice(&mut dest));
    let mut got: Vec<(Vec<u8>, Option<usize>)> = Vec::new();
    let mut next = 0;
    let deadline = Instant::now() + Duration::from_secs(30);
    while got.len() < sent.len() {
        assert!(Instant::now() < deadline, "timed out");
        while next < sent.len() && push_bytes(&mut ts[0], 1, &sent[next]) {
            next += 1;
        }
        ts[0].poll();
        let mut land = |from: u32, first: &[u8], rest: usize, _: bool| -> Option<Landing> {
            assert_eq!(from, 0);
            assert_eq!(
                first.len() + rest,
                MAX_PACKET,
                "asked about a large packet only"
            );
            if first[0] != 1 {
                return None;
            }
            let at = first[1] as usize * MAX_PACKET;
            active.bytes_mut()[at..at + first.len()].copy_from_slice(first);
            active.landing(at + first.len(), rest)
        };
        ts[1].poll_landing(2, &mut land);
        assert_eq!(ts[1].failed_peer(), None);
        while let Some(p) = ts[1].pop_landed(0) {
            got.push(p);
        }
    }
    for (k, ((pkt, landed), want)) in got.iter().zip(&sent).enumerate() {
        if want.len() == MAX_PACKET && want[0] == 1 {
            let len = landed.expect("an odd large packet lands");
            assert_eq!(len, want.len(), "packet {k}");
            assert_eq!(&pkt[..], &want[..pkt.len()]);
            let slot = want[1] as usize * MAX_PACKET;
            assert_eq!(
                &dest[slot..slot + MAX_PACKET],
                &want[..],
                "packet {k} landed"
            );
        } else {
            assert_eq!(*landed, None, "packet {k}");
            assert_eq!(pkt.len(), want.len(), "packet {k}");
            assert_eq!(pkt, want, "packet {k}");
        }
    }
}

#[test]
fn the_lander_hears_whether_earlier_packets_wait_unlanded() {
    // A packet offered to the lander is "in order" only while every earlier packet
    // from its sender that waits to be popped landed too: the engine matches an eager
    // message at its header only then. Medium packets (from `LAND_MIN`) are offered,
    // and one that lands pops with only its head.
    const HEAD: usize = 4;
    let mut ts = job(2);
    let medium = |k: u8| -> Vec<u8> {
        let mut v: Vec<u8> = (0..HEAD + LAND_MIN + 500)
            .map(|i| (i % 251) as u8 ^ k)
            .collect();
        v[0] = k;
        v
    };
    // Round 1: a small packet, then two medium ones; round 2: two medium ones after
    // everything was popped.
    let rounds: [Vec<Vec<u8>>; 2] = [
        vec![vec![7u8; 10], medium(1), medium(2)],
        vec![medium(3), medium(4)],
    ];
    let mut dest = vec![0u8; 5 * (HEAD + LAND_MIN + 500)];
    let mut active = ActiveBuf::take(RawBuf::from_mut_slice(&mut dest));
    let mut offered: Vec<(u8, bool)> = Vec::new();
    let mut got: Vec<(Vec<u8>, Option<usize>)> = Vec::new();
    for round in &rounds {
        for p in round {
            assert!(push_bytes(&mut ts[0], 1, p));
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut received = Vec::new();
        while received.len() < round.len() {
            assert!(Instant::now() < deadline, "timed out");
            ts[0].poll();
            let mut land = |from: u32, first: &[u8], rest: usize, in_order: bool| {
                assert_eq!(from, 0);
                offered.push((first[0], in_order));
                // Every medium packet that is offered in order lands, at its slot.
                if !in_order {
                    return None;
                }
                let at = first[0] as usize * (HEAD + LAND_MIN + 500);
                active.bytes_mut()[at..at + first.len()].copy_from_slice(first);
                active.landing(at + first.len(), rest)
            };
            ts[1].poll_landing(HEAD, &mut land);
            // Popped only once the whole round is in, so round 1's medium packets
            // meet the small one waiting.
            if ts[1].peers[0].recvq.len() == round.len() {
                while let Some(p) = ts[1].pop_landed(0) {
                    received.push(p);
                }
            }
        }
        got.extend(received);
    }
    // Round 1's packets all found the small packet waiting; round 2's first found
    // nothing waiting, its second only a landed packet.
    assert_eq!(offered, vec![(1, false), (2, false), (3, true), (4, true)]);
    for (k, (pkt, landed)) in got.iter().enumerate() {
        let want = if k == 0 {
            vec![7u8; 10]
        } else {
            medium(k as u8)
        };
        match landed {
            Some(len) => {
                assert!(k >= 3, "packet {k} landed");
                assert_eq!(*len, want.len(), "packet {k}");
                assert_eq!(pkt[..], want[..HEAD], "packet {k}'s head");
                let at = k * want.len();
                assert_eq!(dest[at..at + want.len()], want[..], "packet {k} landed");
            }
            None => {
                assert!(k < 3, "packet {k} should land");
                assert_eq!(pkt, &want, "packet {k}");
            }
        }
    }
    assert_eq!(ts[1].peers[0].unlanded, 0);
}

#[test]
fn gathered_pushes_interleave_with_ordinary_ones_in_order_and_intact() {
    // Gathered packets (written from the caller's slices, the socket's leftovers
    // queued) mixed with ordinary pushes, far more than the socket buffers hold before
    // the receiver reads: every packet arrives once, in push order, byte for byte, and
    // the caller's slices may change right after each push.
    let mut ts = job(2);
    let mut rng = Rng::new(11);
    let mut sent: Vec<Vec<u8>> = Vec::new();
    let mut got: Vec<Vec<u8>> = Vec::new();
    let mut seq = 0u64;
    let deadline = Instant::now() + Duration::from_secs(60);
    while got.len() < 300 {
        assert!(Instant::now() < deadline, "timed out");
        if sent.len() < 300 {
            if rng.next_u64() % 3 == 0 {
                let p = packet(0, seq);
                if push_bytes(&mut ts[0], 1, &p) {
                    sent.push(p);
                    seq += 1;
                }
            } else {
                let k = (rng.next_u64() % 4 + 1) as usize;
                let k = k.min(300 - sent.len());
                let mut bufs: Vec<(Vec<u8>, Vec<u8>)> = (0..k)
                    .map(|i| {
                        let p = packet(0, seq + i as u64);
                        let cut = (rng.next_u64() as usize % (p.len() + 1)).min(16);
                        (p[..cut].to_vec(), p[cut..].to_vec())
                    })
                    .collect();
                let pk: Vec<(&[u8], &[u8])> = bufs.iter().map(|(h, b)| (&h[..], &b[..])).collect();
                let n = ts[0].try_push_gather(1, &pk);
                assert!(n <= k);
                for (h, b) in bufs.iter_mut().take(n) {
                    let mut p = h.clone();
                    p.extend_from_slice(b);
                    sent.push(p);
                    // The caller's memory is free again at once.
                    b.iter_mut().for_each(|x| *x = !*x);
                }
                seq += n as u64;
            }
        }
        ts[0].poll();
        // Read only now and then, so the sender's socket fills.
        if rng.next_u64() % 4 == 0 {
            ts[1].poll();
        }
        while let Some(p) = pop_vec(&mut ts[1], 0) {
            got.push(p);
        }
        assert_eq!(ts[0].failed_peer(), None);
        assert_eq!(ts[1].failed_peer(), None);
    }
    assert_eq!(got.len(), sent.len());
    for (i, (g, s)) in got.iter().zip(&sent).enumerate() {
        assert!(
            g == s,
            "packet {i} differs ({} vs {} bytes)",
            g.len(),
            s.len()
        );
    }
}

#[test]
fn eager_packets_after_a_direct_write_are_copied_until_the_next_poll() {
    // A window: the first eager packet since the last poll goes straight to the
    // socket; the next ones are copied into the queue, and the next poll writes
    // them in one go. Small ones are always copied, large ones never; what arrives
    // is every packet, in order.
    let mut ts = job(2);
    // No timing in the test: the window lasts as long as the test runs.
    ts[0].coalesce_for = Duration::from_secs(3600);
    ts[0].coalesce_max = COALESCE_MAX;
    assert!(
        ts[0].copies_eager(1, GATHER_MIN - 1),
        "below the gather size"
    );
    assert!(
        !ts[0].copies_eager(1, COALESCE_MAX + 1),
        "above the coalescing size"
    );
    // Connect first (a gathered write before it is queued anyway).
    assert!(push_bytes(&mut ts[0], 1, b"hello"));
    pump(&mut ts, |ts| {
        ts[0].is_connected(1) && ts[0].is_flushed(1) && pop_vec(&mut ts[1], 0).is_some()
    });
    let body = vec![7u8; GATHER_MIN];
    assert!(
        !ts[0].copies_eager(1, GATHER_MIN),
        "nothing written since the poll"
    );
    assert_eq!(ts[0].try_push_gather(1, &[(b"first", &body)]), 1);
    assert!(ts[0].copies_eager(1, GATHER_MIN), "one went since the poll");
    assert!(!ts[0].copies_eager(1, COALESCE_MAX + 1));
    for k in 0..3u8 {
        let mut p = vec![k; GATHER_MIN + 5];
        p[0] = b'c';
        assert!(push_bytes(&mut ts[0], 1, &p));
    }
    assert!(ts[0].copies_eager(1, GATHER_MIN));
    ts[0].poll();
    let mut got = Vec::new();
    pump(&mut ts, |ts| {
        while let Some(p) = pop_vec(&mut ts[1], 0) {
            got.push(p);
        }
        got.len() == 4
    });
    assert_eq!(&got[0][..5], b"first");
    assert_eq!(&got[0][5..], &body[..]);
    for (k, p) in got[1..].iter().enumerate() {
        assert_eq!(p.len(), GATHER_MIN + 5);
        assert_eq!(p[0], b'c');
        assert!(p[1..].iter().all(|&b| b == k as u8), "packet {k}");
    }
    assert!(ts[0].is_flushed(1));
    ts[0].poll();
    assert!(
        !ts[0].copies_eager(1, GATHER_MIN),
        "a poll with nothing queued ends the window"
    );
}
