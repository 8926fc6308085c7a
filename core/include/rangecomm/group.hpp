// Communicators of any group of a parent's members (MPI_Comm_create_group), and nonblocking
// creation (paper 001's RBC::Create_Comm_from_MPI for ranges, a context agreement otherwise).
#pragma once

#include <mpi.h>

#include "rangecomm/comm.hpp"
#include "rangecomm/request.hpp"

namespace rangecomm {

// Starts making the communicator of the parent's ranks ranks[0..n-1], in that rank order (all
// distinct). Collective over those members only: the parent's other processes do not call it.
//
// A group that is a strided range of the parent (ascending, evenly spaced) is made at once and
// locally, as Split_Comm makes it; the request is then complete on return. Any other group
// agrees on a context no member already uses: two all-reduces over the group (O(log n)
// messages each) on a context reserved for creation, repeated only when a concurrent creation
// on an overlapping group took the same context. *out is set when the request completes and
// must stay valid until then.
//
// Creations in flight at the same time on groups that share two or more members must use tags
// that differ modulo 2048 (MPI_ERR_TAG otherwise); they progress independently, in any order.
int Icomm_create_group(const Comm& parent, const int* ranks, int n, int tag, Comm* out,
                       Request* request);

// Icomm_create_group and Wait.
int Comm_create_group(const Comm& parent, const int* ranks, int n, int tag, Comm* out);

}  // namespace rangecomm
