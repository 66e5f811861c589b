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

#[cfg(test)]
mod tests {
    use super::*;

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
