//! Two-level allreduce for communicators that span several hosts (commutative
//! ops): a binomial reduce inside each host to its leader (the host's lowest
//! rank), a binomial reduce and broadcast among the leaders, then a binomial
//! broadcast inside each host. The network is crossed 2 log2(hosts) times
//! instead of log2(ranks) times. Every rank receives the bytes the first leader
//! computed, so results are bit-identical.
use crate::coll::reduce::{Io, Red};
use crate::coll::sched::{Builder, Slice};

/// Reduces `p`'s partial over `group` (comm ranks, index 0 the root) with a
/// binomial tree; returns whether this rank ended up holding the total.
fn reduce_over(
    b: &mut Builder,
    red: &Red,
    p: &mut crate::coll::reduce::Partial,
    group: &[i32],
    me: usize,
) -> bool {
    let m = group.len();
    let mut mask = 1;
    while mask < m {
        if me & mask == 0 {
            let child = me | mask;
            if child < m {
                let t = p.scratch(b);
                b.recv(t, group[child]);
                b.fence();
                p.higher(b, red, t);
            }
        } else {
            b.send(p.cur, group[me - mask]);
            b.fence();
            return false;
        }
        mask <<= 1;
    }
    true
}

/// Broadcasts `res` from `group[0]` over `group` with a binomial tree.
fn bcast_over(b: &mut Builder, res: Slice, group: &[i32], me: usize) {
    let m = group.len();
    let mut mask = 1;
    while mask < m {
        if me & mask != 0 {
            b.recv(res, group[me - mask]);
            b.fence();
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if me + mask < m {
            b.send(res, group[me + mask]);
        }
        mask >>= 1;
    }
    b.fence();
}

/// `host_of[r]`: the host of communicator rank `r`.
pub(super) fn build(b: &mut Builder, red: &Red, io: &Io, host_of: &[u32]) -> Slice {
    let rank = b.comm().rank();
    let n = b.comm().size();
    let members: Vec<i32> = (0..n)
        .filter(|&r| host_of[r as usize] == host_of[rank as usize])
        .collect();
    let leaders: Vec<i32> = (0..n)
        .filter(|&r| !(0..r).any(|q| host_of[q as usize] == host_of[r as usize]))
        .collect();
    let me = members.iter().position(|&r| r == rank).unwrap();
    let mut p = io.partial(red, true);
    let holds_host_total = reduce_over(b, red, &mut p, &members, me);
    let res = if holds_host_total {
        let li = leaders.iter().position(|&r| r == rank).unwrap();
        let res = if reduce_over(b, red, &mut p, &leaders, li) {
            p.cur
        } else {
            // Our sends are fenced: the receive buffer is free again.
            io.slot(b, red)
        };
        bcast_over(b, res, &leaders, li);
        res
    } else {
        io.slot(b, red)
    };
    bcast_over(b, res, &members, me);
    res
}
