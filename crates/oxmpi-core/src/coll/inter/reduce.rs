//! Reductions on intercommunicators: reduce, allreduce, reduce_scatter(_block).
//!
//! A group's contributions are always combined by one rank of the OTHER group
//! (the root, or the remote leader) in the contributors' rank order,
//! `a0 op a1 op ... op a(k-1)`, so non-commutative ops get the MPI order.
use super::{no_in_place, role, Role};
use crate::coll::reduce::{check_layout, Red};
use crate::coll::sched::{Builder, Slice};
use crate::coll::util;
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::Op;

fn check_args(call: &str, count: usize, dt: &Datatype, op: &Op) -> Result<()> {
    util::check_type(call, "datatype", dt)?;
    util::check_count(call, "count", count, dt)?;
    op.check(dt, call)?;
    check_layout(call, count, dt)
}

/// Receives one span of `count` elements from each remote rank into fresh
/// temporaries, fences, and combines them in rank order; returns the slice
/// holding the result (one of the temporaries).
fn gather_and_combine(b: &mut Builder, red: &Red, count: usize) -> Slice {
    let m = b.comm().peer_group_size();
    let len = red.len(count);
    let parts: Vec<Slice> = (0..m)
        .map(|j| {
            let t = b.temp(len);
            b.recv(t, j);
            t
        })
        .collect();
    b.fence();
    let acc = *parts
        .last()
        .expect("an intercommunicator's remote group is not empty");
    // acc = a_j op acc, from the right: a0 op (a1 op (... op a(m-1))).
    for &t in parts[..parts.len() - 1].iter().rev() {
        red.reduce(b, t, acc, count);
    }
    acc
}

/// The input span of `count` elements at `sendbuf`.
fn input(red: &Red, sendbuf: *const u8, count: usize) -> Slice {
    Slice::user(sendbuf.wrapping_offset(red.dt.true_lb()), red.len(count))
}

/// Inter-reduce: the root receives the reduction of the remote group's inputs.
///
/// # Safety
/// As `coll::reduce::reduce`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce(
    call: &str,
    sendbuf: Option<*const u8>,
    recvbuf: *mut u8,
    count: usize,
    dt: &Datatype,
    op: &Op,
    root: i32,
    comm: &Comm,
) -> Result<Builder> {
    let role = role(call, comm, root)?;
    let mut b = Builder::new(comm);
    if role == Role::Idle {
        return Ok(b);
    }
    check_args(call, count, dt, op)?;
    let red = Red::new(dt, op);
    let count = if dt.size() == 0 { 0 } else { count };
    if red.len(count) == 0 {
        return Ok(b);
    }
    match role {
        Role::Root => {
            let acc = gather_and_combine(&mut b, &red, count);
            red.deliver(&mut b, acc, recvbuf, count);
        }
        Role::Leaf(r) => {
            let p = sendbuf.ok_or_else(|| no_in_place(call, "sendbuf"))?;
            b.send(input(&red, p, count), r);
        }
        Role::Idle => unreachable!(),
    }
    Ok(b)
}

/// The relay shared by allreduce and reduce_scatter: every rank sends its
/// `count`-element input to the remote leader; each leader combines the remote
/// group's inputs (the result its own group needs), keeps it, and sends it to
/// the remote leader, which forwards it to the rest of ITS remote group (the
/// leader's group). Returns, at every rank, the slice that will hold the
/// reduction of the remote group's inputs once the schedule has fenced.
fn relay(b: &mut Builder, red: &Red, inp: Slice, count: usize, out: Slice) -> Slice {
    let m = b.comm().peer_group_size();
    b.send(inp, 0);
    if b.comm().rank() != 0 {
        b.recv(out, 0);
        return out;
    }
    let mine = gather_and_combine(b, red, count);
    b.send(mine, 0);
    // The remote leader's second message (after its input): what it combined
    // from our group's inputs, for the other ranks of its group.
    let theirs = b.temp(red.len(count));
    b.recv(theirs, 0);
    b.fence();
    for j in 1..m {
        b.send(theirs, j);
    }
    mine
}

/// Inter-allreduce: each group receives the reduction of the OTHER group's inputs.
///
/// # Safety
/// As `coll::allreduce::allreduce`.
pub(crate) fn allreduce(
    call: &str,
    sendbuf: Option<*const u8>,
    recvbuf: *mut u8,
    count: usize,
    dt: &Datatype,
    op: &Op,
    comm: &Comm,
) -> Result<Builder> {
    let p = sendbuf.ok_or_else(|| no_in_place(call, "sendbuf"))?;
    check_args(call, count, dt, op)?;
    let red = Red::new(dt, op);
    let count = if dt.size() == 0 { 0 } else { count };
    let mut b = Builder::new(comm);
    if red.len(count) == 0 {
        return Ok(b);
    }
    let out = if dt.is_contiguous() {
        util::span_mut(recvbuf, count, dt)
    } else {
        b.temp(red.len(count))
    };
    let res = relay(&mut b, &red, input(&red, p, count), count, out);
    red.deliver(&mut b, res, recvbuf, count);
    Ok(b)
}

/// Inter-reduce_scatter (and _block): the reduction of one group's inputs
/// (`sum(recvcounts)` elements, the same total in both groups) is scattered
/// over the other group by that group's `recvcounts` (one entry per LOCAL rank).
/// The leaders do not know the other group's counts, so the relayed result
/// travels whole and each rank keeps its own block.
///
/// # Safety
/// As `coll::reduce_scatter::reduce_scatter`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_scatter(
    call: &str,
    sendbuf: Option<*const u8>,
    recvbuf: *mut u8,
    counts: &[usize],
    dt: &Datatype,
    op: &Op,
    comm: &Comm,
) -> Result<Builder> {
    let p = sendbuf.ok_or_else(|| no_in_place(call, "sendbuf"))?;
    let n = comm.size() as usize;
    if counts.len() != n {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            call,
            "recvcounts",
            format!(
                "has {} entries for {n} ranks of the local group",
                counts.len()
            ),
        ));
    }
    let total = counts
        .iter()
        .try_fold(0usize, |a, &c| a.checked_add(c))
        .ok_or_else(|| {
            MpiError::arg(ErrorClass::Count, call, "recvcounts", "the total overflows")
        })?;
    check_args(call, total, dt, op)?;
    let red = Red::new(dt, op);
    let mut b = Builder::new(comm);
    if dt.size() == 0 || red.len(total) == 0 {
        return Ok(b);
    }
    let r = comm.rank() as usize;
    let disp: usize = counts[..r].iter().sum();
    let full = b.temp(red.len(total));
    let res = relay(&mut b, &red, input(&red, p, total), total, full);
    if counts[r] > 0 {
        b.fence();
        red.deliver(&mut b, red.block(res, disp, counts[r]), recvbuf, counts[r]);
    }
    Ok(b)
}
