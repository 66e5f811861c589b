//! The errno → MPI error class mapping with the path in the message, and the
//! few POSIX calls std does not wrap (`fcntl` byte-range locks, `posix_fallocate`,
//! the two-phase windows), which live in [`crate::transport::fileio`].

use std::io;
use std::path::Path;

use crate::error::{ErrorClass, MpiError};

/// The MPI error class of an OS error (MPI-4.1 §14.7 "I/O error classes").
pub fn class_of(e: &io::Error) -> ErrorClass {
    match e.raw_os_error() {
        Some(libc::ENOENT) => ErrorClass::NoSuchFile,
        Some(libc::EEXIST) => ErrorClass::FileExists,
        Some(libc::EACCES) | Some(libc::EPERM) => ErrorClass::Access,
        Some(libc::EROFS) => ErrorClass::ReadOnly,
        Some(libc::ENOSPC) | Some(libc::EFBIG) => ErrorClass::NoSpace,
        Some(libc::EDQUOT) => ErrorClass::Quota,
        Some(libc::EISDIR)
        | Some(libc::ENOTDIR)
        | Some(libc::ENAMETOOLONG)
        | Some(libc::ELOOP)
        | Some(libc::EINVAL) => ErrorClass::BadFile,
        Some(libc::EBUSY) | Some(libc::ETXTBSY) => ErrorClass::FileInUse,
        _ => ErrorClass::Io,
    }
}

/// An error of `call` on `path` from an OS error.
pub fn os_error(call: &str, path: &Path, what: &str, e: &io::Error) -> MpiError {
    MpiError::new(
        class_of(e),
        format!("{call}: {what} `{}`: {e}", path.display()),
    )
}

pub use crate::transport::fileio::{lock, preallocate, unlock, IoWindow};
