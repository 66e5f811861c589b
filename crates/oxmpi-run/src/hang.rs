//! Deadlock detection and the on-demand state dump.
//!
//! The launcher owns the job status page (layout in `oxmpi_pmi::status`): an
//! anonymous shared file, one slot per rank, inherited by local ranks as
//! `OXMPI_STATUS_FD`. A rank writes its slot only when one of its blocking
//! MPI calls has sat idle for `--hang-after` seconds (and again when it moves
//! on). The launcher looks at the page every tick and declares a deadlock
//! only on certain evidence: every rank still running is published blocked
//! (or is in MPI_Finalize), no slot changed since the previous look (no rank
//! made progress in between), and for every pair of ranks the packets one
//! pushed equal the packets the other took (nothing in flight). Such a job
//! is at a fixed point: no rank can ever make progress again. A rank that
//! computes, sleeps outside MPI, or has a message on its way is never blocked
//! by this definition. The verdict then explains it: a collective mismatch, a
//! receive from a rank that has finished, or a wait-for cycle.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{fence, AtomicU64, Ordering};

use oxmpi_pmi::status as layout;

/// Exit status of a job ended because it deadlocked.
pub const EXIT_DEADLOCK: i32 = 86;

/// The job's status page, mapped in the launcher.
pub struct StatusFile {
    fd: OwnedFd,
    words: &'static [AtomicU64],
    size: u32,
    slot_words: usize,
}

/// One rank's slot, read consistently.
#[derive(Debug, Clone, Default)]
pub struct Slot {
    pub state: u64,
    pub gen: u64,
    pub since_ms: u64,
    pub sent: Vec<u64>,
    pub recvd: Vec<u64>,
    pub text: String,
}

impl StatusFile {
    /// Creates the page for `size` ranks. Its descriptor is inheritable
    /// (local ranks map it); `fd()` is the number they get.
    pub fn create(size: u32) -> std::io::Result<StatusFile> {
        let slot_words = layout::slot_words(size);
        let (fd, words) = crate::sys::inheritable_shared_words(slot_words * 8 * size as usize)?;
        Ok(StatusFile {
            fd,
            words,
            size,
            slot_words,
        })
    }

    pub fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Writes slot `r` for a rank that cannot (one on another host, which
    /// reports over PMI): the same seqlock write a local rank makes.
    pub fn write(&self, r: usize, rep: &layout::Report) {
        let w = &self.words[r * self.slot_words..(r + 1) * self.slot_words];
        let n = self.size as usize;
        let seq = w[layout::W_SEQ].load(Ordering::Relaxed);
        w[layout::W_SEQ].store(seq | 1, Ordering::Relaxed);
        fence(Ordering::Release);
        if rep.state != layout::STATE_RUNNING {
            let base = layout::HEADER_WORDS;
            for i in 0..n {
                w[base + i].store(rep.sent.get(i).copied().unwrap_or(0), Ordering::Relaxed);
                w[base + n + i].store(rep.recvd.get(i).copied().unwrap_or(0), Ordering::Relaxed);
            }
            let (words, len) = layout::encode_text(&rep.text);
            let t = layout::text_start(self.size);
            for (i, x) in words.iter().enumerate() {
                w[t + i].store(*x, Ordering::Relaxed);
            }
            w[layout::W_TEXT_LEN].store(len as u64, Ordering::Relaxed);
            w[layout::W_SINCE_MS].store(now_ms().saturating_sub(rep.idle_ms), Ordering::Relaxed);
        }
        w[layout::W_STATE].store(rep.state, Ordering::Relaxed);
        w[layout::W_GEN].fetch_add(1, Ordering::Relaxed);
        w[layout::W_SEQ].store((seq | 1) + 1, Ordering::Release);
    }

    /// Reads slot `r` (seqlock: retries while the rank writes it).
    pub fn read(&self, r: usize) -> Slot {
        let w = &self.words[r * self.slot_words..(r + 1) * self.slot_words];
        let n = self.size as usize;
        for _ in 0..1000 {
            let s1 = w[layout::W_SEQ].load(Ordering::Acquire);
            if s1 & 1 == 1 {
                std::thread::yield_now();
                continue;
            }
            let state = w[layout::W_STATE].load(Ordering::Relaxed);
            let gen = w[layout::W_GEN].load(Ordering::Relaxed);
            let since_ms = w[layout::W_SINCE_MS].load(Ordering::Relaxed);
            let len = (w[layout::W_TEXT_LEN].load(Ordering::Relaxed) as usize)
                .min(layout::TEXT_WORDS * 8);
            let base = layout::HEADER_WORDS;
            let sent: Vec<u64> = (0..n)
                .map(|i| w[base + i].load(Ordering::Relaxed))
                .collect();
            let recvd: Vec<u64> = (0..n)
                .map(|i| w[base + n + i].load(Ordering::Relaxed))
                .collect();
            let t = layout::text_start(self.size);
            let text_words: Vec<u64> = (0..len.div_ceil(8))
                .map(|i| w[t + i].load(Ordering::Relaxed))
                .collect();
            fence(Ordering::Acquire);
            if w[layout::W_SEQ].load(Ordering::Relaxed) == s1 {
                return Slot {
                    state,
                    gen,
                    since_ms,
                    sent,
                    recvd,
                    text: layout::decode_text(&text_words, len),
                };
            }
        }
        // A rank stopped mid-write (killed): report it as running, never as evidence.
        Slot::default()
    }
}

/// The parsed text of a blocked rank's slot.
#[derive(Debug, Clone, Default)]
pub struct Info {
    pub call: String,
    pub args: String,
    pub comm: String,
    /// World ranks it waits for; `None` = any rank.
    pub waits: Option<Vec<usize>>,
    /// (context, sequence number, name, root or "-").
    pub coll: Option<(u64, u64, String, String)>,
    pub reqs: Vec<String>,
    pub at: Option<String>,
}

pub fn parse(text: &str) -> Info {
    let mut i = Info::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        match k {
            "call" => i.call = v.to_string(),
            "args" => i.args = v.to_string(),
            "comm" => i.comm = v.to_string(),
            "waits" => {
                i.waits = if v.split(',').any(|x| x == "any") {
                    None
                } else {
                    Some(v.split(',').filter_map(|x| x.parse().ok()).collect())
                }
            }
            "coll" => {
                let f: Vec<&str> = v.split(' ').collect();
                if f.len() == 4 {
                    if let (Ok(c), Ok(s)) = (f[0].parse(), f[1].parse()) {
                        i.coll = Some((c, s, f[2].to_string(), f[3].to_string()));
                    }
                }
            }
            "req" => i.reqs.push(v.to_string()),
            "at" => i.at = Some(v.to_string()),
            _ => {}
        }
    }
    i
}

/// A rank as the checker sees it.
#[derive(Debug, Clone)]
pub enum View {
    /// Not blocked (computing, or not long in MPI).
    Running,
    /// Blocked in MPI; MT: other threads may still call MPI.
    Blocked { info: Info, mt: bool, since_ms: u64 },
    /// In MPI_Finalize, or exited.
    Finished { how: String },
}

/// Looks at the page; remembers the generations of the previous look.
pub struct Checker {
    prev: Option<Vec<u64>>,
    pub reported: bool,
}

impl Checker {
    pub fn new() -> Checker {
        Checker {
            prev: None,
            reported: false,
        }
    }

    /// `exited[r]`: the rank's process is gone. Returns the deadlock report
    /// once the evidence is certain.
    pub fn check(&mut self, page: &StatusFile, exited: &[Option<String>]) -> Option<String> {
        let slots: Vec<Slot> = (0..exited.len()).map(|r| page.read(r)).collect();
        let gens: Vec<u64> = slots.iter().map(|s| s.gen).collect();
        let stable = self.prev.as_ref() == Some(&gens);
        self.prev = Some(gens);
        if !stable {
            return None;
        }
        let mut any_blocked = false;
        for (r, s) in slots.iter().enumerate() {
            if exited[r].is_some() {
                continue;
            }
            match s.state {
                layout::STATE_BLOCKED => any_blocked = true,
                layout::STATE_FINALIZING => {}
                _ => return None,
            }
        }
        if !any_blocked {
            return None;
        }
        // Nothing in flight: what i pushed to j, j took. Packets to a rank that
        // has finished (exited, or in MPI_Finalize, which takes no more) can
        // never be taken: they are not in flight, they are lost.
        let n = slots.len();
        let finished: Vec<bool> = (0..n)
            .map(|r| exited[r].is_some() || slots[r].state == layout::STATE_FINALIZING)
            .collect();
        for i in 0..n {
            for j in 0..n {
                if i != j && !finished[j] && slots[i].sent.get(j) != slots[j].recvd.get(i) {
                    return None;
                }
            }
        }
        let views = views(&slots, exited);
        Some(report(&views, true))
    }
}

pub fn views(slots: &[Slot], exited: &[Option<String>]) -> Vec<View> {
    slots
        .iter()
        .zip(exited)
        .map(|(s, ex)| match (ex, s.state) {
            (Some(how), _) => View::Finished { how: how.clone() },
            (None, layout::STATE_FINALIZING) => View::Finished {
                how: "is in MPI_Finalize".into(),
            },
            (None, layout::STATE_BLOCKED | layout::STATE_BLOCKED_MT) => View::Blocked {
                info: parse(&s.text),
                mt: s.state == layout::STATE_BLOCKED_MT,
                since_ms: s.since_ms,
            },
            _ => View::Running,
        })
        .collect()
}

fn now_ms() -> u64 {
    crate::sys::monotonic_ms()
}

fn list(ranks: &[usize]) -> String {
    let names: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
    format!(
        "{} {}",
        if ranks.len() == 1 { "rank" } else { "ranks" },
        names.join(",")
    )
}

/// The per-rank lines, then (for a deadlock) the verdict.
pub fn report(views: &[View], deadlock: bool) -> String {
    report_titled(
        views,
        deadlock,
        "mpiexec: state of the job's ranks (SIGUSR1):",
    )
}

/// [`report`] with `title` as the first line of a state dump.
pub fn report_titled(views: &[View], deadlock: bool, title: &str) -> String {
    let mut out = String::new();
    let now = now_ms();
    if deadlock {
        let _ = writeln!(out, "mpiexec: DEADLOCK: every rank is blocked in MPI and no message is in flight; this job can never finish.");
    } else {
        let _ = writeln!(out, "{title}");
    }
    for (r, v) in views.iter().enumerate() {
        match v {
            View::Running => {
                let _ = writeln!(
                    out,
                    "  rank {r}: running (computing, or not blocked in MPI for long)"
                );
            }
            View::Finished { how } => {
                let _ = writeln!(out, "  rank {r}: finished ({how})");
            }
            View::Blocked { info, mt, since_ms } => {
                let secs = now.saturating_sub(*since_ms) as f64 / 1000.0;
                let _ = writeln!(
                    out,
                    "  rank {r}: blocked for {secs:.1} s in {}({}){}",
                    info.call,
                    info.args,
                    if *mt {
                        " [other threads may still call MPI]"
                    } else {
                        ""
                    }
                );
                if let Some((_, seq, name, _)) = &info.coll {
                    let _ = writeln!(out, "      collective {name} #{seq} on {}", info.comm);
                }
                for q in &info.reqs {
                    let _ = writeln!(out, "      pending request: {q}");
                }
                if let Some(at) = &info.at {
                    let _ = writeln!(out, "      called from {at}");
                }
            }
        }
    }
    if deadlock {
        let _ = writeln!(out, "mpiexec: verdict: {}", verdict(views));
    }
    out
}

fn call_of(v: &View) -> String {
    match v {
        View::Blocked { info, .. } => match &info.coll {
            Some((_, seq, name, root)) if root != "-" => {
                format!("{name} #{seq} (root {root}) on {}", info.comm)
            }
            Some((_, seq, name, _)) => format!("{name} #{seq} on {}", info.comm),
            None => info.call.clone(),
        },
        _ => String::new(),
    }
}

/// Explains a certain deadlock.
pub fn verdict(views: &[View]) -> String {
    let n = views.len();
    // 1. Collective mismatch: ranks of one communicator in different collectives.
    // Per communicator context: (rank, sequence number, call, root, communicator name).
    type InColl = (usize, u64, String, String, String);
    let mut by_comm: BTreeMap<u64, Vec<InColl>> = BTreeMap::new();
    for (r, v) in views.iter().enumerate() {
        if let View::Blocked { info, .. } = v {
            if let Some((ctx, seq, name, root)) = &info.coll {
                by_comm.entry(*ctx).or_default().push((
                    r,
                    *seq,
                    name.clone(),
                    root.clone(),
                    info.comm.clone(),
                ));
            }
        }
    }
    for entries in by_comm.values() {
        let mut groups: Vec<((u64, String, String), Vec<usize>)> = Vec::new();
        for (r, seq, name, root, _) in entries {
            let key = (*seq, name.clone(), root.clone());
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, rs)) => rs.push(*r),
                None => groups.push((key, vec![*r])),
            }
        }
        if groups.len() > 1 {
            let comm = &entries[0].4;
            let parts: Vec<String> = groups
                .iter()
                .map(|((seq, name, root), rs)| {
                    let root = if root == "-" {
                        String::new()
                    } else {
                        format!(" (root {root})")
                    };
                    format!(
                        "{} {} in {name} #{seq}{root}",
                        list(rs),
                        if rs.len() == 1 { "is" } else { "are" }
                    )
                })
                .collect();
            return format!("collective mismatch on {comm}: {}; every rank must call the same collectives in the same order, with the same root", parts.join(", "));
        }
    }
    // 2. A receive (or send) no rank can ever satisfy: all it waits for has finished.
    for (r, v) in views.iter().enumerate() {
        if let View::Blocked { info, .. } = v {
            let targets: Vec<usize> = match &info.waits {
                Some(w) => w.clone(),
                None => (0..n).filter(|&x| x != r).collect(),
            };
            if !targets.is_empty()
                && targets
                    .iter()
                    .all(|&t| matches!(views.get(t), Some(View::Finished { .. })))
            {
                let hows: Vec<String> = targets
                    .iter()
                    .map(|&t| match &views[t] {
                        View::Finished { how } => format!("rank {t} {how}"),
                        _ => String::new(),
                    })
                    .collect();
                return format!(
                    "rank {r} waits in {} for {}, but {}: no rank can ever satisfy it",
                    call_of(v),
                    list(&targets),
                    hows.join(", ")
                );
            }
        }
    }
    // 3. A wait-for cycle.
    let edges: Vec<Vec<usize>> = views
        .iter()
        .enumerate()
        .map(|(r, v)| match v {
            View::Blocked { info, .. } => {
                let mut t: Vec<usize> = match &info.waits {
                    Some(w) => w.clone(),
                    None => (0..n).filter(|&x| x != r).collect(),
                };
                // In a collective, ranks already in the same one are not waited for.
                if let Some((ctx, seq, _, _)) = &info.coll {
                    t.retain(|&x| !matches!(&views[x], View::Blocked { info: o, .. } if o.coll.as_ref().is_some_and(|(c, s, _, _)| c == ctx && s == seq)));
                }
                t.retain(|&x| x < n && matches!(views[x], View::Blocked { .. }));
                t
            }
            _ => Vec::new(),
        })
        .collect();
    if let Some(cycle) = find_cycle(&edges) {
        let parts: Vec<String> = cycle
            .iter()
            .enumerate()
            .map(|(k, &r)| {
                format!(
                    "rank {r} waits in {} for rank {}",
                    call_of(&views[r]),
                    cycle[(k + 1) % cycle.len()]
                )
            })
            .collect();
        return format!("wait-for cycle: {}", parts.join(", "));
    }
    "every rank waits for a message or collective that no rank will send".into()
}

fn find_cycle(edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    let n = edges.len();
    // 0 = new, 1 = on the stack, 2 = done.
    let mut color = vec![0u8; n];
    let mut stack: Vec<usize> = Vec::new();
    fn dfs(
        u: usize,
        edges: &[Vec<usize>],
        color: &mut [u8],
        stack: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        color[u] = 1;
        stack.push(u);
        for &v in &edges[u] {
            if color[v] == 1 {
                let at = stack.iter().position(|&x| x == v).unwrap_or(0);
                return Some(stack[at..].to_vec());
            }
            if color[v] == 0 {
                if let Some(c) = dfs(v, edges, color, stack) {
                    return Some(c);
                }
            }
        }
        stack.pop();
        color[u] = 2;
        None
    }
    for s in 0..n {
        if color[s] == 0 {
            if let Some(c) = dfs(s, edges, &mut color, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked(text: &str) -> View {
        View::Blocked {
            info: parse(text),
            mt: false,
            since_ms: 0,
        }
    }

    #[test]
    fn recv_recv_cycle() {
        let v = vec![
            blocked("call=MPI_Recv\nwaits=1\n"),
            blocked("call=MPI_Recv\nwaits=0\n"),
        ];
        assert_eq!(verdict(&v), "wait-for cycle: rank 0 waits in MPI_Recv for rank 1, rank 1 waits in MPI_Recv for rank 0");
    }

    #[test]
    fn collective_mismatch_names_both_groups() {
        let v = vec![
            blocked("call=MPI_Bcast\ncomm=MPI_COMM_WORLD\ncoll=0 1 MPI_Bcast 0\nwaits=1,2\n"),
            blocked("call=MPI_Reduce\ncomm=MPI_COMM_WORLD\ncoll=0 1 MPI_Reduce 0\nwaits=0,2\n"),
            blocked("call=MPI_Reduce\ncomm=MPI_COMM_WORLD\ncoll=0 1 MPI_Reduce 0\nwaits=0,1\n"),
        ];
        let s = verdict(&v);
        assert!(
            s.contains("rank 0 is in MPI_Bcast #1 (root 0)")
                && s.contains("ranks 1,2 are in MPI_Reduce #1"),
            "{s}"
        );
    }

    #[test]
    fn receive_from_a_finished_rank() {
        let v = vec![
            View::Finished {
                how: "is in MPI_Finalize".into(),
            },
            blocked("call=MPI_Recv\nwaits=0\n"),
        ];
        let s = verdict(&v);
        assert!(
            s.starts_with("rank 1 waits in MPI_Recv for rank 0, but rank 0 is in MPI_Finalize"),
            "{s}"
        );
    }
}
