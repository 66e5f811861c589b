//! One-sided communication through the `oxmpi` API, on any number of ranks and hosts:
//! fence epochs (put, get), passive-target locks (exclusive read-modify-write,
//! shared atomic adds, compare-and-swap tickets), allocated and created windows, and
//! `try_*` errors, post/start/complete/wait with groups (a ring, and a star with
//! `test` polling), dynamic windows (attach, exchange addresses, detach), and windows
//! forgotten with `std::mem::forget` (other processes' puts reach the window's own
//! copy, never the slice whose borrow ended). Prints `api_rma: rank R of N ok`.

use oxmpi::collective::SystemOperation;
use oxmpi::traits::*;
use oxmpi::window::{Address, DynamicWindow, LockType, Replace, Window};
use oxmpi::ErrorClass;
use oxmpi_tests::check;

const N: usize = 64;

fn exercise(me: i32, size: i32, win: &mut Window<'_, i64>, world: &impl CommunicatorCollectives) {
    let (right, left) = ((me + 1) % size, (me + size - 1) % size);
    win.local().fill(-1);
    world.barrier();
    // fence: put a block to the right, read it back from there
    let block: Vec<i64> = (0..N as i64 / 2).map(|i| me as i64 * 1000 + i).collect();
    win.fence(|a| a.put(right, 4, &block));
    let l = win.local();
    check!(
        me,
        l[3] == -1 && l[4 + N / 2] == -1,
        "put wrote outside its range"
    );
    for (i, v) in l[4..4 + N / 2].iter().enumerate() {
        check!(
            me,
            *v == left as i64 * 1000 + i as i64,
            "fence put: element {i} is {v}"
        );
    }
    world.barrier();
    let mut back = vec![0i64; N / 2];
    win.fence(|a| a.get(right, 4, &mut back));
    check!(me, back == block, "fence get returned {:?}", &back[..4]);
    // exclusive read-modify-write on rank 0, from everyone
    win.fence(|_| ());
    if me == 0 {
        win.local()[..4].fill(0);
    }
    world.barrier();
    for _ in 0..10 {
        win.lock(0, LockType::Exclusive, |a| {
            let mut x = [0i64];
            a.get(0, 0, &mut x);
            a.put(0, 0, &[x[0] + 1]);
        });
    }
    // shared locks: atomic adds and fetch_and_op
    for _ in 0..10 {
        win.lock(0, LockType::Shared, |a| {
            a.accumulate(0, 1, &[2], SystemOperation::sum());
            let old = a.fetch_and_op(0, 2, 1, SystemOperation::sum());
            check!(
                me,
                (0..10 * size as i64).contains(&old),
                "fetch_and_op saw {old}"
            );
        });
    }
    // a ticket: compare_and_swap in rank order (after everyone's exclusive locks:
    // a shared lock_all held while waiting for the ticket would keep them out)
    world.barrier();
    win.lock_all(|a| loop {
        let was = a.compare_and_swap(0, 3, me as i64 + 1, me as i64);
        a.flush(0).unwrap();
        if was == me as i64 {
            break;
        }
        check!(
            me,
            (0..me as i64).contains(&was),
            "ticket {was} is not below mine"
        );
    });
    world.barrier();
    let got = win.lock(0, LockType::Shared, |a| {
        let mut v = [0i64; 4];
        a.get(0, 0, &mut v);
        v
    });
    let n = size as i64;
    check!(
        me,
        got == [10 * n, 20 * n, 10 * n, n],
        "counters on rank 0: {got:?}"
    );
    // atomic write, atomic read
    world.barrier();
    win.lock(right, LockType::Shared, |a| {
        a.accumulate(right, 5, &[me as i64], Replace)
    });
    world.barrier();
    let v = win.lock(me, LockType::Shared, |a| a.try_atomic_read(me, 5).unwrap());
    check!(me, v == left as i64, "replace: {v}");
    // errors: out of range, bad rank
    let e = win.lock(right, LockType::Shared, |a| {
        a.try_put(right, N, &[1]).unwrap_err()
    });
    check!(me, e.class == ErrorClass::RmaRange, "past the end: {e}");
    let e = win.lock(right, LockType::Shared, |a| {
        a.try_get(size, 0, &mut [0]).unwrap_err()
    });
    check!(me, e.class == ErrorClass::Rank, "bad rank: {e}");
    if size >= 3 {
        let e = win
            .try_lock(right, LockType::Exclusive, |a| a.try_put(left, 0, &[1]))
            .unwrap_err();
        check!(me, e.class == ErrorClass::RmaSync, "unlocked target: {e}");
    }
    world.barrier();
}

/// Post/start/complete/wait: each rank exposes its window to its left neighbour and
/// accesses its right one at once; then a star where rank 0 exposes to all and polls.
fn pscw(me: i32, size: i32, world: &impl CommunicatorCollectives) {
    let (right, left) = ((me + 1) % size, (me + size - 1) % size);
    let mut win = Window::<i32>::allocate(world, 4);
    let g = world.group();
    for round in 0..3 {
        win.post(&g.include(&[left]), |e| {
            e.start(&g.include(&[right]), |a| {
                a.put(right, 1, &[me * 10 + round])
            });
        });
        let got = win.local()[1];
        check!(
            me,
            got == left * 10 + round,
            "pscw ring round {round}: {got}"
        );
    }
    // access outside the start group is an epoch error
    if size >= 3 {
        let e = win.post(&g.include(&[left]), |e| {
            e.try_start(&g.include(&[right]), |a| a.try_put(left, 0, &[1]))
                .unwrap_err()
        });
        check!(
            me,
            e.class == ErrorClass::RmaSync,
            "target outside the start group: {e}"
        );
    }
    world.barrier();
    if me == 0 {
        let others: Vec<i32> = (1..size).collect();
        win.local()[0] = 0;
        win.post(&g.include(&others), |e| {
            let mut polls = 0u64;
            while !e.test().unwrap() {
                polls += 1;
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
            check!(me, e.test().unwrap(), "test after the end: {polls}");
        });
        let v = win.local()[0];
        check!(me, v == (1..size).sum::<i32>(), "star sum {v}");
    } else {
        win.start(&g.include(&[0]), |a| {
            a.accumulate(0, 0, &[me], SystemOperation::sum())
        });
    }
    world.barrier();
}

/// A dynamic window: every rank attaches two slices, publishes their addresses, and
/// the others write into them; a detached slice comes back, and is out of reach after.
fn dynamic(me: i32, size: i32, world: &impl CommunicatorCollectives) {
    let (right, left) = ((me + 1) % size, (me + size - 1) % size);
    let mut a_mem = vec![-1i64; 8];
    let mut b_mem = vec![-1i64; 3];
    let mut win = DynamicWindow::<i64>::create(world);
    let a = win.attach(&mut a_mem);
    let b = win.attach(&mut b_mem);
    let mine = [a.to_raw(), b.to_raw()];
    let mut all = vec![0u64; 2 * size as usize];
    world.all_gather_into(&mine[..], &mut all[..]);
    let ra = Address::<i64>::from_raw(all[2 * right as usize]);
    let rb = Address::<i64>::from_raw(all[2 * right as usize + 1]);
    win.fence(|acc| {
        acc.put(right, ra.at(2), &[me as i64, me as i64 + 1]);
        acc.accumulate(right, rb.at(0), &[5], SystemOperation::sum());
    });
    let av = win.local(a).unwrap().to_vec();
    check!(
        me,
        av[1] == -1 && av[2] == left as i64 && av[3] == left as i64 + 1 && av[4] == -1,
        "dynamic put: {av:?}"
    );
    check!(me, win.local(b).unwrap()[0] == 4, "dynamic accumulate");
    // past the end of an attached slice: a range error, nothing written
    let e = win.lock(right, LockType::Shared, |acc| {
        acc.try_put(right, rb.at(2), &[7, 7]).unwrap_err()
    });
    check!(
        me,
        e.class == ErrorClass::RmaRange,
        "past an attached slice: {e}"
    );
    world.barrier();
    let back = win.detach(b).unwrap();
    check!(me, back.len() == 3 && back[1] == -1, "detached slice");
    check!(
        me,
        win.detach(b).unwrap_err().class == ErrorClass::RmaAttach,
        "detach twice"
    );
    world.barrier();
    let e = win.lock(right, LockType::Shared, |acc| {
        acc.try_put(right, rb.at(0), &[9]).unwrap_err()
    });
    check!(
        me,
        e.class == ErrorClass::RmaRange,
        "detached memory is out of reach: {e}"
    );
    world.barrier();
    drop(win);
    check!(
        me,
        b_mem[1] == -1 && a_mem[2] == left as i64,
        "memory handed back"
    );
}

/// A window forgotten (`std::mem::forget`) is never freed, but what it leaves exposed
/// is its own copy of the slice: rank 1's puts to rank 0 after rank 0 forgot its
/// windows (created over a slice, and dynamic with a slice attached) leave rank 0's
/// slices as they were. (The windows cannot be freed collectively any more, so every
/// process forgets them.)
fn forgotten(me: i32, size: i32, world: &impl CommunicatorCollectives) {
    if size < 2 {
        return;
    }
    let mut mem = vec![7i64; 4];
    let mut dmem = vec![7i64; 4];
    let mut win = Window::create(world, &mut mem);
    let mut dwin = DynamicWindow::<i64>::create(world);
    let mut addr = dwin.attach(&mut dmem).to_raw();
    world.process_at_rank(0).broadcast_into(&mut addr);
    let at0 = Address::<i64>::from_raw(addr);
    if me == 0 {
        std::mem::forget(win);
        std::mem::forget(dwin);
        world.barrier();
        world.barrier();
        check!(
            me,
            mem == [7; 4] && dmem == [7; 4],
            "a forgotten window's puts reached the slices: {mem:?} {dmem:?}"
        );
    } else {
        world.barrier();
        if me == 1 {
            win.lock(0, LockType::Exclusive, |acc| acc.put(0, 0, &[1, 2, 3, 4]));
            dwin.lock(0, LockType::Exclusive, |acc| {
                acc.put(0, at0.at(0), &[1, 2, 3, 4])
            });
        }
        world.barrier();
        std::mem::forget(win);
        std::mem::forget(dwin);
    }
}

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    {
        let mut win = Window::<i64>::allocate(&world, N);
        check!(me, win.len() == N, "len");
        exercise(me, size, &mut win, &world);
    }
    {
        let mut mem = vec![0i64; N];
        let mut win = Window::create(&world, &mut mem);
        exercise(me, size, &mut win, &world);
        win.local()[0] = 42;
        drop(win);
        check!(me, mem[0] == 42, "created window is the program's memory");
    }
    if std::env::args().nth(1).as_deref() == Some("multihost") {
        let e = Window::<i32>::try_allocate_shared(&world, 8)
            .err()
            .map(|e| e.class);
        check!(
            me,
            e == Some(ErrorClass::RmaShared),
            "shared memory across hosts: {e:?}"
        );
    } else {
        let mut win = Window::<i32>::allocate_shared(&world, 8);
        win.local().fill(me);
        win.fence(|_| ());
        for r in 0..size {
            let v = win.shared(r).unwrap();
            check!(me, v == vec![r; 8], "shared memory of {r}: {v:?}");
        }
        win.fence(|_| ());
    }
    pscw(me, size, &world);
    dynamic(me, size, &world);
    forgotten(me, size, &world);
    println!("api_rma: rank {me} of {size} ok");
}
