//! MPICH 4.0.2's own test suite (`test/mpi` of Debian bookworm's `mpich`
//! source package) built with our `mpicc`/`mpifort` and run with our
//! `mpiexec` by the suite's `runtests` script: about a thousand programs
//! written against the MPI standard by another implementation's authors.
//!
//! The source is fetched at test time with `apt-get source --download-only
//! mpich` into `target/mpich-suite/src/` (kept for later runs), or taken
//! from the tarball named by `OXMPI_MPICH_TARBALL`. Only `test/mpi` is
//! unpacked; it is configured once per toolchain (again when a header or a
//! compiler wrapper changes) with `--disable-cxx --enable-strictmpi`, and the
//! selected directories are built by one `make -j2` up front.
//!
//! One test per suite directory, so that a failure names its area; each
//! asserts that every program of its directory builds and passes, except
//! those listed in `tests/mpich_suite/not_applicable.txt`: programs that no
//! standard-ABI MPI can build (a `switch` over handle values, which are
//! pointers there; MPICH-only `MPIX_`/`QMPI_` names). A listed program is
//! excused only if it fails to build and every error of its build is of the
//! listed kind, so an ordinary compile failure of ours still fails the test.
//!
//! Environment: `OXMPI_MPICH_SUITE_DIRS` (comma-separated) limits the
//! directories built and run (the others' tests pass with a note);
//! `MPITEST_TIMEOUT` (default 180 s: the tests use the debug build of the library) is each program's time limit (some
//! testlist lines set their own); `OXMPI_MPICH_SUITE_LISTS` (default
//! `testlist`; MPICH's `make testing` uses `testlist,testlist.dtp,testlist.cvar`)
//! the list files read in each directory;
//! `OXMPI_MPICH_SUITE_JOBS` (default 1) how many directories run at once.
//! Each directory's summary is printed and written to
//! `target/mpich-suite/summary/<dir>.txt`; the TAP files are beside it.
//! Outside CI a missing tool or an unreachable package skips the tests; with
//! `CI` set they fail.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

mod common;
use common::{debian_orig_tarball, fnv, in_ci, lay_out, sh_logged, target_dir, wait_with_watchdog};

/// The suite directories, each run by its own test below.
const DIRS: &[&str] = &[
    "attr", "coll", "comm", "datatype", "errhan", "group", "info", "init", "io", "mpi_t", "part",
    "pt2pt", "rma", "spawn", "threads", "topo", "errors", "f77", "f90", "f08",
];

fn prefix() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| lay_out("oxmpi-capi-test"))
}

fn root() -> PathBuf {
    target_dir().join("mpich-suite")
}

/// The directories `OXMPI_MPICH_SUITE_DIRS` selects (all when unset).
fn selected() -> &'static Vec<&'static str> {
    static S: OnceLock<Vec<&'static str>> = OnceLock::new();
    S.get_or_init(|| match std::env::var("OXMPI_MPICH_SUITE_DIRS") {
        Ok(v) if !v.trim().is_empty() => v
            .split([',', ' '])
            .filter(|d| !d.is_empty())
            .map(|d| {
                *DIRS.iter().find(|k| **k == d).unwrap_or_else(|| {
                    panic!("OXMPI_MPICH_SUITE_DIRS names `{d}`, not one of {DIRS:?}")
                })
            })
            .collect(),
        _ => DIRS.to_vec(),
    })
}

enum Setup {
    /// The configured and built `test/mpi` tree.
    Ready(PathBuf),
    /// A tool or the source is missing: skip outside CI, fail on CI.
    Unavailable(String),
    /// Setting up failed (configure, the support libraries): every test fails.
    Broken(String),
}

/// Fetches, configures and builds the suite once per test binary.
fn setup() -> &'static Setup {
    static S: OnceLock<Setup> = OnceLock::new();
    S.get_or_init(|| {
        // runtests needs the full perl (perl-base lacks File::Copy and Time::HiRes).
        let probes: [(&str, &[&str]); 5] = [
            ("make", &["--version"]),
            ("tar", &["--version"]),
            ("xz", &["--version"]),
            ("gfortran", &["--version"]),
            ("perl", &["-MFile::Copy", "-MTime::HiRes", "-e", "1"]),
        ];
        for (tool, args) in probes {
            if !Command::new(tool)
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
            {
                return Setup::Unavailable(format!("`{tool}` is missing (.ci/run installs it)"));
            }
        }
        let root = root();
        std::fs::create_dir_all(&root).unwrap();
        let tar = match std::env::var_os("OXMPI_MPICH_TARBALL") {
            Some(t) => PathBuf::from(t),
            None => match debian_orig_tarball(&root, "mpich") {
                Ok(t) => t,
                Err(why) => return Setup::Unavailable(why),
            },
        };
        let t = Instant::now();
        let s = match configure(&root, &tar) {
            Ok(tree) => build(&root, tree),
            Err(e) => Setup::Broken(e),
        };
        eprintln!(
            "mpich suite: configured and built {:?} in {:.0} s",
            selected(),
            t.elapsed().as_secs_f64()
        );
        s
    })
}

/// The suite's configure options besides the compilers. Unoptimised builds:
/// they halve the build's time, and the programs test the library, not
/// themselves (configure adds `-fcray-pointer` to the Fortran flags).
const CONFIGURE_FLAGS: &[&str] = &[
    "--disable-cxx",
    "--enable-strictmpi",
    "CFLAGS=-O0",
    "FFLAGS=-O0",
    "FCFLAGS=-O0",
];

/// What the configured tree depends on: the toolchain's headers and Fortran
/// modules, its compiler wrappers, and the tarball.
fn stamp(tar: &Path) -> String {
    let mut h = 0u64;
    let mut files: Vec<PathBuf> = Vec::new();
    for d in ["include", "lib"] {
        if let Ok(rd) = std::fs::read_dir(prefix().join(d)) {
            files.extend(
                rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| {
                    p.is_file() && !p.extension().is_some_and(|x| x == "so" || x == "a")
                }),
            );
        }
    }
    for w in ["mpicc", "mpifort", "mpif77", "mpif90"] {
        files.push(prefix().join("bin").join(w));
    }
    files.sort();
    for f in &files {
        h ^= fnv(f.to_string_lossy().as_bytes()).rotate_left(7)
            ^ fnv(&std::fs::read(f).unwrap_or_default());
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("v1 {h:x} {} {CONFIGURE_FLAGS:?}\n", tar.display())
}

/// Unpacks `test/mpi` and configures it with our compiler wrappers (kept
/// when the stamp says nothing changed); returns the tree.
fn configure(root: &Path, tar: &Path) -> Result<PathBuf, String> {
    let bdir = root.join("build");
    let tree_of = || -> Option<PathBuf> {
        std::fs::read_dir(&bdir)
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("test/mpi"))
            .find(|p| p.join("configure").exists())
    };
    let want = stamp(tar);
    let stamp_file = root.join("configured.stamp");
    if std::fs::read_to_string(&stamp_file).ok().as_deref() == Some(want.as_str()) {
        if let Some(t) =
            tree_of().filter(|t| t.join("runtests").exists() && t.join("Makefile").exists())
        {
            return Ok(t);
        }
    }
    let _ = std::fs::remove_file(&stamp_file);
    let _ = std::fs::remove_dir_all(&bdir);
    std::fs::create_dir_all(&bdir).unwrap();
    let log = root.join("tar.log");
    let ok = sh_logged(
        Command::new("tar")
            .arg("xf")
            .arg(tar)
            .arg("-C")
            .arg(&bdir)
            .args(["--wildcards", "mpich-*/test/mpi"]),
        "tar",
        &log,
    );
    if !ok {
        return Err(format!(
            "unpacking test/mpi from {} failed: see {}",
            tar.display(),
            log.display()
        ));
    }
    let tree = tree_of().ok_or_else(|| format!("{} holds no mpich-*/test/mpi", tar.display()))?;
    let bin = prefix().join("bin");
    let w = |n: &str| format!("{}", bin.join(n).display());
    let log = root.join("configure.log");
    let ok = sh_logged(
        Command::new("./configure")
            .current_dir(&tree)
            .env("PATH", path_env())
            .arg(format!("CC={}", w("mpicc")))
            .arg(format!("FC={}", w("mpifort")))
            .arg(format!("F77={}", w("mpif77")))
            .arg(format!("MPICC={}", w("mpicc")))
            .arg(format!("MPIFC={}", w("mpifort")))
            .args(CONFIGURE_FLAGS),
        "configure",
        &log,
    );
    if !ok {
        return Err(format!(
            "the suite's configure with our mpicc/mpifort failed: see {}",
            log.display()
        ));
    }
    // Run outside MPICH's own tree, configure leaves the f08 test library
    // (libmtest_f08) out of util/Makefile (it enables it only `FROM_MPICH`),
    // so no f08 program could link. Turn its automake lines back on.
    let mk = tree.join("util/Makefile");
    let text =
        std::fs::read_to_string(&mk).map_err(|e| format!("reading {}: {e}", mk.display()))?;
    let keys = [
        "am__append_4 =",
        "am_libmtest_f08_la_OBJECTS =",
        "am_libmtest_f08_la_rpath =",
        "libmtest_f08_la_SOURCES =",
    ];
    let text: String = text
        .lines()
        .map(|l| match l.strip_prefix('#') {
            Some(rest) if keys.iter().any(|k| rest.starts_with(k)) => format!("{rest}\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&mk, text).unwrap();
    std::fs::write(&stamp_file, want).unwrap();
    Ok(tree)
}

/// `PATH` with our toolchain first (the suite's Makefiles and `runtests`
/// call the wrappers and `make` by name).
fn path_env() -> std::ffi::OsString {
    let mut p = std::ffi::OsString::from(prefix().join("bin"));
    if let Some(old) = std::env::var_os("PATH") {
        p.push(":");
        p.push(old);
    }
    p
}

/// Builds the test library and then the selected directories, sharing two
/// job slots across directories (one `make -j2` over a small driver
/// makefile). A program that fails to build is reported by `runtests`,
/// which tries to make it again and records the compiler's output.
fn build(root: &Path, tree: PathBuf) -> Setup {
    let dirs = selected().join(" ");
    let driver = format!(
        "DIRS = {dirs}\n\
         all: $(DIRS)\n\
         libs:\n\t$(MAKE) -C util\n\t$(MAKE) -C util libmtest_f08.la\n\t$(MAKE) -C dtpools\n\
         $(DIRS): libs\n\t-$(MAKE) -k -C $@\n\
         .PHONY: all libs $(DIRS)\n"
    );
    let mk = root.join("driver.mk");
    std::fs::write(&mk, driver).unwrap();
    let log = root.join("make.log");
    let t = Instant::now();
    let ok = sh_logged(
        Command::new("make")
            .arg("-j2")
            .arg("-f")
            .arg(&mk)
            .current_dir(&tree)
            .env("PATH", path_env()),
        "make",
        &log,
    );
    eprintln!(
        "mpich suite: make took {:.0} s (log: {})",
        t.elapsed().as_secs_f64(),
        log.display()
    );
    if !ok {
        return Setup::Broken(format!(
            "building the suite's support libraries (util, dtpools) with our mpicc failed: see {}",
            log.display()
        ));
    }
    Setup::Ready(tree)
}

/// At most `OXMPI_MPICH_SUITE_JOBS` directories run at once.
struct Slots {
    free: Mutex<usize>,
    cv: Condvar,
}

fn slots() -> &'static Slots {
    static S: OnceLock<Slots> = OnceLock::new();
    S.get_or_init(|| {
        let n = std::env::var("OXMPI_MPICH_SUITE_JOBS")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or(1);
        Slots {
            free: Mutex::new(n),
            cv: Condvar::new(),
        }
    })
}

struct Slot;

fn take_slot() -> Slot {
    let s = slots();
    let mut free = s.free.lock().unwrap_or_else(|e| e.into_inner());
    while *free == 0 {
        free = s.cv.wait(free).unwrap_or_else(|e| e.into_inner());
    }
    *free -= 1;
    Slot
}

impl Drop for Slot {
    fn drop(&mut self) {
        let s = slots();
        *s.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        s.cv.notify_one();
    }
}

/// Why a program is not applicable to a standard-ABI MPI, and the build
/// errors that show it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// `switch` over handle values: handles are pointers in the standard ABI.
    HandleSwitch,
    /// MPICH's `MPIX_` extensions.
    Mpix,
    /// MPICH's QMPI tool interface.
    Qmpi,
}

impl Kind {
    fn parse(s: &str) -> Option<Kind> {
        match s {
            "handle-switch" => Some(Kind::HandleSwitch),
            "mpix" => Some(Kind::Mpix),
            "qmpi" => Some(Kind::Qmpi),
            _ => None,
        }
    }

    /// Whether one error line of a build is of this kind.
    fn explains(self, line: &str) -> bool {
        match self {
            Kind::HandleSwitch => {
                line.contains("switch quantity not an integer")
                    || line.contains("pointers are not permitted as case values")
                    || line.contains("case label does not reduce to an integer constant")
            }
            Kind::Mpix => line.to_ascii_uppercase().contains("MPIX_"),
            // QMPI_ types and functions; the function indices QMPI names
            // `MPI_<CALL>_T`; and, cascading from those, the undeclared tool
            // callbacks whose prototypes take a QMPI_Context (`Test_Send`, ...).
            Kind::Qmpi => {
                line.contains("QMPI_")
                    || undeclared(line).is_some_and(|id| {
                        (id.starts_with("MPI_") && id.ends_with("_T")) || id.starts_with("Test_")
                    })
            }
        }
    }
}

/// The identifier of a gcc "‘X’ undeclared" error.
fn undeclared(line: &str) -> Option<&str> {
    let rest = line.split("error: ").nth(1)?;
    let id = rest.strip_prefix('‘').or_else(|| rest.strip_prefix('\''))?;
    let end = id.find(['’', '\''])?;
    id[end..].contains("undeclared").then_some(&id[..end])
}

/// A listed program: why it is listed (its kind) and the reason in words.
struct Listed<K> {
    kind: K,
    reason: String,
}

/// Reads one of the lists beside this test (`tests/mpich_suite/<name>`): one
/// program a line, `<dir>/<program> <kind> <reason>`; `#` starts a comment.
/// `kinds` names the valid kinds for the error message.
fn read_list<K>(
    name: &str,
    parse: fn(&str) -> Option<K>,
    kinds: &str,
) -> BTreeMap<String, Listed<K>> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mpich_suite")
        .join(name);
    let text = std::fs::read_to_string(&file).unwrap();
    let mut m = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (prog, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let (kind, reason) = rest
            .trim_start()
            .split_once(char::is_whitespace)
            .unwrap_or((rest.trim_start(), ""));
        let reason = reason.trim();
        let kind = parse(kind).unwrap_or_else(|| {
            panic!(
                "{}:{}: unknown kind `{kind}` ({kinds})",
                file.display(),
                i + 1
            )
        });
        assert!(
            !reason.is_empty(),
            "{}:{}: `{prog}` needs a reason",
            file.display(),
            i + 1
        );
        m.insert(
            prog.to_string(),
            Listed {
                kind,
                reason: reason.to_string(),
            },
        );
    }
    m
}

/// `tests/mpich_suite/not_applicable.txt`: programs no standard-ABI MPI can build.
fn not_applicable() -> BTreeMap<String, Listed<Kind>> {
    read_list(
        "not_applicable.txt",
        Kind::parse,
        "handle-switch, mpix, qmpi",
    )
}

/// Why a program that builds and runs is expected to fail against any
/// standard-ABI MPI, or against the standard where MPICH departs from it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Difference {
    /// The program relies on MPICH's own ABI at run time (handles kept in `int`s,
    /// two handle kinds compared as equal, a freed handle's value reused).
    MpichAbi,
    /// The program checks MPICH's choice where the standard leaves it open or
    /// says otherwise.
    MpichBehaviour,
    /// The program checks for an error whose detection the standard makes optional.
    OptionalCheck,
    /// The program's own defect (it cannot pass against a conforming MPI).
    TestDefect,
    /// oxmpi's own gap, still to be fixed: listed so that the rest of the suite
    /// keeps guarding against regressions meanwhile (a to-do list, not an excuse).
    OxmpiGap,
}

impl Difference {
    fn parse(s: &str) -> Option<Difference> {
        Some(match s {
            "mpich-abi" => Difference::MpichAbi,
            "mpich-behaviour" => Difference::MpichBehaviour,
            "optional-check" => Difference::OptionalCheck,
            "test-defect" => Difference::TestDefect,
            "oxmpi-gap" => Difference::OxmpiGap,
            _ => return None,
        })
    }
}

/// `tests/mpich_suite/differences.txt`: programs that run and fail for a listed reason.
fn differences() -> BTreeMap<String, Listed<Difference>> {
    read_list(
        "differences.txt",
        Difference::parse,
        "mpich-abi, mpich-behaviour, optional-check, test-defect, oxmpi-gap",
    )
}

/// The error lines of a failed build (compiler and linker diagnostics; the
/// generic closing lines of `collect2` and `make` are not errors of their own).
fn build_errors(output: &[String]) -> Vec<&str> {
    output
        .iter()
        .map(|l| l.as_str())
        .filter(|l| {
            (l.contains("error:") || l.contains("Error:") || l.contains("undefined reference to"))
                && !l.contains("ld returned 1 exit status")
        })
        .collect()
}

/// One program run (one line of a TAP file).
struct Outcome {
    /// `<dir>/<path>` as in not_applicable.txt.
    name: String,
    np: String,
    ok: bool,
    skip: bool,
    todo: Option<String>,
    output: Vec<String>,
}

fn parse_tap(dir: &str, tap: &str) -> Vec<Outcome> {
    let mut v: Vec<Outcome> = Vec::new();
    for line in tap.lines() {
        let (ok, rest) = if let Some(r) = line.strip_prefix("not ok") {
            (false, r)
        } else if let Some(r) = line.strip_prefix("ok") {
            (true, r)
        } else {
            if let (Some(o), Some(l)) = (v.last_mut(), line.strip_prefix("## ")) {
                if !o.ok && !l.starts_with("Test output (expected") {
                    o.output.push(l.to_string());
                }
            }
            continue;
        };
        // ` 12 - ./sub/prog 4 # TODO ticket # time=0.1` (build failures have no np)
        let rest = rest
            .trim_start()
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start();
        let Some(rest) = rest.strip_prefix("- ") else {
            continue;
        };
        let (head, comment) = rest
            .split_once('#')
            .map(|(a, b)| (a, Some(b)))
            .unwrap_or((rest, None));
        let mut w = head.split_whitespace();
        let path = w.next().unwrap_or("").trim_start_matches("./");
        let np = w.next().unwrap_or("").to_string();
        let skip = comment.is_some_and(|c| c.trim_start().starts_with("SKIP"));
        let todo = rest
            .split(" # ")
            .find_map(|c| c.strip_prefix("TODO "))
            .map(|s| s.trim().to_string());
        v.push(Outcome {
            name: format!("{dir}/{path}"),
            np,
            ok,
            skip,
            todo,
            output: Vec::new(),
        });
    }
    v
}

/// Runs one suite directory and asserts that all its programs pass.
fn run_dir(dir: &str) {
    if !selected().contains(&dir) {
        eprintln!("mpich suite {dir}: not selected by OXMPI_MPICH_SUITE_DIRS");
        return;
    }
    let na = not_applicable();
    let known = differences();
    let tree = match setup() {
        Setup::Ready(t) => t,
        Setup::Unavailable(why) => {
            assert!(!in_ci(), "the MPICH test suite cannot run on CI: {why}");
            eprintln!("skipping the MPICH test suite: {why}");
            return;
        }
        Setup::Broken(e) => panic!("{e}"),
    };
    let out_dir = root().join("summary");
    std::fs::create_dir_all(&out_dir).unwrap();
    let tap_file = out_dir.join(format!("{dir}.tap"));
    let _ = std::fs::remove_file(&tap_file);
    let log = out_dir.join(format!("{dir}.runtests.log"));
    let timeout = std::env::var("MPITEST_TIMEOUT").unwrap_or_else(|_| "180".to_string());
    // MPICH's `make testing` also reads testlist.dtp (more datatypes for the
    // same programs) and testlist.cvar (MPICH's algorithm switches).
    let lists = std::env::var("OXMPI_MPICH_SUITE_LISTS").unwrap_or_else(|_| "testlist".to_string());
    let slot = take_slot();
    let t = Instant::now();
    // Each program has its time limit (mpiexec enforces MPITEST_TIMEOUT);
    // the watchdog only guards against runtests itself never ending.
    let f = std::fs::File::create(&log).unwrap();
    let child = Command::new("perl")
        .arg(tree.join("runtests"))
        .arg("-srcdir=.")
        .arg(format!("-tests={lists}"))
        .arg(format!(
            "-mpiexec={}",
            prefix().join("bin/mpiexec").display()
        ))
        .arg(format!("-tapfile={}", tap_file.display()))
        .arg("-xmlfile=/dev/null")
        .current_dir(tree.join(dir))
        .env("PATH", path_env())
        .env("MPITEST_TIMEOUT", &timeout)
        .stdin(Stdio::null())
        .stdout(f.try_clone().unwrap())
        .stderr(f)
        .spawn()
        .expect("starting the suite's runtests with perl");
    wait_with_watchdog(child, Duration::from_secs(3600));
    let secs = t.elapsed().as_secs_f64();
    drop(slot);
    let tap = std::fs::read_to_string(&tap_file).unwrap_or_default();
    assert!(
        tap.lines().any(|l| l.starts_with("1..")),
        "mpich suite {dir}: runtests ended without its TAP plan line (see {} and {})",
        log.display(),
        tap_file.display()
    );
    let ran = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !ran.contains("Terminating test"),
        "mpich suite {dir}: runtests stopped early ({}), see {}",
        ran.lines()
            .find(|l| l.contains("Terminating test"))
            .unwrap_or(""),
        log.display()
    );
    let outcomes = parse_tap(dir, &tap);

    let (mut passed, mut skipped) = (0, 0);
    let mut excused: Vec<String> = Vec::new();
    let mut differing: Vec<String> = Vec::new();
    let mut now_pass: Vec<String> = Vec::new();
    let mut failed: Vec<&Outcome> = Vec::new();
    for o in &outcomes {
        if o.skip {
            skipped += 1;
        } else if o.ok {
            passed += 1;
            if known.contains_key(&o.name) {
                now_pass.push(format!("{} on {} ranks", o.name, o.np));
            }
        } else if let Some(k) = known.get(&o.name).filter(|k| {
            !o.np.is_empty() || matches!(k.kind, Difference::TestDefect | Difference::OxmpiGap)
        }) {
            // Listed, and it was built and ran (a build failure is excused only
            // as the test's own defect or as a gap of ours on the to-do list).
            differing.push(format!(
                "{} on {} ranks ({:?}: {})",
                o.name, o.np, k.kind, k.reason
            ));
        } else if let Some(n) = na.get(&o.name) {
            let errs = build_errors(&o.output);
            let built = !o
                .output
                .first()
                .is_some_and(|l| l.starts_with("Failed to build"));
            if !built && !errs.is_empty() && errs.iter().all(|e| n.kind.explains(e)) {
                excused.push(format!("{} ({:?}: {})", o.name, n.kind, n.reason));
            } else {
                failed.push(o);
            }
        } else {
            failed.push(o);
        }
    }
    // A listed program the suite no longer has is a stale entry.
    let stale: Vec<&String> = na
        .keys()
        .chain(known.keys())
        .filter(|k| k.starts_with(&format!("{dir}/")) && !outcomes.iter().any(|o| &o.name == *k))
        .collect();

    let mut s = String::new();
    let _ = writeln!(
        s,
        "mpich suite {dir}: {passed} passed, {} failed, {} not applicable, {} documented differences, {skipped} skipped ({} runs, {secs:.0} s)",
        failed.len(),
        excused.len(),
        differing.len(),
        outcomes.len()
    );
    for o in &failed {
        let todo = o
            .todo
            .as_ref()
            .map(|t| format!(" [MPICH marks it xfail: {t}]"))
            .unwrap_or_default();
        let np = if o.np.is_empty() {
            String::new()
        } else {
            format!(" on {} ranks", o.np)
        };
        let _ = writeln!(s, "  FAIL {}{np}{todo}", o.name);
        for l in o.output.iter().filter(|l| !l.trim().is_empty()).take(6) {
            let l: String = l.chars().take(200).collect();
            let _ = writeln!(s, "      {l}");
        }
    }
    for e in &excused {
        let _ = writeln!(s, "  n/a  {e}");
    }
    for d in &differing {
        let _ = writeln!(s, "  differs {d}");
    }
    for p in &now_pass {
        let _ = writeln!(s, "  NOTE {p} passed although differences.txt lists it (remove it there if it keeps passing)");
    }
    for k in &stale {
        let _ = writeln!(s, "  STALE {k} is listed in not_applicable.txt or differences.txt but the suite did not run it");
    }
    let _ = writeln!(s, "  (TAP: {})", tap_file.display());
    std::fs::write(out_dir.join(format!("{dir}.txt")), &s).unwrap();
    eprint!("{s}");
    assert!(
        failed.is_empty() && stale.is_empty() && !outcomes.is_empty(),
        "{s}"
    );
}

macro_rules! suite_dirs {
    ($($f:ident => $d:literal,)*) => {
        $(
            #[test]
            fn $f() {
                run_dir($d);
            }
        )*
        #[test]
        fn every_suite_directory_has_a_test() {
            let have = [$($d),*];
            assert_eq!(have.as_slice(), DIRS);
        }
    };
}

suite_dirs! {
    attr => "attr",
    coll => "coll",
    comm => "comm",
    datatype => "datatype",
    errhan => "errhan",
    group => "group",
    info => "info",
    init => "init",
    io => "io",
    mpi_t => "mpi_t",
    part => "part",
    pt2pt => "pt2pt",
    rma => "rma",
    spawn => "spawn",
    threads => "threads",
    topo => "topo",
    errors => "errors",
    f77 => "f77",
    f90 => "f90",
    f08 => "f08",
}

#[test]
fn tap_lines_and_build_errors_are_read() {
    let tap = "TAP version 13\nok  - ./attrt 2 # time=0.1\nnot ok  - ./sub/prog 4 # TODO ticket1 # time=0.2\n  ---\n  File: prog\n  ...\n## Test output (expected 'No Errors'):\n## Found 1 errors\nok  - ./skipped 2  # SKIP needs MPI 5\nnot ok  - ./sub/bad  # time=\n## Failed to build bad;   CC       bad.o\n## bad.c:3:9: error: pointers are not permitted as case values\n## collect2: error: ld returned 1 exit status\n1..4\n";
    let v = parse_tap("d", tap);
    assert_eq!(v.len(), 4);
    assert!(v[0].ok && v[0].name == "d/attrt" && v[0].np == "2");
    assert!(
        !v[1].ok
            && v[1].name == "d/sub/prog"
            && v[1].todo.as_deref() == Some("ticket1")
            && v[1].output == ["Found 1 errors"]
    );
    assert!(v[2].skip);
    assert!(!v[3].ok && v[3].np.is_empty() && v[3].output.len() == 3);
    let errs = build_errors(&v[3].output);
    assert_eq!(errs.len(), 1);
    assert!(Kind::HandleSwitch.explains(errs[0]) && !Kind::Mpix.explains(errs[0]));
    assert!(Kind::Qmpi
        .explains("q.c:55:37: error: ‘MPI_INIT_THREAD_T’ undeclared (first use in this function)"));
    assert!(Kind::Qmpi
        .explains("q.c:57:67: error: ‘Test_Recv’ undeclared (first use in this function)"));
    assert!(!Kind::Qmpi
        .explains("q.c:57:67: error: ‘MPI_Recv_c’ undeclared (first use in this function)"));
    assert!(!Kind::Qmpi.explains("q.c:9:1: error: expected ‘;’ before ‘MPI_SEND_T’"));
}

/// Both lists parse (a known kind and a reason on every line) and name
/// programs of the suite's directories, without building the suite.
#[test]
fn lists_parse_and_name_suite_directories() {
    let na = not_applicable();
    let known = differences();
    assert!(!na.is_empty() && !known.is_empty());
    for name in na.keys().chain(known.keys()) {
        let dir = name.split('/').next().unwrap();
        assert!(
            DIRS.contains(&dir),
            "{name}: `{dir}` is not a suite directory of this test"
        );
    }
    assert!(
        known.values().all(|k| !k.reason.is_empty()) && na.values().all(|n| !n.reason.is_empty())
    );
}
