! Point-to-point, built twice: with `use mpi` and with INCLUDE 'mpif.h' (-DOXMPI_MPIF_H): blocking, synchronous, non-blocking with
! request arrays and status arrays, MPI_STATUSES_IGNORE, probes and counts,
! persistent requests, MPI_PROC_NULL, LOGICAL flags, a ring of DOUBLE PRECISION.
program p2p
#ifndef OXMPI_MPIF_H
  use mpi
#endif
  implicit none
#ifdef OXMPI_MPIF_H
  include 'mpif.h'
#endif
  integer :: ierr, rank, np, left, right, i, cnt, idx
  integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 4), reqs(4), preq(2)
  integer :: ibuf(10), rbuf(10)
  double precision :: d(3), dr(3)
  logical :: flag
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  right = mod(rank + 1, np)
  left = mod(rank - 1 + np, np)

  ! ring with sendrecv
  d = [rank * 1.5d0, rank + 0.25d0, -1d0 * rank]
  call MPI_SENDRECV(d, 3, MPI_DOUBLE_PRECISION, right, 1, dr, 3, MPI_DOUBLE_PRECISION, left, 1, &
                    MPI_COMM_WORLD, st, ierr)
  call check(ierr == MPI_SUCCESS .and. st(MPI_SOURCE) == left .and. st(MPI_TAG) == 1, 'sendrecv status')
  call check(all(dr == [left * 1.5d0, left + 0.25d0, -1d0 * left]), 'sendrecv data')
  call MPI_GET_COUNT(st, MPI_DOUBLE_PRECISION, cnt, ierr)
  call check(cnt == 3, 'get_count')

  ! non-blocking ring, both directions, with a status array
  ibuf = [(rank * 100 + i, i = 1, 10)]
  call MPI_IRECV(rbuf, 10, MPI_INTEGER, left, 2, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_ISEND(ibuf, 10, MPI_INTEGER, right, 2, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_WAITALL(2, reqs, sts, ierr)
  call check(all(reqs(1:2) == MPI_REQUEST_NULL), 'waitall frees requests')
  call check(sts(MPI_SOURCE, 1) == left .and. sts(MPI_TAG, 1) == 2, 'waitall status')
  call check(all(rbuf == [(left * 100 + i, i = 1, 10)]), 'irecv data')

  ! synchronous send, probe, any source
  if (np > 1) then
    if (rank == 0) then
      do i = 1, np - 1
        call MPI_PROBE(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, st, ierr)
        call MPI_GET_COUNT(st, MPI_INTEGER, cnt, ierr)
        call check(cnt == st(MPI_SOURCE), 'probe count')
        call MPI_RECV(rbuf, 10, MPI_INTEGER, st(MPI_SOURCE), 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call check(all(rbuf(1:cnt) == st(MPI_SOURCE)), 'probed data')
      end do
    else
      ibuf = rank
      call MPI_SSEND(ibuf, rank, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, ierr)
    end if
  end if

  ! iprobe with a LOGICAL flag, test loop, waitany
  call MPI_IRECV(rbuf, 1, MPI_INTEGER, left, 4, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_ISEND(rank, 1, MPI_INTEGER, right, 4, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_WAITANY(2, reqs, idx, st, ierr)
  call check(idx == 1 .or. idx == 2, 'waitany index')
  flag = .false.
  do while (.not. flag)
    call MPI_TESTALL(2, reqs, flag, MPI_STATUSES_IGNORE, ierr)
  end do
  call check(rbuf(1) == left, 'waitany/testall data')
  call MPI_IPROBE(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, flag, st, ierr)
  call check(.not. flag, 'iprobe finds nothing')

  ! persistent requests, started three times
  do i = 1, 3
    if (i == 1) then
      call MPI_RECV_INIT(rbuf, 2, MPI_INTEGER, left, 5, MPI_COMM_WORLD, preq(1), ierr)
      call MPI_SEND_INIT(ibuf, 2, MPI_INTEGER, right, 5, MPI_COMM_WORLD, preq(2), ierr)
    end if
    ibuf(1:2) = [rank, i]
    call MPI_STARTALL(2, preq, ierr)
    call MPI_WAITALL(2, preq, MPI_STATUSES_IGNORE, ierr)
    call check(rbuf(1) == left .and. rbuf(2) == i, 'persistent data')
    call check(preq(1) /= MPI_REQUEST_NULL, 'persistent request stays')
  end do
  call MPI_REQUEST_FREE(preq(1), ierr)
  call MPI_REQUEST_FREE(preq(2), ierr)
  call check(preq(1) == MPI_REQUEST_NULL, 'request_free')

  ! MPI_PROC_NULL
  call MPI_RECV(rbuf, 10, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, st, ierr)
  call check(st(MPI_SOURCE) == MPI_PROC_NULL .and. st(MPI_TAG) == MPI_ANY_TAG, 'proc_null status')

  ! a bad rank returns an error class with MPI_ERRORS_RETURN
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_SEND(ibuf, 1, MPI_INTEGER, np + 5, 0, MPI_COMM_WORLD, ierr)
  call MPI_ERROR_CLASS(ierr, cnt, i)
  call check(cnt == MPI_ERR_RANK, 'MPI_ERR_RANK')
  call MPI_SEND(ibuf, 1, 123456, 0, 0, MPI_COMM_WORLD, ierr)
  call MPI_ERROR_CLASS(ierr, cnt, i)
  call check(cnt == MPI_ERR_TYPE, 'a garbage datatype handle is MPI_ERR_TYPE')

#ifndef OXMPI_MPIF_H
  ! MPI_SIZEOF (a generic of the module)
  call MPI_SIZEOF(d, cnt, ierr)
  call check(cnt == 8 .and. ierr == MPI_SUCCESS, 'MPI_SIZEOF of DOUBLE PRECISION')
  call MPI_SIZEOF(ibuf, cnt, ierr)
  call check(cnt == 4, 'MPI_SIZEOF of an INTEGER array')
#endif

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
