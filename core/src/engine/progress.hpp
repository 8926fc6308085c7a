// Progress: the one call that moves every operation the library runs itself, and the backoff
// of every wait. It knows no communicator: the rooms above register what they advance
// (the matching engine its lanes, the schedule engine its running collectives), so every
// dependency points down to here and none back up.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/operation.hpp"
#include "rangecomm/embedding.hpp"

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

// One sweep of a list of operations the engine holds a reference to and counts in
// g_progress_needed: each that finished(op) reports complete is dropped (order not kept), its
// reference released and its count taken back.
template <class Op, class Finished>
void sweep_finished(std::vector<Op*>& ops, Finished finished) {
  for (std::size_t i = 0; i < ops.size();) {
    if (finished(ops[i])) {
      ops[i]->unref();
      ops[i] = ops.back();
      ops.pop_back();
      --g_progress_needed;
    } else {
      ++i;
    }
  }
}

// True when a blocking call must not block inside MPI: some operation of this process needs
// progress, or the library runs under a lock shared by threads (Set_threaded), which a thread
// blocked inside MPI would hold. Inline: every small blocking collective asks.
inline bool engine_busy() { return g_progress_needed.any() || g_pause_hook != nullptr; }

// Set_background_progress: nonblocking collectives are never handed over to MPI whole.
extern bool g_background_progress;

// The one backoff of every wait loop (rangecomm/embedding.hpp, shared with the shim).
using rangecomm::Backoff;

}  // namespace rangecomm::detail
