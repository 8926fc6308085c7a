/* Creation calls separate the messages sent before and after them, as every MPI makes them do:
 * MPI_Comm_dup, MPI_Comm_create and MPI_Comm_create_group agree on a context id, so no process
 * returns from one before every member has entered it. Programs rely on it. DOLFINx's edge
 * discovery is the pattern here (NBX): each round every rank MPI_Issends to its neighbours,
 * receives what MPI_Iprobe(MPI_ANY_SOURCE) finds, and once its own sends are matched joins an
 * MPI_Ibarrier; the round ends when the barrier completes. The next round runs on the same
 * communicator with the same tag right after a creation call on it. One rank is slow: it naps
 * between polls, so that it is still probing in a round when the others have finished it. A
 * next-round message that reached it there would be received in the wrong round; natively the
 * creation keeps the others from sending until the slow rank has left the round.
 *
 * Plain MPI, compared with a native run in every mode: the rounds run on a duplicate of
 * MPI_COMM_WORLD (a library communicator under the acceleration modes) and on MPI_COMM_WORLD,
 * with MPI_Comm_dup, MPI_Comm_create, MPI_Comm_create_group and MPI_Comm_idup (waited for)
 * between rounds. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#include <unistd.h>

enum { ROUNDS = 16, TAG = 7 };

static void nbx_round(MPI_Comm comm, int round, int rank, int size) {
  int targets[2], count = 0;
  for (int k = 1; k <= 2 && k < size; ++k) targets[count++] = (rank + k) % size;
  int out[2][2];
  MPI_Request sends[2];
  MPI_Status statuses[2];
  for (int i = 0; i < count; ++i) {
    out[i][0] = round;
    out[i][1] = rank;
    CHECK_MPI(MPI_Issend(out[i], 2, MPI_INT, targets[i], TAG, comm, &sends[i]));
  }
  MPI_Request barrier = MPI_REQUEST_NULL;
  int received = 0;
  for (;;) {
    int flag = 0, in[2] = {-1, -1};
    MPI_Status status;
    CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, TAG, comm, &flag, &status));
    if (flag) {
      CHECK_MPI(MPI_Recv(in, 2, MPI_INT, status.MPI_SOURCE, TAG, comm, MPI_STATUS_IGNORE));
      CHECK(in[0] == round && in[1] == status.MPI_SOURCE,
            "round %d: received round %d's message of rank %d from rank %d", round, in[0], in[1],
            status.MPI_SOURCE);
      ++received;
    }
    int done = 0;
    if (barrier == MPI_REQUEST_NULL) {
      CHECK_MPI(MPI_Testall(count, sends, &done, statuses));
      if (done) CHECK_MPI(MPI_Ibarrier(comm, &barrier));
    } else {
      CHECK_MPI(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
      if (done) break;
    }
    if (rank == size - 1) usleep(2000); /* the slow rank */
  }
  /* the barrier completed: every send of the round matched, each received once */
  CHECK(received == count, "round %d: %d messages received, %d sent to this rank", round, received,
        count);
}

/* A creation collective over comm, as the program would make one between two rounds. */
static void create_between(MPI_Comm comm, int round) {
  MPI_Comm made = MPI_COMM_NULL;
  MPI_Group group;
  MPI_Request request;
  switch (round % 4) {
    case 0:
      CHECK_MPI(MPI_Comm_dup(comm, &made));
      break;
    case 1:
      CHECK_MPI(MPI_Comm_group(comm, &group));
      CHECK_MPI(MPI_Comm_create(comm, group, &made));
      CHECK_MPI(MPI_Group_free(&group));
      break;
    case 2:
      CHECK_MPI(MPI_Comm_group(comm, &group));
      CHECK_MPI(MPI_Comm_create_group(comm, group, round, &made));
      CHECK_MPI(MPI_Group_free(&group));
      break;
    case 3:
      CHECK_MPI(MPI_Comm_idup(comm, &made, &request));
      CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
      break;
  }
  CHECK_MPI(MPI_Comm_free(&made));
}

static void rounds(MPI_Comm comm, const char *name, int rank, int size) {
  for (int round = 0; round < ROUNDS; ++round) {
    nbx_round(comm, round, rank, size);
    create_between(comm, round);
  }
  note("%s: %d rounds, each message received in its own round", name, ROUNDS);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm dup;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  rounds(dup, "a duplicate of MPI_COMM_WORLD", rank, size);
  CHECK_MPI(MPI_Comm_free(&dup));
  rounds(MPI_COMM_WORLD, "MPI_COMM_WORLD", rank, size);
  shim_test_end();
  MPI_Finalize();
  if (rank == 0) printf("creation_order: all checks passed on %d ranks\n", size);
  return 0;
}
