//! The C layer's files import each other without a circle, and the conversion
//! layer (`src/conv/`) imports nothing above it (ARCHITECTURE.md, "The C layer").
//!
//! A file's imports are its `crate::X` paths (in `use` lines and inline), with its
//! `super::X` and `self::X` paths read as the `crate::` paths they name. `lib.rs`'s
//! `pmpi` module re-exports every area, so it is a node of its own; `abi` and `types`
//! (inline modules of `lib.rs`, below everything) are leaves.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `node -> source` for every file under `src/` (`conv/mod.rs` is `conv`).
fn files() -> BTreeMap<String, String> {
    fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, base, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(base).unwrap().with_extension("");
                let name = rel.to_string_lossy().replace('\\', "/");
                let name = name
                    .strip_suffix("/mod")
                    .map(str::to_string)
                    .unwrap_or(name);
                out.insert(name, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let base = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let mut out = BTreeMap::new();
    walk(base, base, &mut out);
    out
}

/// The paths after each `crate::` in `text` (a `{a, b::c}` group gives one per item).
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = vec![];
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let path = rest[..end].trim_end_matches(':').to_string();
        if rest[end..].starts_with('{') && rest[..end].ends_with("::") {
            let group = &rest[end + 1..rest[end..].find('}').map_or(rest.len(), |i| end + i)];
            for item in group.split(',') {
                let item = item.split(" as ").next().unwrap().trim();
                if !item.is_empty() {
                    out.push(format!("{path}::{item}"));
                }
            }
        } else {
            out.push(path);
        }
    }
    out
}

/// `text` of the file `name` with its `super::`/`self::` paths written from `crate::`.
fn absolute(name: &str, text: &str) -> String {
    let module = name.replace('/', "::");
    let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
    let crate_of = |m: &str| {
        if m.is_empty() {
            "crate::".to_string()
        } else {
            format!("crate::{m}::")
        }
    };
    text.replace("super::", &crate_of(parent))
        .replace("self::", &crate_of(&module))
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = files();
    let lib = files.remove("lib").expect("src/lib.rs");
    let pmpi_at = lib
        .find("pub mod pmpi {")
        .expect("lib.rs has `pub mod pmpi`");
    let pmpi = &lib[pmpi_at..pmpi_at + lib[pmpi_at..].find("\n}").unwrap()];
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // Longest file-path prefix of `path` (`conv::handles::state` -> `conv/handles`).
    let resolve = |path: &str, files: &BTreeMap<String, String>| -> Option<String> {
        let parts: Vec<&str> = path.split("::").collect();
        (1..=parts.len())
            .rev()
            .map(|k| parts[..k].join("/"))
            .find(|c| files.contains_key(c))
    };
    g.insert(
        "pmpi".into(),
        crate_paths(pmpi)
            .iter()
            .filter_map(|p| resolve(p, &files))
            .collect(),
    );
    for (name, text) in &files {
        let mut deps = BTreeSet::new();
        for p in crate_paths(&absolute(name, text)) {
            if p.starts_with("pmpi") {
                deps.insert("pmpi".to_string());
            } else if let Some(t) = resolve(&p, &files) {
                // A directory module and its own files are one unit for its files.
                if t != *name && !name.starts_with(&format!("{t}/")) {
                    deps.insert(t);
                }
            }
        }
        g.insert(name.clone(), deps);
    }
    g
}

#[test]
fn capi_files_import_each_other_without_a_circle() {
    let g = graph();
    assert!(
        g.len() > 20,
        "the walk found the source files: {:?}",
        g.keys()
    );
    // Depth-first search; a back edge is a circle, reported with its path.
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            match state.get(d.as_str()).copied().unwrap_or(0) {
                0 => visit(d, g, state, stack),
                1 => {
                    let from = stack.iter().position(|s| s == d).unwrap();
                    panic!(
                        "import circle among capi files: {} -> {d}",
                        stack[from..].join(" -> ")
                    );
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if !state.contains_key(n.as_str()) {
            visit(n, &g, &mut state, &mut vec![]);
        }
    }
}

#[test]
fn the_conversion_layer_imports_nothing_above_it() {
    let g = graph();
    assert!(
        g.contains_key("conv/handles") && g.contains_key("conv/lookup"),
        "{:?}",
        g.keys()
    );
    for (n, deps) in g
        .iter()
        .filter(|(n, _)| n.as_str() == "conv" || n.starts_with("conv/"))
    {
        let up: Vec<&String> = deps
            .iter()
            .filter(|d| !(d.as_str() == "conv" || d.starts_with("conv/")))
            .collect();
        assert!(
            up.is_empty(),
            "{n} imports from above the conversion layer: {up:?}"
        );
    }
    // And the areas reach the tables through it: some area file imports conv.
    assert!(g
        .get("p2p")
        .is_some_and(|d| d.iter().any(|x| x.starts_with("conv"))));
}

#[test]
fn the_import_scanner_sees_groups_and_inline_paths() {
    let p =
        crate_paths("use crate::conv::{handles::state, comm as c};\nlet x = crate::p2p::send(1);");
    assert_eq!(p, ["conv::handles::state", "conv::comm", "p2p::send"]);
}

#[test]
fn relative_paths_count_as_imports() {
    let t = absolute(
        "file/open",
        "use super::*;\nuse super::view::x;\nuse self::y::z;",
    );
    assert_eq!(
        crate_paths(&t),
        ["file::", "file::view::x", "file::open::y::z"].map(|s| s.trim_end_matches(':'))
    );
    assert_eq!(absolute("p2p", "super::conv::x"), "crate::conv::x");
}
