// The benchmarks' baselines: sample sort on native MPI (MPI_Alltoallv) and hypercube quicksort
// on every backend. Their outputs are sorted and complete but not balanced, so the checks are
// the exact multiset and the order across rank boundaries.
#include <cstdint>
#include <rangecomm/jquick/hypercube.hpp>
#include <rangecomm/jquick/sample_sort.hpp>
#include <vector>

#include "sort_util.hpp"

using rangecomm::SortBackend;
using namespace sorttest;

TEST_CASE("sample sort sorts every input distribution", "[baseline]") {
  for (Dist d : all_dists()) {
    INFO("input " << name(d));
    auto in = make_input<std::uint64_t>(d, 300, 11), out = in;
    int err = rangecomm::sample_sort(out, MPI_COMM_WORLD);
    CHECK(err == MPI_SUCCESS);
    if (mpitest::all_ranks(err == MPI_SUCCESS))
      check_sorted(in, out, MPI_COMM_WORLD, std::less<>{}, false);
  }
  auto recs = make_input<Rec>(Dist::few_distinct, 200, 12), sorted = recs;
  CHECK(rangecomm::sample_sort(sorted, MPI_COMM_WORLD, RecDescending{}) == MPI_SUCCESS);
  check_sorted(recs, sorted, MPI_COMM_WORLD, RecDescending{}, false);
  std::vector<int> none = {2, 1};
  CHECK(rangecomm::sample_sort(none, MPI_COMM_NULL) == MPI_ERR_COMM);
}

TEST_CASE("hypercube quicksort sorts on power-of-two communicators, every backend", "[baseline]") {
  const int p = mpitest::world_size();
  const bool power_of_two = (p & (p - 1)) == 0;
  for (SortBackend b :
       {SortBackend::range, SortBackend::native_create_group, SortBackend::native_split}) {
    for (Dist d : all_dists()) {
      INFO("backend " << rangecomm::to_string(b) << ", input " << name(d));
      auto in = make_input<double>(d, 200, 13), out = in;
      int err = rangecomm::hypercube_quicksort(out, MPI_COMM_WORLD, b);
      if (!power_of_two) {
        CHECK(err == MPI_ERR_SIZE);
        continue;
      }
      CHECK(err == MPI_SUCCESS);
      if (mpitest::all_ranks(err == MPI_SUCCESS))
        check_sorted(in, out, MPI_COMM_WORLD, std::less<>{}, false);
    }
  }
}
