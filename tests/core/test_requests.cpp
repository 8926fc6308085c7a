// Requests and statuses: every completion call, with MPI's exact semantics.
#include <climits>
#include <numeric>

#include <rangecomm/embedding.hpp>

#include "p2p_util.hpp"

using namespace p2ptest;
using rangecomm::Comm;
using rangecomm::Request;

namespace {

void check_empty(const MPI_Status& st) {
  CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE);
  CHECK(st.MPI_TAG == MPI_ANY_TAG);
  CHECK(count_of(st, MPI_INT) == 0);
}

void check_proc_null(const MPI_Status& st) {
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
  CHECK(st.MPI_TAG == MPI_ANY_TAG);
  CHECK(count_of(st, MPI_INT) == 0);
}

}  // namespace

TEST_CASE("Waitall over null, PROC_NULL, self, direct and wildcard requests") {
  Comm w = world();
  int p = w.size(), me = w.rank();
  int to = (me + 1) % p, from = (me + p - 1) % p;
  int self_in[3] = {}, self_out[3] = {me, me + 1, me + 2};
  int direct_in[5] = {}, wild_in[2] = {}, null_buf = 0;
  int out_direct[5] = {1, 2, 3, 4, 5}, out_wild[2] = {9, 8};
  Request r[7];
  // r[0] stays null
  REQUIRE(rangecomm::Irecv(&null_buf, 1, MPI_INT, MPI_PROC_NULL, 0, w, &r[1]) == MPI_SUCCESS);
  REQUIRE(rangecomm::Send(self_out, 3, MPI_INT, me, 11, w) == MPI_SUCCESS);
  REQUIRE(rangecomm::Irecv(self_in, 3, MPI_INT, me, 11, w, &r[2]) == MPI_SUCCESS);
  REQUIRE(rangecomm::Irecv(direct_in, 5, MPI_INT, from, 12, w, &r[3]) == MPI_SUCCESS);
  REQUIRE(rangecomm::Irecv(wild_in, 2, MPI_INT, MPI_ANY_SOURCE, 13, w, &r[4]) == MPI_SUCCESS);
  REQUIRE(rangecomm::Isend(out_direct, 5, MPI_INT, to, 12, w, &r[5]) == MPI_SUCCESS);
  REQUIRE(rangecomm::Isend(out_wild, 2, MPI_INT, to, 13, w, &r[6]) == MPI_SUCCESS);
  MPI_Status st[7];
  REQUIRE(rangecomm::Waitall(7, r, st) == MPI_SUCCESS);
  for (auto& req : r) CHECK(req.is_null());
  check_empty(st[0]);
  check_proc_null(st[1]);
  CHECK(st[2].MPI_SOURCE == me);
  CHECK(st[2].MPI_TAG == 11);
  CHECK(count_of(st[2], MPI_INT) == 3);
  CHECK(self_in[2] == me + 2);
  CHECK(st[3].MPI_SOURCE == from);
  CHECK(st[3].MPI_TAG == 12);
  CHECK(count_of(st[3], MPI_INT) == 5);
  CHECK(direct_in[4] == 5);
  CHECK(st[4].MPI_SOURCE == from);
  CHECK(st[4].MPI_TAG == 13);
  CHECK(count_of(st[4], MPI_INT) == 2);
  CHECK(wild_in[1] == 8);
}

TEST_CASE("Wait and Test on a null request give an empty status at once") {
  Request r;
  MPI_Status st;
  REQUIRE(rangecomm::Wait(&r, &st) == MPI_SUCCESS);
  check_empty(st);
  int flag = 0;
  REQUIRE(rangecomm::Test(&r, &flag, &st) == MPI_SUCCESS);
  CHECK(flag == 1);
  check_empty(st);
}

TEST_CASE("Testall leaves every request alone until all are complete") {
  Comm w = world();
  int p = w.size(), me = w.rank();
  int to = (me + 1) % p, from = (me + p - 1) % p;
  int a = -1, b = -1, x = 42;
  Request r[3];
  REQUIRE(rangecomm::Irecv(&a, 1, MPI_INT, MPI_PROC_NULL, 0, w, &r[0]) == MPI_SUCCESS);
  REQUIRE(rangecomm::Irecv(&b, 1, MPI_INT, from, 21, w, &r[1]) == MPI_SUCCESS);
  int flag = 1;
  REQUIRE(rangecomm::Testall(2, r, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  CHECK(flag == 0);
  CHECK_FALSE(r[0].is_null());  // complete, yet not touched
  MPI_Barrier(MPI_COMM_WORLD);  // nobody has sent: the receive cannot be complete above
  REQUIRE(rangecomm::Isend(&x, 1, MPI_INT, to, 21, w, &r[2]) == MPI_SUCCESS);
  MPI_Status st[3];
  flag = 0;
  while (!flag) REQUIRE(rangecomm::Testall(3, r, &flag, st) == MPI_SUCCESS);
  check_proc_null(st[0]);
  CHECK(st[1].MPI_SOURCE == from);
  CHECK(b == 42);
  for (auto& req : r) CHECK(req.is_null());
}

TEST_CASE("Waitany, Testany, Waitsome and Testsome") {
  Comm w = world();
  int p = w.size(), me = w.rank();
  int to = (me + 1) % p, from = (me + p - 1) % p;

  SECTION("all null") {
    Request r[3];
    int index = 0, flag = 0, outcount = 0, indices[3];
    MPI_Status st;
    REQUIRE(rangecomm::Waitany(3, r, &index, &st) == MPI_SUCCESS);
    CHECK(index == MPI_UNDEFINED);
    check_empty(st);
    REQUIRE(rangecomm::Testany(3, r, &index, &flag, &st) == MPI_SUCCESS);
    CHECK(flag == 1);
    CHECK(index == MPI_UNDEFINED);
    REQUIRE(rangecomm::Waitsome(3, r, &outcount, indices, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(outcount == MPI_UNDEFINED);
    REQUIRE(rangecomm::Testsome(3, r, &outcount, indices, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(outcount == MPI_UNDEFINED);
  }
  SECTION("pending receives complete one by one in whatever order") {
    constexpr int n = 6;
    int in[n], out[n];
    Request r[n + n];
    for (int i = 0; i < n; ++i) {
      out[i] = 100 + i;
      in[i] = -1;
      int source = i % 2 ? MPI_ANY_SOURCE : from;
      REQUIRE(rangecomm::Irecv(&in[i], 1, MPI_INT, source, 30 + i, w, &r[i]) == MPI_SUCCESS);
    }
    int index = 0, flag = 1;
    MPI_Status st;
    REQUIRE(rangecomm::Testany(n, r, &index, &flag, &st) == MPI_SUCCESS);
    CHECK(flag == 0);  // nothing has been sent by anyone yet... unless p == 1? no: no sends yet
    CHECK(index == MPI_UNDEFINED);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = n - 1; i >= 0; --i)  // reverse order: completion order is not posting order
      REQUIRE(rangecomm::Isend(&out[i], 1, MPI_INT, to, 30 + i, w, &r[n + i]) == MPI_SUCCESS);
    int done = 0;
    std::vector<int> seen(n, 0);
    REQUIRE(rangecomm::Waitany(n, r, &index, &st) == MPI_SUCCESS);
    REQUIRE(index >= 0);
    CHECK(st.MPI_TAG == 30 + index);
    CHECK(st.MPI_SOURCE == from);
    ++seen[index];
    ++done;
    while (done < n) {
      int outcount = 0, indices[n];
      MPI_Status sts[n];
      if (done % 2)
        REQUIRE(rangecomm::Waitsome(n, r, &outcount, indices, sts) == MPI_SUCCESS);
      else
        REQUIRE(rangecomm::Testsome(n, r, &outcount, indices, sts) == MPI_SUCCESS);
      REQUIRE(outcount != MPI_UNDEFINED);
      for (int k = 0; k < outcount; ++k) {
        ++seen[indices[k]];
        CHECK(sts[k].MPI_TAG == 30 + indices[k]);
        CHECK(sts[k].MPI_SOURCE == from);
      }
      done += outcount;
    }
    for (int i = 0; i < n; ++i) {
      CHECK(seen[i] == 1);
      CHECK(in[i] == 100 + i);
    }
    REQUIRE(rangecomm::Waitall(n, r + n, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  }
}

TEST_CASE("cancelling receives") {
  Comm w = world();
  int p = w.size(), me = w.rank();
  int buf = 0;
  for (int source : {MPI_ANY_SOURCE, (me + 1) % p, me}) {
    Request r;
    REQUIRE(rangecomm::Irecv(&buf, 1, MPI_INT, source, 77, w, &r) == MPI_SUCCESS);
    REQUIRE(rangecomm::Cancel(&r) == MPI_SUCCESS);
    MPI_Status st;
    REQUIRE(rangecomm::Wait(&r, &st) == MPI_SUCCESS);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled == 1);
  }
  // A cancelled wildcard receive must not swallow a later message.
  MPI_Barrier(MPI_COMM_WORLD);
  int x = 5, got = -1;
  REQUIRE(rangecomm::Send(&x, 1, MPI_INT, me, 77, w) == MPI_SUCCESS);
  REQUIRE(rangecomm::Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 77, w, MPI_STATUS_IGNORE) ==
          MPI_SUCCESS);
  CHECK(got == 5);
  // Cancelling a receive that has already matched has no effect.
  Request r;
  REQUIRE(rangecomm::Send(&x, 1, MPI_INT, me, 78, w) == MPI_SUCCESS);
  REQUIRE(rangecomm::Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 78, w, &r) == MPI_SUCCESS);
  REQUIRE(rangecomm::Cancel(&r) == MPI_SUCCESS);
  MPI_Status st;
  REQUIRE(rangecomm::Wait(&r, &st) == MPI_SUCCESS);
  int cancelled = 1;
  MPI_Test_cancelled(&st, &cancelled);
  CHECK(cancelled == 0);
  CHECK(got == 5);
  Request null;
  CHECK(error_class(rangecomm::Cancel(&null)) == MPI_ERR_REQUEST);
}

TEST_CASE("freed requests still complete") {
  Comm w = world();
  int p = w.size(), me = w.rank();
  int to = (me + 1) % p, from = (me + p - 1) % p;
  int x = me, got = -1;
  Request s;
  REQUIRE(rangecomm::Isend(&x, 1, MPI_INT, to, 80, w, &s) == MPI_SUCCESS);
  REQUIRE(rangecomm::Request_free(&s) == MPI_SUCCESS);
  CHECK(s.is_null());
  REQUIRE(rangecomm::Recv(&got, 1, MPI_INT, from, 80, w, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(got == from);
  // A freed wildcard receive still takes its message; the next receive gets the next one.
  int first = -1;
  {
    Request r;
    REQUIRE(rangecomm::Irecv(&first, 1, MPI_INT, MPI_ANY_SOURCE, 81, w, &r) == MPI_SUCCESS);
    REQUIRE(rangecomm::Request_free(&r) == MPI_SUCCESS);
  }
  int a = 1, b = 2;
  REQUIRE(rangecomm::Send(&a, 1, MPI_INT, to, 81, w) == MPI_SUCCESS);
  REQUIRE(rangecomm::Send(&b, 1, MPI_INT, to, 81, w) == MPI_SUCCESS);
  REQUIRE(rangecomm::Recv(&got, 1, MPI_INT, from, 81, w, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(got == 2);
  CHECK(first == 1);
  Request null;
  CHECK(error_class(rangecomm::Request_free(&null)) == MPI_ERR_REQUEST);
}

TEST_CASE("derived datatypes and MPI_Get_count across paths") {
  Comm w = world();
  int p = w.size(), me = w.rank();
  int to = (me + 1) % p, from = (me + p - 1) % p;
  // Send every other int of 20 (a vector type); receive 10 contiguous ints.
  MPI_Datatype every_other;
  MPI_Type_vector(10, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int src[20];
  std::iota(src, src + 20, 100 * me);
  for (int dest : {to, me}) {
    for (int source : {dest == me ? me : from, MPI_ANY_SOURCE}) {
      REQUIRE(rangecomm::Send(src, 1, every_other, dest, 90, w) == MPI_SUCCESS);
      int got[12] = {};
      MPI_Status st;
      REQUIRE(rangecomm::Recv(got, 12, MPI_INT, source, 90, w, &st) == MPI_SUCCESS);
      int sender = dest == me ? me : from;
      CHECK(st.MPI_SOURCE == sender);
      CHECK(count_of(st, MPI_INT) == 10);
      int elements = -1;
      MPI_Get_elements(&st, MPI_INT, &elements);
      CHECK(elements == 10);
      for (int i = 0; i < 10; ++i) CHECK(got[i] == 100 * sender + 2 * i);
    }
  }
  MPI_Type_free(&every_other);
}

TEST_CASE("a synchronous send to self completes when it is received") {
  Comm w = world();
  int me = w.rank(), x = 7, got = 0, flag = 1;
  Request s, r;
  REQUIRE(rangecomm::Issend(&x, 1, MPI_INT, me, 5, w, &s) == MPI_SUCCESS);
  REQUIRE(rangecomm::Test(&s, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(flag == 0);
  REQUIRE(rangecomm::Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, w, &r) == MPI_SUCCESS);
  REQUIRE(rangecomm::Wait(&s, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(rangecomm::Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(got == 7);
}

TEST_CASE("Sendrecv around a ring, with MPI_PROC_NULL ends") {
  Comm w = world();
  int p = w.size(), me = w.rank();
  int right = me + 1 < p ? me + 1 : MPI_PROC_NULL, left = me > 0 ? me - 1 : MPI_PROC_NULL;
  int out = me, in = -5;
  MPI_Status st;
  REQUIRE(rangecomm::Sendrecv(&out, 1, MPI_INT, right, 4, &in, 1, MPI_INT, left, 4, w, &st) ==
          MPI_SUCCESS);
  if (left == MPI_PROC_NULL) {
    check_proc_null(st);
    CHECK(in == -5);
  } else {
    CHECK(in == left);
    CHECK(st.MPI_SOURCE == left);
  }
}

TEST_CASE("large counts") {
  Comm w = world();
  int p = w.size();
  if (p != 2) return;               // one pair is enough; keeps the run short and memory modest
  const int count = (1 << 30) + 3;  // bytes, past 2^30
  std::vector<char> buf(count);
  if (w.rank() == 0) {
    buf.front() = 'a';
    buf.back() = 'z';
    REQUIRE(rangecomm::Send(buf.data(), count, MPI_CHAR, 1, 1, w) == MPI_SUCCESS);
  } else {
    MPI_Status st;
    REQUIRE(rangecomm::Recv(buf.data(), count, MPI_CHAR, MPI_ANY_SOURCE, 1, w, &st) == MPI_SUCCESS);
    CHECK(count_of(st, MPI_CHAR) == count);
    CHECK(buf.front() == 'a');
    CHECK(buf.back() == 'z');
  }
}

TEST_CASE("bad point-to-point arguments give the proper error class") {
  Comm w = world();
  int p = w.size(), x = 0;
  Request r;
  MPI_Status st;
  int ub = rangecomm::max_user_tag();  // MPI_TAG_UB, as on every MPI communicator
  CHECK(error_class(rangecomm::Send(&x, 1, MPI_INT, p, 0, w)) == MPI_ERR_RANK);
  CHECK(error_class(rangecomm::Send(&x, 1, MPI_INT, -3, 0, w)) == MPI_ERR_RANK);
  CHECK(error_class(rangecomm::Send(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, w)) == MPI_ERR_RANK);
  if (ub < INT_MAX)
    CHECK(error_class(rangecomm::Send(&x, 1, MPI_INT, 0, ub + 1, w)) == MPI_ERR_TAG);
  CHECK(error_class(rangecomm::Send(&x, 1, MPI_INT, 0, -1, w)) == MPI_ERR_TAG);
  CHECK(error_class(rangecomm::Send(&x, 1, MPI_INT, 0, MPI_ANY_TAG, w)) == MPI_ERR_TAG);
  CHECK(error_class(rangecomm::Send(&x, -1, MPI_INT, 0, 0, w)) == MPI_ERR_COUNT);
  CHECK(error_class(rangecomm::Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, w)) == MPI_ERR_TYPE);
  CHECK(error_class(rangecomm::Send(&x, 1, MPI_INT, 0, 0, Comm())) == MPI_ERR_COMM);
  CHECK(error_class(rangecomm::Irecv(&x, 1, MPI_INT, p, 0, w, &r)) == MPI_ERR_RANK);
  CHECK(error_class(rangecomm::Irecv(&x, 1, MPI_INT, 0, -7, w, &r)) == MPI_ERR_TAG);
  CHECK(error_class(rangecomm::Irecv(&x, -2, MPI_INT, 0, 0, w, &r)) == MPI_ERR_COUNT);
  CHECK(error_class(rangecomm::Recv(&x, 1, MPI_INT, 0, 0, Comm(), &st)) == MPI_ERR_COMM);
  CHECK(error_class(rangecomm::Probe(p + 1, 0, w, &st)) == MPI_ERR_RANK);
  int flag = 0;
  CHECK(error_class(rangecomm::Iprobe(0, -2, w, &flag, &st)) == MPI_ERR_TAG);
  CHECK(r.is_null());  // failed calls leave no request behind
  int* world_ub = nullptr;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &world_ub, &flag);
  REQUIRE(flag);
  CHECK(ub == *world_ub);
  // Tags 32767 (the last that fits the MPI tag) and MPI_TAG_UB itself are fine.
  for (int tag : {32767, ub}) {
    REQUIRE(rangecomm::Send(&x, 1, MPI_INT, w.rank(), tag, w) == MPI_SUCCESS);
    REQUIRE(rangecomm::Recv(&x, 1, MPI_INT, w.rank(), tag, w, &st) == MPI_SUCCESS);
    CHECK(st.MPI_TAG == tag);
  }
}

TEST_CASE("tags above 32767 keep MPI's matching and order") {
  // They travel with a header message (docs/tag-layout.md); small and big tags interleaved
  // must still be received by tag and, by MPI_ANY_TAG, in the order sent.
  Comm w = world();
  int p = w.size(), me = w.rank(), ub = rangecomm::max_user_tag();
  int to = (me + 1) % p, from = (me + p - 1) % p;
  const int tags[] = {ub, 3, 40000, ub, 32767, ub - 1};
  const int n = 6;
  int out[n], in[n];
  Request sends[n];
  for (int i = 0; i < n; ++i) {
    out[i] = 100 * me + i;
    REQUIRE(rangecomm::Isend(&out[i], 1, MPI_INT, to, tags[i], w, &sends[i]) == MPI_SUCCESS);
  }
  MPI_Status st;
  REQUIRE(rangecomm::Recv(&in[3], 1, MPI_INT, from, ub, w, &st) == MPI_SUCCESS);
  CHECK(in[3] == 100 * from + 0);  // the first of the two with tag ub
  REQUIRE(rangecomm::Recv(&in[2], 1, MPI_INT, from, 40000, w, &st) == MPI_SUCCESS);
  CHECK(in[2] == 100 * from + 2);
  for (int i : {1, 3, 4, 5}) {
    int got = -1;
    REQUIRE(rangecomm::Recv(&got, 1, MPI_INT, from, MPI_ANY_TAG, w, &st) == MPI_SUCCESS);
    CHECK(got == 100 * from + i);
    CHECK(st.MPI_TAG == tags[i]);
    CHECK(st.MPI_SOURCE == from);
  }
  for (auto& s : sends) REQUIRE(rangecomm::Wait(&s, MPI_STATUS_IGNORE) == MPI_SUCCESS);
}

namespace {
int g_handler_calls = 0;
int g_handler_last_class = MPI_SUCCESS;
void counting_handler(MPI_Comm*, int* code, ...) {
  ++g_handler_calls;
  MPI_Error_class(*code, &g_handler_last_class);
}
}  // namespace

TEST_CASE("errors go through the root communicator's error handler") {
  Comm w = world();
  MPI_Errhandler counting;
  MPI_Comm_create_errhandler(counting_handler, &counting);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, counting);
  g_handler_calls = 0;
  int x[4] = {1, 2, 3, 4};
  int rc = rangecomm::Send(x, 1, MPI_INT, w.size(), 0, w);
  CHECK(error_class(rc) == MPI_ERR_RANK);
  CHECK(g_handler_calls == 1);
  CHECK(g_handler_last_class == MPI_ERR_RANK);
  // A failure found at completion (truncation) is raised too, on every receive path.
  for (int source : {w.rank(), MPI_ANY_SOURCE}) {
    g_handler_calls = 0;
    REQUIRE(rangecomm::Send(x, 4, MPI_INT, w.rank(), 1, w) == MPI_SUCCESS);
    int small[2];
    MPI_Status st;
    rc = rangecomm::Recv(small, 2, MPI_INT, source, 1, w, &st);
    CHECK(error_class(rc) == MPI_ERR_TRUNCATE);
    CHECK(g_handler_calls == 1);
    CHECK(g_handler_last_class == MPI_ERR_TRUNCATE);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&counting);
}

// A blocking send must keep this process's waiting wildcard receives moving: here every process
// has one waiting for its left neighbour and sends synchronously (and then in standard mode,
// over the eager limit) to its right one. Found by the torture test: blocking sends went
// straight to MPI_Ssend, so two crossing sends each waited for the other's wildcard receive.
TEST_CASE("blocking sends progress waiting wildcard receives") {
  Comm w = world();
  int p = w.size(), me = w.rank();
  if (p < 2) return;
  int to = (me + 1) % p, from = (me + p - 1) % p;
  for (int synchronous = 1; synchronous >= 0; --synchronous) {
    std::vector<int> out(200000, me), in(200000, -1);
    Request r;
    REQUIRE(rangecomm::Irecv(in.data(), 200000, MPI_INT, MPI_ANY_SOURCE, 4, w, &r) == MPI_SUCCESS);
    int rc = synchronous ? rangecomm::Ssend(out.data(), 200000, MPI_INT, to, 4, w)
                         : rangecomm::Send(out.data(), 200000, MPI_INT, to, 4, w);
    CHECK(rc == MPI_SUCCESS);
    MPI_Status st;
    CHECK(rangecomm::Wait(&r, &st) == MPI_SUCCESS);
    CHECK(st.MPI_SOURCE == from);
    CHECK(in.front() == from);
    CHECK(in.back() == from);
  }
}

// Under Set_background_progress (the shim's progress thread) a nonblocking collective that is
// one message for this process stays an operation that Progress() moves, without a completion
// call; otherwise it is MPI's own request, which nothing counts as needing progress. The leaf of
// a scatter over two processes: one receive, posted before the root sends.
TEST_CASE("a one-message nonblocking collective is Progress()'s under Set_background_progress") {
  Comm w = world();
  const int p = w.size(), me = w.rank();
  REQUIRE(rangecomm::Barrier(w) == MPI_SUCCESS);
  while (rangecomm::Progress_needed()) rangecomm::Progress();
  if (p < 2 || me > 1) return;  // no part in the pair
  Comm pair;
  REQUIRE(rangecomm::Split_Comm(w, 0, 1, &pair) == MPI_SUCCESS);
  int block[2] = {7, 8}, got = -1;  // first contact, so that the leaf knows the root's binding
  REQUIRE(rangecomm::Scatter(block, 1, MPI_INT, &got, 1, MPI_INT, 0, pair) == MPI_SUCCESS);
  CHECK(got == 7 + me);
  struct Foreground {  // the default again however the case ends
    ~Foreground() { rangecomm::Set_background_progress(false); }
  } foreground;
  for (bool background : {false, true}) {
    rangecomm::Set_background_progress(background);
    const int base = background ? 200 : 100;
    int go = 0, mine = -1;
    Request r;
    if (me == 1) {
      REQUIRE(rangecomm::Iscatter(nullptr, 0, MPI_INT, &mine, 1, MPI_INT, 0, pair, &r) ==
              MPI_SUCCESS);
      CHECK(rangecomm::Progress_needed() == background);
      REQUIRE(rangecomm::Send(&go, 1, MPI_INT, 0, 90, w) == MPI_SUCCESS);
      int flag = 0;
      while (!flag) {
        if (background) rangecomm::Progress();
        REQUIRE(rangecomm::Test(&r, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      }
    } else {
      REQUIRE(rangecomm::Recv(&go, 1, MPI_INT, 1, 90, w, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      int blocks[2] = {base, base + 1};
      REQUIRE(rangecomm::Iscatter(blocks, 1, MPI_INT, &mine, 1, MPI_INT, 0, pair, &r) ==
              MPI_SUCCESS);
      REQUIRE(rangecomm::Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    CHECK(mine == base + me);
    CHECK_FALSE(rangecomm::Progress_needed());
  }
}
