// Where ranges live (roots.cpp): MPI_COMM_WORLD's range and the shim's private channels, and
// how any communicator maps into the world's range (a real parent's mirror among it).
#pragma once

#include <mpi.h>

#include <vector>

#include "rangecomm/rangecomm.hpp"

namespace rcshim {

// At MPI_Init, collective over MPI_COMM_WORLD: the world's range (an error of core's is
// returned), the private channels. thread_multiple: what MPI provides (mpi_thread_multiple()).
int attach_roots(bool thread_multiple);
// At MPI_Finalize, after every library communicator is released: lets go of the mirrors, the
// world's range and the channels.
void detach_roots();

// MPI_COMM_WORLD as a range communicator: every range of the shim lives on its channel.
// Null until MPI_Init/MPI_Init_thread went through the shim.
const rangecomm::Comm& world_range();
// Private duplicates of MPI_COMM_WORLD: one for the fallback communicators' creation, one for
// MPI_Comm_create_group on groups that are not ranges (user tags).
MPI_Comm fallback_channel();
MPI_Comm group_channel();

// Where the ranges of a communicator live: rank r of it is rank in_range(r) of range. A fake
// communicator is its own range (first 0, stride 1); a real one maps into MPI_COMM_WORLD's
// range: by first + r * stride when its ranks are an increasing arithmetic progression of
// world ranks (dups of MPI_COMM_WORLD, MPI_COMM_SELF, order-keeping splits, ...), through the
// table `world` otherwise (then what it makes are general groups of the world).
struct AffineMap;
struct RangeParent {
  // Borrowed from the parent's handle (a communicator of the library, or the world's range),
  // which outlives the call using it: no reference count to touch on the creation path.
  const rangecomm::Comm* range = nullptr;
  // The parent itself as a library communicator whose identity its members share: a library
  // communicator's own, the world's range, or a real communicator's agreed mirror
  // (agree_mirror). Null for a real communicator without one yet.
  const rangecomm::Comm* self = nullptr;
  AffineMap* map = nullptr;  // a real communicator's cached facts (null: the world, the library's)
  int first = 0, stride = 1, size = 0, rank = MPI_UNDEFINED;
  const std::vector<int>* world = nullptr;  // world rank of each rank, for irregular parents
  int in_range(int r) const { return world ? (*world)[r] : first + r * stride; }
  bool affine() const { return world == nullptr; }
};
int parent_of(MPI_Comm comm, const char* fn, RangeParent* out);
// The range of ranks first..last (step stride) of the parent's communicator, made with
// `levels` (its nesting below the parent's range, part of its identity), built in *out's memory
// when core can reuse it (spare_range) and otherwise into a new one. Errors are raised on comm
// (the parent's handle); *out then holds no new communicator (the caller drops what it holds).
int split_parent(MPI_Comm comm, const RangeParent& p, int first, int last, int stride, int levels,
                 rangecomm::Comm* out);
// parent_of for a real intracommunicator, raising nothing: false for an intercommunicator (or
// when MPI was not started through the shim). Any intracommunicator maps into the world: an
// irregular one through a table (out->world), computed once and cached on it.
bool mapped_parent(MPI_Comm real, RangeParent* out);
// Gives a real parent without one (p->self null) its mirror: a library communicator of the same
// processes in the same order, whose identity comes from a number its members agree on in one
// MPI_Iallreduce on `real` - so only inside a call collective over `real`. Cached on `real`
// until MPI frees it; later creations from `real` derive theirs from the mirror's, locally.
// *low (when given): whether some member's communicator table is nearly full, learnt in the
// same all-reduction (false when p already had its mirror: no message, nothing learnt).
int agree_mirror(MPI_Comm real, RangeParent* p, bool* low = nullptr);

}  // namespace rcshim
