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

// A call with no such twin (a blocking collective never matches a nonblocking one; creation,
// files, windows): runs call(); meanwhile, if range operations need progress and MPI allows a
// second thread in it, a helper thread keeps calling core's progress. Core is never entered by
// both threads at once: the caller is inside MPI (not core) until call() returns, and the
// helper is joined before this returns. Without MPI_THREAD_MULTIPLE these calls do not advance
// range operations.
template <class Call>
int with_progress_thread(Call call) {
  if (!mpi_thread_multiple() || progress_rule_disabled() || !rangecomm::Progress_needed())
    return call();
  std::atomic<bool> done{false};
  std::thread helper([&done] {
    rangecomm::Backoff backoff;
    while (!done.load(std::memory_order_acquire) && rangecomm::Progress_needed()) {
      progress_locked();
      backoff.pause();
    }
  });
  int rc = call();
  done.store(true, std::memory_order_release);
  helper.join();
  return rc;
}

}  // namespace rcshim
