//! Datatypes: how Rust values map to MPI messages.
//!
//! [`Equivalence`] says that a Rust type has an MPI datatype. It is implemented for
//! `bool`, `char`, `i8`..`i64`, `u8`..`u64`, `isize`, `usize`, `f32`, `f64`, for tuples
//! of up to 12 equivalent types (or arrays of them), and with the feature `complex` for
//! `num_complex::Complex<f32 | f64>`. [`Buffer`] (what a send reads) and [`BufferMut`]
//! (what a receive writes) are implemented for any `T: Equivalence`, for `[T]`, `[T; N]`
//! (N elements of `T`, as in rsmpi) and for `Vec<T>`.
//!
//! A datatype is described by a [`DatatypeRef`] (a cheap, copyable descriptor; the
//! predefined ones are [`SystemDatatype`]s). The descriptor is opaque so that derived
//! datatypes (`UserDatatype`, views, `#[derive(Equivalence)]`) can be added without
//! changing these signatures.
//!
//! `Equivalence`, `Pointer`/`PointerMut`, `Collection`, `Buffer`/`BufferMut` and `Datatype`
//! stay `unsafe` traits, as in rsmpi: implementing one promises a memory layout no check
//! can see, and core's `buf::Region` takes that promise as its one proof (`region_in`/`region_out`).
//!
//! ```
//! use oxmpi::traits::*;
//! assert_eq!(f64::equivalent_datatype().size(), 8);
//! assert_eq!(<(u8, f64)>::equivalent_datatype().size(), 9);
//! assert_eq!([1i32, 2, 3].count(), 3);
//! ```

use std::borrow::Borrow;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Mutex, OnceLock};

use oxmpi_core::buf::Region;
use oxmpi_core::datatype::{Datatype as CoreDatatype, Primitive};

use crate::error::{Error, ErrorClass, OrFatal, Result};
use crate::request::Start;
use crate::{Address, Count};

/// The datatype traits, re-exported by [`crate::traits`].
pub mod traits {
    pub use super::{
        AsDatatype, Buffer, BufferMut, Collection, Datatype, Equivalence, Partitioned,
        PartitionedBuffer, PartitionedBufferMut, Pointer, PointerMut, UncommittedDatatype,
    };
}

/// A predefined (primitive) type: its MPI name, size, engine type, and which byte
/// patterns are values.
pub(crate) struct Prim {
    name: &'static str,
    size: usize,
    core: Primitive,
    /// For types where not every byte pattern is a value (`bool`, `char`): the check.
    valid: Option<fn(&[u8]) -> bool>,
    /// A valid value's bytes, written over an invalid element.
    fallback: &'static [u8],
    /// The engine datatype (the predefined one, or a named dup of it).
    dt: OnceLock<CoreDatatype>,
}

impl Prim {
    #[inline]
    fn core_dt(&'static self) -> &'static CoreDatatype {
        self.dt.get_or_init(|| {
            let p = CoreDatatype::predefined(self.core);
            if p.name() == self.name {
                p
            } else {
                let d = CoreDatatype::dup(&p);
                d.set_name(self.name);
                d.commit();
                d
            }
        })
    }
}

fn valid_bool(b: &[u8]) -> bool {
    b[0] <= 1
}

fn valid_char(b: &[u8]) -> bool {
    let v = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
    char::from_u32(v).is_some()
}

macro_rules! prims {
    ($($stat:ident = ($name:expr, $ty:ty, $core:ident, $valid:expr)),* $(,)?) => {
        $(static $stat: Prim = Prim {
            name: $name,
            size: std::mem::size_of::<$ty>(),
            core: Primitive::$core,
            valid: $valid,
            fallback: &[0; std::mem::size_of::<$ty>()],
            dt: OnceLock::new(),
        };)*
    };
}

prims! {
    P_BOOL = ("MPI_C_BOOL", bool, CBool, Some(valid_bool)),
    P_CHAR = ("MPI_UINT32_T (char)", char, Uint32, Some(valid_char)),
    P_I8 = ("MPI_INT8_T", i8, Int8, None),
    P_I16 = ("MPI_INT16_T", i16, Int16, None),
    P_I32 = ("MPI_INT32_T", i32, Int32, None),
    P_I64 = ("MPI_INT64_T", i64, Int64, None),
    P_U8 = ("MPI_UINT8_T", u8, Uint8, None),
    P_U16 = ("MPI_UINT16_T", u16, Uint16, None),
    P_U32 = ("MPI_UINT32_T", u32, Uint32, None),
    P_U64 = ("MPI_UINT64_T", u64, Uint64, None),
    P_ISIZE = ("MPI_AINT (isize)", isize, Aint, None),
    P_USIZE = ("MPI_AINT (usize)", usize, Uint64, None),
    P_F32 = ("MPI_FLOAT", f32, Float, None),
    P_F64 = ("MPI_DOUBLE", f64, Double, None),
}

#[cfg(feature = "complex")]
prims! {
    P_C32 = ("MPI_C_FLOAT_COMPLEX", [f32; 2], CFloatComplex, None),
    P_C64 = ("MPI_C_DOUBLE_COMPLEX", [f64; 2], CDoubleComplex, None),
}

/// Engine datatypes of `count` copies of a base type, interned so that they are
/// `'static` (the table keeps the base alive, so `ptr_eq` identifies it for good).
fn intern_contiguous(count: usize, of: &CoreDatatype) -> &'static CoreDatatype {
    type Table = Vec<(CoreDatatype, usize, &'static CoreDatatype)>;
    static TABLE: Mutex<Table> = Mutex::new(Vec::new());
    let mut g = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, _, d)) = g.iter().find(|(b, c, _)| *c == count && b.ptr_eq(of)) {
        return d;
    }
    let d = CoreDatatype::contiguous(count as i64, of).expect("contiguous of a valid type");
    d.set_name(&format!("{} x {count}", of.name()));
    d.commit();
    let d: &'static CoreDatatype = Box::leak(Box::new(d));
    g.push((of.clone(), count, d));
    d
}

/// A `'static` reference to an engine datatype (kept alive by a table; `ptr_eq`
/// finds one already there), for descriptors whose owner may be a temporary.
pub(crate) fn intern(dt: &CoreDatatype) -> &'static CoreDatatype {
    static TABLE: Mutex<Vec<&'static CoreDatatype>> = Mutex::new(Vec::new());
    let mut g = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = g.iter().find(|d| d.ptr_eq(dt)) {
        return d;
    }
    let d: &'static CoreDatatype = Box::leak(Box::new(dt.clone()));
    g.push(d);
    d
}

/// A reference to a datatype: a copyable descriptor of the type of the elements of a
/// message. `'a` is the lifetime of the datatype it refers to (`'static` for the
/// predefined ones, see [`SystemDatatype`], and for `#[derive(Equivalence)]` types).
#[derive(Clone, Copy)]
pub struct DatatypeRef<'a> {
    core: &'a CoreDatatype,
    /// Element check for runs of `bool`/`char` (only set for contiguous runs of one
    /// primitive).
    check: Option<&'static Prim>,
}

/// A predefined datatype (`MPI_INT32_T`, `MPI_DOUBLE`, ...).
pub type SystemDatatype = DatatypeRef<'static>;

impl<'a> DatatypeRef<'a> {
    #[inline]
    fn prim(base: &'static Prim) -> SystemDatatype {
        DatatypeRef {
            core: base.core_dt(),
            check: base.valid.map(|_| base),
        }
    }

    /// A descriptor of an engine datatype (which must be committed to be used).
    pub fn from_core(dt: &'a CoreDatatype) -> DatatypeRef<'a> {
        DatatypeRef {
            core: dt,
            check: None,
        }
    }

    /// The engine datatype.
    pub fn as_core(&self) -> &'a CoreDatatype {
        self.core
    }

    /// Whether received values of this type are checked (bool, char): such types
    /// cannot be window elements, which remote writes change unchecked.
    pub(crate) fn has_element_check(&self) -> bool {
        self.check.is_some()
    }

    /// The datatype of `count` consecutive elements of `of` (`MPI_Type_contiguous`),
    /// for `'static` datatypes (the result is interned). For other datatypes see
    /// [`UserDatatype::contiguous`].
    pub fn contiguous(count: usize, of: &DatatypeRef<'_>) -> SystemDatatype {
        DatatypeRef {
            core: intern_contiguous(count, of.core),
            check: of.check,
        }
    }

    /// Bytes of data in one element of this type (`MPI_Type_size`).
    pub fn size(&self) -> usize {
        self.core.size()
    }

    /// Bytes from one element to the next (`MPI_Type_get_extent`).
    pub fn extent(&self) -> Address {
        self.core.extent()
    }

    /// The lower bound (`MPI_Type_get_extent`).
    pub fn lower_bound(&self) -> Address {
        self.core.lb()
    }

    /// A readable name, e.g. `MPI_DOUBLE` or `MPI_INT32_T x 3`.
    pub fn name(&self) -> String {
        self.core.name()
    }

    /// Whether `count` elements occupy exactly `count * size` bytes with no gaps, so
    /// the engine can move them as bytes.
    pub fn is_contiguous(&self) -> bool {
        self.core.is_contiguous()
    }
}

impl fmt::Debug for DatatypeRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatatypeRef({})", self.name())
    }
}

impl PartialEq for DatatypeRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.core.ptr_eq(other.core)
    }
}

/// Something that describes an MPI datatype.
///
/// # Safety
/// The descriptor returned must describe the memory layout the type claims.
pub unsafe trait Datatype {
    /// The descriptor of this datatype.
    fn as_datatype_ref(&self) -> DatatypeRef<'_>;
}

// SAFETY: a descriptor describes itself.
unsafe impl Datatype for DatatypeRef<'_> {
    fn as_datatype_ref(&self) -> DatatypeRef<'_> {
        *self
    }
}

// SAFETY: forwards to the referent.
unsafe impl<D: Datatype + ?Sized> Datatype for &D {
    fn as_datatype_ref(&self) -> DatatypeRef<'_> {
        (**self).as_datatype_ref()
    }
}

/// A Rust type with an equivalent MPI datatype.
///
/// # Safety
/// `equivalent_datatype()` must describe exactly the bytes of `Self`: its size must be
/// `size_of::<Self>()`, and every byte pattern a message of that datatype can carry must
/// be a valid `Self` (or be caught by the datatype's own check, as for `bool`).
///
/// ```
/// use oxmpi::traits::*;
/// assert_eq!(u16::equivalent_datatype().name(), "MPI_UINT16_T");
/// ```
pub unsafe trait Equivalence {
    /// The type of the datatype descriptor.
    type Out: Datatype;
    /// The datatype equivalent to `Self`.
    fn equivalent_datatype() -> Self::Out;
}

macro_rules! equivalence {
    ($($ty:ty => $prim:ident),* $(,)?) => {
        $(
            // SAFETY: the primitive descriptor has the size of the type, and its check
            // rejects the byte patterns that are not values of it.
            unsafe impl Equivalence for $ty {
                type Out = SystemDatatype;
                // Inlined: asked once per send and receive (PROFILE.md, rrate31).
                #[inline]
                fn equivalent_datatype() -> SystemDatatype {
                    DatatypeRef::prim(&$prim)
                }
            }
        )*
    };
}

equivalence! {
    bool => P_BOOL, char => P_CHAR,
    i8 => P_I8, i16 => P_I16, i32 => P_I32, i64 => P_I64,
    u8 => P_U8, u16 => P_U16, u32 => P_U32, u64 => P_U64,
    isize => P_ISIZE, usize => P_USIZE,
    f32 => P_F32, f64 => P_F64,
}

/// `num_complex::Complex<f32>` and `Complex<f64>` (feature `complex`, as rsmpi's) are
/// `MPI_C_FLOAT_COMPLEX` and `MPI_C_DOUBLE_COMPLEX`.
/// `num_complex::Complex<f32>` (feature `complex`).
#[cfg(feature = "complex")]
pub type Complex32 = num_complex::Complex<f32>;
/// `num_complex::Complex<f64>` (feature `complex`).
#[cfg(feature = "complex")]
pub type Complex64 = num_complex::Complex<f64>;

#[cfg(feature = "complex")]
mod complex {
    use super::*;
    // SAFETY: `Complex<T>` is `#[repr(C)] { re: T, im: T }`, the C complex layout the
    // predefined types describe; every bit pattern of two floats is a value.
    unsafe impl Equivalence for num_complex::Complex<f32> {
        type Out = SystemDatatype;
        fn equivalent_datatype() -> SystemDatatype {
            DatatypeRef::prim(&P_C32)
        }
    }
    // SAFETY: as above.
    unsafe impl Equivalence for num_complex::Complex<f64> {
        type Out = SystemDatatype;
        fn equivalent_datatype() -> SystemDatatype {
            DatatypeRef::prim(&P_C64)
        }
    }
}

/// The datatype of a tuple type `T`, built once by `make` and kept for the process.
fn tuple_datatype<T: 'static>(make: impl FnOnce() -> UserDatatype) -> DatatypeRef<'static> {
    use std::any::TypeId;
    type Table = Vec<(TypeId, &'static UserDatatype)>;
    static TABLE: Mutex<Table> = Mutex::new(Vec::new());
    let id = TypeId::of::<T>();
    let find = |t: &Table| t.iter().find(|(i, _)| *i == id).map(|(_, d)| *d);
    if let Some(d) = find(&TABLE.lock().unwrap_or_else(|e| e.into_inner())) {
        return d.as_ref();
    }
    // Built without the lock: a tuple's elements may be tuples themselves.
    let made = make();
    let mut g = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = find(&g) {
        return d.as_ref();
    }
    let d: &'static UserDatatype = Box::leak(Box::new(made));
    g.push((id, d));
    d.as_ref()
}

macro_rules! tuple_equivalence {
    ($( ($($T:ident $i:tt),+) )*) => {
        $(
            // SAFETY: the datatype lists every element at its offset in the tuple
            // (`offset_of!`) with the element's own datatype, resized to the tuple's
            // size, so it describes exactly the tuple's data bytes.
            unsafe impl<$($T: FieldDatatype + 'static),+> Equivalence for ($($T,)+) {
                type Out = SystemDatatype;
                fn equivalent_datatype() -> SystemDatatype {
                    tuple_datatype::<Self>(|| {
                        let elems = ($($T::field_datatype(),)+);
                        let types = [$(elems.$i.as_datatype_ref()),+];
                        let displs = [$(std::mem::offset_of!(Self, $i) as Address),+];
                        let blocks = [$({ let _ = $i; 1 as Count }),+];
                        let st = UserDatatype::structured(&blocks, &displs, &types);
                        UserDatatype::resized(&st, 0, std::mem::size_of::<Self>() as Address)
                    })
                }
            }
        )*
    };
}

tuple_equivalence! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
}

/// The datatype of a field or tuple element: an `Equivalence` type's own, or `N`
/// contiguous copies of the element's for an array `[T; N]` (as rsmpi, arrays are not
/// `Equivalence` themselves: as buffers they are `N` elements of `T`).
#[doc(hidden)]
pub trait FieldDatatype {
    /// The descriptor's type.
    type Out: Datatype;
    /// The datatype.
    fn field_datatype() -> Self::Out;
}

impl<T: Equivalence> FieldDatatype for T {
    type Out = <T as Equivalence>::Out;
    fn field_datatype() -> Self::Out {
        T::equivalent_datatype()
    }
}

impl<T: FieldDatatype, const N: usize> FieldDatatype for [T; N] {
    type Out = SystemDatatype;
    fn field_datatype() -> SystemDatatype {
        let t = T::field_datatype();
        DatatypeRef::contiguous(N, &t.as_datatype_ref())
    }
}

/// Something with an address to read from.
///
/// # Safety
/// The pointer must be valid for reads of `count() * as_datatype().size()` bytes.
pub unsafe trait Pointer {
    /// The address of the first element.
    fn pointer(&self) -> *const c_void;
}

/// Something with an address to write to.
///
/// # Safety
/// The pointer must be valid for writes of `count() * as_datatype().size()` bytes.
pub unsafe trait PointerMut {
    /// The address of the first element.
    fn pointer_mut(&mut self) -> *mut c_void;
}

/// A number of elements.
///
/// # Safety
/// The count must not exceed the elements actually there.
pub unsafe trait Collection {
    /// How many elements.
    fn count(&self) -> Count;
}

/// Something whose elements have an MPI datatype.
pub trait AsDatatype {
    /// The type of the datatype descriptor.
    type Out: Datatype;
    /// The datatype of one element.
    fn as_datatype(&self) -> Self::Out;
}

/// A buffer a send can read: elements at an address, with a datatype.
///
/// # Safety
/// `pointer()`, `count()` and `as_datatype()` must agree on memory that is readable.
pub unsafe trait Buffer: Pointer + Collection + AsDatatype {}

/// A buffer a receive can write.
///
/// # Safety
/// `pointer_mut()`, `count()` and `as_datatype()` must agree on memory that is writable,
/// and every value the datatype admits must be a valid element.
pub unsafe trait BufferMut: PointerMut + Collection + AsDatatype {}

// --- T: Equivalence ---------------------------------------------------------------

// SAFETY: a reference to one T is readable for size_of::<T>() bytes.
unsafe impl<T: Equivalence> Pointer for T {
    fn pointer(&self) -> *const c_void {
        self as *const T as *const c_void
    }
}
// SAFETY: as above, writable through &mut.
unsafe impl<T: Equivalence> PointerMut for T {
    fn pointer_mut(&mut self) -> *mut c_void {
        self as *mut T as *mut c_void
    }
}
// SAFETY: one element.
unsafe impl<T: Equivalence> Collection for T {
    fn count(&self) -> Count {
        1
    }
}
impl<T: Equivalence> AsDatatype for T {
    type Out = <T as Equivalence>::Out;
    fn as_datatype(&self) -> Self::Out {
        T::equivalent_datatype()
    }
}
// SAFETY: the pieces above agree.
unsafe impl<T: Equivalence> Buffer for T {}
// SAFETY: the pieces above agree; Equivalence promises the datatype's values are Ts.
unsafe impl<T: Equivalence> BufferMut for T {}

// --- [T] ---------------------------------------------------------------------------

// SAFETY: a slice is readable over its length.
unsafe impl<T: Equivalence> Pointer for [T] {
    fn pointer(&self) -> *const c_void {
        self.as_ptr() as *const c_void
    }
}
// SAFETY: a mutable slice is writable over its length.
unsafe impl<T: Equivalence> PointerMut for [T] {
    fn pointer_mut(&mut self) -> *mut c_void {
        self.as_mut_ptr() as *mut c_void
    }
}
// SAFETY: the slice's length, saturated (counts are MPI ints).
unsafe impl<T: Equivalence> Collection for [T] {
    fn count(&self) -> Count {
        self.len().min(Count::MAX as usize) as Count
    }
}
impl<T: Equivalence> AsDatatype for [T] {
    type Out = <T as Equivalence>::Out;
    fn as_datatype(&self) -> Self::Out {
        T::equivalent_datatype()
    }
}
// SAFETY: the pieces above agree.
unsafe impl<T: Equivalence> Buffer for [T] {}
// SAFETY: the pieces above agree.
unsafe impl<T: Equivalence> BufferMut for [T] {}

// --- [T; N] ------------------------------------------------------------------------
// As in rsmpi: an array is a buffer of N elements of T.

// SAFETY: an array is readable over its length.
unsafe impl<T: Equivalence, const N: usize> Pointer for [T; N] {
    fn pointer(&self) -> *const c_void {
        self.as_ptr() as *const c_void
    }
}
// SAFETY: a mutable array is writable over its length.
unsafe impl<T: Equivalence, const N: usize> PointerMut for [T; N] {
    fn pointer_mut(&mut self) -> *mut c_void {
        self.as_mut_ptr() as *mut c_void
    }
}
// SAFETY: the array's length, saturated.
unsafe impl<T: Equivalence, const N: usize> Collection for [T; N] {
    fn count(&self) -> Count {
        N.min(Count::MAX as usize) as Count
    }
}
impl<T: Equivalence, const N: usize> AsDatatype for [T; N] {
    type Out = <T as Equivalence>::Out;
    fn as_datatype(&self) -> Self::Out {
        T::equivalent_datatype()
    }
}
// SAFETY: the pieces above agree.
unsafe impl<T: Equivalence, const N: usize> Buffer for [T; N] {}
// SAFETY: the pieces above agree.
unsafe impl<T: Equivalence, const N: usize> BufferMut for [T; N] {}

// --- Vec<T> ------------------------------------------------------------------------

// SAFETY: as the slice.
unsafe impl<T: Equivalence> Pointer for Vec<T> {
    fn pointer(&self) -> *const c_void {
        self.as_ptr() as *const c_void
    }
}
// SAFETY: as the slice.
unsafe impl<T: Equivalence> PointerMut for Vec<T> {
    fn pointer_mut(&mut self) -> *mut c_void {
        self.as_mut_ptr() as *mut c_void
    }
}
// SAFETY: as the slice.
unsafe impl<T: Equivalence> Collection for Vec<T> {
    fn count(&self) -> Count {
        self.len().min(Count::MAX as usize) as Count
    }
}
impl<T: Equivalence> AsDatatype for Vec<T> {
    type Out = <T as Equivalence>::Out;
    fn as_datatype(&self) -> Self::Out {
        T::equivalent_datatype()
    }
}
// SAFETY: the pieces above agree.
unsafe impl<T: Equivalence> Buffer for Vec<T> {}
// SAFETY: the pieces above agree.
unsafe impl<T: Equivalence> BufferMut for Vec<T> {}

// --- byte views used by the communication layers -------------------------------------

fn check_layout(dt: &DatatypeRef<'_>, call: &str) -> Result<()> {
    if dt.is_contiguous() {
        Ok(())
    } else {
        Err(Error::unsupported(
            call,
            format!("the non-contiguous datatype {}", dt.name()),
        ))
    }
}

/// The core's region of a buffer borrowed shared, with its datatype `dt` borrowed.
fn region_in<'b, 'd, B: Pointer + Collection + ?Sized>(
    buf: &'b B,
    dt: &'d CoreDatatype,
) -> Region<'b, &'d CoreDatatype> {
    let count = buf.count().max(0) as usize;
    // SAFETY: rsmpi's `Buffer` contract (`Pointer` + `Collection` + `AsDatatype`): `count()` elements of the datatype at `pointer()` are readable, unchanged, while `buf` is borrowed.
    unsafe { Region::shared(buf.pointer() as *const u8, count, dt) }
}

/// The proof that any bytes make a valid `T` (for memory other processes write as
/// bytes: windows), if `T`'s datatype says so: its elements have no invalid values
/// (no `bool`/`char`: MPI_ERR_TYPE) and it covers `T` whole, contiguously.
pub(crate) fn any_bytes<T: Equivalence + Copy>(call: &str) -> Result<oxmpi_core::buf::AnyBytes<T>> {
    let d = T::equivalent_datatype();
    let r = d.as_datatype_ref();
    if r.has_element_check() {
        return Err(Error::new(
            ErrorClass::Type,
            format!("{call}: {} has values a remote write could make invalid (bool, char); use an integer type", r.name()),
        ));
    }
    if r.size() != std::mem::size_of::<T>() || !r.is_contiguous() {
        return Err(Error::new(
            ErrorClass::Type,
            format!("{call}: window elements must be plain contiguous values"),
        ));
    }
    // SAFETY: `Equivalence`'s contract: `T`'s datatype describes its bytes, each element's bytes any value of its primitive type; checked above: none of those types has invalid values, and they cover all `size_of::<T>()` bytes (no padding), so every byte pattern is a valid `T` (plain data, without drop glue: `Equivalence` types are `Copy` here, and in rsmpi's contract).
    Ok(unsafe { oxmpi_core::buf::AnyBytes::vouch() })
}

/// The core's region of a buffer borrowed exclusively, with its datatype `dt` borrowed.
fn region_out<'b, 'd, B: PointerMut + Collection + ?Sized>(
    buf: &'b mut B,
    dt: &'d CoreDatatype,
) -> Region<'b, &'d CoreDatatype> {
    let count = buf.count().max(0) as usize;
    // SAFETY: rsmpi's `BufferMut` contract: `count()` elements of the datatype at `pointer_mut()` are writable with any bytes, and only through `buf`, while it is borrowed exclusively.
    unsafe { Region::exclusive(buf.pointer_mut() as *mut u8, count, dt) }
}

/// A buffer as the engine's typed calls take it: the core's [`Region`] (base address,
/// count, datatype, and the lifetime `'a` of the borrow it was taken from; `typed_in`:
/// shared, so the memory may be read for `'a`; see [`TypedMut`] for an exclusive one)
/// and the element check of its datatype.
pub(crate) struct Typed<'a> {
    pub(crate) region: Region<'a>,
    pub(crate) count: usize,
    pub(crate) check: Checker,
}

/// A [`Typed`] taken from an exclusive borrow (`typed_out`): the memory may also be
/// written for `'a`, so it hands out receive descriptors safely.
pub(crate) struct TypedMut<'a>(Typed<'a>);

impl<'a> std::ops::Deref for TypedMut<'a> {
    type Target = Typed<'a>;
    fn deref(&self) -> &Typed<'a> {
        &self.0
    }
}

impl<'a> TypedMut<'a> {
    /// The exclusive region, for an operation that keeps it (partitioned receives).
    pub(crate) fn into_region(self) -> Region<'a> {
        self.0.region
    }

    /// The buffer as a receive descriptor, for as long as `self` is borrowed.
    pub(crate) fn desc_mut(&mut self) -> oxmpi_core::buf::RecvBuf<'_, '_> {
        let n = self.0.count;
        self.desc_mut_n(n)
    }

    /// The buffer's data bytes, when its datatype is contiguous (for results the API
    /// writes itself, such as a reduction converted between integer types).
    pub(crate) fn data_bytes_mut(&mut self) -> Option<&mut [u8]> {
        self.0.region.bytes_mut()
    }

    /// The first `n` elements (at most the buffer's count) as a receive descriptor.
    pub(crate) fn desc_mut_n(&mut self, n: usize) -> oxmpi_core::buf::RecvBuf<'_, '_> {
        self.0.region.recv(n)
    }

    /// The buffer as a receive descriptor for `'a`, for the one immediate operation that
    /// `w` starts; afterwards no other descriptor of it is handed out.
    pub(crate) fn lend_mut(
        &mut self,
        w: &impl oxmpi_core::buf::BufScope<'a>,
    ) -> oxmpi_core::buf::RecvBuf<'a, '_> {
        let n = self.0.count;
        self.lend_mut_n(w, n)
    }

    /// The first `n` elements (at most the buffer's count) as [`lend_mut`](Self::lend_mut).
    pub(crate) fn lend_mut_n(
        &mut self,
        w: &impl oxmpi_core::buf::BufScope<'a>,
        n: usize,
    ) -> oxmpi_core::buf::RecvBuf<'a, '_> {
        self.0.region.lend_recv(w, n)
    }

    /// The element check of the whole buffer once an operation on it has completed.
    pub(crate) fn check_out(&mut self, call: &str) -> Result<()> {
        let check = self.0.check;
        if check.0.is_none() {
            return Ok(());
        }
        match self.0.region.bytes_mut() {
            Some(bytes) => {
                let n = bytes.len();
                check.check(bytes, n, call)
            }
            None => Ok(()),
        }
    }

    /// Checks the `nbytes` a receive wrote, for the contiguous runs of `bool`/`char`
    /// the element check covers (others need none).
    pub(crate) fn check_received(&mut self, nbytes: usize, call: &str) -> Result<()> {
        let check = self.0.check;
        if check.0.is_none() {
            return Ok(());
        }
        match self.0.region.bytes_mut() {
            Some(bytes) => check.check(bytes, nbytes, call),
            None => Ok(()),
        }
    }
}

impl<'a> Typed<'a> {
    /// The datatype of the elements.
    pub(crate) fn dt(&self) -> &CoreDatatype {
        self.region.datatype()
    }

    /// The buffer as a send descriptor, for as long as `self` is borrowed.
    pub(crate) fn desc(&self) -> oxmpi_core::buf::SendBuf<'_, '_> {
        self.region.send(self.count)
    }

    /// The buffer (a shared borrow for `'a`) as a send descriptor for `'a`, for the
    /// immediate operation that `w` starts.
    pub(crate) fn lend(&self, w: &Start<'a>) -> oxmpi_core::buf::SendBuf<'a, '_> {
        self.region.lend_send(w, self.count)
    }
}

/// What a send reads: bytes (contiguous) or a typed buffer.
pub(crate) enum SendSpec<'b> {
    Bytes(&'b [u8]),
    Typed(Typed<'b>),
}

pub(crate) fn send_spec<'b, B: Buffer + ?Sized>(buf: &'b B, _call: &str) -> Result<SendSpec<'b>> {
    let dt = buf.as_datatype();
    let d = dt.as_datatype_ref();
    // One look at the datatype (the region's bytes exist for a contiguous one only):
    // per small message the repeated looks cost more than the ring push (PROFILE.md, rate18).
    match region_in(buf, d.core).into_bytes() {
        Some(bytes) => Ok(SendSpec::Bytes(bytes)),
        None => Ok(SendSpec::Typed(typed_in(buf))),
    }
}

/// The engine's view of a send buffer.
pub(crate) fn typed_in<B: Pointer + Collection + AsDatatype + ?Sized>(buf: &B) -> Typed<'_> {
    let dt = buf.as_datatype();
    let d = dt.as_datatype_ref();
    let region = region_in(buf, d.core).into_owned();
    let count = region.count();
    Typed {
        region,
        count,
        check: Checker(d.check),
    }
}

/// The engine's view of a receive buffer.
pub(crate) fn typed_out<B: PointerMut + Collection + AsDatatype + ?Sized>(
    buf: &mut B,
) -> TypedMut<'_> {
    let dt = buf.as_datatype();
    let d = dt.as_datatype_ref();
    let check = Checker(d.check);
    let region = region_out(buf, d.core).into_owned();
    let count = region.count();
    TypedMut(Typed {
        region,
        count,
        check,
    })
}

impl Typed<'_> {
    /// The element check of the whole buffer, for completion of a collective.
    pub(crate) fn target(&self) -> Option<RecvTarget> {
        let dt = self.dt();
        if self.check.0.is_none() || !dt.is_contiguous() {
            return None;
        }
        Some(RecvTarget {
            check: self.check,
            whole: true,
        })
    }
}

/// What a receive writes: bytes (contiguous) or a typed buffer, exclusively borrowed
/// for `'a`.
pub(crate) enum RecvSpec<'a> {
    Bytes(RecvBytes<'a>),
    Typed(TypedMut<'a>),
}

/// The bytes a receive writes, exclusively borrowed for `'a` and initialized, with
/// the element check of their datatype.
pub(crate) struct RecvBytes<'a> {
    bytes: &'a mut [u8],
    check: Checker,
}

impl<'a> RecvBytes<'a> {
    /// The bytes themselves, for as long as `self` is borrowed.
    pub(crate) fn bytes(&mut self) -> &mut [u8] {
        self.bytes
    }

    /// The bytes as a receive descriptor, for as long as `self` is borrowed.
    pub(crate) fn desc_mut(&mut self) -> oxmpi_core::buf::RecvBuf<'_, 'static> {
        oxmpi_core::buf::RecvBuf::bytes(self.bytes())
    }

    /// Checks the elements of the first `nbytes` received (at most all of them).
    pub(crate) fn check(&mut self, nbytes: usize, call: &str) -> Result<()> {
        let n = nbytes.min(self.bytes.len());
        self.check.check(self.bytes, n, call)
    }

    /// The bytes as a receive descriptor for `'a`, for the one immediate operation `w`
    /// starts, and the target to check once it completed.
    pub(crate) fn lend(
        self,
        _w: &impl oxmpi_core::buf::BufScope<'a>,
    ) -> (oxmpi_core::buf::RecvBuf<'a, 'static>, RecvTarget) {
        let t = RecvTarget {
            check: self.check,
            whole: false,
        };
        (oxmpi_core::buf::RecvBuf::bytes(self.bytes), t)
    }
}

impl<'a> RecvBytes<'a> {
    /// [`lend`](Self::lend) as the bytes themselves, for core's lean entry
    /// ([`irecv_bytes`](oxmpi_core::pt2pt::irecv_bytes), which enters its request
    /// into `w`).
    pub(crate) fn lend_bytes(
        self,
        _w: &impl oxmpi_core::buf::BufScope<'a>,
    ) -> (&'a mut [u8], RecvTarget) {
        let t = RecvTarget {
            check: self.check,
            whole: false,
        };
        (self.bytes, t)
    }
}

pub(crate) fn recv_spec<'a, B: BufferMut + ?Sized>(
    buf: &'a mut B,
    _call: &str,
) -> Result<RecvSpec<'a>> {
    let dt = buf.as_datatype();
    let d = dt.as_datatype_ref();
    if !d.is_contiguous() {
        return Ok(RecvSpec::Typed(typed_out(buf)));
    }
    // As `send_spec`: the datatype looked at once.
    let check = Checker(d.check);
    let bytes = region_out(buf, d.core)
        .into_bytes_mut()
        .expect("a contiguous datatype has data bytes");
    Ok(RecvSpec::Bytes(RecvBytes { bytes, check }))
}

/// Memory for `n` values of `T` that a receive writes (core's [`Zeroed`](oxmpi_core::buf::Zeroed):
/// zeroed, so the bytes a datatype skips, padding, are initialized too), handed back as
/// values once it did ([`into_values`](Slots::into_values)).
pub(crate) struct Slots<T>(oxmpi_core::buf::Zeroed<T>);

impl<T: Equivalence> Slots<T> {
    /// Memory for `n` values.
    pub(crate) fn new(n: usize) -> Slots<T> {
        Slots(oxmpi_core::buf::Zeroed::new(n))
    }

    /// How a receive writes the values.
    pub(crate) fn spec(&mut self, call: &str) -> Result<RecvSpec<'_>> {
        let n = self.0.len();
        value_spec::<T>(self.0.bytes_mut(), n, call)
    }

    /// The values a receive of `count_bytes` bytes wrote: an MPI_ERR_COUNT error naming
    /// `call` unless `count_bytes` is `want` whole values (`None`: any whole number of
    /// them, at most all), an MPI_ERR_TYPE error if elements were not values of `T`
    /// (checked again here, so no invalid value ever comes out).
    pub(crate) fn into_values(
        mut self,
        count_bytes: usize,
        want: Option<usize>,
        call: &str,
    ) -> Result<Vec<T>> {
        let size = std::mem::size_of::<T>();
        let dt = T::equivalent_datatype();
        let d = dt.as_datatype_ref();
        let dsize = d.size().max(1);
        let n = count_bytes / dsize;
        if !count_bytes.is_multiple_of(dsize) || want.is_some_and(|w| w != n) || n > self.0.len() {
            return Err(Error::new(
                ErrorClass::Count,
                format!(
                    "{call}: received {count_bytes} bytes where {} value(s) of {} bytes were expected",
                    want.map_or("whole".to_string(), |w| w.to_string()),
                    d.size()
                ),
            ));
        }
        self.0.truncate(n);
        if d.is_contiguous() && d.size() == size && d.core.true_lb() == 0 {
            Checker(d.check).check(self.0.bytes_mut(), n * size, call)?;
        }
        // SAFETY: `Equivalence`'s contract: the bytes a message of `T`'s datatype carries (zero bytes among them; checked above for the types with invalid patterns, as the receive did) make a valid `T`, the bytes it skips being padding.
        Ok(unsafe { self.0.assume_init() })
    }
}

/// How a receive writes `elems` values of `T` into their (initialized) bytes: as bytes
/// when `T`'s datatype is its own bytes, typed (unpacked by the engine) when it has
/// gaps (a derived struct with padding, an array of such structs).
pub(crate) fn value_spec<'a, T: Equivalence>(
    bytes: &'a mut [u8],
    elems: usize,
    call: &str,
) -> Result<RecvSpec<'a>> {
    let dt = T::equivalent_datatype();
    let d = dt.as_datatype_ref();
    if d.is_contiguous() && d.size() == std::mem::size_of::<T>() && d.core.true_lb() == 0 {
        raw_layout::<T>(call)?;
        let check = Checker(d.check);
        let len = elems * d.size();
        return Ok(RecvSpec::Bytes(RecvBytes {
            bytes: &mut bytes[..len],
            check,
        }));
    }
    if d.extent() != std::mem::size_of::<T>() as Address || d.size() > std::mem::size_of::<T>() {
        return Err(Error::new(
            ErrorClass::Type,
            format!(
                "{call}: datatype {} has extent {} but the Rust type has {} bytes",
                d.name(),
                d.extent(),
                std::mem::size_of::<T>()
            ),
        ));
    }
    let region = Region::of_bytes(call, bytes, elems, d.core.clone())?;
    Ok(RecvSpec::Typed(TypedMut(Typed {
        region,
        count: elems,
        check: Checker(d.check),
    })))
}

/// The element check of a datatype: `Some` for runs of `bool`/`char`.
#[derive(Clone, Copy)]
pub(crate) struct Checker(Option<&'static Prim>);

impl Checker {
    /// Checks (and fixes) the elements of the first `nbytes` of `bytes`.
    pub(crate) fn check(&self, bytes: &mut [u8], nbytes: usize, call: &str) -> Result<()> {
        let cap = bytes.len();
        let Some(base) = self.0 else {
            return Ok(());
        };
        let Some(valid) = base.valid else {
            return Ok(());
        };
        let end = nbytes
            .div_ceil(base.size)
            .saturating_mul(base.size)
            .min(cap);
        let mut bad = 0usize;
        let mut off = 0;
        while off + base.size <= end {
            let elem = &mut bytes[off..off + base.size];
            if !valid(elem) {
                elem.copy_from_slice(base.fallback);
                bad += 1;
            }
            off += base.size;
        }
        if bad == 0 {
            Ok(())
        } else {
            Err(Error::new(
                ErrorClass::Type,
                format!("{call}: {bad} received element(s) are not valid values of {} (set to the zero value)", base.name),
            ))
        }
    }
}

/// The element check of what a receive writes into its buffer, made where the
/// operation starts and run once it completed, over the buffer's bytes then
/// ([`received_bytes`]: the request hands the buffer back first).
#[derive(Clone, Copy)]
pub(crate) struct RecvTarget {
    pub(crate) check: Checker,
    /// Check all the bytes on completion, whatever the status says (collectives).
    pub(crate) whole: bool,
}

impl RecvTarget {
    /// Whether [`after`](Self::after) can find anything to fix (elements of `bool` or
    /// `char`): a receive of other types keeps no target, so its completion looks at
    /// nothing.
    pub(crate) fn checks_values(&self) -> bool {
        self.check.0.is_some_and(|p| p.valid.is_some())
    }

    /// Checks the `nbytes` received into `bytes` (all of them if `whole`).
    pub(crate) fn after(&self, bytes: &mut [u8], nbytes: usize, call: &str) -> Result<()> {
        let n = if self.whole {
            bytes.len()
        } else {
            nbytes.min(bytes.len())
        };
        if bytes.is_empty() || self.check.0.is_none() {
            return Ok(());
        }
        self.check.check(bytes, n, call)
    }
}

/// The bytes a receive into `buf` wrote, when they are one span (contiguous
/// datatypes): where [`RecvTarget`]s look once the buffer is back.
pub(crate) fn received_bytes<B: PointerMut + Collection + AsDatatype + ?Sized>(
    buf: &mut B,
) -> Option<&mut [u8]> {
    typed_out(buf).into_region().into_bytes_mut()
}

/// Checks that `T`'s datatype can be moved as its bytes (contiguous, `size_of::<T>()`
/// bytes from offset 0).
fn raw_layout<T: Equivalence>(call: &str) -> Result<()> {
    let dt = T::equivalent_datatype();
    let dt = dt.as_datatype_ref();
    check_layout(&dt, call)?;
    if dt.size() != std::mem::size_of::<T>() || dt.core.true_lb() != 0 {
        return Err(Error::new(
            ErrorClass::Type,
            format!(
                "{call}: datatype {} has {} bytes but the Rust type has {}",
                dt.name(),
                dt.size(),
                std::mem::size_of::<T>()
            ),
        ));
    }
    Ok(())
}

// --- UserDatatype ----------------------------------------------------------------------

/// A datatype built by the user (`MPI_Type_vector`, `MPI_Type_create_struct`, ...),
/// committed on creation and freed when dropped.
///
/// The rsmpi-named constructors abort the job on an invalid argument; each has a
/// `try_` twin returning [`Result`].
///
/// ```
/// use oxmpi::datatype::UserDatatype;
/// use oxmpi::traits::*;
/// // Column of a 4x3 row-major i32 matrix: 4 blocks of 1, 3 elements apart.
/// let column = UserDatatype::vector(4, 1, 3, &i32::equivalent_datatype());
/// assert_eq!(column.size(), 16);
/// assert_eq!(column.extent(), 40);
/// ```
pub struct UserDatatype(CoreDatatype);

/// What rsmpi calls a datatype that is not yet committed; oxmpi commits every
/// [`UserDatatype`] on creation, so this is the same type.
pub type UncommittedUserDatatype = UserDatatype;
/// A reference to a datatype usable to build others (rsmpi's name); see [`DatatypeRef`].
pub type UncommittedDatatypeRef<'a> = DatatypeRef<'a>;

fn count_arg(call: &str, arg: &str, v: Count) -> Result<i64> {
    if v < 0 {
        Err(Error::arg(
            ErrorClass::Count,
            call,
            arg,
            format!("{v} is negative"),
        ))
    } else {
        Ok(v as i64)
    }
}

fn counts_arg(call: &str, arg: &str, v: &[Count]) -> Result<Vec<i64>> {
    v.iter().map(|&c| count_arg(call, arg, c)).collect()
}

impl UserDatatype {
    fn wrap(dt: Result<CoreDatatype>) -> Result<UserDatatype> {
        let dt = dt?;
        dt.commit();
        Ok(UserDatatype(dt))
    }

    /// `count` consecutive copies of `oldtype` (`MPI_Type_contiguous`).
    pub fn contiguous<D: UncommittedDatatype>(count: Count, oldtype: &D) -> UserDatatype {
        Self::try_contiguous(count, oldtype).or_fatal()
    }
    /// [`contiguous`](Self::contiguous), reporting errors.
    pub fn try_contiguous<D: UncommittedDatatype>(
        count: Count,
        oldtype: &D,
    ) -> Result<UserDatatype> {
        let c = count_arg("MPI_Type_contiguous", "count", count)?;
        Self::wrap(CoreDatatype::contiguous(c, oldtype.as_datatype_ref().core))
    }

    /// `count` blocks of `blocklength` elements, `stride` elements apart (`MPI_Type_vector`).
    pub fn vector<D: UncommittedDatatype>(
        count: Count,
        blocklength: Count,
        stride: Count,
        oldtype: &D,
    ) -> UserDatatype {
        Self::try_vector(count, blocklength, stride, oldtype).or_fatal()
    }
    /// [`vector`](Self::vector), reporting errors.
    pub fn try_vector<D: UncommittedDatatype>(
        count: Count,
        blocklength: Count,
        stride: Count,
        oldtype: &D,
    ) -> Result<UserDatatype> {
        const CALL: &str = "MPI_Type_vector";
        let (c, b) = (
            count_arg(CALL, "count", count)?,
            count_arg(CALL, "blocklength", blocklength)?,
        );
        Self::wrap(CoreDatatype::vector(
            c,
            b,
            stride as i64,
            oldtype.as_datatype_ref().core,
        ))
    }

    /// Like [`vector`](Self::vector) with the stride in bytes (`MPI_Type_create_hvector`).
    pub fn heterogeneous_vector<D: UncommittedDatatype>(
        count: Count,
        blocklength: Count,
        stride: Address,
        oldtype: &D,
    ) -> UserDatatype {
        Self::try_heterogeneous_vector(count, blocklength, stride, oldtype).or_fatal()
    }
    /// [`heterogeneous_vector`](Self::heterogeneous_vector), reporting errors.
    pub fn try_heterogeneous_vector<D: UncommittedDatatype>(
        count: Count,
        blocklength: Count,
        stride: Address,
        oldtype: &D,
    ) -> Result<UserDatatype> {
        const CALL: &str = "MPI_Type_create_hvector";
        let (c, b) = (
            count_arg(CALL, "count", count)?,
            count_arg(CALL, "blocklength", blocklength)?,
        );
        Self::wrap(CoreDatatype::hvector(
            c,
            b,
            stride,
            oldtype.as_datatype_ref().core,
        ))
    }

    /// Blocks of `blocklengths[i]` elements at `displacements[i]` elements (`MPI_Type_indexed`).
    pub fn indexed<D: UncommittedDatatype>(
        blocklengths: &[Count],
        displacements: &[Count],
        oldtype: &D,
    ) -> UserDatatype {
        Self::try_indexed(blocklengths, displacements, oldtype).or_fatal()
    }
    /// [`indexed`](Self::indexed), reporting errors.
    pub fn try_indexed<D: UncommittedDatatype>(
        blocklengths: &[Count],
        displacements: &[Count],
        oldtype: &D,
    ) -> Result<UserDatatype> {
        let b = counts_arg("MPI_Type_indexed", "blocklengths", blocklengths)?;
        let d: Vec<i64> = displacements.iter().map(|&x| x as i64).collect();
        Self::wrap(CoreDatatype::indexed(
            &b,
            &d,
            oldtype.as_datatype_ref().core,
        ))
    }

    /// Like [`indexed`](Self::indexed) with displacements in bytes (`MPI_Type_create_hindexed`).
    pub fn heterogeneous_indexed<D: UncommittedDatatype>(
        blocklengths: &[Count],
        displacements: &[Address],
        oldtype: &D,
    ) -> UserDatatype {
        Self::try_heterogeneous_indexed(blocklengths, displacements, oldtype).or_fatal()
    }
    /// [`heterogeneous_indexed`](Self::heterogeneous_indexed), reporting errors.
    pub fn try_heterogeneous_indexed<D: UncommittedDatatype>(
        blocklengths: &[Count],
        displacements: &[Address],
        oldtype: &D,
    ) -> Result<UserDatatype> {
        let b = counts_arg("MPI_Type_create_hindexed", "blocklengths", blocklengths)?;
        Self::wrap(CoreDatatype::hindexed(
            &b,
            displacements,
            oldtype.as_datatype_ref().core,
        ))
    }

    /// Blocks of `blocklength` elements at `displacements[i]` elements
    /// (`MPI_Type_create_indexed_block`).
    pub fn indexed_blocks<D: UncommittedDatatype>(
        blocklength: Count,
        displacements: &[Count],
        oldtype: &D,
    ) -> UserDatatype {
        Self::try_indexed_blocks(blocklength, displacements, oldtype).or_fatal()
    }
    /// [`indexed_blocks`](Self::indexed_blocks), reporting errors.
    pub fn try_indexed_blocks<D: UncommittedDatatype>(
        blocklength: Count,
        displacements: &[Count],
        oldtype: &D,
    ) -> Result<UserDatatype> {
        let b = count_arg("MPI_Type_create_indexed_block", "blocklength", blocklength)?;
        let d: Vec<i64> = displacements.iter().map(|&x| x as i64).collect();
        Self::wrap(CoreDatatype::indexed_block(
            b,
            &d,
            oldtype.as_datatype_ref().core,
        ))
    }

    /// Like [`indexed_blocks`](Self::indexed_blocks) with displacements in bytes
    /// (`MPI_Type_create_hindexed_block`).
    pub fn heterogeneous_indexed_blocks<D: UncommittedDatatype>(
        blocklength: Count,
        displacements: &[Address],
        oldtype: &D,
    ) -> UserDatatype {
        Self::try_heterogeneous_indexed_blocks(blocklength, displacements, oldtype).or_fatal()
    }
    /// [`heterogeneous_indexed_blocks`](Self::heterogeneous_indexed_blocks), reporting errors.
    pub fn try_heterogeneous_indexed_blocks<D: UncommittedDatatype>(
        blocklength: Count,
        displacements: &[Address],
        oldtype: &D,
    ) -> Result<UserDatatype> {
        let b = count_arg("MPI_Type_create_hindexed_block", "blocklength", blocklength)?;
        Self::wrap(CoreDatatype::hindexed_block(
            b,
            displacements,
            oldtype.as_datatype_ref().core,
        ))
    }

    /// Blocks of `blocklengths[i]` elements of `types[i]` at byte `displacements[i]`
    /// (`MPI_Type_create_struct`).
    pub fn structured<D: UncommittedDatatype>(
        blocklengths: &[Count],
        displacements: &[Address],
        types: &[D],
    ) -> UserDatatype {
        Self::try_structured(blocklengths, displacements, types).or_fatal()
    }
    /// [`structured`](Self::structured), reporting errors.
    pub fn try_structured<D: UncommittedDatatype>(
        blocklengths: &[Count],
        displacements: &[Address],
        types: &[D],
    ) -> Result<UserDatatype> {
        let b = counts_arg("MPI_Type_create_struct", "blocklengths", blocklengths)?;
        let t: Vec<CoreDatatype> = types
            .iter()
            .map(|d| d.as_datatype_ref().core.clone())
            .collect();
        Self::wrap(CoreDatatype::structure(&b, displacements, &t))
    }

    /// `oldtype` with lower bound `lb` and extent `extent` (`MPI_Type_create_resized`).
    pub fn resized<D: UncommittedDatatype>(
        oldtype: &D,
        lb: Address,
        extent: Address,
    ) -> UserDatatype {
        Self::try_resized(oldtype, lb, extent).or_fatal()
    }
    /// [`resized`](Self::resized), reporting errors.
    pub fn try_resized<D: UncommittedDatatype>(
        oldtype: &D,
        lb: Address,
        extent: Address,
    ) -> Result<UserDatatype> {
        Self::wrap(CoreDatatype::resized(
            oldtype.as_datatype_ref().core,
            lb,
            extent,
        ))
    }

    /// A copy of `oldtype` (`MPI_Type_dup`).
    pub fn dup<D: Datatype>(oldtype: &D) -> UserDatatype {
        let d = CoreDatatype::dup(oldtype.as_datatype_ref().core);
        d.commit();
        UserDatatype(d)
    }

    /// A descriptor referring to this datatype.
    pub fn as_ref(&self) -> DatatypeRef<'_> {
        DatatypeRef::from_core(&self.0)
    }

    /// Bytes of data in one element (`MPI_Type_size`).
    pub fn size(&self) -> usize {
        self.0.size()
    }

    /// Bytes from one element to the next (`MPI_Type_get_extent`).
    pub fn extent(&self) -> Address {
        self.0.extent()
    }

    /// The engine datatype.
    pub fn as_core(&self) -> &CoreDatatype {
        &self.0
    }
}

impl Clone for UserDatatype {
    fn clone(&self) -> UserDatatype {
        UserDatatype::dup(self)
    }
}

impl fmt::Debug for UserDatatype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UserDatatype({:?})", self.0)
    }
}

// SAFETY: the descriptor refers to this datatype.
unsafe impl Datatype for UserDatatype {
    fn as_datatype_ref(&self) -> DatatypeRef<'_> {
        self.as_ref()
    }
}

/// A datatype usable to build other datatypes (rsmpi's bound on the constructors'
/// arguments). Every [`Datatype`] is one in oxmpi.
pub trait UncommittedDatatype: Datatype {
    /// A new datatype, a copy of this one (`MPI_Type_dup`).
    ///
    /// ```
    /// use oxmpi::traits::*;
    /// let t = i32::equivalent_datatype().dup();
    /// assert_eq!(t.size(), 4);
    /// ```
    fn dup(&self) -> UserDatatype {
        let d = CoreDatatype::dup(self.as_datatype_ref().core);
        d.commit();
        UserDatatype(d)
    }
}
impl<D: Datatype + ?Sized> UncommittedDatatype for D {}

// --- View / MutView ---------------------------------------------------------------------

/// A buffer seen through an arbitrary datatype: `count` elements of `datatype` at the
/// address of `buffer` (send side).
pub struct View<'d, 'b, D, B: ?Sized>
where
    D: 'd + Datatype,
    B: 'b + Pointer,
{
    datatype: &'d D,
    count: Count,
    buffer: &'b B,
}

impl<'d, 'b, D, B: ?Sized> View<'d, 'b, D, B>
where
    D: 'd + Datatype,
    B: 'b + Pointer,
{
    /// A view of `count` elements of `datatype` at `buffer`.
    ///
    /// # Safety
    /// `count` elements of `datatype`, laid out from the address of `buffer`, must lie
    /// inside the memory `buffer` borrows.
    pub unsafe fn with_count_and_datatype(buffer: &'b B, count: Count, datatype: &'d D) -> Self {
        View {
            datatype,
            count,
            buffer,
        }
    }
}

impl<'d, 'b, D: 'd + Datatype, T: AnyBitPattern> View<'d, 'b, D, [T]> {
    /// A view of `count` elements of `datatype` laid out from the start of `buffer`,
    /// checked to reach only `buffer`'s memory (an MPI_ERR_BUFFER error otherwise): the
    /// safe form of [`with_count_and_datatype`](Self::with_count_and_datatype) for
    /// plain element types (an oxmpi extension).
    ///
    /// ```
    /// use oxmpi::datatype::{UserDatatype, View};
    /// use oxmpi::traits::*;
    /// let every_other = UserDatatype::vector(2, 1, 2, &i32::equivalent_datatype());
    /// let v = [1i32, 0, 2, 0];
    /// assert!(View::checked(&v[..], 1, &every_other).is_ok());
    /// assert!(View::checked(&v[..2], 1, &every_other).is_err());
    /// ```
    pub fn checked(buffer: &'b [T], count: Count, datatype: &'d D) -> Result<Self> {
        check_view(
            "View::checked",
            std::mem::size_of_val(buffer),
            count,
            datatype,
        )?;
        Ok(View {
            datatype,
            count,
            buffer,
        })
    }
}

/// `count` elements of `datatype` from offset 0 reach only `len` bytes.
fn check_view<D: Datatype + ?Sized>(
    call: &str,
    len: usize,
    count: Count,
    datatype: &D,
) -> Result<()> {
    let c = count_arg(call, "count", count)? as usize;
    oxmpi_core::buf::check_fits(call, "buffer", len, c, datatype.as_datatype_ref().core)
}

/// Plain element types: no padding, and every bit pattern a valid value. What
/// [`View::checked`] and [`MutView::checked`] need besides the reach check, since a
/// datatype over the buffer may read or write any of its bytes as any of its elements.
///
/// # Safety
/// `Self` has no padding bytes, and every bit pattern of `size_of::<Self>()` bytes is
/// a valid `Self`.
pub unsafe trait AnyBitPattern: Equivalence + Copy {}

macro_rules! any_bit_pattern {
    ($($t:ty),*) => {
        // SAFETY: fixed-size integers and floats: every bit pattern is a value.
        $( unsafe impl AnyBitPattern for $t {} )*
    };
}
any_bit_pattern!(i8, u8, i16, u16, i32, u32, i64, u64, isize, usize, f32, f64);

impl<'d, 'b, D: 'd + Datatype, T: AnyBitPattern> MutView<'d, 'b, D, [T]> {
    /// A view of `count` elements of `datatype` laid out from the start of `buffer`,
    /// checked to reach only `buffer`'s memory (an MPI_ERR_BUFFER error otherwise): the
    /// safe form of [`with_count_and_datatype`](Self::with_count_and_datatype) for
    /// element types that take any bytes (an oxmpi extension).
    pub fn checked(buffer: &'b mut [T], count: Count, datatype: &'d D) -> Result<Self> {
        check_view(
            "MutView::checked",
            std::mem::size_of_val(buffer),
            count,
            datatype,
        )?;
        Ok(MutView {
            datatype,
            count,
            buffer,
        })
    }
}

impl<'d, D: 'd + Datatype, B: ?Sized + Pointer> AsDatatype for View<'d, '_, D, B> {
    type Out = &'d D;
    fn as_datatype(&self) -> Self::Out {
        self.datatype
    }
}
// SAFETY: the unsafe constructor vouches for the count.
unsafe impl<'d, D: 'd + Datatype, B: ?Sized + Pointer> Collection for View<'d, '_, D, B> {
    fn count(&self) -> Count {
        self.count
    }
}
// SAFETY: the address of the borrowed buffer.
unsafe impl<'d, D: 'd + Datatype, B: ?Sized + Pointer> Pointer for View<'d, '_, D, B> {
    fn pointer(&self) -> *const c_void {
        self.buffer.pointer()
    }
}
// SAFETY: the constructor's contract.
unsafe impl<'d, D: 'd + Datatype, B: ?Sized + Pointer> Buffer for View<'d, '_, D, B> {}

/// A mutable buffer seen through an arbitrary datatype (receive side).
pub struct MutView<'d, 'b, D, B: ?Sized>
where
    D: 'd + Datatype,
    B: 'b + PointerMut,
{
    datatype: &'d D,
    count: Count,
    buffer: &'b mut B,
}

impl<'d, 'b, D, B: ?Sized> MutView<'d, 'b, D, B>
where
    D: 'd + Datatype,
    B: 'b + PointerMut,
{
    /// A view of `count` elements of `datatype` at `buffer`.
    ///
    /// # Safety
    /// `count` elements of `datatype`, laid out from the address of `buffer`, must lie
    /// inside the memory `buffer` borrows, and every value the datatype can carry must
    /// be valid there.
    pub unsafe fn with_count_and_datatype(
        buffer: &'b mut B,
        count: Count,
        datatype: &'d D,
    ) -> Self {
        MutView {
            datatype,
            count,
            buffer,
        }
    }
}

impl<'d, D: 'd + Datatype, B: ?Sized + PointerMut> AsDatatype for MutView<'d, '_, D, B> {
    type Out = &'d D;
    fn as_datatype(&self) -> Self::Out {
        self.datatype
    }
}
// SAFETY: the unsafe constructor vouches for the count.
unsafe impl<'d, D: 'd + Datatype, B: ?Sized + PointerMut> Collection for MutView<'d, '_, D, B> {
    fn count(&self) -> Count {
        self.count
    }
}
// SAFETY: the address of the exclusively borrowed buffer.
unsafe impl<'d, D: 'd + Datatype, B: ?Sized + PointerMut> PointerMut for MutView<'d, '_, D, B> {
    fn pointer_mut(&mut self) -> *mut c_void {
        self.buffer.pointer_mut()
    }
}
// SAFETY: the constructor's contract.
unsafe impl<'d, D: 'd + Datatype, B: ?Sized + PointerMut> BufferMut for MutView<'d, '_, D, B> {}

// --- Partition / PartitionMut -----------------------------------------------------------

/// A buffer split into per-process parts: `counts()[i]` elements at `displs()[i]`
/// elements from the start (for the `*_varcount_*` collectives).
pub trait Partitioned {
    /// Elements of each part.
    fn counts(&self) -> &[Count];
    /// Where each part starts, in elements.
    fn displs(&self) -> &[Count];
}

/// A partitioned buffer to send from. `count()` is the whole buffer's element count,
/// which every part must fit in (checked by the collectives).
///
/// # Safety
/// As [`Buffer`].
pub unsafe trait PartitionedBuffer: Partitioned + Buffer {}

/// A partitioned buffer to receive into; `count()` as for [`PartitionedBuffer`].
///
/// # Safety
/// As [`BufferMut`].
pub unsafe trait PartitionedBufferMut: Partitioned + BufferMut {}

/// A buffer with counts and displacements, to send from.
///
/// ```
/// use oxmpi::datatype::Partition;
/// use oxmpi::traits::*;
/// let data = [1, 2, 3, 4, 5, 6];
/// let p = Partition::new(&data[..], vec![1, 2, 3], vec![0, 1, 3]);
/// assert_eq!(p.counts(), &[1, 2, 3]);
/// ```
pub struct Partition<'b, B: 'b + ?Sized, C, D> {
    buf: &'b B,
    counts: C,
    displs: D,
}

impl<'b, B, C, D> Partition<'b, B, C, D>
where
    B: 'b + Buffer + ?Sized,
    C: Borrow<[Count]>,
    D: Borrow<[Count]>,
{
    /// A partition of `buf` into `counts[i]` elements at displacements `displs[i]`.
    pub fn new(buf: &'b B, counts: C, displs: D) -> Partition<'b, B, C, D> {
        Partition {
            buf,
            counts,
            displs,
        }
    }
}

impl<B: ?Sized, C: Borrow<[Count]>, D: Borrow<[Count]>> Partitioned for Partition<'_, B, C, D> {
    fn counts(&self) -> &[Count] {
        self.counts.borrow()
    }
    fn displs(&self) -> &[Count] {
        self.displs.borrow()
    }
}
impl<B: Buffer + ?Sized, C, D> AsDatatype for Partition<'_, B, C, D> {
    type Out = <B as AsDatatype>::Out;
    fn as_datatype(&self) -> Self::Out {
        self.buf.as_datatype()
    }
}
// SAFETY: the whole buffer's count.
unsafe impl<B: Buffer + ?Sized, C, D> Collection for Partition<'_, B, C, D> {
    fn count(&self) -> Count {
        self.buf.count()
    }
}
// SAFETY: the buffer's address.
unsafe impl<B: Buffer + ?Sized, C, D> Pointer for Partition<'_, B, C, D> {
    fn pointer(&self) -> *const c_void {
        self.buf.pointer()
    }
}
// SAFETY: the pieces come from a Buffer.
unsafe impl<B: Buffer + ?Sized, C, D> Buffer for Partition<'_, B, C, D> {}
// SAFETY: as above.
unsafe impl<B: Buffer + ?Sized, C: Borrow<[Count]>, D: Borrow<[Count]>> PartitionedBuffer
    for Partition<'_, B, C, D>
{
}

/// A buffer with counts and displacements, to receive into.
pub struct PartitionMut<'b, B: 'b + ?Sized, C, D> {
    buf: &'b mut B,
    counts: C,
    displs: D,
}

impl<'b, B, C, D> PartitionMut<'b, B, C, D>
where
    B: 'b + BufferMut + ?Sized,
    C: Borrow<[Count]>,
    D: Borrow<[Count]>,
{
    /// A partition of `buf` into `counts[i]` elements at displacements `displs[i]`.
    pub fn new(buf: &'b mut B, counts: C, displs: D) -> PartitionMut<'b, B, C, D> {
        PartitionMut {
            buf,
            counts,
            displs,
        }
    }
}

impl<B: ?Sized, C: Borrow<[Count]>, D: Borrow<[Count]>> Partitioned for PartitionMut<'_, B, C, D> {
    fn counts(&self) -> &[Count] {
        self.counts.borrow()
    }
    fn displs(&self) -> &[Count] {
        self.displs.borrow()
    }
}
impl<B: BufferMut + ?Sized, C, D> AsDatatype for PartitionMut<'_, B, C, D> {
    type Out = <B as AsDatatype>::Out;
    fn as_datatype(&self) -> Self::Out {
        self.buf.as_datatype()
    }
}
// SAFETY: the whole buffer's count.
unsafe impl<B: BufferMut + ?Sized, C, D> Collection for PartitionMut<'_, B, C, D> {
    fn count(&self) -> Count {
        self.buf.count()
    }
}
// SAFETY: the buffer's address.
unsafe impl<B: BufferMut + ?Sized, C, D> PointerMut for PartitionMut<'_, B, C, D> {
    fn pointer_mut(&mut self) -> *mut c_void {
        self.buf.pointer_mut()
    }
}
// SAFETY: the pieces come from a BufferMut.
unsafe impl<B: BufferMut + ?Sized, C, D> BufferMut for PartitionMut<'_, B, C, D> {}
// SAFETY: as above.
unsafe impl<B: BufferMut + ?Sized, C: Borrow<[Count]>, D: Borrow<[Count]>> PartitionedBufferMut
    for PartitionMut<'_, B, C, D>
{
}

// --- DynBuffer ----------------------------------------------------------------------------

/// A type-erased read-only buffer: `len` elements of a datatype at an address. What a
/// [`UserOperation`](crate::collective::UserOperation) closure gets, and a [`Buffer`] of
/// its own (to send through a datatype known only at run time).
#[derive(Clone, Copy, Debug)]
pub struct DynBuffer<'a> {
    ptr: *const c_void,
    len: Count,
    datatype: DatatypeRef<'a>,
    _b: PhantomData<&'a [u8]>,
}

// SAFETY: a shared view of memory, as `&[T]` for `T: Equivalence` (plain data).
unsafe impl Send for DynBuffer<'_> {}
// SAFETY: as above.
unsafe impl Sync for DynBuffer<'_> {}

/// The datatype a region borrows, for as long as that borrow.
fn region_type<'a>(r: &Region<'a, &'a CoreDatatype>) -> &'a CoreDatatype {
    r.datatype_ref()
}

impl<'a> DynBuffer<'a> {
    /// The elements of `buf`, with `T`'s datatype.
    pub fn new<T: Equivalence>(buf: &'a [T]) -> Self {
        let dt = T::equivalent_datatype();
        let d = dt.as_datatype_ref();
        DynBuffer {
            ptr: buf.as_ptr() as *const c_void,
            len: buf.count(),
            datatype: DatatypeRef {
                core: intern(d.core),
                check: d.check,
            },
            _b: PhantomData,
        }
    }

    /// `len` elements of `datatype` at `ptr`.
    ///
    /// # Safety
    /// `len` elements of `datatype` are readable at `ptr` for `'a`.
    pub unsafe fn from_raw<T>(ptr: *const T, len: Count, datatype: DatatypeRef<'a>) -> Self {
        DynBuffer {
            ptr: ptr as *const c_void,
            len,
            datatype,
            _b: PhantomData,
        }
    }

    /// The input operand of a user operation: core's shared region of its elements.
    pub(crate) fn of_region(r: Region<'a, &'a CoreDatatype>) -> Self {
        DynBuffer {
            ptr: r.ptr() as *const c_void,
            len: r.count() as Count,
            datatype: DatatypeRef::from_core(region_type(&r)),
            _b: PhantomData,
        }
    }

    /// Whether the datatype is `T`'s.
    pub fn is<T: Equivalence>(&self) -> bool {
        T::equivalent_datatype().as_datatype_ref() == self.datatype
    }

    /// The elements as `&[T]`, if the datatype is `T`'s.
    pub fn downcast<T: Equivalence>(self) -> Option<&'a [T]> {
        if !self.is::<T>() {
            return None;
        }
        if self.is_empty() {
            return Some(&[]);
        }
        // SAFETY: the datatype is T's, whose elements are Ts (Equivalence), `len` of them.
        Some(unsafe { std::slice::from_raw_parts(self.ptr as *const T, self.len()) })
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len.max(0) as usize
    }
    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The address of the first element.
    pub fn as_ptr(&self) -> *const c_void {
        self.ptr
    }
}

// SAFETY: the constructors' contracts: `len` elements readable at `ptr`.
unsafe impl Pointer for DynBuffer<'_> {
    fn pointer(&self) -> *const c_void {
        self.ptr
    }
}
// SAFETY: as above.
unsafe impl Collection for DynBuffer<'_> {
    fn count(&self) -> Count {
        self.len
    }
}
impl<'a> AsDatatype for DynBuffer<'a> {
    type Out = DatatypeRef<'a>;
    fn as_datatype(&self) -> DatatypeRef<'a> {
        self.datatype
    }
}
// SAFETY: the pieces above agree.
unsafe impl Buffer for DynBuffer<'_> {}

/// A type-erased mutable buffer (the in-out operand of a user operation; a
/// [`BufferMut`] of its own).
#[derive(Debug)]
pub struct DynBufferMut<'a> {
    ptr: *mut c_void,
    len: Count,
    datatype: DatatypeRef<'a>,
    _b: PhantomData<&'a mut [u8]>,
}

// SAFETY: an exclusive view of plain data, as `&mut [T]`.
unsafe impl Send for DynBufferMut<'_> {}
// SAFETY: as above.
unsafe impl Sync for DynBufferMut<'_> {}

impl<'a> DynBufferMut<'a> {
    /// The elements of `buf`, with `T`'s datatype.
    pub fn new<T: Equivalence>(buf: &'a mut [T]) -> Self {
        let dt = T::equivalent_datatype();
        let d = dt.as_datatype_ref();
        DynBufferMut {
            len: buf.count(),
            ptr: buf.as_mut_ptr() as *mut c_void,
            datatype: DatatypeRef {
                core: intern(d.core),
                check: d.check,
            },
            _b: PhantomData,
        }
    }

    /// `len` elements of `datatype` at `ptr`.
    ///
    /// # Safety
    /// `len` elements of `datatype` are writable at `ptr` for `'a`, not aliased, and
    /// every value the datatype can carry is valid there.
    pub unsafe fn from_raw<T>(ptr: *mut T, len: Count, datatype: DatatypeRef<'a>) -> Self {
        DynBufferMut {
            ptr: ptr as *mut c_void,
            len,
            datatype,
            _b: PhantomData,
        }
    }

    /// The in-out operand of a user operation: core's exclusive region of its elements.
    pub(crate) fn of_region(r: Region<'a, &'a CoreDatatype>) -> Self {
        DynBufferMut {
            ptr: r.ptr() as *mut c_void,
            len: r.count() as Count,
            datatype: DatatypeRef::from_core(region_type(&r)),
            _b: PhantomData,
        }
    }

    /// Whether the datatype is `T`'s.
    pub fn is<T: Equivalence>(&self) -> bool {
        T::equivalent_datatype().as_datatype_ref() == self.datatype
    }

    /// The elements as `&mut [T]`, if the datatype is `T`'s.
    pub fn downcast<T: Equivalence>(self) -> Option<&'a mut [T]> {
        if !self.is::<T>() {
            return None;
        }
        if self.is_empty() {
            return Some(&mut []);
        }
        // SAFETY: as DynBuffer::downcast, exclusively.
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut T, self.len()) })
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len.max(0) as usize
    }
    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The address of the first element.
    pub fn as_ptr(&self) -> *const c_void {
        self.ptr
    }
    /// The address of the first element, for writing.
    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        self.ptr
    }
    /// A read-only view for the time of the borrow.
    pub fn reborrow(&self) -> DynBuffer<'_> {
        DynBuffer {
            ptr: self.ptr,
            len: self.len,
            datatype: self.datatype,
            _b: PhantomData,
        }
    }
    /// A mutable view for the time of the borrow.
    pub fn reborrow_mut(&mut self) -> DynBufferMut<'_> {
        DynBufferMut {
            ptr: self.ptr,
            len: self.len,
            datatype: self.datatype,
            _b: PhantomData,
        }
    }
    /// The read-only view, for the whole lifetime.
    pub fn downgrade(self) -> DynBuffer<'a> {
        DynBuffer {
            ptr: self.ptr,
            len: self.len,
            datatype: self.datatype,
            _b: PhantomData,
        }
    }
}

// SAFETY: the constructors' contracts.
unsafe impl Pointer for DynBufferMut<'_> {
    fn pointer(&self) -> *const c_void {
        self.ptr
    }
}
// SAFETY: as above, writable.
unsafe impl PointerMut for DynBufferMut<'_> {
    fn pointer_mut(&mut self) -> *mut c_void {
        self.ptr
    }
}
// SAFETY: as above.
unsafe impl Collection for DynBufferMut<'_> {
    fn count(&self) -> Count {
        self.len
    }
}
impl<'a> AsDatatype for DynBufferMut<'a> {
    type Out = DatatypeRef<'a>;
    fn as_datatype(&self) -> DatatypeRef<'a> {
        self.datatype
    }
}
// SAFETY: the pieces above agree.
unsafe impl Buffer for DynBufferMut<'_> {}
// SAFETY: the constructor's contract.
unsafe impl BufferMut for DynBufferMut<'_> {}

/// Support for `#[derive(Equivalence)]`; not a public API.
#[doc(hidden)]
pub mod derive_support {
    pub use super::{FieldDatatype, UserDatatype};
    pub use std::sync::OnceLock;

    /// Panics where rsmpi's derived datatypes panic when first built: before MPI is
    /// initialized, after it is finalized, and off the main thread below
    /// `Threading::Multiple` (building a datatype is an MPI call).
    #[track_caller]
    pub fn check_datatype_creation(type_name: &str) {
        use oxmpi_core::runtime;
        if runtime::is_finalized() {
            panic!("#[derive(Equivalence)] for {type_name}: cannot build the MPI datatype after MPI was finalized");
        }
        let engine = match runtime::engine() {
            Ok(e) if runtime::is_initialized() => e,
            _ => panic!("#[derive(Equivalence)] for {type_name}: cannot build the MPI datatype before MPI is initialized"),
        };
        if engine.thread_level() != oxmpi_core::ThreadLevel::Multiple && !engine.is_main_thread() {
            panic!(
                "#[derive(Equivalence)] for {type_name}: the MPI datatype must first be built on the main thread \
                 (MPI was initialized below Threading::Multiple)"
            );
        }
    }
}
