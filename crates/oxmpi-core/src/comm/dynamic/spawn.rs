//! MPI_Comm_spawn(_multiple), the spawned job's connection to its parents
//! (MPI_Comm_get_parent), and the name service (MPI_Publish_name and friends).

use super::*;

/// The KVS key under which a spawned job finds its parents' port (MPICH's name,
/// so Hydra-started jobs agree).
pub const PARENT_PORT_KEY: &str = "PARENT_ROOT_PORT_NAME";

/// The intercommunicator to the parents of a spawned job (MPI_Comm_get_parent).
pub(super) static PARENT: Mutex<Option<Comm>> = Mutex::new(None);

/// The parents' intercommunicator, if this job was spawned and it was not
/// disconnected.
pub fn parent() -> Option<Comm> {
    PARENT.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Forgets the parents' intercommunicator (it was disconnected or freed).
pub fn forget_parent() {
    *PARENT.lock().unwrap_or_else(|p| p.into_inner()) = None;
}

/// In MPI_Init of a spawned process (`PMI_SPAWNED=1`, set by our mpiexec and
/// Hydra): the job connects to the port its parents put into its KVS.
pub(crate) fn connect_to_parent() -> Result<()> {
    if std::env::var("PMI_SPAWNED").map_or(true, |v| v != "1") {
        return Ok(());
    }
    let e = crate::runtime::engine()?;
    let port = e.pmi_get(PARENT_PORT_KEY)?;
    let Some(port) = port else {
        return Ok(());
    };
    let world = e.world().clone();
    let how = (world.rank() == 0).then_some(Bootstrap::Connect(&port, Duration::from_secs(60)));
    let inter = connect_groups("MPI_Init", &world, 0, how)?;
    *PARENT.lock().unwrap_or_else(|p| p.into_inner()) = Some(inter);
    Ok(())
}

/// MPI_Comm_spawn / MPI_Comm_spawn_multiple: `commands` matter at `root`
/// only. The root opens a port, asks the process manager to start the
/// processes with the port in their KVS, and the group accepts their
/// connection. Returns the intercommunicator and one error code per process
/// asked for (0 = started). A bad command at the root (`Err`) fails the call
/// on every process.
pub fn spawn(
    call: &'static str,
    commands: Result<Vec<SpawnCommand>>,
    root: i32,
    comm: &Comm,
) -> Result<(Comm, Vec<i32>)> {
    let e = crate::runtime::engine()?;
    if comm.is_inter() {
        return Err(MpiError::arg(
            ErrorClass::Comm,
            call,
            "comm",
            "an intercommunicator; an intracommunicator is required",
        ));
    }
    crate::coll::check_root(call, comm, root)?;
    // The root's outcome (port or error, error codes) goes to every process.
    let mut info: Vec<u8> = Vec::new();
    let mut port = String::new();
    if comm.rank() == root {
        let started = commands
            .and_then(|commands| open_port().map(|p| (p, commands)))
            .and_then(|(p, commands)| {
                let preput = vec![(PARENT_PORT_KEY.to_string(), p.clone())];
                match e.pmi_spawn(call, &commands, &preput) {
                    // Hydra sends no per-process codes: success means all started.
                    Ok(codes) if codes.is_empty() => {
                        Ok((p, vec![0; commands.iter().map(|c| c.nprocs as usize).sum()]))
                    }
                    Ok(codes) => Ok((p, codes)),
                    Err(err) => {
                        let _ = close_port(&p);
                        Err(err)
                    }
                }
            });
        match started {
            Ok((p, codes)) => {
                info.push(0);
                for c in &codes {
                    info.extend_from_slice(&c.to_le_bytes());
                }
                port = p;
            }
            Err(err) => {
                info.push(1);
                info.extend_from_slice(&(err.class as i32).to_le_bytes());
                info.extend_from_slice(err.message.as_bytes());
            }
        }
    }
    bcast_bytes(comm, root, &mut info)?;
    if info.first() != Some(&0) {
        let class = info
            .get(1..5)
            .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
            .unwrap_or(ErrorClass::Other as i32);
        let class = ErrorClass::ALL
            .iter()
            .copied()
            .find(|c| *c as i32 == class)
            .unwrap_or(ErrorClass::Spawn);
        return Err(MpiError::new(
            class,
            String::from_utf8_lossy(info.get(5..).unwrap_or_default()).into_owned(),
        ));
    }
    let codes: Vec<i32> = info[1..]
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let how = (comm.rank() == root).then_some(Bootstrap::Accept(&port));
    let inter = connect_groups(call, comm, root, how);
    if comm.rank() == root {
        let _ = close_port(&port);
    }
    Ok((inter?, codes))
}

/// A name-service request (MPI_Publish_name, MPI_Unpublish_name, MPI_Lookup_name).
pub use oxmpi_pmi::NameOp;

/// MPI_Publish_name / MPI_Unpublish_name / MPI_Lookup_name through the process
/// manager's name service (our mpiexec's is shared by every job of the user on
/// the host; Hydra's needs its name server). A lookup returns the port.
pub fn name_service(call: &str, op: NameOp, service: &str, port: &str) -> Result<Option<String>> {
    let e = crate::runtime::engine()?;
    let bad = |arg: &str, why: &str| MpiError::arg(ErrorClass::Arg, call, arg, why);
    if service.is_empty() {
        return Err(bad("service_name", "is empty"));
    }
    if service.len() > 255
        || service
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '=' || c == ';')
    {
        return Err(MpiError::arg(ErrorClass::Service, call, "service_name", format!("{service:?}: a service name has at most 255 characters, none of them spaces, '=' or ';'")));
    }
    if op == NameOp::Publish
        && (port.is_empty()
            || port
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || c == ';'))
    {
        return Err(MpiError::arg(
            ErrorClass::Port,
            call,
            "port_name",
            format!("{port:?} is not a port name"),
        ));
    }
    let r = e.pmi_name(call, op, service, port)?;
    if op == NameOp::Lookup && r.as_deref().is_none_or(str::is_empty) {
        return Err(MpiError::new(
            ErrorClass::Name,
            format!("{call}: service {service:?} is not published"),
        ));
    }
    Ok(r)
}
