// Janus Quicksort's sequential sort (rangecomm/jquick/local_sort.hpp): on each side of the step
// from pdqsort to ips4o, for arithmetic and record types, ascending and descending orders and
// inputs with many equal keys, the result is a sorted permutation of the input (the same
// multiset as std::sort gives). And the two-process base case's split of two sorted runs.
#include <rangecomm/jquick/base_case.hpp>
#include <rangecomm/jquick/local_sort.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <utility>
#include <vector>

#include "mpi_test.hpp"

namespace {

using rangecomm::jquick::kIps4oMin;
using rangecomm::jquick::local_sort;

struct Item {
  std::int64_t key;
  std::uint32_t tag;  // which input position it came from: equal keys stay distinguishable
};

std::vector<std::ptrdiff_t> sizes() {
  return {0, 1, 2, 15, 16, 17, 255, 4096, kIps4oMin - 1, kIps4oMin, kIps4oMin + 977};
}

// distinct_keys 0: all keys different (random); otherwise keys from 0..distinct_keys-1.
std::vector<std::int64_t> keys(std::ptrdiff_t n, std::int64_t distinct_keys, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  for (auto& x : v)
    x = distinct_keys > 0 ? static_cast<std::int64_t>(rng() % distinct_keys)
                          : static_cast<std::int64_t>(rng() >> 1) - (std::int64_t{1} << 62);
  return v;
}

template <class T, class Compare, class Key>
void check_sorts(std::vector<T> in, Compare comp, Key key) {
  auto got = in;
  local_sort(got.begin(), got.end(), comp);
  REQUIRE(std::is_sorted(got.begin(), got.end(), comp));
  // The same multiset: both sorted by (key, the rest) compare equal element by element.
  auto full = [&](const T& a, const T& b) { return key(a) < key(b); };
  std::sort(in.begin(), in.end(), full);
  std::sort(got.begin(), got.end(), full);
  REQUIRE(std::equal(in.begin(), in.end(), got.begin(),
                     [&](const T& a, const T& b) { return key(a) == key(b); }));
}

}  // namespace

TEST_CASE("local_sort sorts doubles and integers on both sides of the ips4o step", "[sort]") {
  for (std::ptrdiff_t n : sizes()) {
    for (std::int64_t distinct : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}}) {
      INFO("n " << n << ", distinct keys " << distinct);
      auto k = keys(n, distinct, static_cast<unsigned>(n * 31 + distinct));
      std::vector<double> d(k.begin(), k.end());
      check_sorts(d, std::less<>{}, [](double x) { return x; });
      check_sorts(d, std::greater<>{}, [](double x) { return x; });
      check_sorts(k, std::less<std::int64_t>{}, [](std::int64_t x) { return x; });
    }
  }
}

TEST_CASE("local_sort sorts records by a key, keeping every record", "[sort]") {
  for (std::ptrdiff_t n : sizes()) {
    INFO("n " << n);
    auto k = keys(n, 100, static_cast<unsigned>(n));
    std::vector<Item> items(k.size());
    for (std::size_t i = 0; i < k.size(); ++i) items[i] = Item{k[i], static_cast<std::uint32_t>(i)};
    auto by_key_desc = [](const Item& a, const Item& b) { return a.key > b.key; };
    // key(item) orders by key and then by origin, so the multiset check sees every record.
    check_sorts(items, by_key_desc, [](const Item& x) { return std::make_pair(x.key, x.tag); });
  }
}

// The two-process base case's share (base_case.hpp): of two sorted runs a (the left process's)
// and b, the left side keeps the `keep` smallest and the right side the rest, both sorted; the
// two shares together are exactly a and b, also when elements compare equal but differ.
TEST_CASE("merge_share splits two sorted runs into complementary sorted shares", "[sort]") {
  using rangecomm::jquick::merge_share;
  auto by_key = [](const Item& x, const Item& y) { return x.key < y.key; };
  std::mt19937_64 rng(7);
  for (std::size_t na : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{64}}) {
    for (std::size_t nb : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{64}}) {
      for (std::int64_t distinct : {std::int64_t{1}, std::int64_t{3}, std::int64_t{1000}}) {
        std::vector<Item> a(na), b(nb);
        std::uint32_t tag = 0;
        for (auto& x : a) x = Item{static_cast<std::int64_t>(rng() % distinct), tag++};
        for (auto& x : b) x = Item{static_cast<std::int64_t>(rng() % distinct), tag++};
        std::sort(a.begin(), a.end(), by_key);
        std::sort(b.begin(), b.end(), by_key);
        for (std::size_t keep = 0; keep <= na + nb; ++keep) {
          INFO("na " << na << ", nb " << nb << ", distinct " << distinct << ", keep " << keep);
          auto left = merge_share(a, b, keep, true, by_key);
          auto right = merge_share(a, b, keep, false, by_key);
          REQUIRE(left.size() == keep);
          REQUIRE(right.size() == na + nb - keep);
          CHECK(std::is_sorted(left.begin(), left.end(), by_key));
          CHECK(std::is_sorted(right.begin(), right.end(), by_key));
          if (!left.empty() && !right.empty()) CHECK(!by_key(right.front(), left.back()));
          // Every record exactly once (tags are unique).
          std::vector<std::uint32_t> tags;
          for (const auto& x : left) tags.push_back(x.tag);
          for (const auto& x : right) tags.push_back(x.tag);
          std::sort(tags.begin(), tags.end());
          for (std::size_t i = 0; i < tags.size(); ++i) REQUIRE(tags[i] == i);
          // Where equal keys straddle the split, a's go left first: the last of b's records on
          // the left is below the first of a's on the right.
          const Item* b_left_last = nullptr;
          const Item* a_right_first = nullptr;
          for (const auto& x : left)
            if (x.tag >= na) b_left_last = &x;
          for (const auto& x : right)
            if (x.tag < na && a_right_first == nullptr) a_right_first = &x;
          if (b_left_last != nullptr && a_right_first != nullptr)
            CHECK(by_key(*b_left_last, *a_right_first));
        }
      }
    }
  }
}
