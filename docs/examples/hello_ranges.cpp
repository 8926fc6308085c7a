// Getting started in C++: the core API, rangecomm/rangecomm.hpp (docs/getting-started.md).
//
//   mpicxx -std=c++17 hello_ranges.cpp $(pkg-config --cflags --libs rangecomm-cxx) -o hello_cxx
//   mpiexec -n 3 ./hello_cxx
#include <rangecomm/rangecomm.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);

  // The range spanning MPI_COMM_WORLD. Collective, but only the first time for a communicator.
  rangecomm::Comm world;
  rangecomm::Create_Comm(MPI_COMM_WORLD, &world);
  int p = world.size(), me = world.rank();

  // Two halves. Each process creates only the half it belongs to: local, O(1).
  int h = (p + 1) / 2;
  rangecomm::Comm half;
  if (me < h) {
    rangecomm::Split_Comm(world, 0, h - 1, &half);
  } else {
    rangecomm::Split_Comm(world, h, p - 1, &half);
  }

  // Point-to-point around a ring in the half: ranks, tags and statuses are the half's.
  int n = half.size(), r = half.rank();
  int from_left = -1;
  MPI_Status status;
  rangecomm::Sendrecv(&me, 1, MPI_INT, (r + 1) % n, /*tag*/ 7, &from_left, 1, MPI_INT,
                      (r + n - 1) % n, 7, half, &status);

  // A nonblocking collective on the half, then a blocking one on the whole world.
  int sum = 0;
  rangecomm::Request request;
  rangecomm::Iallreduce(&me, &sum, 1, MPI_INT, MPI_SUM, half, &request);
  rangecomm::Wait(&request, MPI_STATUS_IGNORE);

  int row[4] = {r, from_left, status.MPI_SOURCE, sum};
  std::vector<int> rows(me == 0 ? 4 * p : 0);
  rangecomm::Gather(row, 4, MPI_INT, rows.data(), 4, MPI_INT, 0, world);
  if (me == 0) {
    std::printf("%d processes, halves of %d and %d\n", p, h, p - h);
    std::printf("world  half  received  status.MPI_SOURCE  sum in half\n");
    for (int i = 0; i < p; ++i) {
      const int* x = &rows[4 * i];
      std::printf("%5d %5d %9d %18d %12d\n", i, x[0], x[1], x[2], x[3]);
    }
  }

  rangecomm::Comm_free(&half);  // pending operations would still complete
  MPI_Finalize();               // frees what Create_Comm made
  return 0;
}
