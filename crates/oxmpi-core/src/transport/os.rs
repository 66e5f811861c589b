//! The runtime's few system calls that std does not wrap: waiting on descriptors
//! (`poll`), the monotonic clock behind `MPI_Wtime`, the processor a thread runs on,
//! the host name, and the exit hook of sessions-only programs. Each is a safe function
//! over plain values; their `unsafe` is here, once.

use std::os::fd::RawFd;
use std::time::Duration;

/// Polls `fds` (each: descriptor, and whether writability counts too) for up to
/// `timeout` (`None`: return at once); whether any is ready.
pub fn poll_fds(fds: &[(RawFd, bool)], timeout: Option<Duration>) -> bool {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|&(fd, write)| libc::pollfd {
            fd,
            events: if write {
                libc::POLLIN | libc::POLLOUT
            } else {
                libc::POLLIN
            },
            revents: 0,
        })
        .collect();
    let ms = timeout.map_or(0, |t| {
        t.as_millis().clamp(1, i32::MAX as u128) as libc::c_int
    });
    // SAFETY: `pfds` is a valid array of pollfd of the length passed, which the kernel only reads and writes within.
    unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, ms) > 0 }
}

/// Seconds on the monotonic clock.
#[inline]
pub fn monotonic_seconds() -> f64 {
    // Exact in an f64 for 104 days of uptime, and within 1 ns long after.
    monotonic_ns() as f64 * 1e-9
}

/// Nanoseconds on the monotonic clock (since boot: never 0 once the system
/// runs). One vDSO `clock_gettime`, without `Instant::elapsed`'s subtraction
/// and overflow checks (~90 -> ~35 instructions; the oversubscribed waits read
/// it once per yield: bench/PROFILE.md over36).
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// The resolution of [`monotonic_seconds`], at least 1 ns.
pub fn monotonic_resolution() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_getres writes the timespec we own.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9).max(1e-9)
}

/// The processor this thread runs on now (`None` if the kernel will not say).
/// glibc reads it from the thread's rseq area, a few instructions: cheap enough
/// for a spinning wait's yield points.
#[inline]
pub fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu takes no arguments and only reads this thread's state.
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).ok()
}

/// This machine's host name (`None` if the kernel will not say).
pub fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into the buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// Runs `f` when the process exits normally (C `atexit`).
pub fn at_exit(f: extern "C" fn()) {
    // SAFETY: registers a plain `extern "C" fn()`, which takes no pointers, with the C library.
    unsafe { libc::atexit(f) };
}
