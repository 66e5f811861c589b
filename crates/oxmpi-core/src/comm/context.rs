//! Context ids for new communicators, agreed by the ranks that create them.
//!
//! Every rank keeps a mask of the ids it has free. A creating collective ANDs the
//! masks of all participants (an allreduce with MPI_BAND) and picks an id free
//! everywhere. Only the members of the new communicator mark it used: a
//! non-member may hand the same id to another communicator later, which is safe
//! because any rank in both would have had the bit cleared in its own mask and so
//! in the AND. Ids come in pairs: `id` for point-to-point, `id + 1` for collectives.
//!
//! ## Agreement as a state machine
//! The agreement is a [`Task`] the progress engine advances, so MPI_Comm_idup
//! returns at once and several agreements (on different communicators, or
//! several idups on one) can be in flight on a rank together. Two of them may
//! then pick the same id from masks taken before either finished, so a pick is
//! confirmed before it is used:
//!
//! * round k: every rank contributes `free & !held` (its free ids minus those
//!   other agreements of this rank hold) and, from round 1 on, a flag word
//!   saying whether it could hold the previous round's candidate; one allreduce
//!   (BAND) of `WORDS + 1` words.
//! * if the previous candidate was held everywhere (the AND of the flags), it
//!   is agreed: members claim it, the hold goes.
//! * otherwise holds are dropped and a new candidate is picked from the AND of
//!   the masks (the lowest id in round 0, then a choice spread by the
//!   communicator, the tag and the round, so two agreements that collided do
//!   not collide again); every rank holds it if it is still free and not held
//!   locally, and says so in the next round.
//!
//! Blocking constructors ([`agree_for`]) run the same rounds with blocking
//! allreduces ([`agree_with`]) instead of a task.
//!
//! A held id is taken by nobody else, so a candidate held on every rank is
//! free on every rank when claimed. Every decision depends only on allreduce
//! results, so all ranks decide alike. All rounds of one agreement use the tag
//! of the one collective it is (taken at the call, in call order on every rank):
//! rounds run one after another on every rank and messages between two ranks do
//! not overtake each other, so round k's messages only match round k's receives.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::{Comm, FIRST_DYNAMIC_CONTEXT};
use crate::coll::sched::Schedule;
use crate::engine::{State, Task};
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::{Op, PredefinedOp};
use crate::request::Request;

/// Number of communicators that can exist at once per process (as MPICH's 2048).
pub const MAX_CONTEXTS: usize = 2048;
const WORDS: usize = MAX_CONTEXTS / 64;
/// Words of one rank's contribution to a round of an agreement (the mask,
/// then the flag word): what [`agree_with`]'s `and` combines.
pub(crate) const ROUND_WORDS: usize = WORDS + 1;

/// Bit i set = context id `FIRST_DYNAMIC_CONTEXT + 2 i` is free here.
static FREE: Mutex<[u64; WORDS]> = Mutex::new([u64::MAX; WORDS]);
/// Bit i set = an agreement in flight on this rank holds id i as its candidate.
static HELD: Mutex<[u64; WORDS]> = Mutex::new([0; WORDS]);
/// Agreements in flight on this rank (tasks and blocking ones).
static INFLIGHT: AtomicUsize = AtomicUsize::new(0);

/// The flag word's bits: this rank holds the previous round's candidate; this
/// rank had no other agreement in flight when it contributed round 0.
const HOLDS: u64 = 1;
const QUIET: u64 = 2;

fn free_mask() -> std::sync::MutexGuard<'static, [u64; WORDS]> {
    FREE.lock().unwrap_or_else(|p| p.into_inner())
}

fn held_mask() -> std::sync::MutexGuard<'static, [u64; WORDS]> {
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

/// Ids this rank may offer: free and held by no agreement in flight.
fn offer() -> [u64; WORDS] {
    let free = *free_mask();
    let held = *held_mask();
    std::array::from_fn(|i| free[i] & !held[i])
}

/// Holds bit `b` for an agreement if it is free and not held; whether it did.
fn hold(b: usize) -> bool {
    let free = free_mask();
    let mut held = held_mask();
    let m = 1u64 << (b % 64);
    if free[b / 64] & m != 0 && held[b / 64] & m == 0 {
        held[b / 64] |= m;
        true
    } else {
        false
    }
}

fn unhold(b: usize) {
    held_mask()[b / 64] &= !(1u64 << (b % 64));
}

/// Empty rounds (no id free on every rank) an agreement sits through, waiting
/// for other agreements' holds to go, before it fails.
const EMPTY_ROUNDS: u32 = 8;

/// What an agreement does with its id once agreed (claimed already if this
/// rank is a member).
pub(crate) type OnAgreed = Box<dyn FnOnce(u32) + Send>;

/// The decisions of one agreement, whatever computes its AND: the task below
/// (one allreduce schedule per round) or a blocking caller's own collectives
/// ([`agree_with`], for intercommunicators whose two groups share no
/// intracommunicator). Dropping it lets go of its hold.
struct Rounds {
    call: &'static str,
    /// Spreads the picks after a collision (differs between agreements).
    seed: u64,
    /// Whether this rank is a member of the new communicator (claims the id).
    member: bool,
    round: u32,
    empty_rounds: u32,
    /// This round's candidate bit, and whether this rank holds it.
    candidate: Option<(usize, bool)>,
    /// A blocking agreement of a process below MPI_THREAD_MULTIPLE: no
    /// other agreement can start on this rank until it ends.
    may_be_quiet: bool,
}

impl Rounds {
    fn new(call: &'static str, seed: u64, member: bool, blocking: bool) -> Rounds {
        INFLIGHT.fetch_add(1, Ordering::SeqCst);
        let single = crate::runtime::engine()
            .is_ok_and(|e| e.thread_level() < crate::runtime::ThreadLevel::Multiple);
        Rounds {
            call,
            seed,
            member,
            round: 0,
            empty_rounds: 0,
            candidate: None,
            may_be_quiet: blocking && single,
        }
    }

    fn drop_hold(&mut self) {
        if let Some((b, true)) = self.candidate {
            unhold(b);
        }
        self.candidate = None;
    }

    /// This rank's contribution to the round's AND (`WORDS + 1` words).
    ///
    /// Round 0 also says whether this rank is quiet: a blocking agreement,
    /// no other in flight here, and no other can start before this one ends
    /// (the process is below MPI_THREAD_MULTIPLE, and its one MPI thread is
    /// in this call). When every rank is, nothing can hold or claim an id
    /// meanwhile, so the lowest id of the AND is agreed at once, without a
    /// hold and a confirming round: one allreduce, the common case of a
    /// program creating communicators one at a time.
    fn fill(&mut self, buf: &mut [u64]) {
        let quiet = self.round == 0 && self.may_be_quiet && INFLIGHT.load(Ordering::SeqCst) == 1;
        buf[..WORDS].copy_from_slice(&offer());
        buf[WORDS] = match self.candidate {
            Some((_, true)) => HOLDS,
            _ => 0,
        } | if quiet { QUIET } else { 0 };
    }

    /// The candidate bit of a round from the AND of the masks.
    fn pick(&self, mask: &[u64]) -> Option<usize> {
        let set: Vec<usize> = mask
            .iter()
            .enumerate()
            .flat_map(|(i, &w)| {
                (0..64)
                    .filter(move |k| w >> k & 1 == 1)
                    .map(move |k| i * 64 + k)
            })
            .take(64)
            .collect();
        if set.is_empty() {
            return None;
        }
        if self.round == 0 {
            return Some(set[0]);
        }
        Some(set[(mix(self.seed, self.round) % set.len() as u64) as usize])
    }

    /// Takes a round's AND: the agreed id (claimed if this rank is a member),
    /// or `None` for another round.
    fn decide(&mut self, and: &[u64]) -> Result<Option<u32>> {
        if self.round == 0 && and[WORDS] & QUIET != 0 {
            if let Some(b) = first_free(and[..WORDS].try_into().expect("WORDS mask words")) {
                let ctx = FIRST_DYNAMIC_CONTEXT + 2 * b as u32;
                if self.member {
                    claim(ctx);
                }
                return Ok(Some(ctx));
            }
        }
        // The previous candidate, held on every rank: agreed.
        if let Some((b, held)) = self.candidate {
            if and[WORDS] & HOLDS != 0 {
                debug_assert!(held);
                let ctx = FIRST_DYNAMIC_CONTEXT + 2 * b as u32;
                unhold(b);
                self.candidate = None;
                if self.member {
                    claim(ctx);
                }
                return Ok(Some(ctx));
            }
            self.drop_hold();
        }
        match self.pick(&and[..WORDS]) {
            Some(b) => {
                self.candidate = Some((b, hold(b)));
            }
            None => {
                self.empty_rounds += 1;
                if self.empty_rounds > EMPTY_ROUNDS {
                    return Err(MpiError::new(
                        ErrorClass::Other,
                        format!("{}: no communicator context id is free on every rank ({MAX_CONTEXTS} communicators exist; free some)", self.call),
                    ));
                }
            }
        }
        self.round += 1;
        Ok(None)
    }
}

impl Drop for Rounds {
    fn drop(&mut self) {
        self.drop_hold();
        INFLIGHT.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A round's pick hash: every bit of the seed and of the round reaches every
/// bit of the result (splitmix64's finalizer), so two agreements that collided
/// pick independently in the next round. (With `(seed ^ round).rotate_left(29)`
/// the low bits that choose the pick were seed bits 35-40 alone: two agreements
/// equal there picked the same candidate in every round, each held it on a
/// different rank, and neither ever finished.)
fn mix(seed: u64, round: u32) -> u64 {
    let mut z = seed ^ (round as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn seed(context: u32, tag: i32) -> u64 {
    (context as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ (tag as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
}

/// Agrees on a context id with the same rounds as the agreement task, where
/// `and` computes, in place, the bitwise AND of every participant's `WORDS + 1`
/// words (collective over all participants, blocking). Members claim the id.
/// For constructors whose participants share no intracommunicator (the two
/// groups of MPI_Intercomm_create, MPI_Intercomm_merge and the intercommunicator
/// splits): their ids must be held and confirmed like every other agreement's,
/// or an agreement in flight on this rank (an idup's, another thread's) could
/// pick the same id.
pub fn agree_with(
    call: &'static str,
    member: bool,
    seed_words: (u32, i32),
    mut and: impl FnMut(&mut [u64]) -> Result<()>,
) -> Result<u32> {
    let mut rounds = Rounds::new(call, seed(seed_words.0, seed_words.1), member, true);
    let mut buf = vec![0u64; WORDS + 1];
    loop {
        rounds.fill(&mut buf);
        and(&mut buf)?;
        if let Some(ctx) = rounds.decide(&buf)? {
            return Ok(ctx);
        }
    }
}

/// A context-id agreement over a communicator (see the module comment).
struct Agreement {
    comm: Comm,
    tag: i32,
    rounds: Rounds,
    /// The allreduce's buffer (in place): WORDS mask words, then the flag word;
    /// moved into the round's schedule while it runs.
    buf: Option<Vec<u64>>,
    sched: Option<Schedule>,
    on_agreed: Option<OnAgreed>,
}

impl std::fmt::Debug for Agreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "context agreement for {} (round {}, candidate {:?}, tag {:#x})",
            self.rounds.call, self.rounds.round, self.rounds.candidate, self.tag
        )
    }
}

impl Agreement {
    fn start_round(&mut self) -> Result<()> {
        // A failed round may have lost the buffer with its schedule.
        let mut words = self.buf.take().unwrap_or_else(|| vec![0u64; WORDS + 1]);
        self.rounds.fill(&mut words);
        let band = Op::predefined(PredefinedOp::Band);
        let mut s =
            crate::coll::allreduce::owned_schedule(self.rounds.call, words, &band, &self.comm)?;
        s.set_tag(self.tag);
        self.sched = Some(s);
        Ok(())
    }

    fn step(&mut self, st: &mut State) -> Result<bool> {
        loop {
            let Some(sched) = self.sched.as_mut() else {
                self.start_round()?;
                continue;
            };
            if !sched.advance(st)? {
                return Ok(false);
            }
            let words = self.sched.take().expect("a running round").into_owned()?;
            let agreed = self.rounds.decide(&words)?;
            self.buf = Some(words);
            if let Some(ctx) = agreed {
                if let Some(f) = self.on_agreed.take() {
                    f(ctx);
                }
                return Ok(true);
            }
        }
    }
}

impl Task for Agreement {
    fn advance(&mut self, st: &mut State) -> Result<bool> {
        let r = self.step(st);
        if r.is_err() {
            self.rounds.drop_hold();
        }
        r
    }
}

impl Drop for Agreement {
    fn drop(&mut self) {
        self.rounds.drop_hold();
    }
}

/// Starts a context-id agreement over `parent` as a request the progress
/// engine advances; `on_agreed` runs (under the engine's lock, so it must not
/// call MPI) with the id once agreed, after members claimed it. The agreement
/// is one collective on `parent`: every rank starts it in the same order
/// relative to `parent`'s other collectives.
pub(crate) fn start_agreement(
    parent: &Comm,
    call: &'static str,
    member: bool,
    on_agreed: OnAgreed,
) -> Result<Request> {
    start_with(parent, call, member, false, on_agreed)
}

/// [`start_agreement`], saying whether the caller waits for it at once.
fn start_with(
    parent: &Comm,
    call: &'static str,
    member: bool,
    blocking: bool,
    on_agreed: OnAgreed,
) -> Result<Request> {
    let e = crate::runtime::engine()?;
    let tag = parent.next_coll_tag();
    Ok(e.with_progress(|st| {
        st.start_task(Box::new(agreement(
            parent, call, member, tag, blocking, on_agreed,
        )))
    }))
}

/// [`agree_for`] as a task the caller waits for: for the temporary
/// communicators of MPI_Comm_create_group, made for one agreement, where a
/// blocking allreduce would look for a shared-memory area each time and a
/// schedule started directly costs less.
pub fn agree_by_task(parent: &Comm, call: &'static str, member: bool) -> Result<u32> {
    let slot = Arc::new(Mutex::new(None));
    let s2 = slot.clone();
    let mut r = start_with(
        parent,
        call,
        member,
        true,
        Box::new(move |ctx| *s2.lock().unwrap_or_else(|p| p.into_inner()) = Some(ctx)),
    )?;
    crate::pt2pt::wait(&mut r).map_err(|mut err| {
        if let Some(rest) = err.message.strip_prefix("MPI_Wait:") {
            err.message = format!("{call}:{rest}");
        }
        err
    })?;
    let ctx = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
    ctx.ok_or_else(|| MpiError::intern(call, "the context agreement completed without an id"))
}

fn agreement(
    parent: &Comm,
    call: &'static str,
    member: bool,
    tag: i32,
    blocking: bool,
    on_agreed: OnAgreed,
) -> Agreement {
    Agreement {
        comm: parent.clone(),
        tag,
        rounds: Rounds::new(call, seed(parent.context(), tag), member, blocking),
        buf: Some(vec![0u64; WORDS + 1]),
        sched: None,
        on_agreed: Some(on_agreed),
    }
}

/// Two agreements one after the other over `parent` (every rank a member of
/// both), as one request: the ids of an intercommunicator and of its local
/// intracommunicator, agreed over the union of the two groups. The
/// agreements use `tag` and `tag | 1 << SEQ_BITS` (sub-tags 0 and 1, so
/// they never meet the next call's tags); `on_agreed` gets both ids.
pub(crate) fn start_agreement_pair(
    parent: &Comm,
    call: &'static str,
    tag: i32,
    on_agreed: Box<dyn FnOnce(u32, u32) + Send>,
) -> Result<Request> {
    let e = crate::runtime::engine()?;
    let first = Arc::new(Mutex::new(None));
    let f2 = first.clone();
    let task = Pair {
        parent: parent.clone(),
        call,
        tag,
        first_id: first,
        current: agreement(
            parent,
            call,
            true,
            tag,
            false,
            Box::new(move |id| *f2.lock().unwrap_or_else(|p| p.into_inner()) = Some(id)),
        ),
        second_started: false,
        on_agreed: Some(on_agreed),
    };
    Ok(e.with_progress(|st| st.start_task(Box::new(task))))
}

struct Pair {
    parent: Comm,
    call: &'static str,
    tag: i32,
    first_id: Arc<Mutex<Option<u32>>>,
    current: Agreement,
    second_started: bool,
    on_agreed: Option<Box<dyn FnOnce(u32, u32) + Send>>,
}

impl std::fmt::Debug for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pair of context agreements ({:?})", self.current)
    }
}

impl Task for Pair {
    fn advance(&mut self, st: &mut State) -> Result<bool> {
        loop {
            if !self.current.advance(st)? {
                return Ok(false);
            }
            let first = self
                .first_id
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            if !self.second_started {
                let a = first.ok_or_else(|| {
                    MpiError::intern(
                        self.call,
                        "the first context agreement completed without an id",
                    )
                })?;
                let cb = self.on_agreed.take();
                let tag = self.tag | (1 << crate::coll::sched::SEQ_BITS);
                self.current = agreement(
                    &self.parent,
                    self.call,
                    true,
                    tag,
                    false,
                    Box::new(move |b| {
                        if let Some(f) = cb {
                            f(a, b)
                        }
                    }),
                );
                self.second_started = true;
                continue;
            }
            return Ok(true);
        }
    }
}

/// Agrees on an id free on every rank of `parent` (collective over `parent`,
/// blocking); members of the new communicator have claimed it on return
/// (`member`), so the caller must build a communicator that owns it.
///
/// The rounds are blocking allreduces on `parent` (its shared-memory path
/// where it has one), with the same holds and confirmations as the task's
/// (see [`agree_with`]): a blocking constructor needs no request and no
/// point-to-point schedule, and in the common case (one agreement at a time)
/// agrees in one allreduce.
pub fn agree_for(parent: &Comm, call: &'static str, member: bool) -> Result<u32> {
    let band = Op::predefined(PredefinedOp::Band);
    let seed = (
        parent.context(),
        parent.0.blocking_seq.load(Ordering::Relaxed) as i32 ^ parent.0.tag_base,
    );
    agree_with(call, member, seed, |buf| {
        let buf = crate::buf::RecvBuf::slice(&mut buf[..ROUND_WORDS]);
        crate::coll::allreduce::allreduce(None, buf, &band, parent)
    })
    .map_err(|mut err| {
        if let Some(rest) = err.message.strip_prefix("MPI_Allreduce:") {
            err.message = format!("{call}:{rest}");
        }
        err
    })
}

/// This rank's free mask, as words (for agreement across two groups), less
/// the ids agreements in flight hold.
pub fn free_words() -> Vec<u64> {
    offer().to_vec()
}

/// The lowest context id free in an agreed mask.
pub fn first_free_in(mask: &[u64]) -> Option<u32> {
    let m: &[u64; WORDS] = mask.try_into().ok()?;
    first_free(m).map(|b| FIRST_DYNAMIC_CONTEXT + 2 * b as u32)
}

fn first_free(mask: &[u64; WORDS]) -> Option<usize> {
    mask.iter()
        .enumerate()
        .find(|(_, w)| **w != 0)
        .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
}

fn bit_of(context: u32) -> Option<usize> {
    let b = context.checked_sub(FIRST_DYNAMIC_CONTEXT)? as usize / 2;
    (b < MAX_CONTEXTS).then_some(b)
}

/// Marks an agreed id used on this rank.
pub fn claim(context: u32) {
    if let Some(b) = bit_of(context) {
        free_mask()[b / 64] &= !(1u64 << (b % 64));
    }
}

/// Gives an id back (when the last handle of its communicator goes away).
pub fn release(context: u32) {
    if let Some(b) = bit_of(context) {
        free_mask()[b / 64] |= 1u64 << (b % 64);
    }
}

/// Ids in use on this rank (diagnostics, leak tests).
pub fn in_use() -> usize {
    free_mask().iter().map(|w| w.count_zeros() as usize).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_common_bit_wins() {
        let mut m = [0u64; WORDS];
        assert_eq!(first_free(&m), None);
        m[3] = 0b1010_0000;
        assert_eq!(first_free(&m), Some(3 * 64 + 5));
        assert_eq!(bit_of(FIRST_DYNAMIC_CONTEXT + 2 * 7), Some(7));
        assert_eq!(bit_of(0), None);
    }

    /// Two agreements in flight together that picked the same candidate (each
    /// then holds it on a different rank, and both start over) must not pick
    /// alike again round after round: for every pair of agreements on the
    /// communicators and tags a program is likely to have, the picks from a
    /// 64-id set differ within a few rounds.
    #[test]
    fn agreements_that_collided_pick_apart() {
        let seeds: Vec<u64> = (0..24u32)
            .flat_map(|c| {
                (0..12i32).map(move |t| seed(FIRST_DYNAMIC_CONTEXT + 6 * c, (1 << 30) | t))
            })
            .collect();
        for (i, &a) in seeds.iter().enumerate() {
            for &b in &seeds[i + 1..] {
                let same = (1..=6)
                    .filter(|&r| mix(a, r) % 64 == mix(b, r) % 64)
                    .count();
                assert!(
                    same < 6,
                    "seeds {a:#x} and {b:#x} pick alike in every round"
                );
            }
        }
    }
}
