// Making communicators (comm_creation.cpp) and their attributes (attributes.cpp): groups,
// ranges of a communicator, inherited error handlers, nonblocking creation.
#pragma once

#include <mpi.h>

#include <functional>
#include <vector>

#include "handles/handles.h"

namespace rcshim {

// The MPI group of a range (a new group the caller frees), derived from base's group.
int range_group(const rangecomm::Comm& range, MPI_Group* out, MPI_Comm base = MPI_COMM_WORLD);
// group as a group derived from channel's own (see comm_management.cpp for why).
int group_on(MPI_Comm channel, MPI_Group group, MPI_Group* out);
// The error handler a communicator made from comm starts with (MPI: comm's).
MPI_Errhandler inherited_errhandler(MPI_Comm comm);
// The ranks in comm of group's members, in group order; an error when not a subset.
int group_in_comm(MPI_Comm comm, MPI_Group group, const char* fn, std::vector<int>* ranks);
// Whether ranks are first, first + stride, ..., last with stride >= 1.
bool as_range(const std::vector<int>& ranks, int* first, int* last, int* stride);
// A range of comm made locally, one level below it; MPI_COMM_NULL for non-members.
int create_range(MPI_Comm comm, int first, int last, int stride, const char* fn, MPI_Comm* newcomm);

// Runs the delete callbacks of all of c's attributes (newest first) and removes them.
int delete_attributes(MPI_Comm comm, FakeComm& c);
inline int delete_all_attributes(MPI_Comm comm, FakeComm& c) {
  return c.attributes.empty() ? MPI_SUCCESS : delete_attributes(comm, c);
}
// Copies from's attributes to `to` through their copy callbacks (MPI_Comm_dup).
int copy_attributes(MPI_Comm oldcomm, FakeComm& from, FakeComm& to);
// The same from a real communicator: every keyval the program made through the shim whose
// attribute is set on `real` (MPI_Comm_dup of a real communicator made a range).
int copy_real_attributes(MPI_Comm real, FakeComm& to);
// The nesting level of the library's collective creations (dup, split, create): their
// identities then differ from those of ranges made locally one level down (MPIX_Comm_create_range),
// whose order relative to them the members do not share.
constexpr int kCollectiveLevel = 2;
// Completes a nonblocking creation: start(out, request) starts the library's creation into
// *out; *newcomm (a handle from new_pending_comm) gets it when *request completes. On an error
// (raised on comm) *newcomm is released and set to MPI_COMM_NULL.
int start_creation(MPI_Comm comm, const char* fn, MPI_Comm* newcomm, MPI_Request* request,
                   const std::function<int(rangecomm::Comm*, rangecomm::Request*)>& start);
// MPI_Comm_idup of a communicator with an identity: the copy at once (rangecomm::Icomm_dup),
// and a request that completes once every member has started the idup, as MPI's completes
// after its context-id agreement (the order of messages around creations that programs rely
// on: accelerate/accelerate.cpp, keep_order).
int idup_in_order(const rangecomm::Comm& of, rangecomm::Comm* out, rangecomm::Request* request);

}  // namespace rcshim
