/* Communicator management on range communicators through the standard API: compare, group,
 * names, info, attributes (callbacks receive the fake handle; MPI_Comm_dup copies), error
 * handlers (user handlers get the fake handle), dup/idup/split/create/create_group (range
 * results stay ranges, other groups become general library communicators), c2f/f2c, and freed
 * handles. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

static int wr, wp;

static int is_range(MPI_Comm c) {
  int flag = -1;
  CHECK_MPI(MPIX_Comm_is_range(c, &flag));
  return flag;
}

static int error_class(int code) {
  int cls = MPI_ERR_OTHER;
  MPI_Error_class(code, &cls);
  return cls;
}

/* World ranks of c's members, in c's order. */
static void world_ranks(MPI_Comm c, int *out, int *n) {
  MPI_Group g, world;
  CHECK_MPI(MPI_Comm_group(c, &g));
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
  CHECK_MPI(MPI_Group_size(g, n));
  int in[64];
  for (int i = 0; i < *n; ++i) in[i] = i;
  CHECK_MPI(MPI_Group_translate_ranks(g, *n, in, world, out));
  CHECK_MPI(MPI_Group_free(&g));
  CHECK_MPI(MPI_Group_free(&world));
}

static void compare_and_group(MPI_Comm all, MPI_Comm evens) {
  int result = -1, n = 0, ranks[64];
  CHECK_MPI(MPI_Comm_compare(all, all, &result));
  CHECK(result == MPI_IDENT, "compare(range, itself) = %d", result);
  CHECK_MPI(MPI_Comm_compare(all, MPI_COMM_WORLD, &result));
  CHECK(result == MPI_CONGRUENT, "compare(0..p-1, MPI_COMM_WORLD) = %d", result);
  CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, all, &result));
  CHECK(result == MPI_CONGRUENT, "compare(MPI_COMM_WORLD, 0..p-1) = %d", result);
  if (wp > 1) {
    MPI_Comm reversed;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, wp - wr, &reversed));
    CHECK_MPI(MPI_Comm_compare(all, reversed, &result));
    CHECK(result == MPI_SIMILAR, "compare(0..p-1, reversed world) = %d", result);
    CHECK_MPI(MPI_Comm_free(&reversed));
  }
  if (evens != MPI_COMM_NULL && wp > 1) {
    CHECK_MPI(MPI_Comm_compare(all, evens, &result));
    CHECK(result == MPI_UNEQUAL, "compare(0..p-1, evens) = %d", result);
  }
  world_ranks(all, ranks, &n);
  CHECK(n == wp, "group size %d", n);
  for (int i = 0; i < n; ++i) CHECK(ranks[i] == i, "group member %d is world rank %d", i, ranks[i]);
  if (evens != MPI_COMM_NULL) {
    world_ranks(evens, ranks, &n);
    CHECK(n == (wp + 1) / 2, "evens group size %d", n);
    for (int i = 0; i < n; ++i) CHECK(ranks[i] == 2 * i, "evens member %d is %d", i, ranks[i]);
  }
  int inter = -1;
  CHECK_MPI(MPI_Comm_test_inter(all, &inter));
  CHECK(inter == 0, "MPI_Comm_test_inter = %d", inter);
}

static void names_and_info(MPI_Comm c) {
  char name[MPI_MAX_OBJECT_NAME], value[64];
  int len = -1, flag = 0;
  CHECK_MPI(MPI_Comm_get_name(c, name, &len));
  CHECK(len == 0 && name[0] == '\0', "a new communicator is named '%s'", name);
  CHECK_MPI(MPI_Comm_set_name(c, "my range"));
  CHECK_MPI(MPI_Comm_get_name(c, name, &len));
  CHECK(len == 8 && strcmp(name, "my range") == 0, "name '%s' (%d)", name, len);
  MPI_Info info, got;
  CHECK_MPI(MPI_Info_create(&info));
  /* As MPI does: a hint it does not know is ignored, one it knows is kept (both MPIs know
   * mpi_assert_allow_overtaking; the library does not act on it, which MPI allows). */
  CHECK_MPI(MPI_Info_set(info, "rangecomm_test_hint", "yes"));
  CHECK_MPI(MPI_Info_set(info, "mpi_assert_allow_overtaking", "true"));
  CHECK_MPI(MPI_Comm_set_info(c, info));
  CHECK_MPI(MPI_Info_free(&info));
  CHECK_MPI(MPI_Comm_get_info(c, &got));
  CHECK_MPI(MPI_Info_get(got, "rangecomm_test_hint", 63, value, &flag));
  CHECK(!flag, "the unknown hint came back as '%s'", value);
  CHECK_MPI(MPI_Info_get(got, "mpi_assert_allow_overtaking", 63, value, &flag));
  CHECK(flag && strcmp(value, "true") == 0, "the known hint came back as %d '%s'", flag,
        flag ? value : "");
  CHECK_MPI(MPI_Info_free(&got));
}

/* What the attribute callbacks saw. */
static MPI_Comm copied_from = MPI_COMM_NULL, deleted_on[8];
static long deleted_value[8];
static int deletions = 0;

static int copy_plus_one(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out,
                         int *flag) {
  (void)keyval;
  CHECK(extra == (void *)&copied_from, "copy callback: extra_state %p", extra);
  copied_from = oldcomm;
  *(void **)out = (void *)((long)in + 1);
  *flag = 1;
  return MPI_SUCCESS;
}

static int record_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)keyval, (void)extra;
  if (deletions < 8) deleted_on[deletions] = comm, deleted_value[deletions] = (long)value;
  ++deletions;
  return MPI_SUCCESS;
}

static void attributes(MPI_Comm c) {
  int keyval, flag = 0;
  void *got = NULL;
  CHECK_MPI(MPI_Comm_create_keyval(copy_plus_one, record_delete, &keyval, &copied_from));
  CHECK_MPI(MPI_Comm_set_attr(c, keyval, (void *)100L));
  CHECK_MPI(MPI_Comm_get_attr(c, keyval, &got, &flag));
  CHECK(flag && got == (void *)100L, "attribute %d %p", flag, got);
  CHECK_MPI(MPI_Comm_set_attr(c, keyval, (void *)200L)); /* replaces: deletes 100 first */
  CHECK(deletions == 1 && deleted_on[0] == c && deleted_value[0] == 100,
        "replacing: %d deletions, first on the fake handle: %d, value %ld", deletions,
        deleted_on[0] == c, deleted_value[0]);
  MPI_Comm copy;
  CHECK_MPI(MPI_Comm_dup(c, &copy));
  CHECK(copied_from == c, "the copy callback did not get the fake handle");
  CHECK(is_range(copy), "a dup of a range is not a range");
  CHECK_MPI(MPI_Comm_get_attr(copy, keyval, &got, &flag));
  CHECK(flag && got == (void *)201L, "the dup's attribute: %d %p", flag, got);
  CHECK_MPI(MPI_Comm_free_keyval(&keyval)); /* still in use: MPI keeps it until the frees */
  CHECK(keyval == MPI_KEYVAL_INVALID, "MPI_Comm_free_keyval did not reset the keyval");
  MPI_Comm dead = copy;
  CHECK_MPI(MPI_Comm_free(&copy));
  CHECK(copy == MPI_COMM_NULL, "MPI_Comm_free did not null the handle");
  CHECK(deletions == 2 && deleted_on[1] == dead && deleted_value[1] == 201,
        "freeing the dup: %d deletions, handle match %d, value %ld", deletions,
        deleted_on[1] == dead, deleted_value[1]);
  int cls = error_class(MPI_Comm_rank(dead, &flag));
  CHECK(cls == MPI_ERR_COMM, "MPI_Comm_rank on a freed range: class %d", cls);
  MPI_Comm_get_attr(c, MPI_TAG_UB, &got, &flag);
  CHECK(flag == 1, "MPI_TAG_UB missing on a range");
}

/* What the user error handler saw. */
static MPI_Comm handler_comm = MPI_COMM_NULL;
static int handler_code = 0, handler_calls = 0;

static void record_error(MPI_Comm *comm, int *code, ...) {
  handler_comm = *comm;
  handler_code = *code;
  ++handler_calls;
}

static void error_handlers(MPI_Comm c) {
  MPI_Errhandler eh, got;
  CHECK_MPI(MPI_Comm_create_errhandler(record_error, &eh));
  CHECK_MPI(MPI_Comm_set_errhandler(c, eh));
  CHECK_MPI(MPI_Errhandler_free(&eh)); /* the communicator keeps it */
  int x = 0, size = 0;
  CHECK_MPI(MPI_Comm_size(c, &size));
  int rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, c);
  CHECK(handler_calls == 1, "the user handler ran %d times", handler_calls);
  CHECK(handler_comm == c, "the user handler did not get the fake handle");
  CHECK(handler_code == rc && error_class(rc) == MPI_ERR_RANK, "handler code %d, returned %d",
        handler_code, rc);
  CHECK_MPI(MPI_Comm_call_errhandler(c, MPI_ERR_OTHER));
  CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "MPI_Comm_call_errhandler");
  /* A range made from c inherits its handler. */
  MPI_Comm child;
  CHECK_MPI(MPIX_Comm_create_range(c, 0, 0, 1, &child));
  if (child != MPI_COMM_NULL) {
    MPI_Send(&x, -1, MPI_INT, 0, 0, child);
    CHECK(handler_calls == 3 && handler_comm == child, "inherited handler: %d calls",
          handler_calls);
    CHECK_MPI(MPI_Comm_free(&child));
  } else {
    ++handler_calls; /* the count the members reach */
  }
  CHECK_MPI(MPI_Comm_get_errhandler(c, &got));
  CHECK_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Errhandler_free(&got));
  rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, c);
  CHECK(error_class(rc) == MPI_ERR_RANK && handler_calls == 3, "MPI_ERRORS_RETURN: class %d",
        error_class(rc));
}

/* A range made from MPI_COMM_WORLD starts with the world's error handler of the moment, through
 * every change of it (the library caches the world's handler between changes), whether the
 * change is made through MPI_ or PMPI_Comm_set_errhandler. Leaves MPI_ERRORS_RETURN set. */
static void expect_world_handler(MPI_Errhandler want, const char *what) {
  MPI_Comm r;
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp - 1, 1, &r));
  CHECK_MPI(MPI_Comm_get_errhandler(r, &eh));
  CHECK(eh == want, "a range made after %s has another error handler", what);
  CHECK_MPI(MPI_Errhandler_free(&eh));
  CHECK_MPI(MPI_Comm_free(&r));
}

static void world_handler_changes(void) {
  expect_world_handler(MPI_ERRORS_RETURN, "setting MPI_ERRORS_RETURN");
  expect_world_handler(MPI_ERRORS_RETURN, "setting MPI_ERRORS_RETURN (again)");
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  expect_world_handler(MPI_ERRORS_ARE_FATAL, "setting MPI_ERRORS_ARE_FATAL");
  CHECK_MPI(PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  expect_world_handler(MPI_ERRORS_RETURN, "PMPI_Comm_set_errhandler(MPI_ERRORS_RETURN)");
  MPI_Errhandler user;
  CHECK_MPI(MPI_Comm_create_errhandler(record_error, &user));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, user));
  expect_world_handler(user, "setting a user handler");
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Errhandler_free(&user));
  expect_world_handler(MPI_ERRORS_RETURN, "going back to MPI_ERRORS_RETURN");
}

/* Two live dups of one range do not see each other's messages. */
static void dups_are_isolated(MPI_Comm c) {
  MPI_Comm d1, d2, d3;
  MPI_Request req;
  CHECK_MPI(MPI_Comm_dup(c, &d1));
  CHECK_MPI(MPI_Comm_dup(c, &d2));
  CHECK_MPI(MPI_Comm_idup(c, &d3, &req));
  CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
  int r, p, result = -1;
  CHECK_MPI(MPI_Comm_rank(d3, &r));
  CHECK_MPI(MPI_Comm_size(d3, &p));
  CHECK(is_range(d1) && is_range(d2) && is_range(d3), "dups are not ranges");
  CHECK_MPI(MPI_Comm_compare(d1, d2, &result));
  CHECK(result == MPI_CONGRUENT, "compare(dup, dup) = %d", result);
  int right = (r + 1) % p, left = (r + p - 1) % p, a = 1, b = 2, c3 = 3, in[3];
  CHECK_MPI(MPI_Send(&a, 1, MPI_INT, right, 0, d1));
  CHECK_MPI(MPI_Send(&b, 1, MPI_INT, right, 0, d2));
  CHECK_MPI(MPI_Send(&c3, 1, MPI_INT, right, 0, d3));
  CHECK_MPI(MPI_Recv(&in[2], 1, MPI_INT, left, 0, d3, MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Recv(&in[1], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d2, MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Recv(&in[0], 1, MPI_INT, left, 0, d1, MPI_STATUS_IGNORE));
  CHECK(in[0] == 1 && in[1] == 2 && in[2] == 3, "dups crossed: %d %d %d", in[0], in[1], in[2]);
  /* idups of two different communicators with the same members, both in flight, started in
   * opposite orders on even and odd ranks (MPI orders collectives per communicator only) */
  MPI_Comm e1 = MPI_COMM_NULL, e2 = MPI_COMM_NULL;
  MPI_Request two[2];
  if (r % 2 == 0) {
    CHECK_MPI(MPI_Comm_idup(d1, &e1, &two[0]));
    CHECK_MPI(MPI_Comm_idup(d2, &e2, &two[1]));
  } else {
    CHECK_MPI(MPI_Comm_idup(d2, &e2, &two[1]));
    CHECK_MPI(MPI_Comm_idup(d1, &e1, &two[0]));
  }
  MPI_Status two_st[2]; /* not MPI_STATUSES_IGNORE: gcc 12 misreads MPICH's as an empty array */
  CHECK_MPI(MPI_Waitall(2, two, two_st));
  CHECK(is_range(e1) && is_range(e2), "idups of two dups are not ranges");
  CHECK_MPI(MPI_Send(&a, 1, MPI_INT, right, 5, e1));
  CHECK_MPI(MPI_Send(&b, 1, MPI_INT, right, 5, e2));
  CHECK_MPI(MPI_Recv(&in[1], 1, MPI_INT, MPI_ANY_SOURCE, 5, e2, MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Recv(&in[0], 1, MPI_INT, MPI_ANY_SOURCE, 5, e1, MPI_STATUS_IGNORE));
  CHECK(in[0] == 1 && in[1] == 2, "idups crossed: %d %d", in[0], in[1]);
  CHECK_MPI(MPI_Comm_free(&e1));
  CHECK_MPI(MPI_Comm_free(&e2));
  CHECK_MPI(MPI_Comm_free(&d1));
  CHECK_MPI(MPI_Comm_free(&d2));
  CHECK_MPI(MPI_Comm_free(&d3));
}

/* The members, size and an Allreduce of world ranks over a communicator. */
static void check_members(MPI_Comm c, int expect_range, int size, int sum, const char *what) {
  int p = -1, total = -1;
  CHECK(c != MPI_COMM_NULL, "%s: MPI_COMM_NULL", what);
  CHECK(is_range(c) == expect_range, "%s: MPIX_Comm_is_range %d", what, is_range(c));
  CHECK_MPI(MPI_Comm_size(c, &p));
  CHECK(p == size, "%s: size %d, expected %d", what, p, size);
  CHECK_MPI(MPI_Allreduce(&wr, &total, 1, MPI_INT, MPI_SUM, c));
  CHECK(total == sum, "%s: sum of world ranks %d, expected %d", what, total, sum);
}

static void split_create(MPI_Comm all) {
  MPI_Comm half, parity, created, grouped;
  int h = wp / 2, lower = wr < h;
  /* Halves keep rank order: ranges. */
  CHECK_MPI(MPI_Comm_split(all, lower, wr, &half));
  int hs = lower ? h : wp - h, hsum = lower ? h * (h - 1) / 2 : (wp - 1) * wp / 2 - h * (h - 1) / 2;
  check_members(half, 1, hs, hsum, "split into halves");
  /* Parity with reversed keys: not ranges, so general groups (still library communicators). */
  CHECK_MPI(MPI_Comm_split(all, wr % 2, -wr, &parity));
  int ps = 0, psum = 0;
  for (int k = wr % 2; k < wp; k += 2) ++ps, psum += k;
  check_members(parity, 1, ps, psum, "split by parity, reversed");
  int pr = -1;
  CHECK_MPI(MPI_Comm_rank(parity, &pr));
  CHECK(pr == ps - 1 - wr / 2, "reversed split: rank %d", pr);
  /* MPI_Comm_create with a strided group: a range; members only. */
  MPI_Group world_group, g;
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  int triple[1][3] = {{wp - 1, 0, -2}}; /* descending: not a range unless one member */
  int up[1][3] = {{0, wp - 1, 2}};
  CHECK_MPI(MPI_Group_range_incl(world_group, 1, up, &g));
  CHECK_MPI(MPI_Comm_create(all, g, &created));
  int es = (wp + 1) / 2, esum = 0;
  for (int k = 0; k < wp; k += 2) esum += k;
  if (wr % 2 == 0)
    check_members(created, 1, es, esum, "MPI_Comm_create of the evens");
  else
    CHECK(created == MPI_COMM_NULL, "a non-member got a communicator");
  /* The same range made locally again while `created` lives would clash (docs/tag-layout.md):
   * MPI_Comm_create_group of a range makes it one level down, as MPIX_Comm_create_range. */
  if (created != MPI_COMM_NULL) CHECK_MPI(MPI_Comm_free(&created));
  if (wr % 2 == 0) {
    CHECK_MPI(MPI_Comm_create_group(all, g, 7, &grouped));
    check_members(grouped, 1, es, esum, "MPI_Comm_create_group of the evens");
    CHECK_MPI(MPI_Comm_free(&grouped));
  }
  CHECK_MPI(MPI_Group_free(&g));
  CHECK_MPI(MPI_Group_range_incl(world_group, 1, triple, &g));
  int ds = 0, dsum = 0;
  for (int k = wp - 1; k >= 0; k -= 2) ++ds, dsum += k;
  int in_desc = (wp - 1 - wr) % 2 == 0;
  if (in_desc) {
    CHECK_MPI(MPI_Comm_create_group(all, g, 8, &grouped));
    check_members(grouped, 1, ds, dsum, "MPI_Comm_create_group, descending");
    CHECK_MPI(MPI_Comm_free(&grouped));
  }
  MPI_Comm desc;
  CHECK_MPI(MPI_Comm_create(all, g, &desc));
  if (in_desc) {
    check_members(desc, 1, ds, dsum, "MPI_Comm_create, descending");
    CHECK_MPI(MPI_Comm_free(&desc));
  }
  CHECK_MPI(MPI_Group_free(&g));
  CHECK_MPI(MPI_Group_free(&world_group));
  CHECK_MPI(MPI_Comm_free(&half));
  CHECK_MPI(MPI_Comm_free(&parity));
}

static void fortran_handles(MPI_Comm c) {
  MPI_Fint f = MPI_Comm_c2f(c);
  CHECK(MPI_Comm_f2c(f) == c, "MPI_Comm_f2c(MPI_Comm_c2f(range)) is another handle");
  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "world round trip");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &wp);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  world_handler_changes();
  MPI_Comm all, evens;
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp - 1, 1, &all));
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp - 1, 2, &evens));
  compare_and_group(all, evens);
  names_and_info(all);
  attributes(all);
  dups_are_isolated(all);
  split_create(all);
  fortran_handles(all);
  error_handlers(all);
  if (evens != MPI_COMM_NULL) CHECK_MPI(MPI_Comm_free(&evens));
  CHECK_MPI(MPI_Comm_free(&all));
  MPI_Barrier(MPI_COMM_WORLD);
  shim_test_end();
  MPI_Finalize();
  if (wr == 0) printf("range_comm: all checks passed on %d ranks\n", wp);
  return 0;
}
