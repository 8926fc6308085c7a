// The collectives' local steps. The local reduction gives bit for bit what MPI_Reduce_local
// gives, on the pairs it reduces itself (short vectors of SUM, PROD, MAX, MIN on integer and
// floating types: extremes, overflow, NaN, infinities, signed zeros) and on those it hands to
// MPI. The local copy moves exactly the bytes MPI would, also for types whose data does not
// start at their lower bound.
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "sched/schedule.hpp"
#include "util/reduce_local.hpp"

namespace {

template <class T>
std::vector<T> values(int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<T> special;
  if constexpr (std::is_floating_point_v<T>) {
    special = {T(0),
               T(-0.0),
               std::numeric_limits<T>::quiet_NaN(),
               std::numeric_limits<T>::infinity(),
               -std::numeric_limits<T>::infinity(),
               std::numeric_limits<T>::max(),
               std::numeric_limits<T>::lowest(),
               T(1.5),
               T(-2.25)};
  } else {
    special = {T(0),
               T(1),
               T(-1),
               std::numeric_limits<T>::max(),
               std::numeric_limits<T>::min(),
               T(std::numeric_limits<T>::max() / 2 + 1)};
  }
  std::vector<T> v(static_cast<size_t>(count));
  for (T& x : v) {
    if (rng() % 3 == 0) {
      x = special[rng() % special.size()];
    } else if constexpr (std::is_floating_point_v<T>) {
      x = static_cast<T>(std::uniform_real_distribution<double>(-1e6, 1e6)(rng));
    } else {
      x = static_cast<T>(rng());
    }
  }
  return v;
}

struct OpCase {
  MPI_Op op;
  const char* name;
};

template <class T>
void compare(MPI_Datatype type, const char* type_name, const std::vector<OpCase>& ops) {
  for (const OpCase& o : ops) {
    for (int count : {1, 2, 7, rangecomm::detail::kReduceLocalInlineCount,
                      rangecomm::detail::kReduceLocalInlineCount + 1, 200}) {
      for (unsigned seed = 1; seed <= 4; ++seed) {
        std::vector<T> in = values<T>(count, seed), out = values<T>(count, seed + 100);
        std::vector<T> expected = out, got = out;
        REQUIRE(MPI_Reduce_local(in.data(), expected.data(), count, type, o.op) == MPI_SUCCESS);
        REQUIRE(rangecomm::detail::reduce_local(in.data(), got.data(), count, type, o.op) ==
                MPI_SUCCESS);
        INFO(o.name << " on " << type_name << ", " << count << " elements, seed " << seed);
        CHECK(std::memcmp(expected.data(), got.data(), sizeof(T) * count) == 0);
      }
    }
  }
}

const std::vector<OpCase> kArithmetic = {
    {MPI_SUM, "MPI_SUM"}, {MPI_PROD, "MPI_PROD"}, {MPI_MAX, "MPI_MAX"}, {MPI_MIN, "MPI_MIN"}};
const std::vector<OpCase> kBitwise = {{MPI_BAND, "MPI_BAND"}, {MPI_BXOR, "MPI_BXOR"}};

}  // namespace

TEST_CASE("local reduction matches MPI_Reduce_local on integer types") {
  compare<int>(MPI_INT, "MPI_INT", kArithmetic);
  compare<long>(MPI_LONG, "MPI_LONG", kArithmetic);
  compare<long long>(MPI_LONG_LONG, "MPI_LONG_LONG", kArithmetic);
  compare<unsigned>(MPI_UNSIGNED, "MPI_UNSIGNED", kArithmetic);
  compare<unsigned long>(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", kArithmetic);
  compare<unsigned long long>(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", kArithmetic);
  // handed to MPI: other operations and types
  compare<int>(MPI_INT, "MPI_INT", kBitwise);
  compare<short>(MPI_SHORT, "MPI_SHORT", kArithmetic);
}

TEST_CASE("local reduction matches MPI_Reduce_local on floating types") {
  compare<double>(MPI_DOUBLE, "MPI_DOUBLE", kArithmetic);
  compare<float>(MPI_FLOAT, "MPI_FLOAT", kArithmetic);
}

TEST_CASE("local reduction of nothing leaves the output alone") {
  int in = 5, out = 7;
  REQUIRE(rangecomm::detail::reduce_local(&in, &out, 0, MPI_INT, MPI_SUM) == MPI_SUCCESS);
  CHECK(out == 7);
}

TEST_CASE("local copy of a type whose data lies past its lower bound") {
  // One int at byte 4 of an element that starts at 0 and is 4 bytes long: size 4 and extent 4
  // with lower bound 0, but not a plain array of ints (element i's data is at 4i + 4).
  int block = 1;
  MPI_Aint displ = 4;
  MPI_Datatype shifted, type;
  REQUIRE(MPI_Type_create_struct(1, &block, &displ, std::vector<MPI_Datatype>{MPI_INT}.data(),
                                 &shifted) == MPI_SUCCESS);
  REQUIRE(MPI_Type_create_resized(shifted, 0, 4, &type) == MPI_SUCCESS);
  REQUIRE(MPI_Type_commit(&type) == MPI_SUCCESS);
  for (int count : {1, 3, 10}) {
    std::vector<int> in(static_cast<size_t>(count) + 1);
    std::vector<int> expected(in.size(), -1), got(in.size(), -1);
    for (size_t i = 0; i < in.size(); ++i) in[i] = 100 + static_cast<int>(i);
    REQUIRE(MPI_Sendrecv(in.data(), count, type, 0, 0, expected.data(), count, type, 0, 0,
                         MPI_COMM_SELF, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(rangecomm::detail::local_copy(in.data(), count, type, got.data(), count, type) ==
            MPI_SUCCESS);
    INFO(count << " elements");
    CHECK(got == expected);
    CHECK(got[0] == -1);  // the bytes before the first element's data are not the type's
  }
  MPI_Type_free(&type);
  MPI_Type_free(&shifted);
}
