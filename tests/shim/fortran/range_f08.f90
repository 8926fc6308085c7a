! Ranges made from Fortran through the library's mpi_f08 bindings (use rangecomm): contiguous,
! strided and single-member ranges of MPI_COMM_WORLD and a group made with
! MPIX_Icomm_create_group, each used with mpi_f08 calls (attributes and a copy callback
! written in Fortran among them) and checked against what MPI's results must be. Run linked and preloaded (run_shim_test.py run); there is nothing to compare with
! natively.
program range_f08
  use mpi_f08
  use rangecomm
  implicit none
  external :: shim_fortran_begin, shim_fortran_line, shim_fortran_finish
  procedure(MPI_Comm_copy_attr_function) :: add_extra
  type(MPI_Comm) :: range
  type(MPI_Group) :: world_group, evens
  type(MPI_Request) :: request
  integer :: rank, size, failures, k, first, last, stride, ierr, members(64), n
  character(len=200) :: line
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  call shim_fortran_begin()
  failures = 0

  call MPIX_Comm_is_range(MPI_COMM_WORLD, flag)
  if (flag) call fail('MPI_COMM_WORLD is no range')

  do k = 1, 4
    select case (k)
    case (1)
      first = 0; last = size - 1; stride = 1
    case (2)
      first = size - 1; last = size - 1; stride = 1
    case (3)
      first = 0; last = size - 1; stride = 2
    case (4)
      first = min(1, size - 1); last = size - 1; stride = 2
    end select
    if (rank < first .or. rank > last .or. mod(rank - first, stride) /= 0) cycle
    call MPIX_Comm_create_range(MPI_COMM_WORLD, first, last, stride, range, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPIX_Comm_create_range')
    call use_range(range, first, last, stride)
    call MPI_Comm_free(range)
    if (range /= MPI_COMM_NULL) call fail('freed range is MPI_COMM_NULL')
  end do

  ! The even world ranks as a group, made without a message.
  n = 0
  do k = 0, size - 1, 2
    n = n + 1
    members(n) = k
  end do
  call MPI_Comm_group(MPI_COMM_WORLD, world_group)
  call MPI_Group_incl(world_group, n, members, evens)
  if (mod(rank, 2) == 0) then
    call MPIX_Icomm_create_group(MPI_COMM_WORLD, evens, 7, range, request)
    call MPI_Wait(request, MPI_STATUS_IGNORE)
    call use_range(range, 0, size - 1, 2)
    call MPI_Comm_free(range)
  end if
  call MPI_Group_free(evens)
  call MPI_Group_free(world_group)

  call shim_fortran_finish(failures)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    failures = failures + 1
    write (line, '(a,a)') 'FAILED: ', what
    call shim_fortran_line(line)
  end subroutine fail

  ! Every member of range first..last (stride) of the world: its place, a sum, a ring, a
  ! broadcast.
  subroutine use_range(comm, first, last, stride)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: first, last, stride
    integer :: me, n, sum, expected, got, from, i, key
    integer(kind=MPI_ADDRESS_KIND) :: value
    logical :: is_range
    type(MPI_Request) :: req
    type(MPI_Comm) :: dup

    call MPIX_Comm_is_range(comm, is_range)
    if (.not. is_range) call fail('not a range')
    call MPI_Comm_size(comm, n)
    call MPI_Comm_rank(comm, me)
    if (n /= (last - first) / stride + 1) call fail('range size')
    if (me /= (rank - first) / stride) call fail('range rank')
    call MPI_Allreduce(rank, sum, 1, MPI_INTEGER, MPI_SUM, comm)
    expected = 0
    do i = first, last, stride
      expected = expected + i
    end do
    if (sum /= expected) call fail('sum over the range')
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, mod(me + 1, n), 3, got, 1, MPI_INTEGER, &
                      MPI_ANY_SOURCE, 3, comm, MPI_STATUS_IGNORE)
    from = first + stride * mod(me + n - 1, n)
    if (got /= from) call fail('ring over the range')
    got = rank
    call MPI_Ibcast(got, 1, MPI_INTEGER, n - 1, comm, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    if (got /= first + stride * (n - 1)) call fail('broadcast over the range')
    ! Attributes from mpi_f08: a predefined one, and one copied to a dup by a callback
    ! written in Fortran.
    call MPI_Comm_get_attr(comm, MPI_TAG_UB, value, flag)
    if (.not. flag .or. value < 32767) call fail('MPI_TAG_UB of the range')
    call MPI_Comm_create_keyval(add_extra, MPI_COMM_NULL_DELETE_FN, key, 5_MPI_ADDRESS_KIND)
    call MPI_Comm_set_attr(comm, key, int(rank, MPI_ADDRESS_KIND))
    call MPI_Comm_dup(comm, dup)
    call MPI_Comm_get_attr(dup, key, value, flag)
    if (.not. flag .or. value /= rank + 5) call fail('attribute copied to the dup')
    call MPI_Comm_free(dup)
    call MPI_Comm_free_keyval(key)
    write (line, '(a,i0,a,i0,a,i0,a,i0,a,i0)') 'range ', first, '..', last, ' by ', stride, &
      ': rank ', me, ' of ', n
    call shim_fortran_line(line)
  end subroutine use_range
end program range_f08

! A copy callback (external: an internal procedure passed as an argument would need an
! executable stack).
subroutine add_extra(oldcomm, keyval, extra, valin, valout, flag, ierror)
  use mpi_f08
  type(MPI_Comm) :: oldcomm
  integer :: keyval, ierror
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  valout = valin + extra
  flag = .true.
  ierror = MPI_SUCCESS
end subroutine add_extra
