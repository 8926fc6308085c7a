// Algorithm thresholds, each overridable by an environment variable (docs/collectives.md).
#pragma once

namespace rangecomm::detail {

// The value of environment variable RANGECOMM_<name> if set (an integer), else fallback. The
// variable is read at its first use and again after tuning_changed(). `name` must outlive the
// process (a string literal).
long long tuning(const char* name, long long fallback);

// Makes the next tuning() calls read the environment again (tests that force an algorithm
// change the variables between collectives).
void tuning_changed();

}  // namespace rangecomm::detail
