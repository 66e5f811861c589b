//! Joining two groups of processes that were not started together: ports
//! (MPI_Open_port / MPI_Close_port), MPI_Comm_accept / MPI_Comm_connect,
//! MPI_Comm_join, and MPI_Comm_disconnect.
//!
//! One mechanism serves all of them ([`connect_groups`]): the two groups'
//! roots swap one description of their group each over a *bootstrap channel*
//! (the port's authenticated TCP connection, or the user's socket for join);
//! every process then adds the other group's processes to its peer table as
//! TCP peers of another job (`TcpTransport::add_dynamic_peer`), and both groups
//! agree on a context id free in both, as MPI_Intercomm_create does. The result is an intercommunicator like any
//! other: point-to-point, collectives, merge, dup and split work on it.
//!
//! # Ports and their authentication
//!
//! A port name is `oxmpi-port://SECRET@ADDRESS`: 32 random bytes (hex) and the
//! `ip:port` of a listening socket the root of the accepting group opened. A
//! connecting root must prove it knows the secret (HMAC-SHA256 challenge on
//! fresh nonces from both sides) and the acceptor proves it back, so a forged
//! or guessed port name is refused: the acceptor logs the refusal and keeps
//! waiting, the connector's call fails with `MPI_ERR_PORT`. The key every
//! pair of processes then authenticates its own connection with is derived
//! from the secret and both nonces, so it differs for each connect.
//!
//! # The exchange between the roots
//!
//! Three swaps over the bootstrap channel, each told to the root's group:
//! 1. the groups: `n u32`, then per process `me u32 | len u8 | endpoint [len]`
//!    (its rank in its own transport, its listener);
//! 2. where each process put the other group in its peer table: every process
//!    adds the other group's processes in one step under the engine's lock
//!    (consecutive indices, whatever other joins of the process do at the same
//!    time), and process `i` of one group is then peer `base_j + i` at process
//!    `j` of the other; the connecting group's processes dial, the accepting
//!    group's wait, so no collision rule is needed;
//! 3. the rounds of a context-id agreement (`context::agree_with`: the masks
//!    ANDed over each group, then between the roots), so the id is held and
//!    confirmed like every other agreement's and cannot collide with one that
//!    another thread's join or communicator creation picks meanwhile.
//!
//! Nothing is locked across the call: threads of one process may spawn,
//! connect, accept and join at once on different communicators.
//!
//! # Disconnect
//!
//! MPI_Comm_disconnect waits until everything sent to the other group is on
//! the wire, runs a barrier on the intercommunicator (so the other group's
//! traffic to us arrived too), then says goodbye on each connection and closes
//! it once the peer's goodbye came, so neither side mistakes the close for a
//! death.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::{context, Comm};
use crate::buf::{RecvBuf, SendBuf};
use crate::datatype::{Datatype, Primitive};
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::{Op, PredefinedOp};

mod port;
mod spawn;
pub use port::*;
pub use spawn::*;

type HmacSha256 = Hmac<Sha256>;

/// One command of a spawn (program, arguments, process count, info pairs).
pub use oxmpi_pmi::SpawnCommand;

/// The root's outcome, told to every process of `comm` (collective; the root
/// passes `Some`): its bytes, or its error on every process.
fn share(comm: &Comm, root: i32, outcome: Option<Result<Vec<u8>>>) -> Result<Vec<u8>> {
    let mut info: Vec<u8> = Vec::new();
    match outcome {
        Some(Ok(b)) => {
            info.push(0);
            info.extend_from_slice(&b);
        }
        Some(Err(err)) => {
            info.push(1);
            info.extend_from_slice(&(err.class as i32).to_le_bytes());
            info.extend_from_slice(err.message.as_bytes());
        }
        None => {}
    }
    bcast_bytes(comm, root, &mut info)?;
    if info.first() == Some(&0) {
        info.remove(0);
        return Ok(info);
    }
    let class = info
        .get(1..5)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .unwrap_or(ErrorClass::Other as i32);
    let class = ErrorClass::ALL
        .iter()
        .copied()
        .find(|c| *c as i32 == class)
        .unwrap_or(ErrorClass::Other);
    Err(MpiError::new(
        class,
        String::from_utf8_lossy(info.get(5..).unwrap_or_default()).into_owned(),
    ))
}

/// The bitwise AND of `words` over `comm`, in place (collective).
fn and_over(comm: &Comm, words: &mut [u64]) -> Result<()> {
    let band = Op::predefined(PredefinedOp::Band);
    crate::coll::allreduce::allreduce(None, RecvBuf::slice(words), &band, comm)
}

/// Marks in-progress joins (see [`joining`]).
struct JoinGuard;

impl JoinGuard {
    fn enter() -> JoinGuard {
        JOINS.fetch_add(1, Ordering::SeqCst);
        JoinGuard
    }
}

impl Drop for JoinGuard {
    fn drop(&mut self) {
        JOINS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// MPI_Comm_accept / MPI_Comm_connect / MPI_Comm_join: joins `local`'s group
/// with another group into an intercommunicator. Collective over `local`;
/// `how` matters at `root` only (others pass anything). Several joins may run
/// at once in one process (threads of MPI_THREAD_MULTIPLE, on different
/// communicators): nothing is locked across the call.
pub fn connect_groups(
    call: &'static str,
    local: &Comm,
    root: i32,
    how: Option<Bootstrap<'_>>,
) -> Result<Comm> {
    let e = crate::runtime::engine()?;
    if local.is_inter() {
        return Err(MpiError::arg(
            ErrorClass::Comm,
            call,
            "comm",
            "an intercommunicator; an intracommunicator is required",
        ));
    }
    crate::coll::check_root(call, local, root)?;
    let _join = JoinGuard::enter();
    // Our half of the intercommunicator; every internal collective below runs on it.
    let group = super::create::dup(local)?;
    let is_root = group.rank() == root;

    CONNECTED.store(true, Ordering::Relaxed);
    // Every process's record: its rank in its transport and its listener.
    e.ensure_tcp()?;
    let ep = e.with_state(|st| st.tcp_endpoint().unwrap_or_default());
    if ep.len() > RECORD - 5 {
        return Err(MpiError::new(
            ErrorClass::Intern,
            format!("{call}: listener address {ep:?} too long"),
        ));
    }
    let mut rec = [0u8; RECORD];
    rec[..4].copy_from_slice(&e.rank.to_le_bytes());
    rec[4] = ep.len() as u8;
    rec[5..5 + ep.len()].copy_from_slice(ep.as_bytes());
    let n = group.size() as usize;
    let mut all = vec![0u8; RECORD * n];
    let byte = Datatype::predefined(Primitive::Byte);
    crate::coll::api_move::allgather(
        Some(SendBuf::typed(&rec, RECORD, &byte)?),
        RecvBuf::typed(&mut all, RECORD * n, &byte)?,
        RECORD,
        &group,
    )?;

    // 1. The roots swap descriptions; the result (or the failure) goes to every process.
    let mut chan: Option<Channel> = None;
    let outcome = if is_root {
        let how = how.ok_or_else(|| {
            MpiError::new(
                ErrorClass::Intern,
                format!("{call}: no bootstrap at the root"),
            )
        })?;
        let mut mine = Vec::new();
        mine.extend_from_slice(&(n as u32).to_le_bytes());
        for r in all.chunks_exact(RECORD) {
            mine.extend_from_slice(&r[..5 + r[4] as usize]);
        }
        Some(open_channel(call, how).and_then(|(s, key, side)| {
            let mut c = Channel { s, side };
            let theirs = c.swap(call, &mine)?;
            chan = Some(c);
            let mut out = vec![u8::from(side == Side::Connect)];
            out.extend_from_slice(&(key.len() as u32).to_le_bytes());
            out.extend_from_slice(&key);
            out.extend_from_slice(&theirs);
            Ok(out)
        }))
    } else {
        None
    };
    let info = share(&group, root, outcome)?;
    let malformed = || {
        MpiError::new(
            ErrorClass::Port,
            format!("{call}: malformed group description from the other root"),
        )
    };
    let dial = info.first() == Some(&1);
    let klen =
        u32::from_le_bytes(info.get(1..5).ok_or_else(malformed)?.try_into().unwrap()) as usize;
    let key = info.get(5..5 + klen).ok_or_else(malformed)?.to_vec();
    let theirs = &info[5 + klen..];
    let m = u32::from_le_bytes(theirs.get(..4).ok_or_else(malformed)?.try_into().unwrap()) as usize;
    let mut at = 4;
    let mut remote_procs = Vec::with_capacity(m.min(1 << 20));
    for _ in 0..m {
        let h = theirs.get(at..at + 5).ok_or_else(malformed)?;
        let me = u32::from_le_bytes(h[..4].try_into().unwrap());
        let len = h[4] as usize;
        let ep = std::str::from_utf8(theirs.get(at + 5..at + 5 + len).ok_or_else(malformed)?)
            .map_err(|_| malformed())?
            .to_string();
        ep.parse::<SocketAddr>().map_err(|_| malformed())?;
        at += 5 + len;
        remote_procs.push((me, ep));
    }
    if at != theirs.len() || m == 0 || key.is_empty() {
        return Err(malformed());
    }

    // 2. Each process adds the other group's processes in one step (so they
    // get consecutive indices, whatever other joins of this process do), then
    // the groups swap where their tables put the other group: process j of
    // theirs is `remote[j]` here, and we are `their_base[j] + (our rank)` there.
    let remote: Vec<u32> = e.with_state(|st| {
        remote_procs
            .iter()
            .map(|(me, ep)| st.add_dynamic_peer(ep, *me, u32::MAX, &key, false))
            .collect::<Result<Vec<u32>>>()
    })?;
    debug_assert!(remote.windows(2).all(|w| w[1] == w[0] + 1));
    let close_all =
        |remote: &[u32]| e.with_state(|st| remote.iter().for_each(|&r| st.close_peer(r)));
    let agreed = (|| {
        let mut bases = vec![0u8; 4 * n];
        let mine = remote[0].to_le_bytes();
        let u32t = Datatype::predefined(Primitive::Uint32);
        crate::coll::api_move::allgather(
            Some(SendBuf::typed(&mine, 1, &u32t)?),
            RecvBuf::typed(&mut bases, n, &u32t)?,
            1,
            &group,
        )?;
        let outcome = is_root.then(|| {
            chan.as_mut()
                .ok_or_else(|| MpiError::intern(call, "no bootstrap channel at the root"))
                .and_then(|c| c.swap(call, &bases))
        });
        let their_bases = share(&group, root, outcome)?;
        if their_bases.len() != 4 * m {
            return Err(malformed());
        }
        let i = group.rank() as u32;
        e.with_state(|st| {
            for (&r, b) in remote.iter().zip(their_bases.chunks_exact(4)) {
                st.set_dynamic_index(r, u32::from_le_bytes(b.try_into().unwrap()) + i, dial);
            }
        });
        // 3. A context id free in both groups, held and confirmed like every
        // other agreement's (another thread's join or communicator creation
        // may be picking one at the same time): each round's AND over our
        // group, swapped between the roots, and told to the group.
        let seed = key.iter().take(4).fold(0u32, |a, &b| a << 8 | b as u32);
        context::agree_with(call, true, (seed, 0), |words| {
            and_over(&group, words)?;
            let mine: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let outcome = is_root.then(|| {
                chan.as_mut()
                    .ok_or_else(|| MpiError::intern(call, "no bootstrap channel at the root"))
                    .and_then(|c| c.swap(call, &mine))
            });
            let theirs = share(&group, root, outcome)?;
            if theirs.len() != mine.len() {
                return Err(malformed());
            }
            for (w, t) in words.iter_mut().zip(theirs.chunks_exact(8)) {
                *w &= u64::from_le_bytes(t.try_into().unwrap());
            }
            Ok(())
        })
    })();
    drop(chan);
    let ctx = match agreed {
        Ok(ctx) => ctx,
        Err(err) => {
            close_all(&remote);
            return Err(err);
        }
    };

    // Every connection up before returning, so an unreachable process is this
    // call's error rather than a lost message later.
    let deadline = Instant::now() + EXCHANGE_TIMEOUT;
    let mut failure: Option<String> = None;
    e.wait_until(|st| {
        for &r in &remote {
            match st.peer_connected(r) {
                Ok(true) => {}
                Ok(false) if Instant::now() < deadline => return None,
                Ok(false) => {
                    failure = Some(format!("no connection with a process of the other group within {EXCHANGE_TIMEOUT:?}"));
                    return Some(());
                }
                Err(why) => {
                    failure = Some(why);
                    return Some(());
                }
            }
        }
        Some(())
    });
    if let Some(why) = failure {
        context::release(ctx);
        close_all(&remote);
        return Err(MpiError::new(ErrorClass::Other, format!("{call}: {why}")));
    }
    Ok(Comm::build_inter(
        ctx,
        local.rank(),
        local.0.group.clone(),
        Arc::from(remote),
        group,
    ))
}

/// MPI_Comm_accept.
pub fn accept(port_name: &str, root: i32, comm: &Comm) -> Result<Comm> {
    let how = (comm.rank() == root).then_some(Bootstrap::Accept(port_name));
    connect_groups("MPI_Comm_accept", comm, root, how)
}

/// MPI_Comm_connect; `timeout` bounds the wait for an acceptor.
pub fn connect(port_name: &str, root: i32, comm: &Comm, timeout: Duration) -> Result<Comm> {
    let how = (comm.rank() == root).then_some(Bootstrap::Connect(port_name, timeout));
    connect_groups("MPI_Comm_connect", comm, root, how)
}

/// MPI_Comm_join over a connected stream socket (a duplicate of the user's,
/// which stays open).
pub fn join(mut s: TcpStream) -> Result<Comm> {
    const CALL: &str = "MPI_Comm_join";
    let e = crate::runtime::engine()?;
    let _ = s.set_nonblocking(false);
    let _ = s.set_read_timeout(Some(EXCHANGE_TIMEOUT));
    let _ = s.set_write_timeout(Some(EXCHANGE_TIMEOUT));
    // Both sides draw a nonce: the higher one accepts; the key mixes both.
    let (side, key) = loop {
        let n = nonce()?;
        s.write_all(&n).map_err(|x| {
            MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "fd",
                format!("writing to the socket: {x}"),
            )
        })?;
        let mut t = [0u8; NONCE];
        s.read_exact(&mut t).map_err(|x| {
            MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "fd",
                format!("reading from the socket (is the other process in MPI_Comm_join?): {x}"),
            )
        })?;
        if n == t {
            continue;
        }
        let (hi, lo) = if n > t { (n, t) } else { (t, n) };
        let side = if n > t { Side::Accept } else { Side::Connect };
        break (side, mac(&hi, &[b"oxmpi-join", &lo]).to_vec());
    };
    connect_groups(
        CALL,
        e.self_comm(),
        0,
        Some(Bootstrap::Socket(s, side, key)),
    )
}

/// MPI_Comm_disconnect: waits until traffic with the other group is done,
/// then closes the connections to processes of other jobs this communicator
/// alone used. Collective over both groups of an intercommunicator.
pub fn disconnect(comm: &Comm) -> Result<()> {
    let e = crate::runtime::engine()?;
    let size = e.size;
    // Ours is on the wire, then theirs arrived (their barrier message follows it).
    e.wait_until(|st| {
        comm.peer_group()
            .iter()
            .chain(comm.group())
            .all(|&r| r >= st.peers.len() as u32 || st.peer_drained(r))
            .then_some(())
    });
    crate::coll::barrier::barrier(comm)?;
    let others: Vec<u32> = comm
        .peer_group()
        .iter()
        .chain(comm.group())
        .copied()
        .filter(|&r| r >= size)
        .collect();
    if others.is_empty() {
        return Ok(());
    }
    e.wait_until(|st| others.iter().all(|&r| st.peer_drained(r)).then_some(()));
    e.with_state(|st| others.iter().for_each(|&r| st.say_goodbye(r)));
    let deadline = Instant::now() + Duration::from_secs(10);
    e.wait_until(|st| {
        (others.iter().all(|&r| st.goodbye_done(r)) || Instant::now() >= deadline).then_some(())
    });
    e.with_state(|st| others.iter().for_each(|&r| st.close_peer(r)));
    Ok(())
}
