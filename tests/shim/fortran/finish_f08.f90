! The end of an mpi_f08 test program (calls_f08.f90, range_f08.f90): the failures of every rank
! summed and noted in the transcript, MPI finalized, and a failed run's exit status.
subroutine shim_fortran_finish(failures)
  use mpi_f08
  implicit none
  external :: shim_fortran_line, shim_fortran_end
  integer, intent(inout) :: failures
  character(len=200) :: line

  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  write (line, '(a,i0)') 'failures: ', failures
  call shim_fortran_line(line)
  call shim_fortran_end()
  call MPI_Finalize()
  if (failures /= 0) stop 1
end subroutine shim_fortran_finish
