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
