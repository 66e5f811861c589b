//! Barrier: every rank arrives at a counted step (one atomic addition to
//! `arrive`). Where every rank has a core, the last to arrive publishes the
//! release (one wake-up for all waiters) and the others wait for it: no rank
//! has a fixed role, so nobody is woken once per arrival.
//!
//! On an oversubscribed host (rank 0's view, the same everywhere) a barrier
//! that follows other collectives has rank 0 publish the release instead,
//! once every rank arrived (the last arrival rings it), so rank 0 is on a
//! core when the others are let go. A rooted collective after a barrier
//! (root 0: OSU's loops, and the common "barrier, then bcast from 0") then
//! finds its root already at work: with the last arrival releasing, the ranks
//! that left first waited inside the bcast or scatter for a root that had yet
//! to be scheduled (4 ranks on 2 cores, 8 B: bcast 0.73 -> 0.16 us, scatter
//! 1.04 -> 0.37; bench/PROFILE.md collA28). That costs the barrier one more
//! hand-over (8 ranks on 2 cores: 4.4 -> 5-10 us), which buys nothing when
//! barriers follow one another (a barrier loop, or a phase of barriers): a
//! barrier right after a barrier (no step in between) is released by its last
//! arrival (oversub29).
//!
//! Who releases is each rank's own guess from its steps (the same on every
//! rank where the steps agree), and nothing depends on the guesses agreeing:
//! rank 0 waits for the release *or* every arrival, and publishes the
//! release itself if it sees every arrival first. Both publications raise
//! `release` to the step (`fetch_max`): a plain store by the slower one could
//! take back a later step's release that the faster one's waiters went on to
//! publish.
use super::Session;
use std::sync::atomic::Ordering;

pub(crate) fn barrier(mut sess: Session<'_>) {
    let mut cx = sess.ctx();
    let s = cx.next();
    if cx.r.oversubscribed {
        let rank0_releases = s != cx.r.last_barrier + 1;
        cx.r.last_barrier = s;
        let last = cx.arrive();
        if cx.me == 0 {
            if !last {
                let (arrive, goal) = (cx.area().arrive(), cx.r.counted * cx.n as u64);
                cx.wait_release_or(s, || arrive.load(Ordering::Acquire) >= goal);
            }
            cx.publish_release_once(s);
        } else if last && !rank0_releases {
            cx.publish_release_once(s);
        } else {
            if last {
                cx.ring(0);
            }
            cx.wait_release(s);
        }
    } else {
        cx.counted_step(s);
    }
    // Everyone arrived at s, so everyone completed s - 1.
    cx.learn(s - 1);
    cx.set_done(s);
}
