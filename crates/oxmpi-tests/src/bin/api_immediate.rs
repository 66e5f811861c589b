//! Non-blocking operations through the `oxmpi` API: scopes, WaitGuard, CancelGuard,
//! cancel, test, wait_any, RequestCollection, immediate matched receive.
//! Every rank exchanges with its ring neighbours; runs on any size (1 = self-sends).

use oxmpi::request::{self, multiple_scope, scope, CancelGuard, StaticScope, WaitGuard};
use oxmpi::traits::*;
use oxmpi_tests::check;

static STATIC_OUT: [u32; 4] = [1, 2, 3, 4];

/// A struct with padding: its datatype skips the gaps (received by unpacking).
#[derive(Equivalence, Clone, Copy, Debug, PartialEq)]
struct Padded {
    a: u8,
    b: f64,
    c: i16,
}

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    let next = world.process_at_rank((me + 1) % size);
    let prev = world.process_at_rank((me + size - 1) % size);

    // 1. immediate send/receive with wait, in a scope
    let out: Vec<f64> = (0..1000).map(|i| (i + me) as f64).collect();
    let mut inp = vec![0.0f64; 1000];
    scope(|s| {
        let rr = prev.immediate_receive_into_with_tag(s, &mut inp[..], 1);
        let sr = next.immediate_send_with_tag(s, &out[..], 1);
        let st = rr.wait();
        check!(
            me,
            st.source_rank() == prev.rank() && st.tag() == 1,
            "irecv status {st:?}"
        );
        sr.wait_without_status();
    });
    check!(
        me,
        inp.iter()
            .enumerate()
            .all(|(i, &x)| x == (i as i32 + prev.rank()) as f64),
        "irecv data"
    );

    // 2. WaitGuard on both ends; synchronous and buffered immediate sends; test loop
    let mut a = [0i32; 3];
    let mut b = 0u8;
    let a_out = [me; 3];
    let x = me as u8;
    scope(|s| {
        let _g1 = WaitGuard::from(next.immediate_synchronous_send_with_tag(s, &a_out, 2));
        let mut r = prev.immediate_receive_into_with_tag(s, &mut a, 2);
        let st = loop {
            match r.test() {
                Ok(st) => break st,
                Err(again) => r = again,
            }
        };
        check!(
            me,
            st.count(i32::equivalent_datatype()) == 3,
            "test status {st:?}"
        );
        let _g2: WaitGuard<'_, u8, _> = prev.immediate_receive_into_with_tag(s, &mut b, 3).into();
        // SAFETY: the rsmpi-compatible unsafe form; safe in oxmpi.
        let r3 = unsafe { next.immediate_ready_send_with_tag(s, &x, 3) };
        r3.wait();
    });
    check!(
        me,
        a == [prev.rank(); 3] && b == prev.rank() as u8,
        "guards {a:?} {b}"
    );

    // 3. a StaticScope request on 'static data
    let sreq = next.immediate_send_with_tag(StaticScope, &STATIC_OUT, 4);
    let (v, _) = prev.receive_vec_with_tag::<u32>(4);
    sreq.wait();
    check!(me, v == STATIC_OUT, "static {v:?}");

    // 4. cancel a receive that never matches: status says cancelled
    let mut never = 0i64;
    scope(|s| {
        let r = world
            .any_process()
            .immediate_receive_into_with_tag(s, &mut never, 999);
        r.cancel();
        let st = r.wait();
        check!(me, st.is_cancelled(), "cancelled receive status {st:?}");
    });
    // and a CancelGuard completes a pending receive when dropped
    scope(|s| {
        let _g = CancelGuard::from(
            world
                .any_process()
                .immediate_receive_into_with_tag(s, &mut never, 998),
        );
    });
    check!(me, never == 0, "cancelled receive wrote {never}");

    // 5. wait_any over a Vec of requests
    let sends: Vec<i32> = (0..4).map(|i| me * 10 + i).collect();
    let mut recvs = vec![0i32; 4];
    scope(|s| {
        let mut reqs = Vec::new();
        for (i, x) in recvs.iter_mut().enumerate() {
            reqs.push(prev.immediate_receive_into_with_tag(s, x, 10 + i as i32));
        }
        for (i, x) in sends.iter().enumerate().rev() {
            next.send_with_tag(x, 10 + i as i32);
        }
        let mut done = 0;
        while let Some((_, st)) = request::wait_any(&mut reqs) {
            check!(
                me,
                (10..14).contains(&st.tag()),
                "wait_any tag {}",
                st.tag()
            );
            done += 1;
        }
        check!(me, done == 4 && reqs.is_empty(), "wait_any finished {done}");
    });
    check!(
        me,
        recvs == (0..4).map(|i| prev.rank() * 10 + i).collect::<Vec<_>>(),
        "wait_any data {recvs:?}"
    );

    // 6. RequestCollection: wait_all, wait_some, wait_any, test_any / test_all
    let mut bufs = vec![[0u16; 2]; 6];
    let out: Vec<[u16; 2]> = (0..6).map(|i| [me as u16, i]).collect();
    multiple_scope(6, |s, coll| {
        for (i, b) in bufs.iter_mut().enumerate() {
            coll.add(prev.immediate_receive_into_with_tag(s, b, 20 + i as i32));
        }
        for (i, o) in out.iter().enumerate() {
            next.send_with_tag(o, 20 + i as i32);
        }
        let mut result = Vec::new();
        let first = coll.wait_any().expect("one completes");
        check!(
            me,
            first.2[0] == prev.rank() as u16,
            "collection wait_any data"
        );
        coll.wait_some(&mut result);
        let n = result.len();
        check!(me, n >= 1, "wait_some completed {n}");
        check!(
            me,
            result
                .iter()
                .all(|(i, st, d)| d[1] == *i as u16 && st.tag() == 20 + *i as i32),
            "wait_some completions carry their index, status and buffer"
        );
        let remaining = coll.incomplete();
        check!(me, remaining == 6 - 1 - n, "incomplete {remaining}");
        while !coll.test_all(&mut result) {
            check!(
                me,
                result.is_empty(),
                "test_all clears the result when not all done"
            );
        }
        check!(
            me,
            result.len() == 6 - 1 - n,
            "test_all completed the rest: {}",
            result.len()
        );
        check!(me, coll.incomplete() == 0, "all complete");
        check!(
            me,
            coll.test_any().is_none() && coll.wait_any().is_none(),
            "nothing left"
        );
    });
    check!(
        me,
        bufs.iter()
            .enumerate()
            .all(|(i, b)| *b == [prev.rank() as u16, i as u16]),
        "collection data {bufs:?}"
    );

    // 6b. wait_all over receives hands out each completion, in index order, with its
    // status and its own buffer (handed back inside the wait, PROFILE.md rrate31).
    let mut slots = vec![[0u16; 2]; 4];
    multiple_scope(4, |s, coll| {
        for (i, b) in slots.iter_mut().enumerate() {
            coll.add(prev.immediate_receive_into_with_tag(s, b, 80 + i as i32));
        }
        for i in 0..4u16 {
            next.send_with_tag(&[me as u16, i][..], 80 + i32::from(i));
        }
        let mut result = Vec::new();
        coll.wait_all(&mut result);
        check!(
            me,
            result.len() == 4
                && result.iter().enumerate().all(|(k, (i, st, d))| *i == k
                    && st.tag() == 80 + k as i32
                    && st.source_rank() == prev.rank()
                    && **d == [prev.rank() as u16, k as u16]),
            "wait_all receive completions {result:?}"
        );
    });
    check!(
        me,
        slots
            .iter()
            .enumerate()
            .all(|(i, b)| *b == [prev.rank() as u16, i as u16]),
        "wait_all receive data {slots:?}"
    );

    // 7. immediate matched receive
    next.send_with_tag(&[5u64, 6, 7][..], 30);
    let (msg, st) = prev.matched_probe_with_tag(30);
    let mut got = vec![0u64; st.count(u64::equivalent_datatype()) as usize];
    scope(|s| {
        let r = msg.immediate_matched_receive_into(s, &mut got[..]);
        let st = r.wait();
        check!(me, st.source_rank() == prev.rank(), "imrecv status");
    });
    check!(me, got == [5, 6, 7], "imrecv data {got:?}");

    // 8. wait_for_data hands the buffer back
    let mut z = [0i8; 2];
    let data = scope(|s| {
        let r = prev.immediate_receive_into_with_tag(s, &mut z, 40);
        next.send_with_tag(&[-1i8, -2], 40);
        *r.wait_for_data()
    });
    check!(me, data == [-1, -2], "wait_for_data {data:?}");

    // 9. ReceiveFuture: get, try, and drop (cancels)
    let fut = prev.immediate_receive_with_tag::<(f32, u8, f32)>(50);
    next.send_with_tag(&(me as f32, 7u8, 0.5f32), 50);
    let (v, st) = fut.get();
    check!(
        me,
        v == (prev.rank() as f32, 7, 0.5) && st.tag() == 50,
        "future get {v:?}"
    );
    let mut fut = prev.immediate_receive_with_tag::<u16>(51);
    next.send_with_tag(&7u16, 51);
    let (v, _) = loop {
        match fut.r#try() {
            Ok(x) => break x,
            Err(f) => fut = f,
        }
    };
    check!(me, v == 7, "future try {v}");
    drop(world.any_process().immediate_receive_with_tag::<u64>(997));

    // An immediate reduction with a user operation moved into the call: the request
    // keeps the operation alive until it completes (it runs during the wait).
    let mine = [me as i64 + 1; 3];
    let mut maxed = [0i64; 3];
    scope(|s| {
        // The closure owns state (so the operation's box is a real allocation).
        let floor = vec![i64::MIN; 3];
        let op = oxmpi::collective::UserOperation::commutative(move |a, b| {
            let a = a.downcast::<i64>().unwrap();
            let b = b.downcast::<i64>().unwrap();
            for ((y, x), f) in b.iter_mut().zip(a).zip(&floor) {
                *y = (*y).max(*x).max(*f);
            }
        });
        let r = world.immediate_all_reduce_into(s, &mine[..], &mut maxed[..], op);
        // Other work between the start and the wait.
        let filler: Vec<u8> = vec![0xAA; 4096];
        std::hint::black_box(&filler);
        r.wait();
    });
    check!(
        me,
        maxed == [size as i64; 3],
        "immediate user-op allreduce {maxed:?}"
    );

    // Persistent collectives: each start runs the operation again over the same buffers.
    let n = size as i64;
    let root = world.process_at_rank(0);
    let x = [me as i64 + 1, 2];
    let mut sum = [0i64; 2];
    let mut prod = [0i64; 1];
    let one = [me as i64 % 3 + 1];
    let mut all = vec![0i32; size as usize];
    let mine = [me * 10];
    let mut b = [0u32; 3];
    let send: Vec<u8> = (0..size).map(|j| (me * size + j) as u8).collect();
    let mut recv = vec![0u8; size as usize];
    let mut ex = [0i64; 1];
    scope(|s| {
        let mut r =
            world.all_reduce_init(s, &x, &mut sum, oxmpi::collective::SystemOperation::sum());
        for run in 0..3 {
            check!(me, !r.is_active(), "inactive before run {run}");
            r.start();
            check!(
                me,
                r.try_start().is_err(),
                "a second start of an active request is refused"
            );
            r.wait();
            let got = r.data().unwrap();
            check!(
                me,
                got == &[n * (n + 1) / 2, 2 * n],
                "persistent allreduce run {run}: {got:?}"
            );
        }
        // A user operation moved into the init call lives as long as the request.
        let op = oxmpi::collective::UserOperation::commutative(|a, b| {
            let a = a.downcast::<i64>().unwrap();
            let b = b.downcast::<i64>().unwrap();
            for (y, x) in b.iter_mut().zip(a) {
                *y *= *x;
            }
        });
        let mut p = world.scan_init(s, &one, &mut prod, op);
        let want: i64 = (0..=me as i64).map(|r| r % 3 + 1).product();
        for run in 0..2 {
            p.start();
            if p.test().is_none() {
                p.wait();
            }
            check!(
                me,
                p.data().unwrap()[0] == want,
                "persistent user-op scan run {run}: {:?} != {want}",
                p.data()
            );
        }
        let mut g = world.all_gather_init(s, &mine[..], &mut all[..]);
        g.start();
        g.wait();
        check!(
            me,
            g.data()
                .unwrap()
                .iter()
                .enumerate()
                .all(|(i, v)| *v == i as i32 * 10),
            "persistent allgather {:?}",
            g.data()
        );
        let mut bc = root.broadcast_init(s, &mut b[..]);
        for run in 0..3u32 {
            if me == 0 {
                bc.data_mut()
                    .unwrap()
                    .copy_from_slice(&[run, run + 1, run + 2]);
            }
            bc.start();
            bc.wait();
            check!(
                me,
                bc.data().unwrap() == [run, run + 1, run + 2],
                "persistent bcast run {run}: {:?}",
                bc.data()
            );
        }
        let mut a = world.all_to_all_init(s, &send[..], &mut recv[..]);
        a.start();
        a.wait();
        check!(
            me,
            a.data()
                .unwrap()
                .iter()
                .enumerate()
                .all(|(i, v)| *v == (i as i32 * size + me) as u8),
            "persistent alltoall {:?}",
            a.data()
        );
        // Dropped while active: the drop waits for the run, then frees.
        let mut e = world.exclusive_scan_init(
            s,
            &x[..1],
            &mut ex,
            oxmpi::collective::SystemOperation::sum(),
        );
        e.start();
        drop(e);
    });
    if me > 0 {
        check!(
            me,
            ex[0] == (1..=me as i64).sum::<i64>(),
            "persistent exscan {ex:?}"
        );
    }
    let mut bar = world.barrier_init();
    for _ in 0..3 {
        bar.start();
        bar.wait();
    }
    drop(bar);

    // ReceiveFuture (`immediate_receive`): a value received into memory the future owns,
    // contiguous (bytes) and a struct with padding (unpacked by its datatype); `try`
    // before and after the send; one dropped unfinished is cancelled.
    let f = prev.immediate_receive_with_tag::<u64>(60);
    let f = match f.r#try() {
        Ok((v, _)) => {
            check!(me, false, "a value arrived before it was sent: {v}");
            unreachable!()
        }
        Err(f) => f,
    };
    let g = prev.immediate_receive_with_tag::<Padded>(61);
    // Every rank tried before any sends.
    world.barrier();
    next.send_with_tag(&(1000 + me as u64), 60);
    let p = Padded {
        a: me as u8,
        b: 0.5 + me as f64,
        c: -(me as i16),
    };
    next.send_with_tag(&p, 61);
    let (v, st) = f.get();
    check!(
        me,
        v == 1000 + prev.rank() as u64 && st.tag() == 60,
        "future value {v} {st:?}"
    );
    let mut g = g;
    let (q, _) = loop {
        match g.r#try() {
            Ok(x) => break x,
            Err(again) => g = again,
        }
    };
    let pr = prev.rank();
    check!(
        me,
        q == Padded {
            a: pr as u8,
            b: 0.5 + pr as f64,
            c: -(pr as i16)
        },
        "future struct {q:?}"
    );
    drop(prev.immediate_receive_with_tag::<u32>(62));
    world.barrier();

    // Forgotten requests: their scope owns the completion and waits for them at its
    // end. The peer sends late (after a go message sent once the request is
    // forgotten), so only the scope's wait makes the data arrive in time.
    let mut late = [0i64; 3];
    scope(|s| {
        let r = prev.immediate_receive_into_with_tag(s, &mut late[..], 70);
        std::mem::forget(r);
        prev.send_with_tag(&1u8, 71);
        let (go, _) = next.receive_with_tag::<u8>(71);
        // A peer sending to itself (1 rank) sends before its own scope ends.
        if size > 1 {
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        next.send_with_tag(&[i64::from(me) + 100, 7, go.into()][..], 70);
    });
    check!(
        me,
        late == [i64::from(prev.rank()) + 100, 7, 1],
        "the scope waited for a forgotten receive: {late:?}"
    );
    // The same inside a collection's scope: its wait_all releases from the scope the
    // requests it completed, never the forgotten one (PROFILE.md rate18b).
    let mut late2 = [0i64; 3];
    let mut got = [0i64; 2];
    let out2 = [i64::from(me), 5];
    multiple_scope(3, |s, coll| {
        let r = prev.immediate_receive_into_with_tag(s, &mut late2[..], 72);
        std::mem::forget(r);
        coll.add(prev.immediate_receive_into_with_tag(s, &mut got[..], 73));
        coll.add(next.immediate_send_with_tag(s, &out2[..], 73));
        let mut done = Vec::new();
        coll.wait_all(&mut done);
        prev.send_with_tag(&1u8, 74);
        let (go, _) = next.receive_with_tag::<u8>(74);
        if size > 1 {
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        next.send_with_tag(&[i64::from(me) + 200, 9, go.into()][..], 72);
    });
    check!(
        me,
        late2 == [i64::from(prev.rank()) + 200, 9, 1] && got == [i64::from(prev.rank()), 5],
        "the collection's scope waited for a forgotten receive: {late2:?} {got:?}"
    );
    // A persistent collective forgotten while its run goes on: the other ranks join
    // the run late; the scope waits for it, then frees the request.
    let mut total = [0i32];
    let mine = [me + 1];
    scope(|s| {
        let mut r = world.all_reduce_init(
            s,
            &mine[..],
            &mut total[..],
            oxmpi::collective::SystemOperation::sum(),
        );
        if me == 0 {
            r.start();
            std::mem::forget(r);
        } else {
            std::thread::sleep(std::time::Duration::from_millis(300));
            r.start();
            r.wait();
        }
    });
    check!(
        me,
        total[0] == size * (size + 1) / 2,
        "the scope waited for a forgotten persistent run: {total:?}"
    );

    println!("api_immediate: rank {me} of {size} ok");
}
