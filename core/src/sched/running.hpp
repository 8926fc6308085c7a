// What the schedule engine's operations share: the list of those every progress() call
// advances (running schedules, executor.cpp; relays, relay.cpp), and posting a collective's
// receive under its sender's slot or from the parked messages.
#pragma once

#include <mpi.h>

#include "comm/range.hpp"
#include "engine/operation.hpp"
#include "sched/schedule.hpp"
#include "util/block_stack.hpp"

namespace rangecomm::detail {

// A nonblocking collective the schedule engine runs, advanced by test() on its request and,
// while listed, by every progress() call. Complete, it reports rc_ with an empty status.
class RunningOp : public Operation {
 public:
  // Advances the operation without blocking; true once it is complete (then rc_ is its result).
  virtual bool advance() = 0;
  // Lists the operation, with a reference of the list's own: every progress() call advances it
  // until it completes. For one that advance() did not complete when it was started.
  void keep_running();

  bool test(MPI_Status* status, int* rc) final;
  void cancel() final {}  // MPI: collectives cannot be cancelled

 protected:
  int rc_ = MPI_SUCCESS;

 private:
  // Drops an operation completed through its request from the list at once, as the next
  // progress call would: while it is listed the engine counts as busy, which sends every later
  // blocking call of this process (a collective's Runner, a Wait inside MPI) down its slower
  // polling path (2 ranks: a 4-byte Gather after an Ibcast took 0.20 us instead of 0.14). Not
  // while the list is being swept: a user-defined operation the sweep runs could complete a
  // request.
  void leave_running();
};

// post_recv: the sender's binding has not arrived yet, so the receive cannot be posted.
constexpr int kDeferred = -1;

// Posts the receive step s of the collective with sequence number seq: from the parked messages
// if the matching engine took its message out of MPI (*req is then MPI's request for the rest,
// or MPI_REQUEST_NULL when the message is in), else under its sender's slot; kDeferred, taking
// nothing, when that slot is not known yet.
int post_recv(const Step& s, RangeState& range, int seq, MPI_Request* req);

// Cancels and releases whatever is still posted, so nothing of a failed collective lingers.
void release_posted(MPI_Request* requests, int count);

}  // namespace rangecomm::detail
