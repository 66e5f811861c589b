//! Thin, safe wrappers around the POSIX calls the launcher needs that std
//! does not expose. Each `unsafe` block is confined to one small function.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};

fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// A connected `AF_UNIX` stream pair, both ends close-on-exec.
pub fn socketpair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` is a valid array of two ints for the kernel to fill.
    cvt(unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    })?;
    // SAFETY: socketpair succeeded, so both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A pipe with both ends close-on-exec and non-blocking.
pub fn nonblocking_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` is a valid array of two ints for the kernel to fill.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) })?;
    // SAFETY: pipe2 succeeded, so both descriptors are open and unowned.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Sets `O_NONBLOCK` on a descriptor we own exclusively.
pub fn set_nonblocking(fd: &impl AsRawFd) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl flag queries/updates on an open descriptor.
    let flags = cvt(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    // SAFETY: as above.
    cvt(unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) })?;
    Ok(())
}

/// Called in the forked child before exec; only async-signal-safe calls.
///
/// Makes the child die with the launcher, keeps its PMI descriptor across
/// exec and gives it an empty signal mask.
pub fn prepare_child(pmi_fd: Option<RawFd>, launcher_pid: libc::pid_t) -> io::Result<()> {
    // SAFETY: prctl(PR_SET_PDEATHSIG) takes a signal number and affects only the calling process.
    cvt(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) })?;
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } != launcher_pid {
        // The launcher died between fork and prctl; the death signal will
        // never come, so do not start the rank at all.
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    if let Some(pmi_fd) = pmi_fd {
        // SAFETY: F_GETFD/F_SETFD on the inherited PMI descriptor, which the parent keeps open until after the spawn returns.
        let flags = cvt(unsafe { libc::fcntl(pmi_fd, libc::F_GETFD) })?;
        // SAFETY: as above.
        cvt(unsafe { libc::fcntl(pmi_fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) })?;
    }
    // SAFETY: an all-zero sigset_t is a valid argument for sigemptyset, which then initialises it; sigprocmask only reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        cvt(libc::sigprocmask(
            libc::SIG_SETMASK,
            &set,
            std::ptr::null_mut(),
        ))?;
    }
    Ok(())
}

/// Moves `pid` into process group `pgid` from the parent side; closes the
/// race where the parent signals the group before the child joined it.
/// Failure is expected once the child has exec'd (it did join by then).
pub fn setpgid(pid: libc::pid_t, pgid: libc::pid_t) {
    // SAFETY: setpgid has no memory-safety preconditions.
    unsafe { libc::setpgid(pid, pgid) };
}

/// Sends `sig` to a process; errors (already gone) are ignored.
pub fn kill(pid: libc::pid_t, sig: libc::c_int) {
    if pid > 0 {
        // SAFETY: kill has no memory-safety preconditions; pid > 0 so this never targets our own group or every process.
        unsafe { libc::kill(pid, sig) };
    }
}

/// Sends `sig` to every process in group `pgid`.
pub fn kill_group(pgid: libc::pid_t, sig: libc::c_int) {
    if pgid > 1 {
        // SAFETY: as for kill; the negative pid selects the group and pgid > 1 rules out "every process" (-1).
        unsafe { libc::kill(-pgid, sig) };
    }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl Exit {
    /// The shell's convention for the status.
    pub fn shell_code(self) -> i32 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal(s) => 128 + s,
        }
    }
}

/// Reaps one terminated child without blocking.
pub fn reap_any() -> Option<(libc::pid_t, Exit)> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a valid out-pointer.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if pid <= 0 {
            return None;
        }
        if libc::WIFEXITED(status) {
            return Some((pid, Exit::Code(libc::WEXITSTATUS(status))));
        }
        if libc::WIFSIGNALED(status) {
            return Some((pid, Exit::Signal(libc::WTERMSIG(status))));
        }
        // Stopped/continued children are still alive; keep reaping.
    }
}

/// `poll(2)`, retrying on EINTR (our signal handlers interrupt it; the
/// self-pipe then reports the signal).
pub fn poll(fds: &mut [libc::pollfd], timeout_ms: i32) -> io::Result<usize> {
    loop {
        // SAFETY: `fds` is a valid, exclusively borrowed slice of pollfd.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Write end of the self-pipe; -1 until handlers are installed.
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = SIGNAL_PIPE.load(Ordering::Relaxed);
    if fd < 0 {
        return;
    }
    let byte = sig as u8;
    // SAFETY: errno is thread-local; saving and restoring it keeps the interrupted code's view intact. write(2) is async-signal-safe and the pipe is non-blocking, so a full pipe just drops a redundant wakeup.
    unsafe {
        let errno = *libc::__errno_location();
        libc::write(fd, (&byte as *const u8).cast(), 1);
        *libc::__errno_location() = errno;
    }
}

/// Routes `signals` to the self-pipe whose write end is `write_fd` (which
/// must stay open for the rest of the process's life). Each delivered signal
/// becomes one byte holding its number.
pub fn route_signals_to_pipe(write_fd: RawFd, signals: &[libc::c_int]) -> io::Result<()> {
    SIGNAL_PIPE.store(write_fd, Ordering::Relaxed);
    for &sig in signals {
        // SAFETY: an all-zero sigaction is a valid starting point; we set the handler to a function that only performs async-signal-safe work.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            cvt(libc::sigaction(sig, &action, std::ptr::null_mut()))?;
        }
    }
    Ok(())
}

/// Whether the current user may execute `path`.
pub fn is_executable(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated string.
    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
}

/// The conventional name of a signal, e.g. "SIGKILL".
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

/// Our pid.
pub fn getpid() -> libc::pid_t {
    std::process::id() as libc::pid_t
}

/// `read(2)` on a descriptor we do not own (our stdin), bypassing std's
/// buffering so that `poll` readiness and what we read stay in step.
pub fn read_fd(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is a valid, exclusively borrowed byte buffer of the given length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// This machine's host name, as gethostname(2) reports it.
pub fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is valid for `buf.len()` bytes; the kernel writes a NUL-terminated name (truncated to fit).
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return None;
    }
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = std::str::from_utf8(&buf[..len]).ok()?.to_string();
    (!name.is_empty()).then_some(name)
}

/// `n` bytes from the kernel's CSPRNG, as lowercase hex.
pub fn random_hex(n: usize) -> io::Result<String> {
    use std::io::Read;
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares two secrets in time independent of where they differ.
pub fn secrets_equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// An anonymous shared file of `bytes` bytes that children inherit (no
/// close-on-exec), mapped here as atomic words for the life of the process
/// (the job status page, see `hang.rs`: the launcher reads every slot and
/// writes only those of ranks on other hosts, which cannot map it).
pub fn inheritable_shared_words(
    bytes: usize,
) -> io::Result<(OwnedFd, &'static [std::sync::atomic::AtomicU64])> {
    let name = c"oxmpi-status";
    // SAFETY: memfd_create takes a NUL-terminated name and flags; it returns a new descriptor or -1. No MFD_CLOEXEC: the ranks inherit it.
    let fd = cvt(unsafe { libc::memfd_create(name.as_ptr(), 0) })?;
    // SAFETY: `fd` was just returned to us and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: ftruncate on our own descriptor.
    cvt(unsafe { libc::ftruncate(fd.as_raw_fd(), bytes as libc::off_t) })?;
    // SAFETY: a fresh shared mapping of the whole file; failure is MAP_FAILED.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    // The mapping is page-aligned, `bytes` long, never unmapped (it lives as long
    // as the launcher), and only ever accessed through atomics here and in the ranks.
    // SAFETY: valid for the program's lifetime, and AtomicU64 has the layout of u64.
    let words = unsafe {
        std::slice::from_raw_parts(base as *const std::sync::atomic::AtomicU64, bytes / 8)
    };
    Ok((fd, words))
}

/// `CLOCK_MONOTONIC` in milliseconds (the clock ranks stamp the status page with).
pub fn monotonic_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// The CPUs this process may run on (its affinity mask), in increasing
/// order: the cores `--bind-to core` hands out to local ranks in turn.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: an all-zero cpu_set_t is the empty set; sched_getaffinity writes at most size_of::<cpu_set_t>() bytes into it.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        cvt(libc::sched_getaffinity(
            0,
            std::mem::size_of::<libc::cpu_set_t>(),
            &mut set,
        ))?;
        set
    };
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: CPU_ISSET only reads the set, for indexes below CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    if cpus.is_empty() {
        return Err(io::Error::other("the affinity mask is empty"));
    }
    Ok(cpus)
}

/// Binds the calling process to `cpu`. Called between fork and exec:
/// sched_setaffinity is a plain system call, async-signal-safe.
pub fn bind_to_cpu(cpu: usize) -> io::Result<()> {
    // An all-zero cpu_set_t is the empty set; the kernel only reads the set.
    // SAFETY: CPU_SET writes one bit of our set (cpu < CPU_SETSIZE: allowed_cpus' range).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        cvt(libc::sched_setaffinity(
            0,
            std::mem::size_of::<libc::cpu_set_t>(),
            &set,
        ))?;
    }
    Ok(())
}
