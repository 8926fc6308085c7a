/* overlap_bench: how much of a nonblocking collective hides behind computation, as the OSU
 * benchmarks measure it, on a range communicator of the whole world (MPIX_Comm_create_range)
 * and on MPI's own duplicate of it, in the same run.
 *
 *   overlap_bench [--colls LIST] [--sizes LIST] [--samples N] [--compute cpu|offload|sleep|all]
 *                 [--format table|csv] [--latency]
 *
 * For each collective (ibcast, iallreduce, ialltoall, iallgather, ireduce), message size (bytes
 * per process: the broadcast's message, the reduction's vector, one block of the all-to-all
 * and all-gather) and communicator: `pure` is the time of the collective alone (start, then
 * wait); then each process starts it, computes for that long and waits, `overall`, and the
 * computation inside that takes `compute`, timed in the same sample as the OSU benchmarks time
 * theirs (a computation's length varies from sample to sample far more than a collective's on
 * a machine whose scheduler is coarse). Overlap = max(0, 100 - (overall - compute) / pure *
 * 100), overall - compute taken per process: 100% when starting and waiting cost nothing
 * beside the computation. Three kinds of computation: `cpu`, a loop of arithmetic that calls
 * nothing; and work the host waits for (an accelerator's kernel, I/O), `offload` yielding its
 * core until the time is up, as a host thread waiting on a device with cudaDeviceScheduleYield
 * does (the core is still contended: every yield may give it to another thread for a time
 * slice), and `sleep` blocking, as with cudaDeviceScheduleBlockingSync or a read (the core is
 * free; the sleep may last longer than asked, which the computation's own time, measured
 * inside the sample, takes in). Each time is the slowest process's, the median of --samples
 * samples, each after a barrier.
 *
 * --latency measures instead what the progress thread costs small blocking operations: per
 * call, a ping-pong of 8 bytes between ranks 0 and 1 (half the round trip), Bcast of 4 bytes,
 * Allreduce of 8 bytes and Barrier, each on the range and on MPI's duplicate (the median of
 * --samples samples of 200 calls, the slowest process's); run it with the thread and without.
 *
 * Whether the library's progress thread runs is RANGECOMM_PROGRESS=thread at MPI_Init, and
 * whether MPICH's is, MPICH_ASYNC_PROGRESS=1: run it once each way (docs/collectives.md). A
 * benchmark: it prints, it never fails on a timing. */
#include <getopt.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_cli.h"
#include "rangecomm.h"

enum { IBCAST, IALLREDUCE, IALLTOALL, IALLGATHER, IREDUCE, COLLS };
static const char *coll_names[COLLS] = {"ibcast", "iallreduce", "ialltoall", "iallgather",
                                        "ireduce"};
enum { CPU, OFFLOAD, SLEEP, KINDS };
static const char *compute_names[KINDS] = {"cpu", "offload", "sleep"};

static int rank, size;
static unsigned char *sendbuf, *recvbuf;

static int start(int coll, int bytes, MPI_Comm comm, MPI_Request *r) {
  int ints = bytes / (int)sizeof(int);
  switch (coll) {
    case IBCAST:
      return MPI_Ibcast(sendbuf, bytes, MPI_BYTE, 0, comm, r);
    case IALLREDUCE:
      return MPI_Iallreduce(sendbuf, recvbuf, ints, MPI_INT, MPI_SUM, comm, r);
    case IALLTOALL:
      return MPI_Ialltoall(sendbuf, bytes, MPI_BYTE, recvbuf, bytes, MPI_BYTE, comm, r);
    case IALLGATHER:
      return MPI_Iallgather(sendbuf, bytes, MPI_BYTE, recvbuf, bytes, MPI_BYTE, comm, r);
    default:
      return MPI_Ireduce(sendbuf, recvbuf, ints, MPI_INT, MPI_SUM, 0, comm, r);
  }
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Arithmetic iterations per microsecond of the CPU-bound computation, measured once. */
static double iterations_per_us;
static volatile double sink;

static void cpu_loop(long iterations) {
  double x = 1.0;
  for (long i = 0; i < iterations; i++) x = x * 1.0000001 + 1e-9;
  sink = x;
}

static void calibrate(void) {
  long n = 1000000;
  double t0 = MPI_Wtime();
  cpu_loop(n);
  double t1 = MPI_Wtime();
  iterations_per_us = n / ((t1 - t0) * 1e6);
}

static void compute(int kind, double us) {
  if (kind == CPU) {
    cpu_loop((long)(us * iterations_per_us));
  } else if (kind == OFFLOAD) {
    double end = now_us() + us;
    while (now_us() < end) sched_yield();
  } else {
    struct timespec pause = {(time_t)(us / 1e6), (long)(us * 1e3) % 1000000000L};
    nanosleep(&pause, NULL);
  }
}

static double slowest(double t) {
  double max = 0;
  MPI_Allreduce(&t, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

/* One sample (microseconds, the slowest process's each): the collective alone (`pure`); then
 * the collective around a computation (`overall`), the computation inside it (`computed`) and
 * what the process spent in MPI besides (`exposed`: overall less computed, per process). */
static void measure(int coll, int bytes, MPI_Comm comm, int kind, double target, double *pure,
                    double *computed, double *overall, double *exposed) {
  MPI_Request r;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  start(coll, bytes, comm, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  *pure = slowest((MPI_Wtime() - t0) * 1e6);
  double work = target > 0 ? target : *pure;
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  start(coll, bytes, comm, &r);
  double c0 = MPI_Wtime();
  compute(kind, work);
  double c1 = MPI_Wtime();
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  double t1 = MPI_Wtime();
  *overall = slowest((t1 - t0) * 1e6);
  *computed = slowest((c1 - c0) * 1e6);
  *exposed = slowest(((t1 - t0) - (c1 - c0)) * 1e6);
}

enum { PINGPONG, BCAST, ALLREDUCE, BARRIER, LATENCY_OPS };
static const char *latency_names[LATENCY_OPS] = {"pingpong", "bcast", "allreduce", "barrier"};
enum { LATENCY_CALLS = 200 };

/* One sample: microseconds per call of `op` on comm (LATENCY_CALLS calls). */
static double latency_sample(int op, MPI_Comm comm) {
  char byte8[8] = {0}, out8[8];
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < LATENCY_CALLS; i++) {
    if (op == PINGPONG) {
      if (rank == 0) {
        MPI_Send(byte8, 8, MPI_BYTE, 1, 0, comm);
        MPI_Recv(out8, 8, MPI_BYTE, 1, 0, comm, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(out8, 8, MPI_BYTE, 0, 0, comm, MPI_STATUS_IGNORE);
        MPI_Send(byte8, 8, MPI_BYTE, 0, 0, comm);
      }
    } else if (op == BCAST) {
      MPI_Bcast(byte8, 4, MPI_BYTE, 0, comm);
    } else if (op == ALLREDUCE) {
      double one = 1, sum = 0;
      MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
    } else {
      MPI_Barrier(comm);
    }
  }
  double per_call = (MPI_Wtime() - t0) * 1e6 / LATENCY_CALLS;
  return slowest(op == PINGPONG ? per_call / 2 : per_call);
}

static void run_latency(MPI_Comm comms[2], const char *comm_names[2], long samples, int csv) {
  double *t = malloc(sizeof(double) * (size_t)samples);
  if (rank == 0)
    printf(csv ? "op,comm,us_per_call\n" : "%-11s %-7s %12s\n", "op", "comm", "us per call");
  for (int op = 0; op < LATENCY_OPS; op++) {
    if (op == PINGPONG && size < 2) continue;
    for (int c = 0; c < 2; c++) {
      latency_sample(op, comms[c]); /* warm-up */
      for (long i = 0; i < samples; i++) t[i] = latency_sample(op, comms[c]);
      double m = bench_median(t, (int)samples);
      if (rank == 0)
        printf(csv ? "%s,%s,%.3f\n" : "%-11s %-7s %12.3f\n", latency_names[op], comm_names[c], m);
    }
  }
  free(t);
}

static int parse_list(const char *text, const char *const *names, int n, int *chosen) {
  char copy[256];
  snprintf(copy, sizeof copy, "%s", text);
  for (int i = 0; i < n; i++) chosen[i] = 0;
  for (char *word = strtok(copy, ","); word != NULL; word = strtok(NULL, ",")) {
    int found = 0;
    for (int i = 0; i < n; i++)
      if (strcmp(word, names[i]) == 0) chosen[i] = found = 1;
    if (!found) return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  int colls[COLLS] = {1, 1, 1, 1, 1}, kinds[KINDS] = {1, 1, 1}, csv = 0, nsizes = 2, latency = 0;
  long samples = 9, sizes[8] = {65536, 1 << 20};
  static const struct option options[] = {
      {"colls", required_argument, 0, 'c'},   {"sizes", required_argument, 0, 's'},
      {"samples", required_argument, 0, 'n'}, {"compute", required_argument, 0, 'k'},
      {"format", required_argument, 0, 'f'},  {"latency", no_argument, 0, 'l'},
      {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
  for (int o; (o = getopt_long(argc, argv, "", options, NULL)) != -1;) {
    if (o == 'c' && !parse_list(optarg, coll_names, COLLS, colls)) {
      fprintf(stderr,
              "overlap_bench: --colls: names from ibcast,iallreduce,ialltoall,"
              "iallgather,ireduce\n");
      return 2;
    } else if (o == 's') {
      char copy[256];
      snprintf(copy, sizeof copy, "%s", optarg);
      nsizes = 0;
      for (char *w = strtok(copy, ","); w != NULL && nsizes < 8; w = strtok(NULL, ","))
        if (!bench_number("overlap_bench", "sizes", w, 4, 1L << 26, &sizes[nsizes++])) return 2;
    } else if (o == 'n' && !bench_number("overlap_bench", "samples", optarg, 1, 100000, &samples)) {
      return 2;
    } else if (o == 'k') {
      int all = strcmp(optarg, "all") == 0;
      int found = 0;
      for (int k = 0; k < KINDS; k++) {
        kinds[k] = all || strcmp(optarg, compute_names[k]) == 0;
        found |= kinds[k];
      }
      if (!found) {
        fprintf(stderr, "overlap_bench: --compute: cpu, offload, sleep or all\n");
        return 2;
      }
    } else if (o == 'f' && !bench_format("overlap_bench", optarg, &csv)) {
      return 2;
    } else if (o == 'l') {
      latency = 1;
    } else if (o == 'h' || o == '?') {
      printf(
          "usage: overlap_bench [--colls LIST] [--sizes LIST] [--samples N] "
          "[--compute cpu|offload|sleep|all] [--format table|csv] [--latency]\n");
      return o == 'h' ? 0 : 2;
    }
  }
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long most = 0;
  for (int i = 0; i < nsizes; i++) most = sizes[i] > most ? sizes[i] : most;
  sendbuf = calloc((size_t)most * (size_t)size, 1);
  recvbuf = calloc((size_t)most * (size_t)size, 1);
  if (sendbuf == NULL || recvbuf == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Comm comms[2];
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
  MPIX_Comm_create_range(MPI_COMM_WORLD, 0, size - 1, 1, &comms[1]);
  const char *comm_names[2] = {"native", "range"};
  calibrate();
  const char *thread = getenv("RANGECOMM_PROGRESS"), *async = getenv("MPICH_ASYNC_PROGRESS");
  if (rank == 0) {
    printf(
        "# overlap_bench: %d ranks; library progress thread %s; MPICH_ASYNC_PROGRESS %s; "
        "median of %ld samples, us\n",
        size, thread && strcmp(thread, "thread") == 0 ? "on" : "off", async ? async : "unset",
        samples);
    if (!latency)
      printf(csv ? "coll,bytes,compute,comm,pure_us,compute_us,overall_us,overlap_pct\n"
                 : "%-11s %8s %-8s %-7s %10s %10s %10s %8s\n",
             "coll", "bytes", "compute", "comm", "pure", "compute", "overall", "overlap");
  }
  if (latency) {
    run_latency(comms, comm_names, samples, csv);
    for (int coll = 0; coll < COLLS; coll++) colls[coll] = 0;
  }
  double *pure = malloc(sizeof(double) * (size_t)samples);
  double *computed = malloc(sizeof(double) * (size_t)samples);
  double *overall = malloc(sizeof(double) * (size_t)samples);
  double *exposed = malloc(sizeof(double) * (size_t)samples);
  for (int coll = 0; coll < COLLS; coll++) {
    if (!colls[coll]) continue;
    for (int s = 0; s < nsizes; s++) {
      int bytes = (int)sizes[s];
      for (int kind = 0; kind < KINDS; kind++) {
        if (!kinds[kind]) continue;
        for (int c = 0; c < 2; c++) {
          double p0, c0, o0, e0;
          measure(coll, bytes, comms[c], kind, 0, &p0, &c0, &o0, &e0); /* warm-up */
          double target = p0;
          for (long i = 0; i < samples; i++)
            measure(coll, bytes, comms[c], kind, target, &pure[i], &computed[i], &overall[i],
                    &exposed[i]);
          double p = bench_median(pure, (int)samples), a = bench_median(computed, (int)samples);
          double o = bench_median(overall, (int)samples), e = bench_median(exposed, (int)samples);
          double pct = 100.0 - e / p * 100.0;
          if (pct < 0) pct = 0;
          if (rank == 0)
            printf(csv ? "%s,%d,%s,%s,%.1f,%.1f,%.1f,%.1f\n"
                       : "%-11s %8d %-8s %-7s %10.1f %10.1f %10.1f %7.1f%%\n",
                   coll_names[coll], bytes, compute_names[kind], comm_names[c], p, a, o, pct);
        }
      }
    }
  }
  free(pure);
  free(computed);
  free(overall);
  free(exposed);
  MPI_Comm_free(&comms[0]);
  MPI_Comm_free(&comms[1]);
  free(sendbuf);
  free(recvbuf);
  MPI_Finalize();
  return 0;
}
