//! Handle tables and the C layer's global state.
//!
//! A run-time handle is `generation << 32 | kind << 24 | slot` (64-bit targets):
//! never below 2^32, so never one of the ABI's predefined values (0..4095), and a
//! handle of the wrong kind, to a freed slot (the generation moves on at every
//! free) or made up entirely is found out by a table lookup, never dereferenced.
//! Fortran integers (`MPI_x_c2f`) are `4096 + slot`.

use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::{Arc, Mutex, MutexGuard};

use oxmpi_core::datatype::Datatype;
use oxmpi_core::group::Group;
use oxmpi_core::op::Op;
use oxmpi_core::pt2pt::Message;
use oxmpi_core::Comm;
use oxmpi_core::{Request, SendMode};

use crate::types::*;

pub const KIND_DATATYPE: u64 = 1;
pub const KIND_REQUEST: u64 = 2;
pub const KIND_OP: u64 = 3;
pub const KIND_ERRHANDLER: u64 = 4;
pub const KIND_INFO: u64 = 5;
pub const KIND_MESSAGE: u64 = 6;
pub const KIND_COMM: u64 = 7;
pub const KIND_GROUP: u64 = 8;

/// Request handles that are the engine's own request (see [`direct_request`]):
/// on MPI_COMM_WORLD and on MPI_COMM_SELF.
pub const KIND_DIRECT_WORLD: u64 = 9;
pub const KIND_DIRECT_SELF: u64 = 10;
const SLOT_BITS: u32 = 24;
const FINT_BASE: i32 = 4096;

struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

pub struct Table<T> {
    kind: u64,
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
}

impl<T> Table<T> {
    pub const fn new(kind: u64) -> Table<T> {
        Table {
            kind,
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    fn encode(&self, slot: u32, generation: u32) -> usize {
        (((generation as u64) << 32) | (self.kind << SLOT_BITS) | slot as u64) as usize
    }

    fn decode(&self, h: usize) -> Option<usize> {
        let h = h as u64;
        let generation = (h >> 32) as u32;
        let kind = (h >> SLOT_BITS) & 0xff;
        let slot = (h & ((1 << SLOT_BITS) - 1)) as usize;
        if generation == 0 || kind != self.kind {
            return None;
        }
        let s = self.slots.get(slot)?;
        (s.generation == generation && s.value.is_some()).then_some(slot)
    }

    pub fn insert(&mut self, v: T) -> usize {
        let slot = match self.free.pop() {
            Some(i) => i,
            None => {
                assert!(self.slots.len() < (1 << SLOT_BITS), "oxmpi: out of handles");
                self.slots.push(Slot {
                    generation: 1,
                    value: None,
                });
                (self.slots.len() - 1) as u32
            }
        };
        let s = &mut self.slots[slot as usize];
        s.value = Some(v);
        let generation = s.generation;
        let h = self.encode(slot, generation);
        // Checking mode: where the object was made, for the leak report.
        oxmpi_core::diag::handle_made(h);
        h
    }

    pub fn get(&self, h: usize) -> Option<&T> {
        self.decode(h).and_then(|i| self.slots[i].value.as_ref())
    }

    pub fn get_mut(&mut self, h: usize) -> Option<&mut T> {
        self.decode(h)
            .and_then(move |i| self.slots[i].value.as_mut())
    }

    pub fn remove(&mut self, h: usize) -> Option<T> {
        let i = self.decode(h)?;
        oxmpi_core::diag::handle_freed(h);
        let s = &mut self.slots[i];
        s.generation = s.generation.wrapping_add(1).max(1);
        self.free.push(i as u32);
        s.value.take()
    }

    /// The Fortran integer of a live handle.
    pub fn c2f(&self, h: usize) -> Option<i32> {
        self.decode(h).map(|i| FINT_BASE + i as i32)
    }

    /// The handle of a Fortran integer (0, never valid, when it names nothing).
    pub fn f2c(&self, f: i32) -> usize {
        let i = (f - FINT_BASE) as usize;
        match self.slots.get(i) {
            Some(s) if s.value.is_some() => self.encode(i as u32, s.generation),
            _ => 0,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            s.value
                .as_ref()
                .map(|v| (self.encode(i as u32, s.generation), v))
        })
    }
}

pub fn c2f_predefined_or<T>(t: &Table<T>, h: usize) -> i32 {
    if h < 4096 {
        h as i32
    } else {
        t.c2f(h).unwrap_or(-1)
    }
}

pub fn f2c_predefined_or<T>(t: &Table<T>, f: i32) -> usize {
    if (0..FINT_BASE).contains(&f) {
        f as usize
    } else if f < 0 {
        0
    } else {
        t.f2c(f)
    }
}

// ----- direct request handles -------------------------------------------------------
//
// A plain request of MPI_Isend/MPI_Irecv on a predefined communicator needs nothing
// of this layer but its communicator (for error routing), so its handle is the
// engine's request itself, `generation << 32 | kind << 24 | slot` with the kind
// naming the communicator: no table entry to make at the start and to look up and
// remove at completion, no lock of this layer's state on the message-rate path
// (bench/PROFILE.md, p2p18). Validity is the engine's: a stale or made-up handle
// names no live request there (generations are never 0, slots are below 2^24
// here). Not in checking mode, whose leak report lists the table's handles.

/// The Fortran integers of direct handles: `FINT_DIRECT + slot` (world) and
/// `FINT_DIRECT + FINT_DIRECT_SELF + slot` (self), above every table slot's.
const FINT_DIRECT: i32 = 0x2000_0000;
const FINT_DIRECT_SELF: i32 = 0x1000_0000;

/// The slot of the direct handles that name [`Request::DONE`] (the engine's one
/// complete request, slot `u32::MAX`, which no real slot reaches): a 0-count
/// immediate collective's, kept out of the table (no lock and table entry at the
/// post and again in its MPI_Wait: 568 -> 251 Ir a 0-count MPI_Iallreduce + MPI_Wait,
/// bench/PROFILE.md collB31). A real request in this slot goes to the table.
const DONE_SLOT: u64 = (1 << SLOT_BITS) - 1;

/// The direct handle of [`Request::DONE`] on a communicator of direct `kind`.
const fn done_direct(kind: u64) -> MPI_Request {
    ((1 << 32 | DONE_SLOT) | kind << SLOT_BITS) as MPI_Request
}

/// [`Request::DONE`]'s direct handles on MPI_COMM_WORLD and MPI_COMM_SELF: the
/// values a window's completed small sends carry, compared as constants by the
/// waits (bench/PROFILE.md, rrate37).
pub const DONE_WORLD: MPI_Request = done_direct(KIND_DIRECT_WORLD);
pub const DONE_SELF: MPI_Request = done_direct(KIND_DIRECT_SELF);

/// The direct handle of engine request `r` on communicator `c`, when it can have one.
#[inline]
pub fn direct_request(r: Request, c: MPI_Comm) -> Option<MPI_Request> {
    let kind = match c {
        crate::abi::MPI_COMM_WORLD => KIND_DIRECT_WORLD,
        crate::abi::MPI_COMM_SELF => KIND_DIRECT_SELF,
        _ => return None,
    };
    if oxmpi_core::diag::checking() {
        return None;
    }
    if r == Request::DONE {
        return Some(done_direct(kind));
    }
    let raw = r.to_raw();
    if raw >> 32 == 0 || raw as u32 as u64 >= DONE_SLOT {
        return None;
    }
    Some((raw | kind << SLOT_BITS) as usize)
}

/// The engine request and communicator of a direct handle; `None` for any other value.
#[inline]
pub fn direct_of(h: MPI_Request) -> Option<(Request, MPI_Comm)> {
    let h = h as u64;
    let c = match (h >> SLOT_BITS) & 0xff {
        KIND_DIRECT_WORLD => crate::abi::MPI_COMM_WORLD,
        KIND_DIRECT_SELF => crate::abi::MPI_COMM_SELF,
        _ => return None,
    };
    if h >> 32 == 0 {
        return None;
    }
    if h & DONE_SLOT == DONE_SLOT {
        return Some((Request::DONE, c));
    }
    // SAFETY: a direct handle is the engine request's own value, which the C program owns (MPI's rules: only its owner completes, starts or frees it); a made-up one names no live request (MPI_ERR_REQUEST).
    Some((unsafe { Request::from_raw(h & !(0xff << SLOT_BITS)) }, c))
}

/// The Fortran integer of a direct handle (`None` for other handles).
pub fn direct_c2f(h: MPI_Request) -> Option<i32> {
    let (r, c) = direct_of(h)?;
    let base = if c == crate::abi::MPI_COMM_SELF {
        FINT_DIRECT + FINT_DIRECT_SELF
    } else {
        FINT_DIRECT
    };
    let slot = if r == Request::DONE {
        DONE_SLOT as i32
    } else {
        r.slot_index() as i32
    };
    Some(base + slot)
}

/// The direct handle of a Fortran integer (`None` when `f` is not one's; 0,
/// never valid, when its slot holds no request).
pub fn direct_f2c(f: i32) -> Option<MPI_Request> {
    if f < FINT_DIRECT {
        return None;
    }
    let rest = f - FINT_DIRECT;
    let (c, slot) = if rest >= FINT_DIRECT_SELF {
        (crate::abi::MPI_COMM_SELF, rest - FINT_DIRECT_SELF)
    } else {
        (crate::abi::MPI_COMM_WORLD, rest)
    };
    if slot >= 1 << SLOT_BITS {
        return Some(0);
    }
    if slot as u64 == DONE_SLOT {
        return direct_request(Request::DONE, c).or(Some(0));
    }
    Some(
        oxmpi_core::pt2pt::request_at_slot(slot as u32)
            .and_then(|r| direct_request(r, c))
            .unwrap_or(0),
    )
}

/// What a persistent request starts each time.
#[derive(Clone)]
pub enum PersistentOp {
    Send {
        buf: usize,
        count: usize,
        dt: Datatype,
        dest: i32,
        tag: i32,
        mode: SendMode,
    },
    Recv {
        buf: usize,
        count: usize,
        dt: Datatype,
        source: i32,
        tag: i32,
    },
    /// A partitioned request: its start (see `part`).
    Part(Starter),
    /// A persistent collective: the schedule planned at its `_init` (see `pcoll`).
    Plan(Arc<oxmpi_core::coll::persistent::Plan>),
}

pub struct RequestEntry {
    /// The engine's request (`Request::NULL` while a persistent request is inactive).
    pub inner: Request,
    /// The communicator whose error handler hears about this request's errors.
    pub comm: MPI_Comm,
    pub persistent: Option<PersistentOp>,
    /// What this layer owes the request when the engine reports it complete.
    pub hook: Hook,
}

/// Work of the C layer at a request's completion (see `request::run_hook`).
pub enum Hook {
    None,
    /// A generalized request: the user's callbacks.
    Greq(Greq),
    /// MPI_Comm_idup: the new communicator, handed out at completion.
    Idup(PendingIdup),
}

/// A generalized request's callbacks and where it stands.
#[derive(Clone, Copy)]
pub struct Greq {
    pub query: Option<MPI_Grequest_query_function>,
    pub free: Option<MPI_Grequest_free_function>,
    pub cancel: Option<MPI_Grequest_cancel_function>,
    pub extra_state: usize,
    /// MPI_Grequest_complete was called.
    pub completed: bool,
    /// MPI_Request_free was called before completion: the handle stays in the
    /// table (for MPI_Grequest_complete) and free_fn runs at completion.
    pub freed: bool,
}

/// Starts one partitioned request into a request handle of its own, whose
/// engine request is returned.
pub type Starter = Arc<dyn Fn(*mut MPI_Request) -> c_int + Send + Sync>;

/// An MPI_Comm_idup in flight: where its communicator goes at completion.
pub struct PendingIdup {
    pub pending: oxmpi_core::comm::create::PendingComm,
    pub parent: MPI_Comm,
    pub hints: Option<Vec<(String, String)>>,
    /// The caller's `newcomm` (MPI: valid storage until the request completes).
    pub newcomm: usize,
}

pub struct ErrhandlerEntry {
    pub func: MPI_Comm_errhandler_function,
    /// Handles the program holds: one from the create call, one more from every
    /// MPI_Comm_get_errhandler that returned it; MPI_Errhandler_free drops one.
    /// At 0 the handle is invalid, but communicators it is attached to keep it.
    pub refs: u32,
}

pub struct MessageEntry {
    pub msg: Message,
    pub comm: MPI_Comm,
}

pub struct State {
    pub datatypes: Table<Datatype>,
    pub requests: Table<RequestEntry>,
    pub ops: Table<Op>,
    pub errhandlers: Table<ErrhandlerEntry>,
    pub infos: Table<Vec<(String, String)>>,
    pub messages: Table<MessageEntry>,
    /// Communicators made at run time (the predefined ones live in the engine).
    pub comms: Table<Comm>,
    pub groups: Table<Group>,
    /// Error handler of each communicator (absent: MPI_ERRORS_ARE_FATAL).
    pub comm_errhandler: HashMap<MPI_Comm, MPI_Errhandler>,
    /// Info hints of each communicator (MPI_Comm_set_info, dup_with_info).
    pub comm_info: HashMap<MPI_Comm, Vec<(String, String)>>,
    /// User error classes and codes: code -> class.
    pub user_codes: HashMap<i32, i32>,
    pub error_strings: HashMap<i32, String>,
    pub last_code: i32,
}

/// The value of the MPI_LASTUSEDCODE attribute.
pub static LASTUSEDCODE: std::sync::atomic::AtomicI32 =
    std::sync::atomic::AtomicI32::new(crate::abi::MPI_ERR_LASTCODE);

static STATE: Mutex<Option<State>> = Mutex::new(None);

pub struct Guard(MutexGuard<'static, Option<State>>);

impl std::ops::Deref for Guard {
    type Target = State;
    fn deref(&self) -> &State {
        self.0.as_ref().unwrap()
    }
}
impl std::ops::DerefMut for Guard {
    fn deref_mut(&mut self) -> &mut State {
        self.0.as_mut().unwrap()
    }
}

/// The C layer's state. Never call into the engine while holding it: the engine
/// may call back (user reduction functions) and take it.
pub fn state() -> Guard {
    let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
    if g.is_none() {
        *g = Some(State {
            datatypes: Table::new(KIND_DATATYPE),
            requests: Table::new(KIND_REQUEST),
            ops: Table::new(KIND_OP),
            errhandlers: Table::new(KIND_ERRHANDLER),
            infos: Table::new(KIND_INFO),
            messages: Table::new(KIND_MESSAGE),
            comms: Table::new(KIND_COMM),
            groups: Table::new(KIND_GROUP),
            comm_errhandler: HashMap::new(),
            comm_info: HashMap::new(),
            user_codes: HashMap::new(),
            error_strings: HashMap::new(),
            last_code: crate::abi::MPI_ERR_LASTCODE,
        });
    }
    Guard(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request value for the handle arithmetic (no engine runs here).
    fn forged(raw: u64) -> Request {
        // SAFETY: no engine runs in these tests, so the value names no live request.
        unsafe { Request::from_raw(raw) }
    }

    #[test]
    fn direct_request_handles_round_trip_and_stay_apart_from_the_table() {
        use crate::abi::{MPI_COMM_SELF, MPI_COMM_WORLD, MPI_REQUEST_NULL};
        let r = forged((5 << 32) | 7);
        let w = direct_request(r, MPI_COMM_WORLD).unwrap();
        let s = direct_request(r, MPI_COMM_SELF).unwrap();
        assert!(w >= 1 << 32 && w != s);
        assert_eq!(direct_of(w), Some((r, MPI_COMM_WORLD)));
        assert_eq!(direct_of(s), Some((r, MPI_COMM_SELF)));
        // Another communicator, generation 0, a slot beyond 2^24: no direct handle.
        assert_eq!(direct_request(r, 0x1234_5678_9abc), None);
        assert_eq!(direct_request(forged(7), MPI_COMM_WORLD), None);
        assert_eq!(
            direct_request(forged((1 << 32) | (1 << 24)), MPI_COMM_WORLD),
            None
        );
        // Not one of a table's handles, and a table handle is not a direct one.
        let mut t: Table<u32> = Table::new(KIND_REQUEST);
        assert_eq!(t.get(w), None);
        let h = t.insert(1);
        assert_eq!(direct_of(h), None);
        assert_eq!(direct_of(MPI_REQUEST_NULL), None);
        assert_eq!(direct_of(0), None);
        // Fortran integers: above every table slot's, world and self apart.
        let (fw, fs) = (direct_c2f(w).unwrap(), direct_c2f(s).unwrap());
        assert!(fw > FINT_BASE + (1 << SLOT_BITS) && fw != fs);
        assert_eq!(direct_c2f(h), None);
        assert_eq!(direct_f2c(t.c2f(h).unwrap()), None);
        // The engine's complete request: one direct handle per communicator, which
        // names it back (also through Fortran); a real request in its slot has none.
        let (dw, ds) = (
            direct_request(Request::DONE, MPI_COMM_WORLD).unwrap(),
            direct_request(Request::DONE, MPI_COMM_SELF).unwrap(),
        );
        assert!(dw != ds && dw != w && t.get(dw).is_none());
        assert_eq!((dw, ds), (DONE_WORLD, DONE_SELF));
        assert_eq!(direct_of(dw), Some((Request::DONE, MPI_COMM_WORLD)));
        assert_eq!(direct_of(ds), Some((Request::DONE, MPI_COMM_SELF)));
        assert_eq!(direct_f2c(direct_c2f(dw).unwrap()), Some(dw));
        assert_eq!(direct_f2c(direct_c2f(ds).unwrap()), Some(ds));
        assert_eq!(direct_c2f(dw).unwrap(), FINT_DIRECT + DONE_SLOT as i32);
        assert_eq!(
            direct_request(forged((3 << 32) | DONE_SLOT), MPI_COMM_WORLD),
            None
        );
        assert_eq!(direct_request(Request::DONE, 0x1234_5678_9abc), None);
    }

    #[test]
    fn stale_and_foreign_handles_are_rejected() {
        let mut t: Table<u32> = Table::new(KIND_OP);
        let h = t.insert(7);
        assert!(h >= 1 << 32);
        assert_eq!(t.get(h), Some(&7));
        assert_eq!(t.remove(h), Some(7));
        assert_eq!(t.get(h), None);
        let h2 = t.insert(8);
        assert_ne!(h, h2, "a reused slot gets a new generation");
        assert_eq!(t.get(h), None);
        let other: Table<u32> = Table::new(KIND_DATATYPE);
        assert_eq!(other.get(h2), None);
        assert_eq!(t.get(0xdead_beef), None);
        assert_eq!(t.get(0x101), None);
        let f = t.c2f(h2).unwrap();
        assert_eq!(t.f2c(f), h2);
    }
}
