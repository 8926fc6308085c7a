// A thread that advances range operations while the calling thread blocks inside MPI in a call
// that cannot be turned into a nonblocking one (the progress rule for collectives).
#pragma once

#include <atomic>
#include <thread>

#include "accelerate.h"
#include "handles.h"
#include "requests.h"

namespace rcshim {

// Runs call(); meanwhile, if range operations need progress and MPI allows a second thread in
// it, a helper thread keeps calling core's progress. Core is never entered by both threads at
// once: the caller is inside MPI (not core) until call() returns, and the helper is joined
// before this returns.
template <class Call>
int with_progress_thread(Call call) {
  if (!mpi_thread_multiple() || progress_rule_disabled() || !rangecomm::Progress_needed())
    return call();
  std::atomic<bool> done{false};
  std::thread helper([&done] {
    Backoff backoff;
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
