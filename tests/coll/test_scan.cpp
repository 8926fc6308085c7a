// Scan, Exscan, Reduce_scatter and Reduce_scatter_block on ranges, blocking and nonblocking,
// compared element by element with the native collective on a real communicator of the same
// processes, on the same data: every shape, predefined operations (MINLOC/MAXLOC too), a
// non-commutative user operation (also checked against a sequential product), both
// reduce-scatter algorithms, zero counts, MPI_IN_PLACE. Exscan's result on rank 0 is undefined
// in MPI: it is never compared, only checked to be left untouched.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "coll_util.hpp"

using namespace colltest;
using rangecomm::Request;

namespace {

// Values in [-spread/2, spread): small spreads keep products (MPI_PROD) far from overflow.
template <class T>
std::vector<T> centred_values(size_t n, int rank, int salt, int spread = 1000) {
  auto g = rng_for(rank, salt);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(static_cast<int>(g() % spread) - spread / 2);
  return v;
}

template <class T>
std::vector<T> head(const std::vector<T>& v, size_t n) {
  return std::vector<T>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
}

// One reduction case: element type T, `per` T's per item of `type`, `count` items.
struct Case {
  MPI_Datatype type;
  int per;
  MPI_Op op;
  int salt;
  int spread;
};

template <class T>
void compare_scans(Pair& pr, int count, const Case& c) {
  int r = pr.range.rank();
  size_t n = static_cast<size_t>(count * c.per);
  auto in = centred_values<T>(n + 1, r, c.salt, c.spread);
  std::vector<T> expected(n + 1, T(-1)), got(n + 1, T(-1));
  Request req;
  REQUIRE(MPI_Scan(in.data(), expected.data(), count, c.type, c.op, pr.native) == MPI_SUCCESS);
  CHECK_MPI(rangecomm::Scan(in.data(), got.data(), count, c.type, c.op, pr.range));
  CHECK(got == expected);
  std::fill(got.begin(), got.end(), T(-1));
  CHECK_MPI(rangecomm::Iscan(in.data(), got.data(), count, c.type, c.op, pr.range, &req));
  CHECK_MPI(rangecomm::Wait(&req, MPI_STATUS_IGNORE));
  CHECK(got == expected);
  got = in;
  CHECK_MPI(rangecomm::Scan(MPI_IN_PLACE, got.data(), count, c.type, c.op, pr.range));
  CHECK(head(got, n) == head(expected, n));

  std::fill(expected.begin(), expected.end(), T(-1));
  REQUIRE(MPI_Exscan(in.data(), expected.data(), count, c.type, c.op, pr.native) == MPI_SUCCESS);
  const std::vector<T> untouched(n + 1, T(-3));
  got = untouched;
  CHECK_MPI(rangecomm::Exscan(in.data(), got.data(), count, c.type, c.op, pr.range));
  CHECK((r == 0 ? got == untouched
                : head(got, n) == head(expected, n)));  // undefined on rank 0 in MPI
  got = untouched;
  CHECK_MPI(rangecomm::Iexscan(in.data(), got.data(), count, c.type, c.op, pr.range, &req));
  CHECK_MPI(rangecomm::Wait(&req, MPI_STATUS_IGNORE));
  CHECK((r == 0 ? got == untouched : head(got, n) == head(expected, n)));
  got = in;
  CHECK_MPI(rangecomm::Iexscan(MPI_IN_PLACE, got.data(), count, c.type, c.op, pr.range, &req));
  CHECK_MPI(rangecomm::Wait(&req, MPI_STATUS_IGNORE));
  CHECK((r == 0 ? got == in : head(got, n) == head(expected, n)));
}

// recvcounts, the same on every rank (seeded by salt and p): zeros and ones, and for odd salts
// rank 1 gets nothing.
std::vector<int> random_counts(int p, int salt, int max) {
  std::mt19937 g(static_cast<unsigned>(salt * 131 + p));
  std::vector<int> c(p);
  for (int j = 0; j < p; ++j) {
    int kind = static_cast<int>(g() % 4);
    c[j] = kind == 0 ? 0 : kind == 1 ? 1 : static_cast<int>(g() % (max + 1));
  }
  if (salt % 2 == 1 && p > 1) c[1] = 0;
  return c;
}

template <class T>
void compare_reduce_scatter(Pair& pr, const std::vector<int>& counts, const Case& c) {
  int r = pr.range.rank();
  size_t total = 0;
  for (int k : counts) total += static_cast<size_t>(k);
  size_t n = total * c.per, mine = static_cast<size_t>(counts[r] * c.per);
  auto in = centred_values<T>(n + 1, r, c.salt, c.spread);
  std::vector<T> expected(mine + 1, T(-1)), got(mine + 1, T(-1));
  Request req;
  REQUIRE(MPI_Reduce_scatter(in.data(), expected.data(), counts.data(), c.type, c.op, pr.native) ==
          MPI_SUCCESS);
  CHECK_MPI(
      rangecomm::Reduce_scatter(in.data(), got.data(), counts.data(), c.type, c.op, pr.range));
  CHECK(got == expected);
  std::fill(got.begin(), got.end(), T(-1));
  CHECK_MPI(rangecomm::Ireduce_scatter(in.data(), got.data(), counts.data(), c.type, c.op, pr.range,
                                       &req));
  CHECK_MPI(rangecomm::Wait(&req, MPI_STATUS_IGNORE));
  CHECK(got == expected);
  auto buf = in;
  CHECK_MPI(
      rangecomm::Reduce_scatter(MPI_IN_PLACE, buf.data(), counts.data(), c.type, c.op, pr.range));
  CHECK(head(buf, mine) == head(expected, mine));
}

template <class T>
void compare_reduce_scatter_block(Pair& pr, int count, const Case& c) {
  int r = pr.range.rank(), p = pr.range.size();
  size_t mine = static_cast<size_t>(count * c.per), n = mine * p;
  auto in = centred_values<T>(n + 1, r, c.salt, c.spread);
  std::vector<T> expected(mine + 1, T(-1)), got(mine + 1, T(-1));
  Request req;
  REQUIRE(MPI_Reduce_scatter_block(in.data(), expected.data(), count, c.type, c.op, pr.native) ==
          MPI_SUCCESS);
  CHECK_MPI(rangecomm::Reduce_scatter_block(in.data(), got.data(), count, c.type, c.op, pr.range));
  CHECK(got == expected);
  auto buf = in;
  CHECK_MPI(rangecomm::Ireduce_scatter_block(MPI_IN_PLACE, buf.data(), count, c.type, c.op,
                                             pr.range, &req));
  CHECK_MPI(rangecomm::Wait(&req, MPI_STATUS_IGNORE));
  CHECK(head(buf, mine) == head(expected, mine));
}

const Case kInt[] = {{MPI_INT, 1, MPI_SUM, 1, 1000},
                     {MPI_INT, 1, MPI_MAX, 2, 1000},
                     {MPI_INT, 1, MPI_BXOR, 3, 1000},
                     {MPI_2INT, 2, MPI_MINLOC, 4, 10},
                     {MPI_2INT, 2, MPI_MAXLOC, 5, 10}};
const Case kLongLong = {MPI_LONG_LONG, 1, MPI_PROD, 6, 7};
const Case kDouble[] = {{MPI_DOUBLE, 1, MPI_MIN, 7, 1000}, {MPI_DOUBLE, 1, MPI_SUM, 8, 1000}};
const Case kMatrix = {MPI_DATATYPE_NULL, 4, MPI_OP_NULL, 9, 1000};  // filled in at run time

Case matrix_case() {
  Case c = kMatrix;
  c.type = matrix_type();
  c.op = matmul_op();
  return c;
}

template <class Run>
void for_all_cases(Run run) {
  for (const Case& c : kInt) run(int{}, c);
  run(static_cast<long long>(0), kLongLong);
  for (const Case& c : kDouble) run(double{}, c);
  run(std::uint32_t{}, matrix_case());
}

// The product of the matrices of ranks 0..last (item 0 of each), in rank order.
std::vector<std::uint32_t> product_upto(int last, int count, int salt) {
  std::vector<std::uint32_t> acc = {1, 0, 0, 1};
  for (int q = 0; q <= last; ++q) {
    auto m = centred_values<std::uint32_t>(static_cast<size_t>(4 * count) + 1, q, salt);
    int one = 1;
    matmul(acc.data(), m.data(), &one, nullptr);  // m := acc * m
    acc.assign(m.begin(), m.begin() + 4);
  }
  return acc;
}

const char* kRsAlgorithm = "RANGECOMM_REDUCE_SCATTER_SHORT_BYTES";

// Scan algorithms forced through the environment: the chain with its default segments, the
// chain cut into segments of 16 bytes (so that 7 and 1000 elements span several), and recursive
// doubling.
struct ScanAlgorithm {
  const char* name;
  long long chain_max_size, chain_bytes, segment_bytes;
};
const ScanAlgorithm kScanAlgorithms[] = {
    {"chain", 1 << 20, 0, 65536},
    {"chain, 16-byte segments", 1 << 20, 0, 16},
    {"recursive doubling", 0, 1LL << 40, 65536},
};

std::vector<ScopedEnv> force(const ScanAlgorithm& a) {
  std::vector<ScopedEnv> env;
  env.emplace_back("RANGECOMM_SCAN_CHAIN_MAX_SIZE", a.chain_max_size);
  env.emplace_back("RANGECOMM_SCAN_CHAIN_BYTES", a.chain_bytes);
  env.emplace_back("RANGECOMM_SCAN_SEGMENT_BYTES", a.segment_bytes);
  return env;
}

}  // namespace

TEST_CASE("Scan and Exscan with predefined and non-commutative operations, in place") {
  auto w = world();
  for (ScanAlgorithm algorithm : kScanAlgorithms) {
    INFO(algorithm.name);
    auto forced = force(algorithm);
    for (auto& pr : shapes(w)) {
      if (!pr->member()) continue;
      INFO(pr->name);
      for (int count : {0, 1, 7, 1000}) {
        INFO("count " << count);
        for_all_cases([&](auto t, const Case& c) {
          INFO("salt " << c.salt);
          compare_scans<decltype(t)>(*pr, count, c);
        });
      }
    }
  }
}

TEST_CASE("Scan and Exscan of a non-commutative operation are ordered rank products") {
  auto w = world();
  for (ScanAlgorithm algorithm : kScanAlgorithms) {
    INFO(algorithm.name);
    auto forced = force(algorithm);
    for (auto& pr : shapes(w)) {
      if (!pr->member()) continue;
      INFO(pr->name);
      int r = pr->range.rank();
      for (int count : {1, 5}) {
        auto in = centred_values<std::uint32_t>(static_cast<size_t>(4 * count) + 1, r, 9);
        std::vector<std::uint32_t> scan(4 * count + 1), exscan(4 * count + 1);
        CHECK_MPI(
            rangecomm::Scan(in.data(), scan.data(), count, matrix_type(), matmul_op(), pr->range));
        CHECK_MPI(rangecomm::Exscan(in.data(), exscan.data(), count, matrix_type(), matmul_op(),
                                    pr->range));
        CHECK(head(scan, 4) == product_upto(r, count, 9));
        if (r > 0) CHECK(head(exscan, 4) == product_upto(r - 1, count, 9));
      }
    }
  }
}

TEST_CASE("Reduce_scatter and Reduce_scatter_block, both algorithms, zero counts, in place") {
  auto w = world();
  for (long long threshold : {1LL << 40, 0LL}) {  // recursive halving, then pairwise
    ScopedEnv forced(kRsAlgorithm, threshold);
    INFO((threshold ? "recursive halving" : "pairwise"));
    for (auto& pr : shapes(w)) {
      if (!pr->member()) continue;
      INFO(pr->name);
      int p = pr->range.size();
      for (int salt = 0; salt < 4; ++salt) {
        auto counts = random_counts(p, salt, salt < 2 ? 9 : 300);
        INFO("salt " << salt);
        for_all_cases([&](auto t, const Case& c) {
          INFO("case " << c.salt);
          compare_reduce_scatter<decltype(t)>(*pr, counts, c);
        });
      }
      for (int count : {0, 1, 7, 300}) {
        INFO("block count " << count);
        for_all_cases([&](auto t, const Case& c) {
          INFO("case " << c.salt);
          compare_reduce_scatter_block<decltype(t)>(*pr, count, c);
        });
      }
    }
  }
}

TEST_CASE("Reduce_scatter of long vectors with the default threshold") {
  auto w = world();
  for (auto& pr : shapes(w)) {
    if (!pr->member()) continue;
    INFO(pr->name);
    // 200000 ints per rank: past the default threshold, so pairwise; then short.
    compare_reduce_scatter_block<int>(*pr, 200000 / pr->range.size(), kInt[0]);
    compare_reduce_scatter_block<int>(*pr, 10, kInt[0]);
  }
}

TEST_CASE(
    "nonblocking scans and reduce-scatters outstanding on overlapping ranges, completed in "
    "reverse") {
  auto w = world();
  auto all = shapes(w);
  struct Slot {
    Pair* pr;
    std::vector<int> in, scan, exscan, rs, rsb;
    std::vector<std::uint32_t> min, mscan, mrs;
    std::vector<int> counts;
  };
  std::vector<std::unique_ptr<Slot>> slots;
  std::vector<Request> requests;
  requests.reserve(128);
  const int n = 21;
  for (int round = 0; round < 2; ++round) {
    ScopedEnv forced(kRsAlgorithm, round == 0 ? 1LL << 40 : 0);  // chosen when each starts
    auto scan_forced = force(kScanAlgorithms[round == 0 ? 1 : 2]);
    for (auto& pr : all) {
      if (!pr->member()) continue;
      int p = pr->range.size(), r = pr->range.rank();
      auto s = std::make_unique<Slot>();
      s->pr = pr.get();
      s->counts = random_counts(p, round + 1, 5);
      int total = 0;
      for (int k : s->counts) total += k;
      s->in = centred_values<int>(static_cast<size_t>(std::max(n * p, total)) + 1, r, round);
      s->scan.assign(n + 1, -1);
      s->exscan.assign(n + 1, -1);
      s->rs.assign(static_cast<size_t>(s->counts[r]) + 1, -1);
      s->rsb.assign(3, -1);
      s->min = centred_values<std::uint32_t>(static_cast<size_t>(4 * total) + 4, r, round + 3);
      s->mscan.assign(5, 0);
      s->mrs.assign(static_cast<size_t>(4 * s->counts[r]) + 1, 0);
      auto next = [&]() {
        requests.emplace_back();
        return &requests.back();
      };
      const auto& c = pr->range;
      CHECK_MPI(rangecomm::Iscan(s->in.data(), s->scan.data(), n, MPI_INT, MPI_SUM, c, next()));
      CHECK_MPI(rangecomm::Iexscan(s->in.data(), s->exscan.data(), n, MPI_INT, MPI_MAX, c, next()));
      CHECK_MPI(rangecomm::Ireduce_scatter(s->in.data(), s->rs.data(), s->counts.data(), MPI_INT,
                                           MPI_SUM, c, next()));
      CHECK_MPI(rangecomm::Ireduce_scatter_block(s->in.data(), s->rsb.data(), 2, MPI_INT, MPI_BXOR,
                                                 c, next()));
      CHECK_MPI(rangecomm::Iscan(s->min.data(), s->mscan.data(), 1, matrix_type(), matmul_op(), c,
                                 next()));
      CHECK_MPI(rangecomm::Ireduce_scatter(s->min.data(), s->mrs.data(), s->counts.data(),
                                           matrix_type(), matmul_op(), c, next()));
      slots.push_back(std::move(s));
    }
  }
  for (size_t i = requests.size(); i-- > 0;)
    CHECK_MPI(rangecomm::Wait(&requests[i], MPI_STATUS_IGNORE));
  for (auto& s : slots) {
    INFO(s->pr->name);
    MPI_Comm nat = s->pr->native;
    int r = s->pr->range.rank();
    std::vector<int> scan(n + 1, -1), exscan(n + 1, -1), rs(s->rs.size(), -1), rsb(3, -1);
    std::vector<std::uint32_t> mscan(5, 0), mrs(s->mrs.size(), 0);
    REQUIRE(MPI_Scan(s->in.data(), scan.data(), n, MPI_INT, MPI_SUM, nat) == MPI_SUCCESS);
    REQUIRE(MPI_Exscan(s->in.data(), exscan.data(), n, MPI_INT, MPI_MAX, nat) == MPI_SUCCESS);
    REQUIRE(MPI_Reduce_scatter(s->in.data(), rs.data(), s->counts.data(), MPI_INT, MPI_SUM, nat) ==
            MPI_SUCCESS);
    REQUIRE(MPI_Reduce_scatter_block(s->in.data(), rsb.data(), 2, MPI_INT, MPI_BXOR, nat) ==
            MPI_SUCCESS);
    REQUIRE(MPI_Scan(s->min.data(), mscan.data(), 1, matrix_type(), matmul_op(), nat) ==
            MPI_SUCCESS);
    REQUIRE(MPI_Reduce_scatter(s->min.data(), mrs.data(), s->counts.data(), matrix_type(),
                               matmul_op(), nat) == MPI_SUCCESS);
    CHECK(s->scan == scan);
    if (r > 0) CHECK(s->exscan == exscan);
    CHECK(s->rs == rs);
    CHECK(s->rsb == rsb);
    CHECK(s->mscan == mscan);
    CHECK(s->mrs == mrs);
  }
}

TEST_CASE("bad scan and reduce-scatter arguments give the proper error class") {
  auto w = world();
  int p = w.size();
  std::vector<int> buf(2 * p + 1), counts(p, 1), negative(p, 1);
  negative[0] = -2;
  auto cls = [](int code) {
    int c = MPI_SUCCESS;
    MPI_Error_class(code, &c);
    return c;
  };
  Request req;
  CHECK(cls(rangecomm::Scan(buf.data(), buf.data() + 1, -1, MPI_INT, MPI_SUM, w)) == MPI_ERR_COUNT);
  CHECK(cls(rangecomm::Scan(buf.data(), buf.data() + 1, 1, MPI_DATATYPE_NULL, MPI_SUM, w)) ==
        MPI_ERR_TYPE);
  CHECK(cls(rangecomm::Iscan(buf.data(), buf.data() + 1, 1, MPI_INT, MPI_OP_NULL, w, &req)) ==
        MPI_ERR_OP);
  CHECK(cls(rangecomm::Iscan(buf.data(), buf.data() + 1, 1, MPI_INT, MPI_SUM, w, nullptr)) ==
        MPI_ERR_REQUEST);
  CHECK(cls(rangecomm::Exscan(buf.data(), MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, w)) == MPI_ERR_BUFFER);
  CHECK(cls(rangecomm::Iexscan(buf.data(), buf.data() + 1, 1, MPI_INT, MPI_SUM, rangecomm::Comm(),
                               &req)) == MPI_ERR_COMM);
  CHECK(cls(rangecomm::Reduce_scatter(buf.data(), buf.data() + p, nullptr, MPI_INT, MPI_SUM, w)) ==
        MPI_ERR_ARG);
  CHECK(cls(rangecomm::Reduce_scatter(buf.data(), buf.data() + p, negative.data(), MPI_INT, MPI_SUM,
                                      w)) == MPI_ERR_COUNT);
  CHECK(cls(rangecomm::Ireduce_scatter(buf.data(), buf.data() + p, counts.data(), MPI_INT,
                                       MPI_OP_NULL, w, &req)) == MPI_ERR_OP);
  CHECK(cls(rangecomm::Reduce_scatter_block(buf.data(), buf.data() + p, -1, MPI_INT, MPI_SUM, w)) ==
        MPI_ERR_COUNT);
  CHECK(cls(rangecomm::Reduce_scatter_block(buf.data(), buf.data() + p, 1, MPI_DATATYPE_NULL,
                                            MPI_SUM, w)) == MPI_ERR_TYPE);
  CHECK(cls(rangecomm::Ireduce_scatter_block(buf.data(), buf.data() + p, 1, MPI_INT, MPI_SUM, w,
                                             nullptr)) == MPI_ERR_REQUEST);
  CHECK(req.is_null());
  // The communicator still works after the refusals.
  int one = 1, prefix = 0;
  CHECK_MPI(rangecomm::Scan(&one, &prefix, 1, MPI_INT, MPI_SUM, w));
  CHECK(prefix == w.rank() + 1);
}
