/* MPI's progress rule across real and range communicators. In every scenario, rank 0 has a
 * wildcard receive outstanding on a range (only the library's matching engine can take its
 * message, and only when the library is called) and then blocks in a call on a real
 * communicator; rank 1 first sends to that receive in synchronous mode (which completes only
 * once rank 0's engine has taken the message) and only then does its part of rank 0's real
 * call. The program is correct MPI: with real communicators everywhere, MPI's own progress
 * completes it. Without the shim's progress rule rank 0 would block inside MPI forever, rank 1
 * in its synchronous send: a deadlock. (RANGECOMM_SHIM_NO_PROGRESS_RULE=1 turns the rule off;
 * this program then hangs, in every scenario: checked on both MPIs at 2 ranks with
 * RANGE_PROGRESS_ONLY=k, which runs scenario k alone, k = 0..12.) */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

/* One scenario per way the shim keeps range operations moving (tools/mpi_api.py,
 * progress_kind): calls with a nonblocking twin (MPI_Recv, MPI_Ssend, the large-count forms),
 * polls (MPI_Iprobe), waits and probes written by hand, and calls that need a helper thread
 * (collectives, MPI_Sendrecv_replace). */
enum {
  RECV,
  WAIT,
  PROBE,
  WAITALL,
  SENDRECV,
  SSEND,
  IPROBE_LOOP,
  RECV_C,
  SENDRECV_REPLACE,
  BARRIER,
  BCAST,
  ALLREDUCE,
  BCAST_C,
  SCENARIOS
};
static const char *names[SCENARIOS] = {
    "MPI_Recv",  "MPI_Wait",      "MPI_Probe",  "MPI_Waitall",          "MPI_Sendrecv",
    "MPI_Ssend", "MPI_Iprobe",    "MPI_Recv_c", "MPI_Sendrecv_replace", "MPI_Barrier",
    "MPI_Bcast", "MPI_Allreduce", "MPI_Bcast_c"};

/* Whether MPI has the scenario's calls, and whether the shim needs a second thread in MPI
 * (MPI_THREAD_MULTIPLE) to advance range operations during it. */
static int available(int scenario) {
#if MPI_VERSION >= 4
  (void)scenario;
  return 1;
#else
  return scenario != RECV_C && scenario != BCAST_C; /* large counts are MPI-4 */
#endif
}
static int needs_thread(int scenario) { return scenario >= SENDRECV_REPLACE; }

/* Rank 0's blocking call on the real communicator, and rank 1's part in it. */
static void real_call(int scenario, int r, MPI_Comm real, int *value) {
  MPI_Request req;
  MPI_Status st;
  int other = 0, sum = 0;
  switch (scenario) {
    case RECV:
      if (r == 0) CHECK_MPI(MPI_Recv(value, 1, MPI_INT, 1, 6, real, &st));
      if (r == 1) CHECK_MPI(MPI_Send(value, 1, MPI_INT, 0, 6, real));
      break;
    case WAIT:
    case WAITALL:
      if (r == 0) {
        CHECK_MPI(MPI_Irecv(value, 1, MPI_INT, 1, 6, real, &req));
        CHECK_MPI(scenario == WAIT ? MPI_Wait(&req, &st) : MPI_Waitall(1, &req, &st));
      }
      if (r == 1) CHECK_MPI(MPI_Send(value, 1, MPI_INT, 0, 6, real));
      break;
    case PROBE:
      if (r == 0) {
        CHECK_MPI(MPI_Probe(1, 6, real, &st));
        CHECK_MPI(MPI_Recv(value, 1, MPI_INT, 1, 6, real, &st));
      }
      if (r == 1) CHECK_MPI(MPI_Send(value, 1, MPI_INT, 0, 6, real));
      break;
    case BARRIER:
      CHECK_MPI(MPI_Barrier(real));
      break;
    case BCAST:
      CHECK_MPI(MPI_Bcast(value, 1, MPI_INT, 1, real));
      break;
    case ALLREDUCE:
      CHECK_MPI(MPI_Allreduce(value, &sum, 1, MPI_INT, MPI_MAX, real));
      *value = sum;
      break;
    case SSEND: /* rank 0 sends: its synchronous send waits for rank 1's receive */
      if (r == 0) {
        int sent = 77;
        CHECK_MPI(MPI_Ssend(&sent, 1, MPI_INT, 1, 6, real));
        *value = sent;
      }
      if (r == 1) {
        *value = -1;
        CHECK_MPI(MPI_Recv(value, 1, MPI_INT, 0, 6, real, &st));
      }
      break;
    case IPROBE_LOOP:
      if (r == 0) {
        int flag = 0;
        while (!flag) CHECK_MPI(MPI_Iprobe(1, 6, real, &flag, &st));
        CHECK_MPI(MPI_Recv(value, 1, MPI_INT, 1, 6, real, &st));
      }
      if (r == 1) CHECK_MPI(MPI_Send(value, 1, MPI_INT, 0, 6, real));
      break;
#if MPI_VERSION >= 4
    case RECV_C:
      if (r == 0) CHECK_MPI(MPI_Recv_c(value, 1, MPI_INT, 1, 6, real, &st));
      if (r == 1) CHECK_MPI(MPI_Send_c(value, 1, MPI_INT, 0, 6, real));
      break;
    case BCAST_C:
      CHECK_MPI(MPI_Bcast_c(value, 1, MPI_INT, 1, real));
      break;
#endif
    case SENDRECV_REPLACE:
      /* ranks 0 and 1 swap values: rank 1's 77 reaches rank 0, rank 1 gets 0 */
      if (r <= 1) {
        CHECK_MPI(MPI_Sendrecv_replace(value, 1, MPI_INT, 1 - r, 6, 1 - r, 6, real, &st));
        if (r == 1) *value = *value == 0 ? 77 : -1;
      }
      break;
    case SENDRECV:
      if (r == 0)
        CHECK_MPI(MPI_Sendrecv(&other, 1, MPI_INT, 1, 7, value, 1, MPI_INT, 1, 6, real, &st));
      if (r == 1)
        CHECK_MPI(MPI_Sendrecv(value, 1, MPI_INT, 0, 6, &other, 1, MPI_INT, 0, 7, real, &st));
      break;
  }
}

static void scenario_run(int scenario, int r, MPI_Comm range, MPI_Comm real) {
  int in = -1, out = 500 + scenario, value = r == 1 ? 77 : 0;
  MPI_Request req;
  MPI_Status st;
  if (r == 0) CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 5, range, &req));
  if (r == 1) CHECK_MPI(MPI_Ssend(&out, 1, MPI_INT, 0, 5, range));
  real_call(scenario, r, real, &value);
  int collective =
      scenario == BARRIER || scenario == BCAST || scenario == ALLREDUCE || scenario == BCAST_C;
  if (r <= 1 || collective)
    CHECK(scenario == BARRIER || value == 77, "%s: rank %d got %d", names[scenario], r, value);
  if (r == 0) {
    CHECK_MPI(MPI_Wait(&req, &st));
    CHECK(in == 500 + scenario && st.MPI_SOURCE == 1 && st.MPI_TAG == 5,
          "%s: the range receive got %d from %d tag %d", names[scenario], in, st.MPI_SOURCE,
          st.MPI_TAG);
  }
  CHECK_MPI(MPI_Barrier(range));
}

int main(int argc, char **argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  shim_test_begin();
  int wr, wp;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &wp);
  MPI_Comm range, real;
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp - 1, 1, &range));
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &real));
  /* RANGE_PROGRESS_ONLY=k runs scenario k alone (to check that each one hangs without the rule) */
  int only = getenv("RANGE_PROGRESS_ONLY") ? atoi(getenv("RANGE_PROGRESS_ONLY")) : -1;
  int ran = 0;
  for (int s = 0; s < SCENARIOS && wp >= 2; ++s) {
    if (!available(s) || (only >= 0 && s != only)) continue;
    /* Blocking collectives keep range operations moving only with a second thread in MPI. */
    if (needs_thread(s) && provided != MPI_THREAD_MULTIPLE) {
      if (wr == 0) printf("range_progress: no MPI_THREAD_MULTIPLE, %s skipped\n", names[s]);
      continue;
    }
    scenario_run(s, wr, range, real);
    ++ran;
  }
  if (wr == 0) printf("range_progress: %d scenarios\n", ran);
  CHECK_MPI(MPI_Comm_free(&range));
  CHECK_MPI(MPI_Comm_free(&real));
  shim_test_end();
  MPI_Finalize();
  if (wr == 0) printf("range_progress: all checks passed on %d ranks\n", wp);
  return 0;
}
