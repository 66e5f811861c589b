//! The flusher: packets a TCP peer's send queue holds back to write a window of
//! messages in one call ([`super::TcpTransport::write_out`] inside a coalescing
//! window) leave within about [`FLUSH_AFTER`] even if the program makes no further
//! MPI call (the progress rule: a receive completes although the sender computes).
//!
//! One thread per process, started the first time something is held and parked
//! while nothing is. Holding arms it ([`arm`]: an atomic swap, and an unpark, a
//! system call only when the thread is parked, once per window); a poll, which
//! writes every queue, disarms it ([`disarm`]). An armed flusher sleeps
//! [`FLUSH_AFTER`] and, if no poll came meanwhile, runs the hook the runtime set
//! ([`set_hook`]), which tries the engine's lock and writes what is held
//! ([`super::TcpTransport::flush_held`]). Without a hook (unit tests, a transport
//! outside the runtime) nothing is held.
//!
//! # fork
//!
//! A `fork` copies only the calling thread: had the flusher held the engine's lock at
//! that moment, the child's copy of the lock would stay held for ever. So the hook
//! runs inside a guard ([`enter`]/[`leave`]) that `fork` waits for: a `pthread_atfork`
//! handler, registered when the thread starts, keeps the flusher out from just before
//! the fork until just after it, and waits for a hook already running to return. The
//! hook only tries the engine's lock (the runtime's `try_lock`; busy: try again after
//! the next sleep), so that wait is one write's length even when the forking thread
//! itself holds the lock. In the child, which has no flusher, nothing is held again.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::OnceLock;
use std::thread::Thread;
use std::time::Duration;

/// How long a held-back packet waits for the sender's next poll before the flusher
/// writes it.
pub(super) const FLUSH_AFTER: Duration = Duration::from_micros(50);

/// Something is held back and no poll has written it since.
static HELD: AtomicBool = AtomicBool::new(false);
/// Writes what is held (tries the engine's lock; false: it was busy, try again
/// later): set once by the runtime.
static HOOK: OnceLock<fn() -> bool> = OnceLock::new();
/// The flusher thread, once started (`None`: it could not be started).
static THREAD: OnceLock<Option<Thread>> = OnceLock::new();
/// This process is a child forked after the flusher started: it has no flusher.
static FORKED: AtomicBool = AtomicBool::new(false);
/// The fork guard: [`IN_HOOK`] while the flusher runs its hook, plus [`FORKING`] for
/// every fork in progress (between the atfork handlers).
static GUARD: AtomicU32 = AtomicU32::new(0);
const IN_HOOK: u32 = 1;
const FORKING: u32 = 2;

/// Sets the function the flusher calls to write held-back packets (the runtime's,
/// which tries the engine's lock and calls [`super::TcpTransport::flush_held`];
/// false when the lock was busy).
pub fn set_hook(hook: fn() -> bool) {
    let _ = HOOK.set(hook);
}

/// The flusher may run its hook: no fork is in progress. Pair with [`leave`].
fn enter() -> bool {
    GUARD
        .compare_exchange(0, IN_HOOK, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

/// The flusher's hook returned.
fn leave() {
    GUARD.fetch_and(!IN_HOOK, Ordering::Release);
}

/// Before a fork: keeps the flusher out of its hook and waits for a hook already
/// running (a write under the engine's lock, never a wait for the lock) to return.
extern "C" fn before_fork() {
    GUARD.fetch_add(FORKING, Ordering::AcqRel);
    while GUARD.load(Ordering::Acquire) & IN_HOOK != 0 {
        std::hint::spin_loop();
    }
}

/// In the parent after a fork: the flusher may run again.
extern "C" fn after_fork_parent() {
    GUARD.fetch_sub(FORKING, Ordering::AcqRel);
}

/// In the child after a fork: no flusher thread exists here, so nothing may be
/// held back any more ([`arm`] answers false).
extern "C" fn after_fork_child() {
    FORKED.store(true, Ordering::Relaxed);
    GUARD.store(0, Ordering::Relaxed);
}

/// Registers the fork guard's handlers (once per process); false if it could not.
fn guard_fork() -> bool {
    static DONE: OnceLock<bool> = OnceLock::new();
    *DONE.get_or_init(|| {
        // SAFETY: the three handlers are argument-less `extern "C"` functions that only touch atomics (the child's is async-signal-safe) and live as long as the process.
        let rc = unsafe {
            libc::pthread_atfork(
                Some(before_fork),
                Some(after_fork_parent),
                Some(after_fork_child),
            )
        };
        rc == 0
    })
}

/// Marks that packets are held back, starting or waking the flusher; false when
/// there is no flusher (no hook, or its thread could not start): then the caller
/// must not hold them.
pub(super) fn arm() -> bool {
    let Some(&hook) = HOOK.get() else {
        return false;
    };
    if FORKED.load(Ordering::Relaxed) {
        return false;
    }
    let Some(t) = THREAD.get_or_init(|| start(hook)) else {
        return false;
    };
    if !HELD.swap(true, Ordering::AcqRel) {
        t.unpark();
    }
    true
}

/// A poll wrote every queue: nothing is held any more.
pub(super) fn disarm() {
    if HELD.load(Ordering::Relaxed) {
        HELD.store(false, Ordering::Release);
    }
}

fn start(hook: fn() -> bool) -> Option<Thread> {
    if !guard_fork() {
        return None;
    }
    let h = std::thread::Builder::new()
        .name("oxmpi-tcp-flush".into())
        .spawn(move || {
            // The default timer slack (50 us) would double the sleep below.
            // SAFETY: prctl(PR_SET_TIMERSLACK) takes an integer argument and changes only this thread's timer slack.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
            loop {
                while !HELD.load(Ordering::Acquire) {
                    std::thread::park();
                }
                std::thread::sleep(FLUSH_AFTER);
                if HELD.swap(false, Ordering::AcqRel) && !run_guarded(hook) {
                    // A fork in progress, or the engine's lock busy (its holder is in
                    // an MPI call, whose poll may write the queues): after the next
                    // sleep, unless a poll disarms it meanwhile.
                    HELD.store(true, Ordering::Release);
                }
            }
        })
        .ok()?;
    Some(h.thread().clone())
}

/// Runs `hook` inside the fork guard; false if a fork is in progress or the hook
/// found the engine's lock busy.
fn run_guarded(hook: fn() -> bool) -> bool {
    if !enter() {
        return false;
    }
    let done = hook();
    leave();
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Instant;

    /// Stands for the engine's lock.
    static LOCK: Mutex<()> = Mutex::new(());
    static STARTED: AtomicBool = AtomicBool::new(false);
    static DONE: AtomicBool = AtomicBool::new(false);

    /// A hook that holds `LOCK` until a fork has begun (bounded, so that without the
    /// guard the test fails instead of hanging).
    fn hold_until_fork() -> bool {
        {
            let _g = LOCK.lock().unwrap();
            STARTED.store(true, Ordering::Release);
            let t = Instant::now();
            while GUARD.load(Ordering::Acquire) & FORKING == 0 && t.elapsed().as_secs() < 10 {
                std::hint::spin_loop();
            }
        }
        DONE.store(true, Ordering::Release);
        true
    }

    #[test]
    fn a_fork_waits_for_the_flushers_hook_so_the_child_gets_the_lock_free() {
        assert!(guard_fork());
        let flusher = std::thread::spawn(|| {
            while !run_guarded(hold_until_fork) {
                std::hint::spin_loop();
            }
        });
        while !STARTED.load(Ordering::Acquire) {
            std::hint::spin_loop();
        }
        // SAFETY: the child only tries a lock (an atomic exchange) and calls _exit, both async-signal-safe.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let free = LOCK.try_lock().is_ok();
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(if free { 0 } else { 1 }) };
        }
        assert!(pid > 0, "fork failed");
        // The fork returned only after the hook did.
        assert!(
            DONE.load(Ordering::Acquire),
            "fork did not wait for the hook"
        );
        let mut status = 0;
        // SAFETY: waits for the child just forked; `status` is a valid int.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(r, pid);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "the child found the flusher's lock held (status {status})"
        );
        flusher.join().unwrap();
        // After the fork the guard lets the flusher in again.
        assert!(enter());
        leave();
    }
}
