// How every wait loop of core gives way between two polls.
#pragma once

#include <sched.h>

namespace rangecomm::detail {

// Set_threaded's pause (the shim's: it releases the library lock for a moment), or null.
extern void (*g_pause_hook)();

// Under Set_threaded, each pause runs the hook, so that a thread waiting here never holds the
// library lock that another thread needs to send what it waits for. Otherwise busy-polling
// starves the other ranks when there are more ranks than cores: after a burst of polls, the core
// is given away between polls.
class Backoff {
 public:
  explicit Backoff(int burst = 64) : burst_(burst) {}
  void pause() {
    if (g_pause_hook != nullptr) return g_pause_hook();
    if (++polls_ > burst_) sched_yield();
  }

 private:
  int burst_;
  int polls_ = 0;
};

}  // namespace rangecomm::detail
