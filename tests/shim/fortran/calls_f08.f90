! The rows of fortran_calls.f90 through mpi_f08: attributes and a keyval with a copy callback
! written in Fortran, persistent requests completed by MPI_Wait and MPI_Waitall, and an error
! handler written in Fortran, on a dup of MPI_COMM_WORLD (a library communicator under
! RANGECOMM_MODE=accelerate and shadow). run_shim_test.py compare checks the notes against a
! native run.
subroutine f08_copy(oldcomm, keyval, extra, valin, valout, flag, ierror)
  use mpi_f08
  type(MPI_Comm) :: oldcomm
  integer :: keyval, ierror
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  valout = 3 * valin + extra
  flag = .true.
  ierror = MPI_SUCCESS
end subroutine f08_copy

subroutine f08_handler(comm, code)
  use mpi_f08
  type(MPI_Comm) :: comm
  integer :: code
  integer :: calls, seen
  common /f08seen/ calls, seen
  calls = calls + 1
  seen = comm%MPI_VAL
end subroutine f08_handler

program calls_f08
  use mpi_f08
  implicit none
  external :: shim_fortran_begin, shim_fortran_line, shim_fortran_finish
  procedure(MPI_Comm_copy_attr_function) :: f08_copy
  procedure(MPI_Comm_errhandler_function) :: f08_handler
  integer :: calls, seen
  common /f08seen/ calls, seen
  type(MPI_Comm) :: dup
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: statuses(2)
  type(MPI_Errhandler) :: eh
  integer :: rank, size, key, k, ierr, sendv(3), recvv(3), failures, eclass
  integer(kind=MPI_ADDRESS_KIND) :: value
  logical :: flag
  character(len=200) :: line

  calls = 0
  seen = -1
  failures = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  call shim_fortran_begin()

  call MPI_Comm_create_keyval(f08_copy, MPI_COMM_NULL_DELETE_FN, key, 4_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key, int(10 + rank, MPI_ADDRESS_KIND))
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_get_attr(dup, key, value, flag)
  write (line, '(a,l1,a,i0)') 'copied by the mpi_f08 callback: ', flag, ' ', value
  call shim_fortran_line(line)
  call MPI_Comm_get_attr(dup, MPI_TAG_UB, value, flag, ierr)
  if (ierr /= MPI_SUCCESS .or. .not. flag .or. value < 32767) failures = failures + 1
  call MPI_Comm_set_attr(dup, key, -7_MPI_ADDRESS_KIND)
  call MPI_Comm_get_attr(dup, key, value, flag)
  write (line, '(a,l1,a,i0)') 'set on the dup: ', flag, ' ', value
  call shim_fortran_line(line)

  do k = 1, 2
    call MPI_Recv_init(recvv, 3, MPI_INTEGER, MPI_ANY_SOURCE, k, dup, reqs(1))
    call MPI_Send_init(sendv, 3, MPI_INTEGER, mod(rank + 1, size), k, dup, reqs(2))
    sendv = [rank, k, rank * k]
    call MPI_Startall(2, reqs)
    if (k == 1) then
      call MPI_Wait(reqs(1), statuses(1))
      call MPI_Wait(reqs(2), MPI_STATUS_IGNORE)
    else
      call MPI_Waitall(2, reqs, statuses)
    end if
    write (line, '(a,i0,a,3i4,a,i0)') 'persistent round ', k, ':', recvv, ' from ', &
      statuses(1)%MPI_SOURCE
    call shim_fortran_line(line)
    call MPI_Request_free(reqs(1))
    call MPI_Request_free(reqs(2))
  end do

  call MPI_Comm_create_errhandler(f08_handler, eh)
  call MPI_Comm_set_errhandler(dup, eh)
  call MPI_Send(sendv, 1, MPI_INTEGER, size, 0, dup, ierr)
  call MPI_Error_class(ierr, eclass)
  write (line, '(a,i0,a,l1,a,l1)') 'handler calls ', calls, ' got the dup ', &
    seen == dup%MPI_VAL, ' rank error ', eclass == MPI_ERR_RANK
  call shim_fortran_line(line)
  call MPI_Errhandler_free(eh)
  call MPI_Comm_free(dup)
  call MPI_Comm_free_keyval(key)

  call shim_fortran_finish(failures)
end program calls_f08
