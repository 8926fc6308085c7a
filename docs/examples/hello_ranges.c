/* Getting started in C: the three calls of rangecomm.h (docs/getting-started.md).
 *
 *   mpicc hello_ranges.c $(pkg-config --cflags --libs rangecomm) -o hello_ranges
 *   mpiexec -n 3 ./hello_ranges
 *
 * Every communicator below is an ordinary MPI_Comm: after creating it, the program uses only
 * the standard MPI API. */
#include <rangecomm.h>
#include <stdio.h>
#include <stdlib.h>

/* Prints v right-aligned in width columns, or "-" for -1 (not a member). */
static void cell(int width, int v) {
  if (v < 0)
    printf("%*s", width, "-");
  else
    printf("%*d", width, v);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* Errors come back as codes instead of ending the job (the handler is inherited). */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  /* 1. The even ranks 0, 2, 4, ... of MPI_COMM_WORLD. Local: no process waits for another.
   *    Odd ranks get MPI_COMM_NULL. */
  MPI_Comm evens;
  MPIX_Comm_create_range(MPI_COMM_WORLD, 0, size - 1, 2, &evens);
  int evens_rank = -1, evens_sum = -1;
  if (evens != MPI_COMM_NULL) {
    MPI_Comm_rank(evens, &evens_rank);
    MPI_Allreduce(&rank, &evens_sum, 1, MPI_INT, MPI_SUM, evens);
  }

  /* 2. Nonblocking creation from a group, collective over the group's members only. A group
   *    that is a strided range of the communicator is complete at once. */
  int upper_rank = -1, from_upper_root = -1;
  if (rank >= size / 2) {
    MPI_Group world_group, upper_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int ranges[1][3] = {{size / 2, size - 1, 1}}; /* first, last, stride */
    MPI_Group_range_incl(world_group, 1, ranges, &upper_group);
    MPI_Comm upper;
    MPI_Request request;
    MPIX_Icomm_create_group(MPI_COMM_WORLD, upper_group, /*tag*/ 0, &upper, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Comm_rank(upper, &upper_rank);
    from_upper_root = 100 + rank;
    MPI_Bcast(&from_upper_root, 1, MPI_INT, 0, upper);
    MPI_Comm_free(&upper);
    MPI_Group_free(&upper_group);
    MPI_Group_free(&world_group);
  }

  /* 3. Which communicators are the library's. */
  int world_flag, evens_flag = 0;
  MPIX_Comm_is_range(MPI_COMM_WORLD, &world_flag);
  if (evens != MPI_COMM_NULL) MPIX_Comm_is_range(evens, &evens_flag);

  /* A bad range (first > last) is an error of class MPI_ERR_ARG. */
  MPI_Comm bad;
  int code = MPIX_Comm_create_range(MPI_COMM_WORLD, 1, 0, 1, &bad), error_class;
  MPI_Error_class(code, &error_class);

  int row[5] = {evens_rank, evens_sum, upper_rank, from_upper_root, evens_flag};
  int* rows = rank == 0 ? malloc(sizeof(int) * 5 * size) : NULL;
  MPI_Gather(row, 5, MPI_INT, rows, 5, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("%d processes; MPI_COMM_WORLD is a range: %s; range 1..0 gives MPI_ERR_ARG: %s\n", size,
           world_flag ? "yes" : "no", error_class == MPI_ERR_ARG ? "yes" : "no");
    printf("world  evens  sum of evens  upper  bcast from upper rank 0  evens is a range\n");
    for (int r = 0; r < size; ++r) {
      const int* x = rows + 5 * r;
      cell(5, r);
      cell(7, x[0]);
      cell(14, x[1]);
      cell(7, x[2]);
      cell(25, x[3]);
      printf("%18s\n", x[0] < 0 ? "-" : (x[4] ? "yes" : "no"));
    }
  }
  free(rows);
  if (evens != MPI_COMM_NULL) MPI_Comm_free(&evens);
  MPI_Finalize();
  return 0;
}
