//! Transports below the engine: self loopback (in the engine), shared memory.
