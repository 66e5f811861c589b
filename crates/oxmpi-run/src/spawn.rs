//! Starting one rank. Everything about *how* a process comes to exist lives
//! here, so that remote launchers (ssh, with `-hosts`/`-f`/`-ppn` placement)
//! can be added as another implementation returning the same [`RankIo`].

use std::env;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, Stdio};

use crate::sys;

/// What every rank of the job runs.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    /// Resolved path of the executable.
    pub program: PathBuf,
    /// `argv[0]` as the user typed it.
    pub argv0: OsString,
    pub args: Vec<OsString>,
    /// Extra environment (`-genv`), applied over the inherited one.
    pub env: Vec<(OsString, OsString)>,
    pub size: u32,
}

/// The launcher's handles on a started rank.
#[derive(Debug)]
pub struct RankIo {
    pub pid: libc::pid_t,
    /// Our end of the rank's `PMI_FD` connection.
    pub pmi: UnixStream,
    /// Present for rank 0 only; the others read /dev/null.
    pub stdin: Option<ChildStdin>,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

/// Why the program cannot be started; both map to exit status 127.
#[derive(Debug)]
pub struct NotRunnable(pub String);

/// Finds `program` the way a shell would: paths containing `/` are used as
/// given, bare names are searched in `PATH`. Checking before starting any
/// rank avoids a half-started job when the name is wrong.
pub fn resolve_program(program: &OsStr) -> Result<PathBuf, NotRunnable> {
    let shown = program.to_string_lossy();
    if program.is_empty() {
        return Err(NotRunnable("the program name is empty".into()));
    }
    if program.as_encoded_bytes().contains(&b'/') {
        let path = PathBuf::from(program);
        return check_runnable(&path)
            .map(|()| path)
            .map_err(|why| NotRunnable(format!("cannot run '{shown}': {why}")));
    }
    let search = env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let mut first_problem = None;
    for dir in env::split_paths(&search) {
        // An empty PATH entry means the current directory.
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let candidate = dir.join(program);
        match check_runnable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(why) if candidate.exists() && first_problem.is_none() => {
                first_problem = Some(format!("'{}': {why}", candidate.display()));
            }
            Err(_) => {}
        }
    }
    Err(NotRunnable(match first_problem {
        Some(problem) => format!("cannot run '{shown}': {problem}"),
        None => format!("cannot find '{shown}' in PATH"),
    }))
}

fn check_runnable(path: &Path) -> Result<(), &'static str> {
    match path.metadata() {
        Err(_) => Err("no such file"),
        Ok(m) if m.is_dir() => Err("is a directory"),
        Ok(_) if !sys::is_executable(path) => Err("permission denied (not executable)"),
        Ok(_) => Ok(()),
    }
}

/// Starts `rank` on this machine.
///
/// The rank joins process group `pgid`, or, for the first rank (`None`),
/// founds the job's group. It gets one end of a fresh socket pair as
/// `PMI_FD`, dies with the launcher (`PR_SET_PDEATHSIG`), and has its
/// stdout/stderr piped back to us.
pub fn spawn_local(spec: &LaunchSpec, rank: u32, pgid: Option<libc::pid_t>) -> io::Result<RankIo> {
    let (ours, theirs) = sys::socketpair()?;
    let child_fd = theirs.as_raw_fd();
    let launcher_pid = sys::getpid();

    let mut cmd = Command::new(&spec.program);
    cmd.arg0(&spec.argv0)
        .args(&spec.args)
        // A launcher started inside another PMI job must not leak that
        // job's TCP endpoint to its ranks.
        .env_remove("PMI_PORT")
        .env_remove("PMI_ID")
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env("PMI_FD", child_fd.to_string())
        .env("PMI_RANK", rank.to_string())
        .env("PMI_SIZE", spec.size.to_string())
        .env("OXMPI_LAUNCHER", "1")
        .stdin(if rank == 0 {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(pgid.unwrap_or(0));
    // SAFETY: the closure runs between fork and exec and calls only
    // async-signal-safe functions (prctl, getppid, fcntl, sigprocmask).
    unsafe {
        cmd.pre_exec(move || sys::prepare_child(child_fd, launcher_pid));
    }
    let mut child = cmd.spawn()?;
    drop(theirs);
    let pid = child.id() as libc::pid_t;
    sys::setpgid(pid, pgid.unwrap_or(pid));
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        unreachable!("stdout and stderr were configured as pipes");
    };
    // `child` is dropped without waiting: the job loop reaps every rank with
    // waitpid(-1) so exits of all ranks are seen in the order they happen.
    Ok(RankIo {
        pid,
        pmi: UnixStream::from(ours),
        stdin: child.stdin.take(),
        stdout,
        stderr,
    })
}
