//! # oxmpi — a safe, idiomatic MPI for Rust with its own runtime
//!
//! `oxmpi` speaks the vocabulary of [rsmpi](https://github.com/rsmpi/rsmpi) 0.8, so an
//! rsmpi program ports by renaming the crate in `Cargo.toml`:
//!
//! ```toml
//! [dependencies]
//! mpi = { package = "oxmpi", path = "..." }
//! ```
//!
//! Unlike rsmpi it is not a binding: the engine (`oxmpi-core`) is written in Rust and
//! jobs are launched by oxmpi's own `mpiexec` (or any PMI-1 process manager). A program
//! started without a launcher runs as a singleton job of size 1.
//!
//! ```
//! use oxmpi::traits::*;
//!
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! let (rank, size) = (world.rank(), world.size());
//! if rank == 0 {
//!     for r in 1..size {
//!         world.process_at_rank(r).send(&[1.5f64, 2.5]);
//!     }
//! } else {
//!     let (v, status) = world.process_at_rank(0).receive_vec::<f64>();
//!     assert_eq!(v, [1.5, 2.5]);
//!     assert_eq!(status.source_rank(), 0);
//! }
//! ```
//!
//! ## Module tree
//!
//! - [`environment`]: [`initialize`], [`Universe`], [`Threading`], clocks and names.
//! - [`topology`]: [`SimpleCommunicator`](topology::SimpleCommunicator), the
//!   [`Communicator`](topology::Communicator) trait (duplicate, split, names, topology
//!   constructors), [`Group`](topology::Group)s, [`InterCommunicator`](topology::InterCommunicator),
//!   [`CartesianCommunicator`](topology::CartesianCommunicator), [`Process`](topology::Process),
//!   [`AnyProcess`](topology::AnyProcess).
//! - [`attribute`]: caching values on communicators ([`CommAttribute`](attribute::CommAttribute)).
//! - [`point_to_point`]: the [`Source`](point_to_point::Source) and
//!   [`Destination`](point_to_point::Destination) traits, [`Status`](point_to_point::Status),
//!   [`Message`](point_to_point::Message), `send_receive*`.
//! - [`request`]: non-blocking [`Request`](request::Request)s tied to a
//!   [`scope`](request::scope), [`WaitGuard`](request::WaitGuard),
//!   [`CancelGuard`](request::CancelGuard), [`RequestCollection`](request::RequestCollection).
//! - [`io`]: parallel file I/O (MPI-IO), [`File`](io::File).
//! - [`datatype`]: [`Equivalence`](datatype::Equivalence), [`Buffer`](datatype::Buffer),
//!   [`BufferMut`](datatype::BufferMut) and datatype descriptors.
//! - [`ffi`]: the standard ABI's C types (and with feature `ffi` its constants and
//!   functions), for code that drops to raw MPI calls.
//! - [`window`]: one-sided communication: [`Window`](window::Window)s with scoped
//!   fence and lock epochs, typed put/get/accumulate/fetch_and_op/compare_and_swap.
//! - [`session`]: MPI-4 [`Session`](session::Session)s, process sets and communicators
//!   from their groups, with or without [`initialize`].
//! - [`tools`]: the MPI tool information interface: oxmpi's settings (control
//!   variables) and counters (performance variables), [`Tools`](tools::Tools).
//! - [`traits`]: `use oxmpi::traits::*;` brings every trait in.
//! - [`error`]: [`Error`], [`ErrorClass`], and the error policy below.
//!
//! ## Errors
//!
//! As rsmpi (and MPI's default `MPI_ERRORS_ARE_FATAL`), every method with an rsmpi name
//! treats an MPI error as fatal: it prints the error — which names the MPI call and the
//! offending argument — with the rank, and aborts the whole job.
//!
//! Every such fallible method `foo` also has a **`try_foo`** twin (same arguments) that
//! returns [`Result<_, Error>`](Result) instead, carrying the MPI [`ErrorClass`] and the
//! message; e.g. [`Destination::try_send`](point_to_point::Destination::try_send),
//! [`Source::try_receive_into`](point_to_point::Source::try_receive_into),
//! [`Request::try_wait`](request::Request::try_wait).
//!
//! ```
//! use oxmpi::traits::*;
//! use oxmpi::ErrorClass;
//!
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! let err = world.process_at_rank(world.size()).try_send(&1i32).unwrap_err();
//! assert_eq!(err.class, ErrorClass::Rank);
//! ```
//!
//! ## Safety
//!
//! Nothing in the safe operations requires `unsafe` from the user. Non-blocking
//! operations borrow their buffers for the lifetime of a [`request::scope`]; a request
//! that is neither completed nor guarded panics when dropped, and a scope that ends with
//! a request still in flight aborts the process (as rsmpi does), so a buffer can never be
//! freed while the engine still uses it. Two functions stay `unsafe`, as in rsmpi:
//! [`Destination::ready_send`](point_to_point::Destination::ready_send) and its
//! immediate form (their `try_` forms are safe: oxmpi has no undefined behaviour there).

#![warn(missing_docs)]

pub mod attribute;
pub mod collective;
pub mod datatype;
pub mod dynamic;
pub mod environment;
pub mod error;
pub mod ffi;
pub mod io;
pub mod partitioned;
pub mod point_to_point;
#[cfg(feature = "ffi")]
pub mod raw;
pub mod request;
pub mod session;
pub mod tools;
pub mod topology;
pub mod traits;
pub mod window;

pub use dynamic::MpiError;
pub use environment::{
    initialize, initialize_with_threading, is_finalized, is_initialized, time, time_resolution,
    Threading, Universe,
};
pub use error::{Error, ErrorClass, Result};
pub use topology::Rank;

/// `#[derive(Equivalence)]` for structs whose fields are all `Equivalence`.
#[cfg(feature = "derive")]
pub use oxmpi_derive::Equivalence;

/// Tags label messages (`0..=`[`TAG_UB`]); receives may use [`ANY_TAG`].
pub type Tag = i32;
/// Element counts, as MPI's `int` counts.
pub type Count = i32;
/// An address or displacement in memory (`MPI_Aint`).
pub type Address = isize;

/// The largest valid tag (`MPI_TAG_UB`).
pub const TAG_UB: Tag = oxmpi_core::TAG_UB;
/// The wildcard tag for receives and probes (`MPI_ANY_TAG`).
pub const ANY_TAG: Tag = oxmpi_core::ANY_TAG;
/// `MPI_UNDEFINED`: what [`Status::count`](point_to_point::Status::count) returns when the
/// message is not a whole number of elements.
pub const UNDEFINED: Count = abi::MPI_UNDEFINED;

/// The standard ABI's numbers this crate hands out, generated from
/// `oxmpi-capi/abi.txt` (see `build.rs`).
#[allow(dead_code, non_upper_case_globals)]
pub(crate) mod abi {
    use std::ffi::c_int;
    include!(concat!(env!("OUT_DIR"), "/abi_consts.rs"));
    include!(concat!(env!("OUT_DIR"), "/abi_map.rs"));
}

/// The raw engine, for code that needs what this crate does not wrap yet.
pub use oxmpi_core as core_engine;

/// The README's code blocks run as doctests, so the quick examples stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
