//! Flattening: the [`Layout`] of one element (blocks, signature, bounds with their
//! sticky flags, alignment) and the accumulator every constructor builds it with,
//! applying the bound rules of the parent module's documentation.

use std::sync::Arc;

use super::blocks::{push_merged, Blocks, FLAT_LIMIT};
use super::{signature, PairValue, Primitive, Repr};
use crate::error::{ErrorClass, MpiError, Result};

/// The flattened layout of one element.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub(crate) size: usize,
    pub(crate) lb: isize,
    pub(crate) ub: isize,
    pub(crate) sticky_lb: bool,
    pub(crate) sticky_ub: bool,
    pub(crate) true_lb: isize,
    pub(crate) true_ub: isize,
    pub(crate) align: usize,
    pub(crate) blocks: Arc<Blocks>,
    pub(crate) sig: Arc<signature::Sig>,
    /// Basic elements in one element (a pair type counts as two).
    pub(crate) nbasic: usize,
}

impl Layout {
    pub(super) fn extent(&self) -> isize {
        self.ub.wrapping_sub(self.lb)
    }

    /// True when consecutive copies of this element form one gapless run.
    pub(super) fn dense(&self) -> bool {
        self.blocks
            .single()
            .is_some_and(|b| self.extent() == b.1 as isize)
    }

    pub(super) fn primitive(p: Primitive) -> Layout {
        let mut blocks = Vec::new();
        match p.repr() {
            Repr::Pair {
                value,
                index_offset,
            } => {
                let vs = pair_value_size(value);
                push_merged(&mut blocks, 0, vs);
                push_merged(&mut blocks, index_offset as isize, p.size() - vs);
            }
            _ => blocks.push((0, p.size())),
        }
        let true_ub = blocks
            .iter()
            .map(|&(o, l)| o + l as isize)
            .max()
            .unwrap_or(0);
        let nbasic = if matches!(p.repr(), Repr::Pair { .. }) {
            2
        } else {
            1
        };
        Layout {
            size: p.size(),
            lb: 0,
            ub: p.extent() as isize,
            sticky_lb: false,
            sticky_ub: false,
            true_lb: 0,
            true_ub,
            align: p.align(),
            blocks: Arc::new(Blocks::flat(blocks)),
            sig: Arc::new(signature::Sig::one(p)),
            nbasic,
        }
    }

    pub(super) fn marker(upper: bool) -> Layout {
        Layout {
            size: 0,
            lb: 0,
            ub: 0,
            sticky_lb: !upper,
            sticky_ub: upper,
            true_lb: 0,
            true_ub: 0,
            align: 1,
            blocks: Arc::new(Blocks::flat(Vec::new())),
            sig: Default::default(),
            nbasic: 0,
        }
    }
}

/// Size of the value part of a MINLOC/MAXLOC pair.
pub(super) fn pair_value_size(v: PairValue) -> usize {
    match v {
        PairValue::F32 | PairValue::I32 | PairValue::F32F32 | PairValue::I32I32 => 4,
        PairValue::F64 | PairValue::I64 | PairValue::F64F64 => 8,
        PairValue::I16 => 2,
        PairValue::F80 => 16,
    }
}

/// Accumulates the layout of a new type from replicated children.
pub(super) struct Acc {
    call: &'static str,
    /// The blocks since the last part (a repetition kept by structure).
    blocks: Vec<(isize, usize)>,
    parts: Vec<Blocks>,
    sig: signature::Sig,
    size: usize,
    nbasic: usize,
    lb: Option<isize>,
    ub: Option<isize>,
    slb: Option<isize>,
    sub: Option<isize>,
    any_lo: Option<isize>,
    any_hi: Option<isize>,
    tlb: Option<isize>,
    tub: Option<isize>,
    align: usize,
}

pub(super) fn overflow_err(call: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Arg,
        format!("{call}: the datatype's size or displacements overflow the address range"),
    )
}

fn min_opt(a: Option<isize>, b: isize) -> Option<isize> {
    Some(a.map_or(b, |a| a.min(b)))
}
fn max_opt(a: Option<isize>, b: isize) -> Option<isize> {
    Some(a.map_or(b, |a| a.max(b)))
}

impl Acc {
    pub(super) fn new(call: &'static str) -> Acc {
        Acc {
            call,
            blocks: Vec::new(),
            parts: Vec::new(),
            sig: signature::Sig::default(),
            size: 0,
            nbasic: 0,
            lb: None,
            ub: None,
            slb: None,
            sub: None,
            any_lo: None,
            any_hi: None,
            tlb: None,
            tub: None,
            align: 1,
        }
    }

    pub(super) fn overflow(&self) -> MpiError {
        overflow_err(self.call)
    }

    fn add_block(&mut self, off: isize, len: usize) {
        push_merged(&mut self.blocks, off, len);
    }

    /// Ends the current flat part (before a repetition kept by structure).
    fn flush(&mut self) {
        if !self.blocks.is_empty() {
            self.parts
                .push(Blocks::flat(std::mem::take(&mut self.blocks)));
        }
    }

    /// Adds `n` copies of `c`, the first at byte displacement `disp`, the
    /// following ones `c.extent()` bytes apart.
    pub(super) fn add(&mut self, disp: isize, n: usize, c: &Layout) -> Result<()> {
        self.add_strided(disp, n, c.extent(), c)
    }

    /// Adds `n` copies of `c`, the first at byte displacement `disp`, the
    /// following ones `ext` bytes apart.
    pub(super) fn add_strided(
        &mut self,
        disp: isize,
        n: usize,
        ext: isize,
        c: &Layout,
    ) -> Result<()> {
        if n == 0 || (c.size == 0 && !c.sticky_lb && !c.sticky_ub) {
            return Ok(());
        }
        let call = self.call;
        let ovf = move || overflow_err(call);
        let last = isize::try_from(n - 1)
            .ok()
            .and_then(|k| k.checked_mul(ext))
            .ok_or_else(ovf)?;
        let lo = disp.checked_add(last.min(0)).ok_or_else(ovf)?;
        let hi = disp.checked_add(last.max(0)).ok_or_else(ovf)?;
        let clb = lo.checked_add(c.lb).ok_or_else(ovf)?;
        let cub = hi.checked_add(c.ub).ok_or_else(ovf)?;
        self.any_lo = min_opt(self.any_lo, clb.min(cub));
        self.any_hi = max_opt(self.any_hi, clb.max(cub));
        if c.sticky_lb {
            self.slb = min_opt(self.slb, clb);
        } else if c.size > 0 {
            self.lb = min_opt(self.lb, clb);
        }
        if c.sticky_ub {
            self.sub = max_opt(self.sub, cub);
        } else if c.size > 0 {
            self.ub = max_opt(self.ub, cub);
        }
        if c.size == 0 {
            return Ok(());
        }
        self.tlb = min_opt(self.tlb, lo.checked_add(c.true_lb).ok_or_else(ovf)?);
        self.tub = max_opt(self.tub, hi.checked_add(c.true_ub).ok_or_else(ovf)?);
        self.align = self.align.max(c.align);
        let bytes = n.checked_mul(c.size).ok_or_else(ovf)?;
        self.size = self.size.checked_add(bytes).ok_or_else(ovf)?;
        if self.size > isize::MAX as usize {
            return Err(ovf());
        }
        self.nbasic = n
            .checked_mul(c.nbasic)
            .and_then(|b| self.nbasic.checked_add(b))
            .ok_or_else(ovf)?;

        // Signature (a long repetition kept by structure).
        self.sig.push_rep(n, &c.sig).ok_or_else(ovf)?;

        // Blocks (offsets are checked: the last copy's ends bound all others).
        disp.checked_add(last).ok_or_else(ovf)?;
        if c.dense() && (n == 1 || ext == c.size as isize) {
            let off = c.blocks.single().map_or(0, |b| b.0);
            let start = disp.checked_add(off).ok_or_else(ovf)?;
            self.add_block(start, bytes);
            return Ok(());
        }
        let cb = c.blocks.count();
        if n.saturating_mul(cb) <= FLAT_LIMIT {
            for k in 0..n {
                let base = disp + k as isize * ext;
                c.blocks
                    .for_each(base, &mut |o, l| push_merged(&mut self.blocks, o, l));
            }
            return Ok(());
        }
        // Many blocks: keep the repetition by structure.
        self.flush();
        self.parts.push(Blocks::Rep {
            disp,
            count: n,
            stride: ext,
            child_size: c.size,
            child: c.blocks.clone(),
        });
        Ok(())
    }

    pub(super) fn finish(mut self, pad: bool) -> Result<Layout> {
        let sticky_lb = self.slb.is_some();
        let sticky_ub = self.sub.is_some();
        let lb = self.slb.or(self.lb).or(self.any_lo).unwrap_or(0);
        let mut ub = self.sub.or(self.ub).or(self.any_hi).unwrap_or(0);
        if pad && !sticky_lb && !sticky_ub && self.size > 0 && self.align > 1 {
            let r = ub.wrapping_sub(lb).rem_euclid(self.align as isize);
            if r != 0 {
                ub = ub
                    .checked_add(self.align as isize - r)
                    .ok_or_else(|| self.overflow())?;
            }
        }
        ub.checked_sub(lb).ok_or_else(|| self.overflow())?;
        let acc = &mut self;
        let blocks = if acc.parts.is_empty() {
            Blocks::flat(std::mem::take(&mut acc.blocks))
        } else {
            acc.flush();
            if acc.parts.len() == 1 {
                acc.parts.pop().unwrap()
            } else {
                let mut prefix = Vec::with_capacity(acc.parts.len() + 1);
                prefix.push(0usize);
                for p in &acc.parts {
                    prefix.push(prefix.last().unwrap() + p.size());
                }
                Blocks::Seq {
                    parts: std::mem::take(&mut acc.parts),
                    prefix,
                }
            }
        };
        Ok(Layout {
            size: acc.size,
            lb,
            ub,
            sticky_lb,
            sticky_ub,
            true_lb: acc.tlb.unwrap_or(0),
            true_ub: acc.tub.unwrap_or(0),
            align: acc.align,
            blocks: Arc::new(blocks),
            sig: Arc::new(std::mem::take(&mut acc.sig)),
            nbasic: acc.nbasic,
        })
    }
}
