//! The system calls of MPI-IO that std does not wrap, and the shared-memory
//! windows of two-phase collective I/O: `fcntl` byte-range locks (atomic mode,
//! the shared file pointer), `posix_fallocate` (preallocation), and
//! [`IoWindow`], an aggregator's `memfd` mapped by the ranks of its host.
//!
//! `io/` reaches files and windows only through the safe functions here: the
//! window is never handed out as a Rust reference (other processes map it too),
//! only copied into or out of, or moved to and from the file with `pwrite`/`pread`
//! straight from the mapping, each call bounds-checked.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::memfd::{self, Mapping};

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
///
/// Who writes which bytes when is the two-phase protocol's business (its rounds,
/// see `io::twophase`); this type only guarantees that every access stays inside
/// the mapping and that no Rust reference into it exists (the bytes are plain
/// `u8`s that other processes may change at any time, so a copy out of them is
/// always a valid value, just possibly not the one the protocol meant).
pub struct IoWindow {
    map: Mapping,
    fd: OwnedFd,
}

// SAFETY: the mapping is plain shared memory owned by this value and never exposed as
// a reference (only raw, bounds-checked copies and system calls reach it), so the
// handle may move to and be shared with other threads.
unsafe impl Send for IoWindow {}
// SAFETY: as above.
unsafe impl Sync for IoWindow {}

impl IoWindow {
    /// A new window of `len` bytes (sparse until touched).
    pub fn create(len: usize) -> io::Result<IoWindow> {
        let fd = memfd::new(c"oxmpi-io-window")?;
        memfd::set_len(&fd, len)?;
        Self::map(fd, len)
    }

    /// Maps the window `fd` of process `pid` (same host, same user).
    pub fn open(pid: u32, fd: i32, len: usize) -> io::Result<IoWindow> {
        let fd = memfd::open_peer(pid, fd)?;
        if memfd::len(&fd)? < len as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "window shorter than announced",
            ));
        }
        Self::map(fd, len)
    }

    fn map(fd: OwnedFd, len: usize) -> io::Result<IoWindow> {
        Ok(IoWindow {
            map: Mapping::new(&fd, len)?,
            fd,
        })
    }

    pub fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The address of bytes `[off, off + n)`, which must lie in the window.
    fn at(&self, off: usize, n: usize) -> *mut u8 {
        assert!(
            off.checked_add(n).is_some_and(|e| e <= self.len()),
            "window access out of bounds"
        );
        self.map.ptr().as_ptr().wrapping_add(off)
    }

    /// Copies `data` into the window at `off`.
    pub fn write(&self, off: usize, data: &[u8]) {
        let p = self.at(off, data.len());
        // SAFETY: `at` checked that the range lies in our live mapping; `data` is a Rust slice, so it cannot lie in the mapping (no reference into it exists), and the two do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
    }

    /// Copies window bytes `[off, off + out.len())` into `out`.
    pub fn read(&self, off: usize, out: &mut [u8]) {
        let p = self.at(off, out.len());
        // SAFETY: as in `write`, the other way; any bytes are valid `u8`s.
        unsafe { std::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), out.len()) };
    }

    /// Appends window bytes `[off, off + n)` to `out`.
    pub fn read_append(&self, off: usize, n: usize, out: &mut Vec<u8>) {
        let at = out.len();
        out.resize(at + n, 0);
        self.read(off, &mut out[at..]);
    }

    /// Writes window bytes `[off, off + n)` to `file` at `file_off` (`pwrite`,
    /// straight from the mapping, until all are written).
    pub fn write_to_file(
        &self,
        off: usize,
        n: usize,
        file: &File,
        file_off: u64,
    ) -> io::Result<()> {
        self.file_io(true, off, n, file, file_off).map(drop)
    }

    /// Reads `file` from `file_off` into window bytes `[off, off + n)` (`pread`,
    /// straight into the mapping) until they are full or the file ends; returns
    /// the bytes read.
    pub fn read_from_file(
        &self,
        off: usize,
        n: usize,
        file: &File,
        file_off: u64,
    ) -> io::Result<usize> {
        self.file_io(false, off, n, file, file_off)
    }

    /// `pwrite` (`to_file`) or `pread` of window bytes `[off, off + n)` at `file_off`,
    /// repeated until all have moved or (reading) the file ends; the bytes moved.
    fn file_io(
        &self,
        to_file: bool,
        off: usize,
        n: usize,
        file: &File,
        file_off: u64,
    ) -> io::Result<usize> {
        let p = self.at(off, n);
        let mut done = 0usize;
        while done < n {
            let (q, len, at) = (
                p.wrapping_add(done).cast(),
                n - done,
                (file_off + done as u64) as libc::off_t,
            );
            let rc = if to_file {
                // SAFETY: the kernel reads `len` bytes of our live mapping from `q`, in bounds (checked by `at`).
                unsafe { libc::pwrite(file.as_raw_fd(), q, len, at) }
            } else {
                // SAFETY: the kernel writes at most `len` bytes into our live mapping from `q`, in bounds (checked by `at`); any bytes are valid there.
                unsafe { libc::pread(file.as_raw_fd(), q, len, at) }
            };
            if rc < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if rc == 0 {
                if to_file {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "failed to write whole buffer",
                    ));
                }
                break;
            }
            done += rc as usize;
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_copies_in_and_out_and_moves_bytes_to_and_from_a_file() {
        let w = IoWindow::create(64).unwrap();
        assert_eq!(w.len(), 64);
        w.write(10, b"hello");
        let mut out = [0u8; 7];
        w.read(9, &mut out);
        assert_eq!(&out, b"\0hello\0");
        let mut v = b"x".to_vec();
        w.read_append(10, 5, &mut v);
        assert_eq!(v, b"xhello");
        // A second mapping of the same memfd sees the same bytes.
        let other = IoWindow::open(std::process::id(), w.fd(), 64).unwrap();
        let mut seen = [0u8; 5];
        other.read(10, &mut seen);
        assert_eq!(&seen, b"hello");
        // Window -> file -> window.
        let path = std::env::temp_dir().join(format!("oxmpi-fileio-{}", std::process::id()));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        w.write_to_file(10, 5, &f, 3).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"\0\0\0hello");
        // A read past the end of the file stops there.
        assert_eq!(w.read_from_file(40, 20, &f, 4).unwrap(), 4);
        let mut back = [0u8; 4];
        w.read(40, &mut back);
        assert_eq!(&back, b"ello");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    #[should_panic(expected = "window access out of bounds")]
    fn a_window_refuses_bytes_past_its_end() {
        IoWindow::create(16).unwrap().write(12, b"12345");
    }
}
