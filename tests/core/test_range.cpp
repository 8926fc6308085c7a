// Creation of range communicators: shapes, rank translation, consistency across ranks, errors.
#include <rangecomm/embedding.hpp>
#include <rangecomm/rangecomm.hpp>

#include <cstdint>
#include <vector>

#include "mpi_test.hpp"

using rangecomm::Comm;

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

// The world ranks a (first, last, stride) range of `parent_members` selects.
std::vector<int> select(const std::vector<int>& parent_members, int first, int last, int stride) {
  std::vector<int> out;
  for (int r = first; r <= last; r += stride) out.push_back(parent_members[r]);
  return out;
}

// Checks comm against the expected member list from this process's point of view.
void check_view(const Comm& c, const std::vector<int>& members) {
  int me = mpitest::world_rank();
  int expected_rank = MPI_UNDEFINED;
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i] == me) expected_rank = static_cast<int>(i);
  if (expected_rank == MPI_UNDEFINED) {
    CHECK(c.is_null());
    return;
  }
  REQUIRE_FALSE(c.is_null());
  CHECK(c.rank() == expected_rank);
  CHECK(c.size() == static_cast<int>(members.size()));
  for (size_t i = 0; i < members.size(); ++i) {
    CHECK(c.rank_in_root(static_cast<int>(i)) == members[i]);
    CHECK(c.rank_from_root(members[i]) == static_cast<int>(i));
  }
  CHECK(c.rank_in_root(-1) == MPI_UNDEFINED);
  CHECK(c.rank_in_root(c.size()) == MPI_UNDEFINED);
}

}  // namespace

TEST_CASE("the whole communicator is a range with the same ranks") {
  Comm w = world();
  std::vector<int> all(mpitest::world_size());
  for (int i = 0; i < mpitest::world_size(); ++i) all[i] = i;
  check_view(w, all);
  CHECK(w.depth() == 0);
  CHECK(w.root_mpi_comm() == MPI_COMM_WORLD);
  Comm again;
  REQUIRE(rangecomm::Create_Comm(MPI_COMM_WORLD, &again) == MPI_SUCCESS);
  CHECK(again == w);  // attaching twice gives the same communicator
}

TEST_CASE("communicators made by MPI_Comm_split and MPI_Comm_create_group can be attached") {
  // Open MPI attaches MPI_TAG_UB only to MPI_COMM_WORLD; attaching must not depend on it.
  int me = mpitest::world_rank(), p = mpitest::world_size();
  MPI_Comm halves = MPI_COMM_NULL;
  REQUIRE(MPI_Comm_split(MPI_COMM_WORLD, me % 2, p - me, &halves) == MPI_SUCCESS);
  Comm c;
  REQUIRE(rangecomm::Create_Comm(halves, &c) == MPI_SUCCESS);
  int size = 0, rank = -1, native_rank = -1;
  MPI_Comm_rank(halves, &native_rank);
  REQUIRE(rangecomm::Comm_size(c, &size) == MPI_SUCCESS);
  REQUIRE(rangecomm::Comm_rank(c, &rank) == MPI_SUCCESS);
  CHECK(size == (p + 1 - me % 2) / 2);
  CHECK(rank == native_rank);  // key p - me reverses the order within each half
  // A message over the attached communicator reaches the right process.
  int token = rank == 0 ? 1000 + me : -1;
  REQUIRE(rangecomm::Bcast(&token, 1, MPI_INT, 0, c) == MPI_SUCCESS);
  int root_world = -1, zero = 0;
  MPI_Group g, wg;
  MPI_Comm_group(halves, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_translate_ranks(g, 1, &zero, wg, &root_world);
  CHECK(token == 1000 + root_world);
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
  REQUIRE(rangecomm::Comm_free(&c) == MPI_SUCCESS);
  MPI_Comm_free(&halves);
}

TEST_CASE("halves, strided ranges, size 1 and nested strided ranges") {
  Comm w = world();
  int p = mpitest::world_size();
  std::vector<int> all(p);
  for (int i = 0; i < p; ++i) all[i] = i;

  SECTION("halves") {
    int h = p / 2;
    Comm lo, hi;
    if (h > 0) REQUIRE(rangecomm::Split_Comm(w, 0, h - 1, &lo) == MPI_SUCCESS);
    REQUIRE(rangecomm::Split_Comm(w, h, p - 1, &hi) == MPI_SUCCESS);
    if (h > 0) check_view(lo, select(all, 0, h - 1, 1));
    check_view(hi, select(all, h, p - 1, 1));
  }
  SECTION("every size-1 range") {
    for (int r = 0; r < p; ++r) {
      Comm one;
      REQUIRE(rangecomm::Split_Comm(w, r, r, &one) == MPI_SUCCESS);
      check_view(one, {r});
    }
  }
  SECTION("strided range of a strided range is one triple on the root") {
    Comm evens;
    REQUIRE(rangecomm::Split_Comm(w, 0, p - 1, 2, &evens) == MPI_SUCCESS);
    auto even_members = select(all, 0, p - 1, 2);
    check_view(evens, even_members);
    if (!evens.is_null() && evens.size() >= 2) {
      Comm sub;
      int last = evens.size() - 1;
      REQUIRE(rangecomm::Split_Comm(evens, 0, last, 2, &sub) == MPI_SUCCESS);
      auto sub_members = select(even_members, 0, last, 2);
      check_view(sub, sub_members);
      if (!sub.is_null()) {
        CHECK(sub.root_first() == 0);
        CHECK(sub.root_stride() == (sub.size() > 1 ? 4 : 1));
        CHECK(sub.depth() == 2);
        for (int r = 0; r < sub.size(); ++r)
          CHECK(sub.rank_in_parent(r) == evens.rank_from_root(sub.rank_in_root(r)));
      }
    }
  }
  SECTION("a chain of ten nested ranges shrinking from the left") {
    Comm c = w;
    std::vector<int> members = all;
    for (int depth = 1; depth <= 10 && !c.is_null(); ++depth) {
      int first = c.size() > 1 ? 1 : 0;
      Comm next;
      REQUIRE(rangecomm::Split_Comm(c, first, c.size() - 1, &next) == MPI_SUCCESS);
      members = select(members, first, static_cast<int>(members.size()) - 1, 1);
      check_view(next, members);
      if (!next.is_null()) CHECK(next.depth() == depth);
      c = next;
    }
  }
}

TEST_CASE("every rank's view of a range agrees") {
  Comm w = world();
  int p = mpitest::world_size();
  for (int stride = 1; stride <= 3; ++stride) {
    for (int first = 0; first < p; ++first) {
      Comm c;
      REQUIRE(rangecomm::Split_Comm(w, first, p - 1, stride, &c) == MPI_SUCCESS);
      // Gather (rank in range, size) from all ranks: members must report 0..size-1 once each.
      int mine[2] = {c.is_null() ? -1 : c.rank(), c.is_null() ? 0 : c.size()};
      std::vector<int> all(2 * p);
      MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, MPI_COMM_WORLD);
      int expected_size = (p - 1 - first) / stride + 1;
      std::vector<int> seen(expected_size, 0);
      for (int r = 0; r < p; ++r) {
        bool member = r >= first && (r - first) % stride == 0;
        CHECK(member == (all[2 * r] >= 0));
        if (!member) continue;
        CHECK(all[2 * r + 1] == expected_size);
        CHECK(all[2 * r] == (r - first) / stride);
        if (all[2 * r] >= 0 && all[2 * r] < expected_size) ++seen[all[2 * r]];
      }
      for (int s : seen) CHECK(s == 1);
    }
  }
}

TEST_CASE("bad creation arguments give the proper error class") {
  Comm w = world();
  int p = mpitest::world_size();
  Comm out;
  CHECK(error_class(rangecomm::Split_Comm(w, 0, p - 1, 0, &out)) == MPI_ERR_ARG);
  CHECK(error_class(rangecomm::Split_Comm(w, 0, p - 1, -2, &out)) == MPI_ERR_ARG);
  if (p > 1) CHECK(error_class(rangecomm::Split_Comm(w, 1, 0, &out)) == MPI_ERR_ARG);
  CHECK(error_class(rangecomm::Split_Comm(w, 0, p, &out)) == MPI_ERR_RANK);
  CHECK(error_class(rangecomm::Split_Comm(w, -1, 0, &out)) == MPI_ERR_RANK);
  CHECK(error_class(rangecomm::Split_Comm(Comm(), 0, 0, &out)) == MPI_ERR_COMM);
  CHECK(error_class(rangecomm::Create_Comm(MPI_COMM_NULL, &out)) == MPI_ERR_COMM);
  Comm null;
  CHECK(error_class(rangecomm::Comm_free(&null)) == MPI_ERR_COMM);

  // The message says what was wrong.
  int code = rangecomm::Split_Comm(w, 0, p, &out);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  REQUIRE(rangecomm::Error_string(code, text, &len) == MPI_SUCCESS);
  CHECK(std::string(text, len).find("outside the parent") != std::string::npos);
}

TEST_CASE("live copies of one range, and the same members from another parent, all work") {
  Comm w = world();
  int p = mpitest::world_size(), me = mpitest::world_rank();
  if (p < 2) return;
  // Three live copies of 0..1 of the world, and 0..1 of the world's whole copy: MPI allows any
  // number of communicators over one group.
  Comm a, b, c, whole, d;
  REQUIRE(rangecomm::Split_Comm(w, 0, 1, &a) == MPI_SUCCESS);
  REQUIRE(rangecomm::Split_Comm(w, 0, 1, &b) == MPI_SUCCESS);
  REQUIRE(rangecomm::Split_Comm(w, 0, 1, &c) == MPI_SUCCESS);
  REQUIRE(rangecomm::Split_Comm(w, 0, p - 1, &whole) == MPI_SUCCESS);
  REQUIRE(rangecomm::Split_Comm(whole, 0, 1, &d) == MPI_SUCCESS);
  if (me > 1) {
    CHECK(a.is_null());
    return;
  }
  // The same tag on all four, sent in one order and received in another with wildcards: each
  // message arrives on its own communicator.
  Comm* all[] = {&a, &b, &c, &d};
  for (int i = 0; i < 4; ++i) {
    int v = 10 * i + me;
    REQUIRE(rangecomm::Send(&v, 1, MPI_INT, 1 - me, 5, *all[i]) == MPI_SUCCESS);
  }
  for (int i = 3; i >= 0; --i) {
    int v = -1;
    MPI_Status st;
    REQUIRE(rangecomm::Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, *all[i], &st) ==
            MPI_SUCCESS);
    CHECK(v == 10 * i + (1 - me));
    CHECK(st.MPI_SOURCE == 1 - me);
    CHECK(st.MPI_TAG == 5);
  }
  // Splitting into the same handle replaces the range it held; the handle may be the parent's.
  REQUIRE(rangecomm::Split_Comm(w, 0, 1, &b) == MPI_SUCCESS);
  REQUIRE(rangecomm::Split_Comm(b, 0, 1, &b) == MPI_SUCCESS);
  CHECK(b.depth() == 2);
  CHECK(b.size() == 2);
  int sum = 0, one = 1;
  REQUIRE(rangecomm::Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, b) == MPI_SUCCESS);
  CHECK(sum == 2);
}

TEST_CASE("creating into a kept handle gives a new communicator each time") {
  Comm w = world();
  int p = mpitest::world_size(), me = mpitest::world_rank();
  const int last = p > 2 ? 2 : p - 1;  // ranks 0..last, a size-1 range at p = 1
  // A handle re-created many times (its quiet state is built anew in place): each time a new
  // identity, and the handle's last communicator carries messages that no earlier one sees.
  Comm kept, copy;
  std::vector<std::uint32_t> contexts;
  for (int i = 0; i < 5; ++i) {
    REQUIRE(rangecomm::Split_Comm(w, 0, last, &kept) == MPI_SUCCESS);
    if (me > last) {
      CHECK(kept.is_null());
      continue;
    }
    CHECK(kept.size() == last + 1);
    CHECK(kept.rank() == me);
    CHECK(kept.depth() == 1);
    contexts.push_back(rangecomm::Comm_context(kept));
    if (i == 1) copy = kept;  // a second holder: this state must not be reused
  }
  if (me > last) return;
  for (std::size_t i = 0; i < contexts.size(); ++i)
    for (std::size_t j = i + 1; j < contexts.size(); ++j) CHECK(contexts[i] != contexts[j]);
  CHECK(copy != kept);
  CHECK(copy.size() == last + 1);
  CHECK(rangecomm::Comm_context(copy) == contexts[1]);
  // Traffic on the copy and on the kept handle, the same tag and wildcards: each message stays
  // on its own communicator. Then the kept handle, now with peers, is created into again.
  for (int round = 0; round < 2; ++round) {
    int right = (me + 1) % (last + 1), left = (me + last) % (last + 1);
    int a = 100 + me, b = 200 + me, got_a = -1, got_b = -1;
    rangecomm::Request r[4];
    REQUIRE(rangecomm::Irecv(&got_b, 1, MPI_INT, MPI_ANY_SOURCE, 7, kept, &r[0]) == MPI_SUCCESS);
    REQUIRE(rangecomm::Irecv(&got_a, 1, MPI_INT, MPI_ANY_SOURCE, 7, copy, &r[1]) == MPI_SUCCESS);
    REQUIRE(rangecomm::Isend(&a, 1, MPI_INT, right, 7, copy, &r[2]) == MPI_SUCCESS);
    REQUIRE(rangecomm::Isend(&b, 1, MPI_INT, right, 7, kept, &r[3]) == MPI_SUCCESS);
    REQUIRE(rangecomm::Waitall(4, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(got_a == 100 + left);
    CHECK(got_b == 200 + left);
    REQUIRE(rangecomm::Split_Comm(w, 0, last, &kept) == MPI_SUCCESS);
    CHECK(rangecomm::Comm_context(kept) != rangecomm::Comm_context(copy));
  }
}

TEST_CASE("a kept handle re-created after a range of a group keeps nothing of it") {
  Comm w = world();
  int p = mpitest::world_size(), me = mpitest::world_rank();
  // The world in reverse order: a general group, whose ranges are tables of members with a
  // parent's table; the handle's communicator also makes a child (its own creation counts).
  std::vector<int> reversed(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) reversed[i] = p - 1 - i;
  Comm group, kept, child;
  REQUIRE(rangecomm::Group_Comm_below(w, reversed.data(), p, 1, &group) == MPI_SUCCESS);
  REQUIRE(rangecomm::Split_Comm(group, 0, p - 1, &kept) == MPI_SUCCESS);
  CHECK(kept.is_strided_range() == (p == 1));
  CHECK(kept.rank_in_parent(0) == 0);
  CHECK(kept.rank_in_root(0) == p - 1);
  REQUIRE(rangecomm::Split_Comm(kept, 0, 0, &child) == MPI_SUCCESS);
  child = Comm();
  CHECK(rangecomm::Comm_renewable(kept));
  // Into the same handle, the world's own order: no member table, no parent's table.
  REQUIRE(rangecomm::Split_Comm(w, 0, p - 1, &kept) == MPI_SUCCESS);
  CHECK(kept.is_strided_range());
  CHECK(kept.root_stride() == 1);
  CHECK(kept.rank() == me);
  for (int r = 0; r < p; ++r) {
    CHECK(kept.rank_in_root(r) == r);
    CHECK(kept.rank_in_parent(r) == r);
    CHECK(kept.rank_from_root(r) == r);
  }
  // It carries a collective whose result every member agrees on, and so does a range of it.
  int sum = 0;
  REQUIRE(rangecomm::Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, kept) == MPI_SUCCESS);
  CHECK(sum == p * (p - 1) / 2);
  REQUIRE(rangecomm::Split_Comm(kept, 0, p - 1, &child) == MPI_SUCCESS);
  REQUIRE(rangecomm::Allreduce(&me, &sum, 1, MPI_INT, MPI_MAX, child) == MPI_SUCCESS);
  CHECK(sum == p - 1);
}

TEST_CASE("Comm_renewable: an untouched communicator that its handle alone holds") {
  Comm w = world();
  int p = mpitest::world_size(), me = mpitest::world_rank();
  Comm none;
  CHECK_FALSE(rangecomm::Comm_renewable(none));
  Comm c;
  REQUIRE(rangecomm::Split_Comm(w, 0, p - 1, &c) == MPI_SUCCESS);
  CHECK(rangecomm::Comm_renewable(c));
  Comm copy = c;
  CHECK_FALSE(rangecomm::Comm_renewable(c));
  copy = Comm();
  CHECK(rangecomm::Comm_renewable(c));
  if (p == 1) return;
  // While a receive is pending on it, it is not renewable; after a message each way around a
  // ring it has peers and a slot, and is not either (a creation into it retires it in place).
  int right = (me + 1) % p, left = (me + p - 1) % p, got = -1;
  rangecomm::Request r[2];
  REQUIRE(rangecomm::Irecv(&got, 1, MPI_INT, left, 3, c, &r[0]) == MPI_SUCCESS);
  CHECK_FALSE(rangecomm::Comm_renewable(c));
  REQUIRE(rangecomm::Isend(&me, 1, MPI_INT, right, 3, c, &r[1]) == MPI_SUCCESS);
  REQUIRE(rangecomm::Waitall(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  CHECK(got == left);
  CHECK_FALSE(rangecomm::Comm_renewable(c));
}

TEST_CASE("a kept handle that carried traffic is made anew in place, again and again") {
  Comm w = world();
  int p = mpitest::world_size(), me = mpitest::world_rank();
  Comm kept;
  std::uint32_t previous = 0;
  for (int round = 0; round < 40; ++round) {
    // The whole world and the half of it this process is in, alternately: peer tables of
    // different sizes built in the same memory.
    int half = p / 2, first = 0, last = p - 1;
    if (round % 2 == 1 && p > 1) {
      first = me < half ? 0 : half;
      last = me < half ? half - 1 : p - 1;
    }
    REQUIRE(rangecomm::Split_Comm(w, first, last, &kept) == MPI_SUCCESS);
    REQUIRE(kept.size() == last - first + 1);
    CHECK(rangecomm::Comm_context(kept) != previous);
    previous = rangecomm::Comm_context(kept);
    int n = kept.size(), r = kept.rank();
    int to = (r + 1) % n, from = (r + n - 1) % n;
    // A wildcard receive (the matching engine) and a specific one, each tagged with the round:
    // a message of an earlier round's communicator would show here.
    int got[2] = {-1, -1}, mine[2] = {100 * round + r, 100 * round + r + 50};
    rangecomm::Request q[4];
    MPI_Status st[4];
    REQUIRE(rangecomm::Irecv(&got[0], 1, MPI_INT, MPI_ANY_SOURCE, round, kept, &q[0]) ==
            MPI_SUCCESS);
    REQUIRE(rangecomm::Irecv(&got[1], 1, MPI_INT, from, round + 1000, kept, &q[1]) == MPI_SUCCESS);
    REQUIRE(rangecomm::Isend(&mine[0], 1, MPI_INT, to, round, kept, &q[2]) == MPI_SUCCESS);
    REQUIRE(rangecomm::Isend(&mine[1], 1, MPI_INT, to, round + 1000, kept, &q[3]) == MPI_SUCCESS);
    REQUIRE(rangecomm::Waitall(4, q, st) == MPI_SUCCESS);
    CHECK(got[0] == 100 * round + from);
    CHECK(st[0].MPI_SOURCE == from);
    CHECK(got[1] == 100 * round + from + 50);
    int sum = 0;
    REQUIRE(rangecomm::Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, kept) == MPI_SUCCESS);
    CHECK(sum == (first + last) * n / 2);
  }
}

TEST_CASE("a hundred thousand live size-1 ranges, then freed") {
  Comm w = world();
  int me_in_world = w.rank();
  std::vector<Comm> many(100000);
  for (auto& c : many)
    REQUIRE(rangecomm::Split_Comm(w, me_in_world, me_in_world, &c) == MPI_SUCCESS);
  for (auto& c : many) CHECK(c.size() == 1);
  for (auto& c : many) REQUIRE(rangecomm::Comm_free(&c) == MPI_SUCCESS);
  for (auto& c : many) CHECK(c.is_null());
}
