//! The status page: this rank's slot of the launcher's page (or reports over
//! PMI from other hosts), and the [`Watch`] blocking waits carry.

use super::*;

struct Page {
    page: Sink,
    after: Duration,
    multi: bool,
}

/// Where this rank's slot is written: the launcher's page mapped here (a rank
/// on the launcher's host), or reports over the PMI connection (a rank on
/// another host; see `oxmpi_pmi::status::STATUS_PMI_ENV`).
enum Sink {
    Page(StatusPage),
    Pmi,
}

impl Page {
    /// Publishes a state; `false` if it could not be sent now (try again later).
    fn publish(&self, state: u64, idle: Duration, sent: &[u64], recvd: &[u64], text: &str) -> bool {
        match &self.page {
            Sink::Page(page) => {
                page.publish(
                    state,
                    monotonic_ms().saturating_sub(idle.as_millis() as u64),
                    sent,
                    recvd,
                    text,
                );
                true
            }
            Sink::Pmi => {
                let report = layout::Report {
                    state,
                    idle_ms: idle.as_millis() as u64,
                    sent: sent.to_vec(),
                    recvd: recvd.to_vec(),
                    text: text.to_string(),
                };
                // A rank going back to running must be heard (a stale "blocked" could
                // count as evidence): it waits for the connection; blocked reports do not.
                crate::runtime::engine_any().is_some_and(|e| {
                    e.pmi_notify(
                        &layout::encode_report(&report),
                        state == layout::STATE_RUNNING,
                    )
                })
            }
        }
    }

    fn set_running(&self) {
        match &self.page {
            Sink::Page(page) => page.set_running(),
            Sink::Pmi => {
                let _ = self.publish(layout::STATE_RUNNING, Duration::ZERO, &[], &[], "");
            }
        }
    }
}

static PAGE: OnceLock<Page> = OnceLock::new();

/// At start-up: maps this rank's status slot if the launcher made one.
pub(crate) fn init(rank: u32, size: u32, multi: bool) {
    let page = match StatusPage::from_env(rank, size) {
        Some(p) => Sink::Page(p),
        None if std::env::var_os(layout::STATUS_PMI_ENV).is_some() => Sink::Pmi,
        None => return,
    };
    let after = std::env::var(layout::HANG_AFTER_ENV)
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(Duration::from_secs(1), Duration::from_secs_f64);
    let _ = PAGE.set(Page { page, after, multi });
}

/// How long a wait stays idle before it publishes itself to the launcher
/// (`OXMPI_HANG_AFTER`; 1 s when mpiexec does not set it).
pub fn hang_after() -> Duration {
    match PAGE.get() {
        Some(p) => p.after,
        None => std::env::var(layout::HANG_AFTER_ENV)
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map_or(Duration::from_secs(1), Duration::from_secs_f64),
    }
}

fn monotonic_ms() -> u64 {
    (crate::runtime::wtime() * 1000.0) as u64
}

/// MPI_Finalize, past its last packet: this rank will send nothing more.
pub(crate) fn finalizing(e: &Engine) {
    let Some(p) = PAGE.get() else { return };
    let (sent, recvd) = e.lock().pair_counters();
    // No `at=` (the caller's location): the launcher reports a finalizing rank
    // as "is in MPI_Finalize" without reading its text, and symbolizing a
    // backtrace costs every rank 0.2-1 s of CPU at exit (it decompresses the
    // library's debug info; bench/PROFILE.md).
    p.publish(
        layout::STATE_FINALIZING,
        Duration::ZERO,
        &sent,
        &recvd,
        "call=MPI_Finalize\nargs=\nwaits=\n",
    );
}

thread_local! {
    /// Set on oxmpi's own background threads (the MPI-IO worker).
    static BACKGROUND: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as one of oxmpi's own background threads (the
/// MPI-IO worker): its waits are never published as the rank's, since the
/// program's threads may still be computing or about to call MPI; a rank is
/// blocked when a thread of the program is (waiting on the background
/// operation's request, for instance).
pub(crate) fn background_thread() {
    BACKGROUND.with(|b| b.set(true));
}

/// Background jobs (MPI-IO accesses) running now, and background threads idle in
/// an MPI wait now. While a job runs outside MPI waits (writing to the file,
/// packing), a program thread waiting for its request is not blocked: the job
/// is working for it, so the rank is not published blocked.
static BG_RUNNING: AtomicUsize = AtomicUsize::new(0);
static BG_WAITING: AtomicUsize = AtomicUsize::new(0);

/// Brackets one background job (the MPI-IO worker's access).
pub(crate) struct BackgroundJob(());

impl BackgroundJob {
    pub(crate) fn start() -> BackgroundJob {
        BG_RUNNING.fetch_add(1, Ordering::AcqRel);
        BackgroundJob(())
    }
}

impl Drop for BackgroundJob {
    fn drop(&mut self) {
        BG_RUNNING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Whether a background job is working outside an MPI wait.
fn background_working() -> bool {
    BG_RUNNING.load(Ordering::Acquire) > BG_WAITING.load(Ordering::Acquire)
}

/// Lives on a blocking wait's stack: publishes the rank blocked once the wait
/// has been idle long enough, and running again when it moves or returns.
pub(crate) struct Watch {
    idle_since: Option<Instant>,
    published: bool,
    text: Option<String>,
    /// A background thread's wait counted in `BG_WAITING`.
    bg_waiting: bool,
}

impl Watch {
    #[inline]
    pub(crate) fn new() -> Watch {
        Watch {
            idle_since: None,
            published: false,
            text: None,
            bg_waiting: false,
        }
    }

    /// The wait is about to sleep with nothing done (slow path).
    pub(crate) fn idle(&mut self, e: &Engine, desc: &dyn Fn() -> Option<Call>) {
        let Some(p) = PAGE.get() else { return };
        if BACKGROUND.with(|b| b.get()) {
            if !self.bg_waiting {
                self.bg_waiting = true;
                BG_WAITING.fetch_add(1, Ordering::AcqRel);
            }
            return;
        }
        if self.published {
            return;
        }
        let since = *self.idle_since.get_or_insert_with(Instant::now);
        if since.elapsed() < p.after {
            return;
        }
        // A background job working for this rank (file I/O) is not a wait.
        if background_working() {
            return;
        }
        // A process connected to another job (MPI_Comm_connect/accept/join) may
        // wait for that job's processes, which this launcher does not watch: it
        // cannot prove a deadlock, so it is not told of one.
        if crate::comm::dynamic::connected_to_other_jobs() {
            return;
        }
        // Counters first, under the lock, then the (slow) text: the counters
        // are what the launcher compares; they stay valid while we stay idle.
        let (sent, recvd) = e.lock().pair_counters();
        let text = self
            .text
            .get_or_insert_with(|| super::describe::describe(e, desc()));
        let state = if p.multi {
            layout::STATE_BLOCKED_MT
        } else {
            layout::STATE_BLOCKED
        };
        // (Over PMI, a busy connection means: try again at the next idle look.)
        self.published = p.publish(state, since.elapsed(), &sent, &recvd, text);
    }

    /// The wait made progress: it is not blocked (yet again).
    #[inline]
    pub(crate) fn progressed(&mut self) {
        self.idle_since = None;
        if self.published {
            self.unpublish();
        }
        if self.bg_waiting {
            self.bg_done();
        }
    }

    #[cold]
    fn bg_done(&mut self) {
        self.bg_waiting = false;
        BG_WAITING.fetch_sub(1, Ordering::AcqRel);
    }

    #[cold]
    fn unpublish(&mut self) {
        self.published = false;
        if let Some(p) = PAGE.get() {
            p.set_running();
        }
    }
}

impl Drop for Watch {
    #[inline]
    fn drop(&mut self) {
        if self.published {
            self.unpublish();
        }
        if self.bg_waiting {
            self.bg_done();
        }
    }
}
