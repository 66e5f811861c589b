//! File views: a displacement, an elementary type and a filetype tiled across
//! the file, plus the data representation.
//!
//! The filetype is flattened once (by the datatype engine) into the (offset,
//! length) runs of one tile; the data stream of a view — the bytes the view
//! exposes, in order — maps to file offsets by tile arithmetic and a binary
//! search of the runs' prefix sums. Every access, independent or collective,
//! goes through [`View::pieces`], so nothing is ever written outside the view.
//!
//! The data stream is in the file's representation. When the representation
//! gives a predefined type a size in the file other than its native size
//! (`MPI_LONG` is 4 bytes in external32; a user representation's extent
//! function may say anything), the etype and filetype are laid out as MPI-4.1
//! §14.5.1 says ([`file_type`]): constructors that count in elements (portable
//! datatypes: contiguous, vector, indexed, indexed_block, subarray, darray,
//! dup) are scaled to the file sizes, byte displacements (hvector, hindexed,
//! struct, resized) are taken as they are.

use std::sync::Arc;

use crate::buf::Region;
use crate::datatype::{external32, Combiner, Datatype, Primitive};
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
    /// Converts `count` elements of the region's datatype from the file
    /// representation in `file` to elements `position..position + count` of the
    /// region (whose first element is where the access's buffer starts). The
    /// region hands the memory to a C callback only after checking that those
    /// elements are in it and that it is writable (`Region::elements_mut_ptr`).
    fn read(
        &self,
        user: &mut Region<'_, &Datatype>,
        count: usize,
        position: usize,
        file: &[u8],
    ) -> Result<()>;
    /// Converts elements `position..position + count` of the region to the file
    /// representation in `file` (the memory reached through `Region::elements_ptr`).
    fn write(
        &self,
        user: &Region<'_, &Datatype>,
        count: usize,
        position: usize,
        file: &mut [u8],
    ) -> Result<()>;
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

    /// Bytes of one element of predefined `p` in the file.
    pub fn file_size(&self, p: Primitive) -> Result<usize> {
        match self {
            Datarep::Native | Datarep::Internal => Ok(p.size()),
            Datarep::External32 => Ok(external32::primitive_size(p)),
            Datarep::User(_, c) => c.file_extent(&Datatype::predefined(p)),
        }
    }

    /// Bytes of `count` elements of `dt` in the file.
    pub fn file_bytes(&self, dt: &Datatype, count: usize) -> Result<u64> {
        if matches!(self, Datarep::Native | Datarep::Internal) {
            return Ok((dt.size() as u64).saturating_mul(count as u64));
        }
        let mut one = 0u64;
        for (p, k) in dt.signature_runs(1) {
            one = one.saturating_add((self.file_size(p)? as u64).saturating_mul(k as u64));
        }
        Ok(one.saturating_mul(count as u64))
    }

    /// Whether every predefined type of `dt` has its native size in the file.
    pub fn same_sizes(&self, dt: &Datatype) -> Result<bool> {
        if matches!(self, Datarep::Native | Datarep::Internal) {
            return Ok(true);
        }
        for (p, _) in dt.signature_runs(1) {
            if self.file_size(p)? != p.size() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// `dt` as it lies in a file of representation `rep` (MPI-4.1 §14.5.1): each
/// predefined type takes its file size; constructors that count in elements
/// of their old type scale with it, byte displacements and bounds stay.
pub fn file_type(call: &str, dt: &Datatype, rep: &Datarep) -> Result<Datatype> {
    if rep.same_sizes(dt)? {
        return Ok(dt.clone());
    }
    let bytes = || Datatype::predefined(Primitive::Byte);
    if let Some(p) = dt.as_primitive() {
        let n = rep.file_size(p)?;
        return Datatype::contiguous(n as i64, &bytes());
    }
    let (ints, addrs, types) = dt.contents();
    let old = |i: usize| -> Result<Datatype> { file_type(call, &types[i], rep) };
    let n = || ints.first().copied().unwrap_or(0).max(0) as usize;
    let t = match dt.combiner() {
        Combiner::Dup => old(0)?,
        Combiner::Contiguous => Datatype::contiguous(ints[0], &old(0)?)?,
        Combiner::Vector => Datatype::vector(ints[0], ints[1], ints[2], &old(0)?)?,
        Combiner::Hvector => Datatype::hvector(ints[0], ints[1], addrs[0], &old(0)?)?,
        Combiner::Indexed => Datatype::indexed(&ints[1..1 + n()], &ints[1 + n()..1 + 2 * n()], &old(0)?)?,
        Combiner::Hindexed => Datatype::hindexed(&ints[1..1 + n()], &addrs, &old(0)?)?,
        Combiner::IndexedBlock => Datatype::indexed_block(ints[1], &ints[2..], &old(0)?)?,
        Combiner::HindexedBlock => Datatype::hindexed_block(ints[1], &addrs, &old(0)?)?,
        Combiner::Struct => {
            let ts = (0..types.len()).map(old).collect::<Result<Vec<_>>>()?;
            Datatype::structure(&ints[1..1 + n()], &addrs, &ts)?
        }
        Combiner::Resized => Datatype::resized(&old(0)?, addrs[0], addrs[1])?,
        Combiner::Subarray => {
            let k = n();
            let fortran = ints[1 + 3 * k] == 15;
            Datatype::subarray(&ints[1..1 + k], &ints[1 + k..1 + 2 * k], &ints[1 + 2 * k..1 + 3 * k], fortran, &old(0)?)?
        }
        Combiner::Darray => match types[0].as_primitive() {
            // Every displacement and bound of a darray of a predefined type is
            // a whole number of elements: scale them.
            Some(p) => {
                let (ns, fs) = (p.size() as isize, rep.file_size(p)? as isize);
                let scale = |x: isize| x / ns.max(1) * fs;
                let blocks = dt.blocks();
                let lens: Vec<i64> = blocks.iter().map(|&(_, l)| scale(l as isize) as i64).collect();
                let offs: Vec<isize> = blocks.iter().map(|&(o, _)| scale(o)).collect();
                let h = Datatype::hindexed(&lens, &offs, &bytes())?;
                Datatype::resized(&h, scale(dt.lb()), scale(dt.extent()))?
            }
            None => {
                return Err(MpiError::arg(
                    ErrorClass::UnsupportedDatarep,
                    call,
                    "filetype",
                    format!("a darray of a derived type in data representation \"{}\", whose sizes differ from the native ones", rep.name()),
                ))
            }
        },
        c => {
            return Err(MpiError::arg(ErrorClass::UnsupportedDatarep, call, "filetype", format!("{} in data representation \"{}\"", c.name(), rep.name())));
        }
    };
    Ok(t)
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
    /// Bytes of one etype in the file.
    file_es: u64,
    /// Whether a tile's data reach into the next tile.
    overlapping: bool,
}

impl View {
    /// The default view: displacement 0, etype and filetype MPI_BYTE, native.
    pub fn bytes() -> View {
        let b = Datatype::predefined(crate::datatype::Primitive::Byte);
        View::new(0, b.clone(), b, Datarep::Native, "MPI_File_open")
            .expect("the byte view is valid")
    }

    pub fn new(
        disp: u64,
        etype: Datatype,
        filetype: Datatype,
        datarep: Datarep,
        call: &str,
    ) -> Result<View> {
        if etype.extent() < 0 || etype.true_lb() < 0 {
            return Err(MpiError::arg(
                ErrorClass::Type,
                call,
                "etype",
                "has a negative displacement",
            ));
        }
        // The layouts in the file (the user's types when sizes are native).
        let fetype = file_type(call, &etype, &datarep)?;
        let ftype = file_type(call, &filetype, &datarep)?;
        let es = fetype.size();
        if es > 0 && ftype.size() % es != 0 {
            return Err(MpiError::arg(
                ErrorClass::Type,
                call,
                "filetype",
                format!("its size {} in the file is not a multiple of the etype's size {es} in the file", ftype.size()),
            ));
        }
        let filetype_user = filetype;
        let filetype = ftype;
        let mut runs: Vec<(u64, u64)> = Vec::with_capacity(filetype.block_count().min(1 << 20));
        let mut last_end: i64 = i64::MIN;
        for (off, len) in filetype.blocks() {
            if len == 0 {
                continue;
            }
            if off < 0 {
                return Err(MpiError::arg(
                    ErrorClass::Type,
                    call,
                    "filetype",
                    "has a negative displacement (MPI requires non-negative ones)",
                ));
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
            return Err(MpiError::arg(
                ErrorClass::Type,
                call,
                "filetype",
                format!("has data but extent {ext}: its tiles cannot advance"),
            ));
        }
        // Data reaching past the extent make consecutive tiles overlap (HDF5
        // sets such views for one-tile accesses); accesses that span tiles of
        // them are not in file order ([`View::in_order`]).
        let overlapping = runs
            .first()
            .is_some_and(|&(first, _)| last_end > first as i64 + ext as i64);
        let mut prefix = Vec::with_capacity(runs.len());
        let mut acc = 0;
        for r in &runs {
            prefix.push(acc);
            acc += r.1;
        }
        Ok(View {
            disp,
            etype,
            filetype: filetype_user,
            datarep,
            runs: Arc::new(runs),
            prefix: Arc::new(prefix),
            tile_size,
            tile_extent: ext.max(0) as u64,
            file_es: es as u64,
            overlapping,
        })
    }

    /// Bytes of one etype in the file: the unit of offsets and pointers.
    pub fn etype_size(&self) -> u64 {
        self.file_es
    }

    /// Whether the file pieces of stream bytes `[start, start + len)` come in
    /// increasing file order (always, unless the access spans tiles that overlap).
    pub fn in_order(&self, start: u64, len: u64) -> bool {
        !self.overlapping
            || len == 0
            || self.tile_size == 0
            || start / self.tile_size == (start + len - 1) / self.tile_size
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
        assert_eq!(
            collect(&view, 0, 16),
            vec![(100, 4), (112, 4), (124, 4), (136, 4)]
        );
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
