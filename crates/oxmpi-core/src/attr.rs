//! Attribute caching: keyvals with copy and delete callbacks, attributes on
//! communicators (and, through the same table, on datatypes), and the
//! predefined attributes of MPI_COMM_WORLD.
//!
//! An attribute value is an address-sized integer (C's `void *`). Callbacks are
//! closures, so the C layer can wrap a C function pointer and the Rust API a
//! Rust closure in the same engine. Copy callbacks run on dup; delete callbacks
//! run when an attribute is replaced or deleted and when its object is freed.
//!
//! Typed attributes (the Rust API's, one value of a Rust type per keyval) are kept
//! here too ([`create_typed_keyval`], [`Attributes::set_typed`],
//! [`Attributes::get_typed`]): the value (`Send + Sync`: an object's attributes are
//! reached from any thread under MPI_THREAD_MULTIPLE) is appended to the object's
//! [`Kept`] list, whose entries are only added while the object is shared, its keyval
//! records the value's type (checked by every typed access) and the C layer cannot
//! set it; a value replaced, deleted or cleared stays in the list until its object
//! goes (or [`Attributes::purge`], with the object exclusively borrowed, drops it), so
//! a reference `get_typed` handed out stays valid for as long as the object is
//! borrowed: the borrow checker proves it, with no `unsafe`.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::error::{ErrorClass, MpiError, Result};

/// `MPI_KEYVAL_INVALID`.
pub const KEYVAL_INVALID: i32 = 0;
/// Predefined attribute keys (ABI values).
pub const TAG_UB: i32 = 501;
pub const IO: i32 = 502;
pub const HOST: i32 = 503;
pub const WTIME_IS_GLOBAL: i32 = 504;
pub const APPNUM: i32 = 505;
pub const LASTUSEDCODE: i32 = 506;
pub const UNIVERSE_SIZE: i32 = 507;
const PREDEFINED: [i32; 7] = [
    TAG_UB,
    IO,
    HOST,
    WTIME_IS_GLOBAL,
    APPNUM,
    LASTUSEDCODE,
    UNIVERSE_SIZE,
];
/// User keyvals start here, clear of the predefined keys.
const FIRST_USER_KEYVAL: i32 = 1000;

/// Which kind of object a keyval may be used on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ObjectKind {
    #[default]
    Comm,
    Datatype,
    /// One-sided windows (`MPI_Win_create_keyval`).
    Win,
}

/// What a copy callback decides for one attribute on dup.
pub type CopyFn = Arc<dyn Fn(i32, usize) -> Result<Option<usize>> + Send + Sync>;
/// Called with (keyval, value) when an attribute goes away.
pub type DeleteFn = Arc<dyn Fn(i32, usize) -> Result<()> + Send + Sync>;

#[derive(Clone)]
struct Keyval {
    kind: ObjectKind,
    copy: Option<CopyFn>,
    delete: Option<DeleteFn>,
    /// Freed by the user: no new attributes, existing ones still work.
    freed: bool,
    /// Attributes that still use this keyval (so the entry outlives MPI_*_free_keyval).
    uses: usize,
    /// For a typed keyval: its values' type and how to free one.
    typed: Option<Typed>,
}

/// A typed attribute value (reached from any thread that reaches its object).
type Value = Box<dyn Any + Send + Sync>;

/// What a typed keyval records of its values: their type, and how a duplicate of the
/// object gets its copy (`clone_value::<A>`; `None`: it gets none).
#[derive(Clone, Copy)]
struct Typed {
    type_id: TypeId,
    clone: Option<fn(&(dyn Any + Send + Sync)) -> Value>,
}

/// A clone of a typed value of `A`.
fn clone_value<A: Clone + Send + Sync + 'static>(v: &(dyn Any + Send + Sync)) -> Value {
    let a: &A = v
        .downcast_ref()
        .expect("a typed keyval's values have its type");
    Box::new(a.clone())
}

/// The typed values an object was given: an append-only list (entries are added
/// through a shared borrow and never removed while one exists), so a reference into it
/// lives as long as the borrow of the object. Each entry has a number, the value the
/// object's attribute table holds for it.
#[derive(Default)]
pub struct Kept {
    head: OnceLock<Box<KeptNode>>,
    next_id: std::sync::atomic::AtomicUsize,
}

struct KeptNode {
    id: usize,
    value: Value,
    next: OnceLock<Box<KeptNode>>,
}

impl Kept {
    /// Appends `value`; its number.
    fn push(&self, value: Value) -> usize {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut node = Box::new(KeptNode {
            id,
            value,
            next: OnceLock::new(),
        });
        let mut slot = &self.head;
        loop {
            match slot.get() {
                Some(n) => slot = &n.next,
                // Another thread may append at once: then go on past its entry.
                None => match slot.set(node) {
                    Ok(()) => return id,
                    Err(back) => node = back,
                },
            }
        }
    }

    /// The value numbered `id`.
    fn get(&self, id: usize) -> Option<&(dyn Any + Send + Sync)> {
        let mut at = self.head.get();
        while let Some(n) = at {
            if n.id == id {
                return Some(&*n.value);
            }
            at = n.next.get();
        }
        None
    }

    /// Drops every value whose number `keep` refuses (the exclusive borrow proves no
    /// reference into the list is left).
    fn retain(&mut self, keep: impl Fn(usize) -> bool) {
        let mut nodes = Vec::new();
        let mut at = self.head.take();
        while let Some(mut n) = at {
            at = n.next.take();
            nodes.push(n);
        }
        let mut slot = &mut self.head;
        for n in nodes.into_iter().filter(|n| keep(n.id)) {
            let _ = slot.set(n);
            slot = &mut slot.get_mut().expect("just set").next;
        }
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        // One by one, not recursively.
        self.retain(|_| false);
    }
}

static KEYVALS: Mutex<Option<(i32, HashMap<i32, Keyval>)>> = Mutex::new(None);

fn keyvals() -> MutexGuard<'static, Option<(i32, HashMap<i32, Keyval>)>> {
    KEYVALS.lock().unwrap_or_else(|p| p.into_inner())
}

/// MPI_Comm_create_keyval / MPI_Type_create_keyval. `copy: None` is
/// MPI_*_NULL_COPY_FN (never copied); `delete: None` is MPI_*_NULL_DELETE_FN.
pub fn create_keyval(kind: ObjectKind, copy: Option<CopyFn>, delete: Option<DeleteFn>) -> i32 {
    insert_keyval(kind, copy, delete, None)
}

/// A keyval for typed values of type `A` (the Rust API's attributes): set and read
/// only with [`Attributes::set_typed`] and [`Attributes::get_typed`] for `A`;
/// `clone_on_dup` says whether a duplicate of the object gets a clone of the value.
/// `A` is `Send + Sync`: the object's attributes are reached from any thread.
pub fn create_typed_keyval<A: Clone + Send + Sync + 'static>(
    kind: ObjectKind,
    clone_on_dup: bool,
) -> i32 {
    let typed = Typed {
        type_id: TypeId::of::<A>(),
        clone: clone_on_dup.then_some(clone_value::<A> as fn(&(dyn Any + Send + Sync)) -> Value),
    };
    insert_keyval(kind, None, None, Some(typed))
}

fn insert_keyval(
    kind: ObjectKind,
    copy: Option<CopyFn>,
    delete: Option<DeleteFn>,
    typed: Option<Typed>,
) -> i32 {
    let mut g = keyvals();
    let (next, table) = g.get_or_insert_with(|| (FIRST_USER_KEYVAL, HashMap::new()));
    let k = *next;
    *next += 1;
    table.insert(
        k,
        Keyval {
            kind,
            copy,
            delete,
            freed: false,
            uses: 0,
            typed,
        },
    );
    k
}

/// MPI_Comm_free_keyval / MPI_Type_free_keyval.
pub fn free_keyval(kind: ObjectKind, keyval: i32, call: &str) -> Result<()> {
    let mut g = keyvals();
    let entry = g.as_mut().and_then(|(_, t)| t.get_mut(&keyval));
    match entry {
        Some(k) if k.kind == kind && !k.freed => {
            k.freed = true;
            if k.uses == 0 {
                g.as_mut().unwrap().1.remove(&keyval);
            }
            Ok(())
        }
        // Already freed by the user but kept alive by attributes that still use it
        // (typically freed again from inside its own delete callback, then by the
        // caller holding a copy of the handle): the object is still extant, so this
        // free has nothing left to do. The key goes away with its last attribute.
        Some(k) if k.kind == kind => Ok(()),
        _ => Err(bad_keyval(call, keyval, kind)),
    }
}

fn bad_keyval(call: &str, keyval: i32, kind: ObjectKind) -> MpiError {
    let why = if PREDEFINED.contains(&keyval) {
        "a predefined attribute key cannot be changed or freed".to_string()
    } else {
        format!("{keyval} is not a valid {kind:?} keyval (never created, already freed, or for another object kind)")
    };
    MpiError::arg(ErrorClass::Keyval, call, "keyval", why)
}

/// What `keyval` records of typed values (`None`: not a typed keyval, or gone).
fn typed_of(keyval: i32) -> Option<Typed> {
    keyvals().as_ref()?.1.get(&keyval)?.typed
}

fn lookup(keyval: i32, kind: ObjectKind, call: &str, for_new: bool) -> Result<Keyval> {
    let g = keyvals();
    match g.as_ref().and_then(|(_, t)| t.get(&keyval)) {
        Some(k) if k.kind == kind && !(for_new && k.freed) => Ok(k.clone()),
        _ => Err(bad_keyval(call, keyval, kind)),
    }
}

fn add_use(keyval: i32, delta: isize) {
    let mut g = keyvals();
    if let Some((_, t)) = g.as_mut() {
        let remove = match t.get_mut(&keyval) {
            Some(k) => {
                k.uses = (k.uses as isize + delta).max(0) as usize;
                k.freed && k.uses == 0
            }
            None => false,
        };
        if remove {
            t.remove(&keyval);
        }
    }
}

/// The attributes cached on one object.
#[derive(Default)]
pub struct Attributes {
    /// keyval -> (when it was first set, value).
    values: Mutex<BTreeMap<i32, (u64, usize)>>,
    kind: ObjectKind,
    /// Typed values, set ones and those replaced, deleted or cleared (dropped when the
    /// object goes, or by `purge`, since a reference `get_typed` gave may still be in
    /// use until then); the table holds a set one's number.
    kept: Kept,
}

/// Orders attribute settings, so an object's attributes are deleted in the
/// reverse order they were set (MPI-2.2: MPI_COMM_SELF's at MPI_Finalize).
fn next_seq() -> u64 {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl std::fmt::Debug for Attributes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Attributes({} set)", self.lock().len())
    }
}

impl Attributes {
    pub fn new(kind: ObjectKind) -> Attributes {
        Attributes {
            values: Mutex::new(BTreeMap::new()),
            kind,
            kept: Kept::default(),
        }
    }

    /// A value going away: a typed one stays kept (dropped with the object or by
    /// `purge`), any other goes to the keyval's delete callback.
    fn gone(&self, k: &Keyval, keyval: i32, value: usize) -> Result<()> {
        if k.typed.is_some() {
            return Ok(());
        }
        match &k.delete {
            Some(d) => d(keyval, value),
            None => Ok(()),
        }
    }

    /// Frees the typed values replaced or deleted so far: the exclusive borrow proves
    /// no reference [`get_typed`](Self::get_typed) gave is left.
    pub fn purge(&mut self) {
        let values = self.values.get_mut().unwrap_or_else(|p| p.into_inner());
        let typed: Vec<usize> = values
            .iter()
            .filter(|(k, _)| typed_of(**k).is_some())
            .map(|(_, v)| v.1)
            .collect();
        self.kept.retain(|id| typed.contains(&id));
    }

    /// MPI_*_set_attr for a typed keyval of `A` (made by [`create_typed_keyval`]):
    /// replaces the value (keeping the old one until `purge`).
    pub fn set_typed<A: Send + Sync + 'static>(
        &self,
        keyval: i32,
        value: A,
        call: &str,
    ) -> Result<()> {
        let k = lookup(keyval, self.kind(), call, true)?;
        check_typed::<A>(&k, keyval, call)?;
        let v = self.kept.push(Box::new(value));
        let old = self.lock().insert(keyval, (next_seq(), v));
        match old {
            Some((seq, old)) => {
                self.lock().insert(keyval, (seq, v));
                self.gone(&k, keyval, old)
            }
            None => {
                add_use(keyval, 1);
                Ok(())
            }
        }
    }

    /// MPI_*_get_attr for a typed keyval of `A`: the value, borrowed for as long as the
    /// object is (`None` when not set).
    pub fn get_typed<A: 'static>(&self, keyval: i32, call: &str) -> Result<Option<&A>> {
        let k = lookup(keyval, self.kind(), call, false)?;
        check_typed::<A>(&k, keyval, call)?;
        let v = self.lock().get(&keyval).map(|e| e.1);
        Ok(v.and_then(|id| self.kept.get(id)?.downcast_ref::<A>()))
    }

    fn kind(&self) -> ObjectKind {
        self.kind
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<i32, (u64, usize)>> {
        self.values.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// MPI_*_set_attr: replaces (deleting the old value first).
    pub fn set(&self, keyval: i32, value: usize, call: &str) -> Result<()> {
        let k = lookup(keyval, self.kind(), call, true)?;
        if k.typed.is_some() {
            return Err(MpiError::arg(
                ErrorClass::Keyval,
                call,
                "keyval",
                format!(
                    "keyval {keyval} holds typed values of the Rust API; only that API sets them"
                ),
            ));
        }
        let old = self.lock().get(&keyval).copied();
        let seq = match old {
            Some((seq, old)) => {
                if let Some(d) = &k.delete {
                    d(keyval, old)?;
                }
                seq
            }
            None => {
                add_use(keyval, 1);
                next_seq()
            }
        };
        self.lock().insert(keyval, (seq, value));
        Ok(())
    }

    /// MPI_*_get_attr on a user keyval: `None` when not set.
    pub fn get(&self, keyval: i32, call: &str) -> Result<Option<usize>> {
        lookup(keyval, self.kind(), call, false)?;
        Ok(self.lock().get(&keyval).map(|e| e.1))
    }

    /// MPI_*_delete_attr.
    pub fn delete(&self, keyval: i32, call: &str) -> Result<()> {
        let k = lookup(keyval, self.kind(), call, false)?;
        let Some((_, old)) = self.lock().get(&keyval).copied() else {
            return Err(MpiError::arg(
                ErrorClass::Keyval,
                call,
                "keyval",
                format!("no attribute is set for keyval {keyval}"),
            ));
        };
        self.gone(&k, keyval, old)?;
        self.lock().remove(&keyval);
        add_use(keyval, -1);
        Ok(())
    }

    /// Runs the copy callbacks for a duplicate; returns the new object's attributes.
    pub fn duplicate(&self, call: &str) -> Result<Attributes> {
        let out = Attributes::new(self.kind());
        let mut entries: Vec<(i32, u64, usize)> =
            self.lock().iter().map(|(k, v)| (*k, v.0, v.1)).collect();
        entries.sort_by_key(|e| e.1);
        for (keyval, _, value) in entries {
            let k = lookup(keyval, self.kind(), call, false)?;
            if let Some(t) = k.typed {
                if let (Some(clone), Some(v)) = (t.clone, self.kept.get(value)) {
                    let id = out.kept.push(clone(v));
                    out.lock().insert(keyval, (next_seq(), id));
                    add_use(keyval, 1);
                }
                continue;
            }
            if let Some(copy) = &k.copy {
                if let Some(new) = copy(keyval, value)? {
                    out.lock().insert(keyval, (next_seq(), new));
                    add_use(keyval, 1);
                }
            }
        }
        Ok(out)
    }

    /// Runs every delete callback (the object is being freed), the most
    /// recently set attribute first.
    pub fn clear(&self, call: &str) -> Result<()> {
        let mut entries: Vec<(i32, u64, usize)> =
            self.lock().iter().map(|(k, v)| (*k, v.0, v.1)).collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.1));
        for (keyval, _, value) in entries {
            if let Ok(k) = lookup(keyval, self.kind(), call, false) {
                self.gone(&k, keyval, value)?;
            }
            self.lock().remove(&keyval);
            add_use(keyval, -1);
        }
        Ok(())
    }
}

/// Checks that `k` (keyval `keyval`) holds typed values of `A`.
fn check_typed<A: 'static>(k: &Keyval, keyval: i32, call: &str) -> Result<()> {
    match k.typed {
        Some(t) if t.type_id == TypeId::of::<A>() => Ok(()),
        _ => Err(MpiError::arg(
            ErrorClass::Keyval,
            call,
            "keyval",
            format!(
                "keyval {keyval} does not hold typed values of {}",
                std::any::type_name::<A>()
            ),
        )),
    }
}

/// Whether `keyval` is a predefined attribute key.
pub fn is_predefined(keyval: i32) -> bool {
    PREDEFINED.contains(&keyval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn callbacks_run_on_dup_replace_delete_and_clear() {
        static COPIES: AtomicUsize = AtomicUsize::new(0);
        static DELETES: AtomicUsize = AtomicUsize::new(0);
        let copy: CopyFn = Arc::new(|_, v| {
            COPIES.fetch_add(1, Ordering::SeqCst);
            Ok(Some(v + 1))
        });
        let delete: DeleteFn = Arc::new(|_, _| {
            DELETES.fetch_add(1, Ordering::SeqCst);
            Ok(())
        });
        let k = create_keyval(ObjectKind::Comm, Some(copy), Some(delete));
        let a = Attributes::new(ObjectKind::Comm);
        assert_eq!(a.get(k, "t").unwrap(), None);
        a.set(k, 10, "t").unwrap();
        a.set(k, 11, "t").unwrap(); // replaces: deletes 10
        assert_eq!(DELETES.load(Ordering::SeqCst), 1);
        let b = a.duplicate("t").unwrap();
        assert_eq!(COPIES.load(Ordering::SeqCst), 1);
        assert_eq!(b.get(k, "t").unwrap(), Some(12));
        free_keyval(ObjectKind::Comm, k, "t").unwrap();
        // Still usable on objects that have it.
        assert_eq!(a.get(k, "t").unwrap(), Some(11));
        assert_eq!(a.set(k, 1, "t").unwrap_err().class, ErrorClass::Keyval);
        a.delete(k, "t").unwrap();
        b.clear("t").unwrap();
        assert_eq!(DELETES.load(Ordering::SeqCst), 3);
        assert_eq!(
            a.get(k, "t").unwrap_err().class,
            ErrorClass::Keyval,
            "entry gone after last use"
        );
    }

    #[test]
    fn null_copy_does_not_copy_and_kinds_are_checked() {
        let k = create_keyval(ObjectKind::Comm, None, None);
        let a = Attributes::new(ObjectKind::Comm);
        a.set(k, 5, "t").unwrap();
        assert_eq!(a.duplicate("t").unwrap().get(k, "t").unwrap(), None);
        let d = Attributes::new(ObjectKind::Datatype);
        assert_eq!(
            d.set(k, 1, "MPI_Type_set_attr").unwrap_err().class,
            ErrorClass::Keyval
        );
        assert_eq!(
            free_keyval(ObjectKind::Comm, TAG_UB, "t")
                .unwrap_err()
                .class,
            ErrorClass::Keyval
        );
        assert_eq!(a.delete(12345, "t").unwrap_err().class, ErrorClass::Keyval);
    }

    #[test]
    fn typed_values_are_checked_retired_and_freed_with_the_object() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        #[derive(Clone, Debug)]
        struct V(u32);
        impl Drop for V {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Ordering::SeqCst);
            }
        }
        let k = create_typed_keyval::<V>(ObjectKind::Comm, true);
        let mut a = Attributes::new(ObjectKind::Comm);
        a.set_typed(k, V(1), "t").unwrap();
        let first = a.get_typed::<V>(k, "t").unwrap().unwrap();
        a.set_typed(k, V(2), "t").unwrap();
        // The replaced value is retired, not freed: `first` is still good.
        assert_eq!(first.0, 1);
        assert_eq!(DROPS.load(Ordering::SeqCst), 0);
        assert_eq!(a.get_typed::<V>(k, "t").unwrap().map(|v| v.0), Some(2));
        // Another type, or the C layer's raw set, is refused.
        assert_eq!(
            a.get_typed::<u32>(k, "t").unwrap_err().class,
            ErrorClass::Keyval
        );
        assert_eq!(a.set(k, 7, "t").unwrap_err().class, ErrorClass::Keyval);
        let b = a.duplicate("t").unwrap();
        assert_eq!(b.get_typed::<V>(k, "t").unwrap().map(|v| v.0), Some(2));
        a.purge();
        assert_eq!(DROPS.load(Ordering::SeqCst), 1);
        a.delete(k, "t").unwrap();
        assert!(a.get_typed::<V>(k, "t").unwrap().is_none());
        drop(a);
        assert_eq!(DROPS.load(Ordering::SeqCst), 2);
        b.clear("t").unwrap();
        drop(b);
        assert_eq!(DROPS.load(Ordering::SeqCst), 3);
    }
}
