//! Project tasks: `cargo xtask dist [--prefix DIR] [--debug]` lays the oxmpi
//! toolchain out under `target/oxmpi/` (or DIR); `cargo xtask demo` builds it and
//! runs a multi-process demo through our own `mpiexec`.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

/// The generator of `mpi.h`, shared with oxmpi-capi's build script.
#[path = "../../crates/oxmpi-capi/gen.rs"]
mod gen;

fn usage() -> ! {
    eprintln!(
        "usage: cargo xtask <task>\n\n\
         tasks:\n  \
           dist [--prefix DIR] [--debug]   build (release) and lay out bin/ (mpiexec, mpirun, mpicc, mpicxx),\n  \
                                           lib/ (libmpi.so, libmpi.a, pkgconfig) and include/mpi.h under\n  \
                                           target/oxmpi (or DIR)\n  \
           demo [-n N]                     build, then run the hello and Jacobi examples on N ranks (default 4)"
    );
    exit(2)
}

fn workspace_root() -> PathBuf {
    // xtask/ lives directly under the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn target_dir(root: &Path) -> PathBuf {
    env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

fn cargo(root: &Path, args: &[&str]) {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo)
        .args(args)
        .current_dir(root)
        .status()
        .unwrap_or_else(|e| {
            eprintln!("xtask: cannot run {cargo}: {e}");
            exit(1)
        });
    if !status.success() {
        eprintln!("xtask: `cargo {}` failed", args.join(" "));
        exit(status.code().unwrap_or(1));
    }
}

fn copy_exe(from: &Path, to: &Path) {
    if to.exists() {
        fs::remove_file(to).unwrap();
    }
    fs::copy(from, to).unwrap_or_else(|e| {
        eprintln!("xtask: copying {} to {}: {e}", from.display(), to.display());
        exit(1)
    });
}

/// Builds the toolchain and returns the directory it was laid out in.
fn dist(args: &[String]) -> PathBuf {
    let root = workspace_root();
    let mut prefix: Option<PathBuf> = None;
    let mut release = true;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--prefix" => prefix = Some(PathBuf::from(it.next().unwrap_or_else(|| usage()))),
            "--debug" => release = false,
            _ => usage(),
        }
    }
    for what in [
        &["-p", "oxmpi-run", "--bin", "mpiexec"][..],
        &["-p", "oxmpi-capi", "--lib"][..],
    ] {
        let mut build = vec!["build"];
        build.extend_from_slice(what);
        if release {
            build.push("--release");
        }
        cargo(&root, &build);
    }
    let profile = if release { "release" } else { "debug" };
    let built = target_dir(&root).join(profile);
    let out = prefix.unwrap_or_else(|| target_dir(&root).join("oxmpi"));
    let bin = out.join("bin");
    fs::create_dir_all(&bin).unwrap();
    copy_exe(&built.join("mpiexec"), &bin.join("mpiexec"));
    // `mpirun` is the same launcher under its other customary name.
    copy_exe(&built.join("mpiexec"), &bin.join("mpirun"));
    let out = if out.is_absolute() {
        out
    } else {
        env::current_dir().unwrap().join(out)
    };
    lay_out_c(&root, &built, &out);
    let fortran = lay_out_fortran(&root, &out);
    println!("oxmpi toolchain laid out in {}", out.display());
    println!("  {}", bin.join("mpiexec").display());
    println!("  {}", bin.join("mpirun").display());
    println!("  {}", bin.join("mpicc").display());
    println!("  {}", out.join("lib").join("libmpi.so").display());
    match fortran {
        Ok(fc) => println!(
            "  {} (Fortran: mpif.h, the mpi and mpi_f08 modules, built with {fc})",
            bin.join("mpifort").display()
        ),
        Err(why) => println!("  Fortran: {why}"),
    }
    out
}

/// SONAME of libmpi.so (as set by crates/oxmpi-capi/build.rs): the standard ABI's name.
/// `mpiexec` looks for this file in `<prefix>/lib` to put that directory on the ranks'
/// library path.
const SONAME: &str = "libmpi_abi.so.1";

fn write_file(path: &Path, text: &str, exec: bool) {
    fs::write(path, text).unwrap_or_else(|e| {
        eprintln!("xtask: writing {}: {e}", path.display());
        exit(1)
    });
    if exec {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn symlink(target: &str, link: &Path) {
    let _ = fs::remove_file(link);
    std::os::unix::fs::symlink(target, link).unwrap_or_else(|e| {
        eprintln!("xtask: symlink {}: {e}", link.display());
        exit(1)
    });
}

/// The compiler wrapper: `mpicc` wraps `${OXMPI_CC:-cc}`, `mpicxx` `${OXMPI_CXX:-c++}`.
fn wrapper(var: &str, default: &str) -> String {
    format!(
        r#"#!/bin/sh
# oxmpi compiler wrapper: compiles and links C/C++ MPI programs against oxmpi.
# -show prints the command instead of running it. The compiler is ${{{var}:-{default}}}.
# Link flags (-L, -rpath, -lmpi) are added unless -c, -E, -S or -M/-MM is given.
prefix=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
compiler=${{{var}:-{default}}}
show=0
link=1
for a do
    shift
    case $a in
        -show|--show|-showme) show=1; continue ;;
        -c|-E|-S|-M|-MM) link=0 ;;
    esac
    set -- "$@" "$a"
done
set -- $compiler -I"$prefix/include" "$@"
if [ $link = 1 ]; then
    set -- "$@" -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lmpi
fi
if [ $show = 1 ]; then
    echo "$@"
    exit 0
fi
exec "$@"
"#
    )
}

fn pkgconfig(out: &Path, name: &str) -> String {
    format!(
        "prefix={}\nincludedir=${{prefix}}/include\nlibdir=${{prefix}}/lib\n\nName: {name}\nDescription: oxmpi, an MPI implementation in Rust (MPI-5.0 standard ABI)\nVersion: {}\nCflags: -I${{includedir}}\nLibs: -L${{libdir}} -Wl,-rpath,${{libdir}} -lmpi\nLibs.private: -lpthread -ldl -lm\n",
        out.display(),
        env!("CARGO_PKG_VERSION")
    )
}

/// Lays out the C toolchain: include/mpi.h, lib/libmpi.{so,a}, bin/mpicc, pkg-config files.
fn lay_out_c(root: &Path, built: &Path, out: &Path) {
    let (bin, lib, inc) = (out.join("bin"), out.join("lib"), out.join("include"));
    for d in [&bin, &lib, &inc, &lib.join("pkgconfig")] {
        fs::create_dir_all(d).unwrap();
    }
    let desc = root.join("crates/oxmpi-capi/abi.txt");
    let text = fs::read_to_string(&desc).unwrap_or_else(|e| {
        eprintln!("xtask: reading {}: {e}", desc.display());
        exit(1)
    });
    write_file(&inc.join("mpi.h"), &gen::header(&gen::parse(&text)), false);
    copy_exe(&built.join("libmpi.so"), &lib.join(SONAME));
    symlink(SONAME, &lib.join("libmpi.so"));
    symlink(SONAME, &lib.join("libmpi_abi.so"));
    // The SONAME of earlier builds, for programs linked against them.
    symlink(SONAME, &lib.join("libmpi.so.0"));
    copy_exe(&built.join("libmpi.a"), &lib.join("libmpi.a"));
    write_file(&bin.join("mpicc"), &wrapper("OXMPI_CC", "cc"), true);
    write_file(&bin.join("mpicxx"), &wrapper("OXMPI_CXX", "c++"), true);
    write_file(
        &lib.join("pkgconfig/oxmpi.pc"),
        &pkgconfig(out, "oxmpi"),
        false,
    );
    write_file(&lib.join("pkgconfig/mpi.pc"), &pkgconfig(out, "mpi"), false);
}

/// The Fortran compiler wrapper: `mpifort` (and `mpif90`, `mpif77`) wraps
/// `${OXMPI_FC:-gfortran}`.
fn fortran_wrapper() -> String {
    r#"#!/bin/sh
# oxmpi Fortran compiler wrapper: compiles and links Fortran MPI programs
# (INCLUDE 'mpif.h', USE mpi, USE mpi_f08) against oxmpi.
# -show prints the command instead of running it. The compiler is ${OXMPI_FC:-gfortran}.
# Link flags (-L, -rpath, -lmpi_f08, -lmpi) are added unless -c, -E, -S or -M is given.
prefix=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
compiler=${OXMPI_FC:-gfortran}
if ! command -v "${compiler%% *}" >/dev/null 2>&1; then
    echo "mpifort: no Fortran compiler: ${compiler%% *} not found (install gfortran or set OXMPI_FC)" >&2
    exit 127
fi
show=0
link=1
for a do
    shift
    case $a in
        -show|--show|-showme) show=1; continue ;;
        -c|-E|-S|-M) link=0 ;;
    esac
    set -- "$@" "$a"
done
extra=
# gfortran 10 and later reject, within one file, calls of an implicitly declared
# procedure with different argument types: exactly what INCLUDE 'mpif.h'
# programs do with choice buffers (MPI_SEND of REAL, then of INTEGER data).
case $($compiler -dumpversion 2>/dev/null) in
    [1-9][0-9]*) case $($compiler --version 2>/dev/null) in *GNU*) extra=-fallow-argument-mismatch ;; esac ;;
esac
set -- $compiler $extra -I"$prefix/include" "$@"
if [ $link = 1 ]; then
    if [ -e "$prefix/lib/libmpi_f08.a" ]; then
        set -- "$@" -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lmpi_f08 -lmpi
    else
        set -- "$@" -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lmpi
    fi
fi
if [ $show = 1 ]; then
    echo "$@"
    exit 0
fi
exec "$@"
"#
    .to_string()
}

/// The Fortran compiler `cargo xtask dist` builds the modules with, if any.
fn fortran_compiler() -> Option<String> {
    let fc = env::var("OXMPI_FC").unwrap_or_else(|_| "gfortran".into());
    let ok = Command::new(fc.split_whitespace().next()?)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(fc)
}

/// Runs the Fortran compiler on `src`, modules going to `inc`.
fn fortran_compile(fc: &str, inc: &Path, src: &Path, obj: &Path) -> Result<(), String> {
    let mut words = fc.split_whitespace();
    let mut c = Command::new(words.next().unwrap());
    c.args(words)
        .args(["-O2", "-fPIC", "-c", "-J"])
        .arg(inc)
        .arg("-I")
        .arg(inc)
        .arg("-o")
        .arg(obj)
        .arg(src);
    let o = c.output().map_err(|e| format!("running {fc}: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "{fc} failed on {}:\n{}",
            src.display(),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(())
}

/// Lays out the Fortran bindings: include/mpif.h (text, always), bin/mpifort,
/// lib/pkgconfig/oxmpi-fort.pc, and, where a Fortran compiler exists, the
/// compiled modules (include/mpi.mod, include/mpi_f08.mod, lib/libmpi_f08.a).
/// The C and Rust toolchains never need a Fortran compiler: without one this
/// says so and lays out the rest.
fn lay_out_fortran(root: &Path, out: &Path) -> Result<String, String> {
    let (bin, lib, inc) = (out.join("bin"), out.join("lib"), out.join("include"));
    let desc = root.join("crates/oxmpi-capi/abi.txt");
    let abi = gen::parse(&fs::read_to_string(&desc).unwrap());
    write_file(&inc.join("mpif.h"), &gen::fortran_header(&abi), false);
    // A module whose source did not change is not compiled again.
    // mpi_f08's external procedures (the standard's specific names, replaceable
    // by a profiling layer) are compiled from sources kept in the build directory.
    let build = out.join("build-fortran");
    fs::create_dir_all(&build).unwrap();
    let (pmpi_f08, mpi_f08) = gen::fortran_f08_procs(&abi);
    let mut changed = vec![];
    for (dir, name, text) in [
        (&inc, "mpi.f90", gen::fortran_module(&abi)),
        (&inc, "mpi_f08.f90", gen::fortran_f08_module(&abi)),
        (&build, "mpi_f08_pmpi.f90", pmpi_f08),
        (&build, "mpi_f08_mpi.f90", mpi_f08),
    ] {
        if fs::read_to_string(dir.join(name)).ok().as_deref() != Some(text.as_str()) {
            write_file(&dir.join(name), &text, false);
            changed.push(name);
        }
    }
    write_file(&bin.join("mpifort"), &fortran_wrapper(), true);
    symlink("mpifort", &bin.join("mpif90"));
    symlink("mpifort", &bin.join("mpif77"));
    write_file(
        &lib.join("pkgconfig/oxmpi-fort.pc"),
        &format!(
            "prefix={}\nincludedir=${{prefix}}/include\nlibdir=${{prefix}}/lib\n\nName: oxmpi-fort\nDescription: oxmpi's Fortran bindings (mpif.h, use mpi, use mpi_f08)\nVersion: {}\nCflags: -I${{includedir}}\nLibs: -L${{libdir}} -Wl,-rpath,${{libdir}} -lmpi_f08 -lmpi\n",
            out.display(),
            env!("CARGO_PKG_VERSION")
        ),
        false,
    );
    let Some(fc) = fortran_compiler() else {
        for stale in ["mpi.mod", "mpi_f08.mod", "oxmpi_f08_types.mod"] {
            let _ = fs::remove_file(inc.join(stale));
        }
        let _ = fs::remove_file(lib.join("libmpi_f08.a"));
        return Err("no Fortran compiler (gfortran, or OXMPI_FC) found: mpif.h and mpifort are laid out, \
                    the mpi and mpi_f08 modules are NOT built (install gfortran and run `cargo xtask dist` again)"
            .into());
    };
    // Modules are specific to the compiler that made them: another compiler
    // (or version) compiles both again.
    let mut words = fc.split_whitespace();
    let version = Command::new(words.next().unwrap())
        .args(words)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let stamp = format!("{fc}\n{version}");
    if fs::read_to_string(build.join("compiler")).ok().as_deref() != Some(stamp.as_str()) {
        changed = vec![
            "mpi.f90",
            "mpi_f08.f90",
            "mpi_f08_pmpi.f90",
            "mpi_f08_mpi.f90",
        ];
        write_file(&build.join("compiler"), &stamp, false);
    }
    // mpi_f08's procedures call libmpi's `mpif.h` procedures through implicit
    // interfaces (gfortran passes hidden string lengths, %VAL addresses).
    // The external procedures use the module: compiled again when it changes.
    if changed.contains(&"mpi_f08.f90") {
        changed.extend(["mpi_f08_pmpi.f90", "mpi_f08_mpi.f90"]);
    }
    let lax = " -fallow-argument-mismatch -ffree-line-length-none -w";
    for (dir, src, obj, extra) in [
        (&inc, "mpi.f90", "mpi.o", ""),
        (&inc, "mpi_f08.f90", "mpi_f08.o", lax),
        (&build, "mpi_f08_pmpi.f90", "mpi_f08_pmpi.o", lax),
        (&build, "mpi_f08_mpi.f90", "mpi_f08_mpi.o", lax),
    ] {
        let module = inc.join(src.replace(".f90", ".mod"));
        let makes_module = !src.starts_with("mpi_f08_");
        if !changed.contains(&src) && (!makes_module || module.exists()) && build.join(obj).exists()
        {
            continue;
        }
        if let Err(e) = fortran_compile(
            &format!("{fc}{extra}"),
            &inc,
            &dir.join(src),
            &build.join(obj),
        ) {
            eprintln!("xtask: {e}");
            exit(1)
        }
        // The MPI_ names are weak: a program (a profiling layer) that defines
        // MPI_Send_f08ts itself replaces the library's without a clash when the
        // archive member holding the others is linked in.
        // Only its definitions: a weak reference to PMPI_Send_f08ts would not
        // pull the member defining it out of the archive.
        if src == "mpi_f08_mpi.f90" {
            let defined = Command::new("nm")
                .args(["-g", "--defined-only"])
                .arg(build.join(obj))
                .output();
            let names: Vec<String> = defined
                .map(|o| {
                    String::from_utf8_lossy(&o.stdout)
                        .lines()
                        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let list = build.join("weak-symbols.txt");
            write_file(&list, &(names.join("\n") + "\n"), false);
            let weak = if names.is_empty() {
                None
            } else {
                Command::new("objcopy")
                    .arg(format!("--weaken-symbols={}", list.display()))
                    .arg(build.join(obj))
                    .status()
                    .ok()
            };
            if !weak.is_some_and(|s| s.success()) {
                let _ = fs::remove_file(build.join(obj));
                eprintln!("xtask: nm/objcopy --weaken-symbols failed on {obj} (binutils' nm and objcopy are needed for mpi_f08's profiling names)");
                exit(1)
            }
        }
    }
    let _ = fs::remove_file(lib.join("libmpi_f08.a"));
    // The modules' procedures (MPI_SIZEOF of both modules, mpi_f08's operators)
    // and mpi_f08's external procedures: PMPI_x_f08[ts], and the weak MPI_x_f08[ts].
    let objs = ["mpi_f08.o", "mpi.o", "mpi_f08_pmpi.o", "mpi_f08_mpi.o"].map(|o| build.join(o));
    let ar = Command::new("ar")
        .arg("rcs")
        .arg(lib.join("libmpi_f08.a"))
        .args(objs)
        .status();
    if !ar.is_ok_and(|s| s.success()) {
        eprintln!("xtask: ar failed making libmpi_f08.a");
        exit(1)
    }
    Ok(fc)
}

fn demo(args: &[String]) {
    let n = match args {
        [] => "4".to_string(),
        [flag, n] if flag == "-n" => n.clone(),
        _ => usage(),
    };
    let root = workspace_root();
    let out = dist(&[]);
    cargo(
        &root,
        &[
            "build",
            "--release",
            "-p",
            "oxmpi",
            "--example",
            "hello",
            "--example",
            "jacobi",
        ],
    );
    let examples = target_dir(&root).join("release").join("examples");
    // The seed's Jacobi exercise: a 12x12 grid split by rows, halo exchange,
    // allreduce of the residual until it drops below 1e-2, gathered on rank 0
    // and checked there against a serial computation.
    let demos: [(&str, &[&str]); 2] = [("hello", &[]), ("jacobi", &["--max-iter", "1000"])];
    for (ex, args) in demos {
        println!("\n$ mpiexec -n {n} {ex} {}", args.join(" "));
        let status = Command::new(out.join("bin").join("mpiexec"))
            .args(["-n", &n])
            .arg(examples.join(ex))
            .args(args)
            .status()
            .expect("running mpiexec");
        if !status.success() {
            eprintln!("xtask: the {ex} demo failed ({status})");
            exit(status.code().unwrap_or(1));
        }
    }
}

fn main() {
    let args: Vec<String> = env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("dist") => {
            dist(&args[1..]);
        }
        Some("demo") => demo(&args[1..]),
        _ => usage(),
    }
}
