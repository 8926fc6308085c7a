// The first level of a group of up to kSlotSumsMax processes in one round of messages instead of
// two (counts, then sample): every process puts its count, and a few elements of its own with
// their local indices, into its own slots of one buffer (rank 0 adds its parameters), and one
// bitwise-OR all-reduce gives everybody all of it. The counts give each sampled element its
// global position; the pivot is the weighted median of the sample under (element, position),
// each element weighing count / samples of its process, so unbalanced input is sampled fairly.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "rangecomm/jquick/level.hpp"

namespace rangecomm::jquick {

// Samples per process: the default sample size spread over the group. Independent of the
// options, so that every process lays out the buffer alike whatever its own options say.
inline std::int64_t first_level_samples(int q) {
  std::int64_t k = std::max<std::int64_t>(16 * ceil_log2(q), 33);
  return (k + q - 1) / q;
}

// Byte offsets in the buffer: q counts, the parameters, q*s local indices + 1 (0 = empty
// slot), q*s elements.
struct FirstLevelLayout {
  std::size_t q, s, params, idx, vals, bytes;
  FirstLevelLayout(int procs, std::size_t elem) : q(procs), s(first_level_samples(procs)) {
    params = q * 8;
    idx = params + kParams * 8;
    vals = idx + q * s * 8;
    bytes = vals + q * s * elem;
  }
};

inline void put64(std::vector<unsigned char>& b, std::size_t off, std::int64_t v) {
  std::memcpy(&b[off], &v, 8);
}
inline std::int64_t get64(const std::vector<unsigned char>& b, std::size_t off) {
  std::int64_t v;
  std::memcpy(&v, &b[off], 8);
  return v;
}

template <class T, class C, class B>
int start_first_level(C& ctx, Task<T, B>& t) {
  const int q = B::size(t.comm), r = B::rank(t.comm);
  const FirstLevelLayout L(q, sizeof(T));
  t.first_in.assign(L.bytes, 0);
  t.first_out.assign(L.bytes, 0);
  const std::int64_t c = static_cast<std::int64_t>(t.data.size());
  put64(t.first_in, r * 8, c);
  if (r == 0) {
    const std::int64_t params[kParams] = {ctx.sp.per_log_p, ctx.sp.elements_per_sample, ctx.sp.min,
                                          ctx.sp.seed, ctx.max_chunk};
    for (int i = 0; i < kParams; ++i) put64(t.first_in, L.params + 8 * i, params[i]);
  }
  Rng rng(mix64(static_cast<std::uint64_t>(ctx.sp.seed) ^ mix64(static_cast<std::uint64_t>(r))));
  const std::int64_t u = std::min<std::int64_t>(static_cast<std::int64_t>(L.s), c);
  for (std::int64_t j = 0; j < u; ++j) {
    std::int64_t i = u == c ? j : rng.below(c);  // all of them when there are few
    std::size_t slot = r * L.s + j;
    put64(t.first_in, L.idx + 8 * slot, i + 1);
    std::memcpy(&t.first_in[L.vals + sizeof(T) * slot], &t.data[i], sizeof(T));
  }
  t.reqs.resize(1);
  t.phase = Phase::counts;
  return ctx.b.iallreduce(t.first_in.data(), t.first_out.data(), static_cast<int>(L.bytes),
                          MPI_BYTE, MPI_BOR, t.comm, &t.reqs[0]);
}

// After the all-reduce: this process's prefix, the total and rank 0's parameters.
template <class T, class B>
void finish_first_counts(Task<T, B>& t) {
  const int q = B::size(t.comm), r = B::rank(t.comm);
  const FirstLevelLayout L(q, sizeof(T));
  t.count_before = t.count_total = 0;
  for (int i = 0; i < q; ++i) {
    std::int64_t c = get64(t.first_out, i * 8);
    if (i < r) t.count_before += c;
    t.count_total += c;
  }
  for (int i = 0; i < kParams; ++i) t.params[i] = get64(t.first_out, L.params + 8 * i);
}

// The weighted median of the sample is the pivot; then the level goes on as any other.
template <class T, class C, class B>
int start_first_partition(C& ctx, Task<T, B>& t) {
  const int q = B::size(t.comm);
  const FirstLevelLayout L(q, sizeof(T));
  struct Entry {
    T value;
    std::int64_t pos;
    double weight;
  };
  std::vector<Entry> e;
  std::int64_t before = 0;
  for (int i = 0; i < q; ++i) {
    const std::int64_t c = get64(t.first_out, i * 8);
    const std::int64_t u = std::min<std::int64_t>(static_cast<std::int64_t>(L.s), c);
    for (std::int64_t j = 0; j < u; ++j) {
      std::size_t slot = i * L.s + j;
      Entry x;
      std::memcpy(static_cast<void*>(&x.value), &t.first_out[L.vals + sizeof(T) * slot], sizeof(T));
      x.pos = before + get64(t.first_out, L.idx + 8 * slot) - 1;
      x.weight = static_cast<double>(c) / static_cast<double>(u);
      e.push_back(x);
    }
    before += c;
  }
  std::sort(e.begin(), e.end(), [&](const Entry& a, const Entry& b) {
    return ctx.less(a.value, a.pos, b.value, b.pos);
  });
  const double half = static_cast<double>(t.count_total) / 2;
  double cum = 0;
  std::size_t k = 0;
  while (k + 1 < e.size() && (cum += e[k].weight) < half) ++k;
  t.pivot = e[k].value;
  t.pivot_pos = e[k].pos;
  std::vector<unsigned char>().swap(t.first_in);
  std::vector<unsigned char>().swap(t.first_out);
  return start_partition(ctx, t);
}

}  // namespace rangecomm::jquick
