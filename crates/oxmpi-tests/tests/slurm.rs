//! oxmpi programs start under Slurm's `srun`, as one job, through Slurm's
//! `mpi/pmi2` plugin: over PMI-2 (detected from `PMI_JOBID`) and, forced
//! with `OXMPI_PMI=1`, over the PMI-1 wire protocol the same plugin also
//! serves (Slurm 22.05 has no separate `--mpi=pmi1`).
//!
//! Needs a running cluster: `tests/slurm/setup.sh` (as root) makes a
//! one-node one on this machine. Without `srun` or an answering cluster the
//! tests are skipped with a notice, unless `CI` and `OXMPI_TEST_SLURM=1` are
//! set (as `.ci/run` does after starting the cluster), where that is a
//! failure.
//!
//! Through Slurm's `mpi/pmix` plugin (`srun --mpi=pmix`) they boot over PMIx,
//! through the system's PMIx client library.
//!
//! Also here: PMI-2 forced (`OXMPI_PMI=2`) under MPICH's Hydra, the other
//! real PMI-2 server at hand.
mod common;

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` with stdin closed and a hard time limit; `None` on timeout
/// (the child is killed).
fn run_with_limit(mut cmd: Command, limit: Duration) -> Option<Output> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().ok()?;
    // Drain the pipes on threads so a chatty child cannot block on them.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().ok()? {
            break Some(s);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (stdout, stderr) = (t_out.join().unwrap(), t_err.join().unwrap());
    status.map(|status| Output {
        status,
        stdout,
        stderr,
    })
}

/// Whether a Slurm cluster answers here; otherwise why not.
fn slurm_cluster() -> Result<(), String> {
    let found = Command::new("which")
        .arg("srun")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        return Err("srun is not installed".into());
    }
    let mut sinfo = Command::new("sinfo");
    sinfo.args(["-h", "-o", "%T"]);
    match run_with_limit(sinfo, Duration::from_secs(20)) {
        None => Err("sinfo did not answer within 20 s".into()),
        Some(o) if !o.status.success() => Err(format!(
            "sinfo failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Some(o) => {
            let states = String::from_utf8_lossy(&o.stdout).into_owned();
            let usable = states.lines().any(|s| {
                let s = s
                    .trim()
                    .trim_end_matches(['*', '~', '#', '!', '%', '$', '@', '^', '-']);
                matches!(s, "idle" | "mixed" | "allocated" | "completing")
            });
            if usable {
                Ok(())
            } else {
                Err(format!("no usable node (states: {:?})", states.trim()))
            }
        }
    }
}

/// `true` when the Slurm tests should run; prints a SKIP notice (or fails,
/// when CI demands Slurm) otherwise.
fn have_slurm() -> bool {
    match slurm_cluster() {
        Ok(()) => true,
        Err(why) => {
            let required = std::env::var_os("CI").is_some()
                && std::env::var("OXMPI_TEST_SLURM").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "CI with OXMPI_TEST_SLURM=1 requires a Slurm cluster \
                 (tests/slurm/setup.sh): {why}"
            );
            eprintln!("SKIP: no Slurm cluster ({why}); tests/slurm/setup.sh starts one");
            false
        }
    }
}

/// `srun --mpi=pmi2 -n N prog args` with `env` added; one job at a time.
fn srun(n: usize, prog: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    srun_with("pmi2", n, prog, args, env)
}

/// `srun --mpi=MPI -n N prog args` with `env` added; one job at a time.
fn srun_with(mpi: &str, n: usize, prog: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let _turn = common::serial();
    let mut c = Command::new("srun");
    c.arg(format!("--mpi={mpi}"));
    c.args([
        "-n",
        &n.to_string(),
        // 2 CPUs, 4 ranks.
        "--overcommit",
        // Slurm's own limit (minutes), behind our watchdog.
        "--time=3",
        "--job-name=oxmpi-test",
    ])
    .arg(prog)
    .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    // Keep this process's choice of protocol out of the ranks' unless asked.
    if !env.iter().any(|(k, _)| *k == "OXMPI_PMI") {
        c.env_remove("OXMPI_PMI");
    }
    run_with_limit(c, Duration::from_secs(150)).expect("srun did not finish within 150 s")
}

fn show(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn assert_ok_with(o: &Output, expected: &str) {
    assert!(o.status.success(), "{}", show(o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        out.matches(expected).count(),
        1,
        "rank 0 alone prints {expected:?}\n{}",
        show(o)
    );
}

#[test]
fn traffic_under_srun_pmi2() {
    if !have_slurm() {
        return;
    }
    let o = srun(4, env!("CARGO_BIN_EXE_core_pt2pt"), &["traffic"], &[]);
    assert_ok_with(&o, "traffic: ok");
}

#[test]
fn comm_under_srun_pmi2() {
    if !have_slurm() {
        return;
    }
    let o = srun(4, env!("CARGO_BIN_EXE_core_comm"), &[], &[]);
    assert_ok_with(&o, "comm: ok");
}

/// Whether this Slurm offers the `mpi/pmix` plugin (`srun --mpi=list`); Debian's
/// slurm-wlm-basic-plugins ships it, so under CI its absence is a failure.
fn have_srun_pmix() -> bool {
    let mut c = Command::new("srun");
    c.arg("--mpi=list");
    let listed = run_with_limit(c, Duration::from_secs(20))
        .map(|o| {
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        })
        .unwrap_or_default();
    let found = listed.lines().any(|l| {
        l.trim()
            .trim_start_matches("MPI plugin types are...")
            .trim()
            .starts_with("pmix")
    });
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI: srun --mpi=list offers no pmix plugin:\n{listed}"
        );
        eprintln!("SKIP: this Slurm has no mpi/pmix plugin:\n{listed}");
    }
    found
}

#[test]
fn traffic_and_comm_under_srun_pmix() {
    if !have_slurm() || !have_srun_pmix() {
        return;
    }
    // PMI_FD is not set: the ranks find PMIX_RANK/PMIX_NAMESPACE and boot
    // through libpmix.
    let o = srun_with(
        "pmix",
        4,
        env!("CARGO_BIN_EXE_core_pt2pt"),
        &["traffic"],
        &[],
    );
    assert_ok_with(&o, "traffic: ok");
    let o = srun_with("pmix", 3, env!("CARGO_BIN_EXE_core_comm"), &[], &[]);
    assert_ok_with(&o, "comm: ok");
}

#[test]
fn traffic_under_srun_pmi1() {
    if !have_slurm() {
        return;
    }
    // Slurm's mpi/pmi2 plugin picks the protocol from the first line a task
    // sends, so OXMPI_PMI=1 exercises its PMI-1 side.
    let o = srun(
        4,
        env!("CARGO_BIN_EXE_core_pt2pt"),
        &["traffic"],
        &[("OXMPI_PMI", "1")],
    );
    assert_ok_with(&o, "traffic: ok");
    let o = srun(
        3,
        env!("CARGO_BIN_EXE_core_comm"),
        &[],
        &[("OXMPI_PMI", "1")],
    );
    assert_ok_with(&o, "comm: ok");
}

#[test]
fn abort_under_srun_ends_the_step() {
    if !have_slurm() {
        return;
    }
    let start = Instant::now();
    let o = srun(3, env!("CARGO_BIN_EXE_core_pt2pt"), &["abort"], &[]);
    assert!(!o.status.success(), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("MPI_Abort with error code 7"),
        "{}",
        show(&o)
    );
    // Ranks 0 and 2 block in a receive that never completes: only the PMI-2
    // abort ends them.
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "took {:?}",
        start.elapsed()
    );
}

fn hydra() -> Option<&'static str> {
    ["mpiexec.mpich", "mpiexec.hydra"].into_iter().find(|c| {
        Command::new("which")
            .arg(c)
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn pmi2_forced_under_hydra() {
    let Some(h) = hydra() else {
        eprintln!("SKIP: MPICH's mpiexec is not installed");
        return;
    };
    let _turn = common::serial();
    for (n, prog, args, expected) in [
        (
            3,
            env!("CARGO_BIN_EXE_core_pt2pt"),
            &["traffic"][..],
            "traffic: ok",
        ),
        (4, env!("CARGO_BIN_EXE_core_comm"), &[][..], "comm: ok"),
    ] {
        let mut c = Command::new(h);
        c.arg("-n")
            .arg(n.to_string())
            .arg(prog)
            .args(args)
            .env("OXMPI_PMI", "2");
        let o = run_with_limit(c, Duration::from_secs(120)).expect("mpiexec timed out");
        assert_ok_with(&o, expected);
    }
}
