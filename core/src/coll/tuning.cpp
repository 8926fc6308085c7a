#include "coll/tuning.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
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

void Forced::read() {
  std::string key = std::string("RANGECOMM_") + family_ + "_ALGORITHM";
  const char* text = std::getenv(key.c_str());
  value_ = -1;
  if (text != nullptr && *text != '\0') {
    for (int i = 0; i < count_; ++i)
      if (std::strcmp(text, names_[i]) == 0) value_ = i;
    if (value_ < 0) {
      std::string known;
      for (int i = 0; i < count_; ++i) known += std::string(i ? ", " : "") + names_[i];
      std::fprintf(stderr, "rangecomm: %s=%s names no algorithm (%s); the library chooses\n",
                   key.c_str(), text, known.c_str());
    }
  }
  generation_ = g_tuning_generation;
}

void tuning_changed() { ++g_tuning_generation; }

}  // namespace rangecomm::detail
