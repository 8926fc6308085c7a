// Algorithm thresholds, each overridable by an environment variable (docs/collectives.md).
#pragma once

namespace rangecomm::detail {

// The value of environment variable RANGECOMM_<name> if set (an integer), else fallback. Read
// on every call, so tests can force an algorithm by setting the variable between calls.
long long tuning(const char* name, long long fallback);

}  // namespace rangecomm::detail
