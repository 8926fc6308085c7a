/* What the libraries HPC programs are built on (PETSc, parallel HDF5 through ROMIO) do with MPI
 * that plain programs rarely do, as an ordinary program on communicators it duplicates (library
 * communicators under RANGECOMM_MODE=accelerate and shadow). Run natively and under the library;
 * every result must be MPI's.
 * - Tags up to MPI_COMM_WORLD's MPI_TAG_UB on any communicator: MPI_TAG_UB is one value for the
 *   whole program, and PETSc counts its tags down from it on the communicators it duplicates.
 *   Point-to-point of every kind with tags above 32767, mixed with small tags, wildcards,
 *   probes and matched probes, in MPI's order.
 * - A derived datatype freed right after the nonblocking operation that uses it is started
 *   (ROMIO's collective I/O does this): MPI completes the operation as if it were not freed.
 * - Floating-point sums of MPI_Allreduce on a duplicate have the bits of the same sum on
 *   MPI_COMM_WORLD (PETSc's residual norms and its iteration counts follow them): checked for
 *   vectors up to 512 bytes, where MPICH and Open MPI add in recursive doubling's association at
 *   the process counts tested.
 * - Attribute delete callbacks that MPI_Finalize runs (MPI_COMM_SELF's, newest first, and those
 *   still on MPI_COMM_WORLD where the MPI runs them) may still use and free the communicators
 *   the program duplicated: PETSc frees its inner communicators there, HDF5 closes files. */
#include "shim_check.h"

static int rank, size, tag_ub;

static int next_of(int r) { return (r + 1) % size; }
static int prev_of(int r) { return (r + size - 1) % size; }

/* Tags that do not fit the 15 bits MPI guarantees, and small ones beside them. */
static int big_tags[4];

static void check_tag_ub(MPI_Comm comm) {
  int *ub = NULL, flag = 0;
  CHECK_MPI(MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag));
  /* (Open MPI 4.1 and 5.0 give it on MPI_COMM_WORLD only; when given, it is the world's) */
  CHECK(!flag || *ub == tag_ub, "MPI_TAG_UB of a dup is %d, MPI_COMM_WORLD's %d", *ub, tag_ub);
}

static void check_big_tags_blocking(MPI_Comm comm) {
  int to = next_of(rank), from = prev_of(rank);
  for (int i = 0; i < 4; ++i) {
    int out[2] = {rank, big_tags[i]}, in[2] = {-1, -1};
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(out, 2, MPI_INT, to, big_tags[i], in, 2, MPI_INT, from, big_tags[i],
                           comm, &st));
    CHECK(
        in[0] == from && in[1] == big_tags[i] && st.MPI_TAG == big_tags[i] && st.MPI_SOURCE == from,
        "Sendrecv with tag %d got (%d, %d), status (%d, %d)", big_tags[i], in[0], in[1],
        st.MPI_SOURCE, st.MPI_TAG);
  }
  note("Sendrecv with tags up to MPI_TAG_UB");
}

/* Each rank sends its successor messages with big and small tags, interleaved; the successor
 * receives some by tag (out of order), some by MPI_ANY_TAG (must come in send order). */
static void check_mixed_order(MPI_Comm comm) {
  enum { n = 8 };
  int tags[n] = {big_tags[0], 5, big_tags[1], big_tags[0], 32767, big_tags[2], 5, big_tags[3]};
  int out[n], in[n];
  MPI_Request sends[n];
  int to = next_of(rank), from = prev_of(rank);
  for (int i = 0; i < n; ++i) {
    out[i] = 1000 * rank + i;
    CHECK_MPI(i % 3 == 1 ? MPI_Issend(&out[i], 1, MPI_INT, to, tags[i], comm, &sends[i])
                         : MPI_Isend(&out[i], 1, MPI_INT, to, tags[i], comm, &sends[i]));
  }
  /* by tag first: the second message with big_tags[0] is message 3, after message 0 */
  MPI_Status st;
  CHECK_MPI(MPI_Recv(&in[0], 1, MPI_INT, from, big_tags[0], comm, &st));
  CHECK(in[0] == 1000 * from + 0, "first tag %d message is %d", big_tags[0], in[0]);
  CHECK_MPI(MPI_Recv(&in[3], 1, MPI_INT, from, big_tags[0], comm, &st));
  CHECK(in[3] == 1000 * from + 3, "second tag %d message is %d", big_tags[0], in[3]);
  /* a probe of a big tag sees its message without taking it */
  int flag = 0;
  do {
    CHECK_MPI(MPI_Iprobe(from, big_tags[3], comm, &flag, &st));
  } while (!flag);
  CHECK(st.MPI_TAG == big_tags[3] && st.MPI_SOURCE == from, "Iprobe status (%d, %d)", st.MPI_SOURCE,
        st.MPI_TAG);
  /* the rest in send order by MPI_ANY_TAG and MPI_ANY_SOURCE */
  int rest[] = {1, 2, 4, 5, 6, 7};
  for (int k = 0; k < 6; ++k) {
    int i = rest[k], got = -1;
    CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, k % 2 ? MPI_ANY_SOURCE : from, MPI_ANY_TAG, comm, &st));
    CHECK(got == 1000 * from + i && st.MPI_TAG == tags[i] && st.MPI_SOURCE == from,
          "message %d: got %d with tag %d from %d, sent tag %d", i, got, st.MPI_TAG, st.MPI_SOURCE,
          tags[i]);
  }
  CHECK_MPI(MPI_Waitall(n, sends, MPI_STATUSES_IGNORE));
  note("big and small tags keep MPI's order, by tag and by MPI_ANY_TAG");
}

static void check_big_tag_probes(MPI_Comm comm) {
  int to = next_of(rank), from = prev_of(rank), value = rank, got = -1, count = -1;
  MPI_Request send;
  MPI_Status st;
  MPI_Message message;
  CHECK_MPI(MPI_Isend(&value, 1, MPI_INT, to, tag_ub, comm, &send));
  CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, tag_ub, comm, &message, &st));
  CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
  CHECK(st.MPI_SOURCE == from && st.MPI_TAG == tag_ub && count == 1, "Mprobe status (%d, %d, %d)",
        st.MPI_SOURCE, st.MPI_TAG, count);
  CHECK_MPI(MPI_Mrecv(&got, 1, MPI_INT, &message, &st));
  CHECK(got == from, "Mrecv of tag MPI_TAG_UB got %d", got);
  CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));

  CHECK_MPI(MPI_Isend(&value, 1, MPI_INT, to, tag_ub - 1, comm, &send));
  CHECK_MPI(MPI_Probe(from, MPI_ANY_TAG, comm, &st));
  CHECK(st.MPI_TAG == tag_ub - 1, "Probe(MPI_ANY_TAG) status tag %d", st.MPI_TAG);
  CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, from, st.MPI_TAG, comm, MPI_STATUS_IGNORE));
  CHECK(got == from, "Recv after Probe got %d", got);
  CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));

  /* persistent requests with a big tag, started twice */
  MPI_Request pair[2];
  CHECK_MPI(MPI_Recv_init(&got, 1, MPI_INT, from, tag_ub - 2, comm, &pair[0]));
  CHECK_MPI(MPI_Send_init(&value, 1, MPI_INT, to, tag_ub - 2, comm, &pair[1]));
  for (int round = 0; round < 2; ++round) {
    value = 10 * rank + round;
    CHECK_MPI(MPI_Startall(2, pair));
    CHECK_MPI(MPI_Waitall(2, pair, MPI_STATUSES_IGNORE));
    CHECK(got == 10 * from + round, "persistent round %d got %d", round, got);
  }
  CHECK_MPI(MPI_Request_free(&pair[0]));
  CHECK_MPI(MPI_Request_free(&pair[1]));
  note("probes, matched probes and persistent requests with big tags");
}

static void check_bad_tags(MPI_Comm comm) {
  int value = 0, rc;
  CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  if (tag_ub < 2147483647) {
    rc = MPI_Send(&value, 1, MPI_INT, rank, tag_ub + 1, comm);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TAG, "Send with tag MPI_TAG_UB + 1 gave class %d", cls);
  }
  rc = MPI_Send(&value, 1, MPI_INT, rank, -5, comm);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_TAG, "Send with tag -5 gave class %d", cls);
  note("tags above MPI_TAG_UB and negative ones are MPI_ERR_TAG");
}

/* A vector type freed right after the receive (and the send) using it started. */
static void check_freed_types(MPI_Comm comm) {
  int to = next_of(rank), from = prev_of(rank);
  for (int wildcard = 0; wildcard < 2; ++wildcard) {
    MPI_Datatype every_other, pairs;
    CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_INT, &every_other));
    CHECK_MPI(MPI_Type_commit(&every_other));
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &pairs));
    CHECK_MPI(MPI_Type_commit(&pairs));
    int in[8], out[8];
    for (int i = 0; i < 8; ++i) in[i] = -1, out[i] = 100 * rank + i;
    MPI_Request recv, send;
    CHECK_MPI(MPI_Irecv(in, 1, every_other, wildcard ? MPI_ANY_SOURCE : from, 77, comm, &recv));
    CHECK_MPI(MPI_Type_free(&every_other));
    CHECK_MPI(MPI_Barrier(comm)); /* every receive is posted and its type freed */
    CHECK_MPI(MPI_Isend(out, 2, pairs, to, 77, comm, &send));
    CHECK_MPI(MPI_Type_free(&pairs));
    MPI_Status st;
    CHECK_MPI(MPI_Wait(&recv, &st));
    CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));
    int count = -1;
    CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 4 && st.MPI_SOURCE == from, "count %d, source %d", count, st.MPI_SOURCE);
    for (int i = 0; i < 8; ++i) {
      int want = i % 2 ? -1 : 100 * from + i / 2;
      CHECK(in[i] == want, "%s receive: element %d is %d, not %d",
            wildcard ? "wildcard" : "specific", i, in[i], want);
    }
  }
  /* a nonblocking collective whose type is freed at once */
  {
    MPI_Datatype two;
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &two));
    CHECK_MPI(MPI_Type_commit(&two));
    int buf[2] = {rank == 0 ? 41 : -1, rank == 0 ? 42 : -1};
    MPI_Request request;
    CHECK_MPI(MPI_Ibcast(buf, 1, two, 0, comm, &request));
    CHECK_MPI(MPI_Type_free(&two));
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    CHECK(buf[0] == 41 && buf[1] == 42, "Ibcast with a freed type gave %d %d", buf[0], buf[1]);
  }
  /* a matched receive whose type is freed after MPI_Imrecv */
  {
    MPI_Datatype every_other;
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other));
    CHECK_MPI(MPI_Type_commit(&every_other));
    int out[2] = {rank, -rank}, in[4] = {-1, -1, -1, -1};
    MPI_Request send, recv;
    MPI_Message message;
    CHECK_MPI(MPI_Isend(out, 2, MPI_INT, to, 78, comm, &send));
    CHECK_MPI(MPI_Mprobe(from, 78, comm, &message, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Imrecv(in, 1, every_other, &message, &recv));
    CHECK_MPI(MPI_Type_free(&every_other));
    CHECK_MPI(MPI_Wait(&recv, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));
    CHECK(in[0] == from && in[1] == -1 && in[2] == -from && in[3] == -1,
          "Imrecv with a freed type gave %d %d %d %d", in[0], in[1], in[2], in[3]);
  }
  note("derived types freed while their operations run");
}

static void check_sum_bits(MPI_Comm comm) {
  enum { most = 64 };
  double x[most], on_world[most], on_comm[most];
  unsigned seed = 12345u + 977u * (unsigned)rank;
  for (int i = 0; i < most; ++i) {
    seed = seed * 1103515245u + 12345u;
    double unit = (double)(seed >> 8) / (double)(1u << 24) - 0.5;
    x[i] = unit * (i % 3 == 0 ? 1e8 : i % 3 == 1 ? 1e-3 : 1.0);
  }
  const int counts[] = {1, 2, 8, most};
  for (int k = 0; k < 4; ++k) {
    CHECK_MPI(MPI_Allreduce(x, on_world, counts[k], MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Allreduce(x, on_comm, counts[k], MPI_DOUBLE, MPI_SUM, comm));
    CHECK(memcmp(on_world, on_comm, sizeof(double) * counts[k]) == 0,
          "MPI_Allreduce of %d doubles on a dup differs from MPI_COMM_WORLD's in the last bits",
          counts[k]);
  }
  note("floating-point sums on a dup have MPI_COMM_WORLD's bits");
}

/* Finalize: callbacks that still use the program's duplicated communicators. */
static MPI_Comm self_held, world_held;

static int use_and_free(MPI_Comm *held, const char *who) {
  int sum = 0, one = 1;
  int rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, *held);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_free(held);
  note("%s delete callback: Allreduce %d, free %s", who, sum,
       rc == MPI_SUCCESS && *held == MPI_COMM_NULL ? "done" : "failed");
  return rc;
}

static int delete_self(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)comm, (void)keyval, (void)value, (void)extra;
  return use_and_free(&self_held, "MPI_COMM_SELF");
}

static int delete_world(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)comm, (void)keyval, (void)value, (void)extra;
  return use_and_free(&world_held, "MPI_COMM_WORLD");
}

static void hold_until_finalize(void) {
  int self_key, world_key;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &self_held));
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &world_held));
  CHECK_MPI(MPI_Comm_set_errhandler(self_held, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Comm_set_errhandler(world_held, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_self, &self_key, NULL));
  CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_world, &world_key, NULL));
  CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, self_key, NULL));
  CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_WORLD, world_key, NULL));
  CHECK_MPI(MPI_Comm_free_keyval(&self_key));
  CHECK_MPI(MPI_Comm_free_keyval(&world_key));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shim_test_begin();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int *ub = NULL, flag = 0;
  CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
  CHECK(flag && *ub >= 32767, "MPI_COMM_WORLD's MPI_TAG_UB");
  tag_ub = *ub;
  big_tags[0] = tag_ub, big_tags[1] = tag_ub - 53, big_tags[2] = 32768, big_tags[3] = tag_ub / 2;

  MPI_Comm comm, sub;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm)); /* PETSc's inner communicator */
  check_tag_ub(comm);
  check_sum_bits(comm);
  check_big_tags_blocking(comm);
  check_mixed_order(comm);
  check_big_tag_probes(comm);
  check_freed_types(comm);
  /* the same on a split (PETSc's sub-communicators for block Jacobi and telescope) */
  CHECK_MPI(MPI_Comm_split(comm, rank % 2, size - rank, &sub));
  MPI_Comm_rank(sub, &rank);
  MPI_Comm_size(sub, &size);
  check_tag_ub(sub);
  check_big_tags_blocking(sub);
  check_mixed_order(sub);
  check_big_tag_probes(sub);
  check_freed_types(sub);
  check_bad_tags(sub);
  CHECK_MPI(MPI_Comm_free(&sub));
  CHECK_MPI(MPI_Comm_free(&comm));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  hold_until_finalize();
  MPI_Finalize();
  /* MPI runs MPI_COMM_SELF's delete callbacks inside MPI_Finalize; MPI_COMM_WORLD's are the
   * implementation's choice (both MPIs tested run them) */
  shim_test_end();
  if (self_held != MPI_COMM_NULL) { /* (MPI_Abort is no longer allowed) */
    fprintf(stderr, "rank %d: MPI_COMM_SELF's delete callback did not free its dup\n", rank);
    return 1;
  }
  return 0;
}
