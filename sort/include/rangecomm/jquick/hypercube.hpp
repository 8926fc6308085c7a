// Baseline for the benchmarks: hypercube quicksort for a power-of-two number of processes,
// written against the same communicator concept as Janus Quicksort. Each level picks the median
// of a random sample as pivot, the lower half of the group keeps the small elements and the
// upper half the large ones (partners exchange across the top dimension), and the halves
// recurse on their own communicators. Sorted and complete, not balanced.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "rangecomm/jquick/backend.hpp"
#include "rangecomm/jquick/layout.hpp"
#include "rangecomm/jquick/local_sort.hpp"
#include "rangecomm/jquick/options.hpp"

namespace rangecomm {

namespace jquick {

constexpr int kTagCubeCount = 21, kTagCubeData = 22;

// Every member fills its own block of s slots; a bitwise-OR all-reduce is then an all-gather.
template <class T, class B>
int cube_samples(B& b, const typename B::Comm& c, const std::vector<T>& data, int s, Rng& rng,
                 std::vector<T>* samples) {
  const int q = B::size(c), r = B::rank(c);
  std::vector<T> mine(static_cast<std::size_t>(q) * s);
  std::vector<std::int64_t> have(q, 0), all_have(q);
  std::memset(static_cast<void*>(mine.data()), 0, mine.size() * sizeof(T));
  if (!data.empty()) {
    have[r] = s;
    for (int j = 0; j < s; ++j)
      mine[static_cast<std::size_t>(r) * s + j] =
          data[rng.below(static_cast<std::int64_t>(data.size()))];
  }
  std::vector<T> all(mine.size());
  typename B::Request reqs[2];
  int err = b.iallreduce(mine.data(), all.data(), static_cast<int>(mine.size() * sizeof(T)),
                         MPI_BYTE, MPI_BOR, c, &reqs[0]);
  if (err == MPI_SUCCESS)
    err = b.iallreduce(have.data(), all_have.data(), q, MPI_INT64_T, MPI_SUM, c, &reqs[1]);
  for (auto& req : reqs)
    if (err == MPI_SUCCESS) err = B::wait(&req);
  samples->clear();
  for (int i = 0; i < q; ++i)
    if (all_have[i] > 0)
      samples->insert(samples->end(), all.begin() + static_cast<std::ptrdiff_t>(i) * s,
                      all.begin() + static_cast<std::ptrdiff_t>(i + 1) * s);
  return err;
}

// Sends data[from..to) to the partner and replaces it by what the partner sends.
template <class T, class B>
int cube_exchange(B& b, const typename B::Comm& c, std::vector<T>& data, std::size_t from,
                  std::size_t to, int partner, std::int64_t max_chunk) {
  std::int64_t give = static_cast<std::int64_t>(to - from), take = 0;
  typename B::Request count_reqs[2];
  int err = b.irecv(&take, sizeof take, partner, kTagCubeCount, c, &count_reqs[0]);
  if (err == MPI_SUCCESS)
    err = b.isend(&give, sizeof give, partner, kTagCubeCount, c, &count_reqs[1]);
  for (auto& req : count_reqs)
    if (err == MPI_SUCCESS) err = B::wait(&req);
  if (err != MPI_SUCCESS) return err;
  std::vector<T> got(static_cast<std::size_t>(take));
  std::vector<typename B::Request> reqs;
  std::int64_t messages = 0;
  err = post_recv(b, got.data(), take * sizeof(T), partner, kTagCubeData, c, max_chunk, reqs);
  if (err == MPI_SUCCESS)
    err = post_send(b, data.data() + from, give * sizeof(T), partner, kTagCubeData, c, max_chunk,
                    reqs, &messages);
  if (err == MPI_SUCCESS) err = wait_all<B>(reqs);
  if (err != MPI_SUCCESS) return err;
  data.erase(data.begin() + static_cast<std::ptrdiff_t>(from),
             data.begin() + static_cast<std::ptrdiff_t>(to));
  data.insert(data.end(), got.begin(), got.end());
  return MPI_SUCCESS;
}

template <class T, class Compare, class B>
int hypercube_with(B b, std::vector<T>& data, MPI_Comm comm, Compare comp, std::uint64_t seed,
                   int samples) {
  typename B::Comm top, cur;
  int err = b.attach(comm, &top);
  if (err != MPI_SUCCESS) return err;
  cur = top;  // borrowed (attach), never freed
  bool cur_is_top = true;
  Rng rng(mix64(seed) ^ mix64(static_cast<std::uint64_t>(B::rank(top))));
  const std::int64_t max_chunk = chunk_limit(0, sizeof(T));
  std::vector<T> sample;
  while (err == MPI_SUCCESS && B::size(cur) > 1) {
    const int q = B::size(cur), r = B::rank(cur), half = q / 2;
    err = cube_samples(b, cur, data, samples, rng, &sample);
    if (err != MPI_SUCCESS || sample.empty()) break;  // the whole group agrees it is empty
    auto mid = sample.begin() + static_cast<std::ptrdiff_t>(sample.size() / 2);
    std::nth_element(sample.begin(), mid, sample.end(), comp);
    const T pivot = *mid;
    auto cut = std::partition(data.begin(), data.end(), [&](const T& x) { return comp(x, pivot); });
    const std::size_t k = static_cast<std::size_t>(cut - data.begin());
    const bool low = r < half;
    err = low ? cube_exchange(b, cur, data, k, data.size(), r + half, max_chunk)
              : cube_exchange(b, cur, data, 0, k, r - half, max_chunk);
    typename B::Comm lc, rc;
    if (err == MPI_SUCCESS) err = b.split(cur, Span{0, half - 1}, Span{half, q - 1}, &lc, &rc);
    if (!cur_is_top) B::free(&cur);
    cur = low ? lc : rc;
    cur_is_top = false;
  }
  jquick::local_sort(data.begin(), data.end(), comp);
  if (!cur_is_top) B::free(&cur);
  return err;
}

}  // namespace jquick

// Collective over comm, whose size must be a power of two (else MPI_ERR_SIZE). The halves are
// range communicators or native ones, as for jquick_sort.
template <class T, class Compare = std::less<>>
int hypercube_quicksort(std::vector<T>& data, MPI_Comm comm, SortBackend backend, Compare comp = {},
                        std::uint64_t seed = 0x637562ULL, int samples = 16) {
  static_assert(std::is_trivially_copyable<T>::value, "hypercube_quicksort sends bytes");
  if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
  int p = 0;
  MPI_Comm_size(comm, &p);
  if ((p & (p - 1)) != 0) return MPI_ERR_SIZE;
  samples = std::max(1, samples);
  switch (backend) {
    case SortBackend::range:
      return jquick::hypercube_with(jquick::RangeBackend{}, data, comm, comp, seed, samples);
    case SortBackend::native_create_group:
      return jquick::hypercube_with(
          jquick::NativeBackend{jquick::NativeBackend::Creation::create_group}, data, comm, comp,
          seed, samples);
    case SortBackend::native_split:
      return jquick::hypercube_with(jquick::NativeBackend{jquick::NativeBackend::Creation::split},
                                    data, comm, comp, seed, samples);
  }
  return MPI_ERR_ARG;
}

}  // namespace rangecomm
