//! Type signatures kept by structure.
//!
//! A signature is a sequence of runs (primitive, count); a repetition of a
//! child whose signature has several runs is flattened into its parent when
//! that yields at most [`FLAT_LIMIT`] parts, and kept as a [`Part::Rep`]
//! (count, child) beyond, as the blocks are. So a type built by repeating a
//! struct of mixed types millions of times (its signature then has millions
//! of runs) costs memory in proportion to its constructors' arguments, not to
//! its run count. Readers walk the runs with [`Sig::runs`], which merges
//! adjacent runs of one primitive across part and repetition boundaries.

use std::sync::Arc;

use super::Primitive;

/// A repetition is flattened into its parent when it yields at most this many parts.
const FLAT_LIMIT: usize = 4096;

#[derive(Debug, Clone)]
pub(crate) enum Part {
    /// `count` primitives `p` in a row.
    Run(Primitive, usize),
    /// `count` copies of `child` one after another (`child` has two parts or more).
    Rep(usize, Arc<Sig>),
}

/// The signature of one element (see the module comment).
#[derive(Debug, Clone, Default)]
pub(crate) struct Sig {
    parts: Vec<Part>,
    /// Runs before merging across repetitions (saturating): what a flat list would hold.
    flat_runs: usize,
}

impl Sig {
    /// The signature of one primitive.
    pub(crate) fn one(p: Primitive) -> Sig {
        Sig {
            parts: vec![Part::Run(p, 1)],
            flat_runs: 1,
        }
    }

    /// `Some((p, k))` when the signature is `k` primitives `p` (and nothing else).
    pub(crate) fn single_run(&self) -> Option<(Primitive, usize)> {
        match self.parts.as_slice() {
            [Part::Run(p, k)] => Some((*p, *k)),
            _ => None,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The stored parts, in order (for readers that keep the structure, as
    /// external32's conversion plan).
    pub(crate) fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// About how many runs a flat list of this signature would hold
    /// (saturating at `usize::MAX`).
    pub(crate) fn flat_runs(&self) -> usize {
        self.flat_runs
    }

    /// Parts stored (what the signature costs in memory).
    #[cfg(test)]
    pub(crate) fn stored_parts(&self) -> usize {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Run(..) => 1,
                Part::Rep(_, c) => 1 + c.stored_parts(),
            })
            .sum()
    }

    /// Appends `k` primitives `p`; `None` when the count overflows.
    pub(crate) fn push_run(&mut self, p: Primitive, k: usize) -> Option<()> {
        if k == 0 {
            return Some(());
        }
        if let Some(Part::Run(q, n)) = self.parts.last_mut() {
            if *q == p {
                *n = n.checked_add(k)?;
                return Some(());
            }
        }
        self.parts.push(Part::Run(p, k));
        self.flat_runs = self.flat_runs.saturating_add(1);
        Some(())
    }

    /// Appends `n` copies of `child`; `None` when a count overflows.
    pub(crate) fn push_rep(&mut self, n: usize, child: &Arc<Sig>) -> Option<()> {
        if n == 0 || child.is_empty() {
            return Some(());
        }
        if let Some((p, k)) = child.single_run() {
            return self.push_run(p, k.checked_mul(n)?);
        }
        if n == 1 || n.saturating_mul(child.parts.len()) <= FLAT_LIMIT {
            for _ in 0..n {
                for part in &child.parts {
                    match part {
                        Part::Run(p, k) => self.push_run(*p, *k)?,
                        Part::Rep(m, c) => {
                            self.parts.push(Part::Rep(*m, c.clone()));
                            self.flat_runs = self
                                .flat_runs
                                .saturating_add(c.flat_runs.saturating_mul(*m));
                        }
                    }
                }
            }
            return Some(());
        }
        self.parts.push(Part::Rep(n, child.clone()));
        self.flat_runs = self
            .flat_runs
            .saturating_add(child.flat_runs.saturating_mul(n));
        Some(())
    }

    /// The maximal runs of `n` elements of this signature, in order (runs of
    /// one primitive merged, also across repetitions). Counts saturate.
    pub(crate) fn runs(&self, n: usize) -> Runs<'_> {
        Runs {
            raw: RawRuns::new(self, n),
            pending: None,
        }
    }

    /// The maximal runs of one element, as a list (tests and small types).
    pub(crate) fn to_vec(&self) -> Vec<(Primitive, usize)> {
        self.runs(1).collect()
    }
}

/// The runs of a signature in order, not merged across parts.
struct RawRuns<'a> {
    /// (parts, next index, copies left including the current one).
    stack: Vec<(&'a [Part], usize, usize)>,
    /// A signature of one run repeated: given at once.
    single: Option<(Primitive, usize)>,
}

impl<'a> RawRuns<'a> {
    fn new(sig: &'a Sig, n: usize) -> RawRuns<'a> {
        if n == 0 || sig.is_empty() {
            return RawRuns {
                stack: Vec::new(),
                single: None,
            };
        }
        if let Some((p, k)) = sig.single_run() {
            return RawRuns {
                stack: Vec::new(),
                single: Some((p, k.saturating_mul(n))),
            };
        }
        RawRuns {
            stack: vec![(&sig.parts, 0, n)],
            single: None,
        }
    }
}

impl Iterator for RawRuns<'_> {
    type Item = (Primitive, usize);
    fn next(&mut self) -> Option<(Primitive, usize)> {
        if let Some(r) = self.single.take() {
            return Some(r);
        }
        loop {
            let top = self.stack.last_mut()?;
            if top.1 == top.0.len() {
                top.2 -= 1;
                if top.2 == 0 {
                    self.stack.pop();
                } else {
                    top.1 = 0;
                }
                continue;
            }
            let part = &top.0[top.1];
            top.1 += 1;
            match part {
                Part::Run(p, k) => return Some((*p, *k)),
                Part::Rep(m, c) => {
                    if *m > 0 && !c.parts.is_empty() {
                        self.stack.push((&c.parts, 0, *m));
                    }
                }
            }
        }
    }
}

/// Maximal runs of a signature (see [`Sig::runs`]).
pub(crate) struct Runs<'a> {
    raw: RawRuns<'a>,
    pending: Option<(Primitive, usize)>,
}

impl Iterator for Runs<'_> {
    type Item = (Primitive, usize);
    fn next(&mut self) -> Option<(Primitive, usize)> {
        let (p, mut k) = self.pending.take().or_else(|| self.raw.next())?;
        for (q, j) in self.raw.by_ref() {
            if q == p {
                k = k.saturating_add(j);
            } else {
                self.pending = Some((q, j));
                break;
            }
        }
        Some((p, k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> Arc<Sig> {
        let mut s = Sig::default();
        s.push_run(Primitive::Int, 1).unwrap();
        s.push_run(Primitive::Double, 2).unwrap();
        Arc::new(s)
    }

    #[test]
    fn small_repetitions_are_flattened_and_merged() {
        let mut s = Sig::default();
        s.push_run(Primitive::Double, 1).unwrap();
        s.push_rep(3, &pair()).unwrap();
        s.push_run(Primitive::Double, 4).unwrap();
        use Primitive::*;
        assert_eq!(
            s.to_vec(),
            vec![
                (Double, 1),
                (Int, 1),
                (Double, 2),
                (Int, 1),
                (Double, 2),
                (Int, 1),
                (Double, 6)
            ]
        );
        assert_eq!(s.runs(2).count(), 13);
    }

    #[test]
    fn large_repetitions_are_kept_by_structure() {
        let mut s = Sig::default();
        s.push_rep(1_000_000, &pair()).unwrap();
        let s = Arc::new(s);
        let mut t = Sig::default();
        t.push_run(Primitive::Double, 5).unwrap();
        t.push_rep(3, &s).unwrap();
        assert!(t.stored_parts() <= 16, "{} parts stored", t.stored_parts());
        assert_eq!(t.flat_runs(), 1 + 3 * 2_000_000);
        let mut runs = t.runs(1);
        assert_eq!(runs.next(), Some((Primitive::Double, 5)));
        assert_eq!(runs.next(), Some((Primitive::Int, 1)));
        assert_eq!(runs.next(), Some((Primitive::Double, 2)));
        // Merged runs: the leading Double run, then Int and Double runs 3M times.
        assert_eq!(t.runs(1).count(), 1 + 2 * 3_000_000);
    }

    #[test]
    fn single_runs_repeat_in_one_run() {
        let s = Sig::one(Primitive::Int);
        assert_eq!(
            s.runs(usize::MAX).collect::<Vec<_>>(),
            vec![(Primitive::Int, usize::MAX)]
        );
        let mut t = Sig::default();
        t.push_rep(1 << 40, &Arc::new(s)).unwrap();
        assert_eq!(t.single_run(), Some((Primitive::Int, 1 << 40)));
    }
}
