//! MPI-IO over POSIX files.
//!
//! A [`File`] is an open POSIX file shared by the ranks of a communicator
//! (a private duplicate, so the file's traffic never meets the program's).
//! Data are moved with `pread`/`pwrite` (std's `FileExt`) through the view
//! ([`view`]): the memory buffer is packed by the datatype engine into the
//! view's data stream, converted to the data representation (native,
//! internal, external32, or a user's), and the stream is mapped to file
//! pieces; nothing is ever written outside the view.
//!
//! - Positioning: explicit offsets, the individual file pointer (per handle,
//!   in etypes of the current view), and the shared file pointer: an 8-byte
//!   counter in a hidden file next to the data file, read-modified-written
//!   under an `fcntl` write lock, so every rank (on any host sharing the file
//!   system) sees one pointer. Ordered accesses take their offsets from one
//!   fetch-and-add by rank 0 and a prefix sum.
//! - Collective calls use two-phase I/O ([`twophase`]) unless the hints
//!   disable it or atomic mode is on.
//! - Atomic mode takes an `fcntl` byte-range lock over each access.
//! - Non-blocking collective and split-collective calls return at once: the
//!   access is queued to the file's I/O worker ([`worker`]), a thread that runs
//!   the file's collective accesses in the order they were started (the order
//!   every rank starts them in), so ranks may communicate between the start
//!   and the wait. The request is an engine task that completes when the
//!   worker hands its outcome over. Other collective calls on the file wait
//!   until the worker's queue is empty first. Independent non-blocking calls
//!   need no other rank: they run when started and hand back a completed
//!   request, which MPI permits.
//! - Errors come from errno with the path in the message ([`sys::class_of`]).

pub mod sys;
pub mod twophase;
pub mod view;
pub mod worker;

mod access;
mod datarep;
mod hints;
mod pointer;

use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::buf::{RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, Result};
use crate::request::{Request, Status};

pub use view::{Datarep, UserDatarep, View};

/// `MPI_MODE_*` values (the MPI-5.0 standard ABI's).
pub mod mode {
    pub const APPEND: i32 = 1;
    pub const CREATE: i32 = 2;
    pub const DELETE_ON_CLOSE: i32 = 4;
    pub const EXCL: i32 = 8;
    pub const RDONLY: i32 = 16;
    pub const RDWR: i32 = 32;
    pub const SEQUENTIAL: i32 = 64;
    pub const UNIQUE_OPEN: i32 = 128;
    pub const WRONLY: i32 = 256;
    pub const ALL: i32 = APPEND
        | CREATE
        | DELETE_ON_CLOSE
        | EXCL
        | RDONLY
        | RDWR
        | SEQUENTIAL
        | UNIQUE_OPEN
        | WRONLY;
}

/// `MPI_SEEK_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whence {
    Set,
    Cur,
    End,
}

/// Where a data access starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pos {
    /// An explicit offset, in etypes of the view.
    At(u64),
    /// The individual file pointer.
    Individual,
    /// The shared file pointer (independent).
    Shared,
    /// The shared file pointer in rank order (collective).
    Ordered,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
}

pub use datarep::{datarep, register_datarep, type_extent, CONV_CHUNK};
pub use hints::{CbMode, Hints};

/// Checks an access mode (MPI-4.1 §14.2.1): exactly one of RDONLY, RDWR,
/// WRONLY; RDONLY excludes CREATE and EXCL; RDWR excludes SEQUENTIAL.
pub fn check_amode(call: &str, amode: i32) -> Result<()> {
    let bad = |why: &str| {
        Err(MpiError::arg(
            ErrorClass::Amode,
            call,
            "amode",
            format!("{amode:#x}: {why}"),
        ))
    };
    if amode & !mode::ALL != 0 {
        return bad("has bits that are no MPI_MODE_* value of file access");
    }
    let rw = [mode::RDONLY, mode::RDWR, mode::WRONLY]
        .iter()
        .filter(|&&m| amode & m != 0)
        .count();
    if rw != 1 {
        return bad("needs exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR, MPI_MODE_WRONLY");
    }
    if amode & mode::RDONLY != 0 && amode & (mode::CREATE | mode::EXCL) != 0 {
        return bad("MPI_MODE_RDONLY cannot go with MPI_MODE_CREATE or MPI_MODE_EXCL");
    }
    if amode & mode::RDWR != 0 && amode & mode::SEQUENTIAL != 0 {
        return bad("MPI_MODE_RDWR cannot go with MPI_MODE_SEQUENTIAL");
    }
    Ok(())
}

/// `MPI_File_delete`.
pub fn delete(call: &str, path: &Path) -> Result<()> {
    std::fs::remove_file(path).map_err(|e| sys::os_error(call, path, "cannot delete", &e))
}

/// What a split collective's `_begin` left for its `_end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    pub pos_kind: u8,
    pub dir: Dir,
    /// The access, running on the file's I/O worker.
    pub req: Request,
}

struct St {
    view: View,
    /// Individual file pointer, in etypes.
    pos: u64,
    atomic: bool,
    hints: Hints,
    split: Option<Split>,
    closed: bool,
}

pub(crate) struct Inner {
    comm: Comm,
    file: std::fs::File,
    path: PathBuf,
    amode: i32,
    /// Comm ranks that aggregate in collective I/O, one per host by default.
    hosts_leaders: Vec<i32>,
    /// Host index of each comm rank.
    hosts: Vec<u32>,
    /// Shared-memory windows of two-phase I/O on this host.
    win: Mutex<twophase::WinCache>,
    shfp_path: PathBuf,
    shfp: Mutex<Option<std::fs::File>>,
    st: Mutex<St>,
    /// The thread running this file's non-blocking collective accesses.
    worker: worker::Slot,
}

/// An open file.
#[derive(Clone)]
pub struct File(Arc<Inner>);

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "File({})", self.0.path.display())
    }
}

// ----- small collective helpers over the file's private communicator --------------

pub(crate) fn allgather_u64(comm: &Comm, mine: &[u64]) -> Result<Vec<u64>> {
    let n = comm.size() as usize;
    let mut all = vec![0u64; mine.len() * n];
    if mine.is_empty() {
        return Ok(all);
    }
    let k = mine.len();
    crate::coll::api_move::allgather(
        Some(SendBuf::slice(mine)),
        RecvBuf::slice(&mut all),
        k,
        comm,
    )?;
    Ok(all)
}

pub(crate) fn alltoall_u64(comm: &Comm, send: &[u64]) -> Result<Vec<u64>> {
    let mut recv = vec![0u64; send.len()];
    crate::coll::api_move::alltoall(
        Some(SendBuf::slice(send)),
        1,
        RecvBuf::slice(&mut recv),
        1,
        comm,
    )?;
    Ok(recv)
}

fn bcast_u64(comm: &Comm, v: &mut [u64]) -> Result<()> {
    crate::coll::bcast::bcast(crate::buf::RecvBuf::slice(v), 0, comm)
}

fn barrier(comm: &Comm) -> Result<()> {
    crate::coll::barrier::barrier(comm)
}

fn class_from(code: u64) -> ErrorClass {
    ErrorClass::from_code(code as i32).unwrap_or(ErrorClass::Io)
}

fn shfp_name(path: &Path, nonce: u64) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    dir.join(format!(".{name}.oxmpi-shfp.{nonce:x}"))
}

impl File {
    /// `MPI_File_open` (collective over `comm`).
    pub fn open(
        call: &str,
        comm: &Comm,
        path: &Path,
        amode: i32,
        info: &[(String, String)],
    ) -> Result<File> {
        check_amode(call, amode)?;
        if comm.is_inter() {
            return Err(MpiError::arg(
                ErrorClass::Comm,
                call,
                "comm",
                "is an intercommunicator (files are opened on intracommunicators)",
            ));
        }
        let comm = crate::comm::create::dup(comm)?;
        let me = comm.rank();
        let all = allgather_u64(&comm, &[amode as u64])?;
        if all.iter().any(|&a| a != amode as u64) {
            return Err(MpiError::arg(
                ErrorClass::NotSame,
                call,
                "amode",
                "differs between the ranks of the communicator",
            ));
        }
        let writable = amode & (mode::RDWR | mode::WRONLY) != 0;
        let readable = amode & (mode::RDWR | mode::RDONLY) != 0;
        let opts = |create: bool| {
            let mut o = OpenOptions::new();
            o.read(readable).write(writable).mode(0o666);
            if create && amode & mode::CREATE != 0 {
                if amode & mode::EXCL != 0 {
                    o.create_new(true);
                } else {
                    o.create(true);
                }
            }
            o
        };
        // Rank 0 opens first (and creates); the others open what it made.
        let mut first: Option<std::fs::File> = None;
        let mut err: Option<MpiError> = None;
        let mut head = [0u64; 3]; // class, created, nonce
        if me == 0 {
            let existed = path.exists();
            match opts(true).open(path) {
                Ok(f) => {
                    head[1] = (!existed) as u64;
                    first = Some(f);
                }
                Err(e) => {
                    let e = sys::os_error(call, path, "cannot open", &e);
                    head[0] = e.class.code() as u64;
                    err = Some(e);
                }
            }
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            head[2] = (std::process::id() as u64) << 32 ^ t;
        }
        bcast_u64(&comm, &mut head)?;
        if head[0] != 0 {
            return Err(err.unwrap_or_else(|| {
                MpiError::new(
                    class_from(head[0]),
                    format!("{call}: rank 0 could not open `{}`", path.display()),
                )
            }));
        }
        if me != 0 {
            match opts(false).open(path) {
                Ok(f) => first = Some(f),
                Err(e) => err = Some(sys::os_error(call, path, "cannot open", &e)),
            }
        }
        let codes = allgather_u64(&comm, &[err.as_ref().map_or(0, |e| e.class.code() as u64)])?;
        if let Some((r, &c)) = codes.iter().enumerate().find(|(_, &c)| c != 0) {
            drop(first);
            if me == 0 && head[1] == 1 {
                let _ = std::fs::remove_file(path);
            }
            return Err(err.unwrap_or_else(|| {
                MpiError::new(
                    class_from(c),
                    format!(
                        "{call}: rank {r} could not open `{}`; the file is closed on every rank",
                        path.display()
                    ),
                )
            }));
        }
        let file = first.expect("opened");
        let mut hints = Hints::default();
        hints.apply(info);
        let hosts_leaders = host_leaders(&comm);
        let hosts = host_ids(&comm);
        let shfp_path = shfp_name(path, head[2]);
        let mut pos = 0;
        if amode & mode::APPEND != 0 {
            pos = file.metadata().map(|m| m.len()).unwrap_or(0);
        }
        let f = File(Arc::new(Inner {
            comm,
            file,
            path: path.to_path_buf(),
            amode,
            hosts_leaders,
            hosts,
            win: Mutex::new(twophase::WinCache::default()),
            shfp_path,
            shfp: Mutex::new(None),
            st: Mutex::new(St {
                view: View::bytes(),
                pos,
                atomic: false,
                hints,
                split: None,
                closed: false,
            }),
            worker: worker::Slot::default(),
        }));
        if amode & mode::APPEND != 0 && me == 0 {
            // A directory we cannot write in fails here and again, reported,
            // at the first shared-pointer access.
            let _ = f.shfp_store(call, pos);
        }
        if amode & mode::APPEND != 0 {
            barrier(&f.0.comm)?;
        }
        Ok(f)
    }

    fn st(&self) -> MutexGuard<'_, St> {
        self.0.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn live(&self, call: &str) -> Result<MutexGuard<'_, St>> {
        let st = self.st();
        if st.closed {
            return Err(MpiError::arg(
                ErrorClass::File,
                call,
                "fh",
                "the file is closed",
            ));
        }
        Ok(st)
    }

    pub fn path(&self) -> &Path {
        &self.0.path
    }

    pub fn amode(&self) -> i32 {
        self.0.amode
    }

    /// The communicator's group, as world ranks.
    pub fn group(&self) -> &[u32] {
        self.0.comm.group()
    }

    pub fn comm_size(&self) -> i32 {
        self.0.comm.size()
    }

    /// `MPI_File_close` (collective).
    pub fn close(&self, call: &str) -> Result<()> {
        {
            let mut st = self.live(call)?;
            if st.split.is_some() {
                return Err(MpiError::new(
                    ErrorClass::Other,
                    format!("{call}: a split collective is still pending (call its _end first)"),
                ));
            }
            st.closed = true;
        }
        self.0.worker.stop();
        barrier(&self.0.comm)?;
        let mut res = Ok(());
        if self.0.comm.rank() == 0 {
            let _ = std::fs::remove_file(&self.0.shfp_path);
            if self.0.amode & mode::DELETE_ON_CLOSE != 0 {
                res = delete(call, &self.0.path);
            }
        }
        *self.0.shfp.lock().unwrap_or_else(|p| p.into_inner()) = None;
        *self.0.win.lock().unwrap_or_else(|p| p.into_inner()) = twophase::WinCache::default();
        barrier(&self.0.comm)?;
        res
    }

    /// `MPI_File_get_size`.
    pub fn size(&self, call: &str) -> Result<u64> {
        let _st = self.live(call)?;
        self.0
            .file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| sys::os_error(call, &self.0.path, "cannot stat", &e))
    }

    fn writable(&self, call: &str) -> Result<()> {
        if self.0.amode & mode::RDONLY != 0 {
            return Err(MpiError::new(
                ErrorClass::ReadOnly,
                format!(
                    "{call}: `{}` was opened MPI_MODE_RDONLY",
                    self.0.path.display()
                ),
            ));
        }
        Ok(())
    }

    /// `MPI_File_set_size` (collective): truncates or extends.
    pub fn set_size(&self, call: &str, size: u64) -> Result<()> {
        drop(self.live(call)?);
        self.writable(call)?;
        self.0.worker.quiesce();
        let all = allgather_u64(&self.0.comm, &[size])?;
        if all.iter().any(|&s| s != size) {
            return Err(MpiError::arg(
                ErrorClass::NotSame,
                call,
                "size",
                "differs between the ranks",
            ));
        }
        let r = if self.0.comm.rank() == 0 {
            self.0
                .file
                .set_len(size)
                .map_err(|e| sys::os_error(call, &self.0.path, "cannot resize", &e))
        } else {
            Ok(())
        };
        self.agree(call, r)
    }

    /// Makes rank 0's outcome everybody's (collective).
    fn agree(&self, call: &str, r: Result<()>) -> Result<()> {
        let mut c = [r.as_ref().err().map_or(0, |e| e.class.code() as u64)];
        bcast_u64(&self.0.comm, &mut c)?;
        match (r, c[0]) {
            (Err(e), _) => Err(e),
            (Ok(()), 0) => Ok(()),
            (Ok(()), c) => Err(MpiError::new(
                class_from(c),
                format!(
                    "{call}: failed on rank 0 for `{}` ({})",
                    self.0.path.display(),
                    class_from(c).name()
                ),
            )),
        }
    }

    /// `MPI_File_preallocate` (collective).
    pub fn preallocate(&self, call: &str, size: u64) -> Result<()> {
        drop(self.live(call)?);
        self.writable(call)?;
        self.0.worker.quiesce();
        let r = if self.0.comm.rank() == 0 {
            sys::preallocate(&self.0.file, size)
                .map_err(|e| sys::os_error(call, &self.0.path, "cannot preallocate", &e))
        } else {
            Ok(())
        };
        self.agree(call, r)
    }

    /// `MPI_File_sync` (collective).
    pub fn sync(&self, call: &str) -> Result<()> {
        drop(self.live(call)?);
        self.0.worker.quiesce();
        let r = if self.0.amode & mode::RDONLY == 0 {
            self.0
                .file
                .sync_data()
                .map_err(|e| sys::os_error(call, &self.0.path, "cannot sync", &e))
        } else {
            Ok(())
        };
        barrier(&self.0.comm)?;
        r
    }

    /// `MPI_File_set_atomicity` (collective).
    pub fn set_atomicity(&self, call: &str, on: bool) -> Result<()> {
        drop(self.live(call)?);
        self.0.worker.quiesce();
        let all = allgather_u64(&self.0.comm, &[on as u64])?;
        if all.iter().any(|&a| a != on as u64) {
            return Err(MpiError::arg(
                ErrorClass::NotSame,
                call,
                "flag",
                "differs between the ranks",
            ));
        }
        self.st().atomic = on;
        Ok(())
    }

    pub fn atomicity(&self) -> bool {
        self.st().atomic
    }

    /// `MPI_File_set_info` (collective in MPI; hints are local here).
    pub fn set_info(&self, call: &str, info: &[(String, String)]) -> Result<()> {
        self.live(call)?.hints.apply(info);
        Ok(())
    }

    /// The hints in use (`MPI_File_get_info`).
    pub fn info(&self) -> Vec<(String, String)> {
        let st = self.st();
        let h = &st.hints;
        let mut v = vec![
            ("cb_buffer_size".to_string(), h.cb_buffer_size.to_string()),
            (
                "cb_nodes".to_string(),
                self.aggregators(h).len().to_string(),
            ),
            ("romio_cb_read".to_string(), h.cb_read.name().to_string()),
            ("romio_cb_write".to_string(), h.cb_write.name().to_string()),
        ];
        if h.striping_unit > 0 {
            v.push(("striping_unit".to_string(), h.striping_unit.to_string()));
        }
        if let Some(f) = h.striping_factor {
            v.push(("striping_factor".to_string(), f.to_string()));
        }
        v.push((
            "oxmpi_cb_window".to_string(),
            if h.cb_window { "enable" } else { "disable" }.to_string(),
        ));
        v
    }

    /// Comm ranks that aggregate: `cb_nodes` of them (default: one per host),
    /// spread over hosts first.
    pub(crate) fn aggregators(&self, h: &Hints) -> Vec<i32> {
        let n = self.0.comm.size() as usize;
        let want = h.cb_nodes.unwrap_or(self.0.hosts_leaders.len()).clamp(1, n);
        let mut out: Vec<i32> = self.0.hosts_leaders.iter().copied().take(want).collect();
        let mut r = 0;
        while out.len() < want {
            if !out.contains(&r) {
                out.push(r);
            }
            r += 1;
        }
        out.sort_unstable();
        out
    }

    /// `MPI_File_set_view` (collective): resets both file pointers.
    pub fn set_view(
        &self,
        call: &str,
        disp: Option<u64>,
        etype: &Datatype,
        filetype: &Datatype,
        rep: Datarep,
        info: &[(String, String)],
    ) -> Result<()> {
        {
            let st = self.live(call)?;
            if st.split.is_some() {
                return Err(MpiError::new(
                    ErrorClass::Other,
                    format!("{call}: a split collective is pending"),
                ));
            }
        }
        self.0.worker.quiesce();
        let disp = match disp {
            Some(d) => d,
            None => {
                if self.0.amode & mode::SEQUENTIAL == 0 {
                    return Err(MpiError::arg(
                        ErrorClass::Arg,
                        call,
                        "disp",
                        "MPI_DISPLACEMENT_CURRENT needs a file opened MPI_MODE_SEQUENTIAL",
                    ));
                }
                let v = self.st().view.clone();
                v.byte_offset(self.shfp_load(call)? * v.etype_size())
            }
        };
        let v = View::new(disp, etype.clone(), filetype.clone(), rep, call)?;
        barrier(&self.0.comm)?;
        {
            let mut st = self.st();
            st.view = v;
            st.pos = 0;
            st.hints.apply(info);
        }
        if self.0.comm.rank() == 0 && self.0.shfp_path.exists() {
            self.shfp_store(call, 0)?;
        }
        barrier(&self.0.comm)
    }

    pub fn view(&self) -> View {
        self.st().view.clone()
    }

    pub(crate) fn inner(&self) -> &Inner {
        &self.0
    }
}

/// The comm rank of the lowest rank on each host, in host order of appearance.
fn host_leaders(comm: &Comm) -> Vec<i32> {
    let Ok(e) = crate::runtime::engine() else {
        return vec![0];
    };
    let hosts = e.host_of();
    let mut seen = Vec::new();
    let mut leaders = Vec::new();
    for (r, &w) in comm.group().iter().enumerate() {
        let h = hosts.get(w as usize).copied().unwrap_or(0);
        if !seen.contains(&h) {
            seen.push(h);
            leaders.push(r as i32);
        }
    }
    leaders
}

/// The host index of each rank of `comm`.
fn host_ids(comm: &Comm) -> Vec<u32> {
    let Ok(e) = crate::runtime::engine() else {
        return vec![0; comm.size() as usize];
    };
    let hosts = e.host_of();
    comm.group()
        .iter()
        .map(|&w| hosts.get(w as usize).copied().unwrap_or(0))
        .collect()
}
