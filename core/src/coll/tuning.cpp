#include "coll/tuning.hpp"

#include <cstdlib>
#include <string>

namespace rangecomm::detail {

unsigned g_tuning_generation = 1;

void Tunable::read() {
  std::string key = std::string("RANGECOMM_") + name_;
  const char* text = std::getenv(key.c_str());
  value_ = fallback_;
  if (text != nullptr && *text != '\0') {
    char* end = nullptr;
    long long parsed = std::strtoll(text, &end, 10);
    if (*end == '\0') value_ = parsed;
  }
  generation_ = g_tuning_generation;
}

void tuning_changed() { ++g_tuning_generation; }

}  // namespace rangecomm::detail
