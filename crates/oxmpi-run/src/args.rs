//! Command-line parsing for `mpiexec`, following MPICH Hydra's spelling of
//! the options we support.

use std::ffi::{OsStr, OsString};
use std::fmt;

/// Upper bound on `-n`, far above what one node can run, to turn typos such
/// as `-n 10000000` into an error instead of a fork storm.
pub const MAX_PROCS: u32 = 1 << 16;

pub const USAGE: &str = "\
Usage: mpiexec [options] [--] PROGRAM [ARGS...]

Starts PROGRAM as an MPI job on this machine, or on several hosts, and
serves PMI-1 to it.

Options:
  -n N, -np N          number of processes to start (default 1, or with
                       hosts given, the sum of their slots / ppn)
  -hosts H1,H2,...     hosts to run on, each HOST or HOST:SLOTS (slots
                       default 1)
  -f FILE, -hostfile FILE
                       read hosts from FILE: one HOST[:SLOTS] per line,
                       '#' starts a comment
  -ppn K               K processes per host (overrides the slot counts)
  -usize N             MPI_UNIVERSE_SIZE: processes the job may have in all,
                       spawned ones included (default: the host slots, or -n)
  -rr, --map-by node   round-robin placement: one rank per host in turn
                       (default: block, filling each host's slots first)
  --map-by slot        block placement (the default)
  --launcher-exec CMD  start ranks on other hosts with 'CMD HOST env
                       VAR=VALUE... PROGRAM ARGS' (default 'ssh'; CMD is
                       split at spaces, e.g. 'ip netns exec'; for ssh/rsh
                       the remote words are shell-quoted)
  --pmi-bind ADDR      address of the TCP PMI server that remote ranks
                       connect to (default 0.0.0.0, published as this
                       host's name; only used when some host is remote)
  -l, -prepend-rank    prefix every output line with [RANK]
  --hang-check MODE    deadlock detection: 'abort' (default) prints what
                       every rank waits for and ends the job with status 86
                       once every rank is blocked in MPI with no message in
                       flight; 'report' prints it and lets the job hang on;
                       'off' disables it (ranks on other hosts are not
                       watched)
  --check              checking mode (OXMPI_CHECK=1): every collective first
                       checks that all ranks called the same one, in the
                       same order, with the same root, operation and type
                       signature; a difference is an MPI_ERR_NOT_SAME error
                       naming the ranks and calls
  --trace FILE         write a timeline of the job to FILE in the Chrome
                       trace event format (open it in ui.perfetto.dev or
                       chrome://tracing): every MPI call of every local
                       rank as a slice, every message as an arrow from the
                       send to the receive
  --trace-filter TEXT  trace only the calls whose name contains TEXT
  --hang-after SECS    how long a rank must sit idle in one MPI call before
                       it counts as blocked (default 1)
  -genv NAME VALUE     set NAME=VALUE in the environment of all processes
  -env NAME VALUE      same as -genv (there is a single executable)
  --                   end of options; the next argument is PROGRAM
  -h, --help           show this help and exit
  --version            show the version and exit

Hosts named localhost, 127.0.0.1 or this machine's name run locally.
Processes inherit mpiexec's environment (remote ones get PMI variables and
-genv values only). Standard input goes to rank 0;
the other ranks read /dev/null. SIGINT and SIGTERM are forwarded to all
ranks; SIGUSR1 prints what every rank is blocked on without stopping the
job. The exit status is 0 if every rank exited 0, otherwise that of the
first rank that failed (128+N for signal N), or the MPI_Abort code, or 86
when the job deadlocked.";

/// What `--hang-check` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HangCheck {
    Off,
    Report,
    Abort,
}

/// What the user asked for (parsed once: the size of `Run` does not matter).
#[derive(Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
pub enum Command {
    Run(Options),
    Help,
    Version,
}

/// Everything needed to start a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `-n`, if given.
    pub nprocs: Option<u32>,
    pub hosts: Option<HostSource>,
    pub ppn: Option<u32>,
    /// Round-robin (`-rr`, `--map-by node`) rather than block placement.
    pub round_robin: bool,
    /// `--launcher-exec`, split into words.
    pub launcher: Option<Vec<OsString>>,
    pub pmi_bind: Option<String>,
    pub label: bool,
    pub hang_check: HangCheck,
    /// `--check`.
    pub check: bool,
    /// `--trace FILE`, `--trace-filter TEXT`.
    pub trace: Option<OsString>,
    pub trace_filter: Option<String>,
    /// `--hang-after`, in milliseconds.
    pub hang_after_ms: u64,
    /// Variables set in every rank, in command-line order (later wins).
    pub env: Vec<(OsString, OsString)>,
    /// `-usize N` (MPI_UNIVERSE_SIZE).
    pub universe_size: Option<u32>,
    pub program: OsString,
    pub args: Vec<OsString>,
}

/// Where the host list comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostSource {
    /// `-hosts a,b:2`.
    List(String),
    /// `-f FILE`.
    File(OsString),
}

/// A command line we cannot run.
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses the arguments after the program name.
pub fn parse<I>(args: I) -> Result<Command, UsageError>
where
    I: IntoIterator<Item = OsString>,
{
    let mut args = args.into_iter();
    let mut nprocs: Option<u32> = None;
    let mut label = false;
    let mut env = Vec::new();
    let mut hosts = None;
    let mut ppn = None;
    let mut universe_size = None;
    let mut round_robin = false;
    let mut launcher = None;
    let mut pmi_bind = None;
    let mut hang_check = HangCheck::Abort;
    let mut check = false;
    let mut trace = None;
    let mut trace_filter = None;
    let mut hang_after_ms = 1000;
    let program = loop {
        let Some(arg) = args.next() else {
            return Err(UsageError("no program to run was given".into()));
        };
        let Some(opt) = arg.to_str().filter(|s| s.starts_with('-')) else {
            break arg;
        };
        match opt {
            "--" => match args.next() {
                Some(p) => break p,
                None => return Err(UsageError("no program given after '--'".into())),
            },
            "-h" | "-help" | "--help" => return Ok(Command::Help),
            "--version" | "-version" => return Ok(Command::Version),
            "-n" | "-np" => {
                if nprocs.is_some() {
                    return Err(UsageError(format!("{opt} given more than once")));
                }
                let value = take_value(&mut args, opt)?;
                nprocs = Some(parse_nprocs(opt, &value)?);
            }
            "-l" | "-prepend-rank" | "--prepend-rank" => label = true,
            "-hosts" | "--hosts" | "-host" | "--host" | "-f" | "-hostfile" | "--hostfile" => {
                if hosts.is_some() {
                    return Err(UsageError(
                        "give the hosts once, with either -hosts or -f".into(),
                    ));
                }
                let value = take_value(&mut args, opt)?;
                hosts = Some(if opt.contains('f') {
                    HostSource::File(value)
                } else {
                    HostSource::List(utf8(opt, value)?)
                });
            }
            "-ppn" | "--ppn" => {
                let value = take_value(&mut args, opt)?;
                ppn = Some(parse_nprocs(opt, &value)?);
            }
            "-usize" | "--usize" | "-universe_size" => {
                let value = take_value(&mut args, opt)?;
                universe_size = Some(parse_nprocs(opt, &value)?);
            }
            "-rr" | "--rr" => round_robin = true,
            "--map-by" | "-map-by" => {
                let value = take_value(&mut args, opt)?;
                round_robin = match value.to_str() {
                    Some("node") => true,
                    Some("slot" | "core") => false,
                    _ => {
                        return Err(UsageError(format!(
                            "{opt} takes 'node' or 'slot', not '{}'",
                            value.to_string_lossy()
                        )))
                    }
                };
            }
            "--launcher-exec" | "-launcher-exec" => {
                let value = utf8(opt, take_value(&mut args, opt)?)?;
                let words: Vec<OsString> = value.split_whitespace().map(OsString::from).collect();
                if words.is_empty() {
                    return Err(UsageError(format!("{opt} needs a command")));
                }
                launcher = Some(words);
            }
            "--pmi-bind" | "-pmi-bind" => {
                let value = utf8(opt, take_value(&mut args, opt)?)?;
                if value.is_empty() {
                    return Err(UsageError(format!("{opt} needs an address")));
                }
                pmi_bind = Some(value);
            }
            "--check" | "-check" => check = true,
            "--trace" | "-trace" => trace = Some(take_value(&mut args, opt)?),
            "--trace-filter" | "-trace-filter" => trace_filter = Some(utf8(opt, take_value(&mut args, opt)?)?),
            "--hang-check" | "-hang-check" => {
                let value = take_value(&mut args, opt)?;
                hang_check = match value.to_str() {
                    Some("off") => HangCheck::Off,
                    Some("report") => HangCheck::Report,
                    Some("abort") => HangCheck::Abort,
                    _ => {
                        return Err(UsageError(format!(
                            "{opt} takes 'off', 'report' or 'abort', not '{}'",
                            value.to_string_lossy()
                        )))
                    }
                };
            }
            "--hang-after" | "-hang-after" => {
                let value = take_value(&mut args, opt)?;
                hang_after_ms = match value.to_str().and_then(|v| v.parse::<f64>().ok()) {
                    Some(v) if v.is_finite() && (0.0..=86400.0).contains(&v) => (v * 1000.0).round() as u64,
                    _ => {
                        return Err(UsageError(format!(
                            "{opt} takes a number of seconds (0 to 86400), not '{}'",
                            value.to_string_lossy()
                        )))
                    }
                };
            }
            "-genv" | "-env" => {
                let name = take_value(&mut args, opt)?;
                let value = take_value(&mut args, opt)?;
                check_env_name(opt, &name)?;
                env.push((name, value));
            }
            _ => return Err(UsageError(format!("unknown option '{opt}'"))),
        }
    };
    Ok(Command::Run(Options {
        nprocs,
        hosts,
        ppn,
        round_robin,
        launcher,
        pmi_bind,
        label,
        hang_check,
        check,
        trace,
        trace_filter,
        hang_after_ms,
        env,
        universe_size,
        program,
        args: args.collect(),
    }))
}

fn take_value(
    args: &mut impl Iterator<Item = OsString>,
    opt: &str,
) -> Result<OsString, UsageError> {
    args.next()
        .ok_or_else(|| UsageError(format!("option '{opt}' needs an argument")))
}

fn utf8(opt: &str, value: OsString) -> Result<String, UsageError> {
    value.into_string().map_err(|v| {
        UsageError(format!(
            "{opt}: '{}' is not valid UTF-8",
            v.to_string_lossy()
        ))
    })
}

fn parse_nprocs(opt: &str, value: &OsStr) -> Result<u32, UsageError> {
    let text = value.to_string_lossy();
    match text.parse::<u32>() {
        Ok(n) if (1..=MAX_PROCS).contains(&n) => Ok(n),
        _ => Err(UsageError(format!(
            "{opt} needs a process count between 1 and {MAX_PROCS}, not '{text}'"
        ))),
    }
}

fn check_env_name(opt: &str, name: &OsStr) -> Result<(), UsageError> {
    let bytes = name.as_encoded_bytes();
    if bytes.is_empty() || bytes.contains(&b'=') || bytes.contains(&0) {
        return Err(UsageError(format!(
            "{opt}: '{}' is not a valid environment variable name",
            name.to_string_lossy()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Command, UsageError> {
        parse(args.iter().map(OsString::from))
    }

    fn run(args: &[&str]) -> Options {
        match p(args) {
            Ok(Command::Run(o)) => o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn basic() {
        let o = run(&["-n", "4", "./a.out", "x", "-n", "9"]);
        assert_eq!(o.nprocs, Some(4));
        assert_eq!(o.program, "./a.out");
        assert_eq!(o.args, vec![OsString::from("x"), "-n".into(), "9".into()]);
        assert!(!o.label);
        assert_eq!(run(&["prog"]).nprocs, None);
        assert_eq!(run(&["prog"]).hosts, None);
    }

    #[test]
    fn all_options() {
        let o = run(&[
            "-np", "2", "-l", "-genv", "A", "1", "-env", "B", "x y", "--", "-prog",
        ]);
        assert_eq!(o.nprocs, Some(2));
        assert!(o.label);
        assert_eq!(
            o.env,
            vec![("A".into(), "1".into()), ("B".into(), "x y".into())]
        );
        assert_eq!(o.program, "-prog");
    }

    #[test]
    fn multi_host_options() {
        let o = run(&[
            "-hosts",
            "a,b:2",
            "-ppn",
            "3",
            "-rr",
            "--launcher-exec",
            "ip netns  exec",
            "--pmi-bind",
            "10.0.0.1",
            "p",
        ]);
        assert_eq!(o.hosts, Some(HostSource::List("a,b:2".into())));
        assert_eq!(o.ppn, Some(3));
        assert!(o.round_robin);
        assert_eq!(
            o.launcher,
            Some(vec!["ip".into(), "netns".into(), "exec".into()])
        );
        assert_eq!(o.pmi_bind.as_deref(), Some("10.0.0.1"));
        let o = run(&["-f", "hf", "--map-by", "slot", "p"]);
        assert_eq!(o.hosts, Some(HostSource::File("hf".into())));
        assert!(!o.round_robin);
        assert!(run(&["--map-by", "node", "p"]).round_robin);
        assert_eq!(o.launcher, None);
    }

    #[test]
    fn help_and_version() {
        assert_eq!(p(&["--help"]), Ok(Command::Help));
        assert_eq!(p(&["-n", "2", "-h"]), Ok(Command::Help));
        assert_eq!(p(&["--version"]), Ok(Command::Version));
    }

    #[test]
    fn errors() {
        for bad in [
            &[][..],
            &["-n"],
            &["-n", "0", "p"],
            &["-n", "x", "p"],
            &["-n", "-1", "p"],
            &["-n", "99999999", "p"],
            &["-n", "1", "-n", "2", "p"],
            &["-bogus", "p"],
            &["-genv", "A"],
            &["-genv", "A=B", "1", "p"],
            &["-genv", "", "1", "p"],
            &["--"],
            &["-l"],
            &["-hosts", "a", "-f", "x", "p"],
            &["-ppn", "0", "p"],
            &["--map-by", "socket", "p"],
            &["--launcher-exec", " ", "p"],
            &["--pmi-bind", "", "p"],
        ] {
            assert!(p(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            p(&["-x", "p"]),
            Err(UsageError("unknown option '-x'".into()))
        );
    }
}
