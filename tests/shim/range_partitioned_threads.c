/* Partitioned communication on a range communicator with MPI_THREAD_MULTIPLE, as partitioned
 * communication is meant to be used: THREADS threads per process mark the partitions of one send
 * ready (each its own share, by MPI_Pready, MPI_Pready_range and MPI_Pready_list, in an order of
 * its own) while as many threads poll MPI_Parrived on their shares of the receive and check the
 * data each reported partition holds. A ring over the whole world as a range (size 1: a process
 * sending to itself), ROUNDS rounds of one pair of persistent requests, sender and receiver
 * partitioned differently; the main thread starts each round and waits for its send while the
 * threads mark the partitions ready, then completes the receive. Run first on a dup
 * of MPI_COMM_WORLD where the MPI's own partitioned communication is the oracle (MPICH; see
 * range_partitioned.c for Open MPI 5.0's), then on the range.
 *
 *   range_partitioned_threads [rounds]   (default 40)
 *
 * Every failed check aborts the job with the thread named. Registered where mpi.h declares
 * MPI_Psend_init. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#include <pthread.h>

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

enum { THREADS = 4, SEND_PARTS = 4 * THREADS, SEND_COUNT = 30, RECV_PARTS = 2 * THREADS };
enum { TOTAL = SEND_PARTS * SEND_COUNT, RECV_COUNT = TOTAL / RECV_PARTS };

#ifdef MPICH_VERSION
enum { NATIVE_IS_ORACLE = 1 };
#else
enum { NATIVE_IS_ORACLE = 0 };
#endif

static int rounds = 40;
static const char *scope = "natively";

static int value(int origin, int round, int i) { return 1000000 * (origin + 1) + 1000 * round + i; }

/* One round's shared state: the buffers, the requests and who sends to whom. */
struct round_state {
  int *out, *in;
  MPI_Request sreq, rreq;
  int me, left, round;
};

struct thread_arg {
  struct round_state *state;
  int thread;
};

/* Thread t owns send partitions t, t + THREADS, ...: fills each, then marks them ready in turns
 * of MPI_Pready, MPI_Pready_list (two at once) and MPI_Pready_range (one), last one first on odd
 * rounds. */
static void *sender(void *p) {
  const struct thread_arg *arg = p;
  struct round_state *s = arg->state;
  int mine[SEND_PARTS / THREADS], n = 0;
  for (int k = arg->thread; k < SEND_PARTS; k += THREADS) mine[n++] = k;
  if (s->round % 2)
    for (int i = 0; i < n / 2; ++i) {
      int t = mine[i];
      mine[i] = mine[n - 1 - i];
      mine[n - 1 - i] = t;
    }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < SEND_COUNT; ++j) {
      int at = mine[i] * SEND_COUNT + j;
      s->out[at] = value(s->me, s->round, at);
    }
  for (int i = 0, turn = 0; i < n; ++turn) {
    if (turn % 3 == 1 && i + 1 < n) {
      CHECK_MPI(MPI_Pready_list(2, &mine[i], s->sreq));
      i += 2;
    } else if (turn % 3 == 2) {
      CHECK_MPI(MPI_Pready_range(mine[i], mine[i], s->sreq));
      i += 1;
    } else {
      CHECK_MPI(MPI_Pready(mine[i], s->sreq));
      i += 1;
    }
  }
  return NULL;
}

/* Thread t polls receive partitions t and t + THREADS; once one is reported, its data must be
 * in the buffer. */
static void *receiver(void *p) {
  const struct thread_arg *arg = p;
  struct round_state *s = arg->state;
  for (int k = arg->thread; k < RECV_PARTS; k += THREADS) {
    int flag = 0;
    double start = MPI_Wtime();
    while (!flag) {
      CHECK_MPI(MPI_Parrived(s->rreq, k, &flag));
      CHECK(flag || MPI_Wtime() - start < 60,
            "%s, round %d, thread %d: partition %d never "
            "arrived",
            scope, s->round, arg->thread, k);
    }
    for (int j = k * RECV_COUNT; j < (k + 1) * RECV_COUNT; ++j)
      CHECK(s->in[j] == value(s->left, s->round, j),
            "%s, round %d, thread %d: after "
            "MPI_Parrived(%d) element %d is %d, expected %d",
            scope, s->round, arg->thread, k, j, s->in[j], value(s->left, s->round, j));
  }
  return NULL;
}

static void run(MPI_Comm c) {
  int p = 0, me = 0, tag = 5;
  MPI_Comm_size(c, &p);
  MPI_Comm_rank(c, &me);
  int out[TOTAL], in[TOTAL];
  struct round_state s = {out, in, MPI_REQUEST_NULL, MPI_REQUEST_NULL, me, (me + p - 1) % p, 0};
  CHECK_MPI(MPI_Psend_init(out, SEND_PARTS, SEND_COUNT, MPI_INT, (me + 1) % p, tag, c,
                           MPI_INFO_NULL, &s.sreq));
  CHECK_MPI(
      MPI_Precv_init(in, RECV_PARTS, RECV_COUNT, MPI_INT, s.left, tag, c, MPI_INFO_NULL, &s.rreq));
  for (s.round = 0; s.round < rounds; ++s.round) {
    for (int i = 0; i < TOTAL; ++i) in[i] = -1;
    MPI_Request both[2] = {s.sreq, s.rreq};
    CHECK_MPI(MPI_Startall(2, both));
    pthread_t t[2 * THREADS];
    struct thread_arg args[THREADS];
    for (int i = 0; i < THREADS; ++i) {
      args[i].state = &s;
      args[i].thread = i;
      CHECK(pthread_create(&t[i], NULL, sender, &args[i]) == 0, "pthread_create");
      CHECK(pthread_create(&t[THREADS + i], NULL, receiver, &args[i]) == 0, "pthread_create");
    }
    /* Blocked in MPI_Wait on the send while the threads mark its partitions ready: it returns
     * once the last one is (its message cannot go before). */
    CHECK_MPI(MPI_Wait(&both[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < 2 * THREADS; ++i) CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
    CHECK_MPI(MPI_Wait(&both[1], MPI_STATUS_IGNORE));
    for (int i = 0; i < TOTAL; ++i)
      CHECK(in[i] == value(s.left, s.round, i), "%s, round %d: element %d is %d, expected %d",
            scope, s.round, i, in[i], value(s.left, s.round, i));
  }
  CHECK_MPI(MPI_Request_free(&s.sreq));
  CHECK_MPI(MPI_Request_free(&s.rreq));
  CHECK_MPI(MPI_Barrier(c));
}

int main(int argc, char **argv) {
  shim_init_thread_multiple(&argc, &argv);
  if (argc > 1) rounds = atoi(argv[1]);
  int wr, wp;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &wp);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (NATIVE_IS_ORACLE) {
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    run(dup);
    CHECK_MPI(MPI_Comm_free(&dup));
  }
  if (MPIX_Comm_create_range != NULL) {
    MPI_Comm all;
    CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp - 1, 1, &all));
    scope = "on a range";
    run(all);
    CHECK_MPI(MPI_Comm_free(&all));
  }
  shim_test_end();
  MPI_Finalize();
  if (wr == 0)
    printf("range_partitioned_threads: %d rounds, %d threads on each side, %d ranks%s\n", rounds,
           THREADS, wp, MPIX_Comm_create_range != NULL ? "" : " (no library: natively only)");
  return 0;
}
