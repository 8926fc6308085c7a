// Base cases of Janus Quicksort: a group on one process sorts locally; in a group on two
// neighbouring processes each sorts its elements, they swap them, and each merges its share
// (the left process the smallest, the right the largest) by the same deterministic rule, so the
// two shares are complementary even when elements compare equal but differ.
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
  bool sorted = false;  // a two-process base case's share comes sorted
};

template <class T, class B>
struct PairCase {
  bool left = false;     // this process keeps the smallest elements
  int partner = 0;       // rank on the attached communicator
  std::size_t keep = 0;  // how many the left process keeps
  std::vector<T> mine, theirs;
  std::vector<typename B::Request> reqs;
  Piece<T> result;
};

// A two-process base case: each process sorts its elements, they swap them, and each merges its
// share out of the two sorted runs (sort n + merge, instead of selecting from 2n unsorted
// elements and sorting the share after). Both processes know how many elements the other holds
// (below the first level its share of the positions lo..hi, the layout; for the whole of a
// two-process sort, from one exchange of counts), so the exchange needs no probing. Only one
// two-process group ever spans the boundary between two neighbours, so one tag suffices. The
// left process keeps the positions lo..hi it owns. Started (sort and exchange) by
// begin_pair after the distributed phase, so that it never delays a larger group.
template <class T, class C, class B>
void start_pair(C& ctx, PairCase<T, B>& pc, std::int64_t lo, std::int64_t hi, Span who,
                std::int64_t mine_from, std::vector<T>&& share, std::int64_t their_count) {
  pc.left = ctx.me == who.first;
  pc.partner = pc.left ? who.last : who.first;
  pc.keep = static_cast<std::size_t>(ctx.layout.overlap(who.first, lo, hi));
  pc.mine = std::move(share);
  pc.theirs.resize(static_cast<std::size_t>(their_count));
  pc.result.lo = mine_from;
  pc.result.sorted = true;
}

template <class T, class C, class B>
int begin_pair(C& ctx, PairCase<T, B>& pc) {
  local_sort(pc.mine.begin(), pc.mine.end(), ctx.comp);
  int err = post_recv(ctx.b, pc.theirs.data(), pc.theirs.size() * sizeof(T), pc.partner, kTagPair,
                      ctx.top, ctx.max_chunk, pc.reqs);
  if (err != MPI_SUCCESS) return err;
  return post_send(ctx.b, pc.mine.data(), pc.mine.size() * sizeof(T), pc.partner, kTagPair, ctx.top,
                   ctx.max_chunk, pc.reqs, &ctx.stats.messages);
}

// Of the sorted runs a (the left process's) and b, the left process keeps the `keep` smallest,
// the right process the rest, sorted. Where equal elements straddle the boundary, those of a go
// left first, in a's order: both sides see the same two runs, so their shares are complementary
// even for elements that compare equal but differ.
template <class T, class Compare>
std::vector<T> merge_share(const std::vector<T>& a, const std::vector<T>& b, std::size_t keep,
                           bool left, Compare comp) {
  const std::size_t na = a.size(), nb = b.size();
  // The split takes ia elements of a and keep - ia of b; the largest valid ia (a first on ties).
  // valid(ia): a[ia-1] is not above b[keep-ia] (monotone: true up to the split, false after).
  std::size_t lo = keep > nb ? keep - nb : 0, hi = std::min(keep, na);
  auto valid = [&](std::size_t ia) {
    std::size_t ib = keep - ia;
    return ia == 0 || ib >= nb || !comp(b[ib], a[ia - 1]);
  };
  while (lo < hi) {  // the last ia in [lo, hi] with valid(ia); valid(lo) holds
    std::size_t mid = lo + (hi - lo + 1) / 2;
    if (valid(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  const std::size_t ia = lo, ib = keep - ia;
  std::vector<T> out(left ? keep : na + nb - keep);
  if (left)
    std::merge(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(ia), b.begin(),
               b.begin() + static_cast<std::ptrdiff_t>(ib), out.begin(), comp);
  else
    std::merge(a.begin() + static_cast<std::ptrdiff_t>(ia), a.end(),
               b.begin() + static_cast<std::ptrdiff_t>(ib), b.end(), out.begin(), comp);
  return out;
}

template <class T, class C, class B>
int finish_pair(C& ctx, PairCase<T, B>& pc) {
  int err = wait_all<B>(pc.reqs);
  if (err != MPI_SUCCESS) return err;
  const std::vector<T>& a = pc.left ? pc.mine : pc.theirs;  // the left process's elements
  const std::vector<T>& b = pc.left ? pc.theirs : pc.mine;
  pc.result.data = merge_share(a, b, pc.keep, pc.left, ctx.comp);
  std::vector<T>().swap(pc.mine);
  std::vector<T>().swap(pc.theirs);
  return MPI_SUCCESS;
}

}  // namespace rangecomm::jquick
