// Communicators of any group of a parent's members (MPI_Comm_create_group), and nonblocking
// creation (paper 001's RBC::Create_Comm_from_MPI for ranges).
#pragma once

#include <mpi.h>

#include "rangecomm/comm.hpp"
#include "rangecomm/request.hpp"

namespace rangecomm {

// Starts making the communicator of the parent's ranks ranks[0..n-1], in that rank order (all
// distinct). Collective over those members only: the parent's other processes do not call it.
//
// Every member makes it alone, without a message: the new communicator's identity is derived
// from the parent's, the members and the tag, counting repeats of the same (members, tag) from
// this parent (docs/tag-layout.md, "Identities"). The request is complete on return; it exists
// so that the call has MPI's nonblocking shape. As in MPI, creations on the same parent and
// group that the program does not order (threads) must use different tags.
int Icomm_create_group(const Comm& parent, const int* ranks, int n, int tag, Comm* out,
                       Request* request);

// Icomm_create_group and Wait.
int Comm_create_group(const Comm& parent, const int* ranks, int n, int tag, Comm* out);

}  // namespace rangecomm
