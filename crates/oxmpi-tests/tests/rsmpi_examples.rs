//! rsmpi compatibility harness: rsmpi 0.8's own example programs, built against oxmpi
//! by renaming the crate (`mpi = { package = "oxmpi", ... }`) and run through our
//! mpiexec on 2, 3 and 4 ranks.
//!
//! The examples ship in the `mpi` 0.8 package on crates.io. At test time this finds the
//! package in cargo's registry cache (fetching it with `cargo fetch` from a throwaway
//! crate when missing), copies the examples into a temporary crate — nothing of rsmpi
//! is kept in this repository — builds them all with one `cargo build --keep-going`
//! and runs each one that built. The full table is printed; the test fails when an
//! example of `EXPECTED_TO_PASS` does not build or does not pass on every size, and
//! when an example of `KNOWN_FAILURES` passes (the list must shrink with the fixes).
//!
//! Without network access the test prints SKIP and passes, except under CI (`CI` set),
//! where it fails. `OXMPI_RSMPI_EXAMPLES_TABLE=path` also writes the table (markdown)
//! to `path`.
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The rsmpi release whose examples are run.
const RSMPI_VERSION: &str = "0.8.2";

/// Examples that must build and pass on 2, 3 and 4 ranks.
const EXPECTED_TO_PASS: &[&str] = &[
    "all_gather",
    "all_gather_bool",
    "all_gather_varcount",
    "all_to_all",
    "attributes",
    "barrier",
    "broadcast",
    "buffered",
    "cartesian",
    "cartesian_map",
    "comm_name",
    "complex_datatype",
    "complex_numbers",
    "contiguous",
    "datatype_dup",
    "derive_multiple_thread_init",
    "derive_nonthreaded_panic",
    "derive_postfinalize_panic",
    "derive_preinit_panic",
    "duplicate",
    "dyn_communicator",
    "env_inq",
    "gather",
    "gather_varcount",
    "group",
    "immediate",
    "immediate_all_gather",
    "immediate_all_gather_varcount",
    "immediate_all_to_all",
    "immediate_barrier",
    "immediate_broadcast",
    "immediate_gather",
    "immediate_gather_varcount",
    "immediate_multiple_barrier",
    "immediate_multiple_requests",
    "immediate_multiple_test",
    "immediate_reduce",
    "immediate_scan",
    "immediate_scatter",
    "immediate_scatter_varcount",
    "init_with_threading",
    "pack",
    "readme",
    "ready_send",
    "reduce",
    "scan",
    "scatter",
    "scatter_varcount",
    "send_receive",
    "simple",
    "spawn",
    "spawn_multiple",
    "split",
    "struct",
    "structured",
    "time",
    "vector",
    "wait_any",
];

/// The examples that do not pass, and why. A known failure that starts passing fails the
/// test (so that this list cannot go stale): move it to `EXPECTED_TO_PASS`.
const KNOWN_FAILURES: &[(&str, &str)] = &[];

const SIZES: [usize; 3] = [2, 3, 4];

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo"))
}

/// `~/.cargo/registry/src/*/mpi-<RSMPI_VERSION>/examples`, if cargo has it.
fn find_examples() -> Option<PathBuf> {
    let src = cargo_home().join("registry").join("src");
    for index in std::fs::read_dir(src).ok()?.flatten() {
        let dir = index
            .path()
            .join(format!("mpi-{RSMPI_VERSION}"))
            .join("examples");
        if dir.join("simple.rs").exists() {
            return Some(dir);
        }
    }
    None
}

fn scratch_dir(what: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("oxmpi-rsmpi-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("src")).unwrap();
    d
}

/// Makes cargo download the `mpi` package (source only: nothing is built).
fn fetch() -> Result<(), String> {
    let dir = scratch_dir("fetch");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"rsmpi-fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n[workspace]\n\
             [dependencies]\nmpi = {{ version = \"={RSMPI_VERSION}\", default-features = false }}\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), "").unwrap();
    let out = Command::new(cargo())
        .arg("fetch")
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&dir);
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf()
}

/// target/<profile>/deps/<test> -> target
fn target_root() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf()
}

struct Built {
    /// example name -> executable
    exes: BTreeMap<String, PathBuf>,
    /// example name -> first compiler error
    errors: BTreeMap<String, String>,
}

/// Copies the examples into a temporary crate and builds them all.
fn build(examples: &Path, names: &[String]) -> Built {
    let dir = scratch_dir("examples");
    std::fs::create_dir_all(dir.join("examples")).unwrap();
    for n in names {
        std::fs::copy(
            examples.join(format!("{n}.rs")),
            dir.join("examples").join(format!("{n}.rs")),
        )
        .unwrap();
    }
    let oxmpi = repo_root().join("crates").join("oxmpi");
    // rsmpi's examples test its default feature `user-operations` and the `msmpi` cfg;
    // the crate declares both so `#![deny(warnings)]` accepts them. They are built with
    // the features rsmpi users request (`derive`, `complex`) and, as in rsmpi's own
    // package, with `num-complex` at hand.
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"rsmpi-examples\"\nversion = \"0.0.0\"\nedition = \"2021\"\n[workspace]\n\
             [features]\ndefault = [\"user-operations\"]\nuser-operations = []\n\
             [lints.rust]\nunexpected_cfgs = {{ level = \"warn\", check-cfg = ['cfg(msmpi)'] }}\n\
             [dependencies]\nmpi = {{ package = \"oxmpi\", path = {:?}, features = [\"derive\", \"complex\"] }}\n\
             num-complex = \"0.4\"\n",
            oxmpi.to_string_lossy()
        ),
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), "").unwrap();
    // Our lock file pins oxmpi's dependencies (cargo drops what it does not need).
    let _ = std::fs::copy(repo_root().join("Cargo.lock"), dir.join("Cargo.lock"));
    let target = target_root().join("rsmpi-examples");
    let out = Command::new(cargo())
        .args([
            "build",
            "--examples",
            "--keep-going",
            "--message-format=json-diagnostic-short",
        ])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output()
        .expect("cannot run cargo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut exes = BTreeMap::new();
    let mut errors = BTreeMap::new();
    for line in stdout.lines() {
        let target_name = field(line, "\"target\":{").and_then(|t| field_str(t, "\"name\":\""));
        let Some(name) = target_name else { continue };
        if line.contains("\"reason\":\"compiler-artifact\"") {
            if let Some(exe) = field_str(line, "\"executable\":\"") {
                exes.insert(name, PathBuf::from(exe));
            }
        } else if line.contains("\"reason\":\"compiler-message\"")
            && line.contains("\"level\":\"error\"")
        {
            if let Some(msg) = field_str(line, "\"rendered\":\"") {
                errors.entry(name).or_insert(msg.trim().replace("\\n", " "));
            }
        }
    }
    if exes.is_empty() {
        panic!(
            "building the rsmpi examples built nothing\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Built { exes, errors }
}

/// The rest of `s` after `key`.
fn field<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    s.find(key).map(|i| &s[i + key.len()..])
}

/// The JSON string value after `key` (which ends with the opening quote).
fn field_str(s: &str, key: &str) -> Option<String> {
    let rest = field(s, key)?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push_str("\\n"),
                c => out.push(c),
            },
            c => out.push(c),
        }
    }
    None
}

/// Runs `exe` on `n` ranks with a time limit; `Ok` or the reason it failed.
fn run(exe: &Path, n: usize) -> Result<(), String> {
    let errfile = std::env::temp_dir().join(format!("oxmpi-rsmpi-run-{}.err", std::process::id()));
    let mut c = Command::new(common::mpiexec());
    c.arg("-n").arg(n.to_string()).arg(exe);
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&errfile).unwrap());
    let mut child = c.spawn().expect("cannot start mpiexec");
    let start = Instant::now();
    let limit = Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let err = std::fs::read_to_string(&errfile).unwrap_or_default();
            let _ = std::fs::remove_file(&errfile);
            if status.success() {
                return Ok(());
            }
            let why = err
                .lines()
                .find(|l| {
                    l.contains("panicked")
                        || l.contains("fatal MPI error")
                        || l.contains("MPI_Abort")
                })
                .or_else(|| err.lines().next())
                .unwrap_or("")
                .to_string();
            return Err(format!("{status}: {why}"));
        }
        if start.elapsed() > limit {
            // The mpiexec we started ends its ranks.
            oxmpi_tests::signal(child.id(), "TERM");
            let _ = child.wait();
            return Err(format!("timed out after {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn rsmpi_examples_build_and_run() {
    let examples = match find_examples() {
        Some(d) => d,
        None => {
            match fetch().ok().and_then(|_| find_examples()) {
                Some(d) => d,
                None => {
                    let why = format!("cannot get the examples of rsmpi (crate `mpi` {RSMPI_VERSION}) from crates.io");
                    if std::env::var_os("CI").is_some() {
                        panic!("{why}");
                    }
                    println!("SKIP: {why}");
                    return;
                }
            }
        }
    };
    let mut names: Vec<String> = std::fs::read_dir(&examples)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_string_lossy()
                .strip_suffix(".rs")
                .map(str::to_string)
        })
        .collect();
    names.sort();
    let built = build(&examples, &names);

    let mut table = String::from(
        "| example | builds | 2 ranks | 3 ranks | 4 ranks | notes |\n|---|---|---|---|---|---|\n",
    );
    let mut failures = Vec::new();
    for name in &names {
        let expected = EXPECTED_TO_PASS.contains(&name.as_str());
        let note = KNOWN_FAILURES
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, why)| why);
        let mut row = format!("| {name} |");
        let mut passed_everywhere = false;
        match built.exes.get(name) {
            None => {
                let err = built.errors.get(name).cloned().unwrap_or_default();
                row += " no | – | – | – |";
                if expected {
                    failures.push(format!("{name}: does not build: {err}"));
                }
                println!("{name}: build error: {err}");
            }
            Some(exe) => {
                row += " yes |";
                passed_everywhere = true;
                for n in SIZES {
                    match run(exe, n) {
                        Ok(()) => row += " pass |",
                        Err(why) => {
                            passed_everywhere = false;
                            row += " FAIL |";
                            println!("{name} on {n} ranks: {why}");
                            if expected {
                                failures.push(format!("{name} on {n} ranks: {why}"));
                            }
                        }
                    }
                }
            }
        }
        if passed_everywhere && !expected {
            failures.push(format!(
                "{name}: listed as a known failure but builds and passes on every size: move it to EXPECTED_TO_PASS"
            ));
        }
        row += &format!(" {note} |\n");
        table += &row;
    }
    println!("\nrsmpi {RSMPI_VERSION} examples against oxmpi:\n\n{table}");
    if let Some(path) = std::env::var_os("OXMPI_RSMPI_EXAMPLES_TABLE") {
        std::fs::write(path, &table).unwrap();
    }
    let unexpected: Vec<&String> = names
        .iter()
        .filter(|n| {
            !EXPECTED_TO_PASS.contains(&n.as_str()) && !KNOWN_FAILURES.iter().any(|(k, _)| k == n)
        })
        .collect();
    if !unexpected.is_empty() {
        failures.push(format!(
            "examples in neither list (new in this rsmpi release?): {unexpected:?}"
        ));
    }
    for (k, _) in KNOWN_FAILURES {
        if EXPECTED_TO_PASS.contains(k) {
            failures.push(format!(
                "{k} is listed both as expected to pass and as a known failure"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "rsmpi examples expected to pass did not:\n{}",
        failures.join("\n")
    );
}
