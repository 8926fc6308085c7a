/* Every MPI-3 collective, blocking and nonblocking, on a range communicator through the
 * standard API, against the same collective on a real communicator with the same members in
 * the same order (MPI_Comm_split of MPI_COMM_WORLD): the results must be identical. Runs on
 * the whole world, on a strided range, and on a range of a range. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

enum { B = 3, MAXP = 64, SLOTS = 20 };

/* Results of one run: one row per collective, wide enough for p * B values. */
static int results[2][SLOTS][MAXP * B];

static int value(int rank, int i) { return 1000 * (rank + 1) + 7 * i + 1; }

/* Completes a nonblocking collective, or does nothing for a blocking one. */
static void finish(int nonblocking, MPI_Request *req) {
  if (nonblocking) CHECK_MPI(MPI_Wait(req, MPI_STATUS_IGNORE));
}

static void rooted(MPI_Comm c, int nb, int (*out)[MAXP * B]) {
  int r, p, send[MAXP * B], counts[MAXP], displs[MAXP];
  MPI_Request req;
  CHECK_MPI(MPI_Comm_rank(c, &r));
  CHECK_MPI(MPI_Comm_size(c, &p));
  int root = p - 1;
  for (int i = 0; i < p * B; ++i) send[i] = value(r, i);
  for (int k = 0; k < p; ++k) counts[k] = 1 + k % B, displs[k] = k * B;
  if (r == 1 % p)
    for (int i = 0; i < B; ++i) out[0][i] = value(99, i);
  if (nb)
    CHECK_MPI(MPI_Ibcast(out[0], B, MPI_INT, 1 % p, c, &req));
  else
    CHECK_MPI(MPI_Bcast(out[0], B, MPI_INT, 1 % p, c));
  finish(nb, &req);
  if (nb)
    CHECK_MPI(MPI_Ireduce(send, out[1], B, MPI_INT, MPI_SUM, root, c, &req));
  else
    CHECK_MPI(MPI_Reduce(send, out[1], B, MPI_INT, MPI_SUM, root, c));
  finish(nb, &req);
  if (nb)
    CHECK_MPI(MPI_Igather(send, B, MPI_INT, out[2], B, MPI_INT, root, c, &req));
  else
    CHECK_MPI(MPI_Gather(send, B, MPI_INT, out[2], B, MPI_INT, root, c));
  finish(nb, &req);
  if (nb)
    CHECK_MPI(MPI_Igatherv(send, counts[r], MPI_INT, out[3], counts, displs, MPI_INT, 0, c, &req));
  else
    CHECK_MPI(MPI_Gatherv(send, counts[r], MPI_INT, out[3], counts, displs, MPI_INT, 0, c));
  finish(nb, &req);
  if (nb)
    CHECK_MPI(MPI_Iscatter(send, B, MPI_INT, out[4], B, MPI_INT, root, c, &req));
  else
    CHECK_MPI(MPI_Scatter(send, B, MPI_INT, out[4], B, MPI_INT, root, c));
  finish(nb, &req);
  if (nb)
    CHECK_MPI(MPI_Iscatterv(send, counts, displs, MPI_INT, out[5], counts[r], MPI_INT, 0, c, &req));
  else
    CHECK_MPI(MPI_Scatterv(send, counts, displs, MPI_INT, out[5], counts[r], MPI_INT, 0, c));
  finish(nb, &req);
}

static void everyone(MPI_Comm c, int nb, int (*out)[MAXP * B]) {
  int r, p, send[MAXP * B], counts[MAXP], displs[MAXP], rcounts[MAXP], rdispls[MAXP];
  MPI_Datatype types[MAXP];
  MPI_Request req;
  CHECK_MPI(MPI_Comm_rank(c, &r));
  CHECK_MPI(MPI_Comm_size(c, &p));
  for (int i = 0; i < p * B; ++i) send[i] = value(r, i);
  for (int k = 0; k < p; ++k) {
    counts[k] = 1 + k % B, displs[k] = k * B, types[k] = MPI_INT;
    rcounts[k] = 1 + r % B, rdispls[k] = k * B; /* alltoallv: what k sends me */
  }
  if (nb)
    CHECK_MPI(MPI_Iallreduce(send, out[6], B, MPI_INT, MPI_MAX, c, &req));
  else
    CHECK_MPI(MPI_Allreduce(send, out[6], B, MPI_INT, MPI_MAX, c));
  finish(nb, &req);
  for (int i = 0; i < B; ++i) out[7][i] = value(r, i);
  if (nb)
    CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, out[7], B, MPI_INT, MPI_SUM, c, &req));
  else
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, out[7], B, MPI_INT, MPI_SUM, c));
  finish(nb, &req);
  if (nb)
    CHECK_MPI(MPI_Iallgather(send, B, MPI_INT, out[8], B, MPI_INT, c, &req));
  else
    CHECK_MPI(MPI_Allgather(send, B, MPI_INT, out[8], B, MPI_INT, c));
  finish(nb, &req);
  if (nb)
    CHECK_MPI(MPI_Iallgatherv(send, counts[r], MPI_INT, out[9], counts, displs, MPI_INT, c, &req));
  else
    CHECK_MPI(MPI_Allgatherv(send, counts[r], MPI_INT, out[9], counts, displs, MPI_INT, c));
  finish(nb, &req);
  if (nb)
    CHECK_MPI(MPI_Ialltoall(send, B, MPI_INT, out[10], B, MPI_INT, c, &req));
  else
    CHECK_MPI(MPI_Alltoall(send, B, MPI_INT, out[10], B, MPI_INT, c));
  finish(nb, &req);
  if (nb)
    CHECK_MPI(
        MPI_Ialltoallv(send, counts, displs, MPI_INT, out[11], rcounts, rdispls, MPI_INT, c, &req));
  else
    CHECK_MPI(MPI_Alltoallv(send, counts, displs, MPI_INT, out[11], rcounts, rdispls, MPI_INT, c));
  finish(nb, &req);
  int bdispls[MAXP], brdispls[MAXP]; /* alltoallw displacements are in bytes */
  for (int k = 0; k < p; ++k) bdispls[k] = displs[k] * 4, brdispls[k] = rdispls[k] * 4;
  if (nb)
    CHECK_MPI(
        MPI_Ialltoallw(send, counts, bdispls, types, out[12], rcounts, brdispls, types, c, &req));
  else
    CHECK_MPI(MPI_Alltoallw(send, counts, bdispls, types, out[12], rcounts, brdispls, types, c));
  finish(nb, &req);
  if (nb)
    CHECK_MPI(MPI_Iscan(send, out[13], B, MPI_INT, MPI_SUM, c, &req));
  else
    CHECK_MPI(MPI_Scan(send, out[13], B, MPI_INT, MPI_SUM, c));
  finish(nb, &req);
  if (nb)
    CHECK_MPI(MPI_Iexscan(send, out[14], B, MPI_INT, MPI_SUM, c, &req));
  else
    CHECK_MPI(MPI_Exscan(send, out[14], B, MPI_INT, MPI_SUM, c));
  finish(nb, &req);
  if (r == 0)
    for (int i = 0; i < B; ++i) out[14][i] = 0; /* undefined on rank 0 */
  if (nb)
    CHECK_MPI(MPI_Ireduce_scatter(send, out[15], counts, MPI_INT, MPI_SUM, c, &req));
  else
    CHECK_MPI(MPI_Reduce_scatter(send, out[15], counts, MPI_INT, MPI_SUM, c));
  finish(nb, &req);
  if (nb)
    CHECK_MPI(MPI_Ireduce_scatter_block(send, out[16], B, MPI_INT, MPI_MIN, c, &req));
  else
    CHECK_MPI(MPI_Reduce_scatter_block(send, out[16], B, MPI_INT, MPI_MIN, c));
  finish(nb, &req);
  if (nb) {
    CHECK_MPI(MPI_Ibarrier(c, &req));
    finish(nb, &req);
  } else {
    CHECK_MPI(MPI_Barrier(c));
  }
}

/* Runs everything on the range and on the real twin; the result rows must match exactly. */
static void compare(MPI_Comm range, MPI_Comm twin, const char *what) {
  int flag = 0;
  CHECK_MPI(MPIX_Comm_is_range(range, &flag));
  CHECK(flag == 1, "%s: not a range communicator", what);
  for (int nb = 0; nb < 2; ++nb) {
    memset(results, 0, sizeof results);
    rooted(range, nb, results[0]);
    everyone(range, nb, results[0]);
    rooted(twin, nb, results[1]);
    everyone(twin, nb, results[1]);
    for (int s = 0; s < SLOTS; ++s)
      for (int i = 0; i < MAXP * B; ++i)
        CHECK(results[0][s][i] == results[1][s][i],
              "%s, %s: collective %d element %d is %d on the range, %d natively", what,
              nb ? "nonblocking" : "blocking", s, i, results[0][s][i], results[1][s][i]);
  }
}

static void int_sum(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int *)inout)[i] += ((int *)in)[i];
}

/* A user operation freed while a nonblocking collective on the range still uses it: the
 * collective must complete with it (MPI allows the free). */
static void freed_user_op(MPI_Comm c) {
  int r, p, in[B], out[B];
  MPI_Op op;
  MPI_Request req;
  CHECK_MPI(MPI_Comm_rank(c, &r));
  CHECK_MPI(MPI_Comm_size(c, &p));
  for (int i = 0; i < B; ++i) in[i] = value(r, i);
  CHECK_MPI(MPI_Op_create(int_sum, 1, &op));
  CHECK_MPI(MPI_Iallreduce(in, out, B, MPI_INT, op, c, &req));
  CHECK_MPI(MPI_Op_free(&op));
  CHECK(op == MPI_OP_NULL, "MPI_Op_free did not reset the handle");
  CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
  for (int i = 0; i < B; ++i) {
    int expect = 0;
    for (int k = 0; k < p; ++k) expect += value(k, i);
    CHECK(out[i] == expect, "user op freed early: element %d is %d, expected %d", i, out[i],
          expect);
  }
}

/* world ranks first..last:stride as a range and as a real communicator. */
static void run(MPI_Comm parent_range, int first, int last, int stride, int wr, const char *what) {
  MPI_Comm range, twin;
  int member = wr >= first && wr <= last && (wr - first) % stride == 0;
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, wr, &twin));
  int pr = 0;
  CHECK_MPI(MPI_Comm_rank(parent_range, &pr));
  /* parent_range spans world ranks 0.. in order, so its ranks are world ranks */
  CHECK_MPI(MPIX_Comm_create_range(parent_range, first, last, stride, &range));
  CHECK((range != MPI_COMM_NULL) == member, "%s: membership of world rank %d", what, wr);
  if (member) {
    compare(range, twin, what);
    freed_user_op(range);
    CHECK_MPI(MPI_Comm_free(&range));
    CHECK_MPI(MPI_Comm_free(&twin));
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  int wr, wp;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &wp);
  CHECK(wp <= MAXP, "at most %d ranks", MAXP);
  MPI_Comm all;
  run(MPI_COMM_WORLD, 0, wp - 1, 1, wr, "whole world");
  run(MPI_COMM_WORLD, wp > 2 ? 1 : 0, wp - 1, 2, wr, "strided range of the world");
  /* (Made after the runs above: while it lives, 0..p-1 of the world again would be the same
   * range at the same depth, an MPI_ERR_COMM clash; see docs/tag-layout.md.) */
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp - 1, 1, &all));
  run(all, 0, wp - 1, wp > 3 ? 3 : 1, wr, "range of a range");
  CHECK_MPI(MPI_Comm_free(&all));
  MPI_Barrier(MPI_COMM_WORLD);
  shim_test_end();
  MPI_Finalize();
  if (wr == 0) printf("range_coll: all checks passed on %d ranks\n", wp);
  return 0;
}
