//! File views: a displacement, an elementary type and a filetype tiled across
//! the file, plus the data representation.
//!
//! The filetype is flattened once (by the datatype engine) into the (offset,
//! length) runs of one tile; the data stream of a view — the bytes the view
//! exposes, in order — maps to file offsets by tile arithmetic and a binary
//! search of the runs' prefix sums. Every access, independent or collective,
//! goes through [`View::pieces`], so nothing is ever written outside the view.

use std::sync::Arc;

use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};

/// User conversion functions of a data representation registered with
/// `MPI_Register_datarep` (implemented by the layer that holds them).
pub trait UserDatarep: Send + Sync {
    /// The extent in the file of one element of the (predefined) `dt`.
    fn file_extent(&self, dt: &Datatype) -> Result<usize>;
    /// Whether data needs converting when read (false: read as is).
    fn converts_reads(&self) -> bool;
    /// Whether data needs converting when written (false: written as is).
    fn converts_writes(&self) -> bool;
    /// Converts `count` elements of `dt` from the file representation in
    /// `file` to the memory layout at `user`.
    ///
    /// # Safety
    /// `user` holds `count` elements of `dt`, writable.
    unsafe fn read(&self, user: *mut u8, dt: &Datatype, count: usize, file: &[u8]) -> Result<()>;
    /// Converts `count` elements of `dt` at `user` to the file representation in `file`.
    ///
    /// # Safety
    /// `user` holds `count` elements of `dt`, readable.
    unsafe fn write(&self, user: *const u8, dt: &Datatype, count: usize, file: &mut [u8]) -> Result<()>;
}

/// A data representation.
#[derive(Clone)]
pub enum Datarep {
    Native,
    Internal,
    External32,
    User(String, Arc<dyn UserDatarep>),
}

impl std::fmt::Debug for Datarep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Datarep {
    pub fn name(&self) -> &str {
        match self {
            Datarep::Native => "native",
            Datarep::Internal => "internal",
            Datarep::External32 => "external32",
            Datarep::User(n, _) => n,
        }
    }
}

/// A view of a file.
#[derive(Clone, Debug)]
pub struct View {
    pub disp: u64,
    pub etype: Datatype,
    pub filetype: Datatype,
    pub datarep: Datarep,
    /// Runs of one tile: (offset from the tile's start, length).
    runs: Arc<Vec<(u64, u64)>>,
    /// prefix[i]: data bytes of the tile before run i.
    prefix: Arc<Vec<u64>>,
    tile_size: u64,
    tile_extent: u64,
}

impl View {
    /// The default view: displacement 0, etype and filetype MPI_BYTE, native.
    pub fn bytes() -> View {
        let b = Datatype::predefined(crate::datatype::Primitive::Byte);
        View::new(0, b.clone(), b, Datarep::Native, "MPI_File_open").expect("the byte view is valid")
    }

    pub fn new(disp: u64, etype: Datatype, filetype: Datatype, datarep: Datarep, call: &str) -> Result<View> {
        let es = etype.size();
        if etype.extent() < 0 || etype.true_lb() < 0 {
            return Err(MpiError::arg(ErrorClass::Type, call, "etype", "has a negative displacement"));
        }
        if es > 0 && filetype.size() % es != 0 {
            return Err(MpiError::arg(
                ErrorClass::Type,
                call,
                "filetype",
                format!("its size {} is not a multiple of the etype's size {es}", filetype.size()),
            ));
        }
        if let Datarep::User(name, conv) = &datarep {
            for t in [&etype, &filetype] {
                for &(p, _) in t.signature() {
                    let fe = conv.file_extent(&Datatype::predefined(p))?;
                    if fe != p.size() {
                        return Err(MpiError::arg(
                            ErrorClass::UnsupportedDatarep,
                            call,
                            "datarep",
                            format!(
                                "\"{name}\" gives {} a file extent of {fe} bytes; oxmpi supports user data representations whose file extents equal the native sizes",
                                p.name()
                            ),
                        ));
                    }
                }
            }
        }
        let mut runs: Vec<(u64, u64)> = Vec::with_capacity(filetype.block_count().min(1 << 20));
        let mut last_end: i64 = i64::MIN;
        for (off, len) in filetype.blocks() {
            if len == 0 {
                continue;
            }
            if off < 0 {
                return Err(MpiError::arg(ErrorClass::Type, call, "filetype", "has a negative displacement (MPI requires non-negative ones)"));
            }
            if (off as i64) < last_end {
                return Err(MpiError::arg(
                    ErrorClass::Type,
                    call,
                    "filetype",
                    "its displacements are not monotonically non-decreasing (MPI requires it of a filetype)",
                ));
            }
            last_end = off as i64 + len as i64;
            match runs.last_mut() {
                Some(r) if r.0 + r.1 == off as u64 => r.1 += len as u64,
                _ => runs.push((off as u64, len as u64)),
            }
        }
        let tile_size = filetype.size() as u64;
        let ext = filetype.extent();
        if tile_size > 0 && ext <= 0 {
            return Err(MpiError::arg(ErrorClass::Type, call, "filetype", format!("has data but extent {ext}: its tiles cannot advance")));
        }
        if let Some(&(first, _)) = runs.first() {
            if last_end > first as i64 + ext as i64 {
                return Err(MpiError::arg(
                    ErrorClass::Type,
                    call,
                    "filetype",
                    format!("its data span bytes {first}..{last_end}, more than its extent {ext}: tiles would overlap"),
                ));
            }
        }
        let mut prefix = Vec::with_capacity(runs.len());
        let mut acc = 0;
        for r in &runs {
            prefix.push(acc);
            acc += r.1;
        }
        Ok(View {
            disp,
            etype,
            filetype,
            datarep,
            runs: Arc::new(runs),
            prefix: Arc::new(prefix),
            tile_size,
            tile_extent: ext.max(0) as u64,
        })
    }

    pub fn etype_size(&self) -> u64 {
        self.etype.size() as u64
    }

    /// Whether the view's data are one contiguous byte range from `disp`.
    fn dense(&self) -> bool {
        self.runs.len() == 1 && self.runs[0].0 == 0 && self.runs[0].1 == self.tile_extent
    }

    /// Calls `f(file offset, length)` for the file pieces of data-stream bytes
    /// `[start, start + len)`, in stream order, adjacent pieces merged.
    pub fn pieces(&self, start: u64, len: u64, mut f: impl FnMut(u64, u64)) {
        if len == 0 || self.tile_size == 0 {
            return;
        }
        if self.dense() {
            f(self.disp + start, len);
            return;
        }
        let mut tile = start / self.tile_size;
        let within = start % self.tile_size;
        let mut ri = self.prefix.partition_point(|&p| p <= within) - 1;
        let mut skip = within - self.prefix[ri];
        let mut left = len;
        let mut pend: Option<(u64, u64)> = None;
        while left > 0 {
            let (off, rl) = self.runs[ri];
            let take = (rl - skip).min(left);
            let at = self.disp + tile * self.tile_extent + off + skip;
            pend = match pend {
                Some((o, l)) if o + l == at => Some((o, l + take)),
                Some(p) => {
                    f(p.0, p.1);
                    Some((at, take))
                }
                None => Some((at, take)),
            };
            left -= take;
            skip = 0;
            ri += 1;
            if ri == self.runs.len() {
                ri = 0;
                tile += 1;
            }
        }
        if let Some(p) = pend {
            f(p.0, p.1);
        }
    }

    /// The absolute byte position of data-stream byte `s` (`MPI_File_get_byte_offset`).
    pub fn byte_offset(&self, s: u64) -> u64 {
        if self.tile_size == 0 {
            return self.disp;
        }
        let tile = s / self.tile_size;
        let within = s % self.tile_size;
        let ri = self.prefix.partition_point(|&p| p <= within) - 1;
        self.disp + tile * self.tile_extent + self.runs[ri].0 + (within - self.prefix[ri])
    }

    /// Data-stream bytes of the view that lie before file offset `eof`.
    pub fn stream_before(&self, eof: u64) -> u64 {
        if eof <= self.disp || self.tile_size == 0 || self.tile_extent == 0 {
            return 0;
        }
        let rel = eof - self.disp;
        let tiles = rel / self.tile_extent;
        let rem = rel % self.tile_extent;
        let mut s = tiles * self.tile_size;
        for (i, &(off, len)) in self.runs.iter().enumerate() {
            if off >= rem {
                break;
            }
            s = tiles * self.tile_size + self.prefix[i] + len.min(rem - off);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Primitive;

    fn collect(v: &View, s: u64, n: u64) -> Vec<(u64, u64)> {
        let mut out = vec![];
        v.pieces(s, n, |o, l| out.push((o, l)));
        out
    }

    #[test]
    fn vector_tiles_map_to_strided_pieces() {
        let i = Datatype::predefined(Primitive::Int32);
        // 2 blocks of 1 int, stride 3 ints: data at 0 and 12, extent 16 (resized).
        let v = Datatype::vector(2, 1, 3, &i).unwrap();
        let r = Datatype::resized(&v, 0, 24).unwrap();
        let view = View::new(100, i.clone(), r, Datarep::Native, "t").unwrap();
        assert_eq!(collect(&view, 0, 16), vec![(100, 4), (112, 4), (124, 4), (136, 4)]);
        assert_eq!(collect(&view, 2, 4), vec![(102, 2), (112, 2)]);
        assert_eq!(view.byte_offset(8), 124);
        assert_eq!(view.stream_before(100), 0);
        assert_eq!(view.stream_before(114), 6);
        assert_eq!(view.stream_before(124), 8);
        assert_eq!(view.stream_before(200), 36);
    }

    #[test]
    fn contiguous_view_is_one_piece() {
        let v = View::bytes();
        assert_eq!(collect(&v, 10, 1000), vec![(10, 1000)]);
        assert_eq!(v.stream_before(77), 77);
    }
}
