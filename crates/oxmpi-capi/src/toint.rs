//! The standard ABI's `MPI_<Handle>_toint/_fromint` (MPI-5.0): handle <-> int conversions.

use std::ffi::c_int;

use crate::types::*;

// ----- handle <-> int conversions of the standard ABI ---------------------------------------------

macro_rules! toint {
    ($($to:ident, $from:ident, $c2f:path, $f2c:path, $ty:ty;)*) => {$(
        /// The standard ABI's integer for a handle: the same integer the Fortran conversion gives.
        #[no_mangle]
        pub unsafe extern "C" fn $to(h: $ty) -> c_int {
            // SAFETY: a pure handle-table lookup; no pointer is dereferenced.
            unsafe { $c2f(h) }
        }
        /// The handle of a standard ABI integer.
        #[no_mangle]
        pub unsafe extern "C" fn $from(i: c_int) -> $ty {
            // SAFETY: a pure handle-table lookup; no pointer is dereferenced.
            unsafe { $f2c(i) }
        }
    )*};
}

toint! {
    PMPI_Comm_toint, PMPI_Comm_fromint, crate::env::PMPI_Comm_c2f, crate::env::PMPI_Comm_f2c, MPI_Comm;
    PMPI_Errhandler_toint, PMPI_Errhandler_fromint, crate::env::PMPI_Errhandler_c2f, crate::env::PMPI_Errhandler_f2c, MPI_Errhandler;
    PMPI_File_toint, PMPI_File_fromint, crate::file::PMPI_File_c2f, crate::file::PMPI_File_f2c, MPI_File;
    PMPI_Group_toint, PMPI_Group_fromint, crate::group::PMPI_Group_c2f, crate::group::PMPI_Group_f2c, MPI_Group;
    PMPI_Info_toint, PMPI_Info_fromint, crate::env::PMPI_Info_c2f, crate::env::PMPI_Info_f2c, MPI_Info;
    PMPI_Message_toint, PMPI_Message_fromint, crate::env::PMPI_Message_c2f, crate::env::PMPI_Message_f2c, MPI_Message;
    PMPI_Op_toint, PMPI_Op_fromint, crate::env::PMPI_Op_c2f, crate::env::PMPI_Op_f2c, MPI_Op;
    PMPI_Request_toint, PMPI_Request_fromint, crate::env::PMPI_Request_c2f, crate::env::PMPI_Request_f2c, MPI_Request;
    PMPI_Session_toint, PMPI_Session_fromint, crate::session::PMPI_Session_c2f, crate::session::PMPI_Session_f2c, MPI_Session;
    PMPI_Type_toint, PMPI_Type_fromint, crate::env::PMPI_Type_c2f, crate::env::PMPI_Type_f2c, MPI_Datatype;
    PMPI_Win_toint, PMPI_Win_fromint, crate::win::PMPI_Win_c2f, crate::win::PMPI_Win_f2c, MPI_Win;
}
