/* MPIX_Comm_create_range for Fortran, which has no binding of its own (docs/reference.md).
 * Fortran: call make_range(comm, first, last, stride, newcomm, ierror), INTEGER handles; with
 * `use mpi_f08`, pass comm%MPI_VAL and newcomm%MPI_VAL. */
#include <rangecomm.h>
#include <stddef.h>

void make_range_(const MPI_Fint* comm, const int* first, const int* last, const int* stride,
                 MPI_Fint* newcomm, int* ierror) {
#ifdef RANGECOMM_WEAK_SYMBOLS /* built without -lrangecomm: the library must be preloaded */
  if (MPIX_Comm_create_range == NULL) {
    *ierror = MPI_ERR_OTHER;
    return;
  }
#endif
  MPI_Comm c = MPI_COMM_NULL;
  *ierror = MPIX_Comm_create_range(MPI_Comm_f2c(*comm), *first, *last, *stride, &c);
  *newcomm = MPI_Comm_c2f(c);
}
