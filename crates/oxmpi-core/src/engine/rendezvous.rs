//! Rendezvous, receiver side: once an `Rts` matches, a local peer's message up to
//! `shm_stream_max` is streamed through the ring (`Cts`, below); otherwise the
//! receiver copies the data straight from the sender's memory (`process_vm_readv`)
//! and answers `Fin`;
//! from `SHARED_COPY_MIN` the sender helps (`Help`, chunks claimed from the
//! ring's copy line); where cross-memory reads are refused it answers `Cts` and
//! the sender streams `Data` packets.
//!
//! Invariants: a send waiting for rendezvous completes only on `Fin` (or a
//! stream's last packet), so its buffer stays valid while anyone copies from
//! it; at most `COPY_SLOTS` shared copies per peer are in flight.

use super::*;

/// A rendezvous receive whose data the sender and we copy together; it completes
/// when every chunk is in (see [`ShmSegment::copy_begin`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct SharedCopy {
    req: Request,
    from: u32,
    local: usize,
    slot: usize,
    sreq: u64,
    env: Envelope,
    total: usize,
    chunks: u32,
}

/// Messages at least this large are copied by both sides at once (two cores, two
/// copies in flight) when sender and receiver share a host. 64 KiB, the smallest
/// message that splits into two chunks of at least 32 KiB: bw18 (bench/PROFILE.md)
/// measured `osu_bw` 64 KiB 17.4 GB/s copied by the receiver alone, 22.5 shared, and
/// `osu_latency` 64 KiB 3.03 vs 2.69 us. 32 KiB since med27, with chunks of at least
/// 16 KiB ([`shared_copy_chunk`]): `osu_bw` 32 KiB 17.8-18.8 vs 15.5-16.4 GB/s copied
/// by the receiver alone, latency even. `OXMPI_SHARED_COPY_MIN` overrides it.
pub(super) const SHARED_COPY_MIN: usize = 32 << 10;
/// Bytes per chunk of a shared copy: half the message (so both copiers
/// get work even when the message is just above the threshold), within bounds
/// that keep the per-chunk system call cheap relative to its copy.
/// `OXMPI_SHARED_COPY_CHUNK` (bytes, at least 4096) sets the largest: 512 KiB by
/// default, so a 1 MiB message is one system call per side (bw18 in bench/PROFILE.md:
/// `osu_bw` 1 MiB 27.1 GB/s with 128 KiB chunks, 30.2-30.4 with 512 KiB; `osu_latency`
/// 1 MiB 33.3 vs 30.0 us).
pub(super) fn shared_copy_chunk(n: usize) -> usize {
    let min = shared_copy_chunk_min();
    (n / 2).clamp(min, shared_copy_chunk_max().max(min)) & !4095
}

/// Smallest chunk of a shared copy (16 KiB, so a 32 KiB message is copied by both
/// sides; `OXMPI_SHARED_COPY_CHUNK_MIN`, at least 4096).
fn shared_copy_chunk_min() -> usize {
    static MIN: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MIN.get_or_init(|| env_bytes("OXMPI_SHARED_COPY_CHUNK_MIN", 4096, 16 << 10))
}

/// [`SHARED_COPY_MIN`], or `OXMPI_SHARED_COPY_MIN` (bytes).
fn shared_copy_min() -> usize {
    static MIN: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MIN.get_or_init(|| env_bytes("OXMPI_SHARED_COPY_MIN", 0, SHARED_COPY_MIN))
}

/// Largest chunk of a shared copy (default 512 KiB, `OXMPI_SHARED_COPY_CHUNK`, at
/// least 4096).
fn shared_copy_chunk_max() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| env_bytes("OXMPI_SHARED_COPY_CHUNK", 4096, 512 << 10))
}

impl State {
    pub(super) fn start_rendezvous(
        &mut self,
        req: Request,
        env: Envelope,
        from: u32,
        sreq: u64,
        addr: u64,
        total: usize,
    ) {
        let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) else {
            return;
        };
        let n = total.min(r.buf.len());
        if r.bad_sig != 0 {
            // Mismatched signature: take nothing, but let the sender finish.
            self.finish_recv(req, env, total);
            if from == self.me {
                self.mark_sent(Request(sreq), true);
            } else {
                self.ctrl(from, Header::control(Kind::Fin, sreq));
            }
            return;
        }
        if from == self.me {
            // Our own send `sreq` (at `addr`) waits for this match: the data is in
            // its entry's buffer.
            self.deliver_from_send(req, Request(sreq), env, total);
            self.mark_sent(Request(sreq), true);
            return;
        }
        // Up to `shm_stream_max` a local peer streams the data through the ring
        // (faster than the cross-process copy while both ranks have a CPU).
        let stream = total <= self.shm_stream_max
            && matches!(self.peers[from as usize].path, Path::Shm { .. });
        if !stream && self.start_shared_copy(req, env, from, sreq, addr, total, n) {
            return;
        }
        let peer = &self.peers[from as usize];
        if (peer.cma_ok && !stream) || total == 0 {
            let pid = peer.pid;
            // Reads a send could have avoided (within the eager limit: a pulled
            // answer, mostly) feed the estimate of what pulling costs.
            let timed = n <= self.eager_limit;
            let read = match self.reqs.get_mut(req).map(|e| &mut e.kind) {
                Some(ReqKind::Recv(r)) => {
                    let dst = &mut r.buf.bytes_mut()[..n];
                    if timed {
                        self.pull_cost
                            .time_read(n, || cma::read_remote(pid, addr as usize, dst))
                    } else {
                        cma::read_remote(pid, addr as usize, dst)
                    }
                }
                _ => return,
            };
            match read {
                Ok(()) => {
                    self.ctrl(from, self.fin_with_floor(sreq));
                    self.finish_recv(req, env, total);
                    return;
                }
                Err(_) => self.peers[from as usize].cma_ok = false,
            }
        }
        // Two-copy fallback: ask the sender to stream the data.
        if let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) {
            r.total = total;
            r.received = 0;
            r.env = Some(env);
        }
        let h = Header {
            rreq: req.0,
            ..Header::control(Kind::Cts, sreq)
        };
        self.ctrl(from, h);
    }

    /// Receives a large message from a local peer by copying it together with the
    /// sender: we ask it for help, then both of us claim chunks from the ring's copy
    /// line until none are left, so two cores copy at once. If the sender is busy
    /// elsewhere we simply copy every chunk ourselves. Returns `false` (nothing done)
    /// when this message does not qualify.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start_shared_copy(
        &mut self,
        req: Request,
        env: Envelope,
        from: u32,
        sreq: u64,
        addr: u64,
        total: usize,
        n: usize,
    ) -> bool {
        let Some(shm) = self.shm else { return false };
        let peer = &mut self.peers[from as usize];
        let Path::Shm { local } = peer.path else {
            return false;
        };
        let slot = peer.copy_busy.trailing_ones() as usize;
        if !self.shared_copy || !peer.cma_ok || slot >= COPY_SLOTS || n < shared_copy_min() {
            return false;
        }
        // Half of an exchange: our own large send to this peer is still in
        // flight, so the peer is copying it (or about to) and both cores are
        // busy already; a helper would only add the chunk handshake and a wait
        // for its chunks (collC28/29 in bench/PROFILE.md: 2-rank alltoall
        // 32 KiB 4.4 us with help, 3.5 without).
        if matches!(self.reqs.get(peer.last_rts).map(|e| &e.kind),
            Some(ReqKind::Send(s)) if s.peer == from && !s.local_done)
        {
            return false;
        }
        let Some(ReqKind::Recv(r)) = self.reqs.get(req).map(|e| &e.kind) else {
            return false;
        };
        let dst_addr = r.buf.addr();
        let chunk = shared_copy_chunk(n);
        let chunks = n.div_ceil(chunk) as u32;
        peer.copy_id = peer.copy_id.wrapping_add(1).max(1);
        peer.copy_busy |= 1 << slot;
        let (id, pid) = (peer.copy_id, peer.pid);
        shm.copy_begin(local, slot, id);
        let help = Header {
            kind: Kind::Help,
            flags: 0,
            context: chunks,
            source: slot as i32,
            tag: id as i32,
            len: n as u64,
            sreq,
            rreq: dst_addr as u64,
            sig: chunk as u64,
        };
        self.ctrl(from, help);
        let me = shm.my_local();
        let Some(ReqKind::Recv(r)) = self.reqs.get_mut(req).map(|e| &mut e.kind) else {
            unreachable!("the receive was looked up above")
        };
        let buf = &mut r.buf;
        while let Some(c) = shm.copy_claim(local, me, slot, id, chunks) {
            let off = c as usize * chunk;
            let len = chunk.min(n - off);
            // The sender writes only the chunks it claimed, never this one: we
            // borrow just this one.
            let dst = buf
                .chunk_mut(off, len)
                .expect("a claimed chunk lies inside the receive");
            let ok = cma::read_remote(pid, addr as usize + off, dst).is_ok();
            shm.copy_done(local, me, slot, ok);
        }
        self.shared_copies.push(SharedCopy {
            req,
            from,
            local,
            slot,
            sreq,
            env,
            total,
            chunks,
        });
        self.finish_shared_copies();
        true
    }

    /// Completes shared copies whose every chunk is in; returns whether any did.
    pub(super) fn finish_shared_copies(&mut self) -> bool {
        let Some(shm) = self.shm else { return false };
        let mut any = false;
        let mut i = 0;
        while i < self.shared_copies.len() {
            let c = self.shared_copies[i];
            let (done, failed) = shm.copy_progress(c.local, c.slot);
            if done < c.chunks {
                i += 1;
                continue;
            }
            self.shared_copies.swap_remove(i);
            any = true;
            let peer = &mut self.peers[c.from as usize];
            peer.copy_busy &= !(1 << c.slot);
            if failed {
                // A chunk could not be copied: have the sender stream the message.
                peer.cma_ok = false;
                if let Some(ReqKind::Recv(r)) = self.reqs.get_mut(c.req).map(|e| &mut e.kind) {
                    r.total = c.total;
                    r.received = 0;
                    r.env = Some(c.env);
                }
                let h = Header {
                    rreq: c.req.0,
                    ..Header::control(Kind::Cts, c.sreq)
                };
                self.ctrl(c.from, h);
            } else {
                self.ctrl(c.from, Header::control(Kind::Fin, c.sreq));
                self.finish_recv(c.req, c.env, c.total);
            }
        }
        any
    }

    /// Sender side of a shared copy: writes the chunks we can claim of our send
    /// `h.sreq` into the receiver's buffer.
    pub(super) fn help_copy(&mut self, from: u32, h: &Header) {
        let Some(shm) = self.shm.filter(|_| self.shared_copy) else {
            return;
        };
        let Path::Shm { local } = self.peers[from as usize].path else {
            return;
        };
        // Only data of a send to this very peer may go into its memory. The send
        // completes on the receiver's Fin, which comes only after every chunk is
        // done, so its entry holds the data while we copy.
        let data = match self.reqs.get(Request(h.sreq)).map(|e| &e.kind) {
            Some(ReqKind::Send(s)) if s.peer == from => &s.data,
            _ => return,
        };
        let (slot, id, chunks, chunk) =
            (h.source as usize, h.tag as u32, h.context, h.sig as usize);
        let n = (h.len as usize).min(data.len());
        let pid = self.peers[from as usize].pid;
        let me = shm.my_local();
        let src = data.bytes();
        let mut helped = false;
        while let Some(c) = shm.copy_claim(me, local, slot, id, chunks) {
            helped = true;
            let off = (c as usize).saturating_mul(chunk);
            let copied = off >= n
                || cma::write_remote(
                    pid,
                    h.rreq as usize + off,
                    &src[off..off + chunk.min(n - off)],
                )
                .is_ok();
            shm.copy_done(me, local, slot, copied);
        }
        // The receiver may have gone to sleep waiting for the chunks we
        // claimed: nothing else tells it they are done (its Dekker half is
        // the doorbell's announce, then `copy_progress`). Without this ring it
        // slept out its 20 ms timeout: 4 ranks on 2 cores, binomial bcast of
        // 4 MiB, 32 such stalls in 1.2 s of run.
        if helped {
            shm.doorbell(local).ring();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank_alone(eager_limit: usize) -> State {
        let config = EngineConfig {
            eager_limit,
            check_sigs: false,
            cma_allowed: false,
            shared_copy: false,
            credit_per_peer: 1 << 20,
            queue_cap: 4,
            queue_packet: 1024,
            shm_stream_max: 0,
            pull_min: usize::MAX,
            adaptive_pull: false,
        };
        State::with_config(0, vec![(Path::SelfLoop, 0)], None, None, config)
    }

    #[test]
    fn sends_to_self_copy_from_the_send_entrys_buffer_in_either_order() {
        let env = Envelope {
            context: 4,
            source: 0,
            tag: 7,
        };
        let pat = Pattern {
            context: 4,
            source: 0,
            tag: 7,
        };
        // 16 bytes: eager (kept whole); 1000: rendezvous to ourselves (left in the
        // send's buffer until the receive copies it); a receive 3 bytes short truncates.
        for (len, room) in [(16usize, 16usize), (1000, 1000), (1000, 997)] {
            let src: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
            for recv_first in [false, true] {
                let mut st = rank_alone(64);
                let mut dst = vec![0xeeu8; room + 5];
                let (s, r) = if recv_first {
                    let r = st.post_recv(RawBuf::from_mut_slice(&mut dst[..room]), pat);
                    let s = st.start_send(0, env, RawBuf::from_slice(&src), SendMode::Standard);
                    (s.unwrap(), r)
                } else {
                    let s = st.start_send(0, env, RawBuf::from_slice(&src), SendMode::Standard);
                    let r = st.post_recv(RawBuf::from_mut_slice(&mut dst[..room]), pat);
                    (s.unwrap(), r)
                };
                let what = format!("{len} bytes into {room}, receive first: {recv_first}");
                let (sst, serr) = st.take_outcome(s).expect("send finished");
                assert!(
                    serr.is_none() && sst.count_bytes == len,
                    "{what}: send {sst:?}"
                );
                let (rst, rerr) = st.take_outcome(r).expect("receive finished");
                let n = len.min(room);
                assert_eq!(&dst[..n], &src[..n], "{what}");
                assert!(dst[n..].iter().all(|&b| b == 0xee), "{what}: wrote past");
                assert_eq!(rst.count_bytes, n, "{what}");
                assert_eq!(
                    rerr.map(|e| e.class),
                    (len > room).then_some(ErrorClass::Truncate),
                    "{what}"
                );
                assert_eq!(st.live_requests(), 0, "{what}");
            }
        }
    }
}
