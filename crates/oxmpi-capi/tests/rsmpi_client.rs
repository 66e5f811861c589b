//! A real client of the C ABI: the crates.io `mpi` crate (rsmpi 0.8). Its
//! `mpi-sys` build script finds MPI the usual way (build-probe-mpi: `$MPICC
//! -show`, parsed for -I/-L/-l), compiles its C shim with our `mpicc` and runs
//! bindgen over our `mpi.h`; the `mpi` crate then calls into our libmpi.
//!
//! At test time this lays out the toolchain, writes a throwaway cargo project
//! (under the target directory, so reruns are incremental) that depends on
//! `mpi = "0.8"`, copies a few of rsmpi's own example programs from the
//! downloaded crate source into it as binaries, builds them with
//! `MPICC=<prefix>/bin/mpicc`, and runs each on 2 and 3 ranks with our
//! `mpiexec`, checking the exit status and what the examples print.
//! No rsmpi code lives in this repository.
//!
//! bindgen needs libclang: without it the test prints SKIP and passes, unless
//! the CI environment variable is set (then it fails).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
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

/// rsmpi's examples built and run (their output is checked below where they print something checkable).
const EXAMPLES: &[&str] = &[
    "simple",
    "broadcast",
    "gather",
    "reduce",
    "send_receive",
    "scan",
    "immediate",
    "cartesian",
];

fn libclang_present() -> bool {
    let mut dirs: Vec<PathBuf> = vec![];
    if let Some(p) = std::env::var_os("LIBCLANG_PATH") {
        dirs.push(PathBuf::from(p));
    }
    if let Ok(rd) = std::fs::read_dir("/usr/lib") {
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with("llvm-") {
                dirs.push(e.path().join("lib"));
            }
        }
    }
    dirs.push("/usr/lib/x86_64-linux-gnu".into());
    dirs.push("/usr/lib64".into());
    dirs.push("/usr/local/lib".into());
    dirs.iter().any(|d| {
        std::fs::read_dir(d).map_or(false, |rd| {
            rd.flatten().any(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                // libclang.so or libclang-14.so.1, not libclang-cpp.so (which bindgen cannot use)
                n.starts_with("libclang.so")
                    || (n.starts_with("libclang-")
                        && !n.starts_with("libclang-cpp")
                        && n.contains(".so"))
            })
        })
    })
}

fn prefix() -> PathBuf {
    let p = target_dir().join("oxmpi-capi-rsmpi");
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
}

/// A cargo command for the client project, clean of the outer build's variables.
fn cargo(project: &Path, prefix: &Path) -> Command {
    let mut c = Command::new(env!("CARGO"));
    c.current_dir(project);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if (k.starts_with("CARGO_")
            && k != "CARGO_HOME"
            && !k.starts_with("CARGO_NET")
            && !k.starts_with("CARGO_HTTP")
            && !k.starts_with("CARGO_REGISTRIES"))
            || k == "RUSTFLAGS"
            || k == "MPI_PKG_CONFIG"
            || k == "CRAY_MPICH_DIR"
        {
            c.env_remove(&k);
        }
    }
    c.env("CARGO_TARGET_DIR", project.join("target"));
    c.env("MPICC", prefix.join("bin/mpicc"));
    c.env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"));
    c
}

fn must(out: Output, what: &str) -> String {
    let so = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({:?})\n--- stdout\n{so}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    so
}

/// The directory of the `mpi` package cargo resolved (its crates.io source).
fn mpi_source(project: &Path, prefix: &Path) -> PathBuf {
    let meta = must(
        cargo(project, prefix)
            .args(["metadata", "--format-version", "1"])
            .stderr(Stdio::piped())
            .output()
            .unwrap(),
        "cargo metadata",
    );
    for piece in meta.split("\"manifest_path\":\"").skip(1) {
        let path = &piece[..piece.find('"').unwrap()];
        let dir = Path::new(path).parent().unwrap();
        let name = dir.file_name().unwrap().to_string_lossy();
        if name.starts_with("mpi-0.8.") {
            return dir.to_path_buf();
        }
    }
    panic!("no mpi-0.8.x package in cargo metadata");
}

fn run(prefix: &Path, n: usize, exe: &Path) -> Output {
    let mut child = Command::new(prefix.join("bin/mpiexec"))
        .arg("-n")
        .arg(n.to_string())
        .arg(exe)
        // build-probe-mpi passes -L and -l but not mpicc's -rpath; the binaries must still
        // start with no environment of ours: mpiexec puts its lib/ on the ranks' path.
        .env_remove("LD_LIBRARY_PATH")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if t.elapsed() > Duration::from_secs(120) {
            // SAFETY: kill(2) on the launcher we started.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn rsmpi_builds_against_our_mpi_h_and_its_examples_run() {
    if !libclang_present() {
        println!("SKIP: libclang not found (bindgen, used by rsmpi's mpi-sys, needs it; apt-get install libclang-dev)");
        assert!(
            std::env::var_os("CI").is_none(),
            "libclang is missing on CI: .ci/run should install libclang-dev"
        );
        return;
    }
    let prefix = prefix();
    let project = target_dir().join("rsmpi-client");
    std::fs::create_dir_all(project.join("src/bin")).unwrap();
    std::fs::write(
        project.join("Cargo.toml"),
        r#"[package]
name = "rsmpi-client"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
mpi = "0.8"

# rsmpi's examples test these cfgs and deny warnings.
[features]
default = ["user-operations"]
user-operations = ["mpi/user-operations"]

[lints.rust]
unexpected_cfgs = { level = "warn", check-cfg = ['cfg(msmpi)'] }

[workspace]
"#,
    )
    .unwrap();
    let placeholder = project.join("src/bin/placeholder.rs");
    std::fs::write(&placeholder, "fn main() {}\n").unwrap();
    let src = mpi_source(&project, &prefix);
    std::fs::remove_file(&placeholder).unwrap();
    for e in EXAMPLES {
        std::fs::copy(
            src.join("examples").join(format!("{e}.rs")),
            project.join("src/bin").join(format!("{e}.rs")),
        )
        .unwrap_or_else(|err| panic!("copying rsmpi's example {e}: {err}"));
    }
    // mpi-sys's build script does not rerun when mpi.h changes (it watches only its own
    // sources), so rebuild it whenever the header differs from the one it last bound.
    let header = prefix.join("include/mpi.h");
    let stamp = project.join("target/mpi.h.bound");
    let cur = std::fs::read_to_string(&header).unwrap();
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(cur.as_str()) {
        let _ = cargo(&project, &prefix)
            .args(["clean", "-q", "-p", "mpi-sys"])
            .status();
    }
    must(
        cargo(&project, &prefix)
            .args(["build", "-j", "2", "--bins"])
            .output()
            .unwrap(),
        "building rsmpi against oxmpi",
    );
    std::fs::write(&stamp, cur).unwrap();

    let bin = project.join("target/debug");
    for n in [2usize, 3] {
        for e in EXAMPLES {
            let out = run(&prefix, n, &bin.join(e));
            let so = must(out, &format!("rsmpi example {e} on {n} ranks"));
            match *e {
                "simple" => {
                    for r in 0..n {
                        assert!(
                            so.contains(&format!("Hello parallel world from process {r} of {n}!")),
                            "{so}"
                        );
                    }
                }
                "broadcast" => {
                    for r in 0..n {
                        assert!(
                            so.contains(&format!("Rank {r} received value: 1024.")),
                            "{so}"
                        );
                        assert!(
                            so.contains(&format!("Rank {r} received value: [2, 4, 8, 16].")),
                            "{so}"
                        );
                    }
                }
                "gather" => {
                    let seq: Vec<String> = (0..n).map(|r| (2u32 << r).to_string()).collect();
                    assert!(
                        so.contains(&format!("Root gathered sequence: [{}].", seq.join(", "))),
                        "{so}"
                    );
                }
                "send_receive" => {
                    for r in 0..n {
                        assert!(
                            so.contains(&format!("Process {r} got message {}.", (r + 1) % n)),
                            "{so}"
                        );
                    }
                }
                // reduce, scan, immediate, cartesian check their results with assert!: the exit status says.
                _ => {}
            }
        }
    }
}
