// The first level of a group of up to slot_group_max processes in one round of messages instead of
// two (counts, then sample): every process puts its count, and a few elements of its own with
// their local indices, into its own slots of one buffer (rank 0 adds its parameters), and one
// round (a bitwise-OR all-reduce, or in small groups a message from every member to every
// other) gives everybody all of it (slots.hpp). The counts give each sampled element its
// global position; the pivot is the weighted median of the sample.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "rangecomm/jquick/level.hpp"
#include "rangecomm/jquick/slots.hpp"

namespace rangecomm::jquick {

// The buffer of the first level. Its sample size is independent of the options, so that every
// process lays out the buffer alike whatever its own options say.
inline SlotLayout first_level_layout(int q, std::size_t elem) {
  std::int64_t k = std::max<std::int64_t>(16 * ceil_log2(q), 33);
  return SlotLayout(q, 1, slot_samples(k, q, elem, 1), elem, 1, true);
}

template <class T, class C, class B>
int start_first_level(C& ctx, Task<T, B>& t) {
  const int q = B::size(t.comm), r = B::rank(t.comm);
  const SlotLayout L = first_level_layout(q, sizeof(T));
  t.slots_in.assign(L.bytes, 0);
  const std::int64_t c = static_cast<std::int64_t>(t.data.size());
  put64(t.slots_in, L.count(r), c);
  if (r == 0) {
    const std::int64_t params[kParams] = {ctx.sp.per_log_p, ctx.sp.elements_per_sample, ctx.sp.min,
                                          ctx.sp.seed, ctx.max_chunk};
    for (int i = 0; i < kParams; ++i) put64(t.slots_in, L.params + 8 * i, params[i]);
  }
  Rng rng(mix64(static_cast<std::uint64_t>(ctx.sp.seed) ^ mix64(static_cast<std::uint64_t>(r))));
  put_sample(t.slots_in, L, 0, r, t.data.data(), c, rng);
  t.phase = Phase::counts;
  return start_slots(ctx, t, L);
}

// After the slot round: this process's prefix, the total and rank 0's parameters.
template <class T, class B>
void finish_first_counts(Task<T, B>& t) {
  const int q = B::size(t.comm), r = B::rank(t.comm);
  const SlotLayout L = first_level_layout(q, sizeof(T));
  finish_slots(t, L);
  t.count_before = t.count_total = 0;
  for (int i = 0; i < q; ++i) {
    std::int64_t c = get64(t.slots_out, L.count(i));
    if (i < r) t.count_before += c;
    t.count_total += c;
  }
  for (int i = 0; i < kParams; ++i) t.params[i] = get64(t.slots_out, L.params + 8 * i);
}

// The weighted median of the sample is the pivot; then the level goes on as any other.
template <class T, class C, class B>
int start_first_partition(C& ctx, Task<T, B>& t) {
  const int q = B::size(t.comm);
  const SlotLayout L = first_level_layout(q, sizeof(T));
  std::vector<std::int64_t> count(q), start(q);
  for (int i = 0; i < q; ++i) {
    count[i] = get64(t.slots_out, L.count(i));
    start[i] = i == 0 ? 0 : start[i - 1] + count[i - 1];
  }
  slot_pivot(t.slots_out, L, 0, ctx, count, start, &t.pivot, &t.pivot_pos);
  std::vector<unsigned char>().swap(t.slots_in);
  std::vector<unsigned char>().swap(t.slots_out);
  return start_partition(ctx, t);
}

}  // namespace rangecomm::jquick
