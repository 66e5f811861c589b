//! Safe entry points of one-sided communication over the buffer descriptors
//! ([`crate::buf`]): windows whose memory the library makes (no caller memory to
//! vouch for), and the origin buffers of put, get, accumulate, get_accumulate and
//! compare-and-swap, here as send and receive descriptors (the C boundary calls
//! `ops.rs`'s forms over [`Region`]s).

use std::sync::Arc;

use super::*;
use crate::buf::{RecvBuf, Region, SendBuf};

/// A descriptor's datatype (bytes when it has none).
fn dt_of(d: Option<&Datatype>) -> &Datatype {
    d.unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte))
}

impl Window {
    /// A window whose memory the library makes (`Allocate`, `Shared`: `size` bytes
    /// per process) or that has none at creation (`Dynamic`: `size` must be 0), as
    /// [`Window::new`] does. `Create` (the caller's memory) is refused: it needs
    /// a [`CallerMem`](crate::transport::winmem::CallerMem), whose constructor states
    /// that memory's contract.
    pub fn allocate(
        comm: &Comm,
        flavor: Flavor,
        size: usize,
        disp_unit: usize,
        noncontig: bool,
        call: &str,
    ) -> Result<Arc<Window>> {
        if flavor == Flavor::Create || (flavor == Flavor::Dynamic && size != 0) {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "flavor",
                "memory of the caller needs MPI_Win_create",
            ));
        }
        Self::new(
            comm,
            flavor,
            crate::transport::winmem::CallerMem::NONE,
            size,
            disp_unit,
            noncontig,
            call,
        )
    }

    /// `MPI_Put` from the elements of `origin`.
    pub fn put_from(
        &self,
        call: &str,
        origin: SendBuf<'_, '_>,
        rank: i32,
        disp: isize,
        tcount: usize,
        tdt: &Datatype,
    ) -> Result<()> {
        self.put(call, &origin.into(), rank, disp, tcount, tdt)
    }

    /// `MPI_Get` into the elements of `origin`.
    pub fn get_into(
        &self,
        call: &str,
        origin: RecvBuf<'_, '_>,
        rank: i32,
        disp: isize,
        tcount: usize,
        tdt: &Datatype,
    ) -> Result<()> {
        self.get(call, &mut origin.into(), rank, disp, tcount, tdt)
    }

    /// `MPI_Accumulate` (no `result`) or `MPI_Get_accumulate` (the target's previous
    /// elements into `result`) of the elements of `origin`.
    #[allow(clippy::too_many_arguments)]
    pub fn accumulate_from(
        &self,
        call: &str,
        origin: SendBuf<'_, '_>,
        result: Option<RecvBuf<'_, '_>>,
        rank: i32,
        disp: isize,
        tcount: usize,
        tdt: &Datatype,
        op: &Op,
    ) -> Result<()> {
        let mut res: Option<Region<'_, &Datatype>> = result.map(Into::into);
        self.accumulate(
            call,
            &origin.into(),
            res.as_mut(),
            rank,
            disp,
            tcount,
            tdt,
            op,
        )
    }

    /// `MPI_Compare_and_swap` of one element each of `origin`, `compare` and `result`,
    /// of predefined datatypes of one size (the operation uses the first's).
    pub fn compare_and_swap_with(
        &self,
        call: &str,
        origin: SendBuf<'_, '_>,
        compare: SendBuf<'_, '_>,
        result: RecvBuf<'_, '_>,
        rank: i32,
        disp: isize,
    ) -> Result<()> {
        let dt = dt_of(origin.datatype());
        let same = |d: Option<&Datatype>, n: usize| {
            n == 1 && dt_of(d).as_primitive().is_some() && dt_of(d).size() == dt.size()
        };
        if !same(origin.datatype(), origin.count())
            || !same(compare.datatype(), compare.count())
            || !same(result.datatype(), result.count())
        {
            return Err(MpiError::arg(
                ErrorClass::Count,
                call,
                "origin_addr",
                "origin, compare and result must each be one element of a predefined datatype of one size",
            ));
        }
        let (origin, compare) = (Region::from(origin), Region::from(compare));
        let mut result = Region::from(result);
        let none = || MpiError::intern(call, "a predefined element without bytes");
        let (o, c) = (
            origin.bytes().ok_or_else(none)?,
            compare.bytes().ok_or_else(none)?,
        );
        let r = result.bytes_mut().ok_or_else(none)?;
        self.compare_and_swap(call, o, c, r, dt, rank, disp)
    }
}
