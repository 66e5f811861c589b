//! external32 byte order: the conversion `MPI_Pack_external` and MPI-IO's
//! `"external32"` data representation apply to a packed stream. oxmpi's
//! external32 keeps the native sizes of the basic types and stores every basic
//! value big-endian (complex numbers part by part, pair types value and index
//! apart).

use super::{Datatype, Repr};

/// Converts the packed stream of `count` elements of `dt` between native
/// (little-endian) and big-endian order, in place (its own inverse). A
/// trailing partial element is converted as far as whole basic values go.
pub fn swap_packed(buf: &mut [u8], dt: &Datatype, count: usize) {
    if cfg!(target_endian = "big") {
        return;
    }
    let mut at = 0;
    for _ in 0..count {
        for &(p, k) in dt.signature() {
            let size = p.size();
            let parts: [usize; 2] = match p.repr() {
                Repr::Complex32 | Repr::Complex64 | Repr::Complex80 => [size / 2, size / 2],
                Repr::Pair { .. } => [size - 4, 4],
                _ => [size, 0],
            };
            for _ in 0..k {
                if at + size > buf.len() {
                    return;
                }
                let mut o = at;
                for part in parts.into_iter().filter(|&n| n > 1) {
                    buf[o..o + part].reverse();
                    o += part;
                }
                at += size;
            }
        }
    }
}
