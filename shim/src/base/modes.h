// RANGECOMM_MODE (modes.cpp): which acceleration mode runs, and which creation calls MPI makes
// of itself (those stay MPI's). The acceleration itself is accelerate/accelerate.cpp.
#pragma once

#include <mpi.h>

#include <atomic>

namespace rcshim {

// Non-zero under RANGECOMM_MODE=accelerate or shadow: communicators made from real ones become
// ranges where they can. g_shadow (RANGECOMM_MODE=shadow): also every other intracommunicator
// MPI makes for the program. Read once, at MPI_Init.
extern int g_accelerate;
extern int g_shadow;
void read_mode();

// Creation calls MPI itself makes while it runs one the shim passed on to it are MPI's own:
// MPICH's MPI_Comm_split_type(MPIX_COMM_TYPE_NEIGHBORHOOD) runs ROMIO, which calls MPI_Comm_dup,
// MPI_Comm_split, MPI_Comm_create (and MPI_File_open's dup) by their public names and takes the
// results as MPICH's own communicators. A thread marks such a call while it runs
// (ForwardedToMpi); the creation hooks read the count only under the acceleration modes, and the
// thread-local flag only while some thread is marked, so the pass-through path reads neither,
// and other threads' creations meanwhile stay the library's.
extern std::atomic<int> g_forwarding;   // threads inside a marked call
extern thread_local bool t_forwarding;  // this thread is
inline bool called_by_mpi() {
  return g_forwarding.load(std::memory_order_relaxed) != 0 && t_forwarding;
}
class ForwardedToMpi {
 public:
  explicit ForwardedToMpi(bool mark) : mark_(mark && !t_forwarding) {
    if (!mark_) return;
    g_forwarding.fetch_add(1, std::memory_order_relaxed);
    t_forwarding = true;
  }
  ~ForwardedToMpi() {
    if (!mark_) return;
    t_forwarding = false;
    g_forwarding.fetch_sub(1, std::memory_order_relaxed);
  }
  ForwardedToMpi(const ForwardedToMpi&) = delete;
  ForwardedToMpi& operator=(const ForwardedToMpi&) = delete;

 private:
  bool mark_;
};

}  // namespace rcshim
