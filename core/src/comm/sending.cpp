// The send side of a range's messages: the slot it sends under, the binding each peer gets
// before its first message (or a header per message when every slot is taken), and the slot
// each peer sends under (docs/tag-layout.md).
#include "comm/range.hpp"
#include "wire/control.hpp"

namespace rangecomm::detail {

namespace {

// Takes a slot for s's first message (or, when every slot of its lane is taken, marks s as
// sending with headers).
void ensure_slot(RangeState& s) {
  if (s.slot != RangeState::kNoSlot) return;
  Channel& ch = *s.channel;
  int slot = ch.acquire_slot(comm_lane(s));
  if (slot >= 0) {
    s.slot = slot;
    s.send_lane = ch.lane(ch.layout().lane_of(slot)).comm;
    s.send_tag_base = ch.layout().tag_base(slot);
  } else {
    s.slot = RangeState::kWide;
  }
}

}  // namespace

int prepare_send(RangeState& s, int dest, TagLayout::Kind kind, int payload, MPI_Comm* comm,
                 int* tag) {
  Channel& ch = *s.channel;
  const TagLayout& layout = ch.layout();
  // Every message of the communicator, from every member, travels on one lane chosen by its
  // identity: a receiver knows where to wait for a sender's binding.
  int lane = comm_lane(s);
  ensure_slot(s);
  PeerLink& link = s.peer(dest);
  int root_dest = s.to_root(dest);
  ControlMessage m{s.id.hi, s.id.lo, 0, 0};
  if (s.slot == RangeState::kWide || payload > TagLayout::max_payload) {
    // No slot, or a user tag above the payload bits: a header names the communicator and the
    // tag of the message, which follows it on the lane.
    m.a = kind;
    m.b = payload;
    if (int rc = send_control(ch, lane, root_dest, TagLayout::wide_header, m)) return rc;
    *comm = ch.lane(lane).comm;
    *tag = layout.wide_data_tag();
    return MPI_SUCCESS;
  }
  if (!link.bound) {
    // The binding goes first, on the lane of the slot: MPI keeps one sender's messages to one
    // receiver in order on one communicator, so it arrives before anything sent under it.
    m.a = s.slot;
    if (int rc = send_control(ch, lane, root_dest, TagLayout::bind, m)) return rc;
    link.bound = true;
  }
  *comm = s.send_lane;
  *tag = TagLayout::tag(s.send_tag_base, kind, payload);
  return MPI_SUCCESS;
}

int send_with_binding(RangeState& s, int dest, int payload, const void* buf, int count,
                      MPI_Datatype type, bool* sent) {
  *sent = false;
  PeerLink& link = s.peer(dest);
  if (link.bound) return MPI_SUCCESS;
  ensure_slot(s);
  if (s.slot == RangeState::kWide) return MPI_SUCCESS;
  MPI_Count type_size = 0;
  MPI_Type_size_x(type, &type_size);
  BoundDataHeader header{s.id.hi, s.id.lo, s.slot, payload, type_size * count};
  int rc =
      send_bound_data(*s.channel, comm_lane(s), s.to_root(dest), header, buf, count, type, sent);
  if (*sent) link.bound = true;
  return rc;
}

int peer_slot_lookup(RangeState& s, PeerLink& link, int r) {
  link.slot = s.channel->bound_slot(s.to_root(r), s.id);
  return link.slot;
}

}  // namespace rangecomm::detail
