! Every collective, built with INCLUDE 'mpif.h' and with `use mpi` (-DOXMPI_USE_MPI), with Fortran datatypes: MPI_IN_PLACE,
! the v/w variants, MAXLOC on MPI_2INTEGER and MPI_2DOUBLE_PRECISION, LOGICAL
! reductions, COMPLEX sums, non-blocking collectives and a user operation
! written in Fortran.
subroutine cmul(a, b, n, t)
#ifdef OXMPI_USE_MPI
  use mpi
#endif
  implicit none
#ifndef OXMPI_USE_MPI
  include 'mpif.h'
#endif
  integer :: n, t, i
  integer :: a(n), b(n)
  ! b = a + b + 1 : commutative but not predefined
  if (t /= MPI_INTEGER) stop 'user op got the wrong datatype'
  do i = 1, n
    b(i) = a(i) + b(i) + 1
  end do
end subroutine

program coll
#ifdef OXMPI_USE_MPI
  use mpi
#endif
  implicit none
#ifndef OXMPI_USE_MPI
  include 'mpif.h'
#endif
  external :: cmul
  integer :: ierr, rank, np, i, j, root, op, req, t2
  integer :: sc(0:63), sd(0:63), rc(0:63), rd(0:63), types(0:63)
  integer, allocatable :: a(:), b(:)
  integer :: pair(2), pin(2)
  double precision :: dp(2), dpo(2)
  logical :: l, lo
  complex :: z, zs
  real :: r(4)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  allocate (a(0:4 * np), b(0:4 * np))
  root = np - 1

  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  ! bcast of REALs
  r = 0.0
  if (rank == root) r = [1.0, 2.5, -3.0, 4.0]
  call MPI_BCAST(r, 4, MPI_REAL, root, MPI_COMM_WORLD, ierr)
  call check(all(r == [1.0, 2.5, -3.0, 4.0]), 'bcast')
  ! gather / scatter
  b = -1
  call MPI_GATHER(rank * 10, 1, MPI_INTEGER, b, 1, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  if (rank == root) call check(all(b(0:np - 1) == [(10 * i, i = 0, np - 1)]), 'gather')
  a(0:np - 1) = [(i * i, i = 0, np - 1)]
  call MPI_SCATTER(a, 1, MPI_INTEGER, j, 1, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  call check(j == rank * rank, 'scatter')
  ! gatherv: rank i sends i+1 values
  do i = 0, np - 1
    rc(i) = i + 1
    rd(i) = i * (i + 1) / 2
  end do
  a(0:rank) = rank
  b = -1
  call MPI_GATHERV(a, rank + 1, MPI_INTEGER, b, rc, rd, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 0, np - 1
      call check(all(b(rd(i):rd(i) + i) == i), 'gatherv')
    end do
  end if
  ! scatterv back
  a = -1
  call MPI_SCATTERV(b, rc, rd, MPI_INTEGER, a, rank + 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call check(all(a(0:rank) == rank), 'scatterv')
  ! allgather, allgatherv
  call MPI_ALLGATHER(rank + 7, 1, MPI_INTEGER, b, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(b(0:np - 1) == [(i + 7, i = 0, np - 1)]), 'allgather')
  a(0:rank) = rank
  call MPI_ALLGATHERV(a, rank + 1, MPI_INTEGER, b, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 0, np - 1
    call check(all(b(rd(i):rd(i) + i) == i), 'allgatherv')
  end do
  ! alltoall: a(i) = 100*rank + i to rank i
  a(0:np - 1) = [(100 * rank + i, i = 0, np - 1)]
  call MPI_ALLTOALL(a, 1, MPI_INTEGER, b, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(b(0:np - 1) == [(100 * i + rank, i = 0, np - 1)]), 'alltoall')
  ! alltoallv and alltoallw with one element per pair
  do i = 0, np - 1
    sc(i) = 1
    sd(i) = i
    types(i) = MPI_INTEGER
  end do
  call MPI_ALLTOALLV(a, sc, sd, MPI_INTEGER, b, sc, sd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(b(0:np - 1) == [(100 * i + rank, i = 0, np - 1)]), 'alltoallv')
  b = -1
  sd(0:np - 1) = [(4 * i, i = 0, np - 1)]
  call MPI_ALLTOALLW(a, sc, sd, types, b, sc, sd, types, MPI_COMM_WORLD, ierr)
  call check(all(b(0:np - 1) == [(100 * i + rank, i = 0, np - 1)]), 'alltoallw')
  ! reduce, allreduce in place
  call MPI_REDUCE(rank + 1, j, 1, MPI_INTEGER, MPI_PROD, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(j == product([(i, i = 1, np)]), 'reduce prod')
  a(0:2) = [rank, -rank, 1]
  call MPI_ALLREDUCE(MPI_IN_PLACE, a, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(all(a(0:2) == [np * (np - 1) / 2, -np * (np - 1) / 2, np]), 'allreduce in place')
  ! MAXLOC on pairs
  pin = [mod(rank * 7, 5), rank]
  call MPI_ALLREDUCE(pin, pair, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  j = maxval([(mod(i * 7, 5), i = 0, np - 1)])
  call check(pair(1) == j .and. mod(pair(2) * 7, 5) == j, 'maxloc 2integer')
  dp = [-dble(rank), dble(rank)]
  call MPI_ALLREDUCE(dp, dpo, 1, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  call check(dpo(1) == -dble(np - 1) .and. dpo(2) == dble(np - 1), 'minloc 2double_precision')
  ! LOGICAL reductions
  l = rank == 0
  call MPI_ALLREDUCE(l, lo, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(lo, 'lor')
  call MPI_ALLREDUCE(l, lo, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(lo .eqv. (np == 1), 'land')
  ! COMPLEX sum
  z = cmplx(rank, 1)
  call MPI_ALLREDUCE(z, zs, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(zs == cmplx(np * (np - 1) / 2, np), 'complex sum')
  ! reduce_scatter(_block), scan, exscan
  a(0:np - 1) = [(rank + i, i = 0, np - 1)]
  call MPI_REDUCE_SCATTER_BLOCK(a, j, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(j == np * (np - 1) / 2 + np * rank, 'reduce_scatter_block')
  sc(0:np - 1) = 1
  call MPI_REDUCE_SCATTER(a, j, sc, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(j == np - 1 + rank, 'reduce_scatter')
  call MPI_SCAN(rank + 1, j, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(j == (rank + 1) * (rank + 2) / 2, 'scan')
  j = -5
  call MPI_EXSCAN(rank + 1, j, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank > 0) call check(j == rank * (rank + 1) / 2, 'exscan')
  ! non-blocking
  j = 0
  if (rank == 0) j = 42
  call MPI_IBCAST(j, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, req, ierr)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call check(j == 42 .and. req == MPI_REQUEST_NULL, 'ibcast')
  call MPI_IALLREDUCE(rank, j, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req, ierr)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call check(j == np - 1, 'iallreduce')
  call MPI_IBARRIER(MPI_COMM_WORLD, req, ierr)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  ! a user operation written in Fortran
  call MPI_OP_CREATE(cmul, .true., op, ierr)
  call MPI_ALLREDUCE([rank, 2 * rank], pair, 2, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
  call check(pair(1) == np * (np - 1) / 2 + np - 1 .and. pair(2) == np * (np - 1) + np - 1, 'user op')
  call MPI_OP_FREE(op, ierr)
  call check(op == MPI_OP_NULL, 'op_free')
  ! sized types
  call MPI_TYPE_SIZE(MPI_INTEGER8, j, ierr)
  call check(j == 8, 'MPI_INTEGER8 size')
  ! The F90 types are handles of their own (combiner MPI_COMBINER_F90_*), with the
  ! size of the kind SELECTED_REAL_KIND / SELECTED_INT_KIND picks.
  call MPI_TYPE_CREATE_F90_REAL(12, 100, t2, ierr)
  call check(ierr == MPI_SUCCESS, 'create_f90_real')
  call MPI_TYPE_SIZE(t2, j, ierr)
  call check(j == 8, 'create_f90_real size')
  call MPI_TYPE_CREATE_F90_INTEGER(4, t2, ierr)
  call check(ierr == MPI_SUCCESS, 'create_f90_integer')
  call MPI_TYPE_SIZE(t2, j, ierr)
  call check(j == 2, 'create_f90_integer size')
  call MPI_TYPE_MATCH_SIZE(MPI_TYPECLASS_REAL, 8, t2, ierr)
  call check(t2 == MPI_REAL8 .or. t2 == MPI_DOUBLE_PRECISION .or. t2 == MPI_DOUBLE, 'type_match_size real 8')
  call MPI_TYPE_SIZE(t2, j, ierr)
  call check(j == 8, 'matched type has 8 bytes')

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
