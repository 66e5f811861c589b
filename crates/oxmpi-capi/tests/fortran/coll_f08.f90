! Collectives from `use mpi_f08`, on array sections: reductions whose send and
! receive buffers are strided sections (copied in and out around the call),
! v-collectives on sections, non-blocking collectives on contiguous buffers,
! and a user operation with the mpi_f08 signature (TYPE(C_PTR), VALUE).
module f08_ops
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
contains
  subroutine absmax(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    integer :: i
    if (datatype /= MPI_INTEGER) stop 'absmax: wrong datatype'
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    do i = 1, len
      if (abs(a(i)) > abs(b(i))) b(i) = a(i)
    end do
  end subroutine
end module

program coll_f08
  use mpi_f08
  use f08_ops
  implicit none
  integer, parameter :: n = 6
  integer :: rank, np, i, j, root
  integer :: a(16), b(64), cnts(64), displs(64)
  real :: x(2, n), y(2, n)
  type(MPI_Op) :: op
  type(MPI_Request) :: req
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  root = np / 2

  ! reduce a row of a 2 x n matrix (stride 2) into a row of another
  x = 0
  x(1, :) = [(rank * 10.0 + j, j = 1, n)]
  y = -1
  call MPI_Allreduce(x(1, :), y(2, :), n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD)
  call check(all(y(2, :) == [(10.0 * np * (np - 1) / 2 + np * j, j = 1, n)]), 'allreduce row to row')
  call check(all(y(1, :) == -1), 'allreduce leaves the other row')
  y = -1
  call MPI_Reduce(x(1, n:1:-1), y(1, :), n, MPI_REAL, MPI_MAX, root, MPI_COMM_WORLD)
  if (rank == root) call check(all(y(1, :) == [((np - 1) * 10.0 + j, j = n, 1, -1)]), 'reduce reversed row')
  a = 0
  a(1:2 * n) = [(rank + i, i = 1, 2 * n)]
  call MPI_Allreduce(MPI_IN_PLACE, a(1:2 * n:2), n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  do i = 1, 2 * n
    if (mod(i, 2) == 1) then
      call check(a(i) == np * (np - 1) / 2 + np * i, 'in place on a section')
    else
      call check(a(i) == rank + i, 'in place leaves the gaps')
    end if
  end do
  call MPI_Scan(rank + 1, i, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(i == (rank + 1) * (rank + 2) / 2, 'scan')
  ! allgather into a strided section, gatherv from a section
  b = -7
  call MPI_Allgather(rank * 3, 1, MPI_INTEGER, b(1:3 * np:3), 1, MPI_INTEGER, MPI_COMM_WORLD)
  call check(all(b(1:3 * np:3) == [(3 * i, i = 0, np - 1)]) .and. b(2) == -7, 'allgather into a section')
  do i = 1, np
    cnts(i) = i
    displs(i) = (i - 1) * i / 2
  end do
  a = rank
  b = -1
  call MPI_Gatherv(a(1:2 * (rank + 1):2), rank + 1, MPI_INTEGER, b, cnts, displs, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (rank == 0) then
    do i = 0, np - 1
      call check(all(b(displs(i + 1) + 1:displs(i + 1) + i + 1) == i), 'gatherv')
    end do
  end if
  ! alltoall, bcast, barrier, non-blocking
  a(1:np) = [(100 * rank + i, i = 0, np - 1)]
  call MPI_Alltoall(a, 1, MPI_INTEGER, b, 1, MPI_INTEGER, MPI_COMM_WORLD)
  call check(all(b(1:np) == [(100 * i + rank, i = 0, np - 1)]), 'alltoall')
  call MPI_Iallreduce(rank, i, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check(i == 0, 'iallreduce')
  call MPI_Barrier(MPI_COMM_WORLD)
  ! a user operation
  call MPI_Op_create(absmax, .true., op)
  a(1:2) = [(-1)**rank * rank, rank]
  call MPI_Allreduce(a, b, 2, MPI_INTEGER, op, MPI_COMM_WORLD)
  call check(abs(b(1)) == np - 1 .and. b(2) == np - 1, 'user op')
  call MPI_Op_free(op)
  call check(op == MPI_OP_NULL, 'op_free')
  if (rank == 0) print *, 'all checks passed on', np, 'ranks'
  call MPI_Finalize()
contains
  subroutine check(c, what)
    logical :: c
    character(len=*) :: what
    if (.not. c) then
      print *, 'rank', rank, 'FAILED: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program
