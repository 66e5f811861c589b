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
//! `MPI_Comm_spawn` and `MPI_Comm_spawn_multiple` ask the process manager
//! (PMI-1 `mcmd=spawn`: our mpiexec, Hydra) to start a new job whose
//! processes connect back to a port the root opened (`comm::dynamic::spawn`);
//! `MPI_Comm_get_parent` gives the children that intercommunicator. Over
//! PMI-2 (srun) spawn raises `MPI_ERR_UNSUPPORTED_OPERATION`.
//! `MPI_Publish_name`/`Unpublish_name`/`Lookup_name` use the process
//! manager's name service (PMI-1 `publish_name` & co.).

use std::ffi::{c_char, c_int};

use oxmpi_core::comm::dynamic::SpawnCommand;
use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::conv::errors::{bad, ffi, out, route_to, NO_COMM, R};
use crate::conv::{comm, get_str, new_comm, put_str};
use crate::types::*;

/// The argument vector of one command: `MPI_ARGV_NULL` (NULL) or a
/// NULL-terminated array of C strings.
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of NUL-terminated strings.
unsafe fn argv_of(call: &str, argv: *mut *mut c_char) -> R<Vec<String>> {
    let mut out = Vec::new();
    if argv.is_null() {
        return Ok(out);
    }
    for i in 0.. {
        // SAFETY: the array is NULL-terminated (MPI contract); we stop at the NULL.
        let p = unsafe { *argv.add(i) };
        if p.is_null() {
            break;
        }
        if i > 4096 {
            return Err(bad(
                ErrorClass::Arg,
                call,
                "argv",
                "has more than 4096 entries (missing NULL terminator?)",
            ));
        }
        // SAFETY: a NUL-terminated string (MPI contract).
        out.push(unsafe { get_str(call, "argv", p)? }.to_string());
    }
    Ok(out)
}

/// The key-value pairs of an info object (`MPI_INFO_NULL`: none).
fn info_pairs(call: &str, info: MPI_Info) -> R<Vec<(String, String)>> {
    if info == MPI_INFO_NULL {
        return Ok(Vec::new());
    }
    crate::conv::with_info(call, info, |kv| Ok(kv.clone()))
}

/// One command of a spawn at the root.
///
/// # Safety
/// `command` and `argv` as the C caller passed them.
unsafe fn command_of(
    call: &str,
    command: *const c_char,
    argv: *mut *mut c_char,
    maxprocs: c_int,
    info: MPI_Info,
) -> R<SpawnCommand> {
    // SAFETY: forwarded caller contract.
    let execname = unsafe { get_str(call, "command", command)? }.to_string();
    if execname.is_empty() {
        return Err(bad(ErrorClass::Arg, call, "command", "is empty"));
    }
    if maxprocs <= 0 {
        return Err(bad(
            ErrorClass::Arg,
            call,
            "maxprocs",
            format!("{maxprocs}: at least one process must be asked for"),
        ));
    }
    // SAFETY: forwarded caller contract.
    let args = unsafe { argv_of(call, argv)? };
    Ok(SpawnCommand {
        execname,
        args,
        nprocs: maxprocs as u32,
        info: info_pairs(call, info)?,
    })
}

/// Starts the commands (significant at the root only), fills the error codes
/// and the intercommunicator.
unsafe fn spawn_common(
    call: &'static str,
    commands: R<Vec<SpawnCommand>>,
    root: c_int,
    c: MPI_Comm,
    intercomm: *mut MPI_Comm,
    errcodes: *mut c_int,
) -> R<()> {
    // SAFETY: `intercomm` is the call's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
    let o = unsafe { out(call, "intercomm", intercomm)? };
    *o = MPI_COMM_NULL;
    let cm = comm(c, call)?;
    oxmpi_core::coll::check_root(call, &cm, root)?;
    // A bad argument at the root must not leave the others waiting: the root
    // passes no command, and the core reports its error to everyone.
    let commands = commands.map_err(|f| {
        let class = crate::conv::errors::class_of(f.code)
            .and_then(|c| ErrorClass::ALL.iter().copied().find(|x| *x as c_int == c))
            .unwrap_or(ErrorClass::Arg);
        oxmpi_core::error::MpiError::new(class, f.message)
    });
    let (ic, codes) = oxmpi_core::comm::dynamic::spawn(call, commands, root, &cm)?;
    if !errcodes.is_null() {
        for (i, code) in codes.iter().enumerate() {
            // SAFETY: the standard sizes array_of_errcodes to the processes asked for.
            unsafe {
                *errcodes.add(i) = if *code == 0 {
                    MPI_SUCCESS
                } else {
                    MPI_ERR_SPAWN
                }
            };
        }
    }
    *o = new_comm(ic, c);
    if codes.iter().any(|&x| x != 0) {
        return Err(bad(ErrorClass::Spawn, call, "maxprocs", "fewer processes were started than asked for (the soft info key allowed it; see array_of_errcodes)"));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_spawn(
    command: *const c_char,
    argv: *mut *mut c_char,
    maxprocs: c_int,
    info: MPI_Info,
    root: c_int,
    c: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Comm_spawn";
    ffi(CALL, c, || {
        // SAFETY: pointers as the C caller passed them (significant at the root).
        let cmd = unsafe { command_of(CALL, command, argv, maxprocs, info) }.map(|x| vec![x]);
        // SAFETY: as above.
        unsafe { spawn_common(CALL, cmd, root, c, intercomm, array_of_errcodes) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_spawn_multiple(
    count: c_int,
    array_of_commands: *mut *mut c_char,
    array_of_argv: *mut *mut *mut c_char,
    array_of_maxprocs: *const c_int,
    array_of_info: *const MPI_Info,
    root: c_int,
    c: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Comm_spawn_multiple";
    ffi(CALL, c, || {
        let cmds = (|| {
            if count <= 0 {
                return Err(bad(
                    ErrorClass::Arg,
                    CALL,
                    "count",
                    format!("{count}: at least one command is needed"),
                ));
            }
            let n = count as usize;
            // SAFETY: `count` entries each (MPI contract); NULL rejected.
            let commands = unsafe {
                crate::conv::errors::array(
                    CALL,
                    "array_of_commands",
                    array_of_commands as *const *mut c_char,
                    n,
                )?
            };
            // SAFETY: as above.
            let maxprocs = unsafe {
                crate::conv::errors::array(CALL, "array_of_maxprocs", array_of_maxprocs, n)?
            };
            let infos =
                // SAFETY: as above.
                unsafe { crate::conv::errors::array(CALL, "array_of_info", array_of_info, n)? };
            let mut v = Vec::with_capacity(n);
            for i in 0..n {
                let argv = if array_of_argv.is_null() {
                    std::ptr::null_mut()
                } else {
                    // SAFETY: `count` entries when not MPI_ARGVS_NULL.
                    unsafe { *array_of_argv.add(i) }
                };
                // SAFETY: the i-th command's pointers as the caller passed them.
                v.push(unsafe { command_of(CALL, commands[i], argv, maxprocs[i], infos[i])? });
            }
            Ok(v)
        })();
        // SAFETY: pointers as the C caller passed them.
        unsafe { spawn_common(CALL, cmds, root, c, intercomm, array_of_errcodes) }
    })
}

/// The handle MPI_Comm_get_parent gave out (kept so every call returns the
/// same handle until the communicator is freed or disconnected).
static PARENT_HANDLE: std::sync::Mutex<Option<MPI_Comm>> = std::sync::Mutex::new(None);

/// MPI_Comm_get_parent (abi.txt `out(parent)`: the generated `PMPI_x` checks `parent` first).
pub fn comm_get_parent(_call: &'static str, o: &mut MPI_Comm) -> R<()> {
    let mut h = PARENT_HANDLE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(old) = *h {
        if crate::conv::handles::state().comms.get(old).is_some() {
            *o = old;
            return Ok(());
        }
        // Freed or disconnected: there is no parent any more.
        oxmpi_core::comm::dynamic::forget_parent();
    }
    *o = match oxmpi_core::comm::dynamic::parent() {
        Some(p) => {
            let nh = new_comm(p, MPI_COMM_WORLD);
            *h = Some(nh);
            nh
        }
        None => MPI_COMM_NULL,
    };
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_disconnect(c: *mut MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_disconnect";
    let rc = ffi(CALL, NO_COMM, || {
        // SAFETY: `comm` is MPI_Comm_disconnect's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "comm", c)? };
        route_to(*h);
        if *h == MPI_COMM_WORLD || *h == MPI_COMM_SELF {
            return Err(bad(
                ErrorClass::Comm,
                CALL,
                "comm",
                "a predefined communicator cannot be disconnected",
            ));
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

/// MPI_Open_port (abi.txt `nonnull(port_name)`: the generated `PMPI_x` checks `port_name` first).
///
/// # Safety
/// The C caller's arguments of MPI_Open_port, as MPI defines them.
pub unsafe fn open_port(_call: &'static str, _info: MPI_Info, port_name: *mut c_char) -> R<()> {
    let name = oxmpi_core::comm::dynamic::open_port()?;
    // SAFETY: the standard sizes port_name to MPI_MAX_PORT_NAME bytes.
    unsafe { put_str(port_name, &name, MPI_MAX_PORT_NAME as usize) };
    Ok(())
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
        crate::conv::with_info("MPI_Comm_connect", info, |kv| {
            Ok(kv
                .iter()
                .find(|(k, _)| k == "timeout")
                .map(|(_, v)| v.clone()))
        })
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse::<f64>().ok())
    };
    let secs = from_info
        .or_else(|| {
            std::env::var("OXMPI_CONNECT_TIMEOUT")
                .ok()
                .and_then(|v| v.parse().ok())
        })
        .filter(|s: &f64| s.is_finite() && *s >= 0.0)
        .unwrap_or(60.0);
    std::time::Duration::from_secs_f64(secs)
}

/// Shared body of accept and connect.
///
/// # Safety
/// `port_name` is NULL or a NUL-terminated string (MPI contract).
unsafe fn accept_or_connect(
    call: &'static str,
    port_name: *const c_char,
    info: MPI_Info,
    root: c_int,
    c: MPI_Comm,
    o: &mut MPI_Comm,
    connect: bool,
) -> R<()> {
    {
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
    }
}

/// MPI_Comm_accept (abi.txt `made(newcomm)`: the generated `PMPI_x` checks `newcomm`
/// first and sets it to MPI_COMM_NULL).
///
/// # Safety
/// As `accept_or_connect`.
pub unsafe fn comm_accept(
    call: &'static str,
    port_name: *const c_char,
    info: MPI_Info,
    root: c_int,
    c: MPI_Comm,
    o: &mut MPI_Comm,
) -> R<()> {
    // SAFETY: this function's contract.
    unsafe { accept_or_connect(call, port_name, info, root, c, o, false) }
}

/// MPI_Comm_connect (abi.txt `made(newcomm)`).
///
/// # Safety
/// As `accept_or_connect`.
pub unsafe fn comm_connect(
    call: &'static str,
    port_name: *const c_char,
    info: MPI_Info,
    root: c_int,
    c: MPI_Comm,
    o: &mut MPI_Comm,
) -> R<()> {
    // SAFETY: this function's contract.
    unsafe { accept_or_connect(call, port_name, info, root, c, o, true) }
}

/// MPI_Comm_join (abi.txt `made(intercomm) route(MPI_COMM_SELF)`: the generated `PMPI_x`
/// checks `intercomm` first and sets it to MPI_COMM_NULL).
pub fn comm_join(call: &'static str, fd: c_int, o: &mut MPI_Comm) -> R<()> {
    {
        if fd < 0 {
            return Err(bad(
                ErrorClass::Arg,
                call,
                "fd",
                format!("{fd} is not a file descriptor"),
            ));
        }
        // SAFETY: dup(2) of the descriptor number the caller passed; nothing is owned on failure.
        let mine = unsafe { libc::dup(fd) };
        if mine < 0 {
            return Err(bad(
                ErrorClass::Arg,
                call,
                "fd",
                format!("{fd}: {}", std::io::Error::last_os_error()),
            ));
        }
        // SAFETY: `mine` is a fresh descriptor that nothing else owns (dup above).
        let stream = unsafe { <std::net::TcpStream as std::os::fd::FromRawFd>::from_raw_fd(mine) };
        let ic = oxmpi_core::comm::dynamic::join(stream)?;
        *o = new_comm(ic, MPI_COMM_SELF);
        Ok(())
    }
}

/// Shared body of the three name-service calls.
unsafe fn name_call(
    call: &'static str,
    op: oxmpi_core::comm::dynamic::NameOp,
    service_name: *const c_char,
    port_in: *const c_char,
    port_out: *mut c_char,
) -> c_int {
    ffi(call, NO_COMM, || {
        // SAFETY: a NUL-terminated string by the C contract (NULL rejected).
        let service = unsafe { get_str(call, "service_name", service_name)? };
        let port = if port_in.is_null() {
            ""
        } else {
            // SAFETY: as above.
            unsafe { get_str(call, "port_name", port_in)? }
        };
        if !port_out.is_null() {
            // An empty answer unless the lookup succeeds.
            // SAFETY: MPI_Lookup_name's port_name holds MPI_MAX_PORT_NAME bytes.
            unsafe { *port_out = 0 };
        } else if op == oxmpi_core::comm::dynamic::NameOp::Lookup {
            return Err(bad(ErrorClass::Arg, call, "port_name", "is NULL"));
        }
        let r = oxmpi_core::comm::dynamic::name_service(call, op, service, port)?;
        if let (Some(p), false) = (r, port_out.is_null()) {
            // SAFETY: as above.
            unsafe { put_str(port_out, &p, MPI_MAX_PORT_NAME as usize) };
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Publish_name(
    service_name: *const c_char,
    _info: MPI_Info,
    port_name: *const c_char,
) -> c_int {
    if port_name.is_null() {
        return ffi("MPI_Publish_name", NO_COMM, || {
            Err(bad(
                ErrorClass::Arg,
                "MPI_Publish_name",
                "port_name",
                "is NULL",
            ))
        });
    }
    // SAFETY: the caller's strings, checked in the shared body.
    unsafe {
        name_call(
            "MPI_Publish_name",
            oxmpi_core::comm::dynamic::NameOp::Publish,
            service_name,
            port_name,
            std::ptr::null_mut(),
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Unpublish_name(
    service_name: *const c_char,
    _info: MPI_Info,
    port_name: *const c_char,
) -> c_int {
    // SAFETY: the caller's strings, checked in the shared body.
    unsafe {
        name_call(
            "MPI_Unpublish_name",
            oxmpi_core::comm::dynamic::NameOp::Unpublish,
            service_name,
            port_name,
            std::ptr::null_mut(),
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Lookup_name(
    service_name: *const c_char,
    _info: MPI_Info,
    port_name: *mut c_char,
) -> c_int {
    // SAFETY: the caller's strings, checked in the shared body.
    unsafe {
        name_call(
            "MPI_Lookup_name",
            oxmpi_core::comm::dynamic::NameOp::Lookup,
            service_name,
            std::ptr::null(),
            port_name,
        )
    }
}
