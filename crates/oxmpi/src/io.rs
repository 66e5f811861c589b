//! Parallel file I/O (MPI-IO): [`File`], opened collectively over a communicator.
//!
//! rsmpi has no MPI-IO; this module follows MPI's names. Reads and writes take any
//! [`Buffer`]/[`BufferMut`] (slices of [`Equivalence`] types, views with derived
//! datatypes), at an explicit offset (`*_at`), at the individual file pointer, or at
//! the shared file pointer (`*_shared`, `*_ordered`); the `*_all` forms are collective
//! and use two-phase I/O. Offsets count etypes of the current view (bytes until
//! [`File::set_view`] says otherwise). The `immediate_*` forms return a [`Request`]
//! tied to a [`scope`](crate::request::scope), like point-to-point requests.
//!
//! As everywhere in this crate, a method `foo` treats an MPI error as fatal and
//! `try_foo` returns it.
//!
//! ```
//! use oxmpi::io::{File, Mode};
//! use oxmpi::traits::*;
//!
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! let path = std::env::temp_dir().join(format!("oxmpi-doc-{}.dat", std::process::id()));
//! let file = File::open(&world, &path, Mode::CREATE | Mode::RDWR | Mode::DELETE_ON_CLOSE);
//! // Each rank writes its 4 doubles at its own place, collectively.
//! let mine = [world.rank() as f64; 4];
//! file.set_view::<f64, _>(0, &f64::equivalent_datatype());
//! file.write_at_all(4 * world.rank() as u64, &mine[..]);
//! let mut back = [0.0f64; 4];
//! let status = file.read_at_all(4 * world.rank() as u64, &mut back[..]);
//! assert_eq!(status.count(f64::equivalent_datatype()), 4);
//! assert_eq!(back, mine);
//! file.close();
//! assert!(!path.exists());
//! ```
#![deny(unsafe_code)]

use std::ops::BitOr;
use std::path::Path;

/// Where [`File::try_seek`] counts from (`MPI_SEEK_SET`, `_CUR`, `_END`).
pub use oxmpi_core::io::Whence;
use oxmpi_core::io::{self as core_io, Pos};

use crate::datatype::{typed_in, typed_out, Buffer, BufferMut, Datatype, Equivalence};
use crate::error::{OrFatal, Result};
use crate::point_to_point::Status;
use crate::request::{immediate_mut, immediate_ref, Request, Scope};
use crate::topology::Communicator;

/// A file access mode (`MPI_MODE_*`), combined with `|`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode(
    /// The `MPI_MODE_*` bits.
    pub i32,
);

impl Mode {
    /// Read only.
    pub const RDONLY: Mode = Mode(core_io::mode::RDONLY);
    /// Read and write.
    pub const RDWR: Mode = Mode(core_io::mode::RDWR);
    /// Write only.
    pub const WRONLY: Mode = Mode(core_io::mode::WRONLY);
    /// Create the file if it does not exist.
    pub const CREATE: Mode = Mode(core_io::mode::CREATE);
    /// With `CREATE`: fail (`FileExists`) if it exists.
    pub const EXCL: Mode = Mode(core_io::mode::EXCL);
    /// Delete the file when it is closed.
    pub const DELETE_ON_CLOSE: Mode = Mode(core_io::mode::DELETE_ON_CLOSE);
    /// The file is not opened concurrently elsewhere.
    pub const UNIQUE_OPEN: Mode = Mode(core_io::mode::UNIQUE_OPEN);
    /// Only shared-pointer access.
    pub const SEQUENTIAL: Mode = Mode(core_io::mode::SEQUENTIAL);
    /// File pointers start at the end of file.
    pub const APPEND: Mode = Mode(core_io::mode::APPEND);
}

impl BitOr for Mode {
    type Output = Mode;
    fn bitor(self, o: Mode) -> Mode {
        Mode(self.0 | o.0)
    }
}

/// An open file, shared by the ranks of the communicator it was opened on.
///
/// Dropping it closes it, which is collective: every rank drops (or
/// [`close`](File::close)s) its handle at the same point.
#[derive(Debug)]
pub struct File {
    inner: core_io::File,
    closed: bool,
}

macro_rules! blocking {
    ($(#[$m:meta])* $name:ident, $try:ident, $call:literal, $pos:expr, $coll:expr, write) => {
        $(#[$m])*
        pub fn $name<B: Buffer + ?Sized>(&self, buf: &B) -> Status {
            self.$try(buf).or_fatal()
        }
        #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name), "), reporting errors.")]
        pub fn $try<B: Buffer + ?Sized>(&self, buf: &B) -> Result<Status> {
            self.put($call, $pos, $coll, buf)
        }
    };
    ($(#[$m:meta])* $name:ident, $try:ident, $call:literal, $pos:expr, $coll:expr, read) => {
        $(#[$m])*
        pub fn $name<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Status {
            self.$try(buf).or_fatal()
        }
        #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name), "), reporting errors.")]
        pub fn $try<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<Status> {
            self.get($call, $pos, $coll, buf)
        }
    };
}

macro_rules! at {
    ($(#[$m:meta])* $name:ident, $try:ident, $call:literal, $coll:expr, write) => {
        $(#[$m])*
        pub fn $name<B: Buffer + ?Sized>(&self, offset: u64, buf: &B) -> Status {
            self.$try(offset, buf).or_fatal()
        }
        #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name), "), reporting errors.")]
        pub fn $try<B: Buffer + ?Sized>(&self, offset: u64, buf: &B) -> Result<Status> {
            self.put($call, Pos::At(offset), $coll, buf)
        }
    };
    ($(#[$m:meta])* $name:ident, $try:ident, $call:literal, $coll:expr, read) => {
        $(#[$m])*
        pub fn $name<B: BufferMut + ?Sized>(&self, offset: u64, buf: &mut B) -> Status {
            self.$try(offset, buf).or_fatal()
        }
        #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name), "), reporting errors.")]
        pub fn $try<B: BufferMut + ?Sized>(&self, offset: u64, buf: &mut B) -> Result<Status> {
            self.get($call, Pos::At(offset), $coll, buf)
        }
    };
}

impl File {
    /// Opens `path` on every rank of `comm` (`MPI_File_open`, collective).
    #[track_caller]
    pub fn open<C: Communicator + ?Sized>(comm: &C, path: impl AsRef<Path>, mode: Mode) -> File {
        Self::try_open(comm, path, mode).or_fatal()
    }

    /// [`open`](Self::open), reporting errors (`ErrorClass::NoSuchFile`, `FileExists`, ...).
    pub fn try_open<C: Communicator + ?Sized>(
        comm: &C,
        path: impl AsRef<Path>,
        mode: Mode,
    ) -> Result<File> {
        Self::try_open_with_hints(comm, path, mode, &[])
    }

    /// [`open`](Self::open) with hints (`cb_buffer_size`, `cb_nodes`, `romio_cb_write`, ...).
    pub fn try_open_with_hints<C: Communicator + ?Sized>(
        comm: &C,
        path: impl AsRef<Path>,
        mode: Mode,
        hints: &[(&str, &str)],
    ) -> Result<File> {
        let kv: Vec<(String, String)> = hints
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let inner = core_io::File::open(
            "MPI_File_open",
            comm.core_comm(),
            path.as_ref(),
            mode.0,
            &kv,
        )?;
        Ok(File {
            inner,
            closed: false,
        })
    }

    /// Deletes a file (`MPI_File_delete`).
    pub fn try_delete(path: impl AsRef<Path>) -> Result<()> {
        core_io::delete("MPI_File_delete", path.as_ref())
    }

    /// Closes the file (collective), reporting errors.
    pub fn try_close(mut self) -> Result<()> {
        self.closed = true;
        self.inner.close("MPI_File_close")
    }

    /// Closes the file (collective; `MPI_MODE_DELETE_ON_CLOSE` files are removed).
    #[track_caller]
    pub fn close(self) {
        self.try_close().or_fatal()
    }

    /// The file's size in bytes.
    pub fn size(&self) -> u64 {
        self.try_size().or_fatal()
    }
    /// [`size`](Self::size), reporting errors.
    pub fn try_size(&self) -> Result<u64> {
        self.inner.size("MPI_File_get_size")
    }
    /// Truncates or extends the file (collective).
    pub fn try_set_size(&self, size: u64) -> Result<()> {
        self.inner.set_size("MPI_File_set_size", size)
    }
    /// Reserves space for the first `size` bytes (collective).
    pub fn try_preallocate(&self, size: u64) -> Result<()> {
        self.inner.preallocate("MPI_File_preallocate", size)
    }
    /// Flushes written data to the storage device (collective).
    pub fn try_sync(&self) -> Result<()> {
        self.inner.sync("MPI_File_sync")
    }
    /// Turns atomic mode on or off (collective).
    pub fn try_set_atomicity(&self, atomic: bool) -> Result<()> {
        self.inner.set_atomicity("MPI_File_set_atomicity", atomic)
    }
    /// Whether atomic mode is on.
    pub fn atomicity(&self) -> bool {
        self.inner.atomicity()
    }
    /// The hints in use (`MPI_File_get_info`).
    pub fn hints(&self) -> Vec<(String, String)> {
        self.inner.info()
    }

    /// Sets the view (collective): from byte `disp`, elements of `T` laid out by
    /// `filetype` (which is tiled over the file), native representation.
    #[track_caller]
    pub fn set_view<T: Equivalence, D: Datatype>(&self, disp: u64, filetype: &D) {
        self.try_set_view::<T, D>(disp, filetype, "native")
            .or_fatal()
    }

    /// [`set_view`](Self::set_view) with a data representation (`"native"`,
    /// `"internal"`, `"external32"`), reporting errors.
    pub fn try_set_view<T: Equivalence, D: Datatype>(
        &self,
        disp: u64,
        filetype: &D,
        datarep: &str,
    ) -> Result<()> {
        let etype = T::equivalent_datatype();
        let et = etype.as_datatype_ref().as_core().clone();
        let ft = filetype.as_datatype_ref().as_core().clone();
        let rep = core_io::datarep("MPI_File_set_view", datarep)?;
        self.inner
            .set_view("MPI_File_set_view", Some(disp), &et, &ft, rep, &[])
    }

    /// Moves the individual file pointer (etypes).
    pub fn try_seek(&self, offset: i64, whence: Whence) -> Result<()> {
        self.inner.seek("MPI_File_seek", offset, whence)
    }
    /// The individual file pointer (etypes).
    pub fn try_position(&self) -> Result<u64> {
        self.inner.position("MPI_File_get_position")
    }
    /// Moves the shared file pointer (collective).
    pub fn try_seek_shared(&self, offset: i64, whence: Whence) -> Result<()> {
        self.inner
            .seek_shared("MPI_File_seek_shared", offset, whence)
    }
    /// The shared file pointer (etypes).
    pub fn try_position_shared(&self) -> Result<u64> {
        self.inner.position_shared("MPI_File_get_position_shared")
    }
    /// The absolute byte position of view offset `offset`.
    pub fn try_byte_offset(&self, offset: u64) -> Result<u64> {
        self.inner.byte_offset("MPI_File_get_byte_offset", offset)
    }

    fn put<B: Buffer + ?Sized>(&self, call: &str, pos: Pos, coll: bool, buf: &B) -> Result<Status> {
        let t = typed_in(buf);
        Ok(Status::from_core(self.inner.write_buf(
            call,
            pos,
            coll,
            t.desc(),
        )?))
    }

    fn get<B: BufferMut + ?Sized>(
        &self,
        call: &str,
        pos: Pos,
        coll: bool,
        buf: &mut B,
    ) -> Result<Status> {
        let mut t = typed_out(buf);
        let s = self.inner.read_buf(call, pos, coll, t.desc_mut())?;
        t.check_received(s.count_bytes, call)?;
        Ok(Status::from_core(s))
    }

    at!(
        /// Writes `buf` at view offset `offset` (`MPI_File_write_at`).
        write_at, try_write_at, "MPI_File_write_at", false, write);
    at!(
        /// Collective [`write_at`](Self::write_at) (`MPI_File_write_at_all`, two-phase I/O).
        write_at_all, try_write_at_all, "MPI_File_write_at_all", true, write);
    at!(
        /// Reads into `buf` from view offset `offset` (`MPI_File_read_at`); the status
        /// counts what was there before end of file.
        read_at, try_read_at, "MPI_File_read_at", false, read);
    at!(
        /// Collective [`read_at`](Self::read_at) (`MPI_File_read_at_all`).
        read_at_all, try_read_at_all, "MPI_File_read_at_all", true, read);
    blocking!(
        /// Writes at the individual file pointer and advances it (`MPI_File_write`).
        write, try_write, "MPI_File_write", Pos::Individual, false, write);
    blocking!(
        /// Collective [`write`](Self::write) (`MPI_File_write_all`).
        write_all, try_write_all, "MPI_File_write_all", Pos::Individual, true, write);
    blocking!(
        /// Reads at the individual file pointer and advances it (`MPI_File_read`).
        read, try_read, "MPI_File_read", Pos::Individual, false, read);
    blocking!(
        /// Collective [`read`](Self::read) (`MPI_File_read_all`).
        read_all, try_read_all, "MPI_File_read_all", Pos::Individual, true, read);
    blocking!(
        /// Writes at the shared file pointer (`MPI_File_write_shared`).
        write_shared, try_write_shared, "MPI_File_write_shared", Pos::Shared, false, write);
    blocking!(
        /// Reads at the shared file pointer (`MPI_File_read_shared`).
        read_shared, try_read_shared, "MPI_File_read_shared", Pos::Shared, false, read);
    blocking!(
        /// Collective write at the shared pointer in rank order (`MPI_File_write_ordered`).
        write_ordered, try_write_ordered, "MPI_File_write_ordered", Pos::Ordered, true, write);
    blocking!(
        /// Collective read at the shared pointer in rank order (`MPI_File_read_ordered`).
        read_ordered, try_read_ordered, "MPI_File_read_ordered", Pos::Ordered, true, read);

    fn start_put<'a, B, Sc>(
        &self,
        call: &'static str,
        pos: Pos,
        coll: bool,
        scope: Sc,
        buf: &'a B,
    ) -> Result<Request<'a, B, Sc>>
    where
        B: 'a + Buffer + ?Sized,
        Sc: Scope<'a>,
    {
        immediate_ref(buf, call, scope, |w| {
            self.inner
                .iwrite_buf(w, call, pos, coll, typed_in(buf).lend(w))
        })
    }

    fn start_get<'a, B, Sc>(
        &self,
        call: &'static str,
        pos: Pos,
        coll: bool,
        scope: Sc,
        buf: &'a mut B,
    ) -> Result<Request<'a, B, Sc>>
    where
        B: 'a + BufferMut + ?Sized,
        Sc: Scope<'a>,
    {
        immediate_mut(buf, call, scope, |w, buf| {
            let mut t = typed_out(buf);
            // Checked on completion: the elements the read wrote.
            let target = t.target().map(|mut x| {
                x.whole = false;
                x
            });
            Ok((
                self.inner.iread_buf(w, call, pos, coll, t.lend_mut(w))?,
                target,
            ))
        })
    }

    /// Starts a write at view offset `offset` (`MPI_File_iwrite_at`); `collective`
    /// selects `MPI_File_iwrite_at_all`.
    pub fn immediate_write_at<'a, B, Sc>(
        &self,
        scope: Sc,
        offset: u64,
        buf: &'a B,
        collective: bool,
    ) -> Request<'a, B, Sc>
    where
        B: 'a + Buffer + ?Sized,
        Sc: Scope<'a>,
    {
        self.try_immediate_write_at(scope, offset, buf, collective)
            .or_fatal()
    }

    /// [`immediate_write_at`](Self::immediate_write_at), reporting errors.
    pub fn try_immediate_write_at<'a, B, Sc>(
        &self,
        scope: Sc,
        offset: u64,
        buf: &'a B,
        collective: bool,
    ) -> Result<Request<'a, B, Sc>>
    where
        B: 'a + Buffer + ?Sized,
        Sc: Scope<'a>,
    {
        let call = if collective {
            "MPI_File_iwrite_at_all"
        } else {
            "MPI_File_iwrite_at"
        };
        self.start_put(call, Pos::At(offset), collective, scope, buf)
    }

    /// Starts a read at view offset `offset` (`MPI_File_iread_at`); `collective`
    /// selects `MPI_File_iread_at_all`.
    pub fn immediate_read_at<'a, B, Sc>(
        &self,
        scope: Sc,
        offset: u64,
        buf: &'a mut B,
        collective: bool,
    ) -> Request<'a, B, Sc>
    where
        B: 'a + BufferMut + ?Sized,
        Sc: Scope<'a>,
    {
        self.try_immediate_read_at(scope, offset, buf, collective)
            .or_fatal()
    }

    /// [`immediate_read_at`](Self::immediate_read_at), reporting errors.
    pub fn try_immediate_read_at<'a, B, Sc>(
        &self,
        scope: Sc,
        offset: u64,
        buf: &'a mut B,
        collective: bool,
    ) -> Result<Request<'a, B, Sc>>
    where
        B: 'a + BufferMut + ?Sized,
        Sc: Scope<'a>,
    {
        let call = if collective {
            "MPI_File_iread_at_all"
        } else {
            "MPI_File_iread_at"
        };
        self.start_get(call, Pos::At(offset), collective, scope, buf)
    }

    /// Starts a write at the individual file pointer (`MPI_File_iwrite`); `collective`
    /// selects `MPI_File_iwrite_all`.
    pub fn try_immediate_write<'a, B, Sc>(
        &self,
        scope: Sc,
        buf: &'a B,
        collective: bool,
    ) -> Result<Request<'a, B, Sc>>
    where
        B: 'a + Buffer + ?Sized,
        Sc: Scope<'a>,
    {
        let call = if collective {
            "MPI_File_iwrite_all"
        } else {
            "MPI_File_iwrite"
        };
        self.start_put(call, Pos::Individual, collective, scope, buf)
    }

    /// Starts a read at the individual file pointer (`MPI_File_iread`); `collective`
    /// selects `MPI_File_iread_all`.
    pub fn try_immediate_read<'a, B, Sc>(
        &self,
        scope: Sc,
        buf: &'a mut B,
        collective: bool,
    ) -> Result<Request<'a, B, Sc>>
    where
        B: 'a + BufferMut + ?Sized,
        Sc: Scope<'a>,
    {
        let call = if collective {
            "MPI_File_iread_all"
        } else {
            "MPI_File_iread"
        };
        self.start_get(call, Pos::Individual, collective, scope, buf)
    }

    /// Starts a write at the shared file pointer (`MPI_File_iwrite_shared`).
    pub fn try_immediate_write_shared<'a, B, Sc>(
        &self,
        scope: Sc,
        buf: &'a B,
    ) -> Result<Request<'a, B, Sc>>
    where
        B: 'a + Buffer + ?Sized,
        Sc: Scope<'a>,
    {
        self.start_put("MPI_File_iwrite_shared", Pos::Shared, false, scope, buf)
    }

    /// Starts a read at the shared file pointer (`MPI_File_iread_shared`).
    pub fn try_immediate_read_shared<'a, B, Sc>(
        &self,
        scope: Sc,
        buf: &'a mut B,
    ) -> Result<Request<'a, B, Sc>>
    where
        B: 'a + BufferMut + ?Sized,
        Sc: Scope<'a>,
    {
        self.start_get("MPI_File_iread_shared", Pos::Shared, false, scope, buf)
    }
}

impl Drop for File {
    fn drop(&mut self) {
        if !self.closed && !std::thread::panicking() {
            self.closed = true;
            self.inner.close("MPI_File_close").or_fatal();
        }
    }
}
