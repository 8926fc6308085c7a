// For a layer that puts rangecomm behind another API (the PMPI interposer in shim/): control
// over error handlers, and the few facts about a range it needs to create more of them.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "rangecomm/comm.hpp"
#include "rangecomm/request.hpp"

namespace rangecomm {

// Whether the library calls MPI error handlers itself (the default: the root communicator's,
// or MPI_COMM_WORLD's). A layer with handlers of its own per range turns this off and calls
// them with the returned codes; codes, classes and messages (Error_string) stay the same.
void Set_error_handler_calls(bool enabled);

// For a layer that lets several threads call the library, one at a time under a lock of its
// own (the shim under MPI_THREAD_MULTIPLE). From then on the library never blocks inside MPI:
// every blocking call polls, and between polls calls pause(), which must let other threads in
// (release the lock, yield, take it again). Call once, before the threads start.
void Set_threaded(void (*pause)());

// A new error code of error_class whose Error_string is "rangecomm: " + the formatted message.
// Calls no error handler.
int Make_error(int error_class, const char* format, ...) __attribute__((format(printf, 2, 3)));

// The context of comm (docs/tag-layout.md): two live communicators of the same root that share
// two or more members never have equal contexts. 0 for the null communicator.
std::uint32_t Comm_context(const Comm& comm);

// Split_Comm, with the new range `levels` (>= 1) nesting levels below the parent instead of
// one. Its context then differs from that of a live range with the same members one level
// down, so a second live copy of a range (MPI_Comm_dup) can be made without a clash. All
// members must pass the same levels.
int Split_Comm_below(const Comm& parent, int first, int last, int stride, int levels, Comm* out);

// The communicator of the parent's ranks ranks[0..n-1] (in that rank order, all distinct), made
// locally `levels` (>= 1) nesting levels below the parent, as Split_Comm_below makes a range:
// for callers that agreed on `levels` themselves in a collective over the parent (MPI_Comm_split
// and MPI_Comm_create, where every process takes part). Non-members get the null communicator.
int Group_Comm_below(const Comm& parent, const int* ranks, int n, int levels, Comm* out);
// Bit L (1..31) set when Group_Comm_below(parent, ranks, n, L) would not clash at this process
// now. A non-member gets every bit.
std::uint32_t Free_levels(const Comm& parent, const int* ranks, int n);

// Icomm_create_group for the library's own creations (MPI_Comm_idup, MPI_Comm_create_group
// under RANGECOMM_MODE=accelerate): the members always agree on a context, strided ranges
// included, so a second live copy of the same members is made without a clash; the traffic
// runs on a creation context of its own, apart from Icomm_create_group's. `serial` plays the
// tag's part: creations in flight at once on overlapping groups need serials that differ
// modulo 2048 (callers count the creations of a parent, which all members make in one order).
int Icomm_create_agreed(const Comm& parent, const int* ranks, int n, int serial, Comm* out,
                        Request* request);

// A copy of `of` with the same members, agreed nonblocking (MPI_Comm_idup of a library
// communicator). Collective over `of`, called in the same order as its other collectives: the
// agreement runs as one collective of `of` (its context and its next collective number), so
// copies of different communicators in flight at once never meet, whatever their members.
int Icomm_dup(const Comm& of, Comm* out, Request* request);

// MPI lets a program free a user-defined MPI_Op while a nonblocking collective still uses it.
// Call this where the program frees one: if a pending collective of the library uses op, the
// library takes over and calls MPI_Op_free when the last of them completes (returns true; the
// caller must not free op itself). Returns false when nothing of the library uses op.
bool Defer_op_free(MPI_Op op);

}  // namespace rangecomm
