//! This rank's slot of the launcher's job status page (layout in
//! `oxmpi_pmi::status`): a shared mapping of the `memfd` our `mpiexec` passes
//! as `OXMPI_STATUS_FD`. The rank is the slot's only writer and writes it only
//! when a blocking call has been idle for a while (see `crate::diag`), so
//! the page costs nothing while the program runs.

use std::sync::atomic::{fence, AtomicU64, Ordering};

use oxmpi_pmi::status as layout;

pub struct StatusPage {
    slot: &'static [AtomicU64],
    size: u32,
}

impl StatusPage {
    /// Maps slot `rank` of the status file named by `OXMPI_STATUS_FD`, if the
    /// launcher made one for a job of `size` ranks; `None` otherwise.
    pub fn from_env(rank: u32, size: u32) -> Option<StatusPage> {
        let fd: libc::c_int = std::env::var(layout::STATUS_FD_ENV).ok()?.parse().ok()?;
        let words = layout::slot_words(size);
        let total = words.checked_mul(8)?.checked_mul(size as usize)?;
        // SAFETY: fstat writes the stat struct we own; a bad descriptor only fails.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::fstat(fd, &mut st) } != 0 || (st.st_size as u64) < total as u64 {
            return None;
        }
        // SAFETY: a fresh shared mapping of the whole file; the kernel picks the address. Failure is reported as MAP_FAILED and handled below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                total,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        // The descriptor is not needed once mapped; programs this rank starts need not see it.
        // SAFETY: closing a descriptor this process inherited for this purpose only.
        unsafe { libc::close(fd) };
        if base == libc::MAP_FAILED {
            return None;
        }
        // The mapping is page-aligned, `total` bytes long, never unmapped
        // (leaked for the process's life), and every word of it is only ever
        // accessed atomically, here and in the launcher; AtomicU64 has the
        // layout of u64. Slot `rank` lies inside it because `rank < size`.
        let all: &'static [AtomicU64] =
            // SAFETY: a live, aligned, atomically accessed mapping of `total` bytes.
            unsafe { std::slice::from_raw_parts(base as *const AtomicU64, total / 8) };
        let start = words * rank as usize;
        Some(StatusPage {
            slot: &all[start..start + words],
            size,
        })
    }

    /// Publishes a state with the per-peer counters and a text (seqlock write).
    pub fn publish(&self, state: u64, since_ms: u64, sent: &[u64], recvd: &[u64], text: &str) {
        let seq = self.slot[layout::W_SEQ].load(Ordering::Relaxed);
        self.slot[layout::W_SEQ].store(seq | 1, Ordering::Relaxed);
        fence(Ordering::Release);
        let n = self.size as usize;
        let base = layout::HEADER_WORDS;
        for (i, v) in sent.iter().take(n).enumerate() {
            self.slot[base + i].store(*v, Ordering::Relaxed);
        }
        for (i, v) in recvd.iter().take(n).enumerate() {
            self.slot[base + n + i].store(*v, Ordering::Relaxed);
        }
        let (words, len) = layout::encode_text(text);
        let t = layout::text_start(self.size);
        for (i, w) in words.iter().enumerate() {
            self.slot[t + i].store(*w, Ordering::Relaxed);
        }
        self.slot[layout::W_TEXT_LEN].store(len as u64, Ordering::Relaxed);
        self.slot[layout::W_SINCE_MS].store(since_ms, Ordering::Relaxed);
        self.slot[layout::W_STATE].store(state, Ordering::Relaxed);
        self.slot[layout::W_GEN].fetch_add(1, Ordering::Relaxed);
        self.slot[layout::W_SEQ].store((seq | 1) + 1, Ordering::Release);
    }

    /// Marks the rank running again (its text stays, for the record).
    pub fn set_running(&self) {
        let seq = self.slot[layout::W_SEQ].load(Ordering::Relaxed);
        self.slot[layout::W_SEQ].store(seq | 1, Ordering::Relaxed);
        fence(Ordering::Release);
        self.slot[layout::W_STATE].store(layout::STATE_RUNNING, Ordering::Relaxed);
        self.slot[layout::W_GEN].fetch_add(1, Ordering::Relaxed);
        self.slot[layout::W_SEQ].store((seq | 1) + 1, Ordering::Release);
    }
}
