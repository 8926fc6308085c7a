// The library lock: under MPI_THREAD_MULTIPLE every path that touches the library's state (fake
// handles, core) runs under one lock, taken where a wrapper has told a fake handle from a real
// one, so the pass-through path of real handles never sees it. Blocking waits inside the library
// poll, and between polls release the lock (core's Backoff, which the shim's waits use too,
// calls pause_library()), so a thread blocked on one communicator never stops another thread's
// calls. A thread that calls into MPI where MPI may block on other processes (a real collective for
// the fallback communicator, an agreement on a real parent) releases it for that call (Unlocked).
// Below MPI_THREAD_MULTIPLE all of this is one predictable branch on two flags, except while
// the library is advanced from inside a blocking MPI call (g_guarded).
#pragma once

#include <atomic>

namespace rcshim {

extern bool g_threaded;  // the program asked for MPI_THREAD_MULTIPLE: set once at MPI_Init
// Set while a program that did not ask for threads is inside an MPI call during which the
// library is advanced from inside MPI (MPI's progress callback on this thread, or a helper
// thread: requests/progress_rule.h). MPI may enter the library's paths from inside that call
// (callbacks, ROMIO's calls on library communicators), and those then take the lock too. Only
// the program's thread writes or reads it.
extern bool g_guarded;
inline bool lock_active() { return g_threaded || g_guarded; }
// Sets g_guarded for its lifetime (programs without threads), restoring what it was.
class Guarded {
 public:
  Guarded() : before_(!g_threaded && g_guarded) {
    if (!g_threaded) g_guarded = true;
  }
  ~Guarded() {
    if (!g_threaded) g_guarded = before_;
  }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;

 private:
  bool before_;
};

// Recursive: a locked path may call another one (MPI_Comm_dup on a fake handle copies
// attributes through MPI calls that come back into the library).
void lock_library();
void unlock_library();
// Releases the lock entirely when this thread holds it; returns how deep it was held (0: not).
int release_library();
void reacquire_library(int depth);
// Takes the lock only if no thread holds it, this one included: for MPI's progress callback,
// which must not enter the library from inside the library's own MPI calls.
bool try_lock_library();
// Between two polls of a wait: lets other threads into the library.
void pause_library();

// Whether the library's progress thread runs (RANGECOMM_PROGRESS=thread; it and these are
// requests/progress_thread.*). The program's threads inside the library advance it themselves,
// so the progress thread keeps away while any is (g_inside_library counts them); the last one
// to leave wakes it when it sleeps while something is pending.
extern bool g_progress_thread;
extern std::atomic<int> g_inside_library;
void wake_progress_thread_if_idle();

class Locked {
 public:
  Locked() : locked_(lock_active()), counted_(locked_ && g_progress_thread) {
    if (!locked_) return;
    if (counted_) g_inside_library.fetch_add(1, std::memory_order_relaxed);
    lock_library();
  }
  ~Locked() {
    if (!locked_) return;
    unlock_library();
    // counted_, not g_progress_thread: the thread may have started or stopped meanwhile.
    if (counted_ && g_inside_library.fetch_sub(1, std::memory_order_relaxed) == 1)
      wake_progress_thread_if_idle();
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  bool locked_;
  bool counted_;  // it added to g_inside_library
};

class Unlocked {
 public:
  Unlocked() : depth_(lock_active() ? release_library() : 0) {}
  ~Unlocked() {
    if (depth_ > 0) reacquire_library(depth_);
  }
  Unlocked(const Unlocked&) = delete;
  Unlocked& operator=(const Unlocked&) = delete;

 private:
  int depth_;
};

// rangecomm::Progress() under the lock, for paths that start outside it (the progress rule).
void progress_locked();

}  // namespace rcshim
