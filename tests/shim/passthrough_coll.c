/* Pass-through test: collectives (blocking and nonblocking), a window and a Cartesian
 * topology on real communicators (see passthrough.c). */
#include "passthrough.h"

static int *ints(int n) { return calloc(n > 0 ? n : 1, sizeof(int)); }

static void test_rooted(MPI_Comm comm, int r, int p) {
  int buf[3] = {0, 0, 0}, sum = -1, max = -1, i, v;
  int *all = ints(3 * p + p * p), *counts = ints(p), *displs = ints(p), *mine = ints(3 + p);
  if (r == p - 1) buf[0] = p - 1, buf[1] = p, buf[2] = p + 1;
  CHECK_MPI(MPI_Bcast(buf, 3, MPI_INT, p - 1, comm));
  CHECK(buf[0] == p - 1 && buf[1] == p && buf[2] == p + 1, "bcast %d %d %d", buf[0], buf[1],
        buf[2]);
  CHECK_MPI(MPI_Reduce(&r, &sum, 1, MPI_INT, MPI_SUM, 0, comm));
  CHECK(r != 0 || sum == p * (p - 1) / 2, "reduce %d", sum);
  CHECK_MPI(MPI_Allreduce(&r, &max, 1, MPI_INT, MPI_MAX, comm));
  CHECK(max == p - 1, "allreduce max %d", max);
  v = r + 1;
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_PROD, comm));
  for (i = 2, sum = 1; i <= p; ++i) sum *= i;
  CHECK(v == sum, "allreduce in place %d", v);

  v = 2 * r;
  CHECK_MPI(MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, 0, comm));
  for (i = 0; r == 0 && i < p; ++i) CHECK(all[i] == 2 * i, "gather[%d] %d", i, all[i]);
  for (i = 0; i < p; ++i) counts[i] = i % 3 + 1, displs[i] = 3 * i;
  for (i = 0; i < counts[r]; ++i) mine[i] = r;
  CHECK_MPI(MPI_Gatherv(mine, counts[r], MPI_INT, all, counts, displs, MPI_INT, 0, comm));
  for (i = 0; r == 0 && i < p; ++i)
    CHECK(all[displs[i]] == i && all[displs[i] + counts[i] - 1] == i, "gatherv from %d", i);
  for (i = 0; i < p; ++i) all[i] = 5 * i;
  CHECK_MPI(MPI_Scatter(all, 1, MPI_INT, &v, 1, MPI_INT, 0, comm));
  CHECK(v == 5 * r, "scatter %d", v);
  for (i = 0; i < 3 * p; ++i) all[i] = i;
  CHECK_MPI(MPI_Scatterv(all, counts, displs, MPI_INT, mine, counts[r], MPI_INT, 0, comm));
  CHECK(mine[0] == 3 * r && mine[counts[r] - 1] == 3 * r + counts[r] - 1, "scatterv %d", mine[0]);
  note("rooted collectives ok: bcast %d reduce-max %d", buf[1], max);
  free(all), free(counts), free(displs), free(mine);
}

static void test_all_to_all_family(MPI_Comm comm, int r, int p) {
  int *in = ints(3 * p), *out = ints(3 * p), *sc = ints(p), *sd = ints(p), *rc = ints(p),
      *rd = ints(p), i, v;
  MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * p);
  CHECK_MPI(MPI_Allgather(&r, 1, MPI_INT, in, 1, MPI_INT, comm));
  for (i = 0; i < p; ++i) CHECK(in[i] == i, "allgather[%d] %d", i, in[i]);
  for (i = 0; i < p; ++i) rc[i] = i % 3 + 1, rd[i] = 3 * i, out[i] = r;
  CHECK_MPI(MPI_Allgatherv(out, rc[r], MPI_INT, in, rc, rd, MPI_INT, comm));
  for (i = 0; i < p; ++i) CHECK(in[rd[i] + rc[i] - 1] == i, "allgatherv from %d", i);

  for (i = 0; i < p; ++i) out[i] = 100 * r + i;
  CHECK_MPI(MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, comm));
  for (i = 0; i < p; ++i) CHECK(in[i] == 100 * i + r, "alltoall from %d: %d", i, in[i]);
  /* to rank d: d % 2 + 1 copies of 100 r + d; from rank s: r % 2 + 1 values */
  for (i = 0; i < p; ++i) {
    sc[i] = i % 2 + 1, sd[i] = 2 * i, out[2 * i] = out[2 * i + 1] = 100 * r + i;
    rc[i] = r % 2 + 1, rd[i] = 2 * i;
  }
  CHECK_MPI(MPI_Alltoallv(out, sc, sd, MPI_INT, in, rc, rd, MPI_INT, comm));
  for (i = 0; i < p; ++i) CHECK(in[2 * i + rc[i] - 1] == 100 * i + r, "alltoallv from %d", i);
  for (i = 0; i < p; ++i) {
    sc[i] = rc[i] = 1, sd[i] = rd[i] = (int)sizeof(int) * i, types[i] = MPI_INT;
    out[i] = 100 * r + i;
  }
  CHECK_MPI(MPI_Alltoallw(out, sc, sd, types, in, rc, rd, types, comm));
  for (i = 0; i < p; ++i) CHECK(in[i] == 100 * i + r, "alltoallw from %d", i);

  for (i = 0; i < p; ++i) out[i] = r + i;
  CHECK_MPI(MPI_Reduce_scatter_block(out, &v, 1, MPI_INT, MPI_SUM, comm));
  CHECK(v == p * (p - 1) / 2 + p * r, "reduce_scatter_block %d", v);
  for (i = 0; i < p; ++i) rc[i] = i % 2 + 1;
  for (i = 0, v = 0; i < p; ++i) v += rc[i];
  for (i = 0; i < v; ++i) out[i] = 1;
  CHECK_MPI(MPI_Reduce_scatter(out, in, rc, MPI_INT, MPI_SUM, comm));
  CHECK(in[0] == p && in[rc[r] - 1] == p, "reduce_scatter %d", in[0]);
  CHECK_MPI(MPI_Scan(&r, &v, 1, MPI_INT, MPI_SUM, comm));
  CHECK(v == r * (r + 1) / 2, "scan %d", v);
  CHECK_MPI(MPI_Exscan(&r, &v, 1, MPI_INT, MPI_SUM, comm));
  CHECK(r == 0 || v == r * (r - 1) / 2, "exscan %d", v);
  CHECK_MPI(MPI_Barrier(comm));
  note("all-to-all family ok: scan %d", r * (r + 1) / 2);
  free(in), free(out), free(sc), free(sd), free(rc), free(rd), free(types);
}

static void test_nonblocking_collectives(MPI_Comm comm, int r, int p) {
  MPI_Request reqs[7];
  MPI_Status sts[7];
  int b = r == 0 ? 42 : -1, sum = -1, scan = -1, self = -1, one = r, i;
  int *a2a_out = ints(p), *a2a_in = ints(p), *gathered = ints(p);
  for (i = 0; i < p; ++i) a2a_out[i] = 10 * r + i;
  CHECK_MPI(MPI_Irecv(&self, 1, MPI_INT, r, 70, comm, &reqs[0]));
  CHECK_MPI(MPI_Ibcast(&b, 1, MPI_INT, 0, comm, &reqs[1]));
  CHECK_MPI(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm, &reqs[2]));
  CHECK_MPI(MPI_Ialltoall(a2a_out, 1, MPI_INT, a2a_in, 1, MPI_INT, comm, &reqs[3]));
  CHECK_MPI(MPI_Iscan(&one, &scan, 1, MPI_INT, MPI_SUM, comm, &reqs[4]));
  CHECK_MPI(MPI_Igather(&one, 1, MPI_INT, gathered, 1, MPI_INT, p - 1, comm, &reqs[5]));
  CHECK_MPI(MPI_Ibarrier(comm, &reqs[6]));
  CHECK_MPI(MPI_Send(&one, 1, MPI_INT, r, 70, comm));
  CHECK_MPI(MPI_Waitall(7, reqs, sts));
  CHECK(sts[0].MPI_SOURCE == r && sts[0].MPI_TAG == 70 && self == r, "p2p among collectives");
  CHECK(b == 42 && sum == p * (p - 1) / 2 && scan == r * (r + 1) / 2,
        "ibcast %d iallreduce %d "
        "iscan %d",
        b, sum, scan);
  for (i = 0; i < p; ++i) CHECK(a2a_in[i] == 10 * i + r, "ialltoall from %d", i);
  for (i = 0; r == p - 1 && i < p; ++i) CHECK(gathered[i] == i, "igather[%d]", i);
  note("nonblocking collectives ok: %d %d %d", b, sum, scan);
  free(a2a_out), free(a2a_in), free(gathered);
}

void test_collectives(MPI_Comm comm, int r, int p) {
  MPI_Comm half;
  int hr, hp;
  test_rooted(comm, r, p);
  test_all_to_all_family(comm, r, p);
  test_nonblocking_collectives(comm, r, p);
  /* the same on a communicator that is not the whole world */
  CHECK_MPI(MPI_Comm_split(comm, r < (p + 1) / 2, r, &half));
  CHECK_MPI(MPI_Comm_rank(half, &hr));
  CHECK_MPI(MPI_Comm_size(half, &hp));
  test_rooted(half, hr, hp);
  test_all_to_all_family(half, hr, hp);
  test_nonblocking_collectives(half, hr, hp);
  CHECK_MPI(MPI_Comm_free(&half));
}

void test_window_and_topology(MPI_Comm comm, int r, int p) {
  int *local = ints(p), got = -1, i, next = (r + 1) % p, prev = (r + p - 1) % p;
  int dims[1] = {0}, periods[1] = {1}, coords[1] = {-1}, src, dst, status, cart_rank;
  int neighbours[2] = {-1, -1};
  MPI_Win win;
  MPI_Comm cart;

  /* Open MPI 4.1 without UCX has no one-sided component for a single process or across hosts:
   * Win_create fails there, and must fail the same way through the shim (the transcripts say
   * so) */
  if (shim_win_create(local, sizeof(int) * p, sizeof(int), comm, &win, "win_create")) {
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(&r, 1, MPI_INT, next, r, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(local[prev] == prev, "put from %d landed as %d", prev, local[prev]);
    CHECK_MPI(MPI_Get(&got, 1, MPI_INT, next, r, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(got == r, "get back my own put: %d", got);
    CHECK_MPI(MPI_Win_free(&win));
  }

  CHECK_MPI(MPI_Dims_create(p, 1, dims));
  CHECK_MPI(MPI_Cart_create(comm, 1, dims, periods, 0, &cart));
  CHECK_MPI(MPI_Topo_test(cart, &status));
  CHECK(status == MPI_CART, "topo_test %d", status);
  CHECK_MPI(MPI_Cart_coords(cart, r, 1, coords));
  CHECK_MPI(MPI_Cart_rank(cart, coords, &cart_rank));
  CHECK_MPI(MPI_Cart_shift(cart, 0, 1, &src, &dst));
  CHECK(coords[0] == r && cart_rank == r && src == prev && dst == next, "cart %d %d %d %d",
        coords[0], cart_rank, src, dst);
  CHECK_MPI(MPI_Neighbor_allgather(&r, 1, MPI_INT, neighbours, 1, MPI_INT, cart));
  CHECK(neighbours[0] == prev && neighbours[1] == next, "neighbours %d %d", neighbours[0],
        neighbours[1]);
  CHECK_MPI(MPI_Comm_free(&cart));
  for (i = 0; i < p; ++i) local[i] = 0;
  note("window and topology ok: %d %d", neighbours[0], neighbours[1]);
  free(local);
}
