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

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::comm::Comm;
use crate::datatype::external32;
use crate::datatype::{Datatype, Primitive};
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
    pub const ALL: i32 = APPEND | CREATE | DELETE_ON_CLOSE | EXCL | RDONLY | RDWR | SEQUENTIAL | UNIQUE_OPEN | WRONLY;
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

/// `romio_cb_read`/`romio_cb_write`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CbMode {
    Enable,
    Disable,
    Automatic,
}

impl CbMode {
    fn name(self) -> &'static str {
        match self {
            CbMode::Enable => "enable",
            CbMode::Disable => "disable",
            CbMode::Automatic => "automatic",
        }
    }
    fn parse(s: &str) -> Option<CbMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "enable" => Some(CbMode::Enable),
            "disable" => Some(CbMode::Disable),
            "automatic" => Some(CbMode::Automatic),
            _ => None,
        }
    }
}

/// The hints oxmpi uses (others are accepted and ignored, as MPI allows).
#[derive(Clone, Debug)]
pub struct Hints {
    /// Bytes an aggregator handles per round of two-phase I/O.
    pub cb_buffer_size: u64,
    /// Aggregators wanted (`None`: one per host).
    pub cb_nodes: Option<usize>,
    pub cb_read: CbMode,
    pub cb_write: CbMode,
    /// File domains of aggregators are aligned to this (0: 1 MiB when large).
    pub striping_unit: u64,
    pub striping_factor: Option<u64>,
    /// `oxmpi_cb_window`: move two-phase pieces between ranks of one host
    /// through the aggregator's shared-memory window (default) or by messages.
    pub cb_window: bool,
}

impl Default for Hints {
    fn default() -> Hints {
        Hints { cb_buffer_size: 16 << 20, cb_nodes: None, cb_read: CbMode::Automatic, cb_write: CbMode::Automatic, striping_unit: 0, striping_factor: None, cb_window: true }
    }
}

impl Hints {
    /// Applies the hints of `kv` it knows; values it cannot parse are ignored.
    pub fn apply(&mut self, kv: &[(String, String)]) {
        for (k, v) in kv {
            let num = v.trim().parse::<u64>().ok().filter(|&n| n > 0);
            match k.as_str() {
                "cb_buffer_size" => self.cb_buffer_size = num.map_or(self.cb_buffer_size, |n| n.clamp(4096, 1 << 30)),
                "cb_nodes" => self.cb_nodes = num.map(|n| n as usize).or(self.cb_nodes),
                "romio_cb_read" => self.cb_read = CbMode::parse(v).unwrap_or(self.cb_read),
                "romio_cb_write" => self.cb_write = CbMode::parse(v).unwrap_or(self.cb_write),
                "striping_unit" => self.striping_unit = num.unwrap_or(self.striping_unit),
                "striping_factor" => self.striping_factor = num.or(self.striping_factor),
                "oxmpi_cb_window" => self.cb_window = CbMode::parse(v).map_or(self.cb_window, |m| m != CbMode::Disable),
                _ => {}
            }
        }
    }
}

/// Registered user data representations.
fn dataraps() -> MutexGuard<'static, HashMap<String, Arc<dyn UserDatarep>>> {
    static R: OnceLock<Mutex<HashMap<String, Arc<dyn UserDatarep>>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(HashMap::new())).lock().unwrap_or_else(|p| p.into_inner())
}

/// `MPI_Register_datarep`.
pub fn register_datarep(call: &str, name: &str, conv: Arc<dyn UserDatarep>) -> Result<()> {
    if name.is_empty() || name.len() >= 128 {
        return Err(MpiError::arg(ErrorClass::Arg, call, "datarep", format!("`{name}` is empty or longer than MPI_MAX_DATAREP_STRING - 1")));
    }
    let mut r = dataraps();
    if matches!(name, "native" | "internal" | "external32") || r.contains_key(name) {
        return Err(MpiError::arg(ErrorClass::DupDatarep, call, "datarep", format!("\"{name}\" is already defined")));
    }
    r.insert(name.to_string(), conv);
    Ok(())
}

/// The data representation called `name`.
pub fn datarep(call: &str, name: &str) -> Result<Datarep> {
    match name {
        "native" => Ok(Datarep::Native),
        "internal" => Ok(Datarep::Internal),
        "external32" => Ok(Datarep::External32),
        n => dataraps().get(n).map(|c| Datarep::User(n.to_string(), c.clone())).ok_or_else(|| {
            MpiError::arg(ErrorClass::UnsupportedDatarep, call, "datarep", format!("\"{n}\" is not native, internal, external32 or a registered representation"))
        }),
    }
}

/// Checks an access mode (MPI-4.1 §14.2.1): exactly one of RDONLY, RDWR,
/// WRONLY; RDONLY excludes CREATE and EXCL; RDWR excludes SEQUENTIAL.
pub fn check_amode(call: &str, amode: i32) -> Result<()> {
    let bad = |why: &str| Err(MpiError::arg(ErrorClass::Amode, call, "amode", format!("{amode:#x}: {why}")));
    if amode & !mode::ALL != 0 {
        return bad("has bits that are no MPI_MODE_* value of file access");
    }
    let rw = [mode::RDONLY, mode::RDWR, mode::WRONLY].iter().filter(|&&m| amode & m != 0).count();
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

fn u64s() -> Datatype {
    Datatype::predefined(Primitive::Uint64)
}

pub(crate) fn allgather_u64(comm: &Comm, mine: &[u64]) -> Result<Vec<u64>> {
    let n = comm.size() as usize;
    let mut all = vec![0u64; mine.len() * n];
    if mine.is_empty() {
        return Ok(all);
    }
    // SAFETY: `mine` holds `mine.len()` u64s, `all` holds n times that; both live for the call.
    unsafe {
        crate::coll::allgather::allgather(Some(mine.as_ptr().cast()), mine.len(), &u64s(), all.as_mut_ptr().cast(), mine.len(), &u64s(), comm)?
    };
    Ok(all)
}

pub(crate) fn alltoall_u64(comm: &Comm, send: &[u64]) -> Result<Vec<u64>> {
    let mut recv = vec![0u64; send.len()];
    // SAFETY: both buffers hold `size` u64s (one per rank) and live for the call.
    unsafe { crate::coll::alltoall::alltoall(Some(send.as_ptr().cast()), 1, &u64s(), recv.as_mut_ptr().cast(), 1, &u64s(), comm)? };
    Ok(recv)
}

fn bcast_u64(comm: &Comm, v: &mut [u64]) -> Result<()> {
    // SAFETY: `v` holds `v.len()` u64s and lives for the call.
    unsafe { crate::coll::bcast::bcast(v.as_mut_ptr().cast(), v.len(), &u64s(), 0, comm) }
}

fn barrier(comm: &Comm) -> Result<()> {
    crate::coll::barrier::barrier(comm)
}

fn class_from(code: u64) -> ErrorClass {
    ErrorClass::from_code(code as i32).unwrap_or(ErrorClass::Io)
}

fn shfp_name(path: &Path, nonce: u64) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    dir.join(format!(".{name}.oxmpi-shfp.{nonce:x}"))
}

impl File {
    /// `MPI_File_open` (collective over `comm`).
    pub fn open(call: &str, comm: &Comm, path: &Path, amode: i32, info: &[(String, String)]) -> Result<File> {
        check_amode(call, amode)?;
        if comm.is_inter() {
            return Err(MpiError::arg(ErrorClass::Comm, call, "comm", "is an intercommunicator (files are opened on intracommunicators)"));
        }
        let comm = crate::comm::create::dup(comm)?;
        let me = comm.rank();
        let all = allgather_u64(&comm, &[amode as u64])?;
        if all.iter().any(|&a| a != amode as u64) {
            return Err(MpiError::arg(ErrorClass::NotSame, call, "amode", "differs between the ranks of the communicator"));
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
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
            head[2] = (std::process::id() as u64) << 32 ^ t;
        }
        bcast_u64(&comm, &mut head)?;
        if head[0] != 0 {
            return Err(err.unwrap_or_else(|| {
                MpiError::new(class_from(head[0]), format!("{call}: rank 0 could not open `{}`", path.display()))
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
                MpiError::new(class_from(c), format!("{call}: rank {r} could not open `{}`; the file is closed on every rank", path.display()))
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
            st: Mutex::new(St { view: View::bytes(), pos, atomic: false, hints, split: None, closed: false }),
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
            return Err(MpiError::arg(ErrorClass::File, call, "fh", "the file is closed"));
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
                return Err(MpiError::new(ErrorClass::Other, format!("{call}: a split collective is still pending (call its _end first)")));
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
        self.0.file.metadata().map(|m| m.len()).map_err(|e| sys::os_error(call, &self.0.path, "cannot stat", &e))
    }

    fn writable(&self, call: &str) -> Result<()> {
        if self.0.amode & mode::RDONLY != 0 {
            return Err(MpiError::new(ErrorClass::ReadOnly, format!("{call}: `{}` was opened MPI_MODE_RDONLY", self.0.path.display())));
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
            return Err(MpiError::arg(ErrorClass::NotSame, call, "size", "differs between the ranks"));
        }
        let r = if self.0.comm.rank() == 0 { self.0.file.set_len(size).map_err(|e| sys::os_error(call, &self.0.path, "cannot resize", &e)) } else { Ok(()) };
        self.agree(call, r)
    }

    /// Makes rank 0's outcome everybody's (collective).
    fn agree(&self, call: &str, r: Result<()>) -> Result<()> {
        let mut c = [r.as_ref().err().map_or(0, |e| e.class.code() as u64)];
        bcast_u64(&self.0.comm, &mut c)?;
        match (r, c[0]) {
            (Err(e), _) => Err(e),
            (Ok(()), 0) => Ok(()),
            (Ok(()), c) => Err(MpiError::new(class_from(c), format!("{call}: failed on rank 0 for `{}` ({})", self.0.path.display(), class_from(c).name()))),
        }
    }

    /// `MPI_File_preallocate` (collective).
    pub fn preallocate(&self, call: &str, size: u64) -> Result<()> {
        drop(self.live(call)?);
        self.writable(call)?;
        self.0.worker.quiesce();
        let r = if self.0.comm.rank() == 0 { sys::preallocate(&self.0.file, size).map_err(|e| sys::os_error(call, &self.0.path, "cannot preallocate", &e)) } else { Ok(()) };
        self.agree(call, r)
    }

    /// `MPI_File_sync` (collective).
    pub fn sync(&self, call: &str) -> Result<()> {
        drop(self.live(call)?);
        self.0.worker.quiesce();
        let r = if self.0.amode & mode::RDONLY == 0 { self.0.file.sync_data().map_err(|e| sys::os_error(call, &self.0.path, "cannot sync", &e)) } else { Ok(()) };
        barrier(&self.0.comm)?;
        r
    }

    /// `MPI_File_set_atomicity` (collective).
    pub fn set_atomicity(&self, call: &str, on: bool) -> Result<()> {
        drop(self.live(call)?);
        self.0.worker.quiesce();
        let all = allgather_u64(&self.0.comm, &[on as u64])?;
        if all.iter().any(|&a| a != on as u64) {
            return Err(MpiError::arg(ErrorClass::NotSame, call, "flag", "differs between the ranks"));
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
            ("cb_nodes".to_string(), self.aggregators(h).len().to_string()),
            ("romio_cb_read".to_string(), h.cb_read.name().to_string()),
            ("romio_cb_write".to_string(), h.cb_write.name().to_string()),
        ];
        if h.striping_unit > 0 {
            v.push(("striping_unit".to_string(), h.striping_unit.to_string()));
        }
        if let Some(f) = h.striping_factor {
            v.push(("striping_factor".to_string(), f.to_string()));
        }
        v.push(("oxmpi_cb_window".to_string(), if h.cb_window { "enable" } else { "disable" }.to_string()));
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
    pub fn set_view(&self, call: &str, disp: Option<u64>, etype: &Datatype, filetype: &Datatype, rep: Datarep, info: &[(String, String)]) -> Result<()> {
        {
            let st = self.live(call)?;
            if st.split.is_some() {
                return Err(MpiError::new(ErrorClass::Other, format!("{call}: a split collective is pending")));
            }
        }
        self.0.worker.quiesce();
        let disp = match disp {
            Some(d) => d,
            None => {
                if self.0.amode & mode::SEQUENTIAL == 0 {
                    return Err(MpiError::arg(ErrorClass::Arg, call, "disp", "MPI_DISPLACEMENT_CURRENT needs a file opened MPI_MODE_SEQUENTIAL"));
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

    /// `MPI_File_seek` (individual pointer).
    pub fn seek(&self, call: &str, off: i64, whence: Whence) -> Result<()> {
        let mut st = self.live(call)?;
        self.no_seq(call)?;
        let base = match whence {
            Whence::Set => 0,
            Whence::Cur => st.pos as i64,
            Whence::End => self.end_etypes(call, &st.view)? as i64,
        };
        let p = base.checked_add(off).filter(|&p| p >= 0).ok_or_else(|| MpiError::arg(ErrorClass::Arg, call, "offset", format!("{off} would move the pointer before the start of the view")))?;
        st.pos = p as u64;
        Ok(())
    }

    fn end_etypes(&self, call: &str, v: &View) -> Result<u64> {
        let size = self.0.file.metadata().map(|m| m.len()).map_err(|e| sys::os_error(call, &self.0.path, "cannot stat", &e))?;
        let es = v.etype_size().max(1);
        Ok(v.stream_before(size).div_ceil(es))
    }

    /// `MPI_File_get_position`, in etypes.
    pub fn position(&self, call: &str) -> Result<u64> {
        let st = self.live(call)?;
        self.no_seq(call)?;
        Ok(st.pos)
    }

    /// `MPI_File_get_byte_offset`: absolute byte of view offset `off` (etypes).
    pub fn byte_offset(&self, call: &str, off: u64) -> Result<u64> {
        let st = self.live(call)?;
        self.no_seq(call)?;
        Ok(st.view.byte_offset(off * st.view.etype_size()))
    }

    fn no_seq(&self, call: &str) -> Result<()> {
        if self.0.amode & mode::SEQUENTIAL != 0 {
            return Err(MpiError::unsupported(call, "explicit offsets and individual file pointers on a file opened MPI_MODE_SEQUENTIAL"));
        }
        Ok(())
    }

    // ----- the shared file pointer ---------------------------------------------------

    fn shfp_file(&self, call: &str) -> Result<MutexGuard<'_, Option<std::fs::File>>> {
        let mut g = self.0.shfp.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .open(&self.0.shfp_path)
                .map_err(|e| sys::os_error(call, &self.0.shfp_path, "cannot open the shared file pointer's file", &e))?;
            *g = Some(f);
        }
        Ok(g)
    }

    /// Adds `n` to the shared pointer (etypes); returns its previous value.
    fn shfp_add(&self, call: &str, n: u64) -> Result<u64> {
        let g = self.shfp_file(call)?;
        let f = g.as_ref().unwrap();
        let err = |e: std::io::Error| sys::os_error(call, &self.0.shfp_path, "shared file pointer", &e);
        sys::lock(f, 0, 8, true).map_err(err)?;
        let mut b = [0u8; 8];
        let r = (|| {
            let got = f.read_at(&mut b, 0)?;
            let old = if got == 8 { u64::from_le_bytes(b) } else { 0 };
            if n > 0 {
                f.write_all_at(&(old + n).to_le_bytes(), 0)?;
            }
            Ok(old)
        })();
        let _ = sys::unlock(f, 0, 8);
        r.map_err(err)
    }

    fn shfp_load(&self, call: &str) -> Result<u64> {
        self.shfp_add(call, 0)
    }

    fn shfp_store(&self, call: &str, v: u64) -> Result<()> {
        let g = self.shfp_file(call)?;
        let f = g.as_ref().unwrap();
        let err = |e: std::io::Error| sys::os_error(call, &self.0.shfp_path, "shared file pointer", &e);
        sys::lock(f, 0, 8, true).map_err(err)?;
        let r = f.write_all_at(&v.to_le_bytes(), 0);
        let _ = sys::unlock(f, 0, 8);
        r.map_err(err)
    }

    /// `MPI_File_seek_shared` (collective).
    pub fn seek_shared(&self, call: &str, off: i64, whence: Whence) -> Result<()> {
        let view = self.live(call)?.view.clone();
        self.0.worker.quiesce();
        let all = allgather_u64(&self.0.comm, &[off as u64, whence as u64])?;
        if all.chunks(2).any(|c| c[0] != off as u64 || c[1] != whence as u64) {
            return Err(MpiError::arg(ErrorClass::NotSame, call, "offset", "offset and whence differ between the ranks"));
        }
        let mut r = Ok(());
        if self.0.comm.rank() == 0 {
            r = (|| {
                let base = match whence {
                    Whence::Set => 0,
                    Whence::Cur => self.shfp_load(call)? as i64,
                    Whence::End => self.end_etypes(call, &view)? as i64,
                };
                let p = base.checked_add(off).filter(|&p| p >= 0).ok_or_else(|| MpiError::arg(ErrorClass::Arg, call, "offset", format!("{off} would move the shared pointer before the view")))?;
                self.shfp_store(call, p as u64)
            })();
        }
        self.agree(call, r)
    }

    /// `MPI_File_get_position_shared`, in etypes.
    pub fn position_shared(&self, call: &str) -> Result<u64> {
        drop(self.live(call)?);
        self.shfp_load(call)
    }

    // ----- data access -------------------------------------------------------------------

    /// One data access (every `MPI_File_{read,write}*` call comes here).
    /// Returns the status (bytes moved, of `dt`'s packed stream).
    ///
    /// # Safety
    /// `buf` holds `count` elements of `dt`: readable for writes, writable for reads.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn access(&self, call: &str, pos: Pos, collective: bool, dir: Dir, buf: *mut u8, count: usize, dt: &Datatype) -> Result<Status> {
        let snap = self.check_access(call, pos, dir, count, dt)?;
        if collective || pos == Pos::Ordered {
            // The file's communicator carries one collective at a time, in start order.
            self.0.worker.quiesce();
        }
        // SAFETY: forwarded caller contract.
        unsafe { self.perform(call, &snap, pos, collective, dir, buf, count, dt, true) }
    }

    /// Checks an access and takes what it needs of the file's state.
    fn check_access(&self, call: &str, pos: Pos, dir: Dir, count: usize, dt: &Datatype) -> Result<Snap> {
        let (view, atomic, hints, ipos) = {
            let st = self.live(call)?;
            (st.view.clone(), st.atomic, st.hints.clone(), st.pos)
        };
        match dir {
            Dir::Write => self.writable(call)?,
            Dir::Read => {
                if self.0.amode & mode::WRONLY != 0 {
                    return Err(MpiError::new(ErrorClass::Access, format!("{call}: `{}` was opened MPI_MODE_WRONLY", self.0.path.display())));
                }
            }
        }
        if matches!(pos, Pos::At(_) | Pos::Individual) {
            self.no_seq(call)?;
        }
        let bytes = dt.size().checked_mul(count).ok_or_else(|| MpiError::arg(ErrorClass::Count, call, "count", "count times the datatype's size overflows"))? as u64;
        // The access's data stream is in the file's representation.
        let fbytes = view.datarep.file_bytes(dt, count)?;
        let es = view.etype_size();
        if es > 0 && fbytes % es != 0 {
            return Err(MpiError::arg(ErrorClass::Type, call, "datatype", format!("{fbytes} bytes in the file are not a whole number of etypes of {es} bytes")));
        }
        if es == 0 && fbytes > 0 {
            return Err(MpiError::arg(ErrorClass::Type, call, "fh", "the view's etype has size 0"));
        }
        if let Datarep::User(name, conv) = &view.datarep {
            let converts = match dir {
                Dir::Write => conv.converts_writes(),
                Dir::Read => conv.converts_reads(),
            };
            if !converts && !view.datarep.same_sizes(dt)? {
                return Err(MpiError::arg(
                    ErrorClass::Conversion,
                    call,
                    "datatype",
                    format!("data representation \"{name}\" gives these types other sizes in the file but has no {} conversion function", if dir == Dir::Write { "write" } else { "read" }),
                ));
            }
        }
        Ok(Snap { view, atomic, hints, ipos, bytes, fbytes })
    }

    /// Runs an access checked by [`check_access`](File::check_access);
    /// `track`: advance the individual pointer by what was moved (blocking
    /// calls; non-blocking ones advanced it when they started).
    ///
    /// # Safety
    /// As [`access`](File::access).
    #[allow(clippy::too_many_arguments)]
    unsafe fn perform(&self, call: &str, snap: &Snap, pos: Pos, collective: bool, dir: Dir, buf: *mut u8, count: usize, dt: &Datatype, track: bool) -> Result<Status> {
        let Snap { view, atomic, hints, ipos, bytes, fbytes } = snap;
        let (atomic, ipos, bytes, fbytes) = (*atomic, *ipos, *bytes, *fbytes);
        let es = view.etype_size();
        let netypes = fbytes.checked_div(es).unwrap_or(0);
        let start = match pos {
            Pos::At(o) => o * es,
            Pos::Individual => ipos * es,
            Pos::Shared => self.shfp_add(call, netypes)? * es,
            Pos::Ordered => {
                let counts = allgather_u64(&self.0.comm, &[netypes])?;
                let me = self.0.comm.rank() as usize;
                let total: u64 = counts.iter().sum();
                let mut base = [0u64];
                let r = if me == 0 { self.shfp_add(call, total).map(|b| base[0] = b) } else { Ok(()) };
                self.agree(call, r)?;
                bcast_u64(&self.0.comm, &mut base)?;
                (base[0] + counts[..me].iter().sum::<u64>()) * es
            }
        };
        let collective = collective || pos == Pos::Ordered;
        let n = self.0.comm.size();
        // Two-phase I/O needs the pieces in file order.
        let in_order = view.in_order(start, fbytes);
        let use_2p = |m: CbMode| collective && n > 1 && !atomic && m != CbMode::Disable && in_order;
        let moved = match dir {
            Dir::Write => {
                // SAFETY: forwarded caller contract (readable buffer).
                let data = unsafe { to_file_stream(call, &view.datarep, buf, count, dt, fbytes)? };
                if use_2p(hints.cb_write) {
                    twophase::write(self, call, view, hints, start, &data)?;
                } else {
                    self.write_indep(call, view, atomic, start, &data)?;
                    if collective {
                        barrier(&self.0.comm)?;
                    }
                }
                (fbytes, bytes)
            }
            Dir::Read => {
                let direct = matches!(view.datarep, Datarep::Native | Datarep::Internal) && dt.is_contiguous();
                let mut tmp;
                let out: &mut [u8] = if direct && bytes > 0 {
                    // SAFETY: a contiguous datatype's `count` elements are the
                    // `bytes` bytes from its true lower bound, writable by the
                    // caller's contract and not aliased during the call.
                    unsafe { std::slice::from_raw_parts_mut(buf.wrapping_offset(dt.true_lb()), bytes as usize) }
                } else {
                    tmp = vec![0u8; fbytes as usize];
                    &mut tmp
                };
                let got = if use_2p(hints.cb_read) {
                    twophase::read(self, call, view, hints, start, out)?
                } else {
                    let g = self.read_indep(call, view, atomic, start, out)?;
                    if collective {
                        barrier(&self.0.comm)?;
                    }
                    g
                };
                let native = if direct {
                    got
                } else {
                    // SAFETY: forwarded caller contract (writable buffer).
                    unsafe { from_file_stream(call, &view.datarep, &mut out[..got as usize], buf, count, dt)? }
                };
                (got, native)
            }
        };
        // `moved`: bytes of the file's stream; `native`: bytes of memory data.
        let (moved, native) = moved;
        if pos == Pos::Individual && track {
            self.st().pos = ipos + moved.checked_div(es).unwrap_or(0);
        }
        Ok(Status { source: crate::request::PROC_NULL, tag: crate::matching::ANY_TAG, error: 0, count_bytes: native as usize, cancelled: false })
    }

    /// A non-blocking access. Collective ones run on the file's I/O worker
    /// (see [`worker`]) and the call returns at once; independent ones run
    /// now and hand back a completed request.
    ///
    /// # Safety
    /// As [`access`](File::access), and the buffer stays valid (and, for
    /// writes, unmodified; for reads, untouched) until the request completes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn iaccess(&self, call: &str, pos: Pos, collective: bool, dir: Dir, buf: *mut u8, count: usize, dt: &Datatype) -> Result<Request> {
        if !(collective || pos == Pos::Ordered) {
            // SAFETY: forwarded caller contract.
            let s = unsafe { self.access(call, pos, collective, dir, buf, count, dt)? };
            return Ok(crate::runtime::engine()?.with_state(|st| st.done_request(s)));
        }
        // SAFETY: forwarded caller contract.
        unsafe { self.start_background(call, pos, dir, buf, count, dt) }
    }

    /// Queues a collective access on the worker. The individual pointer moves
    /// now, by the amount requested (MPI-4.1 §14.4.3: it is updated when a
    /// non-blocking access starts).
    ///
    /// # Safety
    /// As [`iaccess`](File::iaccess).
    unsafe fn start_background(&self, call: &str, pos: Pos, dir: Dir, buf: *mut u8, count: usize, dt: &Datatype) -> Result<Request> {
        let snap = self.check_access(call, pos, dir, count, dt)?;
        let pos = match pos {
            Pos::Individual => {
                let es = snap.view.etype_size();
                let mut st = self.st();
                let p = st.pos;
                st.pos = p + snap.fbytes.checked_div(es).unwrap_or(0);
                Pos::At(p)
            }
            p => p,
        };
        let me = self.clone();
        let call_s = call.to_string();
        let dt = dt.clone();
        let buf = UserBuf(buf);
        self.0.worker.submit(call, move || {
            let buf = buf;
            // SAFETY: the caller keeps the buffer valid and otherwise unused
            // until the request completes, which is after this returns.
            unsafe { me.perform(&call_s, &snap, pos, true, dir, buf.0, count, &dt, false) }
        })
    }

    /// A split collective's `_begin`: starts the access on the file's I/O
    /// worker and returns; `_end` waits for it.
    ///
    /// # Safety
    /// As [`iaccess`](File::iaccess), until the matching `_end` returns.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn split_begin(&self, call: &str, pos: Pos, dir: Dir, buf: *mut u8, count: usize, dt: &Datatype) -> Result<()> {
        if self.live(call)?.split.is_some() {
            return Err(MpiError::new(ErrorClass::Other, format!("{call}: another split collective is pending on this file (one at a time per file handle)")));
        }
        // SAFETY: forwarded caller contract.
        let req = unsafe { self.start_background(call, pos, dir, buf, count, dt)? };
        self.st().split = Some(Split { pos_kind: pos_kind(pos), dir, req });
        Ok(())
    }

    /// A split collective's `_end`: waits for the matching `_begin`'s access.
    pub fn split_end(&self, call: &str, pos: Pos, dir: Dir) -> Result<Status> {
        let mut req = {
            let mut st = self.live(call)?;
            match st.split {
                Some(s) if s.dir == dir && s.pos_kind == pos_kind(pos) => {
                    st.split = None;
                    s.req
                }
                _ => return Err(MpiError::new(ErrorClass::Other, format!("{call}: no matching _begin call is pending on this file"))),
            }
        };
        crate::pt2pt::wait(&mut req)
    }

    fn lock_span(&self, call: &str, pieces: &[(u64, u64)], write: bool) -> Result<Option<(u64, u64)>> {
        let (Some(lo), Some(hi)) = (pieces.iter().map(|p| p.0).min(), pieces.iter().map(|p| p.0 + p.1).max()) else { return Ok(None) };
        let span = (lo, hi - lo);
        sys::lock(&self.0.file, span.0, span.1, write).map_err(|e| sys::os_error(call, &self.0.path, "cannot lock a byte range of", &e))?;
        Ok(Some(span))
    }

    pub(crate) fn write_indep(&self, call: &str, view: &View, atomic: bool, start: u64, data: &[u8]) -> Result<()> {
        let mut pieces = Vec::new();
        view.pieces(start, data.len() as u64, |o, l| pieces.push((o, l)));
        let span = if atomic { self.lock_span(call, &pieces, true)? } else { None };
        let mut at = 0usize;
        let mut r = Ok(());
        for &(o, l) in &pieces {
            if let Err(e) = self.0.file.write_all_at(&data[at..at + l as usize], o) {
                r = Err(sys::os_error(call, &self.0.path, "cannot write", &e));
                break;
            }
            at += l as usize;
        }
        if let Some((s, l)) = span {
            let _ = sys::unlock(&self.0.file, s, l);
        }
        r
    }

    /// Reads the stream bytes `[start, start + out.len())`; returns how many
    /// were there before end of file.
    pub(crate) fn read_indep(&self, call: &str, view: &View, atomic: bool, start: u64, out: &mut [u8]) -> Result<u64> {
        let mut pieces = Vec::new();
        view.pieces(start, out.len() as u64, |o, l| pieces.push((o, l)));
        let span = if atomic { self.lock_span(call, &pieces, false)? } else { None };
        // Data sieving: many small pieces close together are read with one
        // `pread` of their span (at most 4 MiB, at least half of it wanted).
        if let (Some(first), Some(last)) = (pieces.first(), pieces.last()) {
            let (lo, hi) = (first.0, last.0 + last.1);
            let sorted = pieces.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0);
            if sorted && pieces.len() > 1 && hi - lo <= 4 << 20 && (hi - lo) <= 2 * out.len() as u64 {
                let mut sieve = vec![0u8; (hi - lo) as usize];
                let r = self.pread_full(&mut sieve, lo);
                if let Some((s, l)) = span {
                    let _ = sys::unlock(&self.0.file, s, l);
                }
                let valid = lo + r.map_err(|e| sys::os_error(call, &self.0.path, "cannot read", &e))? as u64;
                let mut at = 0usize;
                for &(o, l) in &pieces {
                    if o >= valid {
                        break;
                    }
                    let e = (o + l).min(valid);
                    out[at..at + (e - o) as usize].copy_from_slice(&sieve[(o - lo) as usize..(e - lo) as usize]);
                    at += (e - o) as usize;
                    if e < o + l {
                        break;
                    }
                }
                return Ok(at as u64);
            }
        }
        let mut at = 0usize;
        let mut r = Ok(());
        'outer: for &(o, l) in &pieces {
            let got = self.pread_full(&mut out[at..at + l as usize], o);
            match got {
                Ok(g) => {
                    at += g;
                    if g < l as usize {
                        break 'outer;
                    }
                }
                Err(e) => {
                    r = Err(sys::os_error(call, &self.0.path, "cannot read", &e));
                    break;
                }
            }
        }
        if let Some((s, l)) = span {
            let _ = sys::unlock(&self.0.file, s, l);
        }
        r.map(|()| at as u64)
    }

    /// `pread` until `buf` is full or end of file; returns the bytes read.
    pub(crate) fn pread_full(&self, buf: &mut [u8], off: u64) -> std::io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.0.file.read_at(&mut buf[done..], off + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    pub(crate) fn inner(&self) -> &Inner {
        &self.0
    }
}

/// What an access takes of the file's state when it starts.
struct Snap {
    view: View,
    atomic: bool,
    hints: Hints,
    /// The individual pointer, in etypes.
    ipos: u64,
    /// Bytes of the datatype's packed stream in memory.
    bytes: u64,
    /// Bytes of the access in the file's representation.
    fbytes: u64,
}

/// The user's buffer of a background access.
struct UserBuf(*mut u8);

// SAFETY: the pointer is only dereferenced by the worker's access, which the
// caller of `iaccess`/`split_begin` allows until the request completes; the
// starting thread does not touch the buffer meanwhile (MPI contract).
unsafe impl Send for UserBuf {}

fn pos_kind(p: Pos) -> u8 {
    match p {
        Pos::At(_) => 0,
        Pos::Individual => 1,
        Pos::Shared => 2,
        Pos::Ordered => 3,
    }
}

/// The comm rank of the lowest rank on each host, in host order of appearance.
fn host_leaders(comm: &Comm) -> Vec<i32> {
    let Ok(e) = crate::runtime::engine() else { return vec![0] };
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
    let Ok(e) = crate::runtime::engine() else { return vec![0; comm.size() as usize] };
    let hosts = e.host_of();
    comm.group().iter().map(|&w| hosts.get(w as usize).copied().unwrap_or(0)).collect()
}

/// User conversion functions convert at most this many file bytes per call
/// (whole elements of the memory datatype, at least one), with the position
/// of the first element, as MPI-4.1 §14.5.3 allows.
pub const CONV_CHUNK: usize = 64 << 10;

/// Elements of `dt` per conversion call, and the file bytes of one.
fn conv_chunk(rep: &Datarep, dt: &Datatype) -> Result<(usize, usize)> {
    let one = rep.file_bytes(dt, 1)?.max(1) as usize;
    Ok(((CONV_CHUNK / one).max(1), one))
}

/// The file representation (`fbytes` bytes) of `count` elements of `dt` at `buf`.
///
/// # Safety
/// `buf` holds `count` elements of `dt`, readable.
unsafe fn to_file_stream<'a>(call: &str, rep: &Datarep, buf: *const u8, count: usize, dt: &Datatype, fbytes: u64) -> Result<Cow<'a, [u8]>> {
    let bytes = dt.size() * count;
    if bytes == 0 || fbytes == 0 {
        return Ok(Cow::Owned(Vec::new()));
    }
    let native = match rep {
        Datarep::Native | Datarep::Internal => true,
        Datarep::User(_, c) => !c.converts_writes(),
        Datarep::External32 => false,
    };
    if native && dt.is_contiguous() {
        // SAFETY: a contiguous datatype's `count` elements are the `bytes`
        // bytes from its true lower bound, readable by the caller's contract.
        return Ok(Cow::Borrowed(unsafe { std::slice::from_raw_parts(buf.wrapping_offset(dt.true_lb()), bytes) }));
    }
    let mut v = vec![0u8; fbytes as usize];
    match rep {
        Datarep::User(name, c) if c.converts_writes() => {
            let (per, one) = conv_chunk(rep, dt)?;
            let mut at = 0;
            while at < count {
                let n = per.min(count - at);
                // SAFETY: forwarded caller contract; elements `at..at + n` exist.
                unsafe { c.write(buf, dt, n, at, &mut v[at * one..(at + n) * one]) }.map_err(|e| conv_err(call, name, e))?;
                at += n;
            }
        }
        Datarep::External32 => {
            let mut packed = vec![0u8; bytes];
            // SAFETY: forwarded caller contract.
            unsafe { dt.pack(buf, count, &mut packed) };
            external32::encode(call, dt, count, &packed, &mut v)?;
        }
        _ => {
            // SAFETY: forwarded caller contract.
            unsafe { dt.pack(buf, count, &mut v) };
        }
    }
    Ok(Cow::Owned(v))
}

fn conv_err(call: &str, name: &str, e: MpiError) -> MpiError {
    if e.class == ErrorClass::Conversion {
        e
    } else {
        MpiError::new(ErrorClass::Conversion, format!("{call}: the conversion function of data representation \"{name}\" failed: {}", e.message))
    }
}

/// Moves `data` (the first `data.len()` bytes of the file representation of
/// `count` elements of `dt`) into memory at `buf`; returns the bytes of
/// memory data delivered. When the file sizes differ from the native ones
/// only whole elements of `dt` convert (a short read's partial element is
/// not delivered).
///
/// # Safety
/// `buf` holds `count` elements of `dt`, writable.
unsafe fn from_file_stream(call: &str, rep: &Datarep, data: &mut [u8], buf: *mut u8, count: usize, dt: &Datatype) -> Result<u64> {
    if data.is_empty() {
        return Ok(0);
    }
    let one = rep.file_bytes(dt, 1)?.max(1) as usize;
    let whole = (data.len() / one).min(count);
    let same = rep.same_sizes(dt)?;
    match rep {
        Datarep::User(name, c) if c.converts_reads() => {
            let (per, _) = conv_chunk(rep, dt)?;
            let mut at = 0;
            while at < whole {
                let n = per.min(whole - at);
                // SAFETY: forwarded caller contract; elements `at..at + n` exist.
                unsafe { c.read(buf, dt, n, at, &data[at * one..(at + n) * one]) }.map_err(|e| conv_err(call, name, e))?;
                at += n;
            }
            Ok((whole * dt.size()) as u64)
        }
        Datarep::External32 if !same => {
            let mut native = vec![0u8; whole * dt.size()];
            external32::decode(call, dt, whole, &data[..whole * one], &mut native)?;
            // SAFETY: forwarded caller contract.
            unsafe { dt.unpack_range(&native, buf, count, 0) };
            Ok(native.len() as u64)
        }
        _ => {
            if let Datarep::External32 = rep {
                // Whole elements convert; a short read's partial tail is left as read.
                let n = whole * one;
                let mut native = vec![0u8; n];
                external32::decode(call, dt, whole, &data[..n], &mut native)?;
                data[..n].copy_from_slice(&native);
            }
            // SAFETY: forwarded caller contract.
            unsafe { dt.unpack_range(data, buf, count, 0) };
            Ok(data.len() as u64)
        }
    }
}

/// `MPI_File_get_type_extent`: the extent of `dt` in the file under `rep`.
pub fn type_extent(call: &str, dt: &Datatype, rep: &Datarep) -> Result<u64> {
    Ok(view::file_type(call, dt, rep)?.extent().max(0) as u64)
}
