// Asynchronous progress (RANGECOMM_PROGRESS=thread): a thread of the library's own that
// advances the library's pending operations (collective schedules, receives waiting in the
// matching engine, first contacts) while the program is outside MPI, so that a nonblocking
// collective on a library communicator runs while the program computes, as LibNBC meant it to.
// It sleeps while nothing is pending. Off unless asked for; docs/collectives.md has its costs.
//
// The library asks MPI for MPI_THREAD_MULTIPLE when it is asked for (entry/lifecycle.cpp; the
// program is told the level it asked for) and takes its lock on every path (g_threaded); the
// thread enters the library under that lock like any other thread.
#pragma once

#include "base/library_lock.h"  // g_progress_thread, wake_progress_thread_if_idle

namespace rcshim {

// RANGECOMM_PROGRESS=thread is set (read once; before MPI_Init).
bool progress_thread_wanted();
// Starts the thread (after MPI_Init, with MPI at MPI_THREAD_MULTIPLE), and stops it (in
// MPI_Finalize, before the library shuts down; not under the library lock).
void start_progress_thread();
void stop_progress_thread();

}  // namespace rcshim
