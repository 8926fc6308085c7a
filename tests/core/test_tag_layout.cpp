// Unit tests of the tag layout (slots, control tags) and of communicator identities.
#include <map>
#include <set>
#include <utility>

#include "comm/range.hpp"
#include "mpi_test.hpp"
#include "wire/comm_id.hpp"
#include "wire/tag_layout.hpp"

using rangecomm::detail::CommId;
using rangecomm::detail::TagLayout;

namespace {
TagLayout layout_for(long long tag_ub, int lanes) {
  TagLayout l;
  const char* why = nullptr;
  REQUIRE(TagLayout::make(tag_ub, lanes, &l, &why));
  return l;
}

// Every slot a sender can hand out (the reserved control values excluded).
std::vector<int> usable_slots(const TagLayout& l) {
  std::vector<int> out;
  for (int s = 0; s < l.slot_count(); ++s)
    if (!l.reserved(s)) out.push_back(s);
  return out;
}
}  // namespace

TEST_CASE("layouts for the tag limits of real MPI libraries") {
  struct Case {
    long long tag_ub;
    int tag_bits;
    int slot_bits;
  };
  for (Case c :
       {Case{(1LL << 28) - 1, 28, 14}, Case{(1LL << 31) - 1, 31, 17}, Case{(1LL << 23) - 1, 23, 9},
        Case{(1LL << 19) - 1, 19, 5}, Case{(1LL << 17) - 1, 17, 3}}) {
    TagLayout l = layout_for(c.tag_ub, 4);
    CHECK(l.tag_bits == c.tag_bits);
    CHECK(l.slot_bits == c.slot_bits);
    // One value of the tag bits above the header is the control value, on each lane.
    auto slots = usable_slots(l);
    CHECK(slots.size() == static_cast<size_t>(l.slot_count() - l.lanes()));
    // Every tag the layout can produce fits under MPI_TAG_UB and is not negative.
    for (int s : {slots.front(), slots.back()}) {
      int top = TagLayout::tag(l.tag_base(s), TagLayout::collective, TagLayout::max_payload);
      CHECK(top >= 0);
      CHECK(top <= c.tag_ub);
    }
    CHECK(l.wide_data_tag() <= c.tag_ub);
    CHECK(l.control_tag(TagLayout::wide_header) <= c.tag_ub);
  }
}

TEST_CASE("too small a tag space is refused with a reason") {
  TagLayout l;
  const char* why = nullptr;
  CHECK_FALSE(TagLayout::make(32767, 4, &l, &why));
  CHECK(why != nullptr);
  CHECK_FALSE(TagLayout::make((1LL << 28) - 1, 3, &l, &why));  // lanes must be a power of two
}

TEST_CASE("encode then decode gives back slot, kind and payload; control tags are told apart") {
  for (long long ub : {(1LL << 28) - 1, (1LL << 23) - 1, (1LL << 17) - 1}) {
    TagLayout l = layout_for(ub, 4);
    std::set<std::pair<int, int>> seen;  // (lane, tag) of every data message
    for (int slot : usable_slots(l)) {
      for (int kind : {0, 1}) {
        for (int payload : {0, 1, 12345, TagLayout::max_payload}) {
          int tag = TagLayout::tag(l.tag_base(slot), static_cast<TagLayout::Kind>(kind), payload);
          auto env = l.decode(l.lane_of(slot), tag);
          CHECK_FALSE(env.control);
          CHECK(env.slot == slot);
          CHECK(env.kind == kind);
          CHECK(env.payload == payload);
          CHECK(seen.insert({l.lane_of(slot), tag}).second);
        }
      }
    }
    for (int lane = 0; lane < l.lanes(); ++lane) {
      auto bind = l.decode(lane, l.control_tag(TagLayout::bind));
      CHECK(bind.control);
      CHECK(bind.kind == TagLayout::p2p);
      CHECK(bind.payload == TagLayout::bind);
      auto header = l.decode(lane, l.control_tag(TagLayout::wide_header));
      CHECK(header.control);
      CHECK(header.payload == TagLayout::wide_header);
      auto data = l.decode(lane, l.wide_data_tag());
      CHECK(data.control);
      CHECK(data.kind == TagLayout::collective);
    }
  }
}

TEST_CASE("identities: children of one parent, repeats and different parents all differ") {
  using namespace rangecomm::detail;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  auto fresh = [&](const CommId& id) { return seen.insert({id.hi, id.lo}).second; };
  CommId root{1, 1};
  CHECK(fresh(root));
  // Every range of 12 processes, three repeats each, then one level further down from two
  // different parents with the same members.
  int made = 1;
  for (int first = 0; first < 12; ++first)
    for (int last = first; last < 12; ++last)
      for (int stride = 1; stride < 4; ++stride)
        for (std::uint64_t k = 0; k < 3; ++k) {
          CommId child = derive_id(root, digest_range(first, last, stride, 1), k);
          CHECK(fresh(child));
          CHECK(fresh(derive_id(child, digest_range(0, 0, 1, 1), 0)));
          made += 2;
        }
  CHECK(seen.size() == static_cast<size_t>(made));
  // The same creation from the same parent with the same count is the same communicator.
  CHECK(derive_id(root, digest_words({kDupCreation, 7}), 2) ==
        derive_id(root, digest_words({kDupCreation, 7}), 2));
  // Range digests of every small shape at two levels differ.
  std::set<std::uint64_t> digests;
  int shapes = 0;
  for (int first = 0; first < 40; ++first)
    for (int last = first; last < 40; ++last)
      for (int stride = 1; stride < 6; ++stride)
        for (int levels = 1; levels < 3; ++levels, ++shapes)
          digests.insert(digest_range(first, last, stride, levels));
  CHECK(digests.size() == static_cast<size_t>(shapes));
  // Member lists differ by order and by one member.
  std::vector<int> a{0, 1, 2, 3}, b{1, 0, 2, 3}, c{0, 1, 2, 4};
  CHECK(digest_members(kGroupCreation, a, 0) != digest_members(kGroupCreation, b, 0));
  CHECK(digest_members(kGroupCreation, a, 0) != digest_members(kGroupCreation, c, 0));
  CHECK(digest_members(kGroupCreation, a, 0) != digest_members(kGroupCreation, a, 1));
}

TEST_CASE("creation counts number repeats of each creation from 0, past the linear part") {
  rangecomm::detail::ChildCounts counts;
  for (std::uint64_t round = 0; round < 5; ++round)
    for (std::uint64_t digest = 100; digest < 140; ++digest) CHECK(counts.next(digest) == round);
}

TEST_CASE("creation counts agree with a plain map when a creation repeats and as the table grows") {
  // Runs of one digest (counted without a search) between new and old digests, past the 16
  // counted linearly and the move to the hash map; every count checked against std::map.
  rangecomm::detail::ChildCounts counts;
  std::map<std::uint64_t, std::uint64_t> expected;
  std::uint64_t state = 12345;
  for (int i = 0; i < 4000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::uint64_t digest = 7 + (state >> 33) % (i < 2000 ? 12 : 40);
    const int run = 1 + static_cast<int>((state >> 20) % 4);
    for (int r = 0; r < run; ++r) CHECK(counts.next(digest) == expected[digest]++);
  }
  CHECK(expected.size() == 40);
}
