! Derived datatypes (built with `use mpi` and with INCLUDE 'mpif.h') on Fortran arrays (column-major): a row of
! a matrix as a vector, a subarray in MPI_ORDER_FORTRAN, a struct built with
! MPI_GET_ADDRESS and sent from MPI_BOTTOM, indexed types, pack/unpack, names.
program dtype
#ifndef OXMPI_MPIF_H
  use mpi
#endif
  implicit none
#ifdef OXMPI_MPIF_H
  include 'mpif.h'
#endif
  integer, parameter :: n = 6
  integer :: ierr, rank, np, right, left, rowt, subt, st, idxt, i, j, sz, pos
  integer :: m(n, n), r(n, n), blens(3), types(3), sub(2, 2)
  integer(kind=MPI_ADDRESS_KIND) :: disps(3), lb, ext
  integer :: iv
  double precision :: dv
  character(len=4) :: cv
  integer :: iv2
  double precision :: dv2
  character(len=4) :: cv2
  character(len=100) :: packbuf
  character(len=MPI_MAX_OBJECT_NAME) :: name
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  right = mod(rank + 1, np)
  left = mod(rank - 1 + np, np)
  do j = 1, n
    do i = 1, n
      m(i, j) = 1000 * rank + 10 * i + j
    end do
  end do

  ! row 2 of m: n elements with stride n
  call MPI_TYPE_VECTOR(n, 1, n, MPI_INTEGER, rowt, ierr)
  call MPI_TYPE_COMMIT(rowt, ierr)
  call MPI_TYPE_SIZE(rowt, sz, ierr)
  call MPI_TYPE_GET_EXTENT(rowt, lb, ext, ierr)
  call check(sz == 4 * n .and. lb == 0 .and. ext == 4 * ((n - 1) * n + 1), 'vector size/extent')
  r = -1
  call MPI_SENDRECV(m(2, 1), 1, rowt, right, 0, r(3, 1), 1, rowt, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(all(r(3, :) == [(1000 * left + 20 + j, j = 1, n)]) .and. all(r(1, :) == -1), 'row by vector type')
  call MPI_TYPE_SET_NAME(rowt, 'row', ierr)
  call MPI_TYPE_GET_NAME(rowt, name, i, ierr)
  call check(name == 'row' .and. i == 3, 'type names')
  call MPI_TYPE_FREE(rowt, ierr)
  call check(rowt == MPI_DATATYPE_NULL, 'type_free')

  ! the 2x3 block starting at (2,3), Fortran order
  call MPI_TYPE_CREATE_SUBARRAY(2, [n, n], [2, 3], [1, 2], MPI_ORDER_FORTRAN, MPI_INTEGER, subt, ierr)
  call MPI_TYPE_COMMIT(subt, ierr)
  r = -1
  call MPI_SENDRECV(m, 1, subt, right, 1, r, 1, subt, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  do j = 1, n
    do i = 1, n
      if (i >= 2 .and. i <= 3 .and. j >= 3 .and. j <= 5) then
        call check(r(i, j) == 1000 * left + 10 * i + j, 'subarray element')
      else
        call check(r(i, j) == -1, 'outside the subarray')
      end if
    end do
  end do
  call MPI_TYPE_FREE(subt, ierr)

  ! indexed: the diagonal
  call MPI_TYPE_CREATE_INDEXED_BLOCK(n, 1, [((n + 1) * i, i = 0, n - 1)], MPI_INTEGER, idxt, ierr)
  call MPI_TYPE_COMMIT(idxt, ierr)
  r = -1
  call MPI_SENDRECV(m, 1, idxt, right, 2, r, 1, idxt, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(all([(r(i, i), i = 1, n)] == [(1000 * left + 11 * i, i = 1, n)]), 'indexed diagonal')
  call MPI_TYPE_FREE(idxt, ierr)

  ! a struct of three separate variables, addressed absolutely from MPI_BOTTOM
  iv = rank
  dv = rank + 0.5d0
  cv = 'ab' // achar(iachar('0') + mod(rank, 10)) // 'z'
  call MPI_GET_ADDRESS(iv, disps(1), ierr)
  call MPI_GET_ADDRESS(dv, disps(2), ierr)
  call MPI_GET_ADDRESS(cv, disps(3), ierr)
  blens = [1, 1, 4]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION, MPI_CHARACTER]
  call MPI_TYPE_CREATE_STRUCT(3, blens, disps, types, st, ierr)
  call MPI_TYPE_COMMIT(st, ierr)
  call MPI_GET_ADDRESS(iv2, disps(1), ierr)
  call MPI_GET_ADDRESS(dv2, disps(2), ierr)
  call MPI_GET_ADDRESS(cv2, disps(3), ierr)
  call MPI_TYPE_CREATE_STRUCT(3, blens, disps, types, sub(1, 1), ierr)
  call MPI_TYPE_COMMIT(sub(1, 1), ierr)
  call MPI_SENDRECV(MPI_BOTTOM, 1, st, right, 3, MPI_BOTTOM, 1, sub(1, 1), left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(iv2 == left .and. dv2 == left + 0.5d0 .and. cv2 == 'ab' // achar(iachar('0') + mod(left, 10)) // 'z', &
             'struct from MPI_BOTTOM')
  call MPI_TYPE_FREE(st, ierr)
  call MPI_TYPE_FREE(sub(1, 1), ierr)

  ! pack / unpack
  pos = 0
  call MPI_PACK(iv, 1, MPI_INTEGER, packbuf, 100, pos, MPI_COMM_WORLD, ierr)
  call MPI_PACK(dv, 1, MPI_DOUBLE_PRECISION, packbuf, 100, pos, MPI_COMM_WORLD, ierr)
  call check(pos == 12, 'pack position')
  pos = 0
  call MPI_UNPACK(packbuf, 100, pos, iv2, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_UNPACK(packbuf, 100, pos, dv2, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  call check(iv2 == rank .and. dv2 == rank + 0.5d0, 'unpack')

  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
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
