//! Blocking PMI client, as used by an MPI process started by `mpiexec`
//! (ours or MPICH Hydra) or by Slurm's `srun`: [`PmiClient`] speaks PMI-1
//! itself and PMI-2 through [`crate::client2`], chosen from the environment.
//!
//! The protocol is strictly request/response in lock-step, so the client
//! owns its connection exclusively and every call blocks until the process
//! manager answers.

use std::env;
use std::fs::File;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use crate::client2::{Pmi2Client, PMI2_KEYLEN_MAX, PMI2_VALLEN_MAX};
use crate::codec::{is_valid_key, is_valid_value, LineDecoder, Message};
use crate::codec2::is_valid_pmi2_key;
use crate::error::PmiError;

/// Used when a server's `cmd=maxes` omits a field; these are Hydra's values.
const DEFAULT_KVSNAME_MAX: usize = 256;
const DEFAULT_KEYLEN_MAX: usize = 64;
const DEFAULT_VALLEN_MAX: usize = 1024;

/// The key under which Hydra (and our launcher) publish the rank-to-node map.
pub const PROCESS_MAPPING_KEY: &str = "PMI_process_mapping";

/// Environment variable holding the job secret (hex) for ranks that our
/// `mpiexec` started on its own machine.
pub const JOB_SECRET_ENV: &str = "OXMPI_JOB_SECRET";

/// KVS key under which our `mpiexec` publishes the job secret to every rank
/// (readable right after `init`, no barrier needed). Ranks on other hosts
/// get it only this way: their environment travels on a command line.
pub const JOB_SECRET_KEY: &str = "oxmpi-job-secret";

/// The KVS key under which our `mpiexec` publishes every rank's
/// `MPI_APPNUM` (`server::encode_appnums`), read by [`PmiClient::rank_appnums`].
pub const APPNUMS_KEY: &str = "oxmpi-appnums";

/// Environment variable holding the single-use credential a rank presents
/// in `cmd=initack ... secret=TOKEN` when connecting over `PMI_PORT`.
/// Our `mpiexec` requires it on TCP connections; Hydra ignores the key.
pub const PMI_TOKEN_ENV: &str = "OXMPI_PMI_TOKEN";

use crate::client2::Transport;

/// Environment variable choosing the PMI protocol: `1` or `2` force PMI-1 or
/// PMI-2; unset, empty or `auto` detect it (see [`PmiClient::from_env`]).
pub const PMI_PROTOCOL_ENV: &str = "OXMPI_PMI";

/// The wire protocol a [`PmiClient`] speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmiProtocol {
    /// PMI-1 ("simple PMI"): newline-terminated `cmd=...` lines.
    Pmi1,
    /// PMI-2: length-prefixed `cmd=...;` frames.
    Pmi2,
    /// PMIx, through the system's PMIx client library ([`crate::pmix`]).
    Pmix,
}

impl PmiProtocol {
    /// Which protocol to speak over an inherited `PMI_FD`, given
    /// `OXMPI_PMI` and `PMI_JOBID` as found in the environment.
    ///
    /// `OXMPI_PMI=1`/`2` decide. Otherwise PMI-2 exactly when `PMI_JOBID`
    /// is set: Slurm's `mpi/pmi2` plugin (`srun --mpi=pmi2`) sets it along
    /// with `PMI_FD`, `PMI_RANK` and `PMI_SIZE`, while Hydra and our
    /// `mpiexec` set only the latter three and speak PMI-1 by default.
    pub fn detect(forced: Option<&str>, pmi_jobid: Option<&str>) -> Result<PmiProtocol, PmiError> {
        match forced.map(str::trim) {
            Some("1") => Ok(PmiProtocol::Pmi1),
            Some("2") => Ok(PmiProtocol::Pmi2),
            None | Some("") | Some("auto") => Ok(if pmi_jobid.is_some() {
                PmiProtocol::Pmi2
            } else {
                PmiProtocol::Pmi1
            }),
            Some(other) => Err(PmiError::Env {
                var: PMI_PROTOCOL_ENV,
                problem: format!("{other:?} is not 1, 2, pmix or auto"),
            }),
        }
    }
}

/// A connection to the process manager after a successful start-up, over
/// PMI-1 or PMI-2; every method works the same over both.
pub struct PmiClient {
    inner: Inner,
}

enum Inner {
    V1(Pmi1Client),
    V2(Pmi2Client),
    X(Box<crate::pmix::PmixClient>),
}

impl std::fmt::Debug for PmiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PmiClient")
            .field("protocol", &self.protocol())
            .field("rank", &self.rank())
            .field("size", &self.size())
            .field("appnum", &self.appnum())
            .field("universe_size", &self.universe_size())
            .field("kvsname", &self.kvs_name())
            .finish_non_exhaustive()
    }
}

impl PmiClient {
    /// Connects to the process manager described by the environment.
    ///
    /// * `PMI_FD` set: use that inherited descriptor; `PMI_RANK` must be set
    ///   too. The protocol is PMI-2 when `OXMPI_PMI=2`, or when `OXMPI_PMI`
    ///   is unset/`auto` and `PMI_JOBID` is set (Slurm's `srun --mpi=pmi2`);
    ///   otherwise PMI-1, which also needs `PMI_SIZE` (Hydra and our
    ///   `mpiexec` set it; Slurm's `mpi/pmi2` serves PMI-1 too, with
    ///   `OXMPI_PMI=1`).
    /// * else `PMI_PORT=host:port` set: PMI-1 over TCP, identifying with
    ///   `PMI_ID` (falling back to `PMI_RANK`); the server tells us rank and
    ///   size. (`OXMPI_PMI=2` is refused here.)
    /// * else `PMIX_RANK` and `PMIX_NAMESPACE` set (a PMIx server started the
    ///   process: Open MPI's `mpirun`, PRRTE, `srun --mpi=pmix`), or
    ///   `OXMPI_PMI=pmix`: PMIx through the system's client library, loaded
    ///   at run time (module `pmix`).
    /// * else `Ok(None)`: the process was started without a launcher and is
    ///   a singleton.
    pub fn from_env() -> Result<Option<PmiClient>, PmiError> {
        let forced = env_var(PMI_PROTOCOL_ENV)?;
        let pmi_fd_or_port = env_var("PMI_FD")?.is_some() || env_var("PMI_PORT")?.is_some();
        let auto = matches!(
            forced.as_deref().map(str::trim),
            None | Some("") | Some("auto")
        );
        if forced.as_deref().map(str::trim) == Some("pmix")
            || (auto && !pmi_fd_or_port && crate::pmix::detected())
        {
            return crate::pmix::PmixClient::init().map(|c| {
                Some(PmiClient {
                    inner: Inner::X(Box::new(c)),
                })
            });
        }
        if let Some(fd) = env_var("PMI_FD")? {
            let jobid = env_var("PMI_JOBID")?;
            let protocol = PmiProtocol::detect(forced.as_deref(), jobid.as_deref())?;
            let fd: RawFd = parse_env("PMI_FD", &fd)?;
            let rank = parse_env("PMI_RANK", &require_env("PMI_RANK")?)?;
            let client = match protocol {
                PmiProtocol::Pmi1 => {
                    let size = parse_env("PMI_SIZE", &require_env("PMI_SIZE")?)?;
                    let file = File::from(adopt_fd(fd)?);
                    PmiClient::from_stream(file, rank, size)?
                }
                PmiProtocol::Pmi2 => {
                    let file = File::from(adopt_fd(fd)?);
                    PmiClient::from_stream_pmi2(file, rank, jobid.as_deref())?
                }
                PmiProtocol::Pmix => unreachable!("detect() never answers PMIx"),
            };
            return Ok(Some(client));
        }
        if let Some(port) = env_var("PMI_PORT")? {
            if PmiProtocol::detect(forced.as_deref(), None)? == PmiProtocol::Pmi2 {
                return Err(PmiError::Env {
                    var: PMI_PROTOCOL_ENV,
                    problem: "PMI-2 is only supported over PMI_FD, not PMI_PORT".into(),
                });
            }
            let id = match env_var("PMI_ID")? {
                Some(id) => id,
                None => require_env("PMI_RANK").map_err(|_| PmiError::Env {
                    var: "PMI_ID",
                    problem: "PMI_PORT is set but neither PMI_ID nor PMI_RANK is".into(),
                })?,
            };
            let id: u32 = parse_env("PMI_ID", &id)?;
            let secret = match env_var(PMI_TOKEN_ENV)? {
                Some(token) => Some(token),
                None => env_var(JOB_SECRET_ENV)?,
            };
            return PmiClient::connect_tcp_with_secret(&port, id, secret.as_deref()).map(Some);
        }
        Ok(None)
    }

    /// Connects to a PMI-1 server listening at `addr` (`host:port`),
    /// performs the `initack` handshake identifying as `pmiid`, then `init`.
    pub fn connect_tcp(addr: &str, pmiid: u32) -> Result<PmiClient, PmiError> {
        PmiClient::connect_tcp_with_secret(addr, pmiid, None)
    }

    /// [`PmiClient::connect_tcp`], adding `secret=SECRET` to the `initack`
    /// when given (our `mpiexec` refuses TCP connections without the rank's
    /// [`PMI_TOKEN_ENV`] credential; other servers ignore the extra key).
    pub fn connect_tcp_with_secret(
        addr: &str,
        pmiid: u32,
        secret: Option<&str>,
    ) -> Result<PmiClient, PmiError> {
        Pmi1Client::connect_tcp_with_secret(addr, pmiid, secret).map(|c| PmiClient {
            inner: Inner::V1(c),
        })
    }

    /// Runs the PMI-1 `init` exchange over an already connected stream for a
    /// process whose rank and size the starter told it out of band.
    pub fn from_stream<S>(stream: S, rank: u32, size: u32) -> Result<PmiClient, PmiError>
    where
        S: Read + Write + Send + 'static,
    {
        Pmi1Client::from_stream(stream, rank, size).map(|c| PmiClient {
            inner: Inner::V1(c),
        })
    }

    /// Runs the PMI-2 start-up (`init`, `fullinit`, `job-getid`) over an
    /// already connected stream. `rank` is the id the starter gave this
    /// process (`PMI_RANK`), `jobid` Slurm's `PMI_JOBID` if any; the server
    /// answers with the rank and size.
    pub fn from_stream_pmi2<S>(
        stream: S,
        rank: u32,
        jobid: Option<&str>,
    ) -> Result<PmiClient, PmiError>
    where
        S: Read + Write + Send + 'static,
    {
        Pmi2Client::init(Box::new(stream), rank, jobid).map(|c| PmiClient {
            inner: Inner::V2(c),
        })
    }

    /// The protocol this connection speaks.
    pub fn protocol(&self) -> PmiProtocol {
        match &self.inner {
            Inner::V1(_) => PmiProtocol::Pmi1,
            Inner::V2(_) => PmiProtocol::Pmi2,
            Inner::X(_) => PmiProtocol::Pmix,
        }
    }

    /// This process's rank in the job.
    pub fn rank(&self) -> u32 {
        match &self.inner {
            Inner::V1(c) => c.rank(),
            Inner::V2(c) => c.rank,
            Inner::X(c) => c.rank,
        }
    }

    /// Number of processes in the job.
    pub fn size(&self) -> u32 {
        match &self.inner {
            Inner::V1(c) => c.size(),
            Inner::V2(c) => c.size,
            Inner::X(c) => c.size,
        }
    }

    /// Which executable of an MPMD launch this process belongs to (0 when
    /// the process manager does not say, as Slurm's `appnum=-1`).
    pub fn appnum(&self) -> i32 {
        match &self.inner {
            Inner::V1(c) => c.appnum(),
            Inner::V2(c) => c.appnum,
            Inner::X(c) => c.appnum,
        }
    }

    /// `MPI_UNIVERSE_SIZE`: the process manager's figure (our mpiexec's
    /// `-usize` or slots, Hydra's `-usize`, PMI-2's `universeSize`, PMIx's
    /// `pmix.univ.size`), never less than the job; the job size where it
    /// gives none (Hydra by default answers -1, unset).
    pub fn universe_size(&self) -> i32 {
        let given = match &self.inner {
            Inner::V1(c) => c.universe_size(),
            Inner::V2(c) => c.universe_size,
            Inner::X(c) => c.universe_size,
        };
        let size = i32::try_from(self.size()).unwrap_or(i32::MAX);
        if given > 0 {
            given.max(size)
        } else {
            size
        }
    }

    /// Name of the job's key-value space (under PMI-2, the job id).
    pub fn kvs_name(&self) -> &str {
        match &self.inner {
            Inner::V1(c) => c.kvs_name(),
            Inner::V2(c) => &c.jobid,
            Inner::X(c) => &c.nspace,
        }
    }

    /// Longest key the server accepts, in bytes, counting a C terminator
    /// (so keys must be shorter).
    pub fn key_len_max(&self) -> usize {
        match &self.inner {
            Inner::V1(c) => c.key_len_max(),
            Inner::V2(_) => PMI2_KEYLEN_MAX,
            Inner::X(_) => 512,
        }
    }

    /// Longest value the server accepts, in bytes, counting a C terminator.
    pub fn value_len_max(&self) -> usize {
        match &self.inner {
            Inner::V1(c) => c.value_len_max(),
            Inner::V2(_) => PMI2_VALLEN_MAX,
            Inner::X(_) => 1 << 20,
        }
    }

    /// Stores `key=value` in the job's KVS; visible to other ranks after the
    /// next [`PmiClient::barrier`].
    ///
    /// The same rules hold over both protocols: `value` must not contain
    /// spaces, `;`, newlines or other control characters (callers should
    /// pass hex- or base64-encoded data; `=` is fine). Keys must be printable
    /// ASCII without spaces, `=` or `;`. Both are checked against the
    /// server's maxima (which count a C terminator, hence the strict `<`).
    pub fn put(&mut self, key: &str, value: &str) -> Result<(), PmiError> {
        self.check_key(key)?;
        if !is_valid_value(value) || value.contains(';') {
            return Err(PmiError::InvalidValue {
                key: key.to_string(),
                reason: "values must not contain spaces, ';', newlines or control characters; \
                         encode binary data as hex or base64"
                    .into(),
            });
        }
        let max = self.value_len_max();
        if value.len() >= max {
            return Err(PmiError::InvalidValue {
                key: key.to_string(),
                reason: format!(
                    "value is {} bytes; the process manager accepts at most {}",
                    value.len(),
                    max - 1
                ),
            });
        }
        match &mut self.inner {
            Inner::V1(c) => c.put(key, value),
            Inner::V2(c) => c.put(key, value),
            Inner::X(c) => c.put(key, value),
        }
    }

    /// Blocks until every rank of the job has entered the barrier; it also
    /// makes earlier `put`s visible to all ranks (PMI-2: `kvs-fence`).
    pub fn barrier(&mut self) -> Result<(), PmiError> {
        match &mut self.inner {
            Inner::V1(c) => c.barrier(),
            Inner::V2(c) => c.fence(),
            Inner::X(c) => c.fence(),
        }
    }

    /// Asks the process manager to start `commands` as one new job (MPI_Comm_spawn
    /// and _multiple), with `preput` in the new job's KVS. Returns one error code
    /// per process requested (0 = started) when the process manager sends them.
    /// PMI-1 (our `mpiexec`, Hydra) and PMIx (`PMIx_Spawn`; the new job
    /// reads `preput` with [`PmiClient::get`]); over PMI-2 an error of kind
    /// `PmiError::Server` with `cmd` `spawn` says it is not offered here.
    pub fn spawn(
        &mut self,
        commands: &[crate::server::SpawnCommand],
        preput: &[(String, String)],
    ) -> Result<Vec<i32>, PmiError> {
        match &mut self.inner {
            Inner::V1(c) => c.spawn(commands, preput),
            Inner::V2(_) => Err(PmiError::Server {
                cmd: "spawn".into(),
                rc: -1,
                msg: Some("starting processes is not offered over PMI-2 by oxmpi (srun --mpi=pmi2); use mpiexec".into()),
            }),
            Inner::X(c) => c.spawn(commands, preput).map(|_nspace| Vec::new()),
        }
    }

    /// The process manager's name service (MPI_Publish_name & co.): `Publish`
    /// and `Unpublish` return `Ok(None)`, `Lookup` the port. PMI-1 and PMIx
    /// (`PMIx_Publish`/`_Lookup`/`_Unpublish`); over PMI-2 an error of kind
    /// `PmiError::Server` says it is not offered.
    pub fn name_service(
        &mut self,
        op: crate::server::NameOp,
        service: &str,
        port: &str,
    ) -> Result<Option<String>, PmiError> {
        match &mut self.inner {
            Inner::V1(c) => c.name_service(op, service, port),
            Inner::V2(_) => Err(PmiError::Server {
                cmd: "name service".into(),
                rc: -1,
                msg: Some(
                    "the name service is not offered over PMI-2 by oxmpi (srun --mpi=pmi2)".into(),
                ),
            }),
            Inner::X(c) => c.name_service(op, service, port),
        }
    }

    /// Looks `key` up in this job's KVS; `Ok(None)` if nobody put it.
    pub fn get(&mut self, key: &str) -> Result<Option<String>, PmiError> {
        let kvsname = self.kvs_name().to_string();
        self.get_from(&kvsname, key)
    }

    /// Looks `key` up in the KVS named `kvsname` (PMI-2: the job id);
    /// `Ok(None)` if absent.
    pub fn get_from(&mut self, kvsname: &str, key: &str) -> Result<Option<String>, PmiError> {
        match &mut self.inner {
            Inner::V1(c) => c.get_from(kvsname, key),
            // What the parents of a job started by PMIx_Spawn gave it.
            Inner::X(c) if kvsname == c.nspace => {
                Ok(env::var(format!("{}{key}", crate::pmix::PREPUT_ENV_PREFIX)).ok())
            }
            Inner::X(_) => Err(PmiError::InvalidKey {
                key: key.to_string(),
                reason:
                    "under PMIx a value belongs to the process that put it: use get_of(rank, key)"
                        .into(),
            }),
            Inner::V2(_) => {
                self.check_key(key)?;
                if !is_valid_pmi2_key(kvsname) {
                    return Err(PmiError::InvalidKey {
                        key: kvsname.to_string(),
                        reason: "not a valid PMI-2 job id (printable, no spaces, '=' or ';')"
                            .into(),
                    });
                }
                let Inner::V2(c) = &mut self.inner else {
                    unreachable!("matched above")
                };
                c.get(kvsname, key)
            }
        }
    }

    /// The value `rank` stored under `key` with [`PmiClient::put`] (after a
    /// [`PmiClient::barrier`]); `Ok(None)` if absent. PMI-1 and PMI-2 have one
    /// key space for the job, PMIx one per process.
    pub fn get_of(&mut self, rank: u32, key: &str) -> Result<Option<String>, PmiError> {
        match &mut self.inner {
            Inner::X(c) => c.get_of(rank, key),
            _ => self.get(key),
        }
    }

    /// The `PMI_process_mapping` value, if the process manager provides one
    /// (Hydra, Slurm and our `mpiexec` do), e.g. `(vector,(0,1,4))`; parse it
    /// with [`parse_process_mapping`]. An empty value means "unknown".
    /// PMI-1 reads it from the KVS, PMI-2 as a job attribute.
    pub fn process_mapping(&mut self) -> Result<Option<String>, PmiError> {
        let value = match &mut self.inner {
            Inner::V1(c) => c.get(PROCESS_MAPPING_KEY)?,
            Inner::V2(c) => c.job_attr(PROCESS_MAPPING_KEY)?,
            Inner::X(c) => c.process_mapping()?,
        };
        Ok(value.filter(|v| !v.is_empty()))
    }

    /// Every rank's application context (`MPI_APPNUM`, the executable block of
    /// an MPMD launch), when the process manager says: our `mpiexec` publishes
    /// them ([`APPNUMS_KEY`]), a PMIx server gives each process's
    /// `pmix.appnum`. `Ok(None)` elsewhere (Hydra, PMI-2): each process knows
    /// only its own.
    pub fn rank_appnums(&mut self) -> Result<Option<Vec<u32>>, PmiError> {
        let size = self.size();
        match &mut self.inner {
            Inner::V1(c) => Ok(c
                .get(APPNUMS_KEY)?
                .and_then(|v| crate::server::decode_appnums(&v, size))),
            Inner::V2(_) => Ok(None),
            Inner::X(c) => c.rank_appnums(),
        }
    }

    /// The process sets the PMIx server defines with members in this job
    /// (PRRTE's `--pset`), as (name, this job's ranks in order); empty under
    /// any other process manager, and when the server defines none (Open MPI
    /// 4's `mpirun` answers NOT-FOUND, which is not an error).
    pub fn server_psets(&mut self) -> Result<Vec<(String, Vec<u32>)>, PmiError> {
        match &mut self.inner {
            Inner::X(c) => c.psets(),
            _ => Ok(Vec::new()),
        }
    }

    /// The job secret our `mpiexec` generates for authenticating the ranks'
    /// own connections to each other: `OXMPI_JOB_SECRET` from the
    /// environment if set, else the [`JOB_SECRET_KEY`] KVS entry. `Ok(None)`
    /// under a process manager that provides neither (Hydra, Slurm).
    pub fn job_secret(&mut self) -> Result<Option<String>, PmiError> {
        if let Some(secret) = env_var(JOB_SECRET_ENV)? {
            if !secret.is_empty() {
                return Ok(Some(secret));
            }
        }
        if let Inner::X(_) = self.inner {
            // A PMIx server is not our launcher: nobody published one.
            return Ok(None);
        }
        Ok(self.get(JOB_SECRET_KEY)?.filter(|v| !v.is_empty()))
    }

    /// Asks the process manager to end the whole job with `exit_code`.
    ///
    /// The server does not answer; it kills the job, this process included,
    /// so the caller should exit with `exit_code` if this returns. `msg` is
    /// passed along as text (PMI-1: `error_msg=`, Flux's convention, which
    /// Hydra ignores; PMI-2: `msg=`, which Slurm logs), with control
    /// characters (and, for PMI-2, `;`) turned into spaces.
    pub fn abort(&mut self, exit_code: i32, msg: &str) -> Result<(), PmiError> {
        match &mut self.inner {
            Inner::V1(c) => c.abort(exit_code, msg),
            Inner::V2(c) => {
                let text: String = msg
                    .chars()
                    .map(|ch| {
                        if ch.is_control() || ch == ';' {
                            ' '
                        } else {
                            ch
                        }
                    })
                    .collect();
                c.abort(exit_code, text.trim())
            }
            Inner::X(c) => c.abort(exit_code, msg),
        }
    }

    /// Sends one PMI-1 line the server does not answer (oxmpi's `mpiexec`
    /// extensions, e.g. [`crate::status::STATUS_CMD`]); `line` has no newline.
    /// Refused on PMI-2 connections.
    pub fn notify(&mut self, line: &str) -> Result<(), PmiError> {
        match &mut self.inner {
            Inner::V1(c) => {
                let mut l = String::with_capacity(line.len() + 1);
                l.push_str(line);
                l.push('\n');
                c.conn
                    .write_all(l.as_bytes())
                    .and_then(|()| c.conn.flush())
                    .map_err(|source| io_error(source, "sending a status report".into()))
            }
            Inner::V2(_) => Err(PmiError::Protocol {
                expected: "a PMI-1 connection".into(),
                got: "PMI-2".into(),
            }),
            Inner::X(_) => Err(PmiError::Protocol {
                expected: "a PMI-1 connection".into(),
                got: "PMIx".into(),
            }),
        }
    }

    /// Tells the process manager this process is done with PMI; after this
    /// the process may exit without the job being considered failed.
    pub fn finalize(self) -> Result<(), PmiError> {
        match self.inner {
            Inner::V1(c) => c.finalize(),
            Inner::V2(mut c) => c.finalize(),
            Inner::X(c) => (*c).finalize(),
        }
    }

    fn check_key(&self, key: &str) -> Result<(), PmiError> {
        if !is_valid_key(key) || key.contains(';') {
            return Err(PmiError::InvalidKey {
                key: key.to_string(),
                reason: "keys must be non-empty printable ASCII without spaces, '=', ';' \
                         or newlines"
                    .into(),
            });
        }
        let max = self.key_len_max();
        if key.len() >= max {
            return Err(PmiError::InvalidKey {
                key: key.to_string(),
                reason: format!(
                    "key is {} bytes; the process manager accepts at most {}",
                    key.len(),
                    max - 1
                ),
            });
        }
        Ok(())
    }
}

/// A PMI-1 connection to the process manager after a successful `init`.
pub(crate) struct Pmi1Client {
    conn: Box<dyn Transport>,
    decoder: LineDecoder,
    rank: u32,
    size: u32,
    appnum: i32,
    universe_size: i32,
    kvsname: String,
    kvsname_max: usize,
    keylen_max: usize,
    vallen_max: usize,
}

impl Pmi1Client {
    /// [`PmiClient::connect_tcp`], adding `secret=SECRET` to the `initack`
    /// when given (our `mpiexec` refuses TCP connections without the rank's
    /// [`PMI_TOKEN_ENV`] credential; other servers ignore the extra key).
    pub fn connect_tcp_with_secret(
        addr: &str,
        pmiid: u32,
        secret: Option<&str>,
    ) -> Result<Pmi1Client, PmiError> {
        let stream = TcpStream::connect(addr).map_err(|source| PmiError::Io {
            context: format!("connecting to the process manager at {addr}"),
            source,
        })?;
        // Requests are tiny and lock-step; Nagle would add a delay to each.
        let _ = stream.set_nodelay(true);
        let mut client = Pmi1Client::unconnected(Box::new(stream));
        let mut initack = Message::new("initack").arg("pmiid", pmiid.to_string());
        if let Some(secret) = secret {
            initack.push("secret", secret);
        }
        client.send(&initack, "initack")?;
        client.expect_reply("initack")?;
        let (mut rank, mut size) = (None, None);
        // Hydra follows initack with size, rank and debug, each as cmd=set.
        for _ in 0..3 {
            let m = client.expect_reply("set")?;
            let mut known = false;
            if let Some(v) = m.get_int::<u32>("size") {
                size = Some(v);
                known = true;
            }
            if let Some(v) = m.get_int::<u32>("rank") {
                rank = Some(v);
                known = true;
            }
            if m.get("debug").is_some() {
                known = true;
            }
            if !known {
                return Err(PmiError::Protocol {
                    expected: "set size=N, set rank=R or set debug=D".into(),
                    got: format!("{m:?}"),
                });
            }
        }
        let (Some(rank), Some(size)) = (rank, size) else {
            return Err(PmiError::Protocol {
                expected: "set size=N and set rank=R after initack".into(),
                got: "an incomplete handshake".into(),
            });
        };
        client.rank = rank;
        client.size = size;
        client.initialize()?;
        Ok(client)
    }

    /// Runs the PMI-1 `init` exchange over an already connected stream for a
    /// process whose rank and size the starter told it out of band.
    pub fn from_stream<S>(stream: S, rank: u32, size: u32) -> Result<Pmi1Client, PmiError>
    where
        S: Read + Write + Send + 'static,
    {
        let mut client = Pmi1Client::unconnected(Box::new(stream));
        client.rank = rank;
        client.size = size;
        client.initialize()?;
        Ok(client)
    }

    fn unconnected(conn: Box<dyn Transport>) -> Pmi1Client {
        Pmi1Client {
            conn,
            decoder: LineDecoder::default(),
            rank: 0,
            size: 1,
            appnum: 0,
            universe_size: 1,
            kvsname: String::new(),
            kvsname_max: DEFAULT_KVSNAME_MAX,
            keylen_max: DEFAULT_KEYLEN_MAX,
            vallen_max: DEFAULT_VALLEN_MAX,
        }
    }

    fn initialize(&mut self) -> Result<(), PmiError> {
        if self.size == 0 || self.rank >= self.size {
            return Err(PmiError::Env {
                var: "PMI_RANK",
                problem: format!("rank {} is not below size {}", self.rank, self.size),
            });
        }
        let init = Message::new("init")
            .arg("pmi_version", "1")
            .arg("pmi_subversion", "1");
        let reply = self.call(&init, "response_to_init")?;
        if let Some(version) = reply.get_int::<u32>("pmi_version") {
            if version != 1 {
                return Err(PmiError::Protocol {
                    expected: "response_to_init pmi_version=1".into(),
                    got: format!("pmi_version={version}"),
                });
            }
        }

        let maxes = self.call(&Message::new("get_maxes"), "maxes")?;
        self.kvsname_max = maxes.get_int("kvsname_max").unwrap_or(DEFAULT_KVSNAME_MAX);
        self.keylen_max = maxes.get_int("keylen_max").unwrap_or(DEFAULT_KEYLEN_MAX);
        self.vallen_max = maxes.get_int("vallen_max").unwrap_or(DEFAULT_VALLEN_MAX);

        let appnum = self.call(&Message::new("get_appnum"), "appnum")?;
        // Slurm answers appnum=-1 ("unknown"): a plain launch is app 0.
        self.appnum = appnum.get_int::<i32>("appnum").unwrap_or(0).max(0);

        let kvs = self.call(&Message::new("get_my_kvsname"), "my_kvsname")?;
        self.kvsname = match kvs.get("kvsname") {
            Some(name) if is_valid_key(name) => name.to_string(),
            _ => {
                return Err(PmiError::Protocol {
                    expected: "my_kvsname kvsname=NAME".into(),
                    got: format!("{kvs:?}"),
                })
            }
        };

        let universe = self.call(&Message::new("get_universe_size"), "universe_size")?;
        self.universe_size = universe.get_int("size").unwrap_or(self.size as i32);
        Ok(())
    }

    /// This process's rank in the job.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// Number of processes in the job.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Which executable of an MPMD launch this process belongs to.
    pub fn appnum(&self) -> i32 {
        self.appnum
    }

    /// The process manager's `MPI_UNIVERSE_SIZE`.
    pub fn universe_size(&self) -> i32 {
        self.universe_size
    }

    /// Name of the job's key-value space.
    pub fn kvs_name(&self) -> &str {
        &self.kvsname
    }

    /// Longest key the server accepts, in bytes.
    pub fn key_len_max(&self) -> usize {
        self.keylen_max
    }

    /// Longest value the server accepts, in bytes.
    pub fn value_len_max(&self) -> usize {
        self.vallen_max
    }

    /// Stores `key=value` in the job's KVS; visible to other ranks after the
    /// next [`PmiClient::barrier`].
    ///
    /// PMI-1 splits lines at spaces and has no escaping, so `value` must not
    /// contain spaces, newlines or other control characters: callers should
    /// pass hex- or base64-encoded data (`=` is fine). Keys must be printable
    /// ASCII without spaces or `=`. Both are checked against the server's
    /// advertised maxima (which count a C terminator, hence the strict `<`).
    pub fn put(&mut self, key: &str, value: &str) -> Result<(), PmiError> {
        self.check_key(key)?;
        if !is_valid_value(value) {
            return Err(PmiError::InvalidValue {
                key: key.to_string(),
                reason: "values must not contain spaces, newlines or control characters; \
                         encode binary data as hex or base64"
                    .into(),
            });
        }
        if value.len() >= self.vallen_max {
            return Err(PmiError::InvalidValue {
                key: key.to_string(),
                reason: format!(
                    "value is {} bytes; the process manager accepts at most {}",
                    value.len(),
                    self.vallen_max - 1
                ),
            });
        }
        let put = Message::new("put")
            .arg("kvsname", self.kvsname.clone())
            .arg("key", key)
            .arg("value", value);
        self.call(&put, "put_result").map(drop)
    }

    /// Blocks until every rank of the job has entered the barrier; it also
    /// makes earlier `put`s visible to all ranks.
    pub fn barrier(&mut self) -> Result<(), PmiError> {
        self.call(&Message::new("barrier_in"), "barrier_out")
            .map(drop)
    }

    /// Looks `key` up in this job's KVS; `Ok(None)` if nobody put it.
    pub fn get(&mut self, key: &str) -> Result<Option<String>, PmiError> {
        let kvsname = self.kvsname.clone();
        self.get_from(&kvsname, key)
    }

    /// Looks `key` up in the KVS named `kvsname`; `Ok(None)` if absent.
    pub fn get_from(&mut self, kvsname: &str, key: &str) -> Result<Option<String>, PmiError> {
        self.check_key(key)?;
        if !is_valid_key(kvsname) || kvsname.len() >= self.kvsname_max {
            return Err(PmiError::InvalidKey {
                key: kvsname.to_string(),
                reason: format!(
                    "not a valid KVS name (printable, no spaces or '=', under {} bytes)",
                    self.kvsname_max
                ),
            });
        }
        let get = Message::new("get").arg("kvsname", kvsname).arg("key", key);
        self.send(&get, "get")?;
        let reply = self.expect_reply("get_result")?;
        // PMI-1 has no distinct "not found" code: any failure of a well-formed
        // get means the key is not there.
        if reply.rc() != 0 {
            return Ok(None);
        }
        Ok(Some(reply.get("value").unwrap_or("").to_string()))
    }

    /// `cmd=publish_name|unpublish_name|lookup_name service=S [port=P]`.
    pub fn name_service(
        &mut self,
        op: crate::server::NameOp,
        service: &str,
        port: &str,
    ) -> Result<Option<String>, PmiError> {
        use crate::server::NameOp;
        let (cmd, reply) = match op {
            NameOp::Publish => ("publish_name", "publish_result"),
            NameOp::Unpublish => ("unpublish_name", "unpublish_result"),
            NameOp::Lookup => ("lookup_name", "lookup_result"),
        };
        let mut m = Message::new(cmd).arg("service", service);
        if op == NameOp::Publish {
            m = m.arg("port", port);
        }
        let r = self.call(&m, reply)?;
        Ok(r.get("port").map(str::to_string))
    }

    /// `mcmd=spawn` blocks (MPICH's simple PMI format, which Hydra serves), one
    /// per command, then one `spawn_result`.
    pub fn spawn(
        &mut self,
        commands: &[crate::server::SpawnCommand],
        preput: &[(String, String)],
    ) -> Result<Vec<i32>, PmiError> {
        let mut text = String::new();
        for (i, c) in commands.iter().enumerate() {
            let mut lines = vec![
                "mcmd=spawn".to_string(),
                format!("nprocs={}", c.nprocs),
                format!("execname={}", c.execname),
                format!("totspawns={}", commands.len()),
                format!("spawnssofar={}", i + 1),
                format!("argcnt={}", c.args.len()),
            ];
            for (j, a) in c.args.iter().enumerate() {
                lines.push(format!("arg{}={a}", j + 1));
            }
            lines.push(format!("preput_num={}", preput.len()));
            for (j, (k, v)) in preput.iter().enumerate() {
                lines.push(format!("preput_key_{j}={k}"));
                lines.push(format!("preput_val_{j}={v}"));
            }
            lines.push(format!("info_num={}", c.info.len()));
            for (j, (k, v)) in c.info.iter().enumerate() {
                lines.push(format!("info_key_{j}={k}"));
                lines.push(format!("info_val_{j}={v}"));
            }
            lines.push("endcmd".into());
            for l in lines {
                if l.contains(['\n', '\r']) {
                    return Err(PmiError::InvalidValue {
                        key: "spawn".into(),
                        reason: format!("{l:?} contains a newline"),
                    });
                }
                text.push_str(&l);
                text.push('\n');
            }
        }
        self.conn
            .write_all(text.as_bytes())
            .and_then(|()| self.conn.flush())
            .map_err(|source| io_error(source, "sending mcmd=spawn".into()))?;
        let reply = self.expect_reply("spawn_result")?;
        if reply.rc() != 0 {
            return Err(PmiError::Server {
                cmd: "spawn".into(),
                rc: reply.rc(),
                msg: reply.get("msg").map(str::to_string),
            });
        }
        Ok(reply
            .get("errcodes")
            .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
            .unwrap_or_default())
    }

    /// Asks the process manager to end the whole job with `exit_code`.
    ///
    /// The server does not answer; it kills the job, this process included,
    /// so the caller should exit with `exit_code` if this returns. `msg` is
    /// sent as free text after the exit code (Flux's convention; Hydra
    /// ignores it), with newlines turned into spaces.
    pub fn abort(&mut self, exit_code: i32, msg: &str) -> Result<(), PmiError> {
        let mut abort = Message::new("abort").arg("exitcode", exit_code.to_string());
        let text: String = msg
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let text = text.trim();
        if !text.is_empty() {
            abort.push("error_msg", text);
        }
        self.send(&abort, "abort")
    }

    /// Tells the process manager this process is done with PMI; after this
    /// the process may exit without the job being considered failed.
    pub fn finalize(mut self) -> Result<(), PmiError> {
        self.call(&Message::new("finalize"), "finalize_ack")
            .map(drop)
    }

    fn check_key(&self, key: &str) -> Result<(), PmiError> {
        if !is_valid_key(key) {
            return Err(PmiError::InvalidKey {
                key: key.to_string(),
                reason: "keys must be non-empty printable ASCII without spaces, '=' or newlines"
                    .into(),
            });
        }
        if key.len() >= self.keylen_max {
            return Err(PmiError::InvalidKey {
                key: key.to_string(),
                reason: format!(
                    "key is {} bytes; the process manager accepts at most {}",
                    key.len(),
                    self.keylen_max - 1
                ),
            });
        }
        Ok(())
    }

    /// Sends `request` and returns the reply named `expected`, failing on a
    /// nonzero `rc`.
    fn call(&mut self, request: &Message, expected: &str) -> Result<Message, PmiError> {
        self.send(request, request.name())?;
        let reply = self.expect_reply(expected)?;
        if reply.rc() != 0 {
            return Err(PmiError::Server {
                cmd: request.name().to_string(),
                rc: reply.rc(),
                msg: reply.get("msg").map(str::to_string),
            });
        }
        Ok(reply)
    }

    fn send(&mut self, request: &Message, what: &str) -> Result<(), PmiError> {
        let line = request.encode().map_err(|e| PmiError::InvalidValue {
            key: what.to_string(),
            reason: e.to_string(),
        })?;
        self.conn
            .write_all(line.as_bytes())
            .and_then(|()| self.conn.flush())
            .map_err(|source| io_error(source, format!("sending cmd={what}")))
    }

    fn expect_reply(&mut self, expected: &str) -> Result<Message, PmiError> {
        let line = self.read_line(expected)?;
        let reply = Message::parse(&line).map_err(|source| PmiError::Codec {
            during: format!("cmd={expected}"),
            source,
        })?;
        if reply.name() != expected {
            return Err(PmiError::Protocol {
                expected: expected.to_string(),
                got: line,
            });
        }
        Ok(reply)
    }

    fn read_line(&mut self, expected: &str) -> Result<String, PmiError> {
        let mut buf = [0u8; 4096];
        loop {
            if let Some(line) = self.decoder.next_line() {
                return line.map_err(|source| PmiError::Codec {
                    during: format!("cmd={expected}"),
                    source,
                });
            }
            match self.conn.read(&mut buf) {
                Ok(0) => {
                    return Err(PmiError::Closed {
                        during: format!("waiting for cmd={expected}"),
                    })
                }
                Ok(n) => self.decoder.feed(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => return Err(io_error(source, format!("waiting for cmd={expected}"))),
            }
        }
    }
}

fn io_error(source: io::Error, context: String) -> PmiError {
    PmiError::Io { context, source }
}

fn env_var(var: &'static str) -> Result<Option<String>, PmiError> {
    match env::var(var) {
        Ok(v) => Ok(Some(v)),
        Err(env::VarError::NotPresent) => Ok(None),
        Err(env::VarError::NotUnicode(_)) => Err(PmiError::Env {
            var,
            problem: "value is not valid UTF-8".into(),
        }),
    }
}

fn require_env(var: &'static str) -> Result<String, PmiError> {
    env_var(var)?.ok_or_else(|| PmiError::Env {
        var,
        problem: "not set (the starter must set PMI_RANK and PMI_SIZE along with PMI_FD)".into(),
    })
}

fn parse_env<T: std::str::FromStr>(var: &'static str, value: &str) -> Result<T, PmiError> {
    value.trim().parse().map_err(|_| PmiError::Env {
        var,
        problem: format!("{value:?} is not a valid number"),
    })
}

/// Takes ownership of the inherited PMI descriptor after checking it is
/// open, and marks it close-on-exec so programs the rank starts do not keep
/// the connection alive.
fn adopt_fd(fd: RawFd) -> Result<OwnedFd, PmiError> {
    if fd < 0 {
        return Err(PmiError::Env {
            var: "PMI_FD",
            problem: format!("{fd} is not a file descriptor"),
        });
    }
    // SAFETY: F_GETFD only queries descriptor flags; any integer is allowed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags < 0 {
        return Err(PmiError::Env {
            var: "PMI_FD",
            problem: format!(
                "descriptor {fd} is not open: {}",
                io::Error::last_os_error()
            ),
        });
    }
    // SAFETY: F_SETFD on a descriptor just verified to be open.
    unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) };
    // The descriptor is open and, per the PMI contract, handed to this process for
    // the PMI client's exclusive use: nothing else in the process owns or closes it.
    // SAFETY: an open descriptor with a single owner (see above).
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Expands a `PMI_process_mapping` value into the node index of each rank.
///
/// The format is `(vector,(node,nnodes,ppn),...)`: each block places `ppn`
/// consecutive ranks on each of the `nnodes` nodes starting at `node`, e.g.
/// `(vector,(0,2,2))` is `[0, 0, 1, 1]` and `(vector,(0,2,1),(0,2,1))` is the
/// cyclic `[0, 1, 0, 1]`. Returns `None` for malformed input, zero counts or
/// absurdly large expansions.
pub fn parse_process_mapping(s: &str) -> Option<Vec<u32>> {
    /// Guards against a corrupt value expanding into gigabytes.
    const MAX_RANKS: u64 = 1 << 24;
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    let body = compact.strip_prefix("(vector,")?.strip_suffix(')')?;
    let mut nodes = Vec::new();
    let mut rest = body;
    loop {
        let inner_end = rest.find(')')?;
        let block = rest.strip_prefix('(')?.get(..inner_end - 1)?;
        let mut fields = block.split(',').map(|f| f.parse::<u32>().ok());
        let (start, nnodes, ppn) = (fields.next()??, fields.next()??, fields.next()??);
        if fields.next().is_some() || nnodes == 0 || ppn == 0 {
            return None;
        }
        let added = u64::from(nnodes) * u64::from(ppn);
        if nodes.len() as u64 + added > MAX_RANKS {
            return None;
        }
        start.checked_add(nnodes - 1)?;
        for node in start..start + nnodes {
            nodes.extend(std::iter::repeat_n(node, ppn as usize));
        }
        rest = &rest[inner_end + 1..];
        if rest.is_empty() {
            break;
        }
        rest = rest.strip_prefix(',')?;
    }
    Some(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_detection() {
        use PmiProtocol::{Pmi1, Pmi2};
        // Slurm's mpi/pmi2 sets PMI_JOBID; Hydra and our mpiexec do not.
        assert_eq!(PmiProtocol::detect(None, Some("12.0")).unwrap(), Pmi2);
        assert_eq!(PmiProtocol::detect(None, None).unwrap(), Pmi1);
        assert_eq!(PmiProtocol::detect(Some(""), Some("12.0")).unwrap(), Pmi2);
        assert_eq!(PmiProtocol::detect(Some("auto"), None).unwrap(), Pmi1);
        // OXMPI_PMI forces either way.
        assert_eq!(PmiProtocol::detect(Some("1"), Some("12.0")).unwrap(), Pmi1);
        assert_eq!(PmiProtocol::detect(Some(" 2 "), None).unwrap(), Pmi2);
        for bad in ["3", "pmi2", "x"] {
            let e = PmiProtocol::detect(Some(bad), None).unwrap_err();
            assert!(e.to_string().contains(PMI_PROTOCOL_ENV), "{e}");
        }
    }

    #[test]
    fn mapping_single_node() {
        assert_eq!(
            parse_process_mapping("(vector,(0,1,4))"),
            Some(vec![0, 0, 0, 0])
        );
    }

    #[test]
    fn mapping_block_and_cyclic() {
        assert_eq!(
            parse_process_mapping("(vector,(0,2,2))"),
            Some(vec![0, 0, 1, 1])
        );
        assert_eq!(
            parse_process_mapping("(vector,(0,2,1),(0,2,1))"),
            Some(vec![0, 1, 0, 1])
        );
        assert_eq!(
            parse_process_mapping("(vector,(0,2,2),(2,2,4))"),
            Some(vec![0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3])
        );
        assert_eq!(
            parse_process_mapping(" ( vector, (1, 1, 2) ) "),
            Some(vec![1, 1])
        );
    }

    #[test]
    fn mapping_rejects_malformed() {
        for bad in [
            "",
            "(vector)",
            "(vector,)",
            "(vector,(0,1))",
            "(vector,(0,1,2,3))",
            "(vector,(0,1,x))",
            "(vector,(0,1,4)",
            "vector,(0,1,4)",
            "(vector,(0,1,4),)",
            "(vector,(0,1,4)(0,1,4))",
            "(vector,(0,0,4))",
            "(vector,(0,1,0))",
            "(vector,(-1,1,4))",
            "(vector,(4294967295,2,1))",
            "(vector,(0,65536,65536))",
            "(list,(0,1,4))",
            "(vector,((0,1,4))",
        ] {
            assert_eq!(parse_process_mapping(bad), None, "{bad:?}");
        }
    }
}
