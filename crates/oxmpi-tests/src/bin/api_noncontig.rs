//! Non-contiguous datatypes on both sides of every point-to-point and collective call of
//! the Rust API: a strided vector, an indexed type and a struct type (of a derived struct
//! with padding), each resized so that several elements tile a buffer. Every receive
//! lands in a buffer filled with a sentinel: the positions the datatype selects must hold
//! the sender's values in order, the others must keep the sentinel. Then the seed's
//! column-of-a-matrix gather and scatter (a matrix column as a vector type). Any size.

use std::fmt::Debug;

use oxmpi::collective::SystemOperation;
use oxmpi::datatype::{MutView, Partition, PartitionMut, UserDatatype, View};
use oxmpi::request::{scope, WaitGuard};
use oxmpi::topology::{Process, SimpleCommunicator};
use oxmpi::traits::*;
use oxmpi::Count;
use oxmpi_tests::check;

#[derive(Equivalence, Clone, Copy, Debug, PartialEq)]
struct S {
    a: u8,
    // padding
    b: f64,
    c: i16,
}

/// A datatype that selects `picks` (element positions) out of every `period` elements of T.
struct Layout {
    name: &'static str,
    dt: UserDatatype,
    period: usize,
    picks: Vec<usize>,
}

trait Elem: Equivalence + Copy + PartialEq + Debug + 'static {
    fn val(rank: i32, i: usize) -> Self;
    fn sentinel() -> Self;
    /// `n` elements of `dt` over `b` (checked to stay inside it).
    fn view<'d, 'b>(
        b: &'b [Self],
        n: Count,
        dt: &'d UserDatatype,
    ) -> View<'d, 'b, UserDatatype, [Self]>;
    /// As `view`, to be received into.
    fn view_mut<'d, 'b>(
        b: &'b mut [Self],
        n: Count,
        dt: &'d UserDatatype,
    ) -> MutView<'d, 'b, UserDatatype, [Self]>;
}

impl Elem for i32 {
    fn val(rank: i32, i: usize) -> i32 {
        rank * 100_000 + i as i32 + 1
    }
    fn view<'d, 'b>(
        b: &'b [i32],
        n: Count,
        dt: &'d UserDatatype,
    ) -> View<'d, 'b, UserDatatype, [i32]> {
        View::checked(b, n, dt).expect("the view fits its buffer")
    }
    fn view_mut<'d, 'b>(
        b: &'b mut [i32],
        n: Count,
        dt: &'d UserDatatype,
    ) -> MutView<'d, 'b, UserDatatype, [i32]> {
        MutView::checked(b, n, dt).expect("the view fits its buffer")
    }
    fn sentinel() -> i32 {
        -7
    }
}

impl Elem for S {
    fn val(rank: i32, i: usize) -> S {
        S {
            a: (i % 250) as u8 + 1,
            b: rank as f64 + i as f64 / 8.0,
            c: -(rank as i16) - 1,
        }
    }
    fn view<'d, 'b>(b: &'b [S], n: Count, dt: &'d UserDatatype) -> View<'d, 'b, UserDatatype, [S]> {
        // S has padding, so no checked view; the layouts are sized for `n` elements.
        // SAFETY: the struct layout's datatype selects whole S values by S's own datatype (never its padding), and callers size `b` for `n` of its elements.
        unsafe { View::with_count_and_datatype(b, n, dt) }
    }
    fn view_mut<'d, 'b>(
        b: &'b mut [S],
        n: Count,
        dt: &'d UserDatatype,
    ) -> MutView<'d, 'b, UserDatatype, [S]> {
        // SAFETY: as in `view`; S values written by S's datatype are valid S.
        unsafe { MutView::with_count_and_datatype(b, n, dt) }
    }
    fn sentinel() -> S {
        S {
            a: 0,
            b: -1.0,
            c: 0,
        }
    }
}

impl Layout {
    /// The positions `count` elements of the datatype select.
    fn positions(&self, count: usize) -> Vec<usize> {
        (0..count)
            .flat_map(|k| self.picks.iter().map(move |p| k * self.period + p))
            .collect()
    }
    fn buf<T: Elem>(&self, count: usize) -> Vec<T> {
        vec![T::sentinel(); count * self.period]
    }
    /// A send buffer: position j holds val(rank, j) (selected or not).
    fn source<T: Elem>(&self, rank: i32, count: usize) -> Vec<T> {
        (0..count * self.period).map(|j| T::val(rank, j)).collect()
    }
    /// The values `count` elements sent from `source(rank)` carry, in order.
    fn sent<T: Elem>(&self, rank: i32, count: usize) -> Vec<T> {
        self.positions(count)
            .into_iter()
            .map(|j| T::val(rank, j))
            .collect()
    }
    /// Checks that `buf`, received as elements `first..first + count` of the datatype,
    /// holds `want` at the selected positions and the sentinel elsewhere in that span.
    fn check<T: Elem>(&self, me: i32, what: &str, buf: &[T], first: usize, want: &[T]) {
        let count = want.len() / self.picks.len();
        let pos: Vec<usize> = self
            .positions(first + count)
            .into_iter()
            .skip(first * self.picks.len())
            .collect();
        for (p, w) in pos.iter().zip(want) {
            check!(
                me,
                buf[*p] == *w,
                "{} {what}: position {p} holds {:?}, want {w:?}",
                self.name,
                buf[*p]
            );
        }
        for j in first * self.period..(first + count) * self.period {
            if !pos.contains(&j) {
                check!(
                    me,
                    buf[j] == T::sentinel(),
                    "{} {what}: gap {j} was written: {:?}",
                    self.name,
                    buf[j]
                );
            }
        }
    }
}

fn layouts_i32() -> Vec<Layout> {
    let int = i32::equivalent_datatype();
    // 3 blocks of 1, stride 4: positions 0, 4, 8; tiled every 12 elements.
    let v = UserDatatype::vector(3, 1, 4, &int);
    let vector = UserDatatype::resized(&v, 0, 12 * 4);
    // blocks [2, 1] at [1, 5]: positions 1, 2, 5; tiled every 7.
    let ix = UserDatatype::indexed(&[2, 1], &[1, 5], &int);
    let indexed = UserDatatype::resized(&ix, 0, 7 * 4);
    vec![
        Layout {
            name: "vector",
            dt: vector,
            period: 12,
            picks: vec![0, 4, 8],
        },
        Layout {
            name: "indexed",
            dt: indexed,
            period: 7,
            picks: vec![1, 2, 5],
        },
    ]
}

fn layout_struct() -> Layout {
    // Two S (a struct datatype with padding) at elements 0 and 2 of every 3.
    let s = S::equivalent_datatype();
    let sz = std::mem::size_of::<S>() as isize;
    let st = UserDatatype::structured(&[1, 1], &[0, 2 * sz], &[s, s]);
    let st = UserDatatype::resized(&st, 0, 3 * sz);
    Layout {
        name: "struct",
        dt: st,
        period: 3,
        picks: vec![0, 2],
    }
}

fn point_to_point<T: Elem>(world: &SimpleCommunicator, l: &Layout) {
    let (me, size) = (world.rank(), world.size());
    let next = world.process_at_rank((me + 1) % size);
    let prev = world.process_at_rank((me + size - 1) % size);
    let pr = prev.rank();
    const N: usize = 3;
    let src: Vec<T> = l.source(me, N);
    let want: Vec<T> = l.sent(pr, N);
    let view = || T::view(&src[..], N as i32, &l.dt);

    // Blocking standard and synchronous sends into typed receives (rank 0 receives
    // first on one rank so that the ring cannot deadlock on synchronous sends).
    for sync in [false, true] {
        if sync && size == 1 {
            continue; // a synchronous send to oneself before the receive cannot complete
        }
        let mut dst: Vec<T> = l.buf(N);
        let recv = |dst: &mut Vec<T>| {
            let mut mv = T::view_mut(&mut dst[..], N as i32, &l.dt);
            let st = prev.receive_into_with_tag(&mut mv, 1);
            check!(
                me,
                st.source_rank() == pr && st.count(&l.dt) == N as i32,
                "{} status {st:?}",
                l.name
            );
        };
        let send = |p: &Process| {
            if sync {
                p.synchronous_send_with_tag(&view(), 1)
            } else {
                p.send_with_tag(&view(), 1)
            }
        };
        if me == 0 {
            send(&next);
            recv(&mut dst);
        } else {
            recv(&mut dst);
            send(&next);
        }
        l.check(
            me,
            if sync { "ssend/recv" } else { "send/recv" },
            &dst,
            0,
            &want,
        );
    }

    // The other send modes: buffered (blocking and immediate), synchronous immediate,
    // ready (the receive is posted before the barrier that precedes the send).
    for mode in 0..4 {
        let mut dst: Vec<T> = l.buf(N);
        let v = view();
        {
            let mut mv = T::view_mut(&mut dst[..], N as i32, &l.dt);
            scope(|s| {
                let r = prev.immediate_receive_into_with_tag(s, &mut mv, 9);
                world.barrier();
                match mode {
                    0 => next.buffered_send_with_tag(&v, 9),
                    1 => next
                        .immediate_buffered_send_with_tag(s, &v, 9)
                        .wait_without_status(),
                    2 => {
                        let g = next.immediate_synchronous_send_with_tag(s, &v, 9);
                        r.wait();
                        g.wait();
                        return;
                    }
                    _ => next.try_ready_send_with_tag(&v, 9).expect("ready send"),
                }
                r.wait();
            });
        }
        l.check(
            me,
            ["bsend", "ibsend", "issend", "rsend"][mode],
            &dst,
            0,
            &want,
        );
    }

    // Immediate send and receive.
    let mut dst: Vec<T> = l.buf(N);
    {
        let v = view();
        let mut mv = T::view_mut(&mut dst[..], N as i32, &l.dt);
        scope(|s| {
            let r = prev.immediate_receive_into_with_tag(s, &mut mv, 2);
            let _g = WaitGuard::from(next.immediate_send_with_tag(s, &v, 2));
            let st = r.wait();
            check!(
                me,
                st.count(&l.dt) == N as i32,
                "{} irecv status {st:?}",
                l.name
            );
        });
    }
    l.check(me, "isend/irecv", &dst, 0, &want);

    // A typed send received contiguously: the packed values in order.
    if size > 1 {
        let v = view();
        scope(|s| {
            let _g = WaitGuard::from(next.immediate_send_with_tag(s, &v, 3));
            let (got, _) = prev.receive_vec_with_tag::<T>(3);
            check!(
                me,
                got == want,
                "{} typed send -> receive_vec: {got:?}",
                l.name
            );
        });
        // And contiguous values received through the datatype.
        let mut dst: Vec<T> = l.buf(N);
        let packed = l.sent::<T>(me, N);
        scope(|s| {
            let _g = WaitGuard::from(next.immediate_send_with_tag(s, &packed[..], 4));
            let mut mv = T::view_mut(&mut dst[..], N as i32, &l.dt);
            prev.receive_into_with_tag(&mut mv, 4);
        });
        l.check(me, "contiguous send -> typed recv", &dst, 0, &want);
    }

    // send_receive_into: typed on both sides.
    let mut dst: Vec<T> = l.buf(N);
    {
        let v = view();
        let mut mv = T::view_mut(&mut dst[..], N as i32, &l.dt);
        let st =
            oxmpi::point_to_point::send_receive_into_with_tags(&v, &next, 5, &mut mv, &prev, 5);
        check!(
            me,
            st.source_rank() == pr,
            "{} sendrecv status {st:?}",
            l.name
        );
    }
    l.check(me, "send_receive_into", &dst, 0, &want);

    // send_receive_replace_into: the gaps keep their own values.
    let mut rep: Vec<T> = l.source(me, N);
    {
        let mut mv = T::view_mut(&mut rep[..], N as i32, &l.dt);
        oxmpi::point_to_point::send_receive_replace_into_with_tags(&mut mv, &next, 6, &prev, 6);
    }
    let pos = l.positions(N);
    for (j, x) in rep.iter().enumerate() {
        let w = if let Some(k) = pos.iter().position(|p| *p == j) {
            want[k]
        } else {
            T::val(me, j)
        };
        check!(
            me,
            *x == w,
            "{} sendrecv_replace at {j}: {x:?}, want {w:?}",
            l.name
        );
    }

    // Matched probe + matched receive, blocking and immediate.
    let mut dst: Vec<T> = l.buf(N);
    let v = view();
    scope(|s| {
        let _g = WaitGuard::from(next.immediate_send_with_tag(s, &v, 7));
        let (msg, st) = prev.matched_probe_with_tag(7);
        check!(
            me,
            st.count(&l.dt) == N as i32,
            "{} mprobe count {st:?}",
            l.name
        );
        let mut mv = T::view_mut(&mut dst[..], N as i32, &l.dt);
        msg.matched_receive_into(&mut mv);
    });
    l.check(me, "mprobe/mrecv", &dst, 0, &want);
    let mut dst: Vec<T> = l.buf(N);
    {
        let mut mv = T::view_mut(&mut dst[..], N as i32, &l.dt);
        scope(|s| {
            let _g = WaitGuard::from(next.immediate_send_with_tag(s, &v, 8));
            let (msg, _) = loop {
                if let Some(m) = prev.immediate_matched_probe_with_tag(8) {
                    break m;
                }
                std::thread::yield_now();
            };
            msg.immediate_matched_receive_into(s, &mut mv).wait();
        });
    }
    l.check(me, "improbe/imrecv", &dst, 0, &want);
}

fn collectives<T: Elem>(world: &SimpleCommunicator, l: &Layout) {
    let (me, size) = (world.rank(), world.size());
    let n = size as usize;
    let root = world.process_at_rank(0);
    let is_root = me == 0;

    // broadcast (blocking and immediate)
    for imm in [false, true] {
        let mut b: Vec<T> = if is_root { l.source(0, 2) } else { l.buf(2) };
        {
            let mut mv = T::view_mut(&mut b[..], 2, &l.dt);
            if imm {
                scope(|s| {
                    root.immediate_broadcast_into(s, &mut mv).wait();
                });
            } else {
                root.broadcast_into(&mut mv);
            }
        }
        if !is_root {
            l.check(me, "broadcast", &b, 0, &l.sent::<T>(0, 2));
        }
    }

    // gather: one element from each rank into element r of the root's buffer
    for imm in [false, true] {
        let src: Vec<T> = l.source(me, 1);
        let v = T::view(&src[..], 1, &l.dt);
        if is_root {
            let mut b: Vec<T> = l.buf(n);
            {
                let mut mv = T::view_mut(&mut b[..], size, &l.dt);
                if imm {
                    scope(|s| {
                        root.immediate_gather_into_root(s, &v, &mut mv).wait();
                    });
                } else {
                    root.gather_into_root(&v, &mut mv);
                }
            }
            for r in 0..n {
                l.check(me, "gather", &b, r, &l.sent::<T>(r as i32, 1));
            }
        } else if imm {
            scope(|s| {
                root.immediate_gather_into(s, &v).wait();
            });
        } else {
            root.gather_into(&v);
        }
    }

    // scatter: element r of the root's buffer to rank r
    for imm in [false, true] {
        let src: Vec<T> = l.source(0, n);
        let mut b: Vec<T> = l.buf(1);
        {
            let mut mv = T::view_mut(&mut b[..], 1, &l.dt);
            if is_root {
                let v = T::view(&src[..], size, &l.dt);
                if imm {
                    scope(|s| {
                        root.immediate_scatter_into_root(s, &v, &mut mv).wait();
                    });
                } else {
                    root.scatter_into_root(&v, &mut mv);
                }
            } else if imm {
                scope(|s| {
                    root.immediate_scatter_into(s, &mut mv).wait();
                });
            } else {
                root.scatter_into(&mut mv);
            }
        }
        let want: Vec<T> = l.sent::<T>(0, n)
            [me as usize * l.picks.len()..(me as usize + 1) * l.picks.len()]
            .to_vec();
        l.check(me, "scatter", &b, 0, &want);
    }

    // all_gather and all_to_all (blocking and immediate)
    for imm in [false, true] {
        let src: Vec<T> = l.source(me, 1);
        let v = T::view(&src[..], 1, &l.dt);
        let mut b: Vec<T> = l.buf(n);
        {
            let mut mv = T::view_mut(&mut b[..], size, &l.dt);
            if imm {
                scope(|s| {
                    world.immediate_all_gather_into(s, &v, &mut mv).wait();
                });
            } else {
                world.all_gather_into(&v, &mut mv);
            }
        }
        for r in 0..n {
            l.check(me, "all_gather", &b, r, &l.sent::<T>(r as i32, 1));
        }

        let src: Vec<T> = l.source(me, n);
        let v = T::view(&src[..], size, &l.dt);
        let mut b: Vec<T> = l.buf(n);
        {
            let mut mv = T::view_mut(&mut b[..], size, &l.dt);
            if imm {
                scope(|s| {
                    world.immediate_all_to_all_into(s, &v, &mut mv).wait();
                });
            } else {
                world.all_to_all_into(&v, &mut mv);
            }
        }
        let k = l.picks.len();
        for r in 0..n {
            // rank r sent me its element `me`
            let want = l.sent::<T>(r as i32, n)[me as usize * k..(me as usize + 1) * k].to_vec();
            l.check(me, "all_to_all", &b, r, &want);
        }
    }
}

/// The varcount collectives: one element per rank, placed in reverse rank order.
fn varcount<T: Elem>(world: &SimpleCommunicator, l: &Layout) {
    let (me, size) = (world.rank(), world.size());
    let n = size as usize;
    let k = l.picks.len();
    let root = world.process_at_rank(0);
    let ones = vec![1i32; n];
    let rev: Vec<i32> = (0..size).map(|r| size - 1 - r).collect();
    let fwd: Vec<i32> = (0..size).collect();
    let src1: Vec<T> = l.source(me, 1);
    let v1 = T::view(&src1[..], 1, &l.dt);

    for imm in [false, true] {
        // gather_varcount
        if me == 0 {
            let mut b: Vec<T> = l.buf(n);
            {
                let mut mv = T::view_mut(&mut b[..], size, &l.dt);
                let mut p = PartitionMut::new(&mut mv, &ones[..], &rev[..]);
                if imm {
                    scope(|s| {
                        root.immediate_gather_varcount_into_root(s, &v1, &mut p)
                            .wait();
                    });
                } else {
                    root.gather_varcount_into_root(&v1, &mut p);
                }
            }
            for r in 0..n {
                l.check(
                    me,
                    "gather_varcount",
                    &b,
                    n - 1 - r,
                    &l.sent::<T>(r as i32, 1),
                );
            }
        } else if imm {
            scope(|s| {
                root.immediate_gather_varcount_into(s, &v1).wait();
            });
        } else {
            root.gather_varcount_into(&v1);
        }

        // scatter_varcount: rank r gets element size-1-r of the root's buffer
        let srcn: Vec<T> = l.source(0, n);
        let mut b: Vec<T> = l.buf(1);
        {
            let mut mv = T::view_mut(&mut b[..], 1, &l.dt);
            if me == 0 {
                let vn = T::view(&srcn[..], size, &l.dt);
                let p = Partition::new(&vn, &ones[..], &rev[..]);
                if imm {
                    scope(|s| {
                        root.immediate_scatter_varcount_into_root(s, &p, &mut mv)
                            .wait();
                    });
                } else {
                    root.scatter_varcount_into_root(&p, &mut mv);
                }
            } else if imm {
                scope(|s| {
                    root.immediate_scatter_varcount_into(s, &mut mv).wait();
                });
            } else {
                root.scatter_varcount_into(&mut mv);
            }
        }
        let e = n - 1 - me as usize;
        l.check(
            me,
            "scatter_varcount",
            &b,
            0,
            &l.sent::<T>(0, n)[e * k..(e + 1) * k],
        );

        // all_gather_varcount
        let mut b: Vec<T> = l.buf(n);
        {
            let mut mv = T::view_mut(&mut b[..], size, &l.dt);
            let mut p = PartitionMut::new(&mut mv, &ones[..], &rev[..]);
            if imm {
                scope(|s| {
                    world
                        .immediate_all_gather_varcount_into(s, &v1, &mut p)
                        .wait();
                });
            } else {
                world.all_gather_varcount_into(&v1, &mut p);
            }
        }
        for r in 0..n {
            l.check(
                me,
                "all_gather_varcount",
                &b,
                n - 1 - r,
                &l.sent::<T>(r as i32, 1),
            );
        }

        // all_to_all_varcount: element r to rank r; from rank r into element size-1-r
        let srcn: Vec<T> = l.source(me, n);
        let vn = T::view(&srcn[..], size, &l.dt);
        let p = Partition::new(&vn, &ones[..], &fwd[..]);
        let mut b: Vec<T> = l.buf(n);
        {
            let mut mv = T::view_mut(&mut b[..], size, &l.dt);
            let mut q = PartitionMut::new(&mut mv, &ones[..], &rev[..]);
            if imm {
                scope(|s| {
                    world
                        .immediate_all_to_all_varcount_into(s, &p, &mut q)
                        .wait();
                });
            } else {
                world.all_to_all_varcount_into(&p, &mut q);
            }
        }
        let m = me as usize;
        for r in 0..n {
            l.check(
                me,
                "all_to_all_varcount",
                &b,
                n - 1 - r,
                &l.sent::<T>(r as i32, n)[m * k..(m + 1) * k],
            );
        }
    }
}

/// Scans, reduce_scatter_block and the immediate reductions through the datatype.
fn more_reductions(world: &SimpleCommunicator, l: &Layout) {
    let (me, size) = (world.rank(), world.size());
    let n = size as usize;
    let sum = SystemOperation::sum();
    let src: Vec<i32> = l.source(me, 2);
    let v = i32::view(&src[..], 2, &l.dt);
    let upto = |hi: i32| -> Vec<i32> {
        l.positions(2)
            .into_iter()
            .map(|j| (0..hi).map(|r| i32::val(r, j)).sum())
            .collect()
    };
    for imm in [false, true] {
        let mut b: Vec<i32> = l.buf(2);
        {
            let mut mv = i32::view_mut(&mut b[..], 2, &l.dt);
            if imm {
                scope(|s| {
                    world.immediate_scan_into(s, &v, &mut mv, sum).wait();
                });
            } else {
                world.scan_into(&v, &mut mv, sum);
            }
        }
        l.check(me, "scan", &b, 0, &upto(me + 1));
        let mut b: Vec<i32> = l.buf(2);
        {
            let mut mv = i32::view_mut(&mut b[..], 2, &l.dt);
            if imm {
                scope(|s| {
                    world
                        .immediate_exclusive_scan_into(s, &v, &mut mv, sum)
                        .wait();
                });
            } else {
                world.exclusive_scan_into(&v, &mut mv, sum);
            }
        }
        if me > 0 {
            l.check(me, "exclusive_scan", &b, 0, &upto(me));
        }
        let mut b: Vec<i32> = l.buf(2);
        {
            let mut mv = i32::view_mut(&mut b[..], 2, &l.dt);
            if imm {
                scope(|s| {
                    world.immediate_all_reduce_into(s, &v, &mut mv, sum).wait();
                });
            } else {
                world.all_reduce_into(&v, &mut mv, sum);
            }
        }
        l.check(me, "all_reduce", &b, 0, &upto(size));
        // reduce_scatter_block: element `me` of the sum of everyone's `size` elements
        let srcn: Vec<i32> = l.source(me, n);
        let vn = i32::view(&srcn[..], size, &l.dt);
        let mut b: Vec<i32> = l.buf(1);
        {
            let mut mv = i32::view_mut(&mut b[..], 1, &l.dt);
            if imm {
                scope(|s| {
                    world
                        .immediate_reduce_scatter_block_into(s, &vn, &mut mv, sum)
                        .wait();
                });
            } else {
                world.reduce_scatter_block_into(&vn, &mut mv, sum);
            }
        }
        let k = l.picks.len();
        let want: Vec<i32> = l.positions(n)[me as usize * k..(me as usize + 1) * k]
            .iter()
            .map(|&j| (0..size).map(|r| i32::val(r, j)).sum())
            .collect();
        l.check(me, "reduce_scatter_block", &b, 0, &want);
        // immediate reduce to the last rank
        let root = world.process_at_rank(size - 1);
        let mut b: Vec<i32> = l.buf(2);
        {
            let mut mv = i32::view_mut(&mut b[..], 2, &l.dt);
            scope(|s| {
                if me == size - 1 {
                    root.immediate_reduce_into_root(s, &v, &mut mv, sum).wait();
                } else {
                    root.immediate_reduce_into(s, &v, sum).wait();
                }
            });
        }
        if me == size - 1 {
            l.check(me, "immediate reduce", &b, 0, &upto(size));
        }
    }
    // all_reduce_in_place on the source values themselves
    let mut inplace: Vec<i32> = l.source(me, 2);
    {
        let mut mv = i32::view_mut(&mut inplace[..], 2, &l.dt);
        world.all_reduce_in_place(&mut mv, sum);
    }
    let pos = l.positions(2);
    for (j, x) in inplace.iter().enumerate() {
        let w = if pos.contains(&j) {
            (0..size).map(|r| i32::val(r, j)).sum()
        } else {
            i32::val(me, j)
        };
        check!(
            me,
            *x == w,
            "{} all_reduce_in_place at {j}: {x}, want {w}",
            l.name
        );
    }
}

fn reductions(world: &SimpleCommunicator, l: &Layout) {
    let (me, size) = (world.rank(), world.size());
    let src: Vec<i32> = l.source(me, 2);
    let v = i32::view(&src[..], 2, &l.dt);
    let want: Vec<i32> = l
        .positions(2)
        .into_iter()
        .map(|j| (0..size).map(|r| i32::val(r, j)).sum())
        .collect();
    let mut b: Vec<i32> = l.buf(2);
    {
        let mut mv = i32::view_mut(&mut b[..], 2, &l.dt);
        world.all_reduce_into(&v, &mut mv, SystemOperation::sum());
    }
    l.check(me, "all_reduce", &b, 0, &want);
    let mut b: Vec<i32> = l.buf(2);
    {
        let root = world.process_at_rank(size - 1);
        if me == size - 1 {
            let mut mv = i32::view_mut(&mut b[..], 2, &l.dt);
            root.reduce_into_root(&v, &mut mv, SystemOperation::sum());
        } else {
            root.reduce_into(&v, SystemOperation::sum());
        }
    }
    if me == size - 1 {
        l.check(me, "reduce", &b, 0, &want);
    }
}

/// The seed's column of a matrix: a ROWS x size row-major matrix on the root, column r
/// gathered from rank r's contiguous vector, then scattered back.
fn matrix_columns(world: &SimpleCommunicator) {
    const ROWS: usize = 50;
    let (me, size) = (world.rank(), world.size());
    let n = size as usize;
    let root = world.process_at_rank(0);
    let column = UserDatatype::vector(ROWS as i32, 1, size, &f64::equivalent_datatype());
    // Extent of one double, so column r starts r doubles in.
    let column = UserDatatype::resized(&column, 0, 8);
    let mine: Vec<f64> = (0..ROWS).map(|i| me as f64 * 1000.0 + i as f64).collect();
    if me == 0 {
        let mut matrix = vec![-1.0f64; ROWS * n];
        {
            let mut mv = MutView::checked(&mut matrix[..], size, &column).unwrap();
            root.gather_into_root(&mine[..], &mut mv);
        }
        for i in 0..ROWS {
            for r in 0..n {
                check!(
                    me,
                    matrix[i * n + r] == r as f64 * 1000.0 + i as f64,
                    "matrix[{i}][{r}] = {}",
                    matrix[i * n + r]
                );
            }
        }
        for x in matrix.iter_mut() {
            *x += 0.5;
        }
        let mut back = vec![0.0f64; ROWS];
        let v = View::checked(&matrix[..], size, &column).unwrap();
        root.scatter_into_root(&v, &mut back[..]);
        check!(
            me,
            back.iter().enumerate().all(|(i, x)| *x == i as f64 + 0.5),
            "column 0 back {back:?}"
        );
    } else {
        root.gather_into(&mine[..]);
        let mut back = vec![0.0f64; ROWS];
        root.scatter_into(&mut back[..]);
        check!(
            me,
            back.iter()
                .enumerate()
                .all(|(i, x)| *x == me as f64 * 1000.0 + i as f64 + 0.5),
            "column {me} back {back:?}"
        );
    }
}

fn main() {
    let mut universe = oxmpi::initialize().unwrap();
    universe.set_buffer_size(1 << 16);
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    for l in layouts_i32() {
        point_to_point::<i32>(&world, &l);
        collectives::<i32>(&world, &l);
        varcount::<i32>(&world, &l);
        reductions(&world, &l);
        more_reductions(&world, &l);
    }
    let ls = layout_struct();
    point_to_point::<S>(&world, &ls);
    collectives::<S>(&world, &ls);
    varcount::<S>(&world, &ls);
    // A derived struct (padding: non-contiguous) as a plain value and in a Vec.
    let next = world.process_at_rank((me + 1) % size);
    let prev = world.process_at_rank((me + size - 1) % size);
    let x = S::val(me, 1);
    let v: Vec<S> = (0..5).map(|i| S::val(me, i)).collect();
    scope(|s| {
        let _g = WaitGuard::from(next.immediate_send_with_tag(s, &x, 30));
        let (y, _) = prev.receive_with_tag::<S>(30);
        check!(me, y == S::val(prev.rank(), 1), "struct value {y:?}");
        let _g2 = WaitGuard::from(next.immediate_send_with_tag(s, &v[..], 31));
        let (w, _) = prev.receive_vec_with_tag::<S>(31);
        check!(
            me,
            w == (0..5).map(|i| S::val(prev.rank(), i)).collect::<Vec<_>>(),
            "struct vec {w:?}"
        );
        let _g3 = WaitGuard::from(next.immediate_send_with_tag(s, &x, 32));
        let (z, _) = prev.immediate_receive_with_tag::<S>(32).get();
        check!(me, z == S::val(prev.rank(), 1), "struct future {z:?}");
        let (u, _): (S, _) =
            oxmpi::point_to_point::send_receive_with_tags(&x, &next, 33, &prev, 33);
        check!(me, u == S::val(prev.rank(), 1), "struct sendrecv {u:?}");
    });
    matrix_columns(&world);
    // Tuples and complex numbers (feature `complex`) as Equivalence types.
    let t = (me as u8, me as f64 * 0.5, [me as i16; 3]);
    let mut ts = vec![(0u8, 0.0f64, [0i16; 3]); size as usize];
    world.all_gather_into(&t, &mut ts[..]);
    check!(
        me,
        ts.iter()
            .enumerate()
            .all(|(r, x)| *x == (r as u8, r as f64 * 0.5, [r as i16; 3])),
        "tuples {ts:?}"
    );
    type C64 = oxmpi::datatype::Complex64;
    let c = C64::new(me as f64, 1.0);
    let mut sum = C64::new(0.0, 0.0);
    world.all_reduce_into(&c, &mut sum, SystemOperation::sum());
    let want = C64::new((0..size).map(|r| r as f64).sum(), size as f64);
    check!(me, sum == want, "complex sum {sum:?}, want {want:?}");
    world.barrier();
    println!("api_noncontig: rank {me} of {size} ok");
}
