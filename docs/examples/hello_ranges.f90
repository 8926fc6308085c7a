! Getting started in Fortran: a range made with MPIX_Comm_create_range (use rangecomm, beside
! use mpi_f08), then only standard MPI (docs/getting-started.md).
!
!   mpif90 $(pkg-config --cflags rangecomm) hello_ranges.f90 $(pkg-config --libs rangecomm) -o hello_f
!   mpiexec -n 3 ./hello_f
program hello_ranges
  use mpi_f08
  use rangecomm
  implicit none
  type(MPI_Comm) :: half
  integer :: ierror, rank, size, h, half_rank, half_sum, from_root, i
  integer :: row(3)
  integer, allocatable :: rows(:)

  call MPI_Init(ierror)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierror)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierror)

  ! Two halves, each made by its own members: local, no communication.
  h = (size + 1) / 2
  if (rank < h) then
    call MPIX_Comm_create_range(MPI_COMM_WORLD, 0, h - 1, 1, half, ierror)
  else
    call MPIX_Comm_create_range(MPI_COMM_WORLD, h, size - 1, 1, half, ierror)
  end if
  if (ierror /= MPI_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 1, ierror)

  call MPI_Comm_rank(half, half_rank, ierror)
  call MPI_Allreduce(rank, half_sum, 1, MPI_INTEGER, MPI_SUM, half, ierror)
  from_root = 100 + rank
  call MPI_Bcast(from_root, 1, MPI_INTEGER, 0, half, ierror)
  call MPI_Comm_free(half, ierror)

  row = [half_rank, half_sum, from_root]
  allocate(rows(3 * size))
  call MPI_Gather(row, 3, MPI_INTEGER, rows, 3, MPI_INTEGER, 0, MPI_COMM_WORLD, ierror)
  if (rank == 0) then
    print '(A)', 'world  half  sum in half  bcast from half rank 0'
    do i = 0, size - 1
      print '(I5, I6, I13, I24)', i, rows(3 * i + 1), rows(3 * i + 2), rows(3 * i + 3)
    end do
  end if
  call MPI_Finalize(ierror)
end program hello_ranges
