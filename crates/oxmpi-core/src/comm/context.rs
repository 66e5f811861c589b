//! Context ids for new communicators, agreed by the ranks that create them.
//!
//! Every rank keeps a mask of the ids it has free. A creating collective ANDs the
//! masks of all participants (an allreduce with MPI_BAND) and takes the lowest id
//! free everywhere. Only the members of the new communicator mark it used: a
//! non-member may hand the same id to another communicator later, which is safe
//! because any rank in both would have had the bit cleared in its own mask and so
//! in the AND. Ids come in pairs: `id` for point-to-point, `id + 1` for collectives.

use std::sync::Mutex;

use super::{Comm, FIRST_DYNAMIC_CONTEXT};
use crate::datatype::{Datatype, Primitive};
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::{Op, PredefinedOp};

/// Number of communicators that can exist at once per process (as MPICH's 2048).
pub const MAX_CONTEXTS: usize = 2048;
const WORDS: usize = MAX_CONTEXTS / 64;

/// Bit i set = context id `FIRST_DYNAMIC_CONTEXT + 2 i` is free here.
static FREE: Mutex<[u64; WORDS]> = Mutex::new([u64::MAX; WORDS]);

fn free_mask() -> std::sync::MutexGuard<'static, [u64; WORDS]> {
    FREE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Agrees on an id free on every rank of `parent` (collective over `parent`).
/// Members of the new communicator then call [`claim`].
pub fn agree(parent: &Comm, call: &str) -> Result<u32> {
    let mine = *free_mask();
    let mut all = [0u64; WORDS];
    let u64t = Datatype::predefined(Primitive::Uint64);
    // SAFETY: both buffers hold WORDS u64s and outlive the blocking call.
    unsafe {
        crate::coll::allreduce::allreduce(
            Some(mine.as_ptr() as *const u8),
            all.as_mut_ptr() as *mut u8,
            WORDS,
            &u64t,
            &Op::predefined(PredefinedOp::Band),
            parent,
        )?;
    }
    let bit = first_free(&all).ok_or_else(|| {
        MpiError::new(ErrorClass::Other, format!("{call}: no communicator context id is free on every rank ({MAX_CONTEXTS} communicators exist; free some)"))
    })?;
    Ok(FIRST_DYNAMIC_CONTEXT + 2 * bit as u32)
}

/// This rank's free mask, as words (for agreement across two groups).
pub fn free_words() -> Vec<u64> {
    free_mask().to_vec()
}

/// The lowest context id free in an agreed mask.
pub fn first_free_in(mask: &[u64]) -> Option<u32> {
    let m: &[u64; WORDS] = mask.try_into().ok()?;
    first_free(m).map(|b| FIRST_DYNAMIC_CONTEXT + 2 * b as u32)
}

fn first_free(mask: &[u64; WORDS]) -> Option<usize> {
    mask.iter().enumerate().find(|(_, w)| **w != 0).map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
}

fn bit_of(context: u32) -> Option<usize> {
    let b = context.checked_sub(FIRST_DYNAMIC_CONTEXT)? as usize / 2;
    (b < MAX_CONTEXTS).then_some(b)
}

/// Marks an agreed id used on this rank.
pub fn claim(context: u32) {
    if let Some(b) = bit_of(context) {
        free_mask()[b / 64] &= !(1u64 << (b % 64));
    }
}

/// Gives an id back (when the last handle of its communicator goes away).
pub fn release(context: u32) {
    if let Some(b) = bit_of(context) {
        free_mask()[b / 64] |= 1u64 << (b % 64);
    }
}

/// Ids in use on this rank (diagnostics, leak tests).
pub fn in_use() -> usize {
    free_mask().iter().map(|w| w.count_zeros() as usize).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_common_bit_wins() {
        let mut m = [0u64; WORDS];
        assert_eq!(first_free(&m), None);
        m[3] = 0b1010_0000;
        assert_eq!(first_free(&m), Some(3 * 64 + 5));
        assert_eq!(bit_of(FIRST_DYNAMIC_CONTEXT + 2 * 7), Some(7));
        assert_eq!(bit_of(0), None);
    }
}
