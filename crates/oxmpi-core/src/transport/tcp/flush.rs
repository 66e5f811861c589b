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
//! ([`set_hook`]), which takes the engine's lock and writes what is held
//! ([`super::TcpTransport::flush_held`]). Without a hook (unit tests, a transport
//! outside the runtime) nothing is held.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::thread::Thread;
use std::time::Duration;

/// How long a held-back packet waits for the sender's next poll before the flusher
/// writes it.
pub(super) const FLUSH_AFTER: Duration = Duration::from_micros(50);

/// Something is held back and no poll has written it since.
static HELD: AtomicBool = AtomicBool::new(false);
/// Writes what is held (takes the engine's lock): set once by the runtime.
static HOOK: OnceLock<fn()> = OnceLock::new();
/// The flusher thread, once started (`None`: it could not be started).
static THREAD: OnceLock<Option<Thread>> = OnceLock::new();

/// Sets the function the flusher calls to write held-back packets (the runtime's,
/// which locks the engine and calls [`super::TcpTransport::flush_held`]).
pub fn set_hook(hook: fn()) {
    let _ = HOOK.set(hook);
}

/// Marks that packets are held back, starting or waking the flusher; false when
/// there is no flusher (no hook, or its thread could not start): then the caller
/// must not hold them.
pub(super) fn arm() -> bool {
    let Some(&hook) = HOOK.get() else {
        return false;
    };
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

fn start(hook: fn()) -> Option<Thread> {
    let h = std::thread::Builder::new()
        .name("oxmpi-tcp-flush".into())
        .spawn(move || {
            // The default timer slack (50 us) would double the sleep below.
            // SAFETY: prctl(PR_SET_TIMERSLACK) takes an integer argument and
            // changes only this thread's timer slack.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
            loop {
                while !HELD.load(Ordering::Acquire) {
                    std::thread::park();
                }
                std::thread::sleep(FLUSH_AFTER);
                if HELD.swap(false, Ordering::AcqRel) {
                    hook();
                }
            }
        })
        .ok()?;
    Some(h.thread().clone())
}
