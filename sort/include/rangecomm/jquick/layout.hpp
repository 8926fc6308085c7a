// Arithmetic shared by the sorting code: the balanced output layout, the deterministic random
// numbers every member of a group draws alike, and chunked transfers of 64-bit byte counts.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

namespace rangecomm::jquick {

// Where the sorted sequence of n elements goes on p processes: process i owns the global
// positions start(i)..end(i)-1, ceil(n/p) of them if i < n mod p, floor(n/p) otherwise.
struct Layout {
  std::int64_t n = 0;
  int p = 1;
  std::int64_t q = 0;  // n / p
  std::int64_t r = 0;  // n % p

  Layout() = default;
  Layout(std::int64_t total, int procs) : n(total), p(procs), q(total / procs), r(total % procs) {}

  std::int64_t start(int i) const { return i * q + std::min<std::int64_t>(i, r); }
  std::int64_t end(int i) const { return start(i + 1); }
  std::int64_t cap(int i) const { return q + (i < r ? 1 : 0); }
  // The process owning global position pos (0 <= pos < n).
  int owner(std::int64_t pos) const {
    std::int64_t big = r * (q + 1);  // positions on the processes with ceil(n/p)
    if (pos < big) return static_cast<int>(pos / (q + 1));
    return static_cast<int>(r + (pos - big) / q);
  }
  // How many of the positions lo..hi-1 process i owns.
  std::int64_t overlap(int i, std::int64_t lo, std::int64_t hi) const {
    return std::max<std::int64_t>(0, std::min(hi, end(i)) - std::max(lo, start(i)));
  }
};

// splitmix64: cheap, well mixed, and identical on every rank for the same seed.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return mix64(state_++); }
  // Uniform enough in 0..bound-1 for sampling (bias below bound / 2^64).
  std::int64_t below(std::int64_t bound) {
    return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(bound));
  }

 private:
  std::uint64_t state_;
};

inline int ceil_log2(std::int64_t x) {
  int k = 0;
  while ((std::int64_t{1} << k) < x) ++k;
  return k;
}

// Sample parameters, agreed on by broadcasting rank 0's values.
struct SampleParams {
  std::int64_t per_log_p = 16;
  std::int64_t elements_per_sample = 64;
  std::int64_t min = 33;
  std::int64_t seed = 0;
};

// Odd sample size for a group of q processes holding total elements; bytes stay below INT_MAX.
inline std::int64_t sample_size(const SampleParams& sp, std::int64_t total, int q,
                                std::size_t elem_bytes) {
  std::int64_t k = std::max({sp.per_log_p * ceil_log2(q),
                             total / q / std::max<std::int64_t>(1, sp.elements_per_sample), sp.min,
                             std::int64_t{1}});
  k = std::min(k, total);  // with replacement more would add no information
  std::int64_t cap =
      std::max<std::int64_t>(1, (INT_MAX / 2) / static_cast<std::int64_t>(elem_bytes));
  k = std::min(k, cap);
  return k % 2 == 1 ? k : k - 1;  // k >= 1 here, since total >= 1
}

// Byte counts are 64-bit; one MPI message holds at most max_chunk bytes (a multiple of the
// element size). Sender and receiver cut the same transfer the same way.
inline std::int64_t chunk_limit(std::int64_t max_message_bytes, std::size_t elem_bytes) {
  std::int64_t limit =
      max_message_bytes > 0 ? std::min<std::int64_t>(max_message_bytes, INT_MAX) : INT_MAX;
  std::int64_t e = static_cast<std::int64_t>(elem_bytes);
  return std::max<std::int64_t>(e, limit / e * e);
}

template <class B>
int post_send(B& b, const void* buf, std::int64_t bytes, int dest, int tag,
              const typename B::Comm& c, std::int64_t max_chunk,
              std::vector<typename B::Request>& reqs, std::int64_t* messages) {
  const char* p = static_cast<const char*>(buf);
  for (std::int64_t off = 0; off < bytes; off += max_chunk) {
    int len = static_cast<int>(std::min(max_chunk, bytes - off));
    reqs.emplace_back();
    int err = b.isend(p + off, len, dest, tag, c, &reqs.back());
    if (err != MPI_SUCCESS) return err;
    ++*messages;
  }
  return MPI_SUCCESS;
}

template <class B>
int post_recv(B& b, void* buf, std::int64_t bytes, int source, int tag, const typename B::Comm& c,
              std::int64_t max_chunk, std::vector<typename B::Request>& reqs) {
  char* p = static_cast<char*>(buf);
  for (std::int64_t off = 0; off < bytes; off += max_chunk) {
    int len = static_cast<int>(std::min(max_chunk, bytes - off));
    reqs.emplace_back();
    int err = b.irecv(p + off, len, source, tag, c, &reqs.back());
    if (err != MPI_SUCCESS) return err;
  }
  return MPI_SUCCESS;
}

// Tests the requests in order up to the first incomplete one; *done when all are complete.
// Stopping there costs nothing in progress: testing any request advances every outstanding
// operation of the process (MPI's progress, and the core's), and each test may give the core
// away when nothing happened, so testing the rest would only add idle time.
template <class B>
int test_all(std::vector<typename B::Request>& reqs, bool* done) {
  *done = false;
  for (auto& r : reqs) {
    bool d = false;
    int err = B::test(&r, &d);
    if (err != MPI_SUCCESS || !d) return err;
  }
  *done = true;
  reqs.clear();
  return MPI_SUCCESS;
}

template <class B>
int wait_all(std::vector<typename B::Request>& reqs) {
  for (auto& r : reqs) {
    int err = B::wait(&r);
    if (err != MPI_SUCCESS) return err;
  }
  reqs.clear();
  return MPI_SUCCESS;
}

}  // namespace rangecomm::jquick
