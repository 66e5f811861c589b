//! Receiving: posting receives (matched against the unexpected queue first),
//! taking unexpected messages, delivering eager data (whole or in
//! continuation fragments), streamed rendezvous `Data`, completion with
//! truncation and type-signature errors.
//!
//! Invariants: matching is FIFO on both queues (`matching.rs`), and each peer's
//! packets are handled in arrival order, so messages do not overtake; a peer has
//! at most one eager message whose fragments are due (`Peer::rx`); delivered
//! eager data returns its credit and answers a synchronous sender's `SyncAck`.

use super::*;

impl State {
    // ----- receiving ------------------------------------------------------------

    /// Posts a receive into `buf` (valid until completion) for `pattern`.
    pub(crate) fn post_recv(&mut self, buf: RawBuf, pattern: Pattern) -> Request {
        self.post_recv_unpacking(buf, pattern, None, 0)
    }

    /// [`State::post_recv`] into a temporary buffer that is unpacked on completion.
    /// `sig` is the expected type signature ([`State::sig_of`]; 0 = unchecked).
    pub(crate) fn post_recv_unpacking(
        &mut self,
        buf: RawBuf,
        pattern: Pattern,
        unpack: Option<Box<Unpack>>,
        sig: u64,
    ) -> Request {
        // Matched first, so the entry is written once (no look-up afterwards
        // to mark it posted).
        let unexpected = self.matcher.match_posted(&pattern);
        let req = self.new_request(ReqKind::Recv(RecvReq::new(
            ActiveBuf::take(buf),
            unexpected.is_none(),
            unpack,
            sig,
            pattern.context,
        )));
        if let Some((_, id)) = unexpected {
            self.take_unexpected(req, id);
        } else {
            self.matcher.push_posted(pattern, req);
            self.stats.posted_queued(self.matcher.posted_len());
        }
        req
    }

    /// A blocking receive's post: a whole eager message already in the
    /// unexpected queue that fits `buf` and passes the signature check is
    /// copied out and its status returned with no request made (MPI_Recv of a
    /// message already here: no slab entry, completion, progress step or
    /// finish; bench/PROFILE.md, rate20). Anything else (no match, fragments
    /// still due, rendezvous, truncation, a signature to look at, the timeline
    /// being recorded) is posted as [`State::post_recv_unpacking`] does, and
    /// its request returned as `Err`, so errors are made in one place.
    pub(crate) fn recv_now_or_post(
        &mut self,
        buf: RawBuf,
        pattern: Pattern,
        sig: u64,
    ) -> std::result::Result<Status, Posted> {
        let mut buf = ActiveBuf::take(buf);
        let Some((_, id)) = self.matcher.match_posted(&pattern) else {
            // Nothing queued (so every receive queued while it waits is younger)
            // and the slot free: the receive waits there, with no request entry
            // made, queued, matched and freed (bench/PROFILE.md, recv37). Not
            // while the timeline is recorded (its receives are stamped at their
            // entry's removal) nor with peers on other hosts (their eager messages
            // may land at their header through `net::land_eager`, which knows only
            // the queue; `ensure_tcp` promotes a slot that waits when TCP starts).
            if self.blocking_slot.is_none()
                && self.matcher.posted_len() == 0
                && self.tcp.is_none()
                && !crate::diag::tracing()
            {
                self.blocking_slot = Some(BlockingSlot {
                    pattern,
                    buf,
                    sig,
                    outcome: SlotOutcome::Waiting,
                });
                self.stats.posted_queued(1);
                return Err(Posted::Slot);
            }
            let req = self.new_request(ReqKind::Recv(RecvReq::new(
                buf,
                true,
                None,
                sig,
                pattern.context,
            )));
            self.matcher.push_posted(pattern, req);
            self.stats
                .posted_queued(self.matcher.posted_len() + self.slot_waiting());
            return Err(Posted::Request(req));
        };
        if !crate::diag::tracing() {
            if let std::collections::hash_map::Entry::Occupied(o) = self.unexp.entry(id) {
                let m = o.get();
                let whole = match &m.body {
                    Body::Eager { data, total } => data.len() == *total && *total <= buf.len(),
                    Body::Rts { .. } => false,
                };
                if whole && (m.sig == 0 || sig == 0 || m.sig == sig) {
                    let msg = o.remove();
                    let Body::Eager { data, total } = &msg.body else {
                        unreachable!("checked above")
                    };
                    let total = *total;
                    buf.bytes_mut()[..total].copy_from_slice(&data[..total]);
                    buf.retire();
                    let status = Status::ok(msg.env.source, msg.env.tag, total);
                    self.completions += 1;
                    self.after_eager_delivered(&msg);
                    self.recycle_eager(msg.body);
                    return Ok(status);
                }
            }
        }
        let req = self.new_request(ReqKind::Recv(RecvReq::new(
            buf,
            false,
            None,
            sig,
            pattern.context,
        )));
        self.take_unexpected(req, id);
        Err(Posted::Request(req))
    }

    /// 1 while a blocking receive waits in the slot (a posted receive that is not
    /// in the matcher's queue), else 0.
    pub(crate) fn slot_waiting(&self) -> usize {
        usize::from(matches!(
            self.blocking_slot,
            Some(BlockingSlot {
                outcome: SlotOutcome::Waiting,
                ..
            })
        ))
    }

    /// The end of the receive in the blocking slot, which leaves the slot free:
    /// `Ok` with the status of the message that landed, `Err` with the request it
    /// became (to be waited on as any receive). `None` while it waits.
    #[inline]
    pub(crate) fn slot_outcome(&mut self) -> Option<std::result::Result<Status, Request>> {
        let out = match self.blocking_slot.as_ref()?.outcome {
            SlotOutcome::Waiting => return None,
            SlotOutcome::Done(status) => Ok(status),
            SlotOutcome::Promoted(req) => Err(req),
        };
        self.blocking_slot = None;
        Some(out)
    }

    /// Empties the blocking slot when its waiter leaves without its outcome (a
    /// panic unwinding through the wait): its buffer must not be written after
    /// the call returned. A receive it had become stays a request (as the
    /// request of a blocking receive does when its wait unwinds).
    pub(crate) fn abandon_slot(&mut self) {
        self.blocking_slot = None;
    }

    /// Turns the receive waiting in the blocking slot into a request at the head
    /// of the posted queue when it matches `env`, so that an arrival site that
    /// needs a request (anything but a whole eager message that fits) finds it
    /// there, in its place: it was posted before every queued receive.
    pub(super) fn promote_slot_for(&mut self, env: &Envelope) {
        if let Some(slot) = self.blocking_slot.as_ref() {
            if slot.pattern.matches(env) {
                self.promote_slot();
            }
        }
    }

    /// Turns the receive waiting in the blocking slot, if any, into a request at
    /// the head of the posted queue (whatever arrives).
    pub(super) fn promote_slot(&mut self) {
        let Some(slot) = self.blocking_slot.as_mut() else {
            return;
        };
        if slot.outcome != SlotOutcome::Waiting {
            return;
        }
        let (pattern, sig) = (slot.pattern, slot.sig);
        let buf = std::mem::replace(&mut slot.buf, ActiveBuf::EMPTY);
        let req = self.new_request(ReqKind::Recv(RecvReq::new(
            buf,
            true,
            None,
            sig,
            pattern.context,
        )));
        self.matcher.push_posted_oldest(pattern, req);
        if let Some(slot) = self.blocking_slot.as_mut() {
            slot.outcome = SlotOutcome::Promoted(req);
        }
    }

    /// An eager message's arrival at the blocking slot: a whole message `data`
    /// that fits the receive waiting there and whose signature needs no check is
    /// copied in and completes it (true). Otherwise a match makes the slot a
    /// request ([`State::promote_slot_for`]) and false leaves the message to the
    /// posted queue, as does no match.
    #[inline(always)]
    fn land_in_slot(&mut self, env: &Envelope, sent_sig: u64, total: usize, data: &[u8]) -> bool {
        let in_window = self.rx_in_window;
        let Some(slot) = self.blocking_slot.as_mut() else {
            return false;
        };
        if slot.outcome != SlotOutcome::Waiting || !slot.pattern.matches(env) {
            return false;
        }
        let same_sig = sent_sig == 0 || slot.sig == 0 || slot.sig == sent_sig;
        if data.len() != total || total > slot.buf.len() || !same_sig {
            self.promote_slot_for(env);
            return false;
        }
        // A ping-pong's answer: its copy timed now and then, as `deliver_whole`
        // does (engine/pullcost.rs).
        if !in_window && self.pull_cost.samples_copy(total) {
            let start = cma::ticks();
            copy_message(slot.buf.bytes_mut(), data, false);
            self.pull_cost
                .note_copy(total, cma::ticks().wrapping_sub(start));
        } else {
            copy_message(slot.buf.bytes_mut(), data, in_window);
        }
        slot.buf.retire();
        slot.outcome = SlotOutcome::Done(Status::ok(env.source, env.tag, total));
        self.completions += 1;
        true
    }

    /// Receives message `id`, already removed from the matching queue (mprobe),
    /// into `buf` or, with `unpack`, a temporary buffer unpacked on completion;
    /// `sig` as for [`State::post_recv_unpacking`].
    pub(crate) fn recv_message_unpacking(
        &mut self,
        buf: RawBuf,
        id: u64,
        unpack: Option<Box<Unpack>>,
        sig: u64,
    ) -> Request {
        let req = self.new_request(ReqKind::Recv(RecvReq::new(
            ActiveBuf::take(buf),
            false,
            unpack,
            sig,
            0,
        )));
        self.take_unexpected(req, id);
        req
    }

    /// Hands unexpected message `id` (removed from the matcher) to receive `req`.
    pub(super) fn take_unexpected(&mut self, req: Request, id: u64) {
        // One look-up in the common case (the whole message is here): taken out
        // at once, put back only while its fragments are still arriving.
        let Some(mut msg) = self.unexp.remove(&id) else {
            return;
        };
        self.check_sig(req, msg.sig, msg.body.total());
        match &msg.body {
            Body::Eager { data, total } if data.len() < *total => {
                // Fragments still arriving: finish when the last one comes in
                // (`Rx::Unexpected` finds it under the same id).
                msg.claimed_by = Some(req);
                self.unexp.insert(id, msg);
            }
            Body::Eager { data, .. } => {
                self.deliver_whole(req, msg.env, data);
                self.after_eager_delivered(&msg);
                self.recycle_eager(msg.body);
            }
            Body::Rts { addr, total } => {
                let (addr, total) = (*addr, *total);
                self.start_rendezvous(req, msg.env, msg.from, msg.sreq, addr, total);
            }
        }
    }

    /// Keeps the buffer of a delivered small unexpected message for the next one.
    pub(super) fn recycle_eager(&mut self, body: Body) {
        if let Body::Eager { mut data, .. } = body {
            if data.capacity() == SPARE_EAGER_CAP && self.spare_eager.len() < SPARE_EAGER_MAX {
                data.clear();
                self.spare_eager.push(data);
            }
        }
    }

    /// Sync ack and credit return once an eager message reached its receive.
    pub(super) fn after_eager_delivered(&mut self, msg: &UnexpMsg) {
        if msg.from == self.me {
            // Our own message: the sender half is local.
            let sreq = Request(msg.sreq);
            if msg.sync {
                self.mark_sent(sreq, true);
            }
            return;
        }
        if msg.sync {
            self.ctrl(msg.from, Header::control(Kind::SyncAck, msg.sreq));
        }
        self.return_credit(msg.from, credit_cost(msg.body.total()));
    }

    /// Copies a whole message into receive `req` and completes it.
    pub(super) fn deliver_whole(&mut self, req: Request, env: Envelope, src: &[u8]) {
        if self.complete_whole_in_place(req, &env, src, self.rx_in_window) {
            return;
        }
        let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) else {
            return;
        };
        copy_into(r, 0, src);
        self.finish_recv(req, env, src.len());
    }

    /// [`State::deliver_whole`] inlined into the arrival of an eager message for
    /// its commonest case: a message of a window (no ping-pong answer, so no
    /// pull-cost sample to take). The call's frame and the envelope passed by
    /// value were ~26 instructions of a ~800-instruction receive (bench/PROFILE.md,
    /// recv36). Anything else goes to `deliver_whole`.
    #[inline(always)]
    fn deliver_whole_in_window(&mut self, req: Request, env: Envelope, src: &[u8]) {
        if !(self.rx_in_window && self.complete_whole_in_place(req, &env, src, true)) {
            self.deliver_whole(req, env, src);
        }
    }

    /// The common case of a whole message's delivery, shared by `deliver_whole`
    /// and `deliver_whole_in_window`: a contiguous receive that holds the message,
    /// signatures agreeing, held by its owner, completes here with one look-up of
    /// the request: what `finish_recv` and `complete` do for it, without their two
    /// look-ups and the error's `Option` (bench/PROFILE.md, rate21). Returns false,
    /// having touched nothing, for any other case. `in_window` false means the
    /// message may be a ping-pong's answer, whose copy is timed now and then
    /// (engine/pullcost.rs); the window caller passes a constant `true`, so that
    /// test is compiled out of the arrival path.
    #[inline(always)]
    fn complete_whole_in_place(
        &mut self,
        req: Request,
        env: &Envelope,
        src: &[u8],
        in_window: bool,
    ) -> bool {
        let Some(e) = self.reqs.get_mut(req) else {
            return false;
        };
        let ReqKind::Recv(r) = &mut e.kind else {
            return false;
        };
        if r.bad_sig != 0 || r.unpack.is_some() || src.len() > r.buf.len() || e.detached {
            return false;
        }
        if !in_window && self.pull_cost.samples_copy(src.len()) {
            let start = cma::ticks();
            copy_message(r.buf.bytes_mut(), src, in_window);
            self.pull_cost
                .note_copy(src.len(), cma::ticks().wrapping_sub(start));
        } else {
            copy_message(r.buf.bytes_mut(), src, in_window);
        }
        r.buf.retire();
        e.done = true;
        e.status = Status::ok(env.source, env.tag, src.len());
        self.completions += 1;
        true
    }

    /// [`State::deliver_whole`] of the data of our own send `sreq` (`len` bytes,
    /// read from its entry's buffer) into receive `req`.
    pub(super) fn deliver_from_send(
        &mut self,
        req: Request,
        sreq: Request,
        env: Envelope,
        len: usize,
    ) {
        if let Some((s, r)) = self.reqs.pair_mut(sreq, req) {
            if let (ReqKind::Send(s), ReqKind::Recv(r)) = (&s.kind, &mut r.kind) {
                copy_into(r, 0, s.data.bytes());
            }
        }
        self.finish_recv(req, env, len);
    }

    pub(super) fn finish_recv(&mut self, req: Request, env: Envelope, total: usize) {
        let cap = match self.reqs.get_mut(req).map(|e| &mut e.kind) {
            Some(ReqKind::Recv(r)) if r.bad_sig != 0 => {
                let (sent, want, cap) = (r.bad_sig, r.sig, r.buf.len());
                r.unpack = None;
                use crate::datatype::sigcheck::{describe_message, describe_receive};
                let err = MpiError::new(
                    ErrorClass::Type,
                    format!(
                        "MPI_Recv: type signature mismatch: the message from rank {} (tag {}) holds {} but the receive expects {}",
                        env.source,
                        env.tag,
                        describe_message(sent, total),
                        describe_receive(want, cap)
                    ),
                );
                self.complete(req, Status::ok(env.source, env.tag, 0), Some(err));
                return;
            }
            Some(ReqKind::Recv(r)) => {
                if let Some(u) = r.unpack.take() {
                    let got = total.min(u.temp.len());
                    u.dst.unpack(&u.temp[..got]);
                }
                r.buf.len()
            }
            _ => return,
        };
        let status = Status::ok(env.source, env.tag, total.min(cap));
        let err = (total > cap).then(|| {
            MpiError::new(
                ErrorClass::Truncate,
                format!(
                    "MPI_Recv: message truncated: {total} bytes arrived from rank {} with tag {} but the receive buffer holds {cap}",
                    env.source, env.tag
                ),
            )
        });
        self.complete(req, status, err);
    }

    pub(super) fn on_eager(&mut self, from: u32, h: &Header, payload: &[u8]) {
        let env = Envelope {
            context: h.context,
            source: h.source,
            tag: h.tag,
        };
        let total = h.len as usize;
        let sync = h.flags & FLAG_SYNC != 0;
        let first = &payload[..payload.len().min(total)];
        if self.blocking_slot.is_some() && self.land_in_slot(&env, h.sig, total, first) {
            if sync {
                self.ctrl(from, Header::control(Kind::SyncAck, h.sreq));
            }
            self.return_credit(from, credit_cost(total));
            return;
        }
        if let Some(req) = self.matcher.match_arrival(&env) {
            self.check_sig(req, h.sig, total);
            if first.len() == total {
                self.deliver_whole_in_window(req, env, first);
                if sync {
                    self.ctrl(from, Header::control(Kind::SyncAck, h.sreq));
                }
                self.return_credit(from, credit_cost(total));
            } else {
                self.write_recv_at(req, 0, first);
                if let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
                    r.env = Some(env);
                    r.total = total;
                    r.received = 0;
                }
                // Remember the sender for the ack when the last fragment lands.
                self.peers[from as usize].rx = Rx::Direct {
                    req,
                    offset: first.len(),
                    total,
                };
                if sync {
                    self.ctrl(from, Header::control(Kind::SyncAck, h.sreq));
                }
            }
        } else {
            // Small messages reuse the buffers of delivered ones: no allocation
            // (and no free at delivery) per unexpected message.
            let mut data = if total <= SPARE_EAGER_CAP {
                self.spare_eager
                    .pop()
                    .unwrap_or_else(|| Vec::with_capacity(SPARE_EAGER_CAP))
            } else {
                Vec::with_capacity(total)
            };
            data.extend_from_slice(first);
            let complete = data.len() == total;
            let id = self.add_unexpected(UnexpMsg {
                env,
                from,
                sreq: h.sreq,
                sync,
                sig: h.sig,
                body: Body::Eager { data, total },
                claimed_by: None,
            });
            self.peers[from as usize].rx = if complete {
                Rx::Idle
            } else {
                Rx::Unexpected { msg: id }
            };
        }
    }

    pub(super) fn write_recv_at(&mut self, req: Request, offset: usize, src: &[u8]) {
        if let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
            copy_into(r, offset, src);
        }
    }

    pub(super) fn on_eager_cont(&mut self, from: u32, payload: &[u8]) {
        match self.peers[from as usize].rx {
            Rx::Idle => {
                eprintln!(
                    "oxmpi: rank {}: stray continuation fragment from rank {from} dropped",
                    self.me
                );
            }
            Rx::Direct { req, offset, total } => {
                let n = payload.len().min(total - offset);
                self.write_recv_at(req, offset, &payload[..n]);
                let offset = offset + n;
                if offset >= total {
                    self.peers[from as usize].rx = Rx::Idle;
                    let env = match self.reqs.get(req).map(|e| &e.kind) {
                        Some(ReqKind::Recv(r)) => r.env,
                        _ => None,
                    };
                    if let Some(env) = env {
                        self.finish_recv(req, env, total);
                    }
                    self.return_credit(from, credit_cost(total));
                } else {
                    self.peers[from as usize].rx = Rx::Direct { req, offset, total };
                }
            }
            Rx::Unexpected { msg: id } => {
                let Some(msg) = self.unexp.get_mut(&id) else {
                    return;
                };
                let Body::Eager { data, total } = &mut msg.body else {
                    return;
                };
                let n = payload.len().min(*total - data.len());
                data.extend_from_slice(&payload[..n]);
                if data.len() < *total {
                    return;
                }
                self.peers[from as usize].rx = Rx::Idle;
                if let Some(req) = msg.claimed_by {
                    let msg = self.unexp.remove(&id).unwrap();
                    let Body::Eager { data, .. } = &msg.body else {
                        unreachable!()
                    };
                    self.deliver_whole(req, msg.env, data);
                    self.after_eager_delivered(&msg);
                    self.recycle_eager(msg.body);
                }
            }
        }
    }

    pub(super) fn on_data(&mut self, h: &Header, payload: &[u8]) {
        let req = Request(h.rreq);
        let (offset, total, env) = match self.reqs.get(req).map(|e| &e.kind) {
            Some(ReqKind::Recv(r)) => (r.received, r.total, r.env),
            _ => return,
        };
        self.write_recv_at(req, offset, payload);
        self.data_received(req, offset + payload.len(), total, env);
    }

    /// A `Data` packet of `n` payload bytes that are already in the receive's buffer
    /// (read there by the transport, see `net::land_data`).
    pub(super) fn on_data_landed(&mut self, h: &Header, n: usize) {
        let req = Request(h.rreq);
        let (offset, total, env) = match self.reqs.get_mut(req).map(|e| &mut e.kind) {
            Some(ReqKind::Recv(r)) => {
                // The transport is done with the memory it was lent.
                r.buf.landed();
                (r.received, r.total, r.env)
            }
            _ => return,
        };
        self.data_received(req, offset + n, total, env);
    }

    fn data_received(
        &mut self,
        req: Request,
        received: usize,
        total: usize,
        env: Option<Envelope>,
    ) {
        if let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
            r.received = received;
        }
        if received >= total {
            if let Some(env) = env {
                self.finish_recv(req, env, total);
            }
        }
    }
}

/// Copies as much of `src` as fits into receive `r`'s buffer from `offset` (nothing
/// after a type-signature mismatch: that receive takes no data).
#[inline]
fn copy_into(r: &mut RecvReq, offset: usize, src: &[u8]) {
    if r.bad_sig != 0 {
        return;
    }
    let dst = r.buf.bytes_mut();
    if offset >= dst.len() {
        return;
    }
    let n = src.len().min(dst.len() - offset);
    dst[offset..offset + n].copy_from_slice(&src[..n]);
}
