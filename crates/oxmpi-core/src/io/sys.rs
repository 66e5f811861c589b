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

/// Locks (`write`: exclusively, else shared) bytes `[start, start + len)` of
/// `f`, waiting for conflicting locks; `len == 0` locks to the end of file.
pub fn lock(f: &File, start: u64, len: u64, write: bool) -> io::Result<()> {
    setlk(
        f,
        start,
        len,
        if write { libc::F_WRLCK } else { libc::F_RDLCK },
    )
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
        // SAFETY: fcntl(F_SETLKW) on an open descriptor with a pointer to a live `flock`, which the kernel only reads.
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

/// A shared-memory window of collective I/O: an aggregator's `memfd`, mapped by
/// the aggregator and by the ranks of its host (through `/proc/PID/fd/FD`), so
/// that two-phase pieces move with one `memcpy` and no system call.
pub struct ShmWindow {
    ptr: *mut u8,
    len: usize,
    file: File,
}

// SAFETY: the mapping is plain shared memory owned by this value; access is
// coordinated by the two-phase protocol (see `twophase`), not by the type.
unsafe impl Send for ShmWindow {}
// SAFETY: as above.
unsafe impl Sync for ShmWindow {}

impl ShmWindow {
    /// A new window of `len` bytes (sparse until touched).
    pub fn create(len: usize) -> io::Result<ShmWindow> {
        // SAFETY: memfd_create with a NUL-terminated name; no other memory is passed.
        let fd = unsafe { libc::memfd_create(c"oxmpi-io-window".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a descriptor we just created and own.
        let file = unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        file.set_len(len as u64)?;
        Self::map(file, len)
    }

    /// Maps the window `fd` of process `pid` (same host, same user).
    pub fn open(pid: u32, fd: i32, len: usize) -> io::Result<ShmWindow> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(format!("/proc/{pid}/fd/{fd}"))?;
        if file.metadata()?.len() < len as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "window shorter than announced",
            ));
        }
        Self::map(file, len)
    }

    fn map(file: File, len: usize) -> io::Result<ShmWindow> {
        // SAFETY: a fresh shared mapping of `len` bytes of a file at least that long.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(ShmWindow {
            ptr: p.cast(),
            len,
            file,
        })
    }

    pub fn fd(&self) -> i32 {
        self.file.as_raw_fd()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes `[off, off + n)` of the window.
    ///
    /// # Safety
    /// No other process or thread writes these bytes while the slice lives
    /// (the two-phase protocol's rounds guarantee it), and `off + n <= len`.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slice(&self, off: usize, n: usize) -> &mut [u8] {
        assert!(
            off.checked_add(n).is_some_and(|e| e <= self.len),
            "window access out of bounds"
        );
        // SAFETY: in bounds (checked); exclusivity is the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(off), n) }
    }
}

impl Drop for ShmWindow {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `map` made.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}
