/* The library's progress thread (RANGECOMM_PROGRESS=thread): nonblocking operations on library
 * communicators advance while their processes are outside MPI.
 *
 * Every rank but the last starts an MPI_Iallreduce and an MPI_Ibcast of 1 MiB each on a range
 * communicator of the whole world (MPIX_Comm_create_range) and then leaves MPI: it waits, with no
 * MPI call, for a file that the last rank writes once both of its operations have completed.
 * The last rank's operations cannot complete unless the others' parts advance meanwhile (the
 * allreduce needs every rank's contribution combined and passed on, the broadcast's 1 MiB is
 * passed on in pieces), so without a thread of the library's own that advances them the job
 * waits for ever: here a rank gives up after 60 s and fails. Then every rank waits for its own
 * operations and checks every element. Afterwards rank 0 starts an 8 MiB send to the last rank,
 * frees its request and calls MPI_Finalize, and the last rank receives it after a pause.
 *
 * The thread level the program asks for is PROGRESS_THREAD_LEVEL (single, the default, or
 * multiple); MPI_Query_thread must tell it that level whatever the library asked MPI for. At
 * multiple a second thread makes, uses and frees communicators of MPI_COMM_SELF all the while.
 * Linked, and plain under LD_PRELOAD (run_shim_test.py run), in every mode; MPIX_Comm_create_range
 * is looked up at run time so that the plain build finds the preloaded library's. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

enum { COUNT = (1 << 20) / sizeof(int), BIG = 8 << 20 };

typedef int (*create_range_fn)(MPI_Comm, int, int, int, MPI_Comm *);

static atomic_int churn_done;

/* MPIX_Comm_create_range as the process has it: linked, or the preloaded library's. */
static create_range_fn find_create_range(void) {
  void *symbol = dlsym(RTLD_DEFAULT, "MPIX_Comm_create_range");
  create_range_fn f = NULL;
  memcpy(&f, &symbol, sizeof f); /* ISO C has no object-to-function cast */
  return f;
}

static void *churn(void *arg) {
  (void)arg;
  create_range_fn create_range = find_create_range();
  for (int i = 0; !atomic_load(&churn_done) || i < 50; i++) {
    MPI_Comm dup, range;
    int one = 1, sum = 0;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &dup));
    CHECK_MPI(create_range(dup, 0, 0, 1, &range));
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, range));
    CHECK(sum == 1, "allreduce on a range of MPI_COMM_SELF: %d", sum);
    CHECK_MPI(MPI_Comm_free(&range));
    CHECK_MPI(MPI_Comm_free(&dup));
  }
  return NULL;
}

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

int main(int argc, char **argv) {
  const char *level_name = getenv("PROGRESS_THREAD_LEVEL");
  int multiple = level_name != NULL && strcmp(level_name, "multiple") == 0;
  int required = multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, provided = -1, told = -1;
  CHECK_MPI(MPI_Init_thread(&argc, &argv, required, &provided));
  shim_test_begin();
  CHECK_MPI(MPI_Query_thread(&told));
  CHECK(provided == required && told == required,
        "asked for level %d: MPI_Init_thread provided %d, MPI_Query_thread says %d", required,
        provided, told);
  const char *asked = getenv("RANGECOMM_PROGRESS");
  CHECK(asked != NULL && strcmp(asked, "thread") == 0, "run with RANGECOMM_PROGRESS=thread");
  create_range_fn create_range = find_create_range();
  CHECK(create_range != NULL, "MPIX_Comm_create_range is not there: run with librangecomm.so");

  int rank, size;
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 2, "needs 2 ranks or more");
  int last = size - 1;
  pthread_t churner;
  if (multiple) CHECK(pthread_create(&churner, NULL, churn, NULL) == 0, "pthread_create");

  /* The signal file's name: the last rank's process id, which every rank learns. */
  long id = (long)getpid();
  CHECK_MPI(MPI_Bcast(&id, 1, MPI_LONG, last, MPI_COMM_WORLD));
  const char *dir = getenv("TMPDIR");
  char signal_path[4096];
  snprintf(signal_path, sizeof signal_path, "%s/rangecomm-progress-thread-%ld",
           dir != NULL ? dir : "/tmp", id);

  MPI_Comm range;
  CHECK_MPI(create_range(MPI_COMM_WORLD, 0, last, 1, &range));
  int *sum_in = malloc(COUNT * sizeof(int)), *sum_out = malloc(COUNT * sizeof(int));
  int *bcast = malloc(COUNT * sizeof(int));
  CHECK(sum_in != NULL && sum_out != NULL && bcast != NULL, "out of memory");
  for (size_t i = 0; i < COUNT; i++) {
    sum_in[i] = (int)(i % 1000) + rank;
    sum_out[i] = -1;
    bcast[i] = rank == 0 ? (int)(i * 3 + 1) : -1;
  }
  MPI_Request requests[2];
  CHECK_MPI(MPI_Iallreduce(sum_in, sum_out, COUNT, MPI_INT, MPI_SUM, range, &requests[0]));
  CHECK_MPI(MPI_Ibcast(bcast, COUNT, MPI_INT, 0, range, &requests[1]));
  if (rank == last) {
    CHECK_MPI(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
    FILE *f = fopen(signal_path, "w");
    CHECK(f != NULL, "cannot write %s", signal_path);
    fclose(f);
    note("rank %d: both operations completed while the others were outside MPI", rank);
  } else {
    int waited_ms = 0;
    while (!file_exists(signal_path)) {
      CHECK(waited_ms < 60 * 1000,
            "rank %d: the last rank's operations did not complete in 60 s while this rank "
            "was outside MPI (no progress thread?)",
            rank);
      usleep(1000);
      waited_ms++;
    }
    CHECK_MPI(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
    note("rank %d: the last rank signalled; own operations then completed", rank);
  }
  int bad = 0;
  for (size_t i = 0; i < COUNT; i++) {
    int sum = size * (int)(i % 1000) + size * (size - 1) / 2;
    bad += sum_out[i] != sum || bcast[i] != (int)(i * 3 + 1);
  }
  CHECK(bad == 0, "rank %d: %d wrong elements", rank, bad);
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == last) unlink(signal_path);

  /* A send pending at MPI_Finalize, its request freed. */
  unsigned char *data = malloc(BIG);
  CHECK(data != NULL, "out of memory");
  if (rank == 0) {
    for (size_t i = 0; i < BIG; i++) data[i] = (unsigned char)(i * 7);
    MPI_Request sent;
    CHECK_MPI(MPI_Isend(data, BIG, MPI_BYTE, last, 3, range, &sent));
    CHECK_MPI(MPI_Request_free(&sent));
  } else if (rank == last) {
    usleep(200 * 1000);
    CHECK_MPI(MPI_Recv(data, BIG, MPI_BYTE, 0, 3, range, MPI_STATUS_IGNORE));
    for (size_t i = 0; i < BIG; i++)
      CHECK(data[i] == (unsigned char)(i * 7), "byte %zu of the send pending at MPI_Finalize", i);
    note("rank %d: the send rank 0 left pending at MPI_Finalize arrived intact", rank);
    printf("progress_thread: all checks passed on %d ranks (%s)\n", size,
           multiple ? "MPI_THREAD_MULTIPLE" : "MPI_THREAD_SINGLE");
  }
  if (multiple) {
    atomic_store(&churn_done, 1);
    CHECK(pthread_join(churner, NULL) == 0, "pthread_join");
  }
  if (rank != 0) CHECK_MPI(MPI_Comm_free(&range));
  CHECK_MPI(MPI_Finalize());
  free(data);
  free(sum_in);
  free(sum_out);
  free(bcast);
  return 0;
}
