/* MPI's progress rule across communicators, as an unmodified program meets it: rank 0 posts a
 * receive on a fresh duplicate of MPI_COMM_WORLD and then blocks in a call on real handles
 * (a collective on MPI_COMM_WORLD, a wait or a probe on it, window synchronisation, collective
 * file I/O); rank 1 first sends to that receive, in a way that completes only once rank 0's
 * receive has matched (8 MiB, which every MPI sends by rendezvous, or a synchronous send), and
 * only then takes its part in rank 0's call. Natively MPI's own progress matches the receive
 * while rank 0 waits in the call. Under the acceleration modes the duplicate is a library
 * communicator and nothing has been sent on it before, so the receive waits for the library's
 * matching engine (the sender's binding has not arrived, or the source is MPI_ANY_SOURCE):
 * unless the library advances it while rank 0 is inside MPI, both ranks wait for ever.
 *
 * Plain MPI, compared with a native run (run_shim_test.py compare) in every mode. The thread
 * level the program asks for is PROGRESS_ACROSS_LEVEL (single, the default, or multiple), so
 * that both ways the library advances its operations inside MPI are tested; at multiple, a
 * second thread keeps making, using and freeing communicators of its own meanwhile (the
 * library lock between it and the library's progress from inside MPI). */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#include <pthread.h>
#include <unistd.h>

enum { BIG = 8 << 20 }; /* bytes: far above every MPI's eager limit */

/* How rank 1 sends to rank 0's receive on the duplicate. */
enum { SEND_BIG_TO_SPECIFIC, SSEND_TO_ANY_SOURCE, SENDS };
static const char *send_names[SENDS] = {"8 MiB MPI_Send to a receive from rank 1",
                                        "MPI_Ssend to an MPI_ANY_SOURCE receive"};

/* The call on real handles in which rank 0 waits. */
enum { ALLREDUCE, BARRIER, BCAST, WAIT, PROBE, WIN_FENCE, FILE_WRITE_AT_ALL, CALLS };
static const char *call_names[CALLS] = {
    "MPI_Allreduce", "MPI_Barrier",          "MPI_Bcast", "MPI_Wait", "MPI_Probe",
    "MPI_Win_fence", "MPI_File_write_at_all"};

static MPI_Win window;
static int window_memory[8];
static MPI_File file;

/* Rank 0 waits in the call; every other rank enters it after rank 1's send completed. Returns a
 * value that depends on every rank's part, for the transcript. */
static int real_call(int call, int rank, int size) {
  int value = 10 * rank + call, result = -1;
  MPI_Request request;
  MPI_Status status;
  switch (call) {
    case ALLREDUCE:
      CHECK_MPI(MPI_Allreduce(&value, &result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
      break;
    case BARRIER:
      CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
      result = size;
      break;
    case BCAST:
      result = value;
      CHECK_MPI(MPI_Bcast(&result, 1, MPI_INT, 1, MPI_COMM_WORLD));
      break;
    case WAIT:
      if (rank == 0) {
        CHECK_MPI(MPI_Irecv(&result, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, &request));
        CHECK_MPI(MPI_Wait(&request, &status));
      }
      if (rank == 1) CHECK_MPI(MPI_Send(&value, 1, MPI_INT, 0, 9, MPI_COMM_WORLD));
      break;
    case PROBE:
      if (rank == 0) {
        CHECK_MPI(MPI_Probe(1, 9, MPI_COMM_WORLD, &status));
        CHECK_MPI(MPI_Recv(&result, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, &status));
      }
      if (rank == 1) CHECK_MPI(MPI_Send(&value, 1, MPI_INT, 0, 9, MPI_COMM_WORLD));
      break;
    case WIN_FENCE: /* every rank puts its value into rank 0's window between two fences */
      CHECK_MPI(MPI_Win_fence(0, window));
      CHECK_MPI(MPI_Put(&value, 1, MPI_INT, 0, rank % 8, 1, MPI_INT, window));
      CHECK_MPI(MPI_Win_fence(0, window));
      if (rank == 0) result = window_memory[0] + window_memory[1];
      break;
    case FILE_WRITE_AT_ALL:
      CHECK_MPI(MPI_File_write_at_all(file, (MPI_Offset)rank * (MPI_Offset)sizeof value, &value, 1,
                                      MPI_INT, &status));
      CHECK_MPI(MPI_File_read_at_all(file, (MPI_Offset)rank * (MPI_Offset)sizeof value, &result, 1,
                                     MPI_INT, &status));
      break;
  }
  return result;
}

/* The second thread: duplicates of MPI_COMM_SELF, each used once and freed, until told to stop
 * (MPI_COMM_SELF involves no other process, so the threads of different processes never wait
 * for each other). Returns how many it made. */
static volatile int stop_churn;
static void *churn(void *unused) {
  (void)unused;
  long made = 0;
  while (!__atomic_load_n(&stop_churn, __ATOMIC_ACQUIRE)) {
    MPI_Comm copy;
    int one = 1, sum = 0;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &copy));
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, copy));
    CHECK(sum == 1, "a dup of MPI_COMM_SELF sums to %d", sum);
    CHECK_MPI(MPI_Comm_free(&copy));
    ++made;
    usleep(100); /* leave the cores to the ranks: MPICH's busy-poll */
  }
  return (void *)made;
}

static void scenario(int send, int call, int rank, int size) {
  MPI_Comm dup; /* fresh: nothing has travelled on it yet */
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  int count = send == SEND_BIG_TO_SPECIFIC ? BIG : 1;
  char *buffer = calloc((size_t)count, 1);
  CHECK(buffer != NULL, "out of memory");
  if (rank == 1) {
    for (int i = 0; i < count; ++i) buffer[i] = (char)(i * 7 + call);
    if (send == SEND_BIG_TO_SPECIFIC)
      CHECK_MPI(MPI_Send(buffer, count, MPI_CHAR, 0, 5, dup));
    else
      CHECK_MPI(MPI_Ssend(buffer, count, MPI_CHAR, 0, 5, dup));
  }
  MPI_Request request = MPI_REQUEST_NULL;
  if (rank == 0)
    CHECK_MPI(MPI_Irecv(buffer, count, MPI_CHAR, send == SSEND_TO_ANY_SOURCE ? MPI_ANY_SOURCE : 1,
                        5, dup, &request));
  int result = real_call(call, rank, size);
  if (rank == 0) {
    MPI_Status status;
    CHECK_MPI(MPI_Wait(&request, &status));
    int received = 0;
    CHECK_MPI(MPI_Get_count(&status, MPI_CHAR, &received));
    int intact = received == count && status.MPI_SOURCE == 1 && status.MPI_TAG == 5;
    for (int i = 0; i < count && intact; ++i) intact = buffer[i] == (char)(i * 7 + call);
    CHECK(intact, "%s while in %s: %d bytes from %d tag %d, or wrong data", send_names[send],
          call_names[call], received, status.MPI_SOURCE, status.MPI_TAG);
  }
  note("%s while rank 0 is in %s: done, the call gave %d", send_names[send], call_names[call],
       result);
  free(buffer);
  CHECK_MPI(MPI_Comm_free(&dup));
}

int main(int argc, char **argv) {
  const char *level_name = getenv("PROGRESS_ACROSS_LEVEL");
  int multiple = level_name != NULL && strcmp(level_name, "multiple") == 0;
  int provided = MPI_THREAD_SINGLE;
  if (multiple)
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  else
    MPI_Init(&argc, &argv);
  shim_test_begin();
  int rank, size, level;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* the level the program sees is MPI's answer to what it asked, whatever the library asked */
  CHECK_MPI(MPI_Query_thread(&level));
  CHECK(multiple ? level == provided : level == MPI_THREAD_SINGLE,
        "MPI_Query_thread says %d (asked for %s, MPI_Init_thread provided %d)", level,
        multiple ? "multiple" : "nothing", provided);
  note("thread level as asked: %d", multiple ? level == MPI_THREAD_MULTIPLE : level);

  shim_win_create(window_memory, sizeof window_memory, sizeof window_memory[0], MPI_COMM_WORLD,
                  &window, "the world's window");
  char path[256] = "";
  if (rank == 0) {
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/rangecomm-progress-across-%ld", dir ? dir : "/tmp",
             (long)getpid());
  }
  CHECK_MPI(MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD));
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
                          MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                          &file));

  pthread_t other;
  if (multiple) CHECK(pthread_create(&other, NULL, churn, NULL) == 0, "no second thread");
  for (int send = 0; send < SENDS && size >= 2; ++send)
    for (int call = 0; call < CALLS; ++call)
      if (call != WIN_FENCE || window != MPI_WIN_NULL) scenario(send, call, rank, size);
  if (multiple) {
    void *made = NULL;
    __atomic_store_n(&stop_churn, 1, __ATOMIC_RELEASE);
    CHECK(pthread_join(other, &made) == 0, "the second thread did not end");
    CHECK((long)made > 0, "the second thread made no communicator");
  }

  CHECK_MPI(MPI_File_close(&file));
  if (window != MPI_WIN_NULL) CHECK_MPI(MPI_Win_free(&window));
  shim_test_end();
  MPI_Finalize();
  if (rank == 0) printf("progress_across: all checks passed on %d ranks\n", size);
  return 0;
}
