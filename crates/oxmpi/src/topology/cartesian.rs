//! Cartesian process topologies (`MPI_Cart_*`).

use oxmpi_core::comm::topology as ctopo;
use oxmpi_core::topo::{Cart, Topology as CoreTopology};
use oxmpi_core::Comm;

use super::{AsCommunicator, Communicator, Rank, SimpleCommunicator};
use crate::environment::threading::{ThreadSafety, Unthreaded};
use crate::error::{OrFatal, Result};
use crate::Count;

/// The layout of a [`CartesianCommunicator`]: `dims[i]` is the extent of axis `i`,
/// `periods[i]` whether it wraps around, `coords[i]` the calling process's coordinate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CartesianLayout {
    /// The extent of each axis.
    pub dims: Vec<Count>,
    /// Whether each axis is periodic.
    pub periods: Vec<bool>,
    /// The calling process's coordinates.
    pub coords: Vec<Count>,
}

/// A communicator whose processes form a Cartesian grid, in row-major order (the last
/// axis varies fastest). Made by
/// [`Communicator::create_cartesian_communicator`]; `S` is its thread safety, as
/// [`SimpleCommunicator`]'s.
///
/// ```
/// use oxmpi::traits::*;
/// let universe = oxmpi::initialize().unwrap();
/// let world = universe.world();
/// let ring = world.create_cartesian_communicator(&[world.size()], &[true], false).unwrap();
/// let (left, right) = ring.shift(0, 1);
/// assert_eq!(right, Some((ring.rank() + 1) % ring.size()));
/// assert_eq!(left, Some((ring.rank() + ring.size() - 1) % ring.size()));
/// assert_eq!(ring.rank_to_coordinates(ring.rank()), vec![ring.rank()]);
/// ```
#[derive(Clone, Debug)]
pub struct CartesianCommunicator<S: ThreadSafety = Unthreaded>(pub(crate) SimpleCommunicator<S>);

impl<S: ThreadSafety> CartesianCommunicator<S> {
    /// The same communicator with another thread-safety marker.
    pub(crate) fn with_safety<S2: ThreadSafety>(self) -> CartesianCommunicator<S2> {
        CartesianCommunicator(self.0.with_safety())
    }

    fn cart(&self) -> &Cart {
        match self.0 .0.topology() {
            Some(CoreTopology::Cart(c)) => c,
            _ => unreachable!("a CartesianCommunicator always has a Cartesian topology"),
        }
    }

    /// The number of axes (`MPI_Cartdim_get`).
    pub fn num_dimensions(&self) -> Count {
        self.cart().ndims() as Count
    }

    /// The grid's layout and this process's coordinates (`MPI_Cart_get`).
    pub fn get_layout(&self) -> CartesianLayout {
        let c = self.cart();
        CartesianLayout {
            dims: c.dims.clone(),
            periods: c.periods.clone(),
            coords: c.coords(self.rank()).or_fatal(),
        }
    }

    /// [`get_layout`](Self::get_layout) into caller's slices, each of length
    /// [`num_dimensions`](Self::num_dimensions) (panics otherwise).
    pub fn get_layout_into(&self, dims: &mut [Count], periods: &mut [bool], coords: &mut [Count]) {
        let n = self.num_dimensions() as usize;
        assert!(
            dims.len() == n && periods.len() == n && coords.len() == n,
            "dims, periods, and coords must be equal in length to num_dimensions()"
        );
        let l = self.get_layout();
        dims.copy_from_slice(&l.dims);
        periods.copy_from_slice(&l.periods);
        coords.copy_from_slice(&l.coords);
    }

    /// [`get_layout_into`](Self::get_layout_into); kept `unsafe` for rsmpi
    /// compatibility, it checks the lengths all the same.
    ///
    /// # Safety
    /// None needed: the lengths are checked.
    pub unsafe fn get_layout_into_unchecked(
        &self,
        dims: &mut [Count],
        periods: &mut [bool],
        coords: &mut [Count],
    ) {
        self.get_layout_into(dims, periods, coords)
    }

    /// The rank at `coords` (`MPI_Cart_rank`): out-of-range coordinates wrap on
    /// periodic axes; on the others they are an error.
    pub fn coordinates_to_rank(&self, coords: &[Count]) -> Rank {
        self.try_coordinates_to_rank(coords).or_fatal()
    }
    /// [`coordinates_to_rank`](Self::coordinates_to_rank), reporting errors.
    pub fn try_coordinates_to_rank(&self, coords: &[Count]) -> Result<Rank> {
        self.cart().rank(coords)
    }
    /// [`coordinates_to_rank`](Self::coordinates_to_rank) (checked all the same).
    ///
    /// # Safety
    /// None needed: the coordinates are checked.
    pub unsafe fn coordinates_to_rank_unchecked(&self, coords: &[Count]) -> Rank {
        self.coordinates_to_rank(coords)
    }

    /// The coordinates of `rank` (`MPI_Cart_coords`).
    pub fn rank_to_coordinates(&self, rank: Rank) -> Vec<Count> {
        self.try_rank_to_coordinates(rank).or_fatal()
    }
    /// [`rank_to_coordinates`](Self::rank_to_coordinates), reporting errors.
    pub fn try_rank_to_coordinates(&self, rank: Rank) -> Result<Vec<Count>> {
        self.cart().coords(rank)
    }
    /// [`rank_to_coordinates`](Self::rank_to_coordinates) into `coords` (of length
    /// [`num_dimensions`](Self::num_dimensions); panics otherwise).
    pub fn rank_to_coordinates_into(&self, rank: Rank, coords: &mut [Count]) {
        coords.copy_from_slice(&self.rank_to_coordinates(rank));
    }
    /// [`rank_to_coordinates_into`](Self::rank_to_coordinates_into) (checked all the same).
    ///
    /// # Safety
    /// None needed: the rank and length are checked.
    pub unsafe fn rank_to_coordinates_into_unchecked(&self, rank: Rank, coords: &mut [Count]) {
        self.rank_to_coordinates_into(rank, coords)
    }

    /// The neighbours for a shift by `displacement` along axis `dimension`
    /// (`MPI_Cart_shift`): `(source, destination)`, the process `displacement` steps
    /// back and the one `displacement` steps forward; `None` past the edge of a
    /// non-periodic axis. Made for [`send_receive`](crate::point_to_point::send_receive)
    /// halo exchanges (see [`process_or_null`](Self::process_or_null)).
    pub fn shift(&self, dimension: Count, displacement: Count) -> (Option<Rank>, Option<Rank>) {
        self.try_shift(dimension, displacement).or_fatal()
    }
    /// [`shift`](Self::shift), reporting errors.
    pub fn try_shift(
        &self,
        dimension: Count,
        displacement: Count,
    ) -> Result<(Option<Rank>, Option<Rank>)> {
        let (s, d) = self.cart().shift(self.rank(), dimension, displacement)?;
        let f = |r: Rank| (r != oxmpi_core::PROC_NULL).then_some(r);
        Ok((f(s), f(d)))
    }
    /// [`shift`](Self::shift) (checked all the same).
    ///
    /// # Safety
    /// None needed: the dimension is checked.
    pub unsafe fn shift_unchecked(
        &self,
        dimension: Count,
        displacement: Count,
    ) -> (Option<Rank>, Option<Rank>) {
        self.shift(dimension, displacement)
    }

    /// The process of rank `r`, or the null process (`MPI_PROC_NULL`: sends to it and
    /// receives from it do nothing) for `None` — what [`shift`](Self::shift) gives at a
    /// non-periodic edge (oxmpi extension).
    pub fn process_or_null(&self, r: Option<Rank>) -> super::Process<'_, S> {
        match r {
            Some(r) => self.process_at_rank(r),
            None => self.null_process(),
        }
    }

    /// The sub-grids that keep the axes where `retain` is true (`MPI_Cart_sub`); each
    /// process gets the one it is in. Collective.
    pub fn subgroup(&self, retain: &[bool]) -> CartesianCommunicator<S> {
        self.try_subgroup(retain).or_fatal()
    }
    /// [`subgroup`](Self::subgroup), reporting errors.
    pub fn try_subgroup(&self, retain: &[bool]) -> Result<CartesianCommunicator<S>> {
        ctopo::cart_sub(&self.0 .0, retain)
            .map(|c| CartesianCommunicator(SimpleCommunicator::from_core(c)).with_safety())
    }
    /// [`subgroup`](Self::subgroup) (checked all the same).
    ///
    /// # Safety
    /// None needed: the length is checked.
    pub unsafe fn subgroup_unchecked(&self, retain: &[bool]) -> CartesianCommunicator<S> {
        self.subgroup(retain)
    }

    /// The communicator as a [`SimpleCommunicator`] (which still carries the topology).
    pub fn into_simple(self) -> SimpleCommunicator<S> {
        self.0
    }
}

impl<S: ThreadSafety> Communicator for CartesianCommunicator<S> {
    type Safety = S;
    fn core_comm(&self) -> &Comm {
        &self.0 .0
    }
    fn core_comm_mut(&mut self) -> Option<&mut Comm> {
        Some(&mut self.0 .0)
    }
}

impl<S: ThreadSafety> AsCommunicator for CartesianCommunicator<S> {
    type Out = CartesianCommunicator<S>;
    fn as_communicator(&self) -> &CartesianCommunicator<S> {
        self
    }
}
