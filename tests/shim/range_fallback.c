/* Calls the library does not implement on ranges run on a real communicator made for the
 * range: one-sided windows (MPI_Win_create + put/get, MPI_Win_allocate), Cartesian and graph
 * topologies, MPI_Comm_split_type, intercommunicators (range and range, range and MPI's,
 * through a range or a real peer), MPI-IO. Also the answers of calls that have nothing to do on
 * a range (topology queries, remote size), and fake handles given where they cannot be used. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

#include <unistd.h>

static int error_class(int code) {
  int cls = MPI_ERR_OTHER;
  MPI_Error_class(code, &cls);
  return cls;
}

/* The window's group must be the range's, in order. */
static void check_same_group(MPI_Group a, MPI_Group b, const char *what) {
  int result = -1;
  CHECK_MPI(MPI_Group_compare(a, b, &result));
  CHECK(result == MPI_IDENT, "%s: groups compare %d", what, result);
}

static void windows(MPI_Comm c, int r, int p) {
  int right = (r + 1) % p, left = (r + p - 1) % p, got = -1;
  int *mem = NULL;
  MPI_Win win;
  int local[2] = {-1, -1};
  if (!shim_win_create(local, sizeof local, sizeof(int), c, &win, "a window on a range")) return;
  MPI_Group wg, cg;
  CHECK_MPI(MPI_Win_get_group(win, &wg));
  CHECK_MPI(MPI_Comm_group(c, &cg));
  check_same_group(wg, cg, "MPI_Win_create");
  CHECK_MPI(MPI_Group_free(&wg));
  CHECK_MPI(MPI_Win_fence(0, win));
  int mine = 100 + r;
  CHECK_MPI(MPI_Put(&mine, 1, MPI_INT, right, 0, 1, MPI_INT, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK(local[0] == 100 + left, "MPI_Put from the left neighbour gave %d", local[0]);
  CHECK_MPI(MPI_Get(&got, 1, MPI_INT, left, 0, 1, MPI_INT, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK(got == 100 + (left + p - 1) % p, "MPI_Get from the left neighbour gave %d", got);
  CHECK_MPI(MPI_Win_free(&win));
  /* (Only the window's group is checked: MPICH 4.0.2 loses puts into MPI_Win_allocate memory
   * with fences even on its own communicators.) */
  CHECK_MPI(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, c, &mem, &win));
  CHECK(mem != NULL, "MPI_Win_allocate gave no memory");
  CHECK_MPI(MPI_Win_get_group(win, &wg));
  check_same_group(wg, cg, "MPI_Win_allocate");
  CHECK_MPI(MPI_Group_free(&wg));
  CHECK_MPI(MPI_Win_free(&win));
  CHECK_MPI(MPI_Group_free(&cg));
}

static void topologies(MPI_Comm c, int r, int p) {
  MPI_Comm ring, graph;
  int dims[1] = {p}, periods[1] = {1}, coords[1] = {-1}, src = -1, dst = -1, status = -5;
  CHECK_MPI(MPI_Topo_test(c, &status));
  CHECK(status == MPI_UNDEFINED, "MPI_Topo_test on a range: %d", status);
  CHECK_MPI(MPI_Cart_create(c, 1, dims, periods, 0, &ring));
  CHECK_MPI(MPI_Topo_test(ring, &status));
  CHECK(status == MPI_CART, "MPI_Topo_test on the Cartesian communicator: %d", status);
  CHECK_MPI(MPI_Cart_coords(ring, r, 1, coords));
  CHECK(coords[0] == r, "Cartesian coordinate %d of rank %d", coords[0], r);
  CHECK_MPI(MPI_Cart_shift(ring, 0, 1, &src, &dst));
  CHECK(src == (r + p - 1) % p && dst == (r + 1) % p, "MPI_Cart_shift: %d %d", src, dst);
  int out = r, in = -1;
  CHECK_MPI(
      MPI_Sendrecv(&out, 1, MPI_INT, dst, 0, &in, 1, MPI_INT, src, 0, ring, MPI_STATUS_IGNORE));
  CHECK(in == src, "Cartesian ring exchange gave %d", in);
  int gathered[64];
  CHECK_MPI(MPI_Neighbor_allgather(&out, 1, MPI_INT, gathered, 1, MPI_INT, ring));
  CHECK(gathered[0] == src && gathered[1] == dst, "MPI_Neighbor_allgather: %d %d", gathered[0],
        gathered[1]);
  int newrank = -1;
  CHECK_MPI(MPI_Cart_map(c, 1, dims, periods, &newrank));
  CHECK(newrank == r, "MPI_Cart_map on a range: %d", newrank);
  /* A directed ring as a distributed graph. */
  int sources[1] = {src}, dests[1] = {dst}, weights[1] = {1};
  CHECK_MPI(MPI_Dist_graph_create_adjacent(c, 1, sources, weights, 1, dests, weights, MPI_INFO_NULL,
                                           0, &graph));
  int indeg = -1, outdeg = -1, weighted = -1;
  CHECK_MPI(MPI_Dist_graph_neighbors_count(graph, &indeg, &outdeg, &weighted));
  CHECK(indeg == 1 && outdeg == 1, "distributed graph degrees %d %d", indeg, outdeg);
  CHECK_MPI(MPI_Comm_free(&graph));
  CHECK_MPI(MPI_Comm_free(&ring));
  /* Topology queries on the range itself fail as on any communicator without one. */
  CHECK(error_class(MPI_Cart_shift(c, 0, 1, &src, &dst)) == MPI_ERR_TOPOLOGY,
        "MPI_Cart_shift on a range did not fail with MPI_ERR_TOPOLOGY");
  CHECK(error_class(MPI_Graphdims_get(c, &indeg, &outdeg)) == MPI_ERR_TOPOLOGY,
        "MPI_Graphdims_get on a range did not fail with MPI_ERR_TOPOLOGY");
}

static void split_type_and_intercomm(MPI_Comm c, int r, int p) {
  MPI_Comm node, half, inter, merged;
  int size = -1, place = -1, on_host = shim_host_members(c, &place);
  CHECK_MPI(MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &node));
  CHECK_MPI(MPI_Comm_size(node, &size));
  CHECK(size == on_host, "MPI_Comm_split_type(SHARED): size %d, %d of %d on this host", size,
        on_host, p);
  CHECK_MPI(MPI_Comm_free(&node));
  int remote = -1, cls = error_class(MPI_Comm_remote_size(c, &remote));
  CHECK(cls == MPI_ERR_COMM, "MPI_Comm_remote_size on a range: class %d", cls);
  if (p < 2) return;
  int h = p / 2, lower = r < h;
  /* Halves of the range, joined by an intercommunicator through the range (the peer). */
  CHECK_MPI(MPIX_Comm_create_range(c, lower ? 0 : h, lower ? h - 1 : p - 1, 1, &half));
  CHECK_MPI(MPI_Intercomm_create(half, 0, c, lower ? h : 0, 9, &inter));
  CHECK_MPI(MPI_Comm_remote_size(inter, &remote));
  CHECK(remote == (lower ? p - h : h), "intercommunicator remote size %d", remote);
  CHECK_MPI(MPI_Intercomm_merge(inter, !lower, &merged));
  int mr = -1;
  CHECK_MPI(MPI_Comm_rank(merged, &mr));
  CHECK(mr == r, "merged intercommunicator rank %d, expected %d", mr, r);
  CHECK_MPI(MPI_Comm_free(&merged));
  CHECK_MPI(MPI_Comm_free(&inter));
  CHECK_MPI(MPI_Comm_free(&half));
}

/* The other ways to an intercommunicator with a range on one side: a range of c on one side
 * and MPI_COMM_SELF (MPI's) on the other, through c; and halves of c through MPI_COMM_WORLD
 * (c's rank q is world rank q * stride). */
static void more_intercomms(MPI_Comm c, int r, int p, int stride) {
  if (p < 2) return;
  MPI_Comm local, inter, merged;
  int remote = -1, mr = -1, sum = 0, one = 1;
  const int last = r == p - 1;
  if (last)
    local = MPI_COMM_SELF;
  else
    CHECK_MPI(MPIX_Comm_create_range(c, 0, p - 2, 1, &local));
  CHECK_MPI(MPI_Intercomm_create(local, 0, c, last ? 0 : p - 1, 10, &inter));
  CHECK_MPI(MPI_Comm_remote_size(inter, &remote));
  CHECK(remote == (last ? p - 1 : 1), "range and MPI_COMM_SELF: remote size %d", remote);
  CHECK_MPI(MPI_Intercomm_merge(inter, last, &merged));
  CHECK_MPI(MPI_Comm_rank(merged, &mr));
  CHECK(mr == r, "range and MPI_COMM_SELF: merged rank %d, expected %d", mr, r);
  CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
  CHECK(sum == p, "range and MPI_COMM_SELF: the merge sums %d", sum);
  CHECK_MPI(MPI_Comm_free(&merged));
  CHECK_MPI(MPI_Comm_free(&inter));
  if (!last) CHECK_MPI(MPI_Comm_free(&local));

  const int h = p / 2, lower = r < h;
  CHECK_MPI(MPIX_Comm_create_range(c, lower ? 0 : h, lower ? h - 1 : p - 1, 1, &local));
  CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, lower ? h * stride : 0, 11, &inter));
  CHECK_MPI(MPI_Comm_remote_size(inter, &remote));
  CHECK(remote == (lower ? p - h : h), "halves through the world: remote size %d", remote);
  CHECK_MPI(MPI_Intercomm_merge(inter, !lower, &merged));
  CHECK_MPI(MPI_Comm_rank(merged, &mr));
  CHECK(mr == r, "halves through the world: merged rank %d, expected %d", mr, r);
  CHECK_MPI(MPI_Comm_free(&merged));
  CHECK_MPI(MPI_Comm_free(&inter));
  CHECK_MPI(MPI_Comm_free(&local));
}

static void file_io(MPI_Comm c, int r, int p) {
  char path[256];
  int stamp = (int)getpid();
  CHECK_MPI(MPI_Bcast(&stamp, 1, MPI_INT, 0, c));
  snprintf(path, sizeof path, "/tmp/rangecomm_shim_io_%d.bin", stamp);
  MPI_File fh;
  CHECK_MPI(MPI_File_open(c, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                          MPI_INFO_NULL, &fh));
  int out = 7 * r + 1, in = -1;
  CHECK_MPI(MPI_File_write_at_all(fh, (MPI_Offset)(r * sizeof(int)), &out, 1, MPI_INT,
                                  MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_File_sync(fh));
  CHECK_MPI(MPI_Barrier(c));
  CHECK_MPI(MPI_File_read_at_all(fh, (MPI_Offset)(((r + 1) % p) * sizeof(int)), &in, 1, MPI_INT,
                                 MPI_STATUS_IGNORE));
  CHECK(in == 7 * ((r + 1) % p) + 1, "MPI-IO read back %d", in);
  CHECK_MPI(MPI_File_close(&fh));
}

/* Fake handles where they cannot be used: clear errors, never a crash. */
static void misuse(MPI_Comm c) {
  MPI_Request req;
  int x = 0;
  CHECK_MPI(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, c, &req));
  int cls = error_class(MPI_Grequest_complete(req));
  CHECK(cls == MPI_ERR_REQUEST, "MPI_Grequest_complete on a range request: class %d", cls);
  CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
  MPI_Comm dead;
  CHECK_MPI(MPI_Comm_dup(c, &dead));
  MPI_Comm handle = dead;
  CHECK_MPI(MPI_Comm_free(&dead));
  cls = error_class(MPI_Barrier(handle));
  CHECK(cls == MPI_ERR_COMM, "MPI_Barrier on a freed range: class %d", cls);
  cls = error_class(MPI_Send(&x, 1, MPI_INT, 0, 0, handle));
  CHECK(cls == MPI_ERR_COMM, "MPI_Send on a freed range: class %d", cls);
  MPI_Win win;
  cls = error_class(MPI_Win_create(&x, sizeof x, 1, MPI_INFO_NULL, handle, &win));
  CHECK(cls == MPI_ERR_COMM, "MPI_Win_create on a freed range: class %d", cls);
  char packed[64];
  int pos = 0, back = -1;
  x = 41;
  CHECK_MPI(MPI_Pack(&x, 1, MPI_INT, packed, sizeof packed, &pos, c));
  pos = 0;
  CHECK_MPI(MPI_Unpack(packed, sizeof packed, &pos, &back, 1, MPI_INT, c));
  CHECK(back == 41, "MPI_Pack/MPI_Unpack with a range: %d", back);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  int wr, wp;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &wp);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  /* A strided range when there are enough ranks: world ranks 0, 2, 4, ... */
  int stride = wp >= 4 ? 2 : 1;
  MPI_Comm c;
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp - 1, stride, &c));
  if (c != MPI_COMM_NULL) {
    int r, p;
    CHECK_MPI(MPI_Comm_rank(c, &r));
    CHECK_MPI(MPI_Comm_size(c, &p));
    CHECK_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
#ifdef OPEN_MPI
    /* Open MPI 4.1 refuses windows on single-process communicators other than MPI_COMM_WORLD
     * (MPI_ERR_WIN for MPI_COMM_SELF too), so there is nothing to compare with. */
    if (p > 1) windows(c, r, p);
#else
    windows(c, r, p);
#endif
    topologies(c, r, p);
    split_type_and_intercomm(c, r, p);
    more_intercomms(c, r, p, stride);
    file_io(c, r, p);
    misuse(c);
    CHECK_MPI(MPI_Comm_free(&c));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  shim_test_end();
  MPI_Finalize();
  if (wr == 0) printf("range_fallback: all checks passed on %d ranks\n", wp);
  return 0;
}
