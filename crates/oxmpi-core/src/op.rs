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

use std::cmp::Ordering;
use std::fmt;
use std::mem::size_of;
use std::ptr;
use std::sync::{Arc, OnceLock};

use crate::datatype::{Datatype, PairValue, Primitive, Repr, TypeClass};
use crate::error::{ErrorClass, MpiError, Result};

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
    pub fn allows(self, class: TypeClass) -> bool {
        use PredefinedOp::*;
        use TypeClass as C;
        match self {
            Max | Min => matches!(class, C::CInteger | C::FortranInteger | C::Floating),
            Sum | Prod => matches!(class, C::CInteger | C::FortranInteger | C::Floating | C::Complex),
            // Fortran integers and floating point are extensions (as in MPICH): the
            // standard lists C integer and logical types only. Complex, byte and
            // pair types stay errors (MPICH rejects them too).
            Land | Lor | Lxor => matches!(class, C::CInteger | C::FortranInteger | C::Logical | C::Floating),
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
    User { func: Arc<UserFunction>, commute: bool },
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
            OpKind::User { commute: false, .. } => "user-defined operation (non-commutative)".into(),
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

    /// `inout[i] = in[i] op inout[i]` for `count` elements of `dt` in memory
    /// layout (elements `dt.extent()` bytes apart, data at the offsets of
    /// `dt.blocks()`). Bytes outside the blocks are not written.
    ///
    /// # Safety
    /// Both buffers cover `count` elements of dt's memory layout (`invec`
    /// readable, `inoutvec` writable) and do not overlap.
    pub unsafe fn apply(&self, invec: *const u8, inoutvec: *mut u8, count: usize, dt: &Datatype) -> Result<()> {
        match &*self.0 {
            OpKind::User { func, .. } => {
                if count > 0 {
                    func(invec, inoutvec, count, dt);
                }
                Ok(())
            }
            OpKind::Predefined(p) => {
                let prim = check_predefined(*p, dt, "MPI_Reduce_local")?;
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
                                unsafe { ptr::copy(invec.wrapping_offset(off), inoutvec.wrapping_offset(off), len) };
                            });
                        }
                        Ok(())
                    }
                    (PredefinedOp::Replace, _) => {
                        // SAFETY: the caller's contract covers `count` elements of `dt`.
                        unsafe { replace(invec, inoutvec, count, &dt.blocks_cow(), dt.extent()) };
                        Ok(())
                    }
                    (_, Some(prim)) if dt.as_primitive() != Some(prim) && dt.block_count() > STREAM_BLOCKS => {
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
                                // SAFETY: the caller's contract covers `count` elements of `dt`;
                                // this block of element i holds len / esz packed elements.
                                unsafe { reduce_run(*p, prim, invec.wrapping_offset(off), inoutvec.wrapping_offset(off), len / esz, esz) };
                            });
                        }
                        Ok(())
                    }
                    (_, Some(prim)) => {
                        let layout = if dt.as_primitive() == Some(prim) {
                            Layout::Predefined
                        } else {
                            Layout::Derived(plan(prim, &dt.blocks_cow(), dt.extent()).map_err(|why| {
                                op_error(format!(
                                    "MPI_Reduce_local: {} cannot be applied to {}: {why}",
                                    p.name(),
                                    dt_label(dt)
                                ))
                            })?)
                        };
                        // SAFETY: the caller's contract covers `count` elements of `dt`,
                        // and `layout` only addresses bytes inside dt's blocks.
                        unsafe { apply_layout(*p, prim, &layout, invec, inoutvec, count, dt.extent()) };
                        Ok(())
                    }
                    (_, None) => Err(MpiError::intern("MPI_Reduce_local", "checked datatype without primitive")),
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
fn check_predefined(p: PredefinedOp, dt: &Datatype, call: &str) -> Result<Option<Primitive>> {
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

// ---------------------------------------------------------------------------
// Layout plans

/// Where the elements of the computing primitive lie within one element of
/// the datatype.
#[derive(Debug, PartialEq)]
enum Layout {
    /// The datatype is the primitive: one element every `extent` bytes.
    Predefined,
    Derived(Plan),
}

/// Datatypes with more blocks than this are reduced block by block, without
/// a plan (whose list would be as long as the blocks).
const STREAM_BLOCKS: usize = 1 << 20;

/// Runs `(offset, n)`: `n` primitive elements packed `prim.size()` bytes apart
/// from `offset` (relative to the start of the datatype's element).
#[derive(Debug, PartialEq)]
struct Plan {
    runs: Vec<(isize, usize)>,
    /// The datatype is `n` packed primitive elements filling its extent: the
    /// whole buffer is one run of `count * n`.
    dense: Option<usize>,
}

/// Memory span of one primitive's data: value and index of a pair can be
/// apart (`MPI_SHORT_INT`: value 2 bytes, index at 4).
fn data_span(prim: Primitive) -> usize {
    match prim.repr() {
        Repr::Pair { value, index_offset } => index_offset as usize + pair_index_width(value),
        _ => prim.size(),
    }
}

fn pair_index_width(v: PairValue) -> usize {
    match v {
        PairValue::F64F64 => 8,
        _ => 4,
    }
}

/// Finds the primitive elements of a derived datatype from its flattened
/// blocks: the blocks' bytes, in order, are the data bytes of consecutive
/// primitive elements (`prim.size()` each); an element starts where its first
/// data byte lies, and its fields are at the C layout's offsets from there.
fn plan(prim: Primitive, blocks: &[(isize, usize)], extent: isize) -> std::result::Result<Plan, String> {
    let esz = prim.size();
    let packable = data_span(prim) == esz;
    let mut runs: Vec<(isize, usize)> = Vec::new();
    let push = |runs: &mut Vec<(isize, usize)>, off: isize, n: usize| {
        if let Some(last) = runs.last_mut() {
            if packable && last.0 + (last.1 * esz) as isize == off {
                last.1 += n;
                return;
            }
        }
        runs.push((off, n));
    };
    let mut need = 0usize; // data bytes of the current element still to pass
    for &(off, len) in blocks {
        let mut o = 0usize;
        while o < len {
            if need > 0 {
                let t = need.min(len - o);
                o += t;
                need -= t;
                continue;
            }
            let rem = len - o;
            if packable && rem >= esz {
                let n = rem / esz;
                push(&mut runs, off + o as isize, n);
                o += n * esz;
                continue;
            }
            if packable {
                return Err(format!(
                    "an element of {} is split between blocks of the datatype",
                    prim.name()
                ));
            }
            push(&mut runs, off + o as isize, 1);
            let t = esz.min(rem);
            o += t;
            need = esz - t;
        }
    }
    if need != 0 {
        return Err(format!("the datatype ends inside an element of {}", prim.name()));
    }
    let dense = match runs.as_slice() {
        [(0, n)] if packable && (n * esz) as isize == extent => Some(*n),
        _ => None,
    };
    Ok(Plan { runs, dense })
}

/// # Safety
/// The buffers cover `count` elements of the layout (see [`Op::apply`]).
unsafe fn apply_layout(
    op: PredefinedOp,
    prim: Primitive,
    layout: &Layout,
    inp: *const u8,
    io: *mut u8,
    count: usize,
    extent: isize,
) {
    match layout {
        // SAFETY: a predefined type's element is one `prim` (size = extent), so
        // the `count` values `prim.extent()` apart are exactly the `count`
        // elements the caller guarantees readable at `inp`, writable at `io`,
        // not overlapping.
        Layout::Predefined => unsafe { reduce_run(op, prim, inp, io, count, prim.extent()) },
        // SAFETY: `dense` is set only when the element is `n` packed values of
        // `prim` filling the whole extent (see `plan`), so the `count` elements
        // the caller guarantees are `count * n` packed values of `prim`.
        Layout::Derived(Plan { dense: Some(n), .. }) => unsafe {
            reduce_run(op, prim, inp, io, count * n, prim.size())
        },
        Layout::Derived(plan) => {
            for i in 0..count {
                let base = i as isize * extent;
                for &(off, n) in &plan.runs {
                    // SAFETY: element i's run lies inside both buffers.
                    unsafe {
                        reduce_run(
                            op,
                            prim,
                            inp.offset(base + off),
                            io.offset(base + off),
                            n,
                            prim.size(),
                        )
                    }
                }
            }
        }
    }
}

/// MPI_REPLACE: copies the data bytes (the blocks) of every element.
///
/// # Safety
/// The buffers cover `count` elements of the layout.
unsafe fn replace(inp: *const u8, io: *mut u8, count: usize, blocks: &[(isize, usize)], extent: isize) {
    if let [(0, len)] = blocks {
        if *len as isize == extent {
            // SAFETY: dense layout: the buffers are `count * extent` bytes.
            unsafe { ptr::copy(inp, io, count * len) };
            return;
        }
    }
    for i in 0..count {
        let base = i as isize * extent;
        for &(off, len) in blocks {
            // SAFETY: each block of each element is inside both buffers.
            unsafe { ptr::copy(inp.offset(base + off), io.offset(base + off), len) };
        }
    }
}

// ---------------------------------------------------------------------------
// Kernels

/// `io[i] = f(in[i], io[i])` for `n` values of `T`, `stride` bytes apart.
/// Aligned packed arrays become slices (the loops vectorize); otherwise
/// unaligned reads and writes.
///
/// # Safety
/// `n` values at `stride` are readable at `inp` and writable at `io`, no overlap.
#[inline(always)]
unsafe fn map2<T: Copy>(inp: *const u8, io: *mut u8, n: usize, stride: usize, f: impl Fn(T, T) -> T) {
    let sz = size_of::<T>();
    if stride == sz && (inp as *const T).is_aligned() && (io as *const T).is_aligned() {
        // SAFETY: aligned, `n` packed values readable/writable, not overlapping (caller).
        let (a, b) = unsafe {
            (
                std::slice::from_raw_parts(inp as *const T, n),
                std::slice::from_raw_parts_mut(io as *mut T, n),
            )
        };
        for (y, &x) in b.iter_mut().zip(a) {
            *y = f(x, *y);
        }
    } else {
        for i in 0..n {
            // SAFETY: value i is inside both buffers (caller); unaligned access.
            unsafe {
                let pa = inp.add(i * stride) as *const T;
                let pb = io.add(i * stride) as *mut T;
                pb.write_unaligned(f(pa.read_unaligned(), pb.read_unaligned()));
            }
        }
    }
}

/// Reads a `T` at `p + off` (unaligned).
///
/// # Safety
/// The bytes are readable.
#[inline(always)]
unsafe fn rd<T: Copy>(p: *const u8, off: usize) -> T {
    // SAFETY: caller guarantees the bytes are readable.
    unsafe { (p.add(off) as *const T).read_unaligned() }
}

/// Writes a `T` at `p + off` (unaligned).
///
/// # Safety
/// The bytes are writable.
#[inline(always)]
unsafe fn wr<T: Copy>(p: *mut u8, off: usize, v: T) {
    // SAFETY: caller guarantees the bytes are writable.
    unsafe { (p.add(off) as *mut T).write_unaligned(v) }
}

macro_rules! int_kernel {
    ($name:ident, $t:ty) => {
        /// # Safety
        /// As [`map2`].
        unsafe fn $name(op: PredefinedOp, inp: *const u8, io: *mut u8, n: usize, stride: usize) {
            use PredefinedOp::*;
            // SAFETY: every arm calls map2 with `T = $t`, whose size is the
            // primitive's that selected this kernel, and the caller's `n`,
            // `stride` and buffers: the caller's guarantee is map2's contract.
            unsafe {
                match op {
                    Max => map2::<$t>(inp, io, n, stride, |a, b| if a > b { a } else { b }),
                    Min => map2::<$t>(inp, io, n, stride, |a, b| if a < b { a } else { b }),
                    Sum => map2::<$t>(inp, io, n, stride, |a, b| a.wrapping_add(b)),
                    Prod => map2::<$t>(inp, io, n, stride, |a, b| a.wrapping_mul(b)),
                    Land => map2::<$t>(inp, io, n, stride, |a, b| ((a != 0) & (b != 0)) as $t),
                    Lor => map2::<$t>(inp, io, n, stride, |a, b| ((a != 0) | (b != 0)) as $t),
                    Lxor => map2::<$t>(inp, io, n, stride, |a, b| ((a != 0) ^ (b != 0)) as $t),
                    Band => map2::<$t>(inp, io, n, stride, |a, b| a & b),
                    Bor => map2::<$t>(inp, io, n, stride, |a, b| a | b),
                    Bxor => map2::<$t>(inp, io, n, stride, |a, b| a ^ b),
                    Maxloc | Minloc | Replace | NoOp => {}
                }
            }
        }
    };
}

int_kernel!(k_i8, i8);
int_kernel!(k_i16, i16);
int_kernel!(k_i32, i32);
int_kernel!(k_i64, i64);
int_kernel!(k_u8, u8);
int_kernel!(k_u16, u16);
int_kernel!(k_u32, u32);
int_kernel!(k_u64, u64);

macro_rules! float_kernel {
    ($name:ident, $cname:ident, $t:ty) => {
        /// # Safety
        /// As [`map2`].
        unsafe fn $name(op: PredefinedOp, inp: *const u8, io: *mut u8, n: usize, stride: usize) {
            use PredefinedOp::*;
            // SAFETY: every arm calls map2 with `T = $t`, whose size is the
            // primitive's that selected this kernel, and the caller's `n`,
            // `stride` and buffers: the caller's guarantee is map2's contract.
            unsafe {
                match op {
                    // C's `a > b ? a : b` with a = invec, b = inoutvec (see the module doc on NaN).
                    Max => map2::<$t>(inp, io, n, stride, |a, b| if a > b { a } else { b }),
                    Min => map2::<$t>(inp, io, n, stride, |a, b| if a < b { a } else { b }),
                    Sum => map2::<$t>(inp, io, n, stride, |a, b| a + b),
                    Prod => map2::<$t>(inp, io, n, stride, |a, b| a * b),
                    // Logical operations (an MPICH extension): non-zero is true; 1.0 or 0.0.
                    Land => map2::<$t>(inp, io, n, stride, |a, b| ((a != 0.0) & (b != 0.0)) as u8 as $t),
                    Lor => map2::<$t>(inp, io, n, stride, |a, b| ((a != 0.0) | (b != 0.0)) as u8 as $t),
                    Lxor => map2::<$t>(inp, io, n, stride, |a, b| ((a != 0.0) ^ (b != 0.0)) as u8 as $t),
                    _ => {}
                }
            }
        }

        /// Complex of two `$t` (real, imaginary).
        ///
        /// # Safety
        /// As [`map2`].
        unsafe fn $cname(op: PredefinedOp, inp: *const u8, io: *mut u8, n: usize, stride: usize) {
            // SAFETY: every arm calls map2 with `T = $t`, whose size is the
            // primitive's that selected this kernel, and the caller's `n`,
            // `stride` and buffers: the caller's guarantee is map2's contract.
            unsafe {
                match op {
                    PredefinedOp::Sum => {
                        map2::<[$t; 2]>(inp, io, n, stride, |a, b| [a[0] + b[0], a[1] + b[1]])
                    }
                    PredefinedOp::Prod => map2::<[$t; 2]>(inp, io, n, stride, |a, b| {
                        [a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]]
                    }),
                    _ => {}
                }
            }
        }
    };
}

float_kernel!(k_f32, k_c32, f32);
float_kernel!(k_f64, k_c64, f64);

/// One x87 extended-precision value: the 10 significant bytes (little endian:
/// 64-bit significand with explicit integer bit, then sign and 15-bit exponent).
type F80 = [u8; 10];

/// # Safety
/// As [`map2`] with 10-byte values.
unsafe fn k_f80(op: PredefinedOp, inp: *const u8, io: *mut u8, n: usize, stride: usize) {
    // SAFETY: every arm calls map2 with `T = [u8; 10]`, the 10 value bytes
    // the caller guarantees per element (no alignment needed: byte arrays),
    // with the caller's `n`, `stride` and buffers: its contract is map2's.
    unsafe {
        match op {
            PredefinedOp::Max => map2::<F80>(inp, io, n, stride, |a, b| {
                if f80_cmp(a, b) == Some(Ordering::Greater) {
                    a
                } else {
                    b
                }
            }),
            PredefinedOp::Min => map2::<F80>(inp, io, n, stride, |a, b| {
                if f80_cmp(a, b) == Some(Ordering::Less) {
                    a
                } else {
                    b
                }
            }),
            PredefinedOp::Sum => map2::<F80>(inp, io, n, stride, f80_add),
            PredefinedOp::Prod => map2::<F80>(inp, io, n, stride, f80_mul),
            PredefinedOp::Land => map2::<F80>(inp, io, n, stride, |a, b| f80_bool(f80_true(a) & f80_true(b))),
            PredefinedOp::Lor => map2::<F80>(inp, io, n, stride, |a, b| f80_bool(f80_true(a) | f80_true(b))),
            PredefinedOp::Lxor => map2::<F80>(inp, io, n, stride, |a, b| f80_bool(f80_true(a) ^ f80_true(b))),
            _ => {}
        }
    }
}

/// Complex long double: real part at 0, imaginary part at 16.
///
/// # Safety
/// As [`map2`] with 32-byte elements.
unsafe fn k_c80(op: PredefinedOp, inp: *const u8, io: *mut u8, n: usize, stride: usize) {
    for i in 0..n {
        // SAFETY: element i (32 bytes) is inside both buffers (caller).
        unsafe {
            let (pa, pb) = (inp.add(i * stride), io.add(i * stride));
            let (ar, ai): (F80, F80) = (rd(pa, 0), rd(pa, 16));
            let (br, bi): (F80, F80) = (rd(pb, 0), rd(pb, 16));
            let (r, im) = match op {
                PredefinedOp::Sum => (f80_add(ar, br), f80_add(ai, bi)),
                PredefinedOp::Prod => (
                    f80_add(f80_mul(ar, br), f80_neg(f80_mul(ai, bi))),
                    f80_add(f80_mul(ar, bi), f80_mul(ai, br)),
                ),
                _ => return,
            };
            wr(pb, 0, r);
            wr(pb, 16, im);
        }
    }
}

/// MAXLOC/MINLOC on (value, index) pairs: value `V` at 0, index `I` at `ioff`.
///
/// # Safety
/// `n` pairs `stride` bytes apart are readable at `inp`, writable at `io`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn k_pair<V: Copy, I: Copy>(
    op: PredefinedOp,
    inp: *const u8,
    io: *mut u8,
    n: usize,
    stride: usize,
    ioff: usize,
    cmp: impl Fn(V, V) -> Option<Ordering>,
    idx_lt: impl Fn(I, I) -> bool,
) {
    let wins = match op {
        PredefinedOp::Maxloc => Ordering::Greater,
        PredefinedOp::Minloc => Ordering::Less,
        _ => return,
    };
    for i in 0..n {
        // SAFETY: pair i is inside both buffers (caller).
        unsafe {
            let (pa, pb) = (inp.add(i * stride), io.add(i * stride));
            let (av, bv): (V, V) = (rd(pa, 0), rd(pb, 0));
            let ai: I = rd(pa, ioff);
            match cmp(av, bv) {
                Some(o) if o == wins => {
                    wr(pb, 0, av);
                    wr(pb, ioff, ai);
                }
                Some(Ordering::Equal) if idx_lt(ai, rd(pb, ioff)) => wr(pb, ioff, ai),
                _ => {}
            }
        }
    }
}

/// Applies a predefined op (not REPLACE/NO_OP) to `n` elements of `prim`,
/// `stride` bytes apart.
///
/// # Safety
/// The `n` elements are readable at `inp` and writable at `io`, no overlap.
unsafe fn reduce_run(op: PredefinedOp, prim: Primitive, inp: *const u8, io: *mut u8, n: usize, stride: usize) {
    fn lt<T: PartialOrd>(a: T, b: T) -> bool {
        a < b
    }
    fn pcmp<T: PartialOrd>(a: T, b: T) -> Option<Ordering> {
        a.partial_cmp(&b)
    }
    // SAFETY: each arm runs the kernel of `prim`'s representation, whose value
    // type has `prim`'s size, on the caller's `n` values `stride` apart, which
    // the caller guarantees readable at `inp` and writable at `io`, disjoint.
    unsafe {
        match prim.repr() {
            Repr::I8 => k_i8(op, inp, io, n, stride),
            Repr::I16 => k_i16(op, inp, io, n, stride),
            Repr::I32 => k_i32(op, inp, io, n, stride),
            Repr::I64 => k_i64(op, inp, io, n, stride),
            Repr::U8 | Repr::Bool1 | Repr::Logical(1) => k_u8(op, inp, io, n, stride),
            Repr::U16 | Repr::Logical(2) => k_u16(op, inp, io, n, stride),
            Repr::U32 | Repr::Logical(4) => k_u32(op, inp, io, n, stride),
            Repr::U64 | Repr::Logical(8) => k_u64(op, inp, io, n, stride),
            Repr::Logical(_) => {}
            Repr::F32 => k_f32(op, inp, io, n, stride),
            Repr::F64 => k_f64(op, inp, io, n, stride),
            Repr::F80 => k_f80(op, inp, io, n, stride),
            Repr::Complex32 => k_c32(op, inp, io, n, stride),
            Repr::Complex64 => k_c64(op, inp, io, n, stride),
            Repr::Complex80 => k_c80(op, inp, io, n, stride),
            Repr::Pair { value, index_offset } => {
                let o = index_offset as usize;
                match value {
                    PairValue::F32 => k_pair::<f32, i32>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::F64 => k_pair::<f64, i32>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::I64 => k_pair::<i64, i32>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::I32 => k_pair::<i32, i32>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::I16 => k_pair::<i16, i32>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::F80 => k_pair::<F80, i32>(op, inp, io, n, stride, o, f80_cmp, lt),
                    PairValue::F32F32 => k_pair::<f32, f32>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::F64F64 => k_pair::<f64, f64>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::I32I32 => k_pair::<i32, i32>(op, inp, io, n, stride, o, pcmp, lt),
                }
            }
            Repr::Raw => {}
        }
    }
}

// ---------------------------------------------------------------------------
// x87 extended precision

fn f80_parts(x: F80) -> (bool, u16, u64) {
    let mant = u64::from_le_bytes(x[..8].try_into().unwrap());
    let se = u16::from_le_bytes([x[8], x[9]]);
    (se & 0x8000 != 0, se & 0x7fff, mant)
}

fn f80_from_parts(neg: bool, exp: u16, mant: u64) -> F80 {
    let mut x = [0u8; 10];
    x[..8].copy_from_slice(&mant.to_le_bytes());
    x[8..].copy_from_slice(&((exp & 0x7fff) | if neg { 0x8000 } else { 0 }).to_le_bytes());
    x
}

fn f80_is_nan(x: F80) -> bool {
    let (_, e, m) = f80_parts(x);
    e == 0x7fff && (m << 1) != 0
}

/// Exact comparison of two x87 values (None if either is a NaN; the two zeros
/// are equal).
/// Whether an extended-precision value is non-zero (either sign of zero is
/// false; NaNs, infinities and denormals are true, as in C).
fn f80_true(x: F80) -> bool {
    x[..8].iter().any(|&b| b != 0) || (u16::from_le_bytes([x[8], x[9]]) & 0x7fff) != 0
}

/// 1.0 or +0.0 in extended precision.
fn f80_bool(v: bool) -> F80 {
    if v {
        f80_from_parts(false, 0x3fff, 1 << 63)
    } else {
        [0; 10]
    }
}

fn f80_cmp(a: F80, b: F80) -> Option<Ordering> {
    if f80_is_nan(a) || f80_is_nan(b) {
        return None;
    }
    let (sa, ea, ma) = f80_parts(a);
    let (sb, eb, mb) = f80_parts(b);
    let za = ma == 0;
    let zb = mb == 0;
    if za && zb {
        return Some(Ordering::Equal);
    }
    // Magnitude order: exponent, then significand (explicit integer bit; a
    // denormal has exponent 0 and the bit clear).
    let mag = |e: u16, m: u64| ((e as u128) << 64) | m as u128;
    let (ka, kb) = (mag(ea, ma), mag(eb, mb));
    let neg_a = sa && !za;
    let neg_b = sb && !zb;
    Some(match (neg_a, neg_b) {
        (false, false) => ka.cmp(&kb),
        (true, true) => kb.cmp(&ka),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
    })
}

fn f80_neg(x: F80) -> F80 {
    let mut y = x;
    y[9] ^= 0x80;
    y
}

/// Exact conversion of an `f64` to x87 extended precision.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn f64_to_f80(v: f64) -> F80 {
    let bits = v.to_bits();
    let neg = bits >> 63 != 0;
    let e = ((bits >> 52) & 0x7ff) as u16;
    let frac = bits & ((1u64 << 52) - 1);
    match e {
        0x7ff => f80_from_parts(neg, 0x7fff, (1 << 63) | (frac << 11)),
        0 if frac == 0 => f80_from_parts(neg, 0, 0),
        0 => {
            let lz = frac.leading_zeros() as u16;
            f80_from_parts(neg, 15372 - lz, frac << lz)
        }
        _ => f80_from_parts(neg, e + (16383 - 1023), (1 << 63) | (frac << 11)),
    }
}

/// Conversion of an x87 value to `f64` (rounds to 53 bits; may overflow to
/// infinity or underflow to zero).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn f80_to_f64(x: F80) -> f64 {
    let (neg, e, m) = f80_parts(x);
    let sign = if neg { -1.0 } else { 1.0 };
    if e == 0x7fff {
        return if (m << 1) == 0 { sign * f64::INFINITY } else { f64::NAN };
    }
    if m == 0 {
        return sign * 0.0;
    }
    // value = m * 2^(e - 16383 - 63), denormals use exponent 1.
    let mut k = e.max(1) as i32 - 16383 - 63;
    let mut v = m as f64;
    while k > 0 {
        let s = k.min(1000);
        v *= 2f64.powi(s);
        k -= s;
    }
    while k < 0 {
        let s = k.max(-1000);
        v *= 2f64.powi(s);
        k -= s;
    }
    sign * v
}

#[cfg(target_arch = "x86_64")]
macro_rules! x87_binop {
    ($name:ident, $insn:literal) => {
        /// x87 arithmetic on extended precision values, as C `long double`.
        fn $name(a: F80, b: F80) -> F80 {
            let mut out: F80 = [0; 10];
            // SAFETY: loads two 10-byte values from valid arrays and stores one into `out`;
            // the x87 stack is empty on entry (Rust ABI) and is left empty; all x87 registers are declared clobbered.
            unsafe {
                std::arch::asm!(
                    "fld tbyte ptr [{a}]",
                    "fld tbyte ptr [{b}]",
                    $insn,
                    "fstp tbyte ptr [{o}]",
                    a = in(reg) a.as_ptr(),
                    b = in(reg) b.as_ptr(),
                    o = in(reg) out.as_mut_ptr(),
                    out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                    out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                    options(nostack),
                );
            }
            out
        }
    };
}

#[cfg(target_arch = "x86_64")]
x87_binop!(f80_add, "faddp");
#[cfg(target_arch = "x86_64")]
x87_binop!(f80_mul, "fmulp");

/// Without an x87 unit: computed in `f64` (precision loss, see the module doc).
#[cfg(not(target_arch = "x86_64"))]
fn f80_add(a: F80, b: F80) -> F80 {
    f64_to_f80(f80_to_f64(a) + f80_to_f64(b))
}

#[cfg(not(target_arch = "x86_64"))]
fn f80_mul(a: F80, b: F80) -> F80 {
    f64_to_f80(f80_to_f64(a) * f80_to_f64(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use PredefinedOp as P;

    fn dt(p: Primitive) -> Datatype {
        Datatype::predefined(p)
    }

    /// Applies `op` to typed arrays: returns the new inout.
    fn red<T: Copy>(op: &Op, d: &Datatype, inv: &[T], inout: &[T], count: usize) -> Vec<T> {
        let mut io = inout.to_vec();
        // SAFETY: test buffers are whole arrays of `count` elements of `d`.
        unsafe { op.apply(inv.as_ptr() as *const u8, io.as_mut_ptr() as *mut u8, count, d) }.unwrap();
        io
    }

    fn pre(p: PredefinedOp) -> Op {
        Op::predefined(p)
    }

    #[test]
    fn handles_names_and_cache() {
        for &p in PredefinedOp::ALL {
            assert_eq!(PredefinedOp::from_code(p.code()), Some(p));
            assert_eq!(PredefinedOp::from_name(p.name()), Some(p));
            assert!(p.name().starts_with("MPI_"));
            let op = Op::predefined(p);
            assert_eq!(op.as_predefined(), Some(p));
            assert!(op.is_commutative());
            assert_eq!(op.name(), p.name());
            assert!(Arc::ptr_eq(&op.0, &Op::predefined(p).0), "cached");
        }
        assert_eq!(PredefinedOp::from_code(0), None);
        assert_eq!(PredefinedOp::from_name("MPI_OP_NULL"), None);
        assert_eq!(PredefinedOp::ALL.len(), 14);
    }

    /// The standard's table (plus logical operations on Fortran integers, an
    /// extension), written out independently of `allows`.
    fn expected_allowed(op: PredefinedOp, c: TypeClass) -> bool {
        use TypeClass::*;
        let classes: &[TypeClass] = match op {
            P::Max | P::Min => &[CInteger, FortranInteger, Floating],
            P::Sum | P::Prod => &[CInteger, FortranInteger, Floating, Complex],
            P::Land | P::Lor | P::Lxor => &[CInteger, FortranInteger, Logical, Floating],
            P::Band | P::Bor | P::Bxor => &[CInteger, FortranInteger, Byte],
            P::Maxloc | P::Minloc => &[Pair],
            P::Replace | P::NoOp => &[CInteger, FortranInteger, Floating, Logical, Complex, Byte, Pair, Other],
        };
        classes.contains(&c)
    }

    #[test]
    fn every_op_type_pair_is_checked() {
        for &p in PredefinedOp::ALL {
            for &t in Primitive::ALL {
                let r = Op::predefined(p).check(&dt(t), "MPI_Reduce");
                if expected_allowed(p, t.class()) {
                    assert!(r.is_ok(), "{} on {}: {r:?}", p.name(), t.name());
                } else {
                    let e = r.unwrap_err();
                    assert_eq!(e.class, ErrorClass::Op);
                    assert!(
                        e.message.starts_with("MPI_Reduce: ")
                            && e.message.contains(p.name())
                            && e.message.contains(t.name()),
                        "{}",
                        e.message
                    );
                    // apply refuses too and leaves the buffer alone.
                    let a = [7u8; 64];
                    let mut b = [9u8; 64];
                    // SAFETY: 64 bytes cover one element of every primitive.
                    let r = unsafe { Op::predefined(p).apply(a.as_ptr(), b.as_mut_ptr(), 1, &dt(t)) };
                    assert_eq!(r.unwrap_err().class, ErrorClass::Op);
                    assert_eq!(b, [9u8; 64]);
                }
            }
        }
        let e = pre(P::Band).check(&dt(Primitive::Double), "MPI_Reduce").unwrap_err();
        assert!(
            e.message.starts_with("MPI_Reduce: MPI_BAND is not defined for MPI_DOUBLE (floating point)"),
            "{}",
            e.message
        );
        // User ops accept anything.
        let u = Op::user(Arc::new(|_, _, _, _: &Datatype| {}), false);
        assert!(u.check(&dt(Primitive::Packed), "MPI_Reduce").is_ok());
    }

    macro_rules! int_test {
        ($fname:ident, $t:ty, $samples:expr) => {
            fn $fname(p: Primitive) {
                let d = dt(p);
                let a: Vec<$t> = $samples;
                let mut b: Vec<$t> = a.iter().rev().copied().collect();
                b[0] = <$t>::MAX;
                let n = a.len();
                let logical = |x: $t| x != 0;
                for &op in PredefinedOp::ALL {
                    if !op.allows(p.class()) || matches!(op, P::Replace | P::NoOp) {
                        continue;
                    }
                    let got = red(&pre(op), &d, &a, &b, n);
                    for i in 0..n {
                        let (x, y) = (a[i], b[i]);
                        let want: $t = match op {
                            P::Max => x.max(y),
                            P::Min => x.min(y),
                            P::Sum => x.wrapping_add(y),
                            P::Prod => x.wrapping_mul(y),
                            P::Land => (logical(x) && logical(y)) as $t,
                            P::Lor => (logical(x) || logical(y)) as $t,
                            P::Lxor => (logical(x) != logical(y)) as $t,
                            P::Band => x & y,
                            P::Bor => x | y,
                            P::Bxor => x ^ y,
                            _ => unreachable!(),
                        };
                        assert_eq!(got[i], want, "{} {} on {x} {y}", op.name(), p.name());
                    }
                }
            }
        };
    }

    int_test!(ints_i8, i8, vec![0, 1, -1, 5, i8::MIN, i8::MAX, 3, -100, 100]);
    int_test!(ints_i16, i16, vec![0, 1, -1, 5, i16::MIN, i16::MAX, 300, -30000]);
    int_test!(ints_i32, i32, vec![0, 1, -1, 5, i32::MIN, i32::MAX, 70000, -7, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    int_test!(ints_i64, i64, vec![0, 1, -1, 5, i64::MIN, i64::MAX, 1 << 40, -7]);
    int_test!(ints_u8, u8, vec![0, 1, 255, 5, 128, 200, 3]);
    int_test!(ints_u16, u16, vec![0, 1, u16::MAX, 5, 40000, 3]);
    int_test!(ints_u32, u32, vec![0, 1, u32::MAX, 5, 3_000_000_000, 3]);
    int_test!(ints_u64, u64, vec![0, 1, u64::MAX, 5, 1 << 63, 3]);

    #[test]
    fn integer_ops_on_every_integer_and_byte_type() {
        let mut tested = 0;
        for &p in Primitive::ALL {
            if !matches!(p.class(), TypeClass::CInteger | TypeClass::FortranInteger | TypeClass::Byte) {
                continue;
            }
            tested += 1;
            match p.repr() {
                Repr::I8 => ints_i8(p),
                Repr::I16 => ints_i16(p),
                Repr::I32 => ints_i32(p),
                Repr::I64 => ints_i64(p),
                Repr::U8 => ints_u8(p),
                Repr::U16 => ints_u16(p),
                Repr::U32 => ints_u32(p),
                Repr::U64 => ints_u64(p),
                r => panic!("{}: {r:?}", p.name()),
            }
        }
        assert!(tested >= 25);
        // Spot checks: wrap-around and C logic on MPI_INT.
        let d = dt(Primitive::Int);
        assert_eq!(red(&pre(P::Sum), &d, &[i32::MAX, -5], &[1, -7], 2), vec![i32::MIN, -12]);
        assert_eq!(red(&pre(P::Prod), &d, &[65536], &[65536], 1), vec![0]);
        assert_eq!(red(&pre(P::Land), &d, &[5, 0, -1], &[7, 3, 0], 3), vec![1, 0, 0]);
        assert_eq!(red(&pre(P::Lxor), &d, &[5, 0, -1], &[7, 3, 0], 3), vec![0, 1, 1]);
        let b = dt(Primitive::Byte);
        assert_eq!(red(&pre(P::Bxor), &b, &[0xf0u8, 0xff], &[0x3c, 0x0f], 2), vec![0xcc, 0xf0]);
    }

    fn float_case<T>(p: Primitive, nan: T, vals: [T; 4])
    where
        T: Copy + PartialOrd + std::fmt::Debug + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
    {
        let d = dt(p);
        let [x, y, z, w] = vals;
        let a = vec![x, y, nan, z, w];
        let b = vec![y, x, z, nan, w];
        let max = red(&pre(P::Max), &d, &a, &b, 5);
        let min = red(&pre(P::Min), &d, &a, &b, 5);
        let want = |f: fn(T, T) -> T| (0..5).map(|i| f(a[i], b[i])).collect::<Vec<_>>();
        let sum = red(&pre(P::Sum), &d, &a, &b, 5);
        let prod = red(&pre(P::Prod), &d, &a, &b, 5);
        for i in [0, 1, 4] {
            assert_eq!(max[i], if a[i] > b[i] { a[i] } else { b[i] }, "{}", p.name());
            assert_eq!(min[i], if a[i] < b[i] { a[i] } else { b[i] }, "{}", p.name());
            assert_eq!(sum[i], want(|u, v| u + v)[i]);
            assert_eq!(prod[i], want(|u, v| u * v)[i]);
        }
        // NaN in invec never replaces; NaN in inoutvec stays (C `in > io ? in : io`).
        assert_eq!(max[2], z);
        assert_eq!(min[2], z);
        let nan = |x: T| x.partial_cmp(&x).is_none();
        assert!(nan(max[3]) && nan(min[3]), "NaN in inout is kept");
        assert!(nan(sum[2]) && nan(sum[3]));
    }

    #[test]
    fn floating_point_ops() {
        for &p in Primitive::ALL {
            match (p.class(), p.repr()) {
                (TypeClass::Floating, Repr::F32) => float_case::<f32>(p, f32::NAN, [1.5, -2.25, 3.0e30, -0.0]),
                (TypeClass::Floating, Repr::F64) => float_case::<f64>(p, f64::NAN, [1.5, -2.25, 1e300, -0.0]),
                _ => {}
            }
        }
        let d = dt(Primitive::Double);
        assert_eq!(red(&pre(P::Max), &d, &[-0.0f64], &[0.0], 1)[0].to_bits(), 0.0f64.to_bits());
        assert_eq!(red(&pre(P::Sum), &d, &[0.1f64, 1e16], &[0.2, 1.0], 2), vec![0.1 + 0.2, 1e16 + 1.0]);
    }

    #[test]
    fn large_arrays_aligned_and_unaligned() {
        let n = 1000;
        let a: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        let b: Vec<f64> = (0..n).map(|i| (n - i) as f64).collect();
        let d = dt(Primitive::Double);
        let got = red(&pre(P::Sum), &d, &a, &b, n);
        assert!((0..n).all(|i| got[i] == a[i] + b[i]));
        // Unaligned: the same values one byte into byte buffers.
        let mut ab = vec![0u8; n * 8 + 1];
        let mut bb = vec![0u8; n * 8 + 1];
        for i in 0..n {
            ab[1 + 8 * i..9 + 8 * i].copy_from_slice(&a[i].to_ne_bytes());
            bb[1 + 8 * i..9 + 8 * i].copy_from_slice(&b[i].to_ne_bytes());
        }
        // SAFETY: n doubles fit at offset 1 of both buffers.
        unsafe { pre(P::Max).apply(ab.as_ptr().add(1), bb.as_mut_ptr().add(1), n, &d) }.unwrap();
        for i in 0..n {
            let v = f64::from_ne_bytes(bb[1 + 8 * i..9 + 8 * i].try_into().unwrap());
            assert_eq!(v, a[i].max(b[i]));
        }
        assert_eq!(bb[0], 0);
        let ai: Vec<i32> = (0..n as i32).collect();
        assert_eq!(red(&pre(P::Sum), &dt(Primitive::Int), &ai, &ai, n), (0..n as i32).map(|i| 2 * i).collect::<Vec<_>>());
    }

    #[test]
    fn complex_sum_and_prod() {
        let d = dt(Primitive::CDoubleComplex);
        let a = [[1.0f64, 2.0], [0.5, -1.0]];
        let b = [[3.0f64, -4.0], [2.0, 2.0]];
        assert_eq!(red(&pre(P::Sum), &d, &a, &b, 2), vec![[4.0, -2.0], [2.5, 1.0]]);
        // (1+2i)(3-4i) = 11 + 2i; (0.5-i)(2+2i) = 3 - i
        assert_eq!(red(&pre(P::Prod), &d, &a, &b, 2), vec![[11.0, 2.0], [3.0, -1.0]]);
        for &p in Primitive::ALL {
            if p.repr() == Repr::Complex32 {
                let a = [[1.0f32, 2.0]];
                let b = [[3.0f32, -4.0]];
                assert_eq!(red(&pre(P::Prod), &dt(p), &a, &b, 1), vec![[11.0, 2.0]], "{}", p.name());
                assert_eq!(red(&pre(P::Sum), &dt(p), &a, &b, 1), vec![[4.0, -2.0]], "{}", p.name());
            }
        }
    }

    /// A long double in its 16-byte slot, padding filled with `pad`.
    fn ld(v: F80, pad: u8) -> [u8; 16] {
        let mut x = [pad; 16];
        x[..10].copy_from_slice(&v);
        x
    }

    fn f80(v: f64) -> F80 {
        f64_to_f80(v)
    }

    #[test]
    fn f80_conversions_and_comparison() {
        for v in [0.0, -0.0, 1.0, -2.5, 1e300, -1e-300, 5e-324, f64::MAX, f64::INFINITY, f64::NEG_INFINITY] {
            let x = f64_to_f80(v);
            assert_eq!(f80_to_f64(x).to_bits(), v.to_bits(), "{v}");
        }
        assert!(f80_to_f64(f64_to_f80(f64::NAN)).is_nan());
        assert_eq!(f80(1.0), f80_from_parts(false, 16383, 1 << 63));
        let vals = [f64::NEG_INFINITY, -1e300, -1.0, -5e-324, 0.0, 5e-324, 1.0, 1.5, 1e300, f64::INFINITY];
        for (i, &u) in vals.iter().enumerate() {
            for (j, &v) in vals.iter().enumerate() {
                assert_eq!(f80_cmp(f80(u), f80(v)), Some(i.cmp(&j)), "{u} {v}");
            }
        }
        assert_eq!(f80_cmp(f80(0.0), f80(-0.0)), Some(Ordering::Equal));
        assert_eq!(f80_cmp(f80(f64::NAN), f80(1.0)), None);
        // Differences below f64 precision are seen.
        let big = f80_from_parts(false, 16383 + 63, 1 << 63);
        let big1 = f80_from_parts(false, 16383 + 63, (1 << 63) | 1);
        assert_eq!(f80_cmp(big1, big), Some(Ordering::Greater));
        assert_eq!(f80_cmp(f80_neg(big1), f80_neg(big)), Some(Ordering::Less));
    }

    #[test]
    fn long_double_ops() {
        let d = dt(Primitive::LongDouble);
        let big = f80_from_parts(false, 16383 + 63, 1 << 63); // 2^63
        let big1 = f80_from_parts(false, 16383 + 63, (1 << 63) | 1); // 2^63 + 1
        let a = [ld(big1, 0xaa), ld(f80(-3.0), 0xaa), ld(f80(2.0), 0xaa)];
        let b = [ld(big, 0x55), ld(f80(2.5), 0x55), ld(f80(f64::NAN), 0x55)];
        let max = red(&pre(P::Max), &d, &a, &b, 3);
        assert_eq!(max[0], ld(big1, 0x55), "exact max, padding untouched");
        assert_eq!(max[1], ld(f80(2.5), 0x55));
        assert!(f80_is_nan(max[2][..10].try_into().unwrap()));
        let min = red(&pre(P::Min), &d, &a, &b, 3);
        assert_eq!(min[0], ld(big, 0x55));
        assert_eq!(min[1], ld(f80(-3.0), 0x55));
        let s = red(&pre(P::Sum), &d, &[ld(big, 0), ld(f80(1.5), 0)], &[ld(f80(1.0), 0), ld(f80(-4.0), 0)], 2);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(s[0], ld(big1, 0), "x87 sum is exact: 2^63 + 1");
        assert_eq!(s[1], ld(f80(-2.5), 0));
        let p = red(&pre(P::Prod), &d, &[ld(f80(1.5), 0)], &[ld(f80(-4.0), 0)], 1);
        assert_eq!(p[0], ld(f80(-6.0), 0));
        // Complex long double: (1+2i)(3-4i) = 11 + 2i.
        let c = |re: f64, im: f64| {
            let mut x = [0u8; 32];
            x[..16].copy_from_slice(&ld(f80(re), 0));
            x[16..].copy_from_slice(&ld(f80(im), 0));
            x
        };
        let cd = dt(Primitive::CLongDoubleComplex);
        assert_eq!(red(&pre(P::Prod), &cd, &[c(1.0, 2.0)], &[c(3.0, -4.0)], 1), vec![c(11.0, 2.0)]);
        assert_eq!(red(&pre(P::Sum), &cd, &[c(1.0, 2.0)], &[c(3.0, -4.0)], 1), vec![c(4.0, -2.0)]);
    }

    #[test]
    fn logical_ops_on_bool_and_fortran_logical() {
        let ins = [0u64, 0, 1, 1, 2, 0xff, 0];
        let ios = [0u64, 1, 0, 1, 0x80, 3, 0x100];
        let truth = |x: u64, w: usize| x & (u64::MAX >> (64 - 8 * w)) != 0;
        for &p in Primitive::ALL {
            if p.class() != TypeClass::Logical {
                continue;
            }
            let w = p.size();
            let enc = |v: &[u64]| v.iter().flat_map(|x| x.to_le_bytes()[..w].to_vec()).collect::<Vec<u8>>();
            for op in [P::Land, P::Lor, P::Lxor] {
                let got = red(&pre(op), &dt(p), &enc(&ins), &enc(&ios), ins.len());
                let want: Vec<u64> = ins
                    .iter()
                    .zip(&ios)
                    .map(|(&x, &y)| {
                        let (x, y) = (truth(x, w), truth(y, w));
                        (match op {
                            P::Land => x && y,
                            P::Lor => x || y,
                            _ => x != y,
                        }) as u64
                    })
                    .collect();
                assert_eq!(got, enc(&want), "{} on {}", op.name(), p.name());
            }
            for op in [P::Max, P::Sum, P::Band] {
                assert_eq!(pre(op).check(&dt(p), "MPI_Allreduce").unwrap_err().class, ErrorClass::Op);
            }
        }
        let b = dt(Primitive::CBool);
        assert_eq!(red(&pre(P::Lor), &b, &[0u8, 0, 7], &[0u8, 9, 0], 3), vec![0, 1, 1]);
    }

    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct VI<V, I> {
        v: V,
        i: I,
    }

    fn vi<V, I>(v: V, i: I) -> VI<V, I> {
        VI { v, i }
    }

    /// Reduces `rows` (one per "rank") in rank order, as a reduce would.
    fn loc_reduce<V: Copy, I: Copy>(op: PredefinedOp, p: Primitive, rows: &[Vec<VI<V, I>>]) -> Vec<VI<V, I>> {
        assert_eq!(size_of::<VI<V, I>>(), p.extent(), "{}", p.name());
        let mut acc = rows[rows.len() - 1].clone();
        for r in rows[..rows.len() - 1].iter().rev() {
            acc = red(&pre(op), &dt(p), r, &acc, r.len());
        }
        acc
    }

    fn loc_case<V, I>(p: Primitive, vals: [[V; 3]; 3], idx: impl Fn(usize) -> I)
    where
        V: Copy + PartialOrd + std::fmt::Debug,
        I: Copy + PartialOrd + std::fmt::Debug,
    {
        // rows[rank][j] = (vals[rank][j], rank)
        let rows: Vec<Vec<VI<V, I>>> = (0..3).map(|r| (0..3).map(|j| vi(vals[r][j], idx(r))).collect()).collect();
        for op in [P::Maxloc, P::Minloc] {
            let got = loc_reduce(op, p, &rows);
            for j in 0..3 {
                // The extreme value; among equal values the lowest index.
                let mut best = 0;
                for r in 1..3 {
                    let tie = vals[r][j] == vals[best][j] && idx(r) < idx(best);
                    let better = tie
                        || match op {
                            P::Maxloc => vals[r][j] > vals[best][j],
                            _ => vals[r][j] < vals[best][j],
                        };
                    if better {
                        best = r;
                    }
                }
                assert_eq!(got[j].v, vals[best][j], "{} {} col {j}", op.name(), p.name());
                assert_eq!(got[j].i, idx(best), "{} {} col {j}", op.name(), p.name());
            }
            // Commutative: the other order gives the same.
            let rev: Vec<_> = rows.iter().rev().cloned().collect();
            let got2 = loc_reduce(op, p, &rev);
            assert_eq!(
                got2.iter().map(|x| (x.v, x.i)).collect::<Vec<_>>(),
                got.iter().map(|x| (x.v, x.i)).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn maxloc_minloc_on_all_pairs() {
        loc_case::<f32, i32>(Primitive::FloatInt, [[1.0, 5.0, -2.0], [3.0, 5.0, -2.0], [3.0, 1.0, -7.0]], |r| r as i32);
        loc_case::<f64, i32>(Primitive::DoubleInt, [[1.0, 5.0, 2.0], [3.0, 5.0, 2.0], [3.0, 1.0, 2.0]], |r| r as i32);
        loc_case::<i64, i32>(Primitive::LongInt, [[i64::MIN, 5, 9], [3, 5, 9], [i64::MAX, 1, 9]], |r| r as i32);
        loc_case::<i32, i32>(Primitive::TwoInt, [[1, -5, 0], [-3, -5, 0], [1, 8, -1]], |r| 10 - r as i32 * 4);
        loc_case::<f32, f32>(Primitive::TwoReal, [[1.0, 5.0, 2.0], [3.0, 5.0, 2.0], [3.0, 1.0, 2.0]], |r| r as f32);
        loc_case::<f64, f64>(Primitive::TwoDoublePrecision, [[1.0, 5.0, 2.0], [3.0, 5.0, 0.0], [3.0, 1.0, 2.0]], |r| r as f64);
        loc_case::<i32, i32>(Primitive::TwoInteger, [[1, 5, 2], [3, 5, 2], [3, 1, 2]], |r| r as i32);
        loc_case::<i16, i32>(Primitive::ShortInt, [[1, 5, 2], [3, 5, 2], [i16::MIN, 1, 2]], |r| r as i32 + 100);
        // The lower index wins a tie even if it comes from invec or inoutvec.
        let d = dt(Primitive::DoubleInt);
        assert_eq!(red(&pre(P::Maxloc), &d, &[vi(2.0f64, 7i32)], &[vi(2.0, 3)], 1), vec![vi(2.0, 3)]);
        assert_eq!(red(&pre(P::Maxloc), &d, &[vi(2.0f64, 3i32)], &[vi(2.0, 7)], 1), vec![vi(2.0, 3)]);
        assert_eq!(red(&pre(P::Minloc), &d, &[vi(1.0f64, 9i32)], &[vi(2.0, 3)], 1), vec![vi(1.0, 9)]);
        // NaN: the inoutvec pair is kept.
        let r = red(&pre(P::Maxloc), &d, &[vi(f64::NAN, 0i32)], &[vi(1.0, 4)], 1);
        assert_eq!(r, vec![vi(1.0, 4)]);
    }

    #[test]
    fn maxloc_padding_and_long_double_int() {
        // MPI_SHORT_INT: value at 0, 2 padding bytes, index at 4; MPI_DOUBLE_INT: 4 trailing.
        let d = dt(Primitive::ShortInt);
        let mut a = [0xeeu8; 8];
        a[..2].copy_from_slice(&9i16.to_ne_bytes());
        a[4..].copy_from_slice(&5i32.to_ne_bytes());
        let mut b = [0x11u8; 8];
        b[..2].copy_from_slice(&1i16.to_ne_bytes());
        b[4..].copy_from_slice(&2i32.to_ne_bytes());
        let r = red(&pre(P::Maxloc), &d, &a, &b, 1);
        assert_eq!(&r[..2], &9i16.to_ne_bytes());
        assert_eq!(&r[2..4], &[0x11, 0x11]);
        assert_eq!(&r[4..], &5i32.to_ne_bytes());
        // MPI_LONG_DOUBLE_INT: 16-byte value, index at 16, extent 32.
        let ldi = |v: F80, i: i32| {
            let mut x = [0x33u8; 32];
            x[..10].copy_from_slice(&v);
            x[16..20].copy_from_slice(&i.to_ne_bytes());
            x
        };
        let big = f80_from_parts(false, 16383 + 63, 1 << 63);
        let big1 = f80_from_parts(false, 16383 + 63, (1 << 63) | 1);
        let d = dt(Primitive::LongDoubleInt);
        let a = [ldi(big1, 4), ldi(f80(1.0), 6)];
        let b = [ldi(big, 1), ldi(f80(1.0), 2)];
        assert_eq!(red(&pre(P::Maxloc), &d, &a, &b, 2), vec![ldi(big1, 4), ldi(f80(1.0), 2)]);
        assert_eq!(red(&pre(P::Minloc), &d, &a, &b, 2), vec![ldi(big, 1), ldi(f80(1.0), 2)]);
    }

    #[test]
    fn example_4_18_global_minloc() {
        // Each "rank" has a local minimum and the index rank*LEN + local index.
        const LEN: i32 = 1000;
        let locals = [(3.5f32, 17), (-1.0, 999), (-1.0, 2), (0.0, 0)];
        let rows: Vec<Vec<VI<f32, i32>>> =
            locals.iter().enumerate().map(|(r, &(v, i))| vec![vi(v, r as i32 * LEN + i)]).collect();
        let out = loc_reduce(P::Minloc, Primitive::FloatInt, &rows)[0];
        assert_eq!(out.v, -1.0);
        assert_eq!((out.i / LEN, out.i % LEN), (1, 999));
    }

    #[test]
    fn user_op_non_commutative_matrix_product() {
        // inout = in * inout for 2x2 row-major matrices of doubles.
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let c2 = calls.clone();
        let f: Arc<UserFunction> = Arc::new(move |inv: *const u8, inout: *mut u8, n: usize, d: &Datatype| {
            assert_eq!(d.extent(), 32);
            c2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            for k in 0..n {
                // SAFETY: the engine passes `n` elements of 4 doubles.
                let (a, b) = unsafe {
                    (
                        (inv as *const [f64; 4]).add(k).read_unaligned(),
                        &mut *(inout as *mut [f64; 4]).add(k),
                    )
                };
                let m = [
                    a[0] * b[0] + a[1] * b[2],
                    a[0] * b[1] + a[1] * b[3],
                    a[2] * b[0] + a[3] * b[2],
                    a[2] * b[1] + a[3] * b[3],
                ];
                *b = m;
            }
        });
        let op = Op::user(f, false);
        assert!(!op.is_commutative() && op.as_predefined().is_none());
        assert!(format!("{op:?}").contains("non-commutative"));
        let mat = Datatype::contiguous(4, &dt(Primitive::Double)).unwrap();
        let a = [[1.0f64, 2.0, 3.0, 4.0], [0.0, 1.0, 1.0, 0.0]];
        let b = [[5.0f64, 6.0, 7.0, 8.0], [2.0, 0.0, 0.0, 3.0]];
        let got = red(&op, &mat, &a, &b, 2);
        assert_eq!(got[0], [19.0, 22.0, 43.0, 50.0], "A*B, not B*A = [23, 34, 31, 46]");
        assert_eq!(got[1], [0.0, 3.0, 2.0, 0.0]);
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 1, "one call for the whole count");
        assert!(Op::user(Arc::new(|_, _, _, _: &Datatype| {}), true).is_commutative());
    }

    #[test]
    fn derived_vector_with_gaps() {
        // vector(3 blocks of 2 ints, stride 3): ints 0,1 3,4 6,7 of each element; 2,5 are gaps.
        let v = Datatype::vector(3, 2, 3, &dt(Primitive::Int)).unwrap();
        assert_eq!(v.single_primitive(), Some(Primitive::Int));
        let ext = v.extent() as usize / 4;
        assert_eq!(ext, 8);
        let count = 2;
        let a: Vec<i32> = (0..(ext * count) as i32).map(|i| i * 10).collect();
        let b: Vec<i32> = vec![-1; ext * count];
        let got = red(&pre(P::Sum), &v, &a, &b, count);
        for e in 0..count {
            for k in 0..ext {
                let i = e * ext + k;
                if k % 3 == 2 {
                    assert_eq!(got[i], -1, "gap {i} untouched");
                } else {
                    assert_eq!(got[i], a[i] - 1, "data {i}");
                }
            }
        }
        let e = pre(P::Band).check(&Datatype::vector(2, 1, 2, &dt(Primitive::Float)).unwrap(), "MPI_Allreduce");
        let e = e.unwrap_err();
        assert_eq!(e.class, ErrorClass::Op);
        assert!(e.message.contains("MPI_BAND") && e.message.contains("MPI_FLOAT"), "{}", e.message);
        // A dense derived type (contiguous) goes through one run.
        let c = Datatype::contiguous(3, &dt(Primitive::Double)).unwrap();
        let got = red(&pre(P::Max), &c, &[1.0f64, 5.0, 3.0, 4.0, 0.0, 9.0], &[2.0, 2.0, 2.0, 2.0, 2.0, 2.0], 2);
        assert_eq!(got, vec![2.0, 5.0, 3.0, 4.0, 2.0, 9.0]);
    }

    #[test]
    fn derived_pairs_and_mixed_types() {
        // contiguous(2, MPI_DOUBLE_INT): blocks (0,12),(16,12).
        let c = Datatype::contiguous(2, &dt(Primitive::DoubleInt)).unwrap();
        assert_eq!(c.single_primitive(), Some(Primitive::DoubleInt));
        let a = [vi(1.0f64, 0i32), vi(9.0, 0)];
        let b = [vi(3.0f64, 1i32), vi(9.0, 1)];
        assert_eq!(red(&pre(P::Maxloc), &c, &a, &b, 1), vec![vi(3.0, 1), vi(9.0, 0)]);
        // dup(MPI_SHORT_INT): value and index in separate blocks.
        let s = Datatype::dup(&dt(Primitive::ShortInt));
        let a = [vi(4i16, 8i32), vi(-2, 8)];
        let b = [vi(4i16, 3i32), vi(7, 3)];
        assert_eq!(red(&pre(P::Minloc), &s, &a, &b, 2), vec![vi(4, 3), vi(-2, 8)]);
        // vector of MPI_SHORT_INT with a gap element.
        let v = Datatype::vector(2, 1, 2, &dt(Primitive::ShortInt)).unwrap();
        let a = [vi(4i16, 8i32), vi(100, 100), vi(9, 1)];
        let b = [vi(5i16, 3i32), vi(-1, -1), vi(9, 0)];
        assert_eq!(red(&pre(P::Minloc), &v, &a, &b, 1), vec![vi(4, 8), vi(-1, -1), vi(9, 0)]);
        // A struct of an int and a double: no predefined op but REPLACE/NO_OP.
        let st = Datatype::structure(&[1, 1], &[0, 8], &[dt(Primitive::Int), dt(Primitive::Double)]).unwrap();
        assert_eq!(st.single_primitive(), None);
        let e = pre(P::Sum).check(&st, "MPI_Reduce").unwrap_err();
        assert_eq!(e.class, ErrorClass::Op);
        assert!(e.message.contains("MPI_SUM") && e.message.contains("derived datatype"), "{}", e.message);
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq)]
        struct S {
            i: i32,
            pad: i32,
            d: f64,
        }
        let a = [S { i: 1, pad: 7, d: 2.0 }];
        let b = [S { i: 5, pad: 9, d: 6.0 }];
        assert_eq!(red(&pre(P::Replace), &st, &a, &b, 1), vec![S { i: 1, pad: 9, d: 2.0 }]);
        assert_eq!(red(&pre(P::NoOp), &st, &a, &b, 1), b.to_vec());
        assert_eq!(red(&pre(P::Replace), &dt(Primitive::Double), &[1.0f64, 2.0], &[3.0, 4.0], 2), vec![1.0, 2.0]);
    }

    #[test]
    fn plan_walks_blocks_by_data_stream() {
        // Two MPI_SHORT_INT at stride 8 merged by the flattener: (0,2),(4,6),(12,4).
        let p = plan(Primitive::ShortInt, &[(0, 2), (4, 6), (12, 4)], 16).unwrap();
        assert_eq!(p, Plan { runs: vec![(0, 1), (8, 1)], dense: None });
        let p = plan(Primitive::Int, &[(0, 8), (12, 8)], 24).unwrap();
        assert_eq!(p, Plan { runs: vec![(0, 2), (12, 2)], dense: None });
        let p = plan(Primitive::Int, &[(0, 8), (8, 4)], 12).unwrap();
        assert_eq!(p, Plan { runs: vec![(0, 3)], dense: Some(3) });
        assert!(plan(Primitive::Int, &[(0, 6)], 8).is_err());
        // Zero count touches nothing.
        let mut b = [1i32];
        // SAFETY: count 0 reads and writes nothing.
        unsafe { pre(P::Sum).apply(ptr::null(), b.as_mut_ptr() as *mut u8, 0, &dt(Primitive::Int)) }.unwrap();
        assert_eq!(b, [1]);
    }

    #[test]
    fn logical_operations_on_floating_point() {
        let f = Datatype::predefined(Primitive::Float);
        let d = Datatype::predefined(Primitive::Double);
        let inv = [0.0f32, 2.5, -0.0, f32::NAN, 0.0];
        let io = [0.0f32, 0.0, 3.0, 1.0, -7.0];
        assert_eq!(red(&pre(P::Land), &f, &inv, &io, 5), vec![0.0, 0.0, 0.0, 1.0, 0.0]);
        assert_eq!(red(&pre(P::Lor), &f, &inv, &io, 5), vec![0.0, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!(red(&pre(P::Lxor), &f, &inv, &io, 5), vec![0.0, 1.0, 1.0, 0.0, 1.0]);
        let inv = [1e-300f64, 0.0, -4.0];
        let io = [2.0f64, 0.0, 0.0];
        assert_eq!(red(&pre(P::Land), &d, &inv, &io, 3), vec![1.0, 0.0, 0.0]);
        assert_eq!(red(&pre(P::Lor), &d, &inv, &io, 3), vec![1.0, 0.0, 1.0]);
        assert_eq!(red(&pre(P::Lxor), &d, &inv, &io, 3), vec![0.0, 0.0, 1.0]);
        // Fortran REAL and DOUBLE PRECISION, and long double.
        for p in [Primitive::Real, Primitive::DoublePrecision, Primitive::Real4, Primitive::Real8] {
            assert!(pre(P::Lor).check(&Datatype::predefined(p), "MPI_Allreduce").is_ok(), "{p:?}");
        }
        let ld = Datatype::predefined(Primitive::LongDouble);
        let mut a = [0u8; 48];
        let mut b = [0u8; 48];
        a[..10].copy_from_slice(&f64_to_f80(2.0));
        a[16..26].copy_from_slice(&f64_to_f80(0.0));
        a[32..42].copy_from_slice(&f64_to_f80(-0.0));
        b[..10].copy_from_slice(&f64_to_f80(3.0));
        b[16..26].copy_from_slice(&f64_to_f80(5.0));
        b[32..42].copy_from_slice(&f64_to_f80(0.0));
        let land = red(&pre(P::Land), &ld, &a, &b, 3);
        let lor = red(&pre(P::Lor), &ld, &a, &b, 3);
        let at = |v: &[u8], i: usize| f80_to_f64(v[i * 16..i * 16 + 10].try_into().unwrap());
        assert_eq!((at(&land, 0), at(&land, 1), at(&land, 2)), (1.0, 0.0, 0.0));
        assert_eq!((at(&lor, 0), at(&lor, 1), at(&lor, 2)), (1.0, 1.0, 0.0));
        // Combinations MPICH rejects stay MPI_ERR_OP: logical on complex, bitwise on floats.
        let e = pre(P::Land).check(&Datatype::predefined(Primitive::CDoubleComplex), "MPI_Allreduce").unwrap_err();
        assert_eq!(e.class, ErrorClass::Op);
        assert_eq!(pre(P::Band).check(&f, "MPI_Allreduce").unwrap_err().class, ErrorClass::Op);
        assert_eq!(pre(P::Lxor).check(&Datatype::predefined(Primitive::DoubleInt), "MPI_Allreduce").unwrap_err().class, ErrorClass::Op);
    }
}
