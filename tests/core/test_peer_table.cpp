// Unit tests of the per-communicator peer table: an entry per member for small communicators,
// entries only for the peers reached for large ones, and the same answers either way.
#include <map>
#include <random>

#include "comm/peer_table.hpp"
#include "mpi_test.hpp"

using rangecomm::detail::PeerLink;
using rangecomm::detail::PeerTable;

TEST_CASE("a small communicator's table has an entry for every member") {
  const int size = PeerTable::dense_limit();  // 64 unless RANGECOMM_PEER_TABLE_DENSE says
  REQUIRE(size > 0);
  PeerTable t;
  CHECK_FALSE(t.made());
  CHECK(t.find(0) == nullptr);
  t.make(size);
  REQUIRE(t.made());
  CHECK(t.entries() == static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    const PeerLink* link = t.find(r);
    REQUIRE(link != nullptr);
    CHECK(link->slot == -1);
    CHECK_FALSE(link->bound);
  }
  t.at(size - 1).slot = 7;
  CHECK(t.find(size - 1)->slot == 7);
}

TEST_CASE("a large communicator's table holds the peers reached, not its members") {
  const int size = 1 << 20;  // a million members
  PeerTable t;
  t.make(size);
  REQUIRE(t.made());
  CHECK(t.entries() <= 16);
  // Ranks spread over the whole range and a run of neighbours: what trees and rings reach.
  std::mt19937 rng(42);
  std::map<int, PeerLink> want;
  for (int i = 0; i < 300; ++i) {
    int r = i < 100 ? size - 1 - i : static_cast<int>(rng() % size);
    PeerLink& link = t.at(r);
    link.slot = static_cast<int>(rng() % 5000);
    link.bound = rng() % 2 == 0;
    want[r] = link;
  }
  for (const auto& [r, link] : want) {
    const PeerLink* got = t.find(r);
    REQUIRE(got != nullptr);
    CHECK(got->slot == link.slot);
    CHECK(got->bound == link.bound);
  }
  // Kept at most half full, in a power of two: about 4 entries per peer at worst.
  CHECK(t.entries() >= 2 * want.size());
  CHECK(t.entries() <= 4 * want.size());
  // Ranks never reached have no entry (the last 10000 hold the run of neighbours reached).
  for (int r = size - 10000; r < size; ++r) REQUIRE((t.find(r) != nullptr) == (want.count(r) == 1));
  // A peer's entry made again is the same one.
  const int some = want.begin()->first;
  CHECK(&t.at(some) == t.find(some));
  CHECK(t.at(some).slot == want.begin()->second.slot);
}
