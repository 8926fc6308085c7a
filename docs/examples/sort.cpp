// Getting started with Janus Quicksort: rangecomm::jquick_sort (docs/getting-started.md).
//
//   mpicxx -std=c++17 sort.cpp $(pkg-config --cflags --libs rangecomm-cxx) -o sort
//   mpiexec -n 3 ./sort
#include <rangecomm/jquick.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  // Any number of elements on any rank: here 10 + 7 * rank pseudo-random values below 1000.
  std::vector<long> v(10 + 7 * rank);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = (i * 7919 + rank * 104729 + 13) % 1000;

  // Collective over the communicator; its subgroups are range communicators made locally.
  rangecomm::jquick_sort(v, MPI_COMM_WORLD);

  // Sorted across ranks, and perfectly balanced: each rank holds n/p elements (+1 for the
  // first n mod p ranks).
  long row[3] = {static_cast<long>(v.size()), v.empty() ? -1 : v.front(),
                 v.empty() ? -1 : v.back()};
  std::vector<long> rows(rank == 0 ? 3 * size : 0);
  MPI_Gather(row, 3, MPI_LONG, rows.data(), 3, MPI_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("rank  count  first  last\n");
    for (int r = 0; r < size; ++r)
      std::printf("%4d %6ld %6ld %5ld\n", r, rows[3 * r], rows[3 * r + 1], rows[3 * r + 2]);
  }
  MPI_Finalize();
  return 0;
}
