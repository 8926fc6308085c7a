// The library's own calls from Fortran (rangecomm.h): MPIX_COMM_CREATE_RANGE(COMM, FIRST, LAST,
// STRIDE, NEWCOMM, IERROR), MPIX_ICOMM_CREATE_GROUP(COMM, GROUP, TAG, NEWCOMM, REQUEST, IERROR)
// and MPIX_COMM_IS_RANGE(COMM, FLAG, IERROR), every argument INTEGER (FLAG LOGICAL), in the
// name forms of MPI's Fortran libraries; shim/include/rangecomm_f08.f90 declares them for
// mpi_f08 programs (IERROR optional there: a null pointer when absent).
#include "fortran/support.h"
#include "rangecomm.h"

extern "C" void rc_f_mpix_comm_create_range(MPI_Fint* comm, MPI_Fint* first, MPI_Fint* last,
                                            MPI_Fint* stride, MPI_Fint* newcomm, MPI_Fint* ierr) {
  MPI_Comm c_newcomm = MPI_COMM_NULL;
  int rc = MPIX_Comm_create_range(MPI_Comm_f2c(*comm), *first, *last, *stride, &c_newcomm);
  *newcomm = MPI_Comm_c2f(c_newcomm);
  if (ierr != nullptr) *ierr = rc;
}

extern "C" void rc_f_mpix_icomm_create_group(MPI_Fint* comm, MPI_Fint* group, MPI_Fint* tag,
                                             MPI_Fint* newcomm, MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Comm c_newcomm = MPI_COMM_NULL;
  MPI_Request c_request = MPI_REQUEST_NULL;
  int rc = MPIX_Icomm_create_group(MPI_Comm_f2c(*comm), MPI_Group_f2c(*group), *tag, &c_newcomm,
                                   &c_request);
  *newcomm = MPI_Comm_c2f(c_newcomm);
  *request = MPI_Request_c2f(c_request);
  if (ierr != nullptr) *ierr = rc;
}

extern "C" void rc_f_mpix_comm_is_range(MPI_Fint* comm, MPI_Fint* flag, MPI_Fint* ierr) {
  int c_flag = 0;
  int rc = MPIX_Comm_is_range(MPI_Comm_f2c(*comm), &c_flag);
  *flag = rcshim::fortran_logical(c_flag != 0);
  if (ierr != nullptr) *ierr = rc;
}

// Every name form (see fortran_entries.txt: lower case with none, one or two underscores,
// upper case), and the PMPIX_ ones.
#define RC_F_MPIX_NAMES(X, low, up) \
  X(low) X(low##_) X(low##__) X(up) X(p##low) X(p##low##_) X(p##low##__) X(P##up)

#define RC_F_DEFINE(name)                                                                          \
  extern "C" RC_EXPORT void name(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*) \
      __attribute__((alias("rc_f_mpix_comm_create_range")));
RC_F_MPIX_NAMES(RC_F_DEFINE, mpix_comm_create_range, MPIX_COMM_CREATE_RANGE)
#undef RC_F_DEFINE

#define RC_F_DEFINE(name)                                                                          \
  extern "C" RC_EXPORT void name(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*) \
      __attribute__((alias("rc_f_mpix_icomm_create_group")));
RC_F_MPIX_NAMES(RC_F_DEFINE, mpix_icomm_create_group, MPIX_ICOMM_CREATE_GROUP)
#undef RC_F_DEFINE

#define RC_F_DEFINE(name)                                         \
  extern "C" RC_EXPORT void name(MPI_Fint*, MPI_Fint*, MPI_Fint*) \
      __attribute__((alias("rc_f_mpix_comm_is_range")));
RC_F_MPIX_NAMES(RC_F_DEFINE, mpix_comm_is_range, MPIX_COMM_IS_RANGE)
#undef RC_F_DEFINE
