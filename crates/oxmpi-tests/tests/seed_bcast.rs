//! Textbook broadcast exercises fed through mpiexec's stdin (forwarded to rank 0): ints
//! until a negative one, (int, double) pairs as a derived struct, and the same pairs
//! packed into bytes. Every rank must print every value, in order, and nothing after
//! the negative one.
mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

static ONE_JOB_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn spawn(n: usize, mode: &str) -> Child {
    Command::new(common::mpiexec())
        .arg("-n")
        .arg(n.to_string())
        .arg(env!("CARGO_BIN_EXE_seed_bcast"))
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start mpiexec")
}

/// Waits for `child` at most `limit`, killing it past that.
fn wait(child: Child, limit: Duration) -> std::process::Output {
    let pid = child.id();
    let (tx, rx) = mpsc::channel::<()>();
    let dog = std::thread::spawn(move || {
        if rx.recv_timeout(limit).is_err() {
            eprintln!("test watchdog: job {pid} exceeded {limit:?}; killing it");
            oxmpi_tests::signal(pid, "TERM");
        }
    });
    let out = child.wait_with_output().unwrap();
    let _ = tx.send(());
    dog.join().unwrap();
    out
}

/// Runs with all of `input` on stdin, then EOF.
fn run_with_input(n: usize, mode: &str, input: &str) -> (String, String) {
    let _turn = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let mut child = spawn(n, mode);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = wait(child, Duration::from_secs(60));
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "job failed ({:?})\n--- stdout\n{o}\n--- stderr\n{e}",
        out.status
    );
    (o, e)
}

/// Every rank printed exactly `want` (in order) and its final ok line.
fn assert_all_got(out: &str, n: usize, want: &[&str]) {
    for r in 0..n {
        let prefix = format!("seed_bcast: rank {r} got ");
        let got: Vec<&str> = out
            .lines()
            .filter_map(|l| l.strip_prefix(&prefix))
            .collect();
        assert_eq!(got, want, "rank {r}:\n{out}");
        assert!(
            out.contains(&format!(
                "seed_bcast: rank {r} of {n} ok ({} values)",
                want.len()
            )),
            "rank {r}:\n{out}"
        );
    }
}

#[test]
fn seed_bcast_ints_until_a_negative_one() {
    for n in [4, 2] {
        let (out, _) = run_with_input(n, "ints", "5\n17 3\n  0\n2147483647\n-4\n99\n");
        assert_all_got(&out, n, &["5", "17", "3", "0", "2147483647"]);
    }
}

#[test]
fn seed_bcast_ints_end_of_input_stops_too() {
    let (out, _) = run_with_input(3, "ints", "8 9");
    assert_all_got(&out, 3, &["8", "9"]);
    let (out, _) = run_with_input(3, "ints", "");
    assert_all_got(&out, 3, &[]);
}

#[test]
fn seed_bcast_struct_pairs() {
    let input = "5 2.5\n17 -0.125\n3 3.141592653589793\n0 1e300\n-1 0\n4 4.0\n";
    let want = ["5 2.5", "17 -0.125", "3 3.141592653589793", "0 1e300"];
    for n in [4, 2] {
        let (out, _) = run_with_input(n, "struct", input);
        assert_all_got(&out, n, &want);
    }
}

#[test]
fn seed_bcast_packed_pairs() {
    let input = "5 2.5\n17 -0.125\n3 3.141592653589793\n0 1e300\n-1 0\n4 4.0\n";
    let want = ["5 2.5", "17 -0.125", "3 3.141592653589793", "0 1e300"];
    for n in [4, 2] {
        let (out, _) = run_with_input(n, "packed", input);
        assert_all_got(&out, n, &want);
    }
}

/// Values are broadcast as they are typed, not at end of input: the test writes one
/// value, waits until every rank has printed it, and only then ends the input.
#[test]
fn seed_bcast_is_interactive() {
    let _turn = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let n = 3;
    let mut child = spawn(n, "ints");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    for value in ["42", "7"] {
        writeln!(stdin, "{value}").unwrap();
        stdin.flush().unwrap();
        let mut seen = 0;
        while seen < n {
            let line = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| {
                    panic!("no echo of {value} while stdin is still open; so far: {lines:?}")
                });
            if line.ends_with(&format!(" got {value}")) {
                seen += 1;
            }
            lines.push(line);
        }
    }
    writeln!(stdin, "-1").unwrap();
    drop(stdin);
    let out = wait(child, Duration::from_secs(60));
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    assert!(
        out.status.success(),
        "job failed ({:?}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let all = lines.join("\n");
    assert_all_got(&all, n, &["42", "7"]);
}
