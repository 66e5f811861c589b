//! C programs under tests/c, compiled with our `mpicc` and run with our
//! `mpiexec`. The test lays the toolchain out itself (`cargo xtask dist --debug
//! --prefix target/oxmpi-capi-test`), once per test binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

mod common;
use common::{lay_out, target_dir, workspace};

/// The laid-out toolchain (built once).
fn prefix() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| lay_out("oxmpi-capi-test"))
}

/// Compiles tests/c/<name>.c with mpicc (extra args appended); returns the executable.
///
/// Each program is compiled once per test binary: tests run on parallel threads, and
/// rewriting an executable another test is starting fails that start (ETXTBSY).
fn build(name: &str, extra: &[&str]) -> PathBuf {
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(format!("{name}.c"));
    let exe = prefix().join("tests").join(name);
    if built.iter().any(|b| b == name) {
        return exe;
    }
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    let out = Command::new(prefix().join("bin/mpicc"))
        .args(["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-o"])
        .arg(&exe)
        .arg(&src)
        .args(extra)
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

/// Runs on `n` ranks, one job at a time (2 cores), with a watchdog.
fn run(n: usize, exe: &Path, args: &[&str]) -> Output {
    run_env(n, exe, args, &[])
}

/// [`run`] with environment variables set for the job.
fn run_env(n: usize, exe: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    static ONE: Mutex<()> = Mutex::new(());
    let _turn = ONE.lock().unwrap_or_else(|p| p.into_inner());
    let child = Command::new(prefix().join("bin/mpiexec"))
        .envs(envs.iter().copied())
        .arg("-n")
        .arg(n.to_string())
        .arg(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_with_watchdog(child, Duration::from_secs(120))
}

fn ok(n: usize, name: &str) -> String {
    ok_env(n, name, &[])
}

/// [`ok`] with environment variables set for the job.
fn ok_env(n: usize, name: &str, envs: &[(&str, &str)]) -> String {
    let exe = build(name, &[]);
    let out = run_env(n, &exe, &[], envs);
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "{name} on {n} ranks failed ({:?})\n--- stdout\n{so}\n--- stderr\n{se}",
        out.status
    );
    so
}

#[test]
fn hello_and_ring() {
    let so = ok(4, "hello");
    for r in 0..4 {
        assert!(so.contains(&format!("hello from rank {r} of 4")), "{so}");
    }
    ok(1, "hello");
}

#[test]
fn point_to_point_suite() {
    assert!(ok(4, "p2p").contains("all checks passed on 4 ranks"));
    ok(2, "p2p");
    ok(1, "p2p");
}

#[test]
fn datatypes_from_the_textbook_and_pack() {
    assert!(ok(4, "dtype").contains("all checks passed"));
    ok(1, "dtype");
}

#[test]
fn bad_arguments_return_the_right_class() {
    assert!(ok(3, "badargs").contains("all checks passed"));
}

/// NULL pointers given to calls whose pointer checks gen.rs writes (abi.txt `out(...)`,
/// `nonnull(...)`, `made(...)`, `array(P, LEN)`, `lenquery(P, LEN)`): MPI_ERR_ARG naming
/// the call and the argument, nothing done (a constructor leaves the null handle); an
/// empty array is not looked at.
#[test]
fn null_pointer_arguments_name_the_call_and_argument() {
    assert!(ok(2, "null_args").contains("all checks passed"));
}

#[test]
fn collectives_on_one_to_five_ranks() {
    for n in 1..=5 {
        assert!(ok(n, "coll").contains(&format!("all checks passed on {n} ranks")));
    }
}

/// Gatherv, scatterv and alltoallv on the shared-memory path (larger blocks
/// point-to-point beside it), zero counts on some ranks, MPI_IN_PLACE, a strided
/// type on either side, every root, on 2, 3 and 4 ranks; then forced from the
/// first call (`OXMPI_<COLL>_ALGORITHM=shm`) and forced off (`linear`).
#[test]
fn allgatherv_ranks_may_place_equal_blocks_at_their_own_displacements() {
    // The displacements are rank-local: the ranks must agree on the algorithm
    // anyway (it once read them, and ranks with different layouts hung).
    for n in [2, 3, 4, 8] {
        assert!(ok(n, "allgatherv_displs").contains(&format!("all checks passed on {n} ranks")));
    }
}

#[test]
fn gatherv_scatterv_shared_memory_path() {
    for n in [2, 3, 4] {
        assert!(ok(n, "coll_v_shm").contains(&format!("all checks passed on {n} ranks")));
    }
    let exe = build("coll_v_shm", &[]);
    for (n, alg) in [(3, "shm"), (4, "shm"), (3, "linear")] {
        let env = [
            ("OXMPI_GATHERV_ALGORITHM", alg),
            ("OXMPI_SCATTERV_ALGORITHM", alg),
            ("OXMPI_ALLTOALLV_ALGORITHM", alg),
        ];
        let out = run_env(n, &exe, &[], &env);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && so.contains(&format!("all checks passed on {n} ranks")),
            "{alg} on {n} ranks:\n{so}\n{se}"
        );
    }
}

/// NULL with a nonzero count of a non-contiguous datatype (data in the null page) in
/// every collective form: MPI_ERR_BUFFER naming the call and the argument on every
/// rank, no crash, and the communicator still in step afterwards.
#[test]
fn collectives_given_null_buffers_of_noncontiguous_types_return_err_buffer() {
    assert!(ok(3, "coll_null_noncontig").contains("all checks passed"));
    ok(1, "coll_null_noncontig");
}

#[test]
fn communicators_attributes_groups_intercommunicators() {
    for n in [1, 2, 3, 4, 5] {
        assert!(ok(n, "comm").contains(&format!("all checks passed on {n} ranks")));
    }
}

#[test]
fn comm_create_group_evens_and_odds_concurrently() {
    for n in 1..=5 {
        assert!(ok(n, "create_group").contains(&format!("all checks passed on {n} ranks")));
    }
}

#[test]
fn datatype_attributes_copy_and_delete_callbacks() {
    assert!(ok(2, "type_attr").contains("all checks passed on 2 ranks"));
    ok(1, "type_attr");
}

#[test]
fn topologies_cartesian_halo_and_shuffle_exchange_graph() {
    assert!(ok(4, "topo").contains("all checks passed on 4 ranks"));
    assert!(ok(8, "topo").contains("all checks passed on 8 ranks"));
    ok(1, "topo");
}

#[test]
fn bad_arguments_to_collectives_communicators_groups_topologies() {
    assert!(ok(3, "badcomm").contains("all checks passed"));
    ok(1, "badcomm");
}

#[test]
fn collectives_handle_lookups_name_the_call_and_argument_and_take_user_handles() {
    assert!(ok(2, "coll_handles").contains("all checks passed on 2 ranks"));
    assert!(ok(3, "coll_handles").contains("all checks passed on 3 ranks"));
    ok(1, "coll_handles");
}

#[test]
fn default_error_handler_names_the_call_and_ends_the_job() {
    let exe = build("badargs", &[]);
    let out = run(2, &exe, &["fatal"]);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{se}");
    assert!(
        se.contains("oxmpi: rank 0: MPI_Send")
            && se.contains("`dest`")
            && se.contains("(MPI_ERR_RANK)"),
        "{se}"
    );
    let out = run(1, &exe, &["fatal-type"]);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{se}");
    assert!(
        se.contains("MPI_Send") && se.contains("not committed") && se.contains("(MPI_ERR_TYPE)"),
        "{se}"
    );
}

#[test]
fn type_signature_checking_of_mixed_types() {
    let exe = build("sigcheck", &[]);
    for (n, args) in [(2, &["check"][..]), (1, &["check"]), (2, &[])] {
        let out = run(n, &exe, args);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && so.contains("all checks passed"),
            "sigcheck {args:?} on {n} ranks\n{so}\n{se}"
        );
    }
    let out = run(2, &exe, &["fatal"]);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{se}");
    let want = "MPI_Recv: type signature mismatch: the message from rank 0 (tag 3) holds 1 x {MPI_INT, MPI_DOUBLE} \
                but the receive expects 1 x {MPI_DOUBLE, MPI_INT}";
    assert!(se.contains(want) && se.contains("(MPI_ERR_TYPE)"), "{se}");
}

#[test]
fn pmpi_interposition() {
    let so = ok(3, "pmpi");
    assert!(so.contains("rank 0 intercepted 6 sends"), "{so}");
    assert!(so.contains("rank 1 intercepted 0 sends"), "{so}");
}

#[test]
fn static_library_links_too() {
    let p = prefix();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/hello.c");
    let exe = p.join("tests/hello_static");
    let st = Command::new("cc")
        .arg(format!("-I{}", p.join("include").display()))
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .arg(p.join("lib/libmpi.a"))
        .args(["-lpthread", "-ldl", "-lm"])
        .status()
        .unwrap();
    assert!(st.success());
    let out = run(2, &exe, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn header_and_library_agree() {
    let p = prefix();
    let header = std::fs::read_to_string(p.join("include/mpi.h")).unwrap();
    assert_eq!(
        header,
        mpi::MPI_H,
        "the laid-out mpi.h differs from the one the library was built with"
    );
    let nm = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(p.join("lib/libmpi.so"))
        .output()
        .unwrap();
    let syms = String::from_utf8_lossy(&nm.stdout);
    for f in mpi::abi::FUNCTIONS {
        for name in [f.to_string(), format!("P{f}")] {
            assert!(
                syms.lines()
                    .any(|l| l.split_whitespace().last() == Some(name.as_str())),
                "{name} is declared but not exported"
            );
        }
    }
    // Every exported MPI_ function is declared.
    for l in syms.lines() {
        if let Some(name) = l
            .split_whitespace()
            .last()
            .filter(|n| n.starts_with("MPI_"))
        {
            assert!(
                mpi::abi::FUNCTIONS.contains(&name),
                "{name} is exported but not declared in mpi.h"
            );
        }
    }
    let so = p.join("lib/libmpi.so");
    let re = Command::new("readelf").arg("-d").arg(&so).output().unwrap();
    assert!(
        String::from_utf8_lossy(&re.stdout).contains("[libmpi_abi.so.1]"),
        "SONAME is the standard ABI's"
    );
    // mpicc -show prints, and adds no link flags with -c.
    let show = Command::new(p.join("bin/mpicc"))
        .args(["-show", "-c", "x.c"])
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&show.stdout);
    assert!(s.contains("-I") && !s.contains("-lmpi"), "{s}");
    let show = Command::new(p.join("bin/mpicc"))
        .args(["-show", "x.c", "-o", "x"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&show.stdout).contains("-lmpi"));
    // C++ compiles against the header.
    if Command::new("c++").arg("--version").output().is_ok() {
        let src = p.join("tests/cxx.cpp");
        std::fs::write(&src, "#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n").unwrap();
        let st = Command::new(p.join("bin/mpicxx"))
            .arg("-o")
            .arg(p.join("tests/cxx"))
            .arg(&src)
            .status()
            .unwrap();
        assert!(st.success(), "mpicxx failed");
    }
}

#[test]
fn spawn_of_a_missing_program_fails_no_parent_disconnect_frees() {
    assert!(ok(2, "dynamic").contains("all checks passed"));
    let exe = build("dynamic", &[]);
    let out = run(2, &exe, &["fatal"]);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{se}");
    assert!(
        se.contains("MPI_Comm_spawn")
            && se.contains("(MPI_ERR_SPAWN)")
            && se.contains("/nonexistent/oxmpi-test"),
        "{se}"
    );
}

/// Runs `mpiexec -n N spawn ARGS` (with `pre` options) and returns (success, stdout+stderr).
fn run_spawn(n: usize, pre: &[&str], args: &[&str]) -> (bool, String) {
    let exe = build("spawn", &[]);
    let out = Command::new("timeout")
        .arg("120")
        .arg(prefix().join("bin/mpiexec"))
        .args(pre)
        .arg("-n")
        .arg(n.to_string())
        .arg(&exe)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn spawn_one_and_three_children_from_one_and_two_parents_argv_info_p2p_collectives_disconnect() {
    for (parents, children) in [(1, 1), (1, 3), (2, 1), (2, 3)] {
        let (ok, out) = run_spawn(parents, &[], &["parent", &children.to_string()]);
        assert!(ok, "{parents} parents, {children} children:\n{out}");
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
}

#[test]
fn spawn_multiple_of_two_commands_appnum_and_errcodes() {
    let (ok, out) = run_spawn(2, &["-usize", "8"], &["multiple"]);
    assert!(
        ok && out.contains("spawn_multiple parent passed")
            && out.contains("spawn_multiple children passed"),
        "{out}"
    );
    // The children's sessions offer one process set per command.
    assert!(
        out.contains("spawn_multiple children app psets 2\n"),
        "{out}"
    );
}

#[test]
fn a_spawned_child_that_dies_ends_the_job_and_is_named() {
    let (ok, out) = run_spawn(2, &[], &["dies"]);
    assert!(!ok && !out.contains("not reached"), "{out}");
    assert!(
        out.contains("spawned process 0 of spawned job 1") && out.contains("status 3"),
        "{out}"
    );
    let (ok, out) = run_spawn(1, &[], &["missing"]);
    assert!(
        ok && out.contains("missing program refused") && out.contains("MPI_ERR_SPAWN"),
        "{out}"
    );
}

/// Processes whose environment holds `OXMPI_TEST_MARK=mark` (mpiexec passes
/// its environment to the ranks and to the processes they spawn).
fn processes_marked(mark: &str) -> Vec<String> {
    let want = format!("OXMPI_TEST_MARK={mark}");
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(env) = std::fs::read(e.path().join("environ")) {
            if env.split(|&b| b == 0).any(|v| v == want.as_bytes()) {
                let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
                found.push(format!(
                    "pid {name}: {}",
                    String::from_utf8_lossy(&cmd).replace('\0', " ")
                ));
            }
        }
    }
    found
}

/// After mpiexec (pid `pid`) ended: nothing of its job or of the jobs it
/// spawned (`kvs_PID_J`) is left in /dev/shm, and no process it started lives.
fn assert_nothing_left(pid: u32, mark: &str, what: &str) {
    let prefix = format!("oxmpi-kvs_{pid}_");
    // A process being torn down may take a moment to leave /proc.
    let mut left = processes_marked(mark);
    for _ in 0..20 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        left = processes_marked(mark);
    }
    assert!(left.is_empty(), "{what}: processes left: {left:?}");
    let shm: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(shm.is_empty(), "{what}: left in /dev/shm: {shm:?}");
}

/// A job with spawned children leaves no process and no /dev/shm entry
/// behind, when it ends normally and when a spawned child is killed.
#[test]
fn spawned_jobs_leave_no_process_and_no_shared_memory() {
    use std::io::BufRead;
    let exe = build("spawn", &[]);
    let mark = format!("spawn-cleanup-{}", std::process::id());
    let mpiexec = |args: &[&str]| {
        Command::new(prefix().join("bin/mpiexec"))
            .env("OXMPI_TEST_MARK", &mark)
            .args(["-n", "2"])
            .arg(&exe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Normal end: 2 parents, 3 children (a job on one host with its own segment).
    let child = mpiexec(&["parent", "3"]);
    let pid = child.id();
    let out = common::wait_with_watchdog(child, Duration::from_secs(120));
    let so = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && so.contains("child checks passed on 3 children"),
        "{so}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_nothing_left(pid, &mark, "after a normal end");

    // A spawned child killed while the job waits on it.
    let mut child = mpiexec(&["killed"]);
    let pid = child.id();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(|l| l.ok())
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let victim = loop {
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                if let Some(p) = line.split("hang child pid ").nth(1) {
                    break p.trim().to_string();
                }
            }
            Err(e) => {
                let _ = child.kill();
                panic!("no spawned child reported its pid: {e}");
            }
        }
    };
    assert!(Command::new("kill")
        .args(["-KILL", &victim])
        .status()
        .unwrap()
        .success());
    let out = common::wait_with_watchdog(child, Duration::from_secs(60));
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && se.contains("spawned process 0 of spawned job 1")
            && se.contains("SIGKILL"),
        "{:?}\n{se}",
        out.status
    );
    assert!(rx.try_iter().all(|l| !l.contains("not reached")));
    assert_nothing_left(pid, &mark, "after a spawned child was killed");
}

/// The info key `host`: two parents on one host (network namespace) spawn two
/// children on the other, which talk to them (p2p, collectives, merge) and
/// disconnect. A host this mpiexec cannot reach (started without hosts) is
/// refused with MPI_ERR_SPAWN.
#[test]
fn spawn_on_another_host_with_the_host_info_key() {
    let exe = build("spawn", &[]);
    let out = Command::new("timeout")
        .arg("120")
        .arg(prefix().join("bin/mpiexec"))
        .args(["-n", "1"])
        .arg(&exe)
        .args(["remote", "elsewhere.invalid"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && se.contains("MPI_ERR_SPAWN")
            && se.contains("host=\"elsewhere.invalid\""),
        "{se}"
    );
    if !netns_hosts() {
        return;
    }
    let out = Command::new("timeout")
        .arg("120")
        .arg(prefix().join("bin/mpiexec"))
        .args([
            "-n",
            "2",
            "-hosts",
            "oxmpi-h1:2",
            "--launcher-exec",
            "ip netns exec",
            "--pmi-bind",
            "10.213.0.1",
        ])
        .arg(&exe)
        .args(["remote", "oxmpi-h2"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success()
            && so.contains("remote spawn parent passed")
            && so.contains("remote children passed on 2 children"),
        "{so}\n{se}"
    );
}

/// MPI_THREAD_MULTIPLE: three threads per parent rank spawn over their own
/// duplicates of MPI_COMM_WORLD (different roots) while a fourth spawns over
/// MPI_COMM_SELF, twice each; every intercommunicator reaches its own
/// children only (MPICH's threads/spawn/th_taskmanager in miniature).
#[test]
fn concurrent_spawns_from_threads_get_their_own_children() {
    let exe = build("spawn_threads", &["-pthread"]);
    for n in [1, 2, 3] {
        let out = run(n, &exe, &[]);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success()
                && so.contains(&format!("concurrent spawns passed on {n} parents")),
            "{n} parents ({:?})\n--- stdout\n{so}\n--- stderr\n{se}",
            out.status
        );
    }
}

/// MPI_Comm_join in one thread while another creates communicators: the
/// joined communicator's context id is held while the two sides agree on it,
/// so none of the others gets it (messages received from any source on each
/// communicator reach only it). Communicator creations after joins, on both
/// sides, are in `connect_accept join`.
#[test]
fn join_beside_communicator_creation_in_threads_gets_a_distinct_context() {
    let exe = build("spawn_threads", &["-pthread"]);
    for n in [2, 3] {
        let out = run(n, &exe, &["join"]);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && so.contains("join beside communicator creation passed"),
            "{n} ranks ({:?})\n--- stdout\n{so}\n--- stderr\n{se}",
            out.status
        );
    }
}

/// A harness-style program: rank 0 prints " No Errors" when every rank's checks passed.
fn no_errors(n: usize, name: &str) {
    let so = ok(n, name);
    assert!(so.contains(" No Errors"), "{name} on {n} ranks:\n{so}");
}

#[test]
fn harness_communicators_intra_and_inter() {
    for n in [1, 2, 3, 4, 5, 8] {
        no_errors(n, "harness_comms");
    }
}

#[test]
fn info_hints_alloc_mem_status_conversion_and_unsupported_areas() {
    for n in [1, 3] {
        assert!(ok(n, "surface").contains(&format!("all checks passed on {n} ranks")));
    }
    let exe = build("surface", &[]);
    let out = run(2, &exe, &["fatal"]);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{se}");
    assert!(
        se.contains("MPI_Win_fence") && se.contains("MPI_WIN_NULL") && se.contains("(MPI_ERR_WIN)"),
        "{se}"
    );
}

#[test]
fn harness_point_to_point_and_datatypes() {
    for n in [1, 2, 4, 7] {
        no_errors(n, "harness_p2p");
    }
}

#[test]
fn subarray_darray_match_size_and_external32() {
    for n in [1, 2, 3, 4, 6] {
        assert!(ok(n, "dtype2").contains(&format!("all checks passed on {n} ranks")));
    }
}

#[test]
fn generalized_requests_on_every_completion_path() {
    for n in [1, 3] {
        let exe = build("greq", &["-pthread"]);
        let out = run(n, &exe, &[]);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && so.contains("greq: all checks passed"),
            "greq on {n} ranks:\n{so}\n{se}"
        );
    }
}

#[test]
fn comm_idup_is_non_blocking() {
    for n in [1, 2, 4, 5] {
        assert!(ok(n, "idup").contains("idup: all checks passed"));
    }
}

#[test]
fn persistent_collectives_started_again_and_again() {
    for n in [1, 2, 3, 4] {
        assert!(ok(n, "pcoll").contains("pcoll: all checks passed"));
    }
}

#[test]
fn request_handles_of_the_fast_path_on_every_completion_path() {
    for n in [1, 2, 3] {
        assert!(ok(n, "p2p_handles").contains("p2p_handles: all checks passed"));
    }
}

/// Small MPI_Isend calls that completed in the call carry the engine's one
/// complete request (no request entry): every completion family, free,
/// get_status, cancel and the Fortran round trip take them as completed sends.
#[test]
fn small_isends_complete_in_the_call_on_every_completion_path() {
    for n in [1, 2, 3] {
        assert!(ok(n, "isend_done").contains("isend_done: all checks passed"));
    }
}

#[test]
fn wait_and_waitall_of_direct_handles_with_null_ones_among_them() {
    for n in [2, 3] {
        assert!(ok(n, "p2p_direct_wait").contains("p2p_direct_wait: all checks passed"));
    }
}

#[test]
fn waitany_returns_a_finished_send_before_a_receive_its_progress_completes() {
    for n in [2, 3] {
        assert!(ok(n, "waitany_order").contains("waitany_order: all checks passed"));
    }
}

#[test]
fn isendrecv_and_isendrecv_replace() {
    for n in [1, 2, 3, 5] {
        assert!(ok(n, "isendrecv").contains("isendrecv: all checks passed"));
    }
}

#[test]
fn reductions_on_every_predefined_type_user_ops_zero_and_large_counts() {
    for n in [1, 2, 3, 5, 8] {
        no_errors(n, "coll_ops");
    }
}

#[test]
fn nonblocking_collectives_overlapped_in_place_vw_and_intercommunicators() {
    for n in [1, 2, 3, 4, 5, 8] {
        no_errors(n, "nbc");
    }
}

#[test]
fn nonblocking_allreduces_on_the_shared_area_overlap_across_communicators_and_point_to_point() {
    for n in [1, 2, 3, 4, 8] {
        let so = ok(n, "nbc_shm_overlap");
        assert!(
            so.contains(&format!("nbc_shm_overlap: all checks passed on {n} ranks")),
            "{so}"
        );
    }
}

#[test]
fn topology_corners_and_neighbourhood_collectives_on_every_kind() {
    for n in [1, 2, 3, 4, 6, 8] {
        no_errors(n, "topo2");
    }
}

#[test]
fn attributes_error_handlers_groups_environment_and_exit_codes() {
    for n in [1, 2, 3, 4] {
        no_errors(n, "env_attr");
    }
    let exe = build("env_attr", &[]);
    // A rank returning non-zero after MPI_Finalize is the job's exit status.
    let out = run(3, &exe, &["exit"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(" No Errors"));
    // MPI_Abort's code is the job's exit status.
    let out = run(3, &exe, &["abort"]);
    assert_eq!(
        out.status.code(),
        Some(7),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn large_count_c_functions() {
    for n in [1, 2, 3] {
        assert!(ok(n, "bigcount").contains("bigcount: all checks passed"));
    }
    let exe = build("bigcount", &[]);
    let out = run(2, &exe, &["fatal"]);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{se}");
    assert!(
        se.contains("oxmpi: rank 0: MPI_Send_c:")
            && se.contains("`count`")
            && se.contains("(MPI_ERR_COUNT)"),
        "{se}"
    );
}

#[test]
fn fortran_sized_and_optional_datatypes_and_logical_ops_on_floats() {
    for n in [1, 3, 4] {
        assert!(ok(n, "ftypes").contains("ftypes: all checks passed"));
    }
}

#[test]
fn comm_create_group_random_overlapping_subgroups() {
    for n in [4, 6, 8] {
        assert!(ok(n, "cg_random").contains(&format!("cg_random: all checks passed on {n} ranks")));
    }
}

#[test]
fn null_handle_names_empty_status_null_outputs_dims_as_mpich_external32_sizes() {
    for n in [1, 3] {
        assert!(ok(n, "defects").contains(&format!("defects: all checks passed on {n} ranks")));
    }
}

#[test]
fn intercomm_alltoall_one_way_each_direction_checked_on_its_own() {
    for n in 2..=5 {
        assert!(ok(n, "inter_a2a").contains(&format!("inter_a2a: all checks passed on {n} ranks")));
    }
}

#[test]
fn persistent_collectives_copy_arrays_at_init_match_in_init_order_and_reject_garbage_counts() {
    for n in 1..=5 {
        assert!(ok(n, "pcoll2").contains(&format!("pcoll2: all checks passed on {n} ranks")));
    }
}

#[test]
fn persistent_collectives_planned_once_neighbourhood_inter_noncontiguous_rerun_with_new_data() {
    for n in [1, 2, 3, 4] {
        assert!(ok(n, "pcoll3").contains(&format!("pcoll3: all checks passed on {n} ranks")));
    }
}

#[test]
fn intercomm_idup_returns_at_once_traffic_before_wait_and_threads() {
    for n in [2, 3, 5] {
        assert!(
            ok(n, "idup_inter").contains(&format!("idup_inter: all checks passed on {n} ranks"))
        );
    }
}

/// Datatypes of more blocks than the old limit of 4,194,304: a vector of 2^31
/// one-byte elements and large-count types on it are made and queried; a vector
/// of 8M+1 blocks goes through send/recv, pack/unpack, bcast and gather, a
/// vector of 2M+1 ints through allreduce.
#[test]
fn datatypes_of_billions_of_blocks_are_kept_by_structure() {
    for n in [1, 2, 3] {
        assert!(ok(n, "dtype_many_blocks").contains(&format!(
            "dtype_many_blocks: all checks passed on {n} ranks"
        )));
    }
}

/// Struct types whose signature has more runs than the old limit of 4,194,304
/// (a contiguous of 2M+3 int/double structs; a vector of 2^31 of them): made,
/// queried, sent and received as another description of the same structs,
/// received as bytes, packed and unpacked (also with MPI_Pack_external).
#[test]
fn struct_types_of_millions_of_signature_runs_work() {
    for n in [2, 3] {
        assert!(ok(n, "dtype_big_struct")
            .contains(&format!("dtype_big_struct: all checks passed on {n} ranks")));
    }
}

/// Intercommunicator dup, idup, merge, split and create mixed, from several
/// threads: each new communicator's allreduce gives its own values (a blocking
/// intercommunicator constructor once took an id an idup in flight had picked).
#[test]
fn intercomm_dups_idups_merges_splits_from_threads_get_ids_of_their_own() {
    for (n, split) in [(3, "1"), (3, "2"), (3, "1"), (3, "2"), (2, "1"), (5, "2")] {
        let exe = build("inter_dup_mix", &[]);
        let out = run(n, &exe, &[split]);
        let so = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success()
                && so.contains(&format!("inter_dup_mix: all checks passed on {n} ranks")),
            "inter_dup_mix on {n} ranks (split {split}) failed ({}):\n{so}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn mpi41_status_get_status_buffers_groups_f90_value_index_infos_toint_hw_splits() {
    for n in [1, 2, 4] {
        assert!(ok(n, "mpi41").contains(&format!("mpi41: all checks passed on {n} ranks")));
    }
}

/// A fresh directory under target/ for a file test (removed by the test when it passes).
fn io_dir(name: &str) -> PathBuf {
    let d = target_dir().join("oxmpi-io-tests").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn assert_empty(d: &Path) {
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        left.is_empty(),
        "files left behind in {}: {left:?}",
        d.display()
    );
}

#[test]
fn mpi_io_every_access_style_views_external32_shared_pointer_atomic_on_1_2_4_7_ranks() {
    let exe = build("fileio", &[]);
    for n in [1, 2, 4, 7] {
        let d = io_dir(&format!("fileio{n}"));
        let out = run(n, &exe, &[d.to_str().unwrap()]);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && so.contains(&format!("all checks passed on {n} ranks")),
            "fileio on {n} ranks\n{so}\n{se}"
        );
        assert_empty(&d);
        std::fs::remove_dir(&d).unwrap();
    }
}

#[test]
fn mpi_io_nonblocking_collectives_progress_while_ranks_communicate_on_1_2_4_7_ranks() {
    let exe = build("fileasync", &[]);
    for n in [1, 2, 4, 7] {
        let d = io_dir(&format!("fileasync{n}"));
        let out = run(n, &exe, &[d.to_str().unwrap()]);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && so.contains(&format!("all checks passed on {n} ranks")),
            "fileasync on {n} ranks\n{so}\n{se}"
        );
        assert_empty(&d);
        std::fs::remove_dir(&d).unwrap();
    }
}

#[test]
fn mpi_io_external32_long_and_user_datarep_with_other_file_sizes_on_1_2_4_7_ranks() {
    let exe = build("filerep", &[]);
    for n in [1, 2, 4, 7] {
        let d = io_dir(&format!("filerep{n}"));
        let out = run(n, &exe, &[d.to_str().unwrap()]);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && so.contains(&format!("all checks passed on {n} ranks")),
            "filerep on {n} ranks\n{so}\n{se}"
        );
        assert_empty(&d);
        std::fs::remove_dir(&d).unwrap();
    }
}

#[test]
fn mpi_io_error_classes_and_file_error_handlers() {
    let exe = build("fileerr", &[]);
    for n in [1, 3] {
        let d = io_dir(&format!("fileerr{n}"));
        let out = run(n, &exe, &[d.to_str().unwrap()]);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && so.contains(&format!("all checks passed on {n} ranks")),
            "fileerr on {n} ranks\n{so}\n{se}"
        );
        assert_empty(&d);
        std::fs::remove_dir(&d).unwrap();
    }
    let d = io_dir("fileerr-fatal");
    let out = run(2, &exe, &[d.to_str().unwrap(), "fatal"]);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{se}");
    // Whichever rank reports first ends the job; each names the call and the path.
    assert!(
        se.contains(": MPI_File_open: ")
            && se.contains("no/such/file`")
            && se.contains("(MPI_ERR_NO_SUCH_FILE)"),
        "{se}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn one_sided_every_flavor_operation_and_synchronization() {
    for n in [1, 2, 3, 4, 7] {
        assert!(ok(n, "rma").contains(&format!("all checks passed on {n} ranks")));
    }
}

#[test]
fn one_sided_atomics_from_every_rank_lose_nothing() {
    for n in [1, 2, 4, 7] {
        assert!(
            ok(n, "rma_atomics").contains(&format!("rma_atomics: all checks passed on {n} ranks"))
        );
    }
}

#[test]
fn one_sided_large_bulk_and_small_atomic_accumulates_to_overlapping_elements_stay_exact() {
    for n in [1, 2, 4, 7] {
        assert!(ok(n, "rma_bulk").contains(&format!("rma_bulk: all checks passed on {n} ranks")));
    }
}

#[test]
fn one_sided_fast_path_results_exclusive_locks_and_the_errors_it_leaves_to_the_general_path() {
    for n in [1, 2, 4] {
        assert!(ok(n, "rma_fast").contains(&format!("rma_fast: all checks passed on {n} ranks")));
    }
}

#[test]
fn one_sided_passive_target_progresses_while_the_target_computes_outside_mpi() {
    for n in [2, 4] {
        assert!(ok(n, "rma_passive").contains(&format!("passive target progressed on {n} ranks")));
    }
}

#[test]
fn one_sided_post_start_complete_wait_over_many_epochs_groups_and_tests() {
    for n in [1, 2, 3, 4, 7] {
        assert!(ok(n, "rma_pscw").contains(&format!("rma_pscw: all checks passed on {n} ranks")));
    }
}

#[test]
fn one_sided_locks_exclude_share_wait_for_a_spinning_target_and_report_misuse() {
    for n in [1, 2, 3, 4] {
        assert!(ok(n, "rma_locks").contains(&format!("rma_locks: all checks passed on {n} ranks")));
    }
}

#[test]
fn one_sided_errors_have_their_classes_and_fatal_names_the_call() {
    for n in [1, 2, 3] {
        assert!(ok(n, "rma_errors").contains(&format!("all checks passed on {n} ranks")));
    }
    let exe = build("rma_errors", &[]);
    let out = run(2, &exe, &["fatal"]);
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        !out.status.success() && !so.contains("not reached"),
        "{so}{se}"
    );
    assert!(
        se.contains("MPI_Put")
            && se.contains("outside target rank")
            && se.contains("(MPI_ERR_RMA_RANGE)"),
        "{se}"
    );
}

/// tests/netns "hosts" (network namespaces; needs root): whether they are usable.
fn netns_hosts() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("NOTICE: not root; multi-host C tests skipped");
        return false;
    }
    let script = workspace().join("tests/netns/setup.sh");
    let ok = Command::new("bash")
        .arg(script)
        .arg("2")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("NOTICE: network namespaces unavailable; multi-host C tests skipped");
        assert!(
            std::env::var("CI").is_err(),
            "CI must be able to create network namespaces"
        );
    }
    ok
}

#[test]
fn one_sided_across_two_hosts_as_active_messages() {
    if !netns_hosts() {
        return;
    }
    for (name, done) in [
        ("rma", "all checks passed on 4 ranks"),
        ("rma_errors", "all checks passed on 4 ranks"),
        ("rma_atomics", "all checks passed on 4 ranks"),
        ("rma_mts", "rma_mts: all checks passed on 4 ranks"),
        ("rma_locks", "rma_locks: all checks passed on 4 ranks"),
        // post/start/complete/wait: counters on one host, messages across (mixed groups)
        ("rma_pscw", "rma_pscw: all checks passed on 4 ranks"),
        // rank 0 computes outside MPI, then blocks in MPI_Recv, while ranks 2 and 3
        // (the other host) lock, put, get, accumulate and unlock its windows
        ("rma_passive", "passive target progressed on 4 ranks"),
    ] {
        let exe = build(name, &[]);
        // A watchdog: a hang fails the test instead of stalling the suite.
        let out = Command::new("timeout")
            .arg("180")
            .arg(prefix().join("bin/mpiexec"))
            .args([
                "-n",
                "4",
                "-hosts",
                "oxmpi-h1:2,oxmpi-h2:2",
                "--launcher-exec",
                "ip netns exec",
                "--pmi-bind",
                "10.213.0.1",
            ])
            .arg(&exe)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && so.contains(done),
            "{name} across hosts:\n{so}\n{se}"
        );
    }
}

#[test]
fn partitioned_send_and_receive_out_of_order_threads_different_partitionings() {
    for n in [2, 3, 4] {
        assert!(ok(n, "part").contains(&format!("part: all checks passed on {n} ranks")));
    }
}

#[test]
fn partitioned_operations_match_in_init_order_not_start_order() {
    for n in [2, 3] {
        assert!(
            ok(n, "part_order").contains(&format!("part_order: all checks passed on {n} ranks"))
        );
    }
}

#[test]
fn one_sided_padded_pairs_zero_sizes_many_attached_regions_and_shared_queries() {
    for n in [1, 2, 4] {
        assert!(ok(n, "rma_mts").contains(&format!("rma_mts: all checks passed on {n} ranks")));
    }
}

#[test]
fn comm_split_free_loop_recycles_context_ids() {
    // More splits than there are context ids (2048): they must be recycled.
    let exe = build("split_loop", &[]);
    let out = run(3, &exe, &["5000"]);
    let so = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && so.contains("split_loop: 5000 splits"),
        "{so}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn error_codes_carry_their_message_and_map_back_to_their_class() {
    for n in [1, 2] {
        assert!(ok(n, "errcodes").contains(&format!("errcodes: all checks passed on {n} ranks")));
    }
}

/// The C programs again under valgrind's memcheck: no invalid read or write,
/// no use of uninitialised memory, in libmpi or the program. Skipped where
/// valgrind is missing, except in CI (`.ci/run` installs it).
#[test]
fn c_programs_under_valgrind_memcheck() {
    if Command::new("valgrind").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "valgrind is missing in CI"
        );
        eprintln!("valgrind not installed: skipped");
        return;
    }
    for (name, n) in [
        ("hello", 2),
        ("p2p", 2),
        ("coll", 3),
        ("dtype", 2),
        ("defects", 2),
        ("pcoll2", 3),
        ("inter_a2a", 3),
        ("part", 2),
        ("errcodes", 2),
        ("cg_random", 4),
    ] {
        let exe = build(name, &[]);
        let vg = prefix().join("tests").join(format!("{name}.vg.sh"));
        std::fs::write(
            &vg,
            format!(
                "#!/bin/sh\nexec valgrind -q --error-exitcode=97 --track-origins=no {} {}\n",
                exe.display(),
                if name == "cg_random" { "60" } else { "" }
            ),
        )
        .unwrap();
        let mut perm = std::fs::metadata(&vg).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&vg, perm).unwrap();
        let out = run(n, &vg, &[]);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && !se.contains("Invalid read") && !se.contains("Invalid write"),
            "{name} under valgrind on {n} ranks ({:?})\n--- stdout\n{so}\n--- stderr\n{se}",
            out.status
        );
    }
}

#[test]
fn fuzzing_the_c_api_with_random_arguments_finds_no_crash() {
    let exe = build("fuzz", &[]);
    for seed in ["1", "2", "3", "4", "5", "6", "7", "8"] {
        let out = run(1, &exe, &["4000", seed]);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && so.contains("no crash"),
            "fuzz seed {seed} ({:?})\n--- stdout\n{so}\n--- stderr\n{se}",
            out.status
        );
    }
}

#[test]
fn blocking_collective_while_a_nonblocking_one_is_pending_elsewhere() {
    for n in [1, 2, 5] {
        assert!(ok(n, "nb_then_blocking")
            .contains(&format!("nb_then_blocking: all checks passed on {n} ranks")));
    }
}

#[test]
fn zero_byte_collectives_do_not_synchronize() {
    // The ranks enter one after another (a token chain): a zero-byte collective that
    // waited for the others would deadlock.
    assert!(ok(3, "zero_coll").contains("all checks passed on 3 ranks"));
    ok(1, "zero_coll");
}

/// A message reaches a receiver that waits for it while its sender computes, with
/// no MPI call, after MPI_Send or MPI_Wait returned: through shared memory and
/// through TCP (where a packet copied into the send queue once waited for the
/// sender's next MPI call).
#[test]
fn messages_leave_while_the_sender_computes() {
    assert!(ok(2, "send_then_compute").contains("send_then_compute: all checks passed"));
    let so = ok_env(2, "send_then_compute", &[("OXMPI_TRANSPORT", "tcp")]);
    assert!(so.contains("send_then_compute: all checks passed"), "{so}");
}

/// Blocking waits with both ranks pinned to one processor, then to one each, after
/// compute bursts that close the yield gate: a wait keeps its processor through a
/// closed gate only while no other rank reported the same one (runtime/wait.rs
/// `spin_yield`); messages and reductions arrive intact either way.
#[test]
fn waits_on_one_shared_or_two_separate_processors() {
    assert!(ok(2, "busy_cpu").contains("busy_cpu: all checks passed"));
}

/// Eager messages of 1-64 KiB into receives posted before they arrive, which TCP
/// matches at the header and reads straight into the receive's buffer: contents,
/// statuses, matching order (receives posted out of order, wildcards with small and
/// medium messages alternating), synchronous sends, truncation, a non-contiguous
/// receive, a message before its receive. Through TCP and shared memory.
#[test]
fn eager_messages_land_in_the_receive_they_match() {
    let so = ok_env(2, "eager_land", &[("OXMPI_TRANSPORT", "tcp")]);
    assert!(so.contains("eager_land: all checks passed"), "{so}");
    assert!(ok(2, "eager_land").contains("eager_land: all checks passed"));
}

/// MPI_T: every variable and category listed and read, writes that change the
/// eager limit and the allreduce algorithm, counters that follow real traffic
/// through shared memory and (with `OXMPI_TRANSPORT=tcp`) TCP.
#[test]
fn tool_interface_lists_reads_writes_and_counts() {
    let so = ok(2, "tools");
    assert!(
        so.contains("tools: all checks passed on 2 ranks (auto)"),
        "{so}"
    );
    for v in [
        "cvar OXMPI_EAGER_LIMIT = 65536",
        "cvar OXMPI_ALLREDUCE_ALGORITHM = 0 (auto)",
        "pvar oxmpi_msgs_sent_shm",
        "category oxmpi_p2p",
    ] {
        assert!(so.contains(v), "{v} missing:\n{so}");
    }
    assert!(ok(3, "tools").contains("tools: all checks passed on 3 ranks (auto)"));
    let so = ok_env(2, "tools", &[("OXMPI_TRANSPORT", "tcp")]);
    assert!(so.contains("all checks passed on 2 ranks (tcp)"), "{so}");
}

/// MPI_T's collective calls per algorithm: with algorithms forced through
/// `OXMPI_<COLL>_ALGORITHM` exactly the forced algorithm's counter grows (by
/// the calls made), and with none forced the counters of each collective add
/// up to its calls. Two sets of forced algorithms (2 and 3 ranks), then none.
#[test]
fn tool_interface_counts_collective_calls_per_algorithm() {
    let exe = build("tools_algorithms", &[]);
    let sets: [(usize, &[(&str, &str)]); 3] = [
        (
            2,
            &[
                ("OXMPI_BARRIER_ALGORITHM", "shm"),
                ("OXMPI_BCAST_ALGORITHM", "chain"),
                ("OXMPI_GATHER_ALGORITHM", "linear"),
                ("OXMPI_SCATTER_ALGORITHM", "linear"),
                ("OXMPI_ALLGATHER_ALGORITHM", "bruck"),
                ("OXMPI_ALLTOALL_ALGORITHM", "bruck"),
                ("OXMPI_ALLTOALLW_ALGORITHM", "pairwise"),
                ("OXMPI_REDUCE_ALGORITHM", "in_order"),
                ("OXMPI_ALLREDUCE_ALGORITHM", "ring"),
                ("OXMPI_REDUCE_SCATTER_BLOCK_ALGORITHM", "pairwise"),
                ("OXMPI_SCAN_ALGORITHM", "recursive_doubling"),
                ("OXMPI_EXSCAN_ALGORITHM", "linear"),
            ],
        ),
        (
            3,
            &[
                ("OXMPI_BARRIER_ALGORITHM", "dissemination"),
                ("OXMPI_BCAST_ALGORITHM", "shm"),
                ("OXMPI_GATHERV_ALGORITHM", "linear"),
                ("OXMPI_SCATTERV_ALGORITHM", "linear"),
                ("OXMPI_ALLGATHER_ALGORITHM", "shm"),
                ("OXMPI_ALLGATHERV_ALGORITHM", "ring"),
                ("OXMPI_ALLTOALLV_ALGORITHM", "pairwise"),
                ("OXMPI_REDUCE_ALGORITHM", "shm"),
                ("OXMPI_ALLREDUCE_ALGORITHM", "rabenseifner"),
                ("OXMPI_REDUCE_SCATTER_ALGORITHM", "recursive_halving"),
            ],
        ),
        (2, &[]),
    ];
    for (n, env) in sets {
        let out = run_env(n, &exe, &[], env);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success(),
            "forced {env:?} on {n} ranks:\n{so}\n{se}"
        );
        assert!(
            so.contains(&format!(
                "tools_algorithms: all checks passed on {n} ranks ({} forced)",
                env.len()
            )),
            "{so}\n{se}"
        );
        // The report names the forced algorithm with the calls it ran (5 blocking + 5 nonblocking).
        if env.iter().any(|(k, _)| *k == "OXMPI_ALLREDUCE_ALGORITHM") {
            let a = env
                .iter()
                .find(|(k, _)| *k == "OXMPI_ALLREDUCE_ALGORITHM")
                .unwrap()
                .1;
            assert!(
                so.lines()
                    .any(|l| l.starts_with(&format!("allreduce ({a}):"))
                        && l.contains(&format!(" {a}=10"))),
                "{so}"
            );
        }
    }
}

/// Starts `mpiexec ARGS` in the background (a watchdog `timeout` ends it).
fn start_job(
    pre: &[&str],
    n: usize,
    exe: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Child {
    let mut c = Command::new("timeout");
    c.arg("120")
        .args(pre)
        .arg(prefix().join("bin/mpiexec"))
        .arg("-n")
        .arg(n.to_string())
        .arg(exe)
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(what: &str, child: std::process::Child) -> String {
    let out = child.wait_with_output().unwrap();
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\n{so}\n{se}",
        out.status
    );
    so + &se
}

/// Server job (2 ranks) accepts; a job with a forged port name is refused; a
/// client job (3 ranks) connects; both exercise the intercommunicator and
/// disconnect. `pre` runs each job inside a "host" (network namespace).
fn connect_accept_between_jobs(
    tag: &str,
    server_pre: &[&str],
    client_pre: &[&str],
    server_env: &[(&str, &str)],
    client_env: &[(&str, &str)],
) {
    let exe = build("connect_accept", &[]);
    let dir = io_dir(&format!("connect_accept_{tag}"));
    let file = dir.join("port");
    let file = file.to_str().unwrap();
    let server = start_job(server_pre, 2, &exe, &["server", file], server_env);
    let forged = finish(
        "forged client",
        start_job(client_pre, 1, &exe, &["forged", file], client_env),
    );
    assert!(
        forged.contains("forged port refused") && forged.contains("MPI_ERR_PORT"),
        "{forged}"
    );
    let client = start_job(client_pre, 3, &exe, &["client", file], client_env);
    let so = finish("client", client);
    assert!(so.contains("all checks passed (client)"), "{so}");
    let so = finish("server", server);
    assert!(so.contains("all checks passed (server)"), "{so}");
    // The server said why it turned the forged connection away.
    assert!(
        so.contains("refused a connection") && so.contains("forged or stale port name"),
        "{so}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn connect_accept_between_two_jobs_forged_port_refused_and_join() {
    connect_accept_between_jobs("local", &[], &[], &[], &[]);
    let exe = build("connect_accept", &[]);
    let out = run(3, &exe, &["join"]);
    let so = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && so.contains("all checks passed (join)"),
        "{so}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn publish_and_lookup_name_between_two_jobs() {
    let exe = build("connect_accept", &[]);
    let dir = io_dir("names");
    // The name service wants a private directory.
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let names = dir.to_str().unwrap();
    let service = format!("oxmpi-test-{}", std::process::id());
    let env = [("OXMPI_NAMESERVER_DIR", names)];
    let server = start_job(&[], 2, &exe, &["publish", &service], &env);
    let so = finish(
        "lookup client",
        start_job(&[], 2, &exe, &["lookup", &service], &env),
    );
    assert!(so.contains("all checks passed (lookup)"), "{so}");
    let so = finish("publishing server", server);
    assert!(so.contains("all checks passed (publish)"), "{so}");
    assert_empty(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn connect_accept_across_two_hosts_forged_port_refused() {
    if !netns_hosts() {
        return;
    }
    connect_accept_between_jobs(
        "netns",
        &["ip", "netns", "exec", "oxmpi-h1"],
        &["ip", "netns", "exec", "oxmpi-h2"],
        &[("OXMPI_TCP_ADDR", "10.213.0.11")],
        &[("OXMPI_TCP_ADDR", "10.213.0.12")],
    );
}

/// Under MPICH's Hydra (PMI-1 `mcmd=spawn` served by Hydra): spawn and
/// spawn_multiple, and MPI_UNIVERSE_SIZE from Hydra's PMI.
#[test]
fn spawn_under_hydra() {
    let Some(h) = ["mpiexec.mpich", "mpiexec.hydra"].into_iter().find(|c| {
        Command::new("which")
            .arg(c)
            .output()
            .is_ok_and(|o| o.status.success())
    }) else {
        eprintln!("SKIP: MPICH's mpiexec is not installed");
        assert!(
            std::env::var("CI").is_err(),
            "CI must install mpich for this test"
        );
        return;
    };
    let exe = build("spawn", &[]);
    for (args, want) in [
        (
            &["parent", "2"][..],
            "parent checks passed (2 parents, 2 children)",
        ),
        (&["multiple"][..], "spawn_multiple children passed"),
    ] {
        let out = Command::new("timeout")
            .arg("120")
            .arg(h)
            .args(["-n", "2"])
            .arg(&exe)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let so = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && so.contains(want),
            "{args:?} under {h}:\n{so}"
        );
    }
    // MPI_UNIVERSE_SIZE: Hydra's `-usize` where given (a number, or SYSTEM: the
    // hosts' slots); unset by default, when oxmpi gives the job size; never
    // less than the job (SYSTEM counts one slot on a host given without any).
    for (pre, want) in [
        (&[][..], 3),
        (&["-usize", "7"][..], 7),
        (&["-usize", "SYSTEM", "-hosts", "localhost:5"][..], 5),
        (&["-usize", "SYSTEM"][..], 3),
    ] {
        let out = Command::new("timeout")
            .arg("120")
            .arg(h)
            .args(pre)
            .args(["-n", "3"])
            .arg(&exe)
            .arg("usize")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let so = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && so.contains(&format!("universe size {want}\n")),
            "{pre:?} under {h}:\n{so}"
        );
    }
}

/// Where the process manager cannot start processes, MPI_Comm_spawn fails
/// with MPI_ERR_UNSUPPORTED_OPERATION naming itself and the protocol: PMI-2
/// (`srun --mpi=pmi2`; here Hydra's PMI-2, forced with OXMPI_PMI=2). (Under
/// PMIx spawn works: tests/launch.rs.)
#[test]
fn spawn_where_the_process_manager_cannot_is_unsupported_and_named() {
    let exe = build("spawn", &[]);
    let check = |what: &str, out: Output, protocol: &str| {
        let so = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{what}:\n{so}");
        let line = so
            .lines()
            .find(|l| l.starts_with("spawn refused: "))
            .unwrap_or_else(|| panic!("{what}:\n{so}"));
        assert!(
            line.contains("MPI_Comm_spawn")
                && line.contains(protocol)
                && line.contains("MPI_ERR_UNSUPPORTED_OPERATION"),
            "{what}: {line}"
        );
    };
    match ["mpiexec.mpich", "mpiexec.hydra"].into_iter().find(|c| {
        Command::new("which")
            .arg(c)
            .output()
            .is_ok_and(|o| o.status.success())
    }) {
        Some(h) => {
            let out = Command::new("timeout")
                .arg("120")
                .arg(h)
                .args(["-n", "2", "-genv", "OXMPI_PMI", "2"])
                .arg(&exe)
                .arg("unsupported")
                .stdin(Stdio::null())
                .output()
                .unwrap();
            check("PMI-2 under Hydra", out, "PMI-2");
        }
        None => {
            eprintln!("SKIP (PMI-2): MPICH's mpiexec is not installed");
            assert!(
                std::env::var("CI").is_err(),
                "CI must install mpich for this test"
            );
        }
    }
}

/// What MPICH's own suite (attr, info, io, errors) caught: keyvals freed from their own
/// delete callback and again by the program, MPI_Info_create_env stable across
/// MPI_Init/MPI_Finalize, a freed-but-attached file error handler still called,
/// truncated receives reporting source and tag, a copy callback's user-defined error
/// code returned by MPI_Comm_dup, aliased MPI_Reduce_local buffers refused.
#[test]
fn keyval_double_free_env_info_file_handler_truncated_status_callback_codes() {
    let exe = build("mts_misc", &[]);
    for n in [1, 2, 3] {
        let d = io_dir(&format!("mts_misc{n}"));
        let out = run(n, &exe, &[d.to_str().unwrap()]);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && so.contains(&format!("all checks passed on {n} ranks")),
            "mts_misc on {n} ranks\n{so}\n{se}"
        );
        assert_empty(&d);
        std::fs::remove_dir(&d).unwrap();
    }
}

/// A wait for a non-blocking collective file access whose I/O thread is busy writing
/// is not a deadlock, even with a tiny `--hang-after` (MPICH's io/i_bigtype was ended
/// as deadlocked on a slow disk).
#[test]
fn waiting_for_a_busy_file_write_is_not_a_deadlock() {
    let exe = build("file_iwrite_busy", &[]);
    for n in [1, 2] {
        let d = io_dir(&format!("iwrite_busy{n}"));
        static ONE: Mutex<()> = Mutex::new(());
        let _turn = ONE.lock().unwrap_or_else(|p| p.into_inner());
        let child = Command::new(prefix().join("bin/mpiexec"))
            .args(["--hang-after", "0.01", "-n", &n.to_string()])
            .arg(&exe)
            .arg(&d)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = common::wait_with_watchdog(child, Duration::from_secs(120));
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && so.contains("no false deadlock"),
            "file_iwrite_busy on {n} ranks\n{so}\n{se}"
        );
        assert_empty(&d);
        std::fs::remove_dir(&d).unwrap();
    }
}

/// What MPICH 4.0.2's test suite found (pt2pt/scancel, pscancel, datatype/typename,
/// threads/init/mult_session): buffered sends cancelled before they are received
/// (plain, persistent, to self, eager and rendezvous sizes) report cancelled and
/// are never delivered, one already received is not cancelled; MPI_LONG_LONG_INT's
/// name; a session's default thread level.
#[test]
fn mpich_suite_findings_bsend_cancel_type_name_session_thread_level() {
    for n in [1, 2, 3] {
        let so = ok(n, "mts_core");
        assert!(so.contains("mts_core ok"), "{so}");
    }
}

#[test]
fn blocking_receives_of_messages_already_queued() {
    // MPI_Recv takes a whole message out of the unexpected queue with no request
    // made (bench/PROFILE.md, rate20); truncation, order and statuses as before.
    assert!(ok(2, "recv_queued").contains("recv_queued: all checks passed"));
}

#[test]
fn blocking_receives_of_messages_still_in_the_ring() {
    // MPI_Recv whose message lands in the post's progress step frees its request
    // in one look-up (bench/PROFILE.md, recv36); statuses, truncation and a
    // synchronous send as before.
    assert!(ok(2, "recv_in_ring").contains("recv_in_ring: all checks passed"));
}

#[test]
fn blocking_receives_waiting_in_the_slot() {
    // MPI_Recv posted before its message with nothing else posted waits in the
    // engine's blocking slot with no request (bench/PROFILE.md, recv37):
    // wildcards among 3 ranks, truncation, synchronous sends, fragments and
    // rendezvous (the slot made a request), FIFO order with MPI_Irecv's around
    // it, and a signature mismatch with checking on.
    assert!(ok(3, "recv_slot").contains("recv_slot: all checks passed"));
    let checked = ok_env(3, "recv_slot", &[("OXMPI_CHECK_SIGNATURES", "1")]);
    assert!(checked.contains("recv_slot: all checks passed"));
}
