// One distributed level of Janus Quicksort on one group, as a chain of nonblocking steps so that
// a janus process can run the levels of its two groups at the same time (paper 001, Sec. VII):
//
//   counts        (first level only) prefix sum and total of the input counts, parameters;
//                 for groups up to kSlotSumsMax one all-reduce of a slot per member
//   samples       every member draws the same random global positions; the holders fill them
//                 in and one bitwise-OR all-reduce gives everybody the sample; the pivot is its
//                 median under the order (element, global position), so duplicates split
//                 without storing an index per element
//   split_counts  local partition into small/large, prefix sum and total of the small counts
//   exchange      greedy assignment: small element k goes to global position lo + k, large
//                 element k to lo + S + k; receivers take messages from any source until their
//                 share of each side has arrived
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "rangecomm/jquick/backend.hpp"
#include "rangecomm/jquick/layout.hpp"
#include "rangecomm/jquick/options.hpp"

namespace rangecomm::jquick {

constexpr int kTagSmall = 11;  // data of the left group
constexpr int kTagLarge = 12;  // data of the right group
constexpr int kTagPair = 13;   // two-process base cases, on the attached communicator

// What all groups of one sort share.
template <class T, class Compare, class B>
struct Context {
  Context(B& backend, Compare c) : b(backend), comp(std::move(c)) {}

  B& b;
  Compare comp;
  typename B::Comm top;  // attached communicator: first level and two-process base cases
  int me = 0;
  int p = 1;
  Layout layout;
  SampleParams sp;
  std::int64_t max_chunk = 0;
  JQuickStats stats;

  // The strict total order that breaks ties between equal elements by global position.
  bool less(const T& x, std::int64_t px, const T& y, std::int64_t py) const {
    if (comp(x, y)) return true;
    if (comp(y, x)) return false;
    return px < py;
  }
};

constexpr int kParams = 5;  // sample parameters and chunk size of rank 0

enum class Phase { counts, samples, split_counts, exchange, done };

template <class T, class B>
struct Task {
  typename B::Comm comm;
  bool owns_comm = true;  // false for the first level (the attached communicator)
  int first = 0;          // process (rank of the attached communicator) of comm's rank 0
  int depth = 0;
  std::int64_t lo = 0, hi = 0;  // the group sorts global positions lo..hi-1
  std::int64_t begin = 0;       // global position of data[0]
  std::vector<T> data;
  Phase phase = Phase::samples;
  std::vector<typename B::Request> reqs;

  std::int64_t count_before = 0, count_total = 0;  // first level
  std::int64_t params[kParams] = {0, 0, 0, 0, 0};  // rank 0's sample parameters and chunk size
  std::int64_t pre_value = 0, pre_before = 0, pre_total = 0;  // start_prefix / finish_prefix
  std::vector<std::int64_t> sums_in, sums_out;                // one slot per member
  std::vector<unsigned char> first_in, first_out;             // first_level.hpp

  std::vector<std::int64_t> sample_pos;
  std::vector<T> sample_mine, sample_all;
  T pivot{};
  std::int64_t pivot_pos = 0;
  std::int64_t pivot_at = -1;  // index in `out` of the element at pivot_pos, if held here

  std::vector<T> out;  // partitioned: small elements first
  std::int64_t small = 0, small_before = 0, small_total = 0;
  std::vector<T> left, right;  // this process's share of each side
  std::int64_t left_filled = 0, right_filled = 0;

  Task() = default;
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() {
    if (owns_comm) B::free(&comm);
  }
};

// Groups of up to this many members get the prefix sum and the total of a count from one
// all-reduce of a vector with one slot per member: one round of messages instead of an exscan
// and an all-reduce (on few cores every extra round costs context switches). Larger groups use
// the two O(1)-sized collectives, so the messages do not grow with the group.
constexpr int kSlotSumsMax = 256;

// Starts the prefix sum (t.pre_before) and total (t.pre_total) of `value` over t.comm. With
// `with_params`, rank 0's t.params ride along (zero slots of the others add nothing).
template <class T, class C, class B>
int start_prefix(C& ctx, Task<T, B>& t, std::int64_t value, bool with_params) {
  const int q = B::size(t.comm), r = B::rank(t.comm);
  const int extra = with_params ? kParams : 0;
  t.pre_value = value;
  if (q <= kSlotSumsMax) {
    t.sums_in.assign(static_cast<std::size_t>(q + extra), 0);
    t.sums_out.assign(t.sums_in.size(), 0);
    t.sums_in[r] = value;
    if (r == 0) std::copy(t.params, t.params + extra, t.sums_in.begin() + q);
    t.reqs.resize(1);
    return ctx.b.iallreduce(t.sums_in.data(), t.sums_out.data(), q + extra, MPI_INT64_T, MPI_SUM,
                            t.comm, &t.reqs[0]);
  }
  t.reqs.resize(with_params ? 3 : 2);
  int err = ctx.b.iexscan_sum(&t.pre_value, &t.pre_before, 1, t.comm, &t.reqs[0]);
  if (err == MPI_SUCCESS)
    err = ctx.b.iallreduce(&t.pre_value, &t.pre_total, 1, MPI_INT64_T, MPI_SUM, t.comm, &t.reqs[1]);
  if (err == MPI_SUCCESS && with_params)
    err = ctx.b.ibcast(t.params, kParams, MPI_INT64_T, 0, t.comm, &t.reqs[2]);
  return err;
}

// After start_prefix's operations completed: fills t.pre_before, t.pre_total (and t.params).
template <class T, class B>
void finish_prefix(Task<T, B>& t, bool with_params) {
  const int q = B::size(t.comm), r = B::rank(t.comm);
  if (r == 0) t.pre_before = 0;  // MPI leaves Exscan undefined on rank 0
  if (t.sums_out.empty()) return;
  t.pre_before = std::accumulate(t.sums_out.begin(), t.sums_out.begin() + r, std::int64_t{0});
  t.pre_total = std::accumulate(t.sums_out.begin(), t.sums_out.begin() + q, std::int64_t{0});
  if (with_params) std::copy(t.sums_out.begin() + q, t.sums_out.begin() + q + kParams, t.params);
  t.sums_in.clear();
  t.sums_out.clear();
}

// First level: the input is anywhere, so positions come from a prefix sum of the counts. Rank
// 0's sampling parameters travel along, so every member draws the same sample, and so does its
// message size limit, so that both sides of a transfer cut it alike.
template <class T, class C, class B>
int start_counts(C& ctx, Task<T, B>& t) {
  t.params[0] = ctx.sp.per_log_p;
  t.params[1] = ctx.sp.elements_per_sample;
  t.params[2] = ctx.sp.min;
  t.params[3] = ctx.sp.seed;
  t.params[4] = ctx.max_chunk;
  t.phase = Phase::counts;
  return start_prefix(ctx, t, static_cast<std::int64_t>(t.data.size()), true);
}

template <class T, class C, class B>
int start_samples(C& ctx, Task<T, B>& t) {
  const std::int64_t n = t.hi - t.lo, held = static_cast<std::int64_t>(t.data.size());
  const std::int64_t k = sample_size(ctx.sp, n, B::size(t.comm), sizeof(T));
  Rng rng(mix64(static_cast<std::uint64_t>(ctx.sp.seed) ^ mix64(t.lo) ^ mix64(~t.hi)));
  t.sample_pos.resize(k);
  t.sample_mine.resize(k);
  t.sample_all.resize(k);
  // Slots this process does not hold stay all-zero bytes, so OR-ing all members' arrays gives
  // exactly the holders' bytes.
  std::memset(static_cast<void*>(t.sample_mine.data()), 0, k * sizeof(T));
  for (std::int64_t j = 0; j < k; ++j) {
    std::int64_t pos = t.lo + rng.below(n);
    t.sample_pos[j] = pos;
    if (pos >= t.begin && pos < t.begin + held)
      std::memcpy(static_cast<void*>(&t.sample_mine[j]), &t.data[pos - t.begin], sizeof(T));
  }
  t.reqs.resize(1);
  t.phase = Phase::samples;
  return ctx.b.iallreduce(t.sample_mine.data(), t.sample_all.data(),
                          static_cast<int>(k * sizeof(T)), MPI_BYTE, MPI_BOR, t.comm, &t.reqs[0]);
}

template <class T, class C, class B>
int start_partition(C& ctx, Task<T, B>& t);

// The pivot is the sample's median; then partition by (element, position) < (pivot, pos).
template <class T, class C, class B>
int start_split_counts(C& ctx, Task<T, B>& t) {
  std::vector<std::int64_t> idx(t.sample_all.size());
  std::iota(idx.begin(), idx.end(), 0);
  auto mid = idx.begin() + static_cast<std::ptrdiff_t>(idx.size() / 2);
  std::nth_element(idx.begin(), mid, idx.end(), [&](std::int64_t a, std::int64_t b) {
    return ctx.less(t.sample_all[a], t.sample_pos[a], t.sample_all[b], t.sample_pos[b]);
  });
  t.pivot = t.sample_all[*mid];
  t.pivot_pos = t.sample_pos[*mid];
  std::vector<T>().swap(t.sample_all);
  std::vector<T>().swap(t.sample_mine);
  std::vector<std::int64_t>().swap(t.sample_pos);
  return start_partition(ctx, t);
}

// Partition by (element, position) < (t.pivot, t.pivot_pos), then count the small elements.
template <class T, class C, class B>
int start_partition(C& ctx, Task<T, B>& t) {
  const std::int64_t held = static_cast<std::int64_t>(t.data.size());
  t.out.resize(t.data.size());
  std::int64_t s = 0, e = held;
  for (std::int64_t i = 0; i < held; ++i) {
    if (ctx.less(t.data[i], t.begin + i, t.pivot, t.pivot_pos)) {
      t.out[s++] = t.data[i];
    } else {
      t.out[--e] = t.data[i];
      if (t.begin + i == t.pivot_pos) t.pivot_at = e;
    }
  }
  std::vector<T>().swap(t.data);
  t.small = s;
  t.phase = Phase::split_counts;
  return start_prefix(ctx, t, s, false);
}

// Sends out[from..from+count) to global positions first_pos.. (their owners); what stays here is
// copied into `mine`.
template <class T, class C, class B>
int send_run(C& ctx, Task<T, B>& t, std::int64_t from, std::int64_t count, std::int64_t first_pos,
             int tag, std::vector<T>& mine, std::int64_t& filled) {
  for (std::int64_t a = 0; a < count;) {
    int owner = ctx.layout.owner(first_pos + a);
    std::int64_t e = std::min(count, ctx.layout.end(owner) - first_pos);
    if (owner == ctx.me) {
      std::copy(t.out.begin() + from + a, t.out.begin() + from + e, mine.begin() + filled);
      filled += e - a;
    } else {
      int err = post_send(ctx.b, &t.out[from + a], (e - a) * sizeof(T), owner - t.first, tag,
                          t.comm, ctx.max_chunk, t.reqs, &ctx.stats.messages);
      if (err != MPI_SUCCESS) return err;
    }
    a = e;
  }
  return MPI_SUCCESS;
}

template <class T, class C, class B>
int start_exchange(C& ctx, Task<T, B>& t) {
  finish_prefix(t, false);
  t.small_before = t.pre_before;
  t.small_total = t.pre_total;
  if (t.small_total == 0) {
    // The pivot was the smallest element: move it alone to the left, so the group shrinks.
    t.small_total = 1;
    if (t.pivot_at >= 0) {
      std::swap(t.out[0], t.out[t.pivot_at]);
      t.small = 1;
    }
    t.small_before = t.pivot_pos < t.begin ? 1 : 0;
  }
  const std::int64_t mid = t.lo + t.small_total;
  t.left.resize(ctx.layout.overlap(ctx.me, t.lo, mid));
  t.right.resize(ctx.layout.overlap(ctx.me, mid, t.hi));
  t.left_filled = t.right_filled = 0;
  const std::int64_t held = static_cast<std::int64_t>(t.out.size());
  const std::int64_t large_before = (t.begin - t.lo) - t.small_before;
  t.phase = Phase::exchange;
  int err = send_run(ctx, t, 0, t.small, t.lo + t.small_before, kTagSmall, t.left, t.left_filled);
  if (err != MPI_SUCCESS) return err;
  return send_run(ctx, t, t.small, held - t.small, mid + large_before, kTagLarge, t.right,
                  t.right_filled);
}

// Receives every message of `tag` that has arrived into the rest of `buf`.
template <class T, class C, class B>
int receive_side(C& ctx, Task<T, B>& t, int tag, std::vector<T>& buf, std::int64_t& filled) {
  while (filled < static_cast<std::int64_t>(buf.size())) {
    bool found = false;
    int source = 0, bytes = 0;
    typename B::Message msg;
    int err = ctx.b.improbe_any(tag, t.comm, &found, &msg, &source, &bytes);
    if (err != MPI_SUCCESS) return err;
    if (!found) return MPI_SUCCESS;
    std::int64_t room = static_cast<std::int64_t>(buf.size()) - filled;
    if (bytes % sizeof(T) != 0 || bytes / static_cast<std::int64_t>(sizeof(T)) > room)
      return MPI_ERR_TRUNCATE;  // cannot happen unless members disagree on the layout
    t.reqs.emplace_back();
    err = ctx.b.imrecv(&buf[filled], bytes, &msg, &t.reqs.back());
    if (err != MPI_SUCCESS) return err;
    filled += bytes / static_cast<std::int64_t>(sizeof(T));
  }
  return MPI_SUCCESS;
}

template <class T, class C, class B>
int poll_exchange(C& ctx, Task<T, B>& t, bool* done) {
  *done = false;
  int err = receive_side(ctx, t, kTagSmall, t.left, t.left_filled);
  if (err == MPI_SUCCESS) err = receive_side(ctx, t, kTagLarge, t.right, t.right_filled);
  if (err != MPI_SUCCESS) return err;
  bool all = false;
  err = test_all<B>(t.reqs, &all);
  *done = all && t.left_filled == static_cast<std::int64_t>(t.left.size()) &&
          t.right_filled == static_cast<std::int64_t>(t.right.size());
  if (*done) std::vector<T>().swap(t.out);
  return err;
}

}  // namespace rangecomm::jquick
