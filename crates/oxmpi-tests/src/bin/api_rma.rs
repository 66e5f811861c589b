//! One-sided communication through the `oxmpi` API, on any number of ranks and hosts:
//! fence epochs (put, get), passive-target locks (exclusive read-modify-write,
//! shared atomic adds, compare-and-swap tickets), allocated and created windows, and
//! `try_*` errors. Prints `api_rma: rank R of N ok`.

use oxmpi::collective::SystemOperation;
use oxmpi::traits::*;
use oxmpi::window::{LockType, Replace, Window};
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
    check!(me, l[3] == -1 && l[4 + N / 2] == -1, "put wrote outside its range");
    for (i, v) in l[4..4 + N / 2].iter().enumerate() {
        check!(me, *v == left as i64 * 1000 + i as i64, "fence put: element {i} is {v}");
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
            check!(me, (0..10 * size as i64).contains(&old), "fetch_and_op saw {old}");
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
        check!(me, (0..me as i64).contains(&was), "ticket {was} is not below mine");
    });
    world.barrier();
    let got = win.lock(0, LockType::Shared, |a| {
        let mut v = [0i64; 4];
        a.get(0, 0, &mut v);
        v
    });
    let n = size as i64;
    check!(me, got == [10 * n, 20 * n, 10 * n, n], "counters on rank 0: {got:?}");
    // atomic write, atomic read
    world.barrier();
    win.lock(right, LockType::Shared, |a| a.accumulate(right, 5, &[me as i64], Replace));
    world.barrier();
    let v = win.lock(me, LockType::Shared, |a| a.try_atomic_read(me, 5).unwrap());
    check!(me, v == left as i64, "replace: {v}");
    // errors: out of range, bad rank
    let e = win.lock(right, LockType::Shared, |a| a.try_put(right, N, &[1]).unwrap_err());
    check!(me, e.class == ErrorClass::RmaRange, "past the end: {e}");
    let e = win.lock(right, LockType::Shared, |a| a.try_get(size, 0, &mut [0]).unwrap_err());
    check!(me, e.class == ErrorClass::Rank, "bad rank: {e}");
    if size >= 3 {
        let e = win.try_lock(right, LockType::Exclusive, |a| a.try_put(left, 0, &[1])).unwrap_err();
        check!(me, e.class == ErrorClass::RmaSync, "unlocked target: {e}");
    }
    world.barrier();
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
        let e = Window::<i32>::try_allocate_shared(&world, 8).err().map(|e| e.class);
        check!(me, e == Some(ErrorClass::RmaShared), "shared memory across hosts: {e:?}");
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
    println!("api_rma: rank {me} of {size} ok");
}
