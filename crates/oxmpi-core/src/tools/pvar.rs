//! Performance variables' values: where each comes from, and the handles
//! that turn a raw counter into the MPI_T view (started, stopped, reset).

use std::sync::atomic::Ordering;

use super::counters::{Stats, BLOCKED_NS, BLOCKED_WAITS};
use super::registry::{registry, Bind, PvarClass, PvarInfo, Source, VarType};
use super::{engine, ToolError, ToolResult};
use crate::comm::Comm;

/// The current raw value of pvar `info` (bound to `comm` where its bind says so).
fn raw(info: &PvarInfo, comm: Option<&Comm>) -> u64 {
    let stats = |f: &dyn Fn(&Stats) -> u64| engine().map_or(0, |e| e.with_state(|st| f(&st.stats)));
    match info.source {
        Source::MsgsSent(v) => stats(&|s| s.msgs_sent[v as usize]),
        Source::BytesSent(v) => stats(&|s| s.bytes_sent[v as usize]),
        Source::MsgsRecvd(v) => stats(&|s| s.msgs_recvd[v as usize]),
        Source::BytesRecvd(v) => stats(&|s| s.bytes_recvd[v as usize]),
        Source::Rendezvous => stats(&|s| s.rendezvous),
        Source::Unexpected => stats(&|s| s.unexpected),
        Source::UnexpectedHwm => stats(&|s| s.unexpected_hwm),
        Source::PostedHwm => stats(&|s| s.posted_hwm),
        Source::UnexpectedLen => {
            engine().map_or(0, |e| e.with_state(|st| st.matcher.unexpected_len() as u64))
        }
        Source::PostedLen => engine().map_or(0, |e| {
            e.with_state(|st| (st.matcher.posted_len() + st.slot_waiting()) as u64)
        }),
        Source::BlockedTime => BLOCKED_NS.load(Ordering::Relaxed),
        Source::BlockedWaits => BLOCKED_WAITS.load(Ordering::Relaxed),
        Source::CollBlocking => comm.map_or(0, |c| c.0.diag_seq.load(Ordering::Relaxed) as u64),
        Source::CollNonblocking => comm.map_or(0, |c| c.0.coll_seq.load(Ordering::Relaxed) as u64),
        Source::CollAlgorithm(op, algorithm) => crate::coll::select::calls(op, algorithm),
    }
}

/// A performance variable's value as MPI_T returns it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PvarValue {
    U64(u64),
    /// Timers: seconds.
    Double(f64),
}

impl PvarValue {
    /// The value as an integer (timers: whole nanoseconds).
    pub fn as_u64(self) -> u64 {
        match self {
            PvarValue::U64(n) => n,
            PvarValue::Double(s) => (s * 1e9) as u64,
        }
    }
    /// The value as a float (timers: seconds).
    pub fn as_f64(self) -> f64 {
        match self {
            PvarValue::U64(n) => n as f64,
            PvarValue::Double(s) => s,
        }
    }
}

/// One handle of a performance variable (one per session and bound object).
#[derive(Debug)]
pub struct PvarHandle {
    index: usize,
    comm: Option<Comm>,
    running: bool,
    /// What the handle counted while it was started before.
    acc: u64,
    /// The raw value when the handle last started (or was reset while started).
    base: u64,
}

impl PvarHandle {
    /// A handle of pvar `index`; `comm` is required for (and only for) pvars
    /// bound to communicators. Continuous pvars start at once.
    pub fn new(index: usize, comm: Option<Comm>) -> ToolResult<PvarHandle> {
        let info = registry().pvar(index)?;
        match (info.bind, &comm) {
            (Bind::Comm, None) => {
                return Err(ToolError::Invalid(format!(
                    "{} is bound to a communicator: give one",
                    info.name
                )))
            }
            (Bind::NoObject, Some(_)) => {
                return Err(ToolError::Invalid(format!(
                    "{} is bound to no object",
                    info.name
                )))
            }
            _ => {}
        }
        let mut h = PvarHandle {
            index,
            comm,
            running: false,
            acc: 0,
            base: 0,
        };
        if info.continuous {
            h.running = true;
            h.base = raw(info, h.comm.as_ref());
        }
        Ok(h)
    }

    pub fn index(&self) -> usize {
        self.index
    }

    pub fn info(&self) -> &'static PvarInfo {
        &registry().pvars[self.index]
    }

    /// Elements of the value (always 1 for oxmpi's pvars).
    pub fn count(&self) -> usize {
        1
    }

    pub fn is_started(&self) -> bool {
        self.running
    }

    pub fn start(&mut self) -> ToolResult<()> {
        let info = self.info();
        if info.continuous {
            return Err(ToolError::PvarNoStartstop);
        }
        if !self.running {
            self.base = raw(info, self.comm.as_ref());
            self.running = true;
        }
        Ok(())
    }

    pub fn stop(&mut self) -> ToolResult<()> {
        let info = self.info();
        if info.continuous {
            return Err(ToolError::PvarNoStartstop);
        }
        if self.running {
            self.acc = self
                .acc
                .wrapping_add(raw(info, self.comm.as_ref()).wrapping_sub(self.base));
            self.running = false;
        }
        Ok(())
    }

    fn current(&self, now: u64) -> u64 {
        match self.info().class {
            // Levels and watermarks are the state of the library, not a count.
            PvarClass::Level
            | PvarClass::HighWatermark
            | PvarClass::LowWatermark
            | PvarClass::State
            | PvarClass::Size => now,
            _ if self.running => self.acc.wrapping_add(now.wrapping_sub(self.base)),
            _ => self.acc,
        }
    }

    fn typed(&self, v: u64) -> PvarValue {
        match self.info().datatype {
            VarType::Double => PvarValue::Double(v as f64 / 1e9),
            _ => PvarValue::U64(v),
        }
    }

    pub fn read(&self) -> PvarValue {
        let now = raw(self.info(), self.comm.as_ref());
        self.typed(self.current(now))
    }

    /// Sets the handle's value (counters and timers; timers in seconds).
    pub fn write(&mut self, v: PvarValue) -> ToolResult<()> {
        let info = self.info();
        if info.readonly {
            return Err(ToolError::PvarNoWrite);
        }
        let v = match v {
            PvarValue::U64(n) => n,
            PvarValue::Double(s) if s.is_finite() && s >= 0.0 => (s * 1e9) as u64,
            PvarValue::Double(s) => {
                return Err(ToolError::Invalid(format!(
                    "{}: {s} is not a time in seconds",
                    info.name
                )))
            }
        };
        self.acc = v;
        self.base = raw(info, self.comm.as_ref());
        Ok(())
    }

    pub fn reset(&mut self) -> ToolResult<()> {
        self.write(PvarValue::U64(0))
    }

    /// Reads, then resets, from one look at the counter.
    pub fn read_reset(&mut self) -> ToolResult<PvarValue> {
        let info = self.info();
        if info.readonly {
            return Err(ToolError::PvarNoWrite);
        }
        if !info.atomic {
            return Err(ToolError::PvarNoAtomic);
        }
        let now = raw(info, self.comm.as_ref());
        let v = self.typed(self.current(now));
        self.acc = 0;
        self.base = now;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopped_handles_do_not_count() {
        let i = registry()
            .pvars
            .iter()
            .position(|p| p.name == "oxmpi_time_blocked")
            .unwrap();
        let mut h = PvarHandle::new(i, None).unwrap();
        assert_eq!(h.read(), PvarValue::Double(0.0));
        BLOCKED_NS.fetch_add(5_000_000_000, Ordering::Relaxed);
        assert_eq!(h.read(), PvarValue::Double(0.0));
        h.start().unwrap();
        BLOCKED_NS.fetch_add(2_000_000_000, Ordering::Relaxed);
        assert_eq!(h.read(), PvarValue::Double(2.0));
        h.stop().unwrap();
        BLOCKED_NS.fetch_add(1_000_000_000, Ordering::Relaxed);
        assert_eq!(h.read_reset().unwrap(), PvarValue::Double(2.0));
        assert_eq!(h.read(), PvarValue::Double(0.0));
        let q = registry()
            .pvars
            .iter()
            .position(|p| p.name == "oxmpi_unexpected_queue_length")
            .unwrap();
        let mut qh = PvarHandle::new(q, None).unwrap();
        assert_eq!(qh.start(), Err(ToolError::PvarNoStartstop));
        assert_eq!(qh.reset(), Err(ToolError::PvarNoWrite));
    }
}
