//! Partitioned point-to-point communication (MPI-4): a persistent send whose
//! buffer is divided into partitions that threads mark ready one by one, and
//! the matching persistent receive, which can tell when a partition arrived.
//!
//! The buffer is borrowed for the whole life of the operation (shared by the
//! send, exclusively by the receive), so it cannot change under a transfer;
//! dropping an active operation waits for it to complete. As the requests of
//! immediate operations, an operation belongs to a [`Scope`] (the scope of
//! [`request::scope`](crate::request::scope) for buffers on the stack), which
//! waits at its end for a transfer still going, even if the operation was
//! forgotten (`std::mem::forget`).
//!
//! ```no_run
//! use oxmpi::partitioned::{PartitionedReceive, PartitionedSend};
//! use oxmpi::request::scope;
//! use oxmpi::traits::*;
//!
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! if world.rank() == 0 {
//!     let data: Vec<f64> = (0..1024).map(|i| i as f64).collect();
//!     scope(|sc| {
//!         // 8 partitions of 128 values each.
//!         let mut send = PartitionedSend::new(sc, &world, &data, 8, 1, 0).unwrap();
//!         send.start().unwrap();
//!         std::thread::scope(|s| {
//!             for t in 0..2 {
//!                 let send = &send;
//!                 // Each thread readies its half, in any order.
//!                 s.spawn(move || (t * 4..t * 4 + 4).rev().for_each(|p| send.ready(p).unwrap()));
//!             }
//!         });
//!         send.wait().unwrap();
//!     });
//! } else if world.rank() == 1 {
//!     let mut data = vec![0.0f64; 1024];
//!     scope(|sc| {
//!         // The receiver may partition differently: 4 partitions of 256 values.
//!         let mut recv = PartitionedReceive::new(sc, &world, &mut data, 4, 0, 0).unwrap();
//!         recv.start().unwrap();
//!         while !recv.arrived(3).unwrap() {}
//!         recv.wait().unwrap();
//!         assert_eq!(recv.buffer().unwrap()[1023], 1023.0);
//!     });
//! }
//! ```

#![deny(unsafe_code)]

use std::marker::PhantomData;

use oxmpi_core::pt2pt::partitioned as core;

use crate::datatype::{typed_in, typed_out, Equivalence};
use crate::error::{Error, ErrorClass, Result};
use crate::point_to_point::Status;
use crate::request::{Kept, Scope, StaticScope};
use crate::topology::Communicator;
use crate::{Rank, Tag};

fn partition_count(call: &str, len: usize, partitions: usize) -> Result<usize> {
    if partitions == 0 || len % partitions != 0 {
        return Err(Error::arg(
            ErrorClass::Arg,
            call,
            "partitions",
            format!("{partitions} partitions do not divide a buffer of {len} elements"),
        ));
    }
    Ok(len / partitions)
}

/// The sending side (`MPI_Psend_init`): `ready` may be called from several
/// threads at once (`&self`).
#[derive(Debug)]
pub struct PartitionedSend<'a, T: Equivalence, Sc: Scope<'a> = StaticScope> {
    /// The engine's operation over `buf` (borrowed for 'a), with its run.
    op: core::ScopedSend<'a>,
    /// The scope's keeping, which each run joins.
    kept: Kept<'a>,
    /// The scope (a reference into `request::scope`, so this value cannot leave it),
    /// as a marker that keeps `&self` shareable between threads.
    _buf: PhantomData<(&'a [T], fn() -> Sc)>,
}

impl<'a, T: Equivalence, Sc: Scope<'a>> PartitionedSend<'a, T, Sc> {
    /// Divides `buf` into `partitions` equal partitions, for `dest` with `tag`; the
    /// transfers belong to `scope`.
    pub fn new<C: Communicator + ?Sized>(
        scope: Sc,
        comm: &C,
        buf: &'a [T],
        partitions: usize,
        dest: Rank,
        tag: Tag,
    ) -> Result<Self> {
        let count = partition_count("MPI_Psend_init", buf.len(), partitions)?;
        let t = typed_in(buf);
        let per = count * t.count / buf.len().max(1);
        let kept = Kept::of(&scope);
        let op = core::ScopedSend::new(
            comm.core_comm(),
            t.region.lend_send(&kept, t.count),
            partitions,
            per,
            dest,
            tag,
        )?;
        Ok(PartitionedSend {
            op,
            kept,
            _buf: PhantomData,
        })
    }

    /// `MPI_Start`: a new transfer; no partition is ready yet.
    pub fn start(&mut self) -> Result<()> {
        Ok(self.op.start(&self.kept)?)
    }

    /// `MPI_Pready`: partition `p` may leave (each partition once per start).
    pub fn ready(&self, p: usize) -> Result<()> {
        self.check_active("MPI_Pready")?;
        Ok(self.op.pready("MPI_Pready", [p as i64])?)
    }

    /// `MPI_Pready_range`: partitions `lo..=hi`.
    pub fn ready_range(&self, lo: usize, hi: usize) -> Result<()> {
        self.check_active("MPI_Pready_range")?;
        Ok(self.op.pready("MPI_Pready_range", lo as i64..=hi as i64)?)
    }

    /// `MPI_Pready_list`.
    pub fn ready_list(&self, parts: &[usize]) -> Result<()> {
        self.check_active("MPI_Pready_list")?;
        Ok(self
            .op
            .pready("MPI_Pready_list", parts.iter().map(|&p| p as i64))?)
    }

    fn check_active(&self, call: &str) -> Result<()> {
        if !self.op.is_active() {
            return Err(Error::arg(
                ErrorClass::Request,
                call,
                "request",
                "the partitioned send is not active (start it first)",
            ));
        }
        Ok(())
    }

    /// Waits for the transfer (every partition must be, or become, ready).
    pub fn wait(&mut self) -> Result<Status> {
        Ok(Status::from_core(self.op.wait()?))
    }

    /// Number of partitions.
    pub fn partitions(&self) -> usize {
        self.op.partitions()
    }
}

/// The receiving side (`MPI_Precv_init`).
#[derive(Debug)]
pub struct PartitionedReceive<'a, T: Equivalence, Sc: Scope<'a> = StaticScope> {
    /// The engine's operation over the buffer (borrowed exclusively for 'a), with its
    /// run; it hands the buffer back between runs.
    op: core::ScopedRecv<'a, [T]>,
    /// The scope's keeping, as in [`PartitionedSend`].
    kept: Kept<'a>,
    /// The scope, as in [`PartitionedSend`].
    _buf: PhantomData<fn() -> Sc>,
}

impl<'a, T: Equivalence, Sc: Scope<'a>> PartitionedReceive<'a, T, Sc> {
    /// Divides `buf` into `partitions` equal partitions, from `source` with `tag`;
    /// the transfers belong to `scope`.
    pub fn new<C: Communicator + ?Sized>(
        scope: Sc,
        comm: &C,
        buf: &'a mut [T],
        partitions: usize,
        source: Rank,
        tag: Tag,
    ) -> Result<Self> {
        let count = partition_count("MPI_Precv_init", buf.len(), partitions)?;
        let len = buf.len();
        let op = core::ScopedRecv::new(
            comm.core_comm(),
            buf,
            |b, init| {
                let t = typed_out(b);
                let per = count * t.count / len.max(1);
                init(t.into_region(), per)
            },
            partitions,
            source,
            tag,
        )?;
        Ok(PartitionedReceive {
            op,
            kept: Kept::of(&scope),
            _buf: PhantomData,
        })
    }

    /// `MPI_Start`: posts the receive.
    pub fn start(&mut self) -> Result<()> {
        Ok(self.op.start(&self.kept)?)
    }

    /// `MPI_Parrived`: whether partition `p` has arrived (true when inactive).
    pub fn arrived(&self, p: usize) -> Result<bool> {
        Ok(self.op.parrived(p as i64)?)
    }

    /// Waits for the transfer.
    pub fn wait(&mut self) -> Result<Status> {
        let active = self.op.is_active();
        let st = self.op.wait()?;
        if active {
            if let Some(buf) = self.op.get_mut() {
                typed_out(buf).check_received(st.count_bytes, "MPI_Wait")?;
            }
        }
        Ok(Status::from_core(st))
    }

    /// The buffer, while no transfer is active.
    pub fn buffer(&self) -> Option<&[T]> {
        self.op.get()
    }

    /// Number of partitions.
    pub fn partitions(&self) -> usize {
        self.op.partitions()
    }
}
