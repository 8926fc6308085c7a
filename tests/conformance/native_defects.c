/* The MPI defects that the conformance generator leaves out (docs/conformance.md), each
 * reproduced on MPI's own communicators alone, without librangecomm: plain MPI, built with mpicc.
 *
 *   native_defects NAME [N]  runs one check (N: another size than the default); it prints "NAME:
 * defect: ..." and exits with 1 when the MPI underneath shows the defect, "NAME: as the standard
 * says" and 0 when it does not. A hang is a defect too: run it under timeout(1). native_defects
 * lists the checks and the rank counts they need.
 *
 * Every check computes the standard's answer itself (or takes it from the same MPI's blocking
 * call, MPI_Pack/MPI_Unpack) and compares. */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static int report(const char *name, int defect, const char *what) {
  int any = 0;
  MPI_Allreduce(&defect, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (defect) printf("%s: defect at rank %d: %s\n", name, rank, what);
  if (!any && rank == 0) printf("%s: as the standard says\n", name);
  fflush(stdout);
  return any;
}

/* A truncated receive may change only the receive buffer (MPI-4.0 3.2.4). n ints sent from
 * rank `from` to rank `to` (maybe itself), received with room for n - 1; the ints after the
 * buffer must stay as they were. */
static int truncated(const char *name, int n, int from, int to) {
  int defect = 0;
  char what[200] = "";
  int *buf = malloc(sizeof(int) * (size_t)(n + 8));
  for (int i = 0; i < n + 8; ++i) buf[i] = -1 - i;
  MPI_Request sreq = MPI_REQUEST_NULL;
  int *data = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i) data[i] = i;
  if (rank == from) MPI_Isend(data, n, MPI_INT, to, 0, MPI_COMM_WORLD, &sreq);
  if (rank == to) {
    MPI_Status st;
    int rc = MPI_Recv(buf, n - 1, MPI_INT, from, 0, MPI_COMM_WORLD, &st), cls = -1;
    MPI_Error_class(rc, &cls);
    for (int i = n - 1; i < n + 8 && !defect; ++i)
      if (buf[i] != -1 - i) {
        defect = 1;
        snprintf(what, sizeof what,
                 "%d ints into %d (%d bytes): int %d after the buffer became %d (error class %d)",
                 n, n - 1, 4 * n, i - (n - 1), buf[i], cls);
      }
  }
  MPI_Wait(&sreq, MPI_STATUS_IGNORE);
  free(buf);
  free(data);
  return report(name, defect, what);
}

/* Every process gives n ints to MPI_Allgatherv, rank 0 described as one element of a
 * contiguous type of n ints, the others as n MPI_INTs (the same type signature). */
static int allgatherv_mixed(const char *name, int n) {
  MPI_Datatype block;
  MPI_Type_contiguous(n, MPI_INT, &block);
  MPI_Type_commit(&block);
  int *send = malloc(sizeof(int) * (size_t)n), *recv = malloc(sizeof(int) * (size_t)n * size);
  int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
  for (int i = 0; i < n; ++i) send[i] = rank * n + i;
  for (int j = 0; j < size; ++j) counts[j] = n, displs[j] = j * n;
  MPI_Allgatherv(send, rank == 0 ? 1 : n, rank == 0 ? block : MPI_INT, recv, counts, displs,
                 MPI_INT, MPI_COMM_WORLD);
  int defect = 0;
  char what[200] = "";
  for (int i = 0; i < n * size && !defect; ++i)
    if (recv[i] != i) {
      defect = 1;
      snprintf(what, sizeof what, "int %d is %d", i, recv[i]);
    }
  MPI_Type_free(&block);
  free(send), free(recv), free(counts), free(displs);
  return report(name, defect, what);
}

/* One process: MPI_Alltoallw with a byte displacement of 16 and a type of extent 16. */
static int alltoallw_self(const char *name) {
  int send[16], recv[16];
  for (int i = 0; i < 16; ++i) send[i] = i, recv[i] = -1;
  MPI_Datatype four;
  MPI_Type_contiguous(4, MPI_INT, &four);
  MPI_Type_commit(&four);
  int one = 1, sd = 16, rd = 32;
  MPI_Alltoallw(send, &one, &sd, &four, recv, &one, &rd, &four, MPI_COMM_SELF);
  int defect = 0;
  char what[200] = "";
  for (int i = 0; i < 16 && !defect; ++i) {
    int want = i >= 8 && i < 12 ? i - 4 : -1;
    if (recv[i] != want) {
      defect = 1;
      snprintf(what, sizeof what, "int %d of the receive buffer is %d, want %d", i, recv[i], want);
    }
  }
  MPI_Type_free(&four);
  return report(name, defect, what);
}

/* User operations on elements g_extent bytes apart: the 2 x 2 matrix product (not commutative)
 * of 4 ints at byte offsets g_at[0..3] from an element's start, and a sum. */
static MPI_Aint g_at[4], g_extent;

static int *int_at(void *base, int e, int k) {
  return (int *)((char *)base + e * g_extent + g_at[k]);
}

/* The sum on elements of any number of ints at 16 bytes + 4 k, g_extent apart (the sum does
 * not care how the ints of one element are grouped). */
static void sum1(void *in, void *inout, int *len, MPI_Datatype *type) {
  int ints = 0;
  MPI_Type_size(*type, &ints);
  ints /= 4;
  for (int e = 0; e < *len; ++e)
    for (int k = 0; k < ints; ++k)
      *(int *)((char *)inout + e * g_extent + 16 + 4 * k) +=
          *(int *)((char *)in + e * g_extent + 16 + 4 * k);
}

static void matmul4(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  for (int e = 0; e < *len; ++e) {
    int a[4], b[4];
    for (int k = 0; k < 4; ++k) a[k] = *int_at(in, e, k), b[k] = *int_at(inout, e, k);
    int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                a[2] * b[1] + a[3] * b[3]};
    for (int k = 0; k < 4; ++k) *int_at(inout, e, k) = c[k];
  }
}

/* A reduction of `count` elements of a type whose `ints` ints lie 16 bytes into a struct (lower
 * bound 16), with a user sum (commutative): every int of the result must be the sum over the
 * processes.
 *   allreduce-lb: MPI_Allreduce.
 *   ireduce-lb:   MPI_Ireduce to root 1 (0 on one process), a null recvbuf off the root. The
 *                 defect seen there is not in the result: the root's temporary block is written
 *                 16 bytes (the lower bound) past its end, which shows as a crash of the root
 *                 later (here in MPI_Finalize), as an abort under glibc's checking allocator
 *                 (LD_PRELOAD=libc_malloc_debug.so.0 MALLOC_CHECK_=3, glibc 2.34 or later) or
 *                 as a heap-buffer-overflow under AddressSanitizer. */
static int reduce_lb(const char *name, int count, int ints, int to_root) {
  MPI_Datatype data, elem;
  MPI_Type_contiguous(ints, MPI_INT, &data);
  int blen = 1, root = size > 1 ? 1 : 0;
  MPI_Aint disp = 16;
  MPI_Type_create_struct(1, &blen, &disp, &data, &elem);
  MPI_Type_commit(&elem);
  MPI_Aint lb;
  MPI_Type_get_extent(elem, &lb, &g_extent);
  for (int k = 0; k < 4; ++k) g_at[k] = 16 + 4 * (k % ints);
  size_t bytes = (size_t)(lb + g_extent * count);
  char *in = malloc(bytes), *out = !to_root || rank == root ? malloc(bytes) : NULL;
  memset(in, 0x55, bytes);
  if (out) memset(out, 0x55, bytes);
  for (int e = 0; e < count; ++e)
    for (int k = 0; k < ints; ++k) *int_at(in, e, k) = rank + e + k;
  MPI_Op op;
  MPI_Op_create(sum1, 1, &op);
  if (to_root) {
    MPI_Request req;
    MPI_Ireduce(in, out, count, elem, op, root, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    MPI_Allreduce(in, out, count, elem, op, MPI_COMM_WORLD);
  }
  int defect = 0;
  char what[200] = "";
  for (int e = 0; out && e < count && !defect; ++e)
    for (int k = 0; k < ints && !defect; ++k) {
      int want = size * (e + k) + size * (size - 1) / 2, got = *int_at(out, e, k);
      if (got != want) {
        defect = 1;
        snprintf(what, sizeof what, "element %d int %d is %d, want %d", e, k, got, want);
      }
    }
  MPI_Op_free(&op);
  MPI_Type_free(&data);
  MPI_Type_free(&elem);
  free(in), free(out);
  return report(name, defect, what);
}

/* n elements of (short, int) sent as a struct type {short at 0, int at 4} and received as
 * MPI_SHORT_INT, rank 0 to rank 1 (or to itself on one process): the same type signature. */
static int short_int(const char *name, int n) {
  struct si {
    short s;
    int i;
  };
  MPI_Datatype st;
  int blens[2] = {1, 1};
  MPI_Aint disps[2] = {0, 4};
  MPI_Datatype types[2] = {MPI_SHORT, MPI_INT};
  MPI_Type_create_struct(2, blens, disps, types, &st);
  MPI_Datatype sized;
  MPI_Type_create_resized(st, 0, sizeof(struct si), &sized);
  MPI_Type_commit(&sized);
  struct si *send = calloc((size_t)n, sizeof *send), *recv = calloc((size_t)n, sizeof *recv);
  for (int i = 0; i < n; ++i) send[i].s = (short)(i % 1000), send[i].i = 7 * i;
  int to = size > 1 ? 1 : 0, defect = 0;
  char what[200] = "";
  MPI_Request q = MPI_REQUEST_NULL;
  if (rank == 0) MPI_Isend(send, n, sized, to, 0, MPI_COMM_WORLD, &q);
  if (rank == to) {
    int rc = MPI_Recv(recv, n, MPI_SHORT_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), cls = 0;
    MPI_Error_class(rc, &cls);
    if (rc != MPI_SUCCESS) {
      defect = 1;
      snprintf(what, sizeof what, "%d elements (%zu bytes): error class %d", n, n * sizeof *send,
               cls);
    }
    for (int i = 0; i < n && !defect; ++i)
      if (recv[i].s != send[i].s || recv[i].i != send[i].i) {
        defect = 1;
        snprintf(what, sizeof what, "element %d is (%d, %d)", i, recv[i].s, recv[i].i);
      }
  }
  int rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS && !defect) {
    defect = 1;
    snprintf(what, sizeof what, "the send failed");
  }
  MPI_Type_free(&sized);
  MPI_Type_free(&st);
  free(send), free(recv);
  return report(name, defect, what);
}

/* One process: MPI_Allgatherv into displacement 5. */
static int allgatherv_self(const char *name) {
  int send[3] = {10, 11, 12}, recv[10], count = 3, displ = 5, defect = 0;
  char what[200] = "";
  for (int i = 0; i < 10; ++i) recv[i] = -1;
  MPI_Allgatherv(send, 3, MPI_INT, recv, &count, &displ, MPI_INT, MPI_COMM_SELF);
  for (int i = 0; i < 10 && !defect; ++i) {
    int want = i >= 5 && i < 8 ? 10 + i - 5 : -1;
    if (recv[i] != want) {
      defect = 1;
      snprintf(what, sizeof what, "int %d is %d, want %d", i, recv[i], want);
    }
  }
  return report(name, defect, what);
}

/* MPI_Reduce_scatter_block with the non-commutative matrix product on elements of 4 ints with
 * gaps (a vector of 2 blocks of 2 ints, stride 3: ints at 0, 1, 3, 4), `per` elements per
 * process, against the same MPI's MPI_Reduce (which combines in rank order too) followed by
 * MPI_Scatter. */
static int reduce_scatter_gapped(const char *name, int per) {
  MPI_Datatype vec, elem;
  MPI_Type_vector(2, 2, 3, MPI_INT, &vec);
  MPI_Type_create_resized(vec, 0, 24, &elem); /* a gap after the data too */
  MPI_Type_commit(&elem);
  g_extent = 24;
  g_at[0] = 0, g_at[1] = 4, g_at[2] = 12, g_at[3] = 16;
  int n = per * size, ints = 6 * n;
  int *in = malloc(sizeof(int) * ints), *out = malloc(sizeof(int) * ints);
  int *full = malloc(sizeof(int) * ints), *mine = malloc(sizeof(int) * ints);
  for (int i = 0; i < ints; ++i)
    in[i] = (rank * 31 + i * 7) % 5 - 2, out[i] = mine[i] = full[i] = -99;
  MPI_Op op;
  MPI_Op_create(matmul4, 0, &op);
  MPI_Reduce_scatter_block(in, out, per, elem, op, MPI_COMM_WORLD);
  MPI_Reduce(in, full, n, elem, op, 0, MPI_COMM_WORLD);
  MPI_Scatter(full, per, elem, mine, per, elem, 0, MPI_COMM_WORLD);
  int defect = 0;
  char what[200] = "";
  for (int i = 0; i < 6 * per && !defect; ++i)
    if (out[i] != mine[i]) {
      defect = 1;
      snprintf(what, sizeof what, "int %d is %d, MPI_Reduce + MPI_Scatter give %d", i, out[i],
               mine[i]);
    }
  MPI_Op_free(&op);
  MPI_Type_free(&vec);
  MPI_Type_free(&elem);
  free(in), free(out), free(full), free(mine);
  return report(name, defect, what);
}

/* MPI_Bcast of n ints from rank 0, the root describing them as n MPI_INTs, the others as one
 * element of a contiguous type of n ints (the same type signature). */
static int bcast_mixed(const char *name, int n) {
  MPI_Datatype block;
  MPI_Type_contiguous(n, MPI_INT, &block);
  MPI_Type_commit(&block);
  int *buf = malloc(sizeof(int) * (size_t)n), defect = 0;
  char what[200] = "";
  for (int i = 0; i < n; ++i) buf[i] = rank == 0 ? i : -1;
  MPI_Bcast(buf, rank == 0 ? n : 1, rank == 0 ? MPI_INT : block, 0, MPI_COMM_WORLD);
  for (int i = 0; i < n && !defect; ++i)
    if (buf[i] != i) {
      defect = 1;
      snprintf(what, sizeof what, "int %d is %d", i, buf[i]);
    }
  MPI_Type_free(&block);
  free(buf);
  return report(name, defect, what);
}

/* MPI_Allgatherv of `units` MPI_2INT per process (a multiple of 8), every process describing
 * its data as elements of 8 (int, int) pairs: rank 1 with gaps between the pairs when `gapped`
 * (a vector of 8 blocks of 1 with stride 2), the others contiguously; every receive type
 * contiguous, blocks at displacements 0, blocks + 1, 2 blocks + 2 (elements). */
static int allgatherv_2int(const char *name, int units, int gapped) {
  MPI_Datatype dense, sparse, sparse_sized;
  MPI_Type_contiguous(8, MPI_2INT, &dense);
  MPI_Type_commit(&dense);
  MPI_Type_vector(8, 1, 2, MPI_2INT, &sparse);
  MPI_Type_create_resized(sparse, 0, 8 * 2 * 8, &sparse_sized); /* 32 ints */
  MPI_Type_commit(&sparse_sized);
  int elems = units / 8, stride = gapped && rank == 1 ? 32 : 16; /* ints per element */
  int *send = malloc(sizeof(int) * (size_t)stride * elems);
  for (int i = 0; i < stride * elems; ++i) send[i] = -7;
  for (int e = 0; e < elems; ++e)
    for (int u = 0; u < 8; ++u)
      for (int k = 0; k < 2; ++k) {
        int at = gapped && rank == 1 ? e * 32 + u * 4 + k : e * 16 + u * 2 + k;
        send[at] = rank * 1000000 + (e * 8 + u) * 2 + k;
      }
  int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
  for (int j = 0; j < size; ++j) counts[j] = elems, displs[j] = j * (elems + 1);
  size_t total = (size_t)16 * (size * (elems + 1));
  int *recv = malloc(sizeof(int) * total);
  for (size_t i = 0; i < total; ++i) recv[i] = -1;
  MPI_Datatype stype = gapped && rank == 1 ? sparse_sized : dense, one = MPI_DATATYPE_NULL;
  MPI_Datatype made = MPI_DATATYPE_NULL;
  char *zsend = NULL;
  void *from = send;
  if (gapped == 2 && rank == 1) {
    /* one (int, int) after an empty block: indexed(blens 0, 1, displacements 3, 0), then 8 of
     * those as hindexed(blens 1, 1, 4, 0, 2) with 16-byte gaps; filled through MPI_Unpack */
    int blens[2] = {0, 1}, at[2] = {3, 0};
    MPI_Type_indexed(2, blens, at, MPI_2INT, &one);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(one, &lb, &ext);
    int hb[5] = {1, 1, 4, 0, 2}, gaps[5] = {2, 1, 1, 0, 1};
    MPI_Aint hd[5], cursor = 0;
    for (int b = 0; b < 5; ++b) {
      cursor += 16 * gaps[b];
      hd[b] = cursor - lb;
      cursor = (cursor + hb[b] * ext + 15) / 16 * 16;
    }
    MPI_Type_create_hindexed(5, hb, hd, one, &made);
    MPI_Type_commit(&made);
    MPI_Type_get_extent(made, &lb, &ext);
    zsend = calloc((size_t)(ext * elems + 64), 1);
    from = zsend - lb;
    int pos = 0;
    int *values = malloc(sizeof(int) * 16 * (size_t)elems);
    for (int i = 0; i < 16 * elems; ++i) values[i] = rank * 1000000 + i;
    MPI_Unpack(values, 64 * elems, &pos, from, elems, made, MPI_COMM_SELF);
    free(values);
    stype = made;
  }
  MPI_Allgatherv(from, elems, stype, recv, counts, displs, dense, MPI_COMM_WORLD);
  if (made != MPI_DATATYPE_NULL) MPI_Type_free(&made), MPI_Type_free(&one);
  free(zsend);
  int defect = 0;
  char what[200] = "";
  for (int j = 0; j < size && !defect; ++j)
    for (int i = 0; i < 16 * elems && !defect; ++i) {
      int got = recv[(size_t)16 * displs[j] + i], want = j * 1000000 + i;
      if (got != want) {
        defect = 1;
        snprintf(what, sizeof what, "block %d int %d is %d, want %d", j, i, got, want);
      }
    }
  MPI_Type_free(&dense);
  MPI_Type_free(&sparse);
  MPI_Type_free(&sparse_sized);
  free(send), free(recv), free(counts), free(displs);
  return report(name, defect, what);
}

/* MPI_Allgatherv of `units` MPI_2INT per process, sent contiguously; rank 0 receives every
 * (int, int) pair with an 8-byte gap after it (MPI_2INT resized to 16 bytes), the others
 * contiguously. The type signatures agree everywhere; only the receive extents differ, which
 * MPI allows. */
static int allgatherv_extents(const char *name, int units) {
  MPI_Datatype spaced;
  MPI_Type_create_resized(MPI_2INT, 0, 16, &spaced);
  MPI_Type_commit(&spaced);
  const int ints = rank == 0 ? 4 : 2; /* ints per received pair, the gap included */
  int *send = malloc(sizeof(int) * 2 * (size_t)units);
  for (int i = 0; i < 2 * units; ++i) send[i] = rank * 1000000 + i;
  int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
  for (int j = 0; j < size; ++j) counts[j] = units, displs[j] = j * units;
  size_t total = (size_t)ints * units * size;
  int *recv = malloc(sizeof(int) * total);
  for (size_t i = 0; i < total; ++i) recv[i] = -1;
  MPI_Allgatherv(send, units, MPI_2INT, recv, counts, displs, rank == 0 ? spaced : MPI_2INT,
                 MPI_COMM_WORLD);
  int defect = 0;
  char what[200] = "";
  for (int j = 0; j < size && !defect; ++j)
    for (int u = 0; u < units && !defect; ++u)
      for (int k = 0; k < ints && !defect; ++k) {
        int got = recv[(size_t)ints * (displs[j] + u) + k];
        int want = k < 2 ? j * 1000000 + 2 * u + k : -1; /* the gap stays as it was */
        if (got != want) {
          defect = 1;
          snprintf(what, sizeof what, "block %d pair %d int %d is %d, want %d", j, u, k, got, want);
        }
      }
  MPI_Type_free(&spaced);
  free(send), free(recv), free(counts), free(displs);
  return report(name, defect, what);
}

/* Runs body(&t) in n threads at once (t = 0..n-1, n <= 8) and waits for all of them. */
static void in_threads(int n, void *(*body)(void *)) {
  pthread_t threads[8];
  int ids[8];
  for (int t = 0; t < n; ++t) {
    ids[t] = t;
    pthread_create(&threads[t], NULL, body, &ids[t]);
  }
  for (int t = 0; t < n; ++t) pthread_join(threads[t], NULL);
}

/* MPI_Comm_idup and then another nonblocking collective on the same parent, completed together,
 * in 3 threads at once, each on its own parent (a duplicate of MPI_COMM_WORLD); every other
 * round one of them first splits its parent. MPI orders nonblocking collectives on one
 * communicator by the order of their calls, an idup's included; the all-reduction must sum
 * the ones of every process. */
enum { kIdupThreads = 3 };
static MPI_Comm idup_parent[kIdupThreads];
static int idup_rounds, idup_bad[kIdupThreads], idup_sum[kIdupThreads];

static void *idup_beside_iallreduce(void *arg) {
  const int t = *(const int *)arg;
  for (int i = 0; i < idup_rounds; ++i) {
    MPI_Comm dup, split;
    MPI_Request rq[2];
    MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: gcc 12 misreads MPICH's as an empty array */
    int one = 1, sum = 0;
    if (t > 0 && i % 2) {
      MPI_Comm_split(idup_parent[t], rank % 2, -rank, &split);
      MPI_Comm_free(&split);
    }
    MPI_Comm_idup(idup_parent[t], &dup, &rq[0]);
    MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, idup_parent[t], &rq[1]);
    MPI_Waitall(2, rq, st);
    if (sum != size && idup_bad[t]++ == 0) idup_sum[t] = sum;
    MPI_Comm_free(&dup);
  }
  return NULL;
}

static int idup_overlap(const char *name, int rounds) {
  int defect = 0;
  char what[200] = "";
  idup_rounds = rounds;
  for (int t = 0; t < kIdupThreads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &idup_parent[t]);
  in_threads(kIdupThreads, idup_beside_iallreduce);
  for (int t = 0; t < kIdupThreads; ++t) {
    if (idup_bad[t] && !defect)
      snprintf(what, sizeof what,
               "%d of %d all-reductions beside an idup were wrong (thread %d: "
               "%d, want %d)",
               idup_bad[t], rounds, t, idup_sum[t], size);
    defect |= idup_bad[t] != 0;
    MPI_Comm_free(&idup_parent[t]);
  }
  return report(name, defect, what);
}

/* MPI_Comm_idup in one thread while two others duplicate and free their own parents (each a
 * duplicate of MPI_COMM_WORLD), for a number of rounds: MPI allows creations on different
 * communicators at once, and each new communicator needs a context id of its own. A process
 * that aborts (two creations given one id) or hangs shows the defect (run it under timeout). */
enum { kCidThreads = 3 };
static MPI_Comm cid_parent[kCidThreads];
static int cid_rounds, cid_bad[kCidThreads];

static void *creating_in_thread(void *arg) {
  const int t = *(const int *)arg;
  for (int i = 0; i < cid_rounds; ++i) {
    MPI_Comm dup;
    if (t == 0) {
      MPI_Request rq;
      MPI_Comm_idup(cid_parent[t], &dup, &rq);
      MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else {
      MPI_Comm_dup(cid_parent[t], &dup);
    }
    int result = MPI_UNEQUAL;
    MPI_Comm_compare(dup, cid_parent[t], &result);
    cid_bad[t] += result != MPI_CONGRUENT;
    MPI_Comm_free(&dup);
  }
  return NULL;
}

static int idup_context_ids(const char *name, int rounds) {
  int defect = 0;
  char what[200] = "";
  cid_rounds = rounds;
  for (int t = 0; t < kCidThreads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &cid_parent[t]);
  in_threads(kCidThreads, creating_in_thread);
  for (int t = 0; t < kCidThreads; ++t) {
    if (cid_bad[t] && !defect)
      snprintf(what, sizeof what, "thread %d: %d of %d duplicates not congruent with the parent", t,
               cid_bad[t], rounds);
    defect |= cid_bad[t] != 0;
    MPI_Comm_free(&cid_parent[t]);
  }
  return report(name, defect, what);
}

/* MPI_Intercomm_create in 4 threads at once, each over its own peer (a duplicate of
 * MPI_COMM_WORLD) with the same tag, as MPI allows because the peers differ (MPI-4.0 7.6.2);
 * each thread's local communicator is a duplicate of its half of the world, and the right half
 * makes its threads' duplicates in the reverse order of the left half's, so the context ids of
 * the two sides' local communicators are ordered oppositely; each thread repeats it for a number
 * of rounds. Nothing in MPI ties the calls of different threads together, so all must complete;
 * each intercommunicator's remote group must be the other half. A hang is the defect (run it
 * under timeout). */
enum { kOrderThreads = 4 };
static MPI_Comm order_local[kOrderThreads], order_peer[kOrderThreads];
static int order_rounds, order_bad[kOrderThreads], order_remote[kOrderThreads];

static void *intercomm_in_thread(void *arg) {
  const int t = *(const int *)arg, left = rank < size / 2;
  const int want = left ? size - size / 2 : size / 2;
  for (int i = 0; i < order_rounds; ++i) {
    MPI_Comm inter;
    int remote = 0;
    MPI_Intercomm_create(order_local[t], 0, order_peer[t], left ? size / 2 : 0, 7, &inter);
    MPI_Comm_remote_size(inter, &remote);
    if (remote != want && order_bad[t]++ == 0) order_remote[t] = remote;
    MPI_Comm_free(&inter);
  }
  return NULL;
}

static int intercomm_order(const char *name, int rounds) {
  const int left = rank < size / 2;
  MPI_Comm half;
  int defect = 0;
  char what[200] = "";
  order_rounds = rounds;
  MPI_Comm_split(MPI_COMM_WORLD, left, rank, &half);
  for (int t = 0; t < kOrderThreads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &order_peer[t]);
  for (int i = 0; i < kOrderThreads; ++i)
    MPI_Comm_dup(half, &order_local[left ? i : kOrderThreads - 1 - i]);
  in_threads(kOrderThreads, intercomm_in_thread);
  for (int t = 0; t < kOrderThreads; ++t) {
    if (order_bad[t] && !defect)
      snprintf(what, sizeof what, "thread %d: %d of %d remote groups wrong (one of %d processes)",
               t, order_bad[t], rounds, order_remote[t]);
    defect |= order_bad[t] != 0;
    MPI_Comm_free(&order_local[t]);
    MPI_Comm_free(&order_peer[t]);
  }
  MPI_Comm_free(&half);
  return report(name, defect, what);
}

/* Nonblocking collectives in 4 threads at once, each on communicators of its own that it makes,
 * uses once and frees, round after round (each a duplicate of MPI_COMM_SELF, so that nothing
 * crosses processes). Every started operation must complete (MPI-4.0 6.12). Open MPI's libnbc
 * counts the communicators that have run one and takes its progress function out of MPI's
 * progress loop when the count drops to zero at a free; a thread whose count went from zero to
 * one in between finds it still there and does not put it back, so its operation is never
 * advanced. The check waits up to 10 s for each; one that is still pending is the defect (the
 * other threads then stop; MPI_Finalize does not wait for it). PIN=1 first runs
 * one such operation on MPI_COMM_SELF, which lives until MPI_Finalize, so that the count never
 * drops to zero (what the library does under MPI_THREAD_MULTIPLE on Open MPI). */
enum { kNbcThreads = 4 };
static int nbc_rounds, nbc_stuck[kNbcThreads], nbc_bad[kNbcThreads];
static atomic_int nbc_stop;

static int nbc_self_alltoall(MPI_Comm c, int *bad) {
  int out = rank + 7, in = -1, done = 0;
  MPI_Request rq;
  MPI_Ialltoall(&out, 1, MPI_INT, &in, 1, MPI_INT, c, &rq);
  for (const double until = MPI_Wtime() + 10; !done && MPI_Wtime() < until;)
    MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
  if (done && in != out) ++*bad;
  return done;
}

static void *nbc_in_thread(void *arg) {
  const int t = *(const int *)arg;
  for (int i = 0; i < nbc_rounds && !nbc_stop; ++i) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_SELF, &c);
    if (!nbc_self_alltoall(c, &nbc_bad[t])) {
      nbc_stuck[t] = i + 1;
      nbc_stop = 1;
      return NULL; /* c stays: its operation is pending */
    }
    MPI_Comm_free(&c);
  }
  return NULL;
}

static int nbc_progress(const char *name, int rounds, int pin) {
  int defect = 0;
  char what[200] = "";
  nbc_rounds = rounds;
  if (pin && !nbc_self_alltoall(MPI_COMM_SELF, &nbc_bad[0])) return report(name, 1, "pin hung");
  in_threads(kNbcThreads, nbc_in_thread);
  for (int t = 0; t < kNbcThreads; ++t) {
    if ((nbc_stuck[t] || nbc_bad[t]) && !defect)
      snprintf(what, sizeof what,
               nbc_stuck[t] ? "thread %d: the Ialltoall of round %d did not complete in 10 s"
                            : "thread %d: %d Ialltoall results wrong",
               t, nbc_stuck[t] ? nbc_stuck[t] : nbc_bad[t]);
    defect |= nbc_stuck[t] || nbc_bad[t];
  }
  return report(name, defect, what);
}

/* Intercommunicators made, merged and freed in 4 threads at once (MPI-4.0 7.6.2), each thread
 * over a peer of its own, a duplicate of the world. Each round a thread splits its peer into the
 * two halves (one split: both sides' local communicators share one context id, which keeps clear
 * of intercomm-order above), having made two communicators on a channel all threads share
 * (MPI_Comm_create_group, a tag each) just before that it frees after, so that the
 * intercommunicator often takes a context id below its local communicator's; then it merges the
 * intercommunicator, all-reduces over the merge and frees both. Open MPI gives an
 * intercommunicator whose id is below its local communicator's an extra reference (so that
 * MPI_Finalize, which frees communicators in the order of their ids, cannot free the local one
 * first), and its ompi_comm_free drops that reference by freeing whatever communicator holds the
 * id after the first release: the intercommunicator itself, unless that release destroyed it and
 * another thread's creation took the id in between (the lowest free one) for its new
 * communicator or, while it agrees on the id, for the parent it is made from. That communicator
 * loses a reference it never gave and is destroyed in use: the process ends in a SEGV, or a
 * call returns an error, which is the defect. Every call must succeed, every intercommunicator's
 * remote group be the other half and every merge's sum the world's size. */
enum { kFreeThreads = 4 };
static MPI_Comm free_peer[kFreeThreads], free_channel;
static MPI_Group free_world;
static int free_rounds, free_bad[kFreeThreads], free_value[kFreeThreads];
static const char *free_what[kFreeThreads];

static void free_wrong(int t, const char *what, int value) {
  if (free_bad[t]++ == 0) free_what[t] = what, free_value[t] = value;
}

/* A call's error (the communicators take MPI_ERRORS_RETURN from the world) is a wrong round. */
static void free_call(int t, int rc) {
  int error_class = rc;
  if (rc == MPI_SUCCESS) return;
  MPI_Error_class(rc, &error_class);
  free_wrong(t, "an MPI error of class", error_class);
}

static void *intercomm_free_in_thread(void *arg) {
  const int t = *(const int *)arg, left = rank < size / 2;
  const int want = left ? size - size / 2 : size / 2;
  for (int i = 0; i < free_rounds; ++i) {
    MPI_Comm below[2], local, inter, merged;
    int remote = 0, one = 1, sum = 0;
    free_call(t, MPI_Comm_create_group(free_channel, free_world, 2 * t, &below[0]));
    free_call(t, MPI_Comm_create_group(free_channel, free_world, 2 * t + 1, &below[1]));
    free_call(t, MPI_Comm_split(free_peer[t], left, rank, &local));
    free_call(t, MPI_Comm_free(&below[0]));
    free_call(t, MPI_Comm_free(&below[1]));
    free_call(t, MPI_Intercomm_create(local, 0, free_peer[t], left ? size / 2 : 0, 7, &inter));
    free_call(t, MPI_Comm_remote_size(inter, &remote));
    if (remote != want) free_wrong(t, "a remote group of", remote);
    free_call(t, MPI_Intercomm_merge(inter, !left, &merged));
    free_call(t, MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
    if (sum != size) free_wrong(t, "a merge's sum", sum);
    free_call(t, MPI_Comm_free(&merged));
    free_call(t, MPI_Comm_free(&inter));
    free_call(t, MPI_Comm_free(&local));
  }
  return NULL;
}

static int intercomm_free(const char *name, int rounds) {
  int defect = 0;
  char what[200] = "";
  free_rounds = rounds;
  MPI_Comm_dup(MPI_COMM_WORLD, &free_channel);
  MPI_Comm_group(MPI_COMM_WORLD, &free_world);
  for (int t = 0; t < kFreeThreads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &free_peer[t]);
  in_threads(kFreeThreads, intercomm_free_in_thread);
  for (int t = 0; t < kFreeThreads; ++t) {
    if (free_bad[t] && !defect)
      snprintf(what, sizeof what, "thread %d: %d of %d rounds wrong (%s %d)", t, free_bad[t],
               rounds, free_what[t], free_value[t]);
    defect |= free_bad[t] != 0;
    MPI_Comm_free(&free_peer[t]);
  }
  MPI_Comm_free(&free_channel);
  MPI_Group_free(&free_world);
  return report(name, defect, what);
}

struct check {
  const char *name, *ranks, *about;
};
/* MPI_Isendrecv_replace receiving from MPI_ANY_SOURCE (MPI-4.0 3.10): every process sends to
 * its successor in a ring and receives from any source; the status must name the predecessor,
 * on MPI_COMM_WORLD and on a communicator of the world's processes in reverse order. */
static int isendrecv_replace_any(const char *name) {
#if MPI_VERSION >= 4
  MPI_Comm reversed;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  int defect = 0;
  char what[200] = "";
  for (int pass = 0; pass < 2; ++pass) { /* both passes everywhere: they are collective */
    MPI_Comm c = pass ? reversed : MPI_COMM_WORLD;
    int r = 0;
    MPI_Comm_rank(c, &r);
    const int to = (r + 1) % size, from = (r + size - 1) % size;
    int buf[4] = {r, r, r, r};
    MPI_Status st;
    MPI_Request q;
    MPI_Isendrecv_replace(buf, 4, MPI_INT, to, 7, MPI_ANY_SOURCE, 7, c, &q);
    MPI_Wait(&q, &st);
    if (!defect && (st.MPI_SOURCE != from || buf[0] != from || buf[3] != from)) {
      defect = 1;
      snprintf(what, sizeof what, "%s: MPI_SOURCE %d and data %d, the sender is %d",
               pass ? "reversed world" : "MPI_COMM_WORLD", st.MPI_SOURCE, buf[0], from);
    }
  }
  MPI_Comm_free(&reversed);
  return report(name, defect, what);
#else
  return report(name, 0, ""); /* MPI_Isendrecv_replace is MPI-4 */
#endif
}

/* MPI_Waitany and MPI_Testany complete one active request each (MPI-4.0 3.7.5), also when it
 * ends in an error. Rank 0 sends two messages of 4 ints to the last rank, which receives each
 * with room for 3 (two truncations) and, once both have arrived, completes them one call at a
 * time: each call must return one of them with MPI_ERR_TRUNCATE, and the third none. */
static int any_errors(const char *name, int wait) {
  int defect = 0;
  char what[200] = "";
  const int to = size - 1;
  int out[4] = {1, 2, 3, 4};
  if (rank == 0) {
    MPI_Send(out, 4, MPI_INT, to, 1, MPI_COMM_WORLD);
    MPI_Send(out, 4, MPI_INT, to, 2, MPI_COMM_WORLD);
  }
  if (rank == to) {
    int in[2][3];
    MPI_Request q[2];
    MPI_Irecv(in[0], 3, MPI_INT, 0, 1, MPI_COMM_WORLD, &q[0]);
    MPI_Irecv(in[1], 3, MPI_INT, 0, 2, MPI_COMM_WORLD, &q[1]);
    int both = 0; /* both arrived: probing for a third that never comes progresses them */
    for (int spins = 0; spins < 1000000 && !both; ++spins) {
      int flag = 0;
      MPI_Iprobe(0, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      MPI_Request_get_status(q[1], &both, MPI_STATUS_IGNORE);
      if (both) MPI_Request_get_status(q[0], &both, MPI_STATUS_IGNORE);
    }
    int reported[2] = {0, 0};
    for (int call = 0; call < 3; ++call) {
      int idx = MPI_UNDEFINED, flag = 0, rc, cls = MPI_SUCCESS;
      MPI_Status st;
      if (wait)
        rc = MPI_Waitany(2, q, &idx, &st);
      else
        do rc = MPI_Testany(2, q, &idx, &flag, &st);
        while (rc == MPI_SUCCESS && !flag);
      MPI_Error_class(rc, &cls);
      if (call < 2 && (idx < 0 || idx > 1 || reported[idx] || cls != MPI_ERR_TRUNCATE)) {
        defect = 1;
        snprintf(what, sizeof what, "call %d of MPI_%s returned index %d, error class %d (%s)",
                 call + 1, wait ? "Waitany" : "Testany", idx, cls,
                 idx == MPI_UNDEFINED ? "the other truncated receive was freed unreported"
                                      : "expected the other request and MPI_ERR_TRUNCATE");
        break;
      }
      if (call < 2) reported[idx] = 1;
      if (call == 2 && idx != MPI_UNDEFINED) {
        defect = 1;
        snprintf(what, sizeof what, "a third call returned index %d", idx);
      }
    }
    for (int i = 0; i < 2; ++i)
      if (q[i] != MPI_REQUEST_NULL) MPI_Request_free(&q[i]);
  }
  return report(name, defect, what);
}

static const struct check checks[] = {
    {"trunc-self", "1", "a truncated receive to self, 255 ints into 254 [or N into N - 1]"},
    {"trunc-eager", "2", "a truncated receive of 1024 ints (4096 bytes) into 1023 [N]"},
    {"trunc-rendezvous", "2", "a truncated receive of 20000 ints (80000 bytes) into 19999"},
    {"allgatherv-mixed", "3+", "Allgatherv of 16384 ints per process, rank 0 as one element"},
    {"alltoallw-self", "1", "one-process Alltoallw, byte displacements 16 and 32"},
    {"allreduce-lb", "2+", "Allreduce of 65536 ints [N [INTS]], lower bound 16, user sum"},
    {"ireduce-lb", "3+", "Ireduce of 82 elements [N [INTS]] of 3 ints, lower bound 16, root 1"},
    {"short-int", "1+", "4096 (short, int) as a struct, received as MPI_SHORT_INT (32 KiB)"},
    {"allgatherv-self", "1", "one-process Allgatherv into displacement 5"},
    {"reduce-scatter-gapped", "2, 4", "Reduce_scatter_block, matrix product on gapped elements"},
    {"allgatherv-2int", "3", "Allgatherv of 5560 MPI_2INT [N [GAPPED]], rank 1 with gaps"},
    {"bcast-mixed", "2+", "Bcast of 262144 ints, the root as ints, the others as one element"},
    {"allgatherv-extents", "3", "Allgatherv of 5560 MPI_2INT [N], rank 0 receiving with gaps"},
    {"idup-overlap", "3", "3 threads: Comm_idup and Iallreduce on one parent [N rounds: 2000]"},
    {"idup-context-ids", "1+", "3 threads: Comm_idup beside Comm_dup and free [N rounds: 3000]"},
    {"isendrecv-replace-any", "3+", "Isendrecv_replace in a ring from MPI_ANY_SOURCE (MPI-4)"},
    {"intercomm-order", "2+",
     "4 threads: Intercomm_create, local ids ordered apart [N rounds: 20]"},
    {"intercomm-free", "2+", "4 threads: Intercomm_create below its local id, free [N: 300]"},
    {"nbc-progress", "1+", "4 threads: dup SELF, Ialltoall, free [N rounds: 400000 [PIN]]"},
    {"testany-errors", "2+", "two truncated receives completed by MPI_Testany"},
    {"waitany-errors", "2+", "two truncated receives completed by MPI_Waitany"},
};

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "";
  int provided = MPI_THREAD_SINGLE;
  const int threaded = strcmp(name, "idup-overlap") == 0 || strcmp(name, "idup-context-ids") == 0 ||
                       strcmp(name, "intercomm-order") == 0 ||
                       strcmp(name, "intercomm-free") == 0 || strcmp(name, "nbc-progress") == 0;
  if (threaded)
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  else
    MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int defect = 0, n = argc > 2 ? atoi(argv[2]) : 0; /* another size */
  if (strcmp(name, "trunc-self") == 0)
    defect = truncated(name, n ? n : 255, rank, rank);
  else if (strcmp(name, "trunc-eager") == 0)
    defect = truncated(name, n ? n : 1024, 0, size - 1);
  else if (strcmp(name, "trunc-rendezvous") == 0)
    defect = truncated(name, n ? n : 20000, 0, size - 1);
  else if (strcmp(name, "allgatherv-mixed") == 0)
    defect = allgatherv_mixed(name, n ? n : 16384);
  else if (strcmp(name, "alltoallw-self") == 0)
    defect = alltoallw_self(name);
  else if (strcmp(name, "allreduce-lb") == 0)
    defect = reduce_lb(name, n ? n : 65536, argc > 3 ? atoi(argv[3]) : 1, 0);
  else if (strcmp(name, "ireduce-lb") == 0)
    defect = reduce_lb(name, n ? n : 82, argc > 3 ? atoi(argv[3]) : 3, 1);
  else if (strcmp(name, "short-int") == 0)
    defect = short_int(name, n ? n : 4096);
  else if (strcmp(name, "allgatherv-self") == 0)
    defect = allgatherv_self(name);
  else if (strcmp(name, "reduce-scatter-gapped") == 0)
    defect = reduce_scatter_gapped(name, n ? n : 64);
  else if (strcmp(name, "allgatherv-2int") == 0)
    defect = allgatherv_2int(name, n ? n : 5560, argc > 3 ? atoi(argv[3]) : 1);
  else if (strcmp(name, "bcast-mixed") == 0)
    defect = bcast_mixed(name, n ? n : 262144);
  else if (strcmp(name, "allgatherv-extents") == 0)
    defect = allgatherv_extents(name, n ? n : 5560);
  else if (strcmp(name, "isendrecv-replace-any") == 0)
    defect = isendrecv_replace_any(name);
  else if (strcmp(name, "testany-errors") == 0 || strcmp(name, "waitany-errors") == 0)
    defect = any_errors(name, strcmp(name, "waitany-errors") == 0);
  else if (strcmp(name, "idup-overlap") == 0)
    defect = provided == MPI_THREAD_MULTIPLE ? idup_overlap(name, n ? n : 2000)
                                             : report(name, 1, "no MPI_THREAD_MULTIPLE");
  else if (strcmp(name, "idup-context-ids") == 0)
    defect = provided == MPI_THREAD_MULTIPLE ? idup_context_ids(name, n ? n : 3000)
                                             : report(name, 1, "no MPI_THREAD_MULTIPLE");
  else if (strcmp(name, "intercomm-order") == 0)
    defect = provided == MPI_THREAD_MULTIPLE && size >= 2
                 ? intercomm_order(name, n ? n : 20)
                 : report(name, 1, "no MPI_THREAD_MULTIPLE or fewer than 2 processes");
  else if (strcmp(name, "intercomm-free") == 0)
    defect = provided == MPI_THREAD_MULTIPLE && size >= 2
                 ? intercomm_free(name, n ? n : 300)
                 : report(name, 1, "no MPI_THREAD_MULTIPLE or fewer than 2 processes");
  else if (strcmp(name, "nbc-progress") == 0)
    defect = provided == MPI_THREAD_MULTIPLE
                 ? nbc_progress(name, n ? n : 400000, argc > 3 ? atoi(argv[3]) : 0)
                 : report(name, 1, "no MPI_THREAD_MULTIPLE");
  else if (rank == 0)
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; ++i)
      printf("%-22s ranks %-5s %s\n", checks[i].name, checks[i].ranks, checks[i].about);
  MPI_Finalize();
  return defect;
}
