// Barrier, Bcast, Reduce and Allreduce on ranges, compared element by element with the native
// collective on a real communicator of the same processes, on the same data.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include "coll_util.hpp"
#include "p2p/matching.hpp"
#include "rangecomm/embedding.hpp"
#include "wire/tag_layout.hpp"

using namespace colltest;
using rangecomm::Request;

namespace {

const int kCounts[] = {0, 1, 7, 1000};

// The first n elements (buffers carry one extra element so that no buffer is empty: MPI
// libraries reject sendbuf == recvbuf, which two empty vectors would be).
template <class T>
std::vector<T> head(const std::vector<T>& v, int n) {
  return std::vector<T>(v.begin(), v.begin() + n);
}

// One reduction case: element type T viewed through `type` (count elements), operation op.
template <class T>
void compare_reductions(Pair& pr, int count, MPI_Datatype type, int elems_per_item, MPI_Op op,
                        int salt) {
  int n = count * elems_per_item;
  int r = pr.range.rank();
  auto in = random_values<T>(n + 1, r, salt);
  for (int root = 0; root < pr.range.size(); ++root) {
    std::vector<T> mine(n + 1, T(-1)), theirs(n + 1, T(-1));
    REQUIRE(rangecomm::Reduce(in.data(), mine.data(), count, type, op, root, pr.range) ==
            MPI_SUCCESS);
    REQUIRE(MPI_Reduce(in.data(), theirs.data(), count, type, op, root, pr.native) == MPI_SUCCESS);
    if (r == root) CHECK(head(mine, n) == head(theirs, n));
    // In place at the root.
    std::vector<T> inplace = in;
    REQUIRE(rangecomm::Reduce(r == root ? MPI_IN_PLACE : in.data(), inplace.data(), count, type, op,
                              root, pr.range) == MPI_SUCCESS);
    if (r == root) CHECK(head(inplace, n) == head(theirs, n));
  }
  std::vector<T> mine(n + 1, T(-1)), theirs(n + 1, T(-1));
  REQUIRE(rangecomm::Allreduce(in.data(), mine.data(), count, type, op, pr.range) == MPI_SUCCESS);
  REQUIRE(MPI_Allreduce(in.data(), theirs.data(), count, type, op, pr.native) == MPI_SUCCESS);
  CHECK(head(mine, n) == head(theirs, n));
  std::vector<T> inplace = in;
  REQUIRE(rangecomm::Allreduce(MPI_IN_PLACE, inplace.data(), count, type, op, pr.range) ==
          MPI_SUCCESS);
  CHECK(head(inplace, n) == head(theirs, n));
}

// Runs body once per algorithm setting: each entry sets environment variables (same on every
// rank) that force one algorithm; the variables are cleared afterwards.
struct Setting {
  const char* name;
  std::vector<std::pair<const char*, const char*>> env;
};

template <class Body>
void for_each_setting(const std::vector<Setting>& settings, Body body) {
  for (const auto& setting : settings) {
    INFO("algorithm setting: " << setting.name);
    std::vector<ScopedEnv> forced;
    for (auto& [k, v] : setting.env) forced.emplace_back(k, v);
    body();
  }
}

// Runs body(pair) on every shape this process is a member of, under each algorithm setting.
template <class Body>
void for_each_member_shape(const std::vector<Setting>& settings, Body body) {
  auto w = world();
  auto all = shapes(w);
  for_each_setting(settings, [&] {
    for (auto& pr : all) {
      if (!pr->member()) continue;
      INFO(pr->name);
      body(pr);
    }
  });
}

const std::vector<Setting> kBcastSettings = {
    {"defaults", {}},
    {"binomial",
     {{"RANGECOMM_BCAST_PIPELINE_BYTES", "1000000000"},
      {"RANGECOMM_BCAST_SMALL_PIECED_BYTES", "0"},
      {"RANGECOMM_BCAST_PIECED_BYTES", "0"}}},
    {"binomial in pieces: 12 bytes up to 100 bytes, 40 bytes beyond",
     {{"RANGECOMM_BCAST_PIPELINE_BYTES", "1000000000"},
      {"RANGECOMM_BCAST_SMALL_PIECED_BYTES", "100"},
      {"RANGECOMM_BCAST_SMALL_PIECE_BYTES", "12"},
      {"RANGECOMM_BCAST_PIECED_BYTES", "1000000000"},
      {"RANGECOMM_BCAST_PIECE_BYTES", "40"}}},
    {"pipelined chain, 40-byte segments",
     {{"RANGECOMM_BCAST_PIPELINE_BYTES", "0"}, {"RANGECOMM_BCAST_SEGMENT_BYTES", "40"}}},
    // Flat only where every process shares one node (checked below for this run).
    {"flat tree from 1 byte",
     {{"RANGECOMM_BCAST_PIPELINE_BYTES", "1000000000"},
      {"RANGECOMM_BCAST_SMALL_PIECED_BYTES", "0"},
      {"RANGECOMM_BCAST_PIECED_BYTES", "0"},
      {"RANGECOMM_BCAST_FLAT_BYTES", "1"},
      {"RANGECOMM_BCAST_FLAT_PROCS", "1000000000"}}},
    // Across nodes only by default; here on every shape and count (recursive doubling on sizes
    // that are powers of two, a ring on the others; blocks of 0 bytes where count < size).
    {"scatter and allgather", {{"RANGECOMM_BCAST_ALGORITHM", "scatter_allgather"}}},
};

// "defaults" runs the direct allreduce on the small counts and recursive doubling on 1000 ints;
// the others switch the direct one off, except the one that forces it for every count.
const std::vector<Setting> kAllreduceSettings = {
    {"defaults", {}},
    {"direct allreduce at every count",
     {{"RANGECOMM_ALLREDUCE_DIRECT_PROCS", "1000000000"},
      {"RANGECOMM_ALLREDUCE_DIRECT_BYTES", "1000000000"}}},
    {"binomial reduce, recursive doubling allreduce",
     {{"RANGECOMM_REDUCE_SHORT_BYTES", "1000000000"},
      {"RANGECOMM_ALLREDUCE_DIRECT_PROCS", "0"},
      {"RANGECOMM_ALLREDUCE_SHORT_BYTES", "1000000000"}}},
    {"Rabenseifner reduce and allreduce",
     {{"RANGECOMM_REDUCE_SHORT_BYTES", "0"},
      {"RANGECOMM_REDUCE_RING_BYTES", "1000000000"},
      {"RANGECOMM_ALLREDUCE_DIRECT_PROCS", "0"},
      {"RANGECOMM_ALLREDUCE_SHORT_BYTES", "0"},
      {"RANGECOMM_ALLREDUCE_RING_BYTES", "1000000000"}}},
    {"ring reduce and allreduce (on sizes that are not powers of two; Rabenseifner on the others)",
     {{"RANGECOMM_REDUCE_SHORT_BYTES", "0"},
      {"RANGECOMM_REDUCE_RING_BYTES", "0"},
      {"RANGECOMM_ALLREDUCE_DIRECT_PROCS", "0"},
      {"RANGECOMM_ALLREDUCE_SHORT_BYTES", "0"},
      {"RANGECOMM_ALLREDUCE_RING_BYTES", "0"}}},
};

// A non-commutative op: the direct allreduce (small messages, default) folds in rank order on
// every process; without it, a rank-order reduce to 0 and a broadcast.
const std::vector<Setting> kNonCommutativeSettings = {
    {"direct allreduce", {}},
    {"reduce and broadcast", {{"RANGECOMM_ALLREDUCE_DIRECT_PROCS", "0"}}},
};

// The direct barrier and dissemination, forced by name at every process count.
const std::vector<Setting> kBarrierSettings = {
    {"direct", {{"RANGECOMM_BARRIER_ALGORITHM", "direct"}}},
    {"dissemination", {{"RANGECOMM_BARRIER_ALGORITHM", "dissemination"}}},
};

}  // namespace

// The flat broadcast is chosen only when the root communicator lies on one node; that is found
// with MPI_COMM_TYPE_SHARED when the range layer attaches. Checked here against the processor
// names, so that the "flat tree" setting above is known to run the flat tree.
TEST_CASE("attaching finds whether every process shares one node") {
  auto w = world();
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  REQUIRE(MPI_Get_processor_name(name, &length) == MPI_SUCCESS);
  std::vector<char> names(static_cast<size_t>(MPI_MAX_PROCESSOR_NAME) * w.size());
  REQUIRE(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(),
                        MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD) == MPI_SUCCESS);
  bool same = true;
  for (int r = 1; r < w.size(); ++r)
    same = same && std::strncmp(&names[0], &names[static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME],
                                MPI_MAX_PROCESSOR_NAME) == 0;
  CHECK(rangecomm::detail::CommAccess::of(w)->channel->one_node() == same);
}

TEST_CASE("Bcast from every root, with every count and a strided type") {
  for_each_member_shape(kBcastSettings, [&](auto& pr) {
    for (int count : kCounts) {
      for (int root = 0; root < pr->range.size(); ++root) {
        auto data = random_values<int>(2 * count + 1, root, count);  // the root's data
        std::vector<int> mine(2 * count + 1, -1), theirs(2 * count + 1, -1);
        if (pr->range.rank() == root) mine = theirs = data;
        REQUIRE(rangecomm::Bcast(mine.data(), count, MPI_INT, root, pr->range) == MPI_SUCCESS);
        REQUIRE(MPI_Bcast(theirs.data(), count, MPI_INT, root, pr->native) == MPI_SUCCESS);
        CHECK(mine == theirs);
        std::fill(mine.begin(), mine.end(), -1);
        std::fill(theirs.begin(), theirs.end(), -1);
        if (pr->range.rank() == root) mine = theirs = data;
        REQUIRE(rangecomm::Bcast(mine.data(), count, every_other_int(), root, pr->range) ==
                MPI_SUCCESS);
        REQUIRE(MPI_Bcast(theirs.data(), count, every_other_int(), root, pr->native) ==
                MPI_SUCCESS);
        CHECK(mine == theirs);
      }
    }
  });
}

// MPI asks only for equal type signatures: every process may describe the message with its
// own datatype. Ranks use n MPI_INT, one contiguous type of n ints, or n strided ints in turn,
// so pieces and segments must be cut at the same bytes on every process.
TEST_CASE("Bcast with a different datatype of the same signature on each process") {
  for_each_member_shape(kBcastSettings, [&](auto& pr) {
    for (int count : {7, 300, 1000, 5000}) {
      MPI_Datatype block;
      MPI_Type_contiguous(count, MPI_INT, &block);
      MPI_Type_commit(&block);
      for (int root = 0; root < pr->range.size(); ++root) {
        INFO("count " << count << ", root " << root);
        auto data = random_values<int>(count, root, count + 3);
        int kind = (pr->range.rank() + root) % 3;  // the root takes each kind in turn too
        std::vector<int> buf(2 * count, -1);
        bool root_here = pr->range.rank() == root;
        for (int i = 0; i < count && root_here; ++i) buf[kind == 2 ? 2 * i : i] = data[i];
        int n = kind == 1 ? 1 : count;
        MPI_Datatype type = kind == 0 ? MPI_INT : kind == 1 ? block : every_other_int();
        if (root % 2 == 0) {
          REQUIRE(rangecomm::Bcast(buf.data(), n, type, root, pr->range) == MPI_SUCCESS);
        } else {  // the nonblocking schedule holds the same steps
          rangecomm::Request req;
          REQUIRE(rangecomm::Ibcast(buf.data(), n, type, root, pr->range, &req) == MPI_SUCCESS);
          REQUIRE(rangecomm::Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        }
        std::vector<int> got(count);
        for (int i = 0; i < count; ++i) got[i] = buf[kind == 2 ? 2 * i : i];
        CHECK(got == data);
        if (kind == 2)  // the gaps of the strided type stay untouched
          for (int i = 0; i < count; ++i) CHECK(buf[2 * i + 1] == -1);
      }
      MPI_Type_free(&block);
    }
  });
}

TEST_CASE("Reduce and Allreduce with predefined operations, in place too") {
  for_each_member_shape(kAllreduceSettings, [&](auto& pr) {
    for (int count : kCounts) {
      INFO("count " << count);
      compare_reductions<int>(*pr, count, MPI_INT, 1, MPI_SUM, 1);
      compare_reductions<int>(*pr, count, MPI_INT, 1, MPI_MAX, 2);
      compare_reductions<int>(*pr, count, MPI_INT, 1, MPI_BXOR, 3);
      compare_reductions<long long>(*pr, count, MPI_LONG_LONG, 1, MPI_PROD, 4);
      compare_reductions<double>(*pr, count, MPI_DOUBLE, 1, MPI_MIN, 5);
      compare_reductions<int>(*pr, count, MPI_2INT, 2, MPI_MINLOC, 7);
      compare_reductions<int>(*pr, count, MPI_2INT, 2, MPI_MAXLOC, 8);
    }
  });
}

TEST_CASE("a non-commutative user operation reduces in rank order") {
  for_each_member_shape(kNonCommutativeSettings, [&](auto& pr) {
    for (int count : {1, 5}) {
      compare_reductions<std::uint32_t>(*pr, count, matrix_type(), 4, matmul_op(), 9);
      // Independently of MPI: the product of all ranks' matrices in rank order.
      int n = pr->range.size();
      std::vector<std::uint32_t> expected = {1, 0, 0, 1};
      for (int r = 0; r < n; ++r) {
        auto m = random_values<std::uint32_t>(4 * count, r, 9);
        int one = 1;
        std::vector<std::uint32_t> acc = expected;
        matmul(acc.data(), m.data(), &one, nullptr);  // m := acc * m
        expected.assign(m.begin(), m.begin() + 4);
      }
      std::vector<std::uint32_t> got(4 * count);
      auto in = random_values<std::uint32_t>(4 * count, pr->range.rank(), 9);
      REQUIRE(rangecomm::Allreduce(in.data(), got.data(), count, matrix_type(), matmul_op(),
                                   pr->range) == MPI_SUCCESS);
      CHECK(std::vector<std::uint32_t>(got.begin(), got.begin() + 4) == expected);
    }
  });
}

TEST_CASE(
    "many nonblocking collectives outstanding on overlapping ranges, completed out of order") {
  auto w = world();
  auto all = shapes(w);
  constexpr int kRounds = 4;
  struct Slot {
    Pair* pr;
    std::vector<int> in, bcast, sum;
    int root;
  };
  std::vector<Slot> slots;
  std::vector<Request> requests;
  // Start everything on every shape before waiting on anything.
  for (int round = 0; round < kRounds; ++round) {
    for (auto& pr : all) {
      if (!pr->member()) continue;
      Slot s{pr.get(),
             random_values<int>(33, pr->range.rank(), round),
             {},
             {},
             round % pr->range.size()};
      s.bcast = s.in;
      s.sum.assign(33, 0);
      slots.push_back(std::move(s));
    }
  }
  requests.resize(2 * slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    auto& s = slots[i];
    REQUIRE(rangecomm::Ibcast(s.bcast.data(), 33, MPI_INT, s.root, s.pr->range, &requests[2 * i]) ==
            MPI_SUCCESS);
    REQUIRE(rangecomm::Iallreduce(s.in.data(), s.sum.data(), 33, MPI_INT, MPI_SUM, s.pr->range,
                                  &requests[2 * i + 1]) == MPI_SUCCESS);
  }
  // Complete in reverse order of starting.
  for (size_t i = requests.size(); i-- > 0;)
    REQUIRE(rangecomm::Wait(&requests[i], MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (auto& s : slots) {
    std::vector<int> bcast = s.in, sum(33);
    REQUIRE(MPI_Bcast(bcast.data(), 33, MPI_INT, s.root, s.pr->native) == MPI_SUCCESS);
    REQUIRE(MPI_Allreduce(s.in.data(), sum.data(), 33, MPI_INT, MPI_SUM, s.pr->native) ==
            MPI_SUCCESS);
    CHECK(s.bcast == bcast);
    CHECK(s.sum == sum);
  }
}

TEST_CASE("collectives interleaved with point-to-point traffic of the same tags") {
  auto w = world();
  int p = w.size(), me = w.rank();
  // Point-to-point with the payload tag values a collective would use (0..3), wildcard receives
  // posted before the collectives start.
  std::vector<int> in(4, -1), out(4, me);
  std::vector<Request> recvs(4), sends(4);
  for (int t = 0; t < 4; ++t)
    REQUIRE(rangecomm::Irecv(&in[t], 1, MPI_INT, MPI_ANY_SOURCE, t, w, &recvs[t]) == MPI_SUCCESS);
  int value = me + 1, sum = 0;
  REQUIRE(rangecomm::Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, w) == MPI_SUCCESS);
  CHECK(sum == p * (p + 1) / 2);
  REQUIRE(rangecomm::Barrier(w) == MPI_SUCCESS);
  for (int t = 0; t < 4; ++t)
    REQUIRE(rangecomm::Isend(&out[t], 1, MPI_INT, (me + 1) % p, t, w, &sends[t]) == MPI_SUCCESS);
  REQUIRE(rangecomm::Bcast(&value, 1, MPI_INT, 0, w) == MPI_SUCCESS);
  CHECK(value == 1);
  REQUIRE(rangecomm::Waitall(4, recvs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  REQUIRE(rangecomm::Waitall(4, sends.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  for (int t = 0; t < 4; ++t) CHECK(in[t] == (me + p - 1) % p);
}

// A small blocking Bcast or Gather goes straight through MPI on a process with nothing else to
// advance and through its plan on one whose engine is busy (here: odd ranks wait in a wildcard
// receive, which also takes collective messages off the lane and parks them); both must send
// and receive the same messages, from every root.
TEST_CASE("small Bcast and Gather agree when some processes plan them and others do not") {
  auto w = world();
  const int p = w.size(), me = w.rank();
  int warm = 0;
  std::vector<int> all(p, -1);
  REQUIRE(rangecomm::Bcast(&warm, 1, MPI_INT, 0, w) == MPI_SUCCESS);  // bindings in place
  REQUIRE(rangecomm::Gather(&me, 1, MPI_INT, all.data(), 1, MPI_INT, 0, w) == MPI_SUCCESS);
  int waited = -1;
  Request pending;
  if (me % 2 == 1)
    REQUIRE(rangecomm::Irecv(&waited, 1, MPI_INT, MPI_ANY_SOURCE, 7, w, &pending) == MPI_SUCCESS);
  for (int root = 0; root < p; ++root) {
    int value = me == root ? 10 * root + 1 : -1;
    REQUIRE(rangecomm::Bcast(&value, 1, MPI_INT, root, w) == MPI_SUCCESS);
    CHECK(value == 10 * root + 1);
    int mine = 100 * root + me;
    std::fill(all.begin(), all.end(), -1);
    REQUIRE(rangecomm::Gather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, root, w) == MPI_SUCCESS);
    if (me == root)
      for (int r = 0; r < p; ++r) CHECK(all[r] == 100 * root + r);
  }
  if (me % 2 == 1) {  // the wildcard receive takes this process's own message
    Request self;
    REQUIRE(rangecomm::Isend(&me, 1, MPI_INT, me, 7, w, &self) == MPI_SUCCESS);
    REQUIRE(rangecomm::Wait(&self, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(rangecomm::Wait(&pending, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(waited == me);
  }
}

// A small blocking Bcast or Gather that goes straight through MPI keeps its envelopes for the
// same call again (coll/common.hpp). The same call must still reach only its own communicator's
// messages when it alternates between communicators of the same processes (the janus side
// overlaps the halves), when root, count, type or MPI_IN_PLACE change, when another algorithm is
// forced in between, beside point-to-point messages with the tags a collective's payload would
// use, and when the communicator they were kept for is freed and the next one made takes its
// memory.
TEST_CASE("a small broadcast or gather made again keeps to its communicator and arguments") {
  auto w = world();
  const int p = w.size(), me = w.rank(), h = p / 2;
  auto bcast_from = [&](const rangecomm::Comm& c, int root, int value, MPI_Datatype type) {
    int got = c.rank() == root ? value : -1;
    REQUIRE(rangecomm::Bcast(&got, 1, type, root, c) == MPI_SUCCESS);
    CHECK(got == value);
  };
  auto gather_to = [&](const rangecomm::Comm& c, int root, int salt, bool in_place) {
    const int n = c.size(), r = c.rank();
    std::vector<int> all(n, -1);
    int mine = salt + r;
    if (in_place && r == root) all[r] = mine;
    REQUIRE(rangecomm::Gather(in_place && r == root ? MPI_IN_PLACE : &mine, 1, MPI_INT, all.data(),
                              1, MPI_INT, root, c) == MPI_SUCCESS);
    if (r == root)
      for (int i = 0; i < n; ++i) CHECK(all[i] == salt + i);
  };
  for (int round = 0; round < 6; ++round) {
    rangecomm::Comm whole, low, high, janus;
    REQUIRE(rangecomm::Split_Comm(w, 0, p - 1, 1, &whole) == MPI_SUCCESS);
    REQUIRE(rangecomm::Split_Comm(w, 0, h, 1, &low) == MPI_SUCCESS);  // h is in both
    REQUIRE(rangecomm::Split_Comm(w, h, p - 1, 1, &high) == MPI_SUCCESS);
    REQUIRE(rangecomm::Split_Comm(whole, 0, h, 1, &janus) == MPI_SUCCESS);
    for (int i = 0; i < 4; ++i) {
      const int base = 1000 * round + 10 * i;
      bcast_from(whole, round % p, base + 1, MPI_INT);
      bcast_from(whole, round % p, base + 2, MPI_INT);
      if (!low.is_null()) bcast_from(low, 0, base + 3, MPI_INT);
      if (!janus.is_null()) bcast_from(janus, 0, base + 4, MPI_INT);
      if (!high.is_null()) bcast_from(high, high.size() - 1, base + 5, MPI_INT);
      if (!janus.is_null()) bcast_from(janus, 0, base + 6, MPI_INT);
      int token = -1;  // a payload tag's worth of point-to-point on the same range
      REQUIRE(rangecomm::Sendrecv(&me, 1, MPI_INT, (me + 1) % p, i, &token, 1, MPI_INT,
                                  (me + p - 1) % p, i, whole, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      CHECK(token == (me + p - 1) % p);
      gather_to(whole, round % p, base + 100, false);
      gather_to(whole, round % p, base + 200, false);
      gather_to(whole, round % p, base + 300, true);  // in place at the root
      if (!low.is_null()) gather_to(low, 0, base + 400, false);
      if (!janus.is_null()) gather_to(janus, janus.size() - 1, base + 500, false);
      if (!high.is_null()) gather_to(high, 0, base + 600, false);
      gather_to(whole, round % p, base + 700, false);
      std::vector<long long> wides(p, -1);  // another count
      long long own = (1LL << 40) + me;
      REQUIRE(rangecomm::Gather(&own, 2, MPI_INT, wides.data(), 2, MPI_INT, 0, whole) ==
              MPI_SUCCESS);
      if (me == 0)
        for (int r = 0; r < p; ++r) CHECK(wides[r] == (1LL << 40) + r);
      bcast_from(whole, (round + 1) % p, base + 7, MPI_INT);       // another root
      bcast_from(whole, (round + 1) % p, base + 8, MPI_UNSIGNED);  // another type
      long long wide = me == 0 ? (1LL << 40) + base : -1;          // another count
      REQUIRE(rangecomm::Bcast(&wide, 2, MPI_INT, 0, whole) == MPI_SUCCESS);
      CHECK(wide == (1LL << 40) + base);
    }
    // Another algorithm forced, then the choice back to the library: both times anew.
    for (const char* forced : {"flat", ""}) {
      setenv("RANGECOMM_BCAST_ALGORITHM", forced, 1);
      setenv("RANGECOMM_GATHER_ALGORITHM", *forced ? "linear" : "", 1);
      rangecomm::detail::tuning_changed();
      bcast_from(whole, round % p, 7000 + round, MPI_INT);
      gather_to(whole, round % p, 8000 + round, false);
    }
    unsetenv("RANGECOMM_BCAST_ALGORITHM");
    unsetenv("RANGECOMM_GATHER_ALGORITHM");
    rangecomm::detail::tuning_changed();
    {  // kept for a communicator that is then freed: the next state made takes its memory, and
       // there the same call has another parent (world rank h is the root of `second`)
      rangecomm::Comm first, second;
      REQUIRE(rangecomm::Split_Comm(w, 0, p - 1, 1, &first) == MPI_SUCCESS);
      bcast_from(first, 0, 9000 + round, MPI_INT);  // sends the bindings
      bcast_from(first, 0, 9100 + round, MPI_INT);  // straight through MPI, kept
      gather_to(first, 0, 9200 + round, false);
      gather_to(first, 0, 9300 + round, false);
      const rangecomm::detail::RangeState* was = rangecomm::detail::CommAccess::of(first);
      first = rangecomm::Comm();
      for (const rangecomm::detail::RangeState* kept : rangecomm::detail::g_remembered_states)
        CHECK(kept != was);
      REQUIRE(rangecomm::Split_Comm(w, h, p - 1, 1, &second) == MPI_SUCCESS);
      for (int i = 0; i < 3 && !second.is_null(); ++i) {
        bcast_from(second, 0, 9500 + i, MPI_INT);
        gather_to(second, 0, 9600 + i, false);
      }
    }
    // Freed in another order each round, so that the next round's states reuse other blocks.
    if (round % 2) {
      whole = rangecomm::Comm(), janus = rangecomm::Comm();
    } else {
      janus = rangecomm::Comm(), low = rangecomm::Comm();
    }
  }
}

// A small nonblocking broadcast runs on each process as a relay (the receive from the parent
// posted at once, the sends to the children when it is in) outside the schedule engine. Many
// in flight at once from every root, a blocking one among them (a relay too, as the engine is
// busy), must each deliver the root's data whatever order they complete in; a process blocked
// in a receive must keep forwarding them (rank i waits for a token from rank i + 1 before it
// completes its own, and rank i + 1 sends it only once all of its broadcasts are complete); and
// a wildcard receive pending meanwhile (which takes collective messages off the lane and parks
// them) gets the point-to-point message sent afterwards, not a broadcast's.
TEST_CASE("small nonblocking broadcasts in flight at once complete in any order") {
  auto w = world();
  for (auto& pr : shapes(w)) {
    if (!pr->member()) continue;
    INFO(pr->name);
    const rangecomm::Comm& c = pr->range;
    const int p = c.size(), me = c.rank();
    std::vector<int> out(p, me), in(p, -1);  // every binding in place: the relay path below
    REQUIRE(rangecomm::Alltoall(out.data(), 1, MPI_INT, in.data(), 1, MPI_INT, c) == MPI_SUCCESS);
    int wild = -1;
    Request wild_request;
    REQUIRE(rangecomm::Irecv(&wild, 1, MPI_INT, MPI_ANY_SOURCE, 9, c, &wild_request) ==
            MPI_SUCCESS);
    const int k = 3 * p + 1;
    auto expected = [](int i, int j) { return 1000 * i + j; };
    std::vector<std::vector<int>> data(k);
    std::vector<Request> requests(k);
    for (int i = 0; i < k; ++i) {
      const int root = (7 * i + 3) % p, count = 1 + i % 64;  // 4 to 256 bytes
      data[i].assign(count, -1);
      if (me == root)
        for (int j = 0; j < count; ++j) data[i][j] = expected(i, j);
      if (i == k / 2)
        REQUIRE(rangecomm::Bcast(data[i].data(), count, MPI_INT, root, c) == MPI_SUCCESS);
      else
        REQUIRE(rangecomm::Ibcast(data[i].data(), count, MPI_INT, root, c, &requests[i]) ==
                MPI_SUCCESS);
    }
    int token = -1;
    if (me + 1 < p)
      REQUIRE(rangecomm::Recv(&token, 1, MPI_INT, me + 1, 5, c, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = k; i-- > 0;)
      REQUIRE(rangecomm::Wait(&requests[i], MPI_STATUS_IGNORE) == MPI_SUCCESS);
    if (me > 0) REQUIRE(rangecomm::Send(&me, 1, MPI_INT, me - 1, 5, c) == MPI_SUCCESS);
    if (me + 1 < p) CHECK(token == me + 1);
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < static_cast<int>(data[i].size()); ++j) {
        INFO("broadcast " << i << " element " << j);
        CHECK(data[i][j] == expected(i, j));
      }
    Request sent;
    REQUIRE(rangecomm::Isend(&me, 1, MPI_INT, (me + 1) % p, 9, c, &sent) == MPI_SUCCESS);
    REQUIRE(rangecomm::Wait(&wild_request, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(rangecomm::Wait(&sent, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(wild == (me + p - 1) % p);
  }
}

// A relay whose message from its parent a wildcard probe has parked takes it from there (MPI no
// longer holds it) and still forwards it: rank `target` (a leaf on 2 or 3 processes, the parent
// of rank 3 from 4 on) polls until the root's message is parked before it starts its part.
TEST_CASE("a nonblocking broadcast receives a message a wildcard probe parked") {
  auto w = world();
  const int p = w.size(), me = w.rank();
  if (p < 2) return;
  using rangecomm::detail::TagLayout;
  rangecomm::detail::RangeState& state = *rangecomm::detail::CommAccess::of(w);
  std::vector<int> out(p, me), in(p, -1);
  REQUIRE(rangecomm::Alltoall(out.data(), 1, MPI_INT, in.data(), 1, MPI_INT, w) == MPI_SUCCESS);
  for (int target = 1; target <= std::min(2, p - 1); ++target) {
    INFO("target " << target);
    std::vector<int> value(3, me == 0 ? 40 + target : -1);
    if (me == target) {
      while (rangecomm::detail::peek_parked(state, TagLayout::collective, state.to_root(0),
                                            MPI_ANY_TAG) == nullptr) {
        int flag = 0;
        REQUIRE(rangecomm::Iprobe(MPI_ANY_SOURCE, 4711, w, &flag, MPI_STATUS_IGNORE) ==
                MPI_SUCCESS);
        REQUIRE(flag == 0);
      }
    }
    const int seq = static_cast<int>(state.coll_seq & TagLayout::max_payload);  // the Ibcast's
    Request r;
    REQUIRE(rangecomm::Ibcast(value.data(), 3, MPI_INT, 0, w, &r) == MPI_SUCCESS);
    REQUIRE(rangecomm::Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(value == std::vector<int>(3, 40 + target));
    // The broadcast's message is taken (a process done with it may have sent the Barrier's
    // message since, which the probes may have parked as well).
    CHECK(rangecomm::detail::peek_parked(state, TagLayout::collective, state.to_root(0), seq) ==
          nullptr);
    REQUIRE(rangecomm::Barrier(w) == MPI_SUCCESS);
  }
}

// A wildcard probe takes every message off the range's lane and parks what it does not want,
// collective messages included. A blocking collective whose round sends one message and
// receives a parked one must receive it from the parked queue (MPI no longer has it) and still
// send its own: exercised on the two-rank allreduce (one exchange per round), with a short
// message and with one long enough to go by rendezvous.
TEST_CASE("a blocking exchange round receives a message a wildcard probe parked") {
  auto w = world();
  if (w.size() < 2) return;
  rangecomm::Comm pair;
  REQUIRE(rangecomm::Split_Comm(w, 0, 1, 1, &pair) == MPI_SUCCESS);
  if (pair.is_null()) return;
  const int peer_root = rangecomm::detail::CommAccess::of(pair)->to_root(1);
  for (int count : {1, 300000}) {
    INFO("count " << count);
    std::vector<int> in(count, pair.rank() + 1), sum(count, -1);
    if (pair.rank() == 0) {
      using rangecomm::detail::TagLayout;
      // Poll until rank 1's first allreduce message has been taken off the lane and parked.
      while (rangecomm::detail::peek_parked(*rangecomm::detail::CommAccess::of(pair),
                                            TagLayout::collective, peer_root,
                                            MPI_ANY_TAG) == nullptr) {
        int flag = 0;
        REQUIRE(rangecomm::Iprobe(MPI_ANY_SOURCE, 4711, pair, &flag, MPI_STATUS_IGNORE) ==
                MPI_SUCCESS);
        REQUIRE(flag == 0);
      }
    }
    REQUIRE(rangecomm::Allreduce(in.data(), sum.data(), count, MPI_INT, MPI_SUM, pair) ==
            MPI_SUCCESS);
    CHECK(sum == std::vector<int>(count, 3));
    // Rank 1 may have parked rank 0's next collective message while it waited for rank 0's
    // binding; rank 0's parked message must be gone.
    if (pair.rank() == 0)
      CHECK(rangecomm::detail::peek_parked(*rangecomm::detail::CommAccess::of(pair),
                                           rangecomm::detail::TagLayout::collective, MPI_ANY_SOURCE,
                                           MPI_ANY_TAG) == nullptr);
    REQUIRE(rangecomm::Barrier(pair) == MPI_SUCCESS);
  }
}

TEST_CASE("no process leaves a Barrier before every process has entered it") {
  auto w = world();
  for_each_setting(kBarrierSettings, [&] {
    int p = w.size(), me = w.rank();
    // Every rank but 0 adds 1 to a counter at rank 0 with a one-sided accumulate it completes
    // (flush) just before entering the barrier, after a delay that makes a barrier which returns
    // early leave rank 0 with a short count. After the barrier rank 0 must see p - 1.
    int* counter = nullptr;
    MPI_Win win;
    REQUIRE(MPI_Win_allocate(me == 0 ? sizeof(int) : 0, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                             &counter, &win) == MPI_SUCCESS);
    for (int round = 1; round <= 3; ++round) {
      MPI_Win_lock_all(0, win);
      if (me == 0) {
        MPI_Win_sync(win);
        *counter = 0;
        MPI_Win_sync(win);
      }
      MPI_Barrier(MPI_COMM_WORLD);  // the reset happens before anyone adds
      if (me != 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5 * me));
        int one = 1;
        MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
        MPI_Win_flush(0, win);
      }
      Request r;
      if (round == 2) {
        REQUIRE(rangecomm::Ibarrier(w, &r) == MPI_SUCCESS);
        REQUIRE(rangecomm::Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      } else {
        REQUIRE(rangecomm::Barrier(w) == MPI_SUCCESS);
      }
      if (me == 0) {
        MPI_Win_sync(win);
        CHECK(*counter == p - 1);
      }
      MPI_Win_unlock_all(win);
    }
    MPI_Win_free(&win);
  });
}

TEST_CASE("bad collective arguments give the proper error class") {
  auto w = world();
  int x = 0, cls = 0;
  MPI_Error_class(rangecomm::Bcast(&x, 1, MPI_INT, w.size(), w), &cls);
  CHECK(cls == MPI_ERR_ROOT);
  MPI_Error_class(rangecomm::Bcast(&x, -1, MPI_INT, 0, w), &cls);
  CHECK(cls == MPI_ERR_COUNT);
  MPI_Error_class(rangecomm::Reduce(&x, &x, 1, MPI_INT, MPI_OP_NULL, 0, w), &cls);
  CHECK(cls == MPI_ERR_OP);
  MPI_Error_class(rangecomm::Allreduce(&x, &x, 1, MPI_DATATYPE_NULL, MPI_SUM, w), &cls);
  CHECK(cls == MPI_ERR_TYPE);
  MPI_Error_class(rangecomm::Barrier(rangecomm::Comm()), &cls);
  CHECK(cls == MPI_ERR_COMM);
  // One buffer as both sendbuf and recvbuf (MPI_IN_PLACE is MPI's way): refused before any
  // message, by every process of an Allreduce and by the root of a Reduce (whose recvbuf alone
  // is significant), as MPICH refuses it.
  MPI_Error_class(rangecomm::Allreduce(&x, &x, 1, MPI_INT, MPI_SUM, w), &cls);
  CHECK(cls == MPI_ERR_BUFFER);
  MPI_Error_class(rangecomm::Reduce(&x, &x, 1, MPI_INT, MPI_SUM, w.rank(), w), &cls);
  CHECK(cls == MPI_ERR_BUFFER);
}

TEST_CASE("a derived datatype may be freed while a nonblocking collective uses it") {
  auto w = world();
  int p = w.size();
  std::vector<int> data(2 * 64 + 1, -1), expected(2 * 64 + 1, -1);
  for (int i = 0; i < 64; ++i) expected[2 * i] = 1000 + i;  // every other int, from rank 0
  if (w.rank() == 0) data = expected;
  for (int rounds = 0; rounds < 2; ++rounds) {
    MPI_Datatype strided, resized;
    MPI_Type_vector(1, 1, 2, MPI_INT, &strided);
    MPI_Type_create_resized(strided, 0, 2 * sizeof(int), &resized);
    MPI_Type_commit(&resized);
    MPI_Type_free(&strided);
    Request r;
    {
      // Force the pipelined chain so the type is used in many later rounds.
      ScopedEnv chain("RANGECOMM_BCAST_PIPELINE_BYTES", 0),
          segment("RANGECOMM_BCAST_SEGMENT_BYTES", 8);
      REQUIRE(rangecomm::Ibcast(data.data(), 64, resized, 0, w, &r) == MPI_SUCCESS);
    }
    MPI_Type_free(&resized);
    REQUIRE(rangecomm::Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(data == expected);
  }
  (void)p;
}

TEST_CASE("a user operation may be freed while a nonblocking collective uses it (Defer_op_free)") {
  auto w = world();
  int p = w.size(), r = w.rank();
  MPI_User_function* add = [](void* in, void* inout, int* len, MPI_Datatype*) {
    for (int i = 0; i < *len; ++i) static_cast<int*>(inout)[i] += static_cast<int*>(in)[i];
  };
  MPI_Op op;
  REQUIRE(MPI_Op_create(add, 1, &op) == MPI_SUCCESS);
  MPI_Op handle = op;
  std::vector<int> in(5, r + 1), out(5, -1);
  Request req;
  // The last rank starts first and cannot finish before the others start; in recursive doubling
  // it always combines (ranks that fold into a partner may not), so its collective surely uses
  // the operation when it hands it over.
  auto start = [&] {
    REQUIRE(rangecomm::Iallreduce(in.data(), out.data(), 5, MPI_INT, op, w, &req) == MPI_SUCCESS);
    bool deferred = rangecomm::Defer_op_free(op);
    if (!deferred) MPI_Op_free(&op);
    return deferred;
  };
  bool first_deferred = r == p - 1 ? start() : false;
  MPI_Barrier(MPI_COMM_WORLD);
  if (r != p - 1) start();
  REQUIRE(rangecomm::Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(out == std::vector<int>(5, p * (p + 1) / 2));
  if (r == p - 1) CHECK(first_deferred == (p > 1));
  // Once the collective is over, the library no longer holds the operation (it freed it).
  CHECK_FALSE(rangecomm::Defer_op_free(handle));
}
