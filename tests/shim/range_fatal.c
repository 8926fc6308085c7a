/* MPI_ERRORS_ARE_FATAL on a range communicator: an erroneous call (a send to a rank outside
 * the range) must end the whole job, with a message naming the range communicator, and never
 * return to the program. Run by run_shim_test.py in "fatal" mode, which requires a non-zero
 * exit status, that message on the output, and no line saying the call returned. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  int wr, wp;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &wp);
  MPI_Comm range;
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp - 1, 1, &range));
  CHECK(range != MPI_COMM_NULL, "rank %d got no range communicator", wr);
  /* A new communicator inherits MPI_COMM_WORLD's handler, MPI_ERRORS_ARE_FATAL by default. */
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  CHECK_MPI(MPI_Comm_get_errhandler(range, &eh));
  CHECK(eh == MPI_ERRORS_ARE_FATAL, "the range's error handler is not MPI_ERRORS_ARE_FATAL");
  CHECK_MPI(MPI_Errhandler_free(&eh));
  MPI_Barrier(MPI_COMM_WORLD);
  if (wr == 0) {
    int payload = 7;
    int rc = MPI_Send(&payload, 1, MPI_INT, wp, 0, range); /* rank wp does not exist */
    printf("range_fatal: the erroneous call returned %d\n", rc);
    fflush(stdout);
  }
  /* The other ranks wait here until the abort ends them. */
  MPI_Barrier(MPI_COMM_WORLD);
  printf("range_fatal: rank %d passed the final barrier\n", wr);
  fflush(stdout);
  shim_test_end();
  MPI_Finalize();
  return 0;
}
