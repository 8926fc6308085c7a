#include "matching.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>

#include "errors.hpp"
#include "rangecomm/embedding.hpp"
#include "status.hpp"
#include "type_facts.hpp"

namespace rangecomm::detail {

ProgressCounter g_progress_needed;
void (*g_pause_hook)() = nullptr;

namespace {

int g_engine_recvs = 0;  // receives waiting for the engine, all channels
// Freed, incomplete operations. Never destroyed: those still listed at exit stay reachable.
std::vector<Operation*>& g_orphans = *new std::vector<Operation*>;

bool parked_matches(const Parked& p, const RangeState& range, TagLayout::Kind kind, int root_source,
                    int payload) {
  if (p.comm != range.id || p.kind != kind) return false;
  if (payload != MPI_ANY_TAG && p.payload != payload) return false;
  if (root_source == MPI_ANY_SOURCE) return range.from_root(p.root_source) != MPI_UNDEFINED;
  return p.root_source == root_source;
}

std::list<Parked>::iterator find_parked(RangeState& range, TagLayout::Kind kind, int root_source,
                                        int payload) {
  auto& parked = range.channel->parked();
  return std::find_if(parked.begin(), parked.end(), [&](const Parked& p) {
    return parked_matches(p, range, kind, root_source, payload);
  });
}

void leave_engine(RangeState& range) {
  --range.channel->lane(comm_lane(range)).engine_waits;
  --g_engine_recvs;
  --g_progress_needed;
}

// A control message sent with MPI_Isend that was not complete at once: its buffer lives until
// it is.
template <class Buffer>
class ControlSendOp final : public Operation {
 public:
  Buffer message;
  MPI_Request request = MPI_REQUEST_NULL;
  bool test(MPI_Status* status, int* rc) override {
    int flag = 0;
    *rc = MPI_Test(&request, &flag, status);
    return flag || *rc != MPI_SUCCESS;
  }
  void cancel() override {}
};

// Sends op->message (whose first `bytes` bytes are the message) with MPI_Isend; keeps op until
// the send is complete.
template <class Buffer>
int send_buffered(ControlSendOp<Buffer>* op, const void* data, int bytes, MPI_Datatype type,
                  int dest, int tag, MPI_Comm lane) {
  int rc = MPI_Isend(data, bytes, type, dest, tag, lane, &op->request);
  MPI_Status st;
  int done_rc = MPI_SUCCESS;
  if (rc != MPI_SUCCESS || op->test(&st, &done_rc)) {
    op->unref();
    return rc != MPI_SUCCESS ? rc : done_rc;
  }
  adopt_orphan(op);  // completes in a later progress call
  return MPI_SUCCESS;
}

// Takes in a binding that carries its sender's first collective message on the communicator:
// binds the slot and parks the message with its data. A message too short for its header, or
// of another kind, breaks the protocol and is dropped.
void take_bound_data(Channel& ch, int source, MPI_Message message, const MPI_Status& st) {
  int size = 0;
  MPI_Get_count(&st, MPI_BYTE, &size);
  Parked p{{}, TagLayout::collective, 0, source, MPI_MESSAGE_NULL, st, {}, 0, 0};
  p.packed.resize(static_cast<size_t>(std::max(size, 1)));
  MPI_Mrecv(p.packed.data(), size, MPI_BYTE, &message, MPI_STATUS_IGNORE);
  BoundDataHeader h;
  if (size < static_cast<int>(sizeof h)) return;
  std::memcpy(&h, p.packed.data(), sizeof h);
  p.offset = sizeof h;
  if (h.bytes < 0 || h.bytes > size - p.offset || h.payload < 0 ||
      h.payload > TagLayout::max_payload)
    return;
  ch.bind(source, h.slot, {h.hi, h.lo});
  p.comm = {h.hi, h.lo};
  p.payload = h.payload;
  p.bytes = h.bytes;
  ch.parked().push_back(std::move(p));
}

// A message just taken from MPI: take in a binding or header, or give the message to the first
// engine receive that wants it, or park it under its communicator.
void dispatch(Channel& ch, int lane, MPI_Message message, const MPI_Status& st) {
  const TagLayout& layout = ch.layout();
  auto env = layout.decode(lane, st.MPI_TAG);
  int source = st.MPI_SOURCE;
  CommId comm;
  TagLayout::Kind kind = env.kind;
  int payload = env.payload;
  if (env.control && env.kind == TagLayout::p2p && env.payload == TagLayout::bind_with_data) {
    take_bound_data(ch, source, message, st);
    return;
  }
  if (env.control && env.kind == TagLayout::p2p) {
    ControlMessage m;
    MPI_Mrecv(&m, sizeof m, MPI_BYTE, &message, MPI_STATUS_IGNORE);
    if (env.payload == TagLayout::bind)
      ch.bind(source, m.a, {m.hi, m.lo});
    else
      ch.wide_headers(source, lane).push_back(m);
    return;
  }
  if (env.control) {  // the data of a message without a slot: its header came just before
    auto& headers = ch.wide_headers(source, lane);
    ControlMessage m = headers.front();
    headers.pop_front();
    comm = {m.hi, m.lo};
    kind = static_cast<TagLayout::Kind>(m.a);
    payload = m.b;
  } else {
    const CommId* bound = ch.bound_comm(source, env.slot);
    if (bound == nullptr) {
      // Only a peer that broke the protocol sends under a slot it never bound: drop it.
      char sink;
      MPI_Mrecv(&sink, 0, MPI_BYTE, &message, MPI_STATUS_IGNORE);
      return;
    }
    comm = *bound;
  }
  RangeState* range = ch.find(comm);
  if (range && kind == TagLayout::p2p && range->match) {
    int rank = range->from_root(source);
    auto& waiting = range->match->waiting;
    for (auto it = waiting.begin(); it != waiting.end(); ++it) {
      RecvOp* op = *it;
      if (!op->matches(rank, payload)) continue;
      waiting.erase(it);
      leave_engine(*range);
      op->start(&message, rank, payload);
      op->unref();
      return;
    }
  }
  ch.parked().push_back({comm, kind, payload, source, message, st, {}, 0, 0});
}

}  // namespace

namespace {

// The first `bytes` bytes of one packed element of `type` (fewer than its size: a message that
// ends inside an element) into element `index` of buf, leaving its other basic elements alone,
// as a receive does. MPI_Unpack takes whole elements only: the element is unpacked twice into
// copies of its memory, once padded with 0x00 and once with 0xff, and the bytes on which the
// two agree (the message's bytes, and the gaps nobody writes) are copied back.
void unpack_partial(const char* data, MPI_Count bytes, void* buf, int index, MPI_Datatype type) {
  TypeFacts f = type_facts(type);
  if (f.true_extent <= 0) return;
  // uintptr_t arithmetic: buf may be MPI_BOTTOM with an absolute-address type
  auto region = reinterpret_cast<unsigned char*>(reinterpret_cast<std::uintptr_t>(buf) +
                                                 static_cast<std::uintptr_t>(index * f.extent) +
                                                 static_cast<std::uintptr_t>(f.true_lb));
  std::vector<unsigned char> copy[2], packed(static_cast<size_t>(f.size));
  std::memcpy(packed.data(), data, static_cast<size_t>(bytes));
  for (int k = 0; k < 2; ++k) {
    copy[k].assign(region, region + f.true_extent);
    std::memset(packed.data() + bytes, k ? 0xff : 0x00, static_cast<size_t>(f.size - bytes));
    auto origin = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(copy[k].data()) -
                                          static_cast<std::uintptr_t>(f.true_lb));
    int position = 0;
    MPI_Unpack(packed.data(), f.size, &position, origin, 1, type, MPI_COMM_SELF);
  }
  for (MPI_Aint i = 0; i < f.true_extent; ++i)
    if (copy[0][i] == copy[1][i]) region[i] = copy[0][i];
}

}  // namespace

int unpack_message(const char* packed, int packed_size, MPI_Count bytes, const char* from,
                   void* buf, int count, MPI_Datatype type, MPI_Count* received) {
  MPI_Count type_size = 0;
  MPI_Type_size_x(type, &type_size);
  MPI_Count capacity = type_size * count;
  int rc = MPI_SUCCESS;
  if (bytes > capacity) {
    rc = raise(MPI_COMM_NULL, MPI_ERR_TRUNCATE,
               "message of %lld bytes from %s is longer than the receive buffer (%lld bytes)",
               static_cast<long long>(bytes), from, static_cast<long long>(capacity));
    bytes = capacity;
  }
  int elements = type_size > 0 ? static_cast<int>(bytes / type_size) : 0;
  int position = 0;
  if (elements > 0) unpack_typed(packed, packed_size, &position, buf, elements, type);
  MPI_Count rest = bytes - elements * type_size;  // a message that ends inside an element
  if (rest > 0 && position + rest <= packed_size)
    unpack_partial(packed + position, rest, buf, elements, type);
  *received = bytes;
  return rc;
}

int unpack_self(const SelfMessage& m, int source, void* buf, int count, MPI_Datatype type,
                MPI_Status* status) {
  MPI_Count bytes = 0;
  int rc = unpack_message(m.packed.data(), static_cast<int>(m.packed.size()), m.bytes, "self", buf,
                          count, type, &bytes);
  set_status(status, source, m.tag, bytes, rc);
  return rc;
}

int receive_parked(Parked& p, void* buf, int count, MPI_Datatype type, MPI_Request* request) {
  if (p.message != MPI_MESSAGE_NULL)
    return request != nullptr ? MPI_Imrecv(buf, count, type, &p.message, request)
                              : MPI_Mrecv(buf, count, type, &p.message, MPI_STATUS_IGNORE);
  if (request != nullptr) *request = MPI_REQUEST_NULL;
  TypeFacts t = type_facts(type);
  if (t.predefined && t.contiguous() && buf != MPI_BOTTOM &&
      p.bytes <= static_cast<MPI_Count>(t.size) * count) {
    std::memcpy(buf, p.packed.data() + p.offset, static_cast<size_t>(p.bytes));
    return MPI_SUCCESS;
  }
  MPI_Count received = 0;
  return unpack_message(p.packed.data() + p.offset, static_cast<int>(p.packed.size()) - p.offset,
                        p.bytes, "a peer", buf, count, type, &received);
}

RecvOp::RecvOp(std::shared_ptr<RangeState> range, void* buf, int count, MPI_Datatype type,
               int source, int tag)
    : range_(std::move(range)), buf_(buf), count_(count), type_(type), source_(source), tag_(tag) {}

void RecvOp::start(MPI_Message* message, int source, int tag) {
  matched_source_ = source;
  matched_tag_ = tag;
  rc_ = MPI_Imrecv(buf_, count_, type_.get(), message, &request_);
  state_ = rc_ == MPI_SUCCESS ? State::receiving : State::done;
  if (state_ == State::done) set_status(&status_, source, tag, 0, rc_);
}

void RecvOp::deliver_self(SelfMessage& m) {
  rc_ = unpack_self(m, range_->rank, buf_, count_, type_.get(), &status_);
  if (m.sync) {
    m.sync->matched();
    m.sync->unref();
    m.sync = nullptr;
  }
  state_ = State::done;
}

bool RecvOp::test(MPI_Status* status, int* rc) {
  if (state_ == State::waiting) return false;
  if (state_ == State::receiving) {
    int flag = 0;
    int code = MPI_Test(&request_, &flag, &status_);
    if (!flag && code == MPI_SUCCESS) return false;
    rc_ = code;
    status_.MPI_SOURCE = matched_source_;
    status_.MPI_TAG = matched_tag_;
    state_ = State::done;
  }
  *status = status_;
  *rc = rc_;
  return true;
}

void RecvOp::cancel() {
  if (state_ != State::waiting) return;  // matched already: cancel has no effect
  auto& waiting = range_->match->waiting;
  auto it = std::find(waiting.begin(), waiting.end(), this);
  if (it != waiting.end()) {
    waiting.erase(it);
    leave_engine(*range_);
    unref();  // the queue's reference; the request still holds one
  }
  set_cancelled_status(&status_);
  state_ = State::done;
}

bool SelfSendOp::test(MPI_Status* status, int* rc) {
  if (!matched_ && !cancelled_) return false;
  set_empty_status(status);
  MPI_Status_set_cancelled(status, cancelled_ ? 1 : 0);
  *rc = MPI_SUCCESS;
  return true;
}

void SelfSendOp::cancel() {
  if (matched_ || cancelled_) return;
  auto& queue = range_->matching().self_queue;
  for (auto it = queue.begin(); it != queue.end(); ++it) {
    if (it->sync != this) continue;
    queue.erase(it);
    unref();  // the queue's reference
    break;
  }
  cancelled_ = true;
}

bool take_parked(RangeState& range, TagLayout::Kind kind, int root_source, int payload,
                 Parked* out) {
  auto& parked = range.channel->parked();
  if (parked.empty()) return false;
  auto it = find_parked(range, kind, root_source, payload);
  if (it == parked.end()) return false;
  *out = std::move(*it);
  parked.erase(it);
  return true;
}

const Parked* peek_parked(RangeState& range, TagLayout::Kind kind, int root_source, int payload) {
  auto& parked = range.channel->parked();
  if (parked.empty()) return nullptr;
  auto it = find_parked(range, kind, root_source, payload);
  return it == parked.end() ? nullptr : &*it;
}

std::list<SelfMessage>::iterator find_self(MatchState& m, int tag) {
  return std::find_if(m.self_queue.begin(), m.self_queue.end(),
                      [&](const SelfMessage& s) { return tag == MPI_ANY_TAG || s.tag == tag; });
}

void enqueue_recv(RangeState& range, RecvOp* op) {
  op->ref();
  range.matching().waiting.push_back(op);
  ++range.channel->lane(comm_lane(range)).engine_waits;
  ++g_engine_recvs;
  ++g_progress_needed;
  poll_range_lane(range);
}

int take_next_from(Channel& channel, int lane, int source) {
  // Polls rather than MPI_Mprobe: MPICH's blocking calls spin without giving the core away, and
  // with more ranks than cores the sender then waits a whole time slice for it.
  Backoff backoff(16);
  for (;;) {
    int flag = 0;
    MPI_Message message;
    MPI_Status st;
    int rc = MPI_Improbe(source, MPI_ANY_TAG, channel.lane(lane).comm, &flag, &message, &st);
    if (rc != MPI_SUCCESS) return rc;
    if (flag) {
      dispatch(channel, lane, message, st);
      return MPI_SUCCESS;
    }
    backoff.pause();
  }
}

void await_engine(RangeState& range) {
  ++range.channel->lane(comm_lane(range)).engine_waits;
  ++g_engine_recvs;
}

void stop_awaiting_engine(RangeState& range) {
  --range.channel->lane(comm_lane(range)).engine_waits;
  --g_engine_recvs;
}

int send_control(Channel& channel, int lane, int dest, TagLayout::Control kind,
                 const ControlMessage& m) {
  auto* op = new ControlSendOp<ControlMessage>;
  op->message = m;
  return send_buffered(op, &op->message, sizeof m, MPI_BYTE, dest,
                       channel.layout().control_tag(kind), channel.lane(lane).comm);
}

int send_bound_data(Channel& channel, int lane, int dest, const BoundDataHeader& header,
                    const void* buf, int count, MPI_Datatype type, bool* sent) {
  *sent = false;
  if (header.bytes > kBoundDataLimit) return MPI_SUCCESS;  // the binding goes alone
  // A predefined type without gaps is its packed form (MPICH and Open MPI pack in the
  // machine's own representation). Only predefined: a derived type can be gapless and still
  // list its bytes in another order (an indexed type of two blocks given backwards).
  TypeFacts t = type_facts(type);
  bool raw = t.predefined && t.contiguous() && buf != MPI_BOTTOM;
  int data_size = static_cast<int>(header.bytes);
  if (!raw && (MPI_Pack_size(count, type, MPI_COMM_SELF, &data_size) != MPI_SUCCESS ||
               data_size > kBoundDataLimit))
    return MPI_SUCCESS;
  // One allocation: the header and the data in the op's own fixed buffer.
  auto* op = new ControlSendOp<std::array<char, sizeof header + kBoundDataLimit>>;
  std::memcpy(op->message.data(), &header, sizeof header);
  int position = sizeof header;
  if (raw) {
    std::memcpy(op->message.data() + position, buf, static_cast<size_t>(header.bytes));
    position += data_size;
  } else if (count > 0) {
    int rc = pack_typed(buf, count, type, op->message.data(), static_cast<int>(op->message.size()),
                        &position);
    if (rc != MPI_SUCCESS) {
      op->unref();
      return rc;
    }
  }
  *sent = true;
  return send_buffered(op, op->message.data(), position, MPI_BYTE, dest,
                       channel.layout().control_tag(TagLayout::bind_with_data),
                       channel.lane(lane).comm);
}

int send_self(const std::shared_ptr<RangeState>& range, const void* buf, int count,
              MPI_Datatype type, int tag, bool synchronous, Operation** sync_op) {
  SelfMessage m;
  MPI_Count type_size = 0;
  MPI_Type_size_x(type, &type_size);
  m.bytes = type_size * count;
  m.tag = tag;
  int packed_size = 0;
  int rc = MPI_Pack_size(count, type, MPI_COMM_SELF, &packed_size);
  if (rc != MPI_SUCCESS || m.bytes > INT_MAX)
    return raise(range->errcomm(), MPI_ERR_COUNT,
                 "a message to self must pack into fewer than 2^31 bytes (%lld bytes)",
                 static_cast<long long>(m.bytes));
  m.packed.resize(static_cast<size_t>(packed_size));
  int position = 0;
  if (count > 0) {
    rc = pack_typed(buf, count, type, m.packed.data(), packed_size, &position);
    if (rc != MPI_SUCCESS) return raise_mpi(range->errcomm(), rc, "packing a message to self");
  }
  m.packed.resize(static_cast<size_t>(position));

  MatchState& match = range->matching();
  for (auto it = match.waiting.begin(); it != match.waiting.end(); ++it) {
    RecvOp* op = *it;
    if (!op->matches(range->rank, tag)) continue;
    match.waiting.erase(it);
    leave_engine(*range);
    op->deliver_self(m);  // a synchronous send is complete at once
    op->unref();
    return MPI_SUCCESS;
  }
  if (synchronous) {
    auto* op = new SelfSendOp(range);
    op->ref();  // the queue's reference
    m.sync = op;
    *sync_op = op;
  }
  match.self_queue.push_back(std::move(m));
  return MPI_SUCCESS;
}

namespace {
void poll_lane(Channel& ch, int lane) {
  // Bounded, so that a flood of traffic cannot keep one call busy forever.
  for (int i = 0; i < 256 && !ch.closed(); ++i) {
    int flag = 0;
    MPI_Message message;
    MPI_Status st;
    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, ch.lane(lane).comm, &flag, &message, &st);
    if (!flag) return;
    dispatch(ch, lane, message, st);
  }
}
}  // namespace

void poll_range_lane(RangeState& range) {
  if (!range.channel->closed()) poll_lane(*range.channel, comm_lane(range));
}

void poll_lanes() {
  if (g_engine_recvs == 0) return;
  for (Channel* ch : open_channels())
    for (int i = 0; i < ch->lane_count(); ++i)
      if (ch->lane(i).engine_waits > 0) poll_lane(*ch, i);
}

bool engine_busy() { return g_progress_needed.any() || g_pause_hook != nullptr; }

void adopt_orphan(Operation* op) {
  g_orphans.push_back(op);
  ++g_progress_needed;
}

void progress() {
  poll_lanes();
  advance_collectives();
  for (size_t i = 0; i < g_orphans.size();) {
    MPI_Status st;
    int rc;
    if (g_orphans[i]->test(&st, &rc)) {
      g_orphans[i]->unref();
      g_orphans[i] = g_orphans.back();
      g_orphans.pop_back();
      --g_progress_needed;
    } else {
      ++i;
    }
  }
}

}  // namespace rangecomm::detail

namespace rangecomm {
void Set_threaded(void (*pause)()) { detail::g_pause_hook = pause; }
}  // namespace rangecomm
