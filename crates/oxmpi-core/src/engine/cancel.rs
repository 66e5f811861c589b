//! MPI_Cancel. A posted receive is removed from the matcher and completes
//! cancelled; a send still in our outbox is taken out (returning its credit);
//! otherwise a `CancelReq` asks the receiver to drop the message if it is
//! still unexpected and unclaimed, and the send completes on the `CancelAck`.
//!
//! A small standard-mode immediate send written whole into a ring has no
//! request at all ([`Request::DONE`], `State::start_send_entryless`): complete
//! in its call, it is not cancelled (MPI lets a cancel lose to a completed send).
//!
//! Invariant: a cancelled eager message returns its credit exactly once (by the
//! sender if it never left, by the receiver if it drops it).

use super::*;

impl State {
    // ----- cancel -----------------------------------------------------------------

    /// MPI_Cancel.
    pub(crate) fn cancel(&mut self, r: Request) -> Result<()> {
        let Some(e) = self.reqs.get(r) else {
            return Err(MpiError::arg(
                ErrorClass::Request,
                "MPI_Cancel",
                "request",
                "not an active request",
            ));
        };
        if e.done {
            // Sends complete locally before they are matched (eager); a cancel
            // must still reach the receiver then, so only receives stop here.
            if !matches!(e.kind, ReqKind::Send(_) | ReqKind::BufferedUser { .. }) {
                return Ok(());
            }
        }
        match &e.kind {
            &ReqKind::BufferedUser { inner, peer } => {
                // Done and not cancelled: no cancel asked yet (a pending one left it not done).
                if !e.done || e.status.cancelled {
                    return Ok(());
                }
                self.reqs.get_mut(r).unwrap().done = false;
                if self.reqs.get(inner).is_some() {
                    // The transfer is still going on: withdraw it; its completion
                    // completes this request (`SendReq::user_half`).
                    self.cancel(inner)
                } else {
                    // The data has left: ask the receiver to drop it unless matched.
                    self.ctrl(
                        peer,
                        Header {
                            rreq: r.0,
                            ..Header::control(Kind::CancelReq, inner.0)
                        },
                    );
                    Ok(())
                }
            }
            ReqKind::Recv(rr) => {
                if rr.posted && self.matcher.remove_posted(|p| *p == r).is_some() {
                    let e = self.reqs.get_mut(r).unwrap();
                    let mut st = Status::EMPTY;
                    st.cancelled = true;
                    e.status = st;
                    self.complete(r, st, None);
                }
                Ok(())
            }
            ReqKind::Send(s) => {
                let peer = s.peer;
                if s.cancel_pending || e.status.cancelled {
                    return Ok(());
                }
                // Still in our outbox and not started: just take it out.
                let pos = self.peers[peer as usize]
                    .outbox
                    .iter()
                    .position(|i| match i {
                        OutItem::Eager { req, started, .. } => *req == r && !*started,
                        OutItem::Ctrl(h) => h.kind == Kind::Rts && h.sreq == r.0,
                        _ => false,
                    });
                if let Some(pos) = pos {
                    let item = self.peers[peer as usize].outbox.remove(pos).unwrap();
                    match item {
                        OutItem::Eager { hdr, .. } => {
                            self.peers[peer as usize].credit +=
                                credit_cost(hdr.len as usize) as i64;
                        }
                        // A pulled `Rts` paid eager credit.
                        OutItem::Ctrl(h) if h.flags & FLAG_PULL != 0 => {
                            self.peers[peer as usize].credit += credit_cost(h.len as usize) as i64;
                        }
                        _ => {}
                    }
                    if let Some(e) = self.reqs.get_mut(r) {
                        e.status.cancelled = true;
                        if let ReqKind::Send(s) = &mut e.kind {
                            s.local_done = true;
                            s.await_ack = false;
                        }
                    }
                    self.send_progressed(r);
                    return Ok(());
                }
                if let Some(e) = self.reqs.get_mut(r) {
                    e.done = false;
                    if let ReqKind::Send(s) = &mut e.kind {
                        s.cancel_pending = true;
                    }
                }
                self.ctrl(peer, Header::control(Kind::CancelReq, r.0));
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
