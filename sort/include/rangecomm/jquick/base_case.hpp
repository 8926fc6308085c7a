// Base cases of Janus Quicksort: a group on one process sorts locally; a group on two
// neighbouring processes exchanges its elements, and each side selects its share (the left
// process the smallest, the right the largest) by the same deterministic rule, so the two
// selections are complementary even when elements compare equal but differ.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "rangecomm/jquick/layout.hpp"
#include "rangecomm/jquick/level.hpp"
#include "rangecomm/jquick/local_sort.hpp"

namespace rangecomm::jquick {

// Part of this process's output: global positions lo..lo+data.size()-1.
template <class T>
struct Piece {
  std::int64_t lo = 0;
  std::vector<T> data;
};

template <class T, class B>
struct PairCase {
  bool left = false;  // this process keeps the smallest elements
  std::vector<T> mine, theirs;
  std::vector<typename B::Request> reqs;
  Piece<T> result;
};

// Both processes know both shares (the layout), so the exchange needs no probing. Only one
// two-process group ever spans the boundary between two neighbours, so one tag suffices.
template <class T, class C, class B>
int start_pair(C& ctx, PairCase<T, B>& pc, std::int64_t lo, std::int64_t hi, Span who,
               std::int64_t mine_from, std::vector<T>&& share) {
  pc.left = ctx.me == who.first;
  int partner = pc.left ? who.last : who.first;
  pc.mine = std::move(share);
  pc.theirs.resize(static_cast<std::size_t>(ctx.layout.overlap(partner, lo, hi)));
  pc.result.lo = mine_from;
  int err = post_recv(ctx.b, pc.theirs.data(), pc.theirs.size() * sizeof(T), partner, kTagPair,
                      ctx.top, ctx.max_chunk, pc.reqs);
  if (err != MPI_SUCCESS) return err;
  return post_send(ctx.b, pc.mine.data(), pc.mine.size() * sizeof(T), partner, kTagPair, ctx.top,
                   ctx.max_chunk, pc.reqs, &ctx.stats.messages);
}

// The left process keeps the `keep` smallest of a followed by b, the right process the rest.
// Elements below (above) the keep-th smallest value v go left (right); of the elements equal to
// v, the first ones in the order of a then b go left. Both sides see a and b in the same order,
// so their choices are complementary even for elements that compare equal but differ.
template <class T, class Compare>
std::vector<T> select_share(const std::vector<T>& a, const std::vector<T>& b, std::size_t keep,
                            bool left, Compare comp) {
  std::vector<T> out;
  const std::size_t n = a.size() + b.size();
  if (keep == 0 || keep == n) {  // one side gets everything
    if (left == (keep == n)) {
      out = a;
      out.insert(out.end(), b.begin(), b.end());
    }
    return out;
  }
  std::vector<T> all(a);
  all.insert(all.end(), b.begin(), b.end());
  auto nth = all.begin() + static_cast<std::ptrdiff_t>(keep);
  std::nth_element(all.begin(), nth, all.end(), comp);
  const T v = *nth;
  // Of the elements equal to v, this many go left: those of all[0..keep) not below v.
  std::size_t equal_left = 0;
  for (auto it = all.begin(); it != nth; ++it) equal_left += comp(*it, v) ? 0 : 1;
  out.reserve(left ? keep : n - keep);
  std::size_t equal_seen = 0;
  auto take = [&](const T& x) {
    bool goes_left;
    if (comp(x, v))
      goes_left = true;
    else if (comp(v, x))
      goes_left = false;
    else
      goes_left = equal_seen++ < equal_left;
    if (goes_left == left) out.push_back(x);
  };
  for (const T& x : a) take(x);
  for (const T& x : b) take(x);
  return out;
}

template <class T, class C, class B>
int finish_pair(C& ctx, PairCase<T, B>& pc) {
  int err = wait_all<B>(pc.reqs);
  if (err != MPI_SUCCESS) return err;
  const std::vector<T>& a = pc.left ? pc.mine : pc.theirs;  // the left process's elements
  const std::vector<T>& b = pc.left ? pc.theirs : pc.mine;
  pc.result.data = select_share(a, b, a.size(), pc.left, ctx.comp);  // each keeps its count
  std::vector<T>().swap(pc.mine);
  std::vector<T>().swap(pc.theirs);
  return MPI_SUCCESS;  // pc.result.data is not sorted yet: the engine sorts every piece
}

}  // namespace rangecomm::jquick
