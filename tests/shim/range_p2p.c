/* Point-to-point on range communicators through the standard API: every send mode, blocking
 * and nonblocking, wildcards, probes and matched probes, sendrecv(_replace), persistent
 * requests, MPI_PROC_NULL and messages to self, buffered sends from MPI_BOTTOM, each status
 * checked field by field (range ranks, user tags, counts). Runs on a contiguous range and on a
 * strided one. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#include <limits.h>

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

enum { N = 5 };

static int rank_of, size_of;

static void fill(int *buf, int n, int origin, int tag) {
  for (int i = 0; i < n; ++i) buf[i] = 1000 * origin + 10 * tag + i;
}

static void check_data(const int *buf, int n, int origin, int tag, const char *what) {
  for (int i = 0; i < n; ++i)
    CHECK(buf[i] == 1000 * origin + 10 * tag + i, "%s: element %d is %d, expected %d", what, i,
          buf[i], 1000 * origin + 10 * tag + i);
}

/* Every field a program can read (MPICH leaves the cancelled bit of a probe's status unset, so
 * it is checked for receives only). */
static void check_status(const MPI_Status *st, int source, int tag, int count, const char *what) {
  int n = -1, cancelled = 1;
  CHECK(st->MPI_SOURCE == source, "%s: MPI_SOURCE %d, expected %d", what, st->MPI_SOURCE, source);
  CHECK(st->MPI_TAG == tag, "%s: MPI_TAG %d, expected %d", what, st->MPI_TAG, tag);
  CHECK_MPI(MPI_Get_count(st, MPI_INT, &n));
  CHECK(n == count, "%s: MPI_Get_count %d, expected %d", what, n, count);
  CHECK_MPI(MPI_Get_elements(st, MPI_INT, &n));
  CHECK(n == count, "%s: MPI_Get_elements %d, expected %d", what, n, count);
  if (strstr(what, "probe") || strstr(what, "Probe")) return;
  CHECK_MPI(MPI_Test_cancelled(st, &cancelled));
  CHECK(cancelled == 0, "%s: MPI_Test_cancelled %d", what, cancelled);
}

/* Each mode sends to the right neighbour; the receive names the left one. */
static void ring_all_modes(MPI_Comm c) {
  int r = rank_of, p = size_of, right = (r + 1) % p, left = (r + p - 1) % p;
  int out[N], in[N];
  MPI_Status st;
  MPI_Request req, rreq;
  for (int mode = 0; mode < 8; ++mode) {
    int tag = 3 + mode;
    fill(out, N, r, tag);
    CHECK_MPI(MPI_Irecv(in, N, MPI_INT, left, tag, c, &rreq));
    if (mode == 3 || mode == 7) CHECK_MPI(MPI_Barrier(c)); /* ready mode: receives are posted */
    switch (mode) {
      case 0:
        CHECK_MPI(MPI_Send(out, N, MPI_INT, right, tag, c));
        break;
      case 1:
        CHECK_MPI(MPI_Ssend(out, N, MPI_INT, right, tag, c));
        break;
      case 2:
        CHECK_MPI(MPI_Bsend(out, N, MPI_INT, right, tag, c));
        break;
      case 3:
        CHECK_MPI(MPI_Rsend(out, N, MPI_INT, right, tag, c));
        break;
      case 4:
        CHECK_MPI(MPI_Isend(out, N, MPI_INT, right, tag, c, &req));
        break;
      case 5:
        CHECK_MPI(MPI_Issend(out, N, MPI_INT, right, tag, c, &req));
        break;
      case 6:
        CHECK_MPI(MPI_Ibsend(out, N, MPI_INT, right, tag, c, &req));
        break;
      case 7:
        CHECK_MPI(MPI_Irsend(out, N, MPI_INT, right, tag, c, &req));
        break;
    }
    CHECK_MPI(MPI_Wait(&rreq, &st));
    CHECK(rreq == MPI_REQUEST_NULL, "mode %d: completed receive request is not null", mode);
    check_status(&st, left, tag, N, "ring receive");
    check_data(in, N, left, tag, "ring receive");
    if (mode >= 4) {
      CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
      CHECK(req == MPI_REQUEST_NULL, "mode %d: completed send request is not null", mode);
    }
  }
}

/* Every rank sends to rank 0 with tag 20 + rank; rank 0 takes them with both wildcards and
 * finds the sender and tag in the status. */
static void wildcards(MPI_Comm c) {
  int r = rank_of, p = size_of, out[N], in[N];
  fill(out, N, r, 20 + r);
  MPI_Request req;
  CHECK_MPI(MPI_Isend(out, N, MPI_INT, 0, 20 + r, c, &req));
  if (r == 0) {
    int seen = 0;
    for (int k = 0; k < p; ++k) {
      MPI_Status st;
      CHECK_MPI(MPI_Recv(in, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st));
      CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < p, "wildcard source %d", st.MPI_SOURCE);
      check_status(&st, st.MPI_SOURCE, 20 + st.MPI_SOURCE, N, "wildcard receive");
      check_data(in, N, st.MPI_SOURCE, 20 + st.MPI_SOURCE, "wildcard receive");
      seen |= 1 << st.MPI_SOURCE;
    }
    CHECK(seen == (1 << p) - 1, "wildcard receives saw senders %#x", seen);
  }
  CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Barrier(c)); /* later tests send to rank 0 too */
}

/* Probe, Iprobe, Mprobe/Mrecv and Improbe/Imrecv from the left neighbour. */
static void probes(MPI_Comm c) {
  int r = rank_of, p = size_of, right = (r + 1) % p, left = (r + p - 1) % p;
  int out[N], in[N];
  MPI_Request sends[4];
  for (int k = 0; k < 4; ++k) {
    fill(out, N, r, 40 + k);
    CHECK_MPI(MPI_Isend(out, N - k, MPI_INT, right, 40 + k, c, &sends[k]));
    /* The data was copied? No: each send needs its own buffer until it completes. */
    CHECK_MPI(MPI_Wait(&sends[k], MPI_STATUS_IGNORE));
  }
  MPI_Status st;
  CHECK_MPI(MPI_Probe(left, 40, c, &st));
  check_status(&st, left, 40, N, "MPI_Probe");
  CHECK_MPI(MPI_Recv(in, N, MPI_INT, left, 40, c, &st));
  check_data(in, N, left, 40, "received after MPI_Probe");
  int flag = 0;
  while (!flag) CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 41, c, &flag, &st));
  check_status(&st, left, 41, N - 1, "MPI_Iprobe");
  CHECK_MPI(MPI_Recv(in, N, MPI_INT, left, 41, c, &st));
  check_status(&st, left, 41, N - 1, "received after MPI_Iprobe");
  MPI_Message msg;
  CHECK_MPI(MPI_Mprobe(left, MPI_ANY_TAG, c, &msg, &st));
  check_status(&st, left, 42, N - 2, "MPI_Mprobe");
  CHECK(msg != MPI_MESSAGE_NULL, "MPI_Mprobe gave MPI_MESSAGE_NULL");
  CHECK_MPI(MPI_Mrecv(in, N, MPI_INT, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv left the message handle set");
  check_status(&st, left, 42, N - 2, "MPI_Mrecv");
  check_data(in, N - 2, left, 42, "MPI_Mrecv");
  flag = 0;
  while (!flag) CHECK_MPI(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, &msg, &st));
  check_status(&st, left, 43, N - 3, "MPI_Improbe");
  MPI_Request req;
  CHECK_MPI(MPI_Imrecv(in, N, MPI_INT, &msg, &req));
  CHECK_MPI(MPI_Wait(&req, &st));
  check_status(&st, left, 43, N - 3, "MPI_Imrecv");
  check_data(in, N - 3, left, 43, "MPI_Imrecv");
}

static void sendrecv_and_replace(MPI_Comm c) {
  int r = rank_of, p = size_of, right = (r + 1) % p, left = (r + p - 1) % p;
  int out[N], in[N];
  MPI_Status st;
  fill(out, N, r, 50);
  CHECK_MPI(MPI_Sendrecv(out, N, MPI_INT, right, 50, in, N, MPI_INT, left, 50, c, &st));
  check_status(&st, left, 50, N, "MPI_Sendrecv");
  check_data(in, N, left, 50, "MPI_Sendrecv");
  /* Replace with a strided type: every other int of 2N. */
  MPI_Datatype every_other;
  CHECK_MPI(MPI_Type_vector(N, 1, 2, MPI_INT, &every_other));
  CHECK_MPI(MPI_Type_commit(&every_other));
  int buf[2 * N];
  for (int i = 0; i < N; ++i) buf[2 * i] = 1000 * r + 10 * 51 + i, buf[2 * i + 1] = -7;
  CHECK_MPI(MPI_Sendrecv_replace(buf, 1, every_other, right, 51, left, 51, c, &st));
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 51, "MPI_Sendrecv_replace status %d/%d",
        st.MPI_SOURCE, st.MPI_TAG);
  for (int i = 0; i < N; ++i) {
    CHECK(buf[2 * i] == 1000 * left + 510 + i, "replace: element %d is %d", i, buf[2 * i]);
    CHECK(buf[2 * i + 1] == -7, "replace: the gap %d was written", i);
  }
  CHECK_MPI(MPI_Type_free(&every_other));
}

/* Persistent send and receive, started three times (MPI_Start and MPI_Startall), and one
 * freed while inactive. */
static void persistent(MPI_Comm c) {
  int r = rank_of, p = size_of, right = (r + 1) % p, left = (r + p - 1) % p;
  int out[N], in[N];
  MPI_Request reqs[2];
  MPI_Status sts[2];
  CHECK_MPI(MPI_Recv_init(in, N, MPI_INT, left, 60, c, &reqs[0]));
  CHECK_MPI(MPI_Send_init(out, N, MPI_INT, right, 60, c, &reqs[1]));
  for (int round = 0; round < 3; ++round) {
    fill(out, N, r, 60 + round);
    if (round == 1) {
      CHECK_MPI(MPI_Start(&reqs[0]));
      CHECK_MPI(MPI_Start(&reqs[1]));
    } else {
      CHECK_MPI(MPI_Startall(2, reqs));
    }
    CHECK_MPI(MPI_Waitall(2, reqs, sts));
    CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL,
          "a completed persistent request became MPI_REQUEST_NULL");
    check_status(&sts[0], left, 60, N, "persistent receive");
    check_data(in, N, left, 60 + round, "persistent receive");
  }
  /* Inactive persistent requests: a wait returns at once with an empty status. */
  MPI_Status st;
  CHECK_MPI(MPI_Wait(&reqs[0], &st));
  CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
        "inactive persistent request: status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
  CHECK_MPI(MPI_Request_free(&reqs[0]));
  CHECK_MPI(MPI_Request_free(&reqs[1]));
  CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "freed requests not null");
}

static void proc_null_and_self(MPI_Comm c) {
  int r = rank_of, out[N], in[N];
  MPI_Status st;
  CHECK_MPI(MPI_Send(out, N, MPI_INT, MPI_PROC_NULL, 1, c));
  CHECK_MPI(MPI_Recv(in, N, MPI_INT, MPI_PROC_NULL, 1, c, &st));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
        "MPI_PROC_NULL receive status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
  int n = -1;
  CHECK_MPI(MPI_Get_count(&st, MPI_INT, &n));
  CHECK(n == 0, "MPI_PROC_NULL receive count %d", n);
  fill(out, N, r, 70);
  CHECK_MPI(MPI_Send(out, N, MPI_INT, r, 70, c)); /* to self: buffered */
  CHECK_MPI(MPI_Recv(in, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st));
  check_status(&st, r, 70, N, "message to self");
  check_data(in, N, r, 70, "message to self");
}

static void errors(MPI_Comm c) {
  int *ub = NULL, flag = 0, x = 0, cls = 0;
  CHECK_MPI(MPI_Comm_get_attr(c, MPI_TAG_UB, &ub, &flag));
  CHECK(flag && *ub >= 32767, "MPI_TAG_UB on a range: flag %d value %d", flag, flag ? *ub : 0);
  CHECK_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  /* (MPI_TAG_UB is MPI_COMM_WORLD's, INT_MAX on Open MPI: no tag lies above it there) */
  MPI_Error_class(MPI_Send(&x, 1, MPI_INT, 0, *ub < INT_MAX ? *ub + 1 : -5, c), &cls);
  CHECK(cls == MPI_ERR_TAG, "tag above MPI_TAG_UB (or negative): class %d", cls);
  MPI_Error_class(MPI_Send(&x, 1, MPI_INT, size_of, 0, c), &cls);
  CHECK(cls == MPI_ERR_RANK, "rank = size: class %d", cls);
  MPI_Error_class(MPI_Send(&x, -1, MPI_INT, 0, 0, c), &cls);
  CHECK(cls == MPI_ERR_COUNT, "count -1: class %d", cls);
}

/* MPI-4 large-count calls (MPICH 4): the _c forms on a range. */
static void large_count(MPI_Comm c) {
#if MPI_VERSION >= 4
  int r = rank_of, p = size_of, right = (r + 1) % p, left = (r + p - 1) % p;
  int out[N], in[N];
  MPI_Status st;
  MPI_Request req;
  MPI_Count n = -1;
  fill(out, N, r, 80);
  CHECK_MPI(MPI_Irecv_c(in, N, MPI_INT, left, 80, c, &req));
  CHECK_MPI(MPI_Send_c(out, N, MPI_INT, right, 80, c));
  CHECK_MPI(MPI_Wait(&req, &st));
  check_status(&st, left, 80, N, "MPI_Irecv_c");
  CHECK_MPI(MPI_Get_count_c(&st, MPI_INT, &n));
  CHECK(n == N, "MPI_Get_count_c %lld", (long long)n);
  check_data(in, N, left, 80, "MPI_Irecv_c");
  CHECK_MPI(MPI_Sendrecv_c(out, N, MPI_INT, right, 81, in, N, MPI_INT, left, 81, c, &st));
  check_status(&st, left, 81, N, "MPI_Sendrecv_c");
#else
  (void)c;
#endif
}

/* Buffered sends and Sendrecv_replace from MPI_BOTTOM with an absolute-address type: the
 * library copies the data itself, which MPICH's MPI_Pack refuses to do from a null buffer. */
static void buffered_from_bottom(MPI_Comm c) {
  int r = rank_of, p = size_of, right = (r + 1) % p, left = (r + p - 1) % p;
  int out[N], in[N], one = 1;
  MPI_Aint at;
  MPI_Datatype abs_type, n_ints;
  CHECK_MPI(MPI_Type_contiguous(N, MPI_INT, &n_ints));
  CHECK_MPI(MPI_Get_address(out, &at));
  CHECK_MPI(MPI_Type_create_struct(1, &one, &at, &n_ints, &abs_type));
  CHECK_MPI(MPI_Type_commit(&abs_type));
  for (int mode = 0; mode < 3; ++mode) {
    int tag = 30 + mode;
    MPI_Request req = MPI_REQUEST_NULL, rreq;
    MPI_Status st;
    fill(out, N, r, tag);
    CHECK_MPI(MPI_Irecv(in, N, MPI_INT, left, tag, c, &rreq));
    if (mode == 0) CHECK_MPI(MPI_Bsend(MPI_BOTTOM, 1, abs_type, right, tag, c));
    if (mode == 1) CHECK_MPI(MPI_Ibsend(MPI_BOTTOM, 1, abs_type, right, tag, c, &req));
    if (mode == 2) {
      CHECK_MPI(MPI_Bsend_init(MPI_BOTTOM, 1, abs_type, right, tag, c, &req));
      CHECK_MPI(MPI_Start(&req));
    }
    CHECK_MPI(MPI_Wait(&rreq, &st));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (mode == 2) CHECK_MPI(MPI_Request_free(&req));
    check_data(in, N, left, tag, "buffered send from MPI_BOTTOM");
    check_status(&st, left, tag, N, "buffered send from MPI_BOTTOM");
  }
  /* Sendrecv_replace packs its outgoing data the same way */
  {
    MPI_Status st;
    fill(out, N, r, 33);
    CHECK_MPI(MPI_Sendrecv_replace(MPI_BOTTOM, 1, abs_type, right, 33, left, 33, c, &st));
    check_data(out, N, left, 33, "Sendrecv_replace at MPI_BOTTOM");
    check_status(&st, left, 33, N, "Sendrecv_replace at MPI_BOTTOM");
  }
  CHECK_MPI(MPI_Type_free(&abs_type));
  CHECK_MPI(MPI_Type_free(&n_ints));
}

static void run_all(MPI_Comm c) {
  CHECK_MPI(MPI_Comm_rank(c, &rank_of));
  CHECK_MPI(MPI_Comm_size(c, &size_of));
  ring_all_modes(c);
  wildcards(c);
  probes(c);
  sendrecv_and_replace(c);
  persistent(c);
  proc_null_and_self(c);
  errors(c);
  large_count(c);
  buffered_from_bottom(c);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  int wr, wp;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &wp);
  static char bsend_space[1 << 16];
  MPI_Buffer_attach(bsend_space, sizeof bsend_space);
  MPI_Comm all, strided;
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp - 1, 1, &all));
  run_all(all);
  /* The odd world ranks (or rank 0 alone), a range made from the first one. */
  int first = wp > 1 ? 1 : 0;
  CHECK_MPI(MPIX_Comm_create_range(all, first, wp - 1, 2, &strided));
  if (strided != MPI_COMM_NULL) {
    run_all(strided);
    CHECK_MPI(MPI_Comm_free(&strided));
  }
  CHECK_MPI(MPI_Comm_free(&all));
  void *space;
  int space_size;
  MPI_Buffer_detach(&space, &space_size);
  MPI_Barrier(MPI_COMM_WORLD);
  shim_test_end();
  MPI_Finalize();
  if (wr == 0) printf("range_p2p: all checks passed on %d ranks\n", wp);
  return 0;
}
