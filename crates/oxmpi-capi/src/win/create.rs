//! Window creation and destruction, group, info and name.

use super::*;
use oxmpi_core::transport::winmem::CallerMem;

/// Info keys a window accepts, with the values reported when the program gave none.
const INFO_DEFAULTS: &[(&str, &str)] = &[
    ("no_locks", "false"),
    ("accumulate_ordering", "rar,raw,war,waw"),
    ("accumulate_ops", "same_op_no_op"),
    ("same_size", "false"),
    ("same_disp_unit", "false"),
];

fn info_pairs(call: &str, info: MPI_Info) -> R<Vec<(String, String)>> {
    if info == MPI_INFO_NULL {
        return Ok(vec![]);
    }
    crate::conv::with_info(call, info, |kv| Ok(kv.clone()))
}

/// Drops values of the accumulate hints that are not the standard's (an invalid
/// hint is ignored: its default is reported), normalizing the valid ones.
fn valid_hints(kv: &mut Vec<(String, String)>) {
    kv.retain_mut(|(k, v)| match k.as_str() {
        "accumulate_ops" => {
            *v = v.trim().to_string();
            v == "same_op" || v == "same_op_no_op"
        }
        "accumulate_ordering" => {
            let parts: Vec<&str> = v.split(',').map(str::trim).collect();
            let ok = parts == ["none"]
                || (!parts.is_empty()
                    && parts
                        .iter()
                        .all(|p| matches!(*p, "rar" | "raw" | "war" | "waw")));
            *v = parts.join(",");
            ok
        }
        _ => true,
    });
}

fn flag_of(kv: &[(String, String)], key: &str) -> bool {
    kv.iter().any(|(k, v)| k == key && v.trim() == "true")
}

fn flavor_code(f: Flavor) -> c_int {
    match f {
        Flavor::Create => MPI_WIN_FLAVOR_CREATE,
        Flavor::Allocate => MPI_WIN_FLAVOR_ALLOCATE,
        Flavor::Dynamic => MPI_WIN_FLAVOR_DYNAMIC,
        Flavor::Shared => MPI_WIN_FLAVOR_SHARED,
    }
}

/// The common body of the window constructors; returns the window handle.
///
/// # Safety
/// For `Create`, `base .. base + size` is this process's memory, valid until MPI_Win_free.
unsafe fn make(
    call: &str,
    c: MPI_Comm,
    flavor: Flavor,
    base: usize,
    size: i64,
    disp_unit: i64,
    info: MPI_Info,
) -> R<MPI_Win> {
    let cm = comm(c, call)?;
    if size < 0 {
        return Err(bad(
            ErrorClass::Size,
            call,
            "size",
            format!("{size} is negative"),
        ));
    }
    if flavor != Flavor::Dynamic && disp_unit <= 0 {
        return Err(bad(
            ErrorClass::Disp,
            call,
            "disp_unit",
            format!("{disp_unit} is not positive"),
        ));
    }
    if flavor == Flavor::Create && base == 0 && size > 0 {
        return Err(bad(
            ErrorClass::Base,
            call,
            "base",
            format!("is NULL with size {size}"),
        ));
    }
    let mut kv = info_pairs(call, info)?;
    valid_hints(&mut kv);
    let noncontig = flag_of(&kv, "alloc_shared_noncontig");
    // `accumulate_ops` given (either value: concurrent accumulates to an element use
    // one op, or MPI_NO_OP): the engine skips the bulk word for one-instruction ops
    // (`Window::same_op_way`). Without it, any mix of ops stays atomic.
    // (`accumulate_ordering` is reported only: accumulates complete in their calls,
    // so every ordering holds whatever it says.)
    let hints = Hints {
        same_op: kv.iter().any(|(k, _)| k == "accumulate_ops"),
    };
    let mem = match flavor {
        // SAFETY: forwarded contract (Create: the caller's memory stays valid until the window is freed).
        Flavor::Create => unsafe { CallerMem::new(base, size as usize) },
        _ => CallerMem::NONE,
    };
    let w = Window::new_hinted(
        &cm,
        flavor,
        mem,
        size as usize,
        disp_unit.max(1) as usize,
        noncontig,
        hints,
        call,
    )?;
    for (k, v) in INFO_DEFAULTS {
        if !kv.iter().any(|(x, _)| x == k) {
            kv.push((k.to_string(), v.to_string()));
        }
    }
    if flavor == Flavor::Shared && !kv.iter().any(|(x, _)| x == "alloc_shared_noncontig") {
        kv.push(("alloc_shared_noncontig".into(), "false".into()));
    }
    let entry = WinEntry {
        size_attr: Box::new(w.size() as MPI_Aint),
        disp_attr: Box::new(w.disp_unit() as c_int),
        flavor_attr: Box::new(flavor_code(flavor)),
        model_attr: Box::new(MPI_WIN_UNIFIED),
        win: w,
        errh: MPI_ERRORS_ARE_FATAL,
        errh_fn: None,
        info: kv,
        name: String::new(),
        attrs: Arc::new(Attributes::new(ObjectKind::Win)),
    };
    Ok(wins().insert(entry))
}

pub trait Disp: Copy {
    fn get(self) -> i64;
}
impl Disp for c_int {
    fn get(self) -> i64 {
        self as i64
    }
}
impl Disp for MPI_Aint {
    fn get(self) -> i64 {
        self as i64
    }
}

// MPI_Win_create, MPI_Win_allocate, MPI_Win_allocate_shared and their `_c` forms: the
// `PMPI_x` are generated from abi.txt's `out(win)` and `outaddr(baseptr)`, which check
// the OUT pointers first.

/// MPI_Win_create(_c).
///
/// # Safety
/// MPI_Win_create's contract: `base` holds `size` bytes until MPI_Win_free.
pub unsafe fn win_create<D: Disp>(
    call: &'static str,
    base: *mut c_void,
    size: MPI_Aint,
    disp_unit: D,
    info: MPI_Info,
    c: MPI_Comm,
    o: &mut MPI_Win,
) -> R<()> {
    // SAFETY: this function's contract.
    *o = unsafe {
        make(
            call,
            c,
            Flavor::Create,
            base as usize,
            size as i64,
            disp_unit.get(),
            info,
        )?
    };
    Ok(())
}
pub use self::win_create as win_create_c;

#[allow(clippy::too_many_arguments)]
fn win_allocate_flavor<D: Disp>(
    call: &'static str,
    flavor: Flavor,
    size: MPI_Aint,
    disp_unit: D,
    info: MPI_Info,
    c: MPI_Comm,
    b: &mut *mut c_void,
    o: &mut MPI_Win,
) -> R<()> {
    // SAFETY: allocate flavors make their own memory; `base` is not used.
    let h = unsafe { make(call, c, flavor, 0, size as i64, disp_unit.get(), info)? };
    *b = wins()
        .get(h)
        .map_or(std::ptr::null_mut(), |e| e.win.base() as *mut c_void);
    *o = h;
    Ok(())
}

/// MPI_Win_allocate(_c).
pub fn win_allocate<D: Disp>(
    call: &'static str,
    size: MPI_Aint,
    disp_unit: D,
    info: MPI_Info,
    c: MPI_Comm,
    b: &mut *mut c_void,
    o: &mut MPI_Win,
) -> R<()> {
    win_allocate_flavor(call, Flavor::Allocate, size, disp_unit, info, c, b, o)
}
pub use self::win_allocate as win_allocate_c;

/// MPI_Win_allocate_shared(_c).
pub fn win_allocate_shared<D: Disp>(
    call: &'static str,
    size: MPI_Aint,
    disp_unit: D,
    info: MPI_Info,
    c: MPI_Comm,
    b: &mut *mut c_void,
    o: &mut MPI_Win,
) -> R<()> {
    win_allocate_flavor(call, Flavor::Shared, size, disp_unit, info, c, b, o)
}
pub use self::win_allocate_shared as win_allocate_shared_c;

/// MPI_Win_create_dynamic (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new handle).
pub fn win_create_dynamic(call: &'static str, info: MPI_Info, c: MPI_Comm) -> R<MPI_Win> {
    // SAFETY: dynamic windows start with no memory.
    unsafe { make(call, c, Flavor::Dynamic, 0, 0, 1, info) }
}

/// MPI_Win_shared_query(_c) (abi.txt `out(size, disp_unit) outaddr(baseptr)`: the
/// generated `PMPI_x` checks the OUT pointers first).
pub fn win_shared_query<D: Copy + TryFrom<usize>>(
    call: &'static str,
    w: MPI_Win,
    rank: c_int,
    s: &mut MPI_Aint,
    d: &mut D,
    b: &mut *mut c_void,
) -> R<()> {
    let wn = win(w, call)?;
    let (sz, du, addr) = wn.shared_query(rank)?;
    *s = sz as MPI_Aint;
    *d = D::try_from(du).map_err(|_| bad(ErrorClass::Arg, call, "disp_unit", "does not fit"))?;
    *b = addr as *mut c_void;
    Ok(())
}
pub use self::win_shared_query as win_shared_query_c;

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_attach(w: MPI_Win, base: *mut c_void, size: MPI_Aint) -> c_int {
    const CALL: &str = "MPI_Win_attach";
    wffi(CALL, w, || {
        let wn = win(w, CALL)?;
        if size < 0 {
            return Err(bad(
                ErrorClass::Size,
                CALL,
                "size",
                format!("{size} is negative"),
            ));
        }
        if base.is_null() && size > 0 {
            return Err(bad(ErrorClass::Base, CALL, "base", "is NULL"));
        }
        // SAFETY: forwarded contract (MPI_Win_attach: the caller's memory stays valid until it is detached or the window freed).
        wn.attach(unsafe { CallerMem::new(base as usize, size as usize) })?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_detach(w: MPI_Win, base: *const c_void) -> c_int {
    const CALL: &str = "MPI_Win_detach";
    wffi(CALL, w, || {
        win(w, CALL)?.detach(base as usize)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_free(w: *mut MPI_Win) -> c_int {
    const CALL: &str = "MPI_Win_free";
    let h = if w.is_null() {
        MPI_WIN_NULL
    } else {
        // SAFETY: `win` is the C caller's INOUT argument: NULL (reported) or valid.
        unsafe { *w }
    };
    wffi(CALL, h, || {
        // SAFETY: as above.
        let o = unsafe { out(CALL, "win", w)? };
        let wn = win(h, CALL)?;
        wn.check_free()?;
        let attrs = wins()
            .get(h)
            .map(|e| e.attrs.clone())
            .expect("checked above");
        with_cb_win(h, || attrs.clear(CALL))?;
        wn.free()?;
        {
            let mut t = wins();
            t.remove(h);
            FREES.fetch_add(1, Ordering::Release);
        }
        remember(MPI_WIN_NULL, 0, None);
        *o = MPI_WIN_NULL;
        Ok(())
    })
}

// ----- group, info, name ---------------------------------------------------------------

/// MPI_Win_get_group (abi.txt `out(group)`: the generated `PMPI_x` checks `group` first).
pub fn win_get_group(call: &'static str, w: MPI_Win, o: &mut MPI_Group) -> R<()> {
    let wn = win(w, call)?;
    *o = crate::conv::new_group(Group::from_world_ranks(wn.comm().group().to_vec()));
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_set_info(w: MPI_Win, info: MPI_Info) -> c_int {
    const CALL: &str = "MPI_Win_set_info";
    wffi(CALL, w, || {
        win(w, CALL)?;
        let mut kv = info_pairs(CALL, info)?;
        // The engine keeps the way of accumulates the creation's `accumulate_ops`
        // chose (every process must agree on it); either standard value promises
        // at least what that way relies on, so the new value is reported.
        valid_hints(&mut kv);
        let mut t = wins();
        let e = t.get_mut(w).ok_or_else(|| bad_win(CALL, w))?;
        for (k, v) in kv {
            // Only the keys a window knows are kept (and reported by MPI_Win_get_info):
            // the defaults, and those it was made with (alloc_shared_noncontig).
            if INFO_DEFAULTS.iter().any(|(d, _)| *d == k) || e.info.iter().any(|(x, _)| *x == k) {
                match e.info.iter_mut().find(|(x, _)| *x == k) {
                    Some(slot) => slot.1 = v,
                    None => e.info.push((k, v)),
                }
            }
        }
        Ok(())
    })
}

/// MPI_Win_get_info (abi.txt `out(info_used)`: the generated `PMPI_x` checks `info_used` first).
pub fn win_get_info(call: &'static str, w: MPI_Win, o: &mut MPI_Info) -> R<()> {
    let kv = wins()
        .get(w)
        .map(|e| e.info.clone())
        .ok_or_else(|| bad_win(call, w))?;
    *o = state().infos.insert(kv);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_set_name(w: MPI_Win, win_name: *const c_char) -> c_int {
    const CALL: &str = "MPI_Win_set_name";
    wffi(CALL, w, || {
        // SAFETY: a C string by contract (NULL rejected).
        let s = unsafe { get_str(CALL, "win_name", win_name)? };
        let s: String = s.chars().take(MPI_MAX_OBJECT_NAME as usize - 1).collect();
        wins().get_mut(w).ok_or_else(|| bad_win(CALL, w))?.name = s;
        Ok(())
    })
}

/// MPI_Win_get_name (abi.txt `out(resultlen) nonnull(win_name)`: the generated `PMPI_x` checks `win_name`, `resultlen` first).
///
/// # Safety
/// The C caller's arguments of MPI_Win_get_name, as MPI defines them.
pub unsafe fn win_get_name(
    call: &'static str,
    w: MPI_Win,
    win_name: *mut c_char,
    len: &mut c_int,
) -> R<()> {
    // MPI-4.1: the null handle has its name too.
    let n = if w == MPI_WIN_NULL {
        "MPI_WIN_NULL".to_string()
    } else {
        wins()
            .get(w)
            .map(|e| e.name.clone())
            .ok_or_else(|| bad_win(call, w))?
    };
    // SAFETY: MPI_MAX_OBJECT_NAME bytes by the C contract.
    *len = unsafe { put_str(win_name, &n, MPI_MAX_OBJECT_NAME as usize) };
    Ok(())
}
