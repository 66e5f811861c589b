//! Collective communication: the [`CommunicatorCollectives`] trait (operations of a
//! whole communicator), the [`Root`] trait (rooted operations, on the root's
//! [`Process`]), and reduction operations ([`SystemOperation`], [`UserOperation`],
//! [`UnsafeUserOperation`], the [`Operation`] trait).
//!
//! ```
//! use oxmpi::traits::*;
//! use oxmpi::collective::SystemOperation;
//!
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! let mut sum = 0i32;
//! world.all_reduce_into(&(world.rank() + 1), &mut sum, SystemOperation::sum());
//! assert_eq!(sum, world.size() * (world.size() + 1) / 2);
//! ```
//!
//! Every fallible method `foo` has a `try_foo` twin returning [`crate::Result`]: a bad
//! root is [`ErrorClass::Root`](crate::ErrorClass::Root), an operation that does not
//! apply to the datatype [`ErrorClass::Op`](crate::ErrorClass::Op), and so on.
//!
//! Receive counts are taken from the receive buffers as rsmpi does: e.g.
//! `all_gather_into` receives `recvbuf.count() / size` elements from each process.
//! The `*_varcount_*` operations take [`Partition`](crate::datatype::Partition)s whose
//! parts are checked to lie inside the buffer.

use std::ffi::{c_int, c_void};
use std::fmt;

use oxmpi_core::coll;
use oxmpi_core::datatype::{Datatype as CoreDatatype, Repr};
use oxmpi_core::op::{Op as CoreOp, PredefinedOp};
use oxmpi_core::Comm;
use oxmpi_core::Request as RawRequest;

use crate::datatype::{
    typed_in, typed_out, Buffer, BufferMut, DynBuffer, DynBufferMut, PartitionedBuffer,
    PartitionedBufferMut, RecvTarget, Typed, TypedMut,
};
use crate::environment::threading::{CommunicatorSafety, SafetyOf, ThreadSafety};
use crate::error::{Error, ErrorClass, OrFatal, Result};
use crate::request::{
    immediate_mut, immediate_ref, persistent_mut, persistent_unchecked, PersistentRequest, Request,
    Scope, Start, StaticScope,
};
use crate::topology::{AsCommunicator, Communicator, Process, Rank};
use oxmpi_core::coll::api;
use oxmpi_core::coll::api_move::{self as mv, Blocks};
use oxmpi_core::coll::persistent as cp;

pub use neighbor::{NeighborCollectives, TopologyCommunicator};

/// The collective traits, re-exported by [`crate::traits`].
pub mod traits {
    pub use super::{CommunicatorCollectives, NeighborCollectives, Operation, Root};
}

// ----- operations ----------------------------------------------------------------------

/// A reduction operation (`MPI_Op`).
pub trait Operation {
    /// The engine's operation.
    #[doc(hidden)]
    fn as_core_op(&self) -> CoreOp;
    /// Whether the operands may be combined in any order.
    fn is_commutative(&self) -> bool {
        self.as_core_op().is_commutative()
    }
}

impl<O: Operation + ?Sized> Operation for &O {
    fn as_core_op(&self) -> CoreOp {
        (**self).as_core_op()
    }
}

/// A predefined operation (`MPI_SUM`, `MPI_MAX`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SystemOperation(PredefinedOp);

macro_rules! sysops {
    ($($(#[$m:meta])* $name:ident => $p:ident),* $(,)?) => {
        impl SystemOperation {
            $($(#[$m])* pub fn $name() -> SystemOperation { SystemOperation(PredefinedOp::$p) })*
        }
    };
}

sysops! {
    /// `MPI_MAX`.
    max => Max,
    /// `MPI_MIN`.
    min => Min,
    /// `MPI_SUM`.
    sum => Sum,
    /// `MPI_PROD`.
    product => Prod,
    /// `MPI_LAND`.
    logical_and => Land,
    /// `MPI_BAND`.
    bitwise_and => Band,
    /// `MPI_LOR`.
    logical_or => Lor,
    /// `MPI_BOR`.
    bitwise_or => Bor,
    /// `MPI_LXOR`.
    logical_xor => Lxor,
    /// `MPI_BXOR`.
    bitwise_xor => Bxor,
}

impl Operation for SystemOperation {
    fn as_core_op(&self) -> CoreOp {
        CoreOp::predefined(self.0)
    }
}

/// An operation defined by a closure (`MPI_Op_create`). The closure gets the input
/// and the in-out operands and must compute `inout[i] = in[i] op inout[i]`; with
/// [`DynBuffer::downcast`] it sees them as slices.
///
/// ```
/// use oxmpi::traits::*;
/// use oxmpi::collective::UserOperation;
/// let universe = oxmpi::initialize().unwrap();
/// let world = universe.world();
/// let op = UserOperation::commutative(|x, y| {
///     let x: &[i32] = x.downcast().unwrap();
///     let y: &mut [i32] = y.downcast().unwrap();
///     for (a, b) in x.iter().zip(y) {
///         *b += a;
///     }
/// });
/// let mut sum = 0;
/// world.all_reduce_into(&1i32, &mut sum, &op);
/// assert_eq!(sum, world.size());
/// ```
pub struct UserOperation<'a> {
    /// Core's operation over the closure, borrowing for 'a (it disarms the engine's
    /// `Op` when dropped).
    op: oxmpi_core::op::ScopedOp<'a>,
}

impl fmt::Debug for UserOperation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UserOperation({})", self.op.op().name())
    }
}

impl<'a> UserOperation<'a> {
    /// An associative (not necessarily commutative) operation: processes' values are
    /// combined in rank order.
    pub fn associative<F>(function: F) -> Self
    where
        F: Fn(DynBuffer<'_>, DynBufferMut<'_>) + Sync + 'a,
    {
        Self::new(false, function)
    }

    /// An associative and commutative operation.
    pub fn commutative<F>(function: F) -> Self
    where
        F: Fn(DynBuffer<'_>, DynBufferMut<'_>) + Sync + 'a,
    {
        Self::new(true, function)
    }

    /// Same as [`associative`](Self::associative) (oxmpi's spelling of rsmpi's
    /// non-commutative constructor).
    pub fn non_commutative<F>(function: F) -> Self
    where
        F: Fn(DynBuffer<'_>, DynBufferMut<'_>) + Sync + 'a,
    {
        Self::new(false, function)
    }

    /// An operation from a closure; `commute` says whether it is commutative.
    pub fn new<F>(commute: bool, function: F) -> Self
    where
        F: Fn(DynBuffer<'_>, DynBufferMut<'_>) + Sync + 'a,
    {
        let op = oxmpi_core::op::ScopedOp::new(
            Box::new(move |inp, io| {
                function(DynBuffer::of_region(inp), DynBufferMut::of_region(io))
            }),
            commute,
        );
        UserOperation { op }
    }
}

impl Operation for UserOperation<'_> {
    fn as_core_op(&self) -> CoreOp {
        self.op.op().clone()
    }
}

/// A C-style user function: `(invec, inoutvec, len, datatype)`, as rsmpi's. The
/// datatype is the standard ABI handle of the elements' type for predefined types (and
/// their duplicates); for derived ones a handle of the C interface with the feature
/// `ffi`, `MPI_DATATYPE_NULL` without it (see [`crate::ffi`]).
pub type UnsafeUserFunction =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut crate::ffi::MPI_Datatype);

/// An operation defined by an `extern "C"` function, as `MPI_Op_create` takes one.
#[derive(Debug)]
pub struct UnsafeUserOperation {
    op: CoreOp,
}

impl UnsafeUserOperation {
    /// An associative operation.
    ///
    /// # Safety
    /// `function` must compute `inoutvec[i] = invec[i] op inoutvec[i]` for `*len`
    /// elements of the datatype, touching nothing else.
    pub unsafe fn associative(function: UnsafeUserFunction) -> Self {
        Self::new(false, function)
    }

    /// An associative and commutative operation.
    ///
    /// # Safety
    /// As [`associative`](Self::associative).
    pub unsafe fn commutative(function: UnsafeUserFunction) -> Self {
        Self::new(true, function)
    }

    /// The operation over `function`, whose contract its only callers, the two `unsafe`
    /// constructors above, pass on (private, so no safe path reaches it).
    fn new(commute: bool, function: UnsafeUserFunction) -> Self {
        let op = CoreOp::user(
            std::sync::Arc::new(
                move |inp: *const u8, io: *mut u8, n: usize, dt: &CoreDatatype| {
                    let mut len = n as c_int;
                    let mut h = crate::ffi::datatype_handle(dt);
                    // SAFETY: the contract of `associative`/`commutative`, the only callers of `new`.
                    unsafe { function(inp as *mut c_void, io as *mut c_void, &mut len, &mut h) }
                },
            ),
            commute,
        );
        UnsafeUserOperation { op }
    }
}

impl Operation for UnsafeUserOperation {
    fn as_core_op(&self) -> CoreOp {
        self.op.clone()
    }
}

/// `inoutbuf[i] = inbuf[i] op inoutbuf[i]` locally (`MPI_Reduce_local`).
pub fn reduce_local_into<S, R, O>(inbuf: &S, inoutbuf: &mut R, op: O)
where
    S: Buffer + ?Sized,
    R: BufferMut + ?Sized,
    O: Operation,
{
    try_reduce_local_into(inbuf, inoutbuf, op).or_fatal()
}

/// [`reduce_local_into`], reporting errors.
pub fn try_reduce_local_into<S, R, O>(inbuf: &S, inoutbuf: &mut R, op: O) -> Result<()>
where
    S: Buffer + ?Sized,
    R: BufferMut + ?Sized,
    O: Operation,
{
    const CALL: &str = "MPI_Reduce_local";
    let (s, mut r) = (typed_in(inbuf), typed_out(inoutbuf));
    check_same_reduce(CALL, &s, &r)?;
    api::reduce_local(s.desc(), r.desc_mut_n(s.count), &op.as_core_op())?;
    r.check_out(CALL)
}

// ----- helpers -----------------------------------------------------------------------------

/// Whether a reduction's send and receive datatypes agree (same signature and extent).
/// Buffers of one Rust type share one engine datatype (`Equivalence`'s is made once), so
/// the common case is one pointer comparison, not a walk of two signatures (~600
/// instructions per call, bench/PROFILE.md rate18).
fn same_reduce_type(s: &CoreDatatype, r: &CoreDatatype) -> bool {
    s.ptr_eq(r) || (s.same_signature(1, r, 1) && s.extent() == r.extent())
}

fn check_same_reduce(call: &str, s: &Typed<'_>, r: &Typed<'_>) -> Result<()> {
    if r.count < s.count {
        return Err(Error::new(
            ErrorClass::Truncate,
            format!(
                "{call}: the receive buffer has {} elements, the send buffer {}",
                r.count, s.count
            ),
        ));
    }
    if !same_reduce_type(s.dt(), r.dt()) {
        return Err(Error::new(
            ErrorClass::Type,
            format!(
                "{call}: the send datatype {} and the receive datatype {} differ",
                s.dt().name(),
                r.dt().name()
            ),
        ));
    }
    Ok(())
}

/// The representation and width of a buffer's element type when it is one predefined integer
/// type (or a named copy of one, as the API's `usize`): the only types a blocking reduction
/// converts between ([`blocking_reduce`]).
fn integer_repr(dt: &CoreDatatype) -> Option<(Repr, usize)> {
    let p = dt.single_primitive()?;
    let one_element = dt.size() == p.size() && dt.extent() == p.extent() as isize;
    (one_element && p.repr().is_integer()).then(|| (p.repr(), p.size()))
}

/// The integer of representation `r` in `b` (native byte order).
fn read_integer(r: Repr, b: &[u8]) -> i128 {
    match r {
        Repr::I8 => i8::from_ne_bytes([b[0]]).into(),
        Repr::U8 => b[0].into(),
        Repr::I16 => i16::from_ne_bytes([b[0], b[1]]).into(),
        Repr::U16 => u16::from_ne_bytes([b[0], b[1]]).into(),
        Repr::I32 => i32::from_ne_bytes(b[..4].try_into().unwrap()).into(),
        Repr::U32 => u32::from_ne_bytes(b[..4].try_into().unwrap()).into(),
        Repr::I64 => i64::from_ne_bytes(b[..8].try_into().unwrap()).into(),
        _ => u64::from_ne_bytes(b[..8].try_into().unwrap()).into(),
    }
}

/// Writes `v` into `out` (the width of `r`) as an integer of representation `r` in native
/// byte order; false, with `out` untouched, when it does not fit.
fn write_integer(r: Repr, v: i128, out: &mut [u8]) -> bool {
    fn put<T, const W: usize>(v: i128, out: &mut [u8], bytes: fn(T) -> [u8; W]) -> bool
    where
        T: TryFrom<i128>,
    {
        match T::try_from(v) {
            Ok(x) => {
                out[..W].copy_from_slice(&bytes(x));
                true
            }
            Err(_) => false,
        }
    }
    match r {
        Repr::I8 => put(v, out, i8::to_ne_bytes),
        Repr::U8 => put(v, out, u8::to_ne_bytes),
        Repr::I16 => put(v, out, i16::to_ne_bytes),
        Repr::U16 => put(v, out, u16::to_ne_bytes),
        Repr::I32 => put(v, out, i32::to_ne_bytes),
        Repr::U32 => put(v, out, u32::to_ne_bytes),
        Repr::I64 => put(v, out, i64::to_ne_bytes),
        _ => put(v, out, u64::to_ne_bytes),
    }
}

/// A blocking allreduce, scan or exscan. The safe API takes the send and receive buffers as
/// two types; MPI requires one. When they are two different predefined integer types (rsmpi's
/// `dyn_communicator` example scans a `usize` into an `i32`) and the op is predefined, the
/// reduction runs in the send type, as MPI would with the send buffer's datatype, and each
/// result is converted to the receive type: a result that does not fit is an error of class
/// [`ErrorClass::Truncate`], and nothing is written then. Over a C MPI such a call writes the
/// send type's bytes into the smaller receive buffer. Other mismatches stay errors of class
/// [`ErrorClass::Type`].
fn blocking_reduce<'a>(
    kind: Red,
    comm: &Comm,
    s: &Typed<'a>,
    r: &mut TypedMut<'a>,
    op: &CoreOp,
    call: &str,
) -> Result<()> {
    if let (Some(from), Some(to)) = (integer_repr(s.dt()), integer_repr(r.dt())) {
        if !same_reduce_type(s.dt(), r.dt()) && op.as_predefined().is_some() && r.count >= s.count {
            return reduce_converting(kind, comm, s, r, op, (from, to), call);
        }
    }
    reduce_like(kind, comm, s, r, op, Mode::Blocking)?;
    r.check_out(call)
}

/// [`blocking_reduce`] between two integer types: reduces into a buffer of the send type,
/// then converts.
fn reduce_converting(
    kind: Red,
    comm: &Comm,
    s: &Typed<'_>,
    r: &mut TypedMut<'_>,
    op: &CoreOp,
    ((from, wf), (to, wt)): ((Repr, usize), (Repr, usize)),
    call: &str,
) -> Result<()> {
    let n = s.count;
    // u64 words: aligned for every integer type.
    let mut words = vec![0u64; (n * wf).div_ceil(8)];
    let tmp = &mut oxmpi_core::buf::as_bytes_mut(&mut words)[..n * wf];
    let into = oxmpi_core::buf::RecvBuf::typed(tmp, n, s.dt())?;
    match kind {
        Red::All => api::allreduce(Some(s.desc()), into, op, comm)?,
        Red::Scan => api::scan(Some(s.desc()), into, op, comm)?,
        Red::Exscan => api::exscan(Some(s.desc()), into, op, comm)?,
        Red::ScatterBlock => unreachable!("reduce_scatter_block does not convert"),
    }
    if matches!(kind, Red::Exscan) && comm.rank() == 0 {
        // MPI_Exscan leaves process 0's receive buffer alone.
        return Ok(());
    }
    let tmp = &oxmpi_core::buf::as_bytes_mut(&mut words)[..n * wf];
    // Converted into a staging buffer first: a result that does not fit leaves the receive
    // buffer untouched.
    let mut out = vec![0u8; n * wt];
    for (i, (e, o)) in tmp
        .chunks_exact(wf)
        .zip(out.chunks_exact_mut(wt))
        .enumerate()
    {
        let v = read_integer(from, e);
        if !write_integer(to, v, o) {
            return Err(Error::new(
                ErrorClass::Truncate,
                format!(
                    "{call}: result {v} of element {i} (reduced as {}) does not fit the receive type {}",
                    s.dt().name(),
                    r.dt().name()
                ),
            ));
        }
    }
    let name = r.dt().name();
    match r.data_bytes_mut() {
        Some(bytes) if bytes.len() >= out.len() => {
            bytes[..out.len()].copy_from_slice(&out);
            Ok(())
        }
        _ => Err(Error::new(
            ErrorClass::Type,
            format!("{call}: the receive datatype {name} differs from the send datatype {} and is not contiguous", s.dt().name()),
        )),
    }
}

fn per_process(count: usize, n: Rank) -> usize {
    if n <= 0 {
        0
    } else {
        count / n as usize
    }
}

/// Counts and displacements of a partition, checked against the communicator size and
/// the buffer's element count.
fn parts<P: crate::datatype::Partitioned + crate::datatype::Collection + ?Sized>(
    p: &P,
    n: Rank,
    call: &str,
    arg: &str,
) -> Result<(Vec<usize>, Vec<isize>)> {
    let (c, d) = (p.counts(), p.displs());
    let n = n.max(0) as usize;
    if c.len() != n || d.len() != n {
        return Err(Error::arg(
            ErrorClass::Arg,
            call,
            arg,
            format!(
                "{} counts and {} displacements for {n} processes",
                c.len(),
                d.len()
            ),
        ));
    }
    let total = p.count().max(0) as i64;
    let mut out = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let (ci, di) = (c[i] as i64, d[i] as i64);
        if ci < 0 || di < 0 || di + ci > total {
            return Err(Error::arg(
                ErrorClass::Count,
                call,
                arg,
                format!(
                    "part {i} ({ci} elements at {di}) is outside the buffer of {total} elements"
                ),
            ));
        }
        out.0.push(ci as usize);
        out.1.push(di as isize);
    }
    Ok(out)
}

/// Checks that the parts of a receive partition do not overlap.
fn disjoint(counts: &[usize], displs: &[isize], call: &str, arg: &str) -> Result<()> {
    let mut v: Vec<(isize, usize)> = displs
        .iter()
        .copied()
        .zip(counts.iter().copied())
        .filter(|x| x.1 > 0)
        .collect();
    v.sort_unstable();
    for w in v.windows(2) {
        if w[0].0 + w[0].1 as isize > w[1].0 {
            return Err(Error::arg(
                ErrorClass::Arg,
                call,
                arg,
                "receive parts overlap",
            ));
        }
    }
    Ok(())
}

fn not_root(call: &str, what: &str) -> Error {
    Error::new(ErrorClass::Root, format!("{call}: {what}"))
}

/// Runs a blocking collective, starts an immediate one with the engine's scope for a
/// request that [`immediate_mut`] wraps at once, or makes a persistent one (its
/// schedule planned once, at init) with the engine's scope for the request that
/// [`persistent_mut`] wraps. The helpers below serve all three forms, so an
/// immediate method and its persistent twin differ only in the mode they pass.
enum Mode<'s, 'a> {
    Blocking,
    Immediate(&'s Start<'a>),
    Persistent(&'s Start<'a>),
}

/// `run!(mode, w, blocking call, immediate call, persistent call)`, the last two
/// using the engine scope `w`.
macro_rules! run {
    ($mode:expr, $w:ident, $b:expr, $i:expr, $p:expr) => {
        match $mode {
            Mode::Blocking => $b.map(|_| None),
            Mode::Immediate($w) => $i.map(Some),
            Mode::Persistent($w) => $p.map(Some),
        }
    };
}

/// The request an immediate or persistent collective made (in [`Mode::Immediate`] or
/// [`Mode::Persistent`]), with the receive target to check on completion.
fn started(
    r: Result<Option<RawRequest>>,
    out: Option<RecvTarget>,
) -> Result<(RawRequest, Option<RecvTarget>)> {
    Ok((
        r?.expect("immediate and persistent collectives return a request"),
        out,
    ))
}

/// One collective over a send and a receive buffer, written once: its blocking method
/// (documented by the caller) and `try_` twin, its immediate method and twin, and its
/// persistent method and twin, with the MPI call each form reports in errors.
/// `prep` runs first in every form, with the communicator, the two buffers and the
/// form's call name bound to the names given (checks of the partitions), and yields
/// what `run` gets in the pattern `$p`; `run` calls the engine in `mode` over the
/// typed buffers `s` and `r`.
macro_rules! collective_methods {
    (
        $(#[$doc:meta])*
        [$name:ident, $try_name:ident, $call:literal]
        [$imm:ident, $try_imm:ident, $icall:literal]
        [$init:ident, $try_init:ident, $pcall:literal]
        S: $sb:path, R: $rb:path,
        prep |$comm:ident, $sendbuf:ident, $recvbuf:ident, $c:ident| $prep:expr,
        run |$s:ident, $r:ident, $mode:ident, $p:pat_param| $run:expr
    ) => {
        $(#[$doc])*
        fn $name<S, R>(&self, sendbuf: &S, recvbuf: &mut R)
        where
            S: ?Sized + $sb,
            R: ?Sized + $rb,
        {
            self.$try_name(sendbuf, recvbuf).or_fatal()
        }
        #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name), "), reporting errors.")]
        fn $try_name<S, R>(&self, sendbuf: &S, recvbuf: &mut R) -> Result<()>
        where
            S: ?Sized + $sb,
            R: ?Sized + $rb,
        {
            let ($comm, $sendbuf, $recvbuf, $c) = (self.core_comm(), sendbuf, recvbuf, $call);
            let $p = $prep?;
            let ($s, mut $r) = (typed_in($sendbuf), typed_out($recvbuf));
            let $mode = Mode::Blocking;
            {
                let ($s, $r) = (&$s, &mut $r);
                $run?;
            }
            $r.check_out($c)
        }
        collective_methods! { @started "Starts a", Request, immediate_mut, Immediate,
            [$name, $imm, $try_imm, $icall] S: $sb, R: $rb,
            prep |$comm, $sendbuf, $recvbuf, $c| $prep, run |$s, $r, $mode, $p| $run }
        collective_methods! { @started "A persistent", PersistentRequest, persistent_mut, Persistent,
            [$name, $init, $try_init, $pcall] S: $sb, R: $rb,
            prep |$comm, $sendbuf, $recvbuf, $c| $prep, run |$s, $r, $mode, $p| $run }
    };
    // The immediate or the persistent form (its request type, the function that
    // wraps the started request, the engine mode) and its `try_` twin.
    (
        @started $what:literal, $Req:ident, $wrap:ident, $Variant:ident,
        [$name:ident, $f:ident, $try_f:ident, $fcall:literal] S: $sb:path, R: $rb:path,
        prep |$comm:ident, $sendbuf:ident, $recvbuf:ident, $c:ident| $prep:expr,
        run |$s:ident, $r:ident, $mode:ident, $p:pat_param| $run:expr
    ) => {
        #[doc = concat!($what, " [`", stringify!($name), "`](Self::", stringify!($name), ") (`", $fcall, "`).")]
        fn $f<'a, Sc, S, R>(&self, scope: Sc, sendbuf: &'a S, recvbuf: &'a mut R) -> $Req<'a, R, Sc, SafetyOf<Self>>
        where
            Self: CommunicatorSafety,
            S: 'a + ?Sized + $sb,
            R: 'a + ?Sized + $rb,
            Sc: Scope<'a>,
        {
            self.$try_f(scope, sendbuf, recvbuf).or_fatal()
        }
        #[doc = concat!("[`", stringify!($f), "`](Self::", stringify!($f), "), reporting errors.")]
        fn $try_f<'a, Sc, S, R>(&self, scope: Sc, sendbuf: &'a S, recvbuf: &'a mut R) -> Result<$Req<'a, R, Sc, SafetyOf<Self>>>
        where
            Self: CommunicatorSafety,
            S: 'a + ?Sized + $sb,
            R: 'a + ?Sized + $rb,
            Sc: Scope<'a>,
        {
            #[allow(unused_variables)] // `prep` and `run` may not name the call
            let ($comm, $sendbuf, $recvbuf, $c) = (self.core_comm(), sendbuf, recvbuf, $fcall);
            let $p = $prep?;
            $wrap($recvbuf, $fcall, scope, |w, recvbuf| {
                let ($s, mut $r) = (typed_in($sendbuf), typed_out(recvbuf));
                let out = $r.target();
                let $mode = Mode::$Variant(w);
                let ($s, $r) = (&$s, &mut $r);
                started($run, out)
            })
        }
    };
}

mod neighbor;

// ----- engine calls shared by the blocking, immediate and persistent forms --------------

fn do_bcast<'a>(
    comm: &Comm,
    root: Rank,
    b: &mut TypedMut<'a>,
    mode: Mode<'_, 'a>,
) -> Result<Option<RawRequest>> {
    run!(
        mode,
        w,
        api::bcast(b.desc_mut(), root, comm),
        api::ibcast(w, b.lend_mut(w), root, comm),
        cp::bcast_init(w, b.lend_mut(w), root, comm)
    )
}

fn do_gather<'a>(
    comm: &Comm,
    root: Rank,
    s: &Typed<'a>,
    r: Option<&mut TypedMut<'a>>,
    mode: Mode<'_, 'a>,
) -> Result<Option<RawRequest>> {
    let rc = r.as_ref().map_or(0, |r| per_process(r.count, comm.size()));
    run!(
        mode,
        w,
        mv::gather(Some(s.desc()), r.map(|r| r.desc_mut()), rc, root, comm),
        mv::igather(w, Some(s.lend(w)), r.map(|r| r.lend_mut(w)), rc, root, comm),
        cp::gather_init(w, Some(s.lend(w)), r.map(|r| r.lend_mut(w)), rc, root, comm)
    )
}

type VParts<'p, B> = Option<(B, &'p [usize], &'p [isize])>;

fn do_gatherv<'a>(
    comm: &Comm,
    root: Rank,
    s: &Typed<'a>,
    r: VParts<'_, &mut TypedMut<'a>>,
    mode: Mode<'_, 'a>,
) -> Result<Option<RawRequest>> {
    let n = comm.size().max(0) as usize;
    let zeros = (vec![0usize; n], vec![0isize; n]);
    let (r, c, d) = match r {
        Some((r, c, d)) => (Some(r), c, d),
        None => (None, &zeros.0[..], &zeros.1[..]),
    };
    run!(
        mode,
        w,
        mv::gatherv(Some(s.desc()), r.map(|r| r.desc_mut()), c, d, root, comm),
        mv::igatherv(
            w,
            Some(s.lend(w)),
            r.map(|r| r.lend_mut(w)),
            c,
            d,
            root,
            comm
        ),
        cp::gatherv_init(
            w,
            Some(s.lend(w)),
            r.map(|r| r.lend_mut(w)),
            c,
            d,
            root,
            comm
        )
    )
}

fn do_scatter<'a>(
    comm: &Comm,
    root: Rank,
    s: Option<&Typed<'a>>,
    r: &mut TypedMut<'a>,
    mode: Mode<'_, 'a>,
) -> Result<Option<RawRequest>> {
    let sc = s.map_or(0, |s| per_process(s.count, comm.size()));
    run!(
        mode,
        w,
        mv::scatter(s.map(|s| s.desc()), sc, Some(r.desc_mut()), root, comm),
        mv::iscatter(w, s.map(|s| s.lend(w)), sc, Some(r.lend_mut(w)), root, comm),
        cp::scatter_init(w, s.map(|s| s.lend(w)), sc, Some(r.lend_mut(w)), root, comm)
    )
}

fn do_scatterv<'a>(
    comm: &Comm,
    root: Rank,
    s: VParts<'_, &Typed<'a>>,
    r: &mut TypedMut<'a>,
    mode: Mode<'_, 'a>,
) -> Result<Option<RawRequest>> {
    let n = comm.size().max(0) as usize;
    let zeros = (vec![0usize; n], vec![0isize; n]);
    let (s, c, d) = match s {
        Some((s, c, d)) => (Some(s), c, d),
        None => (None, &zeros.0[..], &zeros.1[..]),
    };
    run!(
        mode,
        w,
        mv::scatterv(s.map(|s| s.desc()), c, d, Some(r.desc_mut()), root, comm),
        mv::iscatterv(
            w,
            s.map(|s| s.lend(w)),
            c,
            d,
            Some(r.lend_mut(w)),
            root,
            comm
        ),
        cp::scatterv_init(
            w,
            s.map(|s| s.lend(w)),
            c,
            d,
            Some(r.lend_mut(w)),
            root,
            comm
        )
    )
}

fn do_reduce<'a>(
    comm: &Comm,
    root: Rank,
    s: &Typed<'a>,
    r: Option<&mut TypedMut<'a>>,
    op: &CoreOp,
    mode: Mode<'_, 'a>,
) -> Result<Option<RawRequest>> {
    if let Some(r) = &r {
        check_same_reduce("MPI_Reduce", s, r)?;
    }
    // The root's buffer may be longer than the operands: its first `s.count` elements.
    let n = s.count;
    run!(
        mode,
        w,
        api::reduce(Some(s.desc()), r.map(|r| r.desc_mut_n(n)), op, root, comm),
        api::ireduce(
            w,
            Some(s.lend(w)),
            r.map(|r| r.lend_mut_n(w, n)),
            op,
            root,
            comm
        ),
        cp::reduce_init(
            w,
            Some(s.lend(w)),
            r.map(|r| r.lend_mut_n(w, n)),
            op,
            root,
            comm
        )
    )
}

// ----- CommunicatorCollectives ---------------------------------------------------------------

/// Collective operations of a whole communicator.
pub trait CommunicatorCollectives: Communicator {
    /// Waits until every process of the communicator has entered (`MPI_Barrier`).
    fn barrier(&self) {
        self.try_barrier().or_fatal()
    }
    /// [`barrier`](Self::barrier), reporting errors.
    fn try_barrier(&self) -> Result<()> {
        coll::barrier::barrier(self.core_comm())
    }

    collective_methods! {
        /// Gathers every process's `sendbuf` into `recvbuf` on every process, in rank order
        /// (`MPI_Allgather`).
        [all_gather_into, try_all_gather_into, "MPI_Allgather"]
        [immediate_all_gather_into, try_immediate_all_gather_into, "MPI_Iallgather"]
        [all_gather_init, try_all_gather_init, "MPI_Allgather_init"]
        S: Buffer, R: BufferMut,
        prep |comm, sendbuf, recvbuf, call| Ok::<_, Error>(()),
        run |s, r, mode, ()| all_gather(comm, s, r, mode)
    }

    collective_methods! {
        /// Gathers every process's `sendbuf` into the parts of `recvbuf` (`MPI_Allgatherv`).
        [all_gather_varcount_into, try_all_gather_varcount_into, "MPI_Allgatherv"]
        [immediate_all_gather_varcount_into, try_immediate_all_gather_varcount_into, "MPI_Iallgatherv"]
        [all_gather_varcount_init, try_all_gather_varcount_init, "MPI_Allgatherv_init"]
        S: Buffer, R: PartitionedBufferMut,
        prep |comm, sendbuf, recvbuf, call| {
            parts(recvbuf, comm.size(), call, "recvbuf").and_then(|(c, d)| {
                disjoint(&c, &d, call, "recvbuf")?;
                Ok((c, d))
            })
        },
        run |s, r, mode, (c, d)| all_gatherv(comm, s, r, &c, &d, mode)
    }

    collective_methods! {
        /// Sends part `i` of `sendbuf` to process `i` and receives part `j` of `recvbuf`
        /// from process `j`, parts of `count() / size` elements (`MPI_Alltoall`).
        [all_to_all_into, try_all_to_all_into, "MPI_Alltoall"]
        [immediate_all_to_all_into, try_immediate_all_to_all_into, "MPI_Ialltoall"]
        [all_to_all_init, try_all_to_all_init, "MPI_Alltoall_init"]
        S: Buffer, R: BufferMut,
        prep |comm, sendbuf, recvbuf, call| Ok::<_, Error>(()),
        run |s, r, mode, ()| all_to_all(comm, s, r, mode)
    }

    collective_methods! {
        /// All-to-all with per-process counts and displacements (`MPI_Alltoallv`).
        [all_to_all_varcount_into, try_all_to_all_varcount_into, "MPI_Alltoallv"]
        [immediate_all_to_all_varcount_into, try_immediate_all_to_all_varcount_into, "MPI_Ialltoallv"]
        [all_to_all_varcount_init, try_all_to_all_varcount_init, "MPI_Alltoallv_init"]
        S: PartitionedBuffer, R: PartitionedBufferMut,
        prep |comm, sendbuf, recvbuf, call| {
            let sp = parts(sendbuf, comm.size(), call, "sendbuf")?;
            let rp = parts(recvbuf, comm.size(), call, "recvbuf")?;
            disjoint(&rp.0, &rp.1, call, "recvbuf").map(|_| (sp, rp))
        },
        run |s, r, mode, (sp, rp)| all_to_allv(comm, s, &sp, r, &rp, mode)
    }

    /// Reduces every process's `sendbuf` with `op` into `recvbuf` on every process
    /// (`MPI_Allreduce`).
    fn all_reduce_into<S: ?Sized, R: ?Sized, O>(&self, sendbuf: &S, recvbuf: &mut R, op: O)
    where
        S: Buffer,
        R: BufferMut,
        O: Operation,
    {
        self.try_all_reduce_into(sendbuf, recvbuf, op).or_fatal()
    }
    /// [`all_reduce_into`](Self::all_reduce_into), reporting errors.
    fn try_all_reduce_into<S: ?Sized, R: ?Sized, O>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
        op: O,
    ) -> Result<()>
    where
        S: Buffer,
        R: BufferMut,
        O: Operation,
    {
        let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
        blocking_reduce(
            Red::All,
            self.core_comm(),
            &s,
            &mut r,
            &op.as_core_op(),
            "MPI_Allreduce",
        )
    }

    /// Reduces in place: `buf` holds this process's operand and receives the result
    /// (`MPI_Allreduce` with `MPI_IN_PLACE`; an oxmpi extension).
    fn all_reduce_in_place<B: ?Sized, O>(&self, buf: &mut B, op: O)
    where
        B: BufferMut,
        O: Operation,
    {
        self.try_all_reduce_in_place(buf, op).or_fatal()
    }
    /// [`all_reduce_in_place`](Self::all_reduce_in_place), reporting errors.
    fn try_all_reduce_in_place<B: ?Sized, O>(&self, buf: &mut B, op: O) -> Result<()>
    where
        B: BufferMut,
        O: Operation,
    {
        let mut r = typed_out(buf);
        api::allreduce(None, r.desc_mut(), &op.as_core_op(), self.core_comm())?;
        r.check_out("MPI_Allreduce")
    }

    /// Reduces `sendbuf` with `op` and scatters the result in blocks of
    /// `recvbuf.count()` elements (`MPI_Reduce_scatter_block`).
    fn reduce_scatter_block_into<S: ?Sized, R: ?Sized, O>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
        op: O,
    ) where
        S: Buffer,
        R: BufferMut,
        O: Operation,
    {
        self.try_reduce_scatter_block_into(sendbuf, recvbuf, op)
            .or_fatal()
    }
    /// [`reduce_scatter_block_into`](Self::reduce_scatter_block_into), reporting errors.
    fn try_reduce_scatter_block_into<S: ?Sized, R: ?Sized, O>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
        op: O,
    ) -> Result<()>
    where
        S: Buffer,
        R: BufferMut,
        O: Operation,
    {
        let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
        reduce_like(
            Red::ScatterBlock,
            self.core_comm(),
            &s,
            &mut r,
            &op.as_core_op(),
            Mode::Blocking,
        )?;
        r.check_out("MPI_Reduce_scatter_block")
    }

    /// Inclusive prefix reduction: process `i` gets `sendbuf`s of `0..=i` combined
    /// (`MPI_Scan`).
    fn scan_into<S: ?Sized, R: ?Sized, O>(&self, sendbuf: &S, recvbuf: &mut R, op: O)
    where
        S: Buffer,
        R: BufferMut,
        O: Operation,
    {
        self.try_scan_into(sendbuf, recvbuf, op).or_fatal()
    }
    /// [`scan_into`](Self::scan_into), reporting errors.
    fn try_scan_into<S: ?Sized, R: ?Sized, O>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
        op: O,
    ) -> Result<()>
    where
        S: Buffer,
        R: BufferMut,
        O: Operation,
    {
        let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
        blocking_reduce(
            Red::Scan,
            self.core_comm(),
            &s,
            &mut r,
            &op.as_core_op(),
            "MPI_Scan",
        )
    }

    /// Exclusive prefix reduction: process `i` gets `sendbuf`s of `0..i` combined;
    /// `recvbuf` of process 0 is left unchanged (`MPI_Exscan`).
    fn exclusive_scan_into<S: ?Sized, R: ?Sized, O>(&self, sendbuf: &S, recvbuf: &mut R, op: O)
    where
        S: Buffer,
        R: BufferMut,
        O: Operation,
    {
        self.try_exclusive_scan_into(sendbuf, recvbuf, op)
            .or_fatal()
    }
    /// [`exclusive_scan_into`](Self::exclusive_scan_into), reporting errors.
    fn try_exclusive_scan_into<S: ?Sized, R: ?Sized, O>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
        op: O,
    ) -> Result<()>
    where
        S: Buffer,
        R: BufferMut,
        O: Operation,
    {
        let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
        blocking_reduce(
            Red::Exscan,
            self.core_comm(),
            &s,
            &mut r,
            &op.as_core_op(),
            "MPI_Exscan",
        )
    }

    /// Starts a barrier (`MPI_Ibarrier`).
    fn immediate_barrier(&self) -> Request<'static, (), StaticScope, SafetyOf<Self>>
    where
        Self: CommunicatorSafety,
    {
        self.try_immediate_barrier().or_fatal()
    }
    /// [`immediate_barrier`](Self::immediate_barrier), reporting errors.
    fn try_immediate_barrier(&self) -> Result<Request<'static, (), StaticScope, SafetyOf<Self>>>
    where
        Self: CommunicatorSafety,
    {
        static UNIT: () = ();
        // A barrier uses no buffer.
        immediate_ref(&UNIT, "MPI_Ibarrier", StaticScope, |_| {
            coll::barrier::ibarrier(self.core_comm())
        })
    }

    /// Starts an [`all_reduce_into`](Self::all_reduce_into) (`MPI_Iallreduce`).
    fn immediate_all_reduce_into<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Request<'a, R, Sc, SafetyOf<Self>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        self.try_immediate_all_reduce_into(scope, sendbuf, recvbuf, op)
            .or_fatal()
    }
    /// [`immediate_all_reduce_into`](Self::immediate_all_reduce_into), reporting errors.
    fn try_immediate_all_reduce_into<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<Request<'a, R, Sc, SafetyOf<Self>>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        imm_reduce_like(
            Red::All,
            self.core_comm(),
            scope,
            sendbuf,
            recvbuf,
            op,
            "MPI_Iallreduce",
        )
    }

    /// Starts a [`reduce_scatter_block_into`](Self::reduce_scatter_block_into)
    /// (`MPI_Ireduce_scatter_block`).
    fn immediate_reduce_scatter_block_into<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Request<'a, R, Sc, SafetyOf<Self>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        self.try_immediate_reduce_scatter_block_into(scope, sendbuf, recvbuf, op)
            .or_fatal()
    }
    /// [`immediate_reduce_scatter_block_into`](Self::immediate_reduce_scatter_block_into), reporting errors.
    fn try_immediate_reduce_scatter_block_into<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<Request<'a, R, Sc, SafetyOf<Self>>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        imm_reduce_like(
            Red::ScatterBlock,
            self.core_comm(),
            scope,
            sendbuf,
            recvbuf,
            op,
            "MPI_Ireduce_scatter_block",
        )
    }

    /// Starts a [`scan_into`](Self::scan_into) (`MPI_Iscan`).
    fn immediate_scan_into<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Request<'a, R, Sc, SafetyOf<Self>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        self.try_immediate_scan_into(scope, sendbuf, recvbuf, op)
            .or_fatal()
    }
    /// [`immediate_scan_into`](Self::immediate_scan_into), reporting errors.
    fn try_immediate_scan_into<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<Request<'a, R, Sc, SafetyOf<Self>>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        imm_reduce_like(
            Red::Scan,
            self.core_comm(),
            scope,
            sendbuf,
            recvbuf,
            op,
            "MPI_Iscan",
        )
    }

    /// Starts an [`exclusive_scan_into`](Self::exclusive_scan_into) (`MPI_Iexscan`).
    fn immediate_exclusive_scan_into<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Request<'a, R, Sc, SafetyOf<Self>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        self.try_immediate_exclusive_scan_into(scope, sendbuf, recvbuf, op)
            .or_fatal()
    }
    /// [`immediate_exclusive_scan_into`](Self::immediate_exclusive_scan_into), reporting errors.
    fn try_immediate_exclusive_scan_into<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<Request<'a, R, Sc, SafetyOf<Self>>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        imm_reduce_like(
            Red::Exscan,
            self.core_comm(),
            scope,
            sendbuf,
            recvbuf,
            op,
            "MPI_Iexscan",
        )
    }

    /// A persistent [`barrier`](Self::barrier) (`MPI_Barrier_init`): each
    /// [`start`](PersistentRequest::start) begins one.
    fn barrier_init(&self) -> PersistentRequest<'static, (), StaticScope, SafetyOf<Self>>
    where
        Self: CommunicatorSafety,
    {
        self.try_barrier_init().or_fatal()
    }
    /// [`barrier_init`](Self::barrier_init), reporting errors.
    fn try_barrier_init(
        &self,
    ) -> Result<PersistentRequest<'static, (), StaticScope, SafetyOf<Self>>>
    where
        Self: CommunicatorSafety,
    {
        // A barrier uses no buffer (a leaked zero-sized value costs nothing).
        let unit: &'static mut () = Box::leak(Box::new(()));
        persistent_unchecked(unit, "MPI_Barrier_init", StaticScope, |w, _| {
            cp::barrier_init(w, self.core_comm())
        })
    }

    /// A persistent [`all_reduce_into`](Self::all_reduce_into) (`MPI_Allreduce_init`);
    /// the request keeps `op` until it is freed.
    fn all_reduce_init<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> PersistentRequest<'a, R, Sc, SafetyOf<Self>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        self.try_all_reduce_init(scope, sendbuf, recvbuf, op)
            .or_fatal()
    }
    /// [`all_reduce_init`](Self::all_reduce_init), reporting errors.
    fn try_all_reduce_init<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<PersistentRequest<'a, R, Sc, SafetyOf<Self>>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        pers_reduce(
            Red::All,
            self.core_comm(),
            scope,
            sendbuf,
            recvbuf,
            op,
            "MPI_Allreduce_init",
        )
    }

    /// A persistent [`all_reduce_in_place`](Self::all_reduce_in_place)
    /// (`MPI_Allreduce_init` with `MPI_IN_PLACE`): between runs,
    /// [`data_mut`](PersistentRequest::data_mut) puts the next operands in `buf`, and
    /// each run leaves the result there. The request keeps `op` until it is freed.
    ///
    /// ```
    /// use oxmpi::traits::*;
    /// use oxmpi::collective::SystemOperation;
    /// use oxmpi::request::scope;
    /// let universe = oxmpi::initialize().unwrap();
    /// let world = universe.world();
    /// let n = world.size();
    /// let mut x = [0i64];
    /// scope(|s| {
    ///     let mut r = world.all_reduce_in_place_init(s, &mut x, SystemOperation::sum());
    ///     for run in 0..3i64 {
    ///         r.data_mut().unwrap()[0] = run * i64::from(world.rank());
    ///         r.start();
    ///         r.wait();
    ///         let n = i64::from(n);
    ///         assert_eq!(r.data().unwrap()[0], run * n * (n - 1) / 2);
    ///     }
    /// });
    /// ```
    fn all_reduce_in_place_init<'a, Sc, B: ?Sized, O>(
        &self,
        scope: Sc,
        buf: &'a mut B,
        op: O,
    ) -> PersistentRequest<'a, B, Sc, SafetyOf<Self>>
    where
        Self: CommunicatorSafety,
        B: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        self.try_all_reduce_in_place_init(scope, buf, op).or_fatal()
    }
    /// [`all_reduce_in_place_init`](Self::all_reduce_in_place_init), reporting errors.
    fn try_all_reduce_in_place_init<'a, Sc, B: ?Sized, O>(
        &self,
        scope: Sc,
        buf: &'a mut B,
        op: O,
    ) -> Result<PersistentRequest<'a, B, Sc, SafetyOf<Self>>>
    where
        Self: CommunicatorSafety,
        B: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        let core_op = op.as_core_op();
        let comm = self.core_comm();
        let mut req = persistent_mut(buf, "MPI_Allreduce_init", scope, |w, buf| {
            let mut b = typed_out(buf);
            let out = b.target();
            Ok((
                cp::allreduce_init(w, None, b.lend_mut(w), &core_op, comm)?,
                out,
            ))
        })?;
        req.keep = Some(Box::new(op));
        Ok(req)
    }

    /// A persistent [`reduce_scatter_block_into`](Self::reduce_scatter_block_into)
    /// (`MPI_Reduce_scatter_block_init`); the request keeps `op` until it is freed.
    fn reduce_scatter_block_init<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> PersistentRequest<'a, R, Sc, SafetyOf<Self>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        self.try_reduce_scatter_block_init(scope, sendbuf, recvbuf, op)
            .or_fatal()
    }
    /// [`reduce_scatter_block_init`](Self::reduce_scatter_block_init), reporting errors.
    fn try_reduce_scatter_block_init<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<PersistentRequest<'a, R, Sc, SafetyOf<Self>>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        pers_reduce(
            Red::ScatterBlock,
            self.core_comm(),
            scope,
            sendbuf,
            recvbuf,
            op,
            "MPI_Reduce_scatter_block_init",
        )
    }

    /// A persistent [`scan_into`](Self::scan_into) (`MPI_Scan_init`).
    fn scan_init<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> PersistentRequest<'a, R, Sc, SafetyOf<Self>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        self.try_scan_init(scope, sendbuf, recvbuf, op).or_fatal()
    }
    /// [`scan_init`](Self::scan_init), reporting errors.
    fn try_scan_init<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<PersistentRequest<'a, R, Sc, SafetyOf<Self>>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        pers_reduce(
            Red::Scan,
            self.core_comm(),
            scope,
            sendbuf,
            recvbuf,
            op,
            "MPI_Scan_init",
        )
    }

    /// A persistent [`exclusive_scan_into`](Self::exclusive_scan_into) (`MPI_Exscan_init`).
    fn exclusive_scan_init<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> PersistentRequest<'a, R, Sc, SafetyOf<Self>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        self.try_exclusive_scan_init(scope, sendbuf, recvbuf, op)
            .or_fatal()
    }
    /// [`exclusive_scan_init`](Self::exclusive_scan_init), reporting errors.
    fn try_exclusive_scan_init<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<PersistentRequest<'a, R, Sc, SafetyOf<Self>>>
    where
        Self: CommunicatorSafety,
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        pers_reduce(
            Red::Exscan,
            self.core_comm(),
            scope,
            sendbuf,
            recvbuf,
            op,
            "MPI_Exscan_init",
        )
    }
}

impl<C: Communicator + ?Sized> CommunicatorCollectives for C {}

fn all_gather<'a>(
    comm: &Comm,
    s: &Typed<'a>,
    r: &mut TypedMut<'a>,
    mode: Mode<'_, 'a>,
) -> Result<Option<RawRequest>> {
    let rc = per_process(r.count, comm.size());
    run!(
        mode,
        w,
        mv::allgather(Some(s.desc()), r.desc_mut(), rc, comm),
        mv::iallgather(w, Some(s.lend(w)), r.lend_mut(w), rc, comm),
        cp::allgather_init(w, Some(s.lend(w)), r.lend_mut(w), rc, comm)
    )
}

fn all_gatherv<'a>(
    comm: &Comm,
    s: &Typed<'a>,
    r: &mut TypedMut<'a>,
    c: &[usize],
    d: &[isize],
    mode: Mode<'_, 'a>,
) -> Result<Option<RawRequest>> {
    run!(
        mode,
        w,
        mv::allgatherv(Some(s.desc()), r.desc_mut(), c, d, comm),
        mv::iallgatherv(w, Some(s.lend(w)), r.lend_mut(w), c, d, comm),
        cp::allgatherv_init(w, Some(s.lend(w)), r.lend_mut(w), c, d, comm)
    )
}

fn all_to_all<'a>(
    comm: &Comm,
    s: &Typed<'a>,
    r: &mut TypedMut<'a>,
    mode: Mode<'_, 'a>,
) -> Result<Option<RawRequest>> {
    let sc = per_process(s.count, comm.size());
    let rc = per_process(r.count, comm.size());
    run!(
        mode,
        w,
        mv::alltoall(Some(s.desc()), sc, r.desc_mut(), rc, comm),
        mv::ialltoall(w, Some(s.lend(w)), sc, r.lend_mut(w), rc, comm),
        cp::alltoall_init(w, Some(s.lend(w)), sc, r.lend_mut(w), rc, comm)
    )
}

type Parts = (Vec<usize>, Vec<isize>);

fn all_to_allv<'a>(
    comm: &Comm,
    s: &Typed<'a>,
    sp: &Parts,
    r: &mut TypedMut<'a>,
    rp: &Parts,
    mode: Mode<'_, 'a>,
) -> Result<Option<RawRequest>> {
    let (sb, rb) = (|| blocks(sp), || blocks(rp));
    run!(
        mode,
        w,
        mv::alltoallv(Some(s.desc()), sb(), r.desc_mut(), rb(), comm),
        mv::ialltoallv(w, Some(s.lend(w)), sb(), r.lend_mut(w), rb(), comm),
        cp::alltoallv_init(w, Some(s.lend(w)), sb(), r.lend_mut(w), rb(), comm)
    )
}

/// The blocks of a partition (counts and displacements), as the engine takes them.
fn blocks(p: &Parts) -> Blocks<'_> {
    Blocks {
        counts: &p.0,
        displs: &p.1,
    }
}

#[derive(Clone, Copy)]
enum Red {
    All,
    ScatterBlock,
    Scan,
    Exscan,
}

fn reduce_like<'a>(
    kind: Red,
    comm: &Comm,
    s: &Typed<'a>,
    r: &mut TypedMut<'a>,
    op: &CoreOp,
    mode: Mode<'_, 'a>,
) -> Result<Option<RawRequest>> {
    let n = s.count;
    match kind {
        Red::ScatterBlock => {
            let call = "MPI_Reduce_scatter_block";
            let need = r.count.checked_mul(comm.size().max(0) as usize);
            if need != Some(s.count) {
                return Err(Error::new(
                    ErrorClass::Count,
                    format!(
                        "{call}: the send buffer has {} elements, not {} x {} processes",
                        s.count,
                        r.count,
                        comm.size()
                    ),
                ));
            }
            if !same_reduce_type(s.dt(), r.dt()) {
                return Err(Error::new(
                    ErrorClass::Type,
                    format!("{call}: the send and receive datatypes differ"),
                ));
            }
            let rc = r.count;
            run!(
                mode,
                w,
                mv::reduce_scatter_block(Some(s.desc()), r.desc_mut(), rc, op, comm),
                mv::ireduce_scatter_block(w, Some(s.lend(w)), r.lend_mut(w), rc, op, comm),
                cp::reduce_scatter_block_init(w, Some(s.lend(w)), r.lend_mut(w), rc, op, comm)
            )
        }
        Red::All => {
            check_same_reduce("MPI_Allreduce", s, r)?;
            run!(
                mode,
                w,
                api::allreduce(Some(s.desc()), r.desc_mut_n(n), op, comm),
                api::iallreduce(w, Some(s.lend(w)), r.lend_mut_n(w, n), op, comm),
                cp::allreduce_init(w, Some(s.lend(w)), r.lend_mut_n(w, n), op, comm)
            )
        }
        Red::Scan => {
            check_same_reduce("MPI_Scan", s, r)?;
            run!(
                mode,
                w,
                api::scan(Some(s.desc()), r.desc_mut_n(n), op, comm),
                api::iscan(w, Some(s.lend(w)), r.lend_mut_n(w, n), op, comm),
                cp::scan_init(w, Some(s.lend(w)), r.lend_mut_n(w, n), op, comm)
            )
        }
        Red::Exscan => {
            check_same_reduce("MPI_Exscan", s, r)?;
            run!(
                mode,
                w,
                api::exscan(Some(s.desc()), r.desc_mut_n(n), op, comm),
                api::iexscan(w, Some(s.lend(w)), r.lend_mut_n(w, n), op, comm),
                cp::exscan_init(w, Some(s.lend(w)), r.lend_mut_n(w, n), op, comm)
            )
        }
    }
}

fn imm_reduce_like<'a, Sc, S, R, O, T: ThreadSafety>(
    kind: Red,
    comm: &Comm,
    scope: Sc,
    sendbuf: &'a S,
    recvbuf: &'a mut R,
    op: O,
    call: &'static str,
) -> Result<Request<'a, R, Sc, T>>
where
    S: 'a + Buffer + ?Sized,
    R: 'a + BufferMut + ?Sized,
    O: 'a + Operation,
    Sc: Scope<'a>,
{
    let mut req = immediate_mut(recvbuf, call, scope, |w, recvbuf| {
        let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
        let out = r.target();
        started(
            reduce_like(kind, comm, &s, &mut r, &op.as_core_op(), Mode::Immediate(w)),
            out,
        )
    })?;
    // A user operation runs until the request completes: the request keeps it.
    req.keep = Some(Box::new(op));
    Ok(req)
}

/// A persistent allreduce, reduce-scatter-block, scan or exscan: the immediate form's
/// code ([`reduce_like`]) in [`Mode::Persistent`]; the request keeps `op` until it is
/// freed.
fn pers_reduce<'a, Sc, S, R, O, T: ThreadSafety>(
    kind: Red,
    comm: &Comm,
    scope: Sc,
    sendbuf: &'a S,
    recvbuf: &'a mut R,
    op: O,
    call: &'static str,
) -> Result<PersistentRequest<'a, R, Sc, T>>
where
    S: 'a + Buffer + ?Sized,
    R: 'a + BufferMut + ?Sized,
    O: 'a + Operation,
    Sc: Scope<'a>,
{
    let mut req = persistent_mut(recvbuf, call, scope, |w, recvbuf| {
        let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
        let out = r.target();
        started(
            reduce_like(
                kind,
                comm,
                &s,
                &mut r,
                &op.as_core_op(),
                Mode::Persistent(w),
            ),
            out,
        )
    })?;
    req.keep = Some(Box::new(op));
    Ok(req)
}

// ----- Root ------------------------------------------------------------------------------------

/// Rooted collective operations, called on the [`Process`] of the root: every process
/// calls e.g. `world.process_at_rank(0).broadcast_into(&mut x)`. The `*_root` forms are
/// for the root itself, the others for the other processes.
pub trait Root: AsCommunicator {
    /// The rank of the root.
    fn root_rank(&self) -> Rank;

    /// Starts `maxprocs` processes of `command` (program, arguments, working
    /// directory) as a new job and returns the intercommunicator to it
    /// (`MPI_Comm_spawn`; collective over the communicator, `command` matters at the
    /// root). Fewer processes than asked for is `Err(MpiError::Spawn(failed, asked))`.
    fn spawn(
        &self,
        command: &std::process::Command,
        maxprocs: Rank,
    ) -> std::result::Result<crate::topology::InterCommunicator, crate::MpiError> {
        crate::dynamic::spawn(
            self.as_communicator(),
            self.root_rank(),
            &[(command, maxprocs)],
        )
    }

    /// [`spawn`](Root::spawn) of several commands as one job
    /// (`MPI_Comm_spawn_multiple`); `MPI_APPNUM` is each command's index.
    fn spawn_multiple(
        &self,
        commands: &[std::process::Command],
        maxprocs: &[Rank],
    ) -> std::result::Result<crate::topology::InterCommunicator, crate::MpiError> {
        assert_eq!(
            commands.len(),
            maxprocs.len(),
            "spawn_multiple: one maxprocs per command"
        );
        let pairs: Vec<(&std::process::Command, Rank)> =
            commands.iter().zip(maxprocs.iter().copied()).collect();
        crate::dynamic::spawn(self.as_communicator(), self.root_rank(), &pairs)
    }

    /// Sends the root's `buffer` into every process's `buffer` (`MPI_Bcast`).
    fn broadcast_into<Buf: ?Sized + BufferMut>(&self, buffer: &mut Buf) {
        self.try_broadcast_into(buffer).or_fatal()
    }
    /// [`broadcast_into`](Self::broadcast_into), reporting errors.
    fn try_broadcast_into<Buf: ?Sized + BufferMut>(&self, buffer: &mut Buf) -> Result<()> {
        let mut b = typed_out(buffer);
        do_bcast(
            self.as_communicator().core_comm(),
            self.root_rank(),
            &mut b,
            Mode::Blocking,
        )?;
        b.check_out("MPI_Bcast")
    }

    /// Sends `sendbuf` to the root's gather (`MPI_Gather`, non-root side).
    fn gather_into<S: ?Sized + Buffer>(&self, sendbuf: &S) {
        self.try_gather_into(sendbuf).or_fatal()
    }
    /// [`gather_into`](Self::gather_into), reporting errors.
    fn try_gather_into<S: ?Sized + Buffer>(&self, sendbuf: &S) -> Result<()> {
        let comm = self.as_communicator().core_comm();
        if comm.rank() == self.root_rank() {
            return Err(not_root(
                "MPI_Gather",
                "the root must call gather_into_root",
            ));
        }
        do_gather(
            comm,
            self.root_rank(),
            &typed_in(sendbuf),
            None,
            Mode::Blocking,
        )
        .map(|_| ())
    }

    /// Gathers every process's `sendbuf` into `recvbuf` in rank order, parts of
    /// `recvbuf.count() / size` elements (`MPI_Gather`, root side).
    fn gather_into_root<S: ?Sized + Buffer, R: ?Sized + BufferMut>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
    ) {
        self.try_gather_into_root(sendbuf, recvbuf).or_fatal()
    }
    /// [`gather_into_root`](Self::gather_into_root), reporting errors.
    fn try_gather_into_root<S: ?Sized + Buffer, R: ?Sized + BufferMut>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
    ) -> Result<()> {
        let comm = self.as_communicator().core_comm();
        if comm.rank() != self.root_rank() {
            return Err(not_root(
                "MPI_Gather",
                "gather_into_root called by a process that is not the root",
            ));
        }
        let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
        do_gather(comm, self.root_rank(), &s, Some(&mut r), Mode::Blocking)?;
        r.check_out("MPI_Gather")
    }

    /// Sends `sendbuf` to the root's varcount gather (`MPI_Gatherv`, non-root side).
    fn gather_varcount_into<S: ?Sized + Buffer>(&self, sendbuf: &S) {
        self.try_gather_varcount_into(sendbuf).or_fatal()
    }
    /// [`gather_varcount_into`](Self::gather_varcount_into), reporting errors.
    fn try_gather_varcount_into<S: ?Sized + Buffer>(&self, sendbuf: &S) -> Result<()> {
        let comm = self.as_communicator().core_comm();
        if comm.rank() == self.root_rank() {
            return Err(not_root(
                "MPI_Gatherv",
                "the root must call gather_varcount_into_root",
            ));
        }
        do_gatherv(
            comm,
            self.root_rank(),
            &typed_in(sendbuf),
            None,
            Mode::Blocking,
        )
        .map(|_| ())
    }

    /// Gathers every process's `sendbuf` into the parts of `recvbuf` (`MPI_Gatherv`,
    /// root side).
    fn gather_varcount_into_root<S: ?Sized + Buffer, R: ?Sized + PartitionedBufferMut>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
    ) {
        self.try_gather_varcount_into_root(sendbuf, recvbuf)
            .or_fatal()
    }
    /// [`gather_varcount_into_root`](Self::gather_varcount_into_root), reporting errors.
    fn try_gather_varcount_into_root<S: ?Sized + Buffer, R: ?Sized + PartitionedBufferMut>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
    ) -> Result<()> {
        const CALL: &str = "MPI_Gatherv";
        let comm = self.as_communicator().core_comm();
        if comm.rank() != self.root_rank() {
            return Err(not_root(
                CALL,
                "gather_varcount_into_root called by a process that is not the root",
            ));
        }
        let (c, d) = parts(recvbuf, comm.size(), CALL, "recvbuf")?;
        disjoint(&c, &d, CALL, "recvbuf")?;
        let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
        do_gatherv(
            comm,
            self.root_rank(),
            &s,
            Some((&mut r, &c, &d)),
            Mode::Blocking,
        )?;
        r.check_out(CALL)
    }

    /// Receives this process's part of the root's scatter (`MPI_Scatter`, non-root side).
    fn scatter_into<R: ?Sized + BufferMut>(&self, recvbuf: &mut R) {
        self.try_scatter_into(recvbuf).or_fatal()
    }
    /// [`scatter_into`](Self::scatter_into), reporting errors.
    fn try_scatter_into<R: ?Sized + BufferMut>(&self, recvbuf: &mut R) -> Result<()> {
        let comm = self.as_communicator().core_comm();
        if comm.rank() == self.root_rank() {
            return Err(not_root(
                "MPI_Scatter",
                "the root must call scatter_into_root",
            ));
        }
        let mut r = typed_out(recvbuf);
        do_scatter(comm, self.root_rank(), None, &mut r, Mode::Blocking)?;
        r.check_out("MPI_Scatter")
    }

    /// Sends part `i` of `sendbuf` (`sendbuf.count() / size` elements) to process `i`
    /// (`MPI_Scatter`, root side).
    fn scatter_into_root<S: ?Sized + Buffer, R: ?Sized + BufferMut>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
    ) {
        self.try_scatter_into_root(sendbuf, recvbuf).or_fatal()
    }
    /// [`scatter_into_root`](Self::scatter_into_root), reporting errors.
    fn try_scatter_into_root<S: ?Sized + Buffer, R: ?Sized + BufferMut>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
    ) -> Result<()> {
        let comm = self.as_communicator().core_comm();
        if comm.rank() != self.root_rank() {
            return Err(not_root(
                "MPI_Scatter",
                "scatter_into_root called by a process that is not the root",
            ));
        }
        let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
        do_scatter(comm, self.root_rank(), Some(&s), &mut r, Mode::Blocking)?;
        r.check_out("MPI_Scatter")
    }

    /// Receives this process's part of the root's varcount scatter (`MPI_Scatterv`,
    /// non-root side).
    fn scatter_varcount_into<R: ?Sized + BufferMut>(&self, recvbuf: &mut R) {
        self.try_scatter_varcount_into(recvbuf).or_fatal()
    }
    /// [`scatter_varcount_into`](Self::scatter_varcount_into), reporting errors.
    fn try_scatter_varcount_into<R: ?Sized + BufferMut>(&self, recvbuf: &mut R) -> Result<()> {
        let comm = self.as_communicator().core_comm();
        if comm.rank() == self.root_rank() {
            return Err(not_root(
                "MPI_Scatterv",
                "the root must call scatter_varcount_into_root",
            ));
        }
        let mut r = typed_out(recvbuf);
        do_scatterv(comm, self.root_rank(), None, &mut r, Mode::Blocking)?;
        r.check_out("MPI_Scatterv")
    }

    /// Sends the parts of `sendbuf` to the processes (`MPI_Scatterv`, root side).
    fn scatter_varcount_into_root<S: ?Sized + PartitionedBuffer, R: ?Sized + BufferMut>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
    ) {
        self.try_scatter_varcount_into_root(sendbuf, recvbuf)
            .or_fatal()
    }
    /// [`scatter_varcount_into_root`](Self::scatter_varcount_into_root), reporting errors.
    fn try_scatter_varcount_into_root<S: ?Sized + PartitionedBuffer, R: ?Sized + BufferMut>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
    ) -> Result<()> {
        const CALL: &str = "MPI_Scatterv";
        let comm = self.as_communicator().core_comm();
        if comm.rank() != self.root_rank() {
            return Err(not_root(
                CALL,
                "scatter_varcount_into_root called by a process that is not the root",
            ));
        }
        let (c, d) = parts(sendbuf, comm.size(), CALL, "sendbuf")?;
        let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
        do_scatterv(
            comm,
            self.root_rank(),
            Some((&s, &c, &d)),
            &mut r,
            Mode::Blocking,
        )?;
        r.check_out(CALL)
    }

    /// Contributes `sendbuf` to the root's reduction (`MPI_Reduce`, non-root side).
    fn reduce_into<S: ?Sized + Buffer, O: Operation>(&self, sendbuf: &S, op: O) {
        self.try_reduce_into(sendbuf, op).or_fatal()
    }
    /// [`reduce_into`](Self::reduce_into), reporting errors.
    fn try_reduce_into<S: ?Sized + Buffer, O: Operation>(&self, sendbuf: &S, op: O) -> Result<()> {
        let comm = self.as_communicator().core_comm();
        if comm.rank() == self.root_rank() {
            return Err(not_root(
                "MPI_Reduce",
                "the root must call reduce_into_root",
            ));
        }
        do_reduce(
            comm,
            self.root_rank(),
            &typed_in(sendbuf),
            None,
            &op.as_core_op(),
            Mode::Blocking,
        )
        .map(|_| ())
    }

    /// Reduces every process's `sendbuf` with `op` into `recvbuf` (`MPI_Reduce`, root side).
    fn reduce_into_root<S: ?Sized + Buffer, R: ?Sized + BufferMut, O: Operation>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
        op: O,
    ) {
        self.try_reduce_into_root(sendbuf, recvbuf, op).or_fatal()
    }
    /// [`reduce_into_root`](Self::reduce_into_root), reporting errors.
    fn try_reduce_into_root<S: ?Sized + Buffer, R: ?Sized + BufferMut, O: Operation>(
        &self,
        sendbuf: &S,
        recvbuf: &mut R,
        op: O,
    ) -> Result<()> {
        let comm = self.as_communicator().core_comm();
        if comm.rank() != self.root_rank() {
            return Err(not_root(
                "MPI_Reduce",
                "reduce_into_root called by a process that is not the root",
            ));
        }
        let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
        do_reduce(
            comm,
            self.root_rank(),
            &s,
            Some(&mut r),
            &op.as_core_op(),
            Mode::Blocking,
        )?;
        r.check_out("MPI_Reduce")
    }

    /// Starts a [`broadcast_into`](Self::broadcast_into) (`MPI_Ibcast`).
    fn immediate_broadcast_into<'a, Sc, Buf: ?Sized>(
        &self,
        scope: Sc,
        buf: &'a mut Buf,
    ) -> Request<'a, Buf, Sc, SafetyOf<Self::Out>>
    where
        Buf: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_immediate_broadcast_into(scope, buf).or_fatal()
    }
    /// [`immediate_broadcast_into`](Self::immediate_broadcast_into), reporting errors.
    fn try_immediate_broadcast_into<'a, Sc, Buf: ?Sized>(
        &self,
        scope: Sc,
        buf: &'a mut Buf,
    ) -> Result<Request<'a, Buf, Sc, SafetyOf<Self::Out>>>
    where
        Buf: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        immediate_mut(buf, "MPI_Ibcast", scope, |w, buf| {
            let mut b = typed_out(buf);
            let out = b.target();
            started(
                do_bcast(
                    self.as_communicator().core_comm(),
                    self.root_rank(),
                    &mut b,
                    Mode::Immediate(w),
                ),
                out,
            )
        })
    }

    /// A persistent [`broadcast_into`](Self::broadcast_into) (`MPI_Bcast_init`): between
    /// runs the root puts the next value in through
    /// [`data_mut`](PersistentRequest::data_mut).
    fn broadcast_init<'a, Sc, Buf: ?Sized>(
        &self,
        scope: Sc,
        buf: &'a mut Buf,
    ) -> PersistentRequest<'a, Buf, Sc, SafetyOf<Self::Out>>
    where
        Buf: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_broadcast_init(scope, buf).or_fatal()
    }
    /// [`broadcast_init`](Self::broadcast_init), reporting errors.
    fn try_broadcast_init<'a, Sc, Buf: ?Sized>(
        &self,
        scope: Sc,
        buf: &'a mut Buf,
    ) -> Result<PersistentRequest<'a, Buf, Sc, SafetyOf<Self::Out>>>
    where
        Buf: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        let (comm, root) = (self.as_communicator().core_comm(), self.root_rank());
        persistent_mut(buf, "MPI_Bcast_init", scope, |w, buf| {
            let mut b = typed_out(buf);
            let out = b.target();
            started(do_bcast(comm, root, &mut b, Mode::Persistent(w)), out)
        })
    }

    /// Starts a [`gather_into`](Self::gather_into) (`MPI_Igather`).
    fn immediate_gather_into<'a, Sc, S: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
    ) -> Request<'a, S, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer,
        Sc: Scope<'a>,
    {
        self.try_immediate_gather_into(scope, sendbuf).or_fatal()
    }
    /// [`immediate_gather_into`](Self::immediate_gather_into), reporting errors.
    fn try_immediate_gather_into<'a, Sc, S: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
    ) -> Result<Request<'a, S, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer,
        Sc: Scope<'a>,
    {
        let comm = self.as_communicator().core_comm();
        if comm.rank() == self.root_rank() {
            return Err(not_root(
                "MPI_Igather",
                "the root must call immediate_gather_into_root",
            ));
        }
        immediate_ref(sendbuf, "MPI_Igather", scope, |w| {
            let out = None;
            started(
                do_gather(
                    comm,
                    self.root_rank(),
                    &typed_in(sendbuf),
                    None,
                    Mode::Immediate(w),
                ),
                out,
            )
            .map(|x| x.0)
        })
    }

    /// Starts a [`gather_into_root`](Self::gather_into_root) (`MPI_Igather`).
    fn immediate_gather_into_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Request<'a, R, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer,
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_immediate_gather_into_root(scope, sendbuf, recvbuf)
            .or_fatal()
    }
    /// [`immediate_gather_into_root`](Self::immediate_gather_into_root), reporting errors.
    fn try_immediate_gather_into_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Result<Request<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer,
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        let comm = self.as_communicator().core_comm();
        if comm.rank() != self.root_rank() {
            return Err(not_root(
                "MPI_Igather",
                "immediate_gather_into_root called by a process that is not the root",
            ));
        }
        immediate_mut(recvbuf, "MPI_Igather", scope, |w, recvbuf| {
            let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
            let out = r.target();
            started(
                do_gather(comm, self.root_rank(), &s, Some(&mut r), Mode::Immediate(w)),
                out,
            )
        })
    }

    /// Starts a [`gather_varcount_into`](Self::gather_varcount_into) (`MPI_Igatherv`).
    fn immediate_gather_varcount_into<'a, Sc, S: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
    ) -> Request<'a, S, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer,
        Sc: Scope<'a>,
    {
        self.try_immediate_gather_varcount_into(scope, sendbuf)
            .or_fatal()
    }
    /// [`immediate_gather_varcount_into`](Self::immediate_gather_varcount_into), reporting errors.
    fn try_immediate_gather_varcount_into<'a, Sc, S: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
    ) -> Result<Request<'a, S, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer,
        Sc: Scope<'a>,
    {
        let comm = self.as_communicator().core_comm();
        if comm.rank() == self.root_rank() {
            return Err(not_root(
                "MPI_Igatherv",
                "the root must call immediate_gather_varcount_into_root",
            ));
        }
        immediate_ref(sendbuf, "MPI_Igatherv", scope, |w| {
            let out = None;
            started(
                do_gatherv(
                    comm,
                    self.root_rank(),
                    &typed_in(sendbuf),
                    None,
                    Mode::Immediate(w),
                ),
                out,
            )
            .map(|x| x.0)
        })
    }

    /// Starts a [`gather_varcount_into_root`](Self::gather_varcount_into_root) (`MPI_Igatherv`).
    fn immediate_gather_varcount_into_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Request<'a, R, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer,
        R: 'a + PartitionedBufferMut,
        Sc: Scope<'a>,
    {
        self.try_immediate_gather_varcount_into_root(scope, sendbuf, recvbuf)
            .or_fatal()
    }
    /// [`immediate_gather_varcount_into_root`](Self::immediate_gather_varcount_into_root), reporting errors.
    fn try_immediate_gather_varcount_into_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Result<Request<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer,
        R: 'a + PartitionedBufferMut,
        Sc: Scope<'a>,
    {
        const CALL: &str = "MPI_Igatherv";
        let comm = self.as_communicator().core_comm();
        if comm.rank() != self.root_rank() {
            return Err(not_root(
                CALL,
                "immediate_gather_varcount_into_root called by a process that is not the root",
            ));
        }
        let (c, d) = parts(recvbuf, comm.size(), CALL, "recvbuf")?;
        disjoint(&c, &d, CALL, "recvbuf")?;
        immediate_mut(recvbuf, CALL, scope, |w, recvbuf| {
            let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
            let out = r.target();
            started(
                do_gatherv(
                    comm,
                    self.root_rank(),
                    &s,
                    Some((&mut r, &c, &d)),
                    Mode::Immediate(w),
                ),
                out,
            )
        })
    }

    /// Starts a [`scatter_into`](Self::scatter_into) (`MPI_Iscatter`).
    fn immediate_scatter_into<'a, Sc, R: ?Sized>(
        &self,
        scope: Sc,
        recvbuf: &'a mut R,
    ) -> Request<'a, R, Sc, SafetyOf<Self::Out>>
    where
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_immediate_scatter_into(scope, recvbuf).or_fatal()
    }
    /// [`immediate_scatter_into`](Self::immediate_scatter_into), reporting errors.
    fn try_immediate_scatter_into<'a, Sc, R: ?Sized>(
        &self,
        scope: Sc,
        recvbuf: &'a mut R,
    ) -> Result<Request<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        let comm = self.as_communicator().core_comm();
        if comm.rank() == self.root_rank() {
            return Err(not_root(
                "MPI_Iscatter",
                "the root must call immediate_scatter_into_root",
            ));
        }
        immediate_mut(recvbuf, "MPI_Iscatter", scope, |w, recvbuf| {
            let mut r = typed_out(recvbuf);
            let out = r.target();
            started(
                do_scatter(comm, self.root_rank(), None, &mut r, Mode::Immediate(w)),
                out,
            )
        })
    }

    /// Starts a [`scatter_into_root`](Self::scatter_into_root) (`MPI_Iscatter`).
    fn immediate_scatter_into_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Request<'a, R, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer,
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_immediate_scatter_into_root(scope, sendbuf, recvbuf)
            .or_fatal()
    }
    /// [`immediate_scatter_into_root`](Self::immediate_scatter_into_root), reporting errors.
    fn try_immediate_scatter_into_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Result<Request<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer,
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        let comm = self.as_communicator().core_comm();
        if comm.rank() != self.root_rank() {
            return Err(not_root(
                "MPI_Iscatter",
                "immediate_scatter_into_root called by a process that is not the root",
            ));
        }
        immediate_mut(recvbuf, "MPI_Iscatter", scope, |w, recvbuf| {
            let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
            let out = r.target();
            started(
                do_scatter(comm, self.root_rank(), Some(&s), &mut r, Mode::Immediate(w)),
                out,
            )
        })
    }

    /// Starts a [`scatter_varcount_into`](Self::scatter_varcount_into) (`MPI_Iscatterv`).
    fn immediate_scatter_varcount_into<'a, Sc, R: ?Sized>(
        &self,
        scope: Sc,
        recvbuf: &'a mut R,
    ) -> Request<'a, R, Sc, SafetyOf<Self::Out>>
    where
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_immediate_scatter_varcount_into(scope, recvbuf)
            .or_fatal()
    }
    /// [`immediate_scatter_varcount_into`](Self::immediate_scatter_varcount_into), reporting errors.
    fn try_immediate_scatter_varcount_into<'a, Sc, R: ?Sized>(
        &self,
        scope: Sc,
        recvbuf: &'a mut R,
    ) -> Result<Request<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        let comm = self.as_communicator().core_comm();
        if comm.rank() == self.root_rank() {
            return Err(not_root(
                "MPI_Iscatterv",
                "the root must call immediate_scatter_varcount_into_root",
            ));
        }
        immediate_mut(recvbuf, "MPI_Iscatterv", scope, |w, recvbuf| {
            let mut r = typed_out(recvbuf);
            let out = r.target();
            started(
                do_scatterv(comm, self.root_rank(), None, &mut r, Mode::Immediate(w)),
                out,
            )
        })
    }

    /// Starts a [`scatter_varcount_into_root`](Self::scatter_varcount_into_root) (`MPI_Iscatterv`).
    fn immediate_scatter_varcount_into_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Request<'a, R, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + PartitionedBuffer,
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_immediate_scatter_varcount_into_root(scope, sendbuf, recvbuf)
            .or_fatal()
    }
    /// [`immediate_scatter_varcount_into_root`](Self::immediate_scatter_varcount_into_root), reporting errors.
    fn try_immediate_scatter_varcount_into_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Result<Request<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + PartitionedBuffer,
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        const CALL: &str = "MPI_Iscatterv";
        let comm = self.as_communicator().core_comm();
        if comm.rank() != self.root_rank() {
            return Err(not_root(
                CALL,
                "immediate_scatter_varcount_into_root called by a process that is not the root",
            ));
        }
        let (c, d) = parts(sendbuf, comm.size(), CALL, "sendbuf")?;
        immediate_mut(recvbuf, CALL, scope, |w, recvbuf| {
            let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
            let out = r.target();
            started(
                do_scatterv(
                    comm,
                    self.root_rank(),
                    Some((&s, &c, &d)),
                    &mut r,
                    Mode::Immediate(w),
                ),
                out,
            )
        })
    }

    /// Starts a [`reduce_into`](Self::reduce_into) (`MPI_Ireduce`).
    fn immediate_reduce_into<'a, Sc, S: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        op: O,
    ) -> Request<'a, S, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        self.try_immediate_reduce_into(scope, sendbuf, op)
            .or_fatal()
    }
    /// [`immediate_reduce_into`](Self::immediate_reduce_into), reporting errors.
    fn try_immediate_reduce_into<'a, Sc, S: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        op: O,
    ) -> Result<Request<'a, S, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        let comm = self.as_communicator().core_comm();
        if comm.rank() == self.root_rank() {
            return Err(not_root(
                "MPI_Ireduce",
                "the root must call immediate_reduce_into_root",
            ));
        }
        let mut req = immediate_ref(sendbuf, "MPI_Ireduce", scope, |w| {
            let out = None;
            started(
                do_reduce(
                    comm,
                    self.root_rank(),
                    &typed_in(sendbuf),
                    None,
                    &op.as_core_op(),
                    Mode::Immediate(w),
                ),
                out,
            )
            .map(|x| x.0)
        })?;
        // A user operation runs until the request completes: the request keeps it.
        req.keep = Some(Box::new(op));
        Ok(req)
    }

    /// Starts a [`reduce_into_root`](Self::reduce_into_root) (`MPI_Ireduce`).
    fn immediate_reduce_into_root<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Request<'a, R, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        self.try_immediate_reduce_into_root(scope, sendbuf, recvbuf, op)
            .or_fatal()
    }
    /// [`immediate_reduce_into_root`](Self::immediate_reduce_into_root), reporting errors.
    fn try_immediate_reduce_into_root<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<Request<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        let comm = self.as_communicator().core_comm();
        if comm.rank() != self.root_rank() {
            return Err(not_root(
                "MPI_Ireduce",
                "immediate_reduce_into_root called by a process that is not the root",
            ));
        }
        let mut req = immediate_mut(recvbuf, "MPI_Ireduce", scope, |w, recvbuf| {
            let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
            let out = r.target();
            started(
                do_reduce(
                    comm,
                    self.root_rank(),
                    &s,
                    Some(&mut r),
                    &op.as_core_op(),
                    Mode::Immediate(w),
                ),
                out,
            )
        })?;
        // A user operation runs until the request completes: the request keeps it.
        req.keep = Some(Box::new(op));
        Ok(req)
    }
    /// A persistent [`gather_into`](Self::gather_into) (`MPI_Gather_init`, non-root
    /// side). The request holds `sendbuf`: between runs,
    /// [`data_mut`](PersistentRequest::data_mut) puts the next contribution there.
    ///
    /// ```
    /// use oxmpi::traits::*;
    /// use oxmpi::request::scope;
    /// let universe = oxmpi::initialize().unwrap();
    /// let world = universe.world();
    /// let (me, n) = (world.rank(), world.size() as usize);
    /// let root = world.process_at_rank(0);
    /// let mut mine = [0i32];
    /// let mut all = vec![0i32; n];
    /// scope(|s| {
    ///     if me == 0 {
    ///         let mut r = root.gather_init_root(s, &mine, &mut all);
    ///         for _ in 0..3 {
    ///             r.start();
    ///             r.wait();
    ///         }
    ///     } else {
    ///         let mut r = root.gather_init(s, &mut mine);
    ///         for run in 0..3 {
    ///             r.data_mut().unwrap()[0] = run * me;
    ///             r.start();
    ///             r.wait();
    ///         }
    ///     }
    /// });
    /// if me == 0 {
    ///     assert!(all.iter().enumerate().all(|(i, &v)| v == 2 * i as i32));
    /// }
    /// ```
    fn gather_init<'a, Sc, S: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a mut S,
    ) -> PersistentRequest<'a, S, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_gather_init(scope, sendbuf).or_fatal()
    }
    /// [`gather_init`](Self::gather_init), reporting errors.
    fn try_gather_init<'a, Sc, S: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a mut S,
    ) -> Result<PersistentRequest<'a, S, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer + BufferMut,
        Sc: Scope<'a>,
    {
        const CALL: &str = "MPI_Gather_init";
        let (comm, root) = (self.as_communicator().core_comm(), self.root_rank());
        if comm.rank() == root {
            return Err(not_root(CALL, "the root must call gather_init_root"));
        }
        persistent_mut(sendbuf, CALL, scope, |w, sendbuf| {
            let sendbuf: &S = sendbuf;
            let s = typed_in(sendbuf);
            started(do_gather(comm, root, &s, None, Mode::Persistent(w)), None)
        })
    }

    /// A persistent [`gather_into_root`](Self::gather_into_root) (`MPI_Gather_init`,
    /// root side); [`data`](PersistentRequest::data) reads `recvbuf` between runs.
    fn gather_init_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer,
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_gather_init_root(scope, sendbuf, recvbuf)
            .or_fatal()
    }
    /// [`gather_init_root`](Self::gather_init_root), reporting errors.
    fn try_gather_init_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Result<PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer,
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        const CALL: &str = "MPI_Gather_init";
        let (comm, root) = (self.as_communicator().core_comm(), self.root_rank());
        if comm.rank() != root {
            return Err(not_root(
                CALL,
                "gather_init_root called by a process that is not the root",
            ));
        }
        persistent_mut(recvbuf, CALL, scope, |w, recvbuf| {
            let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
            let out = r.target();
            started(
                do_gather(comm, root, &s, Some(&mut r), Mode::Persistent(w)),
                out,
            )
        })
    }

    /// A persistent [`gather_varcount_into`](Self::gather_varcount_into)
    /// (`MPI_Gatherv_init`, non-root side); the request holds `sendbuf`, refilled
    /// between runs through [`data_mut`](PersistentRequest::data_mut).
    fn gather_varcount_init<'a, Sc, S: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a mut S,
    ) -> PersistentRequest<'a, S, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_gather_varcount_init(scope, sendbuf).or_fatal()
    }
    /// [`gather_varcount_init`](Self::gather_varcount_init), reporting errors.
    fn try_gather_varcount_init<'a, Sc, S: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a mut S,
    ) -> Result<PersistentRequest<'a, S, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer + BufferMut,
        Sc: Scope<'a>,
    {
        const CALL: &str = "MPI_Gatherv_init";
        let (comm, root) = (self.as_communicator().core_comm(), self.root_rank());
        if comm.rank() == root {
            return Err(not_root(
                CALL,
                "the root must call gather_varcount_init_root",
            ));
        }
        persistent_mut(sendbuf, CALL, scope, |w, sendbuf| {
            let sendbuf: &S = sendbuf;
            let s = typed_in(sendbuf);
            started(do_gatherv(comm, root, &s, None, Mode::Persistent(w)), None)
        })
    }

    /// A persistent [`gather_varcount_into_root`](Self::gather_varcount_into_root)
    /// (`MPI_Gatherv_init`, root side): the partition is read once, here.
    fn gather_varcount_init_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer,
        R: 'a + PartitionedBufferMut,
        Sc: Scope<'a>,
    {
        self.try_gather_varcount_init_root(scope, sendbuf, recvbuf)
            .or_fatal()
    }
    /// [`gather_varcount_init_root`](Self::gather_varcount_init_root), reporting errors.
    fn try_gather_varcount_init_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Result<PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer,
        R: 'a + PartitionedBufferMut,
        Sc: Scope<'a>,
    {
        const CALL: &str = "MPI_Gatherv_init";
        let (comm, root) = (self.as_communicator().core_comm(), self.root_rank());
        if comm.rank() != root {
            return Err(not_root(
                CALL,
                "gather_varcount_init_root called by a process that is not the root",
            ));
        }
        let (c, d) = parts(recvbuf, comm.size(), CALL, "recvbuf")?;
        disjoint(&c, &d, CALL, "recvbuf")?;
        persistent_mut(recvbuf, CALL, scope, |w, recvbuf| {
            let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
            let out = r.target();
            started(
                do_gatherv(comm, root, &s, Some((&mut r, &c, &d)), Mode::Persistent(w)),
                out,
            )
        })
    }

    /// A persistent [`scatter_into`](Self::scatter_into) (`MPI_Scatter_init`,
    /// non-root side); [`data`](PersistentRequest::data) reads `recvbuf` between runs.
    fn scatter_init<'a, Sc, R: ?Sized>(
        &self,
        scope: Sc,
        recvbuf: &'a mut R,
    ) -> PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>
    where
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_scatter_init(scope, recvbuf).or_fatal()
    }
    /// [`scatter_init`](Self::scatter_init), reporting errors.
    fn try_scatter_init<'a, Sc, R: ?Sized>(
        &self,
        scope: Sc,
        recvbuf: &'a mut R,
    ) -> Result<PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        const CALL: &str = "MPI_Scatter_init";
        let (comm, root) = (self.as_communicator().core_comm(), self.root_rank());
        if comm.rank() == root {
            return Err(not_root(CALL, "the root must call scatter_init_root"));
        }
        persistent_mut(recvbuf, CALL, scope, |w, recvbuf| {
            let mut r = typed_out(recvbuf);
            let out = r.target();
            started(
                do_scatter(comm, root, None, &mut r, Mode::Persistent(w)),
                out,
            )
        })
    }

    /// A persistent [`scatter_into_root`](Self::scatter_into_root)
    /// (`MPI_Scatter_init`, root side).
    fn scatter_init_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer,
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_scatter_init_root(scope, sendbuf, recvbuf)
            .or_fatal()
    }
    /// [`scatter_init_root`](Self::scatter_init_root), reporting errors.
    fn try_scatter_init_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Result<PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer,
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        const CALL: &str = "MPI_Scatter_init";
        let (comm, root) = (self.as_communicator().core_comm(), self.root_rank());
        if comm.rank() != root {
            return Err(not_root(
                CALL,
                "scatter_init_root called by a process that is not the root",
            ));
        }
        persistent_mut(recvbuf, CALL, scope, |w, recvbuf| {
            let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
            let out = r.target();
            started(
                do_scatter(comm, root, Some(&s), &mut r, Mode::Persistent(w)),
                out,
            )
        })
    }

    /// A persistent [`scatter_varcount_into`](Self::scatter_varcount_into)
    /// (`MPI_Scatterv_init`, non-root side).
    fn scatter_varcount_init<'a, Sc, R: ?Sized>(
        &self,
        scope: Sc,
        recvbuf: &'a mut R,
    ) -> PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>
    where
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_scatter_varcount_init(scope, recvbuf).or_fatal()
    }
    /// [`scatter_varcount_init`](Self::scatter_varcount_init), reporting errors.
    fn try_scatter_varcount_init<'a, Sc, R: ?Sized>(
        &self,
        scope: Sc,
        recvbuf: &'a mut R,
    ) -> Result<PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        const CALL: &str = "MPI_Scatterv_init";
        let (comm, root) = (self.as_communicator().core_comm(), self.root_rank());
        if comm.rank() == root {
            return Err(not_root(
                CALL,
                "the root must call scatter_varcount_init_root",
            ));
        }
        persistent_mut(recvbuf, CALL, scope, |w, recvbuf| {
            let mut r = typed_out(recvbuf);
            let out = r.target();
            started(
                do_scatterv(comm, root, None, &mut r, Mode::Persistent(w)),
                out,
            )
        })
    }

    /// A persistent [`scatter_varcount_into_root`](Self::scatter_varcount_into_root)
    /// (`MPI_Scatterv_init`, root side): the partition is read once, here.
    fn scatter_varcount_init_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + PartitionedBuffer,
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        self.try_scatter_varcount_init_root(scope, sendbuf, recvbuf)
            .or_fatal()
    }
    /// [`scatter_varcount_init_root`](Self::scatter_varcount_init_root), reporting errors.
    fn try_scatter_varcount_init_root<'a, Sc, S: ?Sized, R: ?Sized>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Result<PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + PartitionedBuffer,
        R: 'a + BufferMut,
        Sc: Scope<'a>,
    {
        const CALL: &str = "MPI_Scatterv_init";
        let (comm, root) = (self.as_communicator().core_comm(), self.root_rank());
        if comm.rank() != root {
            return Err(not_root(
                CALL,
                "scatter_varcount_init_root called by a process that is not the root",
            ));
        }
        let (c, d) = parts(sendbuf, comm.size(), CALL, "sendbuf")?;
        persistent_mut(recvbuf, CALL, scope, |w, recvbuf| {
            let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
            let out = r.target();
            started(
                do_scatterv(comm, root, Some((&s, &c, &d)), &mut r, Mode::Persistent(w)),
                out,
            )
        })
    }

    /// A persistent [`reduce_into`](Self::reduce_into) (`MPI_Reduce_init`, non-root
    /// side). The request holds `sendbuf`, refilled between runs through
    /// [`data_mut`](PersistentRequest::data_mut), and keeps `op` until it is freed.
    fn reduce_init<'a, Sc, S: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a mut S,
        op: O,
    ) -> PersistentRequest<'a, S, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        self.try_reduce_init(scope, sendbuf, op).or_fatal()
    }
    /// [`reduce_init`](Self::reduce_init), reporting errors.
    fn try_reduce_init<'a, Sc, S: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a mut S,
        op: O,
    ) -> Result<PersistentRequest<'a, S, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        const CALL: &str = "MPI_Reduce_init";
        let (comm, root) = (self.as_communicator().core_comm(), self.root_rank());
        if comm.rank() == root {
            return Err(not_root(CALL, "the root must call reduce_init_root"));
        }
        let core_op = op.as_core_op();
        let mut req = persistent_mut(sendbuf, CALL, scope, |w, sendbuf| {
            let sendbuf: &S = sendbuf;
            let s = typed_in(sendbuf);
            started(
                do_reduce(comm, root, &s, None, &core_op, Mode::Persistent(w)),
                None,
            )
        })?;
        req.keep = Some(Box::new(op));
        Ok(req)
    }

    /// A persistent [`reduce_into_root`](Self::reduce_into_root) (`MPI_Reduce_init`,
    /// root side); the request keeps `op` until it is freed.
    fn reduce_init_root<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>
    where
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        self.try_reduce_init_root(scope, sendbuf, recvbuf, op)
            .or_fatal()
    }
    /// [`reduce_init_root`](Self::reduce_init_root), reporting errors.
    fn try_reduce_init_root<'a, Sc, S: ?Sized, R: ?Sized, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<PersistentRequest<'a, R, Sc, SafetyOf<Self::Out>>>
    where
        S: 'a + Buffer,
        R: 'a + BufferMut,
        O: 'a + Operation,
        Sc: Scope<'a>,
    {
        const CALL: &str = "MPI_Reduce_init";
        let (comm, root) = (self.as_communicator().core_comm(), self.root_rank());
        if comm.rank() != root {
            return Err(not_root(
                CALL,
                "reduce_init_root called by a process that is not the root",
            ));
        }
        let core_op = op.as_core_op();
        let mut req = persistent_mut(recvbuf, CALL, scope, |w, recvbuf| {
            let (s, mut r) = (typed_in(sendbuf), typed_out(recvbuf));
            let out = r.target();
            started(
                do_reduce(comm, root, &s, Some(&mut r), &core_op, Mode::Persistent(w)),
                out,
            )
        })?;
        req.keep = Some(Box::new(op));
        Ok(req)
    }
}

impl<S: ThreadSafety> Root for Process<'_, S> {
    fn root_rank(&self) -> Rank {
        self.rank()
    }
}
