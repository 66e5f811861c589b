//! The I/O worker of a file: a thread that runs the file's non-blocking
//! collective and split-collective accesses in the background.
//!
//! A collective access needs the other ranks (two-phase I/O exchanges data on
//! the file's private communicator), so it cannot finish inside
//! `MPI_File_iwrite_all` without forcing every rank to start it before any
//! rank may communicate again. Instead the start call queues the access here
//! and returns; the worker thread runs queued accesses one after another, in
//! the order this rank started them, which is the order every rank starts
//! them in (MPI requires collective calls on a file in the same order), so the
//! ranks' workers meet. The worker drives the progress engine like any thread
//! of an `MPI_THREAD_MULTIPLE` program (the engine is one mutex; blocking
//! waits sleep on the doorbell), so the main thread is free to send, receive
//! or compute meanwhile.
//!
//! The worker's waits are not published to the launcher's deadlock
//! detection (`diag::background_thread`): while it waits for other ranks, the
//! program's own thread may be computing before it sends what they wait for.
//!
//! The user's request is an engine task ([`Handoff`]) whose step looks at the
//! access's outcome: when the worker stores it, it takes one progress step,
//! which completes the request and wakes any thread waiting on it.
//!
//! Collective calls that run on the calling thread (blocking accesses,
//! `set_view`, `close`, ...) first [`Slot::quiesce`] the worker, so the file's
//! private communicator carries one collective at a time, in start order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::engine::{State, Task};
use crate::error::{ErrorClass, MpiError, Result};
use crate::request::{Request, Status};

type Job = Box<dyn FnOnce() + Send>;
type Outcome = Arc<Mutex<Option<Result<Status>>>>;

/// A file's worker: started at the first background access, stopped at close.
#[derive(Default)]
pub(crate) struct Slot {
    /// Accesses queued or running.
    pending: Arc<AtomicUsize>,
    chan: Mutex<Option<(mpsc::Sender<Job>, std::thread::JoinHandle<()>)>>,
}

/// The request of a background access: done when the worker's outcome is in.
#[derive(Debug)]
struct Handoff {
    out: Outcome,
    status: Status,
}

impl Task for Handoff {
    fn advance(&mut self, _st: &mut State) -> Result<bool> {
        match self.out.lock().unwrap_or_else(|p| p.into_inner()).take() {
            None => Ok(false),
            Some(Ok(s)) => {
                self.status = s;
                Ok(true)
            }
            Some(Err(e)) => Err(e),
        }
    }
    fn status(&self) -> Status {
        self.status
    }
}

impl Slot {
    /// Whether an access is queued or running.
    pub(crate) fn busy(&self) -> bool {
        self.pending.load(Ordering::Acquire) > 0
    }

    /// Queues `access` (run on the worker thread, after every access queued
    /// before it); returns the request that completes with its outcome.
    pub(crate) fn submit(
        &self,
        call: &str,
        access: impl FnOnce() -> Result<Status> + Send + 'static,
    ) -> Result<Request> {
        let engine = crate::runtime::engine()?;
        let out: Outcome = Arc::new(Mutex::new(None));
        let req = engine.with_state(|st| {
            st.start_task(Box::new(Handoff {
                out: out.clone(),
                status: Status::EMPTY,
            }))
        });
        let call_name = call.to_string();
        let job: Job = Box::new(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(access)).unwrap_or_else(
                |_| {
                    Err(MpiError::intern(
                        &call_name,
                        "the background access panicked",
                    ))
                },
            );
            *out.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            // One progress step completes the request and wakes its waiters.
            engine.with_progress(|_| ());
        });
        let mut chan = self.chan.lock().unwrap_or_else(|p| p.into_inner());
        if chan.is_none() {
            let (tx, rx) = mpsc::channel::<Job>();
            let pending = self.pending.clone();
            let h = std::thread::Builder::new()
                .name("oxmpi-io".into())
                .spawn(move || {
                    crate::diag::background_thread();
                    for job in rx {
                        let _working = crate::diag::BackgroundJob::start();
                        job();
                        pending.fetch_sub(1, Ordering::AcqRel);
                    }
                })
                .map_err(|e| {
                    MpiError::new(
                        ErrorClass::NoMem,
                        format!("{call}: cannot start the file's I/O thread: {e}"),
                    )
                })?;
            *chan = Some((tx, h));
        }
        self.pending.fetch_add(1, Ordering::AcqRel);
        let sent = chan.as_ref().map(|(tx, _)| tx.send(job));
        if !matches!(sent, Some(Ok(()))) {
            self.pending.fetch_sub(1, Ordering::AcqRel);
            return Err(MpiError::intern(call, "the file's I/O thread is gone"));
        }
        Ok(req)
    }

    /// Waits (driving progress, sleeping when idle) until no access is queued
    /// or running.
    pub(crate) fn quiesce(&self) {
        if !self.busy() {
            return;
        }
        if let Ok(e) = crate::runtime::engine() {
            e.wait_flag(|| !self.busy(), Duration::from_millis(2));
        }
    }

    /// Quiesces, then ends the thread (`MPI_File_close`).
    pub(crate) fn stop(&self) {
        self.quiesce();
        let taken = self.chan.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((tx, h)) = taken {
            drop(tx);
            let _ = h.join();
        }
    }
}
