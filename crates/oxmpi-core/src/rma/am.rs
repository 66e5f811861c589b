//! One-sided operations between hosts: active messages on the window's second
//! private communicator, applied by the target's progress engine.
//!
//! The origin sends a request (tag [`TAG_REQ`]) and waits for the answer (tag
//! [`TAG_REPLY`]); while it waits its own progress serves requests of others, so
//! two origins targeting each other never deadlock. The target serves requests
//! after every progress step of any MPI call ([`serve_all`], called by the
//! runtime when a window with remote peers exists): it applies them to its own
//! window memory exactly as a local origin would (the same accumulate mutex and
//! lock word in its host segment, so remote and local accesses are atomic with
//! respect to each other), and answers. A lock request that cannot be granted now
//! waits in a queue, retried at every later progress step.
//!
//! A target that does not enter MPI for a while (computing, or blocked outside MPI)
//! is served by a progress thread ([`ensure_progress_thread`], started with the
//! first window that has remote peers, stopped by `MPI_Finalize`): it sleeps, and
//! when the process made no progress step of its own since its last look, it makes
//! one and serves the requests; while the program is in MPI calls it only looks.
//! One server at a time: the thread and the program's own calls never serve
//! concurrently (a global flag, which also stops re-entry).
//!
//! Requests are untrusted input: decoded with bounds checks, runs checked
//! against the window (or the attached regions), answered with an error class
//! and message instead of applied when anything is off.
//!
//! Wire format (little-endian u64 words): `kind, op, prim, nruns, (off, len)*nruns`
//! then data bytes. Answers: `status` (0 or an MPI error class), then data or,
//! on error, a UTF-8 message.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use super::{lock_kind_spin, LockKind, Window, CTL_LOCK, WRITER};
use crate::comm::Comm;
use crate::datatype::{Datatype, Primitive};
use crate::error::{ErrorClass, MpiError, Result};
use crate::matching::ANY_SOURCE;
use crate::op::{Op, PredefinedOp};
use crate::transport::winmem::full_fence;
use crate::{pt2pt, SendMode};

const TAG_REQ: i32 = 1;
const TAG_REPLY: i32 = 2;

const K_PUT: u64 = 1;
const K_GET: u64 = 2;
const K_ACC: u64 = 3;
const K_GETACC: u64 = 4;
const K_CAS: u64 = 5;
const K_LOCK: u64 = 6;
const K_UNLOCK: u64 = 7;

/// Whether any window with remote peers exists (a cheap test for the runtime).
pub(crate) static AM_ACTIVE: AtomicBool = AtomicBool::new(false);

static WINDOWS: Mutex<Vec<Weak<Window>>> = Mutex::new(Vec::new());

/// Someone (a thread of this process) is serving requests now.
static SERVING: AtomicBool = AtomicBool::new(false);
/// Serving rounds so far (the progress thread's sign that the program serves itself).
static ROUNDS: AtomicU64 = AtomicU64::new(0);
static THREAD: Mutex<Option<std::thread::JoinHandle<()>>> = Mutex::new(None);
static STOP: AtomicBool = AtomicBool::new(false);

/// Starts the progress thread once (see the module doc).
fn ensure_progress_thread() {
    let mut t = THREAD.lock().unwrap_or_else(|p| p.into_inner());
    if t.is_some() || STOP.load(Ordering::Acquire) {
        return;
    }
    let h = std::thread::Builder::new()
        .name("oxmpi-rma-progress".into())
        .spawn(progress_thread);
    match h {
        Ok(h) => *t = Some(h),
        Err(e) => eprintln!("oxmpi: no one-sided progress thread ({e}); targets on other hosts are served in MPI calls only"),
    }
}

fn progress_thread() {
    const MIN: Duration = Duration::from_micros(50);
    const MAX: Duration = Duration::from_millis(2);
    let mut pause = MIN;
    let mut seen = ROUNDS.load(Ordering::Acquire);
    while !STOP.load(Ordering::Acquire) {
        std::thread::sleep(pause);
        if !AM_ACTIVE.load(Ordering::Acquire) {
            pause = MAX;
            continue;
        }
        let now = ROUNDS.load(Ordering::Acquire);
        if now != seen {
            // The program is in MPI and serves by itself.
            seen = now;
            pause = MIN;
            continue;
        }
        let Ok(e) = crate::runtime::engine() else {
            return;
        };
        // One progress step (it serves after it, through the runtime).
        let moved = e.progress_step();
        let served = serve_round();
        seen = ROUNDS.load(Ordering::Acquire);
        pause = if moved || served {
            MIN
        } else {
            (pause * 2).min(MAX)
        };
    }
}

/// Stops the progress thread (MPI_Finalize; windows are freed by then).
pub(crate) fn stop_progress_thread() {
    STOP.store(true, Ordering::Release);
    let h = THREAD.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(h) = h {
        let _ = h.join();
    }
}

pub(super) struct Am {
    comm: Comm,
    /// Lock requests not granted yet: (origin, kind).
    pending: Mutex<VecDeque<(i32, LockKind)>>,
}

impl Am {
    pub(super) fn new(wcomm: &Comm) -> Result<Am> {
        Ok(Am {
            comm: super::private_dup(wcomm)?,
            pending: Mutex::new(VecDeque::new()),
        })
    }
}

pub(super) fn register(w: &Arc<Window>) {
    let mut ws = WINDOWS.lock().unwrap_or_else(|p| p.into_inner());
    ws.push(Arc::downgrade(w));
    AM_ACTIVE.store(true, Ordering::Release);
    drop(ws);
    ensure_progress_thread();
}

pub(super) fn unregister(w: &Window) {
    let mut ws = WINDOWS.lock().unwrap_or_else(|p| p.into_inner());
    ws.retain(|x| {
        x.upgrade()
            .is_some_and(|a| !std::ptr::eq(Arc::as_ptr(&a), w))
    });
    AM_ACTIVE.store(!ws.is_empty(), Ordering::Release);
}

/// Serves the pending requests of every window with remote peers. Called by the
/// runtime after progress steps, never while the engine lock is held; re-entry
/// (from the sends and receives serving does) and a second thread are skipped.
pub(crate) fn serve_all() {
    serve_round();
}

/// One serving round; whether any request was served.
fn serve_round() -> bool {
    if SERVING.swap(true, Ordering::Acquire) {
        return false;
    }
    ROUNDS.fetch_add(1, Ordering::Release);
    let ws: Vec<Arc<Window>> = match WINDOWS.try_lock() {
        Ok(g) => g.iter().filter_map(Weak::upgrade).collect(),
        Err(_) => Vec::new(),
    };
    let mut any = false;
    for w in ws {
        match w.serve() {
            Ok(n) => any |= n > 0,
            Err(e) => eprintln!("oxmpi: serving one-sided requests: {e}"),
        }
    }
    SERVING.store(false, Ordering::Release);
    any
}

fn words(v: &mut Vec<u8>, ws: &[u64]) {
    for w in ws {
        v.extend_from_slice(&w.to_le_bytes());
    }
}

struct Req<'a> {
    kind: u64,
    op: u64,
    prim: u64,
    runs: Vec<(usize, usize)>,
    data: &'a [u8],
}

fn decode(b: &[u8]) -> Option<Req<'_>> {
    let w = |i: usize| {
        b.get(i * 8..i * 8 + 8)
            .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")))
    };
    let (kind, op, prim, n) = (w(0)?, w(1)?, w(2)?, w(3)? as usize);
    if n > b.len() / 16 {
        return None;
    }
    let mut runs = Vec::with_capacity(n);
    for i in 0..n {
        runs.push((w(4 + 2 * i)? as usize, w(5 + 2 * i)? as usize));
    }
    let data = b.get((4 + 2 * n) * 8..)?;
    Some(Req {
        kind,
        op,
        prim,
        runs,
        data,
    })
}

fn ok_reply(data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + data.len());
    words(&mut v, &[0]);
    v.extend_from_slice(data);
    v
}

fn err_reply(e: &MpiError) -> Vec<u8> {
    let mut v = Vec::new();
    words(&mut v, &[e.class.code() as u64]);
    let m: String = e.message.chars().take(240).collect();
    v.extend_from_slice(m.as_bytes());
    v
}

impl Window {
    fn am(&self) -> &Am {
        self.am
            .as_ref()
            .expect("remote peers imply active messages")
    }

    /// Sends a request to `r` and waits for its answer: the answer's data
    /// (`reply_len` bytes expected) or the target's error.
    fn am_call(
        &self,
        call: &str,
        r: usize,
        head: [u64; 3],
        runs: &[(usize, usize)],
        data: &[u8],
        reply_len: usize,
    ) -> Result<Vec<u8>> {
        let am = self.am();
        let mut msg = Vec::with_capacity(32 + runs.len() * 16 + data.len());
        words(&mut msg, &[head[0], head[1], head[2], runs.len() as u64]);
        for &(o, l) in runs {
            words(&mut msg, &[o as u64, l as u64]);
        }
        msg.extend_from_slice(data);
        pt2pt::send(&am.comm, &msg, r as i32, TAG_REQ, SendMode::Standard)?;
        let mut buf = vec![0u8; 8 + reply_len.max(256)];
        let st = pt2pt::recv(&am.comm, &mut buf, r as i32, TAG_REPLY)?;
        let got = &buf[..st.count_bytes.min(buf.len())];
        let status = got.get(..8).map_or(ErrorClass::Intern.code() as u64, |s| {
            u64::from_le_bytes(s.try_into().expect("8 bytes"))
        });
        if status != 0 {
            let class = ErrorClass::from_code(status as i32).unwrap_or(ErrorClass::Other);
            let why = String::from_utf8_lossy(&got[8.min(got.len())..]).into_owned();
            return Err(MpiError::new(
                class,
                format!("{call}: target rank {r} (another host) refused: {why}"),
            ));
        }
        if got.len() != 8 + reply_len {
            return Err(MpiError::intern(
                call,
                format!(
                    "target rank {r} answered {} bytes, {} expected",
                    got.len() - 8,
                    reply_len
                ),
            ));
        }
        Ok(got[8..].to_vec())
    }

    pub(super) fn am_put(
        &self,
        call: &str,
        r: usize,
        runs: &[(usize, usize)],
        data: &[u8],
    ) -> Result<()> {
        self.am_call(call, r, [K_PUT, 0, 0], runs, data, 0)
            .map(|_| ())
    }

    pub(super) fn am_get(
        &self,
        call: &str,
        r: usize,
        runs: &[(usize, usize)],
        len: usize,
    ) -> Result<Vec<u8>> {
        self.am_call(call, r, [K_GET, 0, 0], runs, &[], len)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn am_acc(
        &self,
        call: &str,
        r: usize,
        runs: &[(usize, usize)],
        op: &Op,
        bt: &Datatype,
        src: &[u8],
        fetch: bool,
        len: usize,
    ) -> Result<Vec<u8>> {
        let oph = u64::from(op.as_predefined().expect("checked: predefined").code());
        let prim = u64::from(bt.as_primitive().expect("a basic type").code());
        let kind = if fetch { K_GETACC } else { K_ACC };
        self.am_call(
            call,
            r,
            [kind, oph, prim],
            runs,
            src,
            if fetch { len } else { 0 },
        )
    }

    pub(super) fn am_cas(
        &self,
        call: &str,
        r: usize,
        runs: &[(usize, usize)],
        new: &[u8],
        cmp: &[u8],
    ) -> Result<Vec<u8>> {
        let mut d = new.to_vec();
        d.extend_from_slice(cmp);
        self.am_call(call, r, [K_CAS, 0, 0], runs, &d, new.len())
    }

    pub(super) fn am_lock(&self, call: &str, r: usize, kind: LockKind) -> Result<()> {
        self.am_call(
            call,
            r,
            [K_LOCK, (kind == LockKind::Exclusive) as u64, 0],
            &[],
            &[],
            0,
        )
        .map(|_| ())
    }

    pub(super) fn am_unlock(&self, call: &str, r: usize, kind: LockKind) -> Result<()> {
        self.am_call(
            call,
            r,
            [K_UNLOCK, (kind == LockKind::Exclusive) as u64, 0],
            &[],
            &[],
            0,
        )
        .map(|_| ())
    }

    /// Applies every request waiting for this process, answers them, and grants
    /// queued locks that became free.
    fn serve(&self) -> Result<usize> {
        let am = self.am();
        let mut n = 0;
        while let Some(st) = pt2pt::iprobe(&am.comm, ANY_SOURCE, TAG_REQ)? {
            n += 1;
            let mut buf = vec![0u8; st.count_bytes];
            pt2pt::recv(&am.comm, &mut buf, st.source, TAG_REQ)?;
            let reply = match decode(&buf) {
                Some(req) => self.apply(st.source, req),
                None => Some(err_reply(&MpiError::new(
                    ErrorClass::Intern,
                    "malformed one-sided request",
                ))),
            };
            if let Some(rep) = reply {
                pt2pt::send(&am.comm, &rep, st.source, TAG_REPLY, SendMode::Standard)?;
            }
        }
        let word = self.ctl(self.my_local, CTL_LOCK);
        loop {
            let next = am
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .front()
                .copied();
            let Some((origin, kind)) = next else { break };
            if !lock_kind_spin(word, kind) {
                break;
            }
            am.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .pop_front();
            pt2pt::send(
                &am.comm,
                &ok_reply(&[]),
                origin,
                TAG_REPLY,
                SendMode::Standard,
            )?;
            n += 1;
        }
        Ok(n)
    }

    /// Checks a request's runs against this process's window memory.
    fn check_runs(&self, runs: &[(usize, usize)]) -> Result<()> {
        let regions = if self.flavor == super::Flavor::Dynamic {
            self.regions_of("MPI_Win (target side)", self.my_local)?
        } else {
            Vec::new()
        };
        for &(o, l) in runs {
            let end = o
                .checked_add(l)
                .ok_or_else(|| MpiError::new(ErrorClass::RmaRange, "range overflows"))?;
            let ok = if self.flavor == super::Flavor::Dynamic {
                super::target::covered(&regions, o as i128, end as i128)
            } else {
                end <= self.size
            };
            if !ok {
                return Err(MpiError::new(
                    ErrorClass::RmaRange,
                    format!("bytes [{o:#x}, {end:#x}) are not in its window memory"),
                ));
            }
        }
        Ok(())
    }

    /// One request: its answer, or `None` for a lock that waits in the queue.
    fn apply(&self, origin: i32, req: Req<'_>) -> Option<Vec<u8>> {
        match self.apply_inner(origin, req) {
            Ok(r) => r,
            Err(e) => Some(err_reply(&e)),
        }
    }

    fn apply_inner(&self, origin: i32, req: Req<'_>) -> Result<Option<Vec<u8>>> {
        const C: &str = "one-sided request";
        let me = self.comm.rank() as usize;
        let Some(reach) = &self.peers[me].reach else {
            return Err(MpiError::intern(C, "own window memory unreachable"));
        };
        let total: usize = req.runs.iter().map(|r| r.1).sum();
        match req.kind {
            K_LOCK | K_UNLOCK => {
                let kind = if req.op == 1 {
                    LockKind::Exclusive
                } else {
                    LockKind::Shared
                };
                let word = self.ctl(self.my_local, CTL_LOCK);
                if req.kind == K_UNLOCK {
                    full_fence();
                    match kind {
                        LockKind::Shared => word.fetch_sub(1, Ordering::Release),
                        LockKind::Exclusive => word.fetch_and(!WRITER, Ordering::Release),
                    };
                    return Ok(Some(ok_reply(&[])));
                }
                let mut q = self.am().pending.lock().unwrap_or_else(|p| p.into_inner());
                if q.is_empty() && lock_kind_spin(word, kind) {
                    return Ok(Some(ok_reply(&[])));
                }
                q.push_back((origin, kind));
                return Ok(None);
            }
            K_PUT | K_GET | K_ACC | K_GETACC | K_CAS => {}
            k => return Err(MpiError::intern(C, format!("unknown request kind {k}"))),
        }
        self.check_runs(&req.runs)?;
        match req.kind {
            K_PUT => {
                if req.data.len() != total {
                    return Err(MpiError::intern(C, "put data and runs differ in length"));
                }
                Self::write_runs(C, &reach, &req.runs, req.data)?;
                Ok(Some(ok_reply(&[])))
            }
            K_GET => {
                let mut out = vec![0u8; total];
                Self::read_runs(C, &reach, &req.runs, &mut out)?;
                Ok(Some(ok_reply(&out)))
            }
            K_CAS => {
                if req.data.len() != 2 * total {
                    return Err(MpiError::intern(
                        C,
                        "compare-and-swap data has the wrong length",
                    ));
                }
                let (new, cmp) = req.data.split_at(total);
                let cur = self.cas_apply(C, self.my_local, &reach, &req.runs, new, cmp)?;
                Ok(Some(ok_reply(&cur)))
            }
            _ => {
                let op = u8::try_from(req.op)
                    .ok()
                    .and_then(PredefinedOp::from_code)
                    .ok_or_else(|| MpiError::new(ErrorClass::Op, "unknown operation"))?;
                let prim = u16::try_from(req.prim)
                    .ok()
                    .and_then(Primitive::from_code)
                    .ok_or_else(|| MpiError::new(ErrorClass::Type, "unknown datatype"))?;
                let bt = Datatype::predefined(prim);
                let noop = op == PredefinedOp::NoOp;
                if (!noop && req.data.len() != total)
                    || bt.size() == 0
                    || !total.is_multiple_of(bt.size())
                {
                    return Err(MpiError::intern(C, "accumulate data and runs differ"));
                }
                let op = Op::predefined(op);
                let old = self.acc_apply(
                    C,
                    self.my_local,
                    &reach,
                    &req.runs,
                    &op,
                    &bt,
                    if noop { &[] } else { req.data },
                    req.kind == K_GETACC,
                )?;
                Ok(Some(ok_reply(&old)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_and_garbage_is_refused() {
        let mut m = Vec::new();
        words(&mut m, &[K_PUT, 0, 0, 2, 8, 4, 16, 4]);
        m.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        let r = decode(&m).unwrap();
        assert_eq!(
            (r.kind, r.runs.clone(), r.data.len()),
            (K_PUT, vec![(8, 4), (16, 4)], 8)
        );
        assert!(decode(&m[..20]).is_none());
        let mut bad = Vec::new();
        words(&mut bad, &[K_PUT, 0, 0, u64::MAX]);
        assert!(decode(&bad).is_none());
    }
}
