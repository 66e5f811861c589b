//! Persistent collectives (MPI-4 `MPI_<Op>_init`) over typed buffer descriptors:
//! safe functions, like the blocking and immediate ones in [`api`](super::api) and
//! [`api_move`](super::api_move).
//!
//! `*_init` makes an inactive persistent request. Each MPI_Start (`pt2pt::start`) runs
//! the collective's non-blocking form over the descriptors kept at init, with the
//! collective tag reserved at init (persistent collectives match in the order they were
//! initialized, the same on every rank, whatever order they are started in); the
//! wait/test family completes a start and leaves the request inactive. The buffers are
//! borrowed for `'a`, which the [`BufScope`] the init call takes keeps from ending
//! before the request is freed. Argument errors surface at the start that meets them
//! (as the immediate call's), the datatypes and the count arrays are copied at init.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Arc;

use super::api::{iallreduce, ibcast, iexscan, ireduce, iscan};
use super::api_move::{
    iallgather, iallgatherv, ialltoall, ialltoallv, igather, igatherv, ireduce_scatter,
    ireduce_scatter_block, iscatter, iscatterv, Blocks,
};
use super::{reserve_tag, with_reserved_tag};
use crate::buf::{BufScope, RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::engine::{PersistentSpec, ReqKind};
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::Op;
use crate::request::Request;
use crate::runtime::engine;

/// The engine's scope for one start of a persistent collective: the start may enter
/// one request, the one it returns (which becomes the persistent request's active one).
pub struct Starting<'b> {
    entered: Cell<Option<Request>>,
    extra: Cell<bool>,
    _life: PhantomData<Cell<&'b ()>>,
}

// SAFETY: a `Starting<'b>` is made only by a persistent collective's starter, over the
// buffers kept at init for as long as the persistent request exists; the starter checks
// that the one request entered is the one returned (aborting otherwise), and the engine
// keeps it as the persistent request's active one, completed before the next start.
unsafe impl<'b> BufScope<'b> for Starting<'b> {
    fn enter(&self, r: Request) {
        if self.entered.get().is_some() {
            self.extra.set(true);
        } else {
            self.entered.set(Some(r));
        }
    }
}

/// The start of a persistent collective, kept by its engine request.
#[derive(Clone)]
pub(crate) struct Starter(Arc<dyn Fn() -> Result<Request> + Send + Sync>);

impl Starter {
    pub(crate) fn start(&self) -> Result<Request> {
        (self.0)()
    }
}

impl std::fmt::Debug for Starter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Starter")
    }
}

/// A descriptor's parts, kept by a persistent request (the datatype copied).
struct Kept {
    addr: usize,
    count: usize,
    dt: Option<Datatype>,
}

impl Kept {
    fn send(s: &SendBuf<'_, '_>) -> Kept {
        Kept {
            addr: s.ptr() as usize,
            count: s.count(),
            dt: s.datatype().cloned(),
        }
    }
    fn recv(r: &RecvBuf<'_, '_>) -> Kept {
        Kept {
            addr: r.ptr() as usize,
            count: r.count(),
            dt: r.datatype().cloned(),
        }
    }
}

/// A persistent collective over `send` and `recv` (`None`: in place, or not significant
/// on this rank, as for the immediate call): each start calls `start` with them and the
/// engine scope to start its non-blocking form with, on `comm`.
pub fn init<'a, F>(
    scope: &impl BufScope<'a>,
    comm: &Comm,
    send: Option<SendBuf<'a, '_>>,
    recv: Option<RecvBuf<'a, '_>>,
    start: F,
) -> Result<Request>
where
    F: for<'b, 'd> Fn(
            &Starting<'b>,
            Option<SendBuf<'b, 'd>>,
            Option<RecvBuf<'b, 'd>>,
            &Comm,
        ) -> Result<Request>
        + Send
        + Sync
        + 'static,
{
    let e = engine()?;
    let (ks, kr) = (send.as_ref().map(Kept::send), recv.as_ref().map(Kept::recv));
    let tag = reserve_tag(comm);
    let cm = comm.clone();
    let starter = Starter(Arc::new(move || {
        let p = Starting {
            entered: Cell::new(None),
            extra: Cell::new(false),
            _life: PhantomData,
        };
        // SAFETY: the descriptors given to `init` were valid for 'a, and the persistent
        // request that owns this starter was entered into a `BufScope<'a>` below, which
        // keeps 'a from ending before the request is freed; the engine runs a start only
        // while the request exists and is inactive (no earlier start still uses them).
        let (s, r) = unsafe {
            (
                ks.as_ref()
                    .map(|k| SendBuf::from_raw(k.addr as *const u8, k.count, k.dt.as_ref())),
                kr.as_ref()
                    .map(|k| RecvBuf::from_raw(k.addr as *mut u8, k.count, k.dt.as_ref())),
            )
        };
        let req = with_reserved_tag(&cm, tag, || start(&p, s, r, &cm));
        let ok = !p.extra.get()
            && match (p.entered.get(), &req) {
                (None, _) => true,
                (Some(e), Ok(r)) => e == *r,
                (Some(_), Err(_)) => false,
            };
        if !ok {
            eprintln!("oxmpi: internal error: a persistent collective's start left a request its scope does not hold; aborting");
            std::process::abort();
        }
        req
    }));
    let r = e.lock().new_request(ReqKind::Persistent {
        spec: PersistentSpec::Coll(starter),
        active: None,
    });
    scope.enter(r);
    Ok(r)
}

fn need<T>(call: &str, arg: &str, v: Option<T>) -> Result<T> {
    v.ok_or_else(|| MpiError::arg(ErrorClass::Buffer, call, arg, "missing at a start"))
}

/// MPI_Barrier_init.
pub fn barrier_init<'a>(scope: &impl BufScope<'a>, comm: &Comm) -> Result<Request> {
    init(scope, comm, None, None, |_, _, _, c| {
        super::barrier::ibarrier(c)
    })
}

/// MPI_Bcast_init (as [`ibcast`]).
pub fn bcast_init<'a>(
    scope: &impl BufScope<'a>,
    buf: RecvBuf<'a, '_>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    init(scope, comm, None, Some(buf), move |p, _, r, c| {
        ibcast(p, need("MPI_Bcast_init", "buffer", r)?, root, c)
    })
}

/// MPI_Allreduce_init (as [`iallreduce`]).
pub fn allreduce_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    let op = op.clone();
    init(scope, comm, send, Some(recv), move |p, s, r, c| {
        iallreduce(p, s, need("MPI_Allreduce_init", "recvbuf", r)?, &op, c)
    })
}

/// MPI_Reduce_init (as [`ireduce`]).
pub fn reduce_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: Option<RecvBuf<'a, '_>>,
    op: &Op,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    let op = op.clone();
    init(scope, comm, send, recv, move |p, s, r, c| {
        ireduce(p, s, r, &op, root, c)
    })
}

/// MPI_Scan_init (as [`iscan`]).
pub fn scan_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    let op = op.clone();
    init(scope, comm, send, Some(recv), move |p, s, r, c| {
        iscan(p, s, need("MPI_Scan_init", "recvbuf", r)?, &op, c)
    })
}

/// MPI_Exscan_init (as [`iexscan`]).
pub fn exscan_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    let op = op.clone();
    init(scope, comm, send, Some(recv), move |p, s, r, c| {
        iexscan(p, s, need("MPI_Exscan_init", "recvbuf", r)?, &op, c)
    })
}

/// MPI_Gather_init (as [`igather`]).
pub fn gather_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: Option<RecvBuf<'a, '_>>,
    recvcount: usize,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    init(scope, comm, send, recv, move |p, s, r, c| {
        igather(p, s, r, recvcount, root, c)
    })
}

/// MPI_Gatherv_init (as [`igatherv`]; the arrays are copied).
pub fn gatherv_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: Option<RecvBuf<'a, '_>>,
    recvcounts: &[usize],
    displs: &[isize],
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    let (rc, d) = (recvcounts.to_vec(), displs.to_vec());
    init(scope, comm, send, recv, move |p, s, r, c| {
        igatherv(p, s, r, &rc, &d, root, c)
    })
}

/// MPI_Scatter_init (as [`iscatter`]).
pub fn scatter_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sendcount: usize,
    recv: Option<RecvBuf<'a, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    init(scope, comm, send, recv, move |p, s, r, c| {
        iscatter(p, s, sendcount, r, root, c)
    })
}

/// MPI_Scatterv_init (as [`iscatterv`]; the arrays are copied).
#[allow(clippy::too_many_arguments)]
pub fn scatterv_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sendcounts: &[usize],
    displs: &[isize],
    recv: Option<RecvBuf<'a, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    let (sc, d) = (sendcounts.to_vec(), displs.to_vec());
    init(scope, comm, send, recv, move |p, s, r, c| {
        iscatterv(p, s, &sc, &d, r, root, c)
    })
}

/// MPI_Allgather_init (as [`iallgather`]).
pub fn allgather_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    init(scope, comm, send, Some(recv), move |p, s, r, c| {
        iallgather(
            p,
            s,
            need("MPI_Allgather_init", "recvbuf", r)?,
            recvcount,
            c,
        )
    })
}

/// MPI_Allgatherv_init (as [`iallgatherv`]; the arrays are copied).
pub fn allgatherv_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcounts: &[usize],
    displs: &[isize],
    comm: &Comm,
) -> Result<Request> {
    let (rc, d) = (recvcounts.to_vec(), displs.to_vec());
    init(scope, comm, send, Some(recv), move |p, s, r, c| {
        iallgatherv(p, s, need("MPI_Allgatherv_init", "recvbuf", r)?, &rc, &d, c)
    })
}

/// MPI_Alltoall_init (as [`ialltoall`]).
pub fn alltoall_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sendcount: usize,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    init(scope, comm, send, Some(recv), move |p, s, r, c| {
        ialltoall(
            p,
            s,
            sendcount,
            need("MPI_Alltoall_init", "recvbuf", r)?,
            recvcount,
            c,
        )
    })
}

/// MPI_Alltoallv_init (as [`ialltoallv`]; the arrays are copied).
pub fn alltoallv_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sb: Blocks<'_>,
    recv: RecvBuf<'a, '_>,
    rb: Blocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    let (sc, sd, rc, rd) = (
        sb.counts.to_vec(),
        sb.displs.to_vec(),
        rb.counts.to_vec(),
        rb.displs.to_vec(),
    );
    init(scope, comm, send, Some(recv), move |p, s, r, c| {
        let (sb, rb) = (
            Blocks {
                counts: &sc,
                displs: &sd,
            },
            Blocks {
                counts: &rc,
                displs: &rd,
            },
        );
        ialltoallv(p, s, sb, need("MPI_Alltoallv_init", "recvbuf", r)?, rb, c)
    })
}

/// MPI_Reduce_scatter_init (as [`ireduce_scatter`]; the counts are copied).
pub fn reduce_scatter_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcounts: &[usize],
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    let (rc, op) = (recvcounts.to_vec(), op.clone());
    init(scope, comm, send, Some(recv), move |p, s, r, c| {
        ireduce_scatter(
            p,
            s,
            need("MPI_Reduce_scatter_init", "recvbuf", r)?,
            &rc,
            &op,
            c,
        )
    })
}

/// MPI_Reduce_scatter_block_init (as [`ireduce_scatter_block`]).
pub fn reduce_scatter_block_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    let op = op.clone();
    init(scope, comm, send, Some(recv), move |p, s, r, c| {
        ireduce_scatter_block(
            p,
            s,
            need("MPI_Reduce_scatter_block_init", "recvbuf", r)?,
            recvcount,
            &op,
            c,
        )
    })
}
