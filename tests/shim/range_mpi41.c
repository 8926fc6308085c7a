/* MPI 4.1's calls on a range communicator, beside the same calls on a dup of MPI_COMM_WORLD
 * (the oracle): MPI_Request_get_status_all/any/some over arrays that mix fake and real requests
 * (nothing completes or is freed; the requests then complete as usual), and the buffers of
 * MPI_Comm_attach_buffer/detach/flush/iflush (each outcome and error class the same on both).
 * Built where mpi.h declares them (MPICH 4.2). */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

static int r, p, left, right;
static MPI_Comm range_comm, real_comm;

static int error_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

/* Two receives (one per communicator) that cannot complete until the barrier that follows. */
static void get_status_families(void) {
  int in[2] = {-1, -1}, out[2] = {r, 100 + r}, flag = -1, index = -2, outcount = -2, indices[3];
  MPI_Request reqs[3];
  MPI_Status sts[3];
  CHECK_MPI(MPI_Irecv(&in[0], 1, MPI_INT, left, 41, range_comm, &reqs[0]));
  reqs[1] = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Irecv(&in[1], 1, MPI_INT, left, 42, real_comm, &reqs[2]));
  /* Nothing has been sent: nothing is complete, but something is active. */
  CHECK_MPI(MPI_Request_get_status_all(3, reqs, &flag, sts));
  CHECK(flag == 0, "get_status_all before the sends: flag %d", flag);
  CHECK_MPI(MPI_Request_get_status_any(3, reqs, &index, &flag, &sts[0]));
  CHECK(flag == 0 && index == MPI_UNDEFINED, "get_status_any before: flag %d index %d", flag,
        index);
  CHECK_MPI(MPI_Request_get_status_some(3, reqs, &outcount, indices, sts));
  CHECK(outcount == 0, "get_status_some before: outcount %d", outcount);
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_Send(&out[0], 1, MPI_INT, right, 41, range_comm));
  CHECK_MPI(MPI_Send(&out[1], 1, MPI_INT, right, 42, real_comm));
  do CHECK_MPI(MPI_Request_get_status_all(3, reqs, &flag, sts));
  while (!flag);
  CHECK(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == 41, "get_status_all fake status %d/%d",
        sts[0].MPI_SOURCE, sts[0].MPI_TAG);
  CHECK(sts[2].MPI_SOURCE == left && sts[2].MPI_TAG == 42, "get_status_all real status %d/%d",
        sts[2].MPI_SOURCE, sts[2].MPI_TAG);
  CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[2] != MPI_REQUEST_NULL,
        "get_status_all freed a request");
  CHECK_MPI(MPI_Request_get_status_some(3, reqs, &outcount, indices, sts));
  CHECK(outcount == 2 && indices[0] != indices[1] && (indices[0] | indices[1]) == 2,
        "get_status_some after: outcount %d, indices %d %d", outcount, indices[0], indices[1]);
  CHECK_MPI(MPI_Request_get_status_any(3, reqs, &index, &flag, &sts[0]));
  CHECK(flag == 1 && (index == 0 || index == 2), "get_status_any after: flag %d index %d", flag,
        index);
  CHECK_MPI(MPI_Waitall(3, reqs, sts));
  CHECK(in[0] == left && in[1] == 100 + left, "data %d %d", in[0], in[1]);
  /* Only null requests: flag, MPI_UNDEFINED. */
  CHECK_MPI(MPI_Request_get_status_any(3, reqs, &index, &flag, MPI_STATUS_IGNORE));
  CHECK(flag == 1 && index == MPI_UNDEFINED, "get_status_any on nulls: %d %d", flag, index);
  CHECK_MPI(MPI_Request_get_status_some(3, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
  CHECK(outcount == MPI_UNDEFINED, "get_status_some on nulls: %d", outcount);
}

/* What the buffer calls give on comm, as one line to compare between the communicators. */
static void buffer_calls(MPI_Comm comm, char *line, size_t size) {
  static char space[4096];
  void *buffer = &line; /* anything but null */
  int n = -1;
  MPI_Request req;
  int c1 = error_class(MPI_Comm_detach_buffer(comm, &buffer, &n));
  int none = buffer == NULL && n == 0;
  int c2 = error_class(MPI_Comm_attach_buffer(comm, space, sizeof space));
  int c3 = error_class(MPI_Comm_attach_buffer(comm, space, sizeof space));
  int value = r;
  int c4 = error_class(MPI_Bsend(&value, 1, MPI_INT, right, 43, comm));
  int got = -1;
  int c5 = error_class(MPI_Recv(&got, 1, MPI_INT, left, 43, comm, MPI_STATUS_IGNORE));
  int c6 = error_class(MPI_Comm_flush_buffer(comm));
  int c7 = error_class(MPI_Comm_iflush_buffer(comm, &req));
  int c8 = error_class(MPI_Wait(&req, MPI_STATUS_IGNORE));
  int c9 = error_class(MPI_Comm_detach_buffer(comm, &buffer, &n));
  int back = buffer == space && n == (int)sizeof space;
  int c10 = error_class(MPI_Comm_attach_buffer(comm, space, -1));
  snprintf(line, size,
           "detach-none %d %d attach %d again %d bsend %d recv %d got-left %d "
           "flush %d iflush %d wait %d detach %d back %d negative %d",
           c1, none, c2, c3, c4, c5, got == left, c6, c7, c8, c9, back, c10);
}

static void buffers(void) {
  char native[256], range[256];
  buffer_calls(real_comm, native, sizeof native);
  buffer_calls(range_comm, range, sizeof range);
  CHECK(strcmp(native, range) == 0, "buffer calls differ:\n  native %s\n  range  %s", native,
        range);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  left = (r + p - 1) % p;
  right = (r + 1) % p;
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, p - 1, 1, &range_comm));
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &real_comm));
  CHECK_MPI(MPI_Comm_set_errhandler(real_comm, MPI_ERRORS_RETURN));
  get_status_families();
  buffers();
  CHECK_MPI(MPI_Comm_free(&range_comm));
  CHECK_MPI(MPI_Comm_free(&real_comm));
  shim_test_end();
  MPI_Finalize();
  if (r == 0) printf("range_mpi41: all checks passed on %d ranks\n", p);
  return 0;
}
