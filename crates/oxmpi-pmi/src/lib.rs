//! PMI for oxmpi: PMI-1 ("simple PMI"), the line protocol MPICH's Hydra and
//! our `mpiexec` speak over `PMI_FD`/`PMI_PORT`, and PMI-2, the framed
//! protocol of Slurm's `srun --mpi=pmi2`.
//!
//! * [`codec`]: sans-IO parsing/formatting of PMI-1 messages and a bounded
//!   line decoder.
//! * [`codec2`]: sans-IO parsing/formatting of PMI-2 messages and a bounded
//!   frame decoder.
//! * [`pairs`]: the message type both protocols share (`cmd` plus pairs),
//!   [`Message`] for PMI-1 and [`Pmi2Message`] for PMI-2.
//! * [`client`]: the blocking client an MPI process uses to bootstrap, over
//!   either protocol.
//! * [`server`]: the sans-IO PMI-1 server state machine our `mpiexec` drives.
//! * `pmix`: PMIx start-up through the system's PMIx client library, loaded
//!   at run time (so nothing here links against it).

pub mod client;
mod client2;
pub mod codec;
pub mod codec2;
mod error;
pub mod pairs;
mod pmix;
pub mod server;
pub mod status;

pub use client::{
    parse_process_mapping, PmiClient, PmiProtocol, APPNUMS_KEY, JOB_SECRET_ENV, JOB_SECRET_KEY,
    PMI_PROTOCOL_ENV, PMI_TOKEN_ENV, PROCESS_MAPPING_KEY,
};
pub use codec::{CodecError, LineDecoder, Message, MAX_LINE_LEN};
pub use codec2::{FrameDecoder, Pmi2CodecError, Pmi2Message, PMI2_MAX_FRAME_LEN};
pub use error::PmiError;
pub use pairs::Pairs;
pub use server::{
    decode_appnums, encode_appnums, nodes_mapping, single_node_mapping, NameOp, Output, PmiServer,
    RankPhase, ServerEvent, SpawnCommand,
};

/// Prefix of every `/dev/shm` entry belonging to the job whose KVS is
/// `kvsname`.
///
/// The engine names its shared-memory segments with it and the launcher
/// deletes whatever is left with this prefix when the job ends, so both
/// sides must compute it here. Characters outside `[A-Za-z0-9_]` become `_`
/// so the result is always a safe single path component.
pub fn shm_segment_prefix(kvsname: &str) -> String {
    let sanitized: String = kvsname
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("oxmpi-{sanitized}-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shm_prefix_sanitizes() {
        assert_eq!(shm_segment_prefix("kvs_123_0"), "oxmpi-kvs_123_0-");
        assert_eq!(shm_segment_prefix("a/b.c-d é"), "oxmpi-a_b_c_d__-");
        assert_eq!(shm_segment_prefix(""), "oxmpi--");
    }
}
