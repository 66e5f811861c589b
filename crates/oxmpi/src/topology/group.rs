//! Process groups (`MPI_Group_*`) and `MPI_Comm_create_group`.
#![deny(unsafe_code)]

use std::sync::OnceLock;

use oxmpi_core::comm::{create as ccreate, Comm};
use oxmpi_core::error::{ErrorClass, MpiError};
use oxmpi_core::group::{Comparison, Group as CoreGroup};

use super::Rank;
use crate::error::{OrFatal, Result};
use crate::Tag;

/// How two groups relate (`MPI_Group_compare`).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum GroupRelation {
    /// Same members in the same order.
    Identical,
    /// Same members, another order.
    Similar,
    /// Anything else.
    Unequal,
}

/// A group made at run time: by [`Communicator::group`](super::Communicator::group) or
/// by the set operations of [`Group`]. Cheap to clone; a local object (no communication).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserGroup(pub(crate) CoreGroup);

impl UserGroup {
    /// The group of these processes, named by their rank in the world, in this order.
    /// The ranks must be distinct.
    pub fn from_world_ranks(ranks: Vec<u32>) -> UserGroup {
        UserGroup(CoreGroup::from_world_ranks(ranks))
    }
}

/// A predefined group: [`SystemGroup::empty`] (`MPI_GROUP_EMPTY`).
#[derive(Copy, Clone, Debug)]
pub struct SystemGroup(());

impl SystemGroup {
    /// `MPI_GROUP_EMPTY`.
    pub fn empty() -> SystemGroup {
        SystemGroup(())
    }
}

fn empty_group() -> &'static CoreGroup {
    static EMPTY: OnceLock<CoreGroup> = OnceLock::new();
    EMPTY.get_or_init(CoreGroup::empty)
}

fn my_world_rank() -> u32 {
    oxmpi_core::runtime::engine().or_fatal().rank()
}

/// What all groups can do. Set operations keep MPI's order: `union` is `self` then the
/// new members of `other` in `other`'s order; `intersection` and `difference` keep
/// `self`'s order.
pub trait Group {
    /// The engine's group behind this one.
    #[doc(hidden)]
    fn core_group(&self) -> &CoreGroup;

    /// The members of `self` followed by those of `other` not in `self`
    /// (`MPI_Group_union`).
    fn union<G>(&self, other: &G) -> UserGroup
    where
        G: Group,
        Self: Sized,
    {
        UserGroup(self.core_group().union(other.core_group()))
    }

    /// The members of `self` that are in `other`, in `self`'s order
    /// (`MPI_Group_intersection`).
    fn intersection<G>(&self, other: &G) -> UserGroup
    where
        G: Group,
        Self: Sized,
    {
        UserGroup(self.core_group().intersection(other.core_group()))
    }

    /// The members of `self` that are not in `other`, in `self`'s order
    /// (`MPI_Group_difference`).
    fn difference<G>(&self, other: &G) -> UserGroup
    where
        G: Group,
        Self: Sized,
    {
        UserGroup(self.core_group().difference(other.core_group()))
    }

    /// The members with ranks `ranks`, in that order (`MPI_Group_incl`). Every rank
    /// must be a distinct rank of the group.
    fn include(&self, ranks: &[Rank]) -> UserGroup {
        self.try_include(ranks).or_fatal()
    }
    /// [`include`](Self::include), reporting errors.
    fn try_include(&self, ranks: &[Rank]) -> Result<UserGroup> {
        self.core_group().incl(ranks).map(UserGroup)
    }

    /// The group without the members with ranks `ranks`, in the group's order
    /// (`MPI_Group_excl`).
    fn exclude(&self, ranks: &[Rank]) -> UserGroup {
        self.try_exclude(ranks).or_fatal()
    }
    /// [`exclude`](Self::exclude), reporting errors.
    fn try_exclude(&self, ranks: &[Rank]) -> Result<UserGroup> {
        self.core_group().excl(ranks).map(UserGroup)
    }

    /// The members given by `(first, last, stride)` triplets, in that order
    /// (`MPI_Group_range_incl`; oxmpi extension).
    fn include_ranges(&self, ranges: &[[Rank; 3]]) -> UserGroup {
        self.try_include_ranges(ranges).or_fatal()
    }
    /// [`include_ranges`](Self::include_ranges), reporting errors.
    fn try_include_ranges(&self, ranges: &[[Rank; 3]]) -> Result<UserGroup> {
        self.core_group().range_incl(ranges).map(UserGroup)
    }

    /// The group without the members given by `(first, last, stride)` triplets
    /// (`MPI_Group_range_excl`; oxmpi extension).
    fn exclude_ranges(&self, ranges: &[[Rank; 3]]) -> UserGroup {
        self.try_exclude_ranges(ranges).or_fatal()
    }
    /// [`exclude_ranges`](Self::exclude_ranges), reporting errors.
    fn try_exclude_ranges(&self, ranges: &[[Rank; 3]]) -> Result<UserGroup> {
        self.core_group().range_excl(ranges).map(UserGroup)
    }

    /// The number of members (`MPI_Group_size`).
    fn size(&self) -> Rank {
        self.core_group().size()
    }

    /// The calling process's rank in the group, `None` if it is not a member
    /// (`MPI_Group_rank`).
    fn rank(&self) -> Option<Rank> {
        self.core_group().rank_of_world(my_world_rank())
    }

    /// The rank in `other` of the process with rank `rank` here, `None` if it is not
    /// in `other` (`MPI_Group_translate_ranks`). `rank` must be a rank of this group.
    fn translate_rank<G>(&self, rank: Rank, other: &G) -> Option<Rank>
    where
        G: Group,
        Self: Sized,
    {
        self.try_translate_rank(rank, other).or_fatal()
    }
    /// [`translate_rank`](Self::translate_rank), reporting errors.
    fn try_translate_rank<G>(&self, rank: Rank, other: &G) -> Result<Option<Rank>>
    where
        G: Group,
        Self: Sized,
    {
        Ok(self.try_translate_ranks(&[rank], other)?.pop().flatten())
    }

    /// [`translate_rank`](Self::translate_rank) for several ranks.
    fn translate_ranks<G>(&self, ranks: &[Rank], other: &G) -> Vec<Option<Rank>>
    where
        G: Group,
        Self: Sized,
    {
        self.try_translate_ranks(ranks, other).or_fatal()
    }
    /// [`translate_ranks`](Self::translate_ranks), reporting errors.
    fn try_translate_ranks<G>(&self, ranks: &[Rank], other: &G) -> Result<Vec<Option<Rank>>>
    where
        G: Group,
        Self: Sized,
    {
        self.core_group().translate_ranks(ranks, other.core_group())
    }

    /// Compares two groups (`MPI_Group_compare`).
    fn compare<G>(&self, other: &G) -> GroupRelation
    where
        G: Group,
        Self: Sized,
    {
        match self.core_group().compare(other.core_group()) {
            Comparison::Ident => GroupRelation::Identical,
            Comparison::Similar => GroupRelation::Similar,
            _ => GroupRelation::Unequal,
        }
    }

    /// The members' ranks in the world communicator, in group order (oxmpi extension).
    fn world_ranks(&self) -> Vec<Rank> {
        self.core_group()
            .world_ranks()
            .iter()
            .map(|&w| w as Rank)
            .collect()
    }
}

impl Group for UserGroup {
    fn core_group(&self) -> &CoreGroup {
        &self.0
    }
}

impl Group for SystemGroup {
    fn core_group(&self) -> &CoreGroup {
        empty_group()
    }
}

// ----- MPI_Comm_create_group -----------------------------------------------------------------

/// `MPI_Comm_create_group` on the engine: collective over the members of `members`
/// (world ranks, a subgroup of `comm`) only. The engine's constructor agrees on the
/// context id among the members, held and confirmed like every other agreement (so a
/// constructor running on another thread never picks the same id).
pub(crate) fn create_group(comm: &Comm, members: &[u32], tag: Tag) -> Result<Option<Comm>> {
    const CALL: &str = "MPI_Comm_create_group";
    if comm.is_inter() {
        return Err(MpiError::arg(
            ErrorClass::Comm,
            CALL,
            "comm",
            "an intercommunicator; an intracommunicator is required",
        ));
    }
    if tag < 0 {
        return Err(MpiError::arg(
            ErrorClass::Tag,
            CALL,
            "tag",
            format!("{tag} is negative"),
        ));
    }
    Ok(ccreate::create_group(comm, members, tag)?)
}
