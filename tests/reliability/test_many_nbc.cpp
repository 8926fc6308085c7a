// At least 100 nonblocking collectives outstanding at once on every process, spread over
// overlapping ranges (the world, its halves, two ranges overlapping in all but one process each,
// the evens, and a janus pair sharing the middle process), started in the same order on every
// member of each range (MPI's rule) and completed in reverse order: every result is checked
// exactly.
#include <rangecomm/rangecomm.hpp>

#include <map>
#include <memory>
#include <numeric>
#include <vector>

#include "mpi_test.hpp"

using rangecomm::Comm;
using rangecomm::Request;

namespace {

struct Op {
  const Comm* comm = nullptr;
  int kind = 0;  // 0 allreduce sum, 1 bcast from the last rank, 2 allgather, 3 scan
  std::vector<long long> in, out;
  Request request;
};

// What op must hold when done, from the members' ranks in it (rank r contributes 1000 k + r).
bool check(const Op& op, int k) {
  int r = op.comm->rank(), p = op.comm->size();
  switch (op.kind) {
    case 0: {
      long long sum = 1000LL * k * p + static_cast<long long>(p) * (p - 1) / 2;
      return op.out[0] == sum && op.out[1] == -sum;
    }
    case 1:
      return op.out[0] == 1000LL * k + (p - 1) && op.out[1] == -(1000LL * k + (p - 1));
    case 2:
      for (int q = 0; q < p; ++q)
        if (op.out[q] != 1000LL * k + q) return false;
      return true;
    default: {
      long long prefix = 1000LL * k * (r + 1) + static_cast<long long>(r) * (r + 1) / 2;
      return op.out[0] == prefix;
    }
  }
}

int start(Op& op, int k) {
  int r = op.comm->rank(), p = op.comm->size();
  long long mine = 1000LL * k + r;
  switch (op.kind) {
    case 0:
      op.in = {mine, -mine};
      op.out.assign(2, 0);
      return rangecomm::Iallreduce(op.in.data(), op.out.data(), 2, MPI_LONG_LONG, MPI_SUM, *op.comm,
                                   &op.request);
    case 1:
      op.out = {mine, -mine};
      return rangecomm::Ibcast(op.out.data(), 2, MPI_LONG_LONG, p - 1, *op.comm, &op.request);
    case 2:
      op.in = {mine};
      op.out.assign(p, -1);
      return rangecomm::Iallgather(op.in.data(), 1, MPI_LONG_LONG, op.out.data(), 1, MPI_LONG_LONG,
                                   *op.comm, &op.request);
    default:
      op.in = {mine};
      op.out.assign(1, 0);
      return rangecomm::Iscan(op.in.data(), op.out.data(), 1, MPI_LONG_LONG, MPI_SUM, *op.comm,
                              &op.request);
  }
}

}  // namespace

TEST_CASE("100 nonblocking collectives outstanding per process on overlapping ranges") {
  int p = mpitest::world_size(), mid = p / 2;
  Comm world;
  REQUIRE(rangecomm::Create_Comm(MPI_COMM_WORLD, &world) == MPI_SUCCESS);
  // first, last, stride of each range; shapes that select the same processes (small p) share
  // one communicator, since two live copies of a range are an error.
  const int shapes[6][3] = {{0, p - 1, 1},
                            {0, mid, 1},
                            {mid, p - 1, 1},
                            {0, std::max(0, p - 2), 1},
                            {std::min(1, p - 1), p - 1, 1},
                            {0, p - 1, 2}};
  std::map<std::vector<int>, std::unique_ptr<Comm>> by_members;
  const Comm* of_shape[6] = {};
  for (int i = 0; i < 6; ++i) {
    std::vector<int> members;
    for (int q = shapes[i][0]; q <= shapes[i][1]; q += shapes[i][2]) members.push_back(q);
    auto& c = by_members[members];
    if (!c) {
      c = std::make_unique<Comm>();
      REQUIRE(rangecomm::Split_Comm(world, shapes[i][0], shapes[i][1], shapes[i][2], c.get()) ==
              MPI_SUCCESS);
    }
    of_shape[i] = c->is_null() ? nullptr : c.get();
  }
  // Operation k runs on shape k % 6 with kind (k / 6) % 4; a process starts those of its
  // ranges in increasing k, the same order on every member. Every process is in the world and
  // in one half: at least 100 of the 300 are its own, all outstanding at once.
  const int total = 300;
  std::vector<Op> ops;
  std::vector<int> index;  // k of each op
  ops.reserve(total);
  for (int k = 0; k < total; ++k) {
    if (of_shape[k % 6] == nullptr) continue;
    ops.emplace_back();
    ops.back().comm = of_shape[k % 6];
    ops.back().kind = (k / 6) % 4;
    index.push_back(k);
    REQUIRE(start(ops.back(), k) == MPI_SUCCESS);
  }
  bool all_ok = true;
  for (size_t i = ops.size(); i-- > 0;) {
    all_ok = rangecomm::Wait(&ops[i].request, MPI_STATUS_IGNORE) == MPI_SUCCESS && all_ok;
    all_ok = check(ops[i], index[i]) && all_ok;
  }
  CHECK(mpitest::all_ranks(all_ok));
  int mine = static_cast<int>(ops.size()), fewest = 0;
  MPI_Allreduce(&mine, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  CHECK(fewest >= 100);
  for (auto& [members, c] : by_members)
    if (!c->is_null()) REQUIRE(rangecomm::Comm_free(c.get()) == MPI_SUCCESS);
}
