//! Barrier: every rank arrives at a counted step (one atomic addition to
//! `arrive`); the last to arrive publishes the release (one wake-up for all
//! waiters), the others wait for it. No rank has a fixed role, so nobody is
//! woken once per arrival (a root waiting for every flag was, and on a crowded
//! host each wake-up is a context switch).
use super::Session;

pub(crate) fn barrier(mut sess: Session<'_>) {
    let mut cx = sess.ctx();
    let s = cx.next();
    if cx.arrive() {
        cx.publish_release(s);
    } else {
        cx.wait_release(s);
    }
    // Everyone arrived at s, so everyone completed s - 1.
    cx.learn(s - 1);
    cx.set_done(s);
}
