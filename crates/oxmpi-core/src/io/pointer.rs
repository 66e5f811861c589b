//! File pointers: seeking and positions for the individual pointer (per handle,
//! in etypes of the view) and the shared pointer (a counter in a hidden file next
//! to the data file, updated under an `fcntl` lock).

use super::*;

impl File {
    /// `MPI_File_seek` (individual pointer).
    pub fn seek(&self, call: &str, off: i64, whence: Whence) -> Result<()> {
        let mut st = self.live(call)?;
        self.no_seq(call)?;
        let base = match whence {
            Whence::Set => 0,
            Whence::Cur => st.pos as i64,
            Whence::End => self.end_etypes(call, &st.view)? as i64,
        };
        let p = base.checked_add(off).filter(|&p| p >= 0).ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Arg,
                call,
                "offset",
                format!("{off} would move the pointer before the start of the view"),
            )
        })?;
        st.pos = p as u64;
        Ok(())
    }

    fn end_etypes(&self, call: &str, v: &View) -> Result<u64> {
        let size = self
            .0
            .file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| sys::os_error(call, &self.0.path, "cannot stat", &e))?;
        let es = v.etype_size().max(1);
        Ok(v.stream_before(size).div_ceil(es))
    }

    /// `MPI_File_get_position`, in etypes.
    pub fn position(&self, call: &str) -> Result<u64> {
        let st = self.live(call)?;
        self.no_seq(call)?;
        Ok(st.pos)
    }

    /// `MPI_File_get_byte_offset`: absolute byte of view offset `off` (etypes).
    pub fn byte_offset(&self, call: &str, off: u64) -> Result<u64> {
        let st = self.live(call)?;
        self.no_seq(call)?;
        Ok(st.view.byte_offset(off * st.view.etype_size()))
    }

    pub(super) fn no_seq(&self, call: &str) -> Result<()> {
        if self.0.amode & mode::SEQUENTIAL != 0 {
            return Err(MpiError::unsupported(call, "explicit offsets and individual file pointers on a file opened MPI_MODE_SEQUENTIAL"));
        }
        Ok(())
    }

    // ----- the shared file pointer ---------------------------------------------------

    fn shfp_file(&self, call: &str) -> Result<MutexGuard<'_, Option<std::fs::File>>> {
        let mut g = self.0.shfp.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .open(&self.0.shfp_path)
                .map_err(|e| {
                    sys::os_error(
                        call,
                        &self.0.shfp_path,
                        "cannot open the shared file pointer's file",
                        &e,
                    )
                })?;
            *g = Some(f);
        }
        Ok(g)
    }

    /// Adds `n` to the shared pointer (etypes); returns its previous value.
    pub(super) fn shfp_add(&self, call: &str, n: u64) -> Result<u64> {
        let g = self.shfp_file(call)?;
        let f = g.as_ref().unwrap();
        let err =
            |e: std::io::Error| sys::os_error(call, &self.0.shfp_path, "shared file pointer", &e);
        sys::lock(f, 0, 8, true).map_err(err)?;
        let mut b = [0u8; 8];
        let r = (|| {
            let got = f.read_at(&mut b, 0)?;
            let old = if got == 8 { u64::from_le_bytes(b) } else { 0 };
            if n > 0 {
                f.write_all_at(&(old + n).to_le_bytes(), 0)?;
            }
            Ok(old)
        })();
        let _ = sys::unlock(f, 0, 8);
        r.map_err(err)
    }

    pub(super) fn shfp_load(&self, call: &str) -> Result<u64> {
        self.shfp_add(call, 0)
    }

    pub(super) fn shfp_store(&self, call: &str, v: u64) -> Result<()> {
        let g = self.shfp_file(call)?;
        let f = g.as_ref().unwrap();
        let err =
            |e: std::io::Error| sys::os_error(call, &self.0.shfp_path, "shared file pointer", &e);
        sys::lock(f, 0, 8, true).map_err(err)?;
        let r = f.write_all_at(&v.to_le_bytes(), 0);
        let _ = sys::unlock(f, 0, 8);
        r.map_err(err)
    }

    /// `MPI_File_seek_shared` (collective).
    pub fn seek_shared(&self, call: &str, off: i64, whence: Whence) -> Result<()> {
        let view = self.live(call)?.view.clone();
        self.0.worker.quiesce();
        let all = allgather_u64(&self.0.comm, &[off as u64, whence as u64])?;
        if all
            .chunks(2)
            .any(|c| c[0] != off as u64 || c[1] != whence as u64)
        {
            return Err(MpiError::arg(
                ErrorClass::NotSame,
                call,
                "offset",
                "offset and whence differ between the ranks",
            ));
        }
        let mut r = Ok(());
        if self.0.comm.rank() == 0 {
            r = (|| {
                let base = match whence {
                    Whence::Set => 0,
                    Whence::Cur => self.shfp_load(call)? as i64,
                    Whence::End => self.end_etypes(call, &view)? as i64,
                };
                let p = base.checked_add(off).filter(|&p| p >= 0).ok_or_else(|| {
                    MpiError::arg(
                        ErrorClass::Arg,
                        call,
                        "offset",
                        format!("{off} would move the shared pointer before the view"),
                    )
                })?;
                self.shfp_store(call, p as u64)
            })();
        }
        self.agree(call, r)
    }

    /// `MPI_File_get_position_shared`, in etypes.
    pub fn position_shared(&self, call: &str) -> Result<u64> {
        drop(self.live(call)?);
        self.shfp_load(call)
    }

    // ----- data access -------------------------------------------------------------------
}
