//! Command-line parsing for `mpiexec`, following MPICH Hydra's spelling of
//! the options we support.

use std::ffi::{OsStr, OsString};
use std::fmt;

/// Upper bound on `-n`, far above what one node can run, to turn typos such
/// as `-n 10000000` into an error instead of a fork storm.
pub const MAX_PROCS: u32 = 1 << 16;

pub const USAGE: &str = "\
Usage: mpiexec [options] [--] PROGRAM [ARGS...] [: [block options] PROG2 [ARGS...]]...
       mpiexec [options] -configfile FILE

Starts PROGRAM as an MPI job on this machine, or on several hosts, and
serves PMI-1 to it. Blocks separated by a lone ':' start different programs
in one MPI_COMM_WORLD (MPMD): ranks are numbered in block order and
MPI_APPNUM is the block's index.

Options of one block (each block has its own):
  -n N, -np N          number of processes to start (default 1, or with
                       hosts given and a single block, the sum of their
                       slots / ppn)
  -env NAME VALUE      set NAME=VALUE for this block's processes
  -wdir DIR            working directory of this block's processes

Options of the whole job:
  -configfile FILE     read the blocks from FILE, one per line ('#' starts
                       a comment line; quotes as in a shell)
  -genv NAME VALUE     set NAME=VALUE in the environment of all processes
  -x NAME[=VALUE]      same as -genv; without a value, mpiexec's own
  -genvall             processes inherit mpiexec's environment (default)
  -genvnone            processes inherit none of mpiexec's environment
  -genvlist A,B,...    processes inherit only these of mpiexec's variables
  -gwdir DIR           working directory of blocks without -wdir
  --timeout SECS       end the job after SECS seconds with status 124
                       (default: $MPIEXEC_TIMEOUT, else no limit)
  --bind-to core|none  bind each rank on this machine to one core of those
                       mpiexec may use, in turn (default none)
  -outfile-pattern P   write each rank's stdout to the file P, where %r is
                       the rank, %h the host and %% a percent sign
  -errfile-pattern P   the same for stderr
  --output-filename DIR
                       write rank N's stdout and stderr to DIR/1/rank.N/
                       stdout and .../stderr (Open MPI's layout)
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
                       'off' disables it (ranks on other hosts report over
                       their PMI connection and are watched too)
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
  --dump [JOBID]       (instead of a program) print what every rank of a
                       running job is doing, from another terminal; JOBID
                       is the job's mpiexec pid (default: the only job)
  --                   end of options; the next argument is PROGRAM
  -h, --help           show this help and exit
  --version            show the version and exit

Hosts named localhost, 127.0.0.1 or this machine's name run locally.
Processes inherit mpiexec's environment (remote ones get PMI variables and
-genv values only). Standard input goes to rank 0;
the other ranks read /dev/null. SIGINT and SIGTERM are forwarded to all
ranks; SIGUSR1 prints what every rank is blocked on without stopping the
job, as does 'mpiexec --dump JOBID' from another terminal (JOBID: the
process id of the job's mpiexec; without it, the user's only running job).
The exit status is 0 if every rank exited 0, otherwise that of the
first rank that failed (128+N for signal N), or the MPI_Abort code, or 86
when the job deadlocked, or 124 when it ran out of time.";

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
    /// `--dump [JOBID]`: print a running job's state.
    Dump(Option<String>),
    Help,
    Version,
}

/// Which of mpiexec's own environment variables the ranks inherit
/// (`-genvall`, the default; `-genvnone`; `-genvlist A,B`). Variables set
/// with `-genv`/`-env` are always set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvProp {
    All,
    None,
    List(Vec<String>),
}

/// Processor binding (`--bind-to`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bind {
    None,
    /// Each local rank to one core of those mpiexec may use, in turn.
    Core,
}

/// One executable block of an MPMD command line (`-n 1 a : -n 3 b`); a
/// plain command line is one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct App {
    /// `-n`, if given.
    pub nprocs: Option<u32>,
    pub program: OsString,
    pub args: Vec<OsString>,
    /// `-env NAME VALUE` of this block, applied after the global `-genv`s.
    pub env: Vec<(OsString, OsString)>,
    /// `-wdir DIR` of this block (else `-gwdir`, else mpiexec's own).
    pub wdir: Option<OsString>,
}

/// Where rank output goes instead of mpiexec's own stdout/stderr.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OutputFiles {
    /// `-outfile-pattern P` (`%r` rank, `%h` host, `%%` a percent sign).
    pub out_pattern: Option<String>,
    /// `-errfile-pattern P`.
    pub err_pattern: Option<String>,
    /// `--output-filename DIR`: `DIR/1/rank.N/stdout` and `.../stderr`, as
    /// Open MPI lays them out.
    pub dir: Option<OsString>,
}

/// Everything needed to start a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
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
    /// `-genv`: variables set in every rank, in command-line order (later wins).
    pub env: Vec<(OsString, OsString)>,
    /// `-genvall` / `-genvnone` / `-genvlist`.
    pub env_prop: EnvProp,
    /// `-gwdir DIR`: the working directory of blocks without `-wdir`.
    pub wdir: Option<OsString>,
    /// `--timeout SECONDS`, in milliseconds.
    pub timeout_ms: Option<u64>,
    pub bind: Bind,
    pub output: OutputFiles,
    /// The executable blocks, in rank order (at least one).
    pub apps: Vec<App>,
    /// `-usize N` (MPI_UNIVERSE_SIZE).
    pub universe_size: Option<u32>,
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

/// The options of the block being parsed.
#[derive(Default)]
struct BlockOpts {
    nprocs: Option<u32>,
    env: Vec<(OsString, OsString)>,
    wdir: Option<OsString>,
}

/// Parses the arguments after the program name.
///
/// Blocks are separated by a lone `:`; each block is `[options] PROGRAM
/// [ARGS...]`. `-n`, `-env` and `-wdir` belong to their block, every other
/// option to the whole job (wherever it appears). `-configfile FILE`
/// stands for the blocks in FILE, one per line.
pub fn parse<I>(args: I) -> Result<Command, UsageError>
where
    I: IntoIterator<Item = OsString>,
{
    let mut args: std::collections::VecDeque<OsString> = args.into_iter().collect();
    let mut label = false;
    let mut env = Vec::new();
    let mut env_prop = EnvProp::All;
    let mut gwdir = None;
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
    let mut timeout_ms = None;
    let mut bind = Bind::None;
    let mut output = OutputFiles::default();
    let mut apps: Vec<App> = Vec::new();
    let mut block = BlockOpts::default();
    let mut configfiles = 0;
    let mut force_program = false;
    loop {
        let Some(arg) = args.pop_front() else {
            return Err(UsageError(if apps.is_empty() {
                "no program to run was given".into()
            } else {
                "no program given after ':'".into()
            }));
        };
        let is_option = !force_program && arg.to_str().is_some_and(|s| s.starts_with('-'));
        force_program = false;
        if !is_option {
            if arg == ":" {
                return Err(UsageError(format!(
                    "executable block {} has no program before ':'",
                    apps.len() + 1
                )));
            }
            // The program: its arguments run to the next lone ':'.
            let mut app_args = Vec::new();
            let mut more = false;
            while let Some(a) = args.pop_front() {
                if a == ":" {
                    more = true;
                    break;
                }
                app_args.push(a);
            }
            let b = std::mem::take(&mut block);
            apps.push(App {
                nprocs: b.nprocs,
                program: arg,
                args: app_args,
                env: b.env,
                wdir: b.wdir,
            });
            if more {
                continue;
            }
            break;
        }
        let opt = arg.to_str().unwrap_or_default().to_string();
        let opt = opt.as_str();
        let args = &mut args;
        match opt {
            "--" => match args.front() {
                Some(p) if p != ":" => force_program = true,
                _ => return Err(UsageError("no program given after '--'".into())),
            },
            "-h" | "-help" | "--help" => return Ok(Command::Help),
            "--dump" | "-dump" => {
                let id = args.pop_front().map(|v| utf8(opt, v)).transpose()?;
                if args.pop_front().is_some() {
                    return Err(UsageError(
                        "--dump takes one job id and nothing after it".into(),
                    ));
                }
                return Ok(Command::Dump(id));
            }
            "--version" | "-version" => return Ok(Command::Version),
            "-n" | "-np" => {
                if block.nprocs.is_some() {
                    return Err(UsageError(format!("{opt} given more than once")));
                }
                let value = take_value(args, opt)?;
                block.nprocs = Some(parse_nprocs(opt, &value)?);
            }
            "-l" | "-prepend-rank" | "--prepend-rank" => label = true,
            "-hosts" | "--hosts" | "-host" | "--host" | "-f" | "-hostfile" | "--hostfile" => {
                if hosts.is_some() {
                    return Err(UsageError(
                        "give the hosts once, with either -hosts or -f".into(),
                    ));
                }
                let value = take_value(args, opt)?;
                hosts = Some(if opt.contains('f') {
                    HostSource::File(value)
                } else {
                    HostSource::List(utf8(opt, value)?)
                });
            }
            "-ppn" | "--ppn" => {
                let value = take_value(args, opt)?;
                ppn = Some(parse_nprocs(opt, &value)?);
            }
            "-usize" | "--usize" | "-universe_size" => {
                let value = take_value(args, opt)?;
                universe_size = Some(parse_nprocs(opt, &value)?);
            }
            "-rr" | "--rr" => round_robin = true,
            "--map-by" | "-map-by" => {
                let value = take_value(args, opt)?;
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
                let value = utf8(opt, take_value(args, opt)?)?;
                let words: Vec<OsString> = value.split_whitespace().map(OsString::from).collect();
                if words.is_empty() {
                    return Err(UsageError(format!("{opt} needs a command")));
                }
                launcher = Some(words);
            }
            "--pmi-bind" | "-pmi-bind" => {
                let value = utf8(opt, take_value(args, opt)?)?;
                if value.is_empty() {
                    return Err(UsageError(format!("{opt} needs an address")));
                }
                pmi_bind = Some(value);
            }
            "--check" | "-check" => check = true,
            "--trace" | "-trace" => trace = Some(take_value(args, opt)?),
            "--trace-filter" | "-trace-filter" => {
                trace_filter = Some(utf8(opt, take_value(args, opt)?)?)
            }
            "--hang-check" | "-hang-check" => {
                let value = take_value(args, opt)?;
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
                let value = take_value(args, opt)?;
                hang_after_ms = parse_seconds(opt, &value, 0.0)?;
            }
            "--timeout" | "-timeout" => {
                let value = take_value(args, opt)?;
                timeout_ms = Some(parse_seconds(opt, &value, 0.001)?);
            }
            "-genv" | "--genv" => {
                let name = take_value(args, opt)?;
                let value = take_value(args, opt)?;
                check_env_name(opt, &name)?;
                env.push((name, value));
            }
            // Open MPI's spelling: `-x NAME=VALUE` sets, `-x NAME` passes mpiexec's value.
            "-x" => {
                let word = take_value(args, opt)?;
                let (name, value) = match word.to_str().and_then(|w| w.split_once('=')) {
                    Some((n, v)) => (OsString::from(n), OsString::from(v)),
                    None => {
                        let v = std::env::var_os(&word).ok_or_else(|| {
                            UsageError(format!(
                                "-x {}: no such variable in mpiexec's environment",
                                word.to_string_lossy()
                            ))
                        })?;
                        (word, v)
                    }
                };
                check_env_name(opt, &name)?;
                env.push((name, value));
            }
            "-env" | "--env" => {
                let name = take_value(args, opt)?;
                let value = take_value(args, opt)?;
                check_env_name(opt, &name)?;
                block.env.push((name, value));
            }
            "-genvall" | "--genvall" => env_prop = EnvProp::All,
            "-genvnone" | "--genvnone" => env_prop = EnvProp::None,
            "-genvlist" | "--genvlist" => {
                let value = utf8(opt, take_value(args, opt)?)?;
                let names: Vec<String> = value
                    .split(',')
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .collect();
                if names.is_empty() {
                    return Err(UsageError(format!(
                        "{opt} needs a comma-separated list of variable names"
                    )));
                }
                for n in &names {
                    check_env_name(opt, n.as_ref())?;
                }
                env_prop = EnvProp::List(names);
            }
            "-wdir" | "--wdir" | "-dir" => {
                let value = take_value(args, opt)?;
                if value.is_empty() {
                    return Err(UsageError(format!("{opt} needs a directory")));
                }
                block.wdir = Some(value);
            }
            "-gwdir" | "--gwdir" => {
                let value = take_value(args, opt)?;
                if value.is_empty() {
                    return Err(UsageError(format!("{opt} needs a directory")));
                }
                gwdir = Some(value);
            }
            "--bind-to" | "-bind-to" => {
                let value = take_value(args, opt)?;
                bind = match value.to_str() {
                    Some("none") => Bind::None,
                    Some("core") => Bind::Core,
                    _ => {
                        return Err(UsageError(format!(
                            "{opt} takes 'core' or 'none', not '{}'",
                            value.to_string_lossy()
                        )))
                    }
                };
            }
            "-outfile-pattern" | "--outfile-pattern" => {
                let value = utf8(opt, take_value(args, opt)?)?;
                check_pattern(opt, &value)?;
                output.out_pattern = Some(value);
            }
            "-errfile-pattern" | "--errfile-pattern" => {
                let value = utf8(opt, take_value(args, opt)?)?;
                check_pattern(opt, &value)?;
                output.err_pattern = Some(value);
            }
            "--output-filename" | "-output-filename" => {
                let value = take_value(args, opt)?;
                if value.is_empty() {
                    return Err(UsageError(format!("{opt} needs a directory")));
                }
                output.dir = Some(value);
            }
            "-configfile" | "--configfile" => {
                configfiles += 1;
                if configfiles > 16 {
                    return Err(UsageError(format!(
                        "{opt}: configuration files nest too deep"
                    )));
                }
                let path = take_value(args, opt)?;
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    UsageError(format!(
                        "{opt}: cannot read '{}': {e}",
                        path.to_string_lossy()
                    ))
                })?;
                let words = config_words(&text)
                    .map_err(|e| UsageError(format!("{opt} '{}': {e}", path.to_string_lossy())))?;
                if words.is_empty() {
                    return Err(UsageError(format!(
                        "{opt} '{}' names no program",
                        path.to_string_lossy()
                    )));
                }
                for w in words.into_iter().rev() {
                    args.push_front(w);
                }
            }
            _ => return Err(UsageError(format!("unknown option '{opt}'"))),
        }
    }
    if output.dir.is_some() && (output.out_pattern.is_some() || output.err_pattern.is_some()) {
        return Err(UsageError(
            "give either --output-filename or -outfile-pattern/-errfile-pattern, not both".into(),
        ));
    }
    Ok(Command::Run(Options {
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
        env_prop,
        wdir: gwdir,
        timeout_ms,
        bind,
        output,
        apps,
        universe_size,
    }))
}

/// The words of a `-configfile`: one executable block per line (blocks
/// joined with `:`), `#` lines are comments, words split at blanks with
/// shell-like single quotes, double quotes and backslashes.
fn config_words(text: &str) -> Result<Vec<OsString>, String> {
    let mut out: Vec<OsString> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let words = split_words(t).map_err(|e| format!("line {}: {e}", n + 1))?;
        if !out.is_empty() {
            out.push(":".into());
        }
        out.extend(words.into_iter().map(OsString::from));
    }
    Ok(out)
}

fn split_words(line: &str) -> Result<Vec<String>, &'static str> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("unterminated single quote"),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c) => cur.push(c),
                            None => return Err("unterminated double quote"),
                        },
                        Some(c) => cur.push(c),
                        None => return Err("unterminated double quote"),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => cur.push(c),
                    None => return Err("a backslash ends the line"),
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Checks an output file pattern: `%r`, `%h` and `%%` are the only escapes.
fn check_pattern(opt: &str, p: &str) -> Result<(), UsageError> {
    let mut chars = p.chars();
    if p.is_empty() {
        return Err(UsageError(format!("{opt} needs a file name pattern")));
    }
    while let Some(c) = chars.next() {
        if c == '%' && !matches!(chars.next(), Some('r' | 'h' | '%')) {
            return Err(UsageError(format!(
                "{opt} '{p}': only %r (rank), %h (host) and %% may follow '%'"
            )));
        }
    }
    Ok(())
}

/// `pattern` with `%r` replaced by `rank`, `%h` by `host`, `%%` by `%`.
pub fn expand_pattern(pattern: &str, rank: u32, host: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('r') => out.push_str(&rank.to_string()),
            Some('h') => out.push_str(host),
            Some(c) => out.push(c),
            None => out.push('%'),
        }
    }
    out
}

/// A number of seconds, at least `min` and at most a day, in milliseconds.
fn parse_seconds(opt: &str, value: &OsStr, min: f64) -> Result<u64, UsageError> {
    match value.to_str().and_then(|v| v.parse::<f64>().ok()) {
        Some(v) if v.is_finite() && v >= min && v <= 86400.0 => Ok((v * 1000.0).round() as u64),
        _ => Err(UsageError(format!(
            "{opt} takes a number of seconds ({} to 86400), not '{}'",
            if min > 0.0 { "more than 0" } else { "0" },
            value.to_string_lossy()
        ))),
    }
}

fn take_value(
    args: &mut std::collections::VecDeque<OsString>,
    opt: &str,
) -> Result<OsString, UsageError> {
    args.pop_front()
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
        assert_eq!(o.apps.len(), 1);
        assert_eq!(o.apps[0].nprocs, Some(4));
        assert_eq!(o.apps[0].program, "./a.out");
        assert_eq!(
            o.apps[0].args,
            vec![OsString::from("x"), "-n".into(), "9".into()]
        );
        assert!(!o.label);
        assert_eq!(run(&["prog"]).apps[0].nprocs, None);
        assert_eq!(run(&["prog"]).hosts, None);
    }

    #[test]
    fn all_options() {
        let o = run(&[
            "-np", "2", "-l", "-genv", "A", "1", "-env", "B", "x y", "--", "-prog",
        ]);
        assert_eq!(o.apps[0].nprocs, Some(2));
        assert!(o.label);
        assert_eq!(o.env, vec![("A".into(), "1".into())]);
        assert_eq!(o.apps[0].env, vec![("B".into(), "x y".into())]);
        assert_eq!(o.apps[0].program, "-prog");
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
    fn mpmd_blocks() {
        let o = run(&[
            "-genv", "G", "1", "-n", "1", "-env", "E", "a", "-wdir", "/tmp", "ocean", "-x", ":",
            "-np", "3", "-gwdir", "/", "atm", "--", ":", "last",
        ]);
        assert_eq!(o.apps.len(), 3);
        assert_eq!(o.env, vec![("G".into(), "1".into())]);
        assert_eq!(o.wdir, Some("/".into()));
        let a = &o.apps[0];
        assert_eq!(
            (a.nprocs, a.program.as_os_str(), a.args.clone()),
            (Some(1), "ocean".as_ref(), vec!["-x".into()])
        );
        assert_eq!(a.env, vec![("E".into(), "a".into())]);
        assert_eq!(a.wdir, Some("/tmp".into()));
        let b = &o.apps[1];
        assert_eq!(
            (b.nprocs, b.program.as_os_str(), b.args.clone()),
            (Some(3), "atm".as_ref(), vec!["--".into()])
        );
        assert!(b.env.is_empty() && b.wdir.is_none());
        assert_eq!(
            (o.apps[2].nprocs, o.apps[2].program.as_os_str()),
            (None, "last".as_ref())
        );
        for bad in [
            &["a", ":"][..],
            &[":", "a"],
            &["-n", "1", "a", ":", ":", "b"],
            &["a", ":", "-n", "2"],
        ] {
            assert!(p(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn job_options() {
        let o = run(&[
            "-genvnone",
            "--timeout",
            "2.5",
            "--bind-to",
            "core",
            "-outfile-pattern",
            "o.%r",
            "-errfile-pattern",
            "e%%%h",
            "p",
        ]);
        assert_eq!(o.env_prop, EnvProp::None);
        assert_eq!(o.timeout_ms, Some(2500));
        assert_eq!(o.bind, Bind::Core);
        assert_eq!(o.output.out_pattern.as_deref(), Some("o.%r"));
        assert_eq!(o.output.err_pattern.as_deref(), Some("e%%%h"));
        assert_eq!(
            run(&["-genvlist", "A,B", "p"]).env_prop,
            EnvProp::List(vec!["A".into(), "B".into()])
        );
        assert_eq!(
            run(&["--output-filename", "d", "p"]).output.dir,
            Some("d".into())
        );
        assert_eq!(
            run(&["-x", "K=v=w", "p"]).env,
            vec![("K".into(), "v=w".into())]
        );
        assert_eq!(expand_pattern("out.%r.%h.%%", 7, "n1"), "out.7.n1.%");
        for bad in [
            &["--timeout", "0", "p"][..],
            &["--timeout", "x", "p"],
            &["--bind-to", "socket", "p"],
            &["-outfile-pattern", "a%x", "p"],
            &["-genvlist", ",", "p"],
            &["--output-filename", "d", "-outfile-pattern", "x", "p"],
            &["-wdir", "", "p"],
            &["-configfile", "/nonexistent/oxmpi.cfg"],
        ] {
            assert!(p(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn config_file_lines_are_blocks() {
        let w = config_words("# coupled run\n-n 1 ocean 'a b'\n\n  -n 3 -env X \"q \\\" r\" atm\n")
            .unwrap();
        let w: Vec<String> = w.into_iter().map(|w| w.into_string().unwrap()).collect();
        assert_eq!(
            w,
            ["-n", "1", "ocean", "a b", ":", "-n", "3", "-env", "X", "q \" r", "atm"]
        );
        assert!(config_words("-n 1 'a").is_err());
    }

    #[test]
    fn help_and_version() {
        assert_eq!(p(&["--help"]), Ok(Command::Help));
        assert_eq!(p(&["-n", "2", "-h"]), Ok(Command::Help));
        assert_eq!(p(&["--version"]), Ok(Command::Version));
        assert_eq!(p(&["--dump"]), Ok(Command::Dump(None)));
        assert_eq!(
            p(&["--dump", "1234"]),
            Ok(Command::Dump(Some("1234".into())))
        );
        assert!(p(&["--dump", "1", "2"]).is_err());
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
            p(&["-q", "p"]),
            Err(UsageError("unknown option '-q'".into()))
        );
    }
}
