//! PMIx start-up: ranks started by a PMIx server (Open MPI's `mpirun`, whose
//! daemons serve PMIx; PRRTE's `prterun`; Slurm's `srun --mpi=pmix`) talk to
//! it through the system's PMIx client library, `libpmix.so.2` (Debian's
//! `libpmix2`), loaded at run time with `dlopen`: oxmpi builds, links and runs
//! without it, and only a process started under PMIx loads it.
//!
//! What the rest of oxmpi needs maps onto a handful of calls: `PMIx_Init`
//! (rank, namespace), `PMIx_Get` of job information (`pmix.job.size`,
//! `pmix.appnum`, `pmix.univ.size`, every rank's `pmix.nodeid` for the node
//! map), `PMIx_Put` + `PMIx_Commit` + `PMIx_Fence` with data collection (the
//! exchange of addresses and a barrier), `PMIx_Get` of a peer's keys,
//! `PMIx_Spawn` (MPI_Comm_spawn: the parents' port travels to the new job in
//! its environment, with `PMI_SPAWNED=1`, and the job connects back through
//! the port as under any other launcher), `PMIx_Abort` and `PMIx_Finalize`.
//!
//! The C structures are declared here with the layout of PMIx's
//! `pmix_common.h` (v3 to v5 agree on it): `pmix_proc_t` (a 256-byte
//! namespace and a `uint32_t` rank), `pmix_value_t` (a `uint16_t` type and an
//! 8-byte-aligned 24-byte union), `pmix_info_t` (a 512-byte key, `uint32_t`
//! flags, a value).

use std::ffi::{c_char, c_int, c_void, CStr, CString};

use crate::error::PmiError;

/// `PMIX_MAX_NSLEN + 1`.
const NSLEN: usize = 256;
/// `PMIX_MAX_KEYLEN + 1`.
const KEYLEN: usize = 512;
const PMIX_SUCCESS: c_int = 0;
const PMIX_RANK_WILDCARD: u32 = u32::MAX - 1;
const PMIX_GLOBAL: u8 = 3;
// Data types (pmix_common.h).
const PMIX_BOOL: u16 = 1;
const PMIX_STRING: u16 = 3;
const PMIX_SIZE: u16 = 4;
const PMIX_INT: u16 = 6;
const PMIX_INT32: u16 = 9;
const PMIX_UINT: u16 = 11;
const PMIX_UINT16: u16 = 13;
const PMIX_UINT32: u16 = 14;
const PMIX_UINT64: u16 = 15;
const PMIX_PROC_RANK: u16 = 40;
const PMIX_DATA_ARRAY: u16 = 39;
/// PMIX_QUERY_PARTIAL_SUCCESS: some keys of a query were answered.
const PMIX_QUERY_PARTIAL_SUCCESS: c_int = -104;

#[repr(C)]
#[derive(Clone, Copy)]
struct Proc {
    nspace: [u8; NSLEN],
    rank: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Value {
    ty: u16,
    /// The union: `bool`, integers, `char *`, ... at its start.
    data: [u64; 3],
}

#[repr(C)]
struct Info {
    key: [u8; KEYLEN],
    flags: u32,
    value: Value,
}

type InitFn = unsafe extern "C" fn(*mut Proc, *mut Info, usize) -> c_int;
type FinalizeFn = unsafe extern "C" fn(*const Info, usize) -> c_int;
type AbortFn = unsafe extern "C" fn(c_int, *const c_char, *mut Proc, usize) -> c_int;
type PutFn = unsafe extern "C" fn(u8, *const c_char, *mut Value) -> c_int;
type CommitFn = unsafe extern "C" fn() -> c_int;
type FenceFn = unsafe extern "C" fn(*const Proc, usize, *const Info, usize) -> c_int;
type GetFn =
    unsafe extern "C" fn(*const Proc, *const c_char, *const Info, usize, *mut *mut Value) -> c_int;
type ValueDestructFn = unsafe extern "C" fn(*mut Value);
type ErrorStringFn = unsafe extern "C" fn(c_int) -> *const c_char;
type PublishFn = unsafe extern "C" fn(*const Info, usize) -> c_int;
type LookupFn = unsafe extern "C" fn(*mut Pdata, usize, *const Info, usize) -> c_int;
type UnpublishFn = unsafe extern "C" fn(*mut *mut c_char, *const Info, usize) -> c_int;
type SpawnFn = unsafe extern "C" fn(*const Info, usize, *const App, usize, *mut u8) -> c_int;
type JobControlFn = unsafe extern "C" fn(
    *const Proc,
    usize,
    *const Info,
    usize,
    *mut *mut Info,
    *mut usize,
) -> c_int;
type QueryFn = unsafe extern "C" fn(*mut Query, usize, *mut *mut Info, *mut usize) -> c_int;

/// `pmix_query_t`: keys asked for (NULL-terminated) and their qualifiers.
#[repr(C)]
struct Query {
    keys: *mut *mut c_char,
    qualifiers: *mut Info,
    nqual: usize,
}

/// `pmix_data_array_t`: `size` elements of type `ty` at `array`.
#[repr(C)]
struct DataArray {
    ty: u16,
    size: usize,
    array: *mut c_void,
}

/// `pmix_pdata_t`: a published key, its value and who published it.
#[repr(C)]
struct Pdata {
    proc_: Proc,
    key: [u8; KEYLEN],
    value: Value,
}

/// `pmix_app_t`: one application of a `PMIx_Spawn`.
#[repr(C)]
struct App {
    cmd: *const c_char,
    /// NULL-terminated, `argv[0]` included.
    argv: *const *const c_char,
    /// NULL-terminated `NAME=value` strings added to the environment.
    env: *const *const c_char,
    cwd: *const c_char,
    maxprocs: c_int,
    info: *const Info,
    ninfo: usize,
}

/// The environment variable under which a job started by `PMIx_Spawn` finds
/// a value its parents gave it (`preput` of [`PmixClient::spawn`]): the
/// prefix followed by the key. The processes themselves are the only readers
/// (a process's environment is readable by its user alone).
pub(crate) const PREPUT_ENV_PREFIX: &str = "OXMPI_PMIX_PREPUT_";

/// The library's entry points.
struct Api {
    init: InitFn,
    finalize: FinalizeFn,
    abort: AbortFn,
    put: PutFn,
    commit: CommitFn,
    fence: FenceFn,
    get: GetFn,
    value_destruct: ValueDestructFn,
    error_string: ErrorStringFn,
    /// `PMIx_Spawn`, when the library has it (every PMIx since v1 does).
    spawn: Option<SpawnFn>,
    /// `PMIx_Publish`, `PMIx_Lookup`, `PMIx_Unpublish`, when the library has them.
    names: Option<(PublishFn, LookupFn, UnpublishFn)>,
    /// `PMIx_Query_info`, the blocking query of PMIx v4 and later.
    query: Option<QueryFn>,
    /// `PMIx_Job_control`, the blocking job control of PMIx v4 and later.
    job_control: Option<JobControlFn>,
}

/// Whether the environment says a PMIx server started this process.
pub fn detected() -> bool {
    std::env::var_os("PMIX_RANK").is_some() && std::env::var_os("PMIX_NAMESPACE").is_some()
}

/// The library names tried, in order (`OXMPI_PMIX_LIBRARY` first when set).
fn library_names() -> Vec<String> {
    let mut v = Vec::new();
    if let Ok(p) = std::env::var("OXMPI_PMIX_LIBRARY") {
        if !p.is_empty() {
            v.push(p);
        }
    }
    v.extend(["libpmix.so.2", "libpmix.so"].map(String::from));
    v
}

fn dlerror() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next dl* call on this thread; it is copied at once.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown error".into()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

fn load() -> Result<Api, PmiError> {
    let mut tried = Vec::new();
    let mut handle = std::ptr::null_mut();
    for name in library_names() {
        let c = CString::new(name.clone()).map_err(|_| PmiError::Env {
            var: "OXMPI_PMIX_LIBRARY",
            problem: "contains a NUL byte".into(),
        })?;
        // SAFETY: dlopen with a NUL-terminated name; loading libpmix runs its constructors, which only initialise the library itself.
        handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if !handle.is_null() {
            break;
        }
        tried.push(format!("{name}: {}", dlerror()));
    }
    if handle.is_null() {
        return Err(PmiError::Env {
            var: "PMIX_RANK",
            problem: format!(
                "this process was started by a PMIx server, but the PMIx client library \
                 cannot be loaded (install libpmix2, or name the library in OXMPI_PMIX_LIBRARY): {}",
                tried.join("; ")
            ),
        });
    }
    let sym = |name: &str| -> Result<*mut c_void, PmiError> {
        let c = CString::new(name).expect("symbol names have no NUL");
        // SAFETY: dlsym on the handle just opened, with a NUL-terminated name.
        let p = unsafe { libc::dlsym(handle, c.as_ptr()) };
        if p.is_null() {
            Err(PmiError::Env {
                var: "PMIX_RANK",
                problem: format!("the PMIx library has no {name}: {}", dlerror()),
            })
        } else {
            Ok(p)
        }
    };
    // SAFETY: each symbol is the PMIx function of that name, whose C prototype (pmix.h) the function pointer type repeats.
    unsafe {
        Ok(Api {
            init: std::mem::transmute::<*mut c_void, InitFn>(sym("PMIx_Init")?),
            finalize: std::mem::transmute::<*mut c_void, FinalizeFn>(sym("PMIx_Finalize")?),
            abort: std::mem::transmute::<*mut c_void, AbortFn>(sym("PMIx_Abort")?),
            put: std::mem::transmute::<*mut c_void, PutFn>(sym("PMIx_Put")?),
            commit: std::mem::transmute::<*mut c_void, CommitFn>(sym("PMIx_Commit")?),
            fence: std::mem::transmute::<*mut c_void, FenceFn>(sym("PMIx_Fence")?),
            get: std::mem::transmute::<*mut c_void, GetFn>(sym("PMIx_Get")?),
            value_destruct: std::mem::transmute::<*mut c_void, ValueDestructFn>(sym(
                "PMIx_Value_destruct",
            )?),
            error_string: std::mem::transmute::<*mut c_void, ErrorStringFn>(sym(
                "PMIx_Error_string",
            )?),
            spawn: sym("PMIx_Spawn")
                .ok()
                .map(|p| std::mem::transmute::<*mut c_void, SpawnFn>(p)),
            names: match (
                sym("PMIx_Publish"),
                sym("PMIx_Lookup"),
                sym("PMIx_Unpublish"),
            ) {
                (Ok(p), Ok(l), Ok(u)) => Some((
                    std::mem::transmute::<*mut c_void, PublishFn>(p),
                    std::mem::transmute::<*mut c_void, LookupFn>(l),
                    std::mem::transmute::<*mut c_void, UnpublishFn>(u),
                )),
                _ => None,
            },
            query: sym("PMIx_Query_info")
                .ok()
                .map(|p| std::mem::transmute::<*mut c_void, QueryFn>(p)),
            job_control: sym("PMIx_Job_control")
                .ok()
                .map(|p| std::mem::transmute::<*mut c_void, JobControlFn>(p)),
        })
    }
}

/// The MPI info of a spawn command with the `key=value` lines of the file its
/// `file` key names (blank lines and `#` comments skipped) added after it, as
/// our mpiexec reads them.
fn spawn_info(info: &[(String, String)]) -> Result<Vec<(String, String)>, PmiError> {
    let mut all = info.to_vec();
    if let Some((_, file)) = info.iter().rev().find(|(k, _)| k == "file") {
        let bad = |reason: String| PmiError::InvalidValue {
            key: "file".into(),
            reason,
        };
        let text =
            std::fs::read_to_string(file).map_err(|e| bad(format!("info file={file:?}: {e}")))?;
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| bad(format!("info file={file:?}: {line:?} is not key=value")))?;
            all.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    Ok(all)
}

/// `execname` found in the first directory of `path` (`:`-separated, the MPI
/// info key) that holds such a file, when it names no directory itself;
/// otherwise `execname` as given (the server searches its own PATH).
fn program_on_path(execname: &str, path: Option<&str>) -> String {
    match path {
        Some(path) if !execname.contains('/') => path
            .split(':')
            .filter(|d| !d.is_empty())
            .map(|d| std::path::Path::new(d).join(execname))
            .find(|p| p.is_file())
            .map_or_else(
                || execname.to_string(),
                |p| p.to_string_lossy().into_owned(),
            ),
        _ => execname.to_string(),
    }
}

/// A value `PMIx_Get` returned, decoded.
enum Got {
    Str(String),
    Int(i64),
    /// A type oxmpi does not read.
    Other,
}

/// A process's connection to its PMIx server.
pub(crate) struct PmixClient {
    api: Api,
    me: Proc,
    pub(crate) rank: u32,
    pub(crate) size: u32,
    pub(crate) appnum: i32,
    pub(crate) universe_size: i32,
    pub(crate) nspace: String,
}

fn key(name: &str) -> Result<CString, PmiError> {
    if name.is_empty() || name.len() >= KEYLEN {
        return Err(PmiError::InvalidKey {
            key: name.into(),
            reason: format!("PMIx keys have 1 to {} bytes", KEYLEN - 1),
        });
    }
    CString::new(name).map_err(|_| PmiError::InvalidKey {
        key: name.into(),
        reason: "contains a NUL byte".into(),
    })
}

impl PmixClient {
    /// `PMIx_Init`, then the job's size, this process's application number and
    /// the universe size.
    pub(crate) fn init() -> Result<PmixClient, PmiError> {
        let api = load()?;
        let mut me = Proc {
            nspace: [0; NSLEN],
            rank: 0,
        };
        // SAFETY: `me` is a writable pmix_proc_t; no info array.
        let rc = unsafe { (api.init)(&mut me, std::ptr::null_mut(), 0) };
        let nspace = String::from_utf8_lossy(
            &me.nspace[..me.nspace.iter().position(|&b| b == 0).unwrap_or(NSLEN)],
        )
        .into_owned();
        let mut c = PmixClient {
            api,
            me,
            rank: me.rank,
            size: 0,
            appnum: 0,
            universe_size: 0,
            nspace,
        };
        c.check(rc, "PMIx_Init")?;
        let size = match c.get_job("pmix.job.size")? {
            Got::Int(n) if n > 0 => n as u32,
            _ => {
                return Err(PmiError::Protocol {
                    expected: "pmix.job.size, a positive integer".into(),
                    got: "something else".into(),
                })
            }
        };
        c.size = size;
        let me_rank = c.rank;
        c.appnum = match c.get_proc(me_rank, "pmix.appnum", true)? {
            Some(Got::Int(n)) if n >= 0 => n as i32,
            _ => 0,
        };
        c.universe_size = match c.get_job("pmix.univ.size") {
            Ok(Got::Int(n)) if n > 0 => n as i32,
            _ => size as i32,
        };
        Ok(c)
    }

    fn error_text(&self, rc: c_int) -> String {
        // SAFETY: PMIx_Error_string returns a static NUL-terminated string.
        unsafe {
            let p = (self.api.error_string)(rc);
            let text = if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            };
            // Open MPI 4's daemons answer some requests with codes of their
            // own, which PMIx has no text for.
            if text.is_empty() || text == "ERROR STRING NOT FOUND" {
                format!(
                    "status {rc}, not a PMIx status: the server's own code; its messages say more"
                )
            } else {
                text
            }
        }
    }

    fn check(&self, rc: c_int, what: &str) -> Result<(), PmiError> {
        if rc == PMIX_SUCCESS {
            Ok(())
        } else {
            Err(PmiError::Server {
                cmd: what.into(),
                rc: rc as i64,
                msg: Some(self.error_text(rc)),
            })
        }
    }

    fn proc_of(&self, rank: u32) -> Proc {
        Proc {
            nspace: self.me.nspace,
            rank,
        }
    }

    /// `PMIx_Get` of `key` from `rank`; `optional`: only what the server
    /// already holds (no wait), `None` when absent.
    fn get_raw(&self, rank: u32, name: &str, optional: bool) -> Result<Option<Got>, PmiError> {
        let k = key(name)?;
        let p = self.proc_of(rank);
        let mut info = Info {
            key: [0; KEYLEN],
            flags: 0,
            value: Value {
                ty: PMIX_BOOL,
                data: [1, 0, 0],
            },
        };
        info.key[..13].copy_from_slice(b"pmix.optional");
        let (infos, ninfo): (*const Info, usize) = if optional {
            (&info, 1)
        } else {
            (std::ptr::null(), 0)
        };
        let mut out: *mut Value = std::ptr::null_mut();
        // SAFETY: a valid proc, a NUL-terminated key, `ninfo` infos, and a place for the returned pointer.
        let rc = unsafe { (self.api.get)(&p, k.as_ptr(), infos, ninfo, &mut out) };
        if rc != PMIX_SUCCESS || out.is_null() {
            if optional {
                return Ok(None);
            }
            self.check(
                if rc == PMIX_SUCCESS { -1 } else { rc },
                &format!("PMIx_Get {name} of rank {rank}"),
            )?;
        }
        // SAFETY: PMIx returned a valid, initialised pmix_value_t that we own.
        let v = unsafe { *out };
        let got = match v.ty {
            PMIX_STRING => {
                let s = v.data[0] as *const c_char;
                if s.is_null() {
                    Got::Str(String::new())
                } else {
                    // SAFETY: a PMIX_STRING value holds a NUL-terminated string owned by the value.
                    Got::Str(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
                }
            }
            PMIX_UINT16 => Got::Int((v.data[0] & 0xffff) as i64),
            PMIX_UINT32 | PMIX_PROC_RANK | PMIX_UINT => Got::Int((v.data[0] & 0xffff_ffff) as i64),
            PMIX_INT | PMIX_INT32 => Got::Int((v.data[0] as u32) as i32 as i64),
            PMIX_UINT64 | PMIX_SIZE => Got::Int(v.data[0] as i64),
            _ => Got::Other,
        };
        // SAFETY: PMIX_VALUE_RELEASE: destruct the value PMIx allocated, then free it.
        unsafe {
            (self.api.value_destruct)(out);
            libc::free(out as *mut c_void);
        }
        Ok(Some(got))
    }

    fn get_job(&self, name: &str) -> Result<Got, PmiError> {
        Ok(self
            .get_raw(PMIX_RANK_WILDCARD, name, false)?
            .expect("a value or an error"))
    }

    fn get_proc(&self, rank: u32, name: &str, optional: bool) -> Result<Option<Got>, PmiError> {
        self.get_raw(rank, name, optional)
    }

    /// `PMIx_Put` of a string, shared with every process of the job.
    pub(crate) fn put(&mut self, name: &str, value: &str) -> Result<(), PmiError> {
        let k = key(name)?;
        let v = CString::new(value).map_err(|_| PmiError::InvalidValue {
            key: name.into(),
            reason: "contains a NUL byte".into(),
        })?;
        let mut val = Value {
            ty: PMIX_STRING,
            data: [v.as_ptr() as u64, 0, 0],
        };
        // SAFETY: a NUL-terminated key and a PMIX_STRING value whose string outlives the call (PMIx copies it).
        let rc = unsafe { (self.api.put)(PMIX_GLOBAL, k.as_ptr(), &mut val) };
        self.check(rc, &format!("PMIx_Put {name}"))
    }

    /// `PMIx_Commit`, then `PMIx_Fence` over the whole job collecting the
    /// data: a barrier after which every `put` is readable by every process.
    pub(crate) fn fence(&mut self) -> Result<(), PmiError> {
        // SAFETY: no arguments.
        let rc = unsafe { (self.api.commit)() };
        self.check(rc, "PMIx_Commit")?;
        let all = self.proc_of(PMIX_RANK_WILDCARD);
        let mut info = Info {
            key: [0; KEYLEN],
            flags: 0,
            value: Value {
                ty: PMIX_BOOL,
                data: [1, 0, 0],
            },
        };
        info.key[..12].copy_from_slice(b"pmix.collect");
        // SAFETY: one proc (the whole namespace) and one info, both valid.
        let rc = unsafe { (self.api.fence)(&all, 1, &info, 1) };
        self.check(rc, "PMIx_Fence")
    }

    /// The string `rank` put under `name`; `None` when it put nothing (or a
    /// value of another type).
    pub(crate) fn get_of(&mut self, rank: u32, name: &str) -> Result<Option<String>, PmiError> {
        if rank >= self.size {
            return Ok(None);
        }
        Ok(match self.get_proc(rank, name, false)? {
            Some(Got::Str(s)) => Some(s),
            _ => None,
        })
    }

    /// The node of every rank (`pmix.nodeid`), as a `PMI_process_mapping`
    /// vector (`(vector,(node,count,1)...)`), or `None` when the server does not say.
    pub(crate) fn process_mapping(&mut self) -> Result<Option<String>, PmiError> {
        let mut nodes = Vec::with_capacity(self.size as usize);
        for r in 0..self.size {
            match self.get_proc(r, "pmix.nodeid", false) {
                Ok(Some(Got::Int(n))) => nodes.push(n as u32),
                _ => return Ok(None),
            }
        }
        Ok(Some(crate::server::nodes_mapping(&nodes)))
    }

    /// `PMIx_Spawn` of `commands` as one new job (one PMIx application per
    /// command, so MPI_APPNUM numbers them), with every `preput` pair in the
    /// new processes' environment (under [`PREPUT_ENV_PREFIX`]) and
    /// `PMI_SPAWNED=1`. MPI info keys: `wdir` becomes the application's
    /// working directory, `host` PMIx's `pmix.host`, `path` where the
    /// program is looked for, `file` a file of more `key=value` lines; `soft`
    /// is not PMIx's (all `maxprocs` are asked for). Returns the new job's namespace.
    pub(crate) fn spawn(
        &mut self,
        commands: &[crate::server::SpawnCommand],
        preput: &[(String, String)],
    ) -> Result<String, PmiError> {
        let Some(spawn) = self.api.spawn else {
            return Err(PmiError::Server {
                cmd: "PMIx_Spawn".into(),
                rc: -47,
                msg: Some("this PMIx client library has no PMIx_Spawn".into()),
            });
        };
        let cstr = |what: &str, s: &str| {
            CString::new(s).map_err(|_| PmiError::InvalidValue {
                key: what.into(),
                reason: format!("{s:?} contains a NUL byte"),
            })
        };
        let mut env = vec![CString::new("PMI_SPAWNED=1").expect("no NUL")];
        for (k, v) in preput {
            env.push(cstr("preput", &format!("{PREPUT_ENV_PREFIX}{k}={v}"))?);
        }
        let env_ptrs: Vec<*const c_char> = env
            .iter()
            .map(|c| c.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        // Everything the apps point at lives until PMIx_Spawn returns.
        let mut strings: Vec<CString> = Vec::new();
        let mut argvs: Vec<Vec<*const c_char>> = Vec::new();
        let mut infos: Vec<Vec<Info>> = Vec::new();
        let mut cwds: Vec<Option<CString>> = Vec::new();
        for c in commands {
            let mut argv = vec![cstr("command", &c.execname)?];
            for a in &c.args {
                argv.push(cstr("argv", a)?);
            }
            argvs.push(
                argv.iter()
                    .map(|a| a.as_ptr())
                    .chain(std::iter::once(std::ptr::null()))
                    .collect(),
            );
            strings.extend(argv);
            let mut cwd = None;
            let mut info = Vec::new();
            for (k, v) in &spawn_info(&c.info)? {
                match k.as_str() {
                    "wdir" => cwd = Some(cstr("wdir", v)?),
                    "host" => {
                        let h = cstr("host", v)?;
                        let mut i = Info {
                            key: [0; KEYLEN],
                            flags: 0,
                            value: Value {
                                ty: PMIX_STRING,
                                data: [h.as_ptr() as u64, 0, 0],
                            },
                        };
                        i.key[..9].copy_from_slice(b"pmix.host");
                        info.push(i);
                        strings.push(h);
                    }
                    _ => {}
                }
            }
            cwds.push(cwd);
            infos.push(info);
        }
        let cmds: Vec<CString> = commands
            .iter()
            .map(|c| {
                let info = spawn_info(&c.info)?;
                cstr(
                    "command",
                    &program_on_path(
                        &c.execname,
                        info.iter()
                            .rev()
                            .find(|(k, _)| k == "path")
                            .map(|(_, v)| v.as_str()),
                    ),
                )
            })
            .collect::<Result<_, _>>()?;
        let apps: Vec<App> = commands
            .iter()
            .enumerate()
            .map(|(i, c)| App {
                cmd: cmds[i].as_ptr(),
                argv: argvs[i].as_ptr(),
                env: env_ptrs.as_ptr(),
                cwd: cwds[i].as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
                maxprocs: c.nprocs.min(i32::MAX as u32) as c_int,
                info: if infos[i].is_empty() {
                    std::ptr::null()
                } else {
                    infos[i].as_ptr()
                },
                ninfo: infos[i].len(),
            })
            .collect();
        let mut nspace = [0u8; NSLEN];
        // SAFETY: `apps` are valid pmix_app_t whose strings, arrays and infos (`cmds`, `argvs`, `env_ptrs`, `cwds`, `infos`, `strings`) outlive the call; `nspace` is a writable pmix_nspace_t.
        let rc = unsafe {
            spawn(
                std::ptr::null(),
                0,
                apps.as_ptr(),
                apps.len(),
                nspace.as_mut_ptr(),
            )
        };
        drop(strings);
        if rc != PMIX_SUCCESS && nspace[0] != 0 {
            // Open MPI 4's `mpirun` names the job it could not start and
            // keeps it pending: it would wait for it forever once the
            // parents are done. Kill it, so that the server forgets it.
            self.kill_job(&nspace);
        }
        self.check(rc, "PMIx_Spawn")?;
        Ok(
            String::from_utf8_lossy(
                &nspace[..nspace.iter().position(|&b| b == 0).unwrap_or(NSLEN)],
            )
            .into_owned(),
        )
    }

    /// The PMIx server's name service (MPI_Publish_name & co.): `Publish` and
    /// `Unpublish` return `None`, `Lookup` the port published under `service`
    /// (it does not wait for one). The server's default range applies (Open
    /// MPI's `mpirun`: the processes it started; other jobs through its
    /// `ompi-server`).
    pub(crate) fn name_service(
        &mut self,
        op: crate::server::NameOp,
        service: &str,
        port: &str,
    ) -> Result<Option<String>, PmiError> {
        // The message names the PMIx call (callers show only the message).
        self.name_op(op, service, port).map_err(|e| match e {
            PmiError::Server { cmd, rc, msg } => PmiError::Server {
                msg: Some(format!("{cmd}: {}", msg.unwrap_or_default())),
                cmd,
                rc,
            },
            e => e,
        })
    }

    fn name_op(
        &mut self,
        op: crate::server::NameOp,
        service: &str,
        port: &str,
    ) -> Result<Option<String>, PmiError> {
        use crate::server::NameOp;
        let Some((publish, lookup, unpublish)) = self.api.names else {
            return Err(PmiError::Server {
                cmd: "PMIx_Publish".into(),
                rc: -47,
                msg: Some("this PMIx client library has no name service".into()),
            });
        };
        let k = key(service)?;
        match op {
            NameOp::Publish => {
                // Open MPI's data server lets a process publish a name again
                // over its own: a name is published once (MPI_ERR_SERVICE).
                if self.name_op(NameOp::Lookup, service, "").is_ok() {
                    return Err(PmiError::Server {
                        cmd: format!("PMIx_Publish of {service}"),
                        rc: -53,
                        msg: Some(format!("{service} is already published")),
                    });
                }
                let v = CString::new(port).map_err(|_| PmiError::InvalidValue {
                    key: service.into(),
                    reason: "the port contains a NUL byte".into(),
                })?;
                let mut info = Info {
                    key: [0; KEYLEN],
                    flags: 0,
                    value: Value {
                        ty: PMIX_STRING,
                        data: [v.as_ptr() as u64, 0, 0],
                    },
                };
                info.key[..service.len()].copy_from_slice(service.as_bytes());
                // SAFETY: one valid info whose key and string outlive the call.
                let rc = unsafe { publish(&info, 1) };
                self.check(rc, &format!("PMIx_Publish of {service}"))
                    .map(|()| None)
            }
            NameOp::Unpublish => {
                // Nor does it refuse to unpublish a name nobody published.
                if self.name_op(NameOp::Lookup, service, "").is_err() {
                    return Err(PmiError::Server {
                        cmd: format!("PMIx_Unpublish of {service}"),
                        rc: -46,
                        msg: Some(format!("{service} is not published")),
                    });
                }
                let mut keys = [k.as_ptr() as *mut c_char, std::ptr::null_mut()];
                // SAFETY: a NULL-terminated array of one NUL-terminated key, which PMIx only reads.
                let rc = unsafe { unpublish(keys.as_mut_ptr(), std::ptr::null(), 0) };
                self.check(rc, &format!("PMIx_Unpublish of {service}"))
                    .map(|()| None)
            }
            NameOp::Lookup => {
                let mut d = Pdata {
                    proc_: Proc {
                        nspace: [0; NSLEN],
                        rank: 0,
                    },
                    key: [0; KEYLEN],
                    value: Value {
                        ty: 0,
                        data: [0; 3],
                    },
                };
                d.key[..service.len()].copy_from_slice(service.as_bytes());
                // SAFETY: one valid pmix_pdata_t with its key set; no infos.
                let rc = unsafe { lookup(&mut d, 1, std::ptr::null(), 0) };
                self.check(rc, &format!("PMIx_Lookup of {service}"))?;
                let port = if d.value.ty == PMIX_STRING && d.value.data[0] != 0 {
                    Some(
                        // SAFETY: a PMIX_STRING value holds a NUL-terminated string owned by the value.
                        unsafe { CStr::from_ptr(d.value.data[0] as *const c_char) }
                            .to_string_lossy()
                            .into_owned(),
                    )
                } else {
                    None
                };
                // SAFETY: releases what PMIx put into the value (not the value itself, ours).
                unsafe { (self.api.value_destruct)(&mut d.value) };
                Ok(port)
            }
        }
    }

    /// Every rank's `pmix.appnum` (PMIx gives each process's application
    /// context to all); `None` when the server leaves one out.
    pub(crate) fn rank_appnums(&mut self) -> Result<Option<Vec<u32>>, PmiError> {
        let mut all = Vec::with_capacity(self.size as usize);
        for r in 0..self.size {
            match self.get_proc(r, "pmix.appnum", true)? {
                Some(Got::Int(n)) if n >= 0 => all.push(n as u32),
                _ => return Ok(None),
            }
        }
        Ok(Some(all))
    }

    /// The process sets the server defines that hold processes of this job:
    /// their names come from `PMIx_Query_info` of `pmix.qry.psets`
    /// (PMIX_QUERY_PSET_NAMES, after `pmix.qry.psetnum`), their members from
    /// each process's own `pmix.pset.nm` (PMIX_PSET_NAME, which PRRTE gives
    /// the processes of an application started with `--pset NAME`). A server
    /// that defines none (Open MPI 4's `mpirun` answers NOT-FOUND, Slurm
    /// UNREACHABLE or NOT-SUPPORTED) yields an empty list, not an error.
    pub(crate) fn psets(&mut self) -> Result<Vec<(String, Vec<u32>)>, PmiError> {
        let mut names = self.query_pset_names();
        let mut members: Vec<(String, Vec<u32>)> = Vec::new();
        for r in 0..self.size {
            if let Some(Got::Str(name)) = self.get_proc(r, "pmix.pset.nm", true)? {
                if name.is_empty() {
                    continue;
                }
                match members.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, ranks)) => ranks.push(r),
                    None => members.push((name, vec![r])),
                }
            }
        }
        // Names the query gave first, in its order; then any it left out.
        for (n, _) in &members {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        Ok(names
            .into_iter()
            .filter_map(|n| members.iter().find(|(m, _)| *m == n).cloned())
            .collect())
    }

    /// The names `PMIx_Query_info` returns for PMIX_QUERY_PSET_NAMES: a
    /// comma-separated string (PRRTE) or an array of strings; empty when the
    /// library has no blocking query or the server answers anything but success.
    fn query_pset_names(&mut self) -> Vec<String> {
        let Some(query) = self.api.query else {
            return Vec::new();
        };
        let mut k_num = *b"pmix.qry.psetnum\0";
        let mut k_names = *b"pmix.qry.psets\0";
        let mut keys = [
            k_num.as_mut_ptr() as *mut c_char,
            k_names.as_mut_ptr() as *mut c_char,
            std::ptr::null_mut(),
        ];
        let mut q = Query {
            keys: keys.as_mut_ptr(),
            qualifiers: std::ptr::null_mut(),
            nqual: 0,
        };
        let mut results: *mut Info = std::ptr::null_mut();
        let mut nresults = 0usize;
        // SAFETY: one query whose NULL-terminated key array and keys outlive the call; PMIx only reads them and fills `results`/`nresults`.
        let rc = unsafe { query(&mut q, 1, &mut results, &mut nresults) };
        let mut names = Vec::new();
        if results.is_null() {
            return names;
        }
        // A partial success still carries what was found.
        if rc == PMIX_SUCCESS || rc == PMIX_QUERY_PARTIAL_SUCCESS {
            // SAFETY: PMIx returned `nresults` initialised pmix_info_t at `results`.
            let infos = unsafe { std::slice::from_raw_parts(results, nresults) };
            for info in infos
                .iter()
                .filter(|i| i.key.starts_with(b"pmix.qry.psets\0"))
            {
                let v = &info.value;
                match v.ty {
                    PMIX_STRING if v.data[0] != 0 => {
                        // SAFETY: a PMIX_STRING value holds a NUL-terminated string.
                        let s = unsafe { CStr::from_ptr(v.data[0] as *const c_char) }
                            .to_string_lossy()
                            .into_owned();
                        names.extend(
                            s.split(',')
                                .map(str::trim)
                                .filter(|n| !n.is_empty())
                                .map(String::from),
                        );
                    }
                    PMIX_DATA_ARRAY if v.data[0] != 0 => {
                        // SAFETY: a PMIX_DATA_ARRAY value points at a pmix_data_array_t.
                        let a = unsafe { &*(v.data[0] as *const DataArray) };
                        if a.ty == PMIX_STRING && !a.array.is_null() {
                            // SAFETY: an array of `size` string pointers.
                            let strs = unsafe {
                                std::slice::from_raw_parts(a.array as *const *const c_char, a.size)
                            };
                            for &p in strs.iter().filter(|p| !p.is_null()) {
                                names.push(
                                    // SAFETY: each a NUL-terminated string owned by the array.
                                    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned(),
                                );
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        // SAFETY: PMIX_INFO_FREE: destruct every value PMIx gave us, then free the array.
        unsafe {
            for i in 0..nresults {
                (self.api.value_destruct)(&mut (*results.add(i)).value);
            }
            libc::free(results as *mut c_void);
        }
        names
    }

    /// `PMIx_Job_control` with PMIX_JOB_CTRL_KILL of every process of
    /// namespace `nspace`. Best effort: the answer is not needed (a server
    /// that has nothing left of the job may log that it found nothing).
    fn kill_job(&mut self, nspace: &[u8; NSLEN]) {
        let Some(job_control) = self.api.job_control else {
            return;
        };
        let target = Proc {
            nspace: *nspace,
            rank: PMIX_RANK_WILDCARD,
        };
        let mut kill = Info {
            key: [0; KEYLEN],
            flags: 0,
            value: Value {
                ty: PMIX_BOOL,
                data: [1, 0, 0],
            },
        };
        kill.key[..15].copy_from_slice(b"pmix.jctrl.kill");
        let mut results: *mut Info = std::ptr::null_mut();
        let mut nresults = 0usize;
        // SAFETY: one valid target and one valid directive; PMIx fills `results`/`nresults`, released below.
        unsafe {
            job_control(&target, 1, &kill, 1, &mut results, &mut nresults);
            if !results.is_null() {
                for i in 0..nresults {
                    (self.api.value_destruct)(&mut (*results.add(i)).value);
                }
                libc::free(results as *mut c_void);
            }
        }
    }

    /// `PMIx_Abort` of the whole job.
    pub(crate) fn abort(&mut self, code: i32, msg: &str) -> Result<(), PmiError> {
        let m = CString::new(msg.replace('\0', " ")).unwrap_or_default();
        // SAFETY: a NUL-terminated message; no procs means the whole job.
        let rc = unsafe { (self.api.abort)(code, m.as_ptr(), std::ptr::null_mut(), 0) };
        self.check(rc, "PMIx_Abort")
    }

    /// `PMIx_Finalize`.
    pub(crate) fn finalize(self) -> Result<(), PmiError> {
        // SAFETY: no info array.
        let rc = unsafe { (self.api.finalize)(std::ptr::null(), 0) };
        self.check(rc, "PMIx_Finalize")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_pmix_common_h() {
        assert_eq!(std::mem::size_of::<Proc>(), 260);
        assert_eq!(std::mem::size_of::<Value>(), 32);
        assert_eq!(std::mem::offset_of!(Value, data), 8);
        assert_eq!(std::mem::size_of::<Info>(), 552);
        assert_eq!(std::mem::offset_of!(Info, flags), 512);
        assert_eq!(std::mem::offset_of!(Info, value), 520);
        assert_eq!(std::mem::size_of::<App>(), 56);
        assert_eq!(std::mem::size_of::<Pdata>(), 808);
        assert_eq!(std::mem::offset_of!(Pdata, value), 776);
        assert_eq!(std::mem::offset_of!(App, maxprocs), 32);
        assert_eq!(std::mem::offset_of!(App, info), 40);
        assert_eq!(std::mem::size_of::<Query>(), 24);
        assert_eq!(std::mem::size_of::<DataArray>(), 24);
        assert_eq!(std::mem::offset_of!(DataArray, array), 16);
    }
}
