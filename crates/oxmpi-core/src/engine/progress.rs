//! Progress: decoding each incoming packet and dispatching it, control packets
//! (`Fin`, `SyncAck`, `Credit`, `Cts`, cancel, `Help`), one progress step
//! (flush outboxes, poll rings and sockets, finish shared copies, advance
//! collectives and tasks), and the task driver.
//!
//! Invariants: a progress step stops after the first packet that completes a
//! request (or, draining, the first that goes unexpected), and polls peers
//! round-robin so none starves; a schedule or task is taken out of its request
//! while it advances and put back after.

use super::*;

impl State {
    // ----- incoming packets -----------------------------------------------------

    pub(super) fn handle_packet(&mut self, from: u32, pkt: &[u8]) {
        self.peers[from as usize].recvd += 1;
        let Some((h, payload)) = Header::decode(pkt) else {
            eprintln!(
                "oxmpi: rank {}: dropped a malformed packet from rank {from}",
                self.me
            );
            return;
        };
        if matches!(h.kind, Kind::Eager | Kind::Rts) {
            // Already set: no send of ours since the peer's last message.
            self.rx_in_window = self.peers[from as usize].answered;
            self.peers[from as usize].answered = true;
            if let Some(via) = self.peers[from as usize].path.via() {
                self.stats.received(via, h.len as usize);
            }
        }
        match h.kind {
            Kind::Eager => self.on_eager(from, &h, payload),
            Kind::EagerCont => self.on_eager_cont(from, payload),
            Kind::Rts => {
                let env = Envelope {
                    context: h.context,
                    source: h.source,
                    tag: h.tag,
                };
                let pull = h.flags & FLAG_PULL != 0;
                self.promote_slot_for(&env);
                if let Some(req) = self.matcher.match_arrival(&env) {
                    self.check_sig(req, h.sig, h.len as usize);
                    self.start_rendezvous(req, env, from, h.sreq, h.rreq, h.len as usize);
                    if pull {
                        self.return_credit(from, credit_cost(h.len as usize));
                    }
                } else {
                    let body = if pull {
                        self.pull_unexpected(from, &h)
                    } else {
                        Body::Rts {
                            addr: h.rreq,
                            total: h.len as usize,
                        }
                    };
                    self.add_unexpected(UnexpMsg {
                        env,
                        from,
                        sreq: h.sreq,
                        sync: false,
                        sig: h.sig,
                        body,
                        claimed_by: None,
                    });
                }
            }
            Kind::Data => self.on_data(&h, payload),
            _ => self.handle_control(from, &h),
        }
    }

    /// The data of an unmatched pulled `Rts` (`FLAG_PULL`), read now so that its
    /// send completes (`Fin`) without waiting for the receive: kept like an eager
    /// message (its credit goes back on delivery). Where the read is refused,
    /// an ordinary rendezvous (credit returned now).
    fn pull_unexpected(&mut self, from: u32, h: &Header) -> Body {
        let total = h.len as usize;
        let p = &mut self.peers[from as usize];
        if p.cma_ok {
            let mut data = vec![0u8; total];
            let pid = p.pid;
            let read = self
                .pull_cost
                .time_read(total, || cma::read_remote(pid, h.rreq as usize, &mut data));
            match read {
                Ok(()) => {
                    self.ctrl(from, self.fin_with_floor(h.sreq));
                    return Body::Eager { data, total };
                }
                Err(_) => self.peers[from as usize].cma_ok = false,
            }
        }
        self.return_credit(from, credit_cost(total));
        Body::Rts {
            addr: h.rreq,
            total,
        }
    }

    pub(super) fn handle_control(&mut self, from: u32, h: &Header) {
        match h.kind {
            Kind::Fin => {
                // The receiver's figure for pulling, when its read was timed.
                if h.len != 0 {
                    self.peers[from as usize].pull_floor = h.len;
                }
                self.mark_sent(Request(h.sreq), true)
            }
            Kind::SyncAck => {
                let r = Request(h.sreq);
                if let Some(ReqKind::Send(s)) = self.reqs.get_mut(r).map(|e| &mut e.kind) {
                    s.await_ack = false;
                }
                self.send_progressed(r);
            }
            Kind::Credit => self.peers[from as usize].credit += h.len as i64,
            Kind::Cts => {
                let r = Request(h.sreq);
                if !matches!(self.reqs.get(r).map(|e| &e.kind), Some(ReqKind::Send(_))) {
                    return;
                }
                self.enqueue(
                    from,
                    OutItem::Stream {
                        rreq: h.rreq,
                        sent: 0,
                        req: r,
                    },
                );
            }
            Kind::CancelReq => {
                let sreq = h.sreq;
                let found = self
                    .matcher
                    .remove_unexpected(|id| {
                        self.unexp.get(id).is_some_and(|m| {
                            m.from == from && m.sreq == sreq && m.claimed_by.is_none()
                        })
                    })
                    .map(|(_, id)| id);
                let mut flags = 0;
                if let Some(id) = found {
                    if let Some(msg) = self.unexp.remove(&id) {
                        if let Body::Eager { .. } = msg.body {
                            if from != self.me {
                                self.return_credit(from, credit_cost(msg.body.total()));
                            }
                        }
                    }
                    flags = FLAG_CANCELLED;
                }
                // `rreq` names the sender's buffered-send request when the transfer
                // itself is finished on its side (echoed back for the answer).
                let ack = Header {
                    flags,
                    rreq: h.rreq,
                    ..Header::control(Kind::CancelAck, sreq)
                };
                self.ctrl(from, ack);
            }
            Kind::Help => self.help_copy(from, h),
            Kind::CancelAck => {
                let cancelled = h.flags & FLAG_CANCELLED != 0;
                if h.rreq != 0 {
                    self.finish_buffered_cancel(Request(h.rreq), cancelled);
                    return;
                }
                let r = Request(h.sreq);
                if let Some(e) = self.reqs.get_mut(r) {
                    if let ReqKind::Send(s) = &mut e.kind {
                        s.cancel_pending = false;
                        if cancelled {
                            s.local_done = true;
                            s.await_ack = false;
                            e.status.cancelled = true;
                        }
                    }
                }
                self.send_progressed(r);
            }
            _ => {}
        }
    }

    // ----- progress ---------------------------------------------------------------

    /// Moves packets in and out; returns whether anything happened.
    pub(crate) fn progress(&mut self) -> bool {
        self.progress_inner(false)
    }

    /// [`State::progress`] for a caller that waits on receives it has all
    /// posted already (MPI_Waitall): packets keep being taken after one
    /// completed a request, as long as each lands in a posted receive; the
    /// first that would go to the unexpected queue ends the step.
    pub(crate) fn progress_draining(&mut self) -> bool {
        self.progress_inner(true)
    }

    pub(super) fn progress_inner(&mut self, drain: bool) -> bool {
        // The common empty step (a spinning wait, an MPI_Irecv's look) in a few
        // loads: nothing queued out, no sockets, copies or schedules, and no ring
        // into this rank holding a packet.
        if self.pending_out.is_empty()
            && self.tcp.is_none()
            && self.shared_copies.is_empty()
            && self.active_colls.is_empty()
        {
            match self.shm {
                Some(shm) if shm.any_incoming() => {}
                _ => return false,
            }
        }
        let mut did = false;
        if !self.pending_out.is_empty() {
            // The list is swapped with the one kept from the step before (empty,
            // with capacity), so neither the take nor the pushes allocate.
            let mut pending = std::mem::take(&mut self.flushing);
            std::mem::swap(&mut pending, &mut self.pending_out);
            for &peer in &pending {
                self.flush_peer(peer);
                did = true;
                if !self.peers[peer as usize].outbox.is_empty() && !self.pending_out.contains(&peer)
                {
                    self.pending_out.push(peer);
                }
            }
            pending.clear();
            self.flushing = pending;
        }
        // The consumer side is taken out while we pop, so the packets' handlers may
        // use the rest of `State`. Taken afresh if a panicking handler dropped it
        // (its locks went with it); a progress step nested in a handler finds it
        // held and pops nothing.
        let rx = match self.rx.take() {
            Some(rx) => Some(rx),
            None => self.shm.and_then(|s| s.receiver()),
        };
        if let Some(mut rx) = rx {
            // Stop taking packets once one completed something: the caller may be
            // about to post the receive for the next packet, which then lands in
            // its buffer directly instead of taking the unexpected-queue detour.
            // Start at a different peer each time, so a peer whose packets keep
            // completing requests cannot starve the others.
            let before = self.completions;
            let unexpected_before = self.next_msg;
            let stop = |st: &State| {
                if drain {
                    st.next_msg != unexpected_before
                } else {
                    st.completions != before
                }
            };
            let n = self.shm_peers.len();
            self.poll_start = if self.poll_start + 1 >= n {
                0
            } else {
                self.poll_start + 1
            };
            for k in 0..n {
                if stop(self) {
                    break;
                }
                let i = if self.poll_start + k >= n {
                    self.poll_start + k - n
                } else {
                    self.poll_start + k
                };
                let (peer, local) = self.shm_peers[i];
                let mut budget = 64;
                while budget > 0
                    && !stop(self)
                    && rx.pop(local, |pkt| self.handle_packet(peer, pkt))
                {
                    budget -= 1;
                    did = true;
                }
            }
            self.rx = Some(rx);
        }
        if self.tcp.is_some() && self.progress_tcp() {
            did = true;
        }
        if !self.shared_copies.is_empty() && self.finish_shared_copies() {
            did = true;
        }
        // After the packets, so data that just arrived moves schedules on at once.
        if !self.active_colls.is_empty() && self.advance_colls() {
            did = true;
        }
        did
    }

    /// Registers a task as a request and runs it as far as it goes.
    pub(crate) fn start_task(&mut self, task: Box<dyn Task>) -> Request {
        let r = self.new_request(ReqKind::Task(Some(task)));
        self.active_colls.push(r);
        self.advance_colls();
        r
    }

    /// Advances every task in progress (collective schedules among them);
    /// returns whether any finished.
    pub(super) fn advance_colls(&mut self) -> bool {
        let mut finished = false;
        let mut i = 0;
        while i < self.active_colls.len() {
            let r = self.active_colls[i];
            let outcome = match self.reqs.get_mut(r).map(|e| &mut e.kind) {
                Some(ReqKind::Task(t)) => match t.take() {
                    Some(mut task) => {
                        let outcome = task.advance(self).map(|done| done.then(|| task.status()));
                        if let Some(ReqKind::Task(slot)) = self.reqs.get_mut(r).map(|e| &mut e.kind)
                        {
                            *slot = Some(task);
                        }
                        Some(outcome)
                    }
                    None => None,
                },
                _ => None,
            };
            let Some(outcome) = outcome else {
                self.active_colls.swap_remove(i);
                continue;
            };
            match outcome {
                Ok(None) => i += 1,
                Ok(Some(status)) => {
                    self.active_colls.swap_remove(i);
                    self.complete(r, status, None);
                    finished = true;
                }
                Err(err) => {
                    self.active_colls.swap_remove(i);
                    self.complete(r, Status::EMPTY, Some(err));
                    finished = true;
                }
            }
        }
        finished
    }

    /// Whether anything waits to be written out (for finalize).
    pub(crate) fn outbox_busy(&self) -> bool {
        !self.pending_out.is_empty()
    }

    /// Before sleeping: asks every local peer whose ring we could not write into
    /// to ring our doorbell when it frees a cell.
    pub(crate) fn announce_blocked_pushes(&self) {
        let Some(shm) = self.shm else { return };
        for &peer in &self.pending_out {
            if let Path::Shm { local } = self.peers[peer as usize].path {
                shm.announce_blocked(local);
            }
        }
    }
}
