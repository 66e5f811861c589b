! PAR_BLAS1 (a distributed dot product reduced to rank 0) and PAR_BLAS2 (a
! distributed vector-matrix product, reduced to rank 0 and all-reduced to
! every rank), in REAL with MPI_REAL and MPI_SUM, checked against the serial
! products every rank computes from the whole data.
subroutine par_blas1(m, a, b, c, comm)
  implicit none
  include 'mpif.h'
  integer :: m, comm, i, ierr
  real :: a(m), b(m), c, s
  s = 0.0
  do i = 1, m
    s = s + a(i) * b(i)
  end do
  call MPI_REDUCE(s, c, 1, MPI_REAL, MPI_SUM, 0, comm, ierr)
end subroutine

subroutine par_blas2(m, n, a, b, c, comm, everywhere)
  implicit none
  include 'mpif.h'
  integer :: m, n, comm, i, j, ierr
  real :: a(m), b(m, n), c(n), s(n)
  logical :: everywhere
  do j = 1, n
    s(j) = 0.0
    do i = 1, m
      s(j) = s(j) + a(i) * b(i, j)
    end do
  end do
  if (everywhere) then
    call MPI_ALLREDUCE(s, c, n, MPI_REAL, MPI_SUM, comm, ierr)
  else
    call MPI_REDUCE(s, c, n, MPI_REAL, MPI_SUM, 0, comm, ierr)
  end if
end subroutine

program blas
  implicit none
  include 'mpif.h'
  integer, parameter :: m = 5, n = 4
  integer :: ierr, rank, np, i, j, g
  real, allocatable :: ga(:), gb(:, :)
  real :: a(m), b(m, n), c, c2(n), want, want2(n)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  allocate (ga(m * np), gb(m * np, n))
  do i = 1, m * np
    ga(i) = real(mod(i * 7, 11)) / 4.0
    do j = 1, n
      gb(i, j) = real(mod(i + 3 * j, 5)) - 1.5
    end do
  end do
  ! each rank holds rows rank*m+1 .. rank*m+m
  do i = 1, m
    g = rank * m + i
    a(i) = ga(g)
    b(i, :) = gb(g, :)
  end do
  want = sum(ga * ga)
  do j = 1, n
    want2(j) = sum(ga * gb(:, j))
  end do
  call par_blas1(m, a, a, c, MPI_COMM_WORLD)
  if (rank == 0 .and. abs(c - want) > 1e-4 * max(1.0, abs(want))) call fail('PAR_BLAS1', c, want)
  c2 = -99.0
  call par_blas2(m, n, a, b, c2, MPI_COMM_WORLD, .false.)
  if (rank == 0) then
    do j = 1, n
      if (abs(c2(j) - want2(j)) > 1e-4 * max(1.0, abs(want2(j)))) call fail('PAR_BLAS2 reduce', c2(j), want2(j))
    end do
  end if
  c2 = -99.0
  call par_blas2(m, n, a, b, c2, MPI_COMM_WORLD, .true.)
  do j = 1, n
    if (abs(c2(j) - want2(j)) > 1e-4 * max(1.0, abs(want2(j)))) call fail('PAR_BLAS2 allreduce', c2(j), want2(j))
  end do
  if (rank == 0) print '(A,F12.4,A,4F10.4)', 'dot ', c, ' product', c2
  if (rank == 0) print *, 'all checks passed on', np, 'ranks'
  call MPI_FINALIZE(ierr)
contains
  subroutine fail(what, got, wanted)
    character(len=*) :: what
    real :: got, wanted
    integer :: e
    print *, what, ': got', got, 'wanted', wanted, 'on rank', rank
    call MPI_ABORT(MPI_COMM_WORLD, 1, e)
  end subroutine
end program
