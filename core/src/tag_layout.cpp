#include "tag_layout.hpp"

#include <algorithm>
#include <utility>

namespace rangecomm::detail {

namespace {
int log2_exact(int v) {
  int b = 0;
  while ((1 << b) < v) ++b;
  return (1 << b) == v ? b : -1;
}
std::uint32_t low_bits(int value, int bits) {
  return static_cast<std::uint32_t>(value) & ((1u << bits) - 1);
}
}  // namespace

bool TagLayout::make(long long tag_ub, int lanes, TagLayout* out, const char** why) {
  TagLayout l;
  while (l.tag_bits < 31 && (1LL << (l.tag_bits + 1)) - 1 <= tag_ub) ++l.tag_bits;
  if (l.tag_bits < header_bits + 1) {
    *why = "MPI_TAG_UB is below 2^17-1: no room for 15-bit user tags, the kind bit and a context";
    return false;
  }
  l.lane_bits = log2_exact(lanes);
  if (l.lane_bits < 0 || l.lane_bits > 4) {
    *why = "the number of lanes must be 1, 2, 4, 8 or 16";
    return false;
  }
  l.ctx_bits = l.tag_bits - header_bits + l.lane_bits;
  // Depth separates nested ranges (parent from child); first, last and stride separate
  // overlapping ranges of equal depth. Depth gets up to 5 bits (32 levels before it wraps),
  // the rest is shared out in the order first, last, stride.
  l.depth_bits = std::min(5, (l.ctx_bits + 1) / 2);
  int rest = l.ctx_bits - l.depth_bits;
  l.first_bits = (rest + 2) / 3;
  l.last_bits = (rest + 1) / 3;
  l.stride_bits = rest / 3;
  *out = l;
  return true;
}

std::uint32_t TagLayout::context(int depth, int first, int last, int stride) const {
  // depth | first | last | stride, from the lowest bits up.
  std::uint32_t ctx = low_bits(depth, depth_bits);
  int shift = depth_bits;
  ctx |= low_bits(first, first_bits) << shift;
  shift += first_bits;
  ctx |= low_bits(last, last_bits) << shift;
  shift += last_bits;
  ctx |= low_bits(stride, stride_bits) << shift;
  // The two values reserved for creation traffic move below them; a range that then shares a
  // context with another is caught by the clash check like any other.
  return ctx >= creation_context(1) ? ctx - 2 : ctx;
}

}  // namespace rangecomm::detail
