//! MPI-4 partitioned point-to-point: MPI_Psend_init, MPI_Precv_init,
//! MPI_Pready (+ `_range`, `_list`), MPI_Parrived. The requests are
//! persistent requests of the usual kind (started by MPI_Start/MPI_Startall,
//! completed by the wait/test family, freed by MPI_Request_free) whose start
//! is the core's partitioned operation (`oxmpi_core::pt2pt::partitioned`);
//! MPI_Pready and MPI_Parrived find the operation behind a request handle in
//! a table of weak references (a freed request's entry is dead).

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, Weak};

use oxmpi_core::buf::{RecvBuf, SendBuf};
use oxmpi_core::error::ErrorClass;
use oxmpi_core::pt2pt::partitioned::{PartitionedReceive, PartitionedSend};
use oxmpi_core::Request;

use crate::abi::*;
use crate::conv::errors::{bad, ffi, route_to, NO_COMM, R};
use crate::conv::handles::{state, PersistentOp};
use crate::conv::large::to_usize;
use crate::conv::{comm, committed};
use crate::types::*;

enum Part {
    Send(Weak<PartitionedSend>),
    Recv(Weak<PartitionedReceive>),
}

static PARTS: Mutex<Option<HashMap<MPI_Request, Part>>> = Mutex::new(None);

fn parts() -> std::sync::MutexGuard<'static, Option<HashMap<MPI_Request, Part>>> {
    PARTS.lock().unwrap_or_else(|p| p.into_inner())
}

fn info_ok(call: &str, info: MPI_Info) -> R<()> {
    if info == MPI_INFO_NULL || info == MPI_INFO_ENV || state().infos.get(info).is_some() {
        Ok(())
    } else {
        Err(crate::conv::errors::bad_code(
            MPI_ERR_INFO,
            call,
            "info",
            format!("{info:#x} is not a valid info object"),
        ))
    }
}

/// Makes the persistent request whose start runs `start` and records `part`.
fn new_part_request(
    c: MPI_Comm,
    part: Part,
    start: impl Fn() -> oxmpi_core::error::Result<Request> + Send + Sync + 'static,
) -> MPI_Request {
    let starter: crate::conv::handles::Starter = Arc::new(move |r: *mut MPI_Request| {
        match start() {
            Ok(q) => {
                // SAFETY: `r` is start_one's own local handle slot, writable.
                unsafe { *r = crate::conv::new_request(q, c, None) };
                MPI_SUCCESS
            }
            Err(e) => crate::abi::error_class_value(e.class),
        }
    });
    let h = crate::conv::new_request(Request::NULL, c, Some(PersistentOp::Part(starter)));
    parts().get_or_insert_with(HashMap::new).insert(h, part);
    h
}

/// MPI_Psend_init (abi.txt `out(request)`: the generated `PMPI_x` checks `request` first).
///
/// # Safety
/// The C caller's arguments of MPI_Psend_init, as MPI defines them.
#[allow(clippy::too_many_arguments)] // the C call's parameters, and `call`
pub unsafe fn psend_init(
    call: &'static str,
    buf: *const c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    c: MPI_Comm,
    info: MPI_Info,
    o: &mut MPI_Request,
) -> R<()> {
    *o = MPI_REQUEST_NULL;
    let cm = comm(c, call)?;
    info_ok(call, info)?;
    let n = to_usize(call, "partitions", partitions)?;
    let count = to_usize(call, "count", count)?;
    let dt = committed(datatype, call, "datatype")?;
    crate::conv::check_buf(call, "buf", buf, n.saturating_mul(count), &dt)?;
    let total = n.saturating_mul(count);
    // SAFETY: MPI's contract for partitioned sends: the buffer (checked above to hold the elements) stays valid while the request exists.
    let b = unsafe { SendBuf::from_raw(buf as *const u8, total, Some(&dt)) };
    let p = PartitionedSend::init(&cm, b, n, count, dest, tag)?;
    let w = Arc::downgrade(&p);
    *o = new_part_request(c, Part::Send(w), move || p.start());
    Ok(())
}

/// MPI_Precv_init (abi.txt `out(request)`: the generated `PMPI_x` checks `request` first).
///
/// # Safety
/// The C caller's arguments of MPI_Precv_init, as MPI defines them.
#[allow(clippy::too_many_arguments)] // the C call's parameters, and `call`
pub unsafe fn precv_init(
    call: &'static str,
    buf: *mut c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    c: MPI_Comm,
    info: MPI_Info,
    o: &mut MPI_Request,
) -> R<()> {
    *o = MPI_REQUEST_NULL;
    let cm = comm(c, call)?;
    info_ok(call, info)?;
    let n = to_usize(call, "partitions", partitions)?;
    let count = to_usize(call, "count", count)?;
    let dt = committed(datatype, call, "datatype")?;
    crate::conv::check_buf(call, "buf", buf, n.saturating_mul(count), &dt)?;
    let total = n.saturating_mul(count);
    // SAFETY: MPI's contract for partitioned receives: the buffer (checked above to hold the elements) stays valid, and the library's, while the request exists.
    let b = unsafe { RecvBuf::from_raw(buf as *mut u8, total, Some(&dt)) };
    let p = PartitionedReceive::init(&cm, b, n, count, source, tag)?;
    let w = Arc::downgrade(&p);
    *o = new_part_request(c, Part::Recv(w), move || p.start());
    Ok(())
}

/// The partitioned send behind `h`, which must be active.
fn active_send(call: &str, h: MPI_Request) -> R<Arc<PartitionedSend>> {
    let (active, c) = {
        let st = state();
        let e = st.requests.get(h).ok_or_else(|| {
            bad(
                ErrorClass::Request,
                call,
                "request",
                format!("{h:#x} is not a valid request"),
            )
        })?;
        (!e.inner.is_null(), e.comm)
    };
    route_to(c);
    let p = match parts().as_ref().and_then(|m| m.get(&h)) {
        Some(Part::Send(w)) => w.upgrade(),
        _ => None,
    }
    .ok_or_else(|| {
        bad(
            ErrorClass::Request,
            call,
            "request",
            "not a partitioned send request (MPI_Psend_init)",
        )
    })?;
    if !active {
        return Err(bad(
            ErrorClass::Request,
            call,
            "request",
            "the partitioned send is not active (MPI_Start it first)",
        ));
    }
    Ok(p)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pready(partition: c_int, request: MPI_Request) -> c_int {
    const CALL: &str = "MPI_Pready";
    ffi(CALL, NO_COMM, || {
        Ok(active_send(CALL, request)?.pready(CALL, [partition as i64])?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pready_range(lo: c_int, hi: c_int, request: MPI_Request) -> c_int {
    const CALL: &str = "MPI_Pready_range";
    ffi(CALL, NO_COMM, || {
        let p = active_send(CALL, request)?;
        if lo > hi {
            return Err(bad(
                ErrorClass::Arg,
                CALL,
                "partition_low",
                format!("{lo} is above partition_high {hi}"),
            ));
        }
        Ok(p.pready(CALL, lo as i64..=hi as i64)?)
    })
}

/// MPI_Pready_list (abi.txt `array(array_of_partitions, length)`: the generated `PMPI_x`
/// checks `length` and the array first).
pub fn pready_list(
    call: &'static str,
    _length: c_int,
    array_of_partitions: &[c_int],
    request: MPI_Request,
) -> R<()> {
    let p = active_send(call, request)?;
    Ok(p.pready(call, array_of_partitions.iter().map(|&x| x as i64))?)
}

/// MPI_Parrived (abi.txt `out(flag)`: the generated `PMPI_x` checks `flag` first).
pub fn parrived(
    call: &'static str,
    request: MPI_Request,
    partition: c_int,
    f: &mut c_int,
) -> R<()> {
    let (inner, c) = {
        let st = state();
        let e = st.requests.get(request).ok_or_else(|| {
            bad(
                ErrorClass::Request,
                call,
                "request",
                format!("{request:#x} is not a valid request"),
            )
        })?;
        (e.inner, e.comm)
    };
    route_to(c);
    let p = match parts().as_ref().and_then(|m| m.get(&request)) {
        Some(Part::Recv(w)) => w.upgrade(),
        _ => None,
    }
    .ok_or_else(|| {
        bad(
            ErrorClass::Request,
            call,
            "request",
            "not a partitioned receive request (MPI_Precv_init)",
        )
    })?;
    *f = p.parrived(inner, partition as i64)? as c_int;
    Ok(())
}
