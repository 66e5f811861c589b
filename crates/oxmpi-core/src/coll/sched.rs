//! Collective schedules: every collective algorithm is written as a list of
//! steps (sends, receives, local work, fences) over buffers, and the same
//! schedule serves the blocking call (run to completion) and the non-blocking one
//! (a request the progress engine advances), as in MPICH's `sched` design.
//!
//! Semantics: steps run in order. Sends and receives are started when reached and
//! complete in the background; a [`Step::Fence`] waits until everything started
//! before it has completed. Local steps run when reached, so an algorithm puts a
//! fence between a receive and the local step that reads its data.
//!
//! Every message of a schedule travels on the communicator's collective context
//! with the schedule's tag (the communicator's collective sequence number), so
//! concurrent non-blocking collectives on one communicator never mix.

use crate::buf::RawBuf;
use crate::comm::Comm;
use crate::engine::{SendMode, State};
use crate::error::{ErrorClass, MpiError, Result};
use crate::matching::{Envelope, Pattern};
use crate::request::Request;

/// Bits of a schedule's tag taken by the communicator's collective sequence
/// number; the bits above (up to the 30 a collective tag has) are sub-tags.
pub const SEQ_BITS: u32 = 24;
/// Sub-tags a schedule may use.
pub const MAX_SUBTAGS: u8 = 64;

/// Where a slice's bytes live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    /// Caller memory (the user's buffers), valid until the collective completes.
    Addr(usize),
    /// A temporary buffer owned by the schedule.
    Temp(u32),
}

/// A byte range of a buffer used by a schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    pub base: Base,
    pub offset: usize,
    pub len: usize,
}

impl Slice {
    /// A sub-range: `len` bytes starting `at` bytes into this slice.
    pub fn sub(self, at: usize, len: usize) -> Slice {
        assert!(at + len <= self.len, "sub-slice {at}+{len} outside a slice of {}", self.len);
        Slice { base: self.base, offset: self.offset + at, len }
    }

    /// A caller buffer (read-only use).
    pub fn user(ptr: *const u8, len: usize) -> Slice {
        Slice { base: Base::Addr(ptr as usize), offset: 0, len }
    }

    /// A caller buffer written by the schedule.
    pub fn user_mut(ptr: *mut u8, len: usize) -> Slice {
        Slice { base: Base::Addr(ptr as usize), offset: 0, len }
    }
}

/// Resolves slices to memory while a local step runs.
pub struct Memory<'a> {
    temps: &'a mut [Box<[u8]>],
}

impl Memory<'_> {
    /// The address of a slice's first byte.
    pub fn addr(&mut self, s: Slice) -> *mut u8 {
        match s.base {
            Base::Addr(a) => (a + s.offset) as *mut u8,
            Base::Temp(i) => {
                let t = &mut self.temps[i as usize];
                assert!(s.offset + s.len <= t.len(), "slice outside temporary buffer");
                // Non-null and in bounds: a pointer into a live boxed slice.
                t[s.offset..].as_mut_ptr()
            }
        }
    }
}

/// Local work of a step: copies, reductions, packing.
pub type LocalFn = Box<dyn FnOnce(&mut Memory<'_>) -> Result<()> + Send>;

pub enum Step {
    Send { buf: Slice, peer: i32, sub: u8 },
    Recv { buf: Slice, peer: i32, sub: u8 },
    Local(LocalFn),
    Fence,
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Send { buf, peer, sub } => write!(f, "Send({} bytes to {peer}, sub-tag {sub})", buf.len),
            Step::Recv { buf, peer, sub } => write!(f, "Recv({} bytes from {peer}, sub-tag {sub})", buf.len),
            Step::Local(_) => f.write_str("Local"),
            Step::Fence => f.write_str("Fence"),
        }
    }
}

/// Builds a schedule. Algorithms only see this.
pub struct Builder {
    comm: Comm,
    temps: Vec<usize>,
    steps: Vec<Step>,
}

impl Builder {
    pub fn new(comm: &Comm) -> Builder {
        Builder { comm: comm.clone(), temps: Vec::new(), steps: Vec::new() }
    }

    pub fn comm(&self) -> &Comm {
        &self.comm
    }

    /// A zeroed temporary buffer of `len` bytes, freed with the schedule.
    pub fn temp(&mut self, len: usize) -> Slice {
        self.temps.push(len);
        Slice { base: Base::Temp(self.temps.len() as u32 - 1), offset: 0, len }
    }

    pub fn send(&mut self, buf: Slice, peer: i32) {
        self.steps.push(Step::Send { buf, peer, sub: 0 });
    }

    pub fn recv(&mut self, buf: Slice, peer: i32) {
        self.steps.push(Step::Recv { buf, peer, sub: 0 });
    }

    /// A send on sub-tag `sub` (< [`MAX_SUBTAGS`]): messages between the same two
    /// ranks in one schedule match by sub-tag, then in order.
    pub fn send_tagged(&mut self, buf: Slice, peer: i32, sub: u8) {
        assert!(sub < MAX_SUBTAGS, "sub-tag {sub} out of range");
        self.steps.push(Step::Send { buf, peer, sub });
    }

    pub fn recv_tagged(&mut self, buf: Slice, peer: i32, sub: u8) {
        assert!(sub < MAX_SUBTAGS, "sub-tag {sub} out of range");
        self.steps.push(Step::Recv { buf, peer, sub });
    }

    /// Waits for every send and receive started so far.
    pub fn fence(&mut self) {
        if !matches!(self.steps.last(), Some(Step::Fence) | None) {
            self.steps.push(Step::Fence);
        }
    }

    /// Runs `f` when reached (after a fence if it reads received data).
    pub fn local(&mut self, f: impl FnOnce(&mut Memory<'_>) -> Result<()> + Send + 'static) {
        self.steps.push(Step::Local(Box::new(f)));
    }

    /// Copies `src` to `dst` (same length).
    pub fn copy(&mut self, src: Slice, dst: Slice) {
        assert_eq!(src.len, dst.len, "copy between slices of different lengths");
        if src == dst || src.len == 0 {
            return;
        }
        self.local(move |m| {
            let (s, d) = (m.addr(src), m.addr(dst));
            // SAFETY: both slices are valid for their length (caller memory by the
            // collective's contract, temporaries by construction); `copy` allows overlap.
            unsafe { std::ptr::copy(s, d, src.len) };
            Ok(())
        });
    }

    pub fn build(mut self) -> Schedule {
        self.fence();
        let temps = self.temps.iter().map(|&n| vec![0u8; n].into_boxed_slice()).collect();
        Schedule { comm: self.comm, temps, steps: self.steps.into_iter().map(Some).collect(), pc: 0, in_flight: Vec::new(), tag: 0 }
    }
}

/// A built schedule, ready to run.
pub struct Schedule {
    comm: Comm,
    temps: Vec<Box<[u8]>>,
    steps: Vec<Option<Step>>,
    pc: usize,
    in_flight: Vec<Request>,
    tag: i32,
}

impl std::fmt::Debug for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Schedule(step {} of {}, {} in flight, tag {})", self.pc, self.steps.len(), self.in_flight.len(), self.tag)
    }
}

impl Schedule {
    pub(crate) fn set_tag(&mut self, tag: i32) {
        self.tag = tag;
    }

    fn raw(&mut self, s: Slice) -> RawBuf {
        let mut m = Memory { temps: &mut self.temps };
        RawBuf { addr: m.addr(s) as usize, len: s.len }
    }

    /// Runs as far as possible; `Ok(true)` once every step has completed.
    pub(crate) fn advance(&mut self, st: &mut State) -> Result<bool> {
        loop {
            // Reap finished operations.
            let mut failed = None;
            self.in_flight.retain(|&r| match st.req(r) {
                Some(e) if e.done => {
                    if let Some(err) = &e.error {
                        failed.get_or_insert_with(|| err.clone());
                    }
                    st.remove_request(r);
                    false
                }
                Some(_) => true,
                None => false,
            });
            if let Some(err) = failed {
                return Err(err);
            }
            if self.pc == self.steps.len() {
                return Ok(self.in_flight.is_empty());
            }
            match self.steps[self.pc].take().expect("schedule step ran twice") {
                Step::Fence => {
                    if !self.in_flight.is_empty() {
                        self.steps[self.pc] = Some(Step::Fence);
                        return Ok(false);
                    }
                }
                Step::Send { buf, peer, sub } => {
                    let world = self.peer_world(peer, "send")?;
                    let tag = self.tag | ((sub as i32) << SEQ_BITS);
                    let env = Envelope { context: self.comm.coll_context(), source: self.comm.rank(), tag };
                    let raw = self.raw(buf);
                    let r = st.start_send(world, env, raw, SendMode::Standard)?;
                    self.in_flight.push(r);
                }
                Step::Recv { buf, peer, sub } => {
                    self.peer_world(peer, "receive")?;
                    let tag = self.tag | ((sub as i32) << SEQ_BITS);
                    let pat = Pattern { context: self.comm.coll_context(), source: peer, tag };
                    let raw = self.raw(buf);
                    let r = st.post_recv(raw, pat);
                    self.in_flight.push(r);
                }
                Step::Local(f) => {
                    let mut m = Memory { temps: &mut self.temps };
                    f(&mut m)?;
                }
            }
            self.pc += 1;
        }
    }

    fn peer_world(&self, peer: i32, what: &str) -> Result<u32> {
        self.comm.peer_group().get(peer as usize).copied().filter(|_| peer >= 0).ok_or_else(|| {
            MpiError::new(ErrorClass::Intern, format!("collective schedule: {what} with rank {peer} outside the communicator"))
        })
    }
}
