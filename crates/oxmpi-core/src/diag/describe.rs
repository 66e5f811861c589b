//! The description of a blocked call (what the launcher prints), and where
//! the program called from: its frame in a backtrace, symbolized.

use super::*;

fn rank_text(peer: i32, world: i32, what: &str) -> String {
    match peer {
        -1 => format!("{what}=MPI_ANY_SOURCE"),
        -3 => format!("{what}=MPI_PROC_NULL"),
        p => format!("{what}={p} (world rank {world})"),
    }
}

fn tag_text(tag: i32) -> String {
    if tag == crate::matching::ANY_TAG {
        "MPI_ANY_TAG".into()
    } else {
        tag.to_string()
    }
}

fn count_text(c: &Call) -> String {
    match c.dtype {
        Some(t) => format!("count={} {t}", c.count),
        None if c.count == c.bytes => format!("{} bytes", c.bytes),
        None if c.bytes > 0 => format!("count={} (derived datatype, {} bytes)", c.count, c.bytes),
        None => format!("count={}", c.count),
    }
}

/// What this rank is blocked on, as the status page's text.
pub(super) fn describe(e: &Engine, call: Option<Call>) -> String {
    use std::fmt::Write;
    let call = call.or_else(|| CALL.with(|c| c.get()));
    // The C function the program called, from the stack (`MPI_Recv_c`,
    // `PMPI_Send`, ...); empty for Rust programs.
    let (api, at) = stack();
    let api = api.as_str();
    let me = e.rank();
    let mut out = String::new();
    let mut waits: Vec<String> = Vec::new();
    let pending = e.lock().pending_requests();
    match call {
        Some(c) => {
            let name = if api.is_empty() { c.name } else { api };
            let (cname, comm) = comm_info(c.ctx);
            let _ = writeln!(out, "call={name}");
            match c.kind {
                Kind::Send | Kind::Recv | Kind::Probe => {
                    let who = if c.kind == Kind::Send {
                        "dest"
                    } else {
                        "source"
                    };
                    let mut args = vec![
                        rank_text(c.peer, c.peer_world, who),
                        format!("tag={}", tag_text(c.tag)),
                    ];
                    if c.kind != Kind::Probe {
                        args.insert(0, count_text(&c));
                    }
                    args.push(format!("comm={cname}"));
                    let _ = writeln!(out, "args={}", args.join(", "));
                    let _ = writeln!(out, "comm={cname}");
                    if c.peer_world >= 0 {
                        waits.push(c.peer_world.to_string());
                    } else if c.peer == -1 {
                        match &comm {
                            Some(m) => {
                                waits.extend(m.iter().filter(|&&w| w != me).map(|w| w.to_string()))
                            }
                            None => waits.push("any".into()),
                        }
                    }
                }
                Kind::Coll => {
                    let mut args = Vec::new();
                    if c.count > 0 || c.dtype.is_some() {
                        args.push(count_text(&c));
                    }
                    if c.has_root {
                        args.push(rank_text(c.peer, c.peer_world, "root"));
                    }
                    args.push(format!("comm={cname}"));
                    let _ = writeln!(out, "args={}", args.join(", "));
                    let _ = writeln!(out, "comm={cname}");
                    let root = if c.has_root {
                        c.peer.to_string()
                    } else {
                        "-".into()
                    };
                    let _ = writeln!(out, "coll={} {} {} {}", c.ctx, c.seq, name, root);
                    if let Some(m) = comm {
                        let _ = writeln!(
                            out,
                            "members={}",
                            m.iter()
                                .map(|w| w.to_string())
                                .collect::<Vec<_>>()
                                .join(",")
                        );
                        waits.extend(m.into_iter().filter(|&w| w != me).map(|w| w.to_string()));
                    }
                }
            }
        }
        None => {
            // MPI_Wait & co.: what the pending requests wait for.
            let name = if api.is_empty() { "MPI_Wait" } else { api };
            let _ = writeln!(out, "call={name}");
            let _ = writeln!(out, "args={} pending request(s)", pending.len());
            for p in &pending {
                match p.peer_world {
                    Some(w) => waits.push(w.to_string()),
                    None => match p.ctx.and_then(|c| comm_info(c).1) {
                        Some(m) => {
                            waits.extend(m.into_iter().filter(|&w| w != me).map(|w| w.to_string()))
                        }
                        None => waits.push("any".into()),
                    },
                }
            }
        }
    }
    for p in pending.iter().take(16) {
        let cname = p.ctx.map(|c| comm_info(c).0).unwrap_or_default();
        let _ = writeln!(
            out,
            "req={}{}{}",
            p.what,
            if cname.is_empty() { "" } else { " on " },
            cname
        );
    }
    if pending.len() > 16 {
        let _ = writeln!(out, "req=... and {} more", pending.len() - 16);
    }
    waits.sort();
    waits.dedup();
    let _ = writeln!(out, "waits={}", waits.join(","));
    if let Some(at) = at {
        let _ = writeln!(out, "at={at}");
    }
    out
}

/// One pending request of a blocked rank (from the engine's request table).
pub(crate) struct Pending {
    pub what: String,
    /// The world rank it needs, if one.
    pub peer_world: Option<u32>,
    pub ctx: Option<u32>,
}

/// The MPI function the program called (the C entry point nearest to the
/// program's frame, empty if none) and where it called it from: the first
/// frame past the MPI library's own.
fn stack() -> (String, Option<String>) {
    located(&std::backtrace::Backtrace::force_capture().to_string())
}

/// [`stack`] of a backtrace's text.
fn located(bt: &str) -> (String, Option<String>) {
    let frames = parse_backtrace(bt);
    if !frames.iter().any(lib_frame) {
        return (String::new(), None);
    }
    let user = user_frame(&frames);
    let upto = user.unwrap_or(frames.len());
    let api = frames[..upto]
        .iter()
        .rev()
        .map(|(n, _)| strip_hash(n))
        .find(|n| {
            (n.starts_with("MPI_") || n.starts_with("PMPI_") || n.starts_with("MPIX_"))
                && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
        .unwrap_or_default();
    // `MPI_x` usually tail-calls `PMPI_x`, leaving only the latter on the stack.
    let api = api
        .strip_prefix('P')
        .filter(|a| a.starts_with("MPI_"))
        .unwrap_or(api)
        .to_string();
    (api, user.and_then(|u| caller_of(&frames[u])))
}

/// Where an object was made (checking mode keeps one per live handle, for the
/// report of objects never freed at MPI_Finalize): the stack when it was
/// made, unwound (a few microseconds) but symbolized only if it is reported.
pub struct Origin(std::backtrace::Backtrace);

impl std::fmt::Debug for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Origin")
    }
}

/// The [`Origin`] of an object being made now.
#[cold]
pub fn origin_here() -> Origin {
    Origin(std::backtrace::Backtrace::force_capture())
}

impl Origin {
    /// `"MPI_Comm_dup from main at leaks.c:14"`: the MPI function that made
    /// the object and the program's frame that called it (file:line with
    /// debug info); `None` when the stack shows neither.
    pub fn describe(&self) -> Option<String> {
        match located(&self.0.to_string()) {
            (api, Some(at)) if !api.is_empty() => Some(format!("{api} from {at}")),
            (_, Some(at)) => Some(at),
            (api, None) if !api.is_empty() => Some(api),
            _ => None,
        }
    }
}

/// The program's frame: past the library's frames (and the standard
/// library's, which the library calls through), the first one. A C entry
/// point (`MPI_x`, `PMPI_x`, Fortran's `mpi_x_`) bounds the library: the
/// program's frame lies past the outermost one, whatever the frames in between
/// are named (with line tables only, inlined functions lose their paths).
fn user_frame(frames: &[(String, Option<String>)]) -> Option<usize> {
    let first_lib = frames.iter().position(lib_frame)?;
    let start = frames
        .iter()
        .rposition(|(n, _)| is_c_entry(strip_hash(n)))
        .map_or(first_lib, |i| i.max(first_lib));
    frames[start..]
        .iter()
        .position(|f| !lib_frame(f) && !std_frame(f))
        .map(|i| i + start)
}

fn is_c_entry(name: &str) -> bool {
    ["MPI_", "PMPI_", "MPIX_", "mpi_"]
        .iter()
        .any(|p| name.starts_with(p))
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn caller_of((name, at): &(String, Option<String>)) -> Option<String> {
    let name = strip_hash(name);
    Some(match at {
        Some(at) => format!("{name} at {at}"),
        None => name.to_string(),
    })
}

fn strip_hash(name: &str) -> &str {
    match name.rfind("::h") {
        Some(i) if name.len() - i == 19 => &name[..i],
        _ => name,
    }
}

/// A frame of oxmpi's own code. With line tables only (the dev profile), a
/// function inlined into another is named without its module path
/// (`describe`): its file tells then (a source directory of oxmpi's crates,
/// not any path naming them: the tests' C programs live under `oxmpi-capi/tests`).
fn lib_frame(f: &(String, Option<String>)) -> bool {
    is_library_frame(&f.0)
        || f.1.as_deref().is_some_and(|at| {
            [
                "oxmpi-core/src/",
                "oxmpi-capi/src/",
                "/oxmpi/src/",
                "crates/oxmpi/src/",
                "/oxmpi-0.",
                "/oxmpi-core-0.",
                "/oxmpi-capi-0.",
            ]
            .iter()
            .any(|p| at.contains(p))
        })
}

/// A frame of the standard library (by name, or by its file when inlined).
fn std_frame(f: &(String, Option<String>)) -> bool {
    is_std_frame(&f.0)
        || f.1
            .as_deref()
            .is_some_and(|at| at.contains("/rustc/") || at.starts_with("library/"))
}

fn is_std_frame(name: &str) -> bool {
    [
        "std::", "core::", "alloc::", "<std::", "<core::", "<alloc::", "__rust",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

fn is_library_frame(name: &str) -> bool {
    name.starts_with("MPI_")
        || name.starts_with("PMPI_")
        || name.starts_with("MPIX_")
        || name.starts_with("mpi_")
        || name.starts_with("oxmpi_core::")
        || name.starts_with("oxmpi_capi::")
        || name.starts_with("mpi::")
        || name.starts_with("<mpi::")
        || name.starts_with("<oxmpi_core::")
        || name.starts_with("oxmpi::")
        || name.starts_with("<oxmpi::")
        || name.starts_with("std::backtrace")
        || name.starts_with("std::thread::local")
        || name.starts_with("core::ops::function")
        || name.starts_with("std::panicking")
        || name.starts_with("std::panic::")
        || name.starts_with("__rust")
}

/// `(symbol, Some("file:line"))` per frame of std's backtrace text.
fn parse_backtrace(bt: &str) -> Vec<(String, Option<String>)> {
    let mut frames: Vec<(String, Option<String>)> = Vec::new();
    for line in bt.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("at ") {
            if let Some(f) = frames.last_mut() {
                if f.1.is_none() {
                    // `file:line:col` -> `file:line`
                    let rest = rest.trim();
                    let cut = match rest.rsplit_once(':') {
                        Some((a, b))
                            if b.chars().all(|c| c.is_ascii_digit())
                                && a.rsplit_once(':').is_some_and(|(_, l)| {
                                    l.chars().all(|c| c.is_ascii_digit())
                                }) =>
                        {
                            a
                        }
                        _ => rest,
                    };
                    f.1 = Some(cut.to_string());
                }
            }
        } else if let Some((num, name)) = t.split_once(": ") {
            if num.chars().all(|c| c.is_ascii_digit()) {
                frames.push((name.trim().to_string(), None));
            }
        }
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_callers_frame() {
        let bt = "   0: std::backtrace::Backtrace::force_capture\n\
                  \x20            at /rustc/x/library/std/src/backtrace.rs:312:9\n\
                  \x20  1: oxmpi_core::diag::caller\n\
                  \x20  2: PMPI_Recv\n\
                  \x20            at crates/oxmpi-capi/src/p2p.rs:1302:1\n\
                  \x20  3: main\n\
                  \x20            at /tmp/cycle.c:12:5\n\
                  \x20  4: __libc_start_call_main\n";
        let f = parse_backtrace(bt);
        assert_eq!(f.len(), 5);
        let first = f.iter().position(|(n, _)| is_library_frame(n)).unwrap();
        let user = f[first..]
            .iter()
            .find(|(n, _)| !is_library_frame(n) && !is_std_frame(n))
            .unwrap();
        assert_eq!(
            *user,
            ("main".to_string(), Some("/tmp/cycle.c:12".to_string()))
        );
        assert_eq!(strip_hash("cycle::main::h0123456789abcdef"), "cycle::main");
        // A program under the repository's tests is the program, not oxmpi.
        let f = parse_backtrace(
            "   0: describe\n             at ./crates/oxmpi-core/src/diag/describe.rs:10:5\n   1: PMPI_Comm_dup\n   2: main\n             at ./crates/oxmpi-capi/tests/c/hang/leaks.c:18:5\n",
        );
        assert!(lib_frame(&f[0]) && lib_frame(&f[1]) && !lib_frame(&f[2]));
        assert_eq!(located("   0: describe\n             at ./crates/oxmpi-core/src/diag/describe.rs:10:5\n   1: PMPI_Comm_dup\n   2: main\n             at ./crates/oxmpi-capi/tests/c/hang/leaks.c:18:5\n"), ("MPI_Comm_dup".to_string(), Some("main at ./crates/oxmpi-capi/tests/c/hang/leaks.c:18".to_string())));
    }
}
