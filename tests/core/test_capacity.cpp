// How many communicators a process can hold at once: copies of one member set beyond any slot
// count (RANGECOMM_TAG_BITS=23 leaves 508 slots, so most copies then send without one), and a
// million single-member ones (fewer of both in the sanitized build). Every communicator counted
// is used.
//
// RANGECOMM_CAPACITY_COPIES sets the number of copies (default 100000), RANGECOMM_CAPACITY_SINGLES
// the number of single-member ones (default 1000000); the sanitized build runs fewer of both.
#include <rangecomm/rangecomm.hpp>

#include <cstdlib>
#include <vector>

#include "mpi_test.hpp"

using rangecomm::Comm;

namespace {

Comm world() {
  Comm w;
  REQUIRE(rangecomm::Create_Comm(MPI_COMM_WORLD, &w) == MPI_SUCCESS);
  return w;
}

// The positive number in environment variable `name`, or `fallback`.
int count_from_env(const char* name, int fallback) {
  const char* v = std::getenv(name);
  int n = v ? std::atoi(v) : fallback;
  return n > 0 ? n : fallback;
}

}  // namespace

TEST_CASE("live copies of the world range (100000 by default), every one used") {
  Comm w = world();
  const int n = count_from_env("RANGECOMM_CAPACITY_COPIES", 100000), p = w.size(), me = w.rank();
  std::vector<Comm> copies(static_cast<size_t>(n));
  int made = 0;
  for (Comm& c : copies) made += rangecomm::Split_Comm(w, 0, p - 1, &c) == MPI_SUCCESS;
  REQUIRE(mpitest::all_ranks(made == n));
  // Every copy: one all-reduction of its index (each its own context, or the sums mix).
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    int sum = -1;
    if (rangecomm::Allreduce(&i, &sum, 1, MPI_INT, MPI_SUM, copies[i]) != MPI_SUCCESS ||
        sum != i * p)
      ++wrong;
  }
  CHECK(wrong == 0);
  // Every 97th copy: a message to the next process with one tag, received in the opposite
  // order of the copies with wildcards.
  std::vector<int> in;
  for (int i = 0; i < n; i += 97) {
    int v = i;
    REQUIRE(rangecomm::Send(&v, 1, MPI_INT, (me + 1) % p, 5, copies[i]) == MPI_SUCCESS);
    in.push_back(i);
  }
  int misdelivered = 0;
  for (auto it = in.rbegin(); it != in.rend(); ++it) {
    int v = -1;
    MPI_Status st;
    REQUIRE(rangecomm::Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, copies[*it], &st) ==
            MPI_SUCCESS);
    misdelivered += v != *it || st.MPI_SOURCE != (me + p - 1) % p || st.MPI_TAG != 5;
  }
  CHECK(misdelivered == 0);
  for (Comm& c : copies) REQUIRE(rangecomm::Comm_free(&c) == MPI_SUCCESS);
  REQUIRE(mpitest::all_ranks(true));
}

TEST_CASE("live single-member communicators (a million by default)") {
  Comm w = world();
  const int me = w.rank();
  const int n = count_from_env("RANGECOMM_CAPACITY_SINGLES", 1000000);
  std::vector<Comm> many(static_cast<size_t>(n));
  size_t made = 0;
  for (Comm& c : many) made += rangecomm::Split_Comm(w, me, me, &c) == MPI_SUCCESS;
  REQUIRE(made == many.size());
  int wrong = 0;
  for (size_t i = 0; i < many.size(); i += 9973) {
    int v = static_cast<int>(i), got = -1;
    if (rangecomm::Sendrecv(&v, 1, MPI_INT, 0, 1, &got, 1, MPI_INT, 0, 1, many[i],
                            MPI_STATUS_IGNORE) != MPI_SUCCESS ||
        got != v || many[i].size() != 1)
      ++wrong;
  }
  CHECK(wrong == 0);
  many.clear();
  REQUIRE(mpitest::all_ranks(true));
}
