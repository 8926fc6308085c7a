#include "requests/progress_thread.h"

#include <time.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "base/library_lock.h"
#include "rangecomm/embedding.hpp"
#include "rangecomm/request.hpp"

namespace rcshim {

bool g_progress_thread = false;
std::atomic<int> g_inside_library{0};

namespace {

std::thread g_thread;
std::mutex g_sleep_mutex;
std::condition_variable g_wake;
std::atomic<bool> g_sleeping{false};
std::atomic<bool> g_stop{false};

// Polls in a row, yielding the core between them, before the thread sleeps between polls: a
// process whose peers are slow does not keep a core busy for them.
constexpr int kYieldingPolls = 64;
constexpr long kPollSleepNs = 20 * 1000;
// The longest sleep with nothing pending, a safety net under the wake-ups.
constexpr auto kIdleSleep = std::chrono::milliseconds(100);

// Work for the thread: something pending, and no thread of the program inside the library
// (which advances it itself, and would only meet the thread at the lock and on its core).
bool wanted() {
  return rangecomm::Progress_needed() && g_inside_library.load(std::memory_order_relaxed) == 0;
}

void advance_while_pending() {
  int polls = 0;
  while (!g_stop.load(std::memory_order_relaxed) && wanted()) {
    lock_library();
    rangecomm::Progress();
    unlock_library();
    if (++polls <= kYieldingPolls) {
      std::this_thread::yield();
    } else {
      timespec pause{0, kPollSleepNs};
      nanosleep(&pause, nullptr);
    }
  }
}

void run() {
  while (!g_stop.load(std::memory_order_relaxed)) {
    advance_while_pending();
    std::unique_lock<std::mutex> lock(g_sleep_mutex);
    // Announce the sleep before the last look (a waker updates the count, then looks at the
    // flag: with the fences one of the two sees the other).
    g_sleeping.store(true, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!wanted() && !g_stop.load(std::memory_order_relaxed)) g_wake.wait_for(lock, kIdleSleep);
    g_sleeping.store(false, std::memory_order_relaxed);
  }
}

}  // namespace

bool progress_thread_wanted() {
  static const bool wanted = [] {
    const char* v = std::getenv("RANGECOMM_PROGRESS");
    return v != nullptr && std::strcmp(v, "thread") == 0;
  }();
  return wanted;
}

void start_progress_thread() {
  if (g_progress_thread) return;
  rangecomm::Set_background_progress(true);
  g_stop.store(false);
  g_thread = std::thread(run);
  g_progress_thread = true;
}

void stop_progress_thread() {
  if (!g_progress_thread) return;
  {
    std::lock_guard<std::mutex> lock(g_sleep_mutex);
    g_stop.store(true);
  }
  g_wake.notify_one();
  g_thread.join();
  g_progress_thread = false;
  rangecomm::Set_background_progress(false);
}

void wake_progress_thread_if_idle() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!g_sleeping.load(std::memory_order_relaxed) || !rangecomm::Progress_needed()) return;
  std::lock_guard<std::mutex> lock(g_sleep_mutex);
  g_wake.notify_one();
}

}  // namespace rcshim
