! A bad rank under MPI_ERRORS_ARE_FATAL: the job ends, and the message names
! the call as the Fortran program wrote it (MPI_SEND). Garbage handles first
! return errors (MPI_ERRORS_RETURN) rather than crash.
program errname
  use mpi
  implicit none
  integer :: ierr, x, n, cls, e
  call MPI_INIT(ierr)
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_COMM_SIZE(987654, n, ierr)
  call MPI_ERROR_CLASS(ierr, cls, e)
  if (cls /= MPI_ERR_COMM) stop 'a garbage communicator is not MPI_ERR_COMM'
  call MPI_TYPE_COMMIT(-5, ierr)
  call MPI_ERROR_CLASS(ierr, cls, e)
  if (cls /= MPI_ERR_TYPE) stop 'a garbage datatype is not MPI_ERR_TYPE'
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  x = 1
  call MPI_SEND(x, 1, MPI_INTEGER, 99, 0, MPI_COMM_WORLD, ierr)
  print *, 'not reached'
  call MPI_FINALIZE(ierr)
end program
