//! Starting one rank, on this machine ([`spawn_local`]) or through a remote
//! launcher command such as `ssh` ([`spawn_remote`]); both return the same
//! [`RankIo`].

use std::env;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, Stdio};

use crate::sys;

/// What the ranks of one executable block run.
#[derive(Debug, Clone, Default)]
pub struct LaunchSpec {
    /// Resolved path of the executable.
    pub program: PathBuf,
    /// `argv[0]` as the user typed it.
    pub argv0: OsString,
    pub args: Vec<OsString>,
    /// Extra environment (`-genv`), applied over the inherited one.
    pub env: Vec<(OsString, OsString)>,
    /// The job's size (`MPI_COMM_WORLD`'s, over all blocks).
    pub size: u32,
    /// Working directory (`-wdir`); `None` keeps mpiexec's.
    pub wdir: Option<PathBuf>,
    /// Start from an empty environment (`-genvnone`, `-genvlist`: the
    /// variables to keep are then in `env`).
    pub env_clear: bool,
    /// The CPU a local rank is bound to (`--bind-to core`), set per rank.
    pub cpu: Option<usize>,
}

/// The launcher's handles on a started rank.
#[derive(Debug)]
pub struct RankIo {
    pub pid: libc::pid_t,
    /// Our end of the rank's `PMI_FD` connection; `None` for a remote rank,
    /// which connects to the TCP PMI server instead.
    pub pmi: Option<UnixStream>,
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
pub fn spawn_local(
    spec: &LaunchSpec,
    rank: u32,
    pgid: Option<libc::pid_t>,
    extra_env: &[(OsString, OsString)],
) -> io::Result<RankIo> {
    let (ours, theirs) = sys::socketpair()?;
    let child_fd = theirs.as_raw_fd();
    let launcher_pid = sys::getpid();

    let mut cmd = Command::new(&spec.program);
    if spec.env_clear {
        cmd.env_clear();
    }
    if let Some(dir) = &spec.wdir {
        cmd.current_dir(dir);
    }
    cmd.arg0(&spec.argv0)
        .args(&spec.args)
        // A launcher started inside another PMI job must not leak that
        // job's TCP endpoint to its ranks.
        .env_remove("PMI_PORT")
        .env_remove("PMI_ID")
        .env_remove(oxmpi_pmi::PMI_TOKEN_ENV)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .envs(extra_env.iter().map(|(k, v)| (k, v)))
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
    let cpu = spec.cpu;
    // The closure runs between fork and exec (prctl, getppid, fcntl,
    // sigprocmask, sched_setaffinity).
    // SAFETY: every call the closure makes is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            sys::prepare_child(Some(child_fd), launcher_pid)?;
            match cpu {
                Some(cpu) => sys::bind_to_cpu(cpu),
                None => Ok(()),
            }
        });
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
        pmi: Some(UnixStream::from(ours)),
        stdin: child.stdin.take(),
        stdout,
        stderr,
    })
}

/// How to start ranks on another host.
#[derive(Debug, Clone)]
pub struct RemoteLaunch {
    /// The launcher command's words, e.g. `ssh` or `ip netns exec`.
    pub launcher: Vec<OsString>,
    /// `PMI_PORT` value: `addr:port` of our TCP PMI server.
    pub pmi_port: String,
}

impl RemoteLaunch {
    /// Whether the launcher hands its words to a remote shell (ssh, rsh),
    /// which splits them again, so they must be quoted.
    fn through_shell(&self) -> bool {
        let Some(first) = self.launcher.first() else {
            return false;
        };
        let base = Path::new(first)
            .file_name()
            .map(|b| b.to_string_lossy().into_owned())
            .unwrap_or_default();
        matches!(base.as_str(), "ssh" | "rsh")
    }

    /// The full command line starting `rank` on `host`:
    /// `LAUNCHER... HOST env PMI_PORT=.. PMI_ID=R PMI_RANK=R PMI_SIZE=N
    /// OXMPI_LAUNCHER=1 OXMPI_PMI_TOKEN=T [-genv NAME=VALUE...] PROGRAM ARGS`.
    pub fn command_line(
        &self,
        spec: &LaunchSpec,
        rank: u32,
        host: &str,
        token: &str,
    ) -> Vec<OsString> {
        let mut remote: Vec<OsString> = vec!["env".into()];
        if spec.env_clear {
            remote.push("-i".into());
        }
        if let Some(dir) = &spec.wdir {
            remote.push("-C".into());
            remote.push(dir.clone().into_os_string());
        }
        let mut assign = |k: &OsStr, v: &OsStr| {
            let mut a = k.to_os_string();
            a.push("=");
            a.push(v);
            remote.push(a);
        };
        assign("PMI_PORT".as_ref(), self.pmi_port.as_ref());
        assign("PMI_ID".as_ref(), rank.to_string().as_ref());
        assign("PMI_RANK".as_ref(), rank.to_string().as_ref());
        assign("PMI_SIZE".as_ref(), spec.size.to_string().as_ref());
        assign("OXMPI_LAUNCHER".as_ref(), "1".as_ref());
        assign(oxmpi_pmi::PMI_TOKEN_ENV.as_ref(), token.as_ref());
        for (k, v) in &spec.env {
            assign(k, v);
        }
        // The remote side has no PATH search result of ours to rely on
        // beyond the same file system layout: use the absolute path.
        let program = if spec.program.is_absolute() {
            spec.program.clone()
        } else {
            env::current_dir()
                .map(|d| d.join(&spec.program))
                .unwrap_or_else(|_| spec.program.clone())
        };
        remote.push(program.into_os_string());
        remote.extend(spec.args.iter().cloned());
        if self.through_shell() {
            remote = remote.iter().map(|w| shell_quote(w)).collect();
        }
        let mut line = self.launcher.clone();
        line.push(host.into());
        line.extend(remote);
        line
    }
}

/// `word` as one word for a POSIX shell.
fn shell_quote(word: &OsStr) -> OsString {
    let bytes = word.as_encoded_bytes();
    let plain = !bytes.is_empty()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(b));
    if plain {
        return word.to_os_string();
    }
    let mut out = Vec::with_capacity(bytes.len() + 2);
    out.push(b'\'');
    for &b in bytes {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    std::os::unix::ffi::OsStringExt::from_vec(out)
}

/// Starts `rank` on `host` by running the launcher command locally.
///
/// The launch process is our child, in the job's process group and with
/// the launcher-death signal, like a local rank: its stdio is the rank's,
/// its exit status is the rank's. With `ip netns exec` it *is* the rank
/// (it execs the program); with ssh, ending it closes the connection.
pub fn spawn_remote(
    spec: &LaunchSpec,
    rank: u32,
    pgid: Option<libc::pid_t>,
    launch: &RemoteLaunch,
    host: &str,
    token: &str,
) -> io::Result<RankIo> {
    let line = launch.command_line(spec, rank, host, token);
    let launcher_pid = sys::getpid();
    let mut cmd = Command::new(&line[0]);
    cmd.args(&line[1..])
        .env_remove("PMI_PORT")
        .env_remove("PMI_ID")
        .env_remove("PMI_FD")
        .env_remove(oxmpi_pmi::JOB_SECRET_ENV)
        .env_remove(oxmpi_pmi::PMI_TOKEN_ENV)
        .stdin(if rank == 0 {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(pgid.unwrap_or(0));
    // SAFETY: as in spawn_local.
    unsafe {
        cmd.pre_exec(move || sys::prepare_child(None, launcher_pid));
    }
    let mut child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    sys::setpgid(pid, pgid.unwrap_or(pid));
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        unreachable!("stdout and stderr were configured as pipes");
    };
    Ok(RankIo {
        pid,
        pmi: None,
        stdin: child.stdin.take(),
        stdout,
        stderr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LaunchSpec {
        LaunchSpec {
            program: "/bin/prog".into(),
            argv0: "prog".into(),
            args: vec!["a b".into(), "it's".into()],
            env: vec![("X".into(), "1 2".into())],
            size: 4,
            ..Default::default()
        }
    }

    #[test]
    fn netns_command_line_is_not_quoted() {
        let l = RemoteLaunch {
            launcher: vec!["ip".into(), "netns".into(), "exec".into()],
            pmi_port: "10.0.0.1:5000".into(),
        };
        let line: Vec<String> = l
            .command_line(&spec(), 2, "oxmpi-h2", "tok")
            .into_iter()
            .map(|w| w.into_string().unwrap())
            .collect();
        assert_eq!(
            line,
            [
                "ip",
                "netns",
                "exec",
                "oxmpi-h2",
                "env",
                "PMI_PORT=10.0.0.1:5000",
                "PMI_ID=2",
                "PMI_RANK=2",
                "PMI_SIZE=4",
                "OXMPI_LAUNCHER=1",
                "OXMPI_PMI_TOKEN=tok",
                "X=1 2",
                "/bin/prog",
                "a b",
                "it's"
            ]
        );
    }

    #[test]
    fn ssh_command_line_is_quoted() {
        let l = RemoteLaunch {
            launcher: vec!["/usr/bin/ssh".into()],
            pmi_port: "h:1".into(),
        };
        let line = l.command_line(&spec(), 0, "node1", "tok");
        assert_eq!(line[1], "node1");
        assert_eq!(line[2], "env");
        assert_eq!(line[line.len() - 4], "'X=1 2'");
        assert_eq!(line[line.len() - 3], "/bin/prog");
        assert_eq!(line[line.len() - 2], "'a b'");
        assert_eq!(line[line.len() - 1], "'it'\\''s'");
    }
}
