//! Reduction operations (`MPI_Op`): the predefined operations of the MPI
//! standard and user functions made by `MPI_Op_create`, and the engine that
//! applies them to buffers (`inout[i] = in[i] op inout[i]`). Pure code: no
//! communication happens here; the collective algorithms call [`Op::apply`].
//!
//! # Which types a predefined operation accepts
//!
//! As in the MPI standard's table (see [`PredefinedOp::allows`]):
//!
//! | op | type classes |
//! | --- | --- |
//! | `MPI_MAX`, `MPI_MIN` | C integer, Fortran integer, floating point |
//! | `MPI_SUM`, `MPI_PROD` | C integer, Fortran integer, floating point, complex |
//! | `MPI_LAND`, `MPI_LOR`, `MPI_LXOR` | C integer, logical (and, as MPICH, Fortran integer and floating point) |
//! | `MPI_BAND`, `MPI_BOR`, `MPI_BXOR` | C integer, Fortran integer, byte |
//! | `MPI_MAXLOC`, `MPI_MINLOC` | the value-index pair types |
//! | `MPI_REPLACE`, `MPI_NO_OP` | any type |
//!
//! A derived datatype is accepted when all its basic elements are one
//! predefined type that the operation accepts; the operation is then applied
//! to each of those elements where it lies in memory (gaps are not touched).
//!
//! # Semantics chosen where C leaves a choice
//!
//! * Integers wrap around (two's complement) on `MPI_SUM`/`MPI_PROD`, as the
//!   C code of MPICH does in practice.
//! * Logical operations take any non-zero value as true and store 0 or 1 of the
//!   element's width (C `_Bool`, Fortran `LOGICAL`: true is 1). On C integer
//!   types the same rule applies (`a && b` in C). On floating point types (an
//!   MPICH extension its own tests use) a value is true when it is not zero
//!   (a NaN is true, as in C) and the result is 1.0 or 0.0.
//! * `MPI_MAX`/`MPI_MIN` on floating point are C's `in > inout ? in : inout`
//!   (`<` for MIN), as MPICH computes them: a NaN compares false, so a NaN in
//!   `invec` never replaces the value in `inoutvec`, and a NaN already in
//!   `inoutvec` stays. The result with NaNs thus depends on the order of the
//!   operands, like in every C implementation; without NaNs it does not.
//!   `-0.0` and `+0.0` compare equal, so the `inoutvec` zero is kept.
//! * `MPI_MAXLOC`/`MPI_MINLOC` follow the standard: the larger (smaller) value
//!   wins with its index; on equal values the lower index wins. A NaN value
//!   compares neither greater, smaller nor equal: the `inoutvec` pair is kept.
//! * Complex `MPI_PROD` is the textbook `(ac - bd) + (ad + bc)i`, without the
//!   infinity/NaN recovery of C Annex G (as MPICH).
//! * `MPI_LONG_DOUBLE` (x87 80-bit extended precision in 16 bytes): on x86-64
//!   `MPI_SUM`/`MPI_PROD` are computed with the x87 unit itself, exactly as C's
//!   `long double` arithmetic (round to nearest, 64-bit significand). On other
//!   targets the values go through `f64` (precision loss: 53-bit significand,
//!   exponent range of `f64`); this is documented, not hidden.
//!   `MPI_MAX`/`MPI_MIN`/`MAXLOC`/`MINLOC` compare the 80-bit values exactly
//!   on every target. The 6 padding bytes of each element are never written.
//!
//! # User functions
//!
//! [`Op::user`] wraps a function called as `f(invec, inoutvec, count, datatype)`
//! that must compute `inoutvec[i] = invec[i] op inoutvec[i]` over `count`
//! elements of `datatype` in its memory layout (elements `extent` bytes apart),
//! exactly like the C `MPI_User_function`. The engine calls it once per
//! [`Op::apply`] with the whole count and the operand order above, which is what
//! non-commutative operations rely on.

use std::fmt;
use std::ptr;
use std::sync::{Arc, OnceLock};

use crate::datatype::{Datatype, Primitive, TypeClass};
use crate::error::{ErrorClass, MpiError, Result};

mod f80;
mod kernels;
mod plan;
mod scoped;
pub use scoped::{RegionFn, ScopedOp};
#[cfg(test)]
mod tests;

use kernels::reduce_run;
use plan::{apply_layout, data_span, plan, replace, Layout, STREAM_BLOCKS};

/// The predefined reduction operations of MPI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PredefinedOp {
    Max,
    Min,
    Sum,
    Prod,
    Land,
    Band,
    Lor,
    Bor,
    Lxor,
    Bxor,
    Maxloc,
    Minloc,
    Replace,
    NoOp,
}

impl PredefinedOp {
    pub const ALL: &'static [PredefinedOp] = &[
        PredefinedOp::Max,
        PredefinedOp::Min,
        PredefinedOp::Sum,
        PredefinedOp::Prod,
        PredefinedOp::Land,
        PredefinedOp::Band,
        PredefinedOp::Lor,
        PredefinedOp::Bor,
        PredefinedOp::Lxor,
        PredefinedOp::Bxor,
        PredefinedOp::Maxloc,
        PredefinedOp::Minloc,
        PredefinedOp::Replace,
        PredefinedOp::NoOp,
    ];

    /// The C name, e.g. `MPI_MAX`.
    pub const fn name(self) -> &'static str {
        match self {
            PredefinedOp::Max => "MPI_MAX",
            PredefinedOp::Min => "MPI_MIN",
            PredefinedOp::Sum => "MPI_SUM",
            PredefinedOp::Prod => "MPI_PROD",
            PredefinedOp::Land => "MPI_LAND",
            PredefinedOp::Band => "MPI_BAND",
            PredefinedOp::Lor => "MPI_LOR",
            PredefinedOp::Bor => "MPI_BOR",
            PredefinedOp::Lxor => "MPI_LXOR",
            PredefinedOp::Bxor => "MPI_BXOR",
            PredefinedOp::Maxloc => "MPI_MAXLOC",
            PredefinedOp::Minloc => "MPI_MINLOC",
            PredefinedOp::Replace => "MPI_REPLACE",
            PredefinedOp::NoOp => "MPI_NO_OP",
        }
    }

    /// The operation of this C name (`MPI_SUM`), if it is a predefined one.
    pub const fn from_name(name: &str) -> Option<PredefinedOp> {
        let mut i = 0;
        while i < Self::ALL.len() {
            if crate::const_str_eq(Self::ALL[i].name(), name) {
                return Some(Self::ALL[i]);
            }
            i += 1;
        }
        None
    }

    /// The engine's own number of the operation (1-based, never 0), for its wire
    /// formats: not the standard ABI's handle, which only the C library knows.
    pub fn code(self) -> u8 {
        self as u8 + 1
    }

    /// The operation of an engine number ([`code`](Self::code)).
    pub fn from_code(c: u8) -> Option<PredefinedOp> {
        Self::ALL.iter().copied().find(|p| p.code() == c)
    }

    /// Whether the operation is defined on elements of this type class.
    #[inline]
    pub fn allows(self, class: TypeClass) -> bool {
        use PredefinedOp::*;
        use TypeClass as C;
        match self {
            Max | Min => matches!(class, C::CInteger | C::FortranInteger | C::Floating),
            Sum | Prod => matches!(
                class,
                C::CInteger | C::FortranInteger | C::Floating | C::Complex
            ),
            // Fortran integers and floating point are extensions (as in MPICH): the
            // standard lists C integer and logical types only. Complex, byte and
            // pair types stay errors (MPICH rejects them too).
            Land | Lor | Lxor => matches!(
                class,
                C::CInteger | C::FortranInteger | C::Logical | C::Floating
            ),
            Band | Bor | Bxor => matches!(class, C::CInteger | C::FortranInteger | C::Byte),
            Maxloc | Minloc => class == C::Pair,
            Replace | NoOp => true,
        }
    }

    /// The type classes the operation accepts, for error messages.
    fn allowed_classes(self) -> &'static str {
        use PredefinedOp::*;
        match self {
            Max | Min => "C integer, Fortran integer and floating point types",
            Sum | Prod => "C integer, Fortran integer, floating point and complex types",
            Land | Lor | Lxor => "C integer, Fortran integer, logical and floating point types",
            Band | Bor | Bxor => "C integer, Fortran integer and byte types",
            Maxloc | Minloc => "the value-index pair types (MPI_DOUBLE_INT, MPI_2INT, ...)",
            Replace | NoOp => "all types",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for PredefinedOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn class_name(c: TypeClass) -> &'static str {
    match c {
        TypeClass::CInteger => "C integer",
        TypeClass::FortranInteger => "Fortran integer",
        TypeClass::Floating => "floating point",
        TypeClass::Logical => "logical",
        TypeClass::Complex => "complex",
        TypeClass::Byte => "byte",
        TypeClass::Pair => "value-index pair",
        TypeClass::Other => "no reduction type class",
    }
}

/// A user function: (invec, inoutvec, count, datatype). Raw pointers because C
/// users pass C function pointers; the Rust API wraps closures.
pub type UserFunction = dyn Fn(*const u8, *mut u8, usize, &Datatype) + Send + Sync;

enum OpKind {
    Predefined(PredefinedOp),
    User {
        func: Arc<UserFunction>,
        commute: bool,
    },
}

/// A reduction operation: predefined or user-defined. Cheap to clone.
#[derive(Clone)]
pub struct Op(Arc<OpKind>);

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Op").field(&self.name()).finish()
    }
}

impl Op {
    /// The predefined operation `p` (one shared instance per operation).
    pub fn predefined(p: PredefinedOp) -> Op {
        static CACHE: OnceLock<Vec<Op>> = OnceLock::new();
        let all = CACHE.get_or_init(|| {
            PredefinedOp::ALL
                .iter()
                .map(|&p| Op(Arc::new(OpKind::Predefined(p))))
                .collect()
        });
        all[p.index()].clone()
    }

    /// A user operation (`MPI_Op_create`). `commute` tells whether the
    /// algorithms may reorder the operands.
    pub fn user(f: Arc<UserFunction>, commute: bool) -> Op {
        Op(Arc::new(OpKind::User { func: f, commute }))
    }

    /// A user operation over the elements' data bytes, the safe form of [`user`](Op::user):
    /// `f(in, inout, count, dt)` gets the `count` elements of `dt` packed (`count *
    /// dt.size()` bytes each, in the type map's order), and what it leaves in `inout`
    /// goes back into the elements (gaps untouched). A contiguous datatype's bytes are
    /// passed where they lie, without a copy.
    ///
    /// ```
    /// use oxmpi_core::datatype::{Datatype, Primitive};
    /// use oxmpi_core::op::Op;
    /// // inout = in + inout over i32s, through their bytes.
    /// let add = Op::user_packed(
    ///     |a: &[u8], b: &mut [u8], _n: usize, _dt: &Datatype| {
    ///         for (x, y) in a.chunks(4).zip(b.chunks_mut(4)) {
    ///             let s = i32::from_ne_bytes(x.try_into().unwrap())
    ///                 + i32::from_ne_bytes(y.try_into().unwrap());
    ///             y.copy_from_slice(&s.to_ne_bytes());
    ///         }
    ///     },
    ///     true,
    /// );
    /// use oxmpi_core::buf::{RecvBuf, SendBuf};
    /// use oxmpi_core::coll::api::reduce_local;
    /// let (x, mut y) = ([1i32, 2], [10i32, 20]);
    /// reduce_local(SendBuf::slice(&x), RecvBuf::slice(&mut y), &add).unwrap();
    /// assert_eq!(y, [11, 22]);
    /// // A non-contiguous type (every other i32) gets its data packed, its gaps untouched.
    /// let every_other = Datatype::vector(2, 1, 2, Datatype::predefined_ref(Primitive::Int32)).unwrap();
    /// every_other.commit();
    /// let (x, mut y) = ([1i32, 0, 2], [10i32, -1, 20]);
    /// let b = |v: &[i32]| oxmpi_core::buf::as_bytes(v).to_vec();
    /// let (xb, mut yb) = (b(&x), b(&y));
    /// reduce_local(
    ///     SendBuf::typed(&xb, 1, &every_other).unwrap(),
    ///     RecvBuf::typed(&mut yb, 1, &every_other).unwrap(),
    ///     &add,
    /// )
    /// .unwrap();
    /// assert_eq!(yb, b(&[11, -1, 22]));
    /// ```
    pub fn user_packed<F>(f: F, commute: bool) -> Op
    where
        F: Fn(&[u8], &mut [u8], usize, &Datatype) + Send + Sync + 'static,
    {
        let func = move |inp: *const u8, io: *mut u8, n: usize, dt: &Datatype| {
            let len = n.saturating_mul(dt.size());
            if len == 0 {
                return f(&[], &mut [], n, dt);
            }
            if dt.is_contiguous() {
                let lb = dt.true_lb();
                // SAFETY: `apply`'s contract: `n` elements of dt's layout at each pointer (`inp` readable, `io` writable, no overlap); a contiguous type's data is `len` bytes from its true lower bound.
                let (a, b) = unsafe {
                    (
                        std::slice::from_raw_parts(inp.wrapping_offset(lb), len),
                        std::slice::from_raw_parts_mut(io.wrapping_offset(lb), len),
                    )
                };
                return f(a, b, n, dt);
            }
            let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
            // SAFETY: as above: the elements are readable at `inp` and `io`, writable at `io`, and the packed copies are ours.
            let packed = unsafe {
                crate::buf::pack::pack_into(dt, inp, n, &mut a, &mut 0)
                    .and_then(|_| crate::buf::pack::pack_into(dt, io, n, &mut b, &mut 0))
            };
            if packed.is_ok() {
                f(&a, &mut b, n, dt);
                // SAFETY: as above, `io` writable for the elements; `b` holds their packed bytes.
                let _ = unsafe { crate::buf::pack::unpack_from(dt, &b, &mut 0, io, n) };
            }
        };
        Op::user(Arc::new(func), commute)
    }

    pub fn as_predefined(&self) -> Option<PredefinedOp> {
        match &*self.0 {
            OpKind::Predefined(p) => Some(*p),
            OpKind::User { .. } => None,
        }
    }

    /// Whether the operation is commutative (all predefined ones are).
    pub fn is_commutative(&self) -> bool {
        match &*self.0 {
            OpKind::Predefined(_) => true,
            OpKind::User { commute, .. } => *commute,
        }
    }

    pub fn name(&self) -> String {
        match &*self.0 {
            OpKind::Predefined(p) => p.name().to_string(),
            OpKind::User { commute: true, .. } => "user-defined operation (commutative)".into(),
            OpKind::User { commute: false, .. } => {
                "user-defined operation (non-commutative)".into()
            }
        }
    }

    /// Checks that this op may be applied to `dt` (`ErrorClass::Op` otherwise),
    /// naming `call` in the message. User operations accept every datatype.
    pub fn check(&self, dt: &Datatype, call: &str) -> Result<()> {
        match &*self.0 {
            OpKind::User { .. } => Ok(()),
            OpKind::Predefined(p) => check_predefined(*p, dt, call).map(|_| ()),
        }
    }

    /// [`Op::apply`] over slices: `count` elements of `dt` in memory layout from the
    /// start of each; MPI_ERR_BUFFER naming `call` if they reach outside either.
    pub fn apply_slices(
        &self,
        call: &str,
        src: &[u8],
        inout: &mut [u8],
        count: usize,
        dt: &Datatype,
    ) -> Result<()> {
        crate::buf::check_fits(call, "inbuf", src.len(), count, dt)?;
        crate::buf::check_fits(call, "inoutbuf", inout.len(), count, dt)?;
        // SAFETY: both slices cover `count` elements of dt's memory layout (checked), and a shared and an exclusive borrow never overlap.
        unsafe { self.apply(src.as_ptr(), inout.as_mut_ptr(), count, dt) }
    }

    /// [`Op::apply`] over descriptors (MPI_Reduce_local): `inout = input op inout`
    /// element by element, `inout`'s count and datatype; MPI_ERR_BUFFER naming
    /// `call` unless the two have one layout (`coll::api::same_layout`).
    pub fn apply_bufs(
        &self,
        call: &str,
        input: &crate::buf::SendBuf<'_, '_>,
        inout: &mut crate::buf::RecvBuf<'_, '_>,
    ) -> Result<()> {
        crate::coll::api::same_layout(call, input, inout)?;
        let dt = crate::coll::api::dt(inout.datatype());
        // SAFETY: the descriptors' contracts: `count` elements of one layout at each (checked), readable at `input`, writable at `inout`; a shared and an exclusive borrow never overlap.
        unsafe { self.apply(input.ptr(), inout.ptr(), inout.count(), dt) }
    }

    /// `inout[i] = in[i] op inout[i]` for `count` elements of `dt` in memory
    /// layout (elements `dt.extent()` bytes apart, data at the offsets of
    /// `dt.blocks()`). Bytes outside the blocks are not written.
    ///
    /// # Safety
    /// Both buffers cover `count` elements of dt's memory layout (`invec`
    /// readable, `inoutvec` writable) and do not overlap.
    pub unsafe fn apply(
        &self,
        invec: *const u8,
        inoutvec: *mut u8,
        count: usize,
        dt: &Datatype,
    ) -> Result<()> {
        let r = self.reducer(dt, "MPI_Reduce_local")?;
        // SAFETY: forwarded caller contract (`count` elements of `dt` at each, apart).
        unsafe { r.apply(invec, inoutvec, count) }
    }

    /// This operation checked against `dt` once ([`Op::check`]'s error, naming
    /// `call`, if it does not apply): a [`Reducer`] then applies it to any number of
    /// buffer pairs without checking again (the collectives' chunk loops).
    #[inline]
    pub(crate) fn reducer<'a>(&'a self, dt: &'a Datatype, call: &str) -> Result<Reducer<'a>> {
        let (prim, dense) = match &*self.0 {
            OpKind::User { .. } => (None, None),
            OpKind::Predefined(p) => {
                let prim = check_predefined(*p, dt, call)?;
                let dense = match (*p, prim) {
                    (PredefinedOp::NoOp | PredefinedOp::Replace, _) => None,
                    (_, Some(prim)) if dt.as_primitive() == Some(prim) => Some((*p, prim)),
                    _ => None,
                };
                (prim, dense)
            }
        };
        Ok(Reducer {
            op: self,
            dt,
            prim,
            dense,
        })
    }
}

/// An [`Op`] checked against a [`Datatype`] ([`Op::reducer`]).
pub(crate) struct Reducer<'a> {
    op: &'a Op,
    dt: &'a Datatype,
    /// What `check_predefined` returned (None for a user operation).
    prim: Option<Primitive>,
    /// A predefined computing operation on a predefined type: one kernel run.
    dense: Option<(PredefinedOp, Primitive)>,
}

impl<'a> Reducer<'a> {
    /// The datatype the operation was checked against.
    #[inline]
    pub(crate) fn datatype(&self) -> &'a Datatype {
        self.dt
    }

    /// [`Op::apply`] without its check (done when the reducer was made).
    ///
    /// # Safety
    /// As [`Op::apply`]'s, for the reducer's datatype.
    #[inline]
    pub(crate) unsafe fn apply(
        &self,
        invec: *const u8,
        inoutvec: *mut u8,
        count: usize,
    ) -> Result<()> {
        if let Some((p, prim)) = self.dense {
            if count > 0 {
                // SAFETY: a predefined type's element is one `prim` (size = extent): the caller's `count` elements, readable at `invec`, writable at `inoutvec`, apart.
                unsafe { reduce_run(p, prim, invec, inoutvec, count, prim.extent()) };
            }
            return Ok(());
        }
        // SAFETY: forwarded caller contract.
        unsafe { self.apply_general(invec, inoutvec, count) }
    }

    /// # Safety
    /// As [`Reducer::apply`]'s.
    #[inline(never)]
    unsafe fn apply_general(
        &self,
        invec: *const u8,
        inoutvec: *mut u8,
        count: usize,
    ) -> Result<()> {
        let dt = self.dt;
        match &*self.op.0 {
            OpKind::User { func, .. } => {
                if count > 0 {
                    func(invec, inoutvec, count, dt);
                }
                Ok(())
            }
            OpKind::Predefined(p) => {
                let prim = self.prim;
                if count == 0 {
                    return Ok(());
                }
                match (*p, prim) {
                    (PredefinedOp::NoOp, _) => Ok(()),
                    (PredefinedOp::Replace, _) if dt.block_count() > STREAM_BLOCKS => {
                        let ext = dt.extent();
                        for i in 0..count as isize {
                            dt.for_each_block(i.wrapping_mul(ext), |off, len| {
                                // SAFETY: each block of each element is inside both buffers.
                                unsafe {
                                    ptr::copy(
                                        invec.wrapping_offset(off),
                                        inoutvec.wrapping_offset(off),
                                        len,
                                    )
                                };
                            });
                        }
                        Ok(())
                    }
                    (PredefinedOp::Replace, _) => {
                        // SAFETY: the caller's contract covers `count` elements of `dt`.
                        unsafe { replace(invec, inoutvec, count, &dt.blocks_cow(), dt.extent()) };
                        Ok(())
                    }
                    (_, Some(prim))
                        if dt.as_primitive() != Some(prim) && dt.block_count() > STREAM_BLOCKS =>
                    {
                        // Too many blocks for a plan: block by block, each a
                        // whole number of elements (as every regular type's are).
                        let esz = prim.size();
                        let mut whole = data_span(prim) == esz;
                        dt.for_each_block(0, |_, len| whole &= len % esz == 0);
                        if !whole {
                            return Err(op_error(format!(
                                "MPI_Reduce_local: {} cannot be applied to {}: its blocks split elements of {}",
                                p.name(),
                                dt_label(dt),
                                prim.name()
                            )));
                        }
                        let ext = dt.extent();
                        for i in 0..count as isize {
                            dt.for_each_block(i.wrapping_mul(ext), |off, len| {
                                // SAFETY: the caller's contract covers `count` elements of `dt`; this block of element i holds len / esz packed elements.
                                unsafe {
                                    reduce_run(
                                        *p,
                                        prim,
                                        invec.wrapping_offset(off),
                                        inoutvec.wrapping_offset(off),
                                        len / esz,
                                        esz,
                                    )
                                };
                            });
                        }
                        Ok(())
                    }
                    (_, Some(prim)) => {
                        let layout = if dt.as_primitive() == Some(prim) {
                            Layout::Predefined
                        } else {
                            Layout::Derived(plan(prim, &dt.blocks_cow(), dt.extent()).map_err(
                                |why| {
                                    op_error(format!(
                                        "MPI_Reduce_local: {} cannot be applied to {}: {why}",
                                        p.name(),
                                        dt_label(dt)
                                    ))
                                },
                            )?)
                        };
                        // SAFETY: the caller's contract covers `count` elements of `dt`, and `layout` only addresses bytes inside dt's blocks.
                        unsafe {
                            apply_layout(*p, prim, &layout, invec, inoutvec, count, dt.extent())
                        };
                        Ok(())
                    }
                    (_, None) => Err(MpiError::intern(
                        "MPI_Reduce_local",
                        "checked datatype without primitive",
                    )),
                }
            }
        }
    }
}

/// The datatype's name, or a description when it has none.
fn dt_label(dt: &Datatype) -> String {
    match dt.name() {
        n if n.is_empty() => "a derived datatype".to_string(),
        n => n,
    }
}

fn op_error(message: String) -> MpiError {
    MpiError::new(ErrorClass::Op, message)
}

/// Checks a predefined op against a datatype; returns the primitive the op
/// computes on (None only for REPLACE/NO_OP on mixed datatypes).
/// `io[i] = inp[i] op io[i]` for `n` consecutive elements of `prim` (dense: size =
/// extent), straight to the kernel: the one-sided bulk accumulate's fast path.
/// `MPI_REPLACE` copies, `MPI_NO_OP` does nothing; any other `op` must be allowed on
/// `prim`'s class ([`PredefinedOp::allows`], what [`Op::check`] tests).
///
/// # Safety
/// `n` elements are readable at `inp` and writable at `io`, not overlapping.
pub unsafe fn apply_dense(
    op: PredefinedOp,
    prim: Primitive,
    inp: *const u8,
    io: *mut u8,
    n: usize,
) {
    match op {
        PredefinedOp::NoOp => {}
        // SAFETY: the caller's contract: n elements of prim.size() bytes each.
        PredefinedOp::Replace => unsafe { ptr::copy_nonoverlapping(inp, io, n * prim.size()) },
        // SAFETY: the caller's contract, dense elements (stride = size).
        _ => unsafe { reduce_run(op, prim, inp, io, n, prim.size()) },
    }
}

#[inline]
fn check_predefined(p: PredefinedOp, dt: &Datatype, call: &str) -> Result<Option<Primitive>> {
    // The common case, a predefined type the op applies to, without the error paths.
    match dt.as_primitive() {
        Some(prim) if p.allows(prim.class()) => Ok(Some(prim)),
        _ => check_predefined_slow(p, dt, call),
    }
}

#[inline(never)]
fn check_predefined_slow(p: PredefinedOp, dt: &Datatype, call: &str) -> Result<Option<Primitive>> {
    let prim = dt.as_primitive().or_else(|| dt.single_primitive());
    if matches!(p, PredefinedOp::Replace | PredefinedOp::NoOp) {
        return Ok(prim);
    }
    match prim {
        Some(prim) if p.allows(prim.class()) => Ok(Some(prim)),
        Some(prim) => {
            let class = class_name(prim.class());
            let what = if dt.as_primitive() == Some(prim) {
                format!("{} ({class})", prim.name())
            } else {
                match dt.name() {
                    n if n.is_empty() => format!("a derived datatype of {} ({class})", prim.name()),
                    n => format!("{n} (a derived datatype of {}, {class})", prim.name()),
                }
            };
            Err(op_error(format!(
                "{call}: {} is not defined for {what}; it applies to {}",
                p.name(),
                p.allowed_classes()
            )))
        }
        None => Err(op_error(format!(
            "{call}: {} is not defined for {}: a predefined operation needs a datatype whose basic \
             elements are all of one predefined type",
            p.name(),
            dt_label(dt)
        ))),
    }
}
