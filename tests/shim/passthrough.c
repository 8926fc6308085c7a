/* An ordinary MPI program on real communicators only. Run with and without librangecomm.so
 * (linked, preloaded, absent), it must compute the same results: every value is checked
 * against what MPI defines, and the driver compares the transcripts of the runs. Covers the
 * communicator calls, hints, point-to-point, request completion, statuses, attributes and error
 * handlers; collectives, windows and topologies are in passthrough_coll.c. */
#include "passthrough.h"

/* ---- communicators ---------------------------------------------------------------------- */

static void test_comm_management(int r, int p) {
  MPI_Comm dup, split, created, grouped, shared, idup;
  MPI_Group world_group, group, even_group;
  MPI_Request req;
  int result, rank, size, flag, len;
  char name[MPI_MAX_OBJECT_NAME];

  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &result));
  CHECK(result == MPI_IDENT, "compare(world, world) = %d", result);
  CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
  CHECK(result == MPI_CONGRUENT, "compare(world, dup) = %d", result);
  CHECK_MPI(MPI_Comm_test_inter(dup, &flag));
  CHECK(flag == 0, "dup is an intercommunicator");
  CHECK_MPI(MPI_Comm_set_name(dup, "passthrough-dup"));
  CHECK_MPI(MPI_Comm_get_name(dup, name, &len));
  CHECK(strcmp(name, "passthrough-dup") == 0 && len == 15, "name '%s' (%d)", name, len);
  note("dup compare=%d name=%s", MPI_CONGRUENT, name);

  /* split by parity, key reverses the order: rank = members of my colour above me */
  CHECK_MPI(MPI_Comm_split(dup, r % 2, -r, &split));
  CHECK_MPI(MPI_Comm_rank(split, &rank));
  CHECK_MPI(MPI_Comm_size(split, &size));
  CHECK(size == (p - r % 2 + 1) / 2, "split size %d", size);
  CHECK(rank == (p - 1 - r) / 2, "split rank %d", rank);
  CHECK_MPI(MPI_Comm_compare(dup, split, &result));
  CHECK(result == (p == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare(dup, split) = %d", result);
  CHECK_MPI(MPI_Comm_group(split, &group));
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  {
    int zero = 0, in_world = -1;
    CHECK_MPI(MPI_Group_translate_ranks(group, 1, &zero, world_group, &in_world));
    int top = (p - 1) - ((p - 1) % 2 != r % 2); /* highest world rank of my colour */
    CHECK(in_world == top, "split rank 0 is world %d, want %d", in_world, top);
    note("split rank=%d size=%d first=%d compare=%d", rank, size, in_world, result);
  }

  /* MPI_Comm_create over the even ranks; MPI_Comm_create_group by the odd ranks only */
  {
    int range[1][3] = {{0, p - 1, 2}};
    CHECK_MPI(MPI_Group_range_incl(world_group, 1, range, &even_group));
    CHECK_MPI(MPI_Comm_create(dup, even_group, &created));
    CHECK((created != MPI_COMM_NULL) == (r % 2 == 0), "create gave %s",
          created == MPI_COMM_NULL ? "null" : "a communicator");
    if (created != MPI_COMM_NULL) {
      CHECK_MPI(MPI_Comm_rank(created, &rank));
      CHECK(rank == r / 2, "created rank %d", rank);
      CHECK_MPI(MPI_Comm_free(&created));
      CHECK(created == MPI_COMM_NULL, "free did not null the handle");
    }
    if (r % 2 == 1) {
      MPI_Group odd_group;
      int odd[1][3] = {{1, p - 1, 2}};
      CHECK_MPI(MPI_Group_range_incl(world_group, 1, odd, &odd_group));
      CHECK_MPI(MPI_Comm_create_group(dup, odd_group, 7, &grouped));
      CHECK_MPI(MPI_Comm_size(grouped, &size));
      CHECK(size == p / 2, "create_group size %d", size);
      CHECK_MPI(MPI_Comm_free(&grouped));
      CHECK_MPI(MPI_Group_free(&odd_group));
    }
    CHECK_MPI(MPI_Group_free(&even_group));
  }

  int place = 0, on_host = shim_host_members(dup, &place);
  CHECK_MPI(MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &shared));
  CHECK_MPI(MPI_Comm_size(shared, &size));
  CHECK(size == on_host, "shared size %d, %d processes on this host", size, on_host);
  CHECK_MPI(MPI_Comm_free(&shared));

  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(dup)) == dup, "c2f/f2c round trip");
  CHECK_MPI(MPI_Comm_idup(dup, &idup, &req));
  CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK(req == MPI_REQUEST_NULL, "wait did not null the request");
  CHECK_MPI(MPI_Comm_compare(dup, idup, &result));
  CHECK(result == MPI_CONGRUENT, "compare(dup, idup) = %d", result);
  note("idup compare=%d", result);

  CHECK_MPI(MPI_Group_free(&group));
  CHECK_MPI(MPI_Group_free(&world_group));
  CHECK_MPI(MPI_Comm_free(&idup));
  CHECK_MPI(MPI_Comm_free(&split));
  CHECK_MPI(MPI_Comm_free(&dup));
}

/* ---- hints ------------------------------------------------------------------------------ */

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Notes comm's hints in use, sorted by key, as "what: key=value ...". */
static void note_hints(const char *what, MPI_Comm comm) {
  MPI_Info info;
  int n = 0;
  CHECK_MPI(MPI_Comm_get_info(comm, &info));
  CHECK_MPI(MPI_Info_get_nkeys(info, &n));
  char *pairs[64], line[4096] = "";
  int kept = n < 64 ? n : 64;
  for (int i = 0; i < kept; ++i) {
    char key[MPI_MAX_INFO_KEY + 1], value[256] = "";
    int flag = 0;
    CHECK_MPI(MPI_Info_get_nthkey(info, i, key));
    CHECK_MPI(MPI_Info_get(info, key, (int)sizeof value - 1, value, &flag));
    pairs[i] = malloc(strlen(key) + strlen(value) + 2);
    sprintf(pairs[i], "%s=%s", key, value);
  }
  qsort(pairs, (size_t)kept, sizeof pairs[0], compare_strings);
  for (int i = 0; i < kept; ++i) {
    strncat(line, " ", sizeof line - strlen(line) - 1);
    strncat(line, pairs[i], sizeof line - strlen(line) - 1);
    free(pairs[i]);
  }
  note("hints of %s (%d):%s", what, n, line);
  CHECK_MPI(MPI_Info_free(&info));
}

/* What MPI_Comm_get_info returns after dups, set_info with hints MPI knows and one it does
 * not, dup_with_info, splits and idups: the library must keep hints exactly as MPI does. The
 * hints set (overtaking allowed, no wildcards) change how MPI matches messages, so the
 * communicators that get them are dups of MPI_COMM_SELF, or only queried and freed. */
static void test_hints(int r) {
  MPI_Comm world_dup, self_dup, copy, split, idup, with_info, shared;
  MPI_Info given;
  MPI_Request req;
  CHECK_MPI(MPI_Info_create(&given));
  CHECK_MPI(MPI_Info_set(given, "rangecomm_unknown_hint", "true"));
  CHECK_MPI(MPI_Info_set(given, "mpi_assert_no_any_tag", "true"));       /* MPICH knows it */
  CHECK_MPI(MPI_Info_set(given, "mpi_assert_allow_overtaking", "true")); /* both MPIs do */

  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &world_dup));
  note_hints("a dup of the world", world_dup);
  CHECK_MPI(MPI_Comm_split(world_dup, r % 2, r, &split));
  note_hints("a split of the dup", split);
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &self_dup));
  note_hints("a dup of MPI_COMM_SELF", self_dup);
  CHECK_MPI(MPI_Comm_set_info(self_dup, given));
  note_hints("the dup after set_info", self_dup);
  CHECK_MPI(MPI_Comm_dup(self_dup, &copy));
  note_hints("a dup of the dup", copy);
  CHECK_MPI(MPI_Comm_idup(self_dup, &idup, &req));
  CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
  note_hints("an idup of the dup", idup);
  CHECK_MPI(MPI_Info_set(given, "mpi_assert_no_any_source", "true"));
  CHECK_MPI(MPI_Comm_dup_with_info(MPI_COMM_WORLD, given, &with_info));
  note_hints("dup_with_info of the world", with_info);
  CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r, given, &shared));
  note_hints("split_type with info", shared);

  CHECK_MPI(MPI_Comm_free(&shared));
  CHECK_MPI(MPI_Comm_free(&with_info));
  CHECK_MPI(MPI_Comm_free(&idup));
  CHECK_MPI(MPI_Comm_free(&copy));
  CHECK_MPI(MPI_Comm_free(&self_dup));
  CHECK_MPI(MPI_Comm_free(&split));
  CHECK_MPI(MPI_Comm_free(&world_dup));
  CHECK_MPI(MPI_Info_free(&given));
}

/* ---- point-to-point and statuses -------------------------------------------------------- */

static void check_status(const MPI_Status *st, int source, int tag, int count, const char *what) {
  int n = -1;
  CHECK_MPI(MPI_Get_count(st, MPI_INT, &n));
  CHECK(st->MPI_SOURCE == source && st->MPI_TAG == tag && n == count,
        "%s: status source %d tag %d count %d, want %d %d %d", what, st->MPI_SOURCE, st->MPI_TAG, n,
        source, tag, count);
}

static void test_blocking_p2p(MPI_Comm comm, int r, int p) {
  int next = (r + 1) % p, prev = (r + p - 1) % p, in = -1, out = 10 * r + 1;
  MPI_Status st;

  /* ring, every send mode */
  CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, next, 5, &in, 1, MPI_INT, prev, 5, comm, &st));
  check_status(&st, prev, 5, 1, "sendrecv");
  CHECK(in == 10 * prev + 1, "sendrecv got %d", in);
  {
    MPI_Request recv;
    CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, prev, 6, comm, &recv));
    CHECK_MPI(MPI_Ssend(&out, 1, MPI_INT, next, 6, comm));
    CHECK_MPI(MPI_Wait(&recv, &st));
  }
  check_status(&st, prev, 6, 1, "ssend/recv");
  {
    static char buffer[1024];
    void *detached;
    int detached_size;
    CHECK_MPI(MPI_Buffer_attach(buffer, sizeof buffer));
    CHECK_MPI(MPI_Bsend(&out, 1, MPI_INT, next, 7, comm));
    CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, prev, MPI_ANY_TAG, comm, &st));
    check_status(&st, prev, 7, 1, "bsend/recv any tag");
    CHECK_MPI(MPI_Buffer_detach(&detached, &detached_size));
    CHECK(detached == buffer && detached_size == (int)sizeof buffer, "buffer detach");
  }
  /* Sendrecv_replace along a non-periodic shift: the ends talk to MPI_PROC_NULL */
  {
    int value = out, up = r + 1 < p ? r + 1 : MPI_PROC_NULL, down = r > 0 ? r - 1 : MPI_PROC_NULL;
    CHECK_MPI(MPI_Sendrecv_replace(&value, 1, MPI_INT, up, 8, down, 8, comm, &st));
    if (down == MPI_PROC_NULL) {
      check_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "replace from PROC_NULL");
      CHECK(value == out, "PROC_NULL receive changed the buffer");
    } else {
      check_status(&st, down, 8, 1, "replace");
      CHECK(value == 10 * down + 1, "replace got %d", value);
    }
    note("shift value=%d source=%d", value, st.MPI_SOURCE);
  }
  /* probe the size of a message, then receive exactly that */
  {
    int data[16], got[16], n = -1, flag = 0, k;
    for (k = 0; k < 16; ++k) data[k] = r * 100 + k;
    MPI_Request send;
    CHECK_MPI(MPI_Isend(data, r % 16 + 1, MPI_INT, next, 9, comm, &send));
    CHECK_MPI(MPI_Probe(prev, 9, comm, &st));
    check_status(&st, prev, 9, prev % 16 + 1, "probe");
    CHECK_MPI(MPI_Iprobe(prev, 9, comm, &flag, &st));
    CHECK(flag, "iprobe after probe found nothing");
    CHECK_MPI(MPI_Get_count(&st, MPI_INT, &n));
    CHECK_MPI(MPI_Recv(got, n, MPI_INT, prev, 9, comm, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));
    for (k = 0; k < n; ++k) CHECK(got[k] == prev * 100 + k, "probed data[%d] = %d", k, got[k]);
    note("probe count=%d", n);
  }
}

static void test_matched_probe(MPI_Comm comm, int r, int p) {
  int next = (r + 1) % p, prev = (r + p - 1) % p, out[2] = {r, -r}, in[2] = {0, 0}, flag = 0;
  MPI_Message msg;
  MPI_Request req;
  MPI_Status st;

  MPI_Request send;
  CHECK_MPI(MPI_Isend(out, 2, MPI_INT, next, 11, comm, &send));
  CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, 11, comm, &msg, &st));
  check_status(&st, prev, 11, 2, "mprobe");
  CHECK_MPI(MPI_Mrecv(in, 2, MPI_INT, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NULL, "mrecv did not null the message");
  check_status(&st, prev, 11, 2, "mrecv");
  CHECK(in[0] == prev && in[1] == -prev, "mrecv data %d %d", in[0], in[1]);

  CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Isend(out, 1, MPI_INT, next, 12, comm, &send));
  while (!flag) CHECK_MPI(MPI_Improbe(prev, MPI_ANY_TAG, comm, &flag, &msg, &st));
  check_status(&st, prev, 12, 1, "improbe");
  CHECK_MPI(MPI_Imrecv(in, 1, MPI_INT, &msg, &req));
  CHECK_MPI(MPI_Wait(&req, &st));
  check_status(&st, prev, 12, 1, "imrecv");
  CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));
  CHECK(in[0] == prev, "imrecv data %d", in[0]);

  CHECK_MPI(MPI_Mprobe(MPI_PROC_NULL, 0, comm, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NO_PROC, "mprobe of PROC_NULL");
  CHECK_MPI(MPI_Mrecv(in, 1, MPI_INT, &msg, &st));
  check_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "mrecv of NO_PROC");
  note("matched probes ok from %d", prev);
}

int main(int argc, char **argv) {
  int r, p;
  MPI_Comm comm;
  CHECK_MPI(MPI_Init(&argc, &argv));
  shim_test_begin();
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  note("world rank=%d size=%d", r, p);

  test_comm_management(r, p);
  test_hints(r);
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  test_blocking_p2p(comm, r, p);
  test_matched_probe(comm, r, p);
  test_nonblocking_p2p(comm, r, p);
  test_request_arrays(comm, r, p);
  test_attributes(comm, r, p);
  test_error_handlers(comm, r, p);
  test_collectives(comm, r, p);
  test_window_and_topology(comm, r, p);
  CHECK_MPI(MPI_Comm_free(&comm));

  shim_test_end();
  CHECK_MPI(MPI_Finalize());
  return 0;
}
