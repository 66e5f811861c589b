//! Buffered-send space: attach, detach, flush (per process, communicator and session).

use super::*;

// ----- buffered-send space -------------------------------------------------------------

/// MPI_Buffer_attach. oxmpi copies buffered messages into memory of its own but
/// charges them against the attached size, so programs see MPI's limits.
/// The memory at `buf` is never read or written (only its size is accounted, and
/// its address is what `MPI_Buffer_detach` hands back), so this is a safe function
/// over the address.
pub fn buffer_attach(buf: *mut u8, size: usize) -> Result<()> {
    let e = engine()?;
    let mut st = e.lock();
    if st.bsend.attached.is_some() {
        return Err(MpiError::new(
            ErrorClass::Buffer,
            "MPI_Buffer_attach: a buffer is already attached",
        ));
    }
    st.bsend.attached = Some((buf as usize, size));
    Ok(())
}

/// [`buffer_attach`] of `buf`, safely: oxmpi only accounts the attached memory (its
/// length; the address is what `MPI_Buffer_detach` hands back) and never reads or
/// writes it, so the borrow need not outlast the call.
pub fn buffer_attach_accounted(buf: &mut [u8]) -> Result<()> {
    buffer_attach(buf.as_mut_ptr(), buf.len())
}

/// MPI_Buffer_detach: waits until buffered messages have left, then returns the
/// buffer's address and size.
pub fn buffer_detach() -> Result<(*mut u8, usize)> {
    let e = engine()?;
    if e.lock().bsend.attached.is_none() {
        return Err(MpiError::new(
            ErrorClass::Buffer,
            "MPI_Buffer_detach: no buffer is attached",
        ));
    }
    e.wait_until(|st| (st.bsend.used == 0).then_some(()));
    let mut st = e.lock();
    let (addr, size) = st.bsend.attached.take().unwrap();
    Ok((addr as *mut u8, size))
}

/// MPI_Comm_attach_buffer (MPI-4.1): a buffer for the buffered sends on one
/// communicator (keyed by its point-to-point context), used before the
/// process's. Accounted like [`buffer_attach`]'s.
pub fn comm_buffer_attach(comm: &Comm, buf: *mut u8, size: usize) -> Result<()> {
    let e = engine()?;
    let mut st = e.lock();
    let pool = st.comm_bsend.entry(comm.context()).or_default();
    if pool.attached.is_some() {
        return Err(MpiError::new(
            ErrorClass::Buffer,
            "MPI_Comm_attach_buffer: a buffer is already attached to this communicator",
        ));
    }
    pool.attached = Some((buf as usize, size));
    Ok(())
}

/// MPI_Comm_detach_buffer: waits until the communicator's buffered messages
/// have left, then returns its buffer's address and size.
pub fn comm_buffer_detach(comm: &Comm) -> Result<(*mut u8, usize)> {
    let e = engine()?;
    let ctx = comm.context();
    if e.lock()
        .comm_bsend
        .get(&ctx)
        .and_then(|p| p.attached)
        .is_none()
    {
        return Err(MpiError::new(
            ErrorClass::Buffer,
            "MPI_Comm_detach_buffer: no buffer is attached to this communicator",
        ));
    }
    e.wait_until(|st| (st.comm_bsend.get(&ctx).map_or(0, |p| p.used) == 0).then_some(()));
    let mut st = e.lock();
    let pool = st.comm_bsend.remove(&ctx).unwrap_or_default();
    let (addr, size) = pool.attached.unwrap_or((0, 0));
    Ok((addr as *mut u8, size))
}

/// The buffer key of session number `session` (`MPI_Session_attach_buffer`):
/// kept in the same table as communicators' buffers, at keys far above any
/// context id.
pub(super) fn session_key(session: u32) -> u32 {
    u32::MAX - session
}

/// MPI_Session_attach_buffer (MPI-4.1): a buffer for the buffered sends on
/// every communicator made from session `session`'s groups that has none of
/// its own (see [`session_comm`]). Accounted like [`buffer_attach`]'s.
pub fn session_buffer_attach(session: u32, buf: *mut u8, size: usize) -> Result<()> {
    let e = engine()?;
    let mut st = e.lock();
    let pool = st.comm_bsend.entry(session_key(session)).or_default();
    if pool.attached.is_some() {
        return Err(MpiError::new(
            ErrorClass::Buffer,
            "MPI_Session_attach_buffer: a buffer is already attached to this session",
        ));
    }
    pool.attached = Some((buf as usize, size));
    Ok(())
}

/// MPI_Session_detach_buffer: waits until the session's buffered messages
/// have left, then returns its buffer's address and size.
pub fn session_buffer_detach(session: u32) -> Result<(*mut u8, usize)> {
    let e = engine()?;
    let key = session_key(session);
    if e.lock()
        .comm_bsend
        .get(&key)
        .and_then(|p| p.attached)
        .is_none()
    {
        return Err(MpiError::new(
            ErrorClass::Buffer,
            "MPI_Session_detach_buffer: no buffer is attached to this session",
        ));
    }
    e.wait_until(|st| (st.comm_bsend.get(&key).map_or(0, |p| p.used) == 0).then_some(()));
    let mut st = e.lock();
    let pool = st.comm_bsend.remove(&key).unwrap_or_default();
    let (addr, size) = pool.attached.unwrap_or((0, 0));
    Ok((addr as *mut u8, size))
}

/// Whether session `session` has a buffer attached.
pub fn session_buffer_attached(session: u32) -> Result<bool> {
    Ok(engine()?
        .lock()
        .comm_bsend
        .get(&session_key(session))
        .is_some_and(|p| p.attached.is_some()))
}

/// MPI_Session_flush_buffer: waits until the session's buffer is empty.
pub fn session_buffer_flush(session: u32) -> Result<()> {
    let e = engine()?;
    let key = Some(session_key(session));
    e.wait_until(|st| (pool_used(st, key) == 0).then_some(()));
    Ok(())
}

/// MPI_Session_iflush_buffer.
pub fn session_buffer_iflush(session: u32) -> Result<Request> {
    let e = engine()?;
    let key = Some(session_key(session));
    Ok(e.with_progress(|st| st.start_task(Box::new(FlushTask { key }))))
}

/// Records that `comm` belongs to session `session` (its buffered sends may
/// use the session's buffer), or, with `None`, that it is gone (a recycled
/// context id must not inherit the session's buffer).
pub fn session_comm(comm: &Comm, session: Option<u32>) -> Result<()> {
    let e = engine()?;
    let mut st = e.lock();
    match session {
        Some(s) => st.bsend_alias.insert(comm.context(), session_key(s)),
        None => st.bsend_alias.remove(&comm.context()),
    };
    Ok(())
}

/// Whether a communicator has a buffer of its own attached (so that freeing it
/// can detach it first, and a recycled context id never inherits it).
pub fn comm_buffer_attached(comm: &Comm) -> Result<bool> {
    Ok(engine()?
        .lock()
        .comm_bsend
        .get(&comm.context())
        .is_some_and(|p| p.attached.is_some()))
}

/// MPI_Buffer_flush / MPI_Comm_flush_buffer: waits until every message buffered
/// in the process's buffer (`None`) or a communicator's has been sent. The
/// buffer stays attached.
pub fn buffer_flush(comm: Option<&Comm>) -> Result<()> {
    let e = engine()?;
    let key = comm.map(|c| c.context());
    {
        let st = e.lock();
        let attached = match key {
            Some(ctx) => st.comm_bsend.get(&ctx).and_then(|p| p.attached).is_some(),
            None => st.bsend.attached.is_some(),
        };
        if !attached {
            // Nothing attached: nothing buffered, so nothing to wait for (MPI
            // allows flushing with no buffer attached).
            return Ok(());
        }
    }
    e.wait_until(|st| (pool_used(st, key) == 0).then_some(()));
    Ok(())
}

pub(super) fn pool_used(st: &crate::engine::State, key: Option<u32>) -> usize {
    match key {
        Some(ctx) => st.comm_bsend.get(&ctx).map_or(0, |p| p.used),
        None => st.bsend.used,
    }
}

/// The non-blocking flush: a request that completes once the buffer is empty.
#[derive(Debug)]
pub(super) struct FlushTask {
    key: Option<u32>,
}

impl crate::engine::Task for FlushTask {
    fn advance(&mut self, st: &mut crate::engine::State) -> Result<bool> {
        Ok(pool_used(st, self.key) == 0)
    }
}

/// MPI_Buffer_iflush / MPI_Comm_iflush_buffer.
pub fn buffer_iflush(comm: Option<&Comm>) -> Result<Request> {
    let e = engine()?;
    let key = comm.map(|c| c.context());
    Ok(e.with_progress(|st| st.start_task(Box::new(FlushTask { key }))))
}

/// Live requests in the engine (diagnostics and leak tests).
pub fn live_requests() -> Result<usize> {
    Ok(engine()?.lock().live_requests())
}

/// Messages waiting in the unexpected queue and their eager bytes held in memory.
pub fn unexpected_footprint() -> Result<(usize, usize)> {
    let e = engine()?;
    let st = e.lock();
    let bytes = st
        .unexp
        .values()
        .map(|m| match &m.body {
            crate::engine::Body::Eager { data, .. } => data.capacity(),
            _ => 0,
        })
        .sum();
    Ok((st.unexp.len(), bytes))
}
