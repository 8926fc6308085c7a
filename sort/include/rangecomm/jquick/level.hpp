// One distributed level of Janus Quicksort on one group, as a chain of nonblocking steps so that
// a janus process can run the levels of its two groups at the same time (paper 001, Sec. VII):
//
//   counts        (first level only) prefix sum and total of the input counts, parameters;
//                 for groups up to slot_group_max fused with the sample (first_level.hpp)
//   samples       (groups above slot_group_max, and children whose pivot was not computed by
//                 the parent) every member draws the same random global positions; the holders
//                 fill them in and one bitwise-OR all-reduce gives everybody the sample; the
//                 pivot is its median under the order (element, global position), so duplicates
//                 split without storing an index per element
//   split_counts  local partition into small/large, prefix sum and total of the small counts;
//                 for groups up to slot_group_max one slot all-reduce (slots.hpp) that also
//                 carries a sample of each side, from which every member computes the pivots
//                 of both children: a child starts with its partition, one round sooner
//   exchange      greedy assignment: small element k goes to global position lo + k, large
//                 element k to lo + S + k; receivers take messages from any source until their
//                 share of each side has arrived, and place each at its global position when
//                 they know every member's counts (so a child's pivot position is exact)
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
#include "rangecomm/jquick/slots.hpp"

namespace rangecomm::jquick {

constexpr int kTagSmall = 11;  // data of the left group
constexpr int kTagLarge = 12;  // data of the right group
constexpr int kTagPair = 13;   // two-process base cases, on the attached communicator
constexpr int kTagSlots = 14;  // slot buffers sent member to member (groups up to slot_direct_max)

// What all groups of one sort share.
template <class T, class Compare, class B>
struct Context {
  Context(B& backend, Compare c) : b(backend), comp(std::move(c)) {}

  B& b;
  Compare comp;
  typename B::Comm top;  // attached communicator: first level and two-process base cases
  int me = 0;
  int p = 1;
  int slot_max = 256;   // JQuickOptions::slot_group_max: groups up to it use slots.hpp
  int slot_direct = 8;  // JQuickOptions::slot_direct_max: ... and send them member to member
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

enum class Phase { counts, samples, split_counts, exchange, done };

// This process's share of one side (small = 0, large = 1) of a level's partition.
template <class T>
struct Side {
  std::vector<T> buf;  // global positions lo..lo+buf.size()-1
  std::int64_t lo = 0;
  std::int64_t filled = 0;  // elements arrived
  // Exact placement: the global position of each member's first element of this side, how
  // many elements its run of this side has, and how many of them arrived here. Empty: elements
  // are stored in the order they arrive.
  std::vector<std::int64_t> run_lo, run_n, got;
  // The pivot of the child group on this side, when the parent computed it.
  bool has_pivot = false;
  T pivot{};
  std::int64_t pivot_pos = 0;

  // Where n elements this process keeps, for global positions pos.., go in buf; -1 when they
  // do not fit (members disagree on the layout: a bug).
  std::int64_t place_own(std::int64_t pos, std::int64_t n) {
    return take(run_lo.empty() ? filled : pos - lo, n);
  }
  // Where n elements arriving from member src go in buf (messages from one source arrive in
  // the order they were sent); -1 when they do not fit.
  std::int64_t place_from(int src, std::int64_t n) {
    if (run_lo.empty()) return take(filled, n);
    const std::int64_t at = std::max(run_lo[src], lo) - lo + got[src];
    got[src] += n;
    return take(at, n);
  }
  bool complete() const { return filled == static_cast<std::int64_t>(buf.size()); }

 private:
  std::int64_t take(std::int64_t at, std::int64_t n) {
    if (at < 0 || n > static_cast<std::int64_t>(buf.size()) - at) return -1;
    filled += n;
    return at;
  }
};

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
  std::vector<unsigned char> slots_in, slots_out;             // slots.hpp
  std::vector<unsigned char> slots_packed;  // start_slots: every member's packed slots

  std::vector<std::int64_t> sample_pos;
  std::vector<T> sample_mine, sample_all;
  T pivot{};
  std::int64_t pivot_pos = 0;
  std::int64_t pivot_at = -1;  // index in `out` of the element at pivot_pos, if held here

  std::vector<T> out;  // partitioned: small elements first
  std::int64_t small = 0, small_before = 0, small_total = 0;
  Side<T> side[2];  // this process's share of the small and of the large elements

  Task() = default;
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() {
    if (owns_comm) B::free(&comm);
  }
};

// Starts the round that gives every member the bitwise OR of all members' t.slots_in in
// t.slots_out (complete once t.reqs are, and finish_slots ran). Up to ctx.slot_direct members
// each send their own pieces, packed, to every other member: one message deep, where the
// all-reduce of larger groups is log2 q messages deep (and each step waits for a partner).
template <class T, class C, class B>
int start_slots(C& ctx, Task<T, B>& t, const SlotLayout& L) {
  const int q = B::size(t.comm), r = B::rank(t.comm);
  t.slots_out.assign(L.bytes, 0);
  if (q > ctx.slot_direct) {
    t.reqs.resize(1);
    return ctx.b.iallreduce(t.slots_in.data(), t.slots_out.data(), static_cast<int>(L.bytes),
                            MPI_BYTE, MPI_BOR, t.comm, &t.reqs[0]);
  }
  // A block per member, each as large as member 0's (the largest: it adds the parameters).
  const std::size_t block = member_bytes(L, 0);
  t.slots_packed.assign(static_cast<std::size_t>(q) * block, 0);
  unsigned char* mine = &t.slots_packed[static_cast<std::size_t>(r) * block];
  pack_member(L, r, t.slots_in.data(), mine);
  t.reqs.clear();
  t.reqs.reserve(2 * static_cast<std::size_t>(q - 1));  // q - 1 receives, q - 1 sends
  for (int k = 1; k < q; ++k) {
    const int from = (r + q - k) % q;
    t.reqs.emplace_back();
    int err = ctx.b.irecv(&t.slots_packed[static_cast<std::size_t>(from) * block],
                          static_cast<int>(member_bytes(L, from)), from, kTagSlots, t.comm,
                          &t.reqs.back());
    if (err != MPI_SUCCESS) return err;
  }
  for (int k = 1; k < q; ++k) {
    t.reqs.emplace_back();
    int err = ctx.b.isend(mine, static_cast<int>(member_bytes(L, r)), (r + k) % q, kTagSlots,
                          t.comm, &t.reqs.back());
    if (err != MPI_SUCCESS) return err;
  }
  return MPI_SUCCESS;
}

// After start_slots's requests completed: t.slots_out is the OR of all members' buffers.
template <class T, class B>
void finish_slots(Task<T, B>& t, const SlotLayout& L) {
  if (t.slots_packed.empty()) return;  // the all-reduce wrote t.slots_out
  const int q = B::size(t.comm), r = B::rank(t.comm);
  const std::size_t block = member_bytes(L, 0);
  t.slots_out = t.slots_in;
  for (int i = 0; i < q; ++i)
    if (i != r)
      unpack_member(L, i, &t.slots_packed[static_cast<std::size_t>(i) * block], t.slots_out.data());
  std::vector<unsigned char>().swap(t.slots_packed);
}

// Starts the prefix sum (t.pre_before) and total (t.pre_total) of `value` over t.comm, for
// groups above the slot size. With `with_params`, rank 0's t.params are broadcast too.
template <class T, class C, class B>
int start_prefix(C& ctx, Task<T, B>& t, std::int64_t value, bool with_params) {
  t.pre_value = value;
  t.reqs.resize(with_params ? 3 : 2);
  int err = ctx.b.iexscan_sum(&t.pre_value, &t.pre_before, 1, t.comm, &t.reqs[0]);
  if (err == MPI_SUCCESS)
    err = ctx.b.iallreduce(&t.pre_value, &t.pre_total, 1, MPI_INT64_T, MPI_SUM, t.comm, &t.reqs[1]);
  if (err == MPI_SUCCESS && with_params)
    err = ctx.b.ibcast(t.params, kParams, MPI_INT64_T, 0, t.comm, &t.reqs[2]);
  return err;
}

// After start_prefix's operations completed.
template <class T, class B>
void finish_prefix(Task<T, B>& t) {
  if (B::rank(t.comm) == 0) t.pre_before = 0;  // MPI leaves Exscan undefined on rank 0
}

// First level of a group above the slot size: the input is anywhere, so positions come from a
// prefix sum of the counts. Rank 0's sampling parameters travel along, so every member draws the
// same sample, and so does its message size limit, so that both sides of a transfer cut it alike.
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

// Children's samples ride on the split round only up to this many elements per side: beyond,
// the level moves so much data that a round of its own costs less than doubling the samples'
// bytes in an all-reduce of the whole group.
constexpr std::int64_t kRideAlongMax = 64;

// The split buffer of a group of q members sorting n elements: each member's small count and
// element count (on the first level the input counts, which are not the layout's), and a
// sample of each side, as large as the group's own sample would be (none above kRideAlongMax).
template <class C>
SlotLayout split_layout(const C& ctx, std::int64_t n, int q, std::size_t elem) {
  const std::int64_t k = sample_size(ctx.sp, n, q, elem);
  const int sides = k <= kRideAlongMax ? 2 : 0;
  return SlotLayout(q, 2, slot_samples(k, q, elem, 2), elem, sides, false);
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
  const int q = B::size(t.comm), r = B::rank(t.comm);
  if (q > ctx.slot_max) return start_prefix(ctx, t, s, false);
  const SlotLayout L = split_layout(ctx, t.hi - t.lo, q, sizeof(T));
  t.slots_in.assign(L.bytes, 0);
  put64(t.slots_in, L.count(r, 0), s);
  put64(t.slots_in, L.count(r, 1), held);
  Rng rng(mix64(static_cast<std::uint64_t>(ctx.sp.seed) ^ mix64(t.lo) ^ mix64(~t.hi) ^
                mix64(static_cast<std::uint64_t>(r) + 1)));
  if (L.sides == 2) {
    put_sample(t.slots_in, L, 0, r, t.out.data(), s, rng);
    put_sample(t.slots_in, L, 1, r, t.out.data() + s, held - s, rng);
  }
  return start_slots(ctx, t, L);
}

// Sends out[from..from+count) to global positions first_pos.. (their owners); what stays here is
// copied into its place in `mine`.
template <class T, class C, class B>
int send_run(C& ctx, Task<T, B>& t, std::int64_t from, std::int64_t count, std::int64_t first_pos,
             int tag, Side<T>& mine) {
  for (std::int64_t a = 0; a < count;) {
    int owner = ctx.layout.owner(first_pos + a);
    std::int64_t e = std::min(count, ctx.layout.end(owner) - first_pos);
    if (owner == ctx.me) {
      std::int64_t at = mine.place_own(first_pos + a, e - a);
      if (at < 0) return MPI_ERR_INTERN;
      std::copy(t.out.begin() + from + a, t.out.begin() + from + e, mine.buf.begin() + at);
    } else {
      int err = post_send(ctx.b, &t.out[from + a], (e - a) * sizeof(T), owner - t.first, tag,
                          t.comm, ctx.max_chunk, t.reqs, &ctx.stats.messages);
      if (err != MPI_SUCCESS) return err;
    }
    a = e;
  }
  return MPI_SUCCESS;
}

// What the split buffer says of every member: its small and its element count.
struct MemberCounts {
  std::vector<std::int64_t> small, held;
};

// Reads the split buffer: every member's counts, this process's prefix of the small counts and
// their total.
template <class T, class B>
MemberCounts read_split_slots(Task<T, B>& t, const SlotLayout& L) {
  const int q = B::size(t.comm), r = B::rank(t.comm);
  MemberCounts m{std::vector<std::int64_t>(q), std::vector<std::int64_t>(q)};
  t.small_before = t.small_total = 0;
  for (int i = 0; i < q; ++i) {
    m.small[i] = get64(t.slots_out, L.count(i, 0));
    m.held[i] = get64(t.slots_out, L.count(i, 1));
    if (i < r) t.small_before += m.small[i];
    t.small_total += m.small[i];
  }
  return m;
}

// Where every member's run of each side lands (exact placement) and, when the buffer carried
// samples, the pivots of both children.
template <class T, class C, class B>
void plan_sides(C& ctx, Task<T, B>& t, const SlotLayout& L, const MemberCounts& m,
                std::int64_t mid) {
  const int q = static_cast<int>(m.small.size());
  std::vector<std::int64_t> count[2] = {m.small, std::vector<std::int64_t>(q)};
  std::int64_t small_before = 0, begin = t.lo;  // member i's, as i goes up
  for (int i = 0; i < q; ++i) {
    count[1][i] = m.held[i] - m.small[i];
    t.side[0].run_lo.push_back(t.lo + small_before);
    t.side[1].run_lo.push_back(mid + (begin - t.lo) - small_before);
    small_before += m.small[i];
    begin += m.held[i];
  }
  for (int s = 0; s < 2; ++s) {
    Side<T>& side = t.side[s];
    side.run_n = count[s];
    side.got.assign(q, 0);
    side.has_pivot = L.sides == 2 && slot_pivot(t.slots_out, L, s, ctx, count[s], side.run_lo,
                                                &side.pivot, &side.pivot_pos);
  }
}

// With exact placement every member knows which of its positions each other member's run
// covers, so the receives are posted at once, from known sources, cut as the sender cuts
// (post_send), instead of probing for messages from any source as they come.
template <class T, class C, class B>
int post_side_receives(C& ctx, Task<T, B>& t, int tag, Side<T>& side) {
  const int q = B::size(t.comm), me = B::rank(t.comm);
  const std::int64_t end = side.lo + static_cast<std::int64_t>(side.buf.size());
  for (int i = 0; i < q; ++i) {
    const std::int64_t from = std::max(side.run_lo[i], side.lo);
    const std::int64_t to = std::min(side.run_lo[i] + side.run_n[i], end);
    if (i == me || from >= to) continue;
    const std::int64_t at = side.place_from(i, to - from);
    if (at < 0) return MPI_ERR_INTERN;  // members disagree on the layout: a bug
    int err = post_recv(ctx.b, &side.buf[at], (to - from) * static_cast<std::int64_t>(sizeof(T)), i,
                        tag, t.comm, ctx.max_chunk, t.reqs);
    if (err != MPI_SUCCESS) return err;
  }
  return MPI_SUCCESS;
}

template <class T, class C, class B>
int start_exchange(C& ctx, Task<T, B>& t) {
  const bool slots = !t.slots_out.empty();
  const SlotLayout L = split_layout(ctx, t.hi - t.lo, B::size(t.comm), sizeof(T));
  MemberCounts m;
  if (slots) {
    finish_slots(t, L);
    m = read_split_slots(t, L);
  } else {
    finish_prefix(t);
    t.small_before = t.pre_before;
    t.small_total = t.pre_total;
  }
  // The pivot was the smallest element: it moves alone to the left, so the group shrinks.
  // The runs are then not those the buffer describes: arrival order, and the children draw
  // their own samples.
  const bool pivot_alone = t.small_total == 0;
  if (pivot_alone) {
    t.small_total = 1;
    if (t.pivot_at >= 0) {
      std::swap(t.out[0], t.out[t.pivot_at]);
      t.small = 1;
    }
    t.small_before = t.pivot_pos < t.begin ? 1 : 0;
  }
  const std::int64_t mid = t.lo + t.small_total;
  if (slots && !pivot_alone) plan_sides(ctx, t, L, m, mid);
  std::vector<unsigned char>().swap(t.slots_in);
  std::vector<unsigned char>().swap(t.slots_out);
  t.side[0].lo = std::max(t.lo, ctx.layout.start(ctx.me));
  t.side[1].lo = std::max(mid, ctx.layout.start(ctx.me));
  t.side[0].buf.resize(ctx.layout.overlap(ctx.me, t.lo, mid));
  t.side[1].buf.resize(ctx.layout.overlap(ctx.me, mid, t.hi));
  const std::int64_t held = static_cast<std::int64_t>(t.out.size());
  const std::int64_t large_before = (t.begin - t.lo) - t.small_before;
  t.phase = Phase::exchange;
  if (!t.side[0].run_lo.empty()) {  // exact placement (plan_sides)
    int err = post_side_receives(ctx, t, kTagSmall, t.side[0]);
    if (err == MPI_SUCCESS) err = post_side_receives(ctx, t, kTagLarge, t.side[1]);
    if (err != MPI_SUCCESS) return err;
  }
  int err = send_run(ctx, t, 0, t.small, t.lo + t.small_before, kTagSmall, t.side[0]);
  if (err != MPI_SUCCESS) return err;
  return send_run(ctx, t, t.small, held - t.small, mid + large_before, kTagLarge, t.side[1]);
}

// Receives every message of `tag` that has arrived into its place in the side's buffer.
template <class T, class C, class B>
int receive_side(C& ctx, Task<T, B>& t, int tag, Side<T>& side) {
  while (!side.complete()) {
    bool found = false;
    int source = 0, bytes = 0;
    typename B::Message msg;
    int err = ctx.b.improbe_any(tag, t.comm, &found, &msg, &source, &bytes);
    if (err != MPI_SUCCESS) return err;
    if (!found) return MPI_SUCCESS;
    const std::int64_t n = bytes / static_cast<std::int64_t>(sizeof(T));
    const std::int64_t at = bytes % sizeof(T) == 0 ? side.place_from(source, n) : -1;
    if (at < 0) return MPI_ERR_TRUNCATE;  // cannot happen unless members disagree on the layout
    t.reqs.emplace_back();
    err = ctx.b.imrecv(&side.buf[at], bytes, &msg, &t.reqs.back());
    if (err != MPI_SUCCESS) return err;
  }
  return MPI_SUCCESS;
}

template <class T, class C, class B>
int poll_exchange(C& ctx, Task<T, B>& t, bool* done) {
  *done = false;
  int err = receive_side(ctx, t, kTagSmall, t.side[0]);
  if (err == MPI_SUCCESS) err = receive_side(ctx, t, kTagLarge, t.side[1]);
  if (err != MPI_SUCCESS) return err;
  bool all = false;
  err = test_all<B>(t.reqs, &all);
  *done = all && t.side[0].complete() && t.side[1].complete();
  if (*done) std::vector<T>().swap(t.out);
  return err;
}

}  // namespace rangecomm::jquick
