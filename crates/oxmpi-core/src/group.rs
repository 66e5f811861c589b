//! Process groups (MPI-5.0 chapter "Groups, Contexts, Communicators, and Caching",
//! section "Group Management"): the pure, communication-free part.
//!
//! A [`Group`] is an ordered set of distinct processes, named here by their rank in
//! `MPI_COMM_WORLD` ("world ranks"); the position of a process in the list is its rank
//! in the group. Every operation is local. Groups are immutable and cheap to clone
//! (the rank list is shared), so a handle table may hand out copies freely.
//!
//! Error classes (the standard only says "erroneous"; these follow MPICH where it is
//! consistent and the standard's own equivalences otherwise):
//! - a rank argument outside `0..size`, or the same rank given twice, in
//!   `incl`/`excl`/`translate_ranks`, and a computed rank of a range triplet that is
//!   outside the group or repeats an earlier one: `MPI_ERR_RANK` (the standard defines
//!   `range_incl` as `incl` of the expanded list, so the two report the same class);
//! - a range triplet with stride 0, or whose stride points away from `last`
//!   (`first < last` with a negative stride, `first > last` with a positive one):
//!   `MPI_ERR_ARG` (as MPICH; the triplet itself is malformed, no rank is involved).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::error::{ErrorClass, MpiError, Result};
use crate::request::PROC_NULL;

/// The result of `MPI_Group_compare` / `MPI_Comm_compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Comparison {
    /// `MPI_IDENT`: same members in the same order (for communicators: the same
    /// communicator object).
    Ident,
    /// `MPI_CONGRUENT`: communicators only — same group (members and order), different
    /// context.
    Congruent,
    /// `MPI_SIMILAR`: same members, different order.
    Similar,
    /// `MPI_UNEQUAL`: anything else.
    Unequal,
}

impl Comparison {
    /// Every comparison result.
    pub const ALL: &'static [Comparison] = &[
        Comparison::Ident,
        Comparison::Congruent,
        Comparison::Similar,
        Comparison::Unequal,
    ];

    /// The C name, e.g. `MPI_SIMILAR` (the C library gives the standard ABI's value
    /// by this name, from abi.txt).
    pub const fn name(self) -> &'static str {
        match self {
            Comparison::Ident => "MPI_IDENT",
            Comparison::Congruent => "MPI_CONGRUENT",
            Comparison::Similar => "MPI_SIMILAR",
            Comparison::Unequal => "MPI_UNEQUAL",
        }
    }
}

/// An MPI group: world ranks in group order (index = rank in the group).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group(Arc<[u32]>);

impl Default for Group {
    fn default() -> Group {
        Group::empty()
    }
}

impl Group {
    /// `MPI_GROUP_EMPTY`.
    pub fn empty() -> Group {
        Group(Arc::from(Vec::new()))
    }

    /// A group of these world ranks, in this order. The ranks must be distinct
    /// (checked in debug builds); engine code builds groups from communicators, whose
    /// members always are.
    pub fn from_world_ranks(v: Vec<u32>) -> Group {
        debug_assert!(
            {
                let mut seen = HashSet::with_capacity(v.len());
                v.iter().all(|w| seen.insert(*w))
            },
            "Group::from_world_ranks: duplicate world rank in {v:?}"
        );
        Group(Arc::from(v))
    }

    /// The members' world ranks, in group order.
    pub fn world_ranks(&self) -> &[u32] {
        &self.0
    }

    /// `MPI_Group_size`.
    pub fn size(&self) -> i32 {
        self.0.len() as i32
    }

    /// Whether the group has no members (is `MPI_GROUP_EMPTY`-equal).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The group rank of world rank `w`, `None` if it is not a member
    /// (`MPI_Group_rank` reports that as `MPI_UNDEFINED`).
    pub fn rank_of_world(&self, w: u32) -> Option<i32> {
        self.0.iter().position(|&x| x == w).map(|r| r as i32)
    }

    /// The world rank of group rank `rank`, if it is one.
    pub fn world_rank_of(&self, rank: i32) -> Option<u32> {
        usize::try_from(rank)
            .ok()
            .and_then(|r| self.0.get(r).copied())
    }

    /// A lookup table world rank -> group rank.
    fn index(&self) -> HashMap<u32, i32> {
        self.0
            .iter()
            .enumerate()
            .map(|(r, &w)| (w, r as i32))
            .collect()
    }

    fn member_set(&self) -> HashSet<u32> {
        self.0.iter().copied().collect()
    }

    /// `MPI_Group_translate_ranks`: the rank in `other` of each process named by its
    /// rank in `self`; `MPI_PROC_NULL` translates to `MPI_PROC_NULL`, a process that is
    /// not in `other` to `None` (C: `MPI_UNDEFINED`). A rank outside `0..size` is
    /// `MPI_ERR_RANK`.
    pub fn translate_ranks(&self, ranks: &[i32], other: &Group) -> Result<Vec<Option<i32>>> {
        const CALL: &str = "MPI_Group_translate_ranks";
        // A linear scan of `other` per rank is fine for a handful of ranks; build a
        // table when the product gets large.
        let table = (ranks.len() > 4 && other.0.len() > 16).then(|| other.index());
        ranks
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                if r == PROC_NULL {
                    return Ok(Some(PROC_NULL));
                }
                let w = self.world_rank_of(r).ok_or_else(|| {
                    MpiError::arg(
                        ErrorClass::Rank,
                        CALL,
                        "ranks1",
                        format!(
                            "ranks1[{i}] = {r} is neither a rank of group1 (0..{}) nor MPI_PROC_NULL",
                            self.size()
                        ),
                    )
                })?;
                let t = match &table {
                    Some(t) => t.get(&w).copied(),
                    None => other.rank_of_world(w),
                };
                Ok(t)
            })
            .collect()
    }

    /// `MPI_Group_compare`: [`Comparison::Ident`] (same members, same order),
    /// [`Comparison::Similar`] (same members, other order) or [`Comparison::Unequal`].
    pub fn compare(&self, other: &Group) -> Comparison {
        if self.0 == other.0 {
            return Comparison::Ident;
        }
        if self.0.len() == other.0.len() {
            let mine = self.member_set();
            if other.0.iter().all(|w| mine.contains(w)) {
                return Comparison::Similar;
            }
        }
        Comparison::Unequal
    }

    /// `MPI_Group_union`: all of `self` in its order, then the members of `o` that are
    /// not in `self`, in `o`'s order.
    pub fn union(&self, o: &Group) -> Group {
        let mine = self.member_set();
        let mut v = self.0.to_vec();
        v.extend(o.0.iter().copied().filter(|w| !mine.contains(w)));
        Group(Arc::from(v))
    }

    /// `MPI_Group_intersection`: the members of `self` that are also in `o`, in
    /// `self`'s order.
    pub fn intersection(&self, o: &Group) -> Group {
        let theirs = o.member_set();
        Group(
            self.0
                .iter()
                .copied()
                .filter(|w| theirs.contains(w))
                .collect(),
        )
    }

    /// `MPI_Group_difference`: the members of `self` that are not in `o`, in `self`'s
    /// order.
    pub fn difference(&self, o: &Group) -> Group {
        let theirs = o.member_set();
        Group(
            self.0
                .iter()
                .copied()
                .filter(|w| !theirs.contains(w))
                .collect(),
        )
    }

    /// Checks that `ranks` are valid, distinct ranks of this group (`MPI_ERR_RANK`
    /// otherwise) and returns them as indices.
    fn checked_ranks(&self, call: &str, ranks: &[i32]) -> Result<Vec<usize>> {
        let n = self.0.len();
        let mut first_at = vec![usize::MAX; n];
        ranks
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                let idx = usize::try_from(r).ok().filter(|&x| x < n).ok_or_else(|| {
                    MpiError::arg(
                        ErrorClass::Rank,
                        call,
                        "ranks",
                        format!("ranks[{i}] = {r} is not a rank of the group (0..{n})"),
                    )
                })?;
                if first_at[idx] != usize::MAX {
                    return Err(MpiError::arg(
                        ErrorClass::Rank,
                        call,
                        "ranks",
                        format!("ranks[{i}] = {r} repeats ranks[{}]", first_at[idx]),
                    ));
                }
                first_at[idx] = i;
                Ok(idx)
            })
            .collect()
    }

    /// `MPI_Group_incl`: the processes with ranks `ranks[0], ranks[1], ...`, in that
    /// order. Every rank must be valid and distinct (`MPI_ERR_RANK`).
    pub fn incl(&self, ranks: &[i32]) -> Result<Group> {
        let idx = self.checked_ranks("MPI_Group_incl", ranks)?;
        Ok(Group(idx.into_iter().map(|i| self.0[i]).collect()))
    }

    /// `MPI_Group_excl`: the group without the processes with ranks `ranks`, in the
    /// group's order. Every rank must be valid and distinct (`MPI_ERR_RANK`).
    pub fn excl(&self, ranks: &[i32]) -> Result<Group> {
        let idx = self.checked_ranks("MPI_Group_excl", ranks)?;
        Ok(self.without(&idx))
    }

    fn without(&self, idx: &[usize]) -> Group {
        let mut drop = vec![false; self.0.len()];
        for &i in idx {
            drop[i] = true;
        }
        Group(
            self.0
                .iter()
                .zip(&drop)
                .filter(|(_, &d)| !d)
                .map(|(&w, _)| w)
                .collect(),
        )
    }

    /// Expands range triplets `(first, last, stride)` into the ranks
    /// `first, first+stride, ..., first + floor((last-first)/stride)*stride`, checking
    /// that each is a valid rank and that no rank appears twice.
    fn expand_ranges(&self, call: &str, triplets: &[[i32; 3]]) -> Result<Vec<usize>> {
        let n = self.0.len() as i64;
        let mut first_in: Vec<Option<usize>> = vec![None; self.0.len()];
        let mut out = Vec::new();
        for (t, &[first, last, stride]) in triplets.iter().enumerate() {
            if stride == 0 {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    call,
                    "ranges",
                    format!("ranges[{t}] = ({first}, {last}, {stride}): the stride is zero"),
                ));
            }
            let (f, l, s) = (first as i64, last as i64, stride as i64);
            if (s > 0 && f > l) || (s < 0 && f < l) {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    call,
                    "ranges",
                    format!(
                        "ranges[{t}] = ({first}, {last}, {stride}): a stride of {stride} never goes from {first} to {last}"
                    ),
                ));
            }
            let count = (l - f) / s + 1;
            for k in 0..count {
                let r = f + k * s;
                if r < 0 || r >= n {
                    return Err(MpiError::arg(
                        ErrorClass::Rank,
                        call,
                        "ranges",
                        format!(
                            "ranges[{t}] = ({first}, {last}, {stride}) yields rank {r}, which is not a rank of the group (0..{n})"
                        ),
                    ));
                }
                let idx = r as usize;
                if let Some(prev) = first_in[idx] {
                    return Err(MpiError::arg(
                        ErrorClass::Rank,
                        call,
                        "ranges",
                        format!(
                            "ranges[{t}] = ({first}, {last}, {stride}) yields rank {r} again (first yielded by ranges[{prev}])"
                        ),
                    ));
                }
                first_in[idx] = Some(t);
                out.push(idx);
            }
        }
        Ok(out)
    }

    /// `MPI_Group_range_incl`: [`Group::incl`] of the ranks the triplets
    /// `(first, last, stride)` expand to, in that order. The stride may be negative,
    /// never zero; each computed rank must be valid and distinct.
    pub fn range_incl(&self, triplets: &[[i32; 3]]) -> Result<Group> {
        let idx = self.expand_ranges("MPI_Group_range_incl", triplets)?;
        Ok(Group(idx.into_iter().map(|i| self.0[i]).collect()))
    }

    /// `MPI_Group_range_excl`: [`Group::excl`] of the ranks the triplets expand to.
    pub fn range_excl(&self, triplets: &[[i32; 3]]) -> Result<Group> {
        let idx = self.expand_ranges("MPI_Group_range_excl", triplets)?;
        Ok(self.without(&idx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(v: &[u32]) -> Group {
        Group::from_world_ranks(v.to_vec())
    }

    fn class<T: std::fmt::Debug>(r: Result<T>) -> ErrorClass {
        r.expect_err("expected an error").class
    }

    #[test]
    fn comparison_names() {
        for c in Comparison::ALL {
            assert!(c.name().starts_with("MPI_"));
        }
        assert_eq!(Comparison::Similar.name(), "MPI_SIMILAR");
    }

    #[test]
    fn accessors() {
        let e = Group::empty();
        assert_eq!(e.size(), 0);
        assert!(e.is_empty());
        assert_eq!(e, Group::default());
        let a = g(&[5, 2, 9]);
        assert_eq!(a.size(), 3);
        assert_eq!(a.world_ranks(), &[5, 2, 9]);
        assert_eq!(a.rank_of_world(2), Some(1));
        assert_eq!(a.rank_of_world(7), None);
        assert_eq!(a.world_rank_of(2), Some(9));
        assert_eq!(a.world_rank_of(3), None);
        assert_eq!(a.world_rank_of(-1), None);
    }

    #[test]
    fn translate_ranks_maps_proc_null_and_non_members() {
        let a = g(&[0, 1, 2, 3, 4]);
        let b = g(&[4, 2, 7]);
        assert_eq!(
            a.translate_ranks(&[0, 2, 4, PROC_NULL, 1], &b).unwrap(),
            vec![None, Some(1), Some(0), Some(PROC_NULL), None]
        );
        assert_eq!(
            b.translate_ranks(&[], &a).unwrap(),
            Vec::<Option<i32>>::new()
        );
        assert_eq!(b.translate_ranks(&[2], &a).unwrap(), vec![None]);
        assert_eq!(class(a.translate_ranks(&[5], &b)), ErrorClass::Rank);
        assert_eq!(class(a.translate_ranks(&[-1], &b)), ErrorClass::Rank);
        assert_eq!(class(a.translate_ranks(&[i32::MIN], &b)), ErrorClass::Rank);
        let e = a.translate_ranks(&[0, 9], &b).unwrap_err();
        assert!(
            e.message.contains("MPI_Group_translate_ranks") && e.message.contains("ranks1"),
            "{e}"
        );
        // The table path (many ranks, large other group) agrees with the scan.
        let big: Group = Group::from_world_ranks((0..100).rev().collect());
        let ranks: Vec<i32> = (0..5).collect();
        assert_eq!(
            a.translate_ranks(&ranks, &big).unwrap(),
            vec![Some(99), Some(98), Some(97), Some(96), Some(95)]
        );
    }

    #[test]
    fn compare_ident_similar_unequal() {
        let a = g(&[1, 2, 3]);
        assert_eq!(a.compare(&a.clone()), Comparison::Ident);
        assert_eq!(a.compare(&g(&[3, 1, 2])), Comparison::Similar);
        assert_eq!(a.compare(&g(&[1, 2])), Comparison::Unequal);
        assert_eq!(a.compare(&g(&[1, 2, 4])), Comparison::Unequal);
        assert_eq!(Group::empty().compare(&Group::empty()), Comparison::Ident);
        assert_eq!(Group::empty().compare(&a), Comparison::Unequal);
    }

    #[test]
    fn set_operations_keep_the_standard_order() {
        let a = g(&[5, 1, 3, 7]);
        let b = g(&[2, 3, 9, 5]);
        assert_eq!(a.union(&b).world_ranks(), &[5, 1, 3, 7, 2, 9]);
        assert_eq!(b.union(&a).world_ranks(), &[2, 3, 9, 5, 1, 7]);
        assert_eq!(a.intersection(&b).world_ranks(), &[5, 3]);
        assert_eq!(b.intersection(&a).world_ranks(), &[3, 5]);
        assert_eq!(a.difference(&b).world_ranks(), &[1, 7]);
        assert_eq!(b.difference(&a).world_ranks(), &[2, 9]);
        assert!(a.difference(&a).is_empty());
        assert!(a.intersection(&Group::empty()).is_empty());
        assert_eq!(Group::empty().union(&a), a);
    }

    #[test]
    fn incl_and_excl() {
        let a = g(&[10, 11, 12, 13, 14]);
        assert_eq!(a.incl(&[4, 0, 2]).unwrap().world_ranks(), &[14, 10, 12]);
        assert!(a.incl(&[]).unwrap().is_empty());
        assert_eq!(a.excl(&[4, 0, 2]).unwrap().world_ranks(), &[11, 13]);
        assert_eq!(a.excl(&[]).unwrap(), a);
        for bad in [&[5][..], &[-1], &[0, 0], &[1, 2, 1], &[PROC_NULL]] {
            assert_eq!(class(a.incl(bad)), ErrorClass::Rank, "incl {bad:?}");
            assert_eq!(class(a.excl(bad)), ErrorClass::Rank, "excl {bad:?}");
        }
        let e = a.incl(&[1, 1]).unwrap_err();
        assert!(
            e.message.contains("MPI_Group_incl") && e.message.contains("`ranks`"),
            "{e}"
        );
        let e = a.excl(&[9]).unwrap_err();
        assert!(e.message.contains("MPI_Group_excl"), "{e}");
    }

    #[test]
    fn range_incl_and_excl() {
        let a: Group = Group::from_world_ranks((100..110).collect());
        let r = |v: &[i32]| v.iter().map(|&x| 100 + x as u32).collect::<Vec<_>>();
        assert_eq!(
            a.range_incl(&[[0, 9, 3]]).unwrap().world_ranks(),
            r(&[0, 3, 6, 9])
        );
        assert_eq!(
            a.range_incl(&[[0, 8, 3]]).unwrap().world_ranks(),
            r(&[0, 3, 6])
        );
        assert_eq!(
            a.range_incl(&[[9, 0, -4]]).unwrap().world_ranks(),
            r(&[9, 5, 1])
        );
        assert_eq!(a.range_incl(&[[4, 4, -1]]).unwrap().world_ranks(), r(&[4]));
        assert_eq!(
            a.range_incl(&[[1, 3, 1], [9, 7, -1]])
                .unwrap()
                .world_ranks(),
            r(&[1, 2, 3, 9, 8, 7])
        );
        // `last` itself need not be a rank: only the computed ranks are checked.
        assert_eq!(
            a.range_incl(&[[0, 11, 6]]).unwrap().world_ranks(),
            r(&[0, 6])
        );
        assert_eq!(
            a.range_incl(&[[9, -1, -6]]).unwrap().world_ranks(),
            r(&[9, 3])
        );
        assert!(a.range_incl(&[]).unwrap().is_empty());
        assert_eq!(
            a.range_excl(&[[0, 9, 2]]).unwrap().world_ranks(),
            r(&[1, 3, 5, 7, 9])
        );
        assert_eq!(a.range_excl(&[[9, 0, -1]]).unwrap(), Group::empty());
        assert_eq!(a.range_excl(&[]).unwrap(), a);

        for call in [Group::range_incl, Group::range_excl] {
            assert_eq!(
                class(call(&a, &[[0, 5, 0]])),
                ErrorClass::Arg,
                "zero stride"
            );
            assert_eq!(
                class(call(&a, &[[5, 0, 1]])),
                ErrorClass::Arg,
                "wrong direction"
            );
            assert_eq!(
                class(call(&a, &[[0, 5, -1]])),
                ErrorClass::Arg,
                "wrong direction"
            );
            assert_eq!(
                class(call(&a, &[[8, 11, 1]])),
                ErrorClass::Rank,
                "past the end"
            );
            assert_eq!(class(call(&a, &[[-1, 2, 1]])), ErrorClass::Rank, "negative");
            assert_eq!(
                class(call(&a, &[[10, 10, 1]])),
                ErrorClass::Rank,
                "first out of range"
            );
            assert_eq!(
                class(call(&a, &[[0, 4, 2], [4, 6, 1]])),
                ErrorClass::Rank,
                "duplicate"
            );
            assert_eq!(
                class(call(&a, &[[0, 9, 1], [3, 3, 1]])),
                ErrorClass::Rank,
                "duplicate"
            );
        }
        let e = a.range_incl(&[[0, 5, 0]]).unwrap_err();
        assert!(
            e.message.contains("MPI_Group_range_incl") && e.message.contains("ranges"),
            "{e}"
        );
        // Extreme values neither overflow nor allocate wildly.
        assert_eq!(
            class(a.range_incl(&[[i32::MIN, i32::MAX, i32::MAX]])),
            ErrorClass::Rank
        );
        assert_eq!(
            class(a.range_incl(&[[i32::MAX, i32::MIN, i32::MIN]])),
            ErrorClass::Rank
        );
        assert_eq!(class(a.range_incl(&[[0, i32::MAX, 1]])), ErrorClass::Rank);
    }
}
