/* Argument fuzzer of the C API (linked with librangecomm.so): thousands of calls of the MPIX
 * functions and of wrapped MPI functions on fake handles, with random and boundary values for
 * ranks, strides, counts, tags, roots, datatypes, operations and handles (null, freed, never
 * made, valid). MPI_ERRORS_RETURN everywhere. Every call whose arguments hold a mistake must
 * return an error code of a standard class; calls that are entirely valid are only made where
 * they stay local (MPIX_Comm_create_range, rank/size, sends to MPI_PROC_NULL), so no call can
 * wait for another process. Never a crash, never a hang; fixed seed (argv[1], default 1),
 * argv[2] calls per rank (default 4000).
 *
 * Handles that were never made are derived from two live ones (the handle encoding is the
 * shim's business, so the test only assumes live handles of one kind are evenly spaced). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANGECOMM_WEAK_SYMBOLS /* the plain build gets the library by LD_PRELOAD only */
#include "rangecomm.h"

static unsigned long long state;

static unsigned next_random(void) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)(state >> 33);
}

static int pick(int n) { return (int)(next_random() % (unsigned)n); }

static int failures;
static long checked, errors_seen;

/* A call with a mistake in its arguments: an error code of a standard class, or a failure. */
static void expect_error(int rc, const char *what, int line) {
  ++checked;
  int cls = -1;
  if (rc == MPI_SUCCESS) {
    fprintf(stderr, "fuzz: line %d: %s accepted bad arguments\n", line, what);
    ++failures;
    return;
  }
  if (MPI_Error_class(rc, &cls) != MPI_SUCCESS || cls <= MPI_SUCCESS || cls > MPI_ERR_LASTCODE) {
    fprintf(stderr, "fuzz: line %d: %s returned %d, not an MPI error code (class %d)\n", line, what,
            rc, cls);
    ++failures;
  }
  ++errors_seen;
}

static void expect_success(int rc, const char *what, int line) {
  ++checked;
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "fuzz: line %d: valid %s failed: %s\n", line, what, text);
    ++failures;
  }
}

#define BAD(call) expect_error((call), #call, __LINE__)
#define GOOD(call) expect_success((call), #call, __LINE__)

/* Handle arithmetic for handles that were never made. */
static MPI_Comm comm_offset(MPI_Comm a, MPI_Comm b, long k) {
  uintptr_t va = 0, vb = 0, v;
  MPI_Comm out;
  memcpy(&va, &a, sizeof a);
  memcpy(&vb, &b, sizeof b);
  v = va + (uintptr_t)k * (vb - va);
  memcpy(&out, &v, sizeof out);
  return out;
}

enum { POOL = 8 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  state = (unsigned long long)(argc > 1 ? atol(argv[1]) : 1) * 1000003ull + (unsigned)me;
  long calls = argc > 2 ? atol(argv[2]) : 4000;

  /* Live ranges of the world: single-member ones, so every process makes its own. */
  MPI_Comm live[POOL];
  for (int i = 0; i < POOL; ++i) {
    GOOD(MPIX_Comm_create_range(MPI_COMM_WORLD, me, me, 1, &live[i]));
    MPI_Comm_set_errhandler(live[i], MPI_ERRORS_RETURN);
  }
  /* A freed handle, before anything else is made (its slot may be handed out again later,
   * after which no library can tell it from the new communicator). */
  {
    MPI_Comm freed, stale;
    int x;
    GOOD(MPIX_Comm_create_range(MPI_COMM_WORLD, me, me, 1, &freed));
    stale = freed;
    GOOD(MPI_Comm_free(&freed));
    BAD(MPI_Comm_rank(stale, &x));
    BAD(MPI_Send(&x, 1, MPI_INT, 0, 0, stale));
    BAD(MPI_Barrier(stale));
    BAD(MPIX_Comm_create_range(stale, 0, 0, 1, &freed));
    BAD(MPI_Comm_free(&stale));
  }
  MPI_Comm never = comm_offset(live[0], live[1], 100000);
  MPI_Comm bad_comms[3] = {MPI_COMM_NULL, never, comm_offset(live[0], live[1], 5000)};

  MPI_Datatype freed_type;
  MPI_Type_contiguous(2, MPI_INT, &freed_type);
  MPI_Type_commit(&freed_type);
  MPI_Type_free(&freed_type);
  int buf[64] = {0}, out[64] = {0};
  MPI_Request req;

  for (long n = 0; n < calls; ++n) {
    MPI_Comm c = live[pick(POOL)], bad = bad_comms[pick(3)];
    int size = 1, r = pick(12) - 4; /* -4 .. 7: negative, valid (0) and too large */
    MPI_Comm_size(c, &size);
    switch (pick(14)) {
      case 0: { /* MPIX_Comm_create_range: random first/last/stride on a valid parent */
        int first = pick(2 * p + 4) - 2, last = pick(2 * p + 4) - 2, stride = pick(5) - 1;
        MPI_Comm made = MPI_COMM_NULL;
        int valid = first >= 0 && last < p && first <= last && stride >= 1;
        int rc = MPIX_Comm_create_range(MPI_COMM_WORLD, first, last, stride, &made);
        if (valid) {
          /* the range may clash with a live one of this process: MPI_ERR_COMM, never a crash */
          int cls = MPI_SUCCESS;
          if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
          if (rc != MPI_SUCCESS && cls != MPI_ERR_COMM)
            expect_error(MPI_SUCCESS, "valid range", __LINE__);
          if (made != MPI_COMM_NULL) GOOD(MPI_Comm_free(&made));
        } else {
          BAD(rc);
        }
        break;
      }
      case 1:
        BAD(MPIX_Comm_create_range(bad, 0, 0, 1, &c));
        break;
      case 2: {
        int x;
        BAD(MPI_Comm_rank(bad, &x));
        BAD(MPI_Comm_size(bad, &x));
        break;
      }
      case 3: /* send: bad rank, tag, count or type on a valid range, or a bad communicator */
        switch (pick(5)) {
          case 0:
            if (r < 0 && r != MPI_PROC_NULL)
              BAD(MPI_Send(buf, 1, MPI_INT, r, 0, c));
            else if (r >= size)
              BAD(MPI_Send(buf, 1, MPI_INT, r, 0, c));
            break;
          case 1:
            BAD(MPI_Send(buf, 1, MPI_INT, MPI_PROC_NULL, -1 - pick(100), c));
            break;
          case 2:
            BAD(MPI_Send(buf, -1 - pick(100), MPI_INT, MPI_PROC_NULL, 0, c));
            break;
          case 3:
            BAD(MPI_Send(buf, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, c));
            break;
          default:
            BAD(MPI_Send(buf, 1, MPI_INT, 0, 0, bad));
            break;
        }
        break;
      case 4: /* nonblocking receive with a bad source, tag or communicator */
        req = MPI_REQUEST_NULL;
        if (pick(2))
          BAD(MPI_Irecv(out, 1, MPI_INT, size + pick(5), 0, c, &req));
        else
          BAD(MPI_Irecv(out, 1, MPI_INT, MPI_ANY_SOURCE, 0, bad, &req));
        if (req != MPI_REQUEST_NULL) BAD(MPI_SUCCESS); /* no request may be left behind */
        break;
      case 5: /* valid and local: a send to MPI_PROC_NULL completes at once */
        GOOD(MPI_Send(buf, pick(64), MPI_INT, MPI_PROC_NULL, pick(100), c));
        break;
      case 6:
        BAD(MPI_Bcast(buf, 1, MPI_INT, pick(2) ? size + pick(5) : -1 - pick(5), c));
        break;
      case 7:
        BAD(MPI_Allreduce(buf, out, 1, MPI_INT, MPI_OP_NULL, c));
        break;
      case 8:
        BAD(MPI_Reduce(buf, out, -1 - pick(50), MPI_INT, MPI_SUM, 0, c));
        break;
      case 9:
        BAD(MPI_Allgather(buf, 1, MPI_DATATYPE_NULL, out, 1, MPI_INT, c));
        break;
      case 10:
        BAD(MPI_Barrier(bad));
        break;
      case 11: { /* request handles that were never made or are stale */
        MPI_Request stale = MPI_REQUEST_NULL;
        GOOD(MPI_Isend(buf, 1, MPI_INT, MPI_PROC_NULL, 0, c, &stale));
        MPI_Request copy = stale;
        GOOD(MPI_Wait(&stale, MPI_STATUS_IGNORE));
        int flag = 0;
        if (copy != MPI_REQUEST_NULL) BAD(MPI_Test(&copy, &flag, MPI_STATUS_IGNORE));
        break;
      }
      case 12: {
        MPI_Comm f = bad;
        if (bad != MPI_COMM_NULL) BAD(MPI_Comm_free(&f));
        break;
      }
      default: { /* attributes and names on bad communicators */
        char name[MPI_MAX_OBJECT_NAME];
        int len = 0, flag = 0;
        void *v = NULL;
        if (bad != MPI_COMM_NULL) /* MPI 4.1 names MPI_COMM_NULL "MPI_COMM_NULL" (MPICH 4.2) */
          BAD(MPI_Comm_get_name(bad, name, &len));
        BAD(MPI_Comm_get_attr(bad, MPI_TAG_UB, &v, &flag));
        break;
      }
    }
  }
  for (int i = 0; i < POOL; ++i) GOOD(MPI_Comm_free(&live[i]));
  int total_failures = 0;
  MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0)
    printf(
        "fuzz: %ld calls checked on rank 0 (%ld errors returned as they should), "
        "%d failures on %d ranks\n",
        checked, errors_seen, total_failures, p);
  MPI_Finalize();
  return total_failures == 0 ? 0 : 1;
}
