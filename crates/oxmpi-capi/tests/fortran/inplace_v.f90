! USE mpi habits that must compile and work: MPI_IN_PLACE all-to-all-v/w
! with scalars for the ignored send counts, displacements and types, and
! the profiling names PMPI_WTIME / PMPI_WTICK.
program inplace_v
  use mpi
  implicit none
  integer :: ierr, rank, np, i
  integer, allocatable :: buf(:), counts(:), displs(:), types(:), wdispls(:)
  double precision :: t0, t1
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, np, ierr)
  allocate(buf(np), counts(np), displs(np), types(np), wdispls(np))
  do i = 1, np
    buf(i) = 100 * rank + (i - 1)
    counts(i) = 1
    displs(i) = i - 1
    types(i) = MPI_INTEGER
    wdispls(i) = 4 * (i - 1)
  end do
  call mpi_alltoallv(MPI_IN_PLACE, 0, 0, MPI_DATATYPE_NULL, &
       buf, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, np
    if (buf(i) /= 100 * (i - 1) + rank) then
      print *, 'alltoallv in place: buf(', i, ') =', buf(i)
      call mpi_abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end do
  call mpi_alltoallw(MPI_IN_PLACE, 0, 0, MPI_DATATYPE_NULL, &
       buf, counts, wdispls, types, MPI_COMM_WORLD, ierr)
  do i = 1, np
    if (buf(i) /= 100 * rank + (i - 1)) then
      print *, 'alltoallw in place: buf(', i, ') =', buf(i)
      call mpi_abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end do
  t0 = pmpi_wtime()
  t1 = mpi_wtime()
  if (t1 < t0 .or. pmpi_wtick() <= 0d0) then
    print *, 'pmpi_wtime/pmpi_wtick', t0, t1
    call mpi_abort(MPI_COMM_WORLD, 1, ierr)
  end if
  if (rank == 0) print *, 'all checks passed on', np, 'ranks'
  call mpi_finalize(ierr)
end program
