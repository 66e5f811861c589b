//! `mpiexec`: starts the ranks of an oxmpi (or any PMI-1) job on this
//! machine or on several hosts and serves PMI-1 to them.

mod args;
mod dump;
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
        Ok(Command::Dump(id)) => return dump::client(id.as_deref()),
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
    let layout = match layout(&options) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mpiexec: {e}");
            return EXIT_USAGE;
        }
    };
    let timeout = match options.timeout_ms {
        Some(ms) => Some(std::time::Duration::from_millis(ms)),
        None => match std::env::var("MPIEXEC_TIMEOUT") {
            Ok(v) if !v.trim().is_empty() => match v.trim().parse::<f64>() {
                Ok(s) if s.is_finite() && s > 0.0 && s <= 86400.0 => {
                    Some(std::time::Duration::from_secs_f64(s))
                }
                _ => {
                    eprintln!("mpiexec: MPIEXEC_TIMEOUT must be a number of seconds (more than 0, at most 86400), not '{v}'");
                    return EXIT_USAGE;
                }
            },
            _ => None,
        },
    };
    let bind_cpus = match options.bind {
        args::Bind::None => None,
        args::Bind::Core => match sys::allowed_cpus() {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("mpiexec: --bind-to core: cannot read this process's CPU set: {e}");
                return 1;
            }
        },
    };
    // The environment every block starts from: -genvnone/-genvlist clear
    // the inherited one and pass the listed variables explicitly (so
    // remote ranks get them too), then -genv, then the block's -env.
    let mut genv: Vec<(OsString, OsString)> = Vec::new();
    if let args::EnvProp::List(names) = &options.env_prop {
        for n in names {
            if let Some(v) = std::env::var_os(n) {
                genv.push((n.into(), v));
            }
        }
    }
    if options.check {
        // Before -genv, so an explicit -genv OXMPI_CHECK wins.
        genv.push(("OXMPI_CHECK".into(), "1".into()));
    }
    genv.extend(options.env.iter().cloned());
    let env_clear = options.env_prop != args::EnvProp::All;
    let mut apps = Vec::with_capacity(options.apps.len());
    for (app, &count) in options.apps.iter().zip(&layout.counts) {
        let program = match spawn::resolve_program(&app.program) {
            Ok(p) => p,
            Err(spawn::NotRunnable(why)) => {
                eprintln!("mpiexec: {why}");
                return EXIT_NOT_RUNNABLE;
            }
        };
        // Absolute, so that a block's -wdir does not change which file runs.
        let program = if program.is_relative() {
            std::env::current_dir()
                .map(|d| d.join(&program))
                .unwrap_or(program)
        } else {
            program
        };
        let wdir = app
            .wdir
            .as_ref()
            .or(options.wdir.as_ref())
            .map(std::path::PathBuf::from);
        if let Some(dir) = &wdir {
            // Checked here only for a job on this machine: a remote host's
            // directories are its own.
            if layout.placement.iter().all(Option::is_none) && !dir.is_dir() {
                eprintln!("mpiexec: -wdir '{}': no such directory", dir.display());
                return EXIT_USAGE;
            }
        }
        let mut env = genv.clone();
        env.extend(app.env.iter().cloned());
        apps.push((
            spawn::LaunchSpec {
                program,
                argv0: app.program.clone(),
                args: app.args.clone(),
                env: with_library_path(env, env_clear),
                size: layout.size,
                wdir,
                env_clear,
                cpu: None,
            },
            count,
        ));
    }
    let secret = match sys::random_hex(32) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mpiexec: cannot read /dev/urandom for the job secret: {e}");
            return 1;
        }
    };
    let kvsname = format!("kvs_{}_0", sys::getpid());
    // Removes the shared-memory leftovers of the job and of every job it
    // spawned (`kvs_PID_1`, `kvs_PID_2`, ...: see `job::Job::spawn_job`) on
    // every way out of here, including a panic unwinding through the job loop.
    let _cleanup = ShmCleanup {
        prefix: job_family_shm_prefix(&kvsname),
    };
    let config = job::JobConfig {
        apps,
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
        timeout,
        bind_cpus,
        output: options.output,
        universe_size: options.universe_size.unwrap_or(layout.universe),
    };
    job::run(&config)
}

/// The ranks' environment with our own library directory (`<prefix>/lib`, next to this
/// launcher's `bin/`, when it holds oxmpi's libmpi) first on `LD_LIBRARY_PATH`, as
/// Open MPI's launcher does with its prefix: a program linked against the library
/// without an rpath (rsmpi's build probe keeps `-L`, not mpicc's `-rpath`) starts.
/// A `LD_LIBRARY_PATH` given with `-x`/`-env` keeps its entries after ours.
/// With `clear` (`-genvnone`, `-genvlist`) mpiexec's own value is not kept.
fn with_library_path(mut env: Vec<(OsString, OsString)>, clear: bool) -> Vec<(OsString, OsString)> {
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
        None if clear => None,
        None => std::env::var_os(VAR),
    };
    let mut paths = vec![lib.clone()];
    if let Some(old) = old {
        paths
            .extend(std::env::split_paths(&old).filter(|p| *p != lib && !p.as_os_str().is_empty()));
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
    /// Ranks per executable block.
    counts: Vec<u32>,
    /// MPI_UNIVERSE_SIZE unless `-usize` says.
    universe: u32,
    /// Per rank: `None` (this machine) or the remote host.
    placement: Vec<Option<String>>,
    /// `PMI_process_mapping`.
    mapping: String,
}

fn layout(options: &args::Options) -> Result<Layout, String> {
    // One block without -n takes the hosts' slots; in an MPMD launch a
    // block without -n has one rank.
    let single = options.apps.len() == 1;
    let mut counts: Vec<u32> = options.apps.iter().map(|a| a.nprocs.unwrap_or(1)).collect();
    let total: u64 = counts.iter().map(|&c| c as u64).sum();
    if total > args::MAX_PROCS as u64 {
        return Err(format!(
            "the blocks ask for {total} processes, more than {}",
            args::MAX_PROCS
        ));
    }
    let nprocs = if single {
        options.apps[0].nprocs
    } else {
        Some(total as u32)
    };
    let Some(source) = &options.hosts else {
        // Everything local, as without multi-host support; -ppn and -rr
        // have nothing to spread over.
        let size = nprocs.unwrap_or(1);
        return Ok(Layout {
            size,
            counts,
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
    let (size, nodes) = hosts::place(&hosts, options.ppn, nprocs, options.round_robin)?;
    if single {
        counts[0] = size;
    }
    let local: Vec<bool> = hosts.iter().map(|h| hosts::is_local(&h.name)).collect();
    let placement = nodes
        .iter()
        .map(|&n| (!local[n as usize]).then(|| hosts[n as usize].name.clone()))
        .collect();
    Ok(Layout {
        size,
        counts,
        // The host slots (at least the job itself).
        universe: hosts
            .iter()
            .map(|h| h.slots.unwrap_or(1))
            .sum::<u32>()
            .max(size),
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

/// The prefix of the `/dev/shm` entries of the job whose KVS is `kvsname`
/// (`kvs_PID_0`) and of every job it spawns (`kvs_PID_1`, ...), and of no
/// other mpiexec's jobs.
fn job_family_shm_prefix(kvsname: &str) -> String {
    let stem = oxmpi_pmi::shm_segment_prefix(kvsname.strip_suffix("_0").unwrap_or(kvsname));
    format!("{}_", stem.trim_end_matches('-'))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shm_sweep_covers_spawned_jobs_and_no_other_mpiexec() {
        let p = job_family_shm_prefix("kvs_123_0");
        for ours in ["kvs_123_0", "kvs_123_1", "kvs_123_17"] {
            assert!(
                format!("{}0", oxmpi_pmi::shm_segment_prefix(ours)).starts_with(&p),
                "{ours} {p}"
            );
        }
        for theirs in ["kvs_1234_0", "kvs_12_0", "kvs_1230_1"] {
            assert!(
                !format!("{}0", oxmpi_pmi::shm_segment_prefix(theirs)).starts_with(&p),
                "{theirs} {p}"
            );
        }
        let dir = std::env::temp_dir().join(format!("oxmpi-sweep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for n in ["oxmpi-kvs_9_0-0", "oxmpi-kvs_9_2-0", "oxmpi-kvs_99_0-0"] {
            std::fs::write(dir.join(n), b"").unwrap();
        }
        remove_with_prefix(&dir, &job_family_shm_prefix("kvs_9_0"));
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("oxmpi-kvs_99_0-0")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
