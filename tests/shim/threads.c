/* MPI_THREAD_MULTIPLE with the library: two threads per process at once.
 *
 * 1. Paper 002's deadlock scenario: one thread duplicates a per-thread communicator while the
 *    other duplicates MPI_COMM_SELF, again and again; then both duplicate their own per-thread
 *    communicators at once (the processes take the two agreements in whatever order their
 *    threads run). Under RANGECOMM_MODE=accelerate these are the library's agreements.
 * 2. Range communicators from both threads: traffic with wildcard receives, blocking and
 *    nonblocking collectives, and creations (duplicates that agree with the other processes,
 *    local ranges) on two overlapping copies of one range at once.
 * 3. Blocking calls on range communicators never hold the library against the other thread: a
 *    thread blocked in MPI_Recv waits for a message that the other thread sends only after a
 *    collective of its own, on this process (a message to self) and across processes; the same
 *    with a thread blocked in MPI_Probe and MPI_Mprobe (wildcard and specific).
 *
 *   threads [iterations]   (default 60)
 *
 * Every check that fails aborts the job with the thread named. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#include <pthread.h>
#include <unistd.h>

/* MPIX_Comm_create_range, looked up at run time (the plain build gets it by LD_PRELOAD) */
static int (*create_range)(MPI_Comm, int, int, int, MPI_Comm *);

static int rank, size, iterations = 60;
static MPI_Comm per_thread[2]; /* duplicates of MPI_COMM_WORLD, one per thread */
static MPI_Comm ranges[2];     /* two copies of the range 0..size-1 */

static void sum_check(MPI_Comm c, int expected, int thread, const char *what) {
  int one = 1, sum = 0;
  CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
  CHECK(sum == expected, "thread %d, %s: allreduce gave %d, want %d", thread, what, sum, expected);
}

typedef void (*thread_body)(int thread);
struct thread_arg {
  int thread;
  thread_body body;
};

static void *run_thread(void *p) {
  const struct thread_arg *arg = p;
  arg->body(arg->thread);
  return NULL;
}

/* Runs body(0) and body(1) in two threads at once and waits for both. */
static void in_two_threads(thread_body body) {
  pthread_t t[2];
  struct thread_arg args[2] = {{0, body}, {1, body}};
  for (int i = 0; i < 2; ++i)
    CHECK(pthread_create(&t[i], NULL, run_thread, &args[i]) == 0, "pthread_create");
  for (int i = 0; i < 2; ++i) CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
}

/* --- 1. duplicates from two threads ------------------------------------------------------ */

static void dup_and_use(MPI_Comm parent, int expected_size, int thread, const char *what) {
  MPI_Comm dup;
  int n = 0;
  CHECK_MPI(MPI_Comm_dup(parent, &dup));
  CHECK_MPI(MPI_Comm_size(dup, &n));
  CHECK(n == expected_size, "thread %d, %s: size %d", thread, what, n);
  sum_check(dup, expected_size, thread, what);
  CHECK_MPI(MPI_Comm_free(&dup));
}

static void paper002(int thread) {
  for (int i = 0; i < iterations; ++i) {
    if (thread == 0)
      dup_and_use(per_thread[0], size, thread, "dup of the per-thread communicator");
    else
      dup_and_use(MPI_COMM_SELF, 1, thread, "dup of MPI_COMM_SELF");
  }
}

static void both_per_thread(int thread) {
  for (int i = 0; i < iterations; ++i)
    dup_and_use(per_thread[thread], size, thread, "concurrent dups of per-thread communicators");
}

/* --- 2. traffic and creation on two overlapping ranges at once -------------------------- */

static void traffic(int thread) {
  MPI_Comm c = ranges[thread];
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int i = 0; i < iterations; ++i) {
    /* a wildcard receive (the matching engine) and a send around the ring */
    int out = 1000 * thread + i + rank, in = -1;
    MPI_Request rq[2];
    MPI_Status st[2];
    CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 100 + thread, c, &rq[0]));
    CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, right, 100 + thread, c, &rq[1]));
    CHECK_MPI(MPI_Waitall(2, rq, st));
    CHECK(
        in == 1000 * thread + i + left && st[0].MPI_SOURCE == left && st[0].MPI_TAG == 100 + thread,
        "thread %d: ring got %d from %d tag %d", thread, in, st[0].MPI_SOURCE, st[0].MPI_TAG);
    /* blocking, the other way round */
    CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, left, 7, &in, 1, MPI_INT, right, 7, c, &st[0]));
    CHECK(in == 1000 * thread + i + right, "thread %d: sendrecv got %d", thread, in);
    /* collectives, blocking and nonblocking */
    int sum = 0, root = i % size, value = rank == root ? i * 3 + thread : -1;
    CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2, "thread %d: allreduce %d", thread, sum);
    MPI_Request b;
    CHECK_MPI(MPI_Ibcast(&value, 1, MPI_INT, root, c, &b));
    CHECK_MPI(MPI_Wait(&b, MPI_STATUS_IGNORE));
    CHECK(value == i * 3 + thread, "thread %d: ibcast %d", thread, value);
    if (i % 10 == 0) {
      /* creations: a duplicate agreed with the other processes (the other thread agrees on a
       * duplicate of the overlapping copy at the same time), and a local range */
      dup_and_use(c, size, thread, "dup of a range from a thread");
      MPI_Comm half;
      CHECK_MPI(create_range(c, 0, (size - 1) / 2, 1, &half));
      if (rank <= (size - 1) / 2) {
        sum_check(half, (size - 1) / 2 + 1, thread, "range of a range");
        CHECK_MPI(MPI_Comm_free(&half));
      } else {
        CHECK(half == MPI_COMM_NULL, "thread %d: outside the range but not MPI_COMM_NULL", thread);
      }
    }
  }
}

/* --- 3. a blocked thread does not hold the library ------------------------------------- */

static void blocked_receive(int thread) {
  MPI_Comm c = ranges[0];
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  if (thread == 0) {
    int from_self = -1, from_left = -1;
    MPI_Status st;
    CHECK_MPI(MPI_Recv(&from_self, 1, MPI_INT, rank, 11, c, &st));
    CHECK(from_self == 500 + rank && st.MPI_SOURCE == rank, "self message %d", from_self);
    CHECK_MPI(MPI_Recv(&from_left, 1, MPI_INT, left, 12, c, &st));
    CHECK(from_left == 600 + left, "message from the left %d", from_left);
  } else {
    usleep(20000); /* let the other thread block first */
    sum_check(ranges[1], size, thread, "collective while the other thread blocks");
    int mine = 500 + rank, onward = 600 + rank;
    CHECK_MPI(MPI_Send(&mine, 1, MPI_INT, rank, 11, c));
    CHECK_MPI(MPI_Send(&onward, 1, MPI_INT, right, 12, c));
  }
}

static void blocked_probe(int thread) {
  MPI_Comm c = ranges[0];
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  if (thread == 0) {
    int got = -1, count = -1;
    MPI_Status st;
    MPI_Message message;
    CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, 13, c, &st));
    CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(st.MPI_SOURCE == rank && count == 1, "probe of the self message: source %d, count %d",
          st.MPI_SOURCE, count);
    CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, rank, 13, c, MPI_STATUS_IGNORE));
    CHECK(got == 700 + rank, "self message after the probe %d", got);
    CHECK_MPI(MPI_Mprobe(left, 14, c, &message, &st));
    CHECK_MPI(MPI_Mrecv(&got, 1, MPI_INT, &message, &st));
    CHECK(got == 800 + left && st.MPI_SOURCE == left, "message from the left after Mprobe %d", got);
  } else {
    usleep(20000); /* let the other thread block in its probe first */
    sum_check(ranges[1], size, thread, "collective while the other thread probes");
    int mine = 700 + rank, onward = 800 + rank;
    CHECK_MPI(MPI_Send(&mine, 1, MPI_INT, rank, 13, c));
    CHECK_MPI(MPI_Send(&onward, 1, MPI_INT, right, 14, c));
  }
}

int main(int argc, char **argv) {
  shim_init_thread_multiple(&argc, &argv);
  if (argc > 1) iterations = atoi(argv[1]);
  CHECK(iterations > 0, "iterations must be positive");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  void *fn = dlsym(RTLD_DEFAULT, "MPIX_Comm_create_range");
  CHECK(fn != NULL, "MPIX_Comm_create_range not found: librangecomm.so is not loaded");
  memcpy(&create_range, &fn, sizeof fn);

  for (int t = 0; t < 2; ++t) CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &per_thread[t]));
  in_two_threads(paper002);
  in_two_threads(both_per_thread);
  note("duplicates from two threads: done");

  MPI_Comm whole;
  CHECK_MPI(create_range(MPI_COMM_WORLD, 0, size - 1, 1, &whole));
  for (int t = 0; t < 2; ++t) CHECK_MPI(MPI_Comm_dup(whole, &ranges[t]));
  in_two_threads(traffic);
  note("traffic on two ranges from two threads: done");
  in_two_threads(blocked_receive);
  note("blocked receive: done");
  in_two_threads(blocked_probe);
  note("blocked probe: done");

  for (int t = 0; t < 2; ++t) {
    CHECK_MPI(MPI_Comm_free(&ranges[t]));
    CHECK_MPI(MPI_Comm_free(&per_thread[t]));
  }
  CHECK_MPI(MPI_Comm_free(&whole));
  if (rank == 0) printf("threads: %d iterations on %d processes: ok\n", iterations, size);
  MPI_Finalize();
  return 0;
}
