//! The derived datatype constructors (`MPI_Type_contiguous`, vector, indexed,
//! struct, resized, subarray, darray, F90 types) with their argument checks, and
//! the [`Combiner`] each records for `MPI_Type_get_envelope`/`get_contents`.

use std::sync::{Mutex, OnceLock};

use super::layout::{overflow_err, Acc, Layout};
use super::{Datatype, Kind, Primitive};
use crate::error::{ErrorClass, MpiError, Result};

/// How a datatype was constructed (`MPI_COMBINER_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Combiner {
    Named,
    Dup,
    Contiguous,
    Vector,
    Hvector,
    Indexed,
    Hindexed,
    IndexedBlock,
    HindexedBlock,
    Struct,
    Subarray,
    Darray,
    Resized,
    /// `MPI_Type_create_f90_integer`: a predefined type named by its range.
    F90Integer,
    /// `MPI_Type_create_f90_real`: named by precision and range.
    F90Real,
    /// `MPI_Type_create_f90_complex`: named by precision and range.
    F90Complex,
}

impl Combiner {
    /// Every combiner.
    pub const ALL: &'static [Combiner] = &[
        Combiner::Named,
        Combiner::Dup,
        Combiner::Contiguous,
        Combiner::Vector,
        Combiner::Hvector,
        Combiner::Indexed,
        Combiner::Hindexed,
        Combiner::IndexedBlock,
        Combiner::HindexedBlock,
        Combiner::Struct,
        Combiner::Subarray,
        Combiner::Darray,
        Combiner::Resized,
        Combiner::F90Integer,
        Combiner::F90Real,
        Combiner::F90Complex,
    ];

    /// The C name, e.g. `MPI_COMBINER_VECTOR` (the C library gives the standard ABI's
    /// value by this name, from abi.txt).
    pub const fn name(self) -> &'static str {
        match self {
            Combiner::Named => "MPI_COMBINER_NAMED",
            Combiner::Dup => "MPI_COMBINER_DUP",
            Combiner::Contiguous => "MPI_COMBINER_CONTIGUOUS",
            Combiner::Vector => "MPI_COMBINER_VECTOR",
            Combiner::Hvector => "MPI_COMBINER_HVECTOR",
            Combiner::Indexed => "MPI_COMBINER_INDEXED",
            Combiner::Hindexed => "MPI_COMBINER_HINDEXED",
            Combiner::IndexedBlock => "MPI_COMBINER_INDEXED_BLOCK",
            Combiner::HindexedBlock => "MPI_COMBINER_HINDEXED_BLOCK",
            Combiner::Struct => "MPI_COMBINER_STRUCT",
            Combiner::Subarray => "MPI_COMBINER_SUBARRAY",
            Combiner::Darray => "MPI_COMBINER_DARRAY",
            Combiner::Resized => "MPI_COMBINER_RESIZED",
            Combiner::F90Integer => "MPI_COMBINER_F90_INTEGER",
            Combiner::F90Real => "MPI_COMBINER_F90_REAL",
            Combiner::F90Complex => "MPI_COMBINER_F90_COMPLEX",
        }
    }
}

fn check_count(call: &str, arg: &str, count: i64) -> Result<usize> {
    if count < 0 {
        return Err(MpiError::arg(
            ErrorClass::Count,
            call,
            arg,
            format!("{count} is negative"),
        ));
    }
    usize::try_from(count).map_err(|_| {
        MpiError::arg(
            ErrorClass::Count,
            call,
            arg,
            format!("{count} is too large"),
        )
    })
}

fn check_blocklen(call: &str, arg: &str, b: i64) -> Result<usize> {
    if b < 0 {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            arg,
            format!("{b} is negative"),
        ));
    }
    usize::try_from(b)
        .map_err(|_| MpiError::arg(ErrorClass::Arg, call, arg, format!("{b} is too large")))
}

fn check_len(call: &str, arg: &str, got: usize, want: usize) -> Result<()> {
    if got != want {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            arg,
            format!("has {got} entries, the count of blocks is {want}"),
        ));
    }
    Ok(())
}

/// Element-unit displacement `d` times `extent` bytes, checked.
fn scale(call: &str, arg: &str, d: i64, extent: isize) -> Result<isize> {
    isize::try_from(d)
        .ok()
        .and_then(|d| d.checked_mul(extent))
        .ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Arg,
                call,
                arg,
                format!("{d} elements of extent {extent} overflow"),
            )
        })
}

impl Datatype {
    /// `MPI_Type_contiguous`.
    pub fn contiguous(count: i64, old: &Datatype) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_contiguous";
        let n = check_count(CALL, "count", count)?;
        let mut acc = Acc::new(CALL);
        acc.add(0, n, old.layout())?;
        Ok(Datatype::derived(
            Combiner::Contiguous,
            acc.finish(false)?,
            vec![count],
            vec![],
            vec![old.clone()],
        ))
    }

    fn strided(
        call: &'static str,
        count: i64,
        blocklen: i64,
        stride_bytes: isize,
        old: &Datatype,
    ) -> Result<Layout> {
        let n = check_count(call, "count", count)?;
        let bl = check_blocklen(call, "blocklength", blocklen)?;
        let c = old.layout();
        let mut acc = Acc::new(call);
        let block_bytes = (bl as isize).checked_mul(c.extent());
        if c.dense() && n > 0 && block_bytes == Some(stride_bytes) {
            // The blocks abut: the same type map as one contiguous run.
            let total = n.checked_mul(bl).ok_or_else(|| acc.overflow())?;
            acc.add(0, total, c)?;
        } else if bl > 0 && n > 0 {
            // One block (bl copies of old), repeated n times stride_bytes apart.
            let mut blk = Acc::new(call);
            blk.add(0, bl, c)?;
            let blk = blk.finish(false)?;
            acc.add_strided(0, n, stride_bytes, &blk)?;
        }
        acc.finish(false)
    }

    /// `MPI_Type_vector`: `stride` in elements of `old`'s extent.
    pub fn vector(count: i64, blocklen: i64, stride: i64, old: &Datatype) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_vector";
        let stride_bytes = scale(CALL, "stride", stride, old.extent())?;
        let l = Datatype::strided(CALL, count, blocklen, stride_bytes, old)?;
        Ok(Datatype::derived(
            Combiner::Vector,
            l,
            vec![count, blocklen, stride],
            vec![],
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_create_hvector`: `stride_bytes` in bytes.
    pub fn hvector(
        count: i64,
        blocklen: i64,
        stride_bytes: isize,
        old: &Datatype,
    ) -> Result<Datatype> {
        let l = Datatype::strided(
            "MPI_Type_create_hvector",
            count,
            blocklen,
            stride_bytes,
            old,
        )?;
        Ok(Datatype::derived(
            Combiner::Hvector,
            l,
            vec![count, blocklen],
            vec![stride_bytes],
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_indexed`: displacements in elements of `old`'s extent.
    pub fn indexed(blocklens: &[i64], displs: &[i64], old: &Datatype) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_indexed";
        check_len(
            CALL,
            "array_of_displacements",
            displs.len(),
            blocklens.len(),
        )?;
        let ext = old.extent();
        let mut acc = Acc::new(CALL);
        for (i, (&b, &d)) in blocklens.iter().zip(displs).enumerate() {
            let bl = check_blocklen(CALL, &format!("array_of_blocklengths[{i}]"), b)?;
            let disp = scale(CALL, &format!("array_of_displacements[{i}]"), d, ext)?;
            acc.add(disp, bl, old.layout())?;
        }
        let mut ints = Vec::with_capacity(2 * blocklens.len() + 1);
        ints.push(blocklens.len() as i64);
        ints.extend_from_slice(blocklens);
        ints.extend_from_slice(displs);
        Ok(Datatype::derived(
            Combiner::Indexed,
            acc.finish(false)?,
            ints,
            vec![],
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_create_hindexed`: displacements in bytes.
    pub fn hindexed(blocklens: &[i64], displs_bytes: &[isize], old: &Datatype) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_hindexed";
        check_len(
            CALL,
            "array_of_displacements",
            displs_bytes.len(),
            blocklens.len(),
        )?;
        let mut acc = Acc::new(CALL);
        for (i, (&b, &d)) in blocklens.iter().zip(displs_bytes).enumerate() {
            let bl = check_blocklen(CALL, &format!("array_of_blocklengths[{i}]"), b)?;
            acc.add(d, bl, old.layout())?;
        }
        let mut ints = Vec::with_capacity(blocklens.len() + 1);
        ints.push(blocklens.len() as i64);
        ints.extend_from_slice(blocklens);
        Ok(Datatype::derived(
            Combiner::Hindexed,
            acc.finish(false)?,
            ints,
            displs_bytes.to_vec(),
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_create_indexed_block`: displacements in elements of `old`'s extent.
    pub fn indexed_block(blocklen: i64, displs: &[i64], old: &Datatype) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_indexed_block";
        let bl = check_blocklen(CALL, "blocklength", blocklen)?;
        let ext = old.extent();
        let mut acc = Acc::new(CALL);
        for (i, &d) in displs.iter().enumerate() {
            let disp = scale(CALL, &format!("array_of_displacements[{i}]"), d, ext)?;
            acc.add(disp, bl, old.layout())?;
        }
        let mut ints = Vec::with_capacity(displs.len() + 2);
        ints.push(displs.len() as i64);
        ints.push(blocklen);
        ints.extend_from_slice(displs);
        Ok(Datatype::derived(
            Combiner::IndexedBlock,
            acc.finish(false)?,
            ints,
            vec![],
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_create_hindexed_block`: displacements in bytes.
    pub fn hindexed_block(
        blocklen: i64,
        displs_bytes: &[isize],
        old: &Datatype,
    ) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_hindexed_block";
        let bl = check_blocklen(CALL, "blocklength", blocklen)?;
        let mut acc = Acc::new(CALL);
        for &d in displs_bytes {
            acc.add(d, bl, old.layout())?;
        }
        let ints = vec![displs_bytes.len() as i64, blocklen];
        Ok(Datatype::derived(
            Combiner::HindexedBlock,
            acc.finish(false)?,
            ints,
            displs_bytes.to_vec(),
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_create_struct` (and MPI-1 `MPI_Type_struct`, with the
    /// [`lb_marker`](Datatype::lb_marker)/[`ub_marker`](Datatype::ub_marker)
    /// types). The extent is padded to the largest alignment of the
    /// components unless a marker or a resized component sets a bound.
    pub fn structure(
        blocklens: &[i64],
        displs_bytes: &[isize],
        types: &[Datatype],
    ) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_struct";
        check_len(
            CALL,
            "array_of_displacements",
            displs_bytes.len(),
            blocklens.len(),
        )?;
        check_len(CALL, "array_of_types", types.len(), blocklens.len())?;
        let mut acc = Acc::new(CALL);
        for (i, ((&b, &d), t)) in blocklens.iter().zip(displs_bytes).zip(types).enumerate() {
            let bl = check_blocklen(CALL, &format!("array_of_blocklengths[{i}]"), b)?;
            acc.add(d, bl, t.layout())?;
        }
        let mut ints = Vec::with_capacity(blocklens.len() + 1);
        ints.push(blocklens.len() as i64);
        ints.extend_from_slice(blocklens);
        Ok(Datatype::derived(
            Combiner::Struct,
            acc.finish(true)?,
            ints,
            displs_bytes.to_vec(),
            types.to_vec(),
        ))
    }

    /// `MPI_Type_create_f90_integer` / `_real` / `_complex`: the predefined
    /// type `p` under the name Fortran 90's `SELECTED_*_KIND` parameters give it.
    /// It behaves as `p` everywhere (reductions, packing, signatures) and is
    /// predefined (committed, never freed); its envelope reports `combiner` with
    /// the parameters (`r`, or `p, r`). Cached per (combiner, parameters), so
    /// the same arguments give the same type, as MPI asks.
    pub fn f90(combiner: Combiner, base: Primitive, params: &[i64]) -> Datatype {
        type Key = (Combiner, Vec<i64>);
        static CACHE: OnceLock<Mutex<Vec<(Key, Datatype)>>> = OnceLock::new();
        let cache = CACHE.get_or_init(|| Mutex::new(Vec::new()));
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, d)) = cache
            .iter()
            .find(|((c, p), _)| *c == combiner && p.as_slice() == params)
        {
            return d.clone();
        }
        let d = Datatype::make(
            Kind::Predefined(base),
            combiner,
            Datatype::predefined(base).0.layout.clone(),
            (params.to_vec(), vec![], vec![]),
            true,
            String::new(),
        );
        cache.push(((combiner, params.to_vec()), d.clone()));
        d
    }

    /// `MPI_Type_create_resized`: explicit (sticky) lower bound and extent.
    pub fn resized(old: &Datatype, lb: isize, extent: isize) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_resized";
        let ub = lb.checked_add(extent).ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "extent",
                format!("lb {lb} + extent {extent} overflows"),
            )
        })?;
        let mut l = (*old.0.layout).clone();
        l.lb = lb;
        l.ub = ub;
        l.sticky_lb = true;
        l.sticky_ub = true;
        Ok(Datatype::derived(
            Combiner::Resized,
            l,
            vec![],
            vec![lb, extent],
            vec![old.clone()],
        ))
    }

    /// `MPI_Type_create_subarray`: the `subsizes` block at `starts` of an
    /// array of `sizes` (C order: last dimension fastest, unless `fortran`),
    /// with lower bound 0 and the whole array's extent.
    pub fn subarray(
        sizes: &[i64],
        subsizes: &[i64],
        starts: &[i64],
        fortran: bool,
        old: &Datatype,
    ) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_subarray";
        let n = sizes.len();
        if n == 0 {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "ndims",
                "must be positive",
            ));
        }
        for i in 0..n {
            if sizes[i] <= 0 {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    CALL,
                    &format!("array_of_sizes[{i}]"),
                    format!("{} is not positive", sizes[i]),
                ));
            }
            if subsizes[i] <= 0 || subsizes[i] > sizes[i] {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    CALL,
                    &format!("array_of_subsizes[{i}]"),
                    format!("{} is not in 1..={}", subsizes[i], sizes[i]),
                ));
            }
            if starts[i] < 0 || starts[i] > sizes[i] - subsizes[i] {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    CALL,
                    &format!("array_of_starts[{i}]"),
                    format!("{} is not in 0..={}", starts[i], sizes[i] - subsizes[i]),
                ));
            }
        }
        // Dimensions from fastest to slowest varying.
        let order: Vec<usize> = if fortran {
            (0..n).collect()
        } else {
            (0..n).rev().collect()
        };
        let ext = old.extent();
        let ovf = || overflow_err(CALL);
        let mut t = Datatype::contiguous(subsizes[order[0]], old)?;
        let mut stride = ext;
        let mut disp = (starts[order[0]] as isize)
            .checked_mul(ext)
            .ok_or_else(ovf)?;
        for &d in &order[1..] {
            let prev = order[order.iter().position(|&x| x == d).unwrap() - 1];
            stride = stride.checked_mul(sizes[prev] as isize).ok_or_else(ovf)?;
            t = Datatype::hvector(subsizes[d], 1, stride, &t)?;
            disp = disp
                .checked_add((starts[d] as isize).checked_mul(stride).ok_or_else(ovf)?)
                .ok_or_else(ovf)?;
        }
        let total = sizes
            .iter()
            .try_fold(ext, |a, &x| a.checked_mul(x as isize))
            .ok_or_else(ovf)?;
        let placed = Datatype::hindexed_block(1, &[disp], &t)?;
        let whole = Datatype::resized(&placed, 0, total)?;
        let mut ints = vec![n as i64];
        ints.extend_from_slice(sizes);
        ints.extend_from_slice(subsizes);
        ints.extend_from_slice(starts);
        ints.push(if fortran { 15 } else { 12 });
        Ok(whole.relabel(Combiner::Subarray, ints, vec![], vec![old.clone()]))
    }

    /// `MPI_Type_create_darray`: this process's part of an array of `gsizes`
    /// distributed over a `psizes` process grid (row-major ranks); `distribs`
    /// holds 0 = none, 1 = block, 2 = cyclic, with `dargs` (-1 = default).
    /// Lower bound 0, extent of the whole array.
    #[allow(clippy::too_many_arguments)]
    pub fn darray(
        size: i64,
        rank: i64,
        gsizes: &[i64],
        distribs: &[i32],
        dargs: &[i64],
        psizes: &[i64],
        fortran: bool,
        old: &Datatype,
        abi_ints: Vec<i64>,
    ) -> Result<Datatype> {
        const CALL: &str = "MPI_Type_create_darray";
        let n = gsizes.len();
        let ovf = || overflow_err(CALL);
        if n == 0 {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "ndims",
                "must be positive",
            ));
        }
        let nprocs = psizes
            .iter()
            .try_fold(1i64, |a, &p| if p > 0 { a.checked_mul(p) } else { None });
        if nprocs != Some(size) {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "array_of_psizes",
                format!("the grid does not have {size} processes"),
            ));
        }
        if rank < 0 || rank >= size {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "rank",
                format!("{rank} is not in 0..{size}"),
            ));
        }
        // Grid coordinates: the process grid is row-major whatever `order` is.
        let mut coords = vec![0i64; n];
        let mut r = rank;
        for i in (0..n).rev() {
            coords[i] = r % psizes[i];
            r /= psizes[i];
        }
        let ext = old.extent();
        // Byte stride of dimension d's index (the product of the faster dimensions).
        let stride_of = |d: usize| -> Result<isize> {
            let faster: Vec<usize> = if fortran {
                (0..d).collect()
            } else {
                (d + 1..n).collect()
            };
            faster
                .iter()
                .try_fold(ext, |a, &i| a.checked_mul(gsizes[i] as isize))
                .ok_or_else(ovf)
        };
        let fastest = if fortran { 0 } else { n - 1 };
        let dims: Vec<usize> = if fortran {
            (0..n).collect()
        } else {
            (0..n).rev().collect()
        };
        let mut t = old.clone();
        let mut disp: isize = 0;
        for &d in &dims {
            let (g, np, c) = (gsizes[d], psizes[d], coords[d]);
            if g <= 0 {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    CALL,
                    &format!("array_of_gsizes[{d}]"),
                    format!("{g} is not positive"),
                ));
            }
            let stride = stride_of(d)?;
            let (new_t, offset) = match distribs[d] {
                0 | 1 => {
                    if distribs[d] == 0 && np != 1 {
                        return Err(MpiError::arg(
                            ErrorClass::Arg,
                            CALL,
                            &format!("array_of_psizes[{d}]"),
                            "must be 1 for MPI_DISTRIBUTE_NONE",
                        ));
                    }
                    let blk = if distribs[d] == 0 || dargs[d] == -1 {
                        (g + np - 1) / np
                    } else {
                        dargs[d]
                    };
                    if blk <= 0 || blk.checked_mul(np).is_none_or(|x| x < g) {
                        return Err(MpiError::arg(
                            ErrorClass::Arg,
                            CALL,
                            &format!("array_of_dargs[{d}]"),
                            format!("{blk} * {np} processes does not cover {g} elements"),
                        ));
                    }
                    let mine = (g - blk * c).clamp(0, blk);
                    let nt = if d == fastest {
                        Datatype::contiguous(mine, &t)?
                    } else {
                        Datatype::hvector(mine, 1, stride, &t)?
                    };
                    (nt, if mine == 0 { 0 } else { blk * c })
                }
                2 => {
                    let blk = if dargs[d] == -1 { 1 } else { dargs[d] };
                    if blk <= 0 {
                        return Err(MpiError::arg(
                            ErrorClass::Arg,
                            CALL,
                            &format!("array_of_dargs[{d}]"),
                            format!("{blk} is not positive"),
                        ));
                    }
                    let st = c * blk;
                    let local = if g - 1 < st {
                        0
                    } else {
                        let span = g - st;
                        (span / (np * blk)) * blk + (span % (np * blk)).min(blk)
                    };
                    let (count, rem) = (local / blk, local % blk);
                    let cstride = (np * blk) as isize * stride;
                    let mut nt = Datatype::hvector(count, blk, cstride, &t)?;
                    if rem != 0 {
                        let tail = (count as isize).checked_mul(cstride).ok_or_else(ovf)?;
                        nt = Datatype::structure(&[1, rem], &[0, tail], &[nt, t.clone()])?;
                    }
                    if d == fastest {
                        let at = (st as isize).checked_mul(ext).ok_or_else(ovf)?;
                        let placed = Datatype::hindexed_block(1, &[at], &nt)?;
                        nt = Datatype::resized(
                            &placed,
                            0,
                            ext.checked_mul(g as isize).ok_or_else(ovf)?,
                        )?;
                        (nt, 0)
                    } else {
                        (nt, if local == 0 { 0 } else { st })
                    }
                }
                x => {
                    return Err(MpiError::arg(
                        ErrorClass::Arg,
                        CALL,
                        &format!("array_of_distribs[{d}]"),
                        format!("{x} is not an MPI_DISTRIBUTE_* value"),
                    ))
                }
            };
            // One step of this dimension spans the whole dimension, so that
            // the next (slower) dimension's blocks of several steps land
            // `gsizes[d]` elements of the previous type apart.
            let span = t.extent().checked_mul(g as isize).ok_or_else(ovf)?;
            t = Datatype::resized(&new_t, 0, span)?;
            disp = disp
                .checked_add((offset as isize).checked_mul(stride).ok_or_else(ovf)?)
                .ok_or_else(ovf)?;
        }
        let total = gsizes
            .iter()
            .try_fold(ext, |a, &x| a.checked_mul(x as isize))
            .ok_or_else(ovf)?;
        let placed = Datatype::hindexed_block(1, &[disp], &t)?;
        let whole = Datatype::resized(&placed, 0, total)?;
        Ok(whole.relabel(Combiner::Darray, abi_ints, vec![], vec![old.clone()]))
    }
}
