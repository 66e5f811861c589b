//! Data representations: the registry of user representations
//! (`MPI_Register_datarep`), and the conversion of a memory buffer to and from
//! the file's representation (native, internal, external32, user), in chunks.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::view::{self, Datarep, UserDatarep};
use crate::datatype::{external32, Datatype};
use crate::error::{ErrorClass, MpiError, Result};

/// Registered user data representations.
fn dataraps() -> MutexGuard<'static, HashMap<String, Arc<dyn UserDatarep>>> {
    static R: OnceLock<Mutex<HashMap<String, Arc<dyn UserDatarep>>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// `MPI_Register_datarep`.
pub fn register_datarep(call: &str, name: &str, conv: Arc<dyn UserDatarep>) -> Result<()> {
    if name.is_empty() || name.len() >= 128 {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            "datarep",
            format!("`{name}` is empty or longer than MPI_MAX_DATAREP_STRING - 1"),
        ));
    }
    let mut r = dataraps();
    if matches!(name, "native" | "internal" | "external32") || r.contains_key(name) {
        return Err(MpiError::arg(
            ErrorClass::DupDatarep,
            call,
            "datarep",
            format!("\"{name}\" is already defined"),
        ));
    }
    r.insert(name.to_string(), conv);
    Ok(())
}

/// The data representation called `name`.
pub fn datarep(call: &str, name: &str) -> Result<Datarep> {
    match name {
        "native" => Ok(Datarep::Native),
        "internal" => Ok(Datarep::Internal),
        "external32" => Ok(Datarep::External32),
        n => dataraps().get(n).map(|c| Datarep::User(n.to_string(), c.clone())).ok_or_else(|| {
            MpiError::arg(ErrorClass::UnsupportedDatarep, call, "datarep", format!("\"{n}\" is not native, internal, external32 or a registered representation"))
        }),
    }
}

/// User conversion functions convert at most this many file bytes per call
/// (whole elements of the memory datatype, at least one), with the position
/// of the first element, as MPI-4.1 §14.5.3 allows.
pub const CONV_CHUNK: usize = 64 << 10;

/// Elements of `dt` per conversion call, and the file bytes of one.
fn conv_chunk(rep: &Datarep, dt: &Datatype) -> Result<(usize, usize)> {
    let one = rep.file_bytes(dt, 1)?.max(1) as usize;
    Ok(((CONV_CHUNK / one).max(1), one))
}

/// The file representation (`fbytes` bytes) of `count` elements of `dt` at `buf`.
///
/// # Safety
/// `buf` holds `count` elements of `dt`, readable.
pub(super) unsafe fn to_file_stream<'a>(
    call: &str,
    rep: &Datarep,
    buf: *const u8,
    count: usize,
    dt: &Datatype,
    fbytes: u64,
) -> Result<Cow<'a, [u8]>> {
    let bytes = dt.size() * count;
    if bytes == 0 || fbytes == 0 {
        return Ok(Cow::Owned(Vec::new()));
    }
    let native = match rep {
        Datarep::Native | Datarep::Internal => true,
        Datarep::User(_, c) => !c.converts_writes(),
        Datarep::External32 => false,
    };
    if native && dt.is_contiguous() {
        // SAFETY: a contiguous datatype's `count` elements are the `bytes` bytes from its true lower bound, readable by the caller's contract.
        return Ok(Cow::Borrowed(unsafe {
            std::slice::from_raw_parts(buf.wrapping_offset(dt.true_lb()), bytes)
        }));
    }
    let mut v = vec![0u8; fbytes as usize];
    match rep {
        Datarep::User(name, c) if c.converts_writes() => {
            let (per, one) = conv_chunk(rep, dt)?;
            let mut at = 0;
            while at < count {
                let n = per.min(count - at);
                // SAFETY: forwarded caller contract; elements `at..at + n` exist.
                unsafe { c.write(buf, dt, n, at, &mut v[at * one..(at + n) * one]) }
                    .map_err(|e| conv_err(call, name, e))?;
                at += n;
            }
        }
        Datarep::External32 => {
            let mut packed = vec![0u8; bytes];
            // SAFETY: forwarded caller contract.
            unsafe { dt.pack(buf, count, &mut packed) };
            external32::encode(call, dt, count, &packed, &mut v)?;
        }
        _ => {
            // SAFETY: forwarded caller contract.
            unsafe { dt.pack(buf, count, &mut v) };
        }
    }
    Ok(Cow::Owned(v))
}

fn conv_err(call: &str, name: &str, e: MpiError) -> MpiError {
    if e.class == ErrorClass::Conversion {
        e
    } else {
        MpiError::new(
            ErrorClass::Conversion,
            format!(
                "{call}: the conversion function of data representation \"{name}\" failed: {}",
                e.message
            ),
        )
    }
}

/// Moves `data` (the first `data.len()` bytes of the file representation of
/// `count` elements of `dt`) into memory at `buf`; returns the bytes of
/// memory data delivered. When the file sizes differ from the native ones
/// only whole elements of `dt` convert (a short read's partial element is
/// not delivered).
///
/// # Safety
/// `buf` holds `count` elements of `dt`, writable.
pub(super) unsafe fn from_file_stream(
    call: &str,
    rep: &Datarep,
    data: &mut [u8],
    buf: *mut u8,
    count: usize,
    dt: &Datatype,
) -> Result<u64> {
    if data.is_empty() {
        return Ok(0);
    }
    let one = rep.file_bytes(dt, 1)?.max(1) as usize;
    let whole = (data.len() / one).min(count);
    let same = rep.same_sizes(dt)?;
    match rep {
        Datarep::User(name, c) if c.converts_reads() => {
            let (per, _) = conv_chunk(rep, dt)?;
            let mut at = 0;
            while at < whole {
                let n = per.min(whole - at);
                // SAFETY: forwarded caller contract; elements `at..at + n` exist.
                unsafe { c.read(buf, dt, n, at, &data[at * one..(at + n) * one]) }
                    .map_err(|e| conv_err(call, name, e))?;
                at += n;
            }
            Ok((whole * dt.size()) as u64)
        }
        Datarep::External32 if !same => {
            let mut native = vec![0u8; whole * dt.size()];
            external32::decode(call, dt, whole, &data[..whole * one], &mut native)?;
            // SAFETY: forwarded caller contract.
            unsafe { dt.unpack_range(&native, buf, count, 0) };
            Ok(native.len() as u64)
        }
        _ => {
            if let Datarep::External32 = rep {
                // Whole elements convert; a short read's partial tail is left as read.
                let n = whole * one;
                let mut native = vec![0u8; n];
                external32::decode(call, dt, whole, &data[..n], &mut native)?;
                data[..n].copy_from_slice(&native);
            }
            // SAFETY: forwarded caller contract.
            unsafe { dt.unpack_range(data, buf, count, 0) };
            Ok(data.len() as u64)
        }
    }
}

/// `MPI_File_get_type_extent`: the extent of `dt` in the file under `rep`.
pub fn type_extent(call: &str, dt: &Datatype, rep: &Datarep) -> Result<u64> {
    Ok(view::file_type(call, dt, rep)?.extent().max(0) as u64)
}
