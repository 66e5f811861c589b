//! What the C-ABI test binaries (C programs, Fortran programs, hang
//! diagnosis) share: where the workspace and its target directory are, and
//! the toolchain laid out for a binary under `target/<dir>`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"))
}

/// Lays the toolchain out under `target/<dir>` (`cargo xtask dist --debug
/// --prefix`) and returns that prefix; callers keep it in a `OnceLock` so it
/// happens once per test binary.
pub fn lay_out(dir: &str) -> PathBuf {
    let p = target_dir().join(dir);
    let out = Command::new(env!("CARGO"))
        .args([
            "run", "-q", "-p", "xtask", "--", "dist", "--debug", "--prefix",
        ])
        .arg(&p)
        .current_dir(workspace())
        .output()
        .expect("running cargo xtask dist");
    assert!(
        out.status.success(),
        "cargo xtask dist --debug failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    p
}

/// Waits for a started job, sending its launcher SIGTERM if it runs past
/// `limit` (a hung test then fails with the job's output instead of hanging).
#[allow(dead_code)] // not every test binary starts jobs this way
pub fn wait_with_watchdog(
    child: std::process::Child,
    limit: std::time::Duration,
) -> std::process::Output {
    use std::sync::atomic::{AtomicBool, Ordering};
    let pid = child.id();
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let d2 = done.clone();
    std::thread::spawn(move || {
        let t = std::time::Instant::now();
        while t.elapsed() < limit {
            if d2.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        // SAFETY: kill(2) on the launcher we started.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    });
    let out = child.wait_with_output().unwrap();
    done.store(true, Ordering::Relaxed);
    out
}

/// Whether the tests run on CI (`CI` set and not empty): there, a test that
/// cannot run for a missing tool or an unreachable package fails.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Runs `cmd` with stdin closed and its stdout and stderr going to `log` as
/// they come (a long build can be watched), and says whether it succeeded.
pub fn sh_logged(cmd: &mut Command, what: &str, log: &Path) -> bool {
    let f = std::fs::File::create(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let status = cmd
        .stdin(std::process::Stdio::null())
        .stdout(f.try_clone().unwrap())
        .stderr(f)
        .status()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    status.success()
}

/// The upstream tarball (`<package>_<version>.orig.tar.<ext>`) of Debian
/// bookworm's source package `package`, downloaded with `apt-get source
/// --download-only` into `root/src` (kept there for later runs), with a
/// private deb-src list, lists and cache under `root/apt`: the machine's apt
/// configuration is left alone. `Err` says why it could not be fetched.
pub fn debian_orig_tarball(root: &Path, package: &str) -> Result<PathBuf, String> {
    let apt = root.join("apt");
    let src = root.join("src");
    let find = || -> Option<PathBuf> {
        std::fs::read_dir(&src)
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|p| {
                let n = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                n.starts_with(&format!("{package}_")) && n.contains(".orig.tar.")
            })
    };
    if let Some(t) = find() {
        return Ok(t);
    }
    if Command::new("apt-get")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .status()
        .is_err()
    {
        return Err("`apt-get` is missing".to_string());
    }
    for d in ["lists/partial", "cache/archives/partial"] {
        std::fs::create_dir_all(apt.join(d)).unwrap();
    }
    std::fs::create_dir_all(&src).unwrap();
    let list = apt.join("sources.list");
    std::fs::write(&list, "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main\n").unwrap();
    let opts = |c: &mut Command| {
        c.arg("-q")
            .arg(format!("-o=Dir::Etc::SourceList={}", list.display()))
            .arg("-o=Dir::Etc::SourceParts=/dev/null")
            .arg(format!(
                "-o=Dir::State::Lists={}",
                apt.join("lists").display()
            ))
            .arg(format!("-o=Dir::Cache={}", apt.join("cache").display()))
            .arg("-o=APT::Sandbox::User=root");
    };
    let mut up = Command::new("apt-get");
    opts(&mut up);
    up.arg("update");
    let log = root.join("apt-update.log");
    if !sh_logged(&mut up, "apt-get update", &log) {
        return Err(format!(
            "apt-get update of Debian's source index failed (see {})",
            log.display()
        ));
    }
    let mut get = Command::new("apt-get");
    opts(&mut get);
    get.args(["source", "--download-only", package])
        .current_dir(&src);
    let log = root.join("apt-source.log");
    if !sh_logged(&mut get, "apt-get source", &log) {
        return Err(format!(
            "apt-get source {package} failed (see {})",
            log.display()
        ));
    }
    find().ok_or_else(|| {
        format!(
            "apt-get source {package} left no .orig.tar.* in {}",
            src.display()
        )
    })
}

/// FNV-1a hash of `b` (build stamps: rebuild when a header changes).
pub fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf29ce484222325u64, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x100000001b3)
    })
}
