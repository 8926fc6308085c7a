/* RANGECOMM_MODE=accelerate on a program that only uses the standard API: which communicators
 * become range communicators (MPIX_Comm_is_range, looked up at run time so that the program
 * itself stays unmodified MPI), that they behave as MPI says (ranks, attributes copied by
 * MPI_Comm_dup, inherited error handlers, MPI_Comm_compare, traffic), general groups from
 * split, create and create_group, nonblocking MPI_Comm_idup, and that far more of
 * them can be alive at once than MPICH allows natively (about 2046 per process).
 *
 *   accelerate [N]   N duplicates of MPI_COMM_SELF alive at once (default: the environment's
 *                    SHIM_TEST_SELF_DUPS, else 100000; sanitized builds set 10000), then
 *                    SHIM_TEST_WORLD_COMMS (default N) communicators of every process alive at
 *                    once (dups, splits and create_groups of MPI_COMM_WORLD in turn), each used
 *                    for a message round and an all-reduction; a chain of 3000 creations,
 *                    each from the one before, all alive; and SHIM_TEST_FILES (default 2500)
 *                    files open at once, each on its own duplicate of MPI_COMM_WORLD as HDF5
 *                    opens them (more than MPICH's context ids allow natively, where each file
 *                    costs two: the program's duplicate and MPI's own)
 *
 * Run by run_shim_test.py (linked and preloaded) with RANGECOMM_MODE=accelerate, and with
 * RANGECOMM_MODE=shadow, where MPI's other intracommunicators (here a merge) are replaced too. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

static int (*is_range_fn)(MPI_Comm, int *);
static int shadow; /* RANGECOMM_MODE=shadow: MPI's other intracommunicators are replaced too */

static int is_range(MPI_Comm c) {
  int flag = -1;
  CHECK_MPI(is_range_fn(c, &flag));
  return flag;
}

static int copies; /* calls of the copy callback below */

static int count_copy(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)old, (void)keyval, (void)extra;
  ++copies;
  *(void **)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}

static void sum_check(MPI_Comm c, int expected, const char *what) {
  int one = 1, sum = 0;
  CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
  CHECK(sum == expected, "%s: allreduce gave %d, want %d", what, sum, expected);
}

static void test_dup(int r, int p) {
  int keyval, result, flag, value = 42, *got = NULL;
  MPI_Comm dup;
  MPI_Errhandler eh;
  CHECK_MPI(MPI_Comm_create_keyval(count_copy, MPI_COMM_NULL_DELETE_FN, &keyval, NULL));
  CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, &value));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK(is_range(dup) == 1, "MPI_Comm_dup(MPI_COMM_WORLD) is not a range communicator");
  CHECK_MPI(MPI_Comm_get_attr(dup, keyval, &got, &flag));
  CHECK(flag && got == &value && copies == 1, "attribute not copied (flag %d, copies %d)", flag,
        copies);
  CHECK_MPI(MPI_Comm_get_errhandler(dup, &eh));
  CHECK(eh == MPI_ERRORS_RETURN, "the dup did not inherit MPI_ERRORS_RETURN");
  CHECK_MPI(MPI_Errhandler_free(&eh));
  CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
  CHECK(result == MPI_CONGRUENT, "compare(world, dup) = %d", result);
  sum_check(dup, p, "dup");
  {
    int rank = -1;
    CHECK_MPI(MPI_Comm_rank(dup, &rank));
    CHECK(rank == r, "dup rank %d", rank);
  }
  /* a dup of the dup is another range at another level */
  MPI_Comm again;
  CHECK_MPI(MPI_Comm_dup(dup, &again));
  CHECK(is_range(again) == 1, "dup of a dup is not a range");
  sum_check(again, p, "dup of dup");
  CHECK_MPI(MPI_Comm_free(&again));
  CHECK_MPI(MPI_Comm_free(&dup));
  CHECK_MPI(MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval));
  CHECK_MPI(MPI_Comm_free_keyval(&keyval));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void test_split_create(int r, int p) {
  MPI_Comm parity, reversed, created, single;
  int rank, size;
  /* by parity, keys keep world order: two strided ranges */
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &parity));
  CHECK(is_range(parity) == 1, "an order-keeping split is not a range");
  CHECK_MPI(MPI_Comm_rank(parity, &rank));
  CHECK_MPI(MPI_Comm_size(parity, &size));
  CHECK(rank == r / 2 && size == (p - r % 2 + 1) / 2, "parity split: rank %d size %d", rank, size);
  sum_check(parity, size, "parity split");
  /* keys reverse the order: not a range of the world, a general group of the library */
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, -r, &reversed));
  CHECK(is_range(reversed) == 1, "a reversed split is not a library communicator");
  CHECK_MPI(MPI_Comm_rank(reversed, &rank));
  CHECK(rank == p - 1 - r, "reversed split rank %d", rank);
  sum_check(reversed, p, "reversed split");
  /* colour = rank: single-member communicators */
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, r, 0, &single));
  CHECK(is_range(single) == 1, "a single-member split is not a range");
  sum_check(single, 1, "single");
  /* MPI_COMM_TYPE_SHARED gives the processes of this host, in key order (everyone on one) */
  MPI_Comm node;
  int place = 0, on_host = shim_host_members(MPI_COMM_WORLD, &place);
  CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &node));
  CHECK(is_range(node) == 1, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) is not a range");
  CHECK_MPI(MPI_Comm_rank(node, &rank));
  CHECK(rank == place, "shared split rank %d, want %d", rank, place);
  sum_check(node, on_host, "shared split");
  /* a split type of a library communicator (MPI splits its fallback; the result is replaced),
   * reversed by key */
  MPI_Comm node_of_node;
  CHECK_MPI(MPI_Comm_split_type(node, MPI_COMM_TYPE_SHARED, p - r, MPI_INFO_NULL, &node_of_node));
  CHECK(is_range(node_of_node) == 1, "split_type of a library communicator is MPI's");
  CHECK_MPI(MPI_Comm_rank(node_of_node, &rank));
  CHECK(rank == on_host - 1 - place, "reversed shared split rank %d", rank);
  sum_check(node_of_node, on_host, "split type of a library communicator");
  CHECK_MPI(MPI_Comm_free(&node_of_node));
  CHECK_MPI(MPI_Comm_free(&node));
#ifdef OMPI_COMM_TYPE_NODE
  /* a split type the library does not compute: MPI splits, the result is replaced */
  CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, OMPI_COMM_TYPE_NODE, r, MPI_INFO_NULL, &node));
  CHECK(is_range(node) == 1, "MPI_Comm_split_type(OMPI_COMM_TYPE_NODE) is MPI's");
  sum_check(node, on_host, "node split");
  CHECK_MPI(MPI_Comm_free(&node));
#endif
  /* MPI_Comm_create of the even ranks */
  MPI_Group world_group, evens;
  int triple[1][3] = {{0, p - 1, 2}};
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  CHECK_MPI(MPI_Group_range_incl(world_group, 1, triple, &evens));
  CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, evens, &created));
  CHECK((created != MPI_COMM_NULL) == (r % 2 == 0), "create: membership wrong");
  if (created != MPI_COMM_NULL) {
    CHECK(is_range(created) == 1, "MPI_Comm_create of the even ranks is not a range");
    sum_check(created, (p + 1) / 2, "create");
    CHECK_MPI(MPI_Comm_free(&created));
  }
  CHECK_MPI(MPI_Group_free(&evens));
  CHECK_MPI(MPI_Group_free(&world_group));
  CHECK_MPI(MPI_Comm_free(&single));
  CHECK_MPI(MPI_Comm_free(&reversed));
  CHECK_MPI(MPI_Comm_free(&parity));
}

/* MPI_Comm_create_group (collective over the group only) of a reversed group and twice of the
 * same strided group, alive together; MPI_Comm_create of an irregular group; two MPI_Comm_idup
 * of MPI_COMM_WORLD in flight at once, waited for in opposite orders on even and odd ranks. */
static void test_groups(int r, int p) {
  MPI_Group world_group, rev, evens;
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  int down[1][3] = {{p - 1, 0, -1}}, up[1][3] = {{0, p - 1, 2}};
  CHECK_MPI(MPI_Group_range_incl(world_group, 1, down, &rev));
  CHECK_MPI(MPI_Group_range_incl(world_group, 1, up, &evens));
  MPI_Comm g, e1 = MPI_COMM_NULL, e2 = MPI_COMM_NULL, created;
  int rank = -1, cmp = MPI_UNEQUAL;
  CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, rev, 3, &g));
  CHECK(is_range(g) == 1, "MPI_Comm_create_group of a reversed group is not accelerated");
  CHECK_MPI(MPI_Comm_rank(g, &rank));
  CHECK(rank == p - 1 - r, "reversed group rank %d", rank);
  sum_check(g, p, "create_group reversed");
  if (r % 2 == 0) {
    CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 4, &e1));
    CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 5, &e2));
    CHECK(is_range(e1) == 1 && is_range(e2) == 1, "create_group of the evens not accelerated");
    CHECK_MPI(MPI_Comm_compare(e1, e2, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "two create_group of the evens compare %d", cmp);
    /* the same tag on both copies at once must not cross */
    int n = (p + 1) / 2, me = r / 2, a = 10 + me, b = 20 + me, ia = -1, ib = -1;
    MPI_Request q[4];
    CHECK_MPI(MPI_Irecv(&ib, 1, MPI_INT, MPI_ANY_SOURCE, 0, e2, &q[0]));
    CHECK_MPI(MPI_Irecv(&ia, 1, MPI_INT, MPI_ANY_SOURCE, 0, e1, &q[1]));
    CHECK_MPI(MPI_Isend(&a, 1, MPI_INT, (me + 1) % n, 0, e1, &q[2]));
    CHECK_MPI(MPI_Isend(&b, 1, MPI_INT, (me + 1) % n, 0, e2, &q[3]));
    MPI_Status sts[4];
    CHECK_MPI(MPI_Waitall(4, q, sts));
    int prev = (me + n - 1) % n;
    CHECK(ia == 10 + prev && ib == 20 + prev, "copies crossed: %d %d", ia, ib);
    CHECK_MPI(MPI_Comm_free(&e1));
    CHECK_MPI(MPI_Comm_free(&e2));
  }
  /* MPI_Comm_create of world ranks p-1, 0, 1, ..., p-2 (a rotation): a general group */
  MPI_Group rot;
  int *order = malloc(sizeof(int) * (size_t)p);
  for (int i = 0; i < p; ++i) order[i] = (i + p - 1) % p;
  CHECK_MPI(MPI_Group_incl(world_group, p, order, &rot));
  free(order);
  CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, rot, &created));
  CHECK(is_range(created) == 1, "MPI_Comm_create of a rotation is not accelerated");
  CHECK_MPI(MPI_Comm_rank(created, &rank));
  CHECK(rank == (r + 1) % p, "rotation rank %d", rank);
  sum_check(created, p, "create rotation");
  CHECK_MPI(MPI_Comm_free(&created));
  CHECK_MPI(MPI_Group_free(&rot));
  /* two idups in flight */
  MPI_Comm d1, d2;
  MPI_Request q1, q2;
  CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d1, &q1));
  CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d2, &q2));
  if (r % 2 == 0) {
    CHECK_MPI(MPI_Wait(&q2, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&q1, MPI_STATUS_IGNORE));
  } else {
    CHECK_MPI(MPI_Wait(&q1, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&q2, MPI_STATUS_IGNORE));
  }
  CHECK(is_range(d1) == 1 && is_range(d2) == 1, "MPI_Comm_idup of the world is not accelerated");
  CHECK_MPI(MPI_Comm_compare(d1, MPI_COMM_WORLD, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "idup compares %d with the world", cmp);
  sum_check(d1, p, "idup 1");
  sum_check(d2, p, "idup 2");
  CHECK_MPI(MPI_Comm_free(&d1));
  CHECK_MPI(MPI_Comm_free(&d2));
  CHECK_MPI(MPI_Comm_free(&g));
  CHECK_MPI(MPI_Group_free(&rev));
  CHECK_MPI(MPI_Group_free(&evens));
  CHECK_MPI(MPI_Group_free(&world_group));
}

/* A real communicator whose ranks are not evenly spaced world ranks: the merge of an
 * intercommunicator between the odd and the even processes, odds first. Its dup becomes a
 * general group of the library with the same ranks. */
static void test_irregular_parent(int r, int p) {
  if (p < 3) return;
  MPI_Comm half, inter, merged, dup;
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half));
  CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, r % 2 ? 0 : 1, 9, &inter));
  CHECK_MPI(MPI_Intercomm_merge(inter, r % 2 == 0, &merged));
  int mr = -1, dr = -1, odds = p / 2;
  CHECK_MPI(MPI_Comm_rank(merged, &mr));
  CHECK(mr == (r % 2 ? r / 2 : odds + r / 2), "merged rank %d", mr);
  CHECK(is_range(merged) == shadow, "a merge is %sa library communicator under %s",
        shadow ? "not " : "", shadow ? "shadow" : "accelerate");
  CHECK(is_range(inter) == 0, "an intercommunicator became a library communicator");
  CHECK_MPI(MPI_Comm_dup(merged, &dup));
  CHECK(is_range(dup) == 1, "a dup of an irregular real communicator is not accelerated");
  CHECK_MPI(MPI_Comm_rank(dup, &dr));
  CHECK(dr == mr, "dup rank %d, parent rank %d", dr, mr);
  sum_check(dup, p, "dup of an irregular parent");
  CHECK_MPI(MPI_Comm_free(&dup));
#if MPI_VERSION >= 4
  /* MPI-4's creation from a group (no parent): MPI's, replaced under shadow */
  MPI_Group merged_group;
  MPI_Comm from_group;
  CHECK_MPI(MPI_Comm_group(merged, &merged_group));
  CHECK_MPI(MPI_Comm_create_from_group(merged_group, "rangecomm.accelerate", MPI_INFO_NULL,
                                       MPI_ERRORS_RETURN, &from_group));
  CHECK(is_range(from_group) == shadow, "MPI_Comm_create_from_group: library communicator %d",
        is_range(from_group));
  CHECK_MPI(MPI_Comm_rank(from_group, &dr));
  CHECK(dr == mr, "create_from_group rank %d, group rank %d", dr, mr);
  sum_check(from_group, p, "create_from_group");
  CHECK_MPI(MPI_Comm_free(&from_group));
  CHECK_MPI(MPI_Group_free(&merged_group));
#endif
  CHECK_MPI(MPI_Comm_free(&merged));
  CHECK_MPI(MPI_Comm_free(&inter));
  CHECK_MPI(MPI_Comm_free(&half));
}

/* The library's MPIX calls on two real communicators of the same processes in the same order
 * (two MPI_Cart_create of the world, which the library leaves to MPI), each given its identity
 * by a split (a dup of a communicator with a topology stays MPI's, to keep it): the same range and
 * the same general group made from the two, in opposite orders on even and odd processes, must be
 * two pairs of communicators, not one communicator paired across parents (messages with one tag on
 * all four at once stay apart). */
static void test_mpix_real_parents(int r, int p) {
  int (*create_range)(MPI_Comm, int, int, int, MPI_Comm *);
  int (*icreate_group)(MPI_Comm, MPI_Group, int, MPI_Comm *, MPI_Request *);
  void *f1 = dlsym(RTLD_DEFAULT, "MPIX_Comm_create_range");
  void *f2 = dlsym(RTLD_DEFAULT, "MPIX_Icomm_create_group");
  CHECK(f1 != NULL && f2 != NULL, "the MPIX calls are not found");
  memcpy(&create_range, &f1, sizeof f1);
  memcpy(&icreate_group, &f2, sizeof f2);
  int dims[1] = {p}, periods[1] = {0};
  MPI_Comm parent[2], dup[2], range[2], group[2];
  MPI_Request req[2];
  for (int i = 0; i < 2; ++i) {
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &parent[i]));
    CHECK_MPI(MPI_Comm_split(parent[i], 0, r, &dup[i]));
  }
  MPI_Group world_group, down;
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  int triple[1][3] = {{p - 1, 0, -1}}; /* reversed: a general group once p > 1 */
  CHECK_MPI(MPI_Group_range_incl(world_group, 1, triple, &down));
  for (int k = 0; k < 2; ++k) {
    int i = r % 2 ? 1 - k : k;
    CHECK_MPI(create_range(parent[i], 0, p - 1, 1, &range[i]));
    CHECK_MPI(icreate_group(parent[i], down, 7, &group[i], &req[i]));
  }
  CHECK_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
  MPI_Comm all[4] = {range[0], range[1], group[0], group[1]};
  int in[4] = {-1, -1, -1, -1}, out[4];
  MPI_Request q[8];
  for (int c = 0; c < 4; ++c) {
    int me = -1;
    CHECK_MPI(MPI_Comm_rank(all[c], &me));
    CHECK(me == (c < 2 ? r : p - 1 - r), "communicator %d: rank %d", c, me);
    out[c] = 100 * c + me;
    CHECK_MPI(MPI_Irecv(&in[c], 1, MPI_INT, (me + p - 1) % p, 5, all[c], &q[c]));
  }
  for (int c = 3; c >= 0; --c) {
    int me = c < 2 ? r : p - 1 - r;
    CHECK_MPI(MPI_Isend(&out[c], 1, MPI_INT, (me + 1) % p, 5, all[c], &q[4 + c]));
  }
  CHECK_MPI(MPI_Waitall(8, q, MPI_STATUSES_IGNORE));
  for (int c = 0; c < 4; ++c) {
    int me = c < 2 ? r : p - 1 - r;
    CHECK(in[c] == 100 * c + (me + p - 1) % p,
          "MPIX creations of two parents crossed: "
          "communicator %d received %d",
          c, in[c]);
  }
  for (int i = 0; i < 2; ++i) {
    CHECK_MPI(MPI_Comm_free(&range[i]));
    CHECK_MPI(MPI_Comm_free(&group[i]));
    CHECK_MPI(MPI_Comm_free(&dup[i]));
    CHECK_MPI(MPI_Comm_free(&parent[i]));
  }
  CHECK_MPI(MPI_Group_free(&down));
  CHECK_MPI(MPI_Group_free(&world_group));
}

/* Duplicates of MPI_COMM_SELF, all alive, each used once, then freed. */
static void test_many(int n) {
  MPI_Comm *comms = malloc(sizeof(MPI_Comm) * (size_t)n);
  CHECK(comms != NULL, "out of memory");
  for (int i = 0; i < n; ++i) {
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &comms[i]));
    CHECK(is_range(comms[i]) == 1, "self dup %d is not a range", i);
  }
  for (int i = 0; i < n; i += n / 7 + 1) sum_check(comms[i], 1, "self dup");
  for (int i = 0; i < n; ++i) CHECK_MPI(MPI_Comm_free(&comms[i]));
  free(comms);
}

/* A chain of n creations, each made from the one before and all alive at once: dup, split
 * (one colour, keys reversing the order), create_group and create in turn (MPICH alone refuses
 * the 2047th; an earlier design of the library refused such chains after a few dozen). Each
 * link is checked for its members and order, and used for a ring message and an all-reduction
 * once all exist; then they are freed newest first. */
static void test_chain(int n, int r, int p) {
  MPI_Comm *chain = malloc(sizeof(MPI_Comm) * (size_t)(n + 1));
  CHECK(chain != NULL, "out of memory");
  chain[0] = MPI_COMM_WORLD;
  for (int i = 1; i <= n; ++i) {
    MPI_Comm parent = chain[i - 1];
    int me = -1, size = 0;
    CHECK_MPI(MPI_Comm_rank(parent, &me));
    CHECK_MPI(MPI_Comm_size(parent, &size));
    MPI_Group group;
    switch (i % 4) {
      case 0:
        CHECK_MPI(MPI_Comm_dup(parent, &chain[i]));
        break;
      case 1:
        CHECK_MPI(MPI_Comm_split(parent, 5, size - me, &chain[i]));
        break;
      case 2:
        CHECK_MPI(MPI_Comm_group(parent, &group));
        CHECK_MPI(MPI_Comm_create_group(parent, group, i, &chain[i]));
        CHECK_MPI(MPI_Group_free(&group));
        break;
      default:
        CHECK_MPI(MPI_Comm_group(parent, &group));
        CHECK_MPI(MPI_Comm_create(parent, group, &chain[i]));
        CHECK_MPI(MPI_Group_free(&group));
        break;
    }
    CHECK(is_range(chain[i]) == 1, "link %d of the chain is not the library's", i);
  }
  for (int i = 1; i <= n; i += 1 + n / 50) {
    /* every split reverses the order: rank r of the world is rank r or p-1-r */
    int me = -1, flips = (i + 3) / 4, want = flips % 2 ? p - 1 - r : r, got = -1;
    CHECK_MPI(MPI_Comm_rank(chain[i], &me));
    CHECK(me == want, "link %d: rank %d, want %d", i, me, want);
    CHECK_MPI(MPI_Sendrecv(&i, 1, MPI_INT, (me + 1) % p, 9, &got, 1, MPI_INT, MPI_ANY_SOURCE, 9,
                           chain[i], MPI_STATUS_IGNORE));
    CHECK(got == i, "link %d received %d", i, got);
    sum_check(chain[i], p, "a link of the chain");
  }
  for (int i = n; i >= 1; --i) CHECK_MPI(MPI_Comm_free(&chain[i]));
  free(chain);
}

/* n communicators of all processes alive at once, a third each made by MPI_Comm_dup,
 * MPI_Comm_split (one colour, keys reversing the order) and MPI_Comm_create_group (the world's
 * group); each carries one message around a ring and one all-reduction, then all are freed. */
static void test_many_world(int n, int r, int p) {
  MPI_Comm *comms = malloc(sizeof(MPI_Comm) * (size_t)n);
  CHECK(comms != NULL, "out of memory");
  MPI_Group world_group;
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  for (int i = 0; i < n; ++i) {
    if (i % 3 == 0)
      CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]));
    else if (i % 3 == 1)
      CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, p - r, &comms[i]));
    else
      CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, world_group, i % 1000, &comms[i]));
    CHECK(is_range(comms[i]) == 1, "world communicator %d is not the library's", i);
  }
  CHECK_MPI(MPI_Group_free(&world_group));
  for (int i = 0; i < n; ++i) {
    int me, size, token = i, got = -1;
    CHECK_MPI(MPI_Comm_rank(comms[i], &me));
    CHECK_MPI(MPI_Comm_size(comms[i], &size));
    CHECK(size == p, "communicator %d has %d processes", i, size);
    CHECK_MPI(MPI_Sendrecv(&token, 1, MPI_INT, (me + 1) % p, 3, &got, 1, MPI_INT, MPI_ANY_SOURCE,
                           MPI_ANY_TAG, comms[i], MPI_STATUS_IGNORE));
    CHECK(got == i, "communicator %d received %d", i, got);
    int sum = 0;
    CHECK_MPI(MPI_Allreduce(&i, &sum, 1, MPI_INT, MPI_SUM, comms[i]));
    CHECK(sum == i * p, "communicator %d: allreduce gave %d", i, sum);
  }
  for (int i = 0; i < n; ++i) CHECK_MPI(MPI_Comm_free(&comms[i]));
  free(comms);
}

/* n files open at once in a fresh folder of TMPDIR, each on its own duplicate of
 * MPI_COMM_WORLD that stays alive until the file is closed (as HDF5 keeps its own); the first
 * tenth frees it at once instead (MPI lets a file outlive the communicator it was opened on). Every
 * process writes its rank and the file's number at its own offset with a collective
 * write, and once all are open each file is read back whole and checked, then closed. ROMIO
 * gives each open file a collective buffer of cb_buffer_size bytes (16 MiB by default, which
 * meson's MALLOC_PERTURB_ touches: 40 GB for 2500 files), so the files ask for 64 KiB. */
static void test_many_files(int n, int r, int p) {
  struct rlimit files;
  CHECK(getrlimit(RLIMIT_NOFILE, &files) == 0, "getrlimit: %s", strerror(errno));
  if (files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
    getrlimit(RLIMIT_NOFILE, &files);
  }
  if (files.rlim_cur != RLIM_INFINITY && (rlim_t)n + 64 > files.rlim_cur) {
    n = (int)files.rlim_cur - 64;
    if (r == 0) printf("files: %d at once (the descriptor limit of this machine)\n", n);
  }
  char folder[4096] = {0};
  if (r == 0) {
    const char *tmp = getenv("TMPDIR");
    snprintf(folder, sizeof folder, "%s/rangecomm-files-XXXXXX", tmp != NULL ? tmp : "/tmp");
    CHECK(mkdtemp(folder) != NULL, "mkdtemp %s: %s", folder, strerror(errno));
  }
  CHECK_MPI(MPI_Bcast(folder, sizeof folder, MPI_CHAR, 0, MPI_COMM_WORLD));
  MPI_File *fh = malloc(sizeof(MPI_File) * (size_t)n);
  MPI_Comm *dup = malloc(sizeof(MPI_Comm) * (size_t)n);
  int *back = malloc(sizeof(int) * 2 * (size_t)p);
  CHECK(fh != NULL && dup != NULL && back != NULL, "out of memory");
  char name[4200];
  MPI_Info info;
  CHECK_MPI(MPI_Info_create(&info));
  CHECK_MPI(MPI_Info_set(info, "cb_buffer_size", "65536"));
  for (int i = 0; i < n; ++i) {
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup[i]));
    snprintf(name, sizeof name, "%s/%d", folder, i);
    int rc = MPI_File_open(dup[i], name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh[i]);
    CHECK(rc == MPI_SUCCESS, "MPI_File_open of file %d failed with %d", i, rc);
    if (i < n / 10) CHECK_MPI(MPI_Comm_free(&dup[i]));
    int mine[2] = {r, i};
    MPI_Offset at = (MPI_Offset)sizeof mine * r;
    CHECK(MPI_File_write_at_all(fh[i], at, mine, 2, MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "writing file %d failed", i);
  }
  for (int i = 0; i < n; ++i) {
    CHECK(MPI_File_sync(fh[i]) == MPI_SUCCESS, "MPI_File_sync of file %d failed", i);
    CHECK(MPI_File_read_at_all(fh[i], 0, back, 2 * p, MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "reading file %d failed", i);
    for (int q = 0; q < p; ++q)
      CHECK(back[2 * q] == q && back[2 * q + 1] == i, "file %d holds %d %d at process %d's place",
            i, back[2 * q], back[2 * q + 1], q);
    MPI_Group group;
    int size = -1;
    CHECK_MPI(MPI_File_get_group(fh[i], &group));
    CHECK_MPI(MPI_Group_size(group, &size));
    CHECK(size == p, "file %d: its group has %d processes", i, size);
    CHECK_MPI(MPI_Group_free(&group));
    CHECK(MPI_File_close(&fh[i]) == MPI_SUCCESS, "closing file %d failed", i);
    if (i >= n / 10) CHECK_MPI(MPI_Comm_free(&dup[i]));
  }
  CHECK_MPI(MPI_Info_free(&info));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  if (r == 0) {
    for (int i = 0; i < n; ++i) {
      snprintf(name, sizeof name, "%s/%d", folder, i);
      unlink(name);
    }
    rmdir(folder);
  }
  free(back);
  free(dup);
  free(fh);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  const char *dups = argc > 1 ? argv[1] : getenv("SHIM_TEST_SELF_DUPS");
  int r, p, n = dups != NULL ? atoi(dups) : 100000;
  CHECK(n > 0, "the number of MPI_COMM_SELF duplicates must be positive");
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const char *mode = getenv("RANGECOMM_MODE");
  CHECK(mode != NULL && (strcmp(mode, "accelerate") == 0 || strcmp(mode, "shadow") == 0),
        "run this with RANGECOMM_MODE=accelerate or shadow");
  shadow = strcmp(mode, "shadow") == 0;
  void *fn = dlsym(RTLD_DEFAULT, "MPIX_Comm_is_range");
  CHECK(fn != NULL, "MPIX_Comm_is_range not found: librangecomm.so is not loaded");
  memcpy(&is_range_fn, &fn, sizeof fn);
  test_dup(r, p);
  test_split_create(r, p);
  test_groups(r, p);
  test_irregular_parent(r, p);
  test_mpix_real_parents(r, p);
  test_many(n);
  test_chain(3000, r, p);
  const char *world = getenv("SHIM_TEST_WORLD_COMMS");
  int n_world = world != NULL ? atoi(world) : n;
  CHECK(n_world > 0, "SHIM_TEST_WORLD_COMMS must be positive");
  test_many_world(n_world, r, p);
  const char *files = getenv("SHIM_TEST_FILES");
  int n_files = files != NULL ? atoi(files) : 2500;
  CHECK(n_files > 0, "SHIM_TEST_FILES must be positive");
  test_many_files(n_files, r, p);
  MPI_Barrier(MPI_COMM_WORLD);
  shim_test_end();
  MPI_Finalize();
  if (r == 0) printf("%s: all checks passed on %d ranks, %d communicators alive\n", mode, p, n);
  return 0;
}
