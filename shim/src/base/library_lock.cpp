#include "base/library_lock.h"

#include <sched.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "rangecomm/request.hpp"

namespace rcshim {

bool g_threaded = false;
bool g_guarded = false;

namespace {

std::mutex g_mutex;
std::atomic<std::thread::id> g_owner{};
int g_depth = 0;  // only touched by the owner

bool held_here() { return g_owner.load(std::memory_order_relaxed) == std::this_thread::get_id(); }

}  // namespace

void lock_library() {
  if (held_here()) {
    ++g_depth;
    return;
  }
  g_mutex.lock();
  g_owner.store(std::this_thread::get_id(), std::memory_order_relaxed);
  g_depth = 1;
}

void unlock_library() {
  if (--g_depth > 0) return;
  g_owner.store(std::thread::id(), std::memory_order_relaxed);
  g_mutex.unlock();
}

int release_library() {
  if (!held_here()) return 0;
  int depth = g_depth;
  g_depth = 0;
  g_owner.store(std::thread::id(), std::memory_order_relaxed);
  g_mutex.unlock();
  return depth;
}

void reacquire_library(int depth) {
  g_mutex.lock();
  g_owner.store(std::this_thread::get_id(), std::memory_order_relaxed);
  g_depth = depth;
}

bool try_lock_library() {
  if (held_here() || !g_mutex.try_lock()) return false;
  g_owner.store(std::this_thread::get_id(), std::memory_order_relaxed);
  g_depth = 1;
  return true;
}

void pause_library() {
  int depth = release_library();
  sched_yield();
  if (depth > 0) reacquire_library(depth);
}

void progress_locked() {
  Locked locked;
  rangecomm::Progress();
}

}  // namespace rcshim
