//! The packets ranks exchange through a transport, encoded in plain bytes.
//!
//! Encoding is explicit little-endian so that a packet read from shared memory
//! (written by another process, which might be buggy or hostile) is decoded with
//! bounds checks only, never by casting raw memory to a struct.

/// Packet kinds of the point-to-point protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A whole small message, or its first fragment; `len` is the full size.
    Eager = 1,
    /// A following fragment of the eager message just before it from this peer.
    EagerCont = 2,
    /// Rendezvous request-to-send: the data stays in the sender's memory at `addr`.
    Rts = 3,
    /// Receiver to sender: cannot read your memory, stream the data (`rreq` names me).
    Cts = 4,
    /// A fragment of streamed rendezvous data for receive request `rreq`.
    Data = 5,
    /// Receiver to sender: rendezvous data has been read, `sreq` is complete.
    Fin = 6,
    /// Receiver to sender: a synchronous-mode message has been matched.
    SyncAck = 7,
    /// Receiver to sender: `len` eager bytes have left the receiver's queues.
    Credit = 8,
    /// Sender to receiver: please drop unmatched message `sreq` (MPI_Cancel).
    CancelReq = 9,
    /// Receiver to sender: result of a cancel; `flags & FLAG_CANCELLED` tells.
    CancelAck = 10,
    /// Receiver to sender (same host): help copy rendezvous message `sreq` into my
    /// buffer at `rreq`: claim chunks of shared copy `tag` (`context` chunks of `sig`
    /// bytes, `len` bytes in all) and write them with cross-memory writes.
    Help = 11,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Eager,
            2 => Kind::EagerCont,
            3 => Kind::Rts,
            4 => Kind::Cts,
            5 => Kind::Data,
            6 => Kind::Fin,
            7 => Kind::SyncAck,
            8 => Kind::Credit,
            9 => Kind::CancelReq,
            10 => Kind::CancelAck,
            11 => Kind::Help,
            _ => return None,
        })
    }
}

/// The sender waits for a [`Kind::SyncAck`] (synchronous mode).
pub const FLAG_SYNC: u8 = 1;
/// In a [`Kind::CancelAck`]: the message was removed.
pub const FLAG_CANCELLED: u8 = 2;
/// In a [`Kind::Rts`] of an eager-sized message: the receiver reads the data at
/// once, matched or not (an unexpected one is kept like an eager message), so the
/// send never waits for its receive to be posted; the sender paid eager credit.
pub const FLAG_PULL: u8 = 4;

/// Bytes of a full header. Continuation packets use only [`CONT_HEADER_LEN`].
pub const HEADER_LEN: usize = 48;
/// Continuation packets (`EagerCont`, `Data`) carry the kind and `rreq` only, and a
/// `Data` packet its payload's offset in the message (bytes 1..8, 56 bits, in `len`), so
/// that a transport can land a payload in the receive buffer before the engine handles
/// the packets queued ahead of it.
pub const CONT_HEADER_LEN: usize = 16;
/// Largest offset a `Data` header carries (56 bits).
pub const DATA_OFFSET_MAX: u64 = (1 << 56) - 1;

/// The compact header of a small eager message ([`Header::encode_whole`]): 16 bytes,
/// then the sender's request id only if it has one, then the signature only if it is
/// checked. On shared memory a ring slot is 64 bytes with an 8-byte state word, so a
/// message of up to 40 bytes (32 with one optional word) travels in one cache line,
/// against 8 with the 48-byte [`HEADER_LEN`] header (bench/PROFILE.md, lat18).
///
/// ```text
/// bytes 0..8   kind byte SMALL_KIND | SMALL_SREQ? | SMALL_SIG?, flags, len (u16), context
/// bytes 8..16  source, tag
/// then         sreq (u64) if SMALL_SREQ, sig (u64) if SMALL_SIG
/// ```
///
/// The kind byte is not a [`Kind`]: it decodes to [`Kind::Eager`] with `rreq` 0.
pub const SMALL_HEADER_LEN: usize = 16;
/// Kind byte of a compact eager header (low two bits: the optional words it carries).
const SMALL_KIND: u8 = 0x10;
const SMALL_SREQ: u8 = 1;
const SMALL_SIG: u8 = 2;
/// Largest message length (`len`) a compact header carries.
pub const SMALL_LEN_MAX: u64 = u16::MAX as u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub flags: u8,
    pub context: u32,
    pub source: i32,
    pub tag: i32,
    /// Total message bytes (Eager/Rts), or a credit amount.
    pub len: u64,
    /// The sender's request id (acks, FIN, cancel).
    pub sreq: u64,
    /// The receiver's request id (CTS/Data), or the rendezvous address (RTS).
    pub rreq: u64,
    /// Eager/Rts with signature checking on: the fingerprint of the message's
    /// type signature (`datatype::sigcheck`); 0 = unchecked (bytes, checking off).
    pub sig: u64,
}

impl Header {
    /// The header of an eager message (`len` bytes in all) of send request `sreq`.
    pub fn eager(
        env: &crate::matching::Envelope,
        len: usize,
        sreq: u64,
        sig: u64,
        flags: u8,
    ) -> Header {
        Header {
            kind: Kind::Eager,
            flags,
            context: env.context,
            source: env.source,
            tag: env.tag,
            len: len as u64,
            sreq,
            rreq: 0,
            sig,
        }
    }

    pub fn control(kind: Kind, sreq: u64) -> Header {
        Header {
            kind,
            flags: 0,
            context: 0,
            source: 0,
            tag: 0,
            len: 0,
            sreq,
            rreq: 0,
            sig: 0,
        }
    }

    /// Writes the header at the start of `buf` and returns the header length used.
    #[inline]
    pub fn encode(&self, buf: &mut [u8]) -> usize {
        match self.kind {
            Kind::EagerCont | Kind::Data => {
                let off = if self.kind == Kind::Data {
                    self.len.min(DATA_OFFSET_MAX)
                } else {
                    0
                };
                buf[0..8].copy_from_slice(&(off << 8).to_le_bytes());
                buf[0] = self.kind as u8;
                buf[8..16].copy_from_slice(&self.rreq.to_le_bytes());
                CONT_HEADER_LEN
            }
            _ => {
                // One bounds check for the whole header, then fixed offsets (a check
                // per field was a visible part of every small message's cost).
                let out: &mut [u8; HEADER_LEN] =
                    (&mut buf[..HEADER_LEN]).try_into().expect("48 bytes");
                let word0 = u64::from(self.kind as u8)
                    | u64::from(self.flags) << 8
                    | u64::from(self.context) << 32;
                let word1 = u64::from(self.source as u32) | u64::from(self.tag as u32) << 32;
                out[0..8].copy_from_slice(&word0.to_le_bytes());
                out[8..16].copy_from_slice(&word1.to_le_bytes());
                out[16..24].copy_from_slice(&self.len.to_le_bytes());
                out[24..32].copy_from_slice(&self.sreq.to_le_bytes());
                out[32..40].copy_from_slice(&self.rreq.to_le_bytes());
                out[40..48].copy_from_slice(&self.sig.to_le_bytes());
                HEADER_LEN
            }
        }
    }

    /// Whether [`Header::encode_whole`] writes this header in the compact form.
    #[inline]
    fn is_small(&self) -> bool {
        self.kind == Kind::Eager && (self.rreq | self.len >> 16) == 0
    }

    /// Bytes [`Header::encode_whole`] writes for this header.
    #[inline]
    pub fn whole_len(&self) -> usize {
        if self.is_small() {
            SMALL_HEADER_LEN + 8 * (self.sreq != 0) as usize + 8 * (self.sig != 0) as usize
        } else {
            match self.kind {
                Kind::EagerCont | Kind::Data => CONT_HEADER_LEN,
                _ => HEADER_LEN,
            }
        }
    }

    /// Writes the header at the start of `buf` in its shortest form and returns its
    /// length ([`Header::whole_len`], at most [`HEADER_LEN`]): an eager message's
    /// compact header ([`SMALL_HEADER_LEN`]) when its length fits 16 bits, else as
    /// [`Header::encode`]. For a packet whose payload follows at the returned offset
    /// (not for the outbox, which places fragments at fixed offsets).
    #[inline]
    pub fn encode_whole(&self, buf: &mut [u8]) -> usize {
        if !self.is_small() {
            return self.encode(buf);
        }
        let (has_sreq, has_sig) = (self.sreq != 0, self.sig != 0);
        let opt = has_sreq as u8 * SMALL_SREQ | has_sig as u8 * SMALL_SIG;
        let word0 = u64::from(SMALL_KIND | opt)
            | u64::from(self.flags) << 8
            | self.len << 16
            | u64::from(self.context) << 32;
        let word1 = u64::from(self.source as u32) | u64::from(self.tag as u32) << 32;
        if let Some(out) = buf.get_mut(..SMALL_HEADER_LEN + 16) {
            // Room for the longest form (the ring's cells always have it): all four
            // words without a branch, the optional ones packed to the front; the
            // payload written after the returned length overwrites what is unused.
            let word2 = if has_sreq { self.sreq } else { self.sig };
            put_words(out, &[word0, word1, word2, self.sig]);
            return SMALL_HEADER_LEN + 8 * (has_sreq as usize + has_sig as usize);
        }
        // One bounds check per form, the words at fixed offsets.
        match opt {
            0 => put_words(buf, &[word0, word1]),
            SMALL_SREQ => put_words(buf, &[word0, word1, self.sreq]),
            SMALL_SIG => put_words(buf, &[word0, word1, self.sig]),
            _ => put_words(buf, &[word0, word1, self.sreq, self.sig]),
        }
    }

    /// Decodes a compact eager header ([`SMALL_HEADER_LEN`]) and its payload.
    #[inline]
    fn decode_small(b0: u8, pkt: &[u8]) -> Option<(Header, &[u8])> {
        let fixed: &[u8; SMALL_HEADER_LEN] = pkt.get(..SMALL_HEADER_LEN)?.try_into().ok()?;
        let word0 = u64::from_le_bytes(fixed[0..8].try_into().ok()?);
        let word1 = u64::from_le_bytes(fixed[8..16].try_into().ok()?);
        let mut at = SMALL_HEADER_LEN;
        let mut opt = |present: bool| -> Option<u64> {
            if !present {
                return Some(0);
            }
            let v = u64::from_le_bytes(pkt.get(at..at + 8)?.try_into().ok()?);
            at += 8;
            Some(v)
        };
        let sreq = opt(b0 & SMALL_SREQ != 0)?;
        let sig = opt(b0 & SMALL_SIG != 0)?;
        let h = Header {
            kind: Kind::Eager,
            flags: (word0 >> 8) as u8,
            context: (word0 >> 32) as u32,
            source: word1 as u32 as i32,
            tag: (word1 >> 32) as u32 as i32,
            len: (word0 >> 16) & SMALL_LEN_MAX,
            sreq,
            rreq: 0,
            sig,
        };
        Some((h, pkt.get(at..)?))
    }

    /// Decodes a packet into its header and payload; `None` if it is malformed.
    pub fn decode(pkt: &[u8]) -> Option<(Header, &[u8])> {
        let b0 = *pkt.first()?;
        if b0 & !(SMALL_SREQ | SMALL_SIG) == SMALL_KIND {
            return Self::decode_small(b0, pkt);
        }
        let kind = Kind::from_u8(b0)?;
        let u64_at = |at: usize| -> Option<u64> {
            Some(u64::from_le_bytes(pkt.get(at..at + 8)?.try_into().ok()?))
        };
        let u32_at = |at: usize| -> Option<u32> {
            Some(u32::from_le_bytes(pkt.get(at..at + 4)?.try_into().ok()?))
        };
        match kind {
            Kind::EagerCont | Kind::Data => {
                let rreq = u64_at(8)?;
                let len = if kind == Kind::Data {
                    u64_at(0)? >> 8
                } else {
                    0
                };
                let h = Header {
                    kind,
                    flags: 0,
                    context: 0,
                    source: 0,
                    tag: 0,
                    len,
                    sreq: 0,
                    rreq,
                    sig: 0,
                };
                Some((h, pkt.get(CONT_HEADER_LEN..)?))
            }
            _ => {
                let h = Header {
                    kind,
                    flags: *pkt.get(1)?,
                    context: u32_at(4)?,
                    source: u32_at(8)? as i32,
                    tag: u32_at(12)? as i32,
                    len: u64_at(16)?,
                    sreq: u64_at(24)?,
                    rreq: u64_at(32)?,
                    sig: u64_at(40)?,
                };
                Some((h, pkt.get(HEADER_LEN..)?))
            }
        }
    }
}

/// Writes `words` little-endian at the start of `buf` and returns their length in bytes.
#[inline(always)]
fn put_words(buf: &mut [u8], words: &[u64]) -> usize {
    let out = &mut buf[..words.len() * 8];
    for (at, w) in out.chunks_exact_mut(8).zip(words) {
        at.copy_from_slice(&w.to_le_bytes());
    }
    words.len() * 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip() {
        let h = Header {
            kind: Kind::Eager,
            flags: FLAG_SYNC,
            context: 7,
            source: -3,
            tag: 1 << 30,
            len: 1 << 40,
            sreq: 99,
            rreq: u64::MAX,
            sig: 0x20b,
        };
        let mut buf = [0u8; 64];
        let n = h.encode(&mut buf);
        buf[n..n + 3].copy_from_slice(b"abc");
        let (d, payload) = Header::decode(&buf[..n + 3]).unwrap();
        assert_eq!(d, h);
        assert_eq!(payload, b"abc");
        let c = Header {
            kind: Kind::Data,
            flags: 0,
            context: 0,
            source: 0,
            tag: 0,
            len: 0,
            sreq: 0,
            rreq: 42,
            sig: 0,
        };
        let n = c.encode(&mut buf);
        assert_eq!(n, CONT_HEADER_LEN);
        assert_eq!(Header::decode(&buf[..n]).unwrap().0.rreq, 42);
        // A Data header carries its payload's offset (56 bits); EagerCont none.
        let off = Header {
            len: (3 << 40) + 5,
            ..c
        };
        off.encode(&mut buf);
        assert_eq!(Header::decode(&buf[..n]).unwrap().0, off);
        let cont = Header {
            kind: Kind::EagerCont,
            len: 9,
            ..c
        };
        cont.encode(&mut buf);
        assert_eq!(Header::decode(&buf[..n]).unwrap().0.len, 0);
    }

    #[test]
    fn compact_eager_headers_round_trip() {
        let base = Header {
            kind: Kind::Eager,
            flags: FLAG_SYNC,
            context: 0xdead_beef,
            source: -7,
            tag: i32::MIN,
            len: 5,
            sreq: 0,
            rreq: 0,
            sig: 0,
        };
        for (sreq, sig, want) in [(0, 0, 16), (u64::MAX, 0, 24), (0, 0x20b, 24), (3, 9, 32)] {
            for len in [0, 1, 40, SMALL_LEN_MAX] {
                let h = Header {
                    sreq,
                    sig,
                    len,
                    ..base
                };
                assert_eq!(h.whole_len(), want);
                // Room for every form (the branch-free path) and just enough.
                let mut roomy = [0xaau8; 64];
                assert_eq!(h.encode_whole(&mut roomy), want);
                assert_eq!(Header::decode(&roomy).unwrap().0, h);
                let mut buf = [0u8; 64];
                let n = h.encode_whole(&mut buf[..want + 5]);
                assert_eq!(n, want);
                buf[n..n + 5].copy_from_slice(b"hello");
                let (d, payload) = Header::decode(&buf[..n + 5]).unwrap();
                assert_eq!(d, h);
                assert_eq!(payload, b"hello");
                // Cut anywhere inside the header: rejected, never misread.
                for cut in 0..n {
                    assert!(Header::decode(&buf[..cut]).is_none(), "cut at {cut}");
                }
            }
        }
        // Too long for 16 bits, a receiver's id, or another kind: the full header.
        for h in [
            Header {
                len: SMALL_LEN_MAX + 1,
                ..base
            },
            Header { rreq: 1, ..base },
            Header::control(Kind::Credit, 4),
        ] {
            let mut a = [0u8; 64];
            let mut b = [0u8; 64];
            assert_eq!(h.whole_len(), HEADER_LEN);
            assert_eq!(h.encode_whole(&mut a), h.encode(&mut b));
            assert_eq!(a, b);
            assert_eq!(Header::decode(&a).unwrap().0, h);
        }
        let d = Header {
            kind: Kind::Data,
            len: 77,
            ..base
        };
        assert_eq!(d.whole_len(), CONT_HEADER_LEN);
        let mut a = [0u8; 16];
        assert_eq!(d.encode_whole(&mut a), CONT_HEADER_LEN);
    }

    #[test]
    fn malformed_packets_are_rejected_not_panicking() {
        assert!(Header::decode(&[]).is_none());
        assert!(Header::decode(&[0u8; 48]).is_none());
        assert!(Header::decode(&[1u8; 20]).is_none());
        assert!(Header::decode(&[5u8; 9]).is_none());
        for k in 0..=255u8 {
            for len in 0..50 {
                let mut v = vec![0xffu8; len];
                if len > 0 {
                    v[0] = k;
                }
                let _ = Header::decode(&v);
            }
        }
    }
}
