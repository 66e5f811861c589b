//! Start-up paths of C programs built with our `mpicc`: MPMD command lines
//! and options of our `mpiexec` (blocks, `MPI_APPNUM`, per-block environment
//! and working directory, timeouts, output files).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};

mod common;
use common::lay_out;

/// The laid-out toolchain (the same prefix as the C program tests, so the
/// disk holds one copy).
fn prefix() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| lay_out("oxmpi-capi-test"))
}

/// Compiles tests/c/<name>.c once per test binary, under a lock.
fn build(name: &str) -> PathBuf {
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(format!("{name}.c"));
    let exe = prefix().join("tests").join(format!("launch_{name}"));
    if built.iter().any(|b| b == name) {
        return exe;
    }
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    let out = Command::new(prefix().join("bin/mpicc"))
        .args(["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpicc {name}.c failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    built.push(name.to_string());
    exe
}

/// Runs `mpiexec ARGS` (one job at a time: 2 cores) under a 120 s watchdog.
fn mpiexec(args: &[&std::ffi::OsStr]) -> Output {
    static ONE: Mutex<()> = Mutex::new(());
    let _turn = ONE.lock().unwrap_or_else(|p| p.into_inner());
    Command::new("timeout")
        .arg("120")
        .arg(prefix().join("bin/mpiexec"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn sorted(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s.lines().map(str::to_string).collect();
    v.sort();
    v
}

macro_rules! os {
    ($($a:expr),* $(,)?) => { [$(std::ffi::OsStr::new(&$a)),*] };
}

#[test]
fn mpmd_blocks_share_one_world_in_block_order() {
    let exe = build("mpmd");
    let tmp = std::env::temp_dir();
    let tmp = std::fs::canonicalize(tmp).unwrap();
    let here = std::env::current_dir().unwrap();
    let o = mpiexec(&os![
        "-n",
        "1",
        "-env",
        "BLOCK_VAR",
        "ocean",
        exe,
        "a",
        ":",
        "-n",
        "3",
        "-wdir",
        tmp,
        "-env",
        "BLOCK_VAR",
        "atm",
        exe,
        "b",
        ":",
        exe,
        "c"
    ]);
    assert!(o.status.success(), "{o:?}");
    let want: Vec<String> = [
        (0, 0, "a", "ocean", &here),
        (1, 1, "b", "atm", &tmp),
        (2, 1, "b", "atm", &tmp),
        (3, 1, "b", "atm", &tmp),
        (4, 2, "c", "-", &here),
    ]
    .iter()
    .map(|(r, app, arg, var, dir)| {
        format!(
            "rank {r} of 5 appnum {app} sum 5 arg {arg} var {var} cwd {}",
            dir.display()
        )
    })
    .collect();
    assert_eq!(sorted(&text(&o.stdout)), want, "{}", text(&o.stderr));
}

#[test]
fn config_file_blocks_and_genv() {
    let exe = build("mpmd");
    let cfg = std::env::temp_dir().join(format!("oxmpi-launch-{}.cfg", std::process::id()));
    std::fs::write(
        &cfg,
        format!(
            "# two blocks\n-n 2 {} 'x y'\n-n 1 -env BLOCK_VAR own {} z\n",
            exe.display(),
            exe.display()
        ),
    )
    .unwrap();
    let o = mpiexec(&os!["-genv", "BLOCK_VAR", "all", "-configfile", cfg]);
    std::fs::remove_file(&cfg).unwrap();
    assert!(o.status.success(), "{o:?}");
    let lines = sorted(&text(&o.stdout));
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[0].starts_with("rank 0 of 3 appnum 0 sum 1 arg x y var all "),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("rank 1 of 3 appnum 0 sum 1 arg x y var all "),
        "{lines:?}"
    );
    assert!(
        lines[2].starts_with("rank 2 of 3 appnum 1 sum 1 arg z var own "),
        "{lines:?}"
    );
}

#[test]
fn a_single_block_is_appnum_zero_and_genvnone_clears_the_environment() {
    let exe = build("mpmd");
    let o = Command::new(prefix().join("bin/mpiexec"))
        .args(["-genvnone", "-n", "2"])
        .arg(&exe)
        .env("BLOCK_VAR", "inherited")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    for line in text(&o.stdout).lines() {
        assert!(line.contains("appnum 0 sum 0 arg - var - "), "{line}");
    }
    let o = Command::new(prefix().join("bin/mpiexec"))
        .args(["-genvlist", "BLOCK_VAR", "-n", "1"])
        .arg(&exe)
        .env("BLOCK_VAR", "listed")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(text(&o.stdout).contains("var listed "), "{o:?}");
}

#[test]
fn timeout_ends_the_job_with_status_124() {
    let start = std::time::Instant::now();
    let o = mpiexec(&os!["--timeout", "1", "-n", "2", "sleep", "30"]);
    assert_eq!(o.status.code(), Some(124), "{o:?}");
    assert!(
        text(&o.stderr).contains("ran out of time"),
        "{}",
        text(&o.stderr)
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    let o = Command::new(prefix().join("bin/mpiexec"))
        .args(["-n", "1", "sleep", "30"])
        .env("MPIEXEC_TIMEOUT", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(124), "{o:?}");
}

#[test]
fn output_files_per_rank() {
    let exe = build("mpmd");
    let dir = std::env::temp_dir().join(format!("oxmpi-launch-out-{}", std::process::id()));
    let pattern = dir.join("out.%r");
    let o = mpiexec(&os!["-outfile-pattern", pattern, "-n", "2", exe, "p"]);
    assert!(o.status.success(), "{o:?}");
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    for r in 0..2 {
        let got = std::fs::read_to_string(dir.join(format!("out.{r}"))).unwrap();
        assert!(got.starts_with(&format!("rank {r} of 2 appnum 0")), "{got}");
    }
    let o = mpiexec(&os![
        "--output-filename",
        dir,
        "-n",
        "2",
        "sh",
        "-c",
        "echo o$PMI_RANK; echo e$PMI_RANK >&2"
    ]);
    assert!(
        o.status.success() && o.stdout.is_empty() && o.stderr.is_empty(),
        "{o:?}"
    );
    for r in 0..2 {
        let d = dir.join(format!("1/rank.{r}"));
        assert_eq!(
            std::fs::read_to_string(d.join("stdout")).unwrap(),
            format!("o{r}\n")
        );
        assert_eq!(
            std::fs::read_to_string(d.join("stderr")).unwrap(),
            format!("e{r}\n")
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bind_to_core_pins_each_local_rank() {
    let o = mpiexec(&os![
        "--bind-to",
        "core",
        "-n",
        "2",
        "sh",
        "-c",
        "grep Cpus_allowed_list /proc/self/status"
    ]);
    assert!(o.status.success(), "{o:?}");
    let ncpu = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    for line in text(&o.stdout).lines() {
        let list = line.split_whitespace().last().unwrap();
        // One CPU each: no range, no list.
        assert!(!list.contains('-') && !list.contains(','), "{line}");
    }
    if ncpu >= 2 {
        let cpus: std::collections::BTreeSet<String> = text(&o.stdout)
            .lines()
            .map(|l| l.split_whitespace().last().unwrap().to_string())
            .collect();
        assert_eq!(cpus.len(), 2, "{}", text(&o.stdout));
    }
}

#[test]
fn unknown_options_and_bad_blocks_are_usage_errors() {
    for bad in [
        &["--frobnicate", "true"][..],
        &["-n", "1", "true", ":"],
        &["--bind-to", "socket", "true"],
    ] {
        let o = mpiexec(&bad.iter().map(std::ffi::OsStr::new).collect::<Vec<_>>());
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {o:?}");
    }
}

// ----- MPI-4 sessions -----------------------------------------------------------------

#[test]
fn sessions_before_beside_and_after_the_world_model() {
    let exe = build("sessions");
    for n in ["1", "3"] {
        let o = mpiexec(&os!["-n", n, exe]);
        assert!(
            o.status.success(),
            "on {n} ranks: {}\n{}",
            text(&o.stdout),
            text(&o.stderr)
        );
        assert!(
            text(&o.stdout).contains(&format!("sessions: all checks passed on {n} ranks")),
            "{}",
            text(&o.stdout)
        );
    }
}

#[test]
fn sessions_without_mpi_init_and_before_it() {
    let exe = build("sessions_only");
    for mode in ["only", "then-init"] {
        let o = mpiexec(&os!["-n", "3", exe, mode]);
        assert!(
            o.status.success(),
            "{mode}: {}\n{}",
            text(&o.stdout),
            text(&o.stderr)
        );
        assert_eq!(
            text(&o.stdout)
                .matches(&format!("{mode}: done on 3 ranks"))
                .count(),
            3,
            "{}",
            text(&o.stdout)
        );
        assert!(o.stderr.is_empty(), "{mode}: {}", text(&o.stderr));
    }
}

/// The lines tests/c/psets.c prints, one per rank, in rank order, with
/// whether every rank found exactly one application set of its own.
fn pset_lines(o: &Output) -> Vec<String> {
    let out = both_outputs(&o);
    assert!(o.status.success(), "{out}");
    let mut lines: Vec<String> = text(&o.stdout)
        .lines()
        .filter(|l| l.starts_with("rank "))
        .map(str::to_string)
        .collect();
    lines.sort_by_key(|l| l.split(' ').nth(1).and_then(|r| r.parse::<u32>().ok()));
    for l in &lines {
        assert!(l.ends_with(" app-psets-of-mine 1"), "{out}");
    }
    lines
}

/// An MPMD launch offers one process set per executable block to MPI-4
/// sessions (`mpix://APP/N`, after mpi://WORLD and mpi://SELF, from the
/// `MPI_APPNUM`s the launcher publishes), and a communicator can be made
/// from each; a single block is one set of the whole job.
#[test]
fn mpmd_blocks_are_process_sets_of_sessions() {
    let exe = build("psets");
    let o = mpiexec(&os![
        "-n", "1", exe, "0", "count=5", ":", "-n", "3", exe, "1", "count=5", ":", "-n", "2", exe,
        "2", "count=5"
    ]);
    let lines = pset_lines(&o);
    assert_eq!(lines.len(), 6, "{lines:?}");
    for (r, l) in lines.iter().enumerate() {
        let app = [0, 1, 1, 1, 2, 2][r];
        assert!(
            l.starts_with(&format!("rank {r} app {app} psets: mpi://WORLD mpi://SELF mpix://APP/0 mpix://APP/1 mpix://APP/2 ")),
            "{lines:?}"
        );
    }
    let o = mpiexec(&os!["-n", "2", exe, "0", "count=3"]);
    let lines = pset_lines(&o);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[1].starts_with("rank 1 app 0 psets: mpi://WORLD mpi://SELF mpix://APP/0 "),
        "{lines:?}"
    );
}

// ----- shared memory left behind -----------------------------------------------------

/// The oxmpi entries of /dev/shm.
fn shm_entries() -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("oxmpi-"))
                .collect()
        })
        .unwrap_or_default()
}

/// The oxmpi entries of /dev/shm whose names start with `prefix`.
fn shm_entries_starting(prefix: &str) -> Vec<String> {
    shm_entries()
        .into_iter()
        .filter(|n| n.starts_with(prefix))
        .collect()
}

/// A finished job's standard output, then its standard error.
fn both_outputs(o: &Output) -> String {
    format!("{}\n{}", text(&o.stdout), text(&o.stderr))
}

/// Fails the test (naming `what` and showing the job's output) if a
/// segment appeared since `before` whose creator is dead.
fn assert_nothing_orphaned_since(before: &[String], what: &str, out: &str) {
    let orphans = orphaned_since(before);
    assert!(
        orphans.is_empty(),
        "{what}: orphaned in /dev/shm: {orphans:?}\n{out}"
    );
}

/// Entries of /dev/shm not in `before` whose creator (the `-p<PID>` the
/// engine ends their names with) is dead: segments nobody will unlink.
fn orphaned_since(before: &[String]) -> Vec<String> {
    shm_entries()
        .into_iter()
        .filter(|n| !before.contains(n))
        .filter(|n| {
            n.rsplit_once("-p")
                .and_then(|(_, p)| p.parse::<u32>().ok())
                .is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists())
        })
        .collect()
}

/// The pid of a process that has ended.
fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

/// Our `mpiexec ARGS` under a 120 s watchdog: its pid and how it ended.
fn mpiexec_with_pid(args: &[&std::ffi::OsStr]) -> (u32, Output) {
    let child = Command::new(prefix().join("bin/mpiexec"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    std::thread::spawn(move || {
        for _ in 0..1200 {
            if flag.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = Command::new("kill")
            .arg("-KILL")
            .arg(pid.to_string())
            .status();
    });
    let out = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    (pid, out)
}

/// No job leaves a shared-memory segment in /dev/shm: not when it ends
/// normally, nor when a rank is killed (SIGKILL), nor after MPI_Abort, nor
/// with spawned children; under our `mpiexec` (nothing of its job family
/// `oxmpi-kvs_PID_*` left) and under Open MPI's `mpirun` (which cleans
/// nothing of ours: no new segment whose creator is dead). And a segment
/// whose creator died while its job started (a rank killed then, under a
/// launcher that does not sweep) is removed by the next job on the host.
#[test]
fn no_shared_memory_is_left_when_jobs_end() {
    if !Path::new("/dev/shm").is_dir() {
        assert!(std::env::var_os("CI").is_none(), "CI: no /dev/shm");
        return;
    }
    let exe = build("shm_end");
    let spawn = build("spawn");
    let dead = dead_pid();
    let stale = PathBuf::from(format!("/dev/shm/oxmpi-kvs_{dead}_0-0-p{dead}"));
    let f = std::fs::File::create(&stale).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(1200))
        .unwrap();
    drop(f);
    let before = shm_entries();
    let cases: [(&str, Vec<&std::ffi::OsStr>, i32); 4] = [
        ("normal end", os!["-n", "3", exe, "normal"].to_vec(), 0),
        (
            "a rank killed",
            os!["-n", "3", exe, "kill"].to_vec(),
            128 + 9,
        ),
        ("MPI_Abort", os!["-n", "3", exe, "abort"].to_vec(), 5),
        (
            "spawned children",
            os!["-n", "2", spawn, "parent", "2"].to_vec(),
            0,
        ),
    ];
    for (what, args, code) in &cases {
        let (pid, o) = mpiexec_with_pid(args);
        let out = both_outputs(&o);
        assert_eq!(o.status.code(), Some(*code), "{what}:\n{out}");
        let left = shm_entries_starting(&format!("oxmpi-kvs_{pid}_"));
        assert!(left.is_empty(), "{what}: left in /dev/shm: {left:?}\n{out}");
        assert_nothing_orphaned_since(&before, what, &out);
    }
    assert!(
        !stale.exists(),
        "the segment of a dead creator was not swept"
    );
    let Some(mpirun) = open_mpi_mpirun() else {
        return;
    };
    for (what, mode, code) in [
        ("normal end", "normal", Some(0)),
        ("a rank killed", "kill", None),
        ("MPI_Abort", "abort", Some(5)),
    ] {
        let o = open_mpi_run(mpirun, &os!["-n", "3", exe, mode]);
        let out = both_outputs(&o);
        assert_ne!(
            o.status.code(),
            Some(124),
            "{what} under mpirun: hung\n{out}"
        );
        if let Some(c) = code {
            assert_eq!(o.status.code(), Some(c), "{what} under mpirun:\n{out}");
        }
        assert_nothing_orphaned_since(&before, &format!("{what} under mpirun"), &out);
    }
}

/// A launcher that dies while its ranks start (the PMI connection closes
/// when every rank waits in the barrier after the host's shared-memory
/// segment was created, before the others opened it): the ranks fail to
/// start, and the segment's creator unlinks it on its way out. Played by a
/// PMI-1 server of our own (oxmpi_pmi's state machine) over a socket that is
/// each rank's stdin (`PMI_FD=0`), so nobody sweeps /dev/shm after the ranks.
#[test]
fn a_launcher_dying_mid_start_leaves_no_shared_memory() {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixStream;
    if !Path::new("/dev/shm").is_dir() {
        assert!(std::env::var_os("CI").is_none(), "CI: no /dev/shm");
        return;
    }
    let exe = build("shm_end");
    let size = 2u32;
    let kvs = format!("kvs_midstart{}_0", std::process::id());
    let prefix = format!("oxmpi-{kvs}-");
    let mut server = oxmpi_pmi::PmiServer::new(kvs.clone(), size);
    server.set_process_mapping(oxmpi_pmi::single_node_mapping(size));
    let (tx, rx) = std::sync::mpsc::channel::<(u32, Option<String>)>();
    let mut writers = Vec::new();
    let mut children = Vec::new();
    for r in 0..size {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let child = Command::new(&exe)
            .arg("normal")
            .env("PMI_FD", "0")
            .env("PMI_RANK", r.to_string())
            .env("PMI_SIZE", size.to_string())
            .env_remove("PMI_PORT")
            .env_remove("OXMPI_PMI")
            .env_remove("PMIX_RANK")
            .env_remove("PMIX_NAMESPACE")
            .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        children.push(child);
        let reader = BufReader::new(ours.try_clone().unwrap());
        writers.push(Some(ours));
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in reader.lines().map_while(|l| l.ok()) {
                let _ = tx.send((r, Some(line)));
            }
            let _ = tx.send((r, None));
        });
    }
    drop(tx);
    let mut cut = Vec::new();
    while let Ok((r, line)) = rx.recv_timeout(std::time::Duration::from_secs(60)) {
        let Some(line) = line else { continue };
        let out = server.handle_line(r, &line);
        let releases_barrier = out
            .replies
            .iter()
            .any(|(_, l)| l.contains("cmd=barrier_out"));
        if releases_barrier && cut.is_empty() {
            cut = shm_entries_starting(&prefix);
            if !cut.is_empty() {
                // The launcher dies: every rank's connection closes.
                for w in writers.iter_mut() {
                    if let Some(w) = w.take() {
                        let _ = w.shutdown(std::net::Shutdown::Both);
                    }
                }
                break;
            }
        }
        for (to, l) in out.replies {
            if let Some(w) = writers[to as usize].as_mut() {
                let _ = w.write_all(l.as_bytes());
            }
        }
    }
    drop(writers);
    let mut outs = String::new();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(
            !o.status.success(),
            "a rank started without its launcher: {o:?}"
        );
        outs.push_str(&format!("{}{}", text(&o.stdout), text(&o.stderr)));
    }
    assert!(
        !cut.is_empty(),
        "the ranks never created their segment:\n{outs}"
    );
    let left = shm_entries_starting(&prefix);
    assert!(
        left.is_empty(),
        "left in /dev/shm after the launcher died: {left:?} (created: {cut:?})\n{outs}"
    );
}

// ----- PMIx start-up ------------------------------------------------------------------

/// Open MPI's launcher (Debian's `openmpi-bin`: `mpirun.openmpi`, whose
/// daemons serve PMIx), or why the PMIx test cannot run. Without it the test
/// is skipped, except under CI (where `.ci/run` installs openmpi-bin and
/// libpmix-dev): then it fails.
fn open_mpi_mpirun() -> Option<&'static str> {
    for cand in ["mpirun.openmpi", "orterun", "prterun"] {
        if Command::new(cand)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return Some(cand);
        }
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI: Open MPI's mpirun (openmpi-bin) is not installed"
    );
    eprintln!("SKIP: Open MPI's mpirun (openmpi-bin) is not installed");
    None
}

/// `mpirun ARGS` from Open MPI, as root if need be, oversubscribing the cores.
fn open_mpi_run(mpirun: &str, args: &[&std::ffi::OsStr]) -> Output {
    open_mpi_run_within(120, mpirun, args)
}

/// [`open_mpi_run`] ended by `timeout` (status 124) after `seconds`.
fn open_mpi_run_within(seconds: u32, mpirun: &str, args: &[&std::ffi::OsStr]) -> Output {
    static ONE: Mutex<()> = Mutex::new(());
    let _turn = ONE.lock().unwrap_or_else(|p| p.into_inner());
    Command::new("timeout")
        .arg(seconds.to_string())
        .arg(mpirun)
        .arg("--oversubscribe")
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        // Ours would win over the PMIx server's variables otherwise.
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env_remove("OXMPI_PMI")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn ranks_start_under_open_mpi_mpirun_through_pmix() {
    let Some(mpirun) = open_mpi_mpirun() else {
        return;
    };
    // Collectives and point-to-point on 4 ranks started by Open MPI's daemons.
    let coll = build("coll");
    let o = open_mpi_run(mpirun, &os!["-n", "4", coll]);
    assert!(
        o.status.success(),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert!(
        text(&o.stdout).contains("all checks passed on 4 ranks"),
        "{}",
        text(&o.stdout)
    );
    let p2p = build("p2p");
    let o = open_mpi_run(mpirun, &os!["-n", "3", p2p]);
    assert!(
        o.status.success(),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert!(
        text(&o.stdout).contains("all checks passed on 3 ranks"),
        "{}",
        text(&o.stdout)
    );
    // MPMD: MPI_APPNUM comes from PMIx (pmix.appnum), the blocks share one world.
    let exe = build("mpmd");
    let o = open_mpi_run(mpirun, &os!["-n", "1", exe, "a", ":", "-n", "2", exe, "b"]);
    assert!(
        o.status.success(),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let lines = sorted(&text(&o.stdout));
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[0].starts_with("rank 0 of 3 appnum 0 sum 2 arg a "),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("rank 1 of 3 appnum 1 sum 2 arg b "),
        "{lines:?}"
    );
    assert!(
        lines[2].starts_with("rank 2 of 3 appnum 1 sum 2 arg b "),
        "{lines:?}"
    );
    // Sessions: one process set per application context from each process's
    // pmix.appnum; the server's own process sets (PMIx_Query_info of
    // pmix.qry.psets, each process's pmix.pset.nm) are none under Open MPI
    // 4.1's mpirun, which answers NOT-FOUND: listed are only ours, no error.
    let ps = build("psets");
    let o = open_mpi_run(
        mpirun,
        &os!["-n", "2", ps, "0", "count=4", ":", "-n", "1", ps, "1", "count=4"],
    );
    let lines = pset_lines(&o);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[2]
            .starts_with("rank 2 app 1 psets: mpi://WORLD mpi://SELF mpix://APP/0 mpix://APP/1 "),
        "{lines:?}"
    );
    // MPI_Abort reaches the PMIx server (PMIx_Abort), which ends the job with its code.
    let ea = build("env_attr");
    let o = open_mpi_run(mpirun, &os!["-n", "3", ea, "abort"]);
    assert_eq!(
        o.status.code(),
        Some(7),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
}

/// MPI_Comm_spawn and _multiple under Open MPI's `mpirun`: the root asks the
/// PMIx server (`PMIx_Spawn`) to start the children, which boot through PMIx
/// in a namespace of their own, learn the parents' port from the environment
/// the spawn gave them and connect back; parents and children then run
/// point-to-point, bcast, allreduce and merge over the intercommunicator
/// (tests/c/spawn.c; `wdir` reaches the children, argv too; `path` and
/// `file` are read at the root). A host the
/// server will not start processes on is MPI_ERR_SPAWN, returned to every
/// parent, which go on and finish; the job then ends by itself (Open MPI
/// 4.1's `mpirun` keeps the job it failed to map pending, and would wait for
/// it forever, with its own programs too, had the root not killed it with
/// PMIx_Job_control: mpirun then exits with status 1).
#[test]
fn spawn_under_open_mpi_mpirun_through_pmix() {
    let Some(mpirun) = open_mpi_mpirun() else {
        return;
    };
    let exe = build("spawn");
    for (parents, children) in [(1, 2), (2, 3)] {
        let o = open_mpi_run(
            mpirun,
            &os![
                "-n",
                parents.to_string(),
                exe,
                "parent",
                children.to_string()
            ],
        );
        let out = both_outputs(&o);
        assert!(
            o.status.success(),
            "{parents} parents, {children} children:\n{out}"
        );
        assert!(
            out.contains(&format!(
                "parent checks passed ({parents} parents, {children} children)"
            )),
            "{out}"
        );
        assert!(
            out.contains(&format!("child checks passed on {children} children")),
            "{out}"
        );
    }
    // The program by its bare name through info `path`, keys read from info `file`.
    let o = open_mpi_run(mpirun, &os!["-n", "2", exe, "infofile", "2"]);
    let out = both_outputs(&o);
    assert!(o.status.success(), "info file and path:\n{out}");
    assert!(
        out.contains("parent checks passed (2 parents, 2 children)")
            && out.contains("child checks passed on 2 children"),
        "{out}"
    );
    let o = open_mpi_run(mpirun, &os!["-n", "2", exe, "multiple"]);
    let out = both_outputs(&o);
    assert!(
        o.status.success()
            && out.contains("spawn_multiple parent passed")
            && out.contains("spawn_multiple children passed"),
        "{out}"
    );
    assert!(
        out.contains("spawn_multiple children app psets 2\n"),
        "{out}"
    );
    let o = open_mpi_run_within(
        60,
        mpirun,
        &os!["-n", "2", exe, "badhost", "oxmpi-no-such-host"],
    );
    let out = both_outputs(&o);
    assert_ne!(
        o.status.code(),
        Some(124),
        "mpirun hung after the refused spawn:\n{out}"
    );
    assert!(o.status.code().is_some(), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("spawn on oxmpi-no-such-host refused: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("MPI_Comm_spawn")
            && line.contains("PMIx_Spawn")
            && line.contains("MPI_ERR_SPAWN"),
        "{line}"
    );
}

/// Under a PMIx server that does not start processes (Slurm's `mpi/pmix`
/// plugin answers `PMIx_Spawn` with PMIX_ERR_NOT_SUPPORTED), MPI_Comm_spawn
/// is MPI_ERR_UNSUPPORTED_OPERATION naming itself and PMIx_Spawn, returned to
/// every parent. Needs a Slurm cluster with that plugin (tests/slurm/setup.sh;
/// required under CI with OXMPI_TEST_SLURM=1, as in crates/oxmpi-tests/tests/slurm.rs).
/// Whether a Slurm cluster with the mpi/pmix plugin answers; skips (false)
/// without one, except under CI with OXMPI_TEST_SLURM=1, where it fails.
fn slurm_with_pmix() -> bool {
    let required = std::env::var_os("CI").is_some()
        && std::env::var("OXMPI_TEST_SLURM").is_ok_and(|v| v == "1");
    let answers = Command::new("timeout")
        .args(["10", "sinfo", "-h"])
        .output()
        .is_ok_and(|o| o.status.success());
    let plugins = Command::new("srun")
        .arg("--mpi=list")
        .output()
        .map(|o| format!("{}{}", text(&o.stdout), text(&o.stderr)))
        .unwrap_or_default();
    let has_pmix = plugins.lines().any(|l| {
        l.trim()
            .trim_start_matches("MPI plugin types are...")
            .trim()
            .starts_with("pmix")
    });
    if !answers || !has_pmix {
        assert!(!required, "CI with OXMPI_TEST_SLURM=1: no Slurm cluster with the mpi/pmix plugin (sinfo answers: {answers}):\n{plugins}");
        eprintln!("SKIP: no Slurm cluster with the mpi/pmix plugin");
        return false;
    }
    true
}

/// Sessions under `srun --mpi=pmix`: the application set comes from each
/// process's pmix.appnum, and Slurm's PMIx server, which defines no process
/// sets, adds none (its answer to PMIx_Query_info is not an error).
#[test]
fn psets_under_srun_pmix() {
    if !slurm_with_pmix() {
        return;
    }
    let exe = build("psets");
    let o = Command::new("timeout")
        .args(["120", "srun", "--mpi=pmix", "-n", "2"])
        .arg(&exe)
        .args(["0", "count=3"])
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env_remove("OXMPI_PMI")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let lines = pset_lines(&o);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[1].starts_with("rank 1 app 0 psets: mpi://WORLD mpi://SELF mpix://APP/0 "),
        "{lines:?}"
    );
}

#[test]
fn spawn_under_srun_pmix_is_unsupported_and_named() {
    if !slurm_with_pmix() {
        return;
    }
    let exe = build("spawn");
    let o = Command::new("timeout")
        .args(["120", "srun", "--mpi=pmix", "-n", "2"])
        .arg(&exe)
        .arg("unsupported")
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env_remove("OXMPI_PMI")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let out = both_outputs(&o);
    assert!(o.status.success(), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("spawn refused: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("MPI_Comm_spawn")
            && line.contains("PMIx_Spawn")
            && line.contains("MPI_ERR_UNSUPPORTED_OPERATION"),
        "{line}"
    );
}

/// MPI_Publish_name, MPI_Lookup_name and MPI_Unpublish_name under Open MPI's
/// `mpirun` go to its data server (`PMIx_Publish`/`_Lookup`/`_Unpublish`):
/// a name published by rank 0 is found by rank 1; publishing it twice and
/// unpublishing it twice are MPI_ERR_SERVICE, a name nobody published
/// MPI_ERR_NAME naming PMIx_Lookup (tests/c/connect_accept.c `names`).
#[test]
fn names_under_open_mpi_mpirun_through_pmix() {
    let Some(mpirun) = open_mpi_mpirun() else {
        return;
    };
    let exe = build("connect_accept");
    let service = format!("oxmpi-launch-test-{}", std::process::id());
    let o = open_mpi_run(mpirun, &os!["-n", "2", exe, "names", service]);
    let out = both_outputs(&o);
    assert!(o.status.success() && out.contains("names passed"), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("lookup refused: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("MPI_Lookup_name")
            && line.contains("PMIx_Lookup")
            && line.contains("MPI_ERR_NAME"),
        "{line}"
    );
}
