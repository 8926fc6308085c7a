! The library's calls for Fortran programs that use mpi_f08: `use rangecomm` beside
! `use mpi_f08`. Programs with mpif.h or `use mpi` call MPIX_COMM_CREATE_RANGE,
! MPIX_ICOMM_CREATE_GROUP and MPIX_COMM_IS_RANGE as external subroutines with INTEGER handles
! instead. What each call does: rangecomm.h.
module rangecomm
  use mpi_f08, only: MPI_Comm, MPI_Group, MPI_Request
  implicit none
  private
  public :: MPIX_Comm_create_range, MPIX_Icomm_create_group, MPIX_Comm_is_range

  ! The handles are passed by reference: each type holds the INTEGER Fortran handle alone.
  interface
    subroutine MPIX_Comm_create_range(comm, first, last, stride, newcomm, ierror) &
        bind(C, name='mpix_comm_create_range_')
      import :: MPI_Comm
      type(MPI_Comm), intent(in) :: comm
      integer, intent(in) :: first, last, stride
      type(MPI_Comm), intent(out) :: newcomm
      integer, optional, intent(out) :: ierror
    end subroutine MPIX_Comm_create_range

    subroutine MPIX_Icomm_create_group(comm, group, tag, newcomm, request, ierror) &
        bind(C, name='mpix_icomm_create_group_')
      import :: MPI_Comm, MPI_Group, MPI_Request
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Group), intent(in) :: group
      integer, intent(in) :: tag
      type(MPI_Comm), intent(out) :: newcomm
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine MPIX_Icomm_create_group

    subroutine MPIX_Comm_is_range(comm, flag, ierror) bind(C, name='mpix_comm_is_range_')
      import :: MPI_Comm
      type(MPI_Comm), intent(in) :: comm
      logical, intent(out) :: flag
      integer, optional, intent(out) :: ierror
    end subroutine MPIX_Comm_is_range
  end interface
end module rangecomm
