//! Single copies for large rooted collectives (bcast, scatter) where every pair
//! of members may copy between each other's memory (cross-memory attach,
//! agreed at set-up, [`Session::direct`]): the root *exposes* its buffer (its
//! address in the inline broadcast buffer of the step, published with
//! `release`) and waits until every other rank is `done`; each other rank reads
//! its part straight from the root's memory into its own buffer
//! (`process_vm_readv`), in parallel. One copy per byte received instead of
//! the area's two (root in, others out) or a tree's forwarding; the root
//! copies nothing (a non-contiguous root packs once into a temporary first).
//! The root's pid comes from set-up (the engine's peers), never from the area;
//! the address read from the area is only ever a remote address for the
//! kernel's checked copy, which a wrong one turns into an error or wrong data
//! bytes (the trust model of `coll/shm`). A refused copy is an error of the
//! call on the reading rank (MPI_ERR_OTHER); the root is still released.
use super::{Ctx, Session};
use crate::buf::elems::ElemsMut;
use crate::buf::{RecvBuf, SendBuf};
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};
use crate::transport::cma;

impl Ctx<'_> {
    /// Root: publishes `addr` at step `s`.
    pub(super) fn expose(&mut self, s: u64, addr: usize) {
        self.wait_free(s);
        // Nobody reads the inline half of this parity before `release = s`.
        self.area()
            .inline_bbuf(s)
            .sub(0, 8)
            .copy_in(&(addr as u64).to_ne_bytes());
        self.publish_release(s);
    }

    /// Root: waits until every other rank is done with step `s` (read the
    /// exposed buffer), then marks its own step done.
    pub(super) fn unexpose(&mut self, s: u64) {
        self.wait_free(s + 2);
        self.set_done(s);
    }

    /// Another rank: the address the root exposed at step `s`.
    pub(super) fn exposed(&self, s: u64) -> usize {
        self.wait_release(s);
        let mut w = [0u8; 8];
        // The root published the address (Acquire in wait_release).
        self.area().inline_bbuf(s).sub(0, 8).copy_out(&mut w);
        u64::from_ne_bytes(w) as usize
    }

    /// Another rank: reads `dst.len()` bytes at `addr` of rank `root`'s memory.
    pub(super) fn read_from(
        &self,
        call: &str,
        root: usize,
        addr: usize,
        dst: &mut [u8],
    ) -> Result<()> {
        let pid = self.r.pids[root];
        cma::read_remote(pid, addr, dst).map_err(|e| {
            MpiError::new(
                ErrorClass::Other,
                format!(
                    "{call}: copying from the root's buffer (rank {root}, pid {pid}) failed: {e}"
                ),
            )
        })
    }
}

impl Ctx<'_> {
    /// Another rank: reads the `m` packed bytes at `addr` of rank `root`'s
    /// memory into `dst` (straight into a contiguous one, else through a
    /// temporary that is then unpacked).
    fn read_into(
        &self,
        call: &str,
        root: usize,
        addr: usize,
        dst: &mut ElemsMut<'_>,
        m: usize,
    ) -> Result<()> {
        if dst.contiguous() {
            let c = dst.count();
            let d = dst.span_mut(0, c);
            assert_eq!(d.len(), m, "{call}: the packed bytes");
            return self.read_from(call, root, addr, d);
        }
        let mut tmp = vec![0u8; m];
        self.read_from(call, root, addr, &mut tmp)?;
        dst.unpack(0, &tmp);
        Ok(())
    }
}

impl Session<'_> {
    /// Whether this communicator's members copy between each other's memory
    /// (agreed at set-up: the same answer on every rank).
    pub(crate) fn direct(&self) -> bool {
        matches!(&*self.guard, super::Status::Ready(r) if !r.pids.is_empty())
    }
}

/// MPI_Bcast of `m` packed bytes by single copies; `sess.direct()` holds.
pub(crate) fn bcast(
    mut sess: Session<'_>,
    buf: &mut RecvBuf<'_, '_>,
    m: usize,
    root: usize,
) -> Result<()> {
    let mut buf = buf.elems_mut();
    let mut cx = sess.ctx();
    let s = cx.next();
    let count = buf.count();
    if cx.me == root {
        let packed;
        let src: &[u8] = if buf.contiguous() {
            buf.as_elems().span(0, count)
        } else {
            let mut v = vec![0u8; m];
            buf.as_elems().pack(0, &mut v);
            packed = v;
            &packed
        };
        assert_eq!(src.len(), m, "bcast: the root's packed bytes");
        cx.expose(s, src.as_ptr() as usize);
        cx.unexpose(s);
        return Ok(());
    }
    let addr = cx.exposed(s);
    let r = cx.read_into("MPI_Bcast", root, addr, &mut buf, m);
    cx.set_done(s);
    r
}

/// MPI_Scatter of blocks of `blk` packed bytes by single copies (as
/// `rooted::scatter`'s arguments); `sess.direct()` holds.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter(
    mut sess: Session<'_>,
    send: Option<&SendBuf<'_, '_>>,
    sendcount: usize,
    sendtype: &Datatype,
    recv: Option<&mut RecvBuf<'_, '_>>,
    root: usize,
    blk: usize,
) -> Result<()> {
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    let send = send.filter(|_| me == root).map(|s| s.elems());
    let mut recv = recv.map(|r| r.elems_mut());
    assert_eq!(
        send.is_some(),
        me == root,
        "scatter: the root's send buffer"
    );
    let s = cx.next();
    if let Some(send) = &send {
        let all = send.block(0, n * sendcount);
        let packed;
        let src: &[u8] = if sendtype.is_contiguous() {
            all.span(0, n * sendcount)
        } else {
            let mut v = vec![0u8; n * blk];
            all.pack(0, &mut v);
            packed = v;
            &packed
        };
        assert_eq!(src.len(), n * blk, "scatter: the root's packed blocks");
        cx.expose(s, src.as_ptr() as usize);
        if let Some(dst) = &mut recv {
            super::rooted::own_block(&send.block(me * sendcount, sendcount), sendtype, dst, blk);
        }
        cx.unexpose(s);
        return Ok(());
    }
    let addr = cx.exposed(s).wrapping_add(me * blk);
    let dst = recv.as_mut().expect("MPI_IN_PLACE is the root's only");
    let r = cx.read_into("MPI_Scatter", root, addr, dst, blk);
    cx.set_done(s);
    r
}

impl Ctx<'_> {
    /// Another rank: writes `src` at `addr` of rank `root`'s memory.
    fn write_to(&self, call: &str, root: usize, addr: usize, src: &[u8]) -> Result<()> {
        let pid = self.r.pids[root];
        cma::write_remote(pid, addr, src).map_err(|e| {
            MpiError::new(
                ErrorClass::Other,
                format!(
                    "{call}: copying into the root's buffer (rank {root}, pid {pid}) failed: {e}"
                ),
            )
        })
    }
}

/// MPI_Gather of blocks of `blk` packed bytes by single copies (as
/// `rooted::gather`'s arguments): the root exposes its receive buffer (a
/// temporary for a non-contiguous type, unpacked once every block is in) and
/// every other rank writes its block there (`process_vm_writev`), all at once;
/// `sess.direct()` holds.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather(
    mut sess: Session<'_>,
    send: Option<&SendBuf<'_, '_>>,
    sendtype: &Datatype,
    recv: Option<&mut RecvBuf<'_, '_>>,
    recvcount: usize,
    root: usize,
    blk: usize,
) -> Result<()> {
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    let send = send.map(|s| s.elems());
    let mut recv = recv.filter(|_| me == root).map(|r| r.elems_mut());
    assert_eq!(
        recv.is_some(),
        me == root,
        "gather: the root's receive buffer"
    );
    let s = cx.next();
    if let Some(recv) = &mut recv {
        if let Some(src) = &send {
            super::rooted::own_block(
                src,
                sendtype,
                &mut recv.block_mut(me * recvcount, recvcount),
                blk,
            );
        }
        let mut all = recv.block_mut(0, n * recvcount);
        if all.contiguous() {
            let span = all.span_mut(0, n * recvcount);
            assert_eq!(span.len(), n * blk, "gather: the root's packed blocks");
            cx.expose(s, span.as_mut_ptr() as usize);
            cx.unexpose(s);
        } else {
            let mut tmp = vec![0u8; n * blk];
            cx.expose(s, tmp.as_mut_ptr() as usize);
            cx.unexpose(s);
            for j in (0..n).filter(|&j| j != me) {
                all.block_mut(j * recvcount, recvcount)
                    .unpack(0, &tmp[j * blk..(j + 1) * blk]);
            }
        }
        return Ok(());
    }
    let src = send.expect("MPI_IN_PLACE is the root's only");
    let addr = cx.exposed(s).wrapping_add(me * blk);
    let r = if sendtype.is_contiguous() {
        let b = src.span(0, src.count());
        assert_eq!(b.len(), blk, "gather: the block's packed bytes");
        cx.write_to("MPI_Gather", root, addr, b)
    } else {
        let mut tmp = vec![0u8; blk];
        src.pack(0, &mut tmp);
        cx.write_to("MPI_Gather", root, addr, &tmp)
    };
    cx.set_done(s);
    r
}
