//! Cartesian topologies: the grid description ([`Cart`]), its validation, the
//! rank/coordinate arithmetic, shifts, sub-grids and the default mapping
//! (`MPI_Cart_*`). Kept apart from the graph kinds: they share only the error
//! conventions of the parent module.

use super::check_comm_rank;
use crate::error::{ErrorClass, MpiError, Result};
use crate::request::PROC_NULL;

/// A Cartesian grid: the size of each dimension and whether it wraps around.
/// Ranks are assigned in row-major order (the last dimension varies fastest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cart {
    pub dims: Vec<i32>,
    pub periods: Vec<bool>,
}

impl Cart {
    /// Checks a grid description; returns the number of processes it needs.
    fn validate(call: &str, dims: &[i32], periods: &[bool], comm_size: i32) -> Result<i32> {
        if dims.len() != periods.len() {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "periods",
                format!(
                    "{} periods given for {} dimensions",
                    periods.len(),
                    dims.len()
                ),
            ));
        }
        if comm_size < 0 {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "comm",
                format!("size {comm_size} is negative"),
            ));
        }
        let mut product: i64 = 1;
        for (i, &d) in dims.iter().enumerate() {
            if d <= 0 {
                return Err(MpiError::arg(
                    ErrorClass::Dims,
                    call,
                    "dims",
                    format!("dims[{i}] = {d} is not positive"),
                ));
            }
            product = (product * d as i64).min(i64::from(i32::MAX) + 1);
        }
        if product > i64::from(i32::MAX) {
            return Err(MpiError::arg(
                ErrorClass::Dims,
                call,
                "dims",
                format!("the grid {dims:?} has more than {} nodes", i32::MAX),
            ));
        }
        Ok(product as i32)
    }

    /// `MPI_Cart_create`'s checks: `dims` positive (`MPI_ERR_DIMS`), one period per
    /// dimension, and a grid no larger than the communicator (`MPI_ERR_ARG`). Zero
    /// dimensions are allowed (a single process).
    pub fn new(dims: &[i32], periods: &[bool], comm_size: i32) -> Result<Cart> {
        const CALL: &str = "MPI_Cart_create";
        let size = Cart::validate(CALL, dims, periods, comm_size)?;
        if size > comm_size {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "dims",
                format!("the grid {dims:?} has {size} nodes, the communicator only {comm_size} processes"),
            ));
        }
        Ok(Cart {
            dims: dims.to_vec(),
            periods: periods.to_vec(),
        })
    }

    /// The number of grid points (1 for a zero-dimensional grid).
    pub fn size(&self) -> i32 {
        self.dims.iter().product()
    }

    /// `MPI_Cartdim_get`.
    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    fn check_rank(&self, call: &str, rank: i32) -> Result<()> {
        if (0..self.size()).contains(&rank) {
            Ok(())
        } else {
            Err(MpiError::arg(
                ErrorClass::Rank,
                call,
                "rank",
                format!("{rank} is not a rank of the grid (0..{})", self.size()),
            ))
        }
    }

    /// `MPI_Cart_rank`: the rank at `coords`. On a periodic dimension an out-of-range
    /// coordinate wraps into `0..dims[i]`; on a non-periodic one it is `MPI_ERR_ARG`.
    pub fn rank(&self, coords: &[i32]) -> Result<i32> {
        const CALL: &str = "MPI_Cart_rank";
        if coords.len() != self.ndims() {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "coords",
                format!(
                    "{} coordinates given for {} dimensions",
                    coords.len(),
                    self.ndims()
                ),
            ));
        }
        let mut rank: i64 = 0;
        for (i, ((&c, &d), &p)) in coords.iter().zip(&self.dims).zip(&self.periods).enumerate() {
            let c = if p {
                c.rem_euclid(d)
            } else if (0..d).contains(&c) {
                c
            } else {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    CALL,
                    "coords",
                    format!(
                        "coords[{i}] = {c} is outside 0..{d} and dimension {i} is not periodic"
                    ),
                ));
            };
            rank = rank * d as i64 + c as i64;
        }
        Ok(rank as i32)
    }

    /// `MPI_Cart_coords`: the coordinates of `rank` (`MPI_ERR_RANK` outside the grid).
    pub fn coords(&self, rank: i32) -> Result<Vec<i32>> {
        self.check_rank("MPI_Cart_coords", rank)?;
        Ok(self.coords_unchecked(rank))
    }

    fn coords_unchecked(&self, mut rank: i32) -> Vec<i32> {
        let mut c = vec![0; self.ndims()];
        for (ci, &d) in c.iter_mut().zip(&self.dims).rev() {
            *ci = rank % d;
            rank /= d;
        }
        c
    }

    /// `MPI_Cart_shift` as seen by process `rank`: `(source, dest)` for a shift by
    /// `disp` along dimension `direction`; `MPI_PROC_NULL` where the shift leaves a
    /// non-periodic dimension. `disp` may be negative or zero.
    pub fn shift(&self, rank: i32, direction: i32, disp: i32) -> Result<(i32, i32)> {
        const CALL: &str = "MPI_Cart_shift";
        if self.ndims() == 0 {
            return Err(MpiError::new(
                ErrorClass::Topology,
                format!("{CALL}: the Cartesian topology has zero dimensions"),
            ));
        }
        let dir = usize::try_from(direction)
            .ok()
            .filter(|&d| d < self.ndims())
            .ok_or_else(|| {
                MpiError::arg(
                    ErrorClass::Arg,
                    CALL,
                    "direction",
                    format!("{direction} is not a dimension (0..{})", self.ndims()),
                )
            })?;
        self.check_rank(CALL, rank)?;
        if disp == 0 {
            return Ok((rank, rank));
        }
        let coords = self.coords_unchecked(rank);
        let (d, periodic) = (self.dims[dir] as i64, self.periods[dir]);
        let at = |offset: i64| -> i32 {
            let mut c = coords.clone();
            let x = c[dir] as i64 + offset;
            c[dir] = if periodic {
                x.rem_euclid(d) as i32
            } else if (0..d).contains(&x) {
                x as i32
            } else {
                return PROC_NULL;
            };
            self.rank(&c).expect("in-range coordinates")
        };
        Ok((at(-(disp as i64)), at(disp as i64)))
    }

    fn check_remain(&self, call: &str, remain: &[bool]) -> Result<()> {
        if remain.len() != self.ndims() {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "remain_dims",
                format!(
                    "{} entries given for {} dimensions",
                    remain.len(),
                    self.ndims()
                ),
            ));
        }
        Ok(())
    }

    /// `MPI_Cart_sub`: the grid of the kept dimensions (zero-dimensional when none is
    /// kept).
    pub fn sub(&self, remain: &[bool]) -> Result<Cart> {
        self.check_remain("MPI_Cart_sub", remain)?;
        let keep = |v: &[i32]| -> Vec<i32> {
            v.iter()
                .zip(remain)
                .filter(|(_, &r)| r)
                .map(|(&x, _)| x)
                .collect()
        };
        Ok(Cart {
            dims: keep(&self.dims),
            periods: self
                .periods
                .iter()
                .zip(remain)
                .filter(|(_, &r)| r)
                .map(|(&p, _)| p)
                .collect(),
        })
    }

    /// The `(color, key)` with which process `rank` splits the grid's communicator to
    /// build `MPI_Cart_sub(remain)`: the colour numbers the dropped coordinates, the
    /// key is the process's rank in its sub-grid (row-major over the kept
    /// coordinates), so the split yields the sub-grid ranks directly. `remain` must
    /// have one entry per dimension (see [`Cart::sub`]); for a `rank` outside the grid
    /// (or a `remain` of the wrong length) there is no colour (`MPI_UNDEFINED`).
    pub fn sub_color_key(&self, rank: i32, remain: &[bool]) -> (Option<i32>, i32) {
        if remain.len() != self.ndims() || !(0..self.size()).contains(&rank) {
            return (None, 0);
        }
        let coords = self.coords_unchecked(rank);
        let (mut color, mut key) = (0i32, 0i32);
        for ((&c, &d), &r) in coords.iter().zip(&self.dims).zip(remain) {
            if r {
                key = key * d + c;
            } else {
                color = color * d + c;
            }
        }
        (Some(color), key)
    }

    /// `MPI_Cart_map` with the identity mapping: the new rank of the process with
    /// rank `rank` in a communicator of `comm_size` processes — itself if it fits in
    /// the grid, `None` (`MPI_UNDEFINED`) otherwise. A grid larger than the
    /// communicator is `MPI_ERR_DIMS` (as MPICH).
    pub fn map(dims: &[i32], periods: &[bool], rank: i32, comm_size: i32) -> Result<Option<i32>> {
        const CALL: &str = "MPI_Cart_map";
        let size = Cart::validate(CALL, dims, periods, comm_size)?;
        if size > comm_size {
            return Err(MpiError::arg(
                ErrorClass::Dims,
                CALL,
                "dims",
                format!("the grid {dims:?} has {size} nodes, the communicator only {comm_size} processes"),
            ));
        }
        check_comm_rank(CALL, rank, comm_size)?;
        Ok((rank < size).then_some(rank))
    }

    /// The neighbourhood of `rank` for neighbourhood collectives: for each dimension
    /// in order, the source then the destination of a shift by 1 (`MPI_PROC_NULL` at a
    /// non-periodic edge). The same list serves as sources and destinations.
    pub fn neighbors(&self, rank: i32) -> Result<Vec<i32>> {
        self.check_rank("MPI_Neighbor_allgather", rank)?;
        let mut v = Vec::with_capacity(2 * self.ndims());
        for d in 0..self.ndims() {
            let (s, t) = self.shift(rank, d as i32, 1)?;
            v.push(s);
            v.push(t);
        }
        Ok(v)
    }
}
