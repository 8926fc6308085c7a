/* creation_messages: the MPI messages an unmodified program's communicator creations cost under
 * RANGECOMM_MODE=accelerate or shadow, counted where librangecomm.so calls MPI (count_mpi.c,
 * preloaded after it). From MPI_COMM_WORLD, and from a copy of one:
 *   MPI_Comm_dup, MPI_Comm_dup_with_info, MPI_Comm_idup, MPI_Comm_create_group: no MPI
 *   creation, and the messages of one library barrier over the new communicator, which keeps
 *   MPI's order of messages around the call (shim/src/accelerate/accelerate.cpp, keep_order);
 *   MPI_Comm_create: the same barrier over the parent (MPI's on the world);
 *   MPI_Comm_split: one exchange of colours and keys (an MPI_Allgather on a real parent, the
 *   library's all-gather on a library one), no other message.
 * From a real communicator other than the world (MPI_COMM_SELF here) the first creation agrees
 * on its identity in one collective; the next ones cost nothing either. Each result is used
 * (an all-reduction on it) and checked, outside the counted stretch.
 *
 * A new communicator's first small collectives send as many messages as the same collectives
 * later: the first message to each peer carries the sender's binding.
 *
 * Under RANGECOMM_MODE=off only the results are checked (MPI makes them all).
 * At the end rank 0 prints the creations the program made per call ("expect CALL N"), for
 * run_creation_messages.py to compare with the RANGECOMM_REPORT=1 report. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;
static int counting = 1; /* 0 under RANGECOMM_MODE=off, where MPI makes everything */
static void (*counts)(long *, long *, long *);
static void (*nonblocking)(long *);

struct tally {
  long p2p, coll, create, nonblocking;
};

static struct tally now(void) {
  struct tally t;
  counts(&t.p2p, &t.coll, &t.create);
  nonblocking(&t.nonblocking);
  return t;
}

/* Checks what happened since `before` against the allowed numbers. None of the collectives
 * may be nonblocking: on Open MPI one would keep libnbc's progress polled by every later call
 * of the program until its communicator is freed (MPI_COMM_SELF never is). */
static void expect(const char *what, struct tally before, long p2p, long coll) {
  if (!counting) return;
  struct tally after = now();
  long dp = after.p2p - before.p2p, dc = after.coll - before.coll,
       dn = after.create - before.create, dnb = after.nonblocking - before.nonblocking;
  if (dp != p2p || dc != coll || dn != 0 || dnb != 0) {
    fprintf(stderr,
            "rank %d: %s: %ld sends, %ld collectives (%ld nonblocking), %ld MPI creations "
            "(expected %ld, %ld (0), 0)\n",
            rank, what, dp, dc, dnb, dn, p2p, coll);
    ++failures;
  }
}

/* The communicator works and has the expected members: an all-reduction of world ranks. */
static void use(const char *what, MPI_Comm c, int expected_size, long expected_sum) {
  int n = 0;
  long mine = rank, sum = -1;
  MPI_Comm_size(c, &n);
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, c);
  if (n != expected_size || sum != expected_sum) {
    fprintf(stderr, "rank %d: %s: size %d sum %ld (expected %d, %ld)\n", rank, what, n, sum,
            expected_size, expected_sum);
    ++failures;
  }
}

/* The sends of one library barrier over c, once its first contacts are made. */
static long barrier_sends(MPI_Comm c) {
  MPI_Barrier(c);
  struct tally t = now();
  MPI_Barrier(c);
  return now().p2p - t.p2p;
}

enum { DUP, DUP_INFO, IDUP, CREATE, CREATE_GROUP, SPLIT, CALLS };
static const char *names[CALLS] = {"MPI_Comm_dup",    "MPI_Comm_dup_with_info", "MPI_Comm_idup",
                                   "MPI_Comm_create", "MPI_Comm_create_group",  "MPI_Comm_split"};
static long made[CALLS];

/* Every creation from parent (whose members are world ranks 0..size-1, in order). */
static void creations(MPI_Comm parent, const char *label) {
  char what[128];
  long all = (long)size * (size - 1) / 2;
  int half = (size + 1) / 2, lower = rank < half;
  long half_sum = lower ? (long)half * (half - 1) / 2 : all - (long)half * (half - 1) / 2;
  int half_size = lower ? half : size - half;
  MPI_Group group, half_group;
  int range[1][3] = {{lower ? 0 : half, lower ? half - 1 : size - 1, 1}};
  MPI_Comm_group(parent, &group);
  MPI_Group_range_incl(group, 1, range, &half_group);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_assert_no_any_tag", "false");

  /* Library communicators of the parent's members and of this process's half, on which the
   * barriers that keep the order run. */
  MPI_Comm whole, part;
  MPI_Comm_dup(MPI_COMM_WORLD, &whole);
  MPI_Comm_create_group(parent, half_group, 99, &part);
  ++made[DUP];
  ++made[CREATE_GROUP];
  long whole_barrier = barrier_sends(whole), part_barrier = barrier_sends(part);
  MPI_Comm_free(&whole);
  MPI_Comm_free(&part);

  MPI_Comm c;
  MPI_Request req;
  struct tally t = now();
  MPI_Comm_dup(parent, &c);
  snprintf(what, sizeof what, "MPI_Comm_dup of %s", label);
  expect(what, t, whole_barrier, 0);
  use(what, c, size, all);
  ++made[DUP];
  t = now();
  MPI_Comm_free(&c);
  snprintf(what, sizeof what, "MPI_Comm_free of a dup of %s", label);
  expect(what, t, 0, 0);

  t = now();
  MPI_Comm_dup_with_info(parent, info, &c);
  snprintf(what, sizeof what, "MPI_Comm_dup_with_info of %s", label);
  expect(what, t, whole_barrier, 0);
  use(what, c, size, all);
  ++made[DUP_INFO];
  MPI_Comm_free(&c);

  t = now();
  MPI_Comm_idup(parent, &c, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  snprintf(what, sizeof what, "MPI_Comm_idup of %s", label);
  expect(what, t, whole_barrier, 0);
  use(what, c, size, all);
  ++made[IDUP];
  MPI_Comm_free(&c);

  t = now();
  MPI_Comm_create(parent, half_group, &c);
  snprintf(what, sizeof what, "MPI_Comm_create of %s", label);
  if (parent == MPI_COMM_WORLD)
    expect(what, t, 0, 1);
  else
    expect(what, t, whole_barrier, 0);
  use(what, c, half_size, half_sum);
  ++made[CREATE];
  MPI_Comm_free(&c);

  t = now();
  MPI_Comm_create_group(parent, half_group, 7, &c);
  snprintf(what, sizeof what, "MPI_Comm_create_group of %s", label);
  expect(what, t, part_barrier, 0);
  use(what, c, half_size, half_sum);
  ++made[CREATE_GROUP];
  MPI_Comm_free(&c);

  /* The exchange of colours and keys: one MPI_Allgather on a real parent; on a library one,
   * the library's own all-gather of two integers, whose sends are counted first. */
  long exchange_sends = 0;
  if (parent != MPI_COMM_WORLD) {
    int mine[2] = {rank, rank}, *all = malloc(2 * sizeof(int) * (size_t)size);
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, parent); /* first contacts: bindings */
    t = now();
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, parent);
    exchange_sends = now().p2p - t.p2p;
    free(all);
  }
  t = now();
  MPI_Comm_split(parent, !lower, size - rank, &c);
  snprintf(what, sizeof what, "MPI_Comm_split of %s", label);
  expect(what, t, exchange_sends, parent == MPI_COMM_WORLD);
  use(what, c, half_size, half_sum);
  ++made[SPLIT];
  MPI_Comm_free(&c);

  MPI_Info_free(&info);
  MPI_Group_free(&half_group);
  MPI_Group_free(&group);
}

/* A new communicator's first collectives send no more messages than the same collectives
 * once every process has talked to its peers there: a small first message to a peer travels
 * inside the sender's binding (one message, not a binding and then the message). Counted on a
 * dup of the world (a library communicator), with an all-reduction of a few ints and a
 * broadcast from every root; a larger all-gather takes its own bindings and is not counted. */
static void first_contact(void) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  ++made[DUP];
  long sends[2];
  for (int pass = 0; pass < 2; ++pass) {
    struct tally t = now();
    int in[4] = {rank, 1, 2, 3}, out[4] = {0, 0, 0, 0};
    MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, c);
    for (int root = 0; root < size; ++root) MPI_Bcast(in, 4, MPI_INT, root, c);
    sends[pass] = now().p2p - t.p2p;
    if (out[0] != size * (size - 1) / 2 || out[1] != size) {
      fprintf(stderr, "rank %d: first-contact all-reduction gave %d, %d\n", rank, out[0], out[1]);
      ++failures;
    }
  }
  if (counting && sends[0] != sends[1]) {
    fprintf(stderr,
            "rank %d: a new communicator's first small collectives took %ld sends, the same "
            "collectives again %ld (bindings went alone)\n",
            rank, sends[0], sends[1]);
    ++failures;
  }
  MPI_Comm_free(&c);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  counts = (void (*)(long *, long *, long *))dlsym(RTLD_DEFAULT, "count_mpi_calls");
  nonblocking = (void (*)(long *))dlsym(RTLD_DEFAULT, "count_mpi_nonblocking");
  if (counts == NULL || nonblocking == NULL) {
    fprintf(stderr, "creation_messages: count_mpi_calls is not loaded (preload libcount_mpi.so)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  const char *mode = getenv("RANGECOMM_MODE");
  counting = mode != NULL && (strcmp(mode, "accelerate") == 0 || strcmp(mode, "shadow") == 0);

  creations(MPI_COMM_WORLD, "MPI_COMM_WORLD");
  MPI_Comm copy;
  MPI_Comm_dup(MPI_COMM_WORLD, &copy);
  ++made[DUP];
  creations(copy, "a dup of MPI_COMM_WORLD");
  MPI_Comm_free(&copy);

  /* MPI_COMM_SELF: one collective (on itself) names it, at its first creation only. */
  MPI_Comm self_copy;
  struct tally t = now();
  MPI_Comm_dup(MPI_COMM_SELF, &self_copy);
  expect("first MPI_Comm_dup of MPI_COMM_SELF", t, 0, 1);
  MPI_Comm_free(&self_copy);
  t = now();
  MPI_Comm_dup(MPI_COMM_SELF, &self_copy);
  expect("second MPI_Comm_dup of MPI_COMM_SELF", t, 0, 0);
  long one = 1, got = 0;
  MPI_Allreduce(&one, &got, 1, MPI_LONG, MPI_SUM, self_copy);
  if (got != 1) {
    fprintf(stderr, "rank %d: a dup of MPI_COMM_SELF sums to %ld\n", rank, got);
    ++failures;
  }
  MPI_Comm_free(&self_copy);
  made[DUP] += 2;

  first_contact();

  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  long sums[CALLS];
  MPI_Reduce(made, sums, CALLS, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int i = 0; i < CALLS; ++i) printf("expect %s %ld\n", names[i], sums[i]);
    printf("%s: %d failures\n", total ? "FAILED" : "passed", total);
    fflush(stdout);
  }
  MPI_Finalize();
  return total != 0;
}
