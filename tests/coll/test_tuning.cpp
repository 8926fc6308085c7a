// Algorithm thresholds: the environment overrides the fallback, a value that is not an integer
// is ignored, and the variable is read again after tuning_changed() (tests force algorithms
// that way between collectives).
#include <cstdlib>

#include "coll/tuning.hpp"
#include "mpi_test.hpp"

namespace {
rangecomm::detail::Tunable probe{"TEST_PROBE_THRESHOLD", 42};
rangecomm::detail::Tunable other{"TEST_OTHER_THRESHOLD", -7};
}  // namespace

TEST_CASE("a threshold is its fallback until the environment sets it") {
  unsetenv("RANGECOMM_TEST_PROBE_THRESHOLD");
  rangecomm::detail::tuning_changed();
  CHECK(probe() == 42);
  setenv("RANGECOMM_TEST_PROBE_THRESHOLD", "1000", 1);
  CHECK(probe() == 42);  // not read again until told
  rangecomm::detail::tuning_changed();
  CHECK(probe() == 1000);
  CHECK(other() == -7);  // another threshold keeps its own fallback
  setenv("RANGECOMM_TEST_PROBE_THRESHOLD", "-5", 1);
  rangecomm::detail::tuning_changed();
  CHECK(probe() == -5);
  unsetenv("RANGECOMM_TEST_PROBE_THRESHOLD");
  rangecomm::detail::tuning_changed();
  CHECK(probe() == 42);
}

TEST_CASE("a threshold that is not an integer leaves the fallback") {
  for (const char* text : {"", "12abc", "abc", "1.5"}) {
    setenv("RANGECOMM_TEST_PROBE_THRESHOLD", text, 1);
    rangecomm::detail::tuning_changed();
    INFO("value '" << text << "'");
    CHECK(probe() == 42);
  }
  unsetenv("RANGECOMM_TEST_PROBE_THRESHOLD");
  rangecomm::detail::tuning_changed();
}
