//! The request table: a generational slab of [`ReqEntry`]s, completion,
//! release (with the bsend space a buffered send held), detach
//! (MPI_Request_free) and generalized requests.
//!
//! Invariants: a [`Request`] names a slot and its generation, so a stale handle
//! finds nothing instead of another operation; `complete` bumps
//! `State::completions` (waiters in other threads watch it) and drops detached
//! requests at once; a send completes only when its data left, its sync ack
//! arrived (if any) and no cancel is pending (`send_progressed`).

use super::*;

#[derive(Default, Debug)]
pub(super) struct Slab {
    pub(super) slots: Vec<(u32, Option<ReqEntry>)>,
    pub(super) free: Vec<u32>,
    /// The entry [`Request::DONE`] names (made afresh for each mutable look-up).
    done: DoneEntry,
}

/// The slot of [`Request::DONE`]'s entry.
#[derive(Debug)]
pub(super) struct DoneEntry(ReqEntry);

impl Default for DoneEntry {
    fn default() -> Self {
        DoneEntry(done_entry())
    }
}

/// What [`Request::DONE`] is: complete, an empty status, nothing to free.
fn done_entry() -> ReqEntry {
    ReqEntry {
        kind: ReqKind::Done,
        done: true,
        status: Status::EMPTY,
        error: None,
        detached: false,
    }
}

impl Slab {
    pub(super) fn insert(&mut self, e: ReqEntry) -> Request {
        if let Some(i) = self.free.pop() {
            let slot = &mut self.slots[i as usize];
            // Generation 0 is never used, so no live request's raw value has a zero
            // upper half (the C layer hands some out as handles, which must not
            // collide with the ABI's small constants).
            slot.0 = next_generation(slot.0);
            slot.1 = Some(e);
            Request::new(i, slot.0)
        } else {
            self.slots.push((1, Some(e)));
            Request::new(self.slots.len() as u32 - 1, 1)
        }
    }
    /// Two distinct live entries at once (a send to ourselves copies from its
    /// entry's buffer into the receive's); `None` if either is missing or they
    /// are the same.
    pub(super) fn pair_mut(
        &mut self,
        a: Request,
        b: Request,
    ) -> Option<(&mut ReqEntry, &mut ReqEntry)> {
        let (i, j) = (a.slot() as usize, b.slot() as usize);
        if i == j || i >= self.slots.len() || j >= self.slots.len() {
            return None;
        }
        let (lo, hi) = self.slots.split_at_mut(i.max(j));
        let (x, y) = (&mut lo[i.min(j)], &mut hi[0]);
        let (ea, eb) = if i < j { (x, y) } else { (y, x) };
        match (ea, eb) {
            ((ga, Some(ea)), (gb, Some(eb))) if *ga == a.generation() && *gb == b.generation() => {
                Some((ea, eb))
            }
            _ => None,
        }
    }
    /// The handle the next [`Slab::insert`] will return.
    #[inline]
    pub(super) fn peek_next(&self) -> Request {
        match self.free.last() {
            Some(&i) => Request::new(i, next_generation(self.slots[i as usize].0)),
            None => Request::new(self.slots.len() as u32, 1),
        }
    }
    pub(super) fn get(&self, r: Request) -> Option<&ReqEntry> {
        match self.slots.get(r.slot() as usize) {
            Some((g, Some(e))) if *g == r.generation() => Some(e),
            _ if r == Request::DONE => Some(&self.done.0),
            _ => None,
        }
    }
    pub(super) fn get_mut(&mut self, r: Request) -> Option<&mut ReqEntry> {
        match self.slots.get_mut(r.slot() as usize) {
            Some((g, Some(e))) if *g == r.generation() => Some(e),
            _ if r == Request::DONE => {
                self.done.0 = done_entry();
                Some(&mut self.done.0)
            }
            _ => None,
        }
    }
    pub(super) fn remove(&mut self, r: Request) -> Option<ReqEntry> {
        match self.slots.get_mut(r.slot() as usize) {
            Some((g, e @ Some(_))) if *g == r.generation() => {
                self.free.push(r.slot());
                e.take()
            }
            _ if r == Request::DONE => Some(done_entry()),
            _ => None,
        }
    }
    pub(super) fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
    /// Frees a request's slot and gives its status and error, dropping the
    /// entry where it lies (moving a whole entry out, as `remove` does, was a
    /// visible copy per completed message).
    pub(super) fn take_outcome(&mut self, r: Request) -> Option<(Status, Option<MpiError>)> {
        match self.slots.get_mut(r.slot() as usize) {
            Some((g, slot)) if *g == r.generation() => {
                let e = slot.as_mut()?;
                let out = (e.status, e.error.take().map(|b| *b));
                *slot = None;
                self.free.push(r.slot());
                Some(out)
            }
            _ if r == Request::DONE => Some((Status::EMPTY, None)),
            _ => None,
        }
    }
    /// A finished request's status, its slot freed, when it ended without an
    /// error and is no persistent request; `None` (nothing done) otherwise.
    /// The common completion (a window of eager sends, receives that landed)
    /// without [`Slab::take_outcome`]'s error move and its caller's
    /// persistent-request test (bench/PROFILE.md, rate21). [`Request::DONE`]
    /// (no slot: a small immediate send written whole, rrate36) is such a
    /// request, with an empty status, checked only where a slot misses.
    #[inline(always)]
    pub(super) fn take_done_ok(&mut self, r: Request) -> Option<Status> {
        let Some((g, slot)) = self.slots.get_mut(r.slot() as usize) else {
            return (r == Request::DONE).then_some(Status::EMPTY);
        };
        let e = slot.as_ref()?;
        if *g != r.generation()
            || !e.done
            || e.error.is_some()
            || matches!(e.kind, ReqKind::Persistent { .. })
        {
            return None;
        }
        let status = e.status;
        match slot.take() {
            // A finished receive into its own buffer owns nothing (its `unpack` was
            // taken at completion, `error` is none as tested above): forgotten, it
            // skips the out-of-line drop glue the assignment of `None` called, ~25
            // instructions a completion (bench/PROFILE.md, recv36 and recv37). Every
            // field is named so that a new one must be considered here, and
            // an assertion beside `next_generation` checks their types.
            Some(
                finished @ ReqEntry {
                    kind:
                        ReqKind::Recv(RecvReq {
                            buf: _,
                            posted: _,
                            total: _,
                            received: _,
                            env: _,
                            unpack: None,
                            sig: _,
                            bad_sig: _,
                            context: _,
                        }),
                    done: _,
                    status: _,
                    error: None,
                    detached: _,
                },
            ) => std::mem::forget(finished),
            other => drop_entry(other),
        }
        self.free.push(r.slot());
        Some(status)
    }
    /// The live request in slot `slot`, whatever its generation.
    pub(super) fn at_slot(&self, slot: u32) -> Option<Request> {
        match self.slots.get(slot as usize) {
            Some((g, Some(_))) => Some(Request::new(slot, *g)),
            _ => None,
        }
    }
}

/// The drop of an entry that may own something, one call as the assignment of
/// `None` made it, so that [`Slab::take_done_ok`] stays small enough to inline.
#[inline(never)]
fn drop_entry(entry: Option<ReqEntry>) {
    drop(entry);
}

/// What lets [`Slab::take_done_ok`] forget a finished receive's entry: apart from
/// `unpack` and `error` (matched as `None` there), no part of it owns anything.
const _: () = assert!(
    !std::mem::needs_drop::<ActiveBuf>()
        && !std::mem::needs_drop::<Envelope>()
        && !std::mem::needs_drop::<Status>()
        && !std::mem::needs_drop::<bool>()
        && !std::mem::needs_drop::<usize>()
        && !std::mem::needs_drop::<u64>()
        && !std::mem::needs_drop::<u32>()
);

/// The generation a reused slot gets: the next one, skipping 0.
#[inline]
fn next_generation(g: u32) -> u32 {
    g.wrapping_add(1).max(1)
}

/// Hashing for maps keyed by ids this process hands out itself (unexpected
/// message numbers): a multiply, not SipHash. The keys are not chosen by
/// anyone else, so there is no flooding to defend against, and SipHash's
/// ~100 instructions per look-up were a visible part of every unexpected
/// message (bench/PROFILE.md).
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct IdHash;

impl std::hash::BuildHasher for IdHash {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        // Fibonacci hashing: spreads consecutive ids over the high bits the
        // table uses.
        self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8)) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

impl State {
    // ----- requests -------------------------------------------------------------

    pub(crate) fn new_request(&mut self, kind: ReqKind) -> Request {
        self.reqs.insert(ReqEntry {
            kind,
            done: false,
            status: Status::EMPTY,
            error: None,
            detached: false,
        })
    }

    pub(crate) fn done_request(&mut self, status: Status) -> Request {
        let r = self.new_request(ReqKind::Done);
        let e = self.reqs.get_mut(r).unwrap();
        e.done = true;
        e.status = status;
        r
    }

    pub(crate) fn req(&self, r: Request) -> Option<&ReqEntry> {
        self.reqs.get(r)
    }

    pub(crate) fn req_mut(&mut self, r: Request) -> Option<&mut ReqEntry> {
        self.reqs.get_mut(r)
    }

    /// [`State::remove_request`] of a finished request, keeping only what the
    /// caller reports: its status and error.
    pub(crate) fn take_outcome(&mut self, r: Request) -> Option<(Status, Option<MpiError>)> {
        if crate::diag::tracing() {
            return self
                .remove_request(r)
                .map(|e| (e.status, e.error.map(|b| *b)));
        }
        self.reqs.take_outcome(r)
    }

    /// [`Slab::take_done_ok`]: the status of a request that finished without
    /// an error, its slot freed; `None` (nothing done) for any other request,
    /// and always while the timeline is recorded (`remove_request` stamps it).
    #[inline]
    pub(crate) fn take_done_ok(&mut self, r: Request) -> Option<Status> {
        if crate::diag::tracing() {
            return None;
        }
        self.reqs.take_done_ok(r)
    }

    pub(crate) fn remove_request(&mut self, r: Request) -> Option<ReqEntry> {
        let e = self.reqs.remove(r);
        if crate::diag::tracing() {
            if let Some(ReqEntry {
                kind: ReqKind::Recv(rr),
                status,
                ..
            }) = &e
            {
                let context = rr.env.map_or(rr.context, |env| env.context);
                if !status.cancelled && status.source >= 0 {
                    crate::diag::trace_recv(self.me, context, status.source, status.tag);
                }
            }
        }
        e
    }

    /// The live request in slot `slot` (the C layer's Fortran handles).
    pub(crate) fn request_at_slot(&self, slot: u32) -> Option<Request> {
        self.reqs.at_slot(slot)
    }

    pub(crate) fn live_requests(&self) -> usize {
        self.reqs.live()
    }

    pub(super) fn complete(&mut self, r: Request, status: Status, error: Option<MpiError>) {
        self.completions += 1;
        let Some(e) = self.reqs.get_mut(r) else {
            return;
        };
        e.done = true;
        e.status = status;
        if let Some(err) = error {
            e.status.error = err.class.code();
            e.error = Some(Box::new(err));
        }
        // The operation is over: its memory is the caller's again.
        let user_half = match &mut e.kind {
            ReqKind::Send(s) => {
                s.data.retire();
                s.user_half
            }
            ReqKind::Recv(r) => {
                r.buf.retire();
                None
            }
            _ => None,
        };
        let cancelled = e.status.cancelled;
        if e.detached {
            self.release_request(r);
            if !self.freed_runs.is_empty() {
                self.freed_runs.retain(|&(_, run)| run != r);
            }
        }
        if let Some(u) = user_half {
            self.finish_buffered_cancel(u, cancelled);
        }
    }

    /// A cancel of buffered send `user` (its [`ReqKind::BufferedUser`] half) has
    /// an outcome: that request completes again, saying whether it was cancelled.
    pub(super) fn finish_buffered_cancel(&mut self, user: Request, cancelled: bool) {
        let Some(e) = self.reqs.get(user) else { return };
        if e.done || !matches!(e.kind, ReqKind::BufferedUser { .. }) {
            return;
        }
        let mut status = e.status;
        status.cancelled = cancelled;
        self.complete(user, status, None);
    }

    /// The bsend buffer a key names: a communicator's (by context id) or the
    /// process's. A communicator's pool outlives its detach while messages it
    /// carried are in flight (detach waits for them), so the key always exists.
    pub(crate) fn bsend_pool_mut(&mut self, key: Option<u32>) -> &mut BsendPool {
        match key {
            Some(ctx) => self.comm_bsend.entry(ctx).or_default(),
            None => &mut self.bsend,
        }
    }

    /// Drops a finished request and whatever it held (bsend space).
    pub(super) fn release_request(&mut self, r: Request) {
        if let Some(ReqEntry {
            kind: ReqKind::Send(s),
            ..
        }) = self.reqs.remove(r)
        {
            let pool = self.bsend_pool_mut(s.bsend_pool);
            pool.used = pool.used.saturating_sub(s.bsend_charge);
        }
    }

    /// MPI_Grequest_complete: a generalized request is done (dropped at once if
    /// already freed).
    pub(crate) fn complete_generalized(&mut self, r: Request) -> Result<()> {
        match self.reqs.get(r) {
            Some(e) if matches!(e.kind, ReqKind::Generalized) && !e.done => {
                self.complete(r, Status::EMPTY, None);
                Ok(())
            }
            Some(e) if matches!(e.kind, ReqKind::Generalized) => Err(MpiError::arg(
                ErrorClass::Request,
                "MPI_Grequest_complete",
                "request",
                "the generalized request is complete already",
            )),
            _ => Err(MpiError::arg(
                ErrorClass::Request,
                "MPI_Grequest_complete",
                "request",
                "not a generalized request",
            )),
        }
    }

    /// Marks a detached request (MPI_Request_free): it is dropped when it completes.
    pub(crate) fn detach(&mut self, r: Request) {
        let done = match self.reqs.get_mut(r) {
            Some(e) => {
                e.detached = true;
                e.done
            }
            None => return,
        };
        if done {
            self.release_request(r);
        }
    }

    pub(super) fn send_progressed(&mut self, r: Request) {
        let Some(e) = self.reqs.get_mut(r) else {
            return;
        };
        let ReqKind::Send(s) = &e.kind else { return };
        if s.local_done && !s.await_ack && !s.cancel_pending && !e.done {
            let status = e.status;
            self.complete(r, status, None);
        }
    }
}

impl State {
    /// Keeps in `reqs` the requests whose memory the engine may still use: live
    /// ones (pending, or inactive persistent), and persistent ones freed while a
    /// run was going until that run is over (`freed_runs`). One pass under the
    /// caller's lock for a whole window (`pt2pt::retain_in_flight`).
    pub(crate) fn retain_in_flight(&self, reqs: &mut Vec<Request>) {
        reqs.retain(|&r| {
            !r.is_null()
                && r != Request::DONE
                && (self.req(r).is_some() || self.freed_runs.iter().any(|&(p, _)| p == r))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_of_requests_is_checked_in_flight_in_one_pass() {
        let config = EngineConfig {
            eager_limit: 64,
            check_sigs: false,
            cma_allowed: false,
            shared_copy: false,
            credit_per_peer: 1024,
            queue_cap: 4,
            queue_packet: 1024,
            shm_stream_max: 0,
            pull_min: usize::MAX,
            adaptive_pull: false,
        };
        let mut st = State::with_config(0, Vec::new(), None, None, config);
        let live: Vec<Request> = (0..5).map(|_| st.done_request(Status::EMPTY)).collect();
        let freed_run = st.done_request(Status::EMPTY);
        let gone = st.done_request(Status::EMPTY);
        assert!(st.take_outcome(gone).is_some());
        assert!(st.take_outcome(freed_run).is_some());
        st.freed_runs.push((freed_run, gone));
        let mut reqs = vec![Request::NULL, live[0], gone, Request::DONE, freed_run];
        reqs.extend(&live[1..]);
        st.retain_in_flight(&mut reqs);
        // NULL, DONE and the finished request are dropped; order is kept.
        let mut want = vec![live[0], freed_run];
        want.extend(&live[1..]);
        assert_eq!(reqs, want);
        // Once finished, a request leaves (its slot reused by a newer one, which a
        // stale handle never names), and so does a freed run once it is over.
        assert!(st.take_outcome(live[0]).is_some());
        let newer = st.done_request(Status::EMPTY);
        assert_eq!(newer.slot(), live[0].slot());
        st.freed_runs.clear();
        st.retain_in_flight(&mut reqs);
        assert_eq!(reqs, live[1..].to_vec());
    }

    #[test]
    fn the_one_complete_request_is_taken_as_finished_without_a_slot() {
        let mut slab = Slab::default();
        let real = slab.insert(done());
        // DONE names no slot: taken as finished with an empty status, any number
        // of times, and the table is untouched.
        for _ in 0..3 {
            assert_eq!(slab.take_done_ok(Request::DONE), Some(Status::EMPTY));
        }
        assert_eq!(slab.live(), 1);
        assert_eq!(slab.take_done_ok(real), Some(Status::EMPTY));
        assert_eq!(slab.live(), 0);
        // A stale handle is still no finished request.
        assert_eq!(slab.take_done_ok(real), None);
    }

    fn done() -> ReqEntry {
        ReqEntry {
            kind: ReqKind::Done,
            done: true,
            status: Status::EMPTY,
            error: None,
            detached: false,
        }
    }

    #[test]
    fn request_entries_stay_small() {
        // Every message writes one and drops one (bench/PROFILE.md, p2p19): errors
        // are boxed, so the entry is its kind, a status and two flags.
        let n = std::mem::size_of::<ReqEntry>();
        assert!(n <= 128, "ReqEntry is {n} bytes");
    }

    #[test]
    fn generations_skip_zero_and_stale_handles_find_nothing() {
        let mut s = Slab::default();
        let a = s.insert(done());
        assert_eq!(a.generation(), 1);
        assert!(s.take_outcome(a).is_some());
        assert!(s.take_outcome(a).is_none(), "a request is taken once");
        // The slot's generation wraps past u32::MAX to 1, never 0.
        s.slots[a.slot() as usize].0 = u32::MAX;
        let next = s.peek_next();
        let b = s.insert(done());
        assert_eq!(b, next);
        assert_eq!((b.slot(), b.generation()), (a.slot(), 1));
        assert_ne!(b.to_raw() >> 32, 0);
        assert_eq!(s.at_slot(b.slot()), Some(b));
        assert!(s.get(a).is_none() || a == b);
        s.remove(b);
        assert_eq!(s.at_slot(b.slot()), None);
    }
}
