// Alltoall, Alltoallv and Alltoallw on ranges, blocking and nonblocking, compared element by
// element with the native collective on a real communicator of the same processes, on the same
// data: every shape, both algorithms of each (forced through the environment), predefined and
// derived types, send and receive types that differ but match, zero counts, MPI_IN_PLACE.
#include <cstdlib>
#include <string>

#include "coll_util.hpp"

using namespace colltest;
using rangecomm::Request;

namespace {

struct Algorithm {
  const char* name;
  long long short_bytes;      // ALLTOALL_SHORT_BYTES: huge = Bruck beyond the linear size
  long long pairwise_bytes;   // ALLTOALL_PAIRWISE_BYTES: 0 = pairwise, huge = all at once
  long long linear_max_size;  // ALLTOALL(V)_LINEAR_MAX_SIZE: 0 = never all at once
};
const Algorithm kAlgorithms[] = {{"Bruck (Alltoall), pairwise (v, w)", 1LL << 40, 1LL << 40, 0},
                                 {"pairwise", 0, 0, 0},
                                 {"all at once", 0, 1LL << 40, 1 << 30}};

// Forces an algorithm on every rank alike while the result lives.
std::vector<ScopedEnv> use(const Algorithm& a) {
  std::vector<ScopedEnv> env;
  env.emplace_back("RANGECOMM_ALLTOALL_SHORT_BYTES", a.short_bytes);
  env.emplace_back("RANGECOMM_ALLTOALL_PAIRWISE_BYTES", a.pairwise_bytes);
  env.emplace_back("RANGECOMM_ALLTOALL_LINEAR_MAX_SIZE", a.linear_max_size);
  env.emplace_back("RANGECOMM_ALLTOALLV_LINEAR_MAX_SIZE", a.linear_max_size);
  return env;
}

// Alltoall of `count` items: T data seen through st (sper T's per item) and rt (rper per item).
template <class T>
void compare_alltoall(Pair& pr, int count, MPI_Datatype st, int sper, MPI_Datatype rt, int rper,
                      int salt) {
  int p = pr.range.size(), r = pr.range.rank();
  size_t sn = static_cast<size_t>(p * count * sper) + 1,
         rn = static_cast<size_t>(p * count * rper) + 1;
  auto in = random_values<T>(sn, r, salt);
  std::vector<T> expected(rn, T(-1)), got(rn, T(-1));
  REQUIRE(MPI_Alltoall(in.data(), count, st, expected.data(), count, rt, pr.native) == MPI_SUCCESS);
  CHECK_MPI(rangecomm::Alltoall(in.data(), count, st, got.data(), count, rt, pr.range));
  CHECK(got == expected);
  std::fill(got.begin(), got.end(), T(-1));
  Request req;
  CHECK_MPI(rangecomm::Ialltoall(in.data(), count, st, got.data(), count, rt, pr.range, &req));
  CHECK_MPI(rangecomm::Wait(&req, MPI_STATUS_IGNORE));
  CHECK(got == expected);
  if (st != rt) return;
  // In place: recvbuf starts as the send data (so gaps of a strided type keep it, natively too).
  expected = got = in;
  REQUIRE(MPI_Alltoall(in.data(), count, st, expected.data(), count, rt, pr.native) == MPI_SUCCESS);
  CHECK_MPI(
      rangecomm::Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got.data(), count, rt, pr.range));
  CHECK(got == expected);
  got = in;
  CHECK_MPI(rangecomm::Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got.data(), count, rt,
                                 pr.range, &req));
  CHECK_MPI(rangecomm::Wait(&req, MPI_STATUS_IGNORE));
  CHECK(got == expected);
}

// counts[i][j]: items rank i sends to rank j; the same on every rank (seeded by salt). Some
// zeros and ones everywhere, and for odd salts rank 1 sends nothing at all (and, symmetric,
// receives nothing).
std::vector<std::vector<int>> count_matrix(int p, int salt, bool symmetric) {
  std::mt19937 g(static_cast<unsigned>(salt * 31 + p));
  std::vector<std::vector<int>> c(p, std::vector<int>(p));
  for (int i = 0; i < p; ++i) {
    for (int j = symmetric ? i : 0; j < p; ++j) {
      int kind = static_cast<int>(g() % 4);
      c[i][j] = kind == 0 ? 0 : kind == 1 ? 1 : static_cast<int>(g() % 9);
      if (salt % 2 == 1 && (i == 1 || (symmetric && j == 1))) c[i][j] = 0;
      if (symmetric) c[j][i] = c[i][j];
    }
  }
  return c;
}

// Displacements (in items) of blocks with the given counts, laid out in reverse rank order with
// a one-item gap after each; *items is the length of the layout.
std::vector<int> reverse_layout(const std::vector<int>& counts, int* items) {
  std::vector<int> displs(counts.size());
  int at = 0;
  for (size_t j = counts.size(); j-- > 0;) {
    displs[j] = at;
    at += counts[j] + 1;
  }
  *items = at;
  return displs;
}

template <class T>
void compare_alltoallv(Pair& pr, MPI_Datatype st, int sper, MPI_Datatype rt, int rper, int salt) {
  int p = pr.range.size(), r = pr.range.rank();
  auto c = count_matrix(p, salt, false);
  std::vector<int> sendcounts(p), recvcounts(p);
  for (int j = 0; j < p; ++j) {
    sendcounts[j] = c[r][j];
    recvcounts[j] = c[j][r];
  }
  int sitems = 0, ritems = 0;
  auto sdispls = reverse_layout(sendcounts, &sitems), rdispls = reverse_layout(recvcounts, &ritems);
  auto in = random_values<T>(static_cast<size_t>(sitems * sper) + 1, r, salt);
  std::vector<T> expected(static_cast<size_t>(ritems * rper) + 1, T(-1)), got = expected;
  REQUIRE(MPI_Alltoallv(in.data(), sendcounts.data(), sdispls.data(), st, expected.data(),
                        recvcounts.data(), rdispls.data(), rt, pr.native) == MPI_SUCCESS);
  CHECK_MPI(rangecomm::Alltoallv(in.data(), sendcounts.data(), sdispls.data(), st, got.data(),
                                 recvcounts.data(), rdispls.data(), rt, pr.range));
  CHECK(got == expected);
  std::fill(got.begin(), got.end(), T(-1));
  Request req;
  CHECK_MPI(rangecomm::Ialltoallv(in.data(), sendcounts.data(), sdispls.data(), st, got.data(),
                                  recvcounts.data(), rdispls.data(), rt, pr.range, &req));
  CHECK_MPI(rangecomm::Wait(&req, MPI_STATUS_IGNORE));
  CHECK(got == expected);
}

template <class T>
void compare_alltoallv_in_place(Pair& pr, MPI_Datatype type, int per, int salt) {
  int p = pr.range.size(), r = pr.range.rank();
  auto c = count_matrix(p, salt, true);
  std::vector<int> counts(p);
  for (int j = 0; j < p; ++j) counts[j] = c[r][j];
  int items = 0;
  auto displs = reverse_layout(counts, &items);
  auto in = random_values<T>(static_cast<size_t>(items * per) + 1, r, salt);
  std::vector<T> expected = in, got = in;
  REQUIRE(MPI_Alltoallv(in.data(), counts.data(), displs.data(), type, expected.data(),
                        counts.data(), displs.data(), type, pr.native) == MPI_SUCCESS);
  CHECK_MPI(rangecomm::Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, got.data(),
                                 counts.data(), displs.data(), type, pr.range));
  CHECK(got == expected);
  got = in;
  Request req;
  CHECK_MPI(rangecomm::Ialltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, got.data(),
                                  counts.data(), displs.data(), type, pr.range, &req));
  CHECK_MPI(rangecomm::Wait(&req, MPI_STATUS_IGNORE));
  CHECK(got == expected);
}

// Alltoallw arguments of one side: per-peer types (MPI_INT or the strided int, chosen by
// `pick`), counts, byte displacements in rank order with a gap; `ints` is the buffer length.
struct WSide {
  std::vector<int> counts, displs;
  std::vector<MPI_Datatype> types;
  size_t ints = 1;
};

template <class Pick>
WSide w_side(const std::vector<int>& counts, Pick pick) {
  WSide s;
  s.counts = counts;
  size_t at = 0;
  for (size_t j = 0; j < counts.size(); ++j) {
    bool strided = pick(static_cast<int>(j));
    s.types.push_back(strided ? every_other_int() : MPI_INT);
    s.displs.push_back(static_cast<int>(at * sizeof(int)));
    at += static_cast<size_t>(counts[j]) * (strided ? 2 : 1) + 1;
  }
  s.ints = at + 1;
  return s;
}

void compare_alltoallw(Pair& pr, int salt) {
  int p = pr.range.size(), r = pr.range.rank();
  auto c = count_matrix(p, salt, false);
  std::vector<int> sendcounts(p), recvcounts(p);
  for (int j = 0; j < p; ++j) {
    sendcounts[j] = c[r][j];
    recvcounts[j] = c[j][r];
  }
  auto snd = w_side(sendcounts, [r](int j) { return (r + j) % 2 == 0; });
  auto rcv = w_side(recvcounts, [r](int j) { return (3 * r + j) % 3 == 0; });
  auto in = random_values<int>(snd.ints, r, salt);
  std::vector<int> expected(rcv.ints, -1), got = expected;
  REQUIRE(MPI_Alltoallw(in.data(), snd.counts.data(), snd.displs.data(), snd.types.data(),
                        expected.data(), rcv.counts.data(), rcv.displs.data(), rcv.types.data(),
                        pr.native) == MPI_SUCCESS);
  CHECK_MPI(rangecomm::Alltoallw(in.data(), snd.counts.data(), snd.displs.data(), snd.types.data(),
                                 got.data(), rcv.counts.data(), rcv.displs.data(), rcv.types.data(),
                                 pr.range));
  CHECK(got == expected);
  std::fill(got.begin(), got.end(), -1);
  Request req;
  CHECK_MPI(rangecomm::Ialltoallw(in.data(), snd.counts.data(), snd.displs.data(), snd.types.data(),
                                  got.data(), rcv.counts.data(), rcv.displs.data(),
                                  rcv.types.data(), pr.range, &req));
  CHECK_MPI(rangecomm::Wait(&req, MPI_STATUS_IGNORE));
  CHECK(got == expected);
  // In place: symmetric counts, the receive side's types and displacements.
  auto sym = count_matrix(p, salt + 1, true);
  auto side = w_side(sym[r], [r](int j) { return (r * j) % 2 == 1; });
  auto data = random_values<int>(side.ints, r, salt + 1);
  expected = got = data;
  REQUIRE(MPI_Alltoallw(data.data(), side.counts.data(), side.displs.data(), side.types.data(),
                        expected.data(), side.counts.data(), side.displs.data(), side.types.data(),
                        pr.native) == MPI_SUCCESS);
  CHECK_MPI(rangecomm::Alltoallw(MPI_IN_PLACE, nullptr, nullptr, nullptr, got.data(),
                                 side.counts.data(), side.displs.data(), side.types.data(),
                                 pr.range));
  CHECK(got == expected);
}

}  // namespace

TEST_CASE("Alltoall, every algorithm, predefined, derived and mixed types, in place") {
  auto w = world();
  for (const auto& algorithm : kAlgorithms) {
    auto forced = use(algorithm);
    INFO(algorithm.name);
    for (auto& pr : shapes(w)) {
      if (!pr->member()) continue;
      INFO(pr->name);
      for (int count : {0, 1, 3, 40}) {
        INFO("count " << count);
        compare_alltoall<int>(*pr, count, MPI_INT, 1, MPI_INT, 1, 1);
        compare_alltoall<double>(*pr, count, MPI_DOUBLE, 1, MPI_DOUBLE, 1, 2);
        compare_alltoall<long long>(*pr, count, MPI_LONG_LONG, 1, MPI_LONG_LONG, 1, 3);
        compare_alltoall<int>(*pr, count, every_other_int(), 2, every_other_int(), 2, 4);
        compare_alltoall<int>(*pr, count, every_other_int(), 2, MPI_INT, 1, 5);
        compare_alltoall<int>(*pr, count, MPI_INT, 1, every_other_int(), 2, 6);
      }
    }
  }
}

TEST_CASE("Alltoall of long blocks with the default thresholds") {
  auto w = world();
  for (auto& pr : shapes(w)) {
    if (!pr->member()) continue;
    INFO(pr->name);
    compare_alltoall<int>(*pr, 2000, MPI_INT, 1, MPI_INT, 1, 7);
    compare_alltoall<int>(*pr, 50, MPI_INT, 1, MPI_INT, 1, 8);
  }
}

TEST_CASE("Alltoallv, both algorithms, random counts with zeros, in place") {
  auto w = world();
  for (const auto& algorithm : kAlgorithms) {
    auto forced = use(algorithm);
    INFO(algorithm.name);
    for (auto& pr : shapes(w)) {
      if (!pr->member()) continue;
      INFO(pr->name);
      for (int salt = 0; salt < 4; ++salt) {
        INFO("salt " << salt);
        compare_alltoallv<int>(*pr, MPI_INT, 1, MPI_INT, 1, salt);
        compare_alltoallv<double>(*pr, MPI_DOUBLE, 1, MPI_DOUBLE, 1, salt + 10);
        compare_alltoallv<long long>(*pr, MPI_LONG_LONG, 1, MPI_LONG_LONG, 1, salt + 20);
        compare_alltoallv<int>(*pr, every_other_int(), 2, every_other_int(), 2, salt + 30);
        compare_alltoallv<int>(*pr, every_other_int(), 2, MPI_INT, 1, salt + 40);
        compare_alltoallv_in_place<int>(*pr, MPI_INT, 1, salt + 50);
        compare_alltoallv_in_place<int>(*pr, every_other_int(), 2, salt + 60);
      }
    }
  }
}

TEST_CASE("Alltoallw, both algorithms, per-peer types and byte displacements, in place") {
  auto w = world();
  for (const auto& algorithm : kAlgorithms) {
    auto forced = use(algorithm);
    INFO(algorithm.name);
    for (auto& pr : shapes(w)) {
      if (!pr->member()) continue;
      INFO(pr->name);
      for (int salt = 0; salt < 4; ++salt) {
        INFO("salt " << salt);
        compare_alltoallw(*pr, salt);
      }
    }
  }
}

TEST_CASE("nonblocking all-to-alls outstanding on overlapping ranges, completed in reverse") {
  auto w = world();
  auto all = shapes(w);
  struct Slot {
    Pair* pr;
    int count;
    std::vector<int> in, out;
    std::vector<int> sendcounts, recvcounts, sdispls, rdispls;
    std::vector<int> vin, vout;
    WSide wsnd, wrcv;
    std::vector<int> win, wout;
  };
  std::vector<std::unique_ptr<Slot>> slots;
  std::vector<Request> requests;
  requests.reserve(64);
  for (int round = 0; round < 2; ++round) {
    auto forced = use(kAlgorithms[round]);  // chosen when each collective starts
    for (auto& pr : all) {
      if (!pr->member()) continue;
      int p = pr->range.size(), r = pr->range.rank();
      auto s = std::make_unique<Slot>();
      s->pr = pr.get();
      s->count = 3 + round * 50;
      s->in = random_values<int>(static_cast<size_t>(p * s->count) + 1, r, round);
      s->out.assign(s->in.size(), -1);
      auto c = count_matrix(p, round + 5, false);
      for (int j = 0; j < p; ++j) {
        s->sendcounts.push_back(c[r][j]);
        s->recvcounts.push_back(c[j][r]);
      }
      int sitems = 0, ritems = 0;
      s->sdispls = reverse_layout(s->sendcounts, &sitems);
      s->rdispls = reverse_layout(s->recvcounts, &ritems);
      s->vin = random_values<int>(static_cast<size_t>(sitems) + 1, r, round + 7);
      s->vout.assign(static_cast<size_t>(ritems) + 1, -1);
      s->wsnd = w_side(s->sendcounts, [](int j) { return j % 2 == 0; });
      s->wrcv = w_side(s->recvcounts, [r](int j) { return (r + j) % 2 == 0; });
      s->win = random_values<int>(s->wsnd.ints, r, round + 9);
      s->wout.assign(s->wrcv.ints, -1);
      requests.emplace_back();
      CHECK_MPI(rangecomm::Ialltoall(s->in.data(), s->count, MPI_INT, s->out.data(), s->count,
                                     MPI_INT, pr->range, &requests.back()));
      requests.emplace_back();
      CHECK_MPI(rangecomm::Ialltoallv(s->vin.data(), s->sendcounts.data(), s->sdispls.data(),
                                      MPI_INT, s->vout.data(), s->recvcounts.data(),
                                      s->rdispls.data(), MPI_INT, pr->range, &requests.back()));
      requests.emplace_back();
      CHECK_MPI(rangecomm::Ialltoallw(s->win.data(), s->wsnd.counts.data(), s->wsnd.displs.data(),
                                      s->wsnd.types.data(), s->wout.data(), s->wrcv.counts.data(),
                                      s->wrcv.displs.data(), s->wrcv.types.data(), pr->range,
                                      &requests.back()));
      slots.push_back(std::move(s));
    }
  }
  for (size_t i = requests.size(); i-- > 0;)
    CHECK_MPI(rangecomm::Wait(&requests[i], MPI_STATUS_IGNORE));
  for (auto& s : slots) {
    INFO(s->pr->name);
    std::vector<int> out(s->out.size(), -1), vout(s->vout.size(), -1), wout(s->wout.size(), -1);
    REQUIRE(MPI_Alltoall(s->in.data(), s->count, MPI_INT, out.data(), s->count, MPI_INT,
                         s->pr->native) == MPI_SUCCESS);
    REQUIRE(MPI_Alltoallv(s->vin.data(), s->sendcounts.data(), s->sdispls.data(), MPI_INT,
                          vout.data(), s->recvcounts.data(), s->rdispls.data(), MPI_INT,
                          s->pr->native) == MPI_SUCCESS);
    REQUIRE(MPI_Alltoallw(s->win.data(), s->wsnd.counts.data(), s->wsnd.displs.data(),
                          s->wsnd.types.data(), wout.data(), s->wrcv.counts.data(),
                          s->wrcv.displs.data(), s->wrcv.types.data(),
                          s->pr->native) == MPI_SUCCESS);
    CHECK(s->out == out);
    CHECK(s->vout == vout);
    CHECK(s->wout == wout);
  }
}

TEST_CASE("bad all-to-all arguments give the proper error class") {
  auto w = world();
  int p = w.size();
  std::vector<int> buf(4 * p + 1), counts(p, 1), displs(p, 0), negative(p, 1);
  negative[p - 1] = -1;
  std::vector<MPI_Datatype> types(p, MPI_INT), null_types(p, MPI_INT);
  null_types[0] = MPI_DATATYPE_NULL;
  auto cls = [](int code) {
    int c = MPI_SUCCESS;
    MPI_Error_class(code, &c);
    return c;
  };
  CHECK(cls(rangecomm::Alltoall(buf.data(), -1, MPI_INT, buf.data(), 1, MPI_INT, w)) ==
        MPI_ERR_COUNT);
  CHECK(cls(rangecomm::Alltoall(buf.data(), 1, MPI_INT, buf.data(), -1, MPI_INT, w)) ==
        MPI_ERR_COUNT);
  CHECK(cls(rangecomm::Alltoall(buf.data(), 1, MPI_DATATYPE_NULL, buf.data(), 1, MPI_INT, w)) ==
        MPI_ERR_TYPE);
  CHECK(cls(rangecomm::Alltoall(buf.data(), 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w)) ==
        MPI_ERR_BUFFER);
  CHECK(cls(rangecomm::Alltoall(buf.data(), 1, MPI_INT, buf.data(), 1, MPI_INT,
                                rangecomm::Comm())) == MPI_ERR_COMM);
  CHECK(cls(rangecomm::Ialltoall(buf.data(), 1, MPI_INT, buf.data(), 1, MPI_INT, w, nullptr)) ==
        MPI_ERR_REQUEST);
  CHECK(cls(rangecomm::Alltoallv(buf.data(), nullptr, displs.data(), MPI_INT, buf.data(),
                                 counts.data(), displs.data(), MPI_INT, w)) == MPI_ERR_ARG);
  CHECK(cls(rangecomm::Alltoallv(buf.data(), counts.data(), displs.data(), MPI_INT, buf.data(),
                                 negative.data(), displs.data(), MPI_INT, w)) == MPI_ERR_COUNT);
  CHECK(cls(rangecomm::Alltoallv(buf.data(), counts.data(), displs.data(), MPI_INT, buf.data(),
                                 counts.data(), displs.data(), MPI_DATATYPE_NULL, w)) ==
        MPI_ERR_TYPE);
  CHECK(cls(rangecomm::Ialltoallv(buf.data(), counts.data(), displs.data(), MPI_INT, buf.data(),
                                  counts.data(), displs.data(), MPI_INT, w, nullptr)) ==
        MPI_ERR_REQUEST);
  CHECK(cls(rangecomm::Alltoallw(buf.data(), counts.data(), displs.data(), null_types.data(),
                                 buf.data(), counts.data(), displs.data(), types.data(), w)) ==
        MPI_ERR_TYPE);
  CHECK(cls(rangecomm::Alltoallw(buf.data(), counts.data(), displs.data(), types.data(), buf.data(),
                                 negative.data(), displs.data(), types.data(), w)) ==
        MPI_ERR_COUNT);
  CHECK(cls(rangecomm::Alltoallw(MPI_IN_PLACE, nullptr, nullptr, nullptr, buf.data(), counts.data(),
                                 nullptr, types.data(), w)) == MPI_ERR_ARG);
  CHECK(cls(rangecomm::Ialltoallw(buf.data(), counts.data(), displs.data(), types.data(),
                                  buf.data(), counts.data(), displs.data(), types.data(),
                                  rangecomm::Comm(), nullptr)) == MPI_ERR_REQUEST);
  // The communicator still works after the refusals.
  std::vector<int> in(p, w.rank()), out(p, -1);
  CHECK_MPI(rangecomm::Alltoall(in.data(), 1, MPI_INT, out.data(), 1, MPI_INT, w));
  for (int j = 0; j < p; ++j) CHECK(out[j] == j);
}
