//! Non-rooted data movement on intercommunicators: barrier, allgather(v),
//! alltoall(v/w).
use super::no_in_place;
use crate::buf::{RecvBlocks, SendBlocks};
use crate::coll::gather::check_v;
use crate::coll::sched::{Builder, Slice};
use crate::coll::util;
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::Result;

/// Inter-barrier: no rank leaves before every rank of the OTHER group has
/// entered (and, as a consequence, of its own group too).
///
/// Every rank signals the remote leader. A leader that has heard from the whole
/// remote group tells the other leader ("your group has entered"); on hearing
/// that, it releases every rank of the remote group. So a rank is released by
/// the remote leader only once its own leader saw the whole remote group enter.
pub(crate) fn barrier(comm: &Comm) -> Result<Builder> {
    let mut b = Builder::new(comm);
    let empty = Slice::user(std::ptr::null(), 0);
    let m = comm.peer_group_size();
    b.send(empty, 0);
    if comm.rank() == 0 {
        for j in 0..m {
            b.recv(empty, j);
        }
        b.fence();
        // Messages from one sender match in order: the remote leader's
        // "entered" signal (above), then its note, then its release (below).
        b.send(empty, 0);
        b.recv(empty, 0);
        b.fence();
        for j in 0..m {
            b.send(empty, j);
        }
    }
    b.recv(empty, 0);
    Ok(b)
}

/// Inter-allgather: each rank receives `recvcount` elements from every rank of
/// the remote group (in remote rank order) and sends its own block to each.
///
/// Records the addresses only (the caller keeps the buffers valid, as `coll::allgather::allgather` (`recvbuf`: remote size * `recvcount` elements) needs, until the schedule completes).
#[allow(clippy::too_many_arguments)]
pub(crate) fn allgather(
    call: &str,
    sendbuf: Option<*const u8>,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: *mut u8,
    recvcount: usize,
    recvtype: &Datatype,
    comm: &Comm,
) -> Result<Builder> {
    let p = sendbuf.ok_or_else(|| no_in_place(call, "sendbuf"))?;
    let m = comm.peer_group_size() as usize;
    util::check_type(call, "sendtype", sendtype)?;
    util::check_count(call, "sendcount", sendcount, sendtype)?;
    util::check_type(call, "recvtype", recvtype)?;
    util::check_count(call, "recvcount", recvcount * m, recvtype)?;
    let mut b = Builder::new(comm);
    let blk = util::packed_len(recvcount, recvtype);
    let out = util::packed_output(&mut b, recvbuf, recvcount * m, recvtype);
    if blk > 0 {
        for j in 0..m {
            b.recv(out.sub(j * blk, blk), j as i32);
        }
    }
    let inp = util::packed_input(&mut b, p, sendcount, sendtype);
    if inp.len > 0 {
        for j in 0..m {
            b.send(inp, j as i32);
        }
    }
    util::finish_output(&mut b, out, recvbuf, recvcount * m, recvtype);
    Ok(b)
}

/// Inter-allgatherv: `recvcounts`/`displs` have one entry per remote rank.
///
/// Records the addresses only (the caller keeps the buffers valid, as `coll::allgather::allgatherv` needs, until the schedule completes).
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
pub(crate) fn allgatherv(
    call: &str,
    sendbuf: Option<*const u8>,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: *mut u8,
    recvcounts: &[usize],
    displs: &[isize],
    recvtype: &Datatype,
    comm: &Comm,
) -> Result<Builder> {
    let p = sendbuf.ok_or_else(|| no_in_place(call, "sendbuf"))?;
    let m = comm.peer_group_size();
    util::check_type(call, "sendtype", sendtype)?;
    util::check_count(call, "sendcount", sendcount, sendtype)?;
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
    let mut b = Builder::new(comm);
    let ptr = |j: usize| util::elem_ptr_mut(recvbuf, displs[j], recvtype);
    let mut outs = Vec::with_capacity(m as usize);
    for j in 0..m as usize {
        let o = util::packed_output(&mut b, ptr(j), recvcounts[j], recvtype);
        if o.len > 0 {
            b.recv(o, j as i32);
        }
        outs.push(o);
    }
    let inp = util::packed_input(&mut b, p, sendcount, sendtype);
    if inp.len > 0 {
        for j in 0..m {
            b.send(inp, j);
        }
    }
    for (j, &o) in outs.iter().enumerate() {
        util::finish_output(&mut b, o, ptr(j), recvcounts[j], recvtype);
    }
    Ok(b)
}

/// Inter-alltoall: block j of `sendbuf` goes to remote rank j; block j of
/// `recvbuf` comes from remote rank j.
///
/// Records the addresses only (the caller keeps the buffers valid, as `coll::alltoall::alltoall` needs, remote size blocks on both sides, until the schedule completes).
#[allow(clippy::too_many_arguments)]
pub(crate) fn alltoall(
    call: &str,
    sendbuf: Option<*const u8>,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: *mut u8,
    recvcount: usize,
    recvtype: &Datatype,
    comm: &Comm,
) -> Result<Builder> {
    let p = sendbuf.ok_or_else(|| no_in_place(call, "sendbuf"))?;
    let m = comm.peer_group_size() as usize;
    util::check_type(call, "sendtype", sendtype)?;
    util::check_count(call, "sendcount", sendcount * m, sendtype)?;
    util::check_type(call, "recvtype", recvtype)?;
    util::check_count(call, "recvcount", recvcount * m, recvtype)?;
    // Each direction has its own signature: this group's blocks must match
    // what the remote group receives, not what this group receives (one group
    // may send n and receive 0 while the other sends 0 and receives n). A
    // mismatch shows at the receiver as a message of the wrong size.
    let (sblk, rblk) = (
        util::packed_len(sendcount, sendtype),
        util::packed_len(recvcount, recvtype),
    );
    let mut b = Builder::new(comm);
    let out = util::packed_output(&mut b, recvbuf, recvcount * m, recvtype);
    let inp = util::packed_input(&mut b, p, sendcount * m, sendtype);
    if rblk > 0 {
        for j in 0..m {
            b.recv(out.sub(j * rblk, rblk), j as i32);
        }
    }
    if sblk > 0 {
        for j in 0..m {
            b.send(inp.sub(j * sblk, sblk), j as i32);
        }
    }
    util::finish_output(&mut b, out, recvbuf, recvcount * m, recvtype);
    Ok(b)
}

/// Inter-alltoallv: counts and displacements have one entry per remote rank.
///
/// Records the addresses only (the caller keeps the buffers valid, as `coll::alltoall::alltoallv` needs, until the schedule completes).
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
pub(crate) fn alltoallv(
    call: &str,
    sendbuf: Option<*const u8>,
    sendcounts: &[usize],
    sdispls: &[isize],
    sendtype: &Datatype,
    recvbuf: *mut u8,
    recvcounts: &[usize],
    rdispls: &[isize],
    recvtype: &Datatype,
    comm: &Comm,
) -> Result<Builder> {
    let p = sendbuf.ok_or_else(|| no_in_place(call, "sendbuf"))?;
    let m = comm.peer_group_size();
    util::check_type(call, "sendtype", sendtype)?;
    check_v(
        call,
        "sendcounts",
        sendcounts,
        "sdispls",
        sdispls,
        m,
        sendtype,
    )?;
    util::check_type(call, "recvtype", recvtype)?;
    check_v(
        call,
        "recvcounts",
        recvcounts,
        "rdispls",
        rdispls,
        m,
        recvtype,
    )?;
    let mut b = Builder::new(comm);
    let rptr = |j: usize| util::elem_ptr_mut(recvbuf, rdispls[j], recvtype);
    let mut outs = Vec::with_capacity(m as usize);
    for j in 0..m as usize {
        let o = util::packed_output(&mut b, rptr(j), recvcounts[j], recvtype);
        if o.len > 0 {
            b.recv(o, j as i32);
        }
        outs.push(o);
    }
    for j in 0..m as usize {
        let inp = util::packed_input(
            &mut b,
            util::elem_ptr(p, sdispls[j], sendtype),
            sendcounts[j],
            sendtype,
        );
        if inp.len > 0 {
            b.send(inp, j as i32);
        }
    }
    for (j, &o) in outs.iter().enumerate() {
        util::finish_output(&mut b, o, rptr(j), recvcounts[j], recvtype);
    }
    Ok(b)
}

/// Inter-alltoallw: one count, byte displacement and datatype per remote rank
/// on each side (the caller checked the arrays). Safe: the block lists' constructors
/// vouch for every block's address, which this only registers in the schedule.
pub(crate) fn alltoallw(
    send: &SendBlocks<'_, '_>,
    recv: &RecvBlocks<'_, '_>,
    comm: &Comm,
) -> Builder {
    let m = comm.peer_group_size() as usize;
    let mut b = Builder::new(comm);
    let (recvcounts, recvtypes) = (recv.counts(), recv.types());
    let mut outs = Vec::with_capacity(m);
    for j in 0..m {
        let o = util::packed_output(&mut b, recv.addr(j), recvcounts[j], &recvtypes[j]);
        if o.len > 0 {
            b.recv(o, j as i32);
        }
        outs.push(o);
    }
    for j in 0..m {
        let inp = util::packed_input(&mut b, send.addr(j), send.counts()[j], &send.types()[j]);
        if inp.len > 0 {
            b.send(inp, j as i32);
        }
    }
    for (j, &o) in outs.iter().enumerate() {
        util::finish_output(&mut b, o, recv.addr(j), recvcounts[j], &recvtypes[j]);
    }
    b
}
