//! Eager flow control. Each sender holds `CREDIT_PER_PEER` eager bytes per
//! receiver; eager data paid by that credit may sit in the receiver's
//! unexpected queue, and the receiver returns the credit (`Credit` packets, in
//! batches of a quarter) once the data is delivered.
//!
//! Invariant (conservation, per ordered pair): the sender's `credit` plus the
//! cost of its eager messages not yet delivered, plus the receiver's
//! `credit_owed`, plus `Credit` packets in flight, is `CREDIT_PER_PEER`. A
//! sender without credit falls back to rendezvous, so a flood waits instead of
//! growing the receiver's memory.

use super::*;

/// Eager bytes a sender may have outstanding at one receiver.
pub(super) const CREDIT_PER_PEER: i64 = 4 << 20;
/// Every eager message costs at least this much credit, so floods of empty
/// messages are bounded too.
pub(super) const MIN_CREDIT_COST: usize = 64;

#[inline]
pub(super) fn credit_cost(len: usize) -> usize {
    len.max(MIN_CREDIT_COST)
}

impl State {
    pub(super) fn return_credit(&mut self, peer: u32, bytes: usize) {
        let p = &mut self.peers[peer as usize];
        p.credit_owed += bytes as u64;
        if p.credit_owed >= self.credit_batch {
            let h = Header {
                len: p.credit_owed,
                ..Header::control(Kind::Credit, 0)
            };
            p.credit_owed = 0;
            self.ctrl(peer, h);
        }
    }

    /// Forgets credits still owed at finalize (nobody will use them).
    pub(crate) fn drop_credit_packets(&mut self) {
        for p in &mut self.peers {
            p.outbox
                .retain(|i| !matches!(i, OutItem::Ctrl(h) if h.kind == Kind::Credit));
        }
    }
}
