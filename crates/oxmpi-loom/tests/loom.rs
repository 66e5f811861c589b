//! Every interleaving (up to loom's preemption bound) of the shared-memory ring and
//! the doorbell: packets arrive whole, in order, with no data race on their
//! payload, and a consumer that goes to sleep is always woken by the push that
//! follows its last look (sleeps have no timeout under loom, so a lost wakeup is a
//! deadlock, which loom reports).

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;
use oxmpi_loom::doorbell::Doorbell;
use oxmpi_loom::ring::Ring;
use std::time::Duration;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    // Bounded so that CI stays cheap; 3 preemptions cover the races of two threads.
    b.preemption_bound = Some(3);
    b.check(f);
}

/// Waits (prepare, look, sleep) until `ready` says there is work, as the engine's
/// idle loop does with its rings.
fn wait_until(bell: &Doorbell, mut ready: impl FnMut() -> bool) {
    loop {
        let t = bell.prepare_sleep();
        if ready() {
            bell.cancel_sleep();
            return;
        }
        bell.sleep(t, Duration::from_secs(1));
    }
}

#[test]
fn doorbell_loses_no_wakeup() {
    model(|| {
        let bell = Arc::new(Doorbell::new());
        let work = Arc::new(AtomicBool::new(false));
        let (b2, w2) = (bell.clone(), work.clone());
        let producer = thread::spawn(move || {
            w2.store(true, Ordering::Release);
            b2.ring();
        });
        wait_until(&bell, || work.load(Ordering::Acquire));
        producer.join().unwrap();
    });
}

/// Two pieces of work, each rung for, and a consumer that sleeps for each in turn:
/// the second ring may find the word disarmed (the first woke the consumer, which
/// has not run) and skip its wake; the consumer's next sleep must still not miss it.
#[test]
fn doorbell_repeated_rings_skip_wakes_but_lose_none() {
    model(|| {
        let bell = Arc::new(Doorbell::new());
        let first = Arc::new(AtomicBool::new(false));
        let second = Arc::new(AtomicBool::new(false));
        let (b2, f2, s2) = (bell.clone(), first.clone(), second.clone());
        let producer = thread::spawn(move || {
            f2.store(true, Ordering::Release);
            b2.ring();
            s2.store(true, Ordering::Release);
            b2.ring();
        });
        wait_until(&bell, || first.load(Ordering::Acquire));
        wait_until(&bell, || second.load(Ordering::Acquire));
        producer.join().unwrap();
    });
}

#[test]
fn doorbell_wakes_two_sleepers() {
    model(|| {
        let bell = Arc::new(Doorbell::new());
        let work = Arc::new(AtomicBool::new(false));
        let sleeper = {
            let (b, w) = (bell.clone(), work.clone());
            thread::spawn(move || wait_until(&b, || w.load(Ordering::Acquire)))
        };
        let producer = {
            let (b, w) = (bell.clone(), work.clone());
            thread::spawn(move || {
                w.store(true, Ordering::Release);
                b.ring();
            })
        };
        wait_until(&bell, || work.load(Ordering::Acquire));
        sleeper.join().unwrap();
        producer.join().unwrap();
    });
}

/// Pushes `packets` from a producer thread and checks the consumer gets each whole
/// and in order.
fn stream(slots: usize, packets: &'static [&'static [u64]]) {
    model(move || {
        let ring = Arc::new(Ring::new(slots));
        let r = ring.clone();
        let producer = thread::spawn(move || {
            for p in packets {
                while !r.try_push(p) {
                    thread::yield_now();
                }
            }
        });
        for p in packets {
            let got = loop {
                match ring.try_pop() {
                    Some(v) => break v,
                    None => thread::yield_now(),
                }
            };
            assert_eq!(&got[..], *p);
        }
        producer.join().unwrap();
    });
}

/// A later slot's state word keeps payload that reads as a published one-slot packet
/// (slot 1, from the first packet); the consumer reads it as a state word after the
/// fourth packet (slot 0), so the producer must have cleared it.
#[test]
fn old_payload_in_a_state_word_is_never_taken_for_a_packet() {
    use oxmpi_loom::ring::PUBLISHED;
    const P: &[&[u64]] = &[&[10, PUBLISHED | 1], &[20], &[30], &[40], &[50]];
    stream(4, P);
}

#[test]
fn ring_delivers_packets_whole_and_in_order_across_the_wrap() {
    // 4 slots: the 2-slot packet at slot 3 must skip to slot 0 (a push needs room
    // for the slot after it too).
    const P: &[&[u64]] = &[&[1, 2], &[3], &[4, 5], &[6]];
    stream(4, P);
}

#[test]
fn consumer_sleeping_on_an_empty_ring_is_woken_by_the_push() {
    model(|| {
        let ring = Arc::new(Ring::new(2));
        let r = ring.clone();
        let producer = thread::spawn(move || assert!(r.try_push(&[7])));
        let mut got = None;
        wait_until(&ring.bell, || {
            got = got.take().or_else(|| ring.try_pop());
            got.is_some()
        });
        assert_eq!(got, Some(vec![7]));
        producer.join().unwrap();
    });
}
