//! MPI error classes and the engine's error type.
//!
//! Every fallible engine call returns [`Result<T>`]; the error carries the MPI error
//! class and a message naming the call and the offending argument. The engine numbers
//! the classes itself ([`ErrorClass::code`], 0 for success, for its own wire formats
//! and statuses); the standard ABI's `MPI_ERR_*` values live only in the C library's
//! `abi.txt`, from which `oxmpi-capi` generates the mapping (matched by C name).

use std::fmt;

/// MPI error classes (`Success` first: engine code 0).
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorClass {
    Success,
    Buffer,
    Count,
    Type,
    Tag,
    Comm,
    Rank,
    Request,
    Root,
    Group,
    Op,
    Topology,
    Dims,
    Arg,
    Unknown,
    Truncate,
    Other,
    Intern,
    Pending,
    InStatus,
    Keyval,
    NoMem,
    NotSame,
    Size,
    Spawn,
    UnsupportedOperation,
    ProcAborted,
    ValueTooLarge,
    Errhandler,
    /// Objects of different sessions mixed, or a session handle not valid.
    Session,
    // dynamic processes: ports and the name service
    Name,
    Port,
    Service,
    // MPI-IO classes
    Access,
    Amode,
    BadFile,
    Conversion,
    DupDatarep,
    FileExists,
    FileInUse,
    File,
    Io,
    NoSpace,
    NoSuchFile,
    Quota,
    ReadOnly,
    UnsupportedDatarep,
    // one-sided communication
    Assert,
    Base,
    Disp,
    Locktype,
    RmaAttach,
    RmaConflict,
    RmaRange,
    RmaShared,
    RmaSync,
    Win,
    RmaFlavor,
}

impl ErrorClass {
    /// All classes this enum knows, for lookups from a raw code.
    pub const ALL: &'static [ErrorClass] = &[
        ErrorClass::Success,
        ErrorClass::Buffer,
        ErrorClass::Count,
        ErrorClass::Type,
        ErrorClass::Tag,
        ErrorClass::Comm,
        ErrorClass::Rank,
        ErrorClass::Request,
        ErrorClass::Root,
        ErrorClass::Group,
        ErrorClass::Op,
        ErrorClass::Topology,
        ErrorClass::Dims,
        ErrorClass::Arg,
        ErrorClass::Unknown,
        ErrorClass::Truncate,
        ErrorClass::Other,
        ErrorClass::Intern,
        ErrorClass::Pending,
        ErrorClass::InStatus,
        ErrorClass::Keyval,
        ErrorClass::NoMem,
        ErrorClass::NotSame,
        ErrorClass::Size,
        ErrorClass::Spawn,
        ErrorClass::Name,
        ErrorClass::Port,
        ErrorClass::Service,
        ErrorClass::UnsupportedOperation,
        ErrorClass::ProcAborted,
        ErrorClass::ValueTooLarge,
        ErrorClass::Errhandler,
        ErrorClass::Session,
        ErrorClass::Access,
        ErrorClass::Amode,
        ErrorClass::BadFile,
        ErrorClass::Conversion,
        ErrorClass::DupDatarep,
        ErrorClass::FileExists,
        ErrorClass::FileInUse,
        ErrorClass::File,
        ErrorClass::Io,
        ErrorClass::NoSpace,
        ErrorClass::NoSuchFile,
        ErrorClass::Quota,
        ErrorClass::ReadOnly,
        ErrorClass::UnsupportedDatarep,
        ErrorClass::Assert,
        ErrorClass::Base,
        ErrorClass::Disp,
        ErrorClass::Locktype,
        ErrorClass::RmaAttach,
        ErrorClass::RmaConflict,
        ErrorClass::RmaRange,
        ErrorClass::RmaShared,
        ErrorClass::RmaSync,
        ErrorClass::Win,
        ErrorClass::RmaFlavor,
    ];

    /// The engine's own number of the class (0 for `Success`), for its wire formats
    /// and statuses: not the standard ABI's `MPI_ERR_*` value, which only the C
    /// library knows (`oxmpi_capi::abi::error_class_value`).
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The class of an engine number ([`code`](Self::code)).
    pub fn from_code(code: i32) -> Option<ErrorClass> {
        Self::ALL.iter().copied().find(|c| c.code() == code)
    }

    /// The C name of the class, e.g. `MPI_ERR_TRUNCATE`.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorClass::Success => "MPI_SUCCESS",
            ErrorClass::Buffer => "MPI_ERR_BUFFER",
            ErrorClass::Count => "MPI_ERR_COUNT",
            ErrorClass::Type => "MPI_ERR_TYPE",
            ErrorClass::Tag => "MPI_ERR_TAG",
            ErrorClass::Comm => "MPI_ERR_COMM",
            ErrorClass::Rank => "MPI_ERR_RANK",
            ErrorClass::Request => "MPI_ERR_REQUEST",
            ErrorClass::Root => "MPI_ERR_ROOT",
            ErrorClass::Group => "MPI_ERR_GROUP",
            ErrorClass::Op => "MPI_ERR_OP",
            ErrorClass::Topology => "MPI_ERR_TOPOLOGY",
            ErrorClass::Dims => "MPI_ERR_DIMS",
            ErrorClass::Arg => "MPI_ERR_ARG",
            ErrorClass::Unknown => "MPI_ERR_UNKNOWN",
            ErrorClass::Truncate => "MPI_ERR_TRUNCATE",
            ErrorClass::Other => "MPI_ERR_OTHER",
            ErrorClass::Intern => "MPI_ERR_INTERN",
            ErrorClass::Pending => "MPI_ERR_PENDING",
            ErrorClass::InStatus => "MPI_ERR_IN_STATUS",
            ErrorClass::Keyval => "MPI_ERR_KEYVAL",
            ErrorClass::NoMem => "MPI_ERR_NO_MEM",
            ErrorClass::NotSame => "MPI_ERR_NOT_SAME",
            ErrorClass::Size => "MPI_ERR_SIZE",
            ErrorClass::Spawn => "MPI_ERR_SPAWN",
            ErrorClass::Name => "MPI_ERR_NAME",
            ErrorClass::Port => "MPI_ERR_PORT",
            ErrorClass::Service => "MPI_ERR_SERVICE",
            ErrorClass::UnsupportedOperation => "MPI_ERR_UNSUPPORTED_OPERATION",
            ErrorClass::ProcAborted => "MPI_ERR_PROC_ABORTED",
            ErrorClass::ValueTooLarge => "MPI_ERR_VALUE_TOO_LARGE",
            ErrorClass::Errhandler => "MPI_ERR_ERRHANDLER",
            ErrorClass::Session => "MPI_ERR_SESSION",
            ErrorClass::Access => "MPI_ERR_ACCESS",
            ErrorClass::Amode => "MPI_ERR_AMODE",
            ErrorClass::BadFile => "MPI_ERR_BAD_FILE",
            ErrorClass::Conversion => "MPI_ERR_CONVERSION",
            ErrorClass::DupDatarep => "MPI_ERR_DUP_DATAREP",
            ErrorClass::FileExists => "MPI_ERR_FILE_EXISTS",
            ErrorClass::FileInUse => "MPI_ERR_FILE_IN_USE",
            ErrorClass::File => "MPI_ERR_FILE",
            ErrorClass::Io => "MPI_ERR_IO",
            ErrorClass::NoSpace => "MPI_ERR_NO_SPACE",
            ErrorClass::NoSuchFile => "MPI_ERR_NO_SUCH_FILE",
            ErrorClass::Quota => "MPI_ERR_QUOTA",
            ErrorClass::ReadOnly => "MPI_ERR_READ_ONLY",
            ErrorClass::UnsupportedDatarep => "MPI_ERR_UNSUPPORTED_DATAREP",
            ErrorClass::Assert => "MPI_ERR_ASSERT",
            ErrorClass::Base => "MPI_ERR_BASE",
            ErrorClass::Disp => "MPI_ERR_DISP",
            ErrorClass::Locktype => "MPI_ERR_LOCKTYPE",
            ErrorClass::RmaAttach => "MPI_ERR_RMA_ATTACH",
            ErrorClass::RmaConflict => "MPI_ERR_RMA_CONFLICT",
            ErrorClass::RmaRange => "MPI_ERR_RMA_RANGE",
            ErrorClass::RmaShared => "MPI_ERR_RMA_SHARED",
            ErrorClass::RmaSync => "MPI_ERR_RMA_SYNC",
            ErrorClass::Win => "MPI_ERR_WIN",
            ErrorClass::RmaFlavor => "MPI_ERR_RMA_FLAVOR",
        }
    }

    /// A one-line description of the class, as `MPI_Error_string` gives it.
    pub fn description(self) -> &'static str {
        match self {
            ErrorClass::Success => "no error",
            ErrorClass::Buffer => "invalid buffer pointer",
            ErrorClass::Count => "invalid count argument",
            ErrorClass::Type => "invalid datatype",
            ErrorClass::Tag => "invalid tag",
            ErrorClass::Comm => "invalid communicator",
            ErrorClass::Rank => "invalid rank",
            ErrorClass::Request => "invalid request",
            ErrorClass::Root => "invalid root",
            ErrorClass::Group => "invalid group",
            ErrorClass::Op => "invalid operation",
            ErrorClass::Topology => "invalid topology",
            ErrorClass::Dims => "invalid dimension argument",
            ErrorClass::Arg => "invalid argument",
            ErrorClass::Unknown => "unknown error",
            ErrorClass::Truncate => "message truncated",
            ErrorClass::Other => "other error",
            ErrorClass::Intern => "internal error",
            ErrorClass::Pending => "pending request",
            ErrorClass::InStatus => "error code is in status",
            ErrorClass::Keyval => "invalid key value",
            ErrorClass::NoMem => "out of memory",
            ErrorClass::NotSame => "collective arguments not identical on all processes",
            ErrorClass::Size => "invalid size",
            ErrorClass::Spawn => "error spawning processes",
            ErrorClass::Name => "no such service name",
            ErrorClass::Port => "invalid port name",
            ErrorClass::Service => "invalid service name",
            ErrorClass::UnsupportedOperation => "unsupported operation",
            ErrorClass::ProcAborted => "operation failed because a peer process aborted",
            ErrorClass::ValueTooLarge => "value too large to store",
            ErrorClass::Errhandler => "invalid error handler",
            ErrorClass::Session => "invalid session, or objects of different sessions mixed",
            ErrorClass::Access => "permission denied",
            ErrorClass::Amode => "invalid file access mode",
            ErrorClass::BadFile => "invalid file name",
            ErrorClass::Conversion => "data conversion failed",
            ErrorClass::DupDatarep => "data representation already registered",
            ErrorClass::FileExists => "file exists",
            ErrorClass::FileInUse => "file in use",
            ErrorClass::File => "invalid file handle",
            ErrorClass::Io => "I/O error",
            ErrorClass::NoSpace => "no space left on device",
            ErrorClass::NoSuchFile => "no such file",
            ErrorClass::Quota => "quota exceeded",
            ErrorClass::ReadOnly => "read-only file or file system",
            ErrorClass::UnsupportedDatarep => "unsupported data representation",
            ErrorClass::Assert => "invalid assert argument",
            ErrorClass::Base => "invalid base address",
            ErrorClass::Disp => "invalid displacement",
            ErrorClass::Locktype => "invalid lock type",
            ErrorClass::RmaAttach => "memory cannot be attached to the window",
            ErrorClass::RmaConflict => "conflicting accesses to a window",
            ErrorClass::RmaRange => "target memory is not part of the window",
            ErrorClass::RmaShared => "memory cannot be shared",
            ErrorClass::RmaSync => "wrong synchronization of RMA calls",
            ErrorClass::Win => "invalid window",
            ErrorClass::RmaFlavor => "wrong flavor of window for this call",
        }
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An MPI error: its class and a message that names the call and the argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MpiError {
    pub class: ErrorClass,
    pub message: String,
    /// For a failed receive that matched a message (MPI_ERR_TRUNCATE, a type
    /// signature mismatch): the status of that message, which MPI still reports
    /// (source, tag, count) alongside the error.
    pub status: Option<crate::request::Status>,
    /// The exact error code the C caller gets, when it is not one made from
    /// `class`: a code a user callback returned (possibly a user-defined one from
    /// MPI_Add_error_code), passed through unchanged.
    pub code: Option<i32>,
}

impl MpiError {
    pub fn new(class: ErrorClass, message: impl Into<String>) -> MpiError {
        MpiError {
            class,
            message: message.into(),
            status: None,
            code: None,
        }
    }

    /// The same error, carrying the status of the operation that failed.
    pub fn with_status(mut self, status: crate::request::Status) -> MpiError {
        self.status = Some(status);
        self
    }

    /// Shorthand for an error about one argument of one call:
    /// `MpiError::arg(ErrorClass::Rank, "MPI_Send", "dest", "5 is not in 0..4")`.
    pub fn arg(class: ErrorClass, call: &str, arg: &str, why: impl fmt::Display) -> MpiError {
        MpiError::new(class, format!("{call}: invalid argument `{arg}`: {why}"))
    }

    /// An operation that oxmpi does not implement, named.
    pub fn unsupported(call: &str, what: impl fmt::Display) -> MpiError {
        MpiError::new(
            ErrorClass::UnsupportedOperation,
            format!("{call}: {what} is not supported by oxmpi"),
        )
    }

    pub fn intern(call: &str, what: impl fmt::Display) -> MpiError {
        MpiError::new(
            ErrorClass::Intern,
            format!("{call}: internal error: {what}"),
        )
    }
}

impl fmt::Display for MpiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.class.name())
    }
}

impl std::error::Error for MpiError {}

pub type Result<T> = std::result::Result<T, MpiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for c in ErrorClass::ALL {
            assert_eq!(ErrorClass::from_code(c.code()), Some(*c));
            assert!(seen.insert(c.code()));
        }
        assert_eq!(ErrorClass::Success.code(), 0);
        assert_eq!(ErrorClass::from_code(1234), None);
    }

    #[test]
    fn messages_name_call_and_argument() {
        let e = MpiError::arg(ErrorClass::Rank, "MPI_Send", "dest", "7 is not in 0..4");
        let s = e.to_string();
        assert!(
            s.contains("MPI_Send") && s.contains("dest") && s.contains("MPI_ERR_RANK"),
            "{s}"
        );
    }
}
