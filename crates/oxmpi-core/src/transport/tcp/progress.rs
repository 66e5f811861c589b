//! Packet traffic over established connections: pushing and popping packets,
//! the non-blocking progress step (`poll`), framing packets onto and off each
//! connection, the descriptors to wait on, and the clean shutdown.

use super::*;
use crate::buf::Landing;

impl TcpTransport {
    /// Queues one packet for `to`: `fill` writes it straight into the send queue (no
    /// intermediate buffer) and returns its length; false if the per-peer send queue is
    /// over its bound (back-pressure), or the peer failed or said goodbye (see
    /// [`TcpTransport::failed_peer`]). Starts connecting if not connected. Bytes are
    /// written by [`TcpTransport::poll`].
    ///
    /// Panics if `fill` returns more than [`MAX_PACKET`].
    pub fn try_push(&mut self, to: u32, fill: impl FnOnce(&mut [u8]) -> usize) -> bool {
        self.try_push_max(to, MAX_PACKET, fill)
    }

    /// [`TcpTransport::try_push`] of a packet known to take at most `max_len` bytes
    /// (clamped to [`MAX_PACKET`]): `fill` gets `max_len` bytes, so a peer that is only
    /// sent small packets keeps a small send queue. Panics if `fill` returns more.
    pub fn try_push_max(
        &mut self,
        to: u32,
        max_len: usize,
        fill: impl FnOnce(&mut [u8]) -> usize,
    ) -> bool {
        self.check_peer(to);
        let max_len = max_len.min(MAX_PACKET);
        let p = &mut self.peers[to as usize];
        if p.failed || p.bye_queued || p.queued() >= SEND_BOUND {
            return false;
        }
        if p.sent > 0 && p.sent >= p.end / 2 {
            // Written bytes are the larger part: move the rest to the front (at most
            // as many bytes as were written since the last move).
            p.sendbuf.copy_within(p.sent..p.end, 0);
            p.end -= p.sent;
            p.sent = 0;
        }
        let start = p.end + wire::FRAME_HEADER_LEN;
        if p.sendbuf.len() < start + max_len {
            // Grows to the high-water mark once; never shrinks while the peer lives.
            p.sendbuf.resize(start + max_len, 0);
        }
        let len = fill(&mut p.sendbuf[start..start + max_len]);
        assert!(
            len <= max_len,
            "tcp: packet of {len} bytes exceeds its bound ({max_len}, MAX_PACKET {MAX_PACKET})"
        );
        p.sendbuf[p.end..start]
            .copy_from_slice(&wire::encode_frame_header(wire::KIND_DATA, len as u32));
        p.end = start + len;
        self.activate(to);
        if self.peers[to as usize].conn.is_none() {
            self.maybe_connect(to, Instant::now());
        }
        true
    }

    /// Whether an eager packet with `len` bytes of payload to `to` is better copied into
    /// the send queue ([`TcpTransport::try_push_max`]) than written at once from the
    /// caller's memory ([`TcpTransport::try_push_gather`]): when it is small, or when a
    /// packet went straight to the socket just before and no poll has written since (a
    /// window: that poll writes the queue in one call instead of one call per message),
    /// while the queue stays under [`COALESCE_QUEUE`]. See [`Peer::direct_at`].
    pub fn copies_eager(&self, to: u32, len: usize) -> bool {
        let p = &self.peers[to as usize];
        len < GATHER_MIN
            || (len <= self.coalesce_max
                && p.queued() + len <= COALESCE_QUEUE
                && p.direct_at.is_some_and(|t| t.elapsed() < self.coalesce_for))
    }

    /// Most packets [`TcpTransport::try_push_gather`] takes at once.
    pub const GATHER_MAX: usize = 4;

    /// Sends the packets `head_i ++ body_i` to `to` (at most [`Self::GATHER_MAX`], each
    /// at most [`MAX_PACKET`] bytes) in one gathered `sendmsg` straight from the caller's
    /// memory, and returns how many the socket took: the first `n` packets, the last of
    /// which may have gone only in part (its unsent tail is copied into the send queue,
    /// at most one packet's worth). Packets after those are not taken: the caller offers
    /// them again later, so a stream into a full socket is never copied into our queue
    /// (osu_bw's windows of 1 MiB messages copied nearly every byte there). Bytes
    /// already queued go first in the same `sendmsg` (packets keep their order); before
    /// the connection is established, all are copied into the queue (as
    /// [`TcpTransport::try_push`] does). 0 also on back-pressure or a failed peer. Either
    /// way the caller's slices are free again.
    pub fn try_push_gather(&mut self, to: u32, packets: &[(&[u8], &[u8])]) -> usize {
        self.check_peer(to);
        assert!(packets.len() <= Self::GATHER_MAX);
        let p = &mut self.peers[to as usize];
        if p.failed || p.bye_queued || p.queued() >= SEND_BOUND {
            return 0;
        }
        let mut frames = [[0u8; wire::FRAME_HEADER_LEN]; Self::GATHER_MAX];
        let mut parts: [&[u8]; 3 * Self::GATHER_MAX] = [&[]; 3 * Self::GATHER_MAX];
        for (i, (h, b)) in packets.iter().enumerate() {
            let len = h.len() + b.len();
            assert!(
                len <= MAX_PACKET,
                "tcp: packet of {len} bytes exceeds MAX_PACKET"
            );
            frames[i] = wire::encode_frame_header(wire::KIND_DATA, len as u32);
        }
        for (i, (h, b)) in packets.iter().enumerate() {
            parts[3 * i] = &frames[i];
            parts[3 * i + 1] = h;
            parts[3 * i + 2] = b;
        }
        let parts = &parts[..3 * packets.len()];
        let direct = p
            .conn
            .as_ref()
            .is_some_and(|c| c.state == State::Established && c.out_sent >= c.out.len() && !c.eof);
        let mut taken = packets.len();
        if direct {
            // The queued bytes (control packets, the tail of a packet sent in part) go
            // first, in the same system call.
            let c = p.conn.as_ref().unwrap();
            let mut all: [&[u8]; 1 + 3 * Self::GATHER_MAX] = [&[]; 1 + 3 * Self::GATHER_MAX];
            all[0] = &p.sendbuf[p.sent..p.end];
            all[1..1 + parts.len()].copy_from_slice(parts);
            let mut written = match send_gather(&c.stream, &all[..1 + parts.len()]) {
                Ok(0) => {
                    p.gather_blocked = true;
                    p.wfull = true;
                    return 0;
                }
                Ok(n) => n,
                // Queued, so that the next poll's write meets the error and fails the peer.
                Err(_) => usize::MAX,
            };
            if written != usize::MAX {
                let q = written.min(p.queued());
                p.sent += q;
                written -= q;
                if p.sent == p.end {
                    p.sent = 0;
                    p.end = 0;
                }
                // Whole packets the socket took, then the one it took a part of.
                taken = 0;
                let mut rest: &[&[u8]] = &[];
                for pk in parts.chunks(3) {
                    if written == 0 {
                        break;
                    }
                    let len: usize = pk.iter().map(|x| x.len()).sum();
                    taken += 1;
                    if written < len {
                        rest = pk;
                        break;
                    }
                    written -= len;
                }
                for part in rest {
                    let skip = written.min(part.len());
                    written -= skip;
                    if skip < part.len() {
                        p.append(&part[skip..]);
                    }
                }
                p.direct_at = Some(Instant::now());
                p.gather_blocked = taken < packets.len();
                // The socket took less than it was offered: it is full now.
                p.wfull = p.gather_blocked || p.queued() > 0;
                self.activate(to);
                return taken;
            }
        }
        for part in parts {
            p.append(part);
        }
        taken = taken.min(packets.len());
        self.activate(to);
        if self.peers[to as usize].conn.is_none() {
            self.maybe_connect(to, Instant::now());
        }
        taken
    }

    /// Hands the next complete packet received from `from` to `f`; false if none.
    /// Takes the next packet from `from`, if any, as an owned buffer (no copy; the
    /// engine handles it while it holds `&mut` to everything else).
    pub fn pop_packet(&mut self, from: u32) -> Option<Vec<u8>> {
        self.pop_landed(from).map(|(pkt, _)| pkt)
    }

    /// [`TcpTransport::pop_packet`], with `Some(len)` for a packet of `len` bytes whose
    /// payload after its first `pkt.len()` bytes (all `pkt` holds) landed in the memory
    /// the lander of [`TcpTransport::poll_landing`] named.
    pub fn pop_landed(&mut self, from: u32) -> Option<(Vec<u8>, Option<usize>)> {
        self.check_peer(from);
        let p = &mut self.peers[from as usize];
        let (pkt, landed) = p.recvq.pop_front()?;
        p.recv_bytes -= pkt.len();
        if landed.is_none() {
            p.unlanded = p.unlanded.saturating_sub(1);
        }
        Some((pkt, landed))
    }

    /// Hands back a packet [`TcpTransport::pop_packet`] returned, once handled: a large
    /// one's buffer is reused for the next large packet from `from` (no allocation, no
    /// zeroing, no fresh pages for a stream of large messages).
    pub fn recycle(&mut self, from: u32, pkt: Vec<u8>) {
        if let Some(c) = self
            .peers
            .get_mut(from as usize)
            .and_then(|p| p.conn.as_mut())
        {
            c.dec.recycle(pkt);
        }
    }

    pub fn try_pop(&mut self, from: u32, f: impl FnOnce(&[u8])) -> bool {
        self.check_peer(from);
        let p = &mut self.peers[from as usize];
        let Some((pkt, landed)) = p.recvq.pop_front() else {
            return false;
        };
        p.recv_bytes -= pkt.len();
        if landed.is_none() {
            p.unlanded = p.unlanded.saturating_sub(1);
        }
        f(&pkt);
        true
    }

    /// Ranks with received packets waiting (so the engine pops only those).
    pub fn readable_peers(&self) -> impl Iterator<Item = u32> + '_ {
        self.active
            .iter()
            .copied()
            .filter(|&r| !self.peers[r as usize].recvq.is_empty())
    }

    /// Raw fds to wait on (for a blocking wait with poll(2)/epoll): listener + connections.
    /// The descriptors to wait on, each with whether we wait for room to write too
    /// (a connection with bytes queued: a full socket buffer drains without telling
    /// a sleeper that only waits for input).
    pub fn poll_set(&self) -> Vec<(RawFd, bool)> {
        let mut v = vec![(self.listener.as_raw_fd(), false)];
        v.extend(
            self.pending
                .iter()
                .map(|c| (c.stream.as_raw_fd(), c.out_sent < c.out.len())),
        );
        for &r in &self.active {
            let p = &self.peers[r as usize];
            v.extend(p.attempt.iter().map(|c| (c.stream.as_raw_fd(), true)));
            v.extend(p.conn.iter().map(|c| {
                (
                    c.stream.as_raw_fd(),
                    p.queued() > 0 || c.out_sent < c.out.len() || p.gather_blocked,
                )
            }));
        }
        v
    }

    pub fn fds(&self) -> Vec<RawFd> {
        let mut v = vec![self.listener.as_raw_fd()];
        v.extend(self.pending.iter().map(|c| c.stream.as_raw_fd()));
        for &r in &self.active {
            let p = &self.peers[r as usize];
            v.extend(
                p.attempt
                    .iter()
                    .chain(p.conn.iter())
                    .map(|c| c.stream.as_raw_fd()),
            );
        }
        v
    }

    /// Non-blocking I/O step: accept, advance handshakes, write queued bytes, read
    /// available bytes into per-peer packet queues. Returns whether anything happened.
    /// Never blocks.
    pub fn poll(&mut self) -> bool {
        self.poll_landing(0, &mut |_, _, _, _| None)
    }

    /// [`TcpTransport::poll`] that offers every incoming packet of at least
    /// `head + LAND_MIN` bytes, once its first `head` bytes are in, to
    /// `land(from, first_bytes, rest, in_order)`, which may lend `rest` bytes of a
    /// receive's buffer ([`Landing`], which keeps that receive from completing) where
    /// the rest of the packet is read straight (no copy through our buffers); such a
    /// packet pops as landed ([`TcpTransport::pop_landed`]), and the landing is dropped
    /// then. `in_order`: every packet from `from` before this one that waits to be
    /// popped landed too (so a message matched at its header is matched in the order
    /// the engine would match it).
    pub fn poll_landing(
        &mut self,
        head: usize,
        land: &mut dyn FnMut(u32, &[u8], usize, bool) -> Option<Landing>,
    ) -> bool {
        let now = Instant::now();
        let mut did = false;
        // This poll writes every queue (the flusher has nothing to do).
        flush::disarm();
        // Pending connections first (those that closed leave room), then new ones,
        // whose hello goes out at once.
        self.advance_pending(now, &mut did);
        if now >= self.next_accept {
            let mut accepted = false;
            self.accept_new(&mut accepted);
            // More may be queued behind a burst: look again at once.
            self.next_accept = if accepted {
                now
            } else if self.expects_connections() {
                now + ACCEPT_INTERVAL
            } else {
                now + ACCEPT_INTERVAL_IDLE
            };
            did |= accepted;
        }
        self.advance_pending(now, &mut did);
        let mut i = 0;
        while i < self.active.len() {
            let r = self.active[i];
            self.advance_attempt(r, now, &mut did);
            self.service_conn(r, head, land, &mut did);
            self.maybe_connect(r, now);
            i += 1;
        }
        did
    }

    /// Writes `to`'s queued bytes to its established connection now, as far as the
    /// socket takes them; no reads, no accepts. The engine calls it after a send
    /// queued a packet: a queued packet otherwise waits for the next poll, which
    /// comes only with the next MPI call, so an `MPI_Send` or an `MPI_Isend` +
    /// `MPI_Wait` followed by computing would leave its message unsent for as long
    /// as the computing lasts (and the receiver waiting). Inside a coalescing
    /// window ([`TcpTransport::copies_eager`]; this write opens one too) the bytes
    /// stay for the poll that writes them together, or for the flusher
    /// ([`flush`]) if that poll does not come within about 50 us.
    pub fn write_out(&mut self, to: u32) {
        let window = self.coalesce_for;
        let coalescing = self.coalesce_max > 0;
        let p = &mut self.peers[to as usize];
        if p.sent >= p.end {
            return;
        }
        if coalescing && p.direct_at.is_some_and(|t| t.elapsed() < window) && flush::arm() {
            return;
        }
        let mut did = false;
        if let Err(e) = p.write_queued(&mut did) {
            self.fail_peer(to, format!("connection to rank {to}: {e}"));
            return;
        }
        if coalescing && did {
            p.direct_at = Some(Instant::now());
        }
    }

    /// Writes every peer's held-back bytes (the flusher's call, about 50 us after
    /// [`TcpTransport::write_out`] held some and no poll wrote them): one try, even
    /// on a socket a write found full before, and the next packet to each peer is
    /// written at once again.
    pub fn flush_held(&mut self) {
        for i in 0..self.active.len() {
            let r = self.active[i];
            let p = &mut self.peers[r as usize];
            p.direct_at = None;
            if p.sent >= p.end {
                continue;
            }
            p.wfull = false;
            let mut did = false;
            if let Err(e) = p.write_queued(&mut did) {
                self.fail_peer(r, format!("connection to rank {r}: {e}"));
            }
        }
    }

    /// Writes queued bytes to and reads frames from `r`'s established connection.
    fn service_conn(
        &mut self,
        r: u32,
        head: usize,
        land: &mut dyn FnMut(u32, &[u8], usize, bool) -> Option<Landing>,
        did: &mut bool,
    ) {
        let Some(res) = self.service_conn_inner(r, head, land, did) else {
            return;
        };
        if let Err(reason) = res {
            self.fail_peer(r, format!("connection to rank {r}: {reason}"));
        }
    }

    fn service_conn_inner(
        &mut self,
        r: u32,
        head: usize,
        land: &mut dyn FnMut(u32, &[u8], usize, bool) -> Option<Landing>,
        did: &mut bool,
    ) -> Option<std::result::Result<(), String>> {
        let p = &mut self.peers[r as usize];
        p.conn.as_ref()?;
        let scratch = &mut self.scratch;
        Some((|| {
            // Write: handshake leftovers (the server's verdict) first, then frames;
            // a socket found full in the last step is not written again in this one.
            let was_full = p.wfull;
            p.direct_at = None;
            p.write_queued(did).map_err(|e| e.to_string())?;
            if was_full {
                p.wfull = false;
            }
            let Some(c) = p.conn.as_mut() else {
                return Ok(());
            };
            // Read, unless the packets already received are over the bound.
            let mut reads = 0;
            // Packets waiting to be popped that did not land (see `poll_landing`).
            let unlanded = std::cell::Cell::new(p.unlanded);
            while !c.eof && p.recv_bytes < RECV_BOUND && reads < READS_PER_POLL {
                reads += 1;
                let (recvq, recv_bytes) = (&mut p.recvq, &mut p.recv_bytes);
                let mut push = |f: Frame| match f {
                    Frame::Packet(v) => {
                        *recv_bytes += v.len();
                        recvq.push_back((v, None));
                        unlanded.set(unlanded.get() + 1);
                    }
                    Frame::Landed { buf, len } => {
                        *recv_bytes += buf.len();
                        recvq.push_back((buf, Some(len)));
                    }
                    Frame::Bye => {}
                };
                let mut land_here =
                    |got: &[u8], rest: usize| land(r, got, rest, unlanded.get() == 0);
                c.dec.try_land(head, LAND_MIN, &mut land_here);
                let direct = c.dec.direct_buf_head(DIRECT_MIN, head).is_some();
                // With landing on, a direct read also takes the next frame's header and
                // engine header (into `scratch`), so the next large payload can land
                // without a read of its header alone.
                let tail = if head > 0 {
                    (wire::FRAME_HEADER_LEN + head).min(scratch.len())
                } else {
                    0
                };
                let mut dlen = 0;
                let (res, asked) = if direct {
                    let buf = c.dec.direct_buf_head(DIRECT_MIN, head).unwrap();
                    dlen = buf.len();
                    if tail > 0 {
                        (read_two(&c.stream, buf, &mut scratch[..tail]), dlen + tail)
                    } else {
                        ((&c.stream).read(buf), dlen)
                    }
                } else {
                    let lim = c.dec.read_hint(head, scratch.len(), reads == 1);
                    ((&c.stream).read(&mut scratch[..lim]), lim)
                };
                match res {
                    Ok(0) => {
                        if !c.dec.at_boundary() {
                            return Err(
                                "connection closed in the middle of a frame (truncated frame)"
                                    .into(),
                            );
                        }
                        if !c.dec.saw_bye() {
                            return Err("connection closed by the peer".into());
                        }
                        c.eof = true;
                    }
                    Ok(n) => {
                        *did = true;
                        if direct {
                            c.dec.advance_direct(n.min(dlen), &mut push);
                            if n > dlen {
                                c.dec.feed_landing(
                                    &scratch[..n - dlen],
                                    head,
                                    LAND_MIN,
                                    &mut land_here,
                                    &mut push,
                                )?;
                            }
                        } else {
                            c.dec.feed_landing(
                                &scratch[..n],
                                head,
                                LAND_MIN,
                                &mut land_here,
                                &mut push,
                            )?;
                        }
                        if n < asked {
                            // A short read emptied the socket: another read now would
                            // only return EWOULDBLOCK (one wasted system call per
                            // message); the next poll reads what comes later.
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e.to_string()),
                }
            }
            p.unlanded = unlanded.get();
            Ok(())
        })())
    }

    /// Ends the transport cleanly: flushes queued packets, sends a goodbye to every
    /// connected peer and waits for theirs (or `timeout`), then closes. Afterwards
    /// `try_push` returns false. Returns whether every connection closed cleanly.
    pub fn shutdown(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        for &r in &self.active {
            let p = &mut self.peers[r as usize];
            if p.conn.is_some() && !p.bye_queued {
                p.bye_queued = true;
                p.queue_frame_bytes(&wire::encode_frame_header(wire::KIND_BYE, 0));
            }
        }
        loop {
            // Each round tries every queued write (no step of a spinning progress loop
            // follows to try again; see `Peer::wfull`).
            for &r in &self.active {
                self.peers[r as usize].wfull = false;
            }
            self.poll();
            let done = self.active.iter().all(|&r| {
                let p = &self.peers[r as usize];
                match &p.conn {
                    None => true,
                    Some(c) => c.dec.saw_bye() && p.queued() == 0,
                }
            });
            if done {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            wait_fds(&self.fds(), (deadline - now).min(Duration::from_millis(10)));
        }
        let clean = self.active.iter().all(|&r| {
            let p = &self.peers[r as usize];
            p.conn
                .as_ref()
                .map_or(!p.failed, |c| c.dec.saw_bye() && p.queued() == 0)
        });
        for &r in &self.active {
            let p = &mut self.peers[r as usize];
            p.conn = None;
            p.attempt = None;
            p.bye_queued = true;
        }
        self.pending.clear();
        clean
    }
}

/// Blocks until one of `fds` is readable (or errors) or `timeout` passes.
pub fn wait_fds(fds: &[RawFd], timeout: Duration) {
    let mut v: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `v` is a valid array of pollfd of the given length.
    unsafe {
        libc::poll(
            v.as_mut_ptr(),
            v.len() as libc::nfds_t,
            timeout.as_millis().min(i32::MAX as u128) as i32,
        )
    };
}

impl Peer {
    /// Writes the handshake's leftovers, then, unless the socket was found full
    /// (`wfull`), as much of the send queue as the socket takes, marking it full if
    /// it took less; nothing without a connection. The poll's write
    /// ([`TcpTransport::poll`]) and the send's ([`TcpTransport::write_out`]).
    fn write_queued(&mut self, did: &mut bool) -> io::Result<()> {
        let Some(c) = self.conn.as_mut() else {
            return Ok(());
        };
        if c.flush_handshake(did)? && self.sent < self.end && !self.wfull {
            if !write_some(&c.stream, &self.sendbuf[..self.end], &mut self.sent, did)? {
                self.wfull = true;
            }
            if self.sent == self.end {
                self.sent = 0;
                self.end = 0;
            }
        }
        Ok(())
    }
}
