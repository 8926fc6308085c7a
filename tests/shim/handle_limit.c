/* The shim's handle tables running out, under RANGECOMM_MODE=accelerate or shadow, with the
 * tables forced small (RANGECOMM_HANDLE_LIMIT=L, 32 <= L < 990): an unmodified program keeps making
 * communicators and every one of them must work.
 *
 * - Creations that exchange data anyway (a split, a split type, the first dup or create of a
 *   communicator MPI made) tell every member whether some member's table is nearly full (fewer
 *   than L/16 handles free); then all of them leave the creation to MPI: L + L/2 splits of the
 *   world give exactly L - L/16 + 1 library communicators and MPI's after that, with no error,
 *   and so do the dups in a chain of dups of one of MPI's, a create of one of MPI's, a split of
 *   a library communicator and a split by type.
 * - A creation without a message (a dup or create_group of the world, a dup of a library
 *   communicator) cannot learn its peers' state, so it uses the table to its last handle and
 *   then fails with MPI_ERR_INTERN on the parent's error handler; every communicator made
 *   before still works, and a freed handle is taken again at once.
 * - Requests: L nonblocking receives fill the request table; the next one fails with
 *   MPI_ERR_INTERN on its communicator, while blocking calls (which take no handle) go on working;
 *   once they complete, new requests work again.
 * Each communicator is checked with an all-reduction and a ring of point-to-point messages
 * against the members its creation must give. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

static int (*is_range_fn)(MPI_Comm, int *);
static int world_rank, world_size;

static int is_range(MPI_Comm c) {
  int flag = -1;
  CHECK_MPI(is_range_fn(c, &flag));
  return flag;
}

/* c must have the world ranks members[0..n) in this order, this process among them. */
static void check_comm(MPI_Comm c, const int *members, int n, const char *what, int index) {
  int size = -1, me = -1, expect_me = -1, sum = 0, want_sum = 0;
  for (int i = 0; i < n; ++i) {
    want_sum += members[i];
    if (members[i] == world_rank) expect_me = i;
  }
  CHECK(expect_me >= 0, "%s %d: this process is not a member", what, index);
  CHECK_MPI(MPI_Comm_size(c, &size));
  CHECK_MPI(MPI_Comm_rank(c, &me));
  CHECK(size == n && me == expect_me, "%s %d: size %d rank %d, want %d and %d", what, index, size,
        me, n, expect_me);
  CHECK_MPI(MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, c));
  CHECK(sum == want_sum, "%s %d: all-reduction gave %d, want %d", what, index, sum, want_sum);
  int got = -1, next = (me + 1) % n, prev = (me + n - 1) % n;
  MPI_Status st;
  CHECK_MPI(MPI_Sendrecv(&world_rank, 1, MPI_INT, next, index % 1000, &got, 1, MPI_INT, prev,
                         index % 1000, c, &st));
  CHECK(got == members[prev] && st.MPI_SOURCE == prev,
        "%s %d: received %d from %d, want %d from %d", what, index, got, st.MPI_SOURCE,
        members[prev], prev);
}

/* The world ranks with the parity of `parity`, highest first (a split by parity, key -rank). */
static int odd_or_even(int parity, int *members) {
  int n = 0;
  for (int q = world_size - 1; q >= 0; --q)
    if (q % 2 == parity) members[n++] = q;
  return n;
}

static int error_class(int code) {
  int cls = -1;
  CHECK_MPI(MPI_Error_class(code, &cls));
  return cls;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const char *limit_text = getenv("RANGECOMM_HANDLE_LIMIT");
  const int limit = limit_text != NULL ? atoi(limit_text) : 0;
  CHECK(limit >= 32 && limit < 990, "run this with RANGECOMM_HANDLE_LIMIT of 32..989 (not %s)",
        limit_text != NULL ? limit_text : "set");
  const int reserve = limit / 16;
  void *fn = dlsym(RTLD_DEFAULT, "MPIX_Comm_is_range");
  CHECK(fn != NULL, "MPIX_Comm_is_range not found: librangecomm.so is not loaded");
  memcpy(&is_range_fn, &fn, sizeof fn);
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

  const int n_split = limit + limit / 2, chain = limit / 2;
  MPI_Comm *comms = malloc(sizeof(MPI_Comm) * (size_t)(n_split + chain + 3 * limit));
  int *members = malloc(sizeof(int) * (size_t)world_size);
  int *whose = malloc(sizeof(int) * (size_t)(n_split + chain + 3 * limit)); /* parity, or -1: all */
  CHECK(comms != NULL && members != NULL && whose != NULL, "out of memory");
  int n = 0, library = 0;

  /* Splits of the world by parity, in reverse order: the library's until the table is nearly
   * full at the processes (all alike here), MPI's after that. */
  for (int i = 0; i < n_split; ++i) {
    whose[n] = world_rank % 2; /* colour (rank + i) % 2: my group is my parity's */
    CHECK_MPI(
        MPI_Comm_split(MPI_COMM_WORLD, (world_rank + i) % 2, world_size - world_rank, &comms[n]));
    library += is_range(comms[n]) == 1;
    CHECK(i < limit - reserve + 1 ? is_range(comms[n]) == 1 : is_range(comms[n]) == 0,
          "split %d: is_range %d (the table holds %d, %d kept free)", i, is_range(comms[n]), limit,
          reserve);
    ++n;
  }
  CHECK(library == limit - reserve + 1, "%d splits were the library's, want %d", library,
        limit - reserve + 1);
  const MPI_Comm first_library = comms[0], last_mpi = comms[n - 1], other_mpi = comms[n - 2];

  /* A chain of dups, each of the one before, from one of MPI's splits: each is the first
   * creation from an MPI communicator, whose agreement carries the tables' state. */
  for (int i = 0; i < chain; ++i) {
    whose[n] = world_rank % 2;
    CHECK_MPI(MPI_Comm_dup(i == 0 ? last_mpi : comms[n - 1], &comms[n]));
    CHECK(is_range(comms[n]) == 0, "dup %d of the chain is the library's", i);
    ++n;
  }
  /* A create of another of MPI's splits (all its members), a split of a library communicator
   * and a split by type of the world: MPI's too. */
  MPI_Group group;
  CHECK_MPI(MPI_Comm_group(other_mpi, &group));
  whose[n] = world_rank % 2;
  CHECK_MPI(MPI_Comm_create(other_mpi, group, &comms[n]));
  CHECK(is_range(comms[n++]) == 0, "create of an MPI communicator is the library's");
  CHECK_MPI(MPI_Group_free(&group));
  whose[n] = world_rank % 2;
  CHECK_MPI(MPI_Comm_split(first_library, 0, 0, &comms[n]));
  CHECK(is_range(comms[n++]) == 0, "split of a library communicator is the library's");
  whose[n] = -1;
  CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &comms[n]));
  CHECK(is_range(comms[n++]) == 0, "split by type is the library's");
  note("%d library communicators, %d of MPI", library, n - library);

  /* Creations without a message take the last free handles, then fail as MPI fails. */
  int extra = 0, rc = MPI_SUCCESS;
  while (extra < 2 * reserve + 2) {
    MPI_Comm c = MPI_COMM_NULL;
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &c);
    if (rc != MPI_SUCCESS) break;
    CHECK(is_range(c) == 1, "dup of the world with a free handle is MPI's");
    whose[n] = -1;
    comms[n++] = c;
    ++extra;
  }
  CHECK(extra == reserve - 1 && error_class(rc) == MPI_ERR_INTERN,
        "dups of the world: %d made, then class %d; want %d, then MPI_ERR_INTERN", extra,
        rc == MPI_SUCCESS ? 0 : error_class(rc), reserve - 1);
  MPI_Group world_group;
  MPI_Comm none = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  rc = MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 5, &none);
  CHECK(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_INTERN,
        "create_group of the world with a full table: class %d", error_class(rc));
  CHECK_MPI(MPI_Comm_set_errhandler(first_library, MPI_ERRORS_RETURN));
  rc = MPI_Comm_dup(first_library, &none);
  CHECK(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_INTERN,
        "dup of a library communicator with a full table: class %d", error_class(rc));

  /* Every communicator still works. */
  for (int i = 0; i < n; ++i) {
    int m = whose[i] < 0 ? world_size : odd_or_even(whose[i], members);
    if (whose[i] < 0)
      for (int q = 0; q < world_size; ++q) members[q] = q;
    check_comm(comms[i], members, m, "communicator", i);
  }

  /* A freed handle is taken again at once (the quarantine gives way when the table is full). */
  CHECK_MPI(MPI_Comm_free(&comms[1]));
  CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 6, &comms[1]));
  CHECK(is_range(comms[1]) == 1, "create_group after a free is MPI's");
  whose[1] = -1;
  for (int q = 0; q < world_size; ++q) members[q] = q;
  check_comm(comms[1], members, world_size, "create_group after a free", 1);
  CHECK_MPI(MPI_Group_free(&world_group));

  /* Requests: the library communicator comms[0] takes `limit` receives from itself. */
  MPI_Comm lib = first_library;
  MPI_Request *requests = malloc(sizeof(MPI_Request) * (size_t)(limit + 1));
  int *values = malloc(sizeof(int) * (size_t)(limit + 1));
  CHECK(requests != NULL && values != NULL, "out of memory");
  int me = -1;
  CHECK_MPI(MPI_Comm_rank(lib, &me));
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < limit; ++i) {
      values[i] = -1;
      CHECK_MPI(MPI_Irecv(&values[i], 1, MPI_INT, me, i, lib, &requests[i]));
    }
    MPI_Request more = MPI_REQUEST_NULL;
    rc = MPI_Irecv(&values[limit], 1, MPI_INT, me, limit, lib, &more);
    CHECK(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_INTERN,
          "receive %d with a full request table: class %d", limit, error_class(rc));
    /* Blocking calls take no handle: they work meanwhile, on this communicator too. */
    check_comm(lib, members, odd_or_even(world_rank % 2, members), "with a full request table",
               limit + 1 + round); /* its tag is none of the receives' */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = limit - 1; i >= 0; --i) {
      int v = 1000 * round + i;
      CHECK_MPI(MPI_Send(&v, 1, MPI_INT, me, i, lib));
    }
    CHECK_MPI(MPI_Waitall(limit, requests, MPI_STATUSES_IGNORE));
    for (int i = 0; i < limit; ++i)
      CHECK(values[i] == 1000 * round + i, "round %d, receive %d got %d", round, i, values[i]);
  }
  free(requests);
  free(values);

  int made = 0; /* the library's communicators: the table is full again */
  for (int i = 0; i < n; ++i) made += is_range(comms[i]) == 1;
  CHECK(made == limit, "the library holds %d communicators, want %d", made, limit);
  for (int i = 0; i < n; ++i) CHECK_MPI(MPI_Comm_free(&comms[i]));
  free(comms);
  free(members);
  free(whose);
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  shim_test_end();
  MPI_Finalize();
  if (world_rank == 0)
    printf("handle limit %d: %d library communicators, %d of MPI, all used\n", limit, made,
           n - made);
  return 0;
}
