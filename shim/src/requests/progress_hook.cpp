// MPI's progress loop advancing range operations (progress_rule.h, while_inside_mpi). Open MPI
// (4.1 and 5.0) calls every function registered with opal_progress_register, a symbol its
// libopen-pal exports, each time its progress loop turns: in every call that waits, whatever
// the communicator, window or file, on the thread that waits. Registering one is how Open MPI's
// own nonblocking collectives and transports are advanced, so a receive on a library
// communicator is matched while its process waits in MPI exactly as one on a real communicator
// would be. Found at run time (dlsym), so the library has no link-time tie to Open MPI, and
// registered only the first time a blocking call finds range operations pending: a program that
// never has any leaves Open MPI's loop as it was.
//
// The callback enters the library only while some thread is inside such a call (InsideMpi) and
// no thread is inside the library: the library's own MPI calls run the loop too, and entering
// the library from there would re-enter it (try_lock_library refuses then).
#include <dlfcn.h>

#include <atomic>
#include <mutex>

#include "base/library_lock.h"
#include "requests/progress_rule.h"

namespace rcshim {
namespace {

using Callback = int (*)();
using Registration = int (*)(Callback);

Registration find(const char* name) {
  return reinterpret_cast<Registration>(dlsym(RTLD_DEFAULT, name));
}

std::atomic<int> g_inside{0};  // threads inside a call that relies on the callback
std::once_flag g_registration;
std::atomic<bool> g_registered{false};

int advance_range_operations() {
  if (g_inside.load(std::memory_order_relaxed) == 0 || !rangecomm::Progress_needed()) return 0;
  if (!try_lock_library()) return 0;
  rangecomm::Progress();
  unlock_library();
  return 0;  // Open MPI reads a count of events only to decide whether to yield the core
}

}  // namespace

bool progress_hook_available() {
  static const bool found =
      find("opal_progress_register") != nullptr && find("opal_progress_unregister") != nullptr;
  return found;
}

InsideMpi::InsideMpi() {
  std::call_once(g_registration, [] {
    if (find("opal_progress_register")(advance_range_operations) == 0)  // OPAL_SUCCESS
      g_registered.store(true, std::memory_order_release);
  });
  g_inside.fetch_add(1, std::memory_order_relaxed);
}

InsideMpi::~InsideMpi() { g_inside.fetch_sub(1, std::memory_order_relaxed); }

void remove_progress_hook() {
  if (g_registered.exchange(false, std::memory_order_acq_rel))
    find("opal_progress_unregister")(advance_range_operations);
}

}  // namespace rcshim
