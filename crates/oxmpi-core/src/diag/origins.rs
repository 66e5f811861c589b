//! Checking mode's record of where the C layer's objects were made: one
//! [`Origin`] per live handle (communicator, datatype, group, operation,
//! request, info, ...), kept from the handle's creation to its free, so that
//! the report of objects never freed at MPI_Finalize says where each was
//! made. Off (no checking mode) it costs one load of the mode per handle.

use std::collections::HashMap;

use super::describe::{origin_here, Origin};
use super::*;

static ORIGINS: Mutex<Option<HashMap<usize, Origin>>> = Mutex::new(None);

fn origins() -> std::sync::MutexGuard<'static, Option<HashMap<usize, Origin>>> {
    ORIGINS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Handle `h` was just made (checking mode records where).
#[inline]
pub fn handle_made(h: usize) {
    if checking() {
        let o = origin_here();
        origins().get_or_insert_with(HashMap::new).insert(h, o);
    }
}

/// Handle `h` was freed.
#[inline]
pub fn handle_freed(h: usize) {
    if checking() {
        if let Some(m) = origins().as_mut() {
            m.remove(&h);
        }
    }
}

/// Where live handle `h` was made (`"MPI_Comm_dup from main at leaks.c:14"`),
/// if checking mode recorded it.
pub fn handle_origin(h: usize) -> Option<String> {
    origins().as_ref()?.get(&h)?.describe()
}
