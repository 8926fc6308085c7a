#include "engine/progress.hpp"

#include <vector>

#include "rangecomm/embedding.hpp"
#include "rangecomm/request.hpp"

namespace rangecomm::detail {

ProgressCounter g_progress_needed;
void (*g_pause_hook)() = nullptr;
bool g_background_progress = false;

namespace {

// Constant-initialised, so registrations from other files' static initialisers find it ready.
Poller g_pollers[static_cast<int>(PollerSlot::count)] = {};
// Freed, incomplete operations. Never destroyed: those still listed at exit stay reachable.
std::vector<Operation*>& g_orphans = *new std::vector<Operation*>;

}  // namespace

void register_poller(PollerSlot slot, Poller poll) { g_pollers[static_cast<int>(slot)] = poll; }

void adopt_orphan(Operation* op) {
  g_orphans.push_back(op);
  ++g_progress_needed;
}

void progress() {
  for (Poller poll : g_pollers)
    if (poll != nullptr) poll();
  sweep_finished(g_orphans, [](Operation* op) {
    MPI_Status st;
    int rc;
    return op->test(&st, &rc);
  });
}

}  // namespace rangecomm::detail

namespace rangecomm {
void Set_threaded(void (*pause)()) { detail::g_pause_hook = pause; }
void Set_background_progress(bool on) { detail::g_background_progress = on; }
}  // namespace rangecomm
