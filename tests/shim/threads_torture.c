/* The threads torture test: T threads per process (1 to 8, default 3) under
 * MPI_THREAD_MULTIPLE, each with communicators of its own made and freed while the other
 * threads do the same, randomised by a seed that every process shares.
 *
 * Each iteration of a thread makes one communicator from the thread's own copy of
 * MPI_COMM_WORLD (dup, idup overlapped with a collective on the parent, split with reversed
 * keys, create_group, comm_create, a strided range through MPIX_Comm_create_range or
 * MPIX_Icomm_create_group where the library is there and MPI_Comm_create_group where it is not,
 * split_type), checks its members in order, and uses it: wildcard point-to-point around a
 * ring, blocking and nonblocking collectives completed by Waitall, Testall, Waitsome and Testany
 * loops, blocking and polling probes and matched probes, and a cancelled receive. Meanwhile it
 * sends and receives on a communicator that all threads share (a tag each), on a Cartesian
 * communicator (real under every mode) and on MPI_COMM_WORLD itself. Once an iteration the
 * threads of a process post a receive each and one of them (another each time) completes all
 * of them with MPI_Waitany, MPI_Testsome or MPI_Waitall: requests of several threads, on the
 * library's communicators and MPI's, completed by another thread.
 *
 * Every message's content and every result is checked against what the seed says; the first
 * difference aborts the job with the seed, thread, iteration and step. The transcript holds a
 * digest of each thread's checked values; tools/soak-threads.sh compares each run under the
 * library with the native run of the same seed (the test command does not: see its meson.build).
 *
 *   threads_torture [--iterations N] [--threads T] [--seed S]   (defaults 12, 3, 1)
 *
 * The test command runs the short form; tools/soak-threads.sh loops the long one. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#define RANGECOMM_WEAK_SYMBOLS /* the library's calls where it is there, null natively */
#include <pthread.h>
#include <rangecomm.h>
#include <stdint.h>

enum { kMaxThreads = 8, kMaxCount = 48 };
enum { kTagRing = 1, kTagProbe = 5, kTagExchange = 9, kTagNever = 77 };

static int rank, size, threads = 3, iterations = 12;
#ifdef OPEN_MPI
static const int open_mpi = 1;
#else
static const int open_mpi = 0;
#endif
static unsigned long long seed = 1;
/* Whether MPI_Comm_idup on MPI's own communicators may abort the process while another thread
 * makes a communicator: MPICH 4.2 and 4.3 take an idup's context id outside their lock, so two
 * creations can take the same one (native_defects idup-context-ids; 5 of 5 runs at 1 process on
 * 4.2.1). The test makes a blocking duplicate there instead. */
static int idup_takes_ids_unlocked;

static MPI_Comm base[kMaxThreads]; /* each thread's own duplicate of MPI_COMM_WORLD */
/* Whether base[t] is the library's. The library's own calls (MPIX_) are made only on those: on
 * a real communicator that has no identity of the library's (mode off), ranges are counted as
 * the world's, and the same range made from two such parents by two threads at once could pair
 * up crosswise (docs/tag-layout.md). Under mode off the odd threads' parents are ranges of the
 * world, made in one order by the main thread, so that the library's calls run there too. */
static int library_parent[kMaxThreads];
static MPI_Comm cart[kMaxThreads]; /* each thread's periodic ring: real under every mode */
static MPI_Comm shared;            /* point-to-point of all threads at once, a tag each */
static pthread_barrier_t barrier;
static MPI_Request exchange[kMaxThreads]; /* posted by each thread, completed by one */
static int exchange_in[kMaxThreads];
static uint64_t digest[kMaxThreads];
static long checks[kMaxThreads];

static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* Where a thread is, for the failure message. */
struct ctx {
  int thread, iteration;
  const char *step;
  uint64_t rng; /* the same sequence on every process: collectives stay matched */
};

#define TCHECK(cx, cond, fmt, ...)                                                                 \
  CHECK(cond, "seed %llu, thread %d, iteration %d, %s: " fmt, seed, (cx)->thread, (cx)->iteration, \
        (cx)->step, __VA_ARGS__)

static unsigned pick(struct ctx *cx, unsigned n) {
  cx->rng = mix64(cx->rng);
  return (unsigned)(cx->rng % n);
}

/* The value a message or buffer holds: a function of the seed, the thread, the iteration, the
 * world rank that made it, a step tag and an index. */
static int value(const struct ctx *cx, int from, int tag, int j) {
  uint64_t key = seed ^ (uint64_t)cx->thread << 56 ^ (uint64_t)cx->iteration << 36 ^
                 (uint64_t)from << 20 ^ (uint64_t)tag << 12 ^ (uint64_t)j;
  return (int)(mix64(key) & 0x3fffffff);
}

/* Records a checked value in the thread's digest: a sum, so that the order in which wildcard
 * receives happen to match does not change it. */
static void seen(const struct ctx *cx, int v) {
  digest[cx->thread] += mix64((uint64_t)(unsigned)v);
  ++checks[cx->thread];
}

/* --- the communicator of an iteration ------------------------------------------------------ */

/* A communicator made from the thread's parent, and the world ranks of its members in rank
 * order (what the process expects; checked against what MPI says). */
struct made {
  MPI_Comm comm;
  int n, me, members[64];
  const char *how;
};

static void strided(int first, int last, int stride, struct made *m) {
  m->n = 0;
  m->me = MPI_UNDEFINED;
  for (int r = first; r <= last; r += stride) {
    if (r == rank) m->me = m->n;
    m->members[m->n++] = r;
  }
}

static void make_comm(struct ctx *cx, struct made *m) {
  MPI_Comm parent = base[cx->thread];
  cx->step = "making a communicator";
  const int first = (int)pick(cx, (unsigned)size);
  const int last = first + (int)pick(cx, (unsigned)(size - first));
  const int stride = 1 + (int)pick(cx, 3);
  const int colors = 1 + (int)pick(cx, 2);
  m->comm = MPI_COMM_NULL;
  switch (pick(cx, 8)) {
    case 0:
      m->how = "MPI_Comm_dup";
      strided(0, size - 1, 1, m);
      CHECK_MPI(MPI_Comm_dup(parent, &m->comm));
      break;
    case 1: { /* a collective on the parent while the idup is pending */
      m->how = "MPI_Comm_idup";
      strided(0, size - 1, 1, m);
      MPI_Request rq[3];
      MPI_Status st[3]; /* not MPI_STATUSES_IGNORE: gcc 12 misreads MPICH's as an empty array */
      int one = 1, sum = size, from = -1;
      if (idup_takes_ids_unlocked && !library_parent[cx->thread]) {
        m->how = "MPI_Comm_dup for MPI_Comm_idup";
        CHECK_MPI(MPI_Comm_dup(parent, &m->comm));
        rq[0] = MPI_REQUEST_NULL;
      } else {
        CHECK_MPI(MPI_Comm_idup(parent, &m->comm, &rq[0]));
      }
      if (!open_mpi || library_parent[cx->thread]) {
        CHECK_MPI(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, parent, &rq[1]));
        CHECK_MPI(MPI_Waitall(2, rq, st));
      } else {
        /* Open MPI (4.1 and 5.0) mixes up an idup's agreement with a nonblocking collective
         * started beside it on the same communicator while other threads make communicators
         * (tests/conformance/native_defects.c, idup-overlap): point-to-point instead. */
        CHECK_MPI(MPI_Irecv(&from, 1, MPI_INT, (rank + size - 1) % size, 3, parent, &rq[1]));
        CHECK_MPI(MPI_Isend(&rank, 1, MPI_INT, (rank + 1) % size, 3, parent, &rq[2]));
        CHECK_MPI(MPI_Waitall(3, rq, st));
        TCHECK(cx, from == (rank + size - 1) % size, "a message beside the idup gave %d", from);
      }
      TCHECK(cx, sum == size, "an allreduce beside the idup gave %d", sum);
      break;
    }
    case 2: /* reversed keys: members by decreasing world rank */
      m->how = "MPI_Comm_split";
      m->n = 0;
      for (int r = size - 1; r >= 0; --r)
        if (r % colors == rank % colors) {
          if (r == rank) m->me = m->n;
          m->members[m->n++] = r;
        }
      CHECK_MPI(MPI_Comm_split(parent, rank % colors, -rank, &m->comm));
      break;
    case 3:
    case 4:
    case 5: {
      strided(first, last, stride, m);
      MPI_Group all, group;
      CHECK_MPI(MPI_Comm_group(parent, &all));
      int range[1][3] = {{first, last, stride}};
      CHECK_MPI(MPI_Group_range_incl(all, 1, range, &group));
      CHECK_MPI(MPI_Group_free(&all));
      const int which = (int)pick(cx, 3);
      if (which == 0) {
        m->how = "MPI_Comm_create";
        CHECK_MPI(MPI_Comm_create(parent, group, &m->comm));
      } else if (m->me != MPI_UNDEFINED && which == 1 && library_parent[cx->thread]) {
        m->how = "MPIX_Comm_create_range";
        CHECK_MPI(MPIX_Comm_create_range(parent, first, last, stride, &m->comm));
      } else if (m->me != MPI_UNDEFINED && library_parent[cx->thread]) {
        m->how = "MPIX_Icomm_create_group";
        MPI_Request rq;
        CHECK_MPI(MPIX_Icomm_create_group(parent, group, cx->iteration, &m->comm, &rq));
        CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
      } else if (m->me != MPI_UNDEFINED) {
        m->how = "MPI_Comm_create_group";
        CHECK_MPI(MPI_Comm_create_group(parent, group, cx->iteration, &m->comm));
      } else {
        m->how = "a range this process is outside";
      }
      CHECK_MPI(MPI_Group_free(&group));
      break;
    }
    case 6: /* one node: everyone, by decreasing world rank */
      m->how = "MPI_Comm_split_type";
      m->n = 0;
      for (int r = size - 1; r >= 0; --r) {
        if (r == rank) m->me = m->n;
        m->members[m->n++] = r;
      }
      CHECK_MPI(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &m->comm));
      break;
    default: /* a size-1 range of this process alone */
      m->how = "a range of one";
      strided(rank, rank, 1, m);
      if (library_parent[cx->thread]) {
        CHECK_MPI(MPIX_Comm_create_range(parent, rank, rank, 1, &m->comm));
      } else {
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &m->comm));
      }
      break;
  }
  cx->step = m->how;
  if (m->me == MPI_UNDEFINED) {
    TCHECK(cx, m->comm == MPI_COMM_NULL, "%s", "a process outside got a communicator");
    return;
  }
  TCHECK(cx, m->comm != MPI_COMM_NULL, "%s", "a member got MPI_COMM_NULL");
  int n = -1, me = -1, worlds[64];
  CHECK_MPI(MPI_Comm_size(m->comm, &n));
  CHECK_MPI(MPI_Comm_rank(m->comm, &me));
  TCHECK(cx, n == m->n && me == m->me, "size %d rank %d, want %d and %d", n, me, m->n, m->me);
  CHECK_MPI(MPI_Allgather(&rank, 1, MPI_INT, worlds, 1, MPI_INT, m->comm));
  for (int r = 0; r < n; ++r) {
    TCHECK(cx, worlds[r] == m->members[r], "rank %d is world rank %d, want %d", r, worlds[r],
           m->members[r]);
    seen(cx, worlds[r]);
  }
}

/* --- what an iteration does on it ---------------------------------------------------------- */

/* Wildcard receives (any source, any tag) of a message from each neighbour. */
static void ring(struct ctx *cx, const struct made *m) {
  cx->step = "wildcard ring";
  const int right = (m->me + 1) % m->n, left = (m->me + m->n - 1) % m->n;
  const int count = 1 + (int)pick(cx, kMaxCount);
  int out[2][kMaxCount], in[2][kMaxCount];
  MPI_Request rq[4];
  MPI_Status st[4];
  for (int j = 0; j < count; ++j) {
    out[0][j] = value(cx, rank, kTagRing, j);
    out[1][j] = value(cx, rank, kTagRing + 1, j);
  }
  CHECK_MPI(MPI_Irecv(in[0], kMaxCount, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, m->comm, &rq[0]));
  CHECK_MPI(MPI_Irecv(in[1], kMaxCount, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, m->comm, &rq[1]));
  CHECK_MPI(MPI_Isend(out[0], count, MPI_INT, right, kTagRing, m->comm, &rq[2]));
  CHECK_MPI(MPI_Isend(out[1], count, MPI_INT, left, kTagRing + 1, m->comm, &rq[3]));
  CHECK_MPI(MPI_Waitall(4, rq, st));
  int got[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    const int tag = st[k].MPI_TAG, from = st[k].MPI_SOURCE;
    int c = -1;
    CHECK_MPI(MPI_Get_count(&st[k], MPI_INT, &c));
    TCHECK(cx, (tag == kTagRing && from == left) || (tag == kTagRing + 1 && from == right),
           "a message from %d with tag %d", from, tag);
    TCHECK(cx, c == count, "%d ints, want %d", c, count);
    ++got[tag - kTagRing];
    for (int j = 0; j < count; ++j) {
      TCHECK(cx, in[k][j] == value(cx, m->members[from], tag, j), "int %d of %d differs", j, from);
      seen(cx, in[k][j]);
    }
  }
  TCHECK(cx, got[0] == 1 && got[1] == 1, "%d and %d messages of the two tags", got[0], got[1]);
  /* No neighbour's later message may meet a wildcard receive of this step. */
  CHECK_MPI(MPI_Barrier(m->comm));
}

/* Completes n (at most 8) requests in the way `how` names; the statuses are not needed. */
static void complete(struct ctx *cx, int how, int n, MPI_Request *rq) {
  int done = 0, flag = 0, index = -1, outcount = 0, indices[8];
  MPI_Status st[8]; /* not MPI_STATUSES_IGNORE: gcc 12 misreads MPICH's as an empty array */
  switch (how) {
    case 0:
      CHECK_MPI(MPI_Waitall(n, rq, st));
      return;
    case 1:
      while (!flag) CHECK_MPI(MPI_Testall(n, rq, &flag, st));
      return;
    case 2:
      while (done < n) {
        CHECK_MPI(MPI_Waitsome(n, rq, &outcount, indices, st));
        TCHECK(cx, outcount >= 1 && outcount != MPI_UNDEFINED, "Waitsome gave %d", outcount);
        done += outcount;
      }
      return;
    default:
      while (done < n) {
        CHECK_MPI(MPI_Testany(n, rq, &index, &flag, MPI_STATUS_IGNORE));
        if (flag && index != MPI_UNDEFINED) ++done;
      }
      return;
  }
}

static void collectives(struct ctx *cx, const struct made *m) {
  const int count = 1 + (int)pick(cx, kMaxCount), root = (int)pick(cx, (unsigned)m->n);
  const int how = (int)pick(cx, 4);
  int in[kMaxCount], sum[kMaxCount], bcast[kMaxCount], worlds[64], scan = 0, prefix = 0;
  int to[64], from[64], max = -1, one = 1, total = 0;
  cx->step = "MPI_Allreduce";
  for (int j = 0; j < count; ++j) in[j] = value(cx, rank, 20, j) & 0xffff;
  CHECK_MPI(MPI_Allreduce(in, sum, count, MPI_INT, MPI_SUM, m->comm));
  for (int j = 0; j < count; ++j) {
    int want = 0;
    for (int r = 0; r < m->n; ++r) want += value(cx, m->members[r], 20, j) & 0xffff;
    TCHECK(cx, sum[j] == want, "int %d is %d, want %d", j, sum[j], want);
    seen(cx, sum[j]);
  }
  cx->step = "MPI_Scan";
  CHECK_MPI(MPI_Scan(&one, &scan, 1, MPI_INT, MPI_SUM, m->comm));
  TCHECK(cx, scan == m->me + 1, "%d", scan);

  /* Nonblocking: a broadcast, an all-gather, an all-to-all, a barrier and a maximum, all
   * pending at once, completed together. */
  cx->step = "nonblocking collectives";
  for (int j = 0; j < count; ++j) bcast[j] = m->me == root ? value(cx, rank, 21, j) : -1;
  for (int r = 0; r < m->n; ++r) to[r] = value(cx, rank, 22, m->members[r]);
  MPI_Request rq[6];
  CHECK_MPI(MPI_Ibcast(bcast, count, MPI_INT, root, m->comm, &rq[0]));
  CHECK_MPI(MPI_Iallgather(&rank, 1, MPI_INT, worlds, 1, MPI_INT, m->comm, &rq[1]));
  CHECK_MPI(MPI_Ialltoall(to, 1, MPI_INT, from, 1, MPI_INT, m->comm, &rq[2]));
  CHECK_MPI(MPI_Ibarrier(m->comm, &rq[3]));
  CHECK_MPI(MPI_Iallreduce(&rank, &max, 1, MPI_INT, MPI_MAX, m->comm, &rq[4]));
  CHECK_MPI(MPI_Iexscan(&one, &prefix, 1, MPI_INT, MPI_SUM, m->comm, &rq[5]));
  complete(cx, how, 6, rq);
  for (int j = 0; j < count; ++j) {
    TCHECK(cx, bcast[j] == value(cx, m->members[root], 21, j), "broadcast int %d is %d", j,
           bcast[j]);
    seen(cx, bcast[j]);
  }
  int want_max = -1;
  for (int r = 0; r < m->n; ++r) {
    TCHECK(cx, worlds[r] == m->members[r], "all-gather slot %d is %d", r, worlds[r]);
    TCHECK(cx, from[r] == value(cx, m->members[r], 22, rank), "all-to-all slot %d is %d", r,
           from[r]);
    seen(cx, from[r]);
    if (m->members[r] > want_max) want_max = m->members[r];
  }
  TCHECK(cx, max == want_max, "maximum %d, want %d", max, want_max);
  if (m->me > 0) TCHECK(cx, prefix == m->me, "exclusive scan %d", prefix);
  cx->step = "MPI_Reduce";
  CHECK_MPI(MPI_Reduce(&one, &total, 1, MPI_INT, MPI_SUM, root, m->comm));
  if (m->me == root) TCHECK(cx, total == m->n, "%d", total);
}

/* A message from the left neighbour found by a probe (blocking, polling, matched or polling
 * matched) before it is received. */
static void probe(struct ctx *cx, const struct made *m) {
  const int right = (m->me + 1) % m->n, left = (m->me + m->n - 1) % m->n;
  const int count = 1 + (int)pick(cx, kMaxCount), how = (int)pick(cx, 4);
  int out[kMaxCount], in[kMaxCount], flag = 0, c = -1;
  MPI_Request rq;
  MPI_Status st;
  MPI_Message msg;
  for (int j = 0; j < count; ++j) out[j] = value(cx, rank, kTagProbe, j);
  CHECK_MPI(MPI_Isend(out, count, MPI_INT, right, kTagProbe, m->comm, &rq));
  static const char *const steps[] = {"MPI_Probe", "MPI_Iprobe", "MPI_Mprobe", "MPI_Improbe"};
  cx->step = steps[how];
  if (how == 0) CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, kTagProbe, m->comm, &st));
  if (how == 1)
    while (!flag) CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, kTagProbe, m->comm, &flag, &st));
  if (how == 2) CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, kTagProbe, m->comm, &msg, &st));
  if (how == 3)
    while (!flag) CHECK_MPI(MPI_Improbe(MPI_ANY_SOURCE, kTagProbe, m->comm, &flag, &msg, &st));
  CHECK_MPI(MPI_Get_count(&st, MPI_INT, &c));
  TCHECK(cx, st.MPI_SOURCE == left && st.MPI_TAG == kTagProbe && c == count,
         "found %d ints from %d with tag %d", c, st.MPI_SOURCE, st.MPI_TAG);
  if (how < 2)
    CHECK_MPI(MPI_Recv(in, count, MPI_INT, st.MPI_SOURCE, kTagProbe, m->comm, &st));
  else
    CHECK_MPI(MPI_Mrecv(in, count, MPI_INT, &msg, &st));
  CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  for (int j = 0; j < count; ++j) {
    TCHECK(cx, in[j] == value(cx, m->members[left], kTagProbe, j), "int %d is %d", j, in[j]);
    seen(cx, in[j]);
  }
}

/* A receive nobody sends to, cancelled: it must end cancelled, and take nothing. */
static void cancel(struct ctx *cx, const struct made *m) {
  cx->step = "MPI_Cancel";
  int buffer = -1, cancelled = 0;
  MPI_Request rq;
  MPI_Status st;
  CHECK_MPI(MPI_Irecv(&buffer, 1, MPI_INT, MPI_ANY_SOURCE, kTagNever, m->comm, &rq));
  CHECK_MPI(MPI_Cancel(&rq));
  CHECK_MPI(MPI_Wait(&rq, &st));
  CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
  TCHECK(cx, cancelled && buffer == -1, "cancelled %d, buffer %d", cancelled, buffer);
}

/* Point-to-point on the communicator all threads share (a tag each), on the thread's
 * Cartesian ring, and on MPI_COMM_WORLD (a tag each), all from the left neighbour. */
static void others(struct ctx *cx) {
  const int t = cx->thread, right = (rank + 1) % size, left = (rank + size - 1) % size;
  int out = value(cx, rank, 30, 0), in[3] = {-1, -1, -1};
  MPI_Request rq[6];
  MPI_Status st[6];
  cx->step = "the shared communicator, MPI_COMM_WORLD and a Cartesian one";
  CHECK_MPI(MPI_Irecv(&in[0], 1, MPI_INT, MPI_ANY_SOURCE, 100 + t, shared, &rq[0]));
  CHECK_MPI(MPI_Irecv(&in[1], 1, MPI_INT, MPI_ANY_SOURCE, 200 + t, MPI_COMM_WORLD, &rq[1]));
  int cart_left = -1, cart_right = -1;
  CHECK_MPI(MPI_Cart_shift(cart[t], 0, 1, &cart_left, &cart_right));
  CHECK_MPI(MPI_Irecv(&in[2], 1, MPI_INT, cart_left, 7, cart[t], &rq[2]));
  CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, right, 100 + t, shared, &rq[3]));
  CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, right, 200 + t, MPI_COMM_WORLD, &rq[4]));
  CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, cart_right, 7, cart[t], &rq[5]));
  CHECK_MPI(MPI_Waitall(6, rq, st));
  const int want = value(cx, left, 30, 0);
  for (int k = 0; k < 3; ++k) {
    TCHECK(cx, in[k] == want && st[k].MPI_SOURCE == left, "receive %d got %d from %d", k, in[k],
           st[k].MPI_SOURCE);
    seen(cx, in[k]);
  }
  int sum = 0;
  CHECK_MPI(MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_BXOR, cart[t]));
}

/* The threads of this process each post a receive (on their parent, a library communicator
 * under the acceleration modes, or on their Cartesian one, MPI's) and a send to the right; one
 * thread completes every thread's receive. */
static void exchange_across_threads(struct ctx *cx) {
  const int t = cx->thread, right = (rank + 1) % size, left = (rank + size - 1) % size;
  const MPI_Comm c = t % 2 == 0 ? base[t] : cart[t];
  const int completer = cx->iteration % threads, how = (int)pick(cx, 3);
  int out = value(cx, rank, kTagExchange, 0);
  MPI_Request send;
  cx->step = "requests completed by another thread";
  CHECK_MPI(MPI_Irecv(&exchange_in[t], 1, MPI_INT, MPI_ANY_SOURCE, kTagExchange, c, &exchange[t]));
  CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, right, kTagExchange, c, &send));
  pthread_barrier_wait(&barrier);
  if (t == completer) {
    int done = 0, index = -1, outcount = 0, indices[kMaxThreads];
    MPI_Status st[kMaxThreads];
    if (how == 0) {
      while (done < threads) {
        CHECK_MPI(MPI_Waitany(threads, exchange, &index, &st[0]));
        TCHECK(cx, index != MPI_UNDEFINED && st[0].MPI_SOURCE == left, "Waitany: %d from %d", index,
               st[0].MPI_SOURCE);
        ++done;
      }
    } else if (how == 1) {
      while (done < threads) {
        CHECK_MPI(MPI_Testsome(threads, exchange, &outcount, indices, st));
        TCHECK(cx, outcount != MPI_UNDEFINED, "%s", "Testsome found no active request");
        for (int k = 0; k < outcount; ++k)
          TCHECK(cx, st[k].MPI_SOURCE == left, "Testsome: %d from %d", indices[k],
                 st[k].MPI_SOURCE);
        done += outcount;
      }
    } else {
      CHECK_MPI(MPI_Waitall(threads, exchange, st));
      for (int k = 0; k < threads; ++k)
        TCHECK(cx, st[k].MPI_SOURCE == left, "Waitall: %d from %d", k, st[k].MPI_SOURCE);
    }
    for (int k = 0; k < threads; ++k)
      TCHECK(cx, exchange[k] == MPI_REQUEST_NULL, "request of thread %d still active", k);
  }
  CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));
  pthread_barrier_wait(&barrier);
  TCHECK(cx, exchange_in[t] == value(cx, left, kTagExchange, 0), "got %d", exchange_in[t]);
  seen(cx, exchange_in[t]);
}

static void *torture(void *arg) {
  struct ctx cx = {*(const int *)arg, 0, "start", 0};
  for (cx.iteration = 0; cx.iteration < iterations; ++cx.iteration) {
    cx.rng = mix64(seed ^ mix64((uint64_t)cx.thread << 32 | (uint64_t)cx.iteration));
    struct made m;
    make_comm(&cx, &m);
    if (m.comm != MPI_COMM_NULL) {
      const unsigned steps = pick(&cx, 16); /* each step in most iterations */
      if (steps & 1 || steps == 0) ring(&cx, &m);
      if (steps & 2 || steps == 0) collectives(&cx, &m);
      if (steps & 4 || steps == 0) probe(&cx, &m);
      if (steps & 8 || steps == 0) cancel(&cx, &m);
      cx.step = "MPI_Comm_free";
      CHECK_MPI(MPI_Comm_free(&m.comm));
      TCHECK(&cx, m.comm == MPI_COMM_NULL, "%s", "the handle was not set to MPI_COMM_NULL");
    }
    others(&cx);
    exchange_across_threads(&cx);
  }
  return NULL;
}

int main(int argc, char **argv) {
  shim_init_thread_multiple(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--iterations") == 0)
      iterations = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--threads") == 0)
      threads = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--seed") == 0)
      seed = strtoull(argv[i + 1], NULL, 10);
    else
      CHECK(0, "unknown option %s", argv[i]);
  }
  CHECK(threads >= 1 && threads <= kMaxThreads && size <= 64 && iterations >= 0,
        "--threads %d (1 to %d), %d processes (at most 64)", threads, kMaxThreads, size);
  note("threads_torture: %d processes, %d threads, %d iterations, seed %llu", size, threads,
       iterations, seed);

  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0, major = 0, minor = 0;
  CHECK_MPI(MPI_Get_library_version(version, &length));
  const char *mpich = strstr(version, "MPICH Version:");
  idup_takes_ids_unlocked =
      mpich != NULL && sscanf(mpich + strlen("MPICH Version:"), "%d.%d", &major, &minor) == 2 &&
      major == 4 && minor >= 2;

  const int periodic = 1;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &shared));
  for (int t = 0; t < threads; ++t) {
    if (t % 2 == 1 && MPIX_Comm_create_range != NULL)
      CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, size - 1, 1, &base[t]));
    else
      CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &base[t]));
    if (MPIX_Comm_is_range != NULL) CHECK_MPI(MPIX_Comm_is_range(base[t], &library_parent[t]));
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &periodic, 0, &cart[t]));
  }
  CHECK(pthread_barrier_init(&barrier, NULL, (unsigned)threads) == 0, "pthread_barrier_init");
  pthread_t tid[kMaxThreads];
  int ids[kMaxThreads];
  for (int t = 0; t < threads; ++t) {
    ids[t] = t;
    CHECK(pthread_create(&tid[t], NULL, torture, &ids[t]) == 0, "pthread_create");
  }
  for (int t = 0; t < threads; ++t) CHECK(pthread_join(tid[t], NULL) == 0, "pthread_join");
  pthread_barrier_destroy(&barrier);

  for (int t = 0; t < threads; ++t) {
    note("thread %d: %ld values checked, digest %016llx", t, checks[t],
         (unsigned long long)digest[t]);
    CHECK_MPI(MPI_Comm_free(&cart[t]));
    CHECK_MPI(MPI_Comm_free(&base[t]));
  }
  CHECK_MPI(MPI_Comm_free(&shared));
  if (rank == 0)
    printf("threads_torture: %d processes x %d threads, %d iterations, seed %llu: passed\n", size,
           threads, iterations, seed);
  MPI_Finalize();
  return 0;
}
