//! Sending: the request-free fast path (`try_send_now`), the choice between
//! eager and rendezvous, buffered sends (bsend pools), sends to self, and the
//! per-peer outbox that writes packets into rings and sockets in order.
//!
//! Invariants: a packet to a peer is written directly only when that peer's
//! outbox is empty (otherwise it would overtake queued ones); an eager send is
//! charged `credit_cost(len)` before it leaves; `pending_out` lists every peer
//! with a non-empty outbox.

use super::*;

impl State {
    // ----- sending --------------------------------------------------------------

    /// Starts a send of `data` (which must stay valid until the request completes).
    pub(crate) fn start_send(
        &mut self,
        peer: u32,
        env: Envelope,
        data: RawBuf,
        mode: SendMode,
    ) -> Result<Request> {
        self.start_send_owning(peer, env, ActiveBuf::take(data), None, mode, 0)
    }

    /// [`State::start_send`] of a typed message; `sig` is from [`State::sig_of`].
    pub(crate) fn start_send_sig(
        &mut self,
        peer: u32,
        env: Envelope,
        data: RawBuf,
        mode: SendMode,
        sig: u64,
    ) -> Result<Request> {
        self.start_send_let_go(peer, env, data, mode, sig)
            .map(|(r, _)| r)
    }

    /// [`State::start_send_sig`], also saying whether the send is complete and its
    /// entry holds none of the sender's memory (a whole message written into a
    /// ring: [`State::push_whole_done`] made it with an empty buffer), so nothing
    /// the engine does with the request from now on (its completion, a cancel: the
    /// receiver drops the copy it has) reads that memory. The Rust API's scope then
    /// needs not hold the request for its buffer's sake (bench/PROFILE.md, rrate29).
    #[inline]
    pub(crate) fn start_send_let_go(
        &mut self,
        peer: u32,
        env: Envelope,
        data: RawBuf,
        mode: SendMode,
        sig: u64,
    ) -> Result<(Request, bool)> {
        self.let_go_active(peer, env, ActiveBuf::take(data), mode, sig)
    }

    /// [`State::start_send_let_go`] of the buffer made active.
    #[inline(always)]
    fn let_go_active(
        &mut self,
        peer: u32,
        env: Envelope,
        data: ActiveBuf,
        mode: SendMode,
        sig: u64,
    ) -> Result<(Request, bool)> {
        if matches!(mode, SendMode::Standard | SendMode::Ready) {
            if let Some(r) = self.send_whole_now(peer, &env, &data, sig) {
                return Ok((r, true));
            }
        }
        Ok((
            self.start_send_owning(peer, env, data, None, mode, sig)?,
            false,
        ))
    }

    /// [`State::start_send_let_go`] for the immediate standard-mode sends of
    /// contiguous bytes (`MPI_Isend`, the Rust API's immediate send): one that
    /// goes whole into the peer's ring now is complete when this returns and gets
    /// no request entry, only [`Request::DONE`] (no slab insert here, no slot to
    /// free in the wait: bench/PROFILE.md, rrate36). Its header names no send
    /// request (`sreq` 0, as a blocking send's), so it cannot be cancelled: MPI
    /// lets a cancel lose to a send that completed. Anything else takes the
    /// general path with its entry.
    #[inline]
    pub(crate) fn start_send_entryless(
        &mut self,
        peer: u32,
        env: Envelope,
        data: RawBuf,
        mode: SendMode,
        sig: u64,
    ) -> Result<(Request, bool)> {
        let data = ActiveBuf::take(data);
        if mode == SendMode::Standard
            && !crate::diag::tracing()
            && self.push_whole_with(peer, &env, data.bytes(), 0, sig)
        {
            return Ok((Request::DONE, true));
        }
        self.let_go_active(peer, env, data, mode, sig)
    }

    /// A whole small message into an idle shared-memory ring, when it fits the
    /// eager limit and the peer's credit and the non-blocking pull rule keeps it
    /// eager: written with a header naming send request `sreq` (0: none), the
    /// statistics counted and the credit charged. `false`: nothing done. The one
    /// body of [`State::push_whole_done`] (its request's slot) and
    /// [`State::start_send_entryless`] (no request).
    #[inline(always)]
    fn push_whole_with(
        &mut self,
        peer: u32,
        env: &Envelope,
        data: &[u8],
        sreq: u64,
        sig: u64,
    ) -> bool {
        let cost = credit_cost(data.len()) as i64;
        if data.len() > self.eager_limit
            || self.peers[peer as usize].credit < cost
            || self.pulls(peer, data.len())
        {
            return false;
        }
        let hdr = Header::eager(env, data.len(), sreq, sig, 0);
        if !self.push_whole_now(peer, &hdr, data) {
            return false;
        }
        self.stats.sent(crate::tools::Via::Shm, data.len());
        let p = &mut self.peers[peer as usize];
        p.credit -= cost;
        p.sent_to();
        true
    }

    /// The common immediate send (MPI_Isend of a small message): written whole
    /// into the peer's ring now, its request made complete in one piece. A
    /// small function of its own, so the message-rate path does not pay the
    /// general path's frame (bsend pools, queues, rendezvous). `None` (nothing
    /// done) when the message does not go that way, or the timeline is being
    /// recorded (the general path stamps its flow).
    #[inline]
    fn send_whole_now(
        &mut self,
        peer: u32,
        env: &Envelope,
        data: &ActiveBuf,
        sig: u64,
    ) -> Option<Request> {
        if crate::diag::tracing() {
            return None;
        }
        self.push_whole_done(peer, env, data, &mut None, sig)
    }

    /// A whole small message into an idle shared-memory ring, when it fits the
    /// eager limit and the peer's credit: the send is complete as soon as it
    /// is written, so its request is made complete in one piece afterwards
    /// (filling it in field by field and reading it back stalled on the store
    /// buffer, which still holds the ring writes). The one place that builds
    /// this frame, for [`State::send_whole_now`] and
    /// [`State::start_send_owning`]; `owned` (bytes the request keeps) is
    /// taken only when the message went. `None`: nothing done. The request is
    /// complete when made, so its entry holds no buffer (`data` retires with the
    /// caller's copy).
    #[inline(always)]
    fn push_whole_done(
        &mut self,
        peer: u32,
        env: &Envelope,
        data: &ActiveBuf,
        owned: &mut Option<Box<[u8]>>,
        sig: u64,
    ) -> Option<Request> {
        let req = self.reqs.peek_next();
        if !self.push_whole_with(peer, env, data.bytes(), req.0, sig) {
            return None;
        }
        let entry = ReqEntry {
            kind: ReqKind::Send(SendReq {
                peer,
                context: env.context,
                data: ActiveBuf::EMPTY,
                _owned: owned.take(),
                bsend_charge: 0,
                bsend_pool: None,
                local_done: true,
                await_ack: false,
                cancel_pending: false,
                user_half: None,
                state: SendState::InFlight,
            }),
            done: true,
            status: Status::ok(PROC_NULL, env.tag, data.len()),
            error: None,
            detached: false,
        };
        let got = self.reqs.insert(entry);
        debug_assert_eq!(got, req, "Slab::peek_next disagrees with insert");
        self.completions += 1;
        Some(got)
    }

    /// [`State::start_send`] of bytes the request owns (packed non-contiguous data).
    pub(crate) fn start_send_packed(
        &mut self,
        peer: u32,
        env: Envelope,
        packed: Box<[u8]>,
        mode: SendMode,
        sig: u64,
    ) -> Result<Request> {
        let data = ActiveBuf::of_box(&packed);
        self.start_send_owning(peer, env, data, Some(packed), mode, sig)
    }

    /// The type signature a message or receive of `dt` carries: its
    /// fingerprint (`datatype::sigcheck`, cached in the datatype) when checking
    /// is on, else 0. Types holding MPI_BYTE or MPI_PACKED match anything: 0 too.
    pub(crate) fn sig_of(&self, dt: &crate::datatype::Datatype) -> u64 {
        if !self.check_sigs {
            return 0;
        }
        dt.sig_fingerprint()
    }

    /// Checks that a matched message of `len` bytes with signature `sent` may be
    /// received by `req` (its signature is a prefix of the receive's); on a
    /// mismatch the receive is marked to fail without taking the data. A message
    /// longer than the receive is left to the truncation error.
    pub(super) fn check_sig(&mut self, req: Request, sent: u64, len: usize) {
        if sent == 0 {
            return;
        }
        if let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
            if r.sig != 0
                && r.sig != sent
                && len <= r.buf.len()
                && !crate::datatype::sigcheck::check(r.sig, len, sent)
            {
                r.bad_sig = sent;
            }
        }
    }

    /// A blocking standard-mode send that fits one shared-memory packet, written
    /// straight into the ring when nothing is queued before it: no request, no
    /// outbox item. Returns `false` (having done nothing) when it cannot be done
    /// that way; the caller then takes the general path.
    ///
    /// The header's `sreq` is 0: only a send request's owner can cancel it or wait
    /// for a synchronous ack, and this send is complete when we return.
    pub(crate) fn try_send_now(&mut self, peer: u32, env: Envelope, data: &[u8], sig: u64) -> bool {
        let cost = credit_cost(data.len()) as i64;
        if data.len() > self.eager_limit
            || self.peers[peer as usize].credit < cost
            || self.pull_wins(peer, data.len())
        {
            return false;
        }
        // sreq 0: only a send request's owner can cancel it or wait for a sync ack,
        // and this send is complete when we return.
        let hdr = Header::eager(&env, data.len(), 0, sig, 0);
        // The flow's start is stamped before the push: once the cell is in the
        // ring the receiver may stamp the flow's end before we run again.
        let traced_at = crate::diag::tracing().then(crate::diag::trace_now);
        let pushed = self.push_whole_now(peer, &hdr, data);
        if let (true, Some(ts)) = (pushed, traced_at) {
            crate::diag::trace_send_at(ts, self.me, peer, env.context, env.tag);
        }
        if pushed {
            let p = &mut self.peers[peer as usize];
            p.credit -= cost;
            p.sent_to();
            self.stats.sent(crate::tools::Via::Shm, data.len());
        }
        pushed
    }

    /// Whether a `len`-byte message to `peer` goes as a pulled `Rts` (`FLAG_PULL`)
    /// instead of eager: it is above [`State::pull_min`], a message came from the
    /// peer since our last send to it (a ping-pong, or a window's first send), and
    /// the receiver can read our memory. A blocking send asks
    /// [`State::pull_wins`] too.
    #[inline(always)]
    fn pulls(&self, peer: u32, len: usize) -> bool {
        len > self.pull_min && {
            let p = &self.peers[peer as usize];
            p.answered && p.cma_ok
        }
    }

    /// [`State::pulls`] for a blocking send, which nothing of ours overlaps: also
    /// above the size from which the receiver measured pulling to win
    /// (engine/pullcost.rs), except for a short burst in 1,024
    /// ([`pullcost::PROBE_BURST`]) that goes the other way to keep both measured.
    /// Non-blocking sends keep the fixed threshold: a window's first message read
    /// while the sender pushes the rest gave more bandwidth at 4-16 KiB (pull34).
    #[inline(always)]
    fn pull_wins(&self, peer: u32, len: usize) -> bool {
        self.pulls(peer, len)
            && (!self.pull_cost.enabled || self.peers[peer as usize].pull_chosen(len))
    }

    /// Writes a whole eager message (header and data in one packet) into a shared-
    /// memory peer's ring, if nothing is queued before it and it fits; `false` if not.
    #[inline(always)]
    pub(super) fn push_whole_now(&mut self, peer: u32, hdr: &Header, data: &[u8]) -> bool {
        // A ping-pong's answer: half of what pulling it would save, timed now
        // and then (engine/pullcost.rs).
        if self.peers[peer as usize].answered && self.pull_cost.samples_copy(data.len()) {
            let start = cma::ticks();
            let pushed = push_whole(&mut self.tx, &mut self.peers, peer, hdr, data);
            if pushed {
                self.pull_cost
                    .note_copy(data.len(), cma::ticks().wrapping_sub(start));
            }
            return pushed;
        }
        push_whole(&mut self.tx, &mut self.peers, peer, hdr, data)
    }

    pub(super) fn start_send_owning(
        &mut self,
        peer: u32,
        env: Envelope,
        data: ActiveBuf,
        already_owned: Option<Box<[u8]>>,
        mode: SendMode,
        sig: u64,
    ) -> Result<Request> {
        let pool_key = if mode != SendMode::Buffered {
            None
        } else if self.comm_bsend.contains_key(&env.context) {
            Some(env.context)
        } else {
            self.bsend_alias
                .get(&env.context)
                .copied()
                .filter(|k| self.comm_bsend.contains_key(k))
        };
        if crate::diag::tracing() && peer != self.me {
            crate::diag::trace_send(self.me, peer, env.context, env.tag);
        }
        let (data, mut owned, charge) = if mode == SendMode::Buffered {
            let charge = data.len() + BSEND_OVERHEAD;
            let whose = match pool_key {
                Some(k) if k == env.context => "the communicator's attached buffer",
                Some(_) => "the session's attached buffer",
                None => "the attached buffer",
            };
            let pool = self.bsend_pool_mut(pool_key);
            let Some((_, size)) = pool.attached else {
                return Err(MpiError::new(
                    ErrorClass::Buffer,
                    "MPI_Bsend: no buffer is attached (call MPI_Buffer_attach or MPI_Comm_attach_buffer first)",
                ));
            };
            if pool.used + charge > size {
                return Err(MpiError::new(
                    ErrorClass::Buffer,
                    format!(
                        "MPI_Bsend: {whose} is too small: {} of {} bytes in use, this message needs {}",
                        pool.used, size, charge
                    ),
                ));
            }
            pool.used += charge;
            let copy: Box<[u8]> = match already_owned {
                Some(b) => b,
                None => data.bytes().into(),
            };
            (ActiveBuf::of_box(&copy), Some(copy), charge)
        } else {
            (data, already_owned, 0)
        };
        let sync = mode == SendMode::Synchronous;
        if !sync && mode != SendMode::Buffered {
            if let Some(r) = self.push_whole_done(peer, &env, &data, &mut owned, sig) {
                return Ok(r);
            }
        }
        let len = data.len();
        let addr = data.addr();
        if let Some(via) = self.peers[peer as usize].path.via() {
            self.stats.sent(via, len);
        }
        let cost = credit_cost(len) as i64;
        let req = self.new_request(ReqKind::Send(SendReq {
            peer,
            context: env.context,
            data,
            _owned: owned,
            bsend_charge: charge,
            bsend_pool: pool_key,
            local_done: false,
            await_ack: sync,
            cancel_pending: false,
            user_half: None,
            state: SendState::Queued,
        }));
        {
            let e = self.reqs.get_mut(req).unwrap();
            e.status = Status::ok(PROC_NULL, env.tag, len);
            if mode == SendMode::Buffered {
                e.detached = true;
            }
        }
        let hdr_base = Header::eager(&env, len, req.0, sig, if sync { FLAG_SYNC } else { 0 });
        match self.peers[peer as usize].path {
            Path::SelfLoop => self.send_to_self(req, env, len, addr, sync, sig),
            Path::Shm { .. } | Path::Tcp | Path::Queue => {
                // A synchronous send must wait for its match: never pulled early.
                let pull = !sync && self.pulls(peer, len);
                let p = &mut self.peers[peer as usize];
                p.sent_to();
                if len <= self.eager_limit && p.credit >= cost && !pull {
                    p.credit -= cost;
                    let src = match self.reqs.get(req).map(|e| &e.kind) {
                        Some(ReqKind::Send(s)) => s.data.bytes(),
                        _ => &[],
                    };
                    if push_whole(&mut self.tx, &mut self.peers, peer, &hdr_base, src) {
                        self.mark_sent(req, false);
                    } else {
                        self.enqueue(
                            peer,
                            OutItem::Eager {
                                hdr: hdr_base,
                                sent: 0,
                                started: false,
                                req,
                            },
                        );
                    }
                } else {
                    let mut flags = hdr_base.flags;
                    if pull && len <= self.eager_limit && p.credit >= cost {
                        // Paid like an eager message: the receiver may keep it
                        // unexpected.
                        p.credit -= cost;
                        flags |= FLAG_PULL;
                    }
                    let hdr = Header {
                        kind: Kind::Rts,
                        rreq: addr as u64,
                        flags,
                        ..hdr_base
                    };
                    self.stats.rendezvous += 1;
                    self.peers[peer as usize].last_rts = req;
                    if let Some(ReqKind::Send(s)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
                        s.state = SendState::InFlight;
                    }
                    self.enqueue(peer, OutItem::Ctrl(hdr));
                }
            }
            Path::Unreachable => {
                self.reqs.remove(req);
                self.bsend_pool_mut(pool_key).used -= charge;
                return Err(MpiError::unsupported(
                    "MPI_Send",
                    format!("reaching world rank {peer} on another host (the TCP transport)"),
                ));
            }
        }
        if mode == SendMode::Buffered {
            // The user's half of a buffered send is complete at once.
            let user = self.new_request(ReqKind::BufferedUser { inner: req, peer });
            let e = self.reqs.get_mut(user).unwrap();
            e.done = true;
            e.status = Status::ok(PROC_NULL, env.tag, len);
            if let Some(ReqKind::Send(s)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
                s.user_half = Some(user);
            }
            return Ok(user);
        }
        Ok(req)
    }

    /// Send `req` (of `len` bytes at `addr`) to ourselves: copied from its entry's
    /// buffer into a matching receive's, kept whole as an unexpected message when
    /// small, else left in place as a rendezvous the receive copies from later.
    pub(super) fn send_to_self(
        &mut self,
        req: Request,
        env: Envelope,
        len: usize,
        addr: usize,
        sync: bool,
        sig: u64,
    ) {
        self.stats.received(crate::tools::Via::SelfLoop, len);
        self.promote_slot_for(&env);
        if let Some(rreq) = self.matcher.match_arrival(&env) {
            self.check_sig(rreq, sig, len);
            self.deliver_from_send(rreq, req, env, len);
            self.mark_sent(req, true);
            return;
        }
        let small = len <= self.eager_limit && !sync;
        let body = if small {
            let data = match self.reqs.get(req).map(|e| &e.kind) {
                Some(ReqKind::Send(s)) => s.data.bytes().to_vec(),
                _ => Vec::new(),
            };
            Body::Eager { data, total: len }
        } else {
            Body::Rts {
                addr: addr as u64,
                total: len,
            }
        };
        let id = self.add_unexpected(UnexpMsg {
            env,
            from: self.me,
            sreq: req.0,
            sync,
            sig,
            body,
            claimed_by: None,
        });
        let _ = id;
        if small {
            self.mark_sent(req, false);
        } else if let Some(ReqKind::Send(s)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
            s.state = SendState::InFlight;
        }
    }

    /// The data of send `req` has left; `acked` also clears a pending sync ack.
    pub(super) fn mark_sent(&mut self, req: Request, acked: bool) {
        if let Some(ReqKind::Send(s)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
            s.local_done = true;
            s.state = SendState::InFlight;
            if acked {
                s.await_ack = false;
            }
        }
        self.send_progressed(req);
    }

    pub(super) fn add_unexpected(&mut self, msg: UnexpMsg) -> u64 {
        let id = self.next_msg;
        self.next_msg += 1;
        let env = msg.env;
        self.unexp.insert(id, msg);
        self.matcher.push_unexpected(env, id);
        self.stats.unexpected_queued(self.matcher.unexpected_len());
        id
    }

    pub(super) fn enqueue(&mut self, peer: u32, item: OutItem) {
        let p = &mut self.peers[peer as usize];
        let was_empty = p.outbox.is_empty();
        p.outbox.push_back(item);
        if was_empty {
            self.flush_peer(peer);
            if !self.peers[peer as usize].outbox.is_empty() {
                self.pending_out.push(peer);
            }
        }
        // A packet copied into a TCP peer's send queue goes to the socket now, not
        // at the next poll: that comes only with this rank's next MPI call, and an
        // MPI_Send (or an MPI_Isend completed by MPI_Wait) followed by computing
        // would keep its message from the waiting receiver until then.
        if self.peers[peer as usize].path == Path::Tcp {
            if let Some(t) = self.tcp.as_mut() {
                t.write_out(peer);
            }
        }
    }

    /// A control packet to `peer`.
    pub(super) fn ctrl(&mut self, peer: u32, hdr: Header) {
        if self.peers[peer as usize].path == Path::SelfLoop {
            self.handle_control(peer, &hdr);
        } else {
            self.enqueue(peer, OutItem::Ctrl(hdr));
        }
    }

    /// Writes as much of `peer`'s outbox into its ring as fits.
    pub(super) fn flush_peer(&mut self, peer: u32) {
        loop {
            let p = &mut self.peers[peer as usize];
            let mut link = match p.path {
                Path::Shm { local } => match self.tx.as_mut() {
                    Some(s) => Link::Shm(s, local),
                    None => return,
                },
                Path::Tcp => match self.tcp.as_mut() {
                    Some(t) => Link::Tcp(t, peer),
                    None => return,
                },
                Path::Queue => Link::Queue(
                    &mut self.queued[peer as usize],
                    self.queue_cap,
                    self.queue_packet,
                ),
                _ => return,
            };
            let cap = link.max_packet();
            let Some(item) = p.outbox.front_mut() else {
                return;
            };
            let finished: Option<Request>;
            match item {
                OutItem::Ctrl(h) => {
                    let h = *h;
                    if !link.push(HEADER_LEN, |cell| h.encode(cell)) {
                        return;
                    }
                    p.sent += 1;
                    p.outbox.pop_front();
                    continue;
                }
                OutItem::Eager {
                    hdr,
                    sent,
                    started,
                    req,
                } => {
                    // The send completes only once this item is done, so its entry
                    // holds the data until then.
                    let src = match self.reqs.get(*req).map(|e| &e.kind) {
                        Some(ReqKind::Send(s)) => s.data.bytes(),
                        _ => &[],
                    };
                    while !*started || *sent < src.len() {
                        let (hl, h) = if *started {
                            (
                                CONT_HEADER_LEN,
                                Header {
                                    kind: Kind::EagerCont,
                                    ..*hdr
                                },
                            )
                        } else {
                            (HEADER_LEN, *hdr)
                        };
                        let n = (src.len() - *sent).min(cap - hl);
                        // Small, or behind another packet since the last poll: copied
                        // below, and written with the others by that poll. Else header
                        // and payload in one gathered write straight from the user's
                        // buffer: no copy into the send queue (see Stream).
                        if let Link::Tcp(t, to) = &mut link {
                            if !t.copies_eager(*to, n) {
                                let mut head = [0u8; HEADER_LEN];
                                h.encode(&mut head);
                                let pkt = [(&head[..hl], &src[*sent..*sent + n])];
                                if t.try_push_gather(*to, &pkt) == 0 {
                                    return;
                                }
                                *sent += n;
                                p.sent += 1;
                                *started = true;
                                continue;
                            }
                        }
                        let pushed = link.push(hl + n, |cell| {
                            h.encode(cell);
                            cell[hl..hl + n].copy_from_slice(&src[*sent..*sent + n]);
                            *sent += n;
                            hl + n
                        });
                        if !pushed {
                            return;
                        }
                        p.sent += 1;
                        *started = true;
                    }
                    finished = Some(*req);
                }
                OutItem::Stream { rreq, sent, req } => {
                    // As above: the send waits for this stream.
                    let src = match self.reqs.get(*req).map(|e| &e.kind) {
                        Some(ReqKind::Send(s)) => s.data.bytes(),
                        _ => &[],
                    };
                    while *sent < src.len() {
                        if let Link::Tcp(t, to) = &mut link {
                            // Several packets in one gathered write straight from the
                            // user's buffer (copied only if the socket does not take them).
                            const G: usize = TcpTransport::GATHER_MAX;
                            let mut heads = [[0u8; CONT_HEADER_LEN]; G];
                            let mut spans = [(0usize, 0usize); G];
                            let (mut off, mut k) = (*sent, 0);
                            while k < G && off < src.len() {
                                let n = (src.len() - off).min(cap - CONT_HEADER_LEN);
                                Header {
                                    kind: Kind::Data,
                                    flags: 0,
                                    context: 0,
                                    source: 0,
                                    tag: 0,
                                    len: off as u64,
                                    sreq: 0,
                                    rreq: *rreq,
                                    sig: 0,
                                }
                                .encode(&mut heads[k]);
                                spans[k] = (off, n);
                                off += n;
                                k += 1;
                            }
                            let mut pkts: [(&[u8], &[u8]); G] = [(&[], &[]); G];
                            for ((pk, h), &(o, n)) in pkts.iter_mut().zip(&heads).zip(&spans) {
                                *pk = (h, &src[o..o + n]);
                            }
                            // The socket may take fewer (it is full): the rest are
                            // offered again once it drains, never copied.
                            let took = t.try_push_gather(*to, &pkts[..k]);
                            if took == 0 {
                                return;
                            }
                            p.sent += took as u64;
                            *sent = spans[took - 1].0 + spans[took - 1].1;
                            if took < k {
                                return;
                            }
                            continue;
                        }
                        let h = Header {
                            kind: Kind::Data,
                            flags: 0,
                            context: 0,
                            source: 0,
                            tag: 0,
                            // The payload's offset (see CONT_HEADER_LEN).
                            len: *sent as u64,
                            sreq: 0,
                            rreq: *rreq,
                            sig: 0,
                        };
                        let n = (src.len() - *sent).min(cap - CONT_HEADER_LEN);
                        let pushed = link.push(CONT_HEADER_LEN + n, |cell| {
                            let hl = h.encode(cell);
                            cell[hl..hl + n].copy_from_slice(&src[*sent..*sent + n]);
                            *sent += n;
                            hl + n
                        });
                        if !pushed {
                            return;
                        }
                        p.sent += 1;
                    }
                    finished = Some(*req);
                }
            }
            let was_stream = matches!(p.outbox.pop_front(), Some(OutItem::Stream { .. }));
            if let Some(r) = finished {
                // A stream follows a CTS, so the receive has matched: that is
                // also the acknowledgement a synchronous send waits for.
                self.mark_sent(r, was_stream);
            }
        }
    }
}

/// Writes a whole eager message (header and data in one packet) into a shared-
/// memory peer's ring through the producer side `tx`, if nothing is queued before
/// it and it fits; `false` if not. Over the fields it needs, so a caller may pass
/// data borrowed from the request table.
#[inline(always)]
fn push_whole(
    tx: &mut Option<RingSender<'static>>,
    peers: &mut [Peer],
    peer: u32,
    hdr: &Header,
    data: &[u8],
) -> bool {
    let Some(tx) = tx.as_mut() else { return false };
    let p = &mut peers[peer as usize];
    let Path::Shm { local } = p.path else {
        return false;
    };
    if !p.outbox.is_empty() || data.len() > CELL_PAYLOAD - HEADER_LEN {
        return false;
    }
    // No message from the peer since our last send to it: a window of sends (as in
    // `osu_bw`), which the transport's vector loop streams faster; the answer of a
    // ping-pong keeps `memcpy` (bench/PROFILE.md mbw33).
    let in_window = !p.answered;
    let pushed = tx.push(local, HEADER_LEN + data.len(), |cell| {
        // The compact header of a small message (at most HEADER_LEN bytes).
        let hl = hdr.encode_whole(cell);
        copy_message(&mut cell[hl..], data, in_window);
        hl + data.len()
    });
    p.sent += pushed as u64;
    pushed
}

/// Copies `src` to the start of `dst` (which must be at least as long). A
/// message of 4 to 16 bytes, the message-rate case, is two overlapping word
/// moves inlined instead of a call to `memcpy` through the PLT (~14
/// instructions a copy on each side of every small message, bench/PROFILE.md
/// rate18).
///
/// A copy of more than 64 bytes that is part of a window (`in_window`: messages
/// one way with no answer between) takes the transport's [`copy_packet_bytes`]
/// instead of `memcpy`.
#[inline(always)]
pub(super) fn copy_message(dst: &mut [u8], src: &[u8], in_window: bool) {
    let n = src.len();
    let dst = &mut dst[..n];
    if (8..=16).contains(&n) {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..].copy_from_slice(&src[n - 8..]);
    } else if (17..=32).contains(&n) {
        // The rest of what fits one ring slot with the compact header (pt2pt/wire.rs).
        dst[..16].copy_from_slice(&src[..16]);
        dst[n - 16..].copy_from_slice(&src[n - 16..]);
    } else if (4..8).contains(&n) {
        dst[..4].copy_from_slice(&src[..4]);
        dst[n - 4..].copy_from_slice(&src[n - 4..]);
    } else if (33..=64).contains(&n) {
        dst[..32].copy_from_slice(&src[..32]);
        dst[n - 32..].copy_from_slice(&src[n - 32..]);
    } else if n < 4 {
        // 0-3 bytes (the 1-2 B message-rate rows): the first, middle and last byte,
        // which overlap for 1 and 2; a `memcpy` call cost ~20 instructions a copy on
        // each side (bench/PROFILE.md, rrate33).
        if n > 0 {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
    } else if in_window {
        copy_packet_bytes(dst, src);
    } else {
        dst.copy_from_slice(src);
    }
}

#[cfg(test)]
mod tests {
    use super::copy_message;

    #[test]
    fn copy_message_copies_every_length_exactly() {
        let src: Vec<u8> = (0..5000u32).map(|i| (i % 251 + 1) as u8).collect();
        let lengths = (0..=300).chain([2047, 2048, 2049, 4096, 4100, 5000]);
        for n in lengths {
            for in_window in [false, true] {
                let mut dst = vec![0u8; n + 8];
                copy_message(&mut dst, &src[..n], in_window);
                assert_eq!(&dst[..n], &src[..n], "length {n}");
                assert!(
                    dst[n..].iter().all(|&b| b == 0),
                    "length {n} wrote past its end"
                );
            }
        }
    }
}
