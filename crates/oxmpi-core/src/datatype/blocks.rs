//! The data blocks of one element as a tree ([`Blocks`]): flat merged runs with
//! prefix sums, or a regular repetition kept by structure so that no constructor
//! materialises more blocks than its arguments name (see the parent module).

use std::sync::Arc;

/// A repetition of a child's blocks is flattened into its parent's list when
/// it yields at most this many blocks; beyond, it is kept as a [`Blocks::Rep`].
pub(super) const FLAT_LIMIT: usize = 4096;

/// The data blocks of one element (byte offset from the element's origin,
/// byte length), in type-map order, as a tree.
#[derive(Debug)]
pub(crate) enum Blocks {
    /// Blocks one after another; `prefix[i]` = sum of the lengths of `list[..i]`.
    Flat {
        list: Vec<(isize, usize)>,
        prefix: Vec<usize>,
    },
    /// `count` copies of `child` (whose one copy holds `child_size` bytes),
    /// copy k shifted by `disp + k * stride` bytes.
    Rep {
        disp: isize,
        count: usize,
        stride: isize,
        child_size: usize,
        child: Arc<Blocks>,
    },
    /// Parts one after another; `prefix[i]` = bytes in `parts[..i]`.
    Seq {
        parts: Vec<Blocks>,
        prefix: Vec<usize>,
    },
}

impl Blocks {
    pub(super) fn flat(list: Vec<(isize, usize)>) -> Blocks {
        let prefix = prefix_sums(&list);
        Blocks::Flat { list, prefix }
    }

    /// Bytes of data in one copy.
    pub(crate) fn size(&self) -> usize {
        match self {
            Blocks::Flat { prefix, .. } | Blocks::Seq { prefix, .. } => {
                *prefix.last().unwrap_or(&0)
            }
            Blocks::Rep {
                count, child_size, ..
            } => count * child_size,
        }
    }

    /// Number of blocks (saturating).
    pub(crate) fn count(&self) -> usize {
        match self {
            Blocks::Flat { list, .. } => list.len(),
            Blocks::Rep { count, child, .. } => count.saturating_mul(child.count()),
            Blocks::Seq { parts, .. } => parts
                .iter()
                .fold(0usize, |a, p| a.saturating_add(p.count())),
        }
    }

    /// The one block, if there is exactly one.
    pub(super) fn single(&self) -> Option<(isize, usize)> {
        match self {
            Blocks::Flat { list, .. } if list.len() == 1 => Some(list[0]),
            _ => None,
        }
    }

    /// Calls `f(offset, len)` for every block, in order, shifted by `base`
    /// (wrapping: a caller adds absolute addresses).
    pub(crate) fn for_each(&self, base: isize, f: &mut dyn FnMut(isize, usize)) {
        match self {
            Blocks::Flat { list, .. } => {
                for &(o, l) in list {
                    f(base.wrapping_add(o), l);
                }
            }
            Blocks::Rep {
                disp,
                count,
                stride,
                child,
                ..
            } => {
                let b = base.wrapping_add(*disp);
                for k in 0..*count {
                    child.for_each(b.wrapping_add((k as isize).wrapping_mul(*stride)), f);
                }
            }
            Blocks::Seq { parts, .. } => {
                for p in parts {
                    p.for_each(base, f);
                }
            }
        }
    }

    /// Calls `f(memory offset, at, len)` for the pieces of the bytes
    /// `[r, r + n)` of one copy's packed stream (`r + n <= size()`), the copy
    /// shifted by `base`; `at` counts the bytes emitted so far.
    pub(super) fn walk(
        &self,
        base: isize,
        r: usize,
        n: usize,
        at: &mut usize,
        f: &mut dyn FnMut(isize, usize, usize),
    ) {
        let mut left = n;
        match self {
            Blocks::Flat { list, prefix } => {
                let mut bi = prefix.partition_point(|&p| p <= r) - 1;
                let mut within = r - prefix[bi];
                while left > 0 {
                    let (off, len) = list[bi];
                    let take = (len - within).min(left);
                    f(
                        base.wrapping_add(off).wrapping_add(within as isize),
                        *at,
                        take,
                    );
                    *at += take;
                    left -= take;
                    within = 0;
                    bi += 1;
                }
            }
            Blocks::Rep {
                disp,
                stride,
                child_size,
                child,
                ..
            } => {
                let cs = *child_size;
                let (mut k, mut within) = (r / cs, r % cs);
                let b = base.wrapping_add(*disp);
                while left > 0 {
                    let take = (cs - within).min(left);
                    child.walk(
                        b.wrapping_add((k as isize).wrapping_mul(*stride)),
                        within,
                        take,
                        at,
                        f,
                    );
                    left -= take;
                    within = 0;
                    k += 1;
                }
            }
            Blocks::Seq { parts, prefix } => {
                let mut pi = prefix.partition_point(|&p| p <= r) - 1;
                let mut within = r - prefix[pi];
                while left > 0 {
                    let take = (prefix[pi + 1] - prefix[pi] - within).min(left);
                    parts[pi].walk(base, within, take, at, f);
                    left -= take;
                    within = 0;
                    pi += 1;
                }
            }
        }
    }

    /// The blocks as one list (adjacent blocks merged).
    pub(super) fn to_vec(&self) -> Vec<(isize, usize)> {
        let mut v = Vec::new();
        self.for_each(0, &mut |o, l| push_merged(&mut v, o, l));
        v
    }
}

pub(super) fn push_merged(blocks: &mut Vec<(isize, usize)>, off: isize, len: usize) {
    if len == 0 {
        return;
    }
    if let Some(last) = blocks.last_mut() {
        if last.0.checked_add(last.1 as isize) == Some(off) {
            last.1 += len;
            return;
        }
    }
    blocks.push((off, len));
}

fn prefix_sums(blocks: &[(isize, usize)]) -> Vec<usize> {
    let mut v = Vec::with_capacity(blocks.len() + 1);
    let mut s = 0usize;
    v.push(0);
    for &(_, l) in blocks {
        s += l;
        v.push(s);
    }
    v
}
