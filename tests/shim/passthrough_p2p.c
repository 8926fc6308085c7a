/* Pass-through test: nonblocking point-to-point, request arrays, attributes, error handlers
 * on real communicators (see passthrough.c). */
#include <stdint.h>

#include "passthrough.h"

static void check_st(const MPI_Status *st, int source, int tag, int count, const char *what) {
  int n = -1;
  CHECK_MPI(MPI_Get_count(st, MPI_INT, &n));
  CHECK(st->MPI_SOURCE == source && st->MPI_TAG == tag && n == count,
        "%s: status source %d tag %d count %d, want %d %d %d", what, st->MPI_SOURCE, st->MPI_TAG, n,
        source, tag, count);
}

/* MPI's empty status: what completion of a null or inactive request reports. */
static void check_empty(const MPI_Status *st, const char *what) {
  int n = -1;
  CHECK_MPI(MPI_Get_count(st, MPI_INT, &n));
  CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && n == 0,
        "%s: not the empty status (%d %d %d)", what, st->MPI_SOURCE, st->MPI_TAG, n);
}

static void test_all_to_all(MPI_Comm comm, int r, int p) {
  int *in = malloc(sizeof(int) * p), *out = malloc(sizeof(int) * p), s;
  MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * p);
  MPI_Status *sts = malloc(sizeof(MPI_Status) * 2 * p);
  for (s = 0; s < p; ++s) {
    out[s] = r * 1000 + s;
    CHECK_MPI(MPI_Irecv(&in[s], 1, MPI_INT, s, 100 + s, comm, &reqs[s]));
  }
  for (s = 0; s < p; ++s) {
    if (s % 2)
      CHECK_MPI(MPI_Isend(&out[s], 1, MPI_INT, s, 100 + r, comm, &reqs[p + s]));
    else
      CHECK_MPI(MPI_Issend(&out[s], 1, MPI_INT, s, 100 + r, comm, &reqs[p + s]));
  }
  CHECK_MPI(MPI_Waitall(2 * p, reqs, sts));
  for (s = 0; s < p; ++s) {
    check_st(&sts[s], s, 100 + s, 1, "all-to-all");
    CHECK(in[s] == s * 1000 + r && reqs[s] == MPI_REQUEST_NULL, "all-to-all from %d", s);
  }
  note("all-to-all ok, last %d", in[p - 1]);
  free(in), free(out), free(reqs), free(sts);
}

static void test_persistent_and_status(MPI_Comm comm, int r, int p) {
  int next = (r + 1) % p, prev = (r + p - 1) % p, in = -1, out = 0, iter, flag = 0, big[2] = {0};
  MPI_Request reqs[2], req;
  MPI_Status sts[2], st;
  CHECK_MPI(MPI_Recv_init(&in, 1, MPI_INT, prev, 20, comm, &reqs[0]));
  CHECK_MPI(MPI_Send_init(&out, 1, MPI_INT, next, 20, comm, &reqs[1]));
  for (iter = 0; iter < 3; ++iter) {
    out = iter * 100 + r;
    CHECK_MPI(MPI_Startall(2, reqs));
    CHECK_MPI(MPI_Waitall(2, reqs, sts));
    check_st(&sts[0], prev, 20, 1, "persistent");
    CHECK(in == iter * 100 + prev && reqs[0] != MPI_REQUEST_NULL, "persistent iter %d", iter);
  }
  CHECK_MPI(MPI_Start(&reqs[0])); /* inactive again after a wait; one more round by Start */
  CHECK_MPI(MPI_Start(&reqs[1]));
  CHECK_MPI(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Wait(&reqs[0], &st));
  CHECK(in == 200 + prev, "start round");
  CHECK_MPI(MPI_Request_free(&reqs[0]));
  CHECK_MPI(MPI_Request_free(&reqs[1]));
  CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "request_free");

  /* Request_get_status leaves the request alive; Wait then frees it */
  CHECK_MPI(MPI_Irecv(big, 2, MPI_INT, r, 21, comm, &req));
  out = 77;
  CHECK_MPI(MPI_Send(&out, 1, MPI_INT, r, 21, comm));
  while (!flag) CHECK_MPI(MPI_Request_get_status(req, &flag, &st));
  check_st(&st, r, 21, 1, "get_status");
  CHECK(req != MPI_REQUEST_NULL, "get_status freed the request");
  CHECK_MPI(MPI_Wait(&req, &st));
  check_st(&st, r, 21, 1, "wait after get_status");

  /* a receive nobody matches, cancelled */
  CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, r, 22, comm, &req));
  CHECK_MPI(MPI_Cancel(&req));
  CHECK_MPI(MPI_Wait(&req, &st));
  CHECK_MPI(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 1, "cancelled receive not reported cancelled");

  /* a freed active send still delivers; a ready send meets a posted receive */
  out = 5000 + r;
  CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, next, 23, comm, &req));
  CHECK_MPI(MPI_Request_free(&req));
  CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, prev, 23, comm, &st));
  CHECK(in == 5000 + prev, "freed send delivered %d", in);
  CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, prev, 24, comm, &req));
  CHECK_MPI(MPI_Barrier(comm));
  CHECK_MPI(MPI_Rsend(&out, 1, MPI_INT, next, 24, comm));
  CHECK_MPI(MPI_Wait(&req, &st));
  check_st(&st, prev, 24, 1, "rsend");
  note("persistent/status/cancel ok, last %d", in);
}

void test_nonblocking_p2p(MPI_Comm comm, int r, int p) {
  test_all_to_all(comm, r, p);
  test_persistent_and_status(comm, r, p);
}

/* Waitany with ANY_SOURCE at rank 0; Testsome over specific sources everywhere. */
static void test_any_and_some(MPI_Comm comm, int r, int p) {
  MPI_Request *reqs = malloc(sizeof(MPI_Request) * p), *sends = malloc(sizeof(MPI_Request) * p);
  MPI_Status *sts = malloc(sizeof(MPI_Status) * p), st;
  int *in = malloc(sizeof(int) * p), *out = malloc(sizeof(int) * p), *seen = calloc(p, sizeof(int)),
      *idx = malloc(sizeof(int) * p);
  int i, index, done = 0, outcount;
  if (r == 0) {
    for (i = 1; i < p; ++i)
      CHECK_MPI(MPI_Irecv(&in[i], 1, MPI_INT, MPI_ANY_SOURCE, 60, comm, &reqs[i]));
    reqs[0] = MPI_REQUEST_NULL;
    for (i = 1; i < p; ++i) {
      CHECK_MPI(MPI_Waitany(p, reqs, &index, &st));
      CHECK(index >= 1 && index < p && reqs[index] == MPI_REQUEST_NULL, "waitany index %d", index);
      CHECK(in[index] == st.MPI_SOURCE * 3 && !seen[st.MPI_SOURCE], "waitany from %d",
            st.MPI_SOURCE);
      seen[st.MPI_SOURCE] = 1;
    }
    CHECK_MPI(MPI_Waitany(p, reqs, &index, &st));
    CHECK(index == MPI_UNDEFINED, "waitany over nulls gave %d", index);
    check_empty(&st, "waitany over nulls");
  } else {
    int v = 3 * r;
    CHECK_MPI(MPI_Send(&v, 1, MPI_INT, 0, 60, comm));
  }
  for (i = 0; i < p; ++i) {
    seen[i] = 0, out[i] = 7 * r + i;
    CHECK_MPI(MPI_Irecv(&in[i], 1, MPI_INT, i, 61, comm, &reqs[i]));
    CHECK_MPI(MPI_Isend(&out[i], 1, MPI_INT, (r + i) % p, 61, comm, &sends[i]));
  }
  while (done < p) {
    CHECK_MPI(MPI_Testsome(p, reqs, &outcount, idx, sts));
    CHECK(outcount >= 0 && outcount <= p - done, "testsome outcount %d", outcount);
    for (i = 0; i < outcount; ++i) {
      int s = idx[i];
      CHECK(!seen[s] && reqs[s] == MPI_REQUEST_NULL, "testsome index %d twice", s);
      check_st(&sts[i], s, 61, 1, "testsome"); /* status i belongs to index idx[i] */
      CHECK(in[s] == 7 * s + (r - s + p) % p, "testsome value from %d: %d", s, in[s]);
      seen[s] = 1;
    }
    done += outcount;
  }
  CHECK_MPI(MPI_Testsome(p, reqs, &outcount, idx, sts));
  CHECK(outcount == MPI_UNDEFINED, "testsome over nulls gave %d", outcount);
  CHECK_MPI(MPI_Waitsome(p, reqs, &outcount, idx, sts));
  CHECK(outcount == MPI_UNDEFINED, "waitsome over nulls gave %d", outcount);
  CHECK_MPI(MPI_Waitall(p, sends, sts));
  note("any/some ok");
  free(reqs), free(sends), free(sts), free(in), free(out), free(seen), free(idx);
}

/* Testall is all-or-nothing; Testany skips nulls; MPI_ERR_IN_STATUS marks the failed one. */
static void test_all_or_nothing(MPI_Comm comm, int r) {
  MPI_Request reqs[2];
  MPI_Status sts[2], st;
  int a = -1, b = -1, one = 1, two[2] = {2, 2}, flag = 0, index, err, cls;
  CHECK_MPI(MPI_Irecv(&a, 1, MPI_INT, r, 62, comm, &reqs[0]));
  CHECK_MPI(MPI_Irecv(&b, 1, MPI_INT, r, 63, comm, &reqs[1]));
  CHECK_MPI(MPI_Send(&one, 1, MPI_INT, r, 62, comm));
  CHECK_MPI(MPI_Testall(2, reqs, &flag, sts));
  CHECK(!flag && reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL,
        "testall completed part of the array");
  CHECK_MPI(MPI_Send(&one, 1, MPI_INT, r, 63, comm));
  while (!flag) CHECK_MPI(MPI_Testall(2, reqs, &flag, sts));
  check_st(&sts[0], r, 62, 1, "testall[0]");
  check_st(&sts[1], r, 63, 1, "testall[1]");

  reqs[0] = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Irecv(&a, 1, MPI_INT, r, 64, comm, &reqs[1]));
  CHECK_MPI(MPI_Send(&one, 1, MPI_INT, r, 64, comm));
  flag = 0;
  while (!flag) CHECK_MPI(MPI_Testany(2, reqs, &index, &flag, &st));
  CHECK(index == 1, "testany index %d", index);
  CHECK_MPI(MPI_Test(&reqs[0], &flag, &st));
  CHECK(flag, "test of a null request");
  check_empty(&st, "test of a null request");

  /* MPICH reports MPI_ERR_IN_STATUS on MPI_COMM_WORLD, Open MPI on the requests' comm */
  CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Irecv(&a, 1, MPI_INT, r, 65, comm, &reqs[0])); /* too small: truncated */
  CHECK_MPI(MPI_Irecv(&b, 1, MPI_INT, r, 66, comm, &reqs[1]));
  CHECK_MPI(MPI_Send(two, 2, MPI_INT, r, 65, comm));
  CHECK_MPI(MPI_Send(&one, 1, MPI_INT, r, 66, comm));
  err = MPI_Waitall(2, reqs, sts);
  /* Open MPI 4.1 reports a truncated receive from itself as success; the shim must not change
   * whatever the library says, which the transcript comparison checks */
  CHECK(err == MPI_ERR_IN_STATUS || err == MPI_SUCCESS, "waitall with a truncation: %d", err);
  if (err == MPI_ERR_IN_STATUS) {
    CHECK_MPI(MPI_Error_class(sts[0].MPI_ERROR, &cls));
    CHECK(cls == MPI_ERR_TRUNCATE, "truncation reported as class %d", cls);
    /* the other request completed (Open MPI) or is pending and still active (MPICH) */
    if (sts[1].MPI_ERROR == MPI_ERR_PENDING) {
      CHECK(reqs[1] != MPI_REQUEST_NULL, "a pending request was freed");
      CHECK_MPI(MPI_Wait(&reqs[1], &st));
    } else {
      CHECK(sts[1].MPI_ERROR == MPI_SUCCESS, "other status' error %d", sts[1].MPI_ERROR);
    }
  }
  CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "requests left active");
  /* Under RANGECOMM_MODE=accelerate or shadow comm may be a range communicator, which reports
   * the truncation as MPI says even where Open MPI 4.1 does not: the transcript then records
   * only that the checks above passed. */
  const char *mode = getenv("RANGECOMM_MODE");
  if (mode != NULL && (strcmp(mode, "accelerate") == 0 || strcmp(mode, "shadow") == 0))
    note("err_in_status: checked");
  else
    note("err_in_status: returned %d, other request %s", err,
         err == MPI_SUCCESS || sts[1].MPI_ERROR == MPI_SUCCESS ? "done" : "pending");
  CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  note("testall/testany/err_in_status ok");
}

void test_request_arrays(MPI_Comm comm, int r, int p) {
  test_any_and_some(comm, r, p);
  test_all_or_nothing(comm, r);
}

/* ---- attributes and error handlers ------------------------------------------------------ */

static int copies, deletes;
static MPI_Comm copy_comm, delete_comm;
static intptr_t deleted_value;

static int copy_attr(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)keyval, (void)extra;
  copy_comm = old, ++copies;
  *(void **)out = (void *)((intptr_t)in + 1);
  *flag = 1;
  return MPI_SUCCESS;
}

static int delete_attr(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)keyval, (void)extra;
  delete_comm = comm, deleted_value = (intptr_t)value, ++deletes;
  return MPI_SUCCESS;
}

void test_attributes(MPI_Comm comm, int r, int p) {
  MPI_Comm a, b, b_handle;
  int keyval, flag = 0, *tag_ub = NULL;
  void *value = NULL;
  (void)r, (void)p;
  CHECK_MPI(MPI_Comm_create_keyval(copy_attr, delete_attr, &keyval, NULL));
  CHECK_MPI(MPI_Comm_dup(comm, &a));
  CHECK_MPI(MPI_Comm_set_attr(a, keyval, (void *)(intptr_t)40));
  CHECK_MPI(MPI_Comm_dup(a, &b));
  CHECK(copies == 1 && copy_comm == a, "copy callback: %d calls, with the parent: %d", copies,
        copy_comm == a);
  CHECK_MPI(MPI_Comm_get_attr(b, keyval, &value, &flag));
  CHECK(flag && (intptr_t)value == 41, "copied attribute %ld", (long)(intptr_t)value);
  b_handle = b;
  CHECK_MPI(MPI_Comm_free(&b));
  CHECK(deletes == 1 && delete_comm == b_handle && deleted_value == 41, "delete on free");
  CHECK_MPI(MPI_Comm_delete_attr(a, keyval));
  CHECK(deletes == 2 && delete_comm == a && deleted_value == 40, "delete_attr");
  CHECK_MPI(MPI_Comm_get_attr(a, keyval, &value, &flag));
  CHECK(!flag, "attribute still there after delete_attr");
  CHECK_MPI(MPI_Comm_free_keyval(&keyval));
  CHECK(keyval == MPI_KEYVAL_INVALID, "free_keyval");
  CHECK_MPI(MPI_Comm_free(&a));
  CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
  CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB");
  note("attributes ok: copies=%d deletes=%d tag_ub>=32767", copies, deletes);
}

static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void record_error(MPI_Comm *comm, int *code, ...) {
  handler_comm = *comm, handler_code = *code, ++handler_calls;
}

void test_error_handlers(MPI_Comm comm, int r, int p) {
  MPI_Comm e;
  MPI_Errhandler handler, current;
  int err, cls, v = r;
  CHECK_MPI(MPI_Comm_dup(comm, &e));
  CHECK_MPI(MPI_Comm_set_errhandler(e, MPI_ERRORS_RETURN));
  err = MPI_Send(&v, 1, MPI_INT, p, 0, e); /* rank p does not exist */
  CHECK_MPI(MPI_Error_class(err, &cls));
  CHECK(cls == MPI_ERR_RANK, "send to rank %d: class %d", p, cls);

  CHECK_MPI(MPI_Comm_create_errhandler(record_error, &handler));
  CHECK_MPI(MPI_Comm_set_errhandler(e, handler));
  CHECK_MPI(MPI_Comm_call_errhandler(e, MPI_ERR_OTHER));
  CHECK(handler_calls == 1 && handler_comm == e && handler_code == MPI_ERR_OTHER,
        "call_errhandler: %d calls", handler_calls);
  err = MPI_Send(&v, 1, MPI_INT, p, 0, e);
  CHECK_MPI(MPI_Error_class(err, &cls));
  CHECK(handler_calls == 2 && handler_comm == e && handler_code == err && cls == MPI_ERR_RANK,
        "user handler on a failed send: %d calls, class %d", handler_calls, cls);
  CHECK_MPI(MPI_Comm_get_errhandler(e, &current));
  CHECK_MPI(MPI_Errhandler_free(&current));
  CHECK_MPI(MPI_Errhandler_free(&handler));
  CHECK_MPI(MPI_Comm_free(&e));
  note("error handlers ok: calls=%d", handler_calls);
}
