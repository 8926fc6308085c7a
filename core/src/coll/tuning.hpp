// Algorithm thresholds, each overridable by an environment variable (docs/collectives.md).
#pragma once

namespace rangecomm::detail {

// Bumped by tuning_changed(); every Tunable compares it with the generation it last read.
extern unsigned g_tuning_generation;

// One threshold: the value of environment variable RANGECOMM_<name> if set (an integer), else
// the fallback. Declared once per threshold at namespace scope (constant-initialised, so it is
// usable from any static constructor). The environment is read at the first use and again after
// tuning_changed(); otherwise a lookup is one comparison, as getenv scans the whole environment,
// which would cost more than a small collective. `name` must outlive the process (a literal).
class Tunable {
 public:
  constexpr Tunable(const char* name, long long fallback) : name_(name), fallback_(fallback) {}
  long long operator()() {
    if (generation_ != g_tuning_generation) read();
    return value_;
  }

 private:
  void read();
  const char* name_;
  long long fallback_;
  long long value_ = 0;
  unsigned generation_ = 0;  // never current: the first use reads
};

// Makes the next lookups read the environment again (tests that force an algorithm change the
// variables between collectives).
void tuning_changed();

}  // namespace rangecomm::detail
