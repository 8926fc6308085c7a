// Relays: a message received once and sent on to a few peers, as one light nonblocking
// operation on MPI's own requests. A small nonblocking broadcast is exactly this on every
// process of its tree, and the schedule engine's generality (a plan recorded, its datatypes
// held, rounds posted from a list) was most of its cost: about 1500 instructions of the
// library's own per call at a root of 3 processes, against a few hundred here.
#include "engine/request_access.hpp"
#include "sched/running.hpp"
#include "sched/schedule.hpp"
#include "util/type_facts.hpp"

namespace rangecomm::detail {

namespace {

class RelayOp final : public RunningOp, public Recycled<RelayOp, 8> {
 public:
  // The sends to dest[0 .. n) with their tags on `lane`, after the receive `recv` when
  // `receiving` (else at once, by start()).
  RelayOp(void* buf, int count, MPI_Datatype type, MPI_Comm lane, const int* dest, const int* tag,
          int n)
      : buf_(buf), count_(count), type_(type), lane_(lane), targets_(n) {
    for (int i = 0; i < n; ++i) {
      dest_[i] = dest[i];
      tag_[i] = tag[i];
      sends_[i] = MPI_REQUEST_NULL;
    }
  }

  // Starts it with the receive already posted as `recv` (receiving), or with the sends.
  void start(bool receiving, MPI_Request recv) {
    receiving_ = receiving;
    recv_ = recv;
    if (!receiving_) post_sends();
  }

  bool advance() override {
    if (done_) return true;
    if (receiving_) {
      int flag = 0;
      int rc = MPI_Test(&recv_, &flag, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) return fail(rc);
      if (!flag) return false;
      receiving_ = false;
      post_sends();
      if (done_) return true;
    }
    int flag = 0;
    int rc = MPI_Testall(targets_, sends_, &flag, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return fail(rc);
    done_ = flag != 0;
    return done_;
  }

 private:
  void post_sends() {
    for (int i = 0; i < targets_; ++i) {
      int rc = MPI_Isend(buf_, count_, type_, dest_[i], tag_[i], lane_, &sends_[i]);
      if (rc != MPI_SUCCESS) {
        fail(rc);
        return;
      }
    }
  }
  // Ends the relay with an error; nothing of it stays posted.
  bool fail(int rc) {
    release_posted(&recv_, 1);
    release_posted(sends_, targets_);
    rc_ = rc;
    done_ = true;
    return true;
  }

  void* buf_;
  int count_;
  MPI_Datatype type_;
  MPI_Comm lane_;
  MPI_Request recv_ = MPI_REQUEST_NULL;
  bool receiving_ = false;
  bool done_ = false;
  int targets_;
  int dest_[kMaxRelayTargets];  // ranks of the root
  int tag_[kMaxRelayTargets];
  MPI_Request sends_[kMaxRelayTargets];
};

}  // namespace

bool start_relay(const std::shared_ptr<RangeState>& range, void* buf, int count, MPI_Datatype type,
                 int from, const int* to, int n, Request* request, int* rc) {
  RangeState& s = *range;
  if (n > kMaxRelayTargets || (from < 0 && n == 0) || !type_facts(type).predefined) return false;
  // The sequence number next_collective_seq gives, taken once nothing can fall back.
  const int seq = peek_collective_seq(s);
  MPI_Comm lane = MPI_COMM_NULL;
  int dest[kMaxRelayTargets], tag[kMaxRelayTargets];
  for (int i = 0; i < n; ++i) {
    if (!fast_send_envelope(s, to[i], TagLayout::collective, seq, &lane, &tag[i])) return false;
    dest[i] = s.to_root(to[i]);
  }
  MPI_Request recv = MPI_REQUEST_NULL;
  *rc = MPI_SUCCESS;
  if (from >= 0) {
    *rc = post_recv(recv_step(buf, count, type, from), s, seq, &recv);
    if (*rc == kDeferred) return false;  // the engine must wait for the sender's binding
  }
  next_collective_seq(s);
  if (*rc != MPI_SUCCESS) return true;
  if (n == 0) {  // a leaf: its receive is the whole relay
    RequestAccess::set_native(request, recv, true, MPI_ANY_SOURCE, MPI_ANY_TAG, s.errcomm());
    return true;
  }
  if (from < 0 && n == 1) {  // a root of one child
    MPI_Request send = MPI_REQUEST_NULL;
    *rc = MPI_Isend(buf, count, type, dest[0], tag[0], lane, &send);
    if (*rc == MPI_SUCCESS)
      RequestAccess::set_native(request, send, false, MPI_ANY_SOURCE, MPI_ANY_TAG, s.errcomm());
    return true;
  }
  auto* op = new RelayOp(buf, count, type, lane, dest, tag, n);
  op->start(from >= 0, recv);
  if (!op->advance()) op->keep_running();
  RequestAccess::set_op(request, op, s.errcomm());
  return true;
}

}  // namespace rangecomm::detail
