// How a message names its communicator in an MPI envelope (docs/tag-layout.md).
#pragma once

#include <cstdint>

namespace rangecomm::detail {

// On a channel (private copies, the "lanes", of one root communicator), a message's tag is
//
//     [ slot bits above the lane | kind (1 bit) | payload (15 bits) ]
//
// and the lane holds the low bits of the slot. A slot is the *sender's* short name for one of
// its live communicators: unique among the sender's live communicators, bound to the
// communicator's wide identity by a control message the sender sends each peer before its first
// message there. The payload is the user's tag for point-to-point or a sequence number for
// collectives. The highest slot-bit value of every lane is reserved for control messages.
struct TagLayout {
  static constexpr int payload_bits = 15;
  static constexpr int max_payload = (1 << payload_bits) - 1;  // 32767, MPI's minimum TAG_UB
  static constexpr int kind_shift = payload_bits;
  static constexpr int header_bits = payload_bits + 1;

  enum Kind : int { p2p = 0, collective = 1 };
  // Payloads of control messages (kind bit 0): a binding of slot to identity; the header of
  // one message sent without a slot (the message it announces follows it on the same lane with
  // the wide-data tag, kind bit 1); and a binding that carries the sender's first collective
  // message to the peer on that communicator, packed.
  enum Control : int { bind = 0, wide_header = 1, bind_with_data = 2 };

  int tag_bits = 0;   // an MPI tag may use bits 0..tag_bits-1 (from MPI_TAG_UB)
  int lane_bits = 0;  // log2 of the number of lanes
  int slot_bits = 0;  // tag_bits - header_bits + lane_bits

  // Builds the layout for an MPI_TAG_UB and a lane count (a power of two). Returns false
  // (leaving a reason in *why) when the tag space cannot hold the header and one slot bit.
  static bool make(long long tag_ub, int lanes, TagLayout* out, const char** why);

  int lanes() const { return 1 << lane_bits; }
  int slot_count() const { return 1 << slot_bits; }
  int control_high() const { return (1 << (tag_bits - header_bits)) - 1; }
  // Slots whose tag bits are the control value carry no communicator.
  bool reserved(int slot) const { return (slot >> lane_bits) == control_high(); }
  int lane_of(int slot) const { return slot & (lanes() - 1); }
  int tag_base(int slot) const { return (slot >> lane_bits) << header_bits; }
  static int tag(int base, Kind kind, int payload) { return base | (kind << kind_shift) | payload; }
  int control_tag(Control c) const { return (control_high() << header_bits) | c; }
  int wide_data_tag() const { return (control_high() << header_bits) | (1 << kind_shift); }

  struct Envelope {
    bool control;  // a control message or a wide message's data: no slot
    int slot;
    Kind kind;
    int payload;
  };
  Envelope decode(int lane, int tag) const {
    int high = tag >> header_bits;
    return {high == control_high(), (high << lane_bits) | lane,
            static_cast<Kind>((tag >> kind_shift) & 1), tag & max_payload};
  }
};

}  // namespace rangecomm::detail
