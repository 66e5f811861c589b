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

/// Bytes of a full header. Continuation packets use only [`CONT_HEADER_LEN`].
pub const HEADER_LEN: usize = 48;
/// Continuation packets (`EagerCont`, `Data`) carry the kind and `rreq` only, and a
/// `Data` packet its payload's offset in the message (bytes 1..8, 56 bits, in `len`), so
/// that a transport can land a payload in the receive buffer before the engine handles
/// the packets queued ahead of it.
pub const CONT_HEADER_LEN: usize = 16;
/// Largest offset a `Data` header carries (56 bits).
pub const DATA_OFFSET_MAX: u64 = (1 << 56) - 1;

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

    /// Decodes a packet into its header and payload; `None` if it is malformed.
    pub fn decode(pkt: &[u8]) -> Option<(Header, &[u8])> {
        let kind = Kind::from_u8(*pkt.first()?)?;
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
