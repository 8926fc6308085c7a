// MPI_COMM_WORLD's error handler and hints, kept for the communicators made from it. A range
// inherits its parent's error handler; asking MPI for the world's (MPI_Comm_get_errhandler and the
// MPI_Errhandler_free of that reference) was about a tenth of a range's creation. The cache
// holds only predefined handlers (no reference to keep alive) and is stamped with a version
// that the generated wrappers of the calls that set an error handler bump after MPI has set
// one on the world, so a stale entry is never used: an entry filled from a read that raced
// with a change carries the version from before the change.
#pragma once

#include <mpi.h>

#include <atomic>

namespace rcshim {

extern std::atomic<unsigned> g_world_errhandler_version;  // mpix.cpp

extern std::atomic<unsigned> g_world_info_version;  // hints.cpp

// Called by the generated wrappers after MPI set the error handler of a real communicator.
// On the pass-through path: one compare, and an atomic add only for MPI_COMM_WORLD.
inline void errhandler_set(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) g_world_errhandler_version.fetch_add(1, std::memory_order_acq_rel);
}

// The same after MPI_Comm_set_info: the hints the library keeps for the world are stale.
inline void info_set(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) g_world_info_version.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace rcshim
