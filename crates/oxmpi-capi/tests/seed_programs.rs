//! The textbook's C examples and exercises (tests/c/seed/*.c), written from
//! the text as whole programs that check their own results (a mismatch ends
//! the job through MPI_Abort, so the launcher exits non-zero). Compiled with
//! our `mpicc` and run with our `mpiexec`; the exercises that read standard
//! input get it through `mpiexec`, which forwards it to rank 0. The toolchain
//! is laid out once per test binary (`cargo xtask dist --debug`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

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

/// The laid-out toolchain (built once, in its own prefix).
fn prefix() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let p = target_dir().join("oxmpi-capi-seed");
        let st = Command::new(env!("CARGO"))
            .args([
                "run", "-q", "-p", "xtask", "--", "dist", "--debug", "--prefix",
            ])
            .arg(&p)
            .current_dir(workspace())
            .stdout(Stdio::null())
            .status()
            .expect("running cargo xtask dist");
        assert!(st.success(), "cargo xtask dist --debug failed");
        p
    })
}

/// Compiles tests/c/seed/<name>.c with mpicc, warnings as errors.
fn build(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c/seed")
        .join(format!("{name}.c"));
    let exe = prefix().join("tests").join(name);
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    let out = Command::new(prefix().join("bin/mpicc"))
        .args(["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-lm")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpicc {name}.c failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Runs on `n` ranks with `input` on standard input, one job at a time (2 cores), with a watchdog.
fn run(n: usize, exe: &Path, input: Option<&str>) -> Output {
    static ONE: Mutex<()> = Mutex::new(());
    let _turn = ONE.lock().unwrap_or_else(|p| p.into_inner());
    let mut child = Command::new(prefix().join("bin/mpiexec"))
        .arg("-n")
        .arg(n.to_string())
        .arg(exe)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = input {
        let mut stdin = child.stdin.take().unwrap();
        let text = text.to_string();
        // A writer thread, so a job that stops reading early cannot block us.
        std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes());
        });
    }
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d2 = done.clone();
    std::thread::spawn(move || {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(120) {
            if d2.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // SAFETY: kill(2) on the launcher we started.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    });
    let out = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    out
}

fn ok_with(n: usize, name: &str, input: Option<&str>) -> String {
    let exe = build(name);
    let out = run(n, &exe, input);
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

fn ok(n: usize, name: &str) -> String {
    ok_with(n, name, None)
}

#[test]
fn example_4_9_gatherv_of_columns_with_a_vector_type() {
    for n in [1, 3, 4] {
        assert!(ok(n, "ex4_09_gatherv_column")
            .contains(&format!("gathered {n} columns, all checks passed")));
    }
}

#[test]
fn example_4_10_type_struct_with_mpi_ub() {
    for n in [1, 2, 4] {
        assert!(ok(n, "ex4_10_struct_ub").contains("example 4.10: gathered"));
    }
}

#[test]
fn examples_4_11_to_4_13_scatter_and_scatterv() {
    for n in [1, 3, 4] {
        let so = ok(n, "ex4_11_13_scatter");
        for r in 0..n {
            assert!(so.contains(&format!("rank {r} all checks passed")), "{so}");
        }
    }
}

#[test]
fn examples_4_14_to_4_19_allgather_reduce_maxloc_minloc_allreduce_scan() {
    for n in [1, 2, 3, 4] {
        assert!(ok(n, "ex4_14_19_reduce").contains(&format!("all checks passed on {n} ranks")));
    }
}

#[test]
fn shuffle_exchange_graph_on_8_ranks() {
    let so = ok(8, "shuffle_exchange");
    // The book's table, node: exchange, shuffle, unshuffle.
    let table = [
        "0: 1,0,0", "1: 0,2,4", "2: 3,4,1", "3: 2,6,5", "4: 5,1,2", "5: 4,3,6", "6: 7,5,3",
        "7: 6,7,7",
    ];
    for row in table {
        assert!(
            so.lines().any(|l| l == format!("node {row}")),
            "missing `node {row}` in\n{so}"
        );
    }
}

/// The lines "rank R got ..." for every rank and every value, and the summary.
fn check_broadcast_output(so: &str, n: usize, values: &[&str], summary: &str) {
    for r in 0..n {
        let got: Vec<&str> = so
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("rank {r} got ")))
            .collect();
        assert_eq!(got, values, "rank {r} in\n{so}");
    }
    assert!(so.contains(summary), "want `{summary}` in\n{so}");
}

#[test]
fn exercise_4_1_broadcast_integers_read_from_stdin() {
    let so = ok_with(3, "ex4_01_bcast_stdin", Some("5 17\n0\n42 -3 99\n"));
    check_broadcast_output(
        &so,
        3,
        &["5", "17", "0", "42"],
        "exercise 4.1: 4 values, sum 64, on 3 ranks",
    );
    // End of input without a negative number ends it too; nothing to read at all.
    let so = ok_with(2, "ex4_01_bcast_stdin", Some("8 9"));
    check_broadcast_output(
        &so,
        2,
        &["8", "9"],
        "exercise 4.1: 2 values, sum 17, on 2 ranks",
    );
    let so = ok_with(1, "ex4_01_bcast_stdin", None);
    assert!(
        so.contains("exercise 4.1: 0 values, sum 0, on 1 ranks"),
        "{so}"
    );
}

#[test]
fn exercise_4_5_broadcast_a_struct_type() {
    let so = ok_with(
        3,
        "ex4_05_bcast_struct",
        Some("1 2.5\n7 0.25\n-1 0\n100 1\n"),
    );
    check_broadcast_output(
        &so,
        3,
        &["1 2.500", "7 0.250"],
        "exercise 4.5: 2 pairs, int sum 8, double sum 2.750, on 3 ranks",
    );
}

#[test]
fn exercise_4_6_broadcast_packed_data() {
    let so = ok_with(
        4,
        "ex4_06_bcast_pack",
        Some("1 2.5\n7 0.25\n3 1e3\n-5 -5\n"),
    );
    check_broadcast_output(
        &so,
        4,
        &["1 2.500", "7 0.250", "3 1000.000"],
        "exercise 4.6: 3 pairs, int sum 11, double sum 1002.750, on 4 ranks",
    );
}

#[test]
fn exercises_4_12_to_4_15_halo_exchange_on_a_12x12_grid() {
    for n in [4, 1, 2, 3] {
        let so = ok(n, "ex4_12_15_halo");
        for way in [
            "4.12 (MPI_Send/MPI_Recv)",
            "4.13 (MPI_Isend/MPI_Irecv/MPI_Waitall)",
            "4.14 (MPI_Sendrecv shifts)",
            "4.15 (MPI_Sendrecv pairs)",
        ] {
            assert!(
                so.contains(&format!("exercise {way}: ghost rows correct")),
                "{so}"
            );
        }
    }
}

#[test]
fn exercises_4_16_to_4_18_jacobi_with_uneven_rows_gathered_on_rank_0() {
    let so = ok(4, "ex4_16_18_jacobi");
    assert!(so.contains("rows per rank: 4 2 4 2"), "{so}");
    let so = ok(3, "ex4_16_18_jacobi");
    assert!(so.contains("rows per rank: 5 3 4"), "{so}");
    let so = ok(1, "ex4_16_18_jacobi");
    assert!(so.contains("converged after"), "{so}");
}

#[test]
fn exercise_4_21_maxloc_value_and_index() {
    for n in [1, 2, 3, 4] {
        assert!(ok(n, "ex4_21_maxloc").contains(&format!("of {} values", 25 * n)));
    }
}

#[test]
fn a_failed_check_fails_the_job() {
    // The shuffle-exchange program needs exactly 8 ranks: on 3 its CHECK
    // aborts the job and the launcher reports failure.
    let exe = build("shuffle_exchange");
    let out = run(3, &exe, None);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{se}");
    assert!(se.contains("CHECK failed"), "{se}");
}
