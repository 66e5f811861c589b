//! The error type shared by the PMI client.

use std::fmt;
use std::io;

use crate::codec::CodecError;
use crate::codec2::Pmi2CodecError;

/// Everything that can go wrong talking PMI to a process manager.
#[derive(Debug)]
pub enum PmiError {
    /// A `PMI_*` environment variable set by the starter is missing or
    /// malformed.
    Env { var: &'static str, problem: String },
    /// Reading from or writing to the process manager failed.
    Io { context: String, source: io::Error },
    /// The process manager closed the connection.
    Closed { during: String },
    /// The process manager sent a line that is not valid PMI-1.
    Codec { during: String, source: CodecError },
    /// The process manager sent a frame that is not valid PMI-2.
    Pmi2Codec {
        during: String,
        source: Pmi2CodecError,
    },
    /// The process manager answered with an unexpected command.
    Protocol { expected: String, got: String },
    /// The process manager answered with a nonzero `rc`.
    Server {
        cmd: String,
        rc: i64,
        msg: Option<String>,
    },
    /// A key passed to `put`/`get` cannot be sent over PMI-1.
    InvalidKey { key: String, reason: String },
    /// A value passed to `put` cannot be sent over PMI-1.
    InvalidValue { key: String, reason: String },
}

impl fmt::Display for PmiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PmiError::Env { var, problem } => {
                write!(f, "PMI environment variable {var}: {problem}")
            }
            PmiError::Io { context, source } => {
                write!(f, "PMI I/O error while {context}: {source}")
            }
            PmiError::Closed { during } => {
                write!(
                    f,
                    "the process manager closed the PMI connection during {during}"
                )
            }
            PmiError::Codec { during, source } => {
                write!(
                    f,
                    "malformed reply from the process manager to {during}: {source}"
                )
            }
            PmiError::Pmi2Codec { during, source } => {
                write!(
                    f,
                    "malformed PMI-2 reply from the process manager to {during}: {source}"
                )
            }
            PmiError::Protocol { expected, got } => write!(
                f,
                "PMI protocol error: expected cmd={expected} from the process manager, got {got:?}"
            ),
            PmiError::Server { cmd, rc, msg } => {
                write!(f, "the process manager failed cmd={cmd} with rc={rc}")?;
                if let Some(msg) = msg {
                    write!(f, " ({msg})")?;
                }
                Ok(())
            }
            PmiError::InvalidKey { key, reason } => write!(f, "invalid PMI key {key:?}: {reason}"),
            PmiError::InvalidValue { key, reason } => {
                write!(f, "invalid PMI value for key {key:?}: {reason}")
            }
        }
    }
}

impl std::error::Error for PmiError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PmiError::Io { source, .. } => Some(source),
            PmiError::Codec { source, .. } => Some(source),
            PmiError::Pmi2Codec { source, .. } => Some(source),
            _ => None,
        }
    }
}
