//! Sans-IO codec for the PMI-1 ("simple PMI") wire protocol.
//!
//! A message is one newline-terminated line of space-separated `key=value`
//! tokens whose first token is `cmd=NAME`, for example
//! `cmd=put kvsname=kvs_1_0 key=addr-0 value=0a1b2c`.
//!
//! Parsing follows what MPICH's Hydra accepts: tokens are separated by runs
//! of spaces or tabs, a value is everything after the *first* `=` of its token
//! (so base64 padding such as `value=QQ==` survives), and values may be empty.
//! The free-text keys `msg`, `error_msg` and `message` are the one exception
//! to "no spaces in values": peers (Hydra in error replies, Flux's client in
//! `cmd=abort`) send human-readable text there, so such a key, when it is
//! the last one, swallows the rest of the line.
//!
//! Hydra's multi-line `mcmd=spawn` request (dynamic process creation) is not
//! supported; it is recognised so that a server can skip its body and answer
//! with an error instead of mis-parsing each body line.

use crate::pairs::{Pairs, Pmi1};
use std::fmt;

/// Longest line (without its newline) the decoder accepts by default.
///
/// MPICH sizes its line buffer at 1024 bytes, but a `put` carrying a value of
/// the full advertised `vallen_max` plus key and kvsname needs more; 4 KiB
/// covers every well-formed PMI-1 message with room to spare while still
/// bounding what a misbehaving peer can make us buffer.
pub const MAX_LINE_LEN: usize = 4096;

/// Keys whose value is human-readable text that may contain spaces.
const FREE_TEXT_KEYS: [&str; 3] = ["msg", "error_msg", "message"];

/// Why a line could not be decoded or a message could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodecError {
    /// The line holds no tokens at all.
    Empty,
    /// More than `limit` bytes arrived without a newline.
    LineTooLong { limit: usize },
    /// The line is not valid UTF-8.
    InvalidUtf8,
    /// The line contains a control character other than tab (a stray `\r`,
    /// NUL, escape sequences, ...).
    ControlCharacter { byte: u8 },
    /// The first token is not `cmd=NAME`.
    MissingCmd,
    /// A token has no `=`.
    MissingEquals { token: String },
    /// A token starts with `=`.
    EmptyKey,
    /// The peer started a multi-line command (`mcmd=NAME`, in practice
    /// Hydra's `mcmd=spawn`), which this implementation does not support.
    MultiLineCommand { name: String },
    /// The stream ended in the middle of a line.
    TruncatedLine,
    /// A key to be encoded is empty or contains `=`, whitespace or control
    /// characters.
    InvalidKey { key: String },
    /// A value to be encoded contains a newline or control character, or
    /// spaces outside a free-text key in last position.
    InvalidValue { key: String },
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodecError::Empty => write!(f, "empty PMI line"),
            CodecError::LineTooLong { limit } => {
                write!(f, "PMI line longer than {limit} bytes")
            }
            CodecError::InvalidUtf8 => write!(f, "PMI line is not valid UTF-8"),
            CodecError::ControlCharacter { byte } => {
                write!(f, "PMI line contains control character 0x{byte:02x}")
            }
            CodecError::MissingCmd => {
                write!(f, "PMI line does not start with a cmd=NAME token")
            }
            CodecError::MissingEquals { token } => {
                write!(f, "PMI token {token:?} is not of the form key=value")
            }
            CodecError::EmptyKey => write!(f, "PMI token has an empty key"),
            CodecError::MultiLineCommand { name } => write!(
                f,
                "multi-line PMI command mcmd={name} is not supported \
                 (dynamic process creation is unavailable)"
            ),
            CodecError::TruncatedLine => {
                write!(f, "PMI stream ended in the middle of a line")
            }
            CodecError::InvalidKey { key } => write!(
                f,
                "invalid PMI key {key:?}: keys must be non-empty printable ASCII \
                 without spaces or '='"
            ),
            CodecError::InvalidValue { key } => write!(
                f,
                "invalid PMI value for key {key:?}: values must not contain \
                 spaces, newlines or control characters"
            ),
        }
    }
}

impl std::error::Error for CodecError {}

/// One PMI-1 command or response: the `cmd` name plus the remaining
/// key/value pairs in wire order (the accessors are [`Pairs`]'s).
pub type Message = Pairs<Pmi1>;

impl Message {
    /// Parses one line; a trailing `\n` is allowed and ignored.
    pub fn parse(line: &str) -> Result<Message, CodecError> {
        let line = line.strip_suffix('\n').unwrap_or(line);
        if let Some(b) = line.bytes().find(|&b| b.is_ascii_control() && b != b'\t') {
            return Err(CodecError::ControlCharacter { byte: b });
        }
        let mut rest = line.trim_start_matches(is_sep);
        if rest.is_empty() {
            return Err(CodecError::Empty);
        }
        let mut name: Option<String> = None;
        let mut args = Vec::new();
        while !rest.is_empty() {
            let end = rest.find(is_sep).unwrap_or(rest.len());
            let token = &rest[..end];
            let (key, value) = match token.split_once('=') {
                Some(kv) => kv,
                None => {
                    return Err(CodecError::MissingEquals {
                        token: token.to_string(),
                    })
                }
            };
            if key.is_empty() {
                return Err(CodecError::EmptyKey);
            }
            if name.is_none() {
                match key {
                    "cmd" if !value.is_empty() => name = Some(value.to_string()),
                    "mcmd" => {
                        return Err(CodecError::MultiLineCommand {
                            name: value.to_string(),
                        })
                    }
                    _ => return Err(CodecError::MissingCmd),
                }
                rest = rest[end..].trim_start_matches(is_sep);
                continue;
            }
            if FREE_TEXT_KEYS.contains(&key) {
                // The text runs to the end of the line unless a later token
                // looks like a structured key=value pair, in which case the
                // free text was a single word (Hydra's `msg=key_x_not_found`).
                let after = &rest[key.len() + 1..];
                let text_end = find_next_structured_token(after).unwrap_or(after.len());
                let text = after[..text_end].trim_end_matches(is_sep);
                args.push((key.to_string(), text.to_string()));
                rest = after[text_end..].trim_start_matches(is_sep);
                continue;
            }
            args.push((key.to_string(), value.to_string()));
            rest = rest[end..].trim_start_matches(is_sep);
        }
        Ok(Message::from_parts(
            name.expect("loop runs at least once on a non-empty line"),
            args,
        ))
    }

    /// The wire form, including the trailing newline.
    pub fn encode(&self) -> Result<String, CodecError> {
        check_word("cmd", &self.name)?;
        let mut out = String::with_capacity(16 + self.args.len() * 16);
        out.push_str("cmd=");
        out.push_str(&self.name);
        let last = self.args.len().saturating_sub(1);
        for (i, (key, value)) in self.args.iter().enumerate() {
            if !is_valid_key(key) {
                return Err(CodecError::InvalidKey { key: key.clone() });
            }
            let spaces_ok = i == last && FREE_TEXT_KEYS.contains(&key.as_str());
            let value_ok = value
                .bytes()
                .all(|b| !b.is_ascii_control() && (spaces_ok || b != b' '));
            if !value_ok {
                return Err(CodecError::InvalidValue { key: key.clone() });
            }
            out.push(' ');
            out.push_str(key);
            out.push('=');
            out.push_str(value);
        }
        out.push('\n');
        Ok(out)
    }
}

fn is_sep(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// Offset (within `s`) of the first token after the first one whose key is
/// structured, i.e. where a free-text value must stop.
fn find_next_structured_token(s: &str) -> Option<usize> {
    let mut offset = 0;
    let mut first = true;
    for piece in s.split(is_sep) {
        let start = offset;
        offset += piece.len() + 1;
        if std::mem::take(&mut first) || piece.is_empty() {
            continue;
        }
        if let Some((key, _)) = piece.split_once('=') {
            if STRUCTURED_KEYS.contains(&key) {
                return Some(start);
            }
        }
    }
    None
}

/// Keys that may follow a free-text key on the same line in messages that
/// peers actually send; text containing `word=` for any other word stays
/// part of the message.
const STRUCTURED_KEYS: [&str; 6] = ["rc", "value", "port", "kvsname", "exitcode", "size"];

/// Whether `key` can be sent as a PMI key: non-empty printable ASCII without
/// spaces or `=`.
pub fn is_valid_key(key: &str) -> bool {
    !key.is_empty() && key.bytes().all(|b| b.is_ascii_graphic() && b != b'=')
}

/// Whether `value` can be sent as a PMI value in a `put`: printable ASCII or
/// UTF-8 without spaces or control characters (it may be empty and may
/// contain `=`).
pub fn is_valid_value(value: &str) -> bool {
    value.bytes().all(|b| !b.is_ascii_control() && b != b' ')
}

fn check_word(key: &str, word: &str) -> Result<(), CodecError> {
    if is_valid_key(word) {
        Ok(())
    } else {
        Err(CodecError::InvalidValue {
            key: key.to_string(),
        })
    }
}

/// Splits a byte stream into lines.
///
/// Feed whatever the transport delivered with [`LineDecoder::feed`], then
/// call [`LineDecoder::next_line`] until it returns `None`. Memory is bounded
/// by the line limit: an overlong line is reported once as
/// [`CodecError::LineTooLong`] and its remainder (up to the next newline) is
/// discarded, so the decoder resynchronises on the following line.
#[derive(Debug)]
pub struct LineDecoder {
    buf: Vec<u8>,
    /// Bytes of `buf` already known to contain no newline.
    scanned: usize,
    limit: usize,
    /// Dropping the tail of an overlong line until its newline.
    discarding: bool,
}

impl Default for LineDecoder {
    fn default() -> Self {
        LineDecoder::new(MAX_LINE_LEN)
    }
}

impl LineDecoder {
    /// A decoder accepting lines of at most `limit` bytes (newline excluded).
    pub fn new(limit: usize) -> LineDecoder {
        LineDecoder {
            buf: Vec::new(),
            scanned: 0,
            limit: limit.max(1),
            discarding: false,
        }
    }

    /// Appends received bytes.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Whether bytes of an unfinished line are buffered.
    pub fn has_partial(&self) -> bool {
        !self.buf.is_empty() && !self.discarding
    }

    /// The next complete line without its newline, an error for a bad line,
    /// or `None` when more input is needed.
    pub fn next_line(&mut self) -> Option<Result<String, CodecError>> {
        loop {
            match self.buf[self.scanned..].iter().position(|&b| b == b'\n') {
                Some(pos) => {
                    let end = self.scanned + pos;
                    let line: Vec<u8> = self.buf.drain(..=end).take(end).collect();
                    self.scanned = 0;
                    if self.discarding {
                        self.discarding = false;
                        continue;
                    }
                    if line.len() > self.limit {
                        return Some(Err(CodecError::LineTooLong { limit: self.limit }));
                    }
                    return Some(String::from_utf8(line).map_err(|_| CodecError::InvalidUtf8));
                }
                None => {
                    self.scanned = self.buf.len();
                    if self.discarding {
                        self.buf.clear();
                        self.scanned = 0;
                        return None;
                    }
                    if self.buf.len() > self.limit {
                        self.buf.clear();
                        self.scanned = 0;
                        self.discarding = true;
                        return Some(Err(CodecError::LineTooLong { limit: self.limit }));
                    }
                    return None;
                }
            }
        }
    }

    /// Call at end of stream: reports a trailing partial line, if any, and
    /// resets the decoder.
    pub fn finish(&mut self) -> Result<(), CodecError> {
        let partial = self.has_partial();
        self.buf.clear();
        self.scanned = 0;
        self.discarding = false;
        if partial {
            Err(CodecError::TruncatedLine)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_simple_command() {
        let m = Message::parse("cmd=put kvsname=kvs_1_0 key=k value=v\n").unwrap();
        assert_eq!(m.name(), "put");
        assert_eq!(m.get("kvsname"), Some("kvs_1_0"));
        assert_eq!(m.get("key"), Some("k"));
        assert_eq!(m.get("value"), Some("v"));
        assert_eq!(m.args().len(), 3);
    }

    #[test]
    fn parses_command_without_args_and_without_newline() {
        let m = Message::parse("cmd=barrier_in").unwrap();
        assert_eq!(m.name(), "barrier_in");
        assert!(m.args().is_empty());
        assert_eq!(m.rc(), 0);
    }

    #[test]
    fn tolerates_extra_whitespace_and_tabs() {
        let m = Message::parse("  cmd=get_result \t rc=0   value=abc  \n").unwrap();
        assert_eq!(m.name(), "get_result");
        assert_eq!(m.get("rc"), Some("0"));
        assert_eq!(m.get("value"), Some("abc"));
    }

    #[test]
    fn value_keeps_equals_signs_after_the_first() {
        let m = Message::parse("cmd=put kvsname=a key=b value=QUJD==").unwrap();
        assert_eq!(m.get("value"), Some("QUJD=="));
    }

    #[test]
    fn empty_values_are_allowed() {
        let m = Message::parse("cmd=get_result rc=0 value=").unwrap();
        assert_eq!(m.get("value"), Some(""));
    }

    #[test]
    fn duplicate_keys_resolve_to_first() {
        let m = Message::parse("cmd=x a=1 a=2").unwrap();
        assert_eq!(m.get("a"), Some("1"));
        assert_eq!(m.args().len(), 2);
    }

    #[test]
    fn rc_parsing() {
        assert_eq!(Message::parse("cmd=x rc=0").unwrap().rc(), 0);
        assert_eq!(Message::parse("cmd=x rc=-1").unwrap().rc(), -1);
        assert_eq!(Message::parse("cmd=x rc=7").unwrap().rc(), 7);
        // A garbled rc must not read as success.
        assert_eq!(Message::parse("cmd=x rc=zz").unwrap().rc(), -1);
    }

    #[test]
    fn get_int() {
        let m = Message::parse("cmd=maxes kvsname_max=256 keylen_max=x").unwrap();
        assert_eq!(m.get_int::<u32>("kvsname_max"), Some(256));
        assert_eq!(m.get_int::<u32>("keylen_max"), None);
        assert_eq!(m.get_int::<u32>("missing"), None);
    }

    #[test]
    fn free_text_runs_to_end_of_line() {
        let m = Message::parse("cmd=abort exitcode=3 error_msg=something went wrong").unwrap();
        assert_eq!(m.name(), "abort");
        assert_eq!(m.get("exitcode"), Some("3"));
        assert_eq!(m.get("error_msg"), Some("something went wrong"));
    }

    #[test]
    fn free_text_stops_before_structured_key() {
        let m = Message::parse("cmd=get_result msg=key_a_not_found rc=-1").unwrap();
        assert_eq!(m.get("msg"), Some("key_a_not_found"));
        assert_eq!(m.rc(), -1);
        let m = Message::parse("cmd=x msg=two words rc=2").unwrap();
        assert_eq!(m.get("msg"), Some("two words"));
        assert_eq!(m.rc(), 2);
        let m = Message::parse("cmd=x msg=a=b c=d").unwrap();
        assert_eq!(m.get("msg"), Some("a=b c=d"));
    }

    #[test]
    fn rejects_empty_lines() {
        assert_eq!(Message::parse(""), Err(CodecError::Empty));
        assert_eq!(Message::parse("\n"), Err(CodecError::Empty));
        assert_eq!(Message::parse("   \t "), Err(CodecError::Empty));
    }

    #[test]
    fn rejects_missing_cmd() {
        assert_eq!(Message::parse("key=value"), Err(CodecError::MissingCmd));
        assert_eq!(Message::parse("cmd= a=b"), Err(CodecError::MissingCmd));
        assert_eq!(
            Message::parse("foo=bar cmd=put"),
            Err(CodecError::MissingCmd)
        );
    }

    #[test]
    fn rejects_tokens_without_equals() {
        assert_eq!(
            Message::parse("cmd=put key=a value=b c"),
            Err(CodecError::MissingEquals { token: "c".into() })
        );
        assert_eq!(
            Message::parse("hello"),
            Err(CodecError::MissingEquals {
                token: "hello".into()
            })
        );
    }

    #[test]
    fn rejects_empty_keys() {
        assert_eq!(Message::parse("cmd=x =v"), Err(CodecError::EmptyKey));
        assert_eq!(Message::parse("=x"), Err(CodecError::EmptyKey));
    }

    #[test]
    fn rejects_control_characters() {
        assert_eq!(
            Message::parse("cmd=x a=b\r"),
            Err(CodecError::ControlCharacter { byte: b'\r' })
        );
        assert_eq!(
            Message::parse("cmd=x a=\0"),
            Err(CodecError::ControlCharacter { byte: 0 })
        );
        assert_eq!(
            Message::parse("cmd=x\na=b"),
            Err(CodecError::ControlCharacter { byte: b'\n' })
        );
    }

    #[test]
    fn recognises_multiline_spawn() {
        assert_eq!(
            Message::parse("mcmd=spawn"),
            Err(CodecError::MultiLineCommand {
                name: "spawn".into()
            })
        );
    }

    #[test]
    fn encode_round_trips() {
        let m = Message::new("put")
            .arg("kvsname", "kvs_1_0")
            .arg("key", "k")
            .arg("value", "a=b");
        let line = m.encode().unwrap();
        assert_eq!(line, "cmd=put kvsname=kvs_1_0 key=k value=a=b\n");
        assert_eq!(Message::parse(&line).unwrap(), m);
        assert_eq!(
            Message::new("barrier_in").encode().unwrap(),
            "cmd=barrier_in\n"
        );
    }

    #[test]
    fn encode_rejects_bad_keys_and_values() {
        assert!(matches!(
            Message::new("x").arg("a b", "v").encode(),
            Err(CodecError::InvalidKey { .. })
        ));
        assert!(matches!(
            Message::new("x").arg("a=b", "v").encode(),
            Err(CodecError::InvalidKey { .. })
        ));
        assert!(matches!(
            Message::new("x").arg("", "v").encode(),
            Err(CodecError::InvalidKey { .. })
        ));
        assert!(matches!(
            Message::new("x").arg("k", "a b").encode(),
            Err(CodecError::InvalidValue { .. })
        ));
        assert!(matches!(
            Message::new("x").arg("k", "a\nb").encode(),
            Err(CodecError::InvalidValue { .. })
        ));
        assert!(Message::new("bad name").encode().is_err());
        assert!(Message::new("").encode().is_err());
    }

    #[test]
    fn encode_allows_spaces_only_in_trailing_free_text() {
        let line = Message::new("abort")
            .arg("exitcode", "2")
            .arg("error_msg", "it broke")
            .encode()
            .unwrap();
        assert_eq!(line, "cmd=abort exitcode=2 error_msg=it broke\n");
        let back = Message::parse(&line).unwrap();
        assert_eq!(back.get("error_msg"), Some("it broke"));
        assert!(Message::new("x")
            .arg("msg", "a b")
            .arg("rc", "0")
            .encode()
            .is_err());
    }

    #[test]
    fn validity_helpers() {
        assert!(is_valid_key("PMI_process_mapping"));
        assert!(!is_valid_key("a b"));
        assert!(!is_valid_key("a=b"));
        assert!(!is_valid_key(""));
        assert!(!is_valid_key("a\tb"));
        assert!(is_valid_value(""));
        assert!(is_valid_value("x=y"));
        assert!(!is_valid_value("x y"));
        assert!(!is_valid_value("x\n"));
    }

    fn lines(d: &mut LineDecoder) -> Vec<Result<String, CodecError>> {
        std::iter::from_fn(|| d.next_line()).collect()
    }

    #[test]
    fn decoder_splits_and_reassembles() {
        let mut d = LineDecoder::default();
        d.feed(b"cmd=a\ncmd=b x=");
        assert_eq!(lines(&mut d), vec![Ok("cmd=a".to_string())]);
        assert!(d.has_partial());
        d.feed(b"1\n");
        assert_eq!(lines(&mut d), vec![Ok("cmd=b x=1".to_string())]);
        assert!(!d.has_partial());
        assert_eq!(d.finish(), Ok(()));
    }

    #[test]
    fn decoder_byte_at_a_time() {
        let mut d = LineDecoder::default();
        let mut got = Vec::new();
        for b in b"cmd=one\ncmd=two\n" {
            d.feed(&[*b]);
            got.extend(lines(&mut d));
        }
        assert_eq!(got, vec![Ok("cmd=one".into()), Ok("cmd=two".into())]);
    }

    #[test]
    fn decoder_reports_overlong_line_once_and_resyncs() {
        let mut d = LineDecoder::new(8);
        d.feed(b"0123456789");
        assert_eq!(
            lines(&mut d),
            vec![Err(CodecError::LineTooLong { limit: 8 })]
        );
        d.feed(b"abcdef");
        assert_eq!(lines(&mut d), vec![]);
        d.feed(b"xyz\ncmd=ok\n");
        assert_eq!(lines(&mut d), vec![Ok("cmd=ok".into())]);
    }

    #[test]
    fn decoder_overlong_line_in_single_chunk() {
        let mut d = LineDecoder::new(4);
        d.feed(b"123456\nab\n");
        assert_eq!(
            lines(&mut d),
            vec![Err(CodecError::LineTooLong { limit: 4 }), Ok("ab".into())]
        );
        let mut d = LineDecoder::new(4);
        d.feed(b"1234\n");
        assert_eq!(lines(&mut d), vec![Ok("1234".into())]);
    }

    #[test]
    fn decoder_invalid_utf8() {
        let mut d = LineDecoder::default();
        d.feed(b"cmd=\xff\xfe\ncmd=x\n");
        assert_eq!(
            lines(&mut d),
            vec![Err(CodecError::InvalidUtf8), Ok("cmd=x".into())]
        );
    }

    #[test]
    fn decoder_reports_truncated_tail() {
        let mut d = LineDecoder::default();
        d.feed(b"cmd=a\ncmd=b");
        assert_eq!(lines(&mut d), vec![Ok("cmd=a".into())]);
        assert_eq!(d.finish(), Err(CodecError::TruncatedLine));
        assert_eq!(d.finish(), Ok(()));
    }

    #[test]
    fn decoder_empty_lines_are_passed_through() {
        let mut d = LineDecoder::default();
        d.feed(b"\n\n");
        assert_eq!(lines(&mut d), vec![Ok(String::new()), Ok(String::new())]);
    }

    #[test]
    fn parser_never_panics_on_garbage() {
        // A cheap deterministic fuzz: every prefix and every single-byte
        // mutation of a set of representative lines.
        let seeds = [
            "cmd=put kvsname=k key=a value=b",
            "cmd=abort exitcode=1 error_msg=x y z",
            "cmd=get_result msg=m rc=-1",
            "mcmd=spawn",
            "cmd=x msg= rc=",
        ];
        let alphabet = [b' ', b'=', b'\t', b'a', b'\n', 0xff, b'\r', b'0'];
        for seed in seeds {
            let bytes = seed.as_bytes();
            for i in 0..=bytes.len() {
                let _ = Message::parse(&seed[..seed.floor_char_boundary_compat(i)]);
                for &c in &alphabet {
                    let mut m = bytes.to_vec();
                    if i < m.len() {
                        m[i] = c;
                    } else {
                        m.push(c);
                    }
                    let mut d = LineDecoder::new(16);
                    d.feed(&m);
                    d.feed(b"\n");
                    while let Some(l) = d.next_line() {
                        if let Ok(l) = l {
                            let _ = Message::parse(&l);
                        }
                    }
                    let _ = d.finish();
                }
            }
        }
    }

    trait FloorBoundary {
        fn floor_char_boundary_compat(&self, i: usize) -> usize;
    }
    impl FloorBoundary for str {
        fn floor_char_boundary_compat(&self, mut i: usize) -> usize {
            while !self.is_char_boundary(i) {
                i -= 1;
            }
            i
        }
    }
}
