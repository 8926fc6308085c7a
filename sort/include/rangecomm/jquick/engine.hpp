// The driver of Janus Quicksort: runs the distributed levels of the (at most two) groups this
// process belongs to at the same time, turns finished levels into subgroups and base cases, then
// sorts the base cases and assembles this process's exact share of the output.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "rangecomm/jquick/base_case.hpp"
#include "rangecomm/jquick/first_level.hpp"
#include "rangecomm/jquick/level.hpp"
#include "rangecomm/jquick/local_sort.hpp"

namespace rangecomm::jquick {

template <class T, class Compare, class B>
class Engine {
 public:
  Engine(B& b, Compare comp, const JQuickOptions& opt) : ctx_(b, std::move(comp)) {
    ctx_.sp.per_log_p = std::max(0, opt.samples_per_log_p);
    ctx_.sp.elements_per_sample = std::max<std::int64_t>(1, opt.elements_per_sample);
    ctx_.sp.min = std::max(1, opt.samples_min);
    ctx_.sp.seed = static_cast<std::int64_t>(opt.seed);
    ctx_.max_chunk = chunk_limit(opt.max_message_bytes, sizeof(T));
    ctx_.slot_max = std::max(0, opt.slot_group_max);
    ctx_.slot_direct = std::max(0, opt.slot_direct_max);
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  ~Engine() = default;

  int run(std::vector<T>& data, MPI_Comm comm) {
    MPI_Comm_rank(comm, &ctx_.me);
    MPI_Comm_size(comm, &ctx_.p);
    if (ctx_.p == 1) {
      local_sort(data.begin(), data.end(), ctx_.comp);
      return MPI_SUCCESS;
    }
    double t0 = MPI_Wtime();
    int err = ctx_.b.attach(comm, &ctx_.top);
    ctx_.stats.create_seconds += MPI_Wtime() - t0;
    if (err == MPI_SUCCESS) err = start_root(data);
    if (err == MPI_SUCCESS) err = drive();
    if (err == MPI_SUCCESS) err = base_cases();
    if (err == MPI_SUCCESS) err = assemble(data);
    return err;
  }

  const JQuickStats& stats() const { return ctx_.stats; }

 private:
  using Ctx = Context<T, Compare, B>;
  using TaskT = Task<T, B>;

  int start_root(std::vector<T>& data) {
    if (ctx_.p == 2) return start_root_pair(data);
    auto t = std::make_unique<TaskT>();
    t->comm = ctx_.top;  // borrowed (attach), never freed
    t->owns_comm = false;
    t->data = std::move(data);
    data.clear();
    int err =
        B::size(t->comm) <= ctx_.slot_max ? start_first_level(ctx_, *t) : start_counts(ctx_, *t);
    tasks_.push_back(std::move(t));
    return err;
  }

  // Two processes sort as one two-process base case, without a level (which would partition,
  // exchange about half the elements and still end in a base case spanning both): one exchange
  // of counts and of rank 0's message size limit (both sides must cut messages alike), then
  // each sends all its elements and keeps its share of the selection.
  int start_root_pair(std::vector<T>& data) {
    const int partner = 1 - ctx_.me;
    std::int64_t mine[2] = {static_cast<std::int64_t>(data.size()), ctx_.max_chunk};
    std::int64_t theirs[2] = {0, 0};
    std::vector<typename B::Request> reqs;
    int err =
        post_recv(ctx_.b, theirs, sizeof theirs, partner, kTagPair, ctx_.top, sizeof theirs, reqs);
    if (err == MPI_SUCCESS)
      err = post_send(ctx_.b, mine, sizeof mine, partner, kTagPair, ctx_.top, sizeof mine, reqs,
                      &ctx_.stats.messages);
    if (err == MPI_SUCCESS) err = wait_all<B>(reqs);
    if (err != MPI_SUCCESS) return err;
    ctx_.max_chunk = ctx_.me == 0 ? mine[1] : theirs[1];
    const std::int64_t n = mine[0] + theirs[0];
    ctx_.layout = Layout(n, 2);
    if (n == 0) return MPI_SUCCESS;
    ++ctx_.stats.pair_cases;
    pairs_.push_back(std::make_unique<PairCase<T, B>>());
    start_pair(ctx_, *pairs_.back(), 0, n, Span{0, 1}, ctx_.layout.start(ctx_.me), std::move(data),
               theirs[0]);
    return MPI_SUCCESS;
  }

  // Idle rounds of drive() before it gives the core away in each further idle round. Yielding
  // at once made every wait a system call on top of the ones Open MPI makes itself when
  // oversubscribed (its tests yield when idle): 8 ranks on 2 cores sorted n/p = 1..64 in
  // 0.52-1.24 ms with 16-256 idle rounds first against 0.85-1.64 ms when yielding at once.
  // Never yielding starves the other ranks on MPICH, whose tests do not yield.
  static constexpr int kIdleRoundsBeforeYield = 64;

  // Distributed phase: progress every group of this process in turn, never waiting in one.
  int drive() {
    int idle = 0;  // rounds in a row in which no group moved
    while (!tasks_.empty()) {
      bool any = false;
      for (auto& t : tasks_) {
        bool progressed = false;
        int err = advance(*t, &progressed);
        if (err != MPI_SUCCESS) return err;
        any = any || progressed;
      }
      tasks_.erase(std::remove_if(tasks_.begin(), tasks_.end(),
                                  [](const auto& t) { return t->phase == Phase::done; }),
                   tasks_.end());
      for (auto& t : born_) tasks_.push_back(std::move(t));
      born_.clear();
      idle = any ? 0 : idle + 1;
      if (idle > kIdleRoundsBeforeYield) std::this_thread::yield();  // ranks may outnumber cores
    }
    return MPI_SUCCESS;
  }

  // Moves one group through every step whose operations have completed.
  int advance(TaskT& t, bool* progressed) {
    for (;;) {
      bool ready = false;
      int err = MPI_SUCCESS;
      switch (t.phase) {
        case Phase::counts:
          err = test_all<B>(t.reqs, &ready);
          if (err == MPI_SUCCESS && ready) err = finish_counts(t);
          break;
        case Phase::samples:
          err = test_all<B>(t.reqs, &ready);
          if (err == MPI_SUCCESS && ready) err = start_split_counts(ctx_, t);
          break;
        case Phase::split_counts:
          err = test_all<B>(t.reqs, &ready);
          if (err == MPI_SUCCESS && ready) err = start_exchange(ctx_, t);
          break;
        case Phase::exchange:
          err = poll_exchange(ctx_, t, &ready);
          if (err == MPI_SUCCESS && ready) err = finish_level(t);
          break;
        case Phase::done:
          return MPI_SUCCESS;
      }
      if (err != MPI_SUCCESS) return err;
      if (!ready) return MPI_SUCCESS;
      *progressed = true;
    }
  }

  int finish_counts(TaskT& t) {
    const bool fused = !t.slots_out.empty();
    if (fused) {
      finish_first_counts(t);
    } else {
      finish_prefix(t);
      t.count_before = t.pre_before;
      t.count_total = t.pre_total;
    }
    ctx_.sp = SampleParams{t.params[0], t.params[1], t.params[2], t.params[3]};
    ctx_.max_chunk = t.params[4];
    ctx_.layout = Layout(t.count_total, ctx_.p);
    t.lo = 0;
    t.hi = t.count_total;
    t.begin = t.count_before;
    if (t.count_total == 0) {
      t.phase = Phase::done;
      return MPI_SUCCESS;
    }
    note_level(t);
    return fused ? start_first_partition(ctx_, t) : start_samples(ctx_, t);
  }

  // Counts a level; it is a janus level when another group of this process is running too.
  void note_level(const TaskT& t) {
    auto other = [&](const auto& u) { return u.get() != &t && u->phase != Phase::done; };
    bool janus = std::any_of(tasks_.begin(), tasks_.end(), other) ||
                 std::any_of(born_.begin(), born_.end(), other);
    ++ctx_.stats.levels;
    if (janus) ++ctx_.stats.janus_levels;
    ctx_.stats.max_depth = std::max(ctx_.stats.max_depth, t.depth);
  }

  // The processes owning positions lo..hi-1, as a span of ranks of the attached communicator.
  Span owners(std::int64_t lo, std::int64_t hi) const {
    if (hi <= lo) return Span{};
    return Span{ctx_.layout.owner(lo), ctx_.layout.owner(hi - 1)};
  }

  // A level is done: create the subgroups that need a communicator, hand out this process's
  // shares, free the group's communicator.
  int finish_level(TaskT& t) {
    const std::int64_t mid = t.lo + t.small_total;
    Span lo_owners = owners(t.lo, mid), hi_owners = owners(mid, t.hi);
    auto needs_comm = [&](Span s) {
      return s.empty() || s.last - s.first < 2 ? Span{} : Span{s.first - t.first, s.last - t.first};
    };
    typename B::Comm lc, rc;
    double t0 = MPI_Wtime();
    int err = ctx_.b.split(t.comm, needs_comm(lo_owners), needs_comm(hi_owners), &lc, &rc);
    if (err == MPI_SUCCESS && t.owns_comm) err = B::free(&t.comm);
    ctx_.stats.create_seconds += MPI_Wtime() - t0;
    t.phase = Phase::done;
    if (err != MPI_SUCCESS) return err;
    if (lo_owners.contains(ctx_.me)) err = add_child(t, t.lo, mid, t.side[0], lc);
    if (err == MPI_SUCCESS && hi_owners.contains(ctx_.me))
      err = add_child(t, mid, t.hi, t.side[1], rc);
    return err;
  }

  // A child group on one side of a finished level, with this process's share of it.
  int add_child(const TaskT& parent, std::int64_t lo, std::int64_t hi, Side<T>& side,
                typename B::Comm& comm) {
    std::vector<T> share = std::move(side.buf);
    Span who = owners(lo, hi);
    std::int64_t mine_from = std::max(lo, ctx_.layout.start(ctx_.me));
    if (who.first == who.last) {
      pieces_.push_back(Piece<T>{mine_from, std::move(share), false});
      return MPI_SUCCESS;
    }
    if (who.last == who.first + 1) {
      ++ctx_.stats.pair_cases;
      auto pc = std::make_unique<PairCase<T, B>>();
      pairs_.push_back(std::move(pc));
      int partner = ctx_.me == who.first ? who.last : who.first;
      start_pair(ctx_, *pairs_.back(), lo, hi, who, mine_from, std::move(share),
                 ctx_.layout.overlap(partner, lo, hi));
      return MPI_SUCCESS;
    }
    auto t = std::make_unique<TaskT>();
    t->comm = comm;
    comm = typename B::Comm{};  // the child task owns it now
    t->first = who.first;
    t->depth = parent.depth + 1;
    t->lo = lo;
    t->hi = hi;
    t->begin = mine_from;
    t->data = std::move(share);
    note_level(*t);
    int err = MPI_SUCCESS;
    if (side.has_pivot) {  // the parent's split round carried this group's sample
      t->pivot = side.pivot;
      t->pivot_pos = side.pivot_pos;
      err = start_partition(ctx_, *t);
    } else {
      err = start_samples(ctx_, *t);
    }
    born_.push_back(std::move(t));
    return err;
  }

  // Base cases come after the distributed phase, so they never delay a larger group. The
  // two-process ones first, each sorted and sent before any is merged: a partner waits for this
  // process's half of the exchange, and sorting a one-process piece first would make it wait
  // that long too.
  int base_cases() {
    for (auto& pair : pairs_) {
      int err = begin_pair(ctx_, *pair);
      if (err != MPI_SUCCESS) return err;
    }
    for (auto& pair : pairs_) {
      int err = finish_pair(ctx_, *pair);
      if (err != MPI_SUCCESS) return err;
      pieces_.push_back(std::move(pair->result));
    }
    pairs_.clear();
    for (auto& pc : pieces_)
      if (!pc.sorted) local_sort(pc.data.begin(), pc.data.end(), ctx_.comp);
    return MPI_SUCCESS;
  }

  int assemble(std::vector<T>& data) {
    std::sort(pieces_.begin(), pieces_.end(),
              [](const Piece<T>& a, const Piece<T>& b) { return a.lo < b.lo; });
    std::int64_t pos = ctx_.layout.start(ctx_.me);
    data.clear();
    data.reserve(static_cast<std::size_t>(ctx_.layout.cap(ctx_.me)));
    for (auto& pc : pieces_) {
      if (pc.lo != pos) return MPI_ERR_INTERN;  // a hole or an overlap: a bug, never silent
      data.insert(data.end(), pc.data.begin(), pc.data.end());
      pos += static_cast<std::int64_t>(pc.data.size());
    }
    pieces_.clear();
    return pos == ctx_.layout.end(ctx_.me) ? MPI_SUCCESS : MPI_ERR_INTERN;
  }

  Ctx ctx_;
  std::vector<std::unique_ptr<TaskT>> tasks_, born_;
  std::vector<Piece<T>> pieces_;
  std::vector<std::unique_ptr<PairCase<T, B>>> pairs_;
};

}  // namespace rangecomm::jquick
