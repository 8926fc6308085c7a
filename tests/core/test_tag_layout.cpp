// Unit tests of the tag layout and of the range arithmetic behind context clashes.
#include <set>

#include "mpi_test.hpp"
#include "range.hpp"
#include "tag_layout.hpp"

using rangecomm::detail::TagLayout;

namespace {
TagLayout layout_for(long long tag_ub, int lanes) {
  TagLayout l;
  const char* why = nullptr;
  REQUIRE(TagLayout::make(tag_ub, lanes, &l, &why));
  return l;
}
}  // namespace

TEST_CASE("layouts for the tag limits of real MPI libraries") {
  struct Case { long long tag_ub; int tag_bits; int ctx_bits; };
  for (Case c : {Case{(1LL << 28) - 1, 28, 14}, Case{(1LL << 31) - 1, 31, 17},
                 Case{(1LL << 23) - 1, 23, 9}, Case{(1LL << 19) - 1, 19, 5}}) {
    TagLayout l = layout_for(c.tag_ub, 4);
    CHECK(l.tag_bits == c.tag_bits);
    CHECK(l.ctx_bits == c.ctx_bits);
    CHECK(l.depth_bits + l.first_bits + l.last_bits + l.stride_bits == l.ctx_bits);
    CHECK(l.depth_bits >= 3);
    // The largest tag the layout can produce fits under MPI_TAG_UB.
    std::uint32_t all_ctx = (1u << l.ctx_bits) - 1;
    int top = TagLayout::tag(l.tag_base(all_ctx), TagLayout::collective, TagLayout::max_payload);
    CHECK(top >= 0);
    CHECK(top <= c.tag_ub);
  }
}

TEST_CASE("too small a tag space is refused with a reason") {
  TagLayout l;
  const char* why = nullptr;
  CHECK_FALSE(TagLayout::make(32767, 4, &l, &why));
  CHECK(why != nullptr);
  CHECK_FALSE(TagLayout::make((1LL << 28) - 1, 3, &l, &why));  // lanes must be a power of two
}

TEST_CASE("encode then decode gives back context, kind and payload") {
  TagLayout l = layout_for((1LL << 28) - 1, 4);
  for (int depth = 0; depth < 70; depth += 3) {
    for (int first = 0; first < 40; first += 7) {
      std::uint32_t ctx = l.context(depth, first, first + depth, 1);
      for (int kind : {0, 1}) {
        for (int payload : {0, 1, 12345, TagLayout::max_payload}) {
          int tag = TagLayout::tag(l.tag_base(ctx), static_cast<TagLayout::Kind>(kind), payload);
          auto env = l.decode(l.lane_of(ctx), tag);
          CHECK(env.ctx == ctx);
          CHECK(env.kind == kind);
          CHECK(env.payload == payload);
        }
      }
    }
  }
}

TEST_CASE("parent and child, and ranges with different ends, get different contexts") {
  TagLayout l = layout_for((1LL << 28) - 1, 4);
  // Depth separates up to 2^depth_bits nesting levels of the same members.
  std::set<std::uint32_t> seen;
  for (int depth = 0; depth < (1 << l.depth_bits); ++depth) seen.insert(l.context(depth, 0, 7, 1));
  CHECK(seen.size() == static_cast<size_t>(1 << l.depth_bits));
  // At equal depth, all strided ranges of 8 processes are told apart.
  seen.clear();
  int ranges = 0;
  for (int first = 0; first < 8; ++first)
    for (int stride = 1; stride < 8; ++stride)
      for (int last = first + stride; last < 8; last += stride, ++ranges)
        seen.insert(l.context(1, first, last, stride));
  CHECK(seen.size() == static_cast<size_t>(ranges));
}

TEST_CASE("common members of two strided ranges, counted up to two") {
  using rangecomm::detail::RangeState;
  auto range = [](int first, int stride, int size) {
    auto r = std::make_unique<RangeState>();
    r->first = first;
    r->stride = stride;
    r->size = size;
    return r;
  };
  // Brute force over small ranges.
  for (int f1 = 0; f1 < 6; ++f1)
    for (int s1 = 1; s1 < 4; ++s1)
      for (int n1 = 1; n1 < 5; ++n1)
        for (int f2 = 0; f2 < 6; ++f2)
          for (int s2 = 1; s2 < 4; ++s2)
            for (int n2 = 1; n2 < 5; ++n2) {
              auto a = range(f1, s1, n1), b = range(f2, s2, n2);
              int common = 0;
              for (int i = 0; i < n1; ++i)
                if (b->from_root(f1 + i * s1) != MPI_UNDEFINED) ++common;
              INFO(f1 << "," << s1 << "," << n1 << " vs " << f2 << "," << s2 << "," << n2);
              CHECK(rangecomm::detail::common_members_upto2(*a, *b) == std::min(common, 2));
            }
}
