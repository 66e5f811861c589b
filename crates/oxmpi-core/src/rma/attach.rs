//! Dynamic windows: `MPI_Win_attach` / `MPI_Win_detach`, the regions each process
//! publishes in the host segment (and the overflow table beyond them), and reading
//! another process's regions for the range check.

use super::*;

impl Window {
    /// `MPI_Win_attach` (dynamic windows): `mem` is reachable by the window's processes
    /// until detached (its constructor carries the proof: the caller's promise, or a
    /// heap copy the window keeps alive until then).
    pub fn attach(&self, mem: CallerMem) -> Result<()> {
        const C: &str = "MPI_Win_attach";
        let (base, size) = (mem.addr(), mem.len());
        if self.flavor != Flavor::Dynamic {
            return Err(rma_err(
                ErrorClass::RmaFlavor,
                C,
                "the window was not made by MPI_Win_create_dynamic",
            ));
        }
        if size == 0 {
            return Ok(());
        }
        let mut st = self.att();
        if st
            .list
            .iter()
            .any(|&(_, b, l)| base < b + l && b < base + size)
        {
            return Err(rma_err(
                ErrorClass::RmaAttach,
                C,
                format!("[{base:#x}, +{size}) overlaps memory attached already"),
            ));
        }
        if base.checked_add(size).is_none() {
            return Err(MpiError::arg(
                ErrorClass::Size,
                C,
                "size",
                format!("{size} bytes from {base:#x} pass the end of the address space"),
            ));
        }
        st.mem.add(&mem);
        let used: Vec<usize> = st.list.iter().map(|a| a.0).collect();
        match (0..MAX_REGIONS).find(|s| !used.contains(s)) {
            Some(slot) => {
                self.ctl(self.my_local, CTL_REGIONS + slot * 16)
                    .store(base as u64, Ordering::Release);
                self.ctl(self.my_local, CTL_REGIONS + slot * 16 + 8)
                    .store(size as u64, Ordering::Release);
                st.list.push((slot, base, size));
            }
            None => {
                st.list.push((OVF_SLOT, base, size));
                self.publish_overflow(&mut st);
            }
        }
        Ok(())
    }

    /// `MPI_Win_detach`.
    pub fn detach(&self, base: usize) -> Result<()> {
        const C: &str = "MPI_Win_detach";
        if self.flavor != Flavor::Dynamic {
            return Err(rma_err(
                ErrorClass::RmaFlavor,
                C,
                "the window was not made by MPI_Win_create_dynamic",
            ));
        }
        let mut st = self.att();
        let Some(i) = st.list.iter().position(|&(_, b, _)| b == base) else {
            return Err(rma_err(
                ErrorClass::RmaAttach,
                C,
                format!("{base:#x} is not the base of memory attached to the window"),
            ));
        };
        let (slot, _, _) = st.list.remove(i);
        st.mem.remove(base);
        if slot == OVF_SLOT {
            self.publish_overflow(&mut st);
        } else {
            self.ctl(self.my_local, CTL_REGIONS + slot * 16 + 8)
                .store(0, Ordering::Release);
            self.ctl(self.my_local, CTL_REGIONS + slot * 16)
                .store(0, Ordering::Release);
        }
        Ok(())
    }

    /// The regions (base, len) the process with host index `local` has attached to
    /// this dynamic window, sorted by base.
    pub(super) fn regions_of(&self, call: &str, local: usize) -> Result<Vec<(usize, usize)>> {
        if local == self.my_local {
            let mut v: Vec<(usize, usize)> =
                self.att().list.iter().map(|&(_, b, l)| (b, l)).collect();
            v.sort_unstable();
            return Ok(v);
        }
        let mut v: Vec<(usize, usize)> = (0..MAX_REGIONS)
            .filter_map(|i| {
                let len = self
                    .ctl(local, CTL_REGIONS + i * 16 + 8)
                    .load(Ordering::Acquire) as usize;
                let base = self
                    .ctl(local, CTL_REGIONS + i * 16)
                    .load(Ordering::Acquire) as usize;
                (len > 0).then_some((base, len))
            })
            .collect();
        let pid = match self
            .peers
            .iter()
            .find(|p| p.local == Some(local))
            .and_then(|p| p.reach.as_ref())
        {
            Some(Reach::Cma { pid, .. }) => *pid,
            _ => {
                return Err(MpiError::intern(
                    call,
                    "a dynamic window's local peer is not reached by cross-memory attach",
                ))
            }
        };
        let (seq, ptr, len) = (
            self.ctl(local, CTL_OVF_SEQ),
            self.ctl(local, CTL_OVF_PTR),
            self.ctl(local, CTL_OVF_LEN),
        );
        let mut tries = 0u32;
        loop {
            let s1 = seq.load(Ordering::Acquire);
            if s1 & 1 == 0 {
                let (p, n) = (
                    ptr.load(Ordering::Acquire) as usize,
                    len.load(Ordering::Acquire) as usize,
                );
                if n == 0 {
                    break;
                }
                let mut raw = vec![0u8; n * 16];
                let read = crate::transport::cma::read_remote(pid, p, &mut raw);
                std::sync::atomic::fence(Ordering::Acquire);
                if seq.load(Ordering::Acquire) == s1 {
                    read.map_err(|e| {
                        io_err(call, "reading the target's table of attached memory", e)
                    })?;
                    for c in raw.chunks_exact(16) {
                        let b = u64::from_ne_bytes(c[..8].try_into().expect("8 bytes")) as usize;
                        let l = u64::from_ne_bytes(c[8..].try_into().expect("8 bytes")) as usize;
                        v.push((b, l));
                    }
                    break;
                }
            }
            // The owner is attaching or detaching right now: look again shortly.
            tries += 1;
            if tries < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
        v.sort_unstable();
        Ok(v)
    }

    /// Republishes this process's overflow table (with `st` locked, so one writer).
    pub(super) fn publish_overflow(&self, st: &mut Attached) {
        let (seq, ptr, len) = (
            self.ctl(self.my_local, CTL_OVF_SEQ),
            self.ctl(self.my_local, CTL_OVF_PTR),
            self.ctl(self.my_local, CTL_OVF_LEN),
        );
        seq.fetch_add(1, Ordering::AcqRel);
        std::sync::atomic::fence(Ordering::Release);
        st.overflow = st
            .list
            .iter()
            .filter(|a| a.0 == OVF_SLOT)
            .map(|&(_, b, l)| [b as u64, l as u64])
            .collect();
        ptr.store(st.overflow.as_ptr() as u64, Ordering::Release);
        len.store(st.overflow.len() as u64, Ordering::Release);
        seq.fetch_add(1, Ordering::AcqRel);
    }
}
