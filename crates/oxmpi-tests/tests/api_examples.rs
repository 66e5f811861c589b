//! The `oxmpi` crate's examples (hello, ring, pingpong, threads) through our mpiexec.
mod common;

use std::path::PathBuf;
use std::process::Command;

/// target/<profile>/examples/<name>, built on demand.
fn example(name: &str) -> String {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let path: PathBuf = profile_dir.join("examples").join(name);
    let release = profile_dir.file_name().is_some_and(|n| n == "release");
    let mut c = Command::new(env!("CARGO"));
    c.args(["build", "-q", "-p", "oxmpi", "--example", name]);
    if release {
        c.arg("--release");
    }
    assert!(
        c.status().unwrap().success(),
        "building example {name} failed"
    );
    path.to_string_lossy().into_owned()
}

#[test]
fn api_hello_prints_one_line_per_rank() {
    let hello = example("hello");
    for n in [1, 3] {
        let run = common::run(n, &hello, &[]);
        run.assert_ok();
        let out = run.stdout();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), n, "{out}");
        for r in 0..n {
            let want = format!("Hello from rank {r} of {n} on ");
            assert_eq!(
                lines.iter().filter(|l| l.starts_with(&want)).count(),
                1,
                "{out}"
            );
        }
    }
}

#[test]
fn api_ring_checks_its_token() {
    let ring = example("ring");
    for n in [2, 4] {
        let run = common::run(n, &ring, &["3"]);
        run.assert_ok();
        let n = n as u64;
        assert!(
            run.stdout()
                .contains(&format!("token = {} (expected", 3 * n * (n + 1) / 2)),
            "{}",
            run.stdout()
        );
    }
}

#[test]
fn api_pingpong_prints_a_table() {
    let pp = example("pingpong");
    let run = common::run(2, &pp, &["--min", "0", "--max", "4096", "--iters", "20"]);
    run.assert_ok();
    let out = run.stdout();
    let rows: Vec<&str> = out.lines().skip(1).collect();
    let sizes: Vec<&str> = rows
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let want: Vec<String> = std::iter::once(0)
        .chain((0..=12).map(|i| 1 << i))
        .map(|s: u32| s.to_string())
        .collect();
    assert_eq!(sizes, want, "{out}");
}

#[test]
fn api_threads_share_communicators_and_requests_under_multiple() {
    let threads = example("threads");
    for n in [2, 4] {
        let run = common::run(n, &threads, &[]);
        run.assert_ok();
        let out = run.stdout();
        for r in 0..n {
            let (l, rt) = ((r + n - 1) % n, (r + 1) % n);
            let want = format!("rank {r}: left {l} right {rt} sum {}", n * (n - 1) / 2);
            assert!(
                out.lines().any(|line| line == want),
                "missing {want:?} in\n{out}"
            );
        }
    }
}
