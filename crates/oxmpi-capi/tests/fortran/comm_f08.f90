! Communicators, groups, a Cartesian topology, attribute callbacks and an error
! handler from `use mpi_f08` (callbacks with the mpi_f08 handle types).
module f08_callbacks
  use mpi_f08
  implicit none
  integer :: copies = 0, errors = 0
contains
  subroutine copy_fn(oldcomm, keyval, extra, valin, valout, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
    logical :: flag
    copies = copies + 1
    valout = valin * extra
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine
  subroutine gq(extra, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    type(MPI_Status) :: status
    integer :: ierror
    status%MPI_SOURCE = int(extra)
    status%MPI_TAG = 11
    ierror = MPI_SUCCESS
  end subroutine
  subroutine gf(extra, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierror
    ierror = MPI_SUCCESS
  end subroutine
  subroutine gc(extra, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierror
    ierror = MPI_SUCCESS
  end subroutine
  subroutine handler(comm, code)
    type(MPI_Comm) :: comm
    integer :: code
    errors = errors + 1
  end subroutine
end module

program comm_f08
  use mpi_f08
  use f08_callbacks
  implicit none
  integer :: rank, np, n, i, key, ierr, cls
  type(MPI_Comm) :: half, cart, dup
  type(MPI_Group) :: world, evens
  type(MPI_Errhandler) :: eh
  type(MPI_Request) :: greq
  type(MPI_Status) :: gst
  type(MPI_Info) :: envinfo
  integer :: dims(2), coords(2)
  logical :: periods(2), flag
  integer(kind=MPI_ADDRESS_KIND) :: val
  character(len=MPI_MAX_OBJECT_NAME) :: name
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  call MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, half)
  call MPI_Comm_size(half, n)
  call check(n == min(2, np - 2 * (rank / 2)), 'split')
  call MPI_Comm_set_name(half, 'half')
  call MPI_Comm_get_name(half, name, n)
  call check(name == 'half', 'names')
  call MPI_Comm_group(MPI_COMM_WORLD, world)
  call MPI_Group_incl(world, (np + 1) / 2, [(2 * i, i = 0, (np + 1) / 2 - 1)], evens)
  call MPI_Group_rank(evens, i)
  call check((mod(rank, 2) == 0 .and. i == rank / 2) .or. (mod(rank, 2) == 1 .and. i == MPI_UNDEFINED), 'group_rank')
  call MPI_Group_free(evens)
  call MPI_Group_free(world)
  call check(world == MPI_GROUP_NULL, 'group_free')
  dims = 0
  call MPI_Dims_create(np, 2, dims)
  periods = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .true., cart)
  call MPI_Comm_rank(cart, i)
  call MPI_Cart_coords(cart, i, 2, coords)
  call MPI_Cart_rank(cart, coords, n)
  call check(n == i, 'cart_rank of cart_coords')
  call MPI_Comm_free(cart)
  ! attributes with an mpi_f08 copy callback
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, key, 3_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup, key, 14_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup, cart)
  call MPI_Comm_get_attr(cart, key, val, flag)
  call check(copies == 1 .and. flag .and. val == 42, 'copy callback')
  call MPI_Comm_free(cart)
  call MPI_Comm_free_keyval(key)
  ! an error handler
  call MPI_Comm_create_errhandler(handler, eh)
  call MPI_Comm_set_errhandler(dup, eh)
  call MPI_Barrier(dup)
  call MPI_Send(i, 1, MPI_INTEGER, -17, 0, dup, ierr)
  call MPI_Error_class(ierr, cls)
  call check(errors == 1 .and. cls == MPI_ERR_RANK, 'errhandler')
  call MPI_Errhandler_free(eh)
  ! a generalized request with mpi_f08 callbacks
  call MPI_Grequest_start(gq, gf, gc, 77_MPI_ADDRESS_KIND, greq)
  call MPI_Grequest_complete(greq)
  call MPI_Wait(greq, gst)
  call check(gst%MPI_SOURCE == 77 .and. gst%MPI_TAG == 11 .and. greq == MPI_REQUEST_NULL, 'grequest')
  call MPI_Info_create_env(envinfo)
  call MPI_Info_free(envinfo)
  call MPI_Comm_free(dup)
  call MPI_Comm_free(half)
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
