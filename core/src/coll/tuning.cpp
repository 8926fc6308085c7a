#include "tuning.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace rangecomm::detail {

long long tuning(const char* name, long long fallback) {
  std::string key = std::string("RANGECOMM_") + name;
  const char* value = std::getenv(key.c_str());
  if (value == nullptr || *value == '\0') return fallback;
  char* end = nullptr;
  long long v = std::strtoll(value, &end, 10);
  return end && *end == '\0' ? v : fallback;
}

}  // namespace rangecomm::detail
