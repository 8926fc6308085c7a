// Base cases of Janus Quicksort: a group on one process sorts locally; a group on two
// neighbouring processes exchanges its elements, and each side selects its share (the left
// process the smallest, the right the largest) under the same strict total order, so the two
// selections are complementary even when elements compare equal but differ.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "rangecomm/jquick/layout.hpp"
#include "rangecomm/jquick/level.hpp"

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

template <class T, class C, class B>
int finish_pair(C& ctx, PairCase<T, B>& pc) {
  int err = wait_all<B>(pc.reqs);
  if (err != MPI_SUCCESS) return err;
  // Element x of the left process's elements followed by the right process's: the same
  // sequence on both sides.
  const std::vector<T>& a = pc.left ? pc.mine : pc.theirs;
  const std::vector<T>& b = pc.left ? pc.theirs : pc.mine;
  const std::size_t na = a.size(), n = na + b.size();
  auto at = [&](std::size_t x) -> const T& { return x < na ? a[x] : b[x - na]; };
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  const std::size_t keep_left = na;  // each side keeps as many as it brought
  auto cut = idx.begin() + static_cast<std::ptrdiff_t>(keep_left);
  if (keep_left > 0 && keep_left < n) {
    std::nth_element(idx.begin(), cut, idx.end(), [&](std::size_t x, std::size_t y) {
      return ctx.less(at(x), static_cast<std::int64_t>(x), at(y), static_cast<std::int64_t>(y));
    });
  }
  auto& out = pc.result.data;
  out.clear();
  if (pc.left) {
    for (auto it = idx.begin(); it != cut; ++it) out.push_back(at(*it));
  } else {
    for (auto it = cut; it != idx.end(); ++it) out.push_back(at(*it));
  }
  std::vector<T>().swap(pc.mine);
  std::vector<T>().swap(pc.theirs);
  std::sort(out.begin(), out.end(), ctx.comp);
  return MPI_SUCCESS;
}

}  // namespace rangecomm::jquick
