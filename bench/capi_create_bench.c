/* capi_create_bench: making a communicator for one half of MPI_COMM_WORLD through the C API of
 * librangecomm.so (MPIX_Comm_create_range, MPIX_Icomm_create_group) against MPI's own
 * MPI_Comm_create_group and MPI_Comm_split, each followed by MPI_Comm_free; and MPI_Comm_dup of
 * the whole world + MPI_Comm_free, which under RANGECOMM_MODE=accelerate is the library's
 * (then run with as many iterations as the MPIX calls). Built with the original RBC
 * (-Drbc/-Dkadis), also RBC's creation of the half into a new RBC::Comm destroyed after it, with
 * as many iterations as the MPIX calls, and the ratio of MPIX_Comm_create_range to it.
 *
 *   capi_create_bench [--range-iters N] [--native-iters N] [--batches B]
 *
 * The methods' batches alternate, one of each in turn. Each batch starts after a barrier; a
 * row gives the time per create+free in microseconds: the median over batches of the slowest
 * rank's batch average (a communicator is ready when its last member has it), in wall-clock
 * time and in the rank's thread CPU time (which leaves
 * out time a rank spends descheduled on a loaded or oversubscribed machine; MPI's busy polling
 * counts as CPU time). A benchmark: it prints, it never fails on a timing. Link with
 * librangecomm.so (it calls the MPIX functions). */
#include <getopt.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_cli.h"

#include "rangecomm.h"
#ifdef RANGECOMM_BENCH_RBC
#include "rbc_c.h"
enum { have_rbc = 1 };
#else
enum { have_rbc = 0 };
#endif

enum { RANGE, ICREATE, DUP, CREATE_GROUP, SPLIT, RBC_FRESH, METHODS };
static const char *names[METHODS] = {"MPIX_Comm_create_range", "MPIX_Icomm_create_group",
                                     "MPI_Comm_dup",           "MPI_Comm_create_group",
                                     "MPI_Comm_split",         "RBC Comm_create_group"};

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One create + free of this process's half. */
static void create_free(int method, int r, int p, MPI_Group half_group) {
  int h = p / 2, lower = r < h, first = lower ? 0 : h, last = lower ? h - 1 : p - 1;
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Request req;
  switch (method) {
    case RANGE:
      MPIX_Comm_create_range(MPI_COMM_WORLD, first, last, 1, &c);
      break;
    case ICREATE:
      MPIX_Icomm_create_group(MPI_COMM_WORLD, half_group, 1, &c, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      break;
    case DUP:
      MPI_Comm_dup(MPI_COMM_WORLD, &c);
      break;
    case CREATE_GROUP:
      MPI_Comm_create_group(MPI_COMM_WORLD, half_group, 1, &c);
      break;
    case SPLIT:
      MPI_Comm_split(MPI_COMM_WORLD, lower, r, &c);
      break;
  }
  if (c == MPI_COMM_NULL) {
    fprintf(stderr, "capi_create_bench: %s gave no communicator\n", names[method]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm_free(&c);
}

/* count of them; RBC's loop is its adapter's own, so that only RBC's calls are in it. */
static void create_free_n(int method, int r, int p, MPI_Group half_group, long count) {
#ifdef RANGECOMM_BENCH_RBC
  if (method == RBC_FRESH) {
    int h = p / 2, lower = r < h;
    rbc_baseline_world_batch(lower ? 0 : h, lower ? h - 1 : p - 1, count);
    return;
  }
#endif
  for (long i = 0; i < count; ++i) create_free(method, r, p, half_group);
}

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Medians over batches of the slowest rank's microseconds per create+free of each method:
 * wall[m], cpu[m]; and the fastest and slowest batch's wall time in spread[m][0..1]. The
 * methods' batches alternate (batch b runs every method once, the order rotating with b), so
 * that a change of the machine's speed during the run meets every method alike. */
static void measure(int methods, const long iters[], int batches, int r, int p, MPI_Group half,
                    double wall[], double cpu[], double spread[][2]) {
  double *rows = malloc(sizeof(double) * 2 * (size_t)batches * (size_t)methods);
  for (int m = 0; m < methods; ++m) create_free_n(m, r, p, half, iters[m] / 10 + 1); /* warm-up */
  for (int b = 0; b < batches; ++b) {
    for (int k = 0; k < methods; ++k) {
      int m = (b + k) % methods;
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime(), c0 = cpu_seconds();
      create_free_n(m, r, p, half, iters[m]);
      double mine[2] = {(MPI_Wtime() - t0) / (double)iters[m] * 1e6,
                        (cpu_seconds() - c0) / (double)iters[m] * 1e6};
      double slowest[2];
      MPI_Allreduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      double *mrows = rows + 2 * (size_t)batches * (size_t)m;
      mrows[b] = slowest[0];
      mrows[batches + b] = slowest[1];
    }
  }
  for (int m = 0; m < methods; ++m) {
    double *mrows = rows + 2 * (size_t)batches * (size_t)m;
    qsort(mrows, (size_t)batches, sizeof *mrows, compare_doubles);
    qsort(mrows + batches, (size_t)batches, sizeof *mrows, compare_doubles);
    wall[m] = mrows[batches / 2];
    cpu[m] = mrows[batches + batches / 2];
    spread[m][0] = mrows[0];
    spread[m][1] = mrows[batches - 1];
  }
  free(rows);
}

static int number(const char *name, const char *text, long lo, long hi, long *out) {
  return bench_number("capi_create_bench", name, text, lo, hi, out);
}

int main(int argc, char **argv) {
  long range_iters = 20000, native_iters = 200, batches = 5;
  int csv = 0;
  static const struct option longopts[] = {{"range-iters", required_argument, NULL, 'r'},
                                           {"native-iters", required_argument, NULL, 'n'},
                                           {"batches", required_argument, NULL, 'b'},
                                           {"format", required_argument, NULL, 'f'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  int c, ok = 1;
  while (ok && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (c) {
      case 'h':
        printf(
            "usage: mpiexec -n P capi_create_bench [--range-iters N] [--native-iters N] "
            "[--batches B] [--format table|csv]\n"
            "Create + free of a communicator for each half of MPI_COMM_WORLD through the C "
            "API\n(MPIX_Comm_create_range, MPIX_Icomm_create_group) against "
            "MPI_Comm_create_group\nand MPI_Comm_split: microseconds per pair, wall and CPU "
            "time, and the ratios.\nDefaults: 20000 range and 200 native iterations, 5 "
            "batches; P >= 2.\n");
        return 0;
      case 'r':
        ok = number("range-iters", optarg, 1, LONG_MAX, &range_iters);
        break;
      case 'n':
        ok = number("native-iters", optarg, 1, LONG_MAX, &native_iters);
        break;
      case 'b':
        ok = number("batches", optarg, 1, 100000, &batches);
        break;
      case 'f':
        ok = strcmp(optarg, "csv") == 0 || strcmp(optarg, "table") == 0;
        if (!ok) fprintf(stderr, "capi_create_bench: --format: table or csv, not '%s'\n", optarg);
        csv = strcmp(optarg, "csv") == 0;
        break;
      default:
        ok = 0; /* getopt_long printed what was wrong */
    }
  }
  if (!ok || optind < argc) {
    if (ok) fprintf(stderr, "capi_create_bench: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  MPI_Init(&argc, &argv);
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (p < 2) {
    if (r == 0) fprintf(stderr, "capi_create_bench: needs 2 or more ranks\n");
    MPI_Finalize();
    return 2;
  }
  MPI_Group world, half;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int h = p / 2, triple[1][3] = {{r < h ? 0 : h, r < h ? h - 1 : p - 1, 1}};
  MPI_Group_range_incl(world, 1, triple, &half);
  const char *mode = getenv("RANGECOMM_MODE");
  int accelerated =
      mode != NULL && (strcmp(mode, "accelerate") == 0 || strcmp(mode, "shadow") == 0);
  double us[METHODS], cpu[METHODS], spread[METHODS][2];
  const int methods = have_rbc ? METHODS : RBC_FRESH;
  long iters[METHODS];
  for (int m = 0; m < methods; ++m)
    iters[m] =
        m <= ICREATE || m == RBC_FRESH || (m == DUP && accelerated) ? range_iters : native_iters;
  measure(methods, iters, (int)batches, r, p, half, us, cpu, spread);
  if (r == 0 && csv) {
    /* the drivers' common rows: ratio_vs_native = median / median of MPI_Comm_create_group */
    printf("experiment,variant,param,ranks,median_us,min_us,max_us,ratio_vs_native,unit,note\n");
    for (int m = 0; m < methods; ++m)
      printf("capi_create,%s,half,%d,%.6g,%.6g,%.6g,%.6g,us,wall (cpu %.6g us)\n", names[m], p,
             us[m], spread[m][0], spread[m][1], us[m] / us[CREATE_GROUP], cpu[m]);
  } else if (r == 0) {
    printf(
        "# ranks %d, halves of MPI_COMM_WORLD (MPI_Comm_dup: all of it), create + "
        "MPI_Comm_free, us per pair; RANGECOMM_MODE=%s\n",
        p, accelerated ? mode : "off");
    printf("%-26s %12s %12s %12s %12s %12s\n", "method", "wall_us", "cpu_us", "x_group_wall",
           "x_split_wall", "x_group_cpu");
    for (int m = 0; m < methods; ++m)
      printf("%-26s %12.4f %12.4f %12.1f %12.1f %12.1f\n", names[m], us[m], cpu[m],
             us[CREATE_GROUP] / us[m], us[SPLIT] / us[m], cpu[CREATE_GROUP] / cpu[m]);
    if (have_rbc)
      printf("MPIX_Comm_create_range + MPI_Comm_free / RBC's creation: %.2f wall, %.2f cpu\n",
             us[RANGE] / us[RBC_FRESH], cpu[RANGE] / cpu[RBC_FRESH]);
  }
  MPI_Group_free(&half);
  MPI_Group_free(&world);
  MPI_Finalize();
  return 0;
}
