//! Windows of typed memory for the Rust API: a [`TypedWindow`] over memory the
//! program lends (`MPI_Win_create` over a `&'a mut [T]`, kept borrowed until the
//! window is freed) or that the library allocates, with this process's part as a
//! `&mut [T]` ([`TypedWindow::local`]) and copies of a shared window's parts
//! ([`TypedWindow::shared`]). The window itself ([`Window`]) is lent only by
//! reference, so nothing outlives the memory it exposes; dropping the value frees the
//! window (collectively) before the borrow can end.
//!
//! A window over a borrowed slice exposes a copy of it that the window owns
//! (`CallerMem::copy_of`, made at creation and written back to the slice when the
//! window is freed): a `TypedWindow` forgotten (`std::mem::forget`) is never freed, but
//! what it keeps exposed is that copy, kept alive with it, never the slice whose
//! borrow ended. Its local view is a `LocalMem`, made once per memory, so this module
//! has no `unsafe`.

use std::sync::Arc;

use super::{Flavor, Window};
use crate::buf::AnyBytes;
use crate::comm::Comm;
use crate::error::{ErrorClass, MpiError, Result};
use crate::transport::winmem::{CallerMem, LocalMem};

/// A window of `T`s over memory valid for `'a` (see the module's comment).
pub struct TypedWindow<'a, T> {
    win: Arc<Window>,
    /// This process's window memory as `T`s (its one view).
    local: LocalMem<T>,
    /// The slice a window over borrowed memory writes its copy back to when freed.
    back: Option<&'a mut [T]>,
    any: AnyBytes<T>,
    freed: bool,
}

impl<T> std::fmt::Debug for TypedWindow<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedWindow")
            .field("len", &self.local.len())
            .field("freed", &self.freed)
            .finish()
    }
}

impl<'a, T> TypedWindow<'a, T> {
    /// `MPI_Win_create` over `mem` (collective over `comm`), displacement unit
    /// `size_of::<T>()`; `mem` stays borrowed until the window is freed, the window
    /// exposing a copy of it meanwhile (written back when freed).
    pub fn create(
        comm: &Comm,
        mem: &'a mut [T],
        any: AnyBytes<T>,
        call: &str,
    ) -> Result<TypedWindow<'a, T>> {
        let bytes = std::mem::size_of_val(mem);
        let (caller, local) = CallerMem::copy_of(mem, any);
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
            local,
            back: Some(mem),
            any,
            freed: false,
        })
    }

    /// The window, for its operations and synchronization (borrowed: no handle of it
    /// outlives this value).
    pub fn window(&self) -> &Window {
        &self.win
    }

    /// Elements of this process's window memory.
    pub fn len(&self) -> usize {
        self.local.len()
    }

    /// Whether this process's part is empty.
    pub fn is_empty(&self) -> bool {
        self.local.is_empty()
    }

    /// This process's window memory. MPI's rule that local accesses do not overlap
    /// other processes' accesses is the program's (between fences, after unlocks);
    /// what they write is bytes, valid `T`s (`AnyBytes`).
    pub fn local(&mut self) -> &mut [T] {
        self.local.as_mut()
    }

    /// Copies of `rank`'s part of a shared window (`MPI_Win_shared_query`, read
    /// directly from the shared mapping: unaligned element reads).
    pub fn shared(&self, rank: i32) -> Result<Vec<T>> {
        Ok(match self.win.shared_mapped(rank)? {
            Some(m) => m.read_elems(self.any),
            None => Vec::new(),
        })
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
        if let Some(back) = self.back.take() {
            self.local.copy_to(back);
        }
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
        any: AnyBytes<T>,
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
        let len = if std::mem::size_of::<T>() == 0 {
            0
        } else {
            len
        };
        let local = win.local_mem(len, any, call)?;
        Ok(TypedWindow {
            win,
            local,
            back: None,
            any,
            freed: false,
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
