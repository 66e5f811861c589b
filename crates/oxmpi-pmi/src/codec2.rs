//! Sans-IO codec for the PMI-2 wire protocol, as spoken by Slurm's
//! `mpi/pmi2` plugin (`srun --mpi=pmi2`) and by MPICH's Hydra.
//!
//! # Framing
//!
//! Every command and response is a frame: a 6-byte ASCII decimal length
//! followed by exactly that many bytes of body. MPICH pads the length on the
//! left (`printf("%6d")`, e.g. `"    27"`), Slurm on the right (`"%-6d"`,
//! e.g. `"27    "`), so the decoder accepts spaces on either side.
//!
//! # Body
//!
//! `cmd=NAME;key=value;key=value;` — `;`-terminated `key=value` pairs, the
//! first of which is `cmd`. Per the PMI-2 specification a `;` inside a value
//! is escaped by doubling it (`;;`); [`Pmi2Message::encode`] does so and
//! [`Pmi2Message::parse_body`] undoes it. (Slurm and current MPICH do not
//! unescape, so the client refuses to send values containing `;` at all.)
//! The final `;` is optional on input. Keys may repeat (Hydra's `spawn`
//! does), so pairs are kept in wire order.
//!
//! # Start-up
//!
//! Before the first frame, the client sends the PMI-1 style line
//! `cmd=init pmi_version=2 pmi_subversion=0\n` and the server answers with a
//! PMI-1 line `cmd=response_to_init ... pmi_version=2 ...\n` (both Slurm and
//! Hydra pick the protocol per connection from this line).
//! [`FrameDecoder::next_line`] reads that one line out of the same buffer so
//! that no byte is lost when the stream switches to frames.

use crate::pairs::{Pairs, Pmi2};
use std::fmt;

/// Width of the length field that precedes every frame.
pub const PMI2_LEN_FIELD: usize = 6;

/// Largest body the decoder accepts by default: MPICH's limit for one
/// command (`PMII_MAX_COMMAND_LEN`, 64 KiB). Values are at most 1024 bytes,
/// so this covers every well-formed message with room to spare.
pub const PMI2_MAX_FRAME_LEN: usize = 64 * 1024;

/// Longest line [`FrameDecoder::next_line`] accepts (the PMI-1 style
/// `response_to_init`).
const MAX_INIT_LINE: usize = 1024;

/// Why a PMI-2 frame could not be decoded or a message encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pmi2CodecError {
    /// The 6-byte length field is not a decimal number (optionally padded
    /// with spaces). The stream cannot be resynchronised after this.
    InvalidLength { field: String },
    /// A frame announced (or an encoded message needs) more than `limit`
    /// bytes.
    FrameTooLong { len: usize, limit: usize },
    /// The init line exceeded its limit without a newline.
    LineTooLong { limit: usize },
    /// The body is not valid UTF-8.
    InvalidUtf8,
    /// The body contains a control character (NUL, newline, ...).
    ControlCharacter { byte: u8 },
    /// The body is empty.
    Empty,
    /// The body does not start with `cmd=NAME`.
    MissingCmd,
    /// A pair has no `=`.
    MissingEquals { token: String },
    /// A pair starts with `=`.
    EmptyKey,
    /// The stream ended inside a frame or line.
    Truncated,
    /// A key to be encoded is empty or contains `=`, `;`, whitespace or
    /// control characters.
    InvalidKey { key: String },
    /// A value to be encoded contains a control character.
    InvalidValue { key: String },
}

impl fmt::Display for Pmi2CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pmi2CodecError::InvalidLength { field } => {
                write!(f, "PMI-2 frame length field {field:?} is not a number")
            }
            Pmi2CodecError::FrameTooLong { len, limit } => {
                write!(f, "PMI-2 frame of {len} bytes exceeds the limit of {limit}")
            }
            Pmi2CodecError::LineTooLong { limit } => {
                write!(f, "PMI init line longer than {limit} bytes")
            }
            Pmi2CodecError::InvalidUtf8 => write!(f, "PMI-2 frame is not valid UTF-8"),
            Pmi2CodecError::ControlCharacter { byte } => {
                write!(f, "PMI-2 frame contains control character 0x{byte:02x}")
            }
            Pmi2CodecError::Empty => write!(f, "empty PMI-2 frame"),
            Pmi2CodecError::MissingCmd => {
                write!(f, "PMI-2 frame does not start with cmd=NAME")
            }
            Pmi2CodecError::MissingEquals { token } => {
                write!(f, "PMI-2 pair {token:?} is not of the form key=value")
            }
            Pmi2CodecError::EmptyKey => write!(f, "PMI-2 pair has an empty key"),
            Pmi2CodecError::Truncated => {
                write!(f, "PMI stream ended in the middle of a message")
            }
            Pmi2CodecError::InvalidKey { key } => write!(
                f,
                "invalid PMI-2 key {key:?}: keys must be non-empty printable ASCII \
                 without spaces, '=' or ';'"
            ),
            Pmi2CodecError::InvalidValue { key } => write!(
                f,
                "invalid PMI-2 value for key {key:?}: values must not contain control characters"
            ),
        }
    }
}

impl std::error::Error for Pmi2CodecError {}

/// One PMI-2 command or response: the `cmd` name plus the other pairs in
/// wire order (the accessors are [`Pairs`]'s).
pub type Pmi2Message = Pairs<Pmi2>;

impl Pmi2Message {
    /// Parses a frame body (without its length field).
    pub fn parse_body(body: &str) -> Result<Pmi2Message, Pmi2CodecError> {
        if let Some(b) = body.bytes().find(|&b| b.is_ascii_control() && b != b'\t') {
            return Err(Pmi2CodecError::ControlCharacter { byte: b });
        }
        if body.is_empty() {
            return Err(Pmi2CodecError::Empty);
        }
        let bytes = body.as_bytes();
        let mut pos = 0;
        let mut name: Option<String> = None;
        let mut args = Vec::new();
        while pos < bytes.len() {
            // Key: up to '='; a ';' first means the pair has no '='.
            let rest = &body[pos..];
            let key_end = rest.find(['=', ';']).unwrap_or(rest.len());
            if rest.as_bytes().get(key_end) != Some(&b'=') {
                return Err(Pmi2CodecError::MissingEquals {
                    token: rest[..key_end].to_string(),
                });
            }
            let key = &rest[..key_end];
            if key.is_empty() {
                return Err(Pmi2CodecError::EmptyKey);
            }
            // Value: up to a single ';' (";;" is an escaped ';') or the end.
            let mut value = String::new();
            let mut i = pos + key_end + 1;
            let mut run_start = i;
            loop {
                match bytes.get(i) {
                    None => {
                        value.push_str(&body[run_start..i]);
                        break;
                    }
                    Some(b';') if bytes.get(i + 1) == Some(&b';') => {
                        value.push_str(&body[run_start..=i]);
                        i += 2;
                        run_start = i;
                    }
                    Some(b';') => {
                        value.push_str(&body[run_start..i]);
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                }
            }
            pos = i;
            if name.is_none() {
                if key != "cmd" || value.is_empty() {
                    return Err(Pmi2CodecError::MissingCmd);
                }
                name = Some(value);
            } else {
                args.push((key.to_string(), value));
            }
        }
        match name {
            Some(name) => Ok(Pmi2Message::from_parts(name, args)),
            None => Err(Pmi2CodecError::Empty),
        }
    }

    /// The body: `cmd=NAME;k=v;...;` with `;` in values doubled.
    pub fn encode_body(&self) -> Result<String, Pmi2CodecError> {
        if !is_valid_pmi2_key(&self.name) {
            return Err(Pmi2CodecError::InvalidValue { key: "cmd".into() });
        }
        let mut out = String::with_capacity(16 + self.args.len() * 24);
        out.push_str("cmd=");
        out.push_str(&self.name);
        out.push(';');
        for (key, value) in &self.args {
            if !is_valid_pmi2_key(key) {
                return Err(Pmi2CodecError::InvalidKey { key: key.clone() });
            }
            if value.bytes().any(|b| b.is_ascii_control()) {
                return Err(Pmi2CodecError::InvalidValue { key: key.clone() });
            }
            out.push_str(key);
            out.push('=');
            for c in value.chars() {
                if c == ';' {
                    out.push(';');
                }
                out.push(c);
            }
            out.push(';');
        }
        Ok(out)
    }

    /// The complete frame: the body's length right-aligned in 6 characters
    /// (MPICH's `%6d`), then the body.
    pub fn encode(&self) -> Result<String, Pmi2CodecError> {
        let body = self.encode_body()?;
        if body.len() > PMI2_MAX_FRAME_LEN {
            return Err(Pmi2CodecError::FrameTooLong {
                len: body.len(),
                limit: PMI2_MAX_FRAME_LEN,
            });
        }
        Ok(format!(
            "{:>width$}{body}",
            body.len(),
            width = PMI2_LEN_FIELD
        ))
    }
}

/// Whether `key` can be sent as a PMI-2 key: non-empty printable ASCII
/// without spaces, `=` or `;`.
pub fn is_valid_pmi2_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'=' && b != b';')
}

/// Splits a byte stream into PMI-2 frame bodies (and, once at start-up, the
/// PMI-1 style `response_to_init` line).
///
/// Feed received bytes with [`FrameDecoder::feed`], then call
/// [`FrameDecoder::next_frame`] until it returns `None`. Memory is bounded by
/// the frame limit: an oversized frame is reported once as
/// [`Pmi2CodecError::FrameTooLong`] and its body is skipped as it arrives,
/// so decoding resumes at the next frame. A malformed length field cannot
/// be skipped; the decoder then reports it on every call.
#[derive(Debug)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    limit: usize,
    /// Body bytes of an oversized frame still to drop.
    skip: usize,
    /// A malformed length field was seen: the stream is unusable.
    broken: Option<Pmi2CodecError>,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        FrameDecoder::new(PMI2_MAX_FRAME_LEN)
    }
}

impl FrameDecoder {
    /// A decoder accepting bodies of at most `limit` bytes.
    pub fn new(limit: usize) -> FrameDecoder {
        FrameDecoder {
            buf: Vec::new(),
            limit,
            skip: 0,
            broken: None,
        }
    }

    /// Appends received bytes.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.broken.is_some() {
            return;
        }
        let dropped = self.skip.min(bytes.len());
        self.skip -= dropped;
        self.buf.extend_from_slice(&bytes[dropped..]);
    }

    /// Whether bytes of an unfinished frame are buffered (or being skipped).
    pub fn has_partial(&self) -> bool {
        !self.buf.is_empty() || self.skip > 0
    }

    /// The next complete frame body, an error for a bad frame, or `None`
    /// when more input is needed.
    pub fn next_frame(&mut self) -> Option<Result<String, Pmi2CodecError>> {
        if let Some(e) = &self.broken {
            return Some(Err(e.clone()));
        }
        if self.buf.len() < PMI2_LEN_FIELD {
            return None;
        }
        let field = &self.buf[..PMI2_LEN_FIELD];
        let len = match parse_len_field(field) {
            Some(len) => len,
            None => {
                let e = Pmi2CodecError::InvalidLength {
                    field: String::from_utf8_lossy(field).into_owned(),
                };
                self.buf.clear();
                self.broken = Some(e.clone());
                return Some(Err(e));
            }
        };
        if len > self.limit {
            let available = self.buf.len() - PMI2_LEN_FIELD;
            let dropped = available.min(len);
            self.buf.drain(..PMI2_LEN_FIELD + dropped);
            self.skip = len - dropped;
            return Some(Err(Pmi2CodecError::FrameTooLong {
                len,
                limit: self.limit,
            }));
        }
        if self.buf.len() < PMI2_LEN_FIELD + len {
            return None;
        }
        let body: Vec<u8> = self
            .buf
            .drain(..PMI2_LEN_FIELD + len)
            .skip(PMI2_LEN_FIELD)
            .collect();
        Some(String::from_utf8(body).map_err(|_| Pmi2CodecError::InvalidUtf8))
    }

    /// The next newline-terminated line (without the newline), for the
    /// PMI-1 style `response_to_init` that precedes the first frame; `None`
    /// when more input is needed.
    pub fn next_line(&mut self) -> Option<Result<String, Pmi2CodecError>> {
        if let Some(e) = &self.broken {
            return Some(Err(e.clone()));
        }
        match self.buf.iter().position(|&b| b == b'\n') {
            Some(pos) if pos <= MAX_INIT_LINE => {
                let line: Vec<u8> = self.buf.drain(..=pos).take(pos).collect();
                Some(String::from_utf8(line).map_err(|_| Pmi2CodecError::InvalidUtf8))
            }
            Some(_) => Some(Err(self.break_line())),
            None if self.buf.len() > MAX_INIT_LINE => Some(Err(self.break_line())),
            None => None,
        }
    }

    fn break_line(&mut self) -> Pmi2CodecError {
        let e = Pmi2CodecError::LineTooLong {
            limit: MAX_INIT_LINE,
        };
        self.buf.clear();
        self.broken = Some(e.clone());
        e
    }

    /// Call at end of stream: reports a partial frame, if any, and resets.
    pub fn finish(&mut self) -> Result<(), Pmi2CodecError> {
        let partial = self.has_partial();
        self.buf.clear();
        self.skip = 0;
        self.broken = None;
        if partial {
            Err(Pmi2CodecError::Truncated)
        } else {
            Ok(())
        }
    }
}

/// A 6-byte length field: ASCII digits with optional spaces on either side.
fn parse_len_field(field: &[u8]) -> Option<usize> {
    let s = std::str::from_utf8(field).ok()?.trim_matches(' ');
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> Vec<u8> {
        format!("{:>6}{body}", body.len()).into_bytes()
    }

    #[test]
    fn encodes_with_mpich_length_field() {
        let m = Pmi2Message::new("kvs-put")
            .arg("key", "oxmpi-ep-0")
            .arg("value", "abc:12");
        let body = "cmd=kvs-put;key=oxmpi-ep-0;value=abc:12;";
        assert_eq!(m.encode_body().unwrap(), body);
        assert_eq!(m.encode().unwrap(), format!("{:>6}{body}", body.len()));
        assert_eq!(&m.encode().unwrap()[..6], "    40");
        assert_eq!(
            Pmi2Message::new("kvs-fence").encode().unwrap(),
            "    14cmd=kvs-fence;"
        );
    }

    #[test]
    fn parses_slurm_and_hydra_responses() {
        let m = Pmi2Message::parse_body(
            "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=3;size=4;\
             appnum=-1;debugged=FALSE;pmiverbose=FALSE;",
        )
        .unwrap();
        assert_eq!(m.name(), "fullinit-response");
        assert_eq!(m.rc(), 0);
        assert_eq!(m.get_int::<u32>("rank"), Some(3));
        assert_eq!(m.get_int::<i32>("appnum"), Some(-1));
        assert_eq!(m.get_bool("debugged"), Some(false));
        assert_eq!(m.get_bool("rank"), None);
        assert_eq!(m.get("spawner-jobid"), None);

        // Final ';' optional; '=' inside values kept.
        let m = Pmi2Message::parse_body("cmd=kvs-get-response;rc=0;found=TRUE;value=QQ==").unwrap();
        assert_eq!(m.get("value"), Some("QQ=="));
        assert_eq!(m.get_bool("found"), Some(true));

        // Mapping values contain ',' and parentheses.
        let m = Pmi2Message::parse_body(
            "cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,4));",
        )
        .unwrap();
        assert_eq!(m.get("value"), Some("(vector,(0,1,4))"));

        // No pairs at all.
        let m = Pmi2Message::parse_body("cmd=kvs-fence-response;").unwrap();
        assert!(m.args().is_empty());
        assert_eq!(m.rc(), 0);
    }

    #[test]
    fn semicolons_are_escaped_by_doubling() {
        let m = Pmi2Message::new("kvs-put")
            .arg("key", "k")
            .arg("value", "a;b;;c;");
        let body = m.encode_body().unwrap();
        assert_eq!(body, "cmd=kvs-put;key=k;value=a;;b;;;;c;;;");
        assert_eq!(Pmi2Message::parse_body(&body).unwrap(), m);
        // An escaped ';' at the very end of an unterminated body.
        let m = Pmi2Message::parse_body("cmd=x;msg=end;;").unwrap();
        assert_eq!(m.get("msg"), Some("end;"));
    }

    #[test]
    fn empty_values_and_duplicates() {
        let m = Pmi2Message::parse_body("cmd=spawn;argv=;subcmd=a;subcmd=b;").unwrap();
        assert_eq!(m.get("argv"), Some(""));
        assert_eq!(m.get("subcmd"), Some("a"));
        assert_eq!(m.args().len(), 3);
    }

    #[test]
    fn round_trips() {
        let m = Pmi2Message::new("abort")
            .arg("isworld", "TRUE")
            .arg("msg", "rank 1: out of memory; giving up = bad")
            .arg("empty", "");
        assert_eq!(
            Pmi2Message::parse_body(&m.encode_body().unwrap()).unwrap(),
            m
        );
    }

    #[test]
    fn rejects_malformed_bodies() {
        assert_eq!(Pmi2Message::parse_body(""), Err(Pmi2CodecError::Empty));
        for bad in ["key=v;", "cmd=;", "x;cmd=a;", "=a;"] {
            let e = Pmi2Message::parse_body(bad).unwrap_err();
            assert!(
                matches!(
                    e,
                    Pmi2CodecError::MissingCmd
                        | Pmi2CodecError::EmptyKey
                        | Pmi2CodecError::MissingEquals { .. }
                ),
                "{bad:?}: {e:?}"
            );
        }
        assert_eq!(
            Pmi2Message::parse_body("cmd=a;novalue;"),
            Err(Pmi2CodecError::MissingEquals {
                token: "novalue".into()
            })
        );
        assert_eq!(
            Pmi2Message::parse_body("cmd=a;novalue"),
            Err(Pmi2CodecError::MissingEquals {
                token: "novalue".into()
            })
        );
        assert_eq!(
            Pmi2Message::parse_body("cmd=a;=v;"),
            Err(Pmi2CodecError::EmptyKey)
        );
        assert_eq!(
            Pmi2Message::parse_body("cmd=a;k=v\n"),
            Err(Pmi2CodecError::ControlCharacter { byte: b'\n' })
        );
        assert_eq!(
            Pmi2Message::parse_body("cmd=a;k=\0;"),
            Err(Pmi2CodecError::ControlCharacter { byte: 0 })
        );
    }

    #[test]
    fn encode_rejects_bad_keys_and_values() {
        for key in ["", "a=b", "a;b", "a b", "\u{e9}", "a\n"] {
            assert_eq!(
                Pmi2Message::new("x").arg(key, "v").encode(),
                Err(Pmi2CodecError::InvalidKey { key: key.into() })
            );
        }
        assert_eq!(
            Pmi2Message::new("x").arg("k", "a\nb").encode(),
            Err(Pmi2CodecError::InvalidValue { key: "k".into() })
        );
        assert!(Pmi2Message::new("bad;cmd").encode().is_err());
        let big = "v".repeat(PMI2_MAX_FRAME_LEN);
        assert!(matches!(
            Pmi2Message::new("x").arg("k", big).encode(),
            Err(Pmi2CodecError::FrameTooLong { .. })
        ));
        // Spaces and non-ASCII text are fine in values.
        assert!(Pmi2Message::new("x")
            .arg("k", "a b \u{e9}")
            .encode()
            .is_ok());
    }

    fn frames(d: &mut FrameDecoder) -> Vec<Result<String, Pmi2CodecError>> {
        std::iter::from_fn(|| d.next_frame()).collect()
    }

    #[test]
    fn decoder_accepts_both_paddings() {
        let mut d = FrameDecoder::default();
        d.feed(b"    14cmd=kvs-fence;");
        d.feed(b"14    cmd=kvs-fence;");
        d.feed(b"000014cmd=kvs-fence;");
        let got = frames(&mut d);
        assert_eq!(got.len(), 3);
        assert!(got.iter().all(|f| f.as_deref() == Ok("cmd=kvs-fence;")));
        assert!(!d.has_partial());
        assert_eq!(d.finish(), Ok(()));
    }

    #[test]
    fn decoder_byte_at_a_time_and_reassembly() {
        let mut stream = frame("cmd=a;x=1;");
        stream.extend(frame("cmd=b;"));
        let mut d = FrameDecoder::default();
        let mut got = Vec::new();
        for b in &stream {
            d.feed(std::slice::from_ref(b));
            got.extend(frames(&mut d));
        }
        assert_eq!(got, vec![Ok("cmd=a;x=1;".into()), Ok("cmd=b;".into())]);
    }

    #[test]
    fn decoder_init_line_then_frames() {
        let mut d = FrameDecoder::default();
        let mut bytes = b"cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n".to_vec();
        bytes.extend(frame("cmd=fullinit-response;rc=0;"));
        d.feed(&bytes[..20]);
        assert_eq!(d.next_line(), None);
        d.feed(&bytes[20..]);
        assert_eq!(
            d.next_line(),
            Some(Ok(
                "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0".into()
            ))
        );
        assert_eq!(
            d.next_frame(),
            Some(Ok("cmd=fullinit-response;rc=0;".into()))
        );
        assert_eq!(d.next_frame(), None);
    }

    #[test]
    fn decoder_rejects_bad_length_fields_for_good() {
        for field in [
            &b"  1x  "[..],
            b"      ",
            b" -1   ",
            b"1 2   ",
            b"\xff\xff\xff\xff\xff\xff",
            b"+12   ",
        ] {
            let mut d = FrameDecoder::default();
            d.feed(field);
            d.feed(b"cmd=a;");
            assert!(
                matches!(
                    d.next_frame(),
                    Some(Err(Pmi2CodecError::InvalidLength { .. }))
                ),
                "{field:?}"
            );
            d.feed(&frame("cmd=b;"));
            assert!(matches!(
                d.next_frame(),
                Some(Err(Pmi2CodecError::InvalidLength { .. }))
            ));
        }
    }

    #[test]
    fn decoder_skips_oversized_frames_and_resyncs() {
        let mut d = FrameDecoder::new(8);
        let big = frame("cmd=toolong;k=v;");
        d.feed(&big[..10]);
        assert!(matches!(
            d.next_frame(),
            Some(Err(Pmi2CodecError::FrameTooLong { len: 16, limit: 8 }))
        ));
        assert_eq!(d.next_frame(), None);
        d.feed(&big[10..]);
        d.feed(&frame("cmd=ok;"));
        assert_eq!(frames(&mut d), vec![Ok("cmd=ok;".into())]);

        // Oversized frame entirely in one chunk.
        let mut d = FrameDecoder::new(8);
        let mut bytes = frame("cmd=toolong;k=v;");
        bytes.extend(frame("cmd=ok;"));
        d.feed(&bytes);
        let got = frames(&mut d);
        assert!(matches!(got[0], Err(Pmi2CodecError::FrameTooLong { .. })));
        assert_eq!(got[1], Ok("cmd=ok;".into()));
    }

    #[test]
    fn decoder_reports_truncation_and_bad_utf8() {
        let mut d = FrameDecoder::default();
        d.feed(b"    10cmd=");
        assert_eq!(d.next_frame(), None);
        assert!(d.has_partial());
        assert_eq!(d.finish(), Err(Pmi2CodecError::Truncated));
        d.feed(b"     2\xff\xfe");
        assert_eq!(d.next_frame(), Some(Err(Pmi2CodecError::InvalidUtf8)));
    }

    #[test]
    fn decoder_bounds_the_init_line() {
        let mut d = FrameDecoder::default();
        d.feed(&vec![b'a'; MAX_INIT_LINE + 1]);
        assert!(matches!(
            d.next_line(),
            Some(Err(Pmi2CodecError::LineTooLong { .. }))
        ));
    }

    #[test]
    fn never_panics_on_garbage() {
        let seeds = [
            "cmd=fullinit-response;rc=0;rank=1;size=2;",
            "cmd=kvs-get-response;rc=0;found=TRUE;value=a;;b;",
            "cmd=x;=;;;=",
        ];
        let alphabet = [b';', b'=', b' ', b'\n', 0xff, b'0', b'a', 0];
        for seed in seeds {
            let bytes = seed.as_bytes();
            for i in 0..=bytes.len() {
                for &c in &alphabet {
                    let mut m = bytes.to_vec();
                    if i < m.len() {
                        m[i] = c;
                    } else {
                        m.push(c);
                    }
                    if let Ok(s) = std::str::from_utf8(&m) {
                        let _ = Pmi2Message::parse_body(s);
                    }
                    // Also as a frame with a (possibly wrong) length field.
                    for len in [0, m.len().saturating_sub(1), m.len(), m.len() + 3] {
                        let mut d = FrameDecoder::new(32);
                        d.feed(format!("{len:>6}").as_bytes());
                        d.feed(&m);
                        for _ in 0..4 {
                            match d.next_frame() {
                                Some(Ok(body)) => {
                                    let _ = Pmi2Message::parse_body(&body);
                                }
                                Some(Err(_)) => {}
                                None => break,
                            }
                        }
                        let _ = d.next_line();
                        let _ = d.finish();
                    }
                }
            }
        }
    }
}
