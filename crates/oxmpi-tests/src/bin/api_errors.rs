//! Errors through the `oxmpi` API.
//!
//! `api_errors` (or `api_errors try`): every `try_*` error class, checked on every rank.
//! `api_errors fatal-rank`: a send to a bad rank with the fatal (rsmpi) form; must abort.
//! `api_errors drop-request`: drops an uncompleted request; must panic and abort.
//! `api_errors drop-message`: drops a matched message; must panic.

use oxmpi::point_to_point as p2p;
use oxmpi::request::scope;
use oxmpi::topology::SimpleCommunicator;
use oxmpi::traits::*;
use oxmpi::{Error, ErrorClass};
use oxmpi_tests::check;

fn expect<T: std::fmt::Debug>(
    me: i32,
    what: &str,
    r: oxmpi::Result<T>,
    class: ErrorClass,
) -> Error {
    match r {
        Ok(v) => {
            eprintln!("rank {me}: {what}: expected {class}, got Ok({v:?})");
            std::process::exit(3);
        }
        Err(e) => {
            check!(me, e.class == class, "{what}: expected {class}, got {e}");
            check!(me, !e.message.is_empty(), "{what}: empty message");
            e
        }
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "try".into());
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    let this = world.this_process();
    let next = world.process_at_rank((me + 1) % size);
    let prev = world.process_at_rank((me + size - 1) % size);

    match mode.as_str() {
        "fatal-rank" => {
            world.process_at_rank(size + 3).send(&1i32);
            eprintln!("rank {me}: survived a fatal error");
            std::process::exit(0);
        }
        "drop-request" => {
            let mut x = 0i32;
            scope(|s| {
                let _r = world
                    .any_process()
                    .immediate_receive_into_with_tag(s, &mut x, 77);
            });
            eprintln!("rank {me}: survived dropping a request");
            std::process::exit(0);
        }
        "drop-message" => {
            this.send_with_tag(&1i32, 5);
            let (_msg, _st) = this.matched_probe_with_tag(5);
            return;
        }
        _ => {}
    }

    // bad rank
    let e = expect(
        me,
        "send to rank size",
        world.process_at_rank(size).try_send(&1i32),
        ErrorClass::Rank,
    );
    check!(
        me,
        e.message.contains("MPI_Send") && e.message.contains("dest"),
        "message names call and argument: {e}"
    );
    expect(
        me,
        "ssend to -7",
        world.process_at_rank(-7).try_synchronous_send(&1i32),
        ErrorClass::Rank,
    );
    expect(
        me,
        "receive from size",
        world.process_at_rank(size).try_receive::<i32>(),
        ErrorClass::Rank,
    );
    expect(
        me,
        "probe from size+1",
        world.process_at_rank(size + 1).try_probe(),
        ErrorClass::Rank,
    );
    let out = [1u8; 4];
    let mut inp = [0u8; 4];
    scope(|s| {
        let r = world.process_at_rank(size).try_immediate_send(s, &out[..]);
        expect(me, "isend to size", r.map(|_| ()), ErrorClass::Rank);
        let r = world
            .process_at_rank(-9)
            .try_immediate_receive_into(s, &mut inp[..]);
        expect(me, "irecv from -9", r.map(|_| ()), ErrorClass::Rank);
    });

    // bad tag
    let e = expect(
        me,
        "send tag -5",
        next.try_send_with_tag(&1i32, -5),
        ErrorClass::Tag,
    );
    check!(me, e.message.contains("tag"), "tag message {e}");
    expect(
        me,
        "receive tag -5",
        prev.try_receive_with_tag::<i32>(-5),
        ErrorClass::Tag,
    );
    expect(
        me,
        "iprobe tag -9",
        prev.try_immediate_probe_with_tag(-9),
        ErrorClass::Tag,
    );

    // truncation: self-sends, and from the ring neighbour
    let big = [me; 10];
    let mut small = [0i32; 4];
    scope(|s| {
        let sr = this.immediate_send_with_tag(s, &big, 1);
        expect(
            me,
            "truncated receive_into",
            this.try_receive_into_with_tag(&mut small[..], 1),
            ErrorClass::Truncate,
        );
        sr.wait();
    });
    scope(|s| {
        let sr = this.immediate_send_with_tag(s, &big[..2], 2);
        expect(
            me,
            "truncated receive",
            this.try_receive_with_tag::<i32>(2),
            ErrorClass::Truncate,
        );
        sr.wait();
    });
    scope(|s| {
        let sr = next.immediate_send_with_tag(s, &big, 3);
        let rr = prev.immediate_receive_into_with_tag(s, &mut small, 3);
        expect(me, "truncated irecv", rr.try_wait(), ErrorClass::Truncate);
        sr.wait();
    });

    // short and ragged messages
    let two = [1u8, 2];
    scope(|s| {
        let sr = this.immediate_send_with_tag(s, &two[..], 4);
        expect(
            me,
            "short receive",
            this.try_receive_with_tag::<i32>(4),
            ErrorClass::Count,
        );
        sr.wait();
    });
    let five = [1u8; 5];
    scope(|s| {
        let sr = this.immediate_send_with_tag(s, &five[..], 5);
        expect(
            me,
            "ragged receive_vec",
            this.try_receive_vec_with_tag::<u32>(5),
            ErrorClass::Type,
        );
        sr.wait();
    });

    // invalid values are caught and repaired
    let bools = [0u8, 1, 7];
    let mut flags = [true; 3];
    scope(|s| {
        let sr = this.immediate_send_with_tag(s, &bools[..], 6);
        expect(
            me,
            "bad bool",
            this.try_receive_into_with_tag(&mut flags[..], 6),
            ErrorClass::Type,
        );
        sr.wait();
    });
    check!(
        me,
        flags == [false, true, false],
        "repaired bools {flags:?}"
    );
    // ... also those an immediate receive wrote, checked when it completes: waited
    // for alone, or in a collection
    let mut flags = [true; 3];
    scope(|s| {
        let sr = this.immediate_send_with_tag(s, &bools[..], 8);
        let rr = this.immediate_receive_into_with_tag(s, &mut flags[..], 8);
        expect(me, "bad bool, immediate", rr.try_wait(), ErrorClass::Type);
        sr.wait();
    });
    check!(
        me,
        flags == [false, true, false],
        "repaired bools (immediate) {flags:?}"
    );
    let mut flags = [[true; 3], [true; 3]];
    oxmpi::request::multiple_scope(2, |s, coll| {
        for (i, f) in flags.iter_mut().enumerate() {
            coll.add(this.immediate_receive_into_with_tag(s, &mut f[..], 9 + i as i32));
        }
        this.send_with_tag(&bools[..], 9);
        this.send_with_tag(&[1u8, 0, 1][..], 10);
        let mut done = Vec::new();
        expect(
            me,
            "bad bool, collection",
            coll.try_wait_all(&mut done),
            ErrorClass::Type,
        );
        check!(
            me,
            done.len() == 1,
            "the good receive completes: {}",
            done.len()
        );
    });
    check!(
        me,
        flags == [[false, true, false], [true, false, true]],
        "repaired bools (collection) {flags:?}"
    );
    let surrogate = 0xD800u32;
    scope(|s| {
        let sr = this.immediate_send_with_tag(s, &surrogate, 7);
        expect(
            me,
            "bad char",
            this.try_receive_with_tag::<char>(7),
            ErrorClass::Type,
        );
        sr.wait();
    });

    // buffered send with no buffer attached
    expect(
        me,
        "bsend without buffer",
        next.try_buffered_send_with_tag(&[0u8; 64][..], 8),
        ErrorClass::Buffer,
    );

    // source and destination in different communicators
    let selfc = SimpleCommunicator::self_comm();
    let r: oxmpi::Result<(i32, _)> = p2p::try_send_receive(&1i32, &next, &selfc.this_process());
    expect(me, "send_receive across communicators", r, ErrorClass::Comm);

    // a try_ success, for contrast
    let (x, st) = scope(|s| {
        let sr = this.immediate_send_with_tag(s, &42i64, 9);
        let got = this.try_receive_with_tag::<i64>(9).unwrap();
        sr.wait();
        got
    });
    check!(me, x == 42 && st.tag() == 9, "try success");

    println!("api_errors: rank {me} of {size} ok");
}
