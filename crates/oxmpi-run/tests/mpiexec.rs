//! End-to-end tests of the `mpiexec` binary, with shell scripts and a small
//! Python PMI-1 client as ranks.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn mpiexec() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mpiexec"))
}

fn helper() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/helpers/pmi_rank.py")
}

fn run(args: &[&str]) -> Output {
    mpiexec()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("mpiexec runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn sorted_lines(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s.lines().map(str::to_string).collect();
    v.sort();
    v
}

fn pid_alive(pid: i32) -> bool {
    // Zombies count as gone: check the state in /proc.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn output_is_forwarded_line_intact_with_labels() {
    let o = run(&[
        "-n",
        "3",
        "-l",
        "sh",
        "-c",
        "echo out $PMI_RANK; echo err $PMI_RANK >&2; printf tail$PMI_RANK",
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(
        sorted_lines(&stdout(&o)),
        vec![
            "[0] out 0",
            "[0] tail0",
            "[1] out 1",
            "[1] tail1",
            "[2] out 2",
            "[2] tail2"
        ]
    );
    assert_eq!(
        sorted_lines(&stderr(&o)),
        vec!["[0] err 0", "[1] err 1", "[2] err 2"]
    );
}

#[test]
fn long_lines_from_many_ranks_do_not_interleave() {
    // Each rank writes 200 lines of 3000 bytes in small pieces.
    let script = "python3 -c \"
import os, sys
r = os.environ['PMI_RANK']
for i in range(200):
    line = (r * 3000) + '\\n'
    for j in range(0, len(line), 700):
        sys.stdout.write(line[j:j+700]); sys.stdout.flush()
\"";
    let o = run(&["-n", "3", "sh", "-c", script]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 600);
    for line in out.lines() {
        assert_eq!(line.len(), 3000);
        let first = line.as_bytes()[0];
        assert!(line.bytes().all(|b| b == first), "interleaved line");
    }
}

#[test]
fn unlabelled_output_and_plain_programs() {
    let o = run(&["-n", "2", "echo", "hi"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "hi\nhi\n");
}

#[test]
fn stdin_goes_to_rank_zero_only() {
    let mut child = mpiexec()
        .args(["-n", "2", "-l", "sh", "-c", "cat; echo done"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"line one\nline two\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(
        sorted_lines(&stdout(&o)),
        vec!["[0] done", "[0] line one", "[0] line two", "[1] done"]
    );
}

#[test]
fn exit_code_of_first_failing_rank() {
    let o = run(&["-n", "3", "sh", "-c", "[ $PMI_RANK = 1 ] && exit 7; exit 0"]);
    assert_eq!(o.status.code(), Some(7), "{o:?}");
    let o = run(&["-n", "2", "true"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn pmi_exchange_across_ranks() {
    let h = helper();
    let o = run(&["-n", "4", "python3", h.to_str().unwrap(), "exchange"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = sorted_lines(&stdout(&o));
    assert_eq!(lines.len(), 4, "{lines:?}");
    for (r, line) in lines.iter().enumerate() {
        assert_eq!(
            line,
            &format!("rank {r} of 4 got v0,v11,v22,v33 map (vector,(0,1,4))")
        );
    }
}

#[test]
fn finalized_rank_exit_code_is_propagated() {
    let h = helper();
    let o = run(&["-n", "2", "python3", h.to_str().unwrap(), "exit", "5"]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(!stderr(&o).contains("ending the job"), "{}", stderr(&o));
}

#[test]
fn killed_rank_ends_job_quickly_with_no_survivors() {
    let script = "echo $$; if [ $PMI_RANK = 2 ]; then sleep 0.3; kill -9 $$; fi; \
                  exec sleep 30";
    let start = Instant::now();
    let o = run(&["-n", "3", "-l", "sh", "-c", script]);
    let elapsed = start.elapsed();
    assert_eq!(o.status.code(), Some(128 + 9), "{o:?}");
    assert!(elapsed < Duration::from_millis(1300), "took {elapsed:?}");
    let err = stderr(&o);
    let killed_pid: i32 = stdout(&o)
        .lines()
        .find_map(|l| l.strip_prefix("[2] "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        err.contains(&format!(
            "mpiexec: rank 2 (pid {killed_pid}) was killed by signal 9 (SIGKILL) \
             before MPI_Finalize; ending the job"
        )),
        "{err}"
    );
    for line in stdout(&o).lines() {
        let pid: i32 = line.split_once("] ").unwrap().1.parse().unwrap();
        assert!(!pid_alive(pid), "rank pid {pid} survived");
    }
}

#[test]
fn abort_ends_job_with_its_code() {
    let h = helper();
    let script = format!(
        "if [ $PMI_RANK = 1 ]; then exec python3 {0} abort 3; else exec python3 {0} exchange; fi",
        h.display()
    );
    let start = Instant::now();
    let o = run(&["-n", "3", "sh", "-c", &script]);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    assert!(start.elapsed() < Duration::from_secs(3));
    let err = stderr(&o);
    assert!(
        err.contains("mpiexec: rank 1 (pid ")
            && err.contains("called MPI_Abort with exit code 3; ending the job"),
        "{err}"
    );
}

#[test]
fn exit_zero_without_finalize_is_an_error() {
    let h = helper();
    let o = run(&["-n", "2", "python3", h.to_str().unwrap(), "nofinalize"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        stderr(&o).contains("exited with status 0 without calling MPI_Finalize; ending the job"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn genv_and_launcher_variables_reach_ranks() {
    let o = run(&[
        "-n",
        "2",
        "-genv",
        "FOO",
        "bar baz",
        "-env",
        "X",
        "1",
        "sh",
        "-c",
        "echo \"$FOO|$X|$OXMPI_LAUNCHER|$PMI_SIZE|$PMI_FD\"",
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    for line in stdout(&o).lines() {
        let fields: Vec<&str> = line.split('|').collect();
        assert_eq!(&fields[..4], ["bar baz", "1", "1", "2"]);
        assert!(fields[4].parse::<i32>().unwrap() > 2);
    }
}

#[test]
fn shm_leftovers_are_removed() {
    if !std::path::Path::new("/dev/shm").is_dir() {
        return;
    }
    let h = helper();
    let o = run(&["-n", "2", "python3", h.to_str().unwrap(), "shm"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let paths: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(paths.len(), 2);
    for p in paths {
        assert!(p.starts_with("/dev/shm/oxmpi-kvs_"), "{p}");
        assert!(!std::path::Path::new(&p).exists(), "{p} was left behind");
    }
}

#[test]
fn missing_program_exits_127() {
    let o = run(&["-n", "2", "/nonexistent/prog"]);
    assert_eq!(o.status.code(), Some(127));
    assert!(
        stderr(&o).contains("cannot run '/nonexistent/prog'"),
        "{}",
        stderr(&o)
    );
    let o = run(&["definitely-not-a-command-oxmpi"]);
    assert_eq!(o.status.code(), Some(127));
    assert!(stderr(&o).contains("cannot find"), "{}", stderr(&o));
    let o = run(&["/etc/hostname"]);
    assert_eq!(o.status.code(), Some(127));
}

#[test]
fn usage_errors_exit_2() {
    let o = run(&["-bogus", "true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown option '-bogus'"));
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("Usage: mpiexec"));
    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("oxmpi"));
}

#[test]
fn sigterm_is_forwarded_to_ranks() {
    let child = mpiexec()
        .args([
            "-n",
            "2",
            "sh",
            "-c",
            "trap 'echo got TERM $PMI_RANK; exit 9' TERM; echo ready; while :; do sleep 0.05; done",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    // SAFETY: plain kill(2) of the child we just spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_millis(1500));
    assert_eq!(o.status.code(), Some(9), "{o:?}");
    let out = sorted_lines(&stdout(&o));
    assert!(out.contains(&"got TERM 0".to_string()), "{out:?}");
    assert!(out.contains(&"got TERM 1".to_string()), "{out:?}");
}

#[test]
fn ranks_ignoring_sigterm_are_killed() {
    let child = mpiexec()
        .args([
            "-n",
            "2",
            "sh",
            "-c",
            "trap '' TERM INT; echo ready; while :; do sleep 0.05; done",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    // SAFETY: plain kill(2) of the child we just spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let elapsed = start.elapsed();
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_millis(2000),
        "{elapsed:?}"
    );
    assert_eq!(o.status.code(), Some(128 + 9), "{o:?}");
}
