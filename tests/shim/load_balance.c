/* Dynamic load balancing in the spirit of paper 003, through the ordinary MPI API: every process
 * starts as a group of its own with an uneven share of work units. Groups work in lockstep
 * rounds (one unit per member, then an MPI_Allreduce over the group). A group that runs out of
 * work, or whose sibling asks, starts MPIX_Icomm_create_group for the merged group (the
 * sibling's members first, then its own: not a range, so the members agree on a context) and
 * tells the sibling's leader; a group that still has work keeps working while the creation is
 * pending, testing it every round. Once it completes, the merged group shares out the
 * remaining units with MPI_Allgather and MPI_Alltoallv on the new communicator and goes on,
 * until one group holds every process. At the end every unit must have been done exactly once
 * (count and checksum against the expected values).
 *
 * Run by run_shim_test.py (linked and preloaded). */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

enum { UNITS_PER_RANK = 6, TAG_IN = 700 };

static unsigned long long work(long unit) { /* a few microseconds of arithmetic */
  unsigned long long h = (unsigned long long)unit * 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 2000; ++i) h = h * 6364136223846793005ull + 1442695040888963407ull;
  return h >> 11;
}

struct group {
  MPI_Comm comm;
  int level; /* members: world ranks of block (rank >> level) of size 2^level */
  int first, size;
};

static int block_size(int first, int level, int p) {
  int n = 1 << level;
  return first + n <= p ? n : p - first;
}

/* Shares out the units of all members evenly (MPI_Allgather of counts, MPI_Alltoallv). */
static void rebalance(MPI_Comm comm, long **units, int *count) {
  int n, me;
  CHECK_MPI(MPI_Comm_size(comm, &n));
  CHECK_MPI(MPI_Comm_rank(comm, &me));
  int *counts = malloc(sizeof(int) * (size_t)n);
  CHECK_MPI(MPI_Allgather(count, 1, MPI_INT, counts, 1, MPI_INT, comm));
  long total = 0, before = 0;
  for (int i = 0; i < n; ++i) total += counts[i], before += i < me ? counts[i] : 0;
  /* my units are global positions before..before+count-1; member j gets positions
   * [j*total/n, (j+1)*total/n) */
  int *sc = calloc((size_t)n, sizeof(int)), *sd = calloc((size_t)n, sizeof(int));
  int *rc = calloc((size_t)n, sizeof(int)), *rd = calloc((size_t)n, sizeof(int));
  for (int j = 0; j < n; ++j) {
    long lo = j * total / n, hi = (j + 1) * total / n;
    long a = lo > before ? lo : before, b = hi < before + *count ? hi : before + *count;
    sc[j] = b > a ? (int)(b - a) : 0;
  }
  CHECK_MPI(MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, comm));
  int got = 0;
  for (int j = 0; j < n; ++j) {
    sd[j] = j ? sd[j - 1] + sc[j - 1] : 0;
    rd[j] = got;
    got += rc[j];
  }
  long *mine = malloc(sizeof(long) * (size_t)(got ? got : 1));
  CHECK_MPI(MPI_Alltoallv(*units, sc, sd, MPI_LONG, mine, rc, rd, MPI_LONG, comm));
  CHECK(got == (int)((me + 1) * total / n - me * total / n), "rebalance: %d units", got);
  free(*units);
  *units = mine;
  *count = got;
  free(counts), free(sc), free(sd), free(rc), free(rd);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  CHECK(MPIX_Icomm_create_group != NULL, "MPIX_Icomm_create_group not found: library not loaded");
  /* Uneven work: rank k starts with (k + 1) * UNITS_PER_RANK units, numbered globally. */
  int count = (r + 1) * UNITS_PER_RANK;
  long *units = malloc(sizeof(long) * (size_t)count);
  long start = (long)r * (r + 1) / 2 * UNITS_PER_RANK;
  for (int i = 0; i < count; ++i) units[i] = start + i;

  struct group g = {MPI_COMM_NULL, 0, r, 1};
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, r, r, 1, &g.comm));
  unsigned long long sum = 0;
  long done = 0;
  int merges = 0, worked_while_pending = 0;
  MPI_Group world_group;
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  while (g.size < p) {
    int sib_first = g.first ^ (1 << g.level);
    if (sib_first >= p) { /* no sibling block at this level: the same group one level up */
      ++g.level;
      continue;
    }
    int sib_size = block_size(sib_first, g.level, p);
    int leader = r == g.first, sib_leader = sib_first;
    /* The merged group, the same on both sides: the upper block's members, then the lower's
     * (descending blocks: not a range of MPI_COMM_WORLD). */
    int n = g.size + sib_size, *members = malloc(sizeof(int) * (size_t)n);
    int upper = g.first > sib_first ? g.first : sib_first;
    int upper_size = upper == g.first ? g.size : sib_size;
    int lower_block = upper == g.first ? sib_first : g.first;
    for (int i = 0; i < upper_size; ++i) members[i] = upper + i;
    for (int i = upper_size; i < n; ++i) members[i] = lower_block + (i - upper_size);
    MPI_Group mg;
    CHECK_MPI(MPI_Group_incl(world_group, n, members, &mg));
    int lower = g.first < sib_first ? g.first : sib_first;
    int tag = lower * 64 + g.level; /* one per merge: (block, level) */
    MPI_Comm merged = MPI_COMM_NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    int started = 0, heard = 0, complete = 0;
    for (;;) {
      /* One round: a unit each, then the group learns what is left and whether the sibling
       * asked (the leader probes for its message). */
      if (count > 0) {
        sum += work(units[--count]);
        ++done;
        if (started) ++worked_while_pending;
      }
      int flag = 0;
      if (leader && !heard) {
        CHECK_MPI(
            MPI_Iprobe(sib_leader, TAG_IN + g.level, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        if (flag) {
          int dummy;
          CHECK_MPI(MPI_Recv(&dummy, 1, MPI_INT, sib_leader, TAG_IN + g.level, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE));
          heard = 1;
        }
      }
      long state[2] = {count, flag}, all[2];
      CHECK_MPI(MPI_Allreduce(state, all, 2, MPI_LONG, MPI_SUM, g.comm));
      if (!started && (all[0] == 0 || all[1] > 0)) {
        CHECK_MPI(MPIX_Icomm_create_group(MPI_COMM_WORLD, mg, tag, &merged, &req));
        CHECK(merged != MPI_COMM_NULL, "a member got MPI_COMM_NULL");
        if (leader) {
          int in = 1;
          CHECK_MPI(MPI_Send(&in, 1, MPI_INT, sib_leader, TAG_IN + g.level, MPI_COMM_WORLD));
        }
        started = 1;
      }
      if (started && all[0] > 0) { /* still working: is the merged group ready? */
        int t = 0;
        CHECK_MPI(MPI_Test(&req, &t, MPI_STATUS_IGNORE));
        /* the group must agree before leaving the lockstep rounds */
        int ready = t, every = 0;
        CHECK_MPI(MPI_Allreduce(&ready, &every, 1, MPI_INT, MPI_LAND, g.comm));
        if (every) {
          complete = 1;
          break;
        }
      }
      if (started && all[0] == 0) break;
    }
    if (!complete) CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int in = 0;
    if (leader && !heard)
      CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, sib_leader, TAG_IN + g.level, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
    int mr = -1, ms = -1, is_lib = 0;
    CHECK_MPI(MPI_Comm_rank(merged, &mr));
    CHECK_MPI(MPI_Comm_size(merged, &ms));
    CHECK_MPI(MPIX_Comm_is_range(merged, &is_lib));
    CHECK(ms == n && members[mr] == r && is_lib, "merged group: rank %d size %d lib %d", mr, ms,
          is_lib);
    rebalance(merged, &units, &count);
    CHECK_MPI(MPI_Comm_free(&g.comm));
    g.comm = merged;
    g.level += 1;
    g.first = lower;
    g.size = n;
    ++merges;
    CHECK_MPI(MPI_Group_free(&mg));
    free(members);
  }
  /* The last group finishes what is left. */
  while (count > 0) sum += work(units[--count]), ++done;
  long total_done = 0;
  unsigned long long total_sum = 0;
  CHECK_MPI(MPI_Reduce(&done, &total_done, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Reduce(&sum, &total_sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
  long pending_total = 0;
  long w = worked_while_pending;
  CHECK_MPI(MPI_Reduce(&w, &pending_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
  if (r == 0) {
    long expected_units = (long)p * (p + 1) / 2 * UNITS_PER_RANK;
    unsigned long long expected = 0;
    for (long u = 0; u < expected_units; ++u) expected += work(u);
    CHECK(total_done == expected_units, "%ld units done, expected %ld", total_done, expected_units);
    CHECK(total_sum == expected, "checksum %llu, expected %llu", total_sum, expected);
    printf(
        "load_balance: %d ranks, %ld units, %d merges on rank 0, %ld units done while a "
        "merge was pending\n",
        p, total_done, merges, pending_total);
  }
  CHECK_MPI(MPI_Comm_free(&g.comm));
  CHECK_MPI(MPI_Group_free(&world_group));
  free(units);
  shim_test_end();
  MPI_Finalize();
  return 0;
}
