//! Data representations: the registry of user representations
//! (`MPI_Register_datarep`), and the conversion of a memory buffer to and from
//! the file's representation (native, internal, external32, user), in chunks.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::view::{self, Datarep, UserDatarep};
use crate::buf::Region;
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

/// The file representation (`fbytes` bytes) of the elements of `buf`.
pub(super) fn to_file_stream<'a>(
    call: &str,
    rep: &Datarep,
    buf: &'a Region<'_, &Datatype>,
    fbytes: u64,
) -> Result<Cow<'a, [u8]>> {
    let (count, dt) = (buf.count(), buf.datatype());
    let bytes = dt.size() * count;
    if bytes == 0 || fbytes == 0 {
        return Ok(Cow::Owned(Vec::new()));
    }
    let native = match rep {
        Datarep::Native | Datarep::Internal => true,
        Datarep::User(_, c) => !c.converts_writes(),
        Datarep::External32 => false,
    };
    if native {
        // A contiguous datatype's `count` elements are the `bytes` bytes from its true lower bound.
        if let Some(b) = buf.bytes() {
            return Ok(Cow::Borrowed(b));
        }
    }
    let mut v = vec![0u8; fbytes as usize];
    match rep {
        Datarep::User(name, c) if c.converts_writes() => {
            let (per, one) = conv_chunk(rep, dt)?;
            let mut at = 0;
            while at < count {
                let n = per.min(count - at);
                c.write(buf, n, at, &mut v[at * one..(at + n) * one])
                    .map_err(|e| conv_err(call, name, e))?;
                at += n;
            }
        }
        Datarep::External32 => {
            external32::encode(call, dt, count, &buf.pack_vec(), &mut v)?;
        }
        _ => buf.pack_to(&mut v),
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
/// the elements of `buf`) into them; returns the bytes of memory data
/// delivered. When the file sizes differ from the native ones only whole
/// elements convert (a short read's partial element is not delivered).
pub(super) fn from_file_stream(
    call: &str,
    rep: &Datarep,
    data: &mut [u8],
    buf: &mut Region<'_, &Datatype>,
) -> Result<u64> {
    if data.is_empty() {
        return Ok(0);
    }
    // An owned handle (a reference count): the user conversion below borrows `buf` mutably.
    let dt = &buf.datatype().clone();
    let count = buf.count();
    let one = rep.file_bytes(dt, 1)?.max(1) as usize;
    let whole = (data.len() / one).min(count);
    let same = rep.same_sizes(dt)?;
    match rep {
        Datarep::User(name, c) if c.converts_reads() => {
            let (per, _) = conv_chunk(rep, dt)?;
            assert!(buf.is_exclusive(), "a shared buffer was used for writing");
            let mut at = 0;
            while at < whole {
                let n = per.min(whole - at);
                c.read(buf, n, at, &data[at * one..(at + n) * one])
                    .map_err(|e| conv_err(call, name, e))?;
                at += n;
            }
            Ok((whole * dt.size()) as u64)
        }
        Datarep::External32 if !same => {
            let mut native = vec![0u8; whole * dt.size()];
            external32::decode(call, dt, whole, &data[..whole * one], &mut native)?;
            buf.unpack(&native);
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
            buf.unpack(data);
            Ok(data.len() as u64)
        }
    }
}

/// `MPI_File_get_type_extent`: the extent of `dt` in the file under `rep`.
pub fn type_extent(call: &str, dt: &Datatype, rep: &Datarep) -> Result<u64> {
    Ok(view::file_type(call, dt, rep)?.extent().max(0) as u64)
}
