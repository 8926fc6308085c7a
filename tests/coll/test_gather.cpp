// Gather, Gatherv, Scatter, Scatterv, Allgather and Allgatherv on ranges, blocking and
// nonblocking, compared element by element with the native collective on a real communicator
// of the same processes, on the same data: every root, counts 0, 1 and random ones, predefined,
// strided and different-but-compatible types, in place, and both algorithms of each.
#include <cstdlib>
#include <deque>
#include <iterator>
#include <utility>

#include "coll_util.hpp"

using namespace colltest;
using rangecomm::Request;

namespace {

MPI_Datatype committed(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return mpitest::free_at_finalize(t);
}

MPI_Datatype int_pair() {
  static MPI_Datatype t = [] {
    MPI_Datatype d;
    MPI_Type_contiguous(2, MPI_INT, &d);
    return committed(d);
  }();
  return t;
}

// One side of a transfer of n items: count(n) elements of `type`, spanning elems(n) buffer
// elements.
struct Side {
  MPI_Datatype type;
  int per_item;  // type elements per item
  int span;      // buffer elements per type element
  int count(int n) const { return n * per_item; }
  int elems(int n) const { return n * per_item * span; }
};

struct TypeCase {
  const char* name;
  Side send, recv;
};

std::vector<TypeCase> int_cases() {
  return {
      {"MPI_INT", {MPI_INT, 1, 1}, {MPI_INT, 1, 1}},
      {"strided", {every_other_int(), 1, 2}, {every_other_int(), 1, 2}},
      {"2n MPI_INT as n int pairs", {MPI_INT, 2, 1}, {int_pair(), 1, 2}},
      {"strided to contiguous", {every_other_int(), 1, 2}, {MPI_INT, 1, 1}},
  };
}

std::vector<TypeCase> double_cases() {
  return {{"MPI_DOUBLE", {MPI_DOUBLE, 1, 1}, {MPI_DOUBLE, 1, 1}}};
}

struct Mode {
  bool nonblocking, in_place;
};
const Mode kModes[] = {{false, false}, {true, false}, {false, true}, {true, true}};

// Item counts 0, 1 and a random one, the same on every rank.
std::vector<int> item_counts(int salt) {
  return {0, 1, 2 + static_cast<int>(rng_for(4242, salt)() % 11)};
}

// Per-rank item counts, the same on every rank, about a third of them 0.
std::vector<int> shared_counts(int p, int salt) {
  auto g = rng_for(777, salt);
  std::vector<int> c(static_cast<size_t>(p));
  for (auto& x : c) {
    int k = static_cast<int>(g() % 3);
    x = k == 0 ? 0 : k == 1 ? 1 : 2 + static_cast<int>(g() % 9);
  }
  return c;
}

// Displacements for blocks of counts[i] elements: in decreasing rank order starting from rank
// `start`, each followed by a one-element gap. *total is the elements spanned.
std::vector<int> gapped_displs(const std::vector<int>& counts, int start, int* total) {
  int p = static_cast<int>(counts.size());
  std::vector<int> d(static_cast<size_t>(p));
  *total = 0;
  for (int j = 0; j < p; ++j) {
    int i = ((start - j) % p + p) % p;
    d[i] = *total;
    *total += counts[i] + 1;
  }
  return d;
}

std::vector<int> scaled(const std::vector<int>& items, const Side& side) {
  std::vector<int> c;
  for (int n : items) c.push_back(side.count(n));
  return c;
}

// Runs the blocking collective, or its nonblocking twin and a Wait.
template <class Blocking, class Nonblocking, class... Args>
void call(bool nonblocking, Blocking blocking, Nonblocking start, Args... args) {
  if (!nonblocking) {
    CHECK(blocking(args...) == MPI_SUCCESS);
    return;
  }
  Request request;
  CHECK(start(args..., &request) == MPI_SUCCESS);
  CHECK(rangecomm::Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS);
}

// Receive arguments off the root (send arguments for scatters) are given to rangecomm as
// nonsense: MPI says they are not significant there.
constexpr int kNoCount = -1;
const MPI_Datatype kNoType = MPI_DATATYPE_NULL;

template <class T>
void gather_case(Pair& pr, const TypeCase& tc, int n, int root, Mode m, int salt) {
  int r = pr.range.rank(), p = pr.range.size();
  bool is_root = r == root, in_place = m.in_place && is_root;
  auto send = random_values<T>(tc.send.elems(n) + 1, r, salt);
  size_t rsize = static_cast<size_t>(p) * tc.recv.elems(n) + 1;
  auto mine = in_place ? random_values<T>(rsize, r, salt + 1) : std::vector<T>(rsize, T(-1));
  auto theirs = mine;
  const void* sb = in_place ? MPI_IN_PLACE : send.data();
  call(m.nonblocking, rangecomm::Gather, rangecomm::Igather, sb,
       in_place ? kNoCount : tc.send.count(n), in_place ? kNoType : tc.send.type,
       is_root ? mine.data() : nullptr, is_root ? tc.recv.count(n) : kNoCount,
       is_root ? tc.recv.type : kNoType, root, pr.range);
  REQUIRE(MPI_Gather(sb, tc.send.count(n), tc.send.type, theirs.data(), tc.recv.count(n),
                     tc.recv.type, root, pr.native) == MPI_SUCCESS);
  if (is_root) CHECK(mine == theirs);
}

template <class T>
void gatherv_case(Pair& pr, const TypeCase& tc, const std::vector<int>& items, int root, Mode m,
                  int salt) {
  int r = pr.range.rank(), total = 0;
  bool is_root = r == root, in_place = m.in_place && is_root;
  auto counts = scaled(items, tc.recv);
  auto displs = gapped_displs(counts, r, &total);
  auto send = random_values<T>(tc.send.elems(items[r]) + 1, r, salt);
  size_t rsize = static_cast<size_t>(total) * tc.recv.span + 1;
  auto mine = in_place ? random_values<T>(rsize, r, salt + 1) : std::vector<T>(rsize, T(-1));
  auto theirs = mine;
  const void* sb = in_place ? MPI_IN_PLACE : send.data();
  int sc = tc.send.count(items[r]);
  call(m.nonblocking, rangecomm::Gatherv, rangecomm::Igatherv, sb, in_place ? kNoCount : sc,
       in_place ? kNoType : tc.send.type, is_root ? mine.data() : nullptr,
       is_root ? counts.data() : nullptr, is_root ? displs.data() : nullptr,
       is_root ? tc.recv.type : kNoType, root, pr.range);
  REQUIRE(MPI_Gatherv(sb, sc, tc.send.type, theirs.data(), counts.data(), displs.data(),
                      tc.recv.type, root, pr.native) == MPI_SUCCESS);
  if (is_root) CHECK(mine == theirs);
}

template <class T>
void scatter_case(Pair& pr, const TypeCase& tc, int n, int root, Mode m, int salt) {
  int r = pr.range.rank(), p = pr.range.size();
  bool is_root = r == root, in_place = m.in_place && is_root;
  auto send =
      random_values<T>(is_root ? static_cast<size_t>(p) * tc.send.elems(n) + 1 : 1, r, salt);
  std::vector<T> mine(static_cast<size_t>(tc.recv.elems(n)) + 1, T(-1)), theirs = mine;
  call(m.nonblocking, rangecomm::Scatter, rangecomm::Iscatter, is_root ? send.data() : nullptr,
       is_root ? tc.send.count(n) : kNoCount, is_root ? tc.send.type : kNoType,
       in_place ? MPI_IN_PLACE : mine.data(), in_place ? kNoCount : tc.recv.count(n),
       in_place ? kNoType : tc.recv.type, root, pr.range);
  REQUIRE(MPI_Scatter(send.data(), tc.send.count(n), tc.send.type,
                      in_place ? MPI_IN_PLACE : theirs.data(), tc.recv.count(n), tc.recv.type, root,
                      pr.native) == MPI_SUCCESS);
  CHECK(mine == theirs);
}

template <class T>
void scatterv_case(Pair& pr, const TypeCase& tc, const std::vector<int>& items, int root, Mode m,
                   int salt) {
  int r = pr.range.rank(), total = 0;
  bool is_root = r == root, in_place = m.in_place && is_root;
  auto counts = scaled(items, tc.send);
  auto displs = gapped_displs(counts, r + 1, &total);
  auto send =
      random_values<T>(is_root ? static_cast<size_t>(total) * tc.send.span + 1 : 1, r, salt);
  std::vector<T> mine(static_cast<size_t>(tc.recv.elems(items[r])) + 1, T(-1)), theirs = mine;
  int rc = tc.recv.count(items[r]);
  call(m.nonblocking, rangecomm::Scatterv, rangecomm::Iscatterv, is_root ? send.data() : nullptr,
       is_root ? counts.data() : nullptr, is_root ? displs.data() : nullptr,
       is_root ? tc.send.type : kNoType, in_place ? MPI_IN_PLACE : mine.data(),
       in_place ? kNoCount : rc, in_place ? kNoType : tc.recv.type, root, pr.range);
  REQUIRE(MPI_Scatterv(send.data(), counts.data(), displs.data(), tc.send.type,
                       in_place ? MPI_IN_PLACE : theirs.data(), rc, tc.recv.type, root,
                       pr.native) == MPI_SUCCESS);
  CHECK(mine == theirs);
}

template <class T>
void allgather_case(Pair& pr, const TypeCase& tc, int n, Mode m, int salt) {
  int r = pr.range.rank(), p = pr.range.size();
  auto send = random_values<T>(tc.send.elems(n) + 1, r, salt);
  size_t rsize = static_cast<size_t>(p) * tc.recv.elems(n) + 1;
  auto mine = m.in_place ? random_values<T>(rsize, r, salt + 1) : std::vector<T>(rsize, T(-1));
  auto theirs = mine;
  const void* sb = m.in_place ? MPI_IN_PLACE : send.data();
  call(m.nonblocking, rangecomm::Allgather, rangecomm::Iallgather, sb,
       m.in_place ? kNoCount : tc.send.count(n), m.in_place ? kNoType : tc.send.type, mine.data(),
       tc.recv.count(n), tc.recv.type, pr.range);
  REQUIRE(MPI_Allgather(sb, tc.send.count(n), tc.send.type, theirs.data(), tc.recv.count(n),
                        tc.recv.type, pr.native) == MPI_SUCCESS);
  CHECK(mine == theirs);
}

// Displacements differ from rank to rank: they describe only the local buffer.
template <class T>
void allgatherv_case(Pair& pr, const TypeCase& tc, const std::vector<int>& items, Mode m,
                     int salt) {
  int r = pr.range.rank(), total = 0;
  auto counts = scaled(items, tc.recv);
  auto displs = gapped_displs(counts, r, &total);
  auto send = random_values<T>(tc.send.elems(items[r]) + 1, r, salt);
  size_t rsize = static_cast<size_t>(total) * tc.recv.span + 1;
  auto mine = m.in_place ? random_values<T>(rsize, r, salt + 1) : std::vector<T>(rsize, T(-1));
  auto theirs = mine;
  const void* sb = m.in_place ? MPI_IN_PLACE : send.data();
  int sc = tc.send.count(items[r]);
  call(m.nonblocking, rangecomm::Allgatherv, rangecomm::Iallgatherv, sb, m.in_place ? kNoCount : sc,
       m.in_place ? kNoType : tc.send.type, mine.data(), counts.data(), displs.data(), tc.recv.type,
       pr.range);
  REQUIRE(MPI_Allgatherv(sb, sc, tc.send.type, theirs.data(), counts.data(), displs.data(),
                         tc.recv.type, pr.native) == MPI_SUCCESS);
  CHECK(mine == theirs);
}

// Runs body once per algorithm: each setting sets a threshold variable (the same on every
// rank), cleared afterwards.
template <class Body>
void for_each_algorithm(const char* variable, Body body) {
  const std::pair<const char*, const char*> settings[] = {{"short-message algorithm", "1000000000"},
                                                          {"long-message algorithm", "0"}};
  for (auto& [name, value] : settings) {
    INFO(variable << ": " << name);
    ScopedEnv forced(variable, value);
    body();
  }
}

// body(pair, type case, mode, salt) on every shape, type case and mode, for element type T.
template <class T, class Body>
void for_each_case(std::vector<std::unique_ptr<Pair>>& all, const std::vector<TypeCase>& cases,
                   Body body) {
  // The salt (which picks the counts) depends only on what the members of a shape share.
  int salt = 0;
  for (auto& pr : all) {
    salt += 100;
    if (!pr->member()) continue;
    INFO(pr->name);
    for (size_t c = 0; c < cases.size(); ++c) {
      INFO(cases[c].name);
      for (size_t k = 0; k < std::size(kModes); ++k) {
        const Mode& m = kModes[k];
        INFO((m.nonblocking ? "nonblocking" : "blocking") << (m.in_place ? ", in place" : ""));
        body(*pr, cases[c], m, salt + static_cast<int>(10 * c + k));
      }
    }
  }
}

template <class T>
void all_gathers(std::vector<std::unique_ptr<Pair>>& all, const std::vector<TypeCase>& cases) {
  for_each_algorithm("RANGECOMM_GATHER_SHORT_BYTES", [&] {
    for_each_case<T>(all, cases, [](Pair& pr, const TypeCase& tc, Mode m, int salt) {
      for (int root = 0; root < pr.range.size(); ++root) {
        for (int n : item_counts(salt)) gather_case<T>(pr, tc, n, root, m, salt);
        gatherv_case<T>(pr, tc, shared_counts(pr.range.size(), salt + root), root, m, salt);
      }
    });
  });
}

template <class T>
void all_scatters(std::vector<std::unique_ptr<Pair>>& all, const std::vector<TypeCase>& cases) {
  for_each_algorithm("RANGECOMM_SCATTER_SHORT_BYTES", [&] {
    for_each_case<T>(all, cases, [](Pair& pr, const TypeCase& tc, Mode m, int salt) {
      for (int root = 0; root < pr.range.size(); ++root) {
        for (int n : item_counts(salt)) scatter_case<T>(pr, tc, n, root, m, salt);
        scatterv_case<T>(pr, tc, shared_counts(pr.range.size(), salt + root), root, m, salt);
      }
    });
  });
}

// body() with the direct allgather forced at every size, then, with it switched off, under
// each of the two algorithms `variable` chooses between.
template <class Body>
void direct_then_each_algorithm(const char* variable, Body body) {
  {
    INFO("direct algorithm");
    ScopedEnv procs("RANGECOMM_ALLGATHER_DIRECT_PROCS", "1000000000");
    ScopedEnv bytes("RANGECOMM_ALLGATHER_DIRECT_BYTES", "1000000000");
    body();
  }
  ScopedEnv off("RANGECOMM_ALLGATHER_DIRECT_PROCS", "0");
  for_each_algorithm(variable, body);
}

template <class T>
void all_allgathers(std::vector<std::unique_ptr<Pair>>& all, const std::vector<TypeCase>& cases) {
  direct_then_each_algorithm("RANGECOMM_ALLGATHER_SHORT_BYTES", [&] {
    for_each_case<T>(all, cases, [](Pair& pr, const TypeCase& tc, Mode m, int salt) {
      for (int n : item_counts(salt)) allgather_case<T>(pr, tc, n, m, salt);
    });
  });
  direct_then_each_algorithm("RANGECOMM_ALLGATHERV_SHORT_BYTES", [&] {
    for_each_case<T>(all, cases, [](Pair& pr, const TypeCase& tc, Mode m, int salt) {
      for (int k = 0; k < 2; ++k)
        allgatherv_case<T>(pr, tc, shared_counts(pr.range.size(), salt + k), m, salt);
    });
  });
}

const char* const kThresholds[] = {"RANGECOMM_GATHER_SHORT_BYTES", "RANGECOMM_SCATTER_SHORT_BYTES",
                                   "RANGECOMM_ALLGATHER_SHORT_BYTES",
                                   "RANGECOMM_ALLGATHERV_SHORT_BYTES"};

}  // namespace

TEST_CASE("Gather and Gatherv from every root, every type, in place, both algorithms") {
  auto w = world();
  auto all = shapes(w);
  all_gathers<int>(all, int_cases());
  all_gathers<double>(all, double_cases());
}

TEST_CASE("Scatter and Scatterv from every root, every type, in place, both algorithms") {
  auto w = world();
  auto all = shapes(w);
  all_scatters<int>(all, int_cases());
  all_scatters<double>(all, double_cases());
}

TEST_CASE("Allgather and Allgatherv, every type, in place, all three algorithms") {
  auto w = world();
  auto all = shapes(w);
  all_allgathers<int>(all, int_cases());
  all_allgathers<double>(all, double_cases());
}

TEST_CASE("the default algorithm choice on larger messages") {
  auto w = world();
  auto all = shapes(w);
  const TypeCase tc = int_cases()[0];
  for (auto& pr : all) {
    if (!pr->member()) continue;
    INFO(pr->name);
    int last = pr->range.size() - 1;
    for (int n : {100, 5000}) {
      INFO("items " << n);
      for (const Mode& m : {Mode{false, false}, Mode{true, true}}) {
        gather_case<int>(*pr, tc, n, last, m, n);
        scatter_case<int>(*pr, tc, n, last, m, n);
        allgather_case<int>(*pr, tc, n, m, n);
        std::vector<int> items(static_cast<size_t>(pr->range.size()), n);
        items[0] = 0;
        allgatherv_case<int>(*pr, tc, items, m, n);
      }
    }
  }
}

TEST_CASE("nonblocking gathers outstanding at once on overlapping ranges, completed in reverse") {
  auto w = world();
  auto all = shapes(w);
  constexpr int kN = 5;
  struct Slot {
    Pair* pr;
    int root;
    std::vector<int> items, displs, in, g, gv, s, sv, ag, agv;
  };
  std::vector<std::unique_ptr<Slot>> slots;
  std::deque<Request> requests;
  auto next = [&] { return &requests.emplace_back(); };
  // Round 0 starts the short-message algorithms, round 1 the long-message ones.
  for (int round = 0; round < 2; ++round) {
    std::vector<ScopedEnv> forced;  // chosen when each collective starts
    for (const char* t : kThresholds) forced.emplace_back(t, round == 0 ? "1000000000" : "0");
    for (auto& pr : all) {
      if (!pr->member()) continue;
      auto sl = std::make_unique<Slot>();
      int r = pr->range.rank(), p = pr->range.size(), total = 0;
      sl->pr = pr.get();
      sl->root = (round * 5 + 1) % p;
      sl->items = shared_counts(p, round);
      sl->displs = gapped_displs(sl->items, r, &total);
      sl->in = random_values<int>(static_cast<size_t>(16 * p + 1), r, round);
      for (auto* v : {&sl->g, &sl->s, &sl->ag}) v->assign(static_cast<size_t>(kN * p + 1), -1);
      for (auto* v : {&sl->gv, &sl->sv, &sl->agv}) v->assign(static_cast<size_t>(total + 1), -1);
      const Pair& q = *pr;
      int root = sl->root, mine = sl->items[r];
      int* in = sl->in.data();
      CHECK(rangecomm::Igather(in, kN, MPI_INT, sl->g.data(), kN, MPI_INT, root, q.range, next()) ==
            MPI_SUCCESS);
      CHECK(rangecomm::Iallgatherv(in, mine, MPI_INT, sl->agv.data(), sl->items.data(),
                                   sl->displs.data(), MPI_INT, q.range, next()) == MPI_SUCCESS);
      CHECK(rangecomm::Iscatter(in, kN, MPI_INT, sl->s.data(), kN, MPI_INT, root, q.range,
                                next()) == MPI_SUCCESS);
      CHECK(rangecomm::Igatherv(in, mine, MPI_INT, sl->gv.data(), sl->items.data(),
                                sl->displs.data(), MPI_INT, root, q.range, next()) == MPI_SUCCESS);
      CHECK(rangecomm::Iallgather(in, kN, MPI_INT, sl->ag.data(), kN, MPI_INT, q.range, next()) ==
            MPI_SUCCESS);
      CHECK(rangecomm::Iscatterv(in, sl->items.data(), sl->displs.data(), MPI_INT, sl->sv.data(),
                                 mine, MPI_INT, root, q.range, next()) == MPI_SUCCESS);
      slots.push_back(std::move(sl));
    }
  }
  for (size_t i = requests.size(); i-- > 0;)
    CHECK(rangecomm::Wait(&requests[i], MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (auto& sl : slots) {
    INFO(sl->pr->name);
    MPI_Comm c = sl->pr->native;
    int r = sl->pr->range.rank(), root = sl->root, mine = sl->items[r];
    bool is_root = r == root;
    int* in = sl->in.data();
    auto fresh = [](const std::vector<int>& v) { return std::vector<int>(v.size(), -1); };
    auto g = fresh(sl->g), gv = fresh(sl->gv), s = fresh(sl->s), sv = fresh(sl->sv),
         ag = fresh(sl->ag), agv = fresh(sl->agv);
    REQUIRE(MPI_Gather(in, kN, MPI_INT, g.data(), kN, MPI_INT, root, c) == MPI_SUCCESS);
    REQUIRE(MPI_Gatherv(in, mine, MPI_INT, gv.data(), sl->items.data(), sl->displs.data(), MPI_INT,
                        root, c) == MPI_SUCCESS);
    REQUIRE(MPI_Scatter(in, kN, MPI_INT, s.data(), kN, MPI_INT, root, c) == MPI_SUCCESS);
    REQUIRE(MPI_Scatterv(in, sl->items.data(), sl->displs.data(), MPI_INT, sv.data(), mine, MPI_INT,
                         root, c) == MPI_SUCCESS);
    REQUIRE(MPI_Allgather(in, kN, MPI_INT, ag.data(), kN, MPI_INT, c) == MPI_SUCCESS);
    REQUIRE(MPI_Allgatherv(in, mine, MPI_INT, agv.data(), sl->items.data(), sl->displs.data(),
                           MPI_INT, c) == MPI_SUCCESS);
    if (is_root) CHECK(sl->g == g);
    if (is_root) CHECK(sl->gv == gv);
    CHECK(sl->s == s);
    CHECK(sl->sv == sv);
    CHECK(sl->ag == ag);
    CHECK(sl->agv == agv);
  }
}

TEST_CASE("bad gather arguments give the proper error class") {
  auto w = world();
  int p = w.size(), me = w.rank(), cls = 0;
  std::vector<int> buf(static_cast<size_t>(4 * p + 4)), counts(static_cast<size_t>(p), 1),
      displs(static_cast<size_t>(p), 0);
  int* b = buf.data();
  auto error_class = [&](int rc) {
    MPI_Error_class(rc, &cls);
    return cls;
  };
  // Every call fails its checks on every rank, before any communication.
  CHECK(error_class(rangecomm::Gather(b, 1, MPI_INT, b + p, 1, MPI_INT, p, w)) == MPI_ERR_ROOT);
  CHECK(error_class(rangecomm::Scatterv(b, counts.data(), displs.data(), MPI_INT, b + p, 1, MPI_INT,
                                        -1, w)) == MPI_ERR_ROOT);
  CHECK(error_class(rangecomm::Gather(b, -1, MPI_INT, b + p, 1, MPI_INT, 0, w)) == MPI_ERR_COUNT);
  CHECK(error_class(rangecomm::Gather(b, 1, MPI_INT, b + p, -1, MPI_INT, me, w)) == MPI_ERR_COUNT);
  CHECK(error_class(rangecomm::Scatter(b, 1, MPI_INT, b + p, -2, MPI_INT, 0, w)) == MPI_ERR_COUNT);
  CHECK(error_class(rangecomm::Allgather(b, 1, MPI_INT, b + p, -1, MPI_INT, w)) == MPI_ERR_COUNT);
  CHECK(error_class(rangecomm::Allgather(b, 1, MPI_DATATYPE_NULL, b + p, 1, MPI_INT, w)) ==
        MPI_ERR_TYPE);
  CHECK(error_class(rangecomm::Scatter(b, 1, MPI_DATATYPE_NULL, b + p, 1, MPI_INT, me, w)) ==
        MPI_ERR_TYPE);
  CHECK(error_class(rangecomm::Allgather(b, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w)) ==
        MPI_ERR_BUFFER);
  CHECK(error_class(rangecomm::Gather(b, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, me, w)) ==
        MPI_ERR_BUFFER);
  CHECK(error_class(rangecomm::Scatter(MPI_IN_PLACE, 1, MPI_INT, b + p, 1, MPI_INT, me, w)) ==
        MPI_ERR_BUFFER);
  if (p > 1) {  // MPI_IN_PLACE off the root
    int other = (me + 1) % p;
    CHECK(error_class(rangecomm::Gather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, other, w)) ==
          MPI_ERR_BUFFER);
    CHECK(error_class(rangecomm::Gatherv(MPI_IN_PLACE, 1, MPI_INT, b, counts.data(), displs.data(),
                                         MPI_INT, other, w)) == MPI_ERR_BUFFER);
    CHECK(error_class(rangecomm::Scatter(b, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, other, w)) ==
          MPI_ERR_BUFFER);
    CHECK(error_class(rangecomm::Scatterv(b, counts.data(), displs.data(), MPI_INT, MPI_IN_PLACE, 1,
                                          MPI_INT, other, w)) == MPI_ERR_BUFFER);
  }
  std::vector<int> bad = counts;
  bad[static_cast<size_t>(p - 1)] = -1;
  CHECK(error_class(rangecomm::Gatherv(b, 1, MPI_INT, b + p, bad.data(), displs.data(), MPI_INT, me,
                                       w)) == MPI_ERR_COUNT);
  CHECK(error_class(rangecomm::Scatterv(b, bad.data(), displs.data(), MPI_INT, b + p, 1, MPI_INT,
                                        me, w)) == MPI_ERR_COUNT);
  CHECK(error_class(rangecomm::Allgatherv(b, 1, MPI_INT, b + p, bad.data(), displs.data(), MPI_INT,
                                          w)) == MPI_ERR_COUNT);
  CHECK(error_class(rangecomm::Allgatherv(b, 1, MPI_INT, b + p, nullptr, displs.data(), MPI_INT,
                                          w)) == MPI_ERR_ARG);
  CHECK(error_class(rangecomm::Gatherv(b, 1, MPI_INT, b + p, counts.data(), nullptr, MPI_INT, me,
                                       w)) == MPI_ERR_ARG);
  CHECK(error_class(rangecomm::Allgather(b, 1, MPI_INT, b + p, 1, MPI_INT, rangecomm::Comm())) ==
        MPI_ERR_COMM);
  CHECK(error_class(rangecomm::Scatterv(b, counts.data(), displs.data(), MPI_INT, b + p, 1, MPI_INT,
                                        0, rangecomm::Comm())) == MPI_ERR_COMM);
  CHECK(error_class(rangecomm::Igather(b, 1, MPI_INT, b + p, 1, MPI_INT, 0, w, nullptr)) ==
        MPI_ERR_REQUEST);
  CHECK(error_class(rangecomm::Iallgatherv(b, 1, MPI_INT, b + p, counts.data(), displs.data(),
                                           MPI_INT, w, nullptr)) == MPI_ERR_REQUEST);
  // The range still works after all that.
  int one = me, all_ranks_sum = 0;
  std::vector<int> gathered(static_cast<size_t>(p));
  REQUIRE(rangecomm::Allgather(&one, 1, MPI_INT, gathered.data(), 1, MPI_INT, w) == MPI_SUCCESS);
  for (int x : gathered) all_ranks_sum += x;
  CHECK(all_ranks_sum == p * (p - 1) / 2);
}
