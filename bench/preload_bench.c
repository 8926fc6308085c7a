/* preload_bench: unmodified MPI programs' communicator creation, natively and under
 * `rangecomm-run --mode accelerate` (librangecomm.so preloaded). Plain MPI: no rangecomm
 * header, no library call; what it measures is what an existing application gets.
 *
 * Workloads, each timed per iteration (the median over --batches batches of the slowest rank's
 * batch average; each batch starts after a barrier):
 *   bisect        recursive bisection: MPI_Comm_split of the communicator into halves, one
 *                 MPI_Allreduce of an int on the half, down to one process; then the frees.
 *   bisect_floor  the same collectives on communicators made beforehand, plus one
 *                 MPI_Allgather of two ints on each parent (what a split must exchange): the
 *                 least a bisection by split can cost in this run.
 *   dup           MPI_Comm_dup + MPI_Comm_free of MPI_COMM_WORLD (a library taking a private
 *                 copy per call).
 *   create_group  MPI_Comm_create_group of this process's half of the world + MPI_Comm_free.
 *   create        MPI_Comm_create of the halves (each process its half) + MPI_Comm_free.
 *
 *   preload_bench [--iters N] [--batches B]
 *       one MPI run (start it under mpiexec, with or without the library); rank 0 prints
 *       "result WORKLOAD MEDIAN_US MIN_US MAX_US" lines.
 *   preload_bench --compare LIBRANGECOMM [--ranks LIST] [--runs R] [--format table|csv]
 *                 [options] -- MPIEXEC [ARGS...]
 *       runs the above R times at each rank count of LIST natively (MPIEXEC ARGS -n P this)
 *       and R times under rangecomm-run (found next to LIBRANGECOMM) --mode accelerate,
 *       alternating, and prints per workload and rank count the median over runs of each
 *       variant and the ratio. A benchmark: it measures, it never fails on a timing.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_cli.h"

enum { BISECT, FLOOR, DUP, CREATE_GROUP, CREATE, WORKLOADS };
static const char *names[WORKLOADS] = {"bisect", "bisect_floor", "dup", "create_group", "create"};

struct options {
  long iters, batches, runs;
  int csv;
  char ranks[256];
};

/* --- one MPI run --- */

static int sink; /* results of the collectives, so that nothing is optimised away */

/* Splits comm into halves down to single processes, one all-reduction per half. */
static void bisect(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_size(comm, &size);
  if (size == 1) return;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm half;
  MPI_Comm_split(comm, rank >= size / 2, rank, &half);
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, half);
  sink += sum;
  bisect(half);
  MPI_Comm_free(&half);
}

/* The halves of a bisection, made once: levels[0] is the world, levels[k] the half at depth k. */
#define MAX_LEVELS 40
static MPI_Comm levels[MAX_LEVELS];
static int depth;
static int *gathered; /* two ints per world rank */

static void bisect_floor(void) {
  for (int k = 0; k + 1 < depth; ++k) {
    int mine[2] = {k, k}, *all = gathered;
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, levels[k]);
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, levels[k + 1]);
    sink += sum + all[0];
  }
}

static void one_iteration(int workload, MPI_Group half_group, int lower) {
  MPI_Comm c = MPI_COMM_NULL;
  switch (workload) {
    case BISECT:
      bisect(MPI_COMM_WORLD);
      return;
    case FLOOR:
      bisect_floor();
      return;
    case DUP:
      MPI_Comm_dup(MPI_COMM_WORLD, &c);
      break;
    case CREATE_GROUP:
      MPI_Comm_create_group(MPI_COMM_WORLD, half_group, 5, &c);
      break;
    case CREATE:
      MPI_Comm_create(MPI_COMM_WORLD, half_group, &c);
      break;
  }
  if (c == MPI_COMM_NULL) {
    fprintf(stderr, "preload_bench: %s gave no communicator (lower %d)\n", names[workload], lower);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm_free(&c);
}

static int run_mpi(int argc, char **argv, const struct options *o) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int half = (size + 1) / 2, lower = rank < half;
  MPI_Group world_group, half_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int range[1][3] = {{lower ? 0 : half, lower ? half - 1 : size - 1, 1}};
  MPI_Group_range_incl(world_group, 1, range, &half_group);
  gathered = malloc(2 * sizeof(int) * (size_t)size);
  levels[0] = MPI_COMM_WORLD;
  for (depth = 1;; ++depth) {
    int n, r;
    MPI_Comm_size(levels[depth - 1], &n);
    if (n == 1 || depth == MAX_LEVELS) break;
    MPI_Comm_rank(levels[depth - 1], &r);
    MPI_Comm_split(levels[depth - 1], r >= n / 2, r, &levels[depth]);
  }

  double *samples = malloc(sizeof(double) * (size_t)o->batches);
  for (int w = 0; w < WORKLOADS; ++w) {
    one_iteration(w, half_group, lower); /* warm-up: first contacts, caches */
    for (long b = 0; b < o->batches; ++b) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime();
      for (long i = 0; i < o->iters; ++i) one_iteration(w, half_group, lower);
      double mine = (MPI_Wtime() - t) / (double)o->iters * 1e6, slowest = 0;
      MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      samples[b] = slowest;
    }
    if (rank == 0) {
      double med = bench_median(samples, (int)o->batches);
      printf("result %s %.4f %.4f %.4f\n", names[w], med, samples[0], samples[o->batches - 1]);
    }
  }
  if (rank == 0) printf("sink %d\n", sink != -1);
  fflush(stdout);
  for (int k = depth - 1; k >= 1; --k) MPI_Comm_free(&levels[k]);
  MPI_Group_free(&half_group);
  MPI_Group_free(&world_group);
  free(samples);
  free(gathered);
  MPI_Finalize();
  return 0;
}

/* --- the comparison --- */

struct result {
  double v[WORKLOADS];
};

/* One run: prefix (rangecomm-run ... or nothing), then mpiexec -n ranks this program. */
static int run_child(const char *prefix, const char *mpiexec, int ranks, const char *self,
                     const char *args, struct result *res) {
  char cmd[16384], line[256], name[64];
  snprintf(cmd, sizeof cmd, "%s%s-n %d '%s' %s", prefix, mpiexec, ranks, self, args);
  FILE *out = popen(cmd, "r");
  if (out == NULL) return 0;
  int found = 0;
  double med, lo, hi;
  while (fgets(line, sizeof line, out) != NULL)
    if (sscanf(line, "result %63s %lf %lf %lf", name, &med, &lo, &hi) == 4)
      for (int w = 0; w < WORKLOADS; ++w)
        if (strcmp(name, names[w]) == 0) res->v[w] = med, ++found;
  return pclose(out) == 0 && found == WORKLOADS;
}

static int run_compare(const char *library, const char *self, const char *mpiexec,
                       const struct options *o) {
  char args[256], prefix[4400], dir[4096];
  snprintf(dir, sizeof dir, "%s", library);
  snprintf(prefix, sizeof prefix, "'%s/rangecomm-run' --mode accelerate --library '%s' -- ",
           dirname(dir), library);
  snprintf(args, sizeof args, "--iters %ld --batches %ld", o->iters, o->batches);

  int counts[32], n_counts = 0;
  char list[256];
  snprintf(list, sizeof list, "%s", o->ranks);
  for (char *tok = strtok(list, ","); tok != NULL && n_counts < 32; tok = strtok(NULL, ","))
    counts[n_counts++] = atoi(tok);

  FILE *rows = o->csv ? stderr : stdout; /* with --format csv, stdout carries only the CSV */
  double med[32][2][WORKLOADS], lo[32][2][WORKLOADS], hi[32][2][WORKLOADS];
  struct result *res = calloc((size_t)o->runs * 2, sizeof *res);
  fprintf(rows, "row,ranks,variant,run");
  for (int w = 0; w < WORKLOADS; ++w) fprintf(rows, ",%s_us", names[w]);
  fprintf(rows, "\n");
  for (int k = 0; k < n_counts; ++k) {
    for (long run = 0; run < o->runs; ++run)
      for (int with = 0; with < 2; ++with) { /* alternate, so that drift hits both alike */
        struct result *r = &res[run * 2 + with];
        if (!run_child(with ? prefix : "", mpiexec, counts[k], self, args, r)) {
          fprintf(stderr, "preload_bench: run %ld at %d ranks %s failed\n", run, counts[k],
                  with ? "under rangecomm-run --mode accelerate" : "natively");
          free(res);
          return 1;
        }
        fprintf(rows, "row,%d,%s,%ld", counts[k], with ? "accelerate" : "native", run);
        for (int w = 0; w < WORKLOADS; ++w) fprintf(rows, ",%.3f", r->v[w]);
        fprintf(rows, "\n");
        fflush(rows);
      }
    for (int with = 0; with < 2; ++with)
      for (int w = 0; w < WORKLOADS; ++w) {
        double column[64];
        for (long run = 0; run < o->runs; ++run) column[run] = res[run * 2 + with].v[w];
        med[k][with][w] = bench_median(column, (int)o->runs);
        lo[k][with][w] = column[0];
        hi[k][with][w] = column[o->runs - 1];
      }
  }
  free(res);

  if (o->csv) {
    printf("experiment,variant,param,ranks,median_us,min_us,max_us,ratio_vs_native,unit\n");
    for (int w = 0; w < WORKLOADS; ++w) {
      if (w == FLOOR) continue; /* a variant of bisect below */
      for (int k = 0; k < n_counts; ++k)
        for (int with = 0; with < 2; ++with) {
          const char *variant = with ? "accelerate" : "native";
          printf("preload_%s,%s,%d,%d,%.4f,%.4f,%.4f,%.4f,us\n", names[w], variant, counts[k],
                 counts[k], med[k][with][w], lo[k][with][w], hi[k][with][w],
                 med[k][with][w] / med[k][0][w]);
          if (w == BISECT)
            printf("preload_bisect,%s_floor,%d,%d,%.4f,%.4f,%.4f,%.4f,us\n", variant, counts[k],
                   counts[k], med[k][with][FLOOR], lo[k][with][FLOOR], hi[k][with][FLOOR],
                   med[k][with][FLOOR] / med[k][0][BISECT]);
        }
    }
    return 0;
  }
  printf("\nmedian over %ld runs, us per iteration   native   accelerate   faster by\n", o->runs);
  for (int w = 0; w < WORKLOADS; ++w)
    for (int k = 0; k < n_counts; ++k)
      printf("%-14s %3d ranks %24.2f %12.2f %10.2fx\n", names[w], counts[k], med[k][0][w],
             med[k][1][w], med[k][0][w] / med[k][1][w]);
  return 0;
}

static int number(const char *name, const char *text, long lo, long hi, long *out) {
  return bench_number("preload_bench", name, text, lo, hi, out);
}

static void usage(void) {
  printf(
      "usage: preload_bench [--iters N] [--batches B]            (one run, under mpiexec)\n"
      "       preload_bench --compare LIBRANGECOMM [--ranks LIST] [--runs R]\n"
      "                     [--format table|csv] [options] -- MPIEXEC [ARGS...]\n"
      "Unmodified programs' communicator creation natively and under rangecomm-run --mode\n"
      "accelerate (see the comment at the top of bench/preload_bench.c). Defaults: --iters 20\n"
      "--batches 15 --ranks 2,4,8 --runs 3.\n");
}

int main(int argc, char **argv) {
  struct options o = {20, 15, 3, 0, "2,4,8"};
  const char *library = NULL;
  static const struct option longopts[] = {
      {"compare", required_argument, NULL, 'c'}, {"iters", required_argument, NULL, 'i'},
      {"batches", required_argument, NULL, 'b'}, {"runs", required_argument, NULL, 'R'},
      {"ranks", required_argument, NULL, 'p'},   {"format", required_argument, NULL, 'f'},
      {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
  int c, ok = 1;
  /* '+': stop at the first non-option (mpiexec's own command line follows "--"). */
  while (ok && (c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
    switch (c) {
      case 'h':
        usage();
        return 0;
      case 'c':
        library = optarg;
        break;
      case 'i':
        ok = number("iters", optarg, 1, LONG_MAX, &o.iters);
        break;
      case 'b':
        ok = number("batches", optarg, 1, 100000, &o.batches);
        break;
      case 'R':
        ok = number("runs", optarg, 1, 64, &o.runs);
        break;
      case 'p':
        ok = strlen(optarg) < sizeof o.ranks && strspn(optarg, "0123456789,") == strlen(optarg) &&
             atoi(optarg) >= 1;
        if (!ok)
          fprintf(stderr, "preload_bench: --ranks: a list like 2,4,8, not '%s'\n", optarg);
        else
          snprintf(o.ranks, sizeof o.ranks, "%s", optarg);
        break;
      case 'f':
        ok = bench_format("preload_bench", optarg, &o.csv);
        break;
      default:
        ok = 0; /* getopt_long printed what was wrong */
    }
  }
  if (!ok) return 2;
  if (library == NULL) return run_mpi(argc, argv, &o);
  char launcher[4096], self[PATH_MAX];
  if (bench_launcher("preload_bench", argc, argv, optind, launcher, sizeof launcher, self))
    return 2;
  return run_compare(library, self, launcher, &o);
}
