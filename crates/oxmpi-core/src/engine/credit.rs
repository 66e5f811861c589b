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

/// Eager bytes a sender may have outstanding at one receiver. The receiver returns
/// credit in batches of a quarter, so up to a quarter less than this is at the
/// sender's disposal when the receiver has delivered everything: 6 MiB keeps at
/// least 4.5 MiB, so a window of 64 messages of the 64 KiB eager limit between
/// hosts (osu_bw's) goes eager whole. With 4 MiB, exactly that window, any credit
/// still owed sent its last message by rendezvous, an RTS/CTS round trip after the
/// pipe had drained (net28, net29 in bench/PROFILE.md).
pub(super) const CREDIT_PER_PEER: i64 = 6 << 20;
/// Every eager message costs at least this much credit, so floods of empty
/// messages are bounded too.
pub(super) const MIN_CREDIT_COST: usize = 64;

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
