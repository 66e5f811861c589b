//! Multi-host launching, with network namespaces as hosts: ranks on
//! `oxmpi-h1`, `oxmpi-h2` (see tests/netns/setup.sh) are started through
//! `--launcher-exec "ip netns exec"` and reach the TCP PMI server on the
//! bridge address 10.213.0.1.
//!
//! Needs root and iproute2; without them every test prints a notice and
//! passes vacuously. The namespaces are left in place for reuse (setup is
//! idempotent); `tests/netns/teardown.sh` removes them.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const BRIDGE_ADDR: &str = "10.213.0.1";

fn netns_ready() -> bool {
    static READY: OnceLock<bool> = OnceLock::new();
    *READY.get_or_init(|| {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/netns/setup.sh");
        match Command::new("sh").arg(&script).arg("2").output() {
            Ok(o) if o.status.success() => true,
            Ok(o) => {
                eprintln!(
                    "NOTICE: skipping multi-host tests, network namespaces unavailable \
                     (needs root and iproute2): {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                false
            }
            Err(e) => {
                eprintln!("NOTICE: skipping multi-host tests: cannot run {script:?}: {e}");
                false
            }
        }
    })
}

fn helper() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/helpers/pmi_rank.py")
        .display()
        .to_string()
}

fn mpiexec(hosts: &[&str], rest: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mpiexec"));
    c.args(hosts)
        .args([
            "--launcher-exec",
            "ip netns exec",
            "--pmi-bind",
            BRIDGE_ADDR,
        ])
        .args(rest);
    c
}

fn run(hosts: &[&str], rest: &[&str]) -> Output {
    mpiexec(hosts, rest)
        .stdin(Stdio::null())
        .output()
        .expect("mpiexec runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn sorted_lines(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s.lines().map(str::to_string).collect();
    v.sort();
    v
}

fn pid_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn block_placement_pmi_exchange_secret_and_mapping() {
    if !netns_ready() {
        return;
    }
    let h = helper();
    let o = run(
        &["-hosts", "oxmpi-h1,oxmpi-h2", "-ppn", "2"],
        &["-l", "python3", &h, "multihost"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let map = "(vector,(0,2,2))";
    let want: Vec<String> = [(0, 1), (1, 1), (2, 2), (3, 2)]
        .iter()
        .map(|(r, h)| format!("[{r}] rank {r} of 4 in oxmpi-h{h} secret from kvs agreed map {map}"))
        .collect();
    assert_eq!(sorted_lines(&text(&o.stdout)), want);
    assert_eq!(
        sorted_lines(&text(&o.stderr)),
        (0..4)
            .map(|r| format!("[{r}] stderr from {r}"))
            .collect::<Vec<_>>()
    );
}

#[test]
fn round_robin_with_a_local_host() {
    if !netns_ready() {
        return;
    }
    let h = helper();
    let o = run(
        &["-hosts", "oxmpi-h1,localhost", "-ppn", "2", "-rr"],
        &["python3", &h, "multihost"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let map = "(vector,(0,2,1),(0,2,1))";
    let mut want: Vec<String> = (0..4)
        .map(|r| {
            let (place, source) = if r % 2 == 0 {
                ("oxmpi-h1", "kvs")
            } else {
                ("root", "env")
            };
            format!("rank {r} of 4 in {place} secret from {source} agreed map {map}")
        })
        .collect();
    want.sort();
    assert_eq!(sorted_lines(&text(&o.stdout)), want);
}

#[test]
fn hostfile_gives_size_and_mapping() {
    if !netns_ready() {
        return;
    }
    let path = std::env::temp_dir().join(format!("oxmpi-hostfile-{}", std::process::id()));
    std::fs::write(&path, "# two hosts\noxmpi-h1:1\n\noxmpi-h2 # second\n").unwrap();
    let h = helper();
    let o = run(
        &["-f", path.to_str().unwrap()],
        &["python3", &h, "multihost"],
    );
    let _ = std::fs::remove_file(&path);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        sorted_lines(&text(&o.stdout)),
        vec![
            "rank 0 of 2 in oxmpi-h1 secret from kvs agreed map (vector,(0,2,1))",
            "rank 1 of 2 in oxmpi-h2 secret from kvs agreed map (vector,(0,2,1))",
        ]
    );
}

#[test]
fn remote_exit_codes_are_propagated() {
    if !netns_ready() {
        return;
    }
    let h = helper();
    let o = run(
        &["-hosts", "oxmpi-h1,oxmpi-h2"],
        &["python3", &h, "exit", "5"],
    );
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    let o = run(
        &["-hosts", "oxmpi-h1,oxmpi-h2"],
        &["sh", "-c", "[ $PMI_RANK = 1 ] && exit 7; exit 0"],
    );
    assert_eq!(o.status.code(), Some(7), "{}", text(&o.stderr));
}

#[test]
fn stdin_reaches_remote_rank_zero() {
    if !netns_ready() {
        return;
    }
    let mut child = mpiexec(&["-hosts", "oxmpi-h1,oxmpi-h2"], &["-l", "sh", "-c", "cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"hello\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(text(&o.stdout), "[0] hello\n");
}

#[test]
fn killed_remote_rank_ends_job_with_no_survivors() {
    if !netns_ready() {
        return;
    }
    let h = helper();
    let start = Instant::now();
    let o = run(
        &["-hosts", "oxmpi-h1,oxmpi-h2", "-ppn", "2"],
        &["-l", "python3", &h, "sleep", "3"],
    );
    let elapsed = start.elapsed();
    let out = text(&o.stdout);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(128 + 9), "{out}\n{err}");
    assert!(elapsed < Duration::from_secs(4), "took {elapsed:?}");
    assert!(
        err.contains("mpiexec: rank 3 on oxmpi-h2 (launch pid ")
            && err.contains("was killed by signal 9 (SIGKILL) before MPI_Finalize; ending the job"),
        "{err}"
    );
    let pids: Vec<i32> = out
        .lines()
        .map(|l| l.split_once("] ").unwrap().1.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 4, "{out}");
    for pid in pids {
        assert!(!pid_alive(pid), "rank pid {pid} survived");
    }
}

#[test]
fn sigterm_reaches_remote_ranks() {
    if !netns_ready() {
        return;
    }
    let child = mpiexec(
        &["-hosts", "oxmpi-h1,oxmpi-h2"],
        &[
            "sh",
            "-c",
            "trap 'echo got TERM $PMI_RANK; exit 9' TERM; echo ready; while :; do sleep 0.05; done",
        ],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    // SAFETY: plain kill(2) of the child we just spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(9), "{o:?}");
    let out = sorted_lines(&text(&o.stdout));
    assert!(out.contains(&"got TERM 0".to_string()), "{out:?}");
    assert!(out.contains(&"got TERM 1".to_string()), "{out:?}");
}

#[test]
fn bad_and_replayed_pmi_credentials_are_refused() {
    if !netns_ready() {
        return;
    }
    let h = helper();
    let start = Instant::now();
    let o = run(&["-hosts", "oxmpi-h1"], &["python3", &h, "rogue"]);
    let out = text(&o.stdout);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(out, "closed after secret 0000\n", "{err}");
    assert!(
        err.contains("refused a PMI connection from 10.213.0.11:")
            && err.contains("wrong or missing secret for rank 0"),
        "{err}"
    );
    assert!(
        err.contains("rank 0 on oxmpi-h1 (launch pid ")
            && err.contains("is already connected, but its PMI credential was presented again"),
        "{err}"
    );
}

#[test]
fn secret_never_on_a_command_line() {
    if !netns_ready() {
        return;
    }
    // Every rank prints its own command line and, for local ranks, the
    // environment secret; the secret must appear in none of the command
    // lines of the launch processes either (checked via the rank, whose
    // pid is the launch process with ip netns exec).
    let o = run(
        &["-hosts", "oxmpi-h1,localhost"],
        &[
            "sh",
            "-c",
            "tr '\\0' ' ' < /proc/$$/cmdline; echo; echo \"env:${OXMPI_JOB_SECRET:-none}\"",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = text(&o.stdout);
    let secret = out
        .lines()
        .find_map(|l| l.strip_prefix("env:").filter(|s| *s != "none"))
        .expect("the local rank has the secret in its environment")
        .to_string();
    assert_eq!(secret.len(), 64);
    assert_eq!(out.matches(&secret).count(), 1, "{out}");
    assert!(out.contains("env:none"), "{out}");
}
