#include "tuning.hpp"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace rangecomm::detail {

namespace {

// One parsed variable. The environment is read once per name and generation: getenv scans
// the whole environment, which would cost more than a small collective.
struct Setting {
  const char* name;
  bool set;
  long long value;
  unsigned generation;
};
std::vector<Setting> g_settings;
unsigned g_generation = 1;

void read(Setting& s) {
  std::string key = std::string("RANGECOMM_") + s.name;
  const char* text = std::getenv(key.c_str());
  char* end = nullptr;
  s.set = false;
  if (text != nullptr && *text != '\0') {
    s.value = std::strtoll(text, &end, 10);
    s.set = end != nullptr && *end == '\0';
  }
  s.generation = g_generation;
}

}  // namespace

long long tuning(const char* name, long long fallback) {
  Setting* found = nullptr;
  for (Setting& s : g_settings)
    if (s.name == name || std::strcmp(s.name, name) == 0) {
      found = &s;
      break;
    }
  if (found == nullptr) found = &g_settings.emplace_back(Setting{name, false, 0, 0});
  if (found->generation != g_generation) read(*found);
  return found->set ? found->value : fallback;
}

void tuning_changed() { ++g_generation; }

}  // namespace rangecomm::detail
