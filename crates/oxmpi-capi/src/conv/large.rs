//! The large-count (`_c`) forms of MPI-4: the same bodies as the `int` forms,
//! generic over the width of their counts ([`Count`]: `int` or `MPI_Count`)
//! and displacements ([`Displ`]: `int` or `MPI_Aint`). A body names itself
//! with [`name`], which turns `MPI_Send` into `MPI_Send_c` for the wide form,
//! so every error names the call the program made.

use std::collections::HashMap;
use std::ffi::c_int;
use std::fmt::Display;
use std::sync::OnceLock;

use oxmpi_core::error::ErrorClass;

use crate::abi::FUNCTIONS;
use crate::conv::errors::{bad, R};
use crate::types::*;

/// A count argument: `int` (the classic forms) or `MPI_Count` (the `_c` forms).
pub trait Count: Copy + Display + 'static {
    /// Whether this is the `_c` forms' `MPI_Count`.
    const WIDE: bool;
    fn wide(self) -> i64;
    /// `v` in this type, if it fits.
    fn narrow(v: i64) -> Option<Self>;
    /// `v`, clamped into this type.
    fn saturating(v: i64) -> Self;
}

impl Count for c_int {
    const WIDE: bool = false;
    fn wide(self) -> i64 {
        self as i64
    }
    fn narrow(v: i64) -> Option<Self> {
        c_int::try_from(v).ok()
    }
    fn saturating(v: i64) -> Self {
        v.clamp(c_int::MIN as i64, c_int::MAX as i64) as c_int
    }
}

impl Count for MPI_Count {
    const WIDE: bool = true;
    fn wide(self) -> i64 {
        self
    }
    fn narrow(v: i64) -> Option<Self> {
        Some(v)
    }
    fn saturating(v: i64) -> Self {
        v
    }
}

/// A displacement argument: `int` (the classic forms' arrays) or `MPI_Aint`.
pub trait Displ: Copy + 'static {
    /// Whether this is the `_c` forms' `MPI_Count` (datatype constructors take
    /// their byte displacements as `MPI_Count`).
    const WIDE: bool;
    fn addr(self) -> isize;
    /// `v` in this type, if it fits.
    fn from_addr(v: isize) -> Option<Self>;
}

impl Displ for c_int {
    const WIDE: bool = false;
    fn addr(self) -> isize {
        self as isize
    }
    fn from_addr(v: isize) -> Option<Self> {
        c_int::try_from(v).ok()
    }
}

impl Displ for MPI_Aint {
    const WIDE: bool = false;
    fn addr(self) -> isize {
        self
    }
    fn from_addr(v: isize) -> Option<Self> {
        Some(v)
    }
}

impl Displ for MPI_Count {
    const WIDE: bool = true;
    fn addr(self) -> isize {
        // MPI_Count and MPI_Aint are both 64 bits wide on the targets oxmpi supports.
        self as isize
    }
    fn from_addr(v: isize) -> Option<Self> {
        Some(v as i64)
    }
}

/// The name of the call `base` in the form of count type `C`: `base` itself,
/// or its `_c` twin (a name of the ABI, so a `&'static str`).
pub fn name<C: Count>(base: &'static str) -> &'static str {
    if !C::WIDE {
        return base;
    }
    static TWINS: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    let twins = TWINS.get_or_init(|| {
        FUNCTIONS
            .iter()
            .filter_map(|f| f.strip_suffix("_c").map(|b| (b, *f)))
            .collect()
    });
    twins.get(base).copied().unwrap_or(base)
}

/// A count as the engine's `usize`: MPI_ERR_COUNT naming `arg` when negative
/// (or beyond the address space).
pub fn to_usize<C: Count>(call: &str, arg: &str, n: C) -> R<usize> {
    let v = n.wide();
    if v < 0 {
        return Err(bad(
            ErrorClass::Count,
            call,
            arg,
            format!("{v} is negative"),
        ));
    }
    usize::try_from(v)
        .ok()
        .filter(|&u| u <= isize::MAX as usize)
        .ok_or_else(|| {
            bad(
                ErrorClass::Count,
                call,
                arg,
                format!("{v} exceeds the address space"),
            )
        })
}

/// A count where the engine needs an `int`: MPI_ERR_COUNT naming `arg` when it
/// does not fit.
pub fn to_int(call: &str, arg: &str, v: i64) -> R<c_int> {
    c_int::try_from(v).map_err(|_| {
        bad(
            ErrorClass::Count,
            call,
            arg,
            format!("{v} does not fit in an int"),
        )
    })
}

/// A count to report, or MPI_UNDEFINED when there is none or it does not fit.
pub fn undefined_or<C: Count>(v: Option<usize>) -> C {
    v.and_then(|n| C::narrow(i64::try_from(n).ok()?))
        .unwrap_or_else(|| C::saturating(crate::abi::MPI_UNDEFINED as i64))
}

/// A count the engine knows as `i64` (datatype constructors check the rest).
pub fn to_i64<C: Count>(n: C) -> i64 {
    n.wide()
}

/// A count to hand back in the call's count type: MPI_ERR_VALUE_TOO_LARGE
/// naming `arg` when it does not fit (an `int` form; the `_c` form takes it).
pub fn fit<C: Count>(call: &str, arg: &str, v: i64) -> R<C> {
    C::narrow(v).ok_or_else(|| {
        bad(
            ErrorClass::ValueTooLarge,
            call,
            arg,
            format!("{v} does not fit in an int (use the _c variant)"),
        )
    })
}

/// A byte count or position to hand back as `MPI_Aint` or `MPI_Count`.
pub fn fit_addr<A: Displ>(call: &str, arg: &str, v: usize) -> R<A> {
    isize::try_from(v)
        .ok()
        .and_then(A::from_addr)
        .ok_or_else(|| {
            bad(
                ErrorClass::ValueTooLarge,
                call,
                arg,
                format!("{v} does not fit"),
            )
        })
}

/// One-token names of the pointer types in [`entry!`] parameter lists.
pub mod ptr {
    use std::ffi::{c_char, c_int, c_void};

    use crate::types::*;
    pub type CVoid = *const c_void;
    pub type MVoid = *mut c_void;
    pub type PReq = *mut MPI_Request;
    pub type PStatus = *mut MPI_Status;
    pub type CStatus = *const MPI_Status;
    pub type PMsg = *mut MPI_Message;
    pub type ATypes = *const MPI_Datatype;
    pub type PType = *mut MPI_Datatype;
    pub type AAint = *const MPI_Aint;
    pub type PAint = *mut MPI_Aint;
    pub type AInt = *const c_int;
    pub type PInt = *mut c_int;
    pub type CStr = *const c_char;
}

/// Defines the entry points `PMPI_x` (`int` counts, `int` displacement arrays)
/// and `PMPI_x_c` (`MPI_Count` counts, `MPI_Aint` displacement arrays) as calls
/// of one generic body, whose count and displacement types follow from the
/// arguments:
///
/// `entry!(PMPI_Send, PMPI_Send_c, (buf: CVoid, count: CNT, ...) => send(SendMode::Standard, buf, count, ...));`
///
/// A parameter's type is one token: `CNT` (a count), `PCNT` (an OUT count),
/// `ACNT` (an array of counts), `ADSP` (an array of displacements: `int` or
/// `MPI_Aint`), `ADDR`/`PADDR`/`AADDR` (a byte displacement, size or position
/// that is `MPI_Aint` in the int form and `MPI_Count` in the `_c` form: value,
/// OUT pointer, array), or a type (see [`ptr`] for one-token pointer types).
macro_rules! entry {
    ($int:ident, $wide:ident, ($($p:ident: $t:tt),* $(,)?) => $body:ident($($arg:expr),* $(,)?)) => {
        $crate::conv::large::entry!(@one $int, std::ffi::c_int, std::ffi::c_int, $crate::types::MPI_Aint, ($($p: $t),*) => $body($($arg),*));
        $crate::conv::large::entry!(@one $wide, $crate::types::MPI_Count, $crate::types::MPI_Aint, $crate::types::MPI_Count, ($($p: $t),*) => $body($($arg),*));
    };
    (@one $f:ident, $cnt:ty, $dsp:ty, $adr:ty, ($($p:ident: $t:tt),*) => $body:ident($($arg:expr),*)) => {
        #[no_mangle]
        pub unsafe extern "C" fn $f($($p: $crate::conv::large::entry!(@ty $cnt, $dsp, $adr, $t)),*) -> std::ffi::c_int {
            // SAFETY: the C caller's arguments, passed on: the shared body needs of them what this call's MPI contract demands.
            unsafe { $body($($arg),*) }
        }
    };
    (@ty $cnt:ty, $dsp:ty, $adr:ty, CNT) => { $cnt };
    (@ty $cnt:ty, $dsp:ty, $adr:ty, PCNT) => { *mut $cnt };
    (@ty $cnt:ty, $dsp:ty, $adr:ty, ACNT) => { *const $cnt };
    (@ty $cnt:ty, $dsp:ty, $adr:ty, ADSP) => { *const $dsp };
    (@ty $cnt:ty, $dsp:ty, $adr:ty, ADDR) => { $adr };
    (@ty $cnt:ty, $dsp:ty, $adr:ty, PADDR) => { *mut $adr };
    (@ty $cnt:ty, $dsp:ty, $adr:ty, AADDR) => { *const $adr };
    (@ty $cnt:ty, $dsp:ty, $adr:ty, $t:ty) => { $t };
}
pub(crate) use entry;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_conversions() {
        assert_eq!(name::<c_int>("MPI_Send"), "MPI_Send");
        assert_eq!(name::<MPI_Count>("MPI_Send"), "MPI_Send_c");
        assert_eq!(
            name::<MPI_Count>("MPI_Ineighbor_alltoallw"),
            "MPI_Ineighbor_alltoallw_c"
        );
        assert_eq!(to_usize("MPI_Send_c", "count", 5i64).unwrap(), 5);
        let e = to_usize("MPI_Send_c", "count", -1i64).unwrap_err();
        assert!(
            e.message.contains("MPI_Send_c") && e.message.contains("count"),
            "{}",
            e.message
        );
        assert!(to_int("MPI_Pack_c", "incount", 1 << 40).is_err());
        assert_eq!(to_int("MPI_Pack_c", "incount", 7).unwrap(), 7);
    }
}
