//! Window memory for one-sided communication (the RMA "transport" on one host).
//!
//! Every window has, per host, one shared mapping ([`Segment`]): a `memfd` made by
//! the host's lowest rank of the window and mapped by the others through
//! `/proc/<pid>/fd/<fd>` (the same permission as cross-memory attach: same user,
//! ptrace-readable). Nothing survives the job: a memfd has no name, and the last
//! unmap frees it. The segment holds the control words of every local rank (the
//! passive-target lock, the accumulate mutex, the attached regions of a dynamic
//! window) and, for `MPI_Win_allocate`/`_allocate_shared`, the window memory itself.
//!
//! A target's memory is reached ([`Reach`]) either directly in this address space
//! (the shared segment, or the origin's own memory) or with `process_vm_readv` /
//! `process_vm_writev` ([`super::cma`]) for `MPI_Win_create` and dynamic windows
//! over another local process's memory. The origin does every copy; the target
//! takes no part (passive target progresses while it computes).

use std::ffi::CString;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// Memory of this process that its creator hands to a window (`MPI_Win_create`):
/// the one door ([`CallerMem::new`]) where that memory's validity is stated, so
/// window creation itself is a safe function. [`CallerMem::NONE`] is the "no
/// memory of the caller" of the other flavors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallerMem {
    addr: usize,
    len: usize,
}

impl CallerMem {
    /// No memory (windows whose memory the library makes, or dynamic ones).
    pub const NONE: CallerMem = CallerMem { addr: 0, len: 0 };

    /// # Safety
    /// `addr .. addr + len` is memory of this process, valid for reads and writes
    /// (window memory: other processes may access it concurrently), until the window
    /// made with it is freed (the MPI contract of `MPI_Win_create`).
    pub const unsafe fn new(addr: usize, len: usize) -> CallerMem {
        CallerMem { addr, len }
    }

    pub fn addr(&self) -> usize {
        self.addr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The memory as this process's reach in the window made with it.
    pub fn mapped(&self) -> Mapped {
        // SAFETY: `new`'s contract: valid until the window made with it is freed, and the window holds this `Mapped` (and its copies) only as long as it lives.
        unsafe { Mapped::new(self.addr, self.len) }
    }
}

/// One shared mapping of a window's host segment.
pub struct Segment {
    ptr: *mut u8,
    len: usize,
    fd: i32,
}

// SAFETY: the mapping is process-wide memory that stays mapped for the Segment's
// lifetime; it is accessed only through atomics and raw copies that tolerate
// concurrent access by other processes, so sharing the handle between threads is sound.
unsafe impl Send for Segment {}
// SAFETY: as above; no method hands out a `&mut` into the mapping.
unsafe impl Sync for Segment {}

impl Segment {
    /// A fresh, zero-filled shared mapping of `len` bytes backed by a memfd.
    pub fn create(len: usize) -> io::Result<Segment> {
        let name = c"oxmpi-win";
        // SAFETY: memfd_create takes a valid NUL-terminated name and flags; it touches no memory of ours.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: ftruncate on the descriptor we just created.
        if unsafe { libc::ftruncate(fd, len.max(1) as libc::off_t) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: closing our own descriptor.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        Self::map(fd, len)
    }

    /// Maps the segment another local process made (its pid and descriptor number).
    pub fn open(pid: i32, fd: i32, len: usize) -> io::Result<Segment> {
        let path =
            CString::new(format!("/proc/{pid}/fd/{fd}")).expect("no NUL in a path of numbers");
        // SAFETY: open with a valid NUL-terminated path.
        let my = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if my < 0 {
            return Err(io::Error::last_os_error());
        }
        Self::map(my, len)
    }

    fn map(fd: i32, len: usize) -> io::Result<Segment> {
        // SAFETY: a fresh shared mapping of a file we hold open; the kernel picks the address.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len.max(1),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            // SAFETY: closing our own descriptor.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        Ok(Segment {
            ptr: p.cast(),
            len: len.max(1),
            fd,
        })
    }

    /// The descriptor other local ranks open (valid until [`close_fd`](Self::close_fd)).
    pub fn fd(&self) -> i32 {
        self.fd
    }

    /// Closes the descriptor once every local rank mapped the segment (the mapping stays).
    pub fn close_fd(&mut self) {
        if self.fd >= 0 {
            // SAFETY: closing a descriptor we own, once.
            unsafe { libc::close(self.fd) };
            self.fd = -1;
        }
    }

    /// The address of the mapping in this process.
    pub fn addr(&self) -> usize {
        self.ptr as usize
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The 64-bit control word at byte offset `off` (8-aligned, inside the mapping).
    #[inline]
    pub fn word(&self, off: usize) -> &AtomicU64 {
        assert!(
            off.is_multiple_of(8) && off + 8 <= self.len,
            "winmem: control word {off} outside the segment"
        );
        // SAFETY: in bounds and 8-aligned (checked; the mapping is page-aligned), the memory lives as long as `self`, and every access to control words is atomic.
        unsafe { &*(self.ptr.add(off) as *const AtomicU64) }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping this Segment made; no reference into it outlives `self`.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
        self.close_fd();
    }
}

/// Window memory mapped in this process: `len` bytes from `addr` (a target's part of
/// the host segment, this process's own window memory, or, for a dynamic window,
/// this process's address space, whose runs rma checks against the attached
/// regions). [`Mapped::new`] carries the proof once, at window creation; every
/// access after that goes through a [`Span`] checked to lie inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapped {
    addr: usize,
    len: usize,
}

impl Mapped {
    /// # Safety
    /// `addr .. addr + len` is memory of this process, valid for reads and writes
    /// (window memory: other processes may access it concurrently) for as long as this
    /// value or a copy of it is used (its window keeps the memory alive).
    pub const unsafe fn new(addr: usize, len: usize) -> Mapped {
        Mapped { addr, len }
    }

    /// The first `len` bytes at most (a shorter reach is within the same proof).
    pub fn within(self, len: usize) -> Mapped {
        Mapped {
            addr: self.addr,
            len: self.len.min(len),
        }
    }

    /// The address of the memory's first byte in this process.
    #[inline(always)]
    pub fn addr(&self) -> usize {
        self.addr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `len` bytes from byte `off`, if they lie inside the memory.
    #[inline(always)]
    pub fn span(&self, off: usize, len: usize) -> Option<Span<'_>> {
        if off.checked_add(len)? > self.len {
            return None;
        }
        Some(Span {
            addr: self.addr + off,
            len,
            _m: std::marker::PhantomData,
        })
    }

    /// Copies `out.len()` bytes from byte `off`; `false` (nothing copied) if they
    /// do not lie inside the memory.
    #[inline(always)]
    pub fn read(&self, off: usize, out: &mut [u8]) -> bool {
        let Some(at) = self.span(off, out.len()) else {
            return false;
        };
        // SAFETY: `at` lies inside the memory (`Mapped::new`'s contract: readable), `out` is writable for its `len`; `copy` allows `out` to lie in window memory too.
        unsafe { std::ptr::copy(at.addr as *const u8, out.as_mut_ptr(), out.len()) };
        true
    }

    /// Copies `data` to byte `off`; `false` (nothing copied) if it does not fit.
    #[inline(always)]
    pub fn write(&self, off: usize, data: &[u8]) -> bool {
        let Some(at) = self.span(off, data.len()) else {
            return false;
        };
        // SAFETY: as in `read`, writing (`Mapped::new`'s contract: writable).
        unsafe { std::ptr::copy(data.as_ptr(), at.addr as *mut u8, data.len()) };
        true
    }
}

/// `len` bytes of a [`Mapped`] window memory, checked to lie inside it: what
/// the one-sided copies and atomics ([`super::winatomic`]) work on.
#[derive(Clone, Copy, Debug)]
pub struct Span<'m> {
    addr: usize,
    len: usize,
    _m: std::marker::PhantomData<&'m Mapped>,
}

impl Span<'_> {
    /// The address of the span's first byte in this process.
    #[inline(always)]
    pub fn addr(&self) -> usize {
        self.addr
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the span's address is a multiple of `w`.
    #[inline(always)]
    pub fn aligned(&self, w: usize) -> bool {
        self.addr.is_multiple_of(w)
    }

    /// Whether `p .. p + len` lies wholly outside the span (a null `p`: nothing).
    #[inline(always)]
    pub fn apart(&self, p: *const u8, len: usize) -> bool {
        p.is_null() || p as usize + len <= self.addr || p as usize >= self.addr + self.len
    }

    /// Copies the first `min(len, out.len())` bytes of the span to `out` (which may
    /// itself lie in window memory: a `memmove`).
    #[inline(always)]
    pub fn read(&self, out: &mut [u8]) {
        let n = self.len.min(out.len());
        // SAFETY: `n` bytes inside the mapped memory (`Mapped::span` checked them; `Mapped::new`'s contract); `out` is writable for `n`; `copy` allows overlap.
        unsafe { std::ptr::copy(self.addr as *const u8, out.as_mut_ptr(), n) };
    }

    /// Copies the first `min(len, data.len())` bytes of `data` into the span
    /// (`data` may itself lie in window memory: a `memmove`).
    #[inline(always)]
    pub fn write(&self, data: &[u8]) {
        let n = self.len.min(data.len());
        // SAFETY: as in `read`, writing: the window memory is writable per `Mapped::new`'s contract.
        unsafe { std::ptr::copy(data.as_ptr(), self.addr as *mut u8, n) };
    }
}

/// Where one target's window memory is reached from this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Mapped in our own address space (the shared segment or our own memory).
    Mapped(Mapped),
    /// At this address in process `pid`, by cross-memory attach.
    Cma { pid: i32, addr: usize },
}

fn outside(off: usize, len: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{len} bytes at offset {off} lie outside the window memory"),
    )
}

impl Reach {
    /// Copies `out.len()` bytes of the target's window from byte `off`.
    pub fn read(&self, off: usize, out: &mut [u8]) -> io::Result<()> {
        match *self {
            Reach::Mapped(m) => match m.read(off, out) {
                true => Ok(()),
                false => Err(outside(off, out.len())),
            },
            Reach::Cma { pid, addr } => super::cma::read_remote(pid, addr.wrapping_add(off), out),
        }
    }

    /// Copies `data` into the target's window at byte `off`.
    pub fn write(&self, off: usize, data: &[u8]) -> io::Result<()> {
        match *self {
            Reach::Mapped(m) => match m.write(off, data) {
                true => Ok(()),
                false => Err(outside(off, data.len())),
            },
            Reach::Cma { pid, addr } => super::cma::write_remote(pid, addr.wrapping_add(off), data),
        }
    }
}

/// Memory ordering for the window's synchronization points (flush, sync, fence).
pub fn full_fence() {
    std::sync::atomic::fence(Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_is_shared_between_two_mappings() {
        let a = Segment::create(8192).unwrap();
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() };
        let b = Segment::open(pid, a.fd(), 8192).unwrap();
        a.word(64).store(42, Ordering::SeqCst);
        assert_eq!(b.word(64).load(Ordering::SeqCst), 42);
        // SAFETY: both mappings are 8192 bytes and outlive `ra` and `rb`.
        let (ra, rb) = unsafe {
            (
                Reach::Mapped(Mapped::new(a.addr(), 8192)),
                Reach::Mapped(Mapped::new(b.addr(), 8192)),
            )
        };
        ra.write(1000, b"hello").unwrap();
        let mut out = [0u8; 5];
        rb.read(1000, &mut out).unwrap();
        assert_eq!(&out, b"hello");
        assert!(rb.read(8190, &mut out).is_err());
    }
}
