! The Fortran profiling interface: the program defines its own MPI_SEND and
! MPI_BCAST (for mpi_f08 the standard's specific names MPI_Send_f08ts and
! MPI_Bcast_f08ts), each counting its calls and calling PMPI_x; the program's
! calls through the binding must reach them, and their PMPI_x calls the library.
! Built three ways: -DOXMPI_MPIF_H (INCLUDE 'mpif.h'), -DOXMPI_F08 (USE mpi_f08),
! neither (USE mpi).
module prof_counts
  implicit none
  integer :: nsend = 0, nbcast = 0, nsend_noerr = 0
end module

program profile
  use prof_counts
#if defined(OXMPI_F08)
  use mpi_f08
  type(MPI_Status) :: st
#elif defined(OXMPI_MPIF_H)
  implicit none
  include 'mpif.h'
  integer :: st(MPI_STATUS_SIZE)
#else
  use mpi
  implicit none
  integer :: st(MPI_STATUS_SIZE)
#endif
  integer :: rank, size, ierr, errs, i, v(4), w(4)

  errs = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  ! Ring: each rank sends twice to the next one and receives twice.
  v = [(rank * 10 + i, i = 1, 4)]
  if (size > 1) then
    if (rank == 0) then
      call MPI_Send(v, 4, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
#if defined(OXMPI_F08)
      call MPI_Send(v, 2, MPI_INTEGER, 1, 8, MPI_COMM_WORLD)
#else
      call MPI_Send(v, 2, MPI_INTEGER, 1, 8, MPI_COMM_WORLD, ierr)
#endif
    else if (rank == 1) then
      w = -1
      call MPI_Recv(w, 4, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, st, ierr)
      if (any(w /= [1, 2, 3, 4])) errs = errs + 1
      call MPI_Recv(w, 4, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, st, ierr)
      if (any(w(1:2) /= [1, 2])) errs = errs + 1
    end if
  end if
  w = -1
  if (rank == 0) w = [5, 6, 7, 8]
  call MPI_Bcast(w, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (any(w /= [5, 6, 7, 8])) errs = errs + 1
  if (ierr /= MPI_SUCCESS) errs = errs + 1
  ! The calls made through the wrappers, and only those.
  if (nbcast /= 1) then
    print *, 'rank', rank, ': MPI_Bcast wrapper called', nbcast, 'times'
    errs = errs + 1
  end if
  if (rank == 0 .and. size > 1 .and. nsend /= 2 .or. rank /= 0 .and. nsend /= 0) then
    print *, 'rank', rank, ': MPI_Send wrapper called', nsend, 'times'
    errs = errs + 1
  end if
#if defined(OXMPI_F08)
  if (rank == 0 .and. size > 1 .and. nsend_noerr /= 1) then
    print *, 'rank', rank, ': MPI_Send wrapper without ierror called', nsend_noerr, 'times'
    errs = errs + 1
  end if
#endif
  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (errs == 0) then
      print '(a,i0,a)', 'all checks passed on ', size, ' ranks'
    else
      print *, errs, 'errors'
    end if
  end if
  call MPI_Finalize(ierr)
  if (errs /= 0) stop 1
end program

#if defined(OXMPI_F08)
! As the standard's example: the USE renames the module's own name for this
! specific procedure away.
subroutine MPI_Send_f08ts(buf, count, datatype, dest, tag, comm, ierror)
  use :: mpi_f08, my_noname => MPI_Send_f08ts
  use prof_counts
  implicit none
  type(*), dimension(..), intent(in) :: buf
  integer, intent(in) :: count, dest, tag
  type(MPI_Datatype), intent(in) :: datatype
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  nsend = nsend + 1
  if (present(ierror)) then
    call PMPI_Send(buf, count, datatype, dest, tag, comm, ierror)
  else
    nsend_noerr = nsend_noerr + 1
    call PMPI_Send(buf, count, datatype, dest, tag, comm)
  end if
end subroutine

subroutine MPI_Bcast_f08ts(buffer, count, datatype, root, comm, ierror)
  use :: mpi_f08, my_noname => MPI_Bcast_f08ts
  use prof_counts
  implicit none
  type(*), dimension(..) :: buffer
  integer, intent(in) :: count, root
  type(MPI_Datatype), intent(in) :: datatype
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  nbcast = nbcast + 1
  call PMPI_Bcast(buffer, count, datatype, root, comm, ierror)
end subroutine
#else
subroutine MPI_SEND(buf, count, datatype, dest, tag, comm, ierror)
  use prof_counts
#if defined(OXMPI_MPIF_H)
  implicit none
  include 'mpif.h'
#else
  ! The module's interface of MPI_SEND would name this procedure twice.
  use mpi, my_noname => MPI_SEND
  implicit none
#endif
  integer :: buf(*), count, datatype, dest, tag, comm, ierror
  nsend = nsend + 1
  call PMPI_SEND(buf, count, datatype, dest, tag, comm, ierror)
end subroutine

subroutine MPI_BCAST(buffer, count, datatype, root, comm, ierror)
  use prof_counts
#if defined(OXMPI_MPIF_H)
  implicit none
  include 'mpif.h'
#else
  use mpi, my_noname => MPI_BCAST
  implicit none
#endif
  integer :: buffer(*), count, datatype, root, comm, ierror
  nbcast = nbcast + 1
  call PMPI_BCAST(buffer, count, datatype, root, comm, ierror)
end subroutine
#endif
