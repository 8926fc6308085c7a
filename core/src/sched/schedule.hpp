// The schedule engine: a collective is data — rounds of sends, receives and local operations —
// and one engine runs every schedule (paper 004, LibNBC). Blocking collectives are the same
// schedules run to completion.
// Schedules are built in schedule.cpp and run in executor.cpp (with the Runner); user_ops.cpp
// keeps the user-defined operations of running schedules alive.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "comm/range.hpp"
#include "engine/operation.hpp"
#include "engine/progress.hpp"
#include "rangecomm/request.hpp"
#include "util/type_facts.hpp"

namespace rangecomm::detail {

// One step of a collective's algorithm for one process.
struct Step {
  enum class Kind : unsigned char { send, recv, copy, reduce } kind;
  int peer;        // send/recv: rank in the range
  const void* in;  // send buffer, copy/reduce source
  void* out;       // recv buffer, copy/reduce destination
  int count;
  MPI_Datatype type;
  int out_count;          // copy: elements of out_type
  MPI_Datatype out_type;  // copy: destination type (may differ from type)
  MPI_Op op;              // reduce: out = in op out
};

// A send or receive step (for Schedule and Runner alike). Inline, so that a step is built where
// it is stored instead of returned through memory and copied from there.
inline Step send_step(const void* buf, int count, MPI_Datatype type, int peer) {
  return {Step::Kind::send, peer, buf, nullptr, count, type, 0, MPI_DATATYPE_NULL, MPI_OP_NULL};
}
inline Step recv_step(void* buf, int count, MPI_Datatype type, int peer) {
  return {Step::Kind::recv, peer, nullptr, buf, count, type, 0, MPI_DATATYPE_NULL, MPI_OP_NULL};
}

// What a collective's algorithm writes: steps grouped into rounds. A round starts when
// everything of the previous round has completed; it runs its local steps first, in order, then
// posts its sends and receives. Peers are ranks of the range; algorithms never send to
// themselves (they copy instead). A Schedule records the steps to run them later (nonblocking
// collectives, and blocking ones while other operations need progress); a Runner carries them
// out as they are written (blocking collectives otherwise), which saves recording them.
class Plan {
 public:
  virtual void send(const void* buf, int count, MPI_Datatype type, int peer) = 0;
  virtual void recv(void* buf, int count, MPI_Datatype type, int peer) = 0;
  // out := in (same type signature, possibly different types on each side)
  virtual void copy(const void* in, int in_count, MPI_Datatype in_type, void* out, int out_count,
                    MPI_Datatype out_type) = 0;
  // out := in op out (MPI_Reduce_local), so `in` holds the lower ranks' contribution.
  virtual void reduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op) = 0;
  // Later steps wait for everything so far. A trailing or repeated call adds nothing.
  virtual void end_round() = 0;
  // Scratch memory for the collective, laid out for `count` elements of `type` (the returned
  // pointer is what MPI calls take as the buffer address). It lives until the collective ends.
  virtual void* scratch(int count, MPI_Datatype type) = 0;

 protected:
  ~Plan() = default;
};

// Scratch blocks handed out one collective at a time and kept for the next (no allocation once
// warm).
class ScratchBlocks {
 public:
  void* get(int count, MPI_Datatype type);
  // Every block is free again (the memory is kept).
  void release() { used_ = 0; }
  size_t capacity() const;

 private:
  struct Block {
    std::unique_ptr<char[]> bytes;
    size_t capacity;
  };
  std::vector<Block> blocks_;  // [0, used_) are in use
  size_t used_ = 0;
};

// A recorded plan, run by the engine.
class Schedule final : public Plan {
 public:
  void send(const void* buf, int count, MPI_Datatype type, int peer) override;
  void recv(void* buf, int count, MPI_Datatype type, int peer) override;
  void copy(const void* in, int in_count, MPI_Datatype in_type, void* out, int out_count,
            MPI_Datatype out_type) override;
  void reduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op) override;
  void end_round() override;
  void* scratch(int count, MPI_Datatype type) override { return scratch_.get(count, type); }

  // Duplicates every derived datatype the steps use and switches the steps to the duplicates,
  // so the user may free a type while the nonblocking collective is pending (MPI allows it).
  // The duplicates are freed with the schedule.
  int hold_datatypes();
  // Counts the user-defined operations the steps use as in use until the schedule is reset, so
  // that Defer_op_free (rangecomm/embedding.hpp) can keep them alive while it runs.
  void hold_ops();
  ~Schedule();

  // Empties the schedule for reuse, keeping its memory (steps and scratch blocks).
  void reset();
  // Returns a schedule to the pool new_schedule() takes from.
  struct Recycle {
    void operator()(Schedule* s) const;
  };

  // Bytes of scratch memory the schedule keeps (in use or not).
  size_t scratch_capacity() const { return scratch_.capacity(); }

  // The working space of a run (the engine's): the current round's posted requests and its
  // receives waiting for a binding. Kept with the pooled schedule, so that running a warm
  // nonblocking collective allocates none; empty whenever the schedule is not running.
  std::vector<MPI_Request>& requests() { return requests_; }
  std::vector<const Step*>& deferred() { return deferred_; }

  size_t rounds() const { return round_ends_.size(); }
  // Steps of round r: [begin, end).
  const Step* round_begin(size_t r) const { return steps_.data() + (r ? round_ends_[r - 1] : 0); }
  const Step* round_end(size_t r) const { return steps_.data() + round_ends_[r]; }
  void close() { end_round(); }

 private:
  std::vector<Step> steps_;
  std::vector<size_t> round_ends_;
  ScratchBlocks scratch_;
  std::vector<std::pair<MPI_Datatype, MPI_Datatype>> held_;  // (user's type, our duplicate)
  std::vector<MPI_Op> held_ops_;
  std::vector<MPI_Request> requests_;
  std::vector<const Step*> deferred_;
};

// Whether a Runner is at work (there is at most one).
extern bool g_runner_active;

// Carries out a blocking collective as its algorithm writes it: local steps at once, a round's
// sends and receives when the round ends (where a Schedule would post them: after the round's
// local steps), waiting for them inside MPI's own blocking calls. After a failed step the rest
// is skipped. Only while available().
class Runner final : public Plan {
 public:
  // Whether a blocking collective may run this way now: nothing else of the library needs
  // progress and no other thread shares the library (!engine_busy()), so that blocking in MPI
  // cannot stall another operation of this process and MPI may wait the way it likes (yield,
  // sleep); and no other Runner is at work (a user-defined operation could call a collective).
  static bool available() { return !g_runner_active && !engine_busy(); }
  // Takes the range's next collective sequence number.
  explicit Runner(RangeState& range);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  void send(const void* buf, int count, MPI_Datatype type, int peer) override;
  void recv(void* buf, int count, MPI_Datatype type, int peer) override;
  void copy(const void* in, int in_count, MPI_Datatype in_type, void* out, int out_count,
            MPI_Datatype out_type) override;
  void reduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op) override;
  void end_round() override;
  void* scratch(int count, MPI_Datatype type) override;

  // Ends the last round; MPI_SUCCESS or the error of the step that failed.
  int finish();

 private:
  RangeState& range_;
  int seq_;  // the collective's sequence number, the payload of its tags
  int rc_ = MPI_SUCCESS;
};

using SchedulePtr = std::unique_ptr<Schedule, Schedule::Recycle>;

// An empty schedule, from a pool: building one for every small collective costs no allocation
// once the pool is warm.
SchedulePtr new_schedule();

// Runs a schedule on a range as one nonblocking operation, with the range's next collective
// sequence number. On success *op is the started operation (one reference for the caller); the
// engine advances it in every progress call until it completes.
int start_schedule(const std::shared_ptr<RangeState>& range, SchedulePtr schedule, Operation** op);

// When the schedule is a single send or receive for this process (a leaf of a tree, the root of
// a tree over two processes), posts it as a schedule's round would (a parked message taken in,
// a binding sent first or with the data) under the range's next collective sequence number and
// returns true: *native is MPI's request (MPI_REQUEST_NULL when the message is already in or
// out), *is_recv its direction, *rc the result of posting it. Returns false, taking nothing,
// for any other schedule, for a receive whose sender's binding has not arrived (that needs
// the engine), and under Set_background_progress.
bool start_single_native(RangeState& range, Schedule& schedule, MPI_Request* native, bool* is_recv,
                         int* rc);

// A relay: one message received from range rank `from` (-1: this process holds it already),
// then sent on to each of the ranks to[0 .. n) in that order, under the range's next collective
// sequence number, straight on MPI's requests without a schedule (a binomial tree broadcast of
// one message per edge, nonblocking). Only for a predefined datatype (the sends are posted
// after the call returns, when the caller may have freed a derived one). When every send's
// peer has its binding and the receive can be posted now (its sender's slot is known, or its
// message was parked), starts it and returns true: *request is MPI's own request when the
// relay is a single message, an operation the engine advances otherwise, and *rc the result
// of posting (on failure *request is left alone). Otherwise returns false, taking nothing.
constexpr int kMaxRelayTargets = 31;  // a binomial tree's children on up to 2^31 processes
bool start_relay(const std::shared_ptr<RangeState>& range, void* buf, int count, MPI_Datatype type,
                 int from, const int* to, int n, Request* request, int* rc);

// The number next_collective_seq will give, without taking it.
inline int peek_collective_seq(const RangeState& range) {
  return static_cast<int>(range.coll_seq & TagLayout::max_payload);
}
// The next collective sequence number of a range (every member calls collectives in the same
// order, so they agree without talking).
inline int next_collective_seq(RangeState& range) {
  const int seq = peek_collective_seq(range);
  ++range.coll_seq;
  return seq;
}

// local_copy for any pair of types with the same signature: through MPI's self-communication.
int local_copy_through_mpi(const void* in, int in_count, MPI_Datatype in_type, void* out,
                           int out_count, MPI_Datatype out_type);
// local_copy with out_type's facts at hand (in_type's too when the two are the same type, the
// only case that uses them).
inline int local_copy(const void* in, int in_count, MPI_Datatype in_type, void* out, int out_count,
                      MPI_Datatype out_type, const TypeFacts& out_facts) {
  if (in_count == 0 || (in == out && in_type == out_type)) return MPI_SUCCESS;
  if (in_type == out_type && in_count <= out_count && out_facts.contiguous()) {
    std::memmove(out, in, static_cast<size_t>(out_facts.size) * static_cast<size_t>(in_count));
    return MPI_SUCCESS;
  }
  return local_copy_through_mpi(in, in_count, in_type, out, out_count, out_type);
}
// Copies count elements of in_type at in to out_count elements of out_type at out (equal type
// signatures); a plain memmove when both are the same contiguous type. The same buffer and type
// is nothing to copy; the same address with other types is not (MPI_BOTTOM with absolute-address
// types describes different memory).
inline int local_copy(const void* in, int in_count, MPI_Datatype in_type, void* out, int out_count,
                      MPI_Datatype out_type) {
  if (in_count == 0 || (in == out && in_type == out_type)) return MPI_SUCCESS;
  return local_copy(in, in_count, in_type, out, out_count, out_type, type_facts(out_type));
}

// If a running schedule uses the user-defined operation op, takes over freeing it: MPI_Op_free
// is called when the last such schedule ends, and true is returned. Otherwise returns false.
bool defer_op_free(MPI_Op op);

// Ends one schedule's use of op (counted by Schedule::hold_ops; nothing for any other op): when
// it was the last and its MPI_Op_free was deferred, frees it.
void release_op(MPI_Op op);

// Whether op is commutative (predefined ops are).
bool commutative(MPI_Op op);

}  // namespace rangecomm::detail
