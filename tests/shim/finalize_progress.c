/* MPI's progress rule inside MPI_Finalize, as the standard's own example has it: a process may
 * start a send, free its request and call MPI_Finalize; the send still completes, whenever its
 * receiver gets to it (MPI 4.0, section 11.2.2). Here every rank but 1 does that on fresh
 * duplicates of MPI_COMM_WORLD, and rank 1 receives only after the others have been inside
 * MPI_Finalize for a while:
 *  - rank 0: an 8 MiB MPI_Isend (above every MPI's eager limit, so it needs rank 1's receive)
 *    and a synchronous MPI_Issend on a second duplicate that it frees right away, both to
 *    rank 1 with their requests freed;
 *  - ranks 2 and up: an 8 MiB MPI_Isend to rank 1 on the first duplicate, request freed;
 *  - rank 1: waits, then receives them all from MPI_ANY_SOURCE and checks every byte.
 * Under the acceleration modes the duplicates are library communicators, so the senders'
 * library must keep moving inside MPI_Finalize until their sends are taken.
 *
 * Plain MPI, compared with a native run (run_shim_test.py compare) in every mode. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#include <unistd.h>

enum { BIG = 8 << 20, TAG_BIG = 5, TAG_SYNC = 6 };

static unsigned char pattern(int sender, size_t i) { return (unsigned char)(sender * 31 + i * 7); }

int main(int argc, char **argv) {
  int rank, size;
  MPI_Comm big, sync;
  MPI_Request request;
  CHECK_MPI(MPI_Init(&argc, &argv));
  shim_test_begin();
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 2, "needs 2 ranks or more");
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &big));
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &sync));
  unsigned char *data = malloc(BIG);
  CHECK(data != NULL, "out of memory");

  if (rank != 1) {
    for (size_t i = 0; i < BIG; i++) data[i] = pattern(rank, i);
    CHECK_MPI(MPI_Isend(data, BIG, MPI_BYTE, 1, TAG_BIG, big, &request));
    CHECK_MPI(MPI_Request_free(&request));
    if (rank == 0) {
      int token = 4242;
      CHECK_MPI(MPI_Issend(&token, 1, MPI_INT, 1, TAG_SYNC, sync, &request));
      CHECK_MPI(MPI_Request_free(&request));
    }
    CHECK_MPI(MPI_Comm_free(&sync));
    note("rank %d: sends started, requests freed, now in MPI_Finalize", rank);
    CHECK_MPI(MPI_Finalize()); /* the sends complete in here; the buffer stays until after */
    free(data);
    return 0;
  }

  usleep(300 * 1000); /* the others are inside MPI_Finalize by now */
  int token = 0;
  MPI_Status status;
  CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, TAG_SYNC, sync, &status));
  CHECK(token == 4242 && status.MPI_SOURCE == 0, "synchronous send: %d from %d", token,
        status.MPI_SOURCE);
  note("rank 1: the synchronous send from rank 0 arrived");
  int *seen = calloc((size_t)size, sizeof *seen);
  CHECK(seen != NULL, "out of memory");
  for (int n = 0; n < size - 1; n++) {
    memset(data, 0, BIG);
    CHECK_MPI(MPI_Recv(data, BIG, MPI_BYTE, MPI_ANY_SOURCE, TAG_BIG, big, &status));
    int from = status.MPI_SOURCE, count = -1;
    CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
    CHECK(from != 1 && from < size && !seen[from], "8 MiB send from rank %d", from);
    CHECK(count == BIG, "%d bytes from rank %d", count, from);
    for (size_t i = 0; i < BIG; i++)
      CHECK(data[i] == pattern(from, i), "byte %zu from rank %d", i, from);
    seen[from] = 1;
  }
  for (int r = 0; r < size; r++)
    if (r != 1) note("rank 1: the 8 MiB send from rank %d arrived intact", r);
  printf("finalize_progress: all checks passed on %d ranks\n", size);
  CHECK_MPI(MPI_Comm_free(&sync));
  CHECK_MPI(MPI_Comm_free(&big));
  free(seen);
  free(data);
  CHECK_MPI(MPI_Finalize());
  return 0;
}
