//! Packing and unpacking: moving the data of `count` elements between their
//! memory layout and the packed stream (element after element, each
//! element's blocks in type-map order).
//!
//! Offsets are computed here by the safe walker [`Datatype::walk`]; the copies
//! between memory and the stream, which touch the caller's raw memory, are the
//! buffer module's ([`crate::buf`], `buf/pack.rs`).

use super::Datatype;

impl Datatype {
    /// Bytes in the packed stream of `count` elements (panics on overflow,
    /// which no buffer could hold anyway).
    pub(crate) fn stream_len(&self, count: usize) -> usize {
        self.size()
            .checked_mul(count)
            .expect("count * size of the datatype overflows usize")
    }

    /// Calls `f(memory offset, stream offset, len)` for the pieces of the
    /// packed stream bytes `[from, from + n)` of `count` elements, in order.
    /// The caller guarantees `from + n <= count * size`.
    pub(crate) fn walk(&self, from: usize, n: usize, mut f: impl FnMut(isize, usize, usize)) {
        let l = self.layout();
        if n == 0 {
            return;
        }
        if self.is_contiguous() {
            f(l.true_lb.wrapping_add(from as isize), 0, n);
            return;
        }
        let ext = l.ub.wrapping_sub(l.lb);
        let mut elem = from / l.size;
        let r = from % l.size;
        let super::Blocks::Flat { list, prefix } = &*l.blocks else {
            // A tree: element by element.
            let (mut within, mut done) = (r, 0);
            while done < n {
                let take = (l.size - within).min(n - done);
                let base = (elem as isize).wrapping_mul(ext);
                let mut at = done;
                l.blocks.walk(base, within, take, &mut at, &mut f);
                done += take;
                within = 0;
                elem += 1;
            }
            return;
        };
        // The block containing stream offset r of an element.
        let mut bi = prefix.partition_point(|&p| p <= r) - 1;
        let mut within = r - prefix[bi];
        let mut done = 0;
        while done < n {
            let (off, len) = list[bi];
            let take = (len - within).min(n - done);
            let base = (elem as isize).wrapping_mul(ext);
            f(
                base.wrapping_add(off).wrapping_add(within as isize),
                done,
                take,
            );
            done += take;
            within += take;
            if within == len {
                within = 0;
                bi += 1;
                if bi == list.len() {
                    bi = 0;
                    elem += 1;
                }
            }
        }
    }
}

/// `MPI_Pack_size`: an upper bound (here exact) on the bytes `MPI_Pack` needs
/// (saturating at `usize::MAX`).
pub fn pack_size(dt: &Datatype, count: usize) -> usize {
    dt.size().saturating_mul(count)
}
