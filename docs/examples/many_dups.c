/* An ordinary MPI program, with nothing of rangecomm in it, that keeps many communicators alive:
 * N duplicates of MPI_COMM_SELF (one per task, say), each used for a message. MPICH stops at
 * about 2046 live communicators; under `rangecomm-run --mode accelerate` the duplicates are
 * range communicators and all N live (docs/preload.md).
 *
 *   mpicc many_dups.c -o many_dups
 *   mpiexec -n 2 ./many_dups 5000
 *   rangecomm-run --mode accelerate mpiexec -n 2 ./many_dups 5000 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int n = argc > 1 ? atoi(argv[1]) : 5000, rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* running out is not fatal */

  MPI_Comm* comms = malloc(sizeof(MPI_Comm) * (n > 0 ? n : 1));
  int alive = 0, failed = 0;
  while (alive < n && !failed) {
    failed = MPI_Comm_dup(MPI_COMM_SELF, &comms[alive]) != MPI_SUCCESS;
    alive += !failed;
  }
  long long sum = 0; /* a message to itself on every communicator */
  for (int i = 0; i < alive; ++i) {
    int received = -1;
    MPI_Sendrecv(&i, 1, MPI_INT, 0, 0, &received, 1, MPI_INT, 0, 0, comms[i], MPI_STATUS_IGNORE);
    sum += received;
  }
  int fewest = 0, ok = sum == (long long)alive * (alive - 1) / 2, all_ok = 0;
  MPI_Reduce(&alive, &fewest, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("live duplicates of MPI_COMM_SELF: %d of %d on every process%s; messages %s\n", fewest,
           n, fewest < n ? " (then MPI_Comm_dup failed)" : "", all_ok ? "ok" : "WRONG");
  for (int i = 0; i < alive; ++i) MPI_Comm_free(&comms[i]);
  free(comms);
  MPI_Finalize();
  return 0;
}
