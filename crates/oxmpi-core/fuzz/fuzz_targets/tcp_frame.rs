//! Fuzzes the TCP transport's wire decoding: the frame decoder (with input-driven
//! chunking, through both the copying and the direct-read paths) and the handshake
//! parsers. Invariants: no panic, no packet over MAX_PACKET, a decoder error is final,
//! and nothing but a genuine handshake message verifies.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oxmpi_core::transport::tcp::{wire, MAX_PACKET};

const SECRET: &[u8] = b"fuzz secret";

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 2 {
        0 => frames(rest),
        _ => handshake(rest),
    }
});

fn frames(data: &[u8]) {
    // The first two bytes choose the chunk sizes, the rest is the stream.
    if data.len() < 2 {
        return;
    }
    let (step_a, step_b) = (data[0] as usize + 1, data[1] as usize * 64 + 1);
    let mut stream = &data[2..];
    let mut dec = wire::FrameDecoder::new();
    let mut toggle = false;
    while !stream.is_empty() {
        toggle = !toggle;
        let step = if toggle { step_a } else { step_b };
        if let Some(buf) = dec.direct_buf(if toggle { 1 } else { usize::MAX }) {
            let n = buf.len().min(step).min(stream.len());
            buf[..n].copy_from_slice(&stream[..n]);
            dec.advance_direct(n, |f| check(&f));
            stream = &stream[n..];
            continue;
        }
        let n = step.min(stream.len());
        if dec.feed(&stream[..n], |f| check(&f)).is_err() {
            return;
        }
        stream = &stream[n..];
    }
    let _ = (dec.at_boundary(), dec.saw_bye());
}

fn check(f: &wire::Frame) {
    if let wire::Frame::Packet(p) = f {
        assert!(p.len() <= MAX_PACKET);
    }
}

fn handshake(data: &[u8]) {
    let (sn, cn) = ([1u8; 32], [2u8; 32]);
    if let Ok(h) = wire::parse_server_hello(data) {
        assert_eq!(data.len(), wire::SERVER_HELLO_LEN);
        let _ = h.rank;
    }
    if let Ok(m) = wire::parse_client_msg(data) {
        let genuine = wire::encode_client_msg(SECRET, m.rank, m.server_rank, &sn, &m.nonce);
        assert_eq!(
            wire::verify_client_msg(SECRET, &m, &sn),
            genuine[..] == data[..]
        );
    }
    if let Ok(accepted) = wire::parse_verdict(SECRET, data, 3, 0, &cn, &sn) {
        assert_eq!(
            data,
            &wire::encode_verdict(SECRET, accepted, 3, 0, &cn, &sn)[..]
        );
    }
}
