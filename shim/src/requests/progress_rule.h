// MPI's progress rule across the two kinds of communicator: while a process blocks in a call on
// real handles, its outstanding range operations must keep moving, or a program that is correct
// with real communicators could deadlock. The generated wrappers call rc_blocking_MPI_X only
// while rangecomm::Progress_needed(); tools/mpi_api.py (progress_kind) says which of these ways
// each blocking call takes, and the generator writes them (docs/shim-design.md, "The progress
// rule"). Only what needs more than a template is written by hand (progress_rule.cpp).
#pragma once

#include <mpi.h>

#include <atomic>
#include <thread>

#include "base/library_lock.h"
#include "rangecomm/embedding.hpp"

namespace rcshim {

// Waits for a real request while advancing range operations.
int wait_real(MPI_Request* request, MPI_Status* status);
// RANGECOMM_SHIM_NO_PROGRESS_RULE=1 turns the rule off, only to show that the test program
// tests/shim/range_progress.c then deadlocks. Read once; never on the pass-through path.
bool progress_rule_disabled();
// Whether MPI was initialised with MPI_THREAD_MULTIPLE.
bool mpi_thread_multiple();

// A point-to-point call with a nonblocking twin that matches what the peer calls (MPI_Send and
// MPI_Isend match the same receives): start the twin, then wait while core advances.
template <class Start>
int as_nonblocking(MPI_Status* status, Start start) {
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = start(&request);
  return rc == MPI_SUCCESS ? wait_real(&request, status) : rc;
}

// A call a program polls in a loop (MPI_Iprobe): each poll advances core first.
inline void progress_before_poll() {
  if (!progress_rule_disabled()) progress_locked();
}

// MPI's own progress loop calling the library (progress_hook.cpp): Open MPI runs the functions
// registered with opal_progress_register in every call that waits, and the library registers
// one, found at run time, the first time a call below needs it. Other MPIs have none.
bool progress_hook_available();
// While one lives, the callback advances the library when MPI's progress loop runs on any
// thread that is not inside the library itself.
class InsideMpi {
 public:
  InsideMpi();
  ~InsideMpi();
  InsideMpi(const InsideMpi&) = delete;
  InsideMpi& operator=(const InsideMpi&) = delete;

 private:
  Guarded guarded_;
};
// At MPI_Finalize, before MPI ends: takes the callback out of MPI's loop.
void remove_progress_hook();

// A call with no such twin (a blocking collective never matches a nonblocking one; creation,
// files, windows, MPI_Finalize) runs as it is, and range operations move on from inside it:
// - where MPI has a progress callback, MPI's own waiting advances them on the calling thread;
// - otherwise, where MPI allows a second thread in it (MPI_THREAD_MULTIPLE, which the library
//   asks of MPI under the acceleration modes: entry/lifecycle.cpp), a helper thread advances
//   them until call() returns;
// - otherwise (an MPI without a callback, below MPI_THREAD_MULTIPLE: MPICH in mode off) they
//   wait until the call returns.
// Either way the library is entered by one thread at a time: the lock is taken by the callback
// and the helper, and by the library's own paths that MPI enters from inside call() (g_guarded).
template <class Call>
int while_inside_mpi(Call call) {
  // The library's progress thread, when it runs, advances them already.
  if (progress_rule_disabled() || !rangecomm::Progress_needed() || g_progress_thread) return call();
  if (progress_hook_available()) {
    InsideMpi inside;
    return call();
  }
  if (!mpi_thread_multiple()) return call();
  Guarded guarded;
  std::atomic<bool> done{false};
  std::thread helper([&done] {
    rangecomm::Backoff backoff;
    while (!done.load(std::memory_order_acquire) && rangecomm::Progress_needed()) {
      lock_library();
      rangecomm::Progress();
      unlock_library();
      backoff.pause();
    }
  });
  int rc = call();
  done.store(true, std::memory_order_release);
  helper.join();
  return rc;
}

}  // namespace rcshim
