//! Datatypes: how Rust values map to MPI messages.
//!
//! [`Equivalence`] says that a Rust type has an MPI datatype. It is implemented for
//! `bool`, `char`, `i8`..`i64`, `u8`..`u64`, `isize`, `usize`, `f32`, `f64` and for
//! arrays `[T; N]` of equivalent types. [`Buffer`] (what a send reads) and [`BufferMut`]
//! (what a receive writes) are implemented for any `T: Equivalence`, for `[T]` and for
//! `Vec<T>`.
//!
//! A datatype is described by a [`DatatypeRef`] (a cheap, copyable descriptor; the
//! predefined ones are [`SystemDatatype`]s). The descriptor is opaque so that derived
//! datatypes (`UserDatatype`, views, `#[derive(Equivalence)]`) can be added without
//! changing these signatures.
//!
//! ```
//! use oxmpi::traits::*;
//! assert_eq!(f64::equivalent_datatype().size(), 8);
//! assert_eq!(<[i32; 3]>::equivalent_datatype().size(), 12);
//! assert_eq!(<[i32; 3]>::equivalent_datatype().name(), "MPI_INT32_T x 3");
//! ```

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;

use crate::error::{Error, ErrorClass, Result};
use crate::Count;

/// The datatype traits, re-exported by [`crate::traits`].
pub mod traits {
    pub use super::{
        AsDatatype, Buffer, BufferMut, Collection, Datatype, Equivalence, Pointer, PointerMut,
    };
}

/// A predefined (primitive) type: its MPI name, size, and which byte patterns are values.
pub(crate) struct Prim {
    name: &'static str,
    size: usize,
    /// For types where not every byte pattern is a value (`bool`, `char`): the check.
    valid: Option<fn(&[u8]) -> bool>,
    /// A valid value's bytes, written over an invalid element.
    fallback: &'static [u8],
}

fn valid_bool(b: &[u8]) -> bool {
    b[0] <= 1
}

fn valid_char(b: &[u8]) -> bool {
    let v = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
    char::from_u32(v).is_some()
}

macro_rules! prims {
    ($($stat:ident = ($name:expr, $ty:ty, $valid:expr)),* $(,)?) => {
        $(static $stat: Prim = Prim {
            name: $name,
            size: std::mem::size_of::<$ty>(),
            valid: $valid,
            fallback: &[0; std::mem::size_of::<$ty>()],
        };)*
    };
}

prims! {
    P_BOOL = ("MPI_C_BOOL", bool, Some(valid_bool)),
    P_CHAR = ("MPI_UINT32_T (char)", char, Some(valid_char)),
    P_I8 = ("MPI_INT8_T", i8, None),
    P_I16 = ("MPI_INT16_T", i16, None),
    P_I32 = ("MPI_INT32_T", i32, None),
    P_I64 = ("MPI_INT64_T", i64, None),
    P_U8 = ("MPI_UINT8_T", u8, None),
    P_U16 = ("MPI_UINT16_T", u16, None),
    P_U32 = ("MPI_UINT32_T", u32, None),
    P_U64 = ("MPI_UINT64_T", u64, None),
    P_ISIZE = ("MPI_AINT (isize)", isize, None),
    P_USIZE = ("MPI_AINT (usize)", usize, None),
    P_F32 = ("MPI_FLOAT", f32, None),
    P_F64 = ("MPI_DOUBLE", f64, None),
}

/// How a datatype is laid out. Private so that derived datatypes can add variants.
#[derive(Clone, Copy)]
enum Repr {
    /// `count` contiguous elements of a primitive type.
    Contiguous { base: &'static Prim, count: usize },
}

/// A reference to a datatype: a copyable descriptor of the type of the elements of a
/// message. `'a` is the lifetime of the datatype it refers to (`'static` for the
/// predefined ones, see [`SystemDatatype`]).
#[derive(Clone, Copy)]
pub struct DatatypeRef<'a> {
    repr: Repr,
    _lt: PhantomData<&'a ()>,
}

/// A predefined datatype (`MPI_INT32_T`, `MPI_DOUBLE`, ...).
pub type SystemDatatype = DatatypeRef<'static>;

impl<'a> DatatypeRef<'a> {
    const fn prim(base: &'static Prim) -> SystemDatatype {
        DatatypeRef {
            repr: Repr::Contiguous { base, count: 1 },
            _lt: PhantomData,
        }
    }

    /// The datatype of `count` consecutive elements of `of` (`MPI_Type_contiguous`).
    pub fn contiguous(count: usize, of: &DatatypeRef<'_>) -> DatatypeRef<'a> {
        match of.repr {
            Repr::Contiguous { base, count: c } => DatatypeRef {
                repr: Repr::Contiguous {
                    base,
                    count: c * count,
                },
                _lt: PhantomData,
            },
        }
    }

    /// Bytes of data in one element of this type (`MPI_Type_size`).
    pub fn size(&self) -> usize {
        match self.repr {
            Repr::Contiguous { base, count } => base.size * count,
        }
    }

    /// A readable name, e.g. `MPI_DOUBLE` or `MPI_INT32_T x 3`.
    pub fn name(&self) -> String {
        match self.repr {
            Repr::Contiguous { base, count: 1 } => base.name.to_string(),
            Repr::Contiguous { base, count } => format!("{} x {count}", base.name),
        }
    }

    /// Whether one element occupies exactly [`size`](Self::size) bytes with no gaps, so
    /// the engine can move it as bytes. True of every datatype oxmpi has today.
    pub fn is_contiguous(&self) -> bool {
        true
    }

    /// After a receive of `nbytes` into `ptr`: repairs elements whose bytes are not a
    /// value of the type (a `bool` that is neither 0 nor 1, ...), and reports them.
    ///
    /// # Safety
    /// `ptr..ptr+cap` must be valid for reads and writes.
    pub(crate) unsafe fn check_received(
        &self,
        ptr: *mut u8,
        cap: usize,
        nbytes: usize,
        call: &str,
    ) -> Result<()> {
        let Repr::Contiguous { base, .. } = self.repr;
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
            // SAFETY: off + size <= cap, inside the buffer the caller vouches for.
            let elem = unsafe { std::slice::from_raw_parts_mut(ptr.add(off), base.size) };
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

impl fmt::Debug for DatatypeRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatatypeRef({})", self.name())
    }
}

impl PartialEq for DatatypeRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self.repr, other.repr) {
            (Repr::Contiguous { base: a, count: n }, Repr::Contiguous { base: b, count: m }) => {
                std::ptr::eq(a, b) && n == m
            }
        }
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

// SAFETY: `[T; N]` is N `T`s with no padding between them; its datatype is N contiguous
// copies of T's.
unsafe impl<T: Equivalence, const N: usize> Equivalence for [T; N] {
    type Out = SystemDatatype;
    fn equivalent_datatype() -> SystemDatatype {
        let t = T::equivalent_datatype();
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

/// The bytes a send of `buf` reads.
pub(crate) fn send_bytes<'b, B: Buffer + ?Sized>(buf: &'b B, call: &str) -> Result<&'b [u8]> {
    let dt = buf.as_datatype();
    let dt = dt.as_datatype_ref();
    check_layout(&dt, call)?;
    let len = buf.count().max(0) as usize * dt.size();
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: the Buffer contract: `pointer()` is readable for count * size bytes, for as
    // long as `buf` is borrowed.
    Ok(unsafe { std::slice::from_raw_parts(buf.pointer() as *const u8, len) })
}

/// Where a receive into `buf` writes: address, capacity in bytes, and the datatype.
pub(crate) fn recv_target<B: BufferMut + ?Sized>(buf: &mut B, call: &str) -> Result<RecvTarget> {
    let dt = buf.as_datatype();
    let dt = dt.as_datatype_ref();
    check_layout(&dt, call)?;
    let len = buf.count().max(0) as usize * dt.size();
    let ptr = if len == 0 {
        std::ptr::NonNull::<u8>::dangling().as_ptr()
    } else {
        buf.pointer_mut() as *mut u8
    };
    Ok(RecvTarget {
        ptr,
        len,
        check: strip(dt),
    })
}

/// A datatype descriptor with its lifetime erased, kept only to check received bytes
/// (today every descriptor is `'static` data anyway).
#[derive(Clone, Copy)]
pub(crate) struct Checker(Repr);

fn strip(dt: DatatypeRef<'_>) -> Checker {
    Checker(dt.repr)
}

impl Checker {
    /// # Safety
    /// As [`DatatypeRef::check_received`].
    pub(crate) unsafe fn check(
        &self,
        ptr: *mut u8,
        cap: usize,
        nbytes: usize,
        call: &str,
    ) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe {
            DatatypeRef {
                repr: self.0,
                _lt: PhantomData,
            }
            .check_received(ptr, cap, nbytes, call)
        }
    }
}

/// The memory a receive writes into, taken from a `BufferMut`.
#[derive(Clone, Copy)]
pub(crate) struct RecvTarget {
    pub(crate) ptr: *mut u8,
    pub(crate) len: usize,
    pub(crate) check: Checker,
}

impl RecvTarget {
    /// Checks the `nbytes` received.
    ///
    /// # Safety
    /// The memory must still be valid and no longer written by the engine.
    pub(crate) unsafe fn after(&self, nbytes: usize, call: &str) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe {
            self.check
                .check(self.ptr, self.len, nbytes.min(self.len), call)
        }
    }
}

/// A receive target over raw memory for elements of `T`, checking that `T`'s datatype
/// can be moved as its bytes.
pub(crate) fn raw_target<T: Equivalence>(
    ptr: *mut u8,
    elems: usize,
    call: &str,
) -> Result<RecvTarget> {
    let dt = T::equivalent_datatype();
    let dt = dt.as_datatype_ref();
    check_layout(&dt, call)?;
    if dt.size() != std::mem::size_of::<T>() {
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
    Ok(RecvTarget {
        ptr,
        len: elems * dt.size(),
        check: strip(dt),
    })
}
