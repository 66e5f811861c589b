//! Blocking point-to-point through the `oxmpi` API: every primitive type, arrays, vecs,
//! tags, any_process, probes, matched probes, send modes, send_receive*.
//! Rank 0 talks to every other rank in turn; runs on any size (1 = self-sends).

use std::fmt::Debug;

use oxmpi::datatype::DatatypeRef;
use oxmpi::point_to_point as p2p;
use oxmpi::topology::{Process, Rank};
use oxmpi::traits::*;
use oxmpi_tests::check;

fn echo<T: Equivalence + PartialEq + Debug + Copy>(
    me: Rank,
    peer: Process<'_>,
    root: bool,
    v: T,
    tag: i32,
) {
    if root {
        peer.send_with_tag(&v, tag);
        let (back, st) = peer.receive_with_tag::<T>(tag);
        check!(me, back == v, "echo {v:?} came back as {back:?}");
        check!(
            me,
            st.tag() == tag && st.source_rank() == peer.rank(),
            "status {st:?}"
        );
        check!(me, st.count(T::equivalent_datatype()) == 1, "count {st:?}");
    } else {
        let (x, st) = peer.receive_with_tag::<T>(tag);
        check!(me, x == v, "got {x:?}, want {v:?}");
        check!(me, st.tag() == tag, "tag {}", st.tag());
        peer.send_with_tag(&x, tag);
    }
}

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    let self_only = size == 1;

    let peers: Vec<Rank> = if me == 0 {
        (1..size).collect()
    } else {
        vec![0]
    };
    for &p in &peers {
        let peer = world.process_at_rank(p);
        let root = me == 0;
        // 1. every primitive type, values that differ per peer
        let k = if root { p } else { me };
        echo(me, peer, root, k % 2 == 0, 1);
        echo(
            me,
            peer,
            root,
            char::from_u32(0x1F600 + k as u32).unwrap(),
            2,
        );
        echo(me, peer, root, -(k as i8), 3);
        echo(me, peer, root, -1000 * k as i16, 4);
        echo(me, peer, root, -100_000 * k, 5);
        echo(me, peer, root, -(1i64 << 40) * k as i64, 6);
        echo(me, peer, root, 200u8 + k as u8, 7);
        echo(me, peer, root, 60_000u16 + k as u16, 8);
        echo(me, peer, root, 4_000_000_000u32 + k as u32, 9);
        echo(me, peer, root, u64::MAX - k as u64, 10);
        echo(me, peer, root, isize::MIN + k as isize, 11);
        echo(me, peer, root, usize::MAX - k as usize, 12);
        echo(me, peer, root, 1.5f32 * k as f32, 13);
        echo(me, peer, root, std::f64::consts::PI * k as f64, 14);
        echo(me, peer, root, (k, k + 1, k + 2), 15);
        echo(
            me,
            peer,
            root,
            ([1.0f64 * k as f64; 2], k as u8, [[-(k as i16); 2]; 3]),
            16,
        );

        // 2. vec and slices, receive_vec (probe-sized)
        let v: Vec<f64> = (0..(100 + k)).map(|i| i as f64 * 0.5 + k as f64).collect();
        if root {
            peer.send_with_tag(&v, 20);
            peer.send_with_tag(&v[..10], 21);
            let (back, st) = peer.receive_vec_with_tag::<f64>(22);
            check!(me, back == v, "vec echo differs");
            check!(
                me,
                st.count(f64::equivalent_datatype()) == v.len() as i32,
                "{st:?}"
            );
            check!(
                me,
                st.count(u8::equivalent_datatype()) == 8 * v.len() as i32,
                "{st:?}"
            );
            check!(
                me,
                st.count(DatatypeRef::contiguous(4, &u8::equivalent_datatype()))
                    == 2 * v.len() as i32,
                "{st:?}"
            );
            let want16 = if v.len() & 1 == 0 {
                v.len() as i32 / 2
            } else {
                oxmpi::UNDEFINED
            };
            check!(
                me,
                st.count(DatatypeRef::contiguous(16, &u8::equivalent_datatype())) == want16,
                "{st:?}"
            );
        } else {
            let (got, st) = peer.receive_vec::<f64>();
            check!(me, got == v && st.tag() == 20, "receive_vec: {st:?}");
            let mut part = [0.0f64; 10];
            let st = peer.receive_into_with_tag(&mut part[..], 21);
            check!(
                me,
                part[..] == v[..10] && st.count(f64::equivalent_datatype()) == 10,
                "receive_into slice"
            );
            peer.send_with_tag(&got, 22);
        }

        // 3. probe and matched probe
        if root {
            peer.send_with_tag(&[7u16; 5][..], 30);
            peer.send_with_tag(&[8u32; 6][..], 31);
            peer.send_with_tag(&9u8, 32);
        } else {
            let st = peer.probe_with_tag(31);
            check!(
                me,
                st.tag() == 31 && st.count(u32::equivalent_datatype()) == 6,
                "probe {st:?}"
            );
            let (msg, st) = peer.matched_probe_with_tag(30);
            check!(
                me,
                st.count(u16::equivalent_datatype()) == 5,
                "mprobe {st:?}"
            );
            let (v16, _) = msg.matched_receive_vec::<u16>();
            check!(me, v16 == [7u16; 5], "matched_receive_vec {v16:?}");
            let (v32, _) = peer.matched_probe_with_tag(31).matched_receive_vec::<u32>();
            check!(me, v32 == [8u32; 6], "tuple matched_receive_vec {v32:?}");
            let mut b = 0u8;
            loop {
                if let Some((msg, st)) = peer.immediate_matched_probe_with_tag(32) {
                    check!(me, st.tag() == 32, "improbe tag");
                    msg.matched_receive_into(&mut b);
                    break;
                }
            }
            check!(me, b == 9, "improbe value {b}");
            check!(
                me,
                peer.immediate_probe_with_tag(32).is_none(),
                "nothing left to probe"
            );
        }

        // 4. send modes
        if root {
            peer.synchronous_send_with_tag(&41i32, 40);
            // SAFETY-free alternative to the unsafe rsmpi-compatible ready_send:
            peer.try_ready_send_with_tag(&42i32, 40).unwrap();
            // SAFETY: the rsmpi-compatible form; oxmpi delivers it in any case.
            unsafe { peer.ready_send_with_tag(&43i32, 40) };
        } else {
            for want in 41..=43 {
                let (x, _) = peer.receive_with_tag::<i32>(40);
                check!(me, x == want, "mode send got {x}, want {want}");
            }
        }
    }

    // 5. buffered sends from every rank to rank 0, received with any_process
    let mut universe = universe;
    universe.set_buffer_size(4096);
    check!(me, universe.buffer_size() == 4096, "buffer size");
    let world = universe.world();
    world
        .process_at_rank(0)
        .buffered_send_with_tag(&[me; 8], 50);
    world
        .process_at_rank(0)
        .buffered_send_with_tag(&(me as u64 * 3), 51);
    if me == 0 {
        let mut seen = vec![0; size as usize];
        for _ in 0..size {
            let mut v = [-1 as Rank; 8];
            let st = world.any_process().receive_into_with_tag(&mut v, 50);
            check!(
                me,
                v == [st.source_rank(); 8],
                "any_process payload {v:?} from {}",
                st.source_rank()
            );
            seen[st.source_rank() as usize] += 1;
        }
        check!(me, seen.iter().all(|&c| c == 1), "sources {seen:?}");
        for _ in 0..size {
            let (x, st) = world.any_process().receive_with_tag::<u64>(51);
            check!(me, x == st.source_rank() as u64 * 3, "tagged any_process");
        }
    }
    universe.detach_buffer();
    check!(me, universe.buffer_size() == 0, "detached");
    let world = universe.world();

    // 6. send_receive family around the ring
    let next = world.process_at_rank((me + 1) % size);
    let prev = world.process_at_rank((me + size - 1) % size);
    let (got, st): (Rank, _) = p2p::send_receive(&me, &next, &prev);
    check!(
        me,
        got == prev.rank() && st.source_rank() == prev.rank(),
        "send_receive {got}"
    );
    let (got, _): (f64, _) = p2p::send_receive_with_tags(&(me as f64), &next, 60, &prev, 60);
    check!(me, got == prev.rank() as f64, "send_receive_with_tags");
    let out = [me; 4];
    let mut inp = [0; 4];
    p2p::send_receive_into(&out, &next, &mut inp, &prev);
    check!(me, inp == [prev.rank(); 4], "send_receive_into {inp:?}");
    let mut x = vec![me as i64; 3];
    let st = p2p::send_receive_replace_into(&mut x[..], &next, &prev);
    check!(
        me,
        x == vec![prev.rank() as i64; 3] && st.count(i64::equivalent_datatype()) == 3,
        "replace {x:?}"
    );
    let mut y = me;
    p2p::send_receive_replace_into_with_tags(&mut y, &next, 61, &prev, 61);
    check!(me, y == prev.rank(), "replace_with_tags");

    // 7. PROC_NULL
    world.null_process().send(&1i32);
    let st = world.null_process().receive_into(&mut y);
    check!(
        me,
        st.source_rank() == oxmpi_core::PROC_NULL && st.byte_count() == 0,
        "proc null {st:?}"
    );

    if self_only {
        check!(me, world.this_process().is_self(), "self");
    }
    println!("api_p2p: rank {me} of {size} ok");
}
