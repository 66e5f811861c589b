//! Shared-memory ring micro-benchmarks (no external harness).
//!
//! `cargo bench -p oxmpi-core --bench shm_ring`
//!
//! * ping-pong: two threads, each with its own handle on one segment (local ranks 0 and
//!   1), bounce a packet through the rings 0->1 and 1->0 while spinning; prints the
//!   round-trip time and the one-way ("hop") latency, for several packet sizes;
//! * streaming: one thread pushes full cells as fast as the other pops them.
//!
//! Both threads busy-poll (no doorbell sleeps), as the engine does while a request is
//! pending. On a 2-core machine, other load disturbs the numbers: run it idle.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use oxmpi_core::transport::shm::{ShmSegment, CELL_PAYLOAD};

fn name(tag: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "oxmpi-bench-{}-{}-{tag}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Two handles on a fresh segment; the name is unlinked at once (mappings stay valid).
fn pair(tag: &str) -> (ShmSegment, ShmSegment) {
    let n = name(tag);
    let a = ShmSegment::create(&n, 2, 0).expect("create segment");
    let b = ShmSegment::open(&n, 2, 1).expect("open segment");
    ShmSegment::unlink(&n);
    (a, b)
}

fn push_spin(seg: &ShmSegment, to: usize, data: &[u8]) {
    while !seg.try_push(to, data.len(), |buf: &mut [u8]| {
        buf.copy_from_slice(data);
        data.len()
    }) {
        std::hint::spin_loop();
    }
}

fn pop_spin(seg: &ShmSegment, from: usize, out: &mut [u8]) -> usize {
    let mut n = 0;
    while !seg.try_pop(from, |p| {
        n = p.len();
        out[..n].copy_from_slice(p);
    }) {
        std::hint::spin_loop();
    }
    n
}

fn ping_pong(size: usize, iters: u64) -> f64 {
    let (a, b) = pair("pp");
    let b = Arc::new(b);
    let echo = {
        let b = b.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; CELL_PAYLOAD];
            for _ in 0..iters {
                let n = pop_spin(&b, 0, &mut buf);
                push_spin(&b, 0, &buf[..n]);
            }
        })
    };
    let msg = vec![7u8; size];
    let mut buf = vec![0u8; CELL_PAYLOAD];
    // Warm up (page faults on first use of each cell, thread start-up).
    let warm = iters / 10;
    for _ in 0..warm {
        push_spin(&a, 1, &msg);
        pop_spin(&a, 1, &mut buf);
    }
    let start = Instant::now();
    for _ in warm..iters {
        push_spin(&a, 1, &msg);
        let n = pop_spin(&a, 1, &mut buf);
        assert_eq!(n, size);
    }
    let elapsed = start.elapsed();
    echo.join().unwrap();
    elapsed.as_nanos() as f64 / (iters - warm) as f64
}

fn stream(size: usize, packets: u64) -> (f64, f64) {
    let (a, b) = pair("st");
    let consumer = std::thread::spawn(move || {
        let mut buf = vec![0u8; CELL_PAYLOAD];
        let mut bytes = 0u64;
        for _ in 0..packets {
            bytes += pop_spin(&b, 0, &mut buf) as u64;
        }
        bytes
    });
    let msg = vec![1u8; size];
    let start = Instant::now();
    for _ in 0..packets {
        push_spin(&a, 1, &msg);
    }
    let bytes = consumer.join().unwrap();
    let secs = start.elapsed().as_secs_f64();
    (packets as f64 / secs / 1e6, bytes as f64 / secs / 1e9)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs us with no
    // `--bench`: then do a quick smoke run only.
    let quick = !std::env::args().any(|a| a == "--bench");
    let scale = if quick { 100 } else { 1 };
    println!("shm ring ping-pong (two threads, busy polling)");
    for &(size, iters) in &[
        (8usize, 2_000_000u64),
        (56, 1_000_000),
        (1024, 500_000),
        (CELL_PAYLOAD, 200_000),
    ] {
        let rt = ping_pong(size, iters / scale);
        println!(
            "  {size:>5} B: {rt:8.1} ns/round trip  ({:6.1} ns/hop)",
            rt / 2.0
        );
    }
    println!("shm ring streaming (one producer, one consumer)");
    for &(size, packets) in &[(8usize, 5_000_000u64), (CELL_PAYLOAD, 500_000)] {
        let (mpps, gbps) = stream(size, packets / scale);
        println!("  {size:>5} B: {mpps:8.2} Mpkt/s  {gbps:6.2} GB/s");
    }
}
