/* An MPI program that uses range communicators when librangecomm.so is there, linked or
 * preloaded (rangecomm-run), and MPI_Comm_split otherwise (docs/preload.md).
 *
 *   mpicc preload.c $(pkg-config --cflags rangecomm) -o preload     (no -lrangecomm)
 *   mpiexec -n 4 ./preload                    -> range communicators: no
 *   rangecomm-run mpiexec -n 4 ./preload      -> range communicators: yes, same results */
#define RANGECOMM_WEAK_SYMBOLS /* MPIX_ calls are weak: null unless the library is loaded */
#include <rangecomm.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* Blocks of 2 consecutive ranks. */
  int block = rank / 2, first = 2 * block, last = first + 1 < size ? first + 1 : first;
  MPI_Comm pair;
  int ranges = MPIX_Comm_create_range != NULL;
  if (ranges) {
    MPIX_Comm_create_range(MPI_COMM_WORLD, first, last, 1, &pair); /* local, O(1) */
  } else {
    MPI_Comm_split(MPI_COMM_WORLD, block, rank, &pair); /* collective over the world */
  }

  int pair_rank, sum;
  MPI_Comm_rank(pair, &pair_rank);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, pair);
  int row[2] = {pair_rank, sum};
  int* rows = rank == 0 ? malloc(sizeof(int) * 2 * size) : NULL;
  MPI_Gather(row, 2, MPI_INT, rows, 2, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("range communicators: %s\n", ranges ? "yes" : "no");
    for (int r = 0; r < size; ++r)
      printf("rank %d: rank %d in its pair, sum of the pair's world ranks %d\n", r, rows[2 * r],
             rows[2 * r + 1]);
  }
  free(rows);
  MPI_Comm_free(&pair);
  MPI_Finalize();
  return 0;
}
