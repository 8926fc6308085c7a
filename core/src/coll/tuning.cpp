#include "tuning.hpp"

#include <cstdint>
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

// The last setting found for each call site, by the address of its name (a direct-mapped
// cache: a collective asks for up to four thresholds per call, and scanning every setting cost
// about 44 instructions each). A collision only sends a name to the scan again.
struct CacheSlot {
  const char* name = nullptr;
  size_t index = 0;
};
CacheSlot g_cache[64];

size_t find(const char* name) {
  // Call sites pass string literals, so the pointer nearly always matches; text is compared
  // only for a name not seen at this address yet.
  for (size_t i = 0; i < g_settings.size(); ++i)
    if (g_settings[i].name == name) return i;
  for (size_t i = 0; i < g_settings.size(); ++i)
    if (std::strcmp(g_settings[i].name, name) == 0) return i;
  g_settings.push_back(Setting{name, false, 0, 0});
  return g_settings.size() - 1;
}

}  // namespace

long long tuning(const char* name, long long fallback) {
  CacheSlot& slot = g_cache[(reinterpret_cast<std::uintptr_t>(name) >> 3) % 64];
  if (slot.name != name) slot = CacheSlot{name, find(name)};
  Setting& s = g_settings[slot.index];
  if (s.generation != g_generation) read(s);
  return s.set ? s.value : fallback;
}

void tuning_changed() { ++g_generation; }

}  // namespace rangecomm::detail
