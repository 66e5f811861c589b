//! Blocking PMI-2 client: the protocol of Slurm's `srun --mpi=pmi2` (and one
//! MPICH's Hydra also serves). Wrapped by [`crate::PmiClient`], which picks
//! PMI-1 or PMI-2 from the environment.
//!
//! Exchange, in lock-step like PMI-1:
//!
//! 1. PMI-1 style line `cmd=init pmi_version=2 pmi_subversion=0\n`, answered
//!    by the line `cmd=response_to_init ... pmi_version=2 ...` (servers pick
//!    the protocol for the connection from it).
//! 2. From then on, length-prefixed frames (see [`crate::codec2`]):
//!    `fullinit` (pmijobid, pmirank, threaded) → `fullinit-response` (rank,
//!    size, appnum, ...); `job-getid` → `jobid`; `info-getjobattr`
//!    (`universeSize`, `PMI_process_mapping`); `kvs-put`, `kvs-fence`,
//!    `kvs-get`; `abort` (no reply); `finalize` → `finalize-response`.

use std::io::{self, Read, Write};

use crate::codec::Message;
use crate::codec2::{is_valid_pmi2_key, FrameDecoder, Pmi2Message};
use crate::error::PmiError;

/// `PMI2_MAX_KEYLEN` and `PMI2_MAX_VALLEN` (both count a C terminator).
pub(crate) const PMI2_KEYLEN_MAX: usize = 64;
pub(crate) const PMI2_VALLEN_MAX: usize = 1024;

/// A key nobody puts: `kvs-get` of it after a fence waits for all
/// processes under Hydra (see [`Pmi2Client::fence`]).
const BARRIER_PROBE_KEY: &str = "oxmpi-barrier-probe";

/// Job attribute holding `MPI_UNIVERSE_SIZE` (Slurm and Hydra).
const UNIVERSE_SIZE_ATTR: &str = "universeSize";

pub(crate) trait Transport: Read + Write + Send {}
impl<T: Read + Write + Send> Transport for T {}

pub(crate) struct Pmi2Client {
    conn: Box<dyn Transport>,
    decoder: FrameDecoder,
    pub(crate) rank: u32,
    pub(crate) size: u32,
    pub(crate) appnum: i32,
    pub(crate) universe_size: i32,
    pub(crate) jobid: String,
    /// Whether a `kvs-fence` completed: before one, the PMI-2 KVS holds
    /// nothing anyone put, so `get` answers `None` without asking. (Hydra
    /// 4.0 even aborts the whole job on a `kvs-get` of a missing key from a
    /// process that never fenced.)
    fenced: bool,
}

impl Pmi2Client {
    /// Runs the PMI-2 start-up over `conn`: `pmirank` is the id the starter
    /// gave this process (`PMI_RANK`), `pmijobid` Slurm's `PMI_JOBID`.
    pub(crate) fn init(
        conn: Box<dyn Transport>,
        pmirank: u32,
        pmijobid: Option<&str>,
    ) -> Result<Pmi2Client, PmiError> {
        let mut c = Pmi2Client {
            conn,
            decoder: FrameDecoder::default(),
            rank: pmirank,
            size: 0,
            appnum: 0,
            universe_size: 0,
            jobid: String::new(),
            fenced: false,
        };

        let init = Message::new("init")
            .arg("pmi_version", "2")
            .arg("pmi_subversion", "0");
        let line = init.encode().map_err(|e| PmiError::InvalidValue {
            key: "init".into(),
            reason: e.to_string(),
        })?;
        c.write(line.as_bytes(), "init")?;
        let line = c.read_line()?;
        let reply = Message::parse(&line).map_err(|source| PmiError::Codec {
            during: "cmd=init".into(),
            source,
        })?;
        if reply.name() != "response_to_init" {
            return Err(PmiError::Protocol {
                expected: "response_to_init".into(),
                got: line,
            });
        }
        let version = reply.get_int::<u32>("pmi_version");
        if reply.rc() != 0 || version.is_some_and(|v| v != 2) {
            return Err(PmiError::Server {
                cmd: "init pmi_version=2".into(),
                rc: reply.rc(),
                msg: Some(format!(
                    "the process manager does not speak PMI-2 (it answered {line:?}); \
                     set OXMPI_PMI=1 to use PMI-1"
                )),
            });
        }

        let mut fullinit = Pmi2Message::new("fullinit");
        if let Some(jobid) = pmijobid.filter(|j| !j.is_empty()) {
            fullinit.push("pmijobid", jobid);
        }
        fullinit.push("pmirank", pmirank.to_string());
        fullinit.push("threaded", "FALSE");
        let reply = c.call(&fullinit, "fullinit-response")?;
        let size: u32 = reply.get_int("size").ok_or_else(|| PmiError::Protocol {
            expected: "fullinit-response with size=N".into(),
            got: format!("{reply:?}"),
        })?;
        let rank: u32 = reply.get_int("rank").unwrap_or(pmirank);
        if size == 0 || rank >= size {
            return Err(PmiError::Protocol {
                expected: "fullinit-response with rank < size".into(),
                got: format!("rank={rank} size={size}"),
            });
        }
        c.rank = rank;
        c.size = size;
        // Slurm answers appnum=-1 ("unknown"): a plain launch is app 0.
        c.appnum = reply.get_int::<i32>("appnum").unwrap_or(0).max(0);

        let id = c.call(&Pmi2Message::new("job-getid"), "job-getid-response");
        c.jobid = match id.ok().and_then(|m| m.get("jobid").map(str::to_string)) {
            Some(j) if is_valid_pmi2_key(&j) => j,
            _ => match pmijobid.filter(|j| is_valid_pmi2_key(j)) {
                Some(j) => j.to_string(),
                None => format!("pmi2-job-{}", std::process::id()),
            },
        };
        c.universe_size = c
            .job_attr(UNIVERSE_SIZE_ATTR)?
            .and_then(|v| v.trim().parse().ok())
            .filter(|&u: &i32| u > 0)
            .unwrap_or(size as i32);
        Ok(c)
    }

    pub(crate) fn put(&mut self, key: &str, value: &str) -> Result<(), PmiError> {
        let put = Pmi2Message::new("kvs-put")
            .arg("key", key)
            .arg("value", value);
        self.call(&put, "kvs-put-response").map(drop)
    }

    /// A barrier that also publishes earlier puts.
    ///
    /// `kvs-fence` alone is not a barrier everywhere: Slurm answers once all
    /// tasks fenced, but Hydra answers each process at once and instead makes
    /// a `kvs-get` of a missing key wait until every process has fenced as
    /// often as the caller. So a `kvs-get` of a key nobody puts follows the
    /// fence (MPICH's PMI-2 barrier does the same); Slurm answers it
    /// immediately with `found=FALSE`.
    pub(crate) fn fence(&mut self) -> Result<(), PmiError> {
        self.call(&Pmi2Message::new("kvs-fence"), "kvs-fence-response")?;
        self.fenced = true;
        let jobid = self.jobid.clone();
        self.get(&jobid, BARRIER_PROBE_KEY).map(drop)
    }

    /// `kvs-get`; `Ok(None)` when not found (or refused: PMI-2 servers
    /// report a missing key either way).
    pub(crate) fn get(&mut self, jobid: &str, key: &str) -> Result<Option<String>, PmiError> {
        if !self.fenced {
            return Ok(None);
        }
        let get = Pmi2Message::new("kvs-get")
            .arg("jobid", jobid)
            .arg("srcid", "-1")
            .arg("key", key);
        self.send(&get)?;
        let reply = self.expect_reply("kvs-get-response")?;
        Ok(found_value(&reply))
    }

    /// `info-getjobattr`; `Ok(None)` when the server has no such attribute.
    pub(crate) fn job_attr(&mut self, key: &str) -> Result<Option<String>, PmiError> {
        let get = Pmi2Message::new("info-getjobattr").arg("key", key);
        self.send(&get)?;
        let reply = self.expect_reply("info-getjobattr-response")?;
        Ok(found_value(&reply))
    }

    /// `abort`: the server kills the job and sends no reply. `msg` must be
    /// free of `;` and control characters (the caller cleans it).
    pub(crate) fn abort(&mut self, exit_code: i32, msg: &str) -> Result<(), PmiError> {
        let mut abort = Pmi2Message::new("abort")
            .arg("isworld", "TRUE")
            .arg("exitcode", exit_code.to_string());
        if !msg.is_empty() {
            abort.push("msg", msg);
        }
        self.send(&abort)
    }

    pub(crate) fn finalize(&mut self) -> Result<(), PmiError> {
        self.call(&Pmi2Message::new("finalize"), "finalize-response")
            .map(drop)
    }

    fn call(&mut self, request: &Pmi2Message, expected: &str) -> Result<Pmi2Message, PmiError> {
        self.send(request)?;
        let reply = self.expect_reply(expected)?;
        if reply.rc() != 0 {
            return Err(PmiError::Server {
                cmd: request.name().to_string(),
                rc: reply.rc(),
                msg: reply
                    .get("errmsg")
                    .or_else(|| reply.get("msg"))
                    .map(str::to_string),
            });
        }
        Ok(reply)
    }

    fn send(&mut self, request: &Pmi2Message) -> Result<(), PmiError> {
        let frame = request.encode().map_err(|e| PmiError::InvalidValue {
            key: request.name().to_string(),
            reason: e.to_string(),
        })?;
        self.write(frame.as_bytes(), request.name())
    }

    fn write(&mut self, bytes: &[u8], what: &str) -> Result<(), PmiError> {
        self.conn
            .write_all(bytes)
            .and_then(|()| self.conn.flush())
            .map_err(|source| PmiError::Io {
                context: format!("sending cmd={what}"),
                source,
            })
    }

    fn expect_reply(&mut self, expected: &str) -> Result<Pmi2Message, PmiError> {
        let body = self.read(expected, |d| d.next_frame())?;
        let reply = Pmi2Message::parse_body(&body).map_err(|source| PmiError::Pmi2Codec {
            during: format!("cmd={expected}"),
            source,
        })?;
        if reply.name() != expected {
            return Err(PmiError::Protocol {
                expected: expected.to_string(),
                got: body,
            });
        }
        Ok(reply)
    }

    fn read_line(&mut self) -> Result<String, PmiError> {
        self.read("response_to_init", |d| d.next_line())
    }

    fn read(
        &mut self,
        expected: &str,
        mut next: impl FnMut(&mut FrameDecoder) -> Option<Result<String, crate::codec2::Pmi2CodecError>>,
    ) -> Result<String, PmiError> {
        let mut buf = [0u8; 4096];
        loop {
            if let Some(item) = next(&mut self.decoder) {
                return item.map_err(|source| PmiError::Pmi2Codec {
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
                Err(source) => {
                    return Err(PmiError::Io {
                        context: format!("waiting for cmd={expected}"),
                        source,
                    })
                }
            }
        }
    }
}

fn found_value(reply: &Pmi2Message) -> Option<String> {
    if reply.rc() != 0 || reply.get_bool("found") == Some(false) {
        return None;
    }
    // `found` is mandatory per the spec; a server that omits it but sends a
    // value is taken at its word.
    reply.get("value").map(str::to_string)
}
