/* Helpers of the shim's C test programs: checks that abort the whole job on failure (so that a
 * failure on one rank never leaves the others waiting), a transcript of results per rank, and
 * a check that the program really runs with (or without) librangecomm.so in front of MPI. */
#ifndef SHIM_CHECK_H
#define SHIM_CHECK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* weak: one shared definition however many files of a program include this header */
__attribute__((weak)) FILE *shim_transcript_file;
__attribute__((weak)) int shim_world_rank = -1;

/* Fails the job: prints where and why, then MPI_Abort (no rank is left waiting). */
#define CHECK(cond, ...)                                                                         \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      fprintf(stderr, "rank %d: %s:%d: CHECK(%s) failed: ", shim_world_rank, __FILE__, __LINE__, \
              #cond);                                                                            \
      fprintf(stderr, __VA_ARGS__);                                                              \
      fprintf(stderr, "\n");                                                                     \
      fflush(stderr);                                                                            \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                              \
    }                                                                                            \
  } while (0)

/* An MPI call that must succeed. */
#define CHECK_MPI(call)                                                  \
  do {                                                                   \
    int shim_err_ = (call);                                              \
    CHECK(shim_err_ == MPI_SUCCESS, "%s returned %d", #call, shim_err_); \
  } while (0)

/* One line of this rank's transcript (a file per rank under $SHIM_TRANSCRIPT, if set). The
 * driver compares transcripts of runs with and without the library. */
static inline void note(const char *fmt, ...) {
  va_list args;
  if (shim_transcript_file == NULL) return;
  va_start(args, fmt);
  vfprintf(shim_transcript_file, fmt, args);
  va_end(args);
  fputc('\n', shim_transcript_file);
  fflush(shim_transcript_file); /* keep what was reached if the job aborts */
}

/* Whether MPI_Send, as this program binds it, is defined in librangecomm.so. */
static inline int shim_is_interposed(void) {
  Dl_info info;
  int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = MPI_Send;
  void *address;
  memcpy(&address, &send, sizeof address); /* ISO C has no function-to-object cast */
  if (dladdr(address, &info) == 0 || info.dli_fname == NULL) return 0;
  return strstr(info.dli_fname, "librangecomm") != NULL;
}

/* After MPI_Init: opens the transcript and checks $SHIM_EXPECT ("shim" or "none") against
 * where MPI_Send comes from, so that a run meant to test the library cannot silently miss it. */
static inline void shim_test_begin(void) {
  const char *dir = getenv("SHIM_TRANSCRIPT");
  const char *expect = getenv("SHIM_EXPECT");
  MPI_Comm_rank(MPI_COMM_WORLD, &shim_world_rank);
  if (expect != NULL) {
    int want = strcmp(expect, "shim") == 0;
    CHECK(shim_is_interposed() == want, "SHIM_EXPECT=%s but MPI_Send %s librangecomm.so", expect,
          shim_is_interposed() ? "comes from" : "does not come from");
  }
  if (dir != NULL && dir[0] != '\0') {
    char path[4096];
    snprintf(path, sizeof path, "%s/rank%d.txt", dir, shim_world_rank);
    shim_transcript_file = fopen(path, "w");
    CHECK(shim_transcript_file != NULL, "cannot write %s", path);
  }
}

static inline void shim_test_end(void) {
  if (shim_transcript_file != NULL) fclose(shim_transcript_file);
  shim_transcript_file = NULL;
}

/* MPI_Init_thread asking for MPI_THREAD_MULTIPLE, then shim_test_begin; the job fails if MPI
 * provides less. */
/* How many processes of comm run on this process's host (MPI_Get_processor_name: the host
 * name, as MPI's MPI_COMM_TYPE_SHARED groups them), and this process's place among them in
 * comm's rank order: the shared-memory split's size and rank, on one host or several. */
static inline int shim_host_members(MPI_Comm comm, int *place) {
  char mine[MPI_MAX_PROCESSOR_NAME] = {0};
  int length = 0, size = 0, rank = 0, count = 0;
  MPI_Get_processor_name(mine, &length);
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  char *all = (char *)malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
  CHECK(all != NULL, "out of memory for %d host names", size);
  CHECK_MPI(MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                          MPI_CHAR, comm));
  *place = -1;
  for (int r = 0; r < size; r++) {
    if (strncmp(all + (size_t)r * MPI_MAX_PROCESSOR_NAME, mine, MPI_MAX_PROCESSOR_NAME) != 0)
      continue;
    if (r == rank) *place = count;
    count++;
  }
  free(all);
  return count;
}

/* MPI_Win_create on comm (collective; *win is MPI_WIN_NULL when it returns 0). Open MPI 4.1
 * without UCX has no one-sided component for one process or for processes on several hosts
 * (over TCP), and fails there with MPI_ERR_WIN, natively too: then the transcript notes it and
 * the caller skips its windows. Any other failure fails the test. */
static inline int shim_win_create(void *base, MPI_Aint bytes, int unit, MPI_Comm comm, MPI_Win *win,
                                  const char *what) {
  int size = 0, place = 0, on_host = shim_host_members(comm, &place), cls = MPI_SUCCESS;
  MPI_Errhandler before;
  MPI_Comm_size(comm, &size);
  CHECK_MPI(MPI_Comm_get_errhandler(comm, &before));
  CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  int err = MPI_Win_create(base, bytes, unit, MPI_INFO_NULL, comm, win);
  CHECK_MPI(MPI_Comm_set_errhandler(comm, before));
  CHECK_MPI(MPI_Errhandler_free(&before));
  if (err == MPI_SUCCESS) return 1;
  *win = MPI_WIN_NULL;
  MPI_Error_class(err, &cls);
  CHECK(cls == MPI_ERR_WIN && (size == 1 || on_host < size),
        "%s: MPI_Win_create failed with class %d (%d of %d processes on this host)", what, cls,
        on_host, size);
  note("%s: no one-sided windows here (MPI_ERR_WIN)", what);
  return 0;
}

static inline void shim_init_thread_multiple(int *argc, char ***argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  shim_test_begin();
  CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
}

#endif /* SHIM_CHECK_H */
