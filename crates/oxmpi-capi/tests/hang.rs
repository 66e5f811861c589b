//! Deadlock detection (issue 14): C programs under tests/c/hang, built with
//! our `mpicc` and run with our `mpiexec`, whose default `--hang-check abort`
//! must name the right ranks and calls, within 5 s of the deadlock forming,
//! and end the job with status 86; and must never report a job that only
//! computes, sleeps outside MPI, or has a message in flight.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

mod common;
use common::lay_out;

const EXIT_DEADLOCK: i32 = 86;

fn prefix() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| lay_out("oxmpi-hang-test"))
}

fn build(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c/hang")
        .join(format!("{name}.c"));
    let exe = prefix().join("tests/hang").join(name);
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    let out = Command::new(prefix().join("bin/mpicc"))
        .args(["-g", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpicc {name}.c failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `name` on `n` ranks with extra mpiexec options, one job at a time,
/// with a watchdog; `during` runs with the launcher's pid while the job runs.
fn run_with(n: usize, name: &str, opts: &[&str], args: &[&str], during: impl FnOnce(u32)) -> Run {
    run_with_env(n, name, opts, args, &[], during)
}

/// [`run_with`] with variables set in mpiexec's environment.
fn run_with_env(
    n: usize,
    name: &str,
    opts: &[&str],
    args: &[&str],
    envs: &[(&str, &std::ffi::OsStr)],
    during: impl FnOnce(u32),
) -> Run {
    static ONE: Mutex<()> = Mutex::new(());
    // One job at a time, and never rebuild a program another test is running.
    let _turn = ONE.lock().unwrap_or_else(|p| p.into_inner());
    let exe = build(name);
    let child = Command::new(prefix().join("bin/mpiexec"))
        .envs(envs.iter().copied())
        .args(opts)
        .arg("-n")
        .arg(n.to_string())
        .arg(&exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d2 = done.clone();
    std::thread::spawn(move || {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(60) {
            if d2.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // SAFETY: kill(2) on the launcher we started.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    });
    during(pid);
    let out: Output = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn run(n: usize, name: &str) -> Run {
    run_with(n, name, &[], &[], |_| {})
}

/// The job deadlocked: status 86, the report within 5 s of the ranks going
/// idle, and a verdict containing every one of `expect`.
fn deadlock(n: usize, name: &str, expect: &[&str]) -> String {
    deadlock_with(n, name, &[], &[], expect)
}

fn deadlock_with(n: usize, name: &str, opts: &[&str], args: &[&str], expect: &[&str]) -> String {
    let r = run_with(n, name, opts, args, |_| {});
    assert_eq!(
        r.code,
        Some(EXIT_DEADLOCK),
        "{name} on {n}: expected the deadlock status\n{}",
        r.stderr
    );
    assert!(r.stderr.contains("mpiexec: DEADLOCK"), "{}", r.stderr);
    let verdict = r
        .stderr
        .lines()
        .find(|l| l.starts_with("mpiexec: verdict: "))
        .unwrap_or_else(|| panic!("no verdict:\n{}", r.stderr));
    for e in expect {
        assert!(
            verdict.contains(e),
            "{name}: verdict lacks {e:?}:\n{}",
            r.stderr
        );
    }
    // Every rank line says how long it has been blocked: the deadlock formed
    // at most that long before the report.
    let mut blocked = 0;
    for l in r.stderr.lines().filter(|l| l.contains(": blocked for ")) {
        let secs: f64 = l
            .split(": blocked for ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            secs < 5.0,
            "{name}: reported {secs} s after the deadlock formed:\n{}",
            r.stderr
        );
        blocked += 1;
    }
    assert!(blocked > 0, "{}", r.stderr);
    r.stderr
}

#[test]
fn recv_recv_cycle_on_2_ranks() {
    let out = deadlock(2, "recv_cycle", &["wait-for cycle: rank 0 waits in MPI_Recv for rank 1, rank 1 waits in MPI_Recv for rank 0"]);
    // Arguments as the program wrote them, and where it called from.
    assert!(out.contains("rank 0: blocked for"), "{out}");
    assert!(
        out.contains(
            "MPI_Recv(count=1 MPI_INT, source=1 (world rank 1), tag=7, comm=MPI_COMM_WORLD)"
        ),
        "{out}"
    );
    assert!(
        out.contains("called from main at") && out.contains("recv_cycle.c:10"),
        "{out}"
    );
}

#[test]
fn recv_recv_cycle_on_5_ranks() {
    deadlock(
        5,
        "recv_cycle",
        &[
            "rank 0 waits in MPI_Recv for rank 1",
            "rank 3 waits in MPI_Recv for rank 4",
            "rank 4 waits in MPI_Recv for rank 0",
        ],
    );
}

#[test]
fn seed_4_20_broadcasts_in_opposite_orders() {
    deadlock(
        2,
        "bcast_order",
        &[
            "collective mismatch on MPI_COMM_WORLD",
            "rank 0 is in MPI_Bcast #1 (root 0)",
            "rank 1 is in MPI_Bcast #1 (root 1)",
        ],
    );
}

#[test]
fn seed_4_20_as_written_on_3_ranks_with_small_messages() {
    // Rank 2 calls no broadcast and goes to MPI_Finalize; what 0 and 1 sent it
    // can never be received, which must not pass for a message in flight.
    let out = deadlock_with(
        3,
        "bcast_order",
        &[],
        &["small"],
        &[
            "collective mismatch on MPI_COMM_WORLD",
            "rank 0 is in MPI_Bcast #2 (root 1)",
            "rank 1 is in MPI_Bcast #2 (root 0)",
        ],
    );
    assert!(
        out.contains("rank 2: finished (is in MPI_Finalize)"),
        "{out}"
    );
}

#[test]
fn seed_4_21_broadcasts_on_three_communicators_form_a_cycle() {
    deadlock(
        3,
        "bcast_cycle",
        &[
            "wait-for cycle",
            "rank 0 waits in MPI_Bcast #1 (root 0)",
            "for rank 1",
            "rank 1 waits in MPI_Bcast #1",
            "rank 2 waits in MPI_Bcast #1 (root 1)",
        ],
    );
}

#[test]
fn seed_4_22_broadcast_before_send_against_receive_before_broadcast() {
    deadlock(
        2,
        "bcast_then_send",
        &[
            "rank 0 waits in MPI_Bcast #1 (root 0) on MPI_COMM_WORLD for rank 1",
            "rank 1 waits in MPI_Recv for rank 0",
        ],
    );
}

#[test]
fn different_collectives_at_the_same_point() {
    let err = deadlock(
        3,
        "reduce_vs_bcast",
        &[
            "collective mismatch on MPI_COMM_WORLD",
            "rank 0 is in MPI_Bcast #1",
        ],
    );
    // Rank 2 is still in its MPI_Reduce or, where the reduce algorithm let it finish
    // its part, already in MPI_Barrier: either way the verdict names rank 1's call.
    let verdict = err
        .lines()
        .find(|l| l.starts_with("mpiexec: verdict: "))
        .unwrap_or_default();
    assert!(
        verdict.contains("ranks 1,2 are in MPI_Reduce #1")
            || verdict.contains("rank 1 is in MPI_Reduce #1"),
        "{err}"
    );
}

#[test]
fn receive_from_a_rank_that_finished() {
    deadlock(
        2,
        "recv_from_finished",
        &["rank 1 waits in MPI_Recv for rank 0, but rank 0 is in MPI_Finalize"],
    );
}

#[test]
fn waitall_deadlock_lists_the_pending_requests() {
    let out = deadlock(
        2,
        "waitall",
        &[
            "rank 0 waits in MPI_Waitall for rank 1",
            "rank 1 waits in MPI_Waitall for rank 0",
        ],
    );
    assert!(
        out.contains("pending request: receive from rank 1 (tag 1)"),
        "{out}"
    );
    assert!(
        out.contains("pending request: send to world rank 1 (tag 2"),
        "{out}"
    );
}

#[test]
fn seed_4_23_nondeterministic_matching_runs_to_completion() {
    let r = run(3, "nondeterministic");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains("matched 2 then 0") || r.stdout.contains("matched 0 then 2"),
        "{}",
        r.stdout
    );
    assert!(!r.stderr.contains("DEADLOCK"), "{}", r.stderr);
}

#[test]
fn a_rank_computing_and_sleeping_is_never_reported_and_sigusr1_dumps_the_state() {
    // Rank 0 computes for 10 s then sleeps for 10 s outside MPI while the
    // others wait in MPI_Barrier (blocked from the launcher's view all along);
    // a short --hang-after makes any false positive show at once. Early on, a
    // SIGUSR1 must print every rank's state and leave the job running.
    let r = run_with(
        3,
        "compute_then_barrier",
        &["--hang-after", "0.2"],
        &["20"],
        |pid| {
            std::thread::sleep(Duration::from_secs(3));
            // SAFETY: kill(2) on the launcher we started.
            unsafe { libc::kill(pid as i32, libc::SIGUSR1) };
        },
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("all passed the barrier"), "{}", r.stdout);
    assert!(!r.stderr.contains("DEADLOCK"), "{}", r.stderr);
    assert!(
        r.stderr.contains("state of the job's ranks (SIGUSR1)"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("rank 0: running"), "{}", r.stderr);
    assert!(
        r.stderr.contains("rank 1: blocked for")
            && r.stderr.contains("in MPI_Barrier(comm=MPI_COMM_WORLD)"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_long_transfer_in_flight_is_never_reported() {
    // 256 MiB over TCP between two ranks on this host (the receiver waits in
    // MPI_Recv while the bytes stream), with a very short --hang-after.
    let r = run_with(
        2,
        "long_transfer",
        &["--hang-after", "0.05", "-genv", "OXMPI_TRANSPORT", "tcp"],
        &[],
        |_| {},
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains("received 268435456 bytes"),
        "{}",
        r.stdout
    );
    assert!(!r.stderr.contains("DEADLOCK"), "{}", r.stderr);
}

#[test]
fn report_mode_reports_and_off_mode_stays_silent() {
    // report: prints the verdict and leaves the job to the user (here, SIGTERM).
    let r = run_with(2, "recv_cycle", &["--hang-check", "report"], &[], |pid| {
        std::thread::sleep(Duration::from_secs(4));
        // SAFETY: kill(2) on the launcher we started.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    });
    assert_ne!(r.code, Some(EXIT_DEADLOCK), "{}", r.stderr);
    assert!(r.stderr.contains("verdict: wait-for cycle"), "{}", r.stderr);
    let r = run_with(2, "recv_cycle", &["--hang-check", "off"], &[], |pid| {
        std::thread::sleep(Duration::from_secs(3));
        // SAFETY: kill(2) on the launcher we started.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    });
    assert!(!r.stderr.contains("DEADLOCK"), "{}", r.stderr);
}

#[test]
fn seed_4_22_with_small_messages_deadlocks_only_with_synchronizing_collectives() {
    let r = run_with(2, "bcast_then_send", &[], &["small"], |_| {});
    assert_eq!(
        r.code,
        Some(0),
        "buffered, example 4.22 completes:\n{}",
        r.stderr
    );
    deadlock_with(
        2,
        "bcast_then_send",
        &["-genv", "OXMPI_SYNC_COLLECTIVES", "1"],
        &["small"],
        &[
            "rank 0 waits in MPI_Bcast #1 (root 0) on MPI_COMM_WORLD for rank 1",
            "rank 1 waits in MPI_Recv for rank 0",
        ],
    );
}

/// Checking mode: the mismatch is an MPI_ERR_NOT_SAME error naming the calls.
fn mismatch(n: usize, what: &str, expect: &[&str]) {
    let r = run_with(n, "mismatch", &["--check"], &[what], |_| {});
    assert_ne!(
        r.code,
        Some(0),
        "{what} on {n}: the mismatch went unnoticed\n{}",
        r.stderr
    );
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains("(MPI_ERR_NOT_SAME)"))
        .unwrap_or_else(|| panic!("{what} on {n}: no MPI_ERR_NOT_SAME error:\n{}", r.stderr));
    for e in expect {
        assert!(
            line.contains(e),
            "{what} on {n}: {e:?} missing from\n{line}"
        );
    }
}

#[test]
fn checking_mode_catches_root_op_signature_and_order_mismatches() {
    let last = |n: usize| {
        if n == 2 {
            "rank 1".to_string()
        } else {
            format!("rank {}", n - 1)
        }
    };
    mismatch(
        2,
        "root",
        &[
            "MPI_Bcast: collective #2 on MPI_COMM_WORLD",
            "different roots",
            "rank 0 MPI_Bcast(root=0, count=1 MPI_INT)",
            &format!("{} MPI_Bcast(root=1, count=1 MPI_INT)", last(2)),
        ],
    );
    mismatch(
        4,
        "op",
        &[
            "different operations",
            "ranks 0,1,2 MPI_Allreduce(op=MPI_SUM, count=1 MPI_INT)",
            "rank 3 MPI_Allreduce(op=MPI_MAX, count=1 MPI_INT)",
        ],
    );
    mismatch(
        7,
        "count",
        &[
            "different type signatures",
            "ranks 0,1,2,3,4,5 MPI_Reduce(root=0, op=MPI_SUM, count=1 MPI_INT)",
            "rank 6 MPI_Reduce(root=0, op=MPI_SUM, count=2 MPI_INT)",
        ],
    );
    mismatch(
        3,
        "order",
        &[
            "different collectives",
            "ranks 0,1 MPI_Bcast(root=0, count=1 MPI_INT)",
            "rank 2 MPI_Allreduce(op=MPI_SUM, count=1 MPI_INT)",
        ],
    );
    // A correct program passes every check.
    let r = run_with(7, "mismatch", &["--check"], &["ok"], |_| {});
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("done ok"), "{}", r.stdout);
}

#[test]
fn checking_mode_reports_objects_never_freed_at_finalize() {
    let r = run_with(2, "leaks", &["--check"], &[], |_| {});
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let src =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/hang/leaks.c"))
            .unwrap();
    let line_of = |call: &str| {
        src.lines()
            .position(|l| l.trim_start().starts_with(call))
            .unwrap_or_else(|| panic!("{call} not in leaks.c"))
            + 1
    };
    for rank in 0..2 {
        let line = r
            .stderr
            .lines()
            .find(|l| {
                l.starts_with(&format!(
                    "oxmpi: rank {rank}: MPI_Finalize (checking mode): objects never freed:"
                ))
            })
            .unwrap_or_else(|| panic!("no leak report from rank {rank}:\n{}", r.stderr));
        for e in [
            "1 request",
            "1 communicator",
            "1 datatype",
            "1 group",
            "1 operation",
        ] {
            assert!(line.contains(e), "{e:?} missing from {line}");
        }
        // One line per object, saying what it is and where the program made it.
        let objects: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with(&format!("oxmpi: rank {rank}: never freed: ")))
            .collect();
        assert_eq!(objects.len(), 5, "{}", r.stderr);
        for (what, detail, call) in [
            ("request", "", "MPI_Irecv"),
            ("communicator", "\"my dup\"", "MPI_Comm_dup"),
            ("datatype", "MPI_COMBINER_VECTOR", "MPI_Type_vector"),
            ("group", "", "MPI_Comm_group"),
            ("operation", "", "MPI_Op_create"),
        ] {
            let o = objects
                .iter()
                .find(|l| l.contains(&format!("never freed: {what} ")))
                .unwrap_or_else(|| panic!("no {what} in\n{}", r.stderr));
            assert!(o.contains(detail), "{detail:?} missing from {o}");
            let at = format!("made by {call} from main at ");
            assert!(
                o.contains(&at) && o.ends_with(&format!("leaks.c:{}", line_of(call))),
                "{o}: not {at}...leaks.c:{}",
                line_of(call)
            );
        }
    }
    let clean = run_with(2, "leaks", &["--check"], &["clean"], |_| {});
    assert_eq!(clean.code, Some(0), "{}", clean.stderr);
    assert!(!clean.stderr.contains("never freed"), "{}", clean.stderr);
    let unchecked = run_with(2, "leaks", &[], &[], |_| {});
    assert!(
        !unchecked.stderr.contains("never freed"),
        "{}",
        unchecked.stderr
    );
}

/// A JSON value (the trace test parses mpiexec's file with no dependency).
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    fn get(&self, k: &str) -> Option<&Json> {
        match self {
            Json::Obj(v) => v.iter().find(|(key, _)| key == k).map(|(_, v)| v),
            _ => None,
        }
    }
    fn str(&self, k: &str) -> Option<&str> {
        match self.get(k)? {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }
    fn num(&self, k: &str) -> Option<f64> {
        match self.get(k)? {
            Json::Num(n) => Some(*n),
            _ => None,
        }
    }
}

fn parse_json(text: &str) -> Result<Json, String> {
    fn ws(b: &[u8], i: &mut usize) {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    }
    fn value(b: &[u8], i: &mut usize) -> Result<Json, String> {
        ws(b, i);
        let c = *b.get(*i).ok_or("unexpected end")?;
        match c {
            b'{' => {
                *i += 1;
                let mut v = Vec::new();
                ws(b, i);
                if b.get(*i) == Some(&b'}') {
                    *i += 1;
                    return Ok(Json::Obj(v));
                }
                loop {
                    ws(b, i);
                    let Json::Str(k) = value(b, i)? else {
                        return Err(format!("key expected at {i}"));
                    };
                    ws(b, i);
                    if b.get(*i) != Some(&b':') {
                        return Err(format!("':' expected at {i}"));
                    }
                    *i += 1;
                    v.push((k, value(b, i)?));
                    ws(b, i);
                    match b.get(*i) {
                        Some(b',') => *i += 1,
                        Some(b'}') => {
                            *i += 1;
                            return Ok(Json::Obj(v));
                        }
                        _ => return Err(format!("',' or '}}' expected at {i}")),
                    }
                }
            }
            b'[' => {
                *i += 1;
                let mut v = Vec::new();
                ws(b, i);
                if b.get(*i) == Some(&b']') {
                    *i += 1;
                    return Ok(Json::Arr(v));
                }
                loop {
                    v.push(value(b, i)?);
                    ws(b, i);
                    match b.get(*i) {
                        Some(b',') => *i += 1,
                        Some(b']') => {
                            *i += 1;
                            return Ok(Json::Arr(v));
                        }
                        _ => return Err(format!("',' or ']' expected at {i}")),
                    }
                }
            }
            b'"' => {
                *i += 1;
                let start = *i;
                while *i < b.len() && b[*i] != b'"' {
                    if b[*i] == b'\\' {
                        *i += 1;
                    }
                    *i += 1;
                }
                let s = String::from_utf8_lossy(&b[start..*i]).into_owned();
                *i += 1;
                Ok(Json::Str(s))
            }
            b't' if b[*i..].starts_with(b"true") => {
                *i += 4;
                Ok(Json::Bool(true))
            }
            b'f' if b[*i..].starts_with(b"false") => {
                *i += 5;
                Ok(Json::Bool(false))
            }
            b'n' if b[*i..].starts_with(b"null") => {
                *i += 4;
                Ok(Json::Null)
            }
            _ => {
                let start = *i;
                while *i < b.len() && (b[*i].is_ascii_digit() || b"+-.eE".contains(&b[*i])) {
                    *i += 1;
                }
                std::str::from_utf8(&b[start..*i])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .map(Json::Num)
                    .ok_or(format!("bad value at {start}"))
            }
        }
    }
    let b = text.as_bytes();
    let mut i = 0;
    let v = value(b, &mut i)?;
    ws(b, &mut i);
    if i != b.len() {
        return Err(format!("trailing bytes at {i}"));
    }
    Ok(v)
}

fn trace_events(path: &Path) -> Vec<Json> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = parse_json(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    match doc.get("traceEvents") {
        Some(Json::Arr(v)) => v.clone(),
        other => panic!("no traceEvents array: {other:?}"),
    }
}

#[test]
fn trace_is_a_chrome_timeline_of_calls_and_message_flows() {
    let file = prefix().join("tests/hang/trace.json");
    let _ = std::fs::remove_file(&file);
    let r = run_with(
        4,
        "traced",
        &["--trace", file.to_str().unwrap()],
        &[],
        |_| {},
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("sum 6"), "{}", r.stdout);
    let ev = trace_events(&file);
    let calls = |rank: f64, name: &str| {
        ev.iter()
            .filter(|e| {
                e.str("ph") == Some("X")
                    && e.num("pid") == Some(rank)
                    && e.str("name") == Some(name)
            })
            .count()
    };
    for rank in 0..4 {
        let rank = rank as f64;
        for name in [
            "MPI_Sendrecv",
            "MPI_Bcast",
            "MPI_Allreduce",
            "MPI_Comm_rank",
        ] {
            assert_eq!(calls(rank, name), 1, "rank {rank}: {name} events");
        }
        assert!(
            ev.iter()
                .any(|e| e.str("ph") == Some("M") && e.num("pid") == Some(rank)),
            "rank {rank} has no name"
        );
    }
    assert_eq!(calls(0.0, "MPI_Send"), 1);
    assert_eq!(calls(1.0, "MPI_Recv"), 1);
    for e in ev.iter().filter(|e| e.str("ph") == Some("X")) {
        assert!(
            e.num("ts").is_some() && e.num("dur").is_some_and(|d| d >= 0.0),
            "{e:?}"
        );
    }
    // Every message is an arrow: a start on the sender, its end on the receiver.
    let starts: Vec<&Json> = ev.iter().filter(|e| e.str("ph") == Some("s")).collect();
    let ends: Vec<&Json> = ev.iter().filter(|e| e.str("ph") == Some("f")).collect();
    assert!(starts.len() >= 5, "{} flows", starts.len());
    assert_eq!(starts.len(), ends.len());
    for s in &starts {
        let id = s.str("id").unwrap();
        let f = ends
            .iter()
            .find(|f| f.str("id") == Some(id))
            .unwrap_or_else(|| panic!("flow {id} never received"));
        assert_eq!(
            s.get("args").and_then(|a| a.num("to")),
            f.num("pid"),
            "flow {id} ends on the wrong rank"
        );
        assert!(
            f.num("ts").unwrap() >= s.num("ts").unwrap() - 1.0,
            "flow {id} ends before it starts"
        );
    }
    // The ring's tag-1 message from rank 3 to rank 0.
    assert!(
        starts.iter().any(|s| s
            .str("id")
            .is_some_and(|id| id.starts_with("3-0-") && id.contains("-1-1"))),
        "{starts:?}"
    );

    // --trace-filter keeps only the calls asked for.
    let r = run_with(
        4,
        "traced",
        &["--trace", file.to_str().unwrap(), "--trace-filter", "Bcast"],
        &[],
        |_| {},
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ev = trace_events(&file);
    let names: std::collections::BTreeSet<&str> = ev
        .iter()
        .filter(|e| e.str("ph") == Some("X"))
        .filter_map(|e| e.str("name"))
        .collect();
    assert_eq!(names.into_iter().collect::<Vec<_>>(), vec!["MPI_Bcast"]);
}

#[test]
fn mpiexec_dump_jobid_from_another_terminal() {
    // A private socket directory, so other jobs of this user do not answer.
    let dir = std::env::temp_dir().join(format!("oxmpi-dump-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dump = |id: Option<u32>| {
        let mut c = Command::new(prefix().join("bin/mpiexec"));
        c.env("XDG_RUNTIME_DIR", &dir).arg("--dump");
        if let Some(id) = id {
            c.arg(id.to_string());
        }
        let out = c.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let mut seen = Vec::new();
    let mut job = 0;
    let r = run_with_env(
        3,
        "compute_then_barrier",
        &["--hang-after", "0.2"],
        &["6"],
        &[("XDG_RUNTIME_DIR", dir.as_os_str())],
        |pid| {
            job = pid;
            std::thread::sleep(Duration::from_secs(3));
            seen.push(dump(Some(pid)));
            seen.push(dump(None));
        },
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        !r.stderr.contains("state of"),
        "the dump goes to the asking terminal, not the job's:\n{}",
        r.stderr
    );
    for (code, out, err) in &seen {
        assert_eq!(*code, Some(0), "{out}\n{err}");
        assert!(
            out.contains(&format!("mpiexec: job {job} ("))
                && out.contains("on 3 ranks): state of its ranks:"),
            "{out}"
        );
        assert!(out.contains("rank 0: running"), "{out}");
        assert!(
            out.contains("rank 1: blocked for")
                && out.contains("in MPI_Barrier(comm=MPI_COMM_WORLD)"),
            "{out}"
        );
    }
    // The job is over: its socket is gone and asking for it says so.
    let (code, _, err) = dump(Some(job));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&format!("no running job {job}")), "{err}");
    let (code, _, err) = dump(None);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no running job of this user"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
