//! Cross-memory attach (CMA): single-copy transfers between the address spaces of two
//! processes on one host with `process_vm_readv` / `process_vm_writev`.
//!
//! The kernel checks these calls like `ptrace(PTRACE_MODE_ATTACH)`: same user, and,
//! where the Yama LSM is in mode 1 ("restricted ptrace"), the target must have
//! allowed its reader with `PR_SET_PTRACER`. [`allow_peer_reads`] does that once per
//! process; [`probe_cma`] tells whether the calls work at all here (seccomp filters in
//! containers often forbid them), so the engine can fall back to copying through the
//! shared-memory rings.
//!
//! Nothing here touches memory the caller does not own on our side: the local buffer is
//! a Rust slice, and the remote side is checked by the kernel (a bad remote address is
//! `EFAULT`, never a fault in this process).

use std::io;

/// Let any process of this user read and write our memory with CMA even under Yama's
/// restricted ptrace mode. Without Yama (or with ptrace_scope 0) this is a harmless
/// no-op; errors are ignored because the fallback path still works.
pub fn allow_peer_reads() {
    // SAFETY: prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) takes only integer arguments and touches no memory of ours; failure (EINVAL without Yama) only leaves the ptrace policy unchanged.
    unsafe {
        libc::prctl(
            libc::PR_SET_PTRACER,
            libc::PR_SET_PTRACER_ANY,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        );
    }
}

/// Which direction a [`transfer`] goes.
#[derive(Clone, Copy)]
enum Dir {
    Read,
    Write,
}

/// Copy between `local` (ours) and `[remote_addr, remote_addr + len)` in process `pid`,
/// looping over partial transfers (the kernel stops at the first remote page it cannot
/// access, or after a signal) and failing if one call makes no progress.
fn transfer(pid: i32, remote_addr: usize, local: *mut u8, len: usize, dir: Dir) -> io::Result<()> {
    let mut done = 0usize;
    while done < len {
        let rest = len - done;
        let remote = remote_addr.checked_add(done).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "cma: remote address range overflows",
            )
        })?;
        let liov = libc::iovec {
            // `done < len`, so this stays inside the caller's buffer.
            iov_base: local.wrapping_add(done).cast(),
            iov_len: rest,
        };
        let riov = libc::iovec {
            iov_base: remote as *mut libc::c_void,
            iov_len: rest,
        };
        let n = match dir {
            // `liov` describes `rest` bytes at `local + done`, inside the caller's buffer of
            // `len` bytes (`&mut [u8]` for reads, so the kernel may write it; `&[u8]` for
            // writes, which the kernel only reads). The kernel validates the remote iovec
            // against the *other* process's address space; it cannot fault ours.
            // SAFETY: both iovecs are valid as just said, and the arrays (length 1) live on our stack for the duration of the call.
            Dir::Read => unsafe { libc::process_vm_readv(pid, &liov, 1, &riov, 1, 0) },
            // SAFETY: as above; for writev the kernel only reads our local buffer.
            Dir::Write => unsafe { libc::process_vm_writev(pid, &liov, 1, &riov, 1, 0) },
        };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "cma: no progress transferring {rest} bytes at {remote:#x} of pid {pid} \
                     ({done} of {len} done)"
                ),
            ));
        }
        // The kernel never reports more than it was asked for; be defensive anyway.
        done += (n as usize).min(rest);
    }
    Ok(())
}

/// Copy `local.len()` bytes from address `remote_addr` of process `pid` into `local`.
pub fn read_remote(pid: i32, remote_addr: usize, local: &mut [u8]) -> io::Result<()> {
    transfer(pid, remote_addr, local.as_mut_ptr(), local.len(), Dir::Read)
}

/// Copy `local` to address `remote_addr` of process `pid`.
pub fn write_remote(pid: i32, remote_addr: usize, local: &[u8]) -> io::Result<()> {
    // `transfer` takes `*mut` for both directions; for writes the kernel only reads it.
    transfer(
        pid,
        remote_addr,
        local.as_ptr() as *mut u8,
        local.len(),
        Dir::Write,
    )
}

/// A cheap, monotonic count of CPU time stamps, for the engine's running estimate of
/// what a read costs against a copy through the ring (`engine::pullcost`): only
/// differences are used, in no particular unit. 0 where there is no such counter
/// (the estimate then never forms and the fixed size threshold decides).
#[inline(always)]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` exists on every x86_64 CPU, reads a counter and touches no memory.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// Whether CMA works here: read a known value out of our own memory through our own
/// pid. Fails under seccomp policies that forbid the syscalls, or kernels without
/// `CONFIG_CROSS_MEMORY_ATTACH`.
pub fn probe_cma() -> bool {
    let src: [u8; 16] = *b"oxmpi-cma-probe!";
    let mut dst = [0u8; 16];
    // SAFETY: getpid has no preconditions and cannot fail.
    let pid = unsafe { libc::getpid() };
    let ok = read_remote(pid, std::hint::black_box(&src).as_ptr() as usize, &mut dst).is_ok();
    ok && dst == src
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> i32 {
        // SAFETY: getpid has no preconditions and cannot fail.
        unsafe { libc::getpid() }
    }

    #[test]
    fn probe_works_here() {
        assert!(probe_cma(), "process_vm_readv unavailable on this machine");
    }

    #[test]
    fn read_own_memory() {
        let src: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        read_remote(me(), src.as_ptr() as usize, &mut dst).unwrap();
        assert_eq!(src, dst);
    }

    #[test]
    fn write_own_memory() {
        let src: Vec<u8> = (0..100_003u32).map(|i| (i ^ 0x5a) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        write_remote(me(), dst.as_mut_ptr() as usize, &src).unwrap();
        assert_eq!(src, dst);
    }

    #[test]
    fn empty_transfer_is_ok() {
        let mut dst = [0u8; 0];
        read_remote(me(), 0, &mut dst).unwrap();
        write_remote(me(), 0, &dst).unwrap();
    }

    #[test]
    fn bad_remote_address_is_an_error() {
        let mut dst = [0u8; 64];
        assert!(read_remote(me(), 8, &mut dst).is_err());
        assert!(write_remote(me(), 8, &dst).is_err());
    }

    #[test]
    fn partially_mapped_range_is_an_error() {
        // A range that starts in our buffer but runs off into unmapped memory: the
        // kernel copies a prefix, then the next call makes no progress (or EFAULT).
        let page = 4096usize;
        // SAFETY: anonymous private mapping of two pages, no file, checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        // SAFETY: the second page lies inside the mapping we just created.
        let rc = unsafe { libc::munmap((p as *mut u8).add(page).cast(), page) };
        assert_eq!(rc, 0);
        let mut dst = vec![0u8; 2 * page];
        assert!(read_remote(me(), p as usize, &mut dst).is_err());
        // SAFETY: unmapping the first page, which we still own and nothing references.
        unsafe { libc::munmap(p, page) };
    }

    #[test]
    fn allow_peer_reads_is_harmless() {
        allow_peer_reads();
        assert!(probe_cma());
    }
}
