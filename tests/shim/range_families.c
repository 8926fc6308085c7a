/* Dead fake handles given to every family of MPI calls: a freed range communicator, a handle
 * that was never issued, a completed request and a received message. Each call must fail with
 * the proper error class (through MPI_COMM_WORLD's handler, set to MPI_ERRORS_RETURN here),
 * never crash or hang. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

static int error_class(int code) {
  int cls = MPI_SUCCESS;
  MPI_Error_class(code, &cls);
  return cls;
}

#define EXPECT_CLASS(call, cls)                                                             \
  do {                                                                                      \
    int got_ = error_class(call);                                                           \
    CHECK(got_ == (cls), "%s: error class %d, expected %d (%s)", #call, got_, (cls), what); \
  } while (0)

/* One call of each family with a communicator that is not a live range. */
static void comm_families(MPI_Comm dead, const char *what) {
  int x = 0, flag = 0, result = 0, y[4] = {0};
  void *attr = NULL;
  char name[MPI_MAX_OBJECT_NAME];
  MPI_Request req;
  MPI_Status st;
  MPI_Message msg;
  MPI_Comm out;
  MPI_Group g;
  MPI_Info info;
  MPI_Errhandler eh;
  MPI_Win win;
  MPI_File fh;
  /* point-to-point */
  EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, 0, 0, dead), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Isend(&x, 1, MPI_INT, 0, 0, dead, &req), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Recv(&x, 1, MPI_INT, 0, 0, dead, &st), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, dead, &req), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Sendrecv(&x, 1, MPI_INT, 0, 0, y, 1, MPI_INT, 0, 0, dead, &st), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Iprobe(0, 0, dead, &flag, &st), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Improbe(0, 0, dead, &flag, &msg, &st), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Send_init(&x, 1, MPI_INT, 0, 0, dead, &req), MPI_ERR_COMM);
  /* collectives, blocking and nonblocking */
  EXPECT_CLASS(MPI_Barrier(dead), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Ibcast(&x, 1, MPI_INT, 0, dead, &req), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Allreduce(&x, y, 1, MPI_INT, MPI_SUM, dead), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Alltoall(&x, 1, MPI_INT, y, 1, MPI_INT, dead), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, dead), MPI_ERR_COMM);
  /* communicator management and creation */
  EXPECT_CLASS(MPI_Comm_rank(dead, &x), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Comm_size(dead, &x), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Comm_group(dead, &g), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Comm_compare(dead, MPI_COMM_WORLD, &result), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Comm_test_inter(dead, &flag), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Comm_dup(dead, &out), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Comm_split(dead, 0, 0, &out), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Comm_get_name(dead, name, &x), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Comm_get_info(dead, &info), MPI_ERR_COMM);
  EXPECT_CLASS(MPIX_Comm_create_range(dead, 0, 0, 1, &out), MPI_ERR_COMM);
  EXPECT_CLASS(MPIX_Comm_is_range(dead, &flag), MPI_ERR_COMM);
  /* attributes and error handlers */
  EXPECT_CLASS(MPI_Comm_get_attr(dead, MPI_TAG_UB, &attr, &flag), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Comm_get_errhandler(dead, &eh), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Comm_set_errhandler(dead, MPI_ERRORS_RETURN), MPI_ERR_COMM);
  /* topologies, windows, files, intercommunicators, packing */
  int dims[1] = {1}, periods[1] = {0};
  EXPECT_CLASS(MPI_Cart_create(dead, 1, dims, periods, 0, &out), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Topo_test(dead, &x), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Win_create(&x, sizeof x, 1, MPI_INFO_NULL, dead, &win), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_File_open(dead, "/tmp/rangecomm_never", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
               MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Intercomm_create(dead, 0, MPI_COMM_WORLD, 0, 3, &out), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Comm_free(&dead), MPI_ERR_COMM);
}

static void request_and_message(MPI_Comm range) {
  const char *what = "completed request";
  int x = 5, y = 0, flag = 0, index = 0;
  MPI_Request req, dead;
  MPI_Status st;
  int r;
  CHECK_MPI(MPI_Comm_rank(range, &r));
  CHECK_MPI(MPI_Isend(&x, 1, MPI_INT, r, 3, range, &req));
  dead = req;
  CHECK_MPI(MPI_Wait(&req, &st));
  EXPECT_CLASS(MPI_Wait(&dead, &st), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Test(&dead, &flag, &st), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Request_get_status(dead, &flag, &st), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Cancel(&dead), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Start(&dead), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Waitall(1, &dead, &st), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Waitany(1, &dead, &index, &st), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Grequest_complete(dead), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Request_free(&dead), MPI_ERR_REQUEST);
  what = "received message";
  MPI_Message msg, used;
  CHECK_MPI(MPI_Mprobe(r, 3, range, &msg, &st));
  used = msg;
  CHECK_MPI(MPI_Mrecv(&y, 1, MPI_INT, &msg, &st));
  CHECK(y == 5, "the self-message carried %d", y);
  int cls = error_class(MPI_Mrecv(&y, 1, MPI_INT, &used, &st));
  CHECK(cls != MPI_SUCCESS, "MPI_Mrecv of a received message succeeded (%s)", what);
  cls = error_class(MPI_Imrecv(&y, 1, MPI_INT, &used, &req));
  CHECK(cls != MPI_SUCCESS, "MPI_Imrecv of a received message succeeded (%s)", what);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  int wr, wp;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &wp);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm range, dead;
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp - 1, 1, &range));
  CHECK_MPI(MPI_Comm_dup(range, &dead));
  MPI_Comm freed = dead;
  CHECK_MPI(MPI_Comm_free(&dead));
  comm_families(freed, "freed range communicator");
#ifdef OPEN_MPI
  /* An address inside the shim's region that no handle has: garbage, not a communicator. */
  comm_families((MPI_Comm)((char *)freed + 3), "misaligned fake address");
#else
  comm_families((MPI_Comm)((int)freed + 100000), "never-issued fake handle");
#endif
  request_and_message(range);
  CHECK_MPI(MPI_Comm_free(&range));
  MPI_Barrier(MPI_COMM_WORLD);
  shim_test_end();
  MPI_Finalize();
  if (wr == 0) printf("range_families: all checks passed on %d ranks\n", wp);
  return 0;
}
