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
//!
//! Memory of this process is reached through a [`Mapped`], which holds what keeps the
//! memory alive: a share of the [`Segment`] (`Arc`), a share of a [`Heap`] the window
//! owns, or the caller's promise ([`CallerMem::new`], the C boundary's). The Rust
//! API's windows over borrowed slices expose a heap copy of the slice
//! ([`CallerMem::copy_of`]) and write it back when the window is freed, so a window
//! that is forgotten (`std::mem::forget`) keeps memory of its own alive, never a borrow
//! that ended. This process's own view of its part as `T`s is a [`LocalMem`], made
//! once per memory (a fresh heap copy, or [`Segment::take_local`] once per mapping).
//! A dynamic window's memory attached by this process is one reach, [`Attached`]: its
//! regions' `Mapped`s, each access checked to lie in them.

use std::io;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::memfd::{self, Mapping};
use crate::buf::AnyBytes;

/// Memory of this process that its creator hands to a window (`MPI_Win_create`,
/// `MPI_Win_attach`): the one door ([`CallerMem::new`]) where the caller states that
/// memory's validity, or a heap copy the memory owns ([`CallerMem::copy_of`]), so
/// window creation and attaching are safe functions. [`CallerMem::NONE`] is the "no
/// memory of the caller" of the other flavors.
#[derive(Clone, Debug, Default)]
pub struct CallerMem {
    addr: usize,
    len: usize,
    /// The heap memory this is, kept alive by every `Mapped` made of it.
    heap: Option<Arc<Heap>>,
}

impl CallerMem {
    /// No memory (windows whose memory the library makes, or dynamic ones).
    pub const NONE: CallerMem = CallerMem {
        addr: 0,
        len: 0,
        heap: None,
    };

    /// # Safety
    /// `addr .. addr + len` is memory of this process, valid for reads and writes
    /// (window memory: other processes may access it concurrently), until the window
    /// made with it is freed (the MPI contract of `MPI_Win_create`) or, attached to a
    /// dynamic window, until it is detached or the window freed (`MPI_Win_attach`'s).
    pub const unsafe fn new(addr: usize, len: usize) -> CallerMem {
        CallerMem {
            addr,
            len,
            heap: None,
        }
    }

    /// Heap memory holding a copy of `src`, and this process's one view of it as `T`s:
    /// memory the window (and the view) own, alive until both are gone, so nothing a
    /// forgotten window does can reach memory that `src` was borrowed from.
    pub fn copy_of<T>(src: &[T], _any: AnyBytes<T>) -> (CallerMem, LocalMem<T>) {
        let bytes = std::mem::size_of_val(src);
        let heap = Arc::new(Heap::zeroed(bytes, std::mem::align_of::<T>()));
        // SAFETY: `heap` is `bytes` fresh writable bytes, aligned for `T` (`Heap::zeroed`), not reached by anything else yet; `src` is `bytes` readable bytes of `T`s (no padding: `AnyBytes`), not overlapping it.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr().cast::<u8>(), heap.ptr.as_ptr(), bytes)
        };
        let mem = CallerMem {
            addr: heap.ptr.as_ptr() as usize,
            len: bytes,
            heap: Some(heap),
        };
        let local = LocalMem {
            mem: mem.mapped(),
            len: src.len(),
            _t: PhantomData,
        };
        (mem, local)
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
        Mapped {
            addr: self.addr,
            len: self.len,
            _keep: match &self.heap {
                Some(h) => Keep::Heap(h.clone()),
                None => Keep::Caller,
            },
        }
    }
}

/// Zeroed heap memory a window owns (aligned to 64 bytes at least), freed when the
/// last [`Mapped`] or [`LocalMem`] of it goes.
pub struct Heap {
    ptr: NonNull<u8>,
    len: usize,
    align: usize,
}

// SAFETY: plain bytes of this process, reached only through `Mapped` copies and the one `LocalMem` view, which tolerate other threads and processes as window memory does.
unsafe impl Send for Heap {}
// SAFETY: as above; no `&` method of `Heap` reads or writes the memory.
unsafe impl Sync for Heap {}

impl std::fmt::Debug for Heap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Heap({} bytes)", self.len)
    }
}

impl Heap {
    fn layout(&self) -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(self.len, self.align).expect("checked when allocated")
    }

    /// `len` zeroed bytes aligned to `align.max(64)` (a power of two; none allocated
    /// for 0: a dangling, aligned address).
    fn zeroed(len: usize, align: usize) -> Heap {
        let align = align.max(64);
        let mut h = Heap {
            ptr: NonNull::new(align as *mut u8).expect("a power of two is not 0"),
            len,
            align,
        };
        if len == 0 {
            return h;
        }
        let layout = std::alloc::Layout::from_size_align(len, align)
            .expect("a slice's size and its elements' alignment make a layout");
        // SAFETY: `layout` has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        h.ptr = NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        h
    }
}

impl Drop for Heap {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: allocated by `zeroed` with this layout; the last share of it is going, so nothing reaches it any more.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout()) };
        }
    }
}

/// What keeps a [`Mapped`]'s memory alive (held for its drop, never read).
#[derive(Clone, Debug)]
#[allow(dead_code)]
enum Keep {
    /// A share of the segment mapping.
    Segment(Arc<Segment>),
    /// A share of heap memory the window owns.
    Heap(Arc<Heap>),
    /// The caller's promise ([`CallerMem::new`], or [`Mapped::new`]).
    Caller,
}

/// This process's part of a window as `len` `T`s: the one view of that memory as
/// `T`s in this process ([`CallerMem::copy_of`] and [`Segment::take_local`] make one
/// per memory), keeping it alive.
pub struct LocalMem<T> {
    mem: Mapped,
    len: usize,
    _t: PhantomData<T>,
}

impl<T> std::fmt::Debug for LocalMem<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalMem").field("len", &self.len).finish()
    }
}

impl<T> LocalMem<T> {
    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first element in this process.
    pub fn addr(&self) -> usize {
        self.mem.addr
    }

    /// The elements. MPI's rule that local accesses do not overlap other processes'
    /// accesses is the program's; what they write is bytes, valid `T`s (`AnyBytes`, which
    /// the constructors took).
    pub fn as_mut(&mut self) -> &mut [T] {
        if self.len == 0 || std::mem::size_of::<T>() == 0 {
            return &mut [];
        }
        // SAFETY: `len` `T`s at `addr`, aligned and inside the memory (the constructors checked), which `mem` keeps alive; this is the memory's one view as `T`s in this process and `&mut self` borrows it exclusively; any bytes are a valid `T` (`AnyBytes`).
        unsafe { std::slice::from_raw_parts_mut(self.mem.addr as *mut T, self.len) }
    }

    /// Copies the elements to `out` (as many as both hold).
    pub fn copy_to(&mut self, out: &mut [T]) {
        let n = self.len.min(out.len());
        let src = &self.as_mut()[..n];
        // SAFETY: `n` `T`s of this memory to `n` of `out`, both valid and apart (`out` is exclusively borrowed, the memory is ours); a bitwise copy is a valid `T` (`AnyBytes`: no drop glue, any bytes).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), out.as_mut_ptr(), n) };
    }
}

/// One shared mapping of a window's host segment.
#[derive(Debug)]
pub struct Segment {
    map: Mapping,
    /// The memfd, kept open until every local rank mapped it ([`Segment::close_fd`]).
    fd: Option<OwnedFd>,
    /// Whether [`Segment::take_local`] handed out this process's view.
    local_taken: AtomicBool,
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
        let fd = memfd::new(c"oxmpi-win")?;
        memfd::set_len(&fd, len.max(1))?;
        Self::map(fd, len)
    }

    /// Maps the segment another local process made (its pid and descriptor number).
    pub fn open(pid: i32, fd: i32, len: usize) -> io::Result<Segment> {
        Self::map(memfd::open_peer(pid, fd)?, len)
    }

    fn map(fd: OwnedFd, len: usize) -> io::Result<Segment> {
        Ok(Segment {
            map: Mapping::new(&fd, len.max(1))?,
            fd: Some(fd),
            local_taken: AtomicBool::new(false),
        })
    }

    /// Bytes `off .. off + len` of the mapping as window memory, kept mapped as long
    /// as the `Mapped` (or a clone) lives; `None` if they do not lie inside it.
    pub fn part(self: &Arc<Self>, off: usize, len: usize) -> Option<Mapped> {
        (off.checked_add(len)? <= self.len()).then(|| Mapped {
            addr: self.addr() + off,
            len,
            _keep: Keep::Segment(self.clone()),
        })
    }

    /// This process's part of the window, `len` `T`s at byte `off`, as its one view of
    /// `T`s: once per mapping (`None` afterwards, or if the elements are misaligned or
    /// do not lie inside it).
    pub fn take_local<T>(
        self: &Arc<Self>,
        off: usize,
        len: usize,
        _any: AnyBytes<T>,
    ) -> Option<LocalMem<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        let mem = self.part(off, bytes)?;
        if !mem.addr.is_multiple_of(std::mem::align_of::<T>()) {
            return None;
        }
        if self.local_taken.swap(true, Ordering::AcqRel) {
            return None;
        }
        Some(LocalMem {
            mem,
            len,
            _t: PhantomData,
        })
    }

    /// The descriptor other local ranks open (valid until [`close_fd`](Self::close_fd)).
    pub fn fd(&self) -> i32 {
        self.fd.as_ref().map_or(-1, |fd| fd.as_raw_fd())
    }

    /// Closes the descriptor once every local rank mapped the segment (the mapping stays).
    pub fn close_fd(&mut self) {
        self.fd = None;
    }

    /// The address of the mapping in this process.
    pub fn addr(&self) -> usize {
        self.map.ptr().as_ptr() as usize
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    /// The 64-bit control word at byte offset `off` (8-aligned, inside the mapping).
    #[inline]
    pub fn word(&self, off: usize) -> &AtomicU64 {
        assert!(
            off.is_multiple_of(8) && off + 8 <= self.len(),
            "winmem: control word {off} outside the segment"
        );
        // SAFETY: in bounds and 8-aligned (checked; the mapping is page-aligned), the memory lives as long as `self`, and every access to control words is atomic.
        unsafe { &*(self.map.ptr().as_ptr().add(off) as *const AtomicU64) }
    }
}

/// Window memory mapped in this process: `len` bytes from `addr` (a target's part of
/// the host segment, this process's own window memory, or a region attached to a
/// dynamic window), with what keeps it alive (a share of the segment or of the heap
/// memory, or the caller's promise): made by [`Segment::part`], [`CallerMem::mapped`]
/// or, for memory the caller vouches for, [`Mapped::new`]. Every access goes through a
/// [`Span`] checked to lie inside it, borrowed from it.
#[derive(Clone, Debug)]
pub struct Mapped {
    addr: usize,
    len: usize,
    /// Held for its drop: the memory lives as long as this value.
    _keep: Keep,
}

impl Mapped {
    /// # Safety
    /// `addr .. addr + len` is memory of this process, valid for reads and writes
    /// (window memory: other processes may access it concurrently) for as long as this
    /// value or a clone of it is used.
    pub const unsafe fn new(addr: usize, len: usize) -> Mapped {
        Mapped {
            addr,
            len,
            _keep: Keep::Caller,
        }
    }

    /// The first `len` bytes at most (a shorter reach is within the same proof).
    pub fn within(mut self, len: usize) -> Mapped {
        self.len = self.len.min(len);
        self
    }

    /// Copies of the `T`s the memory holds (as many as fit; unaligned reads).
    pub fn read_elems<T>(&self, _any: AnyBytes<T>) -> Vec<T> {
        let size = std::mem::size_of::<T>();
        if size == 0 {
            return Vec::new();
        }
        let n = self.len / size;
        let mut v: Vec<T> = Vec::with_capacity(n);
        // SAFETY: `n * size` bytes inside the memory (readable: the constructors' proof) to the vector's spare capacity of `n` `T`s (writable, apart from window memory: a fresh allocation); any bytes are a valid `T` (`AnyBytes`), so the `n` copied are initialized.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.addr as *const u8,
                v.as_mut_ptr().cast::<u8>(),
                n * size,
            );
            v.set_len(n);
        }
        v
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
#[derive(Clone, Debug)]
pub enum Reach {
    /// Mapped in our own address space (the shared segment or our own memory).
    Mapped(Mapped),
    /// The memory this process attached to a dynamic window (offsets are addresses).
    Attached(Arc<Attached>),
    /// At this address in process `pid`, by cross-memory attach.
    Cma { pid: i32, addr: usize },
}

/// The memory this process attached to a dynamic window: its regions, each the
/// `Mapped` of the `CallerMem` its attach took, reached by their addresses in this
/// process; an access must lie in regions (adjacent ones together may hold it).
#[derive(Debug, Default)]
pub struct Attached {
    regions: Mutex<Vec<Mapped>>,
}

impl Attached {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Mapped>> {
        self.regions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a region (the caller checked it overlaps none).
    pub fn add(&self, mem: &CallerMem) {
        let mut g = self.lock();
        g.push(mem.mapped());
        g.sort_unstable_by_key(|m| m.addr);
    }

    /// Removes the region starting at `base`; whether there was one.
    pub fn remove(&self, base: usize) -> bool {
        let mut g = self.lock();
        let n = g.len();
        g.retain(|m| m.addr != base);
        g.len() != n
    }

    /// Runs `f(span, at)` over the pieces of `addr .. addr + len` (`at`: the piece's
    /// offset in the run), once every byte was found in a region; `false` (nothing done)
    /// otherwise.
    fn pieces(&self, addr: usize, len: usize, mut f: impl FnMut(Span<'_>, usize)) -> bool {
        let g = self.lock();
        let Some(end) = addr.checked_add(len) else {
            return false;
        };
        // The regions holding `addr .. end` in turn (sorted by address), `f` run over
        // them only on the second pass, once the first found every byte.
        let walk = |f: &mut dyn FnMut(&Mapped, usize, usize, usize)| {
            let mut at = addr;
            for m in g.iter() {
                if at >= end {
                    break;
                }
                if m.addr <= at && at < m.addr + m.len {
                    let n = (m.addr + m.len).min(end) - at;
                    f(m, at - m.addr, n, at - addr);
                    at += n;
                }
            }
            at >= end
        };
        if !walk(&mut |_, _, _, _| ()) {
            return false;
        }
        walk(&mut |m, off, n, pos| {
            if let Some(s) = m.span(off, n) {
                f(s, pos);
            }
        })
    }

    /// Copies `out.len()` bytes from address `addr`; `false` if they are not attached.
    pub fn read(&self, addr: usize, out: &mut [u8]) -> bool {
        let n = out.len();
        self.pieces(addr, n, |s, pos| s.read(&mut out[pos..pos + s.len()]))
    }

    /// Copies `data` to address `addr`; `false` if it is not attached.
    pub fn write(&self, addr: usize, data: &[u8]) -> bool {
        self.pieces(addr, data.len(), |s, pos| {
            s.write(&data[pos..pos + s.len()])
        })
    }
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
        let ok = match self {
            Reach::Mapped(m) => m.read(off, out),
            Reach::Attached(a) => a.read(off, out),
            &Reach::Cma { pid, addr } => {
                return super::cma::read_remote(pid, addr.wrapping_add(off), out)
            }
        };
        match ok {
            true => Ok(()),
            false => Err(outside(off, out.len())),
        }
    }

    /// Copies `data` into the target's window at byte `off`.
    pub fn write(&self, off: usize, data: &[u8]) -> io::Result<()> {
        let ok = match self {
            Reach::Mapped(m) => m.write(off, data),
            Reach::Attached(a) => a.write(off, data),
            &Reach::Cma { pid, addr } => {
                return super::cma::write_remote(pid, addr.wrapping_add(off), data)
            }
        };
        match ok {
            true => Ok(()),
            false => Err(outside(off, data.len())),
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

    #[test]
    fn local_views_are_made_once_and_keep_their_memory() {
        let any = AnyBytes::<u32>::element();
        let seg = Arc::new(Segment::create(8192).unwrap());
        let mut mine = seg.take_local(4096, 4, any).unwrap();
        assert!(seg.take_local(4096, 4, any).is_none(), "a second view");
        assert!(
            Arc::new(Segment::create(8192).unwrap())
                .take_local(2, 4, any)
                .is_none(),
            "misaligned"
        );
        drop(seg);
        mine.as_mut()[3] = 9;
        assert_eq!(mine.as_mut(), [0, 0, 0, 9]);
        // A heap copy: the window's memory, written back on request.
        let src = [1u32, 2, 3];
        let (mem, mut local) = CallerMem::copy_of(&src, any);
        assert_ne!(mem.addr(), src.as_ptr() as usize);
        assert!(Reach::Mapped(mem.mapped())
            .write(4, &7u32.to_ne_bytes())
            .is_ok());
        drop(mem);
        let mut back = [0u32; 3];
        local.copy_to(&mut back);
        assert_eq!(back, [1, 7, 3]);
    }

    #[test]
    fn attached_regions_are_reached_only_where_attached() {
        let any = AnyBytes::<u8>::element();
        let (a, _la) = CallerMem::copy_of(&[0u8; 64], any);
        let att = Attached::default();
        att.add(&a);
        let reach = Reach::Attached(Arc::new(att));
        reach.write(a.addr() + 60, b"abcd").unwrap();
        let mut out = [0u8; 4];
        reach.read(a.addr() + 60, &mut out).unwrap();
        assert_eq!(&out, b"abcd");
        assert!(
            reach.write(a.addr() + 62, b"abcd").is_err(),
            "past the region"
        );
        assert!(reach.read(a.addr() - 1, &mut out).is_err(), "before it");
        let Reach::Attached(att) = &reach else {
            unreachable!()
        };
        assert!(att.remove(a.addr()));
        assert!(reach.read(a.addr(), &mut out).is_err(), "detached");
        // Regions attached back to back hold an access across their border.
        let (whole, _lw) = CallerMem::copy_of(&[0u8; 32], any);
        // SAFETY: the two halves of `whole`'s heap copy, kept alive by `whole` until the end of the test.
        let (lo, hi) = unsafe {
            (
                CallerMem::new(whole.addr(), 16),
                CallerMem::new(whole.addr() + 16, 16),
            )
        };
        att.add(&hi);
        att.add(&lo);
        reach.write(whole.addr() + 12, b"12345678").unwrap();
        let mut eight = [0u8; 8];
        Reach::Mapped(whole.mapped()).read(12, &mut eight).unwrap();
        assert_eq!(&eight, b"12345678");
        assert!(att.remove(hi.addr()));
        assert!(
            reach.write(whole.addr() + 12, b"12345678").is_err(),
            "half detached"
        );
    }
}
