// The matching engine: receives that MPI cannot match by itself (wildcards, self-messages,
// receives queued behind them), messages taken out of MPI's queue, and their progress.
//
// Invariants (docs/tag-layout.md, "Matching"):
//  - no parked message and no queued self-message matches a receive waiting in the engine
//    (each is checked against the other when it arrives);
//  - while a range has receives in the engine, every new receive on it joins the engine queue,
//    so MPI's rule "the earliest posted matching receive wins" holds across both paths;
//  - parked messages are older than any message of the same sender still inside MPI, so every
//    receive looks at the parked queue before it asks MPI.
#pragma once

#include <mpi.h>

#include <list>
#include <memory>
#include <vector>

#include "comm/match_state.hpp"
#include "comm/range.hpp"
#include "engine/operation.hpp"
#include "engine/progress.hpp"
#include "rangecomm/request.hpp"
#include "util/type_facts.hpp"

namespace rangecomm::detail {

// Copies packed data whose type signature has `bytes` bytes into a receive buffer (as much as
// fits: MPI_ERR_TRUNCATE when it does not, naming the sender `from`); *received is the bytes
// taken.
int unpack_message(const char* packed, int packed_size, MPI_Count bytes, const char* from,
                   void* buf, int count, MPI_Datatype type, MPI_Count* received);
// Copies a packed self-message into a receive buffer and fills its status.
int unpack_self(const SelfMessage& m, int source, void* buf, int count, MPI_Datatype type,
                MPI_Status* status);
// Receives a parked message into a receive buffer: from MPI (with MPI_Imrecv when request is
// given, else MPI_Mrecv), or from the data that came with its sender's binding (then *request
// is MPI_REQUEST_NULL: the receive is complete).
int receive_parked(Parked& p, void* buf, int count, MPI_Datatype type, MPI_Request* request);

// A receive the engine matches: waiting -> receiving (MPI_Imrecv in flight) or done.
class RecvOp final : public Operation {
 public:
  RecvOp(std::shared_ptr<RangeState> range, void* buf, int count, MPI_Datatype type, int source,
         int tag);
  bool matches(int source, int tag) const {
    return (source_ == MPI_ANY_SOURCE || source_ == source) && (tag_ == MPI_ANY_TAG || tag_ == tag);
  }
  int source() const { return source_; }
  // Receives a message taken from MPI; source is a rank of the range.
  void start(MPI_Message* message, int source, int tag);
  // Receives a self-message (and completes a synchronous sender).
  void deliver_self(SelfMessage& m);
  bool test(MPI_Status* status, int* rc) override;
  void cancel() override;

 private:
  enum class State { waiting, receiving, done };
  std::shared_ptr<RangeState> range_;
  void* buf_;
  int count_;
  HeldType type_;  // the program may free its handle once the receive is posted
  int source_, tag_;
  State state_ = State::waiting;
  MPI_Request request_ = MPI_REQUEST_NULL;
  int matched_source_ = MPI_ANY_SOURCE, matched_tag_ = MPI_ANY_TAG;
  MPI_Status status_{};
  int rc_ = MPI_SUCCESS;
};

// A synchronous send to self: complete when a receive has taken the message.
class SelfSendOp final : public Operation {
 public:
  explicit SelfSendOp(std::shared_ptr<RangeState> range) : range_(std::move(range)) {}
  void matched() { matched_ = true; }
  bool test(MPI_Status* status, int* rc) override;
  void cancel() override;

 private:
  std::shared_ptr<RangeState> range_;
  bool matched_ = false;
  bool cancelled_ = false;
};

// Removes and returns (through *out) the oldest parked message of `range` from `root_source`
// (or any member, for MPI_ANY_SOURCE) with `payload` (or any, for MPI_ANY_TAG) and `kind`.
bool take_parked(RangeState& range, TagLayout::Kind kind, int root_source, int payload,
                 Parked* out);
// Same, without removing it.
const Parked* peek_parked(RangeState& range, TagLayout::Kind kind, int root_source, int payload);

// The oldest self-message with `tag` (or any), or end().
std::list<SelfMessage>::iterator find_self(MatchState& m, int tag);

// Queues a receive in the engine (taking a reference to op) and tries to match it at once.
void enqueue_recv(RangeState& range, RecvOp* op);
// Sends to self: delivers to the first waiting receive that matches, or queues the message.
// For synchronous sends *sync_op (if given) receives an operation that completes at the match.
int send_self(const std::shared_ptr<RangeState>& range, const void* buf, int count,
              MPI_Datatype type, int tag, bool synchronous, Operation** sync_op);

// Takes every message MPI has on the lanes that have receives waiting for the engine, matching
// or parking it (and taking in bindings and headers).
void poll_lanes();
// Takes every message MPI has on range's lane (where all its messages travel: for probes the
// engine must answer).
void poll_range_lane(RangeState& range);
// A receive outside the engine's queues (a collective's, waiting for its sender's binding)
// starts or stops needing the engine to take messages off range's lane.
void await_engine(RangeState& range);
void stop_awaiting_engine(RangeState& range);
// Waits (polling, giving the core away between polls) for the next message root rank `source`
// sent on `lane` and takes it as the engine takes messages (in the sender's order). For a
// blocking caller that needs that sender's binding and has nothing else to advance.
int take_next_from(Channel& channel, int lane, int source);

}  // namespace rangecomm::detail
