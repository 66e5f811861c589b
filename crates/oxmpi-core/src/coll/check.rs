//! Checking mode (`OXMPI_CHECK=1`, `mpiexec --check`) and synchronizing
//! collectives (`OXMPI_SYNC_COLLECTIVES=1`).
//!
//! Before a blocking collective runs, every rank of the communicator gives
//! the others a small record of the call it made (its name, its number on
//! the communicator, root, operation, and for calls whose count and datatype
//! must agree everywhere, the type signature as one primitive and a byte
//! count) through an allgather. In checking mode any difference is an
//! `MPI_ERR_NOT_SAME` error naming the ranks, the calls and the differing
//! arguments, raised on every rank before the collective itself could hang
//! or mix data (seed example 4.20 is caught at its first mismatched call).
//! The exchange waits for every rank, so it also makes each collective
//! synchronizing, which is all `OXMPI_SYNC_COLLECTIVES=1` asks for: it brings
//! out deadlocks that buffering hides (seed example 4.22).
//!
//! The allgather is itself a collective; `diag` keeps it out of the user's
//! numbering and of its own check.

use crate::buf::{as_bytes, as_bytes_mut, RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::primitive::Primitive;
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::Op;

const NAME: usize = 40;
const WORDS: usize = 2 * NAME / 8 + 4;

/// What one rank called.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Record {
    name: String,
    op: String,
    /// -1: no root.
    root: i64,
    /// Primitive code and bytes of the signature (0, 0: not compared).
    prim: u64,
    bytes: u64,
}

fn put_str(words: &mut [u64], s: &str) {
    let b = s.as_bytes();
    for (i, w) in words.iter_mut().enumerate() {
        let mut x = [0u8; 8];
        for (k, byte) in x.iter_mut().enumerate() {
            *byte = b.get(i * 8 + k).copied().unwrap_or(0);
        }
        *w = u64::from_le_bytes(x);
    }
}

fn get_str(words: &[u64]) -> String {
    let bytes: Vec<u8> = words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

impl Record {
    fn encode(&self) -> [u64; WORDS] {
        let mut w = [0u64; WORDS];
        put_str(&mut w[..NAME / 8], &self.name);
        put_str(&mut w[NAME / 8..2 * NAME / 8], &self.op);
        w[2 * NAME / 8] = self.root as u64;
        w[2 * NAME / 8 + 1] = self.prim;
        w[2 * NAME / 8 + 2] = self.bytes;
        w
    }

    fn decode(w: &[u64]) -> Record {
        Record {
            name: get_str(&w[..NAME / 8]),
            op: get_str(&w[NAME / 8..2 * NAME / 8]),
            root: w[2 * NAME / 8] as i64,
            prim: w[2 * NAME / 8 + 1],
            bytes: w[2 * NAME / 8 + 2],
        }
    }

    fn show(&self) -> String {
        let mut args = Vec::new();
        if self.root >= 0 {
            args.push(format!("root={}", self.root));
        }
        if !self.op.is_empty() {
            args.push(format!("op={}", self.op));
        }
        if let Some(p) = u16::try_from(self.prim).ok().and_then(Primitive::from_code) {
            args.push(format!(
                "count={} {}",
                self.bytes / p.size().max(1) as u64,
                p.name()
            ));
        }
        format!("{}({})", self.name, args.join(", "))
    }
}

/// Calls whose count and datatype signature must be the same on every rank.
fn same_signature_everywhere(name: &str) -> bool {
    matches!(
        name,
        "MPI_Bcast"
            | "MPI_Reduce"
            | "MPI_Allreduce"
            | "MPI_Scan"
            | "MPI_Exscan"
            | "MPI_Reduce_scatter_block"
    )
}

/// Exchanges the records of this call and, when `check`, compares them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn verify(
    name: &str,
    comm: &Comm,
    comm_name: &str,
    seq: u32,
    root: Option<i32>,
    count: usize,
    dt: Option<&Datatype>,
    op: Option<&Op>,
    check: bool,
) -> Result<()> {
    let (prim, bytes) = match dt.and_then(|d| d.single_primitive().map(|p| (p, d.size()))) {
        Some((p, size)) if same_signature_everywhere(name) => (
            u64::from(p.code()),
            (size as u64).saturating_mul(count as u64),
        ),
        _ => (0, 0),
    };
    let mine = Record {
        name: name.to_string(),
        op: op.map(|o| o.name()).unwrap_or_default(),
        root: root.map_or(-1, i64::from),
        prim,
        bytes,
    };
    let n = comm.size() as usize;
    let sendbuf = mine.encode();
    let mut all = vec![0u64; WORDS * n];
    super::allgather::allgather(
        Some(SendBuf::bytes(as_bytes(&sendbuf))),
        RecvBuf::bytes(as_bytes_mut(&mut all)),
        WORDS * 8,
        comm,
    )?;
    if !check {
        return Ok(());
    }
    let records: Vec<Record> = all.chunks(WORDS).map(Record::decode).collect();
    let mut groups: Vec<(&Record, Vec<usize>)> = Vec::new();
    for (r, rec) in records.iter().enumerate() {
        match groups.iter_mut().find(|(g, _)| *g == rec) {
            Some((_, rs)) => rs.push(r),
            None => groups.push((rec, vec![r])),
        }
    }
    if groups.len() == 1 {
        return Ok(());
    }
    let what = if groups.iter().any(|(g, _)| g.name != mine.name) {
        "different collectives"
    } else if groups.iter().any(|(g, _)| g.root != mine.root) {
        "different roots"
    } else if groups.iter().any(|(g, _)| g.op != mine.op) {
        "different operations"
    } else {
        "different type signatures (count and datatype)"
    };
    let parts: Vec<String> = groups
        .iter()
        .map(|(g, rs)| {
            let list: Vec<String> = rs.iter().map(|r| r.to_string()).collect();
            format!(
                "{} {} {}",
                if rs.len() == 1 { "rank" } else { "ranks" },
                list.join(","),
                g.show()
            )
        })
        .collect();
    Err(MpiError::new(
        ErrorClass::NotSame,
        format!("{name}: collective #{seq} on {comm_name} was called with {what} on different ranks (checking mode): {}", parts.join("; ")),
    ))
}
