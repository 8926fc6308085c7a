// Algorithm thresholds, and algorithms chosen by name, each overridable by an environment
// variable (docs/collectives.md).
#pragma once

#include <cstddef>

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

// The algorithm a collective family is told to use: environment variable
// RANGECOMM_<FAMILY>_ALGORITHM names one of the family's algorithms. Read like a threshold (at
// the first use and after tuning_changed()). operator() gives the index of the name in `names`,
// or -1 when the variable is unset or empty (the family chooses), or names no algorithm of the
// family (then said on stderr when read, with the names there are). Like a threshold, it must be
// the same on every process: each chooses its algorithm alone.
class Forced {
 public:
  template <std::size_t N>
  constexpr Forced(const char* family, const char* const (&names)[N])
      : family_(family), names_(names), count_(static_cast<int>(N)) {}
  int operator()() {
    if (generation_ != g_tuning_generation) read();
    return value_;
  }

 private:
  void read();
  const char* family_;
  const char* const* names_;
  int count_;
  int value_ = -1;
  unsigned generation_ = 0;
};

// The family's choice: `forced` when that names an algorithm that can run the call (`fits`),
// otherwise `chosen`, the algorithm the family's own rules pick.
template <class Algorithm, class Fits>
Algorithm select(Forced& forced, Fits fits, Algorithm chosen) {
  int named = forced();
  if (named >= 0 && fits(static_cast<Algorithm>(named))) return static_cast<Algorithm>(named);
  return chosen;
}

// Makes the next lookups read the environment again (tests that force an algorithm change the
// variables between collectives).
void tuning_changed();

}  // namespace rangecomm::detail
