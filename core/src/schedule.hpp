// The schedule engine: a collective is data — rounds of sends, receives and local operations —
// and one engine runs every schedule (paper 004, LibNBC). Blocking collectives are the same
// schedules run to completion.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "operation.hpp"
#include "range.hpp"

namespace rangecomm::detail {

// A schedule for one process: steps grouped into rounds. A round starts when everything of
// the previous round has completed; it runs its local steps first, in order, then posts its
// sends and receives. Peers are ranks of the range; algorithms never send to themselves (they
// copy instead).
class Schedule {
 public:
  struct Step {
    enum class Kind : unsigned char { send, recv, copy, reduce } kind;
    int peer;                // send/recv: rank in the range
    const void* in;          // send buffer, copy/reduce source
    void* out;               // recv buffer, copy/reduce destination
    int count;
    MPI_Datatype type;
    int out_count;           // copy: elements of out_type
    MPI_Datatype out_type;   // copy: destination type (may differ from type)
    MPI_Op op;               // reduce: out = in op out
  };

  void send(const void* buf, int count, MPI_Datatype type, int peer);
  void recv(void* buf, int count, MPI_Datatype type, int peer);
  // out := in (same type signature, possibly different types on each side)
  void copy(const void* in, int in_count, MPI_Datatype in_type, void* out, int out_count,
            MPI_Datatype out_type);
  // out := in op out (MPI_Reduce_local), so `in` holds the lower ranks' contribution.
  void reduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op);
  // Later steps wait for everything so far. A trailing or repeated call adds nothing.
  void end_round();

  // Scratch memory owned by the schedule, laid out for `count` elements of `type` (the returned
  // pointer is what MPI calls take as the buffer address).
  void* scratch(int count, MPI_Datatype type);

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
  size_t scratch_capacity() const;

  size_t rounds() const { return round_ends_.size(); }
  // Steps of round r: [begin, end).
  const Step* round_begin(size_t r) const { return steps_.data() + (r ? round_ends_[r - 1] : 0); }
  const Step* round_end(size_t r) const { return steps_.data() + round_ends_[r]; }
  void close() { end_round(); }

 private:
  std::vector<Step> steps_;
  std::vector<size_t> round_ends_;
  struct Block {
    std::unique_ptr<char[]> bytes;
    size_t capacity;
  };
  std::vector<Block> scratch_;  // blocks [0, scratch_used_) belong to this use of the schedule
  size_t scratch_used_ = 0;
  std::vector<std::pair<MPI_Datatype, MPI_Datatype>> held_;  // (user's type, our duplicate)
  std::vector<MPI_Op> held_ops_;
};

using SchedulePtr = std::unique_ptr<Schedule, Schedule::Recycle>;

// An empty schedule, from a pool: building one for every small collective costs no allocation
// once the pool is warm.
SchedulePtr new_schedule();

// Runs a schedule on a range as one nonblocking operation, with the range's next collective
// sequence number. On success *op is the started operation (one reference for the caller); the
// engine advances it in every progress call until it completes.
int start_schedule(const std::shared_ptr<RangeState>& range, SchedulePtr schedule,
                   Operation** op);

// Runs a schedule to completion inside MPI's own blocking calls. Only valid while nothing else
// of the library needs progress and no other thread shares the library (!engine_busy()): then blocking in MPI cannot stall another
// operation of this process, and MPI may wait the way it likes (yield, sleep).
int run_schedule_blocking(RangeState& range, Schedule& schedule);

// The next collective sequence number of a range (every member calls collectives in the same
// order, so they agree without talking).
int next_collective_tag(RangeState& range);

// Copies count elements of in_type at in to out_count elements of out_type at out (equal type
// signatures); a plain memcpy when both are the same contiguous type.
int local_copy(const void* in, int in_count, MPI_Datatype in_type, void* out, int out_count,
               MPI_Datatype out_type);

// If a running schedule uses the user-defined operation op, takes over freeing it: MPI_Op_free
// is called when the last such schedule ends, and true is returned. Otherwise returns false.
bool defer_op_free(MPI_Op op);

// Whether op is commutative (predefined ops are).
bool commutative(MPI_Op op);

}  // namespace rangecomm::detail
