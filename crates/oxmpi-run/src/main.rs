//! `mpiexec`: starts the ranks of an oxmpi (or any PMI-1) job on this
//! machine or on several hosts and serves PMI-1 to them.

mod args;
mod hang;
mod hosts;
mod job;
mod output;
mod spawn;
mod sys;

use std::ffi::OsString;
use std::path::Path;

use args::{Command, HostSource};

/// Exit status for command-line mistakes, as for most Unix tools.
const EXIT_USAGE: i32 = 2;
/// Exit status when the program cannot be found or run, as in a shell.
const EXIT_NOT_RUNNABLE: i32 = 127;

const SHM_DIR: &str = "/dev/shm";

fn main() {
    let code = real_main();
    std::process::exit(code);
}

fn real_main() -> i32 {
    let options = match args::parse(std::env::args_os().skip(1)) {
        Ok(Command::Run(options)) => options,
        Ok(Command::Help) => {
            println!("{}", args::USAGE);
            return 0;
        }
        Ok(Command::Version) => {
            println!(
                "mpiexec (oxmpi) {}\nprocess manager protocol: PMI-1 (simple PMI)",
                env!("CARGO_PKG_VERSION")
            );
            return 0;
        }
        Err(e) => {
            eprintln!("mpiexec: {e}\nTry 'mpiexec --help' for more information.");
            return EXIT_USAGE;
        }
    };
    let program = match spawn::resolve_program(&options.program) {
        Ok(p) => p,
        Err(spawn::NotRunnable(why)) => {
            eprintln!("mpiexec: {why}");
            return EXIT_NOT_RUNNABLE;
        }
    };
    let layout = match layout(&options) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mpiexec: {e}");
            return EXIT_USAGE;
        }
    };
    let secret = match sys::random_hex(32) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mpiexec: cannot read /dev/urandom for the job secret: {e}");
            return 1;
        }
    };
    let kvsname = format!("kvs_{}_0", sys::getpid());
    // Removes the job's shared-memory leftovers on every way out of here,
    // including a panic unwinding through the job loop.
    let _cleanup = ShmCleanup {
        prefix: oxmpi_pmi::shm_segment_prefix(&kvsname),
    };
    let config = job::JobConfig {
        spec: spawn::LaunchSpec {
            program,
            argv0: options.program,
            args: options.args,
            env: {
                let mut env = options.env;
                if options.check {
                    // First, so an explicit -genv OXMPI_CHECK wins.
                    env.insert(0, ("OXMPI_CHECK".into(), "1".into()));
                }
                with_library_path(env)
            },
            size: layout.size,
            wdir: None,
        },
        label: options.label,
        kvsname,
        placement: layout.placement,
        mapping: layout.mapping,
        launcher: options
            .launcher
            .unwrap_or_else(|| vec![std::ffi::OsString::from("ssh")]),
        pmi_bind: options.pmi_bind,
        secret,
        hang_check: options.hang_check,
        trace: options.trace.map(std::path::PathBuf::from),
        trace_filter: options.trace_filter,
        hang_after: options.hang_after_ms as f64 / 1000.0,
        universe_size: options.universe_size.unwrap_or(layout.universe),
    };
    job::run(&config)
}

/// The ranks' environment with our own library directory (`<prefix>/lib`, next to this
/// launcher's `bin/`, when it holds oxmpi's libmpi) first on `LD_LIBRARY_PATH`, as
/// Open MPI's launcher does with its prefix: a program linked against the library
/// without an rpath (rsmpi's build probe keeps `-L`, not mpicc's `-rpath`) starts.
/// A `LD_LIBRARY_PATH` given with `-x`/`-env` keeps its entries after ours.
fn with_library_path(mut env: Vec<(OsString, OsString)>) -> Vec<(OsString, OsString)> {
    let Some(lib) = std::env::current_exe()
        .ok()
        .and_then(|exe| std::fs::canonicalize(exe).ok())
        .and_then(|exe| Some(exe.parent()?.parent()?.join("lib")))
        .filter(|lib| lib.join(LIBMPI_SONAME).exists())
    else {
        return env;
    };
    const VAR: &str = "LD_LIBRARY_PATH";
    let given = env.iter().position(|(k, _)| k == VAR);
    let old = match given {
        Some(i) => Some(env.remove(i).1),
        None => std::env::var_os(VAR),
    };
    let mut paths = vec![lib.clone()];
    if let Some(old) = old {
        paths.extend(std::env::split_paths(&old).filter(|p| *p != lib && !p.as_os_str().is_empty()));
    }
    if let Ok(v) = std::env::join_paths(paths) {
        env.push((VAR.into(), v));
    }
    env
}

/// The file name (and SONAME) of oxmpi's C library in `<prefix>/lib`.
const LIBMPI_SONAME: &str = "libmpi_abi.so.1";

/// Where the ranks go.
struct Layout {
    size: u32,
    /// MPI_UNIVERSE_SIZE unless `-usize` says.
    universe: u32,
    /// Per rank: `None` (this machine) or the remote host.
    placement: Vec<Option<String>>,
    /// `PMI_process_mapping`.
    mapping: String,
}

fn layout(options: &args::Options) -> Result<Layout, String> {
    let Some(source) = &options.hosts else {
        // Everything local, as without multi-host support; -ppn and -rr
        // have nothing to spread over.
        let size = options.nprocs.unwrap_or(1);
        return Ok(Layout {
            size,
            universe: size,
            placement: vec![None; size as usize],
            mapping: oxmpi_pmi::single_node_mapping(size),
        });
    };
    let hosts = match source {
        HostSource::List(list) => hosts::parse_list(list)?,
        HostSource::File(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                format!("cannot read host file '{}': {e}", Path::new(path).display())
            })?;
            hosts::parse_file(&text)
                .map_err(|e| format!("host file '{}': {e}", Path::new(path).display()))?
        }
    };
    let (size, nodes) = hosts::place(&hosts, options.ppn, options.nprocs, options.round_robin)?;
    let local: Vec<bool> = hosts.iter().map(|h| hosts::is_local(&h.name)).collect();
    let placement = nodes
        .iter()
        .map(|&n| (!local[n as usize]).then(|| hosts[n as usize].name.clone()))
        .collect();
    Ok(Layout {
        size,
        // The host slots (at least the job itself).
        universe: hosts.iter().map(|h| h.slots.unwrap_or(1)).sum::<u32>().max(size),
        placement,
        mapping: oxmpi_pmi::nodes_mapping(&nodes),
    })
}

struct ShmCleanup {
    prefix: String,
}

impl Drop for ShmCleanup {
    fn drop(&mut self) {
        remove_with_prefix(Path::new(SHM_DIR), &self.prefix);
    }
}

/// Deletes every entry of `dir` whose name starts with `prefix`. Best
/// effort: a missing directory or an entry someone else removed first is
/// not an error.
fn remove_with_prefix(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry
            .file_name()
            .as_encoded_bytes()
            .starts_with(prefix.as_bytes())
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
