/* count_mpi: a preloadable library that counts the calls of the real MPI library that send
 * messages. Loaded after librangecomm.so (LD_PRELOAD=librangecomm.so:libcount_mpi.so), it is
 * where librangecomm's own calls of PMPI_* land (the shim looks up the next definition), so a
 * test sees every message the library sends on the program's behalf:
 *   count_mpi_calls(&p2p, &collectives, &creations)
 * p2p: sends of every kind (a persistent send counts when started); collectives: blocking and
 * nonblocking collective calls on any communicator; creations: MPI's own communicator
 * creation calls. Each call forwards to the next definition (MPI's).
 *   count_mpi_nonblocking(&n)
 * n: the nonblocking collectives among them (on Open MPI each keeps libnbc's progress polled
 * until its communicator is freed). */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long g_p2p, g_coll, g_create, g_nonblocking;

void count_mpi_calls(long *p2p, long *collectives, long *creations) {
  *p2p = g_p2p;
  *collectives = g_coll;
  *creations = g_create;
}

void count_mpi_nonblocking(long *n) { *n = g_nonblocking; }

static void *next(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (f == NULL) {
    fprintf(stderr, "count_mpi: no %s after this library\n", name);
    abort();
  }
  return f;
}

/* COUNTED(count, name, parameters, arguments) defines PMPI_name running the statement `count`
 * and forwarding; FORWARD counts into one counter, FORWARD_NONBLOCKING a nonblocking collective
 * into the collectives and the nonblocking ones. */
#define COUNTED(count, name, params, args)                       \
  int PMPI_##name params {                                       \
    static int(*real) params = NULL;                             \
    if (real == NULL) real = (int(*) params)next("PMPI_" #name); \
    count;                                                       \
    return real args;                                            \
  }
#define FORWARD(counter, name, params, args) COUNTED(++counter, name, params, args)
#define FORWARD_NONBLOCKING(name, params, args) \
  COUNTED((++g_coll, ++g_nonblocking), name, params, args)

#define SEND(name)                                                                       \
  FORWARD(g_p2p, name, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c), \
          (b, n, t, d, g, c))
#define ISEND(name)                                                                         \
  FORWARD(g_p2p, name,                                                                      \
          (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *r), \
          (b, n, t, d, g, c, r))
SEND(Send)
SEND(Ssend)
SEND(Rsend)
SEND(Bsend)
ISEND(Isend)
ISEND(Issend)
ISEND(Irsend)
ISEND(Ibsend)
FORWARD(g_p2p, Start, (MPI_Request * r), (r))
FORWARD(g_p2p, Startall, (int n, MPI_Request *r), (n, r))
FORWARD(g_p2p, Sendrecv,
        (const void *sb, int sn, MPI_Datatype st, int d, int sg, void *rb, int rn, MPI_Datatype rt,
         int s, int rg, MPI_Comm c, MPI_Status *status),
        (sb, sn, st, d, sg, rb, rn, rt, s, rg, c, status))
FORWARD(g_p2p, Sendrecv_replace,
        (void *b, int n, MPI_Datatype t, int d, int sg, int s, int rg, MPI_Comm c,
         MPI_Status *status),
        (b, n, t, d, sg, s, rg, c, status))

FORWARD(g_coll, Barrier, (MPI_Comm c), (c))
FORWARD_NONBLOCKING(Ibarrier, (MPI_Comm c, MPI_Request *r), (c, r))
FORWARD(g_coll, Bcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c), (b, n, t, root, c))
FORWARD_NONBLOCKING(Ibcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *r),
                    (b, n, t, root, c, r))
FORWARD(g_coll, Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c),
        (s, r, n, t, op, c))
FORWARD_NONBLOCKING(Iallreduce,
                    (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                     MPI_Request *q),
                    (s, r, n, t, op, c, q))
FORWARD(g_coll, Reduce,
        (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c),
        (s, r, n, t, op, root, c))
FORWARD(g_coll, Allgather,
        (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c),
        (s, sn, st, r, rn, rt, c))
FORWARD_NONBLOCKING(Iallgather,
                    (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                     MPI_Comm c, MPI_Request *q),
                    (s, sn, st, r, rn, rt, c, q))
FORWARD(g_coll, Gather,
        (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
         MPI_Comm c),
        (s, sn, st, r, rn, rt, root, c))
FORWARD(g_coll, Alltoall,
        (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c),
        (s, sn, st, r, rn, rt, c))

FORWARD(g_create, Comm_dup, (MPI_Comm c, MPI_Comm *n), (c, n))
FORWARD(g_create, Comm_dup_with_info, (MPI_Comm c, MPI_Info i, MPI_Comm *n), (c, i, n))
FORWARD(g_create, Comm_idup, (MPI_Comm c, MPI_Comm *n, MPI_Request *r), (c, n, r))
#if MPI_VERSION >= 4
FORWARD(g_create, Comm_idup_with_info, (MPI_Comm c, MPI_Info i, MPI_Comm *n, MPI_Request *r),
        (c, i, n, r))
#endif
FORWARD(g_create, Comm_split, (MPI_Comm c, int color, int key, MPI_Comm *n), (c, color, key, n))
FORWARD(g_create, Comm_split_type, (MPI_Comm c, int type, int key, MPI_Info i, MPI_Comm *n),
        (c, type, key, i, n))
FORWARD(g_create, Comm_create, (MPI_Comm c, MPI_Group g, MPI_Comm *n), (c, g, n))
FORWARD(g_create, Comm_create_group, (MPI_Comm c, MPI_Group g, int tag, MPI_Comm *n),
        (c, g, tag, n))
