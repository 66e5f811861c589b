//! Layout plans: where the elements of the computing primitive lie inside one
//! element of a (possibly derived) datatype, and the loop that runs a kernel over
//! each run of elements (`MPI_REPLACE` included). Separate from the kernels, which
//! only see runs of equally spaced values.

use std::ptr;

use super::kernels::reduce_run;
use super::PredefinedOp;
use crate::datatype::{PairValue, Primitive, Repr};

/// Where the elements of the computing primitive lie within one element of
/// the datatype.
#[derive(Debug, PartialEq)]
pub(super) enum Layout {
    /// The datatype is the primitive: one element every `extent` bytes.
    Predefined,
    Derived(Plan),
}

/// Datatypes with more blocks than this are reduced block by block, without
/// a plan (whose list would be as long as the blocks).
pub(super) const STREAM_BLOCKS: usize = 1 << 20;

/// Runs `(offset, n)`: `n` primitive elements packed `prim.size()` bytes apart
/// from `offset` (relative to the start of the datatype's element).
#[derive(Debug, PartialEq)]
pub(super) struct Plan {
    pub(super) runs: Vec<(isize, usize)>,
    /// The datatype is `n` packed primitive elements filling its extent: the
    /// whole buffer is one run of `count * n`.
    pub(super) dense: Option<usize>,
}

/// Memory span of one primitive's data: value and index of a pair can be
/// apart (`MPI_SHORT_INT`: value 2 bytes, index at 4).
pub(super) fn data_span(prim: Primitive) -> usize {
    match prim.repr() {
        Repr::Pair {
            value,
            index_offset,
        } => index_offset as usize + pair_index_width(value),
        _ => prim.size(),
    }
}

pub(super) fn pair_index_width(v: PairValue) -> usize {
    match v {
        PairValue::F64F64 => 8,
        _ => 4,
    }
}

/// Finds the primitive elements of a derived datatype from its flattened
/// blocks: the blocks' bytes, in order, are the data bytes of consecutive
/// primitive elements (`prim.size()` each); an element starts where its first
/// data byte lies, and its fields are at the C layout's offsets from there.
pub(super) fn plan(
    prim: Primitive,
    blocks: &[(isize, usize)],
    extent: isize,
) -> std::result::Result<Plan, String> {
    let esz = prim.size();
    let packable = data_span(prim) == esz;
    let mut runs: Vec<(isize, usize)> = Vec::new();
    let push = |runs: &mut Vec<(isize, usize)>, off: isize, n: usize| {
        if let Some(last) = runs.last_mut() {
            if packable && last.0 + (last.1 * esz) as isize == off {
                last.1 += n;
                return;
            }
        }
        runs.push((off, n));
    };
    let mut need = 0usize; // data bytes of the current element still to pass
    for &(off, len) in blocks {
        let mut o = 0usize;
        while o < len {
            if need > 0 {
                let t = need.min(len - o);
                o += t;
                need -= t;
                continue;
            }
            let rem = len - o;
            if packable && rem >= esz {
                let n = rem / esz;
                push(&mut runs, off + o as isize, n);
                o += n * esz;
                continue;
            }
            if packable {
                return Err(format!(
                    "an element of {} is split between blocks of the datatype",
                    prim.name()
                ));
            }
            push(&mut runs, off + o as isize, 1);
            let t = esz.min(rem);
            o += t;
            need = esz - t;
        }
    }
    if need != 0 {
        return Err(format!(
            "the datatype ends inside an element of {}",
            prim.name()
        ));
    }
    let dense = match runs.as_slice() {
        [(0, n)] if packable && (n * esz) as isize == extent => Some(*n),
        _ => None,
    };
    Ok(Plan { runs, dense })
}

/// # Safety
/// The buffers cover `count` elements of the layout (see [`Op::apply`]).
pub(super) unsafe fn apply_layout(
    op: PredefinedOp,
    prim: Primitive,
    layout: &Layout,
    inp: *const u8,
    io: *mut u8,
    count: usize,
    extent: isize,
) {
    match layout {
        // A predefined type's element is one `prim` (size = extent), so
        // the `count` values `prim.extent()` apart are exactly the `count`
        // elements the caller guarantees readable at `inp`, writable at `io`,
        // not overlapping.
        // SAFETY: exactly the `count` elements the caller guarantees.
        Layout::Predefined => unsafe { reduce_run(op, prim, inp, io, count, prim.extent()) },
        // `dense` is set only when the element is `n` packed values of
        // `prim` filling the whole extent (see `plan`), so the `count` elements
        // the caller guarantees are `count * n` packed values of `prim`.
        // SAFETY: `count * n` packed values of `prim`, as the caller guarantees.
        Layout::Derived(Plan { dense: Some(n), .. }) => unsafe {
            reduce_run(op, prim, inp, io, count * n, prim.size())
        },
        Layout::Derived(plan) => {
            for i in 0..count {
                let base = i as isize * extent;
                for &(off, n) in &plan.runs {
                    // SAFETY: element i's run lies inside both buffers.
                    unsafe {
                        reduce_run(
                            op,
                            prim,
                            inp.offset(base + off),
                            io.offset(base + off),
                            n,
                            prim.size(),
                        )
                    }
                }
            }
        }
    }
}

/// MPI_REPLACE: copies the data bytes (the blocks) of every element.
///
/// # Safety
/// The buffers cover `count` elements of the layout.
pub(super) unsafe fn replace(
    inp: *const u8,
    io: *mut u8,
    count: usize,
    blocks: &[(isize, usize)],
    extent: isize,
) {
    if let [(0, len)] = blocks {
        if *len as isize == extent {
            // SAFETY: dense layout: the buffers are `count * extent` bytes.
            unsafe { ptr::copy(inp, io, count * len) };
            return;
        }
    }
    for i in 0..count {
        let base = i as isize * extent;
        for &(off, len) in blocks {
            // SAFETY: each block of each element is inside both buffers.
            unsafe { ptr::copy(inp.offset(base + off), io.offset(base + off), len) };
        }
    }
}
