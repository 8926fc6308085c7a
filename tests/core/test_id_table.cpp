// Unit tests of the table of communicators by identity (IdTable): every entry found after
// others around it were entered and removed, against a std::map holding the same entries, with
// identities whose low bits collide as well as well-mixed ones.
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "mpi_test.hpp"
#include "wire/comm_id.hpp"

using rangecomm::detail::CommId;
using rangecomm::detail::IdTable;

namespace {

struct Thing {
  int n;
};

void check_same(const IdTable<Thing>& table,
                const std::map<std::pair<std::uint64_t, std::uint64_t>, Thing*>& model,
                const std::vector<CommId>& all) {
  REQUIRE(table.size() == model.size());
  for (const CommId& id : all) {
    auto it = model.find({id.hi, id.lo});
    CHECK(table.find(id) == (it == model.end() ? nullptr : it->second));
  }
}

}  // namespace

TEST_CASE("an empty table finds nothing and removes nothing") {
  IdTable<Thing> t;
  Thing a{1};
  CHECK(t.find(CommId{1, 2}) == nullptr);
  t.remove(CommId{1, 2}, &a);
  CHECK(t.size() == 0);
}

TEST_CASE("put replaces, remove takes only the entry that holds the object") {
  IdTable<Thing> t;
  Thing a{1}, b{2};
  t.put(CommId{0, 5}, &a);
  t.put(CommId{0, 5}, &b);
  CHECK(t.size() == 1);
  CHECK(t.find(CommId{0, 5}) == &b);
  t.remove(CommId{0, 5}, &a);  // another object's identity now: left as it is
  CHECK(t.find(CommId{0, 5}) == &b);
  t.remove(CommId{0, 5}, &b);
  CHECK(t.find(CommId{0, 5}) == nullptr);
  CHECK(t.size() == 0);
}

TEST_CASE("random puts and removes agree with a map, with colliding and spread identities") {
  for (std::uint64_t spread : {std::uint64_t{0}, std::uint64_t{1}}) {
    std::mt19937_64 random(spread + 12345);
    // Colliding: low words whose low 12 bits are all zeros or all ones, so that in any table of
    // up to 4096 entries they share two homes, the first and the last entry (long runs, runs
    // wrapping around the end, back shifts across it), differing in the high word; spread:
    // random low words.
    std::vector<CommId> all;
    for (int i = 0; i < 600; ++i) {
      std::uint64_t lo =
          spread ? random() : (static_cast<std::uint64_t>(i % 7) << 12) | (i % 2 ? 0xfff : 0);
      all.push_back(CommId{random(), lo});
    }
    std::vector<Thing> things(all.size());
    IdTable<Thing> table;
    std::map<std::pair<std::uint64_t, std::uint64_t>, Thing*> model;
    for (int step = 0; step < 4000; ++step) {
      std::size_t k = random() % all.size();
      const CommId& id = all[k];
      if (random() % 3 != 0) {
        table.put(id, &things[k]);
        model[{id.hi, id.lo}] = &things[k];
      } else {
        table.remove(id, &things[k]);
        model.erase({id.hi, id.lo});
      }
      if (step % 97 == 0) check_same(table, model, all);
    }
    check_same(table, model, all);
    for (std::size_t k = 0; k < all.size(); ++k) table.remove(all[k], &things[k]);
    CHECK(table.size() == 0);
    for (const CommId& id : all) CHECK(table.find(id) == nullptr);
  }
}
