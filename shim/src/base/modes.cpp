// RANGECOMM_MODE, read once at MPI_Init (modes.h).
#include "base/modes.h"

#include <cstdlib>
#include <cstring>

namespace rcshim {

int g_accelerate = 0;
int g_shadow = 0;
std::atomic<int> g_forwarding{0};
thread_local bool t_forwarding = false;

void read_mode() {
  const char* v = std::getenv("RANGECOMM_MODE");
  g_shadow = v != nullptr && std::strcmp(v, "shadow") == 0;
  g_accelerate = g_shadow || (v != nullptr && std::strcmp(v, "accelerate") == 0);
}

}  // namespace rcshim
