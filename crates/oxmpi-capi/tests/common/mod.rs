//! What the C-ABI test binaries (C programs, Fortran programs, hang
//! diagnosis) share: where the workspace and its target directory are, and
//! the toolchain laid out for a binary under `target/<dir>`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().parent().unwrap().to_path_buf()
}

pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace().join("target"))
}

/// Lays the toolchain out under `target/<dir>` (`cargo xtask dist --debug
/// --prefix`) and returns that prefix; callers keep it in a `OnceLock` so it
/// happens once per test binary.
pub fn lay_out(dir: &str) -> PathBuf {
    let p = target_dir().join(dir);
    let out = Command::new(env!("CARGO"))
        .args(["run", "-q", "-p", "xtask", "--", "dist", "--debug", "--prefix"])
        .arg(&p)
        .current_dir(workspace())
        .output()
        .expect("running cargo xtask dist");
    assert!(out.status.success(), "cargo xtask dist --debug failed:\n{}", String::from_utf8_lossy(&out.stderr));
    p
}

/// Waits for a started job, sending its launcher SIGTERM if it runs past
/// `limit` (a hung test then fails with the job's output instead of hanging).
#[allow(dead_code)] // not every test binary starts jobs this way
pub fn wait_with_watchdog(child: std::process::Child, limit: std::time::Duration) -> std::process::Output {
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
