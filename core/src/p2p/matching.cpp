#include "p2p/matching.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>

#include "rangecomm/embedding.hpp"
#include "util/errors.hpp"
#include "util/status.hpp"
#include "util/type_facts.hpp"

namespace rangecomm::detail {

namespace {

int g_engine_recvs = 0;  // receives waiting for the engine, all channels

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

// Takes in a binding: root rank `source` sends communicator `id` under `slot`. The
// communicators concerned learn their peer's slot, and one whose slot the peer reuses forgets it
// (its later receives from that peer look at the parked messages).
void bind_peer(Channel& ch, int source, int slot, const CommId& id) {
  CommId replaced;
  if (ch.bind(source, slot, id, &replaced))
    if (RangeState* old = ch.find(replaced); old && old->peers.made())
      if (int rank = old->from_root(source); rank != MPI_UNDEFINED)
        if (PeerLink* link = old->peers.find(rank)) link->slot = -1;
  if (RangeState* r = ch.find(id); r && r->peers.made())
    if (int rank = r->from_root(source); rank != MPI_UNDEFINED) r->peers.at(rank).slot = slot;
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
  bind_peer(ch, source, h.slot, {h.hi, h.lo});
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
      bind_peer(ch, source, m.a, {m.hi, m.lo});
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

// The engine's part of every progress() call.
namespace {
const bool g_registered = (register_poller(PollerSlot::matching, poll_lanes), true);
}  // namespace

}  // namespace rangecomm::detail
