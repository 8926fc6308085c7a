// Hints of library communicators (hints.cpp): what MPI_Comm_set_info, _get_info and creation
// with info give, as MPI gives them.
#pragma once

#include <mpi.h>

#include "handles/handles.h"

namespace rcshim {

// c's hints become `own` (a handle c now owns, or MPI_INFO_NULL); the old ones are let go.
void set_hints(FakeComm& c, MPI_Info own);
// to starts with from's hints, as a dup does (MPI_Comm_dup of a library communicator).
int copy_hints(const FakeComm& from, FakeComm& to);
// The same for a dup (dup true) or idup of the real communicator `real`: the world's hints are
// a snapshot shared until the program sets new ones on the world.
int inherit_hints(MPI_Comm real, FakeComm& to, bool dup);
// Adds the hints MPI gives what MPI_Comm_dup, _dup_with_info and _split_type make beyond its
// defaults (Open MPI 5.0 has two), where c lacks them.
void add_dup_hints(FakeComm& c);
// MPI_Comm_set_info: c's hints overlaid with those of `given` that MPI knows (others are
// ignored, as MPI ignores them).
int apply_hints(FakeComm& c, MPI_Info given);
// A communicator created with `given` (MPI_Comm_dup_with_info, split_type's info): MPI's
// defaults overlaid with given's hints as MPI takes them.
int create_with_hints(FakeComm& c, MPI_Info given);
// Exactly the hints MPI has for the real communicator `real` (one it replaces).
int take_hints(MPI_Comm real, FakeComm& to);
// MPI_Comm_get_info: a new info object with the hints in use (MPI's defaults when none were set).
int hints_in_use(const FakeComm& c, MPI_Info* out);
// Asks MPI how it treats hints (four creations from MPI_COMM_SELF), once; at MPI_Init under the
// acceleration modes, so that no later creation of the program pays for it, else at first need.
void probe_hints();
// At MPI_Finalize, after every library communicator is gone.
void free_hint_snapshots();

}  // namespace rcshim
