//! Errors: the [`Error`] type of the `try_*` methods, and the fatal policy of the
//! rsmpi-named methods.
//!
//! Every fallible rsmpi-named method `foo` aborts the job on an MPI error (MPI's default
//! `MPI_ERRORS_ARE_FATAL`, which rsmpi keeps). Its twin `try_foo` takes the same
//! arguments and returns `Result<_, Error>` instead. An [`Error`] carries the MPI
//! [`ErrorClass`] ([`class_value`] gives its standard `MPI_ERR_*` value) and a message that
//! names the MPI call and the offending argument.
#![deny(unsafe_code)]

/// MPI error classes (their standard `MPI_ERR_*` values: [`class_value`]).
pub use oxmpi_core::error::ErrorClass;

/// The standard ABI's `MPI_ERR_*` value of an error class (generated from
/// `oxmpi-capi/abi.txt`).
///
/// ```
/// use oxmpi::ErrorClass;
/// assert_eq!(oxmpi::error::class_value(ErrorClass::Success), 0);
/// assert_ne!(oxmpi::error::class_value(ErrorClass::Truncate), oxmpi::error::class_value(ErrorClass::Other));
/// ```
pub fn class_value(class: ErrorClass) -> i32 {
    crate::abi::error_class_value(class)
}
/// An MPI error: its [`ErrorClass`] and a message naming the call and the argument.
///
/// ```
/// use oxmpi::{Error, ErrorClass};
/// let e = Error::new(ErrorClass::Tag, "MPI_Send: invalid argument `tag`: -5");
/// assert_eq!(e.class, ErrorClass::Tag);
/// assert!(e.to_string().contains("MPI_ERR_TAG"));
/// ```
pub use oxmpi_core::error::MpiError as Error;

/// `Result<T, Error>`, what every `try_*` method returns.
pub type Result<T> = std::result::Result<T, Error>;

/// Prints `err` with the rank and ends the whole job (MPI_ERRORS_ARE_FATAL).
#[cold]
#[track_caller]
pub(crate) fn fatal(err: Error) -> ! {
    let rank = oxmpi_core::runtime::engine()
        .map(|e| e.rank().to_string())
        .unwrap_or_else(|_| "?".into());
    let loc = std::panic::Location::caller();
    eprintln!(
        "oxmpi: rank {rank}: fatal MPI error at {}:{}: {err}",
        loc.file(),
        loc.line()
    );
    let code = class_value(err.class);
    oxmpi_core::runtime::abort(if code == 0 { 1 } else { code }, &err.message)
}

/// `.or_fatal()` on engine results: the value, or a fatal error.
pub(crate) trait OrFatal<T> {
    fn or_fatal(self) -> T;
}

impl<T> OrFatal<T> for Result<T> {
    #[inline]
    #[track_caller]
    fn or_fatal(self) -> T {
        match self {
            Ok(v) => v,
            Err(e) => fatal(e),
        }
    }
}
