! passthrough_bench.f90: passthrough_bench's measurement from Fortran (use mpi), for
! `passthrough_bench --compare LIBRANGECOMM --program <this> -- MPIEXEC ...`: what the library's
! Fortran entry points cost a program that uses only real communicators. One MPI run of 2 ranks;
! rank 0 prints
!   shim <0|1>         whether mpi_comm_rank_ is librangecomm.so's (passthrough_bench_f.c)
!   comm_rank_ns <x>   MPI_COMM_RANK(MPI_COMM_WORLD) in a loop: ns per call, the minimum over
!                      --rounds samples of --calls calls
!   pingpong_us <x>    MPI_SEND/MPI_RECV ping-pong of --size bytes between ranks 0 and 1:
!                      one-way latency, the median over --rounds samples of --iters round trips
! Options as passthrough_bench's: --calls N --iters N --rounds N --size BYTES --dup-first 0|1.
program passthrough_bench_f
  use mpi
  implicit none
  integer, external :: passthrough_fortran_interposed
  integer(8) :: calls = 20000000, iters = 20000, rounds = 15, nbytes = 8, dup_first = 0
  integer(8) :: i, r
  integer :: ierr, rank, me, dup, n, k
  double precision :: t, best
  double precision, allocatable :: samples(:)
  character(len=64) :: name, value
  character, allocatable :: buffer(:)

  n = command_argument_count()
  do k = 1, n - 1, 2
    call get_command_argument(k, name)
    call get_command_argument(k + 1, value)
    select case (name)
    case ('--calls')
      read (value, *) calls
    case ('--iters')
      read (value, *) iters
    case ('--rounds')
      read (value, *) rounds
    case ('--size')
      read (value, *) nbytes
    case ('--dup-first')
      read (value, *) dup_first
    end select
  end do

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (dup_first == 1) then
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Comm_free(dup, ierr)
  end if
  allocate(samples(rounds), buffer(max(nbytes, 1_8)))
  buffer = 'x'

  best = huge(best)
  do r = 1, rounds
    t = MPI_Wtime()
    do i = 1, calls
      call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
    end do
    best = min(best, (MPI_Wtime() - t) / dble(calls) * 1d9)
  end do

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  do i = 1, iters / 10  ! warm-up
    call exchange()
  end do
  do r = 1, rounds
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t = MPI_Wtime()
    do i = 1, iters
      call exchange()
    end do
    samples(r) = (MPI_Wtime() - t) / dble(iters) / 2d0 * 1d6
  end do
  call sort(samples)
  if (rank == 0) then
    print '(a,i0)', 'shim ', passthrough_fortran_interposed()
    print '(a,f0.3)', 'comm_rank_ns ', best
    print '(a,f0.4)', 'pingpong_us ', samples((rounds + 1) / 2)
  end if
  call MPI_Finalize(ierr)

contains

  subroutine exchange()
    integer :: status(MPI_STATUS_SIZE)
    if (rank == 0) then
      call MPI_Send(buffer, int(nbytes), MPI_CHARACTER, 1, 0, MPI_COMM_WORLD, ierr)
      call MPI_Recv(buffer, int(nbytes), MPI_CHARACTER, 1, 0, MPI_COMM_WORLD, status, ierr)
    else if (rank == 1) then
      call MPI_Recv(buffer, int(nbytes), MPI_CHARACTER, 0, 0, MPI_COMM_WORLD, status, ierr)
      call MPI_Send(buffer, int(nbytes), MPI_CHARACTER, 0, 0, MPI_COMM_WORLD, ierr)
    end if
  end subroutine exchange

  subroutine sort(a)
    double precision, intent(inout) :: a(:)
    integer :: p, q
    double precision :: v
    do p = 2, size(a)
      v = a(p)
      q = p - 1
      do while (q >= 1)
        if (a(q) <= v) exit
        a(q + 1) = a(q)
        q = q - 1
      end do
      a(q + 1) = v
    end do
  end subroutine sort
end program passthrough_bench_f
