//! Fortran procedures of the environment: MPI_INIT and the string-taking ones,
//! MPI_INFO_CREATE_ENV and MPI_COMM_SPAWN.

use super::*;

// ----- environment -------------------------------------------------------------------

/// # Safety
/// Fortran caller: `ierror` its INTEGER.
#[no_mangle]
pub unsafe extern "C" fn pmpi_init_(ierror: *mut c_int) {
    sentinels();
    // SAFETY: MPI_Init accepts NULL argc/argv.
    unsafe {
        set_ierror(
            ierror,
            crate::pmpi::PMPI_Init(std::ptr::null_mut(), std::ptr::null_mut()),
        )
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_init_(ierror: *mut c_int) {
    // SAFETY: same contract.
    unsafe { pmpi_init_(ierror) }
}

#[no_mangle]
pub unsafe extern "C" fn pmpi_init_thread_(
    required: *const c_int,
    provided: *mut c_int,
    ierror: *mut c_int,
) {
    sentinels();
    // SAFETY: the Fortran caller's INTEGERs; MPI_Init_thread accepts NULL argc/argv.
    unsafe {
        set_ierror(
            ierror,
            crate::pmpi::PMPI_Init_thread(
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                *required,
                provided,
            ),
        )
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_init_thread_(
    required: *const c_int,
    provided: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: same contract.
    unsafe { pmpi_init_thread_(required, provided, ierror) }
}

/// MPI_INFO_GET_STRING(INFO, KEY, BUFLEN, VALUE, FLAG, IERROR): BUFLEN is the
/// length of VALUE in, the length of the value (without C's NUL) out.
#[no_mangle]
pub unsafe extern "C" fn pmpi_info_get_string_(
    info: *const c_int,
    key: *mut c_void,
    buflen: *mut c_int,
    value: *mut c_void,
    flag: *mut c_int,
    ierror: *mut c_int,
    key_len: usize,
    value_len: usize,
) {
    // SAFETY: the Fortran caller's arguments (strings with their hidden lengths).
    unsafe {
        let k = str_in(key, key_len);
        let cap = (*buflen).clamp(0, value_len.min(1 << 30) as c_int);
        let mut v = vec![0 as c_char; cap as usize + 1];
        let mut n = cap + 1;
        let rc = crate::pmpi::PMPI_Info_get_string(
            crate::pmpi::PMPI_Info_f2c(*info),
            k.as_ptr(),
            &mut n,
            v.as_mut_ptr(),
            flag,
        );
        if rc == MPI_SUCCESS && *flag != 0 {
            // BUFLEN = 0 asks only for the length: VALUE is left as it was.
            if cap > 0 {
                str_out(value, value_len, &v);
            }
            *buflen = (n - 1).max(0);
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_info_get_string_(
    info: *const c_int,
    key: *mut c_void,
    buflen: *mut c_int,
    value: *mut c_void,
    flag: *mut c_int,
    ierror: *mut c_int,
    key_len: usize,
    value_len: usize,
) {
    // SAFETY: same contract.
    unsafe { pmpi_info_get_string_(info, key, buflen, value, flag, ierror, key_len, value_len) }
}

// ----- MPI_INFO_CREATE_ENV, MPI_COMM_SPAWN ---------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn pmpi_info_create_env_(info: *mut c_int, ierror: *mut c_int) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's INTEGERs; a Fortran program has no argv to pass.
    unsafe {
        let mut h: MPI_Info = MPI_INFO_NULL;
        let rc = crate::pmpi::PMPI_Info_create_env(0, std::ptr::null_mut(), &mut h);
        if rc == MPI_SUCCESS {
            *info = crate::pmpi::PMPI_Info_c2f(h);
        }
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_info_create_env_(info: *mut c_int, ierror: *mut c_int) {
    // SAFETY: same contract.
    unsafe { pmpi_info_create_env_(info, ierror) }
}

/// MPI_COMM_SPAWN(COMMAND, ARGV, MAXPROCS, INFO, ROOT, COMM, INTERCOMM,
/// ARRAY_OF_ERRCODES, IERROR): ARGV is a CHARACTER array ended by a blank
/// element (or MPI_ARGV_NULL).
#[no_mangle]
pub unsafe extern "C" fn pmpi_comm_spawn_(
    command: *mut c_void,
    argv: *mut c_void,
    maxprocs: *const c_int,
    info: *const c_int,
    root: *const c_int,
    comm: *const c_int,
    intercomm: *mut c_int,
    errcodes_f: *mut c_void,
    ierror: *mut c_int,
    command_len: usize,
    argv_len: usize,
) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's arguments, strings with their hidden lengths.
    unsafe {
        let cmd = str_in(command, command_len);
        let a = argv as usize;
        let argv_null = a == 0
            || a == &raw const mpi_fortran_argv_null_ as usize
            || a == libc::dlsym(libc::RTLD_DEFAULT, c"mpi_fortran_argv_null_".as_ptr()) as usize;
        let mut args: Vec<Vec<c_char>> = vec![];
        if !argv_null && argv_len > 0 {
            loop {
                let a = str_in(
                    (argv as *mut u8).add(args.len() * argv_len) as *mut c_void,
                    argv_len,
                );
                if a.len() <= 1 || args.len() > 4096 {
                    break;
                }
                args.push(a);
            }
        }
        let mut ptrs: Vec<*mut c_char> = args.iter_mut().map(|a| a.as_mut_ptr()).collect();
        ptrs.push(std::ptr::null_mut());
        let c_argv = if argv_null {
            std::ptr::null_mut()
        } else {
            ptrs.as_mut_ptr()
        };
        let mut h: MPI_Comm = MPI_COMM_NULL;
        let rc = crate::pmpi::PMPI_Comm_spawn(
            cmd.as_ptr(),
            c_argv,
            *maxprocs,
            crate::pmpi::PMPI_Info_f2c(*info),
            *root,
            crate::pmpi::PMPI_Comm_f2c(*comm),
            &mut h,
            errcodes(errcodes_f) as *mut c_int,
        );
        *intercomm = crate::pmpi::PMPI_Comm_c2f(h);
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_comm_spawn_(
    command: *mut c_void,
    argv: *mut c_void,
    maxprocs: *const c_int,
    info: *const c_int,
    root: *const c_int,
    comm: *const c_int,
    intercomm: *mut c_int,
    errcodes_f: *mut c_void,
    ierror: *mut c_int,
    command_len: usize,
    argv_len: usize,
) {
    // SAFETY: same contract.
    unsafe {
        pmpi_comm_spawn_(
            command,
            argv,
            maxprocs,
            info,
            root,
            comm,
            intercomm,
            errcodes_f,
            ierror,
            command_len,
            argv_len,
        )
    }
}

/// The opaque call behind MPI_F_SYNC_REG: the compiler must assume it reads
/// and writes the buffer, so it keeps the buffer in memory around it.
#[no_mangle]
pub extern "C" fn oxmpi_f_sync_reg_(_buf: *mut c_void) {
    std::hint::black_box(_buf);
}

/// MPI_F_SYNC_REG of `mpif.h` (the modules' procedures call `oxmpi_f_sync_reg_`).
#[no_mangle]
pub extern "C" fn pmpi_f_sync_reg_(buf: *mut c_void) {
    std::hint::black_box(buf);
}

#[no_mangle]
pub extern "C" fn mpi_f_sync_reg_(buf: *mut c_void) {
    pmpi_f_sync_reg_(buf)
}

#[no_mangle]
pub static mut mpi_fortran_argvs_null_: c_char = 0;

/// MPI_COMM_SPAWN_MULTIPLE(COUNT, ARRAY_OF_COMMANDS, ARRAY_OF_ARGV,
/// ARRAY_OF_MAXPROCS, ARRAY_OF_INFO, ROOT, COMM, INTERCOMM, ARRAY_OF_ERRCODES,
/// IERROR): ARRAY_OF_ARGV is CHARACTER(COUNT, *), command i's arguments
/// along row i (element (i, j) at column-major offset (j-1)*COUNT + i-1),
/// each row ended by a blank element; or MPI_ARGVS_NULL.
#[no_mangle]
pub unsafe extern "C" fn pmpi_comm_spawn_multiple_(
    count: *const c_int,
    commands: *mut c_void,
    argvs: *mut c_void,
    maxprocs: *const c_int,
    infos: *const c_int,
    root: *const c_int,
    comm: *const c_int,
    intercomm: *mut c_int,
    errcodes_f: *mut c_void,
    ierror: *mut c_int,
    commands_len: usize,
    argvs_len: usize,
) {
    let _fortran = crate::conv::errors::FortranCall::enter();
    // SAFETY: the Fortran caller's arguments: COUNT commands, maxprocs and infos, an argument table of COUNT rows, strings with their hidden lengths.
    unsafe {
        let n = (*count).clamp(0, 4096) as usize;
        let a = argvs as usize;
        let argvs_null = a == 0
            || a == &raw const mpi_fortran_argvs_null_ as usize
            || a == libc::dlsym(libc::RTLD_DEFAULT, c"mpi_fortran_argvs_null_".as_ptr()) as usize;
        let mut cmds: Vec<Vec<c_char>> = (0..n)
            .map(|i| {
                str_in(
                    (commands as *mut u8).add(i * commands_len) as *mut c_void,
                    commands_len,
                )
            })
            .collect();
        let mut args: Vec<Vec<Vec<c_char>>> = vec![vec![]; n];
        if !argvs_null && argvs_len > 0 {
            for (i, row) in args.iter_mut().enumerate() {
                loop {
                    let at = (row.len() * n + i) * argvs_len;
                    let s = str_in((argvs as *mut u8).add(at) as *mut c_void, argvs_len);
                    if s.len() <= 1 || row.len() > 4096 {
                        break;
                    }
                    row.push(s);
                }
            }
        }
        let mut cmd_ptrs: Vec<*mut c_char> = cmds.iter_mut().map(|c| c.as_mut_ptr()).collect();
        let mut arg_ptrs: Vec<Vec<*mut c_char>> = args
            .iter_mut()
            .map(|row| {
                let mut p: Vec<*mut c_char> = row.iter_mut().map(|s| s.as_mut_ptr()).collect();
                p.push(std::ptr::null_mut());
                p
            })
            .collect();
        let mut argv_tab: Vec<*mut *mut c_char> =
            arg_ptrs.iter_mut().map(|p| p.as_mut_ptr()).collect();
        let c_infos: Vec<MPI_Info> = if infos.is_null() {
            vec![]
        } else {
            (0..n)
                .map(|i| crate::pmpi::PMPI_Info_f2c(*infos.add(i)))
                .collect()
        };
        let mut h: MPI_Comm = MPI_COMM_NULL;
        let rc = crate::pmpi::PMPI_Comm_spawn_multiple(
            *count,
            if commands.is_null() {
                std::ptr::null_mut()
            } else {
                cmd_ptrs.as_mut_ptr()
            },
            if argvs_null {
                std::ptr::null_mut()
            } else {
                argv_tab.as_mut_ptr()
            },
            maxprocs,
            if infos.is_null() {
                std::ptr::null()
            } else {
                c_infos.as_ptr()
            },
            *root,
            crate::pmpi::PMPI_Comm_f2c(*comm),
            &mut h,
            errcodes(errcodes_f) as *mut c_int,
        );
        *intercomm = crate::pmpi::PMPI_Comm_c2f(h);
        set_ierror(ierror, rc);
    }
}
#[no_mangle]
pub unsafe extern "C" fn mpi_comm_spawn_multiple_(
    count: *const c_int,
    commands: *mut c_void,
    argvs: *mut c_void,
    maxprocs: *const c_int,
    infos: *const c_int,
    root: *const c_int,
    comm: *const c_int,
    intercomm: *mut c_int,
    errcodes_f: *mut c_void,
    ierror: *mut c_int,
    commands_len: usize,
    argvs_len: usize,
) {
    // SAFETY: same contract.
    unsafe {
        pmpi_comm_spawn_multiple_(
            count,
            commands,
            argvs,
            maxprocs,
            infos,
            root,
            comm,
            intercomm,
            errcodes_f,
            ierror,
            commands_len,
            argvs_len,
        )
    }
}
