//! Barrier: every rank raises its flag (the last to arrive rings rank 0), rank 0 waits for all
//! flags and publishes the release (ringing everyone), the others wait for it.
use super::{Counter, Session};

pub(crate) fn barrier(mut sess: Session<'_>) {
    let mut cx = sess.ctx();
    let s = cx.next();
    if cx.me != 0 {
        cx.set(Counter::Flag, s);
        cx.ring_when_complete(Counter::Flag, s, Some(0));
        cx.wait_release(s);
    } else {
        cx.wait_all(Counter::Flag, s);
        cx.area()
            .release()
            .store(s, std::sync::atomic::Ordering::Release);
        cx.ring_others();
    }
    // Everyone arrived at s, so everyone completed s - 1.
    cx.learn(s - 1);
    cx.set(Counter::Done, s);
}
