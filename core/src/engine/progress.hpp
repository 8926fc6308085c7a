// Progress: the one call that moves every operation the library runs itself, and what a wait
// does between two polls. It knows no communicator: the rooms above register what they advance
// (the matching engine its lanes, the schedule engine its running collectives), so every
// dependency points down to here and none back up.
#pragma once

#include <sched.h>

#include "engine/operation.hpp"

namespace rangecomm::detail {

// What progress() advances besides orphaned operations, in this order: messages first (they
// feed the collectives' receives), then the collectives themselves.
enum class PollerSlot { matching, collectives, count };
// Advances one room's operations once, without blocking.
using Poller = void (*)();
// Called once per slot by the room that owns it, from a static initialiser of its file.
void register_poller(PollerSlot slot, Poller poll);

// Advances everything once, never blocking: the registered pollers, then orphaned operations.
void progress();

// Keeps a freed operation alive and advanced until it completes (MPI_Request_free semantics):
// takes over the caller's reference.
void adopt_orphan(Operation* op);

// True when a blocking call must not block inside MPI: some operation of this process needs
// progress, or the library runs under a lock shared by threads (Set_threaded), which a thread
// blocked inside MPI would hold.
bool engine_busy();

// Set_threaded's pause (the shim's: it releases the library lock for a moment), or null.
extern void (*g_pause_hook)();

// How every wait loop gives way between two polls. Under Set_threaded each pause runs the hook,
// so that a thread waiting here never holds the library lock that another thread needs to send
// what it waits for. Otherwise busy-polling starves the other ranks when there are more ranks
// than cores: after a burst of polls, the core is given away between polls.
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
