! Fortran and C in one program exchanging handles: a communicator and a
! datatype made in Fortran are used in C, a communicator made in C is used in
! Fortran, and a status converts both ways.
program mixed
  use mpi
  use iso_c_binding
  implicit none
  interface
    integer(c_int) function c_side(fcomm, ftype, out, fdup) bind(C, name='c_side')
      import :: c_int
      integer(c_int) :: fcomm, ftype, out(2), fdup
    end function
    integer(c_int) function c_attrs(fcomm, keyval, c_addr) bind(C, name='c_attrs')
      import :: c_int, c_intptr_t
      integer(c_int) :: fcomm, keyval
      integer(c_intptr_t) :: c_addr
    end function
  end interface
  integer :: key
  integer(kind=MPI_ADDRESS_KIND) :: val, caddr
  logical :: flag
  integer :: ierr, rank, np, sub, pairt, dup, out(2), n, cmp
  character(len=MPI_MAX_OBJECT_NAME) :: name
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, 0, np - rank, sub, ierr)
  call MPI_TYPE_CONTIGUOUS(2, MPI_INTEGER, pairt, ierr)
  call MPI_TYPE_COMMIT(pairt, ierr)
  ierr = c_side(sub, pairt, out, dup)
  call check(ierr == MPI_SUCCESS, 'c_side succeeded')
  call MPI_COMM_RANK(sub, n, ierr)
  call check(out(1) == np * (np - 1) / 2 .and. out(2) == np, 'C reduced with the Fortran type')
  call MPI_COMM_GET_NAME(dup, name, n, ierr)
  call check(name == 'from C', 'the C communicator in Fortran')
  call MPI_COMM_COMPARE(dup, sub, cmp, ierr)
  call check(cmp == MPI_CONGRUENT, 'compare with the C duplicate')
  call MPI_ALLREDUCE(1, n, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
  call check(n == np, 'collective on the C communicator')
  ! attributes set in Fortran, read in C, set in C, read in Fortran
  call MPI_COMM_CREATE_KEYVAL(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key, 0_MPI_ADDRESS_KIND, ierr)
  call MPI_COMM_SET_ATTR(dup, key, 4242_MPI_ADDRESS_KIND, ierr)
  call check(c_attrs(dup, key, caddr) == MPI_SUCCESS, 'C reads the Fortran attribute')
  call MPI_COMM_GET_ATTR(dup, key, val, flag, ierr)
  call check(flag .and. val == caddr, 'Fortran reads the C attribute as its address')
  call MPI_COMM_FREE_KEYVAL(key, ierr)
  call MPI_COMM_FREE(dup, ierr)
  call MPI_COMM_FREE(sub, ierr)
  call MPI_TYPE_FREE(pairt, ierr)
  if (rank == 0) print *, 'all checks passed on', np, 'ranks'
  call MPI_FINALIZE(ierr)
contains
  subroutine check(c, what)
    logical :: c
    character(len=*) :: what
    integer :: e
    if (.not. c) then
      print *, 'rank', rank, 'FAILED: ', what
      call MPI_ABORT(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine
end program
