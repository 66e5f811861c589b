//! Dynamic process management: ports, connect/accept, join and disconnect
//! (over oxmpi-core's `comm::dynamic`), and the calls oxmpi does not do yet.
//!
//! `MPI_Open_port` gives a name `oxmpi-port://SECRET@IP:PORT`; the secret
//! authenticates the connecting root (a forged name is refused with
//! `MPI_ERR_PORT`). `MPI_Comm_connect` waits for an acceptor for
//! `OXMPI_CONNECT_TIMEOUT` seconds (default 60) or the info key `timeout`.
//! `MPI_Comm_disconnect` waits for the traffic with the other group, then
//! closes the connections to its processes and frees the communicator.
//!
//! Starting processes at run time is not built yet: `MPI_Comm_spawn` and
//! `MPI_Comm_spawn_multiple` raise `MPI_ERR_UNSUPPORTED_OPERATION` naming the
//! call (through the communicator's error handler), and no process has a
//! parent (`MPI_Comm_get_parent` gives `MPI_COMM_NULL`, as the standard says
//! for a process not started by spawn).

use std::ffi::{c_char, c_int};

use oxmpi_core::error::MpiError;

use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::env::{comm, get_str, new_comm, put_str};
use crate::errors::{NO_COMM, bad, ffi, out, route_to};
use crate::types::*;

/// Fills the error-code array (unless `MPI_ERRCODES_IGNORE`) and clears the intercommunicator.
unsafe fn spawn_failed(n: c_int, intercomm: *mut MPI_Comm, errcodes: *mut c_int) {
    if !intercomm.is_null() {
        // SAFETY: the caller passes a writable MPI_Comm.
        unsafe { *intercomm = MPI_COMM_NULL };
    }
    if !errcodes.is_null() {
        for i in 0..n.max(0) as usize {
            // SAFETY: the standard sizes errcodes to the total maxprocs.
            unsafe { *errcodes.add(i) = MPI_ERR_UNSUPPORTED_OPERATION };
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_spawn(
    _command: *const c_char,
    _argv: *mut *mut c_char,
    maxprocs: c_int,
    _info: MPI_Info,
    _root: c_int,
    comm: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Comm_spawn";
    ffi(CALL, comm, || {
        // SAFETY: pointers as the C caller passed them.
        unsafe { spawn_failed(maxprocs, intercomm, array_of_errcodes) };
        Err(MpiError::unsupported(CALL, "starting processes at run time").into())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_spawn_multiple(
    count: c_int,
    _array_of_commands: *mut *mut c_char,
    _array_of_argv: *mut *mut *mut c_char,
    array_of_maxprocs: *const c_int,
    _array_of_info: *const MPI_Info,
    _root: c_int,
    comm: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Comm_spawn_multiple";
    ffi(CALL, comm, || {
        let mut total = 0;
        if !array_of_maxprocs.is_null() {
            for i in 0..count.max(0) as usize {
                // SAFETY: `count` entries, as the standard requires.
                total += unsafe { *array_of_maxprocs.add(i) }.max(0);
            }
        }
        // SAFETY: pointers as the C caller passed them.
        unsafe { spawn_failed(total, intercomm, array_of_errcodes) };
        Err(MpiError::unsupported(CALL, "starting processes at run time").into())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_get_parent(parent: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_get_parent";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `parent` is MPI_Comm_get_parent's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "parent", parent)? } = MPI_COMM_NULL;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_disconnect(c: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_disconnect";
    let rc = ffi(CALL, NO_COMM, || {
        // SAFETY: `comm` is MPI_Comm_disconnect's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "comm", c)? };
        route_to(*h);
        if *h == MPI_COMM_WORLD || *h == MPI_COMM_SELF {
            return Err(bad(ErrorClass::Comm, CALL, "comm", "a predefined communicator cannot be disconnected"));
        }
        let cm = comm(*h, CALL)?;
        oxmpi_core::comm::dynamic::disconnect(&cm)?;
        Ok(())
    });
    if rc != MPI_SUCCESS {
        return rc;
    }
    // SAFETY: same pointer, checked above; freeing is the rest of disconnect.
    unsafe { crate::comm::PMPI_Comm_free(c) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Open_port(_info: MPI_Info, port_name: *mut c_char) -> c_int {
    const CALL: &str = "MPI_Open_port";
    ffi(CALL, NO_COMM, || {
        if port_name.is_null() {
            return Err(bad(ErrorClass::Arg, CALL, "port_name", "is NULL"));
        }
        let name = oxmpi_core::comm::dynamic::open_port()?;
        // SAFETY: the standard sizes port_name to MPI_MAX_PORT_NAME bytes.
        unsafe { put_str(port_name, &name, MPI_MAX_PORT_NAME as usize) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Close_port(port_name: *const c_char) -> c_int {
    const CALL: &str = "MPI_Close_port";
    ffi(CALL, NO_COMM, || {
        // SAFETY: a NUL-terminated string by the C contract (NULL rejected).
        let name = unsafe { get_str(CALL, "port_name", port_name)? };
        oxmpi_core::comm::dynamic::close_port(name)?;
        Ok(())
    })
}

/// The connect timeout: the info key `timeout` (seconds), else
/// `OXMPI_CONNECT_TIMEOUT`, else 60 s.
fn connect_timeout(info: MPI_Info) -> std::time::Duration {
    let from_info = if info == MPI_INFO_NULL {
        None
    } else {
        crate::misc::with_info("MPI_Comm_connect", info, |kv| Ok(kv.iter().find(|(k, _)| k == "timeout").map(|(_, v)| v.clone())))
            .ok()
            .flatten()
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    let secs = from_info
        .or_else(|| std::env::var("OXMPI_CONNECT_TIMEOUT").ok().and_then(|v| v.parse().ok()))
        .filter(|s: &f64| s.is_finite() && *s >= 0.0)
        .unwrap_or(60.0);
    std::time::Duration::from_secs_f64(secs)
}

/// Shared body of accept and connect.
unsafe fn accept_or_connect(call: &'static str, port_name: *const c_char, info: MPI_Info, root: c_int, c: MPI_Comm, newcomm: *mut MPI_Comm, connect: bool) -> c_int {
    ffi(call, c, || {
        // SAFETY: `newcomm` is the call's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "newcomm", newcomm)? };
        *o = MPI_COMM_NULL;
        let cm = comm(c, call)?;
        oxmpi_core::coll::check_root(call, &cm, root)?;
        // port_name is significant at the root only.
        let name = if cm.rank() == root {
            // SAFETY: a NUL-terminated string by the C contract (NULL rejected).
            unsafe { get_str(call, "port_name", port_name)? }.to_string()
        } else {
            String::new()
        };
        let ic = if connect {
            oxmpi_core::comm::dynamic::connect(&name, root, &cm, connect_timeout(info))?
        } else {
            oxmpi_core::comm::dynamic::accept(&name, root, &cm)?
        };
        *o = new_comm(ic, c);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_accept(port_name: *const c_char, info: MPI_Info, root: c_int, c: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    // SAFETY: the caller's arguments, checked in the shared body.
    unsafe { accept_or_connect("MPI_Comm_accept", port_name, info, root, c, newcomm, false) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_connect(port_name: *const c_char, info: MPI_Info, root: c_int, c: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    // SAFETY: the caller's arguments, checked in the shared body.
    unsafe { accept_or_connect("MPI_Comm_connect", port_name, info, root, c, newcomm, true) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_join(fd: c_int, intercomm: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_join";
    ffi(CALL, MPI_COMM_SELF, || {
        // SAFETY: `intercomm` is MPI_Comm_join's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "intercomm", intercomm)? };
        *o = MPI_COMM_NULL;
        let ic = oxmpi_core::comm::dynamic::join(fd)?;
        *o = new_comm(ic, MPI_COMM_SELF);
        Ok(())
    })
}
