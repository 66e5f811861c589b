//! The target of an operation: the epoch, rank, displacement and range checks that
//! come before any access, and the byte runs the access covers.

use super::*;

/// A checked target: its rank, how it is reached, the byte runs to access.
pub(super) type Target<'w> = (usize, Tgt<'w>, RunList);

/// The byte runs `(window offset, len)` of an access: one, inline (contiguous
/// types, the common case of small operations: no allocation), or many.
pub(super) enum RunList {
    One([(usize, usize); 1]),
    Many(Vec<(usize, usize)>),
}

impl std::ops::Deref for RunList {
    type Target = [(usize, usize)];
    fn deref(&self) -> &[(usize, usize)] {
        match self {
            RunList::One(a) => a,
            RunList::Many(v) => v,
        }
    }
}

/// How an operation reaches its target.
pub(super) enum Tgt<'w> {
    /// This host: the origin copies.
    Local(&'w Reach),
    /// Another host: an active message.
    Remote,
}

/// Whether bytes `[o, end)` lie in attached memory: `regions` (base, len), sorted
/// by base; adjacent regions together cover the run (MPI allows an access to span
/// regions attached back to back).
pub(super) fn covered(regions: &[(usize, usize)], o: i128, end: i128) -> bool {
    let mut at = o;
    for &(b, l) in regions {
        let (b, e) = (b as i128, b as i128 + l as i128);
        if b > at {
            break;
        }
        if e > at {
            at = e;
            if at >= end {
                return true;
            }
        }
    }
    false
}

/// Byte runs `(offset, len)` of `count` elements of `dt` laid out from `start`.
pub(super) fn runs(dt: &Datatype, count: usize, start: i128) -> Vec<(i128, usize)> {
    let mut v: Vec<(i128, usize)> = Vec::new();
    if count == 0 || dt.size() == 0 {
        return v;
    }
    if dt.is_contiguous() {
        v.push((start + dt.true_lb() as i128, dt.size() * count));
        return v;
    }
    let ext = dt.extent() as i128;
    for i in 0..count as i128 {
        dt.for_each_block(0, |off, len| {
            let o = start + i * ext + off as i128;
            match v.last_mut() {
                Some((lo, l)) if *lo + *l as i128 == o => *l += len,
                _ => v.push((o, len)),
            }
        });
    }
    v
}

impl Window {
    /// The target's reach and the byte runs (window offsets) `count` elements of
    /// `dt` at displacement `disp` cover, after the epoch, rank and range checks.
    /// `writes`: the operation updates the target (put, accumulate, compare-and-swap).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn target(
        &self,
        call: &str,
        rank: i32,
        disp: isize,
        count: usize,
        dt: &Datatype,
        writes: bool,
    ) -> Result<Option<Target<'_>>> {
        if rank == PROC_NULL {
            return Ok(None);
        }
        let r = self.check_rank(call, rank)?;
        // A lock taken without the epochs' books: a passive-target access.
        let (access, fences) = if self.fast_locked(r) {
            (epoch::Access::Passive, 0)
        } else {
            let mut st = self.st();
            (st.epochs.check_access(call, rank)?, st.epochs.fences)
        };
        let p = &self.peers[r];
        if let (true, Some(l)) = (writes, p.local) {
            // A fence epoch is numbered by the fences made so far (the same on every
            // rank): a target that moved on to the next epoch already is not flagged.
            let noput = match access {
                epoch::Access::Fence => self.ctl(l, CTL_NOPUT).load(Ordering::SeqCst) == fences,
                epoch::Access::Start => self.ctl(l, CTL_NOPUT_POST).load(Ordering::SeqCst) != 0,
                epoch::Access::Passive => false,
            };
            if noput {
                return Err(rma_err(
                    ErrorClass::RmaConflict,
                    call,
                    format!("target_rank {rank} asserted MPI_MODE_NOPUT for this epoch: its window is not to be updated by put or accumulate calls"),
                ));
            }
        }
        let reach = match &p.reach {
            Some(x) => Tgt::Local(x),
            None => Tgt::Remote,
        };
        let start = if self.flavor == Flavor::Dynamic {
            disp as i128
        } else {
            disp as i128 * p.disp_unit as i128
        };
        if self.flavor != Flavor::Dynamic && disp < 0 {
            return Err(MpiError::arg(
                ErrorClass::Disp,
                call,
                "target_disp",
                format!("{disp} is negative"),
            ));
        }
        // Dynamic windows on another host: the target checks its regions itself.
        let regions = match (self.flavor, p.local) {
            (Flavor::Dynamic, Some(l)) => Some(self.regions_of(call, l)?),
            (Flavor::Dynamic, None) => None,
            _ => Some(Vec::new()),
        };
        let check = |o: i128, l: usize| -> Result<(usize, usize)> {
            let end = o + l as i128;
            let ok = if self.flavor == Flavor::Dynamic {
                o >= 0 && regions.as_ref().is_none_or(|rg| covered(rg, o, end))
            } else {
                o >= 0 && end <= p.size as i128
            };
            if !ok {
                return Err(rma_err(
                    ErrorClass::RmaRange,
                    call,
                    if self.flavor == Flavor::Dynamic {
                        format!("bytes [{o:#x}, {end:#x}) of target rank {rank} are not in memory it attached to the window")
                    } else {
                        format!("bytes [{o}, {end}) are outside target rank {rank}'s window of {} bytes (target_disp {disp}, disp_unit {})", p.size, p.disp_unit)
                    },
                ));
            }
            Ok((o as usize, l))
        };
        if dt.is_contiguous() && count > 0 && dt.size() > 0 {
            let one = check(start + dt.true_lb() as i128, dt.size() * count)?;
            return Ok(Some((r, reach, RunList::One([one]))));
        }
        let rs = runs(dt, count, start);
        let mut out = Vec::with_capacity(rs.len());
        for (o, l) in rs {
            out.push(check(o, l)?);
        }
        Ok(Some((r, reach, RunList::Many(out))))
    }

    pub(super) fn check_sig(
        call: &str,
        a: &Datatype,
        n: usize,
        b: &Datatype,
        m: usize,
        what: &str,
    ) -> Result<()> {
        // The same predefined type on both sides (the common case) matches by count.
        let same = match (a.as_primitive(), b.as_primitive()) {
            (Some(x), Some(y)) if x == y => n == m,
            _ => a.same_signature(n, b, m),
        };
        if !same {
            return Err(MpiError::new(
                ErrorClass::Type,
                format!("{call}: type signature mismatch: {n} elements of the origin datatype against {m} of the {what} datatype ({} and {} bytes)", a.size() * n, b.size() * m),
            ));
        }
        Ok(())
    }

    pub(super) fn read_runs(
        call: &str,
        reach: &Reach,
        rs: &[(usize, usize)],
        out: &mut [u8],
    ) -> Result<()> {
        let mut at = 0;
        for &(o, l) in rs {
            reach
                .read(o, &mut out[at..at + l])
                .map_err(|e| io_err(call, "reading the target's memory", e))?;
            at += l;
        }
        Ok(())
    }

    pub(super) fn write_runs(
        call: &str,
        reach: &Reach,
        rs: &[(usize, usize)],
        data: &[u8],
    ) -> Result<()> {
        let mut at = 0;
        for &(o, l) in rs {
            reach
                .write(o, &data[at..at + l])
                .map_err(|e| io_err(call, "writing the target's memory", e))?;
            at += l;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn runs_merge_and_offset() {
        let int = Datatype::predefined(Primitive::Int);
        assert_eq!(runs(&int, 3, 8), vec![(8, 12)]);
        let v = Datatype::vector(2, 1, 2, &int).unwrap();
        v.commit();
        // extent 12: the second element starts right after the first one's last block.
        assert_eq!(runs(&v, 2, 0), vec![(0, 4), (8, 8), (20, 4)]);
        assert!(runs(&int, 0, 0).is_empty());
    }
}
