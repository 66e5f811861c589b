//! The few POSIX calls std does not wrap: `fcntl` byte-range locks (atomic
//! mode, the shared file pointer) and `posix_fallocate` (preallocation), and
//! the errno → MPI error class mapping with the path in the message.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
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
        Some(libc::EISDIR) | Some(libc::ENOTDIR) | Some(libc::ENAMETOOLONG) | Some(libc::ELOOP) | Some(libc::EINVAL) => {
            ErrorClass::BadFile
        }
        Some(libc::EBUSY) | Some(libc::ETXTBSY) => ErrorClass::FileInUse,
        _ => ErrorClass::Io,
    }
}

/// An error of `call` on `path` from an OS error.
pub fn os_error(call: &str, path: &Path, what: &str, e: &io::Error) -> MpiError {
    MpiError::new(class_of(e), format!("{call}: {what} `{}`: {e}", path.display()))
}

/// Locks (`write`: exclusively, else shared) bytes `[start, start + len)` of
/// `f`, waiting for conflicting locks; `len == 0` locks to the end of file.
pub fn lock(f: &File, start: u64, len: u64, write: bool) -> io::Result<()> {
    setlk(f, start, len, if write { libc::F_WRLCK } else { libc::F_RDLCK })
}

/// Releases a lock taken by [`lock`].
pub fn unlock(f: &File, start: u64, len: u64) -> io::Result<()> {
    setlk(f, start, len, libc::F_UNLCK)
}

fn setlk(f: &File, start: u64, len: u64, kind: libc::c_int) -> io::Result<()> {
    // SAFETY: a zeroed `flock` is a valid value of this plain C struct.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = start as libc::off_t;
    fl.l_len = len as libc::off_t;
    loop {
        // SAFETY: fcntl(F_SETLKW) on an open descriptor with a pointer to a
        // live `flock`, which the kernel only reads.
        let rc = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLKW, &fl as *const libc::flock) };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Allocates file blocks for `[0, size)` (the file grows to `size` if shorter).
pub fn preallocate(f: &File, size: u64) -> io::Result<()> {
    if size == 0 {
        return Ok(());
    }
    // SAFETY: posix_fallocate on an open descriptor; no memory is passed.
    let rc = unsafe { libc::posix_fallocate(f.as_raw_fd(), 0, size as libc::off_t) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}
