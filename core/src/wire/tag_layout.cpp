#include "wire/tag_layout.hpp"

namespace rangecomm::detail {

namespace {
int log2_exact(int v) {
  int b = 0;
  while ((1 << b) < v) ++b;
  return (1 << b) == v ? b : -1;
}
}  // namespace

bool TagLayout::make(long long tag_ub, int lanes, TagLayout* out, const char** why) {
  TagLayout l;
  while (l.tag_bits < 31 && (1LL << (l.tag_bits + 1)) - 1 <= tag_ub) ++l.tag_bits;
  if (l.tag_bits < header_bits + 1) {
    *why = "MPI_TAG_UB is below 2^17-1: no room for 15-bit user tags, the kind bit and a slot bit";
    return false;
  }
  l.lane_bits = log2_exact(lanes);
  if (l.lane_bits < 0 || l.lane_bits > 4) {
    *why = "the number of lanes must be 1, 2, 4, 8 or 16";
    return false;
  }
  l.slot_bits = l.tag_bits - header_bits + l.lane_bits;
  *out = l;
  return true;
}

}  // namespace rangecomm::detail
