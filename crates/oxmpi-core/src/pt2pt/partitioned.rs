//! Partitioned point-to-point communication (MPI-4 chapter 4):
//! MPI_Psend_init / MPI_Precv_init make persistent requests whose buffer is
//! divided into partitions; after MPI_Start the sender marks partitions ready
//! (MPI_Pready, `_range`, `_list`, in any order and from any thread) and the
//! receiver may ask whether a partition arrived (MPI_Parrived).
//!
//! Matching happens once, at initialization, in the order of the
//! initialization calls (MPI-4.0 section 4.2): MPI_Psend_init sends a 4-byte
//! *init message* carrying a per-process id of the send, and MPI_Precv_init
//! posts the receive for it; messages of one pair do not overtake each other,
//! so the k-th init of a (communicator, peer, tag) meets the k-th on the other
//! side, whatever order the requests are later started in. Each round's data
//! then travels as one message, once every partition is ready, with the
//! send's id as tag, so it reaches exactly its matched receive. Both kinds of
//! message travel on contexts of their own, derived from the communicator's
//! (`context | PART_INIT`, with the user's tag, and `context | PART_DATA`,
//! with the send's id; communicator ids stay far below these bits), so no
//! point-to-point receive or probe ever sees them; sender and receiver may divide
//! the buffer differently (equal total size). Both sides are tasks of the
//! progress engine: the send waits for the last partition, the receive for
//! the init message, before posting the data transfer. A partition has
//! arrived when the whole message has (MPI allows reporting it no earlier).

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::buf::{BufScope, RawBuf, RecvBuf, Region, Rerun, RunMem, Runs, RunsMut, SendBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::engine::{SendMode, State, Task, Unpack};
use crate::error::{ErrorClass, MpiError, Result};
use crate::matching::{Envelope, Pattern};
use crate::request::{Request, Status, PROC_NULL};
use crate::runtime::{engine, TAG_UB};

/// Set in the context id of partitioned init messages (ids of communicators stay far below).
const PART_INIT: u32 = 1 << 31;
/// Set in the context id of partitioned data.
const PART_DATA: u32 = 1 << 31 | 1 << 30;

/// Ids of this process's partitioned sends (the tags of their data).
static NEXT_SEND_ID: AtomicU32 = AtomicU32::new(0);

fn check_common(
    call: &str,
    comm: &Comm,
    partitions: usize,
    count: usize,
    dt: &Datatype,
    tag: i32,
) -> Result<usize> {
    if !dt.is_committed() {
        return Err(MpiError::arg(
            ErrorClass::Type,
            call,
            "datatype",
            "datatype is not committed",
        ));
    }
    if partitions == 0 {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            "partitions",
            "must be at least 1",
        ));
    }
    if !(0..=TAG_UB).contains(&tag) {
        return Err(MpiError::arg(ErrorClass::Tag, call, "tag", format!("{tag} is outside 0..=MPI_TAG_UB ({TAG_UB}); partitioned operations take no MPI_ANY_TAG")));
    }
    let _ = comm;
    partitions
        .checked_mul(count)
        .and_then(|n| n.checked_mul(dt.size()))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| MpiError::arg(ErrorClass::Count, call, "count", format!("{partitions} partitions of {count} elements of {} bytes overflow the address space", dt.size())))
}

/// Checks that a descriptor of `have` elements holds `partitions * count` of them (an
/// overflowing product is `check_common`'s MPI_ERR_COUNT).
fn check_covers(call: &str, have: usize, partitions: usize, count: usize) -> Result<()> {
    match partitions.checked_mul(count) {
        Some(n) if n <= have => Ok(()),
        None => Ok(()),
        Some(_) => Err(MpiError::arg(
            ErrorClass::Buffer,
            call,
            "buf",
            format!("{partitions} partitions of {count} elements do not fit in a buffer of {have} elements"),
        )),
    }
}

fn peer_of(call: &str, arg: &str, comm: &Comm, rank: i32) -> Result<Option<u32>> {
    if rank == PROC_NULL {
        return Ok(None);
    }
    let n = comm.peer_group_size();
    if rank < 0 || rank >= n {
        return Err(MpiError::arg(
            ErrorClass::Rank,
            call,
            arg,
            format!("{rank} is not a rank of this communicator (0..{n}) nor MPI_PROC_NULL"),
        ));
    }
    Ok(Some(comm.peer_group()[rank as usize]))
}

/// The sending side of a partitioned operation (shared by its request and
/// the threads marking partitions ready).
#[derive(Debug)]
pub struct PartitionedSend {
    comm: Comm,
    /// The memory the runs read (`partitions * count` elements of it).
    mem: RunMem,
    partitions: usize,
    count: usize,
    peer: Option<u32>,
    /// This send's id: the tag of its data messages.
    id: i32,
    /// Partitions marked ready since the last start.
    ready: Mutex<Vec<bool>>,
    nready: AtomicUsize,
}

impl PartitionedSend {
    /// MPI_Psend_init over memory valid for the whole process (the C boundary: MPI's
    /// rule that the buffer stays valid while the request exists, stated by
    /// `SendBuf::from_raw`): `partitions` partitions of `count` elements each of
    /// `buf`'s datatype (raw bytes without one), to `dest` with `tag`. Each
    /// partition is left unchanged from its MPI_Pready until the request completes
    /// (MPI's rule; the bytes sent are then unspecified, never a memory error).
    pub fn init(
        comm: &Comm,
        buf: SendBuf<'static, '_>,
        partitions: usize,
        count: usize,
        dest: i32,
        tag: i32,
    ) -> Result<Arc<PartitionedSend>> {
        Self::init_mem(comm, RunMem::of_send(buf), partitions, count, dest, tag)
    }

    /// MPI_Psend_init over `mem`, which covers the `partitions * count` elements
    /// (checked here).
    fn init_mem(
        comm: &Comm,
        mem: RunMem,
        partitions: usize,
        count: usize,
        dest: i32,
        tag: i32,
    ) -> Result<Arc<PartitionedSend>> {
        let call = "MPI_Psend_init";
        check_covers(call, mem.count(), partitions, count)?;
        check_common(call, comm, partitions, count, mem.datatype(), tag)?;
        let peer = peer_of(call, "dest", comm, dest)?;
        let id = (NEXT_SEND_ID.fetch_add(1, Ordering::Relaxed) & i32::MAX as u32) as i32;
        if let Some(peer) = peer {
            // The init message: matched, in init order, by the peer's MPI_Precv_init.
            let env = Envelope {
                context: comm.context() | PART_INIT,
                source: comm.rank(),
                tag,
            };
            let msg: Box<[u8]> = Box::new(id.to_le_bytes());
            engine()?.with_state(|st| -> Result<()> {
                let r = st.start_send_packed(peer, env, msg, SendMode::Standard, 0)?;
                st.detach(r);
                Ok(())
            })?;
        }
        Ok(Arc::new(PartitionedSend {
            comm: comm.clone(),
            mem,
            partitions,
            count,
            peer,
            id,
            ready: Mutex::new(vec![false; partitions]),
            nready: AtomicUsize::new(0),
        }))
    }

    pub fn partitions(&self) -> usize {
        self.partitions
    }

    /// MPI_Start: no partition is ready; the message leaves once all are.
    pub fn start(self: &Arc<Self>) -> Result<Request> {
        self.ready
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter_mut()
            .for_each(|r| *r = false);
        self.nready.store(0, Ordering::SeqCst);
        let e = engine()?;
        let task = SendTask {
            p: self.clone(),
            inner: None,
        };
        Ok(e.with_progress(|st| st.start_task(Box::new(task))))
    }

    /// MPI_Pready / _range / _list: marks `parts` ready (each once per start).
    pub fn pready(&self, call: &str, parts: impl IntoIterator<Item = i64>) -> Result<()> {
        {
            let mut ready = self.ready.lock().unwrap_or_else(|p| p.into_inner());
            for p in parts {
                if p < 0 || p as usize >= self.partitions {
                    return Err(MpiError::arg(
                        ErrorClass::Arg,
                        call,
                        "partition",
                        format!("{p} is not a partition (0..{})", self.partitions),
                    ));
                }
                if ready[p as usize] {
                    return Err(MpiError::arg(
                        ErrorClass::Arg,
                        call,
                        "partition",
                        format!("partition {p} was already marked ready since MPI_Start"),
                    ));
                }
                ready[p as usize] = true;
                self.nready.fetch_add(1, Ordering::SeqCst);
            }
        }
        // The last partition starts the send: let progress see it now.
        engine()?.with_progress(|_| ());
        Ok(())
    }
}

#[derive(Debug)]
struct SendTask {
    p: Arc<PartitionedSend>,
    inner: Option<Request>,
}

impl Task for SendTask {
    fn advance(&mut self, st: &mut State) -> Result<bool> {
        let p = &self.p;
        if self.inner.is_none() {
            if p.nready.load(Ordering::SeqCst) < p.partitions {
                return Ok(false);
            }
            let Some(peer) = p.peer else {
                return Ok(true);
            };
            let env = Envelope {
                context: p.comm.context() | PART_DATA,
                source: p.comm.rank(),
                tag: p.id,
            };
            let n = p.partitions * p.count;
            let sig = st.sig_of(p.mem.datatype());
            // Every partition is ready: this run reads the memory now.
            let r = match p.mem.span(n) {
                Some(span) => st.start_send_sig(peer, env, span, SendMode::Standard, sig)?,
                None => {
                    let packed = p.mem.packed(n).ok_or_else(|| {
                        MpiError::intern("MPI_Pready", "the partitions outgrew their buffer")
                    })?;
                    st.start_send_packed(peer, env, packed, SendMode::Standard, sig)?
                }
            };
            self.inner = Some(r);
        }
        let r = self.inner.unwrap();
        match st.req(r) {
            Some(e) if e.done => {
                let err = e.error.as_deref().cloned();
                st.remove_request(r);
                self.inner = None;
                match err {
                    Some(err) => Err(err),
                    None => Ok(true),
                }
            }
            Some(_) => Ok(false),
            None => Ok(true),
        }
    }
}

/// The receiving side of a partitioned operation.
#[derive(Debug)]
pub struct PartitionedReceive {
    comm: Comm,
    /// The memory the runs write (`partitions * count` elements of it).
    mem: RunMem,
    partitions: usize,
    count: usize,
    source: i32,
    tag: i32,
    matching: Mutex<Matching>,
}

/// How far the receive got in meeting its send.
#[derive(Debug)]
struct Matching {
    /// The receive of the init message, while it is pending.
    init_req: Option<Request>,
    /// Where the init message lands (the sender's id, little endian).
    id_buf: Box<[u8; 4]>,
    /// The matched send's id (the tag of its data), once known.
    sender: Option<i32>,
}

impl Matching {
    /// The sender's id if the init message arrived (`st` locked).
    fn sender(&mut self, st: &mut State) -> Result<Option<i32>> {
        if self.sender.is_none() {
            if let Some(r) = self.init_req {
                match st.req(r) {
                    Some(e) if e.done => {
                        let err = e.error.as_deref().cloned();
                        st.remove_request(r);
                        self.init_req = None;
                        if let Some(err) = err {
                            return Err(err);
                        }
                        self.sender = Some(i32::from_le_bytes(*self.id_buf));
                    }
                    Some(_) => {}
                    None => {
                        return Err(MpiError::intern(
                            "MPI_Start",
                            "the partitioned receive lost its init message",
                        ))
                    }
                }
            }
        }
        Ok(self.sender)
    }
}

impl Drop for PartitionedReceive {
    fn drop(&mut self) {
        let m = self.matching.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = m.init_req.take() {
            // Freed before its send's init message came: the pending receive
            // still takes that message, into memory that must stay valid.
            let buf = std::mem::replace(&mut m.id_buf, Box::new([0; 4]));
            Box::leak(buf);
            if let Ok(e) = engine() {
                e.with_state(|st| st.detach(r));
            }
        }
    }
}

impl PartitionedReceive {
    /// MPI_Precv_init over memory valid for the whole process (the C boundary, as
    /// [`PartitionedSend::init`]): `partitions` partitions of `count` elements each
    /// of `buf`'s datatype, from `source` with `tag` (no wildcards).
    pub fn init(
        comm: &Comm,
        buf: RecvBuf<'static, '_>,
        partitions: usize,
        count: usize,
        source: i32,
        tag: i32,
    ) -> Result<Arc<PartitionedReceive>> {
        Self::init_mem(comm, RunMem::of_recv(buf), partitions, count, source, tag)
    }

    /// MPI_Precv_init over `mem`, which covers the `partitions * count` elements
    /// (checked here).
    fn init_mem(
        comm: &Comm,
        mem: RunMem,
        partitions: usize,
        count: usize,
        source: i32,
        tag: i32,
    ) -> Result<Arc<PartitionedReceive>> {
        let call = "MPI_Precv_init";
        check_covers(call, mem.count(), partitions, count)?;
        check_common(call, comm, partitions, count, mem.datatype(), tag)?;
        peer_of(call, "source", comm, source)?;
        let mut m = Matching {
            init_req: None,
            id_buf: Box::new([0; 4]),
            sender: None,
        };
        if source != PROC_NULL {
            let pat = Pattern {
                context: comm.context() | PART_INIT,
                source,
                tag,
            };
            let raw = RawBuf::from_mut_slice(&mut m.id_buf[..]);
            m.init_req = Some(engine()?.with_state(|st| st.post_recv_unpacking(raw, pat, None, 0)));
        }
        Ok(Arc::new(PartitionedReceive {
            comm: comm.clone(),
            mem,
            partitions,
            count,
            source,
            tag,
            matching: Mutex::new(m),
        }))
    }

    pub fn partitions(&self) -> usize {
        self.partitions
    }

    /// MPI_Start: receives the round's message once the init message matched.
    pub fn start(self: &Arc<Self>) -> Result<Request> {
        let e = engine()?;
        if self.source == PROC_NULL {
            return Ok(e.lock().done_request(Status::EMPTY));
        }
        let task = RecvTask {
            p: self.clone(),
            inner: None,
            status: Status::EMPTY,
        };
        Ok(e.with_progress(|st| st.start_task(Box::new(task))))
    }

    /// Posts the receive of one round's data from the send with id `sender`.
    fn post_data(&self, st: &mut State, sender: i32) -> Result<Request> {
        let n = self.partitions * self.count;
        let dt = self.mem.datatype();
        let pat = Pattern {
            context: self.comm.context() | PART_DATA,
            source: self.source,
            tag: sender,
        };
        let sig = st.sig_of(dt);
        // This run writes the memory now (until its request completes).
        if let Some(span) = self.mem.span_mut(n) {
            return Ok(st.post_recv_unpacking(span, pat, None, sig));
        }
        let dst = self.mem.unpack_dst(n).ok_or_else(|| {
            MpiError::intern(
                "MPI_Start",
                "the partitioned receive's buffer is not writable",
            )
        })?;
        let mut temp = vec![0u8; n * dt.size()].into_boxed_slice();
        let raw = RawBuf::from_mut_slice(&mut temp);
        let unpack = Box::new(Unpack { dst, temp });
        Ok(st.post_recv_unpacking(raw, pat, Some(unpack), sig))
    }
    /// MPI_Parrived: whether `partition` has arrived for the active receive
    /// `active` (`Request::NULL` when inactive: true).
    pub fn parrived(&self, active: Request, partition: i64) -> Result<bool> {
        let call = "MPI_Parrived";
        if partition < 0 || partition as usize >= self.partitions {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "partition",
                format!("{partition} is not a partition (0..{})", self.partitions),
            ));
        }
        if active.is_null() {
            return Ok(true);
        }
        Ok(super::request_get_status(active)?.is_some())
    }
}

#[derive(Debug)]
struct RecvTask {
    p: Arc<PartitionedReceive>,
    inner: Option<Request>,
    status: Status,
}

impl Task for RecvTask {
    fn advance(&mut self, st: &mut State) -> Result<bool> {
        let p = &self.p;
        if self.inner.is_none() {
            let sender = p
                .matching
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .sender(st)?;
            let Some(sender) = sender else {
                return Ok(false);
            };
            self.inner = Some(p.post_data(st, sender)?);
        }
        let r = self.inner.unwrap();
        match st.req(r) {
            Some(e) if e.done => {
                let (err, status) = (e.error.as_deref().cloned(), e.status);
                st.remove_request(r);
                self.inner = None;
                self.status = Status {
                    tag: p.tag,
                    ..status
                };
                match err {
                    Some(err) => Err(err),
                    None => Ok(true),
                }
            }
            Some(_) => Ok(false),
            None => Ok(true),
        }
    }

    fn status(&self) -> Status {
        self.status
    }
}

impl Rerun for PartitionedSend {
    fn run(self: &Arc<Self>) -> Result<Request> {
        self.start()
    }
}

impl Rerun for PartitionedReceive {
    fn run(self: &Arc<Self>) -> Result<Request> {
        self.start()
    }
}

/// A partitioned send over a buffer borrowed (shared) for `'a`: the Rust API's.
/// Runs start only with a keeper of `'a` ([`BufScope`]), which settles a run still
/// going before `'a` ends if this value is forgotten; dropping it waits for the run
/// (`buf::Runs` carries that proof). So the engine reads the buffer only within `'a`.
#[derive(Debug)]
pub struct ScopedSend<'a> {
    runs: Runs<'a, PartitionedSend>,
}

impl<'a> ScopedSend<'a> {
    /// MPI_Psend_init over `buf` (as [`PartitionedSend::init`]).
    pub fn new(
        comm: &Comm,
        buf: SendBuf<'a, '_>,
        partitions: usize,
        count: usize,
        dest: i32,
        tag: i32,
    ) -> Result<ScopedSend<'a>> {
        let runs = Runs::new(buf, |mem| {
            PartitionedSend::init_mem(comm, mem, partitions, count, dest, tag)
        })?;
        Ok(ScopedSend { runs })
    }

    /// MPI_Start: a new run, held by `keeper`; MPI_ERR_REQUEST if one is going.
    pub fn start(&mut self, keeper: &impl BufScope<'a>) -> Result<()> {
        self.runs.start(keeper, "send")
    }

    /// MPI_Wait for the run (an empty status if none is going).
    pub fn wait(&mut self) -> Result<Status> {
        self.runs.wait()
    }

    /// Whether a run is going.
    pub fn is_active(&self) -> bool {
        self.runs.is_active()
    }

    /// MPI_Pready (and its range and list forms, named `call`).
    pub fn pready(&self, call: &str, parts: impl IntoIterator<Item = i64>) -> Result<()> {
        self.runs.op().pready(call, parts)
    }

    pub fn partitions(&self) -> usize {
        self.runs.op().partitions()
    }
}

/// A partitioned receive over a buffer `D` borrowed exclusively for `'a` (the Rust
/// API's), kept as [`ScopedSend`] keeps its buffer (`buf::RunsMut`); the buffer comes
/// back ([`get`](Self::get), [`get_mut`](Self::get_mut)) while no run is going.
pub struct ScopedRecv<'a, D: ?Sized> {
    runs: RunsMut<'a, PartitionedReceive, D>,
}

impl<D: ?Sized> std::fmt::Debug for ScopedRecv<'_, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopedRecv")
            .field("runs", &self.runs)
            .finish()
    }
}

impl<'a, D: ?Sized> ScopedRecv<'a, D> {
    /// MPI_Precv_init over `buf`: `desc` describes it to the callback it gets (as an
    /// exclusive [`Region`] of the elements the operation writes, for a lifetime of
    /// its own, so the region is `buf`'s, and the number of those elements in each of
    /// the `partitions` partitions), from `source` with `tag`.
    #[allow(clippy::type_complexity)]
    pub fn new(
        comm: &Comm,
        buf: &'a mut D,
        desc: impl for<'x> FnOnce(
            &'x mut D,
            &mut dyn FnMut(Region<'x>, usize) -> Result<()>,
        ) -> Result<()>,
        partitions: usize,
        source: i32,
        tag: i32,
    ) -> Result<ScopedRecv<'a, D>> {
        let runs = RunsMut::new("MPI_Precv_init", buf, desc, |mem, count| {
            PartitionedReceive::init_mem(comm, mem, partitions, count, source, tag)
        })?;
        Ok(ScopedRecv { runs })
    }

    /// MPI_Start: a new run, held by `keeper`; MPI_ERR_REQUEST if one is going.
    pub fn start(&mut self, keeper: &impl BufScope<'a>) -> Result<()> {
        self.runs.start(keeper, "receive")
    }

    /// MPI_Wait for the run (an empty status if none is going).
    pub fn wait(&mut self) -> Result<Status> {
        self.runs.wait()
    }

    /// Whether a run is going.
    pub fn is_active(&self) -> bool {
        self.runs.runs().is_active()
    }

    /// MPI_Parrived for the run going (true when none is).
    pub fn parrived(&self, partition: i64) -> Result<bool> {
        let runs = self.runs.runs();
        runs.op().parrived(runs.active(), partition)
    }

    pub fn partitions(&self) -> usize {
        self.runs.runs().op().partitions()
    }

    /// The buffer, while no run is going.
    pub fn get(&self) -> Option<&D> {
        self.runs.get()
    }

    /// The buffer, writable, while no run is going.
    pub fn get_mut(&mut self) -> Option<&mut D> {
        self.runs.get_mut()
    }
}
