// Running schedules: posting a round's sends and receives (under the peers' slots, or from
// parked messages), the nonblocking operation that advances a started schedule in every
// progress() call, and the blocking Runner that carries a plan out inside MPI's blocking calls.
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "engine/progress.hpp"
#include "p2p/matching.hpp"
#include "sched/running.hpp"
#include "sched/schedule.hpp"
#include "util/block_stack.hpp"
#include "util/reduce_local.hpp"
#include "util/status.hpp"
#include "util/type_facts.hpp"

namespace rangecomm::detail {

int local_copy_through_mpi(const void* in, int in_count, MPI_Datatype in_type, void* out,
                           int out_count, MPI_Datatype out_type) {
  return MPI_Sendrecv(in, in_count, in_type, 0, 0, out, out_count, out_type, 0, 0, MPI_COMM_SELF,
                      MPI_STATUS_IGNORE);
}

int post_recv(const Step& s, RangeState& range, int seq, MPI_Request* req) {
  int root_source = range.to_root(s.peer);
  Parked p;
  if (take_parked(range, TagLayout::collective, root_source, seq, &p))
    return receive_parked(p, s.out, s.count, s.type, req);
  int slot = peer_slot(range, s.peer);
  if (slot < 0) return kDeferred;
  MPI_Comm lane;
  int tag;
  receive_envelope(range, slot, TagLayout::collective, seq, &lane, &tag);
  return MPI_Irecv(s.out, s.count, s.type, root_source, tag, lane, req);
}

void release_posted(MPI_Request* requests, int count) {
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&requests[i]);
    MPI_Request_free(&requests[i]);
  }
}

namespace {

// The lane and tag of a collective step's send (after a binding or header it needs), or *sent
// when the step's first message to its peer went inside the binding.
int send_envelope(RangeState& range, const Step& s, int seq, MPI_Comm* lane, int* tag, bool* sent) {
  *sent = false;
  if (fast_send_envelope(range, s.peer, TagLayout::collective, seq, lane, tag)) return MPI_SUCCESS;
  int rc = send_with_binding(range, s.peer, seq, s.in, s.count, s.type, sent);
  if (rc != MPI_SUCCESS || *sent) return rc;
  return prepare_send(range, s.peer, TagLayout::collective, seq, lane, tag);
}

// Runs the local steps of [begin, end) in order.
int run_local_steps(const Step* begin, const Step* end) {
  for (const auto* s = begin; s != end; ++s) {
    int rc = MPI_SUCCESS;
    if (s->kind == Step::Kind::copy)
      rc = local_copy(s->in, s->count, s->type, s->out, s->out_count, s->out_type);
    else if (s->kind == Step::Kind::reduce)
      rc = reduce_local(s->in, s->out, s->count, s->type, s->op);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

// Posts the sends and receives of [begin, end) (local steps are skipped), appended to
// *requests; receives whose sender's binding has not arrived are appended to *deferred (and
// the channel's engine told to take messages out of MPI until they are posted). Receives
// first: a message that finds its receive posted is copied once, not parked in the unexpected
// queue (the order among receives, and among sends, is kept).
int post_transfers(const Step* begin, const Step* end, RangeState& range, int seq,
                   std::vector<MPI_Request>* requests, std::vector<const Step*>* deferred) {
  for (const auto* s = begin; s != end; ++s) {
    if (s->kind != Step::Kind::recv) continue;
    requests->push_back(MPI_REQUEST_NULL);
    int rc = post_recv(*s, range, seq, &requests->back());
    if (rc == kDeferred) {
      requests->pop_back();
      deferred->push_back(s);
      await_engine(range);
    } else if (rc != MPI_SUCCESS) {
      return rc;
    }
  }
  for (const auto* s = begin; s != end; ++s) {
    if (s->kind != Step::Kind::send) continue;
    MPI_Comm lane;
    int tag;
    bool sent = false;
    if (int rc = send_envelope(range, *s, seq, &lane, &tag, &sent)) return rc;
    if (sent) continue;
    requests->push_back(MPI_REQUEST_NULL);
    int rc =
        MPI_Isend(s->in, s->count, s->type, range.to_root(s->peer), tag, lane, &requests->back());
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

// Posts the deferred receives whose sender's binding (or message) has arrived since, appended
// to *requests, in their order: two receives from one sender in one round (a block sent in two
// pieces) match its messages in the order they were posted. Returns an error code, leaving the
// others in *deferred.
int post_deferred(RangeState& range, int seq, std::vector<MPI_Request>* requests,
                  std::vector<const Step*>* deferred) {
  size_t kept = 0;
  int rc = MPI_SUCCESS;
  for (size_t i = 0; i < deferred->size(); ++i) {
    MPI_Request req = MPI_REQUEST_NULL;
    int posted = rc == MPI_SUCCESS ? post_recv(*(*deferred)[i], range, seq, &req) : kDeferred;
    if (posted == kDeferred) {
      (*deferred)[kept++] = (*deferred)[i];
      continue;
    }
    stop_awaiting_engine(range);
    if (posted == MPI_SUCCESS)
      requests->push_back(req);
    else
      rc = posted;
  }
  deferred->resize(kept);
  return rc;
}

// Forgets deferred receives (a failed collective).
void drop_deferred(RangeState& range, std::vector<const Step*>* deferred) {
  for (size_t i = 0; i < deferred->size(); ++i) stop_awaiting_engine(range);
  deferred->clear();
}

// Starts the round [begin, end): its local steps in order, then its sends and receives,
// appended to *requests.
int post_round(const Step* begin, const Step* end, RangeState& range, int seq,
               std::vector<MPI_Request>* requests, std::vector<const Step*>* deferred) {
  if (int rc = run_local_steps(begin, end); rc != MPI_SUCCESS) return rc;
  return post_transfers(begin, end, range, seq, requests, deferred);
}

// Runs the transfers [begin, end) to completion when they are exactly one message (the rounds of
// binomial trees and chains) or one message each way with peers (recursive doubling and
// halving, Bruck, dissemination): a blocking send, receive or MPI_Sendrecv waits exactly as
// Isend/Irecv plus Waitall would, for about half the instructions. Returns false, doing nothing,
// otherwise (also when the receive's sender has not bound its slot yet).
bool run_single_transfers(const Step* begin, const Step* end, RangeState& range, int seq, int* rc) {
  const Step* send = nullptr;
  const Step* recv = nullptr;
  if (end - begin > 2) return false;
  for (const auto* s = begin; s != end; ++s) {
    const Step*& slot = s->kind == Step::Kind::send ? send : recv;
    if (slot != nullptr) return false;
    slot = s;
  }
  if (send == nullptr && recv == nullptr) return false;
  int from = recv != nullptr ? range.to_root(recv->peer) : MPI_PROC_NULL;
  Parked p;
  bool parked = recv != nullptr && take_parked(range, TagLayout::collective, from, seq, &p);
  MPI_Comm recv_lane = MPI_COMM_NULL;
  int recv_tag = 0;
  if (recv != nullptr && !parked) {
    int slot = peer_slot(range, recv->peer);
    if (slot < 0) return false;
    receive_envelope(range, slot, TagLayout::collective, seq, &recv_lane, &recv_tag);
  }
  MPI_Comm send_lane = MPI_COMM_NULL;
  int send_tag = 0, to = MPI_PROC_NULL;
  if (send != nullptr) {
    to = range.to_root(send->peer);
    bool sent = false;
    if ((*rc = send_envelope(range, *send, seq, &send_lane, &send_tag, &sent))) {
      if (parked) receive_parked(p, recv->out, recv->count, recv->type, nullptr);
      return true;
    }
    if (sent) send = nullptr;  // it went with the binding
  }
  if (parked) {
    // MPI no longer holds this message (a wildcard probe took it, or it came with its sender's
    // binding), so MPI_Sendrecv cannot receive it: receive it first (it needs nothing more of
    // its sender than progress, which a sender blocked in its own round makes), then send.
    *rc = receive_parked(p, recv->out, recv->count, recv->type, nullptr);
    if (*rc == MPI_SUCCESS && send != nullptr)
      *rc = MPI_Send(send->in, send->count, send->type, to, send_tag, send_lane);
  } else if (send != nullptr && recv != nullptr && send_lane == recv_lane) {
    *rc = MPI_Sendrecv(send->in, send->count, send->type, to, send_tag, recv->out, recv->count,
                       recv->type, from, recv_tag, send_lane, MPI_STATUS_IGNORE);
  } else if (send != nullptr && recv != nullptr) {  // the two slots are on different lanes
    MPI_Request r;
    *rc = MPI_Irecv(recv->out, recv->count, recv->type, from, recv_tag, recv_lane, &r);
    if (*rc != MPI_SUCCESS) return true;
    *rc = MPI_Send(send->in, send->count, send->type, to, send_tag, send_lane);
    int wait_rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (*rc == MPI_SUCCESS) *rc = wait_rc;
  } else if (send != nullptr) {
    *rc = MPI_Send(send->in, send->count, send->type, to, send_tag, send_lane);
  } else if (recv != nullptr) {
    *rc =
        MPI_Recv(recv->out, recv->count, recv->type, from, recv_tag, recv_lane, MPI_STATUS_IGNORE);
  }
  return true;
}

void release_posted(std::vector<MPI_Request>* requests) {
  detail::release_posted(requests->data(), static_cast<int>(requests->size()));
  requests->clear();
}

}  // namespace

namespace {
// Each holds a reference. Never destroyed, so that operations still listed at exit (finished
// ones wait for the next progress call) stay reachable rather than leaked.
std::vector<RunningOp*>& g_running = *new std::vector<RunningOp*>;
bool g_sweeping_running = false;
}  // namespace

void RunningOp::keep_running() {
  ref();
  g_running.push_back(this);
  ++g_progress_needed;
}

bool RunningOp::test(MPI_Status* status, int* rc) {
  if (!advance()) return false;
  leave_running();
  set_empty_status(status);
  *rc = rc_;
  return true;
}

void RunningOp::leave_running() {
  if (g_sweeping_running) return;
  auto it = std::find(g_running.begin(), g_running.end(), this);
  if (it == g_running.end()) return;
  *it = g_running.back();
  g_running.pop_back();
  --g_progress_needed;
  unref();  // the list's reference; the request still holds its own
}

namespace {

// A running schedule. A process runs few collectives at once: a warm nonblocking collective
// calls the allocator for neither its operation (Recycled) nor its schedule (the pool).
class CollectiveOp final : public RunningOp, public Recycled<CollectiveOp, 16> {
 public:
  CollectiveOp(std::shared_ptr<RangeState> range, SchedulePtr s)
      : range_(std::move(range)), schedule_(std::move(s)), seq_(next_collective_seq(*range_)) {}

  bool advance() override;

 private:
  int start_round(size_t r);
  void fail(int rc);

  // The round's posted requests and its receives waiting for their sender's binding, kept in
  // the schedule (valid until it is released at completion).
  std::vector<MPI_Request>& requests() { return schedule_->requests(); }
  std::vector<const Step*>& deferred() { return schedule_->deferred(); }

  std::shared_ptr<RangeState> range_;
  SchedulePtr schedule_;
  int seq_;
  size_t next_round_ = 0;
  bool done_ = false;
};

bool CollectiveOp::advance() {
  while (!done_) {
    if (!deferred().empty()) {
      poll_range_lane(*range_);
      if (int rc = post_deferred(*range_, seq_, &requests(), &deferred())) {
        fail(rc);
        break;
      }
    }
    if (!requests().empty()) {
      int flag = 0;
      int rc = MPI_Testall(static_cast<int>(requests().size()), requests().data(), &flag,
                           MPI_STATUSES_IGNORE);
      if (rc != MPI_SUCCESS) {
        fail(rc);
        break;
      }
      if (!flag) return false;
      requests().clear();
    }
    if (!deferred().empty()) return false;
    if (next_round_ == schedule_->rounds()) {
      done_ = true;
      break;
    }
    int rc = start_round(next_round_++);
    if (rc != MPI_SUCCESS) fail(rc);
  }
  // Scratch memory and the range go as soon as the collective is over: a completed collective
  // must not keep a freed communicator registered.
  schedule_.reset();
  range_.reset();
  return true;
}

// Ends the collective with an error: whatever is still posted is cancelled and released, so
// nothing of it lingers in MPI.
void CollectiveOp::fail(int rc) {
  release_posted(&requests());
  drop_deferred(*range_, &deferred());
  rc_ = rc;
  done_ = true;
}

int CollectiveOp::start_round(size_t r) {
  rc_ = post_round(schedule_->round_begin(r), schedule_->round_end(r), *range_, seq_, &requests(),
                   &deferred());
  return rc_;
}

}  // namespace

bool start_single_native(RangeState& range, Schedule& schedule, MPI_Request* native, bool* is_recv,
                         int* rc) {
  schedule.close();
  if (g_background_progress) return false;  // the progress agent moves only its own operations
  if (schedule.rounds() != 1 || schedule.round_end(0) - schedule.round_begin(0) != 1) return false;
  const Step& s = *schedule.round_begin(0);
  if (s.kind != Step::Kind::send && s.kind != Step::Kind::recv) return false;
  // The sequence number next_collective_seq gives, taken only once the step is posted.
  const int seq = peek_collective_seq(range);
  *native = MPI_REQUEST_NULL;  // stays null for a message already taken in or sent
  *is_recv = s.kind == Step::Kind::recv;
  if (*is_recv) {
    *rc = post_recv(s, range, seq, native);
    if (*rc == kDeferred) return false;  // the engine must wait for the sender's binding
  } else {
    MPI_Comm lane = MPI_COMM_NULL;
    int tag = 0;
    bool sent = false;
    *rc = send_envelope(range, s, seq, &lane, &tag, &sent);
    if (*rc == MPI_SUCCESS && !sent)
      *rc = MPI_Isend(s.in, s.count, s.type, range.to_root(s.peer), tag, lane, native);
  }
  next_collective_seq(range);
  return true;
}

int start_schedule(const std::shared_ptr<RangeState>& range, SchedulePtr schedule, Operation** op) {
  schedule->close();
  int rc = schedule->hold_datatypes();
  if (rc != MPI_SUCCESS) return rc;
  schedule->hold_ops();
  auto* c = new CollectiveOp(range, std::move(schedule));
  if (!c->advance()) c->keep_running();
  *op = c;
  return MPI_SUCCESS;
}

namespace {

// Runs the transfers [begin, end) (sends and receives only) to completion inside MPI's blocking
// calls; on failure nothing of them stays posted.
int run_transfers_blocking(const Step* begin, const Step* end, RangeState& range, int seq) {
  int rc = MPI_SUCCESS;
  if (run_single_transfers(begin, end, range, seq, &rc)) return rc;
  // Reused between calls: a blocking collective allocates nothing once warm.
  static std::vector<MPI_Request>& requests = *new std::vector<MPI_Request>;
  static std::vector<const Step*>& deferred = *new std::vector<const Step*>;
  rc = post_transfers(begin, end, range, seq, &requests, &deferred);
  // Receives from senders whose binding has not arrived: wait inside MPI for the first such
  // sender's next message on the communicator's lane and take it in (this round's own sends are
  // posted and move meanwhile), until each receive can be posted.
  while (rc == MPI_SUCCESS && !deferred.empty()) {
    rc = take_next_from(*range.channel, comm_lane(range), range.to_root(deferred.front()->peer));
    if (rc == MPI_SUCCESS) rc = post_deferred(range, seq, &requests, &deferred);
  }
  drop_deferred(range, &deferred);
  if (rc == MPI_SUCCESS && !requests.empty())
    rc = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) release_posted(&requests);
  requests.clear();
  return rc;
}

}  // namespace

bool g_runner_active = false;

namespace {
// The Runner's round of sends and receives, and its scratch memory; kept between collectives so
// that a warm blocking collective allocates nothing.
std::vector<Step>& g_runner_round = *new std::vector<Step>;
ScratchBlocks& g_runner_scratch = *new ScratchBlocks;
}  // namespace

Runner::Runner(RangeState& range) : range_(range), seq_(next_collective_seq(range)) {
  g_runner_active = true;
}

Runner::~Runner() {
  g_runner_round.clear();
  g_runner_scratch.release();
  g_runner_active = false;
}

void Runner::send(const void* buf, int count, MPI_Datatype type, int peer) {
  g_runner_round.push_back(send_step(buf, count, type, peer));
}

void Runner::recv(void* buf, int count, MPI_Datatype type, int peer) {
  g_runner_round.push_back(recv_step(buf, count, type, peer));
}

void Runner::copy(const void* in, int in_count, MPI_Datatype in_type, void* out, int out_count,
                  MPI_Datatype out_type) {
  if (rc_ == MPI_SUCCESS) rc_ = local_copy(in, in_count, in_type, out, out_count, out_type);
}

void Runner::reduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op) {
  if (rc_ == MPI_SUCCESS) rc_ = reduce_local(in, out, count, type, op);
}

void Runner::end_round() {
  if (g_runner_round.empty()) return;
  if (rc_ == MPI_SUCCESS) {
    const Step* begin = g_runner_round.data();
    rc_ = run_transfers_blocking(begin, begin + g_runner_round.size(), range_, seq_);
  }
  g_runner_round.clear();
}

void* Runner::scratch(int count, MPI_Datatype type) { return g_runner_scratch.get(count, type); }

int Runner::finish() {
  end_round();
  return rc_;
}

namespace {

// The schedule engine's part of every progress() call: each running collective once.
void advance_collectives() {
  const bool nested = g_sweeping_running;
  g_sweeping_running = true;
  sweep_finished(g_running, [](RunningOp* op) { return op->advance(); });
  g_sweeping_running = nested;
}

const bool g_registered = (register_poller(PollerSlot::collectives, advance_collectives), true);

}  // namespace

}  // namespace rangecomm::detail
