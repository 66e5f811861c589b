//! The timeline of `mpiexec --trace`.
//!
//! With `OXMPI_TRACE_DIR` set (by `mpiexec --trace FILE`), every C call is a
//! complete event (`ph: X`, enter and duration) and every message a flow from
//! the send (`ph: s`) to the completion of the receive that matched it
//! (`ph: f`), in the Chrome trace event format; each rank writes its events to
//! `DIR/rank-R.json` at MPI_Finalize and mpiexec merges them. A flow's id is
//! (sender, receiver, context, tag, k) for the k-th such message: messages
//! between two ranks with one context and tag are not overtaking, so the k-th
//! send is the k-th receive. Off, it costs one predictable branch per call.

use super::*;
use std::sync::atomic::AtomicBool;

static TRACING: AtomicBool = AtomicBool::new(false);

struct Trace {
    dir: std::path::PathBuf,
    filter: Option<String>,
    rank: u32,
    events: Vec<String>,
    sends: std::collections::HashMap<(u32, u32, u32, i32), u64>,
    recvs: std::collections::HashMap<(u32, u32, u32, i32), u64>,
}

static TRACE: Mutex<Option<Trace>> = Mutex::new(None);

/// Whether calls and messages are being traced (one relaxed load).
#[inline]
pub fn tracing() -> bool {
    TRACING.load(Ordering::Relaxed)
}

pub(crate) fn init_trace(rank: u32) {
    let Some(dir) = std::env::var_os("OXMPI_TRACE_DIR") else {
        return;
    };
    let filter = std::env::var("OXMPI_TRACE_FILTER")
        .ok()
        .filter(|f| !f.is_empty());
    *TRACE.lock().unwrap_or_else(|p| p.into_inner()) = Some(Trace {
        dir: dir.into(),
        filter,
        rank,
        events: Vec::new(),
        sends: Default::default(),
        recvs: Default::default(),
    });
    TRACING.store(true, Ordering::Relaxed);
}

/// Microseconds on the monotonic clock every local rank shares.
pub fn trace_now() -> f64 {
    crate::runtime::wtime() * 1e6
}

fn with_trace(f: impl FnOnce(&mut Trace)) {
    if let Some(t) = TRACE.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        f(t);
    }
}

/// Whether `call` passes `--trace-filter` (a substring of the call name).
pub fn trace_wants(call: &str) -> bool {
    let mut yes = true;
    with_trace(|t| yes = t.filter.as_deref().is_none_or(|f| call.contains(f)));
    yes
}

/// One call, from `t0` to `t1` (µs).
pub fn trace_call(name: &str, t0: f64, t1: f64) {
    with_trace(|t| {
        let ev = format!(
            r#"{{"name":"{name}","cat":"mpi","ph":"X","ts":{t0:.3},"dur":{:.3},"pid":{},"tid":0}}"#,
            (t1 - t0).max(0.0),
            t.rank
        );
        t.events.push(ev);
    });
}

fn flow_id(from: u32, to: u32, ctx: u32, tag: i32, k: u64) -> String {
    format!("{from}-{to}-{ctx}-{tag}-{k}")
}

pub(crate) fn trace_send(me: u32, to: u32, ctx: u32, tag: i32) {
    trace_send_at(trace_now(), me, to, ctx, tag);
}

/// A message's start stamped at `ts` (µs), taken before the message became
/// visible to the receiver.
pub(crate) fn trace_send_at(ts: f64, me: u32, to: u32, ctx: u32, tag: i32) {
    with_trace(|t| {
        let k = t.sends.entry((me, to, ctx, tag)).or_insert(0);
        *k += 1;
        let id = flow_id(me, to, ctx, tag, *k);
        t.events.push(format!(r#"{{"name":"message","cat":"msg","ph":"s","id":"{id}","ts":{ts:.3},"pid":{me},"tid":0,"args":{{"to":{to},"tag":{tag}}}}}"#));
    });
}

pub(crate) fn trace_recv(me: u32, ctx: u32, source: i32, tag: i32) {
    let ts = trace_now();
    let Some(from) = comm_info(ctx)
        .1
        .and_then(|m| usize::try_from(source).ok().and_then(|s| m.get(s).copied()))
    else {
        return;
    };
    if from == me {
        return;
    }
    with_trace(|t| {
        let k = t.recvs.entry((from, me, ctx, tag)).or_insert(0);
        *k += 1;
        let id = flow_id(from, me, ctx, tag, *k);
        t.events.push(format!(r#"{{"name":"message","cat":"msg","ph":"f","bp":"e","id":"{id}","ts":{ts:.3},"pid":{me},"tid":0}}"#));
    });
}

/// MPI_Finalize: writes this rank's events for mpiexec to merge.
pub(crate) fn finish_trace() {
    if !tracing() {
        return;
    }
    with_trace(|t| {
        let mut out = format!(
            r#"{{"name":"process_name","ph":"M","pid":{},"args":{{"name":"rank {}"}}}}"#,
            t.rank, t.rank
        );
        for e in &t.events {
            out.push_str(",\n");
            out.push_str(e);
        }
        let path = t.dir.join(format!("rank-{}.json", t.rank));
        if let Err(e) = std::fs::write(&path, out) {
            eprintln!(
                "oxmpi: rank {}: cannot write the trace to {}: {e}",
                t.rank,
                path.display()
            );
        }
        t.events.clear();
    });
}
