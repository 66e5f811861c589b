//! Rooted data movement on intercommunicators: bcast, gather(v), scatter(v).
//! The root talks to every rank of the remote group directly (linear); the
//! other ranks of the root's group (MPI_PROC_NULL) take no part.
use super::{no_in_place, role, Role};
use crate::coll::gather::check_v;
use crate::coll::sched::Builder;
use crate::coll::util;
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::Result;

/// Inter-bcast.
///
/// Records the addresses only (the caller keeps the buffers valid, as `coll::bcast::bcast` needs, until the schedule completes).
pub(crate) fn bcast(
    call: &str,
    buf: *mut u8,
    count: usize,
    dt: &Datatype,
    root: i32,
    comm: &Comm,
) -> Result<Builder> {
    let role = role(call, comm, root)?;
    let mut b = Builder::new(comm);
    if role == Role::Idle {
        return Ok(b);
    }
    util::check_type(call, "datatype", dt)?;
    util::check_count(call, "count", count, dt)?;
    if util::packed_len(count, dt) == 0 {
        return Ok(b);
    }
    match role {
        Role::Root => {
            let data = util::packed_input(&mut b, buf, count, dt);
            for j in 0..comm.peer_group_size() {
                b.send(data, j);
            }
        }
        Role::Leaf(r) => {
            let data = util::packed_output(&mut b, buf, count, dt);
            b.recv(data, r);
            util::finish_output(&mut b, data, buf, count, dt);
        }
        Role::Idle => unreachable!(),
    }
    Ok(b)
}

/// Inter-gather: the root receives `recvcount` elements from each remote rank.
///
/// Records the addresses only (the caller keeps the buffers valid, as `coll::gather::gather` (`recvbuf`: remote size * `recvcount` elements) needs, until the schedule completes).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather(
    call: &str,
    sendbuf: Option<*const u8>,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: *mut u8,
    recvcount: usize,
    recvtype: &Datatype,
    root: i32,
    comm: &Comm,
) -> Result<Builder> {
    let role = role(call, comm, root)?;
    let mut b = Builder::new(comm);
    match role {
        Role::Idle => {}
        Role::Root => {
            let m = comm.peer_group_size() as usize;
            util::check_type(call, "recvtype", recvtype)?;
            util::check_count(call, "recvcount", recvcount * m, recvtype)?;
            let blk = util::packed_len(recvcount, recvtype);
            let out = util::packed_output(&mut b, recvbuf, recvcount * m, recvtype);
            if blk > 0 {
                for j in 0..m {
                    b.recv(out.sub(j * blk, blk), j as i32);
                }
            }
            util::finish_output(&mut b, out, recvbuf, recvcount * m, recvtype);
        }
        Role::Leaf(r) => {
            let p = sendbuf.ok_or_else(|| no_in_place(call, "sendbuf"))?;
            util::check_type(call, "sendtype", sendtype)?;
            util::check_count(call, "sendcount", sendcount, sendtype)?;
            let inp = util::packed_input(&mut b, p, sendcount, sendtype);
            if inp.len > 0 {
                b.send(inp, r);
            }
        }
    }
    Ok(b)
}

/// Inter-gatherv: `recvcounts`/`displs` (at the root) have one entry per remote rank.
///
/// Records the addresses only (the caller keeps the buffers valid, as `coll::gather::gatherv` needs, until the schedule completes).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gatherv(
    call: &str,
    sendbuf: Option<*const u8>,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: *mut u8,
    recvcounts: &[usize],
    displs: &[isize],
    recvtype: &Datatype,
    root: i32,
    comm: &Comm,
) -> Result<Builder> {
    let role = role(call, comm, root)?;
    let mut b = Builder::new(comm);
    match role {
        Role::Idle => {}
        Role::Root => {
            let m = comm.peer_group_size();
            util::check_type(call, "recvtype", recvtype)?;
            check_v(
                call,
                "recvcounts",
                recvcounts,
                "displs",
                displs,
                m,
                recvtype,
            )?;
            let mut outs = Vec::with_capacity(m as usize);
            for j in 0..m as usize {
                let at = util::elem_ptr_mut(recvbuf, displs[j], recvtype);
                let o = util::packed_output(&mut b, at, recvcounts[j], recvtype);
                if o.len > 0 {
                    b.recv(o, j as i32);
                }
                outs.push(o);
            }
            for (j, &o) in outs.iter().enumerate() {
                util::finish_output(
                    &mut b,
                    o,
                    util::elem_ptr_mut(recvbuf, displs[j], recvtype),
                    recvcounts[j],
                    recvtype,
                );
            }
        }
        Role::Leaf(r) => {
            let p = sendbuf.ok_or_else(|| no_in_place(call, "sendbuf"))?;
            util::check_type(call, "sendtype", sendtype)?;
            util::check_count(call, "sendcount", sendcount, sendtype)?;
            let inp = util::packed_input(&mut b, p, sendcount, sendtype);
            if inp.len > 0 {
                b.send(inp, r);
            }
        }
    }
    Ok(b)
}

/// Inter-scatter: the root sends block j (`sendcount` elements) to remote rank j.
///
/// Records the addresses only (the caller keeps the buffers valid, as `coll::scatter::scatter` (`sendbuf`: remote size * `sendcount` elements) needs, until the schedule completes).
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter(
    call: &str,
    sendbuf: *const u8,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: Option<*mut u8>,
    recvcount: usize,
    recvtype: &Datatype,
    root: i32,
    comm: &Comm,
) -> Result<Builder> {
    let role = role(call, comm, root)?;
    let mut b = Builder::new(comm);
    match role {
        Role::Idle => {}
        Role::Root => {
            let m = comm.peer_group_size() as usize;
            util::check_type(call, "sendtype", sendtype)?;
            util::check_count(call, "sendcount", sendcount * m, sendtype)?;
            let blk = util::packed_len(sendcount, sendtype);
            let inp = util::packed_input(&mut b, sendbuf, sendcount * m, sendtype);
            if blk > 0 {
                for j in 0..m {
                    b.send(inp.sub(j * blk, blk), j as i32);
                }
            }
        }
        Role::Leaf(r) => {
            let p = recvbuf.ok_or_else(|| no_in_place(call, "recvbuf"))?;
            util::check_type(call, "recvtype", recvtype)?;
            util::check_count(call, "recvcount", recvcount, recvtype)?;
            let out = util::packed_output(&mut b, p, recvcount, recvtype);
            if out.len > 0 {
                b.recv(out, r);
            }
            util::finish_output(&mut b, out, p, recvcount, recvtype);
        }
    }
    Ok(b)
}

/// Inter-scatterv: `sendcounts`/`displs` (at the root) have one entry per remote rank.
///
/// Records the addresses only (the caller keeps the buffers valid, as `coll::scatter::scatterv` needs, until the schedule completes).
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatterv(
    call: &str,
    sendbuf: *const u8,
    sendcounts: &[usize],
    displs: &[isize],
    sendtype: &Datatype,
    recvbuf: Option<*mut u8>,
    recvcount: usize,
    recvtype: &Datatype,
    root: i32,
    comm: &Comm,
) -> Result<Builder> {
    let role = role(call, comm, root)?;
    let mut b = Builder::new(comm);
    match role {
        Role::Idle => {}
        Role::Root => {
            let m = comm.peer_group_size();
            util::check_type(call, "sendtype", sendtype)?;
            check_v(
                call,
                "sendcounts",
                sendcounts,
                "displs",
                displs,
                m,
                sendtype,
            )?;
            for j in 0..m as usize {
                let at = util::elem_ptr(sendbuf, displs[j], sendtype);
                let inp = util::packed_input(&mut b, at, sendcounts[j], sendtype);
                if inp.len > 0 {
                    b.send(inp, j as i32);
                }
            }
        }
        Role::Leaf(r) => {
            let p = recvbuf.ok_or_else(|| no_in_place(call, "recvbuf"))?;
            util::check_type(call, "recvtype", recvtype)?;
            util::check_count(call, "recvcount", recvcount, recvtype)?;
            let out = util::packed_output(&mut b, p, recvcount, recvtype);
            if out.len > 0 {
                b.recv(out, r);
            }
            util::finish_output(&mut b, out, p, recvcount, recvtype);
        }
    }
    Ok(b)
}
