//! Type-signature fingerprints for the checking mode (`OXMPI_CHECK_SIGNATURES=1`).
//!
//! MPI makes it erroneous to receive a message whose type signature (the
//! sequence of primitives it holds) is not a prefix of the receive's (`count`
//! elements of the receive's datatype): fewer elements than the buffer holds are
//! fine, `{int, double} x 2` into `{int, double} x 4` is fine, `{int, double}`
//! into `{double, int}` is not, and more data than the buffer holds is
//! truncation (`MPI_ERR_TRUNCATE`), not a type error. How the primitives are
//! grouped into elements does not matter: `contiguous(4, int) x 1` matches
//! `int x 4`.
//!
//! ## Fingerprint (what a message carries: one `u64`, 0 = unchecked)
//! The signature of one element is reduced to its *unit*: the shortest run list
//! whose repetition gives the element (`contiguous(4, int)` has the unit `int`,
//! a vector of `{int, double}` structs has the unit `{int, double}`). A message
//! of `count` elements is then `unit^c` for some `c`. The fingerprint packs
//! `(H(unit) << 24) | n`, where `n` (1..2^24) is the number of primitives in the
//! unit and `H` a polynomial hash over the *primitive stream* modulo the prime
//! `P = 2^40 - 87`:
//!
//! ```text
//! H(s_1 .. s_k) = sum v(s_i) * B^(k-i)  (mod P)      H(XY) = H(X) * B^|Y| + H(Y)
//! ```
//!
//! Being defined per primitive, `H` does not see how primitives are grouped
//! into runs or elements, and it composes: `H(unit^c)` and `H` of any prefix of
//! `unit^inf` take O(runs + log c) work (geometric sums by doubling).
//!
//! ## Check (receiver, at match time)
//! The message's byte length `L` fixes the prefix it must equal: the receiver
//! walks its own unit for `L` bytes (a length that ends inside a primitive is a
//! mismatch), giving the prefix's primitive count `N` and hash; the message's is
//! `H(unit_s ^ (N / n_s))` (a count not divisible by `n_s` is a mismatch). The
//! two hashes agree exactly when the signatures do (up to a 2^-40 chance of a
//! collision). The receiver finds its own unit by fingerprint in a per-process
//! registry, filled whenever a fingerprint is computed (once per datatype
//! object: it is cached) and, when checking is on, at `MPI_Type_commit`; the
//! registry also lets error messages name the sender's type when this process
//! has seen it.
//!
//! Not checked (fingerprint 0): types holding `MPI_BYTE` or `MPI_PACKED`
//! anywhere (they match anything, as bytes), empty types, and units of 2^24
//! primitives or more. Untyped byte sends and receives carry 0 too, and so do
//! collectives: their schedules move packed bytes in pieces whose boundaries
//! depend on the algorithm (pipelined or split blocks, reduction partials), so
//! a per-message prefix check does not apply to them.
//!
//! ## Cost
//! With checking off, `State::sig_of` returns 0 after one branch and nothing
//! else runs. With it on, a sender reads the fingerprint cached in its
//! datatype; a receive whose fingerprint equals the message's passes at once;
//! otherwise one registry lookup and O(runs of a unit + log count) arithmetic.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::primitive::Primitive;

/// The hash modulus: the largest prime below 2^40.
const P: u64 = (1 << 40) - 87;
/// The hash base.
const B: u64 = 0x5_DEEC_E66D % P;
/// Bits of a fingerprint holding the unit's primitive count.
const N_BITS: u32 = 24;
const N_MASK: u64 = (1 << N_BITS) - 1;

fn mulmod(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) % P as u128) as u64
}

fn addmod(a: u64, b: u64) -> u64 {
    let s = a + b; // both < 2^40: no overflow
    if s >= P {
        s - P
    } else {
        s
    }
}

/// `(x^k, 1 + x + ... + x^(k-1))` mod P, by doubling over the bits of `k`.
fn pow_geom(x: u64, k: u64) -> (u64, u64) {
    let (mut pw, mut g) = (1u64, 0u64);
    for bit in (0..64 - k.leading_zeros()).rev() {
        // k' -> 2k': geom(2k') = geom(k') * (1 + x^k'); x^2k' = (x^k')^2.
        g = mulmod(g, addmod(1, pw));
        pw = mulmod(pw, pw);
        if k >> bit & 1 == 1 {
            // k' -> k'+1: geom(k'+1) = geom(k') * x + 1.
            g = addmod(mulmod(g, x), 1);
            pw = mulmod(pw, x);
        }
    }
    (pw, g)
}

/// The value a primitive contributes to the hash: a mix of its engine number, in 1..P.
fn value(p: Primitive) -> u64 {
    let mut z = u64::from(p.code()).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    z % (P - 1) + 1
}

/// `H(xy)` from `H(x)` and a run of `k` copies of `p` for `y`.
fn push_run(h: u64, p: Primitive, k: u64) -> u64 {
    let (pw, g) = pow_geom(B, k);
    addmod(mulmod(h, pw), mulmod(value(p), g))
}

/// The unit of an element signature, as registered: its runs, primitive count,
/// packed bytes and hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub runs: Box<[(Primitive, usize)]>,
    pub n: u64,
    pub bytes: usize,
    pub hash: u64,
}

impl Unit {
    /// The fingerprint a message of this unit carries.
    pub fn fingerprint(&self) -> u64 {
        self.hash << N_BITS | self.n
    }

    /// A short description: `MPI_INT`, `{MPI_INT, 2 MPI_DOUBLE}`.
    pub fn describe(&self) -> String {
        let one = |&(p, k): &(Primitive, usize)| {
            if k == 1 {
                p.name().to_string()
            } else {
                format!("{k} {}", p.name())
            }
        };
        match &*self.runs {
            [(p, 1)] => p.name().to_string(),
            runs if runs.len() <= 6 => format!(
                "{{{}}}",
                runs.iter().map(one).collect::<Vec<_>>().join(", ")
            ),
            runs => format!(
                "{{{}, ... ({} runs, {} primitives)}}",
                runs[..4].iter().map(one).collect::<Vec<_>>().join(", "),
                runs.len(),
                self.n
            ),
        }
    }
}

/// The unit of the element signature `sig`; `None` when it is not checked
/// (empty, holds `MPI_BYTE`/`MPI_PACKED`, or a unit of 2^24 primitives or more).
pub fn unit_of(sig: &[(Primitive, usize)]) -> Option<Unit> {
    // Merge adjacent runs of one primitive (type maps may split them).
    let mut runs: Vec<(Primitive, usize)> = Vec::with_capacity(sig.len());
    for &(p, k) in sig {
        if matches!(p, Primitive::Byte | Primitive::Packed) {
            return None;
        }
        if k == 0 {
            continue;
        }
        match runs.last_mut() {
            Some((q, n)) if *q == p => *n = n.checked_add(k)?,
            _ => runs.push((p, k)),
        }
    }
    let m = runs.len();
    if m == 0 {
        return None;
    }
    let unit: &[(Primitive, usize)] = if m == 1 {
        &[]
    } else {
        // The shortest period d of the run list (d divides m); merged runs never
        // join across a period boundary, since runs[d-1] differs from runs[d] = runs[0].
        let d = (1..=m / 2)
            .find(|&d| m.is_multiple_of(d) && (d..m).all(|i| runs[i] == runs[i - d]))
            .unwrap_or(m);
        &runs[..d]
    };
    let unit: Box<[(Primitive, usize)]> = if m == 1 {
        Box::new([(runs[0].0, 1)])
    } else {
        unit.into()
    };
    let n = unit
        .iter()
        .try_fold(0u64, |a, &(_, k)| a.checked_add(k as u64))?;
    if n > N_MASK {
        return None;
    }
    let bytes = unit.iter().map(|&(p, k)| p.size() * k).sum();
    let hash = unit.iter().fold(0, |h, &(p, k)| push_run(h, p, k as u64));
    Some(Unit {
        runs: unit,
        n,
        bytes,
        hash,
    })
}

/// The hash of `unit^c`.
fn repeated(hash: u64, n: u64, c: u64) -> u64 {
    let (step, _) = pow_geom(B, n);
    mulmod(hash, pow_geom(step, c).1)
}

/// Whether a message of `len` packed bytes with fingerprint `sent` may be
/// received into elements whose unit is `recv`: the message's signature must
/// be a prefix of `recv^inf` (the caller has ruled out truncation). `sent == 0`
/// (unchecked) always passes.
pub fn prefix_matches(recv: &Unit, len: usize, sent: u64) -> bool {
    if sent == 0 || len == 0 || sent == recv.fingerprint() {
        // Same unit: any whole number of units is a prefix, and the message is one.
        return true;
    }
    let (n_s, h_s) = (sent & N_MASK, sent >> N_BITS);
    if n_s == 0 || recv.bytes == 0 {
        return false;
    }
    let (q, mut rem) = (len / recv.bytes, len % recv.bytes);
    // The partial unit at the end of the prefix.
    let (mut hp, mut np) = (0u64, 0u64);
    for &(p, k) in recv.runs.iter() {
        if rem == 0 {
            break;
        }
        let ps = p.size();
        let take = (rem / ps).min(k);
        if take < k && rem % ps != 0 {
            // The message ends inside a primitive of the receive.
            return false;
        }
        hp = push_run(hp, p, take as u64);
        np += take as u64;
        rem -= take * ps;
    }
    if rem != 0 {
        return false;
    }
    // N <= len (every primitive is at least one byte): no overflow.
    let total = q as u64 * recv.n + np;
    if !total.is_multiple_of(n_s) {
        return false;
    }
    let (pw, _) = pow_geom(B, np);
    let mine = addmod(mulmod(repeated(recv.hash, recv.n, q as u64), pw), hp);
    mine == repeated(h_s, n_s, total / n_s)
}

fn registry() -> &'static Mutex<HashMap<u64, Arc<Unit>>> {
    static REG: OnceLock<Mutex<HashMap<u64, Arc<Unit>>>> = OnceLock::new();
    REG.get_or_init(|| {
        // Every single-primitive unit, so that messages of predefined types are named.
        let map = Primitive::ALL
            .iter()
            .filter_map(|&p| unit_of(&[(p, 1)]))
            .map(|u| (u.fingerprint(), Arc::new(u)))
            .collect();
        Mutex::new(map)
    })
}

/// Records `unit` so that receives of its fingerprint can find it.
pub fn register(unit: Unit) -> u64 {
    let fp = unit.fingerprint();
    let mut reg = registry().lock().unwrap_or_else(|e| e.into_inner());
    reg.entry(fp).or_insert_with(|| Arc::new(unit));
    fp
}

/// The registered unit of fingerprint `fp`.
pub fn lookup(fp: u64) -> Option<Arc<Unit>> {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&fp)
        .cloned()
}

/// Whether `OXMPI_CHECK_SIGNATURES=1` (read once).
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("OXMPI_CHECK_SIGNATURES").is_ok_and(|v| v == "1"))
}

/// The check a receive with fingerprint `recv` applies to a message of `len`
/// bytes with fingerprint `sent` (both non-zero); an unknown `recv` passes.
pub fn check(recv: u64, len: usize, sent: u64) -> bool {
    if recv == sent || sent == 0 || recv == 0 {
        return true;
    }
    match lookup(recv) {
        Some(u) => prefix_matches(&u, len, sent),
        None => true,
    }
}

/// Describes a message of `len` bytes with fingerprint `fp`: `3 x MPI_INT`,
/// `2 x {MPI_INT, MPI_DOUBLE}`, or its primitive count and fingerprint when this
/// process has not seen the type.
pub fn describe_message(fp: u64, len: usize) -> String {
    match lookup(fp) {
        Some(u) if u.bytes > 0 => format!("{} x {}", len / u.bytes, u.describe()),
        _ => format!("{len} bytes of a type this rank has not seen (units of {} primitives, fingerprint {:#x})", fp & N_MASK, fp >> N_BITS),
    }
}

/// Describes a receive of `cap` bytes with fingerprint `fp`: `5 x MPI_INT`.
pub fn describe_receive(fp: u64, cap: usize) -> String {
    match lookup(fp) {
        Some(u) if u.bytes > 0 => format!("{} x {}", cap / u.bytes, u.describe()),
        _ => format!("a type of fingerprint {fp:#x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Primitive::*;

    fn fp(sig: &[(Primitive, usize)]) -> u64 {
        unit_of(sig).map_or(0, |u| u.fingerprint())
    }

    fn unit(sig: &[(Primitive, usize)]) -> Unit {
        unit_of(sig).unwrap()
    }

    /// The reference: expand both signatures to primitives and compare.
    fn naive(
        sent: &[(Primitive, usize)],
        count: usize,
        recv: &[(Primitive, usize)],
        rcount: usize,
    ) -> bool {
        let expand = |s: &[(Primitive, usize)], c: usize| -> Vec<Primitive> {
            (0..c)
                .flat_map(|_| s.iter().flat_map(|&(p, k)| std::iter::repeat_n(p, k)))
                .collect()
        };
        let (a, b) = (expand(sent, count), expand(recv, rcount));
        a.len() <= b.len() && a == b[..a.len()]
    }

    fn bytes(sig: &[(Primitive, usize)], count: usize) -> usize {
        count * sig.iter().map(|&(p, k)| p.size() * k).sum::<usize>()
    }

    #[test]
    fn pow_geom_is_right() {
        for k in 0..40u64 {
            let (mut pw, mut g) = (1u64, 0u64);
            for _ in 0..k {
                g = addmod(g, pw);
                pw = mulmod(pw, 12345);
            }
            assert_eq!(pow_geom(12345, k), (pw, g), "k = {k}");
        }
    }

    #[test]
    fn units_normalize_decompositions() {
        assert_eq!(fp(&[(Int, 4)]), fp(&[(Int, 1)]));
        assert_eq!(fp(&[(Int, 2), (Int, 2)]), fp(&[(Int, 1)]));
        let s = [(Int, 1), (Double, 1)];
        assert_eq!(fp(&[(Int, 1), (Double, 1), (Int, 1), (Double, 1)]), fp(&s));
        assert_ne!(fp(&s), fp(&[(Double, 1), (Int, 1)]));
        assert_ne!(fp(&[(Int, 1)]), fp(&[(Float, 1)]));
        assert_eq!(
            unit(&[(Int, 2), (Double, 1), (Int, 2), (Double, 1)])
                .runs
                .len(),
            2
        );
        // A period whose ends are the same primitive does not reduce (runs merge).
        assert_eq!(
            unit(&[(Int, 1), (Double, 1), (Int, 2), (Double, 1), (Int, 1)]).n,
            6
        );
        // Bytes, packed and empty types are not checked.
        assert_eq!(fp(&[(Byte, 8)]), 0);
        assert_eq!(fp(&[(Int, 1), (Byte, 4)]), 0);
        assert_eq!(fp(&[(Packed, 1)]), 0);
        assert_eq!(fp(&[]), 0);
        assert_eq!(fp(&[(Int, 1 << 25)]), fp(&[(Int, 1)]));
        assert_eq!(
            fp(&[(Int, 1 << 25), (Double, 1)]),
            0,
            "units of 2^24 primitives or more are unchecked"
        );
    }

    #[test]
    fn prefixes_match_and_mismatches_do_not() {
        let id = [(Int, 1), (Double, 1)];
        let di = [(Double, 1), (Int, 1)];
        let c4 = [(Int, 4)];
        let int = [(Int, 1)];
        type Sig<'a> = &'a [(Primitive, usize)];
        let cases: &[(Sig, usize, Sig, usize)] = &[
            (&int, 3, &int, 5),
            (&int, 5, &int, 5),
            (&id, 2, &id, 4),
            (&id, 1, &di, 1),
            (&c4, 1, &int, 4),
            (&int, 4, &c4, 1),
            (&int, 8, &c4, 3),
            (&int, 6, &c4, 3),
            (
                &[(Int, 2), (Double, 1)],
                2,
                &[(Int, 2), (Double, 1), (Int, 2), (Double, 1)],
                1,
            ),
            (
                &[(Int, 1), (Int, 1), (Double, 1)],
                3,
                &[(Int, 2), (Double, 1)],
                3,
            ),
            // A prefix ending in the middle of the receive's element.
            (&int, 1, &id, 2),
            (&id, 1, &[(Int, 1), (Double, 1), (Float, 1)], 2),
            (&[(Int, 1), (Double, 1), (Float, 1)], 1, &id, 3),
            (&[(Int, 1), (Double, 1), (Int, 1)], 2, &id, 4),
            (&id, 2, &[(Int, 1), (Double, 1), (Int, 1)], 2),
            (&[(Double, 2)], 1, &id, 2),
            (&[(Float, 2)], 1, &[(Double, 1)], 2),
            (&[(Int, 1), (Float, 1)], 2, &[(Int, 1), (Float, 1)], 3),
            (&[(Int, 1), (Float, 1)], 2, &[(Float, 1), (Int, 1)], 3),
            (&[(Short, 2)], 1, &int, 4),
            (&[(Int, 3), (Double, 2)], 5, &[(Int, 3), (Double, 2)], 7),
            (&[(Int, 3), (Double, 2)], 5, &[(Int, 3), (Double, 1)], 9),
        ];
        for &(s, c, r, rc) in cases {
            let len = bytes(s, c);
            if len > bytes(r, rc) {
                continue; // truncation, not a type question
            }
            let want = naive(s, c, r, rc);
            let got = prefix_matches(&unit(r), len, fp(s));
            assert_eq!(got, want, "{s:?} x {c} into {r:?} x {rc}");
        }
        // The ones the brief spells out.
        assert!(prefix_matches(&unit(&int), 12, fp(&int)));
        assert!(prefix_matches(&unit(&id), 24, fp(&id)));
        assert!(!prefix_matches(&unit(&di), 12, fp(&id)));
        assert!(prefix_matches(&unit(&int), 16, fp(&c4)));
        assert!(prefix_matches(&unit(&c4), 16, fp(&int)));
        // Zero-length messages and unchecked senders always pass.
        assert!(prefix_matches(&unit(&di), 0, fp(&id)));
        assert!(prefix_matches(&unit(&di), 12, 0));
    }

    #[test]
    fn exhaustive_small_signatures() {
        // Every signature of up to 3 runs over {int, float, double} with run
        // lengths 1..=2, every count 1..=3: the fingerprint check agrees with
        // the expanded comparison.
        let prims = [Int, Float, Double];
        let mut sigs: Vec<Vec<(Primitive, usize)>> = Vec::new();
        for runs in 1..=3 {
            let combos = (prims.len() * 2).pow(runs);
            for mut x in 0..combos {
                let mut s = Vec::new();
                for _ in 0..runs {
                    let d = x % (prims.len() * 2);
                    x /= prims.len() * 2;
                    s.push((prims[d / 2], 1 + d % 2));
                }
                sigs.push(s);
            }
        }
        let mut checked = 0;
        for s in &sigs {
            for r in &sigs {
                let u = unit(r);
                for c in 1..=3 {
                    for rc in 1..=3 {
                        let len = bytes(s, c);
                        if len > bytes(r, rc) {
                            continue;
                        }
                        assert_eq!(
                            prefix_matches(&u, len, fp(s)),
                            naive(s, c, r, rc),
                            "{s:?} x {c} into {r:?} x {rc}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 10_000);
    }

    #[test]
    fn large_counts_are_cheap_and_right() {
        let id = [(Int, 1), (Double, 1)];
        let u = unit(&id);
        let n = 1usize << 40;
        assert!(prefix_matches(&u, n / 2 * 12, fp(&id)));
        assert!(prefix_matches(
            &unit(&[(Int, 1), (Double, 1), (Int, 1), (Double, 1)]),
            (n + 1) * 12,
            fp(&id)
        ));
        assert!(!prefix_matches(
            &unit(&[(Double, 1), (Int, 1)]),
            n * 12,
            fp(&id)
        ));
        assert!(prefix_matches(
            &unit(&[(Int, 1)]),
            n * 4,
            fp(&[(Int, 1 << 20)])
        ));
        assert!(!prefix_matches(
            &unit(&[(Int, 1)]),
            n * 4,
            fp(&[(Float, 1 << 20)])
        ));
    }

    #[test]
    fn registry_and_descriptions() {
        let s = unit(&[(Int, 2), (Double, 1)]);
        let f = register(s.clone());
        assert_eq!(lookup(f).as_deref(), Some(&s));
        assert_eq!(describe_message(f, 48), "3 x {2 MPI_INT, MPI_DOUBLE}");
        assert_eq!(describe_message(fp(&[(Double, 3)]), 24), "3 x MPI_DOUBLE");
        assert_eq!(describe_receive(fp(&[(Int, 1)]), 20), "5 x MPI_INT");
        assert!(check(fp(&[(Int, 1)]), 16, fp(&[(Int, 4)])));
        assert!(!check(fp(&[(Int, 1)]), 16, fp(&[(Float, 1)])));
        let unseen = (12345u64 << 24) | 3;
        assert!(describe_message(unseen, 24).contains("not seen"));
    }
}
