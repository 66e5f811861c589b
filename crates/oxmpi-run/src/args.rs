//! Command-line parsing for `mpiexec`, following MPICH Hydra's spelling of
//! the options we support.

use std::ffi::{OsStr, OsString};
use std::fmt;

/// Upper bound on `-n`, far above what one node can run, to turn typos such
/// as `-n 10000000` into an error instead of a fork storm.
pub const MAX_PROCS: u32 = 1 << 16;

pub const USAGE: &str = "\
Usage: mpiexec [options] [--] PROGRAM [ARGS...]

Starts PROGRAM as an MPI job on this machine and serves PMI-1 to it.

Options:
  -n N, -np N          number of processes to start (default 1)
  -l, -prepend-rank    prefix every output line with [RANK]
  -genv NAME VALUE     set NAME=VALUE in the environment of all processes
  -env NAME VALUE      same as -genv (there is a single executable)
  --                   end of options; the next argument is PROGRAM
  -h, --help           show this help and exit
  --version            show the version and exit

Processes inherit mpiexec's environment. Standard input goes to rank 0;
the other ranks read /dev/null. SIGINT and SIGTERM are forwarded to all
ranks. The exit status is 0 if every rank exited 0, otherwise that of the
first rank that failed (128+N for signal N), or the MPI_Abort code.";

/// What the user asked for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Run(Options),
    Help,
    Version,
}

/// Everything needed to start a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub nprocs: u32,
    pub label: bool,
    /// Variables set in every rank, in command-line order (later wins).
    pub env: Vec<(OsString, OsString)>,
    pub program: OsString,
    pub args: Vec<OsString>,
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
        nprocs: nprocs.unwrap_or(1),
        label,
        env,
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
        assert_eq!(o.nprocs, 4);
        assert_eq!(o.program, "./a.out");
        assert_eq!(o.args, vec![OsString::from("x"), "-n".into(), "9".into()]);
        assert!(!o.label);
        assert_eq!(run(&["prog"]).nprocs, 1);
    }

    #[test]
    fn all_options() {
        let o = run(&[
            "-np", "2", "-l", "-genv", "A", "1", "-env", "B", "x y", "--", "-prog",
        ]);
        assert_eq!(o.nprocs, 2);
        assert!(o.label);
        assert_eq!(
            o.env,
            vec![("A".into(), "1".into()), ("B".into(), "x y".into())]
        );
        assert_eq!(o.program, "-prog");
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
        ] {
            assert!(p(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            p(&["-x", "p"]),
            Err(UsageError("unknown option '-x'".into()))
        );
    }
}
