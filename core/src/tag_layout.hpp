// How a range communicator's identity is written into MPI envelopes (docs/tag-layout.md).
#pragma once

#include <cstdint>

namespace rangecomm::detail {

// On a channel (a private duplicate of the root communicator), a message's tag is
//
//     [ context bits above the lane | kind (1 bit) | payload (15 bits) ]
//
// and the lane (one of 2^lane_bits duplicates) holds the low bits of the context. The payload
// is the user's tag for point-to-point or a sequence number for collectives. The context is a
// function of (depth, first, last, stride) of the range, computed locally by every member.
struct TagLayout {
  static constexpr int payload_bits = 15;
  static constexpr int max_payload = (1 << payload_bits) - 1;  // 32767, MPI's minimum TAG_UB
  static constexpr int kind_shift = payload_bits;
  static constexpr int header_bits = payload_bits + 1;

  enum Kind : int { p2p = 0, collective = 1 };

  int tag_bits = 0;   // an MPI tag may use bits 0..tag_bits-1 (from MPI_TAG_UB)
  int lane_bits = 0;  // log2 of the number of lanes
  int ctx_bits = 0;   // context bits in all: tag_bits - header_bits + lane_bits
  int depth_bits = 0, first_bits = 0, last_bits = 0, stride_bits = 0;

  // Builds the layout for an MPI_TAG_UB and a lane count (a power of two). Returns false
  // (leaving a reason in *why) when the tag space cannot hold the header and one context bit.
  static bool make(long long tag_ub, int lanes, TagLayout* out, const char** why);

  // The context of a range at `depth` whose members are root ranks first, first + stride,
  // ..., last.
  std::uint32_t context(int depth, int first, int last, int stride) const;

  // Reserved for the messages that create general groups: space 0 for Icomm_create_group (the
  // user's tags), space 1 for the library's own creations (dups). context() never returns them,
  // so no communicator's traffic can meet theirs.
  std::uint32_t creation_context(int space) const { return (1u << ctx_bits) - 1 - space; }

  int lane_of(std::uint32_t ctx) const { return static_cast<int>(ctx & lane_mask()); }
  int tag_base(std::uint32_t ctx) const {
    return static_cast<int>((ctx >> lane_bits) << header_bits);
  }
  static int tag(int base, Kind kind, int payload) {
    return base | (kind << kind_shift) | payload;
  }

  struct Envelope {
    std::uint32_t ctx;
    Kind kind;
    int payload;
  };
  Envelope decode(int lane, int tag) const {
    auto hi = static_cast<std::uint32_t>(tag) >> header_bits;
    return {(hi << lane_bits) | static_cast<std::uint32_t>(lane),
            static_cast<Kind>((tag >> kind_shift) & 1), tag & max_payload};
  }

 private:
  std::uint32_t lane_mask() const { return (1u << lane_bits) - 1; }
};

}  // namespace rangecomm::detail
