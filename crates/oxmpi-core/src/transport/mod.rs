//! Transports below the engine: self loopback (in the engine), shared memory.
pub mod cma;
pub mod doorbell;
pub mod fileio;
pub(crate) mod memfd;
pub mod os;
pub mod shm;
pub mod status;
pub mod tcp;
pub mod winatomic;
pub mod winmem;

/// `var` as a byte count of at least `floor`, else `default`: the one parse of the
/// size thresholds set from the environment (the engine's `OXMPI_SHM_STREAM_MAX`,
/// `OXMPI_PULL_MIN` and shared-copy bounds, the rings' copy and prefetch limits).
pub(crate) fn env_bytes(var: &str, floor: usize, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&v| v >= floor)
        .unwrap_or(default)
}
