//! The general path of the communication calls: put, get, accumulate (and
//! get_accumulate, fetch_and_op), compare_and_swap, for any datatype on either side,
//! any target (this host: the origin copies; another host: an active message).
//! Small contiguous operations in a passive-target epoch take [`super::fast`] first.

use super::*;
use crate::buf::Region;

/// The bit of a target's bulk word (`CTL_BULK`) held while a bulk accumulate
/// applies; the bits below count the element-atomic accumulates in progress.
pub(super) const BULK_HELD: u64 = 1 << 63;
/// Accumulates of at least this many bytes (to memory CPU atomics may update) apply
/// the op kernel in bulk under the target's bulk word instead of one atomic step per
/// element: from about here the kernel's vector loop beats the atomic instructions.
pub(super) const BULK_MIN: usize = 512;

impl Window {
    /// `MPI_Put` of the elements of `origin`.
    #[allow(clippy::too_many_arguments)]
    pub fn put(
        &self,
        call: &str,
        origin: &Region<'_, &Datatype>,
        rank: i32,
        disp: isize,
        tcount: usize,
        tdt: &Datatype,
    ) -> Result<()> {
        let Some((r, tgt, rs)) = self.target(call, rank, disp, tcount, tdt, true)? else {
            return Ok(());
        };
        let (ocount, odt) = (origin.count(), origin.datatype());
        Self::check_sig(call, odt, ocount, tdt, tcount, "target")?;
        let Tgt::Local(reach) = tgt else {
            return self.am_put(call, r, &rs, &origin.pack_vec());
        };
        if rs.len() == 1 {
            if let Some(data) = origin.bytes() {
                // Read in place: size * count bytes from the true lb, as many as the run.
                return Self::write_runs(call, &reach, &rs, data);
            }
        }
        Self::write_runs(call, &reach, &rs, &origin.pack_vec())
    }

    /// `MPI_Get` into the elements of `origin`.
    #[allow(clippy::too_many_arguments)]
    pub fn get(
        &self,
        call: &str,
        origin: &mut Region<'_, &Datatype>,
        rank: i32,
        disp: isize,
        tcount: usize,
        tdt: &Datatype,
    ) -> Result<()> {
        let Some((r, tgt, rs)) = self.target(call, rank, disp, tcount, tdt, false)? else {
            return Ok(());
        };
        Self::check_sig(
            call,
            origin.datatype(),
            origin.count(),
            tdt,
            tcount,
            "target",
        )?;
        let Tgt::Local(reach) = tgt else {
            let data = self.am_get(call, r, &rs, tdt.size() * tcount)?;
            origin.unpack(&data);
            return Ok(());
        };
        if rs.len() == 1 {
            if let Some(out) = origin.bytes_mut() {
                return Self::read_runs(call, &reach, &rs, out);
            }
        }
        let mut data = vec![0u8; tdt.size() * tcount];
        Self::read_runs(call, &reach, &rs, &mut data)?;
        origin.unpack(&data);
        Ok(())
    }

    /// The basic type an accumulate works on, after the op and datatype checks.
    pub(super) fn acc_type(
        call: &str,
        op: &Op,
        odt: Option<&Datatype>,
        tdt: &Datatype,
    ) -> Result<Datatype> {
        let Some(p) = op.as_predefined() else {
            return Err(MpiError::arg(
                ErrorClass::Op,
                call,
                "op",
                "user-defined operations cannot be used in one-sided accumulates",
            ));
        };
        let prim = tdt.as_primitive().or_else(|| tdt.single_primitive());
        let Some(prim) = prim else {
            if tdt.size() == 0 {
                return Ok(Datatype::predefined(Primitive::Byte));
            }
            return Err(MpiError::arg(ErrorClass::Type, call, "target_datatype", "an accumulate needs a datatype whose basic elements are all of one predefined type"));
        };
        if let Some(odt) = odt {
            let oprim = odt.as_primitive().or_else(|| odt.single_primitive());
            if odt.size() > 0 && oprim != Some(prim) {
                return Err(MpiError::arg(
                    ErrorClass::Type,
                    call,
                    "origin_datatype",
                    "the origin and target basic types differ",
                ));
            }
        }
        let bt = Datatype::predefined(prim);
        if p != PredefinedOp::Replace && p != PredefinedOp::NoOp {
            op.check(&bt, call)?;
        }
        Ok(bt)
    }

    /// Runs `f` on the accumulate mutex of the target with host index `local`.
    pub(super) fn with_acc_lock<T>(
        &self,
        local: usize,
        f: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let m = self.ctl(local, CTL_ACC);
        acquire(|| {
            m.compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        })?;
        let res = f();
        m.store(0, Ordering::Release);
        res
    }

    /// Enters an element-atomic accumulate to the target with host index `local`
    /// unless a bulk accumulate holds it: the bulk word, to leave by
    /// [`Self::atomic_exit`]; `None`: nothing entered, nothing to undo.
    #[inline]
    pub(super) fn atomic_try_enter(&self, local: usize) -> Option<&std::sync::atomic::AtomicU64> {
        let b = self.ctl(local, CTL_BULK);
        if b.fetch_add(1, Ordering::Acquire) & BULK_HELD == 0 {
            return Some(b);
        }
        b.fetch_sub(1, Ordering::Relaxed);
        None
    }

    /// Under `accumulate_ops` ([`Window::same_op`]: every concurrent accumulate to
    /// an element uses one op, or MPI_NO_OP), whether an accumulate of `prim` with
    /// `op` goes element by element with CPU atomics at any size (the ops of one
    /// instruction, [`winatomic::is_direct`], and MPI_NO_OP), never with the bulk
    /// kernel; and whether it also skips the bulk word (all but MPI_NO_OP). Sound:
    /// the other accumulates to the element then use the same op, so they are the
    /// same kind of atomic instruction and never the bulk kernel, or MPI_NO_OP,
    /// which is an atomic load, counted in the bulk word, so that the bulk kernel
    /// of another op (an op whose accumulates all use the bulk word) excludes it.
    #[inline]
    pub(super) fn same_op_way(&self, prim: Primitive, op: PredefinedOp) -> (bool, bool) {
        let el = self.same_op && winatomic::is_direct(prim, op);
        (el, el && op != PredefinedOp::NoOp)
    }

    /// Leaves what [`Self::atomic_try_enter`] entered.
    #[inline]
    pub(super) fn atomic_exit(b: &std::sync::atomic::AtomicU64) {
        b.fetch_sub(1, Ordering::Release);
    }

    /// Runs `f`, element-atomic accumulates to the target with host index `local`,
    /// while no bulk accumulate applies to it (waiting, backing off, for one to end).
    pub(super) fn with_atomic<T>(&self, local: usize, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let mut held = None;
        acquire(|| {
            held = held.or_else(|| self.atomic_try_enter(local));
            held.is_some()
        })?;
        let res = f();
        if let Some(b) = held {
            Self::atomic_exit(b);
        }
        res
    }

    /// Runs `f`, a bulk accumulate (plain loads and stores, the op kernels), on the
    /// target with host index `local` alone: it takes the bulk word's `BULK_HELD`
    /// bit (one bulk accumulate at a time; element-atomic ones stop entering), then
    /// waits until the element-atomic accumulates already in progress have left.
    /// An element is thus never updated by a bulk and an atomic accumulate at once,
    /// whatever the sizes, ops and origins, so each stays atomic per element.
    pub(super) fn with_bulk<T>(&self, local: usize, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let b = self.ctl(local, CTL_BULK);
        acquire(|| b.fetch_or(BULK_HELD, Ordering::Acquire) & BULK_HELD == 0)?;
        // The atomic accumulates in progress never wait while entered, so this wait is
        // short; it backs off without the progress engine, which could run an active
        // message's accumulate to this very target (that would wait for this bulk one).
        let mut spins = 0u32;
        while b.load(Ordering::Acquire) != BULK_HELD {
            match spins {
                0..64 => std::hint::spin_loop(),
                64..256 => std::thread::yield_now(),
                _ => std::thread::sleep(Duration::from_micros(20)),
            }
            spins = spins.saturating_add(1);
        }
        let res = f();
        b.fetch_and(!BULK_HELD, Ordering::Release);
        res
    }

    /// `MPI_Accumulate` and `MPI_Get_accumulate` (`result`: the result buffer) of the
    /// elements of `origin` (not read for `MPI_NO_OP`).
    #[allow(clippy::too_many_arguments)]
    pub fn accumulate(
        &self,
        call: &str,
        origin: &Region<'_, &Datatype>,
        result: Option<&mut Region<'_, &Datatype>>,
        rank: i32,
        disp: isize,
        tcount: usize,
        tdt: &Datatype,
        op: &Op,
    ) -> Result<()> {
        let (ocount, odt) = (origin.count(), origin.datatype());
        let noop = op.as_predefined() == Some(PredefinedOp::NoOp);
        // Nothing moves when every side is empty (zero counts or zero-size
        // datatypes): any op then does nothing (as in MPICH, which programs probing
        // for get_accumulate rely on).
        if tdt.size() * tcount == 0
            && (noop || odt.size() * ocount == 0)
            && result
                .as_ref()
                .is_none_or(|r| r.datatype().size() * r.count() == 0)
        {
            self.target(call, rank, disp, tcount, tdt, false)?;
            return Ok(());
        }
        let bt = Self::acc_type(call, op, (!noop).then_some(odt), tdt)?;
        if let Some(r) = &result {
            Self::check_sig(call, r.datatype(), r.count(), tdt, tcount, "target").map_err(|e| {
                MpiError::new(
                    e.class,
                    e.message.replace("origin datatype", "result datatype"),
                )
            })?;
        }
        let Some((r, tgt, rs)) = self.target(call, rank, disp, tcount, tdt, !noop)? else {
            return Ok(());
        };
        if !noop {
            Self::check_sig(call, odt, ocount, tdt, tcount, "target")?;
        }
        let bytes = tdt.size() * tcount;
        let src: std::borrow::Cow<'_, [u8]> = if noop {
            std::borrow::Cow::Borrowed(&[])
        } else if let Some(b) = origin.bytes() {
            // A contiguous origin is read in place, not copied.
            std::borrow::Cow::Borrowed(b)
        } else {
            std::borrow::Cow::Owned(origin.pack_vec())
        };
        let Tgt::Local(reach) = tgt else {
            let old = self.am_acc(call, r, &rs, op, &bt, &src, result.is_some(), bytes)?;
            if let Some(res) = result {
                res.unpack(&old);
            }
            return Ok(());
        };
        let local = self.peers[r].local.expect("reachable targets are local");
        let old = self.acc_apply(call, local, &reach, &rs, op, &bt, &src, result.is_some())?;
        if let Some(res) = result {
            res.unpack(&old);
        }
        Ok(())
    }

    /// Whether accumulates to this window may use CPU atomics: its memory is in the
    /// host segment, which every local origin and the target's own active-message
    /// server reach mapped (windows over user memory are reached by cross-memory
    /// attach from other processes, so they serialize on the accumulate mutex).
    pub(super) fn atomic_memory(&self) -> bool {
        matches!(self.flavor, Flavor::Allocate | Flavor::Shared)
    }

    /// Applies an accumulate (`src`: packed elements of the basic type `bt`, empty
    /// for `MPI_NO_OP`) to the runs `rs` of the target with host index `local`;
    /// returns the previous contents when `want_old`. Elements that CPU atomics can
    /// update in place (see [`crate::transport::winatomic`]) are updated so, one
    /// atomic step each, without the mutex; the others (wide or padded types,
    /// unaligned addresses, memory reached by cross-memory attach) under the
    /// target's accumulate mutex. The choice depends on the location and type only,
    /// so concurrent accumulates to one element always take the same way.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn acc_apply(
        &self,
        call: &str,
        local: usize,
        reach: &Reach,
        rs: &[(usize, usize)],
        op: &Op,
        bt: &Datatype,
        src: &[u8],
        want_old: bool,
    ) -> Result<Vec<u8>> {
        let total: usize = rs.iter().map(|r| r.1).sum();
        let noop = op.as_predefined() == Some(PredefinedOp::NoOp);
        let width = if self.atomic_memory() {
            bt.as_primitive().and_then(winatomic::atomic_width)
        } else {
            None
        };
        let (elementwise, no_word) = match (bt.as_primitive(), op.as_predefined()) {
            (Some(p), Some(o)) => self.same_op_way(p, o),
            _ => (false, false),
        };
        if let (Some(w), Reach::Mapped(m)) = (width, reach) {
            let addr = m.addr();
            if rs.iter().all(|&(_, l)| l.is_multiple_of(w)) {
                let mut old = vec![0u8; if want_old { total } else { 0 }];
                // Runs at unaligned addresses: (window offset, packed offset, length).
                // Elements of a run are `w` apart, so all or none of them are aligned.
                let mut slow = Vec::new();
                // A large accumulate applies the op kernel to the window memory in
                // bulk, holding the target's bulk word alone; smaller ones update each
                // element with one atomic step, counted in that word (see
                // [`Self::with_bulk`]). Both are atomic per element against each other.
                let bulk = total >= BULK_MIN && !elementwise && {
                    let lo = rs.iter().map(|r| r.0).min().unwrap_or(0) + addr;
                    let hi = rs.iter().map(|r| r.0 + r.1).max().unwrap_or(0) + addr;
                    let (s0, s1) = (src.as_ptr() as usize, src.as_ptr() as usize + src.len());
                    // The kernel wants disjoint buffers: an origin inside the updated
                    // span (an accumulate from the window to itself) goes element-wise.
                    s1 <= lo || s0 >= hi
                };
                let mut apply = || -> Result<()> {
                    let mut at = 0;
                    for &(o, l) in rs {
                        let run = m.span(o, l).ok_or_else(|| {
                            MpiError::intern(call, "a checked run outside the window memory")
                        })?;
                        if run.aligned(w) {
                            let s = if noop { &[][..] } else { &src[at..at + l] };
                            let out = if want_old {
                                Some(&mut old[at..at + l])
                            } else {
                                None
                            };
                            if bulk {
                                // No atomic accumulate runs while the bulk word is held.
                                if let Some(out) = out {
                                    run.read(out);
                                }
                                // `s` and the run hold `l / w` dense elements of `bt` (an
                                // atomic width is size = extent), disjoint (checked above).
                                let (p, o) = (bt.as_primitive(), op.as_predefined());
                                if !noop
                                    && !p
                                        .zip(o)
                                        .is_some_and(|(p, o)| winatomic::apply_bulk(run, p, o, s))
                                {
                                    return Err(MpiError::intern(
                                        call,
                                        "a bulk accumulate the kernel refused",
                                    ));
                                }
                            } else {
                                // Every concurrent accumulate to these elements takes this atomic way
                                // too, or the bulk way while none of these runs.
                                winatomic::fetch_op_run(run, bt, op, s, out)?;
                            }
                        } else {
                            slow.push((o, at, l));
                        }
                        at += l;
                    }
                    Ok(())
                };
                if bulk {
                    self.with_bulk(local, apply)?;
                } else if no_word {
                    apply()?;
                } else {
                    self.with_atomic(local, apply)?;
                }
                if !slow.is_empty() {
                    self.with_acc_lock(local, || {
                        for &(o, at, l) in &slow {
                            let run = [(o, l)];
                            let mut cur = vec![0u8; l];
                            Self::read_runs(call, reach, &run, &mut cur)?;
                            if want_old {
                                old[at..at + l].copy_from_slice(&cur);
                            }
                            if !noop {
                                Self::apply_packed(op, &src[at..at + l], &mut cur, l / w, bt)?;
                                Self::write_runs(call, reach, &run, &cur)?;
                            }
                        }
                        Ok(())
                    })?;
                }
                return Ok(old);
            }
        }
        let mut cur = vec![0u8; total];
        let mut old = Vec::new();
        let nelem = if bt.size() == 0 { 0 } else { total / bt.size() };
        self.with_acc_lock(local, || {
            if want_old
                || !matches!(
                    op.as_predefined(),
                    Some(PredefinedOp::Replace | PredefinedOp::NoOp)
                )
            {
                Self::read_runs(call, reach, rs, &mut cur)?;
            }
            if want_old {
                old = cur.clone();
            }
            if noop {
                return Ok(());
            }
            Self::apply_packed(op, src, &mut cur, nelem, bt)?;
            Self::write_runs(call, reach, rs, &cur)
        })?;
        Ok(old)
    }

    /// `cur[i] = src[i] op cur[i]` for `nelem` packed elements of the basic type
    /// `bt`. `Op::apply` works on elements in memory layout (`extent` apart); a pair
    /// type with padding (`MPI_SHORT_INT`, `MPI_DOUBLE_INT`, ...) is packed tighter
    /// than that, so it is laid out, combined, and packed again.
    pub(super) fn apply_packed(
        op: &Op,
        src: &[u8],
        cur: &mut [u8],
        nelem: usize,
        bt: &Datatype,
    ) -> Result<()> {
        let size = bt.size();
        debug_assert!(src.len() >= size * nelem && cur.len() >= size * nelem);
        const C: &str = "one-sided accumulate";
        if bt.extent() == size as isize && bt.true_lb() == 0 {
            // Dense elements (extent = size): packed and memory layout agree.
            return op.apply_slices(C, src, cur, nelem, bt);
        }
        let ext = bt.extent().max(0) as usize;
        let mut a = vec![0u8; ext * nelem];
        let mut b = vec![0u8; ext * nelem];
        // `a` and `b` hold `nelem` elements of `bt` (extent apart, lb 0 for the pair types).
        Region::of_bytes(C, &mut a, nelem, bt)?.unpack(&src[..size * nelem]);
        Region::of_bytes(C, &mut b, nelem, bt)?.unpack(&cur[..size * nelem]);
        op.apply_slices(C, &a, &mut b, nelem, bt)?;
        cur[..size * nelem].copy_from_slice(&Region::of_bytes(C, &mut b, nelem, bt)?.pack_vec());
        Ok(())
    }

    /// Compare-and-swap of one element (runs `rs`, `new.len()` bytes) at the target
    /// with host index `local`: its previous value. A CPU compare-exchange where
    /// [`Self::acc_apply`] would use CPU atomics, the accumulate mutex elsewhere.
    pub(super) fn cas_apply(
        &self,
        call: &str,
        local: usize,
        reach: &Reach,
        rs: &[(usize, usize)],
        new: &[u8],
        cmp: &[u8],
    ) -> Result<Vec<u8>> {
        let n = new.len();
        let mut cur = vec![0u8; n];
        if let (true, Reach::Mapped(m), [(o, l)]) = (self.atomic_memory(), reach, rs) {
            let at = m.span(*o, *l).filter(|at| at.aligned(n));
            if let (true, true, Some(at)) = (*l == n, matches!(n, 1 | 2 | 4 | 8), at) {
                // Concurrent accumulates to the element are atomic too.
                self.with_atomic(local, || {
                    winatomic::compare_swap(at, new, cmp, &mut cur);
                    Ok(())
                })?;
                return Ok(cur);
            }
        }
        self.with_acc_lock(local, || {
            Self::read_runs(call, reach, rs, &mut cur)?;
            if cur == cmp {
                Self::write_runs(call, reach, rs, new)?;
            }
            Ok(())
        })?;
        Ok(cur)
    }

    /// `MPI_Compare_and_swap` of one element of `dt`: `origin` and `compare` hold
    /// it, `result` receives the target's previous one (each `dt.size()` bytes).
    #[allow(clippy::too_many_arguments)]
    pub fn compare_and_swap(
        &self,
        call: &str,
        origin: &[u8],
        compare: &[u8],
        result: &mut [u8],
        dt: &Datatype,
        rank: i32,
        disp: isize,
    ) -> Result<()> {
        let Some(prim) = dt.as_primitive() else {
            return Err(MpiError::arg(
                ErrorClass::Type,
                call,
                "datatype",
                "must be a predefined datatype",
            ));
        };
        use crate::datatype::TypeClass;
        if !matches!(
            prim.class(),
            TypeClass::CInteger | TypeClass::FortranInteger | TypeClass::Logical | TypeClass::Byte
        ) {
            return Err(MpiError::arg(
                ErrorClass::Type,
                call,
                "datatype",
                format!("{} is not an integer, logical or byte type", prim.name()),
            ));
        }
        let Some((r, tgt, rs)) = self.target(call, rank, disp, 1, dt, true)? else {
            return Ok(());
        };
        let n = dt.size();
        if origin.len() != n || compare.len() != n || result.len() != n {
            return Err(MpiError::arg(
                ErrorClass::Buffer,
                call,
                "origin_addr",
                format!("origin, compare and result must each be one element of {n} bytes"),
            ));
        }
        let (new, cmp, res) = (origin, compare, result);
        let Tgt::Local(reach) = tgt else {
            let old = self.am_cas(call, r, &rs, new, cmp)?;
            res.copy_from_slice(&old);
            return Ok(());
        };
        let local = self.peers[r].local.expect("reachable targets are local");
        let old = self.cas_apply(call, local, &reach, &rs, new, cmp)?;
        res.copy_from_slice(&old);
        Ok(())
    }
}
