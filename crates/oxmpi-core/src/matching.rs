//! The matching engine: posted receives and unexpected messages, matched on
//! (context, source, tag) with wildcards.
//!
//! This is pure data-structure code with no I/O, so it is unit-tested without
//! processes. Both queues are FIFO: a receive matches the *oldest* unexpected
//! message that fits, and an arriving message matches the *oldest* posted receive
//! that fits. Together with transports that deliver each sender's packets in order,
//! this is what makes messages between one pair of ranks on one communicator
//! non-overtaking.

use std::collections::VecDeque;

/// `MPI_ANY_SOURCE` as the engine sees it.
pub const ANY_SOURCE: i32 = -1;
/// `MPI_ANY_TAG` as the engine sees it.
pub const ANY_TAG: i32 = -2;

/// What an arriving message carries for matching.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub context: u32,
    /// The sender's rank in the communicator (the local group's rank for an
    /// intercommunicator), as the receiver reports it in the status.
    pub source: i32,
    pub tag: i32,
}

/// What a receive (or probe) asks for; `source`/`tag` may be wildcards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub context: u32,
    pub source: i32,
    pub tag: i32,
}

impl Pattern {
    #[inline]
    pub fn matches(&self, env: &Envelope) -> bool {
        self.context == env.context
            && (self.source == ANY_SOURCE || self.source == env.source)
            // Negative tags are internal (partitioned traffic): only an exact tag matches them.
            && ((self.tag == ANY_TAG && env.tag >= 0) || self.tag == env.tag)
    }
}

/// Posted receives (`P`, usually a request id) and unexpected messages (`U`).
#[derive(Debug)]
pub struct Matcher<P, U> {
    posted: VecDeque<(Pattern, P)>,
    unexpected: VecDeque<(Envelope, U)>,
}

impl<P, U> Default for Matcher<P, U> {
    fn default() -> Self {
        Matcher {
            posted: VecDeque::new(),
            unexpected: VecDeque::new(),
        }
    }
}

impl<P, U> Matcher<P, U> {
    pub fn new() -> Self {
        Self::default()
    }

    /// A message arrived: returns the oldest posted receive it matches (removing
    /// it), or `None`, in which case the caller queues it with
    /// [`Matcher::push_unexpected`].
    #[inline]
    pub fn match_arrival(&mut self, env: &Envelope) -> Option<P> {
        // The oldest receive matching is the common case (a window of receives
        // filled in order): a pop, not `VecDeque::remove`'s general shuffle.
        // Both common cases, a window of receives filled in order and no
        // receive posted at all, cost a compare or two (the general search
        // below set up an iterator even over an empty queue: ~60 instructions
        // per message, bench/PROFILE.md rate18). Inlined, with the search kept
        // out of line: the call's frame was a quarter of the ~65 instructions an
        // arrival paid here (bench/PROFILE.md, rrate35).
        match self.posted.front() {
            None => None,
            Some((p, _)) if p.matches(env) => self.posted.pop_front().map(|(_, p)| p),
            Some(_) => self.match_arrival_behind(env),
        }
    }

    /// [`Matcher::match_arrival`] when the oldest posted receive does not match.
    #[inline(never)]
    fn match_arrival_behind(&mut self, env: &Envelope) -> Option<P> {
        let at = self.posted.iter().position(|(p, _)| p.matches(env))?;
        self.posted.remove(at).map(|(_, p)| p)
    }

    /// [`Matcher::match_arrival`] for a caller that can take the message only on
    /// conditions: `take` is shown the oldest posted receive it matches, and only
    /// when `take` answers `Some` is that receive removed (returned with the answer);
    /// otherwise the queue is left as it was. One walk of the posted queue where a
    /// look (`posted_iter`) followed by `match_arrival` made two.
    pub fn match_arrival_if<T>(
        &mut self,
        env: &Envelope,
        take: impl FnOnce(&P) -> Option<T>,
    ) -> Option<(P, T)> {
        let at = match self.posted.front() {
            None => return None,
            Some((p, _)) if p.matches(env) => 0,
            Some(_) => self.posted.iter().position(|(p, _)| p.matches(env))?,
        };
        let taken = take(&self.posted[at].1)?;
        let recv = if at == 0 {
            self.posted.pop_front()
        } else {
            self.posted.remove(at)
        };
        recv.map(|(_, p)| (p, taken))
    }

    pub fn push_unexpected(&mut self, env: Envelope, msg: U) {
        self.unexpected.push_back((env, msg));
    }

    /// A receive is posted: returns the oldest unexpected message it matches
    /// (removing it), or `None`, in which case the caller queues the receive with
    /// [`Matcher::push_posted`].
    #[inline]
    pub fn match_posted(&mut self, pat: &Pattern) -> Option<(Envelope, U)> {
        // No unexpected message (receives posted ahead of their messages) and
        // the oldest one matching: a compare or two, as in `match_arrival`, and
        // inlined as it is (an empty queue's check was 2 of a call's 18
        // instructions, bench/PROFILE.md rrate35).
        match self.unexpected.front() {
            None => None,
            Some((e, _)) if pat.matches(e) => self.unexpected.pop_front(),
            Some(_) => self.match_posted_behind(pat),
        }
    }

    /// [`Matcher::match_posted`] when the oldest unexpected message does not match.
    #[inline(never)]
    fn match_posted_behind(&mut self, pat: &Pattern) -> Option<(Envelope, U)> {
        let at = self.unexpected.iter().position(|(e, _)| pat.matches(e))?;
        self.unexpected.remove(at)
    }

    pub fn push_posted(&mut self, pat: Pattern, recv: P) {
        self.posted.push_back((pat, recv));
    }

    /// Queues a receive posted before every queued one (the engine's blocking
    /// slot turned into a request): it matches first.
    pub fn push_posted_oldest(&mut self, pat: Pattern, recv: P) {
        self.posted.push_front((pat, recv));
    }

    /// Probe: the oldest unexpected message that matches, left in place.
    pub fn peek(&self, pat: &Pattern) -> Option<(&Envelope, &U)> {
        self.unexpected
            .iter()
            .find(|(e, _)| pat.matches(e))
            .map(|(e, u)| (e, u))
    }

    /// Like [`Matcher::peek`] but mutable (the engine marks partially arrived messages).
    pub fn peek_mut(&mut self, pat: &Pattern) -> Option<(&Envelope, &mut U)> {
        self.unexpected
            .iter_mut()
            .find(|(e, _)| pat.matches(e))
            .map(|(e, u)| (&*e, u))
    }

    /// Removes the posted receive for which `is` holds (cancel). Returns it.
    pub fn remove_posted(&mut self, mut is: impl FnMut(&P) -> bool) -> Option<P> {
        let at = self.posted.iter().position(|(_, p)| is(p))?;
        self.posted.remove(at).map(|(_, p)| p)
    }

    /// Removes the unexpected message for which `is` holds (send cancel, mprobe).
    pub fn remove_unexpected(&mut self, mut is: impl FnMut(&U) -> bool) -> Option<(Envelope, U)> {
        let at = self.unexpected.iter().position(|(_, u)| is(u))?;
        self.unexpected.remove(at)
    }

    /// Finds an unexpected message by predicate, mutably.
    pub fn find_unexpected_mut(&mut self, mut is: impl FnMut(&U) -> bool) -> Option<&mut U> {
        self.unexpected
            .iter_mut()
            .find(|(_, u)| is(u))
            .map(|(_, u)| u)
    }

    pub fn posted_len(&self) -> usize {
        self.posted.len()
    }

    pub fn unexpected_len(&self) -> usize {
        self.unexpected.len()
    }

    pub fn posted_iter(&self) -> impl Iterator<Item = (&Pattern, &P)> {
        self.posted.iter().map(|(p, r)| (p, r))
    }

    pub fn unexpected_iter(&self) -> impl Iterator<Item = (&Envelope, &U)> {
        self.unexpected.iter().map(|(e, u)| (e, u))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(src: i32, tag: i32) -> Envelope {
        Envelope {
            context: 0,
            source: src,
            tag,
        }
    }
    fn pat(src: i32, tag: i32) -> Pattern {
        Pattern {
            context: 0,
            source: src,
            tag,
        }
    }

    #[test]
    fn arrival_matches_oldest_posted_receive() {
        let mut m: Matcher<u32, &str> = Matcher::new();
        m.push_posted(pat(ANY_SOURCE, 5), 1);
        m.push_posted(pat(2, 5), 2);
        assert_eq!(m.match_arrival(&env(2, 5)), Some(1));
        assert_eq!(m.match_arrival(&env(2, 5)), Some(2));
        assert_eq!(m.match_arrival(&env(2, 5)), None);
    }

    #[test]
    fn a_conditional_arrival_takes_only_the_oldest_match_and_only_when_accepted() {
        let mut m: Matcher<u32, &str> = Matcher::new();
        m.push_posted(pat(1, 9), 1);
        m.push_posted(pat(ANY_SOURCE, 5), 2);
        m.push_posted(pat(2, 5), 3);
        // Declined: nothing leaves, and the receive offered was the oldest match.
        let mut shown = None;
        assert_eq!(
            m.match_arrival_if(&env(2, 5), |&r| {
                shown = Some(r);
                None::<()>
            }),
            None
        );
        assert_eq!(shown, Some(2));
        assert_eq!(m.posted_len(), 3);
        // No match: `take` is not asked.
        assert_eq!(
            m.match_arrival_if(&env(4, 4), |_| -> Option<()> { panic!("asked") }),
            None
        );
        // Accepted past the head, then at the head.
        assert_eq!(
            m.match_arrival_if(&env(2, 5), |&r| Some(r * 10)),
            Some((2, 20))
        );
        assert_eq!(m.match_arrival_if(&env(1, 9), |_| Some(())), Some((1, ())));
        assert_eq!(m.match_arrival(&env(2, 5)), Some(3));
        assert_eq!(m.posted_len(), 0);
    }

    #[test]
    fn posted_receive_takes_oldest_unexpected_in_order() {
        let mut m: Matcher<u32, u32> = Matcher::new();
        for i in 0..5 {
            m.push_unexpected(env(1, 7), i);
        }
        m.push_unexpected(env(3, 8), 100);
        for i in 0..5 {
            assert_eq!(m.match_posted(&pat(1, ANY_TAG)).map(|(_, u)| u), Some(i));
        }
        assert_eq!(m.match_posted(&pat(1, ANY_TAG)), None);
        assert_eq!(
            m.match_posted(&pat(ANY_SOURCE, ANY_TAG))
                .map(|(e, u)| (e.source, u)),
            Some((3, 100))
        );
    }

    #[test]
    fn contexts_never_match_each_other() {
        let mut m: Matcher<u32, u32> = Matcher::new();
        m.push_unexpected(
            Envelope {
                context: 1,
                source: 0,
                tag: 0,
            },
            9,
        );
        assert!(m
            .match_posted(&Pattern {
                context: 0,
                source: ANY_SOURCE,
                tag: ANY_TAG
            })
            .is_none());
        assert!(m
            .peek(&Pattern {
                context: 1,
                source: 0,
                tag: 0
            })
            .is_some());
    }

    #[test]
    fn specific_tag_skips_other_tags_but_keeps_their_order() {
        let mut m: Matcher<u32, u32> = Matcher::new();
        m.push_unexpected(env(0, 1), 10);
        m.push_unexpected(env(0, 2), 20);
        m.push_unexpected(env(0, 1), 11);
        assert_eq!(m.match_posted(&pat(0, 2)).map(|(_, u)| u), Some(20));
        assert_eq!(m.match_posted(&pat(0, 1)).map(|(_, u)| u), Some(10));
        assert_eq!(m.match_posted(&pat(0, 1)).map(|(_, u)| u), Some(11));
    }

    #[test]
    fn cancel_removes_only_the_named_receive() {
        let mut m: Matcher<u32, u32> = Matcher::new();
        m.push_posted(pat(0, 0), 1);
        m.push_posted(pat(0, 0), 2);
        assert_eq!(m.remove_posted(|p| *p == 1), Some(1));
        assert_eq!(m.match_arrival(&env(0, 0)), Some(2));
    }

    /// A model check: random posts and arrivals against a naive reference.
    #[test]
    fn randomized_against_reference_model() {
        let mut seed = 0x9e3779b97f4a7c15u64;
        let mut rnd = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut m: Matcher<u64, u64> = Matcher::new();
        let mut ref_posted: Vec<(Pattern, u64)> = Vec::new();
        let mut ref_unexp: Vec<(Envelope, u64)> = Vec::new();
        for id in 0..20_000u64 {
            let ctx = rnd(2) as u32;
            if rnd(2) == 0 {
                let e = Envelope {
                    context: ctx,
                    source: rnd(3) as i32,
                    tag: rnd(3) as i32,
                };
                let got = m.match_arrival(&e);
                let want = ref_posted
                    .iter()
                    .position(|(p, _)| p.matches(&e))
                    .map(|i| ref_posted.remove(i).1);
                assert_eq!(got, want);
                if got.is_none() {
                    m.push_unexpected(e, id);
                    ref_unexp.push((e, id));
                }
            } else {
                let src = if rnd(3) == 0 {
                    ANY_SOURCE
                } else {
                    rnd(3) as i32
                };
                let tag = if rnd(3) == 0 { ANY_TAG } else { rnd(3) as i32 };
                let p = Pattern {
                    context: ctx,
                    source: src,
                    tag,
                };
                let got = m.match_posted(&p).map(|(_, u)| u);
                let want = ref_unexp
                    .iter()
                    .position(|(e, _)| p.matches(e))
                    .map(|i| ref_unexp.remove(i).1);
                assert_eq!(got, want);
                if got.is_none() {
                    m.push_posted(p, id);
                    ref_posted.push((p, id));
                }
            }
        }
    }
}
