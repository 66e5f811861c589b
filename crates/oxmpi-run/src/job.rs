//! Running a job: one single-threaded poll loop that serves PMI, forwards
//! stdio and signals, reaps ranks and enforces the job-end rules.
//!
//! A single thread keeps ordering simple and deterministic: a rank's last
//! output and last PMI messages are always drained before its death is
//! judged, and every decision happens in one place.
//!
//! Remote ranks (other hosts) are started through a launcher command
//! (`ssh HOST ...`, `ip netns exec HOST ...`) that stays our child: its
//! stdio and exit status are the rank's, so output, signals and the
//! dead-rank rule work as for local ranks. They cannot inherit `PMI_FD` and
//! connect to a TCP PMI server instead (`PMI_PORT`, `PMI_ID`).
//!
//! Secrets. The job secret (32 random bytes, hex) authenticates the ranks'
//! own connections to each other. It never appears on a command line:
//! local ranks get it as `OXMPI_JOB_SECRET` in their environment, and every
//! rank can `get` it from the KVS key `oxmpi-job-secret` (published by the
//! launcher, readable right after `init`, not overwritable by `put`).
//! Because a remote rank's environment travels on the launch command line
//! (visible in `ps`), the TCP PMI server is instead guarded by a per-rank,
//! single-use credential, `OXMPI_PMI_TOKEN`: the first line of a TCP
//! connection must be `cmd=initack pmiid=R secret=TOKEN` for a remote rank
//! R that has not connected yet, else the connection is closed. If R's
//! valid credential is presented again after R connected, whoever saw it
//! may hold the job secret, so the job is ended.

use std::ffi::OsString;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use oxmpi_pmi::{LineDecoder, Message, PmiServer, RankPhase, ServerEvent};

use crate::args::HangCheck;
use crate::hang::{Checker, StatusFile};
use crate::output::{LineForwarder, Sink};
use crate::spawn::{spawn_local, spawn_remote, LaunchSpec, RankIo, RemoteLaunch};
use crate::sys::{self, Exit};

/// Grace period between SIGTERM and SIGKILL when a rank failed.
const FAILURE_GRACE: Duration = Duration::from_millis(500);
/// Grace period between a forwarded SIGINT/SIGTERM and SIGKILL.
const SIGNAL_GRACE: Duration = Duration::from_secs(1);
/// How long an abort for a lost TCP connection waits for the peer's death to
/// be reaped, so that the dead process is the one named.
const LOST_PEER_GRACE: Duration = Duration::from_millis(300);
/// How long to wait, once all ranks are gone, for pipes still held open by
/// processes the ranks left behind.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(300);
/// Upper bound on a poll sleep, as a backstop to the SIGCHLD wakeup.
const TICK: Duration = Duration::from_millis(500);
/// How often the status page is looked at for a deadlock.
const HANG_TICK: Duration = Duration::from_millis(250);
/// How long a TCP PMI connection may take to send its `initack`.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Unauthenticated TCP PMI connections held at once; more are dropped.
const MAX_PENDING: usize = 256;
/// Exit status of a job ended by `--timeout` (as coreutils' `timeout`).
pub const EXIT_TIMEOUT: i32 = 124;
/// Random bytes in each remote rank's single-use PMI credential.
const TOKEN_BYTES: usize = 16;

/// How the job is configured.
#[derive(Debug, Clone)]
pub struct JobConfig {
    /// The executable blocks in rank order, each with its number of ranks
    /// (the block's index is its ranks' `MPI_APPNUM`).
    pub apps: Vec<(LaunchSpec, u32)>,
    pub label: bool,
    pub kvsname: String,
    /// For every rank: `None` to start it here, or the host to start it on
    /// through `launcher`.
    pub placement: Vec<Option<String>>,
    /// `PMI_process_mapping` value.
    pub mapping: String,
    /// Remote launcher command words (`ssh`, `ip netns exec`).
    pub launcher: Vec<OsString>,
    /// Where the TCP PMI server listens (only if some rank is remote).
    pub pmi_bind: Option<String>,
    /// The job secret (hex): `OXMPI_JOB_SECRET` for local ranks, the
    /// `oxmpi-job-secret` KVS entry for all.
    pub secret: String,
    /// `--hang-check` and `--hang-after` (seconds).
    pub hang_check: HangCheck,
    pub hang_after: f64,
    /// `--trace FILE` and `--trace-filter TEXT`.
    pub trace: Option<std::path::PathBuf>,
    pub trace_filter: Option<String>,
    /// `--timeout`: the job is ended after this long.
    pub timeout: Option<Duration>,
    /// `--bind-to core`: the CPUs local ranks are bound to, in turn.
    pub bind_cpus: Option<Vec<usize>>,
    /// Per-rank output files instead of forwarding.
    pub output: crate::args::OutputFiles,
    /// MPI_UNIVERSE_SIZE (`-usize`, else the host slots): spawns beyond it
    /// are refused where the `soft` info key allows fewer processes.
    pub universe_size: u32,
}

impl JobConfig {
    /// The job's size, over all blocks.
    pub fn size(&self) -> u32 {
        self.apps.iter().map(|a| a.1).sum()
    }

    /// Every rank's block index (`MPI_APPNUM`), in rank order.
    pub fn appnums(&self) -> Vec<u32> {
        (0..self.apps.len() as u32)
            .flat_map(|i| std::iter::repeat_n(i, self.apps[i as usize].1 as usize))
            .collect()
    }
}

/// An accepted TCP PMI connection that has not yet authenticated.
struct Pending {
    sock: TcpStream,
    peer: SocketAddr,
    decoder: LineDecoder,
    deadline: Instant,
}

struct PmiConn {
    /// The `PMI_FD` socket pair end, or an authenticated TCP connection.
    sock: File,
    decoder: LineDecoder,
    outbox: Vec<u8>,
}

struct OutStream {
    pipe: Option<File>,
    fwd: LineForwarder,
}

struct Rank {
    pid: libc::pid_t,
    /// The host a remote rank runs on.
    host: Option<String>,
    /// A remote rank's PMI credential.
    token: Option<String>,
    /// A remote rank has authenticated once (the credential is spent).
    tcp_connected: bool,
    exit: Option<Exit>,
    pmi: Option<PmiConn>,
    out: [OutStream; 2],
    /// Which job the process belongs to (0: the one mpiexec started; then one
    /// per MPI_Comm_spawn), and its rank there.
    job: usize,
    jrank: u32,
}

/// Launcher stdin to rank 0's stdin.
struct StdinForward {
    /// Our stdin has not reached EOF.
    source_open: bool,
    sink: Option<File>,
    buf: Vec<u8>,
    sent: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Running,
    /// A rank failed or aborted; the job exits with `code`.
    Failing {
        code: i32,
    },
    /// The user sent SIGINT/SIGTERM, which was forwarded.
    Interrupted,
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Signals,
    Stdin,
    Rank0Stdin,
    Pmi(usize),
    Out(usize, usize),
    Listener,
    Pending(usize),
    Dump,
}

struct Job {
    ranks: Vec<Rank>,
    pgid: libc::pid_t,
    /// The PMI server of each job (index 0: the first; then spawned ones),
    /// and the slot in `ranks` of each job's rank 0.
    servers: Vec<PmiServer>,
    first_slot: Vec<usize>,
    /// Name-service entries this launcher's jobs published (removed at the end).
    published: Vec<std::path::PathBuf>,
    /// What spawned processes need: environment, output labels, the job
    /// secret, the universe size, the kvs name stem.
    spawn: SpawnSetup,
    listener: Option<TcpListener>,
    pending: Vec<Option<Pending>>,
    stdin: StdinForward,
    signals: File,
    ending: Ending,
    kill_at: Option<Instant>,
    first_failure: Option<i32>,
    buf: Vec<u8>,
    /// The job status page (deadlock detection), unless `--hang-check off`.
    status: Option<StatusFile>,
    hang_check: HangCheck,
    checker: Checker,
    next_check: Instant,
    /// `--timeout`: when the job is ended, and the limit as given.
    deadline: Option<(Instant, Duration)>,
    /// `mpiexec --dump`'s socket, and what it names the job.
    dump: Option<crate::dump::DumpSocket>,
    title: String,
}

/// How a status report line of a remote rank starts.
const STATUS_LINE: &str = "cmd=oxmpi_status ";

/// Runs the job to completion and returns the launcher's exit status.
pub fn run(config: &JobConfig) -> i32 {
    let (signal_rx, signal_tx) = match sys::nonblocking_pipe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("mpiexec: cannot create the signal pipe: {e}");
            return 1;
        }
    };
    let signals = [libc::SIGCHLD, libc::SIGINT, libc::SIGTERM, libc::SIGUSR1];
    if let Err(e) = sys::route_signals_to_pipe(signal_tx.as_raw_fd(), &signals) {
        eprintln!("mpiexec: cannot install signal handlers: {e}");
        return 1;
    }
    // The handler writes to this descriptor until the process exits.
    std::mem::forget(signal_tx);

    let size = config.size();
    let appnums = config.appnums();
    let mut server = PmiServer::new(config.kvsname.clone(), size);
    if config.apps.len() > 1 {
        server.set_appnums(appnums.clone());
    }
    server.set_process_mapping(config.mapping.clone());
    server.publish(oxmpi_pmi::JOB_SECRET_KEY, config.secret.clone());
    let (listener, remote) = if config.placement.iter().any(Option::is_some) {
        match open_pmi_listener(config) {
            Ok((listener, pmi_port)) => (
                Some(listener),
                Some(RemoteLaunch {
                    launcher: config.launcher.clone(),
                    pmi_port,
                }),
            ),
            Err(e) => {
                eprintln!("mpiexec: {e}");
                return 1;
            }
        }
    } else {
        (None, None)
    };
    let status = match config.hang_check {
        HangCheck::Off => None,
        _ => match StatusFile::create(size) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("mpiexec: deadlock detection is off: cannot create the status page: {e}");
                None
            }
        },
    };
    let mut local_env = vec![(
        OsString::from(oxmpi_pmi::JOB_SECRET_ENV),
        OsString::from(&config.secret),
    )];
    let trace_dir = config
        .trace
        .as_ref()
        .map(|_| std::env::temp_dir().join(format!("oxmpi-trace-{}", sys::getpid())));
    if let Some(dir) = &trace_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!(
                "mpiexec: cannot make the trace directory {}: {e}",
                dir.display()
            );
            return 1;
        }
        local_env.push(("OXMPI_TRACE_DIR".into(), dir.into()));
        if let Some(f) = &config.trace_filter {
            local_env.push(("OXMPI_TRACE_FILTER".into(), f.into()));
        }
    }
    if let Some(s) = &status {
        local_env.push((
            oxmpi_pmi::status::STATUS_FD_ENV.into(),
            s.fd().to_string().into(),
        ));
        local_env.push((
            oxmpi_pmi::status::HANG_AFTER_ENV.into(),
            config.hang_after.to_string().into(),
        ));
    }
    let watched = status.is_some();
    let spawn_setup = SpawnSetup {
        env: config.apps[0].0.env.clone(),
        extra_env: vec![(
            OsString::from(oxmpi_pmi::JOB_SECRET_ENV),
            OsString::from(&config.secret),
        )],
        label: config.label,
        secret: config.secret.clone(),
        universe: config.universe_size.max(size),
        kvs_stem: config.kvsname.trim_end_matches("_0").to_string(),
        remote: remote.clone(),
    };
    server.set_universe_size(spawn_setup.universe);
    let mut job = Job {
        ranks: Vec::with_capacity(size as usize),
        pgid: 0,
        servers: vec![server],
        first_slot: vec![0],
        published: Vec::new(),
        spawn: spawn_setup,
        listener,
        pending: Vec::new(),
        stdin: StdinForward {
            source_open: true,
            sink: None,
            buf: Vec::new(),
            sent: 0,
        },
        signals: File::from(signal_rx),
        ending: Ending::Running,
        kill_at: None,
        first_failure: None,
        buf: vec![0; 64 * 1024],
        status,
        hang_check: config.hang_check,
        checker: Checker::new(),
        next_check: Instant::now(),
        deadline: None,
        dump: match crate::dump::DumpSocket::open(sys::getpid() as u32) {
            Ok(d) => Some(d),
            Err(e) => {
                eprintln!("mpiexec: 'mpiexec --dump' will not reach this job: {e}");
                None
            }
        },
        title: format!(
            "mpiexec: job {} ({} on {size} rank{}): state of its ranks:",
            sys::getpid(),
            config.apps[0].0.program.display(),
            if size == 1 { "" } else { "s" }
        ),
    };

    job.deadline = config.timeout.map(|t| (Instant::now() + t, t));
    let mut local_index = 0;
    let mut opened = std::collections::HashMap::new();
    for rank in 0..size {
        let pgid = (rank > 0).then_some(job.pgid);
        let host = config.placement[rank as usize].clone();
        let spec = &config.apps[appnums[rank as usize] as usize].0;
        let sinks = match output_sinks(
            &config.output,
            rank,
            host.as_deref(),
            config.label,
            &mut opened,
        ) {
            Ok(s) => s,
            Err(e) => {
                if job.ranks.is_empty() {
                    eprintln!("mpiexec: {e}");
                    return 1;
                }
                job.fail(&e, 1);
                break;
            }
        };
        let started = match (&host, &remote) {
            (Some(host), Some(remote)) => sys::random_hex(TOKEN_BYTES).and_then(|token| {
                // Ranks on other hosts cannot map the status page: they report over
                // their PMI connection instead (`handle_pmi_lines`), so they are watched too.
                let mut spec = spec.clone();
                if watched {
                    spec.env
                        .push((oxmpi_pmi::status::STATUS_PMI_ENV.into(), "1".into()));
                    spec.env.push((
                        oxmpi_pmi::status::HANG_AFTER_ENV.into(),
                        config.hang_after.to_string().into(),
                    ));
                }
                spawn_remote(&spec, rank, pgid, remote, host, &token).map(|io| (io, Some(token)))
            }),
            _ => {
                let mut spec = spec.clone();
                if let Some(cpus) = &config.bind_cpus {
                    spec.cpu = Some(cpus[local_index % cpus.len()]);
                }
                local_index += 1;
                spawn_local(&spec, rank, pgid, &local_env).map(|io| (io, None))
            }
        };
        match started {
            Ok((io, token)) => job.add_rank(io, sinks, host, token),
            Err(e) => {
                let code = match e.kind() {
                    ErrorKind::NotFound | ErrorKind::PermissionDenied => 127,
                    _ => 1,
                };
                let what = match &host {
                    Some(host) => format!(
                        "cannot start rank {rank} on {host} with '{}': {e}",
                        config.launcher[0].to_string_lossy()
                    ),
                    None => format!(
                        "cannot start rank {rank} ('{}'): {e}",
                        spec.program.display()
                    ),
                };
                if job.ranks.is_empty() {
                    eprintln!("mpiexec: {what}");
                    return code;
                }
                job.fail(&what, code);
                break;
            }
        }
    }
    job.run_loop();
    // Names this launcher's jobs published and left: gone with the job.
    for f in std::mem::take(&mut job.published) {
        let _ = std::fs::remove_file(f);
    }
    if let (Some(dir), Some(file)) = (&trace_dir, &config.trace) {
        merge_trace(dir, file, size);
    }
    job.exit_code()
}

/// Where rank `rank`'s stdout and stderr go: mpiexec's own streams (with
/// `[rank]` labels under `-l`), or the files `-outfile-pattern`,
/// `-errfile-pattern` or `--output-filename` name (created, with their
/// directories, and truncated).
fn output_sinks(
    files: &crate::args::OutputFiles,
    rank: u32,
    host: Option<&str>,
    label: bool,
    opened: &mut std::collections::HashMap<std::path::PathBuf, std::rc::Rc<File>>,
) -> Result<[LineForwarder; 2], String> {
    let host = host
        .map(str::to_string)
        .or_else(sys::hostname)
        .unwrap_or_else(|| "localhost".into());
    let paths: [Option<std::path::PathBuf>; 2] = match &files.dir {
        Some(dir) => {
            let d = std::path::Path::new(dir)
                .join("1")
                .join(format!("rank.{rank}"));
            [Some(d.join("stdout")), Some(d.join("stderr"))]
        }
        None => [&files.out_pattern, &files.err_pattern].map(|p| {
            p.as_ref()
                .map(|p| crate::args::expand_pattern(p, rank, &host).into())
        }),
    };
    let mut out = Vec::with_capacity(2);
    for (i, path) in paths.into_iter().enumerate() {
        let sink = match path {
            None if i == 0 => Sink::Stdout,
            None => Sink::Stderr,
            Some(path) if opened.contains_key(&path) => Sink::File(opened[&path].clone()),
            Some(path) => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        format!(
                            "cannot make the directory {} for rank {rank}'s output: {e}",
                            parent.display()
                        )
                    })?;
                }
                let f = File::create(&path).map_err(|e| {
                    format!(
                        "cannot create {} for rank {rank}'s output: {e}",
                        path.display()
                    )
                })?;
                let f = std::rc::Rc::new(f);
                opened.insert(path, f.clone());
                Sink::File(f)
            }
        };
        let labelled = label && matches!(sink, Sink::Stdout | Sink::Stderr);
        out.push(LineForwarder::new(sink, rank, labelled));
    }
    let err = out.pop().expect("two sinks");
    let o = out.pop().expect("two sinks");
    Ok([o, err])
}

/// Joins the ranks' trace fragments into one Chrome trace file.
fn merge_trace(dir: &std::path::Path, file: &std::path::Path, size: u32) {
    let mut parts = Vec::new();
    for r in 0..size {
        if let Ok(p) = std::fs::read_to_string(dir.join(format!("rank-{r}.json"))) {
            if !p.trim().is_empty() {
                parts.push(p);
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
    let text = format!(
        "{{\"traceEvents\":[\n{}\n],\"displayTimeUnit\":\"ns\"}}\n",
        parts.join(",\n")
    );
    match std::fs::write(file, text) {
        Ok(()) => eprintln!(
            "mpiexec: trace of {} of {size} ranks written to {}",
            parts.len(),
            file.display()
        ),
        Err(e) => eprintln!("mpiexec: cannot write the trace to {}: {e}", file.display()),
    }
}

impl Job {
    fn add_rank(
        &mut self,
        io: RankIo,
        sinks: [LineForwarder; 2],
        host: Option<String>,
        token: Option<String>,
    ) {
        let rank = self.ranks.len() as u32;
        if rank == 0 {
            self.pgid = io.pid;
            self.stdin.sink = io.stdin.and_then(|s| nonblocking_file(OwnedFd::from(s)));
        }
        // Without a usable PMI socket the rank simply cannot talk PMI; it
        // still runs, like a non-MPI program would.
        let pmi = io.pmi.and_then(|sock| {
            sock.set_nonblocking(true).ok().map(|()| PmiConn {
                sock: File::from(OwnedFd::from(sock)),
                decoder: LineDecoder::default(),
                outbox: Vec::new(),
            })
        });
        let stdout = nonblocking_file(OwnedFd::from(io.stdout));
        let stderr = nonblocking_file(OwnedFd::from(io.stderr));
        self.ranks.push(Rank {
            job: 0,
            jrank: rank,
            pid: io.pid,
            host,
            token,
            tcp_connected: false,
            exit: None,
            pmi,
            out: {
                let [out, err] = sinks;
                [
                    OutStream {
                        pipe: stdout,
                        fwd: out,
                    },
                    OutStream {
                        pipe: stderr,
                        fwd: err,
                    },
                ]
            },
        });
    }

    fn all_exited(&self) -> bool {
        self.ranks.iter().all(|r| r.exit.is_some())
    }

    fn run_loop(&mut self) {
        let mut fds: Vec<libc::pollfd> = Vec::new();
        let mut slots: Vec<Slot> = Vec::new();
        while !self.all_exited() {
            fds.clear();
            slots.clear();
            self.collect_pollfds(&mut fds, &mut slots, true);
            let timeout = self.poll_timeout();
            if let Err(e) = sys::poll(&mut fds, timeout) {
                // Nothing sensible can continue without poll; end the job
                // rather than spin.
                eprintln!("mpiexec: poll failed: {e}");
                self.fail("internal error in the launcher", 1);
                std::thread::sleep(Duration::from_millis(10));
            }
            for (pfd, slot) in fds.iter().zip(slots.iter()) {
                if pfd.revents != 0 {
                    self.handle_ready(*slot, pfd.revents);
                }
            }
            let now = Instant::now();
            self.pending
                .retain(|p| p.as_ref().is_some_and(|p| now < p.deadline));
            self.reap();
            self.check_hang();
            if let Some((at, limit)) = self.deadline {
                if Instant::now() >= at {
                    self.deadline = None;
                    self.fail(
                        &format!(
                            "the job ran out of time (timeout {} s)",
                            limit.as_secs_f64()
                        ),
                        EXIT_TIMEOUT,
                    );
                }
            }
            if let Some(at) = self.kill_at {
                if Instant::now() >= at {
                    self.kill_at = None;
                    self.signal_all(libc::SIGKILL);
                }
            }
        }
        self.drain_after_exit();
    }

    fn poll_timeout(&self) -> i32 {
        let tick = if self.status.is_some() {
            HANG_TICK
        } else {
            TICK
        };
        let mut wait = match self.kill_at {
            Some(at) => at.saturating_duration_since(Instant::now()).min(tick),
            None => tick,
        };
        if let Some((at, _)) = self.deadline {
            wait = wait.min(at.saturating_duration_since(Instant::now()));
        }
        // Round up so we do not wake just before the deadline and spin.
        (wait.as_micros().div_ceil(1000)) as i32
    }

    fn collect_pollfds(&self, fds: &mut Vec<libc::pollfd>, slots: &mut Vec<Slot>, all: bool) {
        let mut add = |fd: RawFd, events: libc::c_short, slot: Slot| {
            fds.push(libc::pollfd {
                fd,
                events,
                revents: 0,
            });
            slots.push(slot);
        };
        if all {
            add(self.signals.as_raw_fd(), libc::POLLIN, Slot::Signals);
            if let Some(listener) = &self.listener {
                add(listener.as_raw_fd(), libc::POLLIN, Slot::Listener);
            }
            if let Some(d) = &self.dump {
                add(d.listener().as_raw_fd(), libc::POLLIN, Slot::Dump);
            }
            for (i, p) in self.pending.iter().enumerate() {
                if let Some(p) = p {
                    add(p.sock.as_raw_fd(), libc::POLLIN, Slot::Pending(i));
                }
            }
            if let Some(sink) = &self.stdin.sink {
                if self.stdin.sent < self.stdin.buf.len() {
                    add(sink.as_raw_fd(), libc::POLLOUT, Slot::Rank0Stdin);
                } else if self.stdin.source_open {
                    add(libc::STDIN_FILENO, libc::POLLIN, Slot::Stdin);
                }
            }
        }
        for (i, rank) in self.ranks.iter().enumerate() {
            if all {
                if let Some(conn) = &rank.pmi {
                    let mut events = libc::POLLIN;
                    if !conn.outbox.is_empty() {
                        events |= libc::POLLOUT;
                    }
                    add(conn.sock.as_raw_fd(), events, Slot::Pmi(i));
                }
            }
            for (s, stream) in rank.out.iter().enumerate() {
                if let Some(pipe) = &stream.pipe {
                    add(pipe.as_raw_fd(), libc::POLLIN, Slot::Out(i, s));
                }
            }
        }
    }

    fn handle_ready(&mut self, slot: Slot, revents: libc::c_short) {
        match slot {
            Slot::Signals => self.handle_signals(),
            Slot::Stdin => self.read_stdin(revents),
            Slot::Rank0Stdin => self.write_rank0_stdin(),
            Slot::Pmi(r) => {
                if revents & libc::POLLOUT != 0 {
                    self.flush_pmi(r);
                }
                if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                    self.read_pmi(r);
                }
            }
            Slot::Out(r, s) => self.read_output(r, s),
            Slot::Listener => self.accept_pmi(),
            Slot::Pending(i) => self.read_pending(i),
            Slot::Dump => {
                if let Some(d) = &self.dump {
                    d.serve(|| self.state_text());
                }
            }
        }
    }

    /// Accepts TCP PMI connections; they must authenticate before anything
    /// else (see [`Job::authenticate`]).
    fn accept_pmi(&mut self) {
        let Some(listener) = &self.listener else {
            return;
        };
        loop {
            match listener.accept() {
                Ok((sock, peer)) => {
                    let live = self.pending.iter().filter(|p| p.is_some()).count();
                    if live >= MAX_PENDING || sock.set_nonblocking(true).is_err() {
                        continue; // dropped, i.e. closed
                    }
                    let _ = sock.set_nodelay(true);
                    self.pending.push(Some(Pending {
                        sock,
                        peer,
                        decoder: LineDecoder::default(),
                        deadline: Instant::now() + HANDSHAKE_TIMEOUT,
                    }));
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return, // WouldBlock, or a connection that went away
            }
        }
    }

    fn read_pending(&mut self, i: usize) {
        let Some(p) = &mut self.pending[i] else {
            return;
        };
        let mut closed = false;
        loop {
            match p.sock.read(&mut self.buf) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => p.decoder.feed(&self.buf[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => {
                    closed = true;
                    break;
                }
            }
        }
        match p.decoder.next_line() {
            None if closed => self.pending[i] = None,
            None => {}
            Some(Err(e)) => {
                let peer = p.peer;
                self.pending[i] = None;
                refuse(peer, &e.to_string());
            }
            Some(Ok(line)) => {
                let p = self.pending[i].take().expect("checked above");
                self.authenticate(p, &line);
            }
        }
    }

    /// Admits a TCP PMI connection whose first line is
    /// `cmd=initack pmiid=R secret=TOKEN` for a remote rank R of this job
    /// that has not connected yet, TOKEN being R's single-use credential.
    /// Anything else is closed. A valid credential presented again after
    /// R connected means someone else has it: the job is ended.
    fn authenticate(&mut self, p: Pending, line: &str) {
        let msg = match Message::parse(line) {
            Ok(m) if m.name() == "initack" => m,
            _ => return refuse(p.peer, "the first message was not cmd=initack"),
        };
        let offered = msg.get("secret").unwrap_or("");
        // Rank R of the first job (its slot is R), or process R of a spawned
        // job whose credential this is.
        let first_job = self.first_slot.get(1).copied().unwrap_or(self.ranks.len());
        let Some(r) = msg.get_int::<u32>("pmiid").and_then(|id| {
            let spawned = self.ranks[first_job..].iter().position(|x| {
                x.jrank == id
                    && x.token
                        .as_deref()
                        .is_some_and(|t| sys::secrets_equal(offered.as_bytes(), t.as_bytes()))
            });
            spawned
                .map(|i| first_job + i)
                .or(((id as usize) < first_job).then_some(id as usize))
        }) else {
            return refuse(p.peer, "pmiid is not a rank of this job");
        };
        let Some(token) = &self.ranks[r].token else {
            return refuse(p.peer, &format!("rank {r} is not a remote rank"));
        };
        if !sys::secrets_equal(offered.as_bytes(), token.as_bytes()) {
            return refuse(p.peer, &format!("wrong or missing secret for rank {r}"));
        }
        if self.ranks[r].tcp_connected {
            let what = format!(
                "{} is already connected, but its PMI credential was presented \
                 again from {}",
                self.who(r),
                p.peer
            );
            self.fail(&what, 1);
            return;
        }
        self.ranks[r].tcp_connected = true;
        self.ranks[r].pmi = Some(PmiConn {
            sock: File::from(OwnedFd::from(p.sock)),
            decoder: p.decoder,
            outbox: Vec::new(),
        });
        self.handle_pmi_lines(r, vec![line.to_string()]);
        // Anything sent after the initack is already in the decoder.
        self.read_pmi(r);
    }

    /// `rank R (pid P)`, naming the host for remote ranks.
    fn who(&self, r: usize) -> String {
        let rank = &self.ranks[r];
        if rank.job > 0 {
            return format!(
                "spawned process {} of spawned job {} (pid {})",
                rank.jrank, rank.job, rank.pid
            );
        }
        match &rank.host {
            Some(host) => format!("rank {r} on {host} (launch pid {})", rank.pid),
            None => format!("rank {r} (pid {})", rank.pid),
        }
    }

    fn handle_signals(&mut self) {
        let mut bytes = [0u8; 64];
        loop {
            match self.signals.read(&mut bytes) {
                Ok(0) => return,
                Ok(n) => {
                    for &sig in &bytes[..n] {
                        let sig = libc::c_int::from(sig);
                        if sig == libc::SIGINT || sig == libc::SIGTERM {
                            self.on_user_signal(sig);
                        }
                        if sig == libc::SIGUSR1 {
                            self.dump();
                        }
                        // SIGCHLD only needs the wakeup; reap() follows.
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    /// How each rank ended, for the deadlock report (`None`: still running).
    fn exits(&self) -> Vec<Option<String>> {
        // The status page covers the first job only.
        let n = self.first_slot.get(1).copied().unwrap_or(self.ranks.len());
        self.ranks[..n.min(self.ranks.len())]
            .iter()
            .map(|r| {
                r.exit.map(|e| match e {
                    Exit::Code(c) => format!("exited with status {c}"),
                    Exit::Signal(s) => format!("was killed by {}", sys::signal_name(s)),
                })
            })
            .collect()
    }

    /// SIGUSR1: prints what every rank is blocked on; the job goes on.
    fn dump(&mut self) {
        let Some(page) = &self.status else {
            eprintln!("mpiexec: no state to show: deadlock detection is off (--hang-check off)");
            return;
        };
        let n = self.servers[0].size() as usize;
        let slots: Vec<_> = (0..n.min(self.ranks.len())).map(|r| page.read(r)).collect();
        let views = crate::hang::views(&slots, &self.exits());
        eprint!("{}", crate::hang::report(&views, false));
    }

    /// The report `mpiexec --dump JOBID` prints (the SIGUSR1 dump with the job named).
    fn state_text(&self) -> String {
        let exits = self.exits();
        match &self.status {
            Some(page) => {
                let slots: Vec<_> = (0..self.ranks.len()).map(|r| page.read(r)).collect();
                crate::hang::report_titled(&crate::hang::views(&slots, &exits), false, &self.title)
            }
            None => {
                let mut t = format!(
                    "{}
  (deadlock detection is off (--hang-check off): only whether each rank runs)
",
                    self.title
                );
                for (r, e) in exits.iter().enumerate() {
                    t.push_str(&format!(
                        "  rank {r}: {}
",
                        e.as_deref()
                            .map_or("running".to_string(), |e| format!("finished ({e})"))
                    ));
                }
                t
            }
        }
    }

    /// Looks for a certain deadlock (see `hang.rs`) every [`HANG_TICK`].
    fn check_hang(&mut self) {
        if self.ending != Ending::Running
            || self.checker.reported
            || Instant::now() < self.next_check
        {
            return;
        }
        self.next_check = Instant::now() + HANG_TICK;
        let exits = self.exits();
        let Some(page) = &self.status else { return };
        if let Some(report) = self.checker.check(page, &exits) {
            self.checker.reported = true;
            eprint!("{report}");
            if self.hang_check == HangCheck::Abort {
                self.fail(
                    "the job deadlocked (exit status 86)",
                    crate::hang::EXIT_DEADLOCK,
                );
            }
        }
    }

    fn on_user_signal(&mut self, sig: libc::c_int) {
        if self.ending == Ending::Running {
            self.ending = Ending::Interrupted;
            self.signal_all(sig);
            self.kill_at = Some(Instant::now() + SIGNAL_GRACE);
        } else {
            // A second interrupt means "now".
            self.kill_at = None;
            self.signal_all(libc::SIGKILL);
        }
    }

    fn read_stdin(&mut self, revents: libc::c_short) {
        if revents & libc::POLLNVAL != 0 {
            self.stdin_eof();
            return;
        }
        match sys::read_fd(libc::STDIN_FILENO, &mut self.buf) {
            Ok(0) => self.stdin_eof(),
            Ok(n) => {
                self.stdin.buf.clear();
                self.stdin.buf.extend_from_slice(&self.buf[..n]);
                self.stdin.sent = 0;
                self.write_rank0_stdin();
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(_) => self.stdin_eof(),
        }
    }

    fn stdin_eof(&mut self) {
        self.stdin.source_open = false;
        if self.stdin.sent >= self.stdin.buf.len() {
            // Closing our end is how rank 0 sees EOF.
            self.stdin.sink = None;
        }
    }

    fn write_rank0_stdin(&mut self) {
        let Some(sink) = &mut self.stdin.sink else {
            return;
        };
        while self.stdin.sent < self.stdin.buf.len() {
            match sink.write(&self.stdin.buf[self.stdin.sent..]) {
                Ok(n) => self.stdin.sent += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(_) => {
                    // Rank 0 closed its stdin or exited: stop forwarding.
                    self.stdin.sink = None;
                    self.stdin.source_open = false;
                    return;
                }
            }
        }
        if !self.stdin.source_open {
            self.stdin.sink = None;
        }
    }

    fn read_output(&mut self, r: usize, s: usize) {
        let stream = &mut self.ranks[r].out[s];
        let Some(pipe) = &mut stream.pipe else { return };
        loop {
            match pipe.read(&mut self.buf) {
                Ok(0) => {
                    stream.pipe = None;
                    stream.fwd.finish();
                    return;
                }
                Ok(n) => stream.fwd.push(&self.buf[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(_) => {
                    stream.pipe = None;
                    stream.fwd.finish();
                    return;
                }
            }
        }
    }

    fn read_pmi(&mut self, r: usize) {
        let mut lines = Vec::new();
        let mut closed = false;
        let mut bad = None;
        {
            let Some(conn) = &mut self.ranks[r].pmi else {
                return;
            };
            loop {
                match conn.sock.read(&mut self.buf) {
                    Ok(0) => {
                        closed = true;
                        break;
                    }
                    Ok(n) => conn.decoder.feed(&self.buf[..n]),
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(_) => {
                        closed = true;
                        break;
                    }
                }
            }
            while let Some(line) = conn.decoder.next_line() {
                match line {
                    Ok(line) => lines.push(line),
                    Err(e) => {
                        bad = Some(e.to_string());
                        break;
                    }
                }
            }
        }
        self.handle_pmi_lines(r, lines);
        if let Some(error) = bad {
            let who = self.who(r);
            self.fail(&format!("{who} broke the PMI protocol: {error}"), 1);
        }
        if closed {
            self.ranks[r].pmi = None;
        }
    }

    fn handle_pmi_lines(&mut self, r: usize, lines: Vec<String>) {
        let (j, jr) = (self.ranks[r].job, self.ranks[r].jrank);
        for line in lines {
            if line.starts_with(STATUS_LINE) {
                // The status page has a slot per rank of the first job only.
                if j == 0 {
                    self.status_report(r, &line);
                }
                continue;
            }
            let out = self.servers[j].handle_line(jr, &line);
            self.deliver(j, out);
        }
    }

    /// Sends a server's replies to the processes of job `j` and acts on its events.
    fn deliver(&mut self, j: usize, out: oxmpi_pmi::Output) {
        for (to, reply) in out.replies {
            let slot = self.first_slot[j] + to as usize;
            if let Some(conn) = self.ranks.get_mut(slot).and_then(|r| r.pmi.as_mut()) {
                conn.outbox.extend_from_slice(reply.as_bytes());
                self.flush_pmi(slot);
            }
        }
        for event in out.events {
            self.on_pmi_event(j, event);
        }
    }

    /// A status report of a rank on another host (never answered): written into
    /// its slot of the status page, as a local rank would have.
    fn status_report(&mut self, r: usize, line: &str) {
        let Some(page) = &self.status else { return };
        let report = oxmpi_pmi::Message::parse(&format!("{line}\n"))
            .ok()
            .and_then(|m| oxmpi_pmi::status::decode_report(&m, self.ranks.len()));
        match report {
            Some(rep) => page.write(r, &rep),
            None => eprintln!(
                "mpiexec: ignored a malformed status report from {}",
                self.who(r)
            ),
        }
    }

    fn flush_pmi(&mut self, r: usize) {
        let Some(conn) = &mut self.ranks[r].pmi else {
            return;
        };
        while !conn.outbox.is_empty() {
            match conn.sock.write(&conn.outbox) {
                Ok(n) => {
                    conn.outbox.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(_) => {
                    // The rank is gone; its exit status tells the story.
                    self.ranks[r].pmi = None;
                    return;
                }
            }
        }
    }

    fn on_pmi_event(&mut self, j: usize, event: ServerEvent) {
        let slot = |rank: u32| self.first_slot[j] + rank as usize;
        match event {
            ServerEvent::Initialized { .. } | ServerEvent::Finalized { .. } => {}
            ServerEvent::Name {
                rank,
                op,
                service,
                port,
            } => {
                let result = self.name_service(op, &service, &port);
                let out = self.servers[j].name_result(rank, op, result);
                self.deliver(j, out);
            }
            ServerEvent::Spawn {
                rank,
                commands,
                preput,
            } => {
                let (rc, msg, codes) = match self.spawn_job(&commands, &preput) {
                    Ok(codes) => (0, String::new(), codes),
                    Err(why) => (-1, why, Vec::new()),
                };
                let out = self.servers[j].spawn_result(rank, rc, &msg, &codes);
                self.deliver(j, out);
            }
            ServerEvent::Abort {
                rank,
                exit_code,
                message,
            } => {
                // A rank that lost its connection to a peer aborts because the
                // peer died (a spawned process, a rank on another host): name
                // the dead process rather than the messenger. Its death may be
                // reaped a moment after the abort arrives.
                if message
                    .as_deref()
                    .is_some_and(|m| m.contains("lost a TCP connection"))
                {
                    let until = Instant::now() + LOST_PEER_GRACE;
                    loop {
                        self.reap();
                        if self.ending != Ending::Running || Instant::now() >= until {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
                let who = self.who(self.first_slot[j] + rank as usize);
                let detail = message.map(|m| format!(" ({m})")).unwrap_or_default();
                self.fail(
                    &format!("{who} called MPI_Abort with exit code {exit_code}{detail}"),
                    exit_code,
                );
            }
            ServerEvent::ProtocolError { rank, error } => {
                let who = if slot(rank) < self.ranks.len() {
                    self.who(slot(rank))
                } else {
                    format!("rank {rank}")
                };
                self.fail(&format!("{who} broke the PMI protocol: {error}"), 1);
            }
        }
    }

    fn reap(&mut self) {
        while let Some((pid, exit)) = sys::reap_any() {
            let Some(r) = self.ranks.iter().position(|rank| rank.pid == pid) else {
                continue;
            };
            // Judge the death only after everything the rank sent before
            // dying (final output, an abort request) has been processed.
            self.read_pmi(r);
            self.read_output(r, 0);
            self.read_output(r, 1);
            self.ranks[r].exit = Some(exit);
            if r == 0 {
                self.stdin.sink = None;
                self.stdin.source_open = false;
            }
            self.judge_exit(r, pid, exit);
        }
    }

    fn judge_exit(&mut self, r: usize, _pid: libc::pid_t, exit: Exit) {
        let phase = self.servers[self.ranks[r].job].phase(self.ranks[r].jrank);
        let who = self.who(r);
        let failure = match (exit, phase) {
            (_, RankPhase::Aborted) => None,
            (Exit::Signal(sig), phase) => {
                let when = if phase == RankPhase::Finalized {
                    " after MPI_Finalize"
                } else {
                    " before MPI_Finalize"
                };
                Some((
                    format!(
                        "{who} was killed by signal {sig} ({}){when}",
                        sys::signal_name(sig)
                    ),
                    exit.shell_code(),
                ))
            }
            (Exit::Code(0), RankPhase::Initialized) => Some((
                format!("{who} exited with status 0 without calling MPI_Finalize"),
                1,
            )),
            (Exit::Code(code), RankPhase::Initialized) => Some((
                format!("{who} exited with status {code} before MPI_Finalize"),
                code,
            )),
            (Exit::Code(_), _) => None,
        };
        if exit != Exit::Code(0) && self.first_failure.is_none() {
            self.first_failure = Some(exit.shell_code());
        }
        if let Some((what, code)) = failure {
            self.fail(&what, code);
        }
    }

    /// Ends the job because of `what`, exiting with `code`, unless it is
    /// already ending (only the first cause is reported).
    fn fail(&mut self, what: &str, code: i32) {
        if self.ending != Ending::Running {
            return;
        }
        self.ending = Ending::Failing { code };
        eprintln!("mpiexec: {what}; ending the job");
        self.signal_all(libc::SIGTERM);
        self.kill_at = Some(Instant::now() + FAILURE_GRACE);
    }

    fn signal_all(&self, sig: libc::c_int) {
        let live: Vec<_> = self.ranks.iter().filter(|r| r.exit.is_none()).collect();
        if live.is_empty() {
            return;
        }
        // While any rank is unreaped the group id cannot have been reused,
        // and signalling the group also reaches processes the ranks started.
        sys::kill_group(self.pgid, sig);
        for rank in live {
            // Ranks that left the group (setsid) are still ours to stop.
            sys::kill(rank.pid, sig);
        }
    }

    /// All ranks are gone; collect output still in the pipes. Processes the
    /// ranks left behind may hold them open, so this is bounded in time.
    fn drain_after_exit(&mut self) {
        let deadline = Instant::now() + DRAIN_AFTER_EXIT;
        let mut fds = Vec::new();
        let mut slots = Vec::new();
        loop {
            fds.clear();
            slots.clear();
            self.collect_pollfds(&mut fds, &mut slots, false);
            let left = deadline.saturating_duration_since(Instant::now());
            if fds.is_empty() || left.is_zero() {
                break;
            }
            if sys::poll(&mut fds, left.as_millis().max(1) as i32).is_err() {
                break;
            }
            for (pfd, slot) in fds.iter().zip(slots.iter()) {
                if pfd.revents != 0 {
                    if let Slot::Out(r, s) = *slot {
                        self.read_output(r, s);
                    }
                }
            }
        }
        for rank in &mut self.ranks {
            for stream in &mut rank.out {
                stream.pipe = None;
                stream.fwd.finish();
            }
        }
    }

    fn exit_code(&self) -> i32 {
        match self.ending {
            Ending::Failing { code } => code,
            Ending::Running | Ending::Interrupted => self.first_failure.unwrap_or(0),
        }
    }
}

fn refuse(peer: SocketAddr, why: &str) {
    eprintln!("mpiexec: refused a PMI connection from {peer}: {why}");
}

/// Binds the TCP PMI server and returns it with the `PMI_PORT` value remote
/// ranks get: the bound address, or this host's name when bound to the
/// wildcard address.
fn open_pmi_listener(config: &JobConfig) -> Result<(TcpListener, String), String> {
    let bind = config.pmi_bind.as_deref().unwrap_or("0.0.0.0");
    let host = bind
        .strip_prefix('[')
        .and_then(|b| b.strip_suffix(']'))
        .unwrap_or(bind);
    let listener = TcpListener::bind((host, 0))
        .map_err(|e| format!("cannot open the PMI server on '{bind}': {e}"))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot set up the PMI server: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot set up the PMI server: {e}"))?;
    let published = if addr.ip().is_unspecified() {
        let name = sys::hostname()
            .ok_or("cannot find this host's name for PMI_PORT; use --pmi-bind ADDR")?;
        format!("{name}:{}", addr.port())
    } else {
        addr.to_string()
    };
    Ok((listener, published))
}

fn nonblocking_file(fd: OwnedFd) -> Option<File> {
    sys::set_nonblocking(&fd).ok()?;
    Some(File::from(fd))
}

/// What a spawned job inherits from the first one.
struct SpawnSetup {
    /// `-genv` & co. (with the library path), applied to every spawned process.
    env: Vec<(OsString, OsString)>,
    /// The job secret's variable.
    extra_env: Vec<(OsString, OsString)>,
    label: bool,
    secret: String,
    universe: u32,
    /// `kvs_PID`: spawned job J gets the KVS `kvs_PID_J`.
    kvs_stem: String,
    /// How to start processes on other hosts (the info key `host`), when the
    /// job was started with hosts to launch on (then the TCP PMI server runs).
    remote: Option<RemoteLaunch>,
}

/// One command of a spawn, resolved.
struct SpawnPlan {
    program: std::path::PathBuf,
    argv0: OsString,
    args: Vec<OsString>,
    wdir: Option<std::path::PathBuf>,
    /// Another host to start them on (the info key `host`); `None`: this one.
    host: Option<String>,
    /// Processes started, and asked for.
    n: u32,
    asked: u32,
}

/// The `soft` info key: `a:b:s` triplets, `a:b` ranges and single numbers,
/// comma-separated (MPI-4.1 §11.8.4); the counts it allows.
fn soft_counts(v: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let nums: Vec<u32> = part
            .split(':')
            .map(|x| {
                x.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("soft={v:?}: {x:?} is not a number"))
            })
            .collect::<Result<_, _>>()?;
        match nums.as_slice() {
            [a] => out.push(*a),
            [a, b] => out.extend(*a..=*b),
            [a, b, s] if *s > 0 => out.extend((*a..=*b).step_by(*s as usize)),
            _ => return Err(format!("soft={v:?}: {part:?} is not a, a:b or a:b:s")),
        }
        if out.len() > 1 << 20 {
            return Err(format!("soft={v:?} lists too many counts"));
        }
    }
    Ok(out)
}

impl Job {
    /// Starts a spawn request's commands as one new job served by its own PMI
    /// server; returns one error code per process asked for (0: started,
    /// MPI_ERR_SPAWN: left out under `soft`). Supervised like the first job:
    /// output forwarded, a death ends everything.
    fn spawn_job(
        &mut self,
        commands: &[oxmpi_pmi::SpawnCommand],
        preput: &[(String, String)],
    ) -> Result<Vec<i32>, String> {
        const MPI_ERR_SPAWN: i32 = 53;
        if self.ending != Ending::Running {
            return Err("the job is ending".into());
        }
        let alive = self.ranks.iter().filter(|r| r.exit.is_none()).count() as u32;
        let mut room = self.spawn.universe.saturating_sub(alive);
        let mut plans = Vec::new();
        for c in commands {
            let mut info = c.info.clone();
            if let Some((_, file)) = info.iter().find(|(k, _)| k == "file").cloned() {
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| format!("info file={file:?}: {e}"))?;
                for line in text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                {
                    let (k, v) = line
                        .split_once('=')
                        .ok_or_else(|| format!("info file={file:?}: {line:?} is not key=value"))?;
                    info.push((k.trim().to_string(), v.trim().to_string()));
                }
            }
            let get = |k: &str| {
                info.iter()
                    .rev()
                    .find(|(key, _)| key == k)
                    .map(|(_, v)| v.clone())
            };
            let host = get("host").filter(|h| !crate::hosts::is_local(h));
            if let (Some(h), None) = (&host, &self.spawn.remote) {
                return Err(format!(
                    "info host={h:?}: this mpiexec runs its job on its own host only; to start processes on other hosts, start it with hosts to launch on (-hosts, -f, with ssh or --launcher-exec)"
                ));
            }
            let wdir = get("wdir").map(std::path::PathBuf::from);
            if let Some(d) = &wdir {
                if !d.is_dir() {
                    return Err(format!("info wdir={:?} is not a directory", d.display()));
                }
            }
            let mut program = None;
            if let Some(path) = get("path").filter(|_| !c.execname.contains('/')) {
                for dir in path.split(':').filter(|d| !d.is_empty()) {
                    let p = std::path::Path::new(dir).join(&c.execname);
                    if p.is_file() {
                        program = Some(p);
                        break;
                    }
                }
            }
            let program = match program {
                Some(p) => p,
                None => {
                    let name = match &wdir {
                        Some(d) if c.execname.contains('/') && !c.execname.starts_with('/') => {
                            d.join(&c.execname).into_os_string()
                        }
                        _ => OsString::from(&c.execname),
                    };
                    crate::spawn::resolve_program(&name).map_err(|e| e.0)?
                }
            };
            let n = match get("soft") {
                Some(v) => {
                    // The most processes the universe has room for; when even the
                    // fewest allowed do not fit, the fewest (the universe size is
                    // advice: Hydra ignores `soft`, and oversubscribing beats failing).
                    let allowed: Vec<u32> = soft_counts(&v)?
                        .into_iter()
                        .filter(|&k| k > 0 && k <= c.nprocs)
                        .collect();
                    allowed
                        .iter()
                        .copied()
                        .filter(|&k| k <= room)
                        .max()
                        .or_else(|| allowed.iter().copied().min())
                        .ok_or_else(|| {
                            format!(
                                "info soft={v:?} allows no count between 1 and maxprocs={}",
                                c.nprocs
                            )
                        })?
                }
                None => c.nprocs,
            };
            room = room.saturating_sub(n);
            plans.push(SpawnPlan {
                program,
                argv0: OsString::from(&c.execname),
                args: c.args.iter().map(OsString::from).collect(),
                wdir,
                host,
                n,
                asked: c.nprocs,
            });
        }
        let total: u32 = plans.iter().map(|p| p.n).sum();
        if total == 0 {
            return Err("no process to start (soft allows none)".into());
        }
        let j = self.servers.len();
        let mut server = PmiServer::new(format!("{}_{j}", self.spawn.kvs_stem), total);
        // Node of each process: this host is node 0, other hosts in order of appearance.
        let mut hosts: Vec<Option<&str>> = vec![None];
        let nodes: Vec<u32> = plans
            .iter()
            .flat_map(|p| {
                let h = p.host.as_deref();
                let node = hosts.iter().position(|x| *x == h).unwrap_or_else(|| {
                    hosts.push(h);
                    hosts.len() - 1
                });
                std::iter::repeat_n(node as u32, p.n as usize)
            })
            .collect();
        server.set_process_mapping(oxmpi_pmi::nodes_mapping(&nodes));
        server.publish(oxmpi_pmi::JOB_SECRET_KEY, self.spawn.secret.clone());
        server.set_universe_size(self.spawn.universe);
        for (k, v) in preput {
            server.publish(k.clone(), v.clone());
        }
        server.set_rank_appnums(
            plans
                .iter()
                .enumerate()
                .flat_map(|(i, p)| std::iter::repeat_n(i as u32, p.n as usize))
                .collect(),
        );
        self.servers.push(server);
        self.first_slot.push(self.ranks.len());
        let mut codes = Vec::new();
        let mut jrank = 0u32;
        for p in &plans {
            let mut env = self.spawn.env.clone();
            env.push(("PMI_SPAWNED".into(), "1".into()));
            let spec = LaunchSpec {
                program: p.program.clone(),
                argv0: p.argv0.clone(),
                args: p.args.clone(),
                env,
                size: total,
                wdir: p.wdir.clone(),
                ..Default::default()
            };
            for _ in 0..p.n {
                let started = match (&p.host, &self.spawn.remote) {
                    (Some(host), Some(remote)) => sys::random_hex(TOKEN_BYTES).and_then(|token| {
                        spawn_remote(&spec, jrank, Some(self.pgid), remote, host, &token)
                            .map(|io| (io, Some((host.clone(), token))))
                    }),
                    _ => spawn_local(&spec, jrank, Some(self.pgid), &self.spawn.extra_env)
                        .map(|io| (io, None)),
                };
                match started {
                    Ok((io, remote)) => self.add_spawned(io, j, jrank, remote),
                    Err(e) => {
                        let on = p
                            .host
                            .as_ref()
                            .map(|h| format!(" on {h}"))
                            .unwrap_or_default();
                        let what = format!("cannot start spawned process {jrank} of spawned job {j}{on} ('{}'): {e}", p.program.display());
                        self.fail(&what, 1);
                        return Err(what);
                    }
                }
                jrank += 1;
            }
            codes.extend(std::iter::repeat_n(0, p.n as usize));
            codes.extend(std::iter::repeat_n(MPI_ERR_SPAWN, (p.asked - p.n) as usize));
        }
        Ok(codes)
    }

    /// Records a started spawned process; `remote` is its host and PMI
    /// credential when it runs on another host.
    fn add_spawned(&mut self, io: RankIo, j: usize, jrank: u32, remote: Option<(String, String)>) {
        let slot = self.ranks.len() as u32;
        let pmi = io.pmi.and_then(|sock| {
            sock.set_nonblocking(true).ok().map(|()| PmiConn {
                sock: File::from(OwnedFd::from(sock)),
                decoder: LineDecoder::default(),
                outbox: Vec::new(),
            })
        });
        let label = self.spawn.label;
        let (host, token) = remote.map_or((None, None), |(h, t)| (Some(h), Some(t)));
        self.ranks.push(Rank {
            job: j,
            jrank,
            pid: io.pid,
            host,
            token,
            tcp_connected: false,
            exit: None,
            pmi,
            out: [
                OutStream {
                    pipe: nonblocking_file(OwnedFd::from(io.stdout)),
                    fwd: LineForwarder::new(Sink::Stdout, slot, label),
                },
                OutStream {
                    pipe: nonblocking_file(OwnedFd::from(io.stderr)),
                    fwd: LineForwarder::new(Sink::Stderr, slot, label),
                },
            ],
        });
    }
}

/// The directory of the name service (MPI_Publish_name), shared by every
/// mpiexec of the user so that separately launched jobs find each other's
/// ports: `OXMPI_NAMESERVER_DIR`, else `$XDG_RUNTIME_DIR/oxmpi-names`, else
/// `/tmp/oxmpi-names-UID`. Mode 0700, and it must be ours (not a symlink).
pub fn names_dir() -> Result<std::path::PathBuf, String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let dir = match std::env::var_os("OXMPI_NAMESERVER_DIR") {
        Some(d) => std::path::PathBuf::from(d),
        None => match std::env::var_os("XDG_RUNTIME_DIR")
            .map(std::path::PathBuf::from)
            .filter(|d| d.is_dir())
        {
            Some(d) => d.join("oxmpi-names"),
            // SAFETY: getuid has no preconditions.
            None => std::env::temp_dir().join(format!("oxmpi-names-{}", unsafe { libc::getuid() })),
        },
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("name service directory {}: {e}", dir.display())),
    }
    let md = std::fs::symlink_metadata(&dir)
        .map_err(|e| format!("name service directory {}: {e}", dir.display()))?;
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    if !md.is_dir() || md.uid() != uid || md.mode() & 0o077 != 0 {
        return Err(format!(
            "name service directory {} is not a private directory of this user",
            dir.display()
        ));
    }
    Ok(dir)
}

impl Job {
    /// Serves the name service from [`names_dir`]: one file per service name
    /// (hex-encoded), holding the port and the publishing launcher's pid (an
    /// entry whose launcher is gone is stale and ignored).
    fn name_service(
        &mut self,
        op: oxmpi_pmi::NameOp,
        service: &str,
        port: &str,
    ) -> Result<Option<String>, String> {
        use oxmpi_pmi::NameOp;
        use std::os::unix::fs::OpenOptionsExt;
        let dir = names_dir()?;
        let file = dir.join(
            service
                .bytes()
                .map(|b| format!("{b:02x}"))
                .collect::<String>(),
        );
        let read = |f: &std::path::Path| -> Option<String> {
            let text = std::fs::read_to_string(f).ok()?;
            let (port, pid) = text.trim_end().split_once('\n')?;
            let pid: libc::pid_t = pid.trim().parse().ok()?;
            // SAFETY: kill with signal 0 only checks that the process exists.
            let alive = unsafe { libc::kill(pid, 0) } == 0
                || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
            alive.then(|| port.to_string())
        };
        match op {
            NameOp::Publish => {
                if file.exists() && read(&file).is_none() {
                    let _ = std::fs::remove_file(&file);
                }
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&file)
                    .map_err(|e| match e.kind() {
                        ErrorKind::AlreadyExists => {
                            format!("service {service:?} is already published")
                        }
                        _ => format!("publishing {service:?}: {e}"),
                    })?;
                f.write_all(format!("{port}\n{}\n", sys::getpid()).as_bytes())
                    .map_err(|e| format!("publishing {service:?}: {e}"))?;
                self.published.push(file);
                Ok(None)
            }
            NameOp::Unpublish => {
                if read(&file).is_none() {
                    return Err(format!("service {service:?} is not published"));
                }
                std::fs::remove_file(&file)
                    .map_err(|e| format!("unpublishing {service:?}: {e}"))?;
                self.published.retain(|p| p != &file);
                Ok(None)
            }
            NameOp::Lookup => read(&file)
                .map(Some)
                .ok_or_else(|| format!("service {service:?} is not published")),
        }
    }
}
