//! Rank program for the reduction collectives of the engine (reduce, allreduce,
//! reduce_scatter(_block), scan, exscan, reduce_local). Every rank regenerates
//! every rank's input (deterministic), computes the expected result by folding
//! the inputs in rank order with MPI_Reduce_local, and checks its own result
//! (data bytes only; gap bytes of derived types must stay untouched).
//! Algorithms are forced by the launcher through OXMPI_<OP>_ALGORITHM.
//! Argument: "all" (default) or "quick" (no large counts).

use oxmpi_core::buf::Element;
use oxmpi_core::buf::{self, RecvBuf, SendBuf};
use oxmpi_core::coll::{api, api_move};
use oxmpi_core::datatype::{Datatype, Primitive};
use oxmpi_core::op::{Op, PredefinedOp};
use oxmpi_core::pt2pt::{self, SendMode};
use oxmpi_core::runtime;
use oxmpi_core::{Comm, ErrorClass, Request};
use oxmpi_tests::{check, Rng};

const SENTINEL: u8 = 0xA5;
const MODULUS: i64 = 1_000_003;

/// 8-byte aligned byte buffer.
struct Buf(Vec<u64>, usize);

impl Buf {
    fn new(len: usize, fill: u8) -> Buf {
        let mut b = Buf(vec![0; len.div_ceil(8).max(1)], len);
        b.bytes_mut().fill(fill);
        b
    }
    fn bytes(&self) -> &[u8] {
        &buf::as_bytes(&self.0)[..self.1]
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut buf::as_bytes_mut(&mut self.0)[..self.1]
    }
    /// `count` elements of `dt` from the start, to be read.
    fn send<'a>(&'a self, count: usize, dt: &'a Datatype) -> SendBuf<'a, 'a> {
        SendBuf::typed(self.bytes(), count, dt).expect("send buffer")
    }
    /// `count` elements of `dt` from the start, to be written.
    fn recv<'a>(&'a mut self, count: usize, dt: &'a Datatype) -> RecvBuf<'a, 'a> {
        RecvBuf::typed(self.bytes_mut(), count, dt).expect("receive buffer")
    }
}

type Gen = fn(&mut Rng, usize, &mut [u8]);

struct Case {
    name: &'static str,
    dt: Datatype,
    op: Op,
    /// Fills the data bytes of one element (offsets from dt.blocks()).
    gen: Gen,
    large: bool,
}

fn put<T: Element>(e: &mut [u8], off: usize, v: T) {
    let n = std::mem::size_of::<T>();
    e[off..off + n].copy_from_slice(buf::as_bytes(std::slice::from_ref(&v)));
}

fn matrix_op() -> Op {
    // inout = in * inout (2x2 matrices mod p; in is the lower ranks' product). The
    // elements' four i64s come packed, in type-map order (the engine passes them in
    // memory layout; `user_packed` packs them and writes the result back there).
    Op::user_packed(
        |inp: &[u8], io: &mut [u8], count: usize, _dt: &Datatype| {
            let words = |b: &[u8]| -> Vec<i64> {
                b.chunks_exact(8)
                    .map(|w| i64::from_ne_bytes(w.try_into().unwrap()))
                    .collect()
            };
            let size = inp.len() / count;
            for (x, y) in inp.chunks_exact(size).zip(io.chunks_exact_mut(size)) {
                let (a, b) = (words(x), words(y));
                let c = [
                    (a[0] * b[0] + a[1] * b[2]) % MODULUS,
                    (a[0] * b[1] + a[1] * b[3]) % MODULUS,
                    (a[2] * b[0] + a[3] * b[2]) % MODULUS,
                    (a[2] * b[1] + a[3] * b[3]) % MODULUS,
                ];
                for (k, v) in c.iter().enumerate() {
                    y[8 * k..8 * k + 8].copy_from_slice(&v.to_ne_bytes());
                }
            }
        },
        false,
    )
}

fn committed(d: Datatype) -> Datatype {
    d.commit();
    d
}

fn cases() -> Vec<Case> {
    let p = |x| Datatype::predefined(x);
    let o = |x| Op::predefined(x);
    let dbl = p(Primitive::Double);
    let i64t = p(Primitive::Int64);
    vec![
        Case {
            name: "int_sum",
            dt: p(Primitive::Int),
            op: o(PredefinedOp::Sum),
            gen: |r, _, e| put(e, 0, r.next_u64() as i32),
            large: true,
        },
        Case {
            name: "double_sum",
            dt: dbl.clone(),
            op: o(PredefinedOp::Sum),
            gen: |r, _, e| put(e, 0, r.below(2001) as f64 - 1000.0),
            large: true,
        },
        Case {
            name: "long_max",
            dt: p(Primitive::Long),
            op: o(PredefinedOp::Max),
            gen: |r, _, e| put(e, 0, r.next_u64() as i64),
            large: false,
        },
        Case {
            name: "float_min",
            dt: p(Primitive::Float),
            op: o(PredefinedOp::Min),
            gen: |r, _, e| put(e, 0, r.below(100) as f32 - 50.5),
            large: false,
        },
        Case {
            name: "double_prod",
            dt: dbl.clone(),
            op: o(PredefinedOp::Prod),
            gen: |r, _, e| put(e, 0, [1.0f64, -1.0, 2.0, 0.5][r.below(4) as usize]),
            large: false,
        },
        Case {
            name: "unsigned_band",
            dt: p(Primitive::Unsigned),
            op: o(PredefinedOp::Band),
            gen: |r, _, e| put(e, 0, (r.next_u64() | r.next_u64()) as u32),
            large: false,
        },
        Case {
            name: "int_lxor",
            dt: p(Primitive::Int),
            op: o(PredefinedOp::Lxor),
            gen: |r, _, e| put(e, 0, [0i32, 1, 5, -3][r.below(4) as usize]),
            large: false,
        },
        Case {
            name: "short_sum",
            dt: p(Primitive::Short),
            op: o(PredefinedOp::Sum),
            gen: |r, _, e| put(e, 0, r.next_u64() as i16),
            large: false,
        },
        Case {
            name: "double_int_maxloc",
            dt: p(Primitive::DoubleInt),
            op: o(PredefinedOp::Maxloc),
            gen: |r, rank, e| {
                put(e, 0, r.below(3) as f64);
                put(e, 8, rank as i32)
            },
            large: false,
        },
        Case {
            name: "double_int_minloc",
            dt: p(Primitive::DoubleInt),
            op: o(PredefinedOp::Minloc),
            gen: |r, rank, e| {
                put(e, 0, r.below(3) as f64);
                put(e, 8, rank as i32)
            },
            large: false,
        },
        Case {
            name: "2int_maxloc",
            dt: p(Primitive::TwoInt),
            op: o(PredefinedOp::Maxloc),
            gen: |r, rank, e| {
                put(e, 0, r.below(3) as i32);
                put(e, 4, rank as i32)
            },
            large: false,
        },
        Case {
            name: "2int_minloc",
            dt: p(Primitive::TwoInt),
            op: o(PredefinedOp::Minloc),
            gen: |r, rank, e| {
                put(e, 0, r.below(3) as i32);
                put(e, 4, rank as i32)
            },
            large: false,
        },
        Case {
            name: "vector_double_sum",
            dt: committed(Datatype::vector(2, 1, 2, &dbl).unwrap()),
            op: o(PredefinedOp::Sum),
            gen: |r, _, e| {
                put(e, 0, r.below(100) as f64);
                put(e, 16, r.below(100) as f64)
            },
            large: false,
        },
        Case {
            name: "matrix_noncommutative",
            dt: committed(Datatype::contiguous(4, &i64t).unwrap()),
            op: matrix_op(),
            gen: |r, _, e| {
                for k in 0..4 {
                    put(e, 8 * k, r.below(MODULUS as u64) as i64)
                }
            },
            large: false,
        },
        Case {
            name: "matrix_noncommutative_vector",
            dt: committed(Datatype::vector(4, 1, 2, &i64t).unwrap()),
            op: matrix_op(),
            gen: |r, _, e| {
                for k in 0..4 {
                    put(e, 16 * k, r.below(MODULUS as u64) as i64)
                }
            },
            large: false,
        },
    ]
}

/// Runs a collective with or without a scope: `both!(sc, blocking(..), immediate(..))`.
macro_rules! both {
    ($sc:ident, $b:expr, $nb:expr) => {
        |$sc: Option<&buf::Scope<'_>>| match $sc {
            None => $b.map(|_| None),
            Some($sc) => $nb.map(Some),
        }
    };
}

struct Ctx {
    world: Comm,
    rank: usize,
    n: usize,
    seq: u64,
    checks: usize,
}

impl Ctx {
    /// Rank `r`'s input of `count` elements for case `seed`, with gaps = SENTINEL.
    fn input(&self, c: &Case, seed: u64, r: usize, count: usize) -> Buf {
        let ext = c.dt.extent() as usize;
        let mut b = Buf::new(count * ext, SENTINEL);
        let mut rng = Rng::new(seed * 1000 + r as u64);
        let mut elem = vec![SENTINEL; ext];
        for i in 0..count {
            (c.gen)(&mut rng, r, &mut elem);
            b.bytes_mut()[i * ext..(i + 1) * ext].copy_from_slice(&elem);
        }
        b
    }

    /// Prefix reductions in rank order: `out[r]` = a0 op ... op ar.
    fn prefixes(&self, c: &Case, seed: u64, count: usize) -> Vec<Buf> {
        let mut out: Vec<Buf> = Vec::with_capacity(self.n);
        for r in 0..self.n {
            let mut cur = self.input(c, seed, r, count);
            if let Some(prev) = out.last() {
                api::reduce_local(prev.send(count, &c.dt), cur.recv(count, &c.dt), &c.op)
                    .expect("reduce_local");
            }
            out.push(cur);
        }
        out
    }

    /// Checks `got` against `want` on elements [from, from + count) of `want`,
    /// `got` holding them from its start; bytes outside the data must be SENTINEL.
    fn compare(&mut self, what: &str, c: &Case, got: &Buf, want: &Buf, from: usize, count: usize) {
        self.checks += 1;
        let ext = c.dt.extent() as usize;
        let mut is_data = vec![false; got.1];
        for i in 0..count {
            for (o, l) in c.dt.blocks() {
                let at = i * ext + o as usize;
                is_data[at..at + l].iter_mut().for_each(|x| *x = true);
                let w = &want.bytes()[from * ext + at..from * ext + at + l];
                let g = &got.bytes()[at..at + l];
                check!(
                    self.rank,
                    g == w,
                    "{what} [{}]: element {i} differs: got {g:?} want {w:?}",
                    c.name
                );
            }
        }
        for (k, &d) in is_data.iter().enumerate() {
            check!(
                self.rank,
                d || got.bytes()[k] == SENTINEL,
                "{what} [{}]: byte {k} outside the data was written",
                c.name
            );
        }
    }

    fn next_seed(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Runs a blocking call (`f(None)`) or the non-blocking one in a buffer scope
    /// (`f(Some(scope))`) + wait, alternating.
    fn go<'e>(
        &mut self,
        f: impl FnOnce(Option<&buf::Scope<'e>>) -> oxmpi_core::Result<Option<Request>>,
        what: &str,
    ) {
        let r = if self.seq % 2 == 0 {
            f(None).map(|_| ())
        } else {
            buf::scope(|sc| {
                f(Some(sc)).and_then(|q| pt2pt::wait(&mut q.expect("a request")).map(|_| ()))
            })
        };
        if let Err(e) = r {
            check!(self.rank, false, "{what}: {e:?}");
        }
    }
}

fn run_case(x: &mut Ctx, c: &Case, count: usize) {
    let (rank, n) = (x.rank, x.n);
    let ext = c.dt.extent() as usize;
    let comm = x.world.clone();
    let (dt, op) = (&c.dt, &c.op);

    // reduce: every root (roots beyond 3 only for small counts), in place and not.
    let seed = x.next_seed();
    let pre = x.prefixes(c, seed, count);
    let total = &pre[n - 1];
    let roots: Vec<usize> = if count > 10_000 {
        vec![0, n - 1]
    } else {
        (0..n).collect()
    };
    for &root in &roots {
        for in_place in [false, true] {
            let input = x.input(c, seed, rank, count);
            let mut out = if in_place && rank == root {
                x.input(c, seed, rank, count)
            } else {
                Buf::new(count * ext, SENTINEL)
            };
            let sb = if in_place && rank == root {
                None
            } else {
                Some(input.send(count, dt))
            };
            let rb = Some(out.recv(count, dt));
            let root = root as i32;
            x.go(
                both!(
                    sc,
                    api::reduce(sb, rb, op, root, &comm),
                    api::ireduce(sc, sb, rb, op, root, &comm)
                ),
                "reduce",
            );
            let root = root as usize;
            if rank == root {
                x.compare(
                    &format!("reduce root {root} in_place {in_place} count {count}"),
                    c,
                    &out,
                    total,
                    0,
                    count,
                );
            }
        }
    }

    // allreduce
    for in_place in [false, true] {
        let input = x.input(c, seed, rank, count);
        let mut out = if in_place {
            x.input(c, seed, rank, count)
        } else {
            Buf::new(count * ext, SENTINEL)
        };
        let sb = if in_place {
            None
        } else {
            Some(input.send(count, dt))
        };
        let rb = out.recv(count, dt);
        x.go(
            both!(
                sc,
                api::allreduce(sb, rb, op, &comm),
                api::iallreduce(sc, sb, rb, op, &comm)
            ),
            "allreduce",
        );
        x.compare(
            &format!("allreduce in_place {in_place} count {count}"),
            c,
            &out,
            total,
            0,
            count,
        );
    }

    // scan / exscan
    for exclusive in [false, true] {
        for in_place in [false, true] {
            let input = x.input(c, seed, rank, count);
            let mut out = if in_place {
                x.input(c, seed, rank, count)
            } else {
                Buf::new(count * ext, SENTINEL)
            };
            let sb = if in_place {
                None
            } else {
                Some(input.send(count, dt))
            };
            let rb = out.recv(count, dt);
            if exclusive {
                x.go(
                    both!(
                        sc,
                        api::exscan(sb, rb, op, &comm),
                        api::iexscan(sc, sb, rb, op, &comm)
                    ),
                    "exscan",
                );
                if rank > 0 {
                    x.compare(
                        &format!("exscan in_place {in_place} count {count}"),
                        c,
                        &out,
                        &pre[rank - 1],
                        0,
                        count,
                    );
                }
            } else {
                x.go(
                    both!(
                        sc,
                        api::scan(sb, rb, op, &comm),
                        api::iscan(sc, sb, rb, op, &comm)
                    ),
                    "scan",
                );
                x.compare(
                    &format!("scan in_place {in_place} count {count}"),
                    c,
                    &out,
                    &pre[rank],
                    0,
                    count,
                );
            }
        }
    }

    // reduce_scatter_block (recvcount = count / n rounded up) and reduce_scatter
    // (varying counts, some zero).
    let rcount = count.div_ceil(n);
    let block_counts = vec![rcount; n];
    let var_counts: Vec<usize> = (0..n)
        .map(|i| {
            if count == 0 {
                0
            } else {
                (count + 3 * i) % (2 * rcount + 2)
            }
        })
        .collect();
    for (block, counts) in [(true, block_counts), (false, var_counts)] {
        let tot: usize = counts.iter().sum();
        let seed = x.next_seed();
        let pre = x.prefixes(c, seed, tot);
        let want = &pre[n - 1];
        let from: usize = counts[..rank].iter().sum();
        for in_place in [false, true] {
            let input = x.input(c, seed, rank, tot);
            // In place the input is in recvbuf; the result lands at its start.
            let mut out = if in_place {
                x.input(c, seed, rank, tot)
            } else {
                Buf::new(counts[rank] * ext, SENTINEL)
            };
            // `input` holds `tot` = sum(counts) elements of `dt`, `out` `counts[rank]`
            // (in place: `tot`, the input).
            let sb = if in_place {
                None
            } else {
                Some(input.send(tot, dt))
            };
            let rb = out.recv(if in_place { tot } else { counts[rank] }, dt);
            let what =
                format!("reduce_scatter block {block} in_place {in_place} counts {counts:?}");
            if block {
                x.go(
                    both!(
                        sc,
                        api_move::reduce_scatter_block(sb, rb, rcount, op, &comm),
                        api_move::ireduce_scatter_block(sc, sb, rb, rcount, op, &comm)
                    ),
                    &what,
                );
            } else {
                x.go(
                    both!(
                        sc,
                        api_move::reduce_scatter(sb, rb, &counts, op, &comm),
                        api_move::ireduce_scatter(sc, sb, rb, &counts, op, &comm)
                    ),
                    &what,
                );
            }
            if in_place {
                // Only the first counts[rank] elements are defined; compare those.
                let mut head = Buf::new(counts[rank] * ext, SENTINEL);
                let len = head.1;
                head.bytes_mut().copy_from_slice(&out.bytes()[..len]);
                // Gaps inside the head keep the input's gap bytes (SENTINEL too).
                x.compare(&what, c, &head, want, from, counts[rank]);
            } else {
                x.compare(&what, c, &out, want, from, counts[rank]);
            }
        }
    }
}

/// Allreduce of random doubles (inexact sums): every rank must hold the same bits.
fn bit_identical(x: &mut Ctx, count: usize) {
    let op = Op::predefined(PredefinedOp::Sum);
    let mut rng = Rng::new(77 + x.rank as u64);
    let input: Vec<f64> = (0..count)
        .map(|_| (rng.next_u64() as f64 / u64::MAX as f64 - 0.5) * 1e3)
        .collect();
    let mut out = vec![0f64; count];
    for nb in [false, true] {
        x.seq = u64::from(nb);
        let (sb, rb) = (Some(SendBuf::slice(&input)), RecvBuf::slice(&mut out));
        let comm = x.world.clone();
        x.go(
            both!(
                sc,
                api::allreduce(sb, rb, &op, &comm),
                api::iallreduce(sc, sb, rb, &op, &comm)
            ),
            "allreduce random",
        );
        let bytes = buf::as_bytes(&out);
        if x.rank == 0 {
            let mut other = vec![0u8; count * 8];
            for r in 1..x.n {
                pt2pt::recv(&x.world, &mut other, r as i32, 99).expect("recv");
                check!(
                    0,
                    other == bytes,
                    "allreduce of {count} random doubles: rank {r}'s result differs from rank 0's"
                );
            }
            // And close to a straightforward sum.
            for i in (0..count).step_by(count / 16 + 1) {
                let s: f64 = (0..x.n)
                    .map(|r| {
                        let mut g = Rng::new(77 + r as u64);
                        (0..=i)
                            .map(|_| g.next_u64())
                            .last()
                            .map(|v| (v as f64 / u64::MAX as f64 - 0.5) * 1e3)
                            .unwrap()
                    })
                    .sum();
                check!(
                    0,
                    (s - out[i]).abs() <= 1e-9 * (1.0 + s.abs()),
                    "allreduce random: element {i} = {} want ~{s}",
                    out[i]
                );
            }
        } else {
            pt2pt::send(&x.world, bytes, 0, 99, SendMode::Standard).expect("send");
        }
        x.checks += 1;
    }
}

fn errors(x: &mut Ctx) {
    let dbl = Datatype::predefined(Primitive::Double);
    let band = Op::predefined(PredefinedOp::Band);
    let a = [1.0f64; 4];
    let mut b = [0f64; 4];
    let comm = x.world.clone();
    let sb = || Some(SendBuf::slice(&a));
    let results = [
        api::allreduce(sb(), RecvBuf::slice(&mut b), &band, &comm).err(),
        api::reduce(sb(), Some(RecvBuf::slice(&mut b)), &band, 0, &comm).err(),
        buf::scope(|sc| api::iallreduce(sc, sb(), RecvBuf::slice(&mut b), &band, &comm).err()),
        api::scan(sb(), RecvBuf::slice(&mut b), &band, &comm).err(),
        api::exscan(sb(), RecvBuf::slice(&mut b), &band, &comm).err(),
        api_move::reduce_scatter_block(
            Some(SendBuf::slice(&vec![1.0f64; x.n])),
            RecvBuf::slice(&mut b[..1]),
            1,
            &band,
            &comm,
        )
        .err(),
        api::reduce_local(SendBuf::slice(&a), RecvBuf::slice(&mut b), &band).err(),
    ];
    for (i, e) in results.iter().enumerate() {
        check!(
            x.rank,
            e.as_ref().is_some_and(|e| e.class == ErrorClass::Op),
            "BAND on MPI_DOUBLE (call {i}): {e:?}"
        );
    }
    let e = api::reduce(
        sb(),
        Some(RecvBuf::slice(&mut b)),
        &Op::predefined(PredefinedOp::Sum),
        x.n as i32,
        &comm,
    )
    .err();
    check!(
        x.rank,
        e.as_ref().is_some_and(|e| e.class == ErrorClass::Root),
        "bad root: {e:?}"
    );
    let vec_t = Datatype::vector(2, 1, 2, &dbl).unwrap();
    // Uncommitted type: rejected first.
    let (ab, bb) = (buf::as_bytes(&a), buf::as_bytes_mut(&mut b));
    let e = api::allreduce(
        Some(SendBuf::typed(ab, 1, &vec_t).unwrap()),
        RecvBuf::typed(bb, 1, &vec_t).unwrap(),
        &Op::predefined(PredefinedOp::Sum),
        &comm,
    )
    .err();
    check!(
        x.rank,
        e.as_ref().is_some_and(|e| e.class == ErrorClass::Type),
        "uncommitted type: {e:?}"
    );
    // reduce_local computes inout = in op inout.
    let (i1, mut io1) = ([3i32, -7, 5], [4i32, 2, 5]);
    api::reduce_local(
        SendBuf::slice(&i1),
        RecvBuf::slice(&mut io1),
        &Op::predefined(PredefinedOp::Max),
    )
    .unwrap();
    check!(x.rank, io1 == [4, 2, 5], "reduce_local MAX: {io1:?}");
    x.checks += 1;
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "all".into());
    runtime::init(runtime::ThreadLevel::Single).expect("MPI_Init");
    let e = runtime::engine().unwrap();
    let world = e.world().clone();
    let (rank, n) = (world.rank() as usize, world.size() as usize);
    let mut x = Ctx {
        world,
        rank,
        n,
        seq: 0,
        checks: 0,
    };
    let t0 = std::time::Instant::now();
    errors(&mut x);
    for c in cases() {
        // 4: 16 bytes of 4-byte types, a reduce's last span in the ranks' inline
        // slots, and 32 of 8-byte ones, the first past them.
        let mut counts = vec![0, 1, 4, 7, 300];
        if c.large && mode == "all" {
            // 96 KiB: two chunks on the shared-memory paths, the second partial
            // (2-rank reduce takes the area up to two chunks, binomial above).
            counts.push((96 << 10) / c.dt.size());
            counts.push((1 << 20) / c.dt.size()); // 1 MiB
        }
        if mode == "all" && n == 2 && c.name == "matrix_noncommutative" {
            // 40 KiB: a 2-rank reduce by single copies, in two pieces, with the
            // operands in rank order whichever rank is the root.
            counts.push((40 << 10) / c.dt.size());
        }
        for count in counts {
            run_case(&mut x, &c, count);
        }
    }
    bit_identical(&mut x, 1001);
    if mode == "all" {
        bit_identical(&mut x, 1 << 17);
    }
    runtime::finalize().expect("MPI_Finalize");
    if rank == 0 {
        println!(
            "reductions: ok ({} checks on rank 0, {:?})",
            x.checks,
            t0.elapsed()
        );
    }
}
