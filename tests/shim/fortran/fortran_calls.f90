! Fortran calls on communicators and requests the library may make (a dup of MPI_COMM_WORLD
! under RANGECOMM_MODE=accelerate and shadow), through mpif.h-style bindings (use mpi):
! attributes and keyvals with Fortran callbacks, persistent requests completed by every wait
! and test call, error handlers written in Fortran, user reductions, statuses and strings.
! Each rank notes what it saw (transcript.c); run_shim_test.py compare checks the notes against
! a native run.
! What the callbacks saw, shared with the program.
block data counters
  integer :: failures, handler_calls, handler_comm, handler_code, deletes
  common /seen/ failures, handler_calls, handler_comm, handler_code, deletes
  data failures, handler_calls, handler_comm, handler_code, deletes /0, 0, -1, -1, 0/
end block data counters

subroutine check(ok, what)
  logical, intent(in) :: ok
  character(len=*), intent(in) :: what
  integer :: failures, handler_calls, handler_comm, handler_code, deletes
  common /seen/ failures, handler_calls, handler_comm, handler_code, deletes
  if (.not. ok) then
    failures = failures + 1
    print '(a,a)', 'FAILED: ', what
  end if
end subroutine check

subroutine on_error(comm, code)
  integer :: comm, code
  integer :: failures, handler_calls, handler_comm, handler_code, deletes
  common /seen/ failures, handler_calls, handler_comm, handler_code, deletes
  handler_calls = handler_calls + 1
  handler_comm = comm
  handler_code = code
end subroutine on_error

subroutine double_copy(oldcomm, keyval, extra, valin, valout, flag, ierr)
  use mpi
  integer :: oldcomm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  valout = 2 * valin + extra
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine double_copy

subroutine count_delete(comm, keyval, val, extra, ierr)
  use mpi
  integer :: comm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  integer :: failures, handler_calls, handler_comm, handler_code, deletes
  common /seen/ failures, handler_calls, handler_comm, handler_code, deletes
  deletes = deletes + 1
  ierr = MPI_SUCCESS
end subroutine count_delete

subroutine old_copy(oldcomm, keyval, extra, valin, valout, flag, ierr)
  integer :: oldcomm, keyval, extra, valin, valout, ierr
  logical :: flag
  valout = valin + extra
  flag = .true.
  ierr = 0
end subroutine old_copy

subroutine absmax(invec, inoutvec, len, datatype)
  integer :: len, datatype, i
  integer :: invec(len), inoutvec(len)
  do i = 1, len
    if (abs(invec(i)) > abs(inoutvec(i))) inoutvec(i) = invec(i)
  end do
end subroutine absmax

program fortran_calls
  use mpi
  implicit none
  external :: on_error, double_copy, count_delete, old_copy, absmax, check
  external :: shim_fortran_begin, shim_fortran_line, shim_fortran_end
  integer :: failures, handler_calls, handler_comm, handler_code, deletes
  common /seen/ failures, handler_calls, handler_comm, handler_code, deletes
  integer :: rank, size, dup, ierr, keyval, dupkey, nullkey, oldkey, eh, op, dup2, half
  integer :: i, j, k, n, idx, outcount, count, req, reqs(4), indices(4), peer, inter
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 4)
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  integer :: ival, ibuf(8), jbuf(8), sendv(4), recvv(4)
  logical :: flag, found
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=200) :: line
  integer :: namelen

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call shim_fortran_begin()
  peer = mod(rank + 1, size)

  ! Keyvals made in Fortran, set on the world, copied by the dup.
  extra = 7
  call MPI_Comm_create_keyval(double_copy, count_delete, keyval, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, dupkey, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, nullkey, extra, &
                              ierr)
  call MPI_Keyval_create(old_copy, MPI_NULL_DELETE_FN, oldkey, 5, ierr)
  val = 100 + rank
  call MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, val, ierr)
  val = 200 + rank
  call MPI_Comm_set_attr(MPI_COMM_WORLD, dupkey, val, ierr)
  val = 300
  call MPI_Comm_set_attr(MPI_COMM_WORLD, nullkey, val, ierr)
  call MPI_Attr_put(MPI_COMM_WORLD, oldkey, 40 + rank, ierr)

  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call check(ierr == MPI_SUCCESS, 'dup')
  call MPI_Comm_get_attr(dup, keyval, val, flag, ierr)
  write (line, '(a,l1,a,i0)') 'copied by Fortran callback: ', flag, ' ', val
  call shim_fortran_line(line)
  call MPI_Comm_get_attr(dup, dupkey, val, flag, ierr)
  write (line, '(a,l1,a,i0)') 'MPI_COMM_DUP_FN: ', flag, ' ', val
  call shim_fortran_line(line)
  call MPI_Comm_get_attr(dup, nullkey, val, flag, ierr)
  write (line, '(a,l1)') 'MPI_COMM_NULL_COPY_FN: ', flag
  call shim_fortran_line(line)
  call MPI_Attr_get(dup, oldkey, ival, flag, ierr)
  write (line, '(a,l1,a,i0)') 'MPI-1 keyval: ', flag, ' ', ival
  call shim_fortran_line(line)

  ! C's view of an attribute Fortran sets on the dup (transcript.c).
  call shim_c_reads_fortran_attr(dup)

  ! Predefined attributes, and attributes set and replaced on the dup itself.
  call MPI_Comm_get_attr(dup, MPI_TAG_UB, val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. val >= 32767, 'MPI_TAG_UB on the dup')
  ! (Open MPI 4.1 natively gives MPI_ATTR_GET the truncated address of the bound, not the bound.)
  call MPI_Attr_get(dup, MPI_TAG_UB, ival, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag, 'MPI_Attr_get MPI_TAG_UB')
  call MPI_Comm_get_attr(dup, MPI_WTIME_IS_GLOBAL, val, flag, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_WTIME_IS_GLOBAL on the dup')
  val = -123456789012_MPI_ADDRESS_KIND
  call MPI_Comm_set_attr(dup, dupkey, val, ierr)
  call MPI_Comm_get_attr(dup, dupkey, val, flag, ierr)
  write (line, '(a,l1,a,i0)') 'replaced on the dup: ', flag, ' ', val
  call shim_fortran_line(line)
  call MPI_Attr_put(dup, oldkey, -5, ierr)
  call MPI_Attr_get(dup, oldkey, ival, flag, ierr)
  write (line, '(a,l1,a,i0)') 'MPI_Attr_put on the dup: ', flag, ' ', ival
  call shim_fortran_line(line)
  ! A dup of the dup copies what the dup holds (the Fortran callback runs again).
  call MPI_Comm_dup(dup, dup2, ierr)
  call MPI_Comm_get_attr(dup2, keyval, val, flag, ierr)
  write (line, '(a,l1,a,i0)') 'copied twice: ', flag, ' ', val
  call shim_fortran_line(line)
  call MPI_Comm_free(dup2, ierr)
  call check(dup2 == MPI_COMM_NULL, 'freed dup is MPI_COMM_NULL')
  write (line, '(a,i0)') 'delete callbacks after freeing the second dup: ', deletes
  call shim_fortran_line(line)

  ! Names (hidden string lengths, blank padding).
  call MPI_Comm_set_name(dup, 'fortran dup   ', ierr)
  name = repeat('x', MPI_MAX_OBJECT_NAME)
  call MPI_Comm_get_name(dup, name, namelen, ierr)
  write (line, '(a,a,a,i0)') 'name: [', trim(name), '] ', namelen
  call shim_fortran_line(line)
  call check(name(namelen+1:) == ' ', 'name padded with blanks')

  ! Point-to-point with statuses, wildcards and probes.
  ibuf = rank
  call MPI_Isend(ibuf, 3, MPI_INTEGER, peer, 11, dup, req, ierr)
  call MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, flag, status, ierr)
  do while (.not. flag)
    call MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, flag, status, ierr)
  end do
  call MPI_Recv(jbuf, 8, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, status, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  write (line, '(a,i0,a,i0,a,i0,a,i0)') 'received from ', status(MPI_SOURCE), &
    ' tag ', status(MPI_TAG), ' count ', count, ' value ', jbuf(1)
  call shim_fortran_line(line)
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, peer, 12, ival, 1, MPI_INTEGER, MPI_ANY_SOURCE, 12, &
                    dup, MPI_STATUS_IGNORE, ierr)
  write (line, '(a,i0)') 'sendrecv got ', ival
  call shim_fortran_line(line)

  ! Persistent requests: started and completed by each wait and test call.
  do k = 1, 6
    call MPI_Recv_init(recvv, 4, MPI_INTEGER, MPI_ANY_SOURCE, 20 + k, dup, reqs(1), ierr)
    call MPI_Send_init(sendv, 4, MPI_INTEGER, peer, 20 + k, dup, reqs(2), ierr)
    sendv = (/ (rank * 10 + k + j, j = 1, 4) /)
    recvv = -1
    call MPI_Startall(2, reqs, ierr)
    select case (k)
    case (1)
      call MPI_Wait(reqs(1), status, ierr)
      call MPI_Wait(reqs(2), MPI_STATUS_IGNORE, ierr)
    case (2)
      call MPI_Waitall(2, reqs, statuses, ierr)
      status = statuses(:, 1)
    case (3)
      do n = 1, 2
        call MPI_Waitany(2, reqs, idx, status, ierr)
        call check(idx == 1 .or. idx == 2, 'Waitany index counts from 1')
        if (idx == 1) statuses(:, 1) = status
      end do
      status = statuses(:, 1)
    case (4)
      n = 0
      do while (n < 2)
        call MPI_Waitsome(2, reqs, outcount, indices, statuses, ierr)
        do i = 1, outcount
          call check(indices(i) == 1 .or. indices(i) == 2, 'Waitsome indices count from 1')
          if (indices(i) == 1) status = statuses(:, i)
        end do
        n = n + outcount
      end do
    case (5)
      flag = .false.
      do while (.not. flag)
        call MPI_Testall(2, reqs, flag, statuses, ierr)
      end do
      status = statuses(:, 1)
    case (6)
      flag = .false.
      do while (.not. flag)
        call MPI_Test(reqs(1), flag, status, ierr)
      end do
      call MPI_Wait(reqs(2), MPI_STATUS_IGNORE, ierr)
    end select
    write (line, '(a,i0,a,4i4,a,i0)') 'persistent round ', k, ':', recvv, &
      ' from ', status(MPI_SOURCE)
    call shim_fortran_line(line)
    call check(reqs(1) /= MPI_REQUEST_NULL, 'persistent request stays')
    call MPI_Request_free(reqs(1), ierr)
    call MPI_Request_free(reqs(2), ierr)
    call check(reqs(1) == MPI_REQUEST_NULL, 'freed request is MPI_REQUEST_NULL')
  end do
  ! Testany and Testsome on nonblocking requests.
  call MPI_Irecv(ival, 1, MPI_INTEGER, MPI_ANY_SOURCE, 30, dup, reqs(1), ierr)
  call MPI_Isend(rank, 1, MPI_INTEGER, peer, 30, dup, reqs(2), ierr)
  n = 0
  do while (n < 2)
    call MPI_Testany(2, reqs, idx, flag, status, ierr)
    if (flag .and. idx /= MPI_UNDEFINED) n = n + 1
  end do
  write (line, '(a,i0)') 'testany got ', ival
  call shim_fortran_line(line)
  call MPI_Irecv(ival, 1, MPI_INTEGER, MPI_ANY_SOURCE, 31, dup, reqs(1), ierr)
  call MPI_Isend(rank, 1, MPI_INTEGER, peer, 31, dup, reqs(2), ierr)
  n = 0
  do while (n < 2)
    call MPI_Testsome(2, reqs, outcount, indices, MPI_STATUSES_IGNORE, ierr)
    if (outcount /= MPI_UNDEFINED) n = n + outcount
  end do
  write (line, '(a,i0)') 'testsome got ', ival
  call shim_fortran_line(line)

  ! Collectives: MPI_IN_PLACE, a user reduction written in Fortran.
  ival = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, ival, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
  write (line, '(a,i0)') 'in-place sum ', ival
  call shim_fortran_line(line)
  call MPI_Op_create(absmax, .true., op, ierr)
  sendv = (/ rank, -rank * 2, 3, -(rank + 1) /)
  call MPI_Allreduce(sendv, recvv, 4, MPI_INTEGER, op, dup, ierr)
  write (line, '(a,4i4)') 'Fortran op ', recvv
  call shim_fortran_line(line)
  call MPI_Op_free(op, ierr)
  call MPI_Ibcast(ibuf, 8, MPI_INTEGER, 0, dup, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  write (line, '(a,i0)') 'ibcast ', ibuf(8)
  call shim_fortran_line(line)

  ! A split in halves, and an error handler written in Fortran on the dup.
  call MPI_Comm_split(dup, mod(rank, 2), -rank, half, ierr)
  call MPI_Comm_rank(half, i, ierr)
  call MPI_Comm_size(half, n, ierr)
  write (line, '(a,i0,a,i0)') 'half rank ', i, ' of ', n
  call shim_fortran_line(line)
  call MPI_Comm_free(half, ierr)
  call MPI_Comm_create_errhandler(on_error, eh, ierr)
  call MPI_Comm_set_errhandler(dup, eh, ierr)
  call MPI_Send(ibuf, 1, MPI_INTEGER, size, 0, dup, ierr)
  call MPI_Error_class(ierr, i, j)
  call MPI_Error_class(handler_code, k, j)
  write (line, '(a,i0,a,l1,a,l1,a,l1)') 'handler calls ', handler_calls, &
    ' got the dup ', handler_comm == dup, ' rank error ', i == MPI_ERR_RANK, &
    ' handler given it ', k == MPI_ERR_RANK
  call shim_fortran_line(line)
  call MPI_Errhandler_free(eh, ierr)

  deletes = 0
  call MPI_Comm_free(dup, ierr)
  write (line, '(a,i0)') 'delete callbacks at free: ', deletes
  call shim_fortran_line(line)
  call MPI_Comm_free_keyval(keyval, ierr)
  call MPI_Comm_free_keyval(dupkey, ierr)
  call MPI_Comm_free_keyval(nullkey, ierr)
  call MPI_Keyval_free(oldkey, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    write (line, '(a,i0)') 'failures: ', failures
    call shim_fortran_line(line)
  end if
  call shim_fortran_end()
  call MPI_Finalize(ierr)
  if (failures /= 0) stop 1
end program fortran_calls
