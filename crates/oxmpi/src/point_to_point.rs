//! Point-to-point communication.
//!
//! Operations are methods of the [`Source`] trait (receives and probes, implemented by
//! [`Process`] and [`AnyProcess`]) and the [`Destination`] trait (sends, implemented by
//! [`Process`]). Methods without a tag use tag 0 for sends and any tag for receives.
//!
//! ```no_run
//! use oxmpi::traits::*;
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! if world.rank() == 0 {
//!     world.process_at_rank(1).send_with_tag(&[1u8, 2, 3][..], 7);
//! } else if world.rank() == 1 {
//!     let mut buf = [0u8; 3];
//!     let status = world.any_process().receive_into_with_tag(&mut buf, 7);
//!     assert_eq!((status.source_rank(), status.tag()), (0, 7));
//!     assert_eq!(status.count(u8::equivalent_datatype()), 3);
//! }
//! ```
//!
//! Every fallible method `foo` has a `try_foo` twin returning [`crate::Result`].
#![deny(unsafe_code)]

use std::fmt;

use oxmpi_core::pt2pt;
use oxmpi_core::{Comm, SendMode, ANY_SOURCE};

use crate::datatype::Slots;
use crate::datatype::{
    recv_spec, send_spec, typed_in, typed_out, Buffer, BufferMut, Datatype, Equivalence, RecvBytes,
    RecvSpec, SendSpec, Typed, TypedMut,
};
use crate::environment::threading::{SafetyOf, ThreadSafety};
use crate::error::{Error, ErrorClass, OrFatal, Result};
use crate::request::{immediate_bytes, immediate_mut, immediate_ref, Request, Scope};
use crate::topology::{AnyProcess, AsCommunicator, Communicator, Process, Rank};
use crate::{Count, Tag, ANY_TAG, UNDEFINED};
use oxmpi_core::buf::LentBox;

/// The point-to-point traits, re-exported by [`crate::traits`].
pub mod traits {
    pub use super::{Destination, MatchedReceiveVec, Source};
}

// ----- Status ----------------------------------------------------------------------

/// What a receive or probe reports about a message (`MPI_Status`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Status(oxmpi_core::Status);

impl Status {
    pub(crate) fn from_core(s: oxmpi_core::Status) -> Status {
        Status(s)
    }

    /// The engine's status.
    pub fn as_core(&self) -> &oxmpi_core::Status {
        &self.0
    }

    /// The rank of the message's sender.
    pub fn source_rank(&self) -> Rank {
        self.0.source
    }

    /// The message's tag.
    pub fn tag(&self) -> Tag {
        self.0.tag
    }

    /// Number of elements of datatype `d` in the message (`MPI_Get_count`):
    /// [`UNDEFINED`] if it is not a whole number of them.
    pub fn count<D: Datatype>(&self, d: D) -> Count {
        let size = d.as_datatype_ref().size();
        let bytes = self.0.count_bytes;
        if size == 0 {
            return if bytes == 0 { 0 } else { UNDEFINED };
        }
        let rem = bytes % size;
        if rem != 0 {
            return UNDEFINED;
        }
        Count::try_from(bytes / size).unwrap_or(UNDEFINED)
    }

    /// Bytes in the message.
    pub fn byte_count(&self) -> usize {
        self.0.count_bytes
    }

    /// Whether the operation was cancelled (`MPI_Test_cancelled`).
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled
    }
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Status")
            .field("source", &self.0.source)
            .field("tag", &self.0.tag)
            .field("bytes", &self.0.count_bytes)
            .field("cancelled", &self.0.cancelled)
            .finish()
    }
}

// ----- helpers -----------------------------------------------------------------------

fn send_mode<B: Buffer + ?Sized>(
    comm: &Comm,
    dest: Rank,
    buf: &B,
    tag: Tag,
    mode: SendMode,
) -> Result<()> {
    let call = pt2pt::send_call_name(mode, false);
    match send_spec(buf, call)? {
        SendSpec::Bytes(b) => pt2pt::send(comm, b, dest, tag, mode),
        SendSpec::Typed(t) => pt2pt::send_typed(comm, t.desc(), dest, tag, mode),
    }
}

// Forced inline with the immediate calls around it: see `RequestCollection::add`.
#[inline(always)]
fn isend_mode<'a, Sc, B, T: ThreadSafety>(
    comm: &Comm,
    dest: Rank,
    scope: Sc,
    buf: &'a B,
    tag: Tag,
    mode: SendMode,
) -> Result<Request<'a, B, Sc, T>>
where
    B: 'a + Buffer + ?Sized,
    Sc: Scope<'a>,
{
    let call = pt2pt::send_call_name(mode, true);
    match send_spec(buf, call)? {
        // Contiguous bytes borrowed for 'a: core's lean entry hands the request to the
        // scope itself (PROFILE.md, rrate28).
        SendSpec::Bytes(bytes) => immediate_bytes(buf, bytes, call, scope, |keeper, bytes| {
            pt2pt::isend_bytes(keeper, comm, bytes, dest, tag, mode)
        }),
        SendSpec::Typed(t) => immediate_ref(buf, call, scope, move |w| {
            pt2pt::isend(w, comm, t.lend(w), dest, tag, mode)
        }),
    }
}

/// Receives into a target; checks the received elements (also after an error, as the
/// buffer may be partly written).
fn recv_into_target(
    mut t: RecvBytes<'_>,
    call: &str,
    f: impl FnOnce(&mut [u8]) -> Result<oxmpi_core::Status>,
) -> Result<Status> {
    match f(t.bytes()) {
        Ok(st) => {
            t.check(st.count_bytes, call)?;
            Ok(Status(st))
        }
        Err(e) => {
            let _ = t.check(usize::MAX, call);
            Err(e)
        }
    }
}

/// Where a receive operation writes, as its closure gets it.
enum Into<'b, 'c> {
    /// A contiguous datatype: its bytes.
    Bytes(&'b mut [u8]),
    /// Any other datatype: the engine unpacks `count` elements of `dt` at `ptr`
    /// (memory exclusively borrowed for the whole call).
    Typed(&'b mut TypedMut<'c>),
}

/// Runs a blocking receive `f` into `spec` and checks what it wrote.
fn receive_spec(
    spec: RecvSpec<'_>,
    call: &str,
    f: impl FnOnce(Into<'_, '_>) -> Result<oxmpi_core::Status>,
) -> Result<Status> {
    match spec {
        RecvSpec::Bytes(t) => recv_into_target(t, call, |b| f(Into::Bytes(b))),
        RecvSpec::Typed(mut t) => {
            let st = f(Into::Typed(&mut t))?;
            t.check_received(st.count_bytes, call)?;
            Ok(Status(st))
        }
    }
}

/// `MPI_Recv` into either form.
fn recv_op(
    comm: &Comm,
    src: Rank,
    tag: Tag,
) -> impl FnOnce(Into<'_, '_>) -> Result<oxmpi_core::Status> + '_ {
    move |into| match into {
        Into::Bytes(b) => pt2pt::recv(comm, b, src, tag),
        Into::Typed(t) => pt2pt::recv_typed(comm, t.desc_mut(), src, tag),
    }
}

/// `MPI_Mrecv` into either form.
fn mrecv_op(
    m: &mut oxmpi_core::Message,
) -> impl FnOnce(Into<'_, '_>) -> Result<oxmpi_core::Status> + '_ {
    move |into| match into {
        Into::Bytes(b) => pt2pt::mrecv(b, m),
        Into::Typed(t) => oxmpi_core::buf::scope(|sc| {
            let mut r = pt2pt::imrecv(sc, t.desc_mut(), m)?;
            pt2pt::wait(&mut r).map_err(|e| renamed(e, "MPI_Imrecv", "MPI_Mrecv"))
        }),
    }
}

/// The error of an engine call made on behalf of another one, named as the latter.
fn renamed(mut e: Error, from: &str, to: &str) -> Error {
    if let Some(rest) = e.message.strip_prefix(from) {
        e.message = format!("{to}{rest}");
    }
    e
}

fn recv_into<B: BufferMut + ?Sized>(
    comm: &Comm,
    src: Rank,
    buf: &mut B,
    tag: Tag,
) -> Result<Status> {
    let spec = recv_spec(buf, "MPI_Recv")?;
    receive_spec(spec, "MPI_Recv", recv_op(comm, src, tag))
}

/// Receives exactly one `Msg` through `f`.
fn recv_value<Msg: Equivalence>(
    call: &str,
    f: impl FnOnce(Into<'_, '_>) -> Result<oxmpi_core::Status>,
) -> Result<(Msg, Status)> {
    let mut v = Slots::<Msg>::new(1);
    let spec = v.spec(call)?;
    let st = receive_spec(spec, call, f)?;
    value_received::<Msg>(v, st, call)
}

/// The value a receive of one `Msg` wrote, if it wrote a whole one.
fn value_received<Msg: Equivalence>(
    v: Slots<Msg>,
    st: Status,
    call: &str,
) -> Result<(Msg, Status)> {
    let size = Msg::equivalent_datatype().as_datatype_ref().size();
    if st.0.count_bytes != size {
        return Err(Error::new(
            ErrorClass::Count,
            format!(
                "{call}: received {} bytes where one value of {size} bytes was expected",
                st.0.count_bytes
            ),
        ));
    }
    let v = v.into_values(st.0.count_bytes, Some(1), call)?;
    Ok((v.into_iter().next().expect("one value"), st))
}

/// A blocking send-receive of typed buffers (any datatypes), through the engine's
/// `MPI_Isendrecv`.
#[allow(clippy::too_many_arguments)]
fn sendrecv_typed(
    call: &'static str,
    comm: &Comm,
    s: &Typed<'_>,
    dest: Rank,
    sendtag: Tag,
    r: &mut TypedMut<'_>,
    source: Rank,
    recvtag: Tag,
) -> Result<Status> {
    let ren = |e| renamed(e, "MPI_Isendrecv", call);
    let st = oxmpi_core::buf::scope(|sc| {
        let mut req = pt2pt::isendrecv(
            sc,
            comm,
            s.desc(),
            dest,
            sendtag,
            r.desc_mut(),
            source,
            recvtag,
        )
        .map_err(ren)?;
        pt2pt::wait(&mut req).map_err(ren)
    })?;
    r.check_received(st.count_bytes, call)?;
    Ok(Status(st))
}

fn wrap_probe(p: (oxmpi_core::Message, oxmpi_core::Status)) -> (Message, Status) {
    (
        Message {
            raw: p.0,
            bytes: p.1.count_bytes,
        },
        Status(p.1),
    )
}

// ----- Source ------------------------------------------------------------------------

/// Something to receive from: a [`Process`], or [`AnyProcess`] (`MPI_ANY_SOURCE`).
pub trait Source: AsCommunicator {
    /// The rank to receive from (`MPI_ANY_SOURCE` for [`AnyProcess`]).
    fn source_rank(&self) -> Rank;

    /// Waits for a message with tag `tag` and describes it, without receiving it (`MPI_Probe`).
    fn probe_with_tag(&self, tag: Tag) -> Status {
        self.try_probe_with_tag(tag).or_fatal()
    }
    /// [`probe_with_tag`](Self::probe_with_tag), reporting errors.
    fn try_probe_with_tag(&self, tag: Tag) -> Result<Status> {
        pt2pt::probe(self.as_communicator().core_comm(), self.source_rank(), tag).map(Status)
    }
    /// Waits for a message with any tag (`MPI_Probe`).
    fn probe(&self) -> Status {
        self.probe_with_tag(ANY_TAG)
    }
    /// [`probe`](Self::probe), reporting errors.
    fn try_probe(&self) -> Result<Status> {
        self.try_probe_with_tag(ANY_TAG)
    }

    /// Describes a pending message with tag `tag`, if there is one (`MPI_Iprobe`).
    fn immediate_probe_with_tag(&self, tag: Tag) -> Option<Status> {
        self.try_immediate_probe_with_tag(tag).or_fatal()
    }
    /// [`immediate_probe_with_tag`](Self::immediate_probe_with_tag), reporting errors.
    fn try_immediate_probe_with_tag(&self, tag: Tag) -> Result<Option<Status>> {
        Ok(pt2pt::iprobe(self.as_communicator().core_comm(), self.source_rank(), tag)?.map(Status))
    }
    /// Describes a pending message with any tag, if there is one (`MPI_Iprobe`).
    fn immediate_probe(&self) -> Option<Status> {
        self.immediate_probe_with_tag(ANY_TAG)
    }
    /// [`immediate_probe`](Self::immediate_probe), reporting errors.
    fn try_immediate_probe(&self) -> Result<Option<Status>> {
        self.try_immediate_probe_with_tag(ANY_TAG)
    }

    /// Waits for a message with tag `tag` and takes it out of matching (`MPI_Mprobe`):
    /// only the returned [`Message`] can receive it, and must.
    fn matched_probe_with_tag(&self, tag: Tag) -> (Message, Status) {
        self.try_matched_probe_with_tag(tag).or_fatal()
    }
    /// [`matched_probe_with_tag`](Self::matched_probe_with_tag), reporting errors.
    fn try_matched_probe_with_tag(&self, tag: Tag) -> Result<(Message, Status)> {
        pt2pt::mprobe(self.as_communicator().core_comm(), self.source_rank(), tag).map(wrap_probe)
    }
    /// [`matched_probe_with_tag`](Self::matched_probe_with_tag) for any tag.
    fn matched_probe(&self) -> (Message, Status) {
        self.matched_probe_with_tag(ANY_TAG)
    }
    /// [`matched_probe`](Self::matched_probe), reporting errors.
    fn try_matched_probe(&self) -> Result<(Message, Status)> {
        self.try_matched_probe_with_tag(ANY_TAG)
    }

    /// Takes a pending message with tag `tag` out of matching, if there is one (`MPI_Improbe`).
    fn immediate_matched_probe_with_tag(&self, tag: Tag) -> Option<(Message, Status)> {
        self.try_immediate_matched_probe_with_tag(tag).or_fatal()
    }
    /// [`immediate_matched_probe_with_tag`](Self::immediate_matched_probe_with_tag), reporting errors.
    fn try_immediate_matched_probe_with_tag(&self, tag: Tag) -> Result<Option<(Message, Status)>> {
        Ok(
            pt2pt::improbe(self.as_communicator().core_comm(), self.source_rank(), tag)?
                .map(wrap_probe),
        )
    }
    /// [`immediate_matched_probe_with_tag`](Self::immediate_matched_probe_with_tag) for any tag.
    fn immediate_matched_probe(&self) -> Option<(Message, Status)> {
        self.immediate_matched_probe_with_tag(ANY_TAG)
    }
    /// [`immediate_matched_probe`](Self::immediate_matched_probe), reporting errors.
    fn try_immediate_matched_probe(&self) -> Result<Option<(Message, Status)>> {
        self.try_immediate_matched_probe_with_tag(ANY_TAG)
    }

    /// Receives one value of type `Msg` tagged `tag` (`MPI_Recv`).
    fn receive_with_tag<Msg: Equivalence>(&self, tag: Tag) -> (Msg, Status) {
        self.try_receive_with_tag(tag).or_fatal()
    }
    /// [`receive_with_tag`](Self::receive_with_tag), reporting errors.
    fn try_receive_with_tag<Msg: Equivalence>(&self, tag: Tag) -> Result<(Msg, Status)> {
        let comm = self.as_communicator().core_comm();
        recv_value("MPI_Recv", recv_op(comm, self.source_rank(), tag))
    }
    /// Receives one value of type `Msg` with any tag.
    ///
    /// ```no_run
    /// use oxmpi::traits::*;
    /// let universe = oxmpi::initialize().unwrap();
    /// let (x, status) = universe.world().any_process().receive::<f64>();
    /// ```
    fn receive<Msg: Equivalence>(&self) -> (Msg, Status) {
        self.receive_with_tag(ANY_TAG)
    }
    /// [`receive`](Self::receive), reporting errors.
    fn try_receive<Msg: Equivalence>(&self) -> Result<(Msg, Status)> {
        self.try_receive_with_tag(ANY_TAG)
    }

    /// Receives a message tagged `tag` into `buf` (`MPI_Recv`). A longer message is an
    /// error of class [`ErrorClass::Truncate`].
    fn receive_into_with_tag<Buf: BufferMut + ?Sized>(&self, buf: &mut Buf, tag: Tag) -> Status {
        self.try_receive_into_with_tag(buf, tag).or_fatal()
    }
    /// [`receive_into_with_tag`](Self::receive_into_with_tag), reporting errors.
    fn try_receive_into_with_tag<Buf: BufferMut + ?Sized>(
        &self,
        buf: &mut Buf,
        tag: Tag,
    ) -> Result<Status> {
        recv_into(
            self.as_communicator().core_comm(),
            self.source_rank(),
            buf,
            tag,
        )
    }
    /// Receives a message with any tag into `buf`.
    fn receive_into<Buf: BufferMut + ?Sized>(&self, buf: &mut Buf) -> Status {
        self.receive_into_with_tag(buf, ANY_TAG)
    }
    /// [`receive_into`](Self::receive_into), reporting errors.
    fn try_receive_into<Buf: BufferMut + ?Sized>(&self, buf: &mut Buf) -> Result<Status> {
        self.try_receive_into_with_tag(buf, ANY_TAG)
    }

    /// Receives a message tagged `tag` of any length into a new `Vec`.
    fn receive_vec_with_tag<Msg: Equivalence>(&self, tag: Tag) -> (Vec<Msg>, Status) {
        self.try_receive_vec_with_tag(tag).or_fatal()
    }
    /// [`receive_vec_with_tag`](Self::receive_vec_with_tag), reporting errors.
    fn try_receive_vec_with_tag<Msg: Equivalence>(&self, tag: Tag) -> Result<(Vec<Msg>, Status)> {
        self.try_matched_probe_with_tag(tag)?
            .0
            .try_matched_receive_vec()
    }
    /// Receives a message with any tag, of any length, into a new `Vec`.
    fn receive_vec<Msg: Equivalence>(&self) -> (Vec<Msg>, Status) {
        self.receive_vec_with_tag(ANY_TAG)
    }
    /// [`receive_vec`](Self::receive_vec), reporting errors.
    fn try_receive_vec<Msg: Equivalence>(&self) -> Result<(Vec<Msg>, Status)> {
        self.try_receive_vec_with_tag(ANY_TAG)
    }

    /// Starts a receive of a message tagged `tag` into `buf` (`MPI_Irecv`).
    #[inline(always)]
    fn immediate_receive_into_with_tag<'a, Sc, Buf>(
        &self,
        scope: Sc,
        buf: &'a mut Buf,
        tag: Tag,
    ) -> Request<'a, Buf, Sc, SafetyOf<Self::Out>>
    where
        Buf: 'a + BufferMut + ?Sized,
        Sc: Scope<'a>,
    {
        self.try_immediate_receive_into_with_tag(scope, buf, tag)
            .or_fatal()
    }
    /// [`immediate_receive_into_with_tag`](Self::immediate_receive_into_with_tag), reporting errors.
    #[inline(always)]
    fn try_immediate_receive_into_with_tag<'a, Sc, Buf>(
        &self,
        scope: Sc,
        buf: &'a mut Buf,
        tag: Tag,
    ) -> Result<Request<'a, Buf, Sc, SafetyOf<Self::Out>>>
    where
        Buf: 'a + BufferMut + ?Sized,
        Sc: Scope<'a>,
    {
        let comm = self.as_communicator().core_comm();
        let source = self.source_rank();
        immediate_mut(buf, "MPI_Irecv", scope, |w, buf| {
            match recv_spec(buf, "MPI_Irecv")? {
                RecvSpec::Bytes(t) => {
                    // Core's lean entry for contiguous bytes (PROFILE.md, rrate28).
                    let (b, t) = t.lend_bytes(w);
                    Ok((pt2pt::irecv_bytes(w, comm, b, source, tag)?, Some(t)))
                }
                RecvSpec::Typed(mut t) => {
                    Ok((pt2pt::irecv(w, comm, t.lend_mut(w), source, tag)?, None))
                }
            }
        })
    }
    /// Starts a receive of a message with any tag into `buf` (`MPI_Irecv`).
    fn immediate_receive_into<'a, Sc, Buf>(
        &self,
        scope: Sc,
        buf: &'a mut Buf,
    ) -> Request<'a, Buf, Sc, SafetyOf<Self::Out>>
    where
        Buf: 'a + BufferMut + ?Sized,
        Sc: Scope<'a>,
    {
        self.immediate_receive_into_with_tag(scope, buf, ANY_TAG)
    }
    /// [`immediate_receive_into`](Self::immediate_receive_into), reporting errors.
    fn try_immediate_receive_into<'a, Sc, Buf>(
        &self,
        scope: Sc,
        buf: &'a mut Buf,
    ) -> Result<Request<'a, Buf, Sc, SafetyOf<Self::Out>>>
    where
        Buf: 'a + BufferMut + ?Sized,
        Sc: Scope<'a>,
    {
        self.try_immediate_receive_into_with_tag(scope, buf, ANY_TAG)
    }
    /// Starts a receive of one value of type `Msg` tagged `tag` into memory of its own
    /// (`MPI_Irecv`); [`ReceiveFuture::get`] waits for it.
    fn immediate_receive_with_tag<Msg: Equivalence>(&self, tag: Tag) -> ReceiveFuture<Msg> {
        self.try_immediate_receive_with_tag(tag).or_fatal()
    }
    /// [`immediate_receive_with_tag`](Self::immediate_receive_with_tag), reporting errors.
    fn try_immediate_receive_with_tag<Msg: Equivalence>(
        &self,
        tag: Tag,
    ) -> Result<ReceiveFuture<Msg>> {
        ReceiveFuture::start(self.as_communicator().core_comm(), self.source_rank(), tag)
    }
    /// [`immediate_receive_with_tag`](Self::immediate_receive_with_tag) for any tag.
    fn immediate_receive<Msg: Equivalence>(&self) -> ReceiveFuture<Msg> {
        self.immediate_receive_with_tag(ANY_TAG)
    }
    /// [`immediate_receive`](Self::immediate_receive), reporting errors.
    fn try_immediate_receive<Msg: Equivalence>(&self) -> Result<ReceiveFuture<Msg>> {
        self.try_immediate_receive_with_tag(ANY_TAG)
    }
}

impl<S: ThreadSafety> Source for Process<'_, S> {
    fn source_rank(&self) -> Rank {
        self.rank
    }
}

impl<S: ThreadSafety> Source for AnyProcess<'_, S> {
    fn source_rank(&self) -> Rank {
        ANY_SOURCE
    }
}

// ----- Destination ---------------------------------------------------------------------

macro_rules! blocking_send {
    ($(#[$doc:meta])* $name:ident, $name_tag:ident, $try_name:ident, $try_name_tag:ident, $mode:expr) => {
        $(#[$doc])*
        fn $name_tag<Buf: Buffer + ?Sized>(&self, buf: &Buf, tag: Tag) {
            self.$try_name_tag(buf, tag).or_fatal()
        }
        #[doc = concat!("[`", stringify!($name_tag), "`](Self::", stringify!($name_tag), "), reporting errors.")]
        fn $try_name_tag<Buf: Buffer + ?Sized>(&self, buf: &Buf, tag: Tag) -> Result<()> {
            send_mode(self.as_communicator().core_comm(), self.destination_rank(), buf, tag, $mode)
        }
        #[doc = concat!("[`", stringify!($name_tag), "`](Self::", stringify!($name_tag), ") with tag 0.")]
        fn $name<Buf: Buffer + ?Sized>(&self, buf: &Buf) {
            self.$name_tag(buf, 0)
        }
        #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name), "), reporting errors.")]
        fn $try_name<Buf: Buffer + ?Sized>(&self, buf: &Buf) -> Result<()> {
            self.$try_name_tag(buf, 0)
        }
    };
}

macro_rules! immediate_send {
    ($(#[$doc:meta])* $name:ident, $name_tag:ident, $try_name:ident, $try_name_tag:ident, $mode:expr) => {
        $(#[$doc])*
        #[inline(always)]
        fn $name_tag<'a, Sc, Buf>(&self, scope: Sc, buf: &'a Buf, tag: Tag) -> Request<'a, Buf, Sc, SafetyOf<Self::Out>>
        where
            Buf: 'a + Buffer + ?Sized,
            Sc: Scope<'a>,
        {
            self.$try_name_tag(scope, buf, tag).or_fatal()
        }
        #[doc = concat!("[`", stringify!($name_tag), "`](Self::", stringify!($name_tag), "), reporting errors.")]
        #[inline(always)]
        fn $try_name_tag<'a, Sc, Buf>(&self, scope: Sc, buf: &'a Buf, tag: Tag) -> Result<Request<'a, Buf, Sc, SafetyOf<Self::Out>>>
        where
            Buf: 'a + Buffer + ?Sized,
            Sc: Scope<'a>,
        {
            isend_mode(self.as_communicator().core_comm(), self.destination_rank(), scope, buf, tag, $mode)
        }
        #[doc = concat!("[`", stringify!($name_tag), "`](Self::", stringify!($name_tag), ") with tag 0.")]
        fn $name<'a, Sc, Buf>(&self, scope: Sc, buf: &'a Buf) -> Request<'a, Buf, Sc, SafetyOf<Self::Out>>
        where
            Buf: 'a + Buffer + ?Sized,
            Sc: Scope<'a>,
        {
            self.$name_tag(scope, buf, 0)
        }
        #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name), "), reporting errors.")]
        fn $try_name<'a, Sc, Buf>(&self, scope: Sc, buf: &'a Buf) -> Result<Request<'a, Buf, Sc, SafetyOf<Self::Out>>>
        where
            Buf: 'a + Buffer + ?Sized,
            Sc: Scope<'a>,
        {
            self.$try_name_tag(scope, buf, 0)
        }
    };
}

/// Something to send to: a [`Process`].
pub trait Destination: AsCommunicator {
    /// The rank to send to.
    fn destination_rank(&self) -> Rank;

    blocking_send!(
        /// Sends `buf` tagged `tag` (`MPI_Send`, standard mode).
        ///
        /// ```no_run
        /// use oxmpi::traits::*;
        /// let universe = oxmpi::initialize().unwrap();
        /// let world = universe.world();
        /// world.process_at_rank(1).send_with_tag(&vec![1.0f64, 2.0, 3.0], 42);
        /// ```
        send, send_with_tag, try_send, try_send_with_tag, SendMode::Standard);
    blocking_send!(
        /// Sends `buf` tagged `tag`, returning once the receiver has matched it (`MPI_Ssend`).
        synchronous_send, synchronous_send_with_tag, try_synchronous_send, try_synchronous_send_with_tag,
        SendMode::Synchronous);
    blocking_send!(
        /// Sends `buf` tagged `tag` through the buffer attached with
        /// [`Universe::set_buffer_size`](crate::Universe::set_buffer_size) (`MPI_Bsend`);
        /// returns at once. Too little buffer space is an error of class
        /// [`ErrorClass::Buffer`].
        buffered_send, buffered_send_with_tag, try_buffered_send, try_buffered_send_with_tag,
        SendMode::Buffered);
    immediate_send!(
        /// Starts a standard-mode send of `buf` tagged `tag` (`MPI_Isend`).
        immediate_send, immediate_send_with_tag, try_immediate_send, try_immediate_send_with_tag,
        SendMode::Standard);
    immediate_send!(
        /// Starts a synchronous send (`MPI_Issend`).
        immediate_synchronous_send, immediate_synchronous_send_with_tag, try_immediate_synchronous_send,
        try_immediate_synchronous_send_with_tag, SendMode::Synchronous);
    immediate_send!(
        /// Starts a buffered send (`MPI_Ibsend`).
        immediate_buffered_send, immediate_buffered_send_with_tag, try_immediate_buffered_send,
        try_immediate_buffered_send_with_tag, SendMode::Buffered);

    /// Sends `buf` tagged `tag` in ready mode (`MPI_Rsend`): the matching receive must
    /// already be posted.
    ///
    /// # Safety
    /// `unsafe` for compatibility with rsmpi, where a ready send without a posted receive
    /// is undefined. oxmpi has no undefined behaviour here (the message is delivered as a
    /// standard one); [`try_ready_send_with_tag`](Self::try_ready_send_with_tag) is safe.
    #[allow(unsafe_code)] // rsmpi's signature; the body is safe
    unsafe fn ready_send_with_tag<Buf: Buffer + ?Sized>(&self, buf: &Buf, tag: Tag) {
        self.try_ready_send_with_tag(buf, tag).or_fatal()
    }
    /// A ready-mode send, reporting errors. Safe: see [`ready_send_with_tag`](Self::ready_send_with_tag).
    fn try_ready_send_with_tag<Buf: Buffer + ?Sized>(&self, buf: &Buf, tag: Tag) -> Result<()> {
        send_mode(
            self.as_communicator().core_comm(),
            self.destination_rank(),
            buf,
            tag,
            SendMode::Ready,
        )
    }
    /// [`ready_send_with_tag`](Self::ready_send_with_tag) with tag 0.
    ///
    /// # Safety
    /// See [`ready_send_with_tag`](Self::ready_send_with_tag).
    #[allow(unsafe_code)] // rsmpi's signature; the body is safe
    unsafe fn ready_send<Buf: Buffer + ?Sized>(&self, buf: &Buf) {
        self.try_ready_send_with_tag(buf, 0).or_fatal()
    }
    /// [`try_ready_send_with_tag`](Self::try_ready_send_with_tag) with tag 0.
    fn try_ready_send<Buf: Buffer + ?Sized>(&self, buf: &Buf) -> Result<()> {
        self.try_ready_send_with_tag(buf, 0)
    }
    /// Starts a ready-mode send (`MPI_Irsend`).
    ///
    /// # Safety
    /// See [`ready_send_with_tag`](Self::ready_send_with_tag).
    #[allow(unsafe_code)] // rsmpi's signature; the body is safe
    unsafe fn immediate_ready_send_with_tag<'a, Sc, Buf>(
        &self,
        scope: Sc,
        buf: &'a Buf,
        tag: Tag,
    ) -> Request<'a, Buf, Sc, SafetyOf<Self::Out>>
    where
        Buf: 'a + Buffer + ?Sized,
        Sc: Scope<'a>,
    {
        self.try_immediate_ready_send_with_tag(scope, buf, tag)
            .or_fatal()
    }
    /// A ready-mode immediate send, reporting errors. Safe.
    fn try_immediate_ready_send_with_tag<'a, Sc, Buf>(
        &self,
        scope: Sc,
        buf: &'a Buf,
        tag: Tag,
    ) -> Result<Request<'a, Buf, Sc, SafetyOf<Self::Out>>>
    where
        Buf: 'a + Buffer + ?Sized,
        Sc: Scope<'a>,
    {
        isend_mode(
            self.as_communicator().core_comm(),
            self.destination_rank(),
            scope,
            buf,
            tag,
            SendMode::Ready,
        )
    }
    /// [`immediate_ready_send_with_tag`](Self::immediate_ready_send_with_tag) with tag 0.
    ///
    /// # Safety
    /// See [`ready_send_with_tag`](Self::ready_send_with_tag).
    #[allow(unsafe_code)] // rsmpi's signature; the body is safe
    unsafe fn immediate_ready_send<'a, Sc, Buf>(
        &self,
        scope: Sc,
        buf: &'a Buf,
    ) -> Request<'a, Buf, Sc, SafetyOf<Self::Out>>
    where
        Buf: 'a + Buffer + ?Sized,
        Sc: Scope<'a>,
    {
        self.try_immediate_ready_send_with_tag(scope, buf, 0)
            .or_fatal()
    }
}

impl<S: ThreadSafety> Destination for Process<'_, S> {
    fn destination_rank(&self) -> Rank {
        self.rank
    }
}

// ----- matched receives -------------------------------------------------------------

/// A message taken out of matching by a matched probe; it must be received with one of
/// the `matched_receive*` methods. Dropping it otherwise panics.
#[must_use = "a matched message must be received; dropping it panics"]
pub struct Message {
    raw: oxmpi_core::Message,
    bytes: usize,
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("bytes", &self.bytes)
            .field("no_proc", &self.is_no_proc())
            .finish()
    }
}

impl Drop for Message {
    fn drop(&mut self) {
        let live =
            self.raw != oxmpi_core::Message::NULL && self.raw != oxmpi_core::Message::NO_PROC;
        if live && !std::thread::panicking() {
            panic!("matched message dropped without receiving");
        }
    }
}

impl Message {
    /// Whether this is the message "from" `MPI_PROC_NULL` (`MPI_MESSAGE_NO_PROC`).
    pub fn is_no_proc(&self) -> bool {
        self.raw == oxmpi_core::Message::NO_PROC
    }

    /// Bytes in the message.
    pub fn byte_count(&self) -> usize {
        self.bytes
    }

    /// Takes the engine's handle out, leaving NULL (so Drop is quiet).
    fn take(&mut self) -> oxmpi_core::Message {
        std::mem::replace(&mut self.raw, oxmpi_core::Message::NULL)
    }

    /// Receives the message as one value of type `Msg` (`MPI_Mrecv`).
    pub fn matched_receive<Msg: Equivalence>(self) -> (Msg, Status) {
        self.try_matched_receive().or_fatal()
    }
    /// [`matched_receive`](Self::matched_receive), reporting errors.
    pub fn try_matched_receive<Msg: Equivalence>(mut self) -> Result<(Msg, Status)> {
        let mut m = self.take();
        recv_value("MPI_Mrecv", mrecv_op(&mut m))
    }

    /// Receives the message into `buf` (`MPI_Mrecv`).
    pub fn matched_receive_into<Buf: BufferMut + ?Sized>(self, buf: &mut Buf) -> Status {
        self.try_matched_receive_into(buf).or_fatal()
    }
    /// [`matched_receive_into`](Self::matched_receive_into), reporting errors.
    pub fn try_matched_receive_into<Buf: BufferMut + ?Sized>(
        mut self,
        buf: &mut Buf,
    ) -> Result<Status> {
        let mut m = self.take();
        let spec = recv_spec(buf, "MPI_Mrecv")?;
        receive_spec(spec, "MPI_Mrecv", mrecv_op(&mut m))
    }

    /// Receives the message into a new `Vec` of the right length.
    pub fn matched_receive_vec<Msg: Equivalence>(self) -> (Vec<Msg>, Status) {
        self.try_matched_receive_vec().or_fatal()
    }
    /// [`matched_receive_vec`](Self::matched_receive_vec), reporting errors. A message that
    /// is not a whole number of `Msg`s is an error of class [`ErrorClass::Type`].
    pub fn try_matched_receive_vec<Msg: Equivalence>(mut self) -> Result<(Vec<Msg>, Status)> {
        let mut m = self.take();
        let size = Msg::equivalent_datatype().as_datatype_ref().size().max(1);
        let n = self.bytes.div_ceil(size);
        let mut v = Slots::<Msg>::new(n);
        let st = match v.spec("MPI_Mrecv")? {
            RecvSpec::Bytes(mut t) => {
                let st = oxmpi_core::buf::scope(|sc| {
                    let mut r = pt2pt::imrecv(sc, t.desc_mut(), &mut m)?;
                    pt2pt::wait(&mut r)
                })?;
                if st.count_bytes % size == 0 {
                    t.check(st.count_bytes, "MPI_Mrecv")?;
                }
                st
            }
            RecvSpec::Typed(mut t) => oxmpi_core::buf::scope(|sc| {
                let mut r = pt2pt::imrecv(sc, t.desc_mut(), &mut m)?;
                pt2pt::wait(&mut r).map_err(|e| renamed(e, "MPI_Imrecv", "MPI_Mrecv"))
            })?,
        };
        if st.count_bytes % size != 0 {
            return Err(Error::new(
                ErrorClass::Type,
                format!("MPI_Mrecv: the message has {} bytes, not a whole number of {size}-byte elements", st.count_bytes),
            ));
        }
        let v = v.into_values(st.count_bytes, None, "MPI_Mrecv")?;
        Ok((v, Status(st)))
    }

    /// Starts receiving the message into `buf` (`MPI_Imrecv`).
    pub fn immediate_matched_receive_into<'a, Sc, Buf>(
        self,
        scope: Sc,
        buf: &'a mut Buf,
    ) -> Request<'a, Buf, Sc>
    where
        Buf: 'a + BufferMut + ?Sized,
        Sc: Scope<'a>,
    {
        self.try_immediate_matched_receive_into(scope, buf)
            .or_fatal()
    }
    /// [`immediate_matched_receive_into`](Self::immediate_matched_receive_into), reporting errors.
    pub fn try_immediate_matched_receive_into<'a, Sc, Buf>(
        mut self,
        scope: Sc,
        buf: &'a mut Buf,
    ) -> Result<Request<'a, Buf, Sc>>
    where
        Buf: 'a + BufferMut + ?Sized,
        Sc: Scope<'a>,
    {
        let mut m = self.take();
        immediate_mut(buf, "MPI_Imrecv", scope, |w, buf| {
            match recv_spec(buf, "MPI_Imrecv")? {
                RecvSpec::Bytes(t) => {
                    let (b, t) = t.lend(w);
                    Ok((pt2pt::imrecv(w, b, &mut m)?, Some(t)))
                }
                RecvSpec::Typed(mut t) => Ok((pt2pt::imrecv(w, t.lend_mut(w), &mut m)?, None)),
            }
        })
    }
}

/// `matched_receive_vec` on the `(Message, Status)` a matched probe returns.
pub trait MatchedReceiveVec {
    /// Receives the message into a new `Vec`.
    fn matched_receive_vec<Msg: Equivalence>(self) -> (Vec<Msg>, Status);
    /// [`matched_receive_vec`](Self::matched_receive_vec), reporting errors.
    fn try_matched_receive_vec<Msg: Equivalence>(self) -> Result<(Vec<Msg>, Status)>;
}

impl MatchedReceiveVec for (Message, Status) {
    fn matched_receive_vec<Msg: Equivalence>(self) -> (Vec<Msg>, Status) {
        self.0.matched_receive_vec()
    }
    fn try_matched_receive_vec<Msg: Equivalence>(self) -> Result<(Vec<Msg>, Status)> {
        self.0.try_matched_receive_vec()
    }
}

// ----- send-receive ------------------------------------------------------------------

fn same_comm<'c, D: Destination + ?Sized, S: Source + ?Sized>(
    d: &'c D,
    s: &S,
    call: &str,
) -> Result<&'c Comm> {
    let dc = d.as_communicator().core_comm();
    if !dc.same(s.as_communicator().core_comm()) {
        return Err(Error::arg(
            ErrorClass::Comm,
            call,
            "source",
            "source and destination are in different communicators",
        ));
    }
    Ok(dc)
}

/// Sends `msg` to `destination` tagged `sendtag` while receiving one value tagged
/// `receivetag` from `source` (`MPI_Sendrecv`).
pub fn send_receive_with_tags<M, D, R, S>(
    msg: &M,
    destination: &D,
    sendtag: Tag,
    source: &S,
    receivetag: Tag,
) -> (R, Status)
where
    M: Equivalence,
    D: Destination,
    R: Equivalence,
    S: Source,
{
    try_send_receive_with_tags(msg, destination, sendtag, source, receivetag).or_fatal()
}

/// [`send_receive_with_tags`], reporting errors.
pub fn try_send_receive_with_tags<M, D, R, S>(
    msg: &M,
    destination: &D,
    sendtag: Tag,
    source: &S,
    receivetag: Tag,
) -> Result<(R, Status)>
where
    M: Equivalence,
    D: Destination,
    R: Equivalence,
    S: Source,
{
    const CALL: &str = "MPI_Sendrecv";
    let comm = same_comm(destination, source, CALL)?;
    let (dest, src) = (destination.destination_rank(), source.source_rank());
    let mut v = Slots::<R>::new(1);
    let st = match (send_spec(msg, CALL)?, v.spec(CALL)?) {
        (SendSpec::Bytes(out), RecvSpec::Bytes(t)) => recv_into_target(t, CALL, |b| {
            pt2pt::sendrecv(comm, out, dest, sendtag, b, src, receivetag)
        })?,
        (_, RecvSpec::Bytes(mut t)) => {
            let s = typed_in(msg);
            let st = oxmpi_core::buf::scope(|sc| {
                let ren = |e| renamed(e, "MPI_Isendrecv", CALL);
                let mut req = pt2pt::isendrecv(
                    sc,
                    comm,
                    s.desc(),
                    dest,
                    sendtag,
                    t.desc_mut(),
                    src,
                    receivetag,
                )
                .map_err(ren)?;
                pt2pt::wait(&mut req).map_err(ren)
            })?;
            t.check(st.count_bytes, CALL)?;
            Status(st)
        }
        (_, RecvSpec::Typed(mut r)) => sendrecv_typed(
            CALL,
            comm,
            &typed_in(msg),
            dest,
            sendtag,
            &mut r,
            src,
            receivetag,
        )?,
    };
    value_received::<R>(v, st, CALL)
}

/// [`send_receive_with_tags`] with send tag 0 and any receive tag.
///
/// ```
/// use oxmpi::traits::*;
/// use oxmpi::point_to_point as p2p;
/// let universe = oxmpi::initialize().unwrap();
/// let world = universe.world();
/// let (rank, size) = (world.rank(), world.size());
/// let next = world.process_at_rank((rank + 1) % size);
/// let prev = world.process_at_rank((rank + size - 1) % size);
/// let (got, _): (i32, _) = p2p::send_receive(&rank, &next, &prev);
/// assert_eq!(got, (rank + size - 1) % size);
/// ```
pub fn send_receive<M, D, R, S>(msg: &M, destination: &D, source: &S) -> (R, Status)
where
    M: Equivalence,
    D: Destination,
    R: Equivalence,
    S: Source,
{
    send_receive_with_tags(msg, destination, 0, source, ANY_TAG)
}

/// [`send_receive`], reporting errors.
pub fn try_send_receive<M, D, R, S>(msg: &M, destination: &D, source: &S) -> Result<(R, Status)>
where
    M: Equivalence,
    D: Destination,
    R: Equivalence,
    S: Source,
{
    try_send_receive_with_tags(msg, destination, 0, source, ANY_TAG)
}

/// Sends `msg` while receiving into `buf` (`MPI_Sendrecv`).
pub fn send_receive_into_with_tags<M, D, B, S>(
    msg: &M,
    destination: &D,
    sendtag: Tag,
    buf: &mut B,
    source: &S,
    receivetag: Tag,
) -> Status
where
    M: Buffer + ?Sized,
    D: Destination,
    B: BufferMut + ?Sized,
    S: Source,
{
    try_send_receive_into_with_tags(msg, destination, sendtag, buf, source, receivetag).or_fatal()
}

/// [`send_receive_into_with_tags`], reporting errors.
pub fn try_send_receive_into_with_tags<M, D, B, S>(
    msg: &M,
    destination: &D,
    sendtag: Tag,
    buf: &mut B,
    source: &S,
    receivetag: Tag,
) -> Result<Status>
where
    M: Buffer + ?Sized,
    D: Destination,
    B: BufferMut + ?Sized,
    S: Source,
{
    const CALL: &str = "MPI_Sendrecv";
    let comm = same_comm(destination, source, CALL)?;
    let (dest, src) = (destination.destination_rank(), source.source_rank());
    match (send_spec(msg, CALL)?, recv_spec(buf, CALL)?) {
        (SendSpec::Bytes(out), RecvSpec::Bytes(t)) => recv_into_target(t, CALL, |b| {
            pt2pt::sendrecv(comm, out, dest, sendtag, b, src, receivetag)
        }),
        (_, RecvSpec::Bytes(_)) => {
            let (s, mut r) = (typed_in(msg), typed_out(buf));
            sendrecv_typed(CALL, comm, &s, dest, sendtag, &mut r, src, receivetag)
        }
        (_, RecvSpec::Typed(mut r)) => sendrecv_typed(
            CALL,
            comm,
            &typed_in(msg),
            dest,
            sendtag,
            &mut r,
            src,
            receivetag,
        ),
    }
}

/// [`send_receive_into_with_tags`] with send tag 0 and any receive tag.
pub fn send_receive_into<M, D, B, S>(msg: &M, destination: &D, buf: &mut B, source: &S) -> Status
where
    M: Buffer + ?Sized,
    D: Destination,
    B: BufferMut + ?Sized,
    S: Source,
{
    send_receive_into_with_tags(msg, destination, 0, buf, source, ANY_TAG)
}

/// [`send_receive_into`], reporting errors.
pub fn try_send_receive_into<M, D, B, S>(
    msg: &M,
    destination: &D,
    buf: &mut B,
    source: &S,
) -> Result<Status>
where
    M: Buffer + ?Sized,
    D: Destination,
    B: BufferMut + ?Sized,
    S: Source,
{
    try_send_receive_into_with_tags(msg, destination, 0, buf, source, ANY_TAG)
}

/// Sends `buf` and replaces its contents with a message received (`MPI_Sendrecv_replace`).
pub fn send_receive_replace_into_with_tags<B, D, S>(
    buf: &mut B,
    destination: &D,
    sendtag: Tag,
    source: &S,
    receivetag: Tag,
) -> Status
where
    B: BufferMut + ?Sized,
    D: Destination,
    S: Source,
{
    try_send_receive_replace_into_with_tags(buf, destination, sendtag, source, receivetag)
        .or_fatal()
}

/// [`send_receive_replace_into_with_tags`], reporting errors.
pub fn try_send_receive_replace_into_with_tags<B, D, S>(
    buf: &mut B,
    destination: &D,
    sendtag: Tag,
    source: &S,
    receivetag: Tag,
) -> Result<Status>
where
    B: BufferMut + ?Sized,
    D: Destination,
    S: Source,
{
    const CALL: &str = "MPI_Sendrecv_replace";
    let comm = same_comm(destination, source, CALL)?;
    let t = match recv_spec(buf, CALL)? {
        RecvSpec::Bytes(t) => t,
        RecvSpec::Typed(mut t) => {
            let ren = |e| renamed(e, "MPI_Isendrecv_replace", CALL);
            let (dest, src) = (destination.destination_rank(), source.source_rank());
            return oxmpi_core::buf::scope(|sc| {
                let mut r = pt2pt::isendrecv_replace(
                    sc,
                    comm,
                    t.desc_mut(),
                    dest,
                    sendtag,
                    src,
                    receivetag,
                )
                .map_err(ren)?;
                pt2pt::wait(&mut r).map(Status).map_err(ren)
            });
        }
    };
    recv_into_target(t, CALL, |b| {
        pt2pt::sendrecv_replace(
            comm,
            b,
            destination.destination_rank(),
            sendtag,
            source.source_rank(),
            receivetag,
        )
    })
}

/// [`send_receive_replace_into_with_tags`] with send tag 0 and any receive tag.
pub fn send_receive_replace_into<B, D, S>(buf: &mut B, destination: &D, source: &S) -> Status
where
    B: BufferMut + ?Sized,
    D: Destination,
    S: Source,
{
    send_receive_replace_into_with_tags(buf, destination, 0, source, ANY_TAG)
}

/// [`send_receive_replace_into`], reporting errors.
pub fn try_send_receive_replace_into<B, D, S>(
    buf: &mut B,
    destination: &D,
    source: &S,
) -> Result<Status>
where
    B: BufferMut + ?Sized,
    D: Destination,
    S: Source,
{
    try_send_receive_replace_into_with_tags(buf, destination, 0, source, ANY_TAG)
}

// ----- ReceiveFuture ------------------------------------------------------------------

/// A receive of one value into memory owned by the future, started by
/// [`Source::immediate_receive`]. Dropping it unfinished cancels the receive.
#[must_use = "the receive is cancelled when the future is dropped"]
pub struct ReceiveFuture<T> {
    /// The value's memory, lent to the receive until it completes (`None` once taken).
    slot: Option<LentBox<Slots<T>>>,
    raw: oxmpi_core::Request,
}

impl<T> fmt::Debug for ReceiveFuture<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ReceiveFuture")
    }
}

impl<T: Equivalence> ReceiveFuture<T> {
    fn start(comm: &Comm, source: Rank, tag: Tag) -> Result<Self> {
        let (slot, r) = LentBox::lend(
            Box::new(Slots::<T>::new(1)),
            // The received bytes are checked by `Slots::into_values`.
            |cap, v| match v.spec("MPI_Irecv")? {
                RecvSpec::Bytes(t) => {
                    let (buf, _) = t.lend(cap);
                    pt2pt::irecv(cap, comm, buf, source, tag)
                }
                RecvSpec::Typed(mut t) => {
                    let buf = t.lend_mut(cap);
                    pt2pt::irecv(cap, comm, buf, source, tag)
                }
            },
        );
        Ok(ReceiveFuture {
            slot: Some(slot),
            raw: r?,
        })
    }

    /// The value, once the receive ended with `st`.
    fn finish(mut self, st: Result<oxmpi_core::Status>) -> Result<(T, Status)> {
        let slot = self.slot.take().expect("live future").reclaim();
        let st = st?;
        value_received::<T>(*slot, Status(st), "MPI_Irecv")
    }

    /// Waits for the value (`MPI_Wait`).
    pub fn get(self) -> (T, Status) {
        self.try_get().or_fatal()
    }

    /// [`get`](Self::get), reporting errors.
    pub fn try_get(mut self) -> Result<(T, Status)> {
        let st = pt2pt::wait(&mut self.raw);
        self.finish(st)
    }

    /// The value if it has arrived (`MPI_Test`), otherwise the future back.
    pub fn r#try(mut self) -> std::result::Result<(T, Status), Self> {
        match pt2pt::test(&mut self.raw) {
            Ok(None) => Err(self),
            Ok(Some(st)) => Ok(self.finish(Ok(st)).or_fatal()),
            Err(e) => Ok(self.finish(Err(e)).or_fatal()),
        }
    }
}

impl<T> Drop for ReceiveFuture<T> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            let _ = pt2pt::cancel(&self.raw);
            let _ = pt2pt::wait(&mut self.raw);
            // Given back (and freed) once the engine is done with it.
            drop(slot);
        }
    }
}
