//! Creating, opening, attaching to and unlinking a segment (`shm_open`, the size
//! and header checks, the owner claim), apart from the ring traffic that runs on
//! an attached segment. The layout it maps is described in the parent module.

use super::*;

fn os_err(what: String) -> MpiError {
    MpiError::new(
        ErrorClass::Other,
        format!("{what}: {}", std::io::Error::last_os_error()),
    )
}

/// `"/name"` as a C string, after checking `name` is a valid single path component.
fn shm_path(name: &str) -> Result<CString> {
    if name.is_empty() || name.len() > 250 || name.contains('/') || name == "." || name == ".." {
        return Err(MpiError::new(
            ErrorClass::Arg,
            format!("shm: invalid segment name {name:?} (want 1..=250 bytes, no '/')"),
        ));
    }
    CString::new(format!("/{name}")).map_err(|_| {
        MpiError::new(
            ErrorClass::Arg,
            format!("shm: segment name {name:?} contains NUL"),
        )
    })
}

/// Fail early, with a clear message, if /dev/shm cannot hold the segment: a tmpfs that
/// runs out of space later delivers SIGBUS on the first touch of an unbacked page.
fn check_space(name: &str, layout: &Layout) -> Result<()> {
    let path = c"/dev/shm";
    // SAFETY: `statvfs` is plain old data, for which all-zero is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a NUL-terminated string and `st` a valid, writable statvfs.
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        // No /dev/shm to inspect (shm_open will report the real problem, if any).
        return Ok(());
    }
    let free = (st.f_bavail as u128) * (st.f_frsize as u128);
    if free < layout.total as u128 {
        return Err(MpiError::new(
            ErrorClass::NoMem,
            format!(
                "shm: cannot create /dev/shm/{name}: {} local ranks need {} MiB but /dev/shm \
                 has only {} MiB free (enlarge it, e.g. docker --shm-size)",
                layout.nlocal,
                layout.total.div_ceil(1 << 20),
                free >> 20
            ),
        ));
    }
    Ok(())
}

/// Unlinks a freshly created segment unless disarmed (creation succeeded).
struct UnlinkOnError<'a> {
    name: &'a str,
    armed: bool,
}

impl Drop for UnlinkOnError<'_> {
    fn drop(&mut self) {
        if self.armed {
            ShmSegment::unlink(self.name);
        }
    }
}

impl ShmSegment {
    /// Create the segment `/dev/shm/<name>` for `nlocal` local ranks and attach to it as
    /// local rank `my_local`. Fails if it already exists (`O_EXCL`). The file has mode
    /// 0600 (whatever the umask). On failure nothing is left behind.
    pub fn create(name: &str, nlocal: usize, my_local: usize) -> Result<ShmSegment> {
        let layout = Layout::new(nlocal)?;
        check_local(nlocal, my_local)?;
        let path = shm_path(name)?;
        check_space(name, &layout)?;
        // SAFETY: `path` is a valid NUL-terminated string; the flags and mode are plain integers. The returned descriptor, if any, is owned by us below.
        let fd = unsafe {
            libc::shm_open(
                path.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
                0o600 as libc::mode_t,
            )
        };
        if fd < 0 {
            return Err(os_err(format!("shm: cannot create /dev/shm/{name}")));
        }
        // SAFETY: `fd` was just returned by shm_open and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut cleanup = UnlinkOnError { name, armed: true };
        // The mode passed to shm_open was filtered by the umask; make it exactly 0600.
        // SAFETY: `fd` is a valid open descriptor.
        if unsafe { libc::fchmod(fd.as_raw_fd(), 0o600) } != 0 {
            return Err(os_err(format!("shm: cannot chmod /dev/shm/{name}")));
        }
        let len = libc::off_t::try_from(layout.total).map_err(|_| {
            MpiError::new(
                ErrorClass::NoMem,
                format!("shm: segment size {} too large", layout.total),
            )
        })?;
        // SAFETY: `fd` is a valid descriptor of a regular (tmpfs) file opened O_RDWR.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), len) } != 0 {
            return Err(os_err(format!(
                "shm: cannot size /dev/shm/{name} to {} bytes",
                layout.total
            )));
        }
        let map = map(&fd, layout.total, &format!("/dev/shm/{name}"))?;
        // SAFETY: the mapping is at least `size_of::<SegHeader>()` bytes, page aligned (so aligned for SegHeader), and lives as long as `map`; SegHeader is made of atomics, so a shared reference into memory others may touch is sound.
        let header = unsafe { &*(map.ptr.as_ptr() as *const SegHeader) };
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() } as u32;
        header.version.store(VERSION, Ordering::Relaxed);
        header.nlocal.store(nlocal as u32, Ordering::Relaxed);
        header
            .cells_per_ring
            .store(layout.cells as u32, Ordering::Relaxed);
        header.cell_size.store(CELL_SIZE as u32, Ordering::Relaxed);
        header
            .total_size
            .store(layout.total as u64, Ordering::Relaxed);
        header.creator_pid.store(pid, Ordering::Relaxed);
        // Publish: everything above (and the zero-filled rest) is visible to whoever
        // Acquires the magic.
        header.magic.store(MAGIC, Ordering::Release);
        let seg = ShmSegment::attach(map, layout, my_local, pid, name)?;
        cleanup.armed = false;
        Ok(seg)
    }

    /// Attach as local rank `my_local` to the existing segment `/dev/shm/<name>`,
    /// created for `nlocal` ranks. Waits (up to 10 s) for a creator that is still
    /// initializing it; fails clearly if it does not exist, was made for a different
    /// number of ranks or by an incompatible oxmpi, or if `my_local` is already attached.
    pub fn open(name: &str, nlocal: usize, my_local: usize) -> Result<ShmSegment> {
        let layout = Layout::new(nlocal)?;
        check_local(nlocal, my_local)?;
        let path = shm_path(name)?;
        // SAFETY: `path` is a valid NUL-terminated string; no O_CREAT, so mode unused.
        let fd = unsafe { libc::shm_open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC, 0) };
        if fd < 0 {
            return Err(os_err(format!("shm: cannot open /dev/shm/{name}")));
        }
        // SAFETY: `fd` was just returned by shm_open and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let deadline = Instant::now() + OPEN_WAIT;

        // Wait for the creator's ftruncate.
        let size = loop {
            // SAFETY: `stat` is plain old data, for which all-zero is a valid value.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: `fd` is a valid descriptor and `st` a valid, writable stat.
            if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
                return Err(os_err(format!("shm: cannot stat /dev/shm/{name}")));
            }
            if st.st_size > 0 {
                break st.st_size as u64;
            }
            if Instant::now() >= deadline {
                return Err(MpiError::new(
                    ErrorClass::Other,
                    format!("shm: /dev/shm/{name} is still empty after {OPEN_WAIT:?}: its creator died?"),
                ));
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        let map = map(&fd, size as usize, &format!("/dev/shm/{name}"))?;
        drop(fd);
        if (size as usize) < std::mem::size_of::<SegHeader>() {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!("shm: /dev/shm/{name} ({size} bytes) is not an oxmpi segment"),
            ));
        }
        // SAFETY: the mapping is page aligned and at least `size_of::<SegHeader>()` bytes (checked above), and lives as long as `map`; SegHeader is all atomics.
        let header = unsafe { &*(map.ptr.as_ptr() as *const SegHeader) };
        // Wait for the creator to publish the header.
        loop {
            match header.magic.load(Ordering::Acquire) {
                MAGIC => break,
                0 if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
                0 => {
                    return Err(MpiError::new(
                        ErrorClass::Other,
                        format!("shm: /dev/shm/{name} was never initialized: its creator died?"),
                    ))
                }
                _ => {
                    return Err(MpiError::new(
                        ErrorClass::Other,
                        format!("shm: /dev/shm/{name} is not an oxmpi segment (bad magic)"),
                    ))
                }
            }
        }
        let version = header.version.load(Ordering::Relaxed);
        if version != VERSION {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!(
                    "shm: /dev/shm/{name} has format version {version}, this oxmpi speaks \
                     {VERSION}: mixed oxmpi builds in one job?"
                ),
            ));
        }
        let their_nlocal = header.nlocal.load(Ordering::Relaxed) as usize;
        if their_nlocal != nlocal {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!(
                    "shm: /dev/shm/{name} was created for {their_nlocal} local ranks, but this \
                     rank expects {nlocal}"
                ),
            ));
        }
        let cells = header.cells_per_ring.load(Ordering::Relaxed) as usize;
        let cell_size = header.cell_size.load(Ordering::Relaxed) as usize;
        let total = header.total_size.load(Ordering::Relaxed);
        if cells != layout.cells
            || cell_size != CELL_SIZE
            || total != layout.total as u64
            || size != layout.total as u64
        {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!(
                    "shm: /dev/shm/{name} has layout {cells} cells x {cell_size} B, {total} B \
                     (file {size} B); expected {} x {CELL_SIZE} B, {} B: mixed oxmpi builds?",
                    layout.cells, layout.total
                ),
            ));
        }
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() } as u32;
        ShmSegment::attach(map, layout, my_local, pid, name)
    }

    /// Claim local rank `my_local` in a validated mapping.
    fn attach(
        map: SegMap,
        layout: Layout,
        my_local: usize,
        pid: u32,
        name: &str,
    ) -> Result<ShmSegment> {
        let mut seg = ShmSegment {
            map,
            layout,
            my_local,
            // 0 until the claim below succeeds, so a failed attach releases nothing.
            pid: 0,
            push_locks: (0..layout.nlocal)
                .map(|_| SideLock(AtomicBool::new(false)))
                .collect(),
            pop_locks: (0..layout.nlocal)
                .map(|_| SideLock(AtomicBool::new(false)))
                .collect(),
            cached_head: (0..layout.nlocal).map(|_| AtomicU64::new(0)).collect(),
            dirty: (0..layout.nlocal * layout.cells * (CELL_SIZE / SLOT) / 64)
                .map(|_| AtomicU64::new(0))
                .collect(),
        };
        let claim =
            seg.slot(my_local)
                .owner
                .compare_exchange(0, pid, Ordering::AcqRel, Ordering::Acquire);
        if let Err(holder) = claim {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!(
                    "shm: local rank {my_local} of /dev/shm/{name} is already attached by pid \
                     {holder}"
                ),
            ));
        }
        seg.pid = pid;
        seg.prefault_rings();
        Ok(seg)
    }

    /// Faults in the pages of this rank's rings (to and from each peer) at attach, when
    /// all the job's rings on this host total at most [`PREFAULT_BUDGET`] (2-4 ranks).
    /// Otherwise the first lap of a stream of small messages pays a page fault every 64
    /// slots on each side (about 1 ms over a 512 KiB ring, which made the first size of
    /// osu_latency and osu_bw run at half speed: bench/PROFILE.md, rate20). Larger jobs
    /// keep lazy allocation, so rings between ranks that never talk cost no memory.
    /// Errors (a kernel without `MADV_POPULATE_WRITE`) leave the pages to fault lazily.
    fn prefault_rings(&self) {
        let (n, me) = (self.layout.nlocal, self.my_local);
        let ring_bytes = self.layout.cells * CELL_SIZE;
        if n < 2 || n * n * ring_bytes > PREFAULT_BUDGET {
            return;
        }
        for peer in (0..n).filter(|&p| p != me) {
            for ring in [me * n + peer, peer * n + me] {
                let off = self.layout.rings + ring * ring_bytes;
                // SAFETY: ring `ring` (< nlocal²) spans `ring_bytes` from `off` inside the mapping (by construction of `Layout`); populating pages changes no byte.
                unsafe {
                    libc::madvise(
                        self.map.ptr.as_ptr().add(off).cast(),
                        ring_bytes,
                        libc::MADV_POPULATE_WRITE,
                    );
                }
            }
        }
    }

    /// Remove `/dev/shm/<name>`; existing mappings stay valid. A missing segment (or an
    /// invalid name) is not an error.
    pub fn unlink(name: &str) {
        if let Ok(path) = shm_path(name) {
            // SAFETY: `path` is a valid NUL-terminated string. ENOENT and other errors are deliberately ignored.
            unsafe {
                libc::shm_unlink(path.as_ptr());
            }
        }
    }
}
