//! mpi4py, the way most people use MPI from Python, as a client of the C ABI:
//! the latest 4.1.x sdist from PyPI built with a plain `pip install` against
//! our `mpicc` (no configure flags: `mpi.h` announces the MPI-5.0 standard ABI,
//! so mpi4py expects the whole MPI-5.0 function set), into a venv with numpy
//! (so the buffer tests run on NumPy arrays too), then mpi4py's own test suite
//! (`test/` of the sdist) run with our `mpiexec` on 1 and on 5 ranks. Any
//! failure, error, crash or hang fails this test.
//!
//! One kind of failure is retried: a test in [`RACY_WITHOUT_MPI`] (pure
//! Python thread-pool tests with 0.1 s sleeps, no MPI call in them) that
//! fails is run again alone, up to twice, on the same number of ranks, and
//! passes only if a rerun passes. Any other failure fails at once.
//!
//! Cached between runs under `target/mpi4py/`: the sdist, the venv with numpy,
//! and the built mpi4py (rebuilt when the laid-out `mpi.h` changes).
//!
//! Excluded, each for the reason given in [`EXCLUDED_MODULES`] and
//! [`EXCLUDED_TESTS`]: only the tests of chapters other issues add
//! (none today). `OXMPI_MPI4PY_EXCLUDE`
//! (comma-separated `-x` patterns) adds exclusions for local debugging; CI
//! never sets it.
//!
//! Without python3's venv/pip or network access to PyPI the test prints SKIP
//! and passes, unless the CI environment variable is set (then it fails:
//! `.ci/run` installs python3-venv and python3-dev).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The mpi4py releases this harness takes the newest of.
const MPI4PY: &str = "mpi4py>=4.1,<4.2";

/// Test modules (file names under `test/`) that need a chapter another issue adds.
const EXCLUDED_MODULES: &[(&str, &str)] = &[];

/// Single tests (`-x` patterns on the full test id) that need such a chapter.
const EXCLUDED_TESTS: &[(&str, &str)] = &[];

/// Test-id prefixes whose tests call no MPI function and race on the wall
/// clock: `TestThreadPool` drives `concurrent.futures.ThreadPoolExecutor`
/// with `time.sleep(0.1)` tasks, and e.g. `test_terminate` expects
/// `shutdown(cancel_futures=True)` to drain 100 queued tasks before the one
/// worker finishes its first 0.1 s sleep. On a 2-core CI machine running 5
/// ranks beside other test binaries, the draining thread can be off the CPU
/// that long (seen once in CI), so a failure here is retried (see
/// [`suite`]), never ignored.
const RACY_WITHOUT_MPI: &[&str] = &["test_util_pool.TestThreadPool."];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"))
}

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Skips (outside CI) or fails (in CI) for a missing tool or network.
fn unavailable(why: &str) {
    assert!(
        !in_ci(),
        "mpi4py test cannot run on CI: {why} (.ci/run should install python3-venv and python3-dev)"
    );
    eprintln!("SKIP mpi4py: {why}");
}

/// Runs a command to completion; its combined output on failure.
fn sh(c: &mut Command) -> Result<String, String> {
    let out = c
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{c:?}: {e}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!("{c:?} failed ({}):\n{text}", out.status))
    }
}

/// The toolchain, laid out (release build: the suite runs thousands of calls).
fn prefix() -> PathBuf {
    let p = target_dir().join("oxmpi-mpi4py");
    let st = Command::new(env!("CARGO"))
        .args(["run", "-q", "-p", "xtask", "--", "dist", "--prefix"])
        .arg(&p)
        .current_dir(workspace())
        .stdout(Stdio::null())
        .status()
        .expect("running cargo xtask dist");
    assert!(st.success(), "cargo xtask dist failed");
    p
}

/// The newest 4.1.x sdist, downloaded once, unpacked (its `test/` is the suite).
fn sdist(venv_pip: &Path, dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let dl = dir.join("dl");
    let find = || -> Option<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dl)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(".tar.gz"))
            .collect();
        v.sort();
        v.pop()
    };
    if find().is_none() {
        std::fs::create_dir_all(&dl).unwrap();
        sh(Command::new(venv_pip)
            .args([
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                MPI4PY,
                "-d",
            ])
            .arg(&dl))?;
    }
    let tarball = find().ok_or("pip download left no mpi4py sdist")?;
    let name = tarball
        .file_name()
        .unwrap()
        .to_string_lossy()
        .trim_end_matches(".tar.gz")
        .to_string();
    let src = dir.join(&name);
    if !src.join("test/main.py").exists() {
        sh(Command::new("tar")
            .arg("xzf")
            .arg(&tarball)
            .arg("-C")
            .arg(dir))?;
    }
    Ok((src, tarball))
}

/// A venv with numpy and mpi4py built against `prefix`'s mpicc (rebuilt when
/// the laid-out mpi.h changed since the last build).
fn venv(prefix: &Path, dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let venv = dir.join("venv");
    let py = venv.join("bin/python");
    let pip = venv.join("bin/pip");
    if !pip.exists() {
        sh(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
    }
    if sh(Command::new(&py).args(["-c", "import numpy"])).is_err() {
        sh(Command::new(&pip).args(["install", "-q", "numpy"]))?;
    }
    let (src, tarball) = sdist(&pip, dir)?;
    let header = std::fs::read(prefix.join("include/mpi.h")).map_err(|e| e.to_string())?;
    let stamp = format!("{}\n{:x}\n", src.display(), fnv(&header));
    let stamp_file = venv.join("oxmpi-mpi4py.stamp");
    let built = std::fs::read_to_string(&stamp_file).ok().as_deref() == Some(stamp.as_str());
    if !built || sh(Command::new(&py).args(["-c", "import mpi4py.MPI"])).is_err() {
        // A plain pip install: MPICC is how mpi4py's build finds an MPI.
        // --no-cache-dir: pip's wheel cache does not know which mpi.h a wheel saw.
        let t = Instant::now();
        sh(Command::new(&pip)
            .args([
                "install",
                "-q",
                "--no-cache-dir",
                "--force-reinstall",
                "--no-deps",
            ])
            .arg(&tarball)
            .env("MPICC", prefix.join("bin/mpicc")))
        .map_err(|e| format!("building mpi4py against oxmpi failed: {e}"))?;
        eprintln!(
            "mpi4py: built {} against oxmpi's mpicc in {:.0} s",
            src.file_name().unwrap().to_string_lossy(),
            t.elapsed().as_secs_f64()
        );
        std::fs::write(&stamp_file, stamp).unwrap();
    }
    Ok((py, src))
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// The suite's summary line numbers: (run, failures, errors, skipped).
fn counts(out: &str) -> Option<(u32, u32, u32, u32)> {
    let ran = out.lines().rev().find_map(|l| {
        l.strip_prefix("Ran ")?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    })?;
    let num = |key: &str| -> u32 {
        out.rfind(&format!("{key}="))
            .and_then(|i| {
                out[i + key.len() + 1..]
                    .split(|c: char| !c.is_ascii_digit())
                    .next()?
                    .parse()
                    .ok()
            })
            .unwrap_or(0)
    };
    Some((ran, num("failures"), num("errors"), num("skipped")))
}

/// How one `mpiexec` run of mpi4py's test runner ended.
struct Run {
    /// `None`: killed by the watchdog.
    status: Option<std::process::ExitStatus>,
    out: String,
    wall: f64,
}

impl Run {
    fn tail(&self) -> String {
        let lines: Vec<&str> = self.out.lines().collect();
        lines[lines.len().saturating_sub(200)..].join("\n")
    }

    fn passed(&self) -> bool {
        self.status.is_some_and(|s| s.success())
            && counts(&self.out).is_some_and(|(run, f, e, _)| run > 0 && f == 0 && e == 0)
    }
}

/// Runs `test/main.py args` on `n` ranks, output to `log`, killed after `limit`.
fn run_tests(
    prefix: &Path,
    py: &Path,
    src: &Path,
    n: usize,
    args: &[String],
    log: &Path,
    limit: Duration,
) -> Run {
    let logf = std::fs::File::create(log).unwrap();
    let t = Instant::now();
    let mut child = Command::new(prefix.join("bin/mpiexec"))
        .arg("-n")
        .arg(n.to_string())
        .arg(py)
        .arg("test/main.py")
        .args(args)
        .current_dir(src)
        .env(
            "PATH",
            format!(
                "{}:{}",
                py.parent().unwrap().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .stdin(Stdio::null())
        .stdout(logf.try_clone().unwrap())
        .stderr(logf)
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if t.elapsed() > limit {
            // SAFETY: kill(2) on the launcher this test started (it ends its ranks).
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let wall = t.elapsed().as_secs_f64();
    let mut out = String::new();
    std::fs::File::open(log)
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    Run { status, out, wall }
}

/// The ids of the tests unittest reported as FAIL or ERROR, e.g.
/// `test_util_pool.TestThreadPool.test_terminate` from
/// `FAIL: test_terminate (test_util_pool.TestThreadPool.test_terminate)`.
fn failed_ids(out: &str) -> Vec<String> {
    let mut ids: Vec<String> = out
        .lines()
        .filter_map(|l| {
            let rest = l
                .strip_prefix("FAIL: ")
                .or_else(|| l.strip_prefix("ERROR: "))?;
            let id = rest.split_once('(')?.1.strip_suffix(')')?;
            Some(id.trim().to_string())
        })
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// Runs the suite on `n` ranks with a watchdog; panics on any failure (after
/// rerunning the failed tests once or twice if all are [`RACY_WITHOUT_MPI`]).
fn suite(prefix: &Path, py: &Path, src: &Path, n: usize) {
    let mut args: Vec<String> = Vec::new();
    let modules: Vec<&str> = EXCLUDED_MODULES.iter().map(|(m, _)| *m).collect();
    args.push("-e".into());
    args.push(format!("^({})\\.py$", modules.join("|")));
    for (t, _) in EXCLUDED_TESTS {
        args.push("-x".into());
        args.push(t.to_string());
    }
    if let Some(extra) = std::env::var_os("OXMPI_MPI4PY_EXCLUDE") {
        for t in extra.to_string_lossy().split(',').filter(|s| !s.is_empty()) {
            eprintln!("mpi4py: also excluding {t} (OXMPI_MPI4PY_EXCLUDE)");
            args.push("-x".into());
            args.push(t.to_string());
        }
    }
    let log = target_dir().join("mpi4py").join(format!("suite-{n}.log"));
    let limit = Duration::from_secs(900);
    let run = run_tests(prefix, py, src, n, &args, &log, limit);
    let tail = run.tail();
    let Some(status) = run.status else {
        panic!(
            "mpi4py suite on {n} ranks hung (killed after {} s); log {}:\n{tail}",
            limit.as_secs(),
            log.display()
        )
    };
    let c = counts(&run.out);
    if let Some((ran, f, e, s)) = c {
        eprintln!(
            "mpi4py suite on {n} ranks: {ran} run, {f} failures, {e} errors, {s} skipped, {:.1} s wall",
            run.wall
        );
    }
    // Fewer than this many tests run means the suite did not really run
    // (a collection error, a missing extension): that is a failure, reruns or not.
    let whole_suite_ran = c.is_some_and(|(ran, ..)| ran > 1000);
    if run.passed() && whole_suite_ran {
        return;
    }
    let failed = failed_ids(&run.out);
    let racy = |id: &String| RACY_WITHOUT_MPI.iter().any(|p| id.starts_with(p));
    // Every rank printed its summary (none crashed or stopped early), and
    // every failure is one of the wall-clock races.
    let summaries = run.out.lines().filter(|l| l.starts_with("Ran ")).count();
    if summaries == n && !failed.is_empty() && failed.iter().all(racy) && whole_suite_ran {
        for id in &failed {
            let (module, name) = id.split_once('.').unwrap();
            let rerun_args: Vec<String> = vec![
                "-i".into(),
                format!("^{module}\\.py$"),
                "-k".into(),
                name.to_string(),
            ];
            let rerun_log = log.with_extension(format!("rerun-{name}.log"));
            let ok = (1..=2).any(|attempt| {
                let r = run_tests(prefix, py, src, n, &rerun_args, &rerun_log, Duration::from_secs(300));
                eprintln!(
                    "mpi4py: {id} failed on {n} ranks (a wall-clock race with no MPI in it); rerun {attempt}: {}",
                    if r.passed() { "passed" } else { "failed" }
                );
                r.passed()
            });
            assert!(
                ok,
                "mpi4py suite on {n} ranks: {id} failed, and again on both reruns; logs {} and {}:\n{tail}",
                log.display(),
                rerun_log.display()
            );
        }
        return;
    }
    assert!(
        status.success(),
        "mpi4py suite on {n} ranks failed ({status}); log {}:\n{tail}",
        log.display()
    );
    let (ran, f, e, _) =
        c.unwrap_or_else(|| panic!("no summary from the mpi4py suite on {n} ranks:\n{tail}"));
    panic!("mpi4py suite on {n} ranks: {ran} run, {f} failures, {e} errors:\n{tail}");
}

#[test]
fn failed_ids_are_read_from_unittest_reports() {
    let out = "....F.\n======\nFAIL: test_terminate (test_util_pool.TestThreadPool.test_terminate)\n---\nERROR: test_x (test_a.TestB.test_x)\nFAIL: test_terminate (test_util_pool.TestThreadPool.test_terminate)\nRan 3 tests\n";
    assert_eq!(
        failed_ids(out),
        vec![
            "test_a.TestB.test_x".to_string(),
            "test_util_pool.TestThreadPool.test_terminate".to_string()
        ]
    );
}

#[test]
fn mpi4py_builds_with_plain_pip_and_its_suite_passes_on_1_and_5_ranks() {
    if sh(Command::new("python3").args(["-c", "import venv, ensurepip, sysconfig, os; assert os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h'))"])).is_err() {
        return unavailable("python3 with venv, ensurepip and its C headers is not installed");
    }
    let dir = target_dir().join("mpi4py");
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = prefix();
    let (py, src) = match venv(&prefix, &dir) {
        Ok(v) => v,
        Err(e) if e.contains("building mpi4py") => panic!("{e}"),
        Err(e) => return unavailable(&format!("cannot set up the venv from PyPI: {e}")),
    };
    for (m, why) in EXCLUDED_MODULES {
        eprintln!("mpi4py: excluded module {m}: {why}");
    }
    for (t, why) in EXCLUDED_TESTS {
        eprintln!("mpi4py: excluded tests {t}: {why}");
    }
    suite(&prefix, &py, &src, 1);
    suite(&prefix, &py, &src, 5);
}
