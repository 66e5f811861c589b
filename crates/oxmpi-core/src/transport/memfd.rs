//! Shared memory between the ranks of a host without a name in `/dev/shm`: an
//! anonymous `memfd` ([`new`]), reached by the other processes through
//! `/proc/PID/fd/FD` ([`open_peer`]: same user, ptrace-readable, as for cross-memory
//! attach), and mapped `MAP_SHARED` ([`Mapping`], unmapped on drop). Nothing outlives
//! the job: a memfd has no name, and its memory goes with the last descriptor and
//! mapping. A peer that died has no `/proc/PID`, so opening its memfd fails at once
//! (the caller reports it; nothing waits for a dead rank).
//!
//! The shared-memory collectives' area (`shm/arena.rs`), MPI-IO's two-phase windows
//! (`fileio.rs`) and the one-sided windows' host segments (`winmem.rs`) are memfds;
//! the point-to-point segment (`shm/segment.rs`) maps its `shm_open` file with
//! [`Mapping`] too. Errors are the system calls' own (`io::Error` with the errno), so
//! each caller words them as before.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;

/// A fresh memfd named `name` (shown in `/proc/PID/fd`, never in a file system).
pub(crate) fn new(name: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: memfd_create reads the NUL-terminated `name` and takes plain flags; it touches no other memory of ours.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned to us and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Sets the length of `fd` (`ftruncate`): new bytes read as zeros and take no memory
/// until touched.
pub(crate) fn set_len(fd: impl AsFd, len: usize) -> io::Result<()> {
    let len = libc::off_t::try_from(len).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
    // SAFETY: ftruncate on an open descriptor; no memory is passed.
    if unsafe { libc::ftruncate(fd.as_fd().as_raw_fd(), len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The length of the file `fd` (`fstat`).
pub(crate) fn len(fd: impl AsFd) -> io::Result<u64> {
    // SAFETY: `stat` is plain old data (all-zero is valid).
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is an open descriptor and `st` a writable stat.
    if unsafe { libc::fstat(fd.as_fd().as_raw_fd(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.st_size as u64)
}

/// Opens descriptor `fd` of process `pid` (same host, same user) read-write, through
/// `/proc/PID/fd/FD`: a new descriptor of the same file.
pub(crate) fn open_peer(
    pid: impl std::fmt::Display,
    fd: impl std::fmt::Display,
) -> io::Result<OwnedFd> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/{pid}/fd/{fd}"))?;
    Ok(file.into())
}

/// A read-write `MAP_SHARED` mapping of a file's first `len` bytes, unmapped on drop.
/// It only holds the address: the owner decides how the bytes are reached (atomics,
/// bounds-checked copies), since other processes map them too.
#[derive(Debug)]
pub(crate) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    /// Maps `len` bytes of `fd` from offset 0. `len == 0` maps nothing (a dangling,
    /// aligned address no byte of which may be reached).
    pub(crate) fn new(fd: impl AsFd, len: usize) -> io::Result<Mapping> {
        if len == 0 {
            return Ok(Mapping {
                ptr: NonNull::dangling(),
                len,
            });
        }
        // SAFETY: a fresh mapping at an address the kernel chooses (no MAP_FIXED) cannot overlap or invalidate any existing Rust object; `fd` is open for the call.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_fd().as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: NonNull::new(p.cast()).expect("mmap returned NULL without MAP_FIXED"),
            len,
        })
    }

    /// The (page-aligned) start of the mapping.
    #[inline]
    pub(crate) fn ptr(&self) -> NonNull<u8> {
        self.ptr
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: `ptr`/`len` are exactly a mapping `new` made and nobody else unmaps; every reference into it borrows the owner of this `Mapping`, so none outlives this drop.
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memfd_opened_through_proc_shares_its_bytes_and_length() {
        let fd = new(c"oxmpi-test").unwrap();
        set_len(&fd, 8192).unwrap();
        let other = open_peer(std::process::id(), fd.as_raw_fd()).unwrap();
        assert_eq!(len(&other).unwrap(), 8192);
        let (a, b) = (
            Mapping::new(&fd, 8192).unwrap(),
            Mapping::new(&other, 8192).unwrap(),
        );
        assert_eq!(a.len(), 8192);
        // SAFETY: offset 100 lies in both live mappings of 8192 bytes; plain bytes, no references.
        unsafe {
            a.ptr().as_ptr().add(100).write(42);
            assert_eq!(b.ptr().as_ptr().add(100).read(), 42);
            assert_eq!(b.ptr().as_ptr().add(101).read(), 0);
        }
        assert_eq!(Mapping::new(&fd, 0).unwrap().len(), 0);
    }

    #[test]
    fn a_missing_peer_descriptor_fails_at_once() {
        let e = open_peer(std::process::id(), 1 << 30).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    }
}
