//! Launching rank programs through our own `mpiexec`.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The `mpiexec` built in this workspace's target directory (built on demand).
pub fn mpiexec() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/<test> -> target/<profile>/mpiexec
    let profile_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let path = profile_dir.join("mpiexec");
    if !path.exists() {
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let mut c = Command::new(env!("CARGO"));
        c.args(["build", "-q", "-p", "oxmpi-run", "--bin", "mpiexec"]);
        if release {
            c.arg("--release");
        }
        assert!(c.status().unwrap().success(), "building mpiexec failed");
    }
    path
}

pub struct Run {
    pub output: Output,
    pub elapsed: Duration,
    /// The launcher's pid (our mpiexec names its job `kvs_<pid>_0`).
    pub pid: u32,
}

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
    pub fn code(&self) -> Option<i32> {
        self.output.status.code()
    }
    /// Panics with both streams when the job did not exit 0.
    pub fn assert_ok(&self) -> &Self {
        assert!(
            self.output.status.success(),
            "job failed ({:?}) after {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.output.status,
            self.elapsed,
            self.stdout(),
            self.stderr()
        );
        self
    }
}

static ONE_JOB_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds the turn of this test binary's one running job.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `prog args` on `n` ranks with extra environment, and a hard timeout.
///
/// Jobs of one test binary run one at a time: the machine has 2 cores, and
/// several 8-rank jobs at once would turn the timing checks (a dead rank ends
/// the job within a second) into tests of the scheduler.
pub fn run_env(n: usize, prog: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let _turn = serial();
    let mut c = Command::new(mpiexec());
    c.arg("-n").arg(n.to_string()).arg(prog).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let child = c.spawn().expect("cannot start mpiexec");
    let pid = child.id();
    // A watchdog so a hung job fails the test instead of hanging the suite.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d2 = done.clone();
    let limit = Duration::from_secs(
        std::env::var("OXMPI_TEST_TIMEOUT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(120),
    );
    std::thread::spawn(move || {
        let t = Instant::now();
        while t.elapsed() < limit {
            if d2.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!("test watchdog: job {pid} exceeded {limit:?}; killing it");
        oxmpi_tests::signal(pid, "TERM");
    });
    let output = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    Run {
        output,
        elapsed: start.elapsed(),
        pid,
    }
}

pub fn run(n: usize, prog: &str, args: &[&str]) -> Run {
    run_env(n, prog, args, &[])
}

/// Processes whose command line contains `token` (survivors of a job).
pub fn processes_with(token: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(token) && pid != std::process::id() {
                found.push(pid);
            }
        }
    }
    found
}

/// A token unique to this test run, to find a job's processes by.
pub fn unique_token(name: &str) -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!(
        "tok-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// Shared-memory files left by the job our mpiexec `pid` ran.
pub fn shm_leftovers_of(pid: u32) -> Vec<String> {
    let prefix = format!("oxmpi-kvs_{pid}_0-");
    shm_leftovers()
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

/// Files in /dev/shm that belong to oxmpi.
pub fn shm_leftovers() -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("oxmpi-"))
                .collect()
        })
        .unwrap_or_default()
}
