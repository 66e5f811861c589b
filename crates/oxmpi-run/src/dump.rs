//! `mpiexec --dump [JOBID]`: the state of a running job, asked from another
//! terminal (as `py-spy dump` does for Python).
//!
//! Every job's launcher listens on a Unix socket named after its job id (the
//! launcher's process id) in a directory only its user can enter:
//! `$XDG_RUNTIME_DIR/oxmpi-jobs`, else `/tmp/oxmpi-jobs-<uid>` (created `0700`;
//! a directory owned by someone else or open to others is refused). A client
//! connects and reads the report (what SIGUSR1 prints: every rank's current MPI
//! call) until the launcher closes the connection; the job goes on. The socket
//! is removed when the job ends; one left by a launcher that was killed is
//! removed by the next client that finds it refusing connections.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::Duration;

/// The directory of the job sockets of this user (made if missing).
fn dir() -> Result<PathBuf, String> {
    // SAFETY: getuid(2) cannot fail and touches no memory.
    let uid = unsafe { libc::getuid() };
    let d = match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x).join("oxmpi-jobs"),
        None => std::env::temp_dir().join(format!("oxmpi-jobs-{uid}")),
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&d) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot make {}: {e}", d.display())),
    }
    let m = std::fs::symlink_metadata(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    if !m.is_dir() || m.uid() != uid || m.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "{} is not a private directory of this user",
            d.display()
        ));
    }
    Ok(d)
}

/// The launcher's end: a listening socket for job `id`, removed on drop.
pub struct DumpSocket {
    listener: UnixListener,
    path: PathBuf,
}

impl DumpSocket {
    pub fn open(id: u32) -> Result<DumpSocket, String> {
        let path = dir()?.join(id.to_string());
        // A socket of a killed launcher that had our pid: ours now.
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path)
            .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        Ok(DumpSocket { listener, path })
    }

    pub fn listener(&self) -> &UnixListener {
        &self.listener
    }

    /// Answers every waiting client with `report()` (made once per client).
    pub fn serve(&self, mut report: impl FnMut() -> String) {
        loop {
            match self.listener.accept() {
                Ok((mut s, _)) => {
                    // Small report, local peer: a short blocking write, bounded.
                    let _ = s.set_nonblocking(false);
                    let _ = s.set_write_timeout(Some(Duration::from_secs(1)));
                    let _ = s.write_all(report().as_bytes());
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }
}

impl Drop for DumpSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Reads the report of job `id`.
fn ask(id: &str) -> Result<String, std::io::Error> {
    let path = dir().map_err(std::io::Error::other)?.join(id);
    let mut s = UnixStream::connect(&path)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    Ok(text)
}

/// The ids of this user's running jobs (stale sockets are removed on the way).
fn jobs() -> Result<Vec<String>, String> {
    let d = dir()?;
    let mut ids = Vec::new();
    for e in std::fs::read_dir(&d)
        .map_err(|e| format!("{}: {e}", d.display()))?
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_err() {
            continue;
        }
        match UnixStream::connect(e.path()) {
            Ok(_) => ids.push(name),
            Err(err) if err.kind() == ErrorKind::ConnectionRefused => {
                let _ = std::fs::remove_file(e.path());
            }
            Err(_) => {}
        }
    }
    ids.sort_by_key(|i| i.parse::<u32>().unwrap_or(0));
    Ok(ids)
}

/// `mpiexec --dump [JOBID]`: prints the job's state; the exit status.
pub fn client(id: Option<&str>) -> i32 {
    let id = match id {
        Some(id) => id.to_string(),
        None => match jobs() {
            Ok(ids) if ids.len() == 1 => ids[0].clone(),
            Ok(ids) if ids.is_empty() => {
                eprintln!("mpiexec: no running job of this user to dump");
                return 1;
            }
            Ok(ids) => {
                eprintln!("mpiexec: several jobs run; name one: mpiexec --dump JOBID");
                for i in ids {
                    eprintln!("  {i}");
                }
                return 2;
            }
            Err(e) => {
                eprintln!("mpiexec: {e}");
                return 1;
            }
        },
    };
    if id.parse::<u32>().is_err() {
        eprintln!("mpiexec: '{id}' is not a job id (the process id of a job's mpiexec)");
        return 2;
    }
    match ask(&id) {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::ConnectionRefused) => {
            eprintln!("mpiexec: no running job {id} of this user");
            1
        }
        Err(e) => {
            eprintln!("mpiexec: cannot ask job {id} for its state: {e}");
            1
        }
    }
}
