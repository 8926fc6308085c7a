// Every algorithm of every collective family, forced by name (RANGECOMM_<FAMILY>_ALGORITHM),
// gives MPI's result on every test shape (the world, halves, evens, size 1, the janus sides):
// reductions compared with native MPI on the same processes, data movement with the values
// each process must hold. A name that cannot run a call (an algorithm that reorders operands,
// given a non-commutative operation) and a name no family knows leave the choice to the
// library, which must still be right.
#include <numeric>

#include "coll_util.hpp"

using namespace colltest;

namespace {

const std::vector<int> kCounts = {1, 5, 700, 9000};  // across every family's thresholds

std::vector<int> values(int n, int rank, int salt) { return random_values<int>(n, rank, salt); }

// The value element i of rank r's block b carries in the data-movement checks.
int tag_value(int r, int b, int i) { return (r * 131 + b) * 100003 + i; }

// That no process leaves before every process entered is checked for both barrier algorithms
// in test_rooted.cpp (one-sided counters); here each runs on every shape, between the others.
void check_barrier(Pair& pr) {
  CHECK(rangecomm::Barrier(pr.range) == MPI_SUCCESS);
  rangecomm::Request request;
  REQUIRE(rangecomm::Ibarrier(pr.range, &request) == MPI_SUCCESS);
  CHECK(rangecomm::Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS);
}

void check_bcast(Pair& pr, int count) {
  const int n = pr.range.size(), me = pr.range.rank();
  for (int root = 0; root < n; root += std::max(1, n - 1)) {
    std::vector<int> buf(count);
    for (int i = 0; i < count; ++i) buf[i] = me == root ? tag_value(root, 0, i) : -1;
    REQUIRE(rangecomm::Bcast(buf.data(), count, MPI_INT, root, pr.range) == MPI_SUCCESS);
    bool right = true;
    for (int i = 0; i < count; ++i) right = right && buf[i] == tag_value(root, 0, i);
    CHECK(right);
  }
}

void check_reductions(Pair& pr, int count) {
  const int n = pr.range.size(), me = pr.range.rank();
  auto in = values(count, me, 3);
  std::vector<int> mine(count), theirs(count);
  const int root = n - 1;
  REQUIRE(rangecomm::Reduce(in.data(), mine.data(), count, MPI_INT, MPI_SUM, root, pr.range) ==
          MPI_SUCCESS);
  REQUIRE(MPI_Reduce(in.data(), theirs.data(), count, MPI_INT, MPI_SUM, root, pr.native) ==
          MPI_SUCCESS);
  if (me == root) CHECK(mine == theirs);
  REQUIRE(rangecomm::Allreduce(in.data(), mine.data(), count, MPI_INT, MPI_SUM, pr.range) ==
          MPI_SUCCESS);
  REQUIRE(MPI_Allreduce(in.data(), theirs.data(), count, MPI_INT, MPI_SUM, pr.native) ==
          MPI_SUCCESS);
  CHECK(mine == theirs);
  rangecomm::Request request;
  REQUIRE(rangecomm::Iallreduce(in.data(), mine.data(), count, MPI_INT, MPI_MAX, pr.range,
                                &request) == MPI_SUCCESS);
  REQUIRE(rangecomm::Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPI_Allreduce(in.data(), theirs.data(), count, MPI_INT, MPI_MAX, pr.native) ==
          MPI_SUCCESS);
  CHECK(mine == theirs);
}

// A non-commutative operation (2x2 matrix products): only the rank-order algorithms can run it.
void check_non_commutative(Pair& pr) {
  const int count = 3;
  auto in = random_values<std::uint32_t>(4 * count, pr.range.rank(), 9);
  std::vector<std::uint32_t> mine(4 * count), theirs(4 * count);
  REQUIRE(rangecomm::Allreduce(in.data(), mine.data(), count, matrix_type(), matmul_op(),
                               pr.range) == MPI_SUCCESS);
  REQUIRE(MPI_Allreduce(in.data(), theirs.data(), count, matrix_type(), matmul_op(), pr.native) ==
          MPI_SUCCESS);
  CHECK(mine == theirs);
  REQUIRE(rangecomm::Reduce(in.data(), mine.data(), count, matrix_type(), matmul_op(), 0,
                            pr.range) == MPI_SUCCESS);
  REQUIRE(MPI_Reduce(in.data(), theirs.data(), count, matrix_type(), matmul_op(), 0, pr.native) ==
          MPI_SUCCESS);
  if (pr.range.rank() == 0) CHECK(mine == theirs);
  REQUIRE(rangecomm::Scan(in.data(), mine.data(), count, matrix_type(), matmul_op(), pr.range) ==
          MPI_SUCCESS);
  REQUIRE(MPI_Scan(in.data(), theirs.data(), count, matrix_type(), matmul_op(), pr.native) ==
          MPI_SUCCESS);
  CHECK(mine == theirs);
  const int n = pr.range.size();
  auto all = random_values<std::uint32_t>(4 * count * n, pr.range.rank(), 10);
  REQUIRE(rangecomm::Reduce_scatter_block(all.data(), mine.data(), count, matrix_type(),
                                          matmul_op(), pr.range) == MPI_SUCCESS);
  REQUIRE(MPI_Reduce_scatter_block(all.data(), theirs.data(), count, matrix_type(), matmul_op(),
                                   pr.native) == MPI_SUCCESS);
  CHECK(mine == theirs);
}

void check_gather_scatter(Pair& pr, int count) {
  const int n = pr.range.size(), me = pr.range.rank(), root = n / 2;
  std::vector<int> block(count), all(static_cast<size_t>(count) * n, -1);
  for (int i = 0; i < count; ++i) block[i] = tag_value(me, 0, i);
  REQUIRE(rangecomm::Gather(block.data(), count, MPI_INT, all.data(), count, MPI_INT, root,
                            pr.range) == MPI_SUCCESS);
  if (me == root) {
    bool right = true;
    for (int r = 0; r < n; ++r)
      for (int i = 0; i < count; ++i) right = right && all[r * count + i] == tag_value(r, 0, i);
    CHECK(right);
  }
  if (me == root)
    for (int r = 0; r < n; ++r)
      for (int i = 0; i < count; ++i) all[r * count + i] = tag_value(r, 1, i);
  std::fill(block.begin(), block.end(), -1);
  REQUIRE(rangecomm::Scatter(all.data(), count, MPI_INT, block.data(), count, MPI_INT, root,
                             pr.range) == MPI_SUCCESS);
  bool right = true;
  for (int i = 0; i < count; ++i) right = right && block[i] == tag_value(me, 1, i);
  CHECK(right);
}

void check_allgather(Pair& pr, int count) {
  const int n = pr.range.size(), me = pr.range.rank();
  std::vector<int> block(count), all(static_cast<size_t>(count) * n, -1);
  for (int i = 0; i < count; ++i) block[i] = tag_value(me, 2, i);
  REQUIRE(rangecomm::Allgather(block.data(), count, MPI_INT, all.data(), count, MPI_INT,
                               pr.range) == MPI_SUCCESS);
  bool right = true;
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < count; ++i) right = right && all[r * count + i] == tag_value(r, 2, i);
  CHECK(right);
  // Allgatherv: rank r gives count + r elements, placed in reverse rank order.
  std::vector<int> counts(n), displs(n);
  int total = 0;
  for (int r = n - 1; r >= 0; --r) {
    counts[r] = count + r;
    displs[r] = total;
    total += counts[r];
  }
  std::vector<int> mine(count + me), got(total, -1);
  for (int i = 0; i < count + me; ++i) mine[i] = tag_value(me, 3, i);
  REQUIRE(rangecomm::Allgatherv(mine.data(), count + me, MPI_INT, got.data(), counts.data(),
                                displs.data(), MPI_INT, pr.range) == MPI_SUCCESS);
  right = true;
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < counts[r]; ++i) right = right && got[displs[r] + i] == tag_value(r, 3, i);
  CHECK(right);
}

void check_alltoall(Pair& pr, int count) {
  const int n = pr.range.size(), me = pr.range.rank();
  std::vector<int> out(static_cast<size_t>(count) * n), in(static_cast<size_t>(count) * n, -1);
  for (int b = 0; b < n; ++b)
    for (int i = 0; i < count; ++i) out[b * count + i] = tag_value(me, b, i);
  REQUIRE(rangecomm::Alltoall(out.data(), count, MPI_INT, in.data(), count, MPI_INT, pr.range) ==
          MPI_SUCCESS);
  bool right = true;
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < count; ++i) right = right && in[r * count + i] == tag_value(r, me, i);
  CHECK(right);
  // Alltoallv: count + r elements from rank r to every rank.
  std::vector<int> scounts(n, count + me), sdispls(n), rcounts(n), rdispls(n);
  int rtotal = 0;
  for (int r = 0; r < n; ++r) {
    sdispls[r] = r * (count + me);
    rcounts[r] = count + r;
    rdispls[r] = rtotal;
    rtotal += rcounts[r];
  }
  std::vector<int> vout(static_cast<size_t>(count + me) * n), vin(rtotal, -1);
  for (int b = 0; b < n; ++b)
    for (int i = 0; i < count + me; ++i) vout[b * (count + me) + i] = tag_value(me, b, i);
  REQUIRE(rangecomm::Alltoallv(vout.data(), scounts.data(), sdispls.data(), MPI_INT, vin.data(),
                               rcounts.data(), rdispls.data(), MPI_INT, pr.range) == MPI_SUCCESS);
  right = true;
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < rcounts[r]; ++i)
      right = right && vin[rdispls[r] + i] == tag_value(r, me, i);
  CHECK(right);
}

void check_scans(Pair& pr, int count) {
  auto in = values(count, pr.range.rank(), 5);
  std::vector<int> mine(count, -1), theirs(count, -1);
  REQUIRE(rangecomm::Scan(in.data(), mine.data(), count, MPI_INT, MPI_SUM, pr.range) ==
          MPI_SUCCESS);
  REQUIRE(MPI_Scan(in.data(), theirs.data(), count, MPI_INT, MPI_SUM, pr.native) == MPI_SUCCESS);
  CHECK(mine == theirs);
  REQUIRE(rangecomm::Exscan(in.data(), mine.data(), count, MPI_INT, MPI_SUM, pr.range) ==
          MPI_SUCCESS);
  REQUIRE(MPI_Exscan(in.data(), theirs.data(), count, MPI_INT, MPI_SUM, pr.native) == MPI_SUCCESS);
  if (pr.range.rank() > 0) CHECK(mine == theirs);  // undefined at rank 0
}

void check_reduce_scatter(Pair& pr, int count) {
  const int n = pr.range.size(), me = pr.range.rank();
  auto in = values(count * n, me, 7);
  std::vector<int> mine(count, -1), theirs(count, -1);
  REQUIRE(rangecomm::Reduce_scatter_block(in.data(), mine.data(), count, MPI_INT, MPI_SUM,
                                          pr.range) == MPI_SUCCESS);
  REQUIRE(MPI_Reduce_scatter_block(in.data(), theirs.data(), count, MPI_INT, MPI_SUM, pr.native) ==
          MPI_SUCCESS);
  CHECK(mine == theirs);
  // Reduce_scatter with counts that differ per rank (rank r keeps count + r elements).
  std::vector<int> counts(n);
  for (int r = 0; r < n; ++r) counts[r] = count + r;
  int total = std::accumulate(counts.begin(), counts.end(), 0);
  auto vin = values(total, me, 8);
  std::vector<int> vmine(count + me, -1), vtheirs(count + me, -1);
  REQUIRE(rangecomm::Reduce_scatter(vin.data(), vmine.data(), counts.data(), MPI_INT, MPI_SUM,
                                    pr.range) == MPI_SUCCESS);
  REQUIRE(MPI_Reduce_scatter(vin.data(), vtheirs.data(), counts.data(), MPI_INT, MPI_SUM,
                             pr.native) == MPI_SUCCESS);
  CHECK(vmine == vtheirs);
}

struct Family {
  const char* name;
  std::vector<const char*> algorithms;
  void (*check)(Pair&, int count);
};

const std::vector<Family> kFamilies = {
    {"BARRIER", {"direct", "dissemination"}, [](Pair& pr, int) { check_barrier(pr); }},
    {"BCAST", {"binomial", "flat", "chain", "scatter_allgather"}, check_bcast},
    {"REDUCE", {"binomial", "rabenseifner", "ring"}, check_reductions},
    {"ALLREDUCE",
     {"direct", "reduce_bcast", "recursive_doubling", "rabenseifner", "ring"},
     check_reductions},
    {"GATHER", {"binomial", "linear"}, check_gather_scatter},
    {"SCATTER", {"binomial", "linear"}, check_gather_scatter},
    {"ALLGATHER", {"direct", "bruck", "ring"}, check_allgather},
    {"ALLTOALL", {"linear", "bruck", "pairwise"}, check_alltoall},
    {"ALLTOALLV", {"linear", "pairwise"}, check_alltoall},
    {"SCAN", {"chain", "recursive_doubling"}, check_scans},
    {"REDUCE_SCATTER", {"reduce_then_scatter", "halving", "pairwise"}, check_reduce_scatter},
};

std::string variable(const Family& f) { return std::string("RANGECOMM_") + f.name + "_ALGORITHM"; }

}  // namespace

TEST_CASE("every named algorithm of every collective gives MPI's result on every shape") {
  auto w = world();
  auto all = shapes(w);
  for (const Family& f : kFamilies)
    for (const char* algorithm : f.algorithms) {
      ScopedEnv forced(variable(f), algorithm);
      for (auto& pr : all) {
        if (!pr->member()) continue;
        for (int count : kCounts) {
          INFO(variable(f) << "=" << algorithm << ", " << pr->name << ", count " << count);
          f.check(*pr, count);
        }
      }
    }
}

TEST_CASE("an algorithm that cannot run a non-commutative operation leaves the choice") {
  auto w = world();
  auto all = shapes(w);
  const std::vector<std::pair<const char*, const char*>> reordering = {
      {"RANGECOMM_ALLREDUCE_ALGORITHM", "ring"},
      {"RANGECOMM_ALLREDUCE_ALGORITHM", "recursive_doubling"},
      {"RANGECOMM_REDUCE_ALGORITHM", "rabenseifner"},
      {"RANGECOMM_REDUCE_SCATTER_ALGORITHM", "halving"},
      {"RANGECOMM_SCAN_ALGORITHM", "recursive_doubling"},  // keeps rank order: it runs
  };
  for (auto [name, algorithm] : reordering) {
    ScopedEnv forced(name, algorithm);
    for (auto& pr : all) {
      if (!pr->member()) continue;
      INFO(name << "=" << algorithm << ", " << pr->name);
      check_non_commutative(*pr);
    }
  }
}

TEST_CASE("a name no family knows leaves the choice to the library") {
  auto w = world();
  auto all = shapes(w);
  ScopedEnv bogus("RANGECOMM_ALLREDUCE_ALGORITHM", "no-such-algorithm");
  for (auto& pr : all) {
    if (!pr->member()) continue;
    INFO(pr->name);
    check_reductions(*pr, 700);
  }
}
