// Baseline for the benchmarks: sample sort on native MPI. Sort locally, pick p-1 splitters from
// a regular sample of every process, send each bucket with one MPI_Alltoallv, merge the runs.
// Sorted and complete, but not balanced: bucket sizes follow the splitters (duplicates of a
// splitter all go to one bucket, so skewed or all-equal inputs pile up on one process).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include "rangecomm/jquick/local_sort.hpp"

namespace rangecomm {

namespace baseline {

// Merges the sorted runs data[bounds[i]..bounds[i+1]) pairwise, log(runs) passes.
template <class T, class Compare>
void merge_runs(std::vector<T>& data, std::vector<std::size_t> bounds, Compare comp) {
  while (bounds.size() > 2) {
    std::vector<std::size_t> next{0};
    for (std::size_t i = 0; i + 2 < bounds.size(); i += 2) {
      std::inplace_merge(data.begin() + bounds[i], data.begin() + bounds[i + 1],
                         data.begin() + bounds[i + 2], comp);
      next.push_back(bounds[i + 2]);
    }
    if (bounds.size() % 2 == 0) next.push_back(bounds.back());
    bounds.swap(next);
  }
}

// Every process's regular sample of its sorted data, all gathered; returns p-1 splitters.
template <class T, class Compare>
int choose_splitters(const std::vector<T>& data, MPI_Comm comm, int p, int oversampling,
                     Compare comp, std::vector<T>* splitters) {
  int s = data.empty() ? 0 : std::min<int>(oversampling, static_cast<int>(data.size()));
  std::vector<T> mine(static_cast<std::size_t>(s));
  for (int i = 0; i < s; ++i)
    mine[i] = data[(2 * static_cast<std::size_t>(i) + 1) * data.size() / (2 * s)];
  std::vector<int> bytes(p), displs(p);
  int my_bytes = s * static_cast<int>(sizeof(T));
  int err = MPI_Allgather(&my_bytes, 1, MPI_INT, bytes.data(), 1, MPI_INT, comm);
  if (err != MPI_SUCCESS) return err;
  std::int64_t total = 0;
  for (int i = 0; i < p; ++i) {
    displs[i] = static_cast<int>(total);
    total += bytes[i];
  }
  std::vector<T> all(static_cast<std::size_t>(total) / sizeof(T));
  err = MPI_Allgatherv(mine.data(), my_bytes, MPI_BYTE, all.data(), bytes.data(), displs.data(),
                       MPI_BYTE, comm);
  if (err != MPI_SUCCESS) return err;
  std::sort(all.begin(), all.end(), comp);
  splitters->clear();
  for (int i = 1; i < p && !all.empty(); ++i) splitters->push_back(all[i * all.size() / p]);
  return MPI_SUCCESS;
}

}  // namespace baseline

// Collective over comm. Returns MPI_SUCCESS, MPI_ERR_COMM for a null communicator, or
// MPI_ERR_COUNT when a bucket exceeds INT_MAX bytes (one MPI_Alltoallv has int counts).
template <class T, class Compare = std::less<>>
int sample_sort(std::vector<T>& data, MPI_Comm comm, Compare comp = {}, int oversampling = 16) {
  static_assert(std::is_trivially_copyable<T>::value, "sample_sort sends elements as bytes");
  if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
  int p = 0;
  MPI_Comm_size(comm, &p);
  jquick::local_sort(data.begin(), data.end(), comp);
  if (p == 1) return MPI_SUCCESS;
  std::vector<T> splitters;
  int err = baseline::choose_splitters(data, comm, p, std::max(1, oversampling), comp, &splitters);
  if (err != MPI_SUCCESS) return err;

  std::vector<int> send_bytes(p, 0), recv_bytes(p), sdispls(p), rdispls(p);
  int too_big = 0;
  auto from = data.begin();
  for (int i = 0; i < p; ++i) {
    auto to = i < static_cast<int>(splitters.size())
                  ? std::upper_bound(from, data.end(), splitters[i], comp)
                  : data.end();
    std::int64_t b = static_cast<std::int64_t>(to - from) * static_cast<std::int64_t>(sizeof(T));
    sdispls[i] = static_cast<int>(std::min<std::int64_t>(
        (from - data.begin()) * static_cast<std::int64_t>(sizeof(T)), INT_MAX));
    too_big |=
        b > INT_MAX || (from - data.begin()) * static_cast<std::int64_t>(sizeof(T)) > INT_MAX;
    send_bytes[i] = static_cast<int>(std::min<std::int64_t>(b, INT_MAX));
    from = to;
  }
  err = MPI_Alltoall(send_bytes.data(), 1, MPI_INT, recv_bytes.data(), 1, MPI_INT, comm);
  if (err != MPI_SUCCESS) return err;
  std::int64_t total = 0;
  std::vector<std::size_t> bounds{0};
  for (int i = 0; i < p; ++i) {
    too_big |= total > INT_MAX;
    rdispls[i] = static_cast<int>(std::min<std::int64_t>(total, INT_MAX));
    total += recv_bytes[i];
    bounds.push_back(static_cast<std::size_t>(total) / sizeof(T));
  }
  // Everybody must skip the exchange together, or those who entered it would wait forever.
  err = MPI_Allreduce(MPI_IN_PLACE, &too_big, 1, MPI_INT, MPI_LOR, comm);
  if (err != MPI_SUCCESS) return err;
  if (too_big) return MPI_ERR_COUNT;
  std::vector<T> got(static_cast<std::size_t>(total) / sizeof(T));
  err = MPI_Alltoallv(data.data(), send_bytes.data(), sdispls.data(), MPI_BYTE, got.data(),
                      recv_bytes.data(), rdispls.data(), MPI_BYTE, comm);
  if (err != MPI_SUCCESS) return err;
  baseline::merge_runs(got, bounds, comp);
  data.swap(got);
  return MPI_SUCCESS;
}

}  // namespace rangecomm
