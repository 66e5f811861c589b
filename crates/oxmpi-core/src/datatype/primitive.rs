//! The predefined element types of MPI, as the engine knows them: size,
//! alignment, the type class that decides which reduction operations apply,
//! and the C name. The engine numbers them itself ([`Primitive::code`], for its own
//! wire formats); the standard ABI's handle values live only in the C library's
//! `abi.txt`, from which `oxmpi-capi` generates the mapping (matched by C name).
//!
//! The MINLOC/MAXLOC pair types (`MPI_FLOAT_INT`, ...) are predefined too: they
//! are elements of their own to the reduction engine, laid out like the C
//! structs `{ value; int index; }` (Fortran pairs: two values).

/// Which group of predefined reduction operations an element type admits
/// (the MPI standard's table: C integer, Fortran integer, floating point,
/// logical, complex, byte; plus the MINLOC/MAXLOC pairs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeClass {
    CInteger,
    FortranInteger,
    Floating,
    Logical,
    Complex,
    Byte,
    /// Value-index pairs for MINLOC/MAXLOC.
    Pair,
    /// `MPI_PACKED`, characters and other types no predefined op applies to.
    Other,
}

/// How the bits of an element are interpreted (what reductions compute on).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Repr {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    /// x87 80-bit extended precision stored in 16 bytes (C `long double` on x86-64).
    F80,
    /// Complex numbers: two of the inner representation.
    Complex32,
    Complex64,
    Complex80,
    /// C `_Bool` / C++ `bool` (1 byte), Fortran LOGICAL of 1/2/4/8 bytes.
    Bool1,
    Logical(u8),
    /// Pairs (value, index) laid out as the C struct: the value at offset 0,
    /// the index (a C int, or the value's type for the Fortran pairs) at
    /// `index_offset`; padding up to the extent.
    Pair {
        value: PairValue,
        index_offset: u8,
    },
    /// Uninterpreted bytes.
    Raw,
}

impl Repr {
    /// A plain integer of 1, 2, 4 or 8 bytes, signed or not.
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            Repr::I8
                | Repr::I16
                | Repr::I32
                | Repr::I64
                | Repr::U8
                | Repr::U16
                | Repr::U32
                | Repr::U64
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PairValue {
    F32,
    F64,
    I64,
    I32,
    I16,
    F80,
    /// Fortran pairs whose index has the value's type.
    F32F32,
    F64F64,
    I32I32,
}

macro_rules! primitives {
    ($( $variant:ident, $name:literal, $size:literal, $extent:literal, $align:literal, $class:ident, $repr:expr; )*) => {
        /// A predefined MPI datatype.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Primitive { $( $variant, )* }

        impl Primitive {
            pub const ALL: &'static [Primitive] = &[ $( Primitive::$variant, )* ];

            /// The C name, e.g. `MPI_DOUBLE`.
            pub const fn name(self) -> &'static str { match self { $( Primitive::$variant => $name, )* } }
            /// The type of this C name (`MPI_DOUBLE`), if the engine has it.
            pub const fn from_name(name: &str) -> Option<Primitive> {
                $( if crate::const_str_eq(name, $name) { return Some(Primitive::$variant); } )*
                None
            }
            /// Bytes of data in one element (`MPI_Type_size`); for the pair
            /// types the value and the index without padding.
            #[inline]
            pub fn size(self) -> usize { match self { $( Primitive::$variant => $size, )* } }
            /// Bytes from one element to the next in memory (`MPI_Type_get_extent`).
            #[inline]
            pub fn extent(self) -> usize { match self { $( Primitive::$variant => $extent, )* } }
            /// Alignment in bytes (used for struct extents).
            pub fn align(self) -> usize { match self { $( Primitive::$variant => $align, )* } }
            #[inline]
            pub fn class(self) -> TypeClass { match self { $( Primitive::$variant => TypeClass::$class, )* } }
            #[inline]
            pub fn repr(self) -> Repr { match self { $( Primitive::$variant => $repr, )* } }
            /// The engine's own number of the type (1-based, never 0), for its wire
            /// formats and hashes: not the standard ABI's handle.
            pub fn code(self) -> u16 { self as u16 + 1 }
            /// The type of an engine number ([`code`](Self::code)).
            pub fn from_code(c: u16) -> Option<Primitive> {
                Self::ALL.get(usize::from(c).checked_sub(1)?).copied()
            }
        }
    };
}

use Repr::*;

primitives! {
    Aint, "MPI_AINT", 8, 8, 8, CInteger, I64;
    Count, "MPI_COUNT", 8, 8, 8, CInteger, I64;
    Offset, "MPI_OFFSET", 8, 8, 8, CInteger, I64;
    Packed, "MPI_PACKED", 1, 1, 1, Other, Raw;
    Short, "MPI_SHORT", 2, 2, 2, CInteger, I16;
    Int, "MPI_INT", 4, 4, 4, CInteger, I32;
    Long, "MPI_LONG", 8, 8, 8, CInteger, I64;
    // One type for MPI_LONG_LONG_INT and its synonym MPI_LONG_LONG (one handle in
    // the standard ABI); named MPI_LONG_LONG_INT as MPICH names it.
    LongLong, "MPI_LONG_LONG_INT", 8, 8, 8, CInteger, I64;
    UnsignedShort, "MPI_UNSIGNED_SHORT", 2, 2, 2, CInteger, U16;
    Unsigned, "MPI_UNSIGNED", 4, 4, 4, CInteger, U32;
    UnsignedLong, "MPI_UNSIGNED_LONG", 8, 8, 8, CInteger, U64;
    UnsignedLongLong, "MPI_UNSIGNED_LONG_LONG", 8, 8, 8, CInteger, U64;
    Float, "MPI_FLOAT", 4, 4, 4, Floating, F32;
    // One type for MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX (the standard ABI aliases
    // them); named MPI_C_COMPLEX as MPICH names it.
    CFloatComplex, "MPI_C_COMPLEX", 8, 8, 4, Complex, Complex32;
    CxxFloatComplex, "MPI_CXX_FLOAT_COMPLEX", 8, 8, 4, Complex, Complex32;
    Double, "MPI_DOUBLE", 8, 8, 8, Floating, F64;
    CDoubleComplex, "MPI_C_DOUBLE_COMPLEX", 16, 16, 8, Complex, Complex64;
    CxxDoubleComplex, "MPI_CXX_DOUBLE_COMPLEX", 16, 16, 8, Complex, Complex64;
    Logical, "MPI_LOGICAL", 4, 4, 4, Logical, Logical(4);
    Integer, "MPI_INTEGER", 4, 4, 4, FortranInteger, I32;
    Real, "MPI_REAL", 4, 4, 4, Floating, F32;
    Complex, "MPI_COMPLEX", 8, 8, 4, Complex, Complex32;
    DoublePrecision, "MPI_DOUBLE_PRECISION", 8, 8, 8, Floating, F64;
    DoubleComplex, "MPI_DOUBLE_COMPLEX", 16, 16, 8, Complex, Complex64;
    Character, "MPI_CHARACTER", 1, 1, 1, Other, Raw;
    LongDouble, "MPI_LONG_DOUBLE", 16, 16, 16, Floating, F80;
    CLongDoubleComplex, "MPI_C_LONG_DOUBLE_COMPLEX", 32, 32, 16, Complex, Complex80;
    CxxLongDoubleComplex, "MPI_CXX_LONG_DOUBLE_COMPLEX", 32, 32, 16, Complex, Complex80;
    FloatInt, "MPI_FLOAT_INT", 8, 8, 4, Pair, Pair { value: PairValue::F32, index_offset: 4 };
    DoubleInt, "MPI_DOUBLE_INT", 12, 16, 8, Pair, Pair { value: PairValue::F64, index_offset: 8 };
    LongInt, "MPI_LONG_INT", 12, 16, 8, Pair, Pair { value: PairValue::I64, index_offset: 8 };
    TwoInt, "MPI_2INT", 8, 8, 4, Pair, Pair { value: PairValue::I32, index_offset: 4 };
    ShortInt, "MPI_SHORT_INT", 6, 8, 4, Pair, Pair { value: PairValue::I16, index_offset: 4 };
    LongDoubleInt, "MPI_LONG_DOUBLE_INT", 20, 32, 16, Pair, Pair { value: PairValue::F80, index_offset: 16 };
    TwoReal, "MPI_2REAL", 8, 8, 4, Pair, Pair { value: PairValue::F32F32, index_offset: 4 };
    TwoDoublePrecision, "MPI_2DOUBLE_PRECISION", 16, 16, 8, Pair, Pair { value: PairValue::F64F64, index_offset: 8 };
    TwoInteger, "MPI_2INTEGER", 8, 8, 4, Pair, Pair { value: PairValue::I32I32, index_offset: 4 };
    CBool, "MPI_C_BOOL", 1, 1, 1, Logical, Bool1;
    CxxBool, "MPI_CXX_BOOL", 1, 1, 1, Logical, Bool1;
    // wchar_t is a 32-bit signed integer on the supported targets; reductions treat it
    // as a C integer (as MPICH does, and suites reduce MPI_WCHAR buffers).
    WChar, "MPI_WCHAR", 4, 4, 4, CInteger, I32;
    Int8, "MPI_INT8_T", 1, 1, 1, CInteger, I8;
    Uint8, "MPI_UINT8_T", 1, 1, 1, CInteger, U8;
    Char, "MPI_CHAR", 1, 1, 1, CInteger, I8;
    SignedChar, "MPI_SIGNED_CHAR", 1, 1, 1, CInteger, I8;
    UnsignedChar, "MPI_UNSIGNED_CHAR", 1, 1, 1, CInteger, U8;
    Byte, "MPI_BYTE", 1, 1, 1, Byte, U8;
    Int16, "MPI_INT16_T", 2, 2, 2, CInteger, I16;
    Uint16, "MPI_UINT16_T", 2, 2, 2, CInteger, U16;
    Int32, "MPI_INT32_T", 4, 4, 4, CInteger, I32;
    Uint32, "MPI_UINT32_T", 4, 4, 4, CInteger, U32;
    Int64, "MPI_INT64_T", 8, 8, 8, CInteger, I64;
    Uint64, "MPI_UINT64_T", 8, 8, 8, CInteger, U64;
    Logical1, "MPI_LOGICAL1", 1, 1, 1, Logical, Logical(1);
    Integer1, "MPI_INTEGER1", 1, 1, 1, FortranInteger, I8;
    Logical2, "MPI_LOGICAL2", 2, 2, 2, Logical, Logical(2);
    Integer2, "MPI_INTEGER2", 2, 2, 2, FortranInteger, I16;
    Logical4, "MPI_LOGICAL4", 4, 4, 4, Logical, Logical(4);
    Integer4, "MPI_INTEGER4", 4, 4, 4, FortranInteger, I32;
    Real4, "MPI_REAL4", 4, 4, 4, Floating, F32;
    Complex8, "MPI_COMPLEX8", 8, 8, 4, Complex, Complex32;
    Logical8, "MPI_LOGICAL8", 8, 8, 8, Logical, Logical(8);
    Integer8, "MPI_INTEGER8", 8, 8, 8, FortranInteger, I64;
    Real8, "MPI_REAL8", 8, 8, 8, Floating, F64;
    Complex16, "MPI_COMPLEX16", 16, 16, 8, Complex, Complex64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_round_trip() {
        for p in Primitive::ALL {
            assert_eq!(Primitive::from_code(p.code()), Some(*p), "{}", p.name());
            assert_eq!(Primitive::from_name(p.name()), Some(*p));
            assert!(p.size() > 0 && p.align().is_power_of_two() && p.extent() >= p.size());
            assert_eq!(p.extent() % p.align(), 0, "{}", p.name());
        }
    }

    #[test]
    fn pair_layouts_match_c_structs() {
        assert_eq!(
            (Primitive::DoubleInt.size(), Primitive::DoubleInt.extent()),
            (12, 16)
        );
        assert_eq!(
            (Primitive::ShortInt.size(), Primitive::ShortInt.extent()),
            (6, 8)
        );
        assert_eq!(
            (
                Primitive::LongDoubleInt.size(),
                Primitive::LongDoubleInt.extent()
            ),
            (20, 32)
        );
        assert_eq!(
            std::mem::size_of::<(f64, i32)>(),
            Primitive::DoubleInt.extent()
        );
    }
}
