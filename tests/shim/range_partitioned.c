/* MPI-4 partitioned point-to-point (MPI_Psend_init, MPI_Precv_init, MPI_Pready(_range, _list),
 * MPI_Parrived) on range communicators, each scenario run first on a native communicator (a dup
 * of MPI_COMM_WORLD: the oracle) and then, with the same arguments, on the whole world as a range
 * and on a strided range: several rounds of one pair of requests with content checked after
 * every MPI_Parrived and every completion call, sender and receiver with different partition
 * counts, MPI_Pready_range and MPI_Pready_list, an ordinary MPI_Irecv(MPI_ANY_SOURCE,
 * MPI_ANY_TAG) and ordinary probes that must never see a partitioned message, a partitioned
 * receive that must never take an ordinary message, two pairs with one tag matched in the order
 * of their initialisation, large rounds with a derived type that the program frees at once,
 * requests freed before their first round, and the error classes of misuse (on MPICH equal to
 * the native communicator's, which are also the documented ones).
 *
 * Not run natively: anything on Open MPI (see NATIVE_IS_ORACLE), MPI_PROC_NULL (MPICH 4.0.2
 * crashes in MPI_Psend_init with it), a partition marked ready twice (MPICH accepts it and
 * completes the round early) and partitions out of range (MPICH gives MPI_ERR_OTHER where ranges
 * give MPI_ERR_ARG). Registered only where mpi.h declares MPI_Psend_init. */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

enum { TOTAL = 12, SP = 4, SC = 3, RP = 3, RC = 4, ROUNDS = 6 };

/* MPICH's partitioned communication is the oracle. Open MPI 5.0.7's is not: natively it sends
 * the setup handshake of its requests as ordinary messages on the user's communicator, peer and
 * tag (wildcard receives and probes take them), reports a receive partition arrived while part
 * of its data has not (sender and receiver partitioned differently), misplaces the data of a
 * send whose partition is one element of a derived type, and ends the job on MPI_Psend_init to
 * a rank outside the communicator despite MPI_ERRORS_RETURN. There the scenarios run on ranges
 * only, against the documented outcomes. */
#ifdef MPICH_VERSION
enum { NATIVE_IS_ORACLE = 1 };
#else
enum { NATIVE_IS_ORACLE = 0 };
#endif

static int value(int origin, int round, int i) { return 100000 * (origin + 1) + 100 * round + i; }

static void fill(int *buf, int n, int origin, int round) {
  for (int i = 0; i < n; ++i) buf[i] = value(origin, round, i);
}

/* The communicator the scenarios run on, for messages. */
static const char *scope = "natively";

static void check_data(const int *buf, int from, int to, int origin, int round, const char *what) {
  for (int i = from; i < to; ++i)
    CHECK(buf[i] == value(origin, round, i), "%s %s: element %d is %d, expected %d", what, scope, i,
          buf[i], value(origin, round, i));
}

static void check_status(const MPI_Status *st, int source, int tag, int count, const char *what) {
  int n = -1;
  CHECK(st->MPI_SOURCE == source, "%s %s: MPI_SOURCE %d, expected %d", what, scope, st->MPI_SOURCE,
        source);
  CHECK(st->MPI_TAG == tag, "%s %s: MPI_TAG %d, expected %d", what, scope, st->MPI_TAG, tag);
  CHECK_MPI(MPI_Get_count(st, MPI_INT, &n));
  CHECK(n == count, "%s %s: MPI_Get_count %d, expected %d", what, scope, n, count);
}

/* The status of a completed partitioned receive: as of any receive on ranges (and on MPICH 4.0);
 * MPICH 4.2 gives the empty status on its own communicators, accepted there. */
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40100000
enum { NATIVE_EMPTY_STATUS = 1 };
#else
enum { NATIVE_EMPTY_STATUS = 0 };
#endif
static void check_partitioned_status(const MPI_Status *st, int source, int tag, int count,
                                     const char *what) {
  int n = -1;
  if (NATIVE_EMPTY_STATUS && strcmp(scope, "natively") == 0 && st->MPI_SOURCE == MPI_ANY_SOURCE &&
      st->MPI_TAG == MPI_ANY_TAG && MPI_Get_count(st, MPI_INT, &n) == MPI_SUCCESS && n == 0)
    return;
  check_status(st, source, tag, count, what);
}

static int error_class(int rc) {
  int cls = -1;
  if (rc == MPI_SUCCESS) return MPI_SUCCESS;
  CHECK_MPI(MPI_Error_class(rc, &cls));
  return cls;
}

static int rank_in(MPI_Comm c) {
  int r;
  MPI_Comm_rank(c, &r);
  return r;
}
static int size_of(MPI_Comm c) {
  int p;
  MPI_Comm_size(c, &p);
  return p;
}

/* Polls MPI_Parrived on each receive partition until it has arrived; each partition's data must
 * be in the buffer once it is reported. */
static void parrived_all(MPI_Request rreq, int partitions, int count, const int *in, int origin,
                         int round) {
  for (int k = 0; k < partitions; ++k) {
    int flag = 0;
    double start = MPI_Wtime();
    while (!flag) {
      CHECK_MPI(MPI_Parrived(rreq, k, &flag));
      CHECK(flag || MPI_Wtime() - start < 60, "round %d: partition %d never arrived", round, k);
    }
    check_data(in, k * count, (k + 1) * count, origin, round, "after MPI_Parrived");
  }
}

/* A ring: each process sends SP partitions of SC ints to the right and receives RP partitions
 * of RC ints from the left, ROUNDS times with the same two requests. The partitions are marked
 * ready in different orders and calls, and each round is completed by another call. */
static void rounds(MPI_Comm c, int range) {
  int r = rank_in(c), p = size_of(c), right = (r + 1) % p, left = (r + p - 1) % p, tag = 7;
  int out[TOTAL], in[TOTAL];
  MPI_Request sreq, rreq, pair[2];
  MPI_Status st, sts[2];
  CHECK_MPI(MPI_Psend_init(out, SP, SC, MPI_INT, right, tag, c, MPI_INFO_NULL, &sreq));
  CHECK_MPI(MPI_Precv_init(in, RP, RC, MPI_INT, left, tag, c, MPI_INFO_NULL, &rreq));
  for (int round = 0; round < ROUNDS; ++round) {
    fill(out, TOTAL, r, round);
    for (int i = 0; i < TOTAL; ++i) in[i] = -1;
    if (round % 2) {
      pair[0] = sreq;
      pair[1] = rreq;
      CHECK_MPI(MPI_Startall(2, pair));
      CHECK(pair[0] == sreq && pair[1] == rreq, "MPI_Startall changed the handles");
    } else {
      CHECK_MPI(MPI_Start(&rreq));
      CHECK_MPI(MPI_Start(&sreq));
    }
    switch (round % 3) {
      case 0:
        for (int k = SP - 1; k >= 0; --k) CHECK_MPI(MPI_Pready(k, sreq));
        break;
      case 1:
        CHECK_MPI(MPI_Pready_range(2, 3, sreq));
        CHECK_MPI(MPI_Pready_range(0, 1, sreq));
        break;
      default: {
        int list[3] = {3, 0, 2};
        CHECK_MPI(MPI_Pready_list(3, list, sreq));
        CHECK_MPI(MPI_Pready(1, sreq));
      }
    }
    parrived_all(rreq, RP, RC, in, left, round);
    int flag = 0, index = -1, outcount = 0, indices[2], seen = 0;
    switch (round) {
      case 0:
        CHECK_MPI(MPI_Wait(&rreq, &st));
        CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        break;
      case 1:
        pair[0] = sreq;
        pair[1] = rreq;
        CHECK_MPI(MPI_Waitall(2, pair, sts));
        st = sts[1];
        break;
      case 2:
        while (!flag) CHECK_MPI(MPI_Request_get_status(rreq, &flag, &st));
        for (flag = 0; !flag;) CHECK_MPI(MPI_Test(&rreq, &flag, &st));
        for (flag = 0; !flag;) CHECK_MPI(MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE));
        break;
      case 3: /* MPICH 4.0.2's MPI_Testall answers MPI_ERR_IN_STATUS (MPI_ERR_PENDING) while a
               * partitioned receive is incomplete: natively MPI_Testany instead */
        pair[0] = sreq;
        pair[1] = rreq;
        if (range) {
          while (!flag) CHECK_MPI(MPI_Testall(2, pair, &flag, sts));
          st = sts[1];
          break;
        }
        while (seen < 2) {
          CHECK_MPI(MPI_Testany(2, pair, &index, &flag, &sts[0]));
          if (flag && index == 1) st = sts[0];
          seen += flag && index != MPI_UNDEFINED;
        }
        break;
      case 4:
        pair[0] = sreq;
        pair[1] = rreq;
        for (int k = 0; k < 2; ++k) {
          CHECK_MPI(MPI_Waitany(2, pair, &index, &sts[0]));
          CHECK(index == 0 || index == 1, "MPI_Waitany index %d", index);
          if (index == 1) st = sts[0];
        }
        CHECK_MPI(MPI_Waitany(2, pair, &index, MPI_STATUS_IGNORE));
        CHECK(index == MPI_UNDEFINED, "MPI_Waitany on inactive requests: index %d", index);
        break;
      default:
        pair[0] = sreq;
        pair[1] = rreq;
        while (seen < 2) {
          CHECK_MPI(MPI_Waitsome(2, pair, &outcount, indices, sts));
          CHECK(outcount >= 1 && outcount <= 2, "MPI_Waitsome outcount %d", outcount);
          for (int k = 0; k < outcount; ++k)
            if (indices[k] == 1) st = sts[k];
          seen += outcount;
        }
    }
    check_partitioned_status(&st, left, tag, TOTAL, "partitioned receive");
    check_data(in, 0, TOTAL, left, round, "partitioned receive");
    CHECK(sreq != MPI_REQUEST_NULL && rreq != MPI_REQUEST_NULL, "a persistent request became null");
  }
  CHECK_MPI(MPI_Request_free(&sreq));
  CHECK_MPI(MPI_Request_free(&rreq));
  CHECK(sreq == MPI_REQUEST_NULL && rreq == MPI_REQUEST_NULL, "MPI_Request_free left a handle");
}

/* Waits (at most 60 s) until an ordinary message from source with tag can be probed. */
static void probe_until(int source, int tag, MPI_Comm c, MPI_Status *st) {
  int flag = 0;
  double start = MPI_Wtime();
  while (!flag) {
    CHECK_MPI(MPI_Iprobe(source, tag, c, &flag, st));
    CHECK(flag || MPI_Wtime() - start < 60, "the ordinary message from %d never came", source);
  }
}

/* Partitioned and ordinary traffic on one communicator never meet. */
static void isolation(MPI_Comm c) {
  int r = rank_in(c), p = size_of(c), right = (r + 1) % p, left = (r + p - 1) % p, tag = 7;
  int pout[TOTAL], pin[TOTAL], oin[TOTAL], oin2[TOTAL], oout[TOTAL], oout2[TOTAL], flag = 1;
  MPI_Request any, sreq, rreq, o1, o2;
  MPI_Status st;
  CHECK_MPI(MPI_Irecv(oin, TOTAL, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &any));
  CHECK_MPI(MPI_Psend_init(pout, 2, TOTAL / 2, MPI_INT, right, tag, c, MPI_INFO_NULL, &sreq));
  CHECK_MPI(MPI_Precv_init(pin, 1, TOTAL, MPI_INT, left, tag, c, MPI_INFO_NULL, &rreq));
  /* Round 1: the partitioned message is sent before its receive starts, while the wildcard
   * receive is posted; neither it nor any probe may see it. */
  fill(pout, TOTAL, r, 50);
  CHECK_MPI(MPI_Start(&sreq));
  CHECK_MPI(MPI_Pready_range(0, 1, sreq));
  CHECK_MPI(MPI_Barrier(c));
  for (int i = 0; i < 20; ++i) {
    CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, &st));
    CHECK(!flag, "MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) sees a partitioned message");
    CHECK_MPI(MPI_Iprobe(left, tag, c, &flag, &st));
    CHECK(!flag, "MPI_Iprobe(left, tag) sees a partitioned message");
    CHECK_MPI(MPI_Test(&any, &flag, &st));
    CHECK(!flag, "MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) received a partitioned message");
  }
  CHECK_MPI(MPI_Start(&rreq));
  CHECK_MPI(MPI_Wait(&rreq, &st));
  check_partitioned_status(&st, left, tag, TOTAL, "isolation round 1");
  check_data(pin, 0, TOTAL, left, 50, "isolation round 1");
  CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Test(&any, &flag, &st));
  CHECK(!flag, "MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) completed without an ordinary message");
  /* Round 2: a partitioned receive is active while two ordinary messages with its source and tag
   * arrive; the wildcard receive gets the first, a probe and a receive the second. */
  CHECK_MPI(MPI_Start(&rreq));
  CHECK_MPI(MPI_Barrier(c));
  fill(oout, TOTAL, r, 60);
  fill(oout2, TOTAL, r, 61);
  CHECK_MPI(MPI_Isend(oout, TOTAL, MPI_INT, right, tag, c, &o1));
  CHECK_MPI(MPI_Isend(oout2, TOTAL, MPI_INT, right, tag, c, &o2));
  CHECK_MPI(MPI_Wait(&any, &st));
  check_status(&st, left, tag, TOTAL, "wildcard receive");
  check_data(oin, 0, TOTAL, left, 60, "wildcard receive");
  probe_until(left, tag, c, &st);
  check_status(&st, left, tag, TOTAL, "probe");
  CHECK_MPI(MPI_Recv(oin2, TOTAL, MPI_INT, left, tag, c, &st));
  check_data(oin2, 0, TOTAL, left, 61, "second ordinary receive");
  CHECK_MPI(MPI_Waitall(1, &o1, &st));
  CHECK_MPI(MPI_Wait(&o2, MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Test(&rreq, &flag, &st));
  CHECK(!flag, "a partitioned receive completed from ordinary messages");
  CHECK_MPI(MPI_Parrived(rreq, 0, &flag));
  CHECK(!flag, "MPI_Parrived reports data of an ordinary message");
  CHECK_MPI(MPI_Barrier(c));
  fill(pout, TOTAL, r, 51);
  CHECK_MPI(MPI_Start(&sreq));
  CHECK_MPI(MPI_Pready(1, sreq));
  CHECK_MPI(MPI_Pready(0, sreq));
  CHECK_MPI(MPI_Wait(&rreq, &st));
  check_partitioned_status(&st, left, tag, TOTAL, "isolation round 2");
  check_data(pin, 0, TOTAL, left, 51, "isolation round 2");
  CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Request_free(&sreq));
  CHECK_MPI(MPI_Request_free(&rreq));
}

/* Two pairs with one tag, each process initialising its sends and receives interleaved: the
 * first send to a peer matches the peer's first receive from it, whatever order the rounds run
 * in. A pair freed before its first round still counts (it matched its partner). */
static void init_order(MPI_Comm c) {
  int r = rank_in(c), p = size_of(c), right = (r + 1) % p, left = (r + p - 1) % p, tag = 5;
  int o1[TOTAL], o2[TOTAL], i1[TOTAL], i2[TOTAL], unused[TOTAL];
  MPI_Request a0, b0, a1, a2, b1, b2, all[4];
  MPI_Status sts[4];
  CHECK_MPI(MPI_Psend_init(unused, 1, TOTAL, MPI_INT, right, tag, c, MPI_INFO_NULL, &a0));
  CHECK_MPI(MPI_Precv_init(unused, 3, TOTAL / 3, MPI_INT, left, tag, c, MPI_INFO_NULL, &b0));
  CHECK_MPI(MPI_Request_free(&a0)); /* inactive: freed before any round */
  CHECK_MPI(MPI_Request_free(&b0));
  CHECK(a0 == MPI_REQUEST_NULL && b0 == MPI_REQUEST_NULL, "freed requests are not null");
  CHECK_MPI(MPI_Psend_init(o1, 2, TOTAL / 2, MPI_INT, right, tag, c, MPI_INFO_NULL, &a1));
  CHECK_MPI(MPI_Precv_init(i1, 1, TOTAL, MPI_INT, left, tag, c, MPI_INFO_NULL, &b1));
  CHECK_MPI(MPI_Psend_init(o2, 3, TOTAL / 3, MPI_INT, right, tag, c, MPI_INFO_NULL, &a2));
  CHECK_MPI(MPI_Precv_init(i2, 6, TOTAL / 6, MPI_INT, left, tag, c, MPI_INFO_NULL, &b2));
  for (int round = 0; round < 3; ++round) {
    fill(o1, TOTAL, r, 10 + round);
    fill(o2, TOTAL, r, 20 + round);
    for (int i = 0; i < TOTAL; ++i) i1[i] = i2[i] = -1;
    CHECK_MPI(MPI_Start(&b2));
    CHECK_MPI(MPI_Start(&b1));
    CHECK_MPI(MPI_Start(&a2));
    CHECK_MPI(MPI_Start(&a1));
    if (round % 2 == 0) { /* the second pair's message goes first */
      CHECK_MPI(MPI_Pready_range(0, 2, a2));
      CHECK_MPI(MPI_Wait(&b2, &sts[0]));
      CHECK_MPI(MPI_Pready_range(0, 1, a1));
      CHECK_MPI(MPI_Wait(&b1, &sts[1]));
    } else {
      CHECK_MPI(MPI_Pready_range(0, 1, a1));
      CHECK_MPI(MPI_Pready_range(0, 2, a2));
      CHECK_MPI(MPI_Wait(&b1, &sts[1]));
      CHECK_MPI(MPI_Wait(&b2, &sts[0]));
    }
    check_partitioned_status(&sts[1], left, tag, TOTAL, "first pair");
    check_partitioned_status(&sts[0], left, tag, TOTAL, "second pair");
    check_data(i1, 0, TOTAL, left, 10 + round, "first pair (matched in init order)");
    check_data(i2, 0, TOTAL, left, 20 + round, "second pair (matched in init order)");
    all[0] = a1;
    all[1] = a2;
    CHECK_MPI(MPI_Waitall(2, all, sts));
  }
  all[0] = a1;
  all[1] = a2;
  all[2] = b1;
  all[3] = b2;
  for (int k = 0; k < 4; ++k) CHECK_MPI(MPI_Request_free(&all[k]));
}

/* Large rounds (past the eager limits, in both MPIs' rendezvous protocols) with a derived type
 * on the sending side, freed by the program right after the initialisation: 8 partitions of one
 * contiguous block of BIG / 8 ints, received as 3 partitions of BIG / 3 MPI_INTs. */
enum { BIG = 3 * 8 * 16384 };
static void large(MPI_Comm c) {
  int r = rank_in(c), p = size_of(c), right = (r + 1) % p, left = (r + p - 1) % p, tag = 11;
  int *out = malloc(BIG * sizeof(int)), *in = malloc(BIG * sizeof(int));
  CHECK(out != NULL && in != NULL, "out of memory");
  MPI_Datatype block;
  MPI_Request q[2];
  MPI_Status sts[2];
  CHECK_MPI(MPI_Type_contiguous(BIG / 8, MPI_INT, &block));
  CHECK_MPI(MPI_Type_commit(&block));
  CHECK_MPI(MPI_Psend_init(out, 8, 1, block, right, tag, c, MPI_INFO_NULL, &q[0]));
  CHECK_MPI(MPI_Type_free(&block));
  CHECK_MPI(MPI_Precv_init(in, 3, BIG / 3, MPI_INT, left, tag, c, MPI_INFO_NULL, &q[1]));
  for (int round = 0; round < 3; ++round) {
    fill(out, BIG, r, round);
    for (int i = 0; i < BIG; ++i) in[i] = -1;
    CHECK_MPI(MPI_Startall(2, q));
    for (int k = 0; k < 8; ++k) CHECK_MPI(MPI_Pready((k * 5) % 8, q[0]));
    parrived_all(q[1], 3, BIG / 3, in, left, round);
    CHECK_MPI(MPI_Waitall(2, q, sts));
    check_partitioned_status(&sts[1], left, tag, BIG, "large round");
    check_data(in, 0, BIG, left, round, "large round");
  }
  CHECK_MPI(MPI_Request_free(&q[0]));
  CHECK_MPI(MPI_Request_free(&q[1]));
  free(out);
  free(in);
}

/* MPI_PROC_NULL (ranges only): the receive completes at MPI_Start with MPI_PROC_NULL's status,
 * the send once its partitions are all ready. */
static void proc_null(MPI_Comm c) {
  int out[TOTAL], in[TOTAL], flag = 0;
  MPI_Request sreq, rreq;
  MPI_Status st;
  fill(out, TOTAL, 0, 0);
  CHECK_MPI(MPI_Psend_init(out, SP, SC, MPI_INT, MPI_PROC_NULL, 3, c, MPI_INFO_NULL, &sreq));
  CHECK_MPI(MPI_Precv_init(in, RP, RC, MPI_INT, MPI_PROC_NULL, 3, c, MPI_INFO_NULL, &rreq));
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < TOTAL; ++i) in[i] = -7;
    CHECK_MPI(MPI_Start(&sreq));
    CHECK_MPI(MPI_Start(&rreq));
    CHECK_MPI(MPI_Parrived(rreq, RP - 1, &flag));
    CHECK(flag, "MPI_Parrived from MPI_PROC_NULL: not arrived");
    CHECK_MPI(MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a send to MPI_PROC_NULL completed before its partitions were ready");
    CHECK_MPI(MPI_Pready_range(0, SP - 1, sreq));
    CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&rreq, &st));
    check_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "receive from MPI_PROC_NULL");
    for (int i = 0; i < TOTAL; ++i) CHECK(in[i] == -7, "MPI_PROC_NULL wrote the buffer");
  }
  CHECK_MPI(MPI_Request_free(&sreq));
  CHECK_MPI(MPI_Request_free(&rreq));
}

/* The error classes of misuse that the native communicator also checks. */
enum {
  E_PREADY_BEFORE,
  E_RANGE_BEFORE,
  E_LIST_BEFORE,
  E_PREADY_ON_RECV,
  E_PARRIVED_ON_SEND,
  E_START_ACTIVE,
  E_PREADY_AFTER,
  E_ANY_SOURCE,
  E_ANY_TAG,
  E_BAD_RANK,
  E_BAD_TAG,
  E_NEG_PARTITIONS,
  E_NEG_COUNT,
  E_NULL_TYPE,
  E_COUNT
};
static const char *error_names[E_COUNT] = {
    "Pready before Start",     "Pready_range before Start",   "Pready_list before Start",
    "Pready on a receive",     "Parrived on a send",          "Start of an active one",
    "Pready after completion", "Precv_init MPI_ANY_SOURCE",   "Precv_init MPI_ANY_TAG",
    "Psend_init dest = size",  "Psend_init tag -1",           "Psend_init partitions -1",
    "Psend_init count -1",     "Psend_init MPI_DATATYPE_NULL"};

/* What ranges give (docs/reference.md); MPICH gives the same on its own communicators. */
static const int expected_classes[E_COUNT] = {
    MPI_ERR_REQUEST, MPI_ERR_REQUEST, MPI_ERR_REQUEST, MPI_ERR_REQUEST, MPI_ERR_REQUEST,
    MPI_ERR_REQUEST, MPI_ERR_REQUEST, MPI_ERR_RANK,    MPI_ERR_TAG,     MPI_ERR_RANK,
    MPI_ERR_TAG,     MPI_ERR_ARG,     MPI_ERR_COUNT,   MPI_ERR_TYPE};

/* MPI_Parrived on an inactive partitioned receive (before its first MPI_Start, after a round's
 * completion): flag = true (MPI 4.0, section 4.2.2). Natively from MPICH 4.1 on; MPICH 4.0 gives
 * MPI_ERR_REQUEST on its own communicators. */
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40100000
enum { NATIVE_PARRIVED_INACTIVE = 1 };
#else
enum { NATIVE_PARRIVED_INACTIVE = 0 };
#endif
static void parrived_inactive(MPI_Request req, int range, const char *when) {
  int flag = 0, rc = MPI_Parrived(req, 0, &flag);
  if (!range && !NATIVE_PARRIVED_INACTIVE) return;
  CHECK(rc == MPI_SUCCESS && flag == 1, "MPI_Parrived %s %s: error class %d, flag %d", when, scope,
        error_class(rc), flag);
}

static void errors(MPI_Comm c, int range, int classes[E_COUNT]) {
  int r = rank_in(c), p = size_of(c), right = (r + 1) % p, left = (r + p - 1) % p, tag = 9;
  int out[TOTAL], in[TOTAL], flag = 0, list[2] = {0, 1};
  MPI_Request sreq, rreq, bad = MPI_REQUEST_NULL;
  MPI_Status st;
  CHECK_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  /* Erroneous initialisations first: they must make no request (nothing for a peer to match). */
  classes[E_ANY_SOURCE] = error_class(
      MPI_Precv_init(in, 1, TOTAL, MPI_INT, MPI_ANY_SOURCE, tag, c, MPI_INFO_NULL, &bad));
  classes[E_ANY_TAG] =
      error_class(MPI_Precv_init(in, 1, TOTAL, MPI_INT, left, MPI_ANY_TAG, c, MPI_INFO_NULL, &bad));
  classes[E_BAD_RANK] =
      error_class(MPI_Psend_init(out, 1, TOTAL, MPI_INT, p, tag, c, MPI_INFO_NULL, &bad));
  classes[E_BAD_TAG] =
      error_class(MPI_Psend_init(out, 1, TOTAL, MPI_INT, right, -1, c, MPI_INFO_NULL, &bad));
  classes[E_NEG_PARTITIONS] =
      error_class(MPI_Psend_init(out, -1, TOTAL, MPI_INT, right, tag, c, MPI_INFO_NULL, &bad));
  classes[E_NEG_COUNT] =
      error_class(MPI_Psend_init(out, 1, -1, MPI_INT, right, tag, c, MPI_INFO_NULL, &bad));
  classes[E_NULL_TYPE] = error_class(
      MPI_Psend_init(out, 1, TOTAL, MPI_DATATYPE_NULL, right, tag, c, MPI_INFO_NULL, &bad));
  CHECK(bad == MPI_REQUEST_NULL, "an erroneous initialisation made a request");

  CHECK_MPI(MPI_Psend_init(out, SP, SC, MPI_INT, right, tag, c, MPI_INFO_NULL, &sreq));
  CHECK_MPI(MPI_Precv_init(in, RP, RC, MPI_INT, left, tag, c, MPI_INFO_NULL, &rreq));
  classes[E_PREADY_BEFORE] = error_class(MPI_Pready(0, sreq));
  classes[E_RANGE_BEFORE] = error_class(MPI_Pready_range(0, 1, sreq));
  classes[E_LIST_BEFORE] = error_class(MPI_Pready_list(2, list, sreq));
  parrived_inactive(rreq, range, "on a receive before its first start");
  classes[E_PREADY_ON_RECV] = error_class(MPI_Pready(0, rreq));
  fill(out, TOTAL, r, 90);
  CHECK_MPI(MPI_Start(&sreq));
  CHECK_MPI(MPI_Start(&rreq));
  classes[E_START_ACTIVE] = error_class(MPI_Start(&sreq));
  classes[E_PARRIVED_ON_SEND] = error_class(MPI_Parrived(sreq, 0, &flag));
  CHECK_MPI(MPI_Pready(1, sreq));
  if (range) {
    /* Misuse that MPICH does not check (or classes otherwise): ranges only. None of it may mark
     * a partition or break the round. */
    int dup[3] = {2, 3, 2}, outside[2] = {2, SP};
    CHECK(error_class(MPI_Pready(1, sreq)) == MPI_ERR_ARG, "Pready twice: not MPI_ERR_ARG");
    CHECK(error_class(MPI_Pready_range(0, 1, sreq)) == MPI_ERR_ARG,
          "Pready_range over a ready partition: not MPI_ERR_ARG");
    CHECK(error_class(MPI_Pready_list(3, dup, sreq)) == MPI_ERR_ARG,
          "Pready_list naming a partition twice: not MPI_ERR_ARG");
    CHECK(error_class(MPI_Pready_list(2, outside, sreq)) == MPI_ERR_ARG,
          "Pready_list outside the partitions: not MPI_ERR_ARG");
    CHECK(error_class(MPI_Pready(-1, sreq)) == MPI_ERR_ARG, "Pready(-1): not MPI_ERR_ARG");
    CHECK(error_class(MPI_Pready(SP, sreq)) == MPI_ERR_ARG, "Pready(SP): not MPI_ERR_ARG");
    CHECK(error_class(MPI_Pready_range(3, 2, sreq)) == MPI_ERR_ARG,
          "Pready_range(3, 2): not MPI_ERR_ARG");
    CHECK(error_class(MPI_Pready_list(-1, list, sreq)) == MPI_ERR_ARG,
          "Pready_list(-1): not MPI_ERR_ARG");
    CHECK(error_class(MPI_Parrived(rreq, RP, &flag)) == MPI_ERR_ARG,
          "Parrived(RP): not MPI_ERR_ARG");
    CHECK(error_class(MPI_Parrived(rreq, -1, &flag)) == MPI_ERR_ARG,
          "Parrived(-1): not MPI_ERR_ARG");
    CHECK_MPI(MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "the send completed with partitions not ready");
  }
  CHECK_MPI(MPI_Pready_list(2, (int[]){3, 0}, sreq));
  CHECK_MPI(MPI_Pready(2, sreq));
  CHECK_MPI(MPI_Wait(&rreq, &st));
  check_partitioned_status(&st, left, tag, TOTAL, "round after errors");
  check_data(in, 0, TOTAL, left, 90, "round after errors");
  CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
  classes[E_PREADY_AFTER] = error_class(MPI_Pready(0, sreq));
  parrived_inactive(rreq, range, "on a receive after its round");
  /* Waiting on an inactive partitioned request returns at once, with MPI's empty status on
   * ranges (MPICH 4.0.2 gives the last round's status again on its own communicators). */
  CHECK_MPI(MPI_Wait(&rreq, &st));
  CHECK(!range || (st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG),
        "inactive request: status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
  CHECK_MPI(MPI_Request_free(&sreq));
  CHECK_MPI(MPI_Request_free(&rreq));
}

static void run_all(MPI_Comm c, int range, int classes[E_COUNT]) {
  CHECK_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  rounds(c, range);
  isolation(c);
  init_order(c);
  large(c);
  errors(c, range, classes);
  if (range) proc_null(c);
  CHECK_MPI(MPI_Barrier(c));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  int wr, wp;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &wp);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int native[E_COUNT], ranged[E_COUNT];
  if (NATIVE_IS_ORACLE) {
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    run_all(dup, 0, native);
    CHECK_MPI(MPI_Comm_free(&dup));
    for (int k = 0; k < E_COUNT; ++k) {
      CHECK(native[k] != MPI_SUCCESS, "native: %s succeeded", error_names[k]);
      note("%s: class %d", error_names[k], native[k]);
    }
  } else {
    for (int k = 0; k < E_COUNT; ++k) native[k] = expected_classes[k];
  }
  if (MPIX_Comm_create_range == NULL) { /* the plain build without the library */
    shim_test_end();
    MPI_Finalize();
    if (wr == 0)
      printf("range_partitioned: %s on %d ranks (no library)\n",
             NATIVE_IS_ORACLE ? "native checks passed" : "nothing run natively on this MPI", wp);
    return 0;
  }
  MPI_Comm all, strided;
  CHECK_MPI(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, wp - 1, 1, &all));
  scope = "on a range";
  run_all(all, 1, ranged);
  for (int k = 0; k < E_COUNT; ++k) {
    CHECK(ranged[k] == native[k], "%s: class %d on a range, %d natively", error_names[k], ranged[k],
          native[k]);
    CHECK(ranged[k] == expected_classes[k], "%s: class %d on a range, %d expected", error_names[k],
          ranged[k], expected_classes[k]);
  }
  /* The odd world ranks (or rank 0 alone): a strided range of a range, size 1 at 2 ranks. */
  CHECK_MPI(MPIX_Comm_create_range(all, wp > 1 ? 1 : 0, wp - 1, 2, &strided));
  if (strided != MPI_COMM_NULL) {
    scope = "on a strided range";
    run_all(strided, 1, ranged);
    for (int k = 0; k < E_COUNT; ++k)
      CHECK(ranged[k] == native[k], "%s: class %d on a strided range, %d natively", error_names[k],
            ranged[k], native[k]);
    CHECK_MPI(MPI_Comm_free(&strided));
  }
  CHECK_MPI(MPI_Comm_free(&all));
  MPI_Barrier(MPI_COMM_WORLD);
  shim_test_end();
  MPI_Finalize();
  if (wr == 0) printf("range_partitioned: all checks passed on %d ranks\n", wp);
  return 0;
}
