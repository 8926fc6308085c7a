// One round of messages instead of two: a buffer with a slot per member of a group, which every
// member fills in its own slots only (the others stay zero bytes), so that one bitwise-OR
// all-reduce gives everybody all of it. Used by groups of up to JQuickOptions::slot_group_max
// members (one round of messages instead of two or three, on few cores every round costs
// context switches; larger groups use collectives of single values, so messages do not grow).
// Groups of up to JQuickOptions::slot_direct_max members skip the all-reduce: each member sends
// its own slots, packed, straight to every other member, so the round is one message deep
// instead of log2 q (level.hpp, start_slots).
//
//   counts     one or more 64-bit counts per member
//   params     (optional) rank 0's sample parameters and message size limit
//   sides      one or two sample regions; member i's s slots of a region hold up to s of its
//              elements, each with its index in the member's run + 1 (0 = empty slot)
//
// The first level sends its input counts and a sample of its input (one side); a later level
// sends its partition counts and a sample of each side of the partition, from which every
// member computes the pivots of both children before the data moves (level.hpp).
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "rangecomm/jquick/layout.hpp"

namespace rangecomm::jquick {

constexpr int kParams = 5;  // sample parameters and chunk size of rank 0

struct SlotLayout {
  std::size_t q, words, s, elem, sides;
  std::size_t params, samples, side_bytes, bytes;

  SlotLayout(int procs, int counts_per_member, std::int64_t per_member, std::size_t elem_bytes,
             int n_sides, bool with_params)
      : q(static_cast<std::size_t>(procs)),
        words(static_cast<std::size_t>(counts_per_member)),
        s(static_cast<std::size_t>(per_member)),
        elem(elem_bytes),
        sides(static_cast<std::size_t>(n_sides)) {
    params = q * words * 8;
    samples = params + (with_params ? kParams * 8 : 0);
    side_bytes = q * s * (8 + elem);
    bytes = samples + sides * side_bytes;
  }
  std::size_t count(int member, int word = 0) const {
    return (static_cast<std::size_t>(member) * words + static_cast<std::size_t>(word)) * 8;
  }
  std::size_t index(int side, std::size_t slot) const {
    return samples + side * side_bytes + slot * 8;
  }
  std::size_t value(int side, std::size_t slot) const {
    return samples + side * side_bytes + q * s * 8 + slot * elem;
  }
};

// Calls f(offset, length) for each piece of the buffer that member i fills: its counts, rank
// 0's parameters, and per side its index slots and its value slots.
template <class F>
void for_each_member_piece(const SlotLayout& L, int i, F f) {
  const std::size_t m = static_cast<std::size_t>(i);
  f(L.count(i), L.words * 8);
  if (i == 0 && L.samples > L.params) f(L.params, L.samples - L.params);
  for (std::size_t side = 0; side < L.sides; ++side) {
    f(L.index(static_cast<int>(side), m * L.s), L.s * 8);
    f(L.value(static_cast<int>(side), m * L.s), L.s * L.elem);
  }
}

// Bytes of member i's pieces (member 0's are the most: it adds the parameters).
inline std::size_t member_bytes(const SlotLayout& L, int i) {
  std::size_t n = 0;
  for_each_member_piece(L, i, [&](std::size_t, std::size_t len) { n += len; });
  return n;
}

// Member i's pieces of `buf`, one after the other, into `packed` (member_bytes(L, i) bytes).
inline void pack_member(const SlotLayout& L, int i, const unsigned char* buf,
                        unsigned char* packed) {
  for_each_member_piece(L, i, [&](std::size_t off, std::size_t len) {
    std::memcpy(packed, buf + off, len);
    packed += len;
  });
}

// The inverse: member i's pieces from `packed` into their places in `buf`.
inline void unpack_member(const SlotLayout& L, int i, const unsigned char* packed,
                          unsigned char* buf) {
  for_each_member_piece(L, i, [&](std::size_t off, std::size_t len) {
    std::memcpy(buf + off, packed, len);
    packed += len;
  });
}

// Samples per member of a side, so that the whole buffer stays far below INT_MAX bytes.
inline std::int64_t slot_samples(std::int64_t total_samples, int q, std::size_t elem, int sides) {
  std::int64_t per = (total_samples + q - 1) / q;
  std::int64_t cap = (INT_MAX / 4) /
                     (static_cast<std::int64_t>(q) * sides * (8 + static_cast<std::int64_t>(elem)));
  return std::max<std::int64_t>(1, std::min(per, cap));
}

inline void put64(std::vector<unsigned char>& b, std::size_t off, std::int64_t v) {
  std::memcpy(&b[off], &v, 8);
}
inline std::int64_t get64(const std::vector<unsigned char>& b, std::size_t off) {
  std::int64_t v;
  std::memcpy(&v, &b[off], 8);
  return v;
}

// Member r's sample of run[0..n) into its slots of `side`: all of it when it fits, otherwise s
// draws with replacement.
template <class T>
void put_sample(std::vector<unsigned char>& b, const SlotLayout& L, int side, int r, const T* run,
                std::int64_t n, Rng& rng) {
  const std::int64_t u = std::min<std::int64_t>(static_cast<std::int64_t>(L.s), n);
  for (std::int64_t j = 0; j < u; ++j) {
    std::int64_t i = u == n ? j : rng.below(n);
    std::size_t slot = static_cast<std::size_t>(r) * L.s + static_cast<std::size_t>(j);
    put64(b, L.index(side, slot), i + 1);
    std::memcpy(&b[L.value(side, slot)], &run[i], sizeof(T));
  }
}

// The pivot of a side: the weighted median of all members' samples under ord.less (element,
// global position), each element weighing count / samples of its member, so that unbalanced
// runs are sampled fairly. Member i's run holds count[i] elements from global position
// start[i] on. Returns false when the side is empty.
template <class T, class Ord>
bool slot_pivot(const std::vector<unsigned char>& b, const SlotLayout& L, int side, const Ord& ord,
                const std::vector<std::int64_t>& count, const std::vector<std::int64_t>& start,
                T* pivot, std::int64_t* pivot_pos) {
  struct Entry {
    T value;
    std::int64_t pos;
    double weight;
  };
  std::vector<Entry> e;
  double total = 0;
  for (int i = 0; i < static_cast<int>(L.q); ++i) {
    const std::int64_t c = count[i];
    const std::int64_t u = std::min<std::int64_t>(static_cast<std::int64_t>(L.s), c);
    total += static_cast<double>(c);
    for (std::int64_t j = 0; j < u; ++j) {
      std::size_t slot = static_cast<std::size_t>(i) * L.s + static_cast<std::size_t>(j);
      Entry x;
      std::memcpy(static_cast<void*>(&x.value), &b[L.value(side, slot)], sizeof(T));
      x.pos = start[i] + get64(b, L.index(side, slot)) - 1;
      x.weight = static_cast<double>(c) / static_cast<double>(u);
      e.push_back(x);
    }
  }
  if (e.empty()) return false;
  std::sort(e.begin(), e.end(), [&](const Entry& x, const Entry& y) {
    return ord.less(x.value, x.pos, y.value, y.pos);
  });
  // The first element with at least half the weight before it: with a sample that is all of
  // the side (small groups), exactly half the elements (rounded down) are smaller than it.
  const double half = std::floor(total / 2);
  double below = 0;
  std::size_t k = 0;
  while (k + 1 < e.size() && below + e[k].weight <= half) below += e[k++].weight;
  *pivot = e[k].value;
  *pivot_pos = e[k].pos;
  return true;
}

}  // namespace rangecomm::jquick
