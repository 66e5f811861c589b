//! Project tasks: `cargo xtask dist [--prefix DIR] [--debug]` lays the oxmpi
//! toolchain out under `target/oxmpi/` (or DIR); `cargo xtask demo` builds it and
//! runs a multi-process demo through our own `mpiexec`.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

fn usage() -> ! {
    eprintln!(
        "usage: cargo xtask <task>\n\n\
         tasks:\n  \
           dist [--prefix DIR] [--debug]   build (release) and lay out bin/ under target/oxmpi (or DIR)\n  \
           demo [-n N]                     build, then run the ring and hello examples on N ranks (default 4)"
    );
    exit(2)
}

fn workspace_root() -> PathBuf {
    // xtask/ lives directly under the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn target_dir(root: &Path) -> PathBuf {
    env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"))
}

fn cargo(root: &Path, args: &[&str]) {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo).args(args).current_dir(root).status().unwrap_or_else(|e| {
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
    let mut build = vec!["build", "-p", "oxmpi-run", "--bin", "mpiexec"];
    if release {
        build.push("--release");
    }
    cargo(&root, &build);
    let profile = if release { "release" } else { "debug" };
    let built = target_dir(&root).join(profile);
    let out = prefix.unwrap_or_else(|| target_dir(&root).join("oxmpi"));
    let bin = out.join("bin");
    fs::create_dir_all(&bin).unwrap();
    copy_exe(&built.join("mpiexec"), &bin.join("mpiexec"));
    // `mpirun` is the same launcher under its other customary name.
    copy_exe(&built.join("mpiexec"), &bin.join("mpirun"));
    println!("oxmpi toolchain laid out in {}", out.display());
    println!("  {}", bin.join("mpiexec").display());
    println!("  {}", bin.join("mpirun").display());
    out
}

fn demo(args: &[String]) {
    let n = match args {
        [] => "4".to_string(),
        [flag, n] if flag == "-n" => n.clone(),
        _ => usage(),
    };
    let root = workspace_root();
    let out = dist(&[]);
    cargo(&root, &["build", "--release", "-p", "oxmpi", "--example", "hello", "--example", "ring"]);
    let examples = target_dir(&root).join("release").join("examples");
    for ex in ["hello", "ring"] {
        println!("\n$ mpiexec -n {n} {ex}");
        let status = Command::new(out.join("bin").join("mpiexec"))
            .args(["-n", &n])
            .arg(examples.join(ex))
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
