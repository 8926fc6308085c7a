/* MPI's progress rule inside MPI_Finalize, as the standard's own example has it: a process may
 * start a send, free its request and call MPI_Finalize; the send still completes, whenever its
 * receiver gets to it (MPI 4.0, section 11.2.2). Here every rank but 1 does that on fresh
 * duplicates of MPI_COMM_WORLD, and rank 1 receives only after the others have been inside
 * MPI_Finalize for a while:
 *  - rank 0: a 1 KiB MPI_Isend, and a second one on another duplicate that it frees right
 *    away, both to rank 1 with their requests freed;
 *  - ranks 2 and up: a 1 KiB MPI_Isend to rank 1 on the first duplicate, request freed;
 *  - rank 1: waits, then receives them all from MPI_ANY_SOURCE and checks every byte.
 * Eager sizes, because that is what every MPI delivers: MPICH 4.2 over UCX (Debian 13) did not
 * deliver a freed 8 MiB or synchronous send once its sender was in MPI_Finalize (natively the
 * receiver waited for ever). Under the acceleration modes the duplicates are library
 * communicators, and the library must not drop, cancel or corrupt the freed sends.
 *
 * Plain MPI, compared with a native run (run_shim_test.py compare) in every mode. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#include <unistd.h>

enum { BYTES = 1024, TAG_DATA = 5, TAG_FREED = 6 };

static unsigned char pattern(int sender, size_t i) { return (unsigned char)(sender * 31 + i * 7); }

int main(int argc, char **argv) {
  int rank, size;
  MPI_Comm kept, freed;
  MPI_Request request;
  CHECK_MPI(MPI_Init(&argc, &argv));
  shim_test_begin();
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 2, "needs 2 ranks or more");
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &kept));
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &freed));
  unsigned char *data = malloc(BYTES);
  CHECK(data != NULL, "out of memory");

  if (rank != 1) {
    for (size_t i = 0; i < BYTES; i++) data[i] = pattern(rank, i);
    CHECK_MPI(MPI_Isend(data, BYTES, MPI_BYTE, 1, TAG_DATA, kept, &request));
    CHECK_MPI(MPI_Request_free(&request));
    if (rank == 0) {
      int token = 4242;
      CHECK_MPI(MPI_Isend(&token, 1, MPI_INT, 1, TAG_FREED, freed, &request));
      CHECK_MPI(MPI_Request_free(&request));
    }
    CHECK_MPI(MPI_Comm_free(&freed));
    note("rank %d: sends started, requests freed, now in MPI_Finalize", rank);
    CHECK_MPI(MPI_Finalize()); /* the sends complete in here; the buffer stays until after */
    free(data);
    return 0;
  }

  usleep(300 * 1000); /* the others are inside MPI_Finalize by now */
  int token = 0;
  MPI_Status status;
  CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, TAG_FREED, freed, &status));
  CHECK(token == 4242 && status.MPI_SOURCE == 0, "send on the freed dup: %d from %d", token,
        status.MPI_SOURCE);
  note("rank 1: the send on the dup rank 0 freed arrived");
  int *seen = calloc((size_t)size, sizeof *seen);
  CHECK(seen != NULL, "out of memory");
  for (int n = 0; n < size - 1; n++) {
    memset(data, 0, BYTES);
    CHECK_MPI(MPI_Recv(data, BYTES, MPI_BYTE, MPI_ANY_SOURCE, TAG_DATA, kept, &status));
    int from = status.MPI_SOURCE, count = -1;
    CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
    CHECK(from != 1 && from < size && !seen[from], "1 KiB send from rank %d", from);
    CHECK(count == BYTES, "%d bytes from rank %d", count, from);
    for (size_t i = 0; i < BYTES; i++)
      CHECK(data[i] == pattern(from, i), "byte %zu from rank %d", i, from);
    seen[from] = 1;
  }
  for (int r = 0; r < size; r++)
    if (r != 1) note("rank 1: the 1 KiB send from rank %d arrived intact", r);
  printf("finalize_progress: all checks passed on %d ranks\n", size);
  CHECK_MPI(MPI_Comm_free(&freed));
  CHECK_MPI(MPI_Comm_free(&kept));
  free(seen);
  free(data);
  CHECK_MPI(MPI_Finalize());
  return 0;
}
