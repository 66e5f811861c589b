//! Forwarding of rank output with whole lines as the unit, so that lines of
//! different ranks never interleave mid-line.

use std::io::{self, Write};

/// A line longer than this is passed on in pieces rather than buffered
/// without bound (a rank printing a progress bar without newlines, say).
const MAX_HELD: usize = 64 * 1024;

/// Which of the launcher's streams, or which file, a rank stream goes to.
#[derive(Debug, Clone)]
pub enum Sink {
    Stdout,
    Stderr,
    /// A per-rank output file (`-outfile-pattern`, `--output-filename`);
    /// shared when a pattern names the same file for several ranks.
    File(std::rc::Rc<std::fs::File>),
}

impl Sink {
    fn write(&self, bytes: &[u8]) {
        // A closed terminal or pipe (`mpiexec ... | head`) must not stop the
        // job; the output is simply dropped, as a shell would.
        let _ = match self {
            Sink::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(bytes).and_then(|()| out.flush())
            }
            Sink::Stderr => io::stderr().lock().write_all(bytes),
            Sink::File(f) => (&**f).write_all(bytes),
        };
    }
}

/// Reassembles one rank stream into lines and writes them, optionally with
/// a `[rank] ` label in front of each.
#[derive(Debug)]
pub struct LineForwarder {
    sink: Sink,
    label: Option<Vec<u8>>,
    held: Vec<u8>,
    /// Whether the next byte written starts a line (false after a forced
    /// flush of an overlong line).
    at_line_start: bool,
}

impl LineForwarder {
    pub fn new(sink: Sink, rank: u32, label: bool) -> LineForwarder {
        LineForwarder {
            sink,
            label: label.then(|| format!("[{rank}] ").into_bytes()),
            held: Vec::new(),
            at_line_start: true,
        }
    }

    /// Accepts bytes read from the rank and writes every completed line.
    pub fn push(&mut self, data: &[u8]) {
        self.held.extend_from_slice(data);
        let complete = match self.held.iter().rposition(|&b| b == b'\n') {
            Some(last) => last + 1,
            None if self.held.len() >= MAX_HELD => self.held.len(),
            None => return,
        };
        let chunk: Vec<u8> = self.held.drain(..complete).collect();
        self.emit(&chunk);
    }

    /// End of stream: writes a final unterminated line, adding the newline
    /// so the next rank's output starts on a line of its own.
    pub fn finish(&mut self) {
        if !self.held.is_empty() {
            let mut rest = std::mem::take(&mut self.held);
            rest.push(b'\n');
            self.emit(&rest);
        }
    }

    fn emit(&mut self, chunk: &[u8]) {
        let out = render(self.label.as_deref(), self.at_line_start, chunk);
        self.at_line_start = chunk.last() == Some(&b'\n');
        self.sink.write(&out);
    }
}

/// `chunk` with `label` in front of every line that starts inside it.
fn render(label: Option<&[u8]>, at_line_start: bool, chunk: &[u8]) -> Vec<u8> {
    let Some(label) = label else {
        return chunk.to_vec();
    };
    let lines = chunk.iter().filter(|&&b| b == b'\n').count() + 1;
    let mut out = Vec::with_capacity(chunk.len() + lines * label.len());
    let mut start_of_line = at_line_start;
    for piece in chunk.split_inclusive(|&b| b == b'\n') {
        if start_of_line {
            out.extend_from_slice(label);
        }
        out.extend_from_slice(piece);
        start_of_line = piece.last() == Some(&b'\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_labels_each_line() {
        assert_eq!(render(Some(b"[1] "), true, b"a\nb\n"), b"[1] a\n[1] b\n");
        assert_eq!(
            render(Some(b"[1] "), false, b"tail\nnext\n"),
            b"tail\n[1] next\n"
        );
        assert_eq!(render(None, true, b"a\nb\n"), b"a\nb\n");
        assert_eq!(render(Some(b"[0] "), true, b"\n"), b"[0] \n");
    }

    #[test]
    fn holds_partial_lines() {
        let mut f = LineForwarder::new(Sink::Stdout, 0, false);
        f.push(b"abc");
        f.push(b"def");
        assert_eq!(f.held, b"abcdef");
        assert!(f.at_line_start);
    }
}
