//! Fortran programs under tests/fortran (INCLUDE 'mpif.h', USE mpi, USE
//! mpi_f08, and Fortran mixed with C), compiled with our `mpifort` and run
//! with our `mpiexec`. The test lays the toolchain out itself (`cargo xtask
//! dist --debug --prefix target/oxmpi-fortran-test`), once per test binary.
//! Without gfortran the tests skip, except under CI (`CI` set), where
//! `.ci/run` installs it and a missing compiler fails them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

mod common;
use common::lay_out;

/// Whether a Fortran compiler is here; under CI its absence is a failure.
fn have_fortran() -> bool {
    let fc = std::env::var("OXMPI_FC").unwrap_or_else(|_| "gfortran".into());
    let ok = Command::new(fc.split_whitespace().next().unwrap())
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but there is no Fortran compiler ({fc}); .ci/run installs gfortran"
        );
        eprintln!("skipping: no Fortran compiler ({fc})");
    }
    ok
}

/// The laid-out toolchain (built once).
fn prefix() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| lay_out("oxmpi-fortran-test"))
}

fn src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fortran")
        .join(name)
}

/// Compiles tests/fortran/<file> (plus `extra` sources or objects) with
/// mpifort; returns the executable.
fn build(file: &str, extra: &[PathBuf]) -> PathBuf {
    build_as(file, file.split('.').next().unwrap(), &[], extra)
}

/// Compiles tests/fortran/<file> into the executable `name` with extra flags
/// (`-D...` selects a program's binding).
fn build_as(file: &str, name: &str, flags: &[&str], extra: &[PathBuf]) -> PathBuf {
    let exe = prefix().join("tests").join(name);
    let dir = exe.parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(prefix().join("bin/mpifort"))
        .args(["-Wall", "-g", "-fcheck=bounds"])
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(src(file))
        .args(extra)
        .arg("-J")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpifort {file} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Runs on `n` ranks, one job at a time (2 cores), with a watchdog.
fn run(n: usize, exe: &Path) -> Output {
    static ONE: Mutex<()> = Mutex::new(());
    let _turn = ONE.lock().unwrap_or_else(|p| p.into_inner());
    let child = Command::new(prefix().join("bin/mpiexec"))
        .arg("-n")
        .arg(n.to_string())
        .arg(exe)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_with_watchdog(child, Duration::from_secs(120))
}

fn ok_exe(n: usize, exe: &Path) -> String {
    let out = run(n, exe);
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "{} on {n} ranks failed ({:?})\n--- stdout\n{so}\n--- stderr\n{se}",
        exe.display(),
        out.status
    );
    assert!(
        so.contains("all checks passed on") && so.contains(&format!(" {n} ")),
        "{} on {n} ranks:\n{so}",
        exe.display()
    );
    so
}

#[test]
fn shuffle_exchange_graph_with_sendrecv_replace() {
    if !have_fortran() {
        return;
    }
    let so = ok_exe(8, &build("shuffle.f", &[]));
    // The seed's table: node, exchange, shuffle, unshuffle.
    for (node, e, s, u) in [
        (0, 1, 0, 0),
        (1, 0, 2, 4),
        (2, 3, 4, 1),
        (3, 2, 6, 5),
        (4, 5, 1, 2),
        (5, 4, 3, 6),
        (6, 7, 5, 3),
        (7, 6, 7, 7),
    ] {
        let line = format!("node{node:2} exchange/shuffle/unshuffle{e:3}{s:3}{u:3}");
        assert!(so.contains(&line), "missing `{line}` in\n{so}");
    }
}

#[test]
fn par_blas1_and_par_blas2_give_the_serial_result() {
    if !have_fortran() {
        return;
    }
    let exe = build("blas.f90", &[]);
    for n in [1, 3, 4] {
        ok_exe(n, &exe);
    }
}

#[test]
fn point_to_point_from_use_mpi_and_mpif_h() {
    if !have_fortran() {
        return;
    }
    let exe = build("p2p.F90", &[]);
    for n in [1, 2, 3, 7] {
        ok_exe(n, &exe);
    }
    let exe = build_as("p2p.F90", "p2p_mpif", &["-DOXMPI_MPIF_H"], &[]);
    for n in [1, 4] {
        ok_exe(n, &exe);
    }
}

#[test]
fn every_collective_from_mpif_h_and_use_mpi() {
    if !have_fortran() {
        return;
    }
    let exe = build("coll.F90", &[]);
    for n in 1..=7 {
        ok_exe(n, &exe);
    }
    let exe = build_as("coll.F90", "coll_use_mpi", &["-DOXMPI_USE_MPI"], &[]);
    for n in [1, 3, 6] {
        ok_exe(n, &exe);
    }
}

#[test]
fn communicators_groups_topologies_attributes_errhandlers() {
    if !have_fortran() {
        return;
    }
    let exe = build("comm.f90", &[]);
    for n in 1..=7 {
        ok_exe(n, &exe);
    }
}

#[test]
fn derived_datatypes_on_fortran_arrays() {
    if !have_fortran() {
        return;
    }
    let exe = build("dtype.F90", &[]);
    for n in [1, 2, 5] {
        ok_exe(n, &exe);
    }
    let exe = build_as("dtype.F90", "dtype_mpif", &["-DOXMPI_MPIF_H"], &[]);
    for n in [1, 3] {
        ok_exe(n, &exe);
    }
}

#[test]
fn mixed_c_and_fortran_exchange_handles() {
    if !have_fortran() {
        return;
    }
    let obj = prefix().join("tests").join("mixed_c.o");
    std::fs::create_dir_all(obj.parent().unwrap()).unwrap();
    let out = Command::new(prefix().join("bin/mpicc"))
        .args(["-Wall", "-Werror", "-c", "-o"])
        .arg(&obj)
        .arg(src("mixed_c.c"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpicc mixed_c.c failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = build("mixed.f90", &[obj]);
    for n in [1, 3, 4] {
        ok_exe(n, &exe);
    }
}

#[test]
fn mpifort_shows_its_command_and_pkg_config_file_exists() {
    if !have_fortran() {
        return;
    }
    let out = Command::new(prefix().join("bin/mpifort"))
        .args(["-show", "x.f90"])
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success()
            && s.contains("-I")
            && s.contains("-lmpi")
            && s.contains("-rpath")
            && s.contains("x.f90"),
        "{s}"
    );
    let out = Command::new(prefix().join("bin/mpif77"))
        .args(["-show", "-c", "x.f"])
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && !s.contains("-lmpi"), "{s}");
    let pc = std::fs::read_to_string(prefix().join("lib/pkgconfig/oxmpi-fort.pc")).unwrap();
    assert!(pc.contains("-lmpi") && pc.contains("Cflags: -I"), "{pc}");
    assert!(prefix().join("include/mpif.h").exists() && prefix().join("include/mpi.mod").exists());
}

#[test]
fn mpi_f08_strided_sections_typed_handles() {
    if !have_fortran() {
        return;
    }
    let exe = build("f08.f90", &[]);
    for n in [1, 2, 3, 4] {
        ok_exe(n, &exe);
    }
}

#[test]
fn mpi_f08_collectives_on_sections_and_user_op() {
    if !have_fortran() {
        return;
    }
    let exe = build("coll_f08.f90", &[]);
    for n in 1..=7 {
        ok_exe(n, &exe);
    }
}

#[test]
fn mpi_f08_communicators_topologies_callbacks() {
    if !have_fortran() {
        return;
    }
    let exe = build("comm_f08.f90", &[]);
    for n in [1, 2, 4, 6] {
        ok_exe(n, &exe);
    }
}

#[test]
fn errors_name_the_fortran_call_and_bad_handles_do_not_crash() {
    if !have_fortran() {
        return;
    }
    let out = run(2, &build("errname.f90", &[]));
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        !out.status.success(),
        "a fatal error must end the job\n{so}\n{se}"
    );
    assert!(
        !so.contains("not reached") && !se.contains("STOP"),
        "{so}\n{se}"
    );
    assert!(
        se.contains("MPI_SEND") && se.contains("MPI_ERR_RANK"),
        "the message names MPI_SEND and the class:\n{se}"
    );
}

#[test]
fn mpif_h_legacy_forms_info_greq_and_window_errhandler() {
    if !have_fortran() {
        return;
    }
    let exe = build("legacy.f", &[]);
    for n in [1, 2] {
        ok_exe(n, &exe);
    }
}

#[test]
fn use_mpi_in_place_alltoallv_w_with_scalar_send_arguments_and_pmpi_wtime() {
    if !have_fortran() {
        return;
    }
    let exe = build("inplace_v.f90", &[]);
    for n in [1, 3, 4] {
        ok_exe(n, &exe);
    }
}

#[test]
fn profiling_wrappers_of_mpi_send_and_mpi_bcast_from_all_three_bindings() {
    if !have_fortran() {
        return;
    }
    // The program's MPI_SEND/MPI_BCAST (mpif.h, use mpi) and MPI_Send_f08ts /
    // MPI_Bcast_f08ts (mpi_f08) replace the library's and count their calls.
    for (name, flags) in [
        ("profile_mpi", &[][..]),
        ("profile_mpif", &["-DOXMPI_MPIF_H"][..]),
        ("profile_f08", &["-DOXMPI_F08"][..]),
    ] {
        let exe = build_as("profile.F90", name, flags, &[]);
        for n in [1, 2, 3] {
            ok_exe(n, &exe);
        }
    }
}
