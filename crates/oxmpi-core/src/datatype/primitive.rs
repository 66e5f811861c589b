//! The predefined element types of MPI, as the engine knows them: size,
//! alignment, the type class that decides which reduction operations apply,
//! and the handle value of the MPI-5.0 standard ABI.
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
    Pair { value: PairValue, index_offset: u8 },
    /// Uninterpreted bytes.
    Raw,
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
    ($( $variant:ident = $abi:literal, $name:literal, $size:literal, $extent:literal, $align:literal, $class:ident, $repr:expr; )*) => {
        /// A predefined MPI datatype.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Primitive { $( $variant, )* }

        impl Primitive {
            pub const ALL: &'static [Primitive] = &[ $( Primitive::$variant, )* ];

            /// The C name, e.g. `MPI_DOUBLE`.
            pub fn name(self) -> &'static str { match self { $( Primitive::$variant => $name, )* } }
            /// Bytes of data in one element (`MPI_Type_size`); for the pair
            /// types the value and the index without padding.
            pub fn size(self) -> usize { match self { $( Primitive::$variant => $size, )* } }
            /// Bytes from one element to the next in memory (`MPI_Type_get_extent`).
            pub fn extent(self) -> usize { match self { $( Primitive::$variant => $extent, )* } }
            /// Alignment in bytes (used for struct extents).
            pub fn align(self) -> usize { match self { $( Primitive::$variant => $align, )* } }
            pub fn class(self) -> TypeClass { match self { $( Primitive::$variant => TypeClass::$class, )* } }
            pub fn repr(self) -> Repr { match self { $( Primitive::$variant => $repr, )* } }
            /// The handle value in the MPI-5.0 standard ABI (extensions: 0x1000+).
            pub fn abi_handle(self) -> usize { match self { $( Primitive::$variant => $abi, )* } }
            pub fn from_abi_handle(h: usize) -> Option<Primitive> {
                match h { $( $abi => Some(Primitive::$variant), )* _ => None }
            }
        }
    };
}

use Repr::*;

primitives! {
    Aint = 0x201, "MPI_AINT", 8, 8, 8, CInteger, I64;
    Count = 0x202, "MPI_COUNT", 8, 8, 8, CInteger, I64;
    Offset = 0x203, "MPI_OFFSET", 8, 8, 8, CInteger, I64;
    Packed = 0x207, "MPI_PACKED", 1, 1, 1, Other, Raw;
    Short = 0x208, "MPI_SHORT", 2, 2, 2, CInteger, I16;
    Int = 0x209, "MPI_INT", 4, 4, 4, CInteger, I32;
    Long = 0x20a, "MPI_LONG", 8, 8, 8, CInteger, I64;
    LongLong = 0x20b, "MPI_LONG_LONG", 8, 8, 8, CInteger, I64;
    UnsignedShort = 0x20c, "MPI_UNSIGNED_SHORT", 2, 2, 2, CInteger, U16;
    Unsigned = 0x20d, "MPI_UNSIGNED", 4, 4, 4, CInteger, U32;
    UnsignedLong = 0x20e, "MPI_UNSIGNED_LONG", 8, 8, 8, CInteger, U64;
    UnsignedLongLong = 0x20f, "MPI_UNSIGNED_LONG_LONG", 8, 8, 8, CInteger, U64;
    Float = 0x210, "MPI_FLOAT", 4, 4, 4, Floating, F32;
    // One handle for MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX (the standard ABI
    // aliases them); named MPI_C_COMPLEX as MPICH names it.
    CFloatComplex = 0x212, "MPI_C_COMPLEX", 8, 8, 4, Complex, Complex32;
    CxxFloatComplex = 0x213, "MPI_CXX_FLOAT_COMPLEX", 8, 8, 4, Complex, Complex32;
    Double = 0x214, "MPI_DOUBLE", 8, 8, 8, Floating, F64;
    CDoubleComplex = 0x216, "MPI_C_DOUBLE_COMPLEX", 16, 16, 8, Complex, Complex64;
    CxxDoubleComplex = 0x217, "MPI_CXX_DOUBLE_COMPLEX", 16, 16, 8, Complex, Complex64;
    Logical = 0x218, "MPI_LOGICAL", 4, 4, 4, Logical, Logical(4);
    Integer = 0x219, "MPI_INTEGER", 4, 4, 4, FortranInteger, I32;
    Real = 0x21a, "MPI_REAL", 4, 4, 4, Floating, F32;
    Complex = 0x21b, "MPI_COMPLEX", 8, 8, 4, Complex, Complex32;
    DoublePrecision = 0x21c, "MPI_DOUBLE_PRECISION", 8, 8, 8, Floating, F64;
    DoubleComplex = 0x21d, "MPI_DOUBLE_COMPLEX", 16, 16, 8, Complex, Complex64;
    Character = 0x21e, "MPI_CHARACTER", 1, 1, 1, Other, Raw;
    LongDouble = 0x220, "MPI_LONG_DOUBLE", 16, 16, 16, Floating, F80;
    CLongDoubleComplex = 0x224, "MPI_C_LONG_DOUBLE_COMPLEX", 32, 32, 16, Complex, Complex80;
    CxxLongDoubleComplex = 0x225, "MPI_CXX_LONG_DOUBLE_COMPLEX", 32, 32, 16, Complex, Complex80;
    FloatInt = 0x228, "MPI_FLOAT_INT", 8, 8, 4, Pair, Pair { value: PairValue::F32, index_offset: 4 };
    DoubleInt = 0x229, "MPI_DOUBLE_INT", 12, 16, 8, Pair, Pair { value: PairValue::F64, index_offset: 8 };
    LongInt = 0x22a, "MPI_LONG_INT", 12, 16, 8, Pair, Pair { value: PairValue::I64, index_offset: 8 };
    TwoInt = 0x22b, "MPI_2INT", 8, 8, 4, Pair, Pair { value: PairValue::I32, index_offset: 4 };
    ShortInt = 0x22c, "MPI_SHORT_INT", 6, 8, 4, Pair, Pair { value: PairValue::I16, index_offset: 4 };
    LongDoubleInt = 0x22d, "MPI_LONG_DOUBLE_INT", 20, 32, 16, Pair, Pair { value: PairValue::F80, index_offset: 16 };
    TwoReal = 0x230, "MPI_2REAL", 8, 8, 4, Pair, Pair { value: PairValue::F32F32, index_offset: 4 };
    TwoDoublePrecision = 0x231, "MPI_2DOUBLE_PRECISION", 16, 16, 8, Pair, Pair { value: PairValue::F64F64, index_offset: 8 };
    TwoInteger = 0x232, "MPI_2INTEGER", 8, 8, 4, Pair, Pair { value: PairValue::I32I32, index_offset: 4 };
    CBool = 0x238, "MPI_C_BOOL", 1, 1, 1, Logical, Bool1;
    CxxBool = 0x239, "MPI_CXX_BOOL", 1, 1, 1, Logical, Bool1;
    // wchar_t is a 32-bit signed integer on the supported targets; reductions treat it
    // as a C integer (as MPICH does, and suites reduce MPI_WCHAR buffers).
    WChar = 0x23c, "MPI_WCHAR", 4, 4, 4, CInteger, I32;
    Int8 = 0x240, "MPI_INT8_T", 1, 1, 1, CInteger, I8;
    Uint8 = 0x241, "MPI_UINT8_T", 1, 1, 1, CInteger, U8;
    Char = 0x243, "MPI_CHAR", 1, 1, 1, CInteger, I8;
    SignedChar = 0x244, "MPI_SIGNED_CHAR", 1, 1, 1, CInteger, I8;
    UnsignedChar = 0x245, "MPI_UNSIGNED_CHAR", 1, 1, 1, CInteger, U8;
    Byte = 0x247, "MPI_BYTE", 1, 1, 1, Byte, U8;
    Int16 = 0x248, "MPI_INT16_T", 2, 2, 2, CInteger, I16;
    Uint16 = 0x249, "MPI_UINT16_T", 2, 2, 2, CInteger, U16;
    Int32 = 0x250, "MPI_INT32_T", 4, 4, 4, CInteger, I32;
    Uint32 = 0x251, "MPI_UINT32_T", 4, 4, 4, CInteger, U32;
    Int64 = 0x258, "MPI_INT64_T", 8, 8, 8, CInteger, I64;
    Uint64 = 0x259, "MPI_UINT64_T", 8, 8, 8, CInteger, U64;
    Logical1 = 0x2c0, "MPI_LOGICAL1", 1, 1, 1, Logical, Logical(1);
    Integer1 = 0x2c1, "MPI_INTEGER1", 1, 1, 1, FortranInteger, I8;
    Logical2 = 0x2c8, "MPI_LOGICAL2", 2, 2, 2, Logical, Logical(2);
    Integer2 = 0x2c9, "MPI_INTEGER2", 2, 2, 2, FortranInteger, I16;
    Logical4 = 0x2d0, "MPI_LOGICAL4", 4, 4, 4, Logical, Logical(4);
    Integer4 = 0x2d1, "MPI_INTEGER4", 4, 4, 4, FortranInteger, I32;
    Real4 = 0x2d2, "MPI_REAL4", 4, 4, 4, Floating, F32;
    Complex8 = 0x2db, "MPI_COMPLEX8", 8, 8, 4, Complex, Complex32;
    Logical8 = 0x2d8, "MPI_LOGICAL8", 8, 8, 8, Logical, Logical(8);
    Integer8 = 0x2d9, "MPI_INTEGER8", 8, 8, 8, FortranInteger, I64;
    Real8 = 0x2da, "MPI_REAL8", 8, 8, 8, Floating, F64;
    Complex16 = 0x2e3, "MPI_COMPLEX16", 16, 16, 8, Complex, Complex64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_handles_are_unique_and_round_trip() {
        for p in Primitive::ALL {
            assert_eq!(Primitive::from_abi_handle(p.abi_handle()), Some(*p), "{}", p.name());
            assert!(p.size() > 0 && p.align().is_power_of_two() && p.extent() >= p.size());
            assert_eq!(p.extent() % p.align(), 0, "{}", p.name());
        }
    }

    #[test]
    fn pair_layouts_match_c_structs() {
        assert_eq!((Primitive::DoubleInt.size(), Primitive::DoubleInt.extent()), (12, 16));
        assert_eq!((Primitive::ShortInt.size(), Primitive::ShortInt.extent()), (6, 8));
        assert_eq!((Primitive::LongDoubleInt.size(), Primitive::LongDoubleInt.extent()), (20, 32));
        assert_eq!(std::mem::size_of::<(f64, i32)>(), Primitive::DoubleInt.extent());
    }
}
