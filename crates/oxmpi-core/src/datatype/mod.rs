//! Datatypes: predefined element types and derived datatypes.
//!
//! A [`Datatype`] is immutable once constructed (except for its commit flag
//! and its name). Every constructor flattens the type map of one element at
//! construction time into:
//!
//! - `blocks`: the (byte offset, byte length) runs of data of one element, in
//!   type-map order, as a [`Blocks`] tree: a flat list (adjacent runs merged,
//!   with prefix sums of the lengths so that a packed-stream position can be
//!   located by binary search) where that is small, and, for a regular
//!   repetition of many blocks (a vector of 2^31 elements, a large-count
//!   contiguous of a strided type), the repetition itself (count, stride,
//!   child), so no constructor materialises more blocks than its arguments
//!   name;
//! - `signature`: the run-length type signature of one element, long
//!   repetitions of a mixed signature kept by structure as the blocks are
//!   (see [`signature`]);
//! - the bounds: `lb`/`ub` (with "sticky" flags for bounds set explicitly by
//!   `MPI_LB`/`MPI_UB` markers or `MPI_Type_create_resized`), the true bounds
//!   of the data, and the alignment used for the struct "epsilon" padding.
//!
//! Bound rules (MPI-1 type maps with markers, as MPICH implements them):
//! a replicated child contributes `disp + k*extent + child.lb` / `+ child.ub`;
//! when any contribution is sticky the result's bound is the min (max) of the
//! sticky ones only, and is sticky itself. `MPI_Type_create_struct` pads the
//! upper bound to the largest alignment of its components unless one of the
//! bounds is sticky. Children without data and without markers (zero counts)
//! contribute nothing.

pub mod external32;
pub mod pack;
pub mod primitive;
pub mod sigcheck;
mod signature;

#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{ErrorClass, MpiError, Result};

pub use pack::{pack_into, pack_size, unpack_from};
pub use primitive::{PairValue, Primitive, Repr, TypeClass};

/// Signatures with more runs than this (kept by structure, see
/// [`signature`]) are not fingerprinted for the signature check
/// ([`sigcheck`]): finding the period would list every run.
const MAX_CHECKED_RUNS: usize = 1 << 22;

/// A repetition of a child's blocks is flattened into its parent's list when
/// it yields at most this many blocks; beyond, it is kept as a [`Blocks::Rep`].
const FLAT_LIMIT: usize = 4096;

/// The data blocks of one element (byte offset from the element's origin,
/// byte length), in type-map order, as a tree.
#[derive(Debug)]
pub(crate) enum Blocks {
    /// Blocks one after another; `prefix[i]` = sum of the lengths of `list[..i]`.
    Flat { list: Vec<(isize, usize)>, prefix: Vec<usize> },
    /// `count` copies of `child` (whose one copy holds `child_size` bytes),
    /// copy k shifted by `disp + k * stride` bytes.
    Rep { disp: isize, count: usize, stride: isize, child_size: usize, child: Arc<Blocks> },
    /// Parts one after another; `prefix[i]` = bytes in `parts[..i]`.
    Seq { parts: Vec<Blocks>, prefix: Vec<usize> },
}

impl Blocks {
    fn flat(list: Vec<(isize, usize)>) -> Blocks {
        let prefix = prefix_sums(&list);
        Blocks::Flat { list, prefix }
    }

    /// Bytes of data in one copy.
    pub(crate) fn size(&self) -> usize {
        match self {
            Blocks::Flat { prefix, .. } | Blocks::Seq { prefix, .. } => *prefix.last().unwrap_or(&0),
            Blocks::Rep { count, child_size, .. } => count * child_size,
        }
    }

    /// Number of blocks (saturating).
    pub(crate) fn count(&self) -> usize {
        match self {
            Blocks::Flat { list, .. } => list.len(),
            Blocks::Rep { count, child, .. } => count.saturating_mul(child.count()),
            Blocks::Seq { parts, .. } => parts.iter().fold(0usize, |a, p| a.saturating_add(p.count())),
        }
    }

    /// The one block, if there is exactly one.
    fn single(&self) -> Option<(isize, usize)> {
        match self {
            Blocks::Flat { list, .. } if list.len() == 1 => Some(list[0]),
            _ => None,
        }
    }

    /// Calls `f(offset, len)` for every block, in order, shifted by `base`
    /// (wrapping: a caller adds absolute addresses).
    pub(crate) fn for_each(&self, base: isize, f: &mut dyn FnMut(isize, usize)) {
        match self {
            Blocks::Flat { list, .. } => {
                for &(o, l) in list {
                    f(base.wrapping_add(o), l);
                }
            }
            Blocks::Rep { disp, count, stride, child, .. } => {
                let b = base.wrapping_add(*disp);
                for k in 0..*count {
                    child.for_each(b.wrapping_add((k as isize).wrapping_mul(*stride)), f);
                }
            }
            Blocks::Seq { parts, .. } => {
                for p in parts {
                    p.for_each(base, f);
                }
            }
        }
    }

    /// Calls `f(memory offset, at, len)` for the pieces of the bytes
    /// `[r, r + n)` of one copy's packed stream (`r + n <= size()`), the copy
    /// shifted by `base`; `at` counts the bytes emitted so far.
    fn walk(&self, base: isize, r: usize, n: usize, at: &mut usize, f: &mut dyn FnMut(isize, usize, usize)) {
        let mut left = n;
        match self {
            Blocks::Flat { list, prefix } => {
                let mut bi = prefix.partition_point(|&p| p <= r) - 1;
                let mut within = r - prefix[bi];
                while left > 0 {
                    let (off, len) = list[bi];
                    let take = (len - within).min(left);
                    f(base.wrapping_add(off).wrapping_add(within as isize), *at, take);
                    *at += take;
                    left -= take;
                    within = 0;
                    bi += 1;
                }
            }
            Blocks::Rep { disp, stride, child_size, child, .. } => {
                let cs = *child_size;
                let (mut k, mut within) = (r / cs, r % cs);
                let b = base.wrapping_add(*disp);
                while left > 0 {
                    let take = (cs - within).min(left);
                    child.walk(b.wrapping_add((k as isize).wrapping_mul(*stride)), within, take, at, f);
                    left -= take;
                    within = 0;
                    k += 1;
                }
            }
            Blocks::Seq { parts, prefix } => {
                let mut pi = prefix.partition_point(|&p| p <= r) - 1;
                let mut within = r - prefix[pi];
                while left > 0 {
                    let take = (prefix[pi + 1] - prefix[pi] - within).min(left);
                    parts[pi].walk(base, within, take, at, f);
                    left -= take;
                    within = 0;
                    pi += 1;
                }
            }
        }
    }

    /// The blocks as one list (adjacent blocks merged).
    fn to_vec(&self) -> Vec<(isize, usize)> {
        let mut v = Vec::new();
        self.for_each(0, &mut |o, l| push_merged(&mut v, o, l));
        v
    }
}

/// How a datatype was constructed (`MPI_COMBINER_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Combiner {
    Named,
    Dup,
    Contiguous,
    Vector,
    Hvector,
    Indexed,
    Hindexed,
    IndexedBlock,
    HindexedBlock,
    Struct,
    Subarray,
    Darray,
    Resized,
    /// `MPI_Type_create_f90_integer`: a predefined type named by its range.
    F90Integer,
    /// `MPI_Type_create_f90_real`: named by precision and range.
    F90Real,
    /// `MPI_Type_create_f90_complex`: named by precision and range.
    F90Complex,
}

impl Combiner {
    /// Every combiner.
    pub const ALL: &'static [Combiner] = &[
        Combiner::Named,
        Combiner::Dup,
        Combiner::Contiguous,
        Combiner::Vector,
        Combiner::Hvector,
        Combiner::Indexed,
        Combiner::Hindexed,
        Combiner::IndexedBlock,
        Combiner::HindexedBlock,
        Combiner::Struct,
        Combiner::Subarray,
        Combiner::Darray,
        Combiner::Resized,
        Combiner::F90Integer,
        Combiner::F90Real,
        Combiner::F90Complex,
    ];

    /// The C name, e.g. `MPI_COMBINER_VECTOR` (the C library gives the standard ABI's
    /// value by this name, from abi.txt).
    pub const fn name(self) -> &'static str {
        match self {
            Combiner::Named => "MPI_COMBINER_NAMED",
            Combiner::Dup => "MPI_COMBINER_DUP",
            Combiner::Contiguous => "MPI_COMBINER_CONTIGUOUS",
            Combiner::Vector => "MPI_COMBINER_VECTOR",
            Combiner::Hvector => "MPI_COMBINER_HVECTOR",
            Combiner::Indexed => "MPI_COMBINER_INDEXED",
            Combiner::Hindexed => "MPI_COMBINER_HINDEXED",
            Combiner::IndexedBlock => "MPI_COMBINER_INDEXED_BLOCK",
            Combiner::HindexedBlock => "MPI_COMBINER_HINDEXED_BLOCK",
            Combiner::Struct => "MPI_COMBINER_STRUCT",
            Combiner::Subarray => "MPI_COMBINER_SUBARRAY",
            Combiner::Darray => "MPI_COMBINER_DARRAY",
            Combiner::Resized => "MPI_COMBINER_RESIZED",
            Combiner::F90Integer => "MPI_COMBINER_F90_INTEGER",
            Combiner::F90Real => "MPI_COMBINER_F90_REAL",
            Combiner::F90Complex => "MPI_COMBINER_F90_COMPLEX",
        }
    }
}

/// The flattened layout of one element.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub(crate) size: usize,
    pub(crate) lb: isize,
    pub(crate) ub: isize,
    pub(crate) sticky_lb: bool,
    pub(crate) sticky_ub: bool,
    pub(crate) true_lb: isize,
    pub(crate) true_ub: isize,
    pub(crate) align: usize,
    pub(crate) blocks: Arc<Blocks>,
    pub(crate) sig: Arc<signature::Sig>,
    /// Basic elements in one element (a pair type counts as two).
    pub(crate) nbasic: usize,
}

impl Layout {
    fn extent(&self) -> isize {
        self.ub.wrapping_sub(self.lb)
    }

    /// True when consecutive copies of this element form one gapless run.
    fn dense(&self) -> bool {
        self.blocks.single().is_some_and(|b| self.extent() == b.1 as isize)
    }

    fn primitive(p: Primitive) -> Layout {
        let mut blocks = Vec::new();
        match p.repr() {
            Repr::Pair {
                value,
                index_offset,
            } => {
                let vs = pair_value_size(value);
                push_merged(&mut blocks, 0, vs);
                push_merged(&mut blocks, index_offset as isize, p.size() - vs);
            }
            _ => blocks.push((0, p.size())),
        }
        let true_ub = blocks
            .iter()
            .map(|&(o, l)| o + l as isize)
            .max()
            .unwrap_or(0);
        let nbasic = if matches!(p.repr(), Repr::Pair { .. }) {
            2
        } else {
            1
        };
        Layout {
            size: p.size(),
            lb: 0,
            ub: p.extent() as isize,
            sticky_lb: false,
            sticky_ub: false,
            true_lb: 0,
            true_ub,
            align: p.align(),
            blocks: Arc::new(Blocks::flat(blocks)),
            sig: Arc::new(signature::Sig::one(p)),
            nbasic,
        }
    }

    fn marker(upper: bool) -> Layout {
        Layout {
            size: 0,
            lb: 0,
            ub: 0,
            sticky_lb: !upper,
            sticky_ub: upper,
            true_lb: 0,
            true_ub: 0,
            align: 1,
            blocks: Arc::new(Blocks::flat(Vec::new())),
            sig: Default::default(),
            nbasic: 0,
        }
    }
}

/// Size of the value part of a MINLOC/MAXLOC pair.
fn pair_value_size(v: PairValue) -> usize {
    match v {
        PairValue::F32 | PairValue::I32 | PairValue::F32F32 | PairValue::I32I32 => 4,
        PairValue::F64 | PairValue::I64 | PairValue::F64F64 => 8,
        PairValue::I16 => 2,
        PairValue::F80 => 16,
    }
}

fn push_merged(blocks: &mut Vec<(isize, usize)>, off: isize, len: usize) {
    if len == 0 {
        return;
    }
    if let Some(last) = blocks.last_mut() {
        if last.0.checked_add(last.1 as isize) == Some(off) {
            last.1 += len;
            return;
        }
    }
    blocks.push((off, len));
}

fn prefix_sums(blocks: &[(isize, usize)]) -> Vec<usize> {
    let mut v = Vec::with_capacity(blocks.len() + 1);
    let mut s = 0usize;
    v.push(0);
    for &(_, l) in blocks {
        s += l;
        v.push(s);
    }
    v
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Predefined(Primitive),
    Marker,
    Derived,
}

struct Inner {
    kind: Kind,
    combiner: Combiner,
    ints: Vec<i64>,
    addrs: Vec<isize>,
    types: Vec<Datatype>,
    committed: AtomicBool,
    name: Mutex<String>,
    layout: Arc<Layout>,
    /// Cached attributes (MPI_Type_set_attr).
    attrs: crate::attr::Attributes,
    /// The signature fingerprint ([`sigcheck`]), computed on first use.
    sig_fp: OnceLock<u64>,
    /// Made by a large-count (`_c`) constructor of the C interface: its
    /// contents are reported as large counts (MPI_Type_get_contents_c).
    large_count: AtomicBool,
}

/// The constructor arguments kept for `MPI_Type_get_contents`.
type Contents = (Vec<i64>, Vec<isize>, Vec<Datatype>);

/// An MPI datatype (predefined or derived). Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Datatype(Arc<Inner>);

impl fmt::Debug for Datatype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = &self.0.layout;
        let name = self.name();
        f.debug_struct("Datatype")
            .field("name", &name)
            .field("combiner", &self.0.combiner)
            .field("size", &l.size)
            .field("lb", &l.lb)
            .field("extent", &l.extent())
            .field("blocks", &l.blocks.count())
            .finish()
    }
}

/// Accumulates the layout of a new type from replicated children.
struct Acc {
    call: &'static str,
    /// The blocks since the last part (a repetition kept by structure).
    blocks: Vec<(isize, usize)>,
    parts: Vec<Blocks>,
    sig: signature::Sig,
    size: usize,
    nbasic: usize,
    lb: Option<isize>,
    ub: Option<isize>,
    slb: Option<isize>,
    sub: Option<isize>,
    any_lo: Option<isize>,
    any_hi: Option<isize>,
    tlb: Option<isize>,
    tub: Option<isize>,
    align: usize,
}

fn overflow_err(call: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Arg,
        format!("{call}: the datatype's size or displacements overflow the address range"),
    )
}

fn min_opt(a: Option<isize>, b: isize) -> Option<isize> {
    Some(a.map_or(b, |a| a.min(b)))
}
fn max_opt(a: Option<isize>, b: isize) -> Option<isize> {
    Some(a.map_or(b, |a| a.max(b)))
}

impl Acc {
    fn new(call: &'static str) -> Acc {
        Acc {
            call,
            blocks: Vec::new(),
            parts: Vec::new(),
            sig: signature::Sig::default(),
            size: 0,
            nbasic: 0,
            lb: None,
            ub: None,
            slb: None,
            sub: None,
            any_lo: None,
            any_hi: None,
            tlb: None,
            tub: None,
            align: 1,
        }
    }

    fn overflow(&self) -> MpiError {
        overflow_err(self.call)
    }

    fn add_block(&mut self, off: isize, len: usize) {
        push_merged(&mut self.blocks, off, len);
    }

    /// Ends the current flat part (before a repetition kept by structure).
    fn flush(&mut self) {
        if !self.blocks.is_empty() {
            self.parts.push(Blocks::flat(std::mem::take(&mut self.blocks)));
        }
    }


    /// Adds `n` copies of `c`, the first at byte displacement `disp`, the
    /// following ones `c.extent()` bytes apart.
    fn add(&mut self, disp: isize, n: usize, c: &Layout) -> Result<()> {
        self.add_strided(disp, n, c.extent(), c)
    }

    /// Adds `n` copies of `c`, the first at byte displacement `disp`, the
    /// following ones `ext` bytes apart.
    fn add_strided(&mut self, disp: isize, n: usize, ext: isize, c: &Layout) -> Result<()> {
        if n == 0 || (c.size == 0 && !c.sticky_lb && !c.sticky_ub) {
            return Ok(());
        }
        let call = self.call;
        let ovf = move || overflow_err(call);
        let last = isize::try_from(n - 1)
            .ok()
            .and_then(|k| k.checked_mul(ext))
            .ok_or_else(ovf)?;
        let lo = disp.checked_add(last.min(0)).ok_or_else(ovf)?;
        let hi = disp.checked_add(last.max(0)).ok_or_else(ovf)?;
        let clb = lo.checked_add(c.lb).ok_or_else(ovf)?;
        let cub = hi.checked_add(c.ub).ok_or_else(ovf)?;
        self.any_lo = min_opt(self.any_lo, clb.min(cub));
        self.any_hi = max_opt(self.any_hi, clb.max(cub));
        if c.sticky_lb {
            self.slb = min_opt(self.slb, clb);
        } else if c.size > 0 {
            self.lb = min_opt(self.lb, clb);
        }
        if c.sticky_ub {
            self.sub = max_opt(self.sub, cub);
        } else if c.size > 0 {
            self.ub = max_opt(self.ub, cub);
        }
        if c.size == 0 {
            return Ok(());
        }
        self.tlb = min_opt(self.tlb, lo.checked_add(c.true_lb).ok_or_else(ovf)?);
        self.tub = max_opt(self.tub, hi.checked_add(c.true_ub).ok_or_else(ovf)?);
        self.align = self.align.max(c.align);
        let bytes = n.checked_mul(c.size).ok_or_else(ovf)?;
        self.size = self.size.checked_add(bytes).ok_or_else(ovf)?;
        if self.size > isize::MAX as usize {
            return Err(ovf());
        }
        self.nbasic = n
            .checked_mul(c.nbasic)
            .and_then(|b| self.nbasic.checked_add(b))
            .ok_or_else(ovf)?;

        // Signature (a long repetition kept by structure).
        self.sig.push_rep(n, &c.sig).ok_or_else(ovf)?;

        // Blocks (offsets are checked: the last copy's ends bound all others).
        disp.checked_add(last).ok_or_else(ovf)?;
        if c.dense() && (n == 1 || ext == c.size as isize) {
            let off = c.blocks.single().map_or(0, |b| b.0);
            let start = disp.checked_add(off).ok_or_else(ovf)?;
            self.add_block(start, bytes);
            return Ok(());
        }
        let cb = c.blocks.count();
        if n.saturating_mul(cb) <= FLAT_LIMIT {
            for k in 0..n {
                let base = disp + k as isize * ext;
                c.blocks.for_each(base, &mut |o, l| push_merged(&mut self.blocks, o, l));
            }
            return Ok(());
        }
        // Many blocks: keep the repetition by structure.
        self.flush();
        self.parts.push(Blocks::Rep { disp, count: n, stride: ext, child_size: c.size, child: c.blocks.clone() });
        Ok(())
    }

    fn finish(mut self, pad: bool) -> Result<Layout> {
        let sticky_lb = self.slb.is_some();
        let sticky_ub = self.sub.is_some();
        let lb = self.slb.or(self.lb).or(self.any_lo).unwrap_or(0);
        let mut ub = self.sub.or(self.ub).or(self.any_hi).unwrap_or(0);
        if pad && !sticky_lb && !sticky_ub && self.size > 0 && self.align > 1 {
            let r = ub.wrapping_sub(lb).rem_euclid(self.align as isize);
            if r != 0 {
                ub = ub
                    .checked_add(self.align as isize - r)
                    .ok_or_else(|| self.overflow())?;
            }
        }
        ub.checked_sub(lb).ok_or_else(|| self.overflow())?;
        let acc = &mut self;
        let blocks = if acc.parts.is_empty() {
            Blocks::flat(std::mem::take(&mut acc.blocks))
        } else {
            acc.flush();
            if acc.parts.len() == 1 {
                acc.parts.pop().unwrap()
            } else {
                let mut prefix = Vec::with_capacity(acc.parts.len() + 1);
                prefix.push(0usize);
                for p in &acc.parts {
                    prefix.push(prefix.last().unwrap() + p.size());
                }
                Blocks::Seq { parts: std::mem::take(&mut acc.parts), prefix }
            }
        };
        Ok(Layout {
            size: acc.size,
            lb,
            ub,
            sticky_lb,
            sticky_ub,
            true_lb: acc.tlb.unwrap_or(0),
            true_ub: acc.tub.unwrap_or(0),
            align: acc.align,
            blocks: Arc::new(blocks),
            sig: Arc::new(std::mem::take(&mut acc.sig)),
            nbasic: acc.nbasic,
        })
    }
}

fn check_count(call: &str, arg: &str, count: i64) -> Result<usize> {
    if count < 0 {
        return Err(MpiError::arg(
            ErrorClass::Count,
            call,
            arg,
            format!("{count} is negative"),
        ));
    }
    usize::try_from(count).map_err(|_| {
        MpiError::arg(
            ErrorClass::Count,
            call,
            arg,
            format!("{count} is too large"),
        )
    })
}

fn check_blocklen(call: &str, arg: &str, b: i64) -> Result<usize> {
    if b < 0 {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            arg,
            format!("{b} is negative"),
        ));
    }
    usize::try_from(b)
        .map_err(|_| MpiError::arg(ErrorClass::Arg, call, arg, format!("{b} is too large")))
}

fn check_len(call: &str, arg: &str, got: usize, want: usize) -> Result<()> {
    if got != want {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            arg,
            format!("has {got} entries, the count of blocks is {want}"),
        ));
    }
    Ok(())
}

/// Element-unit displacement `d` times `extent` bytes, checked.
fn scale(call: &str, arg: &str, d: i64, extent: isize) -> Result<isize> {
    isize::try_from(d)
        .ok()
        .and_then(|d| d.checked_mul(extent))
        .ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Arg,
                call,
                arg,
                format!("{d} elements of extent {extent} overflow"),
            )
        })
}

impl Datatype {
    fn make(
        kind: Kind,
        combiner: Combiner,
        layout: Arc<Layout>,
        (ints, addrs, types): Contents,
        committed: bool,
        name: String,
    ) -> Datatype {
        Datatype(Arc::new(Inner {
            kind,
            combiner,
            ints,
            addrs,
            types,
            committed: AtomicBool::new(committed),
            name: Mutex::new(name),
            layout,
            attrs: crate::attr::Attributes::new(crate::attr::ObjectKind::Datatype),
            sig_fp: OnceLock::new(),
            large_count: AtomicBool::new(false),
        }))
    }

    fn derived(
        combiner: Combiner,
        layout: Layout,
        ints: Vec<i64>,
        addrs: Vec<isize>,
        types: Vec<Datatype>,
    ) -> Datatype {
        Datatype::make(
            Kind::Derived,
            combiner,
            Arc::new(layout),
            (ints, addrs, types),
            false,
            String::new(),
        )
    }

    pub(crate) fn layout(&self) -> &Layout {
        &self.0.layout
    }

    /// The predefined datatype for `p` (committed; cached, so this is cheap).
    pub fn predefined(p: Primitive) -> Datatype {
        Datatype::predefined_ref(p).clone()
    }

    /// [`Datatype::predefined`] without a reference count taken: the hot path
    /// of the C ABI borrows the process-wide table's entry.
    pub fn predefined_ref(p: Primitive) -> &'static Datatype {
        static TABLE: OnceLock<Vec<Datatype>> = OnceLock::new();
        let table = TABLE.get_or_init(|| {
            Primitive::ALL
                .iter()
                .map(|&p| {
                    let l = Arc::new(Layout::primitive(p));
                    Datatype::make(
                        Kind::Predefined(p),
                        Combiner::Named,
                        l,
                        Default::default(),
                        true,
                        p.name().into(),
                    )
                })
                .collect()
        });
        match table.get(p as usize) {
            Some(d) if d.as_primitive() == Some(p) => d,
            _ => table.iter().find(|d| d.as_primitive() == Some(p)).expect("every primitive is in the table"),
        }
    }

    fn marker(upper: bool) -> Datatype {
        static LB: OnceLock<Datatype> = OnceLock::new();
        static UB: OnceLock<Datatype> = OnceLock::new();
        let cell = if upper { &UB } else { &LB };
        cell.get_or_init(|| {
            let name = if upper { "MPI_UB" } else { "MPI_LB" };
            Datatype::make(
                Kind::Marker,
                Combiner::Named,
                Arc::new(Layout::marker(upper)),
                Default::default(),
                true,
                name.into(),
            )
        })
        .clone()
    }

    /// The MPI-1 `MPI_LB` marker: size 0, extent 0; sets an explicit lower bound in a struct.
    pub fn lb_marker() -> Datatype {
        Datatype::marker(false)
    }

    /// The MPI-1 `MPI_UB` marker: size 0, extent 0; sets an explicit upper bound in a struct.
    pub fn ub_marker() -> Datatype {
        Datatype::marker(true)
    }

    /// The primitive of a predefined type (not of a dup of one, not of the markers).
    pub fn as_primitive(&self) -> Option<Primitive> {
        match self.0.kind {
            Kind::Predefined(p) => Some(p),
            _ => None,
        }
    }

    /// Whether two handles denote the same datatype object.
    pub fn ptr_eq(&self, other: &Datatype) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// `MPI_Type_contiguous`.
    pub fn contiguous(count: i64, old: &Datatype) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_contiguous";
        let n = check_count(CALL, "count", count)?;
        let mut acc = Acc::new(CALL);
        acc.add(0, n, old.layout())?;
        Ok(Datatype::derived(
            Combiner::Contiguous,
            acc.finish(false)?,
            vec![count],
            vec![],
            vec![old.clone()],
        ))
    }

    fn strided(
        call: &'static str,
        count: i64,
        blocklen: i64,
        stride_bytes: isize,
        old: &Datatype,
    ) -> Result<Layout> {
        let n = check_count(call, "count", count)?;
        let bl = check_blocklen(call, "blocklength", blocklen)?;
        let c = old.layout();
        let mut acc = Acc::new(call);
        let block_bytes = (bl as isize).checked_mul(c.extent());
        if c.dense() && n > 0 && block_bytes == Some(stride_bytes) {
            // The blocks abut: the same type map as one contiguous run.
            let total = n.checked_mul(bl).ok_or_else(|| acc.overflow())?;
            acc.add(0, total, c)?;
        } else if bl > 0 && n > 0 {
            // One block (bl copies of old), repeated n times stride_bytes apart.
            let mut blk = Acc::new(call);
            blk.add(0, bl, c)?;
            let blk = blk.finish(false)?;
            acc.add_strided(0, n, stride_bytes, &blk)?;
        }
        acc.finish(false)
    }

    /// `MPI_Type_vector`: `stride` in elements of `old`'s extent.
    pub fn vector(count: i64, blocklen: i64, stride: i64, old: &Datatype) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_vector";
        let stride_bytes = scale(CALL, "stride", stride, old.extent())?;
        let l = Datatype::strided(CALL, count, blocklen, stride_bytes, old)?;
        Ok(Datatype::derived(
            Combiner::Vector,
            l,
            vec![count, blocklen, stride],
            vec![],
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_create_hvector`: `stride_bytes` in bytes.
    pub fn hvector(
        count: i64,
        blocklen: i64,
        stride_bytes: isize,
        old: &Datatype,
    ) -> Result<Datatype> {
        let l = Datatype::strided(
            "MPI_Type_create_hvector",
            count,
            blocklen,
            stride_bytes,
            old,
        )?;
        Ok(Datatype::derived(
            Combiner::Hvector,
            l,
            vec![count, blocklen],
            vec![stride_bytes],
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_indexed`: displacements in elements of `old`'s extent.
    pub fn indexed(blocklens: &[i64], displs: &[i64], old: &Datatype) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_indexed";
        check_len(
            CALL,
            "array_of_displacements",
            displs.len(),
            blocklens.len(),
        )?;
        let ext = old.extent();
        let mut acc = Acc::new(CALL);
        for (i, (&b, &d)) in blocklens.iter().zip(displs).enumerate() {
            let bl = check_blocklen(CALL, &format!("array_of_blocklengths[{i}]"), b)?;
            let disp = scale(CALL, &format!("array_of_displacements[{i}]"), d, ext)?;
            acc.add(disp, bl, old.layout())?;
        }
        let mut ints = Vec::with_capacity(2 * blocklens.len() + 1);
        ints.push(blocklens.len() as i64);
        ints.extend_from_slice(blocklens);
        ints.extend_from_slice(displs);
        Ok(Datatype::derived(
            Combiner::Indexed,
            acc.finish(false)?,
            ints,
            vec![],
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_create_hindexed`: displacements in bytes.
    pub fn hindexed(blocklens: &[i64], displs_bytes: &[isize], old: &Datatype) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_hindexed";
        check_len(
            CALL,
            "array_of_displacements",
            displs_bytes.len(),
            blocklens.len(),
        )?;
        let mut acc = Acc::new(CALL);
        for (i, (&b, &d)) in blocklens.iter().zip(displs_bytes).enumerate() {
            let bl = check_blocklen(CALL, &format!("array_of_blocklengths[{i}]"), b)?;
            acc.add(d, bl, old.layout())?;
        }
        let mut ints = Vec::with_capacity(blocklens.len() + 1);
        ints.push(blocklens.len() as i64);
        ints.extend_from_slice(blocklens);
        Ok(Datatype::derived(
            Combiner::Hindexed,
            acc.finish(false)?,
            ints,
            displs_bytes.to_vec(),
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_create_indexed_block`: displacements in elements of `old`'s extent.
    pub fn indexed_block(blocklen: i64, displs: &[i64], old: &Datatype) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_indexed_block";
        let bl = check_blocklen(CALL, "blocklength", blocklen)?;
        let ext = old.extent();
        let mut acc = Acc::new(CALL);
        for (i, &d) in displs.iter().enumerate() {
            let disp = scale(CALL, &format!("array_of_displacements[{i}]"), d, ext)?;
            acc.add(disp, bl, old.layout())?;
        }
        let mut ints = Vec::with_capacity(displs.len() + 2);
        ints.push(displs.len() as i64);
        ints.push(blocklen);
        ints.extend_from_slice(displs);
        Ok(Datatype::derived(
            Combiner::IndexedBlock,
            acc.finish(false)?,
            ints,
            vec![],
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_create_hindexed_block`: displacements in bytes.
    pub fn hindexed_block(
        blocklen: i64,
        displs_bytes: &[isize],
        old: &Datatype,
    ) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_hindexed_block";
        let bl = check_blocklen(CALL, "blocklength", blocklen)?;
        let mut acc = Acc::new(CALL);
        for &d in displs_bytes {
            acc.add(d, bl, old.layout())?;
        }
        let ints = vec![displs_bytes.len() as i64, blocklen];
        Ok(Datatype::derived(
            Combiner::HindexedBlock,
            acc.finish(false)?,
            ints,
            displs_bytes.to_vec(),
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_create_struct` (and MPI-1 `MPI_Type_struct`, with the
    /// [`lb_marker`](Datatype::lb_marker)/[`ub_marker`](Datatype::ub_marker)
    /// types). The extent is padded to the largest alignment of the
    /// components unless a marker or a resized component sets a bound.
    pub fn structure(
        blocklens: &[i64],
        displs_bytes: &[isize],
        types: &[Datatype],
    ) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_struct";
        check_len(
            CALL,
            "array_of_displacements",
            displs_bytes.len(),
            blocklens.len(),
        )?;
        check_len(CALL, "array_of_types", types.len(), blocklens.len())?;
        let mut acc = Acc::new(CALL);
        for (i, ((&b, &d), t)) in blocklens.iter().zip(displs_bytes).zip(types).enumerate() {
            let bl = check_blocklen(CALL, &format!("array_of_blocklengths[{i}]"), b)?;
            acc.add(d, bl, t.layout())?;
        }
        let mut ints = Vec::with_capacity(blocklens.len() + 1);
        ints.push(blocklens.len() as i64);
        ints.extend_from_slice(blocklens);
        Ok(Datatype::derived(
            Combiner::Struct,
            acc.finish(true)?,
            ints,
            displs_bytes.to_vec(),
            types.to_vec(),
        ))
    }

    /// `MPI_Type_create_f90_integer` / `_real` / `_complex`: the predefined
    /// type `p` under the name Fortran 90's `SELECTED_*_KIND` parameters give it.
    /// It behaves as `p` everywhere (reductions, packing, signatures) and is
    /// predefined (committed, never freed); its envelope reports `combiner` with
    /// the parameters (`r`, or `p, r`). Cached per (combiner, parameters), so
    /// the same arguments give the same type, as MPI asks.
    pub fn f90(combiner: Combiner, base: Primitive, params: &[i64]) -> Datatype {
        type Key = (Combiner, Vec<i64>);
        static CACHE: OnceLock<Mutex<Vec<(Key, Datatype)>>> = OnceLock::new();
        let cache = CACHE.get_or_init(|| Mutex::new(Vec::new()));
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, d)) = cache.iter().find(|((c, p), _)| *c == combiner && p.as_slice() == params) {
            return d.clone();
        }
        let d = Datatype::make(
            Kind::Predefined(base),
            combiner,
            Datatype::predefined(base).0.layout.clone(),
            (params.to_vec(), vec![], vec![]),
            true,
            String::new(),
        );
        cache.push(((combiner, params.to_vec()), d.clone()));
        d
    }

    /// `MPI_Type_create_resized`: explicit (sticky) lower bound and extent.
    pub fn resized(old: &Datatype, lb: isize, extent: isize) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_resized";
        let ub = lb.checked_add(extent).ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "extent",
                format!("lb {lb} + extent {extent} overflows"),
            )
        })?;
        let mut l = (*old.0.layout).clone();
        l.lb = lb;
        l.ub = ub;
        l.sticky_lb = true;
        l.sticky_ub = true;
        Ok(Datatype::derived(
            Combiner::Resized,
            l,
            vec![],
            vec![lb, extent],
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_create_subarray`: the `subsizes` block at `starts` of an
    /// array of `sizes` (C order: last dimension fastest, unless `fortran`),
    /// with lower bound 0 and the whole array's extent.
    pub fn subarray(sizes: &[i64], subsizes: &[i64], starts: &[i64], fortran: bool, old: &Datatype) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_subarray";
        let n = sizes.len();
        if n == 0 {
            return Err(MpiError::arg(ErrorClass::Arg, CALL, "ndims", "must be positive"));
        }
        for i in 0..n {
            if sizes[i] <= 0 {
                return Err(MpiError::arg(ErrorClass::Arg, CALL, &format!("array_of_sizes[{i}]"), format!("{} is not positive", sizes[i])));
            }
            if subsizes[i] <= 0 || subsizes[i] > sizes[i] {
                return Err(MpiError::arg(ErrorClass::Arg, CALL, &format!("array_of_subsizes[{i}]"), format!("{} is not in 1..={}", subsizes[i], sizes[i])));
            }
            if starts[i] < 0 || starts[i] > sizes[i] - subsizes[i] {
                return Err(MpiError::arg(ErrorClass::Arg, CALL, &format!("array_of_starts[{i}]"), format!("{} is not in 0..={}", starts[i], sizes[i] - subsizes[i])));
            }
        }
        // Dimensions from fastest to slowest varying.
        let order: Vec<usize> = if fortran { (0..n).collect() } else { (0..n).rev().collect() };
        let ext = old.extent();
        let ovf = || overflow_err(CALL);
        let mut t = Datatype::contiguous(subsizes[order[0]], old)?;
        let mut stride = ext;
        let mut disp = (starts[order[0]] as isize).checked_mul(ext).ok_or_else(ovf)?;
        for &d in &order[1..] {
            let prev = order[order.iter().position(|&x| x == d).unwrap() - 1];
            stride = stride.checked_mul(sizes[prev] as isize).ok_or_else(ovf)?;
            t = Datatype::hvector(subsizes[d], 1, stride, &t)?;
            disp = disp.checked_add((starts[d] as isize).checked_mul(stride).ok_or_else(ovf)?).ok_or_else(ovf)?;
        }
        let total = sizes.iter().try_fold(ext, |a, &x| a.checked_mul(x as isize)).ok_or_else(ovf)?;
        let placed = Datatype::hindexed_block(1, &[disp], &t)?;
        let whole = Datatype::resized(&placed, 0, total)?;
        let mut ints = vec![n as i64];
        ints.extend_from_slice(sizes);
        ints.extend_from_slice(subsizes);
        ints.extend_from_slice(starts);
        ints.push(if fortran { 15 } else { 12 });
        Ok(whole.relabel(Combiner::Subarray, ints, vec![], vec![old.clone()]))
    }

    /// `MPI_Type_create_darray`: this process's part of an array of `gsizes`
    /// distributed over a `psizes` process grid (row-major ranks); `distribs`
    /// holds 0 = none, 1 = block, 2 = cyclic, with `dargs` (-1 = default).
    /// Lower bound 0, extent of the whole array.
    #[allow(clippy::too_many_arguments)]
    pub fn darray(
        size: i64,
        rank: i64,
        gsizes: &[i64],
        distribs: &[i32],
        dargs: &[i64],
        psizes: &[i64],
        fortran: bool,
        old: &Datatype,
        abi_ints: Vec<i64>,
    ) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_darray";
        let n = gsizes.len();
        let ovf = || overflow_err(CALL);
        if n == 0 {
            return Err(MpiError::arg(ErrorClass::Arg, CALL, "ndims", "must be positive"));
        }
        let nprocs = psizes.iter().try_fold(1i64, |a, &p| if p > 0 { a.checked_mul(p) } else { None });
        if nprocs != Some(size) {
            return Err(MpiError::arg(ErrorClass::Arg, CALL, "array_of_psizes", format!("the grid does not have {size} processes")));
        }
        if rank < 0 || rank >= size {
            return Err(MpiError::arg(ErrorClass::Arg, CALL, "rank", format!("{rank} is not in 0..{size}")));
        }
        // Grid coordinates: the process grid is row-major whatever `order` is.
        let mut coords = vec![0i64; n];
        let mut r = rank;
        for i in (0..n).rev() {
            coords[i] = r % psizes[i];
            r /= psizes[i];
        }
        let ext = old.extent();
        // Byte stride of dimension d's index (the product of the faster dimensions).
        let stride_of = |d: usize| -> Result<isize> {
            let faster: Vec<usize> = if fortran { (0..d).collect() } else { (d + 1..n).collect() };
            faster.iter().try_fold(ext, |a, &i| a.checked_mul(gsizes[i] as isize)).ok_or_else(ovf)
        };
        let fastest = if fortran { 0 } else { n - 1 };
        let dims: Vec<usize> = if fortran { (0..n).collect() } else { (0..n).rev().collect() };
        let mut t = old.clone();
        let mut disp: isize = 0;
        for &d in &dims {
            let (g, np, c) = (gsizes[d], psizes[d], coords[d]);
            if g <= 0 {
                return Err(MpiError::arg(ErrorClass::Arg, CALL, &format!("array_of_gsizes[{d}]"), format!("{g} is not positive")));
            }
            let stride = stride_of(d)?;
            let (new_t, offset) = match distribs[d] {
                0 | 1 => {
                    if distribs[d] == 0 && np != 1 {
                        return Err(MpiError::arg(ErrorClass::Arg, CALL, &format!("array_of_psizes[{d}]"), "must be 1 for MPI_DISTRIBUTE_NONE"));
                    }
                    let blk = if distribs[d] == 0 || dargs[d] == -1 { (g + np - 1) / np } else { dargs[d] };
                    if blk <= 0 || blk.checked_mul(np).is_none_or(|x| x < g) {
                        return Err(MpiError::arg(ErrorClass::Arg, CALL, &format!("array_of_dargs[{d}]"), format!("{blk} * {np} processes does not cover {g} elements")));
                    }
                    let mine = (g - blk * c).clamp(0, blk);
                    let nt = if d == fastest { Datatype::contiguous(mine, &t)? } else { Datatype::hvector(mine, 1, stride, &t)? };
                    (nt, if mine == 0 { 0 } else { blk * c })
                }
                2 => {
                    let blk = if dargs[d] == -1 { 1 } else { dargs[d] };
                    if blk <= 0 {
                        return Err(MpiError::arg(ErrorClass::Arg, CALL, &format!("array_of_dargs[{d}]"), format!("{blk} is not positive")));
                    }
                    let st = c * blk;
                    let local = if g - 1 < st {
                        0
                    } else {
                        let span = g - st;
                        (span / (np * blk)) * blk + (span % (np * blk)).min(blk)
                    };
                    let (count, rem) = (local / blk, local % blk);
                    let cstride = (np * blk) as isize * stride;
                    let mut nt = Datatype::hvector(count, blk, cstride, &t)?;
                    if rem != 0 {
                        let tail = (count as isize).checked_mul(cstride).ok_or_else(ovf)?;
                        nt = Datatype::structure(&[1, rem], &[0, tail], &[nt, t.clone()])?;
                    }
                    if d == fastest {
                        let at = (st as isize).checked_mul(ext).ok_or_else(ovf)?;
                        let placed = Datatype::hindexed_block(1, &[at], &nt)?;
                        nt = Datatype::resized(&placed, 0, ext.checked_mul(g as isize).ok_or_else(ovf)?)?;
                        (nt, 0)
                    } else {
                        (nt, if local == 0 { 0 } else { st })
                    }
                }
                x => return Err(MpiError::arg(ErrorClass::Arg, CALL, &format!("array_of_distribs[{d}]"), format!("{x} is not an MPI_DISTRIBUTE_* value"))),
            };
            // One step of this dimension spans the whole dimension, so that
            // the next (slower) dimension's blocks of several steps land
            // `gsizes[d]` elements of the previous type apart.
            let span = t.extent().checked_mul(g as isize).ok_or_else(ovf)?;
            t = Datatype::resized(&new_t, 0, span)?;
            disp = disp.checked_add((offset as isize).checked_mul(stride).ok_or_else(ovf)?).ok_or_else(ovf)?;
        }
        let total = gsizes.iter().try_fold(ext, |a, &x| a.checked_mul(x as isize)).ok_or_else(ovf)?;
        let placed = Datatype::hindexed_block(1, &[disp], &t)?;
        let whole = Datatype::resized(&placed, 0, total)?;
        Ok(whole.relabel(Combiner::Darray, abi_ints, vec![], vec![old.clone()]))
    }

    /// The same type map under another constructor's name and arguments (for
    /// types built from simpler constructors, such as subarray and darray).
    fn relabel(&self, combiner: Combiner, ints: Vec<i64>, addrs: Vec<isize>, types: Vec<Datatype>) -> Datatype {
        Datatype::make(Kind::Derived, combiner, self.0.layout.clone(), (ints, addrs, types), false, String::new())
    }

    /// `MPI_Type_dup`: same type map and committed state. (Attributes are
    /// copied by [`Datatype::dup_with_attributes`].)
    pub fn dup(old: &Datatype) -> Datatype {
        Datatype::make(
            Kind::Derived,
            Combiner::Dup,
            old.0.layout.clone(),
            (vec![], vec![], vec![old.clone()]),
            old.is_committed(),
            String::new(),
        )
    }

    /// `MPI_Type_dup` with the attributes' copy callbacks run.
    pub fn dup_with_attributes(old: &Datatype) -> crate::error::Result<Datatype> {
        let attrs = old.0.attrs.duplicate("MPI_Type_dup")?;
        let mut new = Datatype::dup(old);
        if let Some(inner) = Arc::get_mut(&mut new.0) {
            inner.attrs = attrs;
        }
        Ok(new)
    }

    /// The attributes cached on this datatype (MPI_Type_set_attr & co).
    pub fn attrs(&self) -> &crate::attr::Attributes {
        &self.0.attrs
    }

    /// `MPI_Type_commit` (in place; idempotent).
    pub fn commit(&self) {
        self.0.committed.store(true, Ordering::Release);
        if sigcheck::enabled() {
            // Register the type now, so that mismatch errors can name it.
            self.sig_fingerprint();
        }
    }

    pub fn is_committed(&self) -> bool {
        self.0.committed.load(Ordering::Acquire)
    }

    /// `MPI_Type_size`: bytes of data in one element.
    pub fn size(&self) -> usize {
        self.0.layout.size
    }

    pub fn lb(&self) -> isize {
        self.0.layout.lb
    }

    pub fn ub(&self) -> isize {
        self.0.layout.ub
    }

    pub fn extent(&self) -> isize {
        self.0.layout.extent()
    }

    pub fn true_lb(&self) -> isize {
        self.0.layout.true_lb
    }

    pub fn true_extent(&self) -> isize {
        self.0.layout.true_ub - self.0.layout.true_lb
    }

    /// `count` elements occupy exactly `[buf + true_lb, + count*size)`.
    pub fn is_contiguous(&self) -> bool {
        let l = &self.0.layout;
        l.size == 0 || l.dense()
    }

    /// The flattened (byte offset, byte length) blocks of one element, in
    /// type-map order, as a list (made for the call: a type with a regular
    /// repetition of many blocks keeps it by structure; walk those with
    /// [`for_each_block`](Datatype::for_each_block)).
    pub fn blocks(&self) -> Vec<(isize, usize)> {
        self.0.layout.blocks.to_vec()
    }

    /// The blocks as a list, borrowed when the type keeps one.
    pub(crate) fn blocks_cow(&self) -> std::borrow::Cow<'_, [(isize, usize)]> {
        match &*self.0.layout.blocks {
            Blocks::Flat { list, .. } => std::borrow::Cow::Borrowed(list),
            b => std::borrow::Cow::Owned(b.to_vec()),
        }
    }

    /// Number of blocks of one element (saturating).
    pub fn block_count(&self) -> usize {
        self.0.layout.blocks.count()
    }

    /// Calls `f(byte offset, byte length)` for the blocks of one element, in
    /// type-map order, without making a list (offsets shifted by `base`).
    pub fn for_each_block(&self, base: isize, mut f: impl FnMut(isize, usize)) {
        self.0.layout.blocks.for_each(base, &mut f)
    }

    /// The run-length type signature of one element, as a list (one entry
    /// per run: millions for a long repetition of a mixed struct; walk
    /// [`Datatype::signature_runs`] instead where that matters).
    pub fn signature(&self) -> Vec<(Primitive, usize)> {
        self.0.layout.sig.to_vec()
    }

    /// The maximal runs (primitive, count) of the type signature of `n`
    /// elements, in order, without making a list (counts saturate).
    pub fn signature_runs(&self, n: usize) -> impl Iterator<Item = (Primitive, usize)> + '_ {
        self.0.layout.sig.runs(n)
    }

    /// The type-signature fingerprint messages of this type carry in the
    /// checking mode ([`sigcheck`]; 0 = not checked: bytes, packed, empty).
    /// Computed once per datatype object; registers the type's unit.
    pub fn sig_fingerprint(&self) -> u64 {
        *self.0.sig_fp.get_or_init(|| {
            let sig = &self.0.layout.sig;
            if sig.flat_runs() > MAX_CHECKED_RUNS {
                return 0;
            }
            sigcheck::unit_of(&sig.to_vec()).map_or(0, sigcheck::register)
        })
    }

    /// `Some(p)` when every basic element of the type is `p`.
    pub fn single_primitive(&self) -> Option<Primitive> {
        self.0.layout.sig.single_run().map(|(p, _)| p)
    }

    pub fn combiner(&self) -> Combiner {
        self.0.combiner
    }

    /// `MPI_Type_get_envelope`: (num_integers, num_addresses, num_datatypes, combiner).
    pub fn envelope(&self) -> (usize, usize, usize, Combiner) {
        (
            self.0.ints.len(),
            self.0.addrs.len(),
            self.0.types.len(),
            self.0.combiner,
        )
    }

    /// Records that a large-count (`_c`) constructor made this type (derived
    /// types only; predefined ones are shared and stay as they are).
    pub fn mark_large_count(&self) {
        if self.0.combiner != Combiner::Named {
            self.0.large_count.store(true, Ordering::Relaxed);
        }
    }

    /// Whether a large-count constructor made this type.
    pub fn is_large_count(&self) -> bool {
        self.0.large_count.load(Ordering::Relaxed)
    }

    /// `MPI_Type_get_contents` (empty for predefined types).
    pub fn contents(&self) -> (Vec<i64>, Vec<isize>, Vec<Datatype>) {
        (
            self.0.ints.clone(),
            self.0.addrs.clone(),
            self.0.types.clone(),
        )
    }

    pub fn name(&self) -> String {
        self.0
            .name
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn set_name(&self, name: &str) {
        *self.0.name.lock().unwrap_or_else(|e| e.into_inner()) = name.to_owned();
    }

    /// Whether `n` elements of `self` and `m` elements of `other` have the
    /// same type signature. A side made only of `MPI_BYTE`/`MPI_PACKED`
    /// matches anything of the same byte length.
    pub fn same_signature(&self, n: usize, other: &Datatype, m: usize) -> bool {
        let raw = |d: &Datatype| {
            d.signature_runs(1)
                .all(|(p, _)| matches!(p, Primitive::Byte | Primitive::Packed))
        };
        let (a, b) = (self.layout(), other.layout());
        if raw(self) || raw(other) {
            return a.size.checked_mul(n) == b.size.checked_mul(m);
        }
        if a.size.checked_mul(n) != b.size.checked_mul(m)
            || a.nbasic.checked_mul(n) != b.nbasic.checked_mul(m)
        {
            return false;
        }
        let mut x = a.sig.runs(n);
        let mut y = b.sig.runs(m);
        loop {
            match (x.next(), y.next()) {
                (None, None) => return true,
                (Some(r), Some(s)) if r == s => {}
                _ => return false,
            }
        }
    }

    /// `MPI_Get_count`: whole elements in `bytes` packed bytes; `None` = `MPI_UNDEFINED`.
    pub fn get_count(&self, bytes: usize) -> Option<usize> {
        let size = self.size();
        if size == 0 {
            return if bytes == 0 { Some(0) } else { None };
        }
        (bytes.checked_rem(size) == Some(0)).then_some(bytes / size)
    }

    /// `MPI_Get_elements`: basic elements in `bytes` packed bytes (pair types
    /// count as two: the value and the index); `None` when `bytes` ends inside
    /// a basic element.
    pub fn get_elements(&self, bytes: usize) -> Option<usize> {
        let l = self.layout();
        if l.size == 0 {
            return if bytes == 0 { Some(0) } else { None };
        }
        let mut elems = (bytes / l.size).checked_mul(l.nbasic)?;
        let mut rem = bytes % l.size;
        for (p, k) in l.sig.runs(1) {
            if rem == 0 {
                break;
            }
            let ps = p.size();
            let q = k.min(rem / ps);
            elems += q * if let Repr::Pair { .. } = p.repr() {
                2
            } else {
                1
            };
            rem -= q * ps;
            if q < k {
                if let Repr::Pair { value, .. } = p.repr() {
                    if rem == pair_value_size(value) {
                        elems += 1;
                        rem = 0;
                    }
                }
                break;
            }
        }
        if rem == 0 {
            Some(elems)
        } else {
            None
        }
    }
}
