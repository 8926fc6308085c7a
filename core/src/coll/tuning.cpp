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
  // Call sites pass string literals, so the pointer nearly always matches; text is compared
  // only for a name not seen at this address yet.
  Setting* found = nullptr;
  for (Setting& s : g_settings)
    if (s.name == name) found = &s;
  for (size_t i = 0; found == nullptr && i < g_settings.size(); ++i)
    if (std::strcmp(g_settings[i].name, name) == 0) found = &g_settings[i];
  if (found == nullptr) found = &g_settings.emplace_back(Setting{name, false, 0, 0});
  if (found->generation != g_generation) read(*found);
  return found->set ? found->value : fallback;
}

void tuning_changed() { ++g_generation; }

}  // namespace rangecomm::detail
