/* lib_fftw_plans: an FFTW-MPI program that keeps many distributed transforms planned at once,
 * as a spectral code with one plan per field, size and direction does. Plain FFTW-MPI: run it
 * natively and under `rangecomm-run --mode accelerate` (bench/library_programs.py does both).
 *
 *   lib_fftw_plans N     (under mpiexec)
 *
 * Makes up to N plans of a 2-D complex transform of 32 x 32 points distributed over
 * MPI_COMM_WORLD, alternately forward and backward (FFTW_ESTIMATE: no timing runs), and keeps
 * them all; each plan duplicates the communicator, and the transposes inside may split it
 * further. Then runs every forward plan with its backward partner on data of its own and
 * checks that the round trip gives the input back (times 32 * 32), and destroys all. It stops
 * planning at the first plan FFTW cannot make. Rank 0 prints
 *   progress fftw_plans PLANS MICROSECONDS_PER_PLAN
 * after every 10 plans (the time to make one, so far), and at the end
 *   result fftw_plans PLANS MICROSECONDS_PER_PLAN */
#include <complex.h>
#include <fftw3-mpi.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { SIDE = 32 };

static int rank;

static void fail(const char *what) {
  fprintf(stderr, "lib_fftw_plans: rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  fftw_mpi_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
  if (n < 2 || n > 10000000) fail("usage: lib_fftw_plans N (plans, at least 2)");
  n -= n % 2; /* forward and backward pairs */
  /* A failing creation returns an error instead of ending the program: how many plans fit is
   * what this measures (FFTW returns a null plan then). */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  ptrdiff_t local_n0, local_0_start;
  ptrdiff_t local = fftw_mpi_local_size_2d(SIDE, SIDE, MPI_COMM_WORLD, &local_n0, &local_0_start);
  fftw_complex *in = fftw_alloc_complex((size_t)local);
  fftw_complex *mid = fftw_alloc_complex((size_t)local);
  fftw_complex *out = fftw_alloc_complex((size_t)local);
  fftw_plan *plans = malloc(sizeof(fftw_plan) * (size_t)n);
  if (in == NULL || mid == NULL || out == NULL || plans == NULL) fail("out of memory");

  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  long made = 0;
  for (; made < n; ++made) {
    int forward = made % 2 == 0;
    plans[made] =
        fftw_mpi_plan_dft_2d(SIDE, SIDE, forward ? in : mid, forward ? mid : out, MPI_COMM_WORLD,
                             forward ? FFTW_FORWARD : FFTW_BACKWARD, FFTW_ESTIMATE);
    int ok = plans[made] != NULL, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
      if (ok) fftw_destroy_plan(plans[made]);
      break;
    }
    if (rank == 0 && (made + 1) % 10 == 0) {
      printf("progress fftw_plans %ld %.3f\n", made + 1,
             (MPI_Wtime() - start) * 1e6 / (double)(made + 1));
      fflush(stdout);
    }
  }
  if (made % 2 == 1) fftw_destroy_plan(plans[--made]); /* keep whole pairs */
  double planned = MPI_Wtime() - start;

  for (long i = 0; i + 1 < made; i += 2) {
    for (ptrdiff_t k = 0; k < local; ++k)
      in[k] = (double)(k + local_0_start * SIDE) + I * (double)i;
    fftw_execute(plans[i]);
    fftw_execute(plans[i + 1]);
    for (ptrdiff_t k = 0; k < local; ++k)
      if (cabs(out[k] - in[k] * SIDE * SIDE) > 1e-6 * SIDE * SIDE * (cabs(in[k]) + 1))
        fail("a forward and backward transform did not give the input back");
  }
  for (long i = 0; i < made; ++i) fftw_destroy_plan(plans[i]);

  if (rank == 0)
    printf("result fftw_plans %ld %.3f\n", made, made > 0 ? planned * 1e6 / (double)made : 0.0);
  free(plans);
  fftw_free(out);
  fftw_free(mid);
  fftw_free(in);
  fftw_mpi_cleanup();
  MPI_Finalize();
  return 0;
}
