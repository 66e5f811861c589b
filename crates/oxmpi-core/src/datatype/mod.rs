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

mod blocks;
mod constructors;
mod layout;

#[cfg(test)]
pub(crate) mod tests;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub use pack::pack_size;
pub use primitive::{PairValue, Primitive, Repr, TypeClass};

/// Signatures with more runs than this (kept by structure, see
/// [`signature`]) are not fingerprinted for the signature check
/// ([`sigcheck`]): finding the period would list every run.
const MAX_CHECKED_RUNS: usize = 1 << 22;

use blocks::Blocks;
pub use constructors::Combiner;
use layout::{pair_value_size, Layout};

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
    /// `layout` is one dense block (or empty): [`Datatype::is_contiguous`], asked on
    /// every send and receive, answered without walking the layout (PROFILE.md, rrate28).
    contiguous: bool,
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

impl Datatype {
    fn make(
        kind: Kind,
        combiner: Combiner,
        layout: Arc<Layout>,
        (ints, addrs, types): Contents,
        committed: bool,
        name: String,
    ) -> Datatype {
        let contiguous = layout.size == 0 || layout.dense();
        Datatype(Arc::new(Inner {
            kind,
            combiner,
            ints,
            addrs,
            types,
            committed: AtomicBool::new(committed),
            name: Mutex::new(name),
            layout,
            contiguous,
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
            _ => table
                .iter()
                .find(|d| d.as_primitive() == Some(p))
                .expect("every primitive is in the table"),
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

    /// The same type map under another constructor's name and arguments (for
    /// types built from simpler constructors, such as subarray and darray).
    fn relabel(
        &self,
        combiner: Combiner,
        ints: Vec<i64>,
        addrs: Vec<isize>,
        types: Vec<Datatype>,
    ) -> Datatype {
        Datatype::make(
            Kind::Derived,
            combiner,
            self.0.layout.clone(),
            (ints, addrs, types),
            false,
            String::new(),
        )
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
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.0.contiguous
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
