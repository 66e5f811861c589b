//! User operations of the Rust API over closures that borrow for `'a` ([`ScopedOp`]):
//! the engine gets an [`Op`] (which is `'static`, cloned into schedules), whose
//! calls reach the closure only while the `ScopedOp` lives; dropping it waits for
//! a call in progress and disarms the `Op`, so a use after that (a schedule kept
//! past the borrow) aborts the process instead of calling freed code. The closure
//! gets the operands as [`Region`]s: `count` elements of the datatype where they
//! lie (not packed), the input shared and the in-out exclusive.

use std::marker::PhantomData;
use std::sync::{Arc, RwLock};

use super::Op;
use crate::buf::Region;
use crate::datatype::Datatype;

/// The closure of a [`ScopedOp`]: `(in, inout)`, `count` elements of a datatype each.
pub type RegionFn<'a> =
    dyn for<'x> Fn(Region<'x, &'x Datatype>, Region<'x, &'x Datatype>) + Sync + 'a;

/// The closure, its lifetime erased; reached only through the `RwLock` below, whose
/// `None` (set when the [`ScopedOp`] goes) ends every use.
struct Erased(*const RegionFn<'static>);

// SAFETY: the closure is `Sync` and only ever called through a shared reference; it is owned (and dropped) by the `ScopedOp`, never through this pointer.
unsafe impl Send for Erased {}
// SAFETY: as above.
unsafe impl Sync for Erased {}

/// A user operation over a closure borrowing for `'a` (see the module's comment).
pub struct ScopedOp<'a> {
    op: Op,
    slot: Arc<RwLock<Option<Erased>>>,
    /// Owned here; dropped after the slot is cleared (`Drop`).
    func: Option<Box<RegionFn<'a>>>,
    _life: PhantomData<&'a ()>,
}

impl std::fmt::Debug for ScopedOp<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ScopedOp").field(&self.op).finish()
    }
}

impl<'a> ScopedOp<'a> {
    /// The operation over `func`; `commute` says whether it is commutative.
    pub fn new(func: Box<RegionFn<'a>>, commute: bool) -> ScopedOp<'a> {
        let p: *const RegionFn<'a> = &*func;
        // SAFETY: only the lifetime bound is erased; the pointer is reached only through `slot`, which `Drop` clears (waiting for calls in progress) before the box, which never moves, is dropped, within 'a.
        let erased = Erased(unsafe {
            std::mem::transmute::<*const RegionFn<'a>, *const RegionFn<'static>>(p)
        });
        let slot = Arc::new(RwLock::new(Some(erased)));
        let s = slot.clone();
        let op = Op::user(
            Arc::new(
                move |inp: *const u8, io: *mut u8, n: usize, dt: &Datatype| {
                    let g = s.read().unwrap_or_else(|e| e.into_inner());
                    let Some(f) = g.as_ref() else {
                        eprintln!(
                            "oxmpi: a user operation was used after it was dropped; aborting"
                        );
                        std::process::abort();
                    };
                    // SAFETY: the kernel's contract (`Op::user`): `n` elements of `dt` readable at `inp` and writable at `io`, not overlapping, for this call; any bytes the closure leaves there are the elements' (the datatype's values).
                    let (a, b) =
                        unsafe { (Region::shared(inp, n, dt), Region::exclusive(io, n, dt)) };
                    // SAFETY: the closure is alive while the read guard is held (`Drop` clears the slot under the write lock before dropping it).
                    let f = unsafe { &*f.0 };
                    f(a, b);
                },
            ),
            commute,
        );
        ScopedOp {
            op,
            slot,
            func: Some(func),
            _life: PhantomData,
        }
    }

    /// The engine's operation (valid while `self` lives; see the module's comment).
    pub fn op(&self) -> &Op {
        &self.op
    }
}

impl Drop for ScopedOp<'_> {
    fn drop(&mut self) {
        *self.slot.write().unwrap_or_else(|e| e.into_inner()) = None;
        drop(self.func.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buf::{RecvBuf, SendBuf};
    use crate::coll::api::reduce_local;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_scoped_op_borrows_its_environment_and_gets_the_operands_as_regions() {
        let calls = AtomicUsize::new(0);
        let op = ScopedOp::new(
            Box::new(|a: Region<'_, &Datatype>, mut b: Region<'_, &Datatype>| {
                calls.fetch_add(1, Ordering::SeqCst);
                assert!(!a.is_exclusive() && b.is_exclusive() && a.count() == 2);
                let x = a.bytes().unwrap().to_vec();
                for (p, q) in x.iter().zip(b.bytes_mut().unwrap()) {
                    *q = q.wrapping_add(*p);
                }
            }),
            true,
        );
        let (x, mut y) = ([1u8, 2], [10u8, 20]);
        reduce_local(SendBuf::slice(&x), RecvBuf::slice(&mut y), op.op()).unwrap();
        assert_eq!(y, [11, 22]);
        drop(op);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
