//! The job status page: how a rank tells the launcher, with no message and no
//! system call, that it has been blocked inside MPI for a while and on what.
//!
//! The launcher creates one anonymous shared file (`memfd`) per job, sized for
//! `size` slots of [`slot_words`] 64-bit words, and passes its descriptor to
//! local ranks as [`STATUS_FD_ENV`]. Rank `r` owns slot `r` and is its only
//! writer; the launcher only reads. Every word is accessed as an atomic, and a
//! slot is a seqlock: the writer makes [`W_SEQ`] odd, writes, makes it even;
//! a reader retries while it is odd or changed. This module only fixes the
//! layout (both sides map the file themselves) and encodes the text part.
//!
//! Slot words:
//! * [`W_SEQ`] seqlock counter; [`W_STATE`] one of the `STATE_*` values;
//! * [`W_GEN`] bumped at every publication, so "unchanged since the last look"
//!   means "made no progress in between";
//! * [`W_SINCE_MS`] `CLOCK_MONOTONIC` milliseconds when the rank went idle;
//! * [`W_TEXT_LEN`] bytes of text;
//! * `HEADER_WORDS..+size`: packets this rank had pushed to each peer;
//! * `+size..+2*size`: packets this rank had taken from each peer;
//! * then [`TEXT_WORDS`] words of UTF-8 text, `key=value` lines (see the
//!   engine's `diag` module for the keys).

/// Descriptor number of the status file in a rank.
pub const STATUS_FD_ENV: &str = "OXMPI_STATUS_FD";
/// Seconds a rank stays idle inside one MPI call before it publishes itself blocked.
pub const HANG_AFTER_ENV: &str = "OXMPI_HANG_AFTER";

pub const W_SEQ: usize = 0;
pub const W_STATE: usize = 1;
pub const W_GEN: usize = 2;
pub const W_SINCE_MS: usize = 3;
pub const W_TEXT_LEN: usize = 4;
/// Words before the per-peer counters.
pub const HEADER_WORDS: usize = 8;
/// Words of text at the end of each slot (4 KiB).
pub const TEXT_WORDS: usize = 512;

/// Not inside MPI, or inside it only briefly (the initial all-zero state).
pub const STATE_RUNNING: u64 = 0;
/// Idle inside a blocking MPI call for at least the hang-after time.
pub const STATE_BLOCKED: u64 = 1;
/// In MPI_Finalize, past its last message: this rank sends nothing more.
pub const STATE_FINALIZING: u64 = 2;
/// Blocked, but other threads of the process may still call MPI
/// (MPI_THREAD_MULTIPLE): shown in dumps, never evidence of a deadlock.
pub const STATE_BLOCKED_MT: u64 = 3;

/// Words in one rank's slot for a job of `size` ranks (whole pages).
pub fn slot_words(size: u32) -> usize {
    let words = HEADER_WORDS + 2 * size as usize + TEXT_WORDS;
    words.div_ceil(512) * 512
}

/// Index of the first text word in a slot.
pub fn text_start(size: u32) -> usize {
    HEADER_WORDS + 2 * size as usize
}

/// Packs `text` (truncated to the text area) into little-endian words.
pub fn encode_text(text: &str) -> (Vec<u64>, usize) {
    let mut bytes = text.as_bytes();
    if bytes.len() > TEXT_WORDS * 8 {
        let mut end = TEXT_WORDS * 8;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        bytes = &bytes[..end];
    }
    let words = bytes
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect();
    (words, bytes.len())
}

/// The text packed by [`encode_text`].
pub fn decode_text(words: &[u64], len: usize) -> String {
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes.truncate(len.min(TEXT_WORDS * 8));
    String::from_utf8_lossy(&bytes).into_owned()
}

// ----- ranks on other hosts --------------------------------------------------------
// A rank on another host cannot map the launcher's page. When the launcher
// sets [`STATUS_PMI_ENV`] in its environment, it sends each publication as a
// PMI-1 line on its (authenticated) PMI connection instead, which the server
// never answers: `cmd=oxmpi_status state=S idle=MS sent=P:N,.. recvd=P:N,..
// text=HEX` (counters only where nonzero; `idle` is how long ago the rank went
// idle, since clocks of two hosts do not compare). The launcher writes it into
// the rank's slot, so remote ranks are judged like local ones.

/// Set (to `1`) in the environment of ranks that report over PMI.
pub const STATUS_PMI_ENV: &str = "OXMPI_STATUS_PMI";
/// The PMI-1 command of a status report.
pub const STATUS_CMD: &str = "oxmpi_status";

/// One publication of a rank's slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub state: u64,
    pub idle_ms: u64,
    pub sent: Vec<u64>,
    pub recvd: Vec<u64>,
    pub text: String,
}

fn sparse(v: &[u64]) -> String {
    let parts: Vec<String> = v
        .iter()
        .enumerate()
        .filter(|(_, n)| **n != 0)
        .map(|(i, n)| format!("{i}:{n}"))
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(",")
    }
}

fn dense(s: &str, size: usize) -> Option<Vec<u64>> {
    let mut v = vec![0; size];
    if s == "-" {
        return Some(v);
    }
    for part in s.split(',') {
        let (i, n) = part.split_once(':')?;
        *v.get_mut(i.parse::<usize>().ok()?)? = n.parse().ok()?;
    }
    Some(v)
}

/// The PMI line of `r` (without its newline), within the PMI line limit: the
/// text is shortened first; if the counters alone do not fit, the report is
/// sent as [`STATE_BLOCKED_MT`] without them (shown, never evidence).
pub fn encode_report(r: &Report) -> String {
    let hex = |t: &str| t.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    let line = |state: u64, sent: &str, recvd: &str, text: &str| {
        format!(
            "cmd={STATUS_CMD} state={state} idle={} sent={sent} recvd={recvd} text={}",
            r.idle_ms,
            if text.is_empty() {
                "-".to_string()
            } else {
                hex(text)
            }
        )
    };
    let (sent, recvd) = (sparse(&r.sent), sparse(&r.recvd));
    let limit = crate::codec::MAX_LINE_LEN - 1;
    let mut text: &str = &r.text;
    loop {
        let l = line(r.state, &sent, &recvd, text);
        if l.len() <= limit {
            return l;
        }
        if text.is_empty() {
            break;
        }
        let mut end = text
            .len()
            .saturating_sub((l.len() - limit).div_ceil(2).max(16))
            .min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text = &text[..end];
    }
    let state = if r.state == STATE_RUNNING {
        STATE_RUNNING
    } else {
        STATE_BLOCKED_MT
    };
    let mut t = r.text.as_str();
    loop {
        let l = line(state, "-", "-", t);
        if l.len() <= limit || t.is_empty() {
            return l;
        }
        let mut end = t.len() / 2;
        while !t.is_char_boundary(end) {
            end -= 1;
        }
        t = &t[..end];
    }
}

/// The report in a `cmd=oxmpi_status` message of a job of `size` ranks.
pub fn decode_report(m: &crate::codec::Message, size: usize) -> Option<Report> {
    let text = m.get("text")?;
    let text = if text == "-" {
        String::new()
    } else {
        let bytes: Option<Vec<u8>> = (0..text.len() / 2)
            .map(|i| u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok())
            .collect();
        String::from_utf8_lossy(&bytes?).into_owned()
    };
    Some(Report {
        state: m.get("state")?.parse().ok()?,
        idle_ms: m.get("idle")?.parse().ok()?,
        sent: dense(m.get("sent")?, size)?,
        recvd: dense(m.get("recvd")?, size)?,
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip_within_the_line_limit() {
        let r = Report {
            state: STATE_BLOCKED,
            idle_ms: 1500,
            sent: vec![0, 3, 0, 7],
            recvd: vec![2, 0, 0, 0],
            text: "call=MPI_Recv\nargs=count=1 MPI_INT\n".into(),
        };
        let line = encode_report(&r);
        assert!(line.len() < crate::codec::MAX_LINE_LEN);
        let m = crate::codec::Message::parse(&(line + "\n")).unwrap();
        assert_eq!(m.name(), STATUS_CMD);
        assert_eq!(decode_report(&m, 4), Some(r.clone()));
        // A long text is shortened; counters always arrive.
        let long = Report {
            text: "x".repeat(5000),
            ..r.clone()
        };
        let m = crate::codec::Message::parse(&(encode_report(&long) + "\n")).unwrap();
        let back = decode_report(&m, 4).unwrap();
        assert_eq!(
            (back.sent, back.recvd, back.state),
            (r.sent.clone(), r.recvd.clone(), STATE_BLOCKED)
        );
        assert!(back.text.len() < 2100 && back.text.len() > 1000);
        // Counters that cannot fit: shown, never evidence.
        let many = Report {
            sent: (1..3000).collect(),
            ..r
        };
        let m = crate::codec::Message::parse(&(encode_report(&many) + "\n")).unwrap();
        assert_eq!(decode_report(&m, 3000).unwrap().state, STATE_BLOCKED_MT);
    }

    #[test]
    fn text_round_trips_and_truncates_on_a_char_boundary() {
        let (w, n) = encode_text("call=MPI_Recv\nwaits=1\n");
        assert_eq!(decode_text(&w, n), "call=MPI_Recv\nwaits=1\n");
        let long = "é".repeat(TEXT_WORDS * 8);
        let (w, n) = encode_text(&long);
        assert!(n <= TEXT_WORDS * 8 && w.len() <= TEXT_WORDS);
        assert!(decode_text(&w, n).chars().all(|c| c == 'é'));
        assert_eq!(slot_words(4) % 512, 0);
        assert!(slot_words(600) >= text_start(600) + TEXT_WORDS);
    }
}
