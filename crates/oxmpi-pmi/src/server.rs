//! Sans-IO PMI-1 server: the process-manager side of the protocol for one
//! job, as run by our `mpiexec`.
//!
//! The launcher owns the connections; it feeds each complete line received
//! from rank `r` to [`PmiServer::handle_line`] and writes the returned
//! replies to the ranks they are addressed to. Replies can go to ranks other
//! than the sender (the last `barrier_in` releases everyone). Things the
//! launcher must act on (abort, finalize, protocol errors) come back as
//! [`ServerEvent`]s.

use std::collections::HashMap;

use crate::client::{APPNUMS_KEY, PROCESS_MAPPING_KEY};
use crate::codec::{CodecError, Message};

/// Maxima advertised in `cmd=maxes`, counting a C terminator as MPICH does.
pub const KVSNAME_MAX: usize = 256;
/// See [`KVSNAME_MAX`].
pub const KEYLEN_MAX: usize = 64;
/// See [`KVSNAME_MAX`].
pub const VALLEN_MAX: usize = 1024;

/// Where a rank is in its PMI life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankPhase {
    /// Connected (or not yet): has not completed `cmd=init`.
    NotInitialized,
    /// Completed `cmd=init`.
    Initialized,
    /// Sent `cmd=finalize`.
    Finalized,
    /// Sent `cmd=abort`.
    Aborted,
}

/// Something the launcher has to react to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEvent {
    /// `rank` completed `cmd=init`.
    Initialized { rank: u32 },
    /// `rank` called finalize; it may now exit without failing the job.
    Finalized { rank: u32 },
    /// `rank` asked for the whole job to be ended with `exit_code`.
    Abort {
        rank: u32,
        exit_code: i32,
        message: Option<String>,
    },
    /// `rank` sent something that is not valid PMI-1 for this server; per
    /// the protocol the job should be ended.
    ProtocolError { rank: u32, error: String },
    /// `rank` asked for new processes (`mcmd=spawn`, one block per command of
    /// MPI_Comm_spawn_multiple). The launcher starts them (or not) and answers
    /// with [`PmiServer::spawn_result`].
    Spawn {
        rank: u32,
        commands: Vec<SpawnCommand>,
        /// Key-value pairs to put into the new job's KVS before it starts.
        preput: Vec<(String, String)>,
    },
    /// `rank` used the name service (`cmd=publish_name`, `unpublish_name`,
    /// `lookup_name`); the launcher answers with [`PmiServer::name_result`].
    Name {
        rank: u32,
        op: NameOp,
        service: String,
        port: String,
    },
}

/// A name-service request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameOp {
    Publish,
    Unpublish,
    Lookup,
}

/// One command of a spawn request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnCommand {
    pub execname: String,
    pub args: Vec<String>,
    pub nprocs: u32,
    /// The MPI_Info keys and values given for this command.
    pub info: Vec<(String, String)>,
}

impl SpawnCommand {
    /// Parses the `key=value` body of one `mcmd=spawn` block (MPICH's simple
    /// PMI and Hydra: `nprocs`, `execname`, `argcnt`, `arg1..`, `preput_num`,
    /// `preput_key_i`/`preput_val_i`, `info_num`, `info_key_i`/`info_val_i`,
    /// `totspawns`, `spawnssofar`). Returns the command, its preput pairs and
    /// `(spawnssofar, totspawns)`.
    pub fn parse(
        body: &[(String, String)],
    ) -> Result<(SpawnCommand, Vec<(String, String)>, (u32, u32)), String> {
        let get = |k: &str| {
            body.iter()
                .rev()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        let num = |k: &str| -> Result<u32, String> {
            match get(k) {
                None => Ok(0),
                Some(v) => v
                    .trim()
                    .parse::<u32>()
                    .map_err(|_| format!("{k}={v:?} is not a number")),
            }
        };
        let execname = get("execname").ok_or("spawn without execname")?.to_string();
        let nprocs = num("nprocs")?;
        if nprocs == 0 {
            return Err("spawn of 0 processes (nprocs)".into());
        }
        let argcnt = num("argcnt")?;
        let mut args = Vec::new();
        for i in 1..=argcnt {
            args.push(
                get(&format!("arg{i}"))
                    .ok_or_else(|| format!("arg{i} missing (argcnt={argcnt})"))?
                    .to_string(),
            );
        }
        let pairs = |n: &str, k: &str, v: &str| -> Result<Vec<(String, String)>, String> {
            let mut out = Vec::new();
            for i in 0..num(n)? {
                let key = get(&format!("{k}{i}")).ok_or_else(|| format!("{k}{i} missing"))?;
                let val = get(&format!("{v}{i}")).unwrap_or("");
                out.push((key.to_string(), val.to_string()));
            }
            Ok(out)
        };
        let preput = pairs("preput_num", "preput_key_", "preput_val_")?;
        let info = pairs("info_num", "info_key_", "info_val_")?;
        let tot = num("totspawns")?.max(1);
        let sofar = num("spawnssofar")?.max(1);
        Ok((
            SpawnCommand {
                execname,
                args,
                nprocs,
                info,
            },
            preput,
            (sofar, tot),
        ))
    }
}

/// The result of handling one line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// `(rank, line)` pairs to send, in order; each line ends in `\n`.
    pub replies: Vec<(u32, String)>,
    pub events: Vec<ServerEvent>,
}

#[derive(Debug, Clone)]
struct RankState {
    phase: RankPhase,
    in_barrier: bool,
    /// Inside the body of a multi-line command (`mcmd=spawn`).
    in_multiline: bool,
    /// The body's `key=value` lines so far.
    body: Vec<(String, String)>,
    /// The blocks of a spawn_multiple received so far.
    spawns: Vec<SpawnCommand>,
    preput: Vec<(String, String)>,
}

/// PMI-1 server state for a single job: one KVS, `size` ranks.
#[derive(Debug)]
pub struct PmiServer {
    kvsname: String,
    size: u32,
    universe_size: u32,
    /// Per rank, the executable block it runs, or a spawn_multiple's command
    /// index (`MPI_APPNUM`); empty: all `appnum`.
    appnums: Vec<u32>,
    kvs: HashMap<String, String>,
    ranks: Vec<RankState>,
    in_barrier: u32,
    debug: bool,
    /// Keys the launcher published; ranks cannot overwrite them.
    reserved: std::collections::HashSet<String>,
    /// `MPI_APPNUM` of ranks past the end of `appnums`.
    appnum: u32,
}

impl PmiServer {
    /// A server for a job of `size` ranks whose KVS is called `kvsname`
    /// (conventionally `kvs_<launcher pid>_0`).
    pub fn new(kvsname: impl Into<String>, size: u32) -> PmiServer {
        let mut server = PmiServer {
            kvsname: kvsname.into(),
            size,
            universe_size: size,
            appnums: Vec::new(),
            kvs: HashMap::new(),
            ranks: vec![
                RankState {
                    phase: RankPhase::NotInitialized,
                    in_barrier: false,
                    in_multiline: false,
                    body: Vec::new(),
                    spawns: Vec::new(),
                    preput: Vec::new(),
                };
                size as usize
            ],
            in_barrier: 0,
            debug: false,
            reserved: std::collections::HashSet::new(),
            appnum: 0,
        };
        server.publish_appnums();
        server
    }

    /// Sets `MPI_APPNUM` rank by rank (one entry per rank).
    pub fn set_rank_appnums(&mut self, appnums: Vec<u32>) {
        self.appnums = appnums;
        self.publish_appnums();
    }

    /// Publishes every rank's `MPI_APPNUM` under [`APPNUMS_KEY`] (see
    /// [`encode_appnums`]): the ranks read it to offer one process set per
    /// application context (MPI-4 sessions).
    fn publish_appnums(&mut self) {
        let all: Vec<u32> = (0..self.size as usize)
            .map(|r| self.appnums.get(r).copied().unwrap_or(self.appnum))
            .collect();
        self.publish(APPNUMS_KEY, encode_appnums(&all));
    }

    /// The answer to a [`ServerEvent::Spawn`] of `rank`: `rc` 0 when the
    /// processes were started, else `msg` says why not; `errcodes` has one
    /// entry per process requested (0 = started).
    pub fn spawn_result(&self, rank: u32, rc: i32, msg: &str, errcodes: &[i32]) -> Output {
        let mut out = Output::default();
        let codes: Vec<String> = errcodes.iter().map(|c| c.to_string()).collect();
        let mut m = Message::new("spawn_result").arg("rc", rc.to_string());
        if !codes.is_empty() {
            m = m.arg("errcodes", codes.join(","));
        }
        if !msg.is_empty() {
            m = m.arg("msg", msg.replace(['\n', '\r'], " "));
        }
        self.reply(&mut out, rank, m);
        out
    }

    /// The answer to a [`ServerEvent::Name`]: for a lookup the port found, else
    /// `Ok(None)`; `Err(why)` when the request failed.
    pub fn name_result(
        &self,
        rank: u32,
        op: NameOp,
        result: Result<Option<String>, String>,
    ) -> Output {
        let mut out = Output::default();
        let name = match op {
            NameOp::Publish => "publish_result",
            NameOp::Unpublish => "unpublish_result",
            NameOp::Lookup => "lookup_result",
        };
        let m = match result {
            Ok(Some(port)) => Message::new(name).arg("rc", "0").arg("port", port),
            Ok(None) => Message::new(name).arg("rc", "0"),
            Err(why) => Message::new(name)
                .arg("rc", "-1")
                .arg("msg", why.replace(['\n', '\r'], " ")),
        };
        self.reply(&mut out, rank, m);
        out
    }

    /// Sets `MPI_APPNUM` for the job's ranks.
    pub fn set_appnum(&mut self, appnum: u32) {
        self.appnum = appnum;
        self.publish_appnums();
    }

    /// Publishes `PMI_process_mapping` (e.g. from [`single_node_mapping`]).
    pub fn set_process_mapping(&mut self, mapping: impl Into<String>) {
        self.publish(PROCESS_MAPPING_KEY, mapping);
    }

    /// Stores a launcher-provided `key=value` in the KVS, visible to every
    /// rank at once (no barrier needed) and protected from `put`s by ranks.
    pub fn publish(&mut self, key: impl Into<String>, value: impl Into<String>) {
        let key = key.into();
        self.reserved.insert(key.clone());
        self.kvs.insert(key, value.into());
    }

    /// Sets every rank's application number (an MPMD launch's block index,
    /// answered to `get_appnum`); ranks past the end of `appnums` get 0.
    pub fn set_appnums(&mut self, appnums: Vec<u32>) {
        self.appnums = appnums;
        self.publish_appnums();
    }

    /// Overrides the universe size reported to ranks (defaults to `size`).
    pub fn set_universe_size(&mut self, universe_size: u32) {
        self.universe_size = universe_size;
    }

    /// The job's KVS name.
    pub fn kvsname(&self) -> &str {
        &self.kvsname
    }

    /// Number of ranks.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Where `rank` is in its PMI life cycle.
    pub fn phase(&self, rank: u32) -> RankPhase {
        self.ranks
            .get(rank as usize)
            .map_or(RankPhase::NotInitialized, |r| r.phase)
    }

    /// Looks a key up in the job's KVS.
    pub fn kvs_get(&self, key: &str) -> Option<&str> {
        self.kvs.get(key).map(String::as_str)
    }

    /// Handles one line (without or with its newline) received from `rank`.
    pub fn handle_line(&mut self, rank: u32, line: &str) -> Output {
        let mut out = Output::default();
        let Some(state) = self.ranks.get(rank as usize) else {
            out.events.push(ServerEvent::ProtocolError {
                rank,
                error: format!(
                    "message from rank {rank}, but the job has {} ranks",
                    self.size
                ),
            });
            return out;
        };
        if state.in_multiline {
            // The body of `mcmd=spawn` is bare key=value lines ending in
            // `endcmd`; a spawn_multiple sends one block per command and
            // gets one answer after the last (`spawnssofar == totspawns`).
            let line = line.trim();
            if line != "endcmd" {
                let (k, v) = line.split_once('=').unwrap_or((line, ""));
                self.ranks[rank as usize]
                    .body
                    .push((k.to_string(), v.to_string()));
                return out;
            }
            let st = &mut self.ranks[rank as usize];
            st.in_multiline = false;
            let body = std::mem::take(&mut st.body);
            match SpawnCommand::parse(&body) {
                Ok((cmd, preput, (sofar, tot))) => {
                    st.spawns.push(cmd);
                    if st.preput.is_empty() {
                        st.preput = preput;
                    }
                    if sofar >= tot {
                        let commands = std::mem::take(&mut st.spawns);
                        let preput = std::mem::take(&mut st.preput);
                        out.events.push(ServerEvent::Spawn {
                            rank,
                            commands,
                            preput,
                        });
                    }
                }
                Err(e) => {
                    st.spawns.clear();
                    st.preput.clear();
                    self.reply(
                        &mut out,
                        rank,
                        Message::new("spawn_result").arg("rc", "-1").arg("msg", e),
                    );
                }
            }
            return out;
        }
        let msg = match Message::parse(line) {
            Ok(msg) => msg,
            Err(CodecError::MultiLineCommand { .. }) => {
                self.ranks[rank as usize].in_multiline = true;
                return out;
            }
            Err(e) => {
                out.events.push(ServerEvent::ProtocolError {
                    rank,
                    error: format!("{e} in {line:?}"),
                });
                return out;
            }
        };
        self.dispatch(rank, &msg, &mut out);
        out
    }

    fn dispatch(&mut self, rank: u32, msg: &Message, out: &mut Output) {
        let phase = self.ranks[rank as usize].phase;
        let initialized = phase != RankPhase::NotInitialized;
        match msg.name() {
            "initack" => {
                // TCP (PMI_PORT) clients identify themselves first; the
                // launcher maps the connection to `pmiid` and passes it here
                // as `rank`.
                self.reply(out, rank, Message::new("initack"));
                self.reply(
                    out,
                    rank,
                    Message::new("set").arg("size", self.size.to_string()),
                );
                self.reply(out, rank, Message::new("set").arg("rank", rank.to_string()));
                self.reply(
                    out,
                    rank,
                    Message::new("set").arg("debug", u8::from(self.debug).to_string()),
                );
            }
            "init" => {
                let version = msg.get_int::<u32>("pmi_version");
                if version != Some(1) {
                    self.reply(
                        out,
                        rank,
                        Message::new("response_to_init")
                            .arg("rc", "-1")
                            .arg("pmi_version", "1")
                            .arg("pmi_subversion", "1")
                            .arg("msg", "only PMI version 1 is supported"),
                    );
                    return;
                }
                if phase == RankPhase::NotInitialized {
                    self.ranks[rank as usize].phase = RankPhase::Initialized;
                    out.events.push(ServerEvent::Initialized { rank });
                }
                self.reply(
                    out,
                    rank,
                    Message::new("response_to_init")
                        .arg("pmi_version", "1")
                        .arg("pmi_subversion", "1")
                        .arg("rc", "0"),
                );
            }
            _ if !initialized && msg.name() != "abort" => {
                out.events.push(ServerEvent::ProtocolError {
                    rank,
                    error: format!("cmd={} sent before cmd=init", msg.name()),
                });
            }
            "get_maxes" => self.reply(
                out,
                rank,
                Message::new("maxes")
                    .arg("rc", "0")
                    .arg("kvsname_max", KVSNAME_MAX.to_string())
                    .arg("keylen_max", KEYLEN_MAX.to_string())
                    .arg("vallen_max", VALLEN_MAX.to_string()),
            ),
            "get_appnum" => self.reply(
                out,
                rank,
                Message::new("appnum").arg("rc", "0").arg(
                    "appnum",
                    self.appnums
                        .get(rank as usize)
                        .copied()
                        .unwrap_or(self.appnum)
                        .to_string(),
                ),
            ),
            "get_my_kvsname" => self.reply(
                out,
                rank,
                Message::new("my_kvsname")
                    .arg("rc", "0")
                    .arg("kvsname", self.kvsname.clone()),
            ),
            "get_universe_size" => self.reply(
                out,
                rank,
                Message::new("universe_size")
                    .arg("rc", "0")
                    .arg("size", self.universe_size.to_string()),
            ),
            "put" => self.handle_put(rank, msg, out),
            "get" => self.handle_get(rank, msg, out),
            "barrier_in" => self.handle_barrier(rank, out),
            "finalize" => {
                if phase != RankPhase::Finalized {
                    self.ranks[rank as usize].phase = RankPhase::Finalized;
                    out.events.push(ServerEvent::Finalized { rank });
                }
                self.reply(out, rank, Message::new("finalize_ack").arg("rc", "0"));
            }
            "abort" => {
                self.ranks[rank as usize].phase = RankPhase::Aborted;
                // MPICH's client sends the code; Flux's adds error_msg. A bare
                // `cmd=abort` (the oldest form) means failure.
                let exit_code = msg.get_int::<i32>("exitcode").unwrap_or(1);
                let message = msg
                    .get("error_msg")
                    .or_else(|| msg.get("message"))
                    .or_else(|| msg.get("msg"))
                    .filter(|m| !m.is_empty())
                    .map(str::to_string);
                out.events.push(ServerEvent::Abort {
                    rank,
                    exit_code,
                    message,
                });
            }
            "publish_name" | "unpublish_name" | "lookup_name" => {
                let op = match msg.name() {
                    "publish_name" => NameOp::Publish,
                    "unpublish_name" => NameOp::Unpublish,
                    _ => NameOp::Lookup,
                };
                match msg.get("service").filter(|s| !s.is_empty()) {
                    Some(service) => out.events.push(ServerEvent::Name {
                        rank,
                        op,
                        service: service.to_string(),
                        port: msg.get("port").unwrap_or("").to_string(),
                    }),
                    None => {
                        let reply = msg.name().replace("_name", "_result");
                        self.reply(
                            out,
                            rank,
                            Message::new(reply)
                                .arg("rc", "-1")
                                .arg("msg", "no service name given"),
                        );
                    }
                }
            }
            other => out.events.push(ServerEvent::ProtocolError {
                rank,
                error: format!("unknown command cmd={other}"),
            }),
        }
    }

    fn handle_put(&mut self, rank: u32, msg: &Message, out: &mut Output) {
        let result = match (msg.get("kvsname"), msg.get("key"), msg.get("value")) {
            (Some(kvs), _, _) if kvs != self.kvsname => Err(format!("unknown_kvsname_{kvs}")),
            (Some(_), Some(key), Some(value)) => {
                if key.is_empty() || key.len() >= KEYLEN_MAX {
                    Err("key_too_long_or_empty".to_string())
                } else if value.len() >= VALLEN_MAX {
                    Err("value_too_long".to_string())
                } else if self.reserved.contains(key) {
                    Err(format!("key_{key}_is_reserved_by_the_launcher"))
                } else {
                    // Re-putting a key overwrites it, as in Hydra's PMI-1.
                    self.kvs.insert(key.to_string(), value.to_string());
                    Ok(())
                }
            }
            _ => Err("put_needs_kvsname_key_and_value".to_string()),
        };
        let reply = match result {
            Ok(()) => Message::new("put_result")
                .arg("rc", "0")
                .arg("msg", "success"),
            Err(e) => Message::new("put_result").arg("rc", "-1").arg("msg", e),
        };
        self.reply(out, rank, reply);
    }

    fn handle_get(&mut self, rank: u32, msg: &Message, out: &mut Output) {
        let reply = match (msg.get("kvsname"), msg.get("key")) {
            (Some(kvs), _) if kvs != self.kvsname => Message::new("get_result")
                .arg("rc", "-1")
                .arg("msg", format!("unknown_kvsname_{kvs}")),
            (Some(_), Some(key)) => match self.kvs.get(key) {
                Some(value) => Message::new("get_result")
                    .arg("rc", "0")
                    .arg("value", value.clone()),
                None => Message::new("get_result")
                    .arg("rc", "-1")
                    .arg("msg", format!("key_{key}_not_found")),
            },
            _ => Message::new("get_result")
                .arg("rc", "-1")
                .arg("msg", "get_needs_kvsname_and_key"),
        };
        self.reply(out, rank, reply);
    }

    fn handle_barrier(&mut self, rank: u32, out: &mut Output) {
        let state = &mut self.ranks[rank as usize];
        if state.in_barrier {
            out.events.push(ServerEvent::ProtocolError {
                rank,
                error: "cmd=barrier_in while already in the barrier".into(),
            });
            return;
        }
        state.in_barrier = true;
        self.in_barrier += 1;
        if self.in_barrier < self.size {
            return;
        }
        self.in_barrier = 0;
        for r in 0..self.size {
            self.ranks[r as usize].in_barrier = false;
            self.reply(out, r, Message::new("barrier_out").arg("rc", "0"));
        }
    }

    fn reply(&self, out: &mut Output, rank: u32, msg: Message) {
        // Every value the server sends was validated on the way in or is
        // generated here, so encoding cannot fail; fall back to a generic
        // error rather than panicking if that ever changes.
        let line = msg
            .encode()
            .unwrap_or_else(|_| format!("cmd={} rc=-1 msg=internal_encoding_error\n", msg.name()));
        out.replies.push((rank, line));
    }
}

/// Per-rank application numbers as runs `APPNUM*COUNT` joined by `,`
/// (`0*1,1*3`: rank 0 runs application 0, ranks 1 to 3 application 1), short
/// enough for a PMI value whatever the job size; [`decode_appnums`] reads it.
pub fn encode_appnums(appnums: &[u32]) -> String {
    let mut runs: Vec<(u32, usize)> = Vec::new();
    for &a in appnums {
        match runs.last_mut() {
            Some((b, n)) if *b == a => *n += 1,
            _ => runs.push((a, 1)),
        }
    }
    runs.iter()
        .map(|(a, n)| format!("{a}*{n}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The per-rank application numbers [`encode_appnums`] wrote, or `None` when
/// `value` is malformed or does not describe exactly `size` ranks.
pub fn decode_appnums(value: &str, size: u32) -> Option<Vec<u32>> {
    let mut all = Vec::new();
    for run in value.split(',').filter(|r| !r.is_empty()) {
        let (a, n) = run.split_once('*')?;
        let (a, n): (u32, usize) = (a.trim().parse().ok()?, n.trim().parse().ok()?);
        if all.len() + n > size as usize {
            return None;
        }
        all.extend(std::iter::repeat_n(a, n));
    }
    (all.len() == size as usize).then_some(all)
}

/// The `PMI_process_mapping` value for `size` ranks all on one node.
pub fn single_node_mapping(size: u32) -> String {
    format!("(vector,(0,1,{size}))")
}

/// The `PMI_process_mapping` value for ranks placed on nodes `nodes[rank]`,
/// in Hydra's `(vector,(node,nnodes,ppn),...)` form, the inverse of
/// [`crate::parse_process_mapping`]: runs of consecutive ranks on one node
/// become `(node,1,count)` and successive runs of equal length on
/// consecutive nodes merge, so block placement of 2 ranks on each of 2
/// nodes is `(vector,(0,2,2))` and round-robin is `(vector,(0,2,1),(0,2,1))`
/// (MPICH merges the latter only in its own, longer-lived encoder; both
/// forms parse the same). An empty job maps to `""` ("unknown").
pub fn nodes_mapping(nodes: &[u32]) -> String {
    // (node, count) runs.
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &n in nodes {
        match runs.last_mut() {
            Some((node, count)) if *node == n => *count += 1,
            _ => runs.push((n, 1)),
        }
    }
    // (start, nnodes, ppn) blocks.
    let mut blocks: Vec<(u32, u32, u32)> = Vec::new();
    for (node, count) in runs {
        match blocks.last_mut() {
            Some((start, nnodes, ppn))
                if *ppn == count && start.checked_add(*nnodes) == Some(node) =>
            {
                *nnodes += 1
            }
            _ => blocks.push((node, 1, count)),
        }
    }
    if blocks.is_empty() {
        return String::new();
    }
    let mut out = String::from("(vector");
    for (start, nnodes, ppn) in blocks {
        out.push_str(&format!(",({start},{nnodes},{ppn})"));
    }
    out.push(')');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replies_to(out: &Output, rank: u32) -> Vec<Message> {
        out.replies
            .iter()
            .filter(|(r, _)| *r == rank)
            .map(|(_, l)| {
                assert!(l.ends_with('\n'), "{l:?}");
                Message::parse(l).unwrap()
            })
            .collect()
    }

    fn one_reply(out: Output, rank: u32) -> Message {
        assert_eq!(out.replies.len(), 1, "{out:?}");
        let msgs = replies_to(&out, rank);
        assert_eq!(msgs.len(), 1, "{out:?}");
        msgs.into_iter().next().unwrap()
    }

    fn init_all(s: &mut PmiServer) {
        for r in 0..s.size() {
            let out = s.handle_line(r, "cmd=init pmi_version=1 pmi_subversion=1\n");
            assert_eq!(out.events, vec![ServerEvent::Initialized { rank: r }]);
            let m = one_reply(out, r);
            assert_eq!(m.name(), "response_to_init");
            assert_eq!(m.rc(), 0);
        }
    }

    #[test]
    fn appnum_per_rank() {
        let mut s = PmiServer::new("kvs_42_0", 3);
        s.set_appnums(vec![0, 1, 1]);
        init_all(&mut s);
        for (r, want) in [(0, "0"), (1, "1"), (2, "1")] {
            let m = one_reply(s.handle_line(r, "cmd=get_appnum"), r);
            assert_eq!(m.get("appnum"), Some(want));
        }
    }

    #[test]
    fn full_job_lifecycle() {
        let n = 4;
        let mut s = PmiServer::new("kvs_42_0", n);
        s.set_process_mapping(single_node_mapping(n));
        init_all(&mut s);
        for r in 0..n {
            assert_eq!(s.phase(r), RankPhase::Initialized);
            let m = one_reply(s.handle_line(r, "cmd=get_maxes"), r);
            assert_eq!(m.name(), "maxes");
            assert_eq!(m.get_int::<usize>("vallen_max"), Some(VALLEN_MAX));
            let m = one_reply(s.handle_line(r, "cmd=get_appnum"), r);
            assert_eq!((m.name(), m.get("appnum")), ("appnum", Some("0")));
            let m = one_reply(s.handle_line(r, "cmd=get_my_kvsname"), r);
            assert_eq!(m.get("kvsname"), Some("kvs_42_0"));
            let m = one_reply(s.handle_line(r, "cmd=get_universe_size"), r);
            assert_eq!(m.get("size"), Some("4"));
            let put = format!("cmd=put kvsname=kvs_42_0 key=addr-{r} value=v{r}==");
            let m = one_reply(s.handle_line(r, &put), r);
            assert_eq!((m.name(), m.rc()), ("put_result", 0));
        }
        // Nobody is released until the last rank enters.
        for r in 0..n - 1 {
            let out = s.handle_line(r, "cmd=barrier_in");
            assert!(out.replies.is_empty() && out.events.is_empty());
        }
        let out = s.handle_line(n - 1, "cmd=barrier_in");
        for r in 0..n {
            let msgs = replies_to(&out, r);
            assert_eq!(msgs.len(), 1);
            assert_eq!(msgs[0].name(), "barrier_out");
        }
        for r in 0..n {
            let peer = (r + 1) % n;
            let m = one_reply(
                s.handle_line(r, &format!("cmd=get kvsname=kvs_42_0 key=addr-{peer}")),
                r,
            );
            assert_eq!(m.name(), "get_result");
            assert_eq!(m.rc(), 0);
            assert_eq!(m.get("value"), Some(format!("v{peer}==").as_str()));
            let m = one_reply(
                s.handle_line(r, "cmd=get kvsname=kvs_42_0 key=PMI_process_mapping"),
                r,
            );
            assert_eq!(m.get("value"), Some("(vector,(0,1,4))"));
        }
        // The barrier can be used again.
        for r in 0..n - 1 {
            assert!(s.handle_line(r, "cmd=barrier_in").replies.is_empty());
        }
        assert_eq!(
            s.handle_line(n - 1, "cmd=barrier_in").replies.len(),
            n as usize
        );
        for r in 0..n {
            let out = s.handle_line(r, "cmd=finalize");
            assert_eq!(out.events, vec![ServerEvent::Finalized { rank: r }]);
            assert_eq!(one_reply(out, r).name(), "finalize_ack");
            assert_eq!(s.phase(r), RankPhase::Finalized);
        }
    }

    #[test]
    fn get_of_missing_key_fails_with_rc() {
        let mut s = PmiServer::new("kvs_1_0", 1);
        init_all(&mut s);
        let m = one_reply(s.handle_line(0, "cmd=get kvsname=kvs_1_0 key=nope"), 0);
        assert_eq!(m.name(), "get_result");
        assert_ne!(m.rc(), 0);
        assert_eq!(m.get("msg"), Some("key_nope_not_found"));
        let m = one_reply(s.handle_line(0, "cmd=get kvsname=other key=x"), 0);
        assert_ne!(m.rc(), 0);
    }

    #[test]
    fn put_validation() {
        let mut s = PmiServer::new("kvs_1_0", 1);
        init_all(&mut s);
        let long = "x".repeat(VALLEN_MAX);
        let m = one_reply(
            s.handle_line(0, &format!("cmd=put kvsname=kvs_1_0 key=k value={long}")),
            0,
        );
        assert_ne!(m.rc(), 0);
        let m = one_reply(s.handle_line(0, "cmd=put kvsname=wrong key=k value=v"), 0);
        assert_ne!(m.rc(), 0);
        let m = one_reply(s.handle_line(0, "cmd=put kvsname=kvs_1_0 key=k"), 0);
        assert_ne!(m.rc(), 0);
        let m = one_reply(s.handle_line(0, "cmd=put kvsname=kvs_1_0 key=k value="), 0);
        assert_eq!(m.rc(), 0);
        assert_eq!(s.kvs_get("k"), Some(""));
        let m = one_reply(s.handle_line(0, "cmd=put kvsname=kvs_1_0 key=k value=2"), 0);
        assert_eq!(m.rc(), 0);
        assert_eq!(s.kvs_get("k"), Some("2"));
    }

    #[test]
    fn abort_is_reported_with_code_and_message() {
        let mut s = PmiServer::new("kvs_1_0", 3);
        init_all(&mut s);
        let out = s.handle_line(1, "cmd=abort exitcode=7 error_msg=bad input file");
        assert!(out.replies.is_empty());
        assert_eq!(
            out.events,
            vec![ServerEvent::Abort {
                rank: 1,
                exit_code: 7,
                message: Some("bad input file".into())
            }]
        );
        assert_eq!(s.phase(1), RankPhase::Aborted);
        let out = s.handle_line(2, "cmd=abort");
        assert_eq!(
            out.events,
            vec![ServerEvent::Abort {
                rank: 2,
                exit_code: 1,
                message: None
            }]
        );
    }

    #[test]
    fn abort_before_init_is_honoured() {
        let mut s = PmiServer::new("kvs_1_0", 1);
        let out = s.handle_line(0, "cmd=abort exitcode=4");
        assert!(matches!(
            out.events[..],
            [ServerEvent::Abort { exit_code: 4, .. }]
        ));
    }

    #[test]
    fn commands_before_init_are_protocol_errors() {
        let mut s = PmiServer::new("kvs_1_0", 1);
        let out = s.handle_line(0, "cmd=get_maxes");
        assert!(out.replies.is_empty());
        assert!(matches!(
            out.events[..],
            [ServerEvent::ProtocolError { rank: 0, .. }]
        ));
    }

    #[test]
    fn wrong_version_is_refused() {
        let mut s = PmiServer::new("kvs_1_0", 1);
        let out = s.handle_line(0, "cmd=init pmi_version=2 pmi_subversion=0");
        assert!(out.events.is_empty());
        assert_ne!(one_reply(out, 0).rc(), 0);
        assert_eq!(s.phase(0), RankPhase::NotInitialized);
    }

    #[test]
    fn malformed_and_unknown_lines_are_protocol_errors() {
        let mut s = PmiServer::new("kvs_1_0", 2);
        init_all(&mut s);
        for line in ["garbage", "", "cmd=frobnicate", "key=value"] {
            let out = s.handle_line(0, line);
            assert!(out.replies.is_empty(), "{line:?}");
            assert!(
                matches!(out.events[..], [ServerEvent::ProtocolError { rank: 0, .. }]),
                "{line:?}: {out:?}"
            );
        }
        let out = s.handle_line(9, "cmd=barrier_in");
        assert!(matches!(
            out.events[..],
            [ServerEvent::ProtocolError { rank: 9, .. }]
        ));
    }

    #[test]
    fn double_barrier_entry_is_an_error() {
        let mut s = PmiServer::new("kvs_1_0", 2);
        init_all(&mut s);
        assert!(s.handle_line(0, "cmd=barrier_in").events.is_empty());
        let out = s.handle_line(0, "cmd=barrier_in");
        assert!(matches!(
            out.events[..],
            [ServerEvent::ProtocolError { .. }]
        ));
        assert_eq!(s.handle_line(1, "cmd=barrier_in").replies.len(), 2);
    }

    #[test]
    fn spawn_blocks_become_one_event() {
        let mut s = PmiServer::new("kvs_1_0", 1);
        init_all(&mut s);
        for line in [
            "mcmd=spawn",
            "nprocs=2",
            "execname=a.out",
            "totspawns=2",
            "spawnssofar=1",
            "argcnt=1",
            "arg1=x y",
            "preput_num=1",
            "preput_key_0=PARENT_ROOT_PORT_NAME",
            "preput_val_0=p",
            "info_num=1",
            "info_key_0=wdir",
            "info_val_0=/tmp",
            "endcmd",
        ] {
            let out = s.handle_line(0, line);
            assert_eq!(out, Output::default(), "{line:?}");
        }
        for line in [
            "mcmd=spawn",
            "nprocs=1",
            "execname=b",
            "totspawns=2",
            "spawnssofar=2",
            "argcnt=0",
        ] {
            assert_eq!(s.handle_line(0, line), Output::default());
        }
        let out = s.handle_line(0, "endcmd");
        assert!(out.replies.is_empty());
        let ServerEvent::Spawn {
            rank,
            commands,
            preput,
        } = &out.events[0]
        else {
            panic!("{out:?}")
        };
        assert_eq!(*rank, 0);
        assert_eq!(commands.len(), 2);
        assert_eq!(commands[0].args, vec!["x y".to_string()]);
        assert_eq!(
            commands[0].info,
            vec![("wdir".to_string(), "/tmp".to_string())]
        );
        assert_eq!(commands[1].nprocs, 1);
        assert_eq!(
            preput,
            &vec![("PARENT_ROOT_PORT_NAME".to_string(), "p".to_string())]
        );
        let m = one_reply(s.spawn_result(0, -1, "no", &[]), 0);
        assert_eq!(m.name(), "spawn_result");
        assert_ne!(m.rc(), 0);
        // Back to normal afterwards.
        assert_eq!(
            one_reply(s.handle_line(0, "cmd=get_appnum"), 0).name(),
            "appnum"
        );
    }

    #[test]
    fn name_service_requests_become_events() {
        let mut s = PmiServer::new("kvs_1_0", 1);
        init_all(&mut s);
        let out = s.handle_line(
            0,
            "cmd=publish_name service=x port=oxmpi-port://ab@1.2.3.4:5",
        );
        assert_eq!(
            out.events,
            vec![ServerEvent::Name {
                rank: 0,
                op: NameOp::Publish,
                service: "x".into(),
                port: "oxmpi-port://ab@1.2.3.4:5".into()
            }]
        );
        let m = one_reply(s.name_result(0, NameOp::Lookup, Ok(Some("p".into()))), 0);
        assert_eq!(
            (m.name(), m.rc(), m.get("port")),
            ("lookup_result", 0, Some("p"))
        );
        let m = one_reply(s.handle_line(0, "cmd=lookup_name"), 0);
        assert_eq!(m.name(), "lookup_result");
        assert_ne!(m.rc(), 0);
    }

    #[test]
    fn appnums_are_published_and_round_trip() {
        assert_eq!(encode_appnums(&[0, 1, 1, 1]), "0*1,1*3");
        assert_eq!(encode_appnums(&[0, 0, 2, 0]), "0*2,2*1,0*1");
        for v in [vec![], vec![0], vec![0, 1, 1, 1], vec![3, 3, 0, 7, 7]] {
            assert_eq!(decode_appnums(&encode_appnums(&v), v.len() as u32), Some(v));
        }
        assert_eq!(decode_appnums("0*2", 3), None);
        assert_eq!(decode_appnums("0*4", 3), None);
        assert_eq!(decode_appnums("0*x", 1), None);
        assert_eq!(decode_appnums("0", 1), None);
        let mut s = PmiServer::new("kvs_1_0", 4);
        s.handle_line(0, "cmd=init pmi_version=1 pmi_subversion=1");
        let get = |s: &mut PmiServer| {
            one_reply(
                s.handle_line(0, "cmd=get kvsname=kvs_1_0 key=oxmpi-appnums"),
                0,
            )
            .get("value")
            .map(str::to_string)
        };
        assert_eq!(get(&mut s).as_deref(), Some("0*4"));
        s.set_appnums(vec![0, 1, 1, 1]);
        assert_eq!(get(&mut s).as_deref(), Some("0*1,1*3"));
        // Ranks cannot overwrite it.
        let m = one_reply(
            s.handle_line(0, "cmd=put kvsname=kvs_1_0 key=oxmpi-appnums value=0*4"),
            0,
        );
        assert_ne!(m.rc(), 0);
        assert_eq!(get(&mut s).as_deref(), Some("0*1,1*3"));
    }

    #[test]
    fn nodes_mapping_round_trips() {
        use crate::parse_process_mapping;
        assert_eq!(nodes_mapping(&[0, 0, 0, 0]), "(vector,(0,1,4))");
        assert_eq!(nodes_mapping(&[0, 0, 1, 1]), "(vector,(0,2,2))");
        assert_eq!(nodes_mapping(&[0, 1, 0, 1]), "(vector,(0,2,1),(0,2,1))");
        assert_eq!(nodes_mapping(&[0, 0, 0, 1]), "(vector,(0,1,3),(1,1,1))");
        assert_eq!(nodes_mapping(&[]), "");
        for nodes in [
            vec![0, 0, 1, 1],
            vec![0, 1, 2, 0, 1, 2, 0],
            vec![0, 0, 0, 1, 1, 2, 2, 3],
            vec![1, 1, 0, 0],
            vec![0, 2, 2, 1],
        ] {
            assert_eq!(
                parse_process_mapping(&nodes_mapping(&nodes)),
                Some(nodes.clone())
            );
        }
    }

    #[test]
    fn published_keys_are_visible_and_protected() {
        let mut s = PmiServer::new("kvs_1_0", 2);
        s.publish("oxmpi-job-secret", "abc");
        s.set_process_mapping(single_node_mapping(2));
        init_all(&mut s);
        let m = one_reply(
            s.handle_line(1, "cmd=put kvsname=kvs_1_0 key=oxmpi-job-secret value=x"),
            1,
        );
        assert_ne!(m.rc(), 0);
        let m = one_reply(
            s.handle_line(0, "cmd=put kvsname=kvs_1_0 key=PMI_process_mapping value=x"),
            0,
        );
        assert_ne!(m.rc(), 0);
        let m = one_reply(
            s.handle_line(0, "cmd=get kvsname=kvs_1_0 key=oxmpi-job-secret"),
            0,
        );
        assert_eq!(m.get("value"), Some("abc"));
    }

    #[test]
    fn initack_handshake() {
        let mut s = PmiServer::new("kvs_1_0", 3);
        let out = s.handle_line(2, "cmd=initack pmiid=2");
        let msgs = replies_to(&out, 2);
        assert_eq!(msgs.len(), 4);
        assert_eq!(msgs[0].name(), "initack");
        assert_eq!(msgs[1].get("size"), Some("3"));
        assert_eq!(msgs[2].get("rank"), Some("2"));
        assert_eq!(msgs[3].get("debug"), Some("0"));
    }
}
