//! Textbook broadcast exercises: rank 0 reads values from standard input (which our
//! mpiexec forwards to rank 0 only) and broadcasts each to every rank, which prints its
//! rank and what it got. Reading stops after a negative integer (broadcast too, so all
//! ranks stop together); end of input counts as one.
//!
//! `seed_bcast ints`    — one `i32` per broadcast.
//! `seed_bcast struct`  — an `i32` and an `f64` per broadcast, as one
//!                        `#[derive(Equivalence)]` struct (one broadcast per pair).
//! `seed_bcast packed`  — the same pair packed into bytes (`MPI_Pack` of an int then a
//!                        double), broadcast as bytes and unpacked, through the
//!                        engine's `buf::pack` / `buf::unpack` (`oxmpi::core_engine`).
//!
//! Output lines: `seed_bcast: rank R got I` (ints) or `seed_bcast: rank R got I D` with
//! D in Rust's shortest round-trip form. At the end each rank checks that it received
//! the same sequence as rank 0 and prints `seed_bcast: rank R of N ok (K values)`.

use std::io::Read;

use oxmpi::traits::*;
use oxmpi_tests::check;

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Pair {
    i: i32,
    d: f64,
}

/// Whitespace-separated tokens of stdin, read as they arrive.
struct Tokens {
    stdin: std::io::Stdin,
}

impl Tokens {
    fn next(&mut self) -> Option<String> {
        let mut tok = Vec::new();
        let mut byte = [0u8; 1];
        let mut lock = self.stdin.lock();
        loop {
            match lock.read(&mut byte) {
                Ok(0) | Err(_) => break,
                Ok(_) if byte[0].is_ascii_whitespace() => {
                    if !tok.is_empty() {
                        break;
                    }
                }
                Ok(_) => tok.push(byte[0]),
            }
        }
        (!tok.is_empty()).then(|| String::from_utf8_lossy(&tok).into_owned())
    }

    fn int(&mut self) -> i32 {
        match self.next() {
            Some(t) => t
                .parse()
                .unwrap_or_else(|_| panic!("not an integer: {t:?}")),
            None => -1,
        }
    }

    fn pair(&mut self) -> Pair {
        let i = self.int();
        if i < 0 {
            return Pair { i, d: 0.0 };
        }
        let d = match self.next() {
            Some(t) => t.parse().unwrap_or_else(|_| panic!("not a number: {t:?}")),
            None => return Pair { i: -1, d: 0.0 },
        };
        Pair { i, d }
    }
}

fn pack_pair(p: &Pair) -> Vec<u8> {
    use oxmpi::core_engine::buf::{as_bytes, pack, SendBuf};
    use oxmpi::core_engine::datatype::pack_size;
    let int = i32::equivalent_datatype();
    let dbl = f64::equivalent_datatype();
    let (int, dbl) = (int.as_core(), dbl.as_core());
    let mut buf = vec![0u8; pack_size(int, 1) + pack_size(dbl, 1)];
    let mut pos = 0;
    pack(
        SendBuf::typed(as_bytes(std::slice::from_ref(&p.i)), 1, int).unwrap(),
        &mut buf,
        &mut pos,
    )
    .unwrap();
    pack(
        SendBuf::typed(as_bytes(std::slice::from_ref(&p.d)), 1, dbl).unwrap(),
        &mut buf,
        &mut pos,
    )
    .unwrap();
    assert_eq!(pos, buf.len());
    buf
}

fn unpack_pair(buf: &[u8]) -> Pair {
    use oxmpi::core_engine::buf::{as_bytes_mut, unpack, RecvBuf};
    let int = i32::equivalent_datatype();
    let dbl = f64::equivalent_datatype();
    let mut p = Pair::default();
    let mut pos = 0;
    let i = RecvBuf::typed(
        as_bytes_mut(std::slice::from_mut(&mut p.i)),
        1,
        int.as_core(),
    )
    .unwrap();
    unpack(buf, &mut pos, i).unwrap();
    let d = RecvBuf::typed(
        as_bytes_mut(std::slice::from_mut(&mut p.d)),
        1,
        dbl.as_core(),
    )
    .unwrap();
    unpack(buf, &mut pos, d).unwrap();
    assert_eq!(pos, buf.len());
    p
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "ints".into());
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    let root = world.process_at_rank(0);
    let mut tokens = Tokens {
        stdin: std::io::stdin(),
    };
    let mut got: Vec<Pair> = Vec::new();

    loop {
        let p = match mode.as_str() {
            "ints" => {
                let mut v = if me == 0 { tokens.int() } else { 0 };
                root.broadcast_into(&mut v);
                if v >= 0 {
                    println!("seed_bcast: rank {me} got {v}");
                }
                Pair { i: v, d: 0.0 }
            }
            "struct" => {
                let mut p = if me == 0 {
                    tokens.pair()
                } else {
                    Pair::default()
                };
                root.broadcast_into(&mut p);
                if p.i >= 0 {
                    println!("seed_bcast: rank {me} got {} {:?}", p.i, p.d);
                }
                p
            }
            "packed" => {
                // The packed size is fixed (4 + 8 bytes), so everyone knows it.
                let mut bytes = if me == 0 {
                    pack_pair(&tokens.pair())
                } else {
                    vec![0u8; 12]
                };
                root.broadcast_into(&mut bytes[..]);
                let p = unpack_pair(&bytes);
                if p.i >= 0 {
                    println!("seed_bcast: rank {me} got {} {:?}", p.i, p.d);
                }
                p
            }
            other => {
                eprintln!("seed_bcast: unknown mode {other:?} (ints, struct, packed)");
                std::process::exit(2);
            }
        };
        if p.i < 0 {
            break;
        }
        got.push(p);
    }

    // Everyone must have seen rank 0's sequence.
    let mut n = got.len() as i32;
    root.broadcast_into(&mut n);
    check!(
        me,
        n as usize == got.len(),
        "received {} values, rank 0 {n}",
        got.len()
    );
    let mut reference = got.clone();
    root.broadcast_into(&mut reference[..]);
    check!(
        me,
        reference == got,
        "sequence differs from rank 0's: {got:?} vs {reference:?}"
    );
    world.barrier();
    println!("seed_bcast: rank {me} of {size} ok ({} values)", got.len());
}
