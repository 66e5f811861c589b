//! Unit tests of the shared-memory segment and its rings (moved out of the former
//! `transport/shm.rs`).

use super::*;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// A unique segment name, unlinked when dropped (also when the test panics).
struct TestName(String);

impl TestName {
    fn new(tag: &str) -> TestName {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        TestName(format!("oxmpi-test-{}-{n}-{tag}", std::process::id()))
    }
    fn path(&self) -> String {
        format!("/dev/shm/{}", self.0)
    }
}

impl Drop for TestName {
    fn drop(&mut self) {
        ShmSegment::unlink(&self.0);
    }
}

fn push_bytes(seg: &ShmSegment, to: usize, data: &[u8]) -> bool {
    seg.try_push(to, data.len(), |buf: &mut [u8]| {
        buf.copy_from_slice(data);
        data.len()
    })
}

fn pop_vec(seg: &ShmSegment, from: usize) -> Option<Vec<u8>> {
    let mut out = None;
    seg.try_pop(from, |p| out = Some(p.to_vec()));
    out
}

/// Deterministic packet `i`: length varies over 0..=CELL_PAYLOAD, content from i.
fn packet(i: u64) -> Vec<u8> {
    let len = match i % 7 {
        0 => 0,
        1 => 8,
        2 => 56,
        3 => 57,
        4 => CELL_PAYLOAD,
        _ => (i.wrapping_mul(2654435761) % CELL_PAYLOAD as u64) as usize,
    };
    let mut v: Vec<u8> = (0..len)
        .map(|k| (i as usize).wrapping_mul(31).wrapping_add(k) as u8)
        .collect();
    if len >= 8 {
        v[..8].copy_from_slice(&i.to_le_bytes());
    }
    v
}

#[test]
fn constants_and_formula() {
    assert_eq!(CELL_PAYLOAD, 16440);
    // A 16 KiB message with its 48-byte engine header is one packet.
    assert!(48 + 16384 <= CELL_PAYLOAD);
    assert_eq!(cells_per_ring(1), 64);
    assert_eq!(cells_per_ring(2), 64);
    assert_eq!(cells_per_ring(4), 64);
    assert_eq!(cells_per_ring(8), 64);
    assert_eq!(cells_per_ring(16), 32);
    assert_eq!(cells_per_ring(32), 8);
    assert_eq!(cells_per_ring(200), 8);
    for n in 1..=64 {
        let c = cells_per_ring(n);
        assert!(c.is_power_of_two() && (8..=64).contains(&c));
        if n <= 32 {
            assert!(n * n * c * CELL_SIZE <= SEGMENT_BUDGET, "n={n}");
        }
        let l = Layout::new(n).unwrap();
        assert_eq!(l.rings % PAGE, 0);
        assert_eq!(l.ctls % 256, 0);
        assert!(l.ctls >= l.slots + n * 128);
        assert!(l.rings >= l.ctls + n * n * 384);
        assert_eq!(l.total, l.rings + n * n * c * CELL_SIZE);
    }
    assert!(Layout::new(0).is_err());
    assert!(Layout::new(MAX_LOCAL + 1).is_err());
}

#[test]
fn create_open_and_exchange_both_ways() {
    let name = TestName::new("both");
    let a = ShmSegment::create(&name.0, 2, 0).unwrap();
    let b = ShmSegment::open(&name.0, 2, 1).unwrap();
    assert_eq!((a.nlocal(), a.my_local()), (2, 0));
    assert_eq!((b.nlocal(), b.my_local()), (2, 1));
    assert_eq!(a.ring_capacity(), 64);
    assert!(!b.any_incoming());
    assert!(pop_vec(&b, 0).is_none());

    let t = b.doorbell(1).prepare_sleep();
    assert!(push_bytes(&a, 1, b"hello from 0"));
    assert_ne!(
        b.doorbell(1).generation(),
        t,
        "push must ring the receiver's doorbell"
    );
    b.doorbell(1).cancel_sleep();
    assert!(b.any_incoming());
    assert!(!a.any_incoming());
    assert_eq!(pop_vec(&b, 1), None, "nothing from myself");
    assert_eq!(pop_vec(&b, 0).unwrap(), b"hello from 0");
    assert!(!b.any_incoming());

    assert!(push_bytes(&b, 0, b"and back from 1"));
    assert!(a.any_incoming());
    assert_eq!(pop_vec(&a, 1).unwrap(), b"and back from 1");

    // Empty and maximal packets.
    assert!(push_bytes(&a, 1, b""));
    let big: Vec<u8> = (0..CELL_PAYLOAD).map(|i| (i % 251) as u8).collect();
    assert!(push_bytes(&a, 1, &big));
    assert_eq!(pop_vec(&b, 0).unwrap(), b"");
    assert_eq!(pop_vec(&b, 0).unwrap(), big);
}

/// Largest packets on the smallest ring (8 cells, 32 local ranks): they span cell
/// boundaries, three to five fit in a lap, and laps end with skip markers;
/// contents and order survive many laps, with the ring filled to the brim each time.
#[test]
fn largest_packets_on_smallest_ring() {
    let name = TestName::new("bigpk");
    let a = ShmSegment::create(&name.0, 32, 0).unwrap();
    let b = ShmSegment::open(&name.0, 32, 1).unwrap();
    assert_eq!(a.ring_capacity(), MIN_CELLS_PER_RING);
    let pkt = |i: u64| -> Vec<u8> {
        let len = CELL_PAYLOAD - (i % 3) as usize * 4000;
        (0..len)
            .map(|k| (k as u64 ^ i.wrapping_mul(7)) as u8)
            .collect()
    };
    let (mut next_in, mut next_out) = (0u64, 0u64);
    for _lap in 0..20 {
        let mut pushed = 0;
        while push_bytes(&a, 1, &pkt(next_in)) {
            next_in += 1;
            pushed += 1;
        }
        assert!((3..=5).contains(&pushed), "{pushed} large packets fit");
        while let Some(p) = pop_vec(&b, 0) {
            assert_eq!(p, pkt(next_out), "packet {next_out}");
            next_out += 1;
        }
        assert_eq!(next_in, next_out);
    }
}

#[test]
fn ring_full_and_fifo() {
    let name = TestName::new("full");
    let a = ShmSegment::create(&name.0, 3, 0).unwrap();
    let c = ShmSegment::open(&name.0, 3, 2).unwrap();
    let ring_bytes = a.ring_capacity() as u64 * CELL_SIZE as u64;
    // Many laps of mixed sizes, so that skips at the end of a lap and the cleared
    // next state word are exercised.
    let mut next_in = 0u64;
    let mut next_out = 0u64;
    for _round in 0..40 {
        let mut bytes_in_flight = 0u64;
        while push_bytes(&a, 2, &packet(next_in)) {
            bytes_in_flight += slots_for(packet(next_in).len()) as u64 * SLOT as u64;
            next_in += 1;
        }
        assert!(
            bytes_in_flight <= ring_bytes,
            "more in flight than the ring holds"
        );
        let mut called = false;
        assert!(!a.try_push(2, CELL_PAYLOAD, |_| {
            called = true;
            0
        }));
        assert!(!called, "fill must not run when the ring is full");
        // Drain half, then refill.
        for _ in 0..(next_in - next_out).div_ceil(2) {
            assert_eq!(pop_vec(&c, 0).unwrap(), packet(next_out));
            next_out += 1;
        }
    }
    // Small packets sit back to back: a ring holds many more of them than cells.
    while let Some(p) = pop_vec(&c, 0) {
        assert_eq!(p, packet(next_out));
        next_out += 1;
    }
    assert_eq!(next_in, next_out);
    let mut small = 0u64;
    while push_bytes(&a, 2, &[7u8; 8]) {
        small += 1;
    }
    assert!(
        small >= ring_bytes / SLOT as u64 - 2,
        "only {small} 8-byte packets fit"
    );
    for _ in 0..small {
        assert_eq!(pop_vec(&c, 0).unwrap(), [7u8; 8]);
    }
    assert!(!c.any_incoming());
}

#[test]
fn loopback_ring_works() {
    let name = TestName::new("self");
    let a = ShmSegment::create(&name.0, 2, 1).unwrap();
    for i in 0..200u64 {
        assert!(push_bytes(&a, 1, &packet(i)));
        assert!(a.any_incoming());
        assert_eq!(pop_vec(&a, 1).unwrap(), packet(i));
    }
    assert!(!a.any_incoming());
}

#[test]
#[should_panic(expected = "exceeds CELL_PAYLOAD")]
fn oversized_fill_panics() {
    let name = TestName::new("oversize");
    let a = ShmSegment::create(&name.0, 2, 0).unwrap();
    a.try_push(1, CELL_PAYLOAD + 1, |_| 0);
}

#[test]
#[should_panic(expected = "into room for")]
fn fill_longer_than_announced_panics() {
    let name = TestName::new("overfill");
    let a = ShmSegment::create(&name.0, 2, 0).unwrap();
    a.try_push(1, 8, |_| 9);
}

#[test]
fn panicking_callbacks_leave_the_ring_consistent() {
    let name = TestName::new("panic");
    let a = ShmSegment::create(&name.0, 2, 0).unwrap();
    let b = ShmSegment::open(&name.0, 2, 1).unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        a.try_push(1, 16, |_| panic!("fill fails"));
    }));
    assert!(r.is_err());
    assert!(!b.any_incoming(), "a failed fill publishes nothing");
    assert!(push_bytes(&a, 1, b"one"));
    assert!(push_bytes(&a, 1, b"two"));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        b.try_pop(0, |_| panic!("consumer fails"));
    }));
    assert!(r.is_err());
    assert_eq!(
        pop_vec(&b, 0).unwrap(),
        b"two",
        "the panicked packet is consumed"
    );
    assert!(push_bytes(&a, 1, b"three"), "locks were released");
    assert_eq!(pop_vec(&b, 0).unwrap(), b"three");
}

#[test]
fn corrupted_length_is_clamped() {
    let name = TestName::new("torn");
    let a = ShmSegment::create(&name.0, 2, 0).unwrap();
    let b = ShmSegment::open(&name.0, 2, 1).unwrap();
    assert!(push_bytes(&a, 1, b"x"));
    // A hostile peer rewrites the length word of the published packet.
    let st = a.raw_state(0, 1, 0);
    st.store(PUBLISHED | u64::from(u32::MAX), Ordering::Release);
    let mut seen = None;
    assert!(b.try_pop(0, |p| seen = Some(p.len())));
    assert_eq!(seen, Some(CELL_PAYLOAD));
    // A garbage state word without the published bit makes the ring look empty.
    assert!(push_bytes(&a, 1, b"y"));
    let at = (slots_for(CELL_PAYLOAD)) % a.slots();
    a.raw_state(0, 1, at)
        .store(0x0ead_beef_0000_0001, Ordering::Release);
    assert!(pop_vec(&b, 0).is_none());
    assert!(!b.any_incoming());
    // A consumer position that says the ring is full stops the producer.
    let ctl = a.ctl(a.ring_index(0, 1));
    let full = ctl
        .tail
        .pos
        .load(Ordering::Relaxed)
        .wrapping_sub(a.slots() as u64);
    ctl.head.pos.store(full, Ordering::Relaxed);
    a.cached_head[1].store(full, Ordering::Relaxed);
    assert!(!push_bytes(&a, 1, b"z"));
    // Wildly corrupted positions still index inside the ring.
    ctl.tail.pos.store(u64::MAX - 3, Ordering::Relaxed);
    ctl.head.pos.store(u64::MAX, Ordering::Relaxed);
    let _ = push_bytes(&a, 1, b"w");
    let _ = pop_vec(&b, 0);
    let _ = b.any_incoming();
}

#[test]
fn two_thread_stress_in_order() {
    let name = TestName::new("stress");
    let a = ShmSegment::create(&name.0, 2, 0).unwrap();
    let b = ShmSegment::open(&name.0, 2, 1).unwrap();
    const N: u64 = 200_000;
    let producer = std::thread::spawn(move || {
        let mut i = 0u64;
        while i < N {
            // Small packets mostly (realistic, and fast), some large ones.
            let p = if i & 63 == 0 {
                packet(i)
            } else {
                i.to_le_bytes().to_vec()
            };
            if push_bytes(&a, 1, &p) {
                i += 1;
            } else {
                std::hint::spin_loop();
                std::thread::yield_now();
            }
        }
        a
    });
    let consumer = std::thread::spawn(move || {
        let mut i = 0u64;
        while i < N {
            let t = b.doorbell(1).prepare_sleep();
            let got = b.try_pop(0, |p| {
                let want = if i & 63 == 0 {
                    packet(i)
                } else {
                    i.to_le_bytes().to_vec()
                };
                assert_eq!(p, &want[..], "packet {i}");
            });
            if got {
                b.doorbell(1).cancel_sleep();
                i += 1;
            } else if !b.any_incoming() {
                b.doorbell(1).sleep(t, Duration::from_millis(100));
            } else {
                b.doorbell(1).cancel_sleep();
            }
        }
        assert!(!b.any_incoming());
        b
    });
    let _a = producer.join().unwrap();
    let _b = consumer.join().unwrap();
}

#[test]
fn shared_handle_across_threads_is_race_free() {
    // Two threads of one process hammer the same handle (same rings): the private
    // side locks keep the SPSC discipline; every packet arrives exactly once.
    let name = TestName::new("mt");
    let a = Arc::new(ShmSegment::create(&name.0, 2, 0).unwrap());
    let b = ShmSegment::open(&name.0, 2, 1).unwrap();
    const PER_THREAD: u64 = 20_000;
    let threads: Vec<_> = (0..2u64)
        .map(|t| {
            let a = a.clone();
            std::thread::spawn(move || {
                let mut i = 0;
                while i < PER_THREAD {
                    if push_bytes(&a, 1, &(t << 32 | i).to_le_bytes()) {
                        i += 1;
                    } else {
                        std::thread::yield_now();
                    }
                }
            })
        })
        .collect();
    let mut next = [0u64; 2];
    while next.iter().sum::<u64>() < 2 * PER_THREAD {
        b.try_pop(0, |p| {
            let v = u64::from_le_bytes(p.try_into().unwrap());
            let (t, i) = ((v >> 32) as usize, v & 0xffff_ffff);
            assert_eq!(i, next[t], "per-thread FIFO");
            next[t] += 1;
        });
    }
    for t in threads {
        t.join().unwrap();
    }
    assert!(!b.any_incoming());
}

#[test]
fn shared_copy_chunks_are_claimed_once_and_ids_fence_off_old_copies() {
    let name = TestName::new("copy");
    let sender = Arc::new(ShmSegment::create(&name.0, 2, 0).unwrap());
    let receiver = ShmSegment::open(&name.0, 2, 1).unwrap();
    const CHUNKS: u32 = 5000;
    for id in 1..=3u32 {
        receiver.copy_begin(0, 2, id);
        // A stale helper of the previous copy gets nothing of this one.
        assert_eq!(sender.copy_claim(0, 1, 2, id - 1, CHUNKS), None);
        let helper = {
            let sender = sender.clone();
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                while let Some(c) = sender.copy_claim(0, 1, 2, id, CHUNKS) {
                    mine.push(c);
                    sender.copy_done(0, 1, 2, true);
                }
                mine
            })
        };
        let mut mine = Vec::new();
        while let Some(c) = receiver.copy_claim(0, 1, 2, id, CHUNKS) {
            mine.push(c);
            receiver.copy_done(0, 1, 2, true);
        }
        mine.extend(helper.join().unwrap());
        mine.sort_unstable();
        assert_eq!(
            mine,
            (0..CHUNKS).collect::<Vec<_>>(),
            "every chunk exactly once"
        );
        assert_eq!(receiver.copy_progress(0, 2), (CHUNKS, false));
        assert_eq!(
            receiver.copy_progress(0, 1),
            (0, false),
            "other slots untouched"
        );
    }
    // A failed chunk is reported.
    receiver.copy_begin(0, 3, 4);
    let c = sender.copy_claim(0, 1, 3, 4, 2).unwrap();
    assert_eq!(c, 0);
    sender.copy_done(0, 1, 3, false);
    assert_eq!(receiver.copy_progress(0, 3), (1, true));
    assert_eq!(
        sender.copy_claim(0, 1, COPY_SLOTS, 4, 2),
        None,
        "no such slot"
    );
}

#[test]
fn open_validates() {
    let name = TestName::new("validate");
    let _a = ShmSegment::create(&name.0, 3, 0).unwrap();
    let e = ShmSegment::open(&name.0, 4, 1).unwrap_err();
    assert!(
        e.message.contains("created for 3 local ranks"),
        "{}",
        e.message
    );
    let e = ShmSegment::open(&name.0, 2, 1).unwrap_err();
    assert!(
        e.message.contains("created for 3 local ranks"),
        "{}",
        e.message
    );
    let e = ShmSegment::open(&name.0, 3, 3).unwrap_err();
    assert_eq!(e.class, ErrorClass::Arg);
    let e = ShmSegment::open(&name.0, 3, 0).unwrap_err();
    assert!(e.message.contains("already attached"), "{}", e.message);
    let b = ShmSegment::open(&name.0, 3, 1).unwrap();
    drop(b);
    // Dropping releases the claim.
    let _b = ShmSegment::open(&name.0, 3, 1).unwrap();
    // O_EXCL: creating twice fails.
    let e = ShmSegment::create(&name.0, 3, 2).unwrap_err();
    assert!(e.message.contains("cannot create"), "{}", e.message);
    // Missing segment, bad names.
    let missing = TestName::new("missing");
    let e = ShmSegment::open(&missing.0, 3, 1).unwrap_err();
    assert!(e.message.contains("cannot open"), "{}", e.message);
    assert_eq!(
        ShmSegment::create("a/b", 2, 0).unwrap_err().class,
        ErrorClass::Arg
    );
    assert_eq!(
        ShmSegment::create("", 2, 0).unwrap_err().class,
        ErrorClass::Arg
    );
    assert_eq!(
        ShmSegment::create(&name.0, 0, 0).unwrap_err().class,
        ErrorClass::Arg
    );
}

#[test]
fn open_rejects_foreign_file() {
    let name = TestName::new("foreign");
    std::fs::write(name.path(), vec![0xabu8; 8192]).unwrap();
    let e = ShmSegment::open(&name.0, 2, 1).unwrap_err();
    assert!(e.message.contains("not an oxmpi segment"), "{}", e.message);
}

#[test]
fn mode_is_0600_and_unlink_removes() {
    let name = TestName::new("mode");
    // Even under a permissive umask the file must be private.
    let seg = ShmSegment::create(&name.0, 4, 0).unwrap();
    let meta = std::fs::metadata(name.path()).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(meta.len() as usize, seg.size());
    assert_eq!(seg.size(), segment_size(4).unwrap());
    ShmSegment::unlink(&name.0);
    assert!(!std::path::Path::new(&name.path()).exists());
    // The mapping stays usable after unlink.
    assert!(push_bytes(&seg, 0, b"still mapped"));
    assert_eq!(pop_vec(&seg, 0).unwrap(), b"still mapped");
    // Unlinking a missing segment is fine.
    ShmSegment::unlink(&name.0);
    ShmSegment::unlink("no/such");
}

#[test]
fn failed_create_leaves_nothing() {
    let name = TestName::new("toobig");
    // More ranks than supported: rejected before anything is created.
    assert!(ShmSegment::create(&name.0, MAX_LOCAL + 1, 0).is_err());
    assert!(!std::path::Path::new(&name.path()).exists());
}

const CHILD_ENV: &str = "OXMPI_SHM_TEST_CHILD";
const ROUNDS: u64 = 20_000;

/// The child half of `cross_process_echo`: does nothing unless started by it.
#[test]
fn cross_process_echo_child() {
    let Ok(name) = std::env::var(CHILD_ENV) else {
        return;
    };
    let seg = ShmSegment::open(&name, 2, 1).unwrap();
    super::super::cma::allow_peer_reads();
    // Tell the parent where our CMA-readable buffer is.
    static SECRET: [u8; 32] = *b"the child's memory, read by CMA!";
    let mut hello = Vec::new();
    hello.extend_from_slice(&(std::process::id() as u64).to_le_bytes());
    hello.extend_from_slice(&(SECRET.as_ptr() as u64).to_le_bytes());
    while !push_bytes(&seg, 0, &hello) {
        std::thread::yield_now();
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "child timed out");
        let t = seg.doorbell(1).prepare_sleep();
        let mut msg = None;
        if seg.try_pop(0, |p| msg = Some(p.to_vec())) {
            seg.doorbell(1).cancel_sleep();
            let msg = msg.unwrap();
            if msg == b"quit" {
                break;
            }
            while !push_bytes(&seg, 0, &msg) {
                assert!(Instant::now() < deadline, "child timed out pushing");
                std::thread::yield_now();
            }
        } else {
            seg.doorbell(1).sleep(t, Duration::from_secs(5));
        }
    }
}

#[test]
fn cross_process_echo() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let name = TestName::new("xproc");
    let seg = ShmSegment::create(&name.0, 2, 0).unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "transport::shm::tests::cross_process_echo_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &name.0)
        // The harness' "running 1 test" chatter would clutter our output; the
        // child's panics go to stderr, which we keep.
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // Wait (asleep) for the child's hello.
        let hello = loop {
            assert!(Instant::now() < deadline, "no hello from the child");
            let t = seg.doorbell(0).prepare_sleep();
            if let Some(p) = pop_vec(&seg, 1) {
                seg.doorbell(0).cancel_sleep();
                break p;
            }
            if let Ok(Some(st)) = child.try_wait() {
                panic!("child exited early: {st}");
            }
            seg.doorbell(0).sleep(t, Duration::from_millis(100));
        };
        let pid = u64::from_le_bytes(hello[..8].try_into().unwrap());
        let addr = u64::from_le_bytes(hello[8..16].try_into().unwrap());
        assert_eq!(pid, u64::from(child.id()));
        if super::super::cma::probe_cma() {
            let mut buf = [0u8; 32];
            super::super::cma::read_remote(pid as i32, addr as usize, &mut buf).unwrap();
            assert_eq!(&buf, b"the child's memory, read by CMA!");
        }
        // Echo traffic with at most `cap` packets outstanding, sleeping when idle.
        let cap = seg.ring_capacity() as u64;
        let (mut sent, mut got) = (0u64, 0u64);
        while got < ROUNDS {
            assert!(Instant::now() < deadline, "echo stalled at {got}/{ROUNDS}");
            let t = seg.doorbell(0).prepare_sleep();
            let mut progress = false;
            while sent < ROUNDS && sent - got < cap && push_bytes(&seg, 1, &packet(sent)) {
                sent += 1;
                progress = true;
            }
            while seg.try_pop(1, |p| assert_eq!(p, &packet(got)[..], "echo {got}")) {
                got += 1;
                progress = true;
            }
            if !progress && !seg.any_incoming() {
                seg.doorbell(0).sleep(t, Duration::from_millis(100));
            } else {
                seg.doorbell(0).cancel_sleep();
            }
        }
        while !push_bytes(&seg, 1, b"quit") {
            std::thread::yield_now();
        }
        loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            assert!(Instant::now() < deadline, "child did not exit");
            std::thread::sleep(Duration::from_millis(5));
        }
    }));
    match result {
        Ok(status) => assert!(status.success(), "child failed: {status}"),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            std::panic::resume_unwind(e);
        }
    }
}

/// How many of the pages of ring `ring` of `seg` are resident in this process's view.
fn resident_pages(seg: &ShmSegment, ring: usize) -> usize {
    let bytes = seg.layout.cells * CELL_SIZE;
    let pages = bytes / PAGE;
    let mut vec = vec![0u8; pages];
    let start = seg
        .map
        .ptr
        .as_ptr()
        .wrapping_add(seg.layout.rings + ring * bytes);
    // SAFETY: `start..start+bytes` is ring `ring`, inside the mapping and page aligned; `vec` has one byte per page.
    let rc = unsafe { libc::mincore(start.cast(), bytes, vec.as_mut_ptr()) };
    assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
    vec.iter().filter(|&&v| v & 1 != 0).count()
}

#[test]
fn small_jobs_fault_their_rings_in_at_attach_and_large_ones_stay_lazy() {
    // 2 ranks: rings (0,1) and (1,0) are resident as soon as rank 0 attaches, so the first
    // lap of a message stream pays no page faults; the unused self ring (0,0) stays lazy.
    let name = TestName::new("prefault2");
    let seg = ShmSegment::create(&name.0, 2, 0).unwrap();
    let pages = seg.layout.cells * CELL_SIZE / PAGE;
    if resident_pages(&seg, 1) == 0 {
        // A kernel without MADV_POPULATE_WRITE (before Linux 5.14) leaves them lazy.
        assert!(
            std::env::var_os("CI").is_none(),
            "MADV_POPULATE_WRITE had no effect"
        );
        return;
    }
    assert_eq!(resident_pages(&seg, 1), pages, "ring (0,1)");
    assert_eq!(resident_pages(&seg, 2), pages, "ring (1,0)");
    assert_eq!(resident_pages(&seg, 0), 0, "self ring (0,0)");
    assert_eq!(resident_pages(&seg, 3), 0, "ring (1,1), not ours");
    // 8 ranks: the rings total more than PREFAULT_BUDGET, so nothing is faulted in.
    let name8 = TestName::new("prefault8");
    let seg8 = ShmSegment::create(&name8.0, 8, 0).unwrap();
    assert!(8 * 8 * seg8.layout.cells * CELL_SIZE > PREFAULT_BUDGET);
    assert_eq!(resident_pages(&seg8, 1), 0, "ring (0,1) of 8 ranks");
}

#[test]
fn a_rank_sees_which_processors_other_ranks_reported() {
    let name = TestName::new("cpu");
    let a = ShmSegment::create(&name.0, 3, 0).unwrap();
    let b = ShmSegment::open(&name.0, 3, 1).unwrap();
    let c = ShmSegment::open(&name.0, 3, 2).unwrap();
    // Nothing reported yet: no one is known to run elsewhere (0 is "not reported").
    assert!(!a.others_elsewhere(0) && !b.others_elsewhere(0));
    assert!(
        !a.other_on(0) && !b.other_on(0),
        "no report is no co-location seen"
    );
    b.set_cpu(1);
    assert!(
        a.other_on(1) && !a.other_on(0) && !b.other_on(1),
        "b's own report does not count"
    );
    assert!(!a.others_elsewhere(0), "c has not reported");
    c.set_cpu(2);
    assert!(a.others_elsewhere(0), "b on 1 and c on 2, a on 0");
    assert!(!a.others_elsewhere(1) && !a.others_elsewhere(2));
    // One's own report does not count, and two others on one processor are fine.
    a.set_cpu(3);
    c.set_cpu(1);
    assert!(a.others_elsewhere(3) && !a.others_elsewhere(1));
    assert!(b.others_elsewhere(0) && !b.others_elsewhere(3));
    // A move is seen at the next report; the largest processor number does not
    // wrap into "not reported".
    b.set_cpu(u32::MAX);
    assert!(a.others_elsewhere(3) && !a.others_elsewhere(u32::MAX));
    // A rank that withdrew its report (it sleeps) is no longer known to be elsewhere.
    c.clear_cpu();
    assert!(!a.others_elsewhere(3) && !b.others_elsewhere(0));
    assert!(
        !a.other_on(1) && a.other_on(u32::MAX),
        "c withdrew, b is on u32::MAX"
    );
    c.set_cpu(2);
    assert!(a.others_elsewhere(3));
    // The one-walk form gives both answers as the two walks do.
    for (seg, cpu) in [(&a, 3), (&a, 2), (&a, u32::MAX), (&b, 0), (&b, 3), (&c, 2)] {
        assert_eq!(
            seg.cpu_neighbours(cpu),
            CpuNeighbours {
                one_here: seg.other_on(cpu),
                all_elsewhere: seg.others_elsewhere(cpu)
            },
            "processor {cpu}"
        );
    }
    assert_eq!(
        a.cpu_neighbours(2),
        CpuNeighbours {
            one_here: true,
            all_elsewhere: false
        }
    );
    // The reports sit beside the owner and "waiting" words, not over them, and
    // leave the doorbells alone.
    b.set_waiting(true);
    assert!(!a.others_waiting(), "c is not waiting");
    c.set_waiting(true);
    assert!(a.others_waiting());
    assert_eq!(a.doorbell(1).generation(), 0);
    // A rank that left no longer counts as elsewhere.
    drop(b);
    assert!(!a.others_elsewhere(3) && !c.others_elsewhere(5));
    assert!(!a.other_on(u32::MAX), "b left");
}

/// The ring's copy (a vector loop from `VECTOR_COPY_MIN` bytes, `memcpy` below) copies
/// every length exactly, whole 128-byte steps or not, at any alignment of either side,
/// and writes nothing past the end of the copied bytes.
#[test]
fn copy_packet_bytes_copies_every_length_and_offset_exactly() {
    let src: Vec<u8> = (0..20_000u32).map(|i| (i * 7 + 3) as u8).collect();
    let lengths = (0..300)
        .chain(1000..1100)
        .chain(1900..2300)
        .chain([4095, 4096, 4097, 8191, 8192, 8200, 16384, 16391]);
    for n in lengths {
        for (s_off, d_off) in [(0, 0), (1, 0), (0, 5), (24, 40), (63, 1)] {
            let mut dst = vec![0xAAu8; n + d_off + 200];
            copy_packet_bytes(&mut dst[d_off..], &src[s_off..s_off + n]);
            assert_eq!(&dst[d_off..d_off + n], &src[s_off..s_off + n], "length {n}");
            assert!(
                dst[..d_off]
                    .iter()
                    .chain(&dst[d_off + n..])
                    .all(|&b| b == 0xAA),
                "length {n} at offsets {s_off}/{d_off} wrote outside its bytes"
            );
        }
    }
}
