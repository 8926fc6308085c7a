// Self-test of the MPI test harness: the basics every other test relies on.
#include "mpi_test.hpp"

#include "catch.hpp"

TEST_CASE("allreduce of the ranks sums to p(p-1)/2", "[harness]") {
  const int rank = mpitest::world_rank(), p = mpitest::world_size();
  int sum = -1;
  CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(sum == p * (p - 1) / 2);
}

TEST_CASE("a ring exchange reaches the right neighbour", "[harness]") {
  const int rank = mpitest::world_rank(), p = mpitest::world_size();
  const int right = (rank + 1) % p, left = (rank + p - 1) % p;
  int got = -1;
  CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
  CHECK(got == left);
}

TEST_CASE("all_ranks and any_rank agree on every rank", "[harness]") {
  const int rank = mpitest::world_rank(), p = mpitest::world_size();
  CHECK(mpitest::all_ranks(true));
  CHECK_FALSE(mpitest::any_rank(false));
  CHECK(mpitest::any_rank(rank == p - 1));
  CHECK(mpitest::all_ranks(rank == 0) == (p == 1));
}

TEST_CASE("MPI errors on MPI_COMM_WORLD are returned, not fatal", "[harness]") {
  int value = 0;
  const int err = MPI_Send(&value, 1, MPI_INT, mpitest::world_size(), 0, MPI_COMM_WORLD);
  REQUIRE(err != MPI_SUCCESS);
  int cls = MPI_SUCCESS;
  MPI_Error_class(err, &cls);
  CHECK(cls == MPI_ERR_RANK);
}
