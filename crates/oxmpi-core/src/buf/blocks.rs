//! Per-peer block lists: one side of an alltoallw-shaped call (MPI_Alltoallw and
//! MPI_Neighbor_alltoallw), where every peer's block has its own count, byte
//! displacement and datatype.
//!
//! [`SendBlocks`] and [`RecvBlocks`] are to those calls what [`SendBuf`](super::SendBuf)
//! and [`RecvBuf`](super::RecvBuf) are to the others: the safe constructors
//! ([`SendBlocks::within`], [`RecvBlocks::within`]) check that every block lies inside
//! a borrowed byte slice; `from_raw` is the one `unsafe` door (the C boundary, where
//! blocks are placed by address, MPI_BOTTOM included). The collectives over them are
//! safe functions: they only compute each block's address ([`SendBlocks::addr`]) and
//! hand it to the schedule, which reaches it while the call (or its request) runs.

use std::marker::PhantomData;

use super::{check_reach, BufScope};
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};

/// Each of the first `n` blocks (`counts[i]` elements of `types[i]` from byte
/// `displs[i]`) lies inside `len` bytes; arrays shorter than `n` are MPI_ERR_ARG,
/// a block reaching outside MPI_ERR_BUFFER (naming `call` and `arg`).
pub(crate) fn check_w(
    call: &str,
    arg: &str,
    len: usize,
    counts: &[usize],
    displs: &[isize],
    types: &[Datatype],
    n: usize,
) -> Result<()> {
    if counts.len() < n || displs.len() < n || types.len() < n {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            arg,
            format!(
                "counts, displacements and datatypes ({}, {}, {}) for {n} ranks",
                counts.len(),
                displs.len(),
                types.len()
            ),
        ));
    }
    for i in 0..n {
        if counts[i] == 0 || types[i].size() == 0 {
            continue;
        }
        let d = displs[i];
        if d < 0 || d as usize > len {
            return Err(MpiError::arg(
                ErrorClass::Buffer,
                call,
                arg,
                format!("block {i} starts at byte {d}, outside its {len} bytes"),
            ));
        }
        check_reach(call, arg, len - d as usize, counts[i], &types[i])?;
    }
    Ok(())
}

/// The per-peer arrays both sides of an alltoallw-shaped call share (the first
/// `n` entries of each are significant): counts, byte displacements from the base,
/// datatypes. [`SendBlocks`] and [`RecvBlocks`] are one of these and a base
/// address, read or written; they hand these accessors on (`Deref`).
#[derive(Clone, Copy, Debug)]
pub struct BlockLists<'c> {
    counts: &'c [usize],
    displs: &'c [isize],
    types: &'c [Datatype],
}

impl<'c> BlockLists<'c> {
    pub fn counts(&self) -> &'c [usize] {
        self.counts
    }
    pub fn displs(&self) -> &'c [isize] {
        self.displs
    }
    pub fn types(&self) -> &'c [Datatype] {
        self.types
    }

    /// Lists whose every block lies inside `len` bytes (as [`check_w`], for every
    /// entry of `counts`).
    fn within(
        call: &str,
        arg: &str,
        len: usize,
        counts: &'c [usize],
        displs: &'c [isize],
        types: &'c [Datatype],
    ) -> Result<BlockLists<'c>> {
        check_w(call, arg, len, counts, displs, types, counts.len())?;
        Ok(BlockLists {
            counts,
            displs,
            types,
        })
    }
}

/// Blocks to be read: per peer `i`, `counts[i]` elements of `types[i]` at byte
/// `displs[i]` from a base; the memory valid for `'a`, the arrays borrowed for `'c`.
#[derive(Clone, Copy, Debug)]
pub struct SendBlocks<'a, 'c> {
    base: *const u8,
    lists: BlockLists<'c>,
    _life: PhantomData<&'a [u8]>,
}

// SAFETY: a shared borrow of bytes and of the arrays, all `Send + Sync`.
unsafe impl Send for SendBlocks<'_, '_> {}
// SAFETY: as above.
unsafe impl Sync for SendBlocks<'_, '_> {}

impl<'c> std::ops::Deref for SendBlocks<'_, 'c> {
    type Target = BlockLists<'c>;
    fn deref(&self) -> &BlockLists<'c> {
        &self.lists
    }
}

impl<'a, 'c> SendBlocks<'a, 'c> {
    /// Blocks inside `bytes`, one per entry of `counts`; an MPI_ERR_BUFFER error
    /// naming `call` and `arg` if one reaches outside it (MPI_ERR_ARG if `displs` or
    /// `types` has fewer entries).
    pub fn within(
        call: &str,
        arg: &str,
        bytes: &'a [u8],
        counts: &'c [usize],
        displs: &'c [isize],
        types: &'c [Datatype],
    ) -> Result<SendBlocks<'a, 'c>> {
        let lists = BlockLists::within(call, arg, bytes.len(), counts, displs, types)?;
        Ok(SendBlocks {
            base: bytes.as_ptr(),
            lists,
            _life: PhantomData,
        })
    }

    /// Blocks placed by address (the C boundary).
    ///
    /// # Safety
    /// For every `i` of the arrays, the memory `counts[i]` elements of `types[i]` at
    /// `base + displs[i]` cover stays valid for reads, and unmodified, for `'a` (the C
    /// boundary: `'static`, read as in [`SendBuf::from_raw`](super::SendBuf::from_raw)).
    pub unsafe fn from_raw(
        base: *const u8,
        counts: &'c [usize],
        displs: &'c [isize],
        types: &'c [Datatype],
    ) -> SendBlocks<'a, 'c> {
        SendBlocks {
            base,
            lists: BlockLists {
                counts,
                displs,
                types,
            },
            _life: PhantomData,
        }
    }

    /// The address displacements count from (pure arithmetic: nothing is read).
    pub(crate) fn base(&self) -> *const u8 {
        self.base
    }

    /// The address of block `i` (pure arithmetic: nothing is read), valid for
    /// `counts[i]` elements of `types[i]` as long as the descriptor.
    pub fn addr(&self, i: usize) -> *const u8 {
        self.base.wrapping_offset(self.lists.displs[i])
    }

    /// The descriptor lent for `'static` to the one immediate operation `_scope`
    /// starts (as [`SendBuf::lend`](super::SendBuf)).
    pub(crate) fn lend(self, _scope: &impl BufScope<'a>) -> SendBlocks<'static, 'c> {
        SendBlocks {
            base: self.base,
            lists: self.lists,
            _life: PhantomData,
        }
    }
}

/// Blocks to be written: as [`SendBlocks`], exclusively borrowed for `'a`.
#[derive(Debug)]
pub struct RecvBlocks<'a, 'c> {
    base: *mut u8,
    lists: BlockLists<'c>,
    _life: PhantomData<&'a mut [u8]>,
}

// SAFETY: an exclusive borrow of bytes and shared ones of the arrays.
unsafe impl Send for RecvBlocks<'_, '_> {}
// SAFETY: as above.
unsafe impl Sync for RecvBlocks<'_, '_> {}

impl<'c> std::ops::Deref for RecvBlocks<'_, 'c> {
    type Target = BlockLists<'c>;
    fn deref(&self) -> &BlockLists<'c> {
        &self.lists
    }
}

impl<'a, 'c> RecvBlocks<'a, 'c> {
    /// As [`SendBlocks::within`], inside an exclusively borrowed slice.
    pub fn within(
        call: &str,
        arg: &str,
        bytes: &'a mut [u8],
        counts: &'c [usize],
        displs: &'c [isize],
        types: &'c [Datatype],
    ) -> Result<RecvBlocks<'a, 'c>> {
        let lists = BlockLists::within(call, arg, bytes.len(), counts, displs, types)?;
        Ok(RecvBlocks {
            base: bytes.as_mut_ptr(),
            lists,
            _life: PhantomData,
        })
    }

    /// Blocks placed by address (the C boundary).
    ///
    /// # Safety
    /// For every `i` of the arrays, the memory `counts[i]` elements of `types[i]` at
    /// `base + displs[i]` cover stays valid for reads and writes, and is not accessed
    /// otherwise, for `'a` (the C boundary: `'static`, read as in
    /// [`RecvBuf::from_raw`](super::RecvBuf::from_raw)); any bytes written there are
    /// valid for its owner.
    pub unsafe fn from_raw(
        base: *mut u8,
        counts: &'c [usize],
        displs: &'c [isize],
        types: &'c [Datatype],
    ) -> RecvBlocks<'a, 'c> {
        RecvBlocks {
            base,
            lists: BlockLists {
                counts,
                displs,
                types,
            },
            _life: PhantomData,
        }
    }

    /// As [`SendBlocks::base`].
    pub(crate) fn base(&self) -> *mut u8 {
        self.base
    }

    /// The address of block `i` (as [`SendBlocks::addr`]), writable and ours alone
    /// as long as the descriptor.
    pub fn addr(&self, i: usize) -> *mut u8 {
        self.base.wrapping_offset(self.lists.displs[i])
    }

    /// As [`SendBlocks::lend`], for writing.
    pub(crate) fn lend(self, _scope: &impl BufScope<'a>) -> RecvBlocks<'static, 'c> {
        RecvBlocks {
            base: self.base,
            lists: self.lists,
            _life: PhantomData,
        }
    }
}
