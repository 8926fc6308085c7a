// General groups (Icomm_create_group): shapes, members, traffic and collectives on them,
// concurrent creations started in opposite orders, sub-ranges, the level limit and errors.
#include <rangecomm/embedding.hpp>
#include <rangecomm/rangecomm.hpp>

#include <algorithm>
#include <numeric>
#include <vector>

#include "mpi_test.hpp"

using rangecomm::Comm;
using rangecomm::Request;

namespace {

Comm world() {
  Comm w;
  REQUIRE(rangecomm::Create_Comm(MPI_COMM_WORLD, &w) == MPI_SUCCESS);
  return w;
}

int error_class(int code) {
  int cls = MPI_SUCCESS;
  MPI_Error_class(code, &cls);
  return cls;
}

std::vector<int> reversed(int p) {
  std::vector<int> v(p);
  for (int i = 0; i < p; ++i) v[i] = p - 1 - i;
  return v;
}

// World ranks 0..p-1 with the first two swapped (not a range for p >= 2).
std::vector<int> swapped(int p) {
  std::vector<int> v(p);
  std::iota(v.begin(), v.end(), 0);
  if (p >= 2) std::swap(v[0], v[1]);
  return v;
}

int index_of(const std::vector<int>& members, int world_rank) {
  auto it = std::find(members.begin(), members.end(), world_rank);
  return it == members.end() ? MPI_UNDEFINED : static_cast<int>(it - members.begin());
}

// Ranks, translation, a ring of messages and three collectives on c, whose members are
// `members` (world ranks in rank order). Every member must call it.
void exercise(const Comm& c, const std::vector<int>& members) {
  int n = static_cast<int>(members.size());
  int me = index_of(members, mpitest::world_rank());
  REQUIRE_FALSE(c.is_null());
  CHECK(c.rank() == me);
  CHECK(c.size() == n);
  for (int i = 0; i < n; ++i) {
    CHECK(c.rank_in_root(i) == members[i]);
    CHECK(c.rank_from_root(members[i]) == i);
  }
  // A ring: rank r sends (r, world rank) to r + 1 and receives from r - 1 by wildcard source.
  int out[2] = {me, mpitest::world_rank()}, in[2] = {-1, -1};
  Request send;
  CHECK(rangecomm::Isend(out, 2, MPI_INT, (me + 1) % n, 7, c, &send) == MPI_SUCCESS);
  MPI_Status st;
  CHECK(rangecomm::Recv(in, 2, MPI_INT, MPI_ANY_SOURCE, 7, c, &st) == MPI_SUCCESS);
  CHECK(rangecomm::Wait(&send, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  int from = (me + n - 1) % n;
  CHECK(in[0] == from);
  CHECK(in[1] == members[from]);
  CHECK(st.MPI_SOURCE == from);
  // Sum of world ranks, a broadcast from the last rank, a gather of world ranks in rank order.
  int sum = -1;
  int mine = mpitest::world_rank();
  CHECK(rangecomm::Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c) == MPI_SUCCESS);
  CHECK(sum == std::accumulate(members.begin(), members.end(), 0));
  int b = me == n - 1 ? 4242 : 0;
  CHECK(rangecomm::Bcast(&b, 1, MPI_INT, n - 1, c) == MPI_SUCCESS);
  CHECK(b == 4242);
  std::vector<int> all(n, -1);
  CHECK(rangecomm::Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, c) == MPI_SUCCESS);
  CHECK(all == members);
}

}  // namespace

TEST_CASE("a reversed world is a general group with the right members and traffic") {
  Comm w = world();
  int p = mpitest::world_size();
  std::vector<int> members = reversed(p);
  Comm g;
  Request r;
  REQUIRE(rangecomm::Icomm_create_group(w, members.data(), p, 5, &g, &r) == MPI_SUCCESS);
  REQUIRE(rangecomm::Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(g.is_strided_range() == (p == 1));
  CHECK(g.root_stride() == (p == 1 ? 1 : MPI_UNDEFINED));
  CHECK(g.depth() > w.depth());
  exercise(g, members);
}

TEST_CASE("a group that is a strided range is made locally, complete at once") {
  Comm w = world();
  int p = mpitest::world_size();
  std::vector<int> evens;
  for (int i = 0; i < p; i += 2) evens.push_back(i);
  Comm g;
  Request r;
  REQUIRE(rangecomm::Icomm_create_group(w, evens.data(), static_cast<int>(evens.size()), 0, &g,
                                        &r) == MPI_SUCCESS);
  // No communication: complete on return, on members and non-members alike.
  int flag = 0;
  REQUIRE(rangecomm::Test(&r, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(flag == 1);
  if (mpitest::world_rank() % 2 == 0) {
    CHECK(g.is_strided_range());
    CHECK(g.root_stride() == (evens.size() > 1 ? 2 : 1));
    exercise(g, evens);
  } else {
    CHECK(g.is_null());
  }
}

TEST_CASE("only the group's members take part; the others get nothing") {
  Comm w = world();
  int p = mpitest::world_size();
  if (p < 3) return;
  // The last process and then 0..p-3: world rank p-2 is not a member.
  std::vector<int> members{p - 1};
  for (int i = 0; i < p - 2; ++i) members.push_back(i);
  Comm g;
  if (mpitest::world_rank() == p - 2) {
    // A non-member may call it (it gets the null communicator and a complete request) or not.
    Request r;
    CHECK(rangecomm::Icomm_create_group(w, members.data(), p - 1, 3, &g, &r) == MPI_SUCCESS);
    CHECK(rangecomm::Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(g.is_null());
  } else {
    REQUIRE(rangecomm::Comm_create_group(w, members.data(), p - 1, 3, &g) == MPI_SUCCESS);
    exercise(g, members);
  }
}

TEST_CASE("concurrent creations on overlapping groups, started and waited in opposite orders") {
  Comm w = world();
  int p = mpitest::world_size();
  if (p < 2) return;
  std::vector<int> a = reversed(p), b = swapped(p);
  Comm ga, gb;
  Request ra, rb;
  bool even = mpitest::world_rank() % 2 == 0;
  // Evens start a then b and wait for b first; odds the opposite.
  if (even) {
    REQUIRE(rangecomm::Icomm_create_group(w, a.data(), p, 1, &ga, &ra) == MPI_SUCCESS);
    REQUIRE(rangecomm::Icomm_create_group(w, b.data(), p, 2, &gb, &rb) == MPI_SUCCESS);
    REQUIRE(rangecomm::Wait(&rb, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(rangecomm::Wait(&ra, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  } else {
    REQUIRE(rangecomm::Icomm_create_group(w, b.data(), p, 2, &gb, &rb) == MPI_SUCCESS);
    REQUIRE(rangecomm::Icomm_create_group(w, a.data(), p, 1, &ga, &ra) == MPI_SUCCESS);
    REQUIRE(rangecomm::Wait(&ra, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(rangecomm::Wait(&rb, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  }
  // p == 2: both are the same two processes in the same (swapped) order, still two
  // communicators that must not clash.
  CHECK(rangecomm::Comm_context(ga) != rangecomm::Comm_context(gb));
  // Isolation: the same tag on both at once, each received by wildcard on its own group.
  int me_a = ga.rank(), me_b = gb.rank();
  int out_a = 1000 + me_a, out_b = 2000 + me_b, in_a = -1, in_b = -1;
  Request s1, s2, r1, r2;
  CHECK(rangecomm::Irecv(&in_b, 1, MPI_INT, MPI_ANY_SOURCE, 9, gb, &r2) == MPI_SUCCESS);
  CHECK(rangecomm::Irecv(&in_a, 1, MPI_INT, MPI_ANY_SOURCE, 9, ga, &r1) == MPI_SUCCESS);
  CHECK(rangecomm::Isend(&out_a, 1, MPI_INT, (me_a + 1) % p, 9, ga, &s1) == MPI_SUCCESS);
  CHECK(rangecomm::Isend(&out_b, 1, MPI_INT, (me_b + 1) % p, 9, gb, &s2) == MPI_SUCCESS);
  Request all[4] = {std::move(s1), std::move(s2), std::move(r1), std::move(r2)};
  CHECK(rangecomm::Waitall(4, all, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  CHECK(in_a == 1000 + (me_a + p - 1) % p);
  CHECK(in_b == 2000 + (me_b + p - 1) % p);
  exercise(ga, a);
  exercise(gb, b);
}

TEST_CASE("many concurrent creations of the same members each get their own context") {
  Comm w = world();
  int p = mpitest::world_size();
  if (p < 2) return;
  std::vector<int> a = reversed(p);
  constexpr int k = 6;
  std::vector<Comm> groups(k);
  std::vector<Request> requests(k);
  // Started in rotated orders on different ranks (tags stay matched by group index).
  for (int j = 0; j < k; ++j) {
    int i = (j + mpitest::world_rank()) % k;
    REQUIRE(rangecomm::Icomm_create_group(w, a.data(), p, 100 + i, &groups[i], &requests[i]) ==
            MPI_SUCCESS);
  }
  REQUIRE(rangecomm::Waitall(k, requests.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  std::vector<std::uint32_t> contexts;
  for (const Comm& g : groups) contexts.push_back(rangecomm::Comm_context(g));
  std::sort(contexts.begin(), contexts.end());
  CHECK(std::adjacent_find(contexts.begin(), contexts.end()) == contexts.end());
  // Every member agrees on which group got which context.
  for (int i = 0; i < k; ++i) {
    unsigned mine = rangecomm::Comm_context(groups[i]), lo = 0, hi = 0;
    MPI_Allreduce(&mine, &lo, 1, MPI_UNSIGNED, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &hi, 1, MPI_UNSIGNED, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi);
  }
  for (int i = 0; i < k; ++i) exercise(groups[i], a);
}

TEST_CASE("Icomm_dup: copies of different communicators in flight at once, in any order") {
  Comm w = world();
  int p = mpitest::world_size();
  std::vector<int> all(p), rev = reversed(p);
  std::iota(all.begin(), all.end(), 0);
  // Three parents with the same members: the world range, a range one level down, a general
  // group (reversed); each is copied twice, the six copies started with the parents in an
  // order of each rank's own (MPI orders collectives per communicator only), a nonblocking
  // collective of the parent after each, and all completed together.
  Comm below, group;
  REQUIRE(rangecomm::Split_Comm(w, 0, p - 1, 1, &below) == MPI_SUCCESS);
  Request gr;
  REQUIRE(rangecomm::Icomm_create_group(w, rev.data(), p, 3, &group, &gr) == MPI_SUCCESS);
  REQUIRE(rangecomm::Wait(&gr, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  const Comm* parents[3] = {&w, &below, &group};
  constexpr int k = 6;
  std::vector<Comm> copies(k);
  std::vector<Request> requests(2 * k);
  int one = 1, sums[k];
  for (int j = 0; j < k; ++j) {
    // copy i is copy i / 3 of parent i % 3; the parents' turns rotate with the rank
    int i = (j + mpitest::world_rank()) % 3 + 3 * (j / 3);
    REQUIRE(rangecomm::Icomm_dup(*parents[i % 3], &copies[i], &requests[i]) == MPI_SUCCESS);
    REQUIRE(rangecomm::Iallreduce(&one, &sums[i], 1, MPI_INT, MPI_SUM, *parents[i % 3],
                                  &requests[k + i]) == MPI_SUCCESS);
  }
  REQUIRE(rangecomm::Waitall(2 * k, requests.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  for (int s : sums) CHECK(s == p);
  for (int i = 0; i < k; ++i) {
    CHECK(copies[i].depth() > parents[i % 3]->depth());
    exercise(copies[i], i % 3 == 2 ? rev : all);
  }
}

TEST_CASE("ranges of a general group, and groups of a general group") {
  Comm w = world();
  int p = mpitest::world_size();
  if (p < 3) return;
  std::vector<int> a = reversed(p);
  Comm g;
  REQUIRE(rangecomm::Comm_create_group(w, a.data(), p, 11, &g) == MPI_SUCCESS);
  // Ranks 1..p-1 of g, every second one: world ranks p-2, p-4, ... (a strided range again).
  Comm sub;
  REQUIRE(rangecomm::Split_Comm(g, 1, p - 1, 2, &sub) == MPI_SUCCESS);
  std::vector<int> sub_members;
  for (int r = 1; r < p; r += 2) sub_members.push_back(a[r]);
  if (index_of(sub_members, mpitest::world_rank()) != MPI_UNDEFINED) {
    exercise(sub, sub_members);
    for (int i = 0; i < sub.size(); ++i) CHECK(sub.rank_in_parent(i) == 1 + 2 * i);
  } else {
    CHECK(sub.is_null());
  }
  // The group 2, 0, 1 of g (world ranks p-3, p-1, p-2): a general group of a general group.
  int ranks[3] = {2, 0, 1};
  std::vector<int> g2_members{a[2], a[0], a[1]};
  Comm g2;
  if (index_of(g2_members, mpitest::world_rank()) != MPI_UNDEFINED) {
    REQUIRE(rangecomm::Comm_create_group(g, ranks, 3, 12, &g2) == MPI_SUCCESS);
    exercise(g2, g2_members);
    for (int i = 0; i < 3; ++i) CHECK(g2.rank_in_parent(i) == ranks[i]);
  }
}

TEST_CASE("a hundred live copies of one group, each its own communicator") {
  Comm w = world();
  int p = mpitest::world_size();
  if (p < 2) return;
  std::vector<int> a = reversed(p);
  std::vector<Comm> live(100);
  for (int i = 0; i < 100; ++i)
    REQUIRE(rangecomm::Comm_create_group(w, a.data(), p, i % 3, &live[i]) == MPI_SUCCESS);
  for (int i = 0; i < 100; i += 7) exercise(live[i], a);
  live[7] = Comm();
  Comm extra;
  REQUIRE(rangecomm::Comm_create_group(w, a.data(), p, 1, &extra) == MPI_SUCCESS);
  exercise(extra, a);
}

TEST_CASE("bad groups are errors of the right class, raised before any communication") {
  Comm w = world();
  int p = mpitest::world_size();
  Comm g;
  Request r;
  int out_of_range[2] = {0, p};
  CHECK(error_class(rangecomm::Icomm_create_group(w, out_of_range, 2, 0, &g, &r)) == MPI_ERR_RANK);
  int twice[3] = {0, 0, 0};
  if (p >= 1)
    CHECK(error_class(rangecomm::Icomm_create_group(w, twice, 3, 0, &g, &r)) == MPI_ERR_GROUP);
  int one[1] = {0};
  CHECK(error_class(rangecomm::Icomm_create_group(w, one, 1, -1, &g, &r)) == MPI_ERR_TAG);
  CHECK(error_class(rangecomm::Icomm_create_group(w, one, -1, 0, &g, &r)) == MPI_ERR_GROUP);
  CHECK(error_class(rangecomm::Icomm_create_group(Comm(), one, 1, 0, &g, &r)) == MPI_ERR_COMM);
  CHECK(error_class(rangecomm::Icomm_create_group(w, one, 1, 0, nullptr, &r)) == MPI_ERR_ARG);
}
