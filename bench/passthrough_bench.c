/* passthrough_bench: what librangecomm.so costs a program that uses only real communicators.
 *
 * Measured in one MPI run (2 ranks; more ranks just wait):
 *   comm_rank_ns  MPI_Comm_rank(MPI_COMM_WORLD) in a loop: ns per call, the minimum over
 *                 --rounds samples of --calls calls (the least disturbed sample), rank 0.
 *   comm_rank_real_ns  the same through a pointer to the MPI library's own PMPI_Comm_rank,
 *                 in rounds alternating with the above: in a run with the library, the
 *                 difference is the wrapper's cost under exactly the same load.
 *   pingpong_us   MPI_Send/MPI_Recv ping-pong of --size bytes between ranks 0 and 1 on
 *                 MPI_COMM_WORLD: one-way latency (round trip / 2), the median over --rounds
 *                 samples of --iters round trips, after a warm-up.
 *
 *   passthrough_bench [--calls N] [--iters N] [--rounds N] [--size BYTES] [--dup-first 0|1]
 *       one MPI run (start it under mpiexec, with or without LD_PRELOAD); prints
 *       "shim <0|1>", "comm_rank_ns <x>", "pingpong_us <x>" on rank 0.
 *   passthrough_bench --compare LIBRANGECOMM [--runs R] [--program P] [options] -- MPIEXEC ...
 *       runs the above R times without and R times with LD_PRELOAD=LIBRANGECOMM, alternating,
 *       each as "MPIEXEC ARGS -n 2 <this program> options", and prints the median and the
 *       best (lowest) value over runs and the differences. A benchmark: it measures, it never
 *       fails on a timing. --program P runs P instead, which prints the same lines but
 *       comm_rank_real_ns (passthrough_bench.f90: the same from Fortran).
 *
 * --dup-first 1 duplicates and frees MPI_COMM_WORLD before measuring, as nearly every program
 * does. It matters on Open MPI 4.1: the first communicator creation (or nonblocking collective)
 * registers libnbc's progress function for the rest of the run, and every later blocking call
 * then polls it too. librangecomm.so creates its lanes at MPI_Init, so with the library the
 * hook is always there; --dup-first 1 gives the run without the library the same hook, and the
 * ping-pong difference is then the wrappers' own cost.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <getopt.h>
#include <limits.h>
#include <link.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_cli.h"

struct options {
  long calls, iters, rounds, size, runs, dup_first;
  int csv; /* --format csv: the showcase's common rows instead of the table */
};

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Whether this program's MPI_Comm_rank is librangecomm's (so that a run says what it measured). */
static int interposed(void) {
  Dl_info info;
  int (*fn)(MPI_Comm, int *) = MPI_Comm_rank;
  void *address;
  memcpy(&address, &fn, sizeof address);
  return dladdr(address, &info) != 0 && info.dli_fname != NULL &&
         strstr(info.dli_fname, "librangecomm") != NULL;
}

/* PMPI_Comm_rank of the MPI library itself, found among the loaded objects (not
 * librangecomm's, even when it is preloaded): the same process can then time the call with and
 * without the wrapper under the same load. */
static int (*real_comm_rank)(MPI_Comm, int *);

static int find_real(struct dl_phdr_info *info, size_t size, void *unused) {
  (void)size, (void)unused;
  if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0' ||
      strstr(info->dlpi_name, "librangecomm") != NULL)
    return 0;
  void *lib = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  void *fn = lib != NULL ? dlsym(lib, "PMPI_Comm_rank") : NULL;
  if (fn == NULL) return 0;
  memcpy(&real_comm_rank, &fn, sizeof fn);
  return 1;
}

/* ns per call of MPI_Comm_rank as the program binds it (rank_ns) and of the library's own
 * PMPI_Comm_rank through a pointer (real_ns); rounds alternate, the minimum of each counts. */
static void comm_rank_ns(const struct options *o, double *rank_ns, double *real_ns) {
  volatile int sink = 0;
  *rank_ns = *real_ns = 1e30;
  for (long round = 0; round < o->rounds; ++round) {
    double t0 = now_ns();
    for (long i = 0; i < o->calls; ++i) {
      int r;
      MPI_Comm_rank(MPI_COMM_WORLD, &r);
      sink += r;
    }
    double t1 = now_ns();
    for (long i = 0; i < o->calls; ++i) {
      int r;
      real_comm_rank(MPI_COMM_WORLD, &r);
      sink += r;
    }
    double t2 = now_ns();
    if ((t1 - t0) / (double)o->calls < *rank_ns) *rank_ns = (t1 - t0) / (double)o->calls;
    if ((t2 - t1) / (double)o->calls < *real_ns) *real_ns = (t2 - t1) / (double)o->calls;
  }
  (void)sink;
}

static double pingpong_us(const struct options *o, int rank) {
  char *buf = calloc((size_t)o->size + 1, 1);
  double *samples = malloc(sizeof(double) * (size_t)o->rounds), result;
  int peer = 1 - rank;
  for (long round = -1; round < o->rounds; ++round) { /* round -1 warms up */
    double t0 = now_ns();
    for (long i = 0; i < o->iters; ++i) {
      if (rank == 0) {
        MPI_Send(buf, (int)o->size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, (int)o->size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, (int)o->size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, (int)o->size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      }
    }
    if (round >= 0) samples[round] = (now_ns() - t0) / (2e3 * (double)o->iters);
  }
  result = bench_median(samples, (int)o->rounds);
  free(buf), free(samples);
  return result;
}

static int run_mpi(int argc, char **argv, const struct options *o) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double rank_ns, real_ns, pp = 0;
  dl_iterate_phdr(find_real, NULL);
  if (real_comm_rank == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  if (o->dup_first) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_free(&dup);
  }
  comm_rank_ns(o, &rank_ns, &real_ns);
  MPI_Barrier(MPI_COMM_WORLD);
  if (size >= 2 && rank < 2) pp = pingpong_us(o, rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("shim %d\ncomm_rank_ns %.3f\ncomm_rank_real_ns %.3f\npingpong_us %.4f\n", interposed(),
           rank_ns, real_ns, pp);
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}

/* The results of one run: [0] MPI_Comm_rank as bound, [1] the library's own PMPI_Comm_rank,
 * [2] ping-pong latency. */
struct result {
  double v[3];
};

/* One run of this program under mpiexec; reads its result lines. */
static int run_child(const char *prefix, const char *self, const char *mpiexec, const char *args,
                     struct result *res, int *shim, int lines) {
  char cmd[16384], line[256];
  snprintf(cmd, sizeof cmd, "%s-n 2 %s'%s' %s", mpiexec, prefix, self, args);
  FILE *out = popen(cmd, "r");
  int found = 0;
  if (out == NULL) return 0;
  while (fgets(line, sizeof line, out) != NULL) {
    found += sscanf(line, "comm_rank_ns %lf", &res->v[0]) == 1;
    found += sscanf(line, "comm_rank_real_ns %lf", &res->v[1]) == 1;
    found += sscanf(line, "pingpong_us %lf", &res->v[2]) == 1;
    found += sscanf(line, "shim %d", shim) == 1;
  }
  return pclose(out) == 0 && found == lines;
}

/* Median and best (lowest) over runs of f(result) for one variant. */
static void summarize(const struct result *res, long runs, double (*f)(const struct result *),
                      double *med, double *best, double *worst) {
  double column[64];
  for (long run = 0; run < runs; ++run) column[run] = f(&res[run]);
  *med = bench_median(column, (int)runs);
  *best = column[0]; /* bench_median() sorted it */
  *worst = column[runs - 1];
}

/* The showcase's common CSV layout: per call of MPI_Comm_rank (ns) and ping-pong latency (us),
 * median/min/max over runs, the run with the library against the one without. */
static void print_csv(const struct options *o, double m[2][3], double b[2][3], double w[2][3]) {
  static const char *variant[2] = {"native", "preload"};
  printf("experiment,variant,param,ranks,median_us,min_us,max_us,ratio_vs_native,unit\n");
  for (int with = 0; with < 2; ++with)
    printf("passthrough_comm_rank,%s,call,1,%.3f,%.3f,%.3f,%.4f,ns\n", variant[with], m[with][0],
           b[with][0], w[with][0], m[with][0] / m[0][0]);
  for (int with = 0; with < 2; ++with)
    printf("passthrough_pingpong,%s,%ld,2,%.4f,%.4f,%.4f,%.4f,us\n", variant[with], o->size,
           m[with][2], b[with][2], w[with][2], m[with][2] / m[0][2]);
}

static double bound_ns(const struct result *r) { return r->v[0]; }
static double wrapper_ns(const struct result *r) { return r->v[0] - r->v[1]; }
static double latency_us(const struct result *r) { return r->v[2]; }

static int run_compare(const char *library, const char *self, const char *mpiexec,
                       const struct options *o, int own) {
  char args[256], preload[4200];
  struct result *res[2] = {calloc((size_t)o->runs, sizeof(struct result)),
                           calloc((size_t)o->runs, sizeof(struct result))};
  double m[2][3], b[2][3], w[2][3];
  snprintf(args, sizeof args, "--calls %ld --iters %ld --rounds %ld --size %ld --dup-first %ld",
           o->calls, o->iters, o->rounds, o->size, o->dup_first);
  snprintf(preload, sizeof preload, "env 'LD_PRELOAD=%s' ", library);
  FILE *rows = o->csv ? stderr : stdout; /* with --format csv, stdout carries only the CSV */
  fprintf(rows, "row,variant,run,comm_rank_ns,comm_rank_real_ns,pingpong_us\n");
  for (long run = 0; run < o->runs; ++run) {
    for (int with = 0; with < 2; ++with) { /* alternate, so that drift hits both alike */
      int shim = -1;
      struct result *r = &res[with][run];
      if (!run_child(with ? preload : "", self, mpiexec, args, r, &shim, own ? 4 : 3) ||
          shim != with) {
        fprintf(stderr, "passthrough_bench: run %ld %s the library failed (shim=%d)\n", run,
                with ? "with" : "without", shim);
        return 1;
      }
      if (!own) r->v[1] = r->v[0]; /* another --program has no PMPI_Comm_rank row */
      fprintf(rows, "row,%s,%ld,%.3f,%.3f,%.4f\n", with ? "preload" : "native", run, r->v[0],
              r->v[1], r->v[2]);
      fflush(rows);
    }
  }
  for (int with = 0; with < 2; ++with) {
    summarize(res[with], o->runs, bound_ns, &m[with][0], &b[with][0], &w[with][0]);
    summarize(res[with], o->runs, wrapper_ns, &m[with][1], &b[with][1], &w[with][1]);
    summarize(res[with], o->runs, latency_us, &m[with][2], &b[with][2], &w[with][2]);
  }
  if (o->csv) {
    print_csv(o, m, b, w);
    free(res[0]), free(res[1]);
    return 0;
  }
  printf(
      "\n%ld runs each (median / best)  MPI_Comm_rank ns   as bound - PMPI ns   "
      "ping-pong %ld B us\n",
      o->runs, o->size);
  if (!own) printf("(as bound - PMPI: not measured by %s)\n", self);
  printf("without the library          %7.2f / %7.2f   %+6.2f / %+6.2f   %7.3f / %7.3f\n", m[0][0],
         b[0][0], m[0][1], b[0][1], m[0][2], b[0][2]);
  printf("LD_PRELOAD                   %7.2f / %7.2f   %+6.2f / %+6.2f   %7.3f / %7.3f\n", m[1][0],
         b[1][0], m[1][1], b[1][1], m[1][2], b[1][2]);
  printf(
      "difference                   %+7.2f / %+7.2f ns                     %+6.2f%% / "
      "%+6.2f%%\n",
      m[1][0] - m[0][0], b[1][0] - b[0][0], 100 * (m[1][2] - m[0][2]) / m[0][2],
      100 * (b[1][2] - b[0][2]) / b[0][2]);
  free(res[0]), free(res[1]);
  return 0;
}

static int number(const char *name, const char *text, long lo, long hi, long *out) {
  return bench_number("passthrough_bench", name, text, lo, hi, out);
}

static void usage(void) {
  printf(
      "usage: passthrough_bench [--calls N] [--iters N] [--rounds N] [--size BYTES]\n"
      "                         [--dup-first 0|1]                (one run, under mpiexec)\n"
      "       passthrough_bench --compare LIBRANGECOMM [--runs R] [--format table|csv] "
      "[--program P]\n                         [options] -- MPIEXEC [ARGS...]\n"
      "Pass-through cost of librangecomm.so on real communicators: MPI_Comm_rank ns per "
      "call and\n2-rank ping-pong latency, without and with LD_PRELOAD (see the comment "
      "at the top of\nbench/passthrough_bench.c). Defaults: --calls 20000000 --iters 20000 "
      "--rounds 15 --size 8\n--runs 5 --dup-first 0.\n");
}

int main(int argc, char **argv) {
  struct options o = {20000000, 20000, 15, 8, 5, 0, 0};
  const char *library = NULL, *program = NULL;
  static const struct option longopts[] = {{"compare", required_argument, NULL, 'c'},
                                           {"calls", required_argument, NULL, 'n'},
                                           {"iters", required_argument, NULL, 'i'},
                                           {"rounds", required_argument, NULL, 'r'},
                                           {"size", required_argument, NULL, 's'},
                                           {"runs", required_argument, NULL, 'R'},
                                           {"dup-first", required_argument, NULL, 'd'},
                                           {"format", required_argument, NULL, 'f'},
                                           {"program", required_argument, NULL, 'p'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
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
      case 'n':
        ok = number("calls", optarg, 1, LONG_MAX, &o.calls);
        break;
      case 'i':
        ok = number("iters", optarg, 1, LONG_MAX, &o.iters);
        break;
      case 'r':
        ok = number("rounds", optarg, 1, LONG_MAX, &o.rounds);
        break;
      case 's':
        ok = number("size", optarg, 0, 1L << 30, &o.size);
        break;
      case 'R':
        ok = number("runs", optarg, 1, 64, &o.runs);
        break;
      case 'd':
        ok = number("dup-first", optarg, 0, 1, &o.dup_first);
        break;
      case 'f':
        ok = bench_format("passthrough_bench", optarg, &o.csv);
        break;
      case 'p':
        program = optarg;
        break;
      default:
        ok = 0; /* getopt_long printed what was wrong */
    }
  }
  if (!ok) return 2;
  if (library == NULL) return run_mpi(argc, argv, &o);
  char launcher[4096], self[PATH_MAX];
  if (bench_launcher("passthrough_bench", argc, argv, optind, launcher, sizeof launcher, self))
    return 2;
  if (program != NULL && realpath(program, self) == NULL) {
    fprintf(stderr, "passthrough_bench: no program %s\n", program);
    return 2;
  }
  return run_compare(library, self, launcher, &o, program == NULL);
}
