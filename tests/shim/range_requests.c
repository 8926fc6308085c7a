/* The wait/test families over arrays that mix fake requests (operations on a range), real
 * requests (operations on a dup of MPI_COMM_WORLD), MPI_REQUEST_NULL and requests complete at
 * birth: statuses at the right index, Testall all-or-nothing, Waitany/Waitsome indices,
 * MPI_UNDEFINED, MPI_ERR_IN_STATUS; MPI_Request_get_status, MPI_Cancel, MPI_Request_free, and a
 * dead request handle. The range is all of MPI_COMM_WORLD, so ranks agree on both. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

static int r, p, left, right;
static MPI_Comm range_comm, real_comm;

static void check_recv(const MPI_Status *st, int source, int tag, int count, const char *what) {
  int n = -1;
  CHECK(st->MPI_SOURCE == source, "%s: MPI_SOURCE %d, expected %d", what, st->MPI_SOURCE, source);
  CHECK(st->MPI_TAG == tag, "%s: MPI_TAG %d, expected %d", what, st->MPI_TAG, tag);
  CHECK_MPI(MPI_Get_count(st, MPI_INT, &n));
  CHECK(n == count, "%s: count %d, expected %d", what, n, count);
}

static void check_empty(const MPI_Status *st, const char *what) {
  int n = -1;
  CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG,
        "%s: not the empty status (%d/%d)", what, st->MPI_SOURCE, st->MPI_TAG);
  CHECK_MPI(MPI_Get_count(st, MPI_INT, &n));
  CHECK(n == 0, "%s: empty status with count %d", what, n);
}

static void waitall_mixed(void) {
  int a = r, b = 10 + r, in_a = -1, in_b = -1, x = 0;
  MPI_Request reqs[7];
  MPI_Status sts[7];
  CHECK_MPI(MPI_Irecv(&in_a, 1, MPI_INT, left, 2, range_comm, &reqs[0]));
  reqs[1] = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Irecv(&in_b, 1, MPI_INT, left, 1, real_comm, &reqs[2]));
  CHECK_MPI(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, range_comm, &reqs[3]));
  CHECK_MPI(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, real_comm, &reqs[4]));
  CHECK_MPI(MPI_Isend(&a, 1, MPI_INT, right, 2, range_comm, &reqs[5]));
  CHECK_MPI(MPI_Isend(&b, 1, MPI_INT, right, 1, real_comm, &reqs[6]));
  CHECK(reqs[0] != reqs[2] && reqs[0] != MPI_REQUEST_NULL, "requests were not made");
  CHECK_MPI(MPI_Waitall(7, reqs, sts));
  for (int i = 0; i < 7; ++i) CHECK(reqs[i] == MPI_REQUEST_NULL, "Waitall: request %d not null", i);
  check_recv(&sts[0], left, 2, 1, "Waitall fake receive");
  check_empty(&sts[1], "Waitall null request");
  check_recv(&sts[2], left, 1, 1, "Waitall real receive");
  check_recv(&sts[3], MPI_PROC_NULL, MPI_ANY_TAG, 0, "Waitall fake MPI_PROC_NULL");
  /* sts[4] is MPI's own: MPICH 4.0.2 reports source 0, tag 0 for an MPI_PROC_NULL receive. */
  CHECK(in_a == left && in_b == 10 + left, "Waitall data %d %d", in_a, in_b);
}

/* Testall must not touch any request (not even a complete real one) until all are complete. */
static void testall_all_or_nothing(void) {
  int a = r, b = r, in_a = -1, in_b = -1, flag = 1;
  MPI_Request send_b, reqs[2];
  MPI_Status sts[2];
  CHECK_MPI(MPI_Isend(&b, 1, MPI_INT, right, 6, real_comm, &send_b));
  CHECK_MPI(MPI_Irecv(&in_b, 1, MPI_INT, left, 6, real_comm, &reqs[1]));
  do CHECK_MPI(MPI_Request_get_status(reqs[1], &flag, MPI_STATUS_IGNORE));
  while (!flag);
  CHECK_MPI(MPI_Irecv(&in_a, 1, MPI_INT, left, 5, range_comm, &reqs[0]));
  MPI_Request fake_before = reqs[0], real_before = reqs[1];
  CHECK_MPI(MPI_Testall(2, reqs, &flag, sts));
  CHECK(flag == 0, "Testall says complete before the fake message was sent");
  CHECK(reqs[0] == fake_before && reqs[1] == real_before,
        "Testall changed requests although not all were complete");
  CHECK_MPI(MPI_Barrier(range_comm)); /* everyone has checked: now send */
  CHECK_MPI(MPI_Send(&a, 1, MPI_INT, right, 5, range_comm));
  do CHECK_MPI(MPI_Testall(2, reqs, &flag, sts));
  while (!flag);
  CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "Testall left requests");
  check_recv(&sts[0], left, 5, 1, "Testall fake");
  check_recv(&sts[1], left, 6, 1, "Testall real");
  CHECK_MPI(MPI_Wait(&send_b, MPI_STATUS_IGNORE));
}

/* Only the real message exists at first, so Waitany must give its index; then the fake one;
 * then MPI_UNDEFINED with an empty status. */
static void waitany_order(int use_test) {
  int a = r, b = r, in_a = -1, in_b = -1, index = -5, flag = 0;
  MPI_Request reqs[3];
  MPI_Status st;
  reqs[0] = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Irecv(&in_a, 1, MPI_INT, left, 7, range_comm, &reqs[1]));
  CHECK_MPI(MPI_Irecv(&in_b, 1, MPI_INT, left, 8, real_comm, &reqs[2]));
  CHECK_MPI(MPI_Send(&b, 1, MPI_INT, right, 8, real_comm));
  if (use_test) do
      CHECK_MPI(MPI_Testany(3, reqs, &index, &flag, &st));
    while (!flag);
  else
    CHECK_MPI(MPI_Waitany(3, reqs, &index, &st));
  CHECK(index == 2, "Waitany/Testany gave index %d, only the real receive (2) can be done", index);
  check_recv(&st, left, 8, 1, "Waitany real");
  CHECK(reqs[2] == MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL,
        "Waitany changed the wrong one");
  CHECK_MPI(MPI_Barrier(range_comm));
  CHECK_MPI(MPI_Send(&a, 1, MPI_INT, right, 7, range_comm));
  if (use_test) do
      CHECK_MPI(MPI_Testany(3, reqs, &index, &flag, &st));
    while (!flag);
  else
    CHECK_MPI(MPI_Waitany(3, reqs, &index, &st));
  CHECK(index == 1, "Waitany/Testany gave index %d, expected the fake receive (1)", index);
  check_recv(&st, left, 7, 1, "Waitany fake");
  CHECK_MPI(use_test ? MPI_Testany(3, reqs, &index, &flag, &st)
                     : MPI_Waitany(3, reqs, &index, &st));
  CHECK(index == MPI_UNDEFINED, "Waitany over null requests gave %d", index);
  if (use_test) CHECK(flag == 1, "Testany over null requests: flag %d", flag);
  check_empty(&st, "Waitany over null requests");
}

static void waitsome_indices(int use_test) {
  int a = r, b = r, in_a = -1, in_b = -1, outcount = 0, seen = 0;
  int indices[3];
  MPI_Request reqs[3];
  MPI_Status sts[3];
  CHECK_MPI(MPI_Irecv(&in_a, 1, MPI_INT, left, 9, range_comm, &reqs[0]));
  CHECK_MPI(MPI_Irecv(&in_b, 1, MPI_INT, left, 10, real_comm, &reqs[1]));
  reqs[2] = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Send(&a, 1, MPI_INT, right, 9, range_comm));
  CHECK_MPI(MPI_Send(&b, 1, MPI_INT, right, 10, real_comm));
  for (;;) {
    CHECK_MPI(use_test ? MPI_Testsome(3, reqs, &outcount, indices, sts)
                       : MPI_Waitsome(3, reqs, &outcount, indices, sts));
    if (outcount == MPI_UNDEFINED) break;
    CHECK(use_test || outcount > 0, "Waitsome returned with nothing done");
    for (int k = 0; k < outcount; ++k) {
      int i = indices[k];
      CHECK(i == 0 || i == 1, "Waitsome index %d", i);
      CHECK(!(seen & (1 << i)), "Waitsome reported index %d twice", i);
      seen |= 1 << i;
      CHECK(reqs[i] == MPI_REQUEST_NULL, "Waitsome: request %d not null", i);
      check_recv(&sts[k], left, i == 0 ? 9 : 10, 1, "Waitsome status at its position");
    }
  }
  CHECK(seen == 3, "Waitsome saw %#x", seen);
}

/* A receive too small for its message fails with MPI_ERR_TRUNCATE; in an array that is
 * MPI_ERR_IN_STATUS, with each status's MPI_ERROR telling which one failed. */
static void err_in_status(void) {
  int out[4] = {1, 2, 3, 4}, small = 0, ok = -1, cls = 0;
  MPI_Request reqs[2];
  MPI_Status sts[2];
  CHECK_MPI(MPI_Comm_set_errhandler(range_comm, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Comm_set_errhandler(real_comm, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Irecv(&small, 1, MPI_INT, left, 11, range_comm, &reqs[0]));
  CHECK_MPI(MPI_Irecv(&ok, 1, MPI_INT, left, 12, real_comm, &reqs[1]));
  CHECK_MPI(MPI_Send(out, 4, MPI_INT, right, 11, range_comm));
  CHECK_MPI(MPI_Send(out, 1, MPI_INT, right, 12, real_comm));
  int rc = MPI_Waitall(2, reqs, sts);
  CHECK(rc == MPI_ERR_IN_STATUS, "Waitall with a truncated receive returned %d", rc);
  MPI_Error_class(sts[0].MPI_ERROR, &cls);
  CHECK(cls == MPI_ERR_TRUNCATE, "status 0 MPI_ERROR has class %d", cls);
  CHECK(sts[1].MPI_ERROR == MPI_SUCCESS, "status 1 MPI_ERROR is %d", sts[1].MPI_ERROR);
  CHECK(ok == 1, "the good receive got %d", ok);
  CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "failed requests not freed");
}

static void get_status_cancel_free(void) {
  int in = -1, out = r, flag = 1, cancelled = 0;
  MPI_Request req, send;
  MPI_Status st;
  /* Nothing is ever sent with tag 13: get_status says not complete, cancel succeeds. */
  CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, left, 13, range_comm, &req));
  CHECK_MPI(MPI_Request_get_status(req, &flag, &st));
  CHECK(flag == 0, "MPI_Request_get_status: a receive with no message is complete");
  CHECK_MPI(MPI_Cancel(&req));
  CHECK_MPI(MPI_Wait(&req, &st));
  CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
  CHECK(cancelled == 1, "cancelled receive: MPI_Test_cancelled %d", cancelled);
  /* get_status on a complete request leaves it for the wait. */
  CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, left, 14, range_comm, &req));
  CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, right, 14, range_comm, &send));
  CHECK_MPI(MPI_Request_free(&send)); /* the message still goes out */
  CHECK(send == MPI_REQUEST_NULL, "MPI_Request_free did not null the handle");
  do CHECK_MPI(MPI_Request_get_status(req, &flag, &st));
  while (!flag);
  check_recv(&st, left, 14, 1, "MPI_Request_get_status");
  CHECK(req != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
  MPI_Request dead = req;
  CHECK_MPI(MPI_Wait(&req, &st));
  check_recv(&st, left, 14, 1, "wait after MPI_Request_get_status");
  CHECK(in == left, "received %d", in);
  /* The old handle is dead now: an MPI_ERR_REQUEST error, not a crash. */
  int cls = 0;
  MPI_Error_class(MPI_Wait(&dead, &st), &cls);
  CHECK(cls == MPI_ERR_REQUEST, "waiting on a completed fake request: class %d", cls);
  MPI_Error_class(MPI_Request_free(&dead), &cls);
  CHECK(cls == MPI_ERR_REQUEST, "freeing a completed fake request: class %d", cls);
  CHECK_MPI(MPI_Barrier(range_comm));
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
  waitall_mixed();
  testall_all_or_nothing();
  waitany_order(0);
  waitany_order(1);
  waitsome_indices(0);
  waitsome_indices(1);
  err_in_status();
  get_status_cancel_free();
  CHECK_MPI(MPI_Comm_free(&range_comm));
  CHECK_MPI(MPI_Comm_free(&real_comm));
  shim_test_end();
  MPI_Finalize();
  if (r == 0) printf("range_requests: all checks passed on %d ranks\n", p);
  return 0;
}
