//! Safe entry points of one-sided communication over the buffer descriptors
//! ([`crate::buf`]): windows whose memory the library makes (no caller memory to
//! vouch for), and the origin buffers of put, get, accumulate, get_accumulate and
//! compare-and-swap. The raw-pointer forms (`ops.rs`) stay for the C boundary.

use std::sync::Arc;

use super::*;
use crate::buf::{RecvBuf, SendBuf};

/// A descriptor's datatype (bytes when it has none).
fn dt_of(d: Option<&Datatype>) -> &Datatype {
    d.unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte))
}

impl Window {
    /// A window whose memory the library makes (`Allocate`, `Shared`: `size` bytes
    /// per process) or that has none at creation (`Dynamic`: `size` must be 0), as
    /// [`Window::new`] does. `Create` (the caller's memory) is refused: it needs
    /// [`Window::new`]'s contract.
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
        // SAFETY: no caller memory: base is 0 and the flavor makes its own (or none).
        unsafe { Self::new(comm, flavor, 0, size, disp_unit, noncontig, call) }
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
        let odt = dt_of(origin.datatype());
        // SAFETY: the descriptor's memory holds its count of its datatype, readable for this call.
        unsafe {
            self.put(
                call,
                origin.ptr(),
                origin.count(),
                odt,
                rank,
                disp,
                tcount,
                tdt,
            )
        }
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
        let odt = dt_of(origin.datatype());
        // SAFETY: the descriptor's memory is writable for its count of its datatype, and ours alone for this call.
        unsafe {
            self.get(
                call,
                origin.ptr(),
                origin.count(),
                odt,
                rank,
                disp,
                tcount,
                tdt,
            )
        }
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
        let odt = dt_of(origin.datatype());
        let res = result
            .as_ref()
            .map(|r| (r.ptr(), r.count(), dt_of(r.datatype())));
        // SAFETY: `origin` holds its count of its datatype; `result`'s memory is writable for its count of its datatype and ours alone for this call (both descriptors borrow their memory for it).
        unsafe {
            self.accumulate(
                call,
                origin.ptr(),
                origin.count(),
                odt,
                res,
                rank,
                disp,
                tcount,
                tdt,
                op,
            )
        }
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
        // SAFETY: each descriptor holds (result: is writable for, ours alone) one element of `dt`'s size, borrowed for this call.
        unsafe {
            self.compare_and_swap(
                call,
                origin.ptr(),
                compare.ptr(),
                result.ptr(),
                dt,
                rank,
                disp,
            )
        }
    }
}
