//! Diagnosis: packet counters per peer, the pending requests described for a
//! user, and a dump of the engine's state for hang reports. Read-only.

use super::*;

impl State {
    /// A human-readable account of what this rank waits for (hang reports).
    /// Packets pushed to and taken from every world rank (diagnosis).
    pub(crate) fn pair_counters(&self) -> (Vec<u64>, Vec<u64>) {
        (
            self.peers.iter().map(|p| p.sent).collect(),
            self.peers.iter().map(|p| p.recvd).collect(),
        )
    }

    /// The requests not complete yet, described for a user (diagnosis).
    pub(crate) fn pending_requests(&self) -> Vec<crate::diag::Pending> {
        let mut posted: std::collections::HashMap<Request, Pattern> =
            std::collections::HashMap::new();
        for (pat, r) in self.matcher.posted_iter() {
            posted.insert(*r, *pat);
        }
        let mut out = Vec::new();
        for (i, (g, e)) in self.reqs.slots.iter().enumerate() {
            let Some(e) = e else { continue };
            if e.done || e.detached {
                continue;
            }
            let r = Request::new(i as u32, *g);
            let p = match &e.kind {
                ReqKind::Send(s) => crate::diag::Pending {
                    what: format!(
                        "send to world rank {} (tag {}, {} bytes)",
                        s.peer,
                        e.status.tag,
                        s.data.len()
                    ),
                    peer_world: Some(s.peer),
                    ctx: Some(s.context),
                },
                ReqKind::Recv(_) => match posted.get(&r) {
                    Some(pat) => crate::diag::Pending {
                        what: format!(
                            "receive from {} (tag {})",
                            if pat.source == crate::matching::ANY_SOURCE {
                                "MPI_ANY_SOURCE".to_string()
                            } else {
                                format!("rank {}", pat.source)
                            },
                            if pat.tag == crate::matching::ANY_TAG {
                                "MPI_ANY_TAG".to_string()
                            } else {
                                pat.tag.to_string()
                            }
                        ),
                        peer_world: None,
                        ctx: Some(pat.context),
                    },
                    None => crate::diag::Pending {
                        what: "receive (matched, data arriving)".into(),
                        peer_world: None,
                        ctx: None,
                    },
                },
                ReqKind::Task(Some(t)) => match t.pending() {
                    Some(p) => p,
                    None => continue,
                },
                ReqKind::Generalized => crate::diag::Pending {
                    what: "generalized request".into(),
                    peer_world: None,
                    ctx: None,
                },
                _ => continue,
            };
            out.push(p);
        }
        out
    }

    pub(crate) fn describe(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "rank {}: {} live requests, {} posted receives, {} unexpected messages",
            self.me,
            self.reqs.live(),
            self.matcher.posted_len() + self.slot_waiting(),
            self.unexp.len()
        );
        for (i, (g, e)) in self.reqs.slots.iter().enumerate() {
            if let Some(e) = e {
                if !e.done {
                    let _ = writeln!(
                        out,
                        "  request {:#x}: {:?}",
                        Request::new(i as u32, *g).0,
                        e.kind
                    );
                }
            }
        }
        for (env, id) in self.matcher.unexpected_iter() {
            if let Some(m) = self.unexp.get(id) {
                let _ = writeln!(
                    out,
                    "  unexpected from world rank {} {:?}: {} bytes",
                    m.from,
                    env,
                    m.body.total()
                );
            }
        }
        for (r, p) in self.peers.iter().enumerate() {
            if !p.outbox.is_empty() || !matches!(p.rx, Rx::Idle) {
                let _ = writeln!(
                    out,
                    "  peer {r}: credit {} outbox {:?} rx {:?}",
                    p.credit, p.outbox, p.rx
                );
            }
        }
        out
    }
}
