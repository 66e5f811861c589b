//! Data access: blocking, non-blocking and split-collective reads and writes
//! through the view, independent (with atomic-mode locks) or collective (two-phase
//! or handed to the file's I/O worker), and the state an access snapshots.

use super::datarep::{from_file_stream, to_file_stream};
use super::*;
use crate::buf::{BufScope, Loan, RecvBuf, Region, SendBuf};

impl File {
    /// One data access (every blocking `MPI_File_{read,write}*` call comes here):
    /// a write reads the elements of `buf`, a read writes them (`buf` must then be
    /// exclusive). Returns the status (bytes moved, of the datatype's packed stream).
    pub fn access(
        &self,
        call: &str,
        pos: Pos,
        collective: bool,
        dir: Dir,
        buf: &mut Region<'_, &Datatype>,
    ) -> Result<Status> {
        let snap = self.check_access(call, pos, dir, buf.count(), buf.datatype())?;
        if collective || pos == Pos::Ordered {
            // The file's communicator carries one collective at a time, in start order.
            self.0.worker.quiesce();
        }
        self.perform(call, &snap, pos, collective, dir, buf, true)
    }

    /// Checks an access and takes what it needs of the file's state.
    fn check_access(
        &self,
        call: &str,
        pos: Pos,
        dir: Dir,
        count: usize,
        dt: &Datatype,
    ) -> Result<Snap> {
        let (view, atomic, hints, ipos) = {
            let st = self.live(call)?;
            (st.view.clone(), st.atomic, st.hints.clone(), st.pos)
        };
        match dir {
            Dir::Write => self.writable(call)?,
            Dir::Read => {
                if self.0.amode & mode::WRONLY != 0 {
                    return Err(MpiError::new(
                        ErrorClass::Access,
                        format!(
                            "{call}: `{}` was opened MPI_MODE_WRONLY",
                            self.0.path.display()
                        ),
                    ));
                }
            }
        }
        if matches!(pos, Pos::At(_) | Pos::Individual) {
            self.no_seq(call)?;
        }
        let bytes = dt.size().checked_mul(count).ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Count,
                call,
                "count",
                "count times the datatype's size overflows",
            )
        })? as u64;
        // The access's data stream is in the file's representation.
        let fbytes = view.datarep.file_bytes(dt, count)?;
        let es = view.etype_size();
        if es > 0 && fbytes % es != 0 {
            return Err(MpiError::arg(
                ErrorClass::Type,
                call,
                "datatype",
                format!(
                    "{fbytes} bytes in the file are not a whole number of etypes of {es} bytes"
                ),
            ));
        }
        if es == 0 && fbytes > 0 {
            return Err(MpiError::arg(
                ErrorClass::Type,
                call,
                "fh",
                "the view's etype has size 0",
            ));
        }
        if let Datarep::User(name, conv) = &view.datarep {
            let converts = match dir {
                Dir::Write => conv.converts_writes(),
                Dir::Read => conv.converts_reads(),
            };
            if !converts && !view.datarep.same_sizes(dt)? {
                return Err(MpiError::arg(
                    ErrorClass::Conversion,
                    call,
                    "datatype",
                    format!("data representation \"{name}\" gives these types other sizes in the file but has no {} conversion function", if dir == Dir::Write { "write" } else { "read" }),
                ));
            }
        }
        Ok(Snap {
            view,
            atomic,
            hints,
            ipos,
            bytes,
            fbytes,
        })
    }

    /// Runs an access checked by [`check_access`](File::check_access);
    /// `track`: advance the individual pointer by what was moved (blocking
    /// calls; non-blocking ones advanced it when they started).
    #[allow(clippy::too_many_arguments)]
    fn perform(
        &self,
        call: &str,
        snap: &Snap,
        pos: Pos,
        collective: bool,
        dir: Dir,
        buf: &mut Region<'_, &Datatype>,
        track: bool,
    ) -> Result<Status> {
        let Snap {
            view,
            atomic,
            hints,
            ipos,
            bytes,
            fbytes,
        } = snap;
        let (atomic, ipos, bytes, fbytes) = (*atomic, *ipos, *bytes, *fbytes);
        let es = view.etype_size();
        let netypes = fbytes.checked_div(es).unwrap_or(0);
        let start = match pos {
            Pos::At(o) => o * es,
            Pos::Individual => ipos * es,
            Pos::Shared => self.shfp_add(call, netypes)? * es,
            Pos::Ordered => {
                let counts = allgather_u64(&self.0.comm, &[netypes])?;
                let me = self.0.comm.rank() as usize;
                let total: u64 = counts.iter().sum();
                let mut base = [0u64];
                let r = if me == 0 {
                    self.shfp_add(call, total).map(|b| base[0] = b)
                } else {
                    Ok(())
                };
                self.agree(call, r)?;
                bcast_u64(&self.0.comm, &mut base)?;
                (base[0] + counts[..me].iter().sum::<u64>()) * es
            }
        };
        let collective = collective || pos == Pos::Ordered;
        let n = self.0.comm.size();
        // Two-phase I/O needs the pieces in file order.
        let in_order = view.in_order(start, fbytes);
        let use_2p = |m: CbMode| collective && n > 1 && !atomic && m != CbMode::Disable && in_order;
        let moved = match dir {
            Dir::Write => {
                let data = to_file_stream(call, &view.datarep, buf, fbytes)?;
                if use_2p(hints.cb_write) {
                    twophase::write(self, call, view, hints, start, &data)?;
                } else {
                    self.write_indep(call, view, atomic, start, &data)?;
                    if collective {
                        barrier(&self.0.comm)?;
                    }
                }
                (fbytes, bytes)
            }
            Dir::Read => {
                let direct = matches!(view.datarep, Datarep::Native | Datarep::Internal)
                    && buf.datatype().is_contiguous();
                let read = |out: &mut [u8]| -> Result<u64> {
                    if use_2p(hints.cb_read) {
                        twophase::read(self, call, view, hints, start, out)
                    } else {
                        let g = self.read_indep(call, view, atomic, start, out)?;
                        if collective {
                            barrier(&self.0.comm)?;
                        }
                        Ok(g)
                    }
                };
                if direct && bytes > 0 {
                    // A contiguous datatype's `count` elements are the `bytes` bytes
                    // from its true lower bound, straight into the caller's memory.
                    let out = buf.bytes_mut().expect("a contiguous datatype");
                    let got = read(&mut out[..bytes as usize])?;
                    (got, got)
                } else {
                    let mut tmp = vec![0u8; fbytes as usize];
                    let got = read(&mut tmp)?;
                    let native = if direct {
                        got
                    } else {
                        from_file_stream(call, &view.datarep, &mut tmp[..got as usize], buf)?
                    };
                    (got, native)
                }
            }
        };
        // `moved`: bytes of the file's stream; `native`: bytes of memory data.
        let (moved, native) = moved;
        if pos == Pos::Individual && track {
            self.st().pos = ipos + moved.checked_div(es).unwrap_or(0);
        }
        Ok(Status {
            source: crate::request::PROC_NULL,
            tag: crate::matching::ANY_TAG,
            error: 0,
            count_bytes: native as usize,
            cancelled: false,
        })
    }

    /// A non-blocking access of the lent buffer (a read needs a receive
    /// descriptor's loan). Collective ones run on the file's I/O worker (see
    /// [`worker`]), which holds the loan until the access is done, and the call
    /// returns at once; independent ones run now and hand back a completed request.
    pub fn iaccess(
        &self,
        call: &str,
        pos: Pos,
        collective: bool,
        dir: Dir,
        mut buf: Loan,
    ) -> Result<Request> {
        Self::check_loan(call, dir, &buf)?;
        if !(collective || pos == Pos::Ordered) {
            let s = self.access(call, pos, collective, dir, &mut buf.region())?;
            return Ok(crate::runtime::engine()?.with_state(|st| st.done_request(s)));
        }
        self.start_background(call, pos, dir, buf)
    }

    /// A read writes the loan's memory: it must be an exclusive one.
    fn check_loan(call: &str, dir: Dir, buf: &Loan) -> Result<()> {
        if dir == Dir::Read && !buf.is_exclusive() {
            return Err(MpiError::intern(
                call,
                "a read was given a buffer lent for reading only",
            ));
        }
        Ok(())
    }

    /// Queues a collective access on the worker. The individual pointer moves
    /// now, by the amount requested (MPI-4.1 §14.4.3: it is updated when a
    /// non-blocking access starts).
    fn start_background(&self, call: &str, pos: Pos, dir: Dir, mut buf: Loan) -> Result<Request> {
        let snap = {
            let r = buf.region();
            self.check_access(call, pos, dir, r.count(), r.datatype())?
        };
        let pos = match pos {
            Pos::Individual => {
                let es = snap.view.etype_size();
                let mut st = self.st();
                let p = st.pos;
                st.pos = p + snap.fbytes.checked_div(es).unwrap_or(0);
                Pos::At(p)
            }
            p => p,
        };
        let me = self.clone();
        let call_s = call.to_string();
        // The work item owns the loan; the request completes after it has run.
        self.0.worker.submit(call, move || {
            me.perform(&call_s, &snap, pos, true, dir, &mut buf.region(), false)
        })
    }

    /// A split collective's `_begin`: starts the access on the file's I/O
    /// worker and returns; `_end` waits for it (the worker holds the loan until then).
    pub fn split_begin(&self, call: &str, pos: Pos, dir: Dir, buf: Loan) -> Result<()> {
        Self::check_loan(call, dir, &buf)?;
        if self.live(call)?.split.is_some() {
            return Err(MpiError::new(ErrorClass::Other, format!("{call}: another split collective is pending on this file (one at a time per file handle)")));
        }
        let req = self.start_background(call, pos, dir, buf)?;
        self.st().split = Some(Split {
            pos_kind: pos_kind(pos),
            dir,
            req,
        });
        Ok(())
    }

    /// A split collective's `_end`: waits for the matching `_begin`'s access.
    pub fn split_end(&self, call: &str, pos: Pos, dir: Dir) -> Result<Status> {
        let mut req = {
            let mut st = self.live(call)?;
            match st.split {
                Some(s) if s.dir == dir && s.pos_kind == pos_kind(pos) => {
                    st.split = None;
                    s.req
                }
                _ => {
                    return Err(MpiError::new(
                        ErrorClass::Other,
                        format!("{call}: no matching _begin call is pending on this file"),
                    ))
                }
            }
        };
        crate::pt2pt::wait(&mut req)
    }

    fn lock_span(
        &self,
        call: &str,
        pieces: &[(u64, u64)],
        write: bool,
    ) -> Result<Option<(u64, u64)>> {
        let (Some(lo), Some(hi)) = (
            pieces.iter().map(|p| p.0).min(),
            pieces.iter().map(|p| p.0 + p.1).max(),
        ) else {
            return Ok(None);
        };
        let span = (lo, hi - lo);
        sys::lock(&self.0.file, span.0, span.1, write)
            .map_err(|e| sys::os_error(call, &self.0.path, "cannot lock a byte range of", &e))?;
        Ok(Some(span))
    }

    pub(crate) fn write_indep(
        &self,
        call: &str,
        view: &View,
        atomic: bool,
        start: u64,
        data: &[u8],
    ) -> Result<()> {
        let mut pieces = Vec::new();
        view.pieces(start, data.len() as u64, |o, l| pieces.push((o, l)));
        let span = if atomic {
            self.lock_span(call, &pieces, true)?
        } else {
            None
        };
        let mut at = 0usize;
        let mut r = Ok(());
        for &(o, l) in &pieces {
            if let Err(e) = self.0.file.write_all_at(&data[at..at + l as usize], o) {
                r = Err(sys::os_error(call, &self.0.path, "cannot write", &e));
                break;
            }
            at += l as usize;
        }
        if let Some((s, l)) = span {
            let _ = sys::unlock(&self.0.file, s, l);
        }
        r
    }

    /// Reads the stream bytes `[start, start + out.len())`; returns how many
    /// were there before end of file.
    pub(crate) fn read_indep(
        &self,
        call: &str,
        view: &View,
        atomic: bool,
        start: u64,
        out: &mut [u8],
    ) -> Result<u64> {
        let mut pieces = Vec::new();
        view.pieces(start, out.len() as u64, |o, l| pieces.push((o, l)));
        let span = if atomic {
            self.lock_span(call, &pieces, false)?
        } else {
            None
        };
        // Data sieving: many small pieces close together are read with one
        // `pread` of their span (at most 4 MiB, at least half of it wanted).
        if let (Some(first), Some(last)) = (pieces.first(), pieces.last()) {
            let (lo, hi) = (first.0, last.0 + last.1);
            let sorted = pieces.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0);
            if sorted && pieces.len() > 1 && hi - lo <= 4 << 20 && (hi - lo) <= 2 * out.len() as u64
            {
                let mut sieve = vec![0u8; (hi - lo) as usize];
                let r = self.pread_full(&mut sieve, lo);
                if let Some((s, l)) = span {
                    let _ = sys::unlock(&self.0.file, s, l);
                }
                let valid = lo
                    + r.map_err(|e| sys::os_error(call, &self.0.path, "cannot read", &e))? as u64;
                let mut at = 0usize;
                for &(o, l) in &pieces {
                    if o >= valid {
                        break;
                    }
                    let e = (o + l).min(valid);
                    out[at..at + (e - o) as usize]
                        .copy_from_slice(&sieve[(o - lo) as usize..(e - lo) as usize]);
                    at += (e - o) as usize;
                    if e < o + l {
                        break;
                    }
                }
                return Ok(at as u64);
            }
        }
        let mut at = 0usize;
        let mut r = Ok(());
        'outer: for &(o, l) in &pieces {
            let got = self.pread_full(&mut out[at..at + l as usize], o);
            match got {
                Ok(g) => {
                    at += g;
                    if g < l as usize {
                        break 'outer;
                    }
                }
                Err(e) => {
                    r = Err(sys::os_error(call, &self.0.path, "cannot read", &e));
                    break;
                }
            }
        }
        if let Some((s, l)) = span {
            let _ = sys::unlock(&self.0.file, s, l);
        }
        r.map(|()| at as u64)
    }

    /// `pread` until `buf` is full or end of file; returns the bytes read.
    pub(crate) fn pread_full(&self, buf: &mut [u8], off: u64) -> std::io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.0.file.read_at(&mut buf[done..], off + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }
}

/// What an access takes of the file's state when it starts.
struct Snap {
    view: View,
    atomic: bool,
    hints: Hints,
    /// The individual pointer, in etypes.
    ipos: u64,
    /// Bytes of the datatype's packed stream in memory.
    bytes: u64,
    /// Bytes of the access in the file's representation.
    fbytes: u64,
}

fn pos_kind(p: Pos) -> u8 {
    match p {
        Pos::At(_) => 0,
        Pos::Individual => 1,
        Pos::Shared => 2,
        Pos::Ordered => 3,
    }
}

/// The safe entry points over buffer descriptors (as `pt2pt::api` and `coll::api` have):
/// the descriptor carries the proof that its memory is readable (a write) or writable
/// (a read) for the call, or, with a [`BufScope`], until the request completes.
impl File {
    /// A blocking write of the descriptor's elements.
    pub fn write_buf(
        &self,
        call: &str,
        pos: Pos,
        collective: bool,
        buf: SendBuf<'_, '_>,
    ) -> Result<Status> {
        self.access(call, pos, collective, Dir::Write, &mut buf.into())
    }

    /// A blocking read into the descriptor's elements.
    pub fn read_buf(
        &self,
        call: &str,
        pos: Pos,
        collective: bool,
        buf: RecvBuf<'_, '_>,
    ) -> Result<Status> {
        self.access(call, pos, collective, Dir::Read, &mut buf.into())
    }

    /// A non-blocking write (as [`iaccess`](File::iaccess)), the buffer kept by `scope`.
    pub fn iwrite_buf<'a>(
        &self,
        scope: &impl BufScope<'a>,
        call: &str,
        pos: Pos,
        collective: bool,
        buf: SendBuf<'a, '_>,
    ) -> Result<Request> {
        // `scope.enter` below keeps 'a from ending before the request completes.
        let loan = Loan::of_send(buf.lend(scope));
        let r = self.iaccess(call, pos, collective, Dir::Write, loan)?;
        scope.enter(r);
        Ok(r)
    }

    /// A non-blocking read (as [`iaccess`](File::iaccess)), the buffer kept by `scope`.
    pub fn iread_buf<'a>(
        &self,
        scope: &impl BufScope<'a>,
        call: &str,
        pos: Pos,
        collective: bool,
        buf: RecvBuf<'a, '_>,
    ) -> Result<Request> {
        // `scope.enter` below keeps 'a from ending before the request completes.
        let loan = Loan::of_recv(buf.lend(scope));
        let r = self.iaccess(call, pos, collective, Dir::Read, loan)?;
        scope.enter(r);
        Ok(r)
    }
}
