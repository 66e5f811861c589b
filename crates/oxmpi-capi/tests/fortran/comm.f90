! Communicators, groups, topologies, attributes and error handlers from
! `use mpi`, with callbacks written in Fortran.
module counters
  implicit none
  integer :: copies = 0, deletes = 0, errors = 0, last_code = 0, greq_frees = 0
end module

subroutine gq(extra, status, ierr)
  use mpi
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: status(MPI_STATUS_SIZE), ierr
  status(MPI_SOURCE) = int(extra)
  status(MPI_TAG) = 5
  call MPI_STATUS_SET_CANCELLED(status, .false., ierr)
  call MPI_STATUS_SET_ELEMENTS(status, MPI_INTEGER, 3, ierr)
end subroutine

subroutine gf(extra, ierr)
  use counters
  use mpi, only: MPI_ADDRESS_KIND
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: ierr
  if (extra == 123) greq_frees = greq_frees + 1
  ierr = 0
end subroutine

subroutine gc(extra, complete, ierr)
  use mpi, only: MPI_ADDRESS_KIND
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: complete
  integer :: ierr
  ierr = 0
end subroutine

subroutine my_copy(oldcomm, keyval, extra, valin, valout, flag, ierr)
  use counters
  use mpi, only: MPI_ADDRESS_KIND, MPI_SUCCESS
  implicit none
  integer :: oldcomm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  copies = copies + 1
  valout = valin + extra
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine

subroutine my_delete(comm, keyval, val, extra, ierr)
  use counters
  use mpi, only: MPI_ADDRESS_KIND, MPI_SUCCESS
  implicit none
  integer :: comm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  deletes = deletes + 1
  ierr = MPI_SUCCESS
end subroutine

subroutine my_handler(comm, code)
  use counters
  implicit none
  integer :: comm, code
  errors = errors + 1
  last_code = code
end subroutine

program comm
  use mpi
  use counters
  implicit none
  external :: my_copy, my_delete, my_handler, gq, gf, gc
  integer :: greq, gst(MPI_STATUS_SIZE), envinfo
  integer :: ierr, rank, np, sub, dup, dup2, cart, cartsub, key, key2, eh, res, i, n
  integer :: wgrp, egrp, ogrp, ugrp, newcomm, srank, drank
  integer :: dims(2), coords(2), ranks(8), tr(8)
  logical :: periods(2), flag, remain(2)
  integer(kind=MPI_ADDRESS_KIND) :: val
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_ERROR_STRING) :: msg
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)

  ! dup, split, compare, names
  call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
  call MPI_COMM_COMPARE(dup, MPI_COMM_WORLD, res, ierr)
  call check(res == MPI_CONGRUENT, 'dup is congruent')
  call MPI_COMM_SET_NAME(dup, 'my dup   ', ierr)
  call MPI_COMM_GET_NAME(dup, name, n, ierr)
  call check(name == 'my dup' .and. n == 6, 'comm names')
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), -rank, sub, ierr)
  call MPI_COMM_SIZE(sub, n, ierr)
  call MPI_COMM_RANK(sub, srank, ierr)
  call check(n == (np + 1 - mod(rank, 2)) / 2, 'split size')
  call check(srank == n - 1 - rank / 2, 'split key orders ranks')
  call MPI_ALLREDUCE(rank, i, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
  call check(i == sum([(n, n = mod(rank, 2), np - 1, 2)]), 'allreduce on the split')

  ! groups: evens, odds, union, translate, compare, comm_create
  call MPI_COMM_GROUP(MPI_COMM_WORLD, wgrp, ierr)
  n = (np + 1) / 2
  ranks(1:n) = [(2 * i, i = 0, n - 1)]
  call MPI_GROUP_INCL(wgrp, n, ranks, egrp, ierr)
  call MPI_GROUP_EXCL(wgrp, n, ranks, ogrp, ierr)
  call MPI_GROUP_SIZE(ogrp, i, ierr)
  call check(i == np - n, 'group_excl size')
  call MPI_GROUP_UNION(egrp, ogrp, ugrp, ierr)
  call MPI_GROUP_COMPARE(ugrp, wgrp, res, ierr)
  call check(res == MPI_SIMILAR .or. (np <= 2 .and. res == MPI_IDENT), 'union is similar')
  call MPI_GROUP_TRANSLATE_RANKS(egrp, n, [(i, i = 0, n - 1)], wgrp, tr, ierr)
  call check(all(tr(1:n) == ranks(1:n)), 'translate_ranks')
  call MPI_COMM_CREATE(MPI_COMM_WORLD, egrp, newcomm, ierr)
  if (mod(rank, 2) == 0) then
    call MPI_COMM_RANK(newcomm, i, ierr)
    call check(i == rank / 2, 'comm_create rank')
    call MPI_COMM_FREE(newcomm, ierr)
  else
    call check(newcomm == MPI_COMM_NULL, 'comm_create gives MPI_COMM_NULL outside')
  end if
  call MPI_GROUP_FREE(ugrp, ierr)
  call MPI_GROUP_FREE(egrp, ierr)
  call MPI_GROUP_FREE(ogrp, ierr)
  call MPI_GROUP_FREE(wgrp, ierr)
  call check(wgrp == MPI_GROUP_NULL, 'group_free')

  ! a periodic 2-D torus
  dims = 0
  call MPI_DIMS_CREATE(np, 2, dims, ierr)
  call check(product(dims) == np .and. dims(1) >= dims(2), 'dims_create')
  periods = [.true., .false.]
  call MPI_CART_CREATE(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call MPI_CART_COORDS(cart, rank, 2, coords, ierr)
  call check(coords(1) == rank / dims(2) .and. coords(2) == mod(rank, dims(2)), 'cart_coords (row major)')
  call MPI_CART_SHIFT(cart, 0, 1, srank, drank, ierr)
  call check(drank == mod(coords(1) + 1, dims(1)) * dims(2) + coords(2), 'cart_shift periodic')
  call MPI_CART_SHIFT(cart, 1, 1, srank, drank, ierr)
  if (coords(2) == dims(2) - 1) call check(drank == MPI_PROC_NULL, 'cart_shift at the edge')
  call MPI_CART_GET(cart, 2, dims, periods, coords, ierr)
  call check(periods(1) .and. .not. periods(2), 'cart_get periods (LOGICAL)')
  remain = [.false., .true.]
  call MPI_CART_SUB(cart, remain, cartsub, ierr)
  call MPI_COMM_SIZE(cartsub, n, ierr)
  call check(n == dims(2), 'cart_sub')
  call MPI_COMM_FREE(cartsub, ierr)
  call MPI_TOPO_TEST(cart, i, ierr)
  call check(i == MPI_CART, 'topo_test')
  call MPI_COMM_FREE(cart, ierr)

  ! a distributed graph ring, MPI_UNWEIGHTED, a neighbourhood collective
  call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 1, [mod(rank - 1 + np, np)], MPI_UNWEIGHTED, &
       1, [mod(rank + 1, np)], MPI_UNWEIGHTED, MPI_INFO_NULL, .false., cart, ierr)
  call MPI_DIST_GRAPH_NEIGHBORS_COUNT(cart, srank, drank, flag, ierr)
  call check(srank == 1 .and. drank == 1 .and. .not. flag, 'dist graph counts, unweighted')
  call MPI_NEIGHBOR_ALLGATHER(rank, 1, MPI_INTEGER, i, 1, MPI_INTEGER, cart, ierr)
  call check(i == mod(rank - 1 + np, np), 'neighbor_allgather on the ring')
  call MPI_COMM_FREE(cart, ierr)

  ! attributes: a Fortran copy callback adds extra_state, MPI_COMM_NULL_COPY_FN drops
  call MPI_COMM_CREATE_KEYVAL(my_copy, my_delete, key, 5_MPI_ADDRESS_KIND, ierr)
  call MPI_COMM_CREATE_KEYVAL(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key2, 0_MPI_ADDRESS_KIND, ierr)
  call MPI_COMM_SET_ATTR(dup, key, 1000_MPI_ADDRESS_KIND + rank, ierr)
  call MPI_COMM_SET_ATTR(dup, key2, 7_MPI_ADDRESS_KIND, ierr)
  call MPI_COMM_DUP(dup, dup2, ierr)
  call check(copies == 1, 'copy callback ran once')
  call MPI_COMM_GET_ATTR(dup2, key, val, flag, ierr)
  call check(flag .and. val == 1005 + rank, 'copied attribute value')
  call MPI_COMM_GET_ATTR(dup2, key2, val, flag, ierr)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN drops')
  call MPI_COMM_FREE(dup2, ierr)
  call check(deletes == 1, 'delete callback at free')
  call MPI_COMM_DELETE_ATTR(dup, key, ierr)
  call check(deletes == 2, 'delete callback at delete_attr')
  call MPI_COMM_FREE_KEYVAL(key, ierr)
  call MPI_COMM_FREE_KEYVAL(key2, ierr)
  ! MPI_COMM_DUP_FN keeps the value
  call MPI_COMM_CREATE_KEYVAL(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key, 0_MPI_ADDRESS_KIND, ierr)
  call MPI_COMM_SET_ATTR(dup, key, 77_MPI_ADDRESS_KIND, ierr)
  call MPI_COMM_DUP(dup, dup2, ierr)
  call MPI_COMM_GET_ATTR(dup2, key, val, flag, ierr)
  call check(flag .and. val == 77, 'MPI_COMM_DUP_FN copies')
  call MPI_COMM_FREE(dup2, ierr)
  call MPI_COMM_FREE_KEYVAL(key, ierr)
  ! predefined attributes arrive as values
  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
  call check(flag .and. val >= 32767, 'MPI_TAG_UB')

  ! an error handler written in Fortran
  call MPI_COMM_CREATE_ERRHANDLER(my_handler, eh, ierr)
  call MPI_COMM_SET_ERRHANDLER(dup, eh, ierr)
  call MPI_COMM_CALL_ERRHANDLER(dup, MPI_ERR_OTHER, ierr)
  call check(errors == 1 .and. last_code == MPI_ERR_OTHER, 'call_errhandler')
  call MPI_SEND(i, 1, MPI_INTEGER, np + 3, 0, dup, ierr)
  call check(errors == 2 .and. ierr /= MPI_SUCCESS, 'handler on a bad rank')
  call MPI_ERROR_CLASS(last_code, i, ierr)
  call check(i == MPI_ERR_RANK, 'handler got MPI_ERR_RANK')
  call MPI_ERROR_STRING(last_code, msg, n, ierr)
  call check(n > 0 .and. len_trim(msg) == n, 'error_string')
  call MPI_ERRHANDLER_FREE(eh, ierr)
  call MPI_COMM_FREE(dup, ierr)
  call MPI_COMM_FREE(sub, ierr)
  call check(dup == MPI_COMM_NULL .and. sub == MPI_COMM_NULL, 'comm_free')

  ! a generalized request with Fortran callbacks
  call MPI_GREQUEST_START(gq, gf, gc, 123_MPI_ADDRESS_KIND, greq, ierr)
  call MPI_GREQUEST_COMPLETE(greq, ierr)
  call MPI_WAIT(greq, gst, ierr)
  call MPI_GET_COUNT(gst, MPI_INTEGER, n, ierr)
  call check(gst(MPI_SOURCE) == 123 .and. gst(MPI_TAG) == 5 .and. n == 3, 'grequest query status')
  call check(greq == MPI_REQUEST_NULL .and. greq_frees == 1, 'grequest freed')
  call MPI_INFO_CREATE_ENV(envinfo, ierr)
  call MPI_INFO_GET_NKEYS(envinfo, n, ierr)
  call check(ierr == MPI_SUCCESS .and. n >= 0, 'info_create_env')
  call MPI_INFO_FREE(envinfo, ierr)

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
