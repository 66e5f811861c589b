! `use mpi_f08`: typed handles, optional ierror, TYPE(MPI_Status), and choice
! buffers as array sections: a strided a(1:n:2) sent and received, a 2-D
! section, non-blocking receive into a section, collectives on sections.
program f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 10
  integer :: rank, np, right, left, i, ierr, cnt, key
  real :: a(n), b(n)
  double precision :: m(4, 5), r(4, 5)
  integer :: iv(2 * n), ov(2 * n)
  type(MPI_Comm) :: dup
  type(MPI_Status) :: st
  type(MPI_Request) :: req
  integer(kind=MPI_ADDRESS_KIND) :: val
  logical :: flag
  integer(kind=MPI_COUNT_KIND) :: bigcnt
  type(MPI_Request) :: reqs(4)
  type(MPI_Status) :: sts(2)
  double precision :: t0
  type(MPI_Datatype) :: rowt, st1, st2
  integer(kind=MPI_ADDRESS_KIND) :: disp(2)
  integer :: si, ri, j
  double precision :: sd, rd
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call check(ierr == MPI_SUCCESS, 'optional ierror')
  right = mod(rank + 1, np)
  left = mod(rank - 1 + np, np)

  ! a strided section: every second element
  a = [(rank * 100.0 + i, i = 1, n)]
  b = -1.0
  call MPI_Sendrecv(a(1:n:2), n / 2, MPI_REAL, right, 0, b(2:n:2), n / 2, MPI_REAL, left, 0, MPI_COMM_WORLD, st)
  call check(st%MPI_SOURCE == left .and. st%MPI_TAG == 0, 'status components')
  call MPI_Get_count(st, MPI_REAL, cnt)
  call check(cnt == n / 2, 'get_count')
  do i = 1, n
    if (mod(i, 2) == 0) then
      call check(b(i) == left * 100.0 + i - 1, 'strided receive')
    else
      call check(b(i) == -1.0, 'gaps untouched')
    end if
  end do
  ! plain send/recv of a section to the right
  if (np > 1) then
    if (mod(rank, 2) == 0) then
      call MPI_Send(a(n:1:-3), 4, MPI_REAL, right, 1, MPI_COMM_WORLD)
      call MPI_Recv(b(1:4), 4, MPI_REAL, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    else
      call MPI_Recv(b(1:4), 4, MPI_REAL, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      call MPI_Send(a(n:1:-3), 4, MPI_REAL, right, 1, MPI_COMM_WORLD)
    end if
    call check(all(b(1:4) == [(left * 100.0 + i, i = n, 1, -3)]), 'reversed section')
  end if

  ! request arrays, status arrays, MPI_STATUSES_IGNORE, MPI_Wtime
  t0 = MPI_Wtime()
  b = -1.0
  call MPI_Irecv(b(1:5), 5, MPI_REAL, left, 8, MPI_COMM_WORLD, reqs(1))
  call MPI_Irecv(b(6:10), 5, MPI_REAL, left, 9, MPI_COMM_WORLD, reqs(2))
  call MPI_Isend(a(1:5), 5, MPI_REAL, right, 8, MPI_COMM_WORLD, reqs(3))
  call MPI_Isend(a(6:10), 5, MPI_REAL, right, 9, MPI_COMM_WORLD, reqs(4))
  call MPI_Waitall(2, reqs(3:4), MPI_STATUSES_IGNORE)
  call MPI_Waitall(2, reqs(1:2), sts)
  call check(all(reqs == MPI_REQUEST_NULL), 'waitall frees the requests')
  call check(sts(1)%MPI_TAG == 8 .and. sts(2)%MPI_TAG == 9 .and. sts(2)%MPI_SOURCE == left, 'status array')
  call check(all(b == [(left * 100.0 + i, i = 1, n)]), 'waitall data')
  call check(MPI_Wtime() >= t0, 'MPI_Wtime')

  ! the large-count overloads (INTEGER(KIND=MPI_COUNT_KIND) counts)
  b = -1.0
  call MPI_Sendrecv(a(2:n:2), int(n / 2, MPI_COUNT_KIND), MPI_REAL, right, 9, b(1:n / 2), int(n / 2, MPI_COUNT_KIND), &
                    MPI_REAL, left, 9, MPI_COMM_WORLD, st)
  call MPI_Get_count(st, MPI_REAL, bigcnt)
  call check(bigcnt == n / 2 .and. all(b(1:n / 2) == [(left * 100.0 + i, i = 2, n, 2)]), 'large-count sendrecv')

  ! a 2-D section into a non-blocking receive
  m = reshape([(rank * 1000d0 + i, i = 1, 20)], [4, 5])
  r = 0
  call MPI_Irecv(r(2:3, 1:5:2), 6, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, req)
  call MPI_Send(m(1:4:3, 2:4), 6, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD)
  call MPI_Wait(req, st)
  call check(req == MPI_REQUEST_NULL, 'request handle equality')
  call check(r(2, 1) == left * 1000d0 + 5 .and. r(3, 1) == left * 1000d0 + 8, '2-D section (1)')
  call check(r(2, 3) == left * 1000d0 + 9 .and. r(3, 5) == left * 1000d0 + 16, '2-D section (2)')
  call check(r(1, 1) == 0 .and. r(2, 2) == 0 .and. r(4, 5) == 0, '2-D section gaps')

  ! collectives on sections
  iv = [(rank + i, i = 1, 2 * n)]
  ov = 0
  ov = 0
  call MPI_Gather(iv(2:2 * n:2), 1, MPI_INTEGER, ov, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (rank == 0) call check(all(ov(1:np) == [(i + 2, i = 0, np - 1)]), 'gather from a section')
  call MPI_Allreduce(iv(1:n), ov(1:n), n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(all(ov(1:n) == [(np * (np - 1) / 2 + np * i, i = 1, n)]), 'allreduce of contiguous sections')
  ov = 0
  if (rank == 0) ov(1:2 * n:2) = [(i, i = 1, n)]
  call MPI_Bcast(ov(1:2 * n:2), n, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call check(all(ov(1:2 * n:2) == [(i, i = 1, n)]) .and. all(ov(2:2 * n:2) == 0), 'bcast into a section')
  call MPI_Allreduce(MPI_IN_PLACE, iv, 2 * n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
  call check(all(iv == [(np - 1 + i, i = 1, 2 * n)]), 'MPI_IN_PLACE')

  ! derived datatypes with typed handles: a matrix row, and a struct from MPI_BOTTOM
  call MPI_Type_vector(5, 1, 4, MPI_DOUBLE_PRECISION, rowt)
  call MPI_Type_commit(rowt)
  r = 0
  call MPI_Sendrecv(m(2, 1), 1, rowt, right, 3, r(4, 1), 1, rowt, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check(all(r(4, :) == [(left * 1000d0 + 2 + 4 * (j - 1), j = 1, 5)]) .and. all(r(1:3, :) == 0), 'vector type row')
  call MPI_Type_free(rowt)
  call check(rowt == MPI_DATATYPE_NULL, 'type_free')
  si = rank
  sd = rank * 0.5d0
  call MPI_Get_address(si, disp(1))
  call MPI_Get_address(sd, disp(2))
  call MPI_Type_create_struct(2, [1, 1], disp, [MPI_INTEGER, MPI_DOUBLE_PRECISION], st1)
  call MPI_Type_commit(st1)
  call MPI_Get_address(ri, disp(1))
  call MPI_Get_address(rd, disp(2))
  call MPI_Type_create_struct(2, [1, 1], disp, [MPI_INTEGER, MPI_DOUBLE_PRECISION], st2)
  call MPI_Type_commit(st2)
  call MPI_Sendrecv(MPI_BOTTOM, 1, st1, right, 4, MPI_BOTTOM, 1, st2, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check(ri == left .and. rd == left * 0.5d0, 'struct from MPI_BOTTOM')
  call MPI_Type_free(st1)
  call MPI_Type_free(st2)

  ! communicators and attributes with typed handles
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call check(dup /= MPI_COMM_WORLD, 'handle inequality')
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup, key, 42_MPI_ADDRESS_KIND)
  call MPI_Comm_get_attr(dup, key, val, flag)
  call check(flag .and. val == 42, 'attributes')
  call MPI_Comm_free(dup)
  call check(dup == MPI_COMM_NULL, 'comm_free')
  call MPI_Sizeof(m, i)
  call check(i == 8, 'MPI_Sizeof of a DOUBLE PRECISION array')
  call MPI_F_sync_reg(b)
  call MPI_Barrier(MPI_COMM_WORLD)
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
