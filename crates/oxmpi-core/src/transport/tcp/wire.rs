//! The wire format: handshake messages and frames (encoding, parsing, MACs, and the
//! incremental frame decoder), as described in the parent module. Public for the
//! tests and the fuzz target; the engine only uses [`TcpTransport`](super::TcpTransport).

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::MAX_PACKET;
use crate::buf::Landing;

type HmacSha256 = Hmac<Sha256>;

/// Protocol magic, with the version in its last byte.
pub const MAGIC: [u8; 8] = *b"OXMPITC1";
pub const NONCE_LEN: usize = 32;
pub const MAC_LEN: usize = 32;
pub const SERVER_HELLO_LEN: usize = 8 + 4 + NONCE_LEN;
pub const CLIENT_MSG_LEN: usize = 8 + 4 + 4 + NONCE_LEN + MAC_LEN;
pub const VERDICT_LEN: usize = 1 + MAC_LEN;
pub const FRAME_HEADER_LEN: usize = 8;
pub const KIND_DATA: u8 = 1;
pub const KIND_BYE: u8 = 2;

pub type Nonce = [u8; NONCE_LEN];

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn mac(secret: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    let mut m = HmacSha256::new_from_slice(secret).expect("HMAC accepts keys of any length");
    for p in parts {
        m.update(p);
    }
    m
}

/// The server's first message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerHello {
    pub rank: u32,
    pub nonce: Nonce,
}

pub fn encode_server_hello(rank: u32, nonce: &Nonce) -> [u8; SERVER_HELLO_LEN] {
    let mut b = [0u8; SERVER_HELLO_LEN];
    b[..8].copy_from_slice(&MAGIC);
    b[8..12].copy_from_slice(&rank.to_le_bytes());
    b[12..].copy_from_slice(nonce);
    b
}

pub fn parse_server_hello(b: &[u8]) -> Result<ServerHello, &'static str> {
    if b.len() != SERVER_HELLO_LEN {
        return Err("server hello has the wrong size");
    }
    if b[..8] != MAGIC {
        return Err("bad protocol magic in server hello");
    }
    let mut nonce = [0u8; NONCE_LEN];
    nonce.copy_from_slice(&b[12..]);
    Ok(ServerHello {
        rank: u32_at(b, 8),
        nonce,
    })
}

/// The client's authenticated message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientMsg {
    pub rank: u32,
    pub server_rank: u32,
    pub nonce: Nonce,
    pub mac: [u8; MAC_LEN],
}

fn client_mac(
    secret: &[u8],
    rank: u32,
    server_rank: u32,
    server_nonce: &Nonce,
    client_nonce: &Nonce,
) -> HmacSha256 {
    mac(
        secret,
        &[
            b"oxmpi-client",
            server_nonce,
            client_nonce,
            &rank.to_le_bytes(),
            &server_rank.to_le_bytes(),
        ],
    )
}

pub fn encode_client_msg(
    secret: &[u8],
    rank: u32,
    server_rank: u32,
    server_nonce: &Nonce,
    client_nonce: &Nonce,
) -> [u8; CLIENT_MSG_LEN] {
    let tag = client_mac(secret, rank, server_rank, server_nonce, client_nonce)
        .finalize()
        .into_bytes();
    let mut b = [0u8; CLIENT_MSG_LEN];
    b[..8].copy_from_slice(&MAGIC);
    b[8..12].copy_from_slice(&rank.to_le_bytes());
    b[12..16].copy_from_slice(&server_rank.to_le_bytes());
    b[16..48].copy_from_slice(client_nonce);
    b[48..].copy_from_slice(&tag);
    b
}

/// Parses the client message's layout (not its MAC: see [`verify_client_msg`]).
pub fn parse_client_msg(b: &[u8]) -> Result<ClientMsg, &'static str> {
    if b.len() != CLIENT_MSG_LEN {
        return Err("client message has the wrong size");
    }
    if b[..8] != MAGIC {
        return Err("bad protocol magic in client message");
    }
    let mut nonce = [0u8; NONCE_LEN];
    nonce.copy_from_slice(&b[16..48]);
    let mut tag = [0u8; MAC_LEN];
    tag.copy_from_slice(&b[48..]);
    Ok(ClientMsg {
        rank: u32_at(b, 8),
        server_rank: u32_at(b, 12),
        nonce,
        mac: tag,
    })
}

/// Whether the client's MAC proves knowledge of `secret` for this server nonce
/// (constant-time comparison).
pub fn verify_client_msg(secret: &[u8], msg: &ClientMsg, server_nonce: &Nonce) -> bool {
    client_mac(secret, msg.rank, msg.server_rank, server_nonce, &msg.nonce)
        .verify_slice(&msg.mac)
        .is_ok()
}

fn server_mac(
    secret: &[u8],
    accepted: bool,
    client_rank: u32,
    server_rank: u32,
    client_nonce: &Nonce,
    server_nonce: &Nonce,
) -> HmacSha256 {
    mac(
        secret,
        &[
            b"oxmpi-server",
            client_nonce,
            server_nonce,
            &client_rank.to_le_bytes(),
            &server_rank.to_le_bytes(),
            &[accepted as u8],
        ],
    )
}

pub fn encode_verdict(
    secret: &[u8],
    accepted: bool,
    client_rank: u32,
    server_rank: u32,
    client_nonce: &Nonce,
    server_nonce: &Nonce,
) -> [u8; VERDICT_LEN] {
    let tag = server_mac(
        secret,
        accepted,
        client_rank,
        server_rank,
        client_nonce,
        server_nonce,
    )
    .finalize()
    .into_bytes();
    let mut b = [0u8; VERDICT_LEN];
    b[0] = accepted as u8;
    b[1..].copy_from_slice(&tag);
    b
}

/// Checks the server's verdict and its MAC; `Ok(accepted)`.
pub fn parse_verdict(
    secret: &[u8],
    b: &[u8],
    client_rank: u32,
    server_rank: u32,
    client_nonce: &Nonce,
    server_nonce: &Nonce,
) -> Result<bool, &'static str> {
    if b.len() != VERDICT_LEN {
        return Err("verdict has the wrong size");
    }
    let accepted = match b[0] {
        0 => false,
        1 => true,
        _ => return Err("malformed verdict"),
    };
    server_mac(
        secret,
        accepted,
        client_rank,
        server_rank,
        client_nonce,
        server_nonce,
    )
    .verify_slice(&b[1..])
    .map_err(|_| "the server failed to prove knowledge of the job secret")?;
    Ok(accepted)
}

pub fn encode_frame_header(kind: u8, len: u32) -> [u8; FRAME_HEADER_LEN] {
    let mut h = [0u8; FRAME_HEADER_LEN];
    h[0] = kind;
    h[4..].copy_from_slice(&len.to_le_bytes());
    h
}

/// A decoded frame.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    Packet(Vec<u8>),
    /// A packet of `len` bytes whose payload after its first `buf.len()` bytes (the
    /// head, all `buf` holds) was read straight into the memory a
    /// [`FrameDecoder::set_sink`] named.
    Landed {
        buf: Vec<u8>,
        len: usize,
    },
    Bye,
}

/// Where the rest of the current payload goes instead of the decoder's buffer.
#[derive(Debug)]
struct Sink {
    /// The embedder's memory lent for the rest of the payload, `len` bytes.
    landing: Landing,
    len: usize,
    got: usize,
    /// Payload bytes in the decoder's buffer when the sink was set.
    head: usize,
}

/// Incremental, bounds-checked frame decoder: bytes in any chunking, frames out.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    hdr: [u8; FRAME_HEADER_LEN],
    hdr_got: usize,
    /// The payload being received, if any: allocated with its checked length, or, for
    /// a payload that will be offered to the embedder's lander
    /// ([`FrameDecoder::feed_landing`]), only its head until the lander declines it (a
    /// payload that lands never has the rest allocated and zeroed).
    payload: Option<Vec<u8>>,
    /// The current payload's length (of which `payload` may hold only the head).
    plen: usize,
    got: usize,
    bye: bool,
    /// A large payload buffer handed back after use ([`FrameDecoder::recycle`]): the
    /// next large frame is read into it instead of a fresh, zeroed allocation.
    /// (Several: the packets of one large message are often all read before the engine
    /// handles the first, and a fresh buffer is a zeroed allocation.)
    spare: Vec<Vec<u8>>,
    /// The last frame out was a large one (landed, [`Frame::Landed`], or a packet,
    /// of at least [`RECYCLE_MIN`] bytes): the next one is probably another large one,
    /// whose first bytes are best read alone (see [`FrameDecoder::read_hint`]).
    after_large: bool,
    /// ... and it was under [`LARGE_FRAME`] bytes (see [`FrameDecoder::read_hint`]).
    after_medium: bool,
    /// The rest of the current payload goes to the embedder's memory.
    sink: Option<Sink>,
    /// The embedder was asked for a sink for the current payload.
    asked: bool,
}

/// Payloads from this size on are read straight into their buffer (no staging copy) and
/// their buffers recycled.
pub const RECYCLE_MIN: usize = 16 * 1024;
/// Frames from this size on make every next read ask for a header alone
/// ([`FrameDecoder::read_hint`]); smaller ones from [`RECYCLE_MIN`] only the next read
/// of the same poll.
pub const LARGE_FRAME: usize = 32 * 1024;
/// Payload buffers kept for reuse per connection: at least this many (a 1 MiB
/// message's packets), more while they hold at most [`SPARE_BYTES`] in all.
const SPARES: usize = 4;
/// Bytes of spare payload buffers a connection may keep beyond [`SPARES`] buffers: a
/// window of 16-32 KiB messages read 64 KiB at a time (see [`FrameDecoder::read_hint`])
/// runs ahead of the engine by dozens of packets, and with four spares each packet was
/// a fresh zeroed allocation and a heap trim (`brk`) when freed (net31).
const SPARE_BYTES: usize = 1 << 20;

impl FrameDecoder {
    pub fn new() -> FrameDecoder {
        FrameDecoder::default()
    }

    /// Whether the decoder is between frames (an end of stream here is not a
    /// truncation).
    pub fn at_boundary(&self) -> bool {
        self.hdr_got == 0 && self.payload.is_none()
    }

    /// Whether a goodbye frame was decoded.
    pub fn saw_bye(&self) -> bool {
        self.bye
    }

    fn header_done(
        &mut self,
        head: usize,
        min: usize,
        out: &mut impl FnMut(Frame),
    ) -> Result<(), String> {
        self.hdr_got = 0;
        self.asked = false;
        let kind = self.hdr[0];
        let len = u32::from_le_bytes([self.hdr[4], self.hdr[5], self.hdr[6], self.hdr[7]]) as usize;
        if self.bye {
            return Err("frame after goodbye".into());
        }
        if self.hdr[1..4] != [0, 0, 0] {
            return Err(format!("malformed frame header {:02x?}", self.hdr));
        }
        match kind {
            KIND_DATA => {
                if len > MAX_PACKET {
                    return Err(format!(
                        "frame length {len} exceeds the maximum {MAX_PACKET}"
                    ));
                }
                if len == 0 {
                    self.after_large = false;
                    out(Frame::Packet(Vec::new()));
                } else {
                    self.plen = len;
                    self.payload = Some(if head > 0 && len >= head.saturating_add(min) {
                        // Offered to the lander once its head is in: the rest is
                        // allocated only if the lander declines.
                        vec![0u8; head]
                    } else {
                        self.payload_buf(len)
                    });
                    self.got = 0;
                }
                Ok(())
            }
            KIND_BYE => {
                if len != 0 {
                    return Err(format!("goodbye frame with length {len}"));
                }
                self.bye = true;
                out(Frame::Bye);
                Ok(())
            }
            k => Err(format!("unknown frame kind {k}")),
        }
    }

    /// A buffer of `len` bytes for a payload: a spare one for a large payload.
    fn payload_buf(&mut self, len: usize) -> Vec<u8> {
        match self.spare.pop() {
            // Shrinking keeps the bytes (no pass over them); growing zeroes only the
            // new tail.
            Some(mut v) if len >= RECYCLE_MIN => {
                v.resize(len, 0);
                v
            }
            spare => {
                self.spare.extend(spare);
                vec![0u8; len]
            }
        }
    }

    /// Feeds bytes; complete frames go to `out`. An error means the stream is
    /// malformed and must be closed (the decoder is then unusable).
    pub fn feed(&mut self, data: &[u8], out: impl FnMut(Frame)) -> Result<(), String> {
        self.feed_landing(data, 0, usize::MAX, &mut |_, _| None, out)
    }

    /// [`FrameDecoder::feed`] that offers each payload of at least `head + min` bytes to
    /// `land` once its first `head` bytes are in ([`FrameDecoder::try_land`]).
    pub fn feed_landing(
        &mut self,
        mut data: &[u8],
        head: usize,
        min: usize,
        land: &mut dyn FnMut(&[u8], usize) -> Option<Landing>,
        mut out: impl FnMut(Frame),
    ) -> Result<(), String> {
        while !data.is_empty() {
            if self.payload.is_some() {
                self.try_land(head, min, land);
            }
            if let Some(s) = &mut self.sink {
                let dst = s.landing.rest(s.got);
                let n = dst.len().min(data.len());
                dst[..n].copy_from_slice(&data[..n]);
                data = &data[n..];
                self.advance_direct(n, &mut out);
                continue;
            }
            if let Some(p) = &mut self.payload {
                // Before the embedder saw the head, stop after it (the rest may land).
                let lim = if !self.asked && self.got < head {
                    head - self.got
                } else {
                    usize::MAX
                };
                let n = (self.plen - self.got).min(data.len()).min(lim);
                p[self.got..self.got + n].copy_from_slice(&data[..n]);
                self.got += n;
                data = &data[n..];
                if self.got == self.plen {
                    self.note_frame_len(self.plen);
                    out(Frame::Packet(self.payload.take().unwrap()));
                }
            } else {
                let n = (FRAME_HEADER_LEN - self.hdr_got).min(data.len());
                self.hdr[self.hdr_got..self.hdr_got + n].copy_from_slice(&data[..n]);
                self.hdr_got += n;
                data = &data[n..];
                if self.hdr_got == FRAME_HEADER_LEN {
                    self.header_done(head, min, &mut out)?;
                }
            }
        }
        Ok(())
    }

    /// The rest of the current payload, if at least `min` bytes remain, to read into
    /// directly (then call [`FrameDecoder::advance_direct`]).
    pub fn direct_buf(&mut self, min: usize) -> Option<&mut [u8]> {
        self.direct_buf_head(min, 0)
    }

    /// [`FrameDecoder::direct_buf`], or the sink's memory; none while a payload's first
    /// `head` bytes are not in and the embedder was not asked (they come through
    /// [`FrameDecoder::feed_landing`]).
    pub fn direct_buf_head(&mut self, min: usize, head: usize) -> Option<&mut [u8]> {
        if self.sink.is_none() && !self.asked && self.got < head {
            return None;
        }
        if let Some(s) = &mut self.sink {
            return Some(s.landing.rest(s.got));
        }
        let got = self.got;
        match &mut self.payload {
            Some(p) if p.len() - got >= min => Some(&mut p[got..]),
            _ => None,
        }
    }

    /// Takes back a payload buffer this decoder produced, for the next large frame (one
    /// buffer is kept; small ones are dropped).
    /// The current payload's bytes so far and how many remain, if at least `head` bytes
    /// are in, at least `min` remain, and the embedder was not asked yet for this payload
    /// (see [`FrameDecoder::try_land`]).
    pub fn sink_wanted(&self, head: usize, min: usize) -> Option<(&[u8], usize)> {
        match &self.payload {
            Some(p) if !self.asked && self.sink.is_none() && self.got >= head => {
                let rest = self.plen - self.got;
                (rest >= min).then(|| (&p[..self.got], rest))
            }
            _ => None,
        }
    }

    /// Asks `land` (once per payload, when [`FrameDecoder::sink_wanted`] says so) where
    /// the rest of the current payload goes, and sets the sink it answers.
    pub fn try_land(
        &mut self,
        head: usize,
        min: usize,
        land: &mut dyn FnMut(&[u8], usize) -> Option<Landing>,
    ) {
        let Some(answer) = self
            .sink_wanted(head, min)
            .map(|(got, rest)| land(got, rest))
        else {
            return;
        };
        self.asked = true;
        match answer {
            Some(landing) => self.set_sink(landing),
            None => self.allocate_rest(),
        }
    }

    /// Gives the current payload, if only its head is allocated (see
    /// [`FrameDecoder::payload`]), its whole buffer.
    fn allocate_rest(&mut self) {
        let got = self.got;
        if self.payload.as_ref().is_some_and(|p| p.len() < self.plen) {
            let mut full = self.payload_buf(self.plen);
            if let Some(head) = self.payload.take() {
                full[..got].copy_from_slice(&head[..got]);
            }
            self.payload = Some(full);
        }
    }

    /// Reads the rest of the current payload (the `rest` of [`FrameDecoder::sink_wanted`])
    /// into the memory `landing` lends (exactly `rest` bytes, else nothing is done)
    /// instead of the decoder's buffer; the frame comes out as [`Frame::Landed`].
    pub fn set_sink(&mut self, landing: Landing) {
        let rest = match &self.payload {
            Some(_) => self.plen - self.got,
            None => return,
        };
        if landing.len() != rest {
            debug_assert!(false, "a landing of {} bytes for {rest}", landing.len());
            return;
        }
        let Some(p) = self.payload.take() else { return };
        self.sink = Some(Sink {
            landing,
            len: rest,
            got: 0,
            head: self.got,
        });
        if p.len() == self.got {
            // Only the head was allocated (a payload offered to the lander).
            self.payload = Some(p);
            return;
        }
        // Only the head stays ours: the large buffer goes back to the spares at once, so
        // a run of landed packets read ahead of the engine needs no fresh zeroed
        // allocation each (osu_bw's 1 MiB windows: one 256 KiB calloc per packet).
        self.payload = Some(p[..self.got].to_vec());
        self.recycle(p);
    }

    pub fn recycle(&mut self, buf: Vec<u8>) {
        if buf.len() < RECYCLE_MIN {
            return;
        }
        if self.spare.len() < SPARES
            || self.spare.iter().map(|v| v.capacity()).sum::<usize>() + buf.capacity()
                <= SPARE_BYTES
        {
            self.spare.push(buf);
        }
    }

    /// How many bytes the next read into a staging buffer should ask for: right after
    /// a large frame, only the next frame's header and `head` bytes of its payload (so
    /// that the rest of a large payload is read straight into its buffer, or lands, with
    /// no staging copy), else `max`. (A stream of 64 KiB eager packets read 64 KiB at a
    /// time into the staging buffer straddled every frame boundary: each payload was
    /// copied from the staging buffer into its packet, then again into the receive.)
    ///
    /// After a frame under [`LARGE_FRAME`] bytes, only within one poll (`first`: the
    /// poll's first read from this connection): a poll's first read follows one that
    /// emptied the socket, so it meets a message as it arrives, and a 16 KiB one read
    /// header first cost a ping-pong two reads (the header, then the payload with the
    /// next header) where one read into the staging buffer takes it whole, for a
    /// staging copy that costs less than a read system call (net31).
    /// Records the payload length of the frame just completed, for
    /// [`FrameDecoder::read_hint`].
    fn note_frame_len(&mut self, len: usize) {
        self.after_large = len >= RECYCLE_MIN;
        self.after_medium = len < LARGE_FRAME;
    }

    pub fn read_hint(&self, head: usize, max: usize, first: bool) -> usize {
        if self.after_large && !(first && self.after_medium) && self.at_boundary() {
            (FRAME_HEADER_LEN + head).min(max)
        } else {
            max
        }
    }

    /// Records `n` bytes written into [`FrameDecoder::direct_buf`]'s slice.
    pub fn advance_direct(&mut self, n: usize, mut out: impl FnMut(Frame)) {
        if let Some(s) = &mut self.sink {
            s.got = (s.got + n).min(s.len);
            if s.got == s.len {
                let len = s.head + s.len;
                self.sink = None;
                // By size, as for a packet: a landed 4 KiB message set "large" here, and
                // every later read asked for a header alone, so a ping-pong of 4-16 KiB
                // messages took two reads per message where one read into the staging
                // buffer takes it whole and lands it from there with one copy (net34).
                self.note_frame_len(len);
                out(Frame::Landed {
                    buf: self.payload.take().unwrap(),
                    len,
                });
            }
            return;
        }
        let Some(p) = &self.payload else { return };
        self.got = (self.got + n).min(p.len());
        if self.got == self.plen {
            self.note_frame_len(self.plen);
            out(Frame::Packet(self.payload.take().unwrap()));
        }
    }
}
