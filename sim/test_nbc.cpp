// The simulated build's nonblocking collectives on MPI's own communicators (MPICH's schedules in
// sim/compat/smpi_requests.cpp, which the native variants of Janus Quicksort and of the scaling
// driver wait on): every result against the one computed here, for operations that commute and
// one that does not, in place and not, several at once on one communicator, and completed by
// each test and wait call among other requests.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "mpi_test.hpp"

namespace {

// x -> a * x + b (mod 2^32): composing two does not commute.
struct Affine {
  unsigned a, b;
};
// in op inout, `in` from the lower ranks: first in, then inout.
void compose(void* in, void* inout, int* count, MPI_Datatype*) {
  auto* x = static_cast<Affine*>(in);
  auto* y = static_cast<Affine*>(inout);
  for (int i = 0; i < *count; ++i) y[i] = {y[i].a * x[i].a, y[i].a * x[i].b + y[i].b};
}
Affine of_rank(int r, int i) {
  return {2u * static_cast<unsigned>(r) + 3u + static_cast<unsigned>(i),
          static_cast<unsigned>(r) + 1u};
}
// Ranks first..last composed in order.
Affine composed(int first, int last, int i) {
  Affine f{1, 0};
  for (int r = first; r <= last; ++r) {
    Affine g = of_rank(r, i);
    int one = 1;
    compose(&f, &g, &one, nullptr);
    f = g;
  }
  return f;
}

struct Fixture {
  MPI_Datatype affine = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  Fixture() {
    MPI_Type_contiguous(2, MPI_UNSIGNED, &affine);
    MPI_Type_commit(&affine);
    MPI_Op_create(compose, 0, &op);
  }
  ~Fixture() {
    MPI_Op_free(&op);
    MPI_Type_free(&affine);
  }
};

// The communicators every case runs on: the world, its halves (odd and even ranks) and a dup.
template <class F>
void on_each_comm(F&& f) {
  const int r = mpitest::world_rank();
  MPI_Comm half = MPI_COMM_NULL, dup = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, -r, &half);  // reversed: rank 0 of it is the highest
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  for (MPI_Comm c : {MPI_COMM_WORLD, half, dup}) {
    int rank = 0, size = 0;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    f(c, rank, size);
  }
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
}

bool equal(const Affine& x, const Affine& y) { return x.a == y.a && x.b == y.b; }

}  // namespace

TEST_CASE("Ibcast from every root", "[sim][nbc]") {
  on_each_comm([](MPI_Comm c, int rank, int size) {
    for (int root = 0; root < size; ++root) {
      std::vector<int> v(5, -1);
      if (rank == root)
        for (int i = 0; i < 5; ++i) v[i] = 100 * root + i;
      MPI_Request req;
      REQUIRE(MPI_Ibcast(v.data(), 5, MPI_INT, root, c, &req) == MPI_SUCCESS);
      REQUIRE(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      CHECK(req == MPI_REQUEST_NULL);
      for (int i = 0; i < 5; ++i) CHECK(v[i] == 100 * root + i);
    }
  });
}

TEST_CASE("Iallreduce: a sum, a bitwise or of bytes, and an operation that does not commute",
          "[sim][nbc]") {
  Fixture fx;
  on_each_comm([&](MPI_Comm c, int rank, int size) {
    std::int64_t mine[3] = {rank, 2 * rank, -rank}, sum[3] = {0, 0, 0};
    MPI_Request req;
    REQUIRE(MPI_Iallreduce(mine, sum, 3, MPI_INT64_T, MPI_SUM, c, &req) == MPI_SUCCESS);
    REQUIRE(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    const std::int64_t total = std::int64_t{size} * (size - 1) / 2;
    CHECK(sum[0] == total);
    CHECK(sum[1] == 2 * total);
    CHECK(sum[2] == -total);

    std::vector<unsigned char> bits(static_cast<size_t>(size), 0), all(bits.size(), 0);
    bits[static_cast<size_t>(rank)] = static_cast<unsigned char>(rank % 255 + 1);
    REQUIRE(MPI_Iallreduce(bits.data(), all.data(), size, MPI_BYTE, MPI_BOR, c, &req) ==
            MPI_SUCCESS);
    REQUIRE(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int r = 0; r < size; ++r) CHECK(all[static_cast<size_t>(r)] == r % 255 + 1);

    Affine in_place[2] = {of_rank(rank, 0), of_rank(rank, 1)};
    REQUIRE(MPI_Iallreduce(MPI_IN_PLACE, in_place, 2, fx.affine, fx.op, c, &req) == MPI_SUCCESS);
    REQUIRE(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < 2; ++i) CHECK(equal(in_place[i], composed(0, size - 1, i)));
  });
}

TEST_CASE("Iscan and Iexscan: a sum and an operation that does not commute", "[sim][nbc]") {
  Fixture fx;
  on_each_comm([&](MPI_Comm c, int rank, int) {
    const std::int64_t mine = rank + 1;
    std::int64_t incl = 0, excl = -7;
    MPI_Request reqs[2];
    REQUIRE(MPI_Iscan(&mine, &incl, 1, MPI_INT64_T, MPI_SUM, c, &reqs[0]) == MPI_SUCCESS);
    REQUIRE(MPI_Iexscan(&mine, &excl, 1, MPI_INT64_T, MPI_SUM, c, &reqs[1]) == MPI_SUCCESS);
    REQUIRE(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(incl == std::int64_t{rank + 1} * (rank + 2) / 2);
    if (rank > 0) CHECK(excl == std::int64_t{rank} * (rank + 1) / 2);
    if (rank == 0) CHECK(excl == -7);  // undefined by MPI; the schedule leaves it alone

    Affine f[2] = {of_rank(rank, 0), of_rank(rank, 1)}, g[2] = {{0, 0}, {0, 0}};
    Affine in_place[2] = {f[0], f[1]};
    REQUIRE(MPI_Iexscan(f, g, 2, fx.affine, fx.op, c, &reqs[0]) == MPI_SUCCESS);
    REQUIRE(MPI_Iscan(MPI_IN_PLACE, in_place, 2, fx.affine, fx.op, c, &reqs[1]) == MPI_SUCCESS);
    REQUIRE(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < 2; ++i) {
      CHECK(equal(in_place[i], composed(0, rank, i)));
      if (rank > 0) CHECK(equal(g[i], composed(0, rank - 1, i)));
    }
  });
}

TEST_CASE("Several at once on one communicator, completed by each test call among messages",
          "[sim][nbc]") {
  on_each_comm([](MPI_Comm c, int rank, int size) {
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int token = -1, root_value = rank == size - 1 ? 42 : 0;
    std::int64_t one = 1, count = 0, before = -1;
    const int sent = rank;
    MPI_Request reqs[5];
    REQUIRE(MPI_Irecv(&token, 1, MPI_INT, left, 9, c, &reqs[0]) == MPI_SUCCESS);
    REQUIRE(MPI_Iallreduce(&one, &count, 1, MPI_INT64_T, MPI_SUM, c, &reqs[1]) == MPI_SUCCESS);
    REQUIRE(MPI_Ibcast(&root_value, 1, MPI_INT, size - 1, c, &reqs[2]) == MPI_SUCCESS);
    REQUIRE(MPI_Iexscan(&one, &before, 1, MPI_INT64_T, MPI_SUM, c, &reqs[3]) == MPI_SUCCESS);
    REQUIRE(MPI_Isend(&sent, 1, MPI_INT, right, 9, c, &reqs[4]) == MPI_SUCCESS);
    // MPI forbids freeing a nonblocking collective's request: refused, and it still completes.
    MPI_Request kept = reqs[1];
    CHECK(MPI_Request_free(&kept) != MPI_SUCCESS);

    int index = -1, flag = 0, done = 0, outcount = 0, indices[5];
    bool seen[5] = {false, false, false, false, false};
    while (done < 3) {  // any three by MPI_Testany, then the rest by MPI_Testsome
      REQUIRE(MPI_Testany(5, reqs, &index, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      if (!flag) continue;
      REQUIRE(index != MPI_UNDEFINED);
      CHECK(!seen[index]);
      CHECK(reqs[index] == MPI_REQUEST_NULL);
      seen[index] = true;
      ++done;
    }
    while (done < 5) {
      REQUIRE(MPI_Testsome(5, reqs, &outcount, indices, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
      REQUIRE(outcount != MPI_UNDEFINED);
      for (int k = 0; k < outcount; ++k) {
        CHECK(!seen[indices[k]]);
        seen[indices[k]] = true;
      }
      done += outcount;
    }
    REQUIRE(MPI_Testall(5, reqs, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(flag);
    CHECK(token == left);
    CHECK(count == size);
    CHECK(root_value == 42);
    if (rank > 0) CHECK(before == rank);

    // MPI_Testall completes none until all are complete, then all.
    std::int64_t sum = 0;
    REQUIRE(MPI_Iallreduce(&one, &sum, 1, MPI_INT64_T, MPI_SUM, c, &reqs[0]) == MPI_SUCCESS);
    REQUIRE(MPI_Ibarrier(c, &reqs[1]) == MPI_SUCCESS);  // SMPI's own
    for (flag = 0; !flag;) {
      REQUIRE(MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
      if (!flag) CHECK((reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL));
    }
    CHECK(sum == size);
    CHECK((reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL));
  });
}
