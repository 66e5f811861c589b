//! The engine's network glue: [`Link`] (where one peer's packets go: a shared-
//! memory ring or a TCP connection), processes of other jobs reached over TCP
//! (connect/accept, join, spawn), and the TCP side of progress and shutdown.
//!
//! Invariants: a peer's path is `Tcp` only while `State::tcp` exists; the
//! transport's peer table and `State::peers` grow together (same indices).
//! Packets to one peer leave in outbox order on exactly one connection, so they
//! cannot reorder.

use super::*;

/// Where one peer's packets go: a ring of the shared segment (through this process's
/// producer side of it, which `State` holds) or a TCP connection.
pub(super) enum Link<'a> {
    Shm(&'a mut RingSender<'static>, usize),
    Tcp(&'a mut TcpTransport, u32),
    /// A [`Path::Queue`] peer's packet queue, its capacity and largest packet.
    Queue(&'a mut VecDeque<Vec<u8>>, usize, usize),
}

impl Link<'_> {
    pub(super) fn max_packet(&self) -> usize {
        match self {
            Link::Shm(..) => CELL_PAYLOAD,
            Link::Tcp(..) => tcp::MAX_PACKET,
            Link::Queue(_, _, max) => *max,
        }
    }

    /// Pushes a packet of at most `max_len` bytes (at most [`Link::max_packet`]).
    pub(super) fn push(&mut self, max_len: usize, fill: impl FnOnce(&mut [u8]) -> usize) -> bool {
        match self {
            Link::Shm(s, local) => s.push(*local, max_len, fill),
            Link::Tcp(t, peer) => t.try_push_max(*peer, max_len, fill),
            Link::Queue(q, cap, _) => {
                if q.len() >= *cap {
                    return false;
                }
                let mut pkt = vec![0; max_len];
                let n = fill(&mut pkt);
                pkt.truncate(n);
                q.push_back(pkt);
                true
            }
        }
    }
}

impl State {
    // ----- processes of other jobs (connect/accept, join) -----------------------

    /// Makes sure a TCP transport exists (a job on one host has none until it
    /// connects to another job); `make` builds one for `peers.len()` peers.
    pub(crate) fn ensure_tcp(
        &mut self,
        make: impl FnOnce(u32) -> crate::error::Result<TcpTransport>,
    ) -> crate::error::Result<()> {
        if self.tcp.is_none() {
            self.tcp = Some(make(self.peers.len() as u32)?);
            // Another thread's blocking receive may wait in the slot, which
            // `land_eager` does not look at: it becomes a queued request.
            self.promote_slot();
        }
        Ok(())
    }

    /// Writes what TCP peers' send queues hold back for coalescing (the flusher's
    /// call, see [`crate::transport::tcp::flush`]).
    pub(crate) fn flush_held_tcp(&mut self) {
        if let Some(t) = self.tcp.as_mut() {
            t.flush_held();
        }
    }

    /// "ip:port" of this process's TCP listener, once [`State::ensure_tcp`] ran.
    pub(crate) fn tcp_endpoint(&self) -> Option<String> {
        self.tcp.as_ref().map(|t| t.endpoint())
    }

    /// Adds a process of another job, reached over TCP (see
    /// [`TcpTransport::add_dynamic_peer`]); returns its peer index.
    pub(crate) fn add_dynamic_peer(
        &mut self,
        endpoint: &str,
        remote_me: u32,
        my_index_there: u32,
        secret: &[u8],
        dial: bool,
    ) -> crate::error::Result<u32> {
        let t = self.tcp.as_mut().ok_or_else(|| {
            crate::error::MpiError::new(
                crate::error::ErrorClass::Intern,
                "add_dynamic_peer: no TCP transport",
            )
        })?;
        debug_assert_eq!(t.peer_count() as usize, self.peers.len());
        let r = t.add_dynamic_peer(endpoint, remote_me, my_index_there, secret, dial)?;
        self.peers
            .push(Peer::new(Path::Tcp, 0, self.credit_per_peer, false));
        Ok(r)
    }

    /// Gives a process of another job added with [`State::add_dynamic_peer`]
    /// the index it gave us, and starts dialing if we dial.
    pub(crate) fn set_dynamic_index(&mut self, peer: u32, my_index_there: u32, dial: bool) {
        if let Some(t) = self.tcp.as_mut() {
            t.set_dynamic_index(peer, my_index_there, dial);
        }
    }

    /// Whether the connection to `peer` is established; an error if it failed.
    pub(crate) fn peer_connected(&self, peer: u32) -> std::result::Result<bool, String> {
        let Some(t) = self.tcp.as_ref() else {
            return Ok(false);
        };
        if let Some(why) = t.peer_failed(peer) {
            return Err(why);
        }
        Ok(t.is_connected(peer))
    }

    /// Whether nothing waits to go to `peer`: no queued item in its outbox and
    /// every byte written to its socket.
    pub(crate) fn peer_drained(&self, peer: u32) -> bool {
        let p = &self.peers[peer as usize];
        p.outbox.is_empty() && self.tcp.as_ref().is_none_or(|t| t.is_flushed(peer))
    }

    /// Starts the goodbye with `peer` (MPI_Comm_disconnect).
    pub(crate) fn say_goodbye(&mut self, peer: u32) {
        if let Some(t) = self.tcp.as_mut() {
            t.say_goodbye(peer);
        }
    }

    /// Whether both goodbyes with `peer` happened.
    pub(crate) fn goodbye_done(&self, peer: u32) -> bool {
        self.tcp.as_ref().is_none_or(|t| t.goodbye_done(peer))
    }

    /// Closes the connection to `peer`; it is unreachable from now on.
    pub(crate) fn close_peer(&mut self, peer: u32) {
        if let Some(t) = self.tcp.as_mut() {
            t.close_peer(peer);
        }
        self.peers[peer as usize].path = Path::Unreachable;
    }

    /// Network I/O, then the packets that arrived over it.
    pub(super) fn progress_tcp(&mut self) -> bool {
        let State {
            tcp,
            reqs,
            matcher,
            peers,
            ..
        } = self;
        let Some(t) = tcp.as_mut() else {
            return false;
        };
        let mut land = |from: u32, first: &[u8], rest: usize, in_order: bool| {
            let (h, data) = Header::decode(first)?;
            match h.kind {
                Kind::Data => land_data(reqs, &h, data, rest),
                Kind::Eager if in_order => {
                    land_eager(reqs, matcher, peers.get_mut(from as usize)?, &h, data, rest)
                }
                _ => None,
            }
        };
        // The head holds an eager message's whole header (and a `Data` packet's).
        let mut did = t.poll_landing(HEADER_LEN, &mut land);
        if let Some((peer, why)) = t.failed_peer() {
            eprintln!(
                "oxmpi: rank {}: lost the connection to rank {peer}: {why}; ending the job",
                self.me
            );
            crate::runtime::end_job(1, "lost a TCP connection");
        }
        let readable: Vec<u32> = t.readable_peers().collect();
        for peer in readable {
            for _ in 0..64 {
                let Some((pkt, landed)) = self.tcp.as_mut().and_then(|t| t.pop_landed(peer)) else {
                    break;
                };
                match landed {
                    None => self.handle_packet(peer, &pkt),
                    Some(len) => self.handle_landed(peer, &pkt, len),
                }
                if let Some(t) = self.tcp.as_mut() {
                    t.recycle(peer, pkt);
                }
                did = true;
            }
        }
        did
    }

    /// Whether every byte queued for other hosts has been written.
    pub(crate) fn network_flushed(&self) -> bool {
        match &self.tcp {
            None => true,
            Some(t) => self
                .peers
                .iter()
                .enumerate()
                .all(|(r, p)| p.path != Path::Tcp || t.is_flushed(r as u32)),
        }
    }

    /// Says goodbye on every connection (MPI_Finalize, after the job's last
    /// barrier) so no peer mistakes our exit for a death.
    pub(crate) fn shutdown_network(&mut self) {
        if let Some(t) = self.tcp.as_mut() {
            t.shutdown(std::time::Duration::from_secs(10));
        }
    }

    /// File descriptors a blocked rank waits on besides its doorbell.
    /// Socket descriptors to wait on, and whether to wait for room to write too.
    pub(crate) fn tcp_fds(&self) -> Vec<(std::os::fd::RawFd, bool)> {
        self.tcp.as_ref().map(|t| t.poll_set()).unwrap_or_default()
    }
}

/// Where the rest of a large packet from another host goes (the lander of
/// [`TcpTransport::poll_landing`]): for a `Data` packet of a rendezvous stream whose
/// whole payload fits its receive's buffer, the payload bytes already read are
/// copied to their place and the bytes right after them are lent to the transport
/// ([`ActiveBuf::landing`]: the receive cannot complete until this packet is handled,
/// [`State::on_data_landed`] gives them back), so the rest is read from the socket
/// straight into the user's buffer. Anything else (another kind,
/// an unknown or mismatched receive, a payload reaching past the buffer: truncation)
/// answers `None` and takes the ordinary path, which clips.
fn land_data(reqs: &mut Slab, h: &Header, data: &[u8], rest: usize) -> Option<crate::buf::Landing> {
    let Some(ReqKind::Recv(r)) = reqs.get_mut(Request(h.rreq)).map(|e| &mut e.kind) else {
        return None;
    };
    if r.bad_sig != 0 || r.env.is_none() {
        return None;
    }
    let off = usize::try_from(h.len).ok()?;
    let end = off.checked_add(data.len())?.checked_add(rest)?;
    if off < r.received || end > r.buf.len() || end > r.total {
        return None;
    }
    r.buf.bytes_mut()[off..off + data.len()].copy_from_slice(data);
    r.buf.landing(off + data.len(), rest)
}

/// Where the rest of an eager message from another host goes (the lander's other
/// half): when the whole message is in this packet, a receive is posted for it, and
/// every earlier packet from `peer` has been handled or landed itself (`in_order`, so
/// matching it now is matching it in arrival order), the message is matched here, at
/// its header, instead of when the engine handles the packet: the receive leaves the
/// posted queue, the payload bytes already read are copied to it and the rest of its
/// buffer is lent to the transport, which reads the payload there (no staging copy
/// into a packet, no packet allocation). The receive completes when the packet pops
/// ([`State::on_eager_landed`], in `peer.landed_eager`'s order). A receive that would
/// truncate, unpacks, or whose type signature differs takes the ordinary path.
fn land_eager(
    reqs: &mut Slab,
    matcher: &mut Matcher<Request, u64>,
    peer: &mut Peer,
    h: &Header,
    data: &[u8],
    rest: usize,
) -> Option<crate::buf::Landing> {
    let total = usize::try_from(h.len).ok()?;
    if data.len().checked_add(rest)? != total || !matches!(peer.rx, Rx::Idle) {
        return None;
    }
    let env = Envelope {
        context: h.context,
        source: h.source,
        tag: h.tag,
    };
    // One walk of the posted queue: the oldest matching receive leaves it only if the
    // message can land in it.
    let (req, landing) = matcher.match_arrival_if(&env, |&req| {
        let Some(ReqKind::Recv(r)) = reqs.get_mut(req).map(|e| &mut e.kind) else {
            return None;
        };
        let same_sig = h.sig == 0 || r.sig == 0 || r.sig == h.sig;
        if r.bad_sig != 0 || !same_sig || r.unpack.is_some() || total > r.buf.len() {
            return None;
        }
        let landing = r.buf.landing(data.len(), rest)?;
        r.buf.bytes_mut()[..data.len()].copy_from_slice(data);
        r.env = Some(env);
        r.total = total;
        r.received = 0;
        Some(landing)
    })?;
    peer.landed_eager.push_back(req);
    Some(landing)
}

impl State {
    /// A packet from another host whose payload [`land_data`] placed in its receive's
    /// buffer: `head` is its header (and the payload bytes copied then), `len` its
    /// whole length.
    pub(super) fn handle_landed(&mut self, from: u32, head: &[u8], len: usize) {
        self.peers[from as usize].recvd += 1;
        match Header::decode(head) {
            Some((h, _)) if h.kind == Kind::Data => self.on_data_landed(&h, len - CONT_HEADER_LEN),
            Some((h, _)) if h.kind == Kind::Eager => self.on_eager_landed(from, &h),
            _ => eprintln!(
                "oxmpi: rank {}: dropped a malformed packet from rank {from}",
                self.me
            ),
        }
    }

    /// An eager message from another host that [`land_eager`] matched and whose
    /// payload the transport read into its receive's buffer: the receive completes
    /// (what `on_eager` does for a matched message).
    fn on_eager_landed(&mut self, from: u32, h: &Header) {
        let p = &mut self.peers[from as usize];
        let Some(req) = p.landed_eager.pop_front() else {
            eprintln!(
                "oxmpi: rank {}: a landed message from rank {from} without its receive",
                self.me
            );
            return;
        };
        p.answered = true;
        if let Some(via) = p.path.via() {
            self.stats.received(via, h.len as usize);
        }
        let total = h.len as usize;
        let env = Envelope {
            context: h.context,
            source: h.source,
            tag: h.tag,
        };
        if let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
            // The transport is done with the memory it was lent.
            r.buf.landed();
            r.received = total;
        }
        self.finish_recv(req, env, total);
        if h.flags & FLAG_SYNC != 0 {
            self.ctrl(from, Header::control(Kind::SyncAck, h.sreq));
        }
        self.return_credit(from, credit_cost(total));
    }

    /// The oldest packet waiting for [`Path::Queue`] peer `to`: the embedder
    /// carries it to that peer's `handle_packet` (the engine does no I/O itself).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn take_packet(&mut self, to: u32) -> Option<Vec<u8>> {
        self.queued.get_mut(to as usize)?.pop_front()
    }
}
