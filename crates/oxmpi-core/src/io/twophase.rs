//! Two-phase collective I/O (the `_all` and ordered calls).
//!
//! The ranks agree on the byte range the whole collective touches and split
//! it into one contiguous file domain per aggregator (one rank per host by
//! default, `cb_nodes` otherwise; domains aligned to `striping_unit`, or to
//! 1 MiB when large). Each aggregator then works through its domain in
//! windows of `cb_buffer_size` bytes, one round per window:
//!
//! - write: every rank sends each aggregator the pieces of its view that fall
//!   in the aggregator's window (a header of (offset, length) pairs, then the
//!   data); the aggregator lays them into its window buffer and issues one
//!   `pwrite` per maximal covered run — one per round when the ranks' data
//!   tile the window, as a checkpoint's do; holes are never written.
//! - read: every rank sends the (offset, length) pairs it wants; the
//!   aggregator reads the span they cover with one `pread` and answers each
//!   rank with its bytes (short at end of file).
//!
//! Message sizes are exchanged with an all-to-all per round, then the pieces
//! travel point-to-point on the file's private communicator. Between ranks of
//! one host the data take a shorter way: each aggregator keeps a window of
//! `cb_buffer_size` bytes in shared memory (a `memfd` its host's ranks map
//! through `/proc/PID/fd`), senders copy their pieces straight into it and send
//! only the (offset, length) list, and the aggregator `pwrite`s from it (reads:
//! `pread`s into it and answers with the valid length) — one copy, and no
//! system call per piece. The rounds keep the window safe: a rank writes into
//! round r+1's window only after the all-to-all of round r+1, which the
//! aggregator enters after its `pwrite` of round r (reads alike). Errors (an
//! aggregator's failed `pwrite`) do not break the protocol: every rank learns
//! the first one at the end.

use crate::buf::{self, RecvBuf, SendBuf};
use crate::error::{ErrorClass, MpiError, Result};
use crate::pt2pt;
use crate::request::{Request, Status};
use crate::SendMode;

use super::sys::IoWindow as ShmWindow;
use super::{allgather_u64, alltoall_u64, sys, File, Hints, View};

/// The shared-memory windows a rank holds for two-phase I/O on one file.
#[derive(Default)]
pub(crate) struct WinCache {
    /// This rank's window, when it aggregates for ranks of its host.
    own: Option<ShmWindow>,
    /// Windows of same-host aggregators: (pid, fd, len) they were announced as.
    peers: std::collections::HashMap<i32, ((u64, u64, u64), ShmWindow)>,
}

impl WinCache {
    /// The window holding aggregator `agg`'s round data, as seen by rank `me`.
    fn get(&self, agg: i32, me: i32) -> Option<&ShmWindow> {
        if agg == me {
            self.own.as_ref()
        } else {
            self.peers.get(&agg).map(|(_, w)| w)
        }
    }
}

/// (file offset, length, stream offset) of a piece of this rank's access.
type Seg = (u64, u64, u64);
/// A parsed message header: (offset, length) pairs, data in the window, header bytes.
type Header = (Vec<(u64, u64)>, bool, usize);
/// A read request of one round: aggregator, window start, segments, request
/// message, reply buffer, whether the data come through the shared window.
type Want = (i32, u64, Vec<Seg>, Vec<u8>, Vec<u8>, bool);

const TAG_DATA: i32 = 7;
const TAG_REQ: i32 = 8;
const TAG_REPLY: i32 = 9;

struct Plan {
    aggs: Vec<i32>,
    gmin: u64,
    gmax: u64,
    per: u64,
    bsize: u64,
    rounds: u64,
}

impl Plan {
    fn window(&self, agg: usize, round: u64) -> (u64, u64) {
        let ds = self.gmin + agg as u64 * self.per;
        let de = (ds + self.per).min(self.gmax);
        let ws = ds + round * self.bsize;
        if ws >= de {
            return (ws, ws);
        }
        (ws, (ws + self.bsize).min(de))
    }
}

/// My pieces: (file offset, length, stream offset).
fn my_pieces(view: &View, start: u64, len: u64) -> Vec<(u64, u64, u64)> {
    let mut v = Vec::new();
    let mut s = 0;
    view.pieces(start, len, |o, l| {
        v.push((o, l, s));
        s += l;
    });
    v
}

fn plan(
    f: &File,
    hints: &Hints,
    pieces: &[(u64, u64, u64)],
    wc: &mut WinCache,
) -> Result<Option<Plan>> {
    let inner = f.inner();
    let comm = &inner.comm;
    let me = comm.rank();
    let (lo, hi) = match (pieces.first(), pieces.last()) {
        (Some(a), Some(b)) => (a.0, b.0 + b.1),
        _ => (u64::MAX, 0),
    };
    let aggs = f.aggregators(hints);
    let bsize = hints.cb_buffer_size.max(1);
    if !hints.cb_window {
        *wc = WinCache::default();
    }
    // An aggregator with other ranks on its host offers them a window.
    let host = inner.hosts[me as usize];
    let shares = hints.cb_window && inner.hosts.iter().filter(|&&h| h == host).count() > 1;
    let mut offer = [0u64; 3];
    if aggs.contains(&me) && shares {
        if wc.own.as_ref().is_none_or(|w| w.len() as u64 != bsize) {
            wc.own = ShmWindow::create(bsize as usize).ok();
        }
        if let Some(w) = &wc.own {
            offer = [std::process::id() as u64, w.fd() as u64, w.len() as u64];
        }
    }
    let all = allgather_u64(comm, &[lo, hi, offer[0], offer[1], offer[2]])?;
    let gmin = all.chunks(5).map(|c| c[0]).min().unwrap_or(u64::MAX);
    let gmax = all.chunks(5).map(|c| c[1]).max().unwrap_or(0);
    if gmin >= gmax {
        return Ok(None);
    }
    for &a in &aggs {
        let c = &all[a as usize * 5..a as usize * 5 + 5];
        let key = (c[2], c[3], c[4]);
        if a == me || key.0 == 0 || inner.hosts[a as usize] != host || !hints.cb_window {
            continue;
        }
        if wc.peers.get(&a).is_none_or(|(k, _)| *k != key) {
            match ShmWindow::open(key.0 as u32, key.1 as i32, key.2 as usize) {
                Ok(w) => {
                    wc.peers.insert(a, (key, w));
                }
                Err(_) => {
                    wc.peers.remove(&a);
                }
            }
        }
    }
    let na = aggs.len() as u64;
    let mut per = (gmax - gmin).div_ceil(na);
    let align = if hints.striping_unit > 0 {
        hints.striping_unit
    } else if per >= 4 << 20 {
        1 << 20
    } else {
        1
    };
    per = per.div_ceil(align) * align;
    // A window must hold a whole round.
    let bsize = match wc.get(me, me) {
        Some(w) => bsize.min(w.len() as u64),
        None => bsize,
    };
    Ok(Some(Plan {
        aggs,
        gmin,
        gmax,
        per,
        bsize,
        rounds: per.div_ceil(bsize),
    }))
}

/// The segments of `pieces` inside `[ws, we)`: (offset, length, stream offset).
/// `cur` is where the previous window's search ended (windows only move on).
fn segments(pieces: &[(u64, u64, u64)], cur: &mut usize, ws: u64, we: u64) -> Vec<(u64, u64, u64)> {
    let mut out = Vec::new();
    if ws >= we {
        return out;
    }
    while *cur < pieces.len() && pieces[*cur].0 + pieces[*cur].1 <= ws {
        *cur += 1;
    }
    let mut i = *cur;
    while i < pieces.len() && pieces[i].0 < we {
        let (o, l, s) = pieces[i];
        let a = o.max(ws);
        let b = (o + l).min(we);
        if a < b {
            out.push((a, b - a, s + (a - o)));
        }
        if o + l > we {
            break;
        }
        i += 1;
    }
    out
}

/// A message's (offset, length) list; `in_window`: the data are (to be) in
/// the aggregator's shared window, not in the message.
fn header(segs: &[(u64, u64, u64)], extra: usize, in_window: bool) -> Vec<u8> {
    let mut m = Vec::with_capacity(16 + 16 * segs.len() + extra);
    m.extend_from_slice(&(segs.len() as u64).to_le_bytes());
    m.extend_from_slice(&(in_window as u64).to_le_bytes());
    for &(o, l, _) in segs {
        m.extend_from_slice(&o.to_le_bytes());
        m.extend_from_slice(&l.to_le_bytes());
    }
    m
}

fn parse_header(m: &[u8]) -> Option<Header> {
    let word = |i: usize| {
        m.get(i * 8..i * 8 + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
    };
    let n = word(0)? as usize;
    let in_window = word(1)? != 0;
    let mut v = Vec::with_capacity(n.min(m.len() / 16));
    for k in 0..n {
        v.push((word(2 + 2 * k)?, word(3 + 2 * k)?));
    }
    Some((v, in_window, 16 + 16 * n))
}

fn waitall(reqs: &mut [Request]) -> Result<Vec<Status>> {
    let mut st = vec![Status::EMPTY; reqs.len()];
    pt2pt::waitall(reqs, &mut st)?;
    Ok(st)
}

/// The first error any rank had (collective), or `Ok`.
fn agree_errors(f: &File, call: &str, mine: Option<MpiError>) -> Result<()> {
    let codes = allgather_u64(
        &f.inner().comm,
        &[mine.as_ref().map_or(0, |e| e.class.code() as u64)],
    )?;
    if let Some(e) = mine {
        return Err(e);
    }
    match codes.iter().enumerate().find(|(_, &c)| c != 0) {
        None => Ok(()),
        Some((r, &c)) => {
            let class = ErrorClass::from_code(c as i32).unwrap_or(ErrorClass::Io);
            Err(MpiError::new(
                class,
                format!(
                    "{call}: rank {r}, aggregating for `{}`, failed ({})",
                    f.path().display(),
                    class.name()
                ),
            ))
        }
    }
}

/// Collective write of the stream bytes `data` starting at stream offset `start`.
pub(crate) fn write(
    f: &File,
    call: &str,
    view: &View,
    hints: &Hints,
    start: u64,
    data: &[u8],
) -> Result<()> {
    let comm = &f.inner().comm;
    let n = comm.size() as usize;
    let me = comm.rank();
    let pieces = my_pieces(view, start, data.len() as u64);
    let mut wc = f.inner().win.lock().unwrap_or_else(|p| p.into_inner());
    let Some(p) = plan(f, hints, &pieces, &mut wc)? else {
        return Ok(());
    };
    let my_agg = p.aggs.iter().position(|&a| a == me);
    let mut cur = vec![0usize; p.aggs.len()];
    let mut wbuf: Vec<u8> = Vec::new();
    let mut err: Option<MpiError> = None;
    for round in 0..p.rounds {
        // What I send to each aggregator this round (the data go into its
        // window when we share one).
        let mut msgs: Vec<(i32, Vec<u8>)> = Vec::new();
        let mut fills: Vec<(i32, u64, Vec<Seg>)> = Vec::new();
        let mut sizes = vec![0u64; n];
        for (ai, &agg) in p.aggs.iter().enumerate() {
            let (ws, we) = p.window(ai, round);
            let segs = segments(&pieces, &mut cur[ai], ws, we);
            if segs.is_empty() {
                continue;
            }
            let m = match wc.get(agg, me) {
                Some(_) => {
                    // The data go into the window after this round's all-to-all.
                    fills.push((agg, ws, segs.clone()));
                    header(&segs, 0, true)
                }
                None => {
                    let bytes: u64 = segs.iter().map(|s| s.1).sum();
                    let mut m = header(&segs, bytes as usize, false);
                    for &(_, l, s) in &segs {
                        m.extend_from_slice(&data[s as usize..(s + l) as usize]);
                    }
                    m
                }
            };
            sizes[agg as usize] = m.len() as u64;
            msgs.push((agg, m));
        }
        let incoming = alltoall_u64(comm, &sizes)?;
        for (agg, ws, segs) in &fills {
            let w = wc.get(*agg, me).expect("window");
            for &(o, l, s) in segs {
                // The aggregator entered this round's all-to-all after
                // writing out the previous round, and reads the window only after
                // our message below: until then these bytes are ours alone.
                w.write((o - ws) as usize, &data[s as usize..(s + l) as usize]);
            }
        }
        let (srcs, mut bufs) = match my_agg {
            Some(_) => incoming_bufs(&incoming),
            None => Default::default(),
        };
        // The messages' buffers are lent to their requests until the scope ends
        // (which completes any request an error left in flight).
        buf::scope(|sc| -> Result<()> {
            let mut reqs = Vec::new();
            for (b, &src) in bufs.iter_mut().zip(&srcs) {
                reqs.push(pt2pt::irecv(sc, comm, RecvBuf::bytes(b), src, TAG_DATA)?);
            }
            for (agg, m) in &msgs {
                reqs.push(pt2pt::isend(
                    sc,
                    comm,
                    SendBuf::bytes(m),
                    *agg,
                    TAG_DATA,
                    SendMode::Standard,
                )?);
            }
            waitall(&mut reqs).map(drop)
        })?;
        if let Some(ai) = my_agg {
            if err.is_none() {
                let (ws, we) = p.window(ai, round);
                let span = (we - ws) as usize;
                let stage = match wc.get(me, me) {
                    // Every sender of this round has sent its message, so
                    // its pieces are in; nobody writes the window again before the
                    // next round's all-to-all, which we enter after this flush.
                    Some(w) => Stage::Win(w),
                    None => {
                        if wbuf.len() < span {
                            wbuf.resize(span, 0);
                        }
                        Stage::Mem(&mut wbuf[..span])
                    }
                };
                if let Err(e) = flush_window(f, call, (ws, we), &bufs, stage) {
                    err = Some(e);
                }
            }
        }
    }
    agree_errors(f, call, err)
}

/// The ranks that send an aggregator a message this round (`incoming[r] > 0`), and
/// a buffer of each one's size.
fn incoming_bufs(incoming: &[u64]) -> (Vec<i32>, Vec<Vec<u8>>) {
    let srcs: Vec<i32> = (0..incoming.len())
        .filter(|&r| incoming[r] > 0)
        .map(|r| r as i32)
        .collect();
    let bufs = srcs
        .iter()
        .map(|&r| vec![0u8; incoming[r as usize] as usize])
        .collect();
    (srcs, bufs)
}

/// Lays the received pieces into the window buffer (those sent through the
/// shared window are there already) and writes each covered run.
fn flush_window(
    f: &File,
    call: &str,
    (ws, we): (u64, u64),
    bufs: &[Vec<u8>],
    mut wbuf: Stage<'_>,
) -> Result<()> {
    let mut segs: Vec<(u64, u64)> = Vec::new();
    for b in bufs {
        let (hdr, in_window, mut at) =
            parse_header(b).ok_or_else(|| MpiError::intern(call, "malformed two-phase message"))?;
        for (o, l) in hdr {
            if o < ws || o + l > we || (!in_window && at + l as usize > b.len()) {
                return Err(MpiError::intern(call, "two-phase piece outside its window"));
            }
            if !in_window {
                let w = (o - ws) as usize;
                wbuf.put(w, &b[at..at + l as usize]);
                at += l as usize;
            }
            segs.push((o, l));
        }
    }
    segs.sort_unstable_by_key(|s| s.0);
    let mut run: Option<(u64, u64)> = None;
    let mut runs = Vec::new();
    for &(o, l) in &segs {
        run = match run {
            Some((s, e)) if o <= e => Some((s, e.max(o + l))),
            Some(r) => {
                runs.push(r);
                Some((o, o + l))
            }
            None => Some((o, o + l)),
        };
    }
    runs.extend(run);
    for (s, e) in runs {
        let w = (s - ws) as usize;
        wbuf.to_file(w, (e - s) as usize, &f.inner().file, s)
            .map_err(|e| sys::os_error(call, f.path(), "cannot write", &e))?;
    }
    Ok(())
}

use std::os::unix::fs::FileExt;

/// Where an aggregator assembles a round's window: the shared window its host's
/// ranks write into (reached only by copies and system calls), or private memory.
enum Stage<'a> {
    Win(&'a ShmWindow),
    Mem(&'a mut [u8]),
}

impl Stage<'_> {
    /// Copies `data` in at window offset `off`.
    fn put(&mut self, off: usize, data: &[u8]) {
        match self {
            Stage::Win(w) => w.write(off, data),
            Stage::Mem(m) => m[off..off + data.len()].copy_from_slice(data),
        }
    }

    /// Appends window bytes `[off, off + n)` to `out`.
    fn get_append(&self, off: usize, n: usize, out: &mut Vec<u8>) {
        match self {
            Stage::Win(w) => w.read_append(off, n, out),
            Stage::Mem(m) => out.extend_from_slice(&m[off..off + n]),
        }
    }

    /// Writes window bytes `[off, off + n)` to `file` at `file_off`.
    fn to_file(
        &self,
        off: usize,
        n: usize,
        file: &std::fs::File,
        file_off: u64,
    ) -> std::io::Result<()> {
        match self {
            Stage::Win(w) => w.write_to_file(off, n, file, file_off),
            Stage::Mem(m) => file.write_all_at(&m[off..off + n], file_off),
        }
    }

    /// Reads `f` from `file_off` into window bytes `[off, off + n)`, up to end of file.
    fn from_file(
        &mut self,
        off: usize,
        n: usize,
        f: &File,
        file_off: u64,
    ) -> std::io::Result<usize> {
        match self {
            Stage::Win(w) => w.read_from_file(off, n, &f.inner().file, file_off),
            Stage::Mem(m) => f.pread_full(&mut m[off..off + n], file_off),
        }
    }
}

/// Collective read of stream bytes `[start, start + out.len())`; returns the
/// bytes there were before end of file.
pub(crate) fn read(
    f: &File,
    call: &str,
    view: &View,
    hints: &Hints,
    start: u64,
    out: &mut [u8],
) -> Result<u64> {
    let comm = &f.inner().comm;
    let n = comm.size() as usize;
    let me = comm.rank();
    let pieces = my_pieces(view, start, out.len() as u64);
    let mut wc = f.inner().win.lock().unwrap_or_else(|p| p.into_inner());
    let Some(p) = plan(f, hints, &pieces, &mut wc)? else {
        return Ok(0);
    };
    let my_agg = p.aggs.iter().position(|&a| a == me);
    let mut cur = vec![0usize; p.aggs.len()];
    let mut wbuf: Vec<u8> = Vec::new();
    let mut err: Option<MpiError> = None;
    let mut got_total = 0u64;
    for round in 0..p.rounds {
        let mut wants: Vec<Want> = Vec::new();
        let mut sizes = vec![0u64; n];
        for (ai, &agg) in p.aggs.iter().enumerate() {
            let (ws, we) = p.window(ai, round);
            let segs = segments(&pieces, &mut cur[ai], ws, we);
            if segs.is_empty() {
                continue;
            }
            let shared = wc.get(agg, me).is_some();
            let bytes: u64 = if shared {
                8
            } else {
                segs.iter().map(|s| s.1).sum()
            };
            let req = header(&segs, 0, shared);
            sizes[agg as usize] = req.len() as u64;
            wants.push((agg, ws, segs, req, vec![0u8; bytes as usize], shared));
        }
        let incoming = alltoall_u64(comm, &sizes)?;
        // Every message buffer is lent to its request until the scope that lent it
        // ends (which completes any request an error left in flight).
        let st = buf::scope(|sc| -> Result<Vec<Status>> {
            let mut mine = Vec::new();
            for (agg, _, _, req, reply, _) in wants.iter_mut() {
                mine.push(pt2pt::irecv(
                    sc,
                    comm,
                    RecvBuf::bytes(reply),
                    *agg,
                    TAG_REPLY,
                )?);
                mine.push(pt2pt::isend(
                    sc,
                    comm,
                    SendBuf::bytes(req),
                    *agg,
                    TAG_REQ,
                    SendMode::Standard,
                )?);
            }
            let Some(ai) = my_agg else {
                return waitall(&mut mine);
            };
            let (srcs, mut bufs) = incoming_bufs(&incoming);
            buf::scope(|sc| -> Result<()> {
                let mut rq = Vec::new();
                for (b, &src) in bufs.iter_mut().zip(&srcs) {
                    rq.push(pt2pt::irecv(sc, comm, RecvBuf::bytes(b), src, TAG_REQ)?);
                }
                waitall(&mut rq).map(drop)
            })?;
            let (ws, we) = p.window(ai, round);
            let mut asked = Vec::new();
            for b in &bufs {
                let (h, in_window, _) = parse_header(b)
                    .ok_or_else(|| MpiError::intern(call, "malformed two-phase request"))?;
                asked.push((h, in_window));
            }
            let lo = asked
                .iter()
                .flat_map(|a| &a.0)
                .map(|s| s.0)
                .min()
                .unwrap_or(ws)
                .max(ws);
            let hi = asked
                .iter()
                .flat_map(|a| &a.0)
                .map(|s| s.0 + s.1)
                .max()
                .unwrap_or(ws)
                .min(we);
            let span = (we - ws) as usize;
            let mut stage = match wc.get(me, me) {
                // The ranks that read this round's window do so after our
                // reply, and are done before the next round's all-to-all, which
                // we enter after answering.
                Some(w) => Stage::Win(w),
                None => {
                    if wbuf.len() < span {
                        wbuf.resize(span, 0);
                    }
                    Stage::Mem(&mut wbuf[..span])
                }
            };
            let mut valid_end = lo;
            if hi > lo && err.is_none() {
                match stage.from_file((lo - ws) as usize, (hi - lo) as usize, f, lo) {
                    Ok(g) => valid_end = lo + g as u64,
                    Err(e) => err = Some(sys::os_error(call, f.path(), "cannot read", &e)),
                }
            }
            let mut replies: Vec<Vec<u8>> = Vec::new();
            for (h, in_window) in &asked {
                let mut r = Vec::new();
                if *in_window {
                    r.extend_from_slice(&valid_end.to_le_bytes());
                } else {
                    for &(o, l) in h {
                        if o >= valid_end {
                            break;
                        }
                        let e = (o + l).min(valid_end);
                        stage.get_append((o - ws) as usize, (e - o) as usize, &mut r);
                        if e < o + l {
                            break;
                        }
                    }
                }
                replies.push(r);
            }
            buf::scope(|sc| -> Result<Vec<Status>> {
                let mut serve = Vec::new();
                for (r, &src) in replies.iter().zip(&srcs) {
                    serve.push(pt2pt::isend(
                        sc,
                        comm,
                        SendBuf::bytes(r),
                        src,
                        TAG_REPLY,
                        SendMode::Standard,
                    )?);
                }
                let st = waitall(&mut mine)?;
                waitall(&mut serve)?;
                Ok(st)
            })
        })?;
        for (k, (agg, ws, segs, _, reply, shared)) in wants.iter().enumerate() {
            if *shared {
                let valid_end = u64::from_le_bytes(reply[..8].try_into().unwrap());
                let w = wc.get(*agg, me).expect("window");
                for &(o, l, s) in segs {
                    if o >= valid_end {
                        break;
                    }
                    let e = (o + l).min(valid_end);
                    // The aggregator filled this round's window before its reply and
                    // leaves it alone until the next round's all-to-all.
                    w.read(
                        (o - ws) as usize,
                        &mut out[s as usize..(s + e - o) as usize],
                    );
                    got_total += e - o;
                }
                continue;
            }
            let got = st[2 * k].count_bytes;
            let mut at = 0usize;
            for &(_, l, s) in segs {
                if at >= got {
                    break;
                }
                let take = (l as usize).min(got - at);
                out[s as usize..s as usize + take].copy_from_slice(&reply[at..at + take]);
                at += take;
            }
            got_total += got as u64;
        }
    }
    agree_errors(f, call, err)?;
    Ok(got_total)
}
