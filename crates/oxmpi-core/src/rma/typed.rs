//! Windows of typed memory for the Rust API: a [`TypedWindow`] over memory the
//! program lends (`MPI_Win_create` over a `&'a mut [T]`, kept borrowed until the
//! window is freed) or that the library allocates, with this process's part as a
//! `&mut [T]` ([`TypedWindow::local`]) and copies of a shared window's parts
//! ([`TypedWindow::shared`]). The window itself ([`Window`]) is lent only by
//! reference, so nothing outlives the memory it exposes; dropping the value frees the
//! window (collectively) before the borrow can end.
//!
//! A `TypedWindow` forgotten (`std::mem::forget`) is never freed: its memory stays
//! exposed to the other processes' passive-target operations after the borrow ends.
//! The Rust API's windows are dropped, not forgotten; this is the one gap the
//! lifetime cannot close (as for `std::thread::JoinGuard` before scoped threads).

use std::marker::PhantomData;
use std::sync::Arc;

use super::{Flavor, Window};
use crate::buf::AnyBytes;
use crate::comm::Comm;
use crate::error::{ErrorClass, MpiError, Result};
use crate::transport::winmem::CallerMem;

/// A window of `T`s over memory valid for `'a` (see the module's comment).
pub struct TypedWindow<'a, T> {
    win: Arc<Window>,
    /// This process's window memory: `len` `T`s at `base`, exclusively the window's.
    base: *mut T,
    len: usize,
    freed: bool,
    _mem: PhantomData<&'a mut [T]>,
}

// SAFETY: a `TypedWindow` stands for the `&'a mut [T]` (or allocation of `T`s) it exposes, which moves between threads with it, and for the window, which is `Send + Sync`.
unsafe impl<T: Send> Send for TypedWindow<'_, T> {}
// SAFETY: `&TypedWindow` reaches the memory only through the window's operations (element copies, synchronized by the window), never as `&T`.
unsafe impl<T: Send + Sync> Sync for TypedWindow<'_, T> {}

impl<T> std::fmt::Debug for TypedWindow<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedWindow")
            .field("len", &self.len)
            .field("freed", &self.freed)
            .finish()
    }
}

impl<'a, T> TypedWindow<'a, T> {
    /// `MPI_Win_create` over `mem` (collective over `comm`), displacement unit
    /// `size_of::<T>()`; `mem` stays borrowed until the window is freed.
    pub fn create(
        comm: &Comm,
        mem: &'a mut [T],
        _any: AnyBytes<T>,
        call: &str,
    ) -> Result<TypedWindow<'a, T>> {
        let base = mem.as_mut_ptr();
        let len = mem.len();
        let bytes = std::mem::size_of_val(mem);
        // SAFETY: `mem` is this process's memory, borrowed exclusively for 'a; the window is freed (collectively, so no process reaches the memory afterwards) when this value is dropped, within 'a, and the memory is reached otherwise only through `local` (`&mut self`); other processes write it as bytes, valid `T`s (`AnyBytes`).
        let caller = unsafe { CallerMem::new(base as usize, bytes) };
        let win = Window::new(
            comm,
            Flavor::Create,
            caller,
            bytes,
            std::mem::size_of::<T>().max(1),
            false,
            call,
        )?;
        Ok(TypedWindow {
            win,
            base,
            len,
            freed: false,
            _mem: PhantomData,
        })
    }

    /// The window, for its operations and synchronization (borrowed: no handle of it
    /// outlives this value).
    pub fn window(&self) -> &Window {
        &self.win
    }

    /// Elements of this process's window memory.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether this process's part is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// This process's window memory. MPI's rule that local accesses do not overlap
    /// other processes' accesses is the program's (between fences, after unlocks);
    /// what they write is bytes, valid `T`s (`AnyBytes`).
    pub fn local(&mut self) -> &mut [T] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: `len` `T`s at `base`, aligned (a `&mut [T]`, or an allocation aligned to 64 bytes), valid for 'a and reached by this process only through this exclusive borrow.
        unsafe { std::slice::from_raw_parts_mut(self.base, self.len) }
    }

    /// Copies of `rank`'s part of a shared window (`MPI_Win_shared_query`, read
    /// directly from the shared mapping: unaligned element reads).
    pub fn shared(&self, rank: i32) -> Result<Vec<T>> {
        let (size, _, addr) = self.win.shared_query(rank)?;
        let n = size / std::mem::size_of::<T>().max(1);
        if addr == 0 || n == 0 {
            return Ok(Vec::new());
        }
        Ok((0..n)
            .map(|i| {
                // SAFETY: `addr` maps `size` bytes of `rank`'s window memory in this process while the window exists (borrowed by `self`); any bytes are a valid `T` (`AnyBytes`, checked at creation).
                unsafe { std::ptr::read_unaligned((addr as *const T).add(i)) }
            })
            .collect())
    }

    /// `MPI_Win_free` (collective); an error leaves the window as it was. Freeing
    /// twice is an MPI_ERR_WIN error.
    pub fn free(&mut self) -> Result<()> {
        if self.freed {
            return Err(MpiError::arg(
                ErrorClass::Win,
                "MPI_Win_free",
                "win",
                "the window was already freed",
            ));
        }
        self.win.free()?;
        self.freed = true;
        Ok(())
    }
}

impl<T> TypedWindow<'static, T> {
    /// A window of `len` `T`s the library allocates and zeroes (`Allocate`, or
    /// `Shared` for `MPI_Win_allocate_shared`), collective over `comm`.
    pub fn allocate(
        comm: &Comm,
        flavor: Flavor,
        len: usize,
        _any: AnyBytes<T>,
        call: &str,
    ) -> Result<TypedWindow<'static, T>> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| {
                MpiError::arg(
                    ErrorClass::Size,
                    call,
                    "size",
                    format!("{len} elements overflow"),
                )
            })?;
        if std::mem::align_of::<T>() > 64 {
            return Err(MpiError::arg(
                ErrorClass::Type,
                call,
                "datatype",
                "window elements may be aligned to at most 64 bytes",
            ));
        }
        let win = Window::allocate(
            comm,
            flavor,
            bytes,
            std::mem::size_of::<T>().max(1),
            false,
            call,
        )?;
        let base = win.base() as *mut T;
        Ok(TypedWindow {
            win,
            base,
            len: if std::mem::size_of::<T>() == 0 {
                0
            } else {
                len
            },
            freed: false,
            _mem: PhantomData,
        })
    }
}

impl<T> Drop for TypedWindow<'_, T> {
    fn drop(&mut self) {
        if self.freed {
            return;
        }
        if let Err(e) = self.free() {
            // The memory would stay exposed past its borrow: stop here.
            eprintln!("oxmpi: {e} (freeing a window on drop); aborting");
            std::process::abort();
        }
    }
}
