//! Booting one rank: the host identity, the PMI exchange of addresses and the job
//! secret, the shared-memory segment of the host, TCP for ranks on other hosts,
//! and the engine that results (called once, under the lifecycle lock, by the
//! parent module's `boot_once`).

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oxmpi_pmi::client::PmiClient;

use super::{pmi_err, Engine, ThreadLevel};
use crate::comm::{Comm, SELF_CONTEXT, WORLD_CONTEXT};
use crate::engine::{Path, State};
use crate::error::{ErrorClass, MpiError, Result};
use crate::transport::cma;
use crate::transport::doorbell::Doorbell;
use crate::transport::shm::ShmSegment;

/// How old a named segment must be before it can be taken for a leftover: a
/// live one has its name only while its job starts (two PMI barriers), far
/// shorter than this, even where another pid namespace shares /dev/shm.
const STALE_SEGMENT_AGE: Duration = Duration::from_secs(600);

/// Removes the segments of `dir` (/dev/shm) whose creator died before
/// unlinking them: named `oxmpi-...-p<PID>` (as `boot` names them), `PID` no
/// longer a process of this host, and older than [`STALE_SEGMENT_AGE`].
/// Best effort: other users' entries cannot be removed (/dev/shm is sticky)
/// and are left alone.
fn sweep_stale_segments(dir: &std::path::Path, now: std::time::SystemTime) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with("oxmpi-") {
            continue;
        }
        let Some(pid) = name
            .rsplit_once("-p")
            .and_then(|(_, p)| p.parse::<u32>().ok())
            .filter(|&p| p > 0)
        else {
            continue;
        };
        let old = e.metadata().and_then(|m| m.modified()).is_ok_and(|t| {
            now.duration_since(t)
                .is_ok_and(|age| age >= STALE_SEGMENT_AGE)
        });
        if old && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Unlinks the named segment when dropped (`None`: nothing to unlink).
struct UnlinkOnDrop<'a>(Option<&'a str>);

impl Drop for UnlinkOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(name) = self.0 {
            ShmSegment::unlink(name);
        }
    }
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn hostname() -> String {
    crate::transport::os::hostname().unwrap_or_else(|| "localhost".into())
}

/// What makes two ranks "on the same host": they can share memory. The hostname
/// alone is not enough (containers), so the kernel's boot id goes with it.
/// `OXMPI_HOST_ID` overrides it, for tests that fake several hosts.
fn host_identity() -> String {
    if let Ok(id) = std::env::var("OXMPI_HOST_ID") {
        return id;
    }
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    format!("{}/{}", hostname(), boot.trim())
}

/// The address this rank's TCP listener binds to and publishes: the one it
/// reaches the process manager from (remote ranks, PMI over TCP), else
/// `OXMPI_TCP_ADDR`, else this host's name, else loopback.
pub(crate) fn tcp_bind_ip(single_host: bool) -> std::net::IpAddr {
    use std::net::{IpAddr, Ipv4Addr, ToSocketAddrs, UdpSocket};
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    if let Some(ip) = std::env::var("OXMPI_TCP_ADDR")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return ip;
    }
    if single_host {
        return loopback;
    }
    if let Ok(pmi) = std::env::var("PMI_PORT") {
        // Connecting a UDP socket sends nothing; it only asks the kernel which
        // local address routes toward the process manager.
        if let Some(addr) = pmi.to_socket_addrs().ok().and_then(|mut a| a.next()) {
            let any: std::net::SocketAddr = if addr.is_ipv4() {
                "0.0.0.0:0".parse().unwrap()
            } else {
                "[::]:0".parse().unwrap()
            };
            if let Ok(u) = UdpSocket::bind(any) {
                if u.connect(addr).is_ok() {
                    if let Ok(local) = u.local_addr() {
                        if !local.ip().is_unspecified() {
                            return local.ip();
                        }
                    }
                }
            }
        }
    }
    (hostname().as_str(), 0)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.find(|x| x.is_ipv4() && !x.ip().is_loopback()))
        .map(|a| a.ip())
        .unwrap_or(loopback)
}

pub(crate) fn random_hex(bytes: usize) -> Result<String> {
    use std::io::Read;
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| {
            MpiError::new(
                ErrorClass::Other,
                format!("MPI_Init: reading /dev/urandom for the job secret: {e}"),
            )
        })?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

pub(super) fn boot(
    pmi: &mut Option<PmiClient>,
    rank: u32,
    size: u32,
    required: ThreadLevel,
) -> Result<Engine> {
    // Every OXMPI_<OP>_ALGORITHM names a collective and one of its algorithms.
    crate::coll::select::check_environment()
        .map_err(|e| MpiError::new(e.class, format!("MPI_Init: {}", e.message)))?;
    cma::allow_peer_reads();
    // OXMPI_TRANSPORT=tcp: every peer over TCP, even on this host (tests).
    let force_tcp = std::env::var("OXMPI_TRANSPORT").is_ok_and(|v| v == "tcp");
    let mut my_host = host_identity();
    let pid = std::process::id() as i32;
    let mut pids: Vec<i32> = vec![pid; size as usize];
    // A lone rank has no hierarchy below the job: spare it hwloc's discovery.
    let my_place = if size > 1 {
        crate::hwtopo::my_package_numa()
    } else {
        (None, None)
    };
    let mut package_numa_of = vec![my_place; size as usize];
    let mut shm: Option<&'static ShmSegment> = None;
    let mut tcp: Option<crate::transport::tcp::TcpTransport> = None;

    if let Some(p) = pmi.as_mut() {
        // The process manager's node map tells hosts apart even where host name
        // and boot id agree (network namespaces, containers on one kernel).
        if let Some(node) = p
            .process_mapping()
            .ok()
            .flatten()
            .and_then(|m| oxmpi_pmi::parse_process_mapping(&m))
            // A mapping shorter than the job repeats (Hydra sends one block,
            // e.g. `(vector,(0,1,1))`, for any number of ranks on one node).
            .and_then(|nodes| (!nodes.is_empty()).then(|| nodes[rank as usize % nodes.len()]))
        {
            my_host = format!("node{node}/{my_host}");
        }
    }
    let mut hosts: Vec<String> = vec![my_host.clone(); size as usize];

    if let Some(p) = pmi.as_mut() {
        // The job secret that TCP connections must prove: the launcher's, or,
        // under a process manager that has none (Hydra), one rank 0 makes.
        let mut secret = p
            .job_secret()
            .map_err(|e| pmi_err("reading the job secret", e))?;
        if secret.is_none() && rank == 0 {
            let s = random_hex(32)?;
            p.put("oxmpi-secret-r0", &s)
                .map_err(|e| pmi_err("publishing the job secret", e))?;
            secret = Some(s);
        }
        // `HOSTHEX:PID[:PACKAGE:NUMA]`; a value without the place still parses.
        let place = crate::hwtopo::encode(my_place.0, my_place.1);
        p.put(
            &format!("oxmpi-ep-{rank}"),
            &format!("{}:{}{place}", hex(&my_host), pid),
        )
        .map_err(|e| pmi_err("publishing this rank's address", e))?;
        p.barrier().map_err(|e| pmi_err("PMI barrier", e))?;
        for r in 0..size {
            if r == rank {
                continue;
            }
            let v = p
                .get_of(r, &format!("oxmpi-ep-{r}"))
                .map_err(|e| pmi_err("reading the address of a peer", e))?
                .ok_or_else(|| {
                    pmi_err(
                        "reading the address of a peer",
                        format!("rank {r} published none"),
                    )
                })?;
            let (h, pid) = v.split_once(':').ok_or_else(|| {
                pmi_err(
                    "reading the address of a peer",
                    format!("malformed value {v:?}"),
                )
            })?;
            hosts[r as usize] = h
                .as_bytes()
                .chunks(2)
                .map(|c| {
                    u8::from_str_radix(std::str::from_utf8(c).unwrap_or("3f"), 16).unwrap_or(b'?')
                        as char
                })
                .collect();
            let (pid, place) = pid.split_once(':').unwrap_or((pid, ""));
            pids[r as usize] = pid.parse().unwrap_or(0);
            package_numa_of[r as usize] = crate::hwtopo::decode(place);
        }
        let local: Vec<u32> = (0..size)
            .filter(|&r| hosts[r as usize] == my_host)
            .collect();
        let my_local = local.iter().position(|&r| r == rank).unwrap();
        // The creator's pid ends the name: a segment left by a creator that
        // died before unlinking it is recognised and removed by the next
        // job on this host (see `sweep_stale_segments`), whatever launcher
        // (ours also sweeps its jobs' prefix when they end; Hydra, Open MPI's
        // `mpirun` and Slurm know nothing of our segments).
        let name = format!(
            "{}{}-p{}",
            oxmpi_pmi::shm_segment_prefix(p.kvs_name()),
            local[0],
            pids[local[0] as usize]
        );
        let use_shm = local.len() > 1 && !force_tcp;
        let single_host = local.len() == size as usize;
        if size > 1 && (force_tcp || !single_host) {
            if secret.is_none() {
                secret = p
                    .get_of(0, "oxmpi-secret-r0")
                    .map_err(|e| pmi_err("reading the job secret", e))?;
            }
            let secret =
                secret.ok_or_else(|| pmi_err("setting up TCP", "no job secret was published"))?;
            let t = crate::transport::tcp::TcpTransport::new(
                rank,
                size,
                secret.as_bytes(),
                tcp_bind_ip(single_host),
            )?;
            p.put(&format!("oxmpi-tcp-{rank}"), &t.endpoint())
                .map_err(|e| pmi_err("publishing the TCP endpoint", e))?;
            tcp = Some(t);
        }
        // Two barriers on every rank, whatever its host holds, so all agree.
        if use_shm && my_local == 0 {
            sweep_stale_segments(
                std::path::Path::new("/dev/shm"),
                std::time::SystemTime::now(),
            );
            shm = Some(Box::leak(Box::new(ShmSegment::create(
                &name,
                local.len(),
                0,
            )?)));
        }
        // The creator unlinks the name on every way out from here: after the
        // last barrier, and when a barrier fails (the launcher died, a peer
        // could not start), which used to leave the segment in /dev/shm. A
        // rank of the host whose start fails unlinks it too (the job cannot
        // start, and a launcher that does not sweep may kill the creator
        // before it gets to it).
        let mut unlink = UnlinkOnDrop(use_shm.then_some(name.as_str()));
        p.barrier().map_err(|e| pmi_err("PMI barrier", e))?;
        if let Some(t) = tcp.as_mut() {
            for r in (0..size).filter(|&r| r != rank && (force_tcp || hosts[r as usize] != my_host))
            {
                let ep = p
                    .get_of(r, &format!("oxmpi-tcp-{r}"))
                    .map_err(|e| pmi_err("reading a peer's TCP endpoint", e))?
                    .ok_or_else(|| {
                        pmi_err(
                            "reading a peer's TCP endpoint",
                            format!("rank {r} published none"),
                        )
                    })?;
                t.set_endpoint(r, &ep)?;
            }
        }
        if use_shm && my_local != 0 {
            shm = Some(Box::leak(Box::new(ShmSegment::open(
                &name,
                local.len(),
                my_local,
            )?)));
        }
        p.barrier().map_err(|e| pmi_err("PMI barrier", e))?;
        if my_local != 0 {
            unlink.0 = None;
        }
        drop(unlink);
    }

    let local: Vec<u32> = (0..size)
        .filter(|&r| hosts[r as usize] == my_host)
        .collect();
    let paths: Vec<(Path, i32)> = (0..size)
        .map(|r| {
            let path = if r == rank {
                Path::SelfLoop
            } else if let (Some(_), Some(l)) = (shm, local.iter().position(|&x| x == r)) {
                Path::Shm { local: l }
            } else if tcp.is_some() {
                Path::Tcp
            } else {
                Path::Unreachable
            };
            (path, pids[r as usize])
        })
        .collect();
    let mut host_index: Vec<&String> = Vec::new();
    let host_of = hosts
        .iter()
        .map(|h| match host_index.iter().position(|x| *x == h) {
            Some(i) => i as u32,
            None => {
                host_index.push(h);
                host_index.len() as u32 - 1
            }
        })
        .collect();

    let bell: &'static Doorbell = match shm {
        Some(s) => s.doorbell(s.my_local()),
        None => Box::leak(Box::new(Doorbell::new())),
    };
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let oversubscribed = local.len() > cpus;
    let env_u32 = |k: &str| std::env::var(k).ok().and_then(|v| v.parse().ok());
    // Oversubscribed, a wait polls only a few times before it yields: a
    // spinning rank holds the core that the rank it waits for needs.
    let spin = env_u32("OXMPI_SPIN").unwrap_or(if oversubscribed { 4 } else { 20_000 });
    // Oversubscribed, a few yields first do pay: the rank waited for is
    // usually runnable on this core, and a yield runs it at once where a
    // doorbell sleep costs a futex wait, a wake-up call and often an idle core
    // woken (4 ranks on 2 cores under load 15: allreduce 8-128 B 27-111 us
    // with no yields, 10 with 20, Open MPI 7-12; allgather 22-33 -> 8; 8 ranks
    // on 2 cores with the machine to themselves: barrier 44-46 -> 8-9 us,
    // Open MPI 12-13; see bench/PROFILE.md, over20). Where another program
    // holds the core a yield feeds it a whole slice: the waits' yield gate
    // (`wait.rs`) then sleeps at once for a while.
    let yields = env_u32("OXMPI_YIELDS").unwrap_or(if oversubscribed { 20 } else { 10 });

    let world_group: Arc<[u32]> = (0..size).collect();
    let appnum = pmi.as_ref().map(|p| p.appnum()).unwrap_or(0);
    let universe_size = pmi
        .as_ref()
        .map(|p| p.universe_size())
        .filter(|&u| u > 0)
        .unwrap_or(size as i32);
    let local_of: Vec<Option<u32>> = paths
        .iter()
        .map(|(p, _)| match (p, shm) {
            (Path::Shm { local }, Some(_)) => Some(*local as u32),
            (Path::SelfLoop, Some(s)) => Some(s.my_local() as u32),
            _ => None,
        })
        .collect();
    crate::diag::init(rank, size, required == ThreadLevel::Multiple);
    crate::diag::init_trace(rank);
    Ok(Engine {
        shm_seg: shm,
        local_of,
        oversubscribed,
        idle_tests: std::sync::atomic::AtomicU32::new(0),
        yield_gate: Default::default(),
        shares_cpu: Default::default(),
        has_tcp: AtomicBool::new(tcp.is_some()),
        state: Mutex::new(State::new(rank, paths, shm, tcp, oversubscribed)),
        bell,
        rank,
        size,
        world: Comm::from_parts(WORLD_CONTEXT, rank as i32, world_group, None),
        self_comm: Comm::from_parts(SELF_CONTEXT, 0, Arc::from(vec![rank]), None),
        pmi: Mutex::new(pmi.take()),
        thread_level: std::sync::atomic::AtomicI32::new(required as i32),
        main_thread: std::thread::current().id(),
        host_of,
        package_numa_of,
        processor_name: hostname(),
        appnum,
        universe_size,
        waiters: AtomicUsize::new(0),
        spin,
        yields,
        hang_report: std::env::var("OXMPI_HANG_REPORT")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_secs_f64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_segments_of_dead_creators_are_swept() {
        let dir = std::env::temp_dir().join(format!("oxmpi-stale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A pid that no longer runs: a child that has been reaped.
        let dead = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = dead.id();
        let _ = {
            let mut d = dead;
            d.wait()
        };
        let me = std::process::id();
        let names = [
            format!("oxmpi-kvs_1_0-0-p{dead_pid}"),
            format!("oxmpi-kvs_2_0-0-p{me}"),
            "oxmpi-kvs_3_0-0".to_string(),
            format!("other-p{dead_pid}"),
        ];
        for n in &names {
            std::fs::write(dir.join(n), b"").unwrap();
        }
        let now = std::time::SystemTime::now();
        // Too young: nothing goes.
        sweep_stale_segments(&dir, now);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 4);
        // Old enough: only the dead creator's.
        sweep_stale_segments(&dir, now + STALE_SEGMENT_AGE + Duration::from_secs(1));
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut want = names[1..].to_vec();
        want.sort();
        assert_eq!(left, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
