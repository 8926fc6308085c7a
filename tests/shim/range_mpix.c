/* The three MPIX calls: MPIX_Comm_create_range on real and range communicators (members,
 * non-members, strides, nesting), MPIX_Comm_is_range, MPIX_Icomm_create_group (complete at once
 * for ranges; general groups; two creations started in opposite orders), and their errors. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

static int error_class(int code) {
  int cls = MPI_ERR_OTHER;
  MPI_Error_class(code, &cls);
  return cls;
}

/* Rank and size of a range, against the arithmetic of first..last:stride of the world. */
static void check_range(MPI_Comm c, int wr, int first, int last, int stride) {
  int member = wr >= first && wr <= last && (wr - first) % stride == 0;
  if (!member) {
    CHECK(c == MPI_COMM_NULL, "world rank %d is outside %d..%d:%d but got a communicator", wr,
          first, last, stride);
    return;
  }
  CHECK(c != MPI_COMM_NULL, "world rank %d is in %d..%d:%d but got MPI_COMM_NULL", wr, first, last,
        stride);
  int r = -1, p = -1, flag = 0;
  CHECK_MPI(MPI_Comm_rank(c, &r));
  CHECK_MPI(MPI_Comm_size(c, &p));
  CHECK(r == (wr - first) / stride, "rank %d, expected %d", r, (wr - first) / stride);
  CHECK(p == (last - first) / stride + 1, "size %d, expected %d", p, (last - first) / stride + 1);
  CHECK_MPI(MPIX_Comm_is_range(c, &flag));
  CHECK(flag == 1, "MPIX_Comm_is_range says %d for a range", flag);
}

static void test_create_range(int wr, int wp) {
  MPI_Comm all, odd, nested, dup_world, from_dup;
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp - 1, 1, &all));
  check_range(all, wr, 0, wp - 1, 1);
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, wp > 1 ? 1 : 0, wp - 1, 2, &odd));
  check_range(odd, wr, wp > 1 ? 1 : 0, wp - 1, 2);
  /* A range of a range: ranks 0..size-1 step 2 of `all`, i.e. the even world ranks. */
  CHECK_MPI(MPIX_Comm_create_range(all, 0, wp - 1, 2, &nested));
  check_range(nested, wr, 0, wp - 1, 2);
  /* A real communicator other than MPI_COMM_WORLD: a dup keeps world order. */
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup_world));
  CHECK_MPI(MPIX_Comm_create_range(dup_world, wp - 1, wp - 1, 1, &from_dup));
  check_range(from_dup, wr, wp - 1, wp - 1, 1);
  int flag = 1;
  CHECK_MPI(MPIX_Comm_is_range(MPI_COMM_WORLD, &flag));
  CHECK(flag == 0, "MPIX_Comm_is_range(MPI_COMM_WORLD) = %d", flag);
  CHECK_MPI(MPIX_Comm_is_range(dup_world, &flag));
  CHECK(flag == 0, "MPIX_Comm_is_range(a dup of MPI_COMM_WORLD) = %d", flag);
  CHECK_MPI(MPIX_Comm_is_range(MPI_COMM_NULL, &flag));
  CHECK(flag == 0, "MPIX_Comm_is_range(MPI_COMM_NULL) = %d", flag);
  MPI_Comm *mine[] = {&all, &odd, &nested, &from_dup};
  for (int i = 0; i < 4; ++i)
    if (*mine[i] != MPI_COMM_NULL) CHECK_MPI(MPI_Comm_free(mine[i]));
  CHECK_MPI(MPI_Comm_free(&dup_world));
}

/* A reversed world order is not a range of MPI_COMM_WORLD: an MPI_ERR_COMM error. */
/* A real communicator whose ranks are not evenly spaced world ranks (here: reversed) still has
 * ranges: their members are general groups of the world, made locally all the same. */
static void test_irregular_parent(int wr, int wp) {
  MPI_Comm reversed, all = MPI_COMM_NULL, every_other = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, wp - wr, &reversed));
  CHECK_MPI(MPIX_Comm_create_range(reversed, 0, wp - 1, 1, &all));
  int r = -1, n = -1, flag = 0, sum = -1;
  CHECK_MPI(MPI_Comm_rank(all, &r));
  CHECK_MPI(MPI_Comm_size(all, &n));
  CHECK_MPI(MPIX_Comm_is_range(all, &flag));
  CHECK(r == wp - 1 - wr && n == wp && flag, "range of a reversed communicator: rank %d size %d", r,
        n);
  CHECK_MPI(MPI_Allreduce(&wr, &sum, 1, MPI_INT, MPI_SUM, all));
  CHECK(sum == wp * (wp - 1) / 2, "sum of world ranks %d", sum);
  /* ranks 0, 2, 4, ... of the reversed communicator: world ranks wp-1, wp-3, ... */
  CHECK_MPI(MPIX_Comm_create_range(reversed, 0, wp - 1, 2, &every_other));
  CHECK((every_other != MPI_COMM_NULL) == ((wp - 1 - wr) % 2 == 0), "membership of every other");
  if (every_other != MPI_COMM_NULL) {
    int first = -1;
    if (r == 0) first = wr;
    CHECK_MPI(MPI_Bcast(&first, 1, MPI_INT, 0, every_other));
    CHECK(first == wp - 1, "rank 0 of every other is world rank %d", first);
    CHECK_MPI(MPI_Comm_free(&every_other));
  }
  CHECK_MPI(MPI_Comm_free(&all));
  CHECK_MPI(MPI_Comm_free(&reversed));
}

static void test_errors(int wp) {
  MPI_Comm out = MPI_COMM_NULL;
  int rc = MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp - 1, 0, &out);
  CHECK(error_class(rc) == MPI_ERR_ARG, "stride 0: class %d", error_class(rc));
  rc = MPIX_Comm_create_range(MPI_COMM_WORLD, 1, 0, 1, &out);
  CHECK(error_class(rc) == MPI_ERR_ARG, "first > last: class %d", error_class(rc));
  rc = MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp, 1, &out);
  CHECK(error_class(rc) == MPI_ERR_RANK, "last outside: class %d", error_class(rc));
  rc = MPIX_Comm_create_range(MPI_COMM_NULL, 0, 0, 1, &out);
  CHECK(error_class(rc) == MPI_ERR_COMM, "MPI_COMM_NULL parent: class %d", error_class(rc));
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  rc = MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp + 5, 1, &out);
  CHECK_MPI(MPI_Error_string(rc, text, &len));
  note("error string: %s", text);
  /* the library's own message, on MPICH too (whose MPI_Error_string alone loses it) */
  CHECK(strstr(text, "rangecomm") != NULL && strstr(text, "outside") != NULL &&
            len == (int)strlen(text),
        "MPI_Error_string gave '%s' (%d)", text, len);
}

static void test_icomm_create_group(int wr, int wp) {
  MPI_Group world_group, evens, reversed;
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  int triple[1][3] = {{0, wp - 1, 2}};
  CHECK_MPI(MPI_Group_range_incl(world_group, 1, triple, &evens));
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Request req = MPI_REQUEST_NULL;
  if (wr % 2 == 0) {
    CHECK_MPI(MPIX_Icomm_create_group(MPI_COMM_WORLD, evens, 5, &c, &req));
    int flag = 0;
    MPI_Status st;
    CHECK_MPI(MPI_Test(&req, &flag, &st));
    CHECK(flag == 1, "the request of a range group is not complete at once");
    CHECK(req == MPI_REQUEST_NULL, "a completed request is not MPI_REQUEST_NULL");
    check_range(c, wr, 0, wp - 1, 2);
    int value = wr == 0 ? 42 : 0;
    CHECK_MPI(MPI_Bcast(&value, 1, MPI_INT, 0, c));
    CHECK(value == 42, "broadcast on the new communicator gave %d", value);
    CHECK_MPI(MPI_Comm_free(&c));
  }
  if (wp >= 3) { /* world ranks 2, 1, 0: a group, but not a range of MPI_COMM_WORLD */
    int ranks[3] = {2, 1, 0};
    CHECK_MPI(MPI_Group_incl(world_group, 3, ranks, &reversed));
    if (wr <= 2) {
      CHECK_MPI(MPIX_Icomm_create_group(MPI_COMM_WORLD, reversed, 6, &c, &req));
      CHECK(c != MPI_COMM_NULL, "a member got MPI_COMM_NULL");
      CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
      int r = -1, n = -1, flag = 0;
      CHECK_MPI(MPI_Comm_rank(c, &r));
      CHECK_MPI(MPI_Comm_size(c, &n));
      CHECK_MPI(MPIX_Comm_is_range(c, &flag));
      CHECK(r == 2 - wr && n == 3 && flag == 1, "reversed group: rank %d size %d flag %d", r, n,
            flag);
      int value = wr == 2 ? 77 : 0; /* rank 0 of c is world rank 2 */
      CHECK_MPI(MPI_Bcast(&value, 1, MPI_INT, 0, c));
      CHECK(value == 77, "broadcast on the reversed group gave %d", value);
      MPI_Group cg;
      int cmp = MPI_UNEQUAL;
      CHECK_MPI(MPI_Comm_group(c, &cg));
      CHECK_MPI(MPI_Group_compare(cg, reversed, &cmp));
      CHECK(cmp == MPI_IDENT, "the reversed group's group compares %d", cmp);
      CHECK_MPI(MPI_Group_free(&cg));
      CHECK_MPI(MPI_Comm_free(&c));
    } else {
      CHECK_MPI(MPIX_Icomm_create_group(MPI_COMM_WORLD, reversed, 6, &c, &req));
      CHECK(c == MPI_COMM_NULL, "a non-member got a communicator");
      CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    CHECK_MPI(MPI_Group_free(&reversed));
  }
  CHECK_MPI(MPI_Group_free(&evens));
  CHECK_MPI(MPI_Group_free(&world_group));
}

/* Two creations on the same non-range group started, and waited for, in opposite orders on
 * even and odd processes (paper 002's scenario for nonblocking creation): neither may wait for
 * the other, and the two communicators stay apart. */
static void test_opposite_orders(int wr, int wp) {
  if (wp < 2) return;
  MPI_Group world_group, rev;
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  int triple[1][3] = {{wp - 1, 0, -1}};
  CHECK_MPI(MPI_Group_range_incl(world_group, 1, triple, &rev));
  MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
  MPI_Request ra, rb;
  if (wr % 2 == 0) {
    CHECK_MPI(MPIX_Icomm_create_group(MPI_COMM_WORLD, rev, 20, &a, &ra));
    CHECK_MPI(MPIX_Icomm_create_group(MPI_COMM_WORLD, rev, 21, &b, &rb));
    CHECK_MPI(MPI_Wait(&rb, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&ra, MPI_STATUS_IGNORE));
  } else {
    CHECK_MPI(MPIX_Icomm_create_group(MPI_COMM_WORLD, rev, 21, &b, &rb));
    CHECK_MPI(MPIX_Icomm_create_group(MPI_COMM_WORLD, rev, 20, &a, &ra));
    MPI_Request both[2] = {ra, rb};
    MPI_Status sts[2];
    CHECK_MPI(MPI_Waitall(2, both, sts));
  }
  /* The same tag on both at once: each message arrives on its own communicator. */
  int r = -1;
  CHECK_MPI(MPI_Comm_rank(a, &r));
  CHECK(r == wp - 1 - wr, "rank %d in the reversed group", r);
  int next = (r + 1) % wp, prev = (r + wp - 1) % wp;
  int out_a = 100 + r, out_b = 200 + r, in_a = -1, in_b = -1;
  MPI_Request q[4];
  CHECK_MPI(MPI_Irecv(&in_b, 1, MPI_INT, MPI_ANY_SOURCE, 3, b, &q[0]));
  CHECK_MPI(MPI_Irecv(&in_a, 1, MPI_INT, MPI_ANY_SOURCE, 3, a, &q[1]));
  CHECK_MPI(MPI_Isend(&out_a, 1, MPI_INT, next, 3, a, &q[2]));
  CHECK_MPI(MPI_Isend(&out_b, 1, MPI_INT, next, 3, b, &q[3]));
  MPI_Status sts[4];
  CHECK_MPI(MPI_Waitall(4, q, sts));
  CHECK(in_a == 100 + prev && in_b == 200 + prev, "crossed messages: a %d b %d", in_a, in_b);
  int cmp = MPI_UNEQUAL;
  CHECK_MPI(MPI_Comm_compare(a, b, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "two creations of one group compare %d", cmp);
  /* The real-communicator fallback of a general group: a window on it has the group's
   * members in the group's order, and (Open MPI) a put to the next rank lands there. MPICH
   * 4.0.2 loses this put even on its own MPI_Comm_dup of MPI_COMM_WORLD (tried without the
   * library), so there only the window's group is checked. */
  int slot[2] = {-1, -1};
  MPI_Win win;
  MPI_Group wg, ag;
  if (!shim_win_create(slot, sizeof slot, sizeof(int), a, &win, "a window on a general group")) {
    CHECK_MPI(MPI_Comm_free(&a));
    CHECK_MPI(MPI_Comm_free(&b));
    CHECK_MPI(MPI_Group_free(&rev));
    CHECK_MPI(MPI_Group_free(&world_group));
    return;
  }
  CHECK_MPI(MPI_Win_get_group(win, &wg));
  CHECK_MPI(MPI_Comm_group(a, &ag));
  CHECK_MPI(MPI_Group_compare(wg, ag, &cmp));
  CHECK(cmp == MPI_IDENT, "the window's group compares %d with the general group's", cmp);
  CHECK_MPI(MPI_Group_free(&wg));
  CHECK_MPI(MPI_Group_free(&ag));
#ifdef OPEN_MPI
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK_MPI(MPI_Put(&r, 1, MPI_INT, next, 0, 1, MPI_INT, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK(slot[0] == prev, "window on the general group: the put gave %d, want %d", slot[0], prev);
#endif
  CHECK_MPI(MPI_Win_free(&win));
  CHECK_MPI(MPI_Comm_free(&a));
  CHECK_MPI(MPI_Comm_free(&b));
  CHECK_MPI(MPI_Group_free(&rev));
  CHECK_MPI(MPI_Group_free(&world_group));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  int wr, wp;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &wp);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  test_create_range(wr, wp);
  test_irregular_parent(wr, wp);
  test_errors(wp);
  test_icomm_create_group(wr, wp);
  test_opposite_orders(wr, wp);
  MPI_Barrier(MPI_COMM_WORLD);
  shim_test_end();
  MPI_Finalize();
  if (wr == 0) printf("range_mpix: all checks passed on %d ranks\n", wp);
  return 0;
}
